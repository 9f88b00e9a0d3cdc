//! Paths removed if the process is interrupted (SIGINT, SIGTERM, SIGHUP): staged files and
//! directories of [`crate::output`] and the demo's private directory. A [`Registration`]
//! lasts as long as the value that owns the path; the handler, installed with the first
//! registration (so commands that write nothing, such as `evalmult serve`, keep the default
//! signal behaviour), removes every registered path and exits with status 130.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, Once};

static PENDING: Mutex<Vec<(u64, PathBuf)>> = Mutex::new(Vec::new());
static NEXT_ID: Mutex<u64> = Mutex::new(0);
static INSTALL: Once = Once::new();

/// Exit status after an interrupting signal (128 + SIGINT, as shells report it).
pub const INTERRUPTED: i32 = 130;

fn pending() -> MutexGuard<'static, Vec<(u64, PathBuf)>> {
    // A panic while the lock was held cannot leave the list inconsistent.
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// While this lives, an interrupting signal removes its path.
#[derive(Debug)]
pub struct Registration(u64);

/// Registers `path` (a file or a directory tree) for removal on an interrupting signal.
pub fn register(path: &Path) -> Registration {
    INSTALL.call_once(|| {
        // Without a handler (another one is installed), a signal still ends the process;
        // only the clean-up is lost, and the paths are random names, owner-only.
        let _ = ctrlc::set_handler(|| {
            for (_, path) in pending().iter() {
                remove(path);
            }
            std::process::exit(INTERRUPTED);
        });
    });
    let id = {
        let mut next = NEXT_ID.lock().unwrap_or_else(|e| e.into_inner());
        *next += 1;
        *next
    };
    pending().push((id, path.to_path_buf()));
    Registration(id)
}

fn remove(path: &Path) {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = fs::remove_file(path);
        }
        Err(_) => {}
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        pending().retain(|(id, _)| *id != self.0);
    }
}

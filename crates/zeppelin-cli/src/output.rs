//! The one way the CLI writes files and key directories, so that a failure (full disk,
//! file-size limit, signal, bad input found late) never leaves a half-written or replaced
//! output behind:
//!
//! - [`StagedFile`]: a temporary file created exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`,
//!   mode 0600 in the `open` call for secrets) in the destination's directory, written and
//!   synced; [`StagedFile::commit`] renames it over the destination and syncs the directory.
//!   Dropped uncommitted, it is removed. [`commit_all`] commits several together, only after
//!   all of them are written.
//! - A destination that exists and is not a regular file (directory, symbolic link, FIFO,
//!   device, socket) is refused with [`OutputError::NotRegularFile`]: a rename would replace a
//!   device node or a planted link with a regular file.
//! - [`StagedDir`]: a key directory written as a sibling directory (created exclusively, mode
//!   0700) and swapped in whole by [`StagedDir::commit`]; an existing, non-empty directory is
//!   replaced only when the caller was given `--force`.

use std::ffi::OsString;
use std::fs::{self, File, FileType, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rand_core::{OsRng, RngCore};

use crate::cleanup::{self, Registration};
use crate::error::IoAction;

/// Who may read a file: the mode given to `open` (the umask applies on top).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Secrecy {
    /// Anyone (0666 before the umask).
    Public,
    /// The owner only (0600), from the moment the file exists.
    Secret,
}

impl Secrecy {
    fn mode(self) -> u32 {
        match self {
            Secrecy::Public => 0o666,
            Secrecy::Secret => 0o600,
        }
    }
}

/// Why an output was not written. Nothing visible changed in every case.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// The operating system refused an operation.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// What was being done.
        action: IoAction,
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The destination exists and is not a regular file.
    #[error("{} is {kind}, not a regular file: refusing to replace it", path.display())]
    NotRegularFile {
        /// The destination.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The destination of a key directory exists and is not a directory.
    #[error("{} is {kind}, not a directory: refusing to replace it", path.display())]
    NotDirectory {
        /// The destination.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
    /// The destination exists and `--force` was not given.
    #[error("{} exists (pass --force to replace it)", path.display())]
    Exists {
        /// The destination.
        path: PathBuf,
    },
    /// A destination path with no last component (`.`, `..`, `/`).
    #[error("{}: name a file or directory, not `.`, `..` or `/`", path.display())]
    NoFileName {
        /// The path given.
        path: PathBuf,
    },
}

fn io_err(action: IoAction, path: &Path) -> impl FnOnce(io::Error) -> OutputError + '_ {
    move |source| OutputError::Io {
        action,
        path: path.to_path_buf(),
        source,
    }
}

/// What a non-regular file is, for error messages.
fn describe(kind: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_char_device() {
            return "a character device";
        }
        if kind.is_block_device() {
            return "a block device";
        }
        if kind.is_socket() {
            return "a socket";
        }
    }
    if kind.is_symlink() {
        "a symbolic link"
    } else if kind.is_dir() {
        "a directory"
    } else if kind.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// What is at `path` without following a final symbolic link (`None`: nothing).
fn entry_type(path: &Path) -> Result<Option<FileType>, OutputError> {
    match fs::symlink_metadata(path) {
        Ok(m) => Ok(Some(m.file_type())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io_err(IoAction::Read, path)(e)),
    }
}

/// Refuses a destination that exists and is not a regular file; returns whether it exists.
pub fn check_file_destination(path: &Path) -> Result<bool, OutputError> {
    match entry_type(path)? {
        None => Ok(false),
        Some(t) if t.is_file() => Ok(true),
        Some(t) => Err(OutputError::NotRegularFile {
            path: path.to_path_buf(),
            kind: describe(t),
        }),
    }
}

/// The directory `path` is in (`.` for a bare name) and its last component.
fn split(path: &Path) -> Result<(PathBuf, OsString), OutputError> {
    let name = path
        .file_name()
        .ok_or_else(|| OutputError::NoFileName {
            path: path.to_path_buf(),
        })?
        .to_os_string();
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name))
}

/// `dir/.{name}.{tag}-{16 random hex digits}`: a name no one can predict.
fn sibling(dir: &Path, name: &OsString, tag: &str) -> PathBuf {
    let mut s = OsString::from(".");
    s.push(name);
    s.push(format!(".{tag}-{:016x}", OsRng.next_u64()));
    dir.join(s)
}

/// Tries a few random names: `create` fails with `AlreadyExists` only on a collision or a
/// planted entry, never by following it.
fn create_unique<T>(
    dir: &Path,
    name: &OsString,
    tag: &str,
    mut create: impl FnMut(&Path) -> io::Result<T>,
) -> Result<(PathBuf, T), OutputError> {
    let mut last = None;
    for _ in 0..8 {
        let path = sibling(dir, name, tag);
        match create(&path) {
            Ok(t) => return Ok((path, t)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some((path, e)),
            Err(e) => return Err(io_err(IoAction::Create, &path)(e)),
        }
    }
    let (path, e) =
        last.unwrap_or_else(|| (dir.to_path_buf(), io::ErrorKind::AlreadyExists.into()));
    Err(io_err(IoAction::Create, &path)(e))
}

/// Opens a new file exclusively, never through a symbolic link, with `secrecy`'s mode.
fn open_new(path: &Path, secrecy: Secrecy) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(secrecy.mode())
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC);
    }
    #[cfg(not(unix))]
    let _ = secrecy;
    options.open(path)
}

/// Makes a rename or a new entry in `dir` durable.
fn sync_dir(dir: &Path) -> Result<(), OutputError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(io_err(IoAction::Write, dir))
}

/// A file written beside its destination, not yet visible there.
#[derive(Debug)]
pub struct StagedFile {
    _cleanup: Registration,
    tmp: PathBuf,
    dest: PathBuf,
    dir: PathBuf,
    committed: bool,
}

impl StagedFile {
    /// Writes `bytes` to a new temporary file in `dest`'s directory and syncs it. Refuses a
    /// `dest` that exists and is not a regular file.
    pub fn write(dest: &Path, bytes: &[u8], secrecy: Secrecy) -> Result<Self, OutputError> {
        check_file_destination(dest)?;
        let (dir, name) = split(dest)?;
        let (tmp, mut file) = create_unique(&dir, &name, "tmp", |p| open_new(p, secrecy))?;
        // From here on, dropping `staged` removes the temporary file.
        let staged = StagedFile {
            _cleanup: cleanup::register(&tmp),
            tmp,
            dest: dest.to_path_buf(),
            dir,
            committed: false,
        };
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(io_err(IoAction::Write, dest))?;
        Ok(staged)
    }

    /// The destination.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Renames the file over its destination (checked again just before) and syncs the
    /// directory.
    pub fn commit(mut self) -> Result<(), OutputError> {
        self.rename()?;
        sync_dir(&self.dir)
    }

    fn rename(&mut self) -> Result<(), OutputError> {
        check_file_destination(&self.dest)?;
        fs::rename(&self.tmp, &self.dest).map_err(io_err(IoAction::Rename, &self.dest))?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for StagedFile {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: the temporary name is random and the error is already reported.
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Writes one file atomically (see [`StagedFile`]).
pub fn write_file(dest: &Path, bytes: &[u8], secrecy: Secrecy) -> Result<(), OutputError> {
    StagedFile::write(dest, bytes, secrecy)?.commit()
}

/// Commits files that are all written: every destination is checked first, then each is
/// renamed in turn and the directories synced. Only a failing `rename(2)` part-way (which
/// the checks make unlikely) leaves the earlier files committed; the rest are removed.
pub fn commit_all(files: Vec<StagedFile>) -> Result<(), OutputError> {
    for f in &files {
        check_file_destination(&f.dest)?;
    }
    let mut dirs: Vec<PathBuf> = Vec::new();
    for mut f in files {
        f.rename()?;
        if !dirs.contains(&f.dir) {
            dirs.push(f.dir.clone());
        }
    }
    dirs.iter().try_for_each(|d| sync_dir(d))
}

/// A key directory being written: a new sibling of the destination, swapped in whole by
/// [`StagedDir::commit`], removed if dropped uncommitted.
#[derive(Debug)]
pub struct StagedDir {
    _cleanup: Registration,
    staged: PathBuf,
    dest: PathBuf,
    parent: PathBuf,
    replaces: bool,
    committed: bool,
}

impl StagedDir {
    /// Checks `dest` (nothing there, an empty directory, or with `force` any directory) and
    /// creates the staging directory beside it, mode 0700.
    pub fn create(dest: &Path, force: bool) -> Result<Self, OutputError> {
        let (parent, name) = split(dest)?;
        let replaces = match entry_type(dest)? {
            None => false,
            Some(t) if t.is_dir() => {
                let empty = fs::read_dir(dest)
                    .map_err(io_err(IoAction::Read, dest))?
                    .next()
                    .is_none();
                if !empty && !force {
                    return Err(OutputError::Exists {
                        path: dest.to_path_buf(),
                    });
                }
                true
            }
            Some(t) => {
                return Err(OutputError::NotDirectory {
                    path: dest.to_path_buf(),
                    kind: describe(t),
                })
            }
        };
        let (staged, ()) = create_unique(&parent, &name, "staged", |p| {
            let mut builder = fs::DirBuilder::new();
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                builder.mode(0o700);
            }
            builder.create(p)
        })?;
        Ok(Self {
            _cleanup: cleanup::register(&staged),
            staged,
            dest: dest.to_path_buf(),
            parent,
            replaces,
            committed: false,
        })
    }

    /// The staging directory's path of file `name`.
    pub fn path(&self, name: impl AsRef<Path>) -> PathBuf {
        self.staged.join(name)
    }

    /// Writes file `name` in the staging directory.
    pub fn write(&self, name: &str, bytes: &[u8], secrecy: Secrecy) -> Result<(), OutputError> {
        write_file(&self.path(name), bytes, secrecy)
    }

    /// Carries file `name` of the destination over unchanged (a hard link: same contents,
    /// same mode). Refuses anything but a regular file.
    pub fn keep(&self, name: &std::ffi::OsStr) -> Result<(), OutputError> {
        let from = self.dest.join(name);
        check_file_destination(&from)?;
        fs::hard_link(&from, self.path(name)).map_err(io_err(IoAction::Create, &from))
    }

    /// Swaps the staging directory in for the destination, then removes the old one.
    ///
    /// On Linux the swap is one `renameat2(RENAME_EXCHANGE)` (or `RENAME_NOREPLACE` when
    /// nothing was there), so a crash at any point leaves either the old or the new directory
    /// at the destination, complete, plus at most a `.NAME.staged-*` sibling to delete. Where
    /// that call is unavailable the fallback is three steps (old aside to `.NAME.old-*`, new in,
    /// old removed): a crash between the first two leaves the destination missing, with the
    /// old keys in `.NAME.old-*` and the new ones in `.NAME.staged-*`, both complete.
    pub fn commit(mut self) -> Result<(), OutputError> {
        sync_dir(&self.staged)?;
        let rename = io_err(IoAction::Rename, &self.dest);
        match sys::swap(&self.staged, &self.dest, self.replaces) {
            Ok(true) => {
                self.committed = true;
                sync_dir(&self.parent)?;
                // After an exchange the staging path holds the old directory.
                return if self.replaces {
                    remove_dir(&self.staged.clone())
                } else {
                    Ok(())
                };
            }
            Ok(false) => {}
            Err(e) => return Err(rename(e)),
        }
        // Fallback without an atomic exchange.
        if self.replaces {
            let (_, name) = split(&self.dest)?;
            let (old, ()) =
                create_unique(&self.parent, &name, "old", |p| {
                    match fs::symlink_metadata(p) {
                        Ok(_) => Err(io::ErrorKind::AlreadyExists.into()),
                        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                        Err(e) => Err(e),
                    }
                })?;
            fs::rename(&self.dest, &old).map_err(io_err(IoAction::Rename, &self.dest))?;
            if let Err(e) = fs::rename(&self.staged, &self.dest) {
                // Put the old directory back; the new one is removed on drop.
                let _ = fs::rename(&old, &self.dest);
                return Err(io_err(IoAction::Rename, &self.dest)(e));
            }
            self.committed = true;
            sync_dir(&self.parent)?;
            remove_dir(&old)
        } else {
            fs::rename(&self.staged, &self.dest).map_err(rename)?;
            self.committed = true;
            sync_dir(&self.parent)
        }
    }
}

fn remove_dir(path: &Path) -> Result<(), OutputError> {
    fs::remove_dir_all(path).map_err(io_err(IoAction::Remove, path))
}

impl Drop for StagedDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_dir_all(&self.staged);
        }
    }
}

/// The one system call `std` does not offer.
mod sys {
    use std::io;
    use std::path::Path;

    /// Moves `from` to `to` atomically: exchanging the two when `to` exists (`replace`),
    /// refusing to replace anything otherwise. `Ok(false)`: not supported here, nothing done.
    #[cfg(target_os = "linux")]
    pub fn swap(from: &Path, to: &Path, replace: bool) -> io::Result<bool> {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| {
            CString::new(p.as_os_str().as_bytes())
                .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
        };
        let (from, to) = (c(from)?, c(to)?);
        let flags = if replace {
            libc::RENAME_EXCHANGE
        } else {
            libc::RENAME_NOREPLACE
        };
        // SAFETY: both arguments are NUL-terminated strings that outlive the call, and
        // renameat2 touches no memory of ours beyond reading them.
        let r = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                from.as_ptr(),
                libc::AT_FDCWD,
                to.as_ptr(),
                flags,
            )
        };
        if r == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINVAL) | Some(libc::ENOSYS) => Ok(false),
            _ => Err(e),
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn swap(_from: &Path, _to: &Path, _replace: bool) -> io::Result<bool> {
        Ok(false)
    }
}

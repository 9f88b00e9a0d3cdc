//! The one way the CLI reads files: with a size cap derived from what the preset allows (the
//! file's length is checked first, then at most `cap + 1` bytes are read), the header of a
//! SEAL object checked before the rest is read, and every buffer zeroized when it drops (the
//! same reader serves secret files).

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

/// SEAL's serialization magic (`0xA15E`, little-endian), which also opens the device's wire
/// forms.
const SEAL_MAGIC: [u8; 2] = 0xA15E_u16.to_le_bytes();
/// SEAL's header: magic, header size, version, compression, reserved, total size (u64).
const SEAL_HEADER: usize = 16;

/// Why an input file was refused.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
    /// The file is larger than anything the preset allows for it.
    #[error("{}: {found} bytes, more than the {limit} a {what} can take here", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// What it should hold.
        what: &'static str,
        /// Its size (or the size read so far, for a file whose length is not known).
        found: u64,
        /// The cap.
        limit: usize,
    },
    /// The file does not start like a SEAL object.
    #[error("{}: not a SEAL object or device wire form (it does not start with SEAL's magic A15E)", path.display())]
    NotSeal {
        /// The file.
        path: PathBuf,
    },
    /// A SEAL header declaring more bytes than the cap.
    #[error("{}: its SEAL header declares {declared} bytes, more than the {limit} a {what} can take here", path.display())]
    DeclaredTooLarge {
        /// The file.
        path: PathBuf,
        /// What it should hold.
        what: &'static str,
        /// The header's total size.
        declared: u64,
        /// The cap.
        limit: usize,
    },
    /// A text file that is not UTF-8.
    #[error("{}: not UTF-8 text", path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> InputError + '_ {
    move |source| InputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads `path` whole if it holds at most `cap` bytes (`what` names the content in errors).
pub fn read_capped(
    path: &Path,
    what: &'static str,
    cap: usize,
) -> Result<Zeroizing<Vec<u8>>, InputError> {
    let mut file = File::open(path).map_err(io_err(path))?;
    let declared = file.metadata().map_err(io_err(path))?.len();
    let too_large = |found| InputError::TooLarge {
        path: path.to_path_buf(),
        what,
        found,
        limit: cap,
    };
    // A regular file's length is known before reading; a FIFO or device reports 0 and is
    // bounded by the read below.
    if declared > cap as u64 {
        return Err(too_large(declared));
    }
    read_rest(&mut file, path, Vec::new(), cap, declared).and_then(|buf| {
        if buf.len() > cap {
            Err(too_large(buf.len() as u64))
        } else {
            Ok(buf)
        }
    })
}

/// Reads a SEAL object (or device wire form): the 16-byte header is read and checked (magic,
/// declared size within `cap`) before anything else.
pub fn read_seal(
    path: &Path,
    what: &'static str,
    cap: usize,
) -> Result<Zeroizing<Vec<u8>>, InputError> {
    let mut file = File::open(path).map_err(io_err(path))?;
    let len = file.metadata().map_err(io_err(path))?.len();
    let mut header = Zeroizing::new(Vec::with_capacity(SEAL_HEADER));
    (&mut file)
        .take(SEAL_HEADER as u64)
        .read_to_end(&mut header)
        .map_err(io_err(path))?;
    if header.len() < 2 || header[..2] != SEAL_MAGIC {
        return Err(InputError::NotSeal {
            path: path.to_path_buf(),
        });
    }
    if header.len() == SEAL_HEADER {
        let mut size = [0u8; 8];
        size.copy_from_slice(&header[8..16]);
        let declared = u64::from_le_bytes(size);
        if declared > cap as u64 {
            return Err(InputError::DeclaredTooLarge {
                path: path.to_path_buf(),
                what,
                declared,
                limit: cap,
            });
        }
    }
    let too_large = |found| InputError::TooLarge {
        path: path.to_path_buf(),
        what,
        found,
        limit: cap,
    };
    if len > cap as u64 {
        return Err(too_large(len));
    }
    let buf = read_rest(&mut file, path, header.to_vec(), cap, len)?;
    if buf.len() > cap {
        return Err(too_large(buf.len() as u64));
    }
    Ok(buf)
}

/// Appends at most `cap + 1 - start.len()` more bytes to `start`, in a buffer sized up front
/// (no reallocation leaves a copy of a secret behind).
fn read_rest(
    file: &mut File,
    path: &Path,
    start: Vec<u8>,
    cap: usize,
    expected: u64,
) -> Result<Zeroizing<Vec<u8>>, InputError> {
    let limit = cap.saturating_add(1);
    let size = usize::try_from(expected).unwrap_or(limit).min(limit);
    let mut buf = Zeroizing::new(Vec::with_capacity(size.max(start.len()) + 1));
    buf.extend_from_slice(&start);
    let mut start = start;
    zeroize::Zeroize::zeroize(&mut start);
    let remaining = (limit - buf.len().min(limit)) as u64;
    file.take(remaining)
        .read_to_end(&mut buf)
        .map_err(io_err(path))?;
    Ok(buf)
}

/// Reads a UTF-8 text file of at most `cap` bytes.
pub fn read_text(
    path: &Path,
    what: &'static str,
    cap: usize,
) -> Result<Zeroizing<String>, InputError> {
    let bytes = read_capped(path, what, cap)?;
    match std::str::from_utf8(&bytes) {
        Ok(text) => Ok(Zeroizing::new(text.to_owned())),
        Err(_) => Err(InputError::NotText {
            path: path.to_path_buf(),
        }),
    }
}

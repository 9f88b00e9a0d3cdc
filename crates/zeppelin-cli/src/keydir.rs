//! The key directory `D` (docs/cli.md): its file layout, and reading and writing the objects
//! in it. Secret files are written to a temporary file created with mode 0600, synced and
//! renamed into place, so they are never readable by others, not even briefly.

use std::fs;
use std::path::{Path, PathBuf};

use zeppelin::{PublicKey, SecretKey};
use zeppelin_seal::device::{self, DeviceContext, SealPreset};
use zeppelin_seal::{
    ComprMode, EncryptionParameters, PublicKey as SealPublicKey, SealContext,
    SecretKey as SealSecretKey,
};
use zeroize::Zeroize;

use crate::error::{CliError, CliResult, IoAction};
use crate::preset::PresetId;

/// SEAL's `EncryptionParameters`.
pub const PARAMS: &str = "params.seal";
/// SEAL's `SecretKey` (mode 0600).
pub const SECRET: &str = "secret.seal";
/// SEAL's `PublicKey`.
pub const PUBLIC: &str = "public.seal";
/// The device's secret key: `n` ternary coefficients as `i8` (mode 0600).
pub const DEVICE_SK: &str = "device.sk";
/// The device's public key `p0 ‖ p1`.
pub const DEVICE_PK: &str = "device.pk";
/// The preset's name.
pub const PRESET: &str = "preset";
/// SEAL's `RelinKeys`.
pub const RELIN: &str = "relin.seal";
/// SEAL's `GaloisKeys`.
pub const GALOIS: &str = "galois.seal";

/// Reads a file.
pub fn read(path: &Path) -> CliResult<Vec<u8>> {
    fs::read(path).map_err(|source| CliError::Io {
        action: IoAction::Read,
        path: path.to_path_buf(),
        source,
    })
}

/// Writes a file.
pub fn write(path: &Path, bytes: &[u8]) -> CliResult<()> {
    fs::write(path, bytes).map_err(|source| CliError::Io {
        action: IoAction::Write,
        path: path.to_path_buf(),
        source,
    })
}

/// Writes a secret file readable by its owner only: a temporary file beside it, created with
/// mode 0600, written, synced, then renamed over `path`.
pub fn write_secret(path: &Path, bytes: &[u8]) -> CliResult<()> {
    use std::io::Write;
    let io = |action, path: &Path| {
        let path = path.to_path_buf();
        move |source| CliError::Io {
            action,
            path,
            source,
        }
    };
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    let tmp = path.with_file_name(name);
    // A stale temporary file would keep its old mode: start afresh.
    match fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(io(IoAction::Write, &tmp)(e))
        }
        _ => {}
    }
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let written = options
        .open(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .map_err(io(IoAction::Write, &tmp))
        .and_then(|()| fs::rename(&tmp, path).map_err(io(IoAction::Rename, path)));
    if written.is_err() {
        // Nothing half-written stays behind; the first error is the one reported.
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// A key directory.
pub struct KeyDir<'a> {
    dir: &'a Path,
}

impl<'a> KeyDir<'a> {
    /// The key directory at `dir`.
    pub fn new(dir: &'a Path) -> Self {
        Self { dir }
    }

    /// The path of file `name` in it.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Creates the directory if it is missing.
    pub fn create(&self) -> CliResult<()> {
        fs::create_dir_all(self.dir).map_err(|source| CliError::Io {
            action: IoAction::Create,
            path: self.dir.to_path_buf(),
            source,
        })
    }

    /// The preset named in `D/preset`.
    pub fn preset(&self) -> CliResult<PresetId> {
        let path = self.path(PRESET);
        let text = fs::read_to_string(&path).map_err(|source| CliError::NoKeyDirectory {
            path: path.clone(),
            dir: self.dir.to_path_buf(),
            source,
        })?;
        PresetId::from_name(text.trim()).ok_or_else(|| CliError::UnknownPreset {
            path,
            found: text.trim().to_owned(),
        })
    }

    /// Writes `D/preset`.
    pub fn write_preset(&self, preset: &str) -> CliResult<()> {
        write(&self.path(PRESET), format!("{preset}\n").as_bytes())
    }

    /// SEAL's context from `D/params.seal`, whatever the parameters (trusted-side key
    /// generation).
    pub fn seal_context(&self) -> CliResult<SealContext> {
        let path = self.path(PARAMS);
        let parms =
            EncryptionParameters::load(&read(&path)?).map_err(CliError::seal_file(&path))?;
        SealContext::new(parms).map_err(CliError::seal_file(&path))
    }

    /// The context of preset `P` from `D/params.seal`, which must hold the preset's SEAL
    /// parameters.
    pub fn device_context<P: SealPreset>(&self) -> CliResult<DeviceContext<P>> {
        let path = self.path(PARAMS);
        let parms =
            EncryptionParameters::load(&read(&path)?).map_err(CliError::seal_file(&path))?;
        DeviceContext::from_parameters(parms).map_err(CliError::seal_file(&path))
    }

    /// Writes `D/params.seal`.
    pub fn write_parameters(&self, parms: &EncryptionParameters) -> CliResult<()> {
        let path = self.path(PARAMS);
        let bytes = parms
            .save(ComprMode::None)
            .map_err(CliError::seal_file(&path))?;
        write(&path, &bytes)
    }

    /// The device's secret key from `D/device.sk`.
    pub fn device_secret_key<P: SealPreset>(&self) -> CliResult<Box<SecretKey<P>>> {
        let path = self.path(DEVICE_SK);
        let mut bytes = read(&path)?;
        let mut sk = Box::new(SecretKey::<P>::zeroed());
        let r = sk.read_bytes(&bytes);
        bytes.zeroize();
        r.map_err(|source| CliError::DeviceFile { path, source })?;
        Ok(sk)
    }

    /// Writes `D/device.sk` (mode 0600).
    pub fn write_device_secret_key<P: SealPreset>(&self, sk: &SecretKey<P>) -> CliResult<()> {
        let path = self.path(DEVICE_SK);
        let mut bytes = vec![0u8; SecretKey::<P>::BYTES];
        let r = sk
            .write_bytes(&mut bytes)
            .map_err(|source| CliError::DeviceFile {
                path: path.clone(),
                source,
            })
            .and_then(|_| write_secret(&path, &bytes));
        bytes.zeroize();
        r
    }

    /// The device's public key from `D/device.pk`.
    pub fn device_public_key<P: SealPreset>(&self) -> CliResult<Box<PublicKey<P>>> {
        let path = self.path(DEVICE_PK);
        let mut pk = Box::new(PublicKey::<P>::zeroed());
        pk.read_bytes(&read(&path)?)
            .map_err(|source| CliError::DeviceFile { path, source })?;
        Ok(pk)
    }

    /// Writes `D/device.pk`.
    pub fn write_device_public_key<P: SealPreset>(&self, pk: &PublicKey<P>) -> CliResult<()> {
        let path = self.path(DEVICE_PK);
        let mut bytes = vec![0u8; PublicKey::<P>::BYTES];
        pk.write_bytes(&mut bytes)
            .map_err(|source| CliError::DeviceFile {
                path: path.clone(),
                source,
            })?;
        write(&path, &bytes)
    }

    /// SEAL's secret key from `D/secret.seal`.
    pub fn seal_secret_key(&self, ctx: &SealContext) -> CliResult<SealSecretKey> {
        let path = self.path(SECRET);
        let mut bytes = read(&path)?;
        let sk = SealSecretKey::load(ctx, &bytes);
        bytes.zeroize();
        sk.map_err(CliError::seal_file(&path))
    }

    /// Writes `D/secret.seal` (mode 0600).
    pub fn write_seal_secret_key(&self, sk: &SealSecretKey) -> CliResult<()> {
        let path = self.path(SECRET);
        let mut bytes = sk
            .save(ComprMode::None)
            .map_err(CliError::seal_file(&path))?;
        let r = write_secret(&path, &bytes);
        bytes.zeroize();
        r
    }

    /// SEAL's public key from `D/public.seal`.
    pub fn seal_public_key(&self, ctx: &SealContext) -> CliResult<SealPublicKey> {
        let path = self.path(PUBLIC);
        SealPublicKey::load(ctx, &read(&path)?).map_err(CliError::seal_file(&path))
    }

    /// Writes `D/public.seal`.
    pub fn write_seal_public_key(&self, pk: &SealPublicKey) -> CliResult<()> {
        let path = self.path(PUBLIC);
        let bytes = pk
            .save(ComprMode::None)
            .map_err(CliError::seal_file(&path))?;
        write(&path, &bytes)
    }

    /// The public key the device encrypts with: SEAL's `D/public.seal` when SEAL's key level
    /// holds every device prime (so a SEAL-made public key can be dropped in), else
    /// `D/device.pk`.
    pub fn encryption_public_key<P: SealPreset>(
        &self,
        ctx: &DeviceContext<P>,
    ) -> CliResult<Box<PublicKey<P>>> {
        if !ctx.seal_keys_cover_device() {
            return self.device_public_key();
        }
        let path = self.path(PUBLIC);
        let seal_pk = self.seal_public_key(ctx.seal())?;
        let mut pk = Box::new(PublicKey::<P>::zeroed());
        device::public_key_from_seal(ctx, &seal_pk, &mut pk).map_err(CliError::seal_file(&path))?;
        Ok(pk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_files_are_owner_only_and_replace_what_was_there() {
        let dir = std::env::temp_dir().join(format!("zeppelin-keydir-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.key");
        write(&path, b"old, world-readable").unwrap();
        write_secret(&path, b"secret").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"secret");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(!dir.join("s.key.tmp").exists());
        // A directory that does not exist: an error naming the file, nothing left behind.
        let missing = dir.join("missing").join("s.key");
        let err = write_secret(&missing, b"x").unwrap_err().to_string();
        assert!(err.contains("s.key.tmp"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }
}

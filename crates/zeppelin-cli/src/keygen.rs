//! `zeppelin keygen --dir D [--preset NAME] [--force]`: the device's keys, and the SEAL
//! parameters, secret key and public key for them, in the key directory.
//!
//! The directory is written whole as a staged sibling and swapped in
//! ([`crate::output::StagedDir`]): a failure at any point leaves what was there (nothing,
//! or the old keys) untouched, and an existing non-empty directory is replaced only with
//! `--force` (its other files, such as keys made from the old secret, go with it).

use std::path::{Path, PathBuf};

use clap::Args;
use rand_core::OsRng;
use zeppelin::{Bfv, PublicKey, SecretKey, Workspace};
use zeppelin_seal::device::{self, DeviceContext, SealPreset};
use zeppelin_seal::keygen::KeyGenerator;
use zeppelin_seal::{ComprMode, EncryptionParameters};
use zeroize::Zeroizing;

use crate::error::{CliError, CliResult, Operation};
use crate::keydir::{DEVICE_PK, DEVICE_SK, PARAMS, PRESET, PUBLIC, SECRET};
use crate::output::{Secrecy, StagedDir};
use crate::preset::{PresetFn, PresetId, DEFAULT_PRESET};

/// Arguments of `zeppelin keygen`.
#[derive(Args)]
pub struct KeygenArgs {
    /// Key directory (must not exist, or be empty, unless --force is given).
    #[arg(long)]
    pub dir: PathBuf,
    /// Parameter preset of the device.
    #[arg(long, value_enum, default_value = DEFAULT_PRESET)]
    pub preset: PresetId,
    /// Replace an existing key directory (everything in it).
    #[arg(long)]
    pub force: bool,
}

/// Runs `zeppelin keygen`.
pub fn run(a: &KeygenArgs) -> CliResult<()> {
    struct Keygen<'a>(&'a Path, bool);
    impl PresetFn for Keygen<'_> {
        type Output = CliResult<()>;
        fn call<P: SealPreset>(self) -> CliResult<()> {
            keygen::<P>(self.0, self.1)
        }
    }
    a.preset.run(Keygen(&a.dir, a.force))
}

/// Writes a fresh key directory for preset `P` at `dir`, replacing a non-empty one only when
/// `force` is set.
pub fn keygen<P: SealPreset>(dir: &Path, force: bool) -> CliResult<()> {
    // Checks the destination before any key is made.
    let staged = StagedDir::create(dir, force)?;
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    let mut pk = Box::new(PublicKey::<P>::zeroed());
    let mut ws = Box::new(Workspace::new());
    Bfv::<P>::generate_secret_key(&mut OsRng, &mut sk)
        .map_err(CliError::device(Operation::SecretKeyGeneration))?;
    Bfv::<P>::generate_public_key(&sk, &mut OsRng, &mut pk, &mut ws)
        .map_err(CliError::device(Operation::PublicKeyGeneration))?;

    let mut sk_bytes = Zeroizing::new(vec![0u8; SecretKey::<P>::BYTES]);
    sk.write_bytes(&mut sk_bytes)
        .map_err(|source| CliError::DeviceFile {
            path: staged.path(DEVICE_SK),
            source,
        })?;
    let mut pk_bytes = vec![0u8; PublicKey::<P>::BYTES];
    pk.write_bytes(&mut pk_bytes)
        .map_err(|source| CliError::DeviceFile {
            path: staged.path(DEVICE_PK),
            source,
        })?;

    let parms = EncryptionParameters::for_preset::<P>();
    let parms_bytes = parms
        .save(ComprMode::None)
        .map_err(CliError::seal(Operation::SealParameters))?;
    let ctx = DeviceContext::<P>::from_parameters(parms)
        .map_err(CliError::seal(Operation::SealParameters))?;
    let seal_sk =
        device::secret_key(&ctx, &sk).map_err(CliError::seal(Operation::SealSecretKey))?;
    // Owned, not copied: the buffer is zeroized when it drops.
    let seal_sk_bytes = Zeroizing::new(
        seal_sk
            .save(ComprMode::None)
            .map_err(CliError::seal(Operation::SealSecretKey))?,
    );
    let seal_pk_bytes = KeyGenerator::new(ctx.seal(), &seal_sk)
        .and_then(|generator| generator.public_key(&mut OsRng))
        .and_then(|seal_pk| seal_pk.save(ComprMode::None))
        .map_err(CliError::seal(Operation::SealPublicKey))?;

    staged.write(DEVICE_SK, &sk_bytes, Secrecy::Secret)?;
    staged.write(DEVICE_PK, &pk_bytes, Secrecy::Public)?;
    staged.write(PARAMS, &parms_bytes, Secrecy::Public)?;
    staged.write(SECRET, &seal_sk_bytes, Secrecy::Secret)?;
    staged.write(PUBLIC, &seal_pk_bytes, Secrecy::Public)?;
    staged.write(PRESET, format!("{}\n", P::NAME).as_bytes(), Secrecy::Public)?;
    staged.commit()?;
    Ok(())
}

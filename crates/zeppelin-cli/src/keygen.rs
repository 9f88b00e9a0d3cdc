//! `zeppelin keygen --dir D [--preset NAME]`: the device's keys, and the SEAL parameters,
//! secret key and public key for them, in the key directory.

use std::path::{Path, PathBuf};

use clap::Args;
use rand_core::OsRng;
use zeppelin::{Bfv, PublicKey, SecretKey, Workspace};
use zeppelin_seal::device::{self, DeviceContext, SealPreset};
use zeppelin_seal::keygen::KeyGenerator;
use zeppelin_seal::EncryptionParameters;

use crate::error::{CliError, CliResult, Operation};
use crate::keydir::KeyDir;
use crate::preset::{PresetFn, PresetId, DEFAULT_PRESET};

/// Arguments of `zeppelin keygen`.
#[derive(Args)]
pub struct KeygenArgs {
    /// Key directory (created if missing).
    #[arg(long)]
    pub dir: PathBuf,
    /// Parameter preset of the device.
    #[arg(long, value_enum, default_value = DEFAULT_PRESET)]
    pub preset: PresetId,
}

/// Runs `zeppelin keygen`.
pub fn run(a: &KeygenArgs) -> CliResult<()> {
    struct Keygen<'a>(&'a Path);
    impl PresetFn for Keygen<'_> {
        type Output = CliResult<()>;
        fn call<P: SealPreset>(self) -> CliResult<()> {
            keygen::<P>(self.0)
        }
    }
    a.preset.run(Keygen(&a.dir))
}

/// Writes a fresh key directory for preset `P` at `dir` (overwriting one that is there).
pub fn keygen<P: SealPreset>(dir: &Path) -> CliResult<()> {
    let keys = KeyDir::new(dir);
    keys.create()?;
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    let mut pk = Box::new(PublicKey::<P>::zeroed());
    let mut ws = Box::new(Workspace::new());
    Bfv::<P>::generate_secret_key(&mut OsRng, &mut sk)
        .map_err(CliError::device(Operation::SecretKeyGeneration))?;
    Bfv::<P>::generate_public_key(&sk, &mut OsRng, &mut pk, &mut ws)
        .map_err(CliError::device(Operation::PublicKeyGeneration))?;
    keys.write_device_secret_key(&sk)?;
    keys.write_device_public_key(&pk)?;

    let parms = EncryptionParameters::for_preset::<P>();
    keys.write_parameters(&parms)?;
    let ctx = DeviceContext::<P>::from_parameters(parms)
        .map_err(CliError::seal(Operation::SealParameters))?;
    let seal_sk =
        device::secret_key(&ctx, &sk).map_err(CliError::seal(Operation::SealSecretKey))?;
    keys.write_seal_secret_key(&seal_sk)?;
    let seal_pk = KeyGenerator::new(ctx.seal(), &seal_sk)
        .and_then(|generator| generator.public_key(&mut OsRng))
        .map_err(CliError::seal(Operation::SealPublicKey))?;
    keys.write_seal_public_key(&seal_pk)?;
    keys.write_preset(P::NAME)
}

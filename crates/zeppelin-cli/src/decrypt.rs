//! `zeppelin decrypt --dir D --in FILE`: a device ciphertext or any SEAL `Ciphertext` under
//! `D/params.seal`, decrypted by the device's BEHZ decryption, printed slot by slot.

use std::path::{Path, PathBuf};

use clap::Args;
use zeppelin::{encoder, Plaintext, Workspace};
use zeppelin_seal::device::{self, SealPreset};

use crate::error::{CliError, CliResult, Operation};
use crate::input::read_seal;
use crate::keydir::{ciphertext_cap, KeyDir};
use crate::preset::{zero_slots, PresetFn, Slots};
use crate::slots::print_slots;

/// Arguments of `zeppelin decrypt`.
#[derive(Args)]
pub struct DecryptArgs {
    /// Key directory.
    #[arg(long)]
    pub dir: PathBuf,
    /// A device ciphertext, or any SEAL Ciphertext under DIR/params.seal (any level, any
    /// compression, SEAL's seeded forms included).
    #[arg(long = "in")]
    pub input: PathBuf,
}

/// Runs `zeppelin decrypt` with the key directory's preset.
pub fn run(a: &DecryptArgs) -> CliResult<()> {
    struct Decrypt<'a>(&'a DecryptArgs);
    impl PresetFn for Decrypt<'_> {
        type Output = CliResult<Slots>;
        fn call<P: SealPreset>(self) -> CliResult<Slots> {
            let bytes = read_seal(&self.0.input, "ciphertext", ciphertext_cap::<P>())?;
            decrypt_bytes::<P>(&KeyDir::new(&self.0.dir), &bytes, &self.0.input)
        }
    }
    let slots = KeyDir::new(&a.dir).preset()?.run(Decrypt(a))?;
    print_slots(&slots)
}

/// Decrypts and decodes the ciphertext `bytes` (read from `source`, named in errors) with the
/// key directory's device key.
pub fn decrypt_bytes<P: SealPreset>(
    keys: &KeyDir<'_>,
    bytes: &[u8],
    source: &Path,
) -> CliResult<Slots> {
    let ctx = keys.device_context::<P>()?;
    let sk = keys.device_secret_key::<P>(&ctx)?;
    let ct = device::read_any(&ctx, bytes).map_err(CliError::seal_file(source))?;
    // The plaintext is zeroized when it drops.
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    let mut ws = Box::new(Workspace::new());
    ct.decrypt(&ctx, &sk, &mut plain, &mut ws)
        .map_err(CliError::seal_file(source))?;
    let mut slots = zero_slots::<P>();
    encoder::decode(&plain, &mut slots).map_err(CliError::device(Operation::Decoding))?;
    Ok(slots)
}

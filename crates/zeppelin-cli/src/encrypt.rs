//! `zeppelin encrypt --dir D --mode MODE --in values.txt --out ct.bin [--level L]`: the
//! device's three encryption paths into its wire forms, and SEAL's own seeded forms (trusted
//! side, for tests).

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use rand_core::{OsRng, RngCore};
use zeppelin::{
    encoder, Bfv, ChaCha20, Ciphertext, EncryptionSeeds, Plaintext, SecretSeed, SeededCiphertext,
    Workspace,
};
use zeppelin_seal::convert::reseed;
use zeppelin_seal::device::{self, SealPreset};
use zeppelin_seal::{ComprMode, PrngInfo, PrngType};

use crate::error::{CliError, CliResult, Operation};
use crate::keydir::KeyDir;
use crate::output::{write_file, Secrecy};
use crate::preset::PresetFn;
use crate::slots::parse_values;

/// How to encrypt.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// Seeded symmetric: c0 and the 32-byte AES-CTR seed of c1 (about half the size).
    Seeded,
    /// Seeded symmetric with the ChaCha20 public stream (prng_type 0xA2; both streams
    /// ChaCha20, as the Cortex-M55's fastest software client); `adapt` expands it as well.
    SeededChacha20,
    /// Classic symmetric: c0 and c1.
    Symmetric,
    /// Public key (DIR/public.seal for seal4096, the device's own DIR/device.pk otherwise).
    Public,
    /// Trusted side: a SEAL Ciphertext in SEAL's own seeded form with its Blake2xb generator.
    SealBlake2xb,
    /// Trusted side: a SEAL Ciphertext in SEAL's own seeded form with its SHAKE256 generator.
    SealShake256,
}

/// Arguments of `zeppelin encrypt`.
#[derive(Args)]
pub struct EncryptArgs {
    /// Key directory written by `keygen`.
    #[arg(long)]
    pub dir: PathBuf,
    /// Encryption path.
    #[arg(long, value_enum)]
    pub mode: Mode,
    /// Slot values: up to 4096 integers in [0, 65537), one per line; missing slots are 0.
    #[arg(long = "in")]
    pub input: PathBuf,
    /// Output file.
    #[arg(long = "out")]
    pub output: PathBuf,
    /// Number of data primes to encrypt at (default: all of the preset).
    #[arg(long)]
    pub level: Option<usize>,
}

/// Runs `zeppelin encrypt` with the key directory's preset.
pub fn run(a: &EncryptArgs) -> CliResult<()> {
    struct Encrypt<'a>(&'a EncryptArgs);
    impl PresetFn for Encrypt<'_> {
        type Output = CliResult<()>;
        fn call<P: SealPreset>(self) -> CliResult<()> {
            let a = self.0;
            let slots = parse_values::<P>(&a.input)?;
            let level = a.level.unwrap_or(P::K);
            if level == 0 || level > P::K {
                return Err(CliError::Level { level, max: P::K });
            }
            crate::output::check_file_destination(&a.output)?;
            let bytes = encrypt_bytes::<P>(&KeyDir::new(&a.dir), &slots, a.mode, level)?;
            write_file(&a.output, &bytes, Secrecy::Public)?;
            Ok(())
        }
    }
    KeyDir::new(&a.dir).preset()?.run(Encrypt(a))
}

/// Encodes `slots` and encrypts them at `level` with the key directory's keys; returns the
/// output file's bytes.
pub fn encrypt_bytes<P: SealPreset>(
    keys: &KeyDir<'_>,
    slots: &[u32],
    mode: Mode,
    level: usize,
) -> CliResult<Vec<u8>> {
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    encoder::encode(slots, &mut plain).map_err(CliError::device(Operation::Encoding))?;
    let mut ws = Box::new(Workspace::new());
    let wire = CliError::seal(Operation::WireForm);
    let ctx = keys.device_context::<P>()?;
    match mode {
        Mode::Seeded => {
            let sk = keys.device_secret_key::<P>(&ctx)?;
            let mut ct = Box::new(SeededCiphertext::<P>::zeroed());
            let seeds = EncryptionSeeds::generate(&mut OsRng);
            Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, level, &mut ct, &mut ws)
                .map_err(CliError::device(Operation::SeededEncryption))?;
            device::to_wire_seeded(&ct).map_err(wire)
        }
        Mode::SeededChacha20 => {
            let sk = keys.device_secret_key::<P>(&ctx)?;
            let mut ct = Box::new(SeededCiphertext::<P>::zeroed());
            let seeds = EncryptionSeeds::generate(&mut OsRng);
            Bfv::<P, ChaCha20, ChaCha20>::encrypt_seeded_with(
                &sk, &plain, &seeds, level, &mut ct, &mut ws,
            )
            .map_err(CliError::device(Operation::SeededEncryption))?;
            device::to_wire_seeded(&ct).map_err(wire)
        }
        Mode::Symmetric => {
            let sk = keys.device_secret_key::<P>(&ctx)?;
            let mut ct = Box::new(Ciphertext::<P>::zeroed());
            let seeds = EncryptionSeeds::generate(&mut OsRng);
            Bfv::<P>::encrypt_symmetric_with(&sk, &plain, &seeds, level, &mut ct, &mut ws)
                .map_err(CliError::device(Operation::SymmetricEncryption))?;
            device::to_wire_full(&ct).map_err(wire)
        }
        Mode::Public => {
            let pk = keys.encryption_public_key(&ctx)?;
            let mut ct = Box::new(Ciphertext::<P>::zeroed());
            let seed = SecretSeed::generate(&mut OsRng);
            Bfv::<P>::encrypt_public_with(&pk, &plain, &seed, level, &mut ct, &mut ws)
                .map_err(CliError::device(Operation::PublicEncryption))?;
            device::to_wire_full(&ct).map_err(wire)
        }
        Mode::SealBlake2xb | Mode::SealShake256 => {
            let sk = keys.device_secret_key::<P>(&ctx)?;
            let mut ct = Box::new(Ciphertext::<P>::zeroed());
            let seeds = EncryptionSeeds::generate(&mut OsRng);
            Bfv::<P>::encrypt_symmetric_with(&sk, &plain, &seeds, P::K, &mut ct, &mut ws)
                .map_err(CliError::device(Operation::SymmetricEncryption))?;
            let seal_ct =
                device::to_seal(&ctx, &ct).map_err(CliError::seal(Operation::Adapting))?;
            let seal_sk = keys.seal_secret_key(&ctx)?;
            let mut seed = [0u8; 64];
            OsRng.fill_bytes(&mut seed);
            let info = PrngInfo {
                prng_type: if mode == Mode::SealBlake2xb {
                    PrngType::Blake2xb
                } else {
                    PrngType::Shake256
                },
                seed,
            };
            reseed(ctx.seal(), &seal_ct, &seal_sk, &info)
                .and_then(|seeded| seeded.save_seeded(&info, ComprMode::None))
                .map_err(CliError::seal(Operation::SealSeededForm))
        }
    }
}

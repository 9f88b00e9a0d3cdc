//! The device presets behind one object-safe trait, so the Python classes are not generic:
//! [`Preset`] (parameters, encoding, keygen, opening a key directory) and [`DeviceKeys`] (a
//! loaded key directory), both implemented once for every `P: SealPreset` and chosen by name
//! through the CLI's preset table (`zeppelin_cli::preset`).

use std::marker::PhantomData;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand_core::OsRng;
use zeppelin::{
    encoder, Bfv, Ciphertext, EncryptionSeeds, Plaintext, PublicKey, SecretKey, SecretSeed,
    SeededCiphertext, Workspace,
};
use zeppelin_cli::keydir::{self, ciphertext_cap, KeyDir};
use zeppelin_cli::preset::{PresetFn, PresetId};
use zeppelin_seal::device::{self, AnyCiphertext, DeviceContext, SealPreset};
use zeppelin_seal::{ComprMode, EncryptionParameters, GaloisKeys, RelinKeys};

use crate::error::{BindError, BindResult};
use crate::evaluator::EvaluatorCore;

/// How the device encrypts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Seeded symmetric (`c0` and the 32-byte seed of `c1`).
    Seeded,
    /// Symmetric (`c0` and `c1`).
    Symmetric,
    /// Public key.
    Public,
}

impl Mode {
    /// The mode named `name` (`seeded`, `symmetric`, `public`).
    pub fn from_name(name: &str) -> BindResult<Self> {
        match name {
            "seeded" => Ok(Mode::Seeded),
            "symmetric" => Ok(Mode::Symmetric),
            "public" => Ok(Mode::Public),
            other => Err(BindError::Input(format!(
                "unknown encryption mode {:?}; expected seeded, symmetric or public",
                other.chars().take(32).collect::<String>()
            ))),
        }
    }
}

/// SEAL's compression named `name` (`none`, `zlib`, `zstd`).
pub fn compression(name: &str) -> BindResult<ComprMode> {
    match name {
        "none" => Ok(ComprMode::None),
        "zlib" => Ok(ComprMode::Zlib),
        "zstd" => Ok(ComprMode::Zstd),
        other => Err(BindError::Input(format!(
            "unknown compression {:?}; expected none, zlib or zstd",
            other.chars().take(32).collect::<String>()
        ))),
    }
}

/// A device preset, whatever its type.
pub trait Preset: Send + Sync {
    /// `Params::NAME`.
    fn name(&self) -> &'static str;
    /// Ring degree `n` (and number of slots).
    fn n(&self) -> usize;
    /// Plaintext modulus `t`.
    fn t(&self) -> u32;
    /// The device's data primes.
    fn data_primes(&self) -> &'static [u32];
    /// The special (key) prime, if the preset has one.
    fn special_prime(&self) -> Option<u32>;
    /// SEAL's `EncryptionParameters` of the preset.
    fn seal_parameters(&self) -> EncryptionParameters;
    /// The largest ciphertext (any form) accepted as input.
    fn ciphertext_cap(&self) -> usize;
    /// The plaintext polynomial (coefficients) of `slots` (up to `n` values below `t`,
    /// missing slots 0): SEAL's `BatchEncoder` layout.
    fn encode(&self, slots: &[u32]) -> BindResult<Vec<u32>>;
    /// The `n` slots of plaintext coefficients `coeffs`.
    fn decode(&self, coeffs: &[u32]) -> BindResult<Vec<u32>>;
    /// `zeppelin keygen --dir dir --preset NAME [--force]`.
    fn keygen(&self, dir: &Path, force: bool) -> BindResult<()>;
    /// Opens and checks the key directory `dir` (which must be of this preset).
    fn open(&self, dir: &Path) -> BindResult<Box<dyn DeviceKeys>>;
}

/// A loaded key directory.
pub trait DeviceKeys: Send + Sync {
    /// Encodes and encrypts `slots` at `level` data primes (default: all); the device's wire
    /// form.
    fn encrypt(&self, slots: &[u32], mode: Mode, level: Option<usize>) -> BindResult<Vec<u8>>;
    /// Decrypts and decodes a device ciphertext or any SEAL `Ciphertext` of the preset.
    fn decrypt(&self, ct: &[u8]) -> BindResult<Vec<u32>>;
    /// A device ciphertext (either wire form) as SEAL `Ciphertext` bytes.
    fn to_seal(&self, ct: &[u8], compression: ComprMode) -> BindResult<Vec<u8>>;
    /// A SEAL `Ciphertext` (or a device form) as the device's full wire form.
    fn to_device(&self, ct: &[u8]) -> BindResult<Vec<u8>>;
    /// The form (`device-seeded`, `device-full`, `seal`) and level of ciphertext bytes.
    fn inspect(&self, ct: &[u8]) -> BindResult<(&'static str, usize)>;
    /// Whether `D/device.sk` was loaded.
    fn has_secret_key(&self) -> bool;
    /// Whether a public key was loaded.
    fn has_public_key(&self) -> bool;
    /// The evaluator with the directory's `relin.seal` / `galois.seal` when present.
    fn evaluator(&self) -> BindResult<EvaluatorCore>;
}

/// [`Preset`] of `P`.
struct PresetOf<P>(PhantomData<fn() -> P>);

/// The preset named `name`.
pub fn by_name(name: &str) -> BindResult<Arc<dyn Preset>> {
    let id = PresetId::from_name(name).ok_or_else(|| {
        BindError::Input(format!(
            "unknown preset {:?}; expected one of {}",
            name.chars().take(32).collect::<String>(),
            names().join(", ")
        ))
    })?;
    Ok(by_id(id))
}

/// The names of every preset.
pub fn names() -> Vec<&'static str> {
    PresetId::ALL.iter().map(|p| p.name()).collect()
}

fn by_id(id: PresetId) -> Arc<dyn Preset> {
    struct Make;
    impl PresetFn for Make {
        type Output = Arc<dyn Preset>;
        fn call<P: SealPreset>(self) -> Arc<dyn Preset> {
            Arc::new(PresetOf::<P>(PhantomData))
        }
    }
    id.run(Make)
}

/// The preset named in the key directory `dir` (`D/preset`).
pub fn of_directory(dir: &Path) -> BindResult<Arc<dyn Preset>> {
    Ok(by_id(
        KeyDir::new(dir)
            .preset()
            .map_err(BindError::key_directory)?,
    ))
}

fn device_error(what: &'static str) -> impl Fn(zeppelin::Error) -> BindError {
    move |e| BindError::Input(format!("{what}: {e}"))
}

impl<P: SealPreset> Preset for PresetOf<P> {
    fn name(&self) -> &'static str {
        P::NAME
    }
    fn n(&self) -> usize {
        P::N
    }
    fn t(&self) -> u32 {
        P::T
    }
    fn data_primes(&self) -> &'static [u32] {
        P::DATA_PRIMES
    }
    fn special_prime(&self) -> Option<u32> {
        P::SPECIAL_PRIME
    }
    fn seal_parameters(&self) -> EncryptionParameters {
        EncryptionParameters::for_preset::<P>()
    }
    fn ciphertext_cap(&self) -> usize {
        ciphertext_cap::<P>()
    }
    fn encode(&self, slots: &[u32]) -> BindResult<Vec<u32>> {
        let mut plain = Box::new(Plaintext::<P>::zeroed());
        encoder::encode(slots, &mut plain).map_err(device_error("encoding the slots"))?;
        Ok(plain.coeffs().to_vec())
    }
    fn decode(&self, coeffs: &[u32]) -> BindResult<Vec<u32>> {
        let mut plain = Box::new(Plaintext::<P>::zeroed());
        plain
            .set_coeffs(coeffs)
            .map_err(device_error("plaintext coefficients"))?;
        let mut slots = vec![0; P::N];
        encoder::decode(&plain, &mut slots).map_err(device_error("decoding"))?;
        Ok(slots)
    }
    fn keygen(&self, dir: &Path, force: bool) -> BindResult<()> {
        zeppelin_cli::keygen::keygen::<P>(dir, force).map_err(BindError::key_directory)
    }
    fn open(&self, dir: &Path) -> BindResult<Box<dyn DeviceKeys>> {
        Ok(Box::new(Loaded::<P>::open(dir)?))
    }
}

/// A key directory of preset `P`, read once with the CLI's checks (`zeppelin_cli::keydir`).
struct Loaded<P: SealPreset> {
    dir: PathBuf,
    ctx: DeviceContext<P>,
    /// Zeroized on drop (`SecretKey`'s own `Drop`).
    sk: Option<Box<SecretKey<P>>>,
    pk: Option<Box<PublicKey<P>>>,
}

impl<P: SealPreset> Loaded<P> {
    fn open(dir: &Path) -> BindResult<Self> {
        let keys = KeyDir::new(dir);
        let found = keys.preset().map_err(BindError::key_directory)?;
        if found.name() != P::NAME {
            return Err(BindError::KeyDirectory(format!(
                "{} is a {} key directory, not {}",
                dir.display(),
                found.name(),
                P::NAME
            )));
        }
        let ctx = keys
            .device_context::<P>()
            .map_err(BindError::key_directory)?;
        let sk = if keys.path(keydir::DEVICE_SK).exists() {
            Some(
                keys.device_secret_key(&ctx)
                    .map_err(BindError::key_directory)?,
            )
        } else {
            None
        };
        let has_pk = if ctx.seal_keys_cover_device() {
            keys.path(keydir::PUBLIC).exists()
        } else {
            keys.path(keydir::DEVICE_PK).exists()
        };
        let pk = if has_pk {
            Some(
                keys.encryption_public_key(&ctx)
                    .map_err(BindError::key_directory)?,
            )
        } else {
            None
        };
        Ok(Self {
            dir: dir.to_path_buf(),
            ctx,
            sk,
            pk,
        })
    }

    fn secret(&self) -> BindResult<&SecretKey<P>> {
        self.sk.as_deref().ok_or_else(|| {
            BindError::KeyDirectory(format!(
                "{} has no {}: this needs the device's secret key",
                self.dir.display(),
                keydir::DEVICE_SK
            ))
        })
    }

    fn read(&self, ct: &[u8]) -> BindResult<AnyCiphertext<P>> {
        let cap = ciphertext_cap::<P>();
        if ct.len() > cap {
            return Err(BindError::Ciphertext(format!(
                "{} bytes is larger than any {} ciphertext ({cap} at most)",
                ct.len(),
                P::NAME
            )));
        }
        device::read_any(&self.ctx, ct).map_err(BindError::ciphertext("reading the ciphertext"))
    }
}

impl<P: SealPreset> DeviceKeys for Loaded<P> {
    fn encrypt(&self, slots: &[u32], mode: Mode, level: Option<usize>) -> BindResult<Vec<u8>> {
        let level = level.unwrap_or(P::K);
        if level == 0 || level > P::K {
            return Err(BindError::Input(format!(
                "level {level}: {} encrypts at 1 to {} data primes",
                P::NAME,
                P::K
            )));
        }
        let mut plain = Box::new(Plaintext::<P>::zeroed());
        encoder::encode(slots, &mut plain).map_err(device_error("encoding the slots"))?;
        let mut ws = Box::new(Workspace::new());
        let wire = BindError::ciphertext("writing the wire form");
        match mode {
            Mode::Seeded => {
                let mut ct = Box::new(SeededCiphertext::<P>::zeroed());
                let seeds = EncryptionSeeds::generate(&mut OsRng);
                Bfv::<P>::encrypt_seeded_with(
                    self.secret()?,
                    &plain,
                    &seeds,
                    level,
                    &mut ct,
                    &mut ws,
                )
                .map_err(device_error("seeded encryption"))?;
                device::to_wire_seeded(&ct).map_err(wire)
            }
            Mode::Symmetric => {
                let mut ct = Box::new(Ciphertext::<P>::zeroed());
                let seeds = EncryptionSeeds::generate(&mut OsRng);
                Bfv::<P>::encrypt_symmetric_with(
                    self.secret()?,
                    &plain,
                    &seeds,
                    level,
                    &mut ct,
                    &mut ws,
                )
                .map_err(device_error("symmetric encryption"))?;
                device::to_wire_full(&ct).map_err(wire)
            }
            Mode::Public => {
                let pk = self.pk.as_deref().ok_or_else(|| {
                    BindError::KeyDirectory(format!(
                        "{} has no public key ({} or {})",
                        self.dir.display(),
                        keydir::PUBLIC,
                        keydir::DEVICE_PK
                    ))
                })?;
                let mut ct = Box::new(Ciphertext::<P>::zeroed());
                let seed = SecretSeed::generate(&mut OsRng);
                Bfv::<P>::encrypt_public_with(pk, &plain, &seed, level, &mut ct, &mut ws)
                    .map_err(device_error("public-key encryption"))?;
                device::to_wire_full(&ct).map_err(wire)
            }
        }
    }

    fn decrypt(&self, ct: &[u8]) -> BindResult<Vec<u32>> {
        let sk = self.secret()?;
        let ct = self.read(ct)?;
        let mut plain = Box::new(Plaintext::<P>::zeroed());
        let mut ws = Box::new(Workspace::new());
        ct.decrypt(&self.ctx, sk, &mut plain, &mut ws)
            .map_err(BindError::ciphertext("decrypting"))?;
        let mut slots = vec![0; P::N];
        encoder::decode(&plain, &mut slots).map_err(device_error("decoding"))?;
        Ok(slots)
    }

    fn to_seal(&self, ct: &[u8], compression: ComprMode) -> BindResult<Vec<u8>> {
        let ct = self.read(ct)?;
        if !ct.is_device_form() {
            return Err(BindError::Ciphertext(
                "the ciphertext is already a SEAL Ciphertext, not a device wire form".into(),
            ));
        }
        ct.to_seal(&self.ctx)
            .map_err(BindError::ciphertext("converting to SEAL"))?
            .save(compression)
            .map_err(BindError::ciphertext("writing the SEAL Ciphertext"))
    }

    fn to_device(&self, ct: &[u8]) -> BindResult<Vec<u8>> {
        let ct = self.read(ct)?;
        let mut full = Box::new(Ciphertext::<P>::zeroed());
        ct.to_device(&self.ctx, &mut full)
            .map_err(BindError::ciphertext("converting to the device form"))?;
        device::to_wire_full(&full).map_err(BindError::ciphertext("writing the wire form"))
    }

    fn inspect(&self, ct: &[u8]) -> BindResult<(&'static str, usize)> {
        let ct = self.read(ct)?;
        let form = match ct {
            AnyCiphertext::DeviceSeeded(_) => "device-seeded",
            AnyCiphertext::DeviceFull(_) => "device-full",
            AnyCiphertext::Seal(_) => "seal",
        };
        Ok((form, ct.level()))
    }

    fn has_secret_key(&self) -> bool {
        self.sk.is_some()
    }

    fn has_public_key(&self) -> bool {
        self.pk.is_some()
    }

    fn evaluator(&self) -> BindResult<EvaluatorCore> {
        let keys = KeyDir::new(&self.dir);
        let ctx = Arc::new(self.ctx.seal().clone());
        let relin: Option<RelinKeys> = if keys.path(keydir::RELIN).exists() {
            Some(
                keys.relin_keys::<P>(&ctx)
                    .map_err(BindError::key_directory)?,
            )
        } else {
            None
        };
        let galois: Option<GaloisKeys> = if keys.path(keydir::GALOIS).exists() {
            Some(
                keys.galois_keys::<P>(&ctx)
                    .map_err(BindError::key_directory)?,
            )
        } else {
            None
        };
        EvaluatorCore::new(by_name(P::NAME)?, ctx, relin.as_ref(), galois.as_ref())
    }
}

//! The server's preset and what it does with upload bytes: validate them as a device
//! ciphertext of the preset, and turn them into SEAL ciphertexts for the evaluator.

use std::sync::Arc;

use zeppelin::Params;
use zeppelin_seal::device::{self, AnyCiphertext, DeviceContext, SealPreset};
use zeppelin_seal::{Ciphertext, GaloisKeys, RelinKeys, SealContext, SealError};

/// A preset the service runs (SEAL-compatible presets only: the evaluator needs SEAL's
/// special prime for relinearization).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// `zeppelin::Seal4096`.
    Seal4096,
    /// `zeppelin::Seal8192`.
    Seal8192,
}

impl Preset {
    /// The preset's name (`Params::NAME`: `seal4096`, `seal8192`).
    pub fn name(self) -> &'static str {
        match self {
            Preset::Seal4096 => zeppelin::Seal4096::NAME,
            Preset::Seal8192 => zeppelin::Seal8192::NAME,
        }
    }

    /// The preset named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        [Preset::Seal4096, Preset::Seal8192]
            .into_iter()
            .find(|p| p.name() == name)
    }

    /// The largest upload body the service takes (the full wire form at the full level).
    pub fn max_upload_bytes(self) -> usize {
        match self {
            Preset::Seal4096 => max_upload_bytes::<zeppelin::Seal4096>(),
            Preset::Seal8192 => max_upload_bytes::<zeppelin::Seal8192>(),
        }
    }

    /// The largest `RelinKeys` / `GaloisKeys` body the service takes.
    pub fn max_keys_bytes(self) -> usize {
        match self {
            Preset::Seal4096 => max_keys_bytes::<zeppelin::Seal4096>(),
            Preset::Seal8192 => max_keys_bytes::<zeppelin::Seal8192>(),
        }
    }

    /// The codec of this preset (what the service checks every upload with).
    pub fn codec(self) -> Result<Arc<dyn Codec>, SealError> {
        Ok(match self {
            Preset::Seal4096 => Arc::new(DeviceCodec::<zeppelin::Seal4096>::new()?),
            Preset::Seal8192 => Arc::new(DeviceCodec::<zeppelin::Seal8192>::new()?),
        })
    }
}

/// Why upload bytes were refused.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// Not a ciphertext of the preset.
    #[error(transparent)]
    Seal(#[from] SealError),
    /// A SEAL ciphertext that is not one of the device's wire forms.
    #[error("not a device wire form (seeded or full) of preset {preset}: {found}")]
    NotDeviceForm {
        /// The preset.
        preset: &'static str,
        /// What it is instead.
        found: String,
    },
    /// A device ciphertext below the preset's full level.
    #[error("device ciphertext at level {found}, the service takes the full level {expected}")]
    Level {
        /// The level found.
        found: usize,
        /// The preset's full level.
        expected: usize,
    },
}

/// A preset's byte rules, behind a trait object so that the HTTP layer is not generic.
pub trait Codec: Send + Sync + 'static {
    /// The preset's name.
    fn preset_name(&self) -> &'static str;
    /// The largest device wire form (the full form at the full level).
    fn max_upload_bytes(&self) -> usize;
    /// The largest uncompressed `RelinKeys` / `GaloisKeys` object the service accepts.
    fn max_keys_bytes(&self) -> usize;
    /// The preset's SEAL context.
    fn seal(&self) -> &Arc<SealContext>;
    /// Parses and checks `bytes` as the device's seeded or full wire form at the full level.
    fn validate(&self, bytes: &[u8]) -> Result<(), UploadError>;
    /// The upload as a SEAL ciphertext (seed expanded).
    fn to_seal(&self, bytes: &[u8]) -> Result<Ciphertext, UploadError>;
    /// SEAL `RelinKeys` bytes loaded under the preset.
    fn relin_keys(&self, bytes: &[u8]) -> Result<RelinKeys, SealError>;
    /// SEAL `GaloisKeys` bytes loaded under the preset.
    fn galois_keys(&self, bytes: &[u8]) -> Result<GaloisKeys, SealError>;
}

fn max_upload_bytes<P: SealPreset>() -> usize {
    zeppelin::wire::full_len::<P>(P::K).max(zeppelin::wire::seeded_len::<P>(P::K))
}

fn max_keys_bytes<P: SealPreset>() -> usize {
    // One key-switching key: K decomposition parts, each two polynomials over the K data
    // primes and the special prime; a Galois key set holds at most 2 log n + 1 of them
    // (SEAL's default set has 2 log n - 1). Plus room for the headers of every part.
    let one = P::K * 2 * P::N * (P::K + 1) * 8;
    let keys = 2 * P::LOG_N as usize + 1;
    one * keys + (keys * P::K + 1) * 256 + 4096
}

struct DeviceCodec<P: SealPreset> {
    ctx: DeviceContext<P>,
    seal: Arc<SealContext>,
}

impl<P: SealPreset> DeviceCodec<P> {
    fn new() -> Result<Self, SealError> {
        let ctx = DeviceContext::<P>::new()?;
        let seal = Arc::new(ctx.seal().clone());
        Ok(Self { ctx, seal })
    }

    fn read(&self, bytes: &[u8]) -> Result<AnyCiphertext<P>, UploadError> {
        let any = device::read_any(&self.ctx, bytes)?;
        if !any.is_device_form() {
            // The kind only: the Debug form of a SEAL ciphertext holds every residue.
            return Err(UploadError::NotDeviceForm {
                preset: P::NAME,
                found: "another SEAL ciphertext form".into(),
            });
        }
        if any.level() != P::K {
            return Err(UploadError::Level {
                found: any.level(),
                expected: P::K,
            });
        }
        Ok(any)
    }
}

impl<P: SealPreset> Codec for DeviceCodec<P> {
    fn preset_name(&self) -> &'static str {
        P::NAME
    }

    fn max_upload_bytes(&self) -> usize {
        max_upload_bytes::<P>()
    }

    fn max_keys_bytes(&self) -> usize {
        max_keys_bytes::<P>()
    }

    fn seal(&self) -> &Arc<SealContext> {
        &self.seal
    }

    fn validate(&self, bytes: &[u8]) -> Result<(), UploadError> {
        let any = self.read(bytes)?;
        // A seeded upload's c1 is the AES expansion of its seed; only the full form carries a
        // c1 of the sender's choosing, which must not be degenerate (c1 = 0 is a plaintext
        // injected with no key at all).
        if let AnyCiphertext::DeviceFull(_) = any {
            let seal = any.to_seal(&self.ctx)?;
            let primes = &self
                .seal
                .data_level_with(seal.coeff_modulus_size)
                .ok_or(UploadError::Level {
                    found: seal.coeff_modulus_size,
                    expected: P::K,
                })?
                .coeff_modulus;
            zeppelin_seal::validate::check_poly_not_degenerate(
                self.seal.n(),
                primes,
                &seal.data,
                1,
                "ciphertext",
            )?;
        }
        Ok(())
    }

    fn to_seal(&self, bytes: &[u8]) -> Result<Ciphertext, UploadError> {
        Ok(self.read(bytes)?.to_seal(&self.ctx)?)
    }

    fn relin_keys(&self, bytes: &[u8]) -> Result<RelinKeys, SealError> {
        RelinKeys::load(&self.seal, bytes)
    }

    fn galois_keys(&self, bytes: &[u8]) -> Result<GaloisKeys, SealError> {
        GaloisKeys::load(&self.seal, bytes)
    }
}

//! The server's preset and what it does with upload bytes: validate them as a device
//! ciphertext of the preset, and turn them into SEAL ciphertexts for the evaluator.

use std::sync::Arc;

use zeppelin::Ciphertext as DeviceCiphertext;
use zeppelin::Params;
use zeppelin_ring::{Modulus, NttBackend};
use zeppelin_seal::device::{self, AnyCiphertext, DeviceContext, SealPreset};
use zeppelin_seal::{Ciphertext, GaloisKeys, RelinKeys, SealContext, SealError};

use crate::linear::{C1Rows, LinearSum, ReducedRows};

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
    /// An empty [`LinearSum`] over the preset's full level (`None` when the device's full
    /// level is not one of SEAL's levels, so that uploads must be converted one by one).
    fn linear_sum(&self) -> Option<LinearSum>;
    /// Adds `w·upload` to `sum`, the upload parsed and checked as [`Codec::to_seal`] does and
    /// a seeded one left in NTT form; `scale` is `w mod qᵢ` per prime (`None`: `w = 1`).
    fn add_to_linear_sum(
        &self,
        sum: &mut LinearSum,
        bytes: &[u8],
        scale: Option<&[u32]>,
    ) -> Result<(), UploadError>;
    /// The SEAL ciphertext of `sum` (one inverse transform per prime); `None` without terms.
    /// Bit for bit the sum of the uploads' [`Codec::to_seal`] ciphertexts, each scaled.
    fn finish_linear_sum(&self, sum: LinearSum) -> Result<Option<Ciphertext>, UploadError>;
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
    /// Whether [`Codec::linear_sum`] applies (see `new`).
    linear: bool,
}

/// The moduli of the device's full level.
fn device_moduli<P: SealPreset>() -> Vec<Modulus> {
    P::ntt_tables()
        .iter()
        .take(P::K)
        .map(|table| *table.modulus())
        .collect()
}

/// A device-arithmetic failure on rows the codec checked (a bug, reported as such).
fn device_error(e: zeppelin::Error) -> UploadError {
    UploadError::Seal(SealError::Device {
        operation: "linear sum",
        source: e,
    })
}

impl<P: SealPreset> DeviceCodec<P> {
    fn new() -> Result<Self, SealError> {
        let ctx = DeviceContext::<P>::new()?;
        let seal = Arc::new(ctx.seal().clone());
        // Uploads at the full level convert without modulus switching (whose rounding is not
        // linear) exactly when SEAL has a data level of the device's K primes.
        let device_primes: Vec<u64> = P::DATA_PRIMES.iter().map(|&q| u64::from(q)).collect();
        let linear = seal
            .data_level_with(P::K)
            .is_some_and(|level| level.coeff_modulus == device_primes);
        Ok(Self { ctx, seal, linear })
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

    fn linear_sum(&self) -> Option<LinearSum> {
        self.linear
            .then(|| LinearSum::new(device_moduli::<P>(), P::N))
    }

    fn add_to_linear_sum(
        &self,
        sum: &mut LinearSum,
        bytes: &[u8],
        scale: Option<&[u32]>,
    ) -> Result<(), UploadError> {
        match self.read(bytes)? {
            AnyCiphertext::DeviceSeeded(ct) => {
                let mut c1_ntt = vec![0u32; P::K * P::N];
                zeppelin::expand_seeded_ntt(&ct, &mut c1_ntt).map_err(device_error)?;
                sum.add(&ct.c0(), C1Rows::Ntt(&c1_ntt), scale);
            }
            AnyCiphertext::DeviceFull(ct) => {
                sum.add(&ct.c0(), C1Rows::Coefficients(&ct.c1()), scale);
            }
            // `read` keeps only the device forms.
            AnyCiphertext::Seal(_) => {
                return Err(UploadError::NotDeviceForm {
                    preset: P::NAME,
                    found: "another SEAL ciphertext form".into(),
                })
            }
        }
        Ok(())
    }

    fn finish_linear_sum(&self, sum: LinearSum) -> Result<Option<Ciphertext>, UploadError> {
        if sum.terms() == 0 {
            return Ok(None);
        }
        let ReducedRows { c0, mut c1, c1_ntt } = sum.reduce();
        if let Some(mut c1_ntt) = c1_ntt {
            let backend = zeppelin_ring::default_backend();
            for ((table, row), coefficients) in P::ntt_tables()
                .iter()
                .zip(c1_ntt.chunks_exact_mut(P::N))
                .zip(c1.chunks_exact_mut(P::N))
            {
                backend
                    .inverse(&table.view(), row)
                    .map_err(|e| device_error(e.into()))?;
                let q = table.modulus();
                for (c, &a) in coefficients.iter_mut().zip(row.iter()) {
                    *c = q.add(*c, a);
                }
            }
        }
        let mut full = Box::new(DeviceCiphertext::<P>::zeroed());
        let (c0_rows, c1_rows) = full.rows_mut(P::K).map_err(device_error)?;
        c0_rows.copy_from_slice(&c0);
        c1_rows.copy_from_slice(&c1);
        Ok(Some(device::to_seal(&self.ctx, &full)?))
    }

    fn relin_keys(&self, bytes: &[u8]) -> Result<RelinKeys, SealError> {
        RelinKeys::load(&self.seal, bytes)
    }

    fn galois_keys(&self, bytes: &[u8]) -> Result<GaloisKeys, SealError> {
        GaloisKeys::load(&self.seal, bytes)
    }
}

//! The key directory `D` (docs/cli.md): its file layout, the size caps of its files, and
//! reading them with every check the CLI makes at load:
//!
//! - `D/params.seal` must be exactly the SEAL parameters of the preset `D/preset` names;
//! - the device's keys go through the validating readers of `zeppelin` (ternary secret of a
//!   plausible weight, public-key rows that are not degenerate), SEAL's public key through
//!   `zeppelin_seal::device::public_key_from_seal`;
//! - `D/secret.seal` and `D/device.sk`, when both are present, must hold the same key;
//! - every file is read with a cap derived from the preset, secret files into buffers that
//!   are zeroized.
//!
//! Writing goes through [`crate::output`]: `keygen` stages a whole directory.

use std::path::{Path, PathBuf};

use zeppelin::{PublicKey, SecretKey};
use zeppelin_seal::device::{self, DeviceContext, SealPreset};
use zeppelin_seal::{
    EncryptionParameters, GaloisKeys, PublicKey as SealPublicKey, RelinKeys, SealContext,
    SecretKey as SealSecretKey,
};

use crate::error::{CliError, CliResult};
use crate::input::{read_capped, read_seal, read_text, InputError};
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

/// Cap of `D/preset` (a name and a newline).
const PRESET_CAP: usize = 64;
/// Cap of `D/params.seal`: a preset's parameters take about a hundred bytes.
const PARAMS_CAP: usize = 4096;
/// Room for SEAL's header and metadata, and for compression that expands its input.
const SEAL_SLACK: usize = 4096;
/// The most polynomials a SEAL ciphertext read here may have (2 fresh, 3 after a product).
const MAX_CIPHERTEXT_POLYS: usize = 4;

/// Bytes of `polys` polynomials over every prime of preset `P`'s SEAL parameters, plus 1/8
/// and [`SEAL_SLACK`] (zlib and zstd expand incompressible data by far less).
fn seal_cap<P: SealPreset>(polys: usize) -> usize {
    let primes = P::K + 1;
    let raw = polys * P::N * primes * 8;
    raw + raw / 8 + SEAL_SLACK
}

/// Cap of a ciphertext file of preset `P` (any accepted form).
pub fn ciphertext_cap<P: SealPreset>() -> usize {
    seal_cap::<P>(MAX_CIPHERTEXT_POLYS)
}

/// The most Galois elements a `D/galois.seal` read here may hold (SEAL's default set has
/// `2·log2(n/2) + 1`: 23 at n = 4096, 25 at n = 8192).
const MAX_GALOIS_ELEMENTS: usize = 64;

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

    /// The preset named in `D/preset`.
    pub fn preset(&self) -> CliResult<PresetId> {
        let path = self.path(PRESET);
        let text = read_text(&path, "preset name", PRESET_CAP).map_err(|e| match e {
            InputError::Io { path, source } => CliError::NoKeyDirectory {
                path,
                dir: self.dir.to_path_buf(),
                source,
            },
            other => CliError::Input(other),
        })?;
        PresetId::from_name(text.trim()).ok_or_else(|| CliError::UnknownPreset {
            path,
            found: text.trim().chars().take(32).collect(),
        })
    }

    /// `D/params.seal`, which must be exactly preset `P`'s SEAL parameters.
    pub fn parameters<P: SealPreset>(&self) -> CliResult<EncryptionParameters> {
        let path = self.path(PARAMS);
        let bytes = read_seal(&path, "SEAL EncryptionParameters", PARAMS_CAP)?;
        let parms = EncryptionParameters::load(&bytes).map_err(CliError::seal_file(&path))?;
        // Compared before SEAL's context is built from them: other parameters could ask for
        // gigabytes of tables.
        let preset = EncryptionParameters::for_preset::<P>();
        if let Some(difference) = first_difference(&parms, &preset) {
            return Err(CliError::NotPresetParameters {
                path,
                preset: P::NAME,
                difference,
            });
        }
        Ok(parms)
    }

    /// The context of preset `P` from `D/params.seal` (see [`KeyDir::parameters`]).
    pub fn device_context<P: SealPreset>(&self) -> CliResult<DeviceContext<P>> {
        let path = self.path(PARAMS);
        DeviceContext::from_parameters(self.parameters::<P>()?).map_err(CliError::seal_file(&path))
    }

    /// The device's secret key from `D/device.sk`, checked against `D/secret.seal` when that
    /// is present.
    pub fn device_secret_key<P: SealPreset>(
        &self,
        ctx: &DeviceContext<P>,
    ) -> CliResult<Box<SecretKey<P>>> {
        let sk = self.read_device_secret_key::<P>()?;
        if self.path(SECRET).exists() {
            let seal = self.read_seal_secret_key(ctx)?;
            self.same_secret(ctx, &sk, &seal)?;
        }
        Ok(sk)
    }

    /// SEAL's secret key from `D/secret.seal`, checked against `D/device.sk` when that is
    /// present.
    pub fn seal_secret_key<P: SealPreset>(
        &self,
        ctx: &DeviceContext<P>,
    ) -> CliResult<SealSecretKey> {
        let seal = self.read_seal_secret_key(ctx)?;
        if self.path(DEVICE_SK).exists() {
            let sk = self.read_device_secret_key::<P>()?;
            self.same_secret(ctx, &sk, &seal)?;
        }
        Ok(seal)
    }

    fn read_device_secret_key<P: SealPreset>(&self) -> CliResult<Box<SecretKey<P>>> {
        let path = self.path(DEVICE_SK);
        let bytes = read_capped(&path, "device secret key", SecretKey::<P>::BYTES)?;
        let mut sk = Box::new(SecretKey::<P>::zeroed());
        sk.read_bytes(&bytes)
            .map_err(|source| CliError::DeviceFile { path, source })?;
        Ok(sk)
    }

    fn read_seal_secret_key<P: SealPreset>(
        &self,
        ctx: &DeviceContext<P>,
    ) -> CliResult<SealSecretKey> {
        let path = self.path(SECRET);
        let bytes = read_seal(&path, "SEAL SecretKey", seal_cap::<P>(1))?;
        SealSecretKey::load(ctx.seal(), &bytes).map_err(CliError::seal_file(&path))
    }

    /// Refuses a SEAL secret key that is not the device's key in SEAL's form (the library's
    /// constant-time comparison, `device::check_secret_keys_agree`).
    fn same_secret<P: SealPreset>(
        &self,
        ctx: &DeviceContext<P>,
        device_sk: &SecretKey<P>,
        seal_sk: &SealSecretKey,
    ) -> CliResult<()> {
        match device::check_secret_keys_agree(ctx, seal_sk, device_sk) {
            Ok(()) => Ok(()),
            Err(zeppelin_seal::SealError::SecretKeysDiffer) => Err(CliError::SecretKeysDiffer {
                seal: self.path(SECRET),
                device: self.path(DEVICE_SK),
            }),
            Err(e) => Err(CliError::seal(crate::error::Operation::SealSecretKey)(e)),
        }
    }

    /// The device's public key from `D/device.pk` (degenerate rows refused).
    pub fn device_public_key<P: SealPreset>(&self) -> CliResult<Box<PublicKey<P>>> {
        let path = self.path(DEVICE_PK);
        let bytes = read_capped(&path, "device public key", PublicKey::<P>::BYTES)?;
        let mut pk = Box::new(PublicKey::<P>::zeroed());
        pk.read_bytes(&bytes)
            .map_err(|source| CliError::DeviceFile { path, source })?;
        Ok(pk)
    }

    /// SEAL's public key from `D/public.seal`.
    pub fn seal_public_key<P: SealPreset>(
        &self,
        ctx: &DeviceContext<P>,
    ) -> CliResult<SealPublicKey> {
        let path = self.path(PUBLIC);
        let bytes = read_seal(&path, "SEAL PublicKey", seal_cap::<P>(2))?;
        SealPublicKey::load(ctx.seal(), &bytes).map_err(CliError::seal_file(&path))
    }

    /// SEAL's `RelinKeys` from `D/relin.seal` (made by `zeppelin keys --relin`).
    pub fn relin_keys<P: SealPreset>(&self, ctx: &SealContext) -> CliResult<RelinKeys> {
        let path = self.switching_key_file(RELIN, "--relin")?;
        // One key per data prime, each two polynomials at the key level.
        let bytes = read_seal(&path, "SEAL RelinKeys", seal_cap::<P>(2 * (P::K + 1)))?;
        RelinKeys::load(ctx, &bytes).map_err(CliError::seal_file(&path))
    }

    /// SEAL's `GaloisKeys` from `D/galois.seal` (made by `zeppelin keys --galois`).
    pub fn galois_keys<P: SealPreset>(&self, ctx: &SealContext) -> CliResult<GaloisKeys> {
        let path = self.switching_key_file(GALOIS, "--galois")?;
        let cap = seal_cap::<P>(2 * (P::K + 1) * MAX_GALOIS_ELEMENTS);
        let bytes = read_seal(&path, "SEAL GaloisKeys", cap)?;
        GaloisKeys::load(ctx, &bytes).map_err(CliError::seal_file(&path))
    }

    /// The path of a key-switching key file, or the error naming the `zeppelin keys` flag
    /// that makes it.
    fn switching_key_file(&self, name: &str, flag: &'static str) -> CliResult<PathBuf> {
        let path = self.path(name);
        match std::fs::symlink_metadata(&path) {
            Ok(_) => Ok(path),
            Err(source) => Err(CliError::NoSwitchingKeys {
                path,
                dir: self.dir.to_path_buf(),
                flag,
                source,
            }),
        }
    }

    /// The public key the device encrypts with: SEAL's `D/public.seal` when SEAL's key level
    /// holds every device prime (so a SEAL-made public key can be dropped in), else
    /// `D/device.pk`. Either way through the readers that refuse degenerate keys, and checked
    /// against `D/device.sk` when that is present (a public key of another secret key would
    /// make ciphertexts the owner cannot decrypt).
    pub fn encryption_public_key<P: SealPreset>(
        &self,
        ctx: &DeviceContext<P>,
    ) -> CliResult<Box<PublicKey<P>>> {
        let (path, pk) = if ctx.seal_keys_cover_device() {
            let path = self.path(PUBLIC);
            let seal_pk = self.seal_public_key(ctx)?;
            let mut pk = Box::new(PublicKey::<P>::zeroed());
            device::public_key_from_seal(ctx, &seal_pk, &mut pk)
                .map_err(CliError::seal_file(&path))?;
            (path, pk)
        } else {
            (self.path(DEVICE_PK), self.device_public_key()?)
        };
        if self.path(DEVICE_SK).exists() {
            let sk = self.device_secret_key(ctx)?;
            device::check_key_pair(&pk, &sk).map_err(CliError::seal_file(&path))?;
        }
        Ok(pk)
    }
}

/// The first field in which `found` differs from the preset's `want`, as text (`None`: equal).
fn first_difference(found: &EncryptionParameters, want: &EncryptionParameters) -> Option<String> {
    let differ = |what: &str, a: &dyn std::fmt::Display, b: &dyn std::fmt::Display| {
        Some(format!("{what} {a}, the preset has {b}"))
    };
    if found.scheme != want.scheme {
        return differ("scheme", &found.scheme, &want.scheme);
    }
    if found.poly_modulus_degree != want.poly_modulus_degree {
        return differ(
            "poly_modulus_degree",
            &found.poly_modulus_degree,
            &want.poly_modulus_degree,
        );
    }
    if found.coeff_modulus.len() != want.coeff_modulus.len() {
        return Some(format!(
            "{} primes in coeff_modulus, the preset has {}",
            found.coeff_modulus.len(),
            want.coeff_modulus.len()
        ));
    }
    if let Some((i, (a, b))) = found
        .coeff_modulus
        .iter()
        .zip(&want.coeff_modulus)
        .enumerate()
        .find(|(_, (a, b))| a != b)
    {
        return differ(&format!("coeff_modulus[{i}]"), a, b);
    }
    if found.plain_modulus != want.plain_modulus {
        return differ("plain modulus", &found.plain_modulus, &want.plain_modulus);
    }
    (found != want).then(|| String::from("other parameters"))
}

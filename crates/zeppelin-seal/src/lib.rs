//! # zeppelin-seal
//!
//! Microsoft SEAL 4.1 interoperability for Zeppelin (std):
//!
//! - [`device`]: the typed bridge to the Zeppelin device client (`zeppelin`): a SEAL context
//!   checked against a device preset, ciphertext and key conversions both ways that refuse
//!   anything outside the preset, and one reader for every accepted byte form.
//! - [`wire`]: SEAL's 16-byte header and compression (none, zlib, zstd); version 4.1 written,
//!   4.0 to 4.4 read.
//! - [`params`]: `EncryptionParameters` and the modulus-switching chain; [`parms_id`]: SEAL's
//!   level identifier.
//! - [`objects`]: `Ciphertext` (full and SEAL's seeded form), `Plaintext`, `SecretKey`,
//!   `PublicKey`, `RelinKeys`, `GaloisKeys`.
//! - [`prng`]: SEAL's Blake2xb and SHAKE256 generators and `sample_poly_uniform`, so a seeded
//!   SEAL ciphertext expands here exactly as in SEAL.
//! - [`keygen`]: relinearization and Galois keys generated on the trusted side from a secret
//!   key, in SEAL's key-switching convention.
//! - [`poly`]: RNS polynomials with the shared NTT (SEAL's evaluation map).
//! - [`validate`]: degenerate public keys, implausible secret keys, and whether a public key
//!   belongs to a secret key.
//!
//! Every malformed input is a [`SealError`] naming what is wrong; nothing is allocated by a
//! length that has not been checked against the parameters and against the input (or, for a
//! compressed object, against the longest object of its kind under the parameters, beyond
//! which nothing is decompressed) first.
//!
//! The device ⇄ SEAL round trip is in the crate's README (compiled as a doc test) and in
//! `examples/device_to_seal.rs`.
//!
//! ```
//! use zeppelin_seal::{ComprMode, EncryptionParameters, SealContext};
//! // SEAL's parameters of the device preset Seal4096: three data primes and a special prime.
//! let parms = EncryptionParameters::for_preset::<zeppelin::Seal4096>();
//! let bytes = parms.save(ComprMode::None).unwrap();
//! let ctx = SealContext::new(EncryptionParameters::load(&bytes).unwrap()).unwrap();
//! assert_eq!(ctx.first_level().coeff_modulus.len(), 3);
//! ```

pub mod convert;
pub mod device;
pub mod error;
pub mod keygen;
pub mod objects;
pub mod params;
pub mod parms_id;
pub mod poly;
pub mod prng;
pub mod validate;
pub mod wire;

pub use error::{LevelRule, Mismatch, ParameterError, Result, SealError};
pub use objects::{
    Ciphertext, GaloisKeys, KSwitchKeys, Plaintext, PublicKey, RelinKeys, SecretKey,
};
pub use params::{EncryptionParameters, Level, SealContext};
pub use parms_id::ParmsId;
pub use prng::{PrngInfo, PrngType};
pub use wire::ComprMode;

/// Compiles and runs the README's example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

//! # zeppelin-seal
//!
//! Microsoft SEAL 4.1 interoperability for Zeppelin (std):
//!
//! - [`wire`]: SEAL's 16-byte header and compression (none, zlib, zstd); version 4.1 written,
//!   4.0 to 4.4 read.
//! - [`params`]: `EncryptionParameters`, `parms_id` and the modulus-switching chain.
//! - [`objects`]: `Ciphertext` (full and SEAL's seeded form), `Plaintext`, `SecretKey`,
//!   `PublicKey`, `RelinKeys`, `GaloisKeys`.
//! - [`prng`]: SEAL's Blake2xb and SHAKE256 generators and `sample_poly_uniform`, so a seeded
//!   SEAL ciphertext expands here exactly as in SEAL.
//! - [`keygen`]: relinearization and Galois keys generated on the trusted side from a secret
//!   key, in SEAL's key-switching convention.
//! - [`poly`]: RNS polynomials with the shared NTT (SEAL's evaluation map).
//!
//! Every malformed input is a [`SealError`] naming what is wrong; nothing is allocated by a
//! length that has not been checked against the parameters first.
//!
//! ```
//! use zeppelin_seal::{ComprMode, EncryptionParameters, SealContext};
//! let parms = EncryptionParameters::bfv(
//!     4096,
//!     vec![134_176_769, 134_111_233, 134_012_929, 268_369_921],
//!     65537,
//! );
//! let bytes = parms.save(ComprMode::None).unwrap();
//! let ctx = SealContext::new(EncryptionParameters::load(&bytes).unwrap()).unwrap();
//! assert_eq!(ctx.first_level().coeff_modulus.len(), 3);
//! ```

pub mod adapter;
pub mod convert;
pub mod error;
pub mod keygen;
pub mod objects;
pub mod params;
pub mod poly;
pub mod prng;
pub mod wire;

pub use error::{Result, SealError};
pub use objects::{
    Ciphertext, GaloisKeys, KSwitchKeys, Plaintext, PublicKey, RelinKeys, SecretKey,
};
pub use params::{EncryptionParameters, Level, ParmsId, SealContext};
pub use prng::{PrngInfo, PrngType};
pub use wire::ComprMode;

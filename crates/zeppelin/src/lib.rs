//! # zeppelin — the BFV device client
//!
//! BFV encryption and decryption for microcontrollers (the Zeppelin paper, Sections 2–4):
//! `#![no_std]`, no allocator, every size fixed at compile time, large tables in `static`s
//! (flash), every large buffer provided by the caller.
//!
//! - [`params`]: the compile-time presets [`Seal4096`] (default, SEAL-compatible),
//!   [`Zeppelin4096`] (the paper's four primes) and [`Seal8192`] (`n = 8192`, seven primes,
//!   for deeper circuits), each generated from its `n`, `t` and primes.
//! - [`prng`]: AES-128-CTR and ChaCha20 keystreams behind [`Keystream`], with the
//!   structurally separate public ([`PublicPrng`], `prng_a`) and secret ([`SecretPrng`],
//!   `prng_e`) states; seeded ciphertexts record their [`PublicGenerator`].
//! - [`sampler`]: uniform by rejection, ternary, discrete Gaussian (constant-time CDT).
//! - [`encoder`]: SEAL-ordered batch encoding of slots into a [`Plaintext`] and fixed-point
//!   helpers.
//! - [`Bfv`]: key generation, seeded / classic symmetric / public-key encryption,
//!   `expand_ct1`, BEHZ decryption at any level, noise budget.
//!
//! Secret-dependent code is constant time (masks, no secret-indexed loads, no division); the
//! rejection sampler runs only on the public stream. Secrets are zeroized on drop. Outside
//! data (ciphertexts, keys, slots) is checked and refused with an [`Error`].
#![no_std]
#![deny(unsafe_code)]

pub mod behz;
pub mod ciphertext;
pub mod encoder;
mod error;
pub mod kat;
pub mod keys;
mod ops;
pub mod params;
mod parms_id;
mod plaintext;
pub mod prng;
pub mod rows;
pub mod sampler;
mod wide;
pub mod wire;

pub use ciphertext::{Ciphertext, SeededCiphertext};
pub use error::Error;
pub use keys::{PublicKey, SecretKey};
pub use ops::{decrypt_seeded, expand_seeded, expand_seeded_ntt, Bfv, EncryptionSeeds, Workspace};
pub use params::{DefaultParams, LevelConstants, Params, Seal4096, Seal8192, Zeppelin4096};
pub use plaintext::Plaintext;
pub use prng::{
    AesCtr128, ByteBuffer, ChaCha20, Keystream, KeystreamBuffer, PublicGenerator, PublicKeystream,
    PublicPrng, PublicSeed, SecretKeystream, SecretPrng, SecretSeed,
};
pub use rows::{CoeffRows, NttRows};
pub use wire::WireError;

/// The README's code blocks, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

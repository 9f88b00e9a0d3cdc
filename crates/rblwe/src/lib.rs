//! Ring-binary-LWE (RBLWE) public-key encryption for small devices, hardened in stages.
//!
//! This is the scheme of Buchmann et al. as used by Javaid, Pasha and Siddiqi
//! ("Efficient and Implementation-Hardened RBLWE on Commodity Cortex-M Microcontrollers"):
//! a ring `Z_q[x]/(x^n + 1)` with `q` a power of two (coefficients are bytes), binary
//! (Bernoulli 1/2) secrets and errors, and a bias-aware decoder.
//!
//! * KeyGen: `r1, r2 <- {0,1}^n`, `p = r1 - a*r2`; `pk = (a, p)`, `sk = r2`.
//! * Encrypt: `e1, e2, e3 <- {0,1}^n`; `c1 = a*e1 + e2`, `c2 = p*e1 + e3 + Encode(m)`.
//! * Decrypt: `w = c1*r2 + c2`, `m_i = 1 XOR MSB((w_i - L_i) mod q)` with the offsets `L_i`
//!   derived from the expected noise ([`params::decode_offset`]).
//!
//! Layers, each selectable so its cost can be measured alone:
//! * [`Config`] chooses branchy or constant-time arithmetic and switches fault hardening on or
//!   off (type-level constants, so the unused path is compiled out);
//! * [`cca`] is the Fujisaki-Okamoto CCA2 wrapper (SHA-256, HKDF, implicit rejection);
//! * [`masked`] is first-order masked CPA decryption (arithmetic key shares, A2B conversion
//!   with ISW AND gadgets; the gadget is hand-written assembly on the Cortex-M33).
//!
//! Files: [`container`] is the self-describing `ZRBL` format for keys and ciphertexts (an
//! 8-byte header naming set, kind and scheme, then the object's bytes).
//!
//! Byte-lane arithmetic: [`arith`] processes as many coefficients per word as the word has
//! bytes (SWAR in a `u64` on 64-bit hosts; `uadd8`/`usub8` on a Cortex-M33 with the DSP
//! extension).
//!
//! No allocation, no panics on outside data, secrets zeroized on drop.
//!
//! ```
//! use rblwe::{cpa, Hardened, EntropyPool, KatEntropy, PublicParameter, Set1};
//!
//! let mut pool: EntropyPool<_, 1024> = EntropyPool::new(KatEntropy::new(b"doc example"));
//! let a = PublicParameter::<Set1>::from_seed(&[7u8; 32]);
//! let (pk, sk) = cpa::keygen::<Set1, Hardened, _, 1024>(&a, &mut pool)?;
//! let message = [0xA5u8; 32];
//! let ct = cpa::encrypt::<Set1, Hardened, _, 1024>(&pk, &message, &mut pool)?;
//! let mut decrypted = [0u8; 32];
//! cpa::decrypt::<Set1, Hardened>(&sk, &ct, &mut decrypted)?;
//! assert_eq!(decrypted, message);
//! # Ok::<(), rblwe::Error>(())
//! ```
#![no_std]
#![deny(unsafe_code)]
#![forbid(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

#[cfg(all(target_arch = "arm", target_feature = "dsp"))]
#[expect(
    unsafe_code,
    reason = "the Cortex-M33 DSP instructions and the assembly ISW gadget: the crate's only \
              unsafe code, each block with its SAFETY argument"
)]
mod arch;
pub mod arith;
pub mod cca;
mod config;
pub mod container;
pub mod cpa;
mod entropy;
mod error;
pub mod fault;
pub mod kat;
pub mod masked;
pub mod params;
pub mod reference;

pub use config::{Branchy, Config, ConstantTime, Countermeasures, Hardened};
pub use cpa::{Ciphertext, PublicKey, PublicParameter, SecretKey};
pub use entropy::{EntropyPool, KatEntropy, REFILL_BYTES};
pub use error::Error;
pub use params::{ByteArray, ParamSet, Set1, Set2, Set3, SetId};

/// Compiles and runs the README's example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

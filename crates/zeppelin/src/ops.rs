//! The client operations: key generation, the three encryption paths, `expand_ct1`,
//! decryption at any level, and noise measurement.

use core::marker::PhantomData;

use rand_core::{CryptoRng, RngCore};
use zeppelin_ring::{ct, ClientKernels, DefaultBackend, Modulus, NttBackend};
use zeroize::Zeroize;

use crate::behz;
use crate::ciphertext::{check_level, Ciphertext, SeededCiphertext};
use crate::error::Error;
use crate::keys::{check_rows, PublicKey, SecretKey};
use crate::params::{level_constants, LevelConstants, Params, RnsStorage, SmallStorage};
use crate::plaintext::Plaintext;
use crate::prng::{
    AesCtr128, ChaCha20, PublicGenerator, PublicKeystream, PublicPrng, PublicSeed, SecretKeystream,
    SecretPrng, SecretSeed,
};
use crate::rows::CoeffRows;
use crate::sampler::{lift_small, sample_gaussian, sample_ternary, sample_uniform};
use crate::wide::Wide;

/// Caller-provided working memory for every operation of preset `P` (`11·n` bytes: 44 KB at
/// `n = 4096`): one polynomial row, one auxiliary row and three small-coefficient
/// polynomials, and the arithmetic backend `B` the operations run on (detected once, when
/// the workspace is made). Operations clear the parts that held secrets before they return;
/// it is also zeroized on drop.
///
/// ```
/// use zeppelin::{Seal4096, Workspace};
/// use zeppelin_ring::{NttBackend, Portable};
/// let ws = Box::new(Workspace::<Seal4096>::new()); // the build's best backend
/// let portable = Box::new(Workspace::<Seal4096, _>::with_backend(Portable)); // forced
/// assert_eq!(portable.backend().name(), "portable");
/// # let _ = ws;
/// ```
pub struct Workspace<P: Params, B: ClientKernels = DefaultBackend> {
    poly: P::Poly,
    aux: P::Poly,
    small: [P::Small; 3],
    backend: B,
}

impl<P: Params> Workspace<P, DefaultBackend> {
    /// A zeroed workspace on the build's default backend ([`zeppelin_ring::default_backend`]:
    /// AVX-512 or AVX2 when the CPU has them, Helium on an MVE build).
    pub fn new() -> Self {
        Self::with_backend(zeppelin_ring::default_backend())
    }
}

impl<P: Params> Default for Workspace<P, DefaultBackend> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Params, B: ClientKernels> Workspace<P, B> {
    /// A zeroed workspace on `backend` (`const`, for `static` initialisers on a device, where
    /// the backend is a zero-sized value such as `Mve` or `Portable`).
    pub const fn with_backend(backend: B) -> Self {
        Self {
            poly: P::Poly::ZERO,
            aux: P::Poly::ZERO,
            small: [P::Small::ZERO, P::Small::ZERO, P::Small::ZERO],
            backend,
        }
    }

    /// The backend the operations run on.
    pub fn backend(&self) -> B {
        self.backend
    }

    // Out of line: the firmware's binary audit checks this wipe under its own symbol.
    #[inline(never)]
    fn clear(&mut self) {
        self.clear_used(Used {
            poly: true,
            aux: true,
            small: self.small.len(),
        });
    }

    /// Wipes the parts an operation left holding secrets. Each operation names what it
    /// wrote with secret data; the parts it did not write are left as they were (zero: the
    /// workspace starts zeroed and every operation wipes what it used), and a part that
    /// ends holding only public data (the mask `â`, the public key's `−p̂0`) is not wiped:
    /// clearing it protects nothing and costs as much as the work on it.
    // Out of line, as `clear`.
    #[inline(never)]
    fn clear_used(&mut self, used: Used) {
        if used.poly {
            self.poly.as_mut().zeroize();
        }
        if used.aux {
            self.aux.as_mut().zeroize();
        }
        for s in self.small.iter_mut().take(used.small) {
            s.as_mut().zeroize();
        }
    }
}

/// What an operation left secret in its [`Workspace`] (public facts about the operation,
/// never about data).
#[derive(Clone, Copy)]
struct Used {
    /// The polynomial row.
    poly: bool,
    /// The auxiliary row.
    aux: bool,
    /// How many of the small polynomials, from the first.
    small: usize,
}

impl<P: Params, B: ClientKernels> Drop for Workspace<P, B> {
    fn drop(&mut self) {
        self.clear();
    }
}

/// Fresh randomness for one encryption: the public seed of `prng_a` and the secret seed of
/// `prng_e`.
#[derive(Clone, Debug)]
pub struct EncryptionSeeds {
    /// Seed of the uniform mask (travels with a seeded ciphertext).
    pub a: PublicSeed,
    /// Seed of the secret/error stream (never leaves the device).
    pub e: SecretSeed,
}

impl EncryptionSeeds {
    /// Draws both seeds from a cryptographic RNG (public seed first).
    pub fn generate<R: RngCore + CryptoRng>(rng: &mut R) -> Self {
        let a = PublicSeed::generate(rng);
        let e = SecretSeed::generate(rng);
        Self { a, e }
    }
}

/// The BFV client for preset `P`, with keystream `A` for `prng_a` and `E` for `prng_e`
/// (both software AES-128-CTR by default). Seeded ciphertexts record `A`'s
/// [`PublicGenerator`]; this client's [`Self::expand_ct1`] and [`Self::decrypt_seeded`] refuse
/// one of another generator with [`Error::GeneratorMismatch`] ([`crate::expand_seeded`] and
/// [`crate::decrypt_seeded`] follow the ciphertext's generator). A zero-sized namespace: all state is in the
/// caller's keys, ciphertexts and [`Workspace`].
///
/// ```
/// use zeppelin::{encoder, Bfv, EncryptionSeeds, Plaintext, PublicSeed, SecretKey,
///                SecretSeed, SeededCiphertext, Seal4096, Workspace};
/// // Large values: on a device these are `static`s; here they live on the heap.
/// let mut sk = Box::new(SecretKey::<Seal4096>::zeroed());
/// let mut ws = Box::new(Workspace::new());
/// let mut ct = Box::new(SeededCiphertext::<Seal4096>::zeroed());
/// let mut plain = Box::new(Plaintext::zeroed());
/// let mut slots = vec![0u32; 4096];
///
/// Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk)?;
/// slots[..3].copy_from_slice(&[17, 42, 65536]);
/// encoder::encode(&slots, &mut plain)?;
/// let seeds = EncryptionSeeds { a: PublicSeed([2; 32]), e: SecretSeed::from_bytes([3; 32]) };
/// Bfv::<Seal4096>::encrypt_seeded_with(&sk, &plain, &seeds, 3, &mut ct, &mut ws)?;
///
/// Bfv::<Seal4096>::decrypt_seeded(&sk, &ct, &mut plain, &mut ws)?;
/// encoder::decode(&plain, &mut slots)?;
/// assert_eq!(&slots[..4], &[17, 42, 65536, 0]);
///
/// // A key that was never generated is refused, not used as s = 0.
/// let empty = Box::new(SecretKey::<Seal4096>::zeroed());
/// assert!(Bfv::<Seal4096>::encrypt_seeded_with(&empty, &plain, &seeds, 3, &mut ct, &mut ws).is_err());
/// # Ok::<(), zeppelin::Error>(())
/// ```
pub struct Bfv<P: Params, A: PublicKeystream = AesCtr128, E: SecretKeystream = AesCtr128> {
    _marker: PhantomData<(P, A, E)>,
}

/// The level constants, or an error for a level outside `1..=K`.
fn constants<P: Params>(level: usize) -> Result<&'static LevelConstants, Error> {
    check_level::<P>(level)?;
    level_constants::<P>(level).ok_or(Error::InvalidLevel { level, max: P::K })
}

/// SEAL's scaled plaintext is `floor((Q·m + floor((t+1)/2)) / t) mod q_i`, computed as
/// `m·[floor(Q/t)]_{q_i} + carry` with `carry = floor((m·(Q mod t) + floor((t+1)/2)) / t)`,
/// which is the same for every prime of the level: this writes it once per encryption into
/// `carry`, without division: Shoup's estimate `floor(m·w'/2^32)` with
/// `w' = floor((Q mod t)·2^32/t)` is the quotient of `m·(Q mod t)` or one below it, and two
/// masked corrections (the estimate's remainder, then the rounding increment) finish it.
/// 32-bit lanes only, so the loop vectorises (the u64 Barrett reduction it replaces did
/// not, and cost about 5 µs per encryption at n = 4096 on x86-64).
// Out of line: the firmware's binary audit checks it under its own symbol.
#[inline(never)]
fn plain_carry<P: Params>(lc: &LevelConstants, plain: &[u32], carry: &mut [u32]) {
    let t = P::plain();
    let tv = t.modulus.value();
    let (w, w_shoup) = (lc.q_mod_t, lc.q_mod_t_shoup);
    for (c, &m) in carry.iter_mut().zip(plain) {
        let estimate = ((m as u64 * w_shoup as u64) >> 32) as u32;
        // m·w − estimate·t lies in [0, 2t) (m, w < t < 2^17), so the wrapping difference is it;
        // every sum below stays under 2^31, so a top bit is a borrow.
        let r = m.wrapping_mul(w).wrapping_sub(estimate.wrapping_mul(tv));
        let d = r.wrapping_sub(tv);
        let low = d.wrapping_add(tv & ct::mask_from_msb(d));
        let d_half = (low + t.half_up).wrapping_sub(tv);
        // estimate + [r >= t] + [low + half_up >= t]
        *c = estimate + 2 - (d >> 31) - (d_half >> 31);
    }
}

/// `v mod q` for a small signed value, branch-free.
#[inline(always)]
fn small_mod(q: u32, s: i8) -> u32 {
    let v = s as i32 as u32;
    v.wrapping_add(q & ct::mask_from_msb(v))
}

impl<P: Params, A: PublicKeystream, E: SecretKeystream> Bfv<P, A, E> {
    // ----- key generation -------------------------------------------------------------

    /// Generates the secret key from an explicit secret seed: `s` ternary from `prng_e`
    /// (`4n` keystream bytes), then `ŝ` per data prime.
    pub fn generate_secret_key_with(seed: &SecretSeed, sk: &mut SecretKey<P>) -> Result<(), Error> {
        let mut prng = SecretPrng::<E>::new(seed);
        sample_ternary(&mut prng, sk.ternary_mut());
        sk.refresh_ntt()
    }

    /// Generates the secret key with a fresh seed from `rng`.
    pub fn generate_secret_key<R: RngCore + CryptoRng>(
        rng: &mut R,
        sk: &mut SecretKey<P>,
    ) -> Result<(), Error> {
        Self::generate_secret_key_with(&SecretSeed::generate(rng), sk)
    }

    /// Generates the public key from explicit seeds: `â` sampled directly in the evaluation
    /// domain from `prng_a(seed_a)` (prime after prime), `e` Gaussian from `prng_e(seed_e)`,
    /// `p̂0 = −(â ⊙ ŝ + NTT(e))`, `p̂1 = â`.
    pub fn generate_public_key_with<B: ClientKernels>(
        sk: &SecretKey<P>,
        seed_a: &PublicSeed,
        seed_e: &SecretSeed,
        pk: &mut PublicKey<P>,
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        let ntt = ws.backend;
        // One PRNG state at a time keeps the stack small: the secret stream is used up
        // (and zeroized) before the public one starts.
        sk.check_set()?;
        sample_gaussian(
            &mut SecretPrng::<E>::new(seed_e),
            ws.small[0].as_mut(),
            &ntt,
        );
        let (p0, p1) = pk.parts_mut();
        {
            // Every prime's `â` first (prime after prime): the public PRNG's state is dropped
            // before any transform runs, so its frame and the NTT's never add up.
            let mut prng_a = PublicPrng::<A>::new(seed_a);
            for (i, table) in P::ntt_tables().iter().enumerate() {
                let a_hat = &mut p1[i * P::N..(i + 1) * P::N];
                sample_uniform(&mut prng_a, table.modulus(), a_hat, &ntt);
            }
        }
        let poly = ws.poly.as_mut();
        for (i, table) in P::ntt_tables().iter().enumerate() {
            let q = table.modulus();
            let rows = i * P::N..(i + 1) * P::N;
            let a_hat = &p1[rows.clone()];
            lift_small(q, ws.small[0].as_ref(), poly);
            ntt.forward(&table.view(), poly)?;
            let s_hat = &sk.ntt_residues()[rows.clone()];
            ntt.pointwise_mul_add(q, a_hat, s_hat, poly)?;
            for (o, &x) in p0[rows].iter_mut().zip(poly.iter()) {
                *o = q.neg(x);
            }
        }
        pk.mark_generated(A::GENERATOR, *seed_a);
        // `e` was secret; `poly` ends holding `â ⊙ ŝ + NTT(e)` = −p̂0 of the last prime (public).
        ws.clear_used(Used {
            poly: false,
            aux: false,
            small: 1,
        });
        Ok(())
    }

    /// Generates the public key with fresh seeds from `rng` (public seed first).
    pub fn generate_public_key<B: ClientKernels, R: RngCore + CryptoRng>(
        sk: &SecretKey<P>,
        rng: &mut R,
        pk: &mut PublicKey<P>,
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        let seed_a = PublicSeed::generate(rng);
        let seed_e = SecretSeed::generate(rng);
        Self::generate_public_key_with(sk, &seed_a, &seed_e, pk, ws)
    }

    // ----- encryption -----------------------------------------------------------------

    /// Seeded symmetric encryption at `level` with explicit seeds: per prime, `â` is sampled
    /// directly in the evaluation domain (no forward NTT), and
    /// `c0 = Δm − INTT(â ⊙ ŝ) − e` with SEAL's rounding of `Δm`. `plain` holds coefficients
    /// `< t` (see [`crate::encoder::encode`]). Only `c0` and `seeds.a` are kept.
    pub fn encrypt_seeded_with<B: ClientKernels>(
        sk: &SecretKey<P>,
        plain: &Plaintext<P>,
        seeds: &EncryptionSeeds,
        level: usize,
        out: &mut SeededCiphertext<P>,
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        sk.check_set()?;
        let lc = constants::<P>(level)?;
        let c0 = out.c0_mut(level, A::GENERATOR, seeds.a)?;
        Self::symmetric_c0(sk, plain, seeds, level, lc, c0, None, ws)
    }

    /// Seeded symmetric encryption at the full level with fresh seeds from `rng`.
    pub fn encrypt_seeded<B: ClientKernels, R: RngCore + CryptoRng>(
        sk: &SecretKey<P>,
        plain: &Plaintext<P>,
        rng: &mut R,
        out: &mut SeededCiphertext<P>,
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        Self::encrypt_seeded_with(sk, plain, &EncryptionSeeds::generate(rng), P::K, out, ws)
    }

    /// Classic symmetric encryption at `level` with explicit seeds: `a` uniform in the
    /// coefficient domain from `prng_a`, `c1 = a`, `c0 = Δm − a·s − e`.
    pub fn encrypt_symmetric_with<B: ClientKernels>(
        sk: &SecretKey<P>,
        plain: &Plaintext<P>,
        seeds: &EncryptionSeeds,
        level: usize,
        out: &mut Ciphertext<P>,
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        sk.check_set()?;
        let lc = constants::<P>(level)?;
        let (c0, c1) = out.rows_mut(level)?;
        Self::symmetric_c0(sk, plain, seeds, level, lc, c0, Some(c1), ws)
    }

    /// The part both symmetric encryptions share, at `level`: `e` Gaussian from
    /// `prng_e(seeds.e)`, then per prime `c0 = Δm − INTT(â ⊙ ŝ) − e` with `â` from
    /// `prng_a(seeds.a)`: sampled straight in the evaluation domain when `c1` is `None` (the
    /// seeded form), or sampled as `a` in the coefficient domain into `c1` and transformed
    /// (the classic form).
    #[expect(
        clippy::too_many_arguments,
        reason = "inlined helper: key, plaintext, seeds, level, its constants, both output rows and the workspace"
    )]
    #[inline(always)]
    fn symmetric_c0<B: ClientKernels>(
        sk: &SecretKey<P>,
        plain: &Plaintext<P>,
        seeds: &EncryptionSeeds,
        level: usize,
        lc: &LevelConstants,
        c0: &mut [u32],
        mut c1: Option<&mut [u32]>,
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        let ntt = ws.backend;
        // One PRNG state at a time keeps the stack small (the secret one is dropped first).
        sample_gaussian(
            &mut SecretPrng::<E>::new(&seeds.e),
            ws.small[0].as_mut(),
            &ntt,
        );
        // Every prime's mask first, straight into the output rows (`â` into `c0` for the
        // seeded form, `a` into `c1` for the classic one), prime after prime as before: the
        // public PRNG's state is dropped before any transform runs, so its frame and the
        // NTT's never add up, and no workspace row is needed for the mask.
        {
            let mut prng_a = PublicPrng::<A>::new(&seeds.a);
            let masks: &mut [u32] = match c1.as_deref_mut() {
                None => c0,
                Some(c1) => c1,
            };
            for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
                let row = &mut masks[i * P::N..(i + 1) * P::N];
                sample_uniform(&mut prng_a, table.modulus(), row, &ntt);
            }
        }
        let carry = ws.aux.as_mut();
        plain_carry::<P>(lc, plain.coeffs(), carry);
        // Index loops rather than `chunks_exact` zips: no division, even on public lengths.
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            let rows = i * P::N..(i + 1) * P::N;
            let q = table.modulus();
            let row = &mut c0[rows.clone()];
            if let Some(c1) = c1.as_deref() {
                row.copy_from_slice(&c1[rows.clone()]);
                ntt.forward(&table.view(), row)?;
            }
            // `row` holds `â`: `â ⊙ ŝ` in place, then back to coefficients.
            ntt.pointwise_mul_assign(q, row, &sk.ntt_residues()[rows])?;
            ntt.inverse(&table.view(), row)?;
            let error = ws.small[0].as_ref();
            finish_c0(&ntt, q, lc, i, plain.coeffs(), carry, error, row, true)?;
        }
        // `e` and the message's carry were secret; the polynomial row was not used.
        ws.clear_used(Used {
            poly: false,
            aux: true,
            small: 1,
        });
        Ok(())
    }

    /// Classic symmetric encryption at the full level with fresh seeds from `rng`.
    pub fn encrypt_symmetric<B: ClientKernels, R: RngCore + CryptoRng>(
        sk: &SecretKey<P>,
        plain: &Plaintext<P>,
        rng: &mut R,
        out: &mut Ciphertext<P>,
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        Self::encrypt_symmetric_with(sk, plain, &EncryptionSeeds::generate(rng), P::K, out, ws)
    }

    /// Public-key encryption at `level` with an explicit secret seed: `u` ternary, then
    /// `e1`, `e2` Gaussian, all from `prng_e`; per prime `û = NTT(u)`,
    /// `c0 = INTT(p̂0 ⊙ û) + e1 + Δm`, `c1 = INTT(p̂1 ⊙ û) + e2`.
    pub fn encrypt_public_with<B: ClientKernels>(
        pk: &PublicKey<P>,
        plain: &Plaintext<P>,
        seed_e: &SecretSeed,
        level: usize,
        out: &mut Ciphertext<P>,
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        let ntt = ws.backend;
        pk.check_set()?;
        let lc = constants::<P>(level)?;
        let (c0, c1) = out.rows_mut(level)?;
        let [u, e1, e2] = &mut ws.small;
        let (u, e1, e2) = (u.as_mut(), e1.as_mut(), e2.as_mut());
        {
            // Dropped (and zeroized) before the transforms: its frame and the NTT's never
            // add up on the stack.
            let mut prng_e = SecretPrng::<E>::new(seed_e);
            sample_ternary(&mut prng_e, u);
            sample_gaussian(&mut prng_e, e1, &ntt);
            sample_gaussian(&mut prng_e, e2, &ntt);
        }
        let poly = ws.poly.as_mut();
        let carry = ws.aux.as_mut();
        plain_carry::<P>(lc, plain.coeffs(), carry);
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            let rows = i * P::N..(i + 1) * P::N;
            let row0 = &mut c0[rows.clone()];
            let row1 = &mut c1[rows.clone()];
            let q = table.modulus();
            lift_small(q, u, poly);
            ntt.forward(&table.view(), poly)?;
            ntt.pointwise_mul(q, &pk.p0()[rows.clone()], poly, row0)?;
            ntt.inverse(&table.view(), row0)?;
            finish_c0(&ntt, q, lc, i, plain.coeffs(), carry, e1, row0, false)?;
            ntt.pointwise_mul(q, &pk.p1()[rows], poly, row1)?;
            ntt.inverse(&table.view(), row1)?;
            let qv = q.value();
            for (x, &e) in row1.iter_mut().zip(e2.iter()) {
                *x = q.add(*x, small_mod(qv, e));
            }
        }
        ws.clear_used(Used {
            poly: true,
            aux: true,
            small: 3,
        });
        Ok(())
    }

    /// Public-key encryption at the full level with a fresh secret seed from `rng`.
    pub fn encrypt_public<B: ClientKernels, R: RngCore + CryptoRng>(
        pk: &PublicKey<P>,
        plain: &Plaintext<P>,
        rng: &mut R,
        out: &mut Ciphertext<P>,
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        Self::encrypt_public_with(pk, plain, &SecretSeed::generate(rng), P::K, out, ws)
    }

    // ----- expansion ------------------------------------------------------------------

    /// Rebuilds `c1 = INTT(â)` of a seeded ciphertext at `level` into `c1` (`level·n`
    /// residues), bit for bit as the encrypting side sampled `â`.
    pub fn expand_c1_rows(seed: &PublicSeed, level: usize, c1: &mut [u32]) -> Result<(), Error> {
        let ntt = zeppelin_ring::default_backend();
        check_level::<P>(level)?;
        if c1.len() != level * P::N {
            return Err(Error::LengthMismatch {
                expected: level * P::N,
                found: c1.len(),
            });
        }
        Self::expand_c1_ntt_rows(seed, level, c1)?;
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            ntt.inverse(&table.view(), &mut c1[i * P::N..(i + 1) * P::N])?;
        }
        Ok(())
    }

    /// The NTT form `â` of a seeded ciphertext's `c1` at `level` into `c1_ntt` (`level·n`
    /// residues): the seed's expansion itself, before [`Self::expand_c1_rows`]'s inverse
    /// transform. What a server that adds seeded uploads needs: `Σ c1 = INTT(Σ â)`, one
    /// inverse transform per sum instead of one per upload.
    pub fn expand_c1_ntt_rows(
        seed: &PublicSeed,
        level: usize,
        c1_ntt: &mut [u32],
    ) -> Result<(), Error> {
        let ntt = zeppelin_ring::default_backend();
        check_level::<P>(level)?;
        if c1_ntt.len() != level * P::N {
            return Err(Error::LengthMismatch {
                expected: level * P::N,
                found: c1_ntt.len(),
            });
        }
        let mut prng_a = PublicPrng::<A>::new(seed);
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            let row = &mut c1_ntt[i * P::N..(i + 1) * P::N];
            sample_uniform(&mut prng_a, table.modulus(), row, &ntt);
        }
        Ok(())
    }

    /// `expand_ct1`: the full ciphertext `(c0, INTT(â))` of a seeded one made with this
    /// client's public generator (else [`Error::GeneratorMismatch`], `out` unchanged).
    pub fn expand_ct1(seeded: &SeededCiphertext<P>, out: &mut Ciphertext<P>) -> Result<(), Error> {
        Self::check_generator(seeded)?;
        let (c0, c1) = out.rows_mut(seeded.level())?;
        c0.copy_from_slice(&seeded.c0());
        Self::expand_c1_rows(seeded.seed(), seeded.level(), c1)
    }

    // ----- decryption -----------------------------------------------------------------

    /// Decrypts a full ciphertext into `plain`.
    pub fn decrypt<B: ClientKernels>(
        sk: &SecretKey<P>,
        ct: &Ciphertext<P>,
        plain: &mut Plaintext<P>,
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        Self::decrypt_rows(sk, ct.level(), ct.c0(), ct.c1(), plain, ws)
    }

    /// Decrypts a ciphertext given as borrowed coefficient rows at `level` (`c0` and `c1`
    /// each `level·n` residues, prime-major, coefficient form — for example straight from a
    /// parsed SEAL ciphertext after modulus switching). Every residue is checked first.
    ///
    /// `m = round(t·X/Q) mod t` for `X = c0 + c1·s mod Q`, by BEHZ with `γ = 2^31` (paper
    /// Section 4.8): prime by prime, `y_i = [x_i·γt·(Q/q_i)^-1]_{q_i}` is folded into two
    /// accumulators mod `t` and mod `γ`, then per coefficient
    /// `m = (z_t − centred(z_γ))·γ^-1 mod t` with `z = acc·(−Q^-1)`. No division, no
    /// branch on data, 32×32→64-bit products only. Exact while `t·X mod Q` keeps a distance
    /// of more than `(L+1)·Q/γ` from `±Q/2` (`L` the level: `L` fractional parts and the
    /// final rounding).
    pub fn decrypt_rows<B: ClientKernels>(
        sk: &SecretKey<P>,
        level: usize,
        c0: CoeffRows<'_>,
        c1: CoeffRows<'_>,
        plain: &mut Plaintext<P>,
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        let ntt = ws.backend;
        sk.check_set()?;
        let lc = constants::<P>(level)?;
        check_rows::<P>(level, &c0, 0)?;
        check_rows::<P>(level, &c1, 1)?;
        let acc_t = plain.coeffs_mut();
        acc_t.fill(0);
        ws.aux.as_mut().fill(0);
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            let rows = i * P::N..(i + 1) * P::N;
            let poly = ws.poly.as_mut();
            poly.copy_from_slice(&c1[rows.clone()]);
            ntt.forward(&table.view(), poly)?;
            Self::accumulate_prime(sk, lc, i, &c0[rows], acc_t, ws)?;
        }
        behz::finish::<P, B>(&ntt, lc, acc_t, ws.aux.as_ref())?;
        ws.clear_used(Used {
            poly: true,
            aux: true,
            small: 0,
        });
        Ok(())
    }

    /// [`Error::GeneratorMismatch`] unless `seeded` was made with `A`'s generator.
    fn check_generator(seeded: &SeededCiphertext<P>) -> Result<(), Error> {
        if seeded.generator() == A::GENERATOR {
            Ok(())
        } else {
            Err(Error::GeneratorMismatch {
                ciphertext: seeded.generator(),
                expander: A::GENERATOR,
            })
        }
    }

    /// Decrypts a seeded ciphertext directly: `ĉ1 = â` is sampled from the seed in the
    /// evaluation domain, so no NTT of `c1` is needed. Equal to decrypting
    /// [`Self::expand_ct1`]'s output. A ciphertext of another public generator is refused
    /// ([`Error::GeneratorMismatch`]).
    pub fn decrypt_seeded<B: ClientKernels>(
        sk: &SecretKey<P>,
        ct: &SeededCiphertext<P>,
        plain: &mut Plaintext<P>,
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        let ntt = ws.backend;
        sk.check_set()?;
        Self::check_generator(ct)?;
        let level = ct.level();
        let lc = constants::<P>(level)?;
        check_rows::<P>(level, &ct.c0(), 0)?;
        let acc_t = plain.coeffs_mut();
        acc_t.fill(0);
        ws.aux.as_mut().fill(0);
        let mut prng_a = PublicPrng::<A>::new(ct.seed());
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            sample_uniform(&mut prng_a, table.modulus(), ws.poly.as_mut(), &ntt);
            let c0 = &ct.c0()[i * P::N..(i + 1) * P::N];
            Self::accumulate_prime(sk, lc, i, c0, acc_t, ws)?;
        }
        behz::finish::<P, B>(&ntt, lc, acc_t, ws.aux.as_ref())?;
        ws.clear_used(Used {
            poly: true,
            aux: true,
            small: 0,
        });
        Ok(())
    }

    /// With `ĉ1` of prime `i` in `ws.poly`: `x = c0 + INTT(ĉ1 ⊙ ŝ)`, then the BEHZ terms of
    /// prime `i` added to `acc_t` (in `plain`) and `acc_γ` (in `ws.aux`).
    fn accumulate_prime<B: ClientKernels>(
        sk: &SecretKey<P>,
        lc: &LevelConstants,
        i: usize,
        c0: &[u32],
        acc_t: &mut [u32],
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        let ntt = ws.backend;
        let table = &P::ntt_tables()[i];
        let q = table.modulus();
        let poly = ws.poly.as_mut();
        ntt.pointwise_mul_assign(q, poly, &sk.ntt_residues()[i * P::N..(i + 1) * P::N])?;
        ntt.inverse(&table.view(), poly)?;
        behz::accumulate::<P, B>(&ntt, q, lc, i, poly, c0, acc_t, ws.aux.as_mut())
    }

    // ----- noise ----------------------------------------------------------------------

    /// SEAL's invariant noise budget in bits of a full ciphertext:
    /// `max(0, bits(Q) − bits(‖[t·X]_Q‖∞) − 1)` with `X = c0 + c1·s mod Q` and the norm over
    /// centred representatives (fixed-size 256-bit arithmetic). `x_rows`
    /// (`level·n` words) receives the rows of `X`. A diagnostic for tests and tools: it is
    /// not constant time.
    pub fn noise_budget<B: ClientKernels>(
        sk: &SecretKey<P>,
        ct: &Ciphertext<P>,
        x_rows: &mut [u32],
        ws: &mut Workspace<P, B>,
    ) -> Result<u32, Error> {
        Self::noise_budget_rows(sk, ct.level(), ct.c0(), ct.c1(), x_rows, ws)
    }

    /// [`Self::noise_budget`] of a ciphertext given as borrowed rows at `level`.
    pub fn noise_budget_rows<B: ClientKernels>(
        sk: &SecretKey<P>,
        level: usize,
        c0: CoeffRows<'_>,
        c1: CoeffRows<'_>,
        x_rows: &mut [u32],
        ws: &mut Workspace<P, B>,
    ) -> Result<u32, Error> {
        let lc = constants::<P>(level)?;
        Self::decryption_residues(sk, level, c0, c1, x_rows, ws)?;
        let primes = &P::DATA_PRIMES[..level];
        let q_big = primes.iter().fold(Wide::ONE, |acc, &q| acc.mul_u32(q));
        // Q/q_i as products of the other primes.
        let mut q_hats = [Wide::ZERO; crate::params::MAX_PRIMES];
        for (i, hat) in q_hats.iter_mut().take(level).enumerate() {
            *hat = primes
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .fold(Wide::ONE, |acc, (_, &q)| acc.mul_u32(q));
        }
        let mut norm_bits = 0;
        for j in 0..P::N {
            // CRT: x = Σ [x_i·(Q/q_i)^-1]_{q_i} · Q/q_i mod Q, each term below Q.
            let mut x = Wide::ZERO;
            for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
                let m = table.modulus();
                let term = m.mul(x_rows[i * P::N + j], lc.qhat_inv[i]);
                x = x.add(q_hats[i].mul_u32(term).reduce(&q_big)).reduce(&q_big);
            }
            let v = x.mul_mod(P::T, &q_big);
            // The centred representative: Q − v when 2v > Q (Q is odd).
            let centred = if v.add(v).cmp(&q_big) == core::cmp::Ordering::Greater {
                q_big.sub(v)
            } else {
                v
            };
            norm_bits = norm_bits.max(centred.bits());
        }
        Ok(lc.q_bits.saturating_sub(norm_bits + 1))
    }

    /// The residues of `X = c0 + c1·s` at `level` into `x_rows` (`level·n` words, prime-major).
    pub fn decryption_residues<B: ClientKernels>(
        sk: &SecretKey<P>,
        level: usize,
        c0: CoeffRows<'_>,
        c1: CoeffRows<'_>,
        x_rows: &mut [u32],
        ws: &mut Workspace<P, B>,
    ) -> Result<(), Error> {
        let ntt = ws.backend;
        sk.check_set()?;
        check_level::<P>(level)?;
        check_rows::<P>(level, &c0, 0)?;
        check_rows::<P>(level, &c1, 1)?;
        if x_rows.len() != level * P::N {
            return Err(Error::LengthMismatch {
                expected: level * P::N,
                found: x_rows.len(),
            });
        }
        let poly = ws.poly.as_mut();
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            let rows = i * P::N..(i + 1) * P::N;
            let out = &mut x_rows[rows.clone()];
            let q = table.modulus();
            poly.copy_from_slice(&c1[rows.clone()]);
            ntt.forward(&table.view(), poly)?;
            ntt.pointwise_mul_assign(q, poly, &sk.ntt_residues()[rows.clone()])?;
            ntt.inverse(&table.view(), poly)?;
            for ((o, &x), &c) in out.iter_mut().zip(poly.iter()).zip(&c0[rows]) {
                *o = q.add(x, c);
            }
        }
        ws.clear_used(Used {
            poly: true,
            aux: false,
            small: 0,
        });
        Ok(())
    }
}

/// `expand_ct1` with the public generator the seeded ciphertext records (either built-in
/// software generator: [`AesCtr128`], or [`ChaCha20`] on the portable kernel), as a server or
/// host tool that receives ciphertexts from devices of either kind needs it.
///
/// ```
/// use zeppelin::{Bfv, ChaCha20, Ciphertext, EncryptionSeeds, Plaintext, PublicGenerator, PublicSeed,
///                SecretKey, SecretSeed, SeededCiphertext, Seal4096, Workspace};
/// let mut sk = Box::new(SecretKey::<Seal4096>::zeroed());
/// Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk)?;
/// let (plain, mut ws) = (Box::new(Plaintext::zeroed()), Box::new(Workspace::new()));
/// let seeds = EncryptionSeeds { a: PublicSeed([2; 32]), e: SecretSeed::from_bytes([3; 32]) };
/// // A device with the ChaCha20 public stream.
/// type Device = Bfv<Seal4096, ChaCha20, ChaCha20>;
/// let mut seeded = Box::new(SeededCiphertext::<Seal4096>::zeroed());
/// Device::encrypt_seeded_with(&sk, &plain, &seeds, 3, &mut seeded, &mut ws)?;
/// assert_eq!(seeded.generator(), PublicGenerator::ChaCha20);
///
/// let mut full = Box::new(Ciphertext::<Seal4096>::zeroed());
/// zeppelin::expand_seeded(&seeded, &mut full)?;
/// // The AES-CTR client refuses it rather than expand the wrong mask.
/// assert!(Bfv::<Seal4096>::expand_ct1(&seeded, &mut full).is_err());
/// # Ok::<(), zeppelin::Error>(())
/// ```
pub fn expand_seeded<P: Params>(
    seeded: &SeededCiphertext<P>,
    out: &mut Ciphertext<P>,
) -> Result<(), Error> {
    match seeded.generator() {
        PublicGenerator::AesCtr128 => Bfv::<P, AesCtr128>::expand_ct1(seeded, out),
        PublicGenerator::ChaCha20 => Bfv::<P, ChaCha20>::expand_ct1(seeded, out),
    }
}

/// [`Bfv::expand_c1_ntt_rows`] with the public generator the seeded ciphertext records: its
/// `c1` in NTT form (`level·n` residues in `c1_ntt`, `level` the ciphertext's).
pub fn expand_seeded_ntt<P: Params>(
    seeded: &SeededCiphertext<P>,
    c1_ntt: &mut [u32],
) -> Result<(), Error> {
    let (seed, level) = (seeded.seed(), seeded.level());
    match seeded.generator() {
        PublicGenerator::AesCtr128 => Bfv::<P, AesCtr128>::expand_c1_ntt_rows(seed, level, c1_ntt),
        PublicGenerator::ChaCha20 => Bfv::<P, ChaCha20>::expand_c1_ntt_rows(seed, level, c1_ntt),
    }
}

/// [`Bfv::decrypt_seeded`] with the public generator the seeded ciphertext records (see
/// [`expand_seeded`]); the secret stream plays no part in decryption.
pub fn decrypt_seeded<P: Params, B: ClientKernels>(
    sk: &SecretKey<P>,
    ct: &SeededCiphertext<P>,
    plain: &mut Plaintext<P>,
    ws: &mut Workspace<P, B>,
) -> Result<(), Error> {
    match ct.generator() {
        PublicGenerator::AesCtr128 => Bfv::<P, AesCtr128>::decrypt_seeded(sk, ct, plain, ws),
        PublicGenerator::ChaCha20 => Bfv::<P, ChaCha20>::decrypt_seeded(sk, ct, plain, ws),
    }
}

/// Adds `Δm` and subtracts (`negate_error`) or adds the small error to a `c0` row that holds
/// `INTT(â ⊙ ŝ)` (symmetric: `c0 = Δm − a·s − e`) or `INTT(p̂0 ⊙ û)` (public:
/// `c0 = p0·u + e1 + Δm`), with the rounding carry of [`plain_carry`], on the backend.
#[expect(
    clippy::too_many_arguments,
    reason = "the rows and constants of one prime's finish, as the kernel takes them"
)]
fn finish_c0<B: ClientKernels>(
    ntt: &B,
    q: &Modulus,
    lc: &LevelConstants,
    i: usize,
    plain: &[u32],
    carry: &[u32],
    error: &[i8],
    row: &mut [u32],
    negate_error: bool,
) -> Result<(), Error> {
    ntt.encrypt_finish(q, lc.delta_mont[i], plain, carry, error, row, negate_error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{level_constants, Seal4096, Seal8192, Zeppelin4096};

    /// The carry for every message value and every level of each preset, against the
    /// definition `floor((m·(Q mod t) + floor((t+1)/2)) / t)` computed with a division.
    fn carry_matches_its_definition<P: Params>() {
        let t = P::T;
        let (mut plain, mut carry) = ([0u32; 1024], [0u32; 1024]);
        for level in 1..=P::K {
            let lc = level_constants::<P>(level).expect("a preset level");
            for first in (0..t).step_by(plain.len()) {
                let count = plain.len().min((t - first) as usize);
                for (k, m) in plain[..count].iter_mut().enumerate() {
                    *m = first + k as u32;
                }
                plain_carry::<P>(lc, &plain[..count], &mut carry[..count]);
                for (&m, &c) in plain[..count].iter().zip(&carry) {
                    let x = m as u64 * lc.q_mod_t as u64 + t.div_ceil(2) as u64;
                    assert_eq!(c as u64, x / t as u64, "m = {m}, level {level}");
                }
            }
        }
    }

    #[test]
    fn plain_carry_matches_its_definition_for_every_message() {
        carry_matches_its_definition::<Seal4096>();
        carry_matches_its_definition::<Zeppelin4096>();
        carry_matches_its_definition::<Seal8192>();
    }
}

//! The client operations: key generation, the three encryption paths, `expand_ct1`,
//! decryption at any level, and noise measurement.

use core::marker::PhantomData;

use rand_core::{CryptoRng, RngCore};
use zeppelin_ring::{ct, default_backend, Modulus, NttBackend};
use zeroize::Zeroize;

use crate::behz;
use crate::ciphertext::{check_level, Ciphertext, SeededCiphertext};
use crate::encoder::check_below_t;
use crate::error::Error;
use crate::keys::{check_rows, PublicKey, SecretKey};
use crate::params::{
    level_constants, LevelConstants, Params, N, T, T_HALF_UP, T_INV_MOD_2_32, T_MODULUS,
};
use crate::prng::{AesCtr128, Keystream, PublicPrng, PublicSeed, SecretPrng, SecretSeed};
use crate::sampler::{lift_small, sample_gaussian, sample_ternary, sample_uniform};

/// Caller-provided working memory for every operation (about 44 KB): one polynomial row,
/// one auxiliary row and three small-coefficient polynomials. Operations clear the parts
/// that held secrets before they return; it is also zeroized on drop.
pub struct Workspace {
    poly: [u32; N],
    aux: [u32; N],
    small: [[i8; N]; 3],
}

impl Workspace {
    /// A zeroed workspace (`const`, for `static` initialisers).
    pub const fn zeroed() -> Self {
        Self {
            poly: [0; N],
            aux: [0; N],
            small: [[0; N]; 3],
        }
    }

    fn clear(&mut self) {
        self.poly.zeroize();
        self.aux.zeroize();
        for s in self.small.iter_mut() {
            s.zeroize();
        }
    }
}

impl Drop for Workspace {
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
/// (both software AES-128-CTR by default). A zero-sized namespace: all state is in the
/// caller's keys, ciphertexts and [`Workspace`].
///
/// ```
/// use zeppelin::{encoder, Bfv, Ciphertext, EncryptionSeeds, PublicSeed, SecretKey,
///                SecretSeed, SeededCiphertext, Seal4096, Workspace};
/// // Large values: on a device these are `static`s; here they live on the heap.
/// let mut sk = Box::new(SecretKey::<Seal4096>::zeroed());
/// let mut ws = Box::new(Workspace::zeroed());
/// let mut ct = Box::new(SeededCiphertext::<Seal4096>::zeroed());
/// let (mut slots, mut plain) = (Box::new([0u32; 4096]), Box::new([0u32; 4096]));
///
/// Bfv::<Seal4096>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk).unwrap();
/// slots[..3].copy_from_slice(&[17, 42, 65536]);
/// encoder::encode(&slots, &mut plain).unwrap();
/// let seeds = EncryptionSeeds { a: PublicSeed([2; 32]), e: SecretSeed::from_bytes([3; 32]) };
/// Bfv::<Seal4096>::encrypt_seeded_with(&sk, &plain, &seeds, 3, &mut ct, &mut ws).unwrap();
///
/// Bfv::<Seal4096>::decrypt_seeded(&sk, &ct, &mut plain, &mut ws).unwrap();
/// encoder::decode(&plain, &mut slots).unwrap();
/// assert_eq!(&slots[..4], &[17, 42, 65536, 0]);
/// ```
pub struct Bfv<P: Params, A: Keystream = AesCtr128, E: Keystream = AesCtr128> {
    _marker: PhantomData<(P, A, E)>,
}

/// The level constants, or an error for a level outside `1..=K`.
fn constants<P: Params>(level: usize) -> Result<&'static LevelConstants, Error> {
    check_level::<P>(level)?;
    level_constants::<P>(level).ok_or(Error::InvalidLevel { level, max: P::K })
}

/// SEAL's scaled plaintext `floor((Q·m + floor((t+1)/2)) / t) mod q_i`, computed as
/// `m·[floor(Q/t)]_{q_i} + floor((m·(Q mod t) + floor((t+1)/2)) / t)`, without division:
/// the remainder comes from the Montgomery/Barrett reduction mod `t`, and the exact quotient
/// of a multiple of `t` is a multiplication by `t^-1 mod 2^32`.
#[inline(always)]
fn scaled_plain(q: &Modulus, lc: &LevelConstants, i: usize, m: u32) -> u32 {
    let x = m as u64 * lc.q_mod_t as u64 + T_HALF_UP as u64;
    let r = T_MODULUS.reduce_u64(x);
    // (x − r) is a multiple of t; its quotient is below 2^17, so 32-bit arithmetic is exact.
    let fix = ((x - r as u64) as u32).wrapping_mul(T_INV_MOD_2_32);
    q.add(q.mul_mont_constant(m, lc.delta_mont[i]), fix)
}

/// `v mod q` for a small signed value, branch-free.
#[inline(always)]
fn small_mod(q: u32, s: i8) -> u32 {
    let v = s as i32 as u32;
    v.wrapping_add(q & ct::mask_from_msb(v))
}

impl<P: Params, A: Keystream, E: Keystream> Bfv<P, A, E> {
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
    pub fn generate_public_key_with(
        sk: &SecretKey<P>,
        seed_a: &PublicSeed,
        seed_e: &SecretSeed,
        pk: &mut PublicKey<P>,
        ws: &mut Workspace,
    ) -> Result<(), Error> {
        // One PRNG state at a time keeps the stack small: the secret stream is used up
        // (and zeroized) before the public one starts.
        sample_gaussian(&mut SecretPrng::<E>::new(seed_e), &mut ws.small[0]);
        let mut prng_a = PublicPrng::<A>::new(seed_a);
        let (p0, p1) = pk.parts_mut();
        for (i, table) in P::ntt_tables().iter().enumerate() {
            let q = table.modulus();
            let rows = i * N..(i + 1) * N;
            let a_hat = &mut p1[rows.clone()];
            sample_uniform(&mut prng_a, q, a_hat);
            lift_small(q, &ws.small[0], &mut ws.poly);
            default_backend().forward(&table.view(), &mut ws.poly)?;
            let s_hat = &sk.ntt_residues()[rows.clone()];
            default_backend().pointwise_mul_add(q, a_hat, s_hat, &mut ws.poly)?;
            for (o, &x) in p0[rows].iter_mut().zip(ws.poly.iter()) {
                *o = q.neg(x);
            }
        }
        pk.set_seed(Some(*seed_a));
        ws.clear();
        Ok(())
    }

    /// Generates the public key with fresh seeds from `rng` (public seed first).
    pub fn generate_public_key<R: RngCore + CryptoRng>(
        sk: &SecretKey<P>,
        rng: &mut R,
        pk: &mut PublicKey<P>,
        ws: &mut Workspace,
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
    pub fn encrypt_seeded_with(
        sk: &SecretKey<P>,
        plain: &[u32; N],
        seeds: &EncryptionSeeds,
        level: usize,
        out: &mut SeededCiphertext<P>,
        ws: &mut Workspace,
    ) -> Result<(), Error> {
        let lc = constants::<P>(level)?;
        check_below_t(plain)?;
        let c0 = out.c0_mut(level, seeds.a)?;
        Self::symmetric_c0(sk, plain, seeds, level, lc, c0, None, ws)
    }

    /// Seeded symmetric encryption at the full level with fresh seeds from `rng`.
    pub fn encrypt_seeded<R: RngCore + CryptoRng>(
        sk: &SecretKey<P>,
        plain: &[u32; N],
        rng: &mut R,
        out: &mut SeededCiphertext<P>,
        ws: &mut Workspace,
    ) -> Result<(), Error> {
        Self::encrypt_seeded_with(sk, plain, &EncryptionSeeds::generate(rng), P::K, out, ws)
    }

    /// Classic symmetric encryption at `level` with explicit seeds: `a` uniform in the
    /// coefficient domain from `prng_a`, `c1 = a`, `c0 = Δm − a·s − e`.
    pub fn encrypt_symmetric_with(
        sk: &SecretKey<P>,
        plain: &[u32; N],
        seeds: &EncryptionSeeds,
        level: usize,
        out: &mut Ciphertext<P>,
        ws: &mut Workspace,
    ) -> Result<(), Error> {
        let lc = constants::<P>(level)?;
        check_below_t(plain)?;
        let (c0, c1) = out.rows_mut(level)?;
        Self::symmetric_c0(sk, plain, seeds, level, lc, c0, Some(c1), ws)
    }

    /// The part both symmetric encryptions share, at `level`: `e` Gaussian from
    /// `prng_e(seeds.e)`, then per prime `c0 = Δm − INTT(â ⊙ ŝ) − e` with `â` from
    /// `prng_a(seeds.a)`: sampled straight in the evaluation domain when `c1` is `None` (the
    /// seeded form), or sampled as `a` in the coefficient domain into `c1` and transformed
    /// (the classic form).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn symmetric_c0(
        sk: &SecretKey<P>,
        plain: &[u32; N],
        seeds: &EncryptionSeeds,
        level: usize,
        lc: &LevelConstants,
        c0: &mut [u32],
        mut c1: Option<&mut [u32]>,
        ws: &mut Workspace,
    ) -> Result<(), Error> {
        // One PRNG state at a time keeps the stack small (the secret one is dropped first).
        sample_gaussian(&mut SecretPrng::<E>::new(&seeds.e), &mut ws.small[0]);
        let mut prng_a = PublicPrng::<A>::new(&seeds.a);
        // Index loops rather than `chunks_exact` zips: no division, even on public lengths.
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            let rows = i * N..(i + 1) * N;
            let q = table.modulus();
            match c1.as_deref_mut() {
                None => sample_uniform(&mut prng_a, q, &mut ws.poly),
                Some(c1) => {
                    let a = &mut c1[rows.clone()];
                    sample_uniform(&mut prng_a, q, a);
                    ws.poly.copy_from_slice(a);
                    default_backend().forward(&table.view(), &mut ws.poly)?;
                }
            }
            let row = &mut c0[rows.clone()];
            default_backend().pointwise_mul(q, &ws.poly, &sk.ntt_residues()[rows], row)?;
            default_backend().inverse(&table.view(), row)?;
            finish_c0(q, lc, i, plain, &ws.small[0], row, true);
        }
        ws.clear();
        Ok(())
    }

    /// Classic symmetric encryption at the full level with fresh seeds from `rng`.
    pub fn encrypt_symmetric<R: RngCore + CryptoRng>(
        sk: &SecretKey<P>,
        plain: &[u32; N],
        rng: &mut R,
        out: &mut Ciphertext<P>,
        ws: &mut Workspace,
    ) -> Result<(), Error> {
        Self::encrypt_symmetric_with(sk, plain, &EncryptionSeeds::generate(rng), P::K, out, ws)
    }

    /// Public-key encryption at `level` with an explicit secret seed: `u` ternary, then
    /// `e1`, `e2` Gaussian, all from `prng_e`; per prime `û = NTT(u)`,
    /// `c0 = INTT(p̂0 ⊙ û) + e1 + Δm`, `c1 = INTT(p̂1 ⊙ û) + e2`.
    pub fn encrypt_public_with(
        pk: &PublicKey<P>,
        plain: &[u32; N],
        seed_e: &SecretSeed,
        level: usize,
        out: &mut Ciphertext<P>,
        ws: &mut Workspace,
    ) -> Result<(), Error> {
        let lc = constants::<P>(level)?;
        check_below_t(plain)?;
        let mut prng_e = SecretPrng::<E>::new(seed_e);
        let [u, e1, e2] = &mut ws.small;
        sample_ternary(&mut prng_e, u);
        sample_gaussian(&mut prng_e, e1);
        sample_gaussian(&mut prng_e, e2);
        let (c0, c1) = out.rows_mut(level)?;
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            let row0 = &mut c0[i * N..(i + 1) * N];
            let row1 = &mut c1[i * N..(i + 1) * N];
            let q = table.modulus();
            let rows = i * N..(i + 1) * N;
            lift_small(q, u, &mut ws.poly);
            default_backend().forward(&table.view(), &mut ws.poly)?;
            default_backend().pointwise_mul(q, &pk.p0()[rows.clone()], &ws.poly, row0)?;
            default_backend().inverse(&table.view(), row0)?;
            finish_c0(q, lc, i, plain, e1, row0, false);
            default_backend().pointwise_mul(q, &pk.p1()[rows], &ws.poly, row1)?;
            default_backend().inverse(&table.view(), row1)?;
            let qv = q.value();
            for (x, &e) in row1.iter_mut().zip(e2.iter()) {
                *x = q.add(*x, small_mod(qv, e));
            }
        }
        ws.clear();
        Ok(())
    }

    /// Public-key encryption at the full level with a fresh secret seed from `rng`.
    pub fn encrypt_public<R: RngCore + CryptoRng>(
        pk: &PublicKey<P>,
        plain: &[u32; N],
        rng: &mut R,
        out: &mut Ciphertext<P>,
        ws: &mut Workspace,
    ) -> Result<(), Error> {
        Self::encrypt_public_with(pk, plain, &SecretSeed::generate(rng), P::K, out, ws)
    }

    // ----- expansion ------------------------------------------------------------------

    /// Rebuilds `c1 = INTT(â)` of a seeded ciphertext at `level` into `c1` (`level·n`
    /// residues), bit for bit as the encrypting side sampled `â`.
    pub fn expand_c1_rows(seed: &PublicSeed, level: usize, c1: &mut [u32]) -> Result<(), Error> {
        check_level::<P>(level)?;
        if c1.len() != level * N {
            return Err(Error::LengthMismatch {
                expected: level * N,
                found: c1.len(),
            });
        }
        let mut prng_a = PublicPrng::<A>::new(seed);
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            let row = &mut c1[i * N..(i + 1) * N];
            sample_uniform(&mut prng_a, table.modulus(), row);
            default_backend().inverse(&table.view(), row)?;
        }
        Ok(())
    }

    /// `expand_ct1`: the full ciphertext `(c0, INTT(â))` of a seeded one.
    pub fn expand_ct1(seeded: &SeededCiphertext<P>, out: &mut Ciphertext<P>) -> Result<(), Error> {
        let (c0, c1) = out.rows_mut(seeded.level())?;
        c0.copy_from_slice(seeded.c0());
        Self::expand_c1_rows(seeded.seed(), seeded.level(), c1)
    }

    // ----- decryption -----------------------------------------------------------------

    /// Decrypts a full ciphertext into the plaintext polynomial `plain` (coefficients `< t`).
    pub fn decrypt(
        sk: &SecretKey<P>,
        ct: &Ciphertext<P>,
        plain: &mut [u32; N],
        ws: &mut Workspace,
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
    /// of more than `5Q/γ` from `±Q/2`.
    pub fn decrypt_rows(
        sk: &SecretKey<P>,
        level: usize,
        c0: &[u32],
        c1: &[u32],
        plain: &mut [u32; N],
        ws: &mut Workspace,
    ) -> Result<(), Error> {
        let lc = constants::<P>(level)?;
        check_rows::<P>(level, c0, 0)?;
        check_rows::<P>(level, c1, 1)?;
        plain.fill(0);
        ws.aux.fill(0);
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            let rows = i * N..(i + 1) * N;
            ws.poly.copy_from_slice(&c1[rows.clone()]);
            default_backend().forward(&table.view(), &mut ws.poly)?;
            Self::accumulate_prime(sk, lc, i, &c0[rows], plain, ws)?;
        }
        behz::finish(lc, plain, &ws.aux)?;
        ws.clear();
        Ok(())
    }

    /// Decrypts a seeded ciphertext directly: `ĉ1 = â` is sampled from the seed in the
    /// evaluation domain, so no NTT of `c1` is needed. Equal to decrypting
    /// [`Self::expand_ct1`]'s output.
    pub fn decrypt_seeded(
        sk: &SecretKey<P>,
        ct: &SeededCiphertext<P>,
        plain: &mut [u32; N],
        ws: &mut Workspace,
    ) -> Result<(), Error> {
        let level = ct.level();
        let lc = constants::<P>(level)?;
        check_rows::<P>(level, ct.c0(), 0)?;
        plain.fill(0);
        ws.aux.fill(0);
        let mut prng_a = PublicPrng::<A>::new(ct.seed());
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            sample_uniform(&mut prng_a, table.modulus(), &mut ws.poly);
            Self::accumulate_prime(sk, lc, i, &ct.c0()[i * N..(i + 1) * N], plain, ws)?;
        }
        behz::finish(lc, plain, &ws.aux)?;
        ws.clear();
        Ok(())
    }

    /// With `ĉ1` of prime `i` in `ws.poly`: `x = c0 + INTT(ĉ1 ⊙ ŝ)`, then the BEHZ terms of
    /// prime `i` added to `acc_t` (in `plain`) and `acc_γ` (in `ws.aux`).
    fn accumulate_prime(
        sk: &SecretKey<P>,
        lc: &LevelConstants,
        i: usize,
        c0: &[u32],
        acc_t: &mut [u32; N],
        ws: &mut Workspace,
    ) -> Result<(), Error> {
        let table = &P::ntt_tables()[i];
        let q = table.modulus();
        default_backend().pointwise_mul_assign(
            q,
            &mut ws.poly,
            &sk.ntt_residues()[i * N..(i + 1) * N],
        )?;
        default_backend().inverse(&table.view(), &mut ws.poly)?;
        behz::accumulate(q, lc, i, &ws.poly, c0, acc_t, &mut ws.aux)
    }

    // ----- noise ----------------------------------------------------------------------

    /// SEAL's invariant noise budget in bits of a full ciphertext:
    /// `max(0, bits(Q) − bits(‖[t·X]_Q‖∞) − 1)` with `X = c0 + c1·s mod Q` and the norm over
    /// centred representatives (fixed-size `u128` arithmetic: `Q < 2^108`). `x_rows`
    /// (`level·n` words) receives the rows of `X`. A diagnostic for tests and tools: it is
    /// not constant time.
    pub fn noise_budget(
        sk: &SecretKey<P>,
        ct: &Ciphertext<P>,
        x_rows: &mut [u32],
        ws: &mut Workspace,
    ) -> Result<u32, Error> {
        Self::noise_budget_rows(sk, ct.level(), ct.c0(), ct.c1(), x_rows, ws)
    }

    /// [`Self::noise_budget`] of a ciphertext given as borrowed rows at `level`.
    pub fn noise_budget_rows(
        sk: &SecretKey<P>,
        level: usize,
        c0: &[u32],
        c1: &[u32],
        x_rows: &mut [u32],
        ws: &mut Workspace,
    ) -> Result<u32, Error> {
        let lc = constants::<P>(level)?;
        Self::decryption_residues(sk, level, c0, c1, x_rows, ws)?;
        let q_big = lc.q_product;
        let mut norm: u128 = 0;
        for j in 0..N {
            let mut x: u128 = 0;
            for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
                let m = table.modulus();
                let term = m.mul(x_rows[i * N + j], lc.qhat_inv[i]) as u128;
                x = (x + term * (q_big / m.value() as u128)) % q_big;
            }
            let v = (x * T as u128) % q_big;
            let centred = if v >= q_big.div_ceil(2) { q_big - v } else { v };
            norm = norm.max(centred);
        }
        let norm_bits = 128 - norm.leading_zeros();
        Ok(lc.q_bits.saturating_sub(norm_bits + 1))
    }

    /// The residues of `X = c0 + c1·s` at `level` into `x_rows` (`level·n` words, prime-major).
    pub fn decryption_residues(
        sk: &SecretKey<P>,
        level: usize,
        c0: &[u32],
        c1: &[u32],
        x_rows: &mut [u32],
        ws: &mut Workspace,
    ) -> Result<(), Error> {
        check_level::<P>(level)?;
        check_rows::<P>(level, c0, 0)?;
        check_rows::<P>(level, c1, 1)?;
        if x_rows.len() != level * N {
            return Err(Error::LengthMismatch {
                expected: level * N,
                found: x_rows.len(),
            });
        }
        for (i, table) in P::ntt_tables().iter().take(level).enumerate() {
            let out = &mut x_rows[i * N..(i + 1) * N];
            let q = table.modulus();
            let rows = i * N..(i + 1) * N;
            ws.poly.copy_from_slice(&c1[rows.clone()]);
            default_backend().forward(&table.view(), &mut ws.poly)?;
            default_backend().pointwise_mul_assign(
                q,
                &mut ws.poly,
                &sk.ntt_residues()[rows.clone()],
            )?;
            default_backend().inverse(&table.view(), &mut ws.poly)?;
            for ((o, &x), &c) in out.iter_mut().zip(ws.poly.iter()).zip(&c0[rows]) {
                *o = q.add(x, c);
            }
        }
        ws.clear();
        Ok(())
    }
}

/// Adds `Δm` and subtracts (`negate_error`) or adds the small error to a `c0` row that holds
/// `INTT(â ⊙ ŝ)` (symmetric: `c0 = Δm − a·s − e`) or `INTT(p̂0 ⊙ û)` (public:
/// `c0 = p0·u + e1 + Δm`).
#[inline(never)]
fn finish_c0(
    q: &Modulus,
    lc: &LevelConstants,
    i: usize,
    plain: &[u32; N],
    error: &[i8; N],
    row: &mut [u32],
    negate_error: bool,
) {
    let qv = q.value();
    for ((x, &m), &e) in row.iter_mut().zip(plain.iter()).zip(error.iter()) {
        let dm = scaled_plain(q, lc, i, m);
        let e = small_mod(qv, e);
        *x = if negate_error {
            q.sub(q.sub(dm, *x), e)
        } else {
            q.add(q.add(*x, e), dm)
        };
    }
}

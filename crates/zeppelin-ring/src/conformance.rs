//! Conformance of every backend: for each backend this CPU has (on x86-64: `Portable`,
//! `Avx2`, `Avx512` and `Auto`, each from its detection token; a backend the CPU lacks is
//! reported and skipped), every kernel of [`NttBackend`], [`RnsKernels`] and
//! [`ClientKernels`] (ChaCha20 included) equals [`Portable`] bit for bit on random and extreme inputs, and the
//! portable reference itself equals independent definitions (big-integer sums, `i64`
//! arithmetic, plain comparisons). Then the selection: the compile-time cap
//! (`--cfg zeppelin_backend`) and the run-time names (`ZEPPELIN_BACKEND`).

extern crate std;
use std::format;
use std::string::String;
use std::vec;
use std::vec::Vec;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::{ClientKernels, Modulus, Mont, NttBackend, NttTable, Portable, RingError, RnsKernels};

/// Everything a backend implements.
trait Backend: NttBackend + RnsKernels + ClientKernels {}
impl<B: NttBackend + RnsKernels + ClientKernels> Backend for B {}

/// NTT-friendly primes for degree `n` (up to 2^15), from both ends of the range.
fn primes_for(n: usize) -> Vec<u32> {
    let step = 2 * n as u32;
    let mut found = Vec::new();
    // Largest below 2^30.
    let mut q = ((1u32 << 30) - 1) / step * step + 1;
    while found.len() < 2 {
        if crate::modulus::is_prime(q) {
            found.push(q);
        }
        q -= step;
    }
    // Small ones too (tests the generic reductions).
    let mut q = step + 1;
    while found.len() < 3 {
        if crate::modulus::is_prime(q) {
            found.push(q);
        }
        q += step;
    }
    found
}

/// `len` residues below `q`, the extremes `q − 1` and 0 first.
fn random_below(rng: &mut impl Rng, q: u32, len: usize) -> Vec<u32> {
    let mut v: Vec<u32> = (0..len).map(|_| rng.gen_range(0..q)).collect();
    if len >= 2 {
        v[0] = q - 1;
        v[1] = 0;
    }
    v
}

/// Lengths with every tail shape of 8- and 16-lane vectors.
const LENGTHS: [usize; 11] = [0, 1, 3, 4, 7, 8, 15, 16, 17, 100, 4096];

// ----- NttBackend ---------------------------------------------------------------------------

/// Forward and inverse equal `Portable` for every degree from 2 to 2^15 (including the
/// degrees below two vectors, which SIMD backends hand to `Portable`), and round-trip.
fn check_ntt<B: Backend>(b: B) {
    let mut rng = StdRng::seed_from_u64(1);
    for log_n in 1..=15 {
        let n = 1usize << log_n;
        for q in primes_for(n) {
            let table = NttTable::new_vec(q, n).unwrap();
            let view = table.view();
            for case in 0..3 {
                let input = if case == 0 {
                    vec![q - 1; n]
                } else {
                    random_below(&mut rng, q, n)
                };
                let (mut ours, mut theirs) = (input.clone(), input.clone());
                b.forward(&view, &mut ours).unwrap();
                Portable.forward(&view, &mut theirs).unwrap();
                assert_eq!(ours, theirs, "{} forward n={n} q={q}", b.name());
                b.inverse(&view, &mut ours).unwrap();
                Portable.inverse(&view, &mut theirs).unwrap();
                assert_eq!(ours, theirs, "{} inverse n={n} q={q}", b.name());
                assert_eq!(ours, input, "{} round trip n={n} q={q}", b.name());
            }
        }
    }
    // A view without the Shoup twiddles (built by hand) computes the same transforms.
    let table = NttTable::new_vec(134_176_769, 4096).unwrap();
    let mut plain = table.view();
    plain.shoup = None;
    let input = random_below(&mut rng, 134_176_769, 4096);
    let (mut ours, mut theirs) = (input.clone(), input.clone());
    b.forward(&plain, &mut ours).unwrap();
    Portable.forward(&table.view(), &mut theirs).unwrap();
    assert_eq!(ours, theirs, "{} forward without Shoup twiddles", b.name());
    b.inverse(&plain, &mut ours).unwrap();
    assert_eq!(ours, input, "{} inverse without Shoup twiddles", b.name());
    // Wrong lengths are refused.
    let table = NttTable::new_vec(12_289, 64).unwrap();
    assert!(b.forward(&table.view(), &mut [0u32; 32]).is_err());
    assert!(b.inverse(&table.view(), &mut [0u32; 128]).is_err());
    // A hand-built view whose twiddle tables are shorter than the degree: the SIMD backends,
    // which read the tables with unchecked vector loads, refuse it (Portable indexes the
    // table, and panics on it, as it always has; see `NttView`).
    if b.name() != "portable" {
        let mut short = table.view();
        short.forward = &short.forward[..32];
        short.inverse = &short.inverse[..32];
        assert!(b.forward(&short, &mut [0u32; 64]).is_err());
        assert!(b.inverse(&short, &mut [0u32; 64]).is_err());
    }
}

/// The three pointwise products equal `Portable` at every tail shape, and refuse mismatched
/// lengths.
fn check_pointwise<B: Backend>(b: B) {
    let mut rng = StdRng::seed_from_u64(2);
    for q in [
        1_061_093_377u32,
        1_073_741_789,
        134_176_769,
        65_537,
        12_289,
        3,
    ] {
        let m = Modulus::new(q).unwrap();
        for len in LENGTHS {
            let x = random_below(&mut rng, q, len);
            let y = random_below(&mut rng, q, len);
            let acc = random_below(&mut rng, q, len);
            let (mut ours, mut theirs) = (vec![0; len], vec![0; len]);
            b.pointwise_mul(&m, &x, &y, &mut ours).unwrap();
            Portable.pointwise_mul(&m, &x, &y, &mut theirs).unwrap();
            assert_eq!(ours, theirs, "{} mul q={q} len={len}", b.name());
            // The reference itself: u64 products.
            for ((&p, &u), &v) in theirs.iter().zip(&x).zip(&y) {
                assert_eq!(u64::from(p), u64::from(u) * u64::from(v) % u64::from(q));
            }
            let (mut ours, mut theirs) = (acc.clone(), acc.clone());
            b.pointwise_mul_add(&m, &x, &y, &mut ours).unwrap();
            Portable.pointwise_mul_add(&m, &x, &y, &mut theirs).unwrap();
            assert_eq!(ours, theirs, "{} mul_add q={q} len={len}", b.name());
            let (mut ours, mut theirs) = (x.clone(), x.clone());
            b.pointwise_mul_assign(&m, &mut ours, &y).unwrap();
            Portable.pointwise_mul_assign(&m, &mut theirs, &y).unwrap();
            assert_eq!(ours, theirs, "{} mul_assign q={q} len={len}", b.name());
            let mut product = vec![0; len];
            Portable.pointwise_mul(&m, &x, &y, &mut product).unwrap();
            assert_eq!(theirs, product, "mul_assign = mul, q={q} len={len}");
        }
        let (x, mut out) = (vec![0u32; 16], vec![0u32; 17]);
        assert!(b.pointwise_mul(&m, &x, &x, &mut out).is_err());
        assert!(b.pointwise_mul_add(&m, &x, &out, &mut out.clone()).is_err());
        assert!(b.pointwise_mul_assign(&m, &mut out, &x).is_err());
    }
}

// ----- RnsKernels ---------------------------------------------------------------------------

/// `base_convert` equals the sum computed in 128 bits, for row counts around the lazy groups
/// (0, 1, 15, 16, 17, 40), every tail shape, entries up to `2^30 − 1` (above the modulus
/// too) and extreme weights; and equals Portable lane for lane.
fn check_base_convert<B: Backend>(b: B) {
    let mut rng = StdRng::seed_from_u64(11);
    for &p in &[1_073_692_673u32, 1_061_093_377, 134_176_769, 65_537, 3] {
        let m = Modulus::new(p).unwrap();
        for count in [0usize, 1, 3, 15, 16, 17, 40] {
            for len in [0usize, 1, 7, 15, 16, 17, 33, 1000] {
                let extreme = count % 2 == 1;
                let rows: Vec<Vec<u32>> = (0..count)
                    .map(|_| {
                        if extreme {
                            vec![(1 << 30) - 1; len]
                        } else {
                            random_below(&mut rng, 1 << 30, len)
                        }
                    })
                    .collect();
                let plain: Vec<u32> = (0..count)
                    .map(|_| if extreme { p - 1 } else { rng.gen_range(0..p) })
                    .collect();
                let weights: Vec<Mont> = plain.iter().map(|&w| m.mont(w)).collect();
                let refs: Vec<&[u32]> = rows.iter().map(Vec::as_slice).collect();
                let mut out = vec![u32::MAX; len];
                b.base_convert(&m, &refs, &weights, &mut out).unwrap();
                let mut reference = vec![0; len];
                Portable
                    .base_convert(&m, &refs, &weights, &mut reference)
                    .unwrap();
                assert_eq!(out, reference, "{} p={p} count={count} len={len}", b.name());
                for (j, &o) in out.iter().enumerate() {
                    let want: u128 = rows
                        .iter()
                        .zip(&plain)
                        .map(|(row, &w)| u128::from(row[j]) * u128::from(w))
                        .sum::<u128>()
                        % u128::from(p);
                    assert_eq!(
                        u128::from(o),
                        want,
                        "{} p={p} count={count} j={j}",
                        b.name()
                    );
                }
            }
        }
        // Shapes: a weight missing, a row shorter than the output.
        let row = [1u32; 8];
        let w = [m.mont(1)];
        assert!(b.base_convert(&m, &[&row, &row], &w, &mut [0; 8]).is_err());
        assert!(b.base_convert(&m, &[&row[..7]], &w, &mut [0; 8]).is_err());
    }
}

/// `lift_centered` equals the centred lift computed on `i64`, at every tail shape.
fn check_lift_centered<B: Backend>(b: B) {
    let mut rng = StdRng::seed_from_u64(3);
    let moduli = [
        1_061_093_377u32,
        972_668_929,
        1_073_741_789,
        65_537,
        12_289,
        7681,
        3,
    ];
    for &p in &moduli {
        for &q in &moduli {
            let (from, to) = (Modulus::new(p).unwrap(), Modulus::new(q).unwrap());
            for len in [1000usize, 1, 7, 16, 33] {
                let mut src = random_below(&mut rng, p, len);
                let half = (p - 1) / 2;
                src.extend([half, half + 1, p - 1, 0, 1].iter().map(|v| v % p));
                let mut dst = vec![0; src.len()];
                b.lift_centered(&src, &from, &to, &mut dst).unwrap();
                for (&v, &d) in src.iter().zip(&dst) {
                    let centred = if v > half {
                        i64::from(v) - i64::from(p)
                    } else {
                        i64::from(v)
                    };
                    assert_eq!(
                        i64::from(d),
                        centred.rem_euclid(i64::from(q)),
                        "{} v={v} p={p} q={q}",
                        b.name()
                    );
                }
            }
            assert!(b.lift_centered(&[0; 4], &from, &to, &mut [0; 5]).is_err());
        }
    }
}

/// `key_switch_block` equals the exact (`u128`) sums, maximal inputs included.
fn check_key_switch_block<B: Backend>(b: B) {
    let mut rng = StdRng::seed_from_u64(4);
    for q in [1_073_741_789u32, 1_061_093_377, 65_537, 12_289] {
        let m = Modulus::new(q).unwrap();
        for count in [0usize, 1, 12, 16, 17, 40] {
            for len in [1usize, 7, 16, 33, 64] {
                let stride = len + 3;
                let total = count.max(1) * stride;
                // Worst case for the lazy sums: all maximal.
                let maximal = count == 17;
                let pick = |rng: &mut StdRng, l| {
                    if maximal {
                        vec![q - 1; l]
                    } else {
                        random_below(rng, q, l)
                    }
                };
                let digits = pick(&mut rng, total);
                let key_a = pick(&mut rng, total);
                let key_b = random_below(&mut rng, q, total);
                let add_a = random_below(&mut rng, q, len);
                let add_b = random_below(&mut rng, q, len);
                let to_mont = |k: &[u32]| k.iter().map(|&v| m.to_mont(v)).collect::<Vec<_>>();
                let (mut out_a, mut out_b) = (vec![0; len], vec![0; len]);
                b.key_switch_block(
                    &m,
                    count,
                    stride,
                    &digits,
                    &to_mont(&key_a),
                    &to_mont(&key_b),
                    &add_a,
                    &add_b,
                    &mut out_a,
                    &mut out_b,
                )
                .unwrap();
                for j in 0..len {
                    let expect = |key: &[u32], add: &[u32]| {
                        let mut s = u128::from(add[j]);
                        for i in 0..count {
                            s += u128::from(digits[i * stride + j])
                                * u128::from(key[i * stride + j]);
                        }
                        (s % u128::from(q)) as u32
                    };
                    let what =
                        |part| format!("{} {part} q={q} count={count} len={len} j={j}", b.name());
                    assert_eq!(out_a[j], expect(&key_a, &add_a), "{}", what("a"));
                    assert_eq!(out_b[j], expect(&key_b, &add_b), "{}", what("b"));
                }
            }
        }
    }
    // No digits: the streams may be empty and the outputs are the addends.
    let m = Modulus::new(12_289).unwrap();
    let add: Vec<u32> = (0..40).collect();
    let (mut out_a, mut out_b) = (vec![0; 40], vec![0; 40]);
    b.key_switch_block(&m, 0, 40, &[], &[], &[], &add, &add, &mut out_a, &mut out_b)
        .unwrap();
    assert_eq!((out_a, out_b), (add.clone(), add));
    // Digits shorter than the shape needs are refused.
    let (mut oa, mut ob) = (vec![0; 16], vec![0; 16]);
    let z = vec![0u32; 16];
    let short = vec![0u32; 20];
    assert!(b
        .key_switch_block(&m, 2, 16, &short, &z, &z, &z, &z, &mut oa, &mut ob)
        .is_err());
}

/// `tensor_key_switch_block` equals the exact (`u128`) sums, maximal inputs included.
fn check_tensor_key_switch_block<B: Backend>(b: B) {
    let mut rng = StdRng::seed_from_u64(8);
    for q in [1_073_741_789u32, 1_061_093_377, 65_537, 12_289] {
        let m = Modulus::new(q).unwrap();
        for count in [0usize, 1, 12, 14, 15, 16, 30] {
            for len in [1usize, 9, 16, 33] {
                let stride = len + 5;
                let total = count.max(1) * stride;
                let maximal = count == 14;
                let pick = |rng: &mut StdRng, l| {
                    if maximal {
                        vec![q - 1; l]
                    } else {
                        random_below(rng, q, l)
                    }
                };
                let digits = pick(&mut rng, total);
                let key_a = pick(&mut rng, total);
                let key_b = pick(&mut rng, total);
                let xs = [pick(&mut rng, len), pick(&mut rng, len)];
                let ys = [pick(&mut rng, len), pick(&mut rng, len)];
                let to_mont = |k: &[u32]| k.iter().map(|&v| m.to_mont(v)).collect::<Vec<_>>();
                let (mut out_a, mut out_b) = (vec![0; len], vec![0; len]);
                b.tensor_key_switch_block(
                    &m,
                    count,
                    stride,
                    &digits,
                    &to_mont(&key_a),
                    &to_mont(&key_b),
                    [&xs[0], &xs[1]],
                    [&ys[0], &ys[1]],
                    &mut out_a,
                    &mut out_b,
                )
                .unwrap();
                let big = |v: u32| u128::from(v);
                for j in 0..len {
                    let mut sa = big(xs[0][j]) * big(ys[1][j]) + big(xs[1][j]) * big(ys[0][j]);
                    let mut sb = big(xs[0][j]) * big(ys[0][j]);
                    for i in 0..count {
                        sa += big(digits[i * stride + j]) * big(key_a[i * stride + j]);
                        sb += big(digits[i * stride + j]) * big(key_b[i * stride + j]);
                    }
                    let what =
                        |part| format!("{} {part} q={q} count={count} len={len} j={j}", b.name());
                    assert_eq!(big(out_a[j]), sa % big(q), "{}", what("a"));
                    assert_eq!(big(out_b[j]), sb % big(q), "{}", what("b"));
                }
            }
        }
    }
}

// ----- ClientKernels ------------------------------------------------------------------------

/// `a·b·2^-32 mod p`, exactly, for the definitions below.
fn mont_exact(a: u32, b: u32, p: u32) -> u32 {
    // 2^-32 mod p by Fermat (p prime).
    let p128 = u128::from(p);
    let (mut base, mut exp, mut inv) = ((1u128 << 32) % p128, p128 - 2, 1u128);
    while exp > 0 {
        if exp & 1 == 1 {
            inv = inv * base % p128;
        }
        base = base * base % p128;
        exp >>= 1;
    }
    (u128::from(a) * u128::from(b) % p128 * inv % p128) as u32
}

/// The BEHZ tail: `Portable` equals the definitions of [`ClientKernels`] computed on `u128`,
/// and every backend equals `Portable`, at every tail shape.
fn check_behz<B: Backend>(b: B) {
    let mut rng = StdRng::seed_from_u64(10);
    let t = Modulus::new(65_537).unwrap();
    for q in [134_176_769u32, 268_369_921, 1_061_093_377, 12_289] {
        let qm = Modulus::new(q).unwrap();
        for len in LENGTHS {
            let (scale, hat_t) = (rng.gen_range(0..q), rng.gen_range(0..t.value()));
            let hat_gamma: u32 = rng.gen();
            let x = random_below(&mut rng, q, len);
            let c0 = random_below(&mut rng, q, len);
            let acc_t = random_below(&mut rng, t.value(), len);
            let acc_g: Vec<u32> = (0..len).map(|_| rng.gen()).collect();
            let (mut ours_t, mut ours_g) = (acc_t.clone(), acc_g.clone());
            let (mut ref_t, mut ref_g) = (acc_t.clone(), acc_g.clone());
            let (scale_m, hat_t_m) = (Mont::from_word(scale), Mont::from_word(hat_t));
            b.behz_accumulate(
                &qm,
                &t,
                scale_m,
                hat_t_m,
                hat_gamma,
                &x,
                &c0,
                &mut ours_t,
                &mut ours_g,
            )
            .unwrap();
            Portable
                .behz_accumulate(
                    &qm, &t, scale_m, hat_t_m, hat_gamma, &x, &c0, &mut ref_t, &mut ref_g,
                )
                .unwrap();
            assert_eq!(
                (&ours_t, &ours_g),
                (&ref_t, &ref_g),
                "{} accumulate q={q} len={len}",
                b.name()
            );
            for j in 0..len {
                let xi = ((u64::from(x[j]) + u64::from(c0[j])) % u64::from(q)) as u32;
                let y = mont_exact(xi, scale, q);
                let add_t = mont_exact(y, hat_t, t.value());
                assert_eq!(
                    ref_t[j],
                    (acc_t[j] + add_t) % t.value(),
                    "acc_t q={q} j={j}"
                );
                assert_eq!(
                    ref_g[j],
                    acc_g[j].wrapping_add(y.wrapping_mul(hat_gamma)),
                    "acc_γ"
                );
            }

            let (nqt, gmt, git) = (
                rng.gen_range(0..t.value()),
                rng.gen_range(0..t.value()),
                rng.gen_range(0..t.value()),
            );
            let nqg: u32 = rng.gen::<u32>() & 0x7fff_ffff;
            let (mut ours, mut theirs) = (ref_t.clone(), ref_t.clone());
            let (nqt_m, git_m) = (Mont::from_word(nqt), Mont::from_word(git));
            b.behz_finish(&t, nqt_m, nqg, gmt, git_m, &mut ours, &ref_g)
                .unwrap();
            Portable
                .behz_finish(&t, nqt_m, nqg, gmt, git_m, &mut theirs, &ref_g)
                .unwrap();
            assert_eq!(ours, theirs, "{} finish q={q} len={len}", b.name());
            let tv = t.value();
            for j in 0..len {
                let z_t = mont_exact(ref_t[j], nqt, tv);
                let z_g = ref_g[j].wrapping_mul(nqg) & 0x7fff_ffff;
                let mut z_gt = z_g % tv;
                if z_g >= 1 << 30 {
                    z_gt = (z_gt + tv - gmt) % tv;
                }
                let expect = mont_exact((z_t + tv - z_gt) % tv, git, tv);
                assert_eq!(theirs[j], expect, "finish definition q={q} j={j}");
            }
        }
        let mut short = vec![0u32; 8];
        assert!(b
            .behz_accumulate(
                &qm,
                &t,
                Mont::ZERO,
                Mont::ZERO,
                1,
                &[0; 8],
                &[0; 8],
                &mut short,
                &mut [0; 7]
            )
            .is_err());
        assert!(b
            .behz_finish(&t, Mont::ZERO, 1, 1, Mont::ZERO, &mut short, &[0; 9])
            .is_err());
    }
}

/// The CDT scan: `Portable` equals plain comparisons, every backend equals `Portable`, on
/// random words and every boundary of an ascending table.
fn check_cdt_scan<B: Backend>(b: B) {
    // The shape of the client's Gaussian table: ascending, from 0 up to 2^31.
    let mut rng = StdRng::seed_from_u64(12);
    let mut cdt: Vec<u32> = (0..40).map(|_| rng.gen_range(0..1u32 << 31)).collect();
    cdt.extend([0, 1 << 31]);
    cdt.sort_unstable();
    let base = cdt.len() as i32 - 21;
    let mut words: Vec<u32> = cdt
        .iter()
        .flat_map(|&c| {
            [
                c,
                c.wrapping_sub(1),
                c | 1 << 31,
                c.wrapping_sub(1) | 1 << 31,
            ]
        })
        .collect();
    words.extend([0, u32::MAX, 0x7fff_ffff, 0x8000_0000]);
    words.extend((0..4096).map(|_| rng.gen::<u32>()));
    words.resize(words.len().next_multiple_of(16), 0);
    for block in words.chunks_exact(16) {
        let block: &[u32; 16] = block.try_into().unwrap();
        let (mut ours, mut theirs) = ([0i8; 16], [0i8; 16]);
        b.cdt_scan(block, &cdt, base, &mut ours);
        Portable.cdt_scan(block, &cdt, base, &mut theirs);
        assert_eq!(ours, theirs, "{}", b.name());
        for (&w, &s) in block.iter().zip(&theirs) {
            let r = w & 0x7fff_ffff;
            let below = cdt.iter().filter(|&&c| r < c).count() as i32;
            assert_eq!(i32::from(s), base - below, "w={w:#x}");
        }
    }
    // Blocks of 8 (shorter than an AVX-512 vector: all tail) and 40 (vectors and a tail).
    for chunk in words.chunks_exact(40) {
        let wide: &[u32; 40] = chunk.try_into().unwrap();
        let (mut ours, mut theirs) = ([0i8; 40], [0i8; 40]);
        b.cdt_scan(wide, &cdt, base, &mut ours);
        Portable.cdt_scan(wide, &cdt, base, &mut theirs);
        assert_eq!(ours, theirs, "{}", b.name());
        let narrow: &[u32; 8] = chunk[..8].try_into().unwrap();
        let (mut ours, mut theirs) = ([0i8; 8], [0i8; 8]);
        b.cdt_scan(narrow, &cdt, base, &mut ours);
        Portable.cdt_scan(narrow, &cdt, base, &mut theirs);
        assert_eq!(ours, theirs, "{}", b.name());
    }
    // A symmetric table (the shape of a centred distribution) through the folded scan:
    // equal to the full scan of `Portable`, on the same words and every boundary of it.
    let mut low: Vec<u32> = (0..20).map(|_| rng.gen_range(0..1u32 << 30)).collect();
    low.extend([0, (1 << 30) - 1]);
    low.sort_unstable();
    let symmetric: Vec<u32> = low
        .iter()
        .copied()
        .chain(low.iter().rev().map(|&c| (1u32 << 31) - c))
        .collect();
    let mut edges: Vec<u32> = symmetric
        .iter()
        .flat_map(|&c| [c, c.wrapping_sub(1), c + 1, c | 1 << 31])
        .collect();
    edges.extend([1 << 30, (1 << 30) - 1, (1 << 30) + 1]);
    edges.extend(&words);
    edges.resize(edges.len().next_multiple_of(16), 0);
    let base = symmetric.len() as i32 - 21;
    for block in edges.chunks_exact(16) {
        let block: &[u32; 16] = block.try_into().unwrap();
        let (mut ours, mut theirs) = ([0i8; 16], [0i8; 16]);
        b.cdt_scan_symmetric(block, &symmetric, base, &mut ours);
        Portable.cdt_scan(block, &symmetric, base, &mut theirs);
        assert_eq!(ours, theirs, "{} symmetric", b.name());
    }
    // An empty table: every sample is `base`.
    let (mut out, block) = ([0i8; 8], [7u32; 8]);
    b.cdt_scan(&block, &[], 5, &mut out);
    assert_eq!(out, [5; 8]);
}

/// The last step of encryption: `Portable` equals `u64` arithmetic on the definition, every
/// backend equals `Portable`, both signs of the error term, lengths around the widths.
fn check_encrypt_finish<B: Backend>(b: B) {
    let mut rng = StdRng::seed_from_u64(14);
    for q in [134_176_769u32, 268_369_921, 1_061_093_377, 12_289] {
        let qm = Modulus::new(q).unwrap();
        for len in LENGTHS {
            let delta = rng.gen_range(0..q);
            let plain = random_below(&mut rng, q.min(65_537), len);
            let carry = random_below(&mut rng, q.min(65_538), len);
            let row = random_below(&mut rng, q, len);
            let mut error: Vec<i8> = (0..len).map(|_| rng.gen_range(-21..=21)).collect();
            if len > 2 {
                error[0] = i8::MIN;
                error[1] = i8::MAX;
            }
            for negate in [false, true] {
                let (mut ours, mut theirs) = (row.clone(), row.clone());
                let d = Mont::from_word(delta);
                b.encrypt_finish(&qm, d, &plain, &carry, &error, &mut ours, negate)
                    .unwrap();
                Portable
                    .encrypt_finish(&qm, d, &plain, &carry, &error, &mut theirs, negate)
                    .unwrap();
                assert_eq!(ours, theirs, "{} q={q} len={len} negate={negate}", b.name());
                for j in 0..len {
                    let qq = u64::from(q);
                    let dm = (mont_exact(plain[j], delta, q) as u64 + u64::from(carry[j])) % qq;
                    let e = (i64::from(error[j])).rem_euclid(q as i64) as u64;
                    let x = u64::from(row[j]);
                    let want = if negate {
                        (dm + 2 * qq - x - e) % qq
                    } else {
                        (x + e + dm) % qq
                    };
                    assert_eq!(u64::from(theirs[j]), want);
                }
            }
        }
    }
    assert!(b
        .encrypt_finish(
            &Modulus::new(12_289).unwrap(),
            Mont::ZERO,
            &[0; 8],
            &[0; 8],
            &[0; 7],
            &mut [0; 8],
            true
        )
        .is_err());
}

/// The uniform sampler's rejection step: `Portable` equals the plain loop (read word by
/// word, keep `w & mask < q`, stop once `out` is full), every backend equals `Portable` in
/// what it writes and in how many words it reads, for output lengths around the vector
/// widths, inputs that run out first, and acceptance rates from almost none to all.
fn check_uniform_accept<B: Backend>(b: B) {
    let mut rng = StdRng::seed_from_u64(13);
    for &q in &[
        134_176_769u32,
        65_537,
        3,
        2_147_483_647,
        1 << 31,
        4_294_967_291,
        1,
    ] {
        let mask = if q <= 1 {
            0
        } else {
            u32::MAX >> (q - 1).leading_zeros()
        };
        let mut bytes = vec![0u8; 4 * 700 + 3];
        rng.fill(&mut bytes[..]);
        for out_len in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100, 500, 1000] {
            for words_len in [0, 5, 16, 64, 333, 700] {
                let words = &bytes[..4 * words_len + 3];
                let (mut ours, mut theirs) = (vec![0u32; out_len], vec![0u32; out_len]);
                let got = b.uniform_accept(words, mask, q, &mut ours);
                let want = Portable.uniform_accept(words, mask, q, &mut theirs);
                assert_eq!(
                    got,
                    want,
                    "{} q={q} out={out_len} words={words_len}",
                    b.name()
                );
                assert_eq!(ours[..got.1], theirs[..want.1], "{}", b.name());
                // The definition.
                let mut expected = Vec::new();
                let mut read = 0;
                for w in words.chunks_exact(4) {
                    if expected.len() == out_len {
                        break;
                    }
                    read += 1;
                    let c = u32::from_le_bytes(w.try_into().unwrap()) & mask;
                    if c < q {
                        expected.push(c);
                    }
                }
                assert_eq!(want, (read, expected.len()));
                assert_eq!(theirs[..want.1], expected[..]);
            }
        }
    }
}

fn check_chacha20_blocks4<B: Backend>(b: B) {
    let mut rng = StdRng::seed_from_u64(20);
    for trial in 0..200 {
        let mut state = [0u32; 16];
        rng.fill(&mut state[..]);
        match trial {
            0 => state = [0; 16],
            1 => state = [u32::MAX; 16],
            2 => state[12] = u32::MAX - 1,
            _ => {}
        }
        let (mut ours, mut theirs) = (
            crate::chacha::Blocks4([0x5a; 256]),
            crate::chacha::Blocks4::ZERO,
        );
        b.chacha20_blocks4(&state, &mut ours);
        Portable.chacha20_blocks4(&state, &mut theirs);
        assert_eq!(ours, theirs, "{} trial {trial}", b.name());
        // The definition: four single blocks of consecutive (wrapping) counters.
        for i in 0..4 {
            let mut s = state;
            s[12] = state[12].wrapping_add(i as u32);
            let mut one = [0u32; 16];
            crate::chacha::block(&s, &mut one);
            for (k, &w) in one.iter().enumerate() {
                assert_eq!(theirs.word(i, k), w);
            }
        }
    }
}

/// The suite for one backend, from an expression giving `Option<backend>` (`None`: this CPU
/// lacks it; the tests then say so and pass).
macro_rules! backend_suite {
    ($module:ident, $backend:expr) => {
        mod $module {
            use super::*;

            fn backend() -> Option<impl Backend> {
                let b = $backend;
                if b.is_none() {
                    std::eprintln!(
                        "SKIP {}: this CPU does not have the backend",
                        stringify!($module)
                    );
                }
                b
            }

            #[test]
            fn ntt_matches_portable() {
                backend().map(check_ntt);
            }
            #[test]
            fn pointwise_matches_portable() {
                backend().map(check_pointwise);
            }
            #[test]
            fn lift_centered_matches_definition() {
                backend().map(check_lift_centered);
            }
            #[test]
            fn base_convert_matches_wide_sums() {
                backend().map(check_base_convert);
            }
            #[test]
            fn key_switch_matches_big_integers() {
                backend().map(check_key_switch_block);
            }
            #[test]
            fn tensor_key_switch_matches_big_integers() {
                backend().map(check_tensor_key_switch_block);
            }
            #[test]
            fn behz_matches_portable_and_definition() {
                backend().map(check_behz);
            }
            #[test]
            fn cdt_scan_matches_portable_and_definition() {
                backend().map(check_cdt_scan);
            }
            #[test]
            fn encrypt_finish_matches_portable_and_definition() {
                backend().map(check_encrypt_finish);
            }
            #[test]
            fn uniform_accept_matches_portable_and_definition() {
                backend().map(check_uniform_accept);
            }
            #[test]
            fn chacha20_blocks4_matches_portable_and_definition() {
                backend().map(check_chacha20_blocks4);
            }
        }
    };
}

backend_suite!(portable, Some(Portable));
backend_suite!(default, Some(crate::default_backend()));
#[cfg(target_arch = "x86_64")]
backend_suite!(avx2, crate::x86::Avx2::detect());
#[cfg(target_arch = "x86_64")]
backend_suite!(avx512, crate::x86::Avx512::detect());

// ----- selection ----------------------------------------------------------------------------

/// What the compile-time cap lets `Auto::detect` pick on this CPU.
#[cfg(target_arch = "x86_64")]
fn expected_auto() -> &'static str {
    use crate::x86::{Avx2, Avx512};
    let avx512 = Avx512::detect().is_some()
        && !cfg!(any(
            zeppelin_backend = "portable",
            zeppelin_backend = "avx2"
        ));
    let avx2 = Avx2::detect().is_some() && !cfg!(zeppelin_backend = "portable");
    if avx512 {
        "avx512"
    } else if avx2 {
        "avx2"
    } else {
        "portable"
    }
}

/// `--cfg zeppelin_backend=...` really selects that backend: run as
/// `RUSTFLAGS='--cfg zeppelin_backend="portable"' cargo test -p zeppelin-ring --release`
/// (or `"avx2"`); without the cfg, the widest backend the CPU has.
#[cfg(target_arch = "x86_64")]
#[test]
fn compile_time_cap_selects_the_backend() {
    let expected = expected_auto();
    assert_eq!(crate::x86::Auto::detect().name(), expected);
    assert_eq!(crate::default_backend().name(), expected);
    std::eprintln!(
        "default backend: {expected} (cfg zeppelin_backend: {})",
        if cfg!(zeppelin_backend = "portable") {
            "portable"
        } else if cfg!(zeppelin_backend = "avx2") {
            "avx2"
        } else if cfg!(zeppelin_backend = "avx512") {
            "avx512"
        } else {
            "unset"
        }
    );
}

/// The run-time names pick exactly that backend or say why not.
#[cfg(target_arch = "x86_64")]
#[test]
fn names_select_exactly_that_backend() {
    use crate::x86::{Auto, Avx2, Avx512};
    assert_eq!(Auto::from_name("portable"), Ok(Auto::Portable(Portable)));
    match Avx2::detect() {
        Some(t) => assert_eq!(Auto::from_name("avx2"), Ok(Auto::Avx2(t))),
        None => assert_eq!(
            Auto::from_name("avx2"),
            Err(RingError::BackendUnavailable { backend: "avx2" })
        ),
    }
    match Avx512::detect() {
        Some(t) => assert_eq!(Auto::from_name("avx512"), Ok(Auto::Avx512(t))),
        None => assert_eq!(
            Auto::from_name("avx512"),
            Err(RingError::BackendUnavailable { backend: "avx512" })
        ),
    }
    assert_eq!(Auto::from_name("auto").unwrap().name(), expected_auto());
    assert_eq!(
        Auto::from_name("mve"),
        Err(RingError::BackendUnavailable { backend: "mve" })
    );
    assert_eq!(Auto::from_name("AVX2"), Err(RingError::BackendUnknown));
    assert_eq!(
        crate::default_backend_named("portable").unwrap().name(),
        "portable"
    );
}

/// Child half of [`environment_selects_the_backend`]: with `ZEPPELIN_TEST_EXPECT` set, the
/// backend `default_backend_from_env` returns has that name (or, for `error`, it fails).
#[test]
fn environment_child() {
    let Ok(expected) = std::env::var("ZEPPELIN_TEST_EXPECT") else {
        return;
    };
    match crate::default_backend_from_env() {
        Ok(b) => assert_eq!(b.name(), expected),
        Err(e) => assert_eq!(expected, "error", "{e}"),
    }
    std::println!("CHILD-CHECKED {expected}");
}

/// `ZEPPELIN_BACKEND=portable` (and every other name) really selects that backend: this test
/// binary is run again with the variable set, for each name.
#[test]
fn environment_selects_the_backend() {
    let exe = std::env::current_exe().unwrap();
    let auto = crate::default_backend().name();
    let mut cases: Vec<(&str, String)> = vec![
        ("portable", "portable".into()),
        ("auto", auto.into()),
        ("bogus", "error".into()),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        let avx2 = crate::x86::Avx2::detect().map_or("error", |_| "avx2");
        let avx512 = crate::x86::Avx512::detect().map_or("error", |_| "avx512");
        cases.push(("avx2", avx2.into()));
        cases.push(("avx512", avx512.into()));
        cases.push(("mve", "error".into()));
    }
    for (name, expected) in cases {
        let out = std::process::Command::new(&exe)
            .args(["--exact", "conformance::environment_child", "--nocapture"])
            .env(crate::BACKEND_ENV, name)
            .env("ZEPPELIN_TEST_EXPECT", &expected)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&std::format!("CHILD-CHECKED {expected}")),
            "ZEPPELIN_BACKEND={name}: expected {expected}\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

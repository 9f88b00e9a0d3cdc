//! Non-inlined instances of secret-path functions that the bfv crate leaves to inlining
//! (the samplers of the secret stream, the small-value lift), so that the binary audit has a
//! symbol to check. They compile the same generic code the client inlines elsewhere; the
//! audit of these instances is evidence about that code, not about every inlined copy.

use zeppelin::prng::SecretPrng;
use zeppelin::{AesCtr128, N};
use zeppelin_ring::Modulus;

/// `sample_ternary` on the secret stream.
#[inline(never)]
pub fn sample_ternary(prng: &mut SecretPrng<AesCtr128>, out: &mut [i8; N]) {
    zeppelin::sampler::sample_ternary(prng, out)
}

/// `sample_gaussian` on the secret stream.
#[inline(never)]
pub fn sample_gaussian(prng: &mut SecretPrng<AesCtr128>, out: &mut [i8; N]) {
    zeppelin::sampler::sample_gaussian(prng, out)
}

/// `lift_small`: secret small coefficients to residues mod q.
#[inline(never)]
pub fn lift_small(q: &Modulus, small: &[i8; N], out: &mut [u32; N]) {
    zeppelin::sampler::lift_small(q, small, out)
}

/// Runs each once (so they are linked) and checks them against their definitions.
pub fn run(h: &mut crate::harness::Harness) {
    static mut SMALL: [i8; N] = [0; N];
    static mut WIDE: [u32; N] = [0; N];
    // SAFETY: single-threaded; the only references.
    let (small, wide) = unsafe {
        (
            &mut *core::ptr::addr_of_mut!(SMALL),
            &mut *core::ptr::addr_of_mut!(WIDE),
        )
    };
    let seed = zeppelin::SecretSeed::from_bytes([0x77; 32]);
    let mut prng = SecretPrng::<AesCtr128>::new(&seed);
    sample_ternary(&mut prng, small);
    let ternary_ok = small.iter().all(|&s| (-1..=1).contains(&s));
    sample_gaussian(&mut prng, small);
    let gaussian_ok = small.iter().all(|&s| (-21..=21).contains(&s));
    let q = match Modulus::new(134_176_769) {
        Ok(q) => q,
        Err(_) => return,
    };
    lift_small(&q, small, wide);
    let lift_ok = small
        .iter()
        .zip(wide.iter())
        .all(|(&s, &w)| (s as i64).rem_euclid(q.value() as i64) == w as i64);
    h.check(
        "audit instances: samplers in range, lift exact",
        ternary_ok && gaussian_ok && lift_ok,
        format_args!("ternary {ternary_ok}, gaussian {gaussian_ok}, lift {lift_ok}"),
    );
}

//! The batched engine against the plain reference on random inputs: tower counts 1..=16,
//! ring dimensions 1024..=16384, mixed prime sizes (so the centred lift crosses moduli of
//! different magnitude), partial groups and blocks.
#![expect(
    clippy::unwrap_used,
    reason = "test helpers outside #[test] fns unwrap on failure (clippy.toml exempts only #[test] fns)"
)]

use rand::{rngs::StdRng, Rng, SeedableRng};
use zeppelin_evalmult::{
    openfhe_primes, reference, tower_major_digits, Ciphertext, Engine, EngineOptions, RelinKey,
    RnsContext,
};

fn random_poly(rng: &mut StdRng, ctx: &RnsContext) -> Vec<u32> {
    let n = ctx.ring_dim();
    let mut poly: Vec<u32> = (0..ctx.poly_len())
        .map(|j| rng.gen_range(0..ctx.moduli()[j / n].value()))
        .collect();
    // Extremes: the largest residue and zero in every tower.
    for k in 0..ctx.towers() {
        poly[k * n] = ctx.moduli()[k].value() - 1;
        poly[k * n + 1] = 0;
    }
    poly
}

fn random_ct(rng: &mut StdRng, ctx: &RnsContext) -> Ciphertext {
    Ciphertext {
        c0: random_poly(rng, ctx),
        c1: random_poly(rng, ctx),
    }
}

/// Towers alternate between 30-bit and smaller primes, all NTT-friendly for `n`.
fn moduli(n: usize, towers: usize) -> Vec<u32> {
    let big = openfhe_primes(30, n, 1, towers).unwrap();
    let small = openfhe_primes(26, n, 1, towers).unwrap();
    (0..towers)
        .map(|k| if k % 3 == 2 { small[k] } else { big[k] })
        .collect()
}

fn check(n: usize, towers: usize, batch: usize, options: EngineOptions, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let ctx = RnsContext::new(n, &moduli(n, towers)).unwrap();
    let key = RelinKey {
        ring_dim: n,
        moduli: ctx.moduli_values(),
        a: (0..towers).map(|_| random_poly(&mut rng, &ctx)).collect(),
        b: (0..towers).map(|_| random_poly(&mut rng, &ctx)).collect(),
    };
    let pairs: Vec<_> = (0..batch)
        .map(|_| (random_ct(&mut rng, &ctx), random_ct(&mut rng, &ctx)))
        .collect();
    let engine = Engine::with_options(ctx.clone(), &key, options).unwrap();
    let fast = engine.eval_mult(&pairs).unwrap();
    let mut digit_sets = Vec::new();
    for (ct, (x, y)) in pairs.iter().enumerate() {
        let slow = reference::eval_mult(&ctx, &key, x, y).unwrap();
        assert_eq!(
            fast[ct], slow.relin,
            "n={n} towers={towers} pair {ct} {options:?}"
        );
        digit_sets.push(tower_major_digits(&ctx, &slow.digits).unwrap());
    }
    let predecomposed = engine.relinearize_with_digits(&pairs, &digit_sets).unwrap();
    assert_eq!(
        predecomposed.to_ciphertexts(),
        fast,
        "n={n} towers={towers} with digits"
    );
}

#[test]
fn every_tower_count_1_to_16() {
    let dims = [1024, 2048, 4096, 8192, 16384];
    for towers in 1..=16 {
        let n = dims[towers % dims.len()];
        let options = EngineOptions {
            group: 1 + towers % 3,
            block: [256, 16, 1000, 4096][towers % 4],
        };
        check(n, towers, 3, options, towers as u64);
    }
}

#[test]
fn every_ring_dimension_1024_to_16384() {
    for (i, n) in [1024, 2048, 4096, 8192, 16384].into_iter().enumerate() {
        check(n, 12, 2, EngineOptions::default(), 100 + i as u64);
    }
}

#[test]
fn small_rings_and_odd_blocks() {
    // Below one SIMD vector and with blocks that are not multiples of 16.
    for n in [16, 32, 64] {
        check(n, 5, 4, EngineOptions { group: 3, block: 7 }, n as u64);
    }
}

#[test]
fn more_towers_than_one_lazy_sum_holds() {
    // 64-bit lazy sums take at most 16 products; beyond that the kernel reduces in chunks.
    for (towers, seed) in [(17, 1), (20, 2), (33, 3)] {
        check(
            1024,
            towers,
            2,
            EngineOptions {
                group: 2,
                block: 128,
            },
            1000 + seed,
        );
    }
}

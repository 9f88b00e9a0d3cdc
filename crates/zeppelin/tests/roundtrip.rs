//! Encrypt → decrypt at every level, every path, both presets; the noise budget against its
//! big-integer definition (with X from the schoolbook product); typed errors on bad input.
#![expect(
    clippy::unwrap_used,
    clippy::needless_range_loop,
    reason = "test helpers outside #[test] fns: a failure should panic; index loops mirror the reference formulas"
)]

mod common;

use common::*;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use zeppelin::{
    encoder, Bfv, Ciphertext, CoeffRows, EncryptionSeeds, Error, NttRows, Params, Plaintext,
    PublicKey, PublicSeed, Seal4096, Seal8192, SecretKey, SecretSeed, SeededCiphertext, Workspace,
    Zeppelin4096,
};

struct Client<P: Params> {
    sk: Box<SecretKey<P>>,
    pk: Box<PublicKey<P>>,
    ws: Box<Workspace<P>>,
}

fn client<P: Params>(rng: &mut StdRng) -> Client<P> {
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    let mut pk = Box::new(PublicKey::<P>::zeroed());
    let mut ws = Box::new(Workspace::new());
    Bfv::<P>::generate_secret_key(rng, &mut sk).unwrap();
    Bfv::<P>::generate_public_key(&sk, rng, &mut pk, &mut ws).unwrap();
    Client { sk, pk, ws }
}

/// Returns the fresh noise budgets (seeded, symmetric, public) at the full level.
fn roundtrip_every_level<P: Params>(seed: u64) -> [u32; 3] {
    let mut rng = StdRng::seed_from_u64(seed);
    let Client { sk, pk, mut ws } = client::<P>(&mut rng);
    let mut slots = vec![0u32; P::N];
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    let mut decrypted = Box::new(Plaintext::<P>::zeroed());
    let mut back = vec![0u32; P::N];
    let mut ct = Box::new(Ciphertext::<P>::zeroed());
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    let mut budgets = [0u32; 3];
    for level in 1..=P::K {
        for path in 0..3 {
            for s in slots.iter_mut() {
                *s = rng.gen_range(0..P::T);
            }
            encoder::encode(&slots, &mut plain).unwrap();
            let seeds = EncryptionSeeds::generate(&mut rng);
            match path {
                0 => {
                    Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, level, &mut seeded, &mut ws)
                        .unwrap();
                    assert_eq!(seeded.level(), level);
                    Bfv::<P>::decrypt_seeded(&sk, &seeded, &mut decrypted, &mut ws).unwrap();
                    encoder::decode(&decrypted, &mut back).unwrap();
                    assert_eq!(back[..], slots[..]);
                    Bfv::<P>::expand_ct1(&seeded, &mut ct).unwrap();
                }
                1 => Bfv::<P>::encrypt_symmetric_with(&sk, &plain, &seeds, level, &mut ct, &mut ws)
                    .unwrap(),
                _ => Bfv::<P>::encrypt_public_with(&pk, &plain, &seeds.e, level, &mut ct, &mut ws)
                    .unwrap(),
            }
            let mut x_rows = vec![0u32; level * P::N];
            let budget = Bfv::<P>::noise_budget(&sk, &ct, &mut x_rows, &mut ws).unwrap();
            let exact = schoolbook_x::<P>(level, &ct.c0(), &ct.c1(), sk.ternary());
            assert_eq!(
                x_rows, exact,
                "X residues differ from the schoolbook product"
            );
            assert_eq!(budget, noise_budget_exact::<P>(&exact, level));

            Bfv::<P>::decrypt(&sk, &ct, &mut decrypted, &mut ws).unwrap();
            encoder::decode(&decrypted, &mut back).unwrap();
            // A fresh public-key encryption under one 27-bit prime carries about as much
            // noise (|e·u + e1 + e2·s| up to ~1000 at n = 4096, ~1500 at 8192) as Q/2t = 1023
            // allows: no budget, and no promise of correct decryption (SEAL's level-1 public
            // encryption is the same). Everywhere else there is budget.
            if budget > 0 {
                assert_eq!(back[..], slots[..], "{} level {level} path {path}", P::NAME);
            } else {
                assert_eq!((level, path), (1, 2), "{} out of budget", P::NAME);
            }
            if level == P::K {
                budgets[path] = budget;
            }
        }
    }
    budgets
}

/// Plausibility from first principles (SEAL's definition, budget = bits(Q) − bits(‖[t·X]_Q‖) − 1):
/// a symmetric ciphertext has `[t·X]_Q = t·e + ε`, `|e| <= 21`, `|ε| <= t/2`, and among `n`
/// Gaussian samples some `|e| >= 8`, so its budget is in `[bits(Q) − 22, bits(Q) − 20]`; the
/// public-key noise `e·u + e1 + e2·s` is larger but far below `2^12`.
fn check_budgets<P: Params>(budgets: [u32; 3]) {
    let q_bits = q_big::<P>(P::K).bits() as u32;
    eprintln!(
        "{}: bits(Q) = {q_bits}, fresh noise budget (seeded, symmetric, public) = {budgets:?}",
        P::NAME
    );
    for b in &budgets[..2] {
        assert!((q_bits - 22..=q_bits - 20).contains(b), "{budgets:?}");
    }
    assert!(
        (q_bits - 32..=budgets[1]).contains(&budgets[2]),
        "{budgets:?}"
    );
}

#[test]
fn roundtrip_and_noise_seal4096() {
    check_budgets::<Seal4096>(roundtrip_every_level::<Seal4096>(0x5ea1_0001));
}

#[test]
fn roundtrip_and_noise_zeppelin4096() {
    check_budgets::<Zeppelin4096>(roundtrip_every_level::<Zeppelin4096>(0x5ea1_0002));
}

#[test]
fn roundtrip_and_noise_seal8192() {
    check_budgets::<Seal8192>(roundtrip_every_level::<Seal8192>(0x5ea1_0003));
}

#[test]
fn bad_input_gets_typed_errors_and_leaves_outputs_alone() {
    let n = Seal4096::N;
    let mut rng = StdRng::seed_from_u64(7);
    let Client { sk, pk, mut ws } = client::<Seal4096>(&mut rng);
    let plain = Box::new(Plaintext::<Seal4096>::zeroed());
    let mut out = Box::new(Plaintext::<Seal4096>::zeroed());
    let nines = vec![9u32; n];
    out.set_coeffs(&nines).unwrap();
    let mut ct = Box::new(Ciphertext::<Seal4096>::zeroed());

    // An empty ciphertext (never filled) is refused, not decrypted as an encryption of zero.
    let empty_level = Err(Error::InvalidLevel { level: 0, max: 3 });
    assert_eq!(ct.level(), 0);
    assert_eq!(
        Bfv::<Seal4096>::decrypt(&sk, &ct, &mut out, &mut ws),
        empty_level
    );
    assert_eq!(
        Bfv::<Seal4096>::noise_budget(&sk, &ct, &mut vec![0u32; 3 * n], &mut ws),
        empty_level.map(|_| 0)
    );
    assert_eq!(ct.write_bytes(&mut [0u8; 16]), empty_level.map(|_| 0));
    let empty_seeded = Box::new(SeededCiphertext::<Seal4096>::zeroed());
    assert_eq!(
        Bfv::<Seal4096>::decrypt_seeded(&sk, &empty_seeded, &mut out, &mut ws),
        empty_level
    );
    assert_eq!(
        Bfv::<Seal4096>::expand_ct1(&empty_seeded, &mut ct),
        empty_level
    );
    assert_eq!(
        empty_seeded.write_bytes(&mut [0u8; 64]),
        empty_level.map(|_| 0)
    );
    assert!(out.coeffs().iter().all(|&v| v == 9));

    Bfv::<Seal4096>::encrypt_public(&pk, &plain, &mut rng, &mut ct, &mut ws).unwrap();

    // A residue >= its prime.
    let mut c1 = ct.c1().to_vec();
    c1[n + 5] = Seal4096::DATA_PRIMES[1];
    assert_eq!(
        Bfv::<Seal4096>::decrypt_rows(&sk, 3, ct.c0(), CoeffRows::new(&c1), &mut out, &mut ws),
        Err(Error::CoefficientOutOfRange {
            poly: 1,
            prime: 1,
            index: 5,
        })
    );
    assert!(out.coeffs().iter().all(|&v| v == 9));
    // Wrong level, wrong lengths.
    assert_eq!(
        Bfv::<Seal4096>::decrypt_rows(&sk, 4, ct.c0(), ct.c1(), &mut out, &mut ws),
        Err(Error::InvalidLevel { level: 4, max: 3 })
    );
    assert_eq!(
        Bfv::<Seal4096>::decrypt_rows(&sk, 2, ct.c0(), ct.c1(), &mut out, &mut ws),
        Err(Error::LengthMismatch {
            expected: 2 * n,
            found: 3 * n
        })
    );
    let seeds = EncryptionSeeds::generate(&mut rng);
    let mut seeded = Box::new(SeededCiphertext::<Seal4096>::zeroed());
    assert_eq!(
        Bfv::<Seal4096>::encrypt_seeded_with(&sk, &plain, &seeds, 0, &mut seeded, &mut ws),
        Err(Error::InvalidLevel { level: 0, max: 3 })
    );
    let mut bad_coeffs = vec![0u32; n];
    bad_coeffs[3] = Seal4096::T;
    let mut bad_plain = Box::new(Plaintext::<Seal4096>::zeroed());
    assert_eq!(
        bad_plain.set_coeffs(&bad_coeffs),
        Err(Error::PlaintextOutOfRange {
            index: 3,
            t: Seal4096::T
        })
    );
    assert!(bad_plain.coeffs().iter().all(|&v| v == 0));

    // Byte forms: round trips, and refusals.
    let mut bytes = vec![0u8; Ciphertext::<Seal4096>::bytes_at(3)];
    assert_eq!(ct.write_bytes(&mut bytes).unwrap(), bytes.len());
    let mut ct2 = Box::new(Ciphertext::<Seal4096>::zeroed());
    ct2.read_bytes(3, &bytes).unwrap();
    assert_eq!(ct2.c0(), ct.c0());
    assert_eq!(ct2.c1(), ct.c1());
    bytes[4 * (2 * n) + 3] = 0xff; // c0, prime 2, coefficient 0: now >= 2^24·255 > q
    assert!(matches!(
        ct2.read_bytes(3, &bytes),
        Err(Error::CoefficientOutOfRange {
            poly: 0,
            prime: 2,
            index: 0,
            ..
        })
    ));
    assert_eq!(
        ct2.c0(),
        ct.c0(),
        "a refused read leaves the ciphertext as it was"
    );
    assert!(matches!(
        ct.write_bytes(&mut [0u8; 10]),
        Err(Error::BufferTooSmall { .. })
    ));

    let mut sk_bytes = vec![0u8; SecretKey::<Seal4096>::BYTES];
    sk.write_bytes(&mut sk_bytes).unwrap();
    let mut sk2 = Box::new(SecretKey::<Seal4096>::zeroed());
    sk2.read_bytes(&sk_bytes).unwrap();
    assert_eq!(sk2.ntt_residues(), sk.ntt_residues());
    sk_bytes[100] = 2;
    assert_eq!(
        sk2.read_bytes(&sk_bytes),
        Err(Error::SecretKeyNotTernary { index: 100 })
    );

    let mut pk_bytes = vec![0u8; PublicKey::<Seal4096>::BYTES];
    pk.write_bytes(&mut pk_bytes).unwrap();
    let mut pk2 = Box::new(PublicKey::<Seal4096>::zeroed());
    pk2.read_bytes(&pk_bytes).unwrap();
    assert_eq!(pk2.p0(), pk.p0());
    assert_eq!(pk2.p1(), pk.p1());
    assert!(pk2.read_bytes(&pk_bytes[1..]).is_err());
}

#[test]
fn seeded_public_key_is_reproducible_from_its_seed() {
    let mut sk = Box::new(SecretKey::<Zeppelin4096>::zeroed());
    let mut ws = Box::new(Workspace::new());
    Bfv::<Zeppelin4096>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk)
        .unwrap();
    let mut pk = Box::new(PublicKey::<Zeppelin4096>::zeroed());
    let seed = PublicSeed([2; 32]);
    Bfv::<Zeppelin4096>::generate_public_key_with(
        &sk,
        &seed,
        &SecretSeed::from_bytes([3; 32]),
        &mut pk,
        &mut ws,
    )
    .unwrap();
    assert_eq!(pk.seed(), Some(&seed));
    // p̂1 is the evaluation-domain mask expanded from the seed: INTT(p̂1) = expand_c1_rows.
    let n = Zeppelin4096::N;
    let mut c1 = vec![0u32; 4 * n];
    Bfv::<Zeppelin4096>::expand_c1_rows(&seed, 4, &mut c1).unwrap();
    // p0 + p1·s = −e: small after INTT, checked through the schoolbook product.
    let mut p0 = pk.p0().to_vec();
    let tables = Zeppelin4096::ntt_tables();
    use zeppelin_ring::{NttBackend, Portable};
    for (i, table) in tables.iter().enumerate() {
        Portable
            .inverse(&table.view(), &mut p0[i * n..(i + 1) * n])
            .unwrap();
    }
    let x = schoolbook_x::<Zeppelin4096>(4, &p0, &c1, sk.ternary());
    for (i, &q) in Zeppelin4096::DATA_PRIMES.iter().enumerate() {
        for &v in &x[i * n..(i + 1) * n] {
            let centred = if v > q / 2 {
                v as i64 - q as i64
            } else {
                v as i64
            };
            assert!(centred.abs() <= 21, "p0 + p1·s is not −e with |e| <= 21");
        }
    }
}

/// SEAL's scaling of the plaintext, checked against big integers: a seeded encryption has
/// `X = c0 + c1·s = floor((Q·m + floor((t+1)/2))/t) − e`, so `scaled − X` must be one small
/// value (`|e| <= 21`), the same for every prime — at every level.
fn encoding_is_seal_scaling<P: Params>() {
    use num_traits::ToPrimitive;
    let n = P::N;
    let mut rng = StdRng::seed_from_u64(0x5ca1e);
    let Client { sk, mut ws, .. } = client::<P>(&mut rng);
    let mut coeffs: Vec<u32> = (0..n).map(|_| rng.gen_range(0..P::T)).collect();
    coeffs[0] = 0;
    coeffs[1] = P::T - 1;
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    plain.set_coeffs(&coeffs).unwrap();
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    let mut ct = Box::new(Ciphertext::<P>::zeroed());
    for level in 1..=P::K {
        let seeds = EncryptionSeeds::generate(&mut rng);
        Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, level, &mut seeded, &mut ws).unwrap();
        Bfv::<P>::expand_ct1(&seeded, &mut ct).unwrap();
        let mut x = vec![0u32; level * n];
        Bfv::<P>::decryption_residues(&sk, level, ct.c0(), ct.c1(), &mut x, &mut ws).unwrap();
        let q = q_big::<P>(level);
        for j in 0..n {
            #[expect(clippy::manual_div_ceil, reason = "SEAL's formula as written")]
            let scaled = (&q * coeffs[j] + (P::T + 1) / 2) / P::T;
            let mut diffs = Vec::new();
            for (i, &qi) in P::DATA_PRIMES[..level].iter().enumerate() {
                let s = (&scaled % qi).to_u32().unwrap() as i64;
                let d = (s - x[i * n + j] as i64).rem_euclid(qi as i64);
                diffs.push(if d > qi as i64 / 2 { d - qi as i64 } else { d });
            }
            assert!(
                diffs.iter().all(|&d| d == diffs[0] && d.abs() <= 21),
                "{diffs:?}"
            );
        }
    }
}

#[test]
fn encoding_is_seal_scaling_seal4096() {
    encoding_is_seal_scaling::<Seal4096>();
}

#[test]
fn encoding_is_seal_scaling_zeppelin4096() {
    encoding_is_seal_scaling::<Zeppelin4096>();
}

#[test]
fn encoding_is_seal_scaling_seal8192() {
    encoding_is_seal_scaling::<Seal8192>();
}

/// Random outside data never panics: every parser and decryption returns `Ok` or a typed
/// error, for random lengths, levels and words (in and out of range).
#[test]
fn random_outside_data_never_panics() {
    let n = Zeppelin4096::N;
    let mut rng = StdRng::seed_from_u64(0xbad_da7a);
    let Client {
        mut sk,
        mut pk,
        mut ws,
    } = client::<Zeppelin4096>(&mut rng);
    let mut ct = Box::new(Ciphertext::<Zeppelin4096>::zeroed());
    let mut seeded = Box::new(SeededCiphertext::<Zeppelin4096>::zeroed());
    let mut out = Box::new(Plaintext::<Zeppelin4096>::zeroed());
    let mut outcomes = [0usize; 2];
    for round in 0..200 {
        let level = rng.gen_range(0..=5usize);
        let exact = round % 2 == 0;
        let len = |full: usize, rng: &mut StdRng| {
            if exact {
                full
            } else {
                rng.gen_range(0..full + 64)
            }
        };
        let mut bytes = vec![0u8; len(PublicKey::<Zeppelin4096>::BYTES, &mut rng)];
        rng.fill(&mut bytes[..]);
        let _ = pk.read_bytes(&bytes);
        let mut bytes = vec![0u8; len(n, &mut rng)];
        for b in bytes.iter_mut() {
            *b = [0u8, 1, 0xff, rng.gen()][rng.gen_range(0..4)];
        }
        let _ = sk.read_bytes(&bytes);
        let mut bytes = vec![0u8; len(Ciphertext::<Zeppelin4096>::bytes_at(level), &mut rng)];
        rng.fill(&mut bytes[..]);
        let _ = ct.read_bytes(level, &bytes);
        let mut bytes = vec![0u8; len(SeededCiphertext::<Zeppelin4096>::bytes_at(level), &mut rng)];
        rng.fill(&mut bytes[..]);
        let _ = seeded.read_bytes(level, &bytes);
        // Residues mostly in range (so decryption runs to the end), sometimes not.
        let words: Vec<u32> = (0..len(level.max(1) * n, &mut rng))
            .map(|k| {
                let q = Zeppelin4096::DATA_PRIMES[(k / n).min(3)];
                if rng.gen_ratio(1, 100_000) {
                    rng.gen()
                } else {
                    rng.gen_range(0..q)
                }
            })
            .collect();
        match Bfv::<Zeppelin4096>::decrypt_rows(
            &sk,
            level,
            CoeffRows::new(&words),
            CoeffRows::new(&words),
            &mut out,
            &mut ws,
        ) {
            Ok(()) => outcomes[0] += 1,
            Err(_) => outcomes[1] += 1,
        }
        let _ = Bfv::<Zeppelin4096>::decrypt(&sk, &ct, &mut out, &mut ws);
        let _ = Bfv::<Zeppelin4096>::decrypt_seeded(&sk, &seeded, &mut out, &mut ws);
        let mut slots = vec![0u32; n];
        let _ = encoder::decode(&out, &mut slots);
    }
    // Both outcomes were reached: valid random data decrypts, malformed data is refused.
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
}

/// Keys that were never generated, and keys that are degenerate, are refused: with the
/// all-zero public key `c0 = e1 + Δm` would carry the plaintext in the clear, and with the
/// zero secret key `c0 = Δm − e`.
#[test]
fn empty_and_degenerate_keys_are_refused() {
    type P = Seal4096;
    let n = P::N;
    let mut rng = StdRng::seed_from_u64(0xdead_4e75);
    let Client { sk, pk, mut ws } = client::<P>(&mut rng);
    let plain = Box::new(Plaintext::<P>::zeroed());
    let mut ct = Box::new(Ciphertext::<P>::zeroed());
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    let mut out = Box::new(Plaintext::<P>::zeroed());
    let seeds = EncryptionSeeds::generate(&mut rng);

    let empty_pk = Box::new(PublicKey::<P>::zeroed());
    assert!(!empty_pk.is_set());
    assert_eq!(
        Bfv::<P>::encrypt_public(&empty_pk, &plain, &mut rng, &mut ct, &mut ws),
        Err(Error::KeyNotSet { key: "public" })
    );
    assert_eq!(ct.level(), 0, "nothing was written");
    let empty_sk = Box::new(SecretKey::<P>::zeroed());
    let not_set = Err(Error::KeyNotSet { key: "secret" });
    assert_eq!(
        Bfv::<P>::encrypt_seeded_with(&empty_sk, &plain, &seeds, 3, &mut seeded, &mut ws),
        not_set
    );
    assert_eq!(
        Bfv::<P>::encrypt_symmetric_with(&empty_sk, &plain, &seeds, 3, &mut ct, &mut ws),
        not_set
    );
    let mut pk2 = Box::new(PublicKey::<P>::zeroed());
    assert_eq!(
        Bfv::<P>::generate_public_key(&empty_sk, &mut rng, &mut pk2, &mut ws),
        not_set
    );
    Bfv::<P>::encrypt_public(&pk, &plain, &mut rng, &mut ct, &mut ws).unwrap();
    assert_eq!(
        Bfv::<P>::decrypt(&empty_sk, &ct, &mut out, &mut ws),
        not_set
    );
    assert!(empty_sk.write_bytes(&mut [0u8; 4096]).is_err());
    assert!(empty_pk
        .write_bytes(&mut vec![0u8; PublicKey::<P>::BYTES])
        .is_err());

    // Degenerate public keys: all zero; p0 = −e (the key of s = 0); p1 = 0.
    let k_n = P::K * n;
    let zeros = vec![0u32; k_n];
    let mut pk3 = Box::new(PublicKey::<P>::zeroed());
    assert_eq!(
        pk3.set_ntt_rows(NttRows::new(&zeros), NttRows::new(&zeros)),
        Err(Error::PublicKeyDegenerate {
            poly: 0,
            prime: 0,
            small: n
        })
    );
    let minus_e: Vec<u32> = (0..k_n)
        .map(|k| {
            let q = P::DATA_PRIMES[k / n];
            let e = rng.gen_range(-21i64..=21);
            (e.rem_euclid(q as i64)) as u32
        })
        .collect();
    assert!(matches!(
        pk3.set_ntt_rows(NttRows::new(&minus_e), pk.p1()),
        Err(Error::PublicKeyDegenerate { poly: 0, .. })
    ));
    assert!(matches!(
        pk3.set_ntt_rows(pk.p0(), NttRows::new(&zeros)),
        Err(Error::PublicKeyDegenerate { poly: 1, .. })
    ));
    assert!(!pk3.is_set());
    let zero_bytes = vec![0u8; PublicKey::<P>::BYTES];
    assert!(matches!(
        pk3.read_bytes(&zero_bytes),
        Err(Error::PublicKeyDegenerate { .. })
    ));
    assert!(!pk3.is_set());
    // A genuine key passes both readers.
    pk3.set_ntt_rows(pk.p0(), pk.p1()).unwrap();
    assert!(pk3.is_set());

    // Implausible secret keys: zero, weight 1, all ones.
    let range = SecretKey::<P>::WEIGHT_RANGE;
    let mut sk3 = Box::new(SecretKey::<P>::zeroed());
    let mut weight_one = vec![0u8; n];
    weight_one[17] = 1;
    for (bytes, weight) in [
        (vec![0u8; n], 0),
        (weight_one, 1),
        (vec![1u8; n], n),
        (vec![0xffu8; n], n),
    ] {
        assert_eq!(
            sk3.read_bytes(&bytes),
            Err(Error::SecretKeyWeight {
                weight,
                min: *range.start(),
                max: *range.end()
            })
        );
        assert!(!sk3.is_set());
    }
    let ones = vec![1i8; n];
    assert!(matches!(
        sk3.set_ternary(&ones),
        Err(Error::SecretKeyWeight { .. })
    ));
    // The generated key's weight is well inside the range.
    let weight = sk.ternary().iter().filter(|&&c| c != 0).count();
    assert!(range.contains(&weight), "{weight}");
}

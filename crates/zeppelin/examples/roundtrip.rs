//! Encrypts a batch of real-valued sensor readings the way a device would, decrypts them,
//! and prints what happened: slots, bytes, noise budget, timings.
//!
//! `cargo run -p zeppelin --release --example roundtrip [-- seal4096|zeppelin4096|seal8192|all]`
#![expect(
    clippy::unwrap_used,
    reason = "example program: failing loudly on a bad setup is the right behaviour"
)]

use std::time::Instant;

use rand::rngs::OsRng;
use zeppelin::encoder::{self, FixedPoint};
use zeppelin::{
    Bfv, Ciphertext, Params, Plaintext, PublicKey, Seal4096, Seal8192, SecretKey, SeededCiphertext,
    Workspace, Zeppelin4096,
};

fn run<P: Params>() {
    println!(
        "preset {}: n = {}, t = {}, data primes {:?}, special prime {:?}",
        P::NAME,
        P::N,
        P::T,
        P::DATA_PRIMES,
        P::SPECIAL_PRIME
    );
    let mut rng = OsRng;
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    let mut pk = Box::new(PublicKey::<P>::zeroed());
    let mut ws = Box::new(Workspace::new());
    let start = Instant::now();
    Bfv::<P>::generate_secret_key(&mut rng, &mut sk).unwrap();
    Bfv::<P>::generate_public_key(&sk, &mut rng, &mut pk, &mut ws).unwrap();
    println!("keygen (secret + public):      {:>9.3} ms", ms(start));

    // n temperature readings in °C, 8 fractional bits (error <= 2^-9 °C per value).
    let n = P::N;
    let fp = FixedPoint::<P>::new(8).unwrap();
    let readings: Vec<f64> = (0..n)
        .map(|i| 21.5 + 4.0 * ((i as f64) * 0.01).sin() - 0.003 * i as f64)
        .collect();
    let mut slots = vec![0u32; n];
    fp.quantize_slots(&readings, &mut slots).unwrap();
    let mut plain = Box::new(Plaintext::<P>::zeroed());

    let start = Instant::now();
    encoder::encode(&slots, &mut plain).unwrap();
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    Bfv::<P>::encrypt_seeded(&sk, &plain, &mut rng, &mut seeded, &mut ws).unwrap();
    println!("encode + seeded encrypt:       {:>9.3} ms", ms(start));

    let start = Instant::now();
    encoder::encode(&slots, &mut plain).unwrap();
    let mut public = Box::new(Ciphertext::<P>::zeroed());
    Bfv::<P>::encrypt_public(&pk, &plain, &mut rng, &mut public, &mut ws).unwrap();
    println!("encode + public-key encrypt:   {:>9.3} ms", ms(start));

    let seeded_bytes = SeededCiphertext::<P>::bytes_at(P::K);
    let full_bytes = Ciphertext::<P>::bytes_at(P::K);
    println!(
        "seeded ciphertext {seeded_bytes} bytes, full ciphertext {full_bytes} bytes ({:.1} %)",
        100.0 * seeded_bytes as f64 / full_bytes as f64
    );

    let mut decrypted = Box::new(Plaintext::<P>::zeroed());
    let mut back = vec![0u32; n];
    let start = Instant::now();
    Bfv::<P>::decrypt_seeded(&sk, &seeded, &mut decrypted, &mut ws).unwrap();
    encoder::decode(&decrypted, &mut back).unwrap();
    println!("decrypt + decode (seeded):     {:>9.3} ms", ms(start));
    assert_eq!(back[..], slots[..]);

    let start = Instant::now();
    Bfv::<P>::decrypt(&sk, &public, &mut decrypted, &mut ws).unwrap();
    encoder::decode(&decrypted, &mut back).unwrap();
    println!("decrypt + decode (public-key): {:>9.3} ms", ms(start));
    assert_eq!(back[..], slots[..]);

    let mut values = vec![0f64; n];
    fp.dequantize_slots(&back, &mut values);
    let worst = readings
        .iter()
        .zip(&values)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    println!("slots 0..4: readings {:?}", &readings[..4]);
    println!("            decrypted {:?}", &values[..4]);
    println!(
        "largest quantisation error over {n} slots: {worst:.6} (bound {:.6})",
        0.5 / 256.0
    );

    let mut expanded = Box::new(Ciphertext::<P>::zeroed());
    Bfv::<P>::expand_ct1(&seeded, &mut expanded).unwrap();
    let mut x_rows = vec![0u32; P::K * n];
    let b_seeded = Bfv::<P>::noise_budget(&sk, &expanded, &mut x_rows, &mut ws).unwrap();
    let b_public = Bfv::<P>::noise_budget(&sk, &public, &mut x_rows, &mut ws).unwrap();
    println!("noise budget: seeded {b_seeded} bits, public-key {b_public} bits\n");
}

fn ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("zeppelin4096") => run::<Zeppelin4096>(),
        Some("seal8192") => run::<Seal8192>(),
        Some("seal4096") | None => run::<Seal4096>(),
        Some("all") => {
            run::<Seal4096>();
            run::<Zeppelin4096>();
            run::<Seal8192>();
        }
        Some(other) => {
            eprintln!("unknown preset {other}: use seal4096, zeppelin4096, seal8192 or all");
            std::process::exit(2);
        }
    }
}

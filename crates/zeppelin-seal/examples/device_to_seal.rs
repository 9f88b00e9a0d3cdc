//! Device → SEAL → device, as a user writes it: keygen and seeded encryption on the "device"
//! (`zeppelin`), the wire form to the server, conversion into a SEAL `Ciphertext`, an
//! evaluation SEAL performs (`mod_switch_to_next`), SEAL's zstd serialization back, and
//! decryption on the device.
//!
//! Run with `cargo run --release -p zeppelin-seal --example device_to_seal`.

use rand_core::OsRng;
use zeppelin::{
    encoder, Bfv, Ciphertext, Params, Plaintext, Seal4096, SecretKey, SeededCiphertext, Workspace,
};
use zeppelin_seal::convert::mod_switch_to_next;
use zeppelin_seal::device::{self, DeviceContext};
use zeppelin_seal::{Ciphertext as SealCiphertext, ComprMode};

type P = Seal4096;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Device: a secret key and a seeded encryption of 4096 slots.
    let (mut sk, mut ws) = (
        Box::new(SecretKey::<P>::zeroed()),
        Box::new(Workspace::new()),
    );
    Bfv::<P>::generate_secret_key(&mut OsRng, &mut sk)?;
    let slots: Vec<u32> = (0..P::N as u32).map(|i| i * 16 % P::T).collect();
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    encoder::encode(&slots, &mut plain)?;
    let mut seeded = Box::new(SeededCiphertext::<P>::zeroed());
    Bfv::<P>::encrypt_seeded(&sk, &plain, &mut OsRng, &mut seeded, &mut ws)?;
    let wire = device::to_wire_seeded(&seeded)?;

    // Server: the bytes as a SEAL ciphertext, one level down, saved as SEAL does.
    let ctx = DeviceContext::<P>::new()?;
    let ct = device::read_any(&ctx, &wire)?.to_seal(&ctx)?;
    let lower = mod_switch_to_next(ctx.seal(), &ct)?;
    let reply = lower.save(ComprMode::Zstd)?;

    // Device again: SEAL's bytes back into a device ciphertext, decrypted.
    let mut back = Box::new(Ciphertext::<P>::zeroed());
    device::from_seal(&ctx, &SealCiphertext::load(ctx.seal(), &reply)?, &mut back)?;
    Bfv::<P>::decrypt(&sk, &back, &mut plain, &mut ws)?;
    let mut decoded = vec![0u32; P::N];
    encoder::decode(&plain, &mut decoded)?;

    assert_eq!(decoded, slots);
    println!(
        "device {} B seeded -> SEAL {} B at {} primes -> {} B zstd at {} primes -> {} slots back exactly",
        wire.len(),
        ct.save(ComprMode::None)?.len(),
        ct.coeff_modulus_size,
        reply.len(),
        back.level(),
        decoded.len()
    );
    Ok(())
}

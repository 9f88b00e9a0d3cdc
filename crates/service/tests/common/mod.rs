//! Test and benchmark helpers: a device key and seeded ciphertexts of known slots, and
//! decryption of the service's results with the same key.

#![allow(dead_code)]

use zeppelin::{
    encoder, Bfv, Params, Plaintext, Seal4096, SecretKey, SecretSeed, SeededCiphertext, Workspace,
};
use zeppelin_seal::device::{self, AnyCiphertext, DeviceContext};
use zeppelin_seal::keygen::KeyGenerator;
use zeppelin_seal::{Ciphertext, ComprMode};

pub type P = Seal4096;

/// A device: its secret key and the SEAL context of its preset.
pub struct Device {
    pub ctx: DeviceContext<P>,
    pub sk: Box<SecretKey<P>>,
}

pub type TestResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

impl Device {
    pub fn new(seed: u8) -> TestResult<Self> {
        let ctx = DeviceContext::<P>::new()?;
        let mut sk = Box::new(SecretKey::<P>::zeroed());
        Bfv::<P>::generate_secret_key_with(&SecretSeed::from_bytes([seed; 32]), &mut sk)?;
        Ok(Self { ctx, sk })
    }

    /// The seeded wire form of an encryption of `slots`.
    pub fn encrypt_seeded(&self, slots: &[u32]) -> TestResult<Vec<u8>> {
        let mut plain = Box::new(Plaintext::<P>::zeroed());
        encoder::encode::<P>(slots, &mut plain)?;
        let mut ws = Box::new(Workspace::<P>::new());
        let mut ct = Box::new(SeededCiphertext::<P>::zeroed());
        Bfv::<P>::encrypt_seeded(&self.sk, &plain, &mut rand_core::OsRng, &mut ct, &mut ws)?;
        Ok(device::to_wire_seeded(&ct)?)
    }

    /// The full wire form of an encryption of `slots`.
    pub fn encrypt_full(&self, slots: &[u32]) -> TestResult<Vec<u8>> {
        let seeded = self.encrypt_seeded(slots)?;
        let mut full = Box::new(zeppelin::Ciphertext::<P>::zeroed());
        device::read_any(&self.ctx, &seeded)?.to_device(&self.ctx, &mut full)?;
        Ok(device::to_wire_full(&full)?)
    }

    /// The slots of a SEAL ciphertext (size 2) the service returned.
    pub fn decrypt(&self, seal_bytes: &[u8]) -> TestResult<Vec<u32>> {
        let ct = Ciphertext::load(self.ctx.seal(), seal_bytes)?;
        let mut plain = Box::new(Plaintext::<P>::zeroed());
        let mut ws = Box::new(Workspace::<P>::new());
        AnyCiphertext::<P>::Seal(ct).decrypt(&self.ctx, &self.sk, &mut plain, &mut ws)?;
        let mut slots = vec![0u32; P::N];
        encoder::decode::<P>(&plain, &mut slots)?;
        Ok(slots)
    }

    /// SEAL `RelinKeys` bytes for this device's key.
    pub fn relin_keys(&self) -> TestResult<Vec<u8>> {
        let seal_sk = device::secret_key(&self.ctx, &self.sk)?;
        let keys =
            KeyGenerator::new(self.ctx.seal(), &seal_sk)?.relin_keys(&mut rand_core::OsRng)?;
        Ok(keys.save(ComprMode::None)?)
    }
}

impl Device {
    /// SEAL `GaloisKeys` bytes (SEAL's default elements) for this device's key.
    pub fn galois_keys(&self) -> TestResult<Vec<u8>> {
        let seal_sk = device::secret_key(&self.ctx, &self.sk)?;
        let elements = zeppelin_seal::keygen::all_galois_elements(P::N);
        let keys = KeyGenerator::new(self.ctx.seal(), &seal_sk)?
            .galois_keys(&elements, &mut rand_core::OsRng)?;
        Ok(keys.save(ComprMode::None)?)
    }
}

/// Slots `f(slot)` for one reading, every value below t.
pub fn slots(f: impl Fn(usize) -> u32) -> Vec<u32> {
    (0..P::N).map(|i| f(i) % P::T).collect()
}

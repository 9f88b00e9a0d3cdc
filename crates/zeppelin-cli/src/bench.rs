//! `zeppelin bench`: in-process medians of the device operations and of one NTT on this host,
//! so that `scripts/peer_bench.py` can set them beside Microsoft SEAL, fhe.rs and tfhe-ntt in
//! the same run.
//!
//! Every run draws fresh randomness (as SEAL does inside each call) and works on boxed,
//! reused buffers; no file is read or written inside a timed region. The figures are
//! wall-clock medians for comparison on one machine, not a claim about the microcontroller.
//!
//! [`ClientBench`] and [`NttBench`] are the timed operations themselves; the peer benchmark's
//! round server (`bench/peer`) calls them too, so both report the same work.

use std::hint::black_box;
use std::time::Instant;

use clap::Args;
use rand_core::{OsRng, RngCore};

use zeppelin::{
    encoder, Bfv, Ciphertext, EncryptionSeeds, Plaintext, PublicKey, SecretKey, SecretSeed,
    SeededCiphertext, Workspace,
};
use zeppelin_ring::{default_backend, DefaultBackend, NttBackend, NttTable};
use zeppelin_seal::device::{self, DeviceContext, SealPreset};

use crate::error::{CliError, CliResult, Operation};
use crate::outln;
use crate::preset::{zero_slots, PresetFn, PresetId, Slots, DEFAULT_PRESET};

/// Arguments of `zeppelin bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// Parameter preset of the device.
    #[arg(long, value_enum, default_value = DEFAULT_PRESET)]
    preset: PresetId,
    /// Timed runs per operation; the median is reported.
    #[arg(long, default_value_t = 101, value_parser = clap::value_parser!(u32).range(1..))]
    runs: u32,
    /// Print one JSON object (microseconds) instead of a table.
    #[arg(long)]
    json: bool,
}

/// A timed client operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientOp {
    /// Encode the slots, then seeded symmetric encryption (c1 left as its seed).
    SeededEncrypt,
    /// Encode the slots, then symmetric encryption with c1 expanded.
    SymmetricEncrypt,
    /// Encode the slots, then public-key encryption.
    PublicEncrypt,
    /// Decrypt a public-key ciphertext of the slots, then decode.
    DecryptDecode,
    /// A fresh secret key and its public key.
    Keygen,
    /// The server side of `adapt`: parse the seeded wire form and expand c1.
    ExpandSeed,
}

impl ClientOp {
    /// Every client operation, in print order.
    pub const ALL: [ClientOp; 6] = [
        ClientOp::SeededEncrypt,
        ClientOp::SymmetricEncrypt,
        ClientOp::PublicEncrypt,
        ClientOp::DecryptDecode,
        ClientOp::Keygen,
        ClientOp::ExpandSeed,
    ];

    /// The JSON key.
    pub const fn key(self) -> &'static str {
        match self {
            ClientOp::SeededEncrypt => "encode_seeded_encrypt",
            ClientOp::SymmetricEncrypt => "encode_symmetric_encrypt",
            ClientOp::PublicEncrypt => "encode_public_encrypt",
            ClientOp::DecryptDecode => "decrypt_decode",
            ClientOp::Keygen => "keygen_secret_public",
            ClientOp::ExpandSeed => "expand_seed",
        }
    }

    /// The table label.
    pub const fn label(self) -> &'static str {
        match self {
            ClientOp::SeededEncrypt => "encode + seeded encrypt",
            ClientOp::SymmetricEncrypt => "encode + symmetric encrypt",
            ClientOp::PublicEncrypt => "encode + public-key encrypt",
            ClientOp::DecryptDecode => "decrypt + decode",
            ClientOp::Keygen => "keygen (secret + public)",
            ClientOp::ExpandSeed => "expand seed (adapt: parse seeded wire form, expand c1)",
        }
    }
}

/// The operations, in print order: (JSON key, table label). The client operations, then the
/// NTT of one prime (the preset's first data prime, at the preset's degree).
pub const OPERATIONS: [(&str, &str); ClientOp::ALL.len() + 2] = {
    let mut ops = [("", ""); ClientOp::ALL.len() + 2];
    let mut i = 0;
    while i < ClientOp::ALL.len() {
        ops[i] = (ClientOp::ALL[i].key(), ClientOp::ALL[i].label());
        i += 1;
    }
    ops[i] = ("ntt_forward", "NTT forward, one prime");
    ops[i + 1] = ("ntt_inverse", "NTT inverse with n^-1 scaling, one prime");
    ops
};

/// Runs `zeppelin bench`.
pub fn run(a: &BenchArgs) -> CliResult<()> {
    struct Bench(usize);
    impl PresetFn for Bench {
        type Output = CliResult<BenchReport>;
        fn call<P: SealPreset>(self) -> Self::Output {
            bench::<P>(self.0)
        }
    }
    let report = a.preset.run(Bench(a.runs as usize))?;
    if a.json {
        let ops: Vec<String> = OPERATIONS
            .iter()
            .zip(&report.medians)
            .map(|((key, _), us)| format!("\"{key}\": {us:.3}"))
            .collect();
        outln!(
            "{{\"preset\": \"{}\", \"runs\": {}, \"unit\": \"us\", \"ntt_prime\": {}, \"ntt_degree\": {}, \"backend\": \"{}\", \"operations\": {{{}}}}}",
            a.preset.name(),
            a.runs,
            report.ntt_prime,
            report.n,
            report.backend,
            ops.join(", ")
        )?;
    } else {
        outln!(
            "zeppelin bench: preset {}, n = {}, t = {}, medians of {} runs on this host",
            a.preset.name(),
            report.n,
            report.t,
            a.runs
        )?;
        outln!(
            "NTT rows: q = {} (first data prime), n = {}, backend {}",
            report.ntt_prime,
            report.n,
            report.backend
        )?;
        for ((_, label), us) in OPERATIONS.iter().zip(&report.medians) {
            outln!("{label:<56} {us:>10.1} µs")?;
        }
    }
    Ok(())
}

/// What `bench` measured.
struct BenchReport {
    medians: [f64; OPERATIONS.len()],
    n: usize,
    t: u32,
    ntt_prime: u32,
    backend: &'static str,
}

/// Wall-clock times of `runs` calls of `op`, in microseconds, in call order; stops at the
/// first error.
pub fn timings_us<E>(runs: usize, mut op: impl FnMut() -> Result<(), E>) -> Result<Vec<f64>, E> {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t0 = Instant::now();
        op()?;
        times.push(t0.elapsed().as_secs_f64() * 1e6);
    }
    Ok(times)
}

/// Median wall-clock time of `runs` calls of `op`, in microseconds.
fn median_us(runs: usize, mut op: impl FnMut() -> CliResult<()>) -> CliResult<f64> {
    // One untimed call warms caches and the lazily built tables.
    op()?;
    let mut times = timings_us(runs, op)?;
    times.sort_by(f64::total_cmp);
    Ok(times[runs / 2])
}

/// Medians in the order of [`OPERATIONS`].
fn bench<P: SealPreset>(runs: usize) -> CliResult<BenchReport> {
    let mut client = ClientBench::<P>::new()?;
    let mut medians = [0.0; OPERATIONS.len()];
    for (median, op) in medians.iter_mut().zip(ClientOp::ALL) {
        *median = median_us(runs, || client.run(op))?;
        client.check()?;
    }
    let ntt_prime = P::DATA_PRIMES[0];
    let mut ntt = NttBench::new(ntt_prime, P::N)?;
    let n = ClientOp::ALL.len();
    medians[n] = median_us(runs, || ntt.forward())?;
    medians[n + 1] = median_us(runs, || ntt.inverse())?;
    Ok(BenchReport {
        medians,
        n: P::N,
        t: P::T,
        ntt_prime,
        backend: ntt.backend_name(),
    })
}

/// The client operations of preset `P` on random slots, with keys made once and boxed buffers
/// reused from call to call.
pub struct ClientBench<P: SealPreset> {
    slots: Slots,
    decoded: Slots,
    sk: Box<SecretKey<P>>,
    pk: Box<PublicKey<P>>,
    ws: Box<Workspace<P>>,
    plain: Box<Plaintext<P>>,
    seeded: Box<SeededCiphertext<P>>,
    full: Box<Ciphertext<P>>,
    /// A public-key ciphertext of `slots`, decrypted by [`ClientOp::DecryptDecode`].
    to_decrypt: Box<Ciphertext<P>>,
    fresh_sk: Box<SecretKey<P>>,
    fresh_pk: Box<PublicKey<P>>,
    ctx: DeviceContext<P>,
    /// A seeded wire form of `slots`, expanded by [`ClientOp::ExpandSeed`].
    wire: Vec<u8>,
    /// Whether a timed call wrote a ciphertext of the slots into `full`.
    full_written: bool,
}

impl<P: SealPreset> ClientBench<P> {
    /// Random slots, a key pair, a public-key ciphertext and a seeded wire form of the slots.
    pub fn new() -> CliResult<Self> {
        let mut slots = zero_slots::<P>();
        for s in slots.iter_mut() {
            *s = OsRng.next_u32() % P::T;
        }
        let mut b = Self {
            slots,
            decoded: zero_slots::<P>(),
            sk: Box::new(SecretKey::<P>::zeroed()),
            pk: Box::new(PublicKey::<P>::zeroed()),
            ws: Box::new(Workspace::new()),
            plain: Box::new(Plaintext::<P>::zeroed()),
            seeded: Box::new(SeededCiphertext::<P>::zeroed()),
            full: Box::new(Ciphertext::<P>::zeroed()),
            to_decrypt: Box::new(Ciphertext::<P>::zeroed()),
            fresh_sk: Box::new(SecretKey::<P>::zeroed()),
            fresh_pk: Box::new(PublicKey::<P>::zeroed()),
            ctx: DeviceContext::<P>::new().map_err(CliError::seal(Operation::SealParameters))?,
            wire: Vec::new(),
            full_written: false,
        };
        Bfv::<P>::generate_secret_key(&mut OsRng, &mut b.sk)
            .map_err(CliError::device(Operation::SecretKeyGeneration))?;
        Bfv::<P>::generate_public_key(&b.sk, &mut OsRng, &mut b.pk, &mut b.ws)
            .map_err(CliError::device(Operation::PublicKeyGeneration))?;
        encoder::encode(&b.slots, &mut b.plain).map_err(CliError::device(Operation::Encoding))?;
        let seed = SecretSeed::generate(&mut OsRng);
        Bfv::<P>::encrypt_public_with(&b.pk, &b.plain, &seed, P::K, &mut b.to_decrypt, &mut b.ws)
            .map_err(CliError::device(Operation::PublicEncryption))?;
        let seeds = EncryptionSeeds::generate(&mut OsRng);
        Bfv::<P>::encrypt_seeded_with(&b.sk, &b.plain, &seeds, P::K, &mut b.seeded, &mut b.ws)
            .map_err(CliError::device(Operation::SeededEncryption))?;
        b.wire = device::to_wire_seeded(&b.seeded).map_err(CliError::seal(Operation::WireForm))?;
        Ok(b)
    }

    /// One call of `op`.
    pub fn run(&mut self, op: ClientOp) -> CliResult<()> {
        match op {
            ClientOp::SeededEncrypt => {
                self.encode()?;
                let seeds = EncryptionSeeds::generate(&mut OsRng);
                Bfv::<P>::encrypt_seeded_with(
                    &self.sk,
                    &self.plain,
                    &seeds,
                    P::K,
                    &mut self.seeded,
                    &mut self.ws,
                )
                .map_err(CliError::device(Operation::SeededEncryption))?;
                black_box(self.seeded.c0());
            }
            ClientOp::SymmetricEncrypt => {
                self.encode()?;
                let seeds = EncryptionSeeds::generate(&mut OsRng);
                Bfv::<P>::encrypt_symmetric_with(
                    &self.sk,
                    &self.plain,
                    &seeds,
                    P::K,
                    &mut self.full,
                    &mut self.ws,
                )
                .map_err(CliError::device(Operation::SymmetricEncryption))?;
                black_box(self.full.c0());
                self.full_written = true;
            }
            ClientOp::PublicEncrypt => {
                self.encode()?;
                let seed = SecretSeed::generate(&mut OsRng);
                Bfv::<P>::encrypt_public_with(
                    &self.pk,
                    &self.plain,
                    &seed,
                    P::K,
                    &mut self.full,
                    &mut self.ws,
                )
                .map_err(CliError::device(Operation::PublicEncryption))?;
                black_box(self.full.c0());
                self.full_written = true;
            }
            ClientOp::DecryptDecode => {
                Bfv::<P>::decrypt(&self.sk, &self.to_decrypt, &mut self.plain, &mut self.ws)
                    .map_err(CliError::device(Operation::Decryption))?;
                encoder::decode(&self.plain, &mut self.decoded)
                    .map_err(CliError::device(Operation::Decoding))?;
                black_box(&self.decoded);
            }
            ClientOp::Keygen => {
                Bfv::<P>::generate_secret_key(&mut OsRng, &mut self.fresh_sk)
                    .map_err(CliError::device(Operation::SecretKeyGeneration))?;
                Bfv::<P>::generate_public_key(
                    &self.fresh_sk,
                    &mut OsRng,
                    &mut self.fresh_pk,
                    &mut self.ws,
                )
                .map_err(CliError::device(Operation::PublicKeyGeneration))?;
                black_box(self.fresh_pk.p0());
            }
            ClientOp::ExpandSeed => {
                device::read_any(&self.ctx, black_box(&self.wire))
                    .and_then(|ct| ct.to_device(&self.ctx, &mut self.full))
                    .map_err(CliError::seal(Operation::Adapting))?;
                black_box(self.full.c1());
                self.full_written = true;
            }
        }
        Ok(())
    }

    /// Checks the work the timed calls did, so that a broken build cannot report a time for
    /// wrong work: the ciphertext [`ClientOp::DecryptDecode`] decrypts, and the last one an
    /// encryption or seed expansion wrote (if any), decrypt and decode to the slots.
    pub fn check(&mut self) -> CliResult<()> {
        let mut ok = self.decrypts_to_slots(false)?;
        if self.full_written {
            ok &= self.decrypts_to_slots(true)?;
        }
        if ok {
            Ok(())
        } else {
            Err(CliError::RoundTrip { command: "bench" })
        }
    }

    /// Whether `full` (else `to_decrypt`) decrypts and decodes to the slots.
    fn decrypts_to_slots(&mut self, full: bool) -> CliResult<bool> {
        let ct = if full { &self.full } else { &self.to_decrypt };
        Bfv::<P>::decrypt(&self.sk, ct, &mut self.plain, &mut self.ws)
            .map_err(CliError::device(Operation::Decryption))?;
        encoder::decode(&self.plain, &mut self.decoded)
            .map_err(CliError::device(Operation::Decoding))?;
        Ok(self.decoded[..] == self.slots[..])
    }

    /// The slots, encoded into `plain`: the first step of every encryption.
    fn encode(&mut self) -> CliResult<()> {
        encoder::encode(&self.slots, &mut self.plain).map_err(CliError::device(Operation::Encoding))
    }
}

/// One forward and one inverse NTT of a random polynomial with the build's default backend.
pub struct NttBench {
    backend: DefaultBackend,
    table: NttTable<Vec<u32>>,
    data: Vec<u32>,
}

impl NttBench {
    /// The table of prime `q` (`< 2^30`, `q ≡ 1 mod 2n`) at degree `n`, and random coefficients.
    pub fn new(q: u32, n: usize) -> CliResult<Self> {
        let table =
            NttTable::new_vec(q, n).map_err(|e| CliError::device(Operation::NttTable)(e.into()))?;
        let data = (0..n).map(|_| OsRng.next_u32() % q).collect();
        Ok(Self {
            backend: default_backend(),
            table,
            data,
        })
    }

    /// The backend's name (`"avx512"`, `"avx2"`, `"portable"`, ...).
    pub fn backend_name(&self) -> &'static str {
        self.backend.name()
    }

    /// One forward transform, in place (the result stays valid input for the next call).
    pub fn forward(&mut self) -> CliResult<()> {
        self.backend
            .forward(&self.table.view(), black_box(&mut self.data))
            .map_err(|e| CliError::device(Operation::Ntt)(e.into()))
    }

    /// One inverse transform with its `n^-1` scaling, in place.
    pub fn inverse(&mut self) -> CliResult<()> {
        self.backend
            .inverse(&self.table.view(), black_box(&mut self.data))
            .map_err(|e| CliError::device(Operation::Ntt)(e.into()))
    }
}

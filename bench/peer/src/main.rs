//! The peer benchmark's round server: this project's NTT and BFV client beside tfhe-ntt's
//! `prime32::Plan` and fhe.rs in one process, and zeppelin-server's evaluator on SEAL's own
//! ciphertexts and keys (`--seal-dir DIR`, written by the driver), driven line by line from
//! `scripts/peer_bench.py`, which interleaves its rounds with SEAL's in the same run; beside
//! them, the service's aggregation on its linear path and on the path before it
//! ([`aggregate`]), and the evalmult engine with its own transforms ([`engine`]).
//!
//! Usage: `zeppelin-peer-bench --seal-dir DIR`. Protocol: one command per line on stdin, one
//! JSON line on stdout per command.
//! - `info`: the backends, parameters and the self-checks' result (run at start).
//! - `round K NTT_K`: every client, server, aggregation and engine-batch operation K times and
//!   every NTT (the engine's too) NTT_K times,
//!   ours and the peer's alternating operation by operation; answers every timing in
//!   microseconds.
//! - `throughput SECONDS`: multiply + relinearize per second on one core and on all.
//! - `quit`: ends the process.
//!
//! At start, before answering anything, the server checks both NTTs and both clients against
//! each other or against their inputs and warms every operation up. A failure is one JSON
//! line `{"error": ...}` and exit status 1.

use std::io::{self, BufRead, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fhe::bfv::{BfvParameters, BfvParametersBuilder, Ciphertext, Encoding, Plaintext, PublicKey};
use fhe_traits::{FheDecoder, FheDecrypter, FheEncoder, FheEncrypter};
use serde_json::{json, Map, Value};
use zeppelin::{Params, Seal4096};
use zeppelin_cli::bench::{timings_us, ClientBench, ClientOp, NttBench};
use zeppelin_ring::{default_backend, NttBackend, NttTable};

mod aggregate;
mod engine;
mod evaluator;
#[cfg(target_arch = "x86_64")]
mod floor;
use aggregate::{AggregateBench, AggregatePath, AggregateRow};
use engine::{EngineBench, EngineOp};
use evaluator::{ServerBench, ServerOp};

/// The NTT sizes and their prime: one 27-bit prime `q ≡ 1 mod 2n` each (below 2^30, as
/// `zeppelin_ring::Modulus` requires, and on tfhe-ntt's fastest `p < 2^30` path). 134176769 is
/// the prime (Seal4096's first); 133857281 is the largest 27-bit prime `≡ 1 mod 2^15`.
const NTT_SIZES: [(usize, u32); 3] = [
    (4096, 134_176_769),
    (8192, 133_857_281),
    (16384, 133_857_281),
];

/// Minimum warm-up per operation, and minimum number of warm-up calls.
const WARM_UP: Duration = Duration::from_millis(100);
const WARM_UP_CALLS: usize = 5;

type Result<T> = std::result::Result<T, String>;

/// Who runs an operation.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Ours,
    TfheNtt,
    FheRs,
    /// Our aggregation on the path before the linear sums (every upload converted to a SEAL
    /// ciphertext).
    SealForm,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Ours => "ours",
            Side::TfheNtt => "tfhe-ntt",
            Side::FheRs => "fhe.rs",
            Side::SealForm => "seal-form",
        }
    }
}

/// What is timed.
#[derive(Clone, Copy)]
enum Kind {
    /// Forward NTT of `NTT_SIZES[i]`.
    Forward(usize),
    /// Inverse NTT with `n^-1` scaling of `NTT_SIZES[i]`.
    Inverse(usize),
    /// A client operation at Seal4096's parameters.
    Client(ClientOp),
    /// An evaluator operation at Seal4096 (SEAL's side is timed by the driver).
    Server(ServerOp),
    /// The bare butterfly arithmetic of one transform of `NTT_SIZES[i]` ([`floor`]).
    ArithmeticFloor(usize),
    /// A sum of [`aggregate::UPLOADS`] seeded uploads (ours: the linear path).
    Aggregate(AggregateRow),
    /// The evalmult engine's batch, or its transforms.
    Engine(EngineOp),
}

/// Whether the CPU runs the arithmetic-floor probe (x86-64 with AVX-512 F).
fn floor_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        floor::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[derive(Clone)]
struct Op {
    key: String,
    side: Side,
    kind: Kind,
}

/// The client operations timed against the peers (`expand_seed` has a SEAL counterpart only,
/// timed by the driver; it is ours alone here).
const CLIENT_OPS: [ClientOp; 6] = ClientOp::ALL;

/// fhe.rs's counterpart of a client operation; fhe.rs has no seeded form distinct from its
/// secret-key encryption, so both the seeded and the symmetric row time that.
fn fhe_has(op: ClientOp) -> bool {
    !matches!(op, ClientOp::ExpandSeed)
}

/// Every operation in round order: for each one ours, then the peer's.
fn operations() -> Vec<Op> {
    let mut ops = Vec::new();
    for (i, (n, _)) in NTT_SIZES.iter().enumerate() {
        for (name, kind) in [
            ("ntt_forward", Kind::Forward(i)),
            ("ntt_inverse", Kind::Inverse(i)),
        ] {
            for side in [Side::Ours, Side::TfheNtt] {
                ops.push(Op {
                    key: format!("{name}_{n}"),
                    side,
                    kind,
                });
            }
        }
    }
    if floor_available() {
        for (i, (n, _)) in NTT_SIZES.iter().enumerate() {
            ops.push(Op {
                key: format!("ntt_arithmetic_floor_{n}"),
                side: Side::Ours,
                kind: Kind::ArithmeticFloor(i),
            });
        }
    }
    for op in CLIENT_OPS {
        for side in [Side::Ours, Side::FheRs] {
            if side == Side::FheRs && !fhe_has(op) {
                continue;
            }
            ops.push(Op {
                key: op.key().to_string(),
                side,
                kind: Kind::Client(op),
            });
        }
    }
    for op in ServerOp::ALL {
        ops.push(Op {
            key: op.key().to_string(),
            side: Side::Ours,
            kind: Kind::Server(op),
        });
    }
    for row in AggregateRow::ALL {
        for side in [Side::Ours, Side::SealForm] {
            ops.push(Op {
                key: row.key().to_string(),
                side,
                kind: Kind::Aggregate(row),
            });
        }
    }
    for op in EngineOp::ALL {
        ops.push(Op {
            key: op.key().to_string(),
            side: Side::Ours,
            kind: Kind::Engine(op),
        });
    }
    ops
}

/// tfhe-ntt's plan of one size with its buffer.
struct TfheNtt {
    plan: tfhe_ntt::prime32::Plan,
    data: Vec<u32>,
}

/// fhe.rs at Seal4096's degree, plaintext modulus and data primes.
struct FheRs {
    params: Arc<BfvParameters>,
    sk: fhe::bfv::SecretKey,
    pk: PublicKey,
    slots: Vec<u64>,
    /// A public-key ciphertext of `slots`, decrypted by the decrypt row.
    to_decrypt: Ciphertext,
    decoded: Vec<u64>,
    rng: rand::rngs::ThreadRng,
}

impl FheRs {
    fn new() -> Result<Self> {
        let moduli: Vec<u64> = Seal4096::DATA_PRIMES
            .iter()
            .map(|&q| u64::from(q))
            .collect();
        let params = BfvParametersBuilder::new()
            .set_degree(Seal4096::N)
            .set_plaintext_modulus(u64::from(Seal4096::T))
            .set_moduli(&moduli)
            .build_arc()
            .map_err(|e| format!("fhe.rs parameters: {e}"))?;
        let mut rng = rand::rng();
        let sk = fhe::bfv::SecretKey::random(&params, &mut rng);
        let pk = PublicKey::new(&sk, &mut rng);
        let slots: Vec<u64> = (0..Seal4096::N)
            .map(|_| rand::Rng::random_range(&mut rng, 0..u64::from(Seal4096::T)))
            .collect();
        let pt = Plaintext::try_encode(&slots, Encoding::simd(), &params)
            .map_err(|e| format!("fhe.rs encode: {e}"))?;
        let to_decrypt = pk
            .try_encrypt(&pt, &mut rng)
            .map_err(|e| format!("fhe.rs encrypt: {e}"))?;
        Ok(Self {
            params,
            sk,
            pk,
            slots,
            to_decrypt,
            decoded: Vec::new(),
            rng,
        })
    }

    fn encode(&self) -> Result<Plaintext> {
        Plaintext::try_encode(&self.slots, Encoding::simd(), &self.params)
            .map_err(|e| format!("fhe.rs encode: {e}"))
    }

    /// Decrypts and decodes `ct`.
    fn decrypt_decode(&self, ct: &Ciphertext) -> Result<Vec<u64>> {
        let pt = self
            .sk
            .try_decrypt(ct)
            .map_err(|e| format!("fhe.rs decrypt: {e}"))?;
        Vec::<u64>::try_decode(&pt, Encoding::simd()).map_err(|e| format!("fhe.rs decode: {e}"))
    }

    fn run(&mut self, op: ClientOp) -> Result<()> {
        match op {
            ClientOp::SeededEncrypt | ClientOp::SymmetricEncrypt => {
                let pt = self.encode()?;
                let ct: Ciphertext = self
                    .sk
                    .try_encrypt(&pt, &mut self.rng)
                    .map_err(|e| format!("fhe.rs encrypt: {e}"))?;
                std::hint::black_box(ct);
            }
            ClientOp::PublicEncrypt => {
                let pt = self.encode()?;
                let ct = self
                    .pk
                    .try_encrypt(&pt, &mut self.rng)
                    .map_err(|e| format!("fhe.rs encrypt: {e}"))?;
                std::hint::black_box(ct);
            }
            ClientOp::DecryptDecode => {
                self.decoded = self.decrypt_decode(&self.to_decrypt)?;
                std::hint::black_box(&self.decoded);
            }
            ClientOp::Keygen => {
                let sk = fhe::bfv::SecretKey::random(&self.params, &mut self.rng);
                let pk = PublicKey::new(&sk, &mut self.rng);
                std::hint::black_box(pk);
            }
            ClientOp::ExpandSeed => return Err("fhe.rs has no seeded wire form".into()),
        }
        Ok(())
    }

    /// fhe.rs decrypts its secret-key and public-key encryptions of the slots back to them.
    fn check(&mut self) -> Result<()> {
        let pt = self.encode()?;
        let sym: Ciphertext = self
            .sk
            .try_encrypt(&pt, &mut self.rng)
            .map_err(|e| format!("fhe.rs encrypt: {e}"))?;
        let public = self
            .pk
            .try_encrypt(&pt, &mut self.rng)
            .map_err(|e| format!("fhe.rs encrypt: {e}"))?;
        for ct in [&sym, &public, &self.to_decrypt] {
            if self.decrypt_decode(ct)? != self.slots {
                return Err("fhe.rs: decrypted slots differ from the encrypted ones".into());
            }
        }
        Ok(())
    }
}

struct Server {
    ours_ntt: Vec<NttBench>,
    tfhe: Vec<TfheNtt>,
    client: ClientBench<Seal4096>,
    fhe: FheRs,
    evaluator: ServerBench,
    aggregate: AggregateBench,
    engine: EngineBench,
}

impl Server {
    fn new(seal_dir: &std::path::Path) -> Result<Self> {
        let mut ours_ntt = Vec::new();
        let mut tfhe = Vec::new();
        for (n, q) in NTT_SIZES {
            ours_ntt.push(NttBench::new(q, n).map_err(|e| e.to_string())?);
            let plan = tfhe_ntt::prime32::Plan::try_new(n, q)
                .ok_or_else(|| format!("tfhe-ntt has no plan for n = {n}, q = {q}"))?;
            let data = (0..n as u32)
                .map(|i| i.wrapping_mul(2_654_435_761) % q)
                .collect();
            tfhe.push(TfheNtt { plan, data });
        }
        Ok(Self {
            ours_ntt,
            tfhe,
            client: ClientBench::new().map_err(|e| e.to_string())?,
            fhe: FheRs::new()?,
            evaluator: ServerBench::new(seal_dir)?,
            aggregate: AggregateBench::new()?,
            engine: EngineBench::new()?,
        })
    }

    fn call(&mut self, op: &Op) -> Result<()> {
        match (op.side, op.kind) {
            (Side::Ours, Kind::Forward(i)) => self.ours_ntt[i].forward().map_err(|e| e.to_string()),
            (Side::Ours, Kind::Inverse(i)) => self.ours_ntt[i].inverse().map_err(|e| e.to_string()),
            (Side::TfheNtt, Kind::Forward(i)) => {
                let t = &mut self.tfhe[i];
                t.plan.fwd(std::hint::black_box(&mut t.data));
                Ok(())
            }
            (Side::TfheNtt, Kind::Inverse(i)) => {
                let t = &mut self.tfhe[i];
                t.plan.inv(std::hint::black_box(&mut t.data));
                t.plan.normalize(&mut t.data);
                Ok(())
            }
            (Side::Ours, Kind::Client(c)) => self.client.run(c).map_err(|e| e.to_string()),
            (Side::FheRs, Kind::Client(c)) => self.fhe.run(c),
            (Side::Ours, Kind::Server(op)) => self.evaluator.run(op),
            (Side::Ours, Kind::Aggregate(row)) => self.aggregate.run(row, AggregatePath::Linear),
            (Side::SealForm, Kind::Aggregate(row)) => {
                self.aggregate.run(row, AggregatePath::SealForm)
            }
            (Side::Ours, Kind::Engine(op)) => self.engine.run(op),
            #[cfg(target_arch = "x86_64")]
            (Side::Ours, Kind::ArithmeticFloor(i)) => {
                let n = NTT_SIZES[i].0;
                std::hint::black_box(floor::run(std::hint::black_box(op.key.len() as u32), n));
                Ok(())
            }
            _ => Err(format!("no {} for {}", op.key, op.side.name())),
        }
    }

    /// The client self-checks (run after timing too, on what the timed calls wrote).
    fn check_clients(&mut self) -> Result<()> {
        self.client.check().map_err(|e| e.to_string())?;
        self.evaluator.check()?;
        self.aggregate.check()?;
        self.engine.check()?;
        self.fhe.check()
    }

    /// `K` timings of each client operation and `NTT_K` of each NTT, operation by operation.
    fn round(&mut self, ops: &[Op], k: usize, ntt_k: usize) -> Result<Value> {
        let mut sides: Map<String, Value> = Map::new();
        for op in ops {
            let runs = if matches!(
                op.kind,
                Kind::Client(_)
                    | Kind::Server(_)
                    | Kind::Aggregate(_)
                    | Kind::Engine(EngineOp::BatchOneCore)
            ) {
                k
            } else {
                ntt_k
            };
            let times = timings_us(runs, || self.call(op))?;
            let rounded: Vec<Value> = times
                .iter()
                .map(|t| json!((t * 1000.0).round() / 1000.0))
                .collect();
            let side = sides
                .entry(op.side.name())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(m) = side {
                m.insert(op.key.clone(), Value::Array(rounded));
            }
        }
        self.check_clients()?;
        Ok(json!({ "unit": "us", "timings": sides }))
    }
}

/// Both NTTs give the same negacyclic product of two random polynomials and invert their
/// forward transform, at every size.
fn check_ntts() -> Result<()> {
    let ours = default_backend();
    for (n, q) in NTT_SIZES {
        let table = NttTable::new_vec(q, n).map_err(|e| e.to_string())?;
        let view = table.view();
        let plan = tfhe_ntt::prime32::Plan::try_new(n, q).ok_or("tfhe-ntt plan")?;
        let mut state = 0x9e37_79b9_7f4a_7c15_u64 ^ n as u64;
        let mut random = || {
            // splitmix64: test data only.
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) % u64::from(q)) as u32
        };
        let a: Vec<u32> = (0..n).map(|_| random()).collect();
        let b: Vec<u32> = (0..n).map(|_| random()).collect();

        let (mut a1, mut b1) = (a.clone(), b.clone());
        let err = |e: zeppelin_ring::RingError| e.to_string();
        ours.forward(&view, &mut a1).map_err(err)?;
        ours.forward(&view, &mut b1).map_err(err)?;
        let mut c1 = vec![0; n];
        ours.pointwise_mul(&view.modulus, &a1, &b1, &mut c1)
            .map_err(err)?;
        ours.inverse(&view, &mut c1).map_err(err)?;
        ours.inverse(&view, &mut a1).map_err(err)?;

        let (mut a2, mut b2) = (a.clone(), b.clone());
        plan.fwd(&mut a2);
        plan.fwd(&mut b2);
        let mut c2 = a2.clone();
        plan.mul_assign_normalize(&mut c2, &b2);
        plan.inv(&mut c2);
        plan.inv(&mut a2);
        plan.normalize(&mut a2);

        if a1 != a || a2 != a {
            return Err(format!(
                "n = {n}: an inverse does not undo its forward transform"
            ));
        }
        if c1 != c2 {
            return Err(format!(
                "n = {n}: the two NTTs give different negacyclic products"
            ));
        }
    }
    Ok(())
}

/// Calls `op` for at least [`WARM_UP`] and [`WARM_UP_CALLS`] times.
fn warm_up(server: &mut Server, ops: &[Op]) -> Result<()> {
    for op in ops {
        let start = Instant::now();
        let mut calls = 0;
        while calls < WARM_UP_CALLS || start.elapsed() < WARM_UP {
            server.call(op)?;
            calls += 1;
        }
    }
    Ok(())
}

fn info(server: &Server, ops: &[Op]) -> Value {
    let keys: Vec<Value> = ops
        .iter()
        .map(|op| json!({ "key": op.key, "side": op.side.name() }))
        .collect();
    let sizes: Vec<Value> = NTT_SIZES
        .iter()
        .map(|(n, q)| json!({ "n": n, "q": q }))
        .collect();
    json!({
        "ours_backend": server.ours_ntt.first().map(NttBench::backend_name),
        "ntt_sizes": sizes,
        "tfhe_ntt_avx512_path": pulp::x86::V4::try_new().is_some(),
        "fhe_rs": {
            "degree": Seal4096::N,
            "plaintext_modulus": Seal4096::T,
            "moduli": Seal4096::DATA_PRIMES,
            "ntt": if cfg!(feature = "fhe-tfhe-ntt") { "tfhe-ntt 0.6 (feature tfhe-ntt)" } else { "its own (default features)" },
        },
        "server": server.evaluator.describe(),
        "aggregate": {
            "uploads": aggregate::UPLOADS,
            "preset": "seal4096",
            "threads_all_cores": rayon::current_num_threads(),
            "checks": "linear and SEAL-form sums byte-identical; both decrypt to the slots' sum and weighted sum",
        },
        "engine": {
            "ring_dim": engine::RING_DIM,
            "towers": engine::TOWERS,
            "batch": engine::BATCH,
            "backend": server.engine.backend_name(),
            "transforms_per_ct": { "inverse": engine::TOWERS, "forward": engine::TOWERS * (engine::TOWERS - 1) },
            "checks": "the first two products equal the unbatched reference (OpenFHE's EvalMult)",
        },
        "operations": keys,
        "checks": "ok",
    })
}

fn answer(out: &mut impl Write, v: &Value) -> io::Result<()> {
    writeln!(out, "{v}")?;
    out.flush()
}

fn serve() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let seal_dir = match args.as_slice() {
        [flag, dir] if flag == "--seal-dir" => std::path::PathBuf::from(dir),
        _ => return Err("usage: zeppelin-peer-bench --seal-dir DIR".to_string()),
    };
    check_ntts()?;
    let ops = operations();
    let mut server = Server::new(&seal_dir)?;
    server.check_clients()?;
    warm_up(&mut server, &ops)?;
    let stdin = io::stdin();
    let mut out = io::stdout().lock();
    let io_err = |e: io::Error| format!("stdout: {e}");
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| format!("stdin: {e}"))?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let reply = match words.as_slice() {
            ["info"] => info(&server, &ops),
            ["round", k, ntt_k] => {
                let parse = |s: &str| s.parse::<usize>().ok().filter(|&v| v > 0);
                match (parse(k), parse(ntt_k)) {
                    (Some(k), Some(ntt_k)) => server.round(&ops, k, ntt_k)?,
                    _ => {
                        json!({ "error": format!("round K NTT_K: positive integers, got {line:?}") })
                    }
                }
            }
            ["throughput", seconds] => match seconds.parse::<f64>() {
                Ok(s) if s > 0.0 && s.is_finite() => server.evaluator.throughput(s)?,
                _ => {
                    json!({ "error": format!("throughput SECONDS: a positive number, got {line:?}") })
                }
            },
            ["quit"] => return Ok(()),
            _ => {
                json!({ "error": format!("unknown command {line:?} (info, round K NTT_K, throughput SECONDS, quit)") })
            }
        };
        answer(&mut out, &reply).map_err(io_err)?;
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    match serve() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            println!("{}", json!({ "error": e }));
            std::process::ExitCode::FAILURE
        }
    }
}

//! The fleet demo's stages: keys, devices, service, uploads, aggregation, decryption and the
//! report (see [`super`]).

use std::io::IsTerminal;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rand_core::{OsRng, RngCore};
use rayon::prelude::*;
use zeppelin::encoder::{self, FixedPoint};
use zeppelin::{
    Bfv, Ciphertext as DeviceCiphertext, Params, Plaintext, SeededCiphertext, Workspace,
};
use zeppelin_seal::device::{self, DeviceContext, SealPreset};
use zeppelin_service::client::{Client, ClientError};
use zeppelin_service::names::StreamName;
use zeppelin_service::principals::{
    Authenticator, DeviceName, IssuedToken, Registry, OWNER_TOKEN_FILE, REGISTRY_FILE,
};
use zeppelin_service::store::SqliteStore;
use zeppelin_service::{AggregateOp, ServiceConfig, StartKeys};
use zeroize::Zeroizing;

use super::readings::{device_offsets, hour_of, QUANTITIES};
use super::stats::{centred, frac_bits, step_error, SlotStats};
use super::{plot, DemoArgs};
use crate::demo_error::DemoError;
use crate::error::{CliError, CliResult, Operation};
use crate::input::read_seal;
use crate::keydir::{KeyDir, RELIN};
use crate::keygen::keygen;
use crate::keys::{self, KeysArgs};
use crate::outln;
use crate::preset::zero_slots;

/// Slots of each quantity shown in the sample table.
const SAMPLES_PER_QUANTITY: usize = 4;
/// Cap of `relin.seal` read back for the service (SEAL's relin keys at n = 8192 are 7.3 MB).
const RELIN_CAP: usize = 64 << 20;

/// Checks the arguments before anything is made.
pub fn check_arguments(a: &DemoArgs) -> CliResult<()> {
    if a.concurrency == 0 {
        return Err(DemoError::NoConcurrency.into());
    }
    let half = zeppelin::Seal4096::plain().half;
    for q in &QUANTITIES {
        frac_bits(a.devices, q.range, half, q.name).map_err(DemoError::from)?;
    }
    if a.plot.is_some() {
        plot::load_font().map_err(DemoError::from)?;
    }
    Ok(())
}

/// One simulated device's upload and what the key owner's check needs of it.
struct Device {
    /// The seeded wire form.
    wire: Vec<u8>,
    /// The readings (offsets from the reference), row by row.
    offsets: Vec<f64>,
    /// Encode + seeded encryption + wire form.
    encrypt: Duration,
}

/// Where the ciphertexts go and the aggregates come from.
struct Aggregates {
    sum: Vec<u8>,
    sum_of_squares: Vec<u8>,
    upload_latencies: Vec<Duration>,
    upload_wall: Duration,
    sum_time: Duration,
    sum_of_squares_time: Duration,
    start_time: Option<Duration>,
    server: String,
    stream: String,
    relin_pushed: Option<usize>,
}

/// The demo with preset `P`, its files in `private`.
pub fn run<P: SealPreset>(a: &DemoArgs, private: &Path) -> CliResult<()> {
    let half = P::plain().half;
    let row = P::N / 2;
    let k = a.devices;
    let scales: Vec<u32> = QUANTITIES
        .iter()
        .map(|q| frac_bits(k, q.range, half, q.name))
        .collect::<Result<_, _>>()
        .map_err(DemoError::from)?;

    outln!(
        "Zeppelin fleet demo: {k} devices, preset {} (n = {}, t = {}), seed {}",
        P::NAME,
        P::N,
        P::T,
        a.seed
    )?;
    outln!(
        "each device: a day of {row} temperature and {row} humidity readings (one every {:.1} s), sent as offsets from a public reference profile",
        86_400.0 / row as f64
    )?;
    for (q, &f) in QUANTITIES.iter().zip(&scales) {
        let h = step_error(f);
        outln!(
            "  {:<11} offsets within ±{} {unit} of the reference, f = {f} fractional bits (steps of {} {unit}): |mean error| ≤ h = {h} {unit}, |variance error| ≤ 2h(σ+h)+h²",
            q.name,
            q.range,
            1.0 / f64::from(1u32 << f),
            unit = q.unit
        )?;
    }
    outln!(
        "  f is the largest for which the sum of squares of {k} readings stays within ±(t−1)/2 = ±{half} (these scales fit up to {} devices; more devices get coarser steps)",
        QUANTITIES
            .iter()
            .zip(&scales)
            .map(|(q, &f)| super::stats::max_devices(q.range, f, half))
            .min()
            .unwrap_or(0)
    )?;

    // ----- the key owner's keys ------------------------------------------------------------
    let keys_dir = private.join("keys");
    let t0 = Instant::now();
    keygen::<P>(&keys_dir, false)?;
    keys::run(&KeysArgs {
        dir: keys_dir.clone(),
        relin: true,
        galois: false,
        steps: None,
        seeded: false,
        force: false,
    })?;
    let keygen_time = t0.elapsed();
    let keydir = KeyDir::new(&keys_dir);
    let ctx = keydir.device_context::<P>()?;
    let sk = keydir.device_secret_key::<P>(&ctx)?;
    let relin = read_seal(&keydir.path(RELIN), "SEAL RelinKeys", RELIN_CAP)?.to_vec();

    // ----- the devices -----------------------------------------------------------------------
    let fixed: Vec<FixedPoint<P>> = scales
        .iter()
        .map(|&f| FixedPoint::<P>::new(f))
        .collect::<Result<_, _>>()
        .map_err(CliError::device(Operation::FixedPoint))?;
    let bar = progress(k as u64, "device encrypt");
    let t0 = Instant::now();
    let devices: Vec<Device> = (0..k)
        .into_par_iter()
        .map_init(
            || {
                (
                    Box::new(Workspace::<P>::new()),
                    Box::new(Plaintext::<P>::zeroed()),
                )
            },
            |(ws, plain), d| {
                let offsets = device_offsets(a.seed, d as u64, row);
                let started = Instant::now();
                let mut slots = zero_slots::<P>();
                for ((fp, values), out) in fixed
                    .iter()
                    .zip(offsets.chunks(row))
                    .zip(slots.chunks_mut(row))
                {
                    fp.quantize_slots(values, out)
                        .map_err(CliError::device(Operation::Quantizing))?;
                }
                encoder::encode(&slots, plain).map_err(CliError::device(Operation::Encoding))?;
                let mut ct = Box::new(SeededCiphertext::<P>::zeroed());
                Bfv::<P>::encrypt_seeded(&sk, plain, &mut OsRng, &mut ct, ws)
                    .map_err(CliError::device(Operation::SeededEncryption))?;
                let wire =
                    device::to_wire_seeded(&ct).map_err(CliError::seal(Operation::WireForm))?;
                let encrypt = started.elapsed();
                bar.inc(1);
                Ok(Device {
                    wire,
                    offsets,
                    encrypt,
                })
            },
        )
        .collect::<CliResult<_>>()?;
    let encrypt_wall = t0.elapsed();
    bar.finish_and_clear();

    // The plaintext truth, from the real readings.
    let mut true_sum = vec![0f64; P::N];
    let mut true_sum_sq = vec![0f64; P::N];
    for dev in &devices {
        for ((s, s2), &x) in true_sum.iter_mut().zip(&mut true_sum_sq).zip(&dev.offsets) {
            *s += x;
            *s2 += x * x;
        }
    }

    // ----- service, uploads, aggregation --------------------------------------------------
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(DemoError::Runtime)?;
    let aggregates = runtime.block_on(serve_and_aggregate::<P>(a, private, relin, &devices))?;
    drop(runtime);

    // ----- the key owner decrypts ------------------------------------------------------------
    let t0 = Instant::now();
    let (sum_slots, sum_budget) = decrypt::<P>(&ctx, &sk, &aggregates.sum, "sum")?;
    let (sq_slots, sq_budget) =
        decrypt::<P>(&ctx, &sk, &aggregates.sum_of_squares, "sum_of_squares")?;
    let decrypt_time = t0.elapsed();
    let fresh_budget = devices
        .first()
        .map(|d| decrypt::<P>(&ctx, &sk, &d.wire, "a device's upload"))
        .transpose()?
        .map(|(_, b)| b);

    let stats: Vec<SlotStats> = (0..P::N)
        .map(|slot| {
            let quantity = slot / row;
            let reference = QUANTITIES[quantity].reference(hour_of(slot % row, row));
            SlotStats::new(
                reference,
                k,
                scales[quantity],
                centred(sum_slots[slot], P::T),
                centred(sq_slots[slot], P::T),
                true_sum[slot],
                true_sum_sq[slot],
            )
        })
        .collect();

    // ----- results (a function of --seed) -------------------------------------------------------
    outln!("")?;
    outln!("results: per-slot mean and population variance over the {k} devices, decrypted against the plaintext truth")?;
    outln!(
        "  {:<11} {:>5}  {:>9} {:>9} {:>8}  {:>8} {:>8} {:>8} {:>8}",
        "quantity",
        "time",
        "true mean",
        "decrypted",
        "|error|",
        "true var",
        "decrypt.",
        "|error|",
        "bound"
    )?;
    for (quantity, q) in QUANTITIES.iter().enumerate() {
        for i in 0..SAMPLES_PER_QUANTITY {
            let j = i * row / SAMPLES_PER_QUANTITY + row / (2 * SAMPLES_PER_QUANTITY);
            let s = &stats[quantity * row + j];
            let minutes = (hour_of(j, row) * 60.0).round() as u32;
            outln!(
                "  {:<11} {:02}:{:02}  {:>9.4} {:>9.4} {:>8.5}  {:>8.5} {:>8.5} {:>8.5} {:>8.5}",
                q.name,
                minutes / 60,
                minutes % 60,
                s.true_mean,
                s.mean,
                s.mean_error(),
                s.true_var,
                s.var,
                s.var_error(),
                s.var_bound
            )?;
        }
    }
    let mut outside = 0;
    for (quantity, q) in QUANTITIES.iter().enumerate() {
        let slots = &stats[quantity * row..(quantity + 1) * row];
        let max_mean = slots.iter().map(SlotStats::mean_error).fold(0.0, f64::max);
        let max_var = slots.iter().map(SlotStats::var_error).fold(0.0, f64::max);
        let worst_ratio = slots
            .iter()
            .map(|s| s.var_error() / s.var_bound)
            .fold(0.0, f64::max);
        let bad = slots.iter().filter(|s| !s.within_bounds()).count();
        outside += bad;
        outln!(
            "  {:<11} over all {row} slots: max |mean error| {max_mean:.5} {unit} (bound {}), max |variance error| {max_var:.5} {unit}² (at most {:.0} % of its slot's bound); {} slots outside",
            q.name,
            step_error(scales[quantity]),
            100.0 * worst_ratio,
            bad,
            unit = q.unit
        )?;
    }
    outln!(
        "all {} slots within the quantisation bound: {}",
        P::N,
        if outside == 0 { "yes" } else { "NO" }
    )?;

    // ----- timings and sizes (of this run on this host) -------------------------------------
    outln!("")?;
    outln!("stage                                        time     detail")?;
    let line = |stage: &str, d: Duration, detail: String| {
        outln!("  {stage:<40} {:>9.1} ms  {detail}", ms(d))
    };
    line(
        "keygen (device key, SEAL keys, relin keys)",
        keygen_time,
        String::new(),
    )?;
    if let Some(d) = aggregates.start_time {
        line("start the service (SQLite in a temp dir)", d, String::new())?;
    }
    let mut per_device: Vec<Duration> = devices.iter().map(|d| d.encrypt).collect();
    line(
        "device encrypt (encode + seeded, all)",
        encrypt_wall,
        format!(
            "median {:.2} ms per device (encode + encrypt), on {} threads with the readings' generation",
            ms(median(&mut per_device)),
            rayon::current_num_threads()
        ),
    )?;
    let mut latencies = aggregates.upload_latencies.clone();
    line(
        "upload (HTTP POST, all)",
        aggregates.upload_wall,
        format!(
            "{:.0} uploads/s, {} in flight, latency p50 {:.2} ms p99 {:.2} ms",
            k as f64 / aggregates.upload_wall.as_secs_f64(),
            a.concurrency,
            ms(percentile(&mut latencies, 50)),
            ms(percentile(&mut latencies, 99))
        ),
    )?;
    line(
        "aggregate sum (server)",
        aggregates.sum_time,
        format!(
            "{:.0} ciphertexts/s",
            k as f64 / aggregates.sum_time.as_secs_f64()
        ),
    )?;
    line(
        "aggregate sum_of_squares (server)",
        aggregates.sum_of_squares_time,
        format!(
            "{:.0} ciphertexts/s (each squared, the sum relinearized)",
            k as f64 / aggregates.sum_of_squares_time.as_secs_f64()
        ),
    )?;
    line(
        "decrypt + decode both results (owner)",
        decrypt_time,
        String::new(),
    )?;
    outln!(
        "service: {} ({}), stream {}",
        aggregates.server,
        if a.server.is_some() {
            "--server"
        } else {
            "in process"
        },
        aggregates.stream
    )?;
    let upload_bytes: usize = devices.iter().map(|d| d.wire.len()).sum();
    outln!(
        "bytes on the wire: uploads {k} × {} = {upload_bytes} B (seeded form); results {} + {} B (SEAL Ciphertexts){}",
        devices.first().map_or(0, |d| d.wire.len()),
        aggregates.sum.len(),
        aggregates.sum_of_squares.len(),
        aggregates
            .relin_pushed
            .map_or(String::new(), |b| format!("; relin keys pushed {b} B"))
    )?;
    outln!(
        "noise budget left: fresh upload {} bits, sum {sum_budget} bits, sum of squares {sq_budget} bits",
        fresh_budget.map_or(String::from("-"), |b| b.to_string())
    )?;

    if let Some(path) = &a.plot {
        plot::write::<P>(path, &stats, row).map_err(DemoError::from)?;
        outln!("plot: {}", path.display())?;
    }
    if outside > 0 {
        return Err(DemoError::OutOfBounds {
            slots: outside,
            total: P::N,
        }
        .into());
    }
    Ok(())
}

/// Starts the service (or reaches `--server`), uploads every device's ciphertext and fetches
/// the two aggregates.
async fn serve_and_aggregate<P: SealPreset>(
    a: &DemoArgs,
    private: &Path,
    relin: Vec<u8>,
    devices: &[Device],
) -> Result<Aggregates, DemoError> {
    let preset = service_preset::<P>();
    let (service, url, start_time, stream, relin_pushed, owner, tokens) = match &a.server {
        None => {
            let t0 = Instant::now();
            // The in-process service's principals: the owner and one token per device.
            let mut registry = Registry::default();
            let owner = registry.issue_owner(&mut OsRng);
            let tokens = register_fleet(&mut registry, "device", "demo", devices.len())?;
            let mut config = ServiceConfig::new(preset);
            config.auth = Arc::new(Authenticator::fixed(registry));
            let data = private.join("data");
            let store = Arc::new(SqliteStore::open(&data)?);
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .map_err(DemoError::Runtime)?;
            let service = zeppelin_service::start(
                listener,
                store,
                config,
                StartKeys {
                    relin: Some(relin),
                    galois: None,
                },
            )
            .await?;
            let url = service.url().to_string();
            (
                Some(service),
                url,
                Some(t0.elapsed()),
                String::from("demo"),
                None,
                Zeroizing::new(owner.as_str().to_owned()),
                tokens,
            )
        }
        Some(url) => {
            let client = client(url)?;
            let found = client.health().await.map_err(http("GET /v1/health"))?;
            if found != P::NAME {
                return Err(DemoError::ServerPreset {
                    url: url.clone(),
                    found,
                    expected: P::NAME,
                });
            }
            let auth_dir = a.auth_dir.as_deref().ok_or(DemoError::NoAuthDir)?;
            let owner_file = auth_dir.join(OWNER_TOKEN_FILE);
            let owner = Zeroizing::new(
                std::fs::read_to_string(&owner_file)
                    .map_err(|e| DemoError::Registry(format!("{}: {e}", owner_file.display())))?,
            );
            let owner = Zeroizing::new(owner.trim().to_owned());
            let client = client.with_token(&owner);
            let pushed = relin.len();
            client
                .put_relin_keys(relin)
                .await
                .map_err(http("PUT /v1/keys/relin"))?;
            // A fresh stream per run: a running server may hold earlier runs' uploads.
            let mut tag = [0u8; 8];
            OsRng.fill_bytes(&mut tag);
            let stream: String = std::iter::once(String::from("demo-"))
                .chain(tag.iter().map(|b| format!("{b:02x}")))
                .collect();
            let path = auth_dir.join(REGISTRY_FILE);
            let registry_error = |e: &dyn std::fmt::Display| DemoError::Registry(e.to_string());
            let mut registry = Registry::read(&path)
                .map_err(|e| registry_error(&e))?
                .unwrap_or_default();
            let tokens = register_fleet(&mut registry, &stream, &stream, devices.len())?;
            crate::output::write_file(&path, &registry.to_json(), crate::output::Secrecy::Secret)
                .map_err(|e| registry_error(&e))?;
            (None, url.clone(), None, stream, Some(pushed), owner, tokens)
        }
    };
    let base = client(&url)?;
    let client = Arc::new(base.clone().with_token(&owner));

    let bar = progress(devices.len() as u64, "upload");
    let gate = Arc::new(tokio::sync::Semaphore::new(a.concurrency));
    let mut uploads = tokio::task::JoinSet::new();
    let mut upload_latencies = Vec::with_capacity(devices.len());
    let t0 = Instant::now();
    for (d, dev) in devices.iter().enumerate() {
        let permit = gate
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| DemoError::Runtime(std::io::Error::other(e)))?;
        let (client, stream, body, bar) = (
            base.clone().with_token(tokens[d].as_str()),
            stream.clone(),
            dev.wire.clone(),
            bar.clone(),
        );
        uploads.spawn(async move {
            let started = Instant::now();
            let key = format!("device-{d}");
            let result = client.upload(&stream, body, Some(&key)).await;
            drop(permit);
            bar.inc(1);
            result
                .map(|_| started.elapsed())
                .map_err(http(format!("upload of device {d}")))
        });
        while let Some(done) = uploads.try_join_next() {
            upload_latencies.push(joined(done)??);
        }
    }
    while let Some(done) = uploads.join_next().await {
        upload_latencies.push(joined(done)??);
    }
    let upload_wall = t0.elapsed();
    bar.finish_and_clear();

    let fetch = |op: AggregateOp, name: &'static str| {
        let client = client.clone();
        let stream = stream.clone();
        async move {
            let t0 = Instant::now();
            let result = client
                .aggregate(&stream, &op)
                .await
                .map_err(http(format!("POST aggregate {name}")))?;
            if result.count != devices.len() as u64 {
                return Err(DemoError::Count {
                    op: name,
                    found: result.count,
                    expected: devices.len(),
                });
            }
            Ok::<_, DemoError>((result.ciphertext, t0.elapsed()))
        }
    };
    let spinner = progress(0, "aggregate");
    let (sum, sum_time) = fetch(AggregateOp::Sum, "sum").await?;
    let (sum_of_squares, sum_of_squares_time) =
        fetch(AggregateOp::SumOfSquares, "sum_of_squares").await?;
    spinner.finish_and_clear();

    if let Some(service) = service {
        service.shutdown().await?;
    } else if let Some(dir) = &a.auth_dir {
        // The run's devices are done: revoke them (kept in the registry for the record).
        revoke_fleet(dir, &stream, devices.len())?;
    }
    Ok(Aggregates {
        sum,
        sum_of_squares,
        upload_latencies,
        upload_wall,
        sum_time,
        sum_of_squares_time,
        start_time,
        server: url,
        stream,
        relin_pushed,
    })
}

fn service_preset<P: SealPreset>() -> zeppelin_service::Preset {
    if P::N == zeppelin::Seal8192::N {
        zeppelin_service::Preset::Seal8192
    } else {
        zeppelin_service::Preset::Seal4096
    }
}

/// Registers `count` devices `{prefix}-{d}` for `stream` and returns their tokens in order.
fn register_fleet(
    registry: &mut Registry,
    prefix: &str,
    stream: &str,
    count: usize,
) -> Result<Vec<IssuedToken>, DemoError> {
    let registry_error = |e: &dyn std::fmt::Display| DemoError::Registry(e.to_string());
    let stream = StreamName::new(stream).map_err(|e| registry_error(&e))?;
    (0..count)
        .map(|d| {
            let name = DeviceName::new(&format!("{prefix}-{d}")).map_err(|e| registry_error(&e))?;
            registry
                .add_device(&name, std::slice::from_ref(&stream), &mut OsRng)
                .map_err(|e| registry_error(&e))
        })
        .collect()
}

/// Revokes the devices [`register_fleet`] registered for `prefix` in `dir`'s registry.
fn revoke_fleet(dir: &Path, prefix: &str, count: usize) -> Result<(), DemoError> {
    let registry_error = |e: &dyn std::fmt::Display| DemoError::Registry(e.to_string());
    let path = dir.join(REGISTRY_FILE);
    let mut registry = Registry::read(&path)
        .map_err(|e| registry_error(&e))?
        .unwrap_or_default();
    for d in 0..count {
        let name = DeviceName::new(&format!("{prefix}-{d}")).map_err(|e| registry_error(&e))?;
        registry.revoke(&name).map_err(|e| registry_error(&e))?;
    }
    crate::output::write_file(&path, &registry.to_json(), crate::output::Secrecy::Secret)
        .map_err(|e| registry_error(&e))
}

fn client(url: &str) -> Result<Client, DemoError> {
    Client::new(url).map_err(http(format!("client for {url}")))
}

fn http(what: impl Into<String>) -> impl FnOnce(ClientError) -> DemoError {
    let what = what.into();
    move |source| DemoError::Http { what, source }
}

fn joined<T>(done: Result<T, tokio::task::JoinError>) -> Result<T, DemoError> {
    done.map_err(|e| DemoError::Runtime(std::io::Error::other(e)))
}

/// Decrypts a result (or an upload) with the device's decryption; returns the slots and the
/// invariant noise budget left.
fn decrypt<P: SealPreset>(
    ctx: &DeviceContext<P>,
    sk: &zeppelin::SecretKey<P>,
    bytes: &[u8],
    op: &'static str,
) -> CliResult<(Vec<u32>, u32)> {
    let err = |source| DemoError::Result { op, source };
    let any = device::read_any(ctx, bytes).map_err(err)?;
    let mut plain = Box::new(Plaintext::<P>::zeroed());
    let mut ws = Box::new(Workspace::<P>::new());
    any.decrypt(ctx, sk, &mut plain, &mut ws).map_err(err)?;
    let mut slots = zero_slots::<P>();
    encoder::decode(&plain, &mut slots).map_err(CliError::device(Operation::Decoding))?;
    let mut full = Box::new(DeviceCiphertext::<P>::zeroed());
    any.to_device(ctx, &mut full).map_err(err)?;
    let mut x_rows = Zeroizing::new(vec![0u32; full.level() * P::N]);
    let budget = Bfv::<P>::noise_budget(sk, &full, &mut x_rows, &mut ws)
        .map_err(CliError::device(Operation::Decryption))?;
    Ok((slots, budget))
}

/// A progress bar on stderr when stdout is a terminal, else hidden (`len` 0: a spinner).
fn progress(len: u64, what: &'static str) -> ProgressBar {
    let bar = if len == 0 {
        ProgressBar::new_spinner()
    } else {
        ProgressBar::new(len)
    };
    if std::io::stdout().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr());
        let template = if len == 0 {
            "{spinner} {msg} {elapsed}"
        } else {
            "{msg:>15} [{bar:40}] {pos}/{len} {elapsed}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message(what);
        if len == 0 {
            bar.enable_steady_tick(Duration::from_millis(100));
        }
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(v: &mut [Duration]) -> Duration {
    percentile(v, 50)
}

/// The `p`-th percentile (nearest rank) of `v` (zero if empty).
fn percentile(v: &mut [Duration], p: usize) -> Duration {
    if v.is_empty() {
        return Duration::ZERO;
    }
    v.sort_unstable();
    let rank = (p * v.len()).div_ceil(100).clamp(1, v.len());
    v[rank - 1]
}

//! `zeppelin`: the device client, the SEAL adapter and trusted-side SEAL keys on the command
//! line. The contract (files, exit codes, output) is documented in `docs/cli.md`.
//!
//! Exit status 0 on success; 1 with one line `zeppelin: error: ...` on stderr when an input is
//! bad or an operation fails; 2 for a malformed command line (clap's usage error).

mod bench;
mod device_wire;
mod evalmult;
mod rblwe;

use std::fmt::Display;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use rand_core::OsRng;
use zeroize::Zeroize;

use zeppelin::{
    encoder, Bfv, Ciphertext, EncryptionSeeds, Params, PublicKey, Seal4096, SecretKey,
    SeededCiphertext, Workspace, Zeppelin4096, N, T,
};
use zeppelin_seal::adapter::{
    device_to_seal, public_key_for, public_key_to_device, seal4096_parameters, seal_to_device,
    secret_key_from_ternary,
};
use zeppelin_seal::convert::reseed;
use zeppelin_seal::keygen::{all_galois_elements, galois_element_for_step, KeyGenerator};
use zeppelin_seal::{
    Ciphertext as SealCiphertext, ComprMode, PrngInfo, PrngType, PublicKey as SealPublicKey,
    SealContext, SecretKey as SealSecretKey,
};

#[derive(Parser)]
#[command(
    name = "zeppelin",
    version,
    about = "Zeppelin BFV device client, SEAL 4.1 adapter and trusted-side SEAL keys"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate a device secret key and the SEAL objects for it in DIR.
    Keygen(KeygenArgs),
    /// Encrypt up to 4096 slot values (integers in [0, 65537), one per line) into the device wire form.
    Encrypt(EncryptArgs),
    /// Turn a device ciphertext into a SEAL Ciphertext at SEAL's first data level.
    Adapt(AdaptArgs),
    /// Decrypt a device ciphertext or any SEAL Ciphertext and print the 4096 slots, one per line.
    Decrypt(DecryptArgs),
    /// Generate SEAL RelinKeys and/or GaloisKeys from DIR/secret.seal (trusted side).
    Keys(KeysArgs),
    /// Run keygen, encrypt, adapt and decrypt end to end and print sizes and timings.
    Demo(DemoArgs),
    /// OpenFHE-exact batched EvalMult + BV relinearization on a vector directory, or `serve`.
    Evalmult(evalmult::EvalmultArgs),
    /// Ring-binary-LWE public-key encryption (CPA or CCA2) with files: keygen, encrypt, decrypt.
    Rblwe(rblwe::RblweArgs),
    /// Median timings of the device operations on this host (set beside SEAL by scripts/bench_vs_seal.py).
    Bench(bench::BenchArgs),
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Preset {
    /// n = 4096, t = 65537, SEAL's three 27-bit data primes (+ its 28-bit special prime).
    Seal4096,
    /// The paper's four data primes below 2^27; switched to SEAL's level by `adapt`.
    Zeppelin4096,
}

impl Preset {
    fn name(self) -> &'static str {
        match self {
            Preset::Seal4096 => "seal4096",
            Preset::Zeppelin4096 => "zeppelin4096",
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Seeded symmetric: c0 and the 32-byte AES-CTR seed of c1 (about half the size).
    Seeded,
    /// Classic symmetric: c0 and c1.
    Symmetric,
    /// Public key (DIR/public.seal for seal4096, the device's own DIR/device.pk otherwise).
    Public,
    /// Trusted side: a SEAL Ciphertext in SEAL's own seeded form with its Blake2xb generator.
    SealBlake2xb,
    /// Trusted side: a SEAL Ciphertext in SEAL's own seeded form with its SHAKE256 generator.
    SealShake256,
}

#[derive(Clone, Copy, ValueEnum)]
enum Compression {
    None,
    Zlib,
    Zstd,
}

impl From<Compression> for ComprMode {
    fn from(c: Compression) -> Self {
        match c {
            Compression::None => ComprMode::None,
            Compression::Zlib => ComprMode::Zlib,
            Compression::Zstd => ComprMode::Zstd,
        }
    }
}

#[derive(Args)]
struct KeygenArgs {
    /// Key directory (created if missing).
    #[arg(long)]
    dir: PathBuf,
    /// Parameter preset of the device.
    #[arg(long, value_enum, default_value = "seal4096")]
    preset: Preset,
}

#[derive(Args)]
struct EncryptArgs {
    /// Key directory written by `keygen`.
    #[arg(long)]
    dir: PathBuf,
    /// Encryption path.
    #[arg(long, value_enum)]
    mode: Mode,
    /// Slot values: up to 4096 integers in [0, 65537), one per line; missing slots are 0.
    #[arg(long = "in")]
    input: PathBuf,
    /// Output file.
    #[arg(long = "out")]
    output: PathBuf,
    /// Number of data primes to encrypt at (default: all of the preset).
    #[arg(long)]
    level: Option<usize>,
}

#[derive(Args)]
struct AdaptArgs {
    /// Key directory (for the preset and DIR/params.seal).
    #[arg(long)]
    dir: PathBuf,
    /// Device ciphertext (seeded or full wire form).
    #[arg(long = "in")]
    input: PathBuf,
    /// SEAL Ciphertext to write.
    #[arg(long = "out")]
    output: PathBuf,
    /// Compression of the SEAL Ciphertext.
    #[arg(long, value_enum, default_value = "none")]
    compress: Compression,
}

#[derive(Args)]
struct DecryptArgs {
    /// Key directory.
    #[arg(long)]
    dir: PathBuf,
    /// A device ciphertext, or any SEAL Ciphertext under DIR/params.seal (any level, any
    /// compression, SEAL's seeded forms included).
    #[arg(long = "in")]
    input: PathBuf,
}

#[derive(Args)]
struct KeysArgs {
    /// Key directory (reads params.seal and secret.seal).
    #[arg(long)]
    dir: PathBuf,
    /// Write DIR/relin.seal.
    #[arg(long)]
    relin: bool,
    /// Write DIR/galois.seal (all of SEAL's default elements unless --steps is given).
    #[arg(long)]
    galois: bool,
    /// Row-rotation steps for the Galois keys (0 means the column swap), e.g. `1,-1,0`.
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    steps: Option<Vec<i64>>,
    /// Write SEAL's seeded form (each key's c1 as its Blake2xb seed): about half the size.
    #[arg(long)]
    seeded: bool,
}

#[derive(Args)]
struct DemoArgs {
    /// Keep the files here instead of a temporary directory.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Parameter preset of the device.
    #[arg(long, value_enum, default_value = "seal4096")]
    preset: Preset,
}

/// A one-line error message.
type CliResult<T> = Result<T, String>;

trait Context<T> {
    fn ctx(self, what: impl Display) -> CliResult<T>;
}

impl<T, E: Display> Context<T> for Result<T, E> {
    fn ctx(self, what: impl Display) -> CliResult<T> {
        self.map_err(|e| format!("{what}: {e}"))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Keygen(a) => keygen(&a.dir, a.preset).map(|_| ()),
        Command::Encrypt(a) => with_preset(&a.dir).and_then(|p| match p {
            Preset::Seal4096 => encrypt::<Seal4096>(&a),
            Preset::Zeppelin4096 => encrypt::<Zeppelin4096>(&a),
        }),
        Command::Adapt(a) => with_preset(&a.dir).and_then(|p| match p {
            Preset::Seal4096 => adapt::<Seal4096>(&a),
            Preset::Zeppelin4096 => adapt::<Zeppelin4096>(&a),
        }),
        Command::Decrypt(a) => with_preset(&a.dir).and_then(|p| {
            let slots = match p {
                Preset::Seal4096 => decrypt::<Seal4096>(&a.dir, &a.input),
                Preset::Zeppelin4096 => decrypt::<Zeppelin4096>(&a.dir, &a.input),
            }?;
            print_slots(&slots)
        }),
        Command::Keys(a) => keys(&a),
        Command::Evalmult(a) => evalmult::run(a),
        Command::Rblwe(a) => rblwe::run(a),
        Command::Bench(a) => bench::run(&a),
        Command::Demo(a) => match a.preset {
            Preset::Seal4096 => demo::<Seal4096>(&a),
            Preset::Zeppelin4096 => demo::<Zeppelin4096>(&a),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("zeppelin: error: {}", msg.replace('\n', " "));
            ExitCode::FAILURE
        }
    }
}

// ----- files ------------------------------------------------------------------------------

const PRESET_FILE: &str = "preset";
const DEVICE_SK: &str = "device.sk";
const DEVICE_PK: &str = "device.pk";

fn read(path: &Path) -> CliResult<Vec<u8>> {
    fs::read(path).ctx(format!("cannot read {}", path.display()))
}

fn write(path: &Path, bytes: &[u8]) -> CliResult<()> {
    fs::write(path, bytes).ctx(format!("cannot write {}", path.display()))
}

/// Writes a secret file readable by its owner only.
fn write_secret(path: &Path, bytes: &[u8]) -> CliResult<()> {
    write(path, bytes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o600))
            .ctx(format!("cannot restrict {}", path.display()))?;
    }
    Ok(())
}

fn with_preset(dir: &Path) -> CliResult<Preset> {
    let path = dir.join(PRESET_FILE);
    let text = fs::read_to_string(&path).ctx(format!(
        "cannot read {} (run `zeppelin keygen --dir {}` first)",
        path.display(),
        dir.display()
    ))?;
    match text.trim() {
        "seal4096" => Ok(Preset::Seal4096),
        "zeppelin4096" => Ok(Preset::Zeppelin4096),
        other => Err(format!("{}: unknown preset {other:?}", path.display())),
    }
}

fn seal_context(dir: &Path) -> CliResult<SealContext> {
    let path = dir.join("params.seal");
    let parms = zeppelin_seal::EncryptionParameters::load(&read(&path)?).ctx(path.display())?;
    SealContext::new(parms).ctx(path.display())
}

fn load_device_sk<P: Params>(dir: &Path) -> CliResult<Box<SecretKey<P>>> {
    let path = dir.join(DEVICE_SK);
    let mut bytes = read(&path)?;
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    let r = sk.read_bytes(&bytes);
    bytes.zeroize();
    r.ctx(path.display())?;
    Ok(sk)
}

fn parse_values(path: &Path) -> CliResult<Box<[u32; N]>> {
    let text = fs::read_to_string(path).ctx(format!("cannot read {}", path.display()))?;
    let mut slots = Box::new([0u32; N]);
    let mut count = 0usize;
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if count == N {
            return Err(format!(
                "{} line {}: more than {N} values",
                path.display(),
                i + 1
            ));
        }
        let v: u32 = line.parse().ok().filter(|&v| v < T).ok_or_else(|| {
            format!(
                "{} line {}: {line:?} is not an integer in [0, {T})",
                path.display(),
                i + 1
            )
        })?;
        slots[count] = v;
        count += 1;
    }
    Ok(slots)
}

fn print_slots(slots: &[u32; N]) -> CliResult<()> {
    use std::io::Write;
    let mut out = String::with_capacity(N * 6);
    for v in slots {
        out.push_str(&v.to_string());
        out.push('\n');
    }
    std::io::stdout()
        .lock()
        .write_all(out.as_bytes())
        .ctx("cannot write to stdout")
}

// ----- keygen -----------------------------------------------------------------------------

fn keygen(dir: &Path, preset: Preset) -> CliResult<()> {
    match preset {
        Preset::Seal4096 => keygen_for::<Seal4096>(dir, preset),
        Preset::Zeppelin4096 => keygen_for::<Zeppelin4096>(dir, preset),
    }
}

fn keygen_for<P: Params>(dir: &Path, preset: Preset) -> CliResult<()> {
    fs::create_dir_all(dir).ctx(format!("cannot create {}", dir.display()))?;
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    let mut pk = Box::new(PublicKey::<P>::zeroed());
    let mut ws = Box::new(Workspace::zeroed());
    Bfv::<P>::generate_secret_key(&mut OsRng, &mut sk).ctx("secret key generation")?;
    Bfv::<P>::generate_public_key(&sk, &mut OsRng, &mut pk, &mut ws)
        .ctx("public key generation")?;

    let mut sk_bytes = vec![0u8; SecretKey::<P>::BYTES];
    sk.write_bytes(&mut sk_bytes).ctx("secret key")?;
    let r = write_secret(&dir.join(DEVICE_SK), &sk_bytes);
    sk_bytes.zeroize();
    r?;
    let mut pk_bytes = vec![0u8; PublicKey::<P>::BYTES];
    pk.write_bytes(&mut pk_bytes).ctx("public key")?;
    write(&dir.join(DEVICE_PK), &pk_bytes)?;

    let parms = seal4096_parameters();
    write(
        &dir.join("params.seal"),
        &parms.save(ComprMode::None).ctx("params")?,
    )?;
    let ctx = SealContext::new(parms).ctx("SEAL parameters")?;
    let seal_sk = secret_key_from_ternary(&ctx, sk.ternary()).ctx("SEAL secret key")?;
    let mut bytes = seal_sk.save(ComprMode::None).ctx("SEAL secret key")?;
    let r = write_secret(&dir.join("secret.seal"), &bytes);
    bytes.zeroize();
    r?;
    let seal_pk = public_key_for(&ctx, &seal_sk, &mut OsRng).ctx("SEAL public key")?;
    write(
        &dir.join("public.seal"),
        &seal_pk.save(ComprMode::None).ctx("SEAL public key")?,
    )?;
    write(
        &dir.join(PRESET_FILE),
        format!("{}\n", preset.name()).as_bytes(),
    )
}

// ----- encrypt ----------------------------------------------------------------------------

/// The public key the device encrypts with: SEAL's DIR/public.seal when it covers the
/// preset's primes (so a SEAL-made public key can be dropped in), else DIR/device.pk.
fn load_public_key<P: Params>(dir: &Path) -> CliResult<Box<PublicKey<P>>> {
    let mut pk = Box::new(PublicKey::<P>::zeroed());
    let ctx = seal_context(dir)?;
    let key_primes = &ctx.key_level().coeff_modulus;
    if P::DATA_PRIMES
        .iter()
        .all(|&q| key_primes.contains(&u64::from(q)))
    {
        let path = dir.join("public.seal");
        let seal_pk = SealPublicKey::load(&ctx, &read(&path)?).ctx(path.display())?;
        let (p0, p1) = public_key_to_device(&ctx, &seal_pk, P::DATA_PRIMES).ctx(path.display())?;
        pk.set_ntt_rows(&p0, &p1).ctx(path.display())?;
    } else {
        let path = dir.join(DEVICE_PK);
        pk.read_bytes(&read(&path)?).ctx(path.display())?;
    }
    Ok(pk)
}

fn encrypt<P: Params>(a: &EncryptArgs) -> CliResult<()> {
    let slots = parse_values(&a.input)?;
    let level = a.level.unwrap_or(P::K);
    if level == 0 || level > P::K {
        return Err(format!(
            "--level {level} is not in 1..={} for this preset",
            P::K
        ));
    }
    let bytes = encrypt_bytes::<P>(&a.dir, &slots, a.mode, level)?;
    write(&a.output, &bytes)
}

fn encrypt_bytes<P: Params>(
    dir: &Path,
    slots: &[u32; N],
    mode: Mode,
    level: usize,
) -> CliResult<Vec<u8>> {
    let mut plain = Box::new([0u32; N]);
    encoder::encode(slots, &mut plain).ctx("encoding")?;
    let mut ws = Box::new(Workspace::zeroed());
    match mode {
        Mode::Seeded => {
            let sk = load_device_sk::<P>(dir)?;
            let mut ct = Box::new(SeededCiphertext::<P>::zeroed());
            let seeds = EncryptionSeeds::generate(&mut OsRng);
            Bfv::<P>::encrypt_seeded_with(&sk, &plain, &seeds, level, &mut ct, &mut ws)
                .ctx("seeded encryption")?;
            let mut out = vec![0u8; device_wire::seeded_len(level)];
            device_wire::write_seeded(&ct, &mut out).ctx("wire form")?;
            Ok(out)
        }
        Mode::Symmetric | Mode::Public => {
            let mut ct = Box::new(Ciphertext::<P>::zeroed());
            if mode == Mode::Symmetric {
                let sk = load_device_sk::<P>(dir)?;
                let seeds = EncryptionSeeds::generate(&mut OsRng);
                Bfv::<P>::encrypt_symmetric_with(&sk, &plain, &seeds, level, &mut ct, &mut ws)
                    .ctx("symmetric encryption")?;
            } else {
                let pk = load_public_key::<P>(dir)?;
                let seed = zeppelin::SecretSeed::generate(&mut OsRng);
                Bfv::<P>::encrypt_public_with(&pk, &plain, &seed, level, &mut ct, &mut ws)
                    .ctx("public-key encryption")?;
            }
            let mut out = vec![0u8; device_wire::full_len(level)];
            device_wire::write_full(&ct, &mut out).ctx("wire form")?;
            Ok(out)
        }
        Mode::SealBlake2xb | Mode::SealShake256 => {
            let sk = load_device_sk::<P>(dir)?;
            let mut ct = Box::new(Ciphertext::<P>::zeroed());
            let seeds = EncryptionSeeds::generate(&mut OsRng);
            Bfv::<P>::encrypt_symmetric_with(&sk, &plain, &seeds, P::K, &mut ct, &mut ws)
                .ctx("symmetric encryption")?;
            let ctx = seal_context(dir)?;
            let seal_ct = device_to_seal(&ctx, P::DATA_PRIMES, ct.c0(), ct.c1()).ctx("adapter")?;
            let path = dir.join("secret.seal");
            let seal_sk = SealSecretKey::load(&ctx, &read(&path)?).ctx(path.display())?;
            let mut seed = [0u8; 64];
            rand_core::RngCore::fill_bytes(&mut OsRng, &mut seed);
            let info = PrngInfo {
                prng_type: if mode == Mode::SealBlake2xb {
                    PrngType::Blake2xb
                } else {
                    PrngType::Shake256
                },
                seed,
            };
            let seeded = reseed(&ctx, &seal_ct, &seal_sk, &info).ctx("reseeding")?;
            seeded
                .save_seeded(&info, ComprMode::None)
                .ctx("SEAL seeded form")
        }
    }
}

// ----- adapt ------------------------------------------------------------------------------

/// A device ciphertext from its wire form, expanded to `(c0, c1)`.
fn read_device<P: Params>(bytes: &[u8]) -> CliResult<Box<Ciphertext<P>>> {
    let mut ct = Box::new(Ciphertext::<P>::zeroed());
    if device_wire::is_seeded_form(bytes) {
        let mut sct = Box::new(SeededCiphertext::<P>::zeroed());
        device_wire::read_seeded(bytes, &mut sct).ctx("seeded device ciphertext")?;
        Bfv::<P>::expand_ct1(&sct, &mut ct).ctx("expanding the seed")?;
    } else {
        device_wire::read_full(bytes, &mut ct).ctx("device ciphertext")?;
    }
    Ok(ct)
}

fn adapt<P: Params>(a: &AdaptArgs) -> CliResult<()> {
    let bytes = read(&a.input)?;
    let ct = read_device::<P>(&bytes).ctx(a.input.display())?;
    let ctx = seal_context(&a.dir)?;
    let seal_ct = device_to_seal(&ctx, P::DATA_PRIMES, ct.c0(), ct.c1()).ctx("adapter")?;
    let out = seal_ct.save(a.compress.into()).ctx("SEAL ciphertext")?;
    write(&a.output, &out)
}

// ----- decrypt ----------------------------------------------------------------------------

fn decrypt<P: Params>(dir: &Path, input: &Path) -> CliResult<Box<[u32; N]>> {
    let bytes = read(input)?;
    decrypt_bytes::<P>(dir, &bytes).ctx(input.display())
}

fn decrypt_bytes<P: Params>(dir: &Path, bytes: &[u8]) -> CliResult<Box<[u32; N]>> {
    let sk = load_device_sk::<P>(dir)?;
    let mut ws = Box::new(Workspace::zeroed());
    let mut plain = Box::new([0u32; N]);
    let device_level = bytes.get(16..48).is_some_and(|id| {
        (1..=P::K).any(|l| device_wire::parms_id::<P>(l).is_some_and(|known| known[..] == *id))
    });
    if device_wire::is_seeded_form(bytes) {
        let mut sct = Box::new(SeededCiphertext::<P>::zeroed());
        device_wire::read_seeded(bytes, &mut sct).ctx("seeded device ciphertext")?;
        Bfv::<P>::decrypt_seeded(&sk, &sct, &mut plain, &mut ws).ctx("decryption")?;
    } else {
        let mut ct = Box::new(Ciphertext::<P>::zeroed());
        match device_wire::read_full(bytes, &mut ct) {
            Ok(()) => Bfv::<P>::decrypt(&sk, &ct, &mut plain, &mut ws).ctx("decryption")?,
            Err(device_err) => {
                let ctx = seal_context(dir)?;
                let seal_ct = match SealCiphertext::load(&ctx, bytes) {
                    Ok(c) => c,
                    // A device-level id with a bad body: the device parser's message says more.
                    Err(_) if device_level && bytes.get(5) == Some(&0) => {
                        return Err(format!("device ciphertext: {device_err}"))
                    }
                    Err(e) => return Err(format!("SEAL ciphertext: {e}")),
                };
                let (level, c0, c1) = seal_to_device(&ctx, &seal_ct).ctx("SEAL ciphertext")?;
                let primes = &ctx
                    .level_or_err(&seal_ct.parms_id, "Ciphertext")
                    .ctx("SEAL ciphertext")?
                    .coeff_modulus;
                let prefix = P::DATA_PRIMES.iter().take(level).map(|&q| u64::from(q));
                if level > P::K || !prefix.eq(primes.iter().copied()) {
                    return Err(format!(
                        "SEAL ciphertext primes {primes:?} are not a prefix of the device primes {:?}",
                        P::DATA_PRIMES
                    ));
                }
                Bfv::<P>::decrypt_rows(&sk, level, &c0, &c1, &mut plain, &mut ws)
                    .ctx("decryption")?;
            }
        }
    }
    let mut slots = Box::new([0u32; N]);
    encoder::decode(&plain, &mut slots).ctx("decoding")?;
    plain.zeroize();
    Ok(slots)
}

// ----- keys -------------------------------------------------------------------------------

fn keys(a: &KeysArgs) -> CliResult<()> {
    if !a.relin && !a.galois {
        return Err("nothing to do: pass --relin and/or --galois".into());
    }
    if a.steps.is_some() && !a.galois {
        return Err("--steps needs --galois".into());
    }
    let ctx = seal_context(&a.dir)?;
    let path = a.dir.join("secret.seal");
    let sk = SealSecretKey::load(&ctx, &read(&path)?).ctx(path.display())?;
    let generator = KeyGenerator::new(&ctx, &sk).ctx("key generation")?;
    if a.relin {
        let rk = generator
            .relin_keys(&mut OsRng)
            .ctx("relinearization keys")?;
        let bytes = if a.seeded {
            rk.save_seeded(ComprMode::None)
        } else {
            rk.save(ComprMode::None)
        };
        write(
            &a.dir.join("relin.seal"),
            &bytes.ctx("relinearization keys")?,
        )?;
    }
    if a.galois {
        let elts = match &a.steps {
            None => all_galois_elements(ctx.n()),
            Some(steps) => steps
                .iter()
                .map(|&s| galois_element_for_step(ctx.n(), s))
                .collect::<Result<Vec<_>, _>>()
                .ctx("--steps")?,
        };
        let gk = generator
            .galois_keys(&elts, &mut OsRng)
            .ctx("Galois keys")?;
        let bytes = if a.seeded {
            gk.save_seeded(ComprMode::None)
        } else {
            gk.save(ComprMode::None)
        };
        write(&a.dir.join("galois.seal"), &bytes.ctx("Galois keys")?)?;
    }
    Ok(())
}

// ----- demo -------------------------------------------------------------------------------

fn demo<P: Params>(a: &DemoArgs) -> CliResult<()> {
    match &a.dir {
        Some(dir) => {
            demo_in::<P>(dir)?;
            println!(
                "next: `zeppelin keys --dir {} --relin --galois` for a SEAL server",
                dir.display()
            );
            Ok(())
        }
        None => {
            let dir = std::env::temp_dir().join(format!("zeppelin-demo-{}", std::process::id()));
            let result = demo_in::<P>(&dir);
            // Temporary files (a secret key among them) do not outlive the demo.
            let removed = fs::remove_dir_all(&dir);
            result?;
            removed.ctx(format!("cannot remove {}", dir.display()))?;
            println!("(temporary directory removed; pass --dir to keep the files)");
            Ok(())
        }
    }
}

fn demo_in<P: Params>(dir: &Path) -> CliResult<()> {
    let preset = if P::K == 4 {
        Preset::Zeppelin4096
    } else {
        Preset::Seal4096
    };
    println!(
        "Zeppelin demo: preset {}, n = {N}, t = {T}, data primes {:?}",
        preset.name(),
        P::DATA_PRIMES
    );
    println!(
        "files in {}; timings are of the device code running on this host",
        dir.display()
    );

    let t0 = Instant::now();
    keygen(dir, preset)?;
    println!(
        "keygen (device key + SEAL params/secret/public key)  {:>9.2} ms",
        ms(t0)
    );

    // Sensor readings: temperatures in degrees Celsius, quantized to 1/64 degree per slot.
    let fixed = zeppelin::encoder::FixedPoint::new(6).ctx("fixed point")?;
    let readings: Vec<f64> = (0..N)
        .map(|i| 21.5 + 3.0 * ((i as f64) * 0.01).sin() - 0.25 * ((i % 7) as f64))
        .collect();
    let mut slots = Box::new([0u32; N]);
    fixed
        .quantize_slots(&readings, &mut slots)
        .ctx("quantizing")?;
    println!(
        "{N} sensor readings, e.g. {:.3} {:.3} {:.3} C, 1/64 C per step",
        readings[0], readings[1], readings[2]
    );

    let t0 = Instant::now();
    let seeded = encrypt_bytes::<P>(dir, &slots, Mode::Seeded, P::K)?;
    println!(
        "encode + seeded encrypt (device)                    {:>9.2} ms  {:>7} bytes",
        ms(t0),
        seeded.len()
    );
    let full = encrypt_bytes::<P>(dir, &slots, Mode::Symmetric, P::K)?;
    println!(
        "  (classic symmetric ciphertext for comparison:                {:>7} bytes)",
        full.len()
    );
    let t0 = Instant::now();
    let public = encrypt_bytes::<P>(dir, &slots, Mode::Public, P::K)?;
    println!(
        "encode + public-key encrypt (device)                {:>9.2} ms  {:>7} bytes",
        ms(t0),
        public.len()
    );
    write(&dir.join("reading.ct"), &seeded)?;

    let t0 = Instant::now();
    let ct = read_device::<P>(&seeded)?;
    let ctx = seal_context(dir)?;
    let seal_ct = device_to_seal(&ctx, P::DATA_PRIMES, ct.c0(), ct.c1()).ctx("adapter")?;
    let seal_bytes = seal_ct.save(ComprMode::None).ctx("SEAL ciphertext")?;
    println!(
        "adapt: expand seed -> SEAL Ciphertext (server)      {:>9.2} ms  {:>7} bytes",
        ms(t0),
        seal_bytes.len()
    );
    write(&dir.join("reading.seal"), &seal_bytes)?;
    println!(
        "seeded device form: {:.2} % of the full ciphertext over the same primes, {:.2} % of the SEAL ciphertext",
        100.0 * seeded.len() as f64 / full.len() as f64,
        100.0 * seeded.len() as f64 / seal_bytes.len() as f64
    );

    let t0 = Instant::now();
    let back = decrypt_bytes::<P>(dir, &seal_bytes)?;
    println!(
        "decrypt SEAL ciphertext + decode (device)           {:>9.2} ms",
        ms(t0)
    );
    let mut decoded = vec![0f64; N];
    fixed.dequantize_slots(&back, &mut decoded);
    let worst = readings
        .iter()
        .zip(&decoded)
        .map(|(a, b)| (a - b).abs())
        .fold(0f64, f64::max);
    let exact = back[..] == slots[..];
    println!(
        "slots round trip exactly: {exact}; largest reading error {worst:.5} C (bound {:.5})",
        1.0 / 128.0
    );
    if !exact {
        return Err("demo: decrypted slots differ from the encrypted ones".into());
    }
    Ok(())
}

fn ms(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64() * 1e3
}

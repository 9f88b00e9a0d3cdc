//! `zeppelin rblwe`: ring-binary-LWE public-key encryption (`crates/rblwe`) with files, for
//! trying the scheme out on a host.
//!
//! - `zeppelin rblwe keygen --out-dir D [--set 1|2|3] [--cca] [--a-seed HEX] [--force]` writes
//!   `D/rblwe.pk` and `D/rblwe.sk` (mode 0600);
//! - `zeppelin rblwe encrypt --pk FILE --in MSG --out CT [--hex]`;
//! - `zeppelin rblwe decrypt --sk FILE --in CT [--masked] [--out MSG] [--hex]`.
//!
//! Every file is a `ZRBL` container of the library ([`rblwe::container`]: an 8-byte header
//! with magic, format version, parameter set, object kind and scheme, followed by the
//! library's byte form of the object), so a Set 1 file is never taken for a Set 2 file of the
//! same length. This module only adds files and flags. All operations use the library's
//! recommended configuration (`Hardened`: constant time and fault hardening) and the
//! operating system's generator (`getrandom`, through `rand_core::OsRng`). Messages are `n/8`
//! bytes (32 for sets 1 and 2, 64 for set 3), raw or, with `--hex`, as hex text.
//!
//! CCA2 decryption uses implicit rejection: a ciphertext that does not re-encrypt exactly
//! decrypts to a pseudorandom message `R(z, H(C))` and the command still succeeds (no
//! validity flag is exposed, by design of the scheme).

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use rand_core::OsRng;
use rblwe::cca::{self, CcaCiphertext, CcaPublicKey, CcaSecretKey};
use rblwe::container::{self, ContainerError, Header, Kind, Scheme};
use rblwe::masked::MaskedSecretKey;
use rblwe::{
    cpa, Ciphertext, EntropyPool, Hardened, ParamSet, PublicKey, PublicParameter, SecretKey, Set1,
    Set2, Set3, SetId,
};
use zeroize::Zeroizing;

use crate::console::{self, ConsoleError};
use crate::input::{read_capped, InputError};
use crate::output::{
    check_file_destination, commit_all, write_file, OutputError, Secrecy, StagedFile,
};

/// Arguments of `zeppelin rblwe`.
#[derive(Args, Debug)]
pub struct RblweArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: RblweCommand,
}

/// Subcommands of `zeppelin rblwe`.
#[derive(Subcommand, Debug)]
pub enum RblweCommand {
    /// Generate a key pair: OUT_DIR/rblwe.pk and OUT_DIR/rblwe.sk.
    Keygen(KeygenArgs),
    /// Encrypt an n/8-byte message under a public key.
    Encrypt(EncryptArgs),
    /// Decrypt a ciphertext; prints the message as hex unless --out is given.
    Decrypt(DecryptArgs),
}

/// A parameter set on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SetArg {
    /// Set 1: n = 256, q = 256 (84-bit security, per-bit failure 2^-32).
    #[value(name = "1", alias = "set1")]
    One,
    /// Set 2: n = 256, q = 128 (94-bit security, per-bit failure 2^-10: for comparison only).
    #[value(name = "2", alias = "set2")]
    Two,
    /// Set 3: n = 512, q = 256 (190-bit security, per-bit failure 2^-18).
    #[value(name = "3", alias = "set3")]
    Three,
}

impl From<SetArg> for SetId {
    fn from(s: SetArg) -> Self {
        match s {
            SetArg::One => SetId::Set1,
            SetArg::Two => SetId::Set2,
            SetArg::Three => SetId::Set3,
        }
    }
}

/// Arguments of `zeppelin rblwe keygen`.
#[derive(Args, Debug)]
pub struct KeygenArgs {
    /// Directory for rblwe.pk and rblwe.sk (created if missing).
    #[arg(long, value_name = "D")]
    pub out_dir: PathBuf,
    /// Parameter set.
    #[arg(long, value_enum, default_value = "1")]
    pub set: SetArg,
    /// CCA2 keys (Fujisaki-Okamoto wrapper with implicit rejection) instead of CPA keys.
    #[arg(long)]
    pub cca: bool,
    /// Public 32-byte seed (64 hex digits) of the public parameter `a`, for deployments that
    /// share one `a`; default: a fresh random seed per key pair.
    #[arg(long, value_name = "HEX")]
    pub a_seed: Option<String>,
    /// Replace existing key files.
    #[arg(long)]
    pub force: bool,
}

/// Arguments of `zeppelin rblwe encrypt`.
#[derive(Args, Debug)]
pub struct EncryptArgs {
    /// Public key file (rblwe.pk).
    #[arg(long, value_name = "FILE")]
    pub pk: PathBuf,
    /// Message: exactly n/8 bytes (32 for sets 1 and 2, 64 for set 3).
    #[arg(long = "in", value_name = "MSG")]
    pub input: PathBuf,
    /// Ciphertext file to write.
    #[arg(long = "out", value_name = "CT")]
    pub output: PathBuf,
    /// The message file is hex text (2n/8 hex digits; whitespace ignored).
    #[arg(long)]
    pub hex: bool,
}

/// Arguments of `zeppelin rblwe decrypt`.
#[derive(Args, Debug)]
pub struct DecryptArgs {
    /// Secret key file (rblwe.sk).
    #[arg(long, value_name = "FILE")]
    pub sk: PathBuf,
    /// Ciphertext file.
    #[arg(long = "in", value_name = "CT")]
    pub input: PathBuf,
    /// Write the message here (raw bytes, or hex text with --hex) instead of printing it as
    /// hex on stdout.
    #[arg(long = "out", value_name = "MSG")]
    pub output: Option<PathBuf>,
    /// Masked decryption: the secret is split into fresh arithmetic shares and decrypted
    /// first-order masked (same result, side-channel hardened).
    #[arg(long)]
    pub masked: bool,
    /// With --out: write hex text instead of raw bytes.
    #[arg(long)]
    pub hex: bool,
}

/// Runs `zeppelin rblwe`; an `Err` is shown as one line on stderr (exit status 1).
pub fn run(args: RblweArgs) -> RblweResult<()> {
    match args.command {
        RblweCommand::Keygen(a) => keygen(&a),
        RblweCommand::Encrypt(a) => encrypt(&a),
        RblweCommand::Decrypt(a) => decrypt(&a),
    }
}

// ----- files ------------------------------------------------------------------------------

/// File names written by `keygen`.
const PK_FILE: &str = "rblwe.pk";
const SK_FILE: &str = "rblwe.sk";

/// Everything `zeppelin rblwe` can reject; each message names the file and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum RblweError {
    /// A file could not be read, written or created.
    #[error("cannot {action} {}: {source}", path.display())]
    Io {
        /// "read", "write", ...
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// An output was not written (nothing visible changed).
    #[error(transparent)]
    Output(#[from] OutputError),
    /// An input file was refused before it was parsed.
    #[error(transparent)]
    Input(#[from] InputError),
    /// Standard output or error could not be written.
    #[error(transparent)]
    Console(#[from] ConsoleError),
    /// A file that is not a well-formed container of the kind the option needs (too short,
    /// wrong magic, unknown version or header byte, wrong kind, truncated or padded).
    #[error("{}: {source}", path.display())]
    Container {
        /// The file.
        path: PathBuf,
        /// What the container check found.
        source: ContainerError,
    },
    /// A ciphertext made for another parameter set or scheme than the key.
    #[error("{}: the ciphertext is {ct}, the key {} is {sk}", ciphertext.display(), key.display())]
    KeyMismatch {
        /// The ciphertext file.
        ciphertext: PathBuf,
        /// Its header.
        ct: Header,
        /// The key file.
        key: PathBuf,
        /// Its header.
        sk: Header,
    },
    /// The library rejected a payload or an operation failed.
    #[error("{what}: {source}")]
    Rblwe {
        /// The file or operation.
        what: String,
        /// The library's error.
        source: rblwe::Error,
    },
    /// A message of the wrong length.
    #[error("{}: a {} message is n/8 = {expected} bytes, got {actual}", path.display(), set.name())]
    MessageLength {
        /// The message file.
        path: PathBuf,
        /// The set of the key.
        set: SetId,
        /// Required bytes.
        expected: usize,
        /// Bytes given.
        actual: usize,
    },
    /// Text that is not hex.
    #[error("{what}: {reason}")]
    BadHex {
        /// The file or option.
        what: String,
        /// What is wrong with it.
        reason: String,
    },
}

type RblweResult<T> = Result<T, RblweError>;

fn lib_err(what: impl fmt::Display) -> impl FnOnce(rblwe::Error) -> RblweError {
    let what = what.to_string();
    move |source| RblweError::Rblwe { what, source }
}

/// The largest container file of `kind` over every set and scheme.
fn container_cap(kind: Kind) -> usize {
    [SetId::Set1, SetId::Set2, SetId::Set3]
        .into_iter()
        .flat_map(|set| [Scheme::Cpa, Scheme::Cca2].map(|scheme| Header::new(set, kind, scheme)))
        .map(Header::file_len)
        .max()
        .unwrap_or(0)
}

/// Cap of a message file: the largest message (Set 3, 64 bytes) as hex with generous
/// whitespace.
const MESSAGE_CAP: usize = 4096;

/// Reads a container file of `kind`, at most as long as the largest one, zeroized on drop.
fn read_container(path: &Path, kind: Kind) -> RblweResult<Zeroizing<Vec<u8>>> {
    let what = match kind {
        Kind::PublicKey => "RBLWE public key",
        Kind::SecretKey => "RBLWE secret key",
        Kind::Ciphertext => "RBLWE ciphertext",
    };
    Ok(read_capped(path, what, container_cap(kind))?)
}

/// Parses and checks the container in `bytes` (the contents of `path`), requiring `kind`;
/// returns the header and the payload.
fn open<'a>(path: &Path, bytes: &'a [u8], kind: Kind) -> RblweResult<(Header, &'a [u8])> {
    container::open(bytes, kind).map_err(|source| RblweError::Container {
        path: path.to_path_buf(),
        source,
    })
}

/// The contents of `path`: header followed by payload.
fn framed(path: &Path, header: Header, payload: &[u8]) -> RblweResult<Zeroizing<Vec<u8>>> {
    let mut out = Zeroizing::new(vec![0u8; header.file_len()]);
    container::write(header, payload, &mut out).map_err(|source| RblweError::Container {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(out)
}

// ----- hex --------------------------------------------------------------------------------

/// Hex text of `bytes` (a message or a key), without a secret-indexed table or a branch on
/// a digit: `'0' + x`, plus `'a' - '0' - 10` where the mask `(9 - x) >> 8` says `x > 9`.
fn to_hex(bytes: &[u8]) -> Zeroizing<String> {
    let digit = |x: u8| {
        let x = i16::from(x);
        let c = x + 0x30 + (((9 - x) >> 8) & 0x27);
        char::from(c.to_le_bytes()[0])
    };
    let mut s = Zeroizing::new(String::with_capacity(2 * bytes.len()));
    for b in bytes {
        s.push(digit(b >> 4));
        s.push(digit(b & 15));
    }
    s
}

/// -1 (all ones) when `lo <= c <= hi`, else 0, without a branch.
fn in_range(c: i16, lo: i16, hi: i16) -> i16 {
    ((lo - 1 - c) & (c - hi - 1)) >> 15
}

/// Bytes from hex text (ASCII whitespace ignored). Digits are decoded without a branch or a
/// table lookup on their values; an error says what is wrong, never which characters (they
/// may be a message).
fn from_hex(what: &str, text: &[u8]) -> RblweResult<Zeroizing<Vec<u8>>> {
    let bad = |reason: String| RblweError::BadHex {
        what: what.to_string(),
        reason,
    };
    // Compaction: every character is stored, the index advances past non-whitespace only.
    let mut digits = Zeroizing::new(vec![0i16; text.len()]);
    let mut count = 0usize;
    for &c in text {
        let c = i16::from(c);
        // `u8::is_ascii_whitespace`: tab, line feed, form feed, carriage return, space.
        let space = in_range(c, 0x09, 0x0a) | in_range(c, 0x0c, 0x0d) | in_range(c, 0x20, 0x20);
        if let Some(slot) = digits.get_mut(count) {
            *slot = c;
        }
        count += usize::from((!space & 1) as u8);
    }
    if !count.is_multiple_of(2) {
        return Err(bad(format!("odd number of hex digits ({count})")));
    }
    let mut invalid = 0i16;
    let mut value = |c: i16| {
        let digit = in_range(c, 0x30, 0x39);
        let lower = in_range(c, 0x61, 0x66);
        let upper = in_range(c, 0x41, 0x46);
        invalid |= !(digit | lower | upper);
        ((digit & (c - 0x30)) | (lower & (c - 0x57)) | (upper & (c - 0x37))) & 15
    };
    let mut out = Zeroizing::new(Vec::with_capacity(count / 2));
    for pair in digits[..count].chunks_exact(2) {
        let byte = value(pair[0]) << 4 | value(pair[1]);
        out.push(byte.to_le_bytes()[0]);
    }
    if invalid != 0 {
        return Err(bad(String::from(
            "not hex text (characters other than 0-9, a-f, A-F and whitespace)",
        )));
    }
    Ok(out)
}

// ----- operations -------------------------------------------------------------------------

/// Bytes buffered from the OS generator (refills are 32 bytes; see `rblwe::EntropyPool`).
const POOL: usize = 256;

fn os_pool() -> EntropyPool<OsRng, POOL> {
    EntropyPool::new(OsRng)
}

/// Serialized key pair: (public key payload, secret key payload).
type KeyBytes = (Vec<u8>, Zeroizing<Vec<u8>>);

fn keygen(a: &KeygenArgs) -> RblweResult<()> {
    let set = SetId::from(a.set);
    let scheme = if a.cca { Scheme::Cca2 } else { Scheme::Cpa };
    let mut seed = [0u8; 32];
    match &a.a_seed {
        Some(text) => {
            let bytes = from_hex("--a-seed", text.as_bytes())?;
            if bytes.len() != 32 {
                return Err(RblweError::BadHex {
                    what: "--a-seed".into(),
                    reason: format!("must be 32 bytes (64 hex digits), got {}", bytes.len()),
                });
            }
            seed.copy_from_slice(&bytes);
        }
        None => os_pool()
            .fill(&mut seed)
            .map_err(lib_err("seed of the public parameter"))?,
    }
    // Every check of the destination before a key is made.
    let pk_path = a.out_dir.join(PK_FILE);
    let sk_path = a.out_dir.join(SK_FILE);
    for path in [&pk_path, &sk_path] {
        if check_file_destination(path)? && !a.force {
            return Err(OutputError::Exists { path: path.clone() }.into());
        }
    }
    let (pk, sk) = match set {
        SetId::Set1 => keygen_for::<Set1>(&seed, a.cca),
        SetId::Set2 => keygen_for::<Set2>(&seed, a.cca),
        SetId::Set3 => keygen_for::<Set3>(&seed, a.cca),
    }?;
    let header = |kind| Header::new(set, kind, scheme);
    let pk_bytes = framed(&pk_path, header(Kind::PublicKey), &pk)?;
    let sk_bytes = framed(&sk_path, header(Kind::SecretKey), &sk)?;

    let created = !a.out_dir.exists();
    fs::create_dir_all(&a.out_dir).map_err(|source| RblweError::Io {
        action: "create",
        path: a.out_dir.clone(),
        source,
    })?;
    let result = stage_and_report(a, set, scheme, (&pk_path, &pk_bytes), (&sk_path, &sk_bytes));
    if result.is_err() && created {
        // Only the empty directory this run made.
        let _ = fs::remove_dir(&a.out_dir);
    }
    result
}

/// Writes both key files staged, reports on stdout and stderr, and only then commits the
/// pair together: any failure, a failing stdout included, leaves the old keys in place.
fn stage_and_report(
    a: &KeygenArgs,
    set: SetId,
    scheme: Scheme,
    (pk_path, pk_bytes): (&Path, &[u8]),
    (sk_path, sk_bytes): (&Path, &[u8]),
) -> RblweResult<()> {
    let staged = vec![
        StagedFile::write(sk_path, sk_bytes, Secrecy::Secret)?,
        StagedFile::write(pk_path, pk_bytes, Secrecy::Public)?,
    ];
    if set == SetId::Set2 {
        console::warn(format_args!(
            "zeppelin rblwe: warning: set2 has a per-bit decryption failure rate of about 2^-10 \
             (about 1 in 5 messages decrypts wrongly); use it for comparison only"
        ))?;
    }
    crate::outln!(
        "rblwe keygen: {} {scheme} key pair in {}: {PK_FILE} ({} bytes), {SK_FILE} ({} bytes)",
        set.name(),
        a.out_dir.display(),
        pk_bytes.len(),
        sk_bytes.len()
    )?;
    commit_all(staged)?;
    Ok(())
}

fn keygen_for<P: ParamSet>(seed: &[u8; 32], cca: bool) -> RblweResult<KeyBytes> {
    let a = PublicParameter::<P>::from_seed(seed);
    let mut pool = os_pool();
    if cca {
        let (pk, sk) = cca::keygen::<P, Hardened, _, POOL>(&a, &mut pool)
            .map_err(lib_err("key generation"))?;
        let mut sk_bytes = Zeroizing::new(vec![0u8; CcaSecretKey::<P, SecretKey<P>>::BYTES]);
        sk.write_bytes(&mut sk_bytes)
            .map_err(lib_err("secret key"))?;
        Ok((pk.to_bytes().as_ref().to_vec(), sk_bytes))
    } else {
        let (pk, sk) = cpa::keygen::<P, Hardened, _, POOL>(&a, &mut pool)
            .map_err(lib_err("key generation"))?;
        let mut sk_bytes = Zeroizing::new(vec![0u8; SecretKey::<P>::BYTES]);
        sk.write_bytes(&mut sk_bytes)
            .map_err(lib_err("secret key"))?;
        Ok((pk.to_bytes().as_ref().to_vec(), sk_bytes))
    }
}

/// Reads a message file for `set`: exactly n/8 raw bytes, or hex text with `hex`.
fn read_message(path: &Path, set: SetId, hex: bool) -> RblweResult<Zeroizing<Vec<u8>>> {
    let raw = read_capped(path, "message", MESSAGE_CAP)?;
    let message = if hex {
        from_hex(&path.display().to_string(), &raw)?
    } else {
        raw
    };
    let expected = set.n() / 8;
    if message.len() != expected {
        return Err(RblweError::MessageLength {
            path: path.to_path_buf(),
            set,
            expected,
            actual: message.len(),
        });
    }
    Ok(message)
}

fn encrypt(a: &EncryptArgs) -> RblweResult<()> {
    check_file_destination(&a.output)?;
    let pk_bytes = read_container(&a.pk, Kind::PublicKey)?;
    let (header, pk) = open(&a.pk, &pk_bytes, Kind::PublicKey)?;
    let message = read_message(&a.input, header.set, a.hex)?;
    let what = a.pk.display().to_string();
    let ct = match header.set {
        SetId::Set1 => encrypt_for::<Set1>(pk, &message, header.scheme, &what),
        SetId::Set2 => encrypt_for::<Set2>(pk, &message, header.scheme, &what),
        SetId::Set3 => encrypt_for::<Set3>(pk, &message, header.scheme, &what),
    }?;
    let out = framed(
        &a.output,
        Header {
            kind: Kind::Ciphertext,
            ..header
        },
        &ct,
    )?;
    write_file(&a.output, &out, Secrecy::Public)?;
    Ok(())
}

fn encrypt_for<P: ParamSet>(
    pk: &[u8],
    message: &[u8],
    scheme: Scheme,
    what: &str,
) -> RblweResult<Vec<u8>> {
    let mut pool = os_pool();
    match scheme {
        Scheme::Cpa => {
            let pk = PublicKey::<P>::from_bytes(pk).map_err(lib_err(what))?;
            let ct = cpa::encrypt::<P, Hardened, _, POOL>(&pk, message, &mut pool)
                .map_err(lib_err("encryption"))?;
            Ok(ct.to_bytes().as_ref().to_vec())
        }
        Scheme::Cca2 => {
            let pk = CcaPublicKey::<P>::from_bytes(pk).map_err(lib_err(what))?;
            let ct = cca::encrypt::<P, Hardened, _, POOL>(&pk, message, &mut pool)
                .map_err(lib_err("encryption"))?;
            let mut out = vec![0u8; CcaCiphertext::<P>::BYTES];
            ct.write_bytes(&mut out).map_err(lib_err("ciphertext"))?;
            Ok(out)
        }
    }
}

fn decrypt(a: &DecryptArgs) -> RblweResult<()> {
    if let Some(path) = &a.output {
        check_file_destination(path)?;
    }
    let sk_bytes = read_container(&a.sk, Kind::SecretKey)?;
    let (sk_header, sk) = open(&a.sk, &sk_bytes, Kind::SecretKey)?;
    let ct_bytes = read_container(&a.input, Kind::Ciphertext)?;
    let (ct_header, ct) = open(&a.input, &ct_bytes, Kind::Ciphertext)?;
    if (ct_header.set, ct_header.scheme) != (sk_header.set, sk_header.scheme) {
        return Err(RblweError::KeyMismatch {
            ciphertext: a.input.clone(),
            ct: ct_header,
            key: a.sk.clone(),
            sk: sk_header,
        });
    }
    let sk_what = a.sk.display().to_string();
    let ct_what = a.input.display().to_string();
    let inputs = DecryptInputs {
        sk,
        ct,
        sk_what: &sk_what,
        ct_what: &ct_what,
        scheme: sk_header.scheme,
        masked: a.masked,
    };
    let message = match sk_header.set {
        SetId::Set1 => decrypt_for::<Set1>(&inputs),
        SetId::Set2 => decrypt_for::<Set2>(&inputs),
        SetId::Set3 => decrypt_for::<Set3>(&inputs),
    }?;
    match &a.output {
        None => {
            let mut line = to_hex(&message);
            line.push('\n');
            console::out(&line)?;
            Ok(())
        }
        Some(path) => {
            let body: Zeroizing<Vec<u8>> = if a.hex {
                let mut line = to_hex(&message);
                line.push('\n');
                Zeroizing::new(line.as_bytes().to_vec())
            } else {
                message
            };
            write_file(path, &body, Secrecy::Secret)?;
            Ok(())
        }
    }
}

struct DecryptInputs<'a> {
    sk: &'a [u8],
    ct: &'a [u8],
    sk_what: &'a str,
    ct_what: &'a str,
    scheme: Scheme,
    masked: bool,
}

fn decrypt_for<P: ParamSet>(i: &DecryptInputs<'_>) -> RblweResult<Zeroizing<Vec<u8>>> {
    let mut out = Zeroizing::new(vec![0u8; P::N / 8]);
    let mut pool = os_pool();
    let failed = lib_err("decryption");
    match i.scheme {
        Scheme::Cpa => {
            let sk = SecretKey::<P>::from_bytes(i.sk).map_err(lib_err(i.sk_what))?;
            let ct = Ciphertext::<P>::from_bytes(i.ct).map_err(lib_err(i.ct_what))?;
            if i.masked {
                let mut masked = MaskedSecretKey::from_secret_key(&sk, &mut pool)
                    .map_err(lib_err("masking the secret key"))?;
                masked
                    .decrypt::<Hardened, _, POOL>(&ct, &mut pool, &mut out)
                    .map_err(failed)?;
            } else {
                cpa::decrypt::<P, Hardened>(&sk, &ct, &mut out).map_err(failed)?;
            }
        }
        Scheme::Cca2 => {
            let mut sk = CcaSecretKey::<P>::from_bytes(i.sk).map_err(lib_err(i.sk_what))?;
            let ct = CcaCiphertext::<P>::from_bytes(i.ct).map_err(lib_err(i.ct_what))?;
            if i.masked {
                let mut masked = sk
                    .to_masked(&mut pool)
                    .map_err(lib_err("masking the secret key"))?;
                cca::decrypt::<P, Hardened, _, _, POOL>(&mut masked, &ct, &mut pool, &mut out)
                    .map_err(failed)?;
            } else {
                cca::decrypt::<P, Hardened, _, _, POOL>(&mut sk, &ct, &mut pool, &mut out)
                    .map_err(failed)?;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_decoding_accepts_whitespace_and_rejects_junk() {
        assert_eq!(
            &from_hex("x", b"0aFF\n 10").unwrap()[..],
            &[0x0a, 0xff, 0x10]
        );
        assert!(matches!(
            from_hex("x", b"abc"),
            Err(RblweError::BadHex { .. })
        ));
        assert!(matches!(
            from_hex("x", b"zz"),
            Err(RblweError::BadHex { .. })
        ));
        assert_eq!(&to_hex(&[0x00, 0x9c, 0xff])[..], "009cff");
    }

    /// The branch-free codec against `std`'s formatting and `is_ascii_hexdigit`, over every
    /// byte value.
    #[test]
    fn branch_free_hex_matches_std_on_every_byte() {
        let all: Vec<u8> = (0..=255).collect();
        let expected: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(&to_hex(&all)[..], expected);
        assert_eq!(&from_hex("x", expected.as_bytes()).unwrap()[..], &all[..]);
        let upper = expected.to_uppercase();
        assert_eq!(&from_hex("x", upper.as_bytes()).unwrap()[..], &all[..]);
        for c in 0..=255u8 {
            // `c0` decodes iff c is a digit; `00c` iff c is skipped as whitespace.
            assert_eq!(
                from_hex("x", &[c, b'0']).is_ok(),
                c.is_ascii_hexdigit(),
                "{c:#04x}"
            );
            let skipped = from_hex("x", &[b'0', b'0', c]).is_ok();
            assert_eq!(skipped, c.is_ascii_whitespace(), "{c:#04x}");
        }
    }
}

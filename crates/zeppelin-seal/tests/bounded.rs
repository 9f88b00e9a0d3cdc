//! Hostile sizes cost kilobytes: every reader checks declared sizes against the parameters and
//! against the input before allocating, and decompression stops at the longest object the
//! parameters allow. Measured with a counting global allocator (peak live bytes above the
//! level before the call).
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    reason = "helpers outside #[test] functions are test code too (clippy.toml covers only #[test] functions)"
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use zeppelin::Seal4096;
use zeppelin_seal::device::{self, DeviceContext};
use zeppelin_seal::wire::{Bound, Reader, SealHeader, HEADER_SIZE};
use zeppelin_seal::{
    Ciphertext, ComprMode, EncryptionParameters, GaloisKeys, Plaintext, PublicKey, RelinKeys,
    SealContext, SealError, SecretKey,
};

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is forwarded unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::SeqCst) + layout.size();
            PEAK.fetch_max(live, Ordering::SeqCst);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is forwarded unchanged.
        unsafe { System.dealloc(ptr, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::SeqCst);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// One measurement at a time (the test harness runs tests on threads).
static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `f` and returns its result and the peak bytes it had live beyond what was live before.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE.load(Ordering::SeqCst);
    PEAK.store(before, Ordering::SeqCst);
    let out = f();
    (out, PEAK.load(Ordering::SeqCst) - before)
}

fn is_prime(n: u64) -> bool {
    let mulmod = |a: u64, b: u64| ((a as u128 * b as u128) % n as u128) as u64;
    let powmod = |mut b: u64, mut e: u64| {
        let mut r = 1u64;
        while e > 0 {
            if e & 1 == 1 {
                r = mulmod(r, b);
            }
            b = mulmod(b, b);
            e >>= 1;
        }
        r
    };
    let (mut d, mut s) = (n - 1, 0);
    while d % 2 == 0 {
        d /= 2;
        s += 1;
    }
    [2u64, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]
        .iter()
        .all(|&a| {
            let mut x = powmod(a, d);
            if x == 1 || x == n - 1 {
                return true;
            }
            for _ in 1..s {
                x = mulmod(x, x);
                if x == n - 1 {
                    return true;
                }
            }
            false
        })
}

/// SEAL's largest parameters: n = 2^17 and 256 primes of about 50 bits, each 1 mod 2n.
fn largest_parameters() -> EncryptionParameters {
    let two_n = 1u64 << 18;
    let primes: Vec<u64> = (1u64 << 32..)
        .map(|k| k * two_n + 1)
        .filter(|&q| is_prime(q))
        .take(256)
        .collect();
    EncryptionParameters::bfv(1 << 17, primes, 65537)
}

fn header(mode: ComprMode, size: usize) -> [u8; HEADER_SIZE] {
    SealHeader::new(mode, size as u64).to_bytes()
}

/// The members of a ciphertext's metadata and its DynArray's header and count.
fn ciphertext_prefix(parms_id: &[u8; 32], size: u64, n: u64, k: u64, count: u64) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(parms_id);
    m.push(0);
    for v in [size, n, k, 1.0f64.to_bits(), 1] {
        m.extend_from_slice(&v.to_le_bytes());
    }
    m.extend_from_slice(&header(
        ComprMode::None,
        HEADER_SIZE + 8 + 8 * count as usize,
    ));
    m.extend_from_slice(&count.to_le_bytes());
    m
}

fn framed(members: &[u8]) -> Vec<u8> {
    let mut out = header(ComprMode::None, HEADER_SIZE + members.len()).to_vec();
    out.extend_from_slice(members);
    out
}

#[test]
fn largest_parameters_cost_kilobytes_and_are_refused_by_a_preset() {
    let _serial = SERIAL.lock().unwrap();
    let bytes = largest_parameters().save(ComprMode::None).unwrap();
    assert!(bytes.len() < 6_500, "{}", bytes.len());
    let (parms, peak) = peak_of(|| EncryptionParameters::load(&bytes).unwrap());
    assert!(peak < 16 * 1024, "loading the parameters: {peak} bytes");
    // The device's path (decrypt, adapt): refused by the preset before any context is built.
    let (refused, peak) = peak_of(|| DeviceContext::<Seal4096>::from_parameters(parms.clone()));
    assert!(matches!(refused, Err(SealError::DeviceMismatch { .. })));
    assert!(peak < 16 * 1024, "preset check: {peak} bytes");
    // A context of them (the trusted side's `keys`): 256 levels, a few hundred kilobytes.
    let (ctx, peak) = peak_of(|| SealContext::new(parms).unwrap());
    assert!(peak < 600 * 1024, "context: {peak} bytes");
    assert_eq!(ctx.n(), 1 << 17);
}

#[test]
fn hostile_sizes_under_the_largest_parameters_allocate_nothing_large() {
    let _serial = SERIAL.lock().unwrap();
    let ctx = SealContext::new(largest_parameters()).unwrap();
    let n = ctx.n() as u64;
    let first = ctx.first_level();
    let k = first.coeff_modulus.len() as u64;
    // A 6 KB ciphertext declaring 16 polynomials of 255 primes at n = 2^17 (4.3 GB of data).
    let mut members = ciphertext_prefix(&first.parms_id.0, 16, n, k, 16 * n * k);
    members.resize(6_000, 0);
    let ct = framed(&members);
    let (r, peak) = peak_of(|| Ciphertext::load(&ctx, &ct));
    assert!(matches!(r, Err(SealError::Truncated { .. })), "{r:?}");
    assert!(peak < 64 * 1024, "ciphertext: {peak} bytes");
    // The same with zlib and zstd: the body is decompressed only as far as it goes.
    for mode in [ComprMode::Zlib, ComprMode::Zstd] {
        let b = zeppelin_seal::wire::frame(&members, mode).unwrap();
        let (r, peak) = peak_of(|| Ciphertext::load(&ctx, &b));
        assert!(r.is_err(), "{mode:?}");
        assert!(peak < 2 * 1024 * 1024, "{mode:?} ciphertext: {peak} bytes");
    }
    // A secret key (a plaintext at the key level) declaring all 2^25 residues.
    let key = ctx.key_level();
    let count = n * key.coeff_modulus.len() as u64;
    let mut m = key.parms_id.0.to_vec();
    m.extend_from_slice(&count.to_le_bytes());
    m.extend_from_slice(&1.0f64.to_bits().to_le_bytes());
    m.extend_from_slice(&header(
        ComprMode::None,
        HEADER_SIZE + 8 + 8 * count as usize,
    ));
    m.extend_from_slice(&count.to_le_bytes());
    m.resize(6_000, 0);
    let (r, peak) = peak_of(|| SecretKey::load(&ctx, &framed(&m)));
    assert!(matches!(r, Err(SealError::Truncated { .. })), "{r:?}");
    assert!(peak < 64 * 1024, "secret key: {peak} bytes");
    // Relinearization and Galois keys declaring the most slots they may have.
    type Load = fn(&SealContext, &[u8]) -> zeppelin_seal::Result<RelinKeys>;
    let relin: Load = RelinKeys::load;
    let galois: Load = |c, b| GaloisKeys::load(c, b).map(|g| RelinKeys(g.0));
    for (slots, load) in [(14u64, relin), (n, galois)] {
        let mut m = key.parms_id.0.to_vec();
        m.extend_from_slice(&slots.to_le_bytes());
        m.extend_from_slice(&k.to_le_bytes());
        m.resize(6_000, 0);
        let (r, peak) = peak_of(|| load(&ctx, &framed(&m)));
        assert!(r.is_err());
        assert!(peak < 64 * 1024, "{slots} key slots: {peak} bytes");
    }
}

/// A zstd or zlib body that inflates far beyond the object (16 MiB of zeros after valid-looking
/// members): decompression stops one byte past the members, within the preset's largest
/// ciphertext.
#[test]
fn compression_bombs_stop_at_the_longest_object_of_the_preset() {
    let _serial = SERIAL.lock().unwrap();
    let ctx = DeviceContext::<Seal4096>::new().unwrap();
    let seal = ctx.seal();
    let level = seal.first_level();
    let (n, k) = (seal.n() as u64, level.coeff_modulus.len() as u64);
    let mut members = ciphertext_prefix(&level.parms_id.0, 2, n, k, 2 * n * k);
    members.resize(members.len() + (2 * n * k * 8) as usize + (16 << 20), 0);
    // The longest Seal4096 ciphertext: 16 polynomials of the four key-level primes.
    let longest = 16 * 4 * 4096 * 8 + 1024;
    for mode in [ComprMode::Zlib, ComprMode::Zstd] {
        let body = match mode {
            ComprMode::Zlib => {
                let mut e =
                    flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
                e.write_all(&members).unwrap();
                e.finish().unwrap()
            }
            _ => zstd::stream::encode_all(&members[..], 3).unwrap(),
        };
        let mut bomb = header(mode, HEADER_SIZE + body.len()).to_vec();
        bomb.extend_from_slice(&body);
        assert!(bomb.len() < 64 * 1024, "{mode:?}: {} bytes", bomb.len());
        let (r, peak) = peak_of(|| device::read_any(&ctx, &bomb));
        // Refused either where the members end, or by the decoder when the frame asks for a
        // window wider than the preset's longest ciphertext needs.
        assert!(
            matches!(
                r,
                Err(SealError::DecompressedTrailing { .. } | SealError::Decompression { .. })
            ),
            "{mode:?}: {r:?}"
        );
        // The object's members and the decoder's window (at most 2^22 for this preset).
        assert!(
            peak < longest + (4 << 20) + (1 << 20),
            "{mode:?}: {peak} bytes"
        );
        println!(
            "{mode:?} bomb: {} bytes in, peak {peak} bytes: {r:?}",
            bomb.len()
        );
    }
}

#[test]
fn the_reader_never_passes_its_bound() {
    let data = [7u8; 64];
    let mut src = &data[..];
    let mut r = Reader::new(&mut src, "test", Bound::Decompressed(16));
    assert!(r.u64_words(2, "w").is_ok());
    assert!(matches!(
        r.u64_words(1, "w"),
        Err(SealError::DecompressionLimit { limit: 16, .. })
    ));
    let mut src = &data[..];
    let mut r = Reader::new(&mut src, "test", Bound::Input(64));
    assert!(matches!(
        r.u64_words(1 << 40, "w"),
        Err(SealError::Truncated { .. })
    ));
    // Plaintexts and public keys share the bounds.
    let ctx = SealContext::new(EncryptionParameters::for_preset::<Seal4096>()).unwrap();
    let mut m = [0u8; 32].to_vec();
    m.extend_from_slice(&(1u64 << 50).to_le_bytes());
    assert!(Plaintext::load(&ctx, &framed(&m)).is_err());
    assert!(PublicKey::load(&ctx, &framed(&m)).is_err());
}

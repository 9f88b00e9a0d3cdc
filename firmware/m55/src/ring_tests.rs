//! On-target tests of zeppelin-ring's NTT against independent ground truth:
//! schoolbook negacyclic products (small n) and evaluations computed on the host by
//! `vectors/gen_ntt_vectors.py` (plain Python, Horner at each power of psi), n = 4096.

use crate::harness::{first_mismatch, Harness, TestRng};
use zeppelin_ring::{NttBackend, NttTable, NttView};

/// An NTT table built at compile time; a bad prime is a build error.
macro_rules! table {
    ($q:expr, $n:expr) => {{
        const T: NttTable<[u32; $n]> = match NttTable::new_array($q) {
            Ok(t) => t,
            Err(_) => panic!("not an NTT-friendly prime for this degree"),
        };
        T
    }};
}

pub const N: usize = 4096;

/// The five primes of the presets (Seal4096 data + special, Zeppelin4096's fourth).
pub const PRIMES: [u32; 5] = [
    134_176_769,
    134_111_233,
    134_012_929,
    133_963_777,
    268_369_921,
];

/// Test tables (the bfv presets carry their own in flash): in `.bulk` with the vectors.
#[link_section = ".bulk"]
pub static TABLES: [NttTable<[u32; N]>; 5] = [
    table!(134_176_769, 4096),
    table!(134_111_233, 4096),
    table!(134_012_929, 4096),
    table!(133_963_777, 4096),
    table!(268_369_921, 4096),
];

/// Host-computed vectors, little-endian u32. Test data, not part of the client: it lives in
/// the `.bulk` section (see memory.x), outside the 512 KiB code memory.
macro_rules! bulk {
    ($name:ident, $file:literal) => {
        #[link_section = ".bulk"]
        static $name: [u8; 4 * N] = *include_bytes!($file);
    };
}
bulk!(IN0, "../vectors/ntt_134176769_in.bin");
bulk!(FWD0, "../vectors/ntt_134176769_fwd.bin");
bulk!(IN1, "../vectors/ntt_134111233_in.bin");
bulk!(FWD1, "../vectors/ntt_134111233_fwd.bin");
bulk!(IN2, "../vectors/ntt_134012929_in.bin");
bulk!(FWD2, "../vectors/ntt_134012929_fwd.bin");
bulk!(IN3, "../vectors/ntt_133963777_in.bin");
bulk!(FWD3, "../vectors/ntt_133963777_fwd.bin");
bulk!(IN4, "../vectors/ntt_268369921_in.bin");
bulk!(FWD4, "../vectors/ntt_268369921_fwd.bin");

/// (input coefficients, expected evaluations) per prime of [`PRIMES`].
static VECTORS: [(&[u8; 4 * N], &[u8; 4 * N]); 5] = [
    (&IN0, &FWD0),
    (&IN1, &FWD1),
    (&IN2, &FWD2),
    (&IN3, &FWD3),
    (&IN4, &FWD4),
];

pub fn load_words(bytes: &[u8], out: &mut [u32]) {
    for (o, c) in out.iter_mut().zip(bytes.chunks_exact(4)) {
        *o = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
    }
}

/// Negacyclic product by the definition, in u64 with `%` (test code, public data).
#[expect(
    clippy::needless_range_loop,
    reason = "index loops mirror the definition: out[(i + j) mod n] += a[i] * b[j]"
)]
fn schoolbook(q: u32, a: &[u32], b: &[u32], out: &mut [u32]) {
    let n = a.len();
    let q64 = q as u64;
    for o in out.iter_mut() {
        *o = 0;
    }
    for i in 0..n {
        for j in 0..n {
            let p = a[i] as u64 * b[j] as u64 % q64;
            let k = (i + j) % n;
            let cur = out[k] as u64;
            out[k] = if i + j < n {
                (cur + p) % q64
            } else {
                (cur + q64 - p) % q64
            } as u32;
        }
    }
}

fn product_test<B: NttBackend, const M: usize>(
    h: &mut Harness,
    ntt: B,
    name: &str,
    view: &NttView<'_>,
    rng: &mut TestRng,
) {
    let q = view.modulus.value();
    let mut a = [0u32; M];
    let mut b = [0u32; M];
    let mut expect = [0u32; M];
    let mut ok = true;
    for _ in 0..4 {
        for x in a.iter_mut().chain(b.iter_mut()) {
            *x = rng.below(q);
        }
        schoolbook(q, &a, &b, &mut expect);
        let (mut fa, mut fb, mut prod) = (a, b, [0u32; M]);
        let r = ntt
            .forward(view, &mut fa)
            .and(ntt.forward(view, &mut fb))
            .and(ntt.pointwise_mul(&view.modulus, &fa, &fb, &mut prod))
            .and(ntt.inverse(view, &mut prod));
        ok &= r.is_ok() && prod == expect;
    }
    h.check(
        name,
        ok,
        format_args!("NTT product != schoolbook (q = {q}, n = {M})"),
    );
}

/// NTT products against schoolbook for small n, and the n = 4096 vectors, for backend `B`.
pub fn run<B: NttBackend>(h: &mut Harness, ntt: B, scratch: &mut [u32; N], expect: &mut [u32; N]) {
    let mut rng = TestRng::new(0x006d_3535_0001);
    let small7681_64 = table!(7681, 64);
    let small7681_256 = table!(7681, 256);
    let big_64 = table!(134_176_769, 64);
    let big_16 = table!(1_061_093_377, 16);
    let prefix = ntt.name();
    let mut name = heapless_name();
    product_test::<B, 64>(
        h,
        ntt,
        name.set(prefix, " ntt schoolbook q=7681 n=64"),
        &small7681_64.view(),
        &mut rng,
    );
    product_test::<B, 256>(
        h,
        ntt,
        name.set(prefix, " ntt schoolbook q=7681 n=256"),
        &small7681_256.view(),
        &mut rng,
    );
    product_test::<B, 64>(
        h,
        ntt,
        name.set(prefix, " ntt schoolbook q=134176769 n=64"),
        &big_64.view(),
        &mut rng,
    );
    product_test::<B, 16>(
        h,
        ntt,
        name.set(prefix, " ntt schoolbook q=1061093377 n=16"),
        &big_16.view(),
        &mut rng,
    );

    for (i, (table, (input, fwd))) in TABLES.iter().zip(VECTORS.iter()).enumerate() {
        let view = table.view();
        load_words(&input[..], scratch);
        load_words(&fwd[..], expect);
        let r = ntt.forward(&view, scratch);
        let miss = first_mismatch(&scratch[..], &expect[..]);
        h.check(
            name.set_q(prefix, " ntt forward = host vectors q=", PRIMES[i]),
            r.is_ok() && miss.is_none(),
            format_args!("{r:?}, first mismatch {miss:?}"),
        );
        load_words(&fwd[..], scratch);
        load_words(&input[..], expect);
        let r = ntt.inverse(&view, scratch);
        let miss = first_mismatch(&scratch[..], &expect[..]);
        h.check(
            name.set_q(prefix, " ntt inverse = host vectors q=", PRIMES[i]),
            r.is_ok() && miss.is_none(),
            format_args!("{r:?}, first mismatch {miss:?}"),
        );
    }
}

/// A fixed-capacity string for test names (no allocator on target).
pub struct Name {
    buf: [u8; 96],
    len: usize,
}

pub const fn heapless_name() -> Name {
    Name {
        buf: [0; 96],
        len: 0,
    }
}

impl Name {
    fn push(&mut self, s: &[u8]) {
        for &c in s {
            if self.len < self.buf.len() {
                self.buf[self.len] = c;
                self.len += 1;
            }
        }
    }

    pub fn set(&mut self, a: &str, b: &str) -> &str {
        self.len = 0;
        self.push(a.as_bytes());
        self.push(b.as_bytes());
        self.as_str()
    }

    pub fn set3(&mut self, a: &str, b: &str, c: &str) -> &str {
        self.len = 0;
        self.push(a.as_bytes());
        self.push(b.as_bytes());
        self.push(c.as_bytes());
        self.as_str()
    }

    pub fn set_q(&mut self, a: &str, b: &str, q: u32) -> &str {
        self.len = 0;
        self.push(a.as_bytes());
        self.push(b.as_bytes());
        let mut digits = [0u8; 10];
        let mut k = digits.len();
        let mut v = q;
        loop {
            k -= 1;
            digits[k] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        let d = digits;
        self.push(&d[k..]);
        self.as_str()
    }

    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("?")
    }
}

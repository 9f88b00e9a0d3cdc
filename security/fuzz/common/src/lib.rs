//! What the fuzz targets and the seed generator share: the fixed keys and contexts a target
//! decrypts or parses under, and the small framing of inputs that choose a context.
//!
//! Every key here comes from a fixed seed, so the seed corpora (written by `fuzz-seedgen`)
//! are valid under exactly the keys the targets use, and a crash reproduces from its input
//! alone.

use std::sync::OnceLock;

use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;
use zeppelin::{Bfv, Params, SecretKey, SecretSeed};
use zeppelin_seal::device::{DeviceContext, SealPreset};
use zeppelin_seal::poly::RnsNtt;
use zeppelin_seal::{EncryptionParameters, SealContext, SecretKey as SealSecretKey};

/// Ring degree of the toy SEAL context: small, so that valid objects are a few hundred bytes
/// and mutations reach every branch of the readers quickly.
pub const TOY_N: usize = 16;
/// The toy context's primes: two data primes and the special prime, each `≡ 1 mod 2·16`,
/// in `(2^29, 2^30)` (also valid evalmult towers for ring dimension 16).
pub const TOY_PRIMES: [u64; 3] = [1_073_741_441, 1_073_740_609, 1_073_739_937];
/// The toy context's plain modulus.
pub const TOY_T: u64 = 257;

/// The toy parameters (BFV, n = 16, three primes, t = 257).
pub fn toy_parameters() -> EncryptionParameters {
    EncryptionParameters::bfv(TOY_N as u64, TOY_PRIMES.to_vec(), TOY_T)
}

/// The toy context, built once.
#[allow(clippy::expect_used)]
pub fn toy_context() -> &'static SealContext {
    static CTX: OnceLock<SealContext> = OnceLock::new();
    CTX.get_or_init(|| SealContext::new(toy_parameters()).expect("toy parameters are valid"))
}

/// The device context of preset `P` (SEAL parameters of the preset).
#[allow(clippy::expect_used)]
pub fn device_context<P: SealPreset>() -> DeviceContext<P> {
    DeviceContext::<P>::new().expect("preset context")
}

/// The Seal4096 device context, built once.
pub fn seal4096() -> &'static DeviceContext<zeppelin::Seal4096> {
    static CTX: OnceLock<DeviceContext<zeppelin::Seal4096>> = OnceLock::new();
    CTX.get_or_init(device_context::<zeppelin::Seal4096>)
}

/// The device secret key every decryption target uses (seed `[1; 32]`).
#[allow(clippy::expect_used)]
pub fn device_secret_key<P: Params>() -> Box<SecretKey<P>> {
    let mut sk = Box::new(SecretKey::<P>::zeroed());
    Bfv::<P>::generate_secret_key_with(&SecretSeed::from_bytes([1; 32]), &mut sk)
        .expect("secret key from a fixed seed");
    sk
}

/// A deterministic generator for everything else random in the seeds.
pub fn rng(label: u8) -> ChaCha20Rng {
    ChaCha20Rng::from_seed([label; 32])
}

/// The toy context's secret key: a fixed ternary secret in NTT form at the key level.
#[allow(clippy::expect_used)]
pub fn toy_secret_key() -> SealSecretKey {
    let ctx = toy_context();
    let key = ctx.key_level();
    let ternary: Vec<i64> = (0..TOY_N as i64).map(|i| (i * 7 % 3) - 1).collect();
    let ntt = RnsNtt::new(&key.coeff_modulus, TOY_N).expect("toy NTT");
    let mut data = ntt.from_signed(&ternary).expect("ternary lift");
    ntt.forward(&mut data).expect("toy NTT forward");
    SealSecretKey {
        parms_id: key.parms_id,
        data,
    }
}

/// The context a SEAL-object input is read under, chosen by its first byte.
pub enum SealCtx {
    /// A fixed context (the toy one or a preset's).
    Fixed(&'static SealContext),
    /// A context from parameters carried in the input itself.
    Parsed(Box<SealContext>),
}

impl std::ops::Deref for SealCtx {
    type Target = SealContext;
    fn deref(&self) -> &SealContext {
        match self {
            Self::Fixed(c) => c,
            Self::Parsed(c) => c,
        }
    }
}

/// First byte of a SEAL-object input: the toy context.
pub const SELECT_TOY: u8 = 0;
/// First byte: the Seal4096 preset's context.
pub const SELECT_SEAL4096: u8 = 1;
/// First byte: `u16` length, that many bytes of `EncryptionParameters`, then the object
/// (a hostile `params.seal` and a hostile object together).
pub const SELECT_PARSED: u8 = 2;

/// Splits a SEAL-object input into its context and the object's bytes (`None`: the input
/// selects parameters that do not load or do not form a context, which is a clean refusal).
pub fn split_seal_input(data: &[u8]) -> Option<(SealCtx, &[u8])> {
    let (&select, rest) = data.split_first()?;
    match select % 3 {
        SELECT_TOY => Some((SealCtx::Fixed(toy_context()), rest)),
        SELECT_SEAL4096 => Some((SealCtx::Fixed(seal4096().seal()), rest)),
        _ => {
            let len = usize::from(u16::from_le_bytes([*rest.first()?, *rest.get(1)?]));
            let params = rest.get(2..2 + len)?;
            let body = rest.get(2 + len..)?;
            let parms = EncryptionParameters::load(params).ok()?;
            let ctx = SealContext::new(parms).ok()?;
            Some((SealCtx::Parsed(Box::new(ctx)), body))
        }
    }
}

/// The input that [`split_seal_input`] reads as `body` under `select` (`params`: the
/// serialized parameters for [`SELECT_PARSED`]).
#[allow(clippy::expect_used)]
pub fn seal_input(select: u8, params: Option<&[u8]>, body: &[u8]) -> Vec<u8> {
    let mut out = vec![select];
    if let Some(p) = params {
        let len = u16::try_from(p.len()).expect("parameters under 64 KiB");
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(p);
    }
    out.extend_from_slice(body);
    out
}

/// Ring dimensions a fuzzed evalmult session may run at (first input byte, modulo the
/// count): two the toy primes support, and refused ones.
pub const SESSION_RING_DIMS: [usize; 5] = [16, 32, 3, 0, 4096];

/// RBLWE: the public parameter seed and entropy label of the fixed keys.
pub const RBLWE_A_SEED: [u8; 32] = [7; 32];
/// Entropy pool capacity used with the fixed RBLWE keys.
pub const RBLWE_POOL: usize = 256;

/// A deterministic RBLWE entropy pool.
pub fn rblwe_pool(label: &[u8]) -> rblwe::EntropyPool<rblwe::KatEntropy, RBLWE_POOL> {
    rblwe::EntropyPool::new(rblwe::KatEntropy::new(label))
}

/// The fixed RBLWE key pairs of one parameter set.
pub struct RblweKeys<P: rblwe::ParamSet> {
    /// CPA public key.
    pub cpa_pk: rblwe::PublicKey<P>,
    /// CPA secret key.
    pub cpa_sk: rblwe::SecretKey<P>,
    /// CCA2 public key.
    pub cca_pk: rblwe::cca::CcaPublicKey<P>,
    /// CCA2 secret key.
    pub cca_sk: rblwe::cca::CcaSecretKey<P>,
}

/// The fixed RBLWE keys of set `P` (from [`RBLWE_A_SEED`] and a fixed entropy label).
#[allow(clippy::expect_used)]
pub fn rblwe_keys<P: rblwe::ParamSet>() -> RblweKeys<P> {
    let a = rblwe::PublicParameter::<P>::from_seed(&RBLWE_A_SEED);
    let mut pool = rblwe_pool(b"fuzz keys");
    let (cpa_pk, cpa_sk) =
        rblwe::cpa::keygen::<P, rblwe::Hardened, _, RBLWE_POOL>(&a, &mut pool).expect("keygen");
    let (cca_pk, cca_sk) =
        rblwe::cca::keygen::<P, rblwe::Hardened, _, RBLWE_POOL>(&a, &mut pool).expect("keygen");
    RblweKeys {
        cpa_pk,
        cpa_sk,
        cca_pk,
        cca_sk,
    }
}

/// The small evalmult contexts of the `.bin` target, chosen by `select` (modulo their count):
/// ring dimension 16 with three towers (an odd count, so a half pair) and with two, 32 with
/// one (the first toy prime is `≡ 1 mod 64`).
#[allow(clippy::expect_used)]
pub fn evalmult_context(select: u8) -> &'static zeppelin_evalmult::RnsContext {
    static CTXS: OnceLock<Vec<zeppelin_evalmult::RnsContext>> = OnceLock::new();
    let ctxs = CTXS.get_or_init(|| {
        let towers: Vec<u32> = TOY_PRIMES.iter().map(|&q| q as u32).collect();
        [(16, &towers[..]), (16, &towers[..2]), (32, &towers[..1])]
            .into_iter()
            .map(|(n, moduli)| {
                zeppelin_evalmult::RnsContext::new(n, moduli).expect("toy evalmult context")
            })
            .collect()
    });
    &ctxs[usize::from(select) % ctxs.len()]
}

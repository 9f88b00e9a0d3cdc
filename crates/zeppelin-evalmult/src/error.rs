//! Typed errors: every way an input can be wrong says what is wrong and where.

use std::fmt;
use std::path::PathBuf;

use zeppelin_ring::RingError;

/// What is wrong with a parameter set, a key, a ciphertext, a vector directory or a frame.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EvalMultError {
    /// The ring dimension is not a power of two in the supported range.
    #[error("ring dimension {ring_dim} is not a power of two in [{min}, {max}]")]
    RingDimension {
        /// The rejected ring dimension.
        ring_dim: usize,
        /// Smallest supported.
        min: usize,
        /// Largest supported.
        max: usize,
    },
    /// No towers, or more than the engine supports.
    #[error("tower count {count} is outside [1, {max}]")]
    TowerCount {
        /// The rejected count.
        count: usize,
        /// Largest supported.
        max: usize,
    },
    /// A modulus is not an odd prime below 2^30 or has no negacyclic NTT of the ring size.
    #[error("tower {tower}: {source}")]
    Modulus {
        /// Index of the tower.
        tower: usize,
        /// What the arithmetic core said about it.
        #[source]
        source: RingError,
    },
    /// A modulus appears twice: RNS towers must be distinct primes.
    #[error("modulus {modulus} appears at towers {first} and {second}")]
    DuplicateModulus {
        /// The repeated prime.
        modulus: u32,
        /// First tower holding it.
        first: usize,
        /// Second tower holding it.
        second: usize,
    },
    /// A buffer or collection has the wrong size.
    #[error("{what}: expected {expected} {unit}, found {found}")]
    Shape {
        /// Which input.
        what: Input,
        /// What it should have.
        expected: usize,
        /// What it has.
        found: usize,
        /// Unit of the counts ("residues", "digits", "bytes", ...).
        unit: &'static str,
    },
    /// A residue is not reduced: `value >= modulus`.
    #[error("{what}: tower {tower}, coefficient {index}: residue {value} is not below the modulus {modulus}")]
    ResidueOutOfRange {
        /// Which input.
        what: Input,
        /// Tower of the residue.
        tower: usize,
        /// Coefficient index within the tower.
        index: usize,
        /// The residue.
        value: u32,
        /// The tower's modulus.
        modulus: u32,
    },
    /// The relinearization key was made for a different ring or different moduli.
    #[error("relinearization key is for ring dimension {key_ring_dim} and moduli {key_moduli:?}, the engine for ring dimension {ring_dim} and moduli {moduli:?}")]
    KeyMismatch {
        /// Ring dimension of the engine.
        ring_dim: usize,
        /// Moduli of the engine.
        moduli: Vec<u32>,
        /// Ring dimension the key was made for.
        key_ring_dim: usize,
        /// Moduli the key was made for.
        key_moduli: Vec<u32>,
    },
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// `manifest.json` is malformed or inconsistent.
    #[error("{path}: {source}")]
    Manifest {
        /// The manifest file.
        path: PathBuf,
        /// What is wrong with it.
        #[source]
        source: ManifestError,
    },
    /// The arithmetic core refused a buffer (an internal length inconsistency).
    #[error("arithmetic core: {0}")]
    Ring(#[from] RingError),
    /// A stream frame is malformed.
    #[error("frame: {0}")]
    Frame(#[from] FrameError),
}

impl EvalMultError {
    pub(crate) fn shape(what: Input, expected: usize, found: usize, unit: &'static str) -> Self {
        Self::Shape {
            what,
            expected,
            found,
            unit,
        }
    }
}

/// Which input an [`EvalMultError::Shape`] or [`EvalMultError::ResidueOutOfRange`] is about.
/// Its `Display` is the name used in messages (`pair 1 y.c1`, `relin key a_2`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// One component of a ciphertext.
    Ciphertext {
        /// Which ciphertext.
        ciphertext: CiphertextId,
        /// Which component.
        component: Component,
    },
    /// The quadratic term `c2` of a tensor product (`reference::decompose`).
    C2,
    /// The digit count of one part of the relinearization key.
    RelinKey {
        /// `a` or `b`.
        part: KeyPart,
    },
    /// One digit of one part of the relinearization key.
    RelinKeyDigit {
        /// `a` or `b`.
        part: KeyPart,
        /// The digit.
        digit: usize,
    },
    /// The digit count of one decomposition.
    Digits,
    /// One digit of a decomposition.
    Digit {
        /// The digit.
        digit: usize,
    },
    /// The supplied digit sets, one per ciphertext pair (their count).
    DigitSets,
    /// The supplied digit set of one ciphertext pair (its size).
    PairDigits {
        /// The ciphertext pair.
        pair: usize,
    },
    /// One digit of the supplied digit set of one ciphertext pair.
    PairDigit {
        /// The ciphertext pair.
        pair: usize,
        /// The digit.
        digit: usize,
    },
    /// A `.bin` polynomial file.
    File(PathBuf),
}

impl Input {
    /// Component `component` of `ciphertext`.
    pub const fn ciphertext(ciphertext: CiphertextId, component: Component) -> Self {
        Self::Ciphertext {
            ciphertext,
            component,
        }
    }
}

impl fmt::Display for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ciphertext {
                ciphertext,
                component,
            } => write!(f, "{ciphertext}.{component}"),
            Self::C2 => f.write_str("c2"),
            Self::RelinKey { part } => write!(f, "relin key {part}"),
            Self::RelinKeyDigit { part, digit } => write!(f, "relin key {part}_{digit}"),
            Self::Digits => f.write_str("digits"),
            Self::Digit { digit } => write!(f, "digit {digit}"),
            Self::DigitSets => f.write_str("digit sets"),
            Self::PairDigits { pair } => write!(f, "digits of pair {pair}"),
            Self::PairDigit { pair, digit } => write!(f, "digit {digit} of pair {pair}"),
            Self::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// Which ciphertext of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CiphertextId {
    /// A factor of a single product (`reference`).
    Single(Factor),
    /// A factor of one ciphertext pair of a batch.
    Pair {
        /// The pair.
        pair: usize,
        /// Which factor.
        factor: Factor,
    },
    /// One result reassembled from RLRP frames.
    Result {
        /// The result.
        index: usize,
    },
}

impl fmt::Display for CiphertextId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Single(factor) => write!(f, "{factor}"),
            Self::Pair { pair, factor } => write!(f, "pair {pair} {factor}"),
            Self::Result { index } => write!(f, "result {index}"),
        }
    }
}

/// The two factors of a product `x · y`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Factor {
    /// `x`.
    X,
    /// `y`.
    Y,
}

impl fmt::Display for Factor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::X => "x",
            Self::Y => "y",
        })
    }
}

/// The two components of a ciphertext.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Component {
    /// `c0`.
    C0,
    /// `c1`.
    C1,
}

impl fmt::Display for Component {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::C0 => "c0",
            Self::C1 => "c1",
        })
    }
}

/// The two parts `(a_i, b_i)` of the relinearization key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPart {
    /// `a_i`.
    A,
    /// `b_i`.
    B,
}

impl fmt::Display for KeyPart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::A => "a",
            Self::B => "b",
        })
    }
}

/// What is wrong with `manifest.json`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The file is not JSON.
    #[error("not valid JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// The file is JSON but not an object.
    #[error("not a JSON object")]
    NotAnObject,
    /// A required field is absent.
    #[error("missing field `{field}`")]
    MissingField {
        /// The field.
        field: &'static str,
    },
    /// A field has the wrong type (or a number out of range).
    #[error("field `{field}`: {source}")]
    WrongType {
        /// The field.
        field: &'static str,
        /// What the JSON decoder said.
        #[source]
        source: serde_json::Error,
    },
    /// `towers` is not the number of moduli.
    #[error("towers = {towers} but {moduli} moduli")]
    TowersVsModuli {
        /// The `towers` field.
        towers: usize,
        /// Length of the `moduli` field.
        moduli: usize,
    },
    /// `digits` is not `towers` (BV with `digitSize = 0` has one digit per tower).
    #[error("digits = {digits} but BV with digitSize 0 has one digit per tower ({towers})")]
    DigitsVsTowers {
        /// The `digits` field.
        digits: usize,
        /// The `towers` field.
        towers: usize,
    },
    /// `batch` is zero or above the limit.
    #[error("batch {batch} outside [1, {max}]")]
    Batch {
        /// The `batch` field.
        batch: usize,
        /// Largest accepted.
        max: usize,
    },
    /// `roots` are not the roots of unity this engine (and OpenFHE) uses.
    #[error("roots {roots:?} are not the smallest primitive 2n-th roots {expected:?} this engine (and OpenFHE) uses")]
    Roots {
        /// The `roots` field.
        roots: Vec<u32>,
        /// The smallest primitive `2n`-th root of each tower.
        expected: Vec<u32>,
    },
}

/// The two pair frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairKind {
    /// RLMP: with digit words.
    Rlmp,
    /// RLMD: without digit words.
    Rlmd,
}

impl PairKind {
    /// RLMP when `with_digits`, RLMD otherwise.
    pub const fn new(with_digits: bool) -> Self {
        if with_digits {
            Self::Rlmp
        } else {
            Self::Rlmd
        }
    }
}

impl fmt::Display for PairKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Rlmp => "RLMP",
            Self::Rlmd => "RLMD",
        })
    }
}

/// What is wrong with a stream frame (or with the exchange of frames).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// Word 0 is no command this side accepts.
    #[error("unknown command word {word:#018x}")]
    UnknownCommand {
        /// Word 0 (0 for an empty frame).
        word: u64,
    },
    /// The frame is shorter than its header.
    #[error("{frame} frame of {found} words is shorter than its {needed}-word header")]
    Truncated {
        /// Which frame ("RLPT", "pair").
        frame: &'static str,
        /// Header words.
        needed: usize,
        /// Words in the frame.
        found: usize,
    },
    /// Word 0 is not the RLPT command.
    #[error("not an RLPT frame: word 0 is {word:#018x}")]
    NotProfile {
        /// Word 0.
        word: u64,
    },
    /// The two pair counts of an RLPT frame disagree or are zero.
    #[error("RLPT pair count words disagree or are zero: {{{upper}, {lower}}}")]
    ProfilePairCount {
        /// Bits 63:32 of word 1.
        upper: u32,
        /// Bits 31:0 of word 1.
        lower: u32,
    },
    /// An RLPT frame's length does not match its pair count.
    #[error("RLPT with {pairs} pairs must have {expected} words, has {found}")]
    ProfileLength {
        /// Pair count of the frame.
        pairs: usize,
        /// `2 + 2·pairs`.
        expected: usize,
        /// Words in the frame.
        found: usize,
    },
    /// A modulus not above 2^28: its Barrett constant `floor(2^60/q)` needs more than 32 bits.
    #[error("tower {tower}: modulus {modulus} is not above 2^28 (its Barrett constant needs more than 32 bits)")]
    ModulusTooSmall {
        /// The tower.
        tower: usize,
        /// The modulus.
        modulus: u32,
    },
    /// A Barrett constant is not `floor(2^60/q)`.
    #[error("tower {tower}: Barrett constant {mu} is not floor(2^60/{modulus}) = {expected}")]
    BarrettConstant {
        /// The tower.
        tower: usize,
        /// The constant in the frame.
        mu: u32,
        /// The tower's modulus.
        modulus: u32,
        /// `floor(2^60/modulus)`.
        expected: u64,
    },
    /// A pair frame's digit count is not the tower count (BV, `digitSize = 0`).
    #[error("digit count {digits} but {towers} towers (BV digitSize 0)")]
    DigitCount {
        /// Digit count of the frame.
        digits: usize,
        /// Towers of the profile.
        towers: usize,
    },
    /// A pair frame's pair index or pair count does not fit the profile.
    #[error("pair {index} of {count}: the profile has {profile} pairs")]
    PairOutOfProfile {
        /// Pair index of the frame.
        index: usize,
        /// Pair count of the frame.
        count: usize,
        /// Pairs of the profile.
        profile: usize,
    },
    /// A pair index to encode is beyond the tower pairs.
    #[error("pair {index} of {pairs}")]
    NoSuchPair {
        /// The requested pair.
        index: usize,
        /// Tower pairs.
        pairs: usize,
    },
    /// A pair frame's ciphertext count is zero or above the limit.
    #[error("ciphertext count {count} outside [1, {max}]")]
    CiphertextCount {
        /// Ciphertext count of the frame.
        count: usize,
        /// Largest accepted.
        max: usize,
    },
    /// A pair frame's length does not match its header.
    #[error("pair frame must have {expected} words, has {found}")]
    PairLength {
        /// Length the header implies.
        expected: usize,
        /// Words in the frame.
        found: usize,
    },
    /// A residue word of a pair frame is not below the pair's moduli (an absent upper tower
    /// must be zero).
    #[error("word {word}: residue {{{upper}, {lower}}} not below the pair's moduli {{{upper_modulus}, {lower_modulus}}}")]
    Residue {
        /// Index of the word in the frame.
        word: usize,
        /// Its bits 63:32.
        upper: u32,
        /// Its bits 31:0.
        lower: u32,
        /// Modulus of the upper tower (1 when absent: only 0 is accepted).
        upper_modulus: u32,
        /// Modulus of the lower tower.
        lower_modulus: u32,
    },
    /// RLPT while a session's pair frames are still outstanding.
    #[error("RLPT inside an unfinished session")]
    ProfileInSession,
    /// A pair frame before any RLPT.
    #[error("pair frame before any RLPT profile")]
    PairBeforeProfile,
    /// A pair frame of another kind or batch size than the session's first one.
    #[error("session has {session} frames of {session_ciphertexts} ciphertexts; got {got} with {ciphertexts}")]
    SessionMismatch {
        /// Kind of the session's frames.
        session: PairKind,
        /// Ciphertexts per frame of the session.
        session_ciphertexts: usize,
        /// Kind of this frame.
        got: PairKind,
        /// Ciphertexts of this frame.
        ciphertexts: usize,
    },
    /// A pair frame for a pair already received in the session.
    #[error("pair {pair} already received in this session")]
    DuplicatePair {
        /// The pair.
        pair: usize,
    },
    /// A length prefix above `frames::MAX_FRAME_WORDS`: the stream cannot be
    /// resynchronized and the server closes the connection.
    #[error("frame length {len} words exceeds {max}; closing")]
    TooLong {
        /// The length prefix.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// The server is serving as many connections as it may.
    #[error("server busy: {max} connections already served")]
    ConnectionLimit {
        /// The connection cap.
        max: usize,
    },
    /// Reading and processing a frame would exceed a memory cap.
    #[error("frame needs {needed} bytes, over the {scope} memory cap of {cap} bytes ({held} already held)")]
    MemoryCap {
        /// Bytes the frame needs (the frame and its working set).
        needed: usize,
        /// `per-session` or `global`.
        scope: &'static str,
        /// The cap.
        cap: usize,
        /// Bytes already held (by this connection, or by all).
        held: usize,
    },
    /// The session in progress was not finished in time; its buffered frames were dropped.
    #[error("session expired after {millis} ms; its frames were dropped")]
    SessionExpired {
        /// The session timeout, milliseconds.
        millis: u64,
    },
    /// No frame began within the idle timeout.
    #[error("idle for {millis} ms; closing")]
    Idle {
        /// The idle timeout, milliseconds.
        millis: u64,
    },
    /// Too many consecutive frames were refused.
    #[error("{count} consecutive frames refused; closing")]
    TooManyErrors {
        /// The limit.
        count: usize,
    },
    /// The server is shutting down.
    #[error("server shutting down")]
    ShuttingDown,
    /// The server closed the connection before the session ended.
    #[error("server closed the connection")]
    ServerClosed,
    /// The server sent a length prefix above the limit.
    #[error("server frame of {len} words exceeds {max}")]
    ServerTooLong {
        /// The length prefix.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// The server answered with RLER.
    #[error("{0}")]
    Remote(#[source] RemoteError),
    /// The number of RLRP frames is not the number of tower pairs.
    #[error("{frames} result frames for {pairs} pairs")]
    ResultCount {
        /// RLRP frames given.
        frames: usize,
        /// Tower pairs.
        pairs: usize,
    },
    /// An RLRP frame's length does not match the session.
    #[error("RLRP frame must have {expected} words, has {found}")]
    ResultLength {
        /// `2 + 2·n·ciphertexts`.
        expected: usize,
        /// Words in the frame.
        found: usize,
    },
    /// A frame given as a result is not RLRP.
    #[error("not an RLRP frame: word 0 is {word:#018x}")]
    NotResult {
        /// Word 0.
        word: u64,
    },
    /// An RLRP frame for another batch size.
    #[error("RLRP frame for {found} ciphertexts, expected {expected}")]
    ResultCiphertexts {
        /// Ciphertexts of the session.
        expected: usize,
        /// Ciphertexts of the frame.
        found: usize,
    },
    /// An RLRP frame for a pair beyond the session's tower pairs.
    #[error("RLRP for pair {pair}, but the session has {pairs} pairs")]
    ResultPair {
        /// Pair index of the frame.
        pair: usize,
        /// Tower pairs.
        pairs: usize,
    },
    /// A frame from the server that is neither RLRP, RLEN nor RLER.
    #[error("unexpected frame from server (word 0: {word:#018x})")]
    UnexpectedFrame {
        /// Word 0 (0 for an empty frame).
        word: u64,
    },
}

/// Result alias of this crate.
pub type Result<T, E = EvalMultError> = core::result::Result<T, E>;

/// An RLER answer from the server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("server error {code}: {message}")]
pub struct RemoteError {
    /// One of the RLER codes (`frames::codes`).
    pub code: u32,
    /// The server's message.
    pub message: String,
}

/// What is wrong with a server's configuration ([`crate::server::ServerConfig`]): found when
/// the server starts, before it listens.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The ring dimension is not a power of two in the supported range.
    #[error("ring dimension {ring_dim} is not a power of two in [{min}, {max}]")]
    RingDimension {
        /// The rejected ring dimension.
        ring_dim: usize,
        /// Smallest supported.
        min: usize,
        /// Largest supported.
        max: usize,
    },
    /// A count, a timeout or a rate that must be positive is zero.
    #[error("{what} must be positive")]
    Zero {
        /// The setting.
        what: &'static str,
    },
    /// The per-session memory cap exceeds the global one.
    #[error("per-session memory cap {session} bytes exceeds the global cap {total} bytes")]
    SessionAboveTotal {
        /// The per-session cap.
        session: usize,
        /// The global cap.
        total: usize,
    },
    /// The per-session memory cap cannot hold even the smallest session at this ring
    /// dimension.
    #[error("per-session memory cap {session} bytes is below the {needed} bytes the smallest session at ring dimension {ring_dim} needs")]
    SessionTooSmall {
        /// The per-session cap.
        session: usize,
        /// What one tower, one ciphertext needs.
        needed: usize,
        /// The ring dimension.
        ring_dim: usize,
    },
    /// More compute workers than the limit.
    #[error("{workers} compute workers exceed the limit {max}")]
    TooManyWorkers {
        /// The setting.
        workers: usize,
        /// The limit.
        max: usize,
    },
}

/// Why a server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServerError {
    /// The configuration is invalid.
    #[error("invalid server configuration: {0}")]
    Config(#[from] ConfigError),
    /// An operating-system call the server needs failed (`what` names it).
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// The server's thread ended abnormally.
    #[error("server thread ended abnormally")]
    Thread,
}

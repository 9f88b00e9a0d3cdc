//! The RNS parameter set: ring dimension, tower moduli and their NTT tables, validated.

use zeppelin_ring::checks::first_unreduced;
use zeppelin_ring::{Modulus, NttTable, NttView};

use crate::error::{CiphertextId, Component, EvalMultError, Input, KeyPart, Result};

/// Smallest ring dimension the engine accepts.
pub const MIN_RING_DIM: usize = 16;
/// Largest ring dimension the engine accepts.
pub const MAX_RING_DIM: usize = 1 << 17;
/// Most towers the engine accepts.
pub const MAX_TOWERS: usize = 64;

/// Ring dimension `n` and `L` distinct NTT-friendly primes `q_i < 2^30` (`q_i ≡ 1 mod 2n`),
/// each with OpenFHE's NTT table (smallest primitive `2n`-th root, bit-reversed evaluations).
///
/// ```
/// use zeppelin_evalmult::RnsContext;
/// let ctx = RnsContext::new(4096, &[1_061_093_377, 1_042_145_281]).unwrap();
/// assert_eq!(ctx.towers(), 2);
/// // 1_000_000_007 is prime but not 1 mod 8192: rejected with a typed error.
/// assert!(RnsContext::new(4096, &[1_000_000_007]).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct RnsContext {
    ring_dim: usize,
    moduli: Vec<Modulus>,
    tables: Vec<NttTable<Vec<u32>>>,
}

impl RnsContext {
    /// Validates the parameters and builds the NTT tables.
    pub fn new(ring_dim: usize, moduli: &[u32]) -> Result<Self> {
        if !ring_dim.is_power_of_two() || !(MIN_RING_DIM..=MAX_RING_DIM).contains(&ring_dim) {
            return Err(EvalMultError::RingDimension {
                ring_dim,
                min: MIN_RING_DIM,
                max: MAX_RING_DIM,
            });
        }
        if moduli.is_empty() || moduli.len() > MAX_TOWERS {
            return Err(EvalMultError::TowerCount {
                count: moduli.len(),
                max: MAX_TOWERS,
            });
        }
        for (second, &q) in moduli.iter().enumerate() {
            if let Some(first) = moduli[..second].iter().position(|&p| p == q) {
                return Err(EvalMultError::DuplicateModulus {
                    modulus: q,
                    first,
                    second,
                });
            }
        }
        let tables = moduli
            .iter()
            .enumerate()
            .map(|(tower, &q)| {
                NttTable::new_vec(q, ring_dim)
                    .map_err(|source| EvalMultError::Modulus { tower, source })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            ring_dim,
            moduli: tables.iter().map(|t| *t.modulus()).collect(),
            tables,
        })
    }

    /// The ring dimension `n`.
    pub fn ring_dim(&self) -> usize {
        self.ring_dim
    }

    /// The number of towers `L` (also the number of BV digits).
    pub fn towers(&self) -> usize {
        self.moduli.len()
    }

    /// Residues in one RNS polynomial: `L·n`.
    pub fn poly_len(&self) -> usize {
        self.ring_dim * self.moduli.len()
    }

    /// The tower moduli.
    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// The tower moduli as plain integers.
    pub fn moduli_values(&self) -> Vec<u32> {
        self.moduli.iter().map(Modulus::value).collect()
    }

    /// The NTT table of tower `k`.
    pub fn table(&self, tower: usize) -> NttView<'_> {
        self.tables[tower].view()
    }

    /// The smallest primitive `2n`-th root of unity of each tower (what OpenFHE uses).
    pub fn roots(&self) -> Vec<u32> {
        self.tables.iter().map(NttTable::psi).collect()
    }

    /// Checks that `poly` is a tower-major RNS polynomial of this context with every residue
    /// reduced; `what` names it in the error.
    pub fn check_poly(&self, what: Input, poly: &[u32]) -> Result<()> {
        if poly.len() != self.poly_len() {
            return Err(EvalMultError::shape(
                what,
                self.poly_len(),
                poly.len(),
                "residues",
            ));
        }
        for (tower, (residues, m)) in poly
            .chunks_exact(self.ring_dim)
            .zip(&self.moduli)
            .enumerate()
        {
            let q = m.value();
            if let Some(index) = first_unreduced(residues, q) {
                return Err(EvalMultError::ResidueOutOfRange {
                    what,
                    tower,
                    index,
                    value: residues[index],
                    modulus: q,
                });
            }
        }
        Ok(())
    }
}

/// A two-component ciphertext in OpenFHE's EVALUATION format: each component is `L·n`
/// residues, tower-major.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ciphertext {
    /// Component 0.
    pub c0: Vec<u32>,
    /// Component 1.
    pub c1: Vec<u32>,
}

impl Ciphertext {
    /// Checks both components against `ctx`; `what` names the ciphertext in the error.
    pub fn check(&self, ctx: &RnsContext, what: CiphertextId) -> Result<()> {
        ctx.check_poly(Input::ciphertext(what, Component::C0), &self.c0)?;
        ctx.check_poly(Input::ciphertext(what, Component::C1), &self.c1)
    }
}

/// OpenFHE's BV relinearization key with `digitSize = 0`: one pair `(a_i, b_i)` per tower
/// `i`, each an evaluation-format RNS polynomial; it carries the ring dimension and moduli it
/// was generated for, so a key for other parameters is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RelinKey {
    /// Ring dimension the key was generated for.
    pub ring_dim: usize,
    /// Moduli the key was generated for, in tower order.
    pub moduli: Vec<u32>,
    /// `a_i`, one per digit.
    pub a: Vec<Vec<u32>>,
    /// `b_i`, one per digit.
    pub b: Vec<Vec<u32>>,
}

impl RelinKey {
    /// Checks that the key belongs to `ctx`: same ring and moduli, one pair per tower, every
    /// residue reduced.
    pub fn check(&self, ctx: &RnsContext) -> Result<()> {
        if self.ring_dim != ctx.ring_dim() || self.moduli != ctx.moduli_values() {
            return Err(EvalMultError::KeyMismatch {
                ring_dim: ctx.ring_dim(),
                moduli: ctx.moduli_values(),
                key_ring_dim: self.ring_dim,
                key_moduli: self.moduli.clone(),
            });
        }
        for (part, polys) in [(KeyPart::A, &self.a), (KeyPart::B, &self.b)] {
            if polys.len() != ctx.towers() {
                return Err(EvalMultError::shape(
                    Input::RelinKey { part },
                    ctx.towers(),
                    polys.len(),
                    "digits",
                ));
            }
            for (digit, poly) in polys.iter().enumerate() {
                ctx.check_poly(Input::RelinKeyDigit { part, digit }, poly)?;
            }
        }
        Ok(())
    }
}

/// `count` distinct primes `q ≡ 1 mod M`, `M = 2n·odd(t)`, descending from the largest one
/// below `2^bits`: how OpenFHE 1.5.1 generates BGVRNS towers when the first and scaling
/// moduli have the same size (this reproduces the moduli of the shared vectors). Like
/// OpenFHE's `PreviousPrime`, the descent continues below `2^(bits−1)` when the `bits`-bit
/// range holds fewer than `count` such primes (for instance 30 bits with `n = 16384`,
/// `t = 257`).
///
/// ```
/// let q = zeppelin_evalmult::openfhe_primes(30, 4096, 257, 4).unwrap();
/// assert_eq!(q, [1_061_093_377, 1_042_145_281, 1_010_565_121, 972_668_929]);
/// ```
pub fn openfhe_primes(
    bits: u32,
    ring_dim: usize,
    plaintext_modulus: u64,
    count: usize,
) -> Result<Vec<u32>> {
    if !(2..=30).contains(&bits) {
        return Err(EvalMultError::Modulus {
            tower: 0,
            source: zeppelin_ring::RingError::ModulusOutOfRange {
                modulus: 1u64 << bits,
            },
        });
    }
    let odd_t = if plaintext_modulus == 0 {
        1
    } else {
        plaintext_modulus >> plaintext_modulus.trailing_zeros()
    };
    let step = 2 * ring_dim as u64 * odd_t;
    let top = (1u64 << bits) - 1;
    let mut found = Vec::with_capacity(count);
    let mut candidate = top / step * step + 1;
    while found.len() < count {
        if candidate > top || candidate <= step {
            return Err(EvalMultError::TowerCount {
                count,
                max: found.len(),
            });
        }
        if zeppelin_ring::modulus::is_prime(candidate as u32) {
            found.push(candidate as u32);
        }
        candidate -= step;
    }
    Ok(found)
}

/// Largest `log2 Q` for 128-bit classical security with a ternary secret, from the
/// HomomorphicEncryption.org standard (Table 1), by ring dimension; `None` outside the
/// table (below 1024 or above 32768).
pub fn he_standard_max_log_q(ring_dim: usize) -> Option<u32> {
    match ring_dim {
        1024 => Some(27),
        2048 => Some(54),
        4096 => Some(109),
        8192 => Some(218),
        16384 => Some(438),
        32768 => Some(881),
        // The standard's table stops at 32768.
        _ => None,
    }
}

impl RnsContext {
    /// `log2 Q`, `Q = Π q_i` (BV key switching uses no extra modulus, so this is also the
    /// key's modulus).
    pub fn log_q(&self) -> f64 {
        self.moduli
            .iter()
            .map(|m| f64::from(m.value()).log2())
            .sum()
    }

    /// Whether `(n, Q)` is within the HE standard's 128-bit bound for ternary secrets.
    pub fn is_he_standard_128(&self) -> bool {
        he_standard_max_log_q(self.ring_dim).is_some_and(|max| self.log_q() <= f64::from(max))
    }
}

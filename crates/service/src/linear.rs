//! Linear aggregates (`sum`, `dot`) of device uploads, accumulated in the uploads' own
//! representation instead of one SEAL ciphertext per upload.
//!
//! A seeded upload carries `c0` and the seed of `c1`; the seed expands to `â`, the NTT form
//! of `c1`. Converting every upload to a SEAL ciphertext costs one inverse transform per
//! prime per upload; but the inverse transform is linear mod `q`, so
//! `Σ wᵢ·c1ᵢ = INTT(Σ wᵢ·âᵢ)`: [`LinearSum`] adds the `c0` rows in coefficient form, the
//! seeds' `â` in NTT form, and full-form uploads' `c1` in coefficient form, all mod each
//! prime, and the codec transforms once at the end. The result is the same residues, bit for
//! bit, as the sum of the converted ciphertexts (every step is exact arithmetic mod `q`).

use zeppelin_ring::{Modulus, Mont};

/// Terms added between two reductions: each term is below `q < 2^32`, so a `u64` lane holds
/// `2^32` of them; reducing at `2^31` leaves a margin.
const REDUCE_EVERY: u64 = 1 << 31;

/// One upload's `c1`, in the form it arrives.
#[derive(Clone, Copy, Debug)]
pub enum C1Rows<'a> {
    /// NTT form (a seed's expansion `â`).
    Ntt(&'a [u32]),
    /// Coefficient form (a full-form upload).
    Coefficients(&'a [u32]),
}

/// A running `Σ wᵢ·ctᵢ` over device ciphertexts at one level (see the module docs).
///
/// ```
/// use zeppelin_ring::Modulus;
/// use zeppelin_service::linear::{C1Rows, LinearSum};
/// let q = Modulus::new(97).unwrap();
/// let mut sum = LinearSum::new(vec![q], 2);
/// sum.add(&[96, 1], C1Rows::Coefficients(&[5, 6]), None);
/// sum.add(&[2, 3], C1Rows::Ntt(&[7, 8]), Some(&[2]));
/// let rows = sum.reduce();
/// assert_eq!(rows.c0, vec![(96 + 4) % 97, 1 + 6]);
/// assert_eq!(rows.c1, vec![5, 6]);
/// assert_eq!(rows.c1_ntt, Some(vec![14, 16]));
/// ```
#[derive(Clone, Debug)]
pub struct LinearSum {
    moduli: Vec<Modulus>,
    n: usize,
    c0: Vec<u64>,
    /// Empty until an NTT-form `c1` is added.
    c1_ntt: Vec<u64>,
    /// Empty until a coefficient-form `c1` is added.
    c1: Vec<u64>,
    terms: u64,
    since_reduction: u64,
}

/// A reduced [`LinearSum`]: residues below their primes, prime-major rows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReducedRows {
    /// `Σ c0`.
    pub c0: Vec<u32>,
    /// `Σ c1` of the coefficient-form uploads (zeros when there were none).
    pub c1: Vec<u32>,
    /// `Σ â` of the NTT-form uploads, if any.
    pub c1_ntt: Option<Vec<u32>>,
}

impl LinearSum {
    /// An empty sum over ciphertexts of degree `n` at the level of `moduli`.
    pub fn new(moduli: Vec<Modulus>, n: usize) -> Self {
        let len = moduli.len() * n;
        Self {
            moduli,
            n,
            c0: vec![0; len],
            c1_ntt: Vec::new(),
            c1: Vec::new(),
            terms: 0,
            since_reduction: 0,
        }
    }

    /// Ciphertexts added so far.
    pub fn terms(&self) -> u64 {
        self.terms
    }

    /// The level (number of primes).
    pub fn level(&self) -> usize {
        self.moduli.len()
    }

    /// Residues per polynomial (`level·n`).
    fn len(&self) -> usize {
        self.moduli.len() * self.n
    }

    /// Adds `w·(c0, c1)`: `scale` holds `w mod qᵢ` per prime (`None`: `w = 1`). Every row
    /// is `level·n` residues below their primes (the codec checked them); a length that
    /// disagrees is a bug of the caller and panics.
    pub fn add(&mut self, c0: &[u32], c1: C1Rows<'_>, scale: Option<&[u32]>) {
        let len = self.len();
        assert_eq!(c0.len(), len, "c0 rows of another level");
        let (target, rows) = match c1 {
            C1Rows::Ntt(rows) => (&mut self.c1_ntt, rows),
            C1Rows::Coefficients(rows) => (&mut self.c1, rows),
        };
        assert_eq!(rows.len(), len, "c1 rows of another level");
        if target.is_empty() {
            target.resize(len, 0);
        }
        let n = self.n;
        match scale {
            None => {
                accumulate(&mut self.c0, c0);
                accumulate(target, rows);
            }
            Some(scale) => {
                assert_eq!(scale.len(), self.moduli.len(), "one factor per prime");
                for (i, (q, &w)) in self.moduli.iter().zip(scale).enumerate() {
                    let w = q.mont(w);
                    let at = i * n..(i + 1) * n;
                    accumulate_scaled(&mut self.c0[at.clone()], &c0[at.clone()], q, w);
                    accumulate_scaled(&mut target[at.clone()], &rows[at], q, w);
                }
            }
        }
        self.terms += 1;
        self.since_reduction += 1;
        if self.since_reduction >= REDUCE_EVERY {
            self.reduce_in_place();
        }
    }

    /// Adds another sum over the same level.
    pub fn merge(&mut self, other: LinearSum) {
        assert_eq!(self.len(), other.len(), "sums of another level");
        if self.since_reduction + other.since_reduction >= REDUCE_EVERY {
            self.reduce_in_place();
        }
        let rows = [
            (&mut self.c0, &other.c0),
            (&mut self.c1_ntt, &other.c1_ntt),
            (&mut self.c1, &other.c1),
        ];
        for (mine, theirs) in rows {
            if theirs.is_empty() {
                continue;
            }
            if mine.is_empty() {
                mine.resize(theirs.len(), 0);
            }
            for (a, &b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
        self.terms += other.terms;
        self.since_reduction += other.since_reduction;
    }

    fn reduce_in_place(&mut self) {
        let n = self.n;
        for rows in [&mut self.c0, &mut self.c1_ntt, &mut self.c1] {
            for (row, q) in rows.chunks_exact_mut(n).zip(&self.moduli) {
                for x in row {
                    *x = u64::from(q.reduce_u64(*x));
                }
            }
        }
        self.since_reduction = 0;
    }

    /// The reduced rows.
    pub fn reduce(mut self) -> ReducedRows {
        self.reduce_in_place();
        let narrow = |rows: Vec<u64>| rows.into_iter().map(|x| x as u32).collect::<Vec<u32>>();
        let len = self.len();
        ReducedRows {
            c0: narrow(self.c0),
            c1: if self.c1.is_empty() {
                vec![0; len]
            } else {
                narrow(self.c1)
            },
            c1_ntt: (!self.c1_ntt.is_empty()).then(|| narrow(self.c1_ntt)),
        }
    }
}

/// `acc += x` lane by lane (no reduction: see [`REDUCE_EVERY`]).
#[inline]
fn accumulate(acc: &mut [u64], x: &[u32]) {
    for (a, &x) in acc.iter_mut().zip(x) {
        *a += u64::from(x);
    }
}

/// `acc += w·x mod q` lane by lane.
#[inline]
fn accumulate_scaled(acc: &mut [u64], x: &[u32], q: &Modulus, w: Mont) {
    for (a, &x) in acc.iter_mut().zip(x) {
        *a += u64::from(q.mul_mont_constant(x, w));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_equals_adding_in_one_sum() {
        let moduli = vec![Modulus::new(97).unwrap(), Modulus::new(101).unwrap()];
        let rows: Vec<Vec<u32>> = (0..6u32)
            .map(|k| (0..8u32).map(|j| (k * 31 + j * 7) % 97).collect())
            .collect();
        let mut one = LinearSum::new(moduli.clone(), 4);
        let (mut left, mut right) = (one.clone(), one.clone());
        for (k, r) in rows.iter().enumerate() {
            let c1 = if k % 2 == 0 {
                C1Rows::Ntt(r)
            } else {
                C1Rows::Coefficients(r)
            };
            let scale = [k as u32 % 97, 100 - k as u32];
            one.add(r, c1, Some(&scale));
            if k < 3 { &mut left } else { &mut right }.add(r, c1, Some(&scale));
        }
        left.merge(right);
        assert_eq!(left.terms(), 6);
        assert_eq!(left.reduce(), one.reduce());
    }

    #[test]
    fn the_sum_is_reduced_per_prime() {
        let moduli = vec![Modulus::new(97).unwrap(), Modulus::new(101).unwrap()];
        let mut sum = LinearSum::new(moduli, 1);
        for _ in 0..3 {
            sum.add(&[96, 100], C1Rows::Coefficients(&[50, 60]), None);
        }
        let rows = sum.reduce();
        assert_eq!(rows.c0, vec![(3 * 96) % 97, (3 * 100) % 101]);
        assert_eq!(rows.c1, vec![150 % 97, 180 % 101]);
        assert_eq!(rows.c1_ntt, None);
    }
}

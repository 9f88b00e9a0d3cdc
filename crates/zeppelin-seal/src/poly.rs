//! RNS polynomials over SEAL's primes, with the NTT of the shared arithmetic core
//! (`zeppelin-ring`: smallest primitive 2n-th root, bit-reversed output — SEAL's convention).
//!
//! Residues are `u64` words as SEAL stores them; the primes must be below 2^30 (the core's
//! Montgomery bound), which every Zeppelin preset satisfies.

use zeppelin_ring::{default_backend, DefaultBackend, Modulus, NttBackend, NttTable};
use zeroize::Zeroizing;

use crate::error::{Result, SealError};

/// NTT tables for a list of primes at one degree, and the NTT backend (detected once, at
/// construction).
pub struct RnsNtt {
    n: usize,
    tables: Vec<NttTable<Vec<u32>>>,
    ntt: DefaultBackend,
}

impl RnsNtt {
    /// Tables for `primes` at degree `n`.
    pub fn new(primes: &[u64], n: usize) -> Result<Self> {
        let mut tables = Vec::with_capacity(primes.len());
        for &q in primes {
            let q32 = u32::try_from(q).map_err(|_| SealError::PrimeTooWide { prime: q })?;
            tables.push(NttTable::new_vec(q32, n)?);
        }
        Ok(Self {
            n,
            tables,
            ntt: default_backend(),
        })
    }

    /// Ring degree.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of primes.
    pub fn len(&self) -> usize {
        self.tables.len()
    }

    /// Whether there are no primes.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }

    /// The modulus of prime `i`.
    pub fn modulus(&self, i: usize) -> &Modulus {
        self.tables[i].modulus()
    }

    /// The NTT table of prime `i`, for callers that run the backend on their own `u32` rows
    /// (the server's evaluator), or `None` past the last prime.
    pub fn table(&self, i: usize) -> Option<&NttTable<Vec<u32>>> {
        self.tables.get(i)
    }

    /// The backend these tables run on (detected once, at construction).
    pub fn backend(&self) -> DefaultBackend {
        self.ntt
    }

    fn map(&self, poly: &mut [u64], inverse: bool) -> Result<()> {
        self.check(poly)?;
        // The polynomial may be a secret key's: the staging row is wiped when it drops.
        let mut buf = Zeroizing::new(vec![0u32; self.n]);
        for (table, residues) in self.tables.iter().zip(poly.chunks_exact_mut(self.n)) {
            for (b, &v) in buf.iter_mut().zip(residues.iter()) {
                // Residues were checked below q < 2^30 by the loaders and constructors.
                *b = v as u32;
            }
            if inverse {
                self.ntt.inverse(&table.view(), &mut buf)?;
            } else {
                self.ntt.forward(&table.view(), &mut buf)?;
            }
            for (r, &b) in residues.iter_mut().zip(buf.iter()) {
                *r = u64::from(b);
            }
        }
        Ok(())
    }

    fn check(&self, poly: &[u64]) -> Result<()> {
        if poly.len() != self.n * self.tables.len() {
            return Err(SealError::CountMismatch {
                what: "polynomial length",
                found: poly.len() as u64,
                expected: (self.n * self.tables.len()) as u64,
            });
        }
        Ok(())
    }

    /// In place: coefficient form to NTT form, every prime.
    pub fn forward(&self, poly: &mut [u64]) -> Result<()> {
        self.map(poly, false)
    }

    /// In place: NTT form to coefficient form, every prime.
    pub fn inverse(&self, poly: &mut [u64]) -> Result<()> {
        self.map(poly, true)
    }

    /// `out = a ⊙ b` (NTT-form product), every prime.
    pub fn mul(&self, a: &[u64], b: &[u64]) -> Result<Vec<u64>> {
        self.check(a)?;
        self.check(b)?;
        let mut out = vec![0u64; a.len()];
        for (i, ((o, x), y)) in out
            .chunks_exact_mut(self.n)
            .zip(a.chunks_exact(self.n))
            .zip(b.chunks_exact(self.n))
            .enumerate()
        {
            let m = self.modulus(i);
            for ((o, &x), &y) in o.iter_mut().zip(x).zip(y) {
                *o = u64::from(m.mul(x as u32, y as u32));
            }
        }
        Ok(out)
    }

    /// `a += b`, every prime.
    pub fn add_assign(&self, a: &mut [u64], b: &[u64]) -> Result<()> {
        self.zip_assign(a, b, |m, x, y| m.add(x, y))
    }

    /// `a -= b`, every prime.
    pub fn sub_assign(&self, a: &mut [u64], b: &[u64]) -> Result<()> {
        self.zip_assign(a, b, |m, x, y| m.sub(x, y))
    }

    fn zip_assign(
        &self,
        a: &mut [u64],
        b: &[u64],
        f: impl Fn(&Modulus, u32, u32) -> u32,
    ) -> Result<()> {
        self.check(a)?;
        self.check(b)?;
        for (i, (x, y)) in a
            .chunks_exact_mut(self.n)
            .zip(b.chunks_exact(self.n))
            .enumerate()
        {
            let m = self.modulus(i);
            for (x, &y) in x.iter_mut().zip(y) {
                *x = u64::from(f(m, *x as u32, y as u32));
            }
        }
        Ok(())
    }

    /// A small signed polynomial (`|v| < 2^31`), reduced into every prime (coefficient form).
    pub fn from_signed(&self, coeffs: &[i64]) -> Result<Vec<u64>> {
        if coeffs.len() != self.n {
            return Err(SealError::CountMismatch {
                what: "polynomial length",
                found: coeffs.len() as u64,
                expected: self.n as u64,
            });
        }
        let mut out = Vec::with_capacity(self.n * self.tables.len());
        for t in &self.tables {
            let m = t.modulus();
            out.extend(coeffs.iter().map(|&c| u64::from(m.reduce_i64(c))));
        }
        Ok(out)
    }
}

/// `a(x^g)` for a coefficient-form polynomial over one prime (`g` odd, `x^n = -1`), written
/// into `out` (the same length as `poly`, so a secret key's image goes where the caller keeps
/// and wipes it). Indices depend only on the public `g`; values are negated with a mask, so a
/// secret key may pass.
pub fn apply_galois_coeff_into(poly: &[u64], m: &Modulus, g: usize, out: &mut [u64]) {
    let n = poly.len();
    if n.is_power_of_two() {
        // Every SEAL degree: the exponent i·g mod 2n advances by g under a mask, its bit n
        // says whether x^(i·g) wrapped past x^n (negate), its low bits are the index. No
        // division and no data-dependent branch per coefficient.
        let (mask, low) = (2 * n - 1, n - 1);
        let mut e = 0usize;
        for &c in poly {
            let negated = u64::from(m.neg(c as u32));
            if let Some(o) = out.get_mut(e & low) {
                *o = if e & n == 0 { c } else { negated };
            }
            e = (e + g) & mask;
        }
        return;
    }
    for (i, &c) in poly.iter().enumerate() {
        let e = (i * g) % (2 * n);
        if e < n {
            if let Some(o) = out.get_mut(e) {
                *o = c;
            }
        } else if let Some(o) = out.get_mut(e - n) {
            *o = u64::from(m.neg(c as u32));
        }
    }
}

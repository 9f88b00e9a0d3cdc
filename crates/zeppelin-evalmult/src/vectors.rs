//! Directories in the layout of `shared/vectors/README.md`: `manifest.json`, `evk_a_i.bin`,
//! `evk_b_i.bin`, and per pair `k`: `ctk_x0.bin`, `ctk_x1.bin`, `ctk_y0.bin`, `ctk_y1.bin`,
//! optionally `ctk_tensor2.bin`, `ctk_relin0.bin`, `ctk_relin1.bin`. Every `.bin` is
//! `towers × ring_dim` little-endian `u32` residues, tower-major, EVALUATION format.

use std::fs;
use std::path::Path;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::context::{Ciphertext, RelinKey, RnsContext};
use crate::error::{EvalMultError, Input, ManifestError, Result};

/// Largest batch a manifest may announce (keeps a hostile manifest from sizing allocations).
pub const MAX_BATCH: usize = 1 << 16;

/// The fields of `manifest.json` the engine needs (others are ignored).
#[derive(Clone, Debug)]
pub struct Manifest {
    /// Ring dimension `n`.
    pub ring_dim: usize,
    /// Number of towers.
    pub towers: usize,
    /// Number of BV digits (equals `towers` with `digitSize = 0`).
    pub digits: usize,
    /// Number of ciphertext pairs.
    pub batch: usize,
    /// Tower moduli.
    pub moduli: Vec<u32>,
    /// OpenFHE's root of unity per tower, when given (absent or `null`: not given); checked
    /// against ours.
    pub roots: Option<Vec<u32>>,
}

/// A loaded vector directory.
#[derive(Clone, Debug)]
pub struct VectorSet {
    /// The manifest.
    pub manifest: Manifest,
    /// The validated parameters.
    pub context: RnsContext,
    /// The relinearization key.
    pub key: RelinKey,
    /// The input pairs `(x, y)`.
    pub pairs: Vec<(Ciphertext, Ciphertext)>,
    /// `ctk_tensor2.bin` for each pair, when present.
    pub tensor2: Option<Vec<Vec<u32>>>,
    /// `(ctk_relin0.bin, ctk_relin1.bin)` for each pair, when present.
    pub expected: Option<Vec<Ciphertext>>,
}

impl Manifest {
    /// Decodes the text of `manifest.json` (field types only; [`read_manifest`] checks that the
    /// fields agree).
    pub fn parse(text: &str) -> Result<Self, ManifestError> {
        let Value::Object(mut object) = serde_json::from_str(text).map_err(ManifestError::Json)?
        else {
            return Err(ManifestError::NotAnObject);
        };
        let roots = match object.remove("roots") {
            None | Some(Value::Null) => None,
            Some(value) => Some(decode("roots", value)?),
        };
        Ok(Self {
            ring_dim: field(&mut object, "ring_dim")?,
            towers: field(&mut object, "towers")?,
            digits: field(&mut object, "digits")?,
            batch: field(&mut object, "batch")?,
            moduli: field(&mut object, "moduli")?,
            roots,
        })
    }
}

fn field<T: DeserializeOwned>(
    object: &mut Map<String, Value>,
    name: &'static str,
) -> Result<T, ManifestError> {
    let value = object
        .remove(name)
        .ok_or(ManifestError::MissingField { field: name })?;
    decode(name, value)
}

fn decode<T: DeserializeOwned>(name: &'static str, value: Value) -> Result<T, ManifestError> {
    serde_json::from_value(value).map_err(|source| ManifestError::WrongType {
        field: name,
        source,
    })
}

/// Reads and validates `manifest.json` of `dir` and builds the context.
pub fn read_manifest(dir: &Path) -> Result<(Manifest, RnsContext)> {
    let path = dir.join("manifest.json");
    let text = fs::read_to_string(&path).map_err(|source| EvalMultError::Io {
        path: path.clone(),
        source,
    })?;
    let invalid = |source| EvalMultError::Manifest {
        path: path.clone(),
        source,
    };
    let manifest = Manifest::parse(&text).map_err(invalid)?;
    if manifest.towers != manifest.moduli.len() {
        return Err(invalid(ManifestError::TowersVsModuli {
            towers: manifest.towers,
            moduli: manifest.moduli.len(),
        }));
    }
    if manifest.digits != manifest.towers {
        return Err(invalid(ManifestError::DigitsVsTowers {
            digits: manifest.digits,
            towers: manifest.towers,
        }));
    }
    if manifest.batch == 0 || manifest.batch > MAX_BATCH {
        return Err(invalid(ManifestError::Batch {
            batch: manifest.batch,
            max: MAX_BATCH,
        }));
    }
    let context = RnsContext::new(manifest.ring_dim, &manifest.moduli)?;
    if let Some(roots) = &manifest.roots {
        let expected = context.roots();
        if *roots != expected {
            return Err(invalid(ManifestError::Roots {
                roots: roots.clone(),
                expected,
            }));
        }
    }
    Ok((manifest, context))
}

/// Reads one `.bin` RNS polynomial and validates it against `ctx`.
pub fn read_poly(ctx: &RnsContext, path: &Path) -> Result<Vec<u32>> {
    let bytes = fs::read(path).map_err(|source| EvalMultError::Io {
        path: path.to_owned(),
        source,
    })?;
    poly_from_le_bytes(ctx, Input::File(path.to_owned()), &bytes)
}

/// Decodes `towers × ring_dim` little-endian `u32` residues and validates them.
pub fn poly_from_le_bytes(ctx: &RnsContext, what: Input, bytes: &[u8]) -> Result<Vec<u32>> {
    let expected = ctx.poly_len() * 4;
    if bytes.len() != expected {
        return Err(EvalMultError::shape(what, expected, bytes.len(), "bytes"));
    }
    let poly: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    ctx.check_poly(what, &poly)?;
    Ok(poly)
}

/// Encodes residues as little-endian `u32`.
pub fn poly_to_le_bytes(poly: &[u32]) -> Vec<u8> {
    poly.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn optional(path: &Path) -> bool {
    path.is_file()
}

impl VectorSet {
    /// Loads and validates a vector directory.
    pub fn load(dir: &Path) -> Result<Self> {
        let (manifest, context) = read_manifest(dir)?;
        let mut a = Vec::with_capacity(manifest.digits);
        let mut b = Vec::with_capacity(manifest.digits);
        for i in 0..manifest.digits {
            a.push(read_poly(&context, &dir.join(format!("evk_a_{i}.bin")))?);
            b.push(read_poly(&context, &dir.join(format!("evk_b_{i}.bin")))?);
        }
        let key = RelinKey {
            ring_dim: manifest.ring_dim,
            moduli: manifest.moduli.clone(),
            a,
            b,
        };
        let mut pairs = Vec::with_capacity(manifest.batch);
        for k in 0..manifest.batch {
            let read = |suffix: &str| read_poly(&context, &dir.join(format!("ct{k}_{suffix}.bin")));
            let x = Ciphertext {
                c0: read("x0")?,
                c1: read("x1")?,
            };
            let y = Ciphertext {
                c0: read("y0")?,
                c1: read("y1")?,
            };
            pairs.push((x, y));
        }
        let all_present = |suffixes: &[&str]| {
            (0..manifest.batch).all(|k| {
                suffixes
                    .iter()
                    .all(|s| optional(&dir.join(format!("ct{k}_{s}.bin"))))
            })
        };
        let tensor2 = if all_present(&["tensor2"]) {
            Some(
                (0..manifest.batch)
                    .map(|k| read_poly(&context, &dir.join(format!("ct{k}_tensor2.bin"))))
                    .collect::<Result<Vec<_>>>()?,
            )
        } else {
            None
        };
        let expected = if all_present(&["relin0", "relin1"]) {
            Some(
                (0..manifest.batch)
                    .map(|k| {
                        Ok(Ciphertext {
                            c0: read_poly(&context, &dir.join(format!("ct{k}_relin0.bin")))?,
                            c1: read_poly(&context, &dir.join(format!("ct{k}_relin1.bin")))?,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?,
            )
        } else {
            None
        };
        Ok(Self {
            manifest,
            context,
            key,
            pairs,
            tensor2,
            expected,
        })
    }
}

/// One residue that differs from the expected output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// Pair index `k`.
    pub pair: usize,
    /// Component (0 or 1).
    pub component: usize,
    /// Tower.
    pub tower: usize,
    /// Coefficient within the tower.
    pub index: usize,
    /// What we computed.
    pub got: u32,
    /// What the file holds.
    pub expected: u32,
}

/// Comparison of results against expected outputs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Residues compared.
    pub compared: usize,
    /// Total number of differing residues.
    pub mismatches: usize,
    /// The first few differences (at most [`CheckReport::MAX_LISTED`]).
    pub first: Vec<Mismatch>,
}

impl CheckReport {
    /// How many mismatches are listed individually.
    pub const MAX_LISTED: usize = 16;
}

/// Compares residue for residue.
pub fn compare(ring_dim: usize, results: &[Ciphertext], expected: &[Ciphertext]) -> CheckReport {
    let mut report = CheckReport::default();
    for (pair, (got, want)) in results.iter().zip(expected).enumerate() {
        for (component, (g, w)) in [(&got.c0, &want.c0), (&got.c1, &want.c1)]
            .into_iter()
            .enumerate()
        {
            for (j, (&gv, &wv)) in g.iter().zip(w.iter()).enumerate() {
                report.compared += 1;
                if gv != wv {
                    report.mismatches += 1;
                    if report.first.len() < CheckReport::MAX_LISTED {
                        report.first.push(Mismatch {
                            pair,
                            component,
                            tower: j / ring_dim,
                            index: j % ring_dim,
                            got: gv,
                            expected: wv,
                        });
                    }
                }
            }
            report.mismatches += g.len().abs_diff(w.len());
        }
    }
    report.mismatches += results.len().abs_diff(expected.len());
    report
}

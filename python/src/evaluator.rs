//! `zeppelin.Evaluator`: the Rust SEAL evaluator (`zeppelin_server::Evaluator`, byte for byte
//! SEAL 4.1's) on SEAL `Ciphertext` bytes, with prepared relinearization and Galois keys.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeppelin_seal::{Ciphertext, ComprMode, GaloisKeys, Plaintext, RelinKeys, SealContext};
use zeppelin_server::{Evaluator as RustEvaluator, PreparedGaloisKeys, PreparedRelinKeys};

use crate::error::{BindError, BindResult};
use crate::preset::{self, Preset};
use crate::words;

/// The evaluator of one preset and its keys (not Python-specific).
pub struct EvaluatorCore {
    preset: Arc<dyn Preset>,
    ctx: Arc<SealContext>,
    eval: RustEvaluator,
    relin: Option<PreparedRelinKeys>,
    galois: Option<PreparedGaloisKeys>,
}

impl EvaluatorCore {
    /// The evaluator of `preset` over `ctx`, with the keys prepared once.
    pub fn new(
        preset: Arc<dyn Preset>,
        ctx: Arc<SealContext>,
        relin: Option<&RelinKeys>,
        galois: Option<&GaloisKeys>,
    ) -> BindResult<Self> {
        let eval = RustEvaluator::new(ctx.clone())
            .map_err(BindError::evaluation("building the evaluator"))?;
        let relin = relin
            .map(|k| eval.prepare_relin_keys(k))
            .transpose()
            .map_err(BindError::evaluation("preparing the RelinKeys"))?;
        let galois = galois
            .map(|k| eval.prepare_galois_keys(k))
            .transpose()
            .map_err(BindError::evaluation("preparing the GaloisKeys"))?;
        Ok(Self {
            preset,
            ctx,
            eval,
            relin,
            galois,
        })
    }

    /// The evaluator of `preset` with keys given as SEAL bytes.
    fn from_bytes(
        preset: Arc<dyn Preset>,
        relin: Option<&[u8]>,
        galois: Option<&[u8]>,
    ) -> BindResult<Self> {
        let ctx = Arc::new(
            SealContext::new(preset.seal_parameters())
                .map_err(BindError::evaluation("the preset's SEAL context"))?,
        );
        let relin = relin
            .map(|b| RelinKeys::load(&ctx, b))
            .transpose()
            .map_err(BindError::evaluation("reading the RelinKeys"))?;
        let galois = galois
            .map(|b| GaloisKeys::load(&ctx, b))
            .transpose()
            .map_err(BindError::evaluation("reading the GaloisKeys"))?;
        Self::new(preset, ctx, relin.as_ref(), galois.as_ref())
    }

    fn load(&self, bytes: &[u8]) -> BindResult<Ciphertext> {
        let cap = self.preset.ciphertext_cap();
        if bytes.len() > cap {
            return Err(BindError::Ciphertext(format!(
                "{} bytes is larger than any {} ciphertext ({cap} at most)",
                bytes.len(),
                self.preset.name()
            )));
        }
        Ciphertext::load(&self.ctx, bytes)
            .map_err(BindError::ciphertext("reading a SEAL Ciphertext"))
    }

    fn save(&self, ct: BindResult<Ciphertext>, compression: ComprMode) -> BindResult<Vec<u8>> {
        ct?.save(compression)
            .map_err(BindError::ciphertext("writing the SEAL Ciphertext"))
    }

    fn plain(&self, slots: &[u8]) -> BindResult<Plaintext> {
        let slots = words::from_le_bytes(slots, "slot values")?;
        let coeffs = self.preset.encode(&slots)?;
        Ok(Plaintext::new(coeffs.into_iter().map(u64::from).collect()))
    }

    fn relin(&self) -> BindResult<&PreparedRelinKeys> {
        self.relin.as_ref().ok_or_else(|| {
            BindError::Evaluation(
                "no RelinKeys: pass relin_keys= or open a key directory with relin.seal (zeppelin keys --relin)".into(),
            )
        })
    }

    fn galois(&self) -> BindResult<&PreparedGaloisKeys> {
        self.galois.as_ref().ok_or_else(|| {
            BindError::Evaluation(
                "no GaloisKeys: pass galois_keys= or open a key directory with galois.seal (zeppelin keys --galois)".into(),
            )
        })
    }

    /// Runs a unary or binary operation on ciphertext bytes.
    fn run(&self, op: Op<'_>, compression: ComprMode) -> BindResult<Vec<u8>> {
        let e = &self.eval;
        let err = |name: &'static str| BindError::evaluation(name);
        let result = match op {
            Op::Add(a, b) => e.add(&self.load(a)?, &self.load(b)?).map_err(err("add")),
            Op::Sub(a, b) => e.sub(&self.load(a)?, &self.load(b)?).map_err(err("sub")),
            Op::Multiply(a, b) => e
                .multiply(&self.load(a)?, &self.load(b)?)
                .map_err(err("multiply")),
            Op::Negate(a) => e.negate(&self.load(a)?).map_err(err("negate")),
            Op::Square(a) => e.square(&self.load(a)?).map_err(err("square")),
            Op::Relinearize(a) => e
                .relinearize(&self.load(a)?, self.relin()?)
                .map_err(err("relinearize")),
            Op::RotateRows(a, steps) => e
                .rotate_rows(&self.load(a)?, steps, self.galois()?)
                .map_err(err("rotate_rows")),
            Op::RotateColumns(a) => e
                .rotate_columns(&self.load(a)?, self.galois()?)
                .map_err(err("rotate_columns")),
            Op::ModSwitch(a) => e
                .mod_switch_to_next(&self.load(a)?)
                .map_err(err("mod_switch_to_next")),
            Op::AddPlain(a, p) => e
                .add_plain(&self.load(a)?, &self.plain(p)?)
                .map_err(err("add_plain")),
            Op::SubPlain(a, p) => e
                .sub_plain(&self.load(a)?, &self.plain(p)?)
                .map_err(err("sub_plain")),
            Op::MultiplyPlain(a, p) => e
                .multiply_plain(&self.load(a)?, &self.plain(p)?)
                .map_err(err("multiply_plain")),
            Op::Sum(cts) => {
                if cts.is_empty() {
                    return Err(BindError::Input("sum of no ciphertexts".into()));
                }
                let cts = cts
                    .iter()
                    .map(|c| self.load(c))
                    .collect::<BindResult<Vec<_>>>()?;
                e.sum(&cts).map_err(err("sum"))
            }
        };
        self.save(result, compression)
    }
}

/// One evaluator operation on ciphertext bytes (slot values as little-endian `u32`).
enum Op<'a> {
    Add(&'a [u8], &'a [u8]),
    Sub(&'a [u8], &'a [u8]),
    Multiply(&'a [u8], &'a [u8]),
    Negate(&'a [u8]),
    Square(&'a [u8]),
    Relinearize(&'a [u8]),
    RotateRows(&'a [u8], i32),
    RotateColumns(&'a [u8]),
    ModSwitch(&'a [u8]),
    AddPlain(&'a [u8], &'a [u8]),
    SubPlain(&'a [u8], &'a [u8]),
    MultiplyPlain(&'a [u8], &'a [u8]),
    Sum(Vec<&'a [u8]>),
}

/// The native evaluator (`zeppelin.Evaluator` wraps it).
#[pyclass(module = "zeppelin._native", frozen)]
pub struct Evaluator {
    pub(crate) core: EvaluatorCore,
}

impl Evaluator {
    fn run<'py>(
        &self,
        py: Python<'py>,
        op: Op<'_>,
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let compression = preset::compression(compression)?;
        let out = py.detach(|| self.core.run(op, compression))?;
        Ok(PyBytes::new(py, &out))
    }
}

#[pymethods]
impl Evaluator {
    #[new]
    #[pyo3(signature = (preset, relin_keys=None, galois_keys=None))]
    fn py_new(
        py: Python<'_>,
        preset: &str,
        relin_keys: Option<&[u8]>,
        galois_keys: Option<&[u8]>,
    ) -> PyResult<Self> {
        let preset = preset::by_name(preset)?;
        let core = py.detach(|| EvaluatorCore::from_bytes(preset, relin_keys, galois_keys))?;
        Ok(Self { core })
    }

    #[getter]
    fn preset(&self) -> &'static str {
        self.core.preset.name()
    }

    #[getter]
    fn has_relin_keys(&self) -> bool {
        self.core.relin.is_some()
    }

    #[getter]
    fn has_galois_keys(&self) -> bool {
        self.core.galois.is_some()
    }

    fn add<'py>(
        &self,
        py: Python<'py>,
        a: &[u8],
        b: &[u8],
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.run(py, Op::Add(a, b), compression)
    }

    fn sub<'py>(
        &self,
        py: Python<'py>,
        a: &[u8],
        b: &[u8],
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.run(py, Op::Sub(a, b), compression)
    }

    fn multiply<'py>(
        &self,
        py: Python<'py>,
        a: &[u8],
        b: &[u8],
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.run(py, Op::Multiply(a, b), compression)
    }

    fn negate<'py>(
        &self,
        py: Python<'py>,
        a: &[u8],
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.run(py, Op::Negate(a), compression)
    }

    fn square<'py>(
        &self,
        py: Python<'py>,
        a: &[u8],
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.run(py, Op::Square(a), compression)
    }

    fn relinearize<'py>(
        &self,
        py: Python<'py>,
        a: &[u8],
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.run(py, Op::Relinearize(a), compression)
    }

    fn rotate_rows<'py>(
        &self,
        py: Python<'py>,
        a: &[u8],
        steps: i32,
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.run(py, Op::RotateRows(a, steps), compression)
    }

    fn rotate_columns<'py>(
        &self,
        py: Python<'py>,
        a: &[u8],
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.run(py, Op::RotateColumns(a), compression)
    }

    fn mod_switch_to_next<'py>(
        &self,
        py: Python<'py>,
        a: &[u8],
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.run(py, Op::ModSwitch(a), compression)
    }

    fn add_plain<'py>(
        &self,
        py: Python<'py>,
        a: &[u8],
        slots: &[u8],
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.run(py, Op::AddPlain(a, slots), compression)
    }

    fn sub_plain<'py>(
        &self,
        py: Python<'py>,
        a: &[u8],
        slots: &[u8],
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.run(py, Op::SubPlain(a, slots), compression)
    }

    fn multiply_plain<'py>(
        &self,
        py: Python<'py>,
        a: &[u8],
        slots: &[u8],
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        self.run(py, Op::MultiplyPlain(a, slots), compression)
    }

    fn sum<'py>(
        &self,
        py: Python<'py>,
        cts: Vec<Bound<'py, PyBytes>>,
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let refs: Vec<&[u8]> = cts.iter().map(|c| c.as_bytes()).collect();
        self.run(py, Op::Sum(refs), compression)
    }
}

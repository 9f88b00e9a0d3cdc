//! `zeppelin.KeyDirectory` and the preset functions: key directories of `zeppelin keygen` /
//! `zeppelin keys`, device encryption and decryption, and the device ⇄ SEAL conversions.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::error::BindError;
use crate::evaluator::Evaluator;
use crate::preset::{self, DeviceKeys, Mode, Preset};
use crate::words;

/// A preset's parameters: `(name, n, t, data_primes, special_prime)`.
type PresetInfo = (&'static str, usize, u32, Vec<u32>, Option<u32>);

fn info(p: &dyn Preset) -> PresetInfo {
    (
        p.name(),
        p.n(),
        p.t(),
        p.data_primes().to_vec(),
        p.special_prime(),
    )
}

/// The names of every device preset.
#[pyfunction]
pub fn preset_names() -> Vec<&'static str> {
    preset::names()
}

/// `(name, n, t, data_primes, special_prime)` of the preset `name`.
#[pyfunction]
pub fn preset_info(name: &str) -> PyResult<PresetInfo> {
    Ok(info(preset::by_name(name)?.as_ref()))
}

/// SEAL's `EncryptionParameters` of the preset, as SEAL writes them (uncompressed).
#[pyfunction]
pub fn seal_parameters<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyBytes>> {
    let bytes = preset::by_name(name)?
        .seal_parameters()
        .save(zeppelin_seal::ComprMode::None)
        .map_err(|e| BindError::Input(format!("writing the parameters: {e}")))?;
    Ok(PyBytes::new(py, &bytes))
}

/// The plaintext coefficients (LE `u32` bytes) of slot values (LE `u32` bytes).
#[pyfunction]
pub fn encode<'py>(py: Python<'py>, name: &str, slots: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let preset = preset::by_name(name)?;
    let slots = words::from_le_bytes(slots, "slot values")?;
    let coeffs = preset.encode(&slots)?;
    Ok(PyBytes::new(py, &words::to_le_bytes(&coeffs)))
}

/// The slot values of plaintext coefficients (both LE `u32` bytes).
#[pyfunction]
pub fn decode<'py>(py: Python<'py>, name: &str, coeffs: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
    let preset = preset::by_name(name)?;
    let coeffs = words::from_le_bytes(coeffs, "plaintext coefficients")?;
    let slots = preset.decode(&coeffs)?;
    Ok(PyBytes::new(py, &words::to_le_bytes(&slots)))
}

/// `zeppelin keygen --dir dir --preset name [--force]`.
#[pyfunction]
#[pyo3(signature = (dir, preset, force=false))]
pub fn keygen(py: Python<'_>, dir: PathBuf, preset: &str, force: bool) -> PyResult<()> {
    let preset = preset::by_name(preset)?;
    py.detach(|| preset.keygen(&dir, force))?;
    Ok(())
}

/// The native key directory (`zeppelin.KeyDirectory` wraps it).
#[pyclass(module = "zeppelin._native", frozen)]
pub struct KeyDirectory {
    path: PathBuf,
    preset: Arc<dyn Preset>,
    keys: Box<dyn DeviceKeys>,
}

#[pymethods]
impl KeyDirectory {
    #[new]
    fn py_new(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let (preset, keys) = py.detach(|| {
            let preset = preset::of_directory(&path)?;
            let keys = preset.open(&path)?;
            Ok::<_, BindError>((preset, keys))
        })?;
        Ok(Self { path, preset, keys })
    }

    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    #[getter]
    fn preset(&self) -> &'static str {
        self.preset.name()
    }

    #[getter]
    fn has_secret_key(&self) -> bool {
        self.keys.has_secret_key()
    }

    #[getter]
    fn has_public_key(&self) -> bool {
        self.keys.has_public_key()
    }

    #[pyo3(signature = (slots, mode, level=None))]
    fn encrypt<'py>(
        &self,
        py: Python<'py>,
        slots: &[u8],
        mode: &str,
        level: Option<usize>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mode = Mode::from_name(mode)?;
        let slots = words::from_le_bytes(slots, "slot values")?;
        let out = py.detach(|| self.keys.encrypt(&slots, mode, level))?;
        Ok(PyBytes::new(py, &out))
    }

    fn decrypt<'py>(&self, py: Python<'py>, ciphertext: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        let slots = py.detach(|| self.keys.decrypt(ciphertext))?;
        Ok(PyBytes::new(py, &words::to_le_bytes(&slots)))
    }

    fn to_seal<'py>(
        &self,
        py: Python<'py>,
        ciphertext: &[u8],
        compression: &str,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let compression = preset::compression(compression)?;
        let out = py.detach(|| self.keys.to_seal(ciphertext, compression))?;
        Ok(PyBytes::new(py, &out))
    }

    fn to_device<'py>(&self, py: Python<'py>, ciphertext: &[u8]) -> PyResult<Bound<'py, PyBytes>> {
        let out = py.detach(|| self.keys.to_device(ciphertext))?;
        Ok(PyBytes::new(py, &out))
    }

    fn inspect(&self, py: Python<'_>, ciphertext: &[u8]) -> PyResult<(&'static str, usize)> {
        Ok(py.detach(|| self.keys.inspect(ciphertext))?)
    }

    fn evaluator(&self, py: Python<'_>) -> PyResult<Evaluator> {
        let core = py.detach(|| self.keys.evaluator())?;
        Ok(Evaluator { core })
    }
}

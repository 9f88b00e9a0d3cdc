//! `zeppelin._native`: the extension module under the `zeppelin` Python package
//! (`python/zeppelin/__init__.py` is the public API: it turns NumPy arrays into the
//! little-endian words these functions take and back).
//!
//! - [`keys`]: presets, `zeppelin keygen`, key directories, device encryption/decryption and
//!   the device ⇄ SEAL conversions (over `zeppelin_cli::keydir` and `zeppelin_seal::device`);
//! - [`evaluator`]: `zeppelin_server::Evaluator` on SEAL `Ciphertext` bytes;
//! - [`service`]: a client of `zeppelin serve`;
//! - [`evalmult`]: a client of `zeppelin evalmult serve`.
//!
//! Every failure raises a subclass of `zeppelin.ZeppelinError` ([`error`]); every operation
//! that computes or waits releases the GIL.

mod error;
mod evalmult;
mod evaluator;
mod keys;
mod preset;
mod service;
mod words;

use pyo3::prelude::*;

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("ZeppelinError", py.get_type::<error::ZeppelinError>())?;
    m.add("InputError", py.get_type::<error::InputError>())?;
    m.add(
        "KeyDirectoryError",
        py.get_type::<error::KeyDirectoryError>(),
    )?;
    m.add("CiphertextError", py.get_type::<error::CiphertextError>())?;
    m.add("EvaluationError", py.get_type::<error::EvaluationError>())?;
    m.add("ServiceError", py.get_type::<error::ServiceError>())?;
    m.add("EvalmultError", py.get_type::<error::EvalmultError>())?;
    m.add_function(wrap_pyfunction!(keys::preset_names, m)?)?;
    m.add_function(wrap_pyfunction!(keys::preset_info, m)?)?;
    m.add_function(wrap_pyfunction!(keys::seal_parameters, m)?)?;
    m.add_function(wrap_pyfunction!(keys::encode, m)?)?;
    m.add_function(wrap_pyfunction!(keys::decode, m)?)?;
    m.add_function(wrap_pyfunction!(keys::keygen, m)?)?;
    m.add_class::<keys::KeyDirectory>()?;
    m.add_class::<evaluator::Evaluator>()?;
    m.add_class::<service::ServiceClient>()?;
    m.add_class::<evalmult::EvalmultClient>()?;
    Ok(())
}

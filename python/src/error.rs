//! The exceptions of the package (`zeppelin.ZeppelinError` and its subclasses) and the one
//! error type every binding returns, each variant raising one of them.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;

create_exception!(
    _native,
    ZeppelinError,
    PyException,
    "Base class of every error the zeppelin package raises."
);
create_exception!(
    _native,
    InputError,
    ZeppelinError,
    "An argument is not acceptable: an unknown preset, mode or compression, slot values out of range, an array of the wrong shape."
);
create_exception!(
    _native,
    KeyDirectoryError,
    ZeppelinError,
    "A key directory (written by `zeppelin keygen` / `zeppelin keys`) is missing, incomplete or inconsistent."
);
create_exception!(
    _native,
    CiphertextError,
    ZeppelinError,
    "Bytes that are not a ciphertext of the preset (in any form), or a conversion or decryption that failed."
);
create_exception!(
    _native,
    EvaluationError,
    ZeppelinError,
    "The evaluator refused an operation (operands of other levels or sizes, keys missing or of other parameters)."
);
create_exception!(
    _native,
    ServiceError,
    ZeppelinError,
    "A request to `zeppelin serve` failed (connection, an error status with the server's message, or an answer outside the contract)."
);
create_exception!(
    _native,
    EvalmultError,
    ZeppelinError,
    "A session with `zeppelin evalmult serve` failed (connection, invalid inputs, or the server's RLER error)."
);

/// Why a binding failed; each variant becomes the exception of the same name, with the text
/// (which already carries its causes) as its message.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// See [`InputError`].
    #[error("{0}")]
    Input(String),
    /// See [`KeyDirectoryError`].
    #[error("{0}")]
    KeyDirectory(String),
    /// See [`CiphertextError`].
    #[error("{0}")]
    Ciphertext(String),
    /// See [`EvaluationError`].
    #[error("{0}")]
    Evaluation(String),
    /// See [`ServiceError`].
    #[error("{0}")]
    Service(String),
    /// See [`EvalmultError`].
    #[error("{0}")]
    Evalmult(String),
}

impl BindError {
    /// A `map_err` adapter: `what: <error>` as a [`BindError::Ciphertext`].
    pub fn ciphertext<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> Self {
        move |e| Self::Ciphertext(format!("{what}: {e}"))
    }

    /// A `map_err` adapter: `what: <error>` as a [`BindError::Evaluation`].
    pub fn evaluation<E: std::fmt::Display>(what: &'static str) -> impl Fn(E) -> Self {
        move |e| Self::Evaluation(format!("{what}: {e}"))
    }

    /// A `map_err` adapter: the key directory's error as a [`BindError::KeyDirectory`].
    pub fn key_directory(e: zeppelin_cli::error::CliError) -> Self {
        Self::KeyDirectory(e.to_string().replace('\n', " "))
    }
}

impl From<BindError> for PyErr {
    fn from(e: BindError) -> PyErr {
        let message = e.to_string();
        match e {
            BindError::Input(_) => InputError::new_err(message),
            BindError::KeyDirectory(_) => KeyDirectoryError::new_err(message),
            BindError::Ciphertext(_) => CiphertextError::new_err(message),
            BindError::Evaluation(_) => EvaluationError::new_err(message),
            BindError::Service(_) => ServiceError::new_err(message),
            BindError::Evalmult(_) => EvalmultError::new_err(message),
        }
    }
}

/// The result of a binding.
pub type BindResult<T> = Result<T, BindError>;

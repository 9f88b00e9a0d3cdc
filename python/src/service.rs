//! `zeppelin.ServiceClient`: the Rust client of `zeppelin serve` (docs/server.md,
//! `zeppelin_service::client::Client`) driven by a runtime of its own, the GIL released while
//! a request is in flight.

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeppelin_service::client::Client;
use zeppelin_service::AggregateOp;

use crate::error::{BindError, BindResult};

/// The native client (`zeppelin.ServiceClient` wraps it).
#[pyclass(module = "zeppelin._native", frozen)]
pub struct ServiceClient {
    runtime: tokio::runtime::Runtime,
    client: Client,
}

impl ServiceClient {
    fn block<T>(
        &self,
        py: Python<'_>,
        call: impl std::future::Future<Output = Result<T, zeppelin_service::client::ClientError>> + Send,
    ) -> BindResult<T>
    where
        T: Send,
    {
        py.detach(|| self.runtime.block_on(call))
            .map_err(|e| BindError::Service(e.to_string()))
    }
}

#[pymethods]
impl ServiceClient {
    #[new]
    #[pyo3(signature = (url, token=None))]
    fn py_new(url: &str, token: Option<&str>) -> PyResult<Self> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| BindError::Service(format!("cannot start the client's runtime: {e}")))?;
        // reqwest's client registers with the runtime it is built in.
        let client = runtime
            .block_on(async { Client::new(url) })
            .map_err(|e| BindError::Service(e.to_string()))?;
        let client = match token {
            Some(t) => client.with_token(t),
            None => client,
        };
        Ok(Self { runtime, client })
    }

    #[getter]
    fn url(&self) -> String {
        self.client.base().to_owned()
    }

    fn health(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.block(py, self.client.health())?)
    }

    #[pyo3(signature = (stream, ciphertext, idempotency_key=None))]
    fn upload(
        &self,
        py: Python<'_>,
        stream: &str,
        ciphertext: &[u8],
        idempotency_key: Option<&str>,
    ) -> PyResult<(String, bool)> {
        let receipt = self.block(
            py,
            self.client
                .upload(stream, ciphertext.to_vec(), idempotency_key),
        )?;
        Ok((receipt.id, receipt.replayed))
    }

    fn status(&self, py: Python<'_>, stream: &str) -> PyResult<(u64, String)> {
        let status = self.block(py, self.client.status(stream))?;
        Ok((status.count, status.preset))
    }

    #[pyo3(signature = (stream, op, weights=None, first_n=None))]
    fn aggregate<'py>(
        &self,
        py: Python<'py>,
        stream: &str,
        op: &str,
        weights: Option<Vec<i64>>,
        first_n: Option<u64>,
    ) -> PyResult<(Bound<'py, PyBytes>, u64)> {
        let op = match (op, weights) {
            ("sum", None) => AggregateOp::Sum,
            ("sum_of_squares", None) => AggregateOp::SumOfSquares,
            ("dot", Some(w)) => AggregateOp::Dot(w),
            ("dot", None) => return Err(BindError::Input("dot needs weights".into()).into()),
            ("sum" | "sum_of_squares", Some(_)) => {
                return Err(BindError::Input(format!("{op} takes no weights")).into())
            }
            (other, _) => {
                return Err(BindError::Input(format!(
                    "unknown aggregation {:?}; expected sum, sum_of_squares or dot",
                    other.chars().take(32).collect::<String>()
                ))
                .into())
            }
        };
        let aggregate = self.block(py, self.client.aggregate_first(stream, &op, first_n))?;
        Ok((PyBytes::new(py, &aggregate.ciphertext), aggregate.count))
    }

    fn delete_upload(&self, py: Python<'_>, stream: &str, id: &str) -> PyResult<u64> {
        Ok(self.block(py, self.client.delete_upload(stream, id))?)
    }

    fn delete_device_uploads(&self, py: Python<'_>, stream: &str, device: &str) -> PyResult<u64> {
        Ok(self.block(py, self.client.delete_device_uploads(stream, device))?)
    }

    fn put_relin_keys(&self, py: Python<'_>, keys: &[u8]) -> PyResult<()> {
        Ok(self.block(py, self.client.put_relin_keys(keys.to_vec()))?)
    }

    fn put_galois_keys(&self, py: Python<'_>, keys: &[u8]) -> PyResult<()> {
        Ok(self.block(py, self.client.put_galois_keys(keys.to_vec()))?)
    }
}

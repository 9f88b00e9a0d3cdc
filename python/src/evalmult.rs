//! `zeppelin.EvalmultClient`: the host driver of `zeppelin evalmult serve` (the FPGA's stream
//! protocol over TCP, `zeppelin_evalmult::server::Client`): one session streams a batch of
//! ciphertext pairs and returns their relinearized products, timed.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeppelin_evalmult::server::Client;
use zeppelin_evalmult::{Ciphertext, RelinKey, RnsContext};

use crate::error::{BindError, BindResult};
use crate::words;

fn evalmult_error(e: zeppelin_evalmult::EvalMultError) -> BindError {
    BindError::Evalmult(e.to_string())
}

/// `words` cut into `count` vectors of equal length (`what` names them in the error).
fn split(words: &[u32], count: usize, len: usize, what: &str) -> BindResult<Vec<Vec<u32>>> {
    if words.len() != count * len {
        return Err(BindError::Input(format!(
            "{what}: {} residues, expected {count} × {len}",
            words.len()
        )));
    }
    Ok(words
        .chunks_exact(len.max(1))
        .map(<[u32]>::to_vec)
        .collect())
}

/// One session's inputs, checked against its context before anything is sent.
struct Session {
    ctx: RnsContext,
    key: RelinKey,
    pairs: Vec<(Ciphertext, Ciphertext)>,
}

impl Session {
    fn new(
        ring_dim: usize,
        moduli: &[u32],
        evk_a: &[u8],
        evk_b: &[u8],
        x: &[u8],
        y: &[u8],
    ) -> BindResult<Self> {
        let ctx = RnsContext::new(ring_dim, moduli).map_err(evalmult_error)?;
        let towers = ctx.towers();
        let poly = ctx.poly_len();
        let a = split(
            &words::from_le_bytes(evk_a, "evk_a")?,
            towers,
            poly,
            "evk_a",
        )?;
        let b = split(
            &words::from_le_bytes(evk_b, "evk_b")?,
            towers,
            poly,
            "evk_b",
        )?;
        let key = RelinKey {
            ring_dim,
            moduli: moduli.to_vec(),
            a,
            b,
        };
        key.check(&ctx).map_err(evalmult_error)?;
        let x = words::from_le_bytes(x, "x")?;
        let y = words::from_le_bytes(y, "y")?;
        let ct_len = 2 * poly;
        if x.is_empty() || !x.len().is_multiple_of(ct_len) || y.len() != x.len() {
            return Err(BindError::Input(format!(
                "x and y must each hold batch × 2 × {towers} × {ring_dim} residues (got {} and {})",
                x.len(),
                y.len()
            )));
        }
        let ciphertexts = |words: &[u32]| -> Vec<Ciphertext> {
            words
                .chunks_exact(ct_len)
                .map(|c| Ciphertext {
                    c0: c[..poly].to_vec(),
                    c1: c[poly..].to_vec(),
                })
                .collect()
        };
        let pairs: Vec<_> = ciphertexts(&x).into_iter().zip(ciphertexts(&y)).collect();
        for (k, (cx, cy)) in pairs.iter().enumerate() {
            for (ct, factor) in [
                (cx, zeppelin_evalmult::Factor::X),
                (cy, zeppelin_evalmult::Factor::Y),
            ] {
                ct.check(
                    &ctx,
                    zeppelin_evalmult::CiphertextId::Pair { pair: k, factor },
                )
                .map_err(evalmult_error)?;
            }
        }
        Ok(Self { ctx, key, pairs })
    }
}

/// The native client (`zeppelin.EvalmultClient` wraps it).
#[pyclass(module = "zeppelin._native", frozen)]
pub struct EvalmultClient {
    client: Mutex<Client>,
}

#[pymethods]
impl EvalmultClient {
    #[new]
    #[pyo3(signature = (address, timeout=None))]
    fn py_new(py: Python<'_>, address: &str, timeout: Option<f64>) -> PyResult<Self> {
        let timeout = timeout
            .map(|t| {
                Duration::try_from_secs_f64(t)
                    .map_err(|e| BindError::Input(format!("timeout {t}: {e}")))
            })
            .transpose()?;
        let client = py.detach(|| {
            let mut client = Client::connect(address)
                .map_err(|e| BindError::Evalmult(format!("cannot connect to {address}: {e}")))?;
            client.set_timeout(timeout).map_err(evalmult_error)?;
            Ok::<_, BindError>(client)
        })?;
        Ok(Self {
            client: Mutex::new(client),
        })
    }

    /// Returns `(results, seconds)`: the relinearized products as LE `u32` bytes
    /// (`batch × 2 × towers × n`) and the session's wall time.
    #[allow(clippy::too_many_arguments)]
    fn eval_mult<'py>(
        &self,
        py: Python<'py>,
        ring_dim: usize,
        moduli: Vec<u32>,
        evk_a: &[u8],
        evk_b: &[u8],
        x: &[u8],
        y: &[u8],
    ) -> PyResult<(Bound<'py, PyBytes>, f64)> {
        let (out, seconds) = py.detach(|| {
            let session = Session::new(ring_dim, &moduli, evk_a, evk_b, x, y)?;
            let mut client = self.client.lock().map_err(|_| {
                BindError::Evalmult("the connection was poisoned by an earlier failure".into())
            })?;
            let start = Instant::now();
            let results = client
                .eval_mult(&session.ctx, &session.key, &session.pairs, None)
                .map_err(evalmult_error)?;
            let seconds = start.elapsed().as_secs_f64();
            let mut out = Vec::with_capacity(results.len() * 2 * session.ctx.poly_len() * 4);
            for ct in &results {
                out.extend(words::to_le_bytes(&ct.c0));
                out.extend(words::to_le_bytes(&ct.c1));
            }
            Ok::<_, BindError>((out, seconds))
        })?;
        Ok((PyBytes::new(py, &out), seconds))
    }
}

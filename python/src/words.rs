//! Arrays across the boundary: the Python layer (`zeppelin/__init__.py`) hands NumPy arrays
//! over as little-endian `u32` bytes and turns the bytes returned into arrays, so the
//! extension needs no NumPy C API (and stays on the stable ABI).

use crate::error::{BindError, BindResult};

/// The `u32` words of `bytes` (little-endian); `what` names the array in the error.
pub fn from_le_bytes(bytes: &[u8], what: &str) -> BindResult<Vec<u32>> {
    if !bytes.len().is_multiple_of(4) {
        return Err(BindError::Input(format!(
            "{what}: {} bytes is not a whole number of 32-bit words",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// `words` as little-endian bytes.
pub fn to_le_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

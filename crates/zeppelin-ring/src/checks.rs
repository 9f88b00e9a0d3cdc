//! Validation of public input: residues that must already be reduced (ciphertext and
//! public-key rows from outside). Its branches and early exits depend on the data checked,
//! which is public; secret data never comes through here.

/// The index of the first residue at or above `q` (`None`: all are reduced). For `q <= 2^31`
/// the whole slice is scanned branch-free first, an OR of sign bits (`(q − 1 − v) | v` has
/// its top bit set exactly when `v >= q`), which vectorises with baseline SSE2 (an
/// early-exit search does not); the position is looked for only when there is one.
///
/// ```
/// use zeppelin_ring::checks::first_unreduced;
/// assert_eq!(first_unreduced(&[1, 2, 3], 4), None);
/// assert_eq!(first_unreduced(&[1, 7, 4, 9], 4), Some(1));
/// assert_eq!(first_unreduced(&[u32::MAX], 1 << 31), Some(0));
/// ```
pub fn first_unreduced(residues: &[u32], q: u32) -> Option<usize> {
    if q <= 1 << 31 {
        let flags = residues.iter().fold(0u32, |acc, &v| {
            acc | (q.wrapping_sub(1).wrapping_sub(v) | v)
        });
        if flags >> 31 == 0 {
            return None;
        }
    }
    residues.iter().position(|&v| v >= q)
}

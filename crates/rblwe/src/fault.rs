//! Simulated single-point logical faults, for the fault-injection tests.
//!
//! With the `fault-sim` feature, tests select one [`Fault`] at a time and the hardened code
//! paths apply it (zeroing an accumulator, forcing a mask, skipping a store, zeroing a key),
//! like the paper's debugger-driven campaign. Without the feature (the default, and every
//! firmware build) the internal `hit` check is a constant `false` and the hooks compile away.

/// Whether the simulated fault hooks are compiled into this build of the crate (`fault-sim`).
/// False in production and in every test except `tests/fault_campaign.rs`; the KAT test
/// asserts it, so the known answers are checked against production code.
pub const HOOKS_COMPILED: bool = cfg!(feature = "fault-sim");

/// The simulated fault points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Fault {
    /// No fault.
    None = 0,
    /// CCA2 decryption: the forward comparison accumulator reads zero ("equal").
    ZeroForwardAccumulator = 1,
    /// CCA2 decryption: the reverse comparison accumulator reads zero.
    ZeroReverseAccumulator = 2,
    /// CCA2 decryption: the forward selection mask is forced to all-ones ("valid").
    ForceForwardMask = 3,
    /// CCA2 decryption: the reverse selection mask is forced to all-ones.
    ForceReverseMask = 4,
    /// CCA2 decryption: the store of output byte 0 in the selection loop is skipped.
    SkipOutputStore = 5,
    /// Key generation: the freshly sampled secret `r2` is zeroed.
    ZeroSecretAtKeygen = 6,
    /// CPA decryption: the secret key reads as all zeros.
    ZeroSecretAtDecrypt = 7,
    /// CPA decryption: one decoded output byte is corrupted after the decoder's store.
    CorruptDecodedByte = 8,
    /// CCA2 decryption: the rejection value `R(z, H(C))` comes out wrong (as from a wrong
    /// pointer to C or z, or C changed by a stray store).
    CorruptRejectionValue = 9,
    /// CCA2 decryption: every use of the ciphertext reads other bytes (as from a bit flipped
    /// in the `ct` pointer register before any copy of it exists).
    RedirectCiphertext = 10,
    /// CCA2 decryption: every use of the output buffer goes to other memory (as from a bit
    /// flipped in the `out` pointer register before any copy of it exists).
    RedirectOutput = 11,
    /// CCA2 decryption: every use of the secret key reads another `z` (as from a bit flipped
    /// in the `sk` pointer register before any copy of it exists).
    RedirectSecretKey = 12,
}

#[cfg(feature = "fault-sim")]
static ACTIVE: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);

/// Selects the fault applied from now on (`Fault::None` to stop). Process-wide: tests that
/// use it must not run concurrently with other decryptions in the same process.
#[cfg(feature = "fault-sim")]
pub fn inject(fault: Fault) {
    ACTIVE.store(fault as u32, core::sync::atomic::Ordering::SeqCst);
}

/// Whether `fault` is currently injected.
#[inline(always)]
pub(crate) fn hit(fault: Fault) -> bool {
    #[cfg(feature = "fault-sim")]
    {
        ACTIVE.load(core::sync::atomic::Ordering::SeqCst) == fault as u32
    }
    #[cfg(not(feature = "fault-sim"))]
    {
        let _ = fault;
        false
    }
}

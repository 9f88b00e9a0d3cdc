//! Compile-time selection of countermeasures, so each one's cost can be measured alone.

/// Which countermeasures an operation applies. Implemented by [`Config`]; the constants are
/// known at compile time, so disabled paths are compiled out.
pub trait Countermeasures {
    /// Constant-time arithmetic: multiplication by a binary polynomial accumulates a masked
    /// operand for every coefficient instead of skipping zero coefficients.
    const CONSTANT_TIME: bool;
    /// Fault hardening: structural key validation, key erasure on failure, loop-completion
    /// counters, forward and reverse ciphertext comparison with two independent masks, and
    /// a duplicated, cross-checked output store.
    const FAULT_HARDENING: bool;
}

/// A countermeasure configuration: `Config<CONSTANT_TIME, FAULT_HARDENING>`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Config<const CONSTANT_TIME: bool, const FAULT_HARDENING: bool>;

impl<const CT: bool, const FH: bool> Countermeasures for Config<CT, FH> {
    const CONSTANT_TIME: bool = CT;
    const FAULT_HARDENING: bool = FH;
}

/// The paper's accelerated "branchy" baseline: skips zero coefficients (leaks the Hamming
/// weight and positions of the binary operand through timing). For measurement only.
pub type Branchy = Config<false, false>;
/// Branch-free (constant-time) arithmetic without fault hardening.
pub type ConstantTime = Config<true, false>;
/// Constant-time arithmetic with fault hardening: the recommended configuration.
pub type Hardened = Config<true, true>;

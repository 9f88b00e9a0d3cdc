//! The device presets on the command line: the one place that maps a preset name to its type
//! ([`presets!`]: names come from `Params::NAME`), and the degree / plaintext modulus helpers.

use clap::builder::PossibleValue;
use clap::ValueEnum;
use zeppelin::Params;
use zeppelin_seal::device::SealPreset;

/// The default preset's name (`zeppelin::DefaultParams`).
pub const DEFAULT_PRESET: &str = <zeppelin::DefaultParams as Params>::NAME;

/// The slot values of a device preset (`n` of them, each below `t`).
pub type Slots = Vec<u32>;

/// All-zero slots of preset `P`.
pub fn zero_slots<P: Params>() -> Slots {
    vec![0; P::N]
}

/// Something to run with a preset's type: [`PresetId::run`] calls `call::<P>()`.
pub trait PresetFn {
    /// What the call returns.
    type Output;
    /// Runs with preset `P`.
    fn call<P: SealPreset>(self) -> Self::Output;
}

macro_rules! presets {
    ($($variant:ident => $preset:ty),+ $(,)?) => {
        /// A device preset, named on the command line and in `D/preset` by `Params::NAME`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum PresetId {
            $(
                #[doc = concat!("`", stringify!($preset), "`.")]
                $variant,
            )+
        }

        impl PresetId {
            /// Every preset, in the order of the help text.
            pub const ALL: &'static [PresetId] = &[$(PresetId::$variant),+];

            /// The preset's name (`Params::NAME`).
            pub fn name(self) -> &'static str {
                match self {
                    $(PresetId::$variant => <$preset as Params>::NAME,)+
                }
            }

            /// Runs `f` with the preset's type.
            pub fn run<F: PresetFn>(self, f: F) -> F::Output {
                match self {
                    $(PresetId::$variant => f.call::<$preset>(),)+
                }
            }
        }
    };
}

// Adding a preset is one line here (and `impl SealPreset` in zeppelin-seal).
presets! {
    Seal4096 => zeppelin::Seal4096,
    Zeppelin4096 => zeppelin::Zeppelin4096,
    Seal8192 => zeppelin::Seal8192,
}

impl PresetId {
    /// The preset named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|p| p.name() == name)
    }

    /// One line for the help text: degree, plaintext modulus and primes.
    fn describe(self) -> String {
        struct Describe;
        impl PresetFn for Describe {
            type Output = String;
            fn call<P: SealPreset>(self) -> String {
                let primes: Vec<String> = P::DATA_PRIMES.iter().map(u32::to_string).collect();
                let special = match P::SPECIAL_PRIME {
                    Some(q) => format!(", special prime {q}"),
                    None => String::from(", no special prime (switched to SEAL's level by adapt)"),
                };
                format!(
                    "n = {}, t = {}, data primes {}{special}",
                    P::N,
                    P::T,
                    primes.join(", ")
                )
            }
        }
        self.run(Describe)
    }
}

impl ValueEnum for PresetId {
    fn value_variants<'a>() -> &'a [Self] {
        Self::ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()).help(self.describe()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_presets_own_and_map_back() {
        assert_eq!(PresetId::Seal4096.name(), zeppelin::Seal4096::NAME);
        assert_eq!(PresetId::Zeppelin4096.name(), zeppelin::Zeppelin4096::NAME);
        for &p in PresetId::ALL {
            assert_eq!(PresetId::from_name(p.name()), Some(p));
            let value = p.to_possible_value().unwrap();
            assert_eq!(value.get_name(), p.name());
        }
        assert_eq!(PresetId::from_name("seal8192x"), None);
        assert_eq!(
            PresetId::from_name(DEFAULT_PRESET),
            Some(PresetId::Seal4096)
        );
    }
}

//! `zeppelin keys --dir D [--relin] [--galois [--steps S1,S2,...]] [--seeded]`: SEAL
//! key-switching keys from `D/secret.seal`, on the trusted side.

use std::path::PathBuf;

use clap::Args;
use rand_core::OsRng;
use zeppelin_seal::keygen::{all_galois_elements, galois_element_for_step, KeyGenerator};
use zeppelin_seal::ComprMode;

use crate::error::{CliError, CliResult, Operation};
use crate::keydir::{write, KeyDir, GALOIS, RELIN};

/// Arguments of `zeppelin keys`.
#[derive(Args)]
pub struct KeysArgs {
    /// Key directory (reads params.seal and secret.seal).
    #[arg(long)]
    pub dir: PathBuf,
    /// Write DIR/relin.seal.
    #[arg(long)]
    pub relin: bool,
    /// Write DIR/galois.seal (all of SEAL's default elements unless --steps is given).
    #[arg(long)]
    pub galois: bool,
    /// Row-rotation steps for the Galois keys (0 means the column swap), e.g. `1,-1,0`.
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    pub steps: Option<Vec<i64>>,
    /// Write SEAL's seeded form (each key's c1 as its Blake2xb seed): about half the size.
    #[arg(long)]
    pub seeded: bool,
}

/// Runs `zeppelin keys` (for any SEAL parameters in `D/params.seal`).
pub fn run(a: &KeysArgs) -> CliResult<()> {
    if !a.relin && !a.galois {
        return Err(CliError::NothingToDo);
    }
    if a.steps.is_some() && !a.galois {
        return Err(CliError::StepsWithoutGalois);
    }
    let keys = KeyDir::new(&a.dir);
    let ctx = keys.seal_context()?;
    let sk = keys.seal_secret_key(&ctx)?;
    let generator =
        KeyGenerator::new(&ctx, &sk).map_err(CliError::seal(Operation::KeyGeneration))?;
    if a.relin {
        let rk = generator.relin_keys(&mut OsRng);
        let bytes = rk.and_then(|rk| {
            if a.seeded {
                rk.save_seeded(ComprMode::None)
            } else {
                rk.save(ComprMode::None)
            }
        });
        write(
            &keys.path(RELIN),
            &bytes.map_err(CliError::seal(Operation::RelinKeys))?,
        )?;
    }
    if a.galois {
        let elts = match &a.steps {
            None => all_galois_elements(ctx.n()),
            Some(steps) => steps
                .iter()
                .map(|&s| galois_element_for_step(ctx.n(), s))
                .collect::<Result<Vec<_>, _>>()
                .map_err(CliError::seal(Operation::Steps))?,
        };
        let bytes = generator.galois_keys(&elts, &mut OsRng).and_then(|gk| {
            if a.seeded {
                gk.save_seeded(ComprMode::None)
            } else {
                gk.save(ComprMode::None)
            }
        });
        write(
            &keys.path(GALOIS),
            &bytes.map_err(CliError::seal(Operation::GaloisKeys))?,
        )?;
    }
    Ok(())
}

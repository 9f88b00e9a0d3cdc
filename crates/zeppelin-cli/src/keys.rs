//! `zeppelin keys --dir D [--relin] [--galois [--steps S1,S2,...]] [--seeded] [--force]`:
//! SEAL key-switching keys from `D/secret.seal`, on the trusted side.
//!
//! Every check (flags, `--steps`, existing files, `D/params.seal` against the preset, the
//! secret key) runs before anything is written; the new files are then written into a staged
//! copy of `D` (its other files hard-linked in) that is swapped in whole.

use std::path::PathBuf;

use clap::Args;
use rand_core::OsRng;
use zeppelin_seal::device::SealPreset;
use zeppelin_seal::keygen::{all_galois_elements, galois_element_for_step, KeyGenerator};
use zeppelin_seal::ComprMode;

use crate::error::{CliError, CliResult, IoAction, Operation};
use crate::keydir::{KeyDir, GALOIS, RELIN};
use crate::output::{check_file_destination, OutputError, Secrecy, StagedDir};
use crate::preset::PresetFn;

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
    /// Replace an existing DIR/relin.seal or DIR/galois.seal.
    #[arg(long)]
    pub force: bool,
}

/// Runs `zeppelin keys` with the key directory's preset.
pub fn run(a: &KeysArgs) -> CliResult<()> {
    if !a.relin && !a.galois {
        return Err(CliError::NothingToDo);
    }
    if a.steps.is_some() && !a.galois {
        return Err(CliError::StepsWithoutGalois);
    }
    struct Keys<'a>(&'a KeysArgs);
    impl PresetFn for Keys<'_> {
        type Output = CliResult<()>;
        fn call<P: SealPreset>(self) -> CliResult<()> {
            keys::<P>(self.0)
        }
    }
    KeyDir::new(&a.dir).preset()?.run(Keys(a))
}

fn keys<P: SealPreset>(a: &KeysArgs) -> CliResult<()> {
    let keys = KeyDir::new(&a.dir);
    let elts = match &a.steps {
        None => all_galois_elements(P::N),
        Some(steps) => steps
            .iter()
            .map(|&s| galois_element_for_step(P::N, s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(CliError::seal(Operation::Steps))?,
    };
    let mut outputs = Vec::new();
    if a.relin {
        outputs.push(RELIN);
    }
    if a.galois {
        outputs.push(GALOIS);
    }
    for name in &outputs {
        let path = keys.path(name);
        if check_file_destination(&path)? && !a.force {
            return Err(OutputError::Exists { path }.into());
        }
    }
    let ctx = keys.device_context::<P>()?;
    let sk = keys.seal_secret_key(&ctx)?;
    let generator =
        KeyGenerator::new(ctx.seal(), &sk).map_err(CliError::seal(Operation::KeyGeneration))?;
    let mut written = Vec::new();
    if a.relin {
        let bytes = generator.relin_keys(&mut OsRng).and_then(|rk| {
            if a.seeded {
                rk.save_seeded(ComprMode::None)
            } else {
                rk.save(ComprMode::None)
            }
        });
        written.push((RELIN, bytes.map_err(CliError::seal(Operation::RelinKeys))?));
    }
    if a.galois {
        let bytes = generator.galois_keys(&elts, &mut OsRng).and_then(|gk| {
            if a.seeded {
                gk.save_seeded(ComprMode::None)
            } else {
                gk.save(ComprMode::None)
            }
        });
        written.push((
            GALOIS,
            bytes.map_err(CliError::seal(Operation::GaloisKeys))?,
        ));
    }

    // A staged copy of D: its other files carried over as hard links, the new ones written.
    let staged = StagedDir::create(&a.dir, true)?;
    let entries = std::fs::read_dir(&a.dir).map_err(|source| CliError::Io {
        action: IoAction::Read,
        path: a.dir.clone(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| CliError::Io {
            action: IoAction::Read,
            path: a.dir.clone(),
            source,
        })?;
        let name = entry.file_name();
        if !outputs
            .iter()
            .any(|o| name.as_os_str() == std::ffi::OsStr::new(o))
        {
            staged.keep(&name)?;
        }
    }
    for (name, bytes) in &written {
        staged.write(name, bytes, Secrecy::Public)?;
    }
    staged.commit()?;
    Ok(())
}

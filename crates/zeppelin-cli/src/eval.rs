//! `zeppelin eval --dir D --op OP [--steps K] --in a.seal [--in2 b.seal] --out c.seal
//! [--compress none|zlib|zstd]`: one SEAL `Evaluator` operation of `zeppelin_server` on SEAL
//! ciphertext files, with the public keys of the key directory (`D/params.seal`,
//! `D/relin.seal`, `D/galois.seal`; no secret is read).
//!
//! Every argument check (which operands and `--steps` the operation takes, the destination)
//! runs before a key or ciphertext is read; the result goes through the atomic writer.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Args, ValueEnum};
use zeppelin_seal::device::SealPreset;
use zeppelin_seal::{Ciphertext, SealContext};
use zeppelin_server::Evaluator;

use crate::adapt::Compression;
use crate::error::{CliError, CliResult, Operation};
use crate::input::read_seal;
use crate::keydir::{ciphertext_cap, KeyDir};
use crate::output::{check_file_destination, write_file, Secrecy};
use crate::preset::PresetFn;

/// The operation `zeppelin eval` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EvalOp {
    /// `--in + --in2`.
    Add,
    /// `--in - --in2`.
    Sub,
    /// `--in * --in2` (a size-3 product, not relinearized).
    Mul,
    /// Relinearize a size-3 ciphertext with D/relin.seal.
    Relin,
    /// Rotate both rows by `--steps` slots (D/galois.seal).
    RotateRows,
    /// Swap the two rows (D/galois.seal).
    RotateColumns,
    /// Drop the last prime of the ciphertext's level.
    ModSwitch,
}

impl EvalOp {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            EvalOp::Add => "add",
            EvalOp::Sub => "sub",
            EvalOp::Mul => "mul",
            EvalOp::Relin => "relin",
            EvalOp::RotateRows => "rotate-rows",
            EvalOp::RotateColumns => "rotate-columns",
            EvalOp::ModSwitch => "mod-switch",
        }
    }

    /// Whether the operation takes a second ciphertext.
    fn binary(self) -> bool {
        matches!(self, EvalOp::Add | EvalOp::Sub | EvalOp::Mul)
    }
}

/// Arguments of `zeppelin eval`.
#[derive(Args)]
pub struct EvalArgs {
    /// Key directory (reads preset, params.seal, and relin.seal or galois.seal when the
    /// operation needs them).
    #[arg(long)]
    pub dir: PathBuf,
    /// The operation.
    #[arg(long, value_enum)]
    pub op: EvalOp,
    /// Row-rotation steps for rotate-rows (negative: to the right).
    #[arg(long, allow_hyphen_values = true)]
    pub steps: Option<i32>,
    /// The (first) SEAL Ciphertext, any compression.
    #[arg(long = "in")]
    pub input: PathBuf,
    /// The second SEAL Ciphertext (add, sub, mul).
    #[arg(long = "in2")]
    pub input2: Option<PathBuf>,
    /// The result, a SEAL Ciphertext.
    #[arg(long = "out")]
    pub output: PathBuf,
    /// Compression of the result.
    #[arg(long, value_enum, default_value = "none")]
    pub compress: Compression,
}

/// Runs `zeppelin eval` with the key directory's preset.
pub fn run(a: &EvalArgs) -> CliResult<()> {
    check_arguments(a)?;
    struct Eval<'a>(&'a EvalArgs);
    impl PresetFn for Eval<'_> {
        type Output = CliResult<()>;
        fn call<P: SealPreset>(self) -> CliResult<()> {
            eval::<P>(self.0)
        }
    }
    KeyDir::new(&a.dir).preset()?.run(Eval(a))
}

/// Refuses operand and `--steps` combinations the operation does not take.
fn check_arguments(a: &EvalArgs) -> CliResult<()> {
    let op = a.op.name();
    match (a.op.binary(), &a.input2) {
        (true, None) => return Err(CliError::MissingSecondInput { op }),
        (false, Some(_)) => return Err(CliError::UnexpectedSecondInput { op }),
        _ => {}
    }
    match (a.op == EvalOp::RotateRows, a.steps) {
        (true, None) => Err(CliError::MissingSteps),
        (false, Some(_)) => Err(CliError::UnexpectedSteps { op }),
        _ => Ok(()),
    }
}

fn eval<P: SealPreset>(a: &EvalArgs) -> CliResult<()> {
    check_file_destination(&a.output)?;
    let keys = KeyDir::new(&a.dir);
    let params_path = keys.path(crate::keydir::PARAMS);
    let ctx = Arc::new(
        SealContext::new(keys.parameters::<P>()?).map_err(CliError::seal_file(&params_path))?,
    );
    let load = |path: &Path| -> CliResult<Ciphertext> {
        let bytes = read_seal(path, "SEAL Ciphertext", ciphertext_cap::<P>())?;
        Ciphertext::load(&ctx, &bytes).map_err(CliError::seal_file(path))
    };
    let x = load(&a.input)?;
    let y = a.input2.as_deref().map(load).transpose()?;
    let evaluator = Evaluator::new(ctx.clone()).map_err(eval_err(a.op))?;
    let result = apply::<P>(&evaluator, &keys, a, &x, y.as_ref())?;
    let bytes = result
        .save(a.compress.into())
        .map_err(CliError::seal(Operation::SealCiphertext))?;
    write_file(&a.output, &bytes, Secrecy::Public)?;
    Ok(())
}

/// Runs the operation (the operands were checked by [`check_arguments`]); the key files are
/// read only by the operations that use them.
fn apply<P: SealPreset>(
    evaluator: &Evaluator,
    keys: &KeyDir<'_>,
    a: &EvalArgs,
    x: &Ciphertext,
    y: Option<&Ciphertext>,
) -> CliResult<Ciphertext> {
    let op = a.op.name();
    let second = || y.ok_or(CliError::MissingSecondInput { op });
    let ctx = evaluator.context();
    let result = match a.op {
        EvalOp::Add => evaluator.add(x, second()?),
        EvalOp::Sub => evaluator.sub(x, second()?),
        EvalOp::Mul => evaluator.multiply(x, second()?),
        EvalOp::Relin => evaluator.relinearize(x, &keys.relin_keys::<P>(ctx)?),
        EvalOp::RotateRows => {
            let steps = a.steps.ok_or(CliError::MissingSteps)?;
            evaluator.rotate_rows(x, steps, &keys.galois_keys::<P>(ctx)?)
        }
        EvalOp::RotateColumns => evaluator.rotate_columns(x, &keys.galois_keys::<P>(ctx)?),
        EvalOp::ModSwitch => evaluator.mod_switch_to_next(x),
    };
    result.map_err(eval_err(a.op))
}

fn eval_err(op: EvalOp) -> impl FnOnce(zeppelin_server::EvalError) -> CliError {
    move |source| CliError::Eval {
        op: op.name(),
        source,
    }
}

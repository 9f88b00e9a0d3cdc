//! `zeppelin adapt --dir D --in ct.bin --out ct.seal [--compress none|zlib|zstd]`: a device
//! ciphertext (either wire form) as a SEAL `Ciphertext` under `D/params.seal`.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use zeppelin_seal::device::{self, DeviceContext, SealPreset};
use zeppelin_seal::ComprMode;

use crate::error::{CliError, CliResult, Operation};
use crate::input::read_seal;
use crate::keydir::{ciphertext_cap, KeyDir};
use crate::output::{check_file_destination, write_file, Secrecy};
use crate::preset::PresetFn;

/// SEAL's compression of the output.
#[derive(Clone, Copy, ValueEnum)]
pub enum Compression {
    /// Stored as is (what seal-python 4.4.0 reads).
    None,
    /// zlib.
    Zlib,
    /// zstd.
    Zstd,
}

impl From<Compression> for ComprMode {
    fn from(c: Compression) -> Self {
        match c {
            Compression::None => ComprMode::None,
            Compression::Zlib => ComprMode::Zlib,
            Compression::Zstd => ComprMode::Zstd,
        }
    }
}

/// Arguments of `zeppelin adapt`.
#[derive(Args)]
pub struct AdaptArgs {
    /// Key directory (for the preset and DIR/params.seal).
    #[arg(long)]
    pub dir: PathBuf,
    /// Device ciphertext (seeded or full wire form).
    #[arg(long = "in")]
    pub input: PathBuf,
    /// SEAL Ciphertext to write.
    #[arg(long = "out")]
    pub output: PathBuf,
    /// Compression of the SEAL Ciphertext.
    #[arg(long, value_enum, default_value = "none")]
    pub compress: Compression,
}

/// Runs `zeppelin adapt` with the key directory's preset.
pub fn run(a: &AdaptArgs) -> CliResult<()> {
    struct Adapt<'a>(&'a AdaptArgs);
    impl PresetFn for Adapt<'_> {
        type Output = CliResult<()>;
        fn call<P: SealPreset>(self) -> CliResult<()> {
            let a = self.0;
            check_file_destination(&a.output)?;
            let ctx = KeyDir::new(&a.dir).device_context::<P>()?;
            let input = read_seal(&a.input, "ciphertext", ciphertext_cap::<P>())?;
            let out = adapt_bytes(&ctx, &input, &a.input, a.compress.into())?;
            write_file(&a.output, &out, Secrecy::Public)?;
            Ok(())
        }
    }
    KeyDir::new(&a.dir).preset()?.run(Adapt(a))
}

/// The SEAL `Ciphertext` bytes of the device wire form `bytes` (read from `source`): the seed
/// expanded, a four-prime ciphertext switched down to SEAL's first data level.
pub fn adapt_bytes<P: SealPreset>(
    ctx: &DeviceContext<P>,
    bytes: &[u8],
    source: &Path,
    compression: ComprMode,
) -> CliResult<Vec<u8>> {
    let ct = device::read_any(ctx, bytes).map_err(CliError::seal_file(source))?;
    if !ct.is_device_form() {
        return Err(CliError::NotDeviceForm {
            path: source.to_path_buf(),
        });
    }
    ct.to_seal(ctx)
        .map_err(CliError::seal(Operation::Adapting))?
        .save(compression)
        .map_err(CliError::seal(Operation::SealCiphertext))
}

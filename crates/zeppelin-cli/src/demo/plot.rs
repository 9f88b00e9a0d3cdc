//! `demo --plot FILE.png`: the decrypted against the true mean per slot, one panel per
//! quantity, drawn with plotters into memory, encoded as PNG and written by the atomic writer.
//!
//! plotters draws text through `ab_glyph` from a TrueType file read at run time (no
//! fontconfig or freetype at build time): `$ZEPPELIN_PLOT_FONT`, else DejaVu Sans where
//! Debian's `fonts-dejavu-core` (and other distributions) put it.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use zeppelin::Params;

use super::readings::{hour_of, QUANTITIES};
use super::stats::SlotStats;
pub use crate::demo_error::PlotError;
use crate::output::{write_file, Secrecy};

/// Where a sans-serif TrueType font is looked for when `$ZEPPELIN_PLOT_FONT` is not set.
const FONT_PATHS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
];
/// The environment variable naming the font file.
const FONT_ENV: &str = "ZEPPELIN_PLOT_FONT";
/// Cap of the font file.
const FONT_CAP: u64 = 32 << 20;
/// The family name the font is registered under.
const FAMILY: &str = "sans-serif";
const WIDTH: u32 = 1600;
const HEIGHT: u32 = 800;

static FONT: OnceLock<Result<(), String>> = OnceLock::new();

/// Finds, reads and registers the font (once per process).
pub fn load_font() -> Result<(), PlotError> {
    let outcome = FONT.get_or_init(|| {
        let candidates: Vec<PathBuf> = match std::env::var_os(FONT_ENV) {
            Some(p) => vec![PathBuf::from(p)],
            None => FONT_PATHS.iter().map(PathBuf::from).collect(),
        };
        let Some(path) = candidates.iter().find(|p| p.is_file()) else {
            return Err(candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "));
        };
        let bytes = match std::fs::metadata(path) {
            Ok(m) if m.len() <= FONT_CAP => std::fs::read(path).ok(),
            _ => None,
        };
        // plotters keeps registered fonts for the process's life: leaked once.
        let registered = bytes
            .map(|b| &*Box::leak(b.into_boxed_slice()))
            .map(|b| register_font(FAMILY, FontStyle::Normal, b).is_ok());
        match registered {
            Some(true) => Ok(()),
            _ => Err(format!("\u{0}{}", path.display())),
        }
    });
    match outcome {
        Ok(()) => Ok(()),
        Err(text) => match text.strip_prefix('\u{0}') {
            Some(path) => Err(PlotError::BadFont {
                path: PathBuf::from(path),
            }),
            None => Err(PlotError::NoFont {
                tried: text.clone(),
            }),
        },
    }
}

/// Draws the means of `stats` (rows of `row` slots, one per quantity) and writes the PNG.
pub fn write<P: Params>(path: &Path, stats: &[SlotStats], row: usize) -> Result<(), PlotError> {
    load_font()?;
    let mut pixels = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    draw(&mut pixels, stats, row, P::NAME).map_err(|e| PlotError::Draw(e.to_string()))?;
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png).write_image(
        &pixels,
        WIDTH,
        HEIGHT,
        image::ColorType::Rgb8,
    )?;
    write_file(path, &png, Secrecy::Public)?;
    Ok(())
}

use image::ImageEncoder;

fn draw(
    pixels: &mut [u8],
    stats: &[SlotStats],
    row: usize,
    preset: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let root = BitMapBackend::with_buffer(pixels, (WIDTH, HEIGHT)).into_drawing_area();
    root.fill(&WHITE)?;
    // One row of panels per quantity: the means, and the error against its bound.
    let panels = root.split_evenly((QUANTITIES.len(), 2));
    for (quantity, q) in QUANTITIES.iter().enumerate() {
        let slots = &stats[quantity * row..(quantity + 1) * row];
        let points = |f: &dyn Fn(&SlotStats) -> f64| -> Vec<(f64, f64)> {
            slots
                .iter()
                .enumerate()
                .map(|(j, s)| (hour_of(j, row), f(s)))
                .collect()
        };
        let (lo, hi) = slots.iter().fold((f64::MAX, f64::MIN), |(lo, hi), s| {
            (
                lo.min(s.true_mean).min(s.mean),
                hi.max(s.true_mean).max(s.mean),
            )
        });
        let pad = 0.05 * (hi - lo).max(1e-6);
        let mut chart = ChartBuilder::on(&panels[2 * quantity])
            .caption(
                format!("{} ({}): mean per slot ({preset})", q.name, q.unit),
                (FAMILY, 18),
            )
            .margin(10)
            .x_label_area_size(32)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..24.0, (lo - pad)..(hi + pad))?;
        chart
            .configure_mesh()
            .x_desc("hour of the day")
            .y_desc(q.unit)
            .label_style((FAMILY, 13))
            .draw()?;
        chart
            .draw_series(LineSeries::new(
                points(&|s| s.true_mean),
                BLUE.stroke_width(3),
            ))?
            .label("plaintext truth")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLUE.stroke_width(3)));
        chart
            .draw_series(LineSeries::new(points(&|s| s.mean), RED.stroke_width(1)))?
            .label("decrypted")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], RED));
        // The legend where the curve is not: it starts in the lower or the upper half.
        let starts_low = slots.first().is_some_and(|s| s.true_mean < (lo + hi) / 2.0);
        chart
            .configure_series_labels()
            .position(if starts_low {
                SeriesLabelPosition::UpperLeft
            } else {
                SeriesLabelPosition::LowerLeft
            })
            .label_font((FAMILY, 13))
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()?;

        let bound = slots.first().map_or(1.0, |s| s.mean_bound);
        let mut chart = ChartBuilder::on(&panels[2 * quantity + 1])
            .caption(
                format!("decrypted − true mean ({}), bound ±{bound}", q.unit),
                (FAMILY, 18),
            )
            .margin(10)
            .x_label_area_size(32)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..24.0, (-1.2 * bound)..(1.2 * bound))?;
        chart
            .configure_mesh()
            .x_desc("hour of the day")
            .y_desc(q.unit)
            .label_style((FAMILY, 13))
            .draw()?;
        chart.draw_series(LineSeries::new(
            points(&|s| s.mean - s.true_mean),
            RED.stroke_width(1),
        ))?;
        for edge in [-bound, bound] {
            chart.draw_series(LineSeries::new(
                vec![(0.0, edge), (24.0, edge)],
                BLACK.stroke_width(2),
            ))?;
        }
    }
    root.present()?;
    Ok(())
}

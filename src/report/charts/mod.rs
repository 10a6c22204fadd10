//! Charts for reports, rendered with `plotters` to SVG text or PNG bytes.
//!
//! The caller fills one [`Chart`] value with plain numbers and labels and
//! asks for [`render_svg`] or [`render_png`]. Rendering needs no system
//! fonts: DejaVu Sans is embedded in the binary (see
//! `assets/fonts/LICENSE-DejaVu.txt`) and registered with plotters' `ab_glyph`
//! text support the first time a chart is drawn. Both renderers are
//! deterministic: the same chart and size always give the same bytes (the PNG
//! encoder writes no time or text chunks).
//!
//! Layout rules that hold for every chart kind:
//! - the title sits at the top and is shortened with `…` when it is too wide;
//! - legends go below the plot, in as many columns as fit, and labels that do
//!   not fit are shortened in the middle with `…`;
//! - text coming from traces or configs is stripped of control characters and
//!   XML-escaped in SVG output;
//! - empty or unusable input draws an explanatory "no data" chart instead of
//!   failing;
//! - every number a chart prints is formatted by [`crate::report::fmt`], so
//!   it reads the same as in the tables and summaries.
//!
//! Files:
//! - `mod.rs`: the public API ([`Chart`], [`CallTokens`], [`render_svg`],
//!   [`render_png`], [`ChartError`]) and the dispatch to the chart kinds;
//! - `layout.rs`: what the kinds share: font, sizes, colours, label fitting,
//!   title frame, "no data" chart, axis helpers, legend;
//! - `stacked.rs`, `cumulative.rs`, `heatmap.rs`, `savings.rs`: one chart
//!   kind each, holding only what that kind draws;
//! - `png.rs`: the PNG encoder (row filters, deflate, Adler-32, CRC-32).

mod cumulative;
mod heatmap;
mod layout;
mod png;
mod savings;
mod stacked;

use plotters::backend::{BitMapBackend, SVGBackend};
use plotters::prelude::*;

use layout::{Area, Res, draw_err, ensure_font};

/// Input tokens of one call split by billing class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallTokens {
    /// Input tokens billed at the plain (uncached) input rate.
    pub uncached: u64,
    /// Input tokens written to the prompt cache (billed at the cache-write rate).
    pub cache_write: u64,
    /// Input tokens read from the prompt cache (billed at the cache-read rate).
    pub cache_read: u64,
}

/// One chart to render; each variant carries everything needed to draw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    /// (a) input tokens per call, stacked by billing class, for two or more
    /// configs side by side (e.g. baseline vs best): grouped stacked bars per
    /// call index, one group per call, one bar per series.
    ///
    /// `series` holds `(label, tokens per call)`; call `i` of every series is
    /// drawn in group `i + 1`. Series may have different lengths. Bars of the
    /// first series are drawn in full colour, later series in lighter shades
    /// of the same billing-class colours.
    StackedCalls {
        /// Chart title.
        title: String,
        /// `(label, per-call tokens)` for each config, in bar order.
        series: Vec<(String, Vec<CallTokens>)>,
    },
    /// (b) cumulative dollars across calls, one line per policy.
    ///
    /// Each line is `(label, values)` where `values[i]` is the running total in
    /// USD after call `i + 1` (already cumulative; the chart does not sum).
    /// Only the first 8 lines get a colour, a marker and a legend entry; any
    /// further lines are drawn thin and grey behind them, so put the important
    /// ones first. Non-finite values leave a gap in their line.
    CumulativeCost {
        /// Chart title.
        title: String,
        /// `(label, cumulative USD after each call)` per policy.
        lines: Vec<(String, Vec<f64>)>,
    },
    /// (c) heatmap of total dollars over threshold (x) × keep-last (y) for one
    /// cache policy; `None` = not run.
    ///
    /// `cost_usd[k][t]` is the cost for `keeps[k]` and `thresholds[t]`;
    /// missing or non-finite entries count as not run. The cheapest cell gets
    /// the "best" end of the colour scale and a bold outline.
    Heatmap {
        /// Chart title.
        title: String,
        /// Compaction thresholds in characters, one column each (x axis).
        thresholds: Vec<u64>,
        /// Keep-last-N values, one row each (y axis, first row at the bottom).
        keeps: Vec<usize>,
        /// Total USD indexed `[keep][threshold]`; `None` = not run.
        cost_usd: Vec<Vec<Option<f64>>>,
    },
    /// (d) savings by policy as horizontal bars (USD; negative = costs more),
    /// with the percentage written at the bar end.
    ///
    /// Bars are drawn top to bottom in the given order. When there are more
    /// bars than fit the chart height, the first ones are drawn and a note
    /// says how many were left out.
    SavingsBars {
        /// Chart title.
        title: String,
        /// `(label, savings in USD, savings in percent)` per policy.
        bars: Vec<(String, f64, f64)>,
    },
}

/// Why a chart could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    /// The requested image size is outside the supported range.
    #[error(
        "chart size {width}x{height} is not supported (width {MIN_WIDTH}..={MAX_SIDE}, height {MIN_HEIGHT}..={MAX_SIDE} pixels)"
    )]
    InvalidSize {
        /// Requested width in pixels.
        width: u32,
        /// Requested height in pixels.
        height: u32,
    },
    /// The embedded font could not be loaded.
    #[error("embedded chart font could not be loaded: {0}")]
    Font(String),
    /// plotters reported an error while drawing.
    #[error("chart drawing failed: {0}")]
    Drawing(String),
    /// The rendered bitmap could not be encoded as PNG.
    #[error("PNG encoding failed: {0}")]
    Encode(String),
}

/// Smallest supported width in pixels.
const MIN_WIDTH: u32 = 240;
/// Smallest supported height in pixels.
const MIN_HEIGHT: u32 = 160;
/// Largest supported width or height in pixels.
const MAX_SIDE: u32 = 4096;

/// Render `chart` as a standalone SVG document of `width` × `height` pixels.
///
/// Text is emitted as SVG `<text>` (XML-escaped) with the font family
/// "DejaVu Sans" and generic fallbacks; layout is computed with the embedded
/// DejaVu Sans metrics, so it matches the PNG output.
pub fn render_svg(chart: &Chart, width: u32, height: u32) -> Result<String, ChartError> {
    check_size(width, height)?;
    ensure_font()?;
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        guarded(|| draw_chart(&root, chart))?;
        root.present().map_err(draw_err)?;
    }
    Ok(out)
}

/// Render `chart` as a PNG image (8-bit RGB) of `width` × `height` pixels.
///
/// The PNG holds only `IHDR`, `IDAT` and `IEND` chunks, so equal input gives
/// equal bytes.
pub fn render_png(chart: &Chart, width: u32, height: u32) -> Result<Vec<u8>, ChartError> {
    check_size(width, height)?;
    ensure_font()?;
    let mut pixels = vec![0u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (width, height)).into_drawing_area();
        guarded(|| draw_chart(&root, chart))?;
        root.present().map_err(draw_err)?;
    }
    png::encode_rgb8(&pixels, width, height).map_err(ChartError::Encode)
}

fn check_size(width: u32, height: u32) -> Result<(), ChartError> {
    if (MIN_WIDTH..=MAX_SIDE).contains(&width) && (MIN_HEIGHT..=MAX_SIDE).contains(&height) {
        Ok(())
    } else {
        Err(ChartError::InvalidSize { width, height })
    }
}

/// Run a drawing closure, turning a panic inside plotters into an error so a
/// broken chart can never take the whole report down.
fn guarded<F: FnOnce() -> Result<(), ChartError>>(f: F) -> Result<(), ChartError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(ChartError::Drawing(format!("plotters panicked: {msg}")))
        }
    }
}

fn draw_chart<DB: DrawingBackend>(root: &Area<DB>, chart: &Chart) -> Res<()> {
    match chart {
        Chart::StackedCalls { title, series } => stacked::draw(root, title, series),
        Chart::CumulativeCost { title, lines } => cumulative::draw(root, title, lines),
        Chart::Heatmap {
            title,
            thresholds,
            keeps,
            cost_usd,
        } => heatmap::draw(root, title, thresholds, keeps, cost_usd),
        Chart::SavingsBars { title, bars } => savings::draw(root, title, bars),
    }
}

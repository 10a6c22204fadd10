//! Charts for reports, rendered to SVG text or PNG bytes.
//!
//! The caller fills one [`Chart`] value with plain numbers and labels and
//! asks for [`render_svg`] or [`render_png`]; for the kinds whose length
//! depends on the data (one row per config or project), [`suggested_height`]
//! says how tall the chart needs to be at a given width.
//!
//! The SVG is written by this module, laid out with the metrics of DejaVu
//! Sans, which is embedded in the binary (see
//! `assets/fonts/LICENSE-DejaVu.txt`). The PNG is that same SVG rasterised by
//! resvg, shaping text with only the embedded font: no system font is ever
//! looked up, so the PNG is the same on every machine. Both renderers are
//! deterministic: the same chart and size always give the same bytes (the
//! PNG holds only `IHDR`, `IDAT` and `IEND`).
//!
//! Layout rules that hold for every chart kind:
//! - no text is shortened: titles wrap onto more lines, long labels (config
//!   strings) wrap at spaces or after `+`, `,`, `:`, `/`, and every text lies
//!   inside the image (the tests check each `<text>` against the font
//!   metrics);
//! - legends and notes go below the plot;
//! - text coming from traces or configs is stripped of control characters and
//!   XML-escaped;
//! - empty or unusable input draws an explanatory "no data" chart instead of
//!   failing;
//! - every number a chart prints is formatted by [`crate::fmt`], so
//!   it reads the same as in the tables and summaries.
//!
//! Files:
//! - `mod.rs`: the public API and the dispatch to the chart kinds;
//! - `svg.rs`: the SVG writer and the font metrics;
//! - `layout.rs`: what the kinds share: sizes, colours, wrapping, title,
//!   "no data" chart, legend, notes, axes, markers;
//! - `hbars.rs`: horizontal bar charts with one row per label (savings,
//!   config costs, project costs);
//! - `stacked.rs`, `cumulative.rs`, `heatmap.rs`, `distribution.rs`,
//!   `per_day.rs`, `pareto.rs`: one chart kind each.

mod cumulative;
mod distribution;
mod hbars;
mod heatmap;
mod layout;
mod per_day;
mod pareto;
mod stacked;
mod svg;

use std::sync::{Arc, OnceLock};

pub use stacked::CallTokens;
use svg::Svg;

/// One chart to render; each variant carries everything needed to draw it.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    /// (a) input tokens per call, stacked by billing class, for one or more
    /// configs side by side (e.g. status quo vs recommended): one group of
    /// bars per call, one bar per series.
    ///
    /// `series` holds `(label, tokens per call)`; call `i` of every series is
    /// drawn in group `i + 1`. Series may have different lengths. Bars of the
    /// first series are drawn in full colour, later series in lighter shades
    /// of the same billing-class colours. When there are more calls than the
    /// width can show as bars, consecutive calls are binned (each bar is the
    /// sum over its bin of N calls, and the axes say so); the x axis stays in
    /// call numbers.
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
    /// At most 8 lines are drawn, each with its own colour, marker and legend
    /// entry: put the important ones first. A note says how many further
    /// lines were left out and that every config is in `results.csv`.
    /// Non-finite values leave a gap in their line.
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
    /// missing or non-finite entries count as not run. The cheapest cell is
    /// outlined.
    Heatmap {
        /// Chart title.
        title: String,
        /// Compaction thresholds in characters, one column each (x axis).
        thresholds: Vec<u64>,
        /// Keep-last-N values, one row each (y axis, first row at the bottom).
        keeps: Vec<usize>,
        /// Total USD indexed `[keep][threshold]`; `None` = not run.
        cost_usd: Vec<Vec<Option<f64>>>,
        /// `(min, max)` USD of the colour scale. Pass the range over all
        /// heatmaps of a report so equal colours mean equal dollars across
        /// charts; `None` = this chart's own range.
        scale_usd: Option<(f64, f64)>,
    },
    /// (d) savings by policy as horizontal bars (USD; negative = costs more),
    /// with the percentage written at the bar end.
    ///
    /// Bars are drawn top to bottom in the given order. When there are more
    /// bars than fit the chart height, the first ones are drawn and a note
    /// says how many were left out; [`suggested_height`] gives a height
    /// that fits them all.
    SavingsBars {
        /// Chart title.
        title: String,
        /// `(label, savings in USD, savings in percent)` per policy.
        bars: Vec<(String, f64, f64)>,
    },
    /// Fleet cost by config: horizontal bars sorted as given (caller sorts cheapest first),
    /// status quo and recommended marked (distinct colour + a word in the label/legend).
    ConfigCosts {
        /// Chart title.
        title: String,
        /// `(config, fleet cost in USD)` per config, in bar order.
        bars: Vec<(String, f64)>,
        /// Index into `bars` of the status quo.
        status_quo: Option<usize>,
        /// Index into `bars` of the recommended config.
        recommended: Option<usize>,
    },
    /// Per-session savings distribution (USD per session, negative = costs more): a histogram
    /// with a zero line, bins chosen from the data, counts on the y axis.
    SavingsDistribution {
        /// Chart title.
        title: String,
        /// Savings of each session in USD; non-finite values are skipped.
        savings_usd: Vec<f64>,
    },
    /// Cost per day: one group per day (label "YYYY-MM-DD"), one bar or line per series
    /// (e.g. "recorded", "status quo", "recommended"); values[day][series] in USD, None = no data.
    ///
    /// Drawn as grouped bars while they fit the width, as lines otherwise.
    CostPerDay {
        /// Chart title.
        title: String,
        /// Series names, in legend order.
        series: Vec<String>,
        /// `(day, USD per series)` in axis order.
        days: Vec<(String, Vec<Option<f64>>)>,
    },
    /// Cost against recall risk, one point per config: the Pareto front
    /// joined and numbered (each number explained under the chart), the
    /// status quo and the recommendation marked, then `notes`.
    ParetoFront {
        /// Chart title.
        title: String,
        /// `(config, recall-risk turns, cost in USD)` per config.
        points: Vec<(String, f64, f64)>,
        /// Index into `points` of the status quo.
        status_quo: Option<usize>,
        /// Index into `points` of the recommended config.
        recommended: Option<usize>,
        /// Sentences under the chart.
        notes: Vec<String>,
    },
    /// Per-project bars: for each project, status quo vs another cost (USD), horizontal
    /// grouped bars in the order given.
    ProjectCosts {
        /// Chart title.
        title: String,
        /// `(project, status quo USD, other USD)` per project.
        projects: Vec<(String, f64, f64)>,
        /// What the second bar of each project is, for the legend
        /// (e.g. "recommended").
        against: String,
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
    /// Drawing or rasterising failed.
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
    if !svg::font_ok() {
        return Err(ChartError::Font(
            "DejaVuSans.ttf is not a valid font".into(),
        ));
    }
    guarded(|| {
        let mut svg = Svg::new(width, height);
        draw_chart(&mut svg, chart);
        Ok(svg.finish())
    })
}

/// Render `chart` as a PNG image (8-bit RGB) of `width` × `height` pixels:
/// the SVG of [`render_svg`] rasterised with the embedded font only.
///
/// The PNG holds only `IHDR`, `IDAT` and `IEND` chunks, so equal input gives
/// equal bytes.
pub fn render_png(chart: &Chart, width: u32, height: u32) -> Result<Vec<u8>, ChartError> {
    let svg = render_svg(chart, width, height)?;
    guarded(|| rasterise(&svg, width, height))
}

/// Height in pixels that `chart` needs at `width` to show every row without
/// crowding: it grows with the number of configs or projects for the bar
/// kinds, and is a fixed share of the width (plus room for wrapped titles
/// and legends) for the others. Always within the supported range; a chart
/// that needs more than the largest height draws what fits and says how
/// many rows it left out.
pub fn suggested_height(chart: &Chart, width: u32) -> u32 {
    let width = width.clamp(MIN_WIDTH, MAX_SIDE);
    let w = f64::from(width);
    let h = match chart {
        Chart::SavingsBars { title, bars } => hbars::savings_height(title, bars, w),
        Chart::ConfigCosts {
            title,
            bars,
            status_quo,
            recommended,
        } => hbars::config_height(title, bars, *status_quo, *recommended, w),
        Chart::ProjectCosts {
            title,
            projects,
            against,
        } => hbars::project_height(title, projects, against, w),
        Chart::Heatmap {
            title,
            thresholds,
            keeps,
            ..
        } => heatmap::height(title, thresholds.len(), keeps.len(), w),
        Chart::StackedCalls { title, series } => stacked::height(title, series, w),
        Chart::CumulativeCost { title, lines } => cumulative::height(title, lines, w),
        Chart::SavingsDistribution { title, .. } => distribution::height(title, w),
        Chart::CostPerDay { title, series, .. } => per_day::height(title, series, w),
        Chart::ParetoFront {
            title,
            points,
            status_quo,
            recommended,
            notes,
        } => pareto::height(title, points, [*status_quo, *recommended], notes, w),
    };
    if h.is_finite() {
        (h.ceil() as u32).clamp(MIN_HEIGHT, MAX_SIDE)
    } else {
        MIN_HEIGHT
    }
}

fn check_size(width: u32, height: u32) -> Result<(), ChartError> {
    if (MIN_WIDTH..=MAX_SIDE).contains(&width) && (MIN_HEIGHT..=MAX_SIDE).contains(&height) {
        Ok(())
    } else {
        Err(ChartError::InvalidSize { width, height })
    }
}

/// Run a drawing closure, turning a panic into an error so a broken chart can
/// never take the whole report down.
fn guarded<T, F: FnOnce() -> Result<T, ChartError>>(f: F) -> Result<T, ChartError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_string());
            Err(ChartError::Drawing(format!("renderer panicked: {msg}")))
        }
    }
}

fn draw_chart(svg: &mut Svg, chart: &Chart) {
    match chart {
        Chart::StackedCalls { title, series } => stacked::draw(svg, title, series),
        Chart::CumulativeCost { title, lines } => cumulative::draw(svg, title, lines),
        Chart::Heatmap {
            title,
            thresholds,
            keeps,
            cost_usd,
            scale_usd,
        } => heatmap::draw(svg, title, thresholds, keeps, cost_usd, *scale_usd),
        Chart::SavingsBars { title, bars } => hbars::savings(svg, title, bars),
        Chart::ConfigCosts {
            title,
            bars,
            status_quo,
            recommended,
        } => hbars::config_costs(svg, title, bars, *status_quo, *recommended),
        Chart::ProjectCosts {
            title,
            projects,
            against,
        } => hbars::project_costs(svg, title, projects, against),
        Chart::SavingsDistribution { title, savings_usd } => {
            distribution::draw(svg, title, savings_usd)
        }
        Chart::CostPerDay {
            title,
            series,
            days,
        } => per_day::draw(svg, title, series, days),
        Chart::ParetoFront {
            title,
            points,
            status_quo,
            recommended,
            notes,
        } => pareto::draw(svg, title, points, *status_quo, *recommended, notes),
    }
}

/// usvg options that know exactly one font, the embedded DejaVu Sans, and
/// answer every family (named or generic) with it.
fn usvg_options() -> &'static resvg::usvg::Options<'static> {
    static OPTS: OnceLock<resvg::usvg::Options<'static>> = OnceLock::new();
    OPTS.get_or_init(|| {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_font_data(svg::FONT_BYTES.to_vec());
        // Generic families too, so no text can fall through to a font
        // that is not there.
        let family = "DejaVu Sans";
        db.set_sans_serif_family(family);
        db.set_serif_family(family);
        db.set_monospace_family(family);
        db.set_cursive_family(family);
        db.set_fantasy_family(family);
        resvg::usvg::Options {
            font_family: "DejaVu Sans".to_string(),
            fontdb: Arc::new(db),
            ..Default::default()
        }
    })
}

fn rasterise(svg: &str, width: u32, height: u32) -> Result<Vec<u8>, ChartError> {
    let draw = |e: &dyn std::fmt::Display| ChartError::Drawing(e.to_string());
    let tree = resvg::usvg::Tree::from_str(svg, usvg_options()).map_err(|e| draw(&e))?;
    let mut pixmap = resvg::tiny_skia::Pixmap::new(width, height)
        .ok_or_else(|| ChartError::Drawing(format!("no {width}x{height} pixmap")))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        resvg::tiny_skia::Transform::identity(),
        &mut pixmap.as_mut(),
    );
    // The canvas is opaque (white background), so dropping alpha loses
    // nothing and a third of the bytes.
    let rgb: Vec<u8> = pixmap
        .data()
        .chunks_exact(4)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, width, height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.set_compression(png::Compression::High);
        let mut w = enc
            .write_header()
            .map_err(|e| ChartError::Encode(e.to_string()))?;
        w.write_image_data(&rgb)
            .map_err(|e| ChartError::Encode(e.to_string()))?;
        w.finish().map_err(|e| ChartError::Encode(e.to_string()))?;
    }
    Ok(out)
}

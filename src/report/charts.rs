//! Charts for reports, rendered with `plotters` to SVG text or PNG bytes.
//!
//! The caller fills one [`Chart`] value with plain numbers and labels and
//! asks for [`render_svg`] or [`render_png`]. Rendering needs no system
//! fonts: DejaVu Sans is embedded in the binary (see
//! `assets/fonts/LICENSE-DejaVu.txt`) and registered with plotters' `ab_glyph`
//! text support the first time a chart is drawn. Both renderers are
//! deterministic: the same chart and size always give the same bytes (the PNG
//! encoder below writes no time or text chunks).
//!
//! Layout rules that hold for every chart kind:
//! - the title sits at the top and is shortened with `…` when it is too wide;
//! - legends go below the plot, in as many columns as fit, and labels that do
//!   not fit are shortened in the middle with `…`;
//! - text coming from traces or configs is stripped of control characters and
//!   XML-escaped in SVG output;
//! - empty or unusable input draws an explanatory "no data" chart instead of
//!   failing.

use std::sync::OnceLock;

use plotters::backend::{BitMapBackend, SVGBackend};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::register_font;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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

// ---------------------------------------------------------------------------
// Setup, errors, styles
// ---------------------------------------------------------------------------

/// Family name the embedded font is registered under. It is also what the SVG
/// `font-family` attribute says, hence the CSS fallback list.
const FONT_FAMILY: &str = "DejaVu Sans, Verdana, Arial, sans-serif";
/// DejaVu Sans 2.37 (Bitstream Vera license, DejaVu changes public domain).
static FONT_BYTES: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
static FONT_READY: OnceLock<Result<(), String>> = OnceLock::new();

fn ensure_font() -> Result<(), ChartError> {
    FONT_READY
        .get_or_init(|| {
            // Also register as "sans-serif" (plotters' default family), so no
            // plotters default text can end up without a font.
            for name in [FONT_FAMILY, "sans-serif"] {
                register_font(name, FontStyle::Normal, FONT_BYTES)
                    .map_err(|_| "DejaVuSans.ttf is not a valid font".to_string())?;
            }
            Ok(())
        })
        .clone()
        .map_err(ChartError::Font)
}

fn check_size(width: u32, height: u32) -> Result<(), ChartError> {
    if (MIN_WIDTH..=MAX_SIDE).contains(&width) && (MIN_HEIGHT..=MAX_SIDE).contains(&height) {
        Ok(())
    } else {
        Err(ChartError::InvalidSize { width, height })
    }
}

fn draw_err<E: std::fmt::Display>(e: E) -> ChartError {
    ChartError::Drawing(e.to_string())
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

type Area<DB> = DrawingArea<DB, Shift>;
type Res<T> = Result<T, ChartError>;

/// Font sizes are plotters sizes; SVG gets `size / 1.24` px, so 17 → 13.7 px.
const TITLE_SIZE: f64 = 24.0;
const DESC_SIZE: f64 = 18.0;
const TICK_SIZE: f64 = 17.0;
const LEGEND_SIZE: f64 = 17.0;
const NOTE_SIZE: f64 = 17.0;
const CELL_SIZE: f64 = 17.0;

const PAD: i32 = 12;
const TITLE_H: i32 = 44;
const LEGEND_ROW_H: i32 = 24;

const TEXT: RGBColor = RGBColor(34, 34, 34);
const MUTED: RGBColor = RGBColor(90, 90, 90);
const AXIS: RGBColor = RGBColor(60, 60, 60);
const GRID: RGBColor = RGBColor(225, 225, 225);
const EXTRA_LINE: RGBColor = RGBColor(185, 185, 185);
const NA_FILL: RGBColor = RGBColor(224, 224, 224);

/// Okabe–Ito colours, ordered for contrast against white (yellow last).
const PALETTE: [RGBColor; 8] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(240, 228, 66),  // yellow
];
/// How many lines of a [`Chart::CumulativeCost`] get colour and legend.
const MAX_HIGHLIGHTED_LINES: usize = 8;

/// Billing-class colours (Okabe–Ito): uncached, cache write, cache read.
const CLASS_COLORS: [RGBColor; 3] = [
    RGBColor(213, 94, 0),  // vermillion
    RGBColor(230, 159, 0), // orange
    RGBColor(0, 114, 178), // blue
];
const CLASS_NAMES: [&str; 3] = ["uncached", "cache write", "cache read"];

const SAVES: RGBColor = RGBColor(0, 158, 115); // bluish green
const COSTS_MORE: RGBColor = RGBColor(213, 94, 0); // vermillion

fn style(size: f64, color: RGBColor) -> TextStyle<'static> {
    with_color(TextStyle::from((FONT_FAMILY, size).into_font()), color)
}

/// `TextStyle::color` wants a `&'a` colour; setting the field avoids that.
fn with_color(mut st: TextStyle<'static>, color: RGBColor) -> TextStyle<'static> {
    st.color = color.to_backend_color();
    st
}

fn anchored(s: TextStyle<'static>, h: HPos, v: VPos) -> TextStyle<'static> {
    s.pos(Pos::new(h, v))
}

fn mix(c: RGBColor, with: RGBColor, t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let m = |a: u8, b: u8| (f64::from(a) * (1.0 - t) + f64::from(b) * t).round() as u8;
    RGBColor(m(c.0, with.0), m(c.1, with.1), m(c.2, with.2))
}

fn luminance(c: RGBColor) -> f64 {
    0.2126 * f64::from(c.0) + 0.7152 * f64::from(c.1) + 0.0722 * f64::from(c.2)
}

// ---------------------------------------------------------------------------
// Text helpers
// ---------------------------------------------------------------------------

/// Labels come from traces and configs: drop control characters (which XML
/// cannot carry even escaped) and surrounding blanks.
fn clean(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    s.trim().to_string()
}

fn text_w<DB: DrawingBackend>(root: &Area<DB>, text: &str, st: &TextStyle) -> Res<i32> {
    if text.is_empty() {
        return Ok(0);
    }
    let (w, _) = root.estimate_text_size(text, st).map_err(draw_err)?;
    Ok(i32::try_from(w).unwrap_or(i32::MAX))
}

/// Shorten `text` to fit `max_w` pixels, cutting the middle (config strings
/// differ at both ends) and marking the cut with `…`.
fn fit<DB: DrawingBackend>(root: &Area<DB>, text: &str, st: &TextStyle, max_w: i32) -> Res<String> {
    if text_w(root, text, st)? <= max_w {
        return Ok(text.to_string());
    }
    let chars: Vec<char> = text.chars().collect();
    let build = |keep: usize| -> String {
        let head = keep.div_ceil(2);
        let tail = keep / 2;
        let mut s: String = chars[..head].iter().collect();
        s.push('…');
        s.extend(&chars[chars.len() - tail..]);
        s
    };
    // Largest `keep` (characters kept) whose shortened form fits.
    let (mut lo, mut hi) = (0usize, chars.len().saturating_sub(1));
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if text_w(root, &build(mid), st)? <= max_w {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Ok(build(lo))
}

fn draw_text<DB: DrawingBackend>(
    root: &Area<DB>,
    text: &str,
    (x, y): (i32, i32),
    st: &TextStyle,
) -> Res<()> {
    if text.is_empty() {
        return Ok(());
    }
    root.draw(&Text::new(text.to_string(), (x, y), st.clone()))
        .map_err(draw_err)
}

fn fill_rect<DB: DrawingBackend>(
    root: &Area<DB>,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
    color: RGBColor,
) -> Res<()> {
    root.draw(&Rectangle::new([(x0, y0), (x1, y1)], color.filled()))
        .map_err(draw_err)
}

fn dims<DB: DrawingBackend>(root: &Area<DB>) -> (i32, i32) {
    let (w, h) = root.dim_in_pixel();
    (
        i32::try_from(w).unwrap_or(i32::MAX),
        i32::try_from(h).unwrap_or(i32::MAX),
    )
}

/// White background and the (shortened) title; returns the y where the
/// chart body may start.
fn draw_frame<DB: DrawingBackend>(root: &Area<DB>, title: &str) -> Res<i32> {
    root.fill(&WHITE).map_err(draw_err)?;
    let (w, _) = dims(root);
    let st = anchored(style(TITLE_SIZE, TEXT), HPos::Center, VPos::Center);
    let title = fit(root, &clean(title), &st, w - 2 * PAD)?;
    draw_text(root, &title, (w / 2, TITLE_H / 2), &st)?;
    Ok(TITLE_H)
}

/// The chart for input that has nothing to plot: title plus an explanation.
fn draw_no_data<DB: DrawingBackend>(root: &Area<DB>, title: &str, why: &str) -> Res<()> {
    let top = draw_frame(root, title)?;
    let (w, h) = dims(root);
    let (x0, y0, x1, y1) = (PAD * 3, top + PAD, w - PAD * 3, h - PAD * 3);
    root.draw(&Rectangle::new(
        [(x0, y0), (x1.max(x0 + 1), y1.max(y0 + 1))],
        ShapeStyle::from(&GRID).stroke_width(2),
    ))
    .map_err(draw_err)?;
    let big = anchored(style(DESC_SIZE + 4.0, MUTED), HPos::Center, VPos::Center);
    let small = anchored(style(NOTE_SIZE, MUTED), HPos::Center, VPos::Center);
    let cy = (y0 + y1) / 2;
    draw_text(root, "No data to plot", (w / 2, cy - 14), &big)?;
    let why = fit(root, why, &small, x1 - x0 - 2 * PAD)?;
    draw_text(root, &why, (w / 2, cy + 16), &small)
}

// ---------------------------------------------------------------------------
// Number formatting
// ---------------------------------------------------------------------------

fn group_thousands(int_digits: &str) -> String {
    let mut out = String::with_capacity(int_digits.len() + int_digits.len() / 3);
    for (i, c) in int_digits.chars().enumerate() {
        if i > 0 && (int_digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn trim_decimals(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Compact count: 950, 1.5k, 120k, 2.25M, 3B, 4T, then scientific.
fn fmt_count(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let sign = if v < 0.0 { "−" } else { "" };
    let a = v.abs();
    if a >= 1e15 {
        return format!("{sign}{a:.1e}");
    }
    let (div, unit) = if a >= 1e12 {
        (1e12, "T")
    } else if a >= 1e9 {
        (1e9, "B")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let x = a / div;
    let body = if div == 1.0 {
        format!("{}", x.round())
    } else if x >= 100.0 {
        group_thousands(&format!("{}", x.round()))
    } else {
        trim_decimals(format!("{x:.2}"))
    };
    format!("{sign}{body}{unit}")
}

/// Dollars with thousands separators: `$1.20`, `−$0.05`, `$1,234.50`.
fn fmt_usd(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let s = format!("{:.*}", decimals, v.abs());
    let (int, frac) = s.split_once('.').unwrap_or((s.as_str(), ""));
    let sign = if v < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') {
        "−"
    } else {
        ""
    };
    let mut out = format!("{sign}${}", group_thousands(int));
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// Decimals that keep ticks about `span / 8` apart distinguishable; at least
/// 2 (cents), none once values reach thousands of dollars.
fn usd_decimals(span: f64, max_abs: f64) -> usize {
    if max_abs >= 1000.0 {
        return 0;
    }
    let step = span / 8.0;
    if !step.is_finite() || step <= 0.0 {
        return 2;
    }
    let d = -step.log10().floor();
    (d.max(2.0) as usize).min(6)
}

fn fmt_pct(p: f64) -> String {
    if !p.is_finite() {
        return "n/a".into();
    }
    let s = format!("{:.1}%", p.abs());
    if s == "0.0%" {
        s
    } else if p < 0.0 {
        format!("−{s}")
    } else {
        format!("+{s}")
    }
}

/// Upper bound for a 0-based value axis: a bit of head room, never empty.
fn axis_max(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max * 1.06
    } else {
        1.0
    }
}

/// Formatter for integer-valued axes (call numbers); blanks non-integers.
fn int_tick(v: f64, lo: usize, hi: usize) -> String {
    let r = v.round();
    if (v - r).abs() < 1e-6 && r >= lo as f64 && r <= hi as f64 {
        format!("{r}")
    } else {
        String::new()
    }
}

// ---------------------------------------------------------------------------
// Legend
// ---------------------------------------------------------------------------

#[derive(Clone, Copy)]
enum Marker {
    Circle,
    Square,
    Triangle,
    Cross,
}
const MARKERS: [Marker; 4] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Cross,
];

enum Swatch {
    Boxes(Vec<RGBColor>),
    Line(RGBColor, u32, Option<Marker>),
    Nothing,
}

struct LegendItem {
    swatch: Swatch,
    label: String,
}

/// Where each legend entry goes: x offset and row, plus the fitted labels.
struct LegendLayout {
    slots: Vec<(i32, i32)>,
    height: i32,
    labels: Vec<String>,
}

const SWATCH_W: i32 = 30;

fn swatch_w(s: &Swatch) -> i32 {
    match s {
        Swatch::Boxes(c) => (c.len() as i32 * 14).max(14),
        Swatch::Line(..) => SWATCH_W,
        Swatch::Nothing => 0,
    }
}

/// Entries flow left to right and wrap (aligned in columns when that takes
/// no more rows); an entry wider than the whole row is shortened with `…`.
fn layout_legend<DB: DrawingBackend>(
    root: &Area<DB>,
    items: &[LegendItem],
    avail_w: i32,
) -> Res<LegendLayout> {
    if items.is_empty() {
        return Ok(LegendLayout {
            slots: vec![],
            height: 0,
            labels: vec![],
        });
    }
    let st = style(LEGEND_SIZE, TEXT);
    let gap = 28;
    let mut labels = Vec::with_capacity(items.len());
    let mut widths = Vec::with_capacity(items.len());
    for it in items {
        let sw = swatch_w(&it.swatch);
        let lead = sw + if sw > 0 { 8 } else { 0 };
        let label = fit(root, &it.label, &st, avail_w - lead)?;
        widths.push(lead + text_w(root, &label, &st)?);
        labels.push(label);
    }
    // Flow first; aligned columns only when they need no more rows.
    let mut slots = Vec::with_capacity(items.len());
    let (mut x, mut row) = (0, 0);
    for w in &widths {
        if x > 0 && x + w > avail_w {
            x = 0;
            row += 1;
        }
        slots.push((x, row));
        x += w + gap;
    }
    let natural = widths.iter().copied().max().unwrap_or(0) + gap;
    let cols = (avail_w / natural.max(1)).min(items.len() as i32);
    if cols >= 2 && (items.len() as i32 + cols - 1) / cols <= row + 1 {
        let col_w = avail_w / cols;
        slots = (0..items.len() as i32)
            .map(|i| ((i % cols) * col_w, i / cols))
            .collect();
    }
    let rows = slots.last().map_or(0, |s| s.1 + 1);
    Ok(LegendLayout {
        slots,
        height: rows * LEGEND_ROW_H + 10,
        labels,
    })
}

fn draw_marker<DB: DrawingBackend>(
    area: &Area<DB>,
    m: Marker,
    (x, y): (i32, i32),
    color: RGBColor,
) -> Res<()> {
    let st = color.filled();
    let r = match m {
        Marker::Circle => area.draw(&Circle::new((x, y), 4, st)),
        Marker::Square => area.draw(&Rectangle::new([(x - 4, y - 4), (x + 4, y + 4)], st)),
        Marker::Triangle => area.draw(&TriangleMarker::new((x, y), 5, st)),
        Marker::Cross => area.draw(&Cross::new((x, y), 4, color.stroke_width(2))),
    };
    r.map_err(draw_err)
}

fn draw_legend<DB: DrawingBackend>(
    root: &Area<DB>,
    items: &[LegendItem],
    lay: &LegendLayout,
    (x0, y0): (i32, i32),
) -> Res<()> {
    let st = anchored(style(LEGEND_SIZE, TEXT), HPos::Left, VPos::Center);
    for ((it, label), (dx, row)) in items.iter().zip(&lay.labels).zip(&lay.slots) {
        let x = x0 + dx;
        let cy = y0 + 5 + row * LEGEND_ROW_H + LEGEND_ROW_H / 2;
        match &it.swatch {
            Swatch::Boxes(colors) => {
                for (k, c) in colors.iter().enumerate() {
                    let bx = x + k as i32 * 14;
                    fill_rect(root, (bx, cy - 6), (bx + 12, cy + 6), *c)?;
                    root.draw(&Rectangle::new(
                        [(bx, cy - 6), (bx + 12, cy + 6)],
                        mix(*c, BLACK, 0.35).stroke_width(1),
                    ))
                    .map_err(draw_err)?;
                }
            }
            Swatch::Line(c, width, marker) => {
                root.draw(&PathElement::new(
                    vec![(x, cy), (x + SWATCH_W, cy)],
                    c.stroke_width(*width),
                ))
                .map_err(draw_err)?;
                if let Some(m) = marker {
                    draw_marker(root, *m, (x + SWATCH_W / 2, cy), *c)?;
                }
            }
            Swatch::Nothing => {}
        }
        let sw = swatch_w(&it.swatch);
        let tx = x + sw + if sw > 0 { 8 } else { 0 };
        draw_text(root, label, (tx, cy), &st)?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Dispatch
// ---------------------------------------------------------------------------

fn draw_chart<DB: DrawingBackend>(root: &Area<DB>, chart: &Chart) -> Res<()> {
    match chart {
        Chart::StackedCalls { title, series } => draw_stacked(root, title, series),
        Chart::CumulativeCost { title, lines } => draw_cumulative(root, title, lines),
        Chart::Heatmap {
            title,
            thresholds,
            keeps,
            cost_usd,
        } => draw_heatmap(root, title, thresholds, keeps, cost_usd),
        Chart::SavingsBars { title, bars } => draw_savings(root, title, bars),
    }
}

/// Size of the y label area: widest tick label plus the rotated description.
fn y_area_w<DB: DrawingBackend>(root: &Area<DB>, ticks: &[String]) -> Res<i32> {
    let st = style(TICK_SIZE, TEXT);
    let mut w = 0;
    for t in ticks {
        w = w.max(text_w(root, t, &st)?);
    }
    Ok(w + 14 + 30)
}

const X_AREA_H: i32 = 50;

// ---------------------------------------------------------------------------
// (a) stacked input tokens per call
// ---------------------------------------------------------------------------

fn series_shades(s: usize, count: usize) -> Vec<RGBColor> {
    let t = if count <= 1 {
        0.0
    } else {
        0.6 * s as f64 / (count - 1) as f64
    };
    CLASS_COLORS.iter().map(|c| mix(*c, WHITE, t)).collect()
}

fn draw_stacked<DB: DrawingBackend>(
    root: &Area<DB>,
    title: &str,
    series: &[(String, Vec<CallTokens>)],
) -> Res<()> {
    let n = series.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
    if n == 0 {
        let why = if series.is_empty() {
            "no series given"
        } else {
            "the series contain no calls"
        };
        return draw_no_data(root, title, why);
    }
    let top = draw_frame(root, title)?;
    let (w, h) = dims(root);
    let count = series.len();

    let mut items: Vec<LegendItem> = CLASS_NAMES
        .iter()
        .zip(CLASS_COLORS)
        .map(|(name, c)| LegendItem {
            swatch: Swatch::Boxes(vec![c]),
            label: (*name).to_string(),
        })
        .collect();
    for (i, (label, _)) in series.iter().enumerate() {
        let label = clean(label);
        items.push(LegendItem {
            swatch: Swatch::Boxes(series_shades(i, count)),
            label: if count > 1 {
                format!("bar {}: {label}", i + 1)
            } else {
                label
            },
        });
    }
    let legend = layout_legend(root, &items, w - 2 * PAD)?;

    let totals = |t: &CallTokens| t.uncached as f64 + t.cache_write as f64 + t.cache_read as f64;
    let max_total = series
        .iter()
        .flat_map(|(_, calls)| calls.iter().map(totals))
        .fold(0.0f64, f64::max);
    let y_max = axis_max(max_total);
    let ticks = [fmt_count(y_max), fmt_count(y_max / 2.0)];

    let body = root
        .clone()
        .shrink((0, top), (w, (h - top - legend.height).max(1)));
    let mut chart = ChartBuilder::on(&body)
        .margin_right(PAD * 2)
        .margin_top(6)
        .margin_left(PAD)
        .x_label_area_size(X_AREA_H)
        .y_label_area_size(y_area_w(root, &ticks)?)
        .build_cartesian_2d(0.5f64..(n as f64 + 0.5), 0f64..y_max)
        .map_err(draw_err)?;

    let x_fmt = |v: &f64| int_tick(*v, 1, n);
    let y_fmt = |v: &f64| fmt_count(*v);
    chart
        .configure_mesh()
        .disable_x_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(AXIS)
        .x_labels(n.min(12))
        .y_labels(8)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(style(TICK_SIZE, TEXT))
        .axis_desc_style(style(DESC_SIZE, TEXT))
        .x_desc("call")
        .y_desc("input tokens")
        .draw()
        .map_err(draw_err)?;

    let (px, _) = chart.plotting_area().get_pixel_range();
    let group_px = f64::from(px.end - px.start) / n as f64;
    // At most ~70 px per bar, so a handful of calls do not give slabs.
    let group_w = (0.8f64).min(70.0 * count as f64 / group_px.max(1.0));
    let bar_w = group_w / count as f64;
    let gap = if group_px * bar_w > 6.0 {
        bar_w * 0.08
    } else {
        0.0
    };
    let outline = group_px * bar_w >= 8.0;
    for (s, (_, calls)) in series.iter().enumerate() {
        let shades = series_shades(s, count);
        for (i, t) in calls.iter().enumerate() {
            let x0 = (i + 1) as f64 - group_w / 2.0 + s as f64 * bar_w;
            let x1 = x0 + bar_w - gap;
            let mut y = 0.0;
            for (k, v) in [t.uncached, t.cache_write, t.cache_read]
                .into_iter()
                .enumerate()
            {
                if v == 0 {
                    continue;
                }
                let y1 = y + v as f64;
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(x0, y), (x1, y1)],
                        shades[k].filled(),
                    )))
                    .map_err(draw_err)?;
                if outline {
                    chart
                        .draw_series(std::iter::once(Rectangle::new(
                            [(x0, y), (x1, y1)],
                            mix(CLASS_COLORS[k], BLACK, 0.3).stroke_width(1),
                        )))
                        .map_err(draw_err)?;
                }
                y = y1;
            }
        }
    }
    draw_legend(root, &items, &legend, (PAD, h - legend.height))
}

// ---------------------------------------------------------------------------
// (b) cumulative cost lines
// ---------------------------------------------------------------------------

fn draw_cumulative<DB: DrawingBackend>(
    root: &Area<DB>,
    title: &str,
    lines: &[(String, Vec<f64>)],
) -> Res<()> {
    let n = lines.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    let finite = lines
        .iter()
        .flat_map(|(_, v)| v.iter().copied())
        .filter(|v| v.is_finite());
    let (lo, hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    });
    if n == 0 || !lo.is_finite() {
        let why = if lines.is_empty() {
            "no policies given"
        } else {
            "the lines contain no finite values"
        };
        return draw_no_data(root, title, why);
    }
    let top = draw_frame(root, title)?;
    let (w, h) = dims(root);

    let shown = lines.len().min(MAX_HIGHLIGHTED_LINES);
    let mut items: Vec<LegendItem> = lines[..shown]
        .iter()
        .enumerate()
        .map(|(i, (label, _))| LegendItem {
            swatch: Swatch::Line(PALETTE[i], line_width(i), Some(MARKERS[i % MARKERS.len()])),
            label: clean(label),
        })
        .collect();
    let extra = lines.len() - shown;
    if extra > 0 {
        items.push(LegendItem {
            swatch: Swatch::Line(EXTRA_LINE, 1, None),
            label: format!(
                "{extra} more {} (no legend)",
                if extra == 1 { "policy" } else { "policies" }
            ),
        });
    }
    let legend = layout_legend(root, &items, w - 2 * PAD)?;

    let y_lo = if lo < 0.0 { lo * 1.06 } else { 0.0 };
    let y_hi = if hi > 0.0 {
        hi * 1.06
    } else if y_lo < 0.0 {
        0.0
    } else {
        1.0
    };
    let dec = usd_decimals(y_hi - y_lo, y_lo.abs().max(y_hi.abs()));
    let ticks = [fmt_usd(y_hi, dec), fmt_usd(y_lo, dec)];
    let (x_lo, x_hi) = if n == 1 { (0.5, 1.5) } else { (1.0, n as f64) };

    let body = root
        .clone()
        .shrink((0, top), (w, (h - top - legend.height).max(1)));
    let mut chart = ChartBuilder::on(&body)
        .margin_right(PAD * 2)
        .margin_top(6)
        .margin_left(PAD)
        .x_label_area_size(X_AREA_H)
        .y_label_area_size(y_area_w(root, &ticks)?)
        .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)
        .map_err(draw_err)?;
    let x_fmt = |v: &f64| int_tick(*v, 1, n);
    let y_fmt = |v: &f64| fmt_usd(*v, dec);
    chart
        .configure_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(AXIS)
        .x_labels(n.clamp(1, 12))
        .y_labels(6)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(style(TICK_SIZE, TEXT))
        .axis_desc_style(style(DESC_SIZE, TEXT))
        .x_desc("call")
        .y_desc("USD (cumulative)")
        .draw()
        .map_err(draw_err)?;

    // Grey extras first so the highlighted lines stay on top; then the
    // highlighted ones in reverse, so line 1 ends up topmost.
    let order = (shown..lines.len()).chain((0..shown).rev());
    let marker_every = if n <= 30 { 1 } else { n.div_ceil(15) };
    for i in order {
        let values = &lines[i].1;
        let (color, width) = if i < shown {
            (PALETTE[i], line_width(i))
        } else {
            (EXTRA_LINE, 1)
        };
        for run in finite_runs(values) {
            chart
                .draw_series(LineSeries::new(run, color.stroke_width(width)))
                .map_err(draw_err)?;
        }
        if i < shown {
            let marker = MARKERS[i % MARKERS.len()];
            // Stagger markers between lines so they do not sit on each other.
            let offset = if marker_every > 1 {
                i % marker_every
            } else {
                0
            };
            for (k, v) in values.iter().enumerate() {
                let last = k + 1 == values.len();
                if v.is_finite() && (k % marker_every == offset || last) {
                    let p = chart.backend_coord(&((k + 1) as f64, *v));
                    draw_marker(root, marker, p, color)?;
                }
            }
        }
    }
    draw_legend(root, &items, &legend, (PAD, h - legend.height))
}

fn line_width(i: usize) -> u32 {
    // Yellow (last palette entry) needs more ink to be seen on white.
    if i == 7 { 3 } else { 2 }
}

/// Maximal runs of finite values as `(call number, value)` points.
fn finite_runs(values: &[f64]) -> Vec<Vec<(f64, f64)>> {
    let mut runs = Vec::new();
    let mut cur = Vec::new();
    for (k, v) in values.iter().enumerate() {
        if v.is_finite() {
            cur.push(((k + 1) as f64, *v));
        } else if !cur.is_empty() {
            runs.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        runs.push(cur);
    }
    runs
}

// ---------------------------------------------------------------------------
// (c) heatmap
// ---------------------------------------------------------------------------

/// Viridis stops from dark purple (most expensive) to lime (cheapest); the
/// yellow end is left out so the best cell reads as "good", not "warning".
const SCALE: [(f64, RGBColor); 5] = [
    (0.0, RGBColor(68, 1, 84)),
    (0.25, RGBColor(59, 82, 139)),
    (0.5, RGBColor(33, 145, 140)),
    (0.75, RGBColor(94, 201, 98)),
    (1.0, RGBColor(189, 223, 38)),
];

/// Colour for `t` in 0..=1, where 1 is the cheapest.
fn scale_color(t: f64) -> RGBColor {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    for pair in SCALE.windows(2) {
        let ((t0, c0), (t1, c1)) = (pair[0], pair[1]);
        if t <= t1 {
            return mix(c0, c1, (t - t0) / (t1 - t0));
        }
    }
    SCALE[SCALE.len() - 1].1
}

/// A `0..n` axis of `n` equal cells whose tick marks and labels sit at the
/// cell centres `0.5, 1.5, …` (thinned to the requested count). plotters'
/// segmented axes add a spare segment and its key-point wrapper cannot format
/// `f64`, hence this small axis of our own.
#[derive(Clone)]
struct CellAxis(usize);

impl Ranged for CellAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let len = f64::from(limit.1 - limit.0);
        limit.0 + (len * v / self.0.max(1) as f64).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            return vec![];
        }
        let step = self.0.div_ceil(hint.max_num_points().max(1)).max(1);
        (0..self.0).step_by(step).map(|i| i as f64 + 0.5).collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.0 as f64
    }
}

/// Index of the cell whose centre is `v`, if `v` is a centre.
fn cell_index(v: f64, n: usize) -> Option<usize> {
    let i = (v - 0.5).round();
    ((v - 0.5 - i).abs() < 1e-6 && i >= 0.0 && i < n as f64).then_some(i as usize)
}

/// More cells per side than this cannot get even one pixel each.
const MAX_CELLS_PER_SIDE: usize = 4096;

fn draw_heatmap<DB: DrawingBackend>(
    root: &Area<DB>,
    title: &str,
    thresholds: &[u64],
    keeps: &[usize],
    cost: &[Vec<Option<f64>>],
) -> Res<()> {
    if thresholds.is_empty() || keeps.is_empty() {
        return draw_no_data(root, title, "no thresholds or keep-last values given");
    }
    if thresholds.len() > MAX_CELLS_PER_SIDE || keeps.len() > MAX_CELLS_PER_SIDE {
        return draw_no_data(
            root,
            title,
            "too many thresholds or keep-last values to draw",
        );
    }
    let top = draw_frame(root, title)?;
    let (w, h) = dims(root);
    let (nx, ny) = (thresholds.len(), keeps.len());
    let cell = |k: usize, t: usize| -> Option<f64> {
        cost.get(k)
            .and_then(|row| row.get(t))
            .copied()
            .flatten()
            .filter(|v| v.is_finite())
    };
    let values: Vec<f64> = (0..ny)
        .flat_map(|k| (0..nx).map(move |t| (k, t)))
        .filter_map(|(k, t)| cell(k, t))
        .collect();
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let have = !values.is_empty();
    let span = if have { max - min } else { 0.0 };
    let dec = if span > 0.0 {
        usd_decimals(span * 8.0 / 20.0, max.abs().max(min.abs()))
    } else {
        usd_decimals(max.abs().max(0.01), max.abs())
    };
    let t_of = |v: f64| if span > 0.0 { (max - v) / span } else { 1.0 };

    // Notes under the plot instead of a legend.
    let note_st = anchored(style(NOTE_SIZE, MUTED), HPos::Left, VPos::Center);
    let note = if have {
        "colour: total USD, cheapest = light green (outlined); grey n/a = not run"
    } else {
        "no combination was run (all cells n/a)"
    };
    let note = fit(root, note, &note_st, w - 2 * PAD)?;
    let note_h = LEGEND_ROW_H + 8;

    let y_ticks: Vec<String> = keeps.iter().map(|k| k.to_string()).collect();
    let scale_w = if have { 120 } else { 0 };
    let body = root
        .clone()
        .shrink((0, top), (w - scale_w, (h - top - note_h).max(1)));
    let mut chart = ChartBuilder::on(&body)
        .margin_right(PAD)
        .margin_top(6)
        .margin_left(PAD)
        .x_label_area_size(X_AREA_H)
        .y_label_area_size(y_area_w(root, &y_ticks)?)
        .build_cartesian_2d(CellAxis(nx), CellAxis(ny))
        .map_err(draw_err)?;

    let (px, py) = chart.plotting_area().get_pixel_range();
    let cell_w = f64::from(px.end - px.start) / nx as f64;
    let cell_h = f64::from(py.end - py.start) / ny as f64;

    // Threshold labels: thin them out when they would collide.
    let tick_st = style(TICK_SIZE, TEXT);
    let mut widest = 0;
    for t in thresholds {
        widest = widest.max(text_w(root, &fmt_count(*t as f64), &tick_st)?);
    }
    let every = ((f64::from(widest + 10) / cell_w.max(1.0)).ceil() as usize).max(1);
    let x_fmt = |v: &f64| {
        cell_index(*v, nx)
            .and_then(|i| thresholds.get(i))
            .map(|t| fmt_count(*t as f64))
            .unwrap_or_default()
    };
    let y_fmt = |v: &f64| {
        cell_index(*v, ny)
            .and_then(|i| keeps.get(i))
            .map(|k| k.to_string())
            .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .axis_style(AXIS)
        .x_labels(nx.div_ceil(every))
        .y_labels(ny.div_ceil(((TICK_SIZE + 4.0) / cell_h.max(1.0)).ceil().max(1.0) as usize))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(style(TICK_SIZE, TEXT))
        .axis_desc_style(style(DESC_SIZE, TEXT))
        .x_desc("threshold (chars)")
        .y_desc("keep last N")
        .draw()
        .map_err(draw_err)?;

    // Pixel corners of cell (t, k): top-left and bottom-right.
    let corners = |t: usize, k: usize| {
        (
            chart.backend_coord(&(t as f64, (k + 1) as f64)),
            chart.backend_coord(&((t + 1) as f64, k as f64)),
        )
    };
    let cell_st = style(CELL_SIZE, TEXT);
    let label_room = (cell_w - 6.0) as i32;
    let label_fits_h = cell_h >= CELL_SIZE + 4.0;
    for k in 0..ny {
        for t in 0..nx {
            let (a, b) = corners(t, k);
            let (fill, text, text_color) = match cell(k, t) {
                Some(v) => {
                    let c = scale_color(t_of(v));
                    let tc = if luminance(c) < 120.0 { WHITE } else { TEXT };
                    (c, fmt_usd(v, dec), tc)
                }
                None => (NA_FILL, "n/a".to_string(), MUTED),
            };
            fill_rect(root, a, b, fill)?;
            root.draw(&Rectangle::new([a, b], WHITE.stroke_width(1)))
                .map_err(draw_err)?;
            if label_fits_h && text_w(root, &text, &cell_st)? <= label_room {
                let st = anchored(
                    with_color(cell_st.clone(), text_color),
                    HPos::Center,
                    VPos::Center,
                );
                draw_text(root, &text, ((a.0 + b.0) / 2, (a.1 + b.1) / 2), &st)?;
            }
        }
    }
    // Outline the cheapest cell(s) last so neighbours do not paint over it.
    if have {
        for k in 0..ny {
            for t in 0..nx {
                if cell(k, t) == Some(min) && cell_w >= 12.0 && cell_h >= 12.0 {
                    // Three nested 1 px frames: the SVG backend ignores the
                    // stroke width of rectangles.
                    let (a, b) = corners(t, k);
                    for d in 1..=3 {
                        root.draw(&Rectangle::new(
                            [(a.0 + d, a.1 + d), (b.0 - d, b.1 - d)],
                            BLACK.stroke_width(1),
                        ))
                        .map_err(draw_err)?;
                    }
                }
            }
        }
        draw_color_scale(root, (px.end + PAD * 2, py.start), py.end, min, max, dec)?;
    }
    draw_text(root, &note, (PAD, h - note_h / 2 - 2), &note_st)
}

fn draw_color_scale<DB: DrawingBackend>(
    root: &Area<DB>,
    (x, y_top): (i32, i32),
    y_bottom: i32,
    min: f64,
    max: f64,
    dec: usize,
) -> Res<()> {
    let bar_w = 18;
    let height = (y_bottom - y_top).max(2);
    let steps = 48;
    // Top = most expensive, bottom = cheapest.
    for s in 0..steps {
        let ya = y_top + height * s / steps;
        let yb = y_top + height * (s + 1) / steps;
        let t = (s as f64 + 0.5) / steps as f64;
        fill_rect(root, (x, ya), (x + bar_w, yb), scale_color(t))?;
    }
    root.draw(&Rectangle::new(
        [(x, y_top), (x + bar_w, y_top + height)],
        AXIS.stroke_width(1),
    ))
    .map_err(draw_err)?;
    let st = anchored(style(TICK_SIZE, TEXT), HPos::Left, VPos::Center);
    let lx = x + bar_w + 6;
    let room = 120 - PAD * 2 - bar_w - 6;
    if max > min {
        draw_text(
            root,
            &fit(root, &fmt_usd(max, dec), &st, room)?,
            (lx, y_top + 8),
            &st,
        )?;
        let mid = fmt_usd((min + max) / 2.0, dec);
        draw_text(
            root,
            &fit(root, &mid, &st, room)?,
            (lx, y_top + height / 2),
            &st,
        )?;
        draw_text(
            root,
            &fit(root, &fmt_usd(min, dec), &st, room)?,
            (lx, y_top + height - 8),
            &st,
        )?;
    } else {
        draw_text(
            root,
            &fit(root, &fmt_usd(min, dec), &st, room)?,
            (lx, y_top + height / 2),
            &st,
        )?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// (d) savings bars
// ---------------------------------------------------------------------------

fn draw_savings<DB: DrawingBackend>(
    root: &Area<DB>,
    title: &str,
    bars: &[(String, f64, f64)],
) -> Res<()> {
    if bars.is_empty() {
        return draw_no_data(root, title, "no policies given");
    }
    let top = draw_frame(root, title)?;
    let (w, h) = dims(root);

    // How many bars fit at one label row (22 px) each; the key below the plot
    // may grow when bars are left out, so settle both together.
    let mut key_h = LEGEND_ROW_H + 10;
    let (shown, items, legend) = loop {
        let plot_h = h - top - key_h - X_AREA_H - 6;
        let capacity = usize::try_from((plot_h / 22).max(1)).unwrap_or(1);
        let shown = bars.len().min(capacity);
        let items = savings_key(&bars[..shown], bars.len() - shown);
        let legend = layout_legend(root, &items, w - 2 * PAD)?;
        if legend.height <= key_h {
            break (shown, items, legend);
        }
        key_h = legend.height;
    };
    let bars_shown = &bars[..shown];

    let usd = |v: f64| if v.is_finite() { v } else { 0.0 };
    let lo = bars_shown.iter().map(|b| usd(b.1)).fold(0.0f64, f64::min);
    let hi = bars_shown.iter().map(|b| usd(b.1)).fold(0.0f64, f64::max);
    let dec = usd_decimals(hi - lo, lo.abs().max(hi.abs()));

    let tick_st = style(TICK_SIZE, TEXT);
    let pct_st = style(TICK_SIZE, TEXT);
    let mut pct_w = 0;
    for b in bars_shown {
        pct_w = pct_w.max(text_w(root, &fmt_pct(b.2), &pct_st)?);
    }
    // Label column: as wide as the longest label, at most half the width.
    let max_label_w = (w / 2).max(60);
    let mut labels = Vec::with_capacity(shown);
    let mut label_w = 0;
    for b in bars_shown {
        let l = fit(root, &clean(&b.0), &tick_st, max_label_w)?;
        label_w = label_w.max(text_w(root, &l, &tick_st)?);
        labels.push(l);
    }
    let y_area = label_w + 16;

    // Widen the x range so the percentage text fits beside the bar ends.
    let span = if hi - lo > 0.0 { hi - lo } else { 1.0 };
    let plot_w = f64::from((w - y_area - PAD * 3).max(50));
    let text_px = f64::from(pct_w + 22);
    let sides = f64::from(u8::from(hi > 0.0 || lo == 0.0) + u8::from(lo < 0.0));
    let total = span / (1.0 - sides * text_px / plot_w).max(0.4);
    let pad_units = text_px * total / plot_w;
    let x_lo = if lo < 0.0 { lo - pad_units } else { 0.0 };
    let x_hi = if hi > 0.0 || lo == 0.0 {
        hi.max(if lo == 0.0 && hi == 0.0 { span } else { hi }) + pad_units
    } else {
        0.0
    };
    let ticks_w = text_w(root, &fmt_usd(x_hi, dec), &tick_st)?.max(text_w(
        root,
        &fmt_usd(x_lo, dec),
        &tick_st,
    )?);
    let x_labels = usize::try_from((plot_w as i32 / (ticks_w + 30)).clamp(2, 10)).unwrap_or(2);

    let body = root
        .clone()
        .shrink((0, top), (w, (h - top - legend.height).max(1)));
    let n = shown;
    let ni = n as i32;
    let mut chart = ChartBuilder::on(&body)
        .margin_right(PAD * 2)
        .margin_top(6)
        .margin_left(PAD)
        .x_label_area_size(X_AREA_H)
        .y_label_area_size(y_area)
        .build_cartesian_2d(x_lo..x_hi, CellAxis(n))
        .map_err(draw_err)?;
    let x_fmt = |v: &f64| fmt_usd(*v, dec);
    // Bar i sits in row n - 1 - i so the first bar is at the top.
    let y_fmt = |v: &f64| {
        cell_index(*v, n)
            .and_then(|r| labels.get(n - 1 - r).cloned())
            .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(AXIS)
        .x_labels(x_labels)
        .y_labels(n)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(style(TICK_SIZE, TEXT))
        .axis_desc_style(style(DESC_SIZE, TEXT))
        .x_desc("savings (USD) vs baseline")
        .draw()
        .map_err(draw_err)?;

    let at = |x: f64, r: i32| chart.backend_coord(&(x, f64::from(r)));
    for (i, b) in bars_shown.iter().enumerate() {
        let r = ni - 1 - i as i32;
        let v = usd(b.1);
        let (top_px, bottom_px) = (at(0.0, r + 1).1, at(0.0, r).1);
        let row_px = bottom_px - top_px;
        let inset = if row_px > 40 {
            (row_px - 28) / 2
        } else {
            row_px / 6
        };
        let (y0, y1) = (top_px + inset, bottom_px - inset);
        let (x0, x1) = (at(0.0, r).0, at(v, r).0);
        if x0 != x1 {
            let color = if v < 0.0 { COSTS_MORE } else { SAVES };
            fill_rect(root, (x0.min(x1), y0), (x0.max(x1), y1), color)?;
        }
        let label = if b.1.is_finite() {
            fmt_pct(b.2)
        } else {
            "n/a".to_string()
        };
        let (h_pos, tx) = if v < 0.0 {
            (HPos::Right, x1 - 6)
        } else {
            (HPos::Left, x1 + 6)
        };
        let st = anchored(pct_st.clone(), h_pos, VPos::Center);
        draw_text(root, &label, (tx, (y0 + y1) / 2), &st)?;
    }
    // Zero line on top of the bars.
    let (z0, z1) = (at(0.0, 0), at(0.0, ni));
    root.draw(&PathElement::new(vec![z0, z1], AXIS.stroke_width(1)))
        .map_err(draw_err)?;

    draw_legend(root, &items, &legend, (PAD, h - legend.height))
}

/// Colour key for the savings chart (only the kinds present) plus the
/// "not shown" note.
fn savings_key(shown: &[(String, f64, f64)], hidden: usize) -> Vec<LegendItem> {
    let usd = |v: f64| if v.is_finite() { v } else { 0.0 };
    let mut items = Vec::new();
    if shown.iter().any(|b| usd(b.1) >= 0.0) {
        items.push(LegendItem {
            swatch: Swatch::Boxes(vec![SAVES]),
            label: "saves money".into(),
        });
    }
    if shown.iter().any(|b| usd(b.1) < 0.0) {
        items.push(LegendItem {
            swatch: Swatch::Boxes(vec![COSTS_MORE]),
            label: "costs more".into(),
        });
    }
    items.push(LegendItem {
        swatch: Swatch::Nothing,
        label: "bar-end %: saving relative to baseline cost".into(),
    });
    if hidden > 0 {
        items.push(LegendItem {
            swatch: Swatch::Nothing,
            label: format!("+{hidden} more not shown"),
        });
    }
    items
}

// ---------------------------------------------------------------------------
// PNG encoding
// ---------------------------------------------------------------------------

/// Minimal deterministic PNG writer (8-bit RGB, adaptive row filters, zlib
/// stream with fixed-Huffman deflate and LZ77). Kept here so the crate needs
/// neither plotters' `image` dependency nor a temp file: plotters can only
/// encode PNGs to a path.
mod png {
    const SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];

    /// Encode `rgb` (row-major, 3 bytes per pixel) as a PNG file.
    pub(super) fn encode_rgb8(rgb: &[u8], width: u32, height: u32) -> Result<Vec<u8>, String> {
        let stride = width as usize * 3;
        if width == 0 || height == 0 || rgb.len() != stride * height as usize {
            return Err(format!(
                "pixel buffer of {} bytes does not match {width}x{height} RGB",
                rgb.len()
            ));
        }
        let filtered = filter_rows(rgb, stride);
        let mut zlib = vec![0x78, 0x01];
        zlib.extend(deflate(&filtered));
        zlib.extend(adler32(&filtered).to_be_bytes());

        let mut ihdr = Vec::with_capacity(13);
        ihdr.extend(width.to_be_bytes());
        ihdr.extend(height.to_be_bytes());
        // bit depth 8, colour type 2 (RGB), deflate, adaptive filters, no interlace
        ihdr.extend([8, 2, 0, 0, 0]);

        let mut out = Vec::with_capacity(zlib.len() + 64);
        out.extend(SIGNATURE);
        chunk(&mut out, b"IHDR", &ihdr)?;
        chunk(&mut out, b"IDAT", &zlib)?;
        chunk(&mut out, b"IEND", &[])?;
        Ok(out)
    }

    fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) -> Result<(), String> {
        let len = u32::try_from(data.len()).map_err(|_| "PNG chunk too large".to_string())?;
        out.extend(len.to_be_bytes());
        let start = out.len();
        out.extend(kind);
        out.extend(data);
        let crc = crc32(&out[start..]);
        out.extend(crc.to_be_bytes());
        Ok(())
    }

    /// Pick, per row, the filter with the smallest sum of absolute values
    /// (the usual PNG heuristic) and prefix the row with its type byte.
    fn filter_rows(rgb: &[u8], stride: usize) -> Vec<u8> {
        let rows = rgb.len() / stride;
        let mut out = Vec::with_capacity((stride + 1) * rows);
        let zero = vec![0u8; stride];
        let mut cand = vec![0u8; stride];
        let mut best = vec![0u8; stride];
        for y in 0..rows {
            let row = &rgb[y * stride..(y + 1) * stride];
            let prev = if y == 0 {
                &zero[..]
            } else {
                &rgb[(y - 1) * stride..y * stride]
            };
            let mut best_kind = 0u8;
            let mut best_score = u64::MAX;
            for kind in 0..5u8 {
                filter(kind, row, prev, &mut cand);
                let score: u64 = cand
                    .iter()
                    .map(|&b| u64::from((b as i8).unsigned_abs()))
                    .sum();
                if score < best_score {
                    best_score = score;
                    best_kind = kind;
                    std::mem::swap(&mut best, &mut cand);
                }
            }
            out.push(best_kind);
            out.extend_from_slice(&best);
        }
        out
    }

    fn filter(kind: u8, row: &[u8], prev: &[u8], out: &mut [u8]) {
        for i in 0..row.len() {
            let a = if i >= 3 { row[i - 3] } else { 0 };
            let b = prev[i];
            let c = if i >= 3 { prev[i - 3] } else { 0 };
            let x = row[i];
            out[i] = match kind {
                0 => x,
                1 => x.wrapping_sub(a),
                2 => x.wrapping_sub(b),
                3 => x.wrapping_sub(((u16::from(a) + u16::from(b)) / 2) as u8),
                _ => x.wrapping_sub(paeth(a, b, c)),
            };
        }
    }

    fn paeth(a: u8, b: u8, c: u8) -> u8 {
        let p = i16::from(a) + i16::from(b) - i16::from(c);
        let (pa, pb, pc) = (
            (p - i16::from(a)).abs(),
            (p - i16::from(b)).abs(),
            (p - i16::from(c)).abs(),
        );
        if pa <= pb && pa <= pc {
            a
        } else if pb <= pc {
            b
        } else {
            c
        }
    }

    struct Bits {
        out: Vec<u8>,
        acc: u64,
        n: u32,
    }

    impl Bits {
        fn put(&mut self, value: u32, count: u32) {
            self.acc |= u64::from(value) << self.n;
            self.n += count;
            while self.n >= 8 {
                self.out.push(self.acc as u8);
                self.acc >>= 8;
                self.n -= 8;
            }
        }
        /// Huffman codes go most-significant bit first.
        fn code(&mut self, code: u32, len: u32) {
            let mut rev = 0;
            for k in 0..len {
                rev |= ((code >> k) & 1) << (len - 1 - k);
            }
            self.put(rev, len);
        }
        fn lit_len(&mut self, sym: u32) {
            match sym {
                0..=143 => self.code(0x30 + sym, 8),
                144..=255 => self.code(0x190 + (sym - 144), 9),
                256..=279 => self.code(sym - 256, 7),
                _ => self.code(0xC0 + (sym - 280), 8),
            }
        }
        fn finish(mut self) -> Vec<u8> {
            if self.n > 0 {
                self.out.push(self.acc as u8);
            }
            self.out
        }
    }

    const LEN_BASE: [u32; 29] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
        131, 163, 195, 227, 258,
    ];
    const LEN_EXTRA: [u32; 29] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ];
    const DIST_BASE: [u32; 30] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
        2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ];
    const DIST_EXTRA: [u32; 30] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12,
        13, 13,
    ];

    const WINDOW: usize = 1 << 15;
    const HASH_BITS: u32 = 15;
    const MAX_CHAIN: usize = 32;
    const MAX_MATCH: usize = 258;
    const NONE: u32 = u32::MAX;

    /// One final fixed-Huffman deflate block with hash-chain LZ77 matching.
    pub(super) fn deflate(data: &[u8]) -> Vec<u8> {
        let mut bits = Bits {
            out: Vec::with_capacity(data.len() / 8 + 64),
            acc: 0,
            n: 0,
        };
        bits.put(1, 1); // BFINAL
        bits.put(1, 2); // BTYPE = fixed Huffman
        let n = data.len();
        let mut head = vec![NONE; 1 << HASH_BITS];
        let mut prev = vec![NONE; WINDOW];
        let mut i = 0;
        while i < n {
            let (mut best_len, mut best_dist) = (0usize, 0usize);
            if i + 3 <= n {
                let max_len = (n - i).min(MAX_MATCH);
                let mut cand = head[hash(data, i)];
                let mut chain = 0;
                while cand != NONE && chain < MAX_CHAIN {
                    let c = cand as usize;
                    let dist = i - c;
                    if dist > WINDOW {
                        break;
                    }
                    if data[c + best_len.min(max_len - 1)] == data[i + best_len.min(max_len - 1)] {
                        let mut l = 0;
                        while l < max_len && data[c + l] == data[i + l] {
                            l += 1;
                        }
                        if l > best_len {
                            best_len = l;
                            best_dist = dist;
                            if l == max_len {
                                break;
                            }
                        }
                    }
                    cand = prev[c % WINDOW];
                    chain += 1;
                }
            }
            if best_len >= 3 {
                let li = LEN_BASE
                    .iter()
                    .rposition(|&b| b as usize <= best_len)
                    .unwrap_or(0);
                bits.lit_len(257 + li as u32);
                bits.put(best_len as u32 - LEN_BASE[li], LEN_EXTRA[li]);
                let di = DIST_BASE
                    .iter()
                    .rposition(|&b| b as usize <= best_dist)
                    .unwrap_or(0);
                bits.code(di as u32, 5);
                bits.put(best_dist as u32 - DIST_BASE[di], DIST_EXTRA[di]);
                for p in i..i + best_len {
                    insert(data, &mut head, &mut prev, p);
                }
                i += best_len;
            } else {
                bits.lit_len(u32::from(data[i]));
                insert(data, &mut head, &mut prev, i);
                i += 1;
            }
        }
        bits.lit_len(256);
        bits.finish()
    }

    fn hash(data: &[u8], i: usize) -> usize {
        let v = u32::from(data[i]) | u32::from(data[i + 1]) << 8 | u32::from(data[i + 2]) << 16;
        (v.wrapping_mul(0x9E37_79B1) >> (32 - HASH_BITS)) as usize
    }

    fn insert(data: &[u8], head: &mut [u32], prev: &mut [u32], i: usize) {
        if i + 3 <= data.len() {
            let h = hash(data, i);
            prev[i % WINDOW] = head[h];
            head[h] = i as u32;
        }
    }

    pub(super) fn adler32(data: &[u8]) -> u32 {
        let (mut a, mut b) = (1u32, 0u32);
        for chunk in data.chunks(5552) {
            for &x in chunk {
                a += u32::from(x);
                b += a;
            }
            a %= 65521;
            b %= 65521;
        }
        (b << 16) | a
    }

    const CRC_TABLE: [u32; 256] = {
        let mut table = [0u32; 256];
        let mut n = 0;
        while n < 256 {
            let mut c = n as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            table[n] = c;
            n += 1;
        }
        table
    };

    pub(super) fn crc32(data: &[u8]) -> u32 {
        let mut c = u32::MAX;
        for &b in data {
            c = CRC_TABLE[((c ^ u32::from(b)) & 0xFF) as usize] ^ (c >> 8);
        }
        c ^ u32::MAX
    }
}

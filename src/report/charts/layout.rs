//! What every chart kind shares: the embedded font, sizes and colours, text
//! measuring and shortening, the title frame, the "no data" chart, axis
//! helpers and the legend below the plot.

use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::register_font;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::ChartError;
use crate::report::fmt;

// ---------------------------------------------------------------------------
// Font, errors, sizes, colours
// ---------------------------------------------------------------------------

/// Family name the embedded font is registered under. It is also what the SVG
/// `font-family` attribute says, hence the CSS fallback list.
const FONT_FAMILY: &str = "DejaVu Sans, Verdana, Arial, sans-serif";
/// DejaVu Sans 2.37 (Bitstream Vera license, DejaVu changes public domain).
static FONT_BYTES: &[u8] = include_bytes!("../../../assets/fonts/DejaVuSans.ttf");
static FONT_READY: OnceLock<Result<(), String>> = OnceLock::new();

pub(super) fn ensure_font() -> Result<(), ChartError> {
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

pub(super) fn draw_err<E: std::fmt::Display>(e: E) -> ChartError {
    ChartError::Drawing(e.to_string())
}

pub(super) type Area<DB> = DrawingArea<DB, Shift>;
pub(super) type Res<T> = Result<T, ChartError>;

/// Font sizes are plotters sizes; SVG gets `size / 1.24` px, so 17 → 13.7 px.
pub(super) const TITLE_SIZE: f64 = 24.0;
pub(super) const DESC_SIZE: f64 = 18.0;
pub(super) const TICK_SIZE: f64 = 17.0;
pub(super) const LEGEND_SIZE: f64 = 17.0;
pub(super) const NOTE_SIZE: f64 = 17.0;

pub(super) const PAD: i32 = 12;
pub(super) const TITLE_H: i32 = 44;
pub(super) const LEGEND_ROW_H: i32 = 24;

pub(super) const TEXT: RGBColor = RGBColor(34, 34, 34);
pub(super) const MUTED: RGBColor = RGBColor(90, 90, 90);
pub(super) const AXIS: RGBColor = RGBColor(60, 60, 60);
pub(super) const GRID: RGBColor = RGBColor(225, 225, 225);

pub(super) fn style(size: f64, color: RGBColor) -> TextStyle<'static> {
    with_color(TextStyle::from((FONT_FAMILY, size).into_font()), color)
}

/// `TextStyle::color` wants a `&'a` colour; setting the field avoids that.
pub(super) fn with_color(mut st: TextStyle<'static>, color: RGBColor) -> TextStyle<'static> {
    st.color = color.to_backend_color();
    st
}

pub(super) fn anchored(s: TextStyle<'static>, h: HPos, v: VPos) -> TextStyle<'static> {
    s.pos(Pos::new(h, v))
}

pub(super) fn mix(c: RGBColor, with: RGBColor, t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let m = |a: u8, b: u8| (f64::from(a) * (1.0 - t) + f64::from(b) * t).round() as u8;
    RGBColor(m(c.0, with.0), m(c.1, with.1), m(c.2, with.2))
}

// ---------------------------------------------------------------------------
// Text, title frame, "no data"
// ---------------------------------------------------------------------------

/// Labels come from traces and configs: drop control characters (which XML
/// cannot carry even escaped) and surrounding blanks.
pub(super) fn clean(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    s.trim().to_string()
}

pub(super) fn text_w<DB: DrawingBackend>(root: &Area<DB>, text: &str, st: &TextStyle) -> Res<i32> {
    if text.is_empty() {
        return Ok(0);
    }
    let (w, _) = root.estimate_text_size(text, st).map_err(draw_err)?;
    Ok(i32::try_from(w).unwrap_or(i32::MAX))
}

/// Shorten `text` to fit `max_w` pixels, cutting the middle (config strings
/// differ at both ends) and marking the cut with `…`.
pub(super) fn fit<DB: DrawingBackend>(
    root: &Area<DB>,
    text: &str,
    st: &TextStyle,
    max_w: i32,
) -> Res<String> {
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

pub(super) fn draw_text<DB: DrawingBackend>(
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

pub(super) fn fill_rect<DB: DrawingBackend>(
    root: &Area<DB>,
    (x0, y0): (i32, i32),
    (x1, y1): (i32, i32),
    color: RGBColor,
) -> Res<()> {
    root.draw(&Rectangle::new([(x0, y0), (x1, y1)], color.filled()))
        .map_err(draw_err)
}

pub(super) fn dims<DB: DrawingBackend>(root: &Area<DB>) -> (i32, i32) {
    let (w, h) = root.dim_in_pixel();
    (
        i32::try_from(w).unwrap_or(i32::MAX),
        i32::try_from(h).unwrap_or(i32::MAX),
    )
}

/// White background and the (shortened) title; returns the y where the
/// chart body may start.
pub(super) fn draw_frame<DB: DrawingBackend>(root: &Area<DB>, title: &str) -> Res<i32> {
    root.fill(&WHITE).map_err(draw_err)?;
    let (w, _) = dims(root);
    let st = anchored(style(TITLE_SIZE, TEXT), HPos::Center, VPos::Center);
    let title = fit(root, &clean(title), &st, w - 2 * PAD)?;
    draw_text(root, &title, (w / 2, TITLE_H / 2), &st)?;
    Ok(TITLE_H)
}

/// The chart for input that has nothing to plot: title plus an explanation.
pub(super) fn draw_no_data<DB: DrawingBackend>(root: &Area<DB>, title: &str, why: &str) -> Res<()> {
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
// Legend
// ---------------------------------------------------------------------------

#[derive(Clone, Copy)]
pub(super) enum Marker {
    Circle,
    Square,
    Triangle,
    Cross,
}
pub(super) const MARKERS: [Marker; 4] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Cross,
];

pub(super) enum Swatch {
    Boxes(Vec<RGBColor>),
    Line(RGBColor, u32, Option<Marker>),
    Nothing,
}

pub(super) struct LegendItem {
    pub(super) swatch: Swatch,
    pub(super) label: String,
}

/// Where each legend entry goes: x offset and row, plus the fitted labels.
pub(super) struct LegendLayout {
    slots: Vec<(i32, i32)>,
    /// Pixels the legend takes below the plot.
    pub(super) height: i32,
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
pub(super) fn layout_legend<DB: DrawingBackend>(
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

pub(super) fn draw_marker<DB: DrawingBackend>(
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

pub(super) fn draw_legend<DB: DrawingBackend>(
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
// Axes
// ---------------------------------------------------------------------------

/// Decimals that keep ticks about `span / 8` apart distinguishable; at least
/// 2 (cents), none once values reach thousands of dollars.
pub(super) fn usd_decimals(span: f64, max_abs: f64) -> usize {
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

/// Upper bound for a 0-based value axis: a bit of head room, never empty.
pub(super) fn axis_max(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max * 1.06
    } else {
        1.0
    }
}

/// Formatter for integer-valued axes (call numbers); blanks non-integers.
pub(super) fn int_tick(v: f64, lo: usize, hi: usize) -> String {
    let r = v.round();
    if (v - r).abs() < 1e-6 && r >= lo as f64 && r <= hi as f64 {
        // `r` is a whole number in `lo..=hi`, so the cast is exact.
        fmt::thousands(r as u64)
    } else {
        String::new()
    }
}

/// Size of the y label area: widest tick label plus the rotated description.
pub(super) fn y_area_w<DB: DrawingBackend>(root: &Area<DB>, ticks: &[String]) -> Res<i32> {
    let st = style(TICK_SIZE, TEXT);
    let mut w = 0;
    for t in ticks {
        w = w.max(text_w(root, t, &st)?);
    }
    Ok(w + 14 + 30)
}

/// Height of the x label area: tick labels plus the axis description.
pub(super) const X_AREA_H: i32 = 50;

/// The part of the chart the plot and its axis labels get: below the title
/// (`top`), above the legend or note (`bottom_h` pixels) and left of
/// `right_w` pixels kept free for a colour scale.
pub(super) fn plot_area<DB: DrawingBackend>(
    root: &Area<DB>,
    top: i32,
    right_w: i32,
    bottom_h: i32,
) -> Area<DB> {
    let (w, h) = dims(root);
    root.clone()
        .shrink((0, top), (w - right_w, (h - top - bottom_h).max(1)))
}

/// A chart builder on `body` with the margins and label areas every kind
/// uses; `margin_right` keeps the last x tick label inside the image,
/// `y_area` is the width of the y label area ([`y_area_w`]).
pub(super) fn plot_builder<'a, 'b, DB: DrawingBackend>(
    body: &'a Area<DB>,
    margin_right: i32,
    y_area: i32,
) -> ChartBuilder<'a, 'b, DB> {
    let mut builder = ChartBuilder::on(body);
    builder
        .margin_right(margin_right)
        .margin_top(6)
        .margin_left(PAD)
        .x_label_area_size(X_AREA_H)
        .y_label_area_size(y_area);
    builder
}

/// A `0..n` axis of `n` equal cells whose tick marks and labels sit at the
/// cell centres `0.5, 1.5, …` (thinned to the requested count). plotters'
/// segmented axes add a spare segment and its key-point wrapper cannot format
/// `f64`, hence this small axis of our own.
#[derive(Clone)]
pub(super) struct CellAxis(pub(super) usize);

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
pub(super) fn cell_index(v: f64, n: usize) -> Option<usize> {
    let i = (v - 0.5).round();
    ((v - 0.5 - i).abs() < 1e-6 && i >= 0.0 && i < n as f64).then_some(i as usize)
}

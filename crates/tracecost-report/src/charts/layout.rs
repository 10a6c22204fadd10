//! What every chart kind shares: sizes and colours, label cleaning and
//! wrapping, the title block, the "no data" chart, legends, notes, axes and
//! markers.
//!
//! Nothing here shortens text: a title or label that is too wide wraps onto
//! more lines (at spaces, or after `+`, `,`, `:`, `/` in config strings),
//! and the caller makes room for the lines it gets.

use super::svg::{ASCENT, Anchor, DESCENT, Rgb, Svg, baseline_for, text_width};
use crate::fmt;

// ---------------------------------------------------------------------------
// Sizes and colours
// ---------------------------------------------------------------------------

/// Font sizes in SVG pixels.
pub(super) const TITLE_SIZE: f64 = 18.0;
pub(super) const TEXT_SIZE: f64 = 13.0;

/// Line height for text of `size` px.
pub(super) fn line_h(size: f64) -> f64 {
    (size * 1.3).round()
}

pub(super) const PAD: f64 = 12.0;

pub(super) const TEXT: Rgb = Rgb(34, 34, 34);
pub(super) const MUTED: Rgb = Rgb(90, 90, 90);
pub(super) const AXIS: Rgb = Rgb(60, 60, 60);
pub(super) const GRID: Rgb = Rgb(225, 225, 225);

/// Okabe–Ito colours, ordered for contrast against white (yellow last):
/// distinguishable with the common colour-vision deficiencies.
pub(super) const PALETTE: [Rgb; 8] = [
    Rgb(0, 114, 178),   // blue
    Rgb(213, 94, 0),    // vermillion
    Rgb(0, 158, 115),   // bluish green
    Rgb(204, 121, 167), // reddish purple
    Rgb(230, 159, 0),   // orange
    Rgb(86, 180, 233),  // sky blue
    Rgb(0, 0, 0),       // black
    Rgb(240, 228, 66),  // yellow
];
/// Status quo and recommended keep these colours on every fleet chart.
pub(super) const STATUS_QUO: Rgb = Rgb(230, 159, 0); // orange
pub(super) const RECOMMENDED: Rgb = Rgb(0, 158, 115); // bluish green
/// Money saved / money lost, used wherever a sign is coloured.
pub(super) const SAVES: Rgb = Rgb(0, 158, 115);
pub(super) const COSTS_MORE: Rgb = Rgb(213, 94, 0);

// ---------------------------------------------------------------------------
// Text
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

/// Where a line may end, coarsest first: between words and between the
/// parts of a combined config (`+`); then inside a part, after its
/// separators. Each piece keeps its separator, so joined lines read back
/// as the original string.
const BREAK_LEVELS: [&[char]; 2] = [&[' ', '+'], &[',', ':', ';', '/', '|']];

/// `text` cut after every occurrence of one of `seps`.
fn split_after<'a>(text: &'a str, seps: &[char]) -> Vec<&'a str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if seps.contains(&c) {
            let end = i + c.len_utf8();
            pieces.push(&text[start..end]);
            start = end;
        }
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// Greedy packing of `text` at break level `level` (past the last level,
/// between characters): a piece that does not fit the current line starts
/// the next one, unless it is wider than a line by itself, in which case
/// its finer pieces fill the current line. So `a:b=1,c=2+d:e=3` breaks at
/// `+` when that is enough and never splits `d:e=3` needlessly.
fn wrap_level(
    text: &str,
    level: usize,
    fits: &dyn Fn(&str) -> bool,
    lines: &mut Vec<String>,
    cur: &mut String,
) {
    let pieces: Vec<String> = match BREAK_LEVELS.get(level) {
        Some(seps) => split_after(text, seps)
            .into_iter()
            .map(str::to_string)
            .collect(),
        None => text.chars().map(String::from).collect(),
    };
    for piece in pieces {
        let candidate = format!("{cur}{piece}");
        if fits(&candidate) || (cur.is_empty() && level >= BREAK_LEVELS.len()) {
            *cur = candidate;
            continue;
        }
        if fits(&piece) {
            if !cur.trim().is_empty() {
                lines.push(cur.trim_end().to_string());
            }
            *cur = piece;
        } else {
            // Too wide even alone: its finer pieces continue this line.
            wrap_level(&piece, level + 1, fits, lines, cur);
        }
    }
}

/// `text` broken into lines no wider than `max_w` at `size` px. Breaks go at
/// spaces and `+` first, then at a config's inner separators, and only a
/// run with no separator at all is split between characters. Every
/// character survives: nothing is cut or replaced (spaces at a break are
/// dropped).
pub(super) fn wrap(text: &str, size: f64, max_w: f64) -> Vec<String> {
    let text = clean(text);
    if text.is_empty() {
        return vec![];
    }
    let max_w = max_w.max(size * 2.0);
    let fits = |s: &str| text_width(s.trim_end(), size) <= max_w;
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    wrap_level(&text, 0, &fits, &mut lines, &mut cur);
    let last = cur.trim_end();
    if !last.is_empty() {
        lines.push(last.to_string());
    }
    lines
}

/// Widest line of `lines` at `size` px.
pub(super) fn widest(lines: &[String], size: f64) -> f64 {
    lines
        .iter()
        .map(|l| text_width(l, size))
        .fold(0.0, f64::max)
}

/// Draw `lines` with the first baseline so that the block's top is `top`.
/// Returns the y just below the block.
pub(super) fn draw_lines(
    svg: &mut Svg,
    lines: &[String],
    (x, top): (f64, f64),
    size: f64,
    color: Rgb,
    anchor: Anchor,
) -> f64 {
    let lh = line_h(size);
    for (i, l) in lines.iter().enumerate() {
        let base = top + (lh - (ASCENT + DESCENT) * size) / 2.0 + ASCENT * size + i as f64 * lh;
        svg.text((x, base), l, size, color, anchor);
    }
    top + lines.len() as f64 * lh
}

// ---------------------------------------------------------------------------
// Title and "no data"
// ---------------------------------------------------------------------------

fn title_lines(title: &str, width: f64) -> Vec<String> {
    wrap(title, TITLE_SIZE, width - 2.0 * PAD)
}

/// Height of the title block for `title` on a chart `width` px wide.
pub(super) fn title_height(title: &str, width: f64) -> f64 {
    let n = title_lines(title, width).len().max(1);
    8.0 + n as f64 * line_h(TITLE_SIZE) + 8.0
}

/// The (wrapped) title at the top; returns the y where the body may start.
pub(super) fn draw_title(svg: &mut Svg, title: &str) -> f64 {
    let lines = title_lines(title, svg.w);
    let bottom = draw_lines(
        svg,
        &lines,
        (svg.w / 2.0, 8.0),
        TITLE_SIZE,
        TEXT,
        Anchor::Middle,
    );
    bottom.max(8.0 + line_h(TITLE_SIZE)) + 8.0
}

/// The chart for input that has nothing to plot: title plus an explanation.
pub(super) fn draw_no_data(svg: &mut Svg, title: &str, why: &str) {
    draw_message(svg, title, "No data to plot", why);
}

/// The chart for a size too small to hold the axes, legend and notes the
/// data needs: saying so beats text spilling out of the image.
pub(super) fn draw_too_small(svg: &mut Svg, title: &str) {
    draw_message(
        svg,
        title,
        "Too small to draw",
        "this chart needs more height for its axes, legend and notes",
    );
}

/// Title, a framed headline and an explanation under it. On a canvas too
/// small for all of it, the explanation's lines that would leave the frame
/// are left out (the title and headline come first).
fn draw_message(svg: &mut Svg, title: &str, headline: &str, why: &str) {
    let top = draw_title(svg, title);
    let (x0, x1) = (PAD * 2.0, svg.w - PAD * 2.0);
    let (y0, y1) = (top + PAD / 2.0, (svg.h - PAD).max(top + PAD));
    if y1 - y0 < 4.0 {
        return;
    }
    svg.frame(x0, y0, x1, y1, GRID, 2.0);
    let big = TEXT_SIZE + 4.0;
    let room = ((y1 - y0 - 4.0 - line_h(big)) / line_h(TEXT_SIZE))
        .floor()
        .max(0.0) as usize;
    let mut why = wrap(why, TEXT_SIZE, x1 - x0 - 2.0 * PAD);
    why.truncate(room);
    let block = line_h(big) + why.len() as f64 * line_h(TEXT_SIZE);
    if block > y1 - y0 - 4.0 {
        return;
    }
    let top = ((y0 + y1) / 2.0 - block / 2.0).max(y0 + 2.0);
    let below = draw_lines(
        svg,
        &[headline.to_string()],
        (svg.w / 2.0, top),
        big,
        MUTED,
        Anchor::Middle,
    );
    draw_lines(
        svg,
        &why,
        (svg.w / 2.0, below),
        TEXT_SIZE,
        MUTED,
        Anchor::Middle,
    );
}

// ---------------------------------------------------------------------------
// Legend and notes
// ---------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Marker {
    Circle,
    Square,
    Triangle,
    Diamond,
}
pub(super) const MARKERS: [Marker; 4] = [
    Marker::Circle,
    Marker::Square,
    Marker::Triangle,
    Marker::Diamond,
];

pub(super) fn draw_marker(svg: &mut Svg, m: Marker, (x, y): (f64, f64), color: Rgb) {
    match m {
        Marker::Circle => svg.circle((x, y), 3.5, color),
        Marker::Square => svg.rect(x - 3.5, y - 3.5, x + 3.5, y + 3.5, color),
        Marker::Triangle => svg.polygon(
            &[(x, y - 4.5), (x + 4.5, y + 3.5), (x - 4.5, y + 3.5)],
            color,
        ),
        Marker::Diamond => svg.polygon(
            &[(x, y - 5.0), (x + 4.5, y), (x, y + 5.0), (x - 4.5, y)],
            color,
        ),
    }
}

pub(super) enum Swatch {
    Boxes(Vec<Rgb>),
    Line(Rgb, f64, Option<Marker>),
    Nothing,
}

pub(super) struct LegendItem {
    pub(super) swatch: Swatch,
    pub(super) label: String,
}

impl LegendItem {
    pub(super) fn boxes(colors: Vec<Rgb>, label: impl Into<String>) -> LegendItem {
        LegendItem {
            swatch: Swatch::Boxes(colors),
            label: label.into(),
        }
    }

    pub(super) fn text(label: impl Into<String>) -> LegendItem {
        LegendItem {
            swatch: Swatch::Nothing,
            label: label.into(),
        }
    }
}

/// Where each legend entry goes (x offset, y offset) with its label lines.
pub(super) struct LegendLayout {
    slots: Vec<(f64, f64, Vec<String>)>,
    /// Pixels the legend takes.
    pub(super) height: f64,
}

const SWATCH_LINE_W: f64 = 30.0;

fn swatch_w(s: &Swatch) -> f64 {
    match s {
        Swatch::Boxes(c) => (c.len() as f64 * 14.0).max(14.0),
        Swatch::Line(..) => SWATCH_LINE_W,
        Swatch::Nothing => 0.0,
    }
}

fn lead_w(s: &Swatch) -> f64 {
    let w = swatch_w(s);
    if w > 0.0 { w + 7.0 } else { 0.0 }
}

/// Entries flow left to right and wrap onto rows; an entry wider than the
/// whole row wraps its label onto several lines.
pub(super) fn layout_legend(items: &[LegendItem], avail_w: f64) -> LegendLayout {
    let gap = 24.0;
    let lh = line_h(TEXT_SIZE);
    let mut slots = Vec::with_capacity(items.len());
    let (mut x, mut y, mut row_h) = (0.0f64, 0.0f64, 0.0f64);
    for it in items {
        let lead = lead_w(&it.swatch);
        let lines = wrap(&it.label, TEXT_SIZE, avail_w - lead);
        let w = lead + widest(&lines, TEXT_SIZE);
        let h = lines.len().max(1) as f64 * lh;
        if x > 0.0 && x + w > avail_w {
            x = 0.0;
            y += row_h + 4.0;
            row_h = 0.0;
        }
        slots.push((x, y, lines));
        x += w + gap;
        row_h = row_h.max(h);
    }
    let height = if items.is_empty() {
        0.0
    } else {
        y + row_h + 8.0
    };
    LegendLayout { slots, height }
}

pub(super) fn draw_legend(
    svg: &mut Svg,
    items: &[LegendItem],
    lay: &LegendLayout,
    (x0, y0): (f64, f64),
) {
    let lh = line_h(TEXT_SIZE);
    for (it, (dx, dy, lines)) in items.iter().zip(&lay.slots) {
        let (x, top) = (x0 + dx, y0 + 4.0 + dy);
        let cy = top + lh / 2.0;
        match &it.swatch {
            Swatch::Boxes(colors) => {
                for (k, c) in colors.iter().enumerate() {
                    let bx = x + k as f64 * 14.0;
                    svg.rect(bx, cy - 6.0, bx + 12.0, cy + 6.0, *c);
                    svg.frame(
                        bx,
                        cy - 6.0,
                        bx + 12.0,
                        cy + 6.0,
                        c.mix(Rgb(0, 0, 0), 0.35),
                        1.0,
                    );
                }
            }
            Swatch::Line(c, width, marker) => {
                svg.line((x, cy), (x + SWATCH_LINE_W, cy), *c, *width);
                if let Some(m) = marker {
                    draw_marker(svg, *m, (x + SWATCH_LINE_W / 2.0, cy), *c);
                }
            }
            Swatch::Nothing => {}
        }
        draw_lines(
            svg,
            lines,
            (x + lead_w(&it.swatch), top),
            TEXT_SIZE,
            TEXT,
            Anchor::Start,
        );
    }
}

/// Notes under a chart: each wrapped to the width.
pub(super) fn wrap_notes(notes: &[String], avail_w: f64) -> Vec<String> {
    notes
        .iter()
        .flat_map(|n| wrap(n, TEXT_SIZE, avail_w))
        .collect()
}

pub(super) fn notes_height(lines: &[String]) -> f64 {
    if lines.is_empty() {
        0.0
    } else {
        lines.len() as f64 * line_h(TEXT_SIZE) + 8.0
    }
}

// ---------------------------------------------------------------------------
// Axes
// ---------------------------------------------------------------------------

/// A linear map from data values `d0..d1` to pixels `p0..p1`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Scale {
    pub(super) d0: f64,
    pub(super) d1: f64,
    pub(super) p0: f64,
    pub(super) p1: f64,
}

impl Scale {
    pub(super) fn map(&self, v: f64) -> f64 {
        let span = self.d1 - self.d0;
        if span == 0.0 || !span.is_finite() {
            return (self.p0 + self.p1) / 2.0;
        }
        self.p0 + (v - self.d0) / span * (self.p1 - self.p0)
    }
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
pub(super) fn nice_step(raw: f64) -> f64 {
    if !raw.is_finite() || raw <= 0.0 {
        return 1.0;
    }
    let mag = 10f64.powf(raw.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * mag >= raw * (1.0 - 1e-9) {
            return m * mag;
        }
    }
    10.0 * mag
}

/// Round bounds covering `lo..hi` and the ticks between them, about
/// `target` of them.
pub(super) fn nice_ticks(lo: f64, hi: f64, target: usize) -> (f64, f64, Vec<f64>) {
    let (lo, hi) = if hi > lo {
        (lo, hi)
    } else if lo == 0.0 {
        (0.0, 1.0)
    } else {
        (lo - lo.abs() * 0.5, hi + hi.abs() * 0.5)
    };
    let step = nice_step((hi - lo) / target.max(1) as f64);
    let a = (lo / step).floor() * step;
    let b = (hi / step).ceil() * step;
    let n = ((b - a) / step).round() as usize;
    let ticks = (0..=n.min(1000))
        .map(|i| {
            let v = a + i as f64 * step;
            // Snap tiny float residue (0.30000000000000004) to the step grid.
            (v / step).round() * step
        })
        .collect();
    (a, b, ticks)
}

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

/// Decimals that tell ticks `step` dollars apart from each other: none
/// for whole-dollar steps, cents for 0.1 or 0.25 steps, more below.
pub(super) fn tick_decimals(step: f64) -> usize {
    if !step.is_finite() || step <= 0.0 {
        return 2;
    }
    let mut d = 0;
    while d < 6
        && ((step * 10f64.powi(d as i32)).round() - step * 10f64.powi(d as i32)).abs() > 1e-6
    {
        d += 1;
    }
    if d == 1 { 2 } else { d }
}

/// USD tick labels for `ticks`, with as many decimals as their step needs.
pub(super) fn usd_ticks(ticks: &[f64]) -> Vec<(f64, String)> {
    let step = if ticks.len() >= 2 {
        ticks[1] - ticks[0]
    } else {
        1.0
    };
    let dec = tick_decimals(step);
    ticks
        .iter()
        .map(|v| (*v, fmt::dollars_fixed(*v, dec)))
        .collect()
}

/// Horizontal grid lines and right-aligned labels for a vertical value axis.
pub(super) fn draw_y_axis(
    svg: &mut Svg,
    scale: &Scale,
    ticks: &[(f64, String)],
    (x_left, x_right): (f64, f64),
) {
    for (v, label) in ticks {
        let y = scale.map(*v);
        svg.line((x_left, y), (x_right, y), GRID, 1.0);
        svg.text(
            (x_left - 6.0, baseline_for(y, TEXT_SIZE)),
            label,
            TEXT_SIZE,
            TEXT,
            Anchor::End,
        );
    }
}

/// Width the labels of a vertical axis need left of the plot.
pub(super) fn y_labels_w(ticks: &[(f64, String)]) -> f64 {
    ticks
        .iter()
        .map(|(_, l)| text_width(l, TEXT_SIZE))
        .fold(0.0, f64::max)
        + 10.0
}

/// Below a plot: the x axis (labels and what it measures), the legend under
/// it and the notes under the legend, the foot the line and point charts
/// share.
#[allow(clippy::too_many_arguments)]
pub(super) fn draw_x_foot(
    svg: &mut Svg,
    labels: &[(f64, String)],
    desc: &str,
    (x0, x1): (f64, f64),
    plot_bottom: f64,
    items: &[LegendItem],
    legend: &LegendLayout,
    notes: &[String],
) {
    let legend_top = draw_x_axis(svg, labels, desc, (x0 + x1) / 2.0, plot_bottom);
    draw_legend(svg, items, legend, (PAD, legend_top));
    draw_lines(
        svg,
        notes,
        (PAD, legend_top + legend.height),
        TEXT_SIZE,
        MUTED,
        Anchor::Start,
    );
}

/// The x axis's labels under a plot whose bottom is `plot_bottom`, then its
/// description `desc` (none when empty) centred on `centre`; returns where
/// what follows may start. Every chart with an x axis draws it this way.
pub(super) fn draw_x_axis(
    svg: &mut Svg,
    labels: &[(f64, String)],
    desc: &str,
    centre: f64,
    plot_bottom: f64,
) -> f64 {
    let bounds = (PAD, svg.w - PAD);
    draw_x_labels(svg, labels, plot_bottom + 6.0, bounds);
    let desc_top = plot_bottom + 6.0 + line_h(TEXT_SIZE) + 2.0;
    if desc.is_empty() {
        return desc_top;
    }
    draw_x_desc(svg, desc, centre, desc_top);
    desc_top + line_h(TEXT_SIZE) + 2.0
}

/// Labels of a per-call axis of `n` calls spanning `x0..x1` (mapped by
/// `xs`): 1 and round numbers, as many as fit (at most 12).
pub(super) fn call_axis_labels(n: usize, xs: &Scale, (x0, x1): (f64, f64)) -> Vec<(f64, String)> {
    let max_labels = ((x1 - x0) / (text_width(&call_label(n), TEXT_SIZE) + 30.0)).max(2.0) as usize;
    call_ticks(n, max_labels.min(12))
        .into_iter()
        .map(|c| (xs.map(c as f64), call_label(c)))
        .collect()
}

/// Labels under a horizontal axis at `y` (top of the label row), centred on
/// their ticks but kept inside `bounds`; labels that would overlap the one
/// before are skipped, so pass them in order of importance along the axis.
fn draw_x_labels(svg: &mut Svg, labels: &[(f64, String)], y: f64, bounds: (f64, f64)) {
    let mut last_end = f64::NEG_INFINITY;
    for (x, label) in labels {
        let w = text_width(label, TEXT_SIZE);
        let cx = x.clamp(
            bounds.0 + w / 2.0,
            (bounds.1 - w / 2.0).max(bounds.0 + w / 2.0),
        );
        if cx - w / 2.0 < last_end + 8.0 {
            continue;
        }
        svg.line((*x, y - 6.0), (*x, y - 2.0), AXIS, 1.0);
        draw_lines(
            svg,
            std::slice::from_ref(label),
            (cx, y),
            TEXT_SIZE,
            TEXT,
            Anchor::Middle,
        );
        last_end = cx + w / 2.0;
    }
}

/// The x axis description, centred under the plot but kept inside the
/// image (a narrow chart's plot may sit right of centre).
fn draw_x_desc(svg: &mut Svg, text: &str, cx: f64, top: f64) {
    let half = text_width(text, TEXT_SIZE) / 2.0;
    let cx = cx.clamp(PAD + half, (svg.w - PAD - half).max(PAD + half));
    draw_lines(
        svg,
        &[text.to_string()],
        (cx, top),
        TEXT_SIZE,
        TEXT,
        Anchor::Middle,
    );
}

/// Height of the row of x labels plus the axis description under it.
/// Labels start 6 px below the axis; the description 2 px below them; what
/// follows 2 px below that.
pub(super) fn x_axis_h(has_desc: bool) -> f64 {
    6.0 + line_h(TEXT_SIZE)
        + 2.0
        + if has_desc {
            line_h(TEXT_SIZE) + 2.0
        } else {
            0.0
        }
}

/// Call-number ticks for an axis of `n` calls: 1 and round numbers.
pub(super) fn call_ticks(n: usize, max_labels: usize) -> Vec<usize> {
    let step = nice_step(n as f64 / max_labels.max(1) as f64).max(1.0) as usize;
    let mut ticks = vec![1];
    let mut c = step;
    while c <= n {
        if c > 1 {
            ticks.push(c);
        }
        c += step;
    }
    ticks
}

/// Thousands-separated call number, as tables print it.
pub(super) fn call_label(c: usize) -> String {
    fmt::thousands(c as u64)
}

/// A plot shorter than this shows nothing readable.
const MIN_PLOT_H: f64 = 40.0;

/// Vertical extent of a plot with a value axis: the title and the y axis
/// description (written above the axis, never rotated) on top, `bottom_h`
/// pixels kept free below for the x axis, legend and notes. `None` (after
/// drawing the "too small" chart) when that leaves no room for a plot.
pub(super) fn plot_rows(
    svg: &mut Svg,
    title: &str,
    y_desc: &str,
    bottom_h: f64,
) -> Option<(f64, f64)> {
    let desc = wrap(y_desc, TEXT_SIZE, svg.w - 2.0 * PAD);
    let desc_h = if desc.is_empty() {
        6.0
    } else {
        desc.len() as f64 * line_h(TEXT_SIZE) + 8.0
    };
    if title_height(title, svg.w) + desc_h + MIN_PLOT_H + bottom_h + PAD / 2.0 > svg.h {
        draw_too_small(svg, title);
        return None;
    }
    let top = draw_title(svg, title);
    draw_lines(svg, &desc, (PAD, top), TEXT_SIZE, TEXT, Anchor::Start);
    let plot_top = top + desc_h;
    let plot_bottom = svg.h - PAD / 2.0 - bottom_h;
    Some((plot_top, plot_bottom))
}

/// Height a value-axis chart needs at `width`: a plot about 40% as tall as
/// the chart is wide, plus the title, y description and `bottom_h`.
pub(super) fn value_chart_height(title: &str, width: f64, bottom_h: f64) -> f64 {
    let plot = (width * 0.4).clamp(180.0, 600.0);
    title_height(title, width) + line_h(TEXT_SIZE) + 8.0 + plot + bottom_h + PAD / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_every_character_and_breaks_at_separators() {
        let s =
            "langchain-clear:trigger=100000,keep=3,exclude=recall_tool_result+claude-code:ttl=5m";
        let lines = wrap(s, 13.0, 200.0);
        assert!(lines.len() > 1, "{lines:?}");
        assert_eq!(lines.concat(), s);
        for l in &lines {
            assert!(text_width(l, 13.0) <= 200.0, "{l}");
        }
        assert!(lines[0].ends_with([',', ':', '+']), "{lines:?}");
        // A combined config breaks between its parts when that is enough.
        let s = "langchain-clear:trigger=100000,keep=3+native:manifest=cached,ttl=5m";
        let lines = wrap(s, 13.0, 300.0);
        assert_eq!(
            lines,
            [
                "langchain-clear:trigger=100000,keep=3+",
                "native:manifest=cached,ttl=5m"
            ]
        );
        // One unbreakable run still fits by splitting between characters.
        let x = "x".repeat(300);
        let lines = wrap(&x, 13.0, 100.0);
        assert_eq!(lines.concat(), x);
        // Spaces are where words break; they are not kept at line ends.
        let lines = wrap("Input tokens per call by billing class", 13.0, 120.0);
        assert_eq!(lines.join(" "), "Input tokens per call by billing class");
    }

    proptest::proptest! {
        /// Wrapping loses no character (only the spaces at breaks) and no
        /// line is wider than asked unless it is a single character.
        #[test]
        fn wrap_is_lossless_and_fits(
            text in "[a-z=:,+_ 0-9.-]{0,200}",
            max_w in 20.0f64..600.0,
        ) {
            let lines = wrap(&text, 13.0, max_w);
            let squeeze = |s: &str| s.chars().filter(|c| *c != ' ').collect::<String>();
            proptest::prop_assert_eq!(squeeze(&lines.concat()), squeeze(&text));
            for l in &lines {
                proptest::prop_assert!(
                    text_width(l, 13.0) <= max_w.max(26.0) || l.chars().count() == 1,
                    "{:?} wider than {}", l, max_w
                );
                proptest::prop_assert!(!l.is_empty() && l.trim() == l.as_str());
            }
        }
    }

    #[test]
    fn nice_ticks_cover_the_range() {
        let (a, b, t) = nice_ticks(0.0, 7.3, 5);
        assert_eq!((a, b), (0.0, 8.0));
        assert_eq!(t, vec![0.0, 2.0, 4.0, 6.0, 8.0]);
        let (a, b, _) = nice_ticks(-1.2, 3.1, 6);
        assert!(a <= -1.2 && b >= 3.1);
        assert_eq!(call_ticks(1000, 8), vec![1, 200, 400, 600, 800, 1000]);
        assert_eq!(call_ticks(3, 8), vec![1, 2, 3]);
        assert_eq!(tick_decimals(100.0), 0);
        assert_eq!(tick_decimals(0.5), 2);
        assert_eq!(tick_decimals(0.25), 2);
        assert_eq!(tick_decimals(0.005), 3);
    }
}

//! Horizontal bar charts with one row per label: savings by policy, fleet
//! cost by config, and status quo vs recommended cost per project.
//!
//! All three share one layout: wrapped labels in a column on the left, one
//! or more bars per row, each with its value written beyond the bar end. The
//! value axis keeps room for those texts on both sides of zero, so a label
//! never leaves the plot whatever the sign. Rows take the height their label
//! lines need; [`needed_height`] adds them up for `suggested_height`, and a
//! chart given less height draws the rows that fit and says how many it
//! left out.

use super::layout::{
    AXIS, COSTS_MORE, GRID, LegendItem, MUTED, PAD, RECOMMENDED, SAVES, STATUS_QUO, Scale, TEXT,
    TEXT_SIZE, clean, draw_legend, draw_lines, draw_no_data, draw_title, draw_too_small,
    draw_x_axis, layout_legend, line_h, nice_ticks, notes_height, title_height, usd_decimals,
    usd_ticks, widest, wrap, wrap_notes, x_axis_h,
};
use super::svg::{Anchor, Rgb, Svg, baseline_for, text_width};
use crate::fmt;

const OTHER: Rgb = Rgb(86, 150, 200); // muted blue
const ZEBRA: Rgb = Rgb(246, 246, 246);

struct Bar {
    /// USD; non-finite = not available (drawn as "n/a" at zero).
    value: f64,
    color: Rgb,
    /// Written beyond the bar end.
    text: String,
}

struct Row {
    label: String,
    bars: Vec<Bar>,
}

struct Spec {
    title: String,
    rows: Vec<Row>,
    legend: Vec<LegendItem>,
    x_desc: String,
    /// Note for `n` rows left out for lack of height.
    hidden: fn(usize) -> String,
}

/// Thickness of one bar: rows with two bars use thinner ones.
fn bar_thickness(bars: usize) -> f64 {
    if bars <= 1 { 16.0 } else { 12.0 }
}

/// Room for the value texts beyond the bar ends: (left of zero, right of
/// zero). Taken over all rows, so the layout does not depend on how many
/// fit.
fn value_pads(rows: &[Row]) -> (f64, f64) {
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let side = |neg: bool| {
        rows.iter()
            .flat_map(|r| r.bars.iter())
            .filter(|b| (finite(b.value) < 0.0) == neg)
            .map(|b| text_width(&b.text, TEXT_SIZE) + 10.0)
            .fold(0.0, f64::max)
    };
    (side(true), side(false))
}

/// Narrowest span left for the bars themselves.
const MIN_BARS_W: f64 = 50.0;
/// Gap between the label column and the plot.
const LABEL_GAP: f64 = 14.0;

/// Widest a label line may be: at most 42% of the width, less when the
/// value texts need the room; `None` when not even a narrow label column
/// fits beside the bars and their values.
fn label_max_w(rows: &[Row], w: f64) -> Option<f64> {
    let (l, r) = value_pads(rows);
    let room = w - 2.0 * PAD - LABEL_GAP - l - r - MIN_BARS_W;
    let max = (w * 0.42).max(80.0).min(room);
    (max >= 40.0).then_some(max)
}

struct Rows {
    lines: Vec<Vec<String>>,
    heights: Vec<f64>,
    label_w: f64,
}

fn layout_rows(rows: &[Row], max_w: f64) -> Rows {
    let lh = line_h(TEXT_SIZE);
    let mut lines = Vec::with_capacity(rows.len());
    let mut heights = Vec::with_capacity(rows.len());
    let mut label_w: f64 = 0.0;
    for r in rows {
        let l = wrap(&r.label, TEXT_SIZE, max_w);
        label_w = label_w.max(widest(&l, TEXT_SIZE));
        let n = r.bars.len().max(1) as f64;
        let bars_h = n * bar_thickness(r.bars.len()) + (n - 1.0) * 2.0 + 10.0;
        heights.push(bars_h.max(l.len().max(1) as f64 * lh + 8.0));
        lines.push(l);
    }
    Rows {
        lines,
        heights,
        label_w,
    }
}

/// Everything but the rows: title, axis, legend, notes, margins.
fn chrome_height(spec: &Spec, w: f64, notes: &[String]) -> f64 {
    chrome_height_with(spec, &spec.legend, w, notes)
}

fn chrome_height_with(spec: &Spec, legend: &[LegendItem], w: f64, notes: &[String]) -> f64 {
    let legend = layout_legend(legend, w - 2.0 * PAD);
    title_height(&spec.title, w)
        + 4.0
        + x_axis_h(!spec.x_desc.is_empty())
        + legend.height
        + notes_height(&wrap_notes(notes, w - 2.0 * PAD))
        + PAD
}

fn needed_height(spec: &Spec, w: f64) -> f64 {
    if spec.rows.is_empty() {
        return 240.0;
    }
    // Too narrow for any layout: the chart will say so in whatever height.
    let Some(max_w) = label_max_w(&spec.rows, w) else {
        return 240.0;
    };
    let rows = layout_rows(&spec.rows, max_w);
    chrome_height(spec, w, &[]) + rows.heights.iter().sum::<f64>()
}

fn draw(svg: &mut Svg, spec: &Spec, why_empty: &str) {
    if spec.rows.is_empty() {
        return draw_no_data(svg, &spec.title, why_empty);
    }
    let (w, h) = (svg.w, svg.h);
    let Some(label_max) = label_max_w(&spec.rows, w) else {
        return draw_too_small(svg, &spec.title);
    };
    let rows = layout_rows(&spec.rows, label_max);
    let (shown, notes) = rows_that_fit(spec, &rows, w, h);
    // On a canvas too small for even the axis, legend and note, the legend
    // goes first (the note says rows are missing); then the whole chart
    // says it is too small rather than spill text out of the image.
    let legend_items: &[LegendItem] = if shown == 0 && chrome_height(spec, w, &notes) > h {
        &[]
    } else {
        &spec.legend
    };
    if chrome_height_with(spec, legend_items, w, &notes) > h {
        return draw_too_small(svg, &spec.title);
    }
    let note_lines = wrap_notes(&notes, w - 2.0 * PAD);
    let legend = layout_legend(legend_items, w - 2.0 * PAD);

    let top = draw_title(svg, &spec.title) + 4.0;
    let avail = (h - chrome_height_with(spec, legend_items, w, &notes)).max(1.0);
    let natural: f64 = rows.heights[..shown].iter().sum();
    // Spare height makes rows (and bars) up to twice as tall, no more: a
    // few bars on a big canvas should not turn into slabs.
    let stretch = (avail / natural.max(1.0)).clamp(1.0, 2.0);

    let shown_rows = &spec.rows[..shown];
    let (pad_left, pad_right) = value_pads(&spec.rows);
    let label_col = rows.label_w.min(label_max) + LABEL_GAP;
    let plot_x0 = PAD + label_col;
    let plot_x1 = w - PAD;
    let bars_x0 = plot_x0 + pad_left;
    let bars_x1 = (plot_x1 - pad_right).max(bars_x0 + 20.0);
    let (scale, ticks) = value_axis(shown_rows, bars_x0, bars_x1);

    // Rows, top to bottom.
    let mut y = top;
    let plot_top = top;
    let mut row_spans = Vec::with_capacity(shown);
    for rh in &rows.heights[..shown] {
        let rh = rh * stretch;
        row_spans.push((y, y + rh));
        y += rh;
    }
    let plot_bottom = y;
    if shown > 6 {
        for (i, (a, b)) in row_spans.iter().enumerate() {
            if i % 2 == 1 {
                svg.rect(PAD, *a, plot_x1, *b, ZEBRA);
            }
        }
    }
    for v in &ticks {
        let x = scale.map(*v);
        svg.line((x, plot_top), (x, plot_bottom), GRID, 1.0);
    }
    for ((row, lines), span) in shown_rows.iter().zip(&rows.lines).zip(&row_spans) {
        draw_row(svg, row, lines, *span, stretch, &scale);
    }
    // Zero line over the bars, then the axis.
    let zx = scale.map(0.0);
    svg.line((zx, plot_top), (zx, plot_bottom), AXIS, 1.0);
    svg.line(
        (bars_x0.min(zx), plot_bottom),
        (plot_x1, plot_bottom),
        AXIS,
        1.0,
    );
    let labels: Vec<(f64, String)> = usd_ticks(&ticks)
        .into_iter()
        .map(|(v, l)| (scale.map(v), l))
        .collect();
    let mut yb = draw_x_axis(
        svg,
        &labels,
        &spec.x_desc,
        (bars_x0 + bars_x1) / 2.0,
        plot_bottom,
    );
    draw_legend(svg, legend_items, &legend, (PAD, yb));
    yb += legend.height;
    draw_lines(
        svg,
        &note_lines,
        (PAD, yb + 2.0),
        TEXT_SIZE,
        MUTED,
        Anchor::Start,
    );
}

/// How many rows fit, and the note saying how many were left out (which
/// takes height itself: settled in a few rounds).
fn rows_that_fit(spec: &Spec, rows: &Rows, w: f64, h: f64) -> (usize, Vec<String>) {
    let mut notes: Vec<String> = Vec::new();
    let mut shown = spec.rows.len();
    for _ in 0..3 {
        let avail = h - chrome_height(spec, w, &notes);
        let mut used = 0.0;
        let mut fit = 0;
        for rh in &rows.heights {
            if used + rh > avail + 0.5 {
                break;
            }
            used += rh;
            fit += 1;
        }
        // Zero rows when not even one fits: the note then says so, rather
        // than a row spilling out of the image.
        shown = fit.min(spec.rows.len());
        let want: Vec<String> = if shown < spec.rows.len() {
            vec![(spec.hidden)(spec.rows.len() - shown)]
        } else {
            vec![]
        };
        if want == notes {
            break;
        }
        notes = want;
    }
    (shown, notes)
}

/// The value axis over the shown rows' bars, spanning the data exactly,
/// and its round ticks inside it.
fn value_axis(shown_rows: &[Row], bars_x0: f64, bars_x1: f64) -> (Scale, Vec<f64>) {
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    let values = shown_rows
        .iter()
        .flat_map(|r| r.bars.iter().map(|b| finite(b.value)));
    let lo = values.clone().fold(0.0f64, f64::min);
    let hi = values.fold(0.0f64, f64::max);
    let target = ((bars_x1 - bars_x0) / 80.0).clamp(2.0, 10.0) as usize;
    // The axis spans the data exactly (round ticks inside it), so the bars
    // use the whole width instead of running to the next round number.
    let (d0, d1) = if hi > lo { (lo, hi) } else { (0.0, 1.0) };
    // Round steps can leave few ticks inside an exact range: ask for more
    // until at least three fall inside (or the labels would crowd).
    let eps = (d1 - d0) * 1e-9;
    let inside = |target: usize| -> Vec<f64> {
        let (_, _, all) = nice_ticks(d0, d1, target);
        all.into_iter()
            .filter(|v| *v >= d0 - eps && *v <= d1 + eps)
            .collect()
    };
    let mut ticks = inside(target);
    for more in target + 1..=target * 2 {
        if ticks.len() >= 3 {
            break;
        }
        ticks = inside(more);
    }
    let scale = Scale {
        d0,
        d1,
        p0: bars_x0,
        p1: bars_x1,
    };
    (scale, ticks)
}

/// One row: its label lines, then its bars, each with its value beyond
/// its end ("n/a" at zero when there is none).
fn draw_row(
    svg: &mut Svg,
    row: &Row,
    lines: &[String],
    (a, b): (f64, f64),
    stretch: f64,
    scale: &Scale,
) {
    let block = lines.len() as f64 * line_h(TEXT_SIZE);
    draw_lines(
        svg,
        lines,
        (PAD, (a + b) / 2.0 - block / 2.0),
        TEXT_SIZE,
        TEXT,
        Anchor::Start,
    );
    let n = row.bars.len().max(1) as f64;
    let thick = (bar_thickness(row.bars.len()) * stretch).min(28.0);
    let gap = 2.0;
    let group = n * thick + (n - 1.0) * gap;
    let mut by = (a + b) / 2.0 - group / 2.0;
    for bar in &row.bars {
        let (x0, cy) = (scale.map(0.0), by + thick / 2.0);
        if bar.value.is_finite() {
            let x1 = scale.map(bar.value);
            if (x1 - x0).abs() >= 0.5 {
                svg.rect(x0, by, x1, by + thick, bar.color);
            }
            let (tx, anchor) = if bar.value < 0.0 {
                (x1 - 5.0, Anchor::End)
            } else {
                (x1 + 5.0, Anchor::Start)
            };
            svg.text(
                (tx, baseline_for(cy, TEXT_SIZE)),
                &bar.text,
                TEXT_SIZE,
                TEXT,
                anchor,
            );
        } else {
            svg.text(
                (x0 + 5.0, baseline_for(cy, TEXT_SIZE)),
                &bar.text,
                TEXT_SIZE,
                MUTED,
                Anchor::Start,
            );
        }
        by += thick + gap;
    }
}

/// Decimals for the value texts of a set of USD figures.
fn decimals_of(values: impl Iterator<Item = f64> + Clone) -> usize {
    let finite = values.filter(|v| v.is_finite());
    let lo = finite.clone().fold(0.0f64, f64::min);
    let hi = finite.fold(0.0f64, f64::max);
    usd_decimals(hi - lo, lo.abs().max(hi.abs()))
}

fn usd_text(v: f64, dec: usize) -> String {
    if v.is_finite() {
        fmt::dollars_fixed(v, dec)
    } else {
        "n/a".to_string()
    }
}

// ---------------------------------------------------------------------------
// Savings by policy
// ---------------------------------------------------------------------------

fn savings_spec(title: &str, bars: &[(String, f64, f64)]) -> Spec {
    let rows = bars
        .iter()
        .map(|(label, usd, pct)| Row {
            label: clean(label),
            bars: vec![Bar {
                value: *usd,
                color: if *usd < 0.0 { COSTS_MORE } else { SAVES },
                text: if usd.is_finite() {
                    fmt::signed_percent(*pct)
                } else {
                    "n/a".to_string()
                },
            }],
        })
        .collect();
    let fin = |v: f64| if v.is_finite() { v } else { 0.0 };
    let mut legend = Vec::new();
    if bars.iter().any(|b| fin(b.1) >= 0.0) {
        legend.push(LegendItem::boxes(vec![SAVES], "saves money"));
    }
    if bars.iter().any(|b| fin(b.1) < 0.0) {
        legend.push(LegendItem::boxes(vec![COSTS_MORE], "costs more"));
    }
    legend.push(LegendItem::text(
        "bar-end %: saving relative to the status quo's cost",
    ));
    Spec {
        title: title.to_string(),
        rows,
        legend,
        x_desc: "savings (USD) vs status quo".into(),
        hidden: |n| format!("{} more not shown", fmt::thousands(n as u64)),
    }
}

pub(super) fn savings(svg: &mut Svg, title: &str, bars: &[(String, f64, f64)]) {
    draw(svg, &savings_spec(title, bars), "no policies given");
}

pub(super) fn savings_height(title: &str, bars: &[(String, f64, f64)], w: f64) -> f64 {
    needed_height(&savings_spec(title, bars), w)
}

// ---------------------------------------------------------------------------
// Fleet cost by config
// ---------------------------------------------------------------------------

fn config_spec(
    title: &str,
    bars: &[(String, f64)],
    status_quo: Option<usize>,
    recommended: Option<usize>,
) -> Spec {
    let dec = decimals_of(bars.iter().map(|b| b.1));
    let rows = bars
        .iter()
        .enumerate()
        .map(|(i, (label, usd))| {
            let label = clean(label);
            let (color, label) = if Some(i) == recommended && Some(i) == status_quo {
                (RECOMMENDED, format!("status quo, recommended: {label}"))
            } else if Some(i) == recommended {
                (RECOMMENDED, format!("recommended: {label}"))
            } else if Some(i) == status_quo {
                (STATUS_QUO, format!("status quo: {label}"))
            } else {
                (OTHER, label)
            };
            Row {
                label,
                bars: vec![Bar {
                    value: *usd,
                    color,
                    text: usd_text(*usd, dec),
                }],
            }
        })
        .collect();
    let mut legend = Vec::new();
    let n = bars.len();
    if status_quo.is_some_and(|i| i < n) {
        legend.push(LegendItem::boxes(vec![STATUS_QUO], "status quo"));
    }
    if recommended.is_some_and(|i| i < n) {
        legend.push(LegendItem::boxes(vec![RECOMMENDED], "recommended"));
    }
    if (0..n).any(|i| Some(i) != status_quo && Some(i) != recommended) {
        legend.push(LegendItem::boxes(vec![OTHER], "other configs"));
    }
    Spec {
        title: title.to_string(),
        rows,
        legend,
        x_desc: "fleet cost (USD)".into(),
        hidden: |n| {
            format!(
                "{} more {} not shown (all configs in results.csv)",
                fmt::thousands(n as u64),
                if n == 1 { "config" } else { "configs" }
            )
        },
    }
}

pub(super) fn config_costs(
    svg: &mut Svg,
    title: &str,
    bars: &[(String, f64)],
    status_quo: Option<usize>,
    recommended: Option<usize>,
) {
    draw(
        svg,
        &config_spec(title, bars, status_quo, recommended),
        "no configs given",
    );
}

pub(super) fn config_height(
    title: &str,
    bars: &[(String, f64)],
    status_quo: Option<usize>,
    recommended: Option<usize>,
    w: f64,
) -> f64 {
    needed_height(&config_spec(title, bars, status_quo, recommended), w)
}

// ---------------------------------------------------------------------------
// Status quo vs recommended per project
// ---------------------------------------------------------------------------

fn project_spec(title: &str, projects: &[(String, f64, f64)], against: &str) -> Spec {
    let dec = decimals_of(projects.iter().flat_map(|p| [p.1, p.2]));
    let rows = projects
        .iter()
        .map(|(label, sq, rec)| Row {
            label: clean(label),
            bars: vec![
                Bar {
                    value: *sq,
                    color: STATUS_QUO,
                    text: usd_text(*sq, dec),
                },
                Bar {
                    value: *rec,
                    color: RECOMMENDED,
                    text: usd_text(*rec, dec),
                },
            ],
        })
        .collect();
    Spec {
        title: title.to_string(),
        rows,
        legend: vec![
            LegendItem::boxes(vec![STATUS_QUO], "status quo"),
            LegendItem::boxes(vec![RECOMMENDED], against),
        ],
        x_desc: "cost (USD)".into(),
        hidden: |n| {
            format!(
                "{} more {} not shown",
                fmt::thousands(n as u64),
                if n == 1 { "project" } else { "projects" }
            )
        },
    }
}

pub(super) fn project_costs(
    svg: &mut Svg,
    title: &str,
    projects: &[(String, f64, f64)],
    against: &str,
) {
    draw(
        svg,
        &project_spec(title, projects, against),
        "no projects given",
    );
}

pub(super) fn project_height(
    title: &str,
    projects: &[(String, f64, f64)],
    against: &str,
    w: f64,
) -> f64 {
    needed_height(&project_spec(title, projects, against), w)
}

//! (b) Cumulative dollars across calls, one line per policy; the first
//! [`MAX_HIGHLIGHTED_LINES`] get colour, marker and legend entry.

use plotters::prelude::*;

use super::layout::{
    AXIS, Area, DESC_SIZE, GRID, LegendItem, MARKERS, PAD, Res, Swatch, TEXT, TICK_SIZE, clean,
    dims, draw_err, draw_frame, draw_legend, draw_marker, draw_no_data, int_tick, layout_legend,
    plot_area, plot_builder, style, usd_decimals, y_area_w,
};
use crate::report::fmt;

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
/// How many lines get colour and legend.
const MAX_HIGHLIGHTED_LINES: usize = 8;
/// Colour of the lines past [`MAX_HIGHLIGHTED_LINES`].
const EXTRA_LINE: RGBColor = RGBColor(185, 185, 185);

pub(super) fn draw<DB: DrawingBackend>(
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
                "{} more {} (no legend)",
                fmt::thousands(extra as u64),
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
    let ticks = [fmt::dollars_fixed(y_hi, dec), fmt::dollars_fixed(y_lo, dec)];
    let (x_lo, x_hi) = if n == 1 { (0.5, 1.5) } else { (1.0, n as f64) };

    let body = plot_area(root, top, 0, legend.height);
    let mut chart = plot_builder(&body, PAD * 2, y_area_w(root, &ticks)?)
        .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)
        .map_err(draw_err)?;
    let x_fmt = |v: &f64| int_tick(*v, 1, n);
    let y_fmt = |v: &f64| fmt::dollars_fixed(*v, dec);
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

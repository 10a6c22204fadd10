//! Per-session savings as a histogram: how many sessions save how much.
//!
//! Bins are round dollar widths (1, 2, 2.5 or 5 times a power of ten) chosen
//! from the data, about the square root of the session count of them, with
//! zero always on a bin edge so no bin mixes sessions that save with
//! sessions that cost more; a dashed line marks zero.

use super::layout::{
    AXIS, COSTS_MORE, LegendItem, MUTED, PAD, SAVES, Scale, TEXT, TEXT_SIZE, draw_no_data,
    draw_x_foot, draw_y_axis, layout_legend, line_h, nice_step, nice_ticks, notes_height,
    plot_rows, tick_decimals, value_chart_height, wrap_notes, x_axis_h, y_labels_w,
};
use super::svg::{Anchor, Svg, baseline_for, text_width};
use crate::fmt;

/// The bin from zero up holds the sessions that break even too, and the
/// legend says so when there are any.
fn legend_items(break_even: bool) -> Vec<LegendItem> {
    vec![
        LegendItem::boxes(
            vec![SAVES],
            if break_even {
                "sessions that save money or break even"
            } else {
                "sessions that save money"
            },
        ),
        LegendItem::boxes(vec![COSTS_MORE], "sessions that cost more"),
    ]
}

/// Room for the summary note (two lines at most on a narrow chart).
fn bottom_h(w: f64) -> f64 {
    x_axis_h(true)
        + layout_legend(&legend_items(true), w - 2.0 * PAD).height
        + 2.0 * line_h(TEXT_SIZE)
        + 8.0
}

pub(super) fn height(title: &str, w: f64) -> f64 {
    value_chart_height(title, w, bottom_h(w))
}

/// Bin edges `a + i * step` covering `lo..=hi` with zero on an edge.
fn bins(lo: f64, hi: f64, n: usize) -> (f64, f64, usize) {
    let target = (n as f64).sqrt().ceil().clamp(5.0, 30.0);
    let span = hi - lo;
    let step = if span > 0.0 {
        nice_step(span / target)
    } else {
        nice_step(lo.abs().max(hi.abs()).max(0.01) / 2.0)
    };
    let a = (lo / step).floor() * step;
    let mut b = (hi / step).ceil() * step;
    if b <= a {
        b = a + step;
    }
    // A value exactly on the top edge belongs to the last bin, not a new one.
    let count = (((b - a) / step).round() as usize).max(1);
    (a, step, count)
}

pub(super) fn draw(svg: &mut Svg, title: &str, savings: &[f64]) {
    let values: Vec<f64> = savings.iter().copied().filter(|v| v.is_finite()).collect();
    if values.is_empty() {
        let why = if savings.is_empty() {
            "no sessions given"
        } else {
            "no session has a finite saving"
        };
        return draw_no_data(svg, title, why);
    }
    let w = svg.w;
    let hist = Histogram::of(&values);
    let (a, step, count) = (hist.a, hist.step, hist.counts.len());
    let b = a + step * count as f64;
    let max_count = hist.counts.iter().copied().max().unwrap_or(0);
    // Edge labels need the decimals of the bin width; the median at least cents.
    let dec = tick_decimals(step);
    let (note, even) = summary_note(&values, savings.len(), dec);
    let note_lines = wrap_notes(&[note], w - 2.0 * PAD);
    let items = legend_items(even);
    let legend = layout_legend(&items, w - 2.0 * PAD);

    // Counts are whole: ticks at whole steps, with head room for the count
    // written above the tallest bar.
    let (_, y_max, y_ticks) = nice_ticks(
        0.0,
        (max_count as f64 * 1.12).max(1.0),
        5.min(max_count as usize + 1),
    );
    let y_ticks: Vec<(f64, String)> = y_ticks
        .into_iter()
        .filter(|v| v.fract() == 0.0)
        .map(|v| (v, fmt::thousands(v as u64)))
        .collect();
    let bottom = x_axis_h(true) + legend.height + notes_height(&note_lines);
    let Some((plot_top, plot_bottom)) = plot_rows(svg, title, "sessions", bottom) else {
        return;
    };
    let x0 = PAD + y_labels_w(&y_ticks);
    let x1 = w - PAD * 2.0;
    let ys = Scale {
        d0: 0.0,
        d1: y_max,
        p0: plot_bottom,
        p1: plot_top,
    };
    let xs = Scale {
        d0: a,
        d1: b,
        p0: x0 + 4.0,
        p1: x1 - 4.0,
    };
    draw_y_axis(svg, &ys, &y_ticks, (x0, x1));

    let bin_px = (xs.p1 - xs.p0) / count as f64;
    draw_bins(svg, &hist, (&xs, &ys), plot_bottom);
    svg.line((x0, plot_bottom), (x1, plot_bottom), AXIS, 1.0);
    svg.line((x0, plot_top), (x0, plot_bottom), AXIS, 1.0);
    let zx = xs.map(0.0);
    svg.dashed((zx, plot_top), (zx, plot_bottom), AXIS, 1.5);
    svg.text(
        (zx + 4.0, baseline_for(plot_top + 8.0, TEXT_SIZE)),
        "0",
        TEXT_SIZE,
        MUTED,
        Anchor::Start,
    );

    // Axis labels on bin edges, every k-th edge so they do not collide.
    let widest = [a, b]
        .iter()
        .map(|v| text_width(&fmt::dollars_fixed(*v, dec), TEXT_SIZE))
        .fold(0.0, f64::max);
    let every = ((widest + 16.0) / bin_px).ceil().max(1.0) as usize;
    // Zero is an edge; count label edges from it so zero is labelled.
    let zero_edge = ((0.0 - a) / step).round() as usize;
    let labels: Vec<(f64, String)> = (0..=count)
        .filter(|e| e.abs_diff(zero_edge) % every == 0)
        .map(|e| {
            let v = a + e as f64 * step;
            (xs.map(v), fmt::dollars_fixed(v, dec))
        })
        .collect();
    draw_x_foot(
        svg,
        &labels,
        "saving per session (USD)",
        (x0, x1),
        plot_bottom,
        &items,
        &legend,
        &note_lines,
    );
}

/// Equal bins over the savings, zero on an edge, and how many fall in each.
struct Histogram {
    /// The first bin's left edge.
    a: f64,
    step: f64,
    counts: Vec<u64>,
}

impl Histogram {
    fn of(values: &[f64]) -> Self {
        let lo = values.iter().copied().fold(0.0f64, f64::min);
        let hi = values.iter().copied().fold(0.0f64, f64::max);
        let (a, step, count) = bins(lo, hi, values.len());
        let mut counts = vec![0u64; count];
        for v in values {
            let i = (((v - a) / step).floor().max(0.0) as usize).min(count - 1);
            counts[i] += 1;
        }
        Histogram { a, step, counts }
    }
}

/// The note under the chart: how many sessions save, cost more and break
/// even, the median, and how many of the `given` were left out; and
/// whether any broke even (the legend then says so).
fn summary_note(values: &[f64], given: usize, dec: usize) -> (String, bool) {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    // The fleet's own rule, so the chart and the sentence above it agree.
    let median = tracecost_app::fleet::quantile(&sorted, 50.0);
    let save = values.iter().filter(|v| **v > 0.0).count();
    let more = values.iter().filter(|v| **v < 0.0).count();
    let even = values.len() - save - more;
    let mut note = format!(
        "{} sessions: {} save money, {} cost more",
        fmt::thousands(values.len() as u64),
        fmt::thousands(save as u64),
        fmt::thousands(more as u64),
    );
    if even > 0 {
        note.push_str(&format!(", {} break even", fmt::thousands(even as u64)));
    }
    note.push_str(&format!(
        "; median {}",
        fmt::dollars_fixed(median, dec.max(2))
    ));
    let skipped = given - values.len();
    if skipped > 0 {
        note.push_str(&format!(
            "; {} without a finite saving left out",
            fmt::thousands(skipped as u64)
        ));
    }
    (note, even > 0)
}

/// Each bin's bar, coloured by the side of zero it lies on, its count
/// above it where it fits.
fn draw_bins(svg: &mut Svg, hist: &Histogram, (xs, ys): (&Scale, &Scale), plot_bottom: f64) {
    let (a, step) = (hist.a, hist.step);
    let bin_px = (xs.p1 - xs.p0) / hist.counts.len() as f64;
    let gap = if bin_px > 6.0 { 1.0 } else { 0.0 };
    for (i, c) in hist.counts.iter().enumerate() {
        if *c == 0 {
            continue;
        }
        let left = a + i as f64 * step;
        let color = if left + step / 2.0 < 0.0 {
            COSTS_MORE
        } else {
            SAVES
        };
        let (bx0, bx1) = (xs.map(left) + gap, xs.map(left + step) - gap);
        let top = ys.map(*c as f64);
        svg.rect(bx0, top, bx1, plot_bottom, color);
        let label = fmt::thousands(*c);
        if text_width(&label, TEXT_SIZE) <= bx1 - bx0 + 2.0 {
            svg.text(
                ((bx0 + bx1) / 2.0, top - 4.0 - 0.236 * TEXT_SIZE),
                &label,
                TEXT_SIZE,
                TEXT,
                Anchor::Middle,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::bins;

    #[test]
    fn zero_is_a_bin_edge() {
        for (lo, hi, n) in [
            (-3.2, 7.9, 100),
            (0.0, 0.37, 9),
            (-12.0, 0.0, 400),
            (0.0, 0.0, 1),
        ] {
            let (a, step, count) = bins(lo, hi, n);
            assert!(a <= lo && a + step * count as f64 >= hi, "{lo} {hi}");
            let z = -a / step;
            assert!((z - z.round()).abs() < 1e-9, "{lo} {hi}: zero at {z}");
            assert!((1..=40).contains(&count), "{count}");
        }
    }
}

//! (b) Cumulative dollars across calls, one line per policy.
//!
//! At most [`MAX_LINES`] lines are drawn, each with its own colour, marker
//! and legend entry; further lines would be unlabelled tangles, so they are
//! left out and a note says how many and where every config is listed.
//! When the lines end far apart (the status quo often costs many times what
//! the compacted configs do), a linear axis squashes the cheap ones into one
//! smear along the bottom, so the axis turns logarithmic and says so.

use super::layout::{
    AXIS, LegendItem, MARKERS, PAD, PALETTE, Scale, Swatch, call_axis_labels, clean, draw_marker,
    draw_no_data, draw_x_foot, draw_y_axis, layout_legend, nice_ticks, notes_height, plot_rows,
    usd_ticks, value_chart_height, wrap_notes, x_axis_h, y_labels_w,
};
use super::svg::Svg;
use crate::fmt;

/// How many lines are drawn; one per palette colour.
const MAX_LINES: usize = PALETTE.len();
/// Ending values further apart than this ratio switch to a log axis.
const LOG_RATIO: f64 = 8.0;
/// A log axis spans at most this many decades below the top.
const LOG_DECADES: f64 = 3.0;

fn line_width(i: usize) -> f64 {
    // Yellow (last palette entry) needs more ink to be seen on white.
    if i == 7 { 3.0 } else { 2.0 }
}

fn legend_items(lines: &[(String, Vec<f64>)]) -> Vec<LegendItem> {
    lines
        .iter()
        .take(MAX_LINES)
        .enumerate()
        .map(|(i, (label, _))| LegendItem {
            swatch: Swatch::Line(PALETTE[i], line_width(i), Some(MARKERS[i % MARKERS.len()])),
            label: clean(label),
        })
        .collect()
}

fn notes(lines: &[(String, Vec<f64>)], log: bool) -> Vec<String> {
    let mut out = Vec::new();
    let extra = lines.len().saturating_sub(MAX_LINES);
    if extra > 0 {
        out.push(format!(
            "{} more {} not drawn (all configs in results.csv)",
            fmt::thousands(extra as u64),
            if extra == 1 { "config" } else { "configs" }
        ));
    }
    if log {
        out.push(
            "log scale: the lines end far apart, so each step up the axis multiplies the cost"
                .to_string(),
        );
    }
    out
}

fn bottom_h(lines: &[(String, Vec<f64>)], log: bool, w: f64) -> f64 {
    x_axis_h(true)
        + layout_legend(&legend_items(lines), w - 2.0 * PAD).height
        + notes_height(&wrap_notes(&notes(lines, log), w - 2.0 * PAD))
}

pub(super) fn height(title: &str, lines: &[(String, Vec<f64>)], w: f64) -> f64 {
    value_chart_height(title, w, bottom_h(lines, true, w))
}

/// Whether the drawn lines end so far apart that a linear axis would
/// squash the cheaper ones; only possible when every value is positive.
fn wants_log(shown: &[(String, Vec<f64>)]) -> bool {
    let finite = || {
        shown
            .iter()
            .flat_map(|(_, v)| v.iter().copied())
            .filter(|v| v.is_finite())
    };
    if finite().any(|v| v <= 0.0) {
        return false;
    }
    let ends: Vec<f64> = shown
        .iter()
        .filter_map(|(_, v)| v.iter().rev().copied().find(|x| x.is_finite()))
        .collect();
    let hi = ends.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lo = ends.iter().copied().fold(f64::INFINITY, f64::min);
    ends.len() >= 2 && lo > 0.0 && hi / lo >= LOG_RATIO
}

/// Ticks for a log axis over `lo..hi`: 1, 2, 5 times powers of ten.
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let mut p = 10f64.powf(lo.log10().floor());
    while p <= hi * 1.0001 {
        for m in [1.0, 2.0, 5.0] {
            let v = m * p;
            if v >= lo * 0.9999 && v <= hi * 1.0001 {
                out.push(v);
            }
        }
        p *= 10.0;
    }
    out
}

pub(super) fn draw(svg: &mut Svg, title: &str, lines: &[(String, Vec<f64>)]) {
    let shown = &lines[..lines.len().min(MAX_LINES)];
    let n = shown.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    // Read where needed rather than gathered: a long trace's lines are
    // hundreds of thousands of values each.
    let finite = || {
        shown
            .iter()
            .flat_map(|(_, v)| v.iter().copied())
            .filter(|v| v.is_finite())
    };
    if n == 0 || finite().next().is_none() {
        let why = if lines.is_empty() {
            "no policies given"
        } else {
            "the lines contain no finite values"
        };
        return draw_no_data(svg, title, why);
    }
    let w = svg.w;
    let lo = finite().fold(f64::INFINITY, f64::min);
    let hi = finite().fold(f64::NEG_INFINITY, f64::max);
    let log = wants_log(shown);

    let map: fn(f64) -> f64 = if log { f64::log10 } else { |v| v };
    let (d0, d1, ticks) = value_axis(lo, hi, log);

    let items = legend_items(lines);
    let legend = layout_legend(&items, w - 2.0 * PAD);
    let note_lines = wrap_notes(&notes(lines, log), w - 2.0 * PAD);
    let y_desc = if log {
        "USD (cumulative, log scale)"
    } else {
        "USD (cumulative)"
    };
    let Some((plot_top, plot_bottom)) = plot_rows(svg, title, y_desc, bottom_h(lines, log, w))
    else {
        return;
    };
    let x0 = PAD + y_labels_w(&ticks);
    let x1 = w - PAD * 2.0;
    let ys = Scale {
        d0,
        d1,
        p0: plot_bottom,
        p1: plot_top,
    };
    draw_y_axis(svg, &ys, &ticks, (x0, x1));
    let (c0, c1) = if n == 1 { (0.5, 1.5) } else { (1.0, n as f64) };
    let xs = Scale {
        d0: c0,
        d1: c1,
        p0: x0 + 4.0,
        p1: x1 - 4.0,
    };
    let y_of = |v: f64| ys.map(map(v).clamp(d0, d1));

    // Line 1 is drawn last, so it ends up on top.
    let marker_every = if n <= 40 { 1 } else { n.div_ceil(12) };
    // One run of finite values at a time, in pixels, in one buffer for
    // every run and line.
    let mut run: Vec<(f64, f64)> = Vec::new();
    for i in (0..shown.len()).rev() {
        let (color, width) = (PALETTE[i], line_width(i));
        let values = &shown[i].1;
        let mut draw_run = |run: &mut Vec<(f64, f64)>| {
            svg.polyline(&thin(run), color, width);
            if run.len() == 1 {
                svg.circle(run[0], width, color);
            }
            run.clear();
        };
        for (k, v) in values.iter().enumerate() {
            if v.is_finite() {
                run.push((xs.map((k + 1) as f64), y_of(*v)));
            } else if !run.is_empty() {
                draw_run(&mut run);
            }
        }
        if !run.is_empty() {
            draw_run(&mut run);
        }
        // Stagger markers between lines so they do not sit on each other.
        let offset = if marker_every > 1 {
            (i * marker_every / MAX_LINES) % marker_every
        } else {
            0
        };
        let last = values.iter().rposition(|v| v.is_finite());
        for (k, v) in values.iter().enumerate() {
            if v.is_finite() && (k % marker_every == offset || Some(k) == last) {
                let p = (xs.map((k + 1) as f64), y_of(*v));
                draw_marker(svg, MARKERS[i % MARKERS.len()], p, color);
            }
        }
    }
    svg.line((x0, plot_bottom), (x1, plot_bottom), AXIS, 1.0);
    svg.line((x0, plot_top), (x0, plot_bottom), AXIS, 1.0);

    let labels = call_axis_labels(n, &xs, (x0, x1));
    draw_x_foot(
        svg,
        &labels,
        "call",
        (x0, x1),
        plot_bottom,
        &items,
        &legend,
        &note_lines,
    );
}

/// The value axis: linear from 0 (or below, for refunds), or log over at
/// most [`LOG_DECADES`] decades; its range (in log10 when log) and ticks.
fn value_axis(lo: f64, hi: f64, log: bool) -> (f64, f64, Vec<(f64, String)>) {
    let map: fn(f64) -> f64 = if log { f64::log10 } else { |v| v };
    let (d0, d1, tick_values) = if log {
        let top = 10f64.powf((hi.log10() * 20.0).ceil() / 20.0);
        let bottom = lo.max(top / 10f64.powf(LOG_DECADES));
        let ticks = log_ticks(bottom, top);
        (bottom.log10(), top.log10(), ticks)
    } else {
        let (a, b, t) = nice_ticks(lo.min(0.0), hi.max(0.0), 6);
        (a, b, t)
    };
    // Log ticks each get the decimals their own size needs ($50, $0.05,
    // $0.002); linear ones the decimals of their step.
    let ticks: Vec<(f64, String)> = if log {
        tick_values
            .iter()
            .map(|v| {
                let dec = (-v.log10().floor()).clamp(0.0, 6.0) as usize;
                (
                    map(*v),
                    fmt::dollars_fixed(*v, if *v < 1.0 { dec.max(2) } else { 0 }),
                )
            })
            .collect()
    } else {
        usd_ticks(&tick_values)
    };
    (d0, d1, ticks)
}

/// The line through `points` (in pixels) with every point dropped that
/// lies within a quarter pixel of the simplified line (Ramer–Douglas–
/// Peucker): the drawing is the same to the eye and a 1,000-call line
/// becomes a few dozen points instead of a thousand.
fn thin(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    const TOLERANCE: f64 = 0.25;
    if points.len() <= 2 {
        return points.to_vec();
    }
    let mut keep = vec![false; points.len()];
    keep[0] = true;
    keep[points.len() - 1] = true;
    // An explicit stack instead of recursion: depth stays bounded on any
    // input.
    let mut stack = vec![(0, points.len() - 1)];
    while let Some((a, b)) = stack.pop() {
        if b <= a + 1 {
            continue;
        }
        let (p, q) = (points[a], points[b]);
        let (dx, dy) = (q.0 - p.0, q.1 - p.1);
        let len = (dx * dx + dy * dy).sqrt();
        let dist = |r: (f64, f64)| {
            if len == 0.0 {
                ((r.0 - p.0).powi(2) + (r.1 - p.1).powi(2)).sqrt()
            } else {
                ((r.0 - p.0) * dy - (r.1 - p.1) * dx).abs() / len
            }
        };
        let (mut far, mut far_d) = (a, 0.0);
        for (i, r) in points.iter().enumerate().take(b).skip(a + 1) {
            let d = dist(*r);
            if d > far_d {
                (far, far_d) = (i, d);
            }
        }
        if far_d > TOLERANCE {
            keep[far] = true;
            stack.push((a, far));
            stack.push((far, b));
        }
    }
    points
        .iter()
        .zip(keep)
        .filter_map(|(p, k)| k.then_some(*p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_only_for_positive_lines_that_end_far_apart() {
        let l = |end: f64| ("x".to_string(), vec![end / 2.0, end]);
        assert!(wants_log(&[l(50.0), l(2.0)]));
        assert!(!wants_log(&[l(5.0), l(2.0)]));
        assert!(!wants_log(&[l(50.0), ("neg".into(), vec![-1.0, 2.0])]));
        assert_eq!(
            log_ticks(0.05, 60.0),
            vec![0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0]
        );
    }

    #[test]
    fn thinning_keeps_the_ends_and_the_shape() {
        // A smooth curve of 1,000 points needs far fewer; every dropped
        // point stays within the tolerance of the kept polyline.
        let pts: Vec<(f64, f64)> = (0..1000)
            .map(|i| (f64::from(i) * 0.8, 400.0 - (f64::from(i) / 10.0).powf(1.5)))
            .collect();
        let t = thin(&pts);
        assert!(t.len() < 80, "{}", t.len());
        assert_eq!(t[0], pts[0]);
        assert_eq!(t[t.len() - 1], pts[999]);
        // A spike survives.
        let mut spiky = pts.clone();
        spiky[500].1 -= 30.0;
        assert!(thin(&spiky).contains(&spiky[500]));
    }
}

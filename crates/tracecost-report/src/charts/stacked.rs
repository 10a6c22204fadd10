//! (a) Input tokens per call, stacked by billing class: one group of bars
//! per call (or per bin of calls), one bar per series.
//!
//! A bar narrower than a few pixels reads as a hairline, so when the calls
//! outnumber what the width can show, consecutive calls are summed into bins
//! of 2, 5, 10, 20, … calls. The x axis stays in call numbers and the y axis
//! description names the bin size.

use super::layout::{
    AXIS, LegendItem, PAD, Scale, Swatch, call_axis_labels, clean, draw_legend, draw_no_data,
    draw_x_axis, draw_y_axis, layout_legend, nice_ticks, plot_rows, value_chart_height, x_axis_h,
    y_labels_w,
};
use super::svg::{BLACK, Rgb, Svg, WHITE};
use crate::fmt;

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

/// Billing-class colours (Okabe–Ito): uncached, cache write, cache read.
const CLASS_COLORS: [Rgb; 3] = [
    Rgb(213, 94, 0),  // vermillion
    Rgb(230, 159, 0), // orange
    Rgb(0, 114, 178), // blue
];
const CLASS_NAMES: [&str; 3] = ["uncached", "cache write", "cache read"];

/// Narrowest bar drawn, in pixels; below it calls are binned.
const MIN_BAR_PX: f64 = 4.0;

fn series_shades(s: usize, count: usize) -> Vec<Rgb> {
    let t = if count <= 1 {
        0.0
    } else {
        0.6 * s as f64 / (count - 1) as f64
    };
    CLASS_COLORS.iter().map(|c| c.mix(WHITE, t)).collect()
}

fn legend_items(series: &[(String, Vec<CallTokens>)]) -> Vec<LegendItem> {
    let count = series.len();
    let mut items: Vec<LegendItem> = CLASS_NAMES
        .iter()
        .zip(CLASS_COLORS)
        .map(|(name, c)| LegendItem::boxes(vec![c], *name))
        .collect();
    for (i, (label, _)) in series.iter().enumerate() {
        let label = clean(label);
        items.push(LegendItem {
            swatch: Swatch::Boxes(series_shades(i, count)),
            label: if count > 1 {
                format!("bar {}: {label}", fmt::thousands(i as u64 + 1))
            } else {
                label
            },
        });
    }
    items
}

/// Smallest bin size (1, 2, 5, 10, 20, 50, …) that leaves every bar at
/// least [`MIN_BAR_PX`] wide.
fn bin_size(calls: usize, series: usize, plot_w: f64) -> usize {
    let per_group = series as f64 * MIN_BAR_PX / 0.8;
    let max_groups = (plot_w / per_group).floor().max(1.0) as usize;
    // 1, 2, 5, 10, 20, 50, 100, …
    let mut k = 0u32;
    loop {
        let b = [1, 2, 5][(k % 3) as usize] * 10usize.saturating_pow(k / 3);
        if calls.div_ceil(b) <= max_groups || b >= calls {
            return b;
        }
        k += 1;
    }
}

fn bottom_h(items: &[LegendItem], w: f64) -> f64 {
    x_axis_h(true) + layout_legend(items, w - 2.0 * PAD).height
}

pub(super) fn height(title: &str, series: &[(String, Vec<CallTokens>)], w: f64) -> f64 {
    value_chart_height(title, w, bottom_h(&legend_items(series), w))
}

pub(super) fn draw(svg: &mut Svg, title: &str, series: &[(String, Vec<CallTokens>)]) {
    let n = series.iter().map(|(_, c)| c.len()).max().unwrap_or(0);
    if n == 0 {
        let why = if series.is_empty() {
            "no series given"
        } else {
            "the series contain no calls"
        };
        return draw_no_data(svg, title, why);
    }
    let (w, h) = (svg.w, svg.h);
    let count = series.len();
    let items = legend_items(series);
    let legend = layout_legend(&items, w - 2.0 * PAD);

    // Bin size from a first guess of the plot width (the y labels are
    // measured once the maximum is known; the guess errs narrow).
    let guess_w = w - 2.0 * PAD - 60.0;
    let b = bin_size(n, count, guess_w);
    let groups = n.div_ceil(b);
    let binned = binned_sums(series, b);
    let max_total = binned
        .iter()
        .flatten()
        .map(|g| g[0] + g[1] + g[2])
        .fold(0.0f64, f64::max);
    let (_, y_max, ticks) = nice_ticks(0.0, max_total.max(1.0), 5);
    let ticks: Vec<(f64, String)> = ticks.iter().map(|v| (*v, fmt::compact_count(*v))).collect();

    let y_desc = if b == 1 {
        "input tokens per call".to_string()
    } else {
        format!(
            "input tokens per {} calls (each bar sums {} consecutive calls)",
            fmt::thousands(b as u64),
            fmt::thousands(b as u64)
        )
    };
    let Some((plot_top, plot_bottom)) = plot_rows(svg, title, &y_desc, bottom_h(&items, w)) else {
        return;
    };
    let x0 = PAD + y_labels_w(&ticks);
    let x1 = w - PAD * 2.0;
    let ys = Scale {
        d0: 0.0,
        d1: y_max,
        p0: plot_bottom,
        p1: plot_top,
    };
    draw_y_axis(svg, &ys, &ticks, (x0, x1));

    // Call c (1-based) sits at the centre of its slot; a group covers b slots.
    let slots = (groups * b) as f64;
    let xs = Scale {
        d0: 0.5,
        d1: slots + 0.5,
        p0: x0,
        p1: x1,
    };
    let group_px = (x1 - x0) / groups as f64;
    let group_w = (group_px * 0.8).min(70.0 * count as f64);
    let bar_w = group_w / count as f64;
    let gap = if bar_w > 6.0 { bar_w * 0.08 } else { 0.0 };
    let outline = bar_w >= 8.0;
    for (s, groups_of_s) in binned.iter().enumerate() {
        let shades = series_shades(s, count);
        for (g, sums) in groups_of_s.iter().enumerate() {
            let centre = xs.map(g as f64 * b as f64 + (b as f64 + 1.0) / 2.0);
            let bx0 = centre - group_w / 2.0 + s as f64 * bar_w;
            // A last bin holding fewer calls sums fewer: drawn as wide as
            // its share of a bin, it reads as fewer calls, not as a drop.
            let held = series[s].1.len().saturating_sub(g * b).min(b);
            let bx1 = bx0 + (bar_w - gap) * held as f64 / b as f64;
            let mut acc = 0.0;
            for (k, v) in sums.iter().enumerate() {
                if *v <= 0.0 {
                    continue;
                }
                let (ya, yb) = (ys.map(acc), ys.map(acc + v));
                svg.rect(bx0, yb, bx1, ya, shades[k]);
                if outline {
                    svg.frame(bx0, yb, bx1, ya, CLASS_COLORS[k].mix(BLACK, 0.3), 1.0);
                }
                acc += v;
            }
        }
    }
    svg.line((x0, plot_bottom), (x1, plot_bottom), AXIS, 1.0);
    svg.line((x0, plot_top), (x0, plot_bottom), AXIS, 1.0);

    let labels = call_axis_labels(n, &xs, (x0, x1));
    draw_x_axis(svg, &labels, "call", (x0 + x1) / 2.0, plot_bottom);
    draw_legend(svg, &items, &legend, (PAD, h - PAD / 2.0 - legend.height));
}

/// Per series, per group of `b` consecutive calls: the sums of the three
/// classes (uncached, cache write, cache read).
fn binned_sums(series: &[(String, Vec<CallTokens>)], b: usize) -> Vec<Vec<[f64; 3]>> {
    series
        .iter()
        .map(|(_, calls)| {
            calls
                .chunks(b)
                .map(|chunk| {
                    chunk.iter().fold([0.0; 3], |acc, t| {
                        [
                            acc[0] + t.uncached as f64,
                            acc[1] + t.cache_write as f64,
                            acc[2] + t.cache_read as f64,
                        ]
                    })
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::bin_size;

    #[test]
    fn bins_grow_in_round_steps() {
        assert_eq!(bin_size(30, 3, 800.0), 1);
        assert_eq!(bin_size(200, 3, 800.0), 5);
        assert_eq!(bin_size(1000, 3, 800.0), 20);
        assert_eq!(bin_size(80, 2, 800.0), 1);
        assert_eq!(bin_size(1000, 1, 800.0), 10);
        assert_eq!(bin_size(100_000, 1, 800.0), 1000);
    }
}

//! Cost per day: one group per day, one bar per series while the bars stay
//! at least a few pixels wide, one line per series otherwise (90 days of
//! three series would be hairlines as bars). Days without data leave a gap.

use super::layout::{
    AXIS, LegendItem, MARKERS, PAD, PALETTE, Scale, Swatch, TEXT_SIZE, clean, draw_legend,
    draw_marker, draw_no_data, draw_x_axis, draw_y_axis, layout_legend, nice_ticks, plot_rows,
    usd_ticks, value_chart_height, x_axis_h, y_labels_w,
};
use super::layout::{RECOMMENDED, STATUS_QUO};
use super::svg::{Rgb, Svg, text_width};

/// Narrowest bar drawn; narrower groups switch the chart to lines.
const MIN_BAR_PX: f64 = 6.0;

/// Series named like the fleet's configs keep the colours the other fleet
/// charts give them (status quo orange, recommended green); the rest take
/// the palette's other colours in order.
fn colors(series: &[String]) -> Vec<Rgb> {
    let spare = [
        PALETTE[0], PALETTE[3], PALETTE[5], PALETTE[1], PALETTE[6], PALETTE[7],
    ];
    let mut next = 0;
    series
        .iter()
        .map(|s| {
            let s = s.to_lowercase();
            if s.contains("recommended") {
                RECOMMENDED
            } else if s.contains("status quo") {
                STATUS_QUO
            } else {
                next += 1;
                spare[(next - 1) % spare.len()]
            }
        })
        .collect()
}

/// Lines carry markers only while the days are few enough to tell apart.
const MAX_MARKED_DAYS: usize = 45;

fn legend_items(series: &[String], bars: bool, markers: bool) -> Vec<LegendItem> {
    let color = |i: usize| colors(series)[i];
    series
        .iter()
        .enumerate()
        .map(|(i, s)| LegendItem {
            swatch: if bars {
                Swatch::Boxes(vec![color(i)])
            } else {
                Swatch::Line(color(i), 2.0, markers.then(|| MARKERS[i % MARKERS.len()]))
            },
            label: clean(s),
        })
        .collect()
}

/// The room below the plot: the x axis and the legend. Whether the legend
/// shows bars or lines (with markers or not) depends on the days, which the
/// chart's height does not know, and their swatches wrap the labels
/// differently: the tallest of them is kept.
fn bottom_h(series: &[String], w: f64) -> f64 {
    let legend = [(true, false), (false, true), (false, false)]
        .iter()
        .map(|&(bars, markers)| {
            layout_legend(&legend_items(series, bars, markers), w - 2.0 * PAD).height
        })
        .fold(0.0f64, f64::max);
    x_axis_h(true) + legend
}

pub(super) fn height(title: &str, series: &[String], w: f64) -> f64 {
    value_chart_height(title, w, bottom_h(series, w))
}

pub(super) fn draw(
    svg: &mut Svg,
    title: &str,
    series: &[String],
    days: &[(String, Vec<Option<f64>>)],
) {
    let value = |d: usize, s: usize| day_value(days, d, s);
    let ns = series.len();
    let nd = days.len();
    let palette = colors(series);
    let finite: Vec<f64> = (0..nd)
        .flat_map(|d| (0..ns).map(move |s| (d, s)))
        .filter_map(|(d, s)| value(d, s))
        .collect();
    if ns == 0 || nd == 0 || finite.is_empty() {
        let why = if nd == 0 {
            "no days given"
        } else if ns == 0 {
            "no series given"
        } else {
            "no day has a cost"
        };
        return draw_no_data(svg, title, why);
    }
    let w = svg.w;
    let lo = finite.iter().copied().fold(0.0f64, f64::min);
    let hi = finite.iter().copied().fold(0.0f64, f64::max);
    let (d0, d1, ticks) = nice_ticks(lo, hi, 5);
    let ticks = usd_ticks(&ticks);
    let x0 = PAD + y_labels_w(&ticks);
    let x1 = w - PAD * 2.0;
    let slot = (x1 - x0) / nd as f64;
    let bars = slot * 0.8 / ns as f64 >= MIN_BAR_PX;

    let markers = nd <= MAX_MARKED_DAYS;
    let items = legend_items(series, bars, markers);
    let legend = layout_legend(&items, w - 2.0 * PAD);
    let Some((plot_top, plot_bottom)) = plot_rows(svg, title, "USD per day", bottom_h(series, w))
    else {
        return;
    };
    let ys = Scale {
        d0,
        d1,
        p0: plot_bottom,
        p1: plot_top,
    };
    draw_y_axis(svg, &ys, &ticks, (x0, x1));
    let plot = Plot {
        days,
        palette: &palette,
        ys: &ys,
        x0,
        slot,
    };
    let centre = |d: usize| plot.centre(d);
    if bars {
        draw_bars(svg, &plot, ns);
    } else {
        draw_series_lines(svg, &plot, ns, markers);
    }
    svg.line((x0, ys.map(0.0)), (x1, ys.map(0.0)), AXIS, 1.0);
    svg.line((x0, plot_top), (x0, plot_bottom), AXIS, 1.0);

    // Day labels: every k-th, k chosen from the widest label.
    let widest = days
        .iter()
        .map(|(d, _)| text_width(&clean(d), TEXT_SIZE))
        .fold(0.0, f64::max);
    let every = ((widest + 14.0) / slot).ceil().max(1.0) as usize;
    let labels: Vec<(f64, String)> = days
        .iter()
        .enumerate()
        .step_by(every)
        .map(|(d, (label, _))| (centre(d), clean(label)))
        .collect();
    let below = draw_x_axis(svg, &labels, "day", (x0 + x1) / 2.0, plot_bottom);
    draw_legend(svg, &items, &legend, (PAD, below));
}

/// Series `s` on day `d`, when it has a finite cost.
fn day_value(days: &[(String, Vec<Option<f64>>)], d: usize, s: usize) -> Option<f64> {
    days.get(d)
        .and_then(|(_, v)| v.get(s))
        .copied()
        .flatten()
        .filter(|v| v.is_finite())
}

/// The plot's days and series, where each day's slot lies, and the value
/// scale.
struct Plot<'a> {
    days: &'a [(String, Vec<Option<f64>>)],
    palette: &'a [Rgb],
    ys: &'a Scale,
    x0: f64,
    slot: f64,
}

impl Plot<'_> {
    fn value(&self, d: usize, s: usize) -> Option<f64> {
        day_value(self.days, d, s)
    }

    /// The centre of day `d`'s slot.
    fn centre(&self, d: usize) -> f64 {
        self.x0 + (d as f64 + 0.5) * self.slot
    }
}

/// Each day's series side by side as bars.
fn draw_bars(svg: &mut Svg, plot: &Plot<'_>, ns: usize) {
    let (slot, nd) = (plot.slot, plot.days.len());
    let group = (slot * 0.8).min(60.0 * ns as f64);
    let bar_w = group / ns as f64;
    let gap = if bar_w > 8.0 { 1.0 } else { 0.0 };
    for d in 0..nd {
        for s in 0..ns {
            if let Some(v) = plot.value(d, s) {
                let bx0 = plot.centre(d) - group / 2.0 + s as f64 * bar_w;
                svg.rect(
                    bx0,
                    plot.ys.map(0.0),
                    bx0 + bar_w - gap,
                    plot.ys.map(v),
                    plot.palette[s],
                );
            }
        }
    }
}

/// One line per series, broken where a day has no cost (a lone day a dot),
/// with markers on each day when there are few.
fn draw_series_lines(svg: &mut Svg, plot: &Plot<'_>, ns: usize, markers: bool) {
    let nd = plot.days.len();
    for s in (0..ns).rev() {
        let mut run: Vec<(f64, f64)> = Vec::new();
        for d in 0..=nd {
            match (d < nd).then(|| plot.value(d, s)).flatten() {
                Some(v) => run.push((plot.centre(d), plot.ys.map(v))),
                None => {
                    if run.len() == 1 {
                        svg.circle(run[0], 2.5, plot.palette[s]);
                    }
                    svg.polyline(&run, plot.palette[s], 2.0);
                    run.clear();
                }
            }
        }
        if markers {
            for d in 0..nd {
                if let Some(v) = plot.value(d, s) {
                    draw_marker(
                        svg,
                        MARKERS[s % MARKERS.len()],
                        (plot.centre(d), plot.ys.map(v)),
                        plot.palette[s],
                    );
                }
            }
        }
    }
}

//! (a) Input tokens per call, stacked by billing class: one group of bars
//! per call, one bar per series.

use plotters::prelude::*;

use super::CallTokens;
use super::layout::{
    AXIS, Area, DESC_SIZE, GRID, LegendItem, PAD, Res, Swatch, TEXT, TICK_SIZE, axis_max, clean,
    dims, draw_err, draw_frame, draw_legend, draw_no_data, int_tick, layout_legend, mix, plot_area,
    plot_builder, style, y_area_w,
};
use crate::report::fmt;

/// Billing-class colours (Okabe–Ito): uncached, cache write, cache read.
const CLASS_COLORS: [RGBColor; 3] = [
    RGBColor(213, 94, 0),  // vermillion
    RGBColor(230, 159, 0), // orange
    RGBColor(0, 114, 178), // blue
];
const CLASS_NAMES: [&str; 3] = ["uncached", "cache write", "cache read"];

fn series_shades(s: usize, count: usize) -> Vec<RGBColor> {
    let t = if count <= 1 {
        0.0
    } else {
        0.6 * s as f64 / (count - 1) as f64
    };
    CLASS_COLORS.iter().map(|c| mix(*c, WHITE, t)).collect()
}

pub(super) fn draw<DB: DrawingBackend>(
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
                format!("bar {}: {label}", fmt::thousands(i as u64 + 1))
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
    let ticks = [fmt::compact_count(y_max), fmt::compact_count(y_max / 2.0)];

    let body = plot_area(root, top, 0, legend.height);
    let mut chart = plot_builder(&body, PAD * 2, y_area_w(root, &ticks)?)
        .build_cartesian_2d(0.5f64..(n as f64 + 0.5), 0f64..y_max)
        .map_err(draw_err)?;

    let x_fmt = |v: &f64| int_tick(*v, 1, n);
    let y_fmt = |v: &f64| fmt::compact_count(*v);
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

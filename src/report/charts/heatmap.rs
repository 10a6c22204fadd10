//! (c) Heatmap of total dollars over compaction threshold (x) × keep-last
//! (y) for one cache policy, with a colour scale beside it.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::layout::{
    AXIS, Area, CellAxis, DESC_SIZE, LEGEND_ROW_H, MUTED, NOTE_SIZE, PAD, Res, TEXT, TICK_SIZE,
    anchored, cell_index, dims, draw_err, draw_frame, draw_no_data, draw_text, fill_rect, fit, mix,
    plot_area, plot_builder, style, text_w, usd_decimals, with_color, y_area_w,
};
use crate::report::fmt;

/// Font size of the dollar figure written in each cell.
const CELL_SIZE: f64 = 17.0;
/// Fill of a combination that was not run.
const NA_FILL: RGBColor = RGBColor(224, 224, 224);

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

fn luminance(c: RGBColor) -> f64 {
    0.2126 * f64::from(c.0) + 0.7152 * f64::from(c.1) + 0.0722 * f64::from(c.2)
}

/// More cells per side than this cannot get even one pixel each.
const MAX_CELLS_PER_SIDE: usize = 4096;

pub(super) fn draw<DB: DrawingBackend>(
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

    let y_ticks: Vec<String> = keeps.iter().map(|k| fmt::thousands(*k as u64)).collect();
    let scale_w = if have { 120 } else { 0 };
    let body = plot_area(root, top, scale_w, note_h);
    let mut chart = plot_builder(&body, PAD, y_area_w(root, &y_ticks)?)
        .build_cartesian_2d(CellAxis(nx), CellAxis(ny))
        .map_err(draw_err)?;

    let (px, py) = chart.plotting_area().get_pixel_range();
    let cell_w = f64::from(px.end - px.start) / nx as f64;
    let cell_h = f64::from(py.end - py.start) / ny as f64;

    // Threshold labels: thin them out when they would collide.
    let tick_st = style(TICK_SIZE, TEXT);
    let mut widest = 0;
    for t in thresholds {
        widest = widest.max(text_w(root, &fmt::compact_count(*t as f64), &tick_st)?);
    }
    let every = ((f64::from(widest + 10) / cell_w.max(1.0)).ceil() as usize).max(1);
    let x_fmt = |v: &f64| {
        cell_index(*v, nx)
            .and_then(|i| thresholds.get(i))
            .map(|t| fmt::compact_count(*t as f64))
            .unwrap_or_default()
    };
    let y_fmt = |v: &f64| {
        cell_index(*v, ny)
            .and_then(|i| keeps.get(i))
            .map(|k| fmt::thousands(*k as u64))
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
                    (c, fmt::dollars_fixed(v, dec), tc)
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
            &fit(root, &fmt::dollars_fixed(max, dec), &st, room)?,
            (lx, y_top + 8),
            &st,
        )?;
        let mid = fmt::dollars_fixed((min + max) / 2.0, dec);
        draw_text(
            root,
            &fit(root, &mid, &st, room)?,
            (lx, y_top + height / 2),
            &st,
        )?;
        draw_text(
            root,
            &fit(root, &fmt::dollars_fixed(min, dec), &st, room)?,
            (lx, y_top + height - 8),
            &st,
        )?;
    } else {
        draw_text(
            root,
            &fit(root, &fmt::dollars_fixed(min, dec), &st, room)?,
            (lx, y_top + height / 2),
            &st,
        )?;
    }
    Ok(())
}

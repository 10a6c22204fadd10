//! (d) Savings by policy as horizontal bars (USD; negative = costs more),
//! with the percentage written at the bar end.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};

use super::layout::{
    AXIS, Area, CellAxis, DESC_SIZE, GRID, LEGEND_ROW_H, LegendItem, PAD, Res, Swatch, TEXT,
    TICK_SIZE, X_AREA_H, anchored, cell_index, clean, dims, draw_err, draw_frame, draw_legend,
    draw_no_data, draw_text, fill_rect, fit, layout_legend, plot_area, plot_builder, style, text_w,
    usd_decimals,
};
use crate::report::fmt;

const SAVES: RGBColor = RGBColor(0, 158, 115); // bluish green
const COSTS_MORE: RGBColor = RGBColor(213, 94, 0); // vermillion

pub(super) fn draw<DB: DrawingBackend>(
    root: &Area<DB>,
    title: &str,
    bars: &[(String, f64, f64)],
) -> Res<()> {
    if bars.is_empty() {
        return draw_no_data(root, title, "no policies given");
    }
    let top = draw_frame(root, title)?;
    let (w, h) = dims(root);

    // How many bars fit at one label row (22 px) each; the key below the plot
    // may grow when bars are left out, so settle both together.
    let mut key_h = LEGEND_ROW_H + 10;
    let (shown, items, legend) = loop {
        let plot_h = h - top - key_h - X_AREA_H - 6;
        let capacity = usize::try_from((plot_h / 22).max(1)).unwrap_or(1);
        let shown = bars.len().min(capacity);
        let items = savings_key(&bars[..shown], bars.len() - shown);
        let legend = layout_legend(root, &items, w - 2 * PAD)?;
        if legend.height <= key_h {
            break (shown, items, legend);
        }
        key_h = legend.height;
    };
    let bars_shown = &bars[..shown];

    let usd = |v: f64| if v.is_finite() { v } else { 0.0 };
    let lo = bars_shown.iter().map(|b| usd(b.1)).fold(0.0f64, f64::min);
    let hi = bars_shown.iter().map(|b| usd(b.1)).fold(0.0f64, f64::max);
    let dec = usd_decimals(hi - lo, lo.abs().max(hi.abs()));

    let tick_st = style(TICK_SIZE, TEXT);
    let pct_st = style(TICK_SIZE, TEXT);
    let mut pct_w = 0;
    for b in bars_shown {
        pct_w = pct_w.max(text_w(root, &fmt::signed_percent(b.2), &pct_st)?);
    }
    // Label column: as wide as the longest label, at most half the width.
    let max_label_w = (w / 2).max(60);
    let mut labels = Vec::with_capacity(shown);
    let mut label_w = 0;
    for b in bars_shown {
        let l = fit(root, &clean(&b.0), &tick_st, max_label_w)?;
        label_w = label_w.max(text_w(root, &l, &tick_st)?);
        labels.push(l);
    }
    let y_area = label_w + 16;

    // Widen the x range so the percentage text fits beside the bar ends.
    let span = if hi - lo > 0.0 { hi - lo } else { 1.0 };
    let plot_w = f64::from((w - y_area - PAD * 3).max(50));
    let text_px = f64::from(pct_w + 22);
    let sides = f64::from(u8::from(hi > 0.0 || lo == 0.0) + u8::from(lo < 0.0));
    let total = span / (1.0 - sides * text_px / plot_w).max(0.4);
    let pad_units = text_px * total / plot_w;
    let x_lo = if lo < 0.0 { lo - pad_units } else { 0.0 };
    let x_hi = if hi > 0.0 || lo == 0.0 {
        hi.max(if lo == 0.0 && hi == 0.0 { span } else { hi }) + pad_units
    } else {
        0.0
    };
    let ticks_w = text_w(root, &fmt::dollars_fixed(x_hi, dec), &tick_st)?.max(text_w(
        root,
        &fmt::dollars_fixed(x_lo, dec),
        &tick_st,
    )?);
    let x_labels = usize::try_from((plot_w as i32 / (ticks_w + 30)).clamp(2, 10)).unwrap_or(2);

    let body = plot_area(root, top, 0, legend.height);
    let n = shown;
    let ni = n as i32;
    let mut chart = plot_builder(&body, PAD * 2, y_area)
        .build_cartesian_2d(x_lo..x_hi, CellAxis(n))
        .map_err(draw_err)?;
    let x_fmt = |v: &f64| fmt::dollars_fixed(*v, dec);
    // Bar i sits in row n - 1 - i so the first bar is at the top.
    let y_fmt = |v: &f64| {
        cell_index(*v, n)
            .and_then(|r| labels.get(n - 1 - r).cloned())
            .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .bold_line_style(GRID)
        .light_line_style(TRANSPARENT)
        .axis_style(AXIS)
        .x_labels(x_labels)
        .y_labels(n)
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt)
        .label_style(style(TICK_SIZE, TEXT))
        .axis_desc_style(style(DESC_SIZE, TEXT))
        .x_desc("savings (USD) vs status quo")
        .draw()
        .map_err(draw_err)?;

    let at = |x: f64, r: i32| chart.backend_coord(&(x, f64::from(r)));
    for (i, b) in bars_shown.iter().enumerate() {
        let r = ni - 1 - i as i32;
        let v = usd(b.1);
        let (top_px, bottom_px) = (at(0.0, r + 1).1, at(0.0, r).1);
        let row_px = bottom_px - top_px;
        let inset = if row_px > 40 {
            (row_px - 28) / 2
        } else {
            row_px / 6
        };
        let (y0, y1) = (top_px + inset, bottom_px - inset);
        let (x0, x1) = (at(0.0, r).0, at(v, r).0);
        if x0 != x1 {
            let color = if v < 0.0 { COSTS_MORE } else { SAVES };
            fill_rect(root, (x0.min(x1), y0), (x0.max(x1), y1), color)?;
        }
        let label = if b.1.is_finite() {
            fmt::signed_percent(b.2)
        } else {
            "n/a".to_string()
        };
        let (h_pos, tx) = if v < 0.0 {
            (HPos::Right, x1 - 6)
        } else {
            (HPos::Left, x1 + 6)
        };
        let st = anchored(pct_st.clone(), h_pos, VPos::Center);
        draw_text(root, &label, (tx, (y0 + y1) / 2), &st)?;
    }
    // Zero line on top of the bars.
    let (z0, z1) = (at(0.0, 0), at(0.0, ni));
    root.draw(&PathElement::new(vec![z0, z1], AXIS.stroke_width(1)))
        .map_err(draw_err)?;

    draw_legend(root, &items, &legend, (PAD, h - legend.height))
}

/// Colour key for the savings chart (only the kinds present) plus the
/// "not shown" note.
fn savings_key(shown: &[(String, f64, f64)], hidden: usize) -> Vec<LegendItem> {
    let usd = |v: f64| if v.is_finite() { v } else { 0.0 };
    let mut items = Vec::new();
    if shown.iter().any(|b| usd(b.1) >= 0.0) {
        items.push(LegendItem {
            swatch: Swatch::Boxes(vec![SAVES]),
            label: "saves money".into(),
        });
    }
    if shown.iter().any(|b| usd(b.1) < 0.0) {
        items.push(LegendItem {
            swatch: Swatch::Boxes(vec![COSTS_MORE]),
            label: "costs more".into(),
        });
    }
    items.push(LegendItem {
        swatch: Swatch::Nothing,
        label: "bar-end %: saving relative to baseline cost".into(),
    });
    if hidden > 0 {
        items.push(LegendItem {
            swatch: Swatch::Nothing,
            label: format!("+{} more not shown", fmt::thousands(hidden as u64)),
        });
    }
    items
}

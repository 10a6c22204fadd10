//! (c) Heatmap of total dollars over compaction threshold (x) × keep-last
//! (y) for one cache policy, with a colour scale beside it.
//!
//! The colour scale is this chart's own range unless the caller passes one:
//! a report passes the range over all its heatmaps, so the same colour is
//! the same money in every heatmap and the colour bar shows that range.

use super::layout::{
    AXIS, MUTED, PAD, TEXT, TEXT_SIZE, draw_lines, draw_no_data, draw_x_axis, line_h, notes_height,
    plot_rows, title_height, usd_decimals, wrap_notes, x_axis_h,
};
use super::svg::{Anchor, BLACK, Rgb, Svg, WHITE, baseline_for, text_width};
use crate::fmt;

/// Font size of the dollar figure written in each cell.
const CELL_SIZE: f64 = 12.0;
/// Fill of a combination that was not run.
const NA_FILL: Rgb = Rgb(224, 224, 224);
/// Width of the colour bar itself.
const BAR_W: f64 = 16.0;

/// Viridis stops from dark purple (most expensive) to lime (cheapest); the
/// yellow end is left out so the best cell reads as "good", not "warning".
const SCALE: [(f64, Rgb); 5] = [
    (0.0, Rgb(68, 1, 84)),
    (0.25, Rgb(59, 82, 139)),
    (0.5, Rgb(33, 145, 140)),
    (0.75, Rgb(94, 201, 98)),
    (1.0, Rgb(189, 223, 38)),
];

/// Colour for `t` in 0..=1, where 1 is the cheapest.
fn scale_color(t: f64) -> Rgb {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    for pair in SCALE.windows(2) {
        let ((t0, c0), (t1, c1)) = (pair[0], pair[1]);
        if t <= t1 {
            return c0.mix(c1, (t - t0) / (t1 - t0));
        }
    }
    SCALE[SCALE.len() - 1].1
}

/// More cells per side than this cannot get even one pixel each.
const MAX_CELLS_PER_SIDE: usize = 4096;

/// Rows of at least this many pixels leave room for the cell figures.
const MIN_ROW_PX: f64 = 26.0;

pub(super) fn height(title: &str, _nx: usize, ny: usize, w: f64) -> f64 {
    let plot = (ny as f64 * MIN_ROW_PX).max((w * 0.4).clamp(180.0, 600.0));
    title_height(title, w)
        + line_h(TEXT_SIZE)
        + 8.0
        + plot
        + x_axis_h(true)
        + 3.0 * line_h(TEXT_SIZE)
        + 8.0
        + PAD
}

pub(super) fn draw(
    svg: &mut Svg,
    title: &str,
    thresholds: &[u64],
    keeps: &[usize],
    cost: &[Vec<Option<f64>>],
    scale_usd: Option<(f64, f64)>,
) {
    if thresholds.is_empty() || keeps.is_empty() {
        return draw_no_data(svg, title, "no thresholds or keep-last values given");
    }
    if thresholds.len() > MAX_CELLS_PER_SIDE || keeps.len() > MAX_CELLS_PER_SIDE {
        return draw_no_data(
            svg,
            title,
            "too many thresholds or keep-last values to draw",
        );
    }
    let w = svg.w;
    let cells = Cells {
        cost,
        nx: thresholds.len(),
        ny: keeps.len(),
    };
    let scale = ColorScale::of(&cells, scale_usd);
    let note_lines = wrap_notes(&scale.notes(), w - 2.0 * PAD);
    // Colour bar labels decide the width kept free on the right.
    let scale_labels = scale.labels();
    let scale_w = if scale_labels.is_empty() {
        0.0
    } else {
        let lw = scale_labels
            .iter()
            .map(|l| text_width(l, TEXT_SIZE))
            .fold(0.0, f64::max);
        PAD * 2.0 + BAR_W + 6.0 + lw
    };
    let y_labels: Vec<String> = keeps.iter().map(|k| fmt::thousands(*k as u64)).collect();
    let y_w = y_labels
        .iter()
        .map(|l| text_width(l, TEXT_SIZE))
        .fold(0.0, f64::max)
        + 10.0;
    let bottom = x_axis_h(true) + notes_height(&note_lines);
    let Some((plot_top, plot_bottom)) = plot_rows(svg, title, "keep last N", bottom) else {
        return;
    };
    let x0 = PAD + y_w;
    let x1 = (w - PAD - scale_w).max(x0 + cells.nx as f64);
    let grid = Grid {
        x0,
        x1,
        plot_bottom,
        cell_w: (x1 - x0) / cells.nx as f64,
        cell_h: (plot_bottom - plot_top) / cells.ny as f64,
    };
    draw_cells(svg, &grid, &cells, &scale);
    svg.line((x0, plot_bottom), (x1, plot_bottom), AXIS, 1.0);
    svg.line((x0, plot_top), (x0, plot_bottom), AXIS, 1.0);
    let below = draw_axis_labels(svg, &grid, &y_labels, thresholds);
    draw_lines(
        svg,
        &note_lines,
        (PAD, below + 2.0),
        TEXT_SIZE,
        MUTED,
        Anchor::Start,
    );
    if !scale_labels.is_empty() {
        draw_color_bar(svg, x1 + PAD * 2.0, (plot_top, plot_bottom), &scale_labels);
    }
}

/// The dollars of each combination: row `k` a keep-last value, column `t`
/// a threshold; a combination not run (or not finite) has none.
struct Cells<'a> {
    cost: &'a [Vec<Option<f64>>],
    nx: usize,
    ny: usize,
}

impl Cells<'_> {
    fn get(&self, k: usize, t: usize) -> Option<f64> {
        self.cost
            .get(k)
            .and_then(|row| row.get(t))
            .copied()
            .flatten()
            .filter(|v| v.is_finite())
    }
}

/// The range the colours span (the report's shared one, or this chart's)
/// and the decimals its figures are written with.
struct ColorScale {
    /// Some cell was run.
    have: bool,
    /// The cheapest cell, outlined.
    data_min: f64,
    shared: Option<(f64, f64)>,
    min: f64,
    max: f64,
    span: f64,
    dec: usize,
}

impl ColorScale {
    fn of(cells: &Cells<'_>, scale_usd: Option<(f64, f64)>) -> Self {
        let values: Vec<f64> = (0..cells.ny)
            .flat_map(|k| (0..cells.nx).map(move |t| (k, t)))
            .filter_map(|(k, t)| cells.get(k, t))
            .collect();
        let have = !values.is_empty();
        let data_min = values.iter().copied().fold(f64::INFINITY, f64::min);
        let data_max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let shared = scale_usd.filter(|(a, b)| a.is_finite() && b.is_finite() && a <= b);
        let (min, max) = shared.unwrap_or((data_min, data_max));
        let span = if have || shared.is_some() {
            max - min
        } else {
            0.0
        };
        let dec = if span > 0.0 {
            usd_decimals(span * 8.0 / 20.0, max.abs().max(min.abs()))
        } else {
            usd_decimals(max.abs().max(0.01), max.abs())
        };
        ColorScale {
            have,
            data_min,
            shared,
            min,
            max,
            span,
            dec,
        }
    }

    /// Where `v` sits on the scale, 1 the cheapest.
    fn t_of(&self, v: f64) -> f64 {
        if self.span > 0.0 {
            (self.max - v) / self.span
        } else {
            1.0
        }
    }

    fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.have {
            notes.push(
                "colour: total USD, cheapest = light green (outlined); grey n/a = not run"
                    .to_string(),
            );
            if let Some((a, b)) = self.shared {
                notes.push(format!(
                    "one colour scale for every heatmap of this report: {} to {}",
                    fmt::dollars_fixed(a, self.dec),
                    fmt::dollars_fixed(b, self.dec)
                ));
            }
        } else {
            notes.push("no combination was run (all cells n/a)".to_string());
        }
        notes
    }

    /// The colour bar's labels, top to bottom: none when nothing was run
    /// and no range was given.
    fn labels(&self) -> Vec<String> {
        let (min, max, dec) = (self.min, self.max, self.dec);
        if !self.have && self.shared.is_none() {
            vec![]
        } else if max > min {
            vec![
                fmt::dollars_fixed(max, dec),
                fmt::dollars_fixed((min + max) / 2.0, dec),
                fmt::dollars_fixed(min, dec),
            ]
        } else {
            vec![fmt::dollars_fixed(min, dec)]
        }
    }
}

/// Where the cells are drawn.
struct Grid {
    x0: f64,
    x1: f64,
    plot_bottom: f64,
    cell_w: f64,
    cell_h: f64,
}

impl Grid {
    /// Pixel box of cell (t, k); row 0 at the bottom.
    fn corners(&self, t: usize, k: usize) -> (f64, f64, f64, f64) {
        (
            self.x0 + t as f64 * self.cell_w,
            self.plot_bottom - (k + 1) as f64 * self.cell_h,
            self.x0 + (t + 1) as f64 * self.cell_w,
            self.plot_bottom - k as f64 * self.cell_h,
        )
    }
}

/// Each cell in its colour with its figure where it fits, then the
/// cheapest outlined.
fn draw_cells(svg: &mut Svg, grid: &Grid, cells: &Cells<'_>, scale: &ColorScale) {
    let (cell_w, cell_h) = (grid.cell_w, grid.cell_h);
    let label_fits_h = cell_h >= line_h(CELL_SIZE);
    for k in 0..cells.ny {
        for t in 0..cells.nx {
            let (a, b, c, d) = grid.corners(t, k);
            let (fill, text, text_color) = match cells.get(k, t) {
                Some(v) => {
                    let col = scale_color(scale.t_of(v));
                    let tc = if col.luminance() < 120.0 { WHITE } else { TEXT };
                    (col, fmt::dollars_fixed(v, scale.dec), tc)
                }
                None => (NA_FILL, "n/a".to_string(), MUTED),
            };
            svg.rect(a, b, c, d, fill);
            if cell_w >= 4.0 && cell_h >= 4.0 {
                svg.frame(a, b, c, d, WHITE, 1.0);
            }
            if label_fits_h && text_width(&text, CELL_SIZE) <= cell_w - 6.0 {
                svg.text(
                    ((a + c) / 2.0, baseline_for((b + d) / 2.0, CELL_SIZE)),
                    &text,
                    CELL_SIZE,
                    text_color,
                    Anchor::Middle,
                );
            }
        }
    }
    // Outline the cheapest cell(s) last so neighbours do not paint over it.
    if scale.have && cell_w >= 12.0 && cell_h >= 12.0 {
        for k in 0..cells.ny {
            for t in 0..cells.nx {
                if cells.get(k, t) == Some(scale.data_min) {
                    let (a, b, c, d) = grid.corners(t, k);
                    svg.frame(a + 1.0, b + 1.0, c - 1.0, d - 1.0, BLACK, 3.0);
                }
            }
        }
    }
}

/// Keep-last labels at row centres (thinned when rows are short) and the
/// threshold axis; returns the y below the axis.
fn draw_axis_labels(svg: &mut Svg, grid: &Grid, y_labels: &[String], thresholds: &[u64]) -> f64 {
    let (x0, cell_h, plot_bottom) = (grid.x0, grid.cell_h, grid.plot_bottom);
    let every = (line_h(TEXT_SIZE) / cell_h.max(0.1)).ceil().max(1.0) as usize;
    for (k, label) in y_labels.iter().enumerate().step_by(every) {
        let cy = plot_bottom - (k as f64 + 0.5) * cell_h;
        svg.text(
            (x0 - 6.0, baseline_for(cy, TEXT_SIZE)),
            label,
            TEXT_SIZE,
            TEXT,
            Anchor::End,
        );
    }
    let x_labels: Vec<(f64, String)> = thresholds
        .iter()
        .enumerate()
        .map(|(t, v)| {
            (
                x0 + (t as f64 + 0.5) * grid.cell_w,
                fmt::compact_count(*v as f64),
            )
        })
        .collect();
    draw_x_axis(
        svg,
        &x_labels,
        "threshold (chars)",
        (x0 + grid.x1) / 2.0,
        plot_bottom,
    )
}

/// The colour bar right of the plot: most expensive at the top.
fn draw_color_bar(svg: &mut Svg, x: f64, (y_top, y_bottom): (f64, f64), labels: &[String]) {
    let height = (y_bottom - y_top).max(2.0);
    let steps = 48;
    for s in 0..steps {
        let ya = y_top + height * f64::from(s) / f64::from(steps);
        let yb = y_top + height * f64::from(s + 1) / f64::from(steps);
        let t = (f64::from(s) + 0.5) / f64::from(steps);
        // Overlap by half a pixel so no seams show between steps.
        svg.rect(
            x,
            ya,
            x + BAR_W,
            (yb + 0.5).min(y_top + height),
            scale_color(t),
        );
    }
    svg.frame(x, y_top, x + BAR_W, y_top + height, AXIS, 1.0);
    let lx = x + BAR_W + 6.0;
    let half = line_h(TEXT_SIZE) / 2.0;
    let at = |cy: f64| baseline_for(cy, TEXT_SIZE);
    match labels {
        [top, mid, bottom] => {
            svg.text((lx, at(y_top + half)), top, TEXT_SIZE, TEXT, Anchor::Start);
            if height > 4.0 * line_h(TEXT_SIZE) {
                svg.text(
                    (lx, at(y_top + height / 2.0)),
                    mid,
                    TEXT_SIZE,
                    TEXT,
                    Anchor::Start,
                );
            }
            svg.text(
                (lx, at(y_top + height - half)),
                bottom,
                TEXT_SIZE,
                TEXT,
                Anchor::Start,
            );
        }
        [only] => svg.text(
            (lx, at(y_top + height / 2.0)),
            only,
            TEXT_SIZE,
            TEXT,
            Anchor::Start,
        ),
        _ => {}
    }
}

//! Cost against recall risk, one point per config: the trade-off a decision
//! needs. The Pareto front (no other config both as cheap and as safe, and
//! better in one) is joined and numbered, the numbers explained under the
//! chart; the status quo and the recommendation keep their fleet colours.

use super::layout::{
    AXIS, LegendItem, Marker, PAD, PALETTE, RECOMMENDED, STATUS_QUO, Scale, Swatch, TEXT,
    TEXT_SIZE, draw_no_data, draw_x_foot, draw_y_axis, layout_legend, nice_ticks, notes_height,
    plot_rows, usd_ticks, value_chart_height, wrap_notes, x_axis_h, y_labels_w,
};
use super::svg::{Anchor, Rgb, Svg, baseline_for, text_width};
use crate::fmt;

/// The front's colour.
const FRONT: Rgb = PALETTE[0];
/// Configs off the front.
const OTHER: Rgb = Rgb(170, 170, 170);

/// Indices of the points on the Pareto front of `(turns, cost)`, fewest
/// turns first: no other point has both no more turns and no more cost,
/// and less of one. Of points equal in both, the first given is kept.
pub(super) fn front(points: &[(String, f64, f64)]) -> Vec<usize> {
    let mut out: Vec<usize> = (0..points.len())
        .filter(|&i| {
            let (_, t, c) = &points[i];
            t.is_finite()
                && c.is_finite()
                && !points.iter().enumerate().any(|(j, (_, tj, cj))| {
                    j != i
                        && tj <= t
                        && cj <= c
                        && (tj < t || cj < c || (tj == t && cj == c && j < i))
                })
        })
        .collect();
    out.sort_by(|&a, &b| points[a].1.total_cmp(&points[b].1));
    out
}

fn legend_items(sq: bool, rec: bool) -> Vec<LegendItem> {
    let mut items = vec![
        LegendItem {
            swatch: Swatch::Line(FRONT, 2.0, Some(Marker::Circle)),
            label: "Pareto front (numbered below)".into(),
        },
        LegendItem {
            swatch: Swatch::Boxes(vec![OTHER]),
            label: "other configs".into(),
        },
    ];
    if sq {
        items.push(LegendItem {
            swatch: Swatch::Line(STATUS_QUO, 0.0, Some(Marker::Square)),
            label: "status quo".into(),
        });
    }
    if rec {
        items.push(LegendItem {
            swatch: Swatch::Line(RECOMMENDED, 0.0, Some(Marker::Diamond)),
            label: "recommended".into(),
        });
    }
    items
}

/// The cost range drawn: from the cheapest config to the dearest of the
/// front and the marked configs, padded; configs dearer than that are far
/// from any choice and would flatten the front into a line.
fn cost_range(points: &[(String, f64, f64)], marked: &[Option<usize>]) -> (f64, f64) {
    let finite = |c: f64| c.is_finite().then_some(c);
    let lo = points
        .iter()
        .filter_map(|p| finite(p.2))
        .fold(f64::INFINITY, f64::min);
    let hi = front(points)
        .into_iter()
        .chain(marked.iter().flatten().copied())
        .filter_map(|i| points.get(i).and_then(|p| finite(p.2)))
        .fold(lo, f64::max);
    let pad = ((hi - lo) * 0.15).max(hi.abs() * 0.02).max(0.01);
    // Zero is the floor of a cost axis, unless a cost lies below it.
    let bottom = if lo >= 0.0 {
        (lo - pad).max(0.0)
    } else {
        lo - pad
    };
    (bottom, hi + pad)
}

/// How many finite points lie above the drawn range.
fn left_out(points: &[(String, f64, f64)], top: f64) -> usize {
    points
        .iter()
        .filter(|p| p.1.is_finite() && p.2.is_finite() && p.2 > top)
        .count()
}

/// The lines under the chart: one per front point, what was left out above
/// the range, then the caller's notes.
fn note_lines(
    points: &[(String, f64, f64)],
    marked: &[Option<usize>],
    notes: &[String],
    w: f64,
) -> Vec<String> {
    let mut all: Vec<String> = front(points)
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            let (name, turns, cost) = &points[i];
            format!(
                "{}. {name}: {}, {} result(s) needed again",
                k + 1,
                fmt::dollars(*cost),
                fmt::needs(*turns)
            )
        })
        .collect();
    let (_, top) = cost_range(points, marked);
    let out = left_out(points, top);
    if out > 0 {
        all.push(format!(
            "{} config(s) cost more than {} and lie above the chart (every config is in the table).",
            fmt::thousands(out as u64),
            fmt::dollars(top)
        ));
    }
    all.push(
        "Recall risk: compacted results needed again (a line copied from them, or an identifier only they held, written later)."
            .to_owned(),
    );
    all.extend(notes.iter().cloned());
    wrap_notes(&all, w - 2.0 * PAD)
}

fn bottom_h(
    points: &[(String, f64, f64)],
    marked: [Option<usize>; 2],
    notes: &[String],
    w: f64,
) -> f64 {
    x_axis_h(true)
        + layout_legend(
            &legend_items(marked[0].is_some(), marked[1].is_some()),
            w - 2.0 * PAD,
        )
        .height
        + notes_height(&note_lines(points, &marked, notes, w))
}

pub(super) fn height(
    title: &str,
    points: &[(String, f64, f64)],
    marked: [Option<usize>; 2],
    notes: &[String],
    w: f64,
) -> f64 {
    let marked = marked.map(|m| m.filter(|&i| i < points.len()));
    value_chart_height(title, w, bottom_h(points, marked, notes, w))
}

pub(super) fn draw(
    svg: &mut Svg,
    title: &str,
    points: &[(String, f64, f64)],
    status_quo: Option<usize>,
    recommended: Option<usize>,
    notes: &[String],
) {
    let shown: Vec<&(String, f64, f64)> = points
        .iter()
        .filter(|(_, t, c)| t.is_finite() && c.is_finite())
        .collect();
    if shown.is_empty() {
        return draw_no_data(svg, title, "no config with a finite cost");
    }
    let (sq, rec) = (
        status_quo.filter(|&i| i < points.len()),
        recommended.filter(|&i| i < points.len()),
    );
    let w = svg.w;
    let items = legend_items(sq.is_some(), rec.is_some());
    let legend = layout_legend(&items, w - 2.0 * PAD);
    let lines = note_lines(points, &[sq, rec], notes, w);
    let bottom = x_axis_h(true) + legend.height + notes_height(&lines);
    let Some((plot_top, plot_bottom)) = plot_rows(svg, title, "cost (USD)", bottom) else {
        return;
    };
    let (lo, top) = cost_range(points, &[sq, rec]);
    let shown: Vec<&(String, f64, f64)> = shown.into_iter().filter(|p| p.2 <= top).collect();
    let (y0, y1, y_ticks) = nice_ticks(lo, top, 5);
    let y_ticks = usd_ticks(&y_ticks);
    let t_max = shown.iter().map(|p| p.1).fold(0.0f64, f64::max);
    let (_, t1, t_ticks) = nice_ticks(0.0, t_max.max(1.0), 6);
    let x0 = PAD + y_labels_w(&y_ticks);
    let x1 = w - PAD * 2.0;
    let ys = Scale {
        d0: y0,
        d1: y1,
        p0: plot_bottom,
        p1: plot_top,
    };
    let xs = Scale {
        d0: 0.0,
        d1: t1,
        p0: x0 + 8.0,
        p1: x1 - 8.0,
    };
    draw_y_axis(svg, &ys, &y_ticks, (x0, x1));
    svg.line((x0, plot_bottom), (x1, plot_bottom), AXIS, 1.0);
    svg.line((x0, plot_top), (x0, plot_bottom), AXIS, 1.0);
    let at = |p: &(String, f64, f64)| (xs.map(p.1), ys.map(p.2));
    for p in &shown {
        svg.circle(at(p), 3.0, OTHER);
    }
    draw_front(svg, points, (&xs, &ys), w);
    // The two the reader looks for, drawn last so nothing hides them.
    if let Some(i) = sq {
        let (x, y) = at(&points[i]);
        svg.rect(x - 6.0, y - 6.0, x + 6.0, y + 6.0, STATUS_QUO);
    }
    if let Some(i) = rec {
        let (x, y) = at(&points[i]);
        svg.polygon(
            &[(x, y - 8.0), (x + 7.0, y), (x, y + 8.0), (x - 7.0, y)],
            RECOMMENDED,
        );
    }
    let labels: Vec<(f64, String)> = t_ticks
        .iter()
        .filter(|v| v.fract() == 0.0)
        .map(|v| (xs.map(*v), fmt::thousands(*v as u64)))
        .collect();
    draw_x_foot(
        svg,
        &labels,
        "results needed again",
        (x0, x1),
        plot_bottom,
        &items,
        &legend,
        &lines,
    );
}

/// The cost-vs-recall front through `points`, each of its points numbered
/// beside it.
fn draw_front(svg: &mut Svg, points: &[(String, f64, f64)], (xs, ys): (&Scale, &Scale), w: f64) {
    let at = |p: &(String, f64, f64)| (xs.map(p.1), ys.map(p.2));
    let on_front = front(points);
    let path: Vec<(f64, f64)> = on_front.iter().map(|&i| at(&points[i])).collect();
    if path.len() > 1 {
        svg.polyline(&path, FRONT, 2.0);
    }
    for (k, &i) in on_front.iter().enumerate() {
        let (x, y) = at(&points[i]);
        svg.circle((x, y), 4.0, FRONT);
        // Right of the point, or left of it where the image ends.
        let label = (k + 1).to_string();
        let (lx, anchor) = if x + 7.0 + text_width(&label, TEXT_SIZE) > w - PAD / 2.0 {
            (x - 7.0, Anchor::End)
        } else {
            (x + 7.0, Anchor::Start)
        };
        svg.text(
            (lx, baseline_for(y - 9.0, TEXT_SIZE)),
            &label,
            TEXT_SIZE,
            TEXT,
            anchor,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::front;

    fn p(t: f64, c: f64) -> (String, f64, f64) {
        (format!("{t}/{c}"), t, c)
    }

    #[test]
    fn the_front_holds_exactly_the_undominated_configs() {
        let points = vec![
            p(0.0, 10.0), // safest: on the front
            p(5.0, 8.0),  // cheaper for some risk: on
            p(5.0, 9.0),  // as risky as the one before, dearer: off
            p(9.0, 8.0),  // as cheap as (5, 8), riskier: off
            p(20.0, 6.0), // cheapest: on
            p(0.0, 10.0), // a duplicate of the first: off
            p(3.0, 12.0), // dearer than the safest and riskier: off
        ];
        assert_eq!(front(&points), vec![0, 1, 4]);
        assert_eq!(front(&[]), Vec::<usize>::new());
        assert_eq!(front(&[p(f64::NAN, 1.0), p(1.0, 2.0)]), vec![1]);
    }
}

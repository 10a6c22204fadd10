//! Exporters for `tracecost sweep`: the ranked grid per trace.

use std::fmt::Write as _;

use serde::Serialize;

use super::fmt::{dollars, md_escape};
use super::replay_view::csv_field;
use crate::replay::sweep::TraceSweep;

/// Version tag of the sweep JSON.
pub const SWEEP_FORMAT: &str = "tracecost.sweep/v1";

#[derive(Serialize)]
struct Doc<'a> {
    format: &'static str,
    traces: &'a [TraceSweep],
}

/// The full sweep as versioned JSON (every row carries its per-call data).
pub fn json(sweeps: &[TraceSweep]) -> String {
    let mut s = serde_json::to_string_pretty(&Doc {
        format: SWEEP_FORMAT,
        traces: sweeps,
    })
    .unwrap_or_default();
    s.push('\n');
    s
}

/// The marks of a row: baseline, cheapest, recommended.
pub fn marks(s: &TraceSweep, i: usize) -> String {
    let mut m = Vec::new();
    if i == s.baseline {
        m.push("baseline");
    }
    if i == s.cheapest {
        m.push("cheapest");
    }
    if i == s.recommended {
        m.push("recommended");
    }
    m.join(", ")
}

/// One row per (trace, config).
pub fn csv(sweeps: &[TraceSweep]) -> String {
    let mut out = String::from(
        "trace,rank,config,cost_usd,savings_usd,savings_pct,input_tokens,cache_creation_input_tokens,cache_read_input_tokens,output_tokens,recall_risk_turns,recall_risk_quotes,pareto,marks\n",
    );
    for s in sweeps {
        for (i, r) in s.rows.iter().enumerate() {
            let u = &r.result.totals.usage;
            let _ = writeln!(
                out,
                "{},{},{},{:.6},{:.6},{:.2},{},{},{},{},{},{},{},{}",
                csv_field(&s.trace),
                i + 1,
                csv_field(&r.result.config),
                r.result.totals.cost_usd,
                r.savings_usd,
                r.savings_pct,
                u.input_tokens,
                u.cache_creation_input_tokens,
                u.cache_read_input_tokens,
                u.output_tokens,
                r.risk.turns,
                r.risk.quotes,
                r.pareto,
                csv_field(&marks(s, i))
            );
        }
    }
    out
}

fn cells(s: &TraceSweep) -> Vec<[String; 7]> {
    s.rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            [
                (i + 1).to_string(),
                r.result.config.clone(),
                dollars(r.result.totals.cost_usd),
                dollars(r.savings_usd),
                format!("{:.1}%", r.savings_pct),
                format!("{}{}", r.risk.turns, if r.pareto { " *" } else { "" }),
                marks(s, i),
            ]
        })
        .collect()
}

const HEAD: [&str; 7] = [
    "rank",
    "config",
    "cost",
    "saving",
    "saving %",
    "recall risk",
    "",
];

fn summary_lines(s: &TraceSweep) -> Vec<String> {
    let mut l = Vec::new();
    if let (Some(base), Some(best), Some(rec)) = (
        s.rows.get(s.baseline),
        s.rows.get(s.cheapest),
        s.rows.get(s.recommended),
    ) {
        l.push(format!(
            "baseline {}: {}",
            base.result.config,
            dollars(base.result.totals.cost_usd)
        ));
        l.push(format!(
            "cheapest {}: {} (saves {}, {:.1}%; recall risk {} turn(s))",
            best.result.config,
            dollars(best.result.totals.cost_usd),
            dollars(best.savings_usd),
            best.savings_pct,
            best.risk.turns
        ));
        l.push(format!(
            "recommended {}: {} (saves {}, {:.1}%; recall risk {} turn(s))",
            rec.result.config,
            dollars(rec.result.totals.cost_usd),
            dollars(rec.savings_usd),
            rec.savings_pct,
            rec.risk.turns
        ));
    }
    l.push("recall risk = assistant turns quoting text that only compacted results held; * = on the Pareto front of cost vs risk".into());
    l
}

/// Aligned text per trace.
pub fn table(sweeps: &[TraceSweep]) -> String {
    let mut out = String::new();
    for s in sweeps {
        let _ = writeln!(out, "{} — {} configs", s.trace, s.rows.len());
        let body = cells(s);
        let mut w = HEAD.map(str::len);
        for r in &body {
            for (x, c) in w.iter_mut().zip(r) {
                *x = (*x).max(c.chars().count());
            }
        }
        let line = |r: &[String]| {
            let mut l = String::new();
            for (i, (c, x)) in r.iter().zip(w).enumerate() {
                let pad = " ".repeat(x - c.chars().count());
                if i == 1 || i == 6 {
                    l.push_str(c);
                    l.push_str(&pad);
                } else {
                    l.push_str(&pad);
                    l.push_str(c);
                }
                l.push_str("  ");
            }
            l.trim_end().to_owned()
        };
        let _ = writeln!(out, "{}", line(&HEAD.map(String::from)));
        for r in &body {
            let _ = writeln!(out, "{}", line(r));
        }
        for l in summary_lines(s) {
            let _ = writeln!(out, "{l}");
        }
        out.push('\n');
    }
    out
}

/// A Markdown table per trace.
pub fn markdown(sweeps: &[TraceSweep]) -> String {
    let mut out = String::new();
    for s in sweeps {
        let _ = writeln!(out, "### {}\n", md_escape(&s.trace));
        let _ = writeln!(
            out,
            "| rank | config | cost | saving | saving % | recall risk | |"
        );
        let _ = writeln!(out, "|---:|---|---:|---:|---:|---:|---|");
        for r in cells(s) {
            let _ = writeln!(
                out,
                "| {} | `{}` | {} | {} | {} | {} | {} |",
                r[0], r[1], r[2], r[3], r[4], r[5], r[6]
            );
        }
        out.push('\n');
        for l in summary_lines(s) {
            let _ = writeln!(out, "- {}", md_escape(&l));
        }
        out.push('\n');
    }
    out
}

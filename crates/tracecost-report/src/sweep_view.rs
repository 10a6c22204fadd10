//! The view of `tracecost sweep`, [`SweepView`]: the ranked grid per trace.

use std::io::{self, Write};

use serde::Serialize;

use super::export::{
    CsvExporter, ExportFormat, Exportable, Exporter, JsonExporter, MarkdownExporter, TableExporter,
    aligned_lines, every_format, md_row, write_json, write_lines,
};
use super::fmt::{csv_field, dollars, fixed, md_escape, needs, percent};
use tracecost_replay::sweep::TraceSweep;

/// Version tag of the sweep JSON.
pub const SWEEP_FORMAT: &str = "tracecost.sweep/v1";

/// `tracecost sweep`: the swept traces of one run.
///
/// Json: the full sweep, versioned (every row carries its per-call data).
/// Csv: one row per (trace, config). Markdown: a table per trace. Table:
/// aligned text per trace.
#[derive(Debug, Clone, Copy)]
pub struct SweepView<'a> {
    /// The sweeps, one per trace.
    pub sweeps: &'a [TraceSweep],
}

impl Exportable for SweepView<'_> {
    fn exporter<'e>(format: ExportFormat) -> Option<&'e dyn Exporter<Self>> {
        Some(every_format(format))
    }
}

#[derive(Serialize)]
struct Doc<'a> {
    format: &'static str,
    traces: &'a [TraceSweep],
}

impl Exporter<SweepView<'_>> for JsonExporter {
    fn export(&self, view: &SweepView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let doc = Doc {
            format: SWEEP_FORMAT,
            traces: view.sweeps,
        };
        write_json(&doc, out)
    }
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

const CSV_HEADER: &str = "trace,rank,config,cost_usd,savings_usd,savings_pct,input_tokens,cache_creation_input_tokens,cache_read_input_tokens,output_tokens,recall_needs_low,recall_needs,recall_needs_high,pareto,marks";

impl Exporter<SweepView<'_>> for CsvExporter {
    fn export(&self, view: &SweepView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        writeln!(out, "{CSV_HEADER}")?;
        for s in view.sweeps {
            for (i, r) in s.rows.iter().enumerate() {
                let u = &r.result.totals.usage;
                writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    csv_field(&s.trace),
                    i + 1,
                    csv_field(&r.result.config.to_string()),
                    fixed(r.result.totals.cost_usd, 6),
                    fixed(r.savings_usd, 6),
                    fixed(r.savings_pct, 2),
                    u.input_tokens,
                    u.cache_creation_input_tokens,
                    u.cache_read_input_tokens,
                    u.output_tokens,
                    fixed(r.risk.needs.low, 2),
                    fixed(r.risk.needs.mid, 2),
                    fixed(r.risk.needs.high, 2),
                    r.pareto,
                    csv_field(&marks(s, i))
                )?;
            }
        }
        out.flush()
    }
}

fn cells(s: &TraceSweep) -> Vec<[String; 7]> {
    s.rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            [
                (i + 1).to_string(),
                r.result.config.to_string(),
                dollars(r.result.totals.cost_usd),
                dollars(r.savings_usd),
                percent(r.savings_pct, 1),
                format!(
                    "{}{}",
                    needs(r.risk.needs.mid),
                    if r.pareto { " *" } else { "" }
                ),
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
        for (label, row) in [("cheapest", best), ("recommended", rec)] {
            l.push(format!(
                "{label} {}: {} (saves {}, {}; {} result(s) needed again)",
                row.result.config,
                dollars(row.result.totals.cost_usd),
                dollars(row.savings_usd),
                percent(row.savings_pct, 1),
                needs(row.risk.needs.mid)
            ));
        }
    }
    l.push("recall risk = compacted results needed again (mid estimate: a copied line, or an identifier only they held, beyond what chance explains); * = on the Pareto front of cost vs risk".into());
    l
}

impl Exporter<SweepView<'_>> for TableExporter {
    fn export(&self, view: &SweepView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        for s in view.sweeps {
            writeln!(out, "{} — {} configs", s.trace, s.rows.len())?;
            // Config and marks are text; the rest numbers.
            write_lines(
                &mut out,
                aligned_lines(HEAD, &cells(s), |i| i != 1 && i != 6),
            )?;
            write_lines(&mut out, summary_lines(s))?;
            writeln!(out)?;
        }
        out.flush()
    }
}

impl Exporter<SweepView<'_>> for MarkdownExporter {
    fn export(&self, view: &SweepView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        for s in view.sweeps {
            writeln!(out, "### {}\n", md_escape(&s.trace))?;
            writeln!(
                out,
                "| rank | config | cost | saving | saving % | recall risk | |"
            )?;
            writeln!(out, "|---:|---|---:|---:|---:|---:|---|")?;
            for mut r in cells(s) {
                // Configs are code spans: their syntax has no backticks.
                r[1] = format!("`{}`", r[1]);
                writeln!(out, "{}", md_row(&r))?;
            }
            writeln!(out)?;
            write_lines(
                &mut out,
                summary_lines(s)
                    .iter()
                    .map(|l| format!("- {}", md_escape(l))),
            )?;
            writeln!(out)?;
        }
        out.flush()
    }
}

//! `tracecost fidelity --explain SESSION`: each call of a session's traces,
//! what the record shows beside what the simulation did, and why each
//! simulated write or miss happened.

use std::io::{self, Write};

use super::export::{
    CsvExporter, ExportFormat, Exportable, Exporter, JsonExporter, MarkdownExporter, TableExporter,
    aligned_lines, every_format, md_row, write_json, write_lines,
};
use super::fmt::{csv_field, dollars, fixed, md_escape, thousands};
use tracecost_app::fidelity::{ExplainedCall, Explanation, WITHIN_PCT};
use tracecost_cost::pricing::Usage;
use tracecost_replay::explain::gap_text;

/// Version tag of the explain JSON.
pub const EXPLAIN_FORMAT: &str = "tracecost.explain/v1";

/// The explained traces of one session.
///
/// Json: every trace with every call. Csv: one row per call. Markdown and
/// Table: per trace, a line saying where the simulation first diverges,
/// then a row per call.
#[derive(Debug, Clone, Copy)]
pub struct ExplainView<'a>(pub &'a [Explanation]);

impl Exportable for ExplainView<'_> {
    fn exporter<'e>(format: ExportFormat) -> Option<&'e dyn Exporter<Self>> {
        Some(every_format(format))
    }
}

#[derive(serde::Serialize)]
struct Doc<'a> {
    format: &'static str,
    traces: &'a [Explanation],
}

impl Exporter<ExplainView<'_>> for JsonExporter {
    fn export(&self, view: &ExplainView<'_>, out: &mut dyn Write) -> io::Result<()> {
        write_json(
            &Doc {
                format: EXPLAIN_FORMAT,
                traces: view.0,
            },
            out,
        )
    }
}

fn opt_u64(v: Option<u64>) -> String {
    v.map(|n| n.to_string()).unwrap_or_default()
}

impl Exporter<ExplainView<'_>> for CsvExporter {
    fn export(&self, view: &ExplainView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        writeln!(
            out,
            "trace,config,call,start_ms,gap_ms,recorded_read,recorded_write,recorded_uncached,simulated_read,simulated_write,simulated_uncached,recorded_usd,simulated_usd,diverges,cause,cause_text,newly_compacted,simulated_usd_as_recorded"
        )?;
        for e in view.0 {
            for c in &e.calls {
                let r = c.recorded.as_ref();
                writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    csv_field(&e.trace),
                    csv_field(&e.config),
                    c.index,
                    opt_u64(c.start_ms),
                    opt_u64(c.gap_ms),
                    opt_u64(r.map(|u| u.cache_read_input_tokens)),
                    opt_u64(r.map(|u| u.cache_creation_input_tokens)),
                    opt_u64(r.map(|u| u.input_tokens)),
                    c.simulated.cache_read_input_tokens,
                    c.simulated.cache_creation_input_tokens,
                    c.simulated.input_tokens,
                    c.recorded_cost_usd.map(|v| fixed(v, 6)).unwrap_or_default(),
                    fixed(c.cost_usd, 6),
                    c.diverges,
                    c.cause.map(|k| k.name()).unwrap_or_default(),
                    csv_field(c.cause_text.as_deref().unwrap_or_default()),
                    csv_field(&c.newly_compacted.join(" ")),
                    c.cost_usd_as_recorded
                        .map(|v| fixed(v, 6))
                        .unwrap_or_default(),
                )?;
            }
        }
        out.flush()
    }
}

/// The line above a trace's calls.
fn headline(e: &Explanation) -> String {
    let recorded = e.calls.iter().filter(|c| c.recorded.is_some()).count();
    let first = match e.first_divergence {
        _ if recorded == 0 => "no call recorded usage to compare with".to_owned(),
        Some(i) => format!(
            "{} of them off the record by more than {WITHIN_PCT}% of its prompt, the first at call {i}",
            e.diverging_calls
        ),
        None => format!("every call within {WITHIN_PCT}% of its recorded prompt and cache read"),
    };
    format!(
        "{}: {} calls replayed as {}; {first}.",
        e.trace,
        e.calls.len(),
        e.config
    )
}

const HEAD: [&str; 9] = [
    "call",
    "start",
    "gap",
    "recorded read/write/uncached",
    "simulated read/write/uncached",
    "recorded",
    "simulated",
    "",
    "why the simulation wrote or missed",
];

fn split(u: &Usage) -> String {
    format!(
        "{} / {} / {}",
        thousands(u.cache_read_input_tokens),
        thousands(u.cache_creation_input_tokens),
        thousands(u.input_tokens)
    )
}

/// `HH:MM:SS` (UTC) of a start.
fn time_of_day(ms: u64) -> String {
    let s = ms / 1000 % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
}

fn why(c: &ExplainedCall) -> String {
    let mut parts: Vec<String> = c.cause_text.iter().cloned().collect();
    if !c.newly_compacted.is_empty() {
        parts.push(format!(
            "policy compacted {} result(s)",
            c.newly_compacted.len()
        ));
    }
    if !c.restored.is_empty() {
        parts.push(format!("restored {}", c.restored.len()));
    }
    if let Some(usd) = c.cost_usd_as_recorded {
        parts.push(format!(
            "{} as the record counts its writes (as input)",
            dollars(usd)
        ));
    }
    parts.join("; ")
}

fn cells(e: &Explanation) -> Vec<[String; 9]> {
    e.calls
        .iter()
        .map(|c| {
            [
                c.index.to_string(),
                c.start_ms.map(time_of_day).unwrap_or_default(),
                c.gap_ms.map(gap_text).unwrap_or_default(),
                c.recorded.as_ref().map(split).unwrap_or_default(),
                split(&c.simulated),
                c.recorded_cost_usd.map(dollars).unwrap_or_default(),
                dollars(c.cost_usd),
                if c.diverges { "≠" } else { "" }.into(),
                why(c),
            ]
        })
        .collect()
}

fn legend() -> String {
    format!(
        "≠ = the simulation's cache read or prompt size is off the record's by more than {WITHIN_PCT}% of the recorded prompt. A call with no reason given read everything the call before had cached."
    )
}

impl Exporter<ExplainView<'_>> for MarkdownExporter {
    fn export(&self, view: &ExplainView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        for e in view.0 {
            writeln!(
                out,
                "## {}\n\n{}\n",
                md_escape(&e.trace),
                md_escape(&headline(e))
            )?;
            writeln!(out, "{}", md_row(&HEAD))?;
            writeln!(out, "|---:|---|---:|---:|---:|---:|---:|---|---|")?;
            for row in cells(e) {
                let row: Vec<String> = row.iter().map(|c| md_escape(c)).collect();
                writeln!(out, "{}", md_row(&row))?;
            }
            writeln!(out)?;
        }
        writeln!(out, "{}", legend())?;
        out.flush()
    }
}

impl Exporter<ExplainView<'_>> for TableExporter {
    fn export(&self, view: &ExplainView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        for e in view.0 {
            writeln!(out, "{}", headline(e))?;
            writeln!(out)?;
            write_lines(
                &mut out,
                aligned_lines(HEAD, &cells(e), |i| matches!(i, 0 | 2..=6)),
            )?;
            writeln!(out)?;
        }
        writeln!(out, "{}", legend())?;
        out.flush()
    }
}

//! Exporters for `tracecost replay`: one small exporter per format behind
//! one trait, all fed the same [`ReplayOutput`].

use std::fmt::Write as _;
use std::io::{self, Write as _};

use serde::Serialize;

use super::fmt::{dollars, thousands};
use crate::replay::{CallResult, ReplayResult, Totals};

/// Version tag of the replay JSON.
pub const REPLAY_FORMAT: &str = "tracecost.replay/v1";

/// One replayed trace with what it is compared against.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayOutput {
    /// The replay.
    #[serde(flatten)]
    pub result: ReplayResult,
    /// Savings against the recorded cost and against no compaction.
    pub savings: Savings,
}

/// Savings of a replay against its references (positive = cheaper).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Savings {
    /// Against the recorded cost of the calls that recorded usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs_recorded_usd: Option<f64>,
    /// Same, in percent of the recorded cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs_recorded_pct: Option<f64>,
    /// Against the same cache policy without compaction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs_no_compaction_usd: Option<f64>,
    /// Same, in percent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vs_no_compaction_pct: Option<f64>,
}

impl Savings {
    /// Computes savings of `totals` against the recorded cost and against
    /// `no_compaction` (when given).
    pub fn of(totals: &Totals, no_compaction: Option<&Totals>) -> Savings {
        let mut s = Savings::default();
        if let (Some(rec), Some(sim)) = (totals.recorded_cost_usd, totals.cost_usd_recorded_calls) {
            s.vs_recorded_usd = Some(rec - sim);
            s.vs_recorded_pct = (rec > 0.0).then(|| (rec - sim) / rec * 100.0);
        }
        if let Some(base) = no_compaction {
            s.vs_no_compaction_usd = Some(base.cost_usd - totals.cost_usd);
            s.vs_no_compaction_pct = (base.cost_usd > 0.0)
                .then(|| (base.cost_usd - totals.cost_usd) / base.cost_usd * 100.0);
        }
        s
    }
}

/// Renders replays in one output format.
pub trait ReplayExporter {
    /// Writes the rendered text to `out`. JSON and CSV go out piece by
    /// piece: the per-call lists of compacted ids of a long trace make
    /// hundreds of MB that need not be held in memory.
    fn write(&self, outputs: &[ReplayOutput], out: &mut dyn io::Write) -> io::Result<()>;

    /// The rendered text.
    fn render(&self, outputs: &[ReplayOutput]) -> String {
        let mut buf = Vec::new();
        // Writing to memory cannot fail, and every exporter writes UTF-8.
        let _ = self.write(outputs, &mut buf);
        String::from_utf8(buf)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }
}

/// `--format json`: one object per trace (`calls`, `totals`), or
/// `{"traces": [...]}` when the file held several.
pub struct JsonExporter;
/// `--format csv`: one row per call, with a trace and config column.
pub struct CsvExporter;
/// `--format md`: a Markdown table per trace.
pub struct MarkdownExporter;
/// `--format table`: aligned text for a terminal.
pub struct TableExporter;

#[derive(Serialize)]
struct JsonDoc<'a> {
    format: &'static str,
    #[serde(flatten)]
    output: &'a ReplayOutput,
}

#[derive(Serialize)]
struct JsonMany<'a> {
    format: &'static str,
    traces: &'a [ReplayOutput],
}

impl ReplayExporter for JsonExporter {
    fn write(&self, outputs: &[ReplayOutput], out: &mut dyn io::Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        match outputs {
            [one] => serde_json::to_writer_pretty(
                &mut out,
                &JsonDoc {
                    format: REPLAY_FORMAT,
                    output: one,
                },
            ),
            many => serde_json::to_writer_pretty(
                &mut out,
                &JsonMany {
                    format: REPLAY_FORMAT,
                    traces: many,
                },
            ),
        }
        .map_err(io::Error::from)?;
        out.write_all(b"\n")?;
        out.flush()
    }
}

const CSV_HEADER: &str = "trace,config,index,messages,chars,input_tokens,cache_creation_input_tokens,ephemeral_5m_input_tokens,ephemeral_1h_input_tokens,cache_read_input_tokens,output_tokens,cost_usd,recorded_input_total,recorded_cost_usd,compacted";

/// Quotes a CSV field when it needs it (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

impl ReplayExporter for CsvExporter {
    fn write(&self, outputs: &[ReplayOutput], out: &mut dyn io::Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        writeln!(out, "{CSV_HEADER}")?;
        for o in outputs {
            for c in &o.result.calls {
                let rec_total = c
                    .recorded
                    .map(|u| u.total_input().to_string())
                    .unwrap_or_default();
                let rec_cost = c
                    .recorded_cost_usd
                    .map(|v| format!("{v:.6}"))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{},{:.6},{},{},{}",
                    csv_field(&o.result.trace),
                    csv_field(&o.result.config),
                    c.index,
                    c.messages,
                    c.chars,
                    c.usage.input_tokens,
                    c.usage.cache_creation_input_tokens,
                    c.usage.write_5m(),
                    c.usage.write_1h(),
                    c.usage.cache_read_input_tokens,
                    c.usage.output_tokens,
                    c.cost_usd,
                    rec_total,
                    rec_cost,
                    csv_field(&c.compacted.join(" "))
                )?;
            }
        }
        out.flush()
    }
}

fn rows(o: &ReplayOutput) -> Vec<[String; 10]> {
    let mut out: Vec<[String; 10]> = o.result.calls.iter().map(row).collect();
    let t = &o.result.totals;
    out.push([
        "total".into(),
        String::new(),
        thousands(t.chars),
        thousands(t.usage.input_tokens),
        thousands(t.usage.write_5m()),
        thousands(t.usage.write_1h()),
        thousands(t.usage.cache_read_input_tokens),
        thousands(t.usage.output_tokens),
        dollars(t.cost_usd),
        format!("{} result(s)", t.compacted_results),
    ]);
    out
}

fn row(c: &CallResult) -> [String; 10] {
    let compacted = match c.compacted.len() {
        0 => String::new(),
        1..=2 => c.compacted.join(" "),
        n => format!("{} … ({n})", c.compacted[..2].join(" ")),
    };
    [
        c.index.to_string(),
        c.messages.to_string(),
        thousands(c.chars),
        thousands(c.usage.input_tokens),
        thousands(c.usage.write_5m()),
        thousands(c.usage.write_1h()),
        thousands(c.usage.cache_read_input_tokens),
        thousands(c.usage.output_tokens),
        dollars(c.cost_usd),
        compacted,
    ]
}

const HEAD: [&str; 10] = [
    "call",
    "msgs",
    "chars",
    "uncached",
    "write 5m",
    "write 1h",
    "read",
    "output",
    "cost",
    "compacted",
];

fn footer(o: &ReplayOutput) -> Vec<String> {
    let r = &o.result;
    let mut lines = Vec::new();
    let s = &o.savings;
    if let (Some(usd), Some(rec), Some(sim)) = (
        s.vs_recorded_usd,
        r.totals.recorded_cost_usd,
        r.totals.cost_usd_recorded_calls,
    ) {
        lines.push(format!(
            "recorded cost of the {} call(s) with usage: {}; simulated: {}; saving {} ({})",
            r.totals.recorded_calls,
            dollars(rec),
            dollars(sim),
            dollars(usd),
            s.vs_recorded_pct
                .map(|p| format!("{p:.1}%"))
                .unwrap_or_else(|| "n/a".into())
        ));
    }
    if let Some(usd) = s.vs_no_compaction_usd {
        lines.push(format!(
            "saving against no compaction (same cache policy): {} ({})",
            dollars(usd),
            s.vs_no_compaction_pct
                .map(|p| format!("{p:.1}%"))
                .unwrap_or_else(|| "n/a".into())
        ));
    }
    if let Some(f) = &r.fidelity {
        let pct = |a: u64, b: u64| {
            if b == 0 {
                "n/a".to_owned()
            } else {
                format!("{:+.1}%", (a as f64 - b as f64) / b as f64 * 100.0)
            }
        };
        lines.push(format!(
            "simulated vs recorded over {} call(s): total input {} vs {} ({}), cache read {} vs {} ({}), cache write {} vs {} ({}); mean per-call error {:.1}%, {} call(s) within 5%, cache hit/miss agrees on {}",
            f.calls,
            thousands(f.simulated_input),
            thousands(f.recorded_input),
            pct(f.simulated_input, f.recorded_input),
            thousands(f.simulated_read),
            thousands(f.recorded_read),
            pct(f.simulated_read, f.recorded_read),
            thousands(f.simulated_write),
            thousands(f.recorded_write),
            pct(f.simulated_write, f.recorded_write),
            f.mean_abs_error_pct,
            f.within_5pct,
            f.hit_agreement
        ));
    }
    if let Some(c) = super::fmt::calibration_note(&r.calibration) {
        lines.push(c);
    }
    if r.back_to_back {
        lines.push(
            "calls without start times were treated as back-to-back (favours caching)".into(),
        );
    }
    lines
}

impl ReplayExporter for TableExporter {
    fn write(&self, outputs: &[ReplayOutput], out: &mut dyn io::Write) -> io::Result<()> {
        out.write_all(self.text(outputs).as_bytes())
    }
}

impl TableExporter {
    fn text(&self, outputs: &[ReplayOutput]) -> String {
        let mut s = String::new();
        for o in outputs {
            let _ = writeln!(
                s,
                "{} — {} — {}",
                o.result.trace, o.result.config, o.result.model
            );
            let body = rows(o);
            let mut widths = HEAD.map(str::len);
            for r in &body {
                for (w, cell) in widths.iter_mut().zip(r) {
                    *w = (*w).max(cell.chars().count());
                }
            }
            let line = |cells: &[String]| {
                let mut l = String::new();
                for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
                    let pad = w - cell.chars().count();
                    if i == cells.len() - 1 {
                        l.push_str(cell);
                    } else {
                        // Numbers right-aligned.
                        l.push_str(&" ".repeat(pad));
                        l.push_str(cell);
                        l.push_str("  ");
                    }
                }
                l.trim_end().to_owned()
            };
            let _ = writeln!(s, "{}", line(&HEAD.map(String::from)));
            for r in &body {
                let _ = writeln!(s, "{}", line(r));
            }
            for f in footer(o) {
                let _ = writeln!(s, "{f}");
            }
            s.push('\n');
        }
        s
    }
}

impl ReplayExporter for MarkdownExporter {
    fn write(&self, outputs: &[ReplayOutput], out: &mut dyn io::Write) -> io::Result<()> {
        out.write_all(self.text(outputs).as_bytes())
    }
}

impl MarkdownExporter {
    fn text(&self, outputs: &[ReplayOutput]) -> String {
        let mut s = String::new();
        for o in outputs {
            let _ = writeln!(
                s,
                "### {} — `{}` — {}\n",
                super::fmt::md_escape(&o.result.trace),
                o.result.config,
                o.result.model
            );
            let _ = writeln!(s, "| {} |", HEAD.join(" | "));
            let _ = writeln!(s, "|{}", "---:|".repeat(HEAD.len() - 1) + "---|");
            for r in rows(o) {
                let cells: Vec<String> = r.iter().map(|c| super::fmt::md_escape(c)).collect();
                let _ = writeln!(s, "| {} |", cells.join(" | "));
            }
            s.push('\n');
            for f in footer(o) {
                let _ = writeln!(s, "- {f}");
            }
            s.push('\n');
        }
        s
    }
}

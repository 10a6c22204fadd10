//! The view of `tracecost replay`, [`ReplayView`], in every format. JSON
//! and CSV go out piece by piece: the per-call lists of compacted ids of a
//! long trace make hundreds of MB that need not be held in memory.

use std::io::{self, Write};

use serde::Serialize;

use super::export::{
    CsvExporter, ExportFormat, Exportable, Exporter, JsonExporter, MarkdownExporter, TableExporter,
    aligned_lines, every_format, md_row, write_json, write_lines,
};
use super::fmt::{
    calibration_note, csv_field, dollars, fixed, md_escape, percent, signed_percent_places,
    thousands,
};
use tracecost_app::ReplayReport;
use tracecost_replay::CallResult;

/// Version tag of the replay JSON.
pub const REPLAY_FORMAT: &str = "tracecost.replay/v1";

/// `tracecost replay`: every replayed trace of one run.
///
/// Json: one object per trace (`calls`, `totals`), or `{"traces": [...]}`
/// when the file held several. Csv: one row per call, with a trace and
/// config column. Markdown: a table per trace. Table: aligned text.
#[derive(Debug, Clone, Copy)]
pub struct ReplayView<'a>(pub &'a [ReplayReport]);

impl Exportable for ReplayView<'_> {
    fn exporter<'e>(format: ExportFormat) -> Option<&'e dyn Exporter<Self>> {
        Some(every_format(format))
    }
}

#[derive(Serialize)]
struct JsonDoc<'a> {
    format: &'static str,
    #[serde(flatten)]
    output: &'a ReplayReport,
}

#[derive(Serialize)]
struct JsonMany<'a> {
    format: &'static str,
    traces: &'a [ReplayReport],
}

impl Exporter<ReplayView<'_>> for JsonExporter {
    fn export(&self, view: &ReplayView<'_>, out: &mut dyn Write) -> io::Result<()> {
        match view.0 {
            [one] => write_json(
                &JsonDoc {
                    format: REPLAY_FORMAT,
                    output: one,
                },
                out,
            ),
            many => write_json(
                &JsonMany {
                    format: REPLAY_FORMAT,
                    traces: many,
                },
                out,
            ),
        }
    }
}

const CSV_HEADER: &str = "trace,config,index,messages,chars,input_tokens,cache_creation_input_tokens,ephemeral_5m_input_tokens,ephemeral_1h_input_tokens,cache_read_input_tokens,output_tokens,cost_usd,recorded_input_total,recorded_cost_usd,compacted";

impl Exporter<ReplayView<'_>> for CsvExporter {
    fn export(&self, view: &ReplayView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        writeln!(out, "{CSV_HEADER}")?;
        for o in view.0 {
            for c in &o.result.calls {
                let rec_total = c
                    .recorded()
                    .map(|u| u.total_input().to_string())
                    .unwrap_or_default();
                let rec_cost = c
                    .recorded_cost_usd()
                    .map(|v| fixed(v, 6))
                    .unwrap_or_default();
                writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    csv_field(&o.result.trace),
                    csv_field(&o.result.config.to_string()),
                    c.index,
                    c.messages,
                    c.chars,
                    c.usage.input_tokens,
                    c.usage.cache_creation_input_tokens,
                    c.usage.write_5m(),
                    c.usage.write_1h(),
                    c.usage.cache_read_input_tokens,
                    c.usage.output_tokens,
                    fixed(c.cost_usd, 6),
                    rec_total,
                    rec_cost,
                    csv_field(&c.compacted.join(" "))
                )?;
            }
        }
        out.flush()
    }
}

fn rows(o: &ReplayReport) -> Vec<[String; 10]> {
    let mut out: Vec<[String; 10]> = o.result.calls.iter().map(|c| row(&c)).collect();
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

/// What a summarising policy's own calls cost, when it made any: a trace's
/// line and a fleet's.
pub(crate) fn summary_calls_line(t: &tracecost_replay::Totals) -> Option<String> {
    (t.summary_calls > 0).then(|| {
        format!(
            "summary calls: {} (each a call of its own, in the table), costing {} of the {} total",
            t.summary_calls,
            dollars(t.summary_cost_usd),
            dollars(t.cost_usd)
        )
    })
}

fn footer(o: &ReplayReport) -> Vec<String> {
    let r = &o.result;
    let mut lines = Vec::new();
    let s = &o.savings;
    lines.extend(summary_calls_line(&r.totals));
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
                .map(|p| percent(p, 1))
                .unwrap_or_else(|| "n/a".into())
        ));
    }
    if let Some(usd) = s.vs_no_compaction_usd {
        lines.push(format!(
            "saving against no compaction (same cache policy): {} ({})",
            dollars(usd),
            s.vs_no_compaction_pct
                .map(|p| percent(p, 1))
                .unwrap_or_else(|| "n/a".into())
        ));
    }
    if let Some(f) = &r.fidelity {
        let pct = |a: u64, b: u64| {
            if b == 0 {
                "n/a".to_owned()
            } else {
                signed_percent_places((a as f64 - b as f64) / b as f64 * 100.0, 1)
            }
        };
        lines.push(format!(
            "simulated vs recorded over {} call(s): total input {} vs {} ({}), cache read {} vs {} ({}), cache write {} vs {} ({}); mean per-call error {}, {} call(s) within 5%, cache hit/miss agrees on {}",
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
            percent(f.mean_abs_error_pct, 1),
            f.within_5pct,
            f.hit_agreement
        ));
    }
    if let Some(c) = calibration_note(&r.calibration) {
        lines.push(c);
    }
    if r.back_to_back {
        lines.push(
            "calls without start times were treated as back-to-back (favours caching)".into(),
        );
    }
    lines
}

impl Exporter<ReplayView<'_>> for TableExporter {
    fn export(&self, view: &ReplayView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        for o in view.0 {
            writeln!(
                out,
                "{} — {} — {}",
                o.result.trace, o.result.config, o.result.model
            )?;
            // Numbers right-aligned; the compacted ids last, as they come.
            write_lines(
                &mut out,
                aligned_lines(HEAD, &rows(o), |i| i + 1 < HEAD.len()),
            )?;
            write_lines(&mut out, footer(o))?;
            writeln!(out)?;
        }
        out.flush()
    }
}

impl Exporter<ReplayView<'_>> for MarkdownExporter {
    fn export(&self, view: &ReplayView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        for o in view.0 {
            writeln!(
                out,
                "### {} — `{}` — {}\n",
                md_escape(&o.result.trace),
                o.result.config,
                o.result.model
            )?;
            writeln!(out, "{}", md_row(&HEAD))?;
            writeln!(out, "|{}", "---:|".repeat(HEAD.len() - 1) + "---|")?;
            for r in rows(o) {
                writeln!(out, "{}", md_row(&r.map(|c| md_escape(&c))))?;
            }
            writeln!(out)?;
            write_lines(&mut out, footer(o).iter().map(|f| format!("- {f}")))?;
            writeln!(out)?;
        }
        out.flush()
    }
}

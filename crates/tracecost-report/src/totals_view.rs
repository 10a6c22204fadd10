//! The fleet totals of `tracecost replay` and `tracecost sweep` over
//! several traces, [`ReplayTotalsView`] and [`SweepTotalsView`], in every
//! format: one total instead of a table per trace, with each trace's own
//! output before it on request.
//!
//! Json: `{"format", "fleet", "traces"?}`, `traces` being what the
//! per-trace view holds. Csv: one table whose first column, `scope`, says
//! what a row sums: `fleet` (every trace), `config` (a replay's traces
//! under one config) or `trace` (one trace, on request). Markdown and
//! Table: the per-trace tables on request, then the fleet's.

use std::io::{self, Write};

use serde::Serialize;

use super::export::{
    CsvExporter, ExportFormat, Exportable, Exporter, JsonExporter, MarkdownExporter, TableExporter,
    aligned_lines, every_format, md_row, write_json, write_lines,
};
use super::fmt::{csv_field, dollars, fixed, md_escape, needs, percent, thousands};
use super::replay_view::ReplayView;
use super::sweep_view::SweepView;
use tracecost_app::ReplayReport;
use tracecost_app::fleet::FleetFigures;
use tracecost_app::totals::{ReplayGroup, ReplayTotals, SweepTotals};
use tracecost_replay::sweep::TraceSweep;

/// Version tag of a replay's fleet JSON.
pub const REPLAY_TOTALS_FORMAT: &str = "tracecost.replay.fleet/v1";
/// Version tag of a sweep's fleet JSON.
pub const SWEEP_TOTALS_FORMAT: &str = "tracecost.sweep.fleet/v1";

/// `tracecost replay` over several traces.
#[derive(Debug, Clone, Copy)]
pub struct ReplayTotalsView<'a> {
    /// The totals.
    pub totals: &'a ReplayTotals,
    /// Each trace's replay, when asked for.
    pub per_trace: Option<&'a [ReplayReport]>,
}

/// `tracecost sweep` over several traces.
#[derive(Debug, Clone, Copy)]
pub struct SweepTotalsView<'a> {
    /// The totals.
    pub totals: &'a SweepTotals,
    /// Each trace's sweep, when asked for.
    pub per_trace: Option<&'a [TraceSweep]>,
}

impl Exportable for ReplayTotalsView<'_> {
    fn exporter<'e>(format: ExportFormat) -> Option<&'e dyn Exporter<Self>> {
        Some(every_format(format))
    }
}

impl Exportable for SweepTotalsView<'_> {
    fn exporter<'e>(format: ExportFormat) -> Option<&'e dyn Exporter<Self>> {
        Some(every_format(format))
    }
}

#[derive(Serialize)]
struct Doc<'a, F: Serialize, T: Serialize> {
    format: &'static str,
    fleet: &'a F,
    #[serde(skip_serializing_if = "Option::is_none")]
    traces: Option<&'a [T]>,
}

fn heading(sessions: usize, traces: usize) -> String {
    format!("fleet — {sessions} session(s), {traces} trace(s)")
}

// ---- replay -------------------------------------------------------------

impl Exporter<ReplayTotalsView<'_>> for JsonExporter {
    fn export(&self, view: &ReplayTotalsView<'_>, out: &mut dyn Write) -> io::Result<()> {
        write_json(
            &Doc {
                format: REPLAY_TOTALS_FORMAT,
                fleet: view.totals,
                traces: view.per_trace,
            },
            out,
        )
    }
}

const REPLAY_CSV_HEADER: &str = "scope,trace,config,sessions,traces,calls,chars,input_tokens,cache_creation_input_tokens,ephemeral_5m_input_tokens,ephemeral_1h_input_tokens,cache_read_input_tokens,output_tokens,cost_usd,recorded_calls,recorded_cost_usd,cost_usd_recorded_calls,compacted_results";

fn replay_csv_row(
    out: &mut impl Write,
    scope: &str,
    trace: &str,
    config: &str,
    (sessions, traces): (usize, usize),
    t: &tracecost_replay::Totals,
) -> io::Result<()> {
    let opt = |v: Option<f64>| v.map(|v| fixed(v, 6)).unwrap_or_default();
    writeln!(
        out,
        "{scope},{},{},{sessions},{traces},{},{},{},{},{},{},{},{},{},{},{},{},{}",
        csv_field(trace),
        csv_field(config),
        t.calls,
        t.chars,
        t.usage.input_tokens,
        t.usage.cache_creation_input_tokens,
        t.usage.write_5m(),
        t.usage.write_1h(),
        t.usage.cache_read_input_tokens,
        t.usage.output_tokens,
        fixed(t.cost_usd, 6),
        t.recorded_calls,
        opt(t.recorded_cost_usd),
        opt(t.cost_usd_recorded_calls),
        t.compacted_results
    )
}

impl Exporter<ReplayTotalsView<'_>> for CsvExporter {
    fn export(&self, view: &ReplayTotalsView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        writeln!(out, "{REPLAY_CSV_HEADER}")?;
        for o in view.per_trace.unwrap_or_default() {
            let r = &o.result;
            replay_csv_row(
                &mut out,
                "trace",
                &r.trace,
                &r.config.to_string(),
                (1, 1),
                &r.totals,
            )?;
        }
        let t = view.totals;
        if t.configs.len() > 1 {
            for g in &t.configs {
                replay_csv_row(
                    &mut out,
                    "config",
                    "",
                    &g.config.to_string(),
                    (g.sessions, g.traces),
                    &g.totals,
                )?;
            }
        }
        let g = &t.total;
        replay_csv_row(
            &mut out,
            "fleet",
            "",
            &g.config.to_string(),
            (g.sessions, g.traces),
            &g.totals,
        )?;
        out.flush()
    }
}

const REPLAY_HEAD: [&str; 11] = [
    "config",
    "traces",
    "calls",
    "chars",
    "uncached",
    "write 5m",
    "write 1h",
    "read",
    "output",
    "cost",
    "compacted",
];

fn replay_cells(label: &str, g: &ReplayGroup) -> [String; 11] {
    let t = &g.totals;
    [
        label.to_owned(),
        g.traces.to_string(),
        thousands(t.calls as u64),
        thousands(t.chars),
        thousands(t.usage.input_tokens),
        thousands(t.usage.write_5m()),
        thousands(t.usage.write_1h()),
        thousands(t.usage.cache_read_input_tokens),
        thousands(t.usage.output_tokens),
        dollars(t.cost_usd),
        format!("{} result(s)", t.compacted_results),
    ]
}

fn replay_rows(t: &ReplayTotals) -> Vec<[String; 11]> {
    let mut rows: Vec<[String; 11]> = t
        .configs
        .iter()
        .map(|g| replay_cells(&g.config.to_string(), g))
        .collect();
    if t.configs.len() > 1 {
        rows.push(replay_cells("total", &t.total));
    }
    rows
}

fn replay_footer(t: &ReplayTotals) -> Vec<String> {
    let g = &t.total;
    let mut lines = Vec::new();
    let pct = |p: Option<f64>| p.map_or_else(|| "n/a".to_owned(), |p| percent(p, 1));
    lines.extend(super::replay_view::summary_calls_line(&g.totals));
    if let (Some(usd), Some(rec), Some(sim)) = (
        g.savings.vs_recorded_usd,
        g.totals.recorded_cost_usd,
        g.totals.cost_usd_recorded_calls,
    ) {
        lines.push(format!(
            "recorded cost of the {} call(s) with usage: {}; simulated: {}; saving {} ({})",
            thousands(g.totals.recorded_calls as u64),
            dollars(rec),
            dollars(sim),
            dollars(usd),
            pct(g.savings.vs_recorded_pct)
        ));
    }
    if let Some(usd) = g.savings.vs_no_compaction_usd {
        lines.push(format!(
            "saving against no compaction (same cache policy), over the traces that compact: {} ({})",
            dollars(usd),
            pct(g.savings.vs_no_compaction_pct)
        ));
    }
    if g.config.is_mixed() {
        lines.push("the traces ran under different configs: one row each, and their total".into());
    }
    lines
}

impl Exporter<ReplayTotalsView<'_>> for TableExporter {
    fn export(&self, view: &ReplayTotalsView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        if let Some(p) = view.per_trace {
            TableExporter.export(&ReplayView(p), &mut out)?;
        }
        let t = view.totals;
        writeln!(out, "{}", heading(t.sessions, t.traces))?;
        write_lines(
            &mut out,
            aligned_lines(REPLAY_HEAD, &replay_rows(t), |i| i != 0 && i + 1 < 11),
        )?;
        write_lines(&mut out, replay_footer(t))?;
        out.flush()
    }
}

impl Exporter<ReplayTotalsView<'_>> for MarkdownExporter {
    fn export(&self, view: &ReplayTotalsView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        if let Some(p) = view.per_trace {
            MarkdownExporter.export(&ReplayView(p), &mut out)?;
        }
        let t = view.totals;
        writeln!(out, "### {}\n", heading(t.sessions, t.traces))?;
        writeln!(out, "{}", md_row(&REPLAY_HEAD))?;
        writeln!(
            out,
            "|---|{}",
            "---:|".repeat(REPLAY_HEAD.len() - 2) + "---|"
        )?;
        for mut r in replay_rows(t) {
            if r[0] != "total" {
                r[0] = format!("`{}`", r[0]);
            }
            writeln!(out, "{}", md_row(&r))?;
        }
        writeln!(out)?;
        write_lines(
            &mut out,
            replay_footer(t)
                .iter()
                .map(|l| format!("- {}", md_escape(l))),
        )?;
        out.flush()
    }
}

// ---- sweep --------------------------------------------------------------

impl Exporter<SweepTotalsView<'_>> for JsonExporter {
    fn export(&self, view: &SweepTotalsView<'_>, out: &mut dyn Write) -> io::Result<()> {
        write_json(
            &Doc {
                format: SWEEP_TOTALS_FORMAT,
                fleet: view.totals,
                traces: view.per_trace,
            },
            out,
        )
    }
}

/// The marks of the fleet's row `i`.
fn fleet_marks(t: &SweepTotals, i: usize) -> String {
    let mut m = Vec::new();
    if t.configs[i].config == t.status_quo.config {
        m.push("status quo");
    }
    if i == t.cheapest {
        m.push("cheapest");
    }
    if t.recommended == Some(i) {
        m.push("recommended");
    }
    if t.configs[i].no_effect {
        m.push("no effect");
    }
    m.join(", ")
}

const SWEEP_CSV_HEADER: &str = "scope,trace,rank,config,cost_usd,savings_usd,savings_pct,input_tokens,cache_creation_input_tokens,cache_read_input_tokens,output_tokens,recall_needs,compacted_results,skipped_traces,marks";

impl Exporter<SweepTotalsView<'_>> for CsvExporter {
    fn export(&self, view: &SweepTotalsView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        writeln!(out, "{SWEEP_CSV_HEADER}")?;
        for s in view.per_trace.unwrap_or_default() {
            for (i, r) in s.rows.iter().enumerate() {
                let t = &r.result.totals;
                writeln!(
                    out,
                    "trace,{},{},{},{},{},{},{},{},{},{},{},{},0,{}",
                    csv_field(&s.trace),
                    i + 1,
                    csv_field(&r.result.config.to_string()),
                    fixed(t.cost_usd, 6),
                    fixed(r.savings_usd, 6),
                    fixed(r.savings_pct, 2),
                    t.usage.input_tokens,
                    t.usage.cache_creation_input_tokens,
                    t.usage.cache_read_input_tokens,
                    t.usage.output_tokens,
                    fixed(r.risk.needs.mid, 2),
                    t.compacted_results,
                    csv_field(&super::sweep_view::marks(s, i))
                )?;
            }
        }
        let t = view.totals;
        for (i, f) in t.configs.iter().enumerate() {
            writeln!(
                out,
                "fleet,,{},{},{},{},{},{},{},{},{},{},{},{},{}",
                i + 1,
                csv_field(&f.config.to_string()),
                fixed(f.cost_usd, 6),
                fixed(f.savings_usd, 6),
                fixed(f.savings_pct, 2),
                f.input_tokens,
                f.cache_creation_input_tokens,
                f.cache_read_input_tokens,
                f.output_tokens,
                fixed(f.recall_needs, 2),
                f.compacted_results,
                f.skipped_traces,
                csv_field(&fleet_marks(t, i))
            )?;
        }
        out.flush()
    }
}

const SWEEP_HEAD: [&str; 11] = [
    "rank",
    "config",
    "cost",
    "saving",
    "saving %",
    "uncached",
    "write",
    "read",
    "output",
    "recall risk",
    "compacted",
];

fn sweep_cells(t: &SweepTotals) -> Vec<[String; 12]> {
    t.configs
        .iter()
        .enumerate()
        .map(|(i, f)| {
            [
                (i + 1).to_string(),
                f.config.to_string(),
                dollars(f.cost_usd),
                dollars(f.savings_usd),
                percent(f.savings_pct, 1),
                thousands(f.input_tokens),
                thousands(f.cache_creation_input_tokens),
                thousands(f.cache_read_input_tokens),
                thousands(f.output_tokens),
                needs(f.recall_needs),
                f.compacted_results.to_string(),
                fleet_marks(t, i),
            ]
        })
        .collect()
}

fn figures_line(label: &str, f: &FleetFigures) -> String {
    format!(
        "{label} {}: {} (saves {}, {}; {} result(s) needed again)",
        f.config,
        dollars(f.cost_usd),
        dollars(f.savings_usd),
        percent(f.savings_pct, 1),
        needs(f.recall_needs)
    )
}

fn sweep_summary(t: &SweepTotals) -> Vec<String> {
    let mut l = Vec::new();
    let q = &t.status_quo;
    if q.config.is_mixed() {
        l.push(format!(
            "status quo (each trace's own): {}",
            dollars(q.cost_usd)
        ));
    } else {
        l.push(format!("status quo {}: {}", q.config, dollars(q.cost_usd)));
    }
    if let Some(rec) = t.recorded_cost_usd {
        l.push(format!(
            "recorded cost of the {} of {} call(s) that recorded usage: {}",
            thousands(t.recorded_calls as u64),
            thousands(t.calls as u64),
            dollars(rec)
        ));
    }
    if let Some(c) = t.configs.get(t.cheapest) {
        l.push(figures_line("cheapest", c));
    }
    match t.recommended.and_then(|i| t.configs.get(i)) {
        Some(r) => l.push(figures_line("recommended", r)),
        None => l.push(
            "recommended: keep the status quo; no config is cheaper once recall risk is priced"
                .into(),
        ),
    }
    for s in &t.skipped {
        l.push(format!(
            "{} could not apply to {} of {} trace(s) ({}); there they count at their status quo",
            s.config, s.traces, s.of, s.reason
        ));
    }
    l.push("per config, summed over every trace; recall risk = compacted results the record shows were needed again (a line copied from them, or an identifier only they held, written after they were compacted)".into());
    l
}

impl Exporter<SweepTotalsView<'_>> for TableExporter {
    fn export(&self, view: &SweepTotalsView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        if let Some(p) = view.per_trace {
            TableExporter.export(&SweepView { sweeps: p }, &mut out)?;
        }
        let t = view.totals;
        writeln!(
            out,
            "{} — {} configs",
            heading(t.sessions, t.traces),
            t.configs.len()
        )?;
        let mut head = [""; 12];
        head[..11].copy_from_slice(&SWEEP_HEAD);
        // Config and marks are text; the rest numbers.
        write_lines(
            &mut out,
            aligned_lines(head, &sweep_cells(t), |i| i != 1 && i != 11),
        )?;
        write_lines(&mut out, sweep_summary(t))?;
        out.flush()
    }
}

impl Exporter<SweepTotalsView<'_>> for MarkdownExporter {
    fn export(&self, view: &SweepTotalsView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        if let Some(p) = view.per_trace {
            MarkdownExporter.export(&SweepView { sweeps: p }, &mut out)?;
        }
        let t = view.totals;
        writeln!(
            out,
            "### {} — {} configs\n",
            heading(t.sessions, t.traces),
            t.configs.len()
        )?;
        let mut head = [""; 12];
        head[..11].copy_from_slice(&SWEEP_HEAD);
        writeln!(out, "{}", md_row(&head))?;
        writeln!(out, "|---:|---|{}", "---:|".repeat(9) + "---|")?;
        for mut r in sweep_cells(t) {
            // Configs are code spans: their syntax has no backticks.
            r[1] = format!("`{}`", r[1]);
            writeln!(out, "{}", md_row(&r))?;
        }
        writeln!(out)?;
        write_lines(
            &mut out,
            sweep_summary(t)
                .iter()
                .map(|l| format!("- {}", md_escape(l))),
        )?;
        out.flush()
    }
}

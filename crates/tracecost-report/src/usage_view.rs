//! `tracecost usage`: recorded Claude Code and Codex CLI usage, priced, in
//! ccusage's session report shapes (`--json` is ccusage 20.0.24's, field
//! for field).
//!
//! Which of ccusage's shapes: sessions of Claude Code alone give `ccusage
//! claude session --json`'s (`sessions`, each with `sessionId`,
//! `projectPath`, `firstActivity` and `lastActivity`); sessions of Codex
//! alone `ccusage codex session --json`'s (`sessions`, each with
//! `sessionId`, `directory`, `sessionFile`, `models` by name, `costUSD`);
//! a mix, its unified `ccusage session --json` (`session`, each with
//! `agent`, `period` and `metadata`), which is what ccusage itself prints
//! for a mix.

use std::io::{self, Write};

use serde::Serialize;

use super::export::{ExportFormat, Exportable, Exporter, JsonExporter, TableExporter, write_json};
use super::fmt::{dollars, thousands};
use tracecost_app::usage::{CodexReport, ModelBreakdown, UsageReport, UsageTotals};

/// `tracecost usage`: the priced report, with what was read to find it.
///
/// Json: ccusage's session report shape (`--json`). Table: aligned text
/// with the counts of what was read and the models without a price.
#[derive(Debug, Clone, Copy)]
pub struct UsageView<'a> {
    /// The priced sessions.
    pub report: &'a UsageReport,
}

impl Exportable for UsageView<'_> {
    fn exporter<'e>(format: ExportFormat) -> Option<&'e dyn Exporter<Self>> {
        match format {
            ExportFormat::Table => Some(&TableExporter),
            ExportFormat::Json => Some(&JsonExporter),
            ExportFormat::Csv | ExportFormat::Markdown => None,
        }
    }
}

/// ccusage's unified session report (`ccusage session --json`).
#[derive(Serialize)]
struct Unified<'a> {
    session: Vec<UnifiedSession<'a>>,
    totals: &'a UsageTotals,
}

/// One entry of it: the session's figures, named by `period`, its agent
/// beside them; keys in ccusage's order (by name).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct UnifiedSession<'a> {
    agent: &'a str,
    cache_creation_tokens: u64,
    cache_read_tokens: u64,
    input_tokens: u64,
    metadata: Metadata<'a>,
    model_breakdowns: &'a [ModelBreakdown],
    models_used: &'a [String],
    output_tokens: u64,
    period: &'a str,
    total_cost: Option<f64>,
    total_tokens: u64,
}

/// A session's `metadata`: Codex's also carry its reasoning tokens.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Metadata<'a> {
    last_activity: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_output_tokens: Option<u64>,
}

/// Whether `report` takes ccusage's unified shape: sessions of more than
/// one agent.
pub fn unified(report: &UsageReport) -> bool {
    let mut agents = report.sessions.iter().map(|s| s.agent);
    let first = agents.next();
    agents.any(|a| Some(a) != first)
}

impl Exporter<UsageView<'_>> for JsonExporter {
    fn export(&self, view: &UsageView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let r = view.report;
        if unified(r) {
            write_unified(r, out)
        } else if let Some(codex) = CodexReport::of(r) {
            write_json(&codex, out)
        } else {
            write_json(r, out)
        }
    }
}

/// `report` in ccusage's unified shape.
fn write_unified(r: &UsageReport, out: &mut dyn Write) -> io::Result<()> {
    let session = r
        .sessions
        .iter()
        .map(|s| UnifiedSession {
            agent: s.agent,
            cache_creation_tokens: s.cache_creation_tokens,
            cache_read_tokens: s.cache_read_tokens,
            input_tokens: s.input_tokens,
            metadata: Metadata {
                last_activity: &s.last_activity,
                reasoning_output_tokens: s.reasoning_output_tokens,
            },
            model_breakdowns: &s.model_breakdowns,
            models_used: &s.models_used,
            output_tokens: s.output_tokens,
            period: &s.session_id,
            total_cost: s.total_cost,
            total_tokens: s.total_tokens,
        })
        .collect();
    write_json(
        &Unified {
            session,
            totals: &r.totals,
        },
        out,
    )
}

impl Exporter<UsageView<'_>> for TableExporter {
    fn export(&self, view: &UsageView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let UsageView { report: r } = *view;
        let scan = &r.read;
        let mut out = io::BufWriter::new(out);
        writeln!(
            out,
            "{:<38} {:<28} {:>10} {:>10} {:>12} {:>14} {:>11}  models",
            "session", "project", "input", "output", "cache write", "cache read", "cost"
        )?;
        for row in &r.sessions {
            writeln!(
                out,
                "{:<38} {:<28} {:>10} {:>10} {:>12} {:>14} {:>11}  {}",
                row.session_id,
                tracecost_engine::handle::one_line(&row.project_path, 28),
                thousands(row.input_tokens),
                thousands(row.output_tokens),
                thousands(row.cache_creation_tokens),
                thousands(row.cache_read_tokens),
                row.total_cost.map_or_else(|| "-".to_owned(), dollars),
                row.models_used.join(", ")
            )?;
        }
        let t = &r.totals;
        writeln!(
            out,
            "{:<38} {:<28} {:>10} {:>10} {:>12} {:>14} {:>11}",
            "total",
            format!("{} session(s)", r.sessions.len()),
            thousands(t.input_tokens),
            thousands(t.output_tokens),
            thousands(t.cache_creation_tokens),
            thousands(t.cache_read_tokens),
            dollars(t.total_cost)
        )?;
        writeln!(
            out,
            "{} file(s) read ({} empty); {} usage row(s), {} duplicate(s) counted once, {} without billable tokens, {} unreadable line(s) skipped",
            scan.files,
            scan.empty_files,
            scan.rows,
            scan.duplicate_rows,
            scan.unbilled_rows,
            scan.skipped_lines
        )?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small Claude Code folder, and what ccusage 20.0.24 printed for it
    /// (`ccusage session --json --offline` with `CLAUDE_CONFIG_DIR` at it).
    const FOLDER: &str = "../../tests/fixtures/usage-ccusage";
    const CCUSAGE_UNIFIED: &str = "../../tests/fixtures/ccusage/session.json";

    fn report() -> UsageReport {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let plan = tracecost_app::UsagePlan {
            paths: vec![root.join(FOLDER)],
            pricing: tracecost_cost::pricing::Pricing::builtin(),
        };
        tracecost_app::usage(&plan).unwrap()
    }

    fn json(r: &UsageReport) -> String {
        let view = UsageView { report: r };
        view.to_string_as(ExportFormat::Json).unwrap()
    }

    /// The keys of `v`, recursively, in order (array items by position).
    fn keys(v: &serde_json::Value, path: &str, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    let p = format!("{path}.{k}");
                    out.push(p.clone());
                    keys(x, &p, out);
                }
            }
            serde_json::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    keys(x, &format!("{path}[{i}]"), out);
                }
            }
            _ => {}
        }
    }

    fn key_paths(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        keys(&serde_json::from_str(text).unwrap(), "", &mut out);
        out
    }

    #[test]
    fn claude_code_alone_keeps_the_claude_session_shape() {
        let r = report();
        assert!(!unified(&r));
        assert!(json(&r).starts_with("{\n  \"sessions\": ["));
    }

    #[test]
    fn another_agent_gives_the_unified_shape_as_ccusage_writes_it() {
        let mut r = report();
        let theirs = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CCUSAGE_UNIFIED),
        )
        .unwrap();
        // Claude Code's sessions in the unified shape: ccusage's bytes.
        let mut ours = Vec::new();
        write_unified(&r, &mut ours).unwrap();
        assert_eq!(String::from_utf8(ours).unwrap(), theirs);
        // A session of another agent selects it, with the same keys in the
        // same order.
        r.sessions[1].agent = "codex";
        assert!(unified(&r));
        let text = json(&r);
        assert_eq!(key_paths(&text), key_paths(&theirs));
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["session"][1]["agent"], "codex");
    }
}

//! Cost-regression checks against a baseline file, for CI.
//!
//! A baseline lists (trace, config) pairs with their expected token totals
//! and cost. Token totals are deterministic for a given tracecost version,
//! tokenizer and price table, so the default tolerance is tight.

use std::io::{self, Write};

use serde::Serialize;

use super::export::{
    ExportFormat, Exportable, Exporter, JsonExporter, MarkdownExporter, md_row, write_json,
};
use super::fmt::{dollars, md_escape, signed_percent_places, thousands};
use tracecost_app::baseline::{Comparison, Expected, Verdict};

/// Version tag of the check JSON.
pub const CHECK_FORMAT: &str = "tracecost.check/v1";

/// `tracecost check`: every compared entry with the tolerance used.
///
/// Markdown: the regressions and improvements with a one-line verdict,
/// for the terminal and for `GITHUB_STEP_SUMMARY`. Json: every row with
/// its figures, for programs.
#[derive(Debug, Clone, Copy)]
pub struct CheckView<'a> {
    /// The compared entries.
    pub rows: &'a [Comparison],
    /// Tolerance in percent of the expected cost.
    pub tolerance_pct: f64,
}

impl Exportable for CheckView<'_> {
    fn exporter<'e>(format: ExportFormat) -> Option<&'e dyn Exporter<Self>> {
        match format {
            ExportFormat::Json => Some(&JsonExporter),
            ExportFormat::Markdown => Some(&MarkdownExporter),
            ExportFormat::Table | ExportFormat::Csv => None,
        }
    }
}

impl CheckView<'_> {
    fn count(&self, verdict: Verdict) -> usize {
        self.rows.iter().filter(|r| r.verdict == verdict).count()
    }
}

fn verdict_name(v: Verdict) -> &'static str {
    match v {
        Verdict::Same => "same",
        Verdict::Regression => "regression",
        Verdict::Improvement => "improvement",
    }
}

#[derive(Serialize)]
struct CheckDoc<'a> {
    format: &'static str,
    tolerance_pct: f64,
    checked: usize,
    regressions: usize,
    improvements: usize,
    rows: Vec<CheckRow<'a>>,
}

#[derive(Serialize)]
struct CheckRow<'a> {
    trace: &'a str,
    config: &'a str,
    verdict: &'static str,
    before: &'a Expected,
    after: &'a Expected,
    delta_usd: f64,
    delta_pct: f64,
}

impl Exporter<CheckView<'_>> for JsonExporter {
    fn export(&self, view: &CheckView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let doc = CheckDoc {
            format: CHECK_FORMAT,
            tolerance_pct: view.tolerance_pct,
            checked: view.rows.len(),
            regressions: view.count(Verdict::Regression),
            improvements: view.count(Verdict::Improvement),
            rows: view
                .rows
                .iter()
                .map(|r| CheckRow {
                    trace: &r.trace,
                    config: &r.config,
                    verdict: verdict_name(r.verdict),
                    before: &r.before,
                    after: &r.after,
                    delta_usd: r.delta_usd(),
                    delta_pct: r.delta_pct(),
                })
                .collect(),
        };
        write_json(&doc, out)
    }
}

impl Exporter<CheckView<'_>> for MarkdownExporter {
    fn export(&self, view: &CheckView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let regressions = view.count(Verdict::Regression);
        let improvements = view.count(Verdict::Improvement);
        let mut out = io::BufWriter::new(out);
        write!(out, "## tracecost check\n\n")?;
        writeln!(
            out,
            "{} (trace, config) pair(s) checked with a tolerance of {}%: {regressions} regression(s), {improvements} improvement(s).\n",
            view.rows.len(),
            view.tolerance_pct
        )?;
        let changed: Vec<&Comparison> = view
            .rows
            .iter()
            .filter(|r| r.verdict != Verdict::Same)
            .collect();
        if changed.is_empty() {
            writeln!(out, "Every cost is within tolerance of the baseline.")?;
            return out.flush();
        }
        writeln!(
            out,
            "| | trace | config | before | after | delta | delta % | input tokens before → after |"
        )?;
        writeln!(out, "|---|---|---|---:|---:|---:|---:|---:|")?;
        for r in changed {
            let cells = [
                verdict_name(r.verdict).to_owned(),
                md_escape(&r.trace),
                format!("`{}`", r.config),
                dollars(r.before.cost_usd),
                dollars(r.after.cost_usd),
                dollars(r.delta_usd()),
                signed_percent_places(r.delta_pct(), 2),
                format!(
                    "{} → {}",
                    thousands(r.before.total_input()),
                    thousands(r.after.total_input())
                ),
            ];
            writeln!(out, "{}", md_row(&cells))?;
        }
        if improvements > 0 {
            write!(
                out,
                "\nImprovements pass; run `tracecost check --baseline FILE --update` to lock them in.\n"
            )?;
        }
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(cost: f64, input: u64) -> Expected {
        Expected {
            input_tokens: input,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 5,
            cost_usd: cost,
        }
    }

    #[test]
    fn verdicts_follow_the_tolerance() {
        let c = |b, a| Comparison::new("t".into(), "off+none".into(), b, a, 1.0).verdict;
        assert_eq!(c(e(1.0, 100), e(1.009, 100)), Verdict::Same);
        assert_eq!(c(e(1.0, 100), e(1.02, 100)), Verdict::Regression);
        assert_eq!(c(e(1.0, 100), e(0.98, 100)), Verdict::Improvement);
        assert_eq!(
            c(e(1.0, 100), e(1.0, 102)),
            Verdict::Regression,
            "more tokens at the same cost still regresses"
        );
        assert_eq!(c(e(0.0, 0), e(0.0, 0)), Verdict::Same);
        assert_eq!(c(e(0.0, 0), e(0.1, 0)), Verdict::Regression);
    }

    fn rows() -> Vec<Comparison> {
        let c = |trace: &str, b, a| Comparison::new(trace.into(), "off+none".into(), b, a, 1.0);
        vec![
            c("same", e(1.0, 100), e(1.0, 100)),
            c("a|b", e(1.0, 100), e(1.5, 120)),
            c("cheaper", e(2.0, 100), e(1.0, 90)),
        ]
    }

    fn render(rows: &[Comparison], tolerance_pct: f64, format: ExportFormat) -> String {
        CheckView {
            rows,
            tolerance_pct,
        }
        .to_string_as(format)
        .expect("a format check has")
    }

    #[test]
    fn markdown_lists_only_the_changed_rows() {
        let rows = rows();
        let md = render(&rows, 1.0, ExportFormat::Markdown);
        assert!(md.starts_with("## tracecost check\n\n3 (trace, config) pair(s) checked with a tolerance of 1%: 1 regression(s), 1 improvement(s).\n\n"), "{md}");
        assert!(md.contains("\n| regression | a\\|b | `off+none` | $1.00 | $1.50 | $0.5000 | +50.00% | 100 → 120 |\n"), "{md}");
        assert!(md.contains("\n| improvement | cheaper | `off+none` | $2.00 | $1.00 | -$1.00 | -50.00% | 100 → 90 |\n"), "{md}");
        assert!(!md.contains("| same |"), "{md}");
        assert!(md.ends_with("to lock them in.\n"), "{md}");

        let calm = render(&rows[..1], 0.1, ExportFormat::Markdown);
        assert!(calm.ends_with("0 regression(s), 0 improvement(s).\n\nEvery cost is within tolerance of the baseline.\n"), "{calm}");
    }

    #[test]
    fn json_carries_every_row_and_the_counts() {
        let rows = rows();
        let text = render(&rows, 1.0, ExportFormat::Json);
        assert!(text.ends_with("}\n"));
        let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(v["format"], CHECK_FORMAT);
        assert_eq!(v["checked"], 3);
        assert_eq!(v["regressions"], 1);
        assert_eq!(v["improvements"], 1);
        let verdicts: Vec<&str> = v["rows"]
            .as_array()
            .expect("rows")
            .iter()
            .map(|r| r["verdict"].as_str().expect("verdict"))
            .collect();
        assert_eq!(verdicts, ["same", "regression", "improvement"]);
        assert_eq!(v["rows"][1]["after"]["cost_usd"], 1.5);
        assert_eq!(v["rows"][2]["delta_pct"], -50.0);
    }
}

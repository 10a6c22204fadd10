//! `tracecost usage daily` and `usage monthly`: Claude Code's or Codex's
//! recorded usage per UTC day or month, in ccusage 20.0.24's `daily --json`
//! and `monthly --json` shapes (`ccusage codex …` for Codex's) with
//! `--json`, or as an aligned table.

use std::io::{self, Write};

use super::export::{ExportFormat, Exportable, Exporter, JsonExporter, TableExporter, write_json};
use super::fmt::{dollars, thousands};
use tracecost_app::usage_period::{PeriodReport, UsagePeriod};

/// The usage per period.
#[derive(Debug, Clone, Copy)]
pub struct PeriodView<'a> {
    /// The priced periods.
    pub report: &'a PeriodReport,
}

impl Exportable for PeriodView<'_> {
    fn exporter<'e>(format: ExportFormat) -> Option<&'e dyn Exporter<Self>> {
        match format {
            ExportFormat::Table => Some(&TableExporter),
            ExportFormat::Json => Some(&JsonExporter),
            ExportFormat::Csv | ExportFormat::Markdown => None,
        }
    }
}

impl Exporter<PeriodView<'_>> for JsonExporter {
    fn export(&self, view: &PeriodView<'_>, out: &mut dyn Write) -> io::Result<()> {
        write_json(view.report, out)
    }
}

impl Exporter<PeriodView<'_>> for TableExporter {
    fn export(&self, view: &PeriodView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let r = view.report;
        let mut out = io::BufWriter::new(out);
        let first = match r.period {
            UsagePeriod::Day => "day (UTC)",
            UsagePeriod::Month => "month (UTC)",
        };
        writeln!(
            out,
            "{:<12} {:>12} {:>12} {:>14} {:>16} {:>12}  models",
            first, "input", "output", "cache write", "cache read", "cost"
        )?;
        if let Some(codex) = &r.codex {
            return codex_table(codex, &mut out);
        }
        for row in &r.rows {
            writeln!(
                out,
                "{:<12} {:>12} {:>12} {:>14} {:>16} {:>12}  {}",
                row.period,
                thousands(row.input_tokens),
                thousands(row.output_tokens),
                thousands(row.cache_creation_tokens),
                thousands(row.cache_read_tokens),
                dollars(row.total_cost),
                row.models_used.join(", ")
            )?;
        }
        let t = &r.totals;
        writeln!(
            out,
            "{:<12} {:>12} {:>12} {:>14} {:>16} {:>12}",
            "total",
            thousands(t.input_tokens),
            thousands(t.output_tokens),
            thousands(t.cache_creation_tokens),
            thousands(t.cache_read_tokens),
            dollars(t.total_cost)
        )?;
        out.flush()
    }
}

/// Codex's periods as the table: the same columns (no cache writes are
/// recorded), reasoning counted in the output.
fn codex_table(
    codex: &tracecost_app::usage_period_codex::CodexPeriods,
    out: &mut dyn Write,
) -> io::Result<()> {
    let line =
        |out: &mut dyn Write, name: &str, t: &tracecost_app::usage::CodexTotals, models: &str| {
            writeln!(
                out,
                "{:<12} {:>12} {:>12} {:>14} {:>16} {:>12}{}",
                name,
                thousands(t.input_tokens),
                thousands(t.output_tokens),
                thousands(t.cache_creation_tokens),
                thousands(t.cache_read_tokens),
                dollars(t.cost_usd),
                models
            )
        };
    for row in &codex.rows {
        let models: Vec<&str> = row.models.keys().map(String::as_str).collect();
        line(
            out,
            &row.period,
            &row.totals,
            &format!("  {}", models.join(", ")),
        )?;
    }
    line(out, "total", &codex.totals, "")?;
    out.flush()
}

//! `tracecost usage`: recorded Claude Code usage, priced, in ccusage's
//! session report shape (`--json` uses its field names).

use std::io::{self, Write};

use super::export::{Exportable, Exporter, Format, JsonExporter, TableExporter, write_json};
use super::fmt::{dollars, thousands};
use crate::app::usage::UsageReport;
use crate::trace::import::claude_code::UsageScan;

/// `tracecost usage`: the priced report with the scan it came from.
///
/// Json: ccusage's session report shape (`--json`). Table: aligned text
/// with the scan's counts and the models without a price.
#[derive(Debug, Clone, Copy)]
pub struct UsageView<'a> {
    /// The priced sessions.
    pub report: &'a UsageReport,
    /// What was read.
    pub scan: &'a UsageScan,
}

impl Exportable for UsageView<'_> {
    fn exporter<'e>(format: Format) -> Option<&'e dyn Exporter<Self>> {
        match format {
            Format::Table => Some(&TableExporter),
            Format::Json => Some(&JsonExporter),
            Format::Csv | Format::Markdown => None,
        }
    }
}

impl Exporter<UsageView<'_>> for JsonExporter {
    fn export(&self, view: &UsageView<'_>, out: &mut dyn Write) -> io::Result<()> {
        write_json(view.report, out)
    }
}

impl Exporter<UsageView<'_>> for TableExporter {
    fn export(&self, view: &UsageView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let UsageView { report: r, scan } = *view;
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
                crate::engine::handle::one_line(&row.project_path, 28),
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
        if !r.unpriced.is_empty() {
            writeln!(
                out,
                "not in the price table (priced at $0): {}",
                r.unpriced.join(", ")
            )?;
        }
        out.flush()
    }
}

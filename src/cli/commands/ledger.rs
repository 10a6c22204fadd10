//! `tracecost ledger repair`: a durable ledger's damaged lines set aside.

use crate::app::{self, AppError};
use crate::cli::error::Outcome;

/// Runs `tracecost ledger repair`.
pub(super) fn repair(dir: &std::path::Path) -> Result<Outcome, AppError> {
    let report = app::ledger_repair(dir)?;
    for s in &report.set_aside {
        eprintln!(
            "tracecost: {}: line {}: {}",
            dir.join("index.jsonl").display(),
            s.line,
            crate::engine::handle::one_line(&s.reason, 200)
        );
    }
    eprintln!(
        "tracecost: {}: kept {} record(s), set {} line(s) aside{}",
        dir.display(),
        report.kept,
        report.set_aside.len(),
        if report.set_aside.is_empty() {
            String::new()
        } else {
            format!(" in {}", report.damaged_file.display())
        }
    );
    Ok(Outcome::Success)
}

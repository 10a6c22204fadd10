//! `ledger repair`: a durable ledger's damaged index lines set aside.

use crate::AppError;
use tracecost_engine::ledger::DurableLedger;

/// Repairs the durable ledger in `dir` (see [`DurableLedger::repair`]):
/// intact records stay, damaged index lines are set aside beside the index.
/// A directory without an index is bad input, and nothing is created in it.
pub fn ledger_repair(
    dir: &std::path::Path,
) -> Result<tracecost_engine::ledger::RepairSummary, AppError> {
    let index = dir.join("index.jsonl");
    if !index.is_file() {
        return Err(AppError::Usage(format!(
            "{}: not a ledger directory (expected a file index.jsonl in it)",
            dir.display()
        )));
    }
    Ok(DurableLedger::repair(dir)?)
}

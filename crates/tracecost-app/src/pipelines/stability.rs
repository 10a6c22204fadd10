//! `stability`: stubs and prefixes checked byte-stable for each run.

use crate::AppError;
use crate::plan::StabilityPlan;
use crate::progress::{Progress, Unit};
use tracecost_cost::tokens::TokenMemo;
use tracecost_policy::Config;
use tracecost_replay::stability::StabilityResult;

use super::shared::stability_of;

/// One trace's stability check.
#[derive(Debug, Clone)]
pub struct StabilityReport {
    /// The trace's name.
    pub trace: String,
    /// The config checked.
    pub config: Config,
    /// The check.
    pub report: StabilityResult,
}

/// Checks that stubs and prefixes stay byte-stable for each run.
pub fn stability(
    plan: &StabilityPlan,
    progress: &dyn Progress,
) -> Result<Vec<StabilityReport>, AppError> {
    let memo = TokenMemo::new(plan.tokenizer.clone());
    let mut out = Vec::new();
    for run in &plan.runs {
        progress.start("stability", run.trace.calls.len() as u64, Unit::Items);
        let report = stability_of(&run.trace, &run.config, &memo, Some(progress))?;
        out.push(StabilityReport {
            trace: run.trace.name.clone(),
            config: run.config.clone(),
            report,
        });
    }
    Ok(out)
}

/// The digest line another process prints for a trace
/// (`NAME DIGEST`), read back: the digest for `trace`, or `""`.
pub fn stability_digest(output: &str, trace: &str) -> String {
    output
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{trace} ")))
        .unwrap_or("")
        .to_owned()
}

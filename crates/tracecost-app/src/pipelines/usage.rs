//! `usage`: the usage Claude Code and Codex CLI recorded, priced.

use crate::AppError;
use crate::plan::UsagePlan;

/// Prices the usage Claude Code and Codex CLI recorded.
pub fn usage(plan: &UsagePlan) -> Result<crate::usage::UsageReport, AppError> {
    crate::usage::run(plan)
}

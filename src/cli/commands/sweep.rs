//! `tracecost sweep`: every config of the grid over every trace.

use super::notes::per_trace_note;
use crate::app::{self, AppError};
use crate::cli::args::SweepArgs;
use crate::cli::error::Outcome;
use crate::cli::progress::with_progress;
use crate::cli::render::print_view;
use crate::report::sweep_view::SweepView;
use crate::report::totals_view::SweepTotalsView;

/// Runs `tracecost sweep`.
pub(super) fn run(a: SweepArgs) -> Result<Outcome, AppError> {
    let plan = a.plan()?;
    let skipped = app::fleet::skipped_configs(plan.applicability());
    for line in crate::report::build::sweep_skipped_lines(&skipped) {
        eprintln!("tracecost: note: {line}");
    }
    let sweeps = with_progress(|bar| app::sweep(&plan, bar))?;
    if let [_] = sweeps.as_slice() {
        print_view(&SweepView { sweeps: &sweeps }, a.format.0);
    } else {
        let whole = plan
            .whole_traces()
            .ok_or_else(|| AppError::Internal("a sweep's traces are not in memory".into()))?;
        let totals = app::totals::sweep_totals(whole, &sweeps, plan.configs())?;
        per_trace_note(a.per_trace, sweeps.len());
        print_view(
            &SweepTotalsView {
                totals: &totals,
                per_trace: a.per_trace.then_some(sweeps.as_slice()),
            },
            a.format.0,
        );
    }
    Ok(Outcome::Success)
}

//! `tracecost replay`: each trace replayed under its config, one table or
//! the fleet's total.

use super::notes::{per_trace_note, policy_notes};
use crate::app::{self, AppError};
use crate::cli::args::ReplayArgs;
use crate::cli::error::Outcome;
use crate::cli::progress::with_progress;
use crate::cli::render::print_view;
use crate::report::replay_view::ReplayView;
use crate::report::totals_view::ReplayTotalsView;

/// Runs `tracecost replay`.
pub(super) fn run(a: ReplayArgs) -> Result<Outcome, AppError> {
    let plan = a.plan()?;
    for line in policy_notes(&plan.runs) {
        eprintln!("tracecost: note: {line}");
    }
    let outputs = with_progress(|bar| app::replay(&plan, bar))?;
    if let [_] = outputs.as_slice() {
        print_view(&ReplayView(&outputs), a.format.0);
    } else {
        let totals = app::totals::replay_totals(&plan.runs, &outputs);
        per_trace_note(a.per_trace, outputs.len());
        print_view(
            &ReplayTotalsView {
                totals: &totals,
                per_trace: a.per_trace.then_some(outputs.as_slice()),
            },
            a.format.0,
        );
    }
    Ok(Outcome::Success)
}

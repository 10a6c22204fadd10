//! `tracecost fidelity`: the replay compared with what the records say.

use crate::app::{self, AppError};
use crate::cli::args::FidelityArgs;
use crate::cli::error::Outcome;
use crate::cli::progress::with_progress;
use crate::cli::render::print_view;

/// Runs `tracecost fidelity`.
pub(super) fn run(a: FidelityArgs) -> Result<Outcome, AppError> {
    let plan = a.plan()?;
    let outputs = with_progress(|bar| app::replay(&plan, bar))?;
    if let Some(session) = &a.explain {
        let traces: Vec<_> = plan.runs.iter().map(|r| &r.trace).collect();
        let explained = app::fidelity::explain(&traces, &outputs, session)?;
        print_view(
            &crate::report::explain_view::ExplainView(&explained),
            a.format.0,
        );
        return Ok(Outcome::Success);
    }
    let report = app::fidelity::FidelityReport::of(&outputs);
    if report.traces.is_empty() {
        return Err(AppError::Usage(
            "no trace recorded usage to compare with: fidelity needs recorded input tokens".into(),
        ));
    }
    print_view(
        &crate::report::fidelity_view::FidelityView(&report),
        a.format.0,
    );
    Ok(Outcome::Success)
}

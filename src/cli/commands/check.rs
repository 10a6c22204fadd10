//! `tracecost check`: the bundled traces compared with a cost baseline, or
//! the baseline updated.

use std::io::Write;

use crate::app::{self, AppError, CheckOutcome};
use crate::cli::args::CheckArgs;
use crate::cli::error::Outcome;
use crate::cli::render::print_stdout;

/// Runs `tracecost check`.
pub(super) fn run(a: CheckArgs) -> Result<Outcome, AppError> {
    let plan = a.plan()?;
    match app::check(&plan)? {
        CheckOutcome::Updated(baseline) => {
            crate::cli::write_atomic(&plan.path, baseline.to_json().as_bytes())?;
            // Entries left out for lack of a price keep what they held.
            eprintln!(
                "tracecost: updated {} entries in {}",
                plan.entries.len(),
                plan.path.display()
            );
            Ok(Outcome::Success)
        }
        outcome @ CheckOutcome::Compared { .. } => {
            let md = crate::cli::render::check(&outcome);
            print_stdout(&md);
            append_step_summary(&md);
            Ok(if outcome.regressed() {
                Outcome::ProblemFound
            } else {
                Outcome::Success
            })
        }
    }
}

/// Appends the check's Markdown to a GitHub Actions job summary, when run
/// there. A failure to do so is a warning: the check itself ran.
fn append_step_summary(md: &str) {
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY") {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&summary)
            .and_then(|mut f| f.write_all(md.as_bytes()));
        if let Err(e) = appended {
            eprintln!(
                "tracecost: warning: cannot append to GITHUB_STEP_SUMMARY ({}): {e}",
                std::path::Path::new(&summary).display()
            );
        }
    }
}

//! `tracecost import`: inputs written as one canonical trace file.

use crate::app::{self, AppError};
use crate::cli::args::ImportArgs;
use crate::cli::error::Outcome;

/// Runs `tracecost import`.
pub(super) fn run(a: ImportArgs) -> Result<Outcome, AppError> {
    let plan = a.plan()?;
    // Each trace goes to the temporary output file as soon as it is
    // built; the file is renamed into place only once every input
    // has been read.
    let bar = crate::cli::progress::Bar::new();
    let shown = a.output.display().to_string();
    let written =
        crate::cli::write_atomic_with(&a.output, |file| app::import(&plan, &bar, file, &shown));
    bar.finish();
    let s = written?;
    eprintln!(
        "tracecost: wrote {} trace(s), {} call(s) to {}; {}",
        s.traces,
        s.calls,
        a.output.display(),
        s.report
    );
    Ok(Outcome::Success)
}

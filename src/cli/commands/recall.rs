//! `tracecost recall`: what the recall tool answers for an id.

use crate::app::{self, AppError};
use crate::cli::args::RecallArgs;
use crate::cli::error::Outcome;
use crate::cli::render::print_stdout;

/// Runs `tracecost recall`.
pub(super) fn run(a: RecallArgs) -> Result<Outcome, AppError> {
    let answer = app::recall(&a.plan()?)?;
    // Exactly what the model would receive, byte for byte, and one
    // newline so that a shell prompt or the next line of a script
    // starts on a line of its own (always one: a payload that ends
    // with a newline itself is the output less its last byte too).
    print_stdout(&format!("{}\n", answer.text));
    Ok(if answer.found {
        Outcome::Success
    } else {
        Outcome::ProblemFound
    })
}

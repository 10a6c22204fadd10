//! Exit codes: every outcome and every failure class mapped in one place.

use crate::app::{AppError, ErrorClass};

/// A command ran and found a problem: a cost regression, an unstable stub,
/// a recall of an id no trace recorded.
pub const EXIT_FAILED: u8 = 1;
/// Bad input or usage: the message names the file, the place and what was
/// expected. This includes a durable ledger whose files are damaged (an
/// index line, a payload missing or altered: the message names the file and
/// the line and points to `tracecost ledger repair DIR`) and a tool_use id
/// that names different recorded results.
pub const EXIT_INPUT: u8 = 2;
/// Something the machine should provide failed: ledger storage I/O (a
/// directory or file that cannot be created, read or written), running
/// tracecost itself again (`stability --processes`).
pub const EXIT_ENVIRONMENT: u8 = 69;
/// A bug in tracecost.
pub const EXIT_INTERNAL: u8 = 70;
/// Output could not be written or produced (a file, a chart).
pub const EXIT_OUTPUT: u8 = 73;

/// The error type at the binary's edge: the pipelines' error.
pub type CliError = AppError;

/// How a command that ran to its end came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Done, nothing to report.
    Success,
    /// Done, and what was checked is not as it should be.
    ProblemFound,
}

/// The documented exit code of a command's result.
pub fn exit_code(result: &Result<Outcome, AppError>) -> u8 {
    match result {
        Ok(Outcome::Success) => 0,
        Ok(Outcome::ProblemFound) => EXIT_FAILED,
        Err(e) => match e.class() {
            ErrorClass::Input => EXIT_INPUT,
            ErrorClass::Output => EXIT_OUTPUT,
            ErrorClass::Environment => EXIT_ENVIRONMENT,
            ErrorClass::Internal => EXIT_INTERNAL,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_class_has_its_code() {
        assert_eq!(exit_code(&Ok(Outcome::Success)), 0);
        assert_eq!(exit_code(&Ok(Outcome::ProblemFound)), 1);
        assert_eq!(exit_code(&Err(AppError::Usage("x".into()))), 2);
        assert_eq!(exit_code(&Err(AppError::Chart("x".into()))), 73);
        assert_eq!(exit_code(&Err(AppError::Internal("x".into()))), 70);
        let write = AppError::Write {
            path: "out".into(),
            source: std::io::Error::other("disk full"),
        };
        assert_eq!(exit_code(&Err(write)), 73);
        assert_eq!(exit_code(&Err(AppError::Environment("x".into()))), 69);
        // A sweep's temporary file of per-call costs that cannot be
        // written (a full disk) is the environment's, as the report's
        // other temporary files are; a config that cannot apply is input.
        let spill = tracecost_replay::ReplayError::Spill {
            path: "/tmp/tracecost-costs-1-0.tmp".into(),
            source: std::io::Error::other("No space left on device"),
        };
        assert_eq!(exit_code(&Err(AppError::Replay(spill))), 69);
        let config = tracecost_replay::ReplayError::Config {
            trace: "t".into(),
            reason: "r".into(),
        };
        assert_eq!(exit_code(&Err(AppError::Replay(config))), 2);
    }
}

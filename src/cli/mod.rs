//! The command line: clap definitions, turned into a fully built plan before
//! anything runs, and one error type mapping every failure to an exit code.
//!
//! Exit codes: 0 success; 1 a check found a problem (cost regression,
//! unstable stub); 2 bad input or usage (the message names the file and the
//! place); 70 internal error (a bug).

mod commands;
mod error;
mod output;
mod progress;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Parser;

pub use error::{CliError, EXIT_FAILED, EXIT_INPUT, EXIT_INTERNAL};
pub use output::{write_atomic, write_atomic_with};

/// Runs the command line of this process and returns its exit code.
pub fn main() -> ExitCode {
    run(std::env::args_os())
}

/// Runs a command line and returns its exit code (errors are printed).
pub fn run<I: IntoIterator<Item = T>, T: Into<OsString> + Clone>(args: I) -> ExitCode {
    let cli = match commands::Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are "errors" to clap; print them as is.
            let code = if e.use_stderr() { EXIT_INPUT } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    match commands::execute(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("tracecost: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

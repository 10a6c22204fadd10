//! The command line: clap definitions, turned into a fully built plan before
//! anything runs, and one error type mapping every failure to an exit code.
//!
//! Exit codes: 0 success; 1 a command found a problem (cost regression,
//! unstable stub, recall of an unknown id); 2 bad input or usage (the
//! message names the file and the place); 69 the environment failed; 70
//! internal error (a bug); 73 output could not be written; 128 + N
//! stopped by signal N (SIGINT, SIGTERM, SIGHUP), its staging removed.

mod args;
mod commands;
mod error;
mod interrupt;
mod memory;
mod output;
mod plan;
mod prices;
mod progress;
mod render;
mod staged_removal;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::FromArgMatches;

pub use error::{
    CliError, EXIT_ENVIRONMENT, EXIT_FAILED, EXIT_INPUT, EXIT_INTERNAL, EXIT_OUTPUT, Outcome,
    exit_code,
};
pub use output::{write_atomic, write_atomic_with};

/// Runs the command line of this process and returns its exit code.
pub fn main() -> ExitCode {
    interrupt::install();
    memory::settle();
    run(std::env::args_os())
}

/// Runs a command line and returns its exit code (errors are printed).
pub fn run<I: IntoIterator<Item = T>, T: Into<OsString> + Clone>(args: I) -> ExitCode {
    let parsed = args::command()
        .try_get_matches_from(args)
        .and_then(|m| args::Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version are "errors" to clap; print them as is.
            let _ = e.print();
            return ExitCode::from(0);
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // `tracecost` alone: the help is the useful answer.
            let _ = e.print();
            return ExitCode::from(EXIT_INPUT);
        }
        Err(e) => {
            eprintln!("tracecost: {}", clap_error_line(&e.render().to_string()));
            return ExitCode::from(EXIT_INPUT);
        }
    };
    let prices_with_model = matches!(
        cli.command,
        args::Command::Replay(_) | args::Command::Sweep(_) | args::Command::Report(_)
    );
    let result = commands::execute(cli);
    if let Err(e) = &result {
        eprintln!("tracecost: {e}{}", hint(e, prices_with_model));
    }
    ExitCode::from(exit_code(&result))
}

/// What the user can do about an error, where the command line has the
/// answer (the library's message knows nothing of flags): `--model` only
/// where the command has it.
fn hint(e: &crate::app::AppError, has_model_flag: bool) -> &'static str {
    match e {
        crate::app::AppError::Pricing(crate::cost::pricing::PricingError::UnknownModel {
            ..
        }) if has_model_flag => {
            "; price the trace as a known model with --model NAME, or add the model with --pricing FILE"
        }
        crate::app::AppError::Pricing(crate::cost::pricing::PricingError::UnknownModel {
            ..
        }) => "; add the model with --pricing FILE",
        _ => "",
    }
}

/// clap's usage error (an `error:` line, perhaps a list of arguments, a
/// tip, a usage line and a `--help` hint, over several lines) as the one
/// line every other error is: the message, the tip and the usage, joined.
/// The message quotes the user's value, so it is bounded like every other
/// quoted input ([`crate::engine::handle::one_line`]).
fn clap_error_line(rendered: &str) -> String {
    let mut message = Vec::new();
    let mut tips = Vec::new();
    let mut usage = None;
    for line in rendered.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(u) = line.strip_prefix("Usage: ") {
            usage = Some(u);
        } else if let Some(t) = line.strip_prefix("tip: ") {
            tips.push(t);
        } else if !line.starts_with("For more information") {
            message.push(line.strip_prefix("error: ").unwrap_or(line));
        }
    }
    let mut out = crate::engine::handle::one_line(&message.join(" "), 400);
    for t in tips {
        out.push_str(&format!(" ({t})"));
    }
    if let Some(u) = usage {
        out.push_str(&format!("; usage: {u}"));
    }
    out.push_str("; see --help");
    out
}

#[cfg(test)]
mod tests {
    use super::clap_error_line;

    #[test]
    fn clap_errors_become_one_line() {
        let rendered = "error: unexpected argument '--bogus' found\n\n  tip: to pass '--bogus' as a value, use '-- --bogus'\n\nUsage: tracecost replay [OPTIONS] <TRACE>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_error_line(rendered),
            "unexpected argument '--bogus' found (to pass '--bogus' as a value, use '-- --bogus'); usage: tracecost replay [OPTIONS] <TRACE>; see --help"
        );
        let missing = "error: the following required arguments were not provided:\n  <TRACE>\n\nUsage: tracecost replay <TRACE>\n\nFor more information, try '--help'.\n";
        assert_eq!(
            clap_error_line(missing),
            "the following required arguments were not provided: <TRACE>; usage: tracecost replay <TRACE>; see --help"
        );
    }
}

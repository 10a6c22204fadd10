//! The `tracecost` binary: parses the command line and maps outcomes to
//! exit codes. All work happens in the library.

use std::process::ExitCode;

fn main() -> ExitCode {
    // A panic is a bug in tracecost, never the user's fault: say so in one
    // line and exit 70 (EX_SOFTWARE) instead of printing a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_owned());
        eprintln!("tracecost: internal error{place}: {msg} (this is a bug; please report it)");
    }));
    match std::panic::catch_unwind(tracecost::cli::main) {
        Ok(code) => code,
        Err(_) => ExitCode::from(tracecost::cli::EXIT_INTERNAL),
    }
}

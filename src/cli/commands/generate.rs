//! `tracecost gen`: a generated trace, fleet or request log.

use std::io::Write;

use crate::app::AppError;
use crate::cli::args::GenArgs;
use crate::cli::error::Outcome;

/// Runs `tracecost gen`.
pub(super) fn run(a: GenArgs) -> Result<Outcome, AppError> {
    use crate::trace::TraceWriter;
    use crate::trace::generate::GenOptions;
    if a.name == "request-log" {
        return generate_request_log(&a);
    }
    let options = GenOptions {
        calls: a.calls,
        seed: a.seed,
        sessions: a.sessions,
        accounts: a.accounts,
        days: a.days,
    };
    let traces = crate::trace::generate::generate(&a.name, options).map_err(AppError::Usage)?;
    // Traces are written as they are built: a fleet is never held whole.
    fn write_all(
        traces: impl Iterator<Item = crate::trace::Trace>,
        out: impl Write,
    ) -> std::io::Result<()> {
        let mut w = TraceWriter::new(out);
        for t in traces {
            w.push(t)?;
        }
        w.finish().map(drop)
    }
    // A `.jsonl` output: one trace per line, a file that Spark and the
    // loader split by lines.
    fn write_lines(
        traces: impl Iterator<Item = crate::trace::Trace>,
        mut out: impl Write,
    ) -> std::io::Result<()> {
        for t in traces {
            out.write_all(crate::trace::to_json_line(&t).as_bytes())?;
        }
        out.flush()
    }
    let lines = a.output.as_deref().is_some_and(crate::trace::is_jsonl_name);
    match &a.output {
        Some(p) => crate::cli::write_atomic_with(p, |file| {
            let written = match lines {
                true => write_lines(traces, file),
                false => write_all(traces, file),
            };
            written.map_err(|source| crate::cli::CliError::Write {
                path: p.display().to_string(),
                source,
            })
        })?,
        None => {
            // A closed pipe (`| head`) is not an error worth reporting.
            let _ = write_all(traces, std::io::stdout().lock());
        }
    }
    Ok(Outcome::Success)
}

/// `gen request-log`: an Anthropic request log (not a trace), written as
/// it is made.
fn generate_request_log(a: &GenArgs) -> Result<Outcome, AppError> {
    for (given, flag) in [
        (a.sessions.is_some(), "--sessions"),
        (a.accounts.is_some(), "--accounts"),
        (a.days.is_some(), "--days"),
    ] {
        if given {
            return Err(AppError::Usage(format!(
                "generator \"request-log\" takes no {flag} (only \"fleet\" does)"
            )));
        }
    }
    let calls = a.calls.unwrap_or(100);
    if calls == 0 {
        return Err(AppError::Usage(
            "generator \"request-log\" needs at least 1 call, found 0".to_owned(),
        ));
    }
    let seed = a.seed.unwrap_or(1);
    let write =
        |out: &mut dyn Write| crate::trace::generate::write_request_log(calls, seed, out).map(drop);
    match &a.output {
        Some(p) => crate::cli::write_atomic_with(p, |file| {
            write(file).map_err(|source| crate::cli::CliError::Write {
                path: p.display().to_string(),
                source,
            })
        })?,
        None => {
            // A closed pipe (`| head`) is not an error worth reporting.
            let _ = write(&mut std::io::BufWriter::new(std::io::stdout().lock()));
        }
    }
    Ok(Outcome::Success)
}

//! `tracecost stability`: stubs and prefixes checked byte-stable, in this
//! process and in fresh ones.

use super::notes::policy_notes;
use crate::app::{self, AppError};
use crate::cli::args::StabilityArgs;
use crate::cli::error::Outcome;
use crate::cli::progress::with_progress;
use crate::cli::render::print_stdout;

/// Runs `tracecost stability`.
pub(super) fn run(a: StabilityArgs) -> Result<Outcome, AppError> {
    let plan = a.plan()?;
    for line in policy_notes(&plan.runs) {
        eprintln!("tracecost: note: {line}");
    }
    let outcomes = with_progress(|bar| app::stability(&plan, bar))?;
    if a.digest_only {
        let mut out = String::new();
        for o in &outcomes {
            out.push_str(&format!("{} {}\n", o.trace, o.report.digest));
        }
        print_stdout(&out);
        return Ok(Outcome::Success);
    }
    let mut failed = false;
    let mut out = String::new();
    for o in &outcomes {
        // The same check in fresh processes: equal digests mean the stubs
        // do not depend on anything of one process (addresses, hash order).
        let mut others = Vec::new();
        if a.processes > 0 {
            let exe = std::env::current_exe().map_err(|e| {
                AppError::Environment(format!("cannot find the tracecost binary: {e}"))
            })?;
            for _ in 0..a.processes {
                let run = std::process::Command::new(&exe)
                    .arg("stability")
                    .arg(&a.trace)
                    .args([
                        "--config",
                        &o.config.to_string(),
                        "--processes",
                        "0",
                        "--digest-only",
                        "--tokenizer",
                        &plan.tokenizer_spec,
                    ])
                    .output()
                    .map_err(|e| {
                        AppError::Environment(format!("cannot run {}: {e}", exe.display()))
                    })?;
                let text = String::from_utf8_lossy(&run.stdout);
                others.push(app::stability_digest(&text, &o.trace));
            }
        }
        out.push_str(&crate::cli::render::stability(o, &others));
        if !o.report.violations.is_empty() || others.iter().any(|d| *d != o.report.digest) {
            failed = true;
        }
    }
    print_stdout(&out);
    Ok(if failed {
        Outcome::ProblemFound
    } else {
        Outcome::Success
    })
}

//! Each command: its plan, one pipeline call, the output rendered.

use std::io::Write;

use super::args::{Cli, Command, GenArgs, ModelsArgs, StabilityArgs};
use super::error::Outcome;
use super::render::print_view;
use crate::app::{self, AppError, CheckOutcome};
use crate::report::export::Format;
use crate::report::models_view::ModelsView;
use crate::report::replay_view::ReplayView;
use crate::report::sweep_view::SweepView;
use crate::report::totals_view::{ReplayTotalsView, SweepTotalsView};
use crate::report::usage_period_view::PeriodView;
use crate::report::usage_view::UsageView;

/// Runs a parsed command line.
pub(super) fn execute(cli: Cli) -> Result<Outcome, AppError> {
    match cli.command {
        Command::Replay(a) => {
            let plan = a.plan()?;
            for line in policy_notes(&plan.runs) {
                eprintln!("tracecost: note: {line}");
            }
            let outputs = with_progress(|bar| app::replay(&plan, bar))?;
            if let [_] = outputs.as_slice() {
                print_view(&ReplayView(&outputs), a.format.0);
            } else {
                let totals = app::totals::replay_totals(&plan.runs, &outputs);
                per_trace_note(a.per_trace, outputs.len());
                print_view(
                    &ReplayTotalsView {
                        totals: &totals,
                        per_trace: a.per_trace.then_some(outputs.as_slice()),
                    },
                    a.format.0,
                );
            }
            Ok(Outcome::Success)
        }
        Command::Sweep(a) => {
            let plan = a.plan()?;
            let skipped = app::fleet::skipped_configs(plan.applicability());
            for line in crate::report::build::sweep_skipped_lines(&skipped) {
                eprintln!("tracecost: note: {line}");
            }
            let sweeps = with_progress(|bar| app::sweep(&plan, bar))?;
            if let [_] = sweeps.as_slice() {
                print_view(&SweepView { sweeps: &sweeps }, a.format.0);
            } else {
                let whole = plan.whole_traces().ok_or_else(|| {
                    AppError::Internal("a sweep's traces are not in memory".into())
                })?;
                let totals = app::totals::sweep_totals(whole, &sweeps, plan.configs())?;
                per_trace_note(a.per_trace, sweeps.len());
                print_view(
                    &SweepTotalsView {
                        totals: &totals,
                        per_trace: a.per_trace.then_some(sweeps.as_slice()),
                    },
                    a.format.0,
                );
            }
            Ok(Outcome::Success)
        }
        Command::Report(a) => {
            if let Some(dir) = &a.cache_dir {
                super::output::refuse_cache_in_out(dir, &a.out)?;
            }
            let cache = match &a.cache_dir {
                Some(dir) => Some(app::fleet_cache::FleetCache::open(dir, &tool_build()?)?),
                None => None,
            };
            let plan = a.plan(cache.as_ref())?;
            // The load's buffers are gone; the replay starts from what is kept.
            super::memory::give_back();
            let mut out = super::output::StagedDir::new(&a.out)?;
            let mut writer = crate::report::build::ReportWriter::new(
                &mut out,
                super::render::assumptions(&plan),
                plan.sweep.traces().len(),
                a.sessions.unwrap_or_default(),
            )
            .map_err(report_err(&a.out))?;
            if a.calls_jsonl {
                writer = writer.with_call_lines();
            }
            if a.in_memory {
                writer = writer.lines_in_memory();
            }
            let cache = match (cache, &a.cache_dir) {
                (Some(cache), _) if writer.pages_only_for_some() => {
                    Some(cache.for_plan(&plan.sweep))
                }
                (Some(_), Some(dir)) => {
                    eprintln!(
                        "tracecost: {} not used for the replay: every trace gets a page in this report, so every trace is replayed",
                        dir.display()
                    );
                    None
                }
                _ => None,
            };
            let outcome = with_progress(|bar| {
                app::report_with(
                    &plan,
                    bar,
                    cache.as_ref(),
                    &mut super::render::ReportSink {
                        writer: &mut writer,
                        out: &a.out,
                        replayed: 0,
                    },
                )
            })?;
            // The replay's traces and caches are gone before the files that
            // list every session are written.
            super::memory::give_back();
            let files = writer
                .finish(&outcome.fleet, &outcome.sessions)
                .map_err(report_err(&a.out))?;
            out.commit()?;
            // The main job says the answer, and where to read the rest.
            for line in crate::report::build::fleet_lines(&outcome.fleet) {
                eprintln!("tracecost: {line}");
            }
            if let (Some(dir), Some(used)) = (&a.cache_dir, outcome.cache) {
                // The report is written: the cache keeps what it used. A
                // cache that cannot be tidied costs disk, not the report.
                let pruned = match cache.as_ref().map(app::fleet_cache::FleetCache::prune) {
                    Some(Ok(pruned)) => pruned,
                    Some(Err(e)) => {
                        eprintln!(
                            "tracecost: warning: the cache keeps entries it no longer uses: {e}"
                        );
                        Default::default()
                    }
                    None => Default::default(),
                };
                eprintln!(
                    "tracecost: {}",
                    super::render::cache_line(dir, used, pruned)
                );
            }
            eprintln!(
                "tracecost: wrote {} file(s) to {}; open {}",
                files.len(),
                a.out.display(),
                a.out.join("index.html").display()
            );
            Ok(Outcome::Success)
        }
        Command::Fidelity(a) => {
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
                    "no trace recorded usage to compare with: fidelity needs recorded input tokens"
                        .into(),
                ));
            }
            print_view(
                &crate::report::fidelity_view::FidelityView(&report),
                a.format.0,
            );
            Ok(Outcome::Success)
        }
        Command::Stability(a) => stability(a),
        Command::Check(a) => {
            let plan = a.plan()?;
            match app::check(&plan)? {
                CheckOutcome::Updated(baseline) => {
                    super::write_atomic(&plan.path, baseline.to_json().as_bytes())?;
                    // Entries left out for lack of a price keep what they held.
                    eprintln!(
                        "tracecost: updated {} entries in {}",
                        plan.entries.len(),
                        plan.path.display()
                    );
                    Ok(Outcome::Success)
                }
                outcome @ CheckOutcome::Compared { .. } => {
                    let md = super::render::check(&outcome);
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
        Command::Usage(a) => usage(&a),
        Command::Gen(a) => generate(a),
        Command::Models(a) => models(a),
        Command::Prices(super::args::PricesCommand::Update { url, out }) => {
            let done = super::prices::update(&url, &out)?;
            let s = &done.summary;
            eprintln!(
                "tracecost: wrote {}: {} model(s) ({} new, {} updated) from {} (sha256 {}), in force from {}; {} entries not mapped; use it with --pricing {}",
                out.display(),
                s.added.len() + s.updated.len(),
                s.added.len(),
                s.updated.len(),
                done.source.url,
                done.source.sha256,
                done.source.fetched,
                s.skipped,
                out.display(),
            );
            Ok(Outcome::Success)
        }
        Command::Import(a) => {
            let plan = a.plan()?;
            // Each trace goes to the temporary output file as soon as it is
            // built; the file is renamed into place only once every input
            // has been read.
            let bar = super::progress::Bar::new();
            let shown = a.output.display().to_string();
            let written =
                super::write_atomic_with(&a.output, |file| app::import(&plan, &bar, file, &shown));
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
        Command::Ledger(super::args::LedgerCommand::Repair { dir }) => {
            let report = app::ledger_repair(&dir)?;
            for s in &report.set_aside {
                eprintln!(
                    "tracecost: {}: line {}: {}",
                    dir.join("index.jsonl").display(),
                    s.line,
                    crate::engine::handle::one_line(&s.reason, 200)
                );
            }
            eprintln!(
                "tracecost: {}: kept {} record(s), set {} line(s) aside{}",
                dir.display(),
                report.kept,
                report.set_aside.len(),
                if report.set_aside.is_empty() {
                    String::new()
                } else {
                    format!(" in {}", report.damaged_file.display())
                }
            );
            Ok(Outcome::Success)
        }
        Command::Recall(a) => {
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
    }
}

/// Where the per-trace tables went, when only the fleet's total is printed.
fn per_trace_note(per_trace: bool, traces: usize) {
    if !per_trace {
        eprintln!(
            "tracecost: note: the total of {traces} traces; --per-trace prints each one's too"
        );
    }
}

/// What the options implied and what each run kept of its trace's status
/// quo, one line per distinct note and config: a folder of traces that
/// resolve alike gets one line, not one per trace.
fn policy_notes(runs: &[app::TraceRun]) -> Vec<String> {
    let mut groups: Vec<(String, String, Vec<&str>)> = Vec::new();
    for r in runs {
        let parts: Vec<String> = r
            .implied
            .iter()
            .map(ToString::to_string)
            .chain(crate::policy::Kept::describe(&r.kept))
            .collect();
        if parts.is_empty() {
            continue;
        }
        let (note, config) = (parts.join("; "), r.config.to_string());
        match groups
            .iter_mut()
            .find(|(n, c, _)| *n == note && *c == config)
        {
            Some((_, _, names)) => names.push(&r.trace.name),
            None => groups.push((note, config, vec![&r.trace.name])),
        }
    }
    groups
        .into_iter()
        .map(|(note, config, names)| match names.as_slice() {
            [one] => format!("{note}; replaying {one} as {config}"),
            many => format!("{note}; replaying {} traces as {config}", many.len()),
        })
        .collect()
}

fn stability(a: StabilityArgs) -> Result<Outcome, AppError> {
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
        out.push_str(&super::render::stability(o, &others));
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

/// Runs `f` with a progress bar on stderr (when it is a terminal), taken
/// down before anything is printed.
fn with_progress<T>(f: impl FnOnce(&dyn crate::progress::Progress) -> T) -> T {
    let bar = super::progress::Bar::new();
    let out = f(&bar);
    bar.finish();
    out
}

fn generate(a: GenArgs) -> Result<Outcome, AppError> {
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
        Some(p) => super::write_atomic_with(p, |file| {
            let written = match lines {
                true => write_lines(traces, file),
                false => write_all(traces, file),
            };
            written.map_err(|source| super::CliError::Write {
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
        Some(p) => super::write_atomic_with(p, |file| {
            write(file).map_err(|source| super::CliError::Write {
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

fn models(a: ModelsArgs) -> Result<Outcome, AppError> {
    let pricing = super::plan::pricing_table(a.pricing.as_deref())?;
    print_view(
        &ModelsView {
            rows: &pricing.rows(),
        },
        a.format.0,
    );
    Ok(Outcome::Success)
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

pub(super) fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth reporting.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// A report into `out` that could not be written, as the error the
/// pipelines return.
pub(super) fn report_err(
    out: &std::path::Path,
) -> impl Fn(crate::report::build::ReportError) -> AppError + '_ {
    move |e| match e {
        crate::report::build::ReportError::Chart(e) => AppError::Chart(e.to_string()),
        crate::report::build::ReportError::Write(source) => AppError::Write {
            path: out.display().to_string(),
            source,
        },
        crate::report::build::ReportError::Summaries(e) => e,
    }
}

/// This build of tracecost, exactly: its version and the digest of the
/// running program, so that a cache ([`app::fleet_cache`]) never gives one
/// build what another replayed.
fn tool_build() -> Result<String, AppError> {
    let digest = std::env::current_exe()
        .and_then(|exe| app::fleet_cache::digest_file(&exe))
        .map_err(|e| {
            AppError::Environment(format!(
                "--cache-dir: cannot read the running tracecost to key the cache by its build: {e}"
            ))
        })?;
    Ok(format!(
        "tracecost {} {}",
        env!("CARGO_PKG_VERSION"),
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    ))
}

/// `tracecost usage [session|daily|monthly]`.
fn usage(a: &super::args::UsageArgs) -> Result<Outcome, AppError> {
    use crate::app::usage_period::{self, DayRange};
    let (period, c) = a.view();
    let plan = super::plan::usage_plan(&c.paths, c.pricing.as_deref())?;
    let range = DayRange {
        since: c.since.clone(),
        until: c.until.clone(),
    };
    let format = if c.json { Format::Json } else { Format::Table };
    let unpriced = match period {
        None => {
            let report = usage_period::sessions_within(app::usage(&plan)?, &range);
            if let (true, Some(e)) = (c.strict_prices, report.unpriced.strict_error()) {
                return Err(e);
            }
            print_view(&UsageView { report: &report }, format);
            report.unpriced
        }
        Some(period) => {
            let report = usage_period::run(&plan, period, &range)?;
            if let (true, Some(e)) = (c.strict_prices, report.unpriced.strict_error()) {
                return Err(e);
            }
            print_view(&PeriodView { report: &report }, format);
            report.unpriced
        }
    };
    for line in unpriced.lines() {
        eprintln!("tracecost: {line}");
    }
    Ok(Outcome::Success)
}

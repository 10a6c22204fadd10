//! `tracecost report`: the fleet's report written into a folder, whole or
//! not at all.

use crate::app::{self, AppError};
use crate::cli::args::ReportArgs;
use crate::cli::error::Outcome;
use crate::cli::progress::with_progress;

/// Runs `tracecost report`.
pub(super) fn run(a: ReportArgs) -> Result<Outcome, AppError> {
    if let Some(dir) = &a.cache_dir {
        crate::cli::output::refuse_cache_in_out(dir, &a.out)?;
    }
    let cache = match &a.cache_dir {
        Some(dir) => Some(app::fleet_cache::FleetCache::open(dir, &tool_build()?)?),
        None => None,
    };
    let plan = a.plan(cache.as_ref())?;
    // The load's buffers are gone; the replay starts from what is kept.
    crate::cli::memory::give_back();
    let mut out = crate::cli::output::StagedDir::new(&a.out)?;
    let mut writer = crate::report::build::ReportWriter::new(
        &mut out,
        crate::cli::render::assumptions(&plan),
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
        (Some(cache), _) if writer.pages_only_for_some() => Some(cache.for_plan(&plan.sweep)),
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
            &mut ReportSessionSink {
                writer: &mut writer,
                out: &a.out,
                replayed: 0,
            },
        )
    })?;
    // The replay's traces and caches are gone before the files that
    // list every session are written.
    crate::cli::memory::give_back();
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
                eprintln!("tracecost: warning: the cache keeps entries it no longer uses: {e}");
                Default::default()
            }
            None => Default::default(),
        };
        eprintln!(
            "tracecost: {}",
            crate::cli::render::cache_line(dir, used, pruned)
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

/// A report into `out` that could not be written, as the error the
/// pipelines return.
fn report_err(
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

/// The report being written, as the report pipeline hands it sessions.
struct ReportSessionSink<'w, 's> {
    writer: &'w mut crate::report::build::ReportWriter<'s>,
    /// The report's folder, for errors.
    out: &'w std::path::Path,
    /// Traces replayed so far.
    replayed: usize,
}

impl crate::app::SessionSink for ReportSessionSink<'_, '_> {
    fn replayed(
        &mut self,
        index: usize,
        trace: &crate::trace::Trace,
        report: &crate::app::TraceReport,
    ) -> Result<Vec<u8>, crate::app::AppError> {
        self.replayed += 1;
        if self
            .replayed
            .is_multiple_of(crate::cli::memory::TRACES_PER_TRIM)
            || trace.calls.len() >= crate::cli::memory::CALLS_PER_TRIM
        {
            crate::cli::memory::give_back();
        }
        self.writer
            .trace_kept(index, crate::app::identity::session_of(trace), report)
            .map_err(report_err(self.out))
    }

    fn cached(
        &mut self,
        index: usize,
        _: &crate::app::TraceOutline,
        kept: &[u8],
    ) -> Result<(), crate::app::AppError> {
        self.writer
            .trace_cached(index, kept)
            .map_err(report_err(self.out))
    }

    fn pages_wanted(&self) -> Vec<usize> {
        self.writer.pages_wanted()
    }

    fn every_call_row(&self) -> bool {
        self.writer.writes_every_call()
    }

    fn cached_page(&mut self, index: usize, page: &[u8]) -> Result<bool, crate::app::AppError> {
        Ok(self.writer.page_cached(index, page))
    }

    fn page(
        &mut self,
        index: usize,
        trace: &crate::trace::Trace,
        report: &crate::app::TraceReport,
    ) -> Result<(), crate::app::AppError> {
        self.writer
            .page_at(index, crate::app::identity::session_of(trace), report)
            .map_err(report_err(self.out))
    }

    fn pages(&self) -> Vec<(usize, Vec<u8>)> {
        self.writer.pages()
    }

    fn replay_finished(&mut self) {
        // The replay's traces and caches are gone: the fleet's answer
        // starts from what is kept, not from the replay's high-water mark.
        crate::cli::memory::give_back();
    }
}

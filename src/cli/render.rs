//! Turning pipeline results into the bytes a command prints or writes.

use std::io::Write;

use crate::app::{CheckOutcome, ReportPlan, StabilityOutcome};
use crate::report::check::CheckView;
use crate::report::export::{Exportable, Format};
use crate::report::stability_view::StabilityView;

/// Prints `view` in `format` to stdout. The command line offers only the
/// formats a view has; a closed pipe (`| head`) is not worth reporting.
pub(super) fn print_view<V: Exportable>(view: &V, format: Format) {
    debug_assert!(V::formats().contains(&format), "{format:?}");
    let mut out = std::io::stdout().lock();
    let _ = view.export_to(format, &mut out);
    let _ = out.flush();
}

/// One trace's stability verdict, as text.
pub(super) fn stability(o: &StabilityOutcome, others: &[String]) -> String {
    let config = o.config.to_string();
    StabilityView {
        trace: &o.trace,
        config: &config,
        report: &o.report,
        others,
    }
    .to_string_as(Format::Table)
    .unwrap_or_default()
}

/// A check's comparison, as Markdown (also a CI job summary).
pub(super) fn check(outcome: &CheckOutcome) -> String {
    match outcome {
        CheckOutcome::Compared {
            rows,
            tolerance_pct,
        } => CheckView {
            rows,
            tolerance_pct: *tolerance_pct,
        }
        .to_string_as(Format::Markdown)
        .unwrap_or_default(),
        CheckOutcome::Updated(_) => String::new(),
    }
}

/// What a report's numbers assume, from its plan.
pub(super) fn assumptions(plan: &ReportPlan) -> crate::report::build::Assumptions {
    use crate::report::build::Assumptions;
    let sweep = &plan.sweep;
    let cost = &sweep.cost;
    let price_table = cost.pricing.table_record();
    let g = &sweep.grid;
    let recorded_ttl = sweep.takes_recorded_ttl();
    Assumptions {
        prices: price_table.to_string(),
        price_table,
        tokenizer: cost.tokenizer_spec.clone(),
        calibration: cost.calibration == crate::app::Calibration::Auto,
        batch: cost.batch,
        grid: format!(
            "compaction {} (ledger thresholds {:?} chars × keep-last {:?}); cache {} with TTL {}",
            g.compaction_names().join(", "),
            g.threshold_list(),
            g.keep_last_list(),
            g.cache_names().join(", "),
            g.ttl_for(recorded_ttl)
        ),
        baseline: sweep.baseline.as_ref().map(ToString::to_string),
        unpriced: cost.unpriced.models(),
    }
}

/// The report being written, as the report pipeline hands it sessions.
pub(super) struct ReportSink<'w, 's> {
    pub(super) writer: &'w mut crate::report::build::ReportWriter<'s>,
    /// The report's folder, for errors.
    pub(super) out: &'w std::path::Path,
    /// Traces replayed so far.
    pub(super) replayed: usize,
}

impl crate::app::SessionSink for ReportSink<'_, '_> {
    fn replayed(
        &mut self,
        index: usize,
        trace: &crate::trace::Trace,
        report: &crate::app::TraceReport,
    ) -> Result<Vec<u8>, crate::app::AppError> {
        self.replayed += 1;
        if self.replayed.is_multiple_of(super::memory::TRACES_PER_TRIM) {
            super::memory::give_back();
        }
        self.writer
            .trace_kept(index, crate::app::identity::session_of(trace), report)
            .map_err(super::commands::report_err(self.out))
    }

    fn cached(
        &mut self,
        index: usize,
        _: &crate::app::TraceOutline,
        kept: &[u8],
    ) -> Result<(), crate::app::AppError> {
        self.writer
            .trace_cached(index, kept)
            .map_err(super::commands::report_err(self.out))
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
            .map_err(super::commands::report_err(self.out))
    }

    fn pages(&self) -> Vec<(usize, Vec<u8>)> {
        self.writer.pages()
    }

    fn replay_finished(&mut self) {
        // The replay's traces and caches are gone: the fleet's answer
        // starts from what is kept, not from the replay's high-water mark.
        super::memory::give_back();
    }
}

/// What a report took from its cache, in a line.
pub(super) fn cache_line(
    dir: &std::path::Path,
    used: crate::app::CacheUse,
    pruned: crate::app::fleet_cache::Pruned,
) -> String {
    let count = |n: usize| crate::report::fmt::thousands(n as u64);
    let again = match used.paged_again {
        0 => String::new(),
        n => format!(", {} replayed again for a page", count(n)),
    };
    let mut removed = Vec::new();
    if pruned.entries > 0 {
        removed.push(format!(
            "{} entr{} this report did not use ({})",
            count(pruned.entries),
            if pruned.entries == 1 { "y" } else { "ies" },
            size(pruned.bytes)
        ));
    }
    if pruned.temporary > 0 {
        removed.push(format!(
            "{} temporary file(s) a stopped run left",
            count(pruned.temporary)
        ));
    }
    let removed = match removed.is_empty() {
        true => String::new(),
        false => format!("; removed {}", removed.join(" and ")),
    };
    format!(
        "cache {}: {} trace(s) read from it, {} replayed and kept{again}{removed}",
        dir.display(),
        count(used.found),
        count(used.replayed),
    )
}

/// A size in bytes as a reader takes it in: KB, MB or GB (powers of 1,000).
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1_000_000_000 => format!("{:.1} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b if b >= 1_000 => format!("{:.1} KB", b as f64 / 1e3),
        b => format!("{b} bytes"),
    }
}

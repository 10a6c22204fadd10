//! Turning pipeline results into the bytes a command prints or writes.

use std::io::Write;

use crate::app::{CheckOutcome, ReportPlan, StabilityReport};
use crate::report::check::CheckView;
use crate::report::export::{ExportFormat, Exportable};
use crate::report::stability_view::StabilityView;

/// Prints `view` in `format` to stdout. The command line offers only the
/// formats a view has; a closed pipe (`| head`) is not worth reporting.
pub(super) fn print_view<V: Exportable>(view: &V, format: ExportFormat) {
    debug_assert!(V::formats().contains(&format), "{format:?}");
    let mut out = std::io::stdout().lock();
    let _ = view.export_to(format, &mut out);
    let _ = out.flush();
}

/// Prints `text` to stdout as it is; a closed pipe (`| head`) is not an
/// error worth reporting.
pub(super) fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// One trace's stability verdict, as text.
pub(super) fn stability(o: &StabilityReport, others: &[String]) -> String {
    let config = o.config.to_string();
    StabilityView {
        trace: &o.trace,
        config: &config,
        report: &o.report,
        others,
    }
    .to_string_as(ExportFormat::Table)
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
        .to_string_as(ExportFormat::Markdown)
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
        calibration: cost.calibration == crate::app::CalibrationChoice::Auto,
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
        unread: plan.unread.clone(),
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

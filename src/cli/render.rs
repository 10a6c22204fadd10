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
    let prices = match &cost.pricing_file {
        Some(p) => format!(
            "built-in Anthropic prices (as published, late 2026) overridden by {}",
            p.display()
        ),
        None => "built-in Anthropic prices (as published, late 2026)".to_owned(),
    };
    let g = &sweep.grid;
    let recorded_ttl = crate::app::status_quos(sweep.traces(), sweep.baseline.as_ref())
        .is_ok_and(|q| crate::app::takes_recorded_ttl(&q));
    Assumptions {
        prices,
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
    }
}

//! Turning pipeline results into the bytes a command prints or writes.

use super::args::OutFormat;
use crate::app::{AppError, CheckOutcome, ReportOutcome, ReportPlan, StabilityOutcome};
use crate::report::replay_view::{
    CsvExporter, JsonExporter, MarkdownExporter, ReplayExporter, ReplayOutput, TableExporter,
};

pub(super) fn replay(outputs: &[ReplayOutput], format: OutFormat) -> String {
    let exporter: &dyn ReplayExporter = match format {
        OutFormat::Table => &TableExporter,
        OutFormat::Json => &JsonExporter,
        OutFormat::Csv => &CsvExporter,
        OutFormat::Md => &MarkdownExporter,
    };
    let mut out = Vec::new();
    let _ = exporter.write(outputs, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

pub(super) fn sweep(sweeps: &[crate::replay::sweep::TraceSweep], format: OutFormat) -> String {
    match format {
        OutFormat::Json => crate::report::sweep_view::json(sweeps),
        OutFormat::Csv => crate::report::sweep_view::csv(sweeps),
        OutFormat::Md => crate::report::sweep_view::markdown(sweeps),
        OutFormat::Table => crate::report::sweep_view::table(sweeps),
    }
}

pub(super) fn models(rows: &[crate::cost::pricing::ModelRow], format: OutFormat) -> String {
    crate::report::models_view::render(
        rows,
        format == OutFormat::Json,
        format == OutFormat::Csv,
        format == OutFormat::Md,
    )
}

pub(super) fn stability(o: &StabilityOutcome, others: &[String]) -> String {
    crate::report::stability_view::render(&o.trace, &o.config.to_string(), &o.report, others)
}

pub(super) fn check(outcome: &CheckOutcome) -> String {
    match outcome {
        CheckOutcome::Compared {
            rows,
            tolerance_pct,
        } => crate::report::check::markdown(rows, *tolerance_pct),
        CheckOutcome::Updated(_) => String::new(),
    }
}

pub(super) fn usage(
    report: &crate::report::usage_view::UsageReport,
    scan: &crate::trace::import::claude_code::UsageScan,
    json: bool,
) -> String {
    if json {
        crate::report::usage_view::json(report)
    } else {
        crate::report::usage_view::table(report, scan)
    }
}

/// The report's files: pages, data and charts.
pub(super) fn report_files(
    outcome: &ReportOutcome,
    plan: &ReportPlan,
) -> Result<Vec<crate::report::build::ReportFile>, AppError> {
    use crate::report::build::{Assumptions, build};
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
    let assumptions = Assumptions {
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
            g.ttl_or_default()
        ),
    };
    build(&outcome.reports, &assumptions).map_err(|e| AppError::Chart(e.to_string()))
}

//! `tracecost usage`: the usage the agents recorded, priced.

use crate::app::{self, AppError};
use crate::cli::args::UsageArgs;
use crate::cli::error::Outcome;
use crate::cli::render::print_view;
use crate::report::export::ExportFormat;
use crate::report::usage_period_view::PeriodView;
use crate::report::usage_view::UsageView;

/// `tracecost usage [session|daily|monthly]`.
pub(super) fn run(a: &UsageArgs) -> Result<Outcome, AppError> {
    use crate::app::usage_period::{self, DayRange};
    let (period, c) = a.view();
    let plan = crate::cli::plan::usage_plan(&c.paths, c.pricing.as_deref())?;
    let range = DayRange {
        since: c.since.clone(),
        until: c.until.clone(),
    };
    let format = if c.json {
        ExportFormat::Json
    } else {
        ExportFormat::Table
    };
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

//! `tracecost models`: the price table.

use crate::app::AppError;
use crate::cli::args::ModelsArgs;
use crate::cli::error::Outcome;
use crate::cli::render::print_view;
use crate::report::models_view::ModelsView;

/// Runs `tracecost models`.
pub(super) fn run(a: ModelsArgs) -> Result<Outcome, AppError> {
    let pricing = crate::cli::plan::pricing_table(a.pricing.as_deref())?;
    print_view(
        &ModelsView {
            rows: &pricing.rows(),
        },
        a.format.0,
    );
    Ok(Outcome::Success)
}

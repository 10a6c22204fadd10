//! `tracecost prices update`: LiteLLM's price file fetched and written as
//! a pricing file.

use crate::app::AppError;
use crate::cli::error::Outcome;

/// Runs `tracecost prices update`.
pub(super) fn update(url: &str, out: &std::path::Path) -> Result<Outcome, AppError> {
    let done = crate::cli::prices::update(url, out)?;
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

//! `tracecost prices update`: LiteLLM's published price file, fetched and
//! written as a pricing file of tracecost's own format, so that prices stay
//! current without a release. Nothing else fetches: a run reads a price
//! file only when given one (`--pricing FILE`), so the same inputs give the
//! same figures whatever was fetched since.

use std::path::Path;
use std::time::Duration;

use crate::app::AppError;
use crate::cost::pricing::{MergeSummary, PriceDate, PriceSource, litellm_to_native};

/// Where LiteLLM publishes its price file: its repository's main branch.
pub(super) const LITELLM_PRICES_URL: &str =
    "https://raw.githubusercontent.com/BerriAI/litellm/main/model_prices_and_context_window.json";

/// The largest file accepted: LiteLLM's is a few megabytes; anything near
/// this is not it.
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// How long the whole fetch may take.
const TIMEOUT: Duration = Duration::from_secs(120);

/// What an update wrote.
pub(super) struct Updated {
    pub(super) summary: MergeSummary,
    pub(super) source: PriceSource,
}

/// Fetches `url` and writes the prices it maps to `out`, in force from
/// today (UTC): the file's `source` names the address, the SHA-256 of
/// the bytes fetched and the day.
pub(super) fn update(url: &str, out: &Path) -> Result<Updated, AppError> {
    let bytes = fetch(url)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| AppError::Usage(format!("{url}: the file fetched is not UTF-8 text")))?;
    let source = PriceSource {
        url: url.to_owned(),
        sha256: crate::engine::handle::sha256_hex(text.as_bytes()),
        fetched: today(),
    };
    let (native, summary) = litellm_to_native(&text, url, source.clone())?;
    // A file in a folder not made yet (`~/.config/tracecost/`): made.
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| AppError::Write {
            path: dir.display().to_string(),
            source,
        })?;
    }
    super::write_atomic(out, native.as_bytes())?;
    Ok(Updated { summary, source })
}

/// The body of a GET of `url` (http or https). A transport failure is the
/// environment's (no network, a proxy, TLS); a refusal by the server (a
/// status other than 2xx) or an address that cannot be one is the
/// user's, named with the address.
fn fetch(url: &str) -> Result<Vec<u8>, AppError> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .user_agent(concat!("tracecost/", env!("CARGO_PKG_VERSION")))
        .build()
        .into();
    let failed = |e: ureq::Error| match e {
        ureq::Error::StatusCode(code) => {
            AppError::Usage(format!("{url}: the server answered HTTP {code}"))
        }
        ureq::Error::BadUri(why) => {
            AppError::Usage(format!("{url}: not an http(s) address: {why}"))
        }
        ureq::Error::BodyExceedsLimit(_) => AppError::Usage(format!(
            "{url}: larger than {} MB: not LiteLLM's price file",
            MAX_BYTES / 1024 / 1024
        )),
        other => AppError::Environment(format!("{url}: cannot fetch: {other}")),
    };
    let mut response = agent.get(url).call().map_err(failed)?;
    response
        .body_mut()
        .with_config()
        .limit(MAX_BYTES)
        .read_to_vec()
        .map_err(failed)
}

/// Today's UTC day.
fn today() -> PriceDate {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    PriceDate::of_ms(u64::try_from(ms).unwrap_or(u64::MAX))
}

//! A `token_count`'s counts, read and checked.

use crate::common;
use tracecost_engine::json::RawObject;

/// Token counts of a `TokenUsage` object.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Counts {
    pub(super) input: u64,
    pub(super) cached: u64,
    pub(super) written: Option<u64>,
    pub(super) output: u64,
    /// `reasoning_output_tokens`, when recorded.
    pub(super) reasoning: Option<u64>,
    pub(super) total: u64,
}

impl Counts {
    pub(super) fn is_zero(&self) -> bool {
        self.input == 0 && self.cached == 0 && self.written.unwrap_or(0) == 0 && self.output == 0
    }

    /// What was added since `earlier` (running totals), never negative.
    pub(super) fn since(&self, earlier: Option<&Counts>) -> Counts {
        let Some(e) = earlier else { return *self };
        Counts {
            input: self.input.saturating_sub(e.input),
            cached: self.cached.saturating_sub(e.cached),
            written: self
                .written
                .map(|w| w.saturating_sub(e.written.unwrap_or(0))),
            output: self.output.saturating_sub(e.output),
            reasoning: self
                .reasoning
                .map(|r| r.saturating_sub(e.reasoning.unwrap_or(0))),
            total: self.total.saturating_sub(e.total),
        }
    }
}

/// The counts of the usage object at `ptr` (`None` when absent or null).
/// Each count follows the one rule every reader applies
/// ([`common::token_count`]: a non-negative integer, as a number or
/// a string holding one; `null` is no count). A malformed count is an
/// error naming its pointer: a Codex count decides whether its event is a
/// call at all (and which repeats it), so it is never dropped and read
/// around as other readers drop a usage object; under `skip_invalid` the
/// line is skipped and counted, like any line that cannot be read.
pub(super) fn counts(info: &RawObject, key: &str, ptr: &str) -> Result<Option<Counts>, String> {
    let Some(raw) = info.get(key).filter(|r| r.get() != "null") else {
        return Ok(None);
    };
    let at = format!("{ptr}/{key}");
    let obj =
        RawObject::from_json(raw.get()).map_err(|_| format!("at {at}: expected an object"))?;
    let field = |k: &str| -> Result<Option<u64>, String> {
        let Some(v) = obj.get(k) else { return Ok(None) };
        let malformed = || {
            // A long value is cut: the message stays one short line.
            let found: String = v.get().chars().take(40).collect();
            let more = if found.len() < v.get().len() {
                "…"
            } else {
                ""
            };
            format!("at {at}/{k}: expected a non-negative integer, found {found}{more}")
        };
        let value: serde_json::Value = serde_json::from_str(v.get()).map_err(|_| malformed())?;
        common::token_count(&value).map_err(|_| malformed())
    };
    Ok(Some(Counts {
        input: field("input_tokens")?.unwrap_or(0),
        cached: field("cached_input_tokens")?.unwrap_or(0),
        written: field("cache_write_input_tokens")?,
        output: field("output_tokens")?.unwrap_or(0),
        reasoning: field("reasoning_output_tokens")?,
        total: field("total_tokens")?.unwrap_or(0),
    }))
}

//! Replay: one trace under one config, call by call, through the real
//! engine (ledger, rewriter, cache composition) and the prompt-cache
//! simulator — no shortcut formula.
//!
//! Calls without a start time are treated as back-to-back (each starts right
//! after the previous one), which favours caching; results say so.
//!
//! This crate owns replaying traces under configs and what a replay
//! measures; it must not depend on the importers, the generators, the
//! application or the report (tests/cli/crates.rs at the workspace root holds
//! its dependencies to a list).

use tracecost_trace::progress;

mod applies;
pub mod autocompact;
pub mod breakdown;
mod caches;
mod check;
pub mod explain;
mod group;
mod in_flight;
mod prepare;
mod request;
mod recall_observed;
pub mod recall_risk;
mod recall_size;
mod packed_rows;
mod varint;
pub mod stability;
pub mod spilled_costs;
pub mod sweep;
pub mod stream;

use group::GroupRun;
pub use group::served_cost;
pub use in_flight::between_replays;
pub use packed_rows::{CallResults, CallResultsBuilder, CallResultsIter};

use caches::{SharedCaches, caches};
pub use caches::{longest_hold_ms, prompt_cache};
pub use check::{check_config, check_model, trace_label};
pub use prepare::{
    BlockCount, HeldPrefix, HiddenCache, IdleFit, MEDIA_TOKENS, PreparedTrace, Scale, SharedState,
    TraceCalibration, block_token_text, count_block, documented_hold_ms, recorded_fallbacks,
};

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::progress::Progress;
use tracecost_cost::cache_sim::SimError;
use tracecost_cost::pricing::{Pricing, PricingError, Usage};
use tracecost_cost::tokens::TokenMemo;
use tracecost_engine::ledger::LedgerError;
use tracecost_engine::message::{BlockKind, ContentBlock};
use tracecost_policy::{BlockTokens, Config};
use tracecost_trace::{RecordedUsage, Trace};

/// Why a replay could not run.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The model is not in the price table.
    #[error(transparent)]
    Pricing(#[from] PricingError),
    /// The config cannot apply to this trace.
    #[error("trace {trace}: {reason}")]
    Config {
        /// The trace.
        trace: String,
        /// Why.
        reason: String,
    },
    /// A request the API would reject.
    #[error("trace {trace}, call {call}: {source}")]
    Sim {
        /// The trace.
        trace: String,
        /// 1-based call index.
        call: usize,
        /// What was wrong.
        source: SimError,
    },
    /// The ledger failed.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The temporary file per-call costs are kept in could not be written
    /// or read back ([`spilled_costs`]).
    #[error(
        "{path}: the report's temporary file: {source}; set TMPDIR to a folder with room for about the inputs' size"
    )]
    Spill {
        /// The file.
        path: String,
        /// What failed.
        source: std::io::Error,
    },
}

/// What every replay of a run shares: the price table, the token counts
/// made so far (shared by every config and trace of the run), and the
/// options. One value, copied down the replay's layers.
#[derive(Clone, Copy, Debug)]
pub struct ReplayContext<'a> {
    /// The prices (and each model's framing) calls are billed with.
    pub pricing: &'a Pricing,
    /// Token counts of texts already counted.
    pub memo: &'a TokenMemo,
    /// Options that apply to every config.
    pub opts: ReplayOptions<'a>,
}

impl<'a> ReplayContext<'a> {
    /// A context with the default options.
    pub fn new(pricing: &'a Pricing, memo: &'a TokenMemo) -> Self {
        ReplayContext {
            pricing,
            memo,
            opts: ReplayOptions::default(),
        }
    }

    /// The same context with `opts`.
    pub fn with_opts(self, opts: ReplayOptions<'a>) -> Self {
        ReplayContext { opts, ..self }
    }
}

/// Options that apply to every config.
#[derive(Clone, Copy, Default)]
pub struct ReplayOptions<'a> {
    /// Price with the Batch API discount.
    pub batch: bool,
    /// Told of each call replayed (one step per call and group of configs
    /// run together); the caller starts the stage.
    pub progress: Option<&'a dyn Progress>,
    /// How each call's request is built (the results are the same).
    pub build: Build,
    /// Which per-call rows a result keeps.
    pub rows: PerCallRows,
}

/// Which per-call rows a replay's result keeps. Totals, fidelity and the
/// breakdown are summed from the rows either way.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PerCallRows {
    /// Every call's [`CallResult`] ([`ReplayResult::calls`]).
    #[default]
    All,
    /// Only each call's cost and compacted ids ([`ReplayResult::costs`]):
    /// what ranking a sweep and summing a session read of a config whose
    /// rows are not written. A row is 184 bytes read and a few dozen kept
    /// packed, this 32: a long trace's rows under every config would be
    /// most of what its sweep holds.
    Costs,
}

/// How a replay builds each call's request. Both give the same results,
/// byte for byte; the reference exists to test the incremental build
/// against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Build {
    /// From the previous call's request, rebuilding only from the first
    /// block that changed.
    #[default]
    Incremental,
    /// From scratch at every call: the straightforward per-call
    /// construction.
    Reference,
}

impl std::fmt::Debug for ReplayOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayOptions")
            .field("batch", &self.batch)
            .field("progress", &self.progress.is_some())
            .field("build", &self.build)
            .field("rows", &self.rows)
            .finish()
    }
}

/// The tool_use ids compacted at one call, in history order.
///
/// Under a ledger a result once compacted stays compacted, so call after
/// call the list only grows at its end: every call's list is the start of
/// one list shared by the run, stored once, and a call keeps just its
/// length. Without that sharing the lists of a long trace add up to
/// calls²/2 ids (26 million for 7,189 calls). A call whose list is not the
/// start of the run's (a policy that restores results) gets its own.
/// Reads as a slice and serializes as a list of strings.
#[derive(Clone, Default)]
pub struct CompactedIds {
    ids: Arc<[Arc<str>]>,
    len: usize,
}

impl std::ops::Deref for CompactedIds {
    type Target = [Arc<str>];
    fn deref(&self) -> &[Arc<str>] {
        self.ids.get(..self.len).unwrap_or(&self.ids)
    }
}

impl FromIterator<Arc<str>> for CompactedIds {
    fn from_iter<I: IntoIterator<Item = Arc<str>>>(iter: I) -> Self {
        let ids: Arc<[Arc<str>]> = iter.into_iter().collect();
        Self {
            len: ids.len(),
            ids,
        }
    }
}

impl CompactedIds {
    /// The ids compacted here and not in `before` (in order), and those
    /// compacted in `before` and no longer (sorted). When this list extends
    /// `before` in the run's shared list, that costs the new ids alone.
    pub fn changes_since<'a>(&'a self, before: &'a CompactedIds) -> (Vec<&'a str>, Vec<&'a str>) {
        let grew = self.len >= before.len
            && (Arc::ptr_eq(&self.ids, &before.ids) || self[..before.len] == before[..]);
        if grew {
            return (
                self[before.len..].iter().map(|id| &**id).collect(),
                Vec::new(),
            );
        }
        let was: std::collections::HashSet<&str> = before.iter().map(|id| &**id).collect();
        let now: std::collections::HashSet<&str> = self.iter().map(|id| &**id).collect();
        let new = self
            .iter()
            .map(|id| &**id)
            .filter(|id| !was.contains(id))
            .collect();
        let mut gone: Vec<&str> = was.difference(&now).copied().collect();
        gone.sort_unstable();
        (new, gone)
    }
}

impl PartialEq for CompactedIds {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for CompactedIds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for CompactedIds {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|id| &**id))
    }
}

/// Builds the [`CompactedIds`] of a run, call by call: consecutive calls
/// whose lists each extend the one before share a single list. Held as
/// each call's length and each list once with the first call that reads
/// it (8 bytes a call of a long run, not a [`CompactedIds`]' 24 and the
/// waiting calls' 16).
#[derive(Default)]
struct CompactedLog {
    /// The current shared list, growing.
    open: Vec<Arc<str>>,
    /// The first call that reads `open`.
    open_from: usize,
    /// Per call, how long its list is.
    lens: Vec<usize>,
    /// The lists frozen, each with the first call that reads it, in call
    /// order.
    lists: Vec<(usize, Arc<[Arc<str>]>)>,
}

/// Every call's [`CompactedIds`], as [`CompactedLog::finish`] leaves them.
#[derive(Default)]
pub(crate) struct CompactedCalls {
    lens: Vec<usize>,
    lists: Vec<(usize, Arc<[Arc<str>]>)>,
}

impl CompactedCalls {
    /// The ids compacted at call `ci`, if it was logged.
    pub(crate) fn get(&self, ci: usize) -> Option<CompactedIds> {
        let len = *self.lens.get(ci)?;
        let list = self.lists.partition_point(|(first, _)| *first <= ci);
        let (_, ids) = self.lists.get(list.checked_sub(1)?)?;
        Some(CompactedIds {
            ids: ids.clone(),
            len,
        })
    }

    /// How many calls were logged.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lens.len()
    }
}

/// The ids of `ids` beyond `before`, when `ids` starts with `before` (as
/// the ids compacted at one call start with the previous call's under a
/// ledger); `None` otherwise. Lists cut from one shared list are compared
/// by address.
pub(crate) fn extension<'i>(ids: &'i [Arc<str>], before: &[Arc<str>]) -> Option<&'i [Arc<str>]> {
    let (head, rest) = ids.split_at_checked(before.len())?;
    let same = std::ptr::eq(head.as_ptr(), before.as_ptr())
        || head
            .iter()
            .zip(before)
            .all(|(a, b)| Arc::ptr_eq(a, b) || a == b);
    same.then_some(rest)
}

impl CompactedLog {
    /// Records the ids compacted at the next call, of which the first
    /// `unchanged` are known to be those of the call before (as
    /// [`tracecost_policy::CompactedList::take_unchanged`] says);
    /// returns those not compacted at the call before. Only the ids past
    /// `unchanged` are compared: the list grows with the trace.
    fn push<'i>(&mut self, ids: &'i [Arc<str>], unchanged: usize) -> &'i [Arc<str>] {
        // `open` is the previous call's list: the known prefix is skipped.
        let skip = unchanged.min(self.open.len()).min(ids.len());
        let extended = extension(&ids[skip..], &self.open[skip..]);
        debug_assert_eq!(
            extended.map(<[_]>::len),
            extension(ids, &self.open).map(<[_]>::len),
            "the unchanged prefix was not the previous call's"
        );
        let new = match extended {
            Some(new) => new,
            None => {
                self.freeze();
                ids
            }
        };
        self.open.extend(new.iter().cloned());
        self.lens.push(ids.len());
        new
    }

    /// Freezes `open` for the calls that read it; the next call starts a
    /// list of its own.
    fn freeze(&mut self) {
        if self.open_from < self.lens.len() {
            let ids: Arc<[Arc<str>]> = std::mem::take(&mut self.open).into();
            self.lists.push((self.open_from, ids));
        }
        self.open.clear();
        self.open_from = self.lens.len();
    }

    /// How many distinct ids the calls recorded so far compacted: the
    /// union of the log's lists, each list read once however many calls
    /// share it. Counted once at the end rather than kept as a set that
    /// grows with every call.
    fn distinct_ids(&self) -> usize {
        let mut lists: Vec<&[Arc<str>]> = Vec::new();
        for (_, ids) in &self.lists {
            lists.push(ids);
        }
        lists.push(&self.open);
        let longest = lists.iter().map(|l| l.len()).max().unwrap_or(0);
        let mut seen: std::collections::HashSet<&str, tracecost_cost::tokens::FastBuild> =
            std::collections::HashSet::with_capacity_and_hasher(longest, Default::default());
        for list in lists {
            seen.extend(list.iter().map(|id| &**id));
        }
        seen.len()
    }

    /// Every call's ids, in call order.
    fn finish(mut self) -> CompactedCalls {
        self.freeze();
        CompactedCalls {
            lens: self.lens,
            lists: self.lists,
        }
    }
}

/// What is kept of a call whose row is not: its cost and the ids
/// compacted at it ([`PerCallRows::Costs`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CallCost {
    /// Simulated cost.
    pub cost_usd: f64,
    /// tool_use ids whose results were compacted or cleared.
    pub compacted: CompactedIds,
}

impl From<&CallResult> for CallCost {
    fn from(c: &CallResult) -> Self {
        CallCost {
            cost_usd: c.cost_usd,
            compacted: c.compacted.clone(),
        }
    }
}

/// What recall risk reads of a call: the ids compacted at it. Both a
/// call's row and its cost alone have them.
pub trait CompactedAt {
    /// The ids compacted at this call.
    fn compacted(&self) -> &CompactedIds;
}

impl CompactedAt for CallResult {
    fn compacted(&self) -> &CompactedIds {
        &self.compacted
    }
}

impl CompactedAt for CallCost {
    fn compacted(&self) -> &CompactedIds {
        &self.compacted
    }
}

/// A replay's per-call figures as it kept them: every row, or each call's
/// cost alone (read back from disk when spilled).
#[derive(Debug, Clone)]
pub enum PerCall<'a> {
    /// Every call's row.
    Rows(&'a CallResults),
    /// Every call's cost and compacted ids.
    Costs(Arc<[CallCost]>),
}

impl PerCall<'_> {
    /// How many calls.
    pub fn len(&self) -> usize {
        match self {
            PerCall::Rows(c) => c.len(),
            PerCall::Costs(c) => c.len(),
        }
    }

    /// Whether there are no calls.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Each call's simulated cost, in call order.
    pub fn costs(&self) -> Box<dyn Iterator<Item = f64> + '_> {
        match self {
            PerCall::Rows(c) => Box::new(c.iter().map(|c| c.cost_usd)),
            PerCall::Costs(c) => Box::new(c.iter().map(|c| c.cost_usd)),
        }
    }
}

/// What a replay keeps of each call when it keeps no rows
/// ([`PerCallRows::Costs`]): in memory as replayed, or on disk once a
/// sweep has spilled them ([`spilled_costs`]).
#[derive(Debug, Clone, Default)]
pub enum CallCosts {
    /// None kept (the rows are, or nothing is).
    #[default]
    None,
    /// In memory.
    Kept(Arc<[CallCost]>),
    /// On disk.
    Spilled(spilled_costs::SpilledCosts),
}

impl CallCosts {
    /// How many calls.
    pub fn len(&self) -> usize {
        match self {
            CallCosts::None => 0,
            CallCosts::Kept(c) => c.len(),
            CallCosts::Spilled(c) => c.len(),
        }
    }

    /// Whether there are no calls.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether they are in memory (a list of calls held per config, what
    /// a report's sweep avoids).
    pub fn in_memory(&self) -> bool {
        matches!(self, CallCosts::Kept(c) if !c.is_empty())
    }

    /// Every call's cost and compacted ids, in call order (read back, when
    /// spilled).
    pub fn read(&self) -> Result<Arc<[CallCost]>, ReplayError> {
        match self {
            CallCosts::None => Ok(Arc::new([])),
            CallCosts::Kept(c) => Ok(c.clone()),
            CallCosts::Spilled(c) => Ok(c.read()?.into()),
        }
    }
}

impl FromIterator<CallCost> for CallCosts {
    fn from_iter<I: IntoIterator<Item = CallCost>>(iter: I) -> Self {
        CallCosts::Kept(iter.into_iter().collect())
    }
}

/// Equal when they hold the same costs; spilled ones are compared by
/// place (reading them back to compare would be a read per comparison).
impl PartialEq for CallCosts {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (CallCosts::Spilled(a), CallCosts::Spilled(b)) => a.same_place(b),
            (CallCosts::Spilled(_), _) | (_, CallCosts::Spilled(_)) => false,
            (a, b) => a.read().ok() == b.read().ok(),
        }
    }
}

/// What the provider recorded of one call: the same in every config's
/// row of the call, so held once and shared by them
/// ([`CallResult::record`]).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct RecordedRow {
    /// What the provider recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Usage>,
    /// The recorded usage priced like the simulated one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_cost_usd: Option<f64>,
}

impl RecordedRow {
    /// The record to share between a call's rows: `None` when it holds
    /// nothing.
    pub fn shared(self) -> Option<SharedRecord> {
        (self != RecordedRow::default()).then(|| SharedRecord(Arc::new(self)))
    }
}

/// A [`RecordedRow`] shared by the rows of one call; written as its
/// fields.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedRecord(Arc<RecordedRow>);

impl std::ops::Deref for SharedRecord {
    type Target = RecordedRow;
    fn deref(&self) -> &RecordedRow {
        &self.0
    }
}

impl Serialize for SharedRecord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// One simulated call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CallResult {
    /// 1-based call index.
    pub index: usize,
    /// Messages sent.
    pub messages: usize,
    /// Characters of the messages as sent (compact JSON array).
    pub chars: u64,
    /// Simulated usage, with the API's field names.
    #[serde(flatten)]
    pub usage: Usage,
    /// Simulated cost.
    pub cost_usd: f64,
    /// tool_use ids whose results were compacted or cleared.
    pub compacted: CompactedIds,
    /// What the provider recorded of the call and its price, when the
    /// trace has it ([`Self::recorded`], [`Self::recorded_cost_usd`]):
    /// shared by the call's rows under every config of its group. A trace
    /// without usage spends a pointer on it in every row rather than 56
    /// bytes, and a report holds three configs' rows of a long trace at
    /// once; a trace with usage holds it once a call, not once a row.
    #[serde(flatten)]
    pub record: Option<SharedRecord>,
    /// The simulated usage priced as its record counts tokens, where that
    /// differs from `cost_usd`: the record has no cache-write count (Codex's
    /// `token_count`) and the simulation wrote, so its writes are priced as
    /// input, as the record prices every token it did not read. What the
    /// record is compared with; `cost_usd` stays the provider's bill.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd_as_recorded: Option<f64>,
    /// The model priced.
    #[serde(skip)]
    pub model: Arc<str>,
    /// Tokens of the leading blocks sent exactly as in the previous call:
    /// the most a cache could serve.
    pub stable_prefix_tokens: u64,
    /// The request sends more than its model's context window: the API
    /// would refuse it, so its figures describe no real bill.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub over_window: bool,
    /// Why the call read less than the call before had cached, if it did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_cause: Option<explain::CacheCause>,
    /// A call a summarising compaction added (its summary), not one the
    /// trace recorded.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub summary: bool,
}

impl CallResult {
    /// What the provider recorded, when the trace has it.
    pub fn recorded(&self) -> Option<Usage> {
        self.record.as_ref().and_then(|r| r.recorded)
    }

    /// The recorded usage priced like the simulated one.
    pub fn recorded_cost_usd(&self) -> Option<f64> {
        self.record.as_ref().and_then(|r| r.recorded_cost_usd)
    }
}

/// Sums over calls.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(from = "TotalsDoc")]
pub struct Totals {
    /// Calls.
    pub calls: usize,
    /// Characters sent.
    pub chars: u64,
    /// Summed usage.
    #[serde(flatten)]
    pub usage: Usage,
    /// Summed cost.
    pub cost_usd: f64,
    /// Summed recorded cost over the calls that recorded their input.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded_cost_usd: Option<f64>,
    /// Summed simulated cost over those same calls, to compare like with
    /// like: each priced as its record counts tokens
    /// ([`CallResult::cost_usd_as_recorded`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd_recorded_calls: Option<f64>,
    /// How many calls recorded their input.
    pub recorded_calls: usize,
    /// Tool results compacted at least once.
    pub compacted_results: usize,
    /// Calls that send more than their model's context window.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub over_window_calls: usize,
    /// Calls a summarising compaction added (counted in `calls` too).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub summary_calls: usize,
    /// What those calls cost (counted in `cost_usd` too).
    #[serde(default, skip_serializing_if = "is_nothing")]
    pub summary_cost_usd: f64,
}

impl Totals {
    /// Adds `o`'s figures to these: the totals of several traces are the
    /// sums of theirs.
    pub fn add(&mut self, o: &Totals) {
        let sum = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (None, None) => None,
            _ => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        let (u, v) = (self.usage, o.usage);
        self.usage = Usage::new(
            u.input_tokens + v.input_tokens,
            u.write_5m() + v.write_5m(),
            u.write_1h() + v.write_1h(),
            u.cache_read_input_tokens + v.cache_read_input_tokens,
            u.output_tokens + v.output_tokens,
        );
        self.calls += o.calls;
        self.chars += o.chars;
        self.cost_usd += o.cost_usd;
        self.recorded_cost_usd = sum(self.recorded_cost_usd, o.recorded_cost_usd);
        self.cost_usd_recorded_calls = sum(self.cost_usd_recorded_calls, o.cost_usd_recorded_calls);
        self.recorded_calls += o.recorded_calls;
        self.compacted_results += o.compacted_results;
        self.over_window_calls += o.over_window_calls;
        self.summary_calls += o.summary_calls;
        self.summary_cost_usd += o.summary_cost_usd;
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn is_nothing(usd: &f64) -> bool {
    *usd == 0.0
}

/// [`Totals`] as written, the usage's members among the others: read
/// through this rather than through serde's `flatten`, which holds all the
/// members in a buffer before reading them. A fleet's summaries are read
/// back several times, each with totals for every config.
#[derive(Deserialize)]
struct TotalsDoc {
    calls: usize,
    chars: u64,
    // The usage's members, read as [`Usage`] reads them: absent or null
    // is 0.
    input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_read_input_tokens: Option<u64>,
    cache_creation: Option<tracecost_cost::pricing::CacheCreation>,
    output_tokens: Option<u64>,
    cost_usd: f64,
    recorded_cost_usd: Option<f64>,
    cost_usd_recorded_calls: Option<f64>,
    recorded_calls: usize,
    compacted_results: usize,
    #[serde(default)]
    over_window_calls: usize,
    #[serde(default)]
    summary_calls: usize,
    #[serde(default)]
    summary_cost_usd: f64,
}

impl From<TotalsDoc> for Totals {
    fn from(d: TotalsDoc) -> Self {
        Totals {
            calls: d.calls,
            chars: d.chars,
            usage: Usage {
                input_tokens: d.input_tokens.unwrap_or(0),
                cache_creation_input_tokens: d.cache_creation_input_tokens.unwrap_or(0),
                cache_read_input_tokens: d.cache_read_input_tokens.unwrap_or(0),
                cache_creation: d.cache_creation,
                output_tokens: d.output_tokens.unwrap_or(0),
            },
            cost_usd: d.cost_usd,
            recorded_cost_usd: d.recorded_cost_usd,
            cost_usd_recorded_calls: d.cost_usd_recorded_calls,
            recorded_calls: d.recorded_calls,
            compacted_results: d.compacted_results,
            over_window_calls: d.over_window_calls,
            summary_calls: d.summary_calls,
            summary_cost_usd: d.summary_cost_usd,
        }
    }
}

/// One trace replayed under one config. Read back (a summary spilled or
/// cached), it has no per-call rows: summaries keep none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayResult {
    /// The trace's name.
    pub trace: String,
    /// The config (serialized as its canonical string).
    pub config: Config,
    /// The model priced (the first call's).
    pub model: String,
    /// Whether start times were missing and calls treated as back-to-back.
    pub back_to_back: bool,
    /// The calibration used.
    pub calibration: TraceCalibration,
    /// Per call (shared with the configs that sent the same requests);
    /// empty when only [`Self::costs`] were kept.
    #[serde(skip_deserializing)]
    pub calls: CallResults,
    /// Per call, its cost and compacted ids, when the replay kept these
    /// rather than [`Self::calls`] ([`PerCallRows::Costs`]); else empty.
    #[serde(skip)]
    pub costs: CallCosts,
    /// Totals.
    pub totals: Totals,
    /// Simulated against recorded usage, when the trace recorded any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fidelity: Option<Fidelity>,
    /// The bill by model and class, and the cache writes by cause. Not
    /// written with the result: a summary keeps it
    /// (`SessionSummary::breakdowns`), a report sums it over the fleet.
    #[serde(skip)]
    pub breakdown: breakdown::Breakdown,
}

impl ReplayResult {
    /// The per-call figures kept: the rows, or the costs alone (read back
    /// when spilled: one config's list in memory while it is read).
    pub fn per_call(&self) -> Result<PerCall<'_>, ReplayError> {
        if self.keeps_rows() {
            Ok(PerCall::Rows(&self.calls))
        } else {
            Ok(PerCall::Costs(self.costs.read()?))
        }
    }

    /// Whether its per-call rows are kept (or it has no calls), rather
    /// than each call's cost alone.
    pub fn keeps_rows(&self) -> bool {
        !self.calls.is_empty() || self.costs.is_empty()
    }
}

/// Converts recorded usage (optional fields) to billed usage.
pub fn recorded_usage(r: &RecordedUsage) -> Usage {
    let e5 = r.ephemeral_5m_input_tokens;
    let e1 = r.ephemeral_1h_input_tokens;
    let mut u = Usage {
        input_tokens: r.input_tokens.unwrap_or(0),
        cache_creation_input_tokens: r.cache_creation_input_tokens.unwrap_or(0),
        cache_read_input_tokens: r.cache_read_input_tokens.unwrap_or(0),
        cache_creation: None,
        output_tokens: r.output_tokens.unwrap_or(0),
    };
    if e5.is_some() || e1.is_some() {
        u.cache_creation = Some(tracecost_cost::pricing::CacheCreation {
            ephemeral_5m_input_tokens: e5.unwrap_or(0),
            ephemeral_1h_input_tokens: e1.unwrap_or(0),
        });
    }
    u
}

/// Counts blocks the rewriter creates (stubs, placeholders) and answers
/// the peers' token questions from the prepared counts.
struct RunTokens<'a> {
    prepared: &'a PreparedTrace<'a>,
    memo: &'a TokenMemo,
    framing_message: u64,
    calibration: TraceCalibration,
    framing_block: u64,
}

impl RunTokens<'_> {
    /// A stub's count, made again each time its message is rebuilt (a
    /// stub is a few dozen bytes and its words are in the memo): kept by
    /// address for the run, the counts of a peer's cleared results of a
    /// long trace were the largest map of its replay (64 MB for 500,000).
    fn count(&self, block: &Arc<ContentBlock>) -> BlockCount {
        self.prepared.count_made(self.memo, block)
    }
}

impl BlockTokens for RunTokens<'_> {
    fn block_tokens(&self, block: &ContentBlock) -> u64 {
        // History blocks were counted when the trace was prepared; anything
        // else (a placeholder) goes through the memo.
        let c = self
            .prepared
            .count_of(block)
            .unwrap_or_else(|| count_block(self.memo, block));
        c.tokens(&self.calibration, self.framing_block)
    }

    fn history_tokens(&self, history: &[tracecost_engine::message::Message]) -> u64 {
        match self
            .prepared
            .prefix_tokens(history, self.framing_block, self.framing_message)
        {
            Some(t) => t,
            None => history
                .iter()
                .flat_map(|m| m.blocks())
                .map(|b| self.block_tokens(b))
                .sum(),
        }
    }
}

/// What Claude Code's clearing ([`Compaction::ClaudeCodeClear`]) clears
/// over the trace, call by call: `(history length from which on, tool_use
/// id)`. At each call, when the tool results not yet cleared come to more
/// than `keep_tokens + at_least`, the oldest of them (not those of the
/// call's last message) are cleared until the rest come to at most
/// `keep_tokens`.
fn plan_claude_code_clears(
    prepared: &PreparedTrace<'_>,
    config: &Config,
    pricing: &Pricing,
    tokens: &mut RunTokens<'_>,
    keep_tokens: u64,
    at_least: u64,
) -> Result<Vec<(usize, Arc<str>)>, ReplayError> {
    let trace = prepared.trace;
    let mut cleared: std::collections::HashSet<&str> = Default::default();
    let mut planned: Vec<(usize, Arc<str>)> = Vec::new();
    // Tool results sent whole so far, with their tokens, oldest first; and
    // how many messages they were scanned through.
    let mut whole: std::collections::VecDeque<(usize, &Arc<str>, u64)> = Default::default();
    let mut whole_tokens = 0u64;
    let mut scanned = 0usize;
    for call in &trace.calls {
        let price = pricing.lookup(config.model_for_call(trace, call))?;
        tokens.framing_block = price.framing.per_block;
        tokens.framing_message = price.framing.per_message;
        let history = trace.history_of(call);
        for (mi, m) in history.iter().enumerate().skip(scanned) {
            for block in m.blocks() {
                if let BlockKind::ToolResult { tool_use_id, .. } = block.kind()
                    && !cleared.contains(&**tool_use_id)
                {
                    let t = tokens.block_tokens(block);
                    whole.push_back((mi, tool_use_id, t));
                    whole_tokens += t;
                }
            }
        }
        scanned = scanned.max(history.len());
        if whole_tokens <= keep_tokens.saturating_add(at_least) {
            continue;
        }
        let last = history.len().saturating_sub(1);
        while whole_tokens > keep_tokens {
            match whole.front() {
                Some(&(mi, id, t)) if mi < last => {
                    whole.pop_front();
                    whole_tokens -= t;
                    cleared.insert(id);
                    planned.push((call.messages, id.clone()));
                }
                _ => break,
            }
        }
    }
    Ok(planned)
}

/// Replays `prepared` under `config`.
pub fn replay(
    prepared: &PreparedTrace<'_>,
    config: &Config,
    ctx: ReplayContext<'_>,
) -> Result<ReplayResult, ReplayError> {
    let mut results = replay_group(prepared, std::slice::from_ref(config), ctx)?;
    results.pop().ok_or_else(|| ReplayError::Config {
        trace: prepared.trace.name.clone(),
        reason: "no config".into(),
    })
}

/// Replays several configs that share their compaction policy and model:
/// the engine rewrites each call once and the flattened request is shared;
/// each config then places its own cache markers and runs its own cache
/// simulation. Gives exactly what [`replay`] gives for each config alone.
pub fn replay_group(
    prepared: &PreparedTrace<'_>,
    configs: &[Config],
    ctx: ReplayContext<'_>,
) -> Result<Vec<ReplayResult>, ReplayError> {
    for c in configs {
        check_config(prepared.trace, c)?;
    }
    run_group(prepared, configs, ctx)
}

/// [`replay_group`] of configs already checked against the trace.
pub(crate) fn run_group(
    prepared: &PreparedTrace<'_>,
    configs: &[Config],
    ctx: ReplayContext<'_>,
) -> Result<Vec<ReplayResult>, ReplayError> {
    let mut run = GroupRun::new(prepared, configs, ctx)?;
    let mut sims = caches(prepared, configs, ctx)?;
    for ci in 0..prepared.trace.calls.len() {
        run.call(ci, &mut sims)?;
    }
    // The caches are not read again: let go before the rows are made.
    drop(sims);
    Ok(run.finish())
}

/// [`replay_group`] over several traces that share one prompt cache (one
/// account's sessions): their calls are simulated in start-time order
/// against one cache per config, so a session that starts within the TTL
/// of another reads the prefix they have in common. Each trace's calls keep
/// their order; a call without a start time runs right after the call
/// before it in its own trace. Gives one result list per trace, in order.
pub fn replay_group_shared(
    prepared: &[&PreparedTrace<'_>],
    configs: &[Config],
    ctx: ReplayContext<'_>,
) -> Result<Vec<Vec<ReplayResult>>, ReplayError> {
    for p in prepared {
        for c in configs {
            check_config(p.trace, c)?;
        }
    }
    run_group_shared(prepared, configs, ctx)
}

/// [`replay_group_shared`] of configs already checked against the traces.
fn run_group_shared(
    prepared: &[&PreparedTrace<'_>],
    configs: &[Config],
    ctx: ReplayContext<'_>,
) -> Result<Vec<Vec<ReplayResult>>, ReplayError> {
    run_segment(prepared, configs, ctx, &mut SharedCaches::default())
}

/// Replays `configs` over `prepared`, traces whose calls all come after
/// those of the traces `sims` has seen (one segment of an account's
/// sessions in time), against `sims`, carried from segment to segment:
/// replaying an account segment by segment meets the caches with the calls
/// in the order one replay of all its traces would. Each trace runs on its
/// model's caches, made for the first trace of that model in that order
/// ([`SharedCaches`]).
pub(crate) fn run_segment(
    prepared: &[&PreparedTrace<'_>],
    configs: &[Config],
    ctx: ReplayContext<'_>,
    sims: &mut SharedCaches,
) -> Result<Vec<Vec<ReplayResult>>, ReplayError> {
    let mut runs = prepared
        .iter()
        .map(|p| GroupRun::new(p, configs, ctx))
        .collect::<Result<Vec<_>, _>>()?;
    let order = shared_order(prepared.iter().map(|p| p.trace));
    // Per trace, its model's caches, once its first call meets them.
    let mut which: Vec<Option<usize>> = vec![None; prepared.len()];
    for (t, ci) in order {
        let w = match which[t] {
            Some(w) => w,
            None => *which[t].insert(sims.for_trace(prepared[t], configs, ctx)?),
        };
        runs[t].call(ci, sims.get(w, &prepared[t].trace.name)?)?;
    }
    Ok(runs.into_iter().map(GroupRun::finish).collect())
}

/// The order in which several traces' calls reach a shared cache: always
/// the earliest next call of any trace (ties to the earlier trace), so each
/// trace keeps its own order. A call without a start time inherits the
/// start of the call before it (0 for a first call). Made as it is read:
/// a long trace's order is its calls in turn, not a list of them.
pub fn shared_order<'t>(
    traces: impl Iterator<Item = &'t Trace>,
) -> impl Iterator<Item = (usize, usize)> + 't {
    MergeByStart::new(traces.map(|t| &t.calls[..]).collect())
}

/// The start times of one trace's calls, read as they are merged.
trait StartTimes {
    /// Call `i`'s start (`Some(None)` when it has none), or `None` past
    /// the last call.
    fn start(&self, i: usize) -> Option<Option<u64>>;
}

impl StartTimes for &[tracecost_trace::Call] {
    fn start(&self, i: usize) -> Option<Option<u64>> {
        self.get(i).map(|c| c.start_ms)
    }
}

#[cfg(test)]
impl StartTimes for Vec<Option<u64>> {
    fn start(&self, i: usize) -> Option<Option<u64>> {
        self.get(i).copied()
    }
}

/// [`shared_order`]'s merge: per trace its next call and that call's
/// start, the earliest on top of a heap.
struct MergeByStart<S> {
    traces: Vec<S>,
    next: Vec<usize>,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u64, usize)>>,
}

impl<S: StartTimes> MergeByStart<S> {
    fn new(traces: Vec<S>) -> Self {
        let heap = traces
            .iter()
            .enumerate()
            .filter_map(|(t, s)| s.start(0).map(|ms| std::cmp::Reverse((ms.unwrap_or(0), t))))
            .collect();
        MergeByStart {
            next: vec![0; traces.len()],
            traces,
            heap,
        }
    }
}

impl<S: StartTimes> Iterator for MergeByStart<S> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let std::cmp::Reverse((ms, t)) = self.heap.pop()?;
        let ci = self.next[t];
        self.next[t] += 1;
        if let Some(next) = self.traces[t].start(ci + 1) {
            self.heap.push(std::cmp::Reverse((next.unwrap_or(ms), t)));
        }
        Some((t, ci))
    }
}

#[cfg(test)]
fn merge_by_start(starts: Vec<Vec<Option<u64>>>) -> Vec<(usize, usize)> {
    MergeByStart::new(starts).collect()
}

/// How close the simulation came to what the provider recorded, over the
/// calls that recorded their input.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Fidelity {
    /// Calls compared.
    pub calls: usize,
    /// Simulated total input (uncached + writes + reads).
    pub simulated_input: u64,
    /// Recorded total input.
    pub recorded_input: u64,
    /// Simulated cache reads.
    pub simulated_read: u64,
    /// Recorded cache reads.
    pub recorded_read: u64,
    /// Simulated cache writes.
    pub simulated_write: u64,
    /// Recorded cache writes.
    pub recorded_write: u64,
    /// Mean of |simulated − recorded| / recorded total input, per call, in %.
    pub mean_abs_error_pct: f64,
    /// Calls whose total input is within 5% of the record.
    pub within_5pct: usize,
    /// Calls where the simulation and the record agree on whether the
    /// cache was read (both read something, or both nothing).
    pub hit_agreement: usize,
}

/// Compares simulated and recorded usage call by call.
pub fn fidelity<'a>(calls: impl IntoIterator<Item = &'a CallResult>) -> Option<Fidelity> {
    let mut f = FidelitySum::default();
    calls.into_iter().for_each(|c| f.add(c));
    f.finish()
}

/// [`fidelity`] summed one call at a time, for a caller that does not
/// keep the calls.
#[derive(Default)]
pub(crate) struct FidelitySum {
    f: Fidelity,
    err_sum: f64,
}

impl FidelitySum {
    pub(crate) fn add(&mut self, c: &CallResult) {
        let Some(r) = c.recorded() else { return };
        let f = &mut self.f;
        let (sim, rec) = (c.usage.total_input(), r.total_input());
        f.calls += 1;
        f.simulated_input += sim;
        f.recorded_input += rec;
        f.simulated_read += c.usage.cache_read_input_tokens;
        f.recorded_read += r.cache_read_input_tokens;
        f.simulated_write += c.usage.cache_creation_input_tokens;
        f.recorded_write += r.cache_creation_input_tokens;
        let err = if rec == 0 {
            0.0
        } else {
            (sim as f64 - rec as f64).abs() / rec as f64 * 100.0
        };
        self.err_sum += err;
        if err <= 5.0 {
            f.within_5pct += 1;
        }
        if (c.usage.cache_read_input_tokens > 0) == (r.cache_read_input_tokens > 0) {
            f.hit_agreement += 1;
        }
    }

    pub(crate) fn finish(self) -> Option<Fidelity> {
        let f = self.f;
        (f.calls > 0).then(|| Fidelity {
            mean_abs_error_pct: self.err_sum / f.calls as f64,
            ..f
        })
    }
}

/// Sums calls into totals.
pub fn totals<'a>(
    calls: impl IntoIterator<Item = &'a CallResult>,
    compacted_results: usize,
) -> Totals {
    let mut t = TotalsSum::default();
    calls.into_iter().for_each(|c| t.add(c));
    t.finish(compacted_results)
}

/// [`totals`] summed one call at a time, for a caller that does not keep
/// the calls.
#[derive(Default)]
pub(crate) struct TotalsSum {
    t: Totals,
    w5: u64,
    w1: u64,
    recorded_sum: f64,
    simulated_sum: f64,
}

impl TotalsSum {
    pub(crate) fn add(&mut self, c: &CallResult) {
        let t = &mut self.t;
        t.calls += 1;
        t.chars += c.chars;
        t.usage.input_tokens += c.usage.input_tokens;
        t.usage.cache_creation_input_tokens += c.usage.cache_creation_input_tokens;
        t.usage.cache_read_input_tokens += c.usage.cache_read_input_tokens;
        t.usage.output_tokens += c.usage.output_tokens;
        self.w5 += c.usage.write_5m();
        self.w1 += c.usage.write_1h();
        t.cost_usd += c.cost_usd;
        t.over_window_calls += usize::from(c.over_window);
        if let Some(r) = c.recorded_cost_usd() {
            self.recorded_sum += r;
            self.simulated_sum += c.cost_usd_as_recorded.unwrap_or(c.cost_usd);
            t.recorded_calls += 1;
        }
    }

    pub(crate) fn finish(self, compacted_results: usize) -> Totals {
        let mut t = Totals {
            compacted_results,
            ..self.t
        };
        t.usage.cache_creation = Some(tracecost_cost::pricing::CacheCreation {
            ephemeral_5m_input_tokens: self.w5,
            ephemeral_1h_input_tokens: self.w1,
        });
        if t.recorded_calls > 0 {
            t.recorded_cost_usd = Some(self.recorded_sum);
            t.cost_usd_recorded_calls = Some(self.simulated_sum);
        }
        t
    }
}

#[cfg(test)]
mod read_back {
    use super::*;
    use crate::prepare::{IdleFit, TraceCalibration};

    /// Totals and a calibration read back as they were written, each with
    /// its flattened members among the others (read without serde's
    /// `flatten`); a usage's member absent or null is 0, as [`Usage`]
    /// reads it.
    #[test]
    fn totals_and_calibrations_read_back_as_written() {
        let totals = Totals {
            calls: 3,
            chars: 1_000,
            usage: Usage::new(10, 20, 30, 40, 50),
            cost_usd: 0.5,
            recorded_cost_usd: Some(0.25),
            cost_usd_recorded_calls: Some(0.125),
            recorded_calls: 2,
            compacted_results: 1,
            over_window_calls: 1,
            summary_calls: 2,
            summary_cost_usd: 0.0625,
        };
        let json = serde_json::to_string(&totals).unwrap();
        assert!(
            json.contains(r#""summary_calls":2,"summary_cost_usd":0.0625"#),
            "{json}"
        );
        assert!(
            json.contains(r#""chars":1000,"input_tokens":10,"#),
            "{json}"
        );
        assert_eq!(serde_json::from_str::<Totals>(&json).unwrap(), totals);
        let sparse: Totals = serde_json::from_str(
            r#"{"calls":1,"chars":2,"input_tokens":null,"cache_read_input_tokens":7,
                "cost_usd":0.5,"recorded_calls":0,"compacted_results":0}"#,
        )
        .unwrap();
        let usage: Usage =
            serde_json::from_str(r#"{"input_tokens":null,"cache_read_input_tokens":7}"#).unwrap();
        assert_eq!(sparse.usage, usage);
        assert_eq!(
            (
                sparse.recorded_cost_usd,
                sparse.over_window_calls,
                sparse.summary_calls,
                sparse.summary_cost_usd
            ),
            (None, 0, 0, 0.0)
        );
        // Written only where a summarising compaction ran.
        let none = serde_json::to_string(&sparse).unwrap();
        assert!(!none.contains("summary"), "{none}");
        let mut cal = TraceCalibration::default();
        cal.content.factor = 1.25;
        cal.content.n = 4;
        cal.prefix_factor = Some(0.75);
        for idle in [
            None,
            Some(IdleFit {
                idle_ms: 600_000,
                longest_hit_gap_ms: Some(1),
                shortest_miss_gap_ms: None,
                hits: 2,
                misses: 3,
                unexplained_misses: 0,
            }),
        ] {
            cal.idle = idle;
            let json = serde_json::to_string(&cal).unwrap();
            assert!(json.starts_with(r#"{"factor":1.25,"#), "{json}");
            assert_eq!(
                serde_json::from_str::<TraceCalibration>(&json).unwrap(),
                cal
            );
        }
    }
}

#[cfg(test)]
mod compacted_ids {
    use super::*;

    fn ids(list: &[&str]) -> Vec<Arc<str>> {
        list.iter().map(|s| Arc::from(*s)).collect()
    }

    #[test]
    fn growing_lists_share_one_and_others_keep_their_own() {
        let calls: Vec<Vec<Arc<str>>> = vec![
            ids(&[]),
            ids(&["a"]),
            ids(&["a"]),
            ids(&["a", "b", "c"]),
            // Not an extension: "b" was restored.
            ids(&["a", "c"]),
            ids(&["a", "c", "d"]),
            ids(&[]),
        ];
        let mut log = CompactedLog::default();
        for c in &calls {
            log.push(c, 0);
        }
        // a, b, c and d, each once, across both lists.
        assert_eq!(log.distinct_ids(), 4);
        let log = log.finish();
        assert_eq!(log.len(), calls.len());
        assert!(log.get(calls.len()).is_none());
        let out: Vec<CompactedIds> = (0..calls.len()).filter_map(|ci| log.get(ci)).collect();
        assert_eq!(out.len(), calls.len());
        for (got, want) in out.iter().zip(&calls) {
            assert_eq!(&**got, &want[..]);
        }
        // Calls 1–4 share one list, calls 5–6 another.
        assert!(Arc::ptr_eq(&out[1].ids, &out[3].ids));
        assert!(Arc::ptr_eq(&out[4].ids, &out[5].ids));
        assert!(!Arc::ptr_eq(&out[3].ids, &out[4].ids));
        assert_eq!(out[3].ids.len(), 3);
        assert_eq!(serde_json::to_string(&out[3]).unwrap(), r#"["a","b","c"]"#);
    }

    #[test]
    fn distinct_ids_count_each_id_once_whatever_list_holds_it() {
        let mut log = CompactedLog::default();
        assert_eq!(log.distinct_ids(), 0);
        // A list that starts over with ids of the one before, an id
        // repeated within a list, and ids equal but not shared.
        for c in [
            ids(&["a", "b"]),
            ids(&["b", "a"]),
            ids(&["b", "a", "a", "e"]),
            ids(&["f"]),
        ] {
            log.push(&c, 0);
        }
        assert_eq!(log.distinct_ids(), 4);
    }
}

#[cfg(test)]
mod shared {
    use super::merge_by_start;
    use proptest::prelude::*;

    /// The rule stated plainly: each call at its start, inherited from the
    /// call before when it has none, then by trace, then by place.
    fn sorted_by_start(starts: &[Vec<Option<u64>>]) -> Vec<(usize, usize)> {
        let mut calls = Vec::new();
        for (t, s) in starts.iter().enumerate() {
            let mut last = 0;
            for (ci, ms) in s.iter().enumerate() {
                last = ms.unwrap_or(last);
                calls.push((last, t, ci));
            }
        }
        // Backwards times within a trace keep the trace's order: a call
        // waits for the one before it.
        let mut out = Vec::new();
        let mut next = vec![0; starts.len()];
        while out.len() < calls.len() {
            let (_, t, ci) = calls
                .iter()
                .filter(|&&(_, t, ci)| next[t] == ci)
                .min_by_key(|&&(ms, t, _)| (ms, t))
                .copied()
                .expect("a call left");
            next[t] += 1;
            out.push((t, ci));
        }
        out
    }

    #[test]
    fn calls_meet_the_cache_in_start_order() {
        let order = merge_by_start(vec![
            vec![Some(0), Some(100), Some(300)],
            vec![Some(50), None, Some(400)],
            vec![Some(100)],
        ]);
        assert_eq!(
            order,
            [(0, 0), (1, 0), (1, 1), (0, 1), (2, 0), (0, 2), (1, 2)]
        );
    }

    proptest! {
        /// Every call once; each trace's calls in their own order, even
        /// when a trace's start times go backwards.
        #[test]
        fn the_order_is_a_merge_of_each_traces_order(
            starts in prop::collection::vec(
                prop::collection::vec(prop::option::of(0u64..1_000), 0..8), 0..6)
        ) {
            let order = merge_by_start(starts.clone());
            prop_assert_eq!(&order, &sorted_by_start(&starts));
            prop_assert_eq!(order.len(), starts.iter().map(Vec::len).sum::<usize>());
            let mut next = vec![0usize; starts.len()];
            for (t, ci) in order {
                prop_assert_eq!(ci, next[t]);
                next[t] += 1;
            }
        }
    }
}

#[cfg(test)]
mod call_rows {
    use super::*;

    fn row(record: Option<SharedRecord>, cost_usd_as_recorded: Option<f64>) -> CallResult {
        CallResult {
            index: 1,
            messages: 1,
            chars: 10,
            usage: Usage::new(3, 0, 0, 0, 2),
            cost_usd: 0.5,
            compacted: CompactedIds::default(),
            record,
            cost_usd_as_recorded,
            model: Arc::from("m"),
            stable_prefix_tokens: 0,
            over_window: false,
            cache_cause: None,
            summary: false,
        }
    }

    #[test]
    fn a_row_without_a_record_spends_a_pointer_on_it() {
        // A report holds three configs' rows of a long trace at once: the
        // record inline (absent or not) made a row 232 bytes.
        assert!(
            std::mem::size_of::<CallResult>() <= 184,
            "{}",
            std::mem::size_of::<CallResult>()
        );
        assert_eq!(RecordedRow::default().shared(), None);
    }

    #[test]
    fn a_call_s_rows_share_one_record() {
        let record = RecordedRow {
            recorded: Some(Usage::new(4, 0, 0, 0, 2)),
            recorded_cost_usd: Some(0.25),
        }
        .shared()
        .unwrap();
        let (a, b) = (
            row(Some(record.clone()), None),
            row(Some(record), Some(0.4)),
        );
        let (Some(x), Some(y)) = (&a.record, &b.record) else {
            panic!("a record each");
        };
        assert!(Arc::ptr_eq(&x.0, &y.0));
    }

    #[test]
    fn a_row_s_record_is_written_in_its_place() {
        let none = serde_json::to_string(&row(None, None)).unwrap();
        assert!(!none.contains("recorded"), "{none}");
        let record = RecordedRow {
            recorded: Some(Usage::new(4, 0, 0, 0, 2)),
            recorded_cost_usd: Some(0.25),
        };
        let with = row(record.shared(), Some(0.3));
        assert_eq!(with.recorded(), record.recorded);
        assert_eq!(with.recorded_cost_usd(), Some(0.25));
        let json = serde_json::to_string(&with).unwrap();
        let at = |k: &str| json.find(k).unwrap_or_else(|| panic!("{k} in {json}"));
        // After the compacted ids, before the stable prefix, in the order
        // they were written before the record was shared.
        assert!(at("\"compacted\"") < at("\"recorded\""), "{json}");
        assert!(
            at("\"recorded_cost_usd\"") < at("\"cost_usd_as_recorded\""),
            "{json}"
        );
        assert!(
            at("\"cost_usd_as_recorded\"") < at("\"stable_prefix_tokens\""),
            "{json}"
        );
    }
}

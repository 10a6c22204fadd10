//! Work done once per trace and shared by every config of a sweep: the
//! content key and token count of every distinct block ("tokens once").
//!
//! Claude's tokenizer is not public: counts come from the configured
//! tokenizer (o200k_base by default) and, where the trace recorded usage,
//! are scaled by a per-trace calibration factor fitted on the growth of the
//! recorded prompt between consecutive calls.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use tracecost_cost::pricing::{Framing, ModelPrice};
use tracecost_cost::tokens::{ContentHash, TokenCalibration, TokenMemo, calibrate};
use tracecost_engine::message::{
    BlockKind, Content, ContentBlock, Message, ToolDefinition, ToolResultContent,
};
use tracecost_engine::recall::recall_tool_definition;
use tracecost_trace::Trace;

mod counts;
mod fallback;
mod hidden;
mod idle;
mod record;

pub use counts::MessageCounts;
pub use fallback::{HeldPrefix, documented_hold_ms, recorded_fallbacks};
pub use hidden::{HiddenCache, SharedState, hidden_prefix_block};
pub use idle::{IdleFit, fit_idle};
pub use record::unrecorded_tail;
pub use tracecost_trace::MEDIA_TOKENS;

/// Key and raw (uncalibrated, unframed) token count of one block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockCount {
    /// Hash of the block's JSON without `cache_control`.
    pub key: ContentHash,
    /// Tokens of its content, as the tokenizer counts them.
    pub raw_tokens: u64,
    /// Which calibration factor scales it.
    pub scale: Scale,
}

/// Which factor scales a block's count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Message content: the factor fitted on prompt growth.
    Content,
    /// System prompt and tool definitions: the prefix factor when fitted.
    Prefix,
    /// Already in the provider's tokens (a hidden prefix known from usage).
    Exact,
}

/// The per-trace calibration: Claude's tokenizer is not public, so counts
/// from the configured tokenizer are scaled to the recorded usage.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
#[serde(from = "TraceCalibrationDoc")]
pub struct TraceCalibration {
    /// Scales message content; fitted on the growth of the recorded prompt
    /// between consecutive calls.
    #[serde(flatten)]
    pub content: TokenCalibration,
    /// Scales the system prompt and tool definitions; fitted on the first
    /// recorded call's total once its messages are accounted for (content
    /// of another kind — prose and schemas rather than payloads — often
    /// tokenizes at another ratio). `None`: the content factor applies.
    pub prefix_factor: Option<f64>,
    /// The idle time of the provider's automatic cache (OpenAI's before
    /// GPT-5.6, Gemini's implicit one), fitted on the recorded reads; the
    /// replay holds prefixes that long where a config names no idle time.
    /// `None`: another provider, or nothing recorded to go by.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle: Option<IdleFit>,
}

/// [`TraceCalibration`] as written, the content's calibration among the
/// other members: read through this rather than through serde's
/// `flatten`, as [`crate::Totals`] are.
#[derive(serde::Deserialize)]
struct TraceCalibrationDoc {
    factor: f64,
    relative_error: f64,
    n: usize,
    prefix_factor: Option<f64>,
    idle: Option<IdleFit>,
}

impl From<TraceCalibrationDoc> for TraceCalibration {
    fn from(d: TraceCalibrationDoc) -> Self {
        TraceCalibration {
            content: TokenCalibration {
                factor: d.factor,
                relative_error: d.relative_error,
                n: d.n,
            },
            prefix_factor: d.prefix_factor,
            idle: d.idle,
        }
    }
}

impl BlockCount {
    /// Tokens billed for this block: content, calibrated, plus `framing`.
    pub fn tokens(&self, cal: &TraceCalibration, framing: u64) -> u64 {
        let content = match (self.scale, cal.prefix_factor) {
            (Scale::Exact, _) => self.raw_tokens,
            (Scale::Prefix, Some(f)) => (self.raw_tokens as f64 * f).round().max(0.0) as u64,
            (Scale::Content | Scale::Prefix, _) => cal.content.apply(self.raw_tokens),
        };
        content + framing
    }
}

/// The text of a block that the tokenizer counts, plus fixed tokens for
/// media. One rule, used for history blocks, stubs and placeholders alike.
pub fn block_token_text(block: &ContentBlock) -> (Cow<'_, str>, u64) {
    match block.kind() {
        BlockKind::Text { text } => (Cow::Borrowed(&**text), 0),
        BlockKind::ToolUse { name, .. } => {
            let input = block.tool_input().map_or("{}", |r| r.get());
            (Cow::Owned(format!("{name} {input}")), 0)
        }
        BlockKind::ToolResult { content, .. } => match content {
            ToolResultContent::Empty => (Cow::Borrowed(""), 0),
            ToolResultContent::Text(t) => (Cow::Borrowed(&**t), 0),
            ToolResultContent::Blocks(inner) => {
                let mut text = String::new();
                let mut media = 0;
                for b in inner {
                    let (t, m) = block_token_text(b);
                    if !text.is_empty() && !t.is_empty() {
                        text.push('\n');
                    }
                    text.push_str(&t);
                    media += m;
                }
                (Cow::Owned(text), media)
            }
        },
        BlockKind::Image | BlockKind::Document => (Cow::Borrowed(""), MEDIA_TOKENS),
        BlockKind::Thinking | BlockKind::RedactedThinking | BlockKind::Other { .. } => {
            (Cow::Owned(block.to_json()), 0)
        }
    }
}

/// Counts one block (key + raw tokens) through the memo.
pub fn count_block(memo: &TokenMemo, block: &ContentBlock) -> BlockCount {
    let json = block.to_json();
    let (text, media) = block_token_text(block);
    BlockCount {
        key: ContentHash::of(json.as_bytes()),
        raw_tokens: memo.count(&text) + media,
        scale: Scale::Content,
    }
}

/// Counts one tool definition.
pub fn count_tool(memo: &TokenMemo, tool: &ToolDefinition) -> BlockCount {
    let json = tool.to_json();
    BlockCount {
        key: ContentHash::of(json.as_bytes()),
        raw_tokens: memo.count(&json),
        scale: Scale::Prefix,
    }
}

/// A trace with every block counted.
pub struct PreparedTrace<'t> {
    /// The trace.
    pub trace: &'t Trace,
    /// Per message, per block (a string-content message has one entry).
    pub messages: MessageCounts,
    /// Characters of each message's compact JSON as recorded.
    pub message_chars: Vec<u64>,
    /// Per prompt version: its tools.
    pub tools: Vec<Vec<BlockCount>>,
    /// Per prompt version: its system blocks, then the hidden prefix when
    /// the trace has one.
    pub system: Vec<Vec<BlockCount>>,
    /// Per prompt version: the system blocks as sent (with the hidden-prefix
    /// stand-in appended when the trace has one).
    pub system_blocks: Vec<Vec<ContentBlock>>,
    /// The recall tool's definition and count (added under the ledger).
    pub recall_tool: (Arc<ToolDefinition>, BlockCount),
    /// The fitted calibration (factor 1 when off or nothing to fit).
    pub calibration: TraceCalibration,
    /// Calibrated content tokens of `messages[..k]`, for k in 0..=len.
    pub cumulative_tokens: Vec<u64>,
    /// What the record reveals of the provider's cache around a hidden
    /// prefix (Claude Code transcripts), when calibration is on.
    pub hidden_cache: Option<HiddenCache>,
    /// Per call, the TTL its record resolves to, for a cache policy whose
    /// TTL is the recorded one ([`tracecost_policy::recorded_ttls`]).
    pub recorded_ttls: Vec<tracecost_engine::wire::Ttl>,
    /// Per call: for a request sent without the client's markers (an
    /// advisor's sub-inference), the tokens it carried beyond the history
    /// it follows ([`PreparedTrace::read_unmarked`]); `None` otherwise.
    pub unmarked: Vec<Option<u64>>,
    /// Tool results the record shows cleared without saying which, as
    /// `(history length from which on, tool_use id)` in call order (see
    /// [`PreparedTrace::infer_clears`]); replayed by the `recorded`
    /// compaction beside the clears the transcript wrote.
    pub inferred_clears: Vec<(usize, Arc<str>)>,
    /// Per call, how many leading messages of its request have their
    /// reasoning dropped by the API: the messages before its latest user
    /// message, for a model that does not keep earlier turns' reasoning
    /// ([`ModelPrice::keeps_earlier_reasoning`]); 0 otherwise. Those
    /// thinking blocks are sent and not billed, under every config.
    pub reasoning_cut: Vec<usize>,
    /// Per call, the older prefix its recorded read fell back to, where it
    /// did ([`recorded_fallbacks`]); empty when calibration is off.
    pub recorded_fallbacks: Vec<Option<HeldPrefix>>,
    /// The ledger every replay of this trace records into: handles are a
    /// pure function of the result, so they are derived once per trace.
    pub ledger: std::sync::Arc<tracecost_engine::ledger::InMemoryLedger>,
    /// The stubs made for that ledger, shared by every replay of the trace
    /// (a stub is a pure function of its result).
    pub stubs: std::sync::Arc<tracecost_engine::rewrite::StubCache>,
    /// Token counts of blocks made during replays (stubs), shared by every
    /// replay of the trace. Keyed by address, and holding each block so
    /// that the address names it while the trace is prepared.
    made_counts: std::sync::Mutex<
        std::collections::HashMap<
            usize,
            (Arc<ContentBlock>, BlockCount),
            tracecost_cost::tokens::FastBuild,
        >,
    >,
    /// Counts of the history's blocks by address (the trace is immutable
    /// while prepared, so an address names one block).
    by_address: BlocksByAddress,
}

impl<'t> PreparedTrace<'t> {
    /// The count of `block`, a block made during a replay (a stub): counted
    /// once for every replay of the trace when it is one of the ledger's
    /// stubs, which every replay shares ([`PreparedTrace::stubs`]). Any
    /// other (a peer's cleared result, made by its run and let go with it)
    /// is counted and not kept: holding it here would keep every run's
    /// stubs until the trace is done.
    pub fn count_made(&self, memo: &TokenMemo, block: &Arc<ContentBlock>) -> BlockCount {
        let shared = match block.kind() {
            BlockKind::ToolResult { tool_use_id, .. } => self.stubs.holds(tool_use_id, block),
            _ => false,
        };
        if !shared {
            return count_block(memo, block);
        }
        let addr = Arc::as_ptr(block) as usize;
        let lock = || self.made_counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, c)) = lock().get(&addr) {
            return *c;
        }
        let c = count_block(memo, block);
        lock().entry(addr).or_insert_with(|| (block.clone(), c)).1
    }

    /// Counts every distinct block of `trace` (in parallel, each once) and
    /// fits the calibration when `calibrate_auto` and usage was recorded.
    pub fn new(
        trace: &'t Trace,
        memo: &TokenMemo,
        price: &ModelPrice,
        calibrate_auto: bool,
    ) -> Self {
        // One parallel pass over the distinct texts; later lookups hit the memo.
        let mut texts: Vec<Cow<'_, str>> = Vec::new();
        for m in &trace.messages {
            match m.content() {
                Content::Text(t) => texts.push(Cow::Borrowed(&**t)),
                Content::Blocks(bs) => texts.extend(bs.iter().map(|b| block_token_text(b).0)),
            }
        }
        let refs: Vec<&str> = texts.iter().map(|c| &**c).collect();
        memo.count_all(&refs);
        drop(refs);
        drop(texts);

        let messages: MessageCounts = trace
            .messages
            .iter()
            .map(|m| message_counts(memo, m))
            .collect();
        let message_chars = trace
            .messages
            .iter()
            .map(|m| m.to_json().chars().count() as u64)
            .collect();
        let hidden = (trace.hidden_prefix_tokens > 0)
            .then(|| hidden_prefix_block(trace.hidden_prefix_tokens));
        let mut tools = Vec::new();
        let mut system = Vec::new();
        let mut system_blocks = Vec::new();
        for p in &trace.prompts {
            tools.push(p.tools.iter().map(|t| count_tool(memo, t)).collect());
            let mut blocks = p.system.clone();
            let mut counts: Vec<BlockCount> = blocks
                .iter()
                .map(|b| BlockCount {
                    scale: Scale::Prefix,
                    ..count_block(memo, b)
                })
                .collect();
            if let Some((block, count)) = &hidden {
                blocks.push(block.clone());
                counts.push(*count);
            }
            system.push(counts);
            system_blocks.push(blocks);
        }
        let recall = Arc::new(recall_tool_definition());
        let recall_count = count_tool(memo, &recall);
        let mut prepared = PreparedTrace {
            trace,
            messages,
            message_chars,
            tools,
            system,
            system_blocks,
            recall_tool: (recall, recall_count),
            calibration: TraceCalibration::default(),
            cumulative_tokens: Vec::new(),
            by_address: BlocksByAddress::default(),
            ledger: Default::default(),
            stubs: Default::default(),
            made_counts: Default::default(),
            hidden_cache: None,
            recorded_ttls: tracecost_policy::recorded_ttls(&trace.calls),
            inferred_clears: Vec::new(),
            unmarked: Vec::new(),
            reasoning_cut: reasoning_cuts(trace, price),
            recorded_fallbacks: Vec::new(),
        };
        prepared.unmarked = prepared.read_unmarked();
        if calibrate_auto {
            prepared.size_reasoning();
            prepared.calibration.content = prepared.fit_calibration(&price.framing);
            prepared.calibration.prefix_factor = prepared.fit_prefix(price);
            prepared.apportion_growth(&price.framing);
            prepared.refit_hidden(price);
            prepared.inferred_clears = prepared.infer_clears(memo, &price.framing);
            // Before the hidden prefix is read: a read that fell back
            // explains its miss, so it is no sign the hidden rest changed.
            if trace.provider == tracecost_engine::cache::ProviderKind::OpenAi {
                prepared.recorded_fallbacks =
                    recorded_fallbacks(trace, documented_hold_ms(trace, price));
            }
            prepared.hidden_cache = prepared.read_hidden_cache(price);
            prepared.calibration.idle = prepared.fit_automatic_idle(price);
        }
        prepared.index_history();
        prepared
    }

    /// `part`, a part of `whole`'s trace cut at a summarising compaction
    /// ([`tracecost_policy::autocompact`]), prepared from `whole`: the
    /// messages and calls it keeps are counted, calibrated and sized from
    /// the record exactly as in the whole trace (the record's sizes are of
    /// the conversation uncompacted, so nothing is fitted on them again);
    /// the summary and the instruction are counted. The record's view of a
    /// hidden prefix holds for the first part only (it is read call by call).
    pub fn part_of(
        whole: &PreparedTrace<'_>,
        part: &'t tracecost_policy::autocompact::Part,
        memo: &TokenMemo,
        price: &ModelPrice,
    ) -> Self {
        let trace = &part.trace;
        let messages: MessageCounts = trace
            .messages
            .iter()
            .zip(&part.messages_from)
            .map(|(m, from)| match from {
                Some(i) => whole.messages[*i].to_vec(),
                // The summary is written in the provider's tokens, at the
                // size the policy gives it: no factor scales it.
                None => message_counts(memo, m)
                    .into_iter()
                    .map(|c| BlockCount {
                        scale: Scale::Exact,
                        ..c
                    })
                    .collect(),
            })
            .collect();
        let message_chars = trace
            .messages
            .iter()
            .zip(&part.messages_from)
            .map(|(m, from)| match from {
                Some(i) => whole.message_chars[*i],
                None => m.to_json().chars().count() as u64,
            })
            .collect();
        let per_call = |v: &[Option<u64>]| -> Vec<Option<u64>> {
            part.calls_from
                .iter()
                .map(|c| c.and_then(|i| v.get(i).copied().flatten()))
                .collect()
        };
        let first = part.calls_from.first().copied().flatten() == Some(0);
        let mut prepared = PreparedTrace {
            trace,
            messages,
            message_chars,
            tools: whole.tools.clone(),
            system: whole.system.clone(),
            system_blocks: whole.system_blocks.clone(),
            recall_tool: whole.recall_tool.clone(),
            calibration: whole.calibration,
            cumulative_tokens: Vec::new(),
            by_address: BlocksByAddress::default(),
            ledger: Default::default(),
            stubs: Default::default(),
            made_counts: Default::default(),
            hidden_cache: if first {
                whole.hidden_cache.clone()
            } else {
                whole
                    .hidden_cache
                    .as_ref()
                    .map(|h| part_hidden_cache(h, part))
            },
            recorded_ttls: tracecost_policy::recorded_ttls(&trace.calls),
            inferred_clears: part_clears(whole, part),
            unmarked: per_call(&whole.unmarked),
            reasoning_cut: reasoning_cuts(trace, price),
            recorded_fallbacks: part
                .calls_from
                .iter()
                .map(|c| c.and_then(|i| whole.recorded_fallbacks.get(i).cloned().flatten()))
                .collect(),
        };
        prepared.index_history();
        prepared
    }

    /// The cumulative counts of the history and its blocks by address.
    fn index_history(&mut self) {
        let mut tokens = 0u64;
        self.cumulative_tokens.push(0);
        let mut by_address = Vec::with_capacity(self.messages.flat().len());
        for (i, (m, counts)) in self
            .trace
            .messages
            .iter()
            .zip(self.messages.iter())
            .enumerate()
        {
            tokens += counts
                .iter()
                .map(|c| c.tokens(&self.calibration, 0))
                .sum::<u64>();
            self.cumulative_tokens.push(tokens);
            let start = self.messages.start(i);
            for (j, b) in m.blocks().iter().take(counts.len()).enumerate() {
                // Past 4 billion blocks a block is counted again when asked.
                if let Ok(at) = u32::try_from(start + j) {
                    by_address.push((b as *const ContentBlock as usize, at));
                }
            }
        }
        self.by_address = BlocksByAddress::new(by_address);
    }

    /// Fits `recorded ≈ factor × estimated` on the growth of the prompt
    /// between consecutive calls with recorded input, same prompt version,
    /// and a growing history. Framing is taken out of the recorded growth
    /// so the factor only scales the tokenizer's counts.
    fn fit_calibration(&self, framing: &Framing) -> TokenCalibration {
        let mut pairs = Vec::new();
        for (ia, w) in self.trace.calls.windows(2).enumerate() {
            let [a, b] = w else { continue };
            let (Some(ra), Some(rb)) = (
                a.recorded_usage().and_then(|u| u.total_input()),
                b.recorded_usage().and_then(|u| u.total_input()),
            ) else {
                continue;
            };
            // Across a compaction read through, the recorded prompt
            // restarted from the summary: its change is no growth.
            if a.prompt != b.prompt || b.messages <= a.messages || b.compacted.is_some() {
                continue;
            }
            let new: Vec<&[BlockCount]> = self.messages.range(a.messages..b.messages).collect();
            // Reasoning sized from the record, and reasoning dropped, are
            // known in the provider's tokens: only the rest is fitted.
            let raw: u64 = new
                .iter()
                .flat_map(|m| m.iter())
                .filter(|c| c.scale != Scale::Exact)
                .map(|c| c.raw_tokens)
                .sum();
            let frame: u64 = new
                .iter()
                .map(|m| framing.per_message + framing.per_block * m.len() as u64)
                .sum();
            let r = self.reasoning_between(ia);
            let recorded =
                rb as i64 + r.dropped as i64 - ra as i64 - frame as i64 - r.kept_appended as i64;
            pairs.push((raw as i64, recorded));
        }
        calibrate(&pairs)
    }
}

impl PreparedTrace<'_> {
    /// The idle time of the automatic cache the trace's provider runs, on
    /// its recorded reads ([`fit_idle`]): OpenAI's (models before GPT-5.6,
    /// not held a day by default), where a read after more than in-memory
    /// retention's hour shows extended retention (24 hours), and Gemini's,
    /// bounded by the same hour (Google documents none).
    fn fit_automatic_idle(&self, price: &ModelPrice) -> Option<IdleFit> {
        use tracecost_cost::automatic_cache::{DEFAULT_IDLE_MS, EXTENDED_MS, MAX_IN_MEMORY_MS};
        use tracecost_engine::cache::ProviderKind;
        let fit = |max_ms| {
            fit_idle(
                &self.trace.calls,
                price.min_cacheable_tokens,
                DEFAULT_IDLE_MS,
                max_ms,
            )
        };
        match self.trace.provider {
            ProviderKind::OpenAi if !price.breakpoint_cache && !price.extended_cache_only => {
                fit(EXTENDED_MS).map(|f| IdleFit {
                    idle_ms: if f.idle_ms > MAX_IN_MEMORY_MS {
                        EXTENDED_MS
                    } else {
                        f.idle_ms
                    },
                    ..f
                })
            }
            ProviderKind::Google => fit(MAX_IN_MEMORY_MS),
            _ => None,
        }
    }

    /// The count of a block of this trace's history, found by address.
    pub fn count_of(&self, block: &ContentBlock) -> Option<BlockCount> {
        let at = self.by_address.get(block)?;
        self.messages.flat().get(at as usize).copied()
    }

    /// Calibrated tokens of `history` when it is a prefix of this trace's
    /// history, with `per_block` and `per_message` framing.
    pub fn prefix_tokens(
        &self,
        history: &[Message],
        per_block: u64,
        per_message: u64,
    ) -> Option<u64> {
        if !std::ptr::eq(history.as_ptr(), self.trace.messages.as_ptr()) {
            return None;
        }
        let n = history.len();
        Some(
            self.cumulative_tokens.get(n)?
                // Blocks in `messages[..n]` (string content counts as one).
                + per_block * self.messages.blocks_before(n)? as u64
                + per_message * n as u64,
        )
    }
}

/// Per call of `trace`, the messages of its request whose reasoning the
/// API drops ([`PreparedTrace::reasoning_cut`]): those before the latest
/// message that opens a user turn, when `price`'s model keeps no earlier
/// turn's reasoning.
fn reasoning_cuts(trace: &Trace, price: &ModelPrice) -> Vec<usize> {
    if price.keeps_earlier_reasoning {
        return vec![0; trace.calls.len()];
    }
    let mut cut = 0;
    let mut seen = 0;
    trace
        .calls
        .iter()
        .map(|c| {
            let end = c.messages.min(trace.messages.len());
            if let Some(i) = trace.messages[seen.min(end)..end]
                .iter()
                .rposition(opens_user_turn)
            {
                cut = seen.min(end) + i;
            }
            seen = seen.max(end);
            cut.min(end)
        })
        .collect()
}

/// Whether `m` opens a turn of the user's: a user message, not tool
/// results, not a developer or system message sent as user text
/// ([`tracecost_trace::SOURCE_ROLE`]), not input joining a running turn
/// ([`tracecost_trace::WITHIN_TURN`]). What ends the turn whose reasoning an
/// OpenAI model before GPT-5.6 drops.
pub fn opens_user_turn(m: &Message) -> bool {
    if m.role() != tracecost_engine::message::Role::User
        || m.fields().get(tracecost_trace::SOURCE_ROLE).is_some()
        || m.fields()
            .get(tracecost_trace::WITHIN_TURN)
            .is_some_and(|v| v.get() == "true")
    {
        return false;
    }
    match m.content() {
        Content::Text(_) => true,
        Content::Blocks(bs) => bs
            .iter()
            .any(|b| !matches!(b.kind(), BlockKind::ToolResult { .. })),
    }
}

/// Whether `b` is a reasoning block (sent back, dropped where the API
/// drops earlier turns' reasoning).
pub fn is_reasoning(b: &ContentBlock) -> bool {
    matches!(b.kind(), BlockKind::Thinking | BlockKind::RedactedThinking)
}

fn message_counts(memo: &TokenMemo, m: &Message) -> Vec<BlockCount> {
    match m.content() {
        Content::Text(t) => {
            // The block the string stands for, written from the message's
            // own member (no second copy of its bytes is kept).
            let mut json = String::from(r#"{"type":"text","text":"#);
            match m.fields().value("content") {
                Some(v) => v.write_json(&mut json),
                None => json.push_str("\"\""),
            }
            json.push('}');
            vec![BlockCount {
                key: ContentHash::of(json.as_bytes()),
                raw_tokens: memo.count(t),
                scale: Scale::Content,
            }]
        }
        Content::Blocks(bs) => bs.iter().map(|b| count_block(memo, b)).collect(),
    }
}

/// The clears the record implies in `whole` (keyed by the history length
/// from which on they hold), moved to `part`'s history: a clear from a
/// call the part keeps holds from that call on in the part; one from
/// before the part began names a result the part no longer sends.
fn part_clears(
    whole: &PreparedTrace<'_>,
    part: &tracecost_policy::autocompact::Part,
) -> Vec<(usize, Arc<str>)> {
    let at: HashMap<usize, usize> = part
        .calls_from
        .iter()
        .zip(&part.trace.calls)
        .filter_map(|(from, c)| Some((whole.trace.calls.get((*from)?)?.messages, c.messages)))
        .collect();
    whole
        .inferred_clears
        .iter()
        .filter_map(|(from, id)| Some((*at.get(from)?, id.clone())))
        .collect()
}

/// What the record says of the hidden prefix at each of a later part's
/// calls: the same facts of the provider's side as at the whole trace's
/// call it is (another session's copy warm or cold, the own rest changed),
/// the summarising call, which recorded nothing, knowing none and sending
/// the version in force.
fn part_hidden_cache(
    whole: &HiddenCache,
    part: &tracecost_policy::autocompact::Part,
) -> HiddenCache {
    let mut version = 0;
    let (calls, versions) = part
        .calls_from
        .iter()
        .map(|from| match from {
            Some(i) => {
                version = whole.version.get(*i).copied().unwrap_or(version);
                (
                    whole.calls.get(*i).copied().unwrap_or(SharedState::Unknown),
                    version,
                )
            }
            None => (SharedState::Unknown, version),
        })
        .unzip();
    HiddenCache {
        boundaries: whole.boundaries.clone(),
        calls,
        version: versions,
        own_keys: whole.own_keys.clone(),
    }
}

/// The history's blocks by address, each with its place among
/// [`MessageCounts::flat`]: two lists sorted by address, 12 bytes a block
/// (a hash map of the same held 32 to 36 bytes a block of a long trace,
/// with its spare room), read by binary search.
#[derive(Debug, Default)]
struct BlocksByAddress {
    addresses: Vec<usize>,
    places: Vec<u32>,
}

impl BlocksByAddress {
    fn new(mut blocks: Vec<(usize, u32)>) -> Self {
        blocks.sort_unstable_by_key(|&(a, _)| a);
        // Two blocks never share an address; a repeat would be the same
        // block listed twice, which keeps one place.
        blocks.dedup_by_key(|&mut (a, _)| a);
        let (addresses, places) = blocks.into_iter().unzip();
        BlocksByAddress { addresses, places }
    }

    /// The place of `block`, when it is one of the history's.
    fn get(&self, block: &ContentBlock) -> Option<u32> {
        let i = self
            .addresses
            .binary_search(&(block as *const ContentBlock as usize))
            .ok()?;
        self.places.get(i).copied()
    }
}

#[cfg(test)]
mod made_count_tests {
    use super::*;
    use tracecost_cost::pricing::Pricing;
    use tracecost_cost::tokens::CharsPerToken;
    use tracecost_engine::rewrite::{CompactionPolicy, Compactor};

    fn trace() -> Trace {
        let json = r#"{"format":"tracecost.trace/v1","name":"t","provider":"anthropic","model":"claude-sonnet-4-5","messages":[{"role":"user","content":"Go."},{"role":"assistant","content":[{"type":"tool_use","id":"u1","name":"read","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"u1","content":"a long enough result"}]}],"calls":[{"messages":1},{"messages":3}]}"#;
        tracecost_trace::load_str(json, "t.json")
            .expect("trace")
            .traces
            .remove(0)
    }

    fn memo() -> TokenMemo {
        TokenMemo::new(Arc::new(CharsPerToken(4.0)))
    }

    fn prepare<'t>(trace: &'t Trace, memo: &TokenMemo) -> PreparedTrace<'t> {
        let pricing = Pricing::builtin();
        PreparedTrace::new(trace, memo, pricing.lookup(&trace.model).unwrap(), true)
    }

    /// Every block of the history is found by address with its own count;
    /// an equal block that is not the history's is not.
    #[test]
    fn history_blocks_are_found_by_address_and_no_other() {
        let (trace, memo) = (trace(), memo());
        let prepared = prepare(&trace, &memo);
        let blocks: Vec<&ContentBlock> = trace.messages.iter().flat_map(|m| m.blocks()).collect();
        assert_eq!(blocks.len(), 2);
        for b in &blocks {
            assert_eq!(prepared.count_of(b), Some(count_block(&memo, b)));
        }
        let copy = blocks[1].clone();
        assert_eq!(prepared.count_of(&copy), None);
    }

    /// A stub made by one run (a peer's cleared result) is counted as any
    /// block and not held past its run; the ledger's stubs, shared by every
    /// run of the trace, are counted once and held with their count.
    #[test]
    fn only_the_ledgers_shared_stubs_are_held_with_their_counts() {
        let (trace, memo) = (trace(), memo());
        let prepared = prepare(&trace, &memo);
        let result = &trace.messages[2].blocks()[0];

        let own = Arc::new(result.with_tool_result_text("[cleared]").unwrap());
        assert_eq!(prepared.count_made(&memo, &own), count_block(&memo, &own));
        assert_eq!(
            Arc::strong_count(&own),
            1,
            "a run's own stub is let go with it"
        );

        let mut compactor = Compactor::with_stub_cache(
            prepared.ledger.clone(),
            CompactionPolicy {
                size_threshold: 0,
                keep_last_n: 0,
            },
            prepared.stubs.clone(),
        );
        let id: Arc<str> = "u1".into();
        let (_, shared) = compactor
            .stub_for(&trace.messages[..3], &id, result)
            .expect("stub");
        let held = Arc::strong_count(&shared);
        assert_eq!(
            prepared.count_made(&memo, &shared),
            count_block(&memo, &shared)
        );
        assert_eq!(Arc::strong_count(&shared), held + 1, "held with its count");
        assert_eq!(
            prepared.count_made(&memo, &shared),
            count_block(&memo, &shared)
        );
        assert_eq!(Arc::strong_count(&shared), held + 1, "held once");
    }
}

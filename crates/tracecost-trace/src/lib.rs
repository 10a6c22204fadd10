//! The trace model of tracecost: recorded agent conversations in its
//! canonical format, read and written.
//!
//! A trace is one lossless, append-only message history plus the list of
//! model calls made over it. Each call says how many history messages it
//! sent, so the history is stored once however many calls there were. See
//! `docs/trace-format.md` for the file format.
//!
//! This crate owns the model ([`Trace`], [`Call`], [`Prompt`],
//! [`RecordedUsage`], [`RecordedModifiers`]), loading and validating trace
//! files ([`Loader`], [`load_str`]), writing them ([`TraceWriter`],
//! [`to_json`]) and [`progress`], how long steps report how far they
//! have got. It stands on the engine's message model alone: it must not depend on an importer
//! (`tracecost-import`), a generator (`tracecost-gen`) or anything that
//! prices, replays or reports (the root crate); `tests/cli/crates.rs` at
//! the workspace root holds its dependencies to a list.

pub mod lines;
mod load;
pub mod progress;
mod write;

pub use load::{
    ABSURD_TOKENS, KnownLines, LineDigest, LineOrigin, LoadedTraces, Loader, SkipLine, TraceError,
    UTF8_BOM, Warning, is_jsonl_name, line_digest, line_hash, load_str,
};
pub use write::{TraceWriter, to_json, to_json_line, traces_to_json};

use tracecost_engine::cache::ProviderKind;
use tracecost_engine::message::{ContentBlock, Message, ToolDefinition};
use tracecost_engine::wire::Marker;

/// The `format` tag of a canonical trace file.
pub const TRACE_FORMAT: &str = "tracecost.trace/v1";

/// Tokens of one image or document block, whatever its encoded size:
/// Anthropic's vision documentation puts an image of up to 1.15 megapixels
/// at about 1,600 tokens, billed by pixels, not by base64 length. Here, with
/// the model, because both an importer's size estimate and the replay's
/// token count read it.
pub const MEDIA_TOKENS: u64 = 1_600;

/// What a Claude Code session ran when no record tells the TTL (a session
/// generated to look like one): no compaction of tool results, and Claude
/// Code's own cache markers (`policy::CacheKind::ClaudeCode`) with the
/// API's default TTL. Here, with the model, because the Claude Code
/// importer and the generators both write it.
pub const CLAUDE_CODE_STATUS_QUO: &str = "off+claude-code:ttl=5m";

/// A message's member naming the role it had in the source where the
/// trace's role (user or assistant) differs: an OpenAI developer or system
/// message in mid-history is sent as user text, yet the API does not take
/// it for the user's (a new user message, not a developer one, starts the
/// turn before which earlier models drop their reasoning).
pub const SOURCE_ROLE: &str = "source_role";

/// A user message's member, `true` when it joined a turn already running
/// (Codex's input typed while the model works, sent with that turn's id):
/// it starts no turn, so earlier models keep the turn's reasoning.
pub const WITHIN_TURN: &str = "within_turn";

/// The system prompt and tool manifest in force from some call on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Prompt {
    /// System blocks (text).
    pub system: Vec<ContentBlock>,
    /// Tool definitions, in the order sent.
    pub tools: Vec<ToolDefinition>,
}

/// Usage as the provider recorded it; every field is optional because
/// sources record different subsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordedUsage {
    /// Uncached input tokens (after the last breakpoint).
    pub input_tokens: Option<u64>,
    /// Tokens written to the cache (5m + 1h).
    pub cache_creation_input_tokens: Option<u64>,
    /// Of those, written with a 5-minute TTL.
    pub ephemeral_5m_input_tokens: Option<u64>,
    /// Of those, written with a 1-hour TTL.
    pub ephemeral_1h_input_tokens: Option<u64>,
    /// Tokens read from the cache.
    pub cache_read_input_tokens: Option<u64>,
    /// Output tokens.
    pub output_tokens: Option<u64>,
    /// Of the output tokens, those the model spent reasoning (OpenAI's
    /// `reasoning_tokens`, Codex's `reasoning_output_tokens`): the size of
    /// the reasoning items the response returned, which later requests
    /// send back (and the API may drop).
    pub reasoning_tokens: Option<u64>,
    /// The price modifiers the provider says applied to the request.
    pub modifiers: RecordedModifiers,
}

/// The price modifiers a response's usage says applied to its request:
/// each changes what every token of it cost, at the model's documented
/// rate (or not at all where the model has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RecordedModifiers {
    /// Served in fast mode (Anthropic `speed: "fast"`).
    pub fast: bool,
    /// Served in one geography at the regional rate (Anthropic
    /// `inference_geo` naming a geography: not `global`, and not
    /// `not_available`, which models without the parameter record).
    pub regional: bool,
    /// Served at the Batch API's rates: Anthropic's batch tier
    /// (`service_tier: "batch"`) and OpenAI's flex tier, which OpenAI's
    /// flex processing guide prices "at Batch API rates" (one rule, so one
    /// flag). Anthropic's priority tier is billed by a capacity
    /// commitment, not per token, so it is priced as standard.
    pub batch: bool,
}

impl RecordedModifiers {
    /// The modifiers of an Anthropic `usage` object's `speed`,
    /// `inference_geo` and `service_tier` values (each `None` when absent).
    pub fn from_anthropic(speed: Option<&str>, geo: Option<&str>, tier: Option<&str>) -> Self {
        Self {
            fast: speed == Some("fast"),
            regional: geo.is_some_and(|g| !matches!(g, "" | "global" | "not_available")),
            batch: tier == Some("batch"),
        }
    }

    /// The modifiers of an OpenAI response's `service_tier` (`None` when
    /// absent): `flex` is billed at the Batch API's rates; `default`,
    /// `auto` and `scale` (billed by a commitment) at the standard rate;
    /// `priority`, whose prices OpenAI lists per model, is priced as
    /// standard too until the price table holds them (the importers count
    /// such calls, [`RecordedModifiers::is_openai_priority`]).
    pub fn from_openai(tier: Option<&str>) -> Self {
        Self {
            batch: tier == Some("flex"),
            ..Self::default()
        }
    }

    /// Whether an OpenAI `service_tier` is the priority tier, priced as
    /// standard ([`RecordedModifiers::from_openai`]).
    pub fn is_openai_priority(tier: Option<&str>) -> bool {
        tier == Some("priority")
    }

    /// Whether no modifier applied.
    pub fn is_standard(&self) -> bool {
        *self == Self::default()
    }
}

impl RecordedUsage {
    /// Total prompt tokens (uncached + written + read), when the input part
    /// is known.
    pub fn total_input(&self) -> Option<u64> {
        Some(
            self.input_tokens?
                + self.cache_creation_input_tokens.unwrap_or(0)
                + self.cache_read_input_tokens.unwrap_or(0),
        )
    }

    /// Whether the record counts cache writes (in total or by TTL). A
    /// record without the field (Codex's `token_count`, which has input and
    /// cached input only) cannot tell a written token from an uncached
    /// one: it counts both as input.
    pub fn counts_writes(&self) -> bool {
        self.cache_creation_input_tokens.is_some()
            || self.ephemeral_5m_input_tokens.is_some()
            || self.ephemeral_1h_input_tokens.is_some()
    }
}

/// One model call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Call {
    /// How many history messages the request sent (a prefix of the history).
    pub messages: usize,
    /// When the request started, in milliseconds since the Unix epoch.
    pub start_ms: Option<u64>,
    /// The model, when it differs from the trace's default.
    pub model: Option<String>,
    /// Index into [`Trace::prompts`] of the system prompt and tools sent.
    pub prompt: usize,
    /// The cache markers the recorded request carried, if known.
    pub markers: Option<Vec<Marker>>,
    /// The usage the provider recorded, if known. Boxed: a call without
    /// it (a trace written without usage, a long generated loop) then
    /// spends 8 bytes on it rather than 112, and a loaded trace is
    /// mostly its calls and messages.
    pub usage: Option<Box<RecordedUsage>>,
    /// tool_use ids whose results the client cleared in place just before
    /// this call (Claude Code's microcompaction): from this call on it sent
    /// them as a placeholder. Replayed by the `recorded` compaction.
    pub cleared: Vec<String>,
    /// The summarising compaction the client ran just before this call,
    /// in a conversation read whole across it (its history does not
    /// restart here): what the record says of it. Replayed by
    /// `claude-code-autocompact`.
    pub compacted: Option<Box<RecordedCompaction>>,
}

impl Call {
    /// The usage the provider recorded, if known, by value.
    pub fn recorded_usage(&self) -> Option<RecordedUsage> {
        self.usage.as_deref().copied()
    }
}

/// A summarising compaction as Claude Code's record shows it (its
/// `compact_boundary` line's `compactMetadata`, the summary's own line).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordedCompaction {
    /// Asked for (`/compact`, trigger `manual`) rather than run at the
    /// client's threshold (`auto`).
    pub manual: bool,
    /// The context before it, in the client's count (`preTokens`).
    pub pre_tokens: Option<u64>,
    /// The context it left (`postTokens`): the summary with what was
    /// written again after it (kept messages, files read again).
    pub post_tokens: Option<u64>,
    /// The summary's text, as the line that carried it holds it.
    pub summary: Option<String>,
}

/// One recorded conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// Short name (used in reports and file names).
    pub name: String,
    /// What the conversation was.
    pub description: String,
    /// The API it was sent to.
    pub provider: ProviderKind,
    /// The default model.
    pub model: String,
    /// The policy that actually ran, as a config string
    /// (`COMPACTION+CACHE`), when the source tells: a Claude Code session
    /// ran Claude Code's own caching. Savings are measured against it.
    /// Without it, the status quo is the recorded markers, if any.
    pub status_quo: Option<String>,
    /// The project (repository, workspace) the conversation belongs to,
    /// when the source tells; fleets are broken down by it.
    pub project: Option<String>,
    /// The account (organization, workspace, API key) whose prompt cache
    /// the conversation used, when the source tells. Conversations of one
    /// account share the provider's cache: replayed together, their calls
    /// meet one simulated cache.
    pub account: Option<String>,
    /// The session (conversation) this trace is one part of, when it is one
    /// of several: a continuation after the context was compacted, or a
    /// subagent's conversation. A fleet counts the traces of one session
    /// once.
    pub session: Option<String>,
    /// The file the trace was read from, as given (not part of the trace
    /// file: set by whatever read it). Two traces of the same name from
    /// different files are different conversations, and a fleet keeps them
    /// apart by it.
    pub source: Option<String>,
    /// Tokens of system prompt and tool definitions that the source did not
    /// record but whose size is known from usage (Claude Code transcripts).
    pub hidden_prefix_tokens: u64,
    /// Prompt versions; calls refer to them by index. Never empty.
    pub prompts: Vec<Prompt>,
    /// The lossless history.
    pub messages: Vec<Message>,
    /// The calls, in order.
    pub calls: Vec<Call>,
}

impl Trace {
    /// The history a call sent.
    pub fn history_of(&self, call: &Call) -> &[Message] {
        &self.messages[..call.messages.min(self.messages.len())]
    }

    /// The prompt (system and tools) a call sent.
    pub fn prompt_of(&self, call: &Call) -> &Prompt {
        // Loading guarantees the index is valid and `prompts` is non-empty.
        self.prompts
            .get(call.prompt)
            .or_else(|| self.prompts.first())
            .unwrap_or(&EMPTY_PROMPT)
    }

    /// The model a call used.
    pub fn model_of<'a>(&'a self, call: &'a Call) -> &'a str {
        call.model.as_deref().unwrap_or(&self.model)
    }

    /// Whether any call carries recorded cache markers.
    pub fn has_markers(&self) -> bool {
        self.calls.iter().any(|c| c.markers.is_some())
    }

    /// Whether every call has a start time.
    pub fn has_timestamps(&self) -> bool {
        !self.calls.is_empty() && self.calls.iter().all(|c| c.start_ms.is_some())
    }
}

/// What choosing, checking and naming a trace's configs read of it: who it
/// is (its name, session, file and account), what it was sent to, the
/// policy that ran, and whether its requests carried cache markers. A whole
/// [`Trace`] tells it, and so does an outline a plan keeps of a trace whose
/// content waits on disk; code that needs no more than this takes either.
pub trait TraceFacts {
    /// [`Trace::name`].
    fn name(&self) -> &str;
    /// [`Trace::session`].
    fn session(&self) -> Option<&str>;
    /// [`Trace::source`].
    fn source(&self) -> Option<&str>;
    /// [`Trace::account`].
    fn account(&self) -> Option<&str>;
    /// [`Trace::provider`].
    fn provider(&self) -> ProviderKind;
    /// [`Trace::model`].
    fn model(&self) -> &str;
    /// [`Trace::status_quo`].
    fn status_quo(&self) -> Option<&str>;
    /// [`Trace::has_markers`].
    fn has_markers(&self) -> bool;
}

impl TraceFacts for Trace {
    fn name(&self) -> &str {
        &self.name
    }
    fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }
    fn source(&self) -> Option<&str> {
        self.source.as_deref()
    }
    fn account(&self) -> Option<&str> {
        self.account.as_deref()
    }
    fn provider(&self) -> ProviderKind {
        self.provider
    }
    fn model(&self) -> &str {
        &self.model
    }
    fn status_quo(&self) -> Option<&str> {
        self.status_quo.as_deref()
    }
    fn has_markers(&self) -> bool {
        Trace::has_markers(self)
    }
}

impl<T: TraceFacts + ?Sized> TraceFacts for &T {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn session(&self) -> Option<&str> {
        (**self).session()
    }
    fn source(&self) -> Option<&str> {
        (**self).source()
    }
    fn account(&self) -> Option<&str> {
        (**self).account()
    }
    fn provider(&self) -> ProviderKind {
        (**self).provider()
    }
    fn model(&self) -> &str {
        (**self).model()
    }
    fn status_quo(&self) -> Option<&str> {
        (**self).status_quo()
    }
    fn has_markers(&self) -> bool {
        (**self).has_markers()
    }
}

static EMPTY_PROMPT: Prompt = Prompt {
    system: Vec::new(),
    tools: Vec::new(),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_without_usage_spends_a_pointer_on_it() {
        // A long trace holds one call for every two messages: the recorded
        // usage inline (112 bytes, `None` or not) made a call 232 bytes.
        assert!(
            std::mem::size_of::<Call>() <= 128,
            "{}",
            std::mem::size_of::<Call>()
        );
    }

    #[test]
    fn a_call_s_recorded_usage_reads_back_by_value() {
        let usage = RecordedUsage {
            input_tokens: Some(3),
            output_tokens: Some(5),
            ..RecordedUsage::default()
        };
        let call = Call {
            usage: Some(Box::new(usage)),
            ..Call::default()
        };
        assert_eq!(call.recorded_usage(), Some(usage));
        assert_eq!(Call::default().recorded_usage(), None);
    }
}

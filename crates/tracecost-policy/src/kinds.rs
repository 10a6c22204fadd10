//! The names of the policies, what each is, and the defaults of their
//! parameters: the one place the command line's values, its help and the
//! config-string grammar take them from.

use tracecost_engine::cache::ManifestPosition;
use tracecost_engine::wire::Ttl;

/// Ledger: results longer than this many characters are compacted.
pub const DEFAULT_LEDGER_THRESHOLD: u64 = 8000;
/// Ledger: the last N tool results are never compacted.
pub const DEFAULT_LEDGER_KEEP_LAST: usize = 2;
/// TTL of the markers a cache policy places.
pub const DEFAULT_TTL: Ttl = Ttl::FiveMinutes;
/// Claude Code's clearing: the tokens of tool results it keeps whole. The
/// three `microcompact_boundary` lines of real transcripts at hand counted
/// 58,573, 78,208 and 65,408 tokens before (`preTokens`, the results'
/// tokens: the prompts were larger) and kept 37,772, 39,673 and 38,396
/// (less `tokensSaved`): the most recent results, under 40,000.
pub const DEFAULT_CLAUDE_CODE_KEEP_TOKENS: u64 = 40_000;
/// Claude Code's clearing: it clears only when that frees at least this
/// many tokens (the same lines saved 20,801, 38,535 and 27,012).
pub const DEFAULT_CLAUDE_CODE_AT_LEAST: u64 = 20_000;
/// The Agents SDK's `ToolOutputTrimmer`: user messages, from the end, whose
/// items are kept whole (`recent_turns`).
pub const DEFAULT_AGENTS_TRIM_TURNS: usize = 2;
/// `ToolOutputTrimmer`: older outputs over this many characters are trimmed
/// (`max_output_chars`).
pub const DEFAULT_AGENTS_TRIM_MAX: u64 = 500;
/// `ToolOutputTrimmer`: characters kept as a trimmed output's preview
/// (`preview_chars`).
pub const DEFAULT_AGENTS_TRIM_PREVIEW: u64 = 200;
/// Claude Code's autocompact: the context size (tokens) past which it
/// summarises. Claude Code compacts at its effective window less a buffer:
/// `window − min(max output, 20,000) − 13,000` (`AUTOCOMPACT_BUFFER_TOKENS`,
/// `MAX_OUTPUT_TOKENS_FOR_SUMMARY`), 167,000 on the 200,000-token window.
/// The records agree: the 22 `compact_boundary` lines with `trigger:
/// "auto"` of 2.1.29 to 2.1.42 at hand record `preTokens` of 167,045 to
/// 174,247 (median 167,979: the threshold plus the call's growth past it);
/// the 4 of 2.1.226 166,612 to 213,002. Before 2.1.21 the buffer was
/// larger (155,207 to 176,700); `trigger=` sets another threshold.
pub const DEFAULT_AUTOCOMPACT_TRIGGER: u64 = 200_000 - 20_000 - 13_000;
/// Claude Code's autocompact: the tokens its summary is written in, at most
/// (`MAX_OUTPUT_TOKENS_FOR_SUMMARY`, the summary call's output cap). A
/// replay of a recorded compaction takes the recorded summary's own size.
pub const DEFAULT_AUTOCOMPACT_SUMMARY: u64 = 20_000;
/// Anthropic's server-side compaction (`compact_20260112`): the input
/// tokens at which it summarises, `trigger: {"type": "input_tokens",
/// "value": 150000}` by default (platform.claude.com, "Compaction at a
/// token threshold", its parameter table: trigger, default 150,000
/// tokens).
pub const DEFAULT_ANTHROPIC_COMPACT_TRIGGER: u64 = 150_000;
/// `compact_20260112`: the least trigger the API takes (the same table: it
/// must be at least 50,000 tokens).
pub const MIN_ANTHROPIC_COMPACT_TRIGGER: u64 = 50_000;
/// LangChain's `SummarizationMiddleware`: messages kept after the summary
/// (`keep=("messages", 20)`, `_DEFAULT_MESSAGES_TO_KEEP`, langchain 1.5.2).
pub const DEFAULT_LANGCHAIN_SUMMARIZE_KEEP: usize = 20;
/// `SummarizationMiddleware`: tokens of the messages its summarising call
/// reads, the last ones (`trim_tokens_to_summarize=4000`,
/// `_DEFAULT_TRIM_TOKEN_LIMIT`).
pub const DEFAULT_LANGCHAIN_SUMMARIZE_TRIM: u64 = 4000;
/// Native cache: where the tool manifest sits.
pub const DEFAULT_MANIFEST: ManifestPosition = ManifestPosition::Cached;

/// Which compaction policy, without its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompactionKind {
    /// Nothing is compacted.
    Off,
    /// The engine's tool-result ledger.
    Ledger,
    /// Anthropic's server-side `clear_tool_uses_20250919`.
    ClearToolUses,
    /// LangChain's `ClearToolUsesEdit` middleware.
    LangchainClear,
    /// Claude Code's microcompaction as a policy of its own.
    ClaudeCodeClear,
    /// The OpenAI Agents SDK's `ToolOutputTrimmer`.
    AgentsTrim,
    /// Claude Code's summarising autocompact.
    ClaudeCodeAutocompact,
    /// Anthropic's server-side compaction `compact_20260112`.
    AnthropicCompact,
    /// LangChain's `SummarizationMiddleware`.
    LangchainSummarize,
    /// OpenAI's Responses compaction (`compact_threshold`).
    OpenAiCompact,
    /// What the client cleared in place, as its record shows.
    Recorded,
}

impl CompactionKind {
    /// Whether the policy can run on `provider`'s API: Anthropic's
    /// server-side clearing and compaction only there, OpenAI's compaction
    /// only on OpenAI's, the others (client-side) on every provider.
    pub fn runs_on(self, provider: tracecost_engine::cache::ProviderKind) -> bool {
        use tracecost_engine::cache::ProviderKind;
        match self {
            CompactionKind::ClearToolUses | CompactionKind::AnthropicCompact => {
                provider == ProviderKind::Anthropic
            }
            CompactionKind::OpenAiCompact => provider == ProviderKind::OpenAi,
            _ => true,
        }
    }

    /// Every compaction policy, in the order they are listed.
    pub const ALL: [CompactionKind; 11] = [
        CompactionKind::Off,
        CompactionKind::Ledger,
        CompactionKind::ClearToolUses,
        CompactionKind::LangchainClear,
        CompactionKind::ClaudeCodeClear,
        CompactionKind::AgentsTrim,
        CompactionKind::ClaudeCodeAutocompact,
        CompactionKind::AnthropicCompact,
        CompactionKind::LangchainSummarize,
        CompactionKind::OpenAiCompact,
        CompactionKind::Recorded,
    ];

    /// The name in config strings and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            CompactionKind::Off => "off",
            CompactionKind::Ledger => "ledger",
            CompactionKind::ClearToolUses => "clear-tool-uses",
            CompactionKind::LangchainClear => "langchain-clear",
            CompactionKind::ClaudeCodeClear => "claude-code-clear",
            CompactionKind::AgentsTrim => "agents-trim",
            CompactionKind::ClaudeCodeAutocompact => "claude-code-autocompact",
            CompactionKind::AnthropicCompact => "anthropic-compact",
            CompactionKind::LangchainSummarize => "langchain-summarize",
            CompactionKind::OpenAiCompact => "openai-compact",
            CompactionKind::Recorded => "recorded",
        }
    }

    /// One line on what the policy does.
    pub fn about(self) -> &'static str {
        match self {
            CompactionKind::Off => "nothing is compacted",
            CompactionKind::Ledger => {
                "tracecost's ledger: stale large results become stubs, recallable"
            }
            CompactionKind::ClearToolUses => "Anthropic's server-side clear_tool_uses_20250919",
            CompactionKind::LangchainClear => "LangChain's ClearToolUsesEdit middleware",
            CompactionKind::ClaudeCodeClear => {
                "Claude Code's microcompaction: when the results sent whole pass keep-tokens + at-least, the oldest are cleared in place until keep-tokens remain"
            }
            CompactionKind::AgentsTrim => {
                "the OpenAI Agents SDK's ToolOutputTrimmer: before the last turns, large tool outputs cut to a preview"
            }
            CompactionKind::ClaudeCodeAutocompact => {
                "Claude Code's autocompact: past trigger tokens, a call of its own summarises the context, which restarts from the summary"
            }
            CompactionKind::AnthropicCompact => {
                "Anthropic's server-side compact_20260112: past trigger input tokens, a sampling step of its own summarises the context, which restarts from the compaction block"
            }
            CompactionKind::LangchainSummarize => {
                "LangChain's SummarizationMiddleware: past its trigger, a call of its own summarises the older messages, the last keep messages stay"
            }
            CompactionKind::OpenAiCompact => {
                "OpenAI's Responses compaction: past compact_threshold tokens, the server summarises the context into an encrypted item that replaces it"
            }
            CompactionKind::Recorded => {
                "what the client cleared in place, as recorded (Claude Code's microcompaction)"
            }
        }
    }

    /// The policy called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether a grid that names no compaction tries this one. Not
    /// `recorded`: it is what ran, which each trace's status quo replays.
    /// Not `agents-trim`: it is a filter of Agents SDK apps, and its window
    /// is the last user messages, which on another client's sessions are
    /// whatever that client sends as user messages (Codex's environment
    /// context, Claude Code's reminders and hook output), so its figures
    /// there are not what an app would pay; it runs when named. Not
    /// `claude-code-autocompact`: Claude Code's sessions ran it already
    /// (their status quo replays what it did), and on another client's
    /// sessions it adds summary calls that client never makes; it runs
    /// when named. Nor the other summarising policies: each is a choice of
    /// its client or API (their triggers are the team's own), and a sweep
    /// replays one history per trace; they run in `replay` and `check` when
    /// named.
    pub fn in_default_grid(self) -> bool {
        !matches!(
            self,
            CompactionKind::Recorded
                | CompactionKind::AgentsTrim
                | CompactionKind::ClaudeCodeAutocompact
                | CompactionKind::AnthropicCompact
                | CompactionKind::LangchainSummarize
                | CompactionKind::OpenAiCompact
        )
    }

    /// Whether this is one of the peers' strategies (trigger/keep/...).
    pub fn is_peer(self) -> bool {
        matches!(
            self,
            CompactionKind::ClearToolUses | CompactionKind::LangchainClear
        )
    }
}

/// Which cache policy, without its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CacheKind {
    /// No markers.
    None,
    /// The last tool and the last system block.
    System,
    /// The engine's history + manifest composition.
    Native,
    /// One rolling marker on the last block.
    Tail,
    /// The markers the recorded requests carried.
    Recorded,
    /// Claude Code's client policy.
    ClaudeCode,
    /// OpenAI's automatic cache.
    OpenAiAuto,
    /// Gemini's implicit cache.
    GeminiImplicit,
    /// Bedrock Converse's cache points.
    BedrockCachePoint,
    /// OpenAI's explicit breakpoints (GPT-5.6 and later).
    OpenAiBreakpoints,
    /// Gemini's explicit cached contents.
    GeminiExplicit,
}

impl CacheKind {
    /// Every cache policy, in the order they are listed.
    pub const ALL: [CacheKind; 11] = [
        CacheKind::None,
        CacheKind::System,
        CacheKind::Native,
        CacheKind::Tail,
        CacheKind::Recorded,
        CacheKind::ClaudeCode,
        CacheKind::OpenAiAuto,
        CacheKind::OpenAiBreakpoints,
        CacheKind::GeminiImplicit,
        CacheKind::GeminiExplicit,
        CacheKind::BedrockCachePoint,
    ];

    /// The name in config strings and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            CacheKind::None => "none",
            CacheKind::System => "system",
            CacheKind::Native => "native",
            CacheKind::Tail => "tail",
            CacheKind::Recorded => "recorded",
            CacheKind::ClaudeCode => "claude-code",
            CacheKind::OpenAiAuto => "openai-auto",
            CacheKind::GeminiImplicit => "gemini-implicit",
            CacheKind::BedrockCachePoint => "bedrock-cachepoint",
            CacheKind::OpenAiBreakpoints => "openai-breakpoints",
            CacheKind::GeminiExplicit => "gemini-explicit",
        }
    }

    /// One line on what the policy does.
    pub fn about(self) -> &'static str {
        match self {
            CacheKind::None => "no cache markers",
            CacheKind::System => "markers on the last tool and the last system block",
            CacheKind::Native => "the engine's history + manifest composition",
            CacheKind::Tail => "one rolling marker on the last block",
            CacheKind::Recorded => "the markers the recorded requests carried",
            CacheKind::ClaudeCode => "Claude Code's own: tools, system and a rolling marker",
            CacheKind::OpenAiAuto => "OpenAI's automatic cache: no markers, every prompt cached",
            CacheKind::GeminiImplicit => "Gemini's implicit cache: no markers, every prompt cached",
            CacheKind::BedrockCachePoint => {
                "Bedrock cachePoint blocks: tools, system, a rolling one"
            }
            CacheKind::OpenAiBreakpoints => "GPT-5.6+ explicit breakpoints after tools and system",
            CacheKind::GeminiExplicit => {
                "Gemini cached content of tools and system, stored an hour"
            }
        }
    }

    /// The policy called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether the policy places markers of its own (so a TTL applies).
    pub fn has_ttl(self) -> bool {
        matches!(
            self,
            CacheKind::System
                | CacheKind::Native
                | CacheKind::Tail
                | CacheKind::ClaudeCode
                | CacheKind::BedrockCachePoint
        )
    }

    /// Whether the policy places Anthropic `cache_control` markers (or
    /// replays recorded ones), which only Anthropic's API accepts.
    pub fn places_markers(self) -> bool {
        (self.has_ttl() && self != CacheKind::BedrockCachePoint) || self == CacheKind::Recorded
    }

    /// Whether the policy is the cache `provider`'s API runs: markers for
    /// Anthropic, the automatic caches for OpenAI and Gemini; `none` for
    /// every one.
    pub fn runs_on(self, provider: tracecost_engine::cache::ProviderKind) -> bool {
        use tracecost_engine::cache::ProviderKind;
        match self {
            CacheKind::None => true,
            CacheKind::OpenAiAuto => provider == ProviderKind::OpenAi,
            CacheKind::GeminiImplicit => provider == ProviderKind::Google,
            CacheKind::BedrockCachePoint => provider == ProviderKind::BedrockConverse,
            CacheKind::OpenAiBreakpoints => provider == ProviderKind::OpenAi,
            CacheKind::GeminiExplicit => provider == ProviderKind::Google,
            // Recorded markers are replayed where they were recorded:
            // Anthropic's cache_control, Bedrock's cache points.
            CacheKind::Recorded => {
                provider.speaks_cache_control() || provider == ProviderKind::BedrockConverse
            }
            k => k.places_markers() && provider.speaks_cache_control(),
        }
    }

    /// The names of the policies that take a TTL, for messages.
    pub fn with_ttl_names() -> Vec<&'static str> {
        Self::ALL
            .into_iter()
            .filter(|k| k.has_ttl())
            .map(CacheKind::name)
            .collect()
    }
}

/// `a, b, c or d`.
pub(crate) fn one_of(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        for k in CompactionKind::ALL {
            assert_eq!(CompactionKind::from_name(k.name()), Some(k));
        }
        for k in CacheKind::ALL {
            assert_eq!(CacheKind::from_name(k.name()), Some(k));
        }
        assert_eq!(CacheKind::from_name("fast"), None);
        assert_eq!(one_of(&["a", "b", "c"]), "a, b or c");
        assert_eq!(one_of(&["a"]), "a");
    }
}

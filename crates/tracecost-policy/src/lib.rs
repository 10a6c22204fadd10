//! Policies as data: what to compact, where to put cache markers, which
//! model — each config prints and parses as one short string so it can be
//! passed on a command line, stored in a baseline and shown in a report.
//!
//! Grammar: `[clear-thinking[:keep=N|all]+]COMPACTION[:k=v,...]+CACHE[:k=v,...][@MODEL]`, e.g.
//! `ledger:t=8000,k=2+native:manifest=cached,ttl=5m` or
//! `off+tail:ttl=1h@claude-opus-4-1`. Printing always gives the canonical
//! form (parameters in a fixed order, defaults of the peers' options
//! omitted), so equal configs print equal strings.
//!
//! This crate owns the policies as data and what they place; it stands on
//! the engine and the trace model alone and must not depend on what counts
//! tokens, prices, replays or reports (tests/cli/crates.rs at the workspace
//! root holds its dependencies to a list).

mod apply;
pub mod autocompact;
mod flags;
mod grid;
mod kinds;
mod parse;
mod peer_view;
mod peers;
mod retention;
mod thinking;
mod trim;
mod ttl;
mod view;

pub use apply::{BlockTokens, CompactionRun, PolicyView, ViewState, markers_for_call};
pub use flags::{FlagError, Implied, Kept, PolicyFlags, ResolvedPolicy};
pub use grid::GridSpec;
pub use kinds::{
    CacheKind, CompactionKind, DEFAULT_LEDGER_KEEP_LAST, DEFAULT_LEDGER_THRESHOLD,
    DEFAULT_MANIFEST, DEFAULT_TTL,
};
pub use peers::{
    ANTHROPIC_CLEARED_PLACEHOLDER, CLAUDE_CODE_CLEARED_PLACEHOLDER, ClearToolUses, LangchainClear,
    PeerParams, ReprCache, langchain_approx_tokens,
};
pub use retention::{BreakpointTtl, OpenAiRetention};
pub use thinking::{CLEAR_THINKING_NAME, ClearThinking, DEFAULT_CLEAR_THINKING_KEEP};
pub use trim::AgentsTrim;
pub use ttl::{RECORDED_TTL_NAME, TtlChoice, recorded_ttls, written_ttl};
pub use view::CompactedList;

use std::fmt;
use std::str::FromStr;

use tracecost_engine::cache::ManifestPosition;
use tracecost_engine::wire::Ttl;
use tracecost_trace::{Call, Trace, TraceFacts};

/// A config string that does not parse.
///
/// The message quotes at most the first 200 characters of the config and
/// 400 of the reason (which may quote a part of it), on one line: the
/// string is the user's, and may be any size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid config \"{}\": {}",
    tracecost_engine::handle::one_line(input, 200),
    tracecost_engine::handle::one_line(reason, 400)
)]
pub struct ConfigError {
    /// The string given.
    pub input: String,
    /// What was wrong.
    pub reason: String,
}

/// How tool results are compacted.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Compaction {
    /// Nothing is compacted.
    Off,
    /// The engine's ledger: stubs for results over `threshold` chars older
    /// than the last `keep_last` results; adds the recall tool.
    Ledger {
        /// Size threshold in characters.
        threshold: u64,
        /// Results never compacted, counted from the end.
        keep_last: usize,
    },
    /// Anthropic's server-side `clear_tool_uses_20250919`.
    ClearToolUses(ClearToolUses),
    /// LangChain's `ClearToolUsesEdit` middleware.
    LangchainClear(LangchainClear),
    /// Claude Code's microcompaction, as its records show it: before a
    /// call whose tool results sent whole come to more than `keep_tokens +
    /// at_least` tokens, the oldest of them are cleared in place (Claude
    /// Code's placeholder) until the rest come to at most `keep_tokens`; a
    /// result stays cleared. The results of the call's last message (what
    /// the model is about to read) are never cleared. It does not model
    /// the clearing Claude Code does, unrecorded, when its cache has gone
    /// cold (the status quo replays that from the record).
    ClaudeCodeClear {
        /// Tokens of the most recent results kept whole.
        keep_tokens: u64,
        /// Clear only when that frees at least this many tokens.
        at_least: u64,
    },
    /// The OpenAI Agents SDK's `ToolOutputTrimmer`: at every call, the tool
    /// results before the last `recent_turns` user messages that are longer
    /// than `max_output_chars` are sent as the SDK's preview of them.
    AgentsTrim(AgentsTrim),
    /// Claude Code's summarising autocompact: before a call whose context
    /// (prompt and history) comes to more than `trigger` tokens (or where
    /// the record shows it ran), a call of its own sends that context with
    /// an instruction to summarise and writes a `summary`-token summary;
    /// from that call on the history is the summary followed by what came
    /// after it. The trace is replayed in parts, one per compaction
    /// ([`autocompact`]).
    ClaudeCodeAutocompact {
        /// Where it summarises.
        trigger: AutocompactTrigger,
        /// Tokens of the summary written.
        summary: u64,
    },
    /// Anthropic's server-side compaction `compact_20260112`: when a
    /// request's input reaches `trigger` tokens, the API first samples a
    /// summary of the whole context (an iteration of its own, billed in
    /// `usage.iterations`), then answers from the system prompt, the tools
    /// and the `compaction` block holding it; later requests drop what came
    /// before that block. Parameters as documented (platform.claude.com,
    /// "Compaction at a token threshold"): `trigger` 150,000 input tokens
    /// by default, at least 50,000; `pause_after_compaction` false (the
    /// request answers in the same call, as replayed); `instructions` null
    /// (the API's own summary prompt). The documentation gives no size for
    /// the summary: `summary` tokens, by default Claude Code's cap on its
    /// own summaries ([`kinds::DEFAULT_AUTOCOMPACT_SUMMARY`]), a stated
    /// guess a user can change.
    AnthropicCompact {
        /// Input tokens at which it summarises.
        trigger: u64,
        /// Tokens of the summary written.
        summary: u64,
    },
    /// LangChain v1's `SummarizationMiddleware` (langchain 1.5.2 read):
    /// before a model call whose history reaches a trigger (`tokens >=`,
    /// `messages >=`; none by default, so one must be given), the messages
    /// before the last `keep` (moved back so that no tool result is parted
    /// from its call) are summarised by a call of its own that reads only
    /// the last `trim` tokens of them (`trim_messages(strategy="last",
    /// start_on="human")`) in its summary prompt, without the agent's
    /// system prompt or tools; the history becomes the summary (a user
    /// message) and the kept messages. Tokens are the provider's: LangChain
    /// counts approximately but also fires when the last model call's
    /// reported total reaches the trigger, which is the provider's count.
    /// `fraction` triggers need a model profile and are not taken.
    /// Messages are the trace's: tool results answering one call in one
    /// user message count once, where LangChain holds a `ToolMessage` each.
    LangchainSummarize(LangchainSummarize),
    /// OpenAI's Responses compaction (`context_management: [{type:
    /// "compaction", compact_threshold}]`): when the rendered tokens cross
    /// `threshold`, the server compacts the context into one encrypted
    /// compaction item that carries it forward, and later requests send that
    /// item in place of what came before it. The documentation gives no
    /// default threshold, so one must be given; nor a size for the item:
    /// `summary` tokens, as for `anthropic-compact`.
    OpenAiCompact {
        /// Rendered tokens at which it compacts.
        threshold: u64,
        /// Tokens of the compaction item written.
        summary: u64,
    },
    /// The tool results the client cleared in place, at the calls its
    /// record says ([`tracecost_trace::Call::cleared`]): Claude Code's own
    /// microcompaction, as it ran. On a trace that records none, `off`.
    Recorded,
}

/// Where Claude Code's autocompact summarises a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AutocompactTrigger {
    /// Before a call whose context comes to more than this many tokens, in
    /// the replay's count (Claude Code's threshold: `window − min(max
    /// output, 20,000) − 13,000`), and where the record shows a `/compact`.
    Tokens(u64),
    /// Where the record shows each compaction ran (`compact_boundary`,
    /// automatic or asked for), and nowhere else: the status quo of a
    /// conversation read whole across its compactions. Claude Code decides
    /// on its own count of the context (the last response's usage, which
    /// its transcripts do not keep whole, plus an estimate of what came
    /// after), so a threshold in the replay's count can land a call away
    /// from where it ran.
    Recorded,
}

impl fmt::Display for AutocompactTrigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AutocompactTrigger::Tokens(t) => write!(f, "{t}"),
            AutocompactTrigger::Recorded => f.write_str("recorded"),
        }
    }
}

/// LangChain's `SummarizationMiddleware` parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LangchainSummarize {
    /// `("tokens", N)`: history tokens at which it summarises.
    pub trigger_tokens: Option<u64>,
    /// `("messages", N)`: history messages at which it summarises.
    pub trigger_messages: Option<usize>,
    /// `keep=("messages", N)`: messages kept after the summary.
    pub keep: usize,
    /// `trim_tokens_to_summarize`: tokens the summarising call reads.
    pub trim: u64,
    /// Tokens of the summary written (LangChain sets no cap).
    pub summary: u64,
}

/// Which cache markers each request carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cache {
    /// No markers.
    None,
    /// Prompt region: the last tool and the last system block.
    System {
        /// TTL of the markers.
        ttl: TtlChoice,
    },
    /// The engine's history + manifest composition (and the prompt region).
    Native {
        /// Manifest cached (marked) or volatile (unmarked).
        manifest: ManifestPosition,
        /// TTL of the markers.
        ttl: TtlChoice,
    },
    /// One rolling marker on the last block, like automatic caching.
    Tail {
        /// TTL of the marker.
        ttl: TtlChoice,
    },
    /// The markers exactly as the recorded requests carried them.
    Recorded,
    /// Claude Code's client policy: the last tool, the last system block
    /// and one rolling marker on the last block of the conversation.
    ClaudeCode {
        /// TTL of the markers.
        ttl: TtlChoice,
    },
    /// OpenAI's automatic prefix cache: no markers, every prompt cached.
    OpenAiAuto {
        /// How long a prefix is held.
        retention: OpenAiRetention,
        /// Whether a call whose recorded read fell back to an older prefix
        /// than the one the cache held finds only that prefix held, as the
        /// record shows the service did (`misses=recorded`, the default
        /// where the trace recorded its reads), or the simulator's rules
        /// alone decide (`misses=simulated`).
        recorded_misses: bool,
    },
    /// Bedrock Converse's `cachePoint` blocks where Claude Code puts its
    /// markers: after the tools, after the system prompt, and one rolling
    /// on the last block (at most 4, as Bedrock takes).
    BedrockCachePoint {
        /// TTL of the cache points.
        ttl: TtlChoice,
    },
    /// OpenAI's breakpoints (GPT-5.6 and later): explicit
    /// `prompt_cache_breakpoint`s after the tools and the system prompt,
    /// besides the implicit one the API keeps on the newest message.
    OpenAiBreakpoints {
        /// TTL of the explicit breakpoints.
        ttl: BreakpointTtl,
    },
    /// Gemini's explicit cached contents: the tools and the system
    /// instruction stored as a cached content for its default hour, named
    /// by every request while it lives, created again when it has expired.
    GeminiExplicit,
    /// Gemini's implicit cache: no markers, every prompt cached.
    GeminiImplicit {
        /// Minutes a prefix is held after its last use (`None`: the
        /// default; Google documents none).
        idle_minutes: Option<u32>,
    },
}

/// One point of a sweep: compaction, cache policy and (optionally) a model
/// overriding the trace's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Config {
    /// The compaction policy.
    pub compaction: Compaction,
    /// The cache policy.
    pub cache: Cache,
    /// The model to price with, instead of the trace's.
    pub model: Option<String>,
    /// Anthropic's `clear_thinking_20251015` beside the compaction, when
    /// the config names it (`clear-thinking[:keep=N|all]+` before the
    /// compaction).
    pub thinking: Option<ClearThinking>,
}

impl Config {
    /// The model that prices `call` of `trace` under this config: the
    /// config's model when it names one, else the call's own, else the
    /// trace's. Every figure priced from a replay follows this one rule.
    pub fn model_for_call<'a>(&'a self, trace: &'a Trace, call: &'a Call) -> &'a str {
        self.model
            .as_deref()
            .unwrap_or_else(|| trace.model_of(call))
    }

    /// The model for a trace's figures that are not per call (calibration
    /// of its token counts, the price of a recall): the config's model when
    /// it names one, else the trace's.
    pub fn model_for_trace<'a>(&'a self, trace: &'a (impl TraceFacts + ?Sized)) -> &'a str {
        self.model.as_deref().unwrap_or(trace.model())
    }

    /// What actually ran for `trace`: the policy its source recorded
    /// ([`Trace::status_quo`]), else no compaction with its recorded
    /// markers, else no compaction and no cache. Savings are measured
    /// against it.
    pub fn status_quo(trace: &(impl TraceFacts + ?Sized)) -> Result<Config, ConfigError> {
        if let Some(s) = trace.status_quo() {
            let mut c: Config = s.parse().map_err(|e: ConfigError| ConfigError {
                input: e.input,
                reason: format!("trace {}: status_quo: {}", trace.name(), e.reason),
            })?;
            c.model = None;
            return Ok(c);
        }
        let cache = if trace.has_markers() {
            Cache::Recorded
        } else if trace.provider() == tracecost_engine::cache::ProviderKind::OpenAi {
            // OpenAI caches every prompt whether asked or not.
            Cache::OpenAiAuto {
                retention: OpenAiRetention::Model,
                recorded_misses: true,
            }
        } else if trace.provider() == tracecost_engine::cache::ProviderKind::Google {
            // So does Gemini (2.5 and later).
            Cache::GeminiImplicit { idle_minutes: None }
        } else {
            Cache::None
        };
        Ok(Config {
            thinking: None,
            compaction: Compaction::Off,
            cache,
            model: None,
        })
    }

    /// How much policy a config adds to a bare client: one for compaction,
    /// one for cache markers, one for a thinking edit. Ties between equal costs go to the simpler.
    pub fn complexity(&self) -> u8 {
        // A cache the provider runs unasked (OpenAI's) adds no policy.
        let cache = !matches!(
            self.cache,
            Cache::None | Cache::OpenAiAuto { .. } | Cache::GeminiImplicit { .. }
        );
        u8::from(self.compaction != Compaction::Off)
            + u8::from(cache)
            + u8::from(self.thinking.is_some())
    }

    /// No compaction, no cache markers: what a naive client pays.
    pub fn baseline() -> Self {
        Config {
            thinking: None,
            compaction: Compaction::Off,
            cache: Cache::None,
            model: None,
        }
    }
}

fn err(input: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError {
        input: input.to_owned(),
        reason: reason.into(),
    }
}

/// A part of a config spelled out: its name and its `key=value` parameters.
type NamedParams<'a> = (&'a str, Vec<(&'a str, &'a str)>);

/// Splits `name:k=v,k=v` into the name and its parameters.
fn split_params<'a>(input: &str, part: &'a str) -> Result<NamedParams<'a>, ConfigError> {
    let (name, rest) = part.split_once(':').unwrap_or((part, ""));
    let mut params = Vec::new();
    for kv in rest.split(',').filter(|s| !s.is_empty()) {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| err(input, format!("parameter {kv:?} is not key=value")))?;
        if params.iter().any(|(seen, _)| *seen == k) {
            return Err(err(input, format!("parameter {k:?} is given twice")));
        }
        params.push((k, v));
    }
    Ok((name, params))
}

fn num<T: FromStr>(input: &str, key: &str, v: &str) -> Result<T, ConfigError> {
    v.parse()
        .map_err(|_| err(input, format!("{key}={v:?} is not a non-negative integer")))
}

fn boolean(input: &str, key: &str, v: &str) -> Result<bool, ConfigError> {
    match v {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(err(input, format!("{key}={v:?} is not true or false"))),
    }
}

fn unknown(input: &str, what: &str, key: &str, allowed: &str) -> ConfigError {
    err(
        input,
        format!("{what} has no parameter {key:?} (allowed: {allowed})"),
    )
}

/// Parses a TTL (`5m` or `1h`).
pub fn parse_ttl(v: &str) -> Result<Ttl, String> {
    match v {
        "5m" => Ok(Ttl::FiveMinutes),
        "1h" => Ok(Ttl::OneHour),
        _ => Err(format!("ttl {v:?} is not 5m or 1h")),
    }
}

impl Compaction {
    /// The engine's policy, for the ledger.
    pub fn ledger_policy(&self) -> Option<tracecost_engine::rewrite::CompactionPolicy> {
        match *self {
            Compaction::Ledger {
                threshold,
                keep_last,
            } => Some(tracecost_engine::rewrite::CompactionPolicy {
                size_threshold: threshold,
                keep_last_n: keep_last,
            }),
            _ => None,
        }
    }

    /// Which policy this is, without its parameters.
    pub fn kind(&self) -> CompactionKind {
        match self {
            Compaction::Off => CompactionKind::Off,
            Compaction::Recorded => CompactionKind::Recorded,
            Compaction::Ledger { .. } => CompactionKind::Ledger,
            Compaction::ClearToolUses(_) => CompactionKind::ClearToolUses,
            Compaction::LangchainClear(_) => CompactionKind::LangchainClear,
            Compaction::ClaudeCodeClear { .. } => CompactionKind::ClaudeCodeClear,
            Compaction::AgentsTrim(_) => CompactionKind::AgentsTrim,
            Compaction::ClaudeCodeAutocompact { .. } => CompactionKind::ClaudeCodeAutocompact,
            Compaction::AnthropicCompact { .. } => CompactionKind::AnthropicCompact,
            Compaction::LangchainSummarize(_) => CompactionKind::LangchainSummarize,
            Compaction::OpenAiCompact { .. } => CompactionKind::OpenAiCompact,
        }
    }

    /// A summarising policy's rules (when it summarises, what its
    /// summarising call reads, what stays after it), each policy's in this
    /// one place; `None` for a policy that does not summarise.
    pub fn summarising(&self) -> Option<autocompact::Summarising> {
        use autocompact::Summarising;
        let whole = |trigger: u64, at_trigger: bool, summary: u64, instruction| Summarising {
            trigger_tokens: Some(trigger),
            at_trigger,
            trigger_messages: None,
            keep_messages: 0,
            trim_tokens: None,
            follows_record: false,
            summary_tokens: summary,
            instruction,
        };
        match *self {
            // Claude Code compacts once the context is past its threshold,
            // and its records show its own compactions.
            Compaction::ClaudeCodeAutocompact { trigger, summary } => Some(Summarising {
                trigger_tokens: match trigger {
                    AutocompactTrigger::Tokens(t) => Some(t),
                    AutocompactTrigger::Recorded => None,
                },
                follows_record: true,
                ..whole(0, false, summary, autocompact::SUMMARISE_INSTRUCTION)
            }),
            // The API compacts when the input reaches the trigger.
            Compaction::AnthropicCompact { trigger, summary } => Some(whole(
                trigger,
                true,
                summary,
                autocompact::ANTHROPIC_COMPACT_INSTRUCTION,
            )),
            // "When the rendered token count crosses the threshold".
            Compaction::OpenAiCompact { threshold, summary } => Some(whole(
                threshold,
                false,
                summary,
                autocompact::OPENAI_COMPACT_INSTRUCTION,
            )),
            Compaction::LangchainSummarize(l) => Some(Summarising {
                trigger_tokens: l.trigger_tokens,
                at_trigger: true,
                trigger_messages: l.trigger_messages,
                keep_messages: l.keep,
                trim_tokens: Some(l.trim),
                follows_record: false,
                summary_tokens: l.summary,
                instruction: autocompact::LANGCHAIN_SUMMARY_INSTRUCTION,
            }),
            _ => None,
        }
    }
}

impl fmt::Display for Compaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Compaction::Off => f.write_str(CompactionKind::Off.name()),
            Compaction::Recorded => f.write_str(CompactionKind::Recorded.name()),
            Compaction::Ledger {
                threshold,
                keep_last,
            } => write!(
                f,
                "{}:t={threshold},k={keep_last}",
                CompactionKind::Ledger.name()
            ),
            Compaction::ClearToolUses(ClearToolUses(p)) => {
                write!(f, "{}:", CompactionKind::ClearToolUses.name())?;
                p.fmt_params(f, &peers::PeerParams::anthropic_defaults())
            }
            Compaction::LangchainClear(LangchainClear(p)) => {
                write!(f, "{}:", CompactionKind::LangchainClear.name())?;
                p.fmt_params(f, &peers::PeerParams::langchain_defaults())
            }
            Compaction::ClaudeCodeClear {
                keep_tokens,
                at_least,
            } => write!(
                f,
                "{}:keep-tokens={keep_tokens},at-least={at_least}",
                CompactionKind::ClaudeCodeClear.name()
            ),
            Compaction::AgentsTrim(t) => write!(
                f,
                "{}:turns={},max={},preview={}",
                CompactionKind::AgentsTrim.name(),
                t.recent_turns,
                t.max_output_chars,
                t.preview_chars
            ),
            Compaction::ClaudeCodeAutocompact { trigger, summary } => write!(
                f,
                "{}:trigger={trigger},summary={summary}",
                CompactionKind::ClaudeCodeAutocompact.name()
            ),
            Compaction::AnthropicCompact { trigger, summary } => write!(
                f,
                "{}:trigger={trigger},summary={summary}",
                CompactionKind::AnthropicCompact.name()
            ),
            Compaction::OpenAiCompact { threshold, summary } => write!(
                f,
                "{}:threshold={threshold},summary={summary}",
                CompactionKind::OpenAiCompact.name()
            ),
            Compaction::LangchainSummarize(l) => {
                let clauses: Vec<String> = l
                    .trigger_tokens
                    .map(|t| format!("tokens:{t}"))
                    .into_iter()
                    .chain(l.trigger_messages.map(|m| format!("messages:{m}")))
                    .collect();
                write!(
                    f,
                    "{}:trigger={},",
                    CompactionKind::LangchainSummarize.name(),
                    clauses.join("|")
                )?;
                write!(
                    f,
                    "keep=messages:{},trim={},summary={}",
                    l.keep, l.trim, l.summary
                )
            }
        }
    }
}

impl Cache {
    /// The policy of `kind` with these parameters (a parameter the policy
    /// does not take is ignored).
    pub fn of_kind(kind: CacheKind, ttl: TtlChoice, manifest: ManifestPosition) -> Cache {
        match kind {
            CacheKind::None => Cache::None,
            CacheKind::System => Cache::System { ttl },
            CacheKind::Native => Cache::Native { manifest, ttl },
            CacheKind::Tail => Cache::Tail { ttl },
            CacheKind::Recorded => Cache::Recorded,
            CacheKind::ClaudeCode => Cache::ClaudeCode { ttl },
            CacheKind::OpenAiAuto => Cache::OpenAiAuto {
                retention: OpenAiRetention::Model,
                recorded_misses: true,
            },
            CacheKind::GeminiImplicit => Cache::GeminiImplicit { idle_minutes: None },
            CacheKind::BedrockCachePoint => Cache::BedrockCachePoint { ttl },
            CacheKind::OpenAiBreakpoints => Cache::OpenAiBreakpoints {
                ttl: BreakpointTtl::default(),
            },
            CacheKind::GeminiExplicit => Cache::GeminiExplicit,
        }
    }

    /// The TTL of the markers the policy places, if it places its own.
    pub fn ttl(&self) -> Option<TtlChoice> {
        match *self {
            Cache::None
            | Cache::Recorded
            | Cache::OpenAiAuto { .. }
            | Cache::OpenAiBreakpoints { .. }
            | Cache::GeminiExplicit
            | Cache::GeminiImplicit { .. } => None,
            Cache::System { ttl }
            | Cache::Native { ttl, .. }
            | Cache::Tail { ttl }
            | Cache::ClaudeCode { ttl }
            | Cache::BedrockCachePoint { ttl } => Some(ttl),
        }
    }

    /// Which policy this is, without its parameters.
    pub fn kind(&self) -> CacheKind {
        match self {
            Cache::None => CacheKind::None,
            Cache::System { .. } => CacheKind::System,
            Cache::Native { .. } => CacheKind::Native,
            Cache::ClaudeCode { .. } => CacheKind::ClaudeCode,
            Cache::Tail { .. } => CacheKind::Tail,
            Cache::Recorded => CacheKind::Recorded,
            Cache::OpenAiAuto { .. } => CacheKind::OpenAiAuto,
            Cache::GeminiImplicit { .. } => CacheKind::GeminiImplicit,
            Cache::BedrockCachePoint { .. } => CacheKind::BedrockCachePoint,
            Cache::OpenAiBreakpoints { .. } => CacheKind::OpenAiBreakpoints,
            Cache::GeminiExplicit => CacheKind::GeminiExplicit,
        }
    }
}

impl fmt::Display for Cache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.kind().name())?;
        match self {
            Cache::None | Cache::Recorded | Cache::GeminiExplicit => Ok(()),
            Cache::OpenAiAuto {
                retention,
                recorded_misses,
            } => {
                let mut sep = ':';
                if *retention != OpenAiRetention::Model {
                    write!(f, "{sep}{retention}")?;
                    sep = ',';
                }
                if !recorded_misses {
                    write!(f, "{sep}misses=simulated")?;
                }
                Ok(())
            }
            Cache::OpenAiBreakpoints { ttl } => match ttl {
                BreakpointTtl::ThirtyMinutes => Ok(()),
                t => write!(f, ":ttl={t}"),
            },
            Cache::GeminiImplicit { idle_minutes } => match idle_minutes {
                None => Ok(()),
                Some(m) => write!(f, ":idle={m}m"),
            },
            Cache::Native { manifest, ttl } => {
                write!(f, ":manifest={},ttl={ttl}", manifest.as_str())
            }
            Cache::System { ttl }
            | Cache::Tail { ttl }
            | Cache::ClaudeCode { ttl }
            | Cache::BedrockCachePoint { ttl } => write!(f, ":ttl={ttl}"),
        }
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(t) = &self.thinking {
            write!(f, "{t}+")?;
        }
        write!(f, "{}+{}", self.compaction, self.cache)?;
        if let Some(m) = &self.model {
            write!(f, "@{m}")?;
        }
        Ok(())
    }
}

/// A config is written as its canonical string wherever it is serialized.
impl serde::Serialize for Config {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A config is read back from its canonical string (a report's spilled
/// summaries, an incremental cache). A fleet's summaries name the same few
/// dozen configs over and over, and are read back several times: a thread
/// parses each string once, and clones what it parsed when it meets the
/// string again.
impl<'de> serde::Deserialize<'de> for Config {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// Strings parsed, by thread; cleared past this many (a grid
        /// names far fewer).
        const PARSED_MAX: usize = 1024;
        thread_local! {
            static PARSED: std::cell::RefCell<std::collections::HashMap<String, Config>> =
                std::cell::RefCell::default();
        }
        struct Named;
        impl serde::de::Visitor<'_> for Named {
            type Value = Config;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a config string")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Config, E> {
                PARSED.with_borrow_mut(|parsed| {
                    if let Some(c) = parsed.get(s) {
                        return Ok(c.clone());
                    }
                    let c: Config = s.parse().map_err(E::custom)?;
                    if parsed.len() >= PARSED_MAX {
                        parsed.clear();
                    }
                    parsed.insert(s.to_owned(), c.clone());
                    Ok(c)
                })
            }
        }
        d.deserialize_str(Named)
    }
}

impl FromStr for Config {
    type Err = ConfigError;
    fn from_str(input: &str) -> Result<Self, ConfigError> {
        let s = input.trim();
        let (body, model) = match s.split_once('@') {
            Some((b, m)) if !m.is_empty() => (b, Some(m.to_owned())),
            Some(_) => return Err(err(input, "a model name must follow '@'")),
            None => (s, None),
        };
        // The thinking edit, when named, comes first.
        let (thinking, body) = match body.split_once('+') {
            Some((first, rest))
                if first.split_once(':').map_or(first, |(n, _)| n) == CLEAR_THINKING_NAME =>
            {
                (Some(ClearThinking::parse(input, first)?), rest)
            }
            _ => (None, body),
        };
        let (c, k) = body.split_once('+').ok_or_else(|| {
            err(
                input,
                "expected COMPACTION+CACHE, e.g. ledger:t=8000,k=2+native:manifest=cached,ttl=5m",
            )
        })?;
        Ok(Config {
            compaction: Compaction::parse(input, c)?,
            cache: Cache::parse(input, k)?,
            model,
            thinking,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_round_trip_through_their_canonical_string() {
        for s in [
            "off+none",
            "ledger:t=8000,k=2+native:manifest=cached,ttl=5m",
            "ledger:t=0,k=0+native:manifest=volatile,ttl=1h",
            "off+tail:ttl=1h@claude-opus-4-1",
            "off+system:ttl=5m",
            "off+recorded",
            "off+claude-code:ttl=1h",
            "off+claude-code:ttl=recorded",
            "recorded+claude-code:ttl=recorded",
            "ledger:t=8000,k=2+native:manifest=volatile,ttl=recorded",
            "off+system:ttl=recorded",
            "off+tail:ttl=recorded@claude-opus-4-1",
            "clear-tool-uses:trigger=100000,keep=3+tail:ttl=5m",
            "clear-tool-uses:trigger=30000,keep=1,at-least=5000,exclude=read|web,inputs=true+none",
            "langchain-clear:trigger=100000,keep=3+none",
            "agents-trim:turns=2,max=500,preview=200+openai-auto",
            "agents-trim:turns=1,max=1000,preview=0+none",
            "claude-code-autocompact:trigger=167000,summary=20000+claude-code:ttl=recorded",
            "claude-code-autocompact:trigger=50000,summary=4000+none",
            "anthropic-compact:trigger=150000,summary=20000+claude-code:ttl=recorded",
            "openai-compact:threshold=200000,summary=20000+openai-auto",
            "langchain-summarize:trigger=tokens:100000,keep=messages:20,trim=4000,summary=20000+none",
            "langchain-summarize:trigger=tokens:9000|messages:50,keep=messages:4,trim=100,summary=5+none",
            "off+openai-auto",
            "ledger:t=8000,k=2+openai-auto:retention=in-memory,idle=10m",
            "off+openai-auto:retention=24h@gpt-5.4",
            "off+gemini-implicit",
            "ledger:t=8000,k=2+gemini-implicit:idle=10m",
            "off+bedrock-cachepoint:ttl=5m",
            "off+openai-breakpoints",
            "ledger:t=8000,k=2+openai-breakpoints:ttl=12h@gpt-5.6",
            "off+gemini-explicit@gemini-2.5-pro",
            "clear-thinking:keep=1+off+claude-code:ttl=recorded",
            "clear-thinking:keep=all+ledger:t=8000,k=2+claude-code:ttl=5m@claude-opus-4-6",
            "clear-thinking:keep=3+clear-tool-uses:trigger=100000,keep=3+tail:ttl=5m",
        ] {
            let c: Config = s.parse().unwrap();
            assert_eq!(c.to_string(), s);
        }
    }

    #[test]
    fn agents_trim_takes_the_sdks_defaults_and_overrides_each() {
        let c: Config = "agents-trim+none".parse().unwrap();
        assert_eq!(
            c.compaction,
            Compaction::AgentsTrim(AgentsTrim {
                recent_turns: 2,
                max_output_chars: 500,
                preview_chars: 200,
            })
        );
        let c: Config = "agents-trim:preview=50,turns=4+none".parse().unwrap();
        assert_eq!(c.to_string(), "agents-trim:turns=4,max=500,preview=50+none");
    }

    #[test]
    fn claude_code_autocompact_takes_claude_codes_threshold_and_overrides_each() {
        let c: Config = "claude-code-autocompact+claude-code".parse().unwrap();
        // 200,000-token window, less the summary's output reserve (20,000)
        // and the autocompact buffer (13,000).
        assert_eq!(
            c.compaction,
            Compaction::ClaudeCodeAutocompact {
                trigger: AutocompactTrigger::Tokens(167_000),
                summary: 20_000,
            }
        );
        let c: Config = "claude-code-autocompact:summary=9000,trigger=100000+none"
            .parse()
            .unwrap();
        assert_eq!(
            c.to_string(),
            "claude-code-autocompact:trigger=100000,summary=9000+none"
        );
        assert!(!CompactionKind::ClaudeCodeAutocompact.in_default_grid());
    }

    /// `trigger=recorded` places the compactions where the record shows
    /// them, and names itself so back.
    #[test]
    fn claude_code_autocompact_can_follow_the_record_alone() {
        let c: Config = "claude-code-autocompact:trigger=recorded+claude-code:ttl=recorded"
            .parse()
            .unwrap();
        assert_eq!(
            c.compaction,
            Compaction::ClaudeCodeAutocompact {
                trigger: AutocompactTrigger::Recorded,
                summary: 20_000,
            }
        );
        assert_eq!(
            c.to_string(),
            "claude-code-autocompact:trigger=recorded,summary=20000+claude-code:ttl=recorded"
        );
        let rule = c.compaction.summarising().unwrap();
        assert_eq!(rule.trigger_tokens, None);
        assert!(rule.follows_record);
        let e = "claude-code-autocompact:trigger=soon+none"
            .parse::<Config>()
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("trigger=\"soon\" is neither a number of tokens nor recorded"),
            "{e}"
        );
    }

    #[test]
    fn the_summarising_policies_take_their_peers_defaults() {
        let c: Config = "anthropic-compact+claude-code".parse().unwrap();
        // compact_20260112: trigger 150,000 input tokens by default.
        assert_eq!(
            c.compaction,
            Compaction::AnthropicCompact {
                trigger: 150_000,
                summary: 20_000,
            }
        );
        let r = c.compaction.summarising().unwrap();
        // It compacts on reaching the trigger, the whole context read,
        // nothing kept but the summary, no record followed.
        assert_eq!(r.trigger_tokens, Some(150_000));
        assert!(r.at_trigger);
        assert_eq!((r.keep_messages, r.trim_tokens), (0, None));
        assert!(!r.follows_record);
        let c: Config = "langchain-summarize:trigger=messages:40+none"
            .parse()
            .unwrap();
        // SummarizationMiddleware: keep ("messages", 20), trim 4,000.
        assert_eq!(
            c.compaction,
            Compaction::LangchainSummarize(LangchainSummarize {
                trigger_tokens: None,
                trigger_messages: Some(40),
                keep: 20,
                trim: 4000,
                summary: 20_000,
            })
        );
        let r = c.compaction.summarising().unwrap();
        assert_eq!(r.keep_messages, 20);
        assert_eq!(r.trim_tokens, Some(4000));
        let c: Config = "openai-compact:threshold=90000+openai-auto"
            .parse()
            .unwrap();
        let r = c.compaction.summarising().unwrap();
        assert_eq!((r.trigger_tokens, r.at_trigger), (Some(90_000), false));
        // Claude Code's follows its record; clearing policies summarise
        // nothing.
        assert!(
            Compaction::ClaudeCodeAutocompact {
                trigger: AutocompactTrigger::Tokens(1),
                summary: 1
            }
            .summarising()
            .unwrap()
            .follows_record
        );
        assert!(Compaction::Off.summarising().is_none());
        for k in [
            CompactionKind::AnthropicCompact,
            CompactionKind::LangchainSummarize,
            CompactionKind::OpenAiCompact,
        ] {
            assert!(!k.in_default_grid(), "{}", k.name());
        }
    }

    #[test]
    fn a_config_reads_back_from_its_string_each_time_and_a_bad_one_does_not() {
        let s = "ledger:t=8000,k=2+native:manifest=cached,ttl=5m@claude-opus-4-1";
        let json = format!("{s:?}");
        // The second read is the first one's config again.
        for _ in 0..2 {
            let c: Config = serde_json::from_str(&json).unwrap();
            assert_eq!(c, s.parse().unwrap());
            assert_eq!(serde_json::to_string(&c).unwrap(), json);
        }
        for _ in 0..2 {
            let e = serde_json::from_str::<Config>(r#""ledger+""#).unwrap_err();
            assert!(e.to_string().starts_with("invalid config"), "{e}");
        }
    }

    #[test]
    fn openai_auto_takes_a_retention_and_adds_no_policy() {
        let c: Config = "off+openai-auto:idle=7m".parse().unwrap();
        assert_eq!(c.to_string(), "off+openai-auto:retention=in-memory,idle=7m");
        // What OpenAI does unasked is no policy of the client's.
        assert_eq!(c.complexity(), 0);
        assert_eq!(c.cache.ttl(), None);
        let e = "off+openai-auto:ttl=5m".parse::<Config>().unwrap_err();
        assert!(e.to_string().contains("allowed: retention, idle"), "{e}");
        let e = "off+openai-auto:retention=1h"
            .parse::<Config>()
            .unwrap_err();
        assert!(e.to_string().contains("in-memory or 24h"), "{e}");
        use tracecost_engine::cache::ProviderKind;
        assert!(CacheKind::OpenAiAuto.runs_on(ProviderKind::OpenAi));
        assert!(!CacheKind::OpenAiAuto.runs_on(ProviderKind::Anthropic));
        assert!(!CacheKind::Tail.runs_on(ProviderKind::OpenAi));
        assert!(CacheKind::None.runs_on(ProviderKind::OpenAi));
    }

    #[test]
    fn parsing_fills_defaults_and_normalizes() {
        let c: Config = "ledger:k=2,t=8000+native".parse().unwrap();
        assert_eq!(
            c.to_string(),
            "ledger:t=8000,k=2+native:manifest=cached,ttl=5m"
        );
        let c: Config = "clear-tool-uses+tail".parse().unwrap();
        assert_eq!(
            c.to_string(),
            "clear-tool-uses:trigger=100000,keep=3+tail:ttl=5m"
        );
        let c: Config = "clear-tool-uses:exclude=b|a|b+none".parse().unwrap();
        assert_eq!(
            c.to_string(),
            "clear-tool-uses:trigger=100000,keep=3,exclude=a|b+none"
        );
    }

    #[test]
    fn bad_configs_say_what_is_wrong() {
        let cases = [
            (
                "ledger",
                "expected COMPACTION+CACHE, e.g. ledger:t=8000,k=2+native:manifest=cached,ttl=5m",
            ),
            ("ledger:t=8000+none", "ledger needs k=N"),
            (
                "ledger:t=-1,k=2+none",
                "t=\"-1\" is not a non-negative integer",
            ),
            (
                "ledger:t=1,k=2,z=3+none",
                "ledger has no parameter \"z\" (allowed: t, k)",
            ),
            (
                "zip+none",
                "unknown compaction \"zip\" (expected off, ledger, clear-tool-uses, langchain-clear, claude-code-clear, agents-trim, claude-code-autocompact, anthropic-compact, langchain-summarize, openai-compact or recorded)",
            ),
            ("off+tail:ttl=2h", "ttl \"2h\" is not 5m, 1h or recorded"),
            (
                "off+openai-breakpoints:ttl=1h",
                "ttl \"1h\" is not one of 30m or 12h (the TTLs of OpenAI's prompt_cache_breakpoint)",
            ),
            (
                "off+openai-breakpoints:idle=5m",
                "openai-breakpoints has no parameter \"idle\" (allowed: ttl)",
            ),
            (
                "off+native:manifest=hot",
                "unknown manifest position \"hot\"; expected cached or volatile",
            ),
            ("off+none@", "a model name must follow '@'"),
            (
                "off+fast",
                "unknown cache policy \"fast\" (expected none, system, native, tail, recorded, claude-code, openai-auto, openai-breakpoints, gemini-implicit, gemini-explicit or bedrock-cachepoint)",
            ),
            ("ledger:t=1,t=2,k=1+none", "parameter \"t\" is given twice"),
            (
                "agents-trim:keep=2+none",
                "agents-trim has no parameter \"keep\" (allowed: turns, max, preview)",
            ),
            (
                "agents-trim:turns=0+none",
                "agents-trim needs turns >= 1 and max >= 1",
            ),
            (
                "agents-trim:max=0+none",
                "agents-trim needs turns >= 1 and max >= 1",
            ),
            (
                "claude-code-autocompact:keep=2+none",
                "claude-code-autocompact has no parameter \"keep\" (allowed: trigger, summary)",
            ),
            (
                "claude-code-autocompact:trigger=0+none",
                "claude-code-autocompact needs trigger >= 1 (or recorded) and summary >= 1",
            ),
            (
                "anthropic-compact:trigger=49999+none",
                "anthropic-compact needs trigger >= 50000 (the API's minimum) and summary >= 1",
            ),
            (
                "anthropic-compact:keep=1+none",
                "anthropic-compact has no parameter \"keep\" (allowed: trigger, summary)",
            ),
            (
                "openai-compact+openai-auto",
                "openai-compact needs threshold=TOKENS >= 1 (compact_threshold has no documented default)",
            ),
            (
                "langchain-summarize+none",
                "langchain-summarize needs trigger=tokens:N or trigger=messages:N (the middleware never summarises without one)",
            ),
            (
                "langchain-summarize:trigger=fraction:0.8+none",
                "langchain-summarize: trigger=fraction needs the model's profile (max_input_tokens); give trigger=tokens:N instead",
            ),
            (
                "langchain-summarize:trigger=tokens:9,keep=tokens:5+none",
                "langchain-summarize: keep=\"tokens:5\" is not messages:N",
            ),
            (
                "langchain-summarize:trigger=turns:9+none",
                "langchain-summarize: trigger=\"turns:9\" is not tokens:N or messages:N",
            ),
        ];
        for (input, reason) in cases {
            let e = input.parse::<Config>().unwrap_err();
            assert_eq!(e.reason, reason, "{input}");
        }
    }
}

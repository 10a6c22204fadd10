//! The config grammar: `COMPACTION[:k=v,...]+CACHE[:k=v,...][@MODEL]`,
//! each part's name and parameters checked against what the policy takes,
//! with its defaults as each peer documents them ([`kinds`]).

use crate::kinds::{self, DEFAULT_MANIFEST, DEFAULT_TTL};
use crate::peers;
use crate::{
    AgentsTrim, AutocompactTrigger, BreakpointTtl, Cache, CacheKind, ClearToolUses, Compaction,
    CompactionKind, ConfigError, LangchainClear, LangchainSummarize, OpenAiRetention, TtlChoice,
    boolean, err, num, split_params, unknown,
};

impl Compaction {
    pub(crate) fn parse(input: &str, part: &str) -> Result<Self, ConfigError> {
        let (name, params) = split_params(input, part)?;
        let Some(kind) = CompactionKind::from_name(name) else {
            let names: Vec<&str> = CompactionKind::ALL.iter().map(|k| k.name()).collect();
            return Err(err(
                input,
                format!(
                    "unknown compaction {name:?} (expected {})",
                    kinds::one_of(&names)
                ),
            ));
        };
        match kind {
            CompactionKind::Off => match params.first() {
                None => Ok(Compaction::Off),
                Some((k, _)) => Err(unknown(input, "off", k, "none")),
            },
            CompactionKind::Recorded => match params.first() {
                None => Ok(Compaction::Recorded),
                Some((k, _)) => Err(unknown(input, "recorded", k, "none")),
            },
            CompactionKind::ClaudeCodeClear => claude_code_clear(input, name, params),
            CompactionKind::ClaudeCodeAutocompact => claude_code_autocompact(input, name, params),
            CompactionKind::AnthropicCompact => anthropic_compact(input, name, params),
            CompactionKind::OpenAiCompact => openai_compact(input, name, params),
            CompactionKind::LangchainSummarize => langchain_summarize(input, name, params),
            CompactionKind::AgentsTrim => agents_trim(input, name, params),
            CompactionKind::Ledger => ledger(input, name, params),
            CompactionKind::ClearToolUses | CompactionKind::LangchainClear => {
                Self::parse_peer(input, name, kind, params)
            }
        }
    }

    /// A peer's clearing (Anthropic's `clear_tool_uses`, LangChain's
    /// middleware): its defaults, then the parameters given.
    fn parse_peer(
        input: &str,
        name: &str,
        kind: CompactionKind,
        params: Vec<(&str, &str)>,
    ) -> Result<Self, ConfigError> {
        let mut p = if kind == CompactionKind::ClearToolUses {
            peers::PeerParams::anthropic_defaults()
        } else {
            peers::PeerParams::langchain_defaults()
        };
        for (k, v) in params {
            match k {
                "trigger" => p.trigger = num(input, k, v)?,
                "keep" => p.keep = num(input, k, v)?,
                "at-least" => p.clear_at_least = num(input, k, v)?,
                "exclude" => {
                    p.exclude_tools = v
                        .split('|')
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .collect()
                }
                "inputs" => p.clear_tool_inputs = boolean(input, k, v)?,
                _ => {
                    return Err(unknown(
                        input,
                        name,
                        k,
                        "trigger, keep, at-least, exclude, inputs",
                    ));
                }
            }
        }
        p.exclude_tools.sort();
        p.exclude_tools.dedup();
        Ok(if kind == CompactionKind::ClearToolUses {
            Compaction::ClearToolUses(ClearToolUses(p))
        } else {
            Compaction::LangchainClear(LangchainClear(p))
        })
    }
}

impl Cache {
    pub(crate) fn parse(input: &str, part: &str) -> Result<Self, ConfigError> {
        let (name, params) = split_params(input, part)?;
        let Some(kind) = CacheKind::from_name(name) else {
            let names: Vec<&str> = CacheKind::ALL.iter().map(|k| k.name()).collect();
            return Err(err(
                input,
                format!(
                    "unknown cache policy {name:?} (expected {})",
                    kinds::one_of(&names)
                ),
            ));
        };
        let mut ttl = TtlChoice::Fixed(DEFAULT_TTL);
        let mut manifest = DEFAULT_MANIFEST;
        let (mut retention, mut idle) = (None, None);
        let mut recorded_misses = true;
        let mut breakpoint_ttl = BreakpointTtl::default();
        for (k, v) in params {
            match (kind, k) {
                (CacheKind::OpenAiAuto, "retention") => retention = Some(v),
                (CacheKind::OpenAiAuto, "idle") => idle = Some(v),
                (CacheKind::OpenAiAuto, "misses") => {
                    recorded_misses = match v {
                        "recorded" => true,
                        "simulated" => false,
                        _ => {
                            return Err(err(
                                input,
                                format!("misses={v:?}: expected recorded or simulated"),
                            ));
                        }
                    }
                }
                (CacheKind::OpenAiAuto, _) => {
                    return Err(unknown(input, name, k, "retention, idle, misses"));
                }
                (CacheKind::OpenAiBreakpoints, "ttl") => {
                    breakpoint_ttl = BreakpointTtl::parse(v).map_err(|r| err(input, r))?
                }
                (CacheKind::OpenAiBreakpoints, _) => return Err(unknown(input, name, k, "ttl")),
                (CacheKind::GeminiImplicit, "idle") => idle = Some(v),
                (CacheKind::GeminiImplicit, _) => return Err(unknown(input, name, k, "idle")),
                (_, "ttl") if kind.has_ttl() => {
                    ttl = TtlChoice::parse(v).map_err(|r| err(input, r))?
                }
                (CacheKind::Native, "manifest") => {
                    manifest =
                        v.parse()
                            .map_err(|e: tracecost_engine::cache::CacheConfigError| {
                                err(input, e.to_string())
                            })?
                }
                (CacheKind::Native, _) => return Err(unknown(input, name, k, "manifest, ttl")),
                _ if kind.has_ttl() => return Err(unknown(input, name, k, "ttl")),
                _ => return Err(unknown(input, name, k, "none")),
            }
        }
        if kind == CacheKind::GeminiImplicit {
            let idle_minutes =
                match OpenAiRetention::from_params(None, idle).map_err(|r| err(input, r))? {
                    OpenAiRetention::InMemory { idle_minutes } => Some(idle_minutes),
                    _ => None,
                };
            return Ok(Cache::GeminiImplicit { idle_minutes });
        }
        if kind == CacheKind::OpenAiBreakpoints {
            return Ok(Cache::OpenAiBreakpoints {
                ttl: breakpoint_ttl,
            });
        }
        if kind == CacheKind::OpenAiAuto {
            let retention =
                OpenAiRetention::from_params(retention, idle).map_err(|r| err(input, r))?;
            return Ok(Cache::OpenAiAuto {
                retention,
                recorded_misses,
            });
        }
        Ok(Cache::of_kind(kind, ttl, manifest))
    }
}

/// A part's `key=value` parameters, in the order given.
type Params<'a> = Vec<(&'a str, &'a str)>;

/// Claude Code's microcompaction: `keep-tokens`, `at-least`.
fn claude_code_clear(
    input: &str,
    name: &str,
    params: Params<'_>,
) -> Result<Compaction, ConfigError> {
    let mut keep_tokens = kinds::DEFAULT_CLAUDE_CODE_KEEP_TOKENS;
    let mut at_least = kinds::DEFAULT_CLAUDE_CODE_AT_LEAST;
    for (k, v) in params {
        match k {
            "keep-tokens" => keep_tokens = num(input, k, v)?,
            "at-least" => at_least = num(input, k, v)?,
            _ => return Err(unknown(input, name, k, "keep-tokens, at-least")),
        }
    }
    Ok(Compaction::ClaudeCodeClear {
        keep_tokens,
        at_least,
    })
}

/// Claude Code's autocompact: `trigger` (tokens or `recorded`), `summary`.
fn claude_code_autocompact(
    input: &str,
    name: &str,
    params: Params<'_>,
) -> Result<Compaction, ConfigError> {
    let mut trigger = AutocompactTrigger::Tokens(kinds::DEFAULT_AUTOCOMPACT_TRIGGER);
    let mut summary = kinds::DEFAULT_AUTOCOMPACT_SUMMARY;
    for (k, v) in params {
        match k {
            "trigger" if v == "recorded" => trigger = AutocompactTrigger::Recorded,
            "trigger" => {
                let t = v.parse().map_err(|_| {
                    err(
                        input,
                        format!("trigger={v:?} is neither a number of tokens nor recorded"),
                    )
                })?;
                trigger = AutocompactTrigger::Tokens(t);
            }
            "summary" => summary = num(input, k, v)?,
            _ => return Err(unknown(input, name, k, "trigger, summary")),
        }
    }
    if trigger == AutocompactTrigger::Tokens(0) || summary < 1 {
        return Err(err(
            input,
            format!("{name} needs trigger >= 1 (or recorded) and summary >= 1"),
        ));
    }
    Ok(Compaction::ClaudeCodeAutocompact { trigger, summary })
}

/// Anthropic's server-side compaction: `trigger` (at least the API's minimum), `summary`.
fn anthropic_compact(
    input: &str,
    name: &str,
    params: Params<'_>,
) -> Result<Compaction, ConfigError> {
    let mut trigger = kinds::DEFAULT_ANTHROPIC_COMPACT_TRIGGER;
    let mut summary = kinds::DEFAULT_AUTOCOMPACT_SUMMARY;
    for (k, v) in params {
        match k {
            "trigger" => trigger = num(input, k, v)?,
            "summary" => summary = num(input, k, v)?,
            _ => return Err(unknown(input, name, k, "trigger, summary")),
        }
    }
    // The API refuses a lower trigger.
    if trigger < kinds::MIN_ANTHROPIC_COMPACT_TRIGGER || summary < 1 {
        return Err(err(
            input,
            format!(
                "{name} needs trigger >= {} (the API's minimum) and summary >= 1",
                kinds::MIN_ANTHROPIC_COMPACT_TRIGGER
            ),
        ));
    }
    Ok(Compaction::AnthropicCompact { trigger, summary })
}

/// OpenAI's Responses compaction: `threshold` (required), `summary`.
fn openai_compact(input: &str, name: &str, params: Params<'_>) -> Result<Compaction, ConfigError> {
    let (mut threshold, mut summary) = (None, kinds::DEFAULT_AUTOCOMPACT_SUMMARY);
    for (k, v) in params {
        match k {
            "threshold" => threshold = Some(num(input, k, v)?),
            "summary" => summary = num(input, k, v)?,
            _ => return Err(unknown(input, name, k, "threshold, summary")),
        }
    }
    let threshold = threshold.filter(|&t| t >= 1).ok_or_else(|| {
        err(
            input,
            format!(
                "{name} needs threshold=TOKENS >= 1 (compact_threshold has no documented default)"
            ),
        )
    })?;
    if summary < 1 {
        return Err(err(input, format!("{name} needs summary >= 1")));
    }
    Ok(Compaction::OpenAiCompact { threshold, summary })
}

/// LangChain's `SummarizationMiddleware`: `trigger` (tokens:N or messages:N, OR'd with `|`), `keep`, `trim`, `summary`.
fn langchain_summarize(
    input: &str,
    name: &str,
    params: Params<'_>,
) -> Result<Compaction, ConfigError> {
    let mut l = LangchainSummarize {
        trigger_tokens: None,
        trigger_messages: None,
        keep: kinds::DEFAULT_LANGCHAIN_SUMMARIZE_KEEP,
        trim: kinds::DEFAULT_LANGCHAIN_SUMMARIZE_TRIM,
        summary: kinds::DEFAULT_AUTOCOMPACT_SUMMARY,
    };
    let sized = |k: &str, v: &str, what: &str| -> Result<u64, ConfigError> {
        match v.split_once(':') {
            Some((w, n)) if w == what => num(input, k, n),
            _ => Err(err(input, format!("{name}: {k}={v:?} is not {what}:N"))),
        }
    };
    for (k, v) in params {
        match k {
            // A list is OR'd, as the middleware's is.
            "trigger" => {
                for clause in v.split('|') {
                    match clause.split_once(':').map(|(w, _)| w) {
                        Some("tokens") => l.trigger_tokens = Some(sized(k, clause, "tokens")?),
                        Some("messages") => {
                            l.trigger_messages = Some(sized(k, clause, "messages")? as usize)
                        }
                        Some("fraction") => {
                            return Err(err(
                                input,
                                format!(
                                    "{name}: trigger=fraction needs the model's profile (max_input_tokens); give trigger=tokens:N instead"
                                ),
                            ));
                        }
                        _ => {
                            return Err(err(
                                input,
                                format!("{name}: trigger={clause:?} is not tokens:N or messages:N"),
                            ));
                        }
                    }
                }
            }
            "keep" => l.keep = sized(k, v, "messages")? as usize,
            "trim" => l.trim = num(input, k, v)?,
            "summary" => l.summary = num(input, k, v)?,
            _ => return Err(unknown(input, name, k, "trigger, keep, trim, summary")),
        }
    }
    if l.trigger_tokens.is_none() && l.trigger_messages.is_none() {
        return Err(err(
            input,
            format!(
                "{name} needs trigger=tokens:N or trigger=messages:N (the middleware never summarises without one)"
            ),
        ));
    }
    if l.trigger_tokens == Some(0) || l.trigger_messages == Some(0) || l.trim < 1 || l.summary < 1 {
        return Err(err(
            input,
            format!("{name} needs a trigger >= 1, trim >= 1 and summary >= 1"),
        ));
    }
    Ok(Compaction::LangchainSummarize(l))
}

/// The OpenAI Agents SDK's `ToolOutputTrimmer`: `turns`, `max`, `preview`.
fn agents_trim(input: &str, name: &str, params: Params<'_>) -> Result<Compaction, ConfigError> {
    let mut t = AgentsTrim::default();
    for (k, v) in params {
        match k {
            "turns" => t.recent_turns = num(input, k, v)?,
            "max" => t.max_output_chars = num(input, k, v)?,
            "preview" => t.preview_chars = num(input, k, v)?,
            _ => return Err(unknown(input, name, k, "turns, max, preview")),
        }
    }
    // The SDK refuses these (`__post_init__`).
    if t.recent_turns < 1 || t.max_output_chars < 1 {
        return Err(err(input, format!("{name} needs turns >= 1 and max >= 1")));
    }
    Ok(Compaction::AgentsTrim(t))
}

/// The ledger: `t` (threshold, characters) and `k` (results kept whole), both required.
fn ledger(input: &str, name: &str, params: Params<'_>) -> Result<Compaction, ConfigError> {
    let (mut threshold, mut keep_last) = (None, None);
    for (k, v) in params {
        match k {
            "t" | "threshold" => threshold = Some(num(input, k, v)?),
            "k" | "keep" | "keep-last" => keep_last = Some(num(input, k, v)?),
            _ => return Err(unknown(input, name, k, "t, k")),
        }
    }
    Ok(Compaction::Ledger {
        threshold: threshold.ok_or_else(|| err(input, "ledger needs t=CHARS"))?,
        keep_last: keep_last.ok_or_else(|| err(input, "ledger needs k=N"))?,
    })
}

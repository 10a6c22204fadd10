//! The recommendation as an action: what to change, in plain words, and
//! where it can be applied, with a snippet for each place. A config string
//! (`ledger:t=2000,k=1+claude-code:ttl=recorded`) is what tracecost
//! replays; a reader needs the sentence and the setting.

use tracecost_engine::wire::Ttl;
use tracecost_policy::{Cache, Compaction, Config, PeerParams, TtlChoice};

/// One place a recommended policy can be applied.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Place {
    /// Where: a library, an API option.
    pub(super) name: &'static str,
    /// The setting, ready to copy.
    pub(super) snippet: String,
}

/// What to change and where.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Action {
    /// The change in one sentence.
    pub(super) words: String,
    /// Where it can be applied (empty: nothing to change).
    pub(super) places: Vec<Place>,
    /// What the client that ran the sessions can and cannot do, when its
    /// settings cannot express the change.
    pub(super) client_note: Option<String>,
}

/// The action that moves a fleet from `status_quo` (`None`: the sessions
/// ran different policies) to `recommended`.
pub(super) fn action(recommended: &Config, status_quo: Option<&Config>) -> Action {
    let same_compaction = status_quo.is_some_and(|s| s.compaction == recommended.compaction);
    let same_cache = status_quo.is_some_and(|s| s.cache == recommended.cache);
    let compaction = if same_compaction {
        "keep how tool results are handled now".to_owned()
    } else {
        compaction_words(&recommended.compaction)
    };
    let cache = if same_cache {
        keep_cache_words(&recommended.cache)
    } else {
        cache_words(&recommended.cache)
    };
    let mut words = format!("{compaction}; {cache}.");
    capitalize(&mut words);
    let places = if same_compaction {
        Vec::new()
    } else {
        places(&recommended.compaction)
    };
    let claude_code = status_quo.is_some_and(|s| matches!(s.cache, Cache::ClaudeCode { .. }));
    let client_note = (claude_code && !same_compaction).then(|| {
        "Claude Code's settings cannot run this policy: the saving is what agents you build on the API \
         would pay for sessions like these, with the settings below."
            .to_owned()
    });
    Action {
        words,
        places,
        client_note,
    }
}

fn capitalize(s: &mut String) {
    if let Some(first) = s.get(..1) {
        let upper = first.to_uppercase();
        s.replace_range(..1, &upper);
    }
}

/// "a newer result exists", "2 newer results exist".
fn newer_results(n: usize) -> String {
    if n == 1 {
        "a newer result exists".to_owned()
    } else {
        format!("{n} newer results exist")
    }
}

fn compaction_words(c: &Compaction) -> String {
    match c {
        Compaction::Off => "send every tool result whole".to_owned(),
        Compaction::Ledger {
            threshold,
            keep_last,
        } => format!(
            "replace each tool result over {} characters with a short stub once {}the model has answered after it (the model calls `recall_tool_result` to get it back)",
            crate::fmt::thousands(*threshold),
            match keep_last {
                0 => String::new(),
                n => format!("{} and ", newer_results(*n)),
            }
        ),
        Compaction::ClearToolUses(p) => format!(
            "turn on Anthropic's tool-result clearing: past {} input tokens, clear the oldest results but the last {}",
            crate::fmt::thousands(p.0.trigger),
            p.0.keep
        ),
        Compaction::LangchainClear(p) => format!(
            "add LangChain's ClearToolUsesEdit: past {} tokens, clear the oldest results but the last {}",
            crate::fmt::thousands(p.0.trigger),
            p.0.keep
        ),
        Compaction::ClaudeCodeClear {
            keep_tokens,
            at_least,
        } => format!(
            "clear the oldest tool results as Claude Code's microcompaction does, keeping the newest {} tokens of results, {} tokens at a time at least",
            crate::fmt::thousands(*keep_tokens),
            crate::fmt::thousands(*at_least)
        ),
        Compaction::AgentsTrim(t) => format!(
            "add the OpenAI Agents SDK's ToolOutputTrimmer: before the last {} user turns, cut each tool output over {} characters to a {}-character preview",
            t.recent_turns,
            crate::fmt::thousands(t.max_output_chars),
            crate::fmt::thousands(t.preview_chars)
        ),
        Compaction::ClaudeCodeAutocompact { trigger, .. } => match trigger {
            tracecost_policy::AutocompactTrigger::Tokens(t) => format!(
                "let Claude Code summarise the conversation past {} tokens of context (CLAUDE_AUTOCOMPACT_PCT_OVERRIDE lowers it)",
                crate::fmt::thousands(*t)
            ),
            tracecost_policy::AutocompactTrigger::Recorded => {
                "let Claude Code summarise the conversation where it did".to_owned()
            }
        },
        Compaction::AnthropicCompact { trigger, .. } => format!(
            "add Anthropic's server-side compaction: at {} input tokens, the API summarises the context into a compaction block",
            crate::fmt::thousands(*trigger)
        ),
        Compaction::LangchainSummarize(l) => format!(
            "add LangChain's SummarizationMiddleware: past its trigger, summarise all but the last {} messages",
            l.keep
        ),
        Compaction::OpenAiCompact { threshold, .. } => format!(
            "add OpenAI's Responses compaction: past {} tokens, the server compacts the context into one item",
            crate::fmt::thousands(*threshold)
        ),
        Compaction::Recorded => "keep the clearing the client does now".to_owned(),
    }
}

fn ttl_words(ttl: TtlChoice) -> &'static str {
    match ttl {
        TtlChoice::Fixed(Ttl::FiveMinutes) => "a 5-minute lifetime",
        TtlChoice::Fixed(Ttl::OneHour) => "a 1-hour lifetime",
        TtlChoice::Recorded => "the lifetime each call uses now",
    }
}

fn keep_cache_words(c: &Cache) -> String {
    match c {
        Cache::ClaudeCode { .. } => "keep Claude Code's caching as it is".to_owned(),
        Cache::OpenAiAuto { .. } | Cache::GeminiImplicit { .. } => {
            "leave caching to the provider, as now".to_owned()
        }
        _ => "keep the cache markers you have".to_owned(),
    }
}

fn cache_words(c: &Cache) -> String {
    match c {
        Cache::None => "send no cache markers".to_owned(),
        Cache::System { ttl } => format!(
            "mark the tools and the system prompt for caching, with {}",
            ttl_words(*ttl)
        ),
        Cache::Native { ttl, .. } => format!(
            "mark the tools, the system prompt and the latest answered message for caching, with {}",
            ttl_words(*ttl)
        ),
        Cache::Tail { ttl } => format!(
            "mark the last block of every request for caching, with {}",
            ttl_words(*ttl)
        ),
        Cache::Recorded => "keep the cache markers the requests carried".to_owned(),
        Cache::ClaudeCode { ttl } => format!(
            "cache as Claude Code does (the tools, the system prompt and the last block), with {}",
            ttl_words(*ttl)
        ),
        Cache::OpenAiAuto { .. } | Cache::GeminiImplicit { .. } => {
            "leave caching to the provider".to_owned()
        }
        Cache::OpenAiBreakpoints { .. } => {
            "add `prompt_cache_breakpoint`s after the tools and after the system prompt".to_owned()
        }
        Cache::BedrockCachePoint { ttl } => format!(
            "put `cachePoint` blocks after the tools, after the system prompt and on the last block, with {}",
            ttl_words(*ttl)
        ),
        Cache::GeminiExplicit => {
            "store the tools and the system instruction as an explicit cached content".to_owned()
        }
    }
}

fn anthropic_edit(p: &PeerParams) -> String {
    format!(
        "context_management={{\"edits\": [{{\"type\": \"clear_tool_uses_20250919\", \"trigger\": {{\"type\": \"input_tokens\", \"value\": {}}}, \"keep\": {{\"type\": \"tool_uses\", \"value\": {}}}}}]}}",
        p.trigger, p.keep
    )
}

fn langchain_edit(p: &PeerParams) -> String {
    format!(
        "ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger={}, keep={})])",
        p.trigger, p.keep
    )
}

fn places(c: &Compaction) -> Vec<Place> {
    match c {
        Compaction::Ledger {
            threshold,
            keep_last,
        } => vec![
            Place {
                name: "Python agents (the tracecost package)",
                snippet: format!(
                    "tracecost.Compactor(size_threshold={threshold}, keep_last={keep_last})  # and tools + [tracecost.recall_tool_definition()]"
                ),
            },
            Place {
                name: "Rust agents (the tracecost-engine crate)",
                snippet: format!(
                    "Compactor::new(ledger, CompactionPolicy {{ size_threshold: {threshold}, keep_last_n: {keep_last} }})"
                ),
            },
        ],
        Compaction::ClearToolUses(p) => vec![Place {
            name: "Anthropic Messages API (beta context-management-2025-06-27)",
            snippet: anthropic_edit(&p.0),
        }],
        Compaction::LangchainClear(p) => vec![Place {
            name: "LangChain agents (langchain.agents.middleware)",
            snippet: langchain_edit(&p.0),
        }],
        Compaction::AgentsTrim(t) => vec![Place {
            name: "OpenAI Agents SDK (agents.extensions)",
            snippet: format!(
                "RunConfig(call_model_input_filter=ToolOutputTrimmer(recent_turns={}, max_output_chars={}, preview_chars={}))",
                t.recent_turns, t.max_output_chars, t.preview_chars
            ),
        }],
        Compaction::AnthropicCompact { trigger, .. } => vec![Place {
            name: "Anthropic Messages API (beta compact-2026-01-12)",
            snippet: format!(
                "context_management={{\"edits\": [{{\"type\": \"compact_20260112\", \"trigger\": {{\"type\": \"input_tokens\", \"value\": {trigger}}}}}]}}"
            ),
        }],
        Compaction::LangchainSummarize(l) => {
            let mut triggers: Vec<String> = l
                .trigger_tokens
                .map(|t| format!("(\"tokens\", {t})"))
                .into_iter()
                .chain(l.trigger_messages.map(|m| format!("(\"messages\", {m})")))
                .collect();
            let trigger = if triggers.len() == 1 {
                triggers.remove(0)
            } else {
                format!("[{}]", triggers.join(", "))
            };
            vec![Place {
                name: "LangChain agents (langchain.agents.middleware)",
                snippet: format!(
                    "SummarizationMiddleware(model, trigger={trigger}, keep=(\"messages\", {}), trim_tokens_to_summarize={})",
                    l.keep, l.trim
                ),
            }]
        }
        Compaction::OpenAiCompact { threshold, .. } => vec![Place {
            name: "OpenAI Responses API",
            snippet: format!(
                "context_management=[{{\"type\": \"compaction\", \"compact_threshold\": {threshold}}}]"
            ),
        }],
        Compaction::Off
        | Compaction::ClaudeCodeClear { .. }
        | Compaction::ClaudeCodeAutocompact { .. }
        | Compaction::Recorded => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(s: &str) -> Config {
        s.parse().unwrap()
    }

    #[test]
    fn a_ledger_under_claude_codes_caching_reads_as_an_action_with_its_settings() {
        let a = action(
            &config("ledger:t=2000,k=1+claude-code:ttl=recorded"),
            Some(&config("recorded+claude-code:ttl=recorded")),
        );
        assert_eq!(
            a.words,
            "Replace each tool result over 2,000 characters with a short stub once a newer result exists and the model has answered after it (the model calls `recall_tool_result` to get it back); keep Claude Code's caching as it is."
        );
        assert_eq!(a.places.len(), 2);
        assert!(
            a.places[0]
                .snippet
                .starts_with("tracecost.Compactor(size_threshold=2000, keep_last=1)")
        );
        assert!(
            a.client_note
                .unwrap()
                .starts_with("Claude Code's settings cannot run this policy")
        );
    }

    #[test]
    fn a_cache_change_alone_has_no_compaction_setting() {
        let a = action(&config("off+tail:ttl=1h"), Some(&config("off+none")));
        assert_eq!(
            a.words,
            "Keep how tool results are handled now; mark the last block of every request for caching, with a 1-hour lifetime."
        );
        assert!(a.places.is_empty());
        assert_eq!(a.client_note, None);
    }

    #[test]
    fn a_peer_policy_gives_the_peers_own_setting() {
        let a = action(
            &config("clear-tool-uses:trigger=50000,keep=4+system:ttl=5m"),
            None,
        );
        assert!(
            a.words
                .starts_with("Turn on Anthropic's tool-result clearing: past 50,000 input tokens")
        );
        assert!(a.places[0].snippet.contains("\"value\": 50000"));
        assert!(
            a.places[0]
                .snippet
                .contains("\"type\": \"tool_uses\", \"value\": 4")
        );
        let a = action(&config("langchain-clear:trigger=80000,keep=2+none"), None);
        assert_eq!(
            a.places[0].snippet,
            "ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger=80000, keep=2)])"
        );
        let a = action(
            &config("agents-trim:turns=3,max=1000,preview=100+none"),
            None,
        );
        assert_eq!(
            a.places[0].snippet,
            "RunConfig(call_model_input_filter=ToolOutputTrimmer(recent_turns=3, max_output_chars=1000, preview_chars=100))"
        );
    }
}

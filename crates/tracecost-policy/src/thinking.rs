//! Anthropic's `clear_thinking_20251015`: the thinking blocks of earlier
//! assistant turns cleared from the request, the last few turns' kept.
//!
//! The API clears, before the model reads the request, every thinking
//! block but those of the last `keep` assistant turns that hold one
//! (`keep: {type: "thinking_turns", value: N}`, 1 by default when thinking
//! is on; `"all"` keeps every one, which the documentation advises for the
//! most cache hits). It composes with the tool-result edits
//! (`clear_tool_uses_20250919`, listed after it). Each assistant message
//! holding a thinking or redacted-thinking block is a turn here: the trace
//! holds the blocks as sent, and their tokens are counted as any block's.
//! A model whose API drops earlier turns' thinking by itself (the replay's
//! `reasoning_cut`) keeps dropping it: the larger of the two cuts holds.

use std::fmt;

use tracecost_engine::message::{BlockKind, Message, Role};
use tracecost_trace::Trace;

/// `clear_thinking_20251015`'s default: the last thinking turn kept.
pub const DEFAULT_CLEAR_THINKING_KEEP: usize = 1;

/// The config name of the edit, written before the compaction policy
/// (`clear-thinking:keep=1+ledger:t=8000,k=2+claude-code`).
pub const CLEAR_THINKING_NAME: &str = "clear-thinking";

/// Which thinking blocks the edit keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClearThinking {
    /// The last assistant turns with thinking kept (`None`: all).
    pub keep: Option<usize>,
}

impl Default for ClearThinking {
    fn default() -> Self {
        ClearThinking {
            keep: Some(DEFAULT_CLEAR_THINKING_KEEP),
        }
    }
}

impl ClearThinking {
    /// Parses the edit's parameters (`keep=N` or `keep=all`), `input` the
    /// whole config for the error.
    pub(crate) fn parse(input: &str, part: &str) -> Result<Self, crate::ConfigError> {
        let (_, params) = crate::split_params(input, part)?;
        let mut c = ClearThinking::default();
        for (k, v) in params {
            match (k, v) {
                ("keep", "all") => c.keep = None,
                ("keep", n) => match n.parse::<usize>() {
                    Ok(n) if n >= 1 => c.keep = Some(n),
                    _ => {
                        return Err(crate::err(
                            input,
                            format!(
                                "{CLEAR_THINKING_NAME}: keep={n:?} is not a number >= 1 or all"
                            ),
                        ));
                    }
                },
                _ => {
                    return Err(crate::unknown(input, CLEAR_THINKING_NAME, k, "keep"));
                }
            }
        }
        Ok(c)
    }

    /// Per call of `trace`, the messages of its request whose thinking the
    /// edit clears: those before the `keep`-th last assistant message that
    /// holds thinking (0 when fewer hold it, or all are kept).
    pub fn cuts(&self, trace: &Trace) -> Vec<usize> {
        let Some(keep) = self.keep else {
            return vec![0; trace.calls.len()];
        };
        // The assistant messages holding thinking, in order.
        let thinking: Vec<usize> = trace
            .messages
            .iter()
            .enumerate()
            .filter(|(_, m)| holds_thinking(m))
            .map(|(i, _)| i)
            .collect();
        trace
            .calls
            .iter()
            .map(|c| {
                let sent = thinking.partition_point(|&i| i < c.messages);
                // `keep` is at least 1 as parsed; a 0 built in code clears
                // nothing rather than reading past the list.
                sent.checked_sub(keep)
                    .and_then(|k| thinking.get(k).copied())
                    .unwrap_or(0)
            })
            .collect()
    }
}

/// Whether `m` is an assistant turn with thinking.
fn holds_thinking(m: &Message) -> bool {
    m.role() == Role::Assistant
        && m.blocks()
            .iter()
            .any(|b| matches!(b.kind(), BlockKind::Thinking | BlockKind::RedactedThinking))
}

impl fmt::Display for ClearThinking {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.keep {
            Some(n) => write!(f, "{CLEAR_THINKING_NAME}:keep={n}"),
            None => write!(f, "{CLEAR_THINKING_NAME}:keep=all"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_trace::{Call, Prompt};

    fn trace(messages: &[&str], calls: &[usize]) -> Trace {
        Trace {
            name: "t".into(),
            description: String::new(),
            provider: tracecost_engine::cache::ProviderKind::Anthropic,
            model: "m".into(),
            status_quo: None,
            project: None,
            account: None,
            session: None,
            source: None,
            hidden_prefix_tokens: 0,
            prompts: vec![Prompt::default()],
            messages: messages
                .iter()
                .map(|m| Message::from_json(m).unwrap())
                .collect(),
            calls: calls
                .iter()
                .map(|&n| Call {
                    messages: n,
                    ..Call::default()
                })
                .collect(),
        }
    }

    const USER: &str = r#"{"role":"user","content":"go"}"#;
    const THINKS: &str = r#"{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"s"},{"type":"text","text":"ok"}]}"#;
    const PLAIN: &str = r#"{"role":"assistant","content":"ok"}"#;

    /// Keep 1 (the default) clears every thinking turn but the last sent;
    /// keep 2 the last two; all clears none.
    #[test]
    fn clears_all_but_the_last_thinking_turns() {
        let t = trace(
            &[USER, THINKS, USER, PLAIN, USER, THINKS, USER, THINKS, USER],
            &[1, 3, 5, 7, 9],
        );
        let one = ClearThinking::default();
        assert_eq!(one.keep, Some(1));
        assert_eq!(one.cuts(&t), [0, 1, 1, 5, 7]);
        let two = ClearThinking { keep: Some(2) };
        assert_eq!(two.cuts(&t), [0, 0, 0, 1, 5]);
        assert_eq!(ClearThinking { keep: None }.cuts(&t), [0; 5]);
    }

    #[test]
    fn parses_and_prints_its_parameters() {
        let p = |s: &str| ClearThinking::parse(s, s);
        assert_eq!(p("clear-thinking").unwrap(), ClearThinking::default());
        assert_eq!(p("clear-thinking:keep=all").unwrap().keep, None);
        assert_eq!(
            p("clear-thinking:keep=3").unwrap().to_string(),
            "clear-thinking:keep=3"
        );
        assert_eq!(
            p("clear-thinking:keep=0").unwrap_err().reason,
            "clear-thinking: keep=\"0\" is not a number >= 1 or all"
        );
        assert_eq!(
            p("clear-thinking:turns=1").unwrap_err().reason,
            "clear-thinking has no parameter \"turns\" (allowed: keep)"
        );
    }
}

//! The OpenAI Agents SDK's `ToolOutputTrimmer`
//! (`agents.extensions.ToolOutputTrimmer`, a `call_model_input_filter`),
//! replayed as a policy.
//!
//! Before every model call the SDK walks the input items back to the
//! `recent_turns`-th item whose role is `user`; items from there on are
//! never touched. Before it, each `function_call_output` whose output is
//! longer than `max_output_chars` characters is replaced by a preview: a
//! string output by
//! `[Trimmed: NAME output — LEN chars → PREVIEW char preview]\n` and its
//! first `preview_chars` characters and `...` (kept whole when that would
//! not be shorter); a list of `input_text` / `input_image` / `input_file`
//! parts by a header that fits within `max_output_chars` and the text
//! parts' preview. Nothing is kept between calls: it decides afresh from
//! the whole input each time, as here.
//!
//! On the trace's Anthropic-shaped messages an item is what the Responses
//! API makes of them: each tool_result block a `function_call_output` (of
//! the tool its tool_use names), each run of other blocks of a user
//! message one `user` message (unless the record says it was sent as
//! `developer` or `system`). Lengths are Python's: Unicode scalar values.

use std::collections::BTreeMap;

use tracecost_engine::message::{
    BlockKind, Content, ContentBlock, Message, Role, ToolResultContent,
};

/// `ToolOutputTrimmer`'s parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AgentsTrim {
    /// User messages, counted from the end, from which on nothing is
    /// trimmed (`recent_turns`, at least 1).
    pub recent_turns: usize,
    /// Outputs longer than this many characters are trimmed
    /// (`max_output_chars`, at least 1).
    pub max_output_chars: u64,
    /// Characters of a trimmed output kept as its preview (`preview_chars`).
    pub preview_chars: u64,
}

impl Default for AgentsTrim {
    /// The SDK's defaults.
    fn default() -> Self {
        Self {
            recent_turns: crate::kinds::DEFAULT_AGENTS_TRIM_TURNS,
            max_output_chars: crate::kinds::DEFAULT_AGENTS_TRIM_MAX,
            preview_chars: crate::kinds::DEFAULT_AGENTS_TRIM_PREVIEW,
        }
    }
}

/// Where the recent items start: `(message, block)`; every tool result
/// before it is old.
pub type Boundary = (usize, usize);

impl AgentsTrim {
    /// The first block of the `recent_turns`-th user message from the end
    /// (`_find_recent_boundary`); `None` when there are fewer, or it is the
    /// very first item (nothing is old then).
    pub fn boundary(&self, history: &[Message]) -> Option<Boundary> {
        let mut seen = 0;
        for (mi, m) in history.iter().enumerate().rev() {
            if m.role() != Role::User || !sent_as_user(m) {
                continue;
            }
            for start in user_item_starts(m).into_iter().rev() {
                seen += 1;
                if seen >= self.recent_turns {
                    return ((mi, start) != (0, 0)).then_some((mi, start));
                }
            }
        }
        None
    }

    /// What the SDK sends in place of a tool result `content` of tool
    /// `tool_name`, or `None` when it keeps the result whole.
    pub fn trimmed(&self, tool_name: Option<&str>, content: &ToolResultContent) -> Option<String> {
        let name = match tool_name {
            Some(n) if !n.is_empty() => n,
            _ => "unknown_tool",
        };
        match content {
            ToolResultContent::Empty => None,
            ToolResultContent::Text(t) => self.trim_string(name, t),
            ToolResultContent::Blocks(parts) => self.trim_parts(name, parts),
        }
    }

    /// `_trim_function_call_output` on a string output.
    fn trim_string(&self, name: &str, output: &str) -> Option<String> {
        let len = output.chars().count() as u64;
        if len <= self.max_output_chars {
            return None;
        }
        let preview = prefix(output, self.preview_chars);
        let summary = format!(
            "[Trimmed: {name} output — {len} chars → {} char preview]\n{preview}...",
            self.preview_chars
        );
        ((summary.chars().count() as u64) < len).then_some(summary)
    }

    /// `_trim_structured_function_call_output` on a list of parts.
    fn trim_parts(&self, name: &str, parts: &[ContentBlock]) -> Option<String> {
        let (len, text, dropped) = structured_details(parts)?;
        let max = self.max_output_chars;
        if len <= max {
            return None;
        }
        let dropped_note = if dropped.is_empty() {
            String::new()
        } else {
            let counts: Vec<String> = dropped.iter().map(|(t, n)| format!("{n} {t}")).collect();
            format!("; dropped {}", counts.join(", "))
        };
        const MINIMAL: &str = "[Trimmed]";
        let minimal_len = MINIMAL.len() as u64;
        if max < minimal_len {
            return Some(prefix(MINIMAL, max).to_owned());
        }
        let text_len = text.chars().count() as u64;
        let budget = max - minimal_len - 1;
        let preview_len = text_len.min(self.preview_chars).min(budget);
        let mut body = if preview_len > 0 {
            format!("\n{}", prefix(&text, preview_len))
        } else {
            String::new()
        };
        if preview_len < text_len && minimal_len + body.chars().count() as u64 + 3 <= max {
            body.push_str("...");
        }
        let preview_note = if text.is_empty() {
            String::new()
        } else {
            format!("; preview {preview_len}")
        };
        let mut headers = vec![format!(
            "[Trimmed: {name}; payload {len}{preview_note}{dropped_note}]"
        )];
        if !dropped.is_empty() {
            let types: Vec<&str> = dropped.keys().map(|t| &**t).collect();
            let total: u64 = dropped.values().sum();
            headers.extend([
                format!("[Trimmed: {name}{dropped_note}]"),
                format!("[Trimmed{dropped_note}]"),
                format!("[Trimmed: {}]", types.join(", ")),
                format!("[Trimmed: dropped {total} opaque]"),
            ]);
        }
        headers.extend([
            format!("[Trimmed: payload {len}]"),
            format!("[Trimmed: {name}]"),
            MINIMAL.to_owned(),
        ]);
        let body_len = body.chars().count() as u64;
        headers
            .into_iter()
            .find(|h| h.chars().count() as u64 + body_len <= max)
            .map(|h| h + &body)
    }
}

/// The first `n` characters of `s`.
fn prefix(s: &str, n: u64) -> &str {
    match s.char_indices().nth(n as usize) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

/// Whether a user message went out with role `user` (a system or developer
/// message met later in a Responses conversation is recorded as a user
/// message that keeps its role in `source_role`).
fn sent_as_user(m: &Message) -> bool {
    m.fields()
        .get(tracecost_trace::SOURCE_ROLE)
        .is_none_or(|r| r.get() == "\"user\"")
}

/// The block indices at which a user message's `user` items start: a
/// plain-text message is one; else each run of blocks that are not tool
/// results.
fn user_item_starts(m: &Message) -> Vec<usize> {
    match m.content() {
        Content::Text(_) => vec![0],
        Content::Blocks(blocks) => {
            let mut starts = Vec::new();
            let mut open = false;
            for (i, b) in blocks.iter().enumerate() {
                let result = matches!(b.kind(), BlockKind::ToolResult { .. });
                if !result && !open {
                    starts.push(i);
                }
                open = !result;
            }
            starts
        }
    }
}

/// `_structured_output_details`: the payload's length (its parts' string
/// values but `type`), the text parts joined by newlines and the count of
/// the parts dropped by type; `None` for a part the SDK does not know (it
/// then keeps the output whole). A text block is an `input_text` part; an
/// image block the `input_image` whose `image_url` it was made from (its
/// URL, or a `data:` URL of its bytes).
fn structured_details(parts: &[ContentBlock]) -> Option<(u64, String, BTreeMap<String, u64>)> {
    if parts.is_empty() {
        return None;
    }
    let (mut len, mut texts, mut dropped) = (0u64, Vec::new(), BTreeMap::new());
    for part in parts {
        match part.kind() {
            BlockKind::Text { text } => {
                len += text.chars().count() as u64;
                texts.push(&**text);
            }
            BlockKind::Image => {
                len += image_url_len(part)?;
                *dropped.entry("input_image".to_owned()).or_insert(0) += 1;
            }
            _ => return None,
        }
    }
    Some((len, texts.join("\n"), dropped))
}

/// Characters of the `image_url` an image block stands for.
fn image_url_len(image: &ContentBlock) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(&image.to_json()).ok()?;
    let source = v.get("source")?;
    let str_of = |k: &str| source.get(k).and_then(serde_json::Value::as_str);
    let n = match str_of("type")? {
        "url" => str_of("url")?.chars().count(),
        "base64" => {
            "data:;base64,".len() + str_of("media_type")?.chars().count() + str_of("data")?.len()
        }
        _ => return None,
    };
    Some(n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(json: &str) -> Message {
        Message::from_json(json).unwrap()
    }

    fn text_result(text: &str) -> ToolResultContent {
        ToolResultContent::Text(text.into())
    }

    #[test]
    fn string_outputs_over_the_limit_become_a_preview_with_the_sdks_marker() {
        let t = AgentsTrim::default();
        assert_eq!(
            t.trimmed(Some("search"), &text_result(&"a".repeat(500))),
            None
        );
        let out = format!("{}{}", "é".repeat(200), "b".repeat(301));
        assert_eq!(
            t.trimmed(Some("search"), &text_result(&out)).unwrap(),
            format!(
                "[Trimmed: search output — 501 chars → 200 char preview]\n{}...",
                "é".repeat(200)
            )
        );
        assert!(
            t.trimmed(None, &text_result(&out))
                .unwrap()
                .starts_with("[Trimmed: unknown_tool output")
        );
        // A preview no shorter than the output keeps it whole.
        let t = AgentsTrim {
            max_output_chars: 10,
            preview_chars: 200,
            ..t
        };
        assert_eq!(t.trimmed(Some("s"), &text_result(&"x".repeat(250))), None);
    }

    #[test]
    fn structured_outputs_fit_a_header_and_preview_within_the_limit() {
        let parts = vec![
            ContentBlock::text(&"t".repeat(600)),
            ContentBlock::from_json(
                r#"{"type":"image","source":{"type":"url","url":"https://e.x/a.png"}}"#,
            )
            .unwrap(),
        ];
        let t = AgentsTrim::default();
        let got = t
            .trimmed(Some("shot"), &ToolResultContent::Blocks(parts.clone()))
            .unwrap();
        assert_eq!(
            got,
            format!(
                "[Trimmed: shot; payload 617; preview 200; dropped 1 input_image]\n{}...",
                "t".repeat(200)
            )
        );
        // A tight limit falls back to shorter headers.
        let t = AgentsTrim {
            max_output_chars: 30,
            ..t
        };
        let got = t
            .trimmed(Some("shot"), &ToolResultContent::Blocks(parts))
            .unwrap();
        assert_eq!(got, format!("[Trimmed]\n{}", "t".repeat(20)));
        assert!(got.chars().count() <= 30);
        // A part the SDK does not know keeps the output whole.
        let doc = ContentBlock::from_json(r#"{"type":"document","source":{}}"#).unwrap();
        assert_eq!(
            AgentsTrim::default().trimmed(Some("x"), &ToolResultContent::Blocks(vec![doc])),
            None
        );
    }

    #[test]
    fn the_boundary_is_the_nth_user_message_from_the_end() {
        let h = vec![
            msg(r#"{"role":"user","content":"first"}"#),
            msg(
                r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"s","input":{}}]}"#,
            ),
            msg(
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"r"},{"type":"text","text":"second"}]}"#,
            ),
            msg(r#"{"role":"assistant","content":"ok"}"#),
            msg(r#"{"role":"user","content":"third","source_role":"developer"}"#),
        ];
        let t = |n| AgentsTrim {
            recent_turns: n,
            ..AgentsTrim::default()
        };
        // The developer message is not a user item; the text after the
        // result is, so the result itself is old.
        assert_eq!(t(1).boundary(&h), Some((2, 1)));
        // The 2nd from the end is the very first item: nothing is old.
        assert_eq!(t(2).boundary(&h), None);
        assert_eq!(t(3).boundary(&h), None);
    }

    /// Tokens are not what this policy decides on.
    struct NoTokens;
    impl crate::BlockTokens for NoTokens {
        fn block_tokens(&self, _: &ContentBlock) -> u64 {
            0
        }
    }

    /// The conversation and the outputs the real `ToolOutputTrimmer` sent
    /// (`tests/fixtures/agents-trim/make_agents_trim_fixture.py`): each
    /// setting's config, replayed, sends the same text for every result.
    #[test]
    fn sends_what_the_real_trimmer_sends() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/agents-trim/"
        );
        let read = |f: &str| std::fs::read_to_string(format!("{dir}{f}")).unwrap();
        let conversation: Vec<serde_json::Value> =
            serde_json::from_str(&read("conversation.json")).unwrap();
        let history: Vec<Message> = conversation
            .iter()
            .map(|m| Message::from_json(&m.to_string()).unwrap())
            .collect();
        let trimmed: serde_json::Value = serde_json::from_str(&read("trimmed.json")).unwrap();
        let settings = trimmed["settings"].as_array().unwrap();
        assert_eq!(settings.len(), 4);
        for setting in settings {
            let config = setting["config"].as_str().unwrap();
            let compaction: crate::Config = format!("{config}+none").parse().unwrap();
            let mut run = crate::CompactionRun::new(&compaction.compaction);
            let view = run.view(&history, 0, &NoTokens).unwrap();
            let mut seen = 0;
            for (wm, m) in view.view.messages.iter().zip(&history) {
                for (bi, b) in m.blocks().iter().enumerate() {
                    let BlockKind::ToolResult { tool_use_id, .. } = b.kind() else {
                        continue;
                    };
                    seen += 1;
                    let sent = wm
                        .blocks
                        .as_ref()
                        .map_or(std::borrow::Cow::Borrowed(b), |bs| bs[bi].block());
                    let expected = &setting["outputs"][&**tool_use_id];
                    match (expected, sent.kind()) {
                        (
                            serde_json::Value::String(want),
                            BlockKind::ToolResult {
                                content: ToolResultContent::Text(got),
                                ..
                            },
                        ) => assert_eq!(&**got, want, "{config}: {tool_use_id}"),
                        // A structured output the SDK kept whole is sent as recorded.
                        (serde_json::Value::Array(_), _) => {
                            assert!(std::ptr::eq(&*sent, b), "{config}: {tool_use_id} kept")
                        }
                        other => panic!("{config}: {tool_use_id}: {other:?}"),
                    }
                }
            }
            assert_eq!(seen, 6);
        }
    }

    #[test]
    fn every_call_sends_the_same_replacement() {
        let mut h = vec![msg(r#"{"role":"user","content":"one"}"#)];
        let big = "z".repeat(900);
        h.push(msg(
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"s","input":{}}]}"#,
        ));
        h.push(msg(&format!(
            r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"a","content":"{big}"}}]}}"#
        )));
        h.push(msg(r#"{"role":"user","content":"two"}"#));
        h.push(msg(r#"{"role":"user","content":"three"}"#));
        let c: crate::Config = "agents-trim+none".parse().unwrap();
        let mut run = crate::CompactionRun::new(&c.compaction);
        let first = run.view(&h[..4], 0, &NoTokens).unwrap();
        assert!(first.compacted.is_empty(), "two user turns: nothing is old");
        let a = run.view(&h, 0, &NoTokens).unwrap();
        let b = run.view(&h, 0, &NoTokens).unwrap();
        assert_eq!(a.compacted.len(), 1);
        assert!(a.view.messages[2].same_objects(&b.view.messages[2]));
        let other = crate::CompactionRun::new(&c.compaction)
            .view(&h, 0, &NoTokens)
            .unwrap();
        let json = |v: &crate::PolicyView<'_>| {
            v.view.messages[2].blocks.as_ref().unwrap()[0]
                .block()
                .to_json()
        };
        assert_eq!(json(&a), json(&other));
    }
}

//! OpenInference's (Arize Phoenix) LLM spans: content in flattened keys,
//! `llm.input_messages.{i}.message.*` and `llm.output_messages.{i}.message.*`
//! (a `role`; text in `content`, or in `contents.{j}.message_content.text`
//! where its `type` is `text`; tool calls in
//! `tool_calls.{k}.tool_call.{id, function.name, function.arguments}`; a
//! tool's answer as role `tool` with `tool_call_id` and `content`), tools
//! in `llm.tools.{i}.tool.json_schema` (a JSON string). A `system` message
//! is the prompt's system text. The `contents` items of type `tool_use`
//! repeat the `tool_calls` and are not read twice.

use std::collections::BTreeMap;

use serde_json::Value;

use super::attrs::Attrs;
use super::parts::{Content, arguments, push, tools};
use crate::common::{ResultContent, Unmapped, tool_result_block, tool_use_block};
use tracecost_engine::message::{ContentBlock, Message, Role};

/// One flattened message: its members by the key after `message.`.
type Flat<'a> = BTreeMap<&'a str, &'a Value>;

/// The flattened messages under `prefix` (`llm.input_messages.`), in
/// index order.
fn flat_messages<'a>(a: &'a Attrs, prefix: &str) -> Vec<Flat<'a>> {
    let mut by_index: BTreeMap<usize, Flat<'a>> = BTreeMap::new();
    for (k, v) in &a.0 {
        let Some(rest) = k.strip_prefix(prefix) else {
            continue;
        };
        let Some((i, member)) = rest.split_once(".message.") else {
            continue;
        };
        let Ok(i) = i.parse::<usize>() else {
            continue;
        };
        by_index.entry(i).or_default().insert(member, v);
    }
    by_index.into_values().collect()
}

/// Numbered groups under `prefix` in one message (`tool_calls.`), in
/// index order, each by the rest of its key.
fn numbered<'a>(m: &Flat<'a>, prefix: &str) -> Vec<Flat<'a>> {
    let mut by_index: BTreeMap<usize, Flat<'a>> = BTreeMap::new();
    for (k, v) in m {
        let Some(rest) = k.strip_prefix(prefix) else {
            continue;
        };
        let Some((i, member)) = rest.split_once('.') else {
            continue;
        };
        if let Ok(i) = i.parse::<usize>() {
            by_index.entry(i).or_default().insert(member, v);
        }
    }
    by_index.into_values().collect()
}

fn text_of(v: Option<&&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

/// One flattened message's role and blocks.
fn message(m: &Flat<'_>, un: &mut Unmapped) -> (String, Vec<ContentBlock>) {
    let role = m
        .get("role")
        .and_then(|v| v.as_str())
        .unwrap_or("user")
        .to_owned();
    let mut blocks = Vec::new();
    if role == "tool" {
        let id = m.get("tool_call_id").and_then(|v| v.as_str()).unwrap_or("");
        let text = text_of(m.get("content")).unwrap_or_default();
        blocks.push(tool_result_block(id, ResultContent::Text(text), false));
        return (role, blocks);
    }
    if let Some(t) = text_of(m.get("content")) {
        blocks.push(ContentBlock::text(&t));
    }
    for c in numbered(m, "contents.") {
        match c.get("message_content.type").and_then(|v| v.as_str()) {
            Some("text") => {
                if let Some(t) = text_of(c.get("message_content.text")) {
                    blocks.push(ContentBlock::text(&t));
                }
            }
            // The tool calls, read from `tool_calls` below.
            Some("tool_use") => {}
            Some("image") => un.add("media parts (not read; dropped)", 1),
            _ => un.add("parts of another type (dropped)", 1),
        }
    }
    for call in numbered(m, "tool_calls.") {
        let id = call
            .get("tool_call.id")
            .and_then(|v| v.as_str())
            .unwrap_or("");
        let name = call
            .get("tool_call.function.name")
            .and_then(|v| v.as_str())
            .unwrap_or("");
        let args = call.get("tool_call.function.arguments").copied();
        blocks.push(tool_use_block(id, name, arguments(args)));
    }
    (role, blocks)
}

/// The content of an OpenInference LLM span.
pub(crate) fn content(a: &Attrs, un: &mut Unmapped) -> Content {
    let mut out = Content::default();
    for m in flat_messages(a, "llm.input_messages.") {
        let (role, blocks) = message(&m, un);
        if role == "system" {
            out.system.extend(blocks);
        } else {
            push(&mut out.messages, &role, blocks, un);
        }
    }
    let outputs = flat_messages(a, "llm.output_messages.");
    un.add(
        "output messages after the first (dropped)",
        outputs.len().saturating_sub(1),
    );
    if let Some(m) = outputs.first() {
        let (_, blocks) = message(m, un);
        if !blocks.is_empty() {
            out.reply = Some(Message::new(Role::Assistant, blocks));
        }
    }
    let mut defs: BTreeMap<usize, Value> = BTreeMap::new();
    for (k, v) in &a.0 {
        let Some(rest) = k.strip_prefix("llm.tools.") else {
            continue;
        };
        let Some((i, "tool.json_schema")) = rest.split_once('.') else {
            continue;
        };
        let (Ok(i), Some(s)) = (i.parse::<usize>(), v.as_str()) else {
            continue;
        };
        match serde_json::from_str::<Value>(s) {
            Ok(d) => {
                defs.insert(i, d);
            }
            Err(_) => un.add("tool schemas that are not JSON (dropped)", 1),
        }
    }
    out.tools = tools(&defs.into_values().collect::<Vec<_>>(), un);
    out
}

//! The GenAI conventions' content attributes, in their "parts" schema, as
//! Anthropic shapes: `gen_ai.system_instructions` (a list of parts),
//! `gen_ai.input.messages` / `gen_ai.output.messages` (messages of
//! `{role, parts}`) and `gen_ai.tool.definitions`.
//!
//! Parts: `text {content}` → a text block; `tool_call {id, name,
//! arguments}` → a `tool_use` block (arguments an object, or a string of
//! JSON); `tool_call_response {id, response}` → a `tool_result` block (a
//! string response as its text, other JSON as its JSON text). Roles:
//! `system` messages (OpenAI's instrumentations put the system prompt
//! there) → the prompt's system blocks; `user`, and `tool` (a tool's
//! answer) → user messages; `assistant` → assistant messages. Reasoning,
//! media (`blob`, `uri`, `file`) and unknown parts are dropped and
//! counted.

use serde_json::Value;

use super::Attrs;
use crate::common::{ResultContent, Unmapped, tool_result_block, tool_use_block};
use crate::engine::json::{RawObject, raw_json, raw_string};
use crate::engine::message::{ContentBlock, Message, Role, ToolDefinition};

/// A call's content, as read from a span.
#[derive(Default)]
pub(crate) struct Content {
    pub system: Vec<ContentBlock>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDefinition>,
    pub reply: Option<Message>,
    /// The cache markers, where the export records them (Langfuse's
    /// input keeps Anthropic's `cache_control` as sent).
    pub markers: Option<Vec<crate::engine::wire::Marker>>,
}

/// The content of a span written in the GenAI conventions.
pub(crate) fn content(a: &Attrs, un: &mut Unmapped) -> Content {
    let mut out = Content::default();
    if let Some(Value::Array(parts)) = a.json("gen_ai.system_instructions") {
        out.system.extend(blocks(&parts, un));
    }
    if let Some(Value::Array(ms)) = a.json("gen_ai.input.messages") {
        for m in &ms {
            let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
            let parts = m
                .get("parts")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let bs = blocks(parts, un);
            if role == "system" {
                out.system.extend(bs);
                continue;
            }
            push(&mut out.messages, role, bs, un);
        }
    } else if a.str("gen_ai.input.messages").is_some() {
        un.add(
            "gen_ai.input.messages that are not JSON lists of messages (dropped)",
            1,
        );
    }
    if let Some(Value::Array(ms)) = a.json("gen_ai.output.messages") {
        un.add(
            "output messages after the first (dropped)",
            ms.len().saturating_sub(1),
        );
        if let Some(m) = ms.first() {
            let parts = m
                .get("parts")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let bs = blocks(parts, un);
            if !bs.is_empty() {
                out.reply = Some(Message::new(Role::Assistant, bs));
            }
        }
    }
    if let Some(Value::Array(defs)) = a.json("gen_ai.tool.definitions") {
        out.tools = tools(&defs, un);
    }
    out
}

/// Adds a message of `role`: consecutive messages of one role (a `tool`
/// message per result after a user turn) are one Anthropic message.
pub(crate) fn push(
    messages: &mut Vec<Message>,
    role: &str,
    blocks: Vec<ContentBlock>,
    un: &mut Unmapped,
) {
    if blocks.is_empty() {
        un.add("messages with no part mapped (dropped)", 1);
        return;
    }
    let role = match role {
        "assistant" | "model" => Role::Assistant,
        _ => Role::User,
    };
    match messages.last() {
        Some(last) if last.role() == role => {
            let mut merged = last.blocks().to_vec();
            merged.extend(blocks);
            let n = messages.len();
            messages[n - 1] = Message::new(role, merged);
        }
        _ => messages.push(Message::new(role, blocks)),
    }
}

/// The parts of one message as blocks.
fn blocks(parts: &[Value], un: &mut Unmapped) -> Vec<ContentBlock> {
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        let kind = p.get("type").and_then(Value::as_str).unwrap_or("");
        match kind {
            "text" => match p.get("content").and_then(Value::as_str) {
                Some(t) => out.push(ContentBlock::text(t)),
                None => un.add("text parts without content (dropped)", 1),
            },
            "tool_call" => {
                let id = p.get("id").and_then(Value::as_str).unwrap_or("");
                let name = p.get("name").and_then(Value::as_str).unwrap_or("");
                out.push(tool_use_block(id, name, arguments(p.get("arguments"))));
            }
            "tool_call_response" => {
                let id = p.get("id").and_then(Value::as_str).unwrap_or("");
                let text = match p.get("response") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                    None => String::new(),
                };
                out.push(tool_result_block(id, ResultContent::Text(text), false));
            }
            "reasoning" | "thinking" => un.add("reasoning parts (not resent; dropped)", 1),
            "blob" | "uri" | "file" => un.add("media parts (not read; dropped)", 1),
            _ => un.add("parts of another type (dropped)", 1),
        }
    }
    out
}

/// A tool call's arguments as the `tool_use` input: an object as it is, a
/// string holding JSON as that JSON, anything else as an empty object.
pub(crate) fn arguments(v: Option<&Value>) -> Box<serde_json::value::RawValue> {
    let object = match v {
        Some(o @ Value::Object(_)) => Some(o.clone()),
        Some(Value::String(s)) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_object),
        _ => None,
    };
    raw_json(object.map_or_else(|| "{}".to_owned(), |o| o.to_string()))
}

/// Tool definitions: `{name, description, input_schema | parameters}`, or
/// OpenAI's `{type: "function", function: {…}}`.
pub(crate) fn tools(defs: &[Value], un: &mut Unmapped) -> Vec<ToolDefinition> {
    let mut out: Vec<ToolDefinition> = Vec::with_capacity(defs.len());
    for d in defs {
        let f = d.get("function").filter(|f| f.is_object()).unwrap_or(d);
        let Some(name) = f.get("name").and_then(Value::as_str) else {
            un.add("tool definitions without a name (dropped)", 1);
            continue;
        };
        if out.iter().any(|t| t.name() == name) {
            un.add("tool definitions repeating a name (dropped)", 1);
            continue;
        }
        let mut def = RawObject::new();
        def.set("name", raw_string(name));
        if let Some(desc) = f.get("description").and_then(Value::as_str) {
            def.set("description", raw_string(desc));
        }
        let schema = f
            .get("input_schema")
            .or_else(|| f.get("parameters"))
            .filter(|s| s.is_object())
            .map_or_else(
                || r#"{"type":"object","properties":{}}"#.to_owned(),
                Value::to_string,
            );
        def.set("input_schema", raw_json(schema));
        match ToolDefinition::from_object(def) {
            Ok(t) => out.push(t),
            Err(_) => un.add("tool definitions without a name (dropped)", 1),
        }
    }
    out
}

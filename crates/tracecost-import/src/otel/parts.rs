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

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::attrs::Attrs;
use crate::common::{ResultContent, Unmapped, message_key, tool_result_block, tool_use_block};
use tracecost_engine::json::{RawObject, raw_json, raw_string};
use tracecost_engine::message::{ContentBlock, Message, Role, ToolDefinition};

/// A call's content, as read from a span.
#[derive(Default)]
pub(crate) struct Content {
    pub system: Vec<ContentBlock>,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDefinition>,
    pub reply: Option<Message>,
    /// The cache markers, where the export records them (Langfuse's
    /// input keeps Anthropic's `cache_control` as sent).
    pub markers: Option<Vec<tracecost_engine::wire::Marker>>,
}

/// The messages a file's spans have sent, mapped once: each span of a
/// conversation resends all of it, so mapping (and keying) every message
/// of every span again would cost the square of the conversation's length.
/// A run of messages of one role (one Anthropic message) is found by the
/// hash of its raw JSON texts; what it could not map is kept with it and
/// counted again at each use, as if it had been mapped again. Bounded: the
/// cache is emptied when it holds more than [`CACHE_BYTES`] of raw text.
#[derive(Default)]
pub(crate) struct MessageCache {
    map: HashMap<u64, Cached>,
    bytes: usize,
}

struct Cached {
    message: Option<Arc<Message>>,
    key: u64,
    unmapped: Unmapped,
}

/// Raw bytes of messages the cache holds at most.
const CACHE_BYTES: usize = 32 << 20;

/// The content of a span written in the GenAI conventions; its input
/// messages come apart, shared with `cache`, with their keys.
pub(crate) fn content(
    a: &Attrs,
    cache: &mut MessageCache,
    un: &mut Unmapped,
) -> (Content, Vec<Arc<Message>>, Vec<u64>) {
    let mut out = Content::default();
    if let Some(Value::Array(parts)) = a.json("gen_ai.system_instructions") {
        out.system.extend(blocks(&parts, un));
    }
    let mut messages = Vec::new();
    let mut keys = Vec::new();
    let input = match a.raw("gen_ai.input.messages") {
        Some(Value::String(s)) => serde_json::from_str::<Vec<RawMessage>>(s).ok(),
        Some(v @ Value::Array(_)) => {
            // Structured (log records): mapped as written, no cache.
            owned_input(v, &mut out.system, &mut messages, &mut keys, un);
            Some(Vec::new())
        }
        _ => None,
    };
    match input {
        Some(items) => input_messages(&items, cache, &mut out.system, &mut messages, &mut keys, un),
        None if a.raw("gen_ai.input.messages").is_some() => un.add(
            "gen_ai.input.messages that are not JSON lists of messages (dropped)",
            1,
        ),
        None => {}
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
    (out, messages, keys)
}

/// A GenAI message read without building its parts: its role, and its
/// parts' raw JSON text (one pass over the attribute's text).
#[derive(Deserialize)]
struct RawMessage<'a> {
    #[serde(borrow, default)]
    role: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    parts: Option<&'a RawValue>,
}

fn role_of(role: &str) -> Option<Role> {
    match role {
        "system" => None,
        "assistant" | "model" => Some(Role::Assistant),
        _ => Some(Role::User),
    }
}

/// Input messages given as JSON text: system messages into `system`,
/// runs of one role into one message each, from `cache` where it holds
/// them.
fn input_messages(
    items: &[RawMessage<'_>],
    cache: &mut MessageCache,
    system: &mut Vec<ContentBlock>,
    messages: &mut Vec<Arc<Message>>,
    keys: &mut Vec<u64>,
    un: &mut Unmapped,
) {
    let mut run: Vec<Option<&RawValue>> = Vec::new();
    let mut run_role = Role::User;
    for item in items {
        let Some(role) = role_of(item.role.as_deref().unwrap_or("user")) else {
            system.extend(blocks(&raw_parts(item.parts), un));
            continue;
        };
        if role != run_role && !run.is_empty() {
            add_run(&run, run_role, cache, messages, keys, un);
            run.clear();
        }
        run_role = role;
        run.push(item.parts);
    }
    if !run.is_empty() {
        add_run(&run, run_role, cache, messages, keys, un);
    }
}

/// A message's parts, from their raw text (none: no parts).
fn raw_parts(parts: Option<&RawValue>) -> Vec<Value> {
    parts
        .and_then(|p| serde_json::from_str::<Vec<Value>>(p.get()).ok())
        .unwrap_or_default()
}

/// One run of messages of one role, as one message (from the cache, or
/// mapped and cached); a run with nothing mapped is dropped, and the
/// message before it takes the next one's blocks if they share a role.
fn add_run(
    run: &[Option<&RawValue>],
    role: Role,
    cache: &mut MessageCache,
    messages: &mut Vec<Arc<Message>>,
    keys: &mut Vec<u64>,
    un: &mut Unmapped,
) {
    let mut h = DefaultHasher::new();
    role.as_str().hash(&mut h);
    for r in run {
        r.map_or("", |r| r.get()).hash(&mut h);
    }
    let id = h.finish();
    if !cache.map.contains_key(&id) {
        let mut mapped = Unmapped::default();
        let mut bs = Vec::new();
        for r in run {
            let b = blocks(&raw_parts(*r), &mut mapped);
            if b.is_empty() {
                mapped.add("messages with no part mapped (dropped)", 1);
            }
            bs.extend(b);
        }
        let message = (!bs.is_empty()).then(|| Arc::new(Message::new(role, bs)));
        let key = message.as_deref().map_or(0, message_key);
        let size: usize = run.iter().flatten().map(|r| r.get().len()).sum();
        if cache.bytes + size > CACHE_BYTES {
            cache.map.clear();
            cache.bytes = 0;
        }
        cache.bytes += size;
        cache.map.insert(
            id,
            Cached {
                message,
                key,
                unmapped: mapped,
            },
        );
    }
    let Some(c) = cache.map.get(&id) else {
        return;
    };
    un.merge(&c.unmapped);
    let Some(m) = &c.message else {
        return;
    };
    match messages.last() {
        // A run dropped between two of one role: they are one message.
        Some(last) if last.role() == role => {
            let mut merged = last.blocks().to_vec();
            merged.extend(m.blocks().iter().cloned());
            let merged = Message::new(role, merged);
            let n = messages.len();
            keys[n - 1] = message_key(&merged);
            messages[n - 1] = Arc::new(merged);
        }
        _ => {
            messages.push(m.clone());
            keys.push(c.key);
        }
    }
}

/// Input messages given as structured values (log records' attributes).
fn owned_input(
    v: &Value,
    system: &mut Vec<ContentBlock>,
    messages: &mut Vec<Arc<Message>>,
    keys: &mut Vec<u64>,
    un: &mut Unmapped,
) {
    let mut plain: Vec<Message> = Vec::new();
    for m in v.as_array().map_or(&[][..], Vec::as_slice) {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        let bs = blocks(parts_of(m), un);
        if role == "system" {
            system.extend(bs);
            continue;
        }
        push(&mut plain, role, bs, un);
    }
    for m in plain {
        keys.push(message_key(&m));
        messages.push(Arc::new(m));
    }
}

fn parts_of(m: &Value) -> &[Value] {
    m.get("parts")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
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

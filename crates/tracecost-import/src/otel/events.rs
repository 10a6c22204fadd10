//! The per-message log events of the GenAI conventions before 1.37, which
//! instrumentations still emit by default (opentelemetry-instrumentation-
//! openai-v2 2.3 and older, among others): one log record per message sent
//! (`gen_ai.system.message`, `gen_ai.user.message`,
//! `gen_ai.assistant.message`, `gen_ai.tool.message`) and one per choice
//! returned (`gen_ai.choice`), each naming the span of its call by its
//! trace and span ids. The span holds the model and the usage; the events
//! hold the content.
//!
//! The bodies are in the conventions' shape, which is OpenAI Chat
//! Completions' whatever the provider: `{content}` for a system or user
//! message, `{content, tool_calls: [{id, type, function: {name,
//! arguments}}]}` for the assistant's, `{content, id}` for a tool's answer,
//! `{index, finish_reason, message}` for a choice. They are mapped as the
//! OpenAI Chat Completions importer maps a request.
//!
//! A span's events are kept (in [`crate::common::Shared::pending`]) until
//! its span is read, which is why an export's logs files are read before
//! its traces files: the memory this takes grows with the content of the
//! events not yet matched, not with the spans.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::parts::Content;
use crate::chat::{self, ChatRequest, Dialect};
use crate::common::{IdGen, Unmapped};
use tracecost_trace::Prompt;

/// The per-message events, by name, and the role each gives its message
/// (`None`: a choice, the reply).
const MESSAGE_EVENTS: [(&str, Option<&str>); 5] = [
    ("gen_ai.system.message", Some("system")),
    ("gen_ai.user.message", Some("user")),
    ("gen_ai.assistant.message", Some("assistant")),
    ("gen_ai.tool.message", Some("tool")),
    ("gen_ai.choice", None),
];

/// A log record's event name: `eventName`, or the `event.name` attribute
/// older SDKs write.
pub(super) fn event_name(record: &Value) -> Option<&str> {
    if let Some(n) = record.get("eventName").and_then(Value::as_str) {
        return Some(n);
    }
    let attrs = record.get("attributes").and_then(Value::as_array)?;
    attrs.iter().find_map(|kv| {
        (kv.get("key")?.as_str()? == "event.name")
            .then(|| kv.get("value")?.get("stringValue")?.as_str())
            .flatten()
    })
}

/// Whether a log record is one of the per-message events.
pub(super) fn is_message_event(record: &Value) -> bool {
    event_name(record).is_some_and(|n| MESSAGE_EVENTS.iter().any(|(e, _)| *e == n))
}

/// The key of a span's events: its trace and span ids, as
/// [`crate::common::Shared::calls`] keys calls.
pub(super) fn key(trace: &str, span: &str) -> String {
    format!("{trace}/{span}")
}

/// Keeps a per-message event for its span, in the order read (the order
/// the instrumentation emitted them: the messages as sent, then the
/// choices). `false`: the record names no span, so no call can claim it.
pub(super) fn keep(record: &Value, file: usize, pending: &mut HashMap<String, Vec<Value>>) -> bool {
    let id = |k: &str| record.get(k).and_then(Value::as_str).unwrap_or("");
    let (trace, span) = (id("traceId"), id("spanId"));
    let Some(name) = event_name(record) else {
        return false;
    };
    if trace.is_empty() || span.is_empty() {
        return false;
    }
    let body = record
        .get("body")
        .and_then(super::attrs::any_value)
        .unwrap_or(Value::Null);
    pending
        .entry(key(trace, span))
        .or_default()
        .push(json!({"event": name, "body": body, "file": file}));
    true
}

/// The files the events were read from (numbered as
/// [`crate::common::Shared::file`]).
pub(super) fn files(events: &[Value]) -> impl Iterator<Item = usize> + '_ {
    events
        .iter()
        .filter_map(|e| e.get("file")?.as_u64())
        .map(|f| f as usize)
}

/// A call's content from its span's events. An empty content when the
/// events do not hold the messages' content (the instrumentation's content
/// capture was off: bodies without `content`).
pub(super) fn content(
    events: &[Value],
    base: &str,
    ids: &mut IdGen,
    un: &mut Unmapped,
) -> Result<Content, String> {
    let mut messages = Vec::new();
    let mut choices = Vec::new();
    let mut captured: Option<bool> = None;
    for e in events {
        let name = e.get("event").and_then(Value::as_str).unwrap_or("");
        let body = e.get("body").unwrap_or(&Value::Null);
        let Some((_, role)) = MESSAGE_EVENTS.iter().find(|(n, _)| *n == name) else {
            continue;
        };
        // Content capture off leaves `content` out of every body: a
        // system, user or tool message without it was not recorded (an
        // assistant's may be only tool calls).
        if matches!(role, Some("system" | "user" | "tool")) {
            let has = body.get("content").is_some_and(|c| !c.is_null());
            captured = Some(captured.unwrap_or(true) && has);
        }
        match role {
            Some(role) => messages.push(message(role, body)),
            None => choices.push(body),
        }
    }
    if captured != Some(true) {
        return Ok(Content::default());
    }
    let Some(req) = chat::request(Dialect::OpenAi, &messages, None, base, ids, un)? else {
        return Ok(Content::default());
    };
    // The first choice is the reply the conversation went on with.
    let first = choices
        .iter()
        .min_by_key(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0));
    let reply = first.and_then(|c| {
        let mut m = c.get("message").cloned().unwrap_or(Value::Null);
        if let Value::Object(o) = &mut m {
            o.remove("role");
        }
        chat::reply(&m, ids, un)
    });
    let ChatRequest {
        messages,
        prompt: Prompt { system, tools },
        markers: _,
    } = req;
    Ok(Content {
        system,
        messages,
        tools,
        reply,
        markers: None,
    })
}

/// An event's body as an OpenAI chat message of `role`.
fn message(role: &str, body: &Value) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("role".into(), json!(role));
    let content = body.get("content").cloned().unwrap_or(Value::Null);
    m.insert("content".into(), content);
    if let Some(calls) = body.get("tool_calls").filter(|c| !c.is_null()) {
        m.insert("tool_calls".into(), arguments_as_text(calls));
    }
    if role == "tool"
        && let Some(id) = body.get("id")
    {
        m.insert("tool_call_id".into(), id.clone());
    }
    Value::Object(m)
}

/// Tool calls with their arguments as a string of JSON, as the Chat
/// Completions API writes them (instrumentations record them either way).
fn arguments_as_text(calls: &Value) -> Value {
    let mut calls = calls.clone();
    for c in calls.as_array_mut().into_iter().flatten() {
        if let Some(args) = c.pointer_mut("/function/arguments")
            && !args.is_string()
        {
            *args = Value::String(args.to_string());
        }
    }
    calls
}

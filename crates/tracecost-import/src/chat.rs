//! Chat requests as observability tools record them (Langfuse
//! generations, LangSmith runs, the OpenAI Agents SDK's generation spans):
//! a list of role/content messages, and sometimes the tools, in either the
//! Anthropic Messages shape or the OpenAI Chat shape, depending on the
//! client that was traced. Both map through the importers of those APIs,
//! so a message reads the same whichever envelope carried it.
//!
//! The shape is OpenAI's when a message has a role only OpenAI uses
//! (`tool`, `developer`, `function`) or `tool_calls`, or a content part
//! only OpenAI uses (`image_url`, `input_audio`); otherwise Anthropic's,
//! whose `system`-role messages become the system prompt (these tools
//! record Anthropic's `system` parameter as a first message of that role).

use serde_json::Value;
use serde_json::value::RawValue;

use crate::common::{IdGen, Unmapped};
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::json::RawObject;
use tracecost_engine::message::{Message, Role, ToolDefinition};
use tracecost_engine::wire::Marker;
use tracecost_trace::Prompt;

/// One request's conversation, prompt and cache markers.
pub(crate) struct ChatRequest {
    /// The messages sent, markers removed.
    pub messages: Vec<Message>,
    /// The system prompt and tools.
    pub prompt: Prompt,
    /// The markers the request carried (Anthropic `cache_control`).
    pub markers: Vec<Marker>,
}

/// Which API's shapes the messages are in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// The Anthropic Messages API's.
    Anthropic,
    /// OpenAI Chat Completions'.
    OpenAi,
}

/// The dialect of a list of messages.
pub(crate) fn dialect_of(messages: &[Value]) -> Dialect {
    let openai_part = |p: &Value| {
        matches!(
            p.get("type").and_then(Value::as_str),
            Some("image_url" | "input_audio")
        )
    };
    let openai = messages.iter().any(|m| {
        matches!(
            m.get("role").and_then(Value::as_str),
            Some("tool" | "developer" | "function")
        ) || m.get("tool_calls").is_some_and(|t| !t.is_null())
            || m.get("content")
                .and_then(Value::as_array)
                .is_some_and(|ps| ps.iter().any(openai_part))
    });
    if openai {
        Dialect::OpenAi
    } else {
        Dialect::Anthropic
    }
}

/// The dialect of a call to `provider`: its API's, where the provider has
/// one of the two; else what the messages show ([`dialect_of`]).
pub(crate) fn dialect_for(provider: Option<ProviderKind>, messages: &[Value]) -> Dialect {
    match provider {
        Some(ProviderKind::Anthropic | ProviderKind::BedrockConverse) => Dialect::Anthropic,
        Some(ProviderKind::OpenAi) => Dialect::OpenAi,
        _ => dialect_of(messages),
    }
}

/// A request from its messages and tools in `dialect` (`base`: the JSON
/// pointer of the messages' record, for errors). `Ok(None)`: no
/// conversation message.
pub(crate) fn request(
    dialect: Dialect,
    messages: &[Value],
    tools: Option<&Value>,
    base: &str,
    ids: &mut IdGen,
    un: &mut Unmapped,
) -> Result<Option<ChatRequest>, String> {
    let tools: Vec<&Value> = tools
        .and_then(Value::as_array)
        .map(|ts| ts.iter().collect())
        .unwrap_or_default();
    match dialect {
        Dialect::Anthropic => anthropic_request(messages, &tools, base, un),
        Dialect::OpenAi => Ok(openai_request(messages, &tools, ids, un)),
    }
}

fn anthropic_request(
    messages: &[Value],
    tools: &[&Value],
    base: &str,
    un: &mut Unmapped,
) -> Result<Option<ChatRequest>, String> {
    let mut system: Vec<Value> = Vec::new();
    let mut rest: Vec<&Value> = Vec::new();
    for m in messages {
        if m.get("role").and_then(Value::as_str) != Some("system") {
            rest.push(m);
            continue;
        }
        match m.get("content") {
            Some(Value::String(s)) => {
                system.push(serde_json::json!({"type": "text", "text": s}));
            }
            Some(Value::Array(blocks)) => system.extend(blocks.iter().cloned()),
            _ => un.add("system messages without content (dropped)", 1),
        }
    }
    if rest.is_empty() {
        un.add("requests with no conversation messages (no call)", 1);
        return Ok(None);
    }
    let mut body = serde_json::Map::new();
    body.insert(
        "messages".into(),
        Value::Array(rest.into_iter().cloned().collect()),
    );
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }
    if !tools.is_empty() {
        let tools = tools.iter().map(|t| anthropic_tool(t)).collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    let body = RawObject::from_json(&Value::Object(body).to_string())
        .map_err(|_| "the messages are not valid JSON".to_owned())?;
    Ok(
        crate::anthropic::request_parts(&body, base, un)?.map(|(messages, prompt, markers)| {
            ChatRequest {
                messages,
                prompt,
                markers,
            }
        }),
    )
}

/// A tool in Anthropic's shape (an OpenAI function tool's `parameters`
/// become its `input_schema`).
fn anthropic_tool(t: &Value) -> Value {
    match t.get("function") {
        Some(f) if t.get("type").and_then(Value::as_str) == Some("function") => {
            let mut o = serde_json::Map::new();
            for (from, to) in [
                ("name", "name"),
                ("description", "description"),
                ("parameters", "input_schema"),
            ] {
                if let Some(v) = f.get(from) {
                    o.insert(to.into(), v.clone());
                }
            }
            Value::Object(o)
        }
        _ => t.clone(),
    }
}

/// Tool definitions in either shape (OpenAI function tools, or
/// Anthropic's), for records that keep them apart from the messages.
pub(crate) fn tools(tools: &Value, un: &mut Unmapped) -> Vec<ToolDefinition> {
    let Some(list) = tools.as_array() else {
        return Vec::new();
    };
    let list = Value::Array(list.iter().map(anthropic_tool).collect());
    crate::anthropic::tools_of(&list.to_string(), un).unwrap_or_else(|_| {
        un.add("tool definitions of an invalid shape (dropped)", 1);
        Vec::new()
    })
}

/// A tool in OpenAI's function shape (an Anthropic tool's `input_schema`
/// becomes its `parameters`).
fn openai_tool(t: &Value) -> Value {
    if t.get("function").is_some() {
        return t.clone();
    }
    let mut f = serde_json::Map::new();
    for (from, to) in [
        ("name", "name"),
        ("description", "description"),
        ("input_schema", "parameters"),
    ] {
        if let Some(v) = t.get(from) {
            f.insert(to.into(), v.clone());
        }
    }
    serde_json::json!({"type": "function", "function": Value::Object(f)})
}

fn openai_request(
    messages: &[Value],
    tools: &[&Value],
    ids: &mut IdGen,
    un: &mut Unmapped,
) -> Option<ChatRequest> {
    let raws: Vec<Box<RawValue>> = messages
        .iter()
        .filter_map(|m| RawValue::from_string(m.to_string()).ok())
        .collect();
    let refs: Vec<&RawValue> = raws.iter().map(AsRef::as_ref).collect();
    let mapped = crate::openai::map_messages(&refs, ids, un);
    if mapped.messages.is_empty() {
        un.add("requests with no conversation messages (no call)", 1);
        return None;
    }
    let tools = if tools.is_empty() {
        Vec::new()
    } else {
        let list = Value::Array(tools.iter().map(|t| openai_tool(t)).collect());
        let body = serde_json::json!({ "tools": list }).to_string();
        match RawObject::from_json(&body) {
            Ok(body) => crate::openai::map_tools(&body, un),
            Err(_) => Vec::new(),
        }
    };
    Some(ChatRequest {
        messages: mapped.messages,
        prompt: Prompt {
            system: mapped.system,
            tools,
        },
        markers: Vec::new(),
    })
}

/// The assistant reply a record's output holds: a message object (either
/// shape), an Anthropic `message` response, an OpenAI completion (its
/// first choice), a list of messages (the last), or a string.
pub(crate) fn reply(output: &Value, ids: &mut IdGen, un: &mut Unmapped) -> Option<Message> {
    match output {
        Value::String(s) => Some(Message::new_text(Role::Assistant, s)),
        Value::Array(items) => items.iter().rev().find_map(|m| {
            let role = m.get("role").and_then(Value::as_str);
            matches!(role, None | Some("assistant"))
                .then(|| reply(m, ids, un))
                .flatten()
        }),
        Value::Object(o) => {
            if let Some(first) = o
                .get("choices")
                .and_then(Value::as_array)
                .and_then(|c| c.first())
            {
                return reply(first.get("message")?, ids, un);
            }
            let openai = o.get("tool_calls").is_some_and(|t| !t.is_null())
                || o.get("content")
                    .is_some_and(|c| c.is_null() || c.is_string());
            if openai {
                let obj = RawObject::from_json(&output.to_string()).ok()?;
                return Some(crate::openai::assistant_message(&obj, ids, un));
            }
            let content = o.get("content")?;
            let m = serde_json::json!({"role": "assistant", "content": content});
            crate::anthropic::message_of(&m.to_string())
        }
        _ => None,
    }
}

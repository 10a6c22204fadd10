//! One LangChain message list mapped to Anthropic shapes, message by
//! message (the mapping in the module documentation of [`super`]): system
//! text, user and ai messages, tool calls and their results, content parts,
//! and the `cache_control` markers found on them.

use serde_json::value::RawValue;

use super::usage::reply_meta;
use crate::common::{
    self, IdGen, ReplyMeta, ResultContent, Unmapped, compact_object, image_from_url,
    tool_result_block, tool_use_block,
};
use tracecost_engine::json::{RawObject, raw_json, raw_string};
use tracecost_engine::message::{BlockKind, ContentBlock, Message, Role};
use tracecost_engine::wire::{BlockRef, Marker, Ttl};

/// A mapped list.
#[derive(Default)]
pub(crate) struct Mapped {
    pub(crate) system: Vec<ContentBlock>,
    pub(crate) messages: Vec<Message>,
    pub(crate) meta: Vec<Option<ReplyMeta>>,
    pub(crate) markers: Vec<Marker>,
    /// Whether the last LangChain message was an `ai` message.
    pub(crate) ends_with_ai: bool,
    pub(crate) models: Vec<String>,
}

impl Mapped {
    fn push(&mut self, m: Message, meta: Option<ReplyMeta>) {
        self.messages.push(m);
        self.meta.push(meta);
    }
}

/// How ids generated for tool calls that have none start (Anthropic's
/// spelling, as the blocks they go in).
pub(super) const GENERATED_IDS: &str = "toolu_import_";

pub(crate) fn map_list(items: &[&RawValue], ids: &mut IdGen, un: &mut Unmapped) -> Mapped {
    let mut out = Mapped::default();
    let mut pending_tools: Vec<ContentBlock> = Vec::new();
    let mut last_ai = false;
    for item in items {
        let Some(obj) = compact_object(item.get()) else {
            un.add("list items that are not message objects (dropped)", 1);
            continue;
        };
        let kind = match obj.parse::<String>("type") {
            Some(Ok(k)) => k,
            _ => String::new(),
        };
        let data = match obj.parse::<RawObject>("data") {
            Some(Ok(d)) => d,
            _ => obj.clone(),
        };
        let kind = match kind.as_str() {
            "chat" => match data.parse::<String>("role") {
                Some(Ok(r)) if r == "user" => "human".to_owned(),
                Some(Ok(r)) if r == "assistant" => "ai".to_owned(),
                Some(Ok(r)) if r == "system" => "system".to_owned(),
                _ => kind,
            },
            k => k.trim_end_matches("MessageChunk").to_ascii_lowercase(),
        };
        if kind != "tool" && !pending_tools.is_empty() {
            let blocks = std::mem::take(&mut pending_tools);
            out.push(Message::new(Role::User, blocks), None);
        }
        last_ai = false;
        match kind.as_str() {
            "system" => {
                if out.messages.is_empty() && pending_tools.is_empty() {
                    let mi = None;
                    let blocks = content_blocks(&data, mi, &mut out.markers, un);
                    for b in blocks {
                        if matches!(b.kind(), BlockKind::Text { .. }) {
                            out.system.push(b);
                        } else {
                            un.add("system content that is not text (dropped)", 1);
                        }
                    }
                } else {
                    un.add(
                        "system messages after the first turn (sent as user text)",
                        1,
                    );
                    let m = user_message(&data, out.messages.len(), &mut out.markers, un);
                    out.push(m, None);
                }
            }
            "human" | "user" => {
                let m = user_message(&data, out.messages.len(), &mut out.markers, un);
                out.push(m, None);
            }
            "ai" | "assistant" => {
                let (m, meta) = ai_message(&data, out.messages.len(), ids, &mut out.markers, un);
                if let Some(model) = &meta.model {
                    out.models.push(model.clone());
                }
                out.push(m, Some(meta));
                last_ai = true;
            }
            "tool" => pending_tools.push(tool_block(&data, un)),
            "function" => un.add("legacy function messages (dropped)", 1),
            "remove" => un.add("RemoveMessage entries (ignored)", 1),
            _ => un.add("messages of an unknown type (dropped)", 1),
        }
    }
    if !pending_tools.is_empty() {
        out.push(Message::new(Role::User, pending_tools), None);
    }
    out.ends_with_ai = last_ai;
    out
}

fn ttl_of(fields: &mut RawObject) -> Option<Ttl> {
    let raw = fields.get("cache_control")?.get().to_owned();
    fields.remove("cache_control");
    if raw == "null" {
        return None;
    }
    Some(if raw.contains("\"1h\"") {
        Ttl::OneHour
    } else {
        Ttl::FiveMinutes
    })
}

/// Converts one content part; `None` when it cannot be mapped.
fn part_block(part: &RawValue, un: &mut Unmapped) -> Option<(ContentBlock, Option<Ttl>)> {
    let text = part.get();
    if text.starts_with('"') {
        let s: String = serde_json::from_str(text).ok()?;
        return Some((ContentBlock::text(&s), None));
    }
    let Some(mut obj) = compact_object(text) else {
        un.add("content parts that are not strings or objects (dropped)", 1);
        return None;
    };
    let ttl = ttl_of(&mut obj);
    let kind = match obj.parse::<String>("type") {
        Some(Ok(k)) => k,
        _ => String::new(),
    };
    let block = match kind.as_str() {
        "text" => match obj.parse::<String>("text") {
            Some(Ok(t)) => Some(ContentBlock::text(&t)),
            _ => None,
        },
        "image_url" => {
            let url = match obj.parse::<RawObject>("image_url") {
                Some(Ok(o)) => match o.parse::<String>("url") {
                    Some(Ok(u)) => Some(u),
                    _ => None,
                },
                _ => match obj.parse::<String>("image_url") {
                    Some(Ok(u)) => Some(u),
                    _ => None,
                },
            };
            url.and_then(|u| image_from_url(&u))
        }
        "image" if obj.get("source").is_none() => {
            // LangChain's standard image block.
            let get = |k: &str| match obj.parse::<String>(k) {
                Some(Ok(s)) => Some(s),
                _ => None,
            };
            match (get("source_type").as_deref(), get("url"), get("data")) {
                (Some("url") | None, Some(url), _) => image_from_url(&url),
                (_, _, Some(data)) => {
                    let mime = get("mime_type").unwrap_or_else(|| "image/png".to_owned());
                    image_from_url(&format!("data:{mime};base64,{data}"))
                }
                _ => None,
            }
        }
        "image" | "document" | "thinking" | "redacted_thinking" | "tool_result"
        | "search_result" => {
            obj.remove("index");
            ContentBlock::from_object(obj).ok()
        }
        _ => {
            un.add(
                "content parts of a type with no Anthropic mapping (dropped)",
                1,
            );
            return None;
        }
    };
    match block {
        Some(b) => Some((b, ttl)),
        None => {
            un.add("content parts of an invalid shape (dropped)", 1);
            None
        }
    }
}

/// The blocks of `data.content`; markers are recorded against message `mi`
/// (or the system prompt when `mi` is `None`).
fn content_blocks(
    data: &RawObject,
    mi: Option<usize>,
    markers: &mut Vec<Marker>,
    un: &mut Unmapped,
) -> Vec<ContentBlock> {
    let Some(raw) = data.raw("content") else {
        return Vec::new();
    };
    let parts = match common::split_content(raw, un) {
        Ok(parts) => parts,
        Err(blocks) => return blocks,
    };
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        if let Some((b, ttl)) = part_block(p, un) {
            if let Some(ttl) = ttl {
                let at = match mi {
                    Some(message) => BlockRef::Message {
                        message,
                        block: out.len(),
                    },
                    None => BlockRef::System(out.len()),
                };
                markers.push(Marker { at, ttl });
            }
            out.push(b);
        }
    }
    out
}

fn user_message(
    data: &RawObject,
    mi: usize,
    markers: &mut Vec<Marker>,
    un: &mut Unmapped,
) -> Message {
    if let Some(Ok(s)) = data.parse::<String>("content") {
        return Message::new_text(Role::User, &s);
    }
    Message::new(Role::User, content_blocks(data, Some(mi), markers, un))
}

/// The raw `args` of a tool call as a JSON object (`{}` when absent).
fn args_input(call: &RawObject, un: &mut Unmapped) -> Box<RawValue> {
    match call.raw("args") {
        Some(a) if a.get().starts_with('{') => a.to_owned(),
        Some(a) if a.get().starts_with('"') => {
            let s: String = serde_json::from_str(a.get()).unwrap_or_default();
            match serde_json::from_str::<Box<RawValue>>(&s) {
                Ok(v) if v.get().starts_with('{') => v,
                _ => {
                    un.add(
                        "tool call args that are not a JSON object (wrapped as {\"_raw\": …})",
                        1,
                    );
                    let mut o = RawObject::new();
                    o.set("_raw", raw_string(&s));
                    raw_json(o.to_json())
                }
            }
        }
        None => raw_json("{}".to_owned()),
        Some(a) if a.get() == "null" => raw_json("{}".to_owned()),
        Some(a) => {
            un.add(
                "tool call args that are not a JSON object (wrapped as {\"_raw\": …})",
                1,
            );
            let mut o = RawObject::new();
            o.set("_raw", a.to_owned());
            raw_json(o.to_json())
        }
    }
}

fn ai_message(
    data: &RawObject,
    mi: usize,
    ids: &mut IdGen,
    markers: &mut Vec<Marker>,
    un: &mut Unmapped,
) -> (Message, ReplyMeta) {
    let meta = reply_meta(data, un);
    let calls = tool_calls(data, un);
    if calls.is_empty()
        && let Some(Ok(s)) = data.parse::<String>("content")
    {
        return (Message::new_text(Role::Assistant, &s), meta);
    }
    let mut blocks: Vec<ContentBlock> = Vec::new();
    let mut used = vec![false; calls.len()];
    // Content first (text, thinking, native tool_use blocks), in order.
    if let Some(raw) = data.get("content") {
        if let Ok(parts) = serde_json::from_str::<Vec<&RawValue>>(raw.get()) {
            for p in parts {
                let obj = compact_object(p.get());
                let is_tool_use = obj.as_ref().is_some_and(
                    |o| matches!(o.parse::<String>("type"), Some(Ok(t)) if t == "tool_use"),
                );
                if let (true, Some(mut o)) = (is_tool_use, obj) {
                    let ttl = ttl_of(&mut o);
                    let id = call_id(&o);
                    let matched = id
                        .as_ref()
                        .and_then(|id| calls.iter().position(|c| call_id(c).as_ref() == Some(id)));
                    match matched {
                        Some(k) => {
                            used[k] = true;
                            blocks.push(call_block(&calls[k], ids, un));
                        }
                        None => {
                            o.remove("index");
                            o.remove("partial_json");
                            match ContentBlock::from_object(o) {
                                Ok(b) => blocks.push(b),
                                Err(_) => {
                                    un.add("content parts of an invalid shape (dropped)", 1);
                                    continue;
                                }
                            }
                        }
                    }
                    if let Some(ttl) = ttl {
                        markers.push(Marker {
                            at: BlockRef::Message {
                                message: mi,
                                block: blocks.len() - 1,
                            },
                            ttl,
                        });
                    }
                    continue;
                }
                if let Some((b, ttl)) = part_block(p, un) {
                    if let Some(ttl) = ttl {
                        markers.push(Marker {
                            at: BlockRef::Message {
                                message: mi,
                                block: blocks.len(),
                            },
                            ttl,
                        });
                    }
                    blocks.push(b);
                }
            }
        } else if let Ok(s) = serde_json::from_str::<String>(raw.get())
            && !s.is_empty()
        {
            blocks.push(ContentBlock::text(&s));
        }
    }
    for (k, c) in calls.iter().enumerate() {
        if !used[k] {
            blocks.push(call_block(c, ids, un));
        }
    }
    (Message::new(Role::Assistant, blocks), meta)
}

/// A reply's `tool_calls` (a list that is not of objects dropped, and
/// counted), counting its `invalid_tool_calls`.
fn tool_calls(data: &RawObject, un: &mut Unmapped) -> Vec<RawObject> {
    let calls: Vec<RawObject> = match data.parse::<Vec<RawObject>>("tool_calls") {
        Some(Ok(c)) => c,
        Some(Err(_)) => {
            un.add(
                "tool_calls members that are not lists of objects (dropped)",
                1,
            );
            Vec::new()
        }
        None => Vec::new(),
    };
    if let Some(Ok(invalid)) = data.parse::<Vec<&RawValue>>("invalid_tool_calls") {
        un.add("invalid_tool_calls entries (dropped)", invalid.len());
    }
    calls
}

/// A tool call's id, when it has a non-empty one.
fn call_id(c: &RawObject) -> Option<String> {
    match c.parse::<String>("id") {
        Some(Ok(id)) if !id.is_empty() => Some(id),
        _ => None,
    }
}

/// A tool call as a `tool_use` block: a missing id generated, a missing
/// name "unknown".
fn call_block(c: &RawObject, ids: &mut IdGen, un: &mut Unmapped) -> ContentBlock {
    let id = call_id(c).unwrap_or_else(|| {
        un.add("tool calls without an id (given a generated one)", 1);
        ids.next()
    });
    let name = match c.parse::<String>("name") {
        Some(Ok(n)) => n,
        _ => {
            un.add("tool calls without a name (named \"unknown\")", 1);
            "unknown".to_owned()
        }
    };
    tool_use_block(&id, &name, args_input(c, un))
}

fn tool_block(data: &RawObject, un: &mut Unmapped) -> ContentBlock {
    let is_error = matches!(data.parse::<String>("status"), Some(Ok(s)) if s == "error");
    let content = match data.parse::<String>("content") {
        Some(Ok(s)) => ResultContent::Text(s),
        _ => {
            let mut ignored = Vec::new();
            ResultContent::Blocks(content_blocks(data, Some(0), &mut ignored, un))
        }
    };
    match data.parse::<String>("tool_call_id") {
        Some(Ok(id)) if !id.is_empty() => tool_result_block(&id, content, is_error),
        _ => {
            un.add("tool messages without a tool_call_id (kept as text)", 1);
            let text = match content {
                ResultContent::Text(t) => t,
                ResultContent::Blocks(b) => b
                    .iter()
                    .filter_map(|b| match b.kind() {
                        BlockKind::Text { text } => Some(text.to_string()),
                        _ => None,
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
            };
            ContentBlock::text(&text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(json: &str) -> (Mapped, Unmapped) {
        let items: Vec<&RawValue> = serde_json::from_str(json).unwrap();
        let mut un = Unmapped::default();
        let mut ids = IdGen::new(GENERATED_IDS);
        (map_list(&items, &mut ids, &mut un), un)
    }

    #[test]
    fn ai_tool_calls_keep_args_bytes_and_tools_merge() {
        let (m, un) = map(r#"[{"type":"system","data":{"content":"sys"}},
                {"type":"human","data":{"content":"hi"}},
                {"type":"ai","data":{"content":"", "tool_calls":[
                    {"name":"a","args":{"z": 1, "b": [1.50]},"id":"c1","type":"tool_call"},
                    {"name":"b","args":{},"id":"c2","type":"tool_call"}]}},
                {"type":"tool","data":{"content":"r1","tool_call_id":"c1"}},
                {"type":"tool","data":{"content":"r2","tool_call_id":"c2","status":"error"}}]"#);
        assert!(un.lines().is_empty(), "{:?}", un.lines());
        assert_eq!(m.system.len(), 1);
        assert_eq!(m.messages.len(), 3);
        assert_eq!(
            m.messages[1].to_json(),
            r#"{"role":"assistant","content":[{"type":"tool_use","id":"c1","name":"a","input":{"z":1,"b":[1.50]}},{"type":"tool_use","id":"c2","name":"b","input":{}}]}"#
        );
        assert_eq!(
            m.messages[2].to_json(),
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"r1"},{"type":"tool_result","tool_use_id":"c2","content":"r2","is_error":true}]}"#
        );
        assert!(!m.ends_with_ai);
    }
}

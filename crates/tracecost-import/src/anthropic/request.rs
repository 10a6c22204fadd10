//! Request parsing: a Messages API request body's tools, system and
//! messages, with the `cache_control` members taken off the blocks and
//! kept as the call's markers (at most the API's four, the automatic one
//! last). Both the whole-line reader and the fast path for resent
//! messages parse requests here, a message at a time in the latter.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::line::LineError;
use crate::common::{Unmapped, cap_markers, message_key, with_blocks};
use tracecost_engine::json::{RawObject, raw_json};
use tracecost_engine::message::{
    BlockKind, Content, ContentBlock, Message, ToolDefinition, ToolResultContent,
};
use tracecost_engine::wire::{BlockRef, Marker, Ttl};
use tracecost_trace::Prompt;

/// A request's tools and system, markers removed.
pub(super) struct Head {
    pub(super) tools: Vec<ToolDefinition>,
    system: Vec<ContentBlock>,
    /// The markers they carried.
    markers: Vec<Marker>,
}

/// Reads `tools` and `system` (compact JSON text, when present).
pub(super) fn parse_head(
    tools: Option<&str>,
    system: Option<&str>,
    base: &str,
    un: &mut Unmapped,
) -> Result<Head, LineError> {
    let mut markers = Vec::new();
    // Tools first, then system, then messages: the order markers are listed.
    let tools = parse_tools(tools, base, &mut markers, un)?;
    let system = parse_system(system, base, &mut markers, un)?;
    Ok(Head {
        tools,
        system,
        markers,
    })
}

/// One request message, markers removed.
pub(super) struct ParsedMessage {
    pub(super) message: Arc<Message>,
    /// [`message_key`] of the message.
    pub(super) key: u64,
    /// The blocks that carried a marker, with its TTL.
    marks: Vec<(usize, Ttl)>,
    /// What it could not map.
    pub(super) unmapped: Unmapped,
}

/// Reads message `mi` of a request (`mi` only names it in errors).
pub(super) fn parse_message(
    fields: RawObject,
    mi: usize,
    base: &str,
) -> Result<ParsedMessage, LineError> {
    let m = Message::from_object(fields).map_err(|e| {
        LineError::at(format!(
            "at {base}/messages/{mi}{}: expected {}",
            e.pointer, e.expected
        ))
    })?;
    let mut marks = Vec::new();
    let mut unmapped = Unmapped::default();
    let m = strip_message(m, &mut marks, &mut unmapped);
    Ok(ParsedMessage {
        key: message_key(&m),
        message: Arc::new(m),
        marks,
        unmapped,
    })
}

/// The members of a request body read after its messages.
pub(super) struct RequestRest {
    /// A top-level `cache_control` (automatic caching), raw.
    pub(super) cache_control: Option<Box<RawValue>>,
    /// Whether `context_management` is present.
    pub(super) context_management: bool,
    /// The model, when a string.
    pub(super) model: Option<String>,
}

impl RequestRest {
    fn of(body: &RawObject) -> Self {
        Self {
            cache_control: body.raw("cache_control").map(ToOwned::to_owned),
            context_management: body.get("context_management").is_some(),
            model: match body.parse::<String>("model") {
                Some(Ok(m)) => Some(m),
                _ => None,
            },
        }
    }
}

pub(super) struct ParsedRequest {
    pub(super) messages: Vec<Arc<ParsedMessage>>,
    pub(super) prompt: Prompt,
    pub(super) markers: Vec<Marker>,
    pub(super) model: Option<String>,
}

/// The request body's messages, prompt and markers, markers removed from
/// the blocks. `Ok(None)` for a request with no messages.
pub(super) fn parse_request(
    body: &RawObject,
    base: &str,
    un: &mut Unmapped,
) -> Result<Option<ParsedRequest>, LineError> {
    let raw_messages = match body.parse::<Vec<RawObject>>("messages") {
        None => {
            un.add("requests without messages", 1);
            return Ok(None);
        }
        Some(Err(_)) => {
            return Err(LineError::at(format!(
                "at {base}/messages: expected an array of message objects"
            )));
        }
        Some(Ok(m)) => m,
    };
    if raw_messages.is_empty() {
        un.add("requests with an empty messages array", 1);
        return Ok(None);
    }
    let head = parse_head(
        body.raw("tools").map(RawValue::get),
        body.raw("system").map(RawValue::get),
        base,
        un,
    )?;
    let mut messages = Vec::with_capacity(raw_messages.len());
    for (mi, o) in raw_messages.into_iter().enumerate() {
        let m = parse_message(o, mi, base)?;
        un.merge(&m.unmapped);
        messages.push(Arc::new(m));
    }
    Ok(Some(assemble(head, messages, &RequestRest::of(body), un)))
}

/// A request from its parts: markers of tools, system and messages, then
/// the automatic one, at most four.
pub(super) fn assemble(
    head: Head,
    messages: Vec<Arc<ParsedMessage>>,
    rest: &RequestRest,
    un: &mut Unmapped,
) -> ParsedRequest {
    let Head {
        tools,
        system,
        mut markers,
    } = head;
    for (mi, m) in messages.iter().enumerate() {
        markers.extend(m.marks.iter().map(|&(block, ttl)| Marker {
            at: BlockRef::Message { message: mi, block },
            ttl,
        }));
    }
    if let Some(raw) = rest.cache_control.as_deref()
        && raw.get() != "null"
    {
        let mut cc = RawObject::new();
        cc.set("cache_control", raw.to_owned());
        if let Some(ttl) = take_cache_control(&mut cc, un)
            && let Some(at) = last_markable(&messages, &system, &tools)
            && !markers.iter().any(|m| m.at == at)
        {
            markers.push(Marker { at, ttl });
        }
    }
    cap_markers(&mut markers, un);
    if rest.context_management {
        un.add(
            "requests with context_management (server-side edits are not replayed)",
            1,
        );
    }
    ParsedRequest {
        messages,
        prompt: Prompt { system, tools },
        markers,
        model: rest.model.clone(),
    }
}

fn parse_tools(
    raw: Option<&str>,
    base: &str,
    markers: &mut Vec<Marker>,
    un: &mut Unmapped,
) -> Result<Vec<ToolDefinition>, LineError> {
    let list = match raw {
        None | Some("null") => return Ok(Vec::new()),
        Some(r) => serde_json::from_str::<Vec<RawObject>>(r).map_err(|_| {
            LineError::at(format!(
                "at {base}/tools: expected an array of tool objects"
            ))
        })?,
    };
    let mut out: Vec<ToolDefinition> = Vec::with_capacity(list.len());
    for mut o in list {
        let ttl = take_cache_control(&mut o, un);
        match ToolDefinition::from_object(o) {
            Ok(t) if out.iter().any(|d| d.name() == t.name()) => {
                un.add("tool definitions repeating a name (dropped)", 1);
            }
            Ok(t) => {
                if let Some(ttl) = ttl {
                    markers.push(Marker {
                        at: BlockRef::Tool(out.len()),
                        ttl,
                    });
                }
                out.push(t);
            }
            Err(_) => un.add("tool definitions without a name (dropped)", 1),
        }
    }
    Ok(out)
}

fn parse_system(
    raw: Option<&str>,
    base: &str,
    markers: &mut Vec<Marker>,
    un: &mut Unmapped,
) -> Result<Vec<ContentBlock>, LineError> {
    let Some(text) = raw else {
        return Ok(Vec::new());
    };
    if text == "null" {
        return Ok(Vec::new());
    }
    if text.starts_with('"') {
        let s: String = serde_json::from_str(text)
            .map_err(|_| LineError::at(format!("at {base}/system: expected a string")))?;
        return Ok(if s.is_empty() {
            Vec::new()
        } else {
            vec![ContentBlock::text(&s)]
        });
    }
    let list = serde_json::from_str::<Vec<RawObject>>(text).map_err(|_| {
        LineError::at(format!(
            "at {base}/system: expected a string or an array of text blocks"
        ))
    })?;
    let mut out = Vec::with_capacity(list.len());
    for (i, mut o) in list.into_iter().enumerate() {
        let ttl = take_cache_control(&mut o, un);
        let b = ContentBlock::from_object(o).map_err(|e| {
            LineError::at(format!(
                "at {base}/system/{i}{}: expected {}",
                e.pointer, e.expected
            ))
        })?;
        if !matches!(b.kind(), BlockKind::Text { .. }) {
            un.add("system blocks that are not text (dropped)", 1);
            continue;
        }
        if let Some(ttl) = ttl {
            markers.push(Marker {
                at: BlockRef::System(out.len()),
                ttl,
            });
        }
        out.push(b);
    }
    Ok(out)
}

#[derive(Deserialize)]
struct CacheControlDoc {
    ttl: Option<String>,
}

/// Removes a `cache_control` member; its TTL when it was a marker.
fn take_cache_control(fields: &mut RawObject, un: &mut Unmapped) -> Option<Ttl> {
    let raw = fields.get("cache_control")?.get().to_owned();
    fields.remove("cache_control");
    if raw == "null" {
        return None;
    }
    match serde_json::from_str::<CacheControlDoc>(&raw) {
        Ok(cc) => match cc.ttl.as_deref() {
            None | Some("5m") => Some(Ttl::FiveMinutes),
            Some("1h") => Some(Ttl::OneHour),
            Some(_) => {
                un.add("cache_control ttl values other than 5m/1h (read as 5m)", 1);
                Some(Ttl::FiveMinutes)
            }
        },
        Err(_) => {
            un.add("malformed cache_control members (dropped)", 1);
            None
        }
    }
}

fn has_cache_control(b: &ContentBlock) -> bool {
    if b.fields().get("cache_control").is_some() {
        return true;
    }
    match b.kind() {
        BlockKind::ToolResult {
            content: ToolResultContent::Blocks(inner),
            ..
        } => inner
            .iter()
            .any(|ib| ib.fields().get("cache_control").is_some()),
        _ => false,
    }
}

/// The message without `cache_control` members; the blocks that carried
/// a marker are pushed to `marks` with its TTL.
fn strip_message(m: Message, marks: &mut Vec<(usize, Ttl)>, un: &mut Unmapped) -> Message {
    let Content::Blocks(blocks) = m.content() else {
        return m;
    };
    if !blocks.iter().any(has_cache_control) {
        return m;
    }
    let mut out = Vec::with_capacity(blocks.len());
    for (bi, b) in blocks.iter().enumerate() {
        let mut fields = b.fields().into_owned();
        let mut ttl = take_cache_control(&mut fields, un);
        if let BlockKind::ToolResult {
            content: ToolResultContent::Blocks(inner),
            ..
        } = b.kind()
            && inner
                .iter()
                .any(|ib| ib.fields().get("cache_control").is_some())
        {
            let mut json = String::from("[");
            for (k, ib) in inner.iter().enumerate() {
                let mut f = ib.fields().into_owned();
                if let Some(t) = take_cache_control(&mut f, un) {
                    un.add(
                        "cache_control markers inside tool_result content (moved to the tool_result block)",
                        1,
                    );
                    ttl = Some(ttl.map_or(t, |x| x.max(t)));
                }
                if k > 0 {
                    json.push(',');
                }
                f.write_json(&mut json);
            }
            json.push(']');
            fields.set("content", raw_json(json));
        }
        if let Some(ttl) = ttl {
            marks.push((bi, ttl));
        }
        out.push(ContentBlock::from_object(fields).unwrap_or_else(|_| b.clone()));
    }
    with_blocks(&m, out)
}

/// Where a top-level (automatic) `cache_control` puts its breakpoint: the
/// last markable block of the request.
fn last_markable(
    messages: &[Arc<ParsedMessage>],
    system: &[ContentBlock],
    tools: &[ToolDefinition],
) -> Option<BlockRef> {
    for (mi, m) in messages.iter().enumerate().rev() {
        match m.message.content() {
            Content::Text(_) => {
                return Some(BlockRef::Message {
                    message: mi,
                    block: 0,
                });
            }
            Content::Blocks(bs) => {
                if let Some(bi) = bs.iter().rposition(ContentBlock::is_markable) {
                    return Some(BlockRef::Message {
                        message: mi,
                        block: bi,
                    });
                }
            }
        }
    }
    if !system.is_empty() {
        return Some(BlockRef::System(system.len() - 1));
    }
    if !tools.is_empty() {
        return Some(BlockRef::Tool(tools.len() - 1));
    }
    None
}

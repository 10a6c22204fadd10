//! Messages and content blocks in Anthropic's shapes, as the LangChain,
//! OpenAI and request-log importers build them from what their formats
//! hold: the same tool_use, tool_result and image blocks, whatever shape
//! they came in.

use serde_json::value::RawValue;

use super::Unmapped;
use tracecost_engine::json::{RawObject, raw_json, raw_string};
use tracecost_engine::message::{BlockKind, ContentBlock, Message, Role, ToolResultContent};
use tracecost_engine::wire::{MAX_BREAKPOINTS, Marker};
use tracecost_trace::MEDIA_TOKENS;

/// A message `content` as LangChain and OpenAI write it: a string (one
/// text block, none when empty) or a list of parts. `Err` holds the blocks
/// of a string (or none); `Ok` the raw parts of a list. Anything else is
/// dropped and counted.
pub(crate) fn split_content<'a>(
    raw: &'a RawValue,
    un: &mut Unmapped,
) -> Result<Vec<&'a RawValue>, Vec<ContentBlock>> {
    let text = raw.get();
    if text.starts_with('"') {
        return Err(match serde_json::from_str::<String>(text) {
            Ok(s) if !s.is_empty() => vec![ContentBlock::text(&s)],
            _ => Vec::new(),
        });
    }
    serde_json::from_str::<Vec<&RawValue>>(text).map_err(|_| {
        if text != "null" {
            un.add(
                "message contents that are neither a string nor a list (dropped)",
                1,
            );
        }
        Vec::new()
    })
}

/// `m` with its content replaced by `blocks`, other members kept.
pub(crate) fn with_blocks(m: &Message, blocks: Vec<ContentBlock>) -> Message {
    let mut fields = m.fields().clone();
    fields.set("content", blocks_json(&blocks));
    Message::from_object(fields).unwrap_or_else(|_| Message::new(m.role(), blocks))
}

/// A JSON array of the blocks.
pub(crate) fn blocks_json(blocks: &[ContentBlock]) -> Box<RawValue> {
    let mut json = String::from("[");
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        b.fields().write_json(&mut json);
    }
    json.push(']');
    raw_json(json)
}

/// A message with role `role` whose content is the raw `content`.
pub(crate) fn serde_message(role: Role, content: &RawValue) -> Option<Message> {
    let mut f = RawObject::new();
    f.set("role", raw_string(role.as_str()));
    f.set("content", content.to_owned());
    Message::from_object(f).ok()
}

/// `{"type":"tool_use","id":…,"name":…,"input":…}`.
pub(crate) fn tool_use_block(id: &str, name: &str, input: Box<RawValue>) -> ContentBlock {
    let mut f = RawObject::new();
    f.set("type", raw_string("tool_use"));
    f.set("id", raw_string(id));
    f.set("name", raw_string(name));
    f.set("input", input);
    ContentBlock::from_object(f).unwrap_or_else(|_| ContentBlock::text(""))
}

/// What a tool result carries.
pub(crate) enum ResultContent {
    /// A string.
    Text(String),
    /// Content blocks.
    Blocks(Vec<ContentBlock>),
}

/// `{"type":"tool_result","tool_use_id":…,"content":…}`.
pub(crate) fn tool_result_block(id: &str, content: ResultContent, is_error: bool) -> ContentBlock {
    let mut f = RawObject::new();
    f.set("type", raw_string("tool_result"));
    f.set("tool_use_id", raw_string(id));
    let fallback = match &content {
        ResultContent::Text(t) => t.clone(),
        ResultContent::Blocks(_) => String::new(),
    };
    match content {
        ResultContent::Text(t) => f.set("content", raw_string(&t)),
        ResultContent::Blocks(b) => f.set("content", blocks_json(&b)),
    }
    if is_error {
        f.set("is_error", raw_json("true".to_owned()));
    }
    ContentBlock::from_object(f).unwrap_or_else(|_| ContentBlock::text(&fallback))
}

/// An Anthropic image block for a URL (`data:` URLs become base64
/// sources).
pub(crate) fn image_from_url(url: &str) -> Option<ContentBlock> {
    let mut source = RawObject::new();
    if let Some(rest) = url.strip_prefix("data:") {
        let (meta, data) = rest.split_once(',')?;
        let media = meta.strip_suffix(";base64")?;
        source.set("type", raw_string("base64"));
        source.set("media_type", raw_string(media));
        source.set("data", raw_string(data));
    } else {
        source.set("type", raw_string("url"));
        source.set("url", raw_string(url));
    }
    let mut f = RawObject::new();
    f.set("type", raw_string("image"));
    f.set("source", raw_json(source.to_json()));
    ContentBlock::from_object(f).ok()
}

/// Drops, and counts, the markers past the API's [`MAX_BREAKPOINTS`] per
/// request, the first ones kept: a trace holding more does not load.
pub(crate) fn cap_markers(markers: &mut Vec<Marker>, un: &mut Unmapped) {
    if markers.len() > MAX_BREAKPOINTS {
        un.add(
            "cache_control markers beyond the API's 4 per request (dropped)",
            markers.len() - MAX_BREAKPOINTS,
        );
        markers.truncate(MAX_BREAKPOINTS);
    }
}

/// Generated ids for tool calls that have none: `prefix` followed by 1,
/// 2, … in the order they are asked for.
pub(crate) struct IdGen {
    prefix: &'static str,
    n: usize,
}

impl IdGen {
    /// Ids `prefix1`, `prefix2`, ….
    pub(crate) fn new(prefix: &'static str) -> Self {
        Self { prefix, n: 0 }
    }

    /// The next id.
    pub(crate) fn next(&mut self) -> String {
        self.n += 1;
        format!("{}{}", self.prefix, self.n)
    }
}

/// A rough token estimate of messages: characters of their JSON / 4
/// (rounded up), with image and document blocks counted as
/// [`MEDIA_TOKENS`] each instead of their base64 text.
pub(crate) fn estimate_tokens(messages: &[Message]) -> u64 {
    fn media(blocks: &[ContentBlock], chars: &mut u64, count: &mut u64) {
        for b in blocks {
            match b.kind() {
                BlockKind::Image | BlockKind::Document => {
                    *chars += b.to_json().chars().count() as u64;
                    *count += 1;
                }
                BlockKind::ToolResult {
                    content: ToolResultContent::Blocks(inner),
                    ..
                } => media(inner, chars, count),
                _ => {}
            }
        }
    }
    let (mut chars, mut media_chars, mut media_count) = (0u64, 0u64, 0u64);
    for m in messages {
        chars += m.to_json().chars().count() as u64;
        media(m.blocks(), &mut media_chars, &mut media_count);
    }
    chars
        .saturating_sub(media_chars)
        .div_ceil(4)
        .saturating_add(media_count * MEDIA_TOKENS)
}

//! The message model, in Anthropic Messages API shapes.
//!
//! Every object keeps its members as raw JSON ([`RawObject`]) next to a typed
//! view of the fields the engine reads. Serializing an unedited message or
//! block therefore reproduces its values byte for byte — including tool_use
//! `input` objects, whose key order matters to prompt caches — and keeps any
//! field this crate does not know about.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::json::{MemberValue, RawObject};

/// Where in a JSON document a shape problem was found, and what was expected.
///
/// `pointer` is an RFC 6901 JSON pointer relative to the value being parsed;
/// callers that parse a larger document prepend their own path with
/// [`ShapeError::within`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at {pointer}: expected {expected}")]
pub struct ShapeError {
    /// JSON pointer to the offending value (`""` is the value itself).
    pub pointer: String,
    /// What the value should have been.
    pub expected: String,
}

impl ShapeError {
    fn new(pointer: impl Into<String>, expected: impl Into<String>) -> Self {
        Self {
            pointer: pointer.into(),
            expected: expected.into(),
        }
    }

    /// Prefixes the pointer with `segment` (a key or an index).
    pub fn within(mut self, segment: impl fmt::Display) -> Self {
        let seg = segment.to_string().replace('~', "~0").replace('/', "~1");
        self.pointer = format!("/{seg}{}", self.pointer);
        self
    }
}

/// Who sent a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// The user (also carries tool results).
    User,
    /// The model.
    Assistant,
}

impl Role {
    /// The wire name (`"user"` / `"assistant"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
        }
    }
}

/// One content block of a message, a system prompt or a tool result.
#[derive(Clone)]
pub struct ContentBlock {
    /// The members. The texts the typed view holds (ids, a name, a text,
    /// a result's string) are holes here where the rest of the block is
    /// of a common shape, so that blocks of one shape share one list
    /// ([`RawObject::detach_texts`]); [`ContentBlock::fields`] fills them.
    fields: RawObject,
    kind: BlockKind,
}

impl PartialEq for ContentBlock {
    fn eq(&self, other: &Self) -> bool {
        if self.kind != other.kind {
            return false;
        }
        // Holes are filled from the views, which are equal: two lists of
        // holes in the same places are equal objects.
        if self.fields.has_holes() == other.fields.has_holes() {
            return self.fields == other.fields;
        }
        *self.fields() == *other.fields()
    }
}

impl Eq for ContentBlock {}

/// The typed view of a [`ContentBlock`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockKind {
    /// `{"type":"text","text":...}`
    Text {
        /// The text.
        text: Arc<str>,
    },
    /// `{"type":"tool_use","id":...,"name":...,"input":{...}}`
    ToolUse {
        /// The tool call id (`toolu_...`).
        id: Arc<str>,
        /// The tool's name.
        name: Arc<str>,
    },
    /// `{"type":"tool_result","tool_use_id":...,"content":...}`
    ToolResult {
        /// The id of the tool_use this answers.
        tool_use_id: Arc<str>,
        /// What the tool returned.
        content: ToolResultContent,
        /// Whether the tool reported an error.
        is_error: bool,
        /// Length of the payload in Unicode scalar values, counted once at
        /// parse time because the rewriter compares it on every call.
        payload_chars: u64,
    },
    /// `{"type":"thinking",...}`; part of the prefix, never markable.
    Thinking,
    /// `{"type":"redacted_thinking",...}`
    RedactedThinking,
    /// `{"type":"image",...}`
    Image,
    /// `{"type":"document",...}`
    Document,
    /// A block type this crate does not know; kept verbatim.
    Other {
        /// Its `type` member.
        block_type: Box<str>,
    },
}

/// The `content` of a tool_result block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolResultContent {
    /// No `content` member (an empty result).
    Empty,
    /// A plain string.
    Text(Arc<str>),
    /// A list of blocks (text and images).
    Blocks(Vec<ContentBlock>),
}

impl fmt::Debug for ContentBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContentBlock({})", self.to_json())
    }
}

/// Member `key` as a string, shared with the object (see
/// [`RawObject::share_string`]): for the long strings, a block's text and a
/// tool result's content.
fn share_str(obj: &mut RawObject, key: &str) -> Result<Arc<str>, ShapeError> {
    match obj.share_string(key) {
        Some(Ok(s)) => Ok(s),
        Some(Err(_)) => Err(ShapeError::new(format!("/{key}"), "a string")),
        None => Err(ShapeError::new(
            format!("/{key}"),
            "a string (member is missing)",
        )),
    }
}

/// The tool names held once for the process, at most [`MAX_NAMES`] of at
/// most [`MAX_NAME_LEN`] bytes (a document of endless names cannot grow
/// it).
static NAMES: std::sync::Mutex<std::collections::BTreeSet<Arc<str>>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());
const MAX_NAMES: usize = 4096;
const MAX_NAME_LEN: usize = 128;

/// `name`, the text of member `name` of `fields`, or the process's copy of
/// it, which then replaces it in the member too. Only a member held as its
/// text is swapped: its bytes are the text's canonical encoding, so they
/// are written the same from either copy.
fn shared_name(fields: &mut RawObject, name: Arc<str>) -> Arc<str> {
    if name.len() > MAX_NAME_LEN || !matches!(fields.value("name"), Some(MemberValue::Text(_))) {
        return name;
    }
    // A poisoned lock only means a panic elsewhere: no sharing then.
    let Ok(mut names) = NAMES.lock() else {
        return name;
    };
    match names.get(&*name) {
        Some(shared) => {
            let shared = shared.clone();
            drop(names);
            fields.set_text("name", shared.clone());
            shared
        }
        None => {
            if names.len() < MAX_NAMES {
                names.insert(name.clone());
            }
            name
        }
    }
}

/// Member `key` as a string, borrowed where its bytes allow (a block's
/// `type`, a message's `role`: read, compared, not kept).
fn str_member<'a>(obj: &'a RawObject, key: &str) -> Result<Cow<'a, str>, ShapeError> {
    match obj.str_value(key) {
        Some(Ok(s)) => Ok(s),
        Some(Err(_)) => Err(ShapeError::new(format!("/{key}"), "a string")),
        None => Err(ShapeError::new(
            format!("/{key}"),
            "a string (member is missing)",
        )),
    }
}

/// The block types the typed view names.
const BLOCK_TYPES: &[&str] = &[
    "text",
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "image",
    "document",
];

/// A block's `type`, not borrowing the block (which is then edited); a
/// copy only for a type the typed view does not name.
fn block_type_of(fields: &RawObject) -> Result<Cow<'static, str>, ShapeError> {
    let t = str_member(fields, "type")?;
    Ok(match BLOCK_TYPES.iter().find(|k| **k == t) {
        Some(k) => Cow::Borrowed(*k),
        None => Cow::Owned(t.into_owned()),
    })
}

/// Parsed blocks, in a list exactly as long as they are (a long trace
/// holds a list per message, most of one block).
fn blocks_from(
    items: Vec<RawObject>,
    at: impl Fn(ShapeError, usize) -> ShapeError,
) -> Result<Vec<ContentBlock>, ShapeError> {
    let mut blocks = Vec::with_capacity(items.len());
    for (i, o) in items.into_iter().enumerate() {
        blocks.push(ContentBlock::from_object(o).map_err(|e| at(e, i))?);
    }
    Ok(blocks)
}

impl ContentBlock {
    /// Builds a block from a parsed JSON object, checking the members the
    /// engine relies on.
    pub fn from_object(mut fields: RawObject) -> Result<Self, ShapeError> {
        let block_type = block_type_of(&fields)?;
        let kind = match &*block_type {
            "text" => BlockKind::Text {
                text: share_str(&mut fields, "text")?,
            },
            // The ids and the name are kept once, shared with the members;
            // a name, one of a few a trace calls again and again, once for
            // the process.
            "tool_use" => {
                let id = share_str(&mut fields, "id")?;
                let name = share_str(&mut fields, "name")?;
                BlockKind::ToolUse {
                    id,
                    name: shared_name(&mut fields, name),
                }
            }
            "tool_result" => {
                let tool_use_id = share_str(&mut fields, "tool_use_id")?;
                let content = match fields.value("content") {
                    None => ToolResultContent::Empty,
                    Some(MemberValue::Raw(raw)) if !raw.get().starts_with('"') => {
                        parse_tool_result_content(raw).map_err(|e| e.within("content"))?
                    }
                    // A string, as read or already shared.
                    Some(_) => ToolResultContent::Text(share_str(&mut fields, "content")?),
                };
                let is_error = match fields.parse::<Option<bool>>("is_error") {
                    None => false,
                    Some(Ok(b)) => b.unwrap_or(false),
                    Some(Err(_)) => return Err(ShapeError::new("/is_error", "a boolean")),
                };
                // Not `get`: that would encode a shared text only to skip it.
                let raw = match fields.value("content") {
                    Some(MemberValue::Raw(r)) => Some(r),
                    _ => None,
                };
                let payload_chars = content.size_chars(raw);
                BlockKind::ToolResult {
                    tool_use_id,
                    content,
                    is_error,
                    payload_chars,
                }
            }
            "thinking" => BlockKind::Thinking,
            "redacted_thinking" => BlockKind::RedactedThinking,
            "image" => BlockKind::Image,
            "document" => BlockKind::Document,
            other => BlockKind::Other {
                block_type: other.into(),
            },
        };
        Ok(Self::from_parts(fields, kind))
    }

    /// The block of `fields` and its view `kind`, the texts `kind` holds
    /// made holes of `fields` where that shares it.
    fn from_parts(mut fields: RawObject, kind: BlockKind) -> Self {
        fields
            .detach_texts(&|key, text| kind.member_text(key).is_some_and(|t| Arc::ptr_eq(t, text)));
        Self { fields, kind }
    }

    /// The text of the hole `key`.
    fn fill(&self, key: &str) -> Option<&str> {
        self.kind.member_text(key).map(|t| &**t)
    }

    /// Parses one block from JSON text.
    pub fn from_json(json: &str) -> Result<Self, ShapeError> {
        let fields = RawObject::from_json(json)
            .map_err(|e| ShapeError::new("", format!("a JSON object ({e})")))?;
        Self::from_object(fields)
    }

    /// A `{"type":"text","text":...}` block.
    pub fn text(text: &str) -> Self {
        let text: Arc<str> = text.into();
        let mut fields = RawObject::new();
        fields.set("type", super::json::raw_string("text"));
        fields.set_text("text", text.clone());
        Self::from_parts(fields, BlockKind::Text { text })
    }

    /// The typed view.
    pub fn kind(&self) -> &BlockKind {
        &self.kind
    }

    /// The raw members, in document order: borrowed, or a copy with the
    /// texts the typed view holds filled in (a block of a shared shape).
    /// To write the block, [`ContentBlock::write_json_with`] makes no copy.
    pub fn fields(&self) -> Cow<'_, RawObject> {
        if self.fields.has_holes() {
            Cow::Owned(self.fields.filled(&|k| self.kind.member_text(k).cloned()))
        } else {
            Cow::Borrowed(&self.fields)
        }
    }

    /// Writes the block as compact JSON, appending one extra member after
    /// the others (`cache_control` on the wire).
    pub fn write_json_with(&self, out: &mut String, extra: Option<(&str, &str)>) {
        self.fields.write_json_filled(out, extra, &|k| self.fill(k));
    }

    /// About the length of the block's compact JSON
    /// ([`RawObject::json_len_hint`]).
    pub fn json_len_hint(&self) -> usize {
        self.fields.json_len_hint_filled(&|k| self.fill(k))
    }

    /// The block's `type` member as the wire spells it.
    pub fn block_type(&self) -> &str {
        match &self.kind {
            BlockKind::Text { .. } => "text",
            BlockKind::ToolUse { .. } => "tool_use",
            BlockKind::ToolResult { .. } => "tool_result",
            BlockKind::Thinking => "thinking",
            BlockKind::RedactedThinking => "redacted_thinking",
            BlockKind::Image => "image",
            BlockKind::Document => "document",
            BlockKind::Other { block_type } => block_type,
        }
    }

    /// The raw `input` of a tool_use block, byte for byte.
    pub fn tool_input(&self) -> Option<&RawValue> {
        match self.kind {
            // `input` is never held as text (only strings the typed view
            // reads are).
            BlockKind::ToolUse { .. } => match self.fields.value("input")? {
                MemberValue::Raw(r) => Some(r),
                MemberValue::Text(_) => None,
            },
            _ => None,
        }
    }

    /// Whether the API accepts a `cache_control` marker on this block.
    pub fn is_markable(&self) -> bool {
        !matches!(self.kind, BlockKind::Thinking | BlockKind::RedactedThinking)
    }

    /// Compact JSON of the block, as it goes on the wire.
    pub fn to_json(&self) -> String {
        let mut s = String::with_capacity(self.json_len_hint());
        self.write_json_with(&mut s, None);
        s
    }

    /// A copy of this tool_result block whose `content` is `text`; every
    /// other member (including `tool_use_id`'s bytes) is kept as is.
    pub fn with_tool_result_text(&self, text: &str) -> Option<Self> {
        self.with_tool_result_shared_text(&text.into())
    }

    /// [`Self::with_tool_result_text`] sharing `text` (stubs of many
    /// results carrying the same words hold one copy of them).
    pub fn with_tool_result_shared_text(&self, text: &Arc<str>) -> Option<Self> {
        let BlockKind::ToolResult {
            tool_use_id,
            is_error,
            ..
        } = &self.kind
        else {
            return None;
        };
        let kind = BlockKind::ToolResult {
            tool_use_id: tool_use_id.clone(),
            content: ToolResultContent::Text(text.clone()),
            is_error: *is_error,
            payload_chars: text.chars().count() as u64,
        };
        // A result whose string content is a hole keeps its shape: the
        // copy shares the list, its content filled from the new view (a
        // cleared result's block is made each time it is read).
        if self.fields.text_held_by_owner("content") == Some(true) {
            return Some(Self {
                fields: self.fields.clone(),
                kind,
            });
        }
        let mut fields = self.fields().into_owned();
        fields.set_text("content", text.clone());
        Some(Self::from_parts(fields, kind))
    }

    /// A copy of this block with member `key` set to `value` (replaced in
    /// place, or appended), re-checked like any parsed block.
    pub fn with_field(&self, key: &str, value: Box<RawValue>) -> Result<Self, ShapeError> {
        let mut fields = self.fields().into_owned();
        fields.set(key, value);
        Self::from_object(fields)
    }

    /// The payload a ledger stores for this tool_result block: the text of
    /// string content, or the exact JSON text of a block list (so images and
    /// every other block survive a recall byte for byte).
    pub fn tool_result_payload(&self) -> Option<&str> {
        match &self.kind {
            BlockKind::ToolResult {
                content: ToolResultContent::Text(t),
                ..
            } => Some(t),
            BlockKind::ToolResult {
                content: ToolResultContent::Blocks(_),
                ..
            } => match self.fields.value("content")? {
                MemberValue::Raw(r) => Some(r.get()),
                // A block list is never held as text.
                MemberValue::Text(t) => Some(t),
            },
            BlockKind::ToolResult {
                content: ToolResultContent::Empty,
                ..
            } => Some(""),
            _ => None,
        }
    }
}

fn parse_tool_result_content(raw: &RawValue) -> Result<ToolResultContent, ShapeError> {
    let text = raw.get().trim_start();
    if text.starts_with('"') {
        let s: String =
            serde_json::from_str(raw.get()).map_err(|_| ShapeError::new("", "a string"))?;
        Ok(ToolResultContent::Text(s.into()))
    } else if text.starts_with('[') {
        let items: Vec<RawObject> = serde_json::from_str(raw.get())
            .map_err(|_| ShapeError::new("", "a string or an array of content blocks"))?;
        Ok(ToolResultContent::Blocks(blocks_from(items, |e, i| {
            e.within(i)
        })?))
    } else if text == "null" {
        Ok(ToolResultContent::Empty)
    } else {
        Err(ShapeError::new(
            "",
            "a string or an array of content blocks",
        ))
    }
}

impl BlockKind {
    /// The text this view holds for member `key`, which the block's
    /// members share: a text's `text`, a use's `id` and `name`, a result's
    /// `tool_use_id` and string `content`.
    fn member_text(&self, key: &str) -> Option<&Arc<str>> {
        match (self, key) {
            (BlockKind::Text { text }, "text") => Some(text),
            (BlockKind::ToolUse { id, .. }, "id") => Some(id),
            (BlockKind::ToolUse { name, .. }, "name") => Some(name),
            (BlockKind::ToolResult { tool_use_id, .. }, "tool_use_id") => Some(tool_use_id),
            (
                BlockKind::ToolResult {
                    content: ToolResultContent::Text(t),
                    ..
                },
                "content",
            ) => Some(t),
            _ => None,
        }
    }
}

impl ToolResultContent {
    /// Size in Unicode scalar values (`char`s) of the payload the ledger
    /// would store: the text itself, or the JSON text of a block list.
    pub fn size_chars(&self, raw: Option<&RawValue>) -> u64 {
        let n = match self {
            ToolResultContent::Empty => 0,
            ToolResultContent::Text(t) => t.chars().count(),
            ToolResultContent::Blocks(_) => raw.map_or(0, |r| r.get().chars().count()),
        };
        n as u64
    }
}

/// The content of a message: a plain string or a list of blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// `"content": "..."`
    Text(Arc<str>),
    /// `"content": [ {...}, ... ]`
    Blocks(Blocks),
}

/// A message's blocks, read as a slice: one block held in the message
/// itself, or a list. Most messages of a long agent trace are one
/// tool_use or one tool_result, and a list of one took a block's size
/// again in an allocation of its own, with a list's header beside it.
#[derive(Clone)]
pub struct Blocks(BlocksRepr);

#[derive(Clone)]
enum BlocksRepr {
    One(ContentBlock),
    Many(Vec<ContentBlock>),
}

impl From<Vec<ContentBlock>> for Blocks {
    fn from(mut blocks: Vec<ContentBlock>) -> Self {
        match (blocks.pop(), blocks.is_empty()) {
            (Some(one), true) => Blocks(BlocksRepr::One(one)),
            (last, _) => {
                blocks.extend(last);
                Blocks(BlocksRepr::Many(blocks))
            }
        }
    }
}

impl std::ops::Deref for Blocks {
    type Target = [ContentBlock];
    fn deref(&self) -> &[ContentBlock] {
        match &self.0 {
            BlocksRepr::One(b) => std::slice::from_ref(b),
            BlocksRepr::Many(v) => v,
        }
    }
}

impl std::ops::DerefMut for Blocks {
    fn deref_mut(&mut self) -> &mut [ContentBlock] {
        match &mut self.0 {
            BlocksRepr::One(b) => std::slice::from_mut(b),
            BlocksRepr::Many(v) => v,
        }
    }
}

impl<'a> IntoIterator for &'a Blocks {
    type Item = &'a ContentBlock;
    type IntoIter = std::slice::Iter<'a, ContentBlock>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Blocks {
    type Item = &'a mut ContentBlock;
    type IntoIter = std::slice::IterMut<'a, ContentBlock>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl PartialEq for Blocks {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Blocks {}

impl fmt::Debug for Blocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// One message of a conversation.
#[derive(Clone, PartialEq, Eq)]
pub struct Message {
    fields: RawObject,
    role: Role,
    content: Content,
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Message({})", self.to_json())
    }
}

impl Message {
    /// Builds a message from a parsed JSON object.
    pub fn from_object(mut fields: RawObject) -> Result<Self, ShapeError> {
        let role = match str_member(&fields, "role")?.as_ref() {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            _ => return Err(ShapeError::new("/role", "\"user\" or \"assistant\"")),
        };
        let raw = fields.value("content").ok_or_else(|| {
            ShapeError::new(
                "/content",
                "a string or an array of content blocks (member is missing)",
            )
        })?;
        let raw = match raw {
            MemberValue::Raw(r) if !r.get().starts_with('"') => Some(r),
            _ => None,
        };
        let content = if let Some(raw) = raw {
            let items: Vec<RawObject> = serde_json::from_str(raw.get()).map_err(|_| {
                ShapeError::new("/content", "a string or an array of content blocks")
            })?;
            Content::Blocks(blocks_from(items, |e, i| e.within(i).within("content"))?.into())
        } else {
            Content::Text(
                share_str(&mut fields, "content")
                    .map_err(|_| ShapeError::new("/content", "a string"))?,
            )
        };
        if let Content::Blocks(_) = content {
            // The blocks hold their own raw bytes; keeping the array's raw
            // text too would hold every payload twice. The member keeps its
            // place in the key order and is written from the blocks.
            fields.set("content", super::json::raw_json("[]".to_owned()));
            // Most messages are then `{"role":...,"content":[]}`: one
            // list for all of them.
            fields.share_common_shape();
        }
        Ok(Self {
            fields,
            role,
            content,
        })
    }

    /// Parses one message from JSON text.
    pub fn from_json(json: &str) -> Result<Self, ShapeError> {
        let fields = RawObject::from_json(json)
            .map_err(|e| ShapeError::new("", format!("a JSON object ({e})")))?;
        Self::from_object(fields)
    }

    /// A message with the given role and blocks.
    pub fn new(role: Role, blocks: Vec<ContentBlock>) -> Self {
        let mut fields = RawObject::new();
        fields.set("role", super::json::raw_string(role.as_str()));
        fields.set("content", super::json::raw_json("[]".to_owned()));
        Self {
            fields,
            role,
            content: Content::Blocks(blocks.into()),
        }
    }

    /// A message whose content is a plain string.
    pub fn new_text(role: Role, text: &str) -> Self {
        let text: Arc<str> = text.into();
        let mut fields = RawObject::new();
        fields.set("role", super::json::raw_string(role.as_str()));
        fields.set_text("content", text.clone());
        Self {
            fields,
            role,
            content: Content::Text(text),
        }
    }

    /// Who sent it.
    pub fn role(&self) -> Role {
        self.role
    }

    /// Its content.
    pub fn content(&self) -> &Content {
        &self.content
    }

    /// Shares each tool_result's `tool_use_id` with the copy `lookup`
    /// gives for its text (the id of the tool_use it answers, held once
    /// for both), where the member is held as its text (so its bytes are
    /// written the same from either copy).
    pub fn share_tool_use_ids(&mut self, lookup: impl Fn(&str) -> Option<Arc<str>>) {
        let Content::Blocks(blocks) = &mut self.content else {
            return;
        };
        for b in blocks {
            let BlockKind::ToolResult { tool_use_id, .. } = &mut b.kind else {
                continue;
            };
            let Some(shared) = lookup(tool_use_id) else {
                continue;
            };
            if Arc::ptr_eq(&shared, tool_use_id) || *shared != **tool_use_id {
                continue;
            }
            match b.fields.text_held_by_owner("tool_use_id") {
                // The hole is filled from the view.
                Some(true) => {}
                Some(false) => b.fields.set_text("tool_use_id", shared.clone()),
                None => continue,
            }
            *tool_use_id = shared;
        }
    }

    /// Its blocks (empty for string content).
    pub fn blocks(&self) -> &[ContentBlock] {
        match &self.content {
            Content::Blocks(b) => b,
            Content::Text(_) => &[],
        }
    }

    /// The raw members, in document order. For a message whose content is
    /// a list of blocks, the `content` member only marks its place (it reads
    /// `[]`): the blocks hold the bytes. Use [`Message::write_json`] to
    /// serialize.
    pub fn fields(&self) -> &RawObject {
        &self.fields
    }

    /// Writes the message as compact JSON: every member's original bytes,
    /// the content written from its blocks.
    pub fn write_json(&self, out: &mut String) {
        let Content::Blocks(blocks) = &self.content else {
            self.fields.write_json(out);
            return;
        };
        out.push('{');
        for (k, (key, raw)) in self.fields.members().enumerate() {
            if k > 0 {
                out.push(',');
            }
            super::json::push_json_string(out, key);
            out.push(':');
            if key == "content" {
                out.push('[');
                for (i, b) in blocks.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    b.write_json_with(out, None);
                }
                out.push(']');
            } else {
                raw.write_json(out);
            }
        }
        out.push('}');
    }

    /// Compact JSON of the message as recorded.
    pub fn to_json(&self) -> String {
        let blocks: usize = self.blocks().iter().map(|b| b.json_len_hint() + 1).sum();
        let mut s = String::with_capacity(self.fields.json_len_hint() + blocks);
        self.write_json(&mut s);
        s
    }
}

/// One tool definition (`{"name":...,"description":...,"input_schema":{...}}`).
#[derive(Clone, PartialEq, Eq)]
pub struct ToolDefinition {
    fields: RawObject,
    name: Arc<str>,
}

impl fmt::Debug for ToolDefinition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ToolDefinition({})", self.fields.to_json())
    }
}

impl ToolDefinition {
    /// Builds a tool definition from a parsed JSON object.
    pub fn from_object(fields: RawObject) -> Result<Self, ShapeError> {
        let name = str_member(&fields, "name")?.into();
        Ok(Self { fields, name })
    }

    /// Parses one tool definition from JSON text.
    pub fn from_json(json: &str) -> Result<Self, ShapeError> {
        let fields = RawObject::from_json(json)
            .map_err(|e| ShapeError::new("", format!("a JSON object ({e})")))?;
        Self::from_object(fields)
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The raw members.
    pub fn fields(&self) -> &RawObject {
        &self.fields
    }

    /// Compact JSON of the definition.
    pub fn to_json(&self) -> String {
        self.fields.to_json()
    }
}

macro_rules! serde_via_object {
    ($ty:ty) => {
        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.fields.serialize(s)
            }
        }
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let fields = RawObject::deserialize(d)?;
                <$ty>::from_object(fields).map_err(D::Error::custom)
            }
        }
    };
}

impl Serialize for ContentBlock {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.fields().serialize(s)
    }
}
impl<'de> Deserialize<'de> for ContentBlock {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = RawObject::deserialize(d)?;
        ContentBlock::from_object(fields).map_err(D::Error::custom)
    }
}
impl Serialize for Message {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let raw = RawValue::from_string(self.to_json()).map_err(serde::ser::Error::custom)?;
        raw.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = RawObject::deserialize(d)?;
        Message::from_object(fields).map_err(D::Error::custom)
    }
}
serde_via_object!(ToolDefinition);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_use_input_round_trips_byte_identical() {
        let src = r#"{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"search","input":{"z":1,"a":{"q":"caf\u00e9","n":1.50}},"x_unknown":true}]}"#;
        let m = Message::from_json(src).unwrap();
        assert_eq!(m.to_json(), src);
        let back: Message = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        let input = m.blocks()[0].tool_input().unwrap().get();
        assert_eq!(input, r#"{"z":1,"a":{"q":"caf\u00e9","n":1.50}}"#);
    }

    /// Blocks of one shape hold one member list, the texts their views
    /// hold being holes in it, and still read, write, compare, serialize
    /// and edit as the objects they were read from.
    #[test]
    fn blocks_of_one_shape_share_one_member_list() {
        let result = |id: &str, text: &str| {
            format!(
                r#"{{"type":"tool_result","tool_use_id":"{id}","content":"{text}","is_error":false}}"#
            )
        };
        let (sa, sb) = (result("t1", "a\\nb"), result("t2", "other"));
        let (a, b) = (
            ContentBlock::from_json(&sa).unwrap(),
            ContentBlock::from_json(&sb).unwrap(),
        );
        assert!(a.fields.has_holes() && a.fields.shares_members_with(&b.fields));
        assert_eq!((a.to_json(), b.to_json()), (sa.clone(), sb.clone()));
        assert_eq!(serde_json::to_string(&a).unwrap(), sa);
        assert_eq!(a.fields().to_json(), sa);
        assert_eq!(a.fields().str_value("content").unwrap().unwrap(), "a\nb");
        assert!(a.json_len_hint() >= sa.len() - 1);
        let mut marked = String::new();
        a.write_json_with(&mut marked, Some(("cache_control", "{}")));
        assert_eq!(
            marked,
            format!("{},\"cache_control\":{{}}}}", &sa[..sa.len() - 1])
        );
        assert_ne!(a, b);
        // The same block held with a list of its own (a shape that is not
        // shared) is equal to it.
        let own = ContentBlock {
            fields: a.fields().into_owned(),
            kind: a.kind.clone(),
        };
        assert!(!own.fields.has_holes());
        assert_eq!(own, a);
        assert_eq!(a, own);
        // A stub of it shares a list too; an edited member is its own.
        let stub = a.with_tool_result_text("[stub]").unwrap();
        let stub_b = b.with_tool_result_text("[stub]").unwrap();
        assert!(stub.fields.shares_members_with(&stub_b.fields));
        assert_eq!(
            stub.to_json(),
            r#"{"type":"tool_result","tool_use_id":"t1","content":"[stub]","is_error":false}"#
        );
        let flagged = a
            .with_field("is_error", crate::json::raw_json("1".to_owned()))
            .unwrap_err();
        assert_eq!(flagged.pointer, "/is_error");
        let escaped = ContentBlock::from_json(
            r#"{"type":"tool_result","tool_use_id":"t\u0031","content":"x"}"#,
        )
        .unwrap();
        assert!(!escaped.fields.has_holes());
        assert_eq!(
            escaped.to_json(),
            r#"{"type":"tool_result","tool_use_id":"t\u0031","content":"x"}"#
        );
        // A message's result sharing its use's id keeps the shared list.
        let mut m = Message::new(Role::User, vec![b.clone()]);
        let id: Arc<str> = Arc::from("t2");
        m.share_tool_use_ids(|_| Some(id.clone()));
        assert!(m.blocks()[0].fields.shares_members_with(&a.fields));
        assert!(
            matches!(m.blocks()[0].kind(), BlockKind::ToolResult { tool_use_id, .. } if Arc::ptr_eq(tool_use_id, &id))
        );
        assert_eq!(m.blocks()[0].to_json(), sb);
    }

    /// A message of one block holds it in itself, and of any other
    /// number in a list; both read, compare and write as the same slice.
    #[test]
    fn a_message_of_one_block_holds_it_inline() {
        let one = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}"#;
        let m = Message::from_json(one).unwrap();
        assert!(matches!(
            &m.content,
            Content::Blocks(Blocks(BlocksRepr::One(_)))
        ));
        assert_eq!((m.blocks().len(), m.to_json()), (1, one.to_owned()));
        let listed = Message {
            content: Content::Blocks(Blocks(BlocksRepr::Many(m.blocks().to_vec()))),
            ..m.clone()
        };
        assert_eq!(listed, m);
        assert!(size_of::<Message>() < size_of::<ContentBlock>() + 32);
        for n in [0, 2, 3] {
            let blocks: Vec<ContentBlock> = (0..n)
                .map(|i| ContentBlock::text(&format!("b{i}")))
                .collect();
            let m = Message::new(Role::User, blocks.clone());
            assert!(matches!(
                &m.content,
                Content::Blocks(Blocks(BlocksRepr::Many(_)))
            ));
            assert_eq!(m.blocks(), &blocks[..]);
        }
        let mut m = Message::new(Role::User, vec![ContentBlock::text("a")]);
        assert!(matches!(
            &m.content,
            Content::Blocks(Blocks(BlocksRepr::One(_)))
        ));
        let Content::Blocks(blocks) = &mut m.content else {
            unreachable!()
        };
        for b in blocks {
            *b = ContentBlock::text("b");
        }
        assert_eq!(
            m.to_json(),
            r#"{"role":"user","content":[{"type":"text","text":"b"}]}"#
        );
    }

    #[test]
    fn parses_every_block_kind() {
        let src = r#"{"role":"user","content":[
            {"type":"text","text":"hi"},
            {"type":"tool_result","tool_use_id":"t1","content":"ok"},
            {"type":"tool_result","tool_use_id":"t2","content":[{"type":"text","text":"a"},{"type":"image","source":{}}],"is_error":true},
            {"type":"tool_result","tool_use_id":"t3"},
            {"type":"thinking","thinking":"...","signature":"s"},
            {"type":"image","source":{"type":"base64"}},
            {"type":"server_tool_use","id":"x"}]}"#;
        let m = Message::from_json(src).unwrap();
        let kinds: Vec<_> = m.blocks().iter().map(|b| b.block_type()).collect();
        assert_eq!(
            kinds,
            [
                "text",
                "tool_result",
                "tool_result",
                "tool_result",
                "thinking",
                "image",
                "server_tool_use"
            ]
        );
        match m.blocks()[2].kind() {
            BlockKind::ToolResult {
                content: ToolResultContent::Blocks(b),
                is_error,
                ..
            } => {
                assert_eq!(b.len(), 2);
                assert!(is_error);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(matches!(
            m.blocks()[3].kind(),
            BlockKind::ToolResult {
                content: ToolResultContent::Empty,
                ..
            }
        ));
        assert!(!m.blocks()[4].is_markable());
    }

    #[test]
    fn shape_errors_carry_a_json_pointer() {
        let err = Message::from_json(r#"{"role":"user","content":[{"type":"text","text":"a"},{"type":"tool_result","tool_use_id":7}]}"#)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "at /content/1/tool_use_id: expected a string"
        );
        let err = Message::from_json(r#"{"role":"robot","content":"x"}"#).unwrap_err();
        assert_eq!(err.pointer, "/role");
        let err = Message::from_json(r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text"}]}]}"#)
            .unwrap_err();
        assert_eq!(err.pointer, "/content/0/content/0/text");
    }

    #[test]
    fn string_content_and_builders() {
        let m = Message::new_text(Role::User, "hello \"x\"");
        assert_eq!(m.to_json(), r#"{"role":"user","content":"hello \"x\""}"#);
        let m2 = Message::new(Role::Assistant, vec![ContentBlock::text("a")]);
        assert_eq!(
            m2.to_json(),
            r#"{"role":"assistant","content":[{"type":"text","text":"a"}]}"#
        );
        assert_eq!(Message::from_json(&m2.to_json()).unwrap(), m2);
    }

    #[test]
    fn tool_names_are_held_once_and_written_as_read() {
        let use_of = |id: &str, name: &str| {
            Message::from_json(&format!(
                r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"{name}","input":{{}}}}]}}"#
            ))
            .unwrap()
        };
        let name = |m: &Message| match m.blocks()[0].kind() {
            BlockKind::ToolUse { name, .. } => name.clone(),
            other => panic!("{other:?}"),
        };
        let (a, b) = (
            use_of("t1", "shared_name_probe"),
            use_of("t2", "shared_name_probe"),
        );
        assert!(Arc::ptr_eq(&name(&a), &name(&b)));
        // The member writes the same bytes from the shared copy.
        assert!(b.to_json().contains(r#""name":"shared_name_probe""#));
        // A name spelled with an escape keeps its own bytes.
        let c = use_of("t3", r"shared_name_\u0070robe");
        assert_eq!(&*name(&c), "shared_name_probe");
        assert!(!Arc::ptr_eq(&name(&a), &name(&c)));
        assert!(c.to_json().contains(r#""name":"shared_name_\u0070robe""#));
    }

    #[test]
    fn a_result_shares_its_tool_use_id_where_its_bytes_allow() {
        let result = |id: &str| {
            Message::from_json(&format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"ok"}}]}}"#
            ))
            .unwrap()
        };
        let id_of = |m: &Message| match m.blocks()[0].kind() {
            BlockKind::ToolResult { tool_use_id, .. } => tool_use_id.clone(),
            other => panic!("{other:?}"),
        };
        let shared: Arc<str> = Arc::from("toolu_A");
        let mut plain = result("toolu_A");
        let before = plain.to_json();
        plain.share_tool_use_ids(|id| (id == "toolu_A").then(|| shared.clone()));
        assert!(Arc::ptr_eq(&id_of(&plain), &shared));
        assert_eq!(plain.to_json(), before);
        // An escaped spelling keeps its bytes and its own copy.
        let mut escaped = result(r"toolu_\u0041");
        let before = escaped.to_json();
        escaped.share_tool_use_ids(|id| (id == "toolu_A").then(|| shared.clone()));
        assert!(!Arc::ptr_eq(&id_of(&escaped), &shared));
        assert_eq!(escaped.to_json(), before);
        // A copy of another text is not taken.
        let mut other = result("toolu_B");
        other.share_tool_use_ids(|_| Some(shared.clone()));
        assert_eq!(&*id_of(&other), "toolu_B");
    }
}

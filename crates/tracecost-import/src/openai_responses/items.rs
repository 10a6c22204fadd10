//! Responses API items (what a request's `input` lists and a response's
//! `output` returns, and what a Codex rollout records as `response_item`
//! lines) as Anthropic-shaped messages. Kept apart from the log reader
//! because the Codex importer maps the same items from another container.
//!
//! Mapping, item by item:
//!
//! - `message` with role `system` / `developer` before any other item →
//!   the prompt's system text blocks; later ones → user text messages
//!   (reported) whose `source_role` member keeps the role they were sent
//!   with. Role `user` → a user message (marked `within_turn` where the
//!   reader knows it joined a turn already running). Role `user` → a user message, role `assistant` → text
//!   blocks of the assistant message. Parts: `input_text` / `output_text`
//!   / `text` → text blocks, `refusal` → a text block, `input_image`
//!   (`image_url`, a URL or a `data:` URL) → an image block; other parts
//!   (files, audio) are dropped and reported;
//! - `reasoning` → a `thinking` block: its `summary` texts joined by blank
//!   lines as `thinking`, its `encrypted_content` (what is sent back) as
//!   `signature`;
//! - `function_call` {`call_id`, `name`, `arguments`} → a `tool_use` block
//!   whose `input` is the `arguments` JSON text, bytes kept (not an object:
//!   `{"_raw": …}`, reported), as in the Chat Completions importer;
//! - `custom_tool_call` {`call_id`, `name`, `input`} (free-form tools such
//!   as Codex's `apply_patch`) → a `tool_use` block with input
//!   `{"input": <the text>}`;
//! - `local_shell_call` {`call_id`, `action`} → a `tool_use` block named
//!   `local_shell` whose input is the `action` object;
//! - `function_call_output` / `custom_tool_call_output` /
//!   `local_shell_call_output` {`call_id`, `output`} → a `tool_result`
//!   block: a string output stays a string, a list of `input_text` /
//!   `input_image` items becomes blocks, Codex's older `{"content": …}`
//!   object its `content`;
//! - `web_search_call` and other items of hosted tools have no Anthropic
//!   shape: a text block of the item's JSON stands for each (reported);
//!   a `compaction` item (Codex's remote compaction) is a user text block
//!   of its `encrypted_content`, what the model is sent; `item_reference`
//!   and Codex's `ghost_snapshot` (never sent) are dropped and reported.
//!
//! Consecutive items of the model (reasoning, assistant text, tool calls)
//! form one assistant message and consecutive tool outputs one user
//! message, as the Anthropic API sees a turn; a user message item is a
//! message of its own. [`Items::seal`] ends the message being built, so a
//! call boundary never falls inside a message.

use serde_json::value::RawValue;

use crate::common::{
    IdGen, ResultContent, Unmapped, compact_object, image_from_url, tool_result_block,
    tool_use_block,
};
use crate::openai::arguments_input;
use tracecost_engine::json::{RawObject, raw_json, raw_string};
use tracecost_engine::message::{BlockKind, ContentBlock, Message, Role};

/// Which side of the conversation an item is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Side {
    /// Sent to the model: user messages and tool outputs.
    Input,
    /// Produced by the model: reasoning, assistant text, tool calls.
    Output,
}

/// The kind of message being built, for what may join it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    /// An assistant message: more model items join it.
    Assistant,
    /// A user message of tool results: more tool outputs join it.
    ToolResults,
    /// A user message: nothing joins it.
    User,
}

/// A history being built from items.
pub(crate) struct Items {
    /// Leading system and developer text.
    pub(crate) system: Vec<ContentBlock>,
    messages: Vec<Message>,
    open: Option<(Open, Vec<ContentBlock>)>,
    ids: IdGen,
    /// Whether a user message pushed now joins a turn already running
    /// (marked [`tracecost_trace::WITHIN_TURN`]): the reader knows turns,
    /// the items do not.
    pub(crate) user_within_turn: bool,
}

/// How ids for tool calls that have none start (OpenAI's spelling).
const GENERATED_IDS: &str = "call_import_";

impl Items {
    /// An empty history.
    pub(crate) fn new() -> Self {
        Self {
            system: Vec::new(),
            messages: Vec::new(),
            open: None,
            ids: IdGen::new(GENERATED_IDS),
            user_within_turn: false,
        }
    }

    /// A history starting with `messages` (what an earlier call sent and
    /// got back, for a request that continues it).
    pub(crate) fn continuing(messages: Vec<Message>) -> Self {
        Self {
            messages,
            ..Self::new()
        }
    }

    /// Messages so far, counting the one being built.
    pub(crate) fn len(&self) -> usize {
        self.messages.len() + usize::from(self.open.is_some())
    }

    /// Ends the message being built: the next item starts a new one.
    pub(crate) fn seal(&mut self) {
        if let Some((open, blocks)) = self.open.take() {
            let role = match open {
                Open::Assistant => Role::Assistant,
                Open::ToolResults | Open::User => Role::User,
            };
            self.messages.push(Message::new(role, blocks));
        }
    }

    /// Every message, the one being built included.
    pub(crate) fn finish(mut self) -> Vec<Message> {
        self.seal();
        self.messages
    }

    /// Inserts a user text message first (a stand-in for a request that
    /// was not recorded).
    pub(crate) fn insert_first(&mut self, text: &str) {
        self.messages.insert(0, Message::new_text(Role::User, text));
    }

    /// Adds one item (a JSON object); `None` when it was dropped (and
    /// reported), else its side.
    pub(crate) fn push(&mut self, raw: &RawValue, un: &mut Unmapped) -> Option<Side> {
        let Some(obj) = compact_object(raw.get()) else {
            un.add("items that are not objects (dropped)", 1);
            return None;
        };
        let kind = str_of(&obj, "type").unwrap_or_default();
        match kind.as_str() {
            // A message with a role and no `type` is an easy input message.
            "message" | "" if obj.get("role").is_some() => self.message(&obj, un),
            "reasoning" => {
                let block = reasoning_block(&obj);
                self.add(Open::Assistant, block);
                Some(Side::Output)
            }
            "function_call" => {
                let id = self.call_id(&obj, un);
                let name = name_of(&obj, un);
                let input = arguments_input(obj.raw("arguments"), un);
                self.add(Open::Assistant, tool_use_block(&id, &name, input));
                Some(Side::Output)
            }
            "custom_tool_call" => {
                let id = self.call_id(&obj, un);
                let name = name_of(&obj, un);
                let mut input = RawObject::new();
                input.set(
                    "input",
                    raw_string(&str_of(&obj, "input").unwrap_or_default()),
                );
                let input = raw_json(input.to_json());
                self.add(Open::Assistant, tool_use_block(&id, &name, input));
                Some(Side::Output)
            }
            "local_shell_call" => {
                let id = self.call_id(&obj, un);
                let input = obj
                    .raw("action")
                    .filter(|a| a.get().starts_with('{'))
                    .map_or_else(|| raw_json("{}".to_owned()), ToOwned::to_owned);
                self.add(Open::Assistant, tool_use_block(&id, "local_shell", input));
                Some(Side::Output)
            }
            "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
                let content = output_content(obj.raw("output"), un);
                let block = match str_of(&obj, "call_id").filter(|id| !id.is_empty()) {
                    Some(id) => tool_result_block(&id, content, false),
                    None => {
                        un.add("tool outputs without a call_id (kept as text)", 1);
                        match content {
                            ResultContent::Text(t) => ContentBlock::text(&t),
                            ResultContent::Blocks(b) => b
                                .into_iter()
                                .next()
                                .unwrap_or_else(|| ContentBlock::text("")),
                        }
                    }
                };
                self.add(Open::ToolResults, block);
                Some(Side::Input)
            }
            "message" => {
                un.add("messages without a role (dropped)", 1);
                None
            }
            "item_reference" => {
                un.add(
                    "item_reference items (stored server-side, not in the log; dropped)",
                    1,
                );
                None
            }
            "ghost_snapshot" => {
                un.add("ghost_snapshot items (never sent to the model; dropped)", 1);
                None
            }
            "compaction" | "compaction_summary" => {
                // What the model is sent is the encrypted summary.
                un.add(
                    "compaction items (encrypted summaries; sent as their text)",
                    1,
                );
                let text = str_of(&obj, "encrypted_content").unwrap_or_default();
                self.add(Open::User, ContentBlock::text(&text));
                Some(Side::Input)
            }
            "" => {
                un.add("items without a type (dropped)", 1);
                None
            }
            _ => {
                // web_search_call, image_generation_call, mcp_call…: the
                // model's own items, sent back as they are; their JSON
                // text stands for them.
                un.add(
                    "model items with no Anthropic shape (web searches, hosted tools; sent as their JSON text)",
                    1,
                );
                self.add(Open::Assistant, ContentBlock::text(&obj.to_json()));
                Some(Side::Output)
            }
        }
    }

    fn message(&mut self, obj: &RawObject, un: &mut Unmapped) -> Option<Side> {
        let role = str_of(obj, "role").unwrap_or_default();
        let blocks = parts(obj.raw("content"), un);
        match role.as_str() {
            "system" | "developer" if self.len() == 0 => {
                self.system.extend(
                    blocks
                        .into_iter()
                        .filter(|b| matches!(b.kind(), BlockKind::Text { .. })),
                );
                Some(Side::Input)
            }
            "system" | "developer" => {
                un.add(
                    "developer or system messages after the first item (sent as user text)",
                    1,
                );
                self.seal();
                let m = Message::new(Role::User, blocks);
                self.messages.push(with_member(
                    m,
                    tracecost_trace::SOURCE_ROLE,
                    raw_string(&role),
                ));
                Some(Side::Input)
            }
            "user" if self.user_within_turn => {
                self.seal();
                let m = Message::new(Role::User, blocks);
                self.messages.push(with_member(
                    m,
                    tracecost_trace::WITHIN_TURN,
                    raw_json("true".to_owned()),
                ));
                Some(Side::Input)
            }
            "user" => {
                self.user(blocks);
                Some(Side::Input)
            }
            "assistant" => {
                for b in blocks {
                    self.add(Open::Assistant, b);
                }
                if self.open.is_none() {
                    self.add(Open::Assistant, ContentBlock::text(""));
                }
                Some(Side::Output)
            }
            _ => {
                un.add("messages with an unknown role (dropped)", 1);
                None
            }
        }
    }

    fn user(&mut self, blocks: Vec<ContentBlock>) {
        self.seal();
        self.open = Some((Open::User, blocks));
        self.seal();
    }

    fn add(&mut self, kind: Open, block: ContentBlock) {
        match &mut self.open {
            Some((open, blocks)) if *open == kind && kind != Open::User => blocks.push(block),
            _ => {
                self.seal();
                self.open = Some((kind, vec![block]));
            }
        }
    }

    fn call_id(&mut self, obj: &RawObject, un: &mut Unmapped) -> String {
        match str_of(obj, "call_id")
            .or_else(|| str_of(obj, "id"))
            .filter(|id| !id.is_empty())
        {
            Some(id) => id,
            None => {
                un.add("tool calls without a call_id (given a generated one)", 1);
                self.ids.next()
            }
        }
    }
}

fn str_of(o: &RawObject, k: &str) -> Option<String> {
    match o.parse::<String>(k) {
        Some(Ok(s)) => Some(s),
        _ => None,
    }
}

fn name_of(obj: &RawObject, un: &mut Unmapped) -> String {
    str_of(obj, "name").unwrap_or_else(|| {
        un.add("tool calls without a name (named \"unknown\")", 1);
        "unknown".to_owned()
    })
}

/// `m` with the member `key` set to `value` (what the source said of it
/// that the trace's message shape has no place for).
fn with_member(m: Message, key: &str, value: Box<RawValue>) -> Message {
    let Ok(mut fields) = RawObject::from_json(&m.to_json()) else {
        return m;
    };
    fields.set(key, value);
    Message::from_object(fields).unwrap_or(m)
}

fn reasoning_block(obj: &RawObject) -> ContentBlock {
    let mut texts = Vec::new();
    if let Some(Ok(summary)) = obj.parse::<Vec<RawObject>>("summary") {
        texts.extend(summary.iter().filter_map(|s| str_of(s, "text")));
    }
    let mut f = RawObject::new();
    f.set("type", raw_string("thinking"));
    f.set("thinking", raw_string(&texts.join("\n\n")));
    f.set(
        "signature",
        raw_string(&str_of(obj, "encrypted_content").unwrap_or_default()),
    );
    ContentBlock::from_object(f).unwrap_or_else(|_| ContentBlock::text(""))
}

/// A message's `content`: a string (one text block) or a list of parts.
fn parts(raw: Option<&RawValue>, un: &mut Unmapped) -> Vec<ContentBlock> {
    let Some(raw) = raw else {
        return Vec::new();
    };
    let list = match crate::common::split_content(raw, un) {
        Ok(list) => list,
        Err(blocks) => return blocks,
    };
    let mut out = Vec::with_capacity(list.len());
    for p in list {
        let Some(obj) = compact_object(p.get()) else {
            un.add("content parts of an invalid shape (dropped)", 1);
            continue;
        };
        let kind = str_of(&obj, "type").unwrap_or_default();
        let block = match kind.as_str() {
            "input_text" | "output_text" | "text" => {
                str_of(&obj, "text").map(|t| ContentBlock::text(&t))
            }
            "refusal" => str_of(&obj, "refusal").map(|t| ContentBlock::text(&t)),
            "input_image" => {
                let url = str_of(&obj, "image_url").or_else(|| {
                    match obj.parse::<RawObject>("image_url") {
                        Some(Ok(o)) => str_of(&o, "url"),
                        _ => None,
                    }
                });
                match url {
                    Some(u) => image_from_url(&u),
                    None => {
                        un.add(
                            "input_image parts without an image_url (file ids; dropped)",
                            1,
                        );
                        continue;
                    }
                }
            }
            _ => {
                un.add(
                    "content parts with no Anthropic mapping (files, audio…; dropped)",
                    1,
                );
                continue;
            }
        };
        match block {
            Some(b) => out.push(b),
            None => un.add("content parts of an invalid shape (dropped)", 1),
        }
    }
    out
}

/// A tool output: a string, a list of content items, or Codex's older
/// `{"content": …, "success": …}` payload.
fn output_content(raw: Option<&RawValue>, un: &mut Unmapped) -> ResultContent {
    let Some(raw) = raw else {
        return ResultContent::Text(String::new());
    };
    let text = raw.get();
    if let Ok(s) = serde_json::from_str::<String>(text) {
        return ResultContent::Text(s);
    }
    if text.starts_with('[') {
        return ResultContent::Blocks(parts(Some(raw), un));
    }
    if let Some(obj) = compact_object(text)
        && let Some(c) = obj.raw("content")
    {
        return output_content(Some(c), un);
    }
    un.add(
        "tool outputs of an invalid shape (kept as their JSON text)",
        1,
    );
    ResultContent::Text(text.to_owned())
}

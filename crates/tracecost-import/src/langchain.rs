//! Importer for LangChain / LangGraph message lists as `messages_to_dict`
//! saves them: `{"type": "human"|"ai"|"tool"|"system", "data": {...}}`.
//!
//! A file holds one JSON list (one final conversation), a JSON list of lists
//! (one list per model call), JSONL with one list per line (one per model
//! call), or a LangGraph state object `{"messages": [...]}` (a final list).
//! `.jsonl` / `.ndjson` files are always read as lines.
//!
//! Mapping to Anthropic shapes:
//!
//! - `system` → the prompt's system text blocks; a system message after the
//!   conversation began becomes a user text message (reported);
//! - `human` → a user message (string content stays a string);
//! - `ai` → an assistant message: string content stays a string when there
//!   are no tool calls; otherwise text blocks, then `tool_use` blocks whose
//!   `input` is the call's `args` with the file's key order and value bytes
//!   (whitespace between tokens dropped). A `tool_use` block already in the
//!   content takes its input from the matching tool call; calls not in the
//!   content follow it, as langchain-anthropic sends them;
//! - `tool` → a `tool_result` block (`is_error` when `status` is `"error"`);
//!   consecutive tool messages merge into one user message;
//! - content parts: text (strings or `{"type":"text"}`), images (`image_url`
//!   or LangChain's `image` with `source_type`) and Anthropic-native blocks
//!   (`image`, `document`, `thinking`, …) are kept; others are dropped and
//!   reported. `cache_control` members are removed from blocks.
//!
//! Calls: a list per model call gives one call per list sending its
//! messages — except that a list ending with an `ai` message is read as the
//! state after the call, whose last message is the reply (the call sends the
//! rest and takes its usage from it). Lists extend a trace when the trace's
//! latest list is a prefix of theirs; otherwise they start a new trace. A
//! single final list gives one call per `ai` message, sending everything
//! before it (a list with no `ai` message gives one call sending it all).
//! Markers found in per-call lists become that call's markers.
//!
//! Usage, when an `ai` message has it: `response_metadata.usage` (Anthropic
//! fields, or OpenAI's `prompt_tokens`), `response_metadata.token_usage`
//! (OpenAI), else `usage_metadata` (LangChain's totals: uncached input =
//! `input_tokens` − `cache_read` − `cache_creation` of
//! `input_token_details`). The model comes from
//! `response_metadata.model_name` / `model`; the provider is OpenAI for
//! `gpt-*` / `o1`… / `chatgpt-*` models, Google for `gemini-*`, else
//! Anthropic.

use std::path::{Path, PathBuf};

use serde_json::value::RawValue;

use super::common::{
    self, Conversations, Doc, NewCall, ReplyMeta, ResultContent, TraceBuilder, Unmapped,
    compact_object, finish_usage, image_from_url, merge_anthropic_usage, message_key, openai_usage,
    position_of, read_text, split_doc, tool_result_block, tool_use_block,
};
use super::{ImportError, ImportOptions, ImportOutput, ImportReport};
use crate::engine::cache::ProviderKind;
use crate::engine::json::{RawObject, raw_json, raw_string};
use crate::engine::message::{BlockKind, ContentBlock, Message, Role};
use crate::engine::wire::{BlockRef, MAX_BREAKPOINTS, Marker, Ttl};
use crate::trace::{Call, Prompt, RecordedUsage};

/// Imports LangChain / LangGraph message lists (`messages_to_dict` output).
/// Directories are expanded to their `.json`/`.jsonl` files; files are read
/// in path order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportOutput, ImportError> {
    super::Format::Langchain.import(inputs, opts)
}

/// What [`super::Format::Langchain`] reads, for the loop every log importer
/// shares ([`common::import_files`]).
pub(crate) const LOG: common::LogFormat = common::LogFormat {
    unit: "call(s)",
    nothing_found: "LangChain message lists",
    read,
};

fn read(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportReport,
    un: &mut Unmapped,
) -> Result<(Vec<TraceBuilder>, String), ImportError> {
    let (builders, kind) = import_file(path, opts, report, un)?;
    Ok((
        builders,
        format!("LangChain messages {} ({kind})", common::file_name(path)),
    ))
}

/// One list with the line it starts at.
struct List<'a> {
    line: usize,
    items: Vec<&'a RawValue>,
}

fn import_file(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportReport,
    un: &mut Unmapped,
) -> Result<(Vec<TraceBuilder>, &'static str), ImportError> {
    let text = read_text(path)?;
    let Some(doc) = split_doc(path, &text, opts, report)? else {
        return Ok((Vec::new(), ""));
    };
    let bad = |part: &str, msg: &str| {
        let (line, col) = position_of(&text, part);
        common::invalid(path, line, Some(col), msg)
    };
    match doc {
        Doc::Whole(v) => {
            let Some(items) = list_items(v) else {
                return Err(bad(
                    v.get(),
                    "expected a list of LangChain messages, a list of such lists, or {\"messages\": [...]}",
                ));
            };
            let (line, _) = position_of(&text, v.get());
            let nested = items.first().is_some_and(|i| i.get().starts_with('['));
            if !nested {
                let b = final_list(&List { line, items }, un);
                return Ok((b.into_iter().collect(), "final list"));
            }
            let mut lists = Vec::with_capacity(items.len());
            for item in items {
                match serde_json::from_str::<Vec<&RawValue>>(item.get()) {
                    Ok(inner) => lists.push(List {
                        line: position_of(&text, item.get()).0,
                        items: inner,
                    }),
                    Err(_) => {
                        common::reject(
                            opts,
                            report,
                            bad(item.get(), "expected a list of messages"),
                        )?;
                    }
                }
            }
            Ok((per_call_lists(&lists, un), "one list per call"))
        }
        Doc::Lines(lines) => {
            let mut lists = Vec::with_capacity(lines.len());
            for (line, l) in lines {
                match serde_json::from_str::<&RawValue>(l) {
                    Err(e) => {
                        let err = common::invalid(
                            path,
                            line,
                            Some(e.column().max(1)),
                            &common::strip_position(&e),
                        );
                        common::reject(opts, report, err)?;
                    }
                    Ok(v) => match list_items(v) {
                        Some(items) => lists.push(List { line, items }),
                        None => {
                            let err = common::invalid(
                                path,
                                line,
                                Some(1),
                                "expected a list of LangChain messages",
                            );
                            common::reject(opts, report, err)?;
                        }
                    },
                }
            }
            Ok((per_call_lists(&lists, un), "one list per call"))
        }
    }
}

/// The items of a JSON list, or of a `{"messages": [...]}` object.
fn list_items(v: &RawValue) -> Option<Vec<&RawValue>> {
    let text = v.get();
    if text.starts_with('[') {
        return serde_json::from_str(text).ok();
    }
    if text.starts_with('{') {
        #[derive(serde::Deserialize)]
        struct State<'a> {
            #[serde(borrow)]
            messages: Option<&'a RawValue>,
        }
        let s: State<'_> = serde_json::from_str(text).ok()?;
        return serde_json::from_str(s.messages?.get()).ok();
    }
    None
}

/// A mapped list.
#[derive(Default)]
struct Mapped {
    system: Vec<ContentBlock>,
    messages: Vec<Message>,
    meta: Vec<Option<ReplyMeta>>,
    markers: Vec<Marker>,
    /// Whether the last LangChain message was an `ai` message.
    ends_with_ai: bool,
    models: Vec<String>,
}

impl Mapped {
    fn push(&mut self, m: Message, meta: Option<ReplyMeta>) {
        self.messages.push(m);
        self.meta.push(meta);
    }
}

fn per_call_lists(lists: &[List<'_>], un: &mut Unmapped) -> Vec<TraceBuilder> {
    let mut convs = Conversations::default();
    let mut ids = IdGen::default();
    for list in lists {
        let mapped = map_list(&list.items, &mut ids, un);
        if mapped.messages.is_empty() {
            un.add("empty message lists (no call)", 1);
            continue;
        }
        let len = mapped.messages.len();
        let n = if mapped.ends_with_ai { len - 1 } else { len };
        if n == 0 {
            un.add("lists holding only a model reply (no call)", 1);
            continue;
        }
        let (usage, model) = match (mapped.ends_with_ai, mapped.meta.last()) {
            (true, Some(Some(meta))) => (meta.usage, meta.model.clone()),
            _ => (None, None),
        };
        let mut markers: Vec<Marker> = mapped
            .markers
            .iter()
            .copied()
            .filter(|m| !matches!(m.at, BlockRef::Message { message, .. } if message >= n))
            .collect();
        un.add(
            "cache_control markers on the reply of a per-call list (dropped)",
            mapped.markers.len() - markers.len(),
        );
        if markers.len() > MAX_BREAKPOINTS {
            un.add(
                "cache_control markers beyond the API's 4 per request (dropped)",
                markers.len() - MAX_BREAKPOINTS,
            );
            markers.truncate(MAX_BREAKPOINTS);
        }
        let provider = provider_of(&mapped.models);
        let keys = mapped.messages.iter().map(message_key).collect();
        let call = Call {
            cleared: Vec::new(),
            messages: n,
            start_ms: None,
            model,
            prompt: 0,
            markers: (!markers.is_empty()).then_some(markers),
            usage,
        };
        let req = NewCall {
            messages: mapped.messages,
            keys,
            meta: mapped.meta,
            prompt: Prompt {
                system: mapped.system,
                tools: Vec::new(),
            },
        };
        convs.add(provider, list.line, req, call, None);
    }
    let mut builders = convs.builders;
    // A call whose list did not hold its reply takes usage and model from
    // the reply found in the history right after its messages.
    for b in &mut builders {
        for c in &mut b.calls {
            if c.usage.is_some() || c.model.is_some() {
                continue;
            }
            if let Some(Some(meta)) = b.meta.get(c.messages) {
                c.usage = meta.usage;
                c.model = meta.model.clone();
            }
        }
    }
    builders
}

fn final_list(list: &List<'_>, un: &mut Unmapped) -> Option<TraceBuilder> {
    let mut ids = IdGen::default();
    let mapped = map_list(&list.items, &mut ids, un);
    if mapped.messages.is_empty() {
        un.add("empty message lists (no call)", 1);
        return None;
    }
    un.add(
        "cache_control markers in a final list (dropped: which call carried them is unknown)",
        mapped.markers.len(),
    );
    let mut b = TraceBuilder::new(provider_of(&mapped.models), list.line);
    let prompt = b.prompt_index(Prompt {
        system: mapped.system,
        tools: Vec::new(),
    });
    let mut calls = Vec::new();
    let mut first_ai_alone = 0;
    for (i, meta) in mapped.meta.iter().enumerate() {
        let Some(meta) = meta else { continue };
        if i == 0 {
            first_ai_alone += 1;
            continue;
        }
        calls.push(Call {
            cleared: Vec::new(),
            messages: i,
            start_ms: None,
            model: meta.model.clone(),
            prompt,
            markers: None,
            usage: meta.usage,
        });
    }
    un.add(
        "ai messages with nothing before them (no call)",
        first_ai_alone,
    );
    if calls.is_empty() {
        calls.push(Call {
            messages: mapped.messages.len(),
            prompt,
            ..Call::default()
        });
    }
    b.calls = calls;
    b.messages = mapped.messages;
    b.meta = mapped.meta;
    Some(b)
}

fn provider_of(models: &[String]) -> ProviderKind {
    let Some(m) = models.first() else {
        return ProviderKind::Anthropic;
    };
    let m = m.to_ascii_lowercase();
    let openai = m.starts_with("gpt")
        || m.starts_with("chatgpt")
        || (m.starts_with('o') && m.chars().nth(1).is_some_and(|c| c.is_ascii_digit()));
    if openai {
        ProviderKind::OpenAi
    } else if m.starts_with("gemini") {
        ProviderKind::Google
    } else {
        ProviderKind::Anthropic
    }
}

/// Generated ids for tool calls that have none.
#[derive(Default)]
struct IdGen {
    n: usize,
}

impl IdGen {
    fn next(&mut self) -> String {
        self.n += 1;
        format!("toolu_import_{}", self.n)
    }
}

fn map_list(items: &[&RawValue], ids: &mut IdGen, un: &mut Unmapped) -> Mapped {
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
    let Some(raw) = data.get("content") else {
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
    match call.get("args") {
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
    let call_id = |c: &RawObject| match c.parse::<String>("id") {
        Some(Ok(id)) if !id.is_empty() => Some(id),
        _ => None,
    };
    if calls.is_empty()
        && let Some(Ok(s)) = data.parse::<String>("content")
    {
        return (Message::new_text(Role::Assistant, &s), meta);
    }
    let mut blocks: Vec<ContentBlock> = Vec::new();
    let mut used = vec![false; calls.len()];
    let mut push_call = |c: &RawObject, blocks: &mut Vec<ContentBlock>, un: &mut Unmapped| {
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
        blocks.push(tool_use_block(&id, &name, args_input(c, un)));
    };
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
                            push_call(&calls[k], &mut blocks, un);
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
            push_call(c, &mut blocks, un);
        }
    }
    (Message::new(Role::Assistant, blocks), meta)
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

fn reply_meta(data: &RawObject, un: &mut Unmapped) -> ReplyMeta {
    let rm = match data.parse::<RawObject>("response_metadata") {
        Some(Ok(o)) => Some(o),
        _ => None,
    };
    let model = rm.as_ref().and_then(|rm| {
        ["model_name", "model"]
            .iter()
            .find_map(|k| match rm.parse::<String>(k) {
                Some(Ok(m)) if !m.is_empty() => Some(m),
                _ => None,
            })
    });
    let mut usage = None;
    if let Some(rm) = &rm {
        if let Some(u) = rm.get("usage").filter(|u| u.get().starts_with('{')) {
            if u.get().contains("\"prompt_tokens\"") {
                usage = openai_usage(u);
            } else {
                let mut r = RecordedUsage::default();
                if merge_anthropic_usage(&mut r, u) {
                    usage = Some(r);
                }
            }
        }
        if usage.is_none()
            && let Some(u) = rm.get("token_usage").filter(|u| u.get().starts_with('{'))
        {
            usage = openai_usage(u);
        }
    }
    if usage.is_none()
        && let Some(u) = data
            .get("usage_metadata")
            .filter(|u| u.get().starts_with('{'))
    {
        usage = langchain_usage(u);
    }
    ReplyMeta {
        usage: usage.and_then(|u| finish_usage(u, un)),
        model,
    }
}

#[derive(serde::Deserialize)]
struct LcUsage {
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    input_token_details: Option<LcDetails>,
}

#[derive(serde::Deserialize)]
struct LcDetails {
    cache_read: Option<u64>,
    cache_creation: Option<u64>,
    ephemeral_5m_input_tokens: Option<u64>,
    ephemeral_1h_input_tokens: Option<u64>,
}

/// LangChain's `usage_metadata`, whose `input_tokens` is the total input.
fn langchain_usage(raw: &RawValue) -> Option<RecordedUsage> {
    let u: LcUsage = serde_json::from_str(raw.get()).ok()?;
    let d = u.input_token_details;
    let read = d.as_ref().and_then(|d| d.cache_read);
    let creation = d.as_ref().and_then(|d| d.cache_creation);
    Some(RecordedUsage {
        input_tokens: u.input_tokens.map(|t| {
            t.saturating_sub(read.unwrap_or(0))
                .saturating_sub(creation.unwrap_or(0))
        }),
        cache_creation_input_tokens: creation,
        ephemeral_5m_input_tokens: d.as_ref().and_then(|d| d.ephemeral_5m_input_tokens),
        ephemeral_1h_input_tokens: d.as_ref().and_then(|d| d.ephemeral_1h_input_tokens),
        cache_read_input_tokens: read,
        output_tokens: u.output_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(json: &str) -> (Mapped, Unmapped) {
        let items: Vec<&RawValue> = serde_json::from_str(json).unwrap();
        let mut un = Unmapped::default();
        let mut ids = IdGen::default();
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

    #[test]
    fn usage_metadata_totals_are_split() {
        let raw = RawValue::from_string(
            r#"{"input_tokens":1000,"output_tokens":7,"total_tokens":1007,"input_token_details":{"cache_read":800,"cache_creation":150}}"#.to_owned(),
        )
        .unwrap();
        let u = langchain_usage(&raw).unwrap();
        assert_eq!(u.input_tokens, Some(50));
        assert_eq!(u.cache_read_input_tokens, Some(800));
        assert_eq!(u.cache_creation_input_tokens, Some(150));
        assert_eq!(u.output_tokens, Some(7));
    }
}

//! Importer for OpenAI Chat Completions conversations, mapped to Anthropic
//! shapes so they can be priced and replayed like any other trace.
//!
//! A file holds one request body `{"model", "messages", "tools"?}` (one
//! call), a bare list of messages (a conversation), a JSON list of request
//! bodies or `{"request": …, "response": …}` pairs, or JSONL of either (one
//! call per line). `.jsonl` / `.ndjson` files are always read as lines.
//! Requests and responses may be wrapped by a recorder (`{"body": …,
//! "status_code": …}`), as in the Anthropic request-log importer.
//!
//! Mapping:
//!
//! - leading `system` / `developer` messages → the prompt's system text
//!   blocks; later ones become user text messages (reported);
//! - `user` → a user message (string content stays a string; `text` parts →
//!   text blocks, `image_url` parts → image blocks);
//! - `assistant` → string content stays a string when there are no tool
//!   calls; otherwise text blocks (content, or `refusal`), then one
//!   `tool_use` block per `tool_calls` entry whose `input` is the
//!   `arguments` JSON text with its bytes kept. Arguments that are not a
//!   JSON object are wrapped as `{"_raw": "<string>"}` and reported;
//! - `tool` → a `tool_result` block; consecutive tool messages merge into
//!   one user message;
//! - `tools` (`{"type":"function","function":{…}}`) → `{"name",
//!   "description", "input_schema"}` (`parameters`, or an empty object
//!   schema). Other tool types and `strict` flags are reported.
//!
//! Calls: each request body is one call sending its mapped messages;
//! successive requests extend a trace when its latest request's messages
//! are a prefix of theirs, otherwise they start a new trace. A bare list
//! gives one call per assistant message, sending everything before it (a
//! list with no assistant message gives one call sending it all). Usage
//! comes from responses: `prompt_tokens` includes both the cache reads
//! (`prompt_tokens_details.cached_tokens`) and, on GPT-5.6 and later, the
//! cache writes (`prompt_tokens_details.cache_write_tokens`), so uncached
//! input is `prompt_tokens` − `cached_tokens` − `cache_write_tokens`, read
//! and written are kept apart (a write is billed once, as a write), and
//! `completion_tokens` is output. A usage whose read and written tokens
//! exceed `prompt_tokens` contradicts itself: it is an error at the
//! record's `…/usage` (the record is skipped under `skip_invalid`). The
//! response's `service_tier` is the tier that served it: `flex` is billed
//! at the Batch API's rates, `priority` as standard and counted
//! (`trace::RecordedModifiers::from_openai`).
//! `start_ms` from the
//! record's `timestamp`, else the response's `created`. The first choice's
//! message is the reply; the last call's reply ends the history.

use std::path::{Path, PathBuf};

use serde_json::value::RawValue;

use super::common::{
    self, Conversations, Doc, IdGen, NewCall, ResultContent, TraceBuilder, Unmapped, UsageProblem,
    answered, compact_object, exchange, finish_usage, image_from_url, message_key, openai_usage,
    position_of, read_text, split_doc, timestamp_ms, tool_result_block, tool_use_block,
};
use super::{ImportError, ImportOptions, ImportResult, ImportSummary};
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::json::{RawObject, raw_json, raw_string};
use tracecost_engine::message::{BlockKind, ContentBlock, Message, Role, ToolDefinition};
use tracecost_trace::{Call, Prompt};

/// Imports OpenAI Chat Completions request bodies, message lists and
/// request/response logs. Directories are expanded to their `.json`/`.jsonl`
/// files; files are read in path order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    super::InputFormat::Openai.import(inputs, opts)
}

/// What [`super::InputFormat::Openai`] reads, for the loop every log importer
/// shares ([`common::import_files`]).
pub(crate) const LOG: common::LogFormat = common::LogFormat {
    unit: "call(s)",
    nothing_found: "OpenAI conversations",
    read,
    first: None,
    csv: false,
};

fn read(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
    _shared: &mut common::Shared,
) -> Result<(Vec<TraceBuilder>, String), ImportError> {
    let builders = import_file(path, opts, report, un)?;
    Ok((
        builders,
        format!("OpenAI Chat Completions {}", common::file_name(path)),
    ))
}

fn import_file(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
) -> Result<Vec<TraceBuilder>, ImportError> {
    let text = read_text(path, opts, report)?;
    let Some(doc) = split_doc(path, &text, opts, report)? else {
        return Ok(Vec::new());
    };
    let mut convs = Conversations::default();
    let mut ids = IdGen::new(GENERATED_IDS);
    match doc {
        Doc::Whole(v) => {
            let (line, col) = position_of(&text, v.get());
            if v.get().starts_with('{') {
                let r = record(v, line, &mut convs, &mut ids, un);
                if let Err(msg) = r {
                    common::reject(opts, report, common::invalid(path, line, Some(col), &msg))?;
                }
                return Ok(convs.builders);
            }
            let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(v.get()) else {
                let err = common::invalid(
                    path,
                    line,
                    Some(col),
                    "expected a request body, a list of messages, or a list of request/response records",
                );
                common::reject(opts, report, err)?;
                return Ok(Vec::new());
            };
            let is_messages = items
                .first()
                .is_some_and(|i| compact_object(i.get()).is_some_and(|o| o.get("role").is_some()));
            if is_messages {
                return Ok(bare_list(&items, line, &mut ids, un).into_iter().collect());
            }
            for item in items {
                let (line, col) = position_of(&text, item.get());
                if let Err(msg) = record(item, line, &mut convs, &mut ids, un) {
                    common::reject(opts, report, common::invalid(path, line, Some(col), &msg))?;
                }
            }
        }
        Doc::Lines(lines) => {
            for (line, l) in lines {
                let v = match serde_json::from_str::<&RawValue>(l) {
                    Ok(v) => v,
                    Err(e) => {
                        common::reject(opts, report, common::invalid_json(path, line, &e))?;
                        continue;
                    }
                };
                if let Err(msg) = record(v, line, &mut convs, &mut ids, un) {
                    common::reject(opts, report, common::invalid(path, line, Some(1), &msg))?;
                }
            }
        }
    }
    Ok(convs.builders)
}

/// One request body or request/response pair (or a line holding a bare
/// list of messages, read as one request).
fn record(
    v: &RawValue,
    line: usize,
    convs: &mut Conversations,
    ids: &mut IdGen,
    un: &mut Unmapped,
) -> Result<(), String> {
    let text = v.get();
    // JSON pointer of the request body, for messages.
    let mut base = "";
    let (body, response, top_ts) = if text.starts_with('[') {
        let mut body = RawObject::new();
        body.set("messages", v.to_owned());
        (body, None, None)
    } else {
        let obj = compact_object(text).ok_or("expected a JSON object or a list of messages")?;
        let Some(x) = exchange(obj, un)? else {
            return Ok(());
        };
        base = x.base;
        (x.body, x.response, x.start_ms)
    };
    let items = match body.raw("messages") {
        None => {
            un.add(
                "records that are neither a request body nor a request/response pair",
                1,
            );
            return Ok(());
        }
        Some(raw) => serde_json::from_str::<Vec<&RawValue>>(raw.get())
            .map_err(|_| format!("at {base}/messages: expected an array of messages"))?,
    };
    let mapped = map_messages(&items, ids, un);
    if mapped.messages.is_empty() {
        un.add("requests with no conversation messages (no call)", 1);
        return Ok(());
    }
    let tools = map_tools(&body, un);
    if body.get("functions").is_some() {
        un.add("legacy functions lists (not mapped)", 1);
    }
    let model = match body.parse::<String>("model") {
        Some(Ok(m)) => Some(m),
        _ => None,
    };
    let mut start_ms = top_ts;
    let mut usage = None;
    let mut reply = None;
    if let Some((b, wrapped)) = response.and_then(|r| answered(r.as_deref(), un)) {
        if start_ms.is_none() {
            start_ms = b.raw("created").and_then(timestamp_ms);
        }
        if let Some(u) = b.raw("usage").filter(|u| u.get() != "null") {
            match openai_usage(u) {
                Ok(u) => usage = finish_usage(u, un),
                Err(UsageProblem::Malformed) => {
                    un.add(common::MALFORMED_USAGE, 1);
                }
                Err(UsageProblem::Exceeds(why)) => {
                    let at = if wrapped {
                        "/response/body/usage"
                    } else {
                        "/response/usage"
                    };
                    return Err(format!("at {at}: {why}"));
                }
            }
        }
        common::openai_tier(common::service_tier(&b).as_deref(), usage.as_mut(), un);
        reply = reply_message(&b, ids, un);
    }
    let call = Call {
        cleared: Vec::new(),
        compacted: None,
        messages: mapped.messages.len(),
        start_ms,
        model,
        prompt: 0,
        markers: None,
        usage: usage.map(Box::new),
    };
    let keys = mapped.messages.iter().map(message_key).collect();
    let req = NewCall {
        messages: mapped.messages,
        keys,
        meta: Vec::new(),
        prompt: Prompt {
            system: mapped.system,
            tools,
        },
    };
    convs.add(ProviderKind::OpenAi, line, req, call, reply);
    Ok(())
}

/// The first choice's message of a response body.
fn reply_message(body: &RawObject, ids: &mut IdGen, un: &mut Unmapped) -> Option<Message> {
    let choices = match body.parse::<Vec<RawObject>>("choices") {
        Some(Ok(c)) => c,
        _ => return None,
    };
    un.add(
        "response choices after the first (dropped)",
        choices.len().saturating_sub(1),
    );
    let message = choices.first()?.raw("message")?;
    let mapped = map_messages(&[message], ids, un);
    mapped
        .messages
        .into_iter()
        .find(|m| m.role() == Role::Assistant)
}

/// A bare list of messages: one call per assistant message.
fn bare_list(
    items: &[&RawValue],
    line: usize,
    ids: &mut IdGen,
    un: &mut Unmapped,
) -> Option<TraceBuilder> {
    let mapped = map_messages(items, ids, un);
    if mapped.messages.is_empty() {
        un.add("requests with no conversation messages (no call)", 1);
        return None;
    }
    let mut b = TraceBuilder::new(ProviderKind::OpenAi, line);
    let prompt = b.prompt_index(Prompt {
        system: mapped.system,
        tools: Vec::new(),
    });
    let mut calls: Vec<Call> = mapped
        .from_assistant
        .iter()
        .enumerate()
        .filter(|&(i, &a)| a && i > 0)
        .map(|(i, _)| Call {
            messages: i,
            prompt,
            ..Call::default()
        })
        .collect();
    if calls.is_empty() {
        calls.push(Call {
            messages: mapped.messages.len(),
            prompt,
            ..Call::default()
        });
    }
    b.calls = calls;
    b.messages = mapped.messages;
    Some(b)
}

/// How ids generated for tool calls that have none start (OpenAI's
/// spelling, as the calls they stand for).
const GENERATED_IDS: &str = "call_import_";

#[derive(Default)]
pub(crate) struct Mapped {
    pub(crate) system: Vec<ContentBlock>,
    pub(crate) messages: Vec<Message>,
    from_assistant: Vec<bool>,
}

impl Mapped {
    fn push(&mut self, m: Message, assistant: bool) {
        self.messages.push(m);
        self.from_assistant.push(assistant);
    }
}

pub(crate) fn map_messages(items: &[&RawValue], ids: &mut IdGen, un: &mut Unmapped) -> Mapped {
    let mut out = Mapped::default();
    let mut pending_tools: Vec<ContentBlock> = Vec::new();
    for item in items {
        let Some(obj) = compact_object(item.get()) else {
            un.add("messages that are not objects (dropped)", 1);
            continue;
        };
        let role = match obj.parse::<String>("role") {
            Some(Ok(r)) => r,
            _ => String::new(),
        };
        if role != "tool" && !pending_tools.is_empty() {
            let blocks = std::mem::take(&mut pending_tools);
            out.push(Message::new(Role::User, blocks), false);
        }
        if obj.get("name").is_some() && role != "tool" && role != "function" {
            un.add("message name fields (not mapped)", 1);
        }
        match role.as_str() {
            "system" | "developer" => {
                let parts = content_parts(obj.raw("content"), un);
                if out.messages.is_empty() {
                    out.system.extend(
                        parts
                            .into_iter()
                            .filter(|b| matches!(b.kind(), BlockKind::Text { .. })),
                    );
                } else {
                    un.add(
                        "system messages after the first turn (sent as user text)",
                        1,
                    );
                    out.push(Message::new(Role::User, parts), false);
                }
            }
            "user" => {
                let m = match obj.parse::<String>("content") {
                    Some(Ok(s)) => Message::new_text(Role::User, &s),
                    _ => Message::new(Role::User, content_parts(obj.raw("content"), un)),
                };
                out.push(m, false);
            }
            "assistant" => {
                let m = assistant_message(&obj, ids, un);
                out.push(m, true);
            }
            "tool" => {
                let content = match obj.parse::<String>("content") {
                    Some(Ok(s)) => ResultContent::Text(s),
                    _ => ResultContent::Blocks(content_parts(obj.raw("content"), un)),
                };
                let block = match obj.parse::<String>("tool_call_id") {
                    Some(Ok(id)) if !id.is_empty() => tool_result_block(&id, content, false),
                    _ => {
                        un.add("tool messages without a tool_call_id (kept as text)", 1);
                        match content {
                            ResultContent::Text(t) => ContentBlock::text(&t),
                            ResultContent::Blocks(b) => b
                                .into_iter()
                                .next()
                                .unwrap_or_else(|| ContentBlock::text("")),
                        }
                    }
                };
                pending_tools.push(block);
            }
            "function" => un.add("legacy function messages (dropped)", 1),
            _ => un.add("messages with an unknown role (dropped)", 1),
        }
    }
    if !pending_tools.is_empty() {
        out.push(Message::new(Role::User, pending_tools), false);
    }
    out
}

/// Content parts as Anthropic blocks (a string is one text block; `null` is
/// none).
fn content_parts(raw: Option<&RawValue>, un: &mut Unmapped) -> Vec<ContentBlock> {
    let Some(raw) = raw else {
        return Vec::new();
    };
    let parts = match common::split_content(raw, un) {
        Ok(parts) => parts,
        Err(blocks) => return blocks,
    };
    let mut out = Vec::with_capacity(parts.len());
    for p in parts {
        if let Ok(s) = serde_json::from_str::<String>(p.get()) {
            out.push(ContentBlock::text(&s));
            continue;
        }
        let Some(obj) = compact_object(p.get()) else {
            un.add("content parts of an invalid shape (dropped)", 1);
            continue;
        };
        let kind = match obj.parse::<String>("type") {
            Some(Ok(k)) => k,
            _ => String::new(),
        };
        let str_of = |o: &RawObject, k: &str| match o.parse::<String>(k) {
            Some(Ok(s)) => Some(s),
            _ => None,
        };
        let block = match kind.as_str() {
            "text" | "input_text" | "output_text" => {
                str_of(&obj, "text").map(|t| ContentBlock::text(&t))
            }
            "refusal" => str_of(&obj, "refusal").map(|t| ContentBlock::text(&t)),
            "image_url" => {
                let url = match obj.parse::<RawObject>("image_url") {
                    Some(Ok(o)) => str_of(&o, "url"),
                    _ => str_of(&obj, "image_url"),
                };
                url.and_then(|u| image_from_url(&u))
            }
            _ => {
                un.add(
                    "content parts with no Anthropic mapping (audio, files…; dropped)",
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

pub(crate) fn assistant_message(obj: &RawObject, ids: &mut IdGen, un: &mut Unmapped) -> Message {
    let calls: Vec<RawObject> = match obj.parse::<Vec<RawObject>>("tool_calls") {
        Some(Ok(c)) => c,
        Some(Err(_)) if obj.get("tool_calls").is_some_and(|r| r.get() == "null") => Vec::new(),
        Some(Err(_)) => {
            un.add(
                "tool_calls members that are not lists of objects (dropped)",
                1,
            );
            Vec::new()
        }
        None => Vec::new(),
    };
    if obj.get("function_call").is_some_and(|r| r.get() != "null") {
        un.add("legacy function_call members (dropped)", 1);
    }
    if calls.is_empty()
        && let Some(Ok(s)) = obj.parse::<String>("content")
    {
        return Message::new_text(Role::Assistant, &s);
    }
    let mut blocks = content_parts(obj.raw("content"), un);
    if blocks.is_empty()
        && let Some(Ok(r)) = obj.parse::<String>("refusal")
    {
        blocks.push(ContentBlock::text(&r));
    }
    for c in &calls {
        let kind = match c.parse::<String>("type") {
            Some(Ok(k)) => k,
            _ => "function".to_owned(),
        };
        let function = match c.parse::<RawObject>("function") {
            Some(Ok(f)) if kind == "function" => f,
            _ => {
                un.add("tool calls that are not function calls (dropped)", 1);
                continue;
            }
        };
        let id = match c.parse::<String>("id") {
            Some(Ok(id)) if !id.is_empty() => id,
            _ => {
                un.add("tool calls without an id (given a generated one)", 1);
                ids.next()
            }
        };
        let name = match function.parse::<String>("name") {
            Some(Ok(n)) => n,
            _ => {
                un.add("tool calls without a name (named \"unknown\")", 1);
                "unknown".to_owned()
            }
        };
        blocks.push(tool_use_block(
            &id,
            &name,
            arguments_input(function.raw("arguments"), un),
        ));
    }
    Message::new(Role::Assistant, blocks)
}

/// The tool_use `input` for an `arguments` member: the JSON text it holds,
/// bytes kept, when that is a JSON object; otherwise `{"_raw": <string>}`.
pub(crate) fn arguments_input(args: Option<&RawValue>, un: &mut Unmapped) -> Box<RawValue> {
    let wrap = |s: &str, un: &mut Unmapped| {
        un.add(
            "tool call arguments that are not a JSON object (wrapped as {\"_raw\": …})",
            1,
        );
        let mut o = RawObject::new();
        o.set("_raw", raw_string(s));
        raw_json(o.to_json())
    };
    let Some(raw) = args else {
        return raw_json("{}".to_owned());
    };
    let text = raw.get();
    if text.starts_with('{') {
        // Already an object (some loggers store it parsed).
        return raw.to_owned();
    }
    match serde_json::from_str::<String>(text) {
        Ok(s) => match serde_json::from_str::<Box<RawValue>>(&s) {
            Ok(v) if v.get().starts_with('{') => v,
            _ => wrap(&s, un),
        },
        Err(_) => wrap(text, un),
    }
}

pub(crate) fn map_tools(body: &RawObject, un: &mut Unmapped) -> Vec<ToolDefinition> {
    common::function_tools(
        body,
        |t| match t.parse::<RawObject>("function") {
            Some(Ok(f)) if common::is_function(t) => Some(f),
            _ => None,
        },
        "tools that are not functions (dropped)",
        un,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_owned()).unwrap()
    }

    #[test]
    fn arguments_are_kept_or_wrapped() {
        let mut un = Unmapped::default();
        let a = raw(r#""{\"b\": 1, \"a\": [2.0]}""#);
        assert_eq!(
            arguments_input(Some(&a), &mut un).get(),
            r#"{"b": 1, "a": [2.0]}"#
        );
        assert!(un.lines().is_empty());
        let bad = raw(r#""{\"b\": 1""#);
        assert_eq!(
            arguments_input(Some(&bad), &mut un).get(),
            r#"{"_raw":"{\"b\": 1"}"#
        );
        assert_eq!(un.lines().len(), 1);
    }

    #[test]
    fn usage_splits_cached_tokens() {
        let u = openai_usage(&raw(
            r#"{"prompt_tokens":1200,"completion_tokens":30,"prompt_tokens_details":{"cached_tokens":1024}}"#,
        ))
        .unwrap();
        assert_eq!(
            (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
            (Some(176), Some(1024), Some(30))
        );
    }

    #[test]
    fn usage_keeps_cache_writes_out_of_uncached_input() {
        let u = openai_usage(&raw(
            r#"{"prompt_tokens":3000,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":1024,"cache_write_tokens":1900}}"#,
        ))
        .unwrap();
        assert_eq!(
            (
                u.input_tokens,
                u.cache_read_input_tokens,
                u.cache_creation_input_tokens
            ),
            (Some(76), Some(1024), Some(1900))
        );
        assert_eq!(u.total_input(), Some(3000), "billed once");
        let bad = openai_usage(&raw(
            r#"{"prompt_tokens":100,"prompt_tokens_details":{"cached_tokens":64,"cache_write_tokens":64}}"#,
        ));
        assert!(matches!(bad, Err(UsageProblem::Exceeds(_))), "{bad:?}");
    }
}

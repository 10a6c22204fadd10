//! Importer for Gemini API `generateContent` logs, mapped to Anthropic
//! shapes so they can be priced and replayed like any other trace.
//!
//! A file holds one request body `{"contents", "systemInstruction"?,
//! "tools"?}` (one call), a JSON list of request bodies or `{"request": …,
//! "response": …}` pairs, or JSONL of either (one call per line); requests
//! and responses may be wrapped by a recorder (`{"body": …, "url": …}`),
//! as in the other request-log importers.
//!
//! Mapping:
//!
//! - `systemInstruction` (its `parts`' text, or a string) → the prompt's
//!   system text blocks;
//! - `contents[]`: role `user` → a user message, `model` → an assistant
//!   message (`function`, older logs' role for tool results → user); parts:
//!   `text` → a text block (a `thought: true` part, the model's summary of
//!   its thinking, is not resent and is dropped, counted);
//!   `functionCall {name, args, id?}` → a `tool_use` block whose input is
//!   `args` (id: the call's, else one made of its place, the same in
//!   every request that resends it); `functionResponse {name,
//!   response, id?}` → a `tool_result` block holding the `response` JSON,
//!   matched to its call by id, else by name in order; `inlineData` of an
//!   image → an image block; other parts are dropped and counted;
//! - `tools[].functionDeclarations[]` → `{"name", "description",
//!   "input_schema"}` (`parameters`, else `parametersJsonSchema`); Google's
//!   built-in tools (search, code execution) are dropped and counted.
//!
//! Calls: each request is one call; successive requests extend a trace when
//! its latest request's contents are a prefix of theirs, otherwise they
//! start a new trace. The model is the body's `model`, else the one the
//! request URL names (`…/models/{model}:generateContent`), else the
//! response's `modelVersion`. The reply is the first candidate's content.
//!
//! Usage (`usageMetadata`): `promptTokenCount` includes the cached tokens
//! (`cachedContentTokenCount`), as Google's documentation says, so uncached
//! input = prompt (plus `toolUsePromptTokenCount`, the built-in tools'
//! prompt, billed as input) − cached; output = `candidatesTokenCount` +
//! `thoughtsTokenCount` (thinking is billed as output). A cached count
//! above the prompt is an error at the usage's JSON pointer. `start_ms`
//! comes from the record's `timestamp`, else the response's `createTime`.

use std::path::Path;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::common::{
    self, Conversations, Exchange, NewCall, ResultContent, TraceBuilder, Unmapped, answered,
    compact_object, exchange, finish_usage, image_from_url, message_key, read_text, split_doc,
    split_included_input, timestamp_ms, tool_result_block, tool_use_block,
};
use super::{ImportError, ImportOptions, ImportResult, ImportSummary};
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::json::{RawObject, raw_json};
use tracecost_engine::message::{ContentBlock, Message, Role, ToolDefinition};
use tracecost_trace::{Call, Prompt, RecordedUsage};

/// Imports Gemini `generateContent` request bodies and request/response
/// logs. Directories are expanded to their `.json`/`.jsonl` files; files
/// are read in path order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    super::InputFormat::Gemini.import(inputs, opts)
}

/// What [`super::InputFormat::Gemini`] reads, for the loop every log importer
/// shares ([`common::import_files`]).
pub(crate) const LOG: common::LogFormat = common::LogFormat {
    unit: "call(s)",
    nothing_found: "Gemini conversations",
    read,
    first: None,
    csv: false,
};

/// How ids generated for function calls that have none start: the call's
/// place follows (`gemini_call_{content}_{n}`, the n-th call of the content), so that the same call
/// resent in a later request gets the same id, and the request extends the
/// one before.
const GENERATED_IDS: &str = "gemini_call_";

fn read(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
    _shared: &mut common::Shared,
) -> Result<(Vec<TraceBuilder>, String), ImportError> {
    let text = read_text(path, opts, report)?;
    let mut convs = Conversations::default();
    let label = format!("Gemini generateContent {}", common::file_name(path));
    let Some(doc) = split_doc(path, &text, opts, report)? else {
        return Ok((Vec::new(), label));
    };
    common::each_record(
        path,
        &text,
        doc,
        opts,
        report,
        "expected a request body or a list of request bodies or request/response records",
        |v, line| record(v, line, &mut convs, un),
    )?;
    Ok((convs.builders, label))
}

/// The model a request URL names: `…/models/{model}:generateContent`.
fn model_of_url(url: &str) -> Option<String> {
    let rest = &url[url.find("/models/")? + "/models/".len()..];
    let model = rest.split([':', '?', '/']).next()?;
    (!model.is_empty()).then(|| model.to_owned())
}

/// One request body or request/response pair.
fn record(
    v: &RawValue,
    line: usize,
    convs: &mut Conversations,
    un: &mut Unmapped,
) -> Result<(), String> {
    let obj = compact_object(v.get()).ok_or("expected a JSON object")?;
    let Some(Exchange {
        body,
        base,
        response,
        url,
        start_ms: top_ts,
    }) = exchange(obj, un)?
    else {
        return Ok(());
    };
    let url_model = url.as_deref().and_then(model_of_url);
    let Some(contents) = body.get("contents") else {
        un.add(
            "records that are neither a request body nor a request/response pair",
            1,
        );
        return Ok(());
    };
    let contents = serde_json::from_str::<Vec<&RawValue>>(contents.get())
        .map_err(|_| format!("at {base}/contents: expected an array of contents"))?;
    let mut pending = Pending::default();
    let mut messages = Vec::with_capacity(contents.len());
    for (at, c) in contents.iter().enumerate() {
        if let Some(m) = content_message(c.get(), at, &mut pending, un) {
            messages.push(m);
        }
    }
    if messages.is_empty() {
        un.add("requests with no conversation contents (no call)", 1);
        return Ok(());
    }
    let system = system_blocks(&body, un);
    let tools = map_tools(&body, un);
    let mut model = match body.parse::<String>("model") {
        Some(Ok(m)) => Some(m.trim_start_matches("models/").to_owned()),
        _ => url_model,
    };
    let mut start_ms = top_ts;
    let mut usage = None;
    let mut reply = None;
    if let Some((b, wrapped)) = response.and_then(|r| answered(r.as_deref(), un)) {
        if start_ms.is_none() {
            start_ms = b.raw("createTime").and_then(timestamp_ms);
        }
        if model.is_none()
            && let Some(Ok(m)) = b.parse::<String>("modelVersion")
        {
            model = Some(m);
        }
        if let Some(u) = b.raw("usageMetadata").filter(|u| u.get() != "null") {
            let at = if wrapped {
                "/response/body/usageMetadata"
            } else {
                "/response/usageMetadata"
            };
            match gemini_usage(u) {
                Ok(Some(u)) => usage = finish_usage(u, un),
                Ok(None) => un.add(common::MALFORMED_USAGE, 1),
                Err(why) => return Err(format!("at {at}: {why}")),
            }
        }
        reply = reply_message(&b, contents.len(), &mut pending, un);
    }
    let call = Call {
        cleared: Vec::new(),
        compacted: None,
        messages: messages.len(),
        start_ms,
        model,
        prompt: 0,
        markers: None,
        usage: usage.map(Box::new),
    };
    let keys = messages.iter().map(message_key).collect();
    let req = NewCall {
        messages,
        keys,
        meta: Vec::new(),
        prompt: Prompt { system, tools },
    };
    convs.add(ProviderKind::Google, line, req, call, reply);
    Ok(())
}

/// The first candidate's content, as the assistant's reply.
fn reply_message(
    body: &RawObject,
    at: usize,
    pending: &mut Pending,
    un: &mut Unmapped,
) -> Option<Message> {
    let candidates = match body.parse::<Vec<RawObject>>("candidates") {
        Some(Ok(c)) => c,
        _ => return None,
    };
    un.add(
        "response candidates after the first (dropped)",
        candidates.len().saturating_sub(1),
    );
    let content = candidates.first()?.get("content")?;
    content_message(content.get(), at, pending, un).filter(|m| m.role() == Role::Assistant)
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UsageMetadata {
    #[serde(default, deserialize_with = "crate::common::count")]
    prompt_token_count: Option<u64>,
    #[serde(default, deserialize_with = "crate::common::count")]
    cached_content_token_count: Option<u64>,
    #[serde(default, deserialize_with = "crate::common::count")]
    candidates_token_count: Option<u64>,
    #[serde(default, deserialize_with = "crate::common::count")]
    thoughts_token_count: Option<u64>,
    #[serde(default, deserialize_with = "crate::common::count")]
    tool_use_prompt_token_count: Option<u64>,
}

/// `usageMetadata` as recorded usage: `Ok(None)` when it is not a usage
/// object, `Err` when its cached tokens exceed the prompt that includes
/// them.
fn gemini_usage(raw: &RawValue) -> Result<Option<RecordedUsage>, String> {
    let Ok(u) = serde_json::from_str::<UsageMetadata>(raw.get()) else {
        return Ok(None);
    };
    let prompt = u
        .prompt_token_count
        .map(|p| p.saturating_add(u.tool_use_prompt_token_count.unwrap_or(0)));
    let output = match (u.candidates_token_count, u.thoughts_token_count) {
        (None, None) => None,
        (c, t) => Some(c.unwrap_or(0).saturating_add(t.unwrap_or(0))),
    };
    split_included_input(prompt, u.cached_content_token_count, None, output).map(Some)
}

/// Function calls not yet answered, oldest first: `(name, id)`.
#[derive(Default)]
struct Pending(Vec<(String, String)>);

impl Pending {
    /// The id of the call a response answers: its own id, else the oldest
    /// pending call of that name.
    fn answer(&mut self, name: &str, id: Option<String>) -> Option<String> {
        if let Some(id) = id {
            self.0.retain(|(_, i)| *i != id);
            return Some(id);
        }
        let at = self.0.iter().position(|(n, _)| n == name)?;
        Some(self.0.remove(at).1)
    }
}

/// The content at place `at` of the request (the reply: after the last).
fn content_message(
    raw: &str,
    at: usize,
    pending: &mut Pending,
    un: &mut Unmapped,
) -> Option<Message> {
    let Some(obj) = compact_object(raw) else {
        un.add("contents that are not objects (dropped)", 1);
        return None;
    };
    let role = match obj.parse::<String>("role") {
        Some(Ok(r)) if r == "model" => Role::Assistant,
        _ => Role::User,
    };
    let parts = match obj.parse::<Vec<RawObject>>("parts") {
        Some(Ok(p)) => p,
        _ => {
            un.add("contents without a parts list (dropped)", 1);
            return None;
        }
    };
    let blocks: Vec<ContentBlock> = parts
        .iter()
        .scan(0usize, |calls, p| {
            // Calls are numbered among the content's calls, not its parts:
            // a thought part a later request leaves out moves no id.
            let n = *calls;
            *calls += usize::from(p.get("functionCall").is_some());
            Some((n, p))
        })
        .filter_map(|(n, p)| part_block(p, (at, n), pending, un))
        .collect();
    if blocks.is_empty() {
        un.add("contents with no part mapped (dropped)", 1);
        return None;
    }
    Some(Message::new(role, blocks))
}

fn part_block(
    p: &RawObject,
    (content, nth): (usize, usize),
    pending: &mut Pending,
    un: &mut Unmapped,
) -> Option<ContentBlock> {
    let string = |o: &RawObject, k: &str| match o.parse::<String>(k) {
        Some(Ok(s)) => Some(s),
        _ => None,
    };
    if let Some(text) = string(p, "text") {
        if p.get("thought").is_some_and(|t| t.get() == "true") {
            un.add("thought summaries (not resent; dropped)", 1);
            return None;
        }
        return Some(ContentBlock::text(&text));
    }
    if let Some(Ok(call)) = p.parse::<RawObject>("functionCall") {
        let Some(name) = string(&call, "name") else {
            un.add("function calls without a name (dropped)", 1);
            return None;
        };
        let id = string(&call, "id").unwrap_or_else(|| format!("{GENERATED_IDS}{content}_{nth}"));
        pending.0.push((name.clone(), id.clone()));
        let args = call
            .raw("args")
            .filter(|a| a.get().starts_with('{'))
            .map(ToOwned::to_owned)
            .unwrap_or_else(|| raw_json("{}".to_owned()));
        return Some(tool_use_block(&id, &name, args));
    }
    if let Some(Ok(resp)) = p.parse::<RawObject>("functionResponse") {
        let name = string(&resp, "name").unwrap_or_default();
        let Some(id) = pending.answer(&name, string(&resp, "id")) else {
            un.add(
                "function responses answering no call of the request (dropped)",
                1,
            );
            return None;
        };
        let content = resp
            .get("response")
            .map_or_else(String::new, |r| r.get().to_owned());
        return Some(tool_result_block(&id, ResultContent::Text(content), false));
    }
    if let Some(Ok(data)) = p.parse::<RawObject>("inlineData") {
        let mime = string(&data, "mimeType").unwrap_or_default();
        let bytes = string(&data, "data").unwrap_or_default();
        if mime.starts_with("image/")
            && let Some(b) = image_from_url(&format!("data:{mime};base64,{bytes}"))
        {
            return Some(b);
        }
        un.add("inline data that is not an image (dropped)", 1);
        return None;
    }
    un.add(
        "parts of other kinds (file data, executable code; dropped)",
        1,
    );
    None
}

/// `systemInstruction`: its parts' text, or a string.
fn system_blocks(body: &RawObject, un: &mut Unmapped) -> Vec<ContentBlock> {
    let Some(raw) = body.get("systemInstruction") else {
        return Vec::new();
    };
    if let Ok(s) = serde_json::from_str::<String>(raw.get()) {
        return vec![ContentBlock::text(&s)];
    }
    let parts = compact_object(raw.get()).and_then(|o| match o.parse::<Vec<RawObject>>("parts") {
        Some(Ok(p)) => Some(p),
        _ => None,
    });
    let Some(parts) = parts else {
        un.add("system instructions of another shape (dropped)", 1);
        return Vec::new();
    };
    parts
        .iter()
        .filter_map(|p| match p.parse::<String>("text") {
            Some(Ok(t)) => Some(ContentBlock::text(&t)),
            _ => {
                un.add("system instruction parts that are not text (dropped)", 1);
                None
            }
        })
        .collect()
}

/// Every `functionDeclarations` entry of `tools`, as Anthropic definitions.
fn map_tools(body: &RawObject, un: &mut Unmapped) -> Vec<ToolDefinition> {
    let Some(Ok(groups)) = body.parse::<Vec<RawObject>>("tools") else {
        if body.get("tools").is_some_and(|r| r.get() != "null") {
            un.add("tools members that are not lists of objects (dropped)", 1);
        }
        return Vec::new();
    };
    let mut declarations: Vec<Box<RawValue>> = Vec::new();
    for g in &groups {
        match g.parse::<Vec<RawObject>>("functionDeclarations") {
            Some(Ok(ds)) => {
                for mut d in ds {
                    if d.get("parameters").is_none()
                        && let Some(s) = d.raw("parametersJsonSchema").map(ToOwned::to_owned)
                    {
                        d.set("parameters", s);
                    }
                    declarations.push(raw_json(d.to_json()));
                }
            }
            _ => un.add(
                "built-in tools (search, code execution; no Anthropic definition; dropped)",
                1,
            ),
        }
    }
    let mut list = RawObject::new();
    list.set(
        "tools",
        raw_json(serde_json::to_string(&declarations).unwrap_or_else(|_| "[]".to_owned())),
    );
    common::function_tools(&list, |d| Some(d.clone()), "", un)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_comes_from_the_url_path() {
        assert_eq!(
            model_of_url(
                "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent?key=x"
            )
            .as_deref(),
            Some("gemini-2.5-flash")
        );
        assert_eq!(
            model_of_url("https://aiplatform.googleapis.com/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-pro:streamGenerateContent").as_deref(),
            Some("gemini-2.5-pro")
        );
        assert_eq!(model_of_url("https://example.com/v1/chat"), None);
    }

    #[test]
    fn usage_keeps_cached_tokens_out_of_uncached_input_and_thinking_in_output() {
        let raw: Box<RawValue> = serde_json::from_str(
            r#"{"promptTokenCount":5000,"cachedContentTokenCount":4096,"candidatesTokenCount":120,"thoughtsTokenCount":380,"toolUsePromptTokenCount":10,"totalTokenCount":5510}"#,
        )
        .unwrap();
        let u = gemini_usage(&raw).unwrap().unwrap();
        assert_eq!(u.input_tokens, Some(5010 - 4096));
        assert_eq!(u.cache_read_input_tokens, Some(4096));
        assert_eq!(u.output_tokens, Some(500));
        let bad: Box<RawValue> =
            serde_json::from_str(r#"{"promptTokenCount":100,"cachedContentTokenCount":200}"#)
                .unwrap();
        assert!(gemini_usage(&bad).unwrap_err().contains("exceed"));
    }

    #[test]
    fn a_response_answers_its_call_by_id_else_by_name_in_order() {
        let mut p = Pending::default();
        p.0.push(("f".into(), "a".into()));
        p.0.push(("g".into(), "b".into()));
        p.0.push(("f".into(), "c".into()));
        assert_eq!(p.answer("f", None).as_deref(), Some("a"));
        assert_eq!(p.answer("x", Some("c".into())).as_deref(), Some("c"));
        assert_eq!(p.answer("f", None), None);
        assert_eq!(p.answer("g", None).as_deref(), Some("b"));
    }
}

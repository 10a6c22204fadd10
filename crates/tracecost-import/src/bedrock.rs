//! Importer for Amazon Bedrock Converse logs, mapped to Anthropic shapes so
//! they can be priced and replayed like any other trace.
//!
//! A file holds one Converse request body `{"modelId"?, "messages",
//! "system"?, "toolConfig"?}` (one call), a JSON list of bodies or of
//! `{"request": …, "response": …}` pairs, or JSONL of either; requests and
//! responses may be wrapped by a recorder (`{"url", "body"}`), as in the
//! other request-log importers.
//!
//! Mapping (Converse's blocks carry no `type`; their one member says what
//! they are):
//!
//! - `system[]`: `{text}` → the prompt's system text blocks;
//! - `messages[]`: role `user` / `assistant`; `{text}` → a text block,
//!   `{image}` → an image block, `{toolUse {toolUseId, name, input}}` → a
//!   `tool_use` block, `{toolResult {toolUseId, content, status}}` → a
//!   `tool_result` block (its `text` and `json` parts as text, `status:
//!   "error"` as an error), `{reasoningContent}` → dropped and counted (the
//!   model's reasoning, resent only as signed blocks tracecost does not
//!   model), other blocks (documents, guard content) dropped and counted;
//! - `toolConfig.tools[].toolSpec {name, description, inputSchema.json}` →
//!   tool definitions;
//! - **`{cachePoint}`** in `system`, a message's `content` or
//!   `toolConfig.tools` caches the prefix through the block before it: it
//!   becomes the call's recorded marker on that block (`ttl` `5m` or `1h`
//!   when given, else 5 minutes), at most the API's four.
//!
//! Calls: each request is one call; successive requests extend a trace when
//! its latest request's messages are a prefix of theirs. The model is the
//! body's `modelId` (an inference profile or ARN names its model, which the
//! price table resolves), else the request URL's `/model/{id}/converse`.
//! The reply is the response's `output.message`.
//!
//! Usage: Converse reports `inputTokens` **apart from** the cache
//! (`cacheReadInputTokens`, `cacheWriteInputTokens`), as Anthropic does: so
//! uncached input = `inputTokens`, read and write as given, output =
//! `outputTokens`. `start_ms` comes from the record's `timestamp`.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::common::{
    self, Conversations, Exchange, NewCall, ResultContent, TraceBuilder, Unmapped, answered,
    cap_markers, compact_object, exchange, finish_usage, image_from_url, message_key, read_text,
    split_doc, tool_result_block, tool_use_block,
};
use super::{ImportError, ImportOptions, ImportResult, ImportSummary};
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::json::{RawObject, raw_json, raw_string};
use tracecost_engine::message::{ContentBlock, Message, Role, ToolDefinition};
use tracecost_engine::wire::{BlockRef, Marker, Ttl};
use tracecost_trace::{Call, Prompt, RecordedUsage};

/// Imports Bedrock Converse request bodies and request/response logs.
/// Directories are expanded to their `.json`/`.jsonl` files; files are
/// read in path order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    super::InputFormat::Bedrock.import(inputs, opts)
}

/// What [`super::InputFormat::Bedrock`] reads, for the loop every log importer
/// shares ([`common::import_files`]).
pub(crate) const LOG: common::LogFormat = common::LogFormat {
    unit: "call(s)",
    nothing_found: "Bedrock Converse conversations",
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
    let text = read_text(path, opts, report)?;
    let mut convs = Conversations::default();
    let label = format!("Bedrock Converse {}", common::file_name(path));
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

/// The model a Converse URL names: `…/model/{id}/converse`.
fn model_of_url(url: &str) -> Option<String> {
    let rest = &url[url.find("/model/")? + "/model/".len()..];
    let id = rest.split('/').next()?;
    (!id.is_empty()).then(|| id.replace("%3A", ":").replace("%2F", "/"))
}

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
    let Some(raw_messages) = body.get("messages") else {
        un.add(
            "records that are neither a request body nor a request/response pair",
            1,
        );
        return Ok(());
    };
    let items = serde_json::from_str::<Vec<RawObject>>(raw_messages.get())
        .map_err(|_| format!("at {base}/messages: expected an array of messages"))?;
    let mut markers = Vec::new();
    let tools = map_tools(&body, &mut markers, un);
    let system = match body.parse::<Vec<RawObject>>("system") {
        Some(Ok(parts)) => {
            let (blocks, marks) = map_blocks(&parts, un);
            markers.extend(marks.into_iter().map(|(b, ttl)| Marker {
                at: BlockRef::System(b),
                ttl,
            }));
            blocks
        }
        _ => Vec::new(),
    };
    let messages = map_messages(&items, &mut markers, un);
    if messages.is_empty() {
        un.add("requests with no conversation messages (no call)", 1);
        return Ok(());
    }
    cap_markers(&mut markers, un);
    let mut model = match body.parse::<String>("modelId") {
        Some(Ok(m)) => Some(m),
        _ => url_model,
    };
    let mut usage = None;
    let mut reply = None;
    if let Some((b, _)) = response.and_then(|r| answered(r.as_deref(), un)) {
        if model.is_none()
            && let Some(Ok(m)) = b.parse::<String>("modelId")
        {
            model = Some(m);
        }
        if let Some(u) = b.get("usage").filter(|u| u.get() != "null") {
            match serde_json::from_str::<ConverseUsage>(u.get()) {
                Ok(u) => usage = finish_usage(u.recorded(), un),
                Err(_) => un.add(common::MALFORMED_USAGE, 1),
            }
        }
        reply = reply_message(&b, un);
    }
    let call = Call {
        cleared: Vec::new(),
        compacted: None,
        messages: messages.len(),
        start_ms: top_ts,
        model,
        prompt: 0,
        markers: (!markers.is_empty()).then_some(markers),
        usage: usage.map(Box::new),
    };
    let keys = messages.iter().map(message_key).collect();
    let req = NewCall {
        messages,
        keys,
        meta: Vec::new(),
        prompt: Prompt { system, tools },
    };
    convs.add(ProviderKind::BedrockConverse, line, req, call, reply);
    Ok(())
}

/// The request's messages, each block's cache point a marker; a message
/// without a content list, or none of whose blocks maps, is dropped.
fn map_messages(items: &[RawObject], markers: &mut Vec<Marker>, un: &mut Unmapped) -> Vec<Message> {
    let mut messages = Vec::with_capacity(items.len());
    for m in items {
        let role = match m.parse::<String>("role") {
            Some(Ok(r)) if r == "assistant" => Role::Assistant,
            _ => Role::User,
        };
        let Some(Ok(content)) = m.parse::<Vec<RawObject>>("content") else {
            un.add("messages without a content list (dropped)", 1);
            continue;
        };
        let (blocks, marks) = map_blocks(&content, un);
        if blocks.is_empty() {
            un.add("messages with no block mapped (dropped)", 1);
            continue;
        }
        let at = messages.len();
        markers.extend(marks.into_iter().map(|(block, ttl)| Marker {
            at: BlockRef::Message { message: at, block },
            ttl,
        }));
        messages.push(Message::new(role, blocks));
    }
    messages
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ConverseUsage {
    #[serde(default, deserialize_with = "crate::common::count")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "crate::common::count")]
    output_tokens: Option<u64>,
    #[serde(default, deserialize_with = "crate::common::count")]
    cache_read_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "crate::common::count")]
    cache_write_input_tokens: Option<u64>,
}

impl ConverseUsage {
    /// Converse counts input apart from its cache reads and writes.
    fn recorded(self) -> RecordedUsage {
        RecordedUsage {
            input_tokens: self.input_tokens,
            cache_creation_input_tokens: self.cache_write_input_tokens,
            cache_read_input_tokens: self.cache_read_input_tokens,
            output_tokens: self.output_tokens,
            ..RecordedUsage::default()
        }
    }
}

/// `output.message` of a Converse response.
fn reply_message(body: &RawObject, un: &mut Unmapped) -> Option<Message> {
    let output = compact_object(body.get("output")?.get())?;
    let message = compact_object(output.get("message")?.get())?;
    let Some(Ok(content)) = message.parse::<Vec<RawObject>>("content") else {
        return None;
    };
    let (blocks, _) = map_blocks(&content, un);
    (!blocks.is_empty()).then(|| Message::new(Role::Assistant, blocks))
}

/// A cache point's TTL: `1h` when it says so, else 5 minutes.
fn cache_point_ttl(b: &RawObject) -> Ttl {
    let ttl = compact_object(b.raw("cachePoint").map_or("{}", |r| r.get())).and_then(|c| {
        match c.parse::<String>("ttl") {
            Some(Ok(t)) => Some(t),
            _ => None,
        }
    });
    if ttl.as_deref() == Some("1h") {
        Ttl::OneHour
    } else {
        Ttl::FiveMinutes
    }
}

/// Converse blocks as Anthropic blocks, and the cache points among them:
/// `(index of the block each caches through, TTL)`.
fn map_blocks(list: &[RawObject], un: &mut Unmapped) -> (Vec<ContentBlock>, Vec<(usize, Ttl)>) {
    let mut blocks = Vec::with_capacity(list.len());
    let mut marks = Vec::new();
    let string = |o: &RawObject, k: &str| match o.parse::<String>(k) {
        Some(Ok(s)) => Some(s),
        _ => None,
    };
    for b in list {
        if b.get("cachePoint").is_some() {
            match blocks.len().checked_sub(1) {
                Some(last) => marks.push((last, cache_point_ttl(b))),
                None => un.add("cache points before any block (dropped)", 1),
            }
            continue;
        }
        if let Some(text) = string(b, "text") {
            blocks.push(ContentBlock::text(&text));
        } else if let Some(Ok(u)) = b.parse::<RawObject>("toolUse") {
            let (Some(id), Some(name)) = (string(&u, "toolUseId"), string(&u, "name")) else {
                un.add("tool uses without an id or a name (dropped)", 1);
                continue;
            };
            let input = u
                .raw("input")
                .filter(|i| i.get().starts_with('{'))
                .map(ToOwned::to_owned)
                .unwrap_or_else(|| raw_json("{}".to_owned()));
            blocks.push(tool_use_block(&id, &name, input));
        } else if let Some(Ok(r)) = b.parse::<RawObject>("toolResult") {
            let Some(id) = string(&r, "toolUseId") else {
                un.add("tool results without an id (dropped)", 1);
                continue;
            };
            let parts = match r.parse::<Vec<RawObject>>("content") {
                Some(Ok(p)) => p,
                _ => Vec::new(),
            };
            let text: Vec<String> = parts
                .iter()
                .filter_map(|p| {
                    string(p, "text").or_else(|| p.get("json").map(|j| j.get().to_owned()))
                })
                .collect();
            let error = string(&r, "status").as_deref() == Some("error");
            blocks.push(tool_result_block(
                &id,
                ResultContent::Text(text.join("\n")),
                error,
            ));
        } else if let Some(Ok(img)) = b.parse::<RawObject>("image") {
            let format = string(&img, "format").unwrap_or_else(|| "png".to_owned());
            let bytes = compact_object(img.raw("source").map_or("{}", |s| s.get()))
                .and_then(|s| string(&s, "bytes"));
            match bytes.and_then(|d| image_from_url(&format!("data:image/{format};base64,{d}"))) {
                Some(block) => blocks.push(block),
                None => un.add("images without inline bytes (dropped)", 1),
            }
        } else if b.get("reasoningContent").is_some() {
            un.add("reasoning blocks (not modelled; dropped)", 1);
        } else {
            un.add(
                "blocks of other kinds (documents, guard content; dropped)",
                1,
            );
        }
    }
    (blocks, marks)
}

/// `toolConfig.tools[].toolSpec` as tool definitions, a `cachePoint` entry
/// a marker on the tool before it.
fn map_tools(
    body: &RawObject,
    markers: &mut Vec<Marker>,
    un: &mut Unmapped,
) -> Vec<ToolDefinition> {
    let Some(Ok(config)) = body.parse::<RawObject>("toolConfig") else {
        return Vec::new();
    };
    let Some(Ok(list)) = config.parse::<Vec<RawObject>>("tools") else {
        un.add("tool configs without a tools list (dropped)", 1);
        return Vec::new();
    };
    let mut out: Vec<ToolDefinition> = Vec::with_capacity(list.len());
    for t in &list {
        if t.get("cachePoint").is_some() {
            match out.len().checked_sub(1) {
                Some(last) => markers.push(Marker {
                    at: BlockRef::Tool(last),
                    ttl: cache_point_ttl(t),
                }),
                None => un.add("cache points before any block (dropped)", 1),
            }
            continue;
        }
        let Some(Ok(spec)) = t.parse::<RawObject>("toolSpec") else {
            un.add("tools that are not tool specs (dropped)", 1);
            continue;
        };
        let Some(Ok(name)) = spec.parse::<String>("name") else {
            un.add("tool definitions without a name (dropped)", 1);
            continue;
        };
        let mut def = RawObject::new();
        def.set("name", raw_string(&name));
        if let Some(d) = spec.raw("description").filter(|d| d.get() != "null") {
            def.set("description", d.to_owned());
        }
        let schema = compact_object(spec.raw("inputSchema").map_or("{}", |s| s.get()))
            .and_then(|s| s.raw("json").map(ToOwned::to_owned))
            .unwrap_or_else(|| raw_json(r#"{"type":"object","properties":{}}"#.to_owned()));
        def.set("input_schema", schema);
        match ToolDefinition::from_object(def) {
            Ok(d) if !out.iter().any(|o| o.name() == d.name()) => out.push(d),
            _ => un.add("tool definitions repeating a name (dropped)", 1),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_comes_from_the_url_path() {
        assert_eq!(
            model_of_url("https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse").as_deref(),
            Some("us.anthropic.claude-sonnet-4-5-20250929-v1:0")
        );
        assert_eq!(model_of_url("https://example.com/v1/messages"), None);
    }

    #[test]
    fn a_cache_point_marks_the_block_before_it() {
        let list: Vec<RawObject> = serde_json::from_str(
            r#"[{"text":"a"},{"cachePoint":{"type":"default"}},{"text":"b"},{"cachePoint":{"type":"default","ttl":"1h"}}]"#,
        )
        .unwrap();
        let mut un = Unmapped::default();
        let (blocks, marks) = map_blocks(&list, &mut un);
        assert_eq!(blocks.len(), 2);
        assert_eq!(marks, [(0, Ttl::FiveMinutes), (1, Ttl::OneHour)]);
    }
}

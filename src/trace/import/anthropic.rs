//! Importer for raw Anthropic Messages API exchanges, as HTTP-recording
//! proxies save them: JSONL, one request/response exchange per line.
//!
//! Two line forms are read:
//!
//! - plain: `{"request": <request body>, "response": <response body>}`;
//! - claude-trace: `{"request": {"timestamp", "method", "url", "headers",
//!   "body"}, "response": {"timestamp", "status_code", "headers", "body" |
//!   "body_raw"}}`, where a streamed response keeps its server-sent events in
//!   `body_raw` and the assistant message is rebuilt from them.
//!
//! Rules:
//!
//! - A request extends a conversation when the messages of that
//!   conversation's latest request are a prefix of its own messages, compared
//!   with every `cache_control` member removed (a string content equals one
//!   text block holding the same string). Among several such conversations
//!   the longest prefix wins, then the most recently extended one; a request
//!   that extends none starts a new trace. A retry (same messages) extends.
//! - `cache_control` members are removed from tools, system and message
//!   blocks and kept as the call's markers; a marker inside a tool_result's
//!   content moves to the tool_result block. A top-level `cache_control`
//!   (automatic caching) becomes one marker on the last markable block.
//!   Markers beyond the API's four are dropped (and reported).
//! - A string `system` becomes one text block. When system or tools change
//!   within a trace, the call records the new prompt.
//! - The history is the latest request's messages, plus the final response's
//!   assistant message when the last call succeeded.
//! - Usage comes from the response (for a stream: `message_start`, updated by
//!   `message_delta`); `start_ms` from the request's `timestamp` (seconds;
//!   values above 10^11 are taken as milliseconds; RFC 3339 strings are
//!   accepted), else from a top-level `timestamp`.
//! - Non-2xx responses, error bodies and streams with an `error` event keep
//!   their call without usage and are counted in the report; so are
//!   exchanges with no recorded response.
//! - Requests to endpoints other than `/v1/messages` (claude-trace's `url`),
//!   and lines without a request, are skipped and counted.
//! - Whitespace between JSON tokens in the log is dropped (SDKs send compact
//!   JSON); string contents, key order and number spellings are kept byte for
//!   byte. Streamed tool inputs are the exact concatenation of `partial_json`.
//! - A line that is not JSON, not an object, or whose messages are not valid
//!   Messages API shapes is an [`ImportError::Invalid`] naming the file and
//!   line, or with [`ImportOptions::skip_invalid`] is skipped and counted.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use super::common;
use super::common::{
    Conversations, HttpBody, NewCall, TraceBuilder, Unmapped, compact_json, finish_usage,
    is_error_body, merge_anthropic_usage, message_key, serde_message, unwrap_request,
    unwrap_response, with_blocks,
};
use super::{ImportError, ImportOptions, ImportOutput, ImportReport};
use crate::engine::cache::ProviderKind;
use crate::engine::json::{RawObject, raw_json, raw_string};
use crate::engine::message::{
    BlockKind, Content, ContentBlock, Message, Role, ToolDefinition, ToolResultContent,
};
use crate::engine::wire::{BlockRef, MAX_BREAKPOINTS, Marker, Ttl};
use crate::trace::{Call, Prompt, RecordedUsage};

/// Imports Anthropic Messages API request/response logs (plain or
/// claude-trace JSONL). Directories are expanded to their `.json`/`.jsonl`
/// files; files are read in path order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportOutput, ImportError> {
    super::Format::Anthropic.import(inputs, opts)
}

/// What [`super::Format::Anthropic`] reads, for the loop every log importer
/// shares ([`common::import_files`]).
pub(crate) const LOG: common::LogFormat = common::LogFormat {
    unit: "request(s)",
    nothing_found: "Messages API exchanges",
    read,
};

fn read(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportReport,
    un: &mut Unmapped,
) -> Result<(Vec<TraceBuilder>, String), ImportError> {
    let convs = import_file(path, opts, report, un)?;
    Ok((
        convs.builders,
        format!("Anthropic Messages API log {}", common::file_name(path)),
    ))
}

fn import_file(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportReport,
    un: &mut Unmapped,
) -> Result<Conversations, ImportError> {
    let io = |source| ImportError::Io {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut convs = Conversations::default();
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let text = match std::str::from_utf8(&buf) {
            // Leading whitespace is kept so columns match the file.
            Ok(t) => t.trim_end(),
            Err(e) => {
                let err = common::invalid(path, line_no, Some(e.valid_up_to() + 1), "not UTF-8");
                common::reject(opts, report, err)?;
                continue;
            }
        };
        // A byte-order mark before the first line is ignored, as in every
        // other reader (see `trace::load::UTF8_BOM`).
        let text = match line_no {
            1 => text.strip_prefix('\u{feff}').unwrap_or(text),
            _ => text,
        };
        if text.trim_start().is_empty() {
            continue;
        }
        match exchange(text, un) {
            Ok(Some(ex)) => {
                convs.add(
                    ProviderKind::Anthropic,
                    line_no,
                    ex.request,
                    ex.call,
                    ex.reply,
                );
            }
            Ok(None) => {}
            Err(LineError { column, message }) => {
                let err = common::invalid(path, line_no, column, &message);
                common::reject(opts, report, err)?;
            }
        }
    }
    Ok(convs)
}

struct LineError {
    column: Option<usize>,
    message: String,
}

impl LineError {
    fn at(message: String) -> Self {
        Self {
            column: None,
            message,
        }
    }
}

struct Exchange {
    request: NewCall,
    call: Call,
    reply: Option<Message>,
}

/// Reads one log line; `Ok(None)` when it is not an exchange to import.
fn exchange(text: &str, un: &mut Unmapped) -> Result<Option<Exchange>, LineError> {
    let compacted = compact_json(text);
    let obj = match RawObject::from_json(&compacted) {
        Ok(o) => o,
        Err(_) => {
            let e = match RawObject::from_json(text) {
                Err(e) => e,
                Ok(_) => {
                    return Err(LineError::at("could not read this line".into()));
                }
            };
            return Err(LineError {
                column: Some(e.column().max(1)),
                message: common::strip_position(&e),
            });
        }
    };
    let Some(req_raw) = obj.get("request") else {
        un.add("lines without a \"request\" member (not exchanges)", 1);
        return Ok(None);
    };
    let req = unwrap_request(req_raw).map_err(LineError::at)?;
    if let Some(url) = &req.url {
        let path = url.split(['?', '#']).next().unwrap_or(url);
        if !path.trim_end_matches('/').ends_with("/v1/messages") {
            un.add("requests to endpoints other than /v1/messages", 1);
            return Ok(None);
        }
    }
    let Some(body) = req.body else {
        un.add("requests without a JSON body", 1);
        return Ok(None);
    };
    let base = if req.wrapped {
        "/request/body"
    } else {
        "/request"
    };
    let Some(parsed) = parse_request(&body, base, un)? else {
        return Ok(None);
    };
    let start_ms = req
        .timestamp_ms
        .or_else(|| obj.get("timestamp").and_then(common::timestamp_ms));
    let reply = match obj.get("response") {
        None => Reply::Missing,
        Some(raw) => {
            let resp = unwrap_response(raw);
            if resp.missing {
                Reply::Missing
            } else if resp.status.is_some_and(|s| !(200..300).contains(&s)) {
                Reply::Failed
            } else {
                match resp.body {
                    Some(HttpBody::Json(b)) => reply_from_body(&b, un),
                    Some(HttpBody::Text(t)) => parse_sse(&t, un),
                    None => Reply::Unreadable,
                }
            }
        }
    };
    let (usage, message) = match reply {
        Reply::Missing => {
            un.add(
                "exchanges without a recorded response (kept without usage)",
                1,
            );
            (None, None)
        }
        Reply::Failed => {
            un.add(
                "failed exchanges (non-2xx status or error body; kept without usage)",
                1,
            );
            (None, None)
        }
        Reply::Unreadable => {
            un.add(
                "responses whose body could not be read (kept without usage)",
                1,
            );
            (None, None)
        }
        Reply::Ok { usage, message } => (usage, message),
    };
    let call = Call {
        messages: parsed.messages.len(),
        start_ms,
        model: parsed.model,
        prompt: 0,
        markers: Some(parsed.markers),
        usage,
    };
    let keys = parsed.messages.iter().map(message_key).collect();
    Ok(Some(Exchange {
        request: NewCall {
            messages: parsed.messages,
            keys,
            meta: Vec::new(),
            prompt: parsed.prompt,
        },
        call,
        reply: message,
    }))
}

struct ParsedRequest {
    messages: Vec<Message>,
    prompt: Prompt,
    markers: Vec<Marker>,
    model: Option<String>,
}

/// The request body's messages, prompt and markers, markers removed from
/// the blocks. `Ok(None)` for a request with no messages.
fn parse_request(
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
    let mut markers = Vec::new();
    // Tools first, then system, then messages: the order markers are listed.
    let tools = parse_tools(body, base, &mut markers, un)?;
    let system = parse_system(body, base, &mut markers, un)?;
    let mut messages = Vec::with_capacity(raw_messages.len());
    for (mi, o) in raw_messages.into_iter().enumerate() {
        let m = Message::from_object(o).map_err(|e| {
            LineError::at(format!(
                "at {base}/messages/{mi}{}: expected {}",
                e.pointer, e.expected
            ))
        })?;
        messages.push(strip_message(m, mi, &mut markers, un));
    }
    if body.get("cache_control").is_some_and(|r| r.get() != "null") {
        let mut cc = RawObject::new();
        if let Some(raw) = body.get("cache_control") {
            cc.set("cache_control", raw.to_owned());
        }
        if let Some(ttl) = take_cache_control(&mut cc, un)
            && let Some(at) = last_markable(&messages, &system, &tools)
            && !markers.iter().any(|m| m.at == at)
        {
            markers.push(Marker { at, ttl });
        }
    }
    if markers.len() > MAX_BREAKPOINTS {
        un.add(
            "cache_control markers beyond the API's 4 per request (dropped)",
            markers.len() - MAX_BREAKPOINTS,
        );
        markers.truncate(MAX_BREAKPOINTS);
    }
    if body.get("context_management").is_some() {
        un.add(
            "requests with context_management (server-side edits are not replayed)",
            1,
        );
    }
    let model = match body.parse::<String>("model") {
        Some(Ok(m)) => Some(m),
        _ => None,
    };
    Ok(Some(ParsedRequest {
        messages,
        prompt: Prompt { system, tools },
        markers,
        model,
    }))
}

fn parse_tools(
    body: &RawObject,
    base: &str,
    markers: &mut Vec<Marker>,
    un: &mut Unmapped,
) -> Result<Vec<ToolDefinition>, LineError> {
    let list = match body.get("tools") {
        None => return Ok(Vec::new()),
        Some(r) if r.get() == "null" => return Ok(Vec::new()),
        Some(r) => serde_json::from_str::<Vec<RawObject>>(r.get()).map_err(|_| {
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
    body: &RawObject,
    base: &str,
    markers: &mut Vec<Marker>,
    un: &mut Unmapped,
) -> Result<Vec<ContentBlock>, LineError> {
    let Some(raw) = body.get("system") else {
        return Ok(Vec::new());
    };
    let text = raw.get();
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

/// The message without `cache_control` members; markers found are pushed
/// with `BlockRef::Message { message: mi, .. }`.
fn strip_message(m: Message, mi: usize, markers: &mut Vec<Marker>, un: &mut Unmapped) -> Message {
    let Content::Blocks(blocks) = m.content() else {
        return m;
    };
    if !blocks.iter().any(has_cache_control) {
        return m;
    }
    let mut out = Vec::with_capacity(blocks.len());
    for (bi, b) in blocks.iter().enumerate() {
        let mut fields = b.fields().clone();
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
                let mut f = ib.fields().clone();
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
            markers.push(Marker {
                at: BlockRef::Message {
                    message: mi,
                    block: bi,
                },
                ttl,
            });
        }
        out.push(ContentBlock::from_object(fields).unwrap_or_else(|_| b.clone()));
    }
    with_blocks(&m, out)
}

/// Where a top-level (automatic) `cache_control` puts its breakpoint: the
/// last markable block of the request.
fn last_markable(
    messages: &[Message],
    system: &[ContentBlock],
    tools: &[ToolDefinition],
) -> Option<BlockRef> {
    for (mi, m) in messages.iter().enumerate().rev() {
        match m.content() {
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

enum Reply {
    Missing,
    Failed,
    Unreadable,
    Ok {
        usage: Option<RecordedUsage>,
        message: Option<Message>,
    },
}

fn reply_from_body(body: &RawObject, un: &mut Unmapped) -> Reply {
    if is_error_body(body) {
        return Reply::Failed;
    }
    let message = match body.get("content") {
        None => None,
        Some(content) => {
            let m = serde_message(Role::Assistant, content);
            if m.is_none() {
                un.add(
                    "response contents that are not valid content blocks (dropped)",
                    1,
                );
            }
            m
        }
    };
    let mut usage = RecordedUsage::default();
    if let Some(raw) = body.get("usage")
        && !merge_anthropic_usage(&mut usage, raw)
    {
        un.add("malformed usage objects (ignored)", 1);
    }
    Reply::Ok {
        usage: finish_usage(usage, un),
        message,
    }
}

/// One content block being rebuilt from stream events.
struct BlockAcc {
    fields: RawObject,
    text: Option<String>,
    json: String,
    thinking: Option<String>,
    signature: Option<String>,
    citations: Vec<Box<RawValue>>,
}

impl BlockAcc {
    fn new(fields: RawObject) -> Self {
        Self {
            fields,
            text: None,
            json: String::new(),
            thinking: None,
            signature: None,
            citations: Vec::new(),
        }
    }

    fn finish(mut self, un: &mut Unmapped) -> Option<ContentBlock> {
        if let Some(t) = self.text {
            let base = match self.fields.parse::<String>("text") {
                Some(Ok(s)) => s,
                _ => String::new(),
            };
            self.fields.set("text", raw_string(&(base + &t)));
        }
        if let Some(t) = self.thinking {
            let base = match self.fields.parse::<String>("thinking") {
                Some(Ok(s)) => s,
                _ => String::new(),
            };
            self.fields.set("thinking", raw_string(&(base + &t)));
        }
        if let Some(s) = self.signature {
            self.fields.set("signature", raw_string(&s));
        }
        if !self.json.is_empty() {
            match RawValue::from_string(self.json.clone()) {
                Ok(v) => self.fields.set("input", v),
                Err(_) => {
                    un.add(
                        "streamed tool inputs that are not valid JSON (wrapped as {\"_raw\": …})",
                        1,
                    );
                    let mut o = RawObject::new();
                    o.set("_raw", raw_string(&self.json));
                    self.fields.set("input", raw_json(o.to_json()));
                }
            }
        }
        if !self.citations.is_empty() {
            let parts: Vec<&str> = self.citations.iter().map(|c| c.get()).collect();
            self.fields
                .set("citations", raw_json(format!("[{}]", parts.join(","))));
        }
        match ContentBlock::from_object(self.fields) {
            Ok(b) => Some(b),
            Err(_) => {
                un.add("streamed content blocks of an invalid shape (dropped)", 1);
                None
            }
        }
    }
}

#[derive(Default)]
struct Sse {
    events: usize,
    usage: RecordedUsage,
    open: BTreeMap<u64, BlockAcc>,
    done: BTreeMap<u64, ContentBlock>,
    error: bool,
    stopped: bool,
}

#[derive(Deserialize)]
struct DeltaDoc {
    #[serde(rename = "type")]
    kind: Option<String>,
    text: Option<String>,
    partial_json: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    citation: Option<Box<RawValue>>,
}

impl Sse {
    fn event(&mut self, data: &str, un: &mut Unmapped) {
        let Ok(ev) = RawObject::from_json(data) else {
            un.add("stream events that are not JSON objects (ignored)", 1);
            return;
        };
        self.events += 1;
        let kind = match ev.parse::<String>("type") {
            Some(Ok(k)) => k,
            _ => String::new(),
        };
        let index = || match ev.parse::<u64>("index") {
            Some(Ok(i)) => Some(i),
            _ => None,
        };
        match kind.as_str() {
            "message_start" => {
                let usage = match ev.parse::<RawObject>("message") {
                    Some(Ok(m)) => m.get("usage").map(ToOwned::to_owned),
                    _ => None,
                };
                if let Some(u) = usage
                    && !merge_anthropic_usage(&mut self.usage, &u)
                {
                    un.add("malformed usage objects (ignored)", 1);
                }
            }
            "message_delta" => {
                if let Some(u) = ev.get("usage")
                    && !merge_anthropic_usage(&mut self.usage, u)
                {
                    un.add("malformed usage objects (ignored)", 1);
                }
            }
            "content_block_start" => match (index(), ev.parse::<RawObject>("content_block")) {
                (Some(i), Some(Ok(b))) => {
                    self.open.insert(i, BlockAcc::new(b));
                }
                _ => un.add("malformed content_block_start events (ignored)", 1),
            },
            "content_block_delta" => {
                let delta = ev.parse::<DeltaDoc>("delta");
                let (Some(i), Some(Ok(d))) = (index(), delta) else {
                    un.add("malformed content_block_delta events (ignored)", 1);
                    return;
                };
                let Some(acc) = self.open.get_mut(&i) else {
                    un.add("content_block_delta events for no open block (ignored)", 1);
                    return;
                };
                let kind = d.kind.unwrap_or_default();
                match (
                    kind.as_str(),
                    d.text,
                    d.partial_json,
                    d.thinking,
                    d.signature,
                    d.citation,
                ) {
                    ("text_delta", Some(t), ..) => {
                        acc.text.get_or_insert_with(String::new).push_str(&t)
                    }
                    ("input_json_delta", _, Some(j), ..) => acc.json.push_str(&j),
                    ("thinking_delta", _, _, Some(t), ..) => {
                        acc.thinking.get_or_insert_with(String::new).push_str(&t)
                    }
                    ("signature_delta", _, _, _, Some(s), _) => {
                        acc.signature.get_or_insert_with(String::new).push_str(&s)
                    }
                    ("citations_delta", .., Some(c)) => acc.citations.push(c),
                    _ => un.add("stream deltas of an unknown type (ignored)", 1),
                }
            }
            "content_block_stop" => {
                if let Some(i) = index()
                    && let Some(acc) = self.open.remove(&i)
                    && let Some(b) = acc.finish(un)
                {
                    self.done.insert(i, b);
                }
            }
            "message_stop" => self.stopped = true,
            "error" => self.error = true,
            _ => {}
        }
    }

    fn finish(mut self, un: &mut Unmapped) -> Reply {
        if self.error {
            return Reply::Failed;
        }
        if self.events == 0 {
            return Reply::Unreadable;
        }
        if !self.stopped {
            un.add("streamed responses cut off before message_stop", 1);
        }
        for (i, acc) in std::mem::take(&mut self.open) {
            if let Some(b) = acc.finish(un) {
                self.done.insert(i, b);
            }
        }
        let blocks: Vec<ContentBlock> = self.done.into_values().collect();
        let message = (!blocks.is_empty()).then(|| Message::new(Role::Assistant, blocks));
        Reply::Ok {
            usage: finish_usage(self.usage, un),
            message,
        }
    }
}

/// Rebuilds a streamed response from its server-sent events.
fn parse_sse(text: &str, un: &mut Unmapped) -> Reply {
    let mut sse = Sse::default();
    let mut data = String::new();
    for raw_line in text.split('\n') {
        let line = raw_line.strip_suffix('\r').unwrap_or(raw_line);
        if line.is_empty() {
            if !data.is_empty() {
                sse.event(&data, un);
                data.clear();
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    if !data.is_empty() {
        sse.event(&data, un);
    }
    sse.finish(un)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_rebuilds_text_tool_input_and_usage() {
        let sse = concat!(
            "event: message_start\n",
            "data: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":100,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n",
            "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{}}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"b\\\": 1,\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\" \\\"a\\\": 2}\"}}\n\n",
            "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":42}}\n\n",
            "data: {\"type\":\"message_stop\"}\n\n",
        );
        let mut un = Unmapped::default();
        let Reply::Ok { usage, message } = parse_sse(sse, &mut un) else {
            panic!("not ok");
        };
        let u = usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
            (Some(5), Some(100), Some(42))
        );
        let m = message.unwrap();
        assert_eq!(
            m.to_json(),
            r#"{"role":"assistant","content":[{"type":"text","text":"Hello"},{"type":"tool_use","id":"t1","name":"f","input":{"b": 1, "a": 2}}]}"#
        );
        assert!(un.lines().is_empty(), "{:?}", un.lines());
    }

    #[test]
    fn sse_error_event_fails_the_exchange() {
        let mut un = Unmapped::default();
        let sse = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n";
        assert!(matches!(parse_sse(sse, &mut un), Reply::Failed));
    }
}

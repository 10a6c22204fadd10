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
//!   `message_delta`), with the price modifiers it records (`speed`,
//!   `inference_geo`, `service_tier`, read as in Claude Code transcripts);
//!   `start_ms` from the request's `timestamp` (seconds;
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
//!
//! # Where the reading is
//!
//! This module says what one line is: `exchange` reads a line whole, and
//! its result is what every faster path must give. The rest is there
//! because logs are large and mostly resent messages, and each part is
//! kept apart so it can be checked against `exchange` on its own:
//!
//! - `pipeline`: the read pipeline over a file, a batch of lines at a
//!   time, split in parallel and applied in line order;
//! - `resent`: the fast path for the messages a line resends, matched by
//!   their bytes against those of recent lines instead of parsed again;
//! - `request`: a request body's tools, system and messages, with their
//!   `cache_control` markers taken off;
//! - `sse`: a streamed response rebuilt from its server-sent events.

mod pipeline;
mod request;
mod resent;
mod sse;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::value::RawValue;

use self::pipeline::{BATCH_BYTES, import_file};
use self::request::{ParsedRequest, parse_request};
use self::sse::parse_sse;
use super::common;
use super::common::{
    HttpBody, SharedCall, TraceBuilder, Unmapped, compact_json, finish_usage, is_error_body,
    merge_anthropic_usage, serde_message, unwrap_request, unwrap_response,
};
use super::{ImportError, ImportOptions, ImportOutput, ImportReport};
use crate::engine::json::RawObject;
use crate::engine::message::{Message, Role};
use crate::trace::{Call, RecordedUsage};

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
    first: None,
    csv: false,
};

fn read(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportReport,
    un: &mut Unmapped,
    _shared: &mut common::Shared,
) -> Result<(Vec<TraceBuilder>, String), ImportError> {
    let convs = import_file(path, opts, report, un, BATCH_BYTES)?;
    Ok((
        convs.builders,
        format!("Anthropic Messages API log {}", common::file_name(path)),
    ))
}

/// A request's messages, its prompt (tools, system) and its cache markers.
pub(crate) type RequestParts = (
    Vec<Message>,
    crate::trace::Prompt,
    Vec<crate::engine::wire::Marker>,
);

/// A request's messages, prompt and markers from a Messages API request
/// body (compact JSON), for importers whose records hold Anthropic-shaped
/// requests in another envelope ([`crate::chat`]). `Ok(None)`: no
/// messages.
pub(crate) fn request_parts(
    body: &RawObject,
    base: &str,
    un: &mut Unmapped,
) -> Result<Option<RequestParts>, String> {
    let Some(req) = parse_request(body, base, un).map_err(|e| e.message)? else {
        return Ok(None);
    };
    let messages = req
        .messages
        .into_iter()
        .map(|m| Message::clone(&m.message))
        .collect();
    Ok(Some((messages, req.prompt, req.markers)))
}

/// Tool definitions in the Messages API's shape (compact JSON of a list),
/// their markers dropped.
pub(crate) fn tools_of(
    tools: &str,
    un: &mut Unmapped,
) -> Result<Vec<crate::engine::message::ToolDefinition>, String> {
    let head = request::parse_head(Some(tools), None, "", un).map_err(|e| e.message)?;
    Ok(head.tools)
}

/// One Messages API message (an assistant reply, say) from its JSON,
/// markers removed; `None` when it is not one.
pub(crate) fn message_of(raw: &str) -> Option<Message> {
    let fields = common::compact_object(raw)?;
    let m = request::parse_message(fields, 0, "").ok()?;
    Some(Arc::unwrap_or_clone(m.message))
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

/// One exchange, ready to join its conversation (its messages shared with
/// the message cache).
type Exchange = SharedCall;

/// The exchange of a parsed request and its reply.
fn exchange_of(
    parsed: ParsedRequest,
    start_ms: Option<u64>,
    usage: Option<RecordedUsage>,
    reply: Option<Message>,
) -> Exchange {
    let call = Call {
        cleared: Vec::new(),
        compacted: None,
        messages: parsed.messages.len(),
        start_ms,
        model: parsed.model,
        prompt: 0,
        markers: Some(parsed.markers),
        usage,
    };
    SharedCall {
        keys: parsed.messages.iter().map(|m| m.key).collect(),
        messages: parsed.messages.iter().map(|m| m.message.clone()).collect(),
        prompt: parsed.prompt,
        call,
        reply,
    }
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
    if let Some(url) = &req.url
        && !is_messages_endpoint(url)
    {
        un.add("requests to endpoints other than /v1/messages", 1);
        return Ok(None);
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
    let (usage, message) = reply_of(obj.get("response"), un);
    Ok(Some(exchange_of(parsed, start_ms, usage, message)))
}

/// Whether a request URL is the Messages API's.
fn is_messages_endpoint(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.trim_end_matches('/').ends_with("/v1/messages")
}

/// The usage and assistant message of an exchange's `response` member.
fn reply_of(
    response: Option<&RawValue>,
    un: &mut Unmapped,
) -> (Option<RecordedUsage>, Option<Message>) {
    let reply = match response {
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
    match reply {
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
    }
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
        un.add(common::MALFORMED_USAGE, 1);
    }
    Reply::Ok {
        usage: finish_usage(usage, un),
        message,
    }
}

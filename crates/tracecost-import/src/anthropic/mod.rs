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
//! `exchange` says what one line is: it reads a line whole, and its result
//! is what every faster path must give. The rest is there
//! because logs are large and mostly resent messages, and each part is
//! kept apart so it can be checked against `exchange` on its own:
//!
//! - `pipeline`: the read pipeline over a file, a batch of lines at a
//!   time, split in parallel and applied in line order;
//! - `resent`: the fast path for the messages a line resends, matched by
//!   their bytes against those of recent lines instead of parsed again;
//! - `request`: a request body's tools, system and messages, with their
//!   `cache_control` markers taken off;
//! - `sse`: a streamed response rebuilt from its server-sent events;
//! - `line`: what reading a line gives (its error, its response's reply),
//!   beneath them all.

mod exchange;
mod line;
mod pipeline;
mod request;
mod resent;
mod sse;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use self::pipeline::{BATCH_BYTES, import_file};
use self::request::parse_request;
use super::common;
use super::common::{TraceBuilder, Unmapped};
use super::{ImportError, ImportOptions, ImportResult, ImportSummary};
use tracecost_engine::json::RawObject;
use tracecost_engine::message::Message;

/// Imports Anthropic Messages API request/response logs (plain or
/// claude-trace JSONL). Directories are expanded to their `.json`/`.jsonl`
/// files; files are read in path order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    super::InputFormat::Anthropic.import(inputs, opts)
}

/// What [`super::InputFormat::Anthropic`] reads, for the loop every log importer
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
    report: &mut ImportSummary,
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
    tracecost_trace::Prompt,
    Vec<tracecost_engine::wire::Marker>,
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
) -> Result<Vec<tracecost_engine::message::ToolDefinition>, String> {
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

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

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;
use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::common;
use super::common::{
    Conversations, HttpBody, LineBatch, LineBatches, SharedCall, TraceBuilder, Unmapped,
    compact_json, finish_usage, is_error_body, merge_anthropic_usage, message_key, serde_message,
    unwrap_request, unwrap_response, with_blocks,
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
    let convs = import_file(path, opts, report, un, BATCH_BYTES)?;
    Ok((
        convs.builders,
        format!("Anthropic Messages API log {}", common::file_name(path)),
    ))
}

/// Lines are read this many bytes at a time (whole lines, so a batch may
/// be longer): enough lines to keep the cores busy, while memory stays a
/// small multiple of this rather than the file's size.
const BATCH_BYTES: usize = 4 << 20;

/// Reads one log file, a batch of lines at a time.
///
/// Agents resend the whole conversation with every request, so most of a
/// log's bytes are messages an earlier line already carried. Each batch is
/// first split in parallel, line by line ([`pre_line`]): the line is checked
/// as JSON and cut into its messages without copying them, a message
/// already known from earlier batches matched by its bytes rather than
/// read ([`resent_messages`]), and its tools, system and response are read.
/// Then, in line order, each message not matched yet is looked up by its
/// bytes among the messages of recent lines ([`MessageCache`]) and parsed
/// only when new, and the call joins its conversation. Lines of other shapes, and invalid ones, are read whole by
/// [`exchange`] (in the parallel pass too). The result is that of reading
/// line by line with [`exchange`]: the same traces, the same counts of what
/// could not be mapped, and the same first error.
///
/// A thread reads the next batch while the current one is split, and a
/// batch is split while the one before it is applied, so three batches
/// are held at most (with the messages of the last 64 lines).
fn import_file(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportReport,
    un: &mut Unmapped,
    batch_bytes: usize,
) -> Result<Conversations, ImportError> {
    let io = |source| ImportError::Io {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let mut applied = Applied {
        path,
        opts,
        report,
        un,
        convs: Conversations::default(),
        cache: MessageCache::default(),
    };
    // A batch is handed over only when the last one is taken: one is read
    // while one is split and one applied.
    let (tx, rx) = std::sync::mpsc::sync_channel(0);
    let (back, returned) = std::sync::mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut batches = LineBatches::new(file, batch_bytes, Some(returned));
            loop {
                let next = batches.next_batch().transpose();
                let last = !matches!(next, Some(Ok(_)));
                // The receiver is gone once reading stopped on an error.
                if let Some(next) = next
                    && tx.send(next).is_err()
                {
                    break;
                }
                if last {
                    break;
                }
            }
        });
        // Dropped on return, before the scope waits for the reader: a
        // reader blocked on sending then stops.
        let rx = rx;
        let mut pending: Option<(LineBatch, Vec<Pre>)> = None;
        // What a batch is split against: the cache as of two batches
        // before (the one before is being applied meanwhile).
        let mut known = Arc::new(KnownMessages::default());
        for next in rx.iter() {
            let split_against = known.clone();
            let (done, next) = rayon::join(
                || match pending.take() {
                    Some((batch, pre)) => {
                        let done = applied.batch(&batch, pre);
                        // The reader may have stopped: the buffer is then
                        // simply dropped.
                        let _ = back.send(batch.into_bytes());
                        done
                    }
                    None => Ok(()),
                },
                || {
                    next.map(|batch| {
                        let pre = pre_batch(&batch, &split_against);
                        (batch, pre)
                    })
                },
            );
            done?;
            known = Arc::new(applied.cache.known());
            // An error reading comes after the lines read before it.
            pending = Some(next.map_err(io)?);
        }
        match pending {
            Some((batch, pre)) => applied.batch(&batch, pre),
            None => Ok(()),
        }
    })?;
    Ok(applied.convs)
}

/// Splits every line of a batch, in parallel.
fn pre_batch(batch: &LineBatch, known: &KnownMessages) -> Vec<Pre> {
    batch
        .lines()
        .par_iter()
        .map(|(line_no, range)| match range {
            Ok(r) => match batch.text(r.clone()) {
                Some(text) => pre_line(*line_no, text, r.start, known),
                // Cannot happen: the batch checked the line is UTF-8.
                None => Pre::NotUtf8(1),
            },
            Err(column) => Pre::NotUtf8(*column),
        })
        .collect()
}

/// What the lines applied so far made.
struct Applied<'a> {
    path: &'a Path,
    opts: &'a ImportOptions,
    report: &'a mut ImportReport,
    un: &'a mut Unmapped,
    convs: Conversations,
    cache: MessageCache,
}

impl Applied<'_> {
    /// Applies a split batch's lines in order.
    fn batch(&mut self, batch: &LineBatch, pre: Vec<Pre>) -> Result<(), ImportError> {
        for ((line_no, _), p) in batch.lines().iter().zip(pre) {
            self.line(batch, *line_no, p)?;
            self.cache.next_line();
        }
        Ok(())
    }

    fn line(&mut self, batch: &LineBatch, line_no: usize, pre: Pre) -> Result<(), ImportError> {
        let result = match pre {
            Pre::Blank => return Ok(()),
            Pre::NotUtf8(column) => {
                let err = common::invalid(self.path, line_no, Some(column), "not UTF-8");
                return common::reject(self.opts, self.report, err);
            }
            Pre::Read(read) => {
                let (result, local) = *read;
                self.un.merge(&local);
                result
            }
            Pre::Split(split) => match self.cache.resolve(batch, &split) {
                Some(messages) => Ok(Some(split.exchange(messages, self.un))),
                // A message that does not parse: the line is read again
                // whole, for the error it has always given.
                None => match batch.text(split.text.clone()) {
                    Some(text) => exchange(text, self.un),
                    None => Err(LineError::at("could not read this line".into())),
                },
            },
        };
        match result {
            Ok(Some(ex)) => self.convs.add_shared(ProviderKind::Anthropic, line_no, ex),
            Ok(None) => {}
            Err(LineError { column, message }) => {
                let err = common::invalid(self.path, line_no, column, &message);
                common::reject(self.opts, self.report, err)?;
            }
        }
        Ok(())
    }
}

/// The line-by-line reading [`import_file`] must match: each line read
/// whole by [`exchange`], in order.
#[cfg(test)]
fn import_file_by_line(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportReport,
    un: &mut Unmapped,
) -> Result<Conversations, ImportError> {
    use std::io::{BufRead, BufReader};
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
            Ok(Some(ex)) => convs.add_shared(ProviderKind::Anthropic, line_no, ex),
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

/// What the parallel pass makes of one line.
enum Pre {
    /// Nothing on it.
    Blank,
    /// Not UTF-8 from this (1-based) column.
    NotUtf8(usize),
    /// Read whole by [`exchange`], with what it could not map.
    Read(Box<(Result<Option<Exchange>, LineError>, Unmapped)>),
    /// An exchange whose messages are left to resolve in line order.
    Split(Box<SplitLine>),
}

/// One line in the parallel pass (`at`: where `line` starts in its
/// batch): blank, split, or read whole.
fn pre_line(line_no: usize, line: &str, at: usize, known: &KnownMessages) -> Pre {
    // Leading whitespace is kept so columns match the file.
    let text = line.trim_end();
    // A byte-order mark before the first line is ignored, as in every
    // other reader (see `trace::load::UTF8_BOM`).
    let text = match line_no {
        1 => text.strip_prefix('\u{feff}').unwrap_or(text),
        _ => text,
    };
    if text.trim_start().is_empty() {
        return Pre::Blank;
    }
    let at = at + (text.as_ptr() as usize - line.as_ptr() as usize);
    if let Some(split) = SplitLine::of(text, at, known) {
        return Pre::Split(Box::new(split));
    }
    let mut local = Unmapped::default();
    let result = exchange(text, &mut local);
    Pre::Read(Box::new((result, local)))
}

/// An exchange of the common shapes (a plain request body, or a
/// claude-trace wrapper whose body is an object) with everything but its
/// messages read: the messages are left as their bytes in the batch.
struct SplitLine {
    /// Where the line is in its batch (read again whole should a message
    /// not parse).
    text: Range<usize>,
    /// Where the messages are, for error messages.
    base: &'static str,
    /// Where each message's JSON text is in the batch, and the message
    /// it is byte for byte, when known when the line was split.
    messages: Elements,
    head: Head,
    /// What the tools and system could not map.
    head_unmapped: Unmapped,
    rest: RequestRest,
    start_ms: Option<u64>,
    usage: Option<RecordedUsage>,
    reply: Option<Message>,
    /// What the response could not map.
    reply_unmapped: Unmapped,
}

impl SplitLine {
    /// `None` when the line is anything but a valid exchange of a common
    /// shape with a non-empty `messages` array, valid tools and system:
    /// [`exchange`] then reads it and says what it is. `at` is where
    /// `text` starts in its batch.
    fn of(text: &str, at: usize, known: &KnownMessages) -> Option<Self> {
        if let Some(found) = resent_messages(text, known)
            && let Some(split) = Self::split(text, at, Some(found))
        {
            return Some(split);
        }
        Self::split(text, at, None)
    }

    /// [`SplitLine::of`], given what [`resent_messages`] found, if
    /// anything: then the line with its messages array emptied is read,
    /// else the line itself.
    fn split(text: &str, at: usize, found: Option<(String, usize, Elements)>) -> Option<Self> {
        let (src, found) = match found {
            Some((emptied, array_at, elements)) => {
                (Cow::Owned(emptied), Some((array_at, elements)))
            }
            None => (Cow::Borrowed(text), None),
        };
        let line: LineParts<'_> = serde_json::from_str(&src).ok()?;
        let req = line.request?;
        // As `unwrap_request` tells a body from a recorder's wrapper.
        let plain = req.messages.is_some() || req.body.is_none();
        let (body, base, req_ms) = if plain {
            (&req, "/request", None)
        } else {
            let url = req
                .member("url")
                .map(|r| serde_json::from_str::<String>(r.get()));
            if let Some(Ok(url)) = url
                && !is_messages_endpoint(&url)
            {
                return None;
            }
            let ms = req.member("timestamp").and_then(common::timestamp_ms);
            (req.body.as_deref()?, "/request/body", ms)
        };
        let array = body.messages?;
        let offset = |raw: &RawValue| raw.get().as_ptr() as usize - src.as_ptr() as usize;
        let messages: Elements = match found {
            // The emptied array must be this request's messages, or the
            // walk was of some other array.
            Some((array_at, elements)) => {
                if offset(array) != array_at || array.get() != "[]" {
                    return None;
                }
                elements
                    .into_iter()
                    .map(|(r, hit)| (at + r.start..at + r.end, hit))
                    .collect()
            }
            None => serde_json::from_str::<Vec<&RawValue>>(array.get())
                .ok()?
                .into_iter()
                .map(|r| {
                    let start = at + offset(r);
                    (start..start + r.get().len(), None)
                })
                .collect(),
        };
        if messages.is_empty() {
            return None;
        }
        // Members are read as `exchange` reads them: compacted.
        let compacted = |key: &str| body.member(key).map(|r| compact_json(r.get()));
        let mut head_unmapped = Unmapped::default();
        let head = parse_head(
            compacted("tools").as_deref(),
            compacted("system").as_deref(),
            base,
            &mut head_unmapped,
        )
        .ok()?;
        let rest = RequestRest {
            cache_control: compacted("cache_control").map(|c| raw_json(c.into_owned())),
            context_management: body.member("context_management").is_some(),
            model: body
                .member("model")
                .and_then(|r| serde_json::from_str::<String>(r.get()).ok()),
        };
        let start_ms = req_ms.or_else(|| line.timestamp.and_then(common::timestamp_ms));
        let mut reply_unmapped = Unmapped::default();
        let (usage, reply) = match line.response {
            None => reply_of(None, &mut reply_unmapped),
            Some(raw) => match compact_json(raw.get()) {
                Cow::Borrowed(_) => reply_of(Some(raw), &mut reply_unmapped),
                Cow::Owned(c) => {
                    let c = RawValue::from_string(c).ok()?;
                    reply_of(Some(&c), &mut reply_unmapped)
                }
            },
        };
        Some(Self {
            text: at..at + text.len(),
            base,
            messages,
            head,
            head_unmapped,
            rest,
            start_ms,
            usage,
            reply,
            reply_unmapped,
        })
    }

    /// The exchange, given the parsed messages; what could not be mapped
    /// is counted in the order [`exchange`] counts it.
    fn exchange(self: Box<Self>, messages: Vec<Arc<ParsedMessage>>, un: &mut Unmapped) -> Exchange {
        let s = *self;
        un.merge(&s.head_unmapped);
        for m in &messages {
            un.merge(&m.unmapped);
        }
        let parsed = assemble(s.head, messages, &s.rest, un);
        un.merge(&s.reply_unmapped);
        exchange_of(parsed, s.start_ms, s.usage, s.reply)
    }
}

/// Finds a request's `messages` array in `text` without reading it all:
/// each element that is byte for byte a message `known` from earlier
/// lines is matched with one comparison, and only the others are read.
/// Returns the line with the array emptied (`[]`, at the offset given),
/// which the caller then reads as a whole and must find that `[]` to be
/// the request's messages; and each element's place in `text`, with the
/// known message it is. A line resends its conversation, so this reads
/// only what is new in it instead of every byte.
///
/// `"messages"` cannot occur inside a JSON string (a quote there is
/// escaped), so each occurrence is a key or a string value; the first few
/// followed by `:` and `[` are tried.
fn resent_messages(text: &str, known: &KnownMessages) -> Option<(String, usize, Elements)> {
    const TRIES: usize = 4;
    let bytes = text.as_bytes();
    for key in memchr::memmem::find_iter(bytes, b"\"messages\"").take(TRIES) {
        let colon = skip_ws(bytes, key + "\"messages\"".len());
        if bytes.get(colon) != Some(&b':') {
            continue;
        }
        let array_at = skip_ws(bytes, colon + 1);
        if bytes.get(array_at) != Some(&b'[') {
            continue;
        }
        let Some((end, elements)) = walk_array(text, array_at, known) else {
            continue;
        };
        let mut emptied = String::with_capacity(array_at + 2 + (text.len() - end));
        emptied.push_str(text.get(..array_at)?);
        emptied.push_str("[]");
        emptied.push_str(text.get(end..)?);
        return Some((emptied, array_at, elements));
    }
    None
}

/// The elements of the JSON array at `at` in `text` (which starts with
/// `[`), and where the array ends; `None` if it is not a valid array. An
/// element `known` is matched by its bytes (it was read whole when first
/// seen), any other is read by serde_json.
fn walk_array(text: &str, at: usize, known: &KnownMessages) -> Option<(usize, Elements)> {
    let bytes = text.as_bytes();
    let mut p = skip_ws(bytes, at + 1);
    let mut out = Vec::new();
    if bytes.get(p) == Some(&b']') {
        return Some((p + 1, out));
    }
    loop {
        let rest = text.get(p..)?;
        let (end, hit) = match known.find(rest.as_bytes()) {
            Some(k) => (p + k.bytes.len(), Some(k)),
            None => {
                let mut de = serde_json::Deserializer::from_str(rest);
                let raw = <&RawValue>::deserialize(&mut de).ok()?;
                // No whitespace is skipped before it: `p` is past it.
                if raw.get().as_ptr() != rest.as_ptr() {
                    return None;
                }
                (p + raw.get().len(), None)
            }
        };
        out.push((p..end, hit));
        p = skip_ws(bytes, end);
        match bytes.get(p) {
            Some(b',') => p = skip_ws(bytes, p + 1),
            Some(b']') => return Some((p + 1, out)),
            _ => return None,
        }
    }
}

/// Where each message of a request is, and the message it is byte for
/// byte, when known when the line was split.
type Elements = Vec<(Range<usize>, Option<Arc<CachedMessage>>)>;

/// The first byte at or after `i` that is not JSON whitespace.
fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Messages known when a batch is split (the cache as the batch before
/// the last one left it), by a hash of their first [`KNOWN_HEAD`] bytes.
#[derive(Default)]
struct KnownMessages {
    by_head: HashMap<u64, Vec<Arc<CachedMessage>>>,
}

/// Bytes of a message's start a lookup hashes; shorter messages are not
/// looked up (reading them costs little).
const KNOWN_HEAD: usize = 128;

fn head_hash(head: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    head.hash(&mut h);
    h.finish()
}

impl KnownMessages {
    /// A known message that `rest` starts with.
    fn find(&self, rest: &[u8]) -> Option<Arc<CachedMessage>> {
        let head = rest.get(..KNOWN_HEAD)?;
        self.by_head
            .get(&head_hash(head))?
            .iter()
            .find(|m| rest.starts_with(&m.bytes))
            .cloned()
    }
}

/// The members of a log line the importer reads, borrowed from the line:
/// one pass checks the whole line and finds them. A key twice (at the top
/// or in the request) fails it, as [`RawObject`] does.
#[derive(Default)]
struct LineParts<'a> {
    timestamp: Option<&'a RawValue>,
    request: Option<RequestParts<'a>>,
    response: Option<&'a RawValue>,
}

/// A request object: its messages array, a recorder's `body` object split
/// the same way, every other member, all raw.
#[derive(Default)]
struct RequestParts<'a> {
    members: Vec<(Cow<'a, str>, &'a RawValue)>,
    messages: Option<&'a RawValue>,
    body: Option<Box<RequestParts<'a>>>,
}

impl<'a> RequestParts<'a> {
    fn member(&self, key: &str) -> Option<&'a RawValue> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

/// Objects with more members than this are left to [`exchange`] (the
/// check for repeated keys here is a scan).
const MAX_SPLIT_MEMBERS: usize = 64;

/// A map key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Reads an object's keys, failing on one seen before or on too many.
fn next_key<'de, A: MapAccess<'de>>(
    map: &mut A,
    seen: &mut Vec<Cow<'de, str>>,
) -> Result<Option<Cow<'de, str>>, A::Error> {
    let Some(Key(k)) = map.next_key()? else {
        return Ok(None);
    };
    if seen.len() >= MAX_SPLIT_MEMBERS || seen.contains(&k) {
        return Err(serde::de::Error::custom("left to the whole-line reader"));
    }
    seen.push(k.clone());
    Ok(Some(k))
}

impl<'de> Deserialize<'de> for LineParts<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LineParts<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an exchange object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = LineParts::default();
                let mut seen = Vec::new();
                while let Some(k) = next_key(&mut map, &mut seen)? {
                    match &*k {
                        "request" => out.request = Some(map.next_value()?),
                        "response" => out.response = Some(map.next_value()?),
                        "timestamp" => out.timestamp = Some(map.next_value()?),
                        _ => {
                            map.next_value::<&RawValue>()?;
                        }
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for RequestParts<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RequestParts<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a request object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = RequestParts::default();
                let mut seen = Vec::new();
                while let Some(k) = next_key(&mut map, &mut seen)? {
                    match &*k {
                        "messages" => out.messages = Some(map.next_value()?),
                        "body" => out.body = Some(map.next_value()?),
                        _ => {
                            let v = map.next_value()?;
                            out.members.push((k, v));
                        }
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

/// Messages parsed from recent lines, by their bytes: a request that
/// resends the conversation finds all but its newest messages here.
#[derive(Default)]
struct MessageCache {
    /// By [`sample_hash`]: each message, and the line that last used it.
    entries: HashMap<u64, Vec<(Arc<CachedMessage>, usize)>>,
    /// Lines seen.
    line: usize,
}

/// A message as read from a log line: its bytes there, and its parse.
struct CachedMessage {
    bytes: Box<[u8]>,
    parsed: Arc<ParsedMessage>,
}

/// Messages not used for this many lines are dropped from the cache.
const CACHE_LINES: usize = 64;

impl MessageCache {
    /// The parsed messages of `split` (a line of `batch`), parsing those
    /// not seen before; `None` when one does not parse.
    fn resolve(&mut self, batch: &LineBatch, split: &SplitLine) -> Option<Vec<Arc<ParsedMessage>>> {
        let line = self.line;
        let mut out = Vec::with_capacity(split.messages.len());
        for (mi, (range, hit)) in split.messages.iter().enumerate() {
            // Matched when split: only its use is recorded (it is put
            // back if it was dropped since).
            if let Some(known) = hit {
                let bucket = self.entries.entry(sample_hash(&known.bytes)).or_default();
                match bucket.iter_mut().find(|e| Arc::ptr_eq(&e.0, known)) {
                    Some(e) => e.1 = line,
                    None => bucket.push((known.clone(), line)),
                }
                out.push(known.parsed.clone());
                continue;
            }
            let raw = batch.bytes().get(range.clone())?;
            let bucket = self.entries.entry(sample_hash(raw)).or_default();
            if let Some(e) = bucket.iter_mut().find(|e| &*e.0.bytes == raw) {
                e.1 = line;
                out.push(e.0.parsed.clone());
                continue;
            }
            let text = batch.text(range.clone())?;
            let fields = RawObject::from_json(&compact_json(text)).ok()?;
            let parsed = Arc::new(parse_message(fields, mi, split.base).ok()?);
            let cached = CachedMessage {
                bytes: raw.into(),
                parsed: parsed.clone(),
            };
            bucket.push((Arc::new(cached), line));
            out.push(parsed);
        }
        Some(out)
    }

    /// The messages long enough to be looked up when splitting lines.
    fn known(&self) -> KnownMessages {
        let mut by_head: HashMap<u64, Vec<Arc<CachedMessage>>> = HashMap::new();
        for (m, _) in self.entries.values().flatten() {
            if let Some(head) = m.bytes.get(..KNOWN_HEAD) {
                by_head.entry(head_hash(head)).or_default().push(m.clone());
            }
        }
        KnownMessages { by_head }
    }

    /// Moves to the next line, now and then dropping what recent lines
    /// did not use.
    fn next_line(&mut self) {
        self.line += 1;
        if self.line.is_multiple_of(CACHE_LINES) {
            let keep_from = self.line - CACHE_LINES;
            self.entries.retain(|_, bucket| {
                bucket.retain(|e| e.1 >= keep_from);
                !bucket.is_empty()
            });
        }
    }
}

/// A hash of a message's length, start and end: cheap, and enough to tell
/// messages apart before their bytes are compared.
fn sample_hash(b: &[u8]) -> u64 {
    const EDGE: usize = 64;
    let mut h = DefaultHasher::new();
    b.len().hash(&mut h);
    b[..b.len().min(EDGE)].hash(&mut h);
    b[b.len().saturating_sub(EDGE)..].hash(&mut h);
    h.finish()
}

/// A request's tools and system, markers removed.
struct Head {
    tools: Vec<ToolDefinition>,
    system: Vec<ContentBlock>,
    /// The markers they carried.
    markers: Vec<Marker>,
}

/// Reads `tools` and `system` (compact JSON text, when present).
fn parse_head(
    tools: Option<&str>,
    system: Option<&str>,
    base: &str,
    un: &mut Unmapped,
) -> Result<Head, LineError> {
    let mut markers = Vec::new();
    // Tools first, then system, then messages: the order markers are listed.
    let tools = parse_tools(tools, base, &mut markers, un)?;
    let system = parse_system(system, base, &mut markers, un)?;
    Ok(Head {
        tools,
        system,
        markers,
    })
}

/// One request message, markers removed.
struct ParsedMessage {
    message: Arc<Message>,
    /// [`message_key`] of the message.
    key: u64,
    /// The blocks that carried a marker, with its TTL.
    marks: Vec<(usize, Ttl)>,
    /// What it could not map.
    unmapped: Unmapped,
}

/// Reads message `mi` of a request (`mi` only names it in errors).
fn parse_message(fields: RawObject, mi: usize, base: &str) -> Result<ParsedMessage, LineError> {
    let m = Message::from_object(fields).map_err(|e| {
        LineError::at(format!(
            "at {base}/messages/{mi}{}: expected {}",
            e.pointer, e.expected
        ))
    })?;
    let mut marks = Vec::new();
    let mut unmapped = Unmapped::default();
    let m = strip_message(m, &mut marks, &mut unmapped);
    Ok(ParsedMessage {
        key: message_key(&m),
        message: Arc::new(m),
        marks,
        unmapped,
    })
}

/// The members of a request body read after its messages.
struct RequestRest {
    /// A top-level `cache_control` (automatic caching), raw.
    cache_control: Option<Box<RawValue>>,
    /// Whether `context_management` is present.
    context_management: bool,
    /// The model, when a string.
    model: Option<String>,
}

impl RequestRest {
    fn of(body: &RawObject) -> Self {
        Self {
            cache_control: body.get("cache_control").map(ToOwned::to_owned),
            context_management: body.get("context_management").is_some(),
            model: match body.parse::<String>("model") {
                Some(Ok(m)) => Some(m),
                _ => None,
            },
        }
    }
}

struct ParsedRequest {
    messages: Vec<Arc<ParsedMessage>>,
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
    let head = parse_head(
        body.get("tools").map(RawValue::get),
        body.get("system").map(RawValue::get),
        base,
        un,
    )?;
    let mut messages = Vec::with_capacity(raw_messages.len());
    for (mi, o) in raw_messages.into_iter().enumerate() {
        let m = parse_message(o, mi, base)?;
        un.merge(&m.unmapped);
        messages.push(Arc::new(m));
    }
    Ok(Some(assemble(head, messages, &RequestRest::of(body), un)))
}

/// A request from its parts: markers of tools, system and messages, then
/// the automatic one, at most four.
fn assemble(
    head: Head,
    messages: Vec<Arc<ParsedMessage>>,
    rest: &RequestRest,
    un: &mut Unmapped,
) -> ParsedRequest {
    let Head {
        tools,
        system,
        mut markers,
    } = head;
    for (mi, m) in messages.iter().enumerate() {
        markers.extend(m.marks.iter().map(|&(block, ttl)| Marker {
            at: BlockRef::Message { message: mi, block },
            ttl,
        }));
    }
    if let Some(raw) = rest.cache_control.as_deref()
        && raw.get() != "null"
    {
        let mut cc = RawObject::new();
        cc.set("cache_control", raw.to_owned());
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
    if rest.context_management {
        un.add(
            "requests with context_management (server-side edits are not replayed)",
            1,
        );
    }
    ParsedRequest {
        messages,
        prompt: Prompt { system, tools },
        markers,
        model: rest.model.clone(),
    }
}

fn parse_tools(
    raw: Option<&str>,
    base: &str,
    markers: &mut Vec<Marker>,
    un: &mut Unmapped,
) -> Result<Vec<ToolDefinition>, LineError> {
    let list = match raw {
        None | Some("null") => return Ok(Vec::new()),
        Some(r) => serde_json::from_str::<Vec<RawObject>>(r).map_err(|_| {
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
    raw: Option<&str>,
    base: &str,
    markers: &mut Vec<Marker>,
    un: &mut Unmapped,
) -> Result<Vec<ContentBlock>, LineError> {
    let Some(text) = raw else {
        return Ok(Vec::new());
    };
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

/// The message without `cache_control` members; the blocks that carried
/// a marker are pushed to `marks` with its TTL.
fn strip_message(m: Message, marks: &mut Vec<(usize, Ttl)>, un: &mut Unmapped) -> Message {
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
            marks.push((bi, ttl));
        }
        out.push(ContentBlock::from_object(fields).unwrap_or_else(|_| b.clone()));
    }
    with_blocks(&m, out)
}

/// Where a top-level (automatic) `cache_control` puts its breakpoint: the
/// last markable block of the request.
fn last_markable(
    messages: &[Arc<ParsedMessage>],
    system: &[ContentBlock],
    tools: &[ToolDefinition],
) -> Option<BlockRef> {
    for (mi, m) in messages.iter().enumerate().rev() {
        match m.message.content() {
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
    use proptest::prelude::*;

    /// What an import made, as text: each trace's JSON, then the report
    /// and what could not be mapped; or the error.
    fn outcome(
        read: impl FnOnce(&mut ImportReport, &mut Unmapped) -> Result<Conversations, ImportError>,
    ) -> String {
        let mut report = ImportReport::default();
        let mut un = Unmapped::default();
        let convs = match read(&mut report, &mut un) {
            Ok(c) => c,
            Err(e) => return format!("error: {e}"),
        };
        let opts = ImportOptions::default();
        let mut out = String::new();
        for (i, b) in convs.builders.into_iter().enumerate() {
            let t = b.finish(format!("t{i}"), String::new(), &opts, &mut un);
            out.push_str(&crate::trace::to_json(&t));
            out.push('\n');
        }
        report.unmapped = un.lines();
        out + &format!("{report:?}")
    }

    /// `line` with a space after every `,` and `:` between tokens.
    fn spaced(line: &str) -> String {
        let (mut in_str, mut esc) = (false, false);
        let mut out = String::new();
        for c in line.chars() {
            out.push(c);
            if in_str {
                match (esc, c) {
                    (true, _) => esc = false,
                    (false, '\\') => esc = true,
                    (false, '"') => in_str = false,
                    _ => {}
                }
            } else if c == '"' {
                in_str = true;
            } else if c == ',' || c == ':' {
                out.push(' ');
            }
        }
        out
    }

    /// Damages (or reshapes) one line of a log in one of a dozen ways.
    fn mutate(lines: &mut Vec<Vec<u8>>, at: usize, kind: usize) {
        let at = at % (lines.len() + 1);
        let copy = |lines: &Vec<Vec<u8>>| {
            lines
                .get(at.min(lines.len().saturating_sub(1)))
                .cloned()
                .unwrap_or_default()
        };
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match kind {
            0 => lines.insert(at, b"not json at all".to_vec()),
            1 => {
                let l = copy(lines);
                lines.insert(at, l[..l.len() / 2].to_vec());
            }
            2 => lines.insert(at, b"   ".to_vec()),
            3 => {
                let l = spaced(&text(&copy(lines)));
                lines.insert(at, l.into_bytes());
            }
            // A retry: the same request again.
            4 => {
                let l = copy(lines);
                lines.insert(at, l);
            }
            5 => lines.insert(at, b"{\"request\": \"\xff\xfe\"}".to_vec()),
            // A message that no longer parses, the rest of the line intact.
            6 => {
                let l = text(&copy(lines)).replacen("\"role\":\"user\"", "\"role\":\"robot\"", 1);
                lines.insert(at, l.into_bytes());
            }
            // A recorder's wrapper whose body is a string.
            7 => lines.insert(
                at,
                br#"{"request":{"url":"https://api.anthropic.com/v1/messages","body":"{\"messages\":[{\"role\":\"user\",\"content\":\"s\"}]}"},"response":{"status_code":500}}"#.to_vec(),
            ),
            8 => {
                let l = text(&copy(lines)).replace(",\"cache_control\":{\"type\":\"ephemeral\"}", "");
                lines.insert(at, l.into_bytes());
            }
            9 => {
                let mut l = copy(lines);
                l.push(b'\r');
                lines.insert(at, l);
            }
            10 => {
                let l = text(&copy(lines)).replacen("{\"timestamp\":", "{\"timestamp\":1,\"timestamp\":", 1);
                lines.insert(at, l.into_bytes());
            }
            _ => lines.insert(
                at,
                br#"{"request":{"messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral","ttl":"2h"}}]}],"cache_control":{"type":"ephemeral"},"context_management":{}},"response":null}"#.to_vec(),
            ),
        }
    }

    /// Messages known by their bytes, as a cache would hold them.
    fn known_of(messages: &[&str]) -> KnownMessages {
        let mut cache = MessageCache::default();
        for (i, m) in messages.iter().enumerate() {
            let Ok(parsed) = parse_message(RawObject::from_json(m).unwrap(), i, "/request") else {
                panic!("message {i} does not parse");
            };
            let cached = CachedMessage {
                bytes: m.as_bytes().into(),
                parsed: Arc::new(parsed),
            };
            cache
                .entries
                .entry(sample_hash(m.as_bytes()))
                .or_default()
                .push((Arc::new(cached), 0));
        }
        cache.known()
    }

    #[test]
    fn resent_messages_are_matched_by_their_bytes_and_the_rest_read() {
        let long = |role: &str, text: &str| {
            format!(r#"{{"role":"{role}","content":"{}"}}"#, text.repeat(100))
        };
        let (m0, m1, m2) = (
            long("user", "ab"),
            long("assistant", "cd"),
            long("user", "ef"),
        );
        let known = known_of(&[&m0, &m1]);
        // A tool whose schema has a "messages" property comes first: that
        // key is tried, found not to hold an array, and passed over.
        let line = format!(
            r#"{{"request":{{"tools":[{{"name":"t","input_schema":{{"messages":{{"type":"array"}}}}}}],"messages":[{m0}, {m1} ,{m2},{{"role":"user","content":"short"}}],"model":"m"}},"response":null}}"#
        );
        let (emptied, at, elements) = resent_messages(&line, &known).unwrap();
        assert_eq!(&emptied[at..at + 2], "[]");
        assert!(emptied.ends_with(r#"[],"model":"m"},"response":null}"#));
        let texts: Vec<&str> = elements.iter().map(|(r, _)| &line[r.clone()]).collect();
        assert_eq!(
            texts,
            [
                m0.as_str(),
                &m1,
                &m2,
                r#"{"role":"user","content":"short"}"#
            ]
        );
        let hits: Vec<bool> = elements.iter().map(|(_, h)| h.is_some()).collect();
        assert_eq!(hits, [true, true, false, false]);
        // The split takes them, and the same line split without any known
        // message gives the same messages.
        let split = SplitLine::of(&line, 0, &known).unwrap();
        let cold = SplitLine::of(&line, 0, &KnownMessages::default()).unwrap();
        let ranges = |s: &SplitLine| {
            s.messages
                .iter()
                .map(|(r, _)| r.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ranges(&split), ranges(&cold));
        // Not an array, or not a valid one: nothing is split this way.
        for bad in [
            format!(r#"{{"request":{{"messages":[{m0} {m1}]}}}}"#),
            format!(r#"{{"request":{{"messages":[{m0},]}}}}"#),
            format!(r#"{{"request":{{"messages":[{m0}"#),
        ] {
            assert!(resent_messages(&bad, &known).is_none(), "{bad}");
        }
        // An array found but not the request's messages: the whole line
        // is read instead, and gives the request's own.
        let decoy = format!(r#"{{"meta":{{"messages":[{m0}]}},"request":{{"messages":[{m2}]}}}}"#);
        let split = SplitLine::of(&decoy, 0, &known).unwrap();
        assert_eq!(ranges(&split).len(), 1);
        assert_eq!(&decoy[split.messages[0].0.clone()], m2);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Two generated conversations interleaved, with damaged and odd
        /// lines mixed in, read in batches of any size give what reading
        /// line by line gives: the same traces, counts and first error.
        #[test]
        fn batched_reading_matches_line_by_line(
            seed in 0u64..1000,
            calls in (1usize..10, 1usize..6),
            order in proptest::collection::vec(any::<bool>(), 12),
            damage in proptest::collection::vec((0usize..40, 0usize..12), 0..5),
            batch in prop_oneof![Just(1usize), 100usize..20_000, Just(1usize << 20)],
            skip_invalid in any::<bool>(),
            last_newline in any::<bool>(),
        ) {
            let log = |calls, seed| {
                let mut out = Vec::new();
                tracecost_gen::write_request_log(calls, seed, &mut out).unwrap();
                out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec).collect::<Vec<_>>()
            };
            let (a, b) = (log(calls.0, seed), log(calls.1, seed + 1));
            let (mut a, mut b) = (a.into_iter(), b.into_iter());
            let mut lines = Vec::new();
            for take_a in order.iter().cycle().take(12) {
                let next = if *take_a { a.next().or_else(|| b.next()) } else { b.next().or_else(|| a.next()) };
                lines.extend(next);
            }
            lines.extend(a.chain(b));
            for (at, kind) in damage {
                mutate(&mut lines, at, kind);
            }
            let mut bytes = lines.join(&b'\n');
            if last_newline {
                bytes.push(b'\n');
            }
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("log.jsonl");
            std::fs::write(&path, &bytes).unwrap();
            let opts = ImportOptions { skip_invalid, ..ImportOptions::default() };
            let batched = outcome(|r, u| import_file(&path, &opts, r, u, batch));
            let by_line = outcome(|r, u| import_file_by_line(&path, &opts, r, u));
            prop_assert_eq!(batched, by_line);
        }
    }

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

//! One log line read whole into its exchange: the request, its timestamp
//! and its reply. What every faster path (the pipeline, the resent
//! messages) must give.

use serde_json::value::RawValue;

use super::line::{LineError, Reply};
use super::request::{ParsedRequest, parse_request};
use super::sse::parse_sse;
use crate::common::{
    self, HttpBody, SharedCall, Unmapped, compact_json, finish_usage, is_error_body,
    merge_anthropic_usage, serde_message, unwrap_request, unwrap_response,
};
use tracecost_engine::json::RawObject;
use tracecost_engine::message::{Message, Role};
use tracecost_trace::{Call, RecordedUsage};

/// One exchange, ready to join its conversation (its messages shared with
/// the message cache).
pub(super) type Exchange = SharedCall;

/// The exchange of a parsed request and its reply: one call, or one per
/// request the response's `usage.iterations` records (all sending the
/// request's history, the first at its start, each after it when the one
/// before ended, an advisor's at its own model), billed at its own tokens
/// instead of the top level, which leaves a compaction's out.
pub(super) fn exchange_of(
    parsed: ParsedRequest,
    start_ms: Option<u64>,
    replied: Replied,
) -> Exchange {
    let Replied {
        usage,
        message: reply,
        iterations,
    } = replied;
    // (start, model, usage) of each request, the response's last at the end.
    let mut requests: Vec<(Option<u64>, Option<String>, Option<RecordedUsage>)> =
        if iterations.is_empty() {
            vec![(start_ms, parsed.model.clone(), usage)]
        } else {
            let served = usage.map(|u| u.modifiers).unwrap_or_default();
            iterations
                .into_iter()
                .enumerate()
                .map(|(i, (model, mut u))| {
                    // The response's speed, geography and tier are its
                    // own model's iterations' too.
                    if model.is_none() {
                        u.modifiers = served;
                    }
                    let start = if i == 0 { start_ms } else { None };
                    (start, model.or_else(|| parsed.model.clone()), Some(u))
                })
                .collect()
        };
    let call = |(start_ms, model, usage): (_, _, Option<RecordedUsage>), markers| Call {
        cleared: Vec::new(),
        compacted: None,
        messages: parsed.messages.len(),
        start_ms,
        model,
        prompt: 0,
        markers: Some(markers),
        usage: usage.map(Box::new),
    };
    // Never empty: the last request takes the markers, the others a copy.
    let last = requests.pop().unwrap_or((start_ms, None, usage));
    let before = requests
        .into_iter()
        .map(|r| call(r, parsed.markers.clone()))
        .collect();
    let last = call(last, parsed.markers);
    SharedCall {
        keys: parsed.messages.iter().map(|m| m.key).collect(),
        messages: parsed.messages.iter().map(|m| m.message.clone()).collect(),
        prompt: parsed.prompt,
        before,
        call: last,
        reply,
    }
}

/// What an exchange's response gave: its usage, its assistant message and
/// the requests its `usage.iterations` records.
pub(super) struct Replied {
    pub(super) usage: Option<RecordedUsage>,
    pub(super) message: Option<Message>,
    pub(super) iterations: Vec<(Option<String>, RecordedUsage)>,
}

/// Reads one log line; `Ok(None)` when it is not an exchange to import.
pub(super) fn exchange(text: &str, un: &mut Unmapped) -> Result<Option<Exchange>, LineError> {
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
    let Some(req_raw) = obj.raw("request") else {
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
        .or_else(|| obj.raw("timestamp").and_then(common::timestamp_ms));
    let replied = reply_of(obj.raw("response"), un);
    Ok(Some(exchange_of(parsed, start_ms, replied)))
}

/// Whether a request URL is the Messages API's.
pub(super) fn is_messages_endpoint(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.trim_end_matches('/').ends_with("/v1/messages")
}

/// The usage and assistant message of an exchange's `response` member.
pub(super) fn reply_of(response: Option<&RawValue>, un: &mut Unmapped) -> Replied {
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
    let none = Replied {
        usage: None,
        message: None,
        iterations: Vec::new(),
    };
    match reply {
        Reply::Missing => {
            un.add(
                "exchanges without a recorded response (kept without usage)",
                1,
            );
            none
        }
        Reply::Failed => {
            un.add(
                "failed exchanges (non-2xx status or error body; kept without usage)",
                1,
            );
            none
        }
        Reply::Unreadable => {
            un.add(
                "responses whose body could not be read (kept without usage)",
                1,
            );
            none
        }
        Reply::Ok {
            usage,
            message,
            iterations,
        } => Replied {
            usage,
            message,
            iterations,
        },
    }
}

pub(super) fn reply_from_body(body: &RawObject, un: &mut Unmapped) -> Reply {
    if is_error_body(body) {
        return Reply::Failed;
    }
    let message = match body.raw("content") {
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
    let raw = body.raw("usage");
    if let Some(raw) = raw
        && !merge_anthropic_usage(&mut usage, raw)
    {
        un.add(common::MALFORMED_USAGE, 1);
    }
    Reply::Ok {
        usage: finish_usage(usage, un),
        message,
        iterations: raw.map(common::anthropic_iterations).unwrap_or_default(),
    }
}

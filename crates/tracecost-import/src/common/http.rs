//! Exchange records as HTTP recorders save them: a `request` member that
//! is a request body or a recorder's wrapper around one, and a `response`
//! member that is a body, a string (JSON or server-sent events) or a
//! wrapper with a status. The Anthropic and OpenAI importers read the same
//! recorders, so the unwrapping is written once, here.

use serde_json::value::RawValue;

use super::{Unmapped, compact_object};
use tracecost_engine::json::RawObject;

/// The request side of an exchange record.
pub(crate) struct HttpRequest {
    /// The request body.
    pub body: Option<RawObject>,
    /// Whether it was wrapped (`{"body": …, "url": …}`).
    pub wrapped: bool,
    /// The request URL, when recorded.
    pub url: Option<String>,
    /// When the request started.
    pub timestamp_ms: Option<u64>,
}

/// A response body.
pub(crate) enum HttpBody {
    /// A JSON object.
    Json(RawObject),
    /// Text (server-sent events).
    Text(String),
}

/// The response side of an exchange record.
pub(crate) struct HttpResponse {
    /// No response was recorded (absent or `null`).
    pub missing: bool,
    /// The HTTP status, when recorded.
    pub status: Option<u64>,
    /// The body.
    pub body: Option<HttpBody>,
    /// When the response was recorded.
    pub timestamp_ms: Option<u64>,
    /// Whether the body was inside a recorder's wrapper (`{"body": …}`),
    /// for the JSON pointers of messages.
    pub wrapped: bool,
}

/// Milliseconds since the epoch from a number of seconds (or of
/// milliseconds, above 10^11) or an RFC 3339 string.
pub(crate) fn timestamp_ms(raw: &RawValue) -> Option<u64> {
    let text = raw.get();
    if text.starts_with('"') {
        let s: String = serde_json::from_str(text).ok()?;
        return crate::time::parse_rfc3339_ms(&s);
    }
    let v: f64 = serde_json::from_str(text).ok()?;
    if !v.is_finite() || v < 0.0 {
        return None;
    }
    let ms = if v > 1e11 { v } else { v * 1000.0 };
    // In range: checked above and bounded by f64's exponent.
    (ms < 1.8e19).then(|| ms.round() as u64)
}

fn parse_body(raw: &RawValue) -> Option<HttpBody> {
    let text = raw.get();
    if text.starts_with('{') {
        return compact_object(text).map(HttpBody::Json);
    }
    if text.starts_with('"') {
        let s: String = serde_json::from_str(text).ok()?;
        let trimmed = s.trim_start();
        if trimmed.starts_with('{')
            && let Some(o) = compact_object(trimmed)
        {
            return Some(HttpBody::Json(o));
        }
        return Some(HttpBody::Text(s));
    }
    None
}

/// Reads the `request` member of a record: a request body, or a
/// recorder's wrapper holding one in `body`.
pub(crate) fn unwrap_request(raw: &RawValue) -> Result<HttpRequest, String> {
    let obj = RawObject::from_json(raw.get())
        .map_err(|_| "at /request: expected a JSON object".to_owned())?;
    if obj.get("messages").is_some() || obj.get("body").is_none() {
        return Ok(HttpRequest {
            body: Some(obj),
            wrapped: false,
            url: None,
            timestamp_ms: None,
        });
    }
    let body = match obj.raw("body") {
        Some(b) => match parse_body(b) {
            Some(HttpBody::Json(o)) => Some(o),
            _ => None,
        },
        None => None,
    };
    let url = match obj.parse::<String>("url") {
        Some(Ok(u)) => Some(u),
        _ => None,
    };
    Ok(HttpRequest {
        body,
        wrapped: true,
        url,
        timestamp_ms: obj.raw("timestamp").and_then(timestamp_ms),
    })
}

/// Reads the `response` member of a record: a response body, a string
/// (JSON or server-sent events), or a recorder's wrapper with
/// `status_code` and `body` / `body_raw`.
pub(crate) fn unwrap_response(raw: &RawValue) -> HttpResponse {
    let mut out = HttpResponse {
        missing: false,
        status: None,
        body: None,
        timestamp_ms: None,
        wrapped: false,
    };
    let text = raw.get();
    if text == "null" {
        out.missing = true;
        return out;
    }
    if !text.starts_with('{') {
        out.body = parse_body(raw);
        return out;
    }
    let Some(obj) = compact_object(text) else {
        return out;
    };
    let wrapped = obj.get("status_code").is_some()
        || obj.get("body_raw").is_some()
        || (obj.get("body").is_some()
            && obj.get("content").is_none()
            && obj.get("choices").is_none());
    if !wrapped {
        out.body = Some(HttpBody::Json(obj));
        return out;
    }
    out.wrapped = true;
    out.status = match obj.parse::<u64>("status_code") {
        Some(Ok(s)) => Some(s),
        _ => None,
    };
    out.timestamp_ms = obj.raw("timestamp").and_then(timestamp_ms);
    out.body = obj
        .raw("body")
        .filter(|b| b.get() != "null")
        .and_then(parse_body)
        .or_else(|| obj.raw("body_raw").and_then(parse_body));
    out
}

/// One record read as an exchange: a request body alone, or a `request`
/// with its `response` (recorded or not).
pub(crate) struct Exchange {
    /// The request body.
    pub body: RawObject,
    /// The body's JSON pointer in the record: `""` (a bare body),
    /// `/request` or `/request/body` (a recorder's wrapper).
    pub base: &'static str,
    /// `None`: a bare request body, nothing said of a response;
    /// `Some(None)`: a pair whose response is absent.
    pub response: Option<Option<Box<RawValue>>>,
    /// The request URL, when a wrapper recorded it.
    pub url: Option<String>,
    /// When the request started, when recorded.
    pub start_ms: Option<u64>,
}

/// Reads a record as an [`Exchange`]; `None` when its request has no JSON
/// body (counted in `un`).
pub(crate) fn exchange(obj: RawObject, un: &mut Unmapped) -> Result<Option<Exchange>, String> {
    let Some(req) = obj.raw("request") else {
        return Ok(Some(Exchange {
            body: obj,
            base: "",
            response: None,
            url: None,
            start_ms: None,
        }));
    };
    let r = unwrap_request(req)?;
    let Some(body) = r.body else {
        un.add("requests without a JSON body", 1);
        return Ok(None);
    };
    Ok(Some(Exchange {
        body,
        base: if r.wrapped {
            "/request/body"
        } else {
            "/request"
        },
        start_ms: r
            .timestamp_ms
            .or_else(|| obj.raw("timestamp").and_then(timestamp_ms)),
        response: Some(obj.raw("response").map(ToOwned::to_owned)),
        url: r.url,
    }))
}

/// The JSON body of a recorded response that succeeded, and whether a
/// recorder wrapped it; every other outcome (no response, a failure, a
/// stream the importer does not reconstruct, an unreadable body) is
/// counted in `un` as what it is, and the call kept without usage.
pub(crate) fn answered(
    response: Option<&RawValue>,
    un: &mut Unmapped,
) -> Option<(RawObject, bool)> {
    const NO_RESPONSE: &str = "exchanges without a recorded response (kept without usage)";
    const FAILED: &str = "failed exchanges (non-2xx status or error body; kept without usage)";
    let Some(raw) = response else {
        un.add(NO_RESPONSE, 1);
        return None;
    };
    let resp = unwrap_response(raw);
    let failed = resp.status.is_some_and(|s| !(200..300).contains(&s));
    match (resp.missing, failed, resp.body) {
        (true, _, _) => un.add(NO_RESPONSE, 1),
        (_, true, _) => un.add(FAILED, 1),
        (_, _, Some(HttpBody::Json(b))) if is_error_body(&b) => un.add(FAILED, 1),
        (_, _, Some(HttpBody::Json(b))) => return Some((b, resp.wrapped)),
        (_, _, Some(HttpBody::Text(_))) => un.add(
            "streamed responses (not reconstructed; kept without usage)",
            1,
        ),
        (_, _, None) => un.add(
            "responses whose body could not be read (kept without usage)",
            1,
        ),
    }
    None
}

/// Whether a response body is an API error.
pub(crate) fn is_error_body(body: &RawObject) -> bool {
    matches!(body.parse::<String>("type"), Some(Ok(t)) if t == "error")
        || body.get("error").is_some_and(|e| e.get() != "null")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_in_seconds_millis_and_rfc3339() {
        let raw = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
        assert_eq!(timestamp_ms(&raw("1700000000.25")), Some(1_700_000_000_250));
        assert_eq!(timestamp_ms(&raw("1700000000250")), Some(1_700_000_000_250));
        assert_eq!(timestamp_ms(&raw("\"1970-01-01T00:00:01Z\"")), Some(1000));
        assert_eq!(timestamp_ms(&raw("-1")), None);
    }
}

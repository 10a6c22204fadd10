//! Handles: what the ledger hands back for a recorded tool result.
//!
//! A handle is a pure function of `(tool_call_id, tool_name, content)`: the
//! same inputs give the same handle in every process, on every machine. No
//! clock, random id, hash-map order or address reaches it. Sizes are counted
//! in Unicode scalar values (Rust `char`s), not bytes or UTF-16 units.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Longest summary line, in characters.
const SUMMARY_CHARS: usize = 100;
/// Longest schema line, in characters.
const SCHEMA_CHARS: usize = 140;
/// Longest preview, in characters.
const PREVIEW_CHARS: usize = 120;
/// How many object keys a schema line names before eliding the rest.
const SCHEMA_KEYS: usize = 6;

/// A recorded tool result, described without its payload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Handle {
    /// Stable id the model passes to `recall_tool_result` (`tm_` + 16 hex).
    pub mem_id: String,
    /// Name of the tool that produced the result.
    pub tool_name: String,
    /// The tool_use id the result answered.
    pub tool_call_id: String,
    /// Payload length in Unicode scalar values.
    pub size_chars: u64,
    /// One line saying what the payload is.
    pub summary_oneliner: String,
    /// Top-level shape of a JSON payload, keys in document order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_hint: Option<String>,
    /// The first characters of the payload, whitespace collapsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head_preview: Option<String>,
}

impl Handle {
    /// Derives the handle of `content` returned by `tool_name` for call
    /// `tool_call_id`.
    pub fn derive(tool_call_id: &str, tool_name: &str, content: &str) -> Handle {
        let size_chars = content.chars().count() as u64;
        let (summary_oneliner, schema_hint, head_preview) = match parse_json_document(content) {
            Some(value) => (
                json_summary(&value),
                Some(truncate_chars(&json_shape(&value, 0), SCHEMA_CHARS)),
                non_empty(one_line(content, PREVIEW_CHARS)),
            ),
            None => text_description(content),
        };
        Handle {
            mem_id: mem_id(tool_call_id, tool_name, content),
            tool_name: tool_name.to_owned(),
            tool_call_id: tool_call_id.to_owned(),
            size_chars,
            summary_oneliner,
            schema_hint,
            head_preview,
        }
    }
}

/// `tm_` + the first 16 hex digits of SHA-256 over the length-prefixed call
/// id, tool name and content, so no two fields can run into each other.
pub fn mem_id(tool_call_id: &str, tool_name: &str, content: &str) -> String {
    let mut h = Sha256::new();
    for part in [tool_call_id, tool_name, content] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    let digest = h.finalize();
    let mut id = String::with_capacity(19);
    id.push_str("tm_");
    for b in &digest[..8] {
        id.push_str(&format!("{b:02x}"));
    }
    id
}

/// SHA-256 of `bytes` as 64 lowercase hex digits (content addresses).
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn parse_json_document(content: &str) -> Option<serde_json::Value> {
    let t = content.trim_start();
    if !(t.starts_with('{') || t.starts_with('[')) {
        return None;
    }
    serde_json::from_str(content).ok()
}

fn json_summary(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Object(m) => format!("JSON object, {} key{}", m.len(), plural(m.len())),
        serde_json::Value::Array(a) => {
            let kinds = a.first().map(kind_name).unwrap_or("item");
            let uniform = a.iter().all(|x| kind_name(x) == kinds);
            if uniform && !a.is_empty() {
                format!("JSON array of {} {}{}", a.len(), kinds, plural(a.len()))
            } else {
                format!("JSON array, {} item{}", a.len(), plural(a.len()))
            }
        }
        other => format!("JSON {}", kind_name(other)),
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

fn kind_name(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "boolean",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
    }
}

/// A compact shape: `{products: [24 × {asin, title, …}], total: number}`.
/// Object keys appear in document order (serde_json's `preserve_order`).
fn json_shape(v: &serde_json::Value, depth: usize) -> String {
    use serde_json::Value;
    match v {
        Value::Object(m) if depth >= 2 => {
            let keys: Vec<&str> = m.keys().take(SCHEMA_KEYS).map(String::as_str).collect();
            let more = if m.len() > SCHEMA_KEYS { ", …" } else { "" };
            format!("{{{}{more}}}", keys.join(", "))
        }
        Value::Object(m) => {
            let parts: Vec<String> = m
                .iter()
                .take(SCHEMA_KEYS)
                .map(|(k, v)| format!("{}: {}", one_line(k, 40), json_shape(v, depth + 1)))
                .collect();
            let more = if m.len() > SCHEMA_KEYS { ", …" } else { "" };
            format!("{{{}{more}}}", parts.join(", "))
        }
        Value::Array(a) => match a.first() {
            None => "[]".to_owned(),
            Some(first) => format!("[{} × {}]", a.len(), json_shape(first, depth + 1)),
        },
        other => kind_name(other).to_owned(),
    }
}

fn text_description(content: &str) -> (String, Option<String>, Option<String>) {
    let lines = content.lines().count();
    let mut first = "";
    let mut rest = "";
    let mut offset = 0;
    for piece in content.split_inclusive('\n') {
        offset += piece.len();
        if !piece.trim().is_empty() {
            first = piece;
            // `offset` ends on a char boundary: it follows a whole piece.
            rest = content.get(offset..).unwrap_or("");
            break;
        }
    }
    let summary = if first.is_empty() {
        format!("empty text ({lines} line{})", plural(lines))
    } else {
        format!(
            "{} line{}: {}",
            lines,
            plural(lines),
            one_line(first, SUMMARY_CHARS)
        )
    };
    (summary, None, non_empty(one_line(rest, PREVIEW_CHARS)))
}

fn non_empty(s: String) -> Option<String> {
    if s.is_empty() { None } else { Some(s) }
}

/// Collapses whitespace and control characters to single spaces and keeps at
/// most `max` characters (an ellipsis marks the cut). Never slices bytes.
pub fn one_line(s: &str, max: usize) -> String {
    let mut collapsed = String::new();
    let mut count = 0;
    let mut pending_space = false;
    for c in s.chars() {
        if c.is_whitespace() || c.is_control() {
            pending_space = !collapsed.is_empty();
            continue;
        }
        if pending_space {
            collapsed.push(' ');
            count += 1;
            pending_space = false;
        }
        collapsed.push(c);
        count += 1;
        // Stop early on huge inputs: one character past the limit is enough
        // to know an ellipsis is needed.
        if count > max {
            break;
        }
    }
    truncate_chars(&collapsed, max)
}

fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_handle_names_shape_in_document_order() {
        let h = Handle::derive(
            "toolu_1",
            "keepa",
            r#"{"zeta":[{"asin":"B1","title":"x"}],"alpha":{"n":1},"k":"v"}"#,
        );
        assert_eq!(h.summary_oneliner, "JSON object, 3 keys");
        assert_eq!(
            h.schema_hint.as_deref(),
            Some("{zeta: [1 × {asin, title}], alpha: {n: number}, k: string}")
        );
        assert!(h.mem_id.starts_with("tm_") && h.mem_id.len() == 19);
        assert_eq!(h.size_chars, 60);
    }

    #[test]
    fn text_handle_uses_first_line_and_counts_chars() {
        let h = Handle::derive("c", "bash", "\n  total 42 files\nline two\tend\n");
        assert_eq!(h.summary_oneliner, "3 lines: total 42 files");
        assert_eq!(h.head_preview.as_deref(), Some("line two end"));
        assert_eq!(h.schema_hint, None);
        let h = Handle::derive("c", "t", "héllo wörld");
        assert_eq!(h.size_chars, 11);
    }

    #[test]
    fn mem_id_depends_on_every_input_and_is_unambiguous() {
        let a = mem_id("ab", "c", "x");
        assert_ne!(a, mem_id("a", "bc", "x"));
        assert_ne!(a, mem_id("ab", "c", "y"));
        assert_eq!(a, mem_id("ab", "c", "x"));
    }

    #[test]
    fn one_line_is_bounded_and_safe_on_multibyte() {
        let s = "é".repeat(500);
        let l = one_line(&s, 10);
        assert_eq!(l.chars().count(), 10);
        assert!(l.ends_with('…'));
        assert_eq!(one_line("a \n\n b", 10), "a b");
    }
}

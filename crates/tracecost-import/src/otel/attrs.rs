//! A span's attributes as OTLP JSON writes them (`AnyValue`), made plain
//! and looked up by key: what every reader of a span's content starts
//! from (the GenAI conventions, OpenInference, the per-message events).

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use crate::common;

/// An attribute value as OTLP JSON writes it (`AnyValue`), made plain:
/// strings, integers (written as strings), doubles, booleans, and arrays
/// and key-value lists as JSON.
pub(crate) fn any_value(v: &Value) -> Option<Value> {
    let o = v.as_object()?;
    let (kind, inner) = o.iter().next()?;
    Some(match kind.as_str() {
        "stringValue" => inner.clone(),
        "intValue" => match inner {
            // Kept as written when it is no int64, so that a token count
            // reads it as malformed rather than absent.
            Value::String(s) => s.parse::<i64>().map_or_else(|_| inner.clone(), Value::from),
            n @ Value::Number(_) => n.clone(),
            _ => return None,
        },
        "doubleValue" | "boolValue" | "bytesValue" => inner.clone(),
        "arrayValue" => Value::Array(
            inner
                .get("values")
                .and_then(Value::as_array)
                .map(|vs| vs.iter().filter_map(any_value).collect())
                .unwrap_or_default(),
        ),
        "kvlistValue" => Value::Object(
            inner
                .get("values")
                .and_then(Value::as_array)
                .map(|kvs| {
                    kvs.iter()
                        .filter_map(|kv| {
                            let k = kv.get("key")?.as_str()?.to_owned();
                            Some((k, any_value(kv.get("value")?)?))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        ),
        _ => return None,
    })
}

/// An attribute value borrowed from the span where OTLP JSON holds it
/// plainly (strings, doubles, booleans: a span's content is its largest
/// strings, so they are not copied), made plain otherwise
/// ([`any_value`]).
fn any_value_ref(v: &Value) -> Option<Cow<'_, Value>> {
    let o = v.as_object()?;
    let (kind, inner) = o.iter().next()?;
    match kind.as_str() {
        "stringValue" | "doubleValue" | "boolValue" => Some(Cow::Borrowed(inner)),
        _ => any_value(v).map(Cow::Owned),
    }
}

/// A span's attributes by key, borrowed from the span.
pub(crate) struct Attrs<'a>(pub(super) HashMap<&'a str, Cow<'a, Value>>);

impl<'a> Attrs<'a> {
    pub(super) fn of(span: &'a Value) -> Attrs<'a> {
        let map = span
            .get("attributes")
            .and_then(Value::as_array)
            .map(|kvs| {
                kvs.iter()
                    .filter_map(|kv| {
                        let k = kv.get("key")?.as_str()?;
                        Some((k, any_value_ref(kv.get("value")?)?))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Attrs(map)
    }

    pub(crate) fn str(&self, key: &str) -> Option<&str> {
        self.0.get(key)?.as_str()
    }

    /// A token count ([`common::token_count`]'s rule; a malformed one is
    /// remembered in `c`).
    pub(crate) fn count(&self, key: &str, c: &mut common::Counts) -> Option<u64> {
        c.of(self.0.get(key).map(AsRef::as_ref))
    }

    /// A JSON attribute: a string holding JSON (how the conventions write
    /// structured content on spans), or a structured value.
    pub(crate) fn json(&self, key: &str) -> Option<Value> {
        match self.0.get(key)?.as_ref() {
            Value::String(s) => serde_json::from_str(s).ok(),
            v => Some(v.clone()),
        }
    }

    /// An attribute's value as read.
    pub(crate) fn raw(&self, key: &str) -> Option<&Value> {
        self.0.get(key).map(AsRef::as_ref)
    }

    pub(crate) fn keys(&self) -> impl Iterator<Item = &&'a str> {
        self.0.keys()
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }

    /// The bytes of its string values: about what the span's content
    /// takes once read, for the window's bound.
    pub(super) fn text_bytes(&self) -> usize {
        self.0
            .values()
            .filter_map(|v| v.as_str())
            .map(str::len)
            .sum()
    }
}

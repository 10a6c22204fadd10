//! JSON objects that keep their members' order and original bytes.
//!
//! Re-serializing a JSON value through `serde_json::Value` can change key
//! order, number spelling and string escapes; every such change alters token
//! counts and busts prompt caches. [`RawObject`] keeps each member's value as
//! the exact bytes it was read from, in document order, so an object that is
//! not edited serializes back to the same values byte for byte.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// A JSON object as an ordered list of `(key, raw value)` members.
///
/// Whitespace between tokens is not kept; every value's bytes are.
#[derive(Clone, Default)]
pub struct RawObject {
    members: Vec<(Box<str>, Box<RawValue>)>,
}

impl fmt::Debug for RawObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

impl PartialEq for RawObject {
    fn eq(&self, other: &Self) -> bool {
        self.members.len() == other.members.len()
            && self
                .members
                .iter()
                .zip(&other.members)
                .all(|((ka, va), (kb, vb))| ka == kb && va.get() == vb.get())
    }
}

impl Eq for RawObject {}

impl RawObject {
    /// An object with no members.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `json`, which must be a JSON object.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(json)
    }

    /// The raw bytes of member `key`, if present (first occurrence).
    pub fn get(&self, key: &str) -> Option<&RawValue> {
        self.members
            .iter()
            .find(|(k, _)| &**k == key)
            .map(|(_, v)| &**v)
    }

    /// Parses member `key` as `T`; `None` when absent, `Err` when mistyped.
    pub fn parse<'a, T: Deserialize<'a>>(
        &'a self,
        key: &str,
    ) -> Option<Result<T, serde_json::Error>> {
        self.get(key).map(|raw| serde_json::from_str(raw.get()))
    }

    /// Replaces member `key` in place, or appends it when absent.
    pub fn set(&mut self, key: &str, value: Box<RawValue>) {
        match self.members.iter_mut().find(|(k, _)| &**k == key) {
            Some((_, v)) => *v = value,
            None => self.members.push((key.into(), value)),
        }
    }

    /// Removes member `key`; returns whether it was present.
    pub fn remove(&mut self, key: &str) -> bool {
        let before = self.members.len();
        self.members.retain(|(k, _)| &**k != key);
        before != self.members.len()
    }

    /// Members in document order.
    pub fn members(&self) -> impl ExactSizeIterator<Item = (&str, &RawValue)> {
        self.members.iter().map(|(k, v)| (&**k, &**v))
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// Whether the object has no members.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Writes the object compactly: `{"k":<raw>,...}`.
    pub fn write_json(&self, out: &mut String) {
        self.write_json_with(out, None);
    }

    /// Writes the object, appending one extra member after the others
    /// (used to add `cache_control` to a block on the wire).
    pub fn write_json_with(&self, out: &mut String, extra: Option<(&str, &str)>) {
        out.push('{');
        let mut first = true;
        let extra_iter = extra.into_iter();
        for (k, v) in self
            .members
            .iter()
            .map(|(k, v)| (&**k, v.get()))
            .chain(extra_iter)
        {
            if !first {
                out.push(',');
            }
            first = false;
            push_json_string(out, k);
            out.push(':');
            out.push_str(v);
        }
        out.push('}');
    }

    /// The compact JSON text of the object.
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        self.write_json(&mut s);
        s
    }
}

/// serde_json's error message without its " at line L column C" suffix
/// (callers report the position in their own format), on one line and at
/// most 400 characters: serde_json quotes keys and values from the input,
/// which may hold newlines or be huge.
pub fn error_message(e: &serde_json::Error) -> String {
    let s = e.to_string();
    let s = match s.rfind(" at line ") {
        Some(i) => s.get(..i).unwrap_or(&s),
        None => &s,
    };
    super::handle::one_line(s, 400)
}

/// Parses `text` as a [`serde_json::Value`], refusing any object that has
/// the same key twice. JSON leaves duplicate keys undefined and serde_json
/// keeps the last silently; in a price table that would be a price quietly
/// overridden. One pass: the check is made while the value is built, and
/// the error is serde_json's, with the line and column of the second key.
pub fn parse_unique_keys(text: &str) -> Result<serde_json::Value, serde_json::Error> {
    serde_json::from_str::<UniqueKeys>(text).map(|u| u.0)
}

/// The message for a key found twice in one object.
fn repeated_key(key: &str) -> String {
    let shown = super::handle::one_line(key, 80);
    format!("the key {shown:?} appears twice in one object")
}

/// A JSON value whose objects have no repeated key.
struct UniqueKeys(serde_json::Value);

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(UniqueKeysVisitor)
    }
}

struct UniqueKeysVisitor;

impl<'de> Visitor<'de> for UniqueKeysVisitor {
    type Value = UniqueKeys;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<UniqueKeys, E> {
        // JSON numbers are finite, so this is never `Null`.
        Ok(UniqueKeys(v.into()))
    }
    fn visit_str<E>(self, v: &str) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }
    fn visit_string<E>(self, v: String) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(v.into()))
    }
    fn visit_unit<E>(self) -> Result<UniqueKeys, E> {
        Ok(UniqueKeys(serde_json::Value::Null))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<UniqueKeys, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(UniqueKeys(serde_json::Value::Array(items)))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<UniqueKeys, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(serde::de::Error::custom(repeated_key(&key)));
            }
            let UniqueKeys(v) = map.next_value()?;
            object.insert(key, v);
        }
        Ok(UniqueKeys(serde_json::Value::Object(object)))
    }
}

/// Appends `s` as a JSON string literal (serde_json's escaping rules).
pub fn push_json_string(out: &mut String, s: &str) {
    // serde_json never fails to serialize a &str.
    match serde_json::to_string(s) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}

/// A raw JSON string literal holding `s`.
pub fn raw_string(s: &str) -> Box<RawValue> {
    let mut quoted = String::with_capacity(s.len() + 2);
    push_json_string(&mut quoted, s);
    raw_json(quoted)
}

/// Wraps text already known to be valid JSON (public because the trace
/// importers and policies build messages from JSON they wrote themselves).
/// Text that is not valid JSON becomes `null` rather than a panic.
pub fn raw_json(json: String) -> Box<RawValue> {
    // Callers only pass JSON they produced themselves; fall back to null
    // rather than panic if that ever stops holding.
    RawValue::from_string(json).unwrap_or_else(|_| null_raw())
}

fn null_raw() -> Box<RawValue> {
    RawValue::from_string("null".to_owned()).unwrap_or_else(|_| unreachable_null())
}

#[cold]
fn unreachable_null() -> Box<RawValue> {
    // "null" is valid JSON; this path exists only to avoid a panic site.
    serde_json::from_str("null").unwrap_or_else(|_| std::process::abort())
}

impl Serialize for RawObject {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.members.len()))?;
        for (k, v) in &self.members {
            map.serialize_entry(&**k, &**v)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ObjVisitor;
        impl<'de> Visitor<'de> for ObjVisitor {
            type Value = RawObject;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawObject, A::Error> {
                let mut members: Vec<(Box<str>, Box<RawValue>)> =
                    Vec::with_capacity(map.size_hint().unwrap_or(4));
                // A key twice is refused: which one would count is
                // undefined in JSON, and a raw object writes back every
                // member it holds, so a repeated `content` would come back
                // as something else. Small objects are scanned; large ones
                // get a set.
                let mut seen: Option<std::collections::HashSet<Box<str>>> = None;
                while let Some(key) = map.next_key::<String>()? {
                    let repeated = match &mut seen {
                        Some(set) => !set.insert(key.clone().into_boxed_str()),
                        None => members.iter().any(|(k, _)| **k == *key),
                    };
                    if repeated {
                        return Err(serde::de::Error::custom(repeated_key(&key)));
                    }
                    if seen.is_none() && members.len() >= 32 {
                        seen = Some(
                            members
                                .iter()
                                .map(|(k, _)| k.clone())
                                .chain([key.clone().into_boxed_str()])
                                .collect(),
                        );
                    }
                    let value: Box<RawValue> = map.next_value()?;
                    members.push((key.into_boxed_str(), value));
                }
                Ok(RawObject { members })
            }
        }
        deserializer.deserialize_map(ObjVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_member_order_and_value_bytes() {
        let src = r#"{"z":1.0,"a":{"y":"\u00e9","b":[1, 2]},"m":1e3}"#;
        let obj = RawObject::from_json(src).unwrap();
        let keys: Vec<_> = obj.members().map(|(k, _)| k).collect();
        assert_eq!(keys, ["z", "a", "m"]);
        assert_eq!(obj.get("a").unwrap().get(), r#"{"y":"\u00e9","b":[1, 2]}"#);
        assert_eq!(obj.to_json(), src);
    }

    #[test]
    fn a_repeated_key_is_refused_in_small_and_large_objects() {
        let e = RawObject::from_json(r#"{"role":"user","content":"a","content":[]}"#).unwrap_err();
        assert!(
            e.to_string().contains("the key \"content\" appears twice"),
            "{e}"
        );
        let mut many: Vec<String> = (0..100).map(|i| format!("\"k{i}\":{i}")).collect();
        assert!(RawObject::from_json(&format!("{{{}}}", many.join(","))).is_ok());
        many.push("\"k7\":0".into());
        assert!(RawObject::from_json(&format!("{{{}}}", many.join(","))).is_err());
        // Nested values are raw bytes, not checked here.
        assert!(RawObject::from_json(r#"{"input":{"a":1,"a":2}}"#).is_ok());
    }

    #[test]
    fn set_replaces_in_place_and_appends() {
        let mut obj = RawObject::from_json(r#"{"a":1,"b":2}"#).unwrap();
        obj.set("a", raw_string("x"));
        obj.set("c", raw_string("y"));
        assert_eq!(obj.to_json(), r#"{"a":"x","b":2,"c":"y"}"#);
        assert!(obj.remove("b"));
        assert!(!obj.remove("b"));
        let mut s = String::new();
        obj.write_json_with(&mut s, Some(("cache_control", r#"{"type":"ephemeral"}"#)));
        assert_eq!(
            s,
            r#"{"a":"x","c":"y","cache_control":{"type":"ephemeral"}}"#
        );
    }

    #[test]
    fn rejects_non_objects() {
        assert!(RawObject::from_json("[1]").is_err());
    }

    #[test]
    fn raw_json_keeps_valid_text_and_turns_invalid_text_into_null() {
        assert_eq!(
            raw_json(r#"{"a": [1, 2]}"#.to_owned()).get(),
            r#"{"a": [1, 2]}"#
        );
        assert_eq!(raw_json("{oops".to_owned()).get(), "null");
    }
}

#[cfg(test)]
mod unique_keys {
    use super::parse_unique_keys;

    #[test]
    fn a_repeated_key_is_found_at_any_depth_with_its_place() {
        assert!(parse_unique_keys(r#"{"a":1,"b":{"a":2},"c":[{"a":1},{"a":2}]}"#).is_ok());
        let e = parse_unique_keys("{\"m\":{\n\"x\":1,\n\"x\":2}}").unwrap_err();
        assert_eq!(e.line(), 3);
        assert!(e.to_string().contains("the key \"x\" appears twice"), "{e}");
        // Escaped and plain spellings of one key are the same key.
        assert!(parse_unique_keys(r#"{"x":1,"\u0078":2}"#).is_err());
        // Syntax errors still come through.
        assert!(parse_unique_keys("{").is_err());
    }
}

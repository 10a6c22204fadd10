//! JSON objects that keep their members' order and original bytes.
//!
//! Re-serializing a JSON value through `serde_json::Value` can change key
//! order, number spelling and string escapes; every such change alters token
//! counts and busts prompt caches. [`RawObject`] keeps each member's value as
//! the exact bytes it was read from, in document order, so an object that is
//! not edited serializes back to the same values byte for byte.
//!
//! A long string member whose bytes are exactly what the canonical encoder
//! writes for its text (see [`push_json_string`]) can instead be kept as the
//! text alone ([`RawObject::share_string`]): its bytes are derived from the
//! text when written, so the text a block exposes and the bytes it writes
//! are one allocation, not two.
//!
//! A long trace is millions of small objects, so each member is kept
//! small: its key is interned ([`key`]), and a value of a few common
//! spellings (`"user"`, `"text"`, `[]`, `true`, ...) is one shared copy
//! rather than an allocation of its own.

mod key;
mod slot;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, LazyLock, Mutex};

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use key::MemberKey;
pub use slot::MemberValue;
use slot::{HeldValue, Slot};

/// A JSON object as an ordered list of `(key, raw value)` members.
///
/// Whitespace between tokens is not kept; every value's bytes are.
#[derive(Clone, Default)]
pub struct RawObject {
    /// Exactly as long as the members (objects are rarely edited after
    /// they are read, and a long trace holds millions of them); shared
    /// between copies until one is edited, and between the objects of one
    /// common shape ([`RawObject::share_common_shape`]).
    members: Members,
}

/// An object's members, in document order, shared until edited.
type Members = Arc<[Slot]>;

/// Objects made only of known keys and common values, by their JSON: a
/// message whose blocks are parsed is `{"role":"user","content":[]}` or
/// the like, so every such message shares one list. Bounded, like the
/// keys: past it an object keeps its own list.
static SHAPES: Mutex<BTreeMap<String, Members>> = Mutex::new(BTreeMap::new());
/// How many shapes are shared, at most (in each of [`SHAPES`] and
/// [`HOLEY_SHAPES`]).
const MAX_SHAPES: usize = 256;
/// The same for objects with holes ([`RawObject::detach_texts`]), a
/// table of their own so that the shapes of messages and of blocks do not
/// crowd each other out.
static HOLEY_SHAPES: Mutex<BTreeMap<String, Members>> = Mutex::new(BTreeMap::new());
/// Objects with more members are not looked up.
const MAX_SHAPE_MEMBERS: usize = 4;

/// A shared text at least this long has its read bytes dropped before
/// the text is copied into its `Arc` ([`RawObject::share_string`]).
const LONG_TEXT: usize = 1 << 20;

/// Values that recur in every message and block of a trace: its roles,
/// its block types, an empty list (what a message's `content` member
/// holds once its blocks are parsed), the literals.
const COMMON_JSON: &[&str] = &[
    "\"user\"",
    "\"assistant\"",
    "\"text\"",
    "\"tool_use\"",
    "\"tool_result\"",
    "\"thinking\"",
    "\"redacted_thinking\"",
    "\"image\"",
    "\"document\"",
    "\"base64\"",
    "\"ephemeral\"",
    "{\"type\":\"ephemeral\"}",
    "\"\"",
    "[]",
    "{}",
    "true",
    "false",
    "null",
];

/// [`COMMON_JSON`] as raw values borrowed from the program's text.
static COMMON: LazyLock<Vec<&'static RawValue>> = LazyLock::new(|| {
    COMMON_JSON
        .iter()
        .filter_map(|j| serde_json::from_str(j).ok())
        .collect()
});

/// The longest of [`COMMON_JSON`]: longer bytes are not looked up.
const COMMON_MAX_LEN: usize = 20;

/// The shared copy of `json`, when it is one of [`COMMON_JSON`].
fn common(json: &str) -> Option<&'static RawValue> {
    if json.len() > COMMON_MAX_LEN {
        return None;
    }
    COMMON.iter().copied().find(|c| c.get() == json)
}

/// A member holding `raw`, shared when it is a common value.
fn member_from_raw(raw: Box<RawValue>) -> HeldValue {
    match common(raw.get()) {
        Some(c) => HeldValue::Common(c),
        None => HeldValue::Raw(raw),
    }
}

impl<'a> MemberValue<'a> {
    /// Appends the value's JSON bytes to `out`.
    pub fn write_json(self, out: &mut String) {
        match self {
            MemberValue::Raw(r) => out.push_str(r.get()),
            MemberValue::Text(t) => push_json_string(out, t),
        }
    }

    /// Whether the JSON bytes equal `json` (a text is encoded only when
    /// the lengths allow equality).
    fn json_eq(self, json: &str) -> bool {
        match self {
            MemberValue::Raw(r) => r.get() == json,
            MemberValue::Text(t) => json_string_eq(t, json),
        }
    }
}

impl fmt::Debug for RawObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

impl PartialEq for RawObject {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.members, &other.members)
            || self.members.len() == other.members.len()
                && self.members.iter().zip(other.members.iter()).all(|(a, b)| {
                    a.key() == b.key()
                        && a.is_hole() == b.is_hole()
                        && (a.is_hole()
                            || match (a.value(), b.value()) {
                                // Canonical encoding is one-to-one: equal texts,
                                // equal bytes.
                                (MemberValue::Text(a), MemberValue::Text(b)) => a == b,
                                (MemberValue::Raw(a), b) | (b, MemberValue::Raw(a)) => {
                                    b.json_eq(a.get())
                                }
                            })
                })
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

    fn member(&self, key: &str) -> Option<&Slot> {
        self.members.iter().find(|m| m.key() == key)
    }

    /// The raw bytes of member `key`, if present (first occurrence).
    ///
    /// A member held as text (see [`RawObject::share_string`]) is encoded
    /// on each call: prefer [`RawObject::value`] for those, which lends the
    /// text.
    pub fn get(&self, key: &str) -> Option<Cow<'_, RawValue>> {
        self.member(key).map(|m| match m.value() {
            MemberValue::Raw(r) => Cow::Borrowed(r),
            MemberValue::Text(t) => Cow::Owned(raw_string(t)),
        })
    }

    /// The bytes of member `key` as held: `None` when absent, and also for
    /// a member held as text ([`RawObject::share_string`],
    /// [`RawObject::set_text`]), which has no bytes to lend. Every member
    /// of an object as parsed (or built with [`RawObject::set`]) is held
    /// as bytes; for the members a block or a message shares with its typed
    /// view, use [`RawObject::get`] or [`RawObject::value`].
    pub fn raw(&self, key: &str) -> Option<&RawValue> {
        match self.member(key)?.value() {
            MemberValue::Raw(r) => Some(r),
            MemberValue::Text(_) => None,
        }
    }

    /// Member `key`'s value as held, if present (first occurrence).
    pub fn value(&self, key: &str) -> Option<MemberValue<'_>> {
        self.member(key).map(Slot::value)
    }

    /// Parses member `key` as `T`; `None` when absent, `Err` when mistyped.
    pub fn parse<'a, T: Deserialize<'a>>(
        &'a self,
        key: &str,
    ) -> Option<Result<T, serde_json::Error>> {
        self.value(key).map(|v| match v {
            MemberValue::Raw(raw) => serde_json::from_str(raw.get()),
            MemberValue::Text(t) => T::deserialize(TextDeserializer(t)),
        })
    }

    /// Member `key` as a string borrowed from the object when its bytes
    /// have no escape (or it is held as text), decoded otherwise; `None`
    /// when absent, `Err` when not a string.
    pub fn str_value(&self, key: &str) -> Option<Result<Cow<'_, str>, serde_json::Error>> {
        self.value(key).map(|v| match v {
            MemberValue::Text(t) => Ok(Cow::Borrowed(t)),
            MemberValue::Raw(raw) => match serde_json::from_str::<&str>(raw.get()) {
                Ok(s) => Ok(Cow::Borrowed(s)),
                Err(_) => serde_json::from_str::<String>(raw.get()).map(Cow::Owned),
            },
        })
    }

    /// Replaces member `key` in place, or appends it when absent.
    pub fn set(&mut self, key: &str, value: Box<RawValue>) {
        self.put(key, member_from_raw(value));
    }

    /// Sets member `key` to the JSON string of `text` (canonical escaping),
    /// sharing the text instead of holding its encoded bytes.
    pub fn set_text(&mut self, key: &str, text: Arc<str>) {
        self.put(key, HeldValue::Text(text));
    }

    fn put(&mut self, key: &str, value: HeldValue) {
        match self.members.iter().position(|m| m.key() == key) {
            Some(i) => {
                if let Some(m) = Arc::make_mut(&mut self.members).get_mut(i) {
                    m.set_value(value);
                }
            }
            None => {
                let mut members = self.members.to_vec();
                members.push(Slot::new(MemberKey::new(key), value));
                self.members = members.into();
            }
        }
    }

    /// Shares the member list with every other object of the same JSON
    /// when all its keys are interned and all its values common (see
    /// [`SHAPES`]); otherwise leaves it as it is. Nothing observable
    /// changes: an edit copies the list first.
    pub(crate) fn share_common_shape(&mut self) {
        let common_only =
            self.members.len() <= MAX_SHAPE_MEMBERS && self.members.iter().all(Slot::is_common);
        if !common_only {
            return;
        }
        let shape = self.to_json();
        // A poisoned lock (a panic elsewhere) only means no sharing.
        let Ok(mut shapes) = SHAPES.lock() else {
            return;
        };
        match shapes.get(&shape) {
            Some(shared) => self.members = shared.clone(),
            None if shapes.len() < MAX_SHAPES => {
                shapes.insert(shape, self.members.clone());
            }
            None => {}
        }
    }

    /// Member `key` as a string: `None` when absent, `Err` when not a
    /// string. When the member's bytes are the canonical encoding of its
    /// text (the usual case), the member is changed to hold the returned
    /// text instead, so the bytes and the text are kept once; otherwise
    /// (e.g. `\u00e9` or `\/` escapes) the bytes stay as read.
    pub fn share_string(&mut self, key: &str) -> Option<Result<Arc<str>, serde_json::Error>> {
        let i = self.members.iter().position(|m| m.key() == key)?;
        // Objects are shared only when no member is a string to share;
        // `make_mut` copies the list otherwise.
        let member = Arc::make_mut(&mut self.members).get_mut(i)?;
        if let Some(t) = member.text() {
            return Some(Ok(t.clone()));
        }
        let raw: &RawValue = match member.value() {
            MemberValue::Raw(raw) => raw,
            // A text is returned above.
            MemberValue::Text(t) => return Some(Ok(t.into())),
        };
        let text: Arc<str> = match unescape_canonical(raw.get()) {
            Some(text) => {
                if text.len() >= LONG_TEXT {
                    // The bytes read are not needed any more: let them go
                    // before the text is copied into its `Arc`, so a huge
                    // string is held twice at most, never three times.
                    member.set_value(HeldValue::Raw(null_raw()));
                }
                let text: Arc<str> = text.into();
                member.set_value(HeldValue::Text(text.clone()));
                text
            }
            None => match serde_json::from_str::<String>(raw.get()) {
                Ok(s) => s.into(),
                Err(e) => return Some(Err(e)),
            },
        };
        Some(Ok(text))
    }

    /// Removes member `key`; returns whether it was present.
    pub fn remove(&mut self, key: &str) -> bool {
        let before = self.members.len();
        if self.members.iter().any(|m| m.key() == key) {
            let mut members = self.members.to_vec();
            members.retain(|m| m.key() != key);
            self.members = members.into();
        }
        before != self.members.len()
    }

    /// Members in document order.
    pub fn members(&self) -> impl ExactSizeIterator<Item = (&str, MemberValue<'_>)> {
        self.members.iter().map(|m| (m.key(), m.value()))
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
        self.write_json_filled(out, extra, &|_| None);
    }

    /// [`Self::write_json_with`] for an object with holes, each written
    /// as the JSON string of `fill(key)` (`null` where it gives none).
    pub(crate) fn write_json_filled<'f>(
        &self,
        out: &mut String,
        extra: Option<(&str, &str)>,
        fill: &dyn Fn(&str) -> Option<&'f str>,
    ) {
        out.push('{');
        for (i, m) in self.members.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_json_string(out, m.key());
            out.push(':');
            if m.is_hole() {
                match fill(m.key()) {
                    Some(t) => push_json_string(out, t),
                    None => out.push_str("null"),
                }
            } else {
                m.value().write_json(out);
            }
        }
        if let Some((k, v)) = extra {
            if !self.members.is_empty() {
                out.push(',');
            }
            push_json_string(out, k);
            out.push(':');
            out.push_str(v);
        }
        out.push('}');
    }

    /// About the length of the compact JSON text (exact for raw members;
    /// escapes in a shared text add a little), so that a long block is
    /// written into one allocation instead of a run of doublings.
    pub fn json_len_hint(&self) -> usize {
        self.json_len_hint_filled(&|_| None)
    }

    /// [`Self::json_len_hint`] of an object with holes filled by `fill`.
    pub(crate) fn json_len_hint_filled<'f>(&self, fill: &dyn Fn(&str) -> Option<&'f str>) -> usize {
        let text = |t: &str| t.len() + t.len() / 16 + 2;
        let members: usize = self
            .members
            .iter()
            .map(|m| {
                m.key().len()
                    + 4
                    + if m.is_hole() {
                        fill(m.key()).map_or(4, text)
                    } else {
                        match m.value() {
                            MemberValue::Raw(r) => r.get().len(),
                            MemberValue::Text(t) => text(t),
                        }
                    }
            })
            .sum();
        members + 2
    }

    /// Whether some member's text is held by the object's owner
    /// ([`Self::detach_texts`]).
    pub(crate) fn has_holes(&self) -> bool {
        self.members.iter().any(Slot::is_hole)
    }

    /// The object with its holes filled: each member held as the text
    /// `fill(key)` gives (`null` where it gives none).
    pub(crate) fn filled(&self, fill: &dyn Fn(&str) -> Option<Arc<str>>) -> RawObject {
        let members: Vec<Slot> = self
            .members
            .iter()
            .map(|m| {
                let Some(i) = m.index().filter(|_| m.is_hole()) else {
                    return m.clone();
                };
                let value = match fill(m.key()) {
                    Some(t) => HeldValue::Text(t),
                    None => HeldValue::Raw(null_raw()),
                };
                let mut slot = Slot::Hole(i);
                slot.set_value(value);
                slot
            })
            .collect();
        RawObject {
            members: members.into(),
        }
    }

    /// Turns the members whose text the owner holds (`owned(key, text)`:
    /// the very allocation, not an equal one) into holes, and shares the
    /// member list with every other object of the same shape, when the
    /// rest are common values (see [`HOLEY_SHAPES`]). A block of a long trace is
    /// then its typed view alone: its ids and texts, which the view holds
    /// anyway, are not held a second time in a list of its own. Otherwise
    /// (a member of its own bytes, an unknown key, a shape past the bound)
    /// the object is left as it is.
    pub(crate) fn detach_texts(&mut self, owned: &dyn Fn(&str, &Arc<str>) -> bool) {
        if self.members.len() > MAX_SHAPE_MEMBERS {
            return;
        }
        let mut shape = String::from("{");
        let mut holey = Vec::with_capacity(self.members.len());
        for m in self.members.iter() {
            let slot = match (m.index(), m.text()) {
                (Some(i), Some(t)) if owned(m.key(), t) => Slot::Hole(i),
                _ if m.is_common() => m.clone(),
                _ => return,
            };
            push_json_string(&mut shape, m.key());
            shape.push(':');
            match &slot {
                Slot::Hole(_) => shape.push('?'),
                s => s.value().write_json(&mut shape),
            }
            shape.push(',');
            holey.push(slot);
        }
        if !holey.iter().any(Slot::is_hole) {
            return;
        }
        let Ok(mut shapes) = HOLEY_SHAPES.lock() else {
            return;
        };
        match shapes.get(&shape) {
            Some(shared) => self.members = shared.clone(),
            None if shapes.len() < MAX_SHAPES => {
                let members: Members = holey.into();
                shapes.insert(shape, members.clone());
                self.members = members;
            }
            None => {}
        }
    }

    /// Whether `self` and `other` hold one member list (tests).
    #[cfg(test)]
    pub(crate) fn shares_members_with(&self, other: &RawObject) -> bool {
        Arc::ptr_eq(&self.members, &other.members)
    }

    /// How member `key` holds a text: `Some(true)` when its owner holds
    /// it (a hole), `Some(false)` when the member does, `None` when it is
    /// absent or held as bytes.
    pub(crate) fn text_held_by_owner(&self, key: &str) -> Option<bool> {
        let m = self.member(key)?;
        if m.is_hole() {
            return Some(true);
        }
        matches!(m.value(), MemberValue::Text(_)).then_some(false)
    }

    /// The compact JSON text of the object.
    pub fn to_json(&self) -> String {
        let mut s = String::with_capacity(self.json_len_hint());
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

/// Appends `s` as a JSON string literal with the canonical escaping, the
/// one serde_json's serializer writes: `"` and `\\` escaped, `\n` `\t` `\r`
/// `\b` `\f` in their short forms, the other control characters as
/// `\u00XX` with lowercase hex, everything else (non-ASCII, `/`, DEL) as is.
pub fn push_json_string(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    loop {
        // Long texts are mostly bytes that need no escape (the loaded trace
        // is written from its texts, so this runs over every payload on
        // every serialization).
        i = skip_plain(bytes, i);
        let Some(&b) = bytes.get(i) else {
            break;
        };
        let short = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\t' => "\\t",
            b'\r' => "\\r",
            0x08 => "\\b",
            0x0c => "\\f",
            0x00..=0x1f => "",
            _ => {
                i += 1;
                continue;
            }
        };
        // Escaped bytes are ASCII, so `start..i` ends on a char boundary.
        out.push_str(&s[start..i]);
        if short.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.push_str("\\u00");
            out.push(HEX[(b >> 4) as usize] as char);
            out.push(HEX[(b & 0xf) as usize] as char);
        } else {
            out.push_str(short);
        }
        i += 1;
        start = i;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// The index of the first byte from `i` on that may need escaping (a
/// control character, `"` or `\\`), skipping plain bytes eight at a time;
/// within the last eight bytes, `i` itself (the caller looks at each).
fn skip_plain(bytes: &[u8], mut i: usize) -> usize {
    while let Some(word) = bytes.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        match escape_mask(u64::from_le_bytes(w)) {
            0 => i += 8,
            // The lowest flagged byte is exact (see `escape_mask`).
            m => return i + (m.trailing_zeros() / 8) as usize,
        }
    }
    i
}

/// A mask with the high bit of each of the eight bytes of `w` (little
/// endian) that is a control character, `"` or `\\` set, and possibly of
/// some bytes above such a byte (the classic "has a byte less than n /
/// equal to c" bit tricks: a borrow only runs upwards): zero exactly when
/// no byte needs escaping, and its lowest set bit is always a true one.
fn escape_mask(w: u64) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    below_space | zero_byte(w ^ (ONES * u64::from(b'"'))) | zero_byte(w ^ (ONES * u64::from(b'\\')))
}

/// The text of `json`, a JSON string literal, when `json` is exactly the
/// canonical encoding ([`push_json_string`]) of that text; `None` for any
/// other spelling (`\\u00e9`, `\\/`, `\\u000a`, uppercase hex, …) and for
/// anything that is not a valid string literal: the caller then parses it
/// as serde_json does and keeps its bytes. One pass that decodes and
/// checks together, skipping eight plain bytes at a time: the check costs
/// nothing over the decoding serde_json would do anyway.
fn unescape_canonical(json: &str) -> Option<String> {
    let inner = json.strip_prefix('"')?.strip_suffix('"')?;
    let b = inner.as_bytes();
    let mut out = String::with_capacity(inner.len());
    let mut start = 0;
    let mut i = 0;
    loop {
        i = skip_plain(b, i);
        let Some(&byte) = b.get(i) else {
            break;
        };
        match byte {
            b'\\' => {}
            // A raw quote or control character: not a valid literal.
            b'"' | 0x00..=0x1f => return None,
            _ => {
                i += 1;
                continue;
            }
        }
        // `i` is at an ASCII byte, so on a char boundary.
        out.push_str(&inner[start..i]);
        let c = match *b.get(i + 1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'n' => '\n',
            b't' => '\t',
            b'r' => '\r',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'u' => {
                let c = match b.get(i + 2..i + 6)? {
                    [
                        b'0',
                        b'0',
                        h @ (b'0' | b'1'),
                        l @ (b'0'..=b'9' | b'a'..=b'f'),
                    ] => {
                        let hex = |d: u8| {
                            if d.is_ascii_digit() {
                                d - b'0'
                            } else {
                                d - b'a' + 10
                            }
                        };
                        char::from(hex(*h) << 4 | hex(*l))
                    }
                    _ => return None,
                };
                // Those with a short form are written short.
                if matches!(c, '\u{8}' | '\t' | '\n' | '\u{c}' | '\r') {
                    return None;
                }
                out.push(c);
                i += 6;
                start = i;
                continue;
            }
            _ => return None,
        };
        out.push(c);
        i += 2;
        start = i;
    }
    out.push_str(&inner[start..]);
    Some(out)
}

/// Whether `json` is the canonical encoding of `text` (used to compare a
/// shared member with a raw one; rare, so it simply encodes and compares).
fn json_string_eq(text: &str, json: &str) -> bool {
    // Cheap length bounds first: the encoding is 2 bytes longer than the
    // text at least, 6 bytes per byte at most.
    if json.len() < text.len() + 2 || json.len() > 6 * text.len() + 2 {
        return false;
    }
    let mut quoted = String::with_capacity(json.len());
    push_json_string(&mut quoted, text);
    quoted == json
}

/// Deserializes a shared string member as serde_json would its JSON
/// string: a string (borrowed), `Some` of it for an option, a unit enum
/// variant by name; any other type is an "invalid type" error.
struct TextDeserializer<'a>(&'a str);

impl<'de> Deserializer<'de> for TextDeserializer<'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        v.visit_borrowed_str(self.0)
    }
    fn deserialize_option<V: Visitor<'de>>(self, v: V) -> Result<V::Value, Self::Error> {
        v.visit_some(self)
    }
    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        v: V,
    ) -> Result<V::Value, Self::Error> {
        v.visit_newtype_struct(self)
    }
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        v: V,
    ) -> Result<V::Value, Self::Error> {
        v.visit_enum(serde::de::value::BorrowedStrDeserializer::new(self.0))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
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
        for m in self.members.iter() {
            match m.value() {
                MemberValue::Raw(r) => map.serialize_entry(m.key(), r)?,
                // serde_json's serializer writes a str with the canonical
                // escaping, the bytes this member stands for.
                MemberValue::Text(t) => map.serialize_entry(m.key(), t)?,
            }
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
                let mut members: Vec<Slot> = Vec::with_capacity(map.size_hint().unwrap_or(4));
                // A key twice is refused: which one would count is
                // undefined in JSON, and a raw object writes back every
                // member it holds, so a repeated `content` would come back
                // as something else. Small objects are scanned; large ones
                // get a set.
                let mut seen: Option<std::collections::HashSet<MemberKey>> = None;
                while let Some(key) = map.next_key::<MemberKey>()? {
                    let repeated = match &mut seen {
                        Some(set) => !set.insert(key.clone()),
                        None => members.iter().any(|m| m.has_key(&key)),
                    };
                    if repeated {
                        return Err(serde::de::Error::custom(repeated_key(key.as_str())));
                    }
                    if seen.is_none() && members.len() >= 32 {
                        seen = Some(
                            members
                                .iter()
                                .map(Slot::member_key)
                                .chain([key.clone()])
                                .collect(),
                        );
                    }
                    let value: Box<RawValue> = map.next_value()?;
                    members.push(Slot::new(key, member_from_raw(value)));
                }
                Ok(RawObject {
                    members: members.into(),
                })
            }
        }
        deserializer.deserialize_map(ObjVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_member_is_24_bytes() {
        // A long trace holds millions of members: the key's index rides
        // beside the value's tag (a wider member grows every loaded
        // trace).
        assert_eq!(std::mem::size_of::<Slot>(), 24);
    }

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
    fn a_key_outside_the_table_reads_edits_and_writes_as_any_other() {
        // Longer than a learned key may be: held with its value out of
        // line, every operation behaves as for an interned key.
        let long = "k".repeat(key::MAX_LEARNED_LEN + 1);
        let src = format!(r#"{{"type":"text","{long}":"v","{long}x":[1, 2]}}"#);
        let mut obj = RawObject::from_json(&src).unwrap();
        assert!(!obj.members[1].has_key(&MemberKey::new("type")));
        assert!(obj.members[1].has_key(&MemberKey::new(&long)));
        assert_eq!(obj.get(&long).unwrap().get(), r#""v""#);
        assert_eq!(obj.raw(&format!("{long}x")).unwrap().get(), "[1, 2]");
        assert_eq!(&*obj.share_string(&long).unwrap().unwrap(), "v");
        assert!(matches!(obj.value(&long), Some(MemberValue::Text("v"))));
        assert_eq!(
            obj.to_json(),
            format!(r#"{{"type":"text","{long}":"v","{long}x":[1, 2]}}"#)
        );
        obj.set(&long, raw_string("w"));
        obj.set_text(&format!("{long}x"), Arc::from("t"));
        assert_eq!(
            obj.to_json(),
            format!(r#"{{"type":"text","{long}":"w","{long}x":"t"}}"#)
        );
        assert!(obj.remove(&long));
        assert_eq!(obj.to_json(), format!(r#"{{"type":"text","{long}x":"t"}}"#));
        let twice = format!(r#"{{"{long}":1,"{long}":2}}"#);
        assert!(RawObject::from_json(&twice).is_err());
    }

    #[test]
    fn push_json_string_writes_what_serde_json_writes() {
        let mut all: String = (0u8..=0x7f).map(char::from).collect();
        all.push_str("é€\u{2028}😀/");
        for s in [all.as_str(), "", "plain", "\"", "a\\b\n"] {
            let mut out = String::new();
            push_json_string(&mut out, s);
            assert_eq!(out, serde_json::to_string(s).unwrap());
        }
        // Every byte at every place of an eight-byte word, among others.
        for c in (0u8..=0x7f).map(char::from).chain(['é', '😀']) {
            for at in 0..20 {
                let s = format!("{}{c}{}", "a".repeat(at), "xy/".repeat(7));
                let mut out = String::new();
                push_json_string(&mut out, &s);
                assert_eq!(out, serde_json::to_string(&s).unwrap(), "{s:?}");
            }
        }
        // Two in one word: a borrow may flag bytes above a true one.
        let odd = [
            '\0', '\u{1}', '\u{1f}', ' ', '!', '"', '#', '\\', ']', 'é', '\u{7f}',
        ];
        for a in odd {
            for b in odd {
                for gap in 0..9 {
                    let s = format!("ab{a}{}{b}cdefghij", "-".repeat(gap));
                    let mut out = String::new();
                    push_json_string(&mut out, &s);
                    assert_eq!(out, serde_json::to_string(&s).unwrap(), "{s:?}");
                    assert_eq!(unescape_canonical(&out).as_deref(), Some(s.as_str()));
                }
            }
        }
    }

    #[test]
    fn canonical_strings_are_told_from_other_spellings() {
        for yes in [
            r#""""#,
            r#""a \"b\" \\ \n\t\r\b\f""#,
            r#""\u0000\u001f\u000b\u0019 é 😀 /""#,
        ] {
            let want: String = serde_json::from_str(yes).unwrap();
            assert_eq!(unescape_canonical(yes), Some(want), "{yes}");
        }
        for no in [
            r#""caf\u00e9""#,
            r#""a\/b""#,
            r#""\ud83d\ude00""#,
            r#""\u000a""#,
            r#""\u0008""#,
            r#""\u001F""#,
            r#""\u0020""#,
            r#""\u0022""#,
            r#""x\"#,
            r#""a"b""#,
            "\"a\u{1}b\"",
            "\"a\nbcdefghijkl\"",
            "1",
        ] {
            assert_eq!(unescape_canonical(no), None, "{no}");
        }
    }

    #[test]
    fn a_shared_string_reads_writes_and_compares_as_its_bytes() {
        let src = r#"{"type":"text","text":"a\"b\n","n":1}"#;
        let mut obj = RawObject::from_json(src).unwrap();
        let plain = obj.clone();
        assert_eq!(&*obj.share_string("text").unwrap().unwrap(), "a\"b\n");
        assert!(matches!(
            obj.value("text"),
            Some(MemberValue::Text("a\"b\n"))
        ));
        assert_eq!(obj.to_json(), src);
        assert_eq!(serde_json::to_string(&obj).unwrap(), src);
        assert_eq!(obj, plain);
        assert_eq!(plain, obj);
        assert_eq!(obj.parse::<String>("text").unwrap().unwrap(), "a\"b\n");
        assert_eq!(
            obj.parse::<Option<&str>>("text").unwrap().unwrap(),
            Some("a\"b\n")
        );
        assert!(obj.parse::<u64>("text").unwrap().is_err());
        assert_eq!(obj.get("text").unwrap().get(), r#""a\"b\n""#);
        // A non-canonical spelling stays raw; a non-string is an error.
        let mut obj = RawObject::from_json(r#"{"t":"caf\u00e9","n":1}"#).unwrap();
        assert_eq!(&*obj.share_string("t").unwrap().unwrap(), "café");
        assert!(matches!(obj.value("t"), Some(MemberValue::Raw(_))));
        assert!(obj.share_string("n").unwrap().is_err());
        assert!(obj.share_string("missing").is_none());
    }

    #[test]
    fn objects_of_common_values_share_one_list_until_edited() {
        let read = |j: &str| {
            let mut o = RawObject::from_json(j).unwrap();
            o.share_common_shape();
            o
        };
        let a = read(r#"{"role":"user","content":[]}"#);
        let b = read(r#"{"role":"user","content":[]}"#);
        assert!(Arc::ptr_eq(&a.members, &b.members));
        assert_eq!(a, b);
        let mut c = b.clone();
        c.set("content", raw_string("x"));
        assert_eq!(c.to_json(), r#"{"role":"user","content":"x"}"#);
        assert_eq!(b.to_json(), r#"{"role":"user","content":[]}"#);
        // Not shared: a value of its own, or a key spelled otherwise.
        let d = read(r#"{"role":"user","content":"hi"}"#);
        assert!(!Arc::ptr_eq(
            &d.members,
            &read(r#"{"role":"user","content":"hi"}"#).members
        ));
        let e = read(r#"{"role":"user","content":[ ]}"#);
        assert_eq!(e.to_json(), r#"{"role":"user","content":[ ]}"#);
        assert!(!Arc::ptr_eq(&e.members, &a.members));
    }

    #[test]
    fn the_shared_shapes_are_bounded() {
        // More one-member shapes than the table holds.
        for k in ["type", "content", "role", "text", "id", "name", "input"] {
            for v in COMMON_JSON {
                let mut o = RawObject::from_json(&format!("{{\"{k}\":{v}}}")).unwrap();
                o.share_common_shape();
                assert_eq!(o.to_json(), format!("{{\"{k}\":{v}}}"));
            }
        }
        for v in COMMON_JSON {
            for w in COMMON_JSON {
                let json = format!("{{\"type\":{v},\"id\":{w}}}");
                let mut o = RawObject::from_json(&json).unwrap();
                o.share_common_shape();
                assert_eq!(o.to_json(), json);
            }
        }
        assert_eq!(SHAPES.lock().unwrap().len(), MAX_SHAPES);
    }

    #[test]
    fn common_values_are_shared_and_read_back() {
        assert_eq!(COMMON.len(), COMMON_JSON.len());
        assert!(COMMON_JSON.iter().all(|j| j.len() <= COMMON_MAX_LEN));
        let obj = RawObject::from_json(r#"{"a":"user","b":"us\u0065r","c":true,"d":[ ]}"#).unwrap();
        assert!(obj.members[0].is_common_value());
        assert!(!obj.members[1].is_common_value());
        assert!(obj.members[2].is_common_value());
        assert!(!obj.members[3].is_common_value());
        assert_eq!(
            obj.to_json(),
            r#"{"a":"user","b":"us\u0065r","c":true,"d":[ ]}"#
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

//! Member keys, interned.
//!
//! A long trace holds millions of objects whose keys come from a small
//! vocabulary (`role`, `content`, `type`, ...). A key from that vocabulary,
//! or one learned while reading, is an index into a table shared by the
//! process: no allocation per member. The table is bounded, so a document
//! with endless distinct keys cannot grow it without limit: past the
//! bound (or for a long key) a key is held as its own text, as before.

use std::collections::BTreeMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, OnceLock};

use serde::de::{Deserialize, Deserializer, Visitor};

/// The keys of the Anthropic Messages shapes the message model reads and
/// writes, and the trace's own (`source_role`), most frequent first.
const KNOWN: &[&str] = &[
    "type",
    "content",
    "role",
    "text",
    "id",
    "name",
    "input",
    "tool_use_id",
    "is_error",
    "cache_control",
    "thinking",
    "signature",
    "data",
    "source",
    "media_type",
    "url",
    "citations",
    "title",
    "context",
    "description",
    "input_schema",
    "source_role",
];

/// How many keys outside [`KNOWN`] the process learns, at most.
pub(super) const MAX_LEARNED: usize = 512;
/// Keys longer than this are not learned (keys are names, not payloads).
pub(super) const MAX_LEARNED_LEN: usize = 48;

/// The learned keys, by index past [`KNOWN`]; a slot is filled once and
/// then read without a lock.
static LEARNED: [OnceLock<Box<str>>; MAX_LEARNED] = [const { OnceLock::new() }; MAX_LEARNED];
/// Index of each learned key, to find it again when reading.
static LEARNED_INDEX: Mutex<BTreeMap<Box<str>, u32>> = Mutex::new(BTreeMap::new());

/// A member's key: an index into the shared table, or its own text.
#[derive(Clone)]
pub(super) struct MemberKey(Repr);

#[derive(Clone)]
enum Repr {
    Interned(u32),
    Owned(Box<str>),
}

impl MemberKey {
    /// The key for `s`, interned when known or learnable.
    pub(super) fn new(s: &str) -> Self {
        Self::lookup(s).unwrap_or_else(|| MemberKey(Repr::Owned(s.into())))
    }

    /// The key for `s`, reusing its allocation when it is not interned.
    fn from_string(s: String) -> Self {
        Self::lookup(&s).unwrap_or_else(|| MemberKey(Repr::Owned(s.into_boxed_str())))
    }

    fn lookup(s: &str) -> Option<Self> {
        if let Some(i) = KNOWN.iter().position(|k| *k == s) {
            return u32::try_from(i).ok().map(|i| MemberKey(Repr::Interned(i)));
        }
        if s.len() > MAX_LEARNED_LEN {
            return None;
        }
        // A poisoned lock only means another thread panicked while
        // learning: the key is then simply not interned.
        let mut index = LEARNED_INDEX.lock().ok()?;
        if let Some(&i) = index.get(s) {
            return Some(MemberKey(Repr::Interned(i)));
        }
        let slot = index.len();
        let cell = LEARNED.get(slot)?;
        cell.set(s.into()).ok()?;
        let i = u32::try_from(KNOWN.len() + slot).ok()?;
        index.insert(s.into(), i);
        Some(MemberKey(Repr::Interned(i)))
    }

    /// The key's text.
    pub(super) fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Owned(s) => s,
            Repr::Interned(i) => interned(*i),
        }
    }

    /// The key's index in the shared table, or its own text.
    pub(super) fn into_parts(self) -> Result<u32, Box<str>> {
        match self.0 {
            Repr::Interned(i) => Ok(i),
            Repr::Owned(s) => Err(s),
        }
    }

    /// Its index in the shared table, when it has one.
    pub(super) fn index(&self) -> Option<u32> {
        match self.0 {
            Repr::Interned(i) => Some(i),
            Repr::Owned(_) => None,
        }
    }

    /// Whether the key is held in the shared table.
    #[cfg(test)]
    pub(super) fn is_interned(&self) -> bool {
        matches!(self.0, Repr::Interned(_))
    }
}

/// The text of the interned key `i` (an index [`MemberKey::index`]
/// handed out).
pub(super) fn interned(i: u32) -> &'static str {
    let i = i as usize;
    match KNOWN.get(i) {
        Some(k) => k,
        // A learned index is handed out only after its slot is filled.
        None => LEARNED
            .get(i - KNOWN.len())
            .and_then(OnceLock::get)
            .map_or("", |s| s),
    }
}

/// How many keys the process has learned (at most [`MAX_LEARNED`]).
#[cfg(test)]
pub(super) fn learned() -> usize {
    LEARNED.iter().filter(|c| c.get().is_some()).count()
}

impl PartialEq for MemberKey {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Repr::Interned(a), Repr::Interned(b)) => a == b,
            _ => self.as_str() == other.as_str(),
        }
    }
}

impl Eq for MemberKey {}

impl Hash for MemberKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Debug for MemberKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl<'de> Deserialize<'de> for MemberKey {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = MemberKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string key")
            }
            // serde_json lends a key without escapes (from its input or
            // its scratch buffer), so a known key costs no allocation.
            fn visit_str<E>(self, v: &str) -> Result<MemberKey, E> {
                Ok(MemberKey::new(v))
            }
            fn visit_string<E>(self, v: String) -> Result<MemberKey, E> {
                Ok(MemberKey::from_string(v))
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_keys_are_interned_and_read_back() {
        for k in KNOWN {
            let key = MemberKey::new(k);
            assert!(key.is_interned());
            assert_eq!(key.as_str(), *k);
            assert_eq!(key, MemberKey(Repr::Owned((*k).into())));
        }
        let long = "k".repeat(MAX_LEARNED_LEN + 1);
        assert!(!MemberKey::new(&long).is_interned());
        assert_eq!(MemberKey::new(&long).as_str(), long);
    }

    #[test]
    fn the_learned_table_is_bounded() {
        // More distinct keys than the table holds: every one reads back
        // as itself, and the table stops at its bound.
        let keys: Vec<String> = (0..MAX_LEARNED + 100)
            .map(|i| format!("bound_test_{i}"))
            .collect();
        let held: Vec<MemberKey> = keys.iter().map(|k| MemberKey::new(k)).collect();
        for (k, key) in keys.iter().zip(&held) {
            assert_eq!(key.as_str(), k);
            assert_eq!(*key, MemberKey::new(k));
        }
        assert_eq!(learned(), MAX_LEARNED);
        assert!(!held.last().is_some_and(MemberKey::is_interned));
        // A key learned before the table filled is found again.
        let first = held.iter().find(|k| k.is_interned());
        assert!(first.is_some_and(|k| MemberKey::new(k.as_str()).is_interned()));
    }
}

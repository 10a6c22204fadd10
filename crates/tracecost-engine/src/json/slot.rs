//! One member of a [`super::RawObject`]: its key and its value in 24
//! bytes.
//!
//! A long trace holds millions of members. Held as a pair of a key (an
//! enum of an index or a boxed text, 16 bytes) and a value (an enum of
//! three pointers, 24 bytes), a member took 40 bytes. Nearly every key
//! is in the shared table ([`super::key`]), so the key's index rides in
//! the value's own room beside its tag; the rare key held as its own text
//! keeps key and value out of line, behind one thin pointer.

use std::sync::Arc;

use serde_json::value::RawValue;

use super::key::{self, MemberKey};

/// A member: a key of the shared table with its value inline, or a key
/// of its own with its value, boxed together.
#[derive(Clone)]
pub(super) enum Slot {
    /// The exact bytes read (or built).
    Raw(u32, Box<RawValue>),
    /// Bytes equal to one of the common values, held once for all.
    Common(u32, &'static RawValue),
    /// A JSON string held as its text.
    Text(u32, Arc<str>),
    /// A key outside the shared table, and its value.
    OwnKey(Box<(Box<str>, HeldValue)>),
    /// A JSON string whose text the object's owner holds (a block's typed
    /// view holds its ids and texts): the owner fills it when the object
    /// is written or lent ([`super::RawObject::detach_texts`]). What lets
    /// every block of one shape share one member list.
    Hole(u32),
}

impl Slot {
    /// The member `key: value`.
    pub(super) fn new(key: MemberKey, value: HeldValue) -> Self {
        match key.into_parts() {
            Ok(i) => Slot::new_interned(i, value),
            Err(own) => Slot::OwnKey(Box::new((own, value))),
        }
    }

    /// The key's text.
    pub(super) fn key(&self) -> &str {
        match self {
            Slot::Raw(i, _) | Slot::Common(i, _) | Slot::Text(i, _) | Slot::Hole(i) => {
                key::interned(*i)
            }
            Slot::OwnKey(b) => &b.0,
        }
    }

    /// Whether the key is `key` (by index when both are in the table).
    pub(super) fn has_key(&self, key: &MemberKey) -> bool {
        match (self.index(), key.index()) {
            (Some(a), Some(b)) => a == b,
            _ => self.key() == key.as_str(),
        }
    }

    pub(super) fn index(&self) -> Option<u32> {
        match self {
            Slot::Raw(i, _) | Slot::Common(i, _) | Slot::Text(i, _) | Slot::Hole(i) => Some(*i),
            Slot::OwnKey(_) => None,
        }
    }

    /// The member's key, as read.
    pub(super) fn member_key(&self) -> MemberKey {
        MemberKey::new(self.key())
    }

    /// The value as held.
    pub(super) fn value(&self) -> MemberValue<'_> {
        match self {
            Slot::Raw(_, r) => MemberValue::Raw(r),
            Slot::Common(_, r) => MemberValue::Raw(r),
            Slot::Text(_, t) => MemberValue::Text(t),
            Slot::OwnKey(b) => b.1.value(),
            // Never reached by an owner that fills its holes (every read
            // of a block's members goes through the block).
            Slot::Hole(_) => {
                debug_assert!(false, "a hole read unfilled");
                MemberValue::Raw(RawValue::NULL)
            }
        }
    }

    /// Whether the value is held by the object's owner.
    pub(super) fn is_hole(&self) -> bool {
        matches!(self, Slot::Hole(_))
    }

    /// The shared text, when the value is held as one.
    pub(super) fn text(&self) -> Option<&Arc<str>> {
        match self {
            Slot::Text(_, t) => Some(t),
            Slot::OwnKey(b) => match &b.1 {
                HeldValue::Text(t) => Some(t),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether the key is in the table and the value one of the common
    /// ones (what an object of a shared shape is made of).
    pub(super) fn is_common(&self) -> bool {
        matches!(self, Slot::Common(..))
    }

    /// Whether the value is held as bytes shared by the process (tests).
    #[cfg(test)]
    pub(super) fn is_common_value(&self) -> bool {
        match self {
            Slot::Common(..) => true,
            Slot::OwnKey(b) => matches!(b.1, HeldValue::Common(_)),
            _ => false,
        }
    }

    /// Replaces the value, keeping the key.
    pub(super) fn set_value(&mut self, value: HeldValue) {
        match self {
            Slot::OwnKey(b) => b.1 = value,
            Slot::Raw(i, _) | Slot::Common(i, _) | Slot::Text(i, _) | Slot::Hole(i) => {
                let i = *i;
                *self = Slot::new_interned(i, value);
            }
        }
    }

    fn new_interned(i: u32, value: HeldValue) -> Self {
        match value {
            HeldValue::Raw(r) => Slot::Raw(i, r),
            HeldValue::Common(r) => Slot::Common(i, r),
            HeldValue::Text(t) => Slot::Text(i, t),
        }
    }
}

/// How one member's value is held.
#[derive(Clone)]
pub(super) enum HeldValue {
    /// The exact bytes read (or built).
    Raw(Box<RawValue>),
    /// Bytes equal to one of the common values', which are held once
    /// for all.
    Common(&'static RawValue),
    /// A JSON string held as its text; its bytes are the canonical
    /// encoding of the text, written on demand.
    Text(Arc<str>),
}

/// A member's value, borrowed from a [`super::RawObject`].
#[derive(Debug, Clone, Copy)]
pub enum MemberValue<'a> {
    /// Raw JSON bytes.
    Raw(&'a RawValue),
    /// A JSON string held as its text (written with canonical escaping).
    Text(&'a str),
}

impl HeldValue {
    pub(super) fn value(&self) -> MemberValue<'_> {
        match self {
            HeldValue::Raw(r) => MemberValue::Raw(r),
            HeldValue::Common(r) => MemberValue::Raw(r),
            HeldValue::Text(t) => MemberValue::Text(t),
        }
    }
}

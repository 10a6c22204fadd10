//! The messages of a file's records held once each. An observability
//! export records a model call's whole conversation again in every call
//! (a Langfuse generation's `input`, a LangSmith llm run's
//! `inputs.messages`, an Agents SDK generation span's `input`), and its
//! importer holds the calls to the end of the file (to merge a call's
//! parts and take the calls in start order): held as read, a file of long
//! conversations would take memory in proportion to the square of their
//! length. Each message is kept once, shared by every call that sent it.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use serde_json::Value;

/// Distinct JSON values, each held once.
#[derive(Default)]
pub(crate) struct Interner {
    values: HashMap<u64, Vec<Arc<Value>>>,
}

impl Interner {
    /// The held value equal to `v`, or `v` now held.
    pub(crate) fn share(&mut self, v: Value) -> Arc<Value> {
        let mut h = DefaultHasher::new();
        hash_value(&v, &mut h);
        let same = self.values.entry(h.finish()).or_default();
        if let Some(held) = same.iter().find(|held| ***held == v) {
            return held.clone();
        }
        let held = Arc::new(v);
        same.push(held.clone());
        held
    }

    /// The items of a JSON list, each shared.
    pub(crate) fn share_list(&mut self, list: Vec<Value>) -> Vec<Arc<Value>> {
        list.into_iter().map(|v| self.share(v)).collect()
    }
}

/// A list of shared values as one JSON list again (a copy, for the time
/// it takes to map one call).
pub(crate) fn unshared(list: &[Arc<Value>]) -> Value {
    Value::Array(list.iter().map(|v| (**v).clone()).collect())
}

/// Hashes a JSON value's content (members in their order).
fn hash_value(v: &Value, h: &mut DefaultHasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => (2u8, n.to_string()).hash(h),
        Value::String(s) => (3u8, s).hash(h),
        Value::Array(items) => {
            (4u8, items.len()).hash(h);
            for i in items {
                hash_value(i, h);
            }
        }
        Value::Object(o) => {
            (5u8, o.len()).hash(h);
            for (k, v) in o {
                k.hash(h);
                hash_value(v, h);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_values_are_held_once_and_different_ones_apart() {
        let mut i = Interner::default();
        let a = i.share(json!({"role": "user", "content": "hi"}));
        let b = i.share(json!({"role": "user", "content": "hi"}));
        let c = i.share(json!({"role": "user", "content": "hi!"}));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*c, json!({"role": "user", "content": "hi!"}));
        let list = i.share_list(vec![json!(1), json!("x")]);
        assert_eq!(unshared(&list), json!([1, "x"]));
    }

    #[test]
    fn a_hash_collision_keeps_both_values() {
        // Two values under one hash: the second is not taken for the first.
        let mut i = Interner::default();
        let a = Arc::new(json!("a"));
        i.values.insert(7, vec![a.clone()]);
        let mut h = DefaultHasher::new();
        hash_value(&json!("b"), &mut h);
        let b = json!("b");
        i.values.insert(h.finish(), vec![a]);
        let held = i.share(b.clone());
        assert_eq!(*held, b);
    }
}

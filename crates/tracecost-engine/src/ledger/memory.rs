//! A ledger held in process memory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use super::{LedgerError, Recorded, ToolResultLedger};
use crate::handle::Handle;

/// An in-memory [`ToolResultLedger`]; what a replay uses.
#[derive(Debug, Default)]
pub struct InMemoryLedger {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    // HashMaps are fine here: nothing iterates them into output.
    by_mem_id: HashMap<String, Arc<Recorded>>,
    /// Every record of a call id, in the order recorded: more than one
    /// when conversations sharing this ledger reused an id.
    by_call_id: HashMap<String, Vec<Arc<Recorded>>>,
}

impl InMemoryLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many tool results are recorded.
    pub fn len(&self) -> usize {
        self.lock().by_mem_id.len()
    }

    /// Whether nothing is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic elsewhere while holding the lock leaves the maps consistent
        // (each insert is a single statement), so poisoning is ignored.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ToolResultLedger for InMemoryLedger {
    fn record(
        &self,
        tool_call_id: &str,
        tool_name: &str,
        tool_args: &str,
        content: &str,
    ) -> Result<Handle, LedgerError> {
        self.record_shared(tool_call_id, tool_name, tool_args, &Arc::from(content))
    }

    fn record_shared(
        &self,
        tool_call_id: &str,
        tool_name: &str,
        tool_args: &str,
        content: &Arc<str>,
    ) -> Result<Handle, LedgerError> {
        let mut inner = self.lock();
        // Recording a result again is a lookup: compare before deriving,
        // which hashes the whole content.
        let same = |r: &&Arc<Recorded>| {
            r.handle.tool_name == tool_name
                && (Arc::ptr_eq(&r.payload, content) || *r.payload == **content)
        };
        if let Some(rec) = inner
            .by_call_id
            .get(tool_call_id)
            .and_then(|v| v.iter().find(same))
        {
            return Ok(rec.handle.clone());
        }
        let handle = Handle::derive(tool_call_id, tool_name, content);
        if inner.by_mem_id.contains_key(&handle.mem_id) {
            return Err(LedgerError::MemIdConflict {
                mem_id: handle.mem_id,
            });
        }
        let rec = Arc::new(Recorded {
            handle: handle.clone(),
            tool_args: tool_args.into(),
            payload: content.clone(),
        });
        inner.by_mem_id.insert(handle.mem_id.clone(), rec.clone());
        inner
            .by_call_id
            .entry(tool_call_id.to_owned())
            .or_default()
            .push(rec);
        Ok(handle)
    }

    fn get(&self, mem_id: &str) -> Result<Option<Recorded>, LedgerError> {
        Ok(self.lock().by_mem_id.get(mem_id).map(|r| (**r).clone()))
    }

    fn get_by_call_id(&self, tool_call_id: &str) -> Result<Option<Recorded>, LedgerError> {
        match self.lock().by_call_id.get(tool_call_id).map(Vec::as_slice) {
            None | Some([]) => Ok(None),
            Some([one]) => Ok(Some((**one).clone())),
            Some(many) => Err(LedgerError::AmbiguousCallId {
                tool_call_id: tool_call_id.to_owned(),
                mem_ids: many.iter().map(|r| r.handle.mem_id.clone()).collect(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_is_idempotent_on_the_result() {
        let l = InMemoryLedger::new();
        let h1 = l.record("toolu_1", "t", "{}", "first").unwrap();
        let h2 = l.record("toolu_1", "t", "{\"x\":1}", "first").unwrap();
        assert_eq!(h1, h2);
        assert_eq!(l.len(), 1);
        assert_eq!(
            &*l.get_by_call_id("toolu_1").unwrap().unwrap().payload,
            "first"
        );
    }

    #[test]
    fn a_reused_call_id_keeps_each_payload_and_refuses_to_guess() {
        let l = InMemoryLedger::new();
        let h1 = l.record("toolu_1", "t", "{}", "first").unwrap();
        let h2 = l.record("toolu_1", "t", "{}", "second, different").unwrap();
        assert_ne!(h1.mem_id, h2.mem_id);
        assert_eq!(l.len(), 2);
        assert_eq!(&*l.get(&h1.mem_id).unwrap().unwrap().payload, "first");
        assert_eq!(
            &*l.get(&h2.mem_id).unwrap().unwrap().payload,
            "second, different"
        );
        match l.get_by_call_id("toolu_1") {
            Err(LedgerError::AmbiguousCallId {
                tool_call_id,
                mem_ids,
            }) => {
                assert_eq!(tool_call_id, "toolu_1");
                assert_eq!(mem_ids, vec![h1.mem_id, h2.mem_id]);
            }
            other => panic!("expected AmbiguousCallId, got {other:?}"),
        }
    }

    #[test]
    fn get_is_byte_exact_and_unknown_is_none() {
        let l = InMemoryLedger::new();
        let payload = "line1\r\nünïcödé\u{0}\n";
        let h = l.record("c", "t", "{}", payload).unwrap();
        assert_eq!(&*l.get(&h.mem_id).unwrap().unwrap().payload, payload);
        assert_eq!(l.get("tm_nope").unwrap(), None);
    }
}

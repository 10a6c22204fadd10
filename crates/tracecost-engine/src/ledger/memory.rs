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
    by_call_id: HashMap<String, Arc<Recorded>>,
}

impl InMemoryLedger {
    /// An empty ledger.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many tool results are recorded.
    pub fn len(&self) -> usize {
        self.lock().by_call_id.len()
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
        if let Some(rec) = inner.by_call_id.get(tool_call_id) {
            return Ok(rec.handle.clone());
        }
        let handle = Handle::derive(tool_call_id, tool_name, content);
        let rec = Arc::new(Recorded {
            handle: handle.clone(),
            tool_args: tool_args.into(),
            payload: content.clone(),
        });
        inner.by_mem_id.insert(handle.mem_id.clone(), rec.clone());
        inner.by_call_id.insert(tool_call_id.to_owned(), rec);
        Ok(handle)
    }

    fn get(&self, mem_id: &str) -> Result<Option<Recorded>, LedgerError> {
        Ok(self.lock().by_mem_id.get(mem_id).map(|r| (**r).clone()))
    }

    fn get_by_call_id(&self, tool_call_id: &str) -> Result<Option<Recorded>, LedgerError> {
        Ok(self
            .lock()
            .by_call_id
            .get(tool_call_id)
            .map(|r| (**r).clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_is_idempotent_on_call_id() {
        let l = InMemoryLedger::new();
        let h1 = l.record("toolu_1", "t", "{}", "first").unwrap();
        let h2 = l
            .record("toolu_1", "other", "{}", "second, different")
            .unwrap();
        assert_eq!(h1, h2);
        assert_eq!(l.len(), 1);
        assert_eq!(&*l.get(&h1.mem_id).unwrap().unwrap().payload, "first");
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

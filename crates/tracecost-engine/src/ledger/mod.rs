//! The tool-result ledger: where compacted payloads live so the model can
//! recall them.
//!
//! [`ToolResultLedger::record`] is idempotent on the tool call id: recording
//! the same call twice returns the first handle and leaves storage untouched,
//! even if the content differs — the stub already on the wire must keep
//! pointing at what it described.
//!
//! A ledger only stores and looks up; turning a lookup into the string the
//! model reads is the recall tool's job, so this module depends on nothing
//! but the handle and message model.

mod durable;
mod memory;

pub use durable::DurableLedger;
pub use memory::InMemoryLedger;

use std::sync::Arc;

use super::handle::Handle;
use super::message::{BlockKind, ContentBlock, ToolResultContent};

/// Errors from recording into, or reading from, a ledger's storage.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A filesystem operation failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory involved.
        path: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// Stored data did not match what the index promised.
    #[error("{path}: {reason}")]
    Corrupt {
        /// The file involved.
        path: String,
        /// What was wrong with it.
        reason: String,
    },
}

/// A recorded tool result: its handle and its payload, byte-exact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// The handle returned by `record`.
    pub handle: Handle,
    /// The tool call's arguments (raw JSON of the tool_use `input`).
    pub tool_args: Arc<str>,
    /// The content as recorded.
    pub payload: Arc<str>,
}

/// Storage for tool results that may be compacted out of the wire view.
///
/// Implementations are shared between threads (`&self` everywhere).
pub trait ToolResultLedger: Send + Sync {
    /// Stores `content` for `tool_call_id` and returns its handle. If the id
    /// was recorded before, returns the original handle and stores nothing.
    fn record(
        &self,
        tool_call_id: &str,
        tool_name: &str,
        tool_args: &str,
        content: &str,
    ) -> Result<Handle, LedgerError>;

    /// Like [`ToolResultLedger::record`] for a caller that already holds
    /// the content in an `Arc`: in-memory ledgers keep that `Arc` instead of
    /// a copy, so a recorded payload is not held twice.
    fn record_shared(
        &self,
        tool_call_id: &str,
        tool_name: &str,
        tool_args: &str,
        content: &Arc<str>,
    ) -> Result<Handle, LedgerError> {
        self.record(tool_call_id, tool_name, tool_args, content)
    }

    /// Looks up a record by `mem_id`.
    fn get(&self, mem_id: &str) -> Result<Option<Recorded>, LedgerError>;

    /// Looks up a record by the tool call id it was recorded under.
    fn get_by_call_id(&self, tool_call_id: &str) -> Result<Option<Recorded>, LedgerError>;
}

/// Forwards every method through a pointer type, so a shared ledger
/// (`Arc<L>`) or a borrowed one (`&L`) is a ledger too.
macro_rules! forward_ledger {
    ($ptr:ty) => {
        impl<L: ToolResultLedger + ?Sized> ToolResultLedger for $ptr {
            fn record(
                &self,
                tool_call_id: &str,
                tool_name: &str,
                tool_args: &str,
                content: &str,
            ) -> Result<Handle, LedgerError> {
                (**self).record(tool_call_id, tool_name, tool_args, content)
            }
            fn record_shared(
                &self,
                tool_call_id: &str,
                tool_name: &str,
                tool_args: &str,
                content: &Arc<str>,
            ) -> Result<Handle, LedgerError> {
                (**self).record_shared(tool_call_id, tool_name, tool_args, content)
            }
            fn get(&self, mem_id: &str) -> Result<Option<Recorded>, LedgerError> {
                (**self).get(mem_id)
            }
            fn get_by_call_id(&self, tool_call_id: &str) -> Result<Option<Recorded>, LedgerError> {
                (**self).get_by_call_id(tool_call_id)
            }
        }
    };
}

forward_ledger!(Arc<L>);
forward_ledger!(&L);

/// Records the payload of a tool_result `block` (see
/// [`ContentBlock::tool_result_payload`]) under `tool_call_id`. String
/// content is shared with the block through
/// [`ToolResultLedger::record_shared`], not copied: a replay or a recall
/// over a 1 GB trace would otherwise hold every payload twice.
pub fn record_result<L: ToolResultLedger + ?Sized>(
    ledger: &L,
    tool_call_id: &str,
    tool_name: &str,
    tool_args: &str,
    block: &ContentBlock,
) -> Result<Handle, LedgerError> {
    match block.kind() {
        BlockKind::ToolResult {
            content: ToolResultContent::Text(text),
            ..
        } => ledger.record_shared(tool_call_id, tool_name, tool_args, text),
        _ => ledger.record(
            tool_call_id,
            tool_name,
            tool_args,
            block.tool_result_payload().unwrap_or(""),
        ),
    }
}

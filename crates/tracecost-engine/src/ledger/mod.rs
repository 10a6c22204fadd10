//! The tool-result ledger: where compacted payloads live so the model can
//! recall them.
//!
//! A record is identified by what its handle is derived from — the tool
//! call id, the tool name and the content — so by its `mem_id`.
//! [`ToolResultLedger::record`] is idempotent on that: recording the same
//! result again returns the same handle and leaves storage untouched.
//!
//! A tool call id alone does not identify a result. Ids are unique within
//! a conversation, but a ledger shared by conversations (a durable ledger
//! directory, a process serving many sessions) meets ids that another
//! conversation used too — hand-written and sequential ids (`call_0`,
//! `toolu_1`) repeat. A second result under a known id is therefore a
//! record of its own, with its own `mem_id`; every stub keeps pointing at
//! exactly the content it described, and [`ToolResultLedger::get`] by
//! `mem_id` is never ambiguous. [`ToolResultLedger::get_by_call_id`]
//! answers only while the id names one record, and fails with
//! [`LedgerError::AmbiguousCallId`] (listing the `mem_id`s) once it names
//! several: it never guesses which conversation was meant.
//!
//! A ledger only stores and looks up; turning a lookup into the string the
//! model reads is the recall tool's job, so this module depends on nothing
//! but the handle and message model.

mod durable;
mod memory;

pub use durable::{DurableLedger, RepairSummary, SetAside};
pub use memory::InMemoryLedger;

use std::sync::Arc;

use super::handle::{Handle, one_line};
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
    /// A lookup by tool call id found several records: the id was recorded
    /// with different results (by conversations that both used it). Look
    /// the one meant up by its `mem_id`.
    #[error(
        "tool call id \"{}\" names {} different recorded results ({}); recall one by its mem_id",
        one_line(tool_call_id, 200),
        mem_ids.len(),
        mem_ids.join(", ")
    )]
    AmbiguousCallId {
        /// The id looked up.
        tool_call_id: String,
        /// The `mem_id` of every record under it, in the order recorded.
        mem_ids: Vec<String>,
    },
    /// A `mem_id` already names a record of other content (a collision of
    /// its 64-bit digest, or an edited index): recording under it would
    /// hand out a handle that recalls the wrong payload.
    #[error("{mem_id} already names a different recorded result; nothing was recorded")]
    MemIdConflict {
        /// The `mem_id` both results derive.
        mem_id: String,
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
    /// Stores `content` for `tool_call_id` and returns its handle. If the
    /// same result (call id, tool name and content) was recorded before,
    /// returns that handle and stores nothing; the same call id with other
    /// content is a new record with its own `mem_id` (see the module docs).
    ///
    /// # Errors
    ///
    /// [`LedgerError::Io`] if storage fails; [`LedgerError::MemIdConflict`]
    /// if the result's `mem_id` already names a record of other content,
    /// rather than handing out a handle that would recall the wrong payload.
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
    ///
    /// # Errors
    ///
    /// [`LedgerError::AmbiguousCallId`] if the id was recorded with more
    /// than one result; storage errors as for [`ToolResultLedger::get`].
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

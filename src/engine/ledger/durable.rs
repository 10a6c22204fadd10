//! A ledger in a directory, shared between processes.

/// A file-backed [`super::ToolResultLedger`].
#[derive(Debug)]
pub struct DurableLedger {}

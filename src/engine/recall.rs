//! The `recall_tool_result` tool: its definition and its executor.

use super::handle::Handle;

/// What the model asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecallFormat {
    /// The stub.
    Summary,
    /// The payload, byte-exact.
    Full,
}

/// One recall request, already parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecallRequest {
    /// `format`.
    pub format: Option<RecallFormat>,
    /// `query`.
    pub query: Option<String>,
    /// `offset`.
    pub offset: Option<u64>,
    /// `max_chars`.
    pub max_chars: Option<u64>,
    /// `json_path`.
    pub json_path: Option<String>,
}

impl RecallRequest {
    /// `format="full"`.
    pub fn full() -> Self {
        Self {
            format: Some(RecallFormat::Full),
            ..Self::default()
        }
    }
}

/// Answers `request` over one recorded payload.
pub fn answer(_handle: &Handle, payload: &str, _request: &RecallRequest) -> String {
    payload.to_owned()
}

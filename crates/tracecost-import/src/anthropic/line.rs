//! What reading one line gives: the line's error (a column when the JSON
//! says where) and its response's reply. Beneath every reader of a line:
//! the request, the stream, the exchange and the pipeline.

use tracecost_engine::message::Message;
use tracecost_trace::RecordedUsage;

/// Why a line could not be read.
pub(super) struct LineError {
    pub(super) column: Option<usize>,
    pub(super) message: String,
}

impl LineError {
    pub(super) fn at(message: String) -> Self {
        Self {
            column: None,
            message,
        }
    }
}

/// What an exchange's response reads as.
// One at a time, while an exchange is read: its size is not held.
#[allow(clippy::large_enum_variant)]
pub(super) enum Reply {
    Missing,
    Failed,
    Unreadable,
    Ok {
        usage: Option<RecordedUsage>,
        message: Option<Message>,
        /// The requests `usage.iterations` records, when it does.
        iterations: Vec<(Option<String>, RecordedUsage)>,
    },
}

//! One model call read from a span, and how two spans of one call become
//! one: shared by the file's reader and the window that meets them.

use std::sync::Arc;

use tracecost_engine::cache::ProviderKind;
use tracecost_engine::message::{Message, ToolDefinition};
use tracecost_trace::RecordedUsage;

/// One model call read from a span.
pub(super) struct ModelSpan {
    pub(super) start_ns: u64,
    pub(super) line: usize,
    /// Its span id, and those of the spans of its call merged into it.
    pub(super) span_ids: Vec<String>,
    pub(super) trace_id: String,
    pub(super) parent_id: String,
    pub(super) response_id: Option<String>,
    /// How much the span carries (attributes), to choose among duplicates.
    pub(super) weight: usize,
    /// About how much memory its content takes ([`Attrs::text_bytes`](super::attrs::Attrs::text_bytes)).
    pub(super) bytes: usize,
    /// `None`: a provider tracecost does not simulate.
    pub(super) provider: Option<ProviderKind>,
    pub(super) model: Option<String>,
    /// `gen_ai.conversation.id` (OpenInference: `session.id`).
    pub(super) session: Option<String>,
    pub(super) system: Vec<tracecost_engine::message::ContentBlock>,
    /// The messages sent, shared with the file's [`MessageCache`](super::parts::MessageCache).
    pub(super) messages: Vec<Arc<Message>>,
    /// Their keys ([`message_key`](crate::common::message_key)).
    pub(super) keys: Vec<u64>,
    pub(super) tools: Vec<ToolDefinition>,
    pub(super) reply: Option<Message>,
    pub(super) markers: Option<Vec<tracecost_engine::wire::Marker>>,
    pub(super) usage: Option<RecordedUsage>,
    /// The export recorded usage but no cache figure.
    pub(super) no_cache_fields: bool,
    /// The anthropic SDK's write split, for a duplicate to complete.
    pub(super) split: Option<(u64, u64)>,
}

pub(super) const DUPLICATE: &str = "spans or events of a call already read (the anthropic SDK's own span beside or inside an instrumentor's, or a call's span and its inference event; counted once)";

/// Keeps in `kept` the one of two spans of one call that carries the most,
/// completed by the other's response id, session and 5m/1h write split;
/// the call keeps both spans' ids, and the outer one's parent.
pub(super) fn merge(kept: &mut ModelSpan, other: ModelSpan) {
    let mut span_ids = kept.span_ids.clone();
    span_ids.extend(other.span_ids.iter().cloned());
    let parent_id = if other.span_ids.contains(&kept.parent_id) {
        other.parent_id.clone()
    } else {
        kept.parent_id.clone()
    };
    let split = other.split.or(kept.split);
    let session = kept.session.clone().or_else(|| other.session.clone());
    let response_id = kept
        .response_id
        .clone()
        .or_else(|| other.response_id.clone());
    let (start_ns, line) = (kept.start_ns.min(other.start_ns), kept.line.min(other.line));
    if other.weight > kept.weight {
        *kept = other;
    }
    kept.response_id = response_id;
    kept.span_ids = span_ids;
    kept.parent_id = parent_id;
    kept.session = session;
    kept.start_ns = start_ns;
    kept.line = line;
    if let (Some((m5, h1)), Some(u)) = (split, kept.usage.as_mut()) {
        u.ephemeral_5m_input_tokens = Some(m5);
        u.ephemeral_1h_input_tokens = Some(h1);
        kept.split = Some((m5, h1));
    }
}

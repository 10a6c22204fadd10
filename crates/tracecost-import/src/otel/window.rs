//! The model spans of a file in a bounded window, so that a file of any
//! size is read in memory that does not grow with it: a call's two spans
//! (the anthropic SDK's own beside or inside an instrumentor's) end within
//! moments of each other, so they meet in the window and are merged there
//! ([`merge`]); spans leave it in start order once it is full, and
//! what is left at the end of the file leaves sorted. A span that arrives
//! after its call's other span has left is dropped as a duplicate (it
//! cannot be merged any more, and counting it would bill the call twice).

use std::collections::HashSet;

use super::model_span::{DUPLICATE, ModelSpan, merge};
use crate::common::Unmapped;

/// How many model spans the window holds at most: far more than lie
/// between a call's two spans in any export (they end together, in one
/// export batch or the next).
pub(super) const WINDOW: usize = 256;

/// How many bytes of content the window holds at most, beyond its first
/// [`KEPT`] spans: each span of a long conversation carries all of it, so
/// 256 of them can be hundreds of MB.
const WINDOW_BYTES: usize = 32 << 20;

/// Spans the window always holds, however large: a call's other span is
/// among the next few.
const KEPT: usize = 16;

pub(super) struct Window {
    pending: Vec<ModelSpan>,
    cap: usize,
    /// The content bytes of `pending`.
    bytes: usize,
    /// Response ids of the calls that have left.
    gone_responses: HashSet<String>,
    /// Span ids of the calls that have left (a late child names one as
    /// its parent).
    gone_spans: HashSet<String>,
    /// Parent span ids of the calls that have left (a late parent is one).
    gone_parents: HashSet<String>,
}

/// Whether two spans are one call: the same response id, or one inside
/// the other.
fn one_call(a: &ModelSpan, b: &ModelSpan) -> bool {
    let same_response = matches!((&a.response_id, &b.response_id), (Some(x), Some(y)) if x == y);
    let inside = |child: &ModelSpan, parent: &ModelSpan| {
        !child.parent_id.is_empty() && parent.span_ids.contains(&child.parent_id)
    };
    same_response || inside(a, b) || inside(b, a)
}

impl Window {
    pub(super) fn new(cap: usize) -> Self {
        Self {
            pending: Vec::new(),
            cap: cap.max(1),
            bytes: 0,
            gone_responses: HashSet::new(),
            gone_spans: HashSet::new(),
            gone_parents: HashSet::new(),
        }
    }

    /// Takes a span in; the spans that leave to make room, in start order.
    pub(super) fn push(&mut self, m: ModelSpan, un: &mut Unmapped) -> Vec<ModelSpan> {
        let late = m
            .response_id
            .as_ref()
            .is_some_and(|id| self.gone_responses.contains(id))
            || (!m.parent_id.is_empty() && self.gone_spans.contains(&m.parent_id))
            || m.span_ids.iter().any(|s| self.gone_parents.contains(s));
        if late {
            un.add(DUPLICATE, 1);
            return Vec::new();
        }
        if let Some(kept) = self.pending.iter_mut().find(|p| one_call(p, &m)) {
            un.add(DUPLICATE, 1);
            self.bytes -= kept.bytes;
            merge(kept, m);
            self.bytes += kept.bytes;
            return Vec::new();
        }
        self.bytes += m.bytes;
        self.pending.push(m);
        let mut out = Vec::new();
        while self.pending.len() > self.cap
            || (self.bytes > WINDOW_BYTES && self.pending.len() > KEPT)
        {
            out.push(self.leave());
        }
        out
    }

    /// The spans left at the end of the file, in start order.
    pub(super) fn drain(&mut self) -> Vec<ModelSpan> {
        let mut out = Vec::with_capacity(self.pending.len());
        while !self.pending.is_empty() {
            out.push(self.leave());
        }
        out
    }

    /// The earliest span leaves, its ids remembered.
    fn leave(&mut self) -> ModelSpan {
        let first = self
            .pending
            .iter()
            .enumerate()
            .min_by_key(|(_, m)| (m.start_ns, m.line))
            .map_or(0, |(i, _)| i);
        let m = self.pending.remove(first);
        self.bytes -= m.bytes;
        if let Some(id) = &m.response_id {
            self.gone_responses.insert(id.clone());
        }
        self.gone_spans.extend(m.span_ids.iter().cloned());
        if !m.parent_id.is_empty() {
            self.gone_parents.insert(m.parent_id.clone());
        }
        m
    }
}

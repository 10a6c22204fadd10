//! Stability: are stubs and prefixes byte-stable from one call to the next?
//!
//! A prompt cache only pays off if what was sent before is sent again as the
//! same bytes. For every call this checks that (a) every stub, once it
//! appears, is byte-identical at every later call; (c) each call's messages
//! extend the previous call's messages, except where a compaction new at
//! this call explains the change. Check (b), the same stubs in fresh
//! processes, compares [`StabilityResult::digest`] across processes (the
//! CLI spawns them).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use std::sync::Arc;
use tracecost_engine::ledger::LedgerError;

use tracecost_engine::message::{BlockKind, Message};
use tracecost_engine::rewrite::{WireBlock, WireMessage, WireView};
use tracecost_engine::wire::message_json;
use tracecost_policy::{BlockTokens, CompactionRun, ViewState};
use tracecost_trace::Trace;

/// Something that produces the wire view of each call of one trace, in
/// call order (the policy under test; tests substitute faulty ones).
pub trait ViewSource<'h> {
    /// Brings the view to `history`'s, and returns the first message that
    /// may differ from the previous call's view: the messages before it
    /// must be the very objects the previous view held (0 when the source
    /// does not know, and every message is compared).
    fn advance(&mut self, history: &'h [Message]) -> Result<usize, LedgerError>;
    /// The view of the last call advanced to.
    fn view(&self) -> &WireView<'h>;
    /// The tool_use ids compacted at the last call, in message order.
    fn compacted(&self) -> &[Arc<str>];
}

/// A compaction run as a view source: each call's view is kept up to date
/// by [`CompactionRun::advance`], whose contract (the messages before the
/// index it returns are the previous call's objects, and the view is the
/// one a full rebuild gives) is property-tested against a rebuild of
/// every call (`crates/tracecost-replay/tests/replay/incremental.rs`). So the check costs, per
/// call, what changed, not the history.
pub struct RunSource<'a, 'h> {
    /// The run.
    pub run: CompactionRun,
    /// Token counts for token-triggered peers.
    pub tokens: &'a dyn BlockTokens,
    /// Tokens of the tools and system prompt.
    pub fixed_tokens: u64,
    /// Told of each call viewed; the caller starts the stage.
    pub progress: Option<&'a dyn crate::progress::Progress>,
    /// The view at the last call.
    pub state: ViewState<'h>,
}

impl<'h> ViewSource<'h> for RunSource<'_, 'h> {
    fn advance(&mut self, history: &'h [Message]) -> Result<usize, LedgerError> {
        if let Some(p) = self.progress {
            p.advance(1);
        }
        self.run
            .advance(history, self.fixed_tokens, self.tokens, &mut self.state)
    }

    fn view(&self) -> &WireView<'h> {
        &self.state.view
    }

    fn compacted(&self) -> &[Arc<str>] {
        &self.state.compacted
    }
}

/// One broken promise.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// 1-based call index.
    pub call: usize,
    /// Which check: `stub-changed`, `stub-dropped` or `prefix-changed`.
    pub kind: &'static str,
    /// The tool_use id concerned, when one is.
    pub tool_use_id: Option<String>,
    /// Message index concerned.
    pub message: usize,
    /// First differing byte offset.
    pub offset: usize,
    /// The earlier bytes (around the difference, bounded).
    pub before: String,
    /// The later bytes (around the difference, bounded).
    pub after: String,
}

/// Per-call figures.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CallStability {
    /// 1-based call index.
    pub index: usize,
    /// Messages of the previous call sent again byte-identical, in order
    /// from the start (the part a cache can still serve).
    pub messages_kept: usize,
    /// Tokens of those messages: the previous prefix that survived.
    pub tokens_kept: u64,
    /// Tokens of the previous call's messages.
    pub previous_tokens: u64,
    /// Results compacted for the first time at this call.
    pub new_compactions: Vec<String>,
    /// A change the policy makes on purpose at this call, not a
    /// violation: `summary`, a summarising compaction's new part starts
    /// (its summary replaces the history before it); `thinking-cleared`,
    /// a thinking edit clears earlier turns' thinking from here on (the
    /// request, and so the cached prefix, changes there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_change: Option<&'static str>,
}

/// The outcome of a stability run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StabilityResult {
    /// Per call.
    pub calls: Vec<CallStability>,
    /// Everything that broke, in call order.
    pub violations: Vec<Violation>,
    /// SHA-256 over every stub's bytes (by tool_use id, in id order) and the
    /// last call's messages: equal digests mean equal bytes.
    pub digest: String,
    /// How many distinct stubs were seen.
    pub stubs: usize,
}

const CONTEXT: usize = 60;

/// Runs the checks over every call of `trace`.
///
/// Per call, only the messages from the first one the source says may
/// have changed are looked at: those before it are the previous call's
/// objects, so their stubs were checked when they appeared and their bytes
/// and tokens are the same.
pub fn check<'h>(
    trace: &'h Trace,
    source: &mut dyn ViewSource<'h>,
    tokens: &dyn BlockTokens,
) -> Result<StabilityResult, LedgerError> {
    let mut checker = Checker::default();
    for (ci, call) in trace.calls.iter().enumerate() {
        let first = source.advance(trace.history_of(call))?;
        let now = source.compacted();
        checker.call(ci + 1, first, source.view(), now, tokens);
    }
    Ok(checker.finish())
}

/// The checks of a trace a summarising compaction cut into parts, each
/// part checked as a trace of its own (`reports`, in order) and joined: a
/// part starts from its summary, which replaces the history before it on
/// purpose, so its first call is marked as the policy's change
/// (`summary`) rather than compared with the call before; within a part,
/// stubs and prefixes are checked as always. Calls and violations are
/// numbered through the trace; the digest is over the parts' digests.
pub fn join_parts(reports: Vec<StabilityResult>) -> StabilityResult {
    use sha2::Digest;
    if reports.len() == 1 {
        return reports.into_iter().next().expect("one report");
    }
    let mut joined = StabilityResult {
        calls: Vec::new(),
        violations: Vec::new(),
        digest: String::new(),
        stubs: 0,
    };
    let mut h = sha2::Sha256::default();
    for (k, r) in reports.into_iter().enumerate() {
        let offset = joined.calls.len();
        for (i, mut c) in r.calls.into_iter().enumerate() {
            c.index += offset;
            if k > 0 && i == 0 {
                c.policy_change = Some("summary");
            }
            joined.calls.push(c);
        }
        joined
            .violations
            .extend(r.violations.into_iter().map(|v| Violation {
                call: v.call + offset,
                ..v
            }));
        joined.stubs += r.stubs;
        h.update(r.digest.as_bytes());
        h.update([0]);
    }
    joined.digest = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    joined
}

/// Marks the calls of `report` where the thinking edit's cut moves
/// (`cuts`, per call, the messages whose thinking it clears): the request
/// changes there by the policy's own rule, which the view checked (the
/// tool results' compaction) does not show.
pub fn mark_thinking_cuts(report: &mut StabilityResult, cuts: &[usize]) {
    let mut before = 0;
    for (c, &cut) in report.calls.iter_mut().zip(cuts) {
        if cut > before && c.policy_change.is_none() {
            c.policy_change = Some("thinking-cleared");
        }
        before = cut;
    }
}

/// What the checks carry from one call to the next.
struct Checker<'h> {
    /// Each stub's bytes when first seen, with the wire block they came
    /// from: a later call sending the very same object (the same stub, or
    /// the same result cleared with the same text) cannot differ, so only
    /// a new object is serialized and compared.
    stubs: BTreeMap<String, (String, WireBlock<'h>)>,
    /// The previous call's view.
    prev: Vec<WireMessage<'h>>,
    /// Its running token sums: `prev_sum[i]` is the tokens of its first
    /// `i` messages.
    prev_sum: Vec<u64>,
    /// Per message, how many compacted results precede it.
    prev_compactions: Vec<usize>,
    /// Its compacted results, in message order.
    prev_compacted: Vec<Arc<str>>,
    calls: Vec<CallStability>,
    violations: Vec<Violation>,
}

impl Default for Checker<'_> {
    fn default() -> Self {
        Checker {
            stubs: BTreeMap::new(),
            prev: Vec::new(),
            prev_sum: vec![0],
            prev_compactions: vec![0],
            prev_compacted: Vec::new(),
            calls: Vec::new(),
            violations: Vec::new(),
        }
    }
}

impl<'h> Checker<'h> {
    /// Checks call `index` (from 1), whose view may differ from the
    /// previous call's from message `first` on.
    fn call(
        &mut self,
        index: usize,
        first: usize,
        view: &WireView<'h>,
        now: &[Arc<str>],
        tokens: &dyn BlockTokens,
    ) {
        let first = first.min(self.prev.len()).min(view.messages.len());
        let new = self.compaction_changes(index, first, now);
        // (a) stubs are byte-stable once they appear.
        let (new_in_message, cur_compactions) = self.check_stubs(index, first, view, &new);
        // (c) the view extends the previous one, except where explained.
        let (cur_sum, kept) = self.check_prefix(index, first, view, tokens, &new_in_message);
        self.calls.push(CallStability {
            index,
            messages_kept: kept,
            tokens_kept: self.prev_sum[kept],
            previous_tokens: self.prev_sum[self.prev.len()],
            new_compactions: new,
            policy_change: None,
        });
        self.prev.truncate(first);
        self.prev.extend(view.messages[first..].iter().cloned());
        self.prev_sum.truncate(first);
        self.prev_sum.extend(cur_sum);
        self.prev_compactions.truncate(first);
        self.prev_compactions.extend(cur_compactions);
    }

    /// The results compacted for the first time at this call; a stub
    /// dropped (its result sent in full again) is a violation.
    fn compaction_changes(&mut self, index: usize, first: usize, now: &[Arc<str>]) -> Vec<String> {
        // The compacted results of the messages before `first` are the
        // previous call's (the list is in message order): only the rest
        // are compared, unless the lists disagree there. Bounded by both
        // lists: a source whose list and view disagree is compared in
        // full, never indexed past either.
        let mut same = self.prev_compactions[first]
            .min(now.len())
            .min(self.prev_compacted.len());
        if same > 0 && self.prev_compacted[same - 1] != now[same - 1] {
            same = 0;
        }
        let (new, gone) = compaction_changes(&self.prev_compacted[same..], &now[same..]);
        let new: Vec<String> = new.iter().map(|s| s.to_string()).collect();
        for gone in gone {
            self.violations.push(Violation {
                call: index,
                kind: "stub-dropped",
                tool_use_id: Some(gone.to_string()),
                message: 0,
                offset: 0,
                before: self
                    .stubs
                    .get(&*gone)
                    .map(|s| s.0.clone())
                    .unwrap_or_default(),
                after: "(sent in full again)".into(),
            });
        }
        self.prev_compacted.truncate(same);
        self.prev_compacted.extend_from_slice(&now[same..]);
        new
    }

    /// Compares each stub from message `first` on with its bytes when
    /// first seen; returns the messages holding a new compaction and, per
    /// message from `first` (and one past the last), the compacted
    /// results before it.
    fn check_stubs(
        &mut self,
        index: usize,
        first: usize,
        view: &WireView<'h>,
        new: &[String],
    ) -> (BTreeSet<usize>, Vec<usize>) {
        let mut new_in_message: BTreeSet<usize> = BTreeSet::new();
        let mut compactions = self.prev_compactions[first];
        let mut cur_compactions = Vec::with_capacity(view.messages.len() - first + 1);
        for (mi, wm) in view.messages.iter().enumerate().skip(first) {
            cur_compactions.push(compactions);
            for wb in wm.blocks.iter().flatten() {
                let original = match wb {
                    WireBlock::Original(_) => continue,
                    WireBlock::Compacted { original, .. } | WireBlock::Cleared { original, .. } => {
                        *original
                    }
                };
                let (id, key) = match original.kind() {
                    BlockKind::ToolResult { tool_use_id, .. } => {
                        compactions += 1;
                        (tool_use_id.to_string(), tool_use_id.to_string())
                    }
                    BlockKind::ToolUse { id, .. } => (id.to_string(), format!("{id}#input")),
                    _ => continue,
                };
                match self.stubs.get(&key) {
                    Some((_, seen)) if seen.same_object(wb) => {}
                    Some((before, _)) => {
                        let bytes = wb.block().to_json();
                        if *before != bytes {
                            let v =
                                diff(index, "stub-changed", Some(id.clone()), mi, before, &bytes);
                            self.violations.push(v);
                        }
                    }
                    None => {
                        self.stubs.insert(key, (wb.block().to_json(), wb.clone()));
                    }
                }
                if new.contains(&id) {
                    new_in_message.insert(mi);
                }
            }
        }
        cur_compactions.push(compactions);
        (new_in_message, cur_compactions)
    }

    /// Compares the view with the previous call's from message `first`
    /// on: a change not explained by a new compaction is a violation.
    /// Returns the view's running token sums from `first` and how many
    /// leading messages of the previous view it kept.
    fn check_prefix(
        &mut self,
        index: usize,
        first: usize,
        view: &WireView<'h>,
        tokens: &dyn BlockTokens,
        new_in_message: &BTreeSet<usize>,
    ) -> (Vec<u64>, usize) {
        // A message built from the same objects as before has the same
        // bytes and tokens; only the others are serialized and compared.
        let mut cur_sum = Vec::with_capacity(view.messages.len() - first + 1);
        cur_sum.push(self.prev_sum[first]);
        for (mi, m) in view.messages.iter().enumerate().skip(first) {
            let t = match self.prev.get(mi) {
                Some(before) if before.same_objects(m) => self.prev_sum[mi + 1] - self.prev_sum[mi],
                _ => message_tokens(m, tokens),
            };
            cur_sum.push(cur_sum[cur_sum.len() - 1] + t);
        }
        let mut kept = first;
        let mut still_prefix = true;
        for (mi, before) in self.prev.iter().enumerate().skip(first) {
            let equal = match view.messages.get(mi) {
                Some(after) if before.same_objects(after) => None,
                Some(after) => {
                    let (b, a) = (message_json(before), message_json(after));
                    (b != a).then_some((b, a))
                }
                None => Some((message_json(before), String::new())),
            };
            let Some((before, after)) = equal else {
                if still_prefix {
                    kept += 1;
                }
                continue;
            };
            still_prefix = false;
            if !new_in_message.contains(&mi) {
                let v = diff(index, "prefix-changed", None, mi, &before, &after);
                self.violations.push(v);
            }
        }
        (cur_sum, kept)
    }

    /// The report: the digest over every stub and the last call's
    /// messages.
    fn finish(self) -> StabilityResult {
        let mut h = sha2::Sha256::default();
        use sha2::Digest;
        for (id, (bytes, _)) in &self.stubs {
            h.update(id.as_bytes());
            h.update([0]);
            h.update(bytes.as_bytes());
            h.update([0]);
        }
        for m in &self.prev {
            h.update(message_json(m).as_bytes());
            h.update([0]);
        }
        let digest = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        StabilityResult {
            calls: self.calls,
            violations: self.violations,
            digest,
            stubs: self.stubs.len(),
        }
    }
}

/// The ids compacted now and not before, and those compacted before and
/// not now, each sorted. The common case, a list that only grew at its end,
/// costs a pointer comparison per id and a sort of the new ones.
fn compaction_changes(before: &[Arc<str>], now: &[Arc<str>]) -> (Vec<Arc<str>>, Vec<Arc<str>>) {
    let grew = now.len() >= before.len()
        && before
            .iter()
            .zip(now)
            .all(|(a, b)| Arc::ptr_eq(a, b) || a == b);
    let (mut new, mut gone): (Vec<Arc<str>>, Vec<Arc<str>>) = if grew {
        (now[before.len()..].to_vec(), Vec::new())
    } else {
        let (b, n): (BTreeSet<&Arc<str>>, BTreeSet<&Arc<str>>) =
            (before.iter().collect(), now.iter().collect());
        (
            n.difference(&b).map(|id| (*id).clone()).collect(),
            b.difference(&n).map(|id| (*id).clone()).collect(),
        )
    };
    new.sort();
    new.dedup();
    gone.sort();
    (new, gone)
}

fn message_tokens(m: &tracecost_engine::rewrite::WireMessage<'_>, tokens: &dyn BlockTokens) -> u64 {
    match (&m.blocks, m.source.content()) {
        (None, tracecost_engine::message::Content::Text(t)) => {
            tokens.block_tokens(&tracecost_engine::message::ContentBlock::text(t))
        }
        _ => m.sent_blocks().map(|b| tokens.block_tokens(&b)).sum(),
    }
}

fn diff(
    call: usize,
    kind: &'static str,
    tool_use_id: Option<String>,
    message: usize,
    before: &str,
    after: &str,
) -> Violation {
    let offset = before
        .bytes()
        .zip(after.bytes())
        .position(|(a, b)| a != b)
        .unwrap_or(before.len().min(after.len()));
    Violation {
        call,
        kind,
        tool_use_id,
        message,
        offset,
        before: window(before, offset),
        after: window(after, offset),
    }
}

/// Up to `CONTEXT` bytes either side of `offset`, cut on char boundaries.
fn window(s: &str, offset: usize) -> String {
    let mut start = offset.saturating_sub(CONTEXT).min(s.len());
    while !s.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (offset + CONTEXT).min(s.len());
    while !s.is_char_boundary(end) {
        end += 1;
    }
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.push_str(s.get(start..end).unwrap_or(""));
    if end < s.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use tracecost_engine::handle::Handle;
    use tracecost_engine::ledger::{InMemoryLedger, Recorded, ToolResultLedger};
    use tracecost_engine::rewrite::{CompactionPolicy, Compactor};
    use tracecost_policy::PolicyView;
    use tracecost_trace::load_str;

    struct Chars;
    impl BlockTokens for Chars {
        fn block_tokens(&self, b: &tracecost_engine::message::ContentBlock) -> u64 {
            b.to_json().len() as u64
        }
    }

    fn trace() -> Trace {
        let mut messages = vec![r#"{"role":"user","content":"go"}"#.to_string()];
        let mut calls = vec![r#"{"messages":1}"#.to_string()];
        for i in 0..4 {
            messages.push(format!(r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"t{i}","name":"f","input":{{}}}}]}}"#));
            messages.push(format!(r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"{}"}}]}}"#, "z".repeat(500)));
            calls.push(format!(r#"{{"messages":{}}}"#, messages.len()));
        }
        let json = format!(
            r#"{{"format":"tracecost.trace/v1","name":"s","model":"claude-sonnet-4-5","messages":[{}],"calls":[{}]}}"#,
            messages.join(","),
            calls.join(",")
        );
        load_str(&json, "s.json").unwrap().traces.remove(0)
    }

    /// A source that rebuilds every call's view whole and says nothing of
    /// what changed, so the check compares every message.
    struct Full<'h, F> {
        make: F,
        last: PolicyView<'h>,
    }
    impl<'h, F: FnMut(&'h [Message]) -> Result<PolicyView<'h>, LedgerError>> ViewSource<'h>
        for Full<'h, F>
    {
        fn advance(&mut self, history: &'h [Message]) -> Result<usize, LedgerError> {
            self.last = (self.make)(history)?;
            Ok(0)
        }
        fn view(&self) -> &WireView<'h> {
            &self.last.view
        }
        fn compacted(&self) -> &[Arc<str>] {
            &self.last.compacted
        }
    }
    fn full<'h>(
        make: impl FnMut(&'h [Message]) -> Result<PolicyView<'h>, LedgerError>,
    ) -> Full<'h, impl FnMut(&'h [Message]) -> Result<PolicyView<'h>, LedgerError>> {
        Full {
            make,
            last: PolicyView::default(),
        }
    }

    struct Engine(Compactor<InMemoryLedger>);
    impl Engine {
        fn view<'h>(&mut self, history: &'h [Message]) -> Result<PolicyView<'h>, LedgerError> {
            let r = self.0.rewrite(history)?;
            Ok(PolicyView {
                view: r.view,
                compacted: r
                    .compacted
                    .iter()
                    .map(|h| h.tool_call_id.as_str().into())
                    .collect(),
            })
        }
    }

    #[test]
    fn the_engine_is_stable() {
        let t = trace();
        let mut src = Engine(Compactor::new(
            InMemoryLedger::new(),
            CompactionPolicy {
                size_threshold: 100,
                keep_last_n: 1,
            },
        ));
        let r = check(&t, &mut full(|h| src.view(h)), &Chars).unwrap();
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        assert_eq!(r.stubs, 3);
        // Call 3 compacts t0 for the first time: message 2 changes, so only
        // messages 0 and 1 are kept from call 2's view.
        assert_eq!(r.calls[2].new_compactions, ["t0"]);
        assert_eq!(r.calls[2].messages_kept, 2);
        assert_eq!(r.calls[1].messages_kept, 1);
        assert_eq!(
            r.calls[1].tokens_kept,
            r#"{"type":"text","text":"go"}"#.len() as u64
        );
        assert!(r.calls[2].tokens_kept < r.calls[2].previous_tokens);
        let mut src = Engine(Compactor::new(
            InMemoryLedger::new(),
            CompactionPolicy {
                size_threshold: 100,
                keep_last_n: 1,
            },
        ));
        let again = check(&t, &mut full(|h| src.view(h)), &Chars).unwrap();
        assert_eq!(again.digest, r.digest);
    }

    /// A ledger that is not idempotent: every record gets a fresh summary.
    #[derive(Default)]
    struct Forgetful(InMemoryLedger, AtomicU64);
    impl ToolResultLedger for Forgetful {
        fn record(
            &self,
            id: &str,
            name: &str,
            args: &str,
            content: &str,
        ) -> Result<Handle, LedgerError> {
            let mut h = self.0.record(id, name, args, content)?;
            h.summary_oneliner = format!("call {}", self.1.fetch_add(1, Ordering::Relaxed));
            Ok(h)
        }
        fn get(&self, mem_id: &str) -> Result<Option<Recorded>, LedgerError> {
            self.0.get(mem_id)
        }
        fn get_by_call_id(&self, id: &str) -> Result<Option<Recorded>, LedgerError> {
            self.0.get_by_call_id(id)
        }
    }

    /// Rebuilds its compactor every call, so stubs come from the ledger anew.
    struct Unstable(Forgetful);
    impl Unstable {
        fn view<'h>(&mut self, history: &'h [Message]) -> Result<PolicyView<'h>, LedgerError> {
            let r = Compactor::new(
                &self.0,
                CompactionPolicy {
                    size_threshold: 100,
                    keep_last_n: 1,
                },
            )
            .rewrite(history)?;
            Ok(PolicyView {
                view: r.view,
                compacted: r
                    .compacted
                    .iter()
                    .map(|h| h.tool_call_id.as_str().into())
                    .collect(),
            })
        }
    }

    #[test]
    fn a_non_deterministic_stub_is_caught_with_its_place() {
        let t = trace();
        let mut src = Unstable(Forgetful::default());
        let r = check(&t, &mut full(|h| src.view(h)), &Chars).unwrap();
        let first = &r.violations[0];
        assert_eq!(
            (first.call, first.kind, first.tool_use_id.as_deref()),
            (4, "stub-changed", Some("t0"))
        );
        assert!(
            first.before.contains("call 0") && first.after.contains("call 1"),
            "{first:?}"
        );
        assert!(
            r.violations
                .iter()
                .any(|v| v.kind == "prefix-changed" && v.message == 2)
        );
    }

    /// Sends every call's history unchanged, except that from call
    /// `from` on, message 0 is another message object: with equal bytes
    /// (a copy) nothing is wrong; with other bytes the prefix changed.
    struct Swapped {
        from: usize,
        other: Message,
        calls: usize,
    }
    impl Swapped {
        fn view<'h>(&mut self, history: &'h [Message]) -> Result<PolicyView<'h>, LedgerError> {
            self.calls += 1;
            let mut view = tracecost_engine::rewrite::WireView::unchanged(history);
            if self.calls >= self.from {
                // Leaked so the view may borrow it for 'h (a test only).
                let other: &'h Message = Box::leak(Box::new(self.other.clone()));
                view.messages[0] = tracecost_engine::rewrite::WireMessage::unchanged(other);
            }
            Ok(PolicyView {
                view,
                compacted: Vec::new(),
            })
        }
    }

    #[test]
    fn a_message_made_of_other_objects_is_compared_by_its_bytes() {
        let t = trace();
        let copy = t.messages[0].clone();
        let mut src = Swapped {
            from: 3,
            other: copy,
            calls: 0,
        };
        let r = check(&t, &mut full(|h| src.view(h)), &Chars).unwrap();
        assert!(r.violations.is_empty(), "{:?}", r.violations);
        let other = Message::from_json(r#"{"role":"user","content":"something else"}"#).unwrap();
        let mut src = Swapped {
            from: 3,
            other,
            calls: 0,
        };
        let r = check(&t, &mut full(|h| src.view(h)), &Chars).unwrap();
        let first = &r.violations[0];
        assert_eq!(
            (first.call, first.kind, first.message),
            (3, "prefix-changed", 0)
        );
        assert_eq!(r.calls[2].messages_kept, 0);
    }

    #[test]
    fn a_run_checked_incrementally_gives_the_report_of_every_view_rebuilt() {
        let t = trace();
        for config in [
            "off+none",
            "ledger:t=100,k=1+none",
            "ledger:t=400,k=2+tail:ttl=5m",
            "clear-tool-uses:trigger=300,keep=1+none",
            "clear-tool-uses:trigger=300,keep=2,at-least=900,inputs=true+none",
            "langchain-clear:trigger=100,keep=1+none",
            "langchain-clear:trigger=100,keep=1,at-least=200+none",
        ] {
            let compaction = config
                .parse::<tracecost_policy::Config>()
                .unwrap()
                .compaction;
            let mut run = CompactionRun::new(&compaction);
            let rebuilt = check(&t, &mut full(|h| run.view(h, 0, &Chars)), &Chars).unwrap();
            let mut source = RunSource {
                run: CompactionRun::new(&compaction),
                tokens: &Chars,
                fixed_tokens: 0,
                progress: None,
                state: ViewState::default(),
            };
            let incremental = check(&t, &mut source, &Chars).unwrap();
            assert_eq!(incremental, rebuilt, "{config}");
        }
    }

    #[test]
    fn compaction_changes_are_found_whether_the_list_grew_or_not() {
        let ids = |l: &[&str]| l.iter().map(|s| Arc::from(*s)).collect::<Vec<Arc<str>>>();
        let names = |v: Vec<Arc<str>>| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let (new, gone) = compaction_changes(&ids(&["b", "a"]), &ids(&["b", "a", "d", "c"]));
        assert_eq!(
            (names(new), names(gone)),
            (vec!["c".into(), "d".into()], vec![])
        );
        let (new, gone) = compaction_changes(&ids(&["b", "a", "c"]), &ids(&["a", "d"]));
        assert_eq!(
            (names(new), names(gone)),
            (vec!["d".into()], vec!["b".into(), "c".into()])
        );
    }
}

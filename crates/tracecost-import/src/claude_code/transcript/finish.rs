//! A history segment made a trace: named by its part, its default model
//! the most common one, its hidden prefix (the system prompt and tools a
//! transcript does not hold) estimated from the first recorded usage, and
//! the status quo Claude Code ran. Kept apart from the history rules
//! because none of this depends on how the lines were read.

use std::collections::HashMap;

use super::history::{Draft, Segment};
use super::notes::{Note, Tally};
use crate::ImportOptions;
use crate::claude_code::FileInfo;
use crate::claude_code::usage::ResponseKey;
use crate::common::estimate_tokens;
use tracecost_engine::cache::ProviderKind;
#[cfg(doc)]
use tracecost_trace::CLAUDE_CODE_STATUS_QUO;
use tracecost_trace::{Call, Prompt, Trace};

/// What one file gave.
#[derive(Debug, Default)]
pub(super) struct FileResult {
    pub(super) traces: Vec<Trace>,
    /// Per trace, per call: its response's identity.
    pub(super) keys: Vec<Vec<Option<ResponseKey>>>,
    pub(super) tally: Tally,
    pub(super) skipped_lines: usize,
    pub(super) empty: bool,
}

/// What a recorded Claude Code session ran: the tool results its
/// microcompaction cleared in place where the transcript's
/// `microcompact_boundary` lines say (`recorded`; none where there are
/// none), and Claude Code's markers with the TTL each call wrote with.
/// Claude Code asks for an hour or five minutes depending on the account,
/// the thread (main conversation or subagent) and its version, so the TTL
/// is the record's, call by call; where usage does not split the writes by
/// TTL it resolves to five minutes, as [`CLAUDE_CODE_STATUS_QUO`]. Every
/// transcript gets this one string, cleared or split or not, so that the
/// traces of one session and account, replayed under their status quos,
/// meet one simulated cache.
pub const CLAUDE_CODE_RECORDED_STATUS_QUO: &str = "recorded+claude-code:ttl=recorded";

/// The status quo of a Claude Code session read whole across its
/// compactions ([`crate::ImportOptions::join_compactions`]): its
/// autocompact where the record shows each compaction ran, its clearing
/// as recorded.
pub const CLAUDE_CODE_AUTOCOMPACT_STATUS_QUO: &str =
    "claude-code-autocompact:trigger=recorded+claude-code:ttl=recorded";

/// Adds the traces of one conversation's segments (`base`, then
/// `base.part2`, … after each compaction) to `out`.
#[allow(clippy::too_many_arguments)]
pub(super) fn push_traces(
    out: &mut FileResult,
    tally: &mut Tally,
    done: Vec<Segment>,
    base: &str,
    description: &str,
    session: &str,
    info: &FileInfo,
    opts: &ImportOptions,
) {
    let with_calls = done.iter().filter(|s| !s.calls.is_empty()).count();
    let mut part = 0;
    for seg in done {
        if seg.calls.is_empty() {
            if with_calls > 0 && !seg.messages.is_empty() {
                tally.bump(Note::NoCallSegment);
            }
            continue;
        }
        part += 1;
        let name = if part == 1 {
            base.to_owned()
        } else {
            format!("{base}.part{part}")
        };
        let repeated: usize = seg.calls.iter().map(|c| c.rows.saturating_sub(1)).sum();
        tally.add(Note::RepeatedUsage, repeated);
        out.keys
            .push(seg.calls.iter().map(|c| c.key.clone()).collect());
        let mut t = build_trace(seg, name, description.to_owned(), opts);
        t.project = Some(info.project.clone());
        t.account = Some(info.account.clone());
        // Continuations and subagents count once, with the conversation
        // they belong to.
        t.session = (t.name != session).then(|| session.to_owned());
        out.traces.push(t);
    }
}

fn build_trace(seg: Segment, name: String, description: String, opts: &ImportOptions) -> Trace {
    // The default model: the most common one, the earliest on a tie.
    let mut counts: HashMap<&str, (usize, usize)> = HashMap::new();
    for (i, c) in seg.calls.iter().enumerate() {
        if let Some(m) = c.model.as_deref() {
            let e = counts.entry(m).or_insert((0, i));
            e.0 += 1;
        }
    }
    let model = counts
        .iter()
        .max_by(|a, b| (a.1.0, std::cmp::Reverse(a.1.1)).cmp(&(b.1.0, std::cmp::Reverse(b.1.1))))
        .map(|(m, _)| (*m).to_owned())
        .or_else(|| opts.default_model.clone())
        .unwrap_or_else(|| "unknown".to_owned());
    let hidden = seg
        .calls
        .iter()
        .find_map(|c| {
            let total = c.usage.as_ref()?.total_input()?;
            let visible = estimate_tokens(seg.messages.get(..c.messages).unwrap_or(&[]));
            Some(total.saturating_sub(visible))
        })
        .unwrap_or(0);
    let calls: Vec<Call> = seg
        .calls
        .into_iter()
        .flat_map(|d| draft_calls(d, &model))
        .collect();
    let status_quo = status_quo(&calls);
    Trace {
        name,
        description,
        provider: ProviderKind::Anthropic,
        model,
        // Claude Code marks the tools, the system prompt and the last block
        // of every request (a rolling breakpoint, each request reading what
        // the previous one wrote), with the TTL the usage shows it asked for.
        status_quo: Some(status_quo),
        project: None,
        account: None,
        session: None,
        hidden_prefix_tokens: hidden,
        source: None,
        prompts: vec![Prompt::default()],
        messages: seg.messages,
        calls,
    }
}

/// What a conversation ran: Claude Code's caching and clearing; read whole
/// across a compaction, its autocompact too, where the record shows each
/// compaction ran.
fn status_quo(calls: &[Call]) -> String {
    if calls.iter().any(|c| c.compacted.is_some()) {
        CLAUDE_CODE_AUTOCOMPACT_STATUS_QUO.to_owned()
    } else {
        CLAUDE_CODE_RECORDED_STATUS_QUO.to_owned()
    }
}

/// The calls of one response: one, or one per recorded iteration (each a
/// request of its own, billed at its own model; the response's own
/// requests all sent the history the response followed, so none is read as
/// a prompt change). Results cleared before the response go with its first
/// request. An iteration starts when the one before it ended, so each after
/// the first has no start of its own: back-to-back with the one before (it
/// reads what that one cached, where a shared start would make them
/// parallel).
fn draft_calls(d: Draft, default_model: &str) -> Vec<Call> {
    let own = d.model.filter(|m| m != default_model);
    if d.iterations.is_empty() {
        return vec![Call {
            messages: d.messages,
            start_ms: d.start_ms,
            model: own,
            prompt: 0,
            markers: None,
            usage: d.usage.map(Box::new),
            cleared: d.cleared,
            compacted: d.compacted,
        }];
    }
    let mut cleared = Some(d.cleared);
    let mut compacted = d.compacted;
    d.iterations
        .into_iter()
        .enumerate()
        .map(|(i, (advisor, usage))| Call {
            messages: d.messages,
            start_ms: d.start_ms.filter(|_| i == 0),
            model: match advisor {
                Some(m) => (m != default_model).then_some(m),
                None => own.clone(),
            },
            prompt: 0,
            markers: None,
            usage: Some(Box::new(usage)),
            cleared: cleared.take().unwrap_or_default(),
            compacted: compacted.take(),
        })
        .collect()
}

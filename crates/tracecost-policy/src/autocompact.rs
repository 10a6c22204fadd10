//! Claude Code's summarising autocompact, as the parts it cuts a
//! conversation into.
//!
//! Before a call whose context (the prompt, the summary heading the
//! history if any, and the history since) comes to more than the trigger,
//! Claude Code makes a call of its own: it sends that whole context with an
//! instruction to summarise it, and the model writes the summary. From
//! there the history restarts: the summary (a user message) followed by
//! what the conversation adds afterwards. The trace model holds one
//! append-only history per trace, so each compaction ends a part — its last
//! call is the summarising one — and the next part's history starts with
//! the summary, as Claude Code's own transcripts are imported (`.part2`).
//! Replaying the parts in start-time order against one cache prices what
//! the summary costs and what of the cache it breaks: the system prompt
//! and tools stay a cached prefix, the summary and everything after it are
//! written anew.
//!
//! A conversation Claude Code compacted, read whole across its compactions
//! (each call after one says what the record shows of it,
//! [`Call::compacted`]), is cut again by the same rule: a compaction the
//! user asked for (`/compact`) where it ran, no threshold predicting it;
//! the others where the trigger is passed. The `k`-th compaction the
//! trigger makes is given the `k`-th one the record shows at the trigger,
//! for its summary's size (what the record shows it left).

//! The same machinery serves every summarising policy ([`Summarising`]):
//! what differs between them is when they summarise, what the summarising
//! call reads, what of the history stays whole after the summary, and what
//! the record says (only Claude Code's own records show its compactions).

use crate::BlockTokens;
use tracecost_engine::message::{BlockKind, Message, Role};
use tracecost_trace::{Call, Prompt, RecordedUsage, Trace};

/// What Claude Code appends to the context it asks to be summarised (its
/// own prompt is longer; this one says what the call is for).
pub const SUMMARISE_INSTRUCTION: &str = "Your task is to create a detailed summary of the conversation so far, keeping what is needed to continue the work without losing context.";

/// What Anthropic's compaction asks for: its default prompt (the
/// documentation's, in short) asks for a summary that lets the task go on
/// where the transcript cannot be seen.
pub const ANTHROPIC_COMPACT_INSTRUCTION: &str = "You have written a partial transcript for the initial task above. Please write a summary of the transcript, to continue the task in a future context where this history is replaced by the summary.";

/// What OpenAI's compaction is asked (its prompt is the server's and not
/// published; this one says what the call is for).
pub const OPENAI_COMPACT_INSTRUCTION: &str = "Compact the conversation so far into an item that carries forward its state, so the work can go on from it.";

/// What LangChain's summarising call ends with (its `DEFAULT_SUMMARY_PROMPT`
/// is longer: a role, an objective and the sections to fill).
pub const LANGCHAIN_SUMMARY_INSTRUCTION: &str = "Extract the highest quality, most relevant context from the conversation history above; it will overwrite that history.";

/// A summarising policy's rules: when it summarises, what its summarising
/// call reads, what stays whole after the summary, how large a summary is
/// when the record does not say. Each policy's values are in
/// [`crate::Compaction::summarising`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summarising {
    /// Context tokens (the prompt before the history, the summary heading
    /// it, the history since, as the provider counts them) past which it
    /// summarises.
    pub trigger_tokens: Option<u64>,
    /// Whether reaching `trigger_tokens` is enough (`>=`), rather than
    /// passing it (`>`).
    pub at_trigger: bool,
    /// Messages of the history (the summary heading it counted) at which it
    /// summarises.
    pub trigger_messages: Option<usize>,
    /// Messages at the end of the history kept whole after the summary; the
    /// cut moves back to the call whose results would be parted from it.
    pub keep_messages: usize,
    /// `None`: the summarising call reads the whole context (prompt,
    /// history, instruction) and ends the part it closes. `Some(t)`: it is a
    /// call of its own that reads only the messages it summarises, their
    /// last `t` tokens starting on a user's message, and the instruction,
    /// without the prompt.
    pub trim_tokens: Option<u64>,
    /// Whether the record's compactions are followed: a `/compact` where it
    /// ran, and the sizes of those the trigger makes (Claude Code's own).
    pub follows_record: bool,
    /// Tokens of a summary the record does not size.
    pub summary_tokens: u64,
    /// The instruction ending the summarising call.
    pub instruction: &'static str,
}

/// One part of a trace cut at its compactions.
#[derive(Debug, Clone)]
pub struct Part {
    /// The part as a trace of its own: its history starts with the
    /// summary that ended the part before (none for the first part).
    pub trace: Trace,
    /// The part's summarising call (its last), when the part ends in a
    /// compaction, or is a summarising call alone.
    pub summary_call: Option<usize>,
    /// Per message of the part, the trace's message it is (`None`: the
    /// summary heading it, the instruction ending it).
    pub messages_from: Vec<Option<usize>>,
    /// Per call of the part, the trace's call it is (`None`: the
    /// summarising call).
    pub calls_from: Vec<Option<usize>>,
}

/// Writes the `k`-th summary standing for the compaction recorded before
/// a call, if any: the summary and the tokens it is written in.
pub type SummaryWriter<'a> = dyn Fn(usize, Option<&Call>) -> (Message, u64) + 'a;

/// Where the trace is compacted under `rule` and what each part holds.
///
/// `fixed_tokens` gives the tokens a call sends before its messages (tools,
/// system prompt); `tokens` counts the history's blocks; `summary(k, c)` is
/// the summary written at the `k`-th compaction (from 0) and the tokens it
/// is written in (the summarising call's output), `c` the recorded
/// call made just after the compaction it stands for (whose
/// [`Call::compacted`] says what the record shows of it), if any. A trace that
/// never passes the trigger (and, under a rule that follows the record,
/// records no `/compact`) is one part, itself.
pub fn split(
    trace: &Trace,
    rule: &Summarising,
    fixed_tokens: &dyn Fn(&Call) -> u64,
    tokens: &dyn BlockTokens,
    summary: &SummaryWriter<'_>,
) -> Vec<Part> {
    // Tokens of messages[..i], once.
    let mut before = Vec::with_capacity(trace.messages.len() + 1);
    before.push(0u64);
    for m in &trace.messages {
        let t = tokens.history_tokens(std::slice::from_ref(m));
        before.push(before.last().copied().unwrap_or(0) + t);
    }
    let instruction = Message::from_json(
        &serde_json::json!({"role": "user", "content": [{"type": "text", "text": rule.instruction}]})
            .to_string(),
    )
    .expect("the instruction is a valid message");

    // The compactions the record shows at the trigger, in order.
    let mut recorded_auto = trace
        .calls
        .iter()
        .filter(|c| rule.follows_record && c.compacted.as_deref().is_some_and(|k| !k.manual));
    let mut parts = Vec::new();
    // The current part: the summary heading it (and its tokens), the first
    // original message after that summary, and its calls so far.
    let mut head: Option<(Message, u64)> = None;
    let mut base = 0usize;
    let mut calls: Vec<Call> = Vec::new();
    let mut calls_from: Vec<Option<usize>> = Vec::new();
    let mut summaries = 0usize;
    for (ci, call) in trace.calls.iter().enumerate() {
        // A call never sends less than what its part starts from.
        let n = call.messages.clamp(base, trace.messages.len());
        let head_tokens = head.as_ref().map_or(0, |(_, t)| *t);
        let context = fixed_tokens(call) + head_tokens + (before[n] - before[base]);
        let headed = head.is_some();
        // Where the rule follows the record: a `/compact` where it ran;
        // with no threshold of its own, every compaction the record shows.
        let asked = (rule.follows_record
            && call
                .compacted
                .as_deref()
                .is_some_and(|k| k.manual || rule.trigger_tokens.is_none()))
        .then_some(call);
        let passed = rule.trigger_tokens.is_some_and(|t| {
            if rule.at_trigger {
                context >= t
            } else {
                context > t
            }
        }) || rule
            .trigger_messages
            .is_some_and(|m| usize::from(headed) + n - base >= m);
        // Only what came since the last summary is summarised again: a
        // part whose summary alone passes the trigger is not cut anew.
        let cut = (asked.is_some() || passed)
            .then(|| kept_from(&trace.messages, headed, base, n, rule.keep_messages))
            .flatten()
            .filter(|&cut| cut > base);
        if let Some(cut) = cut {
            let stands_for = asked.or_else(|| recorded_auto.next());
            let (next, written) = summary(summaries, stands_for);
            summaries += 1;
            // The summary is the call's output; its input is what the
            // simulation bills (nothing of it was recorded).
            let summarising = |messages: usize, prompt: usize| Call {
                messages,
                start_ms: call.start_ms,
                model: call.model.clone(),
                prompt,
                markers: None,
                usage: Some(Box::new(RecordedUsage {
                    output_tokens: Some(written),
                    ..RecordedUsage::default()
                })),
                cleared: Vec::new(),
                compacted: None,
            };
            let head_message = head.take().map(|(m, _)| m);
            match rule.trim_tokens {
                None => {
                    // The whole context and the instruction: the part's
                    // last call.
                    let mut messages: Vec<Message> = head_message.into_iter().collect();
                    messages.extend_from_slice(&trace.messages[base..n]);
                    messages.push(instruction.clone());
                    calls.push(summarising(messages.len(), call.prompt));
                    calls_from.push(None);
                    parts.push(Part {
                        trace: part_trace(trace, parts.len(), messages, std::mem::take(&mut calls)),
                        summary_call: Some(calls_from.len() - 1),
                        messages_from: origins(headed, base..n, true),
                        calls_from: std::mem::take(&mut calls_from),
                    });
                }
                Some(limit) => {
                    // The part ends with the call before; the summarising
                    // call is a part of its own, reading the last messages
                    // it summarises, without the prompt.
                    let mut messages: Vec<Message> = head_message.clone().into_iter().collect();
                    messages.extend_from_slice(&trace.messages[base..n]);
                    if !calls.is_empty() {
                        parts.push(Part {
                            trace: part_trace(
                                trace,
                                parts.len(),
                                messages,
                                std::mem::take(&mut calls),
                            ),
                            summary_call: None,
                            messages_from: origins(headed, base..n, false),
                            calls_from: std::mem::take(&mut calls_from),
                        });
                    }
                    let mut read: Vec<(Message, Option<usize>)> = head_message
                        .map(|m| (m, None))
                        .into_iter()
                        .chain((base..cut).map(|i| (trace.messages[i].clone(), Some(i))))
                        .collect();
                    let first = trimmed_start(&read, limit, tokens);
                    read.drain(..first);
                    // Nothing left to read: LangChain writes a fixed line
                    // ("Previous conversation was too long to summarize.")
                    // and calls no model.
                    if !read.is_empty() {
                        let (mut messages, mut from): (Vec<Message>, Vec<Option<usize>>) =
                            read.into_iter().unzip();
                        messages.push(instruction.clone());
                        from.push(None);
                        let mut t = part_trace(trace, parts.len(), messages, Vec::new());
                        t.prompts.push(Prompt::default());
                        t.calls = vec![summarising(t.messages.len(), t.prompts.len() - 1)];
                        parts.push(Part {
                            trace: t,
                            summary_call: Some(0),
                            messages_from: from,
                            calls_from: vec![None],
                        });
                    }
                }
            }
            let sent = tokens.history_tokens(std::slice::from_ref(&next));
            head = Some((next, sent));
            base = cut;
        }
        let offset = usize::from(head.is_some());
        calls.push(Call {
            messages: offset + n - base,
            // The part says where its compaction is.
            compacted: None,
            ..call.clone()
        });
        calls_from.push(Some(ci));
    }
    let headed = head.is_some();
    let mut messages: Vec<Message> = head.map(|(m, _)| m).into_iter().collect();
    let rest = base.min(trace.messages.len())..trace.messages.len();
    messages.extend_from_slice(&trace.messages[rest.clone()]);
    parts.push(Part {
        trace: part_trace(trace, parts.len(), messages, calls),
        summary_call: None,
        messages_from: origins(headed, rest, false),
        calls_from,
    });
    parts
}

/// The first message of `messages[base..n]` kept whole after a summary
/// that keeps the last `keep` messages of the history (the summary heading
/// it, when `headed`, counted first): `None` when the history holds no
/// more than that. A cut that would part tool results from their call
/// moves back to the call (LangChain's `_find_safe_cutoff`), or, with no
/// call found, past the results; a cut at the summary heading the history
/// is none.
pub fn kept_from(
    messages: &[Message],
    headed: bool,
    base: usize,
    n: usize,
    keep: usize,
) -> Option<usize> {
    let len = usize::from(headed) + n - base;
    if len <= keep {
        return None;
    }
    // `len - keep` counts from the history's start, the summary included.
    let target = base + (len - keep) - usize::from(headed);
    if target >= n || !holds_results(&messages[target]) {
        return Some(target);
    }
    let mut ids = Vec::new();
    let mut past = target;
    while past < n && holds_results(&messages[past]) {
        ids.extend(
            messages[past]
                .blocks()
                .iter()
                .filter_map(|b| match b.kind() {
                    BlockKind::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                    _ => None,
                }),
        );
        past += 1;
    }
    let call = (base..target).rev().find(|&i| {
        messages[i].role() == Role::Assistant
            && messages[i]
                .blocks()
                .iter()
                .any(|b| matches!(b.kind(), BlockKind::ToolUse { id, .. } if ids.contains(id)))
    });
    Some(call.unwrap_or(past))
}

/// Whether `m` carries tool results (LangChain's `ToolMessage`s).
fn holds_results(m: &Message) -> bool {
    m.role() == Role::User
        && m.blocks()
            .iter()
            .any(|b| matches!(b.kind(), BlockKind::ToolResult { .. }))
}

/// Whether `m` is a user's own message (LangChain's `HumanMessage`): a
/// user message of text, or of blocks not all tool results.
fn from_the_user(m: &Message) -> bool {
    m.role() == Role::User
        && (m.blocks().is_empty()
            || m.blocks()
                .iter()
                .any(|b| !matches!(b.kind(), BlockKind::ToolResult { .. })))
}

/// Where the summarising call's reading starts in `read`: the last messages
/// within `limit` tokens, starting on a user's message
/// (`trim_messages(strategy="last", start_on="human")`). A message larger
/// than what is left is left out whole (LangChain may keep part of its
/// text, `allow_partial`).
fn trimmed_start(read: &[(Message, Option<usize>)], limit: u64, tokens: &dyn BlockTokens) -> usize {
    let mut used = 0u64;
    let mut first = read.len();
    for (i, (m, _)) in read.iter().enumerate().rev() {
        let t = tokens.history_tokens(std::slice::from_ref(m));
        if used + t > limit {
            break;
        }
        used += t;
        first = i;
    }
    (first..read.len())
        .find(|&i| from_the_user(&read[i].0))
        .unwrap_or(read.len())
}

/// Where a part's messages come from: the summary heading it (when
/// `headed`), the trace's messages `range`, the instruction (when
/// `instructed`).
fn origins(headed: bool, range: std::ops::Range<usize>, instructed: bool) -> Vec<Option<usize>> {
    let mut v: Vec<Option<usize>> = Vec::new();
    if headed {
        v.push(None);
    }
    v.extend(range.map(Some));
    if instructed {
        v.push(None);
    }
    v
}

/// Part `k` of `trace`: its messages and calls, the rest as the trace's
/// (the first part keeps the trace's name).
fn part_trace(trace: &Trace, k: usize, messages: Vec<Message>, calls: Vec<Call>) -> Trace {
    Trace {
        name: if k == 0 {
            trace.name.clone()
        } else {
            format!("{}.part{}", trace.name, k + 1)
        },
        session: trace
            .session
            .clone()
            .or_else(|| (k > 0).then(|| trace.name.clone())),
        messages,
        calls,
        ..trace_without_history(trace)
    }
}

/// `trace`'s identity and prompts, without its history.
fn trace_without_history(trace: &Trace) -> Trace {
    Trace {
        name: trace.name.clone(),
        description: trace.description.clone(),
        provider: trace.provider,
        model: trace.model.clone(),
        status_quo: trace.status_quo.clone(),
        project: trace.project.clone(),
        account: trace.account.clone(),
        session: trace.session.clone(),
        source: trace.source.clone(),
        hidden_prefix_tokens: trace.hidden_prefix_tokens,
        prompts: trace.prompts.clone(),
        messages: Vec::new(),
        calls: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_engine::message::ContentBlock;
    use tracecost_trace::RecordedCompaction;

    /// One token per character of text.
    struct Chars;

    impl BlockTokens for Chars {
        fn block_tokens(&self, block: &ContentBlock) -> u64 {
            block.to_json().len() as u64
        }
    }

    fn text(role: &str, t: &str) -> Message {
        Message::from_json(&format!(
            r#"{{"role":"{role}","content":[{{"type":"text","text":"{t}"}}]}}"#
        ))
        .unwrap()
    }

    /// Claude Code's rule at `trigger`.
    fn cc(trigger: u64) -> Summarising {
        crate::Compaction::ClaudeCodeAutocompact {
            trigger: crate::AutocompactTrigger::Tokens(trigger),
            summary: 7,
        }
        .summarising()
        .unwrap()
    }

    fn summary(k: usize, _: Option<&Call>) -> (Message, u64) {
        (text("user", &format!("summary {k}")), 7)
    }

    /// A conversation of `turns` user/assistant pairs, one call per user
    /// message, each message about 40 characters.
    fn conversation(turns: usize) -> Trace {
        let mut t = empty_trace();
        for i in 0..turns {
            t.messages
                .push(text("user", &format!("question {i:03} xxxxxxxxxxxxxxxx")));
            t.calls.push(Call {
                messages: t.messages.len(),
                start_ms: Some(1000 * i as u64),
                ..Call::default()
            });
            t.messages.push(text(
                "assistant",
                &format!("answer {i:03} yyyyyyyyyyyyyyyyyy"),
            ));
        }
        t
    }

    fn empty_trace() -> Trace {
        Trace {
            name: "t".into(),
            description: String::new(),
            provider: tracecost_engine::cache::ProviderKind::Anthropic,
            model: "m".into(),
            status_quo: None,
            project: None,
            account: None,
            session: None,
            source: None,
            hidden_prefix_tokens: 0,
            prompts: vec![tracecost_trace::Prompt::default()],
            messages: Vec::new(),
            calls: Vec::new(),
        }
    }

    #[test]
    fn under_the_trigger_the_trace_is_one_part_itself() {
        let t = conversation(5);
        let parts = split(&t, &cc(1_000_000), &|_| 0, &Chars, &summary);
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].summary_call, None);
        assert_eq!(parts[0].trace.messages, t.messages);
        assert_eq!(parts[0].trace.calls, t.calls);
        assert_eq!(
            parts[0].messages_from,
            (0..10).map(Some).collect::<Vec<_>>()
        );
        assert_eq!(parts[0].calls_from, (0..5).map(Some).collect::<Vec<_>>());
    }

    #[test]
    fn past_the_trigger_a_summary_call_ends_the_part_and_the_history_restarts() {
        let t = conversation(6);
        let per_message = Chars.history_tokens(&t.messages[..1]);
        assert!(per_message > 0);
        assert_eq!(per_message, Chars.history_tokens(&t.messages[1..2]));
        // Passed at the fourth call (7 messages), not at the third (5).
        let trigger = 100 + 6 * per_message;
        let parts = split(&t, &cc(trigger), &|_| 100, &Chars, &summary);
        assert_eq!(parts.len(), 2);
        let first = &parts[0];
        // Calls 0..3 as recorded, then the summarising call: the whole
        // context and the instruction.
        assert_eq!(first.summary_call, Some(3));
        assert_eq!(first.trace.calls.len(), 4);
        assert_eq!(&first.trace.calls[..3], &t.calls[..3]);
        let s = &first.trace.calls[3];
        assert_eq!(s.messages, 8);
        assert_eq!(first.trace.messages[..7], t.messages[..7]);
        assert!(
            first.trace.messages[7]
                .to_json()
                .contains("detailed summary")
        );
        // The summary is the call's output, at its size.
        assert_eq!(s.recorded_usage().unwrap().output_tokens, Some(7));
        assert_eq!(s.recorded_usage().unwrap().input_tokens, None);
        assert_eq!(s.start_ms, t.calls[3].start_ms);
        // After: the summary and what came after it; the triggering call
        // sends the summary alone.
        let second = &parts[1];
        assert_eq!(second.summary_call, None);
        assert_eq!(second.trace.name, "t.part2");
        assert_eq!(second.trace.session.as_deref(), Some("t"));
        assert_eq!(second.trace.messages[0], summary(0, None).0);
        assert_eq!(second.trace.messages[1..], t.messages[7..]);
        let sent: Vec<usize> = second.trace.calls.iter().map(|c| c.messages).collect();
        assert_eq!(sent, [1, 3, 5]);
        assert_eq!(second.trace.calls[0].start_ms, t.calls[3].start_ms);
        // Each part says where its messages and calls come from.
        let mut from: Vec<Option<usize>> = (0..7).map(Some).collect();
        from.push(None);
        assert_eq!(first.messages_from, from);
        assert_eq!(first.calls_from, [Some(0), Some(1), Some(2), None]);
        let mut from = vec![None];
        from.extend((7..12).map(Some));
        assert_eq!(second.messages_from, from);
        assert_eq!(second.calls_from, [Some(3), Some(4), Some(5)]);
    }

    #[test]
    fn a_summary_that_alone_passes_the_trigger_is_not_summarised_again_at_once() {
        let t = conversation(4);
        let long = |_: usize, _: Option<&Call>| (text("user", &"s".repeat(1000)), 1000);
        let parts = split(&t, &cc(50), &|_| 0, &Chars, &long);
        // Every call that adds to the summary compacts; none loops.
        assert!(parts.len() <= t.calls.len() + 1);
        for p in &parts[..parts.len() - 1] {
            assert!(p.summary_call.is_some());
        }
        let calls: usize = parts
            .iter()
            .map(|p| p.trace.calls.len() - usize::from(p.summary_call.is_some()))
            .sum();
        assert_eq!(calls, t.calls.len());
    }

    /// A conversation read whole across its compactions: a `/compact` is
    /// put back where it ran, under the trigger; the compactions the
    /// trigger makes take the record's, in order, for their summaries; no
    /// part's call says it was compacted (the part says it).
    #[test]
    fn a_recorded_compact_runs_where_it_ran_and_the_trigger_takes_the_records_sizes() {
        let mut t = conversation(8);
        let auto = |post: u64| RecordedCompaction {
            post_tokens: Some(post),
            ..RecordedCompaction::default()
        };
        // /compact before the third call; Claude Code's own compactions
        // recorded before the sixth and the eighth.
        t.calls[2].compacted = Some(Box::new(RecordedCompaction {
            manual: true,
            post_tokens: Some(11),
            ..RecordedCompaction::default()
        }));
        t.calls[5].compacted = Some(Box::new(auto(22)));
        t.calls[7].compacted = Some(Box::new(auto(33)));
        let per_message = Chars.history_tokens(&t.messages[..1]);
        let stood_for = std::cell::RefCell::new(Vec::new());
        let sized = |k: usize, c: Option<&Call>| {
            stood_for
                .borrow_mut()
                .push(c.and_then(|c| c.compacted.as_ref()?.post_tokens));
            summary(k, c)
        };
        // Under the trigger: only the /compact.
        let parts = split(&t, &cc(1_000_000), &|_| 0, &Chars, &sized);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].calls_from, [Some(0), Some(1), None]);
        assert_eq!(*stood_for.borrow(), [Some(11)]);
        // A trigger passed at five messages since the summary: the
        // trigger's compactions take the recorded ones' sizes in order.
        stood_for.borrow_mut().clear();
        let trigger = 4 * per_message + per_message / 2;
        let parts = split(&t, &cc(trigger), &|_| 0, &Chars, &sized);
        assert!(parts.len() > 2, "{}", parts.len());
        let sizes = stood_for.borrow().clone();
        assert_eq!(sizes[..3], [Some(11), Some(22), Some(33)]);
        assert!(sizes[3..].iter().all(Option::is_none), "{sizes:?}");
        assert!(
            parts
                .iter()
                .all(|p| p.trace.calls.iter().all(|c| c.compacted.is_none()))
        );
        let kept: usize = parts
            .iter()
            .map(|p| p.trace.calls.len() - usize::from(p.summary_call.is_some()))
            .sum();
        assert_eq!(kept, t.calls.len());
    }

    /// With `trigger=recorded` every compaction the record shows, asked
    /// for or automatic, runs where it ran, each with its own record's
    /// size, and no context however large makes another.
    #[test]
    fn a_recorded_trigger_compacts_where_the_record_shows_and_nowhere_else() {
        let mut t = conversation(8);
        t.calls[2].compacted = Some(Box::new(RecordedCompaction {
            manual: true,
            post_tokens: Some(11),
            ..RecordedCompaction::default()
        }));
        t.calls[5].compacted = Some(Box::new(RecordedCompaction {
            post_tokens: Some(22),
            ..RecordedCompaction::default()
        }));
        let rule = crate::Compaction::ClaudeCodeAutocompact {
            trigger: crate::AutocompactTrigger::Recorded,
            summary: 7,
        }
        .summarising()
        .unwrap();
        let stood_for = std::cell::RefCell::new(Vec::new());
        let sized = |k: usize, c: Option<&Call>| {
            stood_for
                .borrow_mut()
                .push(c.and_then(|c| c.compacted.as_ref()?.post_tokens));
            summary(k, c)
        };
        // A context far past any threshold: still only the two recorded.
        let parts = split(&t, &rule, &|_| 10_000_000, &Chars, &sized);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts[0].calls_from, [Some(0), Some(1), None]);
        assert_eq!(parts[1].calls_from, [Some(2), Some(3), Some(4), None]);
        assert_eq!(parts[2].calls_from, [Some(5), Some(6), Some(7)]);
        assert_eq!(*stood_for.borrow(), [Some(11), Some(22)]);
    }

    /// Anthropic's compaction fires on reaching its trigger, Claude Code's
    /// past it; both summarise the whole context and keep nothing else.
    #[test]
    fn anthropic_compact_summarises_on_reaching_the_trigger() {
        let t = conversation(6);
        let per_message = Chars.history_tokens(&t.messages[..1]);
        // The fourth call sends seven messages: exactly the trigger.
        let trigger = 100 + 7 * per_message;
        let rule = crate::Compaction::AnthropicCompact {
            trigger,
            summary: 7,
        }
        .summarising()
        .unwrap();
        let parts = split(&t, &rule, &|_| 100, &Chars, &summary);
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].summary_call, Some(3));
        assert!(
            parts[0].trace.messages[7]
                .to_json()
                .contains("partial transcript")
        );
        // Claude Code's rule waits for the next call.
        let parts = split(&t, &cc(trigger), &|_| 100, &Chars, &summary);
        assert_eq!(parts[0].summary_call, Some(4));
    }

    /// LangChain's rule: the summarising call is a part of its own, without
    /// the prompt, reading the last messages within `trim` tokens; the
    /// history restarts from the summary and the last `keep` messages; a
    /// message-count trigger counts the summary heading the history.
    #[test]
    fn langchain_summarize_keeps_the_last_messages_and_reads_the_trimmed_rest() {
        let t = conversation(6);
        let per_message = Chars.history_tokens(&t.messages[..1]);
        let rule = |trim: u64| {
            crate::Compaction::LangchainSummarize(crate::LangchainSummarize {
                trigger_tokens: None,
                trigger_messages: Some(5),
                keep: 2,
                trim,
                summary: 7,
            })
            .summarising()
            .unwrap()
        };
        let parts = split(&t, &rule(1_000_000), &|_| 100, &Chars, &summary);
        // The third call sends five messages: calls 0 and 1, then the
        // summarising call alone, reading messages 0..3 (5 less the 2
        // kept) and the instruction, under a prompt of its own (empty).
        assert_eq!(parts[0].calls_from, [Some(0), Some(1)]);
        assert_eq!(parts[0].summary_call, None);
        let s = &parts[1];
        assert_eq!(s.summary_call, Some(0));
        assert_eq!(s.messages_from, [Some(0), Some(1), Some(2), None]);
        assert_eq!(s.trace.calls[0].messages, 4);
        assert_eq!(s.trace.calls[0].prompt, t.prompts.len());
        assert_eq!(s.trace.prompts[s.trace.calls[0].prompt], Prompt::default());
        // Then the summary and messages 3 and 4, the third call sending
        // those three.
        let after = &parts[2];
        assert_eq!(after.messages_from[..3], [None, Some(3), Some(4)]);
        assert_eq!(after.trace.calls[0].messages, 3);
        assert_eq!(after.calls_from[0], Some(2));
        // A trim of two messages' tokens reads the last user message of
        // the two (message 2), the assistant's before it left out.
        let parts = split(&t, &rule(2 * per_message), &|_| 100, &Chars, &summary);
        assert_eq!(parts[1].messages_from, [Some(2), None]);
        // Every recorded call is sent once.
        let kept: usize = parts
            .iter()
            .map(|p| p.trace.calls.len() - usize::from(p.summary_call.is_some()))
            .sum();
        assert_eq!(kept, t.calls.len());
    }

    /// LangChain's pure rules checked against the real middleware
    /// (`tests/fixtures/langchain-summarize/make_langchain_summarize_fixture.py`,
    /// run on langchain 1.5.2 with its approximate counts): for each
    /// setting, the first message kept after the summary
    /// (`_find_safe_cutoff`, never parting tool results from their call)
    /// and the messages the summarising call read
    /// (`trim_tokens_to_summarize`) are the same, and a call that reads
    /// nothing is not made.
    #[test]
    fn cuts_and_reads_what_the_real_middleware_does() {
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/langchain-summarize/"
        );
        let read = |f: &str| std::fs::read_to_string(format!("{dir}{f}")).unwrap();
        let conversation: serde_json::Value =
            serde_json::from_str(&read("conversation.json")).unwrap();
        let messages: Vec<Message> = conversation["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| Message::from_json(&m.to_string()).unwrap())
            .collect();
        let counts: Vec<u64> = conversation["approx_tokens"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        /// LangChain's count of each message of the conversation.
        struct Approx<'a>(&'a [Message], &'a [u64]);
        impl BlockTokens for Approx<'_> {
            fn block_tokens(&self, _: &tracecost_engine::message::ContentBlock) -> u64 {
                0
            }
            fn history_tokens(&self, history: &[Message]) -> u64 {
                history
                    .iter()
                    .map(|m| {
                        let i = self.0.iter().position(|x| x == m);
                        // The instruction, the summary: not in the fixture.
                        i.map_or(1, |i| self.1[i])
                    })
                    .sum()
            }
        }
        let counter = Approx(&messages, &counts);
        let mut trace = empty_trace();
        trace.messages = messages.clone();
        trace.calls = vec![Call {
            messages: messages.len(),
            start_ms: Some(0),
            ..Call::default()
        }];
        let summarized: serde_json::Value = serde_json::from_str(&read("summarized.json")).unwrap();
        let settings = summarized["settings"].as_array().unwrap();
        assert_eq!(settings.len(), 7);
        for setting in settings {
            let config = setting["config"].as_str().unwrap();
            let c: crate::Config = format!("{config}+none").parse().unwrap();
            let rule = c.compaction.summarising().unwrap();
            let kept_from_real = setting["kept_from"].as_u64().map(|k| k as usize);
            let read_real: Vec<usize> = setting["read"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap() as usize)
                .collect();
            assert_eq!(
                kept_from(&messages, false, 0, messages.len(), rule.keep_messages),
                kept_from_real.filter(|&k| k > 0),
                "{config}"
            );
            let parts = split(&trace, &rule, &|_| 0, &counter, &summary);
            let Some(k) = kept_from_real else {
                assert_eq!(parts.len(), 1, "{config}");
                continue;
            };
            let last = parts.last().unwrap();
            let mut kept = vec![None];
            kept.extend((k..messages.len()).map(Some));
            assert_eq!(last.messages_from, kept, "{config}");
            let read: Vec<usize> = parts
                .iter()
                .filter(|p| p.summary_call.is_some())
                .flat_map(|p| p.messages_from.iter().flatten().copied())
                .collect();
            assert_eq!(read, read_real, "{config}");
        }
    }
}

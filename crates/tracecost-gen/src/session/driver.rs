//! The call driver: it runs the agent's plan one model call at a time,
//! builds the assistant's replies and the tool results that follow, times
//! every call, compacts before the model's window and cuts the history
//! into one trace per context.

use std::collections::VecDeque;

use super::corpus::Project;
use super::corpus::{COMPACT_CONTINUATION, COMPACT_REQUEST};
use super::outputs::cap;
use super::plan::{Act, Gen, Kind, Step};
use super::prompt::{PromptCache, session_prompt};
use super::{CHARS_PER_TOKEN_ESTIMATE, COMPACT_AT_PCT, HARD_LIMIT_PCT, SessionSpec};
use crate::build::{assistant, call, text, tool_result, tool_use, user, user_text};
use crate::data::text_file;
use crate::rng::Rng;
use crate::{array_chars, message_chars, messages_chars, prefix_chars};
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::message::{ContentBlock, Message};
use tracecost_trace::{Call, Prompt, RecordedUsage, Trace};

/// Output tokens of a reply: about 3.4 characters per token of its JSON,
/// with some jitter.
fn output_tokens(r: &mut Rng, reply: &Message) -> u64 {
    let chars = message_chars(reply) as u64;
    (chars * 10 / 34) * (100 + r.range(0, 25)) / 100 + 6
}

/// Time to first token of a call that sends `sent` messages.
fn first_token_ms(timing: &mut Rng, sent: usize) -> u64 {
    900 + timing.range(0, 2_600) + (sent as u64) * 15
}

/// Time to generate `tokens` at 55–85 tokens a second.
fn generation_ms(timing: &mut Rng, tokens: u64) -> u64 {
    tokens * 1000 / timing.range(55, 85)
}

/// One context: the history a run of calls sends, from the session's start
/// or from a compaction summary.
struct Segment {
    messages: Vec<Message>,
    calls: Vec<Call>,
    /// Sum of the messages' JSON characters (see [`messages_chars`]).
    chars: usize,
}

impl Segment {
    fn new(first: Message) -> Self {
        let mut s = Self {
            messages: Vec::new(),
            calls: Vec::new(),
            chars: 0,
        };
        s.push(first);
        s
    }

    fn push(&mut self, m: Message) {
        self.chars += message_chars(&m);
        self.messages.push(m);
    }

    /// [`messages_chars`] of the whole segment plus `more`.
    fn chars_with(&self, more: &[&Message]) -> usize {
        let n = self.messages.len() + more.len();
        let extra: usize = more.iter().map(|m| message_chars(m)).sum();
        array_chars(n, self.chars + extra)
    }
}

/// One model call's reply and what follows it in the history.
struct Turn {
    reply: Message,
    reply_tokens: u64,
    /// Tool results, or the user's next request; `None` after the last call.
    next: Option<Message>,
    /// The user's request, when `next` is one.
    request: Option<String>,
    /// Time to first token plus generation.
    model_ms: u64,
    /// From the end of the reply to the next request: tools running, an
    /// approval, or the user reading and typing.
    after_ms: u64,
}

impl Turn {
    /// A reply with nothing after it yet: its output tokens, and the model
    /// time from `first_token_ms` plus its generation.
    fn of(reply: Message, timing: &mut Rng, first_token_ms: u64) -> Self {
        let reply_tokens = output_tokens(timing, &reply);
        let model_ms = first_token_ms + generation_ms(timing, reply_tokens);
        Self {
            reply,
            reply_tokens,
            next: None,
            request: None,
            model_ms,
            after_ms: 0,
        }
    }
}

/// The state that carries from one call to the next.
struct Driver {
    g: Gen,
    timing: Rng,
    plan: VecDeque<Step>,
    follow_ups: usize,
    long_gap: bool,
}

impl Driver {
    /// The next step of the plan, answered by the model at `clock` with
    /// `sent` messages of history.
    fn turn(&mut self, clock: u64, sent: usize, last: bool) -> Turn {
        let g = &mut self.g;
        let timing = &mut self.timing;
        let step = self.plan.pop_front().unwrap_or_else(|| {
            Step::Reply("Done. Anything else you'd like me to look at?".to_owned())
        });
        // [`Turn::of`] adds the generation.
        let model_ms = first_token_ms(timing, sent);
        match step {
            Step::Tools(lead, acts) => {
                let mut blocks: Vec<ContentBlock> = Vec::new();
                if let Some(l) = lead {
                    blocks.push(text(&l));
                }
                let mut ids = Vec::new();
                for act in &acts {
                    let id = g.rng.tool_use_id();
                    let (name, mut input) = g.tool_input(act);
                    if let Some(full) = g.edit_input(act) {
                        input = full;
                    }
                    blocks.push(tool_use(&id, name, &input));
                    ids.push(id);
                }
                let mut turn = Turn::of(assistant(blocks), timing, model_ms);
                if last {
                    return turn;
                }
                let mut results = Vec::new();
                let mut exec = 0;
                let mut retry = Vec::new();
                for (act, id) in acts.iter().zip(&ids) {
                    let (content, is_error, ms) = g.run(act, clock + turn.model_ms);
                    let content = cap(content);
                    results.push(tool_result(id, &content, is_error));
                    exec = exec.max(ms);
                    if let Act::Edit { path, fail: true } = act {
                        retry.push(Act::Read {
                            path: path.clone(),
                            window: None,
                            missing: false,
                        });
                        retry.push(Act::Edit {
                            path: path.clone(),
                            fail: false,
                        });
                    }
                }
                for act in retry.into_iter().rev() {
                    self.plan.push_front(Step::Tools(None, vec![act]));
                }
                let needs_approval = acts.iter().any(|a| {
                    matches!(
                        a,
                        Act::Test { .. }
                            | Act::Check { .. }
                            | Act::Write { .. }
                            | Act::Fetch { .. }
                    )
                });
                if needs_approval && timing.chance(0.25) {
                    exec += timing.range(2_000, 25_000);
                }
                turn.next = Some(user(results));
                turn.after_ms = exec;
                turn
            }
            Step::Reply(body) => {
                let mut turn = Turn::of(assistant(vec![text(&body)]), timing, model_ms);
                if last {
                    return turn;
                }
                self.follow_ups += 1;
                let away = timing.chance(0.25) || (self.follow_ups == 2 && !self.long_gap);
                turn.after_ms = if away {
                    self.long_gap = true;
                    timing.range(6 * 60_000, 20 * 60_000)
                } else if timing.chance(0.2) {
                    timing.range(3 * 60_000, 5 * 60_000)
                } else {
                    timing.range(20_000, 180_000)
                };
                let kind = g.follow_up();
                g.new_focus();
                let request = g.task_text(kind, false);
                turn.next = Some(user_text(&request));
                turn.request = Some(request);
                self.plan = g.plan(kind, false);
                turn
            }
        }
    }
}

/// A call that records the output tokens of its reply (what the generator
/// can say without a tokenizer).
fn call_of(sent: usize, start: u64, output_tokens: u64) -> Call {
    call(
        sent,
        start,
        RecordedUsage {
            output_tokens: Some(output_tokens),
            ..RecordedUsage::default()
        },
    )
}

/// Builds a session (see [`crate::session()`] and [`crate::session_parts`]):
/// one trace per context, the first named `spec.name`.
///
/// With `spec.compacts`, before each call the agent estimates the tokens it
/// would send ([`CHARS_PER_TOKEN_ESTIMATE`] characters of compact JSON per
/// token, system prompt and tools included). When that is above
/// [`COMPACT_AT_PCT`] of the window, or when the results of the step about
/// to run would take the next request above [`HARD_LIMIT_PCT`], the call is
/// a compaction instead: it sends the history plus a request to summarize
/// it, and the reply (the summary) ends the part. The next part starts from
/// one user message carrying that summary, and the pending step follows.
/// A trace's history is append-only, so a context that restarts is a new
/// trace: `<name>-part2`, `<name>-part3`, … with the same prompt.
pub(crate) fn build(spec: &SessionSpec, prompts: &mut PromptCache) -> Vec<Trace> {
    let calls = spec.calls.max(1);
    let g = Gen::with_project(spec.seed, spec.project);
    let project = g.project;
    let prompt = session_prompt(prompts, spec.project, spec.model, spec.start_ms);
    let prefix = prefix_chars(&prompt) as u64;
    let window = spec.model.window_tokens;
    let estimate =
        |history_chars: usize| (prefix + history_chars as u64).div_ceil(CHARS_PER_TOKEN_ESTIMATE);
    let mut d = Driver {
        timing: g.rng.fork("timing"),
        g,
        plan: VecDeque::new(),
        follow_ups: 0,
        long_gap: false,
    };
    let first_kind = if d.g.rng.chance(0.6) {
        Kind::Bugfix
    } else {
        Kind::Feature
    };
    let first_request = d.g.task_text(first_kind, true);
    let mut seg = Segment::new(user_text(&first_request));
    let mut requests = vec![first_request];
    d.plan = d.g.plan(first_kind, true);
    let mut parts: Vec<Segment> = Vec::new();
    let mut clock = spec.start_ms;
    let mut made = 0usize;
    let compact_request = user_text(text_file(COMPACT_REQUEST));
    while made < calls {
        let last = made + 1 == calls;
        // The tools of the step run before the agent decides whether to
        // compact (their timestamps do not count the compaction's seconds).
        let turn = d.turn(clock, seg.messages.len(), last);
        let now = estimate(seg.chars_with(&[]));
        // After this step the history must still leave room for the
        // request to compact it, which may be the very next call.
        let after = match &turn.next {
            Some(next) => estimate(seg.chars_with(&[&turn.reply, next, &compact_request])),
            None => now,
        };
        let over = now > window * COMPACT_AT_PCT / 100 || after > window * HARD_LIMIT_PCT / 100;
        if spec.compacts && calls - made >= 2 && over {
            seg.push(user_text(text_file(COMPACT_REQUEST)));
            let sent = seg.messages.len();
            let summary = d.g.compaction_summary(&requests);
            let reply = assistant(vec![text(&summary)]);
            let out = output_tokens(&mut d.timing, &reply);
            // Not [`Turn::of`]: here the output tokens are drawn before the
            // first-token time, and the traces keep that order.
            let model_ms = first_token_ms(&mut d.timing, sent) + generation_ms(&mut d.timing, out);
            seg.calls.push(call_of(sent, clock, out));
            seg.push(reply);
            made += 1;
            clock += model_ms + d.timing.range(300, 2_000);
            let resumed = text_file(COMPACT_CONTINUATION).replace("{summary}", &summary);
            parts.push(std::mem::replace(
                &mut seg,
                Segment::new(user_text(&resumed)),
            ));
            // What the summary quoted stays known to the next summary.
            let keep = requests.len().saturating_sub(12);
            requests.drain(..keep);
        }
        let last = made + 1 == calls;
        seg.calls
            .push(call_of(seg.messages.len(), clock, turn.reply_tokens));
        seg.push(turn.reply);
        if !last && let Some(next) = turn.next {
            seg.push(next);
            requests.extend(turn.request);
        }
        clock += turn.model_ms + turn.after_ms;
        made += 1;
    }
    parts.push(seg);
    let count = parts.len();
    parts
        .into_iter()
        .enumerate()
        .map(|(i, seg)| part_trace(spec, project, &prompt, (i, count), seg))
        .collect()
}

/// Part `i` of `count` of a session as a trace: its name, and a
/// description saying where it sits between the compactions.
fn part_trace(
    spec: &SessionSpec,
    project: &Project,
    prompt: &Prompt,
    (i, count): (usize, usize),
    seg: Segment,
) -> Trace {
    let calls = spec.calls.max(1);
    let context = part_context(spec, (i, count), &seg);
    let name = if i == 0 {
        spec.name.clone()
    } else {
        format!("{}-part{}", spec.name, i + 1)
    };
    let part_calls = seg.calls.len();
    Trace {
        name,
        description: format!(
            "Synthetic coding-agent session (Claude {}) on project {}, {}: {part_calls} of the session's {calls} calls of exploring, editing, testing, web research and user follow-ups, with parallel tool calls and breaks long enough to expire a 5-minute cache. {context} Generated deterministically by {}; usage records output tokens only.",
            spec.model.display, project.name, project.summary, spec.origin
        ),
        provider: ProviderKind::Anthropic,
        model: spec.model.id.to_owned(),
        // The agent modelled is a coding agent like Claude Code:
        // what it runs now is Claude Code's own caching.
        status_quo: Some(tracecost_trace::CLAUDE_CODE_STATUS_QUO.to_owned()),
        project: Some(project.name.to_owned()),
        // A team's sessions: those of one account share its cache.
        account: Some(spec.account.clone()),
        session: (count > 1).then(|| spec.name.clone()),
        hidden_prefix_tokens: 0,
        source: None,
        prompts: vec![prompt.clone()],
        messages: seg.messages,
        calls: seg.calls,
    }
}

/// What the description says of the part's context: never compacted,
/// within its window, or which part of the compacted session it is.
fn part_context(spec: &SessionSpec, (i, count): (usize, usize), seg: &Segment) -> String {
    let window = spec.model.window_tokens;
    let last_chars = seg
        .calls
        .last()
        .map_or(0, |c| messages_chars(&seg.messages[..c.messages]));
    if !spec.compacts {
        format!(
            "The agent never compacts: the last call sends {last_chars} characters of messages."
        )
    } else if count == 1 {
        format!(
            "It stays within its {}K-token window without compacting: the last call sends {last_chars} characters of messages.",
            window / 1000
        )
    } else {
        let mut c = format!(
            "Part {} of {count}: the agent compacts before {COMPACT_AT_PCT}% of its {}K-token window, as Claude Code does.",
            i + 1,
            window / 1000
        );
        if i > 0 {
            c.push_str(&format!(
                " This part starts from the summary that ends part {i}."
            ));
        }
        if i + 1 < count {
            c.push_str(" Its last call sends the history with a request to summarize it; the summary starts the next part.");
        }
        c
    }
}

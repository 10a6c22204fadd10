//! Codex CLI sessions, read where Codex writes them:
//! `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` (and
//! `~/.codex/archived_sessions/`). An input may be a Codex home (holding
//! `sessions/`), a folder below it, or rollout files; folders are walked
//! for `rollout-*.jsonl`, read in sorted path order, one line at a time (a
//! rollout is never held whole; the history being built is). Under
//! `skip_invalid`, a folder below the inputs or a file that cannot be read
//! is passed over and listed in [`ImportSummary::unread`].
//!
//! # What a rollout holds
//!
//! Each line is `{"timestamp", "type", "payload"}` (Codex's `RolloutLine`,
//! `codex-rs/protocol/src/protocol.rs`):
//!
//! - `session_meta`: the session's `id`, `cwd`, and the system prompt it
//!   sent as the request's `instructions` (`base_instructions.text`, or
//!   `instructions` in older Codex), `forked_from_id` for a fork. Only the
//!   first counts: a fork's file copies its parent's too, and a resumed
//!   session writes its own again;
//! - `turn_context`: the settings of the turn that follows, `model` among
//!   them (or in `collaboration_mode.settings`; newer Codex also records a
//!   mid-thread change as an `event_msg` of type `thread_settings_applied`).
//!   A session may change model between turns: each call keeps the model
//!   of the latest of these before it;
//! - `response_item`: one Responses API item as Codex sends it back in
//!   every request (Codex sends the whole history each time, `store:
//!   false`): messages, reasoning, tool calls and their outputs, mapped as
//!   `crate::openai_responses` maps a request's `input`;
//! - `event_msg`: events for the UI. `token_count` carries usage; the
//!   others (`user_message`, `agent_message`, `agent_reasoning`,
//!   `task_started`, `turn_aborted`, …) repeat what the response items hold
//!   or concern the UI only, and are counted, not read;
//! - `compacted`: the history was compacted. After it the model is sent
//!   `replacement_history` (newer Codex) instead of what came before, so
//!   the rest of the file becomes a new trace, `<id>.part2`, … of the same
//!   session, whose history starts with those items (older Codex recorded
//!   only the summary, `message`: the new part starts with it as a user
//!   message, reported).
//!
//! Rollouts of Codex before the envelope (a first line `{"id",
//! "timestamp", "instructions"}`, then bare items and `record_type`
//! lines) are read too: their items, and no usage (they recorded none).
//!
//! # What one model call is
//!
//! Codex writes a `token_count` event after each model response completes
//! (`last_token_usage` is that response's usage, `total_token_usage` the
//! session's running sum). Older Codex wrote it right after the response's
//! output items; from Codex 0.140 on it comes after the outputs of the
//! tools the response called (0.142–0.144: reasoning, tool calls, their
//! outputs, then the count). Either way no other response stands between
//! a response and its count, so each `token_count` with usage is one call
//! answered by the latest response since the previous call: the latest
//! run of output items (reasoning, assistant text, tool calls, hosted
//! tools' items) that follows an input item or the previous call. Its
//! request is every item before that run: the tool outputs written
//! between the response and the count belong to the next request, and a
//! response left without a count (an interrupted turn; a count Codex
//! re-emitted instead of a new one) is history the next call sends. With
//! no output item since the previous call, the request is all that was
//! recorded up to the count. `start_ms` is the timestamp of the latest
//! input item or `turn_context` line before the response (else of the
//! previous call's token_count).
//!
//! Not every token_count is a call:
//!
//! - `info: null` (sent before any usage, or with rate limits only);
//! - one whose `total_token_usage` equals the previous one's: Codex
//!   re-emits the last count (after each new `turn_context`, on rate-limit
//!   refreshes), and counting its `last_token_usage` again would bill one
//!   response twice. This is the rule ccusage adopted (ccusage PRs #824
//!   and #1435: skip last-usage snapshots whose cumulative total did not
//!   advance). On the real rollouts tried, about half the token_count
//!   events were such repeats, and the sum of the rest equalled the final
//!   `total_token_usage` exactly;
//! - in a fork (`forked_from_id`) or a subagent's session (`source` names
//!   a `thread_spawn`), the token_counts its file starts with
//!   are its parent's, copied at the fork (their items are the fork's
//!   history, their usage was billed in the parent's file): those written
//!   less than a second after the fork's creation time (copies carry
//!   either that time or their original, earlier one) are history only.
//!   ccusage tells them apart the same way when the parent's file is not
//!   at hand (its same-second fallback);
//! - one with neither counts nor a change (all zero).
//!
//! When `last_token_usage` is missing, the usage is the difference of the
//! running totals (as ccusage does).
//!
//! # Usage
//!
//! Codex's `input_tokens` includes the cached tokens and, in newer Codex,
//! the cache writes (`cache_write_input_tokens`), as OpenAI's
//! `input_tokens` does. So:
//!
//! - uncached input = `input_tokens` − `cached_input_tokens` −
//!   `cache_write_input_tokens`;
//! - cache read = `cached_input_tokens`, cache write =
//!   `cache_write_input_tokens` (absent before Codex recorded it);
//! - output = `output_tokens`: reasoning tokens are part of it
//!   (`reasoning_output_tokens` is not added, as ccusage treats it; it is
//!   kept as the usage's `reasoning_tokens`, the size of the reasoning
//!   items the response returned, which later requests send back).
//!
//! # Turns
//!
//! A `turn_context` line starts a turn; the user message that follows it
//! opens the turn. OpenAI's models before GPT-5.6 drop the reasoning sent
//! back from before a turn's opening message, so the trace keeps what
//! tells one apart: a developer message in mid-history keeps its role
//! (`source_role`), and a user message written after the model's output
//! with no new `turn_context` (input typed while the model worked, which
//! Codex sends within the running turn) is marked `within_turn`. A rollout
//! with no `turn_context` marks nothing.
//!
//! Each count follows the one token-count rule every reader applies (a
//! non-negative integer, as a number or a string holding one; `null` is
//! none).
//!
//! A count where cached + written exceed `input_tokens` contradicts itself
//! (what was billed as uncached input is unknown): it is an error at the
//! line and the usage object's JSON pointer. Under `skip_invalid` the line
//! is skipped and counted, and the response's items join the next call's
//! request. A count that is not a non-negative integer is an error the
//! same way.
//!
//! # What a rollout does not hold
//!
//! - The tool definitions Codex sent: each trace's prompt has the
//!   instructions and no tools, and their size is estimated, as for Claude
//!   Code, in [`Trace::hidden_prefix_tokens`]: the first recorded call's
//!   input minus an estimate of what the trace shows it sent;
//! - cache markers: OpenAI caches prefixes itself, so every call has
//!   `markers: None`;
//! - rollbacks and undo: their events are counted, not applied.
//!
//! Traces are named by the session id (`session_meta.id`, else the file
//! stem), their project is the session's `cwd`, their source the file.
//!
//! [`Trace::hidden_prefix_tokens`]: tracecost_trace::Trace::hidden_prefix_tokens

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::common::{
    self, TraceBuilder, Unmapped, compact_object, estimate_tokens, finish_usage,
    split_included_input, timestamp_ms,
};
use crate::openai_responses::items::{Items, Side};
use crate::progress::Progress;
use crate::{ImportError, ImportOptions, ImportResult, ImportSummary};
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::json::RawObject;
use tracecost_engine::message::ContentBlock;
use tracecost_trace::{Call, Prompt, RecordedUsage, Trace};

mod counts;
mod discover;
pub mod usage;

use counts::{Counts, counts};
pub(crate) use discover::{discover, is_rollout_name};

/// The text of the stand-in request before a response whose request holds
/// no item of the file (a rollout that starts mid-session).
pub const UNRECORDED_REQUEST: &str = "[the request of this response is not in the rollout]";
pub use usage::{
    CodexCall, CodexModelUsage, CodexSessionUsage, CodexTokens, CodexUsageScan, scan_usage,
};

/// Imports Codex rollouts: one trace per file (more when it was
/// compacted).
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    crate::InputFormat::Codex.import(inputs, opts)
}

/// [`crate::InputFormat::import_each`] for Codex.
pub(crate) fn import_each<E: From<ImportError>>(
    inputs: &[PathBuf],
    opts: &ImportOptions,
    progress: &dyn Progress,
    emit: &mut dyn FnMut(Trace) -> Result<(), E>,
) -> Result<ImportSummary, E> {
    let mut report = ImportSummary::default();
    let files = discover(inputs, opts.skip_invalid.then_some(&mut report.unread))?;
    let sizes = crate::file_sizes(&files);
    progress.start("import", sizes.iter().sum(), crate::progress::Unit::Bytes);
    let mut un = Unmapped::default();
    let mut names = HashSet::new();
    let mut emitted = 0usize;
    for (path, size) in files.iter().zip(sizes) {
        report.files += 1;
        let traces = match read_rollout(path, opts, &mut report, &mut un) {
            Ok(traces) => traces,
            // A file that cannot be read is passed over when asked.
            Err(ImportError::Io { source, .. }) if opts.skip_invalid => {
                report
                    .unread
                    .push((path.clone(), format!("cannot read: {source}")));
                progress.advance(size);
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        progress.advance(size);
        if traces.is_empty() {
            report.skipped_files += 1;
            continue;
        }
        for (mut trace, line) in traces {
            trace.name = unique(&mut names, &trace.name);
            common::check_loads(&trace, path, line)?;
            trace.source = Some(path.display().to_string());
            emit(trace)?;
            emitted += 1;
        }
    }
    report.unmapped = un.lines();
    if emitted == 0 {
        return Err(ImportError::Empty(format!(
            "{}: no Codex model calls found in {} file(s)",
            crate::shown(inputs),
            files.len()
        ))
        .into());
    }
    Ok(report)
}

fn unique(used: &mut HashSet<String>, base: &str) -> String {
    if used.insert(base.to_owned()) {
        return base.to_owned();
    }
    (2..)
        .map(|n| format!("{base}-{n}"))
        .find(|c| used.insert(c.clone()))
        .unwrap_or_else(|| base.to_owned())
}

/// A rollout line's envelope.
#[derive(Deserialize)]
struct LineDoc<'a> {
    #[serde(default, borrow)]
    timestamp: Option<&'a RawValue>,
    #[serde(rename = "type", default, borrow)]
    kind: Option<&'a RawValue>,
    #[serde(default, borrow)]
    payload: Option<&'a RawValue>,
    // Older Codex: the first line's session fields, and state lines.
    #[serde(default, borrow)]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    record_type: Option<&'a RawValue>,
}

/// A non-empty `model` member.
fn model_of(o: &RawObject) -> Option<String> {
    match o.parse::<String>("model") {
        Some(Ok(m)) if !m.trim().is_empty() => Some(m.trim().to_owned()),
        _ => None,
    }
}

/// The line types of the `{"timestamp", "type", "payload"}` envelope.
fn is_envelope_type(kind: &str) -> bool {
    matches!(
        kind,
        "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted"
    )
}

/// One segment of a rollout: the history between compactions.
struct Segment {
    items: Items,
    calls: Vec<Call>,
    first_line: usize,
    /// Messages the latest input item completed (a request sends at least
    /// these).
    req_len: usize,
    /// Messages at the previous call (its request and response).
    last_call_end: usize,
    /// Where the latest response since the previous call starts: the
    /// messages before its first output item, and the request's start
    /// time then.
    response: Option<(usize, Option<u64>)>,
    /// Whether the latest item was the model's (a response under way).
    in_response: bool,
}

impl Segment {
    fn new(first_line: usize) -> Self {
        Self {
            items: Items::new(),
            calls: Vec::new(),
            first_line,
            req_len: 0,
            last_call_end: 0,
            response: None,
            in_response: false,
        }
    }
}

/// What a rollout's reading keeps between lines.
struct Reader {
    id: Option<String>,
    cwd: Option<String>,
    instructions: Option<String>,
    /// Whether the first session_meta was read (later ones are a fork's
    /// copies of its parent's).
    meta_seen: bool,
    /// A fork's creation time, while its replayed prefix lasts.
    replay_until_ms: Option<u64>,
    model: Option<String>,
    /// The timestamp a request sent now would have started at.
    req_ts: Option<u64>,
    prev_total: Option<Counts>,
    /// Whether the file records turns (`turn_context` lines) and, if so,
    /// whether the latest turn has had no output of the model yet: a user
    /// message then opens it; one after the model's output joins it.
    turns_recorded: bool,
    turn_open: bool,
    seg: Segment,
    done: Vec<(Segment, usize)>,
    /// Each call's usage as counted, for [`usage::scan_usage`].
    counted: Vec<Counted>,
    /// token_count events with usage that are not calls: repeated totals
    /// and a fork's copies of its parent's counts.
    repeats: usize,
}

/// One call's usage as [`Reader::token_count`] counted it: the event's
/// time, the model in force and the counts (`input` including the cached
/// and written tokens, as recorded).
#[derive(Debug, Clone)]
pub(crate) struct Counted {
    pub ts: Option<u64>,
    pub model: Option<String>,
    pub input: u64,
    pub cached: u64,
    pub written: u64,
    pub output: u64,
    pub reasoning: u64,
    /// `total_tokens` as recorded (0 when absent).
    pub total: u64,
}

fn read_rollout(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
) -> Result<Vec<(Trace, usize)>, ImportError> {
    let mut r = read(path, opts, report, un)?;
    let base = r.id.clone().unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "codex".to_owned())
    });
    let parts = r.done.len();
    let mut out = Vec::with_capacity(parts);
    for (k, (seg, line)) in std::mem::take(&mut r.done).into_iter().enumerate() {
        let name = if k == 0 {
            base.clone()
        } else {
            format!("{base}.part{}", k + 1)
        };
        let description = format!(
            "Codex session {base}{}: {} call(s) from line {line} of {}",
            if k == 0 {
                String::new()
            } else {
                format!(" (part {})", k + 1)
            },
            seg.calls.len(),
            common::file_name(path)
        );
        let mut t = build(seg, &r, name, description, opts, un);
        // Continuations count once, with the session they belong to.
        if parts > 1 {
            t.session = Some(base.clone());
        }
        out.push((t, line));
    }
    Ok(out)
}

/// Reads a rollout's lines: the history and calls by segment, and each
/// call's usage as counted.
fn read(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
) -> Result<Reader, ImportError> {
    let mut r = Reader {
        id: None,
        cwd: None,
        instructions: None,
        meta_seen: false,
        replay_until_ms: None,
        model: None,
        req_ts: None,
        prev_total: None,
        turns_recorded: false,
        turn_open: true,
        seg: Segment::new(1),
        done: Vec::new(),
        counted: Vec::new(),
        repeats: 0,
    };
    common::each_line(path, |line| {
        let text = match line.text {
            Ok(t) => t,
            Err(col) => {
                return common::reject(
                    opts,
                    report,
                    common::invalid(path, line.number, Some(col), "not UTF-8"),
                );
            }
        };
        let doc = match serde_json::from_str::<LineDoc>(text) {
            Ok(d) => d,
            Err(_) if line.unfinished => {
                // The session is being written.
                un.add(
                    "unfinished last lines (a session being written; skipped)",
                    1,
                );
                return Ok(());
            }
            Err(e) => {
                let err = if text.trim_start().starts_with('{') {
                    common::invalid_json(path, line.number, &e)
                } else {
                    common::invalid(
                        path,
                        line.number,
                        Some(1),
                        "expected a JSON object (a rollout line)",
                    )
                };
                return common::reject(opts, report, err);
            }
        };
        match r.line(line.number, text, doc, un) {
            Ok(()) => Ok(()),
            Err(msg) => common::reject(
                opts,
                report,
                common::invalid(path, line.number, Some(1), &msg),
            ),
        }
    })?;
    r.end_segment(0);
    Ok(r)
}

/// A segment made a trace: the instructions as its system prompt (with
/// the developer messages that open the history), no tools, the default
/// model the first call's, the hidden prefix estimated.
fn build(
    seg: Segment,
    r: &Reader,
    name: String,
    description: String,
    opts: &ImportOptions,
    un: &mut Unmapped,
) -> Trace {
    let Segment {
        items,
        calls,
        first_line,
        ..
    } = seg;
    let mut system: Vec<ContentBlock> = r
        .instructions
        .iter()
        .filter(|t| !t.is_empty())
        .map(|t| ContentBlock::text(t))
        .collect();
    system.extend(items.system.iter().cloned());
    let mut b = TraceBuilder::new(ProviderKind::OpenAi, first_line);
    let prompt = Prompt {
        system,
        tools: Vec::new(),
    };
    b.messages = items.finish();
    b.calls = calls;
    let hidden = b.calls.iter().find_map(|c| {
        let total = c.usage.as_ref()?.total_input()?;
        let shown = estimate_tokens(b.messages.get(..c.messages).unwrap_or(&[]))
            + prompt
                .system
                .iter()
                .map(|s| s.to_json().len() as u64)
                .sum::<u64>()
                .div_ceil(4);
        Some(total.saturating_sub(shown))
    });
    b.prompts = vec![prompt];
    let mut t = b.finish(name, description, opts, un);
    t.hidden_prefix_tokens = hidden.unwrap_or(0);
    t.project = r.cwd.clone();
    t
}

impl Reader {
    fn end_segment(&mut self, next_line: usize) {
        let seg = std::mem::replace(&mut self.seg, Segment::new(next_line));
        if !seg.calls.is_empty() {
            let line = seg.first_line;
            self.done.push((seg, line));
        }
    }

    fn line(
        &mut self,
        number: usize,
        text: &str,
        doc: LineDoc<'_>,
        un: &mut Unmapped,
    ) -> Result<(), String> {
        let ts = doc.timestamp.and_then(timestamp_ms);
        let kind = match doc.kind {
            None => None,
            Some(k) => Some(
                serde_json::from_str::<String>(k.get())
                    .map_err(|_| "at /type: expected a string".to_owned())?,
            ),
        };
        let Some(payload) = doc.payload else {
            if kind.as_deref().is_some_and(is_envelope_type) {
                return Err("expected a \"payload\" member".to_owned());
            }
            return self.legacy_line(kind.as_deref(), text, &doc, un);
        };
        let Some(kind) = kind else {
            un.add("rollout lines without a type (skipped)", 1);
            return Ok(());
        };
        let object = |what: &str| -> Result<RawObject, String> {
            compact_object(payload.get()).ok_or_else(|| format!("at /payload: expected {what}"))
        };
        match kind.as_str() {
            "session_meta" => {
                let p = object("the session's metadata (an object)")?;
                self.session_meta(&p, ts, un);
            }
            "turn_context" => {
                let p = object("the turn's context (an object)")?;
                // `model`, mirrored in the collaboration mode's settings.
                let settings = match p.parse::<RawObject>("collaboration_mode") {
                    Some(Ok(c)) => match c.parse::<RawObject>("settings") {
                        Some(Ok(s)) => Some(s),
                        _ => None,
                    },
                    _ => None,
                };
                if let Some(m) = model_of(&p).or_else(|| settings.as_ref().and_then(model_of)) {
                    self.model = Some(m);
                }
                self.req_ts = ts.or(self.req_ts);
                self.turns_recorded = true;
                self.turn_open = true;
            }
            "response_item" => {
                if !payload.get().starts_with('{') {
                    return Err("at /payload: expected an item (an object)".to_owned());
                }
                self.item(payload, ts, un);
            }
            "event_msg" => {
                let p = object("an event (an object)")?;
                match p.parse::<String>("type") {
                    Some(Ok(t)) if t == "token_count" => self.token_count(&p, ts, un)?,
                    // Newer Codex: settings changed mid-thread, the
                    // model among them.
                    Some(Ok(t)) if t == "thread_settings_applied" => {
                        if let Some(Ok(settings)) = p.parse::<RawObject>("thread_settings")
                            && let Some(m) = model_of(&settings)
                        {
                            self.model = Some(m);
                        }
                    }
                    Some(Ok(t)) if t == "thread_rolled_back" || t == "undo_completed" => un.add(
                        "rollbacks and undos (not applied: the history keeps what was undone)",
                        1,
                    ),
                    _ => un.add(
                        "event_msg lines other than token_count (UI events and copies of items; not sent)",
                        1,
                    ),
                }
            }
            "compacted" => {
                let p = object("a compaction (an object)")?;
                self.compacted(&p, number, ts, un);
            }
            _ => un.add("rollout lines of an unknown type (skipped)", 1),
        }
        Ok(())
    }

    /// A line of a rollout written before the envelope: the session's
    /// first line, a bare item, or a state line.
    fn legacy_line(
        &mut self,
        kind: Option<&str>,
        text: &str,
        doc: &LineDoc<'_>,
        un: &mut Unmapped,
    ) -> Result<(), String> {
        if doc.record_type.is_some() {
            un.add("state lines of older rollouts (skipped)", 1);
            return Ok(());
        }
        let ts = doc.timestamp.and_then(timestamp_ms);
        match kind {
            None if doc.id.is_some() && !self.meta_seen => {
                let p = compact_object(text).ok_or("expected a JSON object")?;
                self.session_meta(&p, ts, un);
            }
            Some(_) => {
                let raw: &RawValue =
                    serde_json::from_str(text).map_err(|_| "expected a JSON object".to_owned())?;
                self.item(raw, ts, un);
            }
            None => un.add("rollout lines without a type (skipped)", 1),
        }
        Ok(())
    }

    fn session_meta(&mut self, p: &RawObject, ts: Option<u64>, un: &mut Unmapped) {
        if self.meta_seen {
            un.add(
                "session_meta lines after the first (a fork's copy of its parent's, or the session resumed; ignored)",
                1,
            );
            return;
        }
        self.meta_seen = true;
        let s = |k: &str| match p.parse::<String>(k) {
            Some(Ok(v)) if !v.is_empty() => Some(v),
            _ => None,
        };
        self.id = s("id");
        self.cwd = s("cwd");
        self.instructions = match p.parse::<RawObject>("base_instructions") {
            Some(Ok(b)) => match b.parse::<String>("text") {
                Some(Ok(t)) => Some(t),
                _ => None,
            },
            _ => None,
        }
        .or_else(|| s("instructions"));
        // A subagent's session (`source.subagent.thread_spawn`) starts
        // with its parent's history too.
        let spawned = p
            .get("source")
            .is_some_and(|src| src.get().contains("\"thread_spawn\""));
        if s("forked_from_id").is_some() || spawned {
            let created = p.raw("timestamp").and_then(timestamp_ms).or(ts);
            // Without a creation time every copied count looks new: none
            // is taken for the parent's.
            self.replay_until_ms = created.map(|c| c.saturating_add(1000));
        }
    }

    fn item(&mut self, raw: &RawValue, ts: Option<u64>, un: &mut Unmapped) {
        let before = self.seg.items.len();
        self.seg.items.user_within_turn = self.turns_recorded && !self.turn_open;
        let side = self.seg.items.push(raw, un);
        if side == Some(Side::Output) {
            self.turn_open = false;
        }
        match side {
            Some(Side::Input) => {
                self.seg.req_len = self.seg.items.len();
                self.req_ts = ts.or(self.req_ts);
                self.seg.in_response = false;
            }
            // The first output item after an input (or after the previous
            // call) starts a response: its request is what stands before.
            Some(Side::Output) if !self.seg.in_response => {
                self.seg.response = Some((before, self.req_ts));
                self.seg.in_response = true;
            }
            _ => {}
        }
    }

    /// The previous call ended here: what follows is the next one's.
    fn close_call(&mut self, ts: Option<u64>) {
        let seg = &mut self.seg;
        seg.items.seal();
        seg.last_call_end = seg.items.len();
        seg.response = None;
        seg.in_response = false;
        self.req_ts = ts.or(self.req_ts);
    }

    fn token_count(
        &mut self,
        p: &RawObject,
        ts: Option<u64>,
        un: &mut Unmapped,
    ) -> Result<(), String> {
        let Some(info) = p.get("info").filter(|i| i.get() != "null") else {
            un.add(
                "token_count events without usage (info: null; not calls)",
                1,
            );
            return Ok(());
        };
        let info = RawObject::from_json(info.get())
            .map_err(|_| "at /payload/info: expected an object or null".to_owned())?;
        let ptr = "/payload/info";
        let total = counts(&info, "total_token_usage", ptr)?;
        let last = counts(&info, "last_token_usage", ptr)?;
        if total.is_some() && total == self.prev_total {
            self.repeats += 1;
            un.add(
                "token_count events repeating the previous total_token_usage (re-emitted, not new calls; not counted)",
                1,
            );
            return Ok(());
        }
        let (usage, at) = match (last, total) {
            (Some(l), _) => (l, "last_token_usage"),
            (None, Some(t)) => (t.since(self.prev_total.as_ref()), "total_token_usage"),
            (None, None) => {
                un.add("token_count events without usage (not calls)", 1);
                return Ok(());
            }
        };
        if total.is_some() {
            self.prev_total = total;
        }
        if let Some(until) = self.replay_until_ms {
            if ts.is_some_and(|t| t < until) {
                self.repeats += 1;
                un.add(
                    "token_count events a fork copied from its parent (billed there; history only)",
                    1,
                );
                self.close_call(ts);
                return Ok(());
            }
            self.replay_until_ms = None;
        }
        if usage.is_zero() {
            un.add("token_count events with no tokens (not calls)", 1);
            return Ok(());
        }
        let recorded = split_included_input(
            Some(usage.input),
            Some(usage.cached),
            usage.written,
            Some(usage.output),
        )
        .map_err(|why| format!("at {ptr}/{at}: {why}"))?;
        let recorded = RecordedUsage {
            reasoning_tokens: usage.reasoning,
            ..recorded
        };
        self.counted.push(Counted {
            ts,
            model: self.model.clone(),
            input: usage.input,
            cached: usage.cached,
            written: usage.written.unwrap_or(0),
            output: usage.output,
            reasoning: usage.reasoning.unwrap_or(0),
            total: usage.total,
        });
        self.push_call(recorded, ts, un);
        self.close_call(ts);
        Ok(())
    }

    /// The call a token count records: it sends the history up to the
    /// latest response since the previous call (a stand-in request first
    /// when nothing came before it).
    fn push_call(&mut self, recorded: RecordedUsage, ts: Option<u64>, un: &mut Unmapped) {
        let seg = &mut self.seg;
        // The latest response since the previous call is this count's
        // (Codex 0.140+ writes the count after the tool outputs that
        // follow it, older Codex right after it); with none recorded, the
        // request is all that was sent since.
        let (mut messages, start) = seg
            .response
            .unwrap_or((seg.req_len.max(seg.last_call_end), self.req_ts));
        if messages == 0 {
            seg.items.insert_first(UNRECORDED_REQUEST);
            seg.req_len += 1;
            messages = 1;
            un.add(
                "responses with no request item before them (sent after a stand-in user message)",
                1,
            );
        }
        seg.calls.push(Call {
            messages,
            start_ms: start.or(ts),
            model: self.model.clone(),
            prompt: 0,
            markers: None,
            usage: finish_usage(recorded, un).map(Box::new),
            cleared: Vec::new(),
            compacted: None,
        });
    }

    fn compacted(&mut self, p: &RawObject, number: usize, ts: Option<u64>, un: &mut Unmapped) {
        self.end_segment(number);
        match p.parse::<Vec<&RawValue>>("replacement_history") {
            Some(Ok(items)) => {
                for item in items {
                    // History: its user messages are read as they were
                    // sent, each its own turn's.
                    self.turn_open = true;
                    self.item(item, ts, un);
                }
            }
            _ => {
                un.add(
                    "compactions recorded without replacement_history (the next part starts with the summary alone)",
                    1,
                );
                let summary = match p.parse::<String>("message") {
                    Some(Ok(m)) => m,
                    _ => String::new(),
                };
                let mut f = RawObject::new();
                f.set("type", tracecost_engine::json::raw_string("message"));
                f.set("role", tracecost_engine::json::raw_string("user"));
                f.set("content", tracecost_engine::json::raw_string(&summary));
                let raw = tracecost_engine::json::raw_json(f.to_json());
                self.item(&raw, ts, un);
            }
        }
        // All of it is what the next request sends, the model's summary
        // included; the next response starts a message of its own.
        self.seg.items.seal();
        self.seg.req_len = self.seg.items.len();
        self.seg.last_call_end = 0;
        // Its model items are history, not a response under way.
        self.seg.response = None;
        self.seg.in_response = false;
    }
}

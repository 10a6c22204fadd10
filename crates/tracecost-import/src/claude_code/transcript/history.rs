//! How a transcript's lines become histories and calls: the rules of the
//! module documentation of [`super`] (responses rebuilt from their lines,
//! user lines merged, tool results checked against their tool calls,
//! compactions and sidechains split off, usage kept once per response).
//! Kept apart from the reading of files and from the making of traces
//! because these rules are what a change to the mapping touches.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::de::IgnoredAny;

use super::line::{
    LineDoc, MessageDoc, Parsed, parse_content, preserved_uuids, raw_str, recorded_compaction,
};
use super::notes::{Note, Tally};
use crate::claude_code::usage::ResponseKey;
use crate::claude_code::{Line, SYNTHETIC_MODEL, UsageDoc, usage_total};
use crate::time::parse_rfc3339_ms;
use tracecost_engine::message::{BlockKind, ContentBlock, Message, Role};
use tracecost_trace::{RecordedCompaction, RecordedUsage};

/// The text standing for a request the transcript does not hold.
pub const UNRECORDED_REQUEST: &str = "[the request of this response is not in the transcript]";

/// The owned parts of a user or assistant line.
struct Taken {
    /// `None` when `message.content` is neither a string nor a list of
    /// objects.
    content: Option<Parsed>,
    /// What an assistant line says of its response; `None` for a user line.
    response: Option<Response>,
    ts: Option<u64>,
}

/// An assistant line's response members.
struct Response {
    id: Option<String>,
    /// Its `requestId`, and whether it is a sidechain line: with `id`, the
    /// response's identity across files ([`ResponseKey`]).
    request_id: Option<String>,
    sidechain: bool,
    model: Option<String>,
    /// The usage row: `None` without `usage`, `Some(None)` when unbilled.
    row: Option<Option<UsageRow>>,
    /// One of the messages the last compaction kept verbatim.
    preserved: bool,
}

/// A billable usage row: the top-level usage and, when the row records
/// them, the requests its iterations made (see [`Draft::iterations`]).
pub(super) struct UsageRow {
    usage: RecordedUsage,
    iterations: Vec<(Option<String>, RecordedUsage)>,
}

/// Why [`Builder::take`] did not take a line.
enum Skip {
    /// Skipped, and counted where it was.
    Counted,
    /// Two or more records with no newline between them: their byte
    /// ranges in the line.
    Joined(Vec<std::ops::Range<usize>>),
    /// A sidechain line of a main session file: the index of the inline
    /// subagent conversation it belongs to.
    Sidechain(usize),
}

/// A part of the next user message.
enum UserPart {
    Text(String),
    Block(ContentBlock),
}

/// The response being read.
struct Open {
    id: Option<String>,
    blocks: Vec<ContentBlock>,
    call: Option<usize>,
    /// The call of a response the last compaction kept verbatim: in the
    /// history before the compaction ([`Builder::start_response`]).
    call_before: Option<usize>,
}

/// A call being built.
pub(super) struct Draft {
    pub(super) messages: usize,
    pub(super) start_ms: Option<u64>,
    pub(super) model: Option<String>,
    pub(super) usage: Option<RecordedUsage>,
    /// The requests the kept usage row's `usage.iterations` record, in
    /// order (Claude Code 2.1.227+): each `message` iteration is one
    /// request of the response's model, the top-level usage their sum;
    /// an `advisor_message` iteration is a request of the advisor's model
    /// (named here), in no top-level count. Empty without iterations.
    pub(super) iterations: Vec<(Option<String>, RecordedUsage)>,
    /// Usage rows seen for this response (billable or not).
    pub(super) rows: usize,
    /// Results cleared in place just before this call.
    pub(super) cleared: Vec<String>,
    /// The compaction run just before this call, in a conversation read
    /// whole ([`crate::ImportOptions::join_compactions`]).
    pub(super) compacted: Option<Box<RecordedCompaction>>,
    /// The response's identity across files.
    pub(super) key: Option<ResponseKey>,
}

/// One history: the whole file, or the part between compaction boundaries.
#[derive(Default)]
pub(super) struct Segment {
    pub(super) messages: Vec<Message>,
    pub(super) calls: Vec<Draft>,
    tool_uses: HashSet<Arc<str>>,
    answered: HashSet<Arc<str>>,
    open: Option<Open>,
    pending: Vec<UserPart>,
    /// Timestamp of the last user or assistant line read.
    last_ts: Option<u64>,
    /// Results a microcompaction boundary cleared, for the next call.
    cleared: Vec<String>,
    /// A compaction read through (the history goes on), for the next call
    /// made after it.
    compaction: Option<Box<RecordedCompaction>>,
}

impl Segment {
    fn close_open(&mut self) {
        if let Some(open) = self.open.take()
            && !open.blocks.is_empty()
        {
            self.messages
                .push(Message::new(Role::Assistant, open.blocks));
        }
    }

    fn commit_pending(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let parts = std::mem::take(&mut self.pending);
        if let [UserPart::Text(text)] = parts.as_slice() {
            self.messages.push(Message::new_text(Role::User, text));
            return;
        }
        let blocks: Vec<ContentBlock> = parts
            .into_iter()
            .map(|p| match p {
                UserPart::Text(t) => ContentBlock::text(&t),
                UserPart::Block(b) => b,
            })
            .collect();
        // The API wants a user message's tool_result blocks first.
        let (mut ordered, rest): (Vec<_>, Vec<_>) = blocks
            .into_iter()
            .partition(|b| matches!(b.kind(), BlockKind::ToolResult { .. }));
        ordered.extend(rest);
        self.messages.push(Message::new(Role::User, ordered));
    }

    fn finish(&mut self) {
        self.close_open();
        self.commit_pending();
    }
}

/// Reads one file's lines into segments.
pub(super) struct Builder {
    subagent: bool,
    pub(super) tally: Tally,
    pub(super) skipped_lines: usize,
    pub(super) done: Vec<Segment>,
    seg: Segment,
    /// Response ids seen: segment index and call index.
    seen: HashMap<String, (usize, Option<usize>)>,
    pub(super) session_id: Option<String>,
    /// The first `cwd` a line names: where the conversation started.
    pub(super) cwd: Option<String>,
    /// Lines at least this long are given back once parsed
    /// ([`LONG_LINE`](super::LONG_LINE); tests choose others).
    long_line: usize,
    /// The inline subagent conversations of a main session file, in the
    /// order they start.
    pub(super) sidechains: Vec<Builder>,
    /// The conversation of each sidechain line read, by `uuid`.
    sidechain_of: HashMap<String, usize>,
    /// The `uuid`s of the messages the last compaction kept verbatim.
    preserved: HashSet<String>,
    /// Compactions are read through rather than split at
    /// ([`crate::ImportOptions::join_compactions`]).
    pub(super) join: bool,
}

impl Builder {
    pub(super) fn new(subagent: bool, long_line: usize) -> Self {
        Self {
            subagent,
            long_line,
            tally: Tally::default(),
            skipped_lines: 0,
            done: Vec::new(),
            seg: Segment::default(),
            seen: HashMap::new(),
            session_id: None,
            cwd: None,
            sidechains: Vec::new(),
            sidechain_of: HashMap::new(),
            preserved: HashSet::new(),
            join: false,
        }
    }

    pub(super) fn line(&mut self, line: &mut Line<'_>) {
        let taken = match self.take(line.text()) {
            Ok(taken) => taken,
            Err(Skip::Counted) => return,
            // The subagent's builder reads the line as its own.
            Err(Skip::Sidechain(i)) => return self.sidechains[i].line(line),
            Err(Skip::Joined(records)) => {
                // Claude Code now and then writes a record without its
                // newline, so two records share a line: each is a line.
                self.tally.bump(Note::JoinedLine);
                for r in records {
                    let mut text = line.text()[r].to_owned();
                    let end = text.len();
                    self.line(&mut Line {
                        buf: &mut text,
                        start: 0,
                        end,
                    });
                }
                return;
            }
        };
        // Everything the line's blocks need is owned now: a very long line
        // (one huge tool result) is given back before its text is decoded
        // into the trace, so the two are not held at once.
        if line.text().len() >= self.long_line {
            line.release();
        }
        let Some(content) = self.content(taken.content) else {
            self.tally.bump(Note::BadShape);
            return;
        };
        match taken.response {
            None => self.user_line(content, taken.ts),
            Some(r) => self.assistant_line(r, content, taken.ts),
        }
    }

    /// Reads a line's members: the owned parts of a user or assistant
    /// line, else why the line is skipped (counted here), or the records
    /// of a line that holds several.
    fn take(&mut self, text: &str) -> Result<Taken, Skip> {
        let mut doc = self.line_doc(text)?;
        if self.session_id.is_none() {
            self.session_id = raw_str(doc.session_id);
        }
        if self.cwd.is_none() {
            self.cwd = raw_str(doc.cwd).filter(|c| !c.is_empty());
        }
        self.message_line(&mut doc)?;
        if doc.is_sidechain.0 && !self.subagent {
            return Err(Skip::Sidechain(self.sidechain_index(&doc)));
        }
        let ts = raw_str(doc.timestamp).and_then(|t| parse_rfc3339_ms(&t));
        let Some(mut msg) = doc
            .message
            .and_then(|m| serde_json::from_str::<MessageDoc>(m.get()).ok())
        else {
            self.tally.bump(Note::BadShape);
            return Err(Skip::Counted);
        };
        let Some(content) = msg.content.take() else {
            self.tally.bump(Note::BadShape);
            return Err(Skip::Counted);
        };
        let response = if doc.kind.as_deref() == Some("user") {
            self.user_message(&doc, content)?;
            None
        } else {
            Some(self.response(&doc, msg)?)
        };
        Ok(Taken {
            content: parse_content(content),
            response,
            ts,
        })
    }

    /// The line's members, or why it is skipped: not an object, not a
    /// line's shape, or several records joined.
    fn line_doc<'t>(&mut self, text: &'t str) -> Result<LineDoc<'t>, Skip> {
        if !text.trim_start().starts_with('{') {
            if serde_json::from_str::<IgnoredAny>(text).is_ok() {
                self.tally.bump(Note::BadShape);
            } else {
                self.skipped_lines += 1;
            }
            return Err(Skip::Counted);
        }
        match serde_json::from_str(text) {
            Ok(d) => Ok(d),
            Err(_) => {
                if serde_json::from_str::<IgnoredAny>(text).is_ok() {
                    self.tally.bump(Note::BadShape);
                } else if let Some(records) = crate::common::joined_records(text) {
                    return Err(Skip::Joined(records));
                } else {
                    self.skipped_lines += 1;
                }
                Err(Skip::Counted)
            }
        }
    }

    /// Passes a user or assistant line on; a compaction's boundary, a
    /// microcompaction and any other line are handled here and skipped.
    fn message_line(&mut self, doc: &mut LineDoc<'_>) -> Result<(), Skip> {
        let kind = doc.kind.as_deref().unwrap_or("");
        match kind {
            "user" | "assistant" => {}
            "system" if doc.subtype.as_deref() == Some("compact_boundary") => {
                self.tally.bump(Note::CompactBoundary);
                if self.join {
                    self.seg.compaction = Some(Box::new(recorded_compaction(doc.compact)));
                } else {
                    self.split();
                }
                self.preserved = preserved_uuids(doc.compact).into_iter().collect();
                return Err(Skip::Counted);
            }
            "system" if doc.subtype.as_deref() == Some("microcompact_boundary") => {
                self.tally.bump(Note::Microcompact);
                // Only results already in the history can have been
                // cleared.
                let seg = &mut self.seg;
                for id in doc
                    .microcompact
                    .take()
                    .map(|m| m.compacted_tool_ids)
                    .unwrap_or_default()
                {
                    if seg.answered.contains(id.as_str()) && !seg.cleared.contains(&id) {
                        seg.cleared.push(id);
                    }
                }
                return Err(Skip::Counted);
            }
            other => {
                self.tally.line_type(other);
                return Err(Skip::Counted);
            }
        }
        Ok(())
    }

    /// The sidechain a sidechain line belongs to, by its parent's uuid; a
    /// new one when its parent is not known.
    fn sidechain_index(&mut self, doc: &LineDoc<'_>) -> usize {
        let parent = raw_str(doc.parent_uuid);
        let i = match parent.and_then(|p| self.sidechain_of.get(&p).copied()) {
            Some(i) => i,
            None => {
                let mut b = Builder::new(true, self.long_line);
                b.join = self.join;
                self.sidechains.push(b);
                self.sidechains.len() - 1
            }
        };
        if let Some(uuid) = raw_str(doc.uuid) {
            self.sidechain_of.insert(uuid, i);
        }
        i
    }

    /// A user message: a compaction's summary either kept (read whole) or
    /// opening a new history.
    fn user_message(
        &mut self,
        doc: &LineDoc<'_>,
        content: &serde_json::value::RawValue,
    ) -> Result<(), Skip> {
        // Read whole, the summary is no history: the conversation goes
        // on as it ran before it; its text says how large it was.
        if doc.is_compact_summary.0 && self.join {
            if self.seg.compaction.is_none() {
                // Claude Code 1.0.x wrote no boundary line, nor its
                // trigger.
                self.tally.bump(Note::CompactBoundary);
            }
            let k = self.seg.compaction.get_or_insert_with(Default::default);
            k.summary = Some(summary_text(content));
            return Err(Skip::Counted);
        }
        // A compaction's summary opens a new history; a boundary line
        // just before it has split already.
        if doc.is_compact_summary.0
            && (!self.seg.messages.is_empty()
                || self.seg.open.is_some()
                || !self.seg.pending.is_empty())
        {
            self.tally.bump(Note::CompactBoundary);
            self.split();
        }
        if doc.tool_use_result.is_some() {
            self.tally.bump(Note::ToolUseResult);
        }
        Ok(())
    }

    /// An assistant message's response: its identity and usage; a
    /// synthetic reply or an API error is skipped.
    fn response(&mut self, doc: &LineDoc<'_>, msg: MessageDoc<'_>) -> Result<Response, Skip> {
        let synthetic = msg.model.as_deref() == Some(SYNTHETIC_MODEL);
        if synthetic || doc.is_api_error.0 {
            self.tally.bump(Note::Synthetic);
            return Err(Skip::Counted);
        }
        let preserved = raw_str(doc.uuid).is_some_and(|u| self.preserved.contains(&u));
        Ok(Response {
            preserved,
            id: msg
                .id
                .as_deref()
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
            request_id: raw_str(doc.request_id),
            sidechain: doc.is_sidechain.0,
            model: msg.model.map(Cow::into_owned),
            row: msg.usage.map(|u| {
                serde_json::from_str::<UsageDoc>(u.get())
                    .ok()
                    .and_then(|d| {
                        Some(UsageRow {
                            usage: d.recorded()?,
                            iterations: d.recorded_iterations(),
                        })
                    })
            }),
        })
    }

    /// Builds a `content` member's blocks (bad ones dropped and counted),
    /// or passes its string on; `None` when it is neither.
    fn content(&mut self, parsed: Option<Parsed>) -> Option<Result<String, Vec<ContentBlock>>> {
        let items = match parsed? {
            Parsed::Text(t) => return Some(Ok(t)),
            Parsed::Items(items) => items,
        };
        let mut blocks = Vec::with_capacity(items.len());
        for o in items {
            match ContentBlock::from_object(o) {
                Ok(b) => blocks.push(b),
                Err(_) => self.tally.bump(Note::BadBlock),
            }
        }
        Some(Err(blocks))
    }

    fn user_line(&mut self, content: Result<String, Vec<ContentBlock>>, ts: Option<u64>) {
        self.seg.last_ts = ts.or(self.seg.last_ts);
        match content {
            Ok(text) => self.seg.pending.push(UserPart::Text(text)),
            Err(blocks) => {
                for b in blocks {
                    // Only the model calls tools: a tool_use in a user line
                    // would break the id rules the trace must obey.
                    if let BlockKind::ToolUse { .. } = b.kind() {
                        self.tally.bump(Note::BadBlock);
                        continue;
                    }
                    if let BlockKind::ToolResult { tool_use_id, .. } = b.kind() {
                        if !self.seg.tool_uses.contains(tool_use_id) {
                            // A file that starts mid-conversation: its call
                            // came before the file, and its result opens the
                            // history. The result is sent as text (a
                            // tool_result must answer a tool_use of the
                            // trace), so the response to it is a call; what
                            // came before it is in the hidden prefix, whose
                            // size the recorded usage gives.
                            if self.seg.messages.is_empty()
                                && self.seg.open.is_none()
                                && let Some(text) = b.tool_result_payload()
                            {
                                self.tally.bump(Note::SliceStart);
                                self.seg.pending.push(UserPart::Text(text.to_owned()));
                                continue;
                            }
                            self.tally.bump(Note::OrphanResult);
                            continue;
                        }
                        if !self.seg.answered.insert(tool_use_id.clone()) {
                            self.tally.bump(Note::DuplicateResult);
                            continue;
                        }
                    }
                    self.seg.pending.push(UserPart::Block(b));
                }
            }
        }
    }

    fn assistant_line(
        &mut self,
        msg: Response,
        content: Result<String, Vec<ContentBlock>>,
        ts: Option<u64>,
    ) {
        let blocks = match content {
            Ok(text) => vec![ContentBlock::text(&text)],
            Err(blocks) => blocks,
        };
        let Response {
            id,
            request_id,
            sidechain,
            model,
            row,
            preserved,
        } = msg;
        let current = self.done.len();
        let continues = id.is_some()
            && self
                .seg
                .open
                .as_ref()
                .is_some_and(|o| o.id.as_deref() == id.as_deref());
        if !continues {
            if let Some(&(seg, call)) = id.as_ref().and_then(|i| self.seen.get(i)) {
                // The same response again, after another one: a replay.
                self.tally.bump(Note::Replay);
                if seg == current
                    && let Some(c) = call
                {
                    self.offer_usage(c, row);
                }
                return;
            }
            let key = id.as_deref().map(|m| ResponseKey {
                msg_id: m.into(),
                request_id: request_id.as_deref().map(Box::from),
                sidechain,
            });
            self.start_response(id.clone(), model.as_deref(), ts, key, preserved);
        }
        if let Some(open) = self.seg.open.as_mut() {
            for b in blocks {
                if let BlockKind::ToolUse { id, .. } = b.kind()
                    && !self.seg.tool_uses.insert(id.clone())
                {
                    self.tally.bump(Note::DuplicateToolUse);
                    continue;
                }
                // Tool results come from the user side: one in an
                // assistant line would answer nothing the trace can check.
                if let BlockKind::ToolResult { .. } = b.kind() {
                    self.tally.bump(Note::BadBlock);
                    continue;
                }
                open.blocks.push(b);
            }
            if let Some(c) = open.call {
                self.offer_usage(c, row);
            } else if let (Some(c), Some(before)) = (open.call_before, self.done.last_mut()) {
                offer(&mut before.calls[c], row, &mut self.tally);
            }
        }
        self.seg.last_ts = ts.or(self.seg.last_ts);
    }

    fn start_response(
        &mut self,
        id: Option<String>,
        model: Option<&str>,
        ts: Option<u64>,
        key: Option<ResponseKey>,
        preserved: bool,
    ) {
        self.seg.close_open();
        self.seg.commit_pending();
        // A response the compaction kept verbatim was made before it: its
        // request was the history before the compaction (which ends with
        // the message it answered), where its call goes; after the
        // summary it is history only.
        let before = self.done.len().checked_sub(1);
        if preserved
            && let Some(seg) = self.done.last_mut()
            && seg.messages.last().is_some_and(|m| m.role() == Role::User)
        {
            self.tally.bump(Note::PreservedResponse);
            seg.calls.push(Draft {
                messages: seg.messages.len(),
                start_ms: ts.or(seg.last_ts),
                model: model.filter(|m| !m.is_empty()).map(str::to_owned),
                usage: None,
                iterations: Vec::new(),
                rows: 0,
                cleared: Vec::new(),
                compacted: None,
                key,
            });
            let call_before = Some(seg.calls.len() - 1);
            if let (Some(id), Some(b)) = (&id, before) {
                self.seen.insert(id.clone(), (b, call_before));
            }
            self.seg.open = Some(Open {
                id,
                blocks: Vec::new(),
                call: None,
                call_before,
            });
            return;
        }
        if self.seg.messages.is_empty() {
            // Its request is not in the file (a subagent's warm-up prompt,
            // a resumed file): a stand-in user message takes its place, so
            // the response is a call; what it sent is in the hidden prefix,
            // sized by the recorded usage.
            self.tally.bump(Note::NoRequest);
            self.seg.messages.push(Message::new(
                Role::User,
                vec![ContentBlock::text(UNRECORDED_REQUEST)],
            ));
        }
        let n = self.seg.messages.len();
        let call = {
            self.seg.calls.push(Draft {
                messages: n,
                start_ms: self.seg.last_ts.or(ts),
                model: model.filter(|m| !m.is_empty()).map(str::to_owned),
                usage: None,
                iterations: Vec::new(),
                rows: 0,
                cleared: std::mem::take(&mut self.seg.cleared),
                // A response the compaction kept was made before it.
                compacted: if preserved {
                    None
                } else {
                    self.seg.compaction.take()
                },
                key,
            });
            Some(self.seg.calls.len() - 1)
        };
        if let Some(id) = &id {
            self.seen.insert(id.clone(), (self.done.len(), call));
        }
        self.seg.open = Some(Open {
            id,
            blocks: Vec::new(),
            call,
            call_before: None,
        });
    }

    /// Offers one usage row of a response to its call in this history.
    fn offer_usage(&mut self, call: usize, row: Option<Option<UsageRow>>) {
        if let Some(draft) = self.seg.calls.get_mut(call) {
            offer(draft, row, &mut self.tally);
        }
    }

    pub(super) fn split(&mut self) {
        self.seg.finish();
        let seg = std::mem::take(&mut self.seg);
        self.done.push(seg);
    }
}

/// Offers one usage row of a response to its call: ccusage's rule keeps
/// the row with the larger token total.
fn offer(draft: &mut Draft, row: Option<Option<UsageRow>>, tally: &mut Tally) {
    let Some(row) = row else { return };
    draft.rows += 1;
    let Some(UsageRow {
        usage: u,
        iterations,
    }) = row
    else {
        tally.bump(Note::UnbilledUsage);
        return;
    };
    let better = draft
        .usage
        .as_ref()
        .is_none_or(|old| usage_total(&u) > usage_total(old));
    if better {
        draft.usage = Some(u);
        draft.iterations = iterations;
    }
}

/// The text of a summary line's `content`: the string, or its text blocks
/// joined.
fn summary_text(content: &serde_json::value::RawValue) -> String {
    match parse_content(content) {
        Some(Parsed::Text(t)) => t,
        Some(Parsed::Items(items)) => items
            .into_iter()
            .filter_map(|o| ContentBlock::from_object(o).ok())
            .filter_map(|b| match b.kind() {
                BlockKind::Text { text } => Some(text.to_string()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
        None => String::new(),
    }
}

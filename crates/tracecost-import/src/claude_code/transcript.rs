//! Claude Code transcripts to canonical traces.
//!
//! # How lines become a history
//!
//! - Claude Code writes one JSONL line per content block of an API
//!   response; the lines of one response share `message.id` (and
//!   `requestId`). The assistant message is rebuilt from them, in order,
//!   even when tool_result lines of parallel tool calls are interleaved
//!   between them. Thinking blocks are kept; every block keeps its original
//!   bytes (tool_use `input` key order included).
//! - `user` lines carry the user's text or `tool_result` blocks in
//!   `message.content`. The tool output the model saw is that block; the
//!   `toolUseResult` member is a richer side copy that was never sent, and
//!   is only counted in the report. Consecutive user lines (several tool
//!   results, a tool result and a skill prompt, …) merge into one user
//!   message, tool_result blocks first as the API requires, so the history
//!   alternates as the API saw it.
//! - `isMeta` user lines (local-command caveats, skill and slash-command
//!   prompts) are kept: Claude Code hides them from the user but sends them
//!   to the model (a skill's prompt is what the model answers).
//! - A file that starts mid-conversation opens with tool_results whose
//!   tool_use came before the file: they are sent as text (their content),
//!   so the response to them is a call, and what came before is in the
//!   hidden prefix (its size is the recorded usage's). Any other
//!   tool_result whose tool_use is not earlier in the file, a second
//!   result for one tool_use and a reused tool_use id are dropped and
//!   counted, so the trace always validates.
//! - `isSidechain` lines in a main session file (Claude Code 1.0.x wrote
//!   its Task subagents' turns there) belong to a subagent's conversation:
//!   they are followed by `parentUuid` into one conversation per subagent
//!   (a line whose parent is not a sidechain line starts one; parallel
//!   subagents interleave), and each becomes its own trace, named
//!   `<session>.sidechain-N` in the order they start, as if it had its own
//!   file. In a subagent file every line is a sidechain line and they form
//!   the trace.
//! - Assistant lines with `isApiErrorMessage` or model `<synthetic>` are
//!   written by Claude Code, not by the model, and are not sent back: they
//!   are neither calls nor history.
//! - Summary, system, `file-history-snapshot`, attachment, progress and other
//!   bookkeeping lines are skipped and counted by type. A system line with
//!   subtype `compact_boundary` ends the trace: after a compaction the API
//!   sees a new history (the summary), so the rest of the file becomes a new
//!   trace named `<name>.part2`, `.part3`, …. Claude Code 1.0.x wrote no
//!   such line: there the summary's own user line (`isCompactSummary`)
//!   ends the trace before it.
//! - Lines that are not valid JSON are skipped and counted (the file may be
//!   being written), as ccusage does. Empty files are skipped. Nothing in a
//!   file can make the importer panic or fail; only I/O errors do.
//! - The lines are read in file order; branches of the `parentUuid` tree (a
//!   rewound conversation) are not separated.
//!
//! # Calls
//!
//! Each API response is one call. Its `messages` is the number of history
//! messages before the response, its `start_ms` the timestamp of the last
//! user or assistant line before the response's first line (normally the
//! user or tool_result line: an assistant line is written during the
//! response, after the request started), its `model` the response's
//! `message.model` when it differs from the trace's default (the most
//! common model). A response with no message before it in the file (its
//! request was not recorded: a subagent's warm-up, a resumed file) follows
//! a stand-in user message ([`UNRECORDED_REQUEST`]) and is a call: a call
//! must send at least one message, and what its request held is in the
//! hidden prefix, whose size the recorded usage gives.
//!
//! Usage is recorded once per response following ccusage's rule: rows share
//! the key (`message.id`, `requestId`); on a collision the row with the
//! larger token total (input + output + cache writes + cache reads) is kept.
//! Every line of a response repeats the usage object, the early ones with
//! partial output counts, so the largest is the final one. Rows with null or
//! malformed token fields carry no billable tokens and record no usage;
//! `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`
//! are kept when present.
//!
//! # What a transcript does not contain
//!
//! - The system prompt and tool definitions: each trace has one empty
//!   [`Prompt`]. Their size is estimated in
//!   [`Trace::hidden_prefix_tokens`]: the first call's recorded total input
//!   (uncached + cache writes + cache reads) minus an estimate of the
//!   visible messages of that call, clamped at 0. The estimate is the number
//!   of characters of the messages' JSON divided by 4 (rounded up), except
//!   that image and document blocks count [`MEDIA_TOKENS`] each instead of
//!   their base64 text. (If the first call recorded no usage, the first call
//!   that did is used.) Token counting proper lives in `crate::cost`.
//! - Cache markers. Claude Code keeps one rolling breakpoint at the end of
//!   each request plus markers on the system prompt and the tool
//!   definitions, but the transcript records none of them, so every call has
//!   `markers: None`; a replay should apply that policy rather than read it
//!   from the trace.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{self, BufRead};
use std::path::PathBuf;
use std::sync::Arc;

use rayon::prelude::*;
use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::value::RawValue;

use super::usage::{ResponseIndex, ResponseKey};
use super::{
    FileInfo, Flag, Line, SYNTHETIC_MODEL, UsageDoc, discover_readable, file_info, for_each_line,
    usage_total,
};
use crate::engine::cache::ProviderKind;
use crate::engine::json::RawObject;
use crate::engine::message::{BlockKind, ContentBlock, Message, Role, ToolResultContent};
use crate::time::parse_rfc3339_ms;
use crate::trace::{Call, Prompt, RecordedUsage, Trace};
use crate::{ImportError, ImportOptions, ImportOutput, ImportReport};

use crate::trace::MEDIA_TOKENS;

/// Imports Claude Code transcripts: one trace per session or subagent file
/// (more when a session was compacted), in sorted path order.
///
/// `inputs` may be Claude config roots (holding `projects/`), `projects/`
/// directories, project directories or `.jsonl` files. Fails only when an
/// input cannot be read or no transcript is found; everything odd inside a
/// file is skipped and counted in the report. See the module documentation
/// for the mapping.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportOutput, ImportError> {
    crate::Format::ClaudeCode.import(inputs, opts)
}

/// [`crate::Format::import_each`] for Claude Code: a folder
/// of any size is imported holding only a few files at a time. Files are
/// read line by line and in parallel, in windows of one per worker thread,
/// and each window's traces are handed over, in path order, before the next
/// window is read.
pub(crate) fn import_each<E: From<ImportError>>(
    inputs: &[PathBuf],
    opts: &ImportOptions,
    progress: &dyn crate::progress::Progress,
    emit: &mut dyn FnMut(Trace) -> Result<(), E>,
) -> Result<ImportReport, E> {
    let mut report = ImportReport::default();
    let files = discover_readable(inputs, opts.skip_invalid.then_some(&mut report.unread))?;
    progress.start(
        "import",
        crate::file_sizes(&files).iter().sum(),
        crate::progress::Unit::Bytes,
    );
    let mut tally = Tally::default();
    let mut responses = Responses::default();
    let window = rayon::current_num_threads().max(1);
    for chunk in files.chunks(window) {
        let outcomes: Vec<Result<Option<FileOutcome>, ImportError>> = chunk
            .par_iter()
            .map(|path| {
                let io = |source| ImportError::Io {
                    path: path.to_path_buf(),
                    source,
                };
                let file = match std::fs::File::open(path) {
                    Ok(file) => file,
                    // Passed over when asked; listed below, in path order.
                    Err(_) if opts.skip_invalid => return Ok(None),
                    Err(e) => return Err(io(e)),
                };
                let size = file.metadata().map_or(0, |m| m.len());
                let reader = io::BufReader::with_capacity(1 << 20, file);
                let mut outcome = import_from(reader, &file_info(path), opts).map_err(io)?;
                for t in &mut outcome.traces {
                    t.source = Some(path.display().to_string());
                }
                progress.advance(size);
                Ok(Some(outcome))
            })
            .collect();
        for (path, outcome) in chunk.iter().zip(outcomes) {
            let Some(o) = outcome? else {
                let why = std::fs::File::open(path)
                    .err()
                    .map_or_else(|| "cannot read".to_owned(), |e| format!("cannot read: {e}"));
                report.unread.push((path.clone(), why));
                continue;
            };
            report.files += 1;
            report.skipped_lines += o.skipped_lines;
            if o.empty || o.traces.is_empty() {
                report.skipped_files += 1;
            }
            tally.merge(&o.tally);
            for (t, keys) in o.traces.into_iter().zip(o.keys) {
                if let Some(t) = once_per_response(t, &keys, &mut responses, &mut tally) {
                    emit(t)?;
                }
            }
        }
    }
    report.joined_lines = tally.get(Note::JoinedLine);
    report.unmapped = tally.lines();
    Ok(report)
}

/// The responses imported so far, over all files in path order.
#[derive(Default)]
struct Responses {
    index: ResponseIndex,
    slots: usize,
}

/// `t` with every call whose response an earlier trace already holds made
/// history only, as `usage` counts it once ([`ResponseKey`]'s rule; the
/// first in path order is the call): a resumed or copied session repeats
/// the lines of the one it continues. Results cleared before such a call
/// stay cleared from the next one. `None` when no call is left.
fn once_per_response(
    mut t: Trace,
    keys: &[Option<ResponseKey>],
    seen: &mut Responses,
    tally: &mut Tally,
) -> Option<Trace> {
    let mut carried: Vec<String> = Vec::new();
    let mut calls = Vec::with_capacity(t.calls.len());
    for (mut call, key) in std::mem::take(&mut t.calls).into_iter().zip(keys) {
        if let Some(key) = key {
            if seen.index.find(key).is_some() {
                tally.bump(Note::Imported);
                carried.append(&mut call.cleared);
                continue;
            }
            seen.index.set(seen.slots, key.clone());
            seen.slots += 1;
        }
        if !carried.is_empty() {
            carried.append(&mut call.cleared);
            call.cleared = std::mem::take(&mut carried);
        }
        calls.push(call);
    }
    if calls.is_empty() {
        tally.bump(Note::ImportedTrace);
        return None;
    }
    t.calls = calls;
    Some(t)
}

/// One transcript line, with only the members the importer reads.
#[derive(Deserialize)]
struct LineDoc<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    subtype: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Flag,
    #[serde(default, borrow)]
    uuid: Option<&'a RawValue>,
    #[serde(rename = "parentUuid", default, borrow)]
    parent_uuid: Option<&'a RawValue>,
    #[serde(rename = "isApiErrorMessage", default)]
    is_api_error: Flag,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Flag,
    #[serde(rename = "requestId", default, borrow)]
    request_id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    timestamp: Option<&'a RawValue>,
    #[serde(rename = "sessionId", default, borrow)]
    session_id: Option<&'a RawValue>,
    #[serde(rename = "toolUseResult", default, borrow)]
    tool_use_result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    message: Option<&'a RawValue>,
    #[serde(rename = "microcompactMetadata", default)]
    microcompact: Option<MicrocompactDoc>,
}

/// The `microcompactMetadata` member of a `microcompact_boundary` line.
#[derive(Deserialize)]
struct MicrocompactDoc {
    #[serde(rename = "compactedToolIds", default)]
    compacted_tool_ids: Vec<String>,
}

/// The `message` member of a user or assistant line.
#[derive(Deserialize)]
struct MessageDoc<'a> {
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
    #[serde(default, borrow)]
    usage: Option<&'a RawValue>,
}

fn raw_str(raw: Option<&RawValue>) -> Option<String> {
    raw.and_then(|r| serde_json::from_str::<String>(r.get()).ok())
}

/// The text standing for a request the transcript does not hold.
pub const UNRECORDED_REQUEST: &str = "[the request of this response is not in the transcript]";

/// A line at least this long is given back to the reader once its members
/// are parsed, before its blocks are built (see `Builder::line`); a
/// shorter one's buffer is kept for the next line.
const LONG_LINE: usize = 16 << 20;

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
    row: Option<Option<RecordedUsage>>,
}

/// A `content` member, parsed but not yet made into blocks.
enum Parsed {
    Text(String),
    Items(Vec<RawObject>),
}

fn parse_content(raw: &RawValue) -> Option<Parsed> {
    let text = raw.get().trim_start();
    if text.starts_with('"') {
        return serde_json::from_str::<String>(raw.get())
            .ok()
            .map(Parsed::Text);
    }
    serde_json::from_str(raw.get()).ok().map(Parsed::Items)
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

/// Things the importer skipped or could not map, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Note {
    ToolUseResult,
    Synthetic,
    BadShape,
    BadBlock,
    OrphanResult,
    SliceStart,
    DuplicateResult,
    DuplicateToolUse,
    NoRequest,
    Replay,
    RepeatedUsage,
    UnbilledUsage,
    CompactBoundary,
    Microcompact,
    NoCallSegment,
    NoCallFile,
    Imported,
    ImportedTrace,
    JoinedLine,
}

const NOTES: [(Note, &str); 19] = [
    (
        Note::ToolUseResult,
        "toolUseResult side copies (not sent to the model; the tool_result block was used)",
    ),
    (
        Note::Synthetic,
        "synthetic or API-error assistant lines (written by Claude Code, not the model; no call)",
    ),
    (
        Note::BadShape,
        "lines of unexpected shape (not an object, mistyped members, or no usable message; skipped)",
    ),
    (
        Note::BadBlock,
        "content blocks of unexpected shape (dropped)",
    ),
    (
        Note::OrphanResult,
        "tool_result blocks whose tool_use is not earlier in the file (dropped)",
    ),
    (
        Note::SliceStart,
        "tool_result blocks opening a file that starts mid-conversation (their call is before the file: sent as text, so the response to them is a call)",
    ),
    (
        Note::DuplicateResult,
        "repeated tool_result blocks for one tool_use (dropped)",
    ),
    (
        Note::DuplicateToolUse,
        "tool_use blocks reusing an earlier id (dropped)",
    ),
    (
        Note::NoRequest,
        "responses with no message before them in the file (replayed after a stand-in for their unrecorded request, sized by the recorded usage)",
    ),
    (
        Note::Replay,
        "assistant lines repeating an earlier response (skipped)",
    ),
    (
        Note::RepeatedUsage,
        "usage rows repeated on the lines of one response (counted once, larger total kept)",
    ),
    (
        Note::UnbilledUsage,
        "usage rows with null, missing or malformed token counts (no usage recorded)",
    ),
    (
        Note::CompactBoundary,
        "compaction boundaries (the history restarts; a new trace begins)",
    ),
    (
        Note::Microcompact,
        "microcompaction boundaries (tool results Claude Code cleared in place; the status quo sends them cleared)",
    ),
    (
        Note::NoCallSegment,
        "history segments with no call (before a compaction boundary; dropped)",
    ),
    (
        Note::NoCallFile,
        "files with no call to import (only bookkeeping lines, or no recorded request)",
    ),
    (
        Note::Imported,
        "responses already imported from an earlier file (a resumed or copied session repeats them: history, not a call again)",
    ),
    (
        Note::ImportedTrace,
        "traces whose every response an earlier file holds (skipped)",
    ),
    (
        Note::JoinedLine,
        "lines holding two or more records with no newline between them (each record read)",
    ),
];

/// Counts of [`Note`]s and of skipped line types.
#[derive(Debug, Clone, Default)]
struct Tally {
    notes: [usize; NOTES.len()],
    line_types: BTreeMap<String, usize>,
}

impl Tally {
    fn bump(&mut self, note: Note) {
        self.add(note, 1);
    }

    fn add(&mut self, note: Note, n: usize) {
        if let Some(i) = NOTES.iter().position(|(k, _)| *k == note) {
            self.notes[i] += n;
        }
    }

    fn get(&self, note: Note) -> usize {
        NOTES
            .iter()
            .position(|(k, _)| *k == note)
            .map_or(0, |i| self.notes[i])
    }

    fn line_type(&mut self, kind: &str) {
        let kind = if kind.is_empty() { "(no type)" } else { kind };
        *self.line_types.entry(kind.to_owned()).or_default() += 1;
    }

    fn merge(&mut self, other: &Tally) {
        for (a, b) in self.notes.iter_mut().zip(other.notes) {
            *a += b;
        }
        for (k, v) in &other.line_types {
            *self.line_types.entry(k.clone()).or_default() += v;
        }
    }

    fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = NOTES
            .iter()
            .zip(self.notes)
            .filter(|(_, n)| *n > 0)
            .map(|((_, label), n)| format!("{n} × {label}"))
            .collect();
        out.extend(self.line_types.iter().map(|(kind, n)| {
            format!("{n} × `{kind}` lines (transcript bookkeeping, not sent to the model)")
        }));
        out
    }
}

/// What one file gave.
#[derive(Debug, Default)]
struct FileOutcome {
    traces: Vec<Trace>,
    /// Per trace, per call: its response's identity.
    keys: Vec<Vec<Option<ResponseKey>>>,
    tally: Tally,
    skipped_lines: usize,
    empty: bool,
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
}

/// A call being built.
struct Draft {
    messages: usize,
    start_ms: Option<u64>,
    model: Option<String>,
    usage: Option<RecordedUsage>,
    /// Usage rows seen for this response (billable or not).
    rows: usize,
    /// Results cleared in place just before this call.
    cleared: Vec<String>,
    /// The response's identity across files.
    key: Option<ResponseKey>,
}

/// One history: the whole file, or the part between compaction boundaries.
#[derive(Default)]
struct Segment {
    messages: Vec<Message>,
    calls: Vec<Draft>,
    tool_uses: HashSet<Arc<str>>,
    answered: HashSet<Arc<str>>,
    open: Option<Open>,
    pending: Vec<UserPart>,
    /// Timestamp of the last user or assistant line read.
    last_ts: Option<u64>,
    /// Results a microcompaction boundary cleared, for the next call.
    cleared: Vec<String>,
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
struct Builder {
    subagent: bool,
    tally: Tally,
    skipped_lines: usize,
    done: Vec<Segment>,
    seg: Segment,
    /// Response ids seen: segment index and call index.
    seen: HashMap<String, (usize, Option<usize>)>,
    session_id: Option<String>,
    /// Lines at least this long are given back once parsed
    /// ([`LONG_LINE`]; tests choose others).
    long_line: usize,
    /// The inline subagent conversations of a main session file, in the
    /// order they start.
    sidechains: Vec<Builder>,
    /// The conversation of each sidechain line read, by `uuid`.
    sidechain_of: HashMap<String, usize>,
}

impl Builder {
    fn new(subagent: bool, long_line: usize) -> Self {
        Self {
            subagent,
            long_line,
            tally: Tally::default(),
            skipped_lines: 0,
            done: Vec::new(),
            seg: Segment::default(),
            seen: HashMap::new(),
            session_id: None,
            sidechains: Vec::new(),
            sidechain_of: HashMap::new(),
        }
    }

    fn line(&mut self, line: &mut Line<'_>) {
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
        if !text.trim_start().starts_with('{') {
            if serde_json::from_str::<IgnoredAny>(text).is_ok() {
                self.tally.bump(Note::BadShape);
            } else {
                self.skipped_lines += 1;
            }
            return Err(Skip::Counted);
        }
        let doc: LineDoc = match serde_json::from_str(text) {
            Ok(d) => d,
            Err(_) => {
                if serde_json::from_str::<IgnoredAny>(text).is_ok() {
                    self.tally.bump(Note::BadShape);
                } else if let Some(records) = crate::common::joined_records(text) {
                    return Err(Skip::Joined(records));
                } else {
                    self.skipped_lines += 1;
                }
                return Err(Skip::Counted);
            }
        };
        if self.session_id.is_none() {
            self.session_id = raw_str(doc.session_id);
        }
        let kind = doc.kind.as_deref().unwrap_or("");
        match kind {
            "user" | "assistant" => {}
            "system" if doc.subtype.as_deref() == Some("compact_boundary") => {
                self.tally.bump(Note::CompactBoundary);
                self.split();
                return Err(Skip::Counted);
            }
            "system" if doc.subtype.as_deref() == Some("microcompact_boundary") => {
                self.tally.bump(Note::Microcompact);
                // Only results already in the history can have been
                // cleared.
                let seg = &mut self.seg;
                for id in doc
                    .microcompact
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
        if doc.is_sidechain.0 && !self.subagent {
            let parent = raw_str(doc.parent_uuid);
            let i = match parent.and_then(|p| self.sidechain_of.get(&p).copied()) {
                Some(i) => i,
                None => {
                    self.sidechains.push(Builder::new(true, self.long_line));
                    self.sidechains.len() - 1
                }
            };
            if let Some(uuid) = raw_str(doc.uuid) {
                self.sidechain_of.insert(uuid, i);
            }
            return Err(Skip::Sidechain(i));
        }
        let ts = raw_str(doc.timestamp).and_then(|t| parse_rfc3339_ms(&t));
        let Some(msg) = doc
            .message
            .and_then(|m| serde_json::from_str::<MessageDoc>(m.get()).ok())
        else {
            self.tally.bump(Note::BadShape);
            return Err(Skip::Counted);
        };
        let Some(content) = msg.content else {
            self.tally.bump(Note::BadShape);
            return Err(Skip::Counted);
        };
        let response = if kind == "user" {
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
            None
        } else {
            let synthetic = msg.model.as_deref() == Some(SYNTHETIC_MODEL);
            if synthetic || doc.is_api_error.0 {
                self.tally.bump(Note::Synthetic);
                return Err(Skip::Counted);
            }
            Some(Response {
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
                        .and_then(|d| d.recorded())
                }),
            })
        };
        Ok(Taken {
            content: parse_content(content),
            response,
            ts,
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
                            if self.seg.messages.is_empty() && self.seg.open.is_none() {
                                if let Some(text) = b.tool_result_payload() {
                                    self.tally.bump(Note::SliceStart);
                                    self.seg.pending.push(UserPart::Text(text.to_owned()));
                                    continue;
                                }
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
            self.start_response(id.clone(), model.as_deref(), ts, key);
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
    ) {
        self.seg.close_open();
        self.seg.commit_pending();
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
                rows: 0,
                cleared: std::mem::take(&mut self.seg.cleared),
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
        });
    }

    /// Offers one usage row of a response: ccusage's rule keeps the row
    /// with the larger token total.
    fn offer_usage(&mut self, call: usize, row: Option<Option<RecordedUsage>>) {
        let Some(row) = row else { return };
        let Some(draft) = self.seg.calls.get_mut(call) else {
            return;
        };
        draft.rows += 1;
        let Some(u) = row else {
            self.tally.bump(Note::UnbilledUsage);
            return;
        };
        let better = draft
            .usage
            .as_ref()
            .is_none_or(|old| usage_total(&u) > usage_total(old));
        if better {
            draft.usage = Some(u);
        }
    }

    fn split(&mut self) {
        self.seg.finish();
        let seg = std::mem::take(&mut self.seg);
        self.done.push(seg);
    }
}

/// Imports one file, read line by line.
fn import_from<R: BufRead>(
    reader: R,
    info: &FileInfo,
    opts: &ImportOptions,
) -> io::Result<FileOutcome> {
    import_lines(reader, info, opts, LONG_LINE)
}

/// [`import_from`], giving back lines of `long_line` bytes or more once
/// parsed.
fn import_lines<R: BufRead>(
    reader: R,
    info: &FileInfo,
    opts: &ImportOptions,
    long_line: usize,
) -> io::Result<FileOutcome> {
    let mut out = FileOutcome::default();
    let mut b = Builder::new(info.subagent, long_line);
    let blank = for_each_line(reader, |line| match line {
        Some(l) => b.line(l),
        None => b.skipped_lines += 1,
    })?;
    if blank {
        out.empty = true;
        return Ok(out);
    }
    b.split();
    let base = trace_name(info, b.session_id.as_deref());
    let session = parent_session(info, b.session_id.as_deref());
    let description = describe(info, b.session_id.as_deref());
    let mut tally = std::mem::take(&mut b.tally);
    let mut skipped = b.skipped_lines;
    push_traces(
        &mut out,
        &mut tally,
        b.done,
        &base,
        &description,
        &session,
        info,
        opts,
    );
    for (k, mut side) in b.sidechains.into_iter().enumerate() {
        side.split();
        tally.merge(&side.tally);
        skipped += side.skipped_lines;
        let name = format!("{base}.sidechain-{}", k + 1);
        let description = format!(
            "Claude Code subagent {} of session {}, project {} (its turns written in the session's file)",
            k + 1,
            info.stem,
            info.project
        );
        push_traces(
            &mut out,
            &mut tally,
            side.done,
            &name,
            &description,
            &session,
            info,
            opts,
        );
    }
    if out.traces.is_empty() {
        tally.bump(Note::NoCallFile);
    }
    out.tally = tally;
    out.skipped_lines = skipped;
    Ok(out)
}

/// Adds the traces of one conversation's segments (`base`, then
/// `base.part2`, … after each compaction) to `out`.
#[allow(clippy::too_many_arguments)]
fn push_traces(
    out: &mut FileOutcome,
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

fn trace_name(info: &FileInfo, session_id: Option<&str>) -> String {
    if info.nested {
        return format!("{}.{}", info.session, info.stem);
    }
    match session_id {
        Some(s) if info.subagent && !s.is_empty() && s != info.stem => {
            format!("{s}.{}", info.stem)
        }
        _ => info.stem.clone(),
    }
}

/// The conversation a file's traces belong to: a subagent's parent
/// session, else the file's own.
fn parent_session(info: &FileInfo, session_id: Option<&str>) -> String {
    if info.nested {
        return info.session.clone();
    }
    match session_id {
        Some(s) if info.subagent && !s.is_empty() && s != info.stem => s.to_owned(),
        _ => info.stem.clone(),
    }
}

fn describe(info: &FileInfo, session_id: Option<&str>) -> String {
    if info.subagent {
        let parent = if info.nested {
            Some(info.session.as_str())
        } else {
            session_id.filter(|s| !s.is_empty() && *s != info.stem)
        };
        match parent {
            Some(p) => format!(
                "Claude Code subagent {} of session {p}, project {}",
                info.stem, info.project
            ),
            None => format!(
                "Claude Code subagent {}, project {}",
                info.stem, info.project
            ),
        }
    } else {
        format!(
            "Claude Code session {}, project {}",
            info.stem, info.project
        )
    }
}

pub use crate::trace::CLAUDE_CODE_STATUS_QUO;

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
    let calls = seg
        .calls
        .into_iter()
        .map(|d| Call {
            messages: d.messages,
            start_ms: d.start_ms,
            model: d.model.filter(|m| *m != model),
            prompt: 0,
            markers: None,
            usage: d.usage,
            cleared: d.cleared,
        })
        .collect();
    Trace {
        name,
        description,
        provider: ProviderKind::Anthropic,
        model,
        // Claude Code marks the tools, the system prompt and the last block
        // of every request (a rolling breakpoint, each request reading what
        // the previous one wrote), with the TTL the usage shows it asked for.
        status_quo: Some(CLAUDE_CODE_RECORDED_STATUS_QUO.to_owned()),
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

/// A rough token estimate of messages: characters of their JSON / 4
/// (rounded up), with image and document blocks counted as
/// [`MEDIA_TOKENS`] each instead of their base64 text.
fn estimate_tokens(messages: &[Message]) -> u64 {
    fn media(blocks: &[ContentBlock], chars: &mut u64, count: &mut u64) {
        for b in blocks {
            match b.kind() {
                BlockKind::Image | BlockKind::Document => {
                    *chars += b.to_json().chars().count() as u64;
                    *count += 1;
                }
                BlockKind::ToolResult {
                    content: ToolResultContent::Blocks(inner),
                    ..
                } => media(inner, chars, count),
                _ => {}
            }
        }
    }
    let (mut chars, mut media_chars, mut media_count) = (0u64, 0u64, 0u64);
    for m in messages {
        chars += m.to_json().chars().count() as u64;
        media(m.blocks(), &mut media_chars, &mut media_count);
    }
    chars
        .saturating_sub(media_chars)
        .div_ceil(4)
        .saturating_add(media_count * MEDIA_TOKENS)
}

#[cfg(test)]
mod tests {
    use super::super::discover;
    use super::*;
    use std::path::Path;

    use crate::claude_code::scan_usage;
    use crate::trace::{load_str, to_json};

    fn info(stem: &str, subagent: bool) -> FileInfo {
        FileInfo {
            project: "proj".into(),
            account: "claude-code:/h/.claude".into(),
            session: stem.into(),
            stem: stem.into(),
            subagent,
            nested: false,
        }
    }

    #[test]
    fn subagents_belong_to_their_parent_session() {
        let agent = info("agent-1", true);
        assert_eq!(trace_name(&agent, Some("s-9")), "s-9.agent-1");
        assert_eq!(parent_session(&agent, Some("s-9")), "s-9");
        // A main session is its own; so is a subagent whose parent is unknown.
        assert_eq!(parent_session(&info("s-9", false), Some("s-9")), "s-9");
        assert_eq!(parent_session(&agent, None), "agent-1");
    }

    fn run(text: &str) -> FileOutcome {
        import_from(
            text.as_bytes(),
            &info("s1", false),
            &ImportOptions::default(),
        )
        .unwrap()
    }

    fn validate(t: &Trace) {
        let json = to_json(t);
        let loaded = load_str(&json, "t.json").unwrap_or_else(|e| panic!("{e}\n{json}"));
        assert_eq!(&loaded.traces[0], t);
    }

    fn user(ts: &str, content: &str) -> String {
        format!(
            r#"{{"type":"user","timestamp":"{ts}","message":{{"role":"user","content":{content}}}}}"#
        )
    }

    fn asst(ts: &str, id: &str, block: &str, usage: &str) -> String {
        format!(
            r#"{{"type":"assistant","timestamp":"{ts}","requestId":"req_{id}","message":{{"id":"{id}","model":"claude-sonnet-4-5","role":"assistant","content":[{block}],"usage":{usage}}}}}"#
        )
    }

    const U: &str = r#"{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":0,"output_tokens":5}"#;

    /// Found by fuzzing (fuzz/fuzz_targets/import_claude_code.rs): a
    /// tool_result block in an assistant line, or a tool_use block in a user
    /// line, made a trace that did not load.
    #[test]
    fn blocks_on_the_wrong_side_are_dropped_so_the_trace_loads() {
        let lines = [
            user("2025-01-01T00:00:00Z", r#""go""#),
            asst(
                "2025-01-01T00:00:01Z",
                "m1",
                r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#,
                U,
            ),
            user(
                "2025-01-01T00:00:02Z",
                r#"[{"type":"tool_result","tool_use_id":"t1","content":"x"},{"type":"tool_use","id":"t2","name":"Read","input":{}}]"#,
            ),
            asst(
                "2025-01-01T00:00:03Z",
                "m2",
                r#"{"type":"tool_result","tool_use_id":"t1","content":"again"}"#,
                U,
            ),
            asst(
                "2025-01-01T00:00:04Z",
                "m3",
                r#"{"type":"tool_use","id":"t2","name":"Read","input":{}}"#,
                U,
            ),
        ]
        .join("\n");
        let out = run(&lines);
        assert_eq!(out.traces.len(), 1);
        validate(&out.traces[0]);
        assert_eq!(out.tally.get(Note::BadBlock), 2);
    }

    #[test]
    fn interleaved_parallel_tool_calls_make_one_assistant_message() {
        let lines = [
            user("2025-01-01T00:00:00Z", r#""go""#),
            asst(
                "2025-01-01T00:00:01Z",
                "m1",
                r#"{"type":"tool_use","id":"t1","name":"Read","input":{"b":1,"a":2}}"#,
                U,
            ),
            user(
                "2025-01-01T00:00:02Z",
                r#"[{"type":"tool_result","tool_use_id":"t1","content":"one"}]"#,
            ),
            asst(
                "2025-01-01T00:00:03Z",
                "m1",
                r#"{"type":"tool_use","id":"t2","name":"Read","input":{}}"#,
                U,
            ),
            user(
                "2025-01-01T00:00:04Z",
                r#"[{"type":"tool_result","tool_use_id":"t2","content":"two"}]"#,
            ),
            asst(
                "2025-01-01T00:00:05Z",
                "m2",
                r#"{"type":"text","text":"done"}"#,
                U,
            ),
        ];
        let out = run(&lines.join("\n"));
        let t = &out.traces[0];
        assert_eq!(t.messages.len(), 4);
        assert_eq!(t.messages[1].blocks().len(), 2);
        assert_eq!(t.messages[2].blocks().len(), 2);
        assert_eq!(
            t.messages[1].blocks()[0].tool_input().unwrap().get(),
            r#"{"b":1,"a":2}"#
        );
        assert_eq!(t.calls.len(), 2);
        assert_eq!(t.calls[1].messages, 3);
        assert_eq!(
            t.calls[1].start_ms,
            parse_rfc3339_ms("2025-01-01T00:00:04Z")
        );
        assert_eq!(out.tally.get(Note::RepeatedUsage), 1);
        validate(t);
    }

    #[test]
    fn text_after_tool_results_is_moved_behind_them() {
        let lines = [
            user("2025-01-01T00:00:00Z", r#""go""#),
            asst(
                "2025-01-01T00:00:01Z",
                "m1",
                r#"{"type":"tool_use","id":"t1","name":"Skill","input":{}}"#,
                U,
            ),
            user("2025-01-01T00:00:02Z", r#""skill prompt""#),
            user(
                "2025-01-01T00:00:03Z",
                r#"[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]"#,
            ),
            asst(
                "2025-01-01T00:00:04Z",
                "m2",
                r#"{"type":"text","text":"done"}"#,
                U,
            ),
        ];
        let t = &run(&lines.join("\n")).traces[0];
        let kinds: Vec<_> = t.messages[2]
            .blocks()
            .iter()
            .map(|b| b.block_type())
            .collect();
        assert_eq!(kinds, ["tool_result", "text"]);
        validate(t);
    }

    #[test]
    fn compaction_boundary_starts_a_new_trace() {
        let lines = [
            user("2025-01-01T00:00:00Z", r#""first""#),
            asst(
                "2025-01-01T00:00:01Z",
                "m1",
                r#"{"type":"text","text":"a"}"#,
                U,
            ),
            r#"{"type":"system","subtype":"compact_boundary","content":"Conversation compacted"}"#
                .to_owned(),
            user("2025-01-01T00:01:00Z", r#""summary of the above""#),
            asst(
                "2025-01-01T00:01:01Z",
                "m2",
                r#"{"type":"text","text":"b"}"#,
                U,
            ),
        ];
        let out = run(&lines.join("\n"));
        assert_eq!(out.traces.len(), 2);
        assert_eq!(out.traces[1].name, "s1.part2");
        assert_eq!(out.traces[1].calls[0].messages, 1);
        assert_eq!(out.tally.get(Note::CompactBoundary), 1);
        out.traces.iter().for_each(validate);
    }

    #[test]
    fn a_microcompaction_boundary_clears_results_from_the_next_call_on() {
        let boundary = r#"{"type":"system","subtype":"microcompact_boundary","content":"Context microcompacted","microcompactMetadata":{"trigger":"auto","preTokens":9000,"tokensSaved":4000,"compactedToolIds":["t1","t9"]}}"#;
        let lines = [
            user("2025-01-01T00:00:00Z", r#""go""#),
            asst(
                "2025-01-01T00:00:01Z",
                "m1",
                r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#,
                U,
            ),
            user(
                "2025-01-01T00:00:02Z",
                r#"[{"type":"tool_result","tool_use_id":"t1","content":"one"}]"#,
            ),
            asst(
                "2025-01-01T00:00:03Z",
                "m2",
                r#"{"type":"tool_use","id":"t2","name":"Read","input":{}}"#,
                U,
            ),
            user(
                "2025-01-01T00:00:04Z",
                r#"[{"type":"tool_result","tool_use_id":"t2","content":"two"}]"#,
            ),
            boundary.to_owned(),
            asst(
                "2025-01-01T00:00:05Z",
                "m3",
                r#"{"type":"text","text":"done"}"#,
                U,
            ),
        ];
        let out = run(&lines.join("\n"));
        let t = &out.traces[0];
        let cleared: Vec<&[String]> = t.calls.iter().map(|c| &c.cleared[..]).collect();
        // Only a result already sent can have been cleared: t9 is not one.
        assert_eq!(cleared, [&[][..], &[][..], &["t1".to_owned()][..]]);
        assert_eq!(out.tally.get(Note::Microcompact), 1);
        assert_eq!(
            t.status_quo.as_deref(),
            Some(CLAUDE_CODE_RECORDED_STATUS_QUO)
        );
        validate(t);
    }

    /// Claude Code 1.0.x wrote a compaction as its summary's user line
    /// alone (`isCompactSummary`, no boundary line): the history restarts
    /// there, as after a boundary, and once only when both are written.
    #[test]
    fn a_compact_summary_without_a_boundary_starts_a_new_trace() {
        let summary = |ts: &str| {
            format!(
                r#"{{"type":"user","isCompactSummary":true,"timestamp":"{ts}","message":{{"role":"user","content":"This session is being continued from a previous conversation."}}}}"#
            )
        };
        let boundary =
            r#"{"type":"system","subtype":"compact_boundary","timestamp":"2025-01-01T00:00:04Z"}"#;
        let head = [
            user("2025-01-01T00:00:01Z", r#""plan it""#),
            asst(
                "2025-01-01T00:00:02Z",
                "m1",
                r#"{"type":"text","text":"a"}"#,
                U,
            ),
        ];
        let tail = [asst(
            "2025-01-01T00:00:06Z",
            "m2",
            r#"{"type":"text","text":"b"}"#,
            U,
        )];
        let alone: Vec<String> = head
            .iter()
            .cloned()
            .chain([summary("2025-01-01T00:00:05Z")])
            .chain(tail.iter().cloned())
            .collect();
        let out = run(&alone.join("\n"));
        assert_eq!(out.traces.len(), 2);
        assert!(out.traces[1].name.ends_with(".part2"));
        assert_eq!(out.traces[1].messages.len(), 2);
        assert_eq!(out.tally.get(Note::CompactBoundary), 1);
        let both: Vec<String> = head
            .iter()
            .cloned()
            .chain([boundary.to_owned(), summary("2025-01-01T00:00:05Z")])
            .chain(tail.iter().cloned())
            .collect();
        let out = run(&both.join("\n"));
        assert_eq!(out.traces.len(), 2);
        assert_eq!(out.tally.get(Note::CompactBoundary), 1);
    }

    /// A file that starts mid-conversation opens with a result whose call is
    /// not in it: the result is sent as text and the response to it is a
    /// call, with its recorded usage; a later orphan is still dropped.
    #[test]
    fn a_slice_starting_with_a_result_keeps_its_first_call() {
        let lines = [
            user(
                "2025-01-01T00:00:01Z",
                r#"[{"type":"tool_result","tool_use_id":"t0","content":[{"type":"text","text":"the explorer's findings"}]}]"#,
            ),
            asst(
                "2025-01-01T00:00:03Z",
                "m1",
                r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#,
                U,
            ),
            user(
                "2025-01-01T00:00:04Z",
                r#"[{"type":"tool_result","tool_use_id":"t1","content":"x"},{"type":"tool_result","tool_use_id":"t9","content":"y"}]"#,
            ),
            asst(
                "2025-01-01T00:00:05Z",
                "m2",
                r#"{"type":"text","text":"b"}"#,
                U,
            ),
        ];
        let out = run(&lines.join("\n"));
        let t = &out.traces[0];
        assert_eq!(t.calls.len(), 2);
        assert_eq!(t.calls[0].messages, 1);
        assert!(t.calls[0].usage.is_some());
        assert!(t.messages[0].to_json().contains("the explorer's findings"));
        assert!(!t.messages[0].to_json().contains("tool_result"));
        assert_eq!(out.tally.get(Note::SliceStart), 1);
        assert_eq!(out.tally.get(Note::OrphanResult), 1);
        assert_eq!(out.tally.get(Note::NoRequest), 0);
        validate(t);
    }

    /// A response whose request is not in the file follows a stand-in for
    /// it and is a call (a subagent's warm-up is billed like any call).
    #[test]
    fn a_response_without_its_request_follows_a_stand_in() {
        let lines = [
            asst(
                "2025-01-01T00:00:01Z",
                "m1",
                r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#,
                U,
            ),
            user(
                "2025-01-01T00:00:02Z",
                r#"[{"type":"tool_result","tool_use_id":"t1","content":"x"}]"#,
            ),
            asst(
                "2025-01-01T00:00:03Z",
                "m2",
                r#"{"type":"text","text":"b"}"#,
                U,
            ),
        ];
        let out = run(&lines.join("\n"));
        let t = &out.traces[0];
        assert_eq!(t.messages.len(), 4);
        assert!(t.messages[0].to_json().contains(UNRECORDED_REQUEST));
        assert_eq!(t.calls.len(), 2);
        assert_eq!(t.calls[0].messages, 1);
        assert_eq!(t.calls[1].messages, 3);
        assert!(t.calls[0].usage.is_some());
        assert_eq!(t.calls[0].start_ms, Some(1_735_689_601_000));
        assert_eq!(out.tally.get(Note::NoRequest), 1);
        validate(t);

        // Only one response: still one call.
        let out = run(&lines[0]);
        assert_eq!(out.traces.len(), 1);
        assert_eq!(out.traces[0].calls.len(), 1);
    }

    #[test]
    fn replayed_response_and_duplicate_ids_are_dropped() {
        let big = r#"{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":0,"output_tokens":50}"#;
        let lines = [
            user("2025-01-01T00:00:00Z", r#""go""#),
            asst(
                "2025-01-01T00:00:01Z",
                "m1",
                r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#,
                U,
            ),
            user(
                "2025-01-01T00:00:02Z",
                r#"[{"type":"tool_result","tool_use_id":"t1","content":"x"},{"type":"tool_result","tool_use_id":"t1","content":"again"}]"#,
            ),
            asst(
                "2025-01-01T00:00:03Z",
                "m2",
                r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#,
                U,
            ),
            asst(
                "2025-01-01T00:00:04Z",
                "m1",
                r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#,
                big,
            ),
        ];
        let out = run(&lines.join("\n"));
        let t = &out.traces[0];
        assert_eq!(out.tally.get(Note::DuplicateResult), 1);
        assert_eq!(out.tally.get(Note::DuplicateToolUse), 1);
        assert_eq!(out.tally.get(Note::Replay), 1);
        // The replay's larger usage row wins (ccusage's rule).
        assert_eq!(t.calls[0].usage.unwrap().output_tokens, Some(50));
        // m2 lost its only block: a call with no assistant message.
        assert_eq!(t.messages.len(), 3);
        assert_eq!(t.calls.len(), 2);
        validate(t);
    }

    #[test]
    fn odd_lines_never_fail() {
        let lines = [
            "[1,2]",
            "42",
            r#"{"type":"user"}"#,
            r#"{"type":"user","message":"text"}"#,
            r#"{"type":"user","message":{"content":7}}"#,
            r#"{"type":["x"]}"#,
            r#"{"type":"assistant","message":{"id":3}}"#,
            r#"{"type":"assistant","message":{"id":"m","content":[{"type":"text"}],"usage":{"input_tokens":-1}}}"#,
            r#"{"type":"assistant","isSidechain":"yes","message":{"id":"m2","content":"plain","usage":{"input_tokens":1.5,"output_tokens":1}}}"#,
            "{\"type\":\"user\",\"message\":{\"content\":\"caf\u{e9}\"}}",
            "{not json",
        ];
        let out = run(&lines.join("\r\n"));
        assert_eq!(out.skipped_lines, 1);
        for t in &out.traces {
            validate(t);
        }
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        bytes.extend_from_slice(b"\xff\xfe\n");
        bytes.extend_from_slice(user("2025-01-01T00:00:00Z", r#""hi""#).as_bytes());
        let out = import_from(&bytes[..], &info("s", false), &ImportOptions::default()).unwrap();
        assert_eq!(out.skipped_lines, 1);
    }

    /// Every transcript of the fixtures and of the real corpus (when it is
    /// there), imported with every line given back once parsed (as a huge
    /// line is) and with none: the same traces, byte for byte, and the same
    /// report.
    #[test]
    fn giving_a_line_back_early_changes_nothing() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut inputs = vec![root.join("../../tests/fixtures/claude-code")];
        let corpus = root.join("../../../shared/corpus/claude-code");
        if corpus.join("projects").is_dir() {
            inputs.push(corpus);
        }
        let files = discover(&inputs).unwrap();
        let opts = ImportOptions::default();
        let mut traces = 0;
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let kept = import_lines(&bytes[..], &file_info(f), &opts, usize::MAX).unwrap();
            let given = import_lines(&bytes[..], &file_info(f), &opts, 0).unwrap();
            let json = |o: &FileOutcome| o.traces.iter().map(to_json).collect::<Vec<_>>();
            assert_eq!(json(&kept), json(&given), "{}", f.display());
            assert_eq!(kept.tally.lines(), given.tally.lines(), "{}", f.display());
            assert_eq!(kept.skipped_lines, given.skipped_lines);
            assert_eq!(kept.empty, given.empty);
            traces += kept.traces.len();
        }
        assert!(traces > 0);
        // A line long enough to be given back, with its side copy, and a
        // long text the block shares: the same trace as read whole.
        let text = "line of output \"quoted\"\n".repeat(60_000);
        let content = serde_json::to_string(&text).unwrap();
        let lines = [
            user("2025-01-01T00:00:00Z", r#""go""#),
            asst(
                "2025-01-01T00:00:01Z",
                "m1",
                r#"{"type":"tool_use","id":"t1","name":"Bash","input":{}}"#,
                U,
            ),
            format!(
                r#"{{"type":"user","timestamp":"2025-01-01T00:00:02Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":{content}}}]}},"toolUseResult":{{"stdout":{content}}}}}"#
            ),
            asst(
                "2025-01-01T00:00:03Z",
                "m2",
                &format!(r#"{{"type":"text","text":{content}}}"#),
                U,
            ),
        ]
        .join("\n");
        let kept = import_lines(lines.as_bytes(), &info("s1", false), &opts, usize::MAX).unwrap();
        let given = import_lines(lines.as_bytes(), &info("s1", false), &opts, 1000).unwrap();
        assert_eq!(to_json(&kept.traces[0]), to_json(&given.traces[0]));
        let t = &given.traces[0];
        assert_eq!(
            t.messages[2].blocks()[0].tool_result_payload(),
            Some(&*text)
        );
        validate(t);
    }

    /// Imports the real transcripts of `$TRACECOST_CORPUS` (default
    /// `../shared/corpus/claude-code`) when they are there: every non-empty
    /// session with a recorded request must import and validate.
    #[test]
    fn real_corpus_imports_and_validates() {
        let root = std::env::var_os("TRACECOST_CORPUS")
            .map(PathBuf::from)
            .unwrap_or_else(|| {
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus/claude-code")
            });
        if !root.join("projects").is_dir() {
            eprintln!("corpus not found at {}, skipped", root.display());
            return;
        }
        let files = discover(std::slice::from_ref(&root)).unwrap();
        let opts = ImportOptions::default();
        let mut calls = 0;
        let mut traces = 0;
        for f in &files {
            let bytes = std::fs::read(f).unwrap();
            let out = import_from(&bytes[..], &file_info(f), &opts).unwrap();
            // A file with a user line and, after it, an assistant line has a
            // recorded request: it must give a trace.
            let text = String::from_utf8_lossy(&bytes);
            let first_user = text.find("\"type\":\"user\"");
            let answered = first_user.is_some_and(|i| text[i..].contains("\"type\":\"assistant\""));
            if answered {
                assert!(!out.traces.is_empty(), "{} gave no trace", f.display());
            }
            for t in &out.traces {
                validate(t);
                traces += 1;
                calls += t.calls.len();
            }
        }
        let all = import(std::slice::from_ref(&root), &opts).unwrap();
        assert_eq!(all.traces.len(), traces);
        let recorded: u64 = all
            .traces
            .iter()
            .flat_map(|t| &t.calls)
            .filter_map(|c| c.usage.as_ref())
            .map(usage_total)
            .sum();
        let scan = scan_usage(std::slice::from_ref(&root)).unwrap();
        let totals = scan.totals();
        eprintln!(
            "corpus: {} files, {} traces, {} calls; report: {}",
            all.report.files, traces, calls, all.report
        );
        for line in &all.report.unmapped {
            eprintln!("  {line}");
        }
        eprintln!(
            "scan: {} sessions, {} rows, {} duplicates, {} unbilled, {} skipped lines, {} empty files; totals {:?} (sum {}); import usage total {}",
            scan.sessions.len(),
            scan.rows,
            scan.duplicate_rows,
            scan.unbilled_rows,
            scan.skipped_lines,
            scan.empty_files,
            totals,
            totals.total(),
            recorded
        );
        for m in scan.totals_by_model() {
            eprintln!(
                "  {} ({} responses): {:?}",
                m.model,
                m.responses.len(),
                m.tokens
            );
        }
        assert!(traces > 0 && totals.total() > 0);
    }
}

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
//!   that did is used.) Token counting proper lives in `tracecost-cost`.
//! - Cache markers. Claude Code keeps one rolling breakpoint at the end of
//!   each request plus markers on the system prompt and the tool
//!   definitions, but the transcript records none of them, so every call has
//!   `markers: None`; a replay should apply that policy rather than read it
//!   from the trace.
//!
//! # Where the reading is
//!
//! This module reads the files: the loop over them (in parallel, a window
//! at a time), a response counted once across files, one file's lines to
//! its traces and their names. The rest is split by what it knows:
//!
//! - `line`: the members of a transcript line the importer reads, and
//!   nothing of what they mean;
//! - `history`: the rules above that turn lines into histories and calls
//!   (the segments between compactions, subagents' sidechains);
//! - `finish`: a segment made a trace (its default model, its hidden
//!   prefix and the status quo);
//! - `notes`: what was skipped or could not be mapped, by kind, for the
//!   report.
//!
//! The unit tests stay here: each reads a whole file, through all of it.
//!
//! [`Prompt`]: tracecost_trace::Prompt
//! [`MEDIA_TOKENS`]: tracecost_trace::MEDIA_TOKENS

mod finish;
mod history;
mod line;
mod notes;

use std::io::{self, BufRead};
use std::path::PathBuf;

use rayon::prelude::*;

use self::finish::{FileResult, push_traces};
use self::history::Builder;
use self::notes::{Note, Tally};
use super::usage::{ResponseIndex, ResponseKey};
use super::{FileInfo, discover_readable, file_info, for_each_line};
use crate::{ImportError, ImportOptions, ImportResult, ImportSummary};
use tracecost_trace::Trace;

/// Imports Claude Code transcripts: one trace per session or subagent file
/// (more when a session was compacted), in sorted path order.
///
/// `inputs` may be Claude config roots (holding `projects/`), `projects/`
/// directories, project directories or `.jsonl` files. Fails only when an
/// input cannot be read or no transcript is found; everything odd inside a
/// file is skipped and counted in the report. See the module documentation
/// for the mapping.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    crate::InputFormat::ClaudeCode.import(inputs, opts)
}

/// [`crate::InputFormat::import_each`] for Claude Code: a folder
/// of any size is imported holding only a few files at a time. Files are
/// read line by line and in parallel, in windows of one per worker thread,
/// and each window's traces are handed over, in path order, before the next
/// window is read.
pub(crate) fn import_each<E: From<ImportError>>(
    inputs: &[PathBuf],
    opts: &ImportOptions,
    progress: &dyn crate::progress::Progress,
    emit: &mut dyn FnMut(Trace) -> Result<(), E>,
) -> Result<ImportSummary, E> {
    let mut report = ImportSummary::default();
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
        let outcomes: Vec<Result<Option<FileResult>, ImportError>> = chunk
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

/// A line at least this long is given back to the reader once its members
/// are parsed, before its blocks are built (see `Builder::line`); a
/// shorter one's buffer is kept for the next line.
const LONG_LINE: usize = 16 << 20;

/// Imports one file, read line by line.
fn import_from<R: BufRead>(
    reader: R,
    info: &FileInfo,
    opts: &ImportOptions,
) -> io::Result<FileResult> {
    import_lines(reader, info, opts, LONG_LINE)
}

/// [`import_from`], giving back lines of `long_line` bytes or more once
/// parsed.
fn import_lines<R: BufRead>(
    reader: R,
    info: &FileInfo,
    opts: &ImportOptions,
    long_line: usize,
) -> io::Result<FileResult> {
    let mut out = FileResult::default();
    let mut b = Builder::new(info.subagent, long_line);
    b.join = opts.join_compactions;
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
    // The project is where the conversation ran, as its lines say; the
    // folder's name stands in where no line does (it cannot be read back
    // into the path: `-` stands for `/`, `.` and `-` alike).
    if let Some(cwd) = &b.cwd {
        for t in &mut out.traces {
            t.project = Some(cwd.clone());
        }
    }
    if out.traces.is_empty() {
        tally.bump(Note::NoCallFile);
    }
    out.tally = tally;
    out.skipped_lines = skipped;
    Ok(out)
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

pub use self::finish::{CLAUDE_CODE_AUTOCOMPACT_STATUS_QUO, CLAUDE_CODE_RECORDED_STATUS_QUO};
pub use self::history::UNRECORDED_REQUEST;
pub use tracecost_trace::CLAUDE_CODE_STATUS_QUO;

#[cfg(test)]
mod tests {
    use super::super::discover;
    use super::*;
    use std::path::Path;

    use crate::claude_code::scan_usage;
    use tracecost_trace::{load_str, to_json};

    use crate::claude_code::usage_total;
    use crate::time::parse_rfc3339_ms;

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

    fn run(text: &str) -> FileResult {
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

    /// A compaction that keeps a recent segment verbatim: the boundary
    /// names the kept messages (`preservedMessages.uuids`), written again
    /// after the summary. The kept response was made before the
    /// compaction, so its call is the earlier history's (sending all of
    /// it); after the summary it is history, sent by the next call.
    #[test]
    fn a_response_kept_by_a_compaction_is_a_call_of_the_history_before_it() {
        let with_uuid =
            |line: String, uuid: &str| line.replacen('{', &format!(r#"{{"uuid":"{uuid}","#), 1);
        let result = r#"[{"type":"tool_result","tool_use_id":"t1","content":"file text"}]"#;
        let boundary = r#"{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"auto","preservedSegment":{"headUuid":"k1","anchorUuid":"sum","tailUuid":"k3"},"preservedMessages":{"anchorUuid":"sum","uuids":["k1","k2","k3"]}}}"#;
        let kept = r#"{"input_tokens":2,"cache_creation_input_tokens":50,"cache_read_input_tokens":900,"output_tokens":5}"#;
        let lines = [
            user("2025-01-01T00:00:00Z", r#""first""#),
            asst(
                "2025-01-01T00:00:01Z",
                "m1",
                r#"{"type":"tool_use","id":"t0","name":"Read","input":{}}"#,
                U,
            ),
            user(
                "2025-01-01T00:00:02Z",
                r#"[{"type":"tool_result","tool_use_id":"t0","content":"old"}]"#,
            ),
            boundary.to_owned(),
            with_uuid(
                user("2025-01-01T00:01:00Z", r#""summary of the above""#),
                "sum",
            ),
            with_uuid(
                asst(
                    "2025-01-01T00:00:03Z",
                    "m2",
                    r#"{"type":"text","text":"kept"}"#,
                    kept,
                ),
                "k1",
            ),
            with_uuid(
                asst(
                    "2025-01-01T00:00:03Z",
                    "m2",
                    r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#,
                    kept,
                ),
                "k2",
            ),
            with_uuid(user("2025-01-01T00:00:04Z", result), "k3"),
            asst(
                "2025-01-01T00:01:05Z",
                "m3",
                r#"{"type":"text","text":"after"}"#,
                U,
            ),
        ];
        let out = run(&lines.join("\n"));
        assert_eq!(out.traces.len(), 2);
        let (before, after) = (&out.traces[0], &out.traces[1]);
        // The kept response's call sends the whole earlier history.
        assert_eq!(before.calls.len(), 2);
        assert_eq!(before.calls[1].messages, before.messages.len());
        assert_eq!(
            before.calls[1]
                .recorded_usage()
                .unwrap()
                .cache_read_input_tokens,
            Some(900)
        );
        // After the summary: the kept messages are history, one call.
        assert_eq!(after.messages.len(), 4);
        assert_eq!(after.calls.len(), 1);
        assert_eq!(after.calls[0].messages, 3);
        assert_eq!(out.tally.get(Note::PreservedResponse), 1);
        out.traces.iter().for_each(validate);
    }

    /// Read whole (`join_compactions`), a compacted session is one
    /// conversation: the summary is no history, the kept response is a
    /// call of the history it answered, and the first call made after each
    /// compaction carries what the record says of it (trigger, sizes, the
    /// summary's text); its status quo is Claude Code's autocompact.
    #[test]
    fn read_whole_a_compacted_session_is_one_conversation_saying_where_it_was_compacted() {
        let with_uuid =
            |line: String, uuid: &str| line.replacen('{', &format!(r#"{{"uuid":"{uuid}","#), 1);
        let result = |id: &str| {
            format!(r#"[{{"type":"tool_result","tool_use_id":"{id}","content":"out"}}]"#)
        };
        let summary = |ts: &str, text: &str, uuid: &str| {
            with_uuid(
                format!(
                    r#"{{"type":"user","isCompactSummary":true,"timestamp":"{ts}","message":{{"role":"user","content":"{text}"}}}}"#
                ),
                uuid,
            )
        };
        let auto = r#"{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"auto","preTokens":167500,"postTokens":20000,"preservedMessages":{"anchorUuid":"sum","uuids":["k1","k2"]}}}"#;
        let manual = r#"{"type":"system","subtype":"compact_boundary","content":"Conversation compacted","compactMetadata":{"trigger":"manual","preTokens":90000}}"#;
        let lines = [
            user("2025-01-01T00:00:00Z", r#""first""#),
            asst(
                "2025-01-01T00:00:01Z",
                "m1",
                r#"{"type":"tool_use","id":"t0","name":"Read","input":{}}"#,
                U,
            ),
            user("2025-01-01T00:00:02Z", &result("t0")),
            auto.to_owned(),
            summary("2025-01-01T00:01:00Z", "summary one", "sum"),
            with_uuid(
                asst(
                    "2025-01-01T00:00:03Z",
                    "m2",
                    r#"{"type":"tool_use","id":"t1","name":"Read","input":{}}"#,
                    U,
                ),
                "k1",
            ),
            with_uuid(user("2025-01-01T00:00:04Z", &result("t1")), "k2"),
            asst(
                "2025-01-01T00:01:05Z",
                "m3",
                r#"{"type":"text","text":"after"}"#,
                U,
            ),
            user("2025-01-01T00:02:00Z", r#""more""#),
            manual.to_owned(),
            summary("2025-01-01T00:03:00Z", "summary two", "sum2"),
            user("2025-01-01T00:03:01Z", r#""go on""#),
            asst(
                "2025-01-01T00:03:02Z",
                "m4",
                r#"{"type":"text","text":"done"}"#,
                U,
            ),
        ];
        let text = lines.join("\n");
        let whole = import_from(
            text.as_bytes(),
            &info("s1", false),
            &ImportOptions {
                join_compactions: true,
                ..ImportOptions::default()
            },
        )
        .unwrap();
        assert_eq!(whole.traces.len(), 1);
        let t = &whole.traces[0];
        // No summary among the messages; the history goes on.
        assert!(t.messages.iter().all(|m| !m.to_json().contains("summary ")));
        let sent: Vec<usize> = t.calls.iter().map(|c| c.messages).collect();
        // ("more" and "go on" are one user message: the summary between
        // them is left out.)
        assert_eq!(sent, [1, 3, 5, 7]);
        // The kept response (m2) was made before the compaction: not the
        // call after it.
        assert_eq!(t.calls[1].compacted, None);
        let first = t.calls[2].compacted.as_deref().unwrap();
        assert!(!first.manual);
        assert_eq!(
            (first.pre_tokens, first.post_tokens),
            (Some(167500), Some(20000))
        );
        assert_eq!(first.summary.as_deref(), Some("summary one"));
        let second = t.calls[3].compacted.as_deref().unwrap();
        assert!(second.manual);
        assert_eq!((second.pre_tokens, second.post_tokens), (Some(90000), None));
        assert_eq!(second.summary.as_deref(), Some("summary two"));
        assert_eq!(
            t.status_quo.as_deref(),
            Some(CLAUDE_CODE_AUTOCOMPACT_STATUS_QUO)
        );
        assert_eq!(whole.tally.get(Note::CompactBoundary), 2);
        validate(t);
        // Read as usual, the same file is three histories.
        let parts = run(&text);
        assert_eq!(parts.traces.len(), 3);
        assert!(
            parts
                .traces
                .iter()
                .all(|t| t.calls.iter().all(|c| c.compacted.is_none()))
        );
        assert_eq!(
            parts.traces[0].status_quo.as_deref(),
            Some(CLAUDE_CODE_RECORDED_STATUS_QUO)
        );
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
        assert_eq!(t.calls[0].recorded_usage().unwrap().output_tokens, Some(50));
        // m2 lost its only block: a call with no assistant message.
        assert_eq!(t.messages.len(), 3);
        assert_eq!(t.calls.len(), 2);
        validate(t);
    }

    /// A response whose usage records iterations is one call per
    /// iteration: the response's own requests (the top-level usage is
    /// their sum, not one prompt) and the advisor's, at its own model.
    #[test]
    fn usage_iterations_are_calls_of_their_own() {
        let iters = r#"{"input_tokens":3,"cache_creation_input_tokens":0,"cache_read_input_tokens":900,"output_tokens":30,"iterations":[{"type":"message","input_tokens":1,"output_tokens":10,"cache_read_input_tokens":400,"cache_creation_input_tokens":0},{"type":"advisor_message","model":"claude-opus-4-5","input_tokens":450,"output_tokens":40,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},{"type":"message","input_tokens":2,"output_tokens":20,"cache_read_input_tokens":500,"cache_creation_input_tokens":0}]}"#;
        let lines = [
            user("2025-01-01T00:00:00Z", r#""go""#),
            asst(
                "2025-01-01T00:00:01Z",
                "m1",
                r#"{"type":"text","text":"a"}"#,
                U,
            ),
            user("2025-01-01T00:00:02Z", r#""ask the advisor""#),
            asst(
                "2025-01-01T00:00:03Z",
                "m2",
                r#"{"type":"text","text":"b"}"#,
                iters,
            ),
        ];
        let out = run(&lines.join("\n"));
        let t = &out.traces[0];
        assert_eq!(t.calls.len(), 4);
        let reads: Vec<_> = t.calls[1..]
            .iter()
            .map(|c| c.recorded_usage().unwrap().cache_read_input_tokens)
            .collect();
        assert_eq!(reads, [Some(400), Some(0), Some(500)]);
        let models: Vec<_> = t.calls.iter().map(|c| c.model.as_deref()).collect();
        assert_eq!(models, [None, None, Some("claude-opus-4-5"), None]);
        assert!(
            t.calls[1..]
                .iter()
                .all(|c| c.messages == t.calls[1].messages)
        );
        // Each iteration follows the one before: only the first has a start.
        let starts: Vec<_> = t.calls[1..].iter().map(|c| c.start_ms.is_some()).collect();
        assert_eq!(starts, [true, false, false]);
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
            let json = |o: &FileResult| o.traces.iter().map(to_json).collect::<Vec<_>>();
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
            .filter_map(|c| c.usage.as_deref())
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

    /// Fast mode, a geography and the batch tier, as the usage records
    /// them, are kept per call (and through the trace file); the values
    /// that mean the standard price (`standard`, `global`,
    /// `not_available`) are no modifier.
    #[test]
    fn each_call_keeps_the_price_modifiers_its_usage_records() {
        let served = r#"{"input_tokens":10,"output_tokens":5,"speed":"fast","inference_geo":"us","service_tier":"batch"}"#;
        let standard = r#"{"input_tokens":10,"output_tokens":5,"speed":"standard","inference_geo":"not_available","service_tier":"standard"}"#;
        let global = r#"{"input_tokens":10,"output_tokens":5,"inference_geo":"global","service_tier":"priority"}"#;
        // Iterations: the response's own model's carry its geography; the
        // advisor's request records none of its own.
        let iters = r#"{"input_tokens":3,"output_tokens":30,"inference_geo":"us","iterations":[{"type":"message","input_tokens":1,"output_tokens":10},{"type":"advisor_message","model":"claude-opus-4-5","input_tokens":450,"output_tokens":40},{"type":"message","input_tokens":2,"output_tokens":20}]}"#;
        // A user turn and a response of each usage, a second apart.
        let lines: Vec<String> = [served, standard, global, iters]
            .iter()
            .enumerate()
            .flat_map(|(i, usage)| {
                let at = |s: usize| format!("2026-11-02T10:00:{:02}Z", 2 * i + s);
                [
                    user(&at(0), &format!("\"turn {i}\"")),
                    asst(
                        &at(1),
                        &format!("m{i}"),
                        r#"{"type":"text","text":"a"}"#,
                        usage,
                    ),
                ]
            })
            .collect();
        let out = run(&lines.join("\n"));
        let t = &out.traces[0];
        let m: Vec<_> = t
            .calls
            .iter()
            .map(|c| c.recorded_usage().unwrap().modifiers)
            .collect();
        let regional: Vec<bool> = m.iter().map(|m| m.regional).collect();
        assert_eq!(regional, [true, false, false, true, false, true]);
        assert_eq!(t.calls[4].model.as_deref(), Some("claude-opus-4-5"));
        assert!(m[0].fast && m[0].regional && m[0].batch);
        assert!(m[1].is_standard(), "{:?}", m[1]);
        assert!(m[2].is_standard(), "{:?}", m[2]);
        let back = tracecost_trace::load_str(&to_json(t), "t.json").unwrap();
        let again: Vec<_> = back.traces[0]
            .calls
            .iter()
            .map(|c| c.recorded_usage().unwrap().modifiers)
            .collect();
        assert_eq!(again, m);
    }
}

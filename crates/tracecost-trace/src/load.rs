//! Reading and validating canonical trace files.
//!
//! The file is streamed through serde (never held whole in memory), each
//! object's members kept as raw JSON; messages are then converted one by one,
//! so the peak is the loaded trace itself: about twice the file size (each
//! block's raw JSON and its parsed text; see docs/robustness.md). Every error names the file and the place — line and
//! column for syntax and type errors, a JSON pointer for shape and
//! consistency errors — and what was expected.

use std::collections::HashSet;
use std::fmt;
use std::io::{BufRead, Read};
use std::path::Path;

use serde::Deserialize;

use super::{Call, Prompt, RecordedUsage, TRACE_FORMAT, Trace};
use crate::engine::cache::ProviderKind;
use crate::engine::json::RawObject;
use crate::engine::message::{BlockKind, ContentBlock, Message, ShapeError, ToolDefinition};
use crate::engine::wire::{BlockRef, MAX_BREAKPOINTS, Marker, Ttl};
use crate::lines::{LineBatch, read_ahead};
use crate::progress::{Progress, ReadProgress, Silent, Unit};

/// More tokens than any model's context window by two orders of magnitude:
/// a usage figure above this is a corrupt record, not a big request.
pub const ABSURD_TOKENS: u64 = 100_000_000;

/// Why a trace file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Not JSON, or a value of the wrong type.
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// Well-formed JSON that is not a valid trace.
    #[error("{path}: at {pointer}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// JSON pointer to the offending value.
        pointer: String,
        /// What was expected.
        message: String,
    },
}

/// Something suspicious that did not stop the load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The file.
    pub path: String,
    /// JSON pointer to the value.
    pub pointer: String,
    /// What is odd about it.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: at {}: {}", self.path, self.pointer, self.message)
    }
}

/// The traces of one file, and the warnings raised while loading them.
#[derive(Debug, Clone)]
pub struct LoadedTraces {
    /// The traces, in file order.
    pub traces: Vec<Trace>,
    /// Warnings, in file order.
    pub warnings: Vec<Warning>,
}

#[derive(Deserialize)]
struct TraceDoc {
    format: Option<String>,
    name: Option<String>,
    #[serde(default)]
    description: String,
    provider: Option<String>,
    model: Option<String>,
    status_quo: Option<String>,
    project: Option<String>,
    account: Option<String>,
    session: Option<String>,
    #[serde(default)]
    hidden_prefix_tokens: u64,
    #[serde(default)]
    system: Vec<RawObject>,
    #[serde(default)]
    tools: Vec<RawObject>,
    messages: Option<Vec<RawObject>>,
    calls: Option<Vec<CallDoc>>,
    traces: Option<Vec<TraceDoc>>,
}

#[derive(Deserialize)]
struct CallDoc {
    messages: u64,
    start_ms: Option<u64>,
    model: Option<String>,
    system: Option<Vec<RawObject>>,
    tools: Option<Vec<RawObject>>,
    cache_markers: Option<Vec<MarkerDoc>>,
    usage: Option<UsageDoc>,
    #[serde(default)]
    cleared: Vec<String>,
    compacted: Option<CompactedDoc>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompactedDoc {
    #[serde(default)]
    manual: bool,
    pre_tokens: Option<u64>,
    post_tokens: Option<u64>,
    summary: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MarkerDoc {
    tool: Option<usize>,
    system: Option<usize>,
    message: Option<usize>,
    block: Option<usize>,
    ttl: Option<String>,
}

#[derive(Deserialize)]
struct UsageDoc {
    input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_creation: Option<CacheCreationDoc>,
    cache_read_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    /// The price modifiers ([`crate::RecordedModifiers`]), each written
    /// only when it applied.
    #[serde(default)]
    fast: bool,
    #[serde(default)]
    regional: bool,
    #[serde(default)]
    batch: bool,
    reasoning_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct CacheCreationDoc {
    ephemeral_5m_input_tokens: Option<u64>,
    ephemeral_1h_input_tokens: Option<u64>,
}

/// The byte-order mark Windows editors often put at the start of a UTF-8
/// file. JSON forbids writing it but lets a parser ignore it (RFC 8259
/// §8.1), and the loader and importers do.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Loads every trace in the file at `path`.
pub fn load_path(path: &Path) -> Result<LoadedTraces, TraceError> {
    load_path_with(path, &Silent)
}

/// [`load_path`], reporting the bytes read to `progress` (one stage,
/// named after the file, of its size in bytes).
pub fn load_path_with(path: &Path, progress: &dyn Progress) -> Result<LoadedTraces, TraceError> {
    let mut traces = Vec::new();
    let warnings = load_path_each(path, progress, &mut |t| {
        traces.push(t);
        Ok(())
    })?;
    Ok(LoadedTraces { traces, warnings })
}

/// [`load_path_with`], handing each trace to `emit` as it is read (and
/// returning the warnings): a JSON Lines file of traces is read a line at
/// a time, so that only one of its traces is in memory here. `emit`'s
/// error stops the load. A failure after some traces were handed over
/// leaves them handed over.
pub fn load_path_each(
    path: &Path,
    progress: &dyn Progress,
    emit: &mut dyn FnMut(Trace) -> Result<(), TraceError>,
) -> Result<Vec<Warning>, TraceError> {
    load_path_each_at(path, progress, &mut |t, _| emit(t))
}

/// Where a trace was read from, when it is the only trace of a line of a
/// JSON Lines file: reading those bytes again ([`load_str`]) gives the
/// trace again, but for its `source`, so that a reader that holds traces
/// for later need not keep a copy of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineOrigin {
    /// Where the line's trace document starts (after a byte-order mark).
    pub offset: u64,
    /// Its length in bytes, the line's end included (as it was read).
    pub len: usize,
    /// A 64-bit hash of those bytes ([`line_hash`]): the file changed under
    /// the reader when they hash otherwise.
    pub hash: u64,
}

/// The hash of a line's bytes a [`LineOrigin`] carries: fast, not for an
/// adversary (only a file changed between two reads is to be caught).
pub fn line_hash(bytes: &[u8]) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut h = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        h = (h.rotate_left(5) ^ w).wrapping_mul(K);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
    }
    h ^ (h >> 29)
}

/// [`load_path_each`], telling `emit` where each trace alone on a line of
/// a JSON Lines file was read ([`LineOrigin`]; `None` for any other).
pub fn load_path_each_at(
    path: &Path,
    progress: &dyn Progress,
    emit: &mut dyn FnMut(Trace, Option<LineOrigin>) -> Result<(), TraceError>,
) -> Result<Vec<Warning>, TraceError> {
    load_path_each_known(path, progress, None, emit)
}

/// The SHA-256 of a line's bytes: what a reader of [`KnownLines`] knows a
/// line by.
pub type LineDigest = [u8; 32];

/// The [`LineDigest`] of `bytes`.
pub fn line_digest(bytes: &[u8]) -> LineDigest {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

/// Lines of JSON Lines files of traces that a reader has read before (a
/// report's cache of them): a line it knows is not parsed again but handed
/// back to it in its place among the traces.
pub trait KnownLines {
    /// Which of `lines` of `path` it knows, each given by the digest of
    /// its bytes (as read, without a byte-order mark; [`line_digest`],
    /// found on every core). Asked a batch of lines at a time as they are
    /// read, ahead of their place, of every line that is UTF-8 (another is
    /// no trace); each line is then either taken ([`Self::take`]) or parsed
    /// ([`Self::parsed`]), in the file's order.
    fn knows(&mut self, path: &Path, lines: &[LineDigest]) -> Vec<bool>;
    /// The next line it said it knows, in its place among the traces
    /// handed over: the bytes at `origin` of `path`.
    fn take(&mut self, path: &Path, origin: LineOrigin) -> Result<(), TraceError>;
    /// The next line it did not know, parsed, its traces just handed over;
    /// `alone`: it held one trace and gave no warning.
    fn parsed(&mut self, alone: bool);
}

/// [`load_path_each_at`], where a line of a JSON Lines file of traces that
/// `known` knows is handed to it instead of being parsed.
pub fn load_path_each_known(
    path: &Path,
    progress: &dyn Progress,
    known: Option<&mut dyn KnownLines>,
    emit: &mut dyn FnMut(Trace, Option<LineOrigin>) -> Result<(), TraceError>,
) -> Result<Vec<Warning>, TraceError> {
    load_path_each_skipping(path, progress, known, None, emit)
}

/// Takes the error of each damaged line of a JSON Lines file of traces
/// that the load passes over ([`load_path_each_skipping`]).
pub type SkipLine<'s> = dyn FnMut(TraceError) + 's;

/// [`load_path_each_known`], where with `skip` a damaged line of a JSON
/// Lines file of traces (not JSON, not UTF-8, not a valid trace document)
/// is handed to `skip` with its place and passed over: the lines around it
/// are read as ever, so one bad line costs its own trace and no other. Any
/// other file is one document, and its damage is still the load's error.
pub fn load_path_each_skipping(
    path: &Path,
    progress: &dyn Progress,
    mut known: Option<&mut dyn KnownLines>,
    skip: Option<&mut SkipLine<'_>>,
    emit: &mut dyn FnMut(Trace, Option<LineOrigin>) -> Result<(), TraceError>,
) -> Result<Vec<Warning>, TraceError> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|source| TraceError::Io {
        path: shown.clone(),
        source,
    })?;
    if meta.is_dir() {
        return Err(TraceError::Io {
            path: shown,
            source: std::io::Error::other("is a directory, expected a trace file"),
        });
    }
    if is_jsonl_name(path)
        && let Some(warnings) =
            load_lines(path, &shown, meta.len(), progress, known.take(), skip, emit)?
    {
        return Ok(warnings);
    }
    let file = std::fs::File::open(path).map_err(|source| TraceError::Io {
        path: shown.clone(),
        source,
    })?;
    progress.start(&format!("load {shown}"), meta.len(), Unit::Bytes);
    let mut reader = std::io::BufReader::with_capacity(1 << 20, ReadProgress::new(file, progress));
    let bom = reader.fill_buf().map_err(|source| TraceError::Io {
        path: shown.clone(),
        source,
    })?;
    if bom.starts_with(UTF8_BOM) {
        reader.consume(UTF8_BOM.len());
    }
    let loaded = load_reader(reader, &shown).map_err(|e| with_log_hint(e, path))?;
    for mut t in loaded.traces {
        t.source = Some(shown.clone());
        emit(t, None)?;
    }
    Ok(loaded.warnings)
}

/// Whether a path is named as JSON Lines (`.jsonl`, `.ndjson`).
pub fn is_jsonl_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|x| x.eq_ignore_ascii_case("jsonl") || x.eq_ignore_ascii_case("ndjson"))
}

/// A JSON Lines file of traces (`.jsonl` / `.ndjson`, each line a trace
/// document, as `tracecost gen fleet -o fleet.jsonl` writes): read a batch
/// of whole lines at a time, so that a tool splitting the file by lines (a
/// Spark job, a shell pipeline) and this loader read the same traces. An
/// error names the line (`fleet.jsonl:12:…`). `None` when the first line
/// is not a trace document on its own (a document over several lines, or
/// a log: read whole, so that the error says what it is).
///
/// A thread reads the next batch while the lines of the current one are
/// parsed on every core and handed over in the file's order. With `known`,
/// the lines are first hashed on every core and `known` asked which it
/// knows: only the others are parsed.
///
/// With `skip`, a damaged line goes to `skip` and the load goes on; the
/// file is one of traces a line at a time when a line of its first batch
/// is a trace document on its own (so that a damaged first line costs no
/// more than itself).
fn load_lines(
    path: &Path,
    shown: &str,
    size: u64,
    progress: &dyn Progress,
    mut known: Option<&mut dyn KnownLines>,
    mut skip: Option<&mut SkipLine<'_>>,
    emit: &mut dyn FnMut(Trace, Option<LineOrigin>) -> Result<(), TraceError>,
) -> Result<Option<Vec<Warning>>, TraceError> {
    let io = |source| TraceError::Io {
        path: shown.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut warnings = Vec::new();
    let mut started = false;
    // Where the next line starts in the file.
    let mut at = 0u64;
    let per_line = std::thread::scope(|scope| {
        // Dropped on return, before the scope waits for the reader: a
        // reader blocked on sending then stops.
        let (rx, back) = read_ahead(scope, file, BATCH_BYTES);
        for batch in rx.iter() {
            let batch = batch.map_err(io)?;
            let mut lines = Vec::with_capacity(batch.lines().len());
            for (i, (number, range)) in batch.lines().iter().enumerate() {
                let range = match range {
                    Ok(range) => range.clone(),
                    // Passed over, with its place; the next line starts
                    // after all its bytes.
                    Err(column) if skip.is_some() => {
                        let read = batch.span(i).len();
                        lines.push(Line {
                            number: *number,
                            bytes_at: at,
                            read,
                            bytes: Err(*column),
                        });
                        at += read as u64;
                        continue;
                    }
                    // No trace: the load stops at it (or reads the file
                    // whole, when it is the first).
                    Err(column) if started => {
                        lines.push(Line {
                            number: *number,
                            bytes_at: at,
                            read: 0,
                            bytes: Err(*column),
                        });
                        break;
                    }
                    Err(_) => return Ok(false),
                };
                let line_at = at;
                at += range.len() as u64;
                let mut bytes = range.clone();
                if *number == 1 && batch.bytes()[range.clone()].starts_with(UTF8_BOM) {
                    bytes.start += UTF8_BOM.len();
                }
                let text = &batch.bytes()[bytes.clone()];
                if text.iter().all(u8::is_ascii_whitespace) {
                    if started {
                        progress.advance(range.len() as u64);
                    }
                    continue;
                }
                if !started {
                    // A trace per line only when the first line is a trace
                    // document on its own; anything else (a log, a
                    // document over several lines) is read whole, and
                    // told what it is.
                    #[derive(Deserialize)]
                    struct Head {
                        format: Option<String>,
                    }
                    let head = serde_json::from_slice::<Head>(text);
                    let is_trace = head
                        .is_ok_and(|h| h.format.is_some_and(|f| f.starts_with("tracecost.trace/")));
                    match (is_trace, skip.is_some()) {
                        (true, _) => {
                            progress.start(&format!("load {shown}"), size, Unit::Bytes);
                            started = true;
                        }
                        // Damaged, if a later line is a trace: see the
                        // batch's end.
                        (false, true) => {}
                        (false, false) => return Ok(false),
                    }
                }
                lines.push(Line {
                    number: *number,
                    bytes_at: line_at + (bytes.start - range.start) as u64,
                    read: range.len(),
                    bytes: Ok(bytes),
                });
            }
            if !started && !lines.is_empty() {
                // Lines, none of them a trace document on its own: the
                // file is read whole, and told what it is.
                return Ok(false);
            }
            let todo = known_of(
                &batch,
                &lines,
                path,
                known.as_mut().map(|k| &mut **k as &mut dyn KnownLines),
            );
            let parsed = on_cores(&todo, |(line, todo)| match todo {
                Todo::Known(_) => None,
                Todo::Parse(hash) => Some(parse_line(&batch, line, *hash, shown)),
            });
            for ((line, todo), parsed) in todo.iter().zip(parsed) {
                let Some(parsed) = parsed else {
                    if let (Some(k), Todo::Known(origin)) = (known.as_mut(), todo) {
                        k.take(path, origin.clone())?;
                    }
                    progress.advance(line.read as u64);
                    continue;
                };
                let (one, hash) = match (parsed, skip.as_mut()) {
                    (Ok(parsed), _) => parsed,
                    (Err(e), Some(skip)) => {
                        skip(e);
                        // `known` was asked about the line if it is UTF-8.
                        if let (Some(k), Ok(_)) = (known.as_mut(), &line.bytes) {
                            k.parsed(false);
                        }
                        progress.advance(line.read as u64);
                        continue;
                    }
                    (Err(e), None) => return Err(e),
                };
                let alone = one.traces.len() == 1 && one.warnings.is_empty();
                warnings.extend(one.warnings);
                // A line's trace alone can be read again from the line.
                let origin = (one.traces.len() == 1).then(|| LineOrigin {
                    offset: line.bytes_at,
                    len: line.bytes.as_ref().map_or(0, ExactSizeIterator::len),
                    hash,
                });
                for mut t in one.traces {
                    t.source = Some(shown.to_owned());
                    emit(t, origin.clone())?;
                }
                if let Some(k) = known.as_mut() {
                    k.parsed(alone);
                }
                progress.advance(line.read as u64);
            }
            // The reader may have stopped: the buffer is then simply
            // dropped.
            let _ = back.send(batch.into_bytes());
        }
        Ok(true)
    })?;
    Ok((per_line && started).then_some(warnings))
}

/// The bytes of lines of a JSON Lines file of traces read at a time: enough
/// for every core to have lines to parse, few enough that memory holds a
/// few of a fleet's traces (a batch is read while the one before is
/// parsed).
const BATCH_BYTES: usize = 8 << 20;

/// One line of a JSON Lines file of traces, read.
struct Line {
    /// Its number in the file (from 1).
    number: usize,
    /// Where its bytes start (after a byte-order mark).
    bytes_at: u64,
    /// The bytes read for it, its end and a byte-order mark included.
    read: usize,
    /// Where its bytes are in its batch (without a byte-order mark), or
    /// the 1-based column where it stops being UTF-8.
    bytes: Result<std::ops::Range<usize>, usize>,
}

/// What is done with a line of a batch.
enum Todo {
    /// Handed to the reader that knows it: it is at this origin.
    Known(LineOrigin),
    /// Parsed; its [`line_hash`] when found already.
    Parse(Option<u64>),
}

/// What is done with each of `lines` of `batch`: with `known`, each is
/// hashed (on every core) and `known` asked which it knows; otherwise each
/// is parsed.
fn known_of<'l>(
    batch: &LineBatch,
    lines: &'l [Line],
    path: &Path,
    known: Option<&mut dyn KnownLines>,
) -> Vec<(&'l Line, Todo)> {
    let Some(k) = known else {
        return lines.iter().map(|l| (l, Todo::Parse(None))).collect();
    };
    let hashed = on_cores(lines, |line| {
        let bytes = &batch.bytes()[line.bytes.clone().ok()?];
        Some((line_hash(bytes), line_digest(bytes)))
    });
    let digests: Vec<LineDigest> = hashed.iter().flatten().map(|h| h.1).collect();
    let mut said = k.knows(path, &digests).into_iter();
    lines
        .iter()
        .zip(hashed)
        .map(|(line, hashed)| {
            // One answer per line hashed, in order.
            let is_known = hashed.is_some() && said.next() == Some(true);
            let todo = match (hashed, &line.bytes) {
                (Some((hash, _)), Ok(bytes)) if is_known => Todo::Known(LineOrigin {
                    offset: line.bytes_at,
                    len: bytes.len(),
                    hash,
                }),
                (hashed, _) => Todo::Parse(hashed.map(|h| h.0)),
            };
            (line, todo)
        })
        .collect()
}

/// `f` of each of `items`, in order, worked out on every core: each core
/// takes the next item left, so that a long line holds none of the others
/// up.
fn on_cores<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores < 2 || items.len() < 2 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                return done;
            };
            done.push((i, f(item)));
        }
    };
    let mut out: Vec<Option<R>> = std::iter::repeat_with(|| None).take(items.len()).collect();
    std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..cores.min(items.len()))
            .map(|_| scope.spawn(work))
            .collect();
        let mine = work();
        let theirs = helpers
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
        for (i, r) in std::iter::once(mine).chain(theirs).flatten() {
            out[i] = Some(r);
        }
    });
    // Each item was taken once.
    out.into_iter().flatten().collect()
}

/// Line `line` of `batch` parsed, and its [`line_hash`] (`hash`, when
/// found already).
fn parse_line(
    batch: &LineBatch,
    line: &Line,
    hash: Option<u64>,
    shown: &str,
) -> Result<(LoadedTraces, u64), TraceError> {
    let not_utf8 = |column| TraceError::Syntax {
        path: shown.to_owned(),
        line: line.number,
        column,
        message: "not UTF-8".to_owned(),
    };
    let range = line.bytes.clone().map_err(not_utf8)?;
    // The batch found the line UTF-8.
    let text = batch.text(range.clone()).ok_or_else(|| not_utf8(1))?;
    let one = load_str(text, shown).map_err(|e| match e {
        TraceError::Syntax {
            path,
            column,
            message,
            ..
        } => TraceError::Syntax {
            path,
            line: line.number,
            column,
            message,
        },
        TraceError::Invalid {
            path,
            pointer,
            message,
        } => TraceError::Invalid {
            path: format!("{path}:{}", line.number),
            pointer,
            message,
        },
        other => other,
    })?;
    Ok((
        one,
        hash.unwrap_or_else(|| line_hash(&batch.bytes()[range])),
    ))
}

/// The hint for a log given where a trace is expected: JSON Lines (one
/// value per line) is what logs are and no trace is. It advises nothing:
/// tracecost reads the logs it knows directly, so a log that reaches the
/// trace loader is one of no kind it reads.
const LOG_HINT: &str = "this looks like a JSON Lines log, not a tracecost trace";

/// Adds [`LOG_HINT`] to the error of a file that looks like a log: a
/// `.jsonl`/`.ndjson` name, or a second JSON value starting a new line.
fn with_log_hint(e: TraceError, path: &Path) -> TraceError {
    let jsonl_name = is_jsonl_name(path);
    match e {
        TraceError::Syntax {
            path,
            line,
            column,
            message,
        } if jsonl_name || (message.starts_with("trailing characters") && column == 1) => {
            TraceError::Syntax {
                path,
                line,
                column,
                message: format!("{message}; {LOG_HINT}"),
            }
        }
        TraceError::Invalid {
            path,
            pointer,
            message,
        } if jsonl_name => TraceError::Invalid {
            path,
            pointer,
            message: format!("{message}; {LOG_HINT}"),
        },
        other => other,
    }
}

/// Loads every trace in `json`; `path` is only used in messages.
pub fn load_str(json: &str, path: &str) -> Result<LoadedTraces, TraceError> {
    let json = json.strip_prefix('\u{feff}').unwrap_or(json);
    // A text in memory is parsed from the slice: serde_json's reader of
    // bytes from an `io::Read` goes a byte at a time, several times slower.
    load_from(serde_json::Deserializer::from_str(json), path)
}

fn load_reader<R: Read>(reader: R, path: &str) -> Result<LoadedTraces, TraceError> {
    load_from(serde_json::Deserializer::from_reader(reader), path)
}

fn load_from<'de, R: serde_json::de::Read<'de>>(
    mut de: serde_json::Deserializer<R>,
    path: &str,
) -> Result<LoadedTraces, TraceError> {
    // Deep nesting is refused by serde_json's recursion limit (128) with a
    // positioned error, not a stack overflow.
    let doc = ObjectOnly::<TraceDoc>::deserialize(&mut de)
        .map_err(|e| syntax(path, &e))?
        .0;
    de.end().map_err(|e| syntax(path, &e))?;
    let mut cx = Cx {
        path,
        warnings: Vec::new(),
    };
    match doc.format.as_deref() {
        Some(TRACE_FORMAT) => {}
        // Another version is named; any other value is not echoed: the
        // file may be anything (a settings file holding secrets).
        Some(other) if other.starts_with("tracecost.trace/") => {
            return Err(cx.invalid("/format", format!("\"{TRACE_FORMAT}\", found {other:?}")));
        }
        Some(_) => {
            return Err(cx.invalid(
                "/format",
                format!("\"{TRACE_FORMAT}\", found the format of something else"),
            ));
        }
        None => {
            return Err(cx.invalid(
                "/format",
                format!("a \"format\": \"{TRACE_FORMAT}\" member"),
            ));
        }
    }
    let traces = match doc.traces {
        Some(list) => {
            if doc.messages.is_some() {
                return Err(cx.invalid(
                    "/messages",
                    "either \"traces\" or one trace's members, not both",
                ));
            }
            if list.is_empty() {
                return Err(cx.invalid("/traces", "at least one trace"));
            }
            let mut out = Vec::with_capacity(list.len());
            for (i, t) in list.into_iter().enumerate() {
                out.push(cx.trace(t, &format!("/traces/{i}"))?);
            }
            out
        }
        None => vec![cx.trace(doc, "")?],
    };
    Ok(LoadedTraces {
        traces,
        warnings: cx.warnings,
    })
}

/// Accepts only a JSON object: serde's derived structs also accept arrays
/// (fields by position), which turns a wrong top-level value into a
/// confusing message about its first element.
struct ObjectOnly<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for ObjectOnly<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for V<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a JSON object (a tracecost trace)")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
            .map(ObjectOnly)
    }
}

fn syntax(path: &str, e: &serde_json::Error) -> TraceError {
    TraceError::Syntax {
        path: path.to_owned(),
        line: e.line(),
        // serde_json reports column 0 when it fails before reading a byte
        // of the line (an empty file, a wrong top-level type).
        column: e.column().max(1),
        message: crate::engine::json::error_message(e),
    }
}

struct Cx<'p> {
    path: &'p str,
    warnings: Vec<Warning>,
}

impl Cx<'_> {
    fn invalid(&self, pointer: impl Into<String>, expected: impl fmt::Display) -> TraceError {
        TraceError::Invalid {
            path: self.path.to_owned(),
            pointer: pointer.into(),
            message: format!("expected {expected}"),
        }
    }

    fn shape(&self, base: &str, e: ShapeError) -> TraceError {
        TraceError::Invalid {
            path: self.path.to_owned(),
            pointer: format!("{base}{}", e.pointer),
            message: format!("expected {}", e.expected),
        }
    }

    fn warn(&mut self, pointer: String, message: String) {
        self.warnings.push(Warning {
            path: self.path.to_owned(),
            pointer,
            message,
        });
    }

    fn prompt(
        &mut self,
        base: &str,
        system: Vec<RawObject>,
        tools: Vec<RawObject>,
    ) -> Result<Prompt, TraceError> {
        let mut p = Prompt::default();
        for (i, o) in system.into_iter().enumerate() {
            let b = ContentBlock::from_object(o)
                .map_err(|e| self.shape(&format!("{base}/system/{i}"), e))?;
            if !matches!(b.kind(), BlockKind::Text { .. }) {
                return Err(self.invalid(
                    format!("{base}/system/{i}/type"),
                    "\"text\" (system blocks are text)",
                ));
            }
            p.system.push(b);
        }
        let mut names = HashSet::new();
        for (i, o) in tools.into_iter().enumerate() {
            let t = ToolDefinition::from_object(o)
                .map_err(|e| self.shape(&format!("{base}/tools/{i}"), e))?;
            if !names.insert(t.name().to_owned()) {
                return Err(self.invalid(
                    format!("{base}/tools/{i}/name"),
                    format!("a unique tool name, {:?} is defined twice", t.name()),
                ));
            }
            p.tools.push(t);
        }
        Ok(p)
    }

    fn trace(&mut self, doc: TraceDoc, base: &str) -> Result<Trace, TraceError> {
        let name = doc
            .name
            .ok_or_else(|| self.invalid(format!("{base}/name"), "a \"name\" string"))?;
        let provider = match doc.provider.as_deref() {
            None => ProviderKind::Anthropic,
            Some(p) => p
                .parse()
                .map_err(
                    |e: crate::engine::cache::CacheConfigError| TraceError::Invalid {
                        path: self.path.to_owned(),
                        pointer: format!("{base}/provider"),
                        // The parse error already says what was expected.
                        message: e.to_string(),
                    },
                )?,
        };
        let model = doc
            .model
            .ok_or_else(|| self.invalid(format!("{base}/model"), "a \"model\" string"))?;
        if doc.hidden_prefix_tokens > ABSURD_TOKENS {
            return Err(self.invalid(
                format!("{base}/hidden_prefix_tokens"),
                format!(
                    "a token count of at most {ABSURD_TOKENS}, found {}",
                    doc.hidden_prefix_tokens
                ),
            ));
        }
        let first_prompt = self.prompt(base, doc.system, doc.tools)?;
        let raw_messages = doc
            .messages
            .ok_or_else(|| self.invalid(format!("{base}/messages"), "a \"messages\" array"))?;
        let messages = self.messages(base, raw_messages)?;
        let raw_calls = doc
            .calls
            .ok_or_else(|| self.invalid(format!("{base}/calls"), "a \"calls\" array"))?;
        let mut prompts = vec![first_prompt];
        let mut calls = Vec::with_capacity(raw_calls.len());
        let mut prev_messages = 0usize;
        let mut prev_start: Option<u64> = None;
        for (k, c) in raw_calls.into_iter().enumerate() {
            let at = format!("{base}/calls/{k}");
            let n = usize::try_from(c.messages).unwrap_or(usize::MAX);
            if n == 0 {
                return Err(self.invalid(format!("{at}/messages"), "at least 1 message"));
            }
            if n > messages.len() {
                return Err(self.invalid(
                    format!("{at}/messages"),
                    format!(
                        "at most {} (the history's length), found {n}",
                        messages.len()
                    ),
                ));
            }
            if n < prev_messages {
                return Err(self.invalid(
                    format!("{at}/messages"),
                    format!("at least {prev_messages} (the previous call's count; histories only grow), found {n}"),
                ));
            }
            prev_messages = n;
            if let (Some(p), Some(s)) = (prev_start, c.start_ms)
                && s < p
            {
                self.warn(
                    format!("{at}/start_ms"),
                    format!("starts {} ms before the previous call", p - s),
                );
            }
            prev_start = c.start_ms.or(prev_start);
            if c.system.is_some() || c.tools.is_some() {
                let last = prompts.last().cloned().unwrap_or_default();
                let system = match c.system {
                    Some(s) => self.prompt(&at, s, Vec::new())?.system,
                    None => last.system,
                };
                let tools = match c.tools {
                    Some(t) => self.prompt(&at, Vec::new(), t)?.tools,
                    None => last.tools,
                };
                // A call that resends the prompt in force does not start a
                // new version: the writer leaves such a repeat out, so a
                // written trace must load to the same prompts.
                let p = Prompt { system, tools };
                if prompts.last() != Some(&p) {
                    prompts.push(p);
                }
            }
            let prompt = prompts.len() - 1;
            let markers = match c.cache_markers {
                None => None,
                Some(list) => Some(self.markers(&at, list, &prompts[prompt], &messages[..n])?),
            };
            let usage = match c.usage {
                None => None,
                Some(u) => Some(self.usage(&at, u)?),
            };
            for (i, id) in c.cleared.iter().enumerate() {
                if !answered(&messages[..n], id) {
                    return Err(self.invalid(
                        format!("{at}/cleared/{i}"),
                        format!(
                            "the id of a tool_result among the {n} messages the call sent, found {}",
                            crate::engine::handle::one_line(&format!("{id:?}"), 200)
                        ),
                    ));
                }
            }
            calls.push(Call {
                messages: n,
                start_ms: c.start_ms,
                model: c.model,
                prompt,
                markers,
                usage,
                cleared: c.cleared,
                compacted: c.compacted.map(|d| {
                    Box::new(crate::RecordedCompaction {
                        manual: d.manual,
                        pre_tokens: d.pre_tokens,
                        post_tokens: d.post_tokens,
                        summary: d.summary,
                    })
                }),
            });
        }
        Ok(Trace {
            name,
            description: doc.description,
            provider,
            model,
            status_quo: doc.status_quo,
            project: doc.project,
            account: doc.account,
            session: doc.session,
            hidden_prefix_tokens: doc.hidden_prefix_tokens,
            source: None,
            prompts,
            messages,
            calls,
        })
    }

    fn messages(&mut self, base: &str, raw: Vec<RawObject>) -> Result<Vec<Message>, TraceError> {
        let mut out = Vec::with_capacity(raw.len());
        let mut tool_uses: HashSet<std::sync::Arc<str>> = HashSet::new();
        let mut answered: HashSet<std::sync::Arc<str>> = HashSet::new();
        for (i, o) in raw.into_iter().enumerate() {
            let at = format!("{base}/messages/{i}");
            let m = Message::from_object(o).map_err(|e| self.shape(&at, e))?;
            for (j, b) in m.blocks().iter().enumerate() {
                match b.kind() {
                    BlockKind::ToolUse { id, .. } if !tool_uses.insert(id.clone()) => {
                        return Err(self.invalid(
                            format!("{at}/content/{j}/id"),
                            format!("a unique tool_use id, {id:?} is used twice"),
                        ));
                    }
                    BlockKind::ToolResult { tool_use_id, .. } => {
                        if !tool_uses.contains(tool_use_id) {
                            return Err(self.invalid(
                                format!("{at}/content/{j}/tool_use_id"),
                                format!("the id of an earlier tool_use, {tool_use_id:?} has none"),
                            ));
                        }
                        if !answered.insert(tool_use_id.clone()) {
                            return Err(self.invalid(
                                format!("{at}/content/{j}/tool_use_id"),
                                format!("one tool_result per tool_use, {tool_use_id:?} is answered twice"),
                            ));
                        }
                    }
                    BlockKind::Other { block_type } => {
                        self.warn(
                            format!("{at}/content/{j}/type"),
                            format!("unknown block type {block_type:?}, kept as is"),
                        );
                    }
                    _ => {}
                }
            }
            out.push(m);
        }
        Ok(out)
    }

    fn markers(
        &self,
        at: &str,
        list: Vec<MarkerDoc>,
        prompt: &Prompt,
        history: &[Message],
    ) -> Result<Vec<Marker>, TraceError> {
        if list.len() > MAX_BREAKPOINTS {
            return Err(self.invalid(
                format!("{at}/cache_markers"),
                format!("at most {MAX_BREAKPOINTS} markers, found {}", list.len()),
            ));
        }
        let mut out = Vec::with_capacity(list.len());
        for (i, m) in list.into_iter().enumerate() {
            let p = format!("{at}/cache_markers/{i}");
            let ttl = match m.ttl.as_deref() {
                None | Some("5m") => Ttl::FiveMinutes,
                Some("1h") => Ttl::OneHour,
                Some(other) => {
                    return Err(self.invalid(
                        format!("{p}/ttl"),
                        format!("\"5m\" or \"1h\", found {other:?}"),
                    ));
                }
            };
            let target = match (m.tool, m.system, m.message, m.block) {
                (Some(t), None, None, None) if t < prompt.tools.len() => BlockRef::Tool(t),
                (Some(_), None, None, None) => {
                    return Err(self.invalid(
                        format!("{p}/tool"),
                        format!("a tool index below {}", prompt.tools.len()),
                    ));
                }
                (None, Some(s), None, None) if s < prompt.system.len() => BlockRef::System(s),
                (None, Some(_), None, None) => {
                    return Err(self.invalid(
                        format!("{p}/system"),
                        format!("a system block index below {}", prompt.system.len()),
                    ));
                }
                (None, None, Some(mi), b) => {
                    let block = b.unwrap_or(0);
                    let Some(msg) = history.get(mi) else {
                        return Err(self.invalid(
                            format!("{p}/message"),
                            format!(
                                "a message index below {} (this call's messages)",
                                history.len()
                            ),
                        ));
                    };
                    let n_blocks = msg.blocks().len().max(1);
                    if block >= n_blocks {
                        return Err(self.invalid(
                            format!("{p}/block"),
                            format!("a block index below {n_blocks}"),
                        ));
                    }
                    BlockRef::Message { message: mi, block }
                }
                _ => {
                    return Err(self.invalid(&p, "exactly one of {\"tool\": i}, {\"system\": i} or {\"message\": i, \"block\": j}"));
                }
            };
            out.push(Marker { at: target, ttl });
        }
        Ok(out)
    }

    fn usage(&mut self, at: &str, u: UsageDoc) -> Result<RecordedUsage, TraceError> {
        let (e5, e1) = match &u.cache_creation {
            Some(c) => (c.ephemeral_5m_input_tokens, c.ephemeral_1h_input_tokens),
            None => (None, None),
        };
        let fields = [
            ("input_tokens", u.input_tokens),
            ("cache_creation_input_tokens", u.cache_creation_input_tokens),
            ("cache_creation/ephemeral_5m_input_tokens", e5),
            ("cache_creation/ephemeral_1h_input_tokens", e1),
            ("cache_read_input_tokens", u.cache_read_input_tokens),
            ("output_tokens", u.output_tokens),
            ("reasoning_tokens", u.reasoning_tokens),
        ];
        for (name, v) in fields {
            if let Some(v) = v
                && v > ABSURD_TOKENS
            {
                return Err(self.invalid(
                    format!("{at}/usage/{name}"),
                    format!("a token count of at most {ABSURD_TOKENS}, found {v}"),
                ));
            }
        }
        if let (Some(total), Some(a), Some(b)) = (u.cache_creation_input_tokens, e5, e1)
            && a + b != total
        {
            self.warn(
                    format!("{at}/usage/cache_creation"),
                    format!("5m ({a}) + 1h ({b}) parts do not add up to cache_creation_input_tokens ({total})"),
                );
        }
        Ok(RecordedUsage {
            input_tokens: u.input_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens,
            ephemeral_5m_input_tokens: e5,
            ephemeral_1h_input_tokens: e1,
            cache_read_input_tokens: u.cache_read_input_tokens,
            output_tokens: u.output_tokens,
            modifiers: crate::RecordedModifiers {
                fast: u.fast,
                regional: u.regional,
                batch: u.batch,
            },
            reasoning_tokens: u.reasoning_tokens,
        })
    }
}

/// Whether a tool_result for `id` is among `messages`.
fn answered(messages: &[Message], id: &str) -> bool {
    messages.iter().any(|m| {
        m.blocks().iter().any(|b| {
            matches!(b.kind(), crate::engine::message::BlockKind::ToolResult { tool_use_id, .. } if &**tool_use_id == id)
        })
    })
}

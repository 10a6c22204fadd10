//! JSON Lines files of traces: a line's identity (its place, hash and
//! digest, what a caller already knows), and the driver that reads a batch
//! of lines at a time, parses them on every core and hands them over in
//! order.

use std::path::Path;

use serde::Deserialize;

use super::document::{UTF8_BOM, load_str};
use super::error::{LoadedTraces, TraceError, Warning};
use crate::Trace;
use crate::lines::{LineBatch, read_ahead};
use crate::progress::{Progress, Unit};

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

/// Takes the error of each damaged line of a JSON Lines file of traces
/// that the load passes over ([`Loader::skipping`](super::Loader::skipping)).
pub type SkipLine<'s> = dyn FnMut(TraceError) + 's;

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
pub(super) fn load_lines(
    path: &Path,
    shown: &str,
    size: u64,
    progress: &dyn Progress,
    known: Option<&mut dyn KnownLines>,
    skip: Option<&mut SkipLine<'_>>,
    emit: &mut dyn FnMut(Trace, Option<LineOrigin>) -> Result<(), TraceError>,
) -> Result<Option<Vec<Warning>>, TraceError> {
    let io = |source| TraceError::Io {
        path: shown.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut load = LineLoad {
        path,
        shown,
        size,
        progress,
        // The trait object's lifetime shortened to the load's.
        known: known.map(|k| k as &mut dyn KnownLines),
        skip,
        emit,
        warnings: Vec::new(),
        started: false,
        at: 0,
    };
    let per_line = std::thread::scope(|scope| {
        // Dropped on return, before the scope waits for the reader: a
        // reader blocked on sending then stops.
        let (rx, back) = read_ahead(scope, file, BATCH_BYTES);
        for batch in rx.iter() {
            let batch = batch.map_err(io)?;
            let Some(lines) = load.lines_of(&batch) else {
                return Ok(false);
            };
            load.hand_over(&batch, &lines)?;
            // The reader may have stopped: the buffer is then simply
            // dropped.
            let _ = back.send(batch.into_bytes());
        }
        Ok(true)
    })?;
    Ok((per_line && load.started).then_some(load.warnings))
}

/// A JSON Lines load under way: where it is in the file, and where each
/// line's traces, errors and warnings go.
struct LineLoad<'a, 's> {
    path: &'a Path,
    shown: &'a str,
    size: u64,
    progress: &'a dyn Progress,
    known: Option<&'a mut dyn KnownLines>,
    skip: Option<&'a mut SkipLine<'s>>,
    emit: &'a mut dyn FnMut(Trace, Option<LineOrigin>) -> Result<(), TraceError>,
    warnings: Vec<Warning>,
    /// A line was a trace document on its own: the file is one of traces
    /// a line at a time.
    started: bool,
    /// Where the next line starts in the file.
    at: u64,
}

impl LineLoad<'_, '_> {
    /// The lines of a batch to parse, blank ones passed over; `None` when
    /// the file is to be read whole instead (its first line is not a trace
    /// document on its own).
    fn lines_of(&mut self, batch: &LineBatch) -> Option<Vec<Line>> {
        let mut lines = Vec::with_capacity(batch.lines().len());
        for (i, (number, range)) in batch.lines().iter().enumerate() {
            let range = match range {
                Ok(range) => range.clone(),
                // Passed over, with its place; the next line starts
                // after all its bytes.
                Err(column) if self.skip.is_some() => {
                    let read = batch.span(i).len();
                    lines.push(Line {
                        number: *number,
                        bytes_at: self.at,
                        read,
                        bytes: Err(*column),
                    });
                    self.at += read as u64;
                    continue;
                }
                // No trace: the load stops at it (or reads the file
                // whole, when it is the first).
                Err(column) if self.started => {
                    lines.push(Line {
                        number: *number,
                        bytes_at: self.at,
                        read: 0,
                        bytes: Err(*column),
                    });
                    break;
                }
                Err(_) => return None,
            };
            let line_at = self.at;
            self.at += range.len() as u64;
            let mut bytes = range.clone();
            if *number == 1 && batch.bytes()[range.clone()].starts_with(UTF8_BOM) {
                bytes.start += UTF8_BOM.len();
            }
            let text = &batch.bytes()[bytes.clone()];
            if text.iter().all(u8::is_ascii_whitespace) {
                if self.started {
                    self.progress.advance(range.len() as u64);
                }
                continue;
            }
            if !self.started {
                // A trace per line only when the first line is a trace
                // document on its own; anything else (a log, a
                // document over several lines) is read whole, and
                // told what it is.
                #[derive(Deserialize)]
                struct Head {
                    format: Option<String>,
                }
                let head = serde_json::from_slice::<Head>(text);
                let is_trace =
                    head.is_ok_and(|h| h.format.is_some_and(|f| f.starts_with("tracecost.trace/")));
                match (is_trace, self.skip.is_some()) {
                    (true, _) => {
                        self.progress.start(
                            &format!("load {}", self.shown),
                            self.size,
                            Unit::Bytes,
                        );
                        self.started = true;
                    }
                    // Damaged, if a later line is a trace: see the
                    // batch's end.
                    (false, true) => {}
                    (false, false) => return None,
                }
            }
            lines.push(Line {
                number: *number,
                bytes_at: line_at + (bytes.start - range.start) as u64,
                read: range.len(),
                bytes: Ok(bytes),
            });
        }
        if !self.started && !lines.is_empty() {
            // Lines, none of them a trace document on its own: the file is
            // read whole, and told what it is.
            return None;
        }
        Some(lines)
    }

    /// Parses the lines `known` does not know on every core and hands
    /// their traces over in the file's order; a damaged line goes to
    /// `skip`, or is the load's error.
    fn hand_over(&mut self, batch: &LineBatch, lines: &[Line]) -> Result<(), TraceError> {
        let todo = known_of(
            batch,
            lines,
            self.path,
            self.known.as_mut().map(|k| &mut **k as &mut dyn KnownLines),
        );
        let shown = self.shown;
        let parsed = on_cores(&todo, |(line, todo)| match todo {
            Todo::Known(_) => None,
            Todo::Parse(hash) => Some(parse_line(batch, line, *hash, shown)),
        });
        for ((line, todo), parsed) in todo.iter().zip(parsed) {
            let Some(parsed) = parsed else {
                if let (Some(k), Todo::Known(origin)) = (self.known.as_mut(), todo) {
                    k.take(self.path, origin.clone())?;
                }
                self.progress.advance(line.read as u64);
                continue;
            };
            let (one, hash) = match (parsed, self.skip.as_mut()) {
                (Ok(parsed), _) => parsed,
                (Err(e), Some(skip)) => {
                    skip(e);
                    // `known` was asked about the line if it is UTF-8.
                    if let (Some(k), Ok(_)) = (self.known.as_mut(), &line.bytes) {
                        k.parsed(false);
                    }
                    self.progress.advance(line.read as u64);
                    continue;
                }
                (Err(e), None) => return Err(e),
            };
            let alone = one.traces.len() == 1 && one.warnings.is_empty();
            self.warnings.extend(one.warnings);
            // A line's trace alone can be read again from the line.
            let origin = (one.traces.len() == 1).then(|| LineOrigin {
                offset: line.bytes_at,
                len: line.bytes.as_ref().map_or(0, ExactSizeIterator::len),
                hash,
            });
            for mut t in one.traces {
                t.source = Some(self.shown.to_owned());
                (self.emit)(t, origin.clone())?;
            }
            if let Some(k) = self.known.as_mut() {
                k.parsed(alone);
            }
            self.progress.advance(line.read as u64);
        }
        Ok(())
    }
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
pub(super) fn with_log_hint(e: TraceError, path: &Path) -> TraceError {
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

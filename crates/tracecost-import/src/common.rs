//! Helpers shared by the request-log, LangChain and OpenAI importers.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::engine::cache::ProviderKind;
use crate::engine::json::{RawObject, raw_json, raw_string};
use crate::engine::message::{BlockKind, Content, ContentBlock, Message, Role};
use crate::trace::{Call, Prompt, RecordedUsage, Trace};
use crate::{ImportError, ImportOptions, ImportReport};

/// Usage figures above this are corrupt records (the loader's limit).
const ABSURD_TOKENS: u64 = 100_000_000;

/// What one log importer reads: `read` gives a file's conversations and a
/// label for their descriptions (such as "OpenAI Chat Completions
/// calls.jsonl"); `unit` names what a call is in a description,
/// `nothing_found` what to say when no file held anything.
pub(crate) struct LogFormat {
    pub(crate) unit: &'static str,
    pub(crate) nothing_found: &'static str,
    pub(crate) read: ReadLog,
}

/// Reads one log file: its conversations and the label of their
/// descriptions.
pub(crate) type ReadLog = fn(
    &Path,
    &ImportOptions,
    &mut ImportReport,
    &mut Unmapped,
) -> Result<(Vec<TraceBuilder>, String), ImportError>;

/// The loop every log importer shares: expand the inputs, read each file
/// with the format's `read`, name the traces, check that each one loads,
/// and hand it to `emit` before the next file is read.
pub(crate) fn import_files<E: From<ImportError>>(
    format: &LogFormat,
    inputs: &[PathBuf],
    opts: &ImportOptions,
    progress: &dyn crate::progress::Progress,
    emit: &mut dyn FnMut(Trace) -> Result<(), E>,
) -> Result<ImportReport, E> {
    let LogFormat {
        unit,
        nothing_found,
        read,
    } = format;
    let files = expand_inputs(inputs)?;
    let sizes = super::file_sizes(&files);
    progress.start("import", sizes.iter().sum(), crate::progress::Unit::Bytes);
    let mut report = ImportReport::default();
    let mut un = Unmapped::default();
    let mut names = Names::default();
    let mut emitted = 0usize;
    for (path, size) in files.iter().zip(sizes) {
        report.files += 1;
        let (builders, label) = read(path, opts, &mut report, &mut un)?;
        progress.advance(size);
        if builders.is_empty() {
            report.skipped_files += 1;
            continue;
        }
        let trace_names = names.for_file(path, builders.len());
        for (b, name) in builders.into_iter().zip(trace_names) {
            let description = format!(
                "{label}: {} {unit} from line {}",
                b.calls.len(),
                b.first_line
            );
            let line = b.first_line;
            let mut trace = b.finish(name, description, opts, &mut un);
            check_loads(&trace, path, line)?;
            trace.source = Some(path.display().to_string());
            emit(trace)?;
            emitted += 1;
        }
    }
    report.unmapped = un.lines();
    if emitted == 0 {
        return Err(ImportError::Empty(format!(
            "{}: no {nothing_found} found in {} file(s)",
            crate::shown(inputs),
            files.len()
        ))
        .into());
    }
    Ok(report)
}

/// A message `content` as LangChain and OpenAI write it: a string (one
/// text block, none when empty) or a list of parts. `Err` holds the blocks
/// of a string (or none); `Ok` the raw parts of a list. Anything else is
/// dropped and counted.
pub(crate) fn split_content<'a>(
    raw: &'a RawValue,
    un: &mut Unmapped,
) -> Result<Vec<&'a RawValue>, Vec<ContentBlock>> {
    let text = raw.get();
    if text.starts_with('"') {
        return Err(match serde_json::from_str::<String>(text) {
            Ok(s) if !s.is_empty() => vec![ContentBlock::text(&s)],
            _ => Vec::new(),
        });
    }
    serde_json::from_str::<Vec<&RawValue>>(text).map_err(|_| {
        if text != "null" {
            un.add(
                "message contents that are neither a string nor a list (dropped)",
                1,
            );
        }
        Vec::new()
    })
}

/// The files to read: directories expand to their `.json` / `.jsonl` /
/// `.ndjson` files (not recursively); the list is sorted and deduplicated.
pub(crate) fn expand_inputs(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, ImportError> {
    let mut files = Vec::new();
    for p in inputs {
        let io = |source| ImportError::Io {
            path: p.clone(),
            source,
        };
        let meta = std::fs::metadata(p).map_err(io)?;
        if !meta.is_dir() {
            files.push(p.clone());
            continue;
        }
        for entry in std::fs::read_dir(p).map_err(io)? {
            let path = entry.map_err(io)?.path();
            let ext = path
                .extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase());
            if path.is_file() && matches!(ext.as_deref(), Some("json" | "jsonl" | "ndjson")) {
                files.push(path);
            }
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// The file's name, for descriptions.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// Whether the file is JSON Lines by its extension.
pub(crate) fn is_jsonl(path: &Path) -> bool {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|e| e == "jsonl" || e == "ndjson")
}

/// Reads a whole file as UTF-8, without the byte-order mark some Windows
/// tools put first (RFC 8259 §8.1 lets a parser ignore it).
pub(crate) fn read_text(path: &Path) -> Result<String, ImportError> {
    let mut bytes = std::fs::read(path).map_err(|source| ImportError::Io {
        path: path.to_owned(),
        source,
    })?;
    if bytes.starts_with(crate::trace::UTF8_BOM) {
        bytes.drain(..crate::trace::UTF8_BOM.len());
    }
    String::from_utf8(bytes).map_err(|e| {
        let ok = e.utf8_error().valid_up_to();
        let prefix = &e.as_bytes()[..ok];
        let line = prefix.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = ok
            - prefix
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1)
            + 1;
        invalid(path, line, Some(col), "not UTF-8")
    })
}

/// A file read a batch of whole lines at a time, in large reads.
pub(crate) struct LineBatches<R> {
    reader: R,
    /// Bytes a batch holds at least (unless the file ends first).
    target: usize,
    /// The start of a line the last batch did not finish.
    carry: Vec<u8>,
    /// The number of the next batch's first line.
    next_line: usize,
    /// Buffers of batches done with, to read into again (fresh memory
    /// costs a page fault per page).
    returned: Option<std::sync::mpsc::Receiver<Vec<u8>>>,
}

/// Whole lines of a file, the last one without its newline only at the
/// end of the file.
pub(crate) struct LineBatch {
    data: BatchData,
    lines: Vec<BatchLine>,
}

/// One line of a batch: its 1-based number, and where its text (newline
/// included) is in the batch, or the 1-based column where it stops being
/// UTF-8.
pub(crate) type BatchLine = (usize, Result<Range<usize>, usize>);

enum BatchData {
    /// The usual case: the whole batch is UTF-8, checked once.
    Text(String),
    /// Some line is not.
    Bytes(Vec<u8>),
}

/// Bytes asked of the reader at a time.
const READ_CHUNK: usize = 4 << 20;

impl<R: std::io::Read> LineBatches<R> {
    /// Batches of at least `target` bytes (the last one may be shorter),
    /// read into the buffers sent back on `returned` when there are some
    /// ([`LineBatch::into_bytes`]).
    pub(crate) fn new(
        reader: R,
        target: usize,
        returned: Option<std::sync::mpsc::Receiver<Vec<u8>>>,
    ) -> Self {
        Self {
            reader,
            target: target.max(1),
            carry: Vec::new(),
            next_line: 1,
            returned,
        }
    }

    /// The next batch, `None` at the end of the file.
    pub(crate) fn next_batch(&mut self) -> std::io::Result<Option<LineBatch>> {
        use std::io::Read;
        let mut bytes = match self.returned.as_ref().and_then(|r| r.try_recv().ok()) {
            Some(mut b) => {
                b.clear();
                b
            }
            None => Vec::with_capacity(self.target + READ_CHUNK),
        };
        bytes.append(&mut self.carry);
        // The end of the last newline read so far (the carry has none).
        let mut cut = None;
        loop {
            if let Some(c) = cut
                && bytes.len() >= self.target
            {
                self.carry.extend_from_slice(&bytes[c..]);
                bytes.truncate(c);
                break;
            }
            let before = bytes.len();
            // Small targets (tests) read small: a batch ends at the last
            // newline read.
            let want = self
                .target
                .saturating_sub(before)
                .max(READ_CHUNK.min(self.target)) as u64;
            let n = self.reader.by_ref().take(want).read_to_end(&mut bytes)?;
            if n == 0 {
                break;
            }
            if let Some(i) = memchr::memrchr(b'\n', &bytes[before..]) {
                cut = Some(before + i + 1);
            }
        }
        if bytes.is_empty() {
            return Ok(None);
        }
        let mut ranges = Vec::new();
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', &bytes) {
            ranges.push(start..nl + 1);
            start = nl + 1;
        }
        if start < bytes.len() {
            ranges.push(start..bytes.len());
        }
        let numbered = |(i, r)| (self.next_line + i, r);
        let (data, lines): (BatchData, Vec<BatchLine>) = match String::from_utf8(bytes) {
            Ok(text) => (
                BatchData::Text(text),
                ranges
                    .into_iter()
                    .map(Ok)
                    .enumerate()
                    .map(numbered)
                    .collect(),
            ),
            Err(e) => {
                let bytes = e.into_bytes();
                let lines = ranges
                    .into_iter()
                    .map(|r| match std::str::from_utf8(&bytes[r.clone()]) {
                        Ok(_) => Ok(r),
                        Err(e) => Err(e.valid_up_to() + 1),
                    })
                    .enumerate()
                    .map(numbered)
                    .collect();
                (BatchData::Bytes(bytes), lines)
            }
        };
        self.next_line += lines.len();
        Ok(Some(LineBatch { data, lines }))
    }
}

impl LineBatch {
    /// The lines, in order.
    pub(crate) fn lines(&self) -> &[BatchLine] {
        &self.lines
    }

    /// The batch's buffer, to read into again.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        match self.data {
            BatchData::Text(t) => t.into_bytes(),
            BatchData::Bytes(b) => b,
        }
    }

    /// The batch's bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        match &self.data {
            BatchData::Text(t) => t.as_bytes(),
            BatchData::Bytes(b) => b,
        }
    }

    /// The text at `range`, which lies within a UTF-8 line and starts and
    /// ends at character boundaries (`None` otherwise).
    pub(crate) fn text(&self, range: Range<usize>) -> Option<&str> {
        match &self.data {
            BatchData::Text(t) => t.get(range),
            BatchData::Bytes(b) => std::str::from_utf8(b.get(range)?).ok(),
        }
    }
}

/// An [`ImportError::Invalid`].
pub(crate) fn invalid(
    path: &Path,
    line: usize,
    column: Option<usize>,
    message: &str,
) -> ImportError {
    ImportError::Invalid {
        path: path.to_owned(),
        line,
        column,
        message: message.to_owned(),
    }
}

/// Fails with `err`, or with `skip_invalid` counts a skipped line.
pub(crate) fn reject(
    opts: &ImportOptions,
    report: &mut ImportReport,
    err: ImportError,
) -> Result<(), ImportError> {
    if opts.skip_invalid {
        report.skipped_lines += 1;
        Ok(())
    } else {
        Err(err)
    }
}

pub(crate) use crate::engine::json::error_message as strip_position;

/// 1-based line and column of `part` (a slice of `text`) within `text`.
pub(crate) fn position_of(text: &str, part: &str) -> (usize, usize) {
    let start = text.as_ptr() as usize;
    let at = (part.as_ptr() as usize)
        .checked_sub(start)
        .filter(|&o| o <= text.len())
        .unwrap_or(0);
    let before = text.as_bytes().get(..at).unwrap_or_default();
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    (line, at - line_start + 1)
}

/// A JSON file read either as one document or as JSON Lines.
pub(crate) enum Doc<'a> {
    /// One JSON value (borrowed from the file text).
    Whole(&'a RawValue),
    /// Non-empty lines with their 1-based numbers.
    Lines(Vec<(usize, &'a str)>),
}

/// Decides how to read `text`: `.jsonl` / `.ndjson` files (and files
/// whose first line is a JSON value on its own while the whole is not)
/// are JSON Lines; anything else is one document. `Ok(None)` when there
/// is nothing to read (empty, or an invalid document skipped under
/// `skip_invalid`).
pub(crate) fn split_doc<'a>(
    path: &Path,
    text: &'a str,
    opts: &ImportOptions,
    report: &mut ImportReport,
) -> Result<Option<Doc<'a>>, ImportError> {
    if text.trim().is_empty() {
        return Ok(None);
    }
    let lines = || -> Vec<(usize, &'a str)> {
        text.split('\n')
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim_end()))
            .filter(|(_, l)| !l.trim_start().is_empty())
            .collect()
    };
    let first_line_alone = || {
        lines()
            .first()
            .is_some_and(|(_, l)| serde_json::from_str::<serde::de::IgnoredAny>(l).is_ok())
    };
    if is_jsonl(path) {
        if first_line_alone() {
            return Ok(Some(Doc::Lines(lines())));
        }
        if let Ok(v) = serde_json::from_str::<&RawValue>(text) {
            return Ok(Some(Doc::Whole(v)));
        }
        return Ok(Some(Doc::Lines(lines())));
    }
    match serde_json::from_str::<&RawValue>(text) {
        Ok(v) => Ok(Some(Doc::Whole(v))),
        Err(_) if first_line_alone() => Ok(Some(Doc::Lines(lines()))),
        Err(e) => {
            let err = invalid(path, e.line(), Some(e.column().max(1)), &strip_position(&e));
            reject(opts, report, err)?;
            Ok(None)
        }
    }
}

/// Removes whitespace between JSON tokens; strings are kept byte for
/// byte. `s` must be JSON (or nearly: invalid input stays invalid).
pub(crate) fn compact_json(s: &str) -> Cow<'_, str> {
    let bytes = s.as_bytes();
    let mut out: Option<Vec<u8>> = None;
    // Bytes before `kept` are in `out` (when there is one).
    let mut kept = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'"' {
            // Strings are most of a log's bytes: jump from one quote or
            // backslash to the next. An escape skips the byte after it;
            // a string left open runs to the end.
            i += 1;
            loop {
                match memchr::memchr2(b'"', b'\\', bytes.get(i..).unwrap_or_default()) {
                    None => {
                        i = bytes.len();
                        break;
                    }
                    Some(k) if bytes[i + k] == b'"' => {
                        i += k + 1;
                        break;
                    }
                    Some(k) => i += k + 2,
                }
            }
            continue;
        }
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            let v = out.get_or_insert_with(|| Vec::with_capacity(bytes.len()));
            v.extend_from_slice(&bytes[kept..i]);
            kept = i + 1;
        }
        i += 1;
    }
    match out {
        None => Cow::Borrowed(s),
        Some(mut v) => {
            v.extend_from_slice(&bytes[kept..]);
            // Only ASCII bytes were dropped, so the rest is still UTF-8.
            String::from_utf8(v).map_or(Cow::Borrowed(s), Cow::Owned)
        }
    }
}

/// Parses compacted JSON text as an object.
pub(crate) fn compact_object(raw: &str) -> Option<RawObject> {
    RawObject::from_json(&compact_json(raw)).ok()
}

/// Counts of things that could not be mapped, one line per kind, in the
/// order first seen.
#[derive(Default)]
pub(crate) struct Unmapped {
    items: Vec<(&'static str, usize)>,
}

impl Unmapped {
    /// Adds `n` of `what`.
    pub(crate) fn add(&mut self, what: &'static str, n: usize) {
        if n == 0 {
            return;
        }
        match self.items.iter_mut().find(|(w, _)| *w == what) {
            Some((_, c)) => *c += n,
            None => self.items.push((what, n)),
        }
    }

    /// Adds every count of `other`, in its order (merging what one line
    /// recorded apart gives the counts and order adding them here would).
    pub(crate) fn merge(&mut self, other: &Unmapped) {
        for &(what, n) in &other.items {
            self.add(what, n);
        }
    }

    /// `"N × what"` lines.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.items
            .iter()
            .map(|(w, n)| format!("{n} × {w}"))
            .collect()
    }
}

/// Unique trace names.
#[derive(Default)]
pub(crate) struct Names {
    used: HashSet<String>,
}

impl Names {
    /// `count` names for the traces of one file: its stem, then
    /// `stem-2`, `stem-3`…; a name already taken gets a further `-N`.
    pub(crate) fn for_file(&mut self, path: &Path, count: usize) -> Vec<String> {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "trace".to_owned());
        (0..count)
            .map(|i| {
                let base = if i == 0 {
                    stem.clone()
                } else {
                    format!("{stem}-{}", i + 1)
                };
                self.unique(base)
            })
            .collect()
    }

    fn unique(&mut self, base: String) -> String {
        if self.used.insert(base.clone()) {
            return base;
        }
        let mut n = 2usize;
        loop {
            let c = format!("{base}-{n}");
            if self.used.insert(c.clone()) {
                return c;
            }
            n += 1;
        }
    }
}

/// A key equal for two messages that are equal once markers are removed
/// (a string content hashes as one text block holding it).
pub(crate) fn message_key(m: &Message) -> u64 {
    let mut h = DefaultHasher::new();
    m.role().as_str().hash(&mut h);
    match m.content() {
        Content::Text(_) => {
            let raw = m.fields().get("content").map_or("\"\"", |r| r.get());
            format!("{{\"type\":\"text\",\"text\":{raw}}}").hash(&mut h);
        }
        Content::Blocks(bs) => {
            for b in bs {
                b.to_json().hash(&mut h);
            }
        }
    }
    h.finish()
}

/// `m` with its content replaced by `blocks`, other members kept.
pub(crate) fn with_blocks(m: &Message, blocks: Vec<ContentBlock>) -> Message {
    let mut fields = m.fields().clone();
    fields.set("content", blocks_json(&blocks));
    Message::from_object(fields).unwrap_or_else(|_| Message::new(m.role(), blocks))
}

/// A JSON array of the blocks.
pub(crate) fn blocks_json(blocks: &[ContentBlock]) -> Box<RawValue> {
    let mut json = String::from("[");
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            json.push(',');
        }
        b.fields().write_json(&mut json);
    }
    json.push(']');
    raw_json(json)
}

/// A message with role `role` whose content is the raw `content`.
pub(crate) fn serde_message(role: Role, content: &RawValue) -> Option<Message> {
    let mut f = RawObject::new();
    f.set("role", raw_string(role.as_str()));
    f.set("content", content.to_owned());
    Message::from_object(f).ok()
}

/// `{"type":"tool_use","id":…,"name":…,"input":…}`.
pub(crate) fn tool_use_block(id: &str, name: &str, input: Box<RawValue>) -> ContentBlock {
    let mut f = RawObject::new();
    f.set("type", raw_string("tool_use"));
    f.set("id", raw_string(id));
    f.set("name", raw_string(name));
    f.set("input", input);
    ContentBlock::from_object(f).unwrap_or_else(|_| ContentBlock::text(""))
}

/// What a tool result carries.
pub(crate) enum ResultContent {
    /// A string.
    Text(String),
    /// Content blocks.
    Blocks(Vec<ContentBlock>),
}

/// `{"type":"tool_result","tool_use_id":…,"content":…}`.
pub(crate) fn tool_result_block(id: &str, content: ResultContent, is_error: bool) -> ContentBlock {
    let mut f = RawObject::new();
    f.set("type", raw_string("tool_result"));
    f.set("tool_use_id", raw_string(id));
    let fallback = match &content {
        ResultContent::Text(t) => t.clone(),
        ResultContent::Blocks(_) => String::new(),
    };
    match content {
        ResultContent::Text(t) => f.set("content", raw_string(&t)),
        ResultContent::Blocks(b) => f.set("content", blocks_json(&b)),
    }
    if is_error {
        f.set("is_error", raw_json("true".to_owned()));
    }
    ContentBlock::from_object(f).unwrap_or_else(|_| ContentBlock::text(&fallback))
}

/// An Anthropic image block for a URL (`data:` URLs become base64
/// sources).
pub(crate) fn image_from_url(url: &str) -> Option<ContentBlock> {
    let mut source = RawObject::new();
    if let Some(rest) = url.strip_prefix("data:") {
        let (meta, data) = rest.split_once(',')?;
        let media = meta.strip_suffix(";base64")?;
        source.set("type", raw_string("base64"));
        source.set("media_type", raw_string(media));
        source.set("data", raw_string(data));
    } else {
        source.set("type", raw_string("url"));
        source.set("url", raw_string(url));
    }
    let mut f = RawObject::new();
    f.set("type", raw_string("image"));
    f.set("source", raw_json(source.to_json()));
    ContentBlock::from_object(f).ok()
}

/// The request side of an exchange record.
pub(crate) struct HttpRequest {
    /// The request body.
    pub body: Option<RawObject>,
    /// Whether it was wrapped (`{"body": …, "url": …}`).
    pub wrapped: bool,
    /// The request URL, when recorded.
    pub url: Option<String>,
    /// When the request started.
    pub timestamp_ms: Option<u64>,
}

/// A response body.
pub(crate) enum HttpBody {
    /// A JSON object.
    Json(RawObject),
    /// Text (server-sent events).
    Text(String),
}

/// The response side of an exchange record.
pub(crate) struct HttpResponse {
    /// No response was recorded (absent or `null`).
    pub missing: bool,
    /// The HTTP status, when recorded.
    pub status: Option<u64>,
    /// The body.
    pub body: Option<HttpBody>,
    /// When the response was recorded.
    pub timestamp_ms: Option<u64>,
}

/// Milliseconds since the epoch from a number of seconds (or of
/// milliseconds, above 10^11) or an RFC 3339 string.
pub(crate) fn timestamp_ms(raw: &RawValue) -> Option<u64> {
    let text = raw.get();
    if text.starts_with('"') {
        let s: String = serde_json::from_str(text).ok()?;
        return crate::time::parse_rfc3339_ms(&s);
    }
    let v: f64 = serde_json::from_str(text).ok()?;
    if !v.is_finite() || v < 0.0 {
        return None;
    }
    let ms = if v > 1e11 { v } else { v * 1000.0 };
    // In range: checked above and bounded by f64's exponent.
    (ms < 1.8e19).then(|| ms.round() as u64)
}

fn parse_body(raw: &RawValue) -> Option<HttpBody> {
    let text = raw.get();
    if text.starts_with('{') {
        return compact_object(text).map(HttpBody::Json);
    }
    if text.starts_with('"') {
        let s: String = serde_json::from_str(text).ok()?;
        let trimmed = s.trim_start();
        if trimmed.starts_with('{')
            && let Some(o) = compact_object(trimmed)
        {
            return Some(HttpBody::Json(o));
        }
        return Some(HttpBody::Text(s));
    }
    None
}

/// Reads the `request` member of a record: a request body, or a
/// recorder's wrapper holding one in `body`.
pub(crate) fn unwrap_request(raw: &RawValue) -> Result<HttpRequest, String> {
    let obj = RawObject::from_json(raw.get())
        .map_err(|_| "at /request: expected a JSON object".to_owned())?;
    if obj.get("messages").is_some() || obj.get("body").is_none() {
        return Ok(HttpRequest {
            body: Some(obj),
            wrapped: false,
            url: None,
            timestamp_ms: None,
        });
    }
    let body = match obj.get("body") {
        Some(b) => match parse_body(b) {
            Some(HttpBody::Json(o)) => Some(o),
            _ => None,
        },
        None => None,
    };
    let url = match obj.parse::<String>("url") {
        Some(Ok(u)) => Some(u),
        _ => None,
    };
    Ok(HttpRequest {
        body,
        wrapped: true,
        url,
        timestamp_ms: obj.get("timestamp").and_then(timestamp_ms),
    })
}

/// Reads the `response` member of a record: a response body, a string
/// (JSON or server-sent events), or a recorder's wrapper with
/// `status_code` and `body` / `body_raw`.
pub(crate) fn unwrap_response(raw: &RawValue) -> HttpResponse {
    let mut out = HttpResponse {
        missing: false,
        status: None,
        body: None,
        timestamp_ms: None,
    };
    let text = raw.get();
    if text == "null" {
        out.missing = true;
        return out;
    }
    if !text.starts_with('{') {
        out.body = parse_body(raw);
        return out;
    }
    let Some(obj) = compact_object(text) else {
        return out;
    };
    let wrapped = obj.get("status_code").is_some()
        || obj.get("body_raw").is_some()
        || (obj.get("body").is_some()
            && obj.get("content").is_none()
            && obj.get("choices").is_none());
    if !wrapped {
        out.body = Some(HttpBody::Json(obj));
        return out;
    }
    out.status = match obj.parse::<u64>("status_code") {
        Some(Ok(s)) => Some(s),
        _ => None,
    };
    out.timestamp_ms = obj.get("timestamp").and_then(timestamp_ms);
    out.body = obj
        .get("body")
        .filter(|b| b.get() != "null")
        .and_then(parse_body)
        .or_else(|| obj.get("body_raw").and_then(parse_body));
    out
}

/// Whether a response body is an API error.
pub(crate) fn is_error_body(body: &RawObject) -> bool {
    matches!(body.parse::<String>("type"), Some(Ok(t)) if t == "error")
        || body.get("error").is_some_and(|e| e.get() != "null")
}

#[derive(Deserialize)]
struct AnthropicUsage {
    input_tokens: Option<u64>,
    cache_creation_input_tokens: Option<u64>,
    cache_creation: Option<CacheCreation>,
    cache_read_input_tokens: Option<u64>,
    output_tokens: Option<u64>,
}

#[derive(Deserialize)]
struct CacheCreation {
    ephemeral_5m_input_tokens: Option<u64>,
    ephemeral_1h_input_tokens: Option<u64>,
}

/// Overwrites `into`'s fields with those present in an Anthropic usage
/// object; `false` when the object is malformed.
pub(crate) fn merge_anthropic_usage(into: &mut RecordedUsage, raw: &RawValue) -> bool {
    if raw.get() == "null" {
        return true;
    }
    let Ok(u) = serde_json::from_str::<AnthropicUsage>(raw.get()) else {
        return false;
    };
    let set = |slot: &mut Option<u64>, v: Option<u64>| {
        if v.is_some() {
            *slot = v;
        }
    };
    set(&mut into.input_tokens, u.input_tokens);
    set(
        &mut into.cache_creation_input_tokens,
        u.cache_creation_input_tokens,
    );
    set(&mut into.cache_read_input_tokens, u.cache_read_input_tokens);
    set(&mut into.output_tokens, u.output_tokens);
    if let Some(c) = u.cache_creation {
        set(
            &mut into.ephemeral_5m_input_tokens,
            c.ephemeral_5m_input_tokens,
        );
        set(
            &mut into.ephemeral_1h_input_tokens,
            c.ephemeral_1h_input_tokens,
        );
    }
    true
}

#[derive(Deserialize)]
struct OpenAiUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<OpenAiDetails>,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    input_tokens_details: Option<OpenAiDetails>,
}

#[derive(Deserialize)]
struct OpenAiDetails {
    cached_tokens: Option<u64>,
}

/// An OpenAI usage object (`prompt_tokens`, `completion_tokens`,
/// `prompt_tokens_details.cached_tokens`; or the Responses API's
/// `input_tokens` spelling): cached tokens are cache reads, the rest of
/// the prompt is uncached input. `None` when malformed.
pub(crate) fn openai_usage(raw: &RawValue) -> Option<RecordedUsage> {
    let u = serde_json::from_str::<OpenAiUsage>(raw.get()).ok()?;
    let prompt = u.prompt_tokens.or(u.input_tokens);
    let cached = u
        .prompt_tokens_details
        .or(u.input_tokens_details)
        .and_then(|d| d.cached_tokens);
    Some(RecordedUsage {
        input_tokens: prompt.map(|p| p.saturating_sub(cached.unwrap_or(0))),
        cache_read_input_tokens: cached,
        output_tokens: u.completion_tokens.or(u.output_tokens),
        ..RecordedUsage::default()
    })
}

/// `None` for an empty usage; drops (and reports) corrupt figures.
pub(crate) fn finish_usage(u: RecordedUsage, un: &mut Unmapped) -> Option<RecordedUsage> {
    let all = [
        u.input_tokens,
        u.cache_creation_input_tokens,
        u.ephemeral_5m_input_tokens,
        u.ephemeral_1h_input_tokens,
        u.cache_read_input_tokens,
        u.output_tokens,
    ];
    if all.iter().all(Option::is_none) {
        return None;
    }
    if all.iter().flatten().any(|&v| v > ABSURD_TOKENS) {
        un.add("usage objects with absurd token counts (dropped)", 1);
        return None;
    }
    Some(u)
}

/// What a model reply carried, for callers that find replies inside the
/// history (LangChain).
#[derive(Debug, Clone, Default)]
pub(crate) struct ReplyMeta {
    /// Its usage.
    pub usage: Option<RecordedUsage>,
    /// Its model.
    pub model: Option<String>,
}

/// One trace being built.
pub(crate) struct TraceBuilder {
    /// The provider.
    pub provider: ProviderKind,
    /// Prompt versions.
    pub prompts: Vec<Prompt>,
    /// The history.
    pub messages: Vec<Message>,
    /// Reply metadata per history message (may be shorter).
    pub meta: Vec<Option<ReplyMeta>>,
    /// Keys of the latest request's messages.
    pub keys: Vec<u64>,
    /// The calls.
    pub calls: Vec<Call>,
    /// The last call's reply, appended to the history at the end.
    pub reply: Option<Message>,
    /// The line the trace starts at.
    pub first_line: usize,
    seq: usize,
}

impl TraceBuilder {
    /// An empty trace starting at `first_line`.
    pub(crate) fn new(provider: ProviderKind, first_line: usize) -> Self {
        Self {
            provider,
            prompts: Vec::new(),
            messages: Vec::new(),
            meta: Vec::new(),
            keys: Vec::new(),
            calls: Vec::new(),
            reply: None,
            first_line,
            seq: 0,
        }
    }

    /// The index of `p`, pushed when it differs from the latest prompt.
    pub(crate) fn prompt_index(&mut self, p: Prompt) -> usize {
        if self.prompts.last() != Some(&p) {
            self.prompts.push(p);
        }
        self.prompts.len() - 1
    }

    /// Extends the history to `req.messages` (whose start equals it) and
    /// adds `call` with the request's prompt.
    pub(crate) fn add_call(&mut self, req: NewCall, mut call: Call, reply: Option<Message>) {
        let have = self.messages.len();
        self.meta.resize(have, None);
        let mut meta = req.meta.into_iter().skip(have);
        for m in req.messages.into_iter().skip(have) {
            self.messages.push(m);
            self.meta.push(meta.next().flatten());
        }
        self.keys = req.keys;
        call.prompt = self.prompt_index(req.prompt);
        self.calls.push(call);
        self.reply = reply;
    }

    /// [`TraceBuilder::add_call`] for messages shared with a cache: only
    /// those past the history are copied.
    pub(crate) fn add_shared_call(&mut self, req: SharedCall) {
        let SharedCall {
            messages,
            keys,
            prompt,
            mut call,
            reply,
        } = req;
        let have = self.messages.len();
        self.meta.resize(have, None);
        for m in messages.into_iter().skip(have) {
            self.messages.push(Arc::unwrap_or_clone(m));
            self.meta.push(None);
        }
        self.keys = keys;
        call.prompt = self.prompt_index(prompt);
        self.calls.push(call);
        self.reply = reply;
    }

    /// The finished trace: default model set, the last reply appended,
    /// tool_use / tool_result pairing repaired.
    pub(crate) fn finish(
        mut self,
        name: String,
        description: String,
        opts: &ImportOptions,
        un: &mut Unmapped,
    ) -> Trace {
        let model = self
            .calls
            .iter()
            .find_map(|c| c.model.clone())
            .or_else(|| opts.default_model.clone())
            .unwrap_or_else(|| {
                un.add(
                    "traces with no model recorded (model set to \"unknown\")",
                    1,
                );
                "unknown".to_owned()
            });
        for c in &mut self.calls {
            if c.model.as_deref() == Some(model.as_str()) {
                c.model = None;
            }
        }
        if let Some(r) = self.reply.take() {
            self.messages.push(r);
        }
        repair_tool_pairs(&mut self.messages, un);
        if self.prompts.is_empty() {
            self.prompts.push(Prompt::default());
        }
        Trace {
            name,
            description,
            provider: self.provider,
            model,
            status_quo: None,
            project: None,
            account: None,
            session: None,
            hidden_prefix_tokens: 0,
            source: None,
            prompts: self.prompts,
            messages: self.messages,
            calls: self.calls,
        }
    }
}

/// A request's messages, as a call adds them to a trace.
pub(crate) struct NewCall {
    /// The messages sent (markers removed).
    pub messages: Vec<Message>,
    /// Their keys ([`message_key`]).
    pub keys: Vec<u64>,
    /// Reply metadata per message (may be empty).
    pub meta: Vec<Option<ReplyMeta>>,
    /// The system prompt and tools.
    pub prompt: Prompt,
}

/// A call whose messages are shared with a cache of parsed messages.
pub(crate) struct SharedCall {
    /// The messages sent (markers removed).
    pub messages: Vec<Arc<Message>>,
    /// Their keys ([`message_key`]).
    pub keys: Vec<u64>,
    /// The system prompt and tools.
    pub prompt: Prompt,
    /// The call.
    pub call: Call,
    /// Its reply, when it succeeded.
    pub reply: Option<Message>,
}

/// The traces of one file, and which request extends which.
#[derive(Default)]
pub(crate) struct Conversations {
    /// Traces in order of their first request.
    pub builders: Vec<TraceBuilder>,
    seq: usize,
    /// The traces by the number of their latest request's messages and a
    /// hash of their keys ([`keys_hash`]): a request finds the traces it
    /// may extend with one lookup per prefix of its own, instead of
    /// comparing itself with every trace.
    by_keys: HashMap<(usize, u64), Vec<usize>>,
}

/// The hash of a key list, built one key at a time so that the hashes of
/// all prefixes of a list come in one pass.
fn keys_hash_step(h: u64, key: u64) -> u64 {
    (h.rotate_left(23) ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn keys_hash(keys: &[u64]) -> u64 {
    keys.iter().fold(0, |h, &k| keys_hash_step(h, k))
}

impl Conversations {
    /// Adds a request: to the trace whose latest request's messages are
    /// the longest prefix of its own (ties: the most recently extended),
    /// or to a new trace.
    pub(crate) fn add(
        &mut self,
        provider: ProviderKind,
        line: usize,
        req: NewCall,
        call: Call,
        reply: Option<Message>,
    ) {
        let i = self.extended_by(provider, line, &req.keys);
        self.reindexed(i, |b| b.add_call(req, call, reply));
    }

    /// [`Conversations::add`] for messages shared with a cache
    /// ([`TraceBuilder::add_shared_call`]).
    pub(crate) fn add_shared(&mut self, provider: ProviderKind, line: usize, req: SharedCall) {
        let i = self.extended_by(provider, line, &req.keys);
        self.reindexed(i, |b| b.add_shared_call(req));
    }

    /// The index of the trace a request with message keys `keys` extends
    /// (a new one when none), marked as the most recently extended.
    fn extended_by(&mut self, provider: ProviderKind, line: usize, keys: &[u64]) -> usize {
        self.seq += 1;
        let mut best: Option<(usize, (usize, usize))> = None;
        let mut h = 0;
        for (n, &k) in keys.iter().enumerate() {
            h = keys_hash_step(h, k);
            let len = n + 1;
            for &i in self.by_keys.get(&(len, h)).into_iter().flatten() {
                let Some(b) = self.builders.get(i) else {
                    continue;
                };
                let rank = (b.keys.len(), b.seq);
                if b.keys.len() == len
                    && keys.starts_with(&b.keys)
                    && best.is_none_or(|(_, r)| rank > r)
                {
                    best = Some((i, rank));
                }
            }
        }
        let i = match best {
            Some((i, _)) => i,
            None => {
                self.builders.push(TraceBuilder::new(provider, line));
                self.builders.len() - 1
            }
        };
        if let Some(b) = self.builders.get_mut(i) {
            b.seq = self.seq;
        }
        i
    }

    /// Runs `extend` on trace `i`, keeping the index of latest keys.
    fn reindexed(&mut self, i: usize, extend: impl FnOnce(&mut TraceBuilder)) {
        let Some(b) = self.builders.get_mut(i) else {
            return;
        };
        let before = (b.keys.len(), keys_hash(&b.keys));
        extend(b);
        let after = (b.keys.len(), keys_hash(&b.keys));
        if before == after {
            return;
        }
        if let Some(list) = self.by_keys.get_mut(&before) {
            list.retain(|&j| j != i);
            if list.is_empty() {
                self.by_keys.remove(&before);
            }
        }
        if after.0 > 0 {
            self.by_keys.entry(after).or_default().push(i);
        }
    }
}

/// Makes tool_use ids unique and every tool_result answer exactly one
/// earlier tool_use: a repeated tool_use id gets a `_N` suffix (later
/// results follow it); a result answering nothing (or answering twice)
/// becomes a text block.
pub(crate) fn repair_tool_pairs(messages: &mut [Message], un: &mut Unmapped) {
    let mut used: HashSet<Arc<str>> = HashSet::new();
    let mut current: HashMap<Arc<str>, Arc<str>> = HashMap::new();
    let mut answered: HashSet<Arc<str>> = HashSet::new();
    for m in messages.iter_mut() {
        let mut changed = false;
        let mut blocks = Vec::with_capacity(m.blocks().len());
        for b in m.blocks() {
            match b.kind() {
                BlockKind::ToolUse { id, .. } => {
                    if used.insert(id.clone()) {
                        current.insert(id.clone(), id.clone());
                        blocks.push(b.clone());
                        continue;
                    }
                    let mut n = 2usize;
                    let fresh: Arc<str> = loop {
                        let c: Arc<str> = format!("{id}_{n}").into();
                        if !used.contains(&c) {
                            break c;
                        }
                        n += 1;
                    };
                    used.insert(fresh.clone());
                    current.insert(id.clone(), fresh.clone());
                    un.add("repeated tool_use ids (renamed with a _N suffix)", 1);
                    let mut f = b.fields().clone();
                    f.set("id", raw_string(&fresh));
                    blocks.push(ContentBlock::from_object(f).unwrap_or_else(|_| b.clone()));
                    changed = true;
                }
                BlockKind::ToolResult { tool_use_id, .. } => match current.get(tool_use_id) {
                    Some(eff) if !answered.contains(eff) => {
                        answered.insert(eff.clone());
                        if eff == tool_use_id {
                            blocks.push(b.clone());
                        } else {
                            let mut f = b.fields().clone();
                            f.set("tool_use_id", raw_string(eff));
                            blocks.push(ContentBlock::from_object(f).unwrap_or_else(|_| b.clone()));
                            changed = true;
                        }
                    }
                    _ => {
                        un.add(
                            "tool results answering no earlier tool call (kept as text)",
                            1,
                        );
                        let text = b.tool_result_payload().unwrap_or("");
                        blocks.push(ContentBlock::text(text));
                        changed = true;
                    }
                },
                _ => blocks.push(b.clone()),
            }
        }
        if changed {
            *m = with_blocks(m, blocks);
        }
    }
}

/// Serializes and reloads `trace`; an error here is an importer bug,
/// reported against the record the trace started at.
pub(crate) fn check_loads(trace: &Trace, path: &Path, line: usize) -> Result<(), ImportError> {
    let json = crate::trace::to_json(trace);
    crate::trace::load_str(&json, &trace.name)
        .map(|_| ())
        .map_err(|e| ImportError::Invalid {
            path: path.to_owned(),
            line,
            column: None,
            message: format!(
                "the trace built from here does not load ({e}); please report this importer bug"
            ),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_keeps_strings_and_drops_token_whitespace() {
        let src = "{ \"a\" : [1, 2.50] ,\n \"b\": \"x  y\\\" z\" }";
        assert_eq!(compact_json(src), "{\"a\":[1,2.50],\"b\":\"x  y\\\" z\"}");
        assert!(matches!(compact_json("{\"a\":1}"), Cow::Borrowed(_)));
    }

    /// The byte-at-a-time compaction `compact_json` replaced.
    fn compact_reference(s: &str) -> String {
        let mut in_str = false;
        let mut esc = false;
        let mut out = Vec::new();
        for &b in s.as_bytes() {
            if in_str {
                if esc {
                    esc = false;
                } else if b == b'\\' {
                    esc = true;
                } else if b == b'"' {
                    in_str = false;
                }
            } else if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
                continue;
            } else if b == b'"' {
                in_str = true;
            }
            out.push(b);
        }
        String::from_utf8(out).unwrap()
    }

    proptest::proptest! {
        #[test]
        fn compact_matches_the_byte_at_a_time_reference(s in "[ \t\r\n\"\\\\a{}:,é]{0,40}") {
            proptest::prop_assert_eq!(compact_json(&s).into_owned(), compact_reference(&s));
        }
    }

    proptest::proptest! {
        /// The index of latest keys picks the trace the plain rule picks:
        /// the longest prefix among all traces, then the most recent.
        #[test]
        fn conversations_pick_what_a_scan_of_every_trace_picks(
            requests in proptest::collection::vec((0usize..8, proptest::collection::vec(0u64..3, 0..4)), 1..40),
        ) {
            let mut convs = Conversations::default();
            // The plain rule over (keys, last extended) of every trace.
            let mut plain: Vec<(Vec<u64>, usize)> = Vec::new();
            let mut sent: Vec<Vec<u64>> = Vec::new();
            for (seq, (base, more)) in requests.into_iter().enumerate() {
                // Most requests extend an earlier one.
                let mut keys = sent.get(base).cloned().unwrap_or_default();
                keys.extend(more);
                if keys.is_empty() {
                    keys.push(7);
                }
                sent.push(keys.clone());
                let want = plain
                    .iter()
                    .enumerate()
                    .filter(|(_, (k, _))| !k.is_empty() && keys.starts_with(k))
                    .max_by_key(|(_, (k, s))| (k.len(), *s))
                    .map_or(plain.len(), |(i, _)| i);
                if want == plain.len() {
                    plain.push((Vec::new(), 0));
                }
                plain[want] = (keys.clone(), seq);
                let got = convs.extended_by(ProviderKind::Anthropic, seq, &keys);
                convs.reindexed(got, |b| b.keys = keys);
                proptest::prop_assert_eq!(got, want);
            }
        }
    }

    /// Every line of every batch, as (number, text or column).
    fn batched(bytes: &[u8], target: usize) -> Vec<(usize, Result<String, usize>)> {
        let mut batches = LineBatches::new(bytes, target, None);
        let mut out = Vec::new();
        while let Some(b) = batches.next_batch().unwrap() {
            assert!(!b.lines().is_empty());
            for (n, r) in b.lines() {
                out.push((*n, r.clone().map(|r| b.text(r).unwrap().to_owned())));
            }
        }
        out
    }

    #[test]
    fn batches_hold_whole_lines_numbered_across_batches() {
        let text = b"a\n\nbb\r\nccc\n\xffd\ne";
        let want = vec![
            (1, Ok("a\n".to_owned())),
            (2, Ok("\n".to_owned())),
            (3, Ok("bb\r\n".to_owned())),
            (4, Ok("ccc\n".to_owned())),
            (5, Err(1)),
            (6, Ok("e".to_owned())),
        ];
        // One batch, a line a batch, and lines longer than the batch size.
        for target in [1, 2, 3, 5, 1 << 20] {
            assert_eq!(batched(text, target), want, "target {target}");
        }
        assert!(batched(b"", 4).is_empty());
        assert_eq!(batched(b"\n", 4), vec![(1, Ok("\n".to_owned()))]);
    }

    #[test]
    fn raw_values_exclude_surrounding_whitespace() {
        // Lines keep their leading whitespace (for columns); values
        // parsed from them must not.
        let v: &RawValue = serde_json::from_str("  [1] ").unwrap();
        assert_eq!(v.get(), "[1]");
        let (line, col) = position_of("a\n  [1]", &"a\n  [1]"[4..]);
        assert_eq!((line, col), (2, 3));
    }

    #[test]
    fn string_and_single_text_block_share_a_key() {
        let a = Message::from_json(r#"{"role":"user","content":"hi"}"#).unwrap();
        let b = Message::from_json(r#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#)
            .unwrap();
        let c = Message::from_json(r#"{"role":"assistant","content":"hi"}"#).unwrap();
        assert_eq!(message_key(&a), message_key(&b));
        assert_ne!(message_key(&a), message_key(&c));
    }

    #[test]
    fn timestamps_in_seconds_millis_and_rfc3339() {
        let raw = |s: &str| RawValue::from_string(s.to_owned()).unwrap();
        assert_eq!(timestamp_ms(&raw("1700000000.25")), Some(1_700_000_000_250));
        assert_eq!(timestamp_ms(&raw("1700000000250")), Some(1_700_000_000_250));
        assert_eq!(timestamp_ms(&raw("\"1970-01-01T00:00:01Z\"")), Some(1000));
        assert_eq!(timestamp_ms(&raw("-1")), None);
    }

    #[test]
    fn repair_renames_repeats_and_textifies_orphans() {
        let mut ms = vec![
            Message::from_json(r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]}"#).unwrap(),
            Message::from_json(r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"1"},{"type":"tool_result","tool_use_id":"zz","content":"orphan"}]}"#).unwrap(),
            Message::from_json(r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]}"#).unwrap(),
            Message::from_json(r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"2"}]}"#).unwrap(),
        ];
        let mut un = Unmapped::default();
        repair_tool_pairs(&mut ms, &mut un);
        assert_eq!(
            ms[1].to_json(),
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"1"},{"type":"text","text":"orphan"}]}"#
        );
        assert!(ms[2].to_json().contains(r#""id":"a_2""#));
        assert!(ms[3].to_json().contains(r#""tool_use_id":"a_2""#));
        assert_eq!(un.lines().len(), 2);
    }
}

/// The byte ranges of the JSON objects of a line that holds two or more
/// of them one after the other (white space between them allowed), else
/// `None`: a line that fails to parse as one value because another
/// follows it (Claude Code now and then writes a record without its
/// newline). Asked only of lines that do not parse.
pub(crate) fn joined_records(text: &str) -> Option<Vec<std::ops::Range<usize>>> {
    let mut records = Vec::new();
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<serde::de::IgnoredAny>();
    let mut start = 0;
    while let Some(value) = values.next() {
        value.ok()?;
        let end = values.byte_offset();
        let piece = &text[start..end];
        let at = start + (piece.len() - piece.trim_start().len());
        if !text[at..end].starts_with('{') {
            return None;
        }
        records.push(at..end);
        start = end;
    }
    (records.len() >= 2 && text[start..].trim().is_empty()).then_some(records)
}

//! What a path holds, decided from its content: a canonical trace file, Claude
//! Code data, a log one of the importers reads, or something else.
//!
//! The decision reads only the start of a file: the first line when it is a
//! JSON value on its own (JSON Lines), else the whole document when it is
//! small enough, else the first bytes. It looks at the keys each importer
//! reads (see their module documentation) and parses nothing further: a
//! file recognized here can still be damaged, and the importer or the
//! loader then names the place.
//!
//! Folders: a Claude config root (holding `projects/`), a `projects/`
//! folder, or a folder below one holding `*.jsonl` transcripts is Claude
//! Code data and goes whole to the Claude Code importer, which walks it;
//! a Codex home (holding `sessions/`), a `sessions/` folder or one of its
//! day folders holding a rollout is Codex data and goes whole to the
//! Codex importer.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{ImportError, InputFormat};
use tracecost_trace::TRACE_FORMAT;
use tracecost_trace::UTF8_BOM;

/// How many bytes are read to decide on a file whose first line is not a
/// JSON value on its own: enough for every top-level key of a request body
/// or a trace header, and far below any file worth loading.
const SNIFF_BYTES: u64 = 64 * 1024;

/// A whole document up to this size is parsed to decide; larger ones are
/// decided on their first bytes (a canonical trace's `format` comes first).
const WHOLE_DOC_BYTES: u64 = 8 * 1024 * 1024;

/// A first line up to this size is parsed to decide (a Claude Code line can
/// carry a large tool result).
const FIRST_LINE_BYTES: u64 = 64 * 1024 * 1024;

/// How deep Claude Code's layout goes below `projects/`:
/// `<project>/<session>/subagents/<agent>.jsonl`.
const LAYOUT_DEPTH: usize = 3;

/// What a file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A canonical trace file (`tracecost.trace/v1`).
    Trace,
    /// A file one importer reads (a Claude Code transcript is
    /// [`InputFormat::ClaudeCode`]).
    Log(InputFormat),
    /// Nothing at all, or only whitespace.
    Empty,
    /// Something tracecost does not read.
    Other,
    /// Something tracecost knows but does not read (yet), and why.
    Unread(&'static str),
}

/// What a file type that is neither a regular file nor a folder is called
/// in messages (`None` for files and folders).
pub fn special_kind(t: &std::fs::FileType) -> Option<&'static str> {
    if t.is_file() || t.is_dir() {
        return None;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("FIFO");
        }
        if t.is_socket() {
            return Some("socket");
        }
        if t.is_block_device() || t.is_char_device() {
            return Some("device");
        }
    }
    Some("special file")
}

/// The metadata of `path` (symlinks followed) when it is a regular file or
/// a folder; a FIFO, socket or device is [`ImportError::NotAFile`], never
/// opened (opening a FIFO blocks until something writes to it).
pub fn file_or_folder(path: &Path) -> Result<std::fs::Metadata, ImportError> {
    let meta = std::fs::metadata(path).map_err(|source| ImportError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    match special_kind(&meta.file_type()) {
        Some(kind) => Err(ImportError::NotAFile {
            path: path.to_path_buf(),
            kind,
        }),
        None => Ok(meta),
    }
}

/// Why the folder entry `path` is not read at all, when it is not: a FIFO,
/// socket or device (never opened), or a symlink to nothing or into a loop.
/// `None` for a file or folder, and for what cannot be told for another
/// reason (the caller reads it and reports that).
pub fn never_read(path: &Path) -> Option<String> {
    match std::fs::metadata(path) {
        Ok(meta) => special_kind(&meta.file_type()).map(|k| format!("a {k}, not a file to read")),
        Err(e) if path.is_symlink() => Some(if is_loop(&e) {
            "a symlink loop".to_owned()
        } else {
            "a dangling symlink".to_owned()
        }),
        Err(_) => None,
    }
}

fn is_loop(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        e.raw_os_error() == Some(libc::ELOOP)
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

/// Decides what the file at `path` holds. Fails when it cannot be read,
/// and for a FIFO, socket or device (see [`file_or_folder`]).
pub fn detect_file(path: &Path) -> Result<FileKind, ImportError> {
    let io = |source| ImportError::Io {
        path: path.to_path_buf(),
        source,
    };
    file_or_folder(path)?;
    let file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let mut first = Vec::new();
    BufReader::new(file)
        .take(FIRST_LINE_BYTES)
        .read_until(b'\n', &mut first)
        .map_err(io)?;
    let first = first.strip_prefix(UTF8_BOM).unwrap_or(&first);
    if let Some(kind) = decide_text(first) {
        return Ok(kind);
    }
    // A CSV export of observations, told by its header.
    if std::str::from_utf8(first).is_ok_and(crate::langfuse::is_csv_header) {
        return Ok(FileKind::Log(InputFormat::Langfuse));
    }
    // Not a value on one line: a document over several lines.
    let limit = if size <= WHOLE_DOC_BYTES {
        size
    } else {
        SNIFF_BYTES
    };
    let mut head = Vec::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(limit)
        .read_to_end(&mut head)
        .map_err(io)?;
    let head = head.strip_prefix(UTF8_BOM).unwrap_or(&head);
    if head.iter().all(u8::is_ascii_whitespace) {
        return Ok(FileKind::Empty);
    }
    Ok(decide_text(head).unwrap_or_else(|| decide_prefix(head)))
}

/// The kind of `text` when it is one JSON value (`None` when it is not).
fn decide_text(text: &[u8]) -> Option<FileKind> {
    if text.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    let mut de = serde_json::Deserializer::from_slice(text);
    let kept = std::cell::Cell::new(DECIDE_VALUES);
    let value = serde::de::DeserializeSeed::deserialize(Shallow::top(&kept), &mut de).ok()?;
    de.end().ok()?;
    Some(decide_value(&value))
}

/// How deep [`decide_value`] looks: an OTLP log record's `eventName`
/// (`{"resourceLogs": [{"scopeLogs": [{"logRecords": [{"eventName"}]}]}]}`)
/// is the deepest member it reads.
const DECIDE_DEPTH: usize = 8;

/// How many values of a document [`decide_value`] is given, in document
/// order. A whole document of one line (a trace written without line
/// breaks, up to [`FIRST_LINE_BYTES`]) was read into a `Value` of every
/// member, about 20 times its bytes (a 23 MB trace took 460 MB only to be
/// recognized); what decides is at its start (a trace's `format`, a
/// record's first members, the first elements of its lists).
const DECIDE_VALUES: usize = 100_000;

/// A JSON value read to [`DECIDE_DEPTH`], what lies deeper skipped (as
/// `null`) without a recursion limit: serde_json refuses values nested past
/// 128 levels, and a log whose first record nests that deep (in a tool's
/// input, say) is still that log. Past the first [`DECIDE_VALUES`] values
/// of the document a list ends and an object is read as an empty one (its
/// kind kept: a trace without `format` is still told by its `calls` list);
/// the rest is only checked to be JSON.
struct Shallow<'k> {
    depth: usize,
    /// How many more values are kept.
    kept: &'k std::cell::Cell<usize>,
}

impl<'k> Shallow<'k> {
    fn top(kept: &'k std::cell::Cell<usize>) -> Self {
        Self { depth: 0, kept }
    }

    fn below(&self) -> Self {
        Self {
            depth: self.depth + 1,
            kept: self.kept,
        }
    }

    /// Counts one value kept; `false` once none is left.
    fn keep(&self) -> bool {
        let left = self.kept.get();
        self.kept.set(left.saturating_sub(1));
        left > 0
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for Shallow<'_> {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.depth >= DECIDE_DEPTH {
            // serde_json skips an ignored value iteratively, at any depth.
            <serde::de::IgnoredAny as serde::Deserialize>::deserialize(d)?;
            return Ok(Value::Null);
        }
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Shallow<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    // A text is kept whole even past the bound: the texts read then are
    // members of objects opened before it (a list ends there), and a
    // trace written with sorted keys has its `format` after its `calls`.
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        // Each element counts, a number as much as a list: a long list of
        // numbers is as large as one of objects.
        while self.keep() {
            match seq.next_element_seed(self.below())? {
                Some(v) => items.push(v),
                None => return Ok(Value::Array(items)),
            }
        }
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        if !self.keep() {
            while map
                .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                .is_some()
            {}
            return Ok(Value::Object(out));
        }
        // Every member of an object kept is kept (values past the bound
        // read as empty ones of their kind): what decides is which members
        // an object has.
        while let Some(k) = map.next_key::<String>()? {
            // A member counts too (a text or a number is kept whole).
            self.keep();
            let v = map.next_value_seed(self.below())?;
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }
}

/// What one JSON value (a document, or the first line of JSON Lines) is.
fn decide_value(v: &Value) -> FileKind {
    match v {
        Value::Object(o) => decide_object(o),
        Value::Array(items) => match items.first() {
            // Not a trace file's shape, but meant as one: the loader says so.
            Some(Value::Object(m)) if is_trace(m) => FileKind::Trace,
            // A list of lists: LangChain, one list per model call.
            Some(Value::Array(inner)) => match inner.first() {
                Some(Value::Object(m)) if is_langchain_message(m) => {
                    FileKind::Log(InputFormat::Langchain)
                }
                _ => FileKind::Other,
            },
            Some(Value::Object(m)) if is_langchain_message(m) => {
                FileKind::Log(InputFormat::Langchain)
            }
            // A bare list of role messages, or a list of request bodies or
            // request/response records: what the OpenAI importer reads.
            Some(Value::Object(m)) if m.contains_key("role") => FileKind::Log(InputFormat::Openai),
            Some(Value::Object(m)) if m.contains_key("messages") => {
                FileKind::Log(InputFormat::Openai)
            }
            Some(Value::Object(m)) if is_responses_body(m) => {
                FileKind::Log(InputFormat::OpenaiResponses)
            }
            Some(Value::Object(m)) if is_gemini_body(m) => FileKind::Log(InputFormat::Gemini),
            Some(Value::Object(m)) if is_converse_body(m) => FileKind::Log(InputFormat::Bedrock),
            Some(Value::Object(m)) => match m.get("request").and_then(Value::as_object) {
                Some(request) => FileKind::Log(exchange_format(request, m.get("response"))),
                None => FileKind::Other,
            },
            _ => FileKind::Other,
        },
        _ => FileKind::Other,
    }
}

/// Why an OpenTelemetry logs export is not read.
const OTEL_LOGS: &str = "OpenTelemetry log records (LogsData) holding no GenAI event (gen_ai.client.inference.operation.details, or the per-message gen_ai.user.message, gen_ai.choice, …)";

fn decide_object(o: &Map<String, Value>) -> FileKind {
    if is_trace(o) {
        return FileKind::Trace;
    }
    // An OTLP JSON line: the Collector's file exporter's TracesData, or
    // LogsData holding whole model calls (not only per-message events).
    if o.contains_key("resourceSpans") {
        return FileKind::Log(InputFormat::Otel);
    }
    if o.contains_key("resourceLogs") {
        return match crate::otel::logs_hold_genai(&Value::Object(o.clone())) {
            true => FileKind::Log(InputFormat::Otel),
            false => FileKind::Unread(OTEL_LOGS),
        };
    }
    if crate::langfuse::is_langfuse(o) {
        return FileKind::Log(InputFormat::Langfuse);
    }
    if crate::openai_agents::is_agents_export(o) {
        return FileKind::Log(InputFormat::OpenaiAgents);
    }
    if crate::langsmith::is_langsmith(o) {
        return FileKind::Log(InputFormat::Langsmith);
    }
    if is_claude_code_line(o) {
        return FileKind::Log(InputFormat::ClaudeCode);
    }
    if is_codex_line(o) {
        return FileKind::Log(InputFormat::Codex);
    }
    if let Some(request) = o.get("request").and_then(Value::as_object) {
        return FileKind::Log(exchange_format(request, o.get("response")));
    }
    if is_gemini_body(o) {
        return FileKind::Log(InputFormat::Gemini);
    }
    if is_converse_body(o) {
        return FileKind::Log(InputFormat::Bedrock);
    }
    match o.get("messages").and_then(Value::as_array) {
        // LangGraph state.
        Some(ms)
            if ms
                .first()
                .and_then(Value::as_object)
                .is_some_and(is_langchain_message) =>
        {
            FileKind::Log(InputFormat::Langchain)
        }
        // A request body on its own: the Anthropic importer reads only
        // request/response records, the OpenAI one reads bodies.
        Some(_) if o.contains_key("model") => FileKind::Log(InputFormat::Openai),
        _ if is_responses_body(o) => FileKind::Log(InputFormat::OpenaiResponses),
        _ => FileKind::Other,
    }
}

/// A Codex rollout line: the `{"timestamp", "type", "payload"}` envelope
/// with one of the line types Codex writes.
fn is_codex_line(o: &Map<String, Value>) -> bool {
    o.contains_key("payload")
        && o.get("type").and_then(Value::as_str).is_some_and(|t| {
            matches!(
                t,
                "session_meta" | "response_item" | "event_msg" | "turn_context" | "compacted"
            )
        })
}

/// A Gemini `generateContent` request body: `contents`, a list of
/// `{"role"?, "parts": […]}`.
fn is_gemini_body(o: &Map<String, Value>) -> bool {
    o.get("contents")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.first()
                .and_then(Value::as_object)
                .is_some_and(|c| c.get("parts").is_some_and(Value::is_array))
        })
}

/// A Bedrock Converse request body: a `modelId` or `toolConfig`, or
/// messages whose content blocks carry no `type` (Converse's blocks are
/// `{"text": …}`, `{"toolUse": …}`, …).
fn is_converse_body(o: &Map<String, Value>) -> bool {
    let Some(ms) = o.get("messages").and_then(Value::as_array) else {
        return false;
    };
    let untyped = ms
        .first()
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(Value::as_object)
        .is_some_and(|b| !b.contains_key("type"));
    o.contains_key("modelId") || o.contains_key("toolConfig") || untyped
}

/// A Responses API request body: `input` (a string or a list of items)
/// with a `model`, and no Chat Completions `messages`.
fn is_responses_body(o: &Map<String, Value>) -> bool {
    !o.contains_key("messages")
        && o.contains_key("model")
        && o.get("input")
            .is_some_and(|i| i.is_string() || i.is_array())
}

/// A canonical trace file's object: `format` names a trace format (any
/// version, so that the loader can say which it reads) or is not a string;
/// or, with no `format`, it has a trace's `calls` or a file's `traces`
/// (the loader then says the member is missing).
fn is_trace(o: &Map<String, Value>) -> bool {
    match o.get("format") {
        Some(Value::String(f)) => f.starts_with(trace_format_family()),
        Some(_) => true,
        None => ["calls", "traces"]
            .iter()
            .any(|k| o.get(*k).is_some_and(Value::is_array)),
    }
}

/// `tracecost.trace/` — the trace format without its version.
fn trace_format_family() -> &'static str {
    TRACE_FORMAT
        .rsplit_once('/')
        .map_or(TRACE_FORMAT, |(family, _)| family)
}

/// A Claude Code transcript line: the members Claude Code writes on every
/// kind of line (messages, summaries, file-history snapshots, queue and
/// permission records).
fn is_claude_code_line(o: &Map<String, Value>) -> bool {
    ["sessionId", "parentUuid", "leafUuid", "isSidechain"]
        .iter()
        .any(|k| o.contains_key(*k))
        || o.get("type").and_then(Value::as_str) == Some("file-history-snapshot")
}

/// `messages_to_dict` output: `{"type": "human"|…, "data": {…}}`.
fn is_langchain_message(m: &Map<String, Value>) -> bool {
    m.get("data").is_some_and(Value::is_object)
        && m.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| matches!(t, "human" | "ai" | "tool" | "system" | "chat" | "function"))
}

/// Which API a request/response record talks to: the URL when recorded
/// (claude-trace), else the shape of the response, else of the request.
fn exchange_format(request: &Map<String, Value>, response: Option<&Value>) -> InputFormat {
    if let Some(url) = request.get("url").and_then(Value::as_str) {
        if url.contains("/chat/completions") {
            return InputFormat::Openai;
        }
        if url.contains("/v1/responses") {
            return InputFormat::OpenaiResponses;
        }
        if url.contains("/v1/messages") {
            return InputFormat::Anthropic;
        }
        if url.contains(":generateContent") || url.contains(":streamGenerateContent") {
            return InputFormat::Gemini;
        }
        if url.contains("/converse") {
            return InputFormat::Bedrock;
        }
    }
    let body = |v: &Value| -> Option<Map<String, Value>> {
        let o = v.as_object()?;
        match o.get("body") {
            Some(Value::Object(b)) => Some(b.clone()),
            _ => Some(o.clone()),
        }
    };
    if let Some(resp) = response.and_then(body) {
        if resp.contains_key("candidates") || resp.contains_key("usageMetadata") {
            return InputFormat::Gemini;
        }
        if resp
            .get("output")
            .is_some_and(|o| o.get("message").is_some())
        {
            return InputFormat::Bedrock;
        }
        if resp.get("object").is_some_and(|o| o == "response")
            || resp.get("output").is_some_and(Value::is_array)
        {
            return InputFormat::OpenaiResponses;
        }
        if resp.contains_key("choices")
            || resp.get("object").is_some_and(|o| o == "chat.completion")
        {
            return InputFormat::Openai;
        }
        if resp.get("type").is_some_and(|t| t == "message") || resp.contains_key("stop_reason") {
            return InputFormat::Anthropic;
        }
    }
    let req = body(&Value::Object(request.clone())).unwrap_or_default();
    if is_gemini_body(&req) {
        return InputFormat::Gemini;
    }
    if is_converse_body(&req) {
        return InputFormat::Bedrock;
    }
    if !req.contains_key("messages") && req.contains_key("input") {
        return InputFormat::OpenaiResponses;
    }
    let openai_role = |m: &Value| {
        m.get("role")
            .and_then(Value::as_str)
            .is_some_and(|r| matches!(r, "system" | "developer" | "tool" | "function"))
            || m.get("tool_calls").is_some()
    };
    let openai = req
        .get("messages")
        .and_then(Value::as_array)
        .is_some_and(|ms| ms.iter().any(openai_role));
    if openai {
        InputFormat::Openai
    } else {
        InputFormat::Anthropic
    }
}

/// Decides on the first bytes of a document too large (or too damaged) to
/// parse: a canonical trace names its format among its first members; a
/// document opening with a request body's members is a request.
fn decide_prefix(head: &[u8]) -> FileKind {
    let text = String::from_utf8_lossy(head);
    let start = text.trim_start();
    if !(start.starts_with('{') || start.starts_with('[')) {
        return FileKind::Other;
    }
    let squeezed: String = start.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if squeezed.contains(&format!("\"format\":\"{}", trace_format_family())) {
        return FileKind::Trace;
    }
    FileKind::Other
}

/// Whether `dir` is Claude Code data: a config root (holding `projects/`),
/// a `projects/` folder, or a folder below one (a project, a session's
/// folder, its `subagents/`), holding a transcript.
pub fn is_claude_code_folder(dir: &Path) -> bool {
    if dir.join("projects").is_dir() {
        return true;
    }
    let resolved = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let parts: Vec<_> = resolved.components().collect();
    // Only the layout's own depth below `projects/` counts, so that a
    // repository that happens to sit under a folder named `projects` is
    // not searched for transcripts.
    let below_projects = parts
        .iter()
        .rposition(|c| c.as_os_str() == "projects")
        .is_some_and(|i| parts.len() - 1 - i <= LAYOUT_DEPTH);
    below_projects && first_transcript(dir).is_some()
}

/// Whether `dir` is Codex data: a Codex home (holding `sessions/`), or a
/// folder at most [`CODEX_LAYOUT_DEPTH`] below a `sessions/` or
/// `archived_sessions/` folder, holding a rollout
/// (`rollout-*.jsonl` that reads as one).
pub fn is_codex_folder(dir: &Path) -> bool {
    let root = dir.join("sessions");
    if root.is_dir() {
        return first_rollout(&root).is_some();
    }
    let resolved = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let parts: Vec<_> = resolved.components().collect();
    // Only Codex's own layout counts, so that a repository that holds a
    // rollout among its test fixtures is not taken for a Codex home.
    let below_sessions = parts
        .iter()
        .rposition(|c| c.as_os_str() == "sessions" || c.as_os_str() == "archived_sessions")
        .is_some_and(|i| parts.len() - 1 - i <= CODEX_LAYOUT_DEPTH);
    below_sessions && first_rollout(dir).is_some()
}

/// How deep Codex's layout goes below `sessions/`: `YYYY/MM/DD/`.
const CODEX_LAYOUT_DEPTH: usize = 3;

/// The first rollout below `dir` (sorted walk, to Codex's depth).
fn first_rollout(dir: &Path) -> Option<PathBuf> {
    first_log(dir, CODEX_LAYOUT_DEPTH, |p| {
        super::codex::is_rollout_name(p)
            && matches!(detect_file(p), Ok(FileKind::Log(InputFormat::Codex)))
    })
}

/// The first `*.jsonl` file below `dir` (sorted walk) that reads as a
/// Claude Code transcript.
fn first_transcript(dir: &Path) -> Option<PathBuf> {
    first_log(dir, LAYOUT_DEPTH, |p| {
        p.extension().is_some_and(|e| e == "jsonl")
            && matches!(detect_file(p), Ok(FileKind::Log(InputFormat::ClaudeCode)))
    })
}

/// The first file below `dir`, at most `layout_depth` folders down, that
/// `is_log` accepts: in name order, each folder's entries before the next
/// entry of its parent; symlinked folders are not followed (no loops),
/// symlinked files are looked at, and what cannot be read is passed over
/// (this only tells a folder's kind; reading it reports what it skips).
fn first_log(dir: &Path, layout_depth: usize, is_log: impl Fn(&Path) -> bool) -> Option<PathBuf> {
    walkdir::WalkDir::new(dir)
        .min_depth(1)
        .max_depth(layout_depth + 1)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .map(walkdir::DirEntry::into_path)
        .find(|p| p.is_file() && is_log(p))
}

/// The damaged lines of a JSON Lines file, each an
/// [`ImportError::Invalid`] naming it: lines that are not UTF-8 or not JSON
/// although the line after them was begun. The last line, when it has no
/// line end, is not damaged: the file is being written (Claude Code appends
/// to a session's transcript while it runs).
pub fn damaged_lines(path: &Path) -> Result<Vec<ImportError>, ImportError> {
    let io = |source| ImportError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut reader = BufReader::new(std::fs::File::open(path).map_err(io)?);
    let mut buf = Vec::new();
    let mut number = 0usize;
    let mut damaged = Vec::new();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io)? == 0 {
            return Ok(damaged);
        }
        number += 1;
        let Some(line) = buf.strip_suffix(b"\n") else {
            return Ok(damaged);
        };
        let line = if number == 1 {
            line.strip_prefix(UTF8_BOM).unwrap_or(line)
        } else {
            line
        };
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let invalid = |column: usize, message: String| ImportError::Invalid {
            path: path.to_path_buf(),
            line: number,
            column: Some(column),
            message,
        };
        match std::str::from_utf8(line) {
            Err(e) => damaged.push(invalid(e.valid_up_to() + 1, "not UTF-8".to_owned())),
            Ok(text) => {
                if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text)
                    && super::common::joined_records(text).is_none()
                {
                    damaged.push(invalid(
                        e.column().max(1),
                        format!("not JSON: {}", super::common::strip_position(&e)),
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind_of(name: &str, text: &str) -> FileKind {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        detect_file(&path).unwrap()
    }

    /// The values a decided document holds, itself included.
    fn values_in(v: &Value) -> usize {
        1 + match v {
            Value::Array(items) => items.iter().map(values_in).sum(),
            Value::Object(m) => m.values().map(values_in).sum(),
            _ => 0,
        }
    }

    /// A document of one line is decided on a bounded part of it: a long
    /// trace written without line breaks is not read whole into a
    /// `Value`, and one without `format` is still told by its `calls`
    /// list, which comes after the bound.
    #[test]
    fn a_long_document_is_decided_on_its_first_values() {
        let messages: Vec<String> = (0..60_000)
            .map(|i| format!(r#"{{"role":"user","content":[{{"type":"text","text":"m{i}"}}]}}"#))
            .collect();
        let doc = format!(
            r#"{{"name":"a","model":"m","messages":[{}],"calls":[{{"messages":1}}]}}"#,
            messages.join(",")
        );
        let kept = std::cell::Cell::new(DECIDE_VALUES);
        let mut de = serde_json::Deserializer::from_str(&doc);
        let v = serde::de::DeserializeSeed::deserialize(Shallow::top(&kept), &mut de).unwrap();
        assert!(
            values_in(&v) <= DECIDE_VALUES + 16,
            "{} values kept",
            values_in(&v)
        );
        assert!(v.get("calls").is_some_and(Value::is_array));
        assert_eq!(kind_of("long.json", &doc), FileKind::Trace);
        // Numbers count as much as objects.
        let numbers = format!("[{}]", vec!["1"; 300_000].join(","));
        let kept = std::cell::Cell::new(DECIDE_VALUES);
        let mut de = serde_json::Deserializer::from_str(&numbers);
        let v = serde::de::DeserializeSeed::deserialize(Shallow::top(&kept), &mut de).unwrap();
        assert!(values_in(&v) <= DECIDE_VALUES + 1);
        // Sorted keys put a trace's `format` after its `calls`, past the
        // bound: still a trace.
        let calls: Vec<String> = (0..60_000)
            .map(|i| format!(r#"{{"messages":{i}}}"#))
            .collect();
        let sorted = format!(
            r#"{{"calls":[{}],"format":"tracecost.trace/v1","messages":[],"model":"m","name":"a"}}"#,
            calls.join(",")
        );
        assert_eq!(kind_of("sorted.json", &sorted), FileKind::Trace);
        // What is past the bound is still checked to be JSON.
        assert_eq!(
            decide_text(format!("{}]", &doc[..doc.len() - 1]).as_bytes()),
            None
        );
    }

    #[test]
    fn canonical_traces_are_recognized_by_their_format_member() {
        let t =
            r#"{"format":"tracecost.trace/v1","name":"a","model":"m","messages":[],"calls":[]}"#;
        assert_eq!(kind_of("a.json", t), FileKind::Trace);
        // Spread over lines, as the writer lays it out.
        let t = "{\"format\": \"tracecost.trace/v1\",\n\"traces\": []}\n";
        assert_eq!(kind_of("b.txt", t), FileKind::Trace);
        // Damaged after its header: still a trace (the loader names the place).
        let t = "{\"format\":\"tracecost.trace/v1\",\n\"name\":\"bad\",\n\"messages\":[\n{\"role\": \"us";
        assert_eq!(kind_of("c.json", t), FileKind::Trace);
        // Another version, a bad `format`, none at all, or a list: still
        // ours, so that the loader can say what is wrong.
        for t in [
            r#"{"format":"tracecost.trace/v2"}"#,
            r#"{"format":1,"name":"a"}"#,
            r#"{"name":"a","model":"m","messages":[{"role":"user","content":"x"}],"calls":[]}"#,
            r#"[{"format":"tracecost.trace/v1","messages":[]}]"#,
        ] {
            assert_eq!(kind_of("d.json", t), FileKind::Trace, "{t}");
        }
        // A `format` of something else is not a trace.
        assert_eq!(
            kind_of("e.json", r#"{"format":"markdown"}"#),
            FileKind::Other
        );
    }

    #[test]
    fn a_large_trace_is_recognized_from_its_first_bytes() {
        let big = "x".repeat((WHOLE_DOC_BYTES + 10) as usize);
        let t = format!("{{\n  \"format\": \"tracecost.trace/v1\",\n  \"name\": \"{big}\"\n}}\n");
        assert_eq!(kind_of("big.json", &t), FileKind::Trace);
    }

    #[test]
    fn claude_code_transcripts_are_recognized_by_their_line_members() {
        let user = r#"{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","sessionId":"s","timestamp":"2025-01-01T00:00:00Z"}"#;
        assert_eq!(
            kind_of("s.jsonl", &format!("{user}\n{user}\n")),
            FileKind::Log(InputFormat::ClaudeCode)
        );
        let summary = r#"{"type":"summary","summary":"Fix","leafUuid":"u9"}"#;
        assert_eq!(
            kind_of("t.jsonl", summary),
            FileKind::Log(InputFormat::ClaudeCode)
        );
        let snapshot = r#"{"type":"file-history-snapshot","messageId":"m","snapshot":{}}"#;
        assert_eq!(
            kind_of("u.jsonl", snapshot),
            FileKind::Log(InputFormat::ClaudeCode)
        );
    }

    #[test]
    fn anthropic_and_openai_exchanges_are_told_apart() {
        let anthropic = r#"{"request":{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]},"response":{"type":"message","role":"assistant","content":[]}}"#;
        assert_eq!(
            kind_of("a.jsonl", anthropic),
            FileKind::Log(InputFormat::Anthropic)
        );
        let claude_trace = r#"{"request":{"url":"https://api.anthropic.com/v1/messages?beta=true","body":{"messages":[]}},"response":{"body_raw":"event: message_start"}}"#;
        assert_eq!(
            kind_of("b.jsonl", claude_trace),
            FileKind::Log(InputFormat::Anthropic)
        );
        let openai = r#"{"request":{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]},"response":{"choices":[]}}"#;
        assert_eq!(
            kind_of("c.jsonl", openai),
            FileKind::Log(InputFormat::Openai)
        );
        // No response: the request's system role says OpenAI.
        let openai =
            r#"{"request":{"model":"gpt-4o","messages":[{"role":"system","content":"x"}]}}"#;
        assert_eq!(
            kind_of("d.jsonl", openai),
            FileKind::Log(InputFormat::Openai)
        );
        let body = "{\n  \"model\": \"gpt-4o\",\n  \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]\n}\n";
        assert_eq!(kind_of("e.json", body), FileKind::Log(InputFormat::Openai));
        let list = r#"[{"role":"user","content":"2+2?"},{"role":"assistant","content":"4"}]"#;
        assert_eq!(kind_of("f.json", list), FileKind::Log(InputFormat::Openai));
    }

    #[test]
    fn langchain_lists_and_states_are_recognized() {
        let m = r#"{"type":"human","data":{"content":"hi","type":"human"}}"#;
        assert_eq!(
            kind_of("a.json", &format!("[\n  {m}\n]\n")),
            FileKind::Log(InputFormat::Langchain)
        );
        assert_eq!(
            kind_of("b.json", &format!("[[{m}],[{m}]]")),
            FileKind::Log(InputFormat::Langchain)
        );
        assert_eq!(
            kind_of("c.jsonl", &format!("[{m}]\n[{m}]\n")),
            FileKind::Log(InputFormat::Langchain)
        );
        assert_eq!(
            kind_of("d.json", &format!("{{\"messages\": [{m}]}}")),
            FileKind::Log(InputFormat::Langchain)
        );
    }

    #[test]
    fn other_files_are_not_ours_whatever_their_extension() {
        assert_eq!(
            kind_of("README.md", "# Notes\n\nSome text.\n"),
            FileKind::Other
        );
        assert_eq!(
            kind_of(
                "settings.json",
                r#"{"permissions":{"allow":[]},"model":"opus"}"#
            ),
            FileKind::Other
        );
        assert_eq!(kind_of("list.json", "[1, 2, 3]"), FileKind::Other);
        assert_eq!(kind_of("trace.jsonl", "not json at all\n"), FileKind::Other);
        assert_eq!(kind_of("empty.json", ""), FileKind::Empty);
        assert_eq!(kind_of("blank.jsonl", " \n\n"), FileKind::Empty);
    }

    #[test]
    fn the_bundled_importer_fixtures_are_recognized() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/import");
        for (file, want) in [
            (
                "anthropic_plain.jsonl",
                FileKind::Log(InputFormat::Anthropic),
            ),
            ("claude_trace.jsonl", FileKind::Log(InputFormat::Anthropic)),
            ("lc_final.json", FileKind::Log(InputFormat::Langchain)),
            ("lc_per_call.json", FileKind::Log(InputFormat::Langchain)),
            ("lc_states.jsonl", FileKind::Log(InputFormat::Langchain)),
            ("oa_list.json", FileKind::Log(InputFormat::Openai)),
            ("oa_pairs.jsonl", FileKind::Log(InputFormat::Openai)),
            ("oa_request.json", FileKind::Log(InputFormat::Openai)),
        ] {
            assert_eq!(detect_file(&dir.join(file)).unwrap(), want, "{file}");
        }
        let trace =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/traces/small.json");
        assert_eq!(detect_file(&trace).unwrap(), FileKind::Trace);
    }

    #[test]
    fn claude_code_folders_are_roots_projects_and_folders_below() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude-code");
        assert!(is_claude_code_folder(&root));
        assert!(is_claude_code_folder(&root.join("projects")));
        assert!(is_claude_code_folder(&root.join("projects/-home-dev-demo")));
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/import");
        assert!(!is_claude_code_folder(&fixtures));
        // Below `projects/` but holding no transcript.
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("projects/x");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("notes.jsonl"), "{\"a\":1}\n").unwrap();
        assert!(!is_claude_code_folder(&p));
        // A transcript deeper than the layout goes: not a Claude Code folder.
        let deep = tmp.path().join("projects/a/b/c/d");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join("s.jsonl"), "{\"sessionId\":\"s\"}\n").unwrap();
        assert!(is_claude_code_folder(&tmp.path().join("projects/a/b/c")));
        assert!(!is_claude_code_folder(&deep));
    }

    #[test]
    fn detection_does_not_depend_on_nesting_depth() {
        let deep = format!("{}1{}", "[".repeat(500), "]".repeat(500));
        let record = format!(
            r#"{{"request":{{"model":"m","messages":[{{"role":"user","content":"hi"}}],"metadata":{deep}}},"response":{{"type":"message","content":[]}}}}"#
        );
        // One line, and JSON Lines (where the whole file is no one value).
        assert_eq!(
            kind_of("a.jsonl", &record),
            FileKind::Log(InputFormat::Anthropic)
        );
        assert_eq!(
            kind_of("b.jsonl", &format!("{record}\n{record}\n")),
            FileKind::Log(InputFormat::Anthropic)
        );
        let t = format!(r#"{{"format":"tracecost.trace/v1","name":{deep}}}"#);
        assert_eq!(kind_of("c.json", &t), FileKind::Trace);
    }

    #[test]
    fn a_fifo_is_refused_without_being_opened() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pipe.jsonl");
        let c = std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        // Opening it would block: this returns only if it is not opened.
        let err = detect_file(&p).unwrap_err();
        assert!(
            err.to_string().ends_with(
                "pipe.jsonl: is a FIFO, expected a trace file, a log or a Claude Code folder"
            ),
            "{err}"
        );
        assert_eq!(
            never_read(&p).as_deref(),
            Some("a FIFO, not a file to read")
        );
    }

    #[test]
    fn an_unreadable_file_is_an_io_error() {
        let err = detect_file(Path::new("/no/such/file.json")).unwrap_err();
        assert!(matches!(err, ImportError::Io { .. }), "{err}");
    }

    #[test]
    fn a_damaged_line_is_named_but_an_unfinished_last_line_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let ok = r#"{"type":"user","sessionId":"s"}"#;
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, format!("{ok}\n{ok}\n{{\"type\":\"us")).unwrap();
        assert!(damaged_lines(&path).unwrap().is_empty());
        std::fs::write(&path, format!("{ok}\n\n{{\"type\": tru\n{ok}\n")).unwrap();
        let mut found = damaged_lines(&path).unwrap();
        assert_eq!(found.len(), 1);
        let err = found.remove(0);
        assert!(matches!(err, ImportError::Invalid { line: 3, .. }), "{err}");
        assert!(err.to_string().contains("s.jsonl:3:"), "{err}");
    }
}

//! The `recall_tool_result` tool: its definition, its argument parser and
//! its executor.
//!
//! A compacted tool result leaves a stub on the wire (see
//! [`render_stub`]); the model calls `recall_tool_result` to read the
//! payload back, whole or in part. Every answer is a string the model can
//! read: nothing here panics or returns an error into the tool path, and
//! every size is counted in Unicode scalar values (`char`s), never bytes, so
//! every offset is safe on multi-byte text.
//!
//! # Arguments
//!
//! * `mem_id` (string, required).
//! * `format`: `"full"` or `"summary"`.
//! * one *selector*: `query`, `offset`/`max_chars`, or `json_path`.
//!
//! # What each request returns
//!
//! * No selector: `format="summary"` gives the stub again
//!   ([`render_stub`]); `format="full"` or no format gives the payload
//!   byte-exact.
//! * `query`: a case-sensitive substring search. Matches are found left to
//!   right and do not overlap (the semantics of [`str::matches`]); the header
//!   gives their total. The first [`MAX_SHOWN_MATCHES`] matches starting at
//!   or after char `offset` (default 0) are shown, each inside a window of
//!   `max_chars` chars of context on each side (default
//!   [`DEFAULT_CONTEXT_CHARS`], capped at [`MAX_CONTEXT_CHARS`]). Windows
//!   that overlap or touch are merged; each is labelled with its char range
//!   and the char offsets of its matches. When more matches remain, the
//!   header names the `offset` that shows the next ones.
//! * `offset`/`max_chars` without `query` or `json_path`: chars
//!   `offset..offset+max_chars` of the payload, clamped to its end. `offset`
//!   defaults to 0, `max_chars` to [`DEFAULT_RANGE_CHARS`] and is capped at
//!   [`MAX_RANGE_CHARS`]. A header line `[chars A..B of N]` (plus
//!   `; next: offset=B` when text remains) precedes the text. An `offset` at
//!   or past the end is answered with an explanation.
//! * `json_path`: a dotted path into a JSON payload (`products.3.stats`);
//!   `products[3]`, a leading `$.` and an empty path (the whole document) are
//!   accepted too. On an object a segment is a key; on an array it must be an
//!   index. Keys containing `.` cannot be addressed (use `query`). The value
//!   comes back as compact JSON, object keys in document order. A value over
//!   [`DEFAULT_JSON_CHARS`] chars, or any request that also gives
//!   `offset`/`max_chars`, is paged exactly like a range over the value's
//!   JSON text, with a `[json_path "…": chars A..B of N]` header.
//!
//! # Contradictions and argument rules
//!
//! These are rejected with `[recall_tool_result: invalid arguments: …]`, by
//! [`answer`] and by [`parse_tool_input`] alike:
//!
//! * `format="summary"` together with any selector argument;
//! * `query` together with `json_path`;
//! * `max_chars` = 0, an empty `query`, a malformed `json_path`
//!   (`a..b`, `.a`, `a.`, `a[0]b`).
//!
//! `format="full"` with a selector is not a contradiction: the selector
//! applies ("full" means the original text rather than the stub).
//!
//! [`parse_tool_input`] additionally rejects input that is not a JSON
//! object, a missing, empty or non-string `mem_id`, an argument of the wrong
//! JSON type, a negative or fractional number, a `format` other than
//! `"summary"`/`"full"`, and *unknown keys*: a misspelt selector
//! (`jsonpath`) must not silently fetch the whole payload, which is what the
//! model would then be billed for. A `null` value counts as absent.

use serde_json::Value;

use super::handle::{Handle, one_line};
use super::json::push_json_string;
use super::ledger::ToolResultLedger;
use super::message::ToolDefinition;
use super::stub::render_stub;

/// The tool's name, as the model calls it.
pub const RECALL_TOOL_NAME: &str = "recall_tool_result";

/// The tool definition sent on the wire. A fixed, compact string: its bytes
/// are part of the cached prompt prefix and its tokens are billed on every
/// call, so it never varies and carries no whitespace between tokens.
pub const RECALL_TOOL_JSON: &str = r#"{"name":"recall_tool_result","description":"Reads back a tool result that was compacted into a stub (the stub shows its mem_id, size and shape). mem_id alone returns the whole original text; format=summary returns the stub. To save tokens, read only part of it with ONE selector: query (case-sensitive text; gives the match count and shows up to 20 non-overlapping matches with context, starting at char offset), offset/max_chars (a char range; max_chars defaults to 4000, at most 50000), or json_path (one value of a JSON result, e.g. products.3.stats.current; offset/max_chars page through a long value). A slice starts with a [...] header giving its char range and the next offset. format=summary takes no selector; query and json_path exclude each other; unknown arguments are rejected.","input_schema":{"type":"object","properties":{"mem_id":{"type":"string","description":"mem_id from the stub"},"format":{"type":"string","enum":["summary","full"],"description":"full (default without a selector): the original text; summary: the stub"},"query":{"type":"string","description":"case-sensitive text to find"},"offset":{"type":"integer","minimum":0,"description":"start, in chars; with query, the first char where matches are shown"},"max_chars":{"type":"integer","minimum":1,"description":"chars to return; with query, context chars on each side (default 200, at most 2000)"},"json_path":{"type":"string","description":"dotted path, array indices as numbers, e.g. products.3.stats.current"}},"required":["mem_id"],"additionalProperties":false}}"#;

/// `max_chars` of a range when only `offset` is given.
pub const DEFAULT_RANGE_CHARS: usize = 4_000;
/// Most chars one range (or one page of a JSON value) returns.
pub const MAX_RANGE_CHARS: usize = 50_000;
/// Context chars on each side of a query match when `max_chars` is absent.
pub const DEFAULT_CONTEXT_CHARS: usize = 200;
/// Most context chars on each side of a query match.
pub const MAX_CONTEXT_CHARS: usize = 2_000;
/// Most query matches shown in one answer.
pub const MAX_SHOWN_MATCHES: usize = 20;
/// A JSON value longer than this (in chars) is paged rather than returned
/// whole, unless `max_chars` asks for more.
pub const DEFAULT_JSON_CHARS: usize = 20_000;
/// Most object keys named when a `json_path` segment is missing.
const LISTED_KEYS: usize = 20;
/// Longest echo of an argument (query, path, key) inside a message, in chars.
const ECHO_CHARS: usize = 80;
/// The arguments `parse_tool_input` accepts.
const ARGUMENTS: [&str; 6] = [
    "mem_id",
    "format",
    "query",
    "offset",
    "max_chars",
    "json_path",
];

/// What the model asked for when it gives no selector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecallFormat {
    /// The stub, as rendered by [`render_stub`].
    Summary,
    /// The payload, byte-exact (or, with a selector, a slice of it).
    Full,
}

/// One recall request, already parsed. See the module docs for how the
/// fields combine.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecallRequest {
    /// `format`; absent means full.
    pub format: Option<RecallFormat>,
    /// `query`: case-sensitive substring to search for.
    pub query: Option<String>,
    /// `offset`, in chars: start of a range, or the first char where query
    /// matches are shown.
    pub offset: Option<u64>,
    /// `max_chars`: length of a range or page, or context chars on each side
    /// of a query match.
    pub max_chars: Option<u64>,
    /// `json_path`: dotted path into a JSON payload.
    pub json_path: Option<String>,
}

impl RecallRequest {
    /// `format="full"`: the whole payload, byte-exact.
    pub fn full() -> Self {
        Self {
            format: Some(RecallFormat::Full),
            ..Self::default()
        }
    }

    /// `format="summary"`: the stub again.
    pub fn summary() -> Self {
        Self {
            format: Some(RecallFormat::Summary),
            ..Self::default()
        }
    }
}

/// The tool definition to offer the model (see [`RECALL_TOOL_JSON`]).
pub fn recall_tool_definition() -> ToolDefinition {
    // A compile-time constant that a unit test parses, so this cannot fail at
    // run time; nothing the model or a payload sends reaches it.
    ToolDefinition::from_json(RECALL_TOOL_JSON)
        .expect("RECALL_TOOL_JSON is a valid tool definition")
}

/// Parses the model's tool input into `(mem_id, request)`.
///
/// The input must be a JSON object with a non-empty string `mem_id` and only
/// the documented arguments; `null` counts as absent. Numbers must be
/// non-negative integers that fit in a `u64`. The request must also obey the
/// combination rules of the module docs. Every problem is an `Err` with a
/// sentence the model can act on.
pub fn parse_tool_input(input_json: &str) -> Result<(String, RecallRequest), String> {
    let value: Value =
        serde_json::from_str(input_json).map_err(|e| format!("the input is not JSON ({e})"))?;
    let Value::Object(map) = value else {
        return Err(format!(
            "the input must be a JSON object, got {}",
            kind_with_article(&value)
        ));
    };
    if let Some(key) = map.keys().find(|k| !ARGUMENTS.contains(&k.as_str())) {
        return Err(format!(
            "unknown argument {}; the arguments are {}",
            quoted(key),
            ARGUMENTS.join(", ")
        ));
    }
    let mem_id = match map.get("mem_id") {
        None => return Err("mem_id is required".to_owned()),
        Some(Value::String(s)) if s.is_empty() => {
            return Err("mem_id must not be empty".to_owned());
        }
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "mem_id must be a string, got {}",
                kind_with_article(other)
            ));
        }
    };
    let present = |key: &str| map.get(key).filter(|v| !v.is_null());
    let format = match present("format") {
        None => None,
        Some(Value::String(s)) if s == "summary" => Some(RecallFormat::Summary),
        Some(Value::String(s)) if s == "full" => Some(RecallFormat::Full),
        Some(Value::String(s)) => {
            return Err(format!(
                "format must be \"summary\" or \"full\", got {}",
                quoted(s)
            ));
        }
        Some(other) => {
            return Err(format!(
                "format must be a string, got {}",
                kind_with_article(other)
            ));
        }
    };
    let request = RecallRequest {
        format,
        query: string_arg(present("query"), "query")?,
        offset: count_arg(present("offset"), "offset", "a non-negative")?,
        max_chars: count_arg(present("max_chars"), "max_chars", "a positive")?,
        json_path: string_arg(present("json_path"), "json_path")?,
    };
    plan(&request)?;
    Ok((mem_id, request))
}

fn string_arg(value: Option<&Value>, key: &str) -> Result<Option<String>, String> {
    match value {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!(
            "{key} must be a string, got {}",
            kind_with_article(other)
        )),
    }
}

/// A `u64` argument. `what` is the article and adjective of the message
/// ("a non-negative" integer), so `offset` and `max_chars` read right.
fn count_arg(value: Option<&Value>, key: &str, what: &str) -> Result<Option<u64>, String> {
    match value {
        None => Ok(None),
        Some(Value::Number(n)) => match n.as_u64() {
            Some(u) => Ok(Some(u)),
            None => Err(format!("{key} must be {what} integer, got {n}")),
        },
        Some(other) => Err(format!(
            "{key} must be {what} integer, got {}",
            kind_with_article(other)
        )),
    }
}

/// Runs one `recall_tool_result` call: parses `input_json` and fetches from
/// `ledger`. Argument problems come back as
/// `[recall_tool_result: invalid arguments: …]`; an unknown `mem_id` as the
/// [`not_found`] line. Never panics.
pub fn execute(ledger: &dyn ToolResultLedger, input_json: &str) -> String {
    match parse_tool_input(input_json) {
        Ok((mem_id, request)) => fetch(ledger, &mem_id, &request),
        Err(problem) => invalid(&problem),
    }
}

/// Answers `request` for `mem_id` from what `ledger` stores: the one place
/// a fetch is answered, whoever asks (the tool, the command line, a test).
/// Never an error, since the answer goes back into the tool path: an
/// unknown id gives the [`not_found`] line, a storage failure a
/// `[tool_memory error: …]` line.
pub fn fetch(ledger: &dyn ToolResultLedger, mem_id: &str, request: &RecallRequest) -> String {
    match ledger.get(mem_id) {
        Ok(Some(rec)) => answer(&rec.handle, &rec.payload, request),
        Ok(None) => not_found(mem_id),
        Err(e) => format!("[tool_memory error: {}: {e}]", one_line(mem_id, 80)),
    }
}

/// The string the recall tool returns for an id it does not know. The id
/// comes from the model, so it is echoed on one line and bounded.
pub fn not_found(mem_id: &str) -> String {
    format!("[tool_memory not found: {}]", one_line(mem_id, 120))
}

/// Answers `request` over one recorded payload (see the module docs for the
/// exact rules). Never panics, whatever the payload and the request.
pub fn answer(handle: &Handle, payload: &str, request: &RecallRequest) -> String {
    match plan(request) {
        Err(problem) => invalid(&problem),
        Ok(Plan::Stub) => render_stub(handle),
        Ok(Plan::Full) => payload.to_owned(),
        Ok(Plan::Range { offset, max_chars }) => page(
            payload,
            &Page {
                label: String::new(),
                what: "the payload",
            },
            offset,
            max_chars,
            DEFAULT_RANGE_CHARS,
        ),
        Ok(Plan::Query {
            needle,
            from,
            context,
        }) => search(payload, needle, from, context),
        Ok(Plan::Json {
            path,
            segments,
            offset,
            max_chars,
        }) => select_json(payload, path, &segments, offset, max_chars),
    }
}

/// A request after its combination rules were checked.
enum Plan<'a> {
    Stub,
    Full,
    Range {
        offset: Option<u64>,
        max_chars: Option<u64>,
    },
    Query {
        needle: &'a str,
        from: Option<u64>,
        context: Option<u64>,
    },
    Json {
        path: &'a str,
        segments: Vec<String>,
        offset: Option<u64>,
        max_chars: Option<u64>,
    },
}

/// Checks the combination rules; the one place they live, so that
/// [`parse_tool_input`] and [`answer`] cannot disagree.
fn plan(request: &RecallRequest) -> Result<Plan<'_>, String> {
    let RecallRequest {
        format,
        query,
        offset,
        max_chars,
        json_path,
    } = request;
    if *max_chars == Some(0) {
        return Err("max_chars must be at least 1".to_owned());
    }
    let has_selector =
        query.is_some() || offset.is_some() || max_chars.is_some() || json_path.is_some();
    if *format == Some(RecallFormat::Summary) && has_selector {
        return Err("format=\"summary\" returns the stub and takes no query, offset, max_chars or json_path; drop format to read a slice".to_owned());
    }
    match (query.as_deref(), json_path.as_deref()) {
        (Some(_), Some(_)) => {
            Err("query and json_path cannot be combined; use one selector per call".to_owned())
        }
        (Some(""), None) => Err("query must not be empty; give the text to search for".to_owned()),
        (Some(needle), None) => Ok(Plan::Query {
            needle,
            from: *offset,
            context: *max_chars,
        }),
        (None, Some(path)) => Ok(Plan::Json {
            path,
            segments: parse_path(path)?,
            offset: *offset,
            max_chars: *max_chars,
        }),
        (None, None) if has_selector => Ok(Plan::Range {
            offset: *offset,
            max_chars: *max_chars,
        }),
        (None, None) if *format == Some(RecallFormat::Summary) => Ok(Plan::Stub),
        (None, None) => Ok(Plan::Full),
    }
}

fn invalid(problem: &str) -> String {
    format!("[recall_tool_result: invalid arguments: {problem}]")
}

fn note(message: &str) -> String {
    format!("[recall_tool_result: {message}]")
}

// ---------------------------------------------------------------------------
// Ranges

/// How a page's header and past-the-end message name what is paged.
struct Page {
    /// Header prefix: empty for the payload, `json_path "…": ` for a value.
    label: String,
    /// "the payload" or "the selected value".
    what: &'static str,
}

/// Chars `offset..offset+max_chars` of `text`, clamped, behind a header.
fn page(
    text: &str,
    names: &Page,
    offset: Option<u64>,
    max_chars: Option<u64>,
    default_max: usize,
) -> String {
    let total = text.chars().count();
    let requested_offset = offset.unwrap_or(0);
    let start = to_usize(requested_offset);
    if start >= total {
        let label = &names.label;
        let what = names.what;
        return note(&if total == 0 {
            format!("{label}offset {requested_offset} is past the end: {what} is empty")
        } else {
            format!(
                "{label}offset {requested_offset} is past the end: {what} has {total} chars (offsets 0..{})",
                total - 1
            )
        });
    }
    let requested = max_chars.map_or(default_max, to_usize);
    let capped = requested > MAX_RANGE_CHARS;
    let end = start + requested.min(MAX_RANGE_CHARS).min(total - start);
    let mut out = format!("[{}chars {start}..{end} of {total}", names.label);
    if capped {
        out.push_str(&format!(", max_chars capped at {MAX_RANGE_CHARS}"));
    }
    if end < total {
        out.push_str(&format!("; next: offset={end}"));
    }
    out.push_str("]\n");
    out.push_str(char_slice(text, start, end));
    out
}

// ---------------------------------------------------------------------------
// Query

/// A shown excerpt: its char range and the matches it holds.
struct Window {
    start: usize,
    end: usize,
    matches: Vec<usize>,
}

fn search(payload: &str, needle: &str, from: Option<u64>, context: Option<u64>) -> String {
    let q = quoted(needle);
    // `match_indices` gives the non-overlapping, left-to-right matches the
    // module docs promise, in linear time, as char-boundary byte offsets.
    let byte_starts: Vec<usize> = payload.match_indices(needle).map(|(b, _)| b).collect();
    let total = payload.chars().count();
    if byte_starts.is_empty() {
        return format!("[no match for {q} in {total} chars; search is case-sensitive]");
    }
    let starts = char_offsets(payload, &byte_starts);
    let n = starts.len();
    let plural = if n == 1 { "match" } else { "matches" };
    let from_char = from.map_or(0, to_usize);
    let first = starts.partition_point(|&s| s < from_char);
    if first >= n {
        let last = starts.last().copied().unwrap_or(0);
        return format!(
            "[{n} {plural} for {q}, none at or after offset {}; the last is at char {last}]",
            from.unwrap_or(0)
        );
    }
    let shown_end = first.saturating_add(MAX_SHOWN_MATCHES).min(n);
    let requested_context = context.map_or(DEFAULT_CONTEXT_CHARS, to_usize);
    let ctx = requested_context.min(MAX_CONTEXT_CHARS);
    let needle_chars = needle.chars().count();

    let shown = if shown_end - first == 1 {
        format!("{}", first + 1)
    } else {
        format!("{}-{}", first + 1, shown_end)
    };
    let unit = if ctx == 1 { "char" } else { "chars" };
    let mut out = format!("[{n} {plural} for {q}; showing {shown} with {ctx} {unit} of context");
    if requested_context > MAX_CONTEXT_CHARS {
        out.push_str(&format!(" (max_chars capped at {MAX_CONTEXT_CHARS})"));
    }
    if let Some(next) = starts.get(shown_end) {
        out.push_str(&format!("; next: offset={next}"));
    }
    out.push(']');

    let mut windows: Vec<Window> = Vec::new();
    for &s in starts.get(first..shown_end).unwrap_or(&[]) {
        let start = s.saturating_sub(ctx);
        let end = s
            .saturating_add(needle_chars)
            .saturating_add(ctx)
            .min(total);
        match windows.last_mut() {
            // Matches arrive in order, so only the last window can overlap.
            Some(w) if start <= w.end => {
                w.end = w.end.max(end);
                w.matches.push(s);
            }
            _ => windows.push(Window {
                start,
                end,
                matches: vec![s],
            }),
        }
    }
    for w in &windows {
        let at = match w.matches.as_slice() {
            [one] => format!("match at char {one}"),
            many => format!(
                "matches at chars {}",
                many.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        out.push_str(&format!("\n--- {at} (chars {}..{}) ---\n", w.start, w.end));
        out.push_str(char_slice(payload, w.start, w.end));
    }
    out
}

/// Converts ascending byte offsets (char boundaries of `s`) to char offsets
/// in one pass.
fn char_offsets(s: &str, byte_offsets: &[usize]) -> Vec<usize> {
    let mut out = Vec::with_capacity(byte_offsets.len());
    let mut wanted = byte_offsets.iter().copied().peekable();
    for (char_index, (byte_index, _)) in s.char_indices().enumerate() {
        // `<=` rather than `==`: a non-boundary offset (impossible from
        // `match_indices`) maps to the next char instead of stalling.
        while wanted.next_if(|&b| b <= byte_index).is_some() {
            out.push(char_index);
        }
        if wanted.peek().is_none() {
            return out;
        }
    }
    let total = s.chars().count();
    out.extend(wanted.map(|_| total));
    out
}

// ---------------------------------------------------------------------------
// JSON paths

/// Splits a `json_path` into segments: `a.b.3`, `a[3].b`, `$.a`, `$[0]`;
/// empty or `$` is the root. A `[` not followed by digits and `]` is part
/// of a key.
fn parse_path(path: &str) -> Result<Vec<String>, String> {
    let rest = if path == "$" {
        ""
    } else if let Some(r) = path.strip_prefix("$.") {
        r
    } else if path.starts_with("$[") {
        path.get(1..).unwrap_or("")
    } else {
        path
    };
    let bad = |why: String| format!("json_path {}: {why}", quoted(path));
    let mut segments = Vec::new();
    if rest.is_empty() {
        return Ok(segments);
    }
    let chars: Vec<char> = rest.chars().collect();
    let mut current = String::new();
    // True at the start and after a '.', until a segment is complete.
    let mut expect_segment = true;
    // True right after an `[N]`, where only '.', '[' or the end may follow.
    let mut after_index = false;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        if c == '.' {
            if current.is_empty() && expect_segment {
                return Err(bad(format!(
                    "empty segment at position {}",
                    segments.len() + 1
                )));
            }
            if !current.is_empty() {
                segments.push(std::mem::take(&mut current));
            }
            expect_segment = true;
            after_index = false;
            continue;
        }
        if c == '[' {
            let digits: String = chars
                .get(i..)
                .unwrap_or(&[])
                .iter()
                .take_while(|d| d.is_ascii_digit())
                .collect();
            let close = i + digits.chars().count();
            if !digits.is_empty() && chars.get(close) == Some(&']') {
                if !current.is_empty() {
                    segments.push(std::mem::take(&mut current));
                }
                segments.push(digits);
                i = close + 1;
                expect_segment = false;
                after_index = true;
                continue;
            }
        }
        if after_index {
            return Err(bad(format!(
                "expected '.' or '[' after ']' at segment {}",
                segments.len()
            )));
        }
        current.push(c);
        expect_segment = false;
    }
    if !current.is_empty() {
        segments.push(current);
    } else if expect_segment {
        return Err(bad(format!(
            "empty segment at position {}",
            segments.len() + 1
        )));
    }
    Ok(segments)
}

fn select_json(
    payload: &str,
    path: &str,
    segments: &[String],
    offset: Option<u64>,
    max_chars: Option<u64>,
) -> String {
    let p = quoted(path);
    let document: Value = match serde_json::from_str(payload) {
        Ok(v) => v,
        Err(e) => {
            return note(&format!(
                "json_path needs a JSON payload, but this one is not JSON ({e}); use query or offset/max_chars instead"
            ));
        }
    };
    let mut current = &document;
    for (depth, segment) in segments.iter().enumerate() {
        let here = location(segments.get(..depth).unwrap_or(&[]));
        let next = match current {
            Value::Object(map) => map
                .get(segment.as_str())
                .ok_or_else(|| format!("no key {} {here}, {}", quoted(segment), describe(current))),
            Value::Array(items) => match segment.parse::<usize>() {
                Ok(index) => items
                    .get(index)
                    .ok_or_else(|| format!("no index {index} {here}, {}", describe(current))),
                Err(_) => Err(format!(
                    "{} is not an index {here}, {}",
                    quoted(segment),
                    describe(current)
                )),
            },
            scalar => Err(format!(
                "cannot take {} {here}, which is {}",
                quoted(segment),
                kind_with_article(scalar)
            )),
        };
        current = match next {
            Ok(v) => v,
            Err(why) => return note(&format!("json_path {p}: {why}")),
        };
    }
    let text = match serde_json::to_string(current) {
        Ok(t) => t,
        Err(e) => return note(&format!("json_path {p}: cannot write the value ({e})")),
    };
    // Small values come back bare: the commonest case costs no header.
    if offset.is_none() && max_chars.is_none() && text.chars().nth(DEFAULT_JSON_CHARS).is_none() {
        return text;
    }
    page(
        &text,
        &Page {
            label: format!("json_path {p}: "),
            what: "the selected value",
        },
        offset,
        max_chars,
        DEFAULT_JSON_CHARS,
    )
}

/// "at the top level" or `under "a.b"`, for messages.
fn location(prefix: &[String]) -> String {
    if prefix.is_empty() {
        "at the top level".to_owned()
    } else {
        format!("under {}", quoted(&prefix.join(".")))
    }
}

/// What a container holds, bounded: the keys of an object (first
/// [`LISTED_KEYS`]) or the index range of an array.
fn describe(v: &Value) -> String {
    match v {
        Value::Object(map) if map.is_empty() => "an empty object".to_owned(),
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().take(LISTED_KEYS).map(|k| quoted(k)).collect();
            let more = map.len().saturating_sub(LISTED_KEYS);
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            let plural = if map.len() == 1 { "key" } else { "keys" };
            format!(
                "an object with {} {plural}: {}{tail}",
                map.len(),
                keys.join(", ")
            )
        }
        Value::Array(items) if items.is_empty() => "an empty array".to_owned(),
        Value::Array(items) => {
            let plural = if items.len() == 1 { "item" } else { "items" };
            format!(
                "an array of {} {plural} (indices 0..{})",
                items.len(),
                items.len() - 1
            )
        }
        other => kind_with_article(other).to_owned(),
    }
}

fn kind_with_article(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

// ---------------------------------------------------------------------------
// Char-safe helpers

/// `u64` arguments index chars; anything beyond `usize` is "past the end".
fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// Chars `start..end` of `s`, clamped. The byte bounds come from
/// `char_indices`, so they are always char boundaries; `get` keeps even a
/// mistake from panicking.
fn char_slice(s: &str, start: usize, end: usize) -> &str {
    let from = byte_of_char(s, start);
    let rest = s.get(from..).unwrap_or("");
    let len = byte_of_char(rest, end.saturating_sub(start));
    rest.get(..len).unwrap_or("")
}

/// Byte offset of char `n` of `s`, or `s.len()` past the end.
fn byte_of_char(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(b, _)| b)
}

/// `s` as a JSON string literal, cut to [`ECHO_CHARS`] chars: safe to echo
/// inside a one-line message whatever it holds.
fn quoted(s: &str) -> String {
    let cut = if s.chars().nth(ECHO_CHARS).is_some() {
        let mut c: String = s.chars().take(ECHO_CHARS - 1).collect();
        c.push('…');
        c
    } else {
        s.to_owned()
    };
    let mut out = String::with_capacity(cut.len() + 2);
    push_json_string(&mut out, &cut);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ledger::{InMemoryLedger, LedgerError, Recorded};

    fn handle(payload: &str) -> Handle {
        Handle::derive("toolu_1", "fetch", payload)
    }

    fn ask(payload: &str, request: RecallRequest) -> String {
        answer(&handle(payload), payload, &request)
    }

    fn range(offset: Option<u64>, max_chars: Option<u64>) -> RecallRequest {
        RecallRequest {
            offset,
            max_chars,
            ..RecallRequest::default()
        }
    }

    fn query(q: &str, offset: Option<u64>, max_chars: Option<u64>) -> RecallRequest {
        RecallRequest {
            query: Some(q.to_owned()),
            offset,
            max_chars,
            ..RecallRequest::default()
        }
    }

    fn path(p: &str) -> RecallRequest {
        RecallRequest {
            json_path: Some(p.to_owned()),
            ..RecallRequest::default()
        }
    }

    const DOC: &str = r#"{"products":[{"asin":"B1","stats":{"current":[1,2],"avg":3}},{"asin":"B2","title":"x\ny"}],"total":2}"#;

    #[test]
    fn definition_is_compact_fixed_json() {
        let def = recall_tool_definition();
        assert_eq!(def.name(), RECALL_TOOL_NAME);
        assert_eq!(def.to_json(), RECALL_TOOL_JSON);
        // Compact: re-serialising (keys in document order) changes nothing.
        let v: Value = serde_json::from_str(RECALL_TOOL_JSON).unwrap();
        assert_eq!(serde_json::to_string(&v).unwrap(), RECALL_TOOL_JSON);
        let schema = &v["input_schema"];
        assert_eq!(schema["required"], serde_json::json!(["mem_id"]));
        let props: Vec<&str> = schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(props, ARGUMENTS);
        assert!(RECALL_TOOL_JSON.len() < 1_800, "{}", RECALL_TOOL_JSON.len());
    }

    #[test]
    fn no_selector_gives_payload_or_stub() {
        let payload = "a\r\nünï\u{0}\n";
        assert_eq!(ask(payload, RecallRequest::full()), payload);
        assert_eq!(ask(payload, RecallRequest::default()), payload);
        assert_eq!(
            ask(payload, RecallRequest::summary()),
            render_stub(&handle(payload))
        );
    }

    #[test]
    fn range_counts_chars_and_names_next_offset() {
        let payload = "héllo wörld 日本🦀";
        assert_eq!(
            ask(payload, range(Some(1), Some(4))),
            "[chars 1..5 of 15; next: offset=5]\néllo"
        );
        assert_eq!(
            ask(payload, range(Some(12), Some(100))),
            "[chars 12..15 of 15]\n日本🦀"
        );
        // max_chars alone starts at 0; offset alone takes the default length.
        assert_eq!(
            ask(payload, range(None, Some(2))),
            "[chars 0..2 of 15; next: offset=2]\nhé"
        );
        assert_eq!(
            ask(payload, range(Some(14), None)),
            "[chars 14..15 of 15]\n🦀"
        );
    }

    #[test]
    fn range_defaults_and_caps() {
        let payload = "é".repeat(60_000);
        let out = ask(&payload, range(Some(10), None));
        assert!(out.starts_with("[chars 10..4010 of 60000; next: offset=4010]\n"));
        assert_eq!(out.split_once('\n').unwrap().1.chars().count(), 4_000);
        let out = ask(&payload, range(Some(0), Some(u64::MAX)));
        assert!(out.starts_with(
            "[chars 0..50000 of 60000, max_chars capped at 50000; next: offset=50000]\n"
        ));
        assert_eq!(out.split_once('\n').unwrap().1.chars().count(), 50_000);
    }

    #[test]
    fn range_past_the_end_is_explained() {
        assert_eq!(
            ask("abc", range(Some(3), None)),
            "[recall_tool_result: offset 3 is past the end: the payload has 3 chars (offsets 0..2)]"
        );
        assert_eq!(
            ask("", range(Some(0), Some(5))),
            "[recall_tool_result: offset 0 is past the end: the payload is empty]"
        );
        assert!(ask("abc", range(Some(u64::MAX), Some(u64::MAX))).contains("past the end"));
    }

    #[test]
    fn query_shows_windows_with_offsets() {
        let payload = "one two three two one";
        assert_eq!(
            ask(payload, query("two", None, Some(2))),
            "[2 matches for \"two\"; showing 1-2 with 2 chars of context]\n\
             --- match at char 4 (chars 2..9) ---\ne two t\n\
             --- match at char 14 (chars 12..19) ---\ne two o"
        );
    }

    #[test]
    fn query_merges_overlapping_windows_and_counts_multibyte() {
        let payload = "日本🦀日本🦀xx日本";
        assert_eq!(
            ask(payload, query("日本", None, Some(1))),
            "[3 matches for \"日本\"; showing 1-3 with 1 char of context]\n\
             --- matches at chars 0, 3 (chars 0..6) ---\n日本🦀日本🦀\n\
             --- match at char 8 (chars 7..10) ---\nx日本"
        );
    }

    #[test]
    fn query_is_non_overlapping_and_case_sensitive() {
        let out = ask("aaaa AAAA", query("aa", None, Some(1)));
        assert!(
            out.starts_with("[2 matches for \"aa\"; showing 1-2 with 1 char of context]"),
            "{out}"
        );
        assert_eq!(
            ask("Hello", query("hello", None, None)),
            "[no match for \"hello\" in 5 chars; search is case-sensitive]"
        );
    }

    #[test]
    fn query_pages_through_many_matches() {
        let payload = "x,,,".repeat(50);
        let out = ask(&payload, query("x", None, Some(1)));
        assert!(
            out.starts_with("[50 matches for \"x\"; showing 1-20 with 1 char of context; next: offset=80]\n--- match at char 0 (chars 0..2) ---\nx,\n--- match at char 4 (chars 3..6) ---\n,x,\n"),
            "{out}"
        );
        assert_eq!(out.matches("--- match at char").count(), 20);
        let out = ask(&payload, query("x", Some(80), Some(1)));
        assert!(
            out.starts_with(
                "[50 matches for \"x\"; showing 21-40 with 1 char of context; next: offset=160]\n"
            ),
            "{out}"
        );
        assert_eq!(
            ask(&payload, query("x", Some(197), None)),
            "[50 matches for \"x\", none at or after offset 197; the last is at char 196]"
        );
        let out = ask("ab", query("a", None, Some(1_000_000)));
        assert_eq!(
            out,
            "[1 match for \"a\"; showing 1 with 2000 chars of context (max_chars capped at 2000)]\n\
             --- match at char 0 (chars 0..2) ---\nab"
        );
    }

    #[test]
    fn query_echo_is_one_line_and_bounded() {
        let q = format!("a\n\"{}", "é".repeat(200));
        let out = ask("zzz", query(&q, None, None));
        assert!(!out.contains('\n'));
        assert!(out.starts_with("[no match for \"a\\n\\\"ééé"));
        assert!(out.chars().count() < 150, "{out}");
    }

    #[test]
    fn json_path_selects_compact_values_in_document_order() {
        assert_eq!(
            ask(DOC, path("products.0.stats")),
            r#"{"current":[1,2],"avg":3}"#
        );
        assert_eq!(ask(DOC, path("products.0.stats.current.1")), "2");
        assert_eq!(ask(DOC, path("$.products[1].title")), r#""x\ny""#);
        // A `[` not opening an index is part of the key.
        assert_eq!(ask(r#"{"a[x]":{"b[":5}}"#, path("$.a[x].b[")), "5");
        assert_eq!(ask(" [[1,[2,3]]] ", path("$[0][1][0]")), "2");
        assert_eq!(ask(" [[1,[2,3]]] ", path("0.1")), "[2,3]");
        assert_eq!(ask(" [1] ", path("")), "[1]");
        assert_eq!(ask(" [1] ", path("$")), "[1]");
        assert_eq!(ask(r#"{"$schema":1}"#, path("$schema")), "1");
    }

    #[test]
    fn json_path_misses_are_explained() {
        assert_eq!(
            ask(DOC, path("products.0.statz")),
            "[recall_tool_result: json_path \"products.0.statz\": no key \"statz\" under \"products.0\", an object with 2 keys: \"asin\", \"stats\"]"
        );
        assert_eq!(
            ask(DOC, path("products.7")),
            "[recall_tool_result: json_path \"products.7\": no index 7 under \"products\", an array of 2 items (indices 0..1)]"
        );
        assert_eq!(
            ask(DOC, path("products.first")),
            "[recall_tool_result: json_path \"products.first\": \"first\" is not an index under \"products\", an array of 2 items (indices 0..1)]"
        );
        assert_eq!(
            ask(DOC, path("total.x")),
            "[recall_tool_result: json_path \"total.x\": cannot take \"x\" under \"total\", which is a number]"
        );
        assert_eq!(
            ask(DOC, path("nope")),
            "[recall_tool_result: json_path \"nope\": no key \"nope\" at the top level, an object with 2 keys: \"products\", \"total\"]"
        );
        let out = ask("not json", path("a"));
        assert!(
            out.starts_with("[recall_tool_result: json_path needs a JSON payload, but this one is not JSON (expected"),
            "{out}"
        );
    }

    #[test]
    fn json_path_key_list_is_bounded() {
        let obj: serde_json::Map<String, Value> =
            (0..30).map(|i| (format!("k{i}"), Value::from(i))).collect();
        let payload = Value::Object(obj).to_string();
        let out = ask(&payload, path("zz"));
        assert!(out.ends_with("\"k19\" and 10 more]"), "{out}");
        assert!(!out.contains("k20"));
    }

    #[test]
    fn json_path_pages_long_values() {
        let payload = format!(r#"{{"s":"{}"}}"#, "日".repeat(30_000));
        let out = ask(&payload, path("s"));
        assert!(
            out.starts_with("[json_path \"s\": chars 0..20000 of 30002; next: offset=20000]\n\"日"),
            "{}",
            out.chars().take(100).collect::<String>()
        );
        let mut request = path("s");
        request.offset = Some(29_999);
        assert_eq!(
            ask(&payload, request.clone()),
            "[json_path \"s\": chars 29999..30002 of 30002]\n日日\""
        );
        request.offset = Some(30_002);
        assert_eq!(
            ask(&payload, request),
            "[recall_tool_result: json_path \"s\": offset 30002 is past the end: the selected value has 30002 chars (offsets 0..30001)]"
        );
        let mut request = path("products.0.asin");
        request.max_chars = Some(2);
        assert_eq!(
            ask(DOC, request),
            "[json_path \"products.0.asin\": chars 0..2 of 4; next: offset=2]\n\"B"
        );
    }

    #[test]
    fn contradictions_are_explained() {
        let summary_with = RecallRequest {
            offset: Some(3),
            ..RecallRequest::summary()
        };
        assert_eq!(
            ask("abc", summary_with),
            "[recall_tool_result: invalid arguments: format=\"summary\" returns the stub and takes no query, offset, max_chars or json_path; drop format to read a slice]"
        );
        let both = RecallRequest {
            query: Some("a".into()),
            json_path: Some("a".into()),
            ..RecallRequest::default()
        };
        assert_eq!(
            ask("abc", both),
            "[recall_tool_result: invalid arguments: query and json_path cannot be combined; use one selector per call]"
        );
        assert_eq!(
            ask("abc", range(Some(1), Some(0))),
            "[recall_tool_result: invalid arguments: max_chars must be at least 1]"
        );
        assert_eq!(
            ask("abc", query("", None, None)),
            "[recall_tool_result: invalid arguments: query must not be empty; give the text to search for]"
        );
        assert_eq!(
            ask(DOC, path("products..0")),
            "[recall_tool_result: invalid arguments: json_path \"products..0\": empty segment at position 2]"
        );
        for bad in [".a", "a.", "a[0]b", "a[0]..b", "a[1][x"] {
            assert!(
                ask(DOC, path(bad))
                    .starts_with("[recall_tool_result: invalid arguments: json_path"),
                "{bad}"
            );
        }
        // format=full with a selector: the selector applies.
        let full_slice = RecallRequest {
            offset: Some(1),
            max_chars: Some(1),
            ..RecallRequest::full()
        };
        assert_eq!(
            ask("abc", full_slice),
            "[chars 1..2 of 3; next: offset=2]\nb"
        );
    }

    #[test]
    fn parse_accepts_documented_arguments() {
        let (id, r) =
            parse_tool_input(r#"{"mem_id":"tm_1","format":"full","offset":5,"max_chars":10}"#)
                .unwrap();
        assert_eq!(id, "tm_1");
        assert_eq!(
            r,
            RecallRequest {
                offset: Some(5),
                max_chars: Some(10),
                ..RecallRequest::full()
            }
        );
        let (_, r) = parse_tool_input(
            r#"{"mem_id":"tm_1","format":null,"query":"x","json_path":null,"offset":null}"#,
        )
        .unwrap();
        assert_eq!(r, query("x", None, None));
        let (_, r) = parse_tool_input(r#"{"mem_id":"tm_1","format":"summary"}"#).unwrap();
        assert_eq!(r, RecallRequest::summary());
        let (_, r) = parse_tool_input(r#"{"json_path":"a.0","mem_id":"m"}"#).unwrap();
        assert_eq!(r, path("a.0"));
    }

    #[test]
    fn parse_rejects_bad_input_with_reasons() {
        let cases = [
            (
                "nope",
                "the input is not JSON (expected ident at line 1 column 2)",
            ),
            ("[1]", "the input must be a JSON object, got an array"),
            ("{}", "mem_id is required"),
            (r#"{"mem_id":7}"#, "mem_id must be a string, got a number"),
            (r#"{"mem_id":null}"#, "mem_id must be a string, got null"),
            (r#"{"mem_id":""}"#, "mem_id must not be empty"),
            (
                r#"{"mem_id":"m","jsonpath":"a"}"#,
                "unknown argument \"jsonpath\"; the arguments are mem_id, format, query, offset, max_chars, json_path",
            ),
            (
                r#"{"mem_id":"m","format":"FULL"}"#,
                "format must be \"summary\" or \"full\", got \"FULL\"",
            ),
            (
                r#"{"mem_id":"m","format":1}"#,
                "format must be a string, got a number",
            ),
            (
                r#"{"mem_id":"m","offset":-5}"#,
                "offset must be a non-negative integer, got -5",
            ),
            (
                r#"{"mem_id":"m","offset":1.5}"#,
                "offset must be a non-negative integer, got 1.5",
            ),
            (
                r#"{"mem_id":"m","offset":"10"}"#,
                "offset must be a non-negative integer, got a string",
            ),
            (
                r#"{"mem_id":"m","max_chars":-1}"#,
                "max_chars must be a positive integer, got -1",
            ),
            (
                r#"{"mem_id":"m","max_chars":0}"#,
                "max_chars must be at least 1",
            ),
            (
                r#"{"mem_id":"m","query":["a"]}"#,
                "query must be a string, got an array",
            ),
            (
                r#"{"mem_id":"m","query":"a","json_path":"b"}"#,
                "query and json_path cannot be combined; use one selector per call",
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(parse_tool_input(input), Err(expected.to_owned()), "{input}");
        }
    }

    #[test]
    fn execute_parses_then_fetches() {
        let ledger = InMemoryLedger::new();
        let h = ledger.record("toolu_9", "fetch", "{}", DOC).unwrap();
        let input = format!(
            r#"{{"mem_id":"{}","json_path":"products.1.asin"}}"#,
            h.mem_id
        );
        assert_eq!(execute(&ledger, &input), "\"B2\"");
        let input = format!(r#"{{"mem_id":"{}"}}"#, h.mem_id);
        assert_eq!(execute(&ledger, &input), DOC);
        assert_eq!(
            execute(&ledger, r#"{"mem_id":"tm_nope"}"#),
            "[tool_memory not found: tm_nope]"
        );
        assert_eq!(
            execute(&ledger, r#"{"mem_id":"tm_nope","offset":-1}"#),
            "[recall_tool_result: invalid arguments: offset must be a non-negative integer, got -1]"
        );
    }

    #[test]
    fn fetch_full_is_byte_exact_and_unknown_is_a_string() {
        let l = InMemoryLedger::new();
        let payload = "line1\r\nünïcödé\u{0}\n";
        let h = l.record("c", "t", "{}", payload).unwrap();
        assert_eq!(fetch(&l, &h.mem_id, &RecallRequest::full()), payload);
        assert_eq!(
            fetch(&l, "tm_nope", &RecallRequest::full()),
            "[tool_memory not found: tm_nope]"
        );
    }

    #[test]
    fn not_found_echoes_the_id_on_one_bounded_line() {
        let id = format!("tm_\n{}", "é".repeat(500));
        let line = not_found(&id);
        assert!(!line.contains('\n'), "{line}");
        assert!(line.chars().count() < 160, "{line}");
        assert!(line.starts_with("[tool_memory not found: tm_ é"), "{line}");
    }

    /// A ledger whose storage fails on every read.
    struct BrokenLedger;

    impl ToolResultLedger for BrokenLedger {
        fn record(&self, _: &str, _: &str, _: &str, _: &str) -> Result<Handle, LedgerError> {
            unreachable!("fetch only reads")
        }
        fn get(&self, mem_id: &str) -> Result<Option<Recorded>, LedgerError> {
            Err(LedgerError::Corrupt {
                path: format!("payloads/{mem_id}"),
                reason: "gone".to_owned(),
            })
        }
        fn get_by_call_id(&self, _: &str) -> Result<Option<Recorded>, LedgerError> {
            unreachable!("fetch looks up by mem_id")
        }
    }

    #[test]
    fn fetch_turns_a_storage_failure_into_a_line_for_the_model() {
        assert_eq!(
            fetch(&BrokenLedger, "tm_1\nx", &RecallRequest::full()),
            "[tool_memory error: tm_1 x: payloads/tm_1\nx: gone]"
        );
    }
}

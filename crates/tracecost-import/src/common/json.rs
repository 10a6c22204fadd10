//! A log file's JSON text: read whole (as one document or as lines),
//! compacted, and where in it a value is, for error messages. Kept apart
//! from the batched reader ([`super::lines`]): LangChain and OpenAI files
//! are read whole, a request log a batch at a time, and both compact and
//! locate JSON the same way.

use std::borrow::Cow;
use std::path::Path;

use serde_json::value::RawValue;

use super::{invalid, invalid_json, reject};
use crate::{ImportError, ImportOptions, ImportSummary};
use tracecost_engine::json::RawObject;

/// The file's text, without the byte-order mark some Windows tools put
/// first (RFC 8259 §8.1 lets a parser ignore it). A line that is not UTF-8
/// is refused at its line and column, or, under `skip_invalid`, skipped
/// and counted as any damaged line is: read as an empty line, so that
/// every other line keeps its number.
pub(crate) fn read_text(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
) -> Result<String, ImportError> {
    let mut bytes = std::fs::read(path).map_err(|source| ImportError::Io {
        path: path.to_owned(),
        source,
    })?;
    if bytes.starts_with(tracecost_trace::UTF8_BOM) {
        bytes.drain(..tracecost_trace::UTF8_BOM.len());
    }
    let bytes = match String::from_utf8(bytes) {
        Ok(text) => return Ok(text),
        Err(e) => e.into_bytes(),
    };
    let mut text = String::with_capacity(bytes.len());
    for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
        match std::str::from_utf8(line) {
            Ok(l) => text.push_str(l),
            Err(e) => {
                let err = invalid(path, i + 1, Some(e.valid_up_to() + 1), "not UTF-8");
                reject(opts, report, err)?;
                if line.ends_with(b"\n") {
                    text.push('\n');
                }
            }
        }
    }
    Ok(text)
}

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
    report: &mut ImportSummary,
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
            let err = invalid_json(path, e.line(), &e);
            reject(opts, report, err)?;
            Ok(None)
        }
    }
}

/// Calls `record` on each record of `doc` (a whole document, each item of
/// a list document, each line) with the record's line; a record it refuses,
/// or a line that is not JSON, is rejected (or skipped under
/// `skip_invalid`) at its line and column. `not_a_list`: what a list
/// document that does not parse was expected to be.
pub(crate) fn each_record<'a>(
    path: &Path,
    text: &'a str,
    doc: Doc<'a>,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    not_a_list: &str,
    mut record: impl FnMut(&'a RawValue, usize) -> Result<(), String>,
) -> Result<(), ImportError> {
    let mut one = |v: &'a RawValue, line: usize, col: usize, report: &mut ImportSummary| {
        match record(v, line) {
            Ok(()) => Ok(()),
            Err(msg) => reject(opts, report, super::invalid(path, line, Some(col), &msg)),
        }
    };
    match doc {
        Doc::Whole(v) if v.get().starts_with('[') => {
            let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(v.get()) else {
                let (line, col) = position_of(text, v.get());
                return reject(
                    opts,
                    report,
                    super::invalid(path, line, Some(col), not_a_list),
                );
            };
            for item in items {
                let (line, col) = position_of(text, item.get());
                one(item, line, col, report)?;
            }
        }
        Doc::Whole(v) => {
            let (line, col) = position_of(text, v.get());
            one(v, line, col, report)?;
        }
        Doc::Lines(lines) => {
            for (line, l) in lines {
                match serde_json::from_str::<&RawValue>(l) {
                    Ok(v) => one(v, line, 1, report)?,
                    Err(e) => reject(opts, report, invalid_json(path, line, &e))?,
                }
            }
        }
    }
    Ok(())
}

/// Reads the file at `path` and calls `record` on each of its records, as
/// [`each_record`] does on a document [`split_doc`] decided: the read of
/// the importers whose records are whole JSON values (Langfuse, LangSmith,
/// the Agents SDK), which gather them and make calls at the end. A JSON
/// Lines file (`.jsonl`, `.ndjson`, whose first line is a value alone) is
/// read a line at a time, so that an export larger than memory can be
/// read; another file is one document, read whole.
pub(crate) fn each_file_record(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    not_a_list: &str,
    mut record: impl FnMut(&RawValue, usize) -> Result<(), String>,
) -> Result<(), ImportError> {
    if is_jsonl(path) && first_line_alone(path)? {
        return super::each_line(path, |line| {
            let text = match line.text {
                Ok(t) => t,
                Err(col) => {
                    return reject(
                        opts,
                        report,
                        invalid(path, line.number, Some(col), "not UTF-8"),
                    );
                }
            };
            match serde_json::from_str::<&RawValue>(text) {
                Ok(v) => match record(v, line.number) {
                    Ok(()) => Ok(()),
                    Err(msg) => reject(opts, report, invalid(path, line.number, Some(1), &msg)),
                },
                Err(e) => reject(opts, report, invalid_json(path, line.number, &e)),
            }
        });
    }
    let text = read_text(path, opts, report)?;
    let Some(doc) = split_doc(path, &text, opts, report)? else {
        return Ok(());
    };
    each_record(path, &text, doc, opts, report, not_a_list, |v, line| {
        record(v, line)
    })
}

/// Whether the first non-blank line of the file is a JSON value alone.
fn first_line_alone(path: &Path) -> Result<bool, ImportError> {
    use std::io::BufRead;
    let io = |source| ImportError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut reader = std::io::BufReader::new(file);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io)? == 0 {
            return Ok(false);
        }
        let bytes = buf.strip_prefix(tracecost_trace::UTF8_BOM).unwrap_or(&buf);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        return Ok(serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok());
    }
}

/// Whether the file is JSON Lines by its extension.
pub(crate) fn is_jsonl(path: &Path) -> bool {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|e| e == "jsonl" || e == "ndjson")
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

    #[test]
    fn raw_values_exclude_surrounding_whitespace() {
        // Lines keep their leading whitespace (for columns); values
        // parsed from them must not.
        let v: &RawValue = serde_json::from_str("  [1] ").unwrap();
        assert_eq!(v.get(), "[1]");
        let (line, col) = position_of("a\n  [1]", &"a\n  [1]"[4..]);
        assert_eq!((line, col), (2, 3));
    }
}

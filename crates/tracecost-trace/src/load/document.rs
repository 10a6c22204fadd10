//! One trace document read whole, from a string or a reader.

use std::fmt;
use std::io::Read;

use serde::Deserialize;

use super::doc::TraceDoc;
use super::error::{LoadedTraces, TraceError};
use super::validate::Cx;
use crate::TRACE_FORMAT;

/// The byte-order mark Windows editors often put at the start of a UTF-8
/// file. JSON forbids writing it but lets a parser ignore it (RFC 8259
/// §8.1), and the loader and importers do.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Loads every trace in `json`; `path` is only used in messages.
pub fn load_str(json: &str, path: &str) -> Result<LoadedTraces, TraceError> {
    let json = json.strip_prefix('\u{feff}').unwrap_or(json);
    // A text in memory is parsed from the slice: serde_json's reader of
    // bytes from an `io::Read` goes a byte at a time, several times slower.
    load_from(serde_json::Deserializer::from_str(json), path)
}

pub(super) fn load_reader<R: Read>(reader: R, path: &str) -> Result<LoadedTraces, TraceError> {
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
        message: tracecost_engine::json::error_message(e),
    }
}

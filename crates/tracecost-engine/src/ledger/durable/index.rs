//! The index file, `index.jsonl`: one compact JSON object per record,
//! versioned ([`FORMAT_VERSION`]). What a line holds as
//! written and as read, why a line is rejected, and how an instance reads
//! the lines it has not seen yet into what it knows ([`Known`]).

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::io_error::{display, io_err};
use crate::handle::Handle;
use crate::ledger::LedgerError;

/// The index format version this code reads and writes (`"v"`), public as
/// [`DurableLedger::FORMAT_VERSION`](super::DurableLedger::FORMAT_VERSION).
pub(super) const FORMAT_VERSION: u64 = 1;

/// What this instance has read of the index so far.
#[derive(Debug, Default)]
pub(super) struct Known {
    /// Bytes of the index consumed: always the end of a complete, valid line.
    pub(super) offset: u64,
    /// Lines consumed, for error messages.
    pub(super) lines: u64,
    /// Records in index order.
    pub(super) order: Vec<Arc<Entry>>,
    pub(super) by_mem_id: HashMap<String, Arc<Entry>>,
    /// Every record of a call id, in index order: several when
    /// conversations sharing the directory reused an id.
    pub(super) by_call_id: HashMap<String, Vec<Arc<Entry>>>,
}

impl Known {
    pub(super) fn insert(&mut self, entry: Entry) {
        // The first line for a mem_id wins. Later duplicates cannot come
        // from this code (writers check under the lock) but are tolerated
        // rather than fatal.
        if self.by_mem_id.contains_key(&entry.handle.mem_id) {
            return;
        }
        let entry = Arc::new(entry);
        self.by_mem_id
            .insert(entry.handle.mem_id.clone(), entry.clone());
        self.by_call_id
            .entry(entry.handle.tool_call_id.clone())
            .or_default()
            .push(entry.clone());
        self.order.push(entry);
    }

    /// The handle of the record of exactly this result, if any.
    pub(super) fn find(&self, tool_call_id: &str, tool_name: &str, sha: &str) -> Option<Handle> {
        self.by_call_id
            .get(tool_call_id)?
            .iter()
            .find(|e| e.handle.tool_name == tool_name && e.payload_sha256 == sha)
            .map(|e| e.handle.clone())
    }

    /// The one record of `tool_call_id`; an error if it has several.
    pub(super) fn by_call_id(&self, tool_call_id: &str) -> Result<Option<Arc<Entry>>, LedgerError> {
        match self.by_call_id.get(tool_call_id).map(Vec::as_slice) {
            None | Some([]) => Ok(None),
            Some([one]) => Ok(Some(one.clone())),
            Some(many) => Err(LedgerError::AmbiguousCallId {
                tool_call_id: tool_call_id.to_owned(),
                mem_ids: many.iter().map(|e| e.handle.mem_id.clone()).collect(),
            }),
        }
    }
}

/// One record's metadata; the payload stays on disk.
#[derive(Debug)]
pub(super) struct Entry {
    pub(super) handle: Handle,
    pub(super) tool_args: Arc<str>,
    pub(super) payload_sha256: String,
}

/// An index line as written.
#[derive(Serialize)]
pub(super) struct LineOut<'a> {
    pub(super) v: u64,
    pub(super) mem_id: &'a str,
    pub(super) tool_call_id: &'a str,
    pub(super) tool_name: &'a str,
    pub(super) tool_args: &'a str,
    pub(super) payload_sha256: &'a str,
    pub(super) handle: &'a Handle,
}

/// An index line as read. Unknown fields are ignored so a later minor
/// addition does not need a version bump.
#[derive(Deserialize)]
struct LineIn {
    v: u64,
    mem_id: String,
    tool_call_id: String,
    tool_name: String,
    tool_args: String,
    payload_sha256: String,
    handle: Handle,
}

/// Why an index line was rejected.
pub(super) enum LineProblem {
    /// Not JSON at all: what a torn or garbage write looks like. Tolerated
    /// as the last line, fatal in the middle.
    Unparsable(String),
    /// Well-formed JSON that is not a valid record (other version, fields
    /// disagreeing, bad hash). Never produced by a crash, so always fatal,
    /// and never truncated away: it may be a newer writer's record.
    Invalid(String),
}

/// Reads complete lines from `known.offset` on and adds their records.
/// Caller holds the lock file (shared or exclusive).
///
/// Stops before a line with no newline (torn, or still being written) and
/// before an unparsable line that nothing complete follows; in both cases
/// `offset` stays at the line's start, so if a writer later truncates it and
/// appends, the new line is read from the right place.
pub(super) fn read_new_lines(
    index: &File,
    path: &Path,
    known: &mut Known,
) -> Result<(), LedgerError> {
    let mut f = index;
    f.seek(SeekFrom::Start(known.offset))
        .map_err(io_err(path))?;
    let mut reader = BufReader::new(f);
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(io_err(path))?;
        let Some(body) = line.strip_suffix(b"\n") else {
            // End of file, or a torn tail.
            return Ok(());
        };
        let line_no = known.lines + 1;
        match parse_line(body) {
            Ok(entry) => known.insert(entry),
            Err(LineProblem::Invalid(reason)) => return Err(corrupt_line(path, line_no, &reason)),
            Err(LineProblem::Unparsable(reason)) => {
                line.clear();
                reader.read_until(b'\n', &mut line).map_err(io_err(path))?;
                if line.ends_with(b"\n") {
                    return Err(corrupt_line(path, line_no, &reason));
                }
                return Ok(());
            }
        }
        known.offset += n as u64;
        known.lines += 1;
    }
}

pub(super) fn parse_line(bytes: &[u8]) -> Result<Entry, LineProblem> {
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| LineProblem::Unparsable(format!("not JSON ({e})")))?;
    match value.get("v").and_then(serde_json::Value::as_u64) {
        Some(FORMAT_VERSION) => {}
        Some(v) => {
            return Err(LineProblem::Invalid(format!(
                "unsupported format version {v} (this build reads {})",
                FORMAT_VERSION
            )));
        }
        None => {
            return Err(LineProblem::Invalid(
                "no format version field \"v\"".to_owned(),
            ));
        }
    }
    let line: LineIn = serde_json::from_value(value)
        .map_err(|e| LineProblem::Invalid(format!("not a ledger record ({e})")))?;
    let h = &line.handle;
    if h.mem_id != line.mem_id
        || h.tool_call_id != line.tool_call_id
        || h.tool_name != line.tool_name
    {
        return Err(LineProblem::Invalid(format!(
            "handle disagrees with the record it is stored in ({})",
            line.mem_id
        )));
    }
    if !is_sha256_hex(&line.payload_sha256) {
        return Err(LineProblem::Invalid(format!(
            "payload_sha256 of {} is not 64 lowercase hex digits",
            line.mem_id
        )));
    }
    debug_assert_eq!(line.v, FORMAT_VERSION);
    Ok(Entry {
        handle: line.handle,
        tool_args: line.tool_args.into(),
        payload_sha256: line.payload_sha256,
    })
}

fn corrupt_line(path: &Path, line_no: u64, reason: &str) -> LedgerError {
    LedgerError::Corrupt {
        path: display(path),
        reason: format!("line {line_no}: {reason}"),
    }
}

/// Whether `s` is a payload's name: 64 lowercase hex digits, so a hostile
/// index line cannot point outside the payload directory.
pub(super) fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::sha256_hex;
    use crate::ledger::ToolResultLedger;
    use crate::ledger::durable::tests::{AWKWARD, append_raw, index_text};
    use crate::ledger::durable::{DurableLedger, INDEX_FILE, PAYLOAD_DIR};
    use std::fs;

    #[test]
    fn index_lines_are_compact_versioned_json() {
        let tmp = tempfile::tempdir().unwrap();
        let l = DurableLedger::open(tmp.path()).unwrap();
        let h = l.record("c1", "bash", "{}", AWKWARD).unwrap();
        let text = index_text(tmp.path());
        assert!(text.ends_with('\n'));
        assert_eq!(text.lines().count(), 1);
        let v: serde_json::Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(v["v"], 1);
        assert_eq!(v["mem_id"], h.mem_id.as_str());
        assert_eq!(v["tool_call_id"], "c1");
        assert_eq!(v["tool_name"], "bash");
        assert_eq!(v["tool_args"], "{}");
        let sha = sha256_hex(AWKWARD.as_bytes());
        assert_eq!(v["payload_sha256"], sha.as_str());
        assert_eq!(v["handle"], serde_json::to_value(&h).unwrap());
        let file = tmp.path().join(PAYLOAD_DIR).join(&sha[..2]).join(&sha);
        assert_eq!(fs::read(file).unwrap(), AWKWARD.as_bytes());
    }

    #[test]
    fn unparsable_last_line_is_ignored_and_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let l = DurableLedger::open(tmp.path()).unwrap();
            l.record("c0", "t", "{}", "p0").unwrap();
        }
        append_raw(tmp.path(), b"\0\0\0garbage\n");
        let l = DurableLedger::open(tmp.path()).unwrap();
        assert_eq!(l.handles().unwrap().len(), 1);
        l.record("c1", "t", "{}", "p1").unwrap();
        drop(l);
        let l = DurableLedger::open(tmp.path()).unwrap();
        assert_eq!(l.handles().unwrap().len(), 2);
    }

    #[test]
    fn corrupt_middle_line_names_file_and_line_number() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let l = DurableLedger::open(tmp.path()).unwrap();
            for i in 0..3 {
                l.record(&format!("c{i}"), "t", "{}", "p").unwrap();
            }
        }
        let text = index_text(tmp.path());
        let lines: Vec<&str> = text.lines().collect();
        let broken = format!(
            "{}\nnot json at all\n{}\n{}\n",
            lines[0], lines[1], lines[2]
        );
        fs::write(tmp.path().join(INDEX_FILE), broken).unwrap();
        match DurableLedger::open(tmp.path()) {
            Err(LedgerError::Corrupt { path, reason }) => {
                assert!(path.ends_with(INDEX_FILE), "{path}");
                assert!(reason.starts_with("line 2:"), "{reason}");
            }
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }

    #[test]
    fn well_formed_but_invalid_lines_are_corrupt_even_when_last() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let l = DurableLedger::open(tmp.path()).unwrap();
            l.record("c0", "t", "{}", "p").unwrap();
        }
        let good = index_text(tmp.path());
        let first = good.trim_end();
        let cases = [
            (
                first.replace("\"v\":1", "\"v\":2"),
                "unsupported format version 2",
            ),
            (
                first.replace(&sha256_hex(b"p"), "../../../../etc/passwd"),
                "not 64 lowercase hex",
            ),
            (
                first.replacen("\"mem_id\":\"tm_", "\"mem_id\":\"tx_", 1),
                "disagrees",
            ),
        ];
        for (line, want) in cases {
            fs::write(tmp.path().join(INDEX_FILE), format!("{first}\n{line}\n")).unwrap();
            match DurableLedger::open(tmp.path()) {
                Err(LedgerError::Corrupt { reason, .. }) => {
                    assert!(reason.starts_with("line 2:"), "{reason}");
                    assert!(reason.contains(want), "{reason}");
                }
                other => panic!("expected Corrupt, got {other:?}"),
            }
        }
    }
}

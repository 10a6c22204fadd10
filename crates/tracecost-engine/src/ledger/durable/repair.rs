//! [`DurableLedger::repair`]: setting aside, byte for byte, the index
//! lines that keep a ledger from opening, and keeping every intact record.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::index::{LineProblem, parse_line};
use super::io_error::io_err;
use super::{
    DurableLedger, FileLock, INDEX_FILE, LOCK_FILE, PAYLOAD_DIR, open_rw, read_payload, sync_dir,
    write_then_rename,
};
use crate::ledger::LedgerError;

const DAMAGED_FILE: &str = "index.damaged.jsonl";
const REPAIR_TMP: &str = "index.jsonl.repair.tmp";

/// What [`DurableLedger::repair`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairSummary {
    /// Records kept in the index.
    pub kept: usize,
    /// Lines moved to [`RepairSummary::damaged_file`], in index order.
    pub set_aside: Vec<SetAside>,
    /// Where set-aside lines are appended (`index.damaged.jsonl`).
    pub damaged_file: PathBuf,
}

/// One index line [`DurableLedger::repair`] set aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetAside {
    /// Its line number in the index before the repair, from 1.
    pub line: u64,
    /// Why it was not kept.
    pub reason: String,
}

impl DurableLedger {
    /// Repairs the ledger in `dir` so it opens again: every intact record
    /// (a valid index line whose payload is present and hashes to its name)
    /// stays in the index, in order; every other complete line — not JSON,
    /// not a record this build reads, or naming a missing or altered
    /// payload — is appended, byte for byte, to `index.damaged.jsonl` next
    /// to the index, and so is a torn last line. Nothing is deleted: payload
    /// files stay where they are, and the damaged lines can be put back by
    /// hand. A ledger with nothing damaged is left untouched.
    ///
    /// The set-aside lines are made durable before the index is replaced
    /// (temp file, sync, rename), so a crash at any point loses no line.
    /// Holds the writer lock throughout; run it while no other process has
    /// the ledger open, since a process that opened it earlier keeps
    /// reading the index file it opened.
    ///
    /// # Errors
    ///
    /// [`LedgerError::Io`] if `dir` holds no index or a file cannot be read
    /// or written.
    pub fn repair(dir: impl AsRef<Path>) -> Result<RepairSummary, LedgerError> {
        let dir = dir.as_ref();
        let index_path = dir.join(INDEX_FILE);
        let lock_path = dir.join(LOCK_FILE);
        let damaged_path = dir.join(DAMAGED_FILE);
        // Refuse before creating anything: repairing a directory that is
        // not a ledger must not turn it into one.
        let meta = fs::metadata(&index_path).map_err(io_err(&index_path))?;
        if !meta.is_file() {
            return Err(io_err(&index_path)(io::Error::other("not a file")));
        }
        let lock = open_rw(&lock_path)?;
        let _flock = FileLock::exclusive(&lock, &lock_path)?;
        let bytes = fs::read(&index_path).map_err(io_err(&index_path))?;
        let payload_dir = dir.join(PAYLOAD_DIR);
        let mut kept = Vec::with_capacity(bytes.len());
        let mut aside = Vec::new();
        let mut report = RepairSummary {
            kept: 0,
            set_aside: Vec::new(),
            damaged_file: damaged_path.clone(),
        };
        for (i, line) in bytes.split_inclusive(|&b| b == b'\n').enumerate() {
            let line_no = i as u64 + 1;
            let Some(body) = line.strip_suffix(b"\n") else {
                report.set_aside.push(SetAside {
                    line: line_no,
                    reason: "torn last line (no newline)".to_owned(),
                });
                aside.extend_from_slice(line);
                aside.push(b'\n');
                continue;
            };
            let problem = match parse_line(body) {
                // A payload that cannot be read for another reason (I/O)
                // is a storage failure, not damage: stop, change nothing.
                Ok(entry) => match read_payload(&payload_dir, &index_path, &entry) {
                    Ok(_) => None,
                    Err(LedgerError::Corrupt { reason, .. }) => Some(reason),
                    Err(e) => return Err(e),
                },
                Err(LineProblem::Invalid(r) | LineProblem::Unparsable(r)) => Some(r),
            };
            match problem {
                None => {
                    kept.extend_from_slice(line);
                    report.kept += 1;
                }
                Some(reason) => {
                    report.set_aside.push(SetAside {
                        line: line_no,
                        reason,
                    });
                    aside.extend_from_slice(line);
                }
            }
        }
        if report.set_aside.is_empty() {
            return Ok(report);
        }
        // First the damaged lines, durably, then the index without them.
        let mut f = OpenOptions::new()
            .append(true)
            .create(true)
            .open(&damaged_path)
            .map_err(io_err(&damaged_path))?;
        f.write_all(&aside).map_err(io_err(&damaged_path))?;
        f.sync_all().map_err(io_err(&damaged_path))?;
        write_then_rename(&dir.join(REPAIR_TMP), &index_path, &kept)?;
        sync_dir(dir)?;
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handle::{Handle, sha256_hex};
    use crate::ledger::ToolResultLedger;
    use crate::ledger::durable::tests::index_text;

    #[test]
    fn repair_keeps_intact_records_and_sets_the_rest_aside_byte_for_byte() {
        let tmp = tempfile::tempdir().unwrap();
        let handles: Vec<Handle> = {
            let l = DurableLedger::open(tmp.path()).unwrap();
            (0..4)
                .map(|i| {
                    l.record(&format!("c{i}"), "t", "{}", &format!("p{i}"))
                        .unwrap()
                })
                .collect()
        };
        let text = index_text(tmp.path());
        let lines: Vec<&str> = text.lines().collect();
        // Line 2 is not JSON, line 4 names a payload that is gone, and a
        // torn fragment follows.
        let sha3 = sha256_hex(b"p3");
        fs::remove_file(tmp.path().join(PAYLOAD_DIR).join(&sha3[..2]).join(&sha3)).unwrap();
        let broken = format!(
            "{}\nnot json\n{}\n{}\n{{\"v\":1,\"mem",
            lines[0], lines[2], lines[3]
        );
        fs::write(tmp.path().join(INDEX_FILE), &broken).unwrap();
        assert!(DurableLedger::open(tmp.path()).is_err());

        let report = DurableLedger::repair(tmp.path()).unwrap();
        assert_eq!(report.kept, 2);
        let set: Vec<u64> = report.set_aside.iter().map(|s| s.line).collect();
        assert_eq!(set, vec![2, 4, 5]);
        assert!(report.set_aside[1].reason.contains("missing"), "{report:?}");
        assert_eq!(
            index_text(tmp.path()),
            format!("{}\n{}\n", lines[0], lines[2])
        );
        let aside = fs::read_to_string(tmp.path().join(DAMAGED_FILE)).unwrap();
        assert_eq!(aside, format!("not json\n{}\n{{\"v\":1,\"mem\n", lines[3]));
        let l = DurableLedger::open(tmp.path()).unwrap();
        assert_eq!(
            l.handles().unwrap(),
            vec![handles[0].clone(), handles[2].clone()]
        );
        drop(l);
        // Nothing left to repair: nothing changes.
        let report = DurableLedger::repair(tmp.path()).unwrap();
        assert_eq!((report.kept, report.set_aside.len()), (2, 0));
        assert_eq!(
            fs::read_to_string(tmp.path().join(DAMAGED_FILE)).unwrap(),
            aside
        );
    }

    #[test]
    fn repair_of_a_directory_without_an_index_creates_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(matches!(
            DurableLedger::repair(tmp.path().join("none")),
            Err(LedgerError::Io { .. })
        ));
        assert!(DurableLedger::repair(tmp.path()).is_err());
        assert_eq!(fs::read_dir(tmp.path()).unwrap().count(), 0);
    }
}

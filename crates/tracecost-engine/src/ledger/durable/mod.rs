//! A ledger in a directory, shared between processes.
//!
//! # Layout
//!
//! ```text
//! <dir>/
//!   index.jsonl            append-only; one compact JSON object per line
//!   lock                   advisory lock file (`File::lock`) for writers
//!   payloads/ab/ab12…ef    payload bytes, named by their SHA-256 (hex)
//!   tmp/                   payloads being written; emptied on open
//!   index.damaged.jsonl    lines [`DurableLedger::repair`] set aside, if any
//! ```
//!
//! Each index line is
//! `{"v":1,"mem_id":…,"tool_call_id":…,"tool_name":…,"tool_args":…,"payload_sha256":…,"handle":{…}}`
//! with the full [`Handle`], so a reopened ledger hands back exactly the
//! handle `record` returned. Payloads are content-addressed: identical
//! payloads share one file.
//!
//! # Why it survives crashes
//!
//! A record becomes visible only when its index line is complete, and the
//! line is appended only after the payload it names is durable (temp file,
//! `sync_all`, rename, directory fsync). So a crash leaves at worst an
//! orphaned payload file (harmless, never listed) and a torn last index line
//! (no trailing newline), which readers ignore and the next writer truncates
//! before appending.
//!
//! # Why it is safe between processes
//!
//! Writers hold an exclusive lock on `lock` while they re-read the index,
//! repair a torn tail and append; readers that re-read the index hold a
//! shared lock. So `record` is idempotent on the tool call id across
//! processes, and no reader ever sees a line while it is being truncated.
//! Payload files are immutable once renamed in, so reading them needs no
//! lock.
//!
//! # Modules
//!
//! This module is the store: opening, recording, looking up, payload files
//! and locks. The index file's format — the line, how an instance reads
//! the lines it has not seen, which lines it rejects — is [`index`]; the
//! offline [`DurableLedger::repair`] of a damaged index is [`repair`].

mod index;
mod io_error;
mod repair;

pub use repair::{RepairSummary, SetAside};

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{LedgerError, Recorded, ToolResultLedger};
use crate::handle::{Handle, sha256_hex};
use index::{Entry, Known, LineOut, is_sha256_hex, read_new_lines};
use io_error::{display, io_err};

const INDEX_FILE: &str = "index.jsonl";
const LOCK_FILE: &str = "lock";
const PAYLOAD_DIR: &str = "payloads";
const TMP_DIR: &str = "tmp";

/// A file-backed [`ToolResultLedger`] in one directory, safe to share
/// between threads and between processes.
///
/// Metadata of every record (handle, tool arguments, payload hash) is kept
/// in memory; payloads stay on disk and are read, and hash-checked, on each
/// `get`.
#[derive(Debug)]
pub struct DurableLedger {
    dir: PathBuf,
    index_path: PathBuf,
    lock_path: PathBuf,
    payload_dir: PathBuf,
    tmp_dir: PathBuf,
    inner: Mutex<Inner>,
}

/// Everything behind the in-process mutex. The lock file lives here too:
/// `flock`-style locks belong to the open file, so two threads sharing one
/// handle would not exclude each other; the mutex does that.
#[derive(Debug)]
struct Inner {
    index: File,
    lock: File,
    known: Known,
    /// Payload shard directories whose entry in `payloads/` this instance
    /// has fsynced. A shard may have been created by a process that died
    /// before syncing it, so every instance syncs each shard it writes into
    /// once.
    synced_shards: HashSet<String>,
}

impl DurableLedger {
    /// The index format version this code reads and writes (`"v"`).
    pub const FORMAT_VERSION: u64 = index::FORMAT_VERSION;

    /// Opens the ledger in `dir`, creating the directory and its layout if
    /// missing.
    ///
    /// Reads the whole index, ignoring a torn last line, then (holding the
    /// writer lock) truncates that torn tail and empties `tmp/`, so every
    /// later append starts on a line boundary.
    ///
    /// # Errors
    ///
    /// [`LedgerError::Io`] if the directory or its files cannot be created
    /// or read, [`LedgerError::Corrupt`] if a line before the last one is
    /// not a valid record (the reason names the line number).
    pub fn open(dir: impl AsRef<Path>) -> Result<DurableLedger, LedgerError> {
        let dir = dir.as_ref().to_path_buf();
        let existed = dir.is_dir();
        fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        if !existed {
            // Best effort: make the new directory's own entry durable. A
            // relative path may have an empty parent, which cannot be
            // opened; the ledger still works, only less durably.
            if let Some(parent) = dir.parent() {
                let _ = sync_dir(parent);
            }
        }
        let payload_dir = dir.join(PAYLOAD_DIR);
        let tmp_dir = dir.join(TMP_DIR);
        fs::create_dir_all(&payload_dir).map_err(io_err(&payload_dir))?;
        fs::create_dir_all(&tmp_dir).map_err(io_err(&tmp_dir))?;
        let index_path = dir.join(INDEX_FILE);
        let lock_path = dir.join(LOCK_FILE);
        let index = open_rw(&index_path)?;
        let lock = open_rw(&lock_path)?;
        // Make the entries just created (or created by a process that died
        // before syncing them) durable before anything refers to them.
        sync_dir(&dir)?;
        sync_dir(&payload_dir)?;

        let ledger = DurableLedger {
            dir,
            index_path,
            lock_path,
            payload_dir,
            tmp_dir,
            inner: Mutex::new(Inner {
                index,
                lock,
                known: Known::default(),
                synced_shards: HashSet::new(),
            }),
        };
        {
            let mut guard = ledger.lock_inner();
            let inner = &mut *guard;
            let _flock = FileLock::exclusive(&inner.lock, &ledger.lock_path)?;
            read_new_lines(&inner.index, &ledger.index_path, &mut inner.known)?;
            ledger.truncate_torn_tail(&inner.index, inner.known.offset)?;
            // Only safe under the exclusive lock: a live writer keeps its
            // temp file only while holding it.
            ledger.clear_tmp();
        }
        Ok(ledger)
    }

    /// The directory this ledger lives in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Handles of every record, in the order they were appended, including
    /// records other processes appended since the last look.
    ///
    /// # Errors
    ///
    /// As for re-reading the index: [`LedgerError::Io`] or
    /// [`LedgerError::Corrupt`].
    pub fn handles(&self) -> Result<Vec<Handle>, LedgerError> {
        let mut guard = self.lock_inner();
        self.refresh_shared(&mut guard)?;
        Ok(guard.known.order.iter().map(|e| e.handle.clone()).collect())
    }

    fn lock_inner(&self) -> MutexGuard<'_, Inner> {
        // Every mutation of `Known` keeps it consistent with `offset` (a
        // line is inserted, then the offset advances; re-reading a line is a
        // no-op), so a panic while holding the lock leaves nothing to repair.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads lines other processes appended, under a shared lock so no
    /// writer is mid-way through truncating or appending.
    fn refresh_shared(&self, inner: &mut Inner) -> Result<(), LedgerError> {
        let _flock = FileLock::shared(&inner.lock, &self.lock_path)?;
        read_new_lines(&inner.index, &self.index_path, &mut inner.known)
    }

    /// Cuts the index back to `offset` (the end of the last valid line) if
    /// anything follows it: a torn line from a crashed writer, or an
    /// unparsable last line. Caller holds the exclusive lock.
    fn truncate_torn_tail(&self, index: &File, offset: u64) -> Result<(), LedgerError> {
        let len = index.metadata().map_err(io_err(&self.index_path))?.len();
        if len < offset {
            return Err(LedgerError::Corrupt {
                path: display(&self.index_path),
                reason: format!(
                    "index shrank to {len} bytes, but {offset} bytes were already read"
                ),
            });
        }
        if len > offset {
            index.set_len(offset).map_err(io_err(&self.index_path))?;
            index.sync_data().map_err(io_err(&self.index_path))?;
        }
        Ok(())
    }

    /// Removes leftovers of writers that died between creating a temp file
    /// and renaming it. Best effort: a leftover wastes space, nothing more.
    fn clear_tmp(&self) {
        let Ok(entries) = fs::read_dir(&self.tmp_dir) else {
            return;
        };
        for entry in entries.flatten() {
            let _ = fs::remove_file(entry.path());
        }
    }

    /// Makes `bytes` durable at its content address. Caller holds the
    /// exclusive lock, so the temp file name cannot clash with another
    /// writer's.
    fn store_payload(
        &self,
        synced_shards: &mut HashSet<String>,
        sha: &str,
        bytes: &[u8],
    ) -> Result<(), LedgerError> {
        let Some((shard, shard_dir, path)) = payload_path(&self.payload_dir, sha) else {
            return Err(LedgerError::Corrupt {
                path: display(&self.payload_dir),
                reason: format!("not a SHA-256 hex digest: {sha:?}"),
            });
        };
        // Already stored (identical payload, or a writer that died after the
        // rename but before its index line). The length check catches a file
        // cut short outside this code, which is then replaced.
        let present = fs::metadata(&path)
            .map(|meta| meta.is_file() && meta.len() == bytes.len() as u64)
            .unwrap_or(false);
        if !present {
            self.write_payload_file(sha, &shard_dir, &path, bytes)?;
        }
        // Synced even when the file was already there: the writer that
        // renamed it in may have died before syncing the directory, and the
        // index line about to be appended must not outlive the file.
        sync_dir(&shard_dir)?;
        if !synced_shards.contains(&shard) {
            sync_dir(&self.payload_dir)?;
            synced_shards.insert(shard);
        }
        Ok(())
    }

    /// Writes `bytes` to a temp file, syncs it and renames it to `path`, so
    /// `path` never names a partial payload.
    fn write_payload_file(
        &self,
        sha: &str,
        shard_dir: &Path,
        path: &Path,
        bytes: &[u8],
    ) -> Result<(), LedgerError> {
        fs::create_dir_all(shard_dir).map_err(io_err(shard_dir))?;
        let tmp_path = self
            .tmp_dir
            .join(format!("{sha}.{}.tmp", std::process::id()));
        write_then_rename(&tmp_path, path, bytes)
    }

    /// Appends one complete line at `offset` (the end of the file: the
    /// caller holds the exclusive lock and has truncated any torn tail).
    fn append_line(&self, index: &File, offset: u64, line: &[u8]) -> Result<(), LedgerError> {
        let mut f = index;
        f.seek(SeekFrom::Start(offset))
            .map_err(io_err(&self.index_path))?;
        // One write_all of the whole line: if it fails part-way the newline,
        // which comes last, is missing, so no reader takes the fragment for
        // a record; cut it off now rather than leave it to the next writer.
        if let Err(e) = f.write_all(line) {
            let _ = index.set_len(offset);
            return Err(io_err(&self.index_path)(e));
        }
        // If this fails the line may or may not be durable; it is already
        // visible, so it is not removed (a reader may have seen it). The
        // next refresh picks it up either way.
        index.sync_data().map_err(io_err(&self.index_path))
    }

    /// Reads and verifies the payload of `entry`.
    fn load(&self, entry: &Entry) -> Result<Recorded, LedgerError> {
        read_payload(&self.payload_dir, &self.index_path, entry)
    }

    /// Reads the payload of `entry`, if any, outside the mutex: payloads
    /// are immutable, and a big read should not stall other threads.
    fn load_found(&self, entry: Option<Arc<Entry>>) -> Result<Option<Recorded>, LedgerError> {
        entry.map(|e| self.load(&e)).transpose()
    }
}

impl ToolResultLedger for DurableLedger {
    fn record(
        &self,
        tool_call_id: &str,
        tool_name: &str,
        tool_args: &str,
        content: &str,
    ) -> Result<Handle, LedgerError> {
        // Hashed before taking the mutex: it is what identifies the result.
        let sha = sha256_hex(content.as_bytes());
        let mut guard = self.lock_inner();
        if let Some(h) = guard.known.find(tool_call_id, tool_name, &sha) {
            return Ok(h);
        }
        let inner = &mut *guard;
        let _flock = FileLock::exclusive(&inner.lock, &self.lock_path)?;
        // Another process may have recorded this result since we last looked.
        read_new_lines(&inner.index, &self.index_path, &mut inner.known)?;
        if let Some(h) = inner.known.find(tool_call_id, tool_name, &sha) {
            return Ok(h);
        }
        let handle = Handle::derive(tool_call_id, tool_name, content);
        if inner.known.by_mem_id.contains_key(&handle.mem_id) {
            return Err(LedgerError::MemIdConflict {
                mem_id: handle.mem_id,
            });
        }
        let offset = inner.known.offset;
        self.truncate_torn_tail(&inner.index, offset)?;

        self.store_payload(&mut inner.synced_shards, &sha, content.as_bytes())?;

        let mut line = serde_json::to_string(&LineOut {
            v: Self::FORMAT_VERSION,
            mem_id: &handle.mem_id,
            tool_call_id,
            tool_name,
            tool_args,
            payload_sha256: &sha,
            handle: &handle,
        })
        .map_err(|e| io_err(&self.index_path)(io::Error::other(e)))?;
        line.push('\n');
        self.append_line(&inner.index, offset, line.as_bytes())?;

        inner.known.insert(Entry {
            handle: handle.clone(),
            tool_args: tool_args.into(),
            payload_sha256: sha,
        });
        inner.known.offset = offset + line.len() as u64;
        inner.known.lines += 1;
        Ok(handle)
    }

    fn get(&self, mem_id: &str) -> Result<Option<Recorded>, LedgerError> {
        let entry = {
            let mut guard = self.lock_inner();
            match guard.known.by_mem_id.get(mem_id) {
                Some(e) => Some(e.clone()),
                // A mem_id names one record forever: re-read only on a miss.
                None => {
                    self.refresh_shared(&mut guard)?;
                    guard.known.by_mem_id.get(mem_id).cloned()
                }
            }
        };
        self.load_found(entry)
    }

    fn get_by_call_id(&self, tool_call_id: &str) -> Result<Option<Recorded>, LedgerError> {
        let entry = {
            let mut guard = self.lock_inner();
            // Always re-read: another process may have recorded a second
            // result under this id, which makes it ambiguous.
            self.refresh_shared(&mut guard)?;
            guard.known.by_call_id(tool_call_id)?
        };
        self.load_found(entry)
    }
}

/// Reads and verifies the payload of `entry` from `payload_dir`.
fn read_payload(
    payload_dir: &Path,
    index_path: &Path,
    entry: &Entry,
) -> Result<Recorded, LedgerError> {
    let Some((_, _, path)) = payload_path(payload_dir, &entry.payload_sha256) else {
        // Unreachable for entries that passed `parse_line`; kept as an
        // error rather than a panic all the same.
        return Err(LedgerError::Corrupt {
            path: display(index_path),
            reason: format!("{}: bad payload hash", entry.handle.mem_id),
        });
    };
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(LedgerError::Corrupt {
                path: display(&path),
                reason: format!("payload of {} is missing", entry.handle.mem_id),
            });
        }
        Err(e) => return Err(io_err(&path)(e)),
    };
    let actual = sha256_hex(&bytes);
    if actual != entry.payload_sha256 {
        return Err(LedgerError::Corrupt {
            path: display(&path),
            reason: format!(
                "payload of {} hashes to {actual}, not to its name",
                entry.handle.mem_id
            ),
        });
    }
    let payload = String::from_utf8(bytes).map_err(|_| LedgerError::Corrupt {
        path: display(&path),
        reason: format!("payload of {} is not UTF-8", entry.handle.mem_id),
    })?;
    Ok(Recorded {
        handle: entry.handle.clone(),
        tool_args: entry.tool_args.clone(),
        payload: payload.into(),
    })
}

/// `payloads/<first 2 hex>` and `payloads/<first 2 hex>/<hex>`, or `None`
/// if `sha` is not 64 lowercase hex digits (so a hostile index cannot point
/// outside the payload directory).
fn payload_path(payload_dir: &Path, sha: &str) -> Option<(String, PathBuf, PathBuf)> {
    if !is_sha256_hex(sha) {
        return None;
    }
    let shard = sha.get(..2)?.to_owned();
    let shard_dir = payload_dir.join(&shard);
    let file = shard_dir.join(sha);
    Some((shard, shard_dir, file))
}

fn open_rw(path: &Path) -> Result<File, LedgerError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(io_err(path))
}

/// Writes `bytes` to `tmp_path`, syncs it and renames it to `path`, so
/// `path` never names a partial file; on failure the temp file is removed.
/// The caller syncs the directory of `path` to make the rename durable.
fn write_then_rename(tmp_path: &Path, path: &Path, bytes: &[u8]) -> Result<(), LedgerError> {
    let written = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(tmp_path)?;
        f.write_all(bytes)?;
        f.sync_all()
    })();
    if let Err(e) = written {
        let _ = fs::remove_file(tmp_path);
        return Err(io_err(tmp_path)(e));
    }
    if let Err(e) = fs::rename(tmp_path, path) {
        let _ = fs::remove_file(tmp_path);
        return Err(io_err(path)(e));
    }
    Ok(())
}

/// Makes a directory's entries (renames, creations) durable. Only unix lets
/// a directory be opened and synced; elsewhere the rename is all there is.
fn sync_dir(path: &Path) -> Result<(), LedgerError> {
    #[cfg(unix)]
    {
        File::open(path)
            .and_then(|d| d.sync_all())
            .map_err(io_err(path))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

/// Holds a lock on the lock file until dropped. The OS also drops it when
/// the process dies, so a killed writer never wedges the ledger.
struct FileLock<'a> {
    file: &'a File,
}

impl<'a> FileLock<'a> {
    fn exclusive(file: &'a File, path: &Path) -> Result<Self, LedgerError> {
        file.lock().map_err(io_err(path))?;
        Ok(FileLock { file })
    }

    fn shared(file: &'a File, path: &Path) -> Result<Self, LedgerError> {
        file.lock_shared().map_err(io_err(path))?;
        Ok(FileLock { file })
    }
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        // Failure leaves the lock to be released when the file is closed.
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    //! The store's tests; the helpers are shared with the tests of the
    //! index format and of the repair.
    use super::*;
    use std::io::Read;

    pub(super) const AWKWARD: &str = "line1\r\nünïcödé 日本語 🦀\u{0}tab\there\n\r\n";

    pub(super) fn index_text(dir: &Path) -> String {
        fs::read_to_string(dir.join(INDEX_FILE)).unwrap()
    }

    pub(super) fn payload_files(dir: &Path) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for shard in fs::read_dir(dir.join(PAYLOAD_DIR)).unwrap() {
            for f in fs::read_dir(shard.unwrap().path()).unwrap() {
                out.push(f.unwrap().path());
            }
        }
        out
    }

    pub(super) fn append_raw(dir: &Path, bytes: &[u8]) {
        let mut f = OpenOptions::new()
            .append(true)
            .open(dir.join(INDEX_FILE))
            .unwrap();
        f.write_all(bytes).unwrap();
    }

    #[test]
    fn round_trip_is_byte_exact_and_survives_reopen() {
        let tmp = tempfile::tempdir().unwrap();
        let payloads = [
            AWKWARD,
            "",
            r#"{"zeta":[{"asin":"B1"}],"alpha":1}"#,
            "\u{0}\u{0}\u{0}",
        ];
        let mut handles = Vec::new();
        {
            let l = DurableLedger::open(tmp.path()).unwrap();
            for (i, p) in payloads.iter().enumerate() {
                let h = l
                    .record(&format!("call_{i}"), "tool", r#"{"q":"é"}"#, p)
                    .unwrap();
                assert_eq!(h, Handle::derive(&format!("call_{i}"), "tool", p));
                let rec = l.get(&h.mem_id).unwrap().unwrap();
                assert_eq!(&*rec.payload, *p);
                assert_eq!(&*rec.tool_args, r#"{"q":"é"}"#);
                handles.push(h);
            }
        }
        let l = DurableLedger::open(tmp.path()).unwrap();
        assert_eq!(l.handles().unwrap(), handles);
        for (h, p) in handles.iter().zip(payloads) {
            let rec = l.get(&h.mem_id).unwrap().unwrap();
            assert_eq!(&rec.handle, h);
            assert_eq!(&*rec.payload, p);
            let by_call = l.get_by_call_id(&h.tool_call_id).unwrap().unwrap();
            assert_eq!(by_call, rec);
        }
        assert_eq!(l.get("tm_0000000000000000").unwrap(), None);
        assert_eq!(l.get_by_call_id("nope").unwrap(), None);
    }

    #[test]
    fn record_is_idempotent_on_the_result_even_after_reopen() {
        let tmp = tempfile::tempdir().unwrap();
        let h1 = {
            let l = DurableLedger::open(tmp.path()).unwrap();
            let h1 = l.record("toolu_1", "t", "{}", "first").unwrap();
            let h2 = l.record("toolu_1", "t", "{\"x\":1}", "first").unwrap();
            assert_eq!(h1, h2);
            h1
        };
        let before = index_text(tmp.path());
        let l = DurableLedger::open(tmp.path()).unwrap();
        assert_eq!(l.record("toolu_1", "t", "{}", "first").unwrap(), h1);
        assert_eq!(index_text(tmp.path()), before);
        assert_eq!(payload_files(tmp.path()).len(), 1);
        let rec = l.get_by_call_id("toolu_1").unwrap().unwrap();
        assert_eq!(&*rec.payload, "first");
        assert_eq!(&*rec.tool_args, "{}");
    }

    #[test]
    fn a_reused_call_id_gets_its_own_record_and_lookups_by_it_refuse_to_guess() {
        let tmp = tempfile::tempdir().unwrap();
        let first = {
            let l = DurableLedger::open(tmp.path()).unwrap();
            l.record("toolu_1", "t", "{}", "first").unwrap()
        };
        // Another conversation, another process, the same id.
        let l = DurableLedger::open(tmp.path()).unwrap();
        let second = l.record("toolu_1", "t", "{}", "second").unwrap();
        assert_ne!(first.mem_id, second.mem_id);
        assert_eq!(&*l.get(&first.mem_id).unwrap().unwrap().payload, "first");
        assert_eq!(&*l.get(&second.mem_id).unwrap().unwrap().payload, "second");
        // The same result again is still a lookup, whichever it is.
        assert_eq!(l.record("toolu_1", "t", "{}", "first").unwrap(), first);
        assert_eq!(index_text(tmp.path()).lines().count(), 2);
        // A first instance that has not looked since sees the second record.
        let again = DurableLedger::open(tmp.path()).unwrap();
        for ledger in [&l, &again] {
            match ledger.get_by_call_id("toolu_1") {
                Err(LedgerError::AmbiguousCallId { mem_ids, .. }) => {
                    assert_eq!(mem_ids, vec![first.mem_id.clone(), second.mem_id.clone()]);
                }
                other => panic!("expected AmbiguousCallId, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_mem_id_naming_other_content_is_refused_not_reused() {
        let tmp = tempfile::tempdir().unwrap();
        {
            let l = DurableLedger::open(tmp.path()).unwrap();
            l.record("c0", "t", "{}", "p").unwrap();
        }
        // An index line whose payload hash was edited to other content.
        let text = index_text(tmp.path());
        let edited = text.replace(&sha256_hex(b"p"), &sha256_hex(b"q"));
        fs::write(tmp.path().join(INDEX_FILE), edited).unwrap();
        let l = DurableLedger::open(tmp.path()).unwrap();
        assert!(matches!(
            l.record("c0", "t", "{}", "p"),
            Err(LedgerError::MemIdConflict { .. })
        ));
    }

    #[test]
    fn identical_payloads_are_stored_once() {
        let tmp = tempfile::tempdir().unwrap();
        let l = DurableLedger::open(tmp.path()).unwrap();
        let a = l.record("a", "t", "{}", AWKWARD).unwrap();
        let b = l.record("b", "u", "{}", AWKWARD).unwrap();
        l.record("c", "t", "{}", "other").unwrap();
        assert_ne!(a.mem_id, b.mem_id);
        assert_eq!(payload_files(tmp.path()).len(), 2);
        assert_eq!(index_text(tmp.path()).lines().count(), 3);
        assert_eq!(&*l.get(&b.mem_id).unwrap().unwrap().payload, AWKWARD);
    }

    #[test]
    fn torn_tail_is_ignored_then_truncated_before_appending() {
        let tmp = tempfile::tempdir().unwrap();
        let mut handles = Vec::new();
        {
            let l = DurableLedger::open(tmp.path()).unwrap();
            for i in 0..3 {
                handles.push(
                    l.record(&format!("c{i}"), "t", "{}", &format!("p{i}"))
                        .unwrap(),
                );
            }
        }
        let complete = index_text(tmp.path());
        append_raw(tmp.path(), br#"{"v":1,"mem_id":"tm_0123","tool_ca"#);
        {
            let l = DurableLedger::open(tmp.path()).unwrap();
            // Opening repaired the tail already.
            assert_eq!(index_text(tmp.path()), complete);
            assert_eq!(l.handles().unwrap(), handles);
            for i in 3..5 {
                handles.push(
                    l.record(&format!("c{i}"), "t", "{}", &format!("p{i}"))
                        .unwrap(),
                );
            }
        }
        let text = index_text(tmp.path());
        assert!(text.starts_with(&complete) && text.ends_with('\n'));
        assert_eq!(text.lines().count(), 5);
        let l = DurableLedger::open(tmp.path()).unwrap();
        assert_eq!(l.handles().unwrap(), handles);
        for (i, h) in handles.iter().enumerate() {
            assert_eq!(*l.get(&h.mem_id).unwrap().unwrap().payload, format!("p{i}"));
        }
    }

    #[test]
    fn torn_tail_left_by_another_process_is_cut_by_the_next_record() {
        let tmp = tempfile::tempdir().unwrap();
        let l = DurableLedger::open(tmp.path()).unwrap();
        l.record("c0", "t", "{}", "p0").unwrap();
        // A writer elsewhere died mid-line while this instance was open.
        append_raw(tmp.path(), b"{\"v\":1,\"mem");
        assert_eq!(l.get_by_call_id("c9").unwrap(), None);
        assert_eq!(l.handles().unwrap().len(), 1);
        l.record("c1", "t", "{}", "p1").unwrap();
        assert_eq!(index_text(tmp.path()).lines().count(), 2);
        let again = DurableLedger::open(tmp.path()).unwrap();
        assert_eq!(&*again.get_by_call_id("c1").unwrap().unwrap().payload, "p1");
    }

    #[test]
    fn missing_or_altered_payload_is_an_error_not_a_panic() {
        let tmp = tempfile::tempdir().unwrap();
        let l = DurableLedger::open(tmp.path()).unwrap();
        let gone = l.record("gone", "t", "{}", "vanishes").unwrap();
        let bent = l.record("bent", "t", "{}", "gets altered").unwrap();
        for f in payload_files(tmp.path()) {
            let mut s = String::new();
            File::open(&f).unwrap().read_to_string(&mut s).unwrap();
            if s == "vanishes" {
                fs::remove_file(&f).unwrap();
            } else {
                fs::write(&f, "gets ALTERED").unwrap();
            }
        }
        assert!(matches!(
            l.get(&gone.mem_id),
            Err(LedgerError::Corrupt { ref reason, .. }) if reason.contains("missing")
        ));
        assert!(matches!(
            l.get_by_call_id("bent"),
            Err(LedgerError::Corrupt { ref reason, .. }) if reason.contains("hashes to")
        ));
        // Both lookups fail, whichever key reaches the broken payload.
        assert!(matches!(
            l.get_by_call_id("gone"),
            Err(LedgerError::Corrupt { ref reason, .. }) if reason.contains("missing")
        ));
        assert!(matches!(
            l.get(&bent.mem_id),
            Err(LedgerError::Corrupt { ref reason, .. }) if reason.contains("hashes to")
        ));
    }

    #[test]
    fn two_instances_on_one_directory_see_each_other() {
        let tmp = tempfile::tempdir().unwrap();
        let a = DurableLedger::open(tmp.path()).unwrap();
        let b = DurableLedger::open(tmp.path()).unwrap();
        let ha = a.record("shared", "t", "{}", AWKWARD).unwrap();
        assert_eq!(&*b.get(&ha.mem_id).unwrap().unwrap().payload, AWKWARD);
        // b has not looked since a's record; it must still not re-record.
        let c = DurableLedger::open(tmp.path()).unwrap();
        let b_new = b.record("from_b", "t", "{}", "bee").unwrap();
        assert_eq!(c.record("shared", "t", "{}", AWKWARD).unwrap(), ha);
        assert_eq!(
            &*a.get_by_call_id("from_b").unwrap().unwrap().payload,
            "bee"
        );
        assert_eq!(a.handles().unwrap(), vec![ha, b_new]);
        assert_eq!(index_text(tmp.path()).lines().count(), 2);
    }

    #[test]
    fn threads_on_two_instances_record_each_call_once() {
        let tmp = tempfile::tempdir().unwrap();
        let ledgers = [
            Arc::new(DurableLedger::open(tmp.path()).unwrap()),
            Arc::new(DurableLedger::open(tmp.path()).unwrap()),
        ];
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let l = ledgers[t % 2].clone();
                std::thread::spawn(move || {
                    for i in 0..15 {
                        // The same result from every thread: recorded once.
                        let content = format!("call {i}");
                        l.record(&format!("call{i}"), "t", "{}", &content).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let text = index_text(tmp.path());
        assert_eq!(text.lines().count(), 15);
        let a = ledgers[0].handles().unwrap();
        assert_eq!(a, ledgers[1].handles().unwrap());
        for h in a {
            let rec = ledgers[1].get(&h.mem_id).unwrap().unwrap();
            assert_eq!(
                Handle::derive(&h.tool_call_id, "t", &rec.payload),
                rec.handle
            );
        }
    }

    #[test]
    fn payload_cut_short_is_replaced_by_the_next_identical_record() {
        let tmp = tempfile::tempdir().unwrap();
        let l = DurableLedger::open(tmp.path()).unwrap();
        let a = l.record("a", "t", "{}", AWKWARD).unwrap();
        let [file] = payload_files(tmp.path()).try_into().unwrap();
        fs::write(&file, "short").unwrap();
        assert!(l.get(&a.mem_id).is_err());
        l.record("b", "t", "{}", AWKWARD).unwrap();
        assert_eq!(&*l.get(&a.mem_id).unwrap().unwrap().payload, AWKWARD);
    }

    #[test]
    fn stale_temp_files_are_removed_on_open() {
        let tmp = tempfile::tempdir().unwrap();
        drop(DurableLedger::open(tmp.path()).unwrap());
        let stale = tmp.path().join(TMP_DIR).join("deadbeef.1.tmp");
        fs::write(&stale, "half a payload").unwrap();
        drop(DurableLedger::open(tmp.path()).unwrap());
        assert!(!stale.exists());
    }
}

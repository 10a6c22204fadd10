//! What a report replayed, kept in a folder between runs, so that a report
//! over a fleet that has grown (a month's sessions, reported each day)
//! replays only what it has not seen: the unit kept is a segment of an
//! account ([`crate::plan::segments`]), the traces that share a cache with
//! no trace outside them (an account is cut where it goes longer without a
//! call than any config's cache holds an entry: see
//! [`tracecost_replay::longest_hold_ms`]), and the key of a segment is
//! everything its figures depend on — the bytes of its traces, their names
//! and sessions, and the plan (the grid, the prices, the tokenizer, the
//! options, the tool itself). A segment whose key is found is not
//! replayed: what the report keeps of each of its traces (its summary, its
//! entries in the report) is read instead, and the report is byte for byte
//! the one a run without the folder writes. The lines of JSON Lines inputs
//! are kept too ([`KnownLine`]), so that a line read before is not parsed
//! again.
//!
//! Entries are files named by their key's hex, written to a temporary
//! name and renamed into place, each ending with the SHA-256 of its kind,
//! its key and what precedes it: an entry cut short or damaged, or one
//! stored under another entry's name, reads as absent (and is written
//! again), never as other figures.
//!
//! The folder holds what the latest report used: once a report is written,
//! [`FleetCache::prune`] removes the entries it neither read nor wrote
//! (another build's, another grid's, segments that have since grown, pages
//! of traces no longer paged) and temporary files a killed run left, so
//! that the folder does not grow with every build and every day.

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use sha2::{Digest as _, Sha256};

use super::AppError;
use super::plan::SweepPlan;
use crate::digest::framed;
pub use crate::digest::{Key, bytes_digest, digest, digest_file};
pub use crate::store::KnownLine;

/// The layout of the folder this version reads and writes.
const LAYOUT: &str = "tracecost-cache-v1";

/// What a report keeps between runs, in one folder.
#[derive(Debug)]
pub struct FleetCache {
    dir: PathBuf,
    /// The part of every key the build gives.
    tool: Key,
    /// The part of every key of a replay the plan gives (with the build's).
    plan: Key,
    /// The entries this run read or wrote: what [`Self::prune`] keeps.
    used: Mutex<HashSet<(EntryKind, Key)>>,
}

/// The kinds of entry, each in its own subfolder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    /// A segment's traces: per trace, its summary and what the report wrote
    /// of it.
    Segment,
    /// A segment's traces checked for stability under one config.
    Stability,
    /// A line of a JSON Lines input read before: its trace's outline and
    /// request shape ([`KnownLine`]).
    Line,
    /// One trace's page and full entries, for a report that pages it.
    Page,
}

impl EntryKind {
    const ALL: [EntryKind; 4] = [
        EntryKind::Segment,
        EntryKind::Stability,
        EntryKind::Line,
        EntryKind::Page,
    ];

    fn dir(self) -> &'static str {
        match self {
            EntryKind::Segment => "segments",
            EntryKind::Stability => "stability",
            EntryKind::Page => "pages",
            EntryKind::Line => "lines",
        }
    }
}

impl FleetCache {
    /// The cache in `dir` (made if missing), with `tool` naming the
    /// program exactly (its version and build): entries another build made
    /// are never read. Its lines ([`KnownLine`]) can be read at once; what
    /// a replay kept, once the plan is known ([`Self::for_plan`]).
    pub fn open(dir: &Path, tool: &str) -> Result<Self, AppError> {
        let root = dir.join(LAYOUT);
        std::fs::create_dir_all(&root).map_err(|source| AppError::Write {
            path: root.display().to_string(),
            source,
        })?;
        let tool = digest([LAYOUT.as_bytes(), tool.as_bytes()]);
        Ok(FleetCache {
            dir: root,
            tool,
            plan: tool,
            used: Mutex::default(),
        })
    }

    /// This cache for the report `plan` runs: entries another plan made
    /// are never read.
    pub fn for_plan(mut self, plan: &SweepPlan) -> Self {
        self.plan = plan_key(plan, &self.tool);
        self
    }

    /// The key of a line's entry: its digest, under this build.
    fn line_key(&self, line: &Key) -> Key {
        digest([&self.tool[..], b"line", &line[..]])
    }

    /// The key of an entry of `kind` for `parts`, under this plan.
    pub fn key<'a>(&self, parts: impl IntoIterator<Item = &'a [u8]>) -> Key {
        let mut h = Sha256::new();
        framed(&mut h, &self.plan);
        for p in parts {
            framed(&mut h, p);
        }
        h.finalize().into()
    }

    fn path(&self, kind: EntryKind, key: &Key) -> PathBuf {
        let hex = hex(key);
        self.dir.join(kind.dir()).join(&hex[..2]).join(hex)
    }

    /// The entry of `kind` under `key`, when there is one intact; anything
    /// else (none, cut short, damaged, unreadable) is none.
    pub fn get(&self, kind: EntryKind, key: &Key) -> Option<Vec<u8>> {
        self.get_open(kind, key).map(|e| e.bytes)
    }

    /// [`Self::get`], with the entry's file left open ([`ReadEntry`]).
    pub fn get_open(&self, kind: EntryKind, key: &Key) -> Option<ReadEntry> {
        let path = self.path(kind, key);
        let mut file = std::fs::File::open(&path).ok()?;
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut file, &mut bytes).ok()?;
        let body = bytes.len().checked_sub(32)?;
        let mut hash = entry_hash(kind, key);
        hash.update(&bytes[..body]);
        let sum: Key = hash.finalize().into();
        if sum[..] != bytes[body..] {
            return None;
        }
        bytes.truncate(body);
        self.mark_used(kind, key);
        Some(ReadEntry { bytes, file, path })
    }

    fn mark_used(&self, kind: EntryKind, key: &Key) {
        self.used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert((kind, *key));
    }

    /// Keeps `bytes` as the entry of `kind` under `key`: whole or not at
    /// all, as another run reading it at the same time sees it.
    pub fn put(&self, kind: EntryKind, key: &Key, bytes: &[u8]) -> Result<(), AppError> {
        let mut w = self.writer(kind, key)?;
        w.write(bytes)?;
        w.finish()
    }

    /// The entry of `kind` under `key`, written a part at a time
    /// ([`EntryWriter`]): it is there once finished, whole.
    pub fn writer(&self, kind: EntryKind, key: &Key) -> Result<EntryWriter, AppError> {
        self.mark_used(kind, key);
        let path = self.path(kind, key);
        let dir = path.parent().unwrap_or(&self.dir).to_path_buf();
        std::fs::create_dir_all(&dir).map_err(|source| AppError::Write {
            path: dir.display().to_string(),
            source,
        })?;
        // A name of this process's own: two runs filling one cache at once
        // each rename a whole file into place.
        let tmp = dir.join(format!(".{}.{}.tmp", hex(key), std::process::id()));
        let file = std::fs::File::create(&tmp).map_err(|source| AppError::Write {
            path: tmp.display().to_string(),
            source,
        })?;
        Ok(EntryWriter {
            file: Some(std::io::BufWriter::new(file)),
            tmp,
            path,
            hash: entry_hash(kind, key),
        })
    }
}

/// The hash an entry of `kind` under `key` ends with, before its bytes:
/// the entry's content is bound to its name, so that a file copied or
/// renamed over another entry's name is not that entry.
fn entry_hash(kind: EntryKind, key: &Key) -> Sha256 {
    let mut h = Sha256::new();
    framed(&mut h, kind.dir().as_bytes());
    framed(&mut h, key);
    h
}

/// What [`FleetCache::prune`] removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pruned {
    /// Entries this run neither read nor wrote.
    pub entries: usize,
    /// Their bytes.
    pub bytes: u64,
    /// Temporary files left by runs that stopped while writing them.
    pub temporary: usize,
}

/// How long a temporary file goes unwritten before it is taken for one a
/// stopped run left: far longer than any entry takes to write (a segment's
/// entry is written as its traces finish, seconds apart).
const STALE_TEMPORARY: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

impl FleetCache {
    /// Removes the entries this run neither read nor wrote, and temporary
    /// files untouched for a day ([`STALE_TEMPORARY`]); call it once the
    /// report is written, so that the folder keeps what the latest report
    /// used. Only files named as this layout names them are touched:
    /// anything else in the folder stays.
    pub fn prune(&self) -> Result<Pruned, AppError> {
        let used = self
            .used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let fail = |path: &Path, source| AppError::Write {
            path: path.display().to_string(),
            source,
        };
        let mut pruned = Pruned::default();
        let now = std::time::SystemTime::now();
        for kind in EntryKind::ALL {
            let kind_dir = self.dir.join(kind.dir());
            // Two known levels read by hand rather than walked: a kind's
            // folder may be missing, a shard's must be readable, and only
            // two-hex-digit shard folders are looked into.
            let Ok(shards) = std::fs::read_dir(&kind_dir) else {
                continue;
            };
            for shard in shards {
                let shard = shard.map_err(|e| fail(&kind_dir, e))?;
                let name = shard.file_name();
                let Some(prefix) = name.to_str().filter(|n| n.len() == 2 && is_hex(n)) else {
                    continue;
                };
                if !shard.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                let shard_dir = shard.path();
                for file in std::fs::read_dir(&shard_dir).map_err(|e| fail(&shard_dir, e))? {
                    let file = file.map_err(|e| fail(&shard_dir, e))?;
                    let name = file.file_name();
                    let Some(name) = name.to_str() else { continue };
                    // The file's type comes with the listing; its metadata
                    // is read only for a file that may go.
                    if !file.file_type().is_ok_and(|t| t.is_file()) {
                        continue;
                    }
                    let entry = key_named(name, prefix);
                    let remove = match entry {
                        Some(key) => !used.contains(&(kind, key)),
                        None => is_temporary(name, prefix),
                    };
                    let Some(meta) = remove.then(|| file.metadata().ok()).flatten() else {
                        continue;
                    };
                    let stale = || {
                        meta.modified()
                            .ok()
                            .and_then(|m| now.duration_since(m).ok())
                            .is_some_and(|age| age > STALE_TEMPORARY)
                    };
                    if entry.is_none() && !stale() {
                        continue;
                    }
                    match std::fs::remove_file(file.path()) {
                        Ok(()) => {}
                        // Another run sharing the folder removed it first.
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => return Err(fail(&file.path(), e)),
                    }
                    if entry.is_some() {
                        pruned.entries += 1;
                        pruned.bytes += meta.len();
                    } else {
                        pruned.temporary += 1;
                    }
                }
            }
        }
        Ok(pruned)
    }
}

fn is_hex(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The key an entry's file `name` in the shard `prefix` names, when it is
/// one ([`FleetCache::path`]).
fn key_named(name: &str, prefix: &str) -> Option<Key> {
    if name.len() != 64 || !is_hex(name) || !name.starts_with(prefix) {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, k) in key.iter_mut().enumerate() {
        *k = u8::from_str_radix(name.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(key)
}

/// Whether `name` in the shard `prefix` is an entry's temporary name
/// ([`FleetCache::writer`]): `.KEY.PID.tmp`.
fn is_temporary(name: &str, prefix: &str) -> bool {
    let Some(inner) = name.strip_prefix('.').and_then(|n| n.strip_suffix(".tmp")) else {
        return false;
    };
    let Some((key, pid)) = inner.split_once('.') else {
        return false;
    };
    key_named(key, prefix).is_some() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
}

/// An entry read back whole and found intact, its file still open: a part
/// of it can be read again from the file later rather than kept. An entry
/// is never written over in place (a new one is renamed over its name), so
/// the file open stays as it was read.
#[derive(Debug)]
pub struct ReadEntry {
    /// Its bytes, without the digest that ends it.
    pub bytes: Vec<u8>,
    /// Its file, open.
    pub file: std::fs::File,
    /// Where it is, for messages.
    pub path: PathBuf,
}

/// An entry being written: to a temporary name beside its own, renamed
/// into place when finished; gone if dropped before.
#[derive(Debug)]
pub struct EntryWriter {
    file: Option<std::io::BufWriter<std::fs::File>>,
    tmp: PathBuf,
    path: PathBuf,
    hash: Sha256,
}

impl EntryWriter {
    fn fail(&self, source: std::io::Error) -> AppError {
        AppError::Write {
            path: self.path.display().to_string(),
            source,
        }
    }

    /// Appends `bytes`.
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), AppError> {
        self.hash.update(bytes);
        let written = match self.file.as_mut() {
            Some(f) => f.write_all(bytes),
            None => Err(std::io::Error::other("written after it was finished")),
        };
        written.map_err(|e| self.fail(e))
    }

    /// Appends `bytes` as one part of [`frames`].
    pub fn write_part(&mut self, bytes: &[u8]) -> Result<(), AppError> {
        self.write(&(bytes.len() as u64).to_le_bytes())?;
        self.write(bytes)
    }

    /// Ends the entry with the digest of what precedes it and puts it in
    /// place.
    pub fn finish(mut self) -> Result<(), AppError> {
        let sum: Key = std::mem::take(&mut self.hash).finalize().into();
        let done = match self.file.take() {
            Some(mut f) => f
                .write_all(&sum)
                .and_then(|()| f.into_inner().map_err(|e| e.into_error()))
                .and_then(|_| std::fs::rename(&self.tmp, &self.path)),
            None => Err(std::io::Error::other("finished twice")),
        };
        done.map_err(|e| self.fail(e))
    }
}

impl Drop for EntryWriter {
    fn drop(&mut self) {
        // Unfinished (or finished: the name is gone already).
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// The part of every key the plan gives: the tool, the configs swept (the
/// grid with every trace's status quo), what savings are measured against,
/// the models priced with, the price of a recall, and how every figure is
/// priced and counted (the price table itself, the tokenizer, calibration,
/// Batch, which traces share a cache).
fn plan_key(plan: &SweepPlan, tool: &Key) -> Key {
    let configs: Vec<String> = plan.configs().iter().map(ToString::to_string).collect();
    let options = format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}",
        plan.baseline.as_ref().map(ToString::to_string),
        plan.models,
        plan.recall_cost_usd.map(f64::to_bits),
        plan.cost,
        plan.cost.pricing,
    );
    digest(
        [&tool[..], options.as_bytes()]
            .into_iter()
            .chain(configs.iter().map(|c| c.as_bytes())),
    )
}

fn hex(key: &Key) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// Byte strings one after another, each after its length: an entry of
/// several parts.
pub fn frames<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for p in parts {
        out.extend_from_slice(&(p.len() as u64).to_le_bytes());
        out.extend_from_slice(p);
    }
    out
}

/// The parts [`frames`] put one after another; `None` when `bytes` are
/// not such parts.
pub fn unframe(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    Some(unframe_at(bytes)?.into_iter().map(|r| &bytes[r]).collect())
}

/// Where in `bytes` each part [`frames`] put is; `None` when `bytes` are
/// not such parts.
pub fn unframe_at(bytes: &[u8]) -> Option<Vec<std::ops::Range<usize>>> {
    let mut parts = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let (len, tail) = bytes[at..].split_first_chunk::<8>()?;
        let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
        if tail.len() < len {
            return None;
        }
        at += 8;
        parts.push(at..at + len);
        at += len;
    }
    Some(parts)
}

impl FleetCache {
    /// The line whose bytes digest to `line`, when this build kept it.
    pub fn known_line(&self, line: &Key) -> Option<KnownLine> {
        let bytes = self.get(EntryKind::Line, &self.line_key(line))?;
        let (record, shape): (crate::outline::OutlineRecord, _) =
            rmp_serde::from_slice(&bytes).ok()?;
        // A record this build cannot make an outline of is not known.
        record.is_readable().then_some(())?;
        Some(KnownLine {
            digest: *line,
            record,
            shape,
        })
    }

    /// Keeps `known` for a later report.
    pub fn keep_line(&self, known: &KnownLine) -> Result<(), AppError> {
        let bytes = rmp_serde::to_vec(&(&known.record, &known.shape))
            .map_err(|e| AppError::Internal(format!("a line's outline cannot be kept: {e}")))?;
        self.put(EntryKind::Line, &self.line_key(&known.digest), &bytes)
    }
}

/// What [`load_stored`]'s loader and the known lines it takes fill: the
/// store and outlines, and what was learned of the lines read ahead.
struct State {
    store: crate::store::TraceStore,
    outlines: Vec<crate::outline::TraceOutline>,
    /// Lines known, in the order they come.
    known: VecDeque<KnownLine>,
    /// Digests of lines not known, in the order they come.
    new: VecDeque<Key>,
    /// The last line parsed: its trace's outline and shape, to keep.
    last: Option<(
        crate::outline::TraceOutline,
        tracecost_replay::sweep::RequestShape,
    )>,
    failed: Option<AppError>,
}
/// The lines of a JSON Lines input the fleet cache knows, told to the
/// loader ([`tracecost_trace::KnownLines`]) and taken from the cache.
struct Lines<'s> {
    cache: &'s FleetCache,
    state: &'s RefCell<State>,
}
impl tracecost_trace::KnownLines for Lines<'_> {
    fn knows(&mut self, _: &Path, lines: &[Key]) -> Vec<bool> {
        use rayon::prelude::*;
        // The entries of a batch's lines read side by side.
        let found: Vec<Option<KnownLine>> = lines
            .par_iter()
            .map(|line| self.cache.known_line(line))
            .collect();
        let mut st = self.state.borrow_mut();
        found
            .into_iter()
            .zip(lines)
            .map(|(found, line)| match found {
                Some(known) => {
                    st.known.push_back(known);
                    true
                }
                None => {
                    st.new.push_back(*line);
                    false
                }
            })
            .collect()
    }
    fn take(
        &mut self,
        path: &Path,
        origin: tracecost_trace::LineOrigin,
    ) -> Result<(), tracecost_trace::TraceError> {
        let mut st = self.state.borrow_mut();
        let st = &mut *st;
        let stored = match st.known.pop_front() {
            Some(known) => st.store.put_known(path, origin, &known),
            None => Err(AppError::Internal("a line taken that was not known".into())),
        };
        match stored {
            Ok(o) => {
                st.outlines.push(o);
                Ok(())
            }
            Err(e) => {
                st.failed = Some(e);
                Err(tracecost_trace::TraceError::Io {
                    path: path.display().to_string(),
                    source: std::io::Error::other("stopped"),
                })
            }
        }
    }
    fn parsed(&mut self, alone: bool) {
        let mut st = self.state.borrow_mut();
        let digest = st.new.pop_front();
        let last = st.last.take();
        if let (true, Some(digest), Some((outline, shape))) = (alone, digest, last) {
            st.store.set_last_digest(digest);
            let known = KnownLine {
                digest,
                record: crate::outline::OutlineRecord::of(&outline),
                shape,
            };
            if let Err(e) = self.cache.keep_line(&known) {
                st.failed.get_or_insert(e);
            }
        }
    }
}

/// Loads `paths` into a [`crate::store::TraceStore`] as a report does,
/// giving each trace's outline; with `cache`, a line of a JSON Lines input
/// read before (the same bytes, this build) is not parsed again: its
/// outline and request shape come from the cache, and each trace's digest
/// is kept in the store. A line read for the first time is kept in the
/// cache when it held one trace and gave no warning.
pub fn load_stored(
    paths: &[PathBuf],
    opts: &crate::plan::InputOptions,
    progress: &dyn crate::progress::Progress,
    cache: Option<&FleetCache>,
    cost: &mut crate::plan::CostPlan,
    priced_as: Option<&str>,
) -> Result<
    (
        crate::store::TraceStore,
        Vec<crate::outline::TraceOutline>,
        crate::plan::Loaded,
    ),
    AppError,
> {
    let state = RefCell::new(State {
        store: crate::store::TraceStore::new()?,
        outlines: Vec::new(),
        known: VecDeque::new(),
        new: VecDeque::new(),
        last: None,
        failed: None,
    });
    let mut lines = cache.map(|cache| Lines {
        cache,
        state: &state,
    });
    let loaded = crate::plan::InputLoader::new(paths, opts)
        .progress(progress)
        .known(
            lines
                .as_mut()
                .map(|l| l as &mut dyn tracecost_trace::KnownLines),
        )
        .each(&mut |t, origin| {
            // A trace trimmed of its unpriced calls is not its line any
            // more: it is copied, and never kept as a known line.
            let (t, origin) = match cost.sift_one(t, priced_as) {
                crate::unpriced::Sifted::Whole(t) => (t, origin),
                crate::unpriced::Sifted::Trimmed(t) => (t, None),
                crate::unpriced::Sifted::SetAside => return Ok(()),
            };
            let mut st = state.borrow_mut();
            let alone = origin.is_some();
            match st.store.put_at(&t, origin) {
                Ok((o, shape)) => {
                    if alone && cache.is_some() {
                        st.last = Some((o.clone(), shape));
                    }
                    st.outlines.push(o);
                    Ok(())
                }
                // The store's own failure (the machine's) stops the load.
                Err(e) => {
                    st.failed = Some(e);
                    Err(crate::plan::InputError::Unusable(String::new()))
                }
            }
        });
    let mut st = state.into_inner();
    if let Some(e) = st.failed.take() {
        return Err(e);
    }
    let loaded = loaded?;
    st.store.seal()?;
    // One outline per trace, kept to the end of the run: not the room a
    // doubling vector grew (up to twice the fleet's).
    st.outlines.shrink_to_fit();
    Ok((st.store, st.outlines, loaded))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(dir: &Path) -> FleetCache {
        FleetCache {
            dir: dir.to_path_buf(),
            tool: digest([&b"tool"[..]]),
            plan: digest([&b"plan"[..]]),
            used: Mutex::default(),
        }
    }

    #[test]
    fn only_names_of_the_layout_are_taken_for_entries_or_temporary_files() {
        let key = [0xabu8; 32];
        let name = hex(&key);
        assert_eq!(key_named(&name, "ab"), Some(key));
        assert_eq!(key_named(&name, "cd"), None, "another shard's");
        assert_eq!(key_named(&name.to_uppercase(), "AB"), None);
        assert_eq!(key_named(&name[1..], "ba"), None);
        assert_eq!(key_named(&format!("{name}.json"), "ab"), None);
        assert!(is_temporary(&format!(".{name}.4242.tmp"), "ab"));
        assert!(!is_temporary(&format!(".{name}.tmp"), "ab"));
        assert!(!is_temporary(&format!(".{name}.42x.tmp"), "ab"));
        assert!(!is_temporary(&format!("{name}.4242.tmp"), "ab"));
        assert!(!is_temporary(".notes.1.tmp", "ab"));
    }

    #[test]
    fn pruning_keeps_what_was_read_or_written_and_nothing_else_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let (read, written, unused) = (
            cache(dir.path()).key([&b"read"[..]]),
            cache(dir.path()).key([&b"written"[..]]),
            cache(dir.path()).key([&b"unused"[..]]),
        );
        let before = cache(dir.path());
        for k in [&read, &unused] {
            before.put(EntryKind::Segment, k, b"figures").unwrap();
        }
        // The same key under another kind is another entry.
        before.put(EntryKind::Page, &read, b"page").unwrap();
        let c = cache(dir.path());
        assert!(c.get(EntryKind::Segment, &read).is_some());
        c.put(EntryKind::Line, &written, b"line").unwrap();
        let pruned = c.prune().unwrap();
        assert_eq!((pruned.entries, pruned.temporary), (2, 0));
        assert!(c.get(EntryKind::Segment, &read).is_some());
        assert!(c.get(EntryKind::Line, &written).is_some());
        assert!(c.get(EntryKind::Segment, &unused).is_none());
        assert!(c.get(EntryKind::Page, &read).is_none());
        assert_eq!(c.prune().unwrap(), Pruned::default());
    }

    #[test]
    fn an_entry_reads_back_and_a_damaged_one_reads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let c = cache(dir.path());
        let key = c.key([&b"segment"[..]]);
        assert_eq!(c.get(EntryKind::Segment, &key), None);
        c.put(EntryKind::Segment, &key, b"figures").unwrap();
        assert_eq!(
            c.get(EntryKind::Segment, &key).as_deref(),
            Some(&b"figures"[..])
        );
        // Another kind is another entry.
        assert_eq!(c.get(EntryKind::Page, &key), None);
        // One byte changed, or the file cut short: none.
        let path = c.path(EntryKind::Segment, &key);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[0] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(c.get(EntryKind::Segment, &key), None);
        std::fs::write(&path, &bytes[..10]).unwrap();
        assert_eq!(c.get(EntryKind::Segment, &key), None);
        // Written again, it reads back; no temporary file is left.
        c.put(EntryKind::Segment, &key, b"figures").unwrap();
        assert_eq!(
            c.get(EntryKind::Segment, &key).as_deref(),
            Some(&b"figures"[..])
        );
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left.len(), 1, "{left:?}");
    }

    #[test]
    fn an_entry_stored_under_another_entrys_name_reads_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let c = cache(dir.path());
        let (a, b) = (c.key([&b"a"[..]]), c.key([&b"b"[..]]));
        c.put(EntryKind::Segment, &a, b"figures of a").unwrap();
        c.put(EntryKind::Segment, &b, b"figures of b").unwrap();
        c.put(EntryKind::Page, &a, b"page of a").unwrap();
        let path = |kind, key| c.path(kind, key);
        // a's entry copied over b's name, and over a's page.
        std::fs::copy(path(EntryKind::Segment, &a), path(EntryKind::Segment, &b)).unwrap();
        std::fs::copy(path(EntryKind::Segment, &a), path(EntryKind::Page, &a)).unwrap();
        assert_eq!(c.get(EntryKind::Segment, &b), None);
        assert_eq!(c.get(EntryKind::Page, &a), None);
        assert_eq!(
            c.get(EntryKind::Segment, &a).as_deref(),
            Some(&b"figures of a"[..])
        );
    }

    #[test]
    fn keys_tell_apart_what_framing_would_join() {
        let c = cache(Path::new("."));
        assert_ne!(c.key([&b"ab"[..], b"c"]), c.key([&b"a"[..], b"bc"]));
        assert_ne!(c.key([&b"ab"[..]]), digest([&b"ab"[..]]));
    }

    #[test]
    fn frames_read_back_and_garbage_does_not() {
        let bytes = frames([&b""[..], b"one", b"two parts"]);
        assert_eq!(
            unframe(&bytes).unwrap(),
            vec![&b""[..], &b"one"[..], &b"two parts"[..]]
        );
        assert!(unframe(&bytes[..bytes.len() - 1]).is_none());
        assert!(unframe(&[1, 2, 3]).is_none());
    }
}

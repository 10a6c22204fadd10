//! A fleet held on disk while it is replayed: each trace is written to a
//! temporary file as it is read (a trace alone on a line of a JSON Lines
//! input is not copied: where its line is suffices), and only its outline
//! (what plans are made of: names, provider, model and what a plan reads
//! of its calls; see [`TraceOutline`]) and the shape of its requests stay
//! in memory. A streamed report reads each trace back when
//! its turn comes and lets it go when it is done, so memory does not grow
//! with the fleet. What a report keeps of each trace until the end goes to
//! temporary files too ([`SpillFile`], [`SummaryStore`]), or, when it comes
//! from the report's cache, is read back from there.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::AppError;
use super::fleet::SessionSummary;
use super::outline::{SharedStrings, TraceOutline};
use crate::replay::sweep::RequestShape;
use crate::trace::Trace;

/// Traces written to a temporary file, read back one at a time; a trace
/// alone on a line of a JSON Lines input is read back from that line
/// instead, not copied.
#[derive(Debug)]
pub struct TraceStore {
    /// The copies.
    file: TempFile,
    /// Per trace: where it is (until sealed: then in `rows`).
    entries: Vec<Entry>,
    /// The inputs traces are read back from, open.
    inputs: Vec<(PathBuf, File)>,
    /// Per trace, the shape of its requests, written to `shapes` (where it
    /// starts, how long it is): an account's sweep reads its traces' once,
    /// when it starts, and a fleet's 40,000 of them held to the end were
    /// 8 MB.
    shapes: TempFile,
    shape_at: Vec<(u64, u32)>,
    /// Once sealed, `entries` and `shape_at` as rows of [`ROW`] bytes, one
    /// per trace, read back by place (and how many): a fleet's 40,000
    /// held to the end were 2.2 MB.
    rows: Option<(TempFile, usize)>,
    /// The strings the traces' outlines share.
    shared: SharedStrings,
    /// Per trace, the digest of its bytes when it was found as they were
    /// read (a report with a cache); shorter when the last have none.
    digests: Vec<Option<super::fleet_cache::Key>>,
}

/// Where a stored trace is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// In the temporary file: where its line starts and how long it is.
    Copied { at: u64, len: usize },
    /// On a line of input `input`, as [`crate::trace::LineOrigin`] says.
    Input {
        input: usize,
        at: u64,
        len: usize,
        hash: u64,
    },
}

impl TraceStore {
    /// An empty store in the system's temporary folder (`TMPDIR`). On Unix
    /// the file has no name once open, so nothing is left behind however
    /// the run ends.
    pub fn new() -> Result<Self, AppError> {
        Ok(TraceStore {
            file: TempFile::new("fleet")?,
            entries: Vec::new(),
            inputs: Vec::new(),
            shapes: TempFile::new("shapes")?,
            shape_at: Vec::new(),
            rows: None,
            shared: SharedStrings::default(),
            digests: Vec::new(),
        })
    }

    /// Writes `trace` to the store and gives its outline.
    pub fn put(&mut self, trace: &Trace) -> Result<TraceOutline, AppError> {
        self.put_at(trace, None).map(|(outline, _)| outline)
    }

    /// [`Self::put`] of a trace read alone from a line of the JSON Lines
    /// file `origin` names: only where the line is and its hash are kept,
    /// and the trace is read back from it (the file is opened now, and a
    /// line that changed by then is an error). Without an origin, the
    /// trace is copied to the temporary file. Gives the trace's outline and
    /// the shape of its requests.
    pub fn put_at(
        &mut self,
        trace: &Trace,
        origin: Option<(&Path, crate::trace::LineOrigin)>,
    ) -> Result<(TraceOutline, RequestShape), AppError> {
        let entry = match origin {
            Some((path, o)) => Entry::Input {
                input: self.input(path)?,
                at: o.offset,
                len: o.len,
                hash: o.hash,
            },
            None => {
                let (at, len) = self
                    .file
                    .append(crate::trace::to_json_line(trace).as_bytes())?;
                Entry::Copied { at, len }
            }
        };
        let shape = RequestShape::of(trace);
        self.put_shape(&shape)?;
        self.entries.push(entry);
        Ok((TraceOutline::of(trace, &mut self.shared), shape))
    }

    /// Writes the shape of the next trace's requests.
    fn put_shape(&mut self, shape: &RequestShape) -> Result<(), AppError> {
        let bytes = rmp_serde::to_vec(shape)
            .map_err(|e| AppError::Internal(format!("a request shape cannot be kept: {e}")))?;
        let (at, len) = self.shapes.append(&bytes)?;
        let len = u32::try_from(len)
            .map_err(|_| AppError::Internal(format!("a request shape of {len} bytes")))?;
        self.shape_at.push((at, len));
        Ok(())
    }

    /// Keeps the trace alone at `origin` of `path` without reading it: its
    /// outline and request shape are known (a report's cache of the
    /// lines it read before), and its digest; gives its outline.
    pub fn put_known(
        &mut self,
        path: &Path,
        origin: crate::trace::LineOrigin,
        known: &super::fleet_cache::KnownLine,
    ) -> Result<TraceOutline, AppError> {
        let shown = path.display().to_string();
        let outline = known
            .record
            .outline(&shown, &mut self.shared)
            .ok_or_else(|| {
                AppError::Internal(format!("{shown}: a kept outline names an unknown provider"))
            })?;
        let input = self.input(path)?;
        self.put_shape(&known.shape)?;
        self.entries.push(Entry::Input {
            input,
            at: origin.offset,
            len: origin.len,
            hash: origin.hash,
        });
        self.digests.resize(self.entries.len() - 1, None);
        self.digests.push(Some(known.digest));
        Ok(outline)
    }

    /// Tells the store the digest of the bytes of the trace it kept last
    /// ([`super::fleet_cache::digest`]), known as they were read.
    pub fn set_last_digest(&mut self, digest: super::fleet_cache::Key) {
        self.digests.resize(self.entries.len(), None);
        if let Some(last) = self.digests.last_mut() {
            *last = Some(digest);
        }
    }

    /// The digest of trace `i`'s bytes, when it was found as they were read.
    pub fn digest(&self, i: usize) -> Option<super::fleet_cache::Key> {
        self.digests.get(i).copied().flatten()
    }

    /// The index of input `path` among those open, opened if new.
    fn input(&mut self, path: &Path) -> Result<usize, AppError> {
        // Lines come a file at a time: the last one opened, most often.
        if let Some(i) = self.inputs.iter().rposition(|(p, _)| p == path) {
            return Ok(i);
        }
        let file = File::open(path).map_err(|source| {
            AppError::Usage(format!(
                "{}: cannot be read again to replay its traces: {source}",
                path.display()
            ))
        })?;
        self.inputs.push((path.to_path_buf(), file));
        Ok(self.inputs.len() - 1)
    }

    /// Ends writing: every trace written can be read back.
    pub fn seal(&mut self) -> Result<(), AppError> {
        // Kept to the end of the run, one per trace of the fleet: the room
        // grown for more goes back, and where each trace and its shape are
        // goes to disk.
        self.digests.shrink_to_fit();
        if self.rows.is_none() {
            let mut rows = TempFile::new("places")?;
            for (entry, shape) in self.entries.iter().zip(&self.shape_at) {
                rows.append(&row(entry, *shape)?)?;
            }
            rows.seal()?;
            self.rows = Some((rows, self.entries.len()));
            self.entries = Vec::new();
            self.shape_at = Vec::new();
        }
        self.shapes.seal()?;
        self.file.seal()
    }

    /// How many traces the store holds.
    pub fn len(&self) -> usize {
        match &self.rows {
            Some((_, len)) => *len,
            None => self.entries.len(),
        }
    }

    /// Whether the store holds no trace.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Where trace `i` is, and the shape of its requests.
    fn place(&self, i: usize) -> Result<(Entry, (u64, u32)), AppError> {
        let missing =
            || AppError::Internal(format!("no trace {} of {} in the store", i + 1, self.len()));
        match &self.rows {
            Some((rows, len)) if i < *len => {
                let bytes = rows.read(i as u64 * ROW as u64, ROW)?;
                from_row(&bytes).ok_or_else(|| {
                    AppError::Internal(format!("the place of trace {} reads back wrong", i + 1))
                })
            }
            Some(_) => Err(missing()),
            None => match (self.entries.get(i), self.shape_at.get(i)) {
                (Some(e), Some(s)) => Ok((*e, *s)),
                _ => Err(missing()),
            },
        }
    }

    /// The shape of trace `i`'s requests, read back (once sealed).
    pub fn shape(&self, i: usize) -> Result<RequestShape, AppError> {
        let (_, (at, len)) = self.place(i)?;
        let bytes = self.shapes.read(at, len as usize)?;
        rmp_serde::from_slice(&bytes).map_err(|e| {
            AppError::Internal(format!(
                "the request shape of trace {} reads back as: {e}",
                i + 1
            ))
        })
    }

    /// Trace `i` as it was written, with the names of `outline` (the plan
    /// may have told traces of one name apart).
    pub fn get(&self, i: usize, outline: &TraceOutline) -> Result<Trace, AppError> {
        let (buf, shown) = self.raw(i)?;
        let io = |e| self.file.io(e);
        let text = std::str::from_utf8(&buf)
            .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        let mut traces = crate::trace::load_str(text, &shown)
            .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?
            .traces;
        let mut trace = match (traces.pop(), traces.is_empty()) {
            (Some(t), true) => t,
            _ => {
                return Err(io(std::io::Error::other(format!(
                    "line {} is not one trace",
                    i + 1
                ))));
            }
        };
        outline.give_names(&mut trace);
        Ok(trace)
    }

    /// Trace `i`'s bytes as they were read (its line of the input) or
    /// copied, with where they are as an error would name it.
    pub fn raw(&self, i: usize) -> Result<(Vec<u8>, String), AppError> {
        let (entry, _) = self.place(i)?;
        let (buf, shown) = match entry {
            Entry::Copied { at, len } => (
                self.file.read(at, len)?,
                format!("{}:{}", self.file.path.display(), i + 1),
            ),
            Entry::Input {
                input,
                at,
                len,
                hash,
            } => {
                let (path, file) = &self.inputs[input];
                let changed = |why: String| {
                    AppError::Usage(format!(
                        "{}: changed while the report was reading it (the trace at byte {at} {why}); run the report again on a file nothing is writing over",
                        path.display()
                    ))
                };
                let mut buf = vec![0u8; len];
                read_at(file, &mut buf, at).map_err(|e| changed(format!("cannot be read: {e}")))?;
                if crate::trace::line_hash(&buf) != hash {
                    return Err(changed("is not what was read before".to_owned()));
                }
                (buf, format!("{} at byte {at}", path.display()))
            }
        };
        Ok((buf, shown))
    }
}

/// The bytes of a row of [`TraceStore::rows`].
const ROW: usize = 40;

/// `entry` and the place of its shape as a row: the input (`u32::MAX`:
/// copied), the length, the offset, the line's hash, then where the shape
/// starts and its length, little-endian.
fn row(entry: &Entry, (shape_at, shape_len): (u64, u32)) -> Result<[u8; ROW], AppError> {
    let (input, len, at, hash) = match *entry {
        Entry::Copied { at, len } => (u32::MAX, len, at, 0),
        Entry::Input {
            input,
            at,
            len,
            hash,
        } => (
            u32::try_from(input)
                .ok()
                .filter(|i| *i < u32::MAX)
                .ok_or_else(|| AppError::Internal(format!("input {input} of a store")))?,
            len,
            at,
            hash,
        ),
    };
    let mut out = [0u8; ROW];
    out[..4].copy_from_slice(&input.to_le_bytes());
    out[4..12].copy_from_slice(&(len as u64).to_le_bytes());
    out[12..20].copy_from_slice(&at.to_le_bytes());
    out[20..28].copy_from_slice(&hash.to_le_bytes());
    out[28..36].copy_from_slice(&shape_at.to_le_bytes());
    out[36..].copy_from_slice(&shape_len.to_le_bytes());
    Ok(out)
}

/// The row [`row`] wrote.
fn from_row(b: &[u8]) -> Option<(Entry, (u64, u32))> {
    let u64_at = |k: usize| Some(u64::from_le_bytes(b.get(k..k + 8)?.try_into().ok()?));
    let u32_at = |k: usize| Some(u32::from_le_bytes(b.get(k..k + 4)?.try_into().ok()?));
    let (input, len, at, hash) = (
        u32_at(0)?,
        usize::try_from(u64_at(4)?).ok()?,
        u64_at(12)?,
        u64_at(20)?,
    );
    let entry = match input {
        u32::MAX => Entry::Copied { at, len },
        input => Entry::Input {
            input: input as usize,
            at,
            len,
            hash,
        },
    };
    Some((entry, (u64_at(28)?, u32_at(36)?)))
}

/// A temporary file written by appending and read back anywhere: on Unix
/// it has no name once open, so nothing is left behind however the run
/// ends (a named one goes with it). What the stores below share.
#[derive(Debug)]
struct TempFile {
    path: PathBuf,
    /// `None` once sealed.
    writer: Option<BufWriter<File>>,
    reader: File,
    end: u64,
}

impl TempFile {
    /// A new file in the system's temporary folder (`TMPDIR`); `what`
    /// names it.
    fn new(what: &str) -> Result<Self, AppError> {
        let (path, file) = temp_file(what)?;
        let reader = file.try_clone().map_err(|e| store_error(&path, &e))?;
        Ok(TempFile {
            path,
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
            reader,
            end: 0,
        })
    }

    fn io(&self, source: std::io::Error) -> AppError {
        store_error(&self.path, &source)
    }

    /// Appends `bytes`: where they start and how long they are.
    fn append(&mut self, bytes: &[u8]) -> Result<(u64, usize), AppError> {
        let Some(w) = self.writer.as_mut() else {
            return Err(AppError::Internal("a record after the end".into()));
        };
        if let Err(e) = w.write_all(bytes) {
            return Err(self.io(e));
        }
        let at = self.end;
        self.end += bytes.len() as u64;
        Ok((at, bytes.len()))
    }

    /// Ends writing: everything appended can be read back. Flushed is
    /// enough: it is read through the same open file, and nothing outlives
    /// the run.
    fn seal(&mut self) -> Result<(), AppError> {
        if let Some(w) = self.writer.take() {
            w.into_inner()
                .map_err(|e| e.into_error())
                .map_err(|e| self.io(e))?;
        }
        Ok(())
    }

    /// The `len` bytes at `at`, once sealed.
    fn read(&self, at: u64, len: usize) -> Result<Vec<u8>, AppError> {
        if self.writer.is_some() {
            return Err(AppError::Internal("a record read before the end".into()));
        }
        let mut buf = vec![0u8; len];
        read_at(&self.reader, &mut buf, at).map_err(|e| self.io(e))?;
        Ok(buf)
    }
}

/// A new file, open to read and write, in the system's temporary folder
/// (`TMPDIR`); `what` names it. On Unix it has no name once open.
fn temp_file(what: &str) -> Result<(PathBuf, File), AppError> {
    let dir = std::env::temp_dir();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let path = dir.join(format!(
        "tracecost-{what}-{}-{nanos}.tmp",
        std::process::id()
    ));
    let io = |source| store_error(&path, &source);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(io)?;
    #[cfg(unix)]
    std::fs::remove_file(&path).map_err(io)?;
    Ok((path, file))
}

/// Rows of [`Record::BYTES`] bytes written and read by place in a
/// temporary file: a [`SpillFile`]'s records, one per trace of a fleet,
/// written in any order while it is replayed. A row never written reads
/// as [`Record::NONE`] (the file has a hole there, or ends before it).
#[derive(Debug)]
struct Rows {
    path: PathBuf,
    file: File,
}

impl Drop for Rows {
    fn drop(&mut self) {
        #[cfg(not(unix))]
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Rows {
    fn new(what: &str) -> Result<Self, AppError> {
        let (path, file) = temp_file(&format!("{what}-places"))?;
        Ok(Rows { path, file })
    }

    fn put(&self, i: usize, r: Record) -> Result<(), AppError> {
        write_at(&self.file, &r.to_bytes(), i as u64 * Record::BYTES as u64)
            .map_err(|e| store_error(&self.path, &e))
    }

    fn get(&self, i: usize) -> Result<Record, AppError> {
        let mut b = [0u8; Record::BYTES];
        match read_at(&self.file, &mut b, i as u64 * Record::BYTES as u64) {
            Ok(()) => Ok(Record::from_bytes(b)),
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Ok(Record::NONE),
            Err(e) => Err(store_error(&self.path, &e)),
        }
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        #[cfg(not(unix))]
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Records written to a temporary file in any order, each under its place
/// (a trace's in the plan), and read back by place: what a report holds of
/// every trace until the end (a summary, a line of `results.json`) is kept
/// here rather than in memory, so that memory does not grow with the fleet.
/// A record that is on disk already (in an entry of the report's cache) is
/// read back from there instead of being copied.
#[derive(Debug)]
pub struct SpillFile {
    file: TempFile,
    /// Per place: where its record is, on disk (16 bytes a trace of a
    /// fleet, for the whole run, were 1.3 MB for two of these at 40,000
    /// traces).
    rows: Rows,
    /// How many places.
    places: usize,
    /// The files records are read back from in place, open.
    elsewhere: Vec<(Arc<File>, Arc<Path>)>,
}

/// Where a record of a [`SpillFile`] is: `len` bytes from `at`, in the
/// file `file` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Record {
    at: u64,
    len: u32,
    /// [`Record::NONE`], [`Record::OWN`] (the spill's own file), or the
    /// index of the file among those read in place.
    file: u32,
}

impl Record {
    /// No record yet.
    const NONE: Record = Record {
        at: 0,
        len: 0,
        file: u32::MAX,
    };
    /// In the spill's own file.
    const OWN: u32 = u32::MAX - 1;

    /// Bytes of a record as [`Rows`] holds it.
    const BYTES: usize = 16;

    fn new(file: u32, at: u64, len: usize) -> Result<Self, AppError> {
        let len = u32::try_from(len)
            .map_err(|_| AppError::Internal(format!("a record of {len} bytes (over 4 GB)")))?;
        Ok(Record { at, len, file })
    }

    /// Little-endian, `file` inverted so that a row of zeros is
    /// [`Record::NONE`].
    fn to_bytes(self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        b[..8].copy_from_slice(&self.at.to_le_bytes());
        b[8..12].copy_from_slice(&self.len.to_le_bytes());
        b[12..].copy_from_slice(&(!self.file).to_le_bytes());
        b
    }

    fn from_bytes(b: [u8; Self::BYTES]) -> Self {
        let [
            a0,
            a1,
            a2,
            a3,
            a4,
            a5,
            a6,
            a7,
            l0,
            l1,
            l2,
            l3,
            f0,
            f1,
            f2,
            f3,
        ] = b;
        Record {
            at: u64::from_le_bytes([a0, a1, a2, a3, a4, a5, a6, a7]),
            len: u32::from_le_bytes([l0, l1, l2, l3]),
            file: !u32::from_le_bytes([f0, f1, f2, f3]),
        }
    }
}

/// Bytes already on disk: in a file kept open (an entry of the report's
/// cache, [`crate::fleet_cache::ReadEntry`]), from `at` on.
#[derive(Debug, Clone)]
pub struct OnDisk {
    /// The file, open.
    pub file: Arc<File>,
    /// Its path, for messages.
    pub path: Arc<Path>,
    /// Where the bytes start.
    pub at: u64,
}

/// How many files a [`SpillFile`] reads records from in place, at most:
/// past them, records are copied (a file open each, well within any limit
/// on open files).
const ELSEWHERE_MAX: usize = 64;

impl SpillFile {
    /// An empty file for `places` records, in the system's temporary
    /// folder (as [`TraceStore::new`]); `what` names it.
    pub fn new(what: &str, places: usize) -> Result<Self, AppError> {
        Ok(SpillFile {
            file: TempFile::new(what)?,
            rows: Rows::new(what)?,
            places,
            elsewhere: Vec::new(),
        })
    }

    /// Checks that `i` is a place.
    fn slot(&self, i: usize) -> Result<(), AppError> {
        match i < self.places {
            true => Ok(()),
            false => Err(AppError::Internal(format!(
                "a record for place {} of {}",
                i + 1,
                self.places
            ))),
        }
    }

    /// Writes the record of place `i` (a later one replaces it).
    pub fn put(&mut self, i: usize, bytes: &[u8]) -> Result<(), AppError> {
        // The place is checked before anything is written.
        self.slot(i)?;
        let (at, len) = self.file.append(bytes)?;
        self.rows.put(i, Record::new(Record::OWN, at, len)?)
    }

    /// Keeps `bytes` as the record of place `i`, to be read back from
    /// where they are on disk (`on`) rather than copied; copied all the
    /// same past [`ELSEWHERE_MAX`] files.
    pub fn put_on_disk(&mut self, i: usize, bytes: &[u8], on: &OnDisk) -> Result<(), AppError> {
        let file = match self
            .elsewhere
            .iter()
            .rposition(|f| Arc::ptr_eq(&f.0, &on.file))
        {
            Some(f) => f,
            None if self.elsewhere.len() < ELSEWHERE_MAX => {
                self.elsewhere.push((on.file.clone(), on.path.clone()));
                self.elsewhere.len() - 1
            }
            None => return self.put(i, bytes),
        };
        // At most ELSEWHERE_MAX files: the index fits.
        self.slot(i)?;
        self.rows
            .put(i, Record::new(file as u32, on.at, bytes.len())?)
    }

    /// Ends writing: every record written can be read back.
    pub fn seal(&mut self) -> Result<(), AppError> {
        self.file.seal()
    }

    /// How many places.
    pub fn len(&self) -> usize {
        self.places
    }

    /// Whether there is no place.
    pub fn is_empty(&self) -> bool {
        self.places == 0
    }

    /// Whether place `i` has its record (an error when where it is cannot
    /// be read back).
    pub fn has(&self, i: usize) -> Result<bool, AppError> {
        Ok(self.record(i)?.file != Record::NONE.file)
    }

    /// Where the record of place `i` is; [`Record::NONE`] past the places.
    fn record(&self, i: usize) -> Result<Record, AppError> {
        match i < self.places {
            true => self.rows.get(i),
            false => Ok(Record::NONE),
        }
    }

    /// The record of place `i`, once sealed.
    pub fn get(&self, i: usize) -> Result<Vec<u8>, AppError> {
        match self.record(i)? {
            Record { at, len, file } if file == Record::OWN => self.file.read(at, len as usize),
            Record { at, len, file } if (file as usize) < self.elsewhere.len() => {
                let (file, path) = &self.elsewhere[file as usize];
                let mut buf = vec![0u8; len as usize];
                read_at(file, &mut buf, at).map_err(|e| {
                    AppError::Environment(format!(
                        "{}: the report's cache cannot be read again: {e}",
                        path.display()
                    ))
                })?;
                Ok(buf)
            }
            _ => Err(AppError::Internal(format!(
                "no record of place {} of {}",
                i + 1,
                self.places
            ))),
        }
    }
}

/// Session summaries spilled ([`SpillFile`]) as their traces are done, in
/// any order, and read back by their place in the plan: a fleet's answer is
/// summed in passes over them. The encoding (MessagePack, fields by name)
/// reads every float back exactly.
#[derive(Debug)]
pub struct SummaryStore(SpillFile);

impl SummaryStore {
    /// An empty store for `traces` summaries.
    pub fn new(traces: usize) -> Result<Self, AppError> {
        SpillFile::new("summaries", traces).map(SummaryStore)
    }

    /// Writes the summary of the plan's trace `i`.
    pub fn put(&mut self, i: usize, summary: &SessionSummary) -> Result<(), AppError> {
        self.0.put(i, &encode_summary(summary)?)
    }

    /// Keeps the summary of the plan's trace `i` as [`encode_summary`]
    /// wrote it, read back from where it is on disk ([`SpillFile::put_on_disk`]).
    pub fn put_on_disk(&mut self, i: usize, bytes: &[u8], on: &OnDisk) -> Result<(), AppError> {
        self.0.put_on_disk(i, bytes, on)
    }

    /// Ends writing: every summary written can be read back.
    pub fn seal(&mut self) -> Result<(), AppError> {
        self.0.seal()
    }

    /// The summary of the plan's trace `i`.
    pub fn get(&self, i: usize) -> Result<SessionSummary, AppError> {
        decode_summary(&self.0.get(i)?).map_err(|e| {
            AppError::Internal(format!("the summary of trace {} reads back as: {e}", i + 1))
        })
    }
}

/// A summary as bytes: MessagePack with fields by name, which reads every
/// float back exactly.
pub fn encode_summary(summary: &SessionSummary) -> Result<Vec<u8>, AppError> {
    encode_record(summary, "a summary")
}

/// A record spilled for the rest of a report (`what` names it in an
/// error): MessagePack with fields by name, which reads every float back
/// exactly ([`decode_record`]).
pub fn encode_record<T: serde::Serialize + ?Sized>(v: &T, what: &str) -> Result<Vec<u8>, AppError> {
    rmp_serde::to_vec_named(v)
        .map_err(|e| AppError::Internal(format!("{what} cannot be encoded: {e}")))
}

/// A record [`encode_record`] wrote.
pub fn decode_record<T: serde::de::DeserializeOwned>(
    bytes: &[u8],
) -> Result<T, rmp_serde::decode::Error> {
    rmp_serde::from_slice(bytes)
}

/// The summary [`encode_summary`] wrote.
pub fn decode_summary(bytes: &[u8]) -> Result<SessionSummary, rmp_serde::decode::Error> {
    decode_record(bytes)
}

/// The store's failures are the machine's (a temporary folder missing or
/// full), and the message says what to do.
fn store_error(path: &std::path::Path, e: &std::io::Error) -> AppError {
    AppError::Environment(format!(
        "{}: the report's temporary file: {e}; set TMPDIR to a folder with room for about the inputs' size, or pass --in-memory",
        path.display()
    ))
}

#[cfg(unix)]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, at)
}

#[cfg(unix)]
fn write_at(file: &File, buf: &[u8], at: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(buf, at)
}

#[cfg(not(unix))]
fn write_at(file: &File, buf: &[u8], at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        let n = file.seek_write(&buf[done..], at + done as u64)?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        done += n;
    }
    Ok(())
}

#[cfg(not(unix))]
fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        let n = file.seek_read(&mut buf[done..], at + done as u64)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        done += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spill's record reads back from its row as it was, and a row of
    /// zeros (a hole in the file) is no record.
    #[test]
    fn a_record_reads_back_from_its_row_and_zeros_are_none() {
        for r in [
            Record::NONE,
            Record {
                at: u64::MAX,
                len: u32::MAX,
                file: Record::OWN,
            },
            Record {
                at: 12,
                len: 3,
                file: 0,
            },
        ] {
            assert_eq!(Record::from_bytes(r.to_bytes()), r);
        }
        assert_eq!(Record::NONE.to_bytes(), [0u8; Record::BYTES]);
    }

    /// Where a trace and its shape are reads back from its row as it
    /// was, at the extremes of each field.
    #[test]
    fn a_row_reads_back_as_the_place_it_was() {
        let places = [
            (Entry::Copied { at: 0, len: 0 }, (0, 0)),
            (
                Entry::Copied {
                    at: u64::MAX,
                    len: usize::MAX,
                },
                (u64::MAX, u32::MAX),
            ),
            (
                Entry::Input {
                    input: 3,
                    at: 1 << 40,
                    len: 12_345,
                    hash: 0xDEAD_BEEF_0123_4567,
                },
                (77, 9),
            ),
        ];
        for (entry, shape) in places {
            assert_eq!(from_row(&row(&entry, shape).unwrap()), Some((entry, shape)));
        }
        let too_many = Entry::Input {
            input: u32::MAX as usize,
            at: 0,
            len: 1,
            hash: 0,
        };
        assert!(row(&too_many, (0, 0)).is_err());
        assert_eq!(from_row(&[0u8; ROW - 1]), None);
    }

    /// A JSON Lines file of two generated traces, read with their origins.
    fn jsonl_store(dir: &Path) -> (PathBuf, TraceStore, Vec<TraceOutline>) {
        let path = dir.join("two.jsonl");
        let traces = [
            crate::trace::generate::session(6, 1),
            crate::trace::generate::session(4, 2),
        ];
        let text: String = traces.iter().map(crate::trace::to_json_line).collect();
        std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
        let mut store = TraceStore::new().unwrap();
        let mut outlines = Vec::new();
        crate::trace::load_path_each_at(&path, &crate::progress::Silent, &mut |t, origin| {
            assert!(origin.is_some(), "a trace alone on its line");
            outlines.push(
                store
                    .put_at(&t, origin.map(|o| (path.as_path(), o)))
                    .unwrap()
                    .0,
            );
            Ok(())
        })
        .unwrap();
        store.seal().unwrap();
        (path, store, outlines)
    }

    #[test]
    fn a_trace_alone_on_a_line_is_read_back_from_its_line_not_copied() {
        let dir = tempfile::tempdir().unwrap();
        let (path, store, outlines) = jsonl_store(dir.path());
        // Nothing copied: the temporary file is empty.
        assert_eq!(store.file.end, 0);
        let loaded = crate::trace::load_path(&path).unwrap().traces;
        for (i, (o, t)) in outlines.iter().zip(&loaded).enumerate() {
            assert_eq!(&store.get(i, o).unwrap(), t, "trace {i}");
            assert_eq!(store.shape(i).unwrap(), RequestShape::of(t), "trace {i}");
        }
    }

    #[test]
    fn a_line_changed_under_the_report_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let (path, store, outlines) = jsonl_store(dir.path());
        // The file rewritten with the traces the other way round.
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<&str> = text.trim_start_matches('\u{feff}').lines().collect();
        lines.reverse();
        std::fs::write(&path, format!("\u{feff}{}\n", lines.join("\n"))).unwrap();
        let err = store.get(0, &outlines[0]).unwrap_err();
        assert!(matches!(err, AppError::Usage(_)), "{err:?}");
        let msg = err.to_string();
        assert!(
            msg.starts_with(&format!(
                "{}: changed while the report was reading it",
                path.display()
            )),
            "{msg}"
        );
    }

    #[test]
    fn a_record_on_disk_is_read_back_from_where_it_is_and_past_the_most_files_copied() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("entry");
        std::fs::write(&path, b"..summary..").unwrap();
        let on = || OnDisk {
            file: Arc::new(File::open(&path).unwrap()),
            path: path.as_path().into(),
            at: 2,
        };
        let places = ELSEWHERE_MAX + 2;
        let mut f = SpillFile::new("test", places).unwrap();
        let first = on();
        f.put_on_disk(0, b"summary", &first).unwrap();
        f.put_on_disk(1, b"sum", &first).unwrap();
        for i in 2..places {
            f.put_on_disk(i, b"summary", &on()).unwrap();
        }
        assert!(f.put_on_disk(places, b"summary", &first).is_err());
        f.seal().unwrap();
        // Gone from its folder, an entry open is still read.
        #[cfg(unix)]
        std::fs::remove_file(&path).unwrap();
        assert_eq!(f.get(1).unwrap(), b"sum");
        for i in (0..places).filter(|&i| i != 1) {
            assert_eq!(f.get(i).unwrap(), b"summary", "place {i}");
        }
        assert_eq!(f.elsewhere.len(), ELSEWHERE_MAX);
        assert_eq!(f.record(places - 1).unwrap().file, Record::OWN);
    }

    #[test]
    fn a_spill_file_gives_back_each_record_by_place_whatever_the_order_written() {
        let mut f = SpillFile::new("test", 4).unwrap();
        f.put(2, b"two").unwrap();
        f.put(0, b"").unwrap();
        f.put(3, "tr\u{e8}s".as_bytes()).unwrap();
        // Read before the end: the buffer may not be on disk yet.
        assert!(matches!(f.get(2), Err(AppError::Internal(_))));
        f.seal().unwrap();
        assert_eq!(f.get(2).unwrap(), b"two");
        assert_eq!(f.get(0).unwrap(), b"");
        assert_eq!(f.get(3).unwrap(), "tr\u{e8}s".as_bytes());
        assert!(f.has(0).unwrap() && !f.has(1).unwrap() && !f.has(9).unwrap());
        // A place never written, or past the end: said, not a panic.
        assert_eq!(
            f.get(1).unwrap_err().to_string(),
            "internal error: no record of place 2 of 4"
        );
        assert!(matches!(f.put(4, b"x"), Err(AppError::Internal(_))));
        // Written after the end.
        assert!(matches!(f.put(1, b"x"), Err(AppError::Internal(_))));
    }
}

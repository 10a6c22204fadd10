//! Temporary files a report writes what it holds of every trace to, so
//! that memory does not grow with the fleet: a file appended to and read
//! back anywhere, and records kept by place ([`SpillFile`]), each read
//! back from its own file or from where it already is on disk ([`OnDisk`]).
//! Beneath the trace store, the outlines and the summaries, which all
//! spill through it.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
pub(crate) use tracecost_replay::spilled_costs::read_at;
use tracecost_replay::spilled_costs::{create_unlinked, write_at};

use crate::AppError;

/// A temporary file written by appending and read back anywhere: on Unix
/// it has no name once open, so nothing is left behind however the run
/// ends (a named one goes with it). What the stores below share.
#[derive(Debug)]
pub(crate) struct TempFile {
    pub(crate) path: PathBuf,
    /// `None` once sealed.
    writer: Option<BufWriter<File>>,
    reader: File,
    /// Bytes appended so far.
    pub(crate) end: u64,
}

impl TempFile {
    /// A new file in the system's temporary folder (`TMPDIR`); `what`
    /// names it.
    pub(crate) fn new(what: &str) -> Result<Self, AppError> {
        let (path, file) = temp_file(what)?;
        let reader = file.try_clone().map_err(|e| store_error(&path, &e))?;
        Ok(TempFile {
            path,
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
            reader,
            end: 0,
        })
    }

    pub(crate) fn io(&self, source: std::io::Error) -> AppError {
        store_error(&self.path, &source)
    }

    /// Appends `bytes`: where they start and how long they are.
    pub(crate) fn append(&mut self, bytes: &[u8]) -> Result<(u64, usize), AppError> {
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
    pub(crate) fn seal(&mut self) -> Result<(), AppError> {
        if let Some(w) = self.writer.take() {
            w.into_inner()
                .map_err(|e| e.into_error())
                .map_err(|e| self.io(e))?;
        }
        Ok(())
    }

    /// The `len` bytes at `at`, once sealed.
    pub(crate) fn read(&self, at: u64, len: usize) -> Result<Vec<u8>, AppError> {
        if self.writer.is_some() {
            return Err(AppError::Internal("a record read before the end".into()));
        }
        let mut buf = vec![0u8; len];
        read_at(&self.reader, &mut buf, at).map_err(|e| self.io(e))?;
        Ok(buf)
    }
}

/// A new file, open to read and write, in the system's temporary folder
/// (`TMPDIR`); `what` names it. On Unix it has no name once open. Made by
/// hand rather than with tempfile, whose errors carry their own "at path"
/// suffix: the report's message names the file once, then says what to do.
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
    let file = create_unlinked(&path).map_err(io)?;
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

/// Text appended in order and read back in order, a chunk at a time, from
/// a temporary file: what a report writes late and in one piece (the
/// sessions' sections of the fleet page, which for a long trace are
/// hundreds of MB of per-call tables) is never held whole in memory.
#[derive(Debug)]
pub struct SpilledText {
    file: TempFile,
}

impl SpilledText {
    /// Bytes read back at a time.
    pub const CHUNK: usize = 1 << 20;

    /// A new, empty text in the system's temporary folder; `what` names
    /// its file.
    pub fn new(what: &str) -> Result<Self, AppError> {
        Ok(SpilledText {
            file: TempFile::new(what)?,
        })
    }

    /// Appends `text`.
    pub fn push(&mut self, text: &str) -> Result<(), AppError> {
        self.file.append(text.as_bytes()).map(|_| ())
    }

    /// Bytes appended so far.
    pub fn len(&self) -> u64 {
        self.file.end
    }

    /// Whether nothing was appended.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ends appending, then hands `f` everything appended, in order, in
    /// chunks of at most [`Self::CHUNK`] bytes (a chunk may end inside a
    /// character).
    pub fn read_chunks<E: From<AppError>>(
        mut self,
        mut f: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        self.file.seal()?;
        let mut at = 0u64;
        while at < self.file.end {
            let len =
                usize::try_from(self.file.end - at).map_or(Self::CHUNK, |n| n.min(Self::CHUNK));
            f(&self.file.read(at, len)?)?;
            at += len as u64;
        }
        Ok(())
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
    /// folder (as [`crate::store::TraceStore::new`]); `what` names it.
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

/// The store's failures are the machine's (a temporary folder missing or
/// full), and the message says what to do.
fn store_error(path: &std::path::Path, e: &std::io::Error) -> AppError {
    AppError::Environment(format!(
        "{}: the report's temporary file: {e}; set TMPDIR to a folder with room for about the inputs' size, or pass --in-memory",
        path.display()
    ))
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

    /// Spilled text reads back as appended, in chunks no longer than the
    /// bound, however the pieces and the chunks fall.
    #[test]
    fn spilled_text_reads_back_as_appended_in_bounded_chunks() {
        let piece = "é-".repeat(SpilledText::CHUNK / 5);
        let mut want = String::new();
        let mut text = SpilledText::new("test-text").unwrap();
        assert!(text.is_empty());
        for p in ["<head>", piece.as_str(), "", piece.as_str(), "</tail>"] {
            text.push(p).unwrap();
            want.push_str(p);
        }
        assert_eq!(text.len(), want.len() as u64);
        let mut got = Vec::new();
        let mut chunks = 0;
        text.read_chunks(|c: &[u8]| -> Result<(), AppError> {
            assert!(!c.is_empty() && c.len() <= SpilledText::CHUNK);
            got.extend_from_slice(c);
            chunks += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(String::from_utf8(got).unwrap(), want);
        assert!(chunks >= 2, "{chunks}");
        // Nothing appended reads as nothing.
        SpilledText::new("test-empty")
            .unwrap()
            .read_chunks(|_: &[u8]| -> Result<(), AppError> { panic!("no chunk") })
            .unwrap();
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

//! A fleet held on disk while it is replayed: each trace is written to a
//! temporary file as it is read (a trace alone on a line of a JSON Lines
//! input is not copied: where its line is suffices), and only its outline
//! (what plans are made of: names, provider, model and what a plan reads
//! of its calls; see [`TraceOutline`]) and the shape of its requests stay
//! in memory. A streamed report reads each trace back when
//! its turn comes and lets it go when it is done, so memory does not grow
//! with the fleet. What a report keeps of each trace until the end goes to
//! temporary files too ([`SpillFile`], [`crate::fleet::SummaryStore`]), or, when it comes
//! from the report's cache, is read back from there.

use std::fs::File;
use std::path::{Path, PathBuf};

use super::AppError;
use super::outline::{OutlineRecord, SharedStrings, TraceOutline};
use crate::digest::Key;
use tracecost_replay::sweep::RequestShape;
use tracecost_trace::Trace;

/// Re-exported: `app::store::SpillFile` and the rest keep their paths.
pub use crate::spill::{OnDisk, SpillFile, SpilledText, decode_record, encode_record};
use crate::spill::{TempFile, read_at};

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
    digests: Vec<Option<Key>>,
}

/// What a report keeps of a line of a JSON Lines input it read: the
/// outline of the trace alone on it and the shape of its requests, under
/// the digest of its bytes, so that a later report over the same line need
/// not parse it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownLine {
    /// The digest of the line's bytes.
    pub digest: Key,
    /// Its trace's outline, without its file.
    pub record: OutlineRecord,
    /// The shape of its trace's requests.
    pub shape: tracecost_replay::sweep::RequestShape,
}

/// Where a stored trace is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// In the temporary file: where its line starts and how long it is.
    Copied { at: u64, len: usize },
    /// On a line of input `input`, as [`tracecost_trace::LineOrigin`] says.
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
        origin: Option<(&Path, tracecost_trace::LineOrigin)>,
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
                    .append(tracecost_trace::to_json_line(trace).as_bytes())?;
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
        origin: tracecost_trace::LineOrigin,
        known: &KnownLine,
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
    /// ([`crate::digest::digest`]), known as they were read.
    pub fn set_last_digest(&mut self, digest: Key) {
        self.digests.resize(self.entries.len(), None);
        if let Some(last) = self.digests.last_mut() {
            *last = Some(digest);
        }
    }

    /// The digest of trace `i`'s bytes, when it was found as they were read.
    pub fn digest(&self, i: usize) -> Option<Key> {
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
        let mut traces = tracecost_trace::load_str(text, &shown)
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
                if tracecost_trace::line_hash(&buf) != hash {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        let traces = [tracecost_gen::session(6, 1), tracecost_gen::session(4, 2)];
        let text: String = traces.iter().map(tracecost_trace::to_json_line).collect();
        std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
        let mut store = TraceStore::new().unwrap();
        let mut outlines = Vec::new();
        tracecost_trace::Loader::new(&path)
            .each(&mut |t, origin| {
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
        let loaded = tracecost_trace::Loader::new(&path).load().unwrap().traces;
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
}

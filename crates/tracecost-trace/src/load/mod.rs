//! Reading and validating canonical trace files.
//!
//! The file is streamed through serde (never held whole in memory), each
//! object's members kept as raw JSON; messages are then converted one by one,
//! so the peak is the loaded trace itself: about twice the file size (each
//! block's raw JSON and its parsed text; see docs/robustness.md). Every error names the file and the place — line and
//! column for syntax and type errors, a JSON pointer for shape and
//! consistency errors — and what was expected.

use std::io::BufRead;
use std::path::Path;

use crate::Trace;
use crate::progress::{Progress, ReadProgress, Silent, Unit};

mod doc;
mod document;
mod error;
mod jsonl;
mod validate;

pub use document::{UTF8_BOM, load_str};
pub use error::{LoadedTraces, TraceError, Warning};
pub use jsonl::{
    KnownLines, LineDigest, LineOrigin, SkipLine, is_jsonl_name, line_digest, line_hash,
};
pub use validate::ABSURD_TOKENS;

use document::load_reader;
use jsonl::{load_lines, with_log_hint};

/// A trace file to load, with what the callers vary: where the bytes read
/// are reported, which lines of a JSON Lines file are already known, and
/// whether a damaged line is passed over. Every way of loading a file is
/// this one: `Loader::new(path).load()` for the traces whole,
/// `.progress(p).known(Some(k)).skipping(Some(s)).each(emit)` for one at
/// a time.
pub struct Loader<'a> {
    path: &'a Path,
    progress: &'a dyn Progress,
    known: Option<&'a mut dyn KnownLines>,
    skip: Option<&'a mut SkipLine<'a>>,
}

impl<'a> Loader<'a> {
    /// The file at `path`, read silently, every line parsed, its damage
    /// the load's error.
    pub fn new(path: &'a Path) -> Self {
        Loader {
            path,
            progress: &Silent,
            known: None,
            skip: None,
        }
    }

    /// Reports the bytes read to `progress` (one stage, named after the
    /// file, of its size in bytes).
    pub fn progress(mut self, progress: &'a dyn Progress) -> Self {
        self.progress = progress;
        self
    }

    /// With `known`, a line of a JSON Lines file of traces that it knows
    /// is handed to it instead of being parsed.
    pub fn known<'k: 'a>(mut self, known: Option<&'a mut (dyn KnownLines + 'k)>) -> Self {
        self.known = known.map(|k| k as &'a mut dyn KnownLines);
        self
    }

    /// With `skip`, a damaged line of a JSON Lines file of traces (not
    /// JSON, not UTF-8, not a valid trace document) is handed to `skip`
    /// with its place and passed over: the lines around it are read as
    /// ever, so one bad line costs its own trace and no other. Any other
    /// file is one document, and its damage is still the load's error.
    pub fn skipping<'s: 'a>(mut self, skip: Option<&'a mut SkipLine<'s>>) -> Self {
        self.skip = skip.map(|s| s as &'a mut SkipLine<'a>);
        self
    }

    /// Loads every trace in the file.
    pub fn load(self) -> Result<LoadedTraces, TraceError> {
        let mut traces = Vec::new();
        let warnings = self.each(&mut |t, _| {
            traces.push(t);
            Ok(())
        })?;
        Ok(LoadedTraces { traces, warnings })
    }

    /// Hands each trace to `emit` as it is read, with where a trace alone
    /// on a line of a JSON Lines file was read ([`LineOrigin`]; `None` for
    /// any other), and returns the warnings: a JSON Lines file of traces
    /// is read a line at a time, so that only one of its traces is in
    /// memory here. `emit`'s error stops the load. A failure after some
    /// traces were handed over leaves them handed over.
    pub fn each(
        self,
        emit: &mut dyn FnMut(Trace, Option<LineOrigin>) -> Result<(), TraceError>,
    ) -> Result<Vec<Warning>, TraceError> {
        let Loader {
            path,
            progress,
            known,
            skip,
        } = self;
        let shown = path.display().to_string();
        let meta = std::fs::metadata(path).map_err(|source| TraceError::Io {
            path: shown.clone(),
            source,
        })?;
        if meta.is_dir() {
            return Err(TraceError::Io {
                path: shown,
                source: std::io::Error::other("is a directory, expected a trace file"),
            });
        }
        if is_jsonl_name(path)
            && let Some(warnings) =
                load_lines(path, &shown, meta.len(), progress, known, skip, emit)?
        {
            return Ok(warnings);
        }
        let file = std::fs::File::open(path).map_err(|source| TraceError::Io {
            path: shown.clone(),
            source,
        })?;
        progress.start(&format!("load {shown}"), meta.len(), Unit::Bytes);
        let mut reader =
            std::io::BufReader::with_capacity(1 << 20, ReadProgress::new(file, progress));
        let bom = reader.fill_buf().map_err(|source| TraceError::Io {
            path: shown.clone(),
            source,
        })?;
        if bom.starts_with(UTF8_BOM) {
            reader.consume(UTF8_BOM.len());
        }
        let loaded = load_reader(reader, &shown).map_err(|e| with_log_hint(e, path))?;
        for mut t in loaded.traces {
            t.source = Some(shown.clone());
            emit(t, None)?;
        }
        Ok(loaded.warnings)
    }
}

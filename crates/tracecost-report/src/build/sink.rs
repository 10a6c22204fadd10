//! Where a report's files go and why writing one fails: the sink, the
//! chunk a growing file is gathered in, the error. Beneath the writer and
//! every file kind's writer.

use std::collections::BTreeMap;
use std::io;

use crate::charts::ChartError;

/// Where a report's files go, as they are made: a report of a thousand
/// sessions is written session by session, never held whole.
pub trait ReportSink {
    /// Writes the whole file `rel` (a path relative to the report's root).
    fn put(&mut self, rel: &str, bytes: &[u8]) -> io::Result<()>;
    /// Appends to the file `rel`, creating it.
    fn append(&mut self, rel: &str, bytes: &[u8]) -> io::Result<()>;
}

/// A sink that keeps the files in memory (for tests and small reports).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MemorySink(pub BTreeMap<String, Vec<u8>>);

impl ReportSink for MemorySink {
    fn put(&mut self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        self.0.insert(rel.to_owned(), bytes.to_vec());
        Ok(())
    }

    fn append(&mut self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        self.0
            .entry(rel.to_owned())
            .or_default()
            .extend_from_slice(bytes);
        Ok(())
    }
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A chart could not be drawn.
    #[error(transparent)]
    Chart(#[from] ChartError),
    /// A file could not be written.
    #[error("{0}")]
    Write(#[from] io::Error),
    /// What the report holds of every trace until the end (the fleet's
    /// summaries, the lines of `results.json`) could not be kept or read
    /// back.
    #[error(transparent)]
    Summaries(#[from] tracecost_app::AppError),
}

/// Bytes of a file that lists every session (`sessions.csv`, the page of
/// sessions, the fleet's answer in `results.json`) gathered before they go
/// to the sink: such a file grows with the fleet and is never held whole.
pub(super) const CHUNK: usize = 1 << 16;

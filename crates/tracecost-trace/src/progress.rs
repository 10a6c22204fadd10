//! How far a long job has got, for whoever wants to show it.
//!
//! Loading a 1 GB trace, importing a folder of transcripts or replaying
//! thousands of calls takes long enough that a user wants to see it move.
//! The library reports through [`Progress`] and draws nothing itself: the
//! command line turns it into a bar on a terminal, an embedding program
//! into whatever it likes, and [`Silent`] ignores it.

use std::io::Read;

/// What a stage counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bytes of input read.
    Bytes,
    /// Things done: calls replayed, configs swept.
    Items,
    /// Calls of a fleet's traces, `traces` of them: the stage also counts
    /// the traces done ([`Progress::traces_done`]), so that one bar says
    /// how many traces and calls are done of the whole fleet.
    Calls {
        /// Traces in the stage.
        traces: u64,
    },
}

/// Told how far a long job has got. Called from worker threads, hence
/// `Sync`; calls are cheap and frequent (about one per megabyte or per
/// call), so an implementation should draw only when something visible
/// changes.
pub trait Progress: Sync {
    /// A new stage begins, of `total` units.
    fn start(&self, stage: &str, total: u64, unit: Unit);
    /// `n` more units of the current stage are done.
    fn advance(&self, n: u64);
    /// `n` more traces of a [`Unit::Calls`] stage are done (their calls
    /// are counted by [`Progress::advance`]).
    fn traces_done(&self, _n: u64) {}
}

/// Reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {
    fn start(&self, _: &str, _: u64, _: Unit) {}
    fn advance(&self, _: u64) {}
}

/// A reader that reports every byte read through it.
pub(crate) struct ReadProgress<'a, R> {
    inner: R,
    progress: &'a dyn Progress,
}

impl<'a, R: Read> ReadProgress<'a, R> {
    pub(crate) fn new(inner: R, progress: &'a dyn Progress) -> Self {
        Self { inner, progress }
    }
}

impl<R: Read> Read for ReadProgress<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.progress.advance(n as u64);
        Ok(n)
    }
}

/// Records what it is told: for testing the places that report, here and
/// in a program that embeds them.
#[derive(Debug, Default)]
pub struct Recorder {
    /// Each stage begun: its name, its total, and the units done so far.
    pub events: std::sync::Mutex<Vec<(String, u64, u64)>>,
    /// Traces done, over every stage.
    pub traces: std::sync::atomic::AtomicU64,
}

impl Progress for Recorder {
    fn start(&self, stage: &str, total: u64, _: Unit) {
        self.events
            .lock()
            .unwrap()
            .push((stage.to_owned(), total, 0));
    }
    fn advance(&self, n: u64) {
        if let Some(last) = self.events.lock().unwrap().last_mut() {
            last.2 += n;
        }
    }
    fn traces_done(&self, n: u64) {
        self.traces
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_progress_reader_reports_every_byte() {
        let data = vec![7u8; 10_000];
        let rec = Recorder::default();
        rec.start("read", 10_000, Unit::Bytes);
        let mut out = Vec::new();
        ReadProgress::new(&data[..], &rec)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, data);
        assert_eq!(
            rec.events.lock().unwrap()[0],
            ("read".into(), 10_000, 10_000)
        );
    }
}

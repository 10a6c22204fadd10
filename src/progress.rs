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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records what it is told, for tests of the places that report.
    #[derive(Default)]
    pub(crate) struct Recorder {
        pub(crate) events: Mutex<Vec<(String, u64, u64)>>,
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
    }

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

#[cfg(test)]
mod reporting {
    //! The long-running steps report as documented.
    use super::tests::Recorder;
    use std::path::{Path, PathBuf};

    fn fixture(rel: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
    }

    fn size_of(files: &[PathBuf]) -> u64 {
        crate::trace::import::file_sizes(files).iter().sum()
    }

    #[test]
    fn loading_reports_every_byte_of_the_file() {
        let path = fixture("traces/massage-gun.json");
        let rec = Recorder::default();
        crate::trace::load_path_with(&path, &rec).unwrap();
        let events = rec.events.lock().unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        assert_eq!(events.len(), 1);
        assert!(events[0].0.starts_with("load ") && events[0].0.ends_with("massage-gun.json"));
        assert_eq!((events[0].1, events[0].2), (size, size));
    }

    #[test]
    fn imports_report_the_bytes_of_every_input_file() {
        use crate::trace::import::{Format, ImportOptions};
        let opts = ImportOptions::default();
        let cc = fixture("tests/fixtures/claude-code");
        let rec = Recorder::default();
        let mut n = 0;
        Format::ClaudeCode
            .import_each(std::slice::from_ref(&cc), &opts, &rec, &mut |_| {
                n += 1;
                Ok::<_, crate::trace::import::ImportError>(())
            })
            .unwrap();
        assert!(n > 0);
        let (stage, total, done) = rec.events.lock().unwrap()[0].clone();
        assert_eq!(stage, "import");
        assert!(total > 0);
        assert_eq!(done, total);

        let log = fixture("tests/fixtures/import/anthropic_plain.jsonl");
        let rec = Recorder::default();
        Format::Anthropic
            .import_each(std::slice::from_ref(&log), &opts, &rec, &mut |_| {
                Ok::<_, crate::trace::import::ImportError>(())
            })
            .unwrap();
        let size = size_of(&[log]);
        assert_eq!(rec.events.lock().unwrap()[0], ("import".into(), size, size));
    }

    #[test]
    fn a_replay_reports_one_step_per_call() {
        use crate::cost::pricing::Pricing;
        use crate::cost::tokens::TokenMemo;
        use crate::replay::{PreparedTrace, ReplayOptions, replay};
        let trace = crate::trace::generate::session(20, 3);
        let pricing = Pricing::builtin();
        let memo = TokenMemo::new(std::sync::Arc::new(crate::cost::tokens::CharsPerToken(4.0)));
        let price = pricing.lookup(&trace.model).unwrap();
        let prepared = PreparedTrace::new(&trace, &memo, price, true);
        let rec = Recorder::default();
        super::Progress::start(&rec, "replay", 20, super::Unit::Items);
        let opts = ReplayOptions {
            batch: false,
            progress: Some(&rec),
            ..Default::default()
        };
        let config = "ledger:t=2000,k=1+native".parse().unwrap();
        replay(&prepared, &config, &pricing, &memo, opts).unwrap();
        assert_eq!(rec.events.lock().unwrap()[0], ("replay".into(), 20, 20));
    }
}

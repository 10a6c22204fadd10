//! How far a long job has got, for whoever wants to show it: the trace
//! crate's [`Progress`], here because every layer above it reports through
//! it (see `tracecost_trace::progress`).

pub use tracecost_trace::progress::*;

#[cfg(test)]
mod reporting {
    //! The long-running steps report as documented.
    use crate::progress::Recorder;
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
        crate::trace::Loader::new(&path)
            .progress(&rec)
            .load()
            .unwrap();
        let events = rec.events.lock().unwrap();
        let size = std::fs::metadata(&path).unwrap().len();
        assert_eq!(events.len(), 1);
        assert!(events[0].0.starts_with("load ") && events[0].0.ends_with("massage-gun.json"));
        assert_eq!((events[0].1, events[0].2), (size, size));
    }

    #[test]
    fn imports_report_the_bytes_of_every_input_file() {
        use crate::trace::import::{ImportOptions, InputFormat};
        let opts = ImportOptions::default();
        let cc = fixture("tests/fixtures/claude-code");
        let rec = Recorder::default();
        let mut n = 0;
        InputFormat::ClaudeCode
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
        InputFormat::Anthropic
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
        use crate::replay::{PreparedTrace, ReplayContext, ReplayOptions, replay};
        let trace = crate::trace::generate::session(20, 3);
        let pricing = Pricing::builtin();
        let memo = TokenMemo::new(std::sync::Arc::new(crate::cost::tokens::CharsPerToken(4.0)));
        let price = pricing.lookup(&trace.model).unwrap();
        let prepared = PreparedTrace::new(&trace, &memo, price, true);
        let rec = Recorder::default();
        crate::progress::Progress::start(&rec, "replay", 20, crate::progress::Unit::Items);
        let opts = ReplayOptions {
            batch: false,
            progress: Some(&rec),
            ..Default::default()
        };
        let config = "ledger:t=2000,k=1+native".parse().unwrap();
        replay(
            &prepared,
            &config,
            ReplayContext {
                pricing: &pricing,
                memo: &memo,
                opts,
            },
        )
        .unwrap();
        assert_eq!(rec.events.lock().unwrap()[0], ("replay".into(), 20, 20));
    }
}

//! The pipelines run as library calls, without the binary: what a binding
//! or an embedding program gets.

use crate::util::repo;

use tracecost_app::{CalibrationChoice, CostPlan, ReplayPlan, SweepOptions, SweepPlan, TraceRun};
use tracecost_policy::{CacheKind, CompactionKind, GridSpec, PolicyFlags};
use tracecost_replay::sweep::Grid;
use tracecost_trace::progress::Silent;

fn massage_gun() -> tracecost_trace::Trace {
    let (traces, warnings) =
        tracecost_app::load_traces(&[repo("traces/massage-gun.json")], &Silent).unwrap();
    assert!(warnings.is_empty());
    traces.into_iter().next().unwrap()
}

fn cost() -> CostPlan {
    CostPlan::new(None, "o200k_base", CalibrationChoice::Auto, false).unwrap()
}

#[test]
fn replay_gives_the_baseline_figures_and_a_saving_against_no_compaction() {
    let trace = massage_gun();
    let resolved = PolicyFlags {
        compaction: Some(CompactionKind::Ledger),
        cache: Some(CacheKind::Tail),
        ..Default::default()
    }
    .resolve(CacheKind::None)
    .unwrap();
    assert_eq!(resolved.config.to_string(), "ledger:t=8000,k=2+tail:ttl=5m");
    let plan = ReplayPlan {
        runs: vec![TraceRun {
            trace,
            config: resolved.config,
            implied: resolved.implied,
            kept: resolved.kept,
        }],
        cost: cost(),
    };
    let out = tracecost_app::replay(&plan, &Silent).unwrap();
    assert_eq!(out.len(), 1);
    let totals = &out[0].result.totals;
    // cost-baseline.json records this pair: the pipeline gives its figures.
    assert_eq!(totals.usage.cache_creation_input_tokens, 141_352);
    assert_eq!(totals.usage.cache_read_input_tokens, 108_791);
    assert!(
        (totals.cost_usd - 3.0245865).abs() < 1e-9,
        "{}",
        totals.cost_usd
    );
    let saved = out[0].savings.vs_no_compaction_usd.unwrap();
    assert!((saved - (3.310296 - 3.0245865)).abs() < 1e-9, "{saved}");
}

#[test]
fn sweep_ranks_every_config_of_the_grid_and_keeps_the_baseline() {
    let trace = massage_gun();
    let grid = GridSpec {
        compactions: Some(vec!["off".into(), "ledger".into()]),
        thresholds: Some(vec![8000]),
        keep_lasts: Some(vec![2]),
        caches: Some(vec!["none".into(), "tail".into()]),
        ttl: None,
    };
    let (compactions, caches) = grid.expand().unwrap();
    let configs = Grid {
        compactions,
        caches,
        models: vec![None],
    }
    .configs();
    assert_eq!(configs.len(), 4);
    let mut plan =
        SweepPlan::from_configs(vec![trace], configs, SweepOptions::default(), cost()).unwrap();
    plan.grid = grid;
    let sweeps = tracecost_app::sweep(&plan, &Silent).unwrap();
    let s = &sweeps[0];
    assert_eq!(s.rows.len(), 4);
    assert_eq!(s.rows[s.baseline].result.config.to_string(), "off+none");
    let costs: Vec<f64> = s.rows.iter().map(|r| r.result.totals.cost_usd).collect();
    assert!(costs.windows(2).all(|w| w[0] <= w[1]), "{costs:?}");
    assert!((s.rows[s.baseline].result.totals.cost_usd - 8.43351).abs() < 1e-9);
}

#[test]
fn recall_answers_found_and_not_found() {
    let plan = tracecost_app::RecallPlan {
        traces: vec![massage_gun()],
        id: "toolu_01e3odTFsJ0Io7BAixg4bBh7".into(),
        request: tracecost_engine::recall::RecallRequest {
            query: Some("B07".into()),
            ..Default::default()
        },
        ledger_dir: None,
        answer_chars: None,
    };
    let a = tracecost_app::recall(&plan).unwrap();
    assert!(a.found);
    assert!(a.text.contains("matches for \"B07\""), "{}", a.text);
    let missing = tracecost_app::RecallPlan {
        id: "nope".into(),
        ..plan
    };
    let a = tracecost_app::recall(&missing).unwrap();
    assert!(!a.found);
    assert_eq!(a.text, "[tool_memory not found: nope]");
}

#[test]
fn a_bad_tokenizer_is_an_input_error() {
    let e = CostPlan::new(None, "nonsense", CalibrationChoice::Auto, false).unwrap_err();
    assert_eq!(e.class(), tracecost_app::ErrorClass::Input);
}

#[test]
fn check_compares_the_repository_baseline_without_a_regression() {
    let plan = tracecost_app::CheckPlan::from_file(
        &repo("cost-baseline.json"),
        None,
        false,
        None,
        &mut |p| Ok(tracecost_app::load_traces(&[p.to_path_buf()], &Silent)?.0),
    )
    .unwrap();
    let outcome = tracecost_app::check(&plan).unwrap();
    assert!(!outcome.regressed());
    let tracecost_app::CheckOutcome::Compared { rows, .. } = outcome else {
        panic!("not compared")
    };
    assert_eq!(rows.len(), plan.baseline.entries.len());
}

#[test]
fn stability_and_report_run_on_a_bundled_trace() {
    let trace = massage_gun();
    let config: tracecost_policy::Config = "ledger:t=8000,k=2+tail".parse().unwrap();
    let plan = tracecost_app::StabilityPlan {
        runs: vec![TraceRun {
            trace: trace.clone(),
            config,
            implied: Vec::new(),
            kept: Vec::new(),
        }],
        tokenizer_spec: "o200k_base".into(),
        tokenizer: tracecost_cost::tokens::parse_tokenizer("o200k_base").unwrap(),
    };
    let out = tracecost_app::stability(&plan, &Silent).unwrap();
    assert!(out[0].report.violations.is_empty());
    assert_eq!(out[0].report.stubs, 5);

    let grid = GridSpec {
        compactions: Some(vec!["off".into(), "ledger".into()]),
        thresholds: Some(vec![8000]),
        keep_lasts: Some(vec![2]),
        caches: Some(vec!["tail".into()]),
        ttl: None,
    };
    let (compactions, caches) = grid.expand().unwrap();
    let configs = Grid {
        compactions,
        caches,
        models: vec![None],
    }
    .configs();
    let mut seen = Vec::new();
    let report = tracecost_app::report(
        &tracecost_app::ReportPlan {
            sweep: {
                let mut plan =
                    SweepPlan::from_configs(vec![trace], configs, SweepOptions::default(), cost())
                        .unwrap();
                plan.grid = grid;
                plan
            },
            unread: Vec::new(),
        },
        &Silent,
        &mut |_, t, r| {
            seen.push((t.name.clone(), r.clone()));
            Ok(())
        },
    )
    .unwrap();
    // Each session's full report is handed over once, per-call rows and all.
    assert_eq!(seen.len(), 1);
    let (name, r) = &seen[0];
    assert_eq!(*name, report.sessions.get(0).unwrap().sweep.trace);
    assert!(r.sweep.rows.iter().all(|row| !row.result.calls.is_empty()));
    // The stability checked is the recommendation's.
    assert_eq!(r.stability.digest.len(), 64);
    assert_eq!(r.sweep.rows.len(), 3, "two configs and the baseline");
    // What the report keeps is the same sweep without its per-call rows.
    let kept = report.sessions.get(0).unwrap();
    assert_eq!(kept.sweep.rows.len(), 3);
    assert!(
        kept.sweep
            .rows
            .iter()
            .all(|row| row.result.calls.is_empty())
    );
    assert_eq!(kept.stability.unwrap().stubs, r.stability.stubs);
}

#[test]
fn import_writes_traces_and_usage_prices_a_folder() {
    let plan = tracecost_app::ImportPlan {
        format: Some(tracecost_import::InputFormat::Anthropic),
        inputs: vec![repo("tests/fixtures/import/anthropic_plain.jsonl")],
        options: Default::default(),
    };
    let mut out = Vec::new();
    let s = tracecost_app::import(&plan, &Silent, &mut out, "out.json").unwrap();
    assert!(s.traces >= 1 && s.calls >= 1);
    let loaded = tracecost_trace::load_str(std::str::from_utf8(&out).unwrap(), "out.json").unwrap();
    assert_eq!(loaded.traces.len(), s.traces);

    let report = tracecost_app::usage(&tracecost_app::UsagePlan {
        paths: vec![repo("tests/fixtures/usage")],
        pricing: tracecost_cost::pricing::Pricing::builtin(),
    })
    .unwrap();
    let scan = tracecost_import::claude_code::scan_usage(&[repo("tests/fixtures/usage")]).unwrap();
    assert_eq!(report.sessions.len(), scan.sessions.len());
    assert_eq!(report.read.files, scan.files);
    assert_eq!(report.read.rows, scan.rows);
    assert!(report.totals.total_cost > 0.0);
    let none = tracecost_app::usage(&tracecost_app::UsagePlan {
        paths: Vec::new(),
        pricing: tracecost_cost::pricing::Pricing::builtin(),
    })
    .unwrap_err();
    assert_eq!(none.class(), tracecost_app::ErrorClass::Input);
}

#[test]
fn a_report_counts_every_trace_and_call_of_the_fleet_on_one_bar() {
    // An account's sessions, streamed from a store and held in memory: the
    // report's bar ends at every call and every trace.
    let traces: Vec<_> = tracecost_gen::fleet(12, 3).collect();
    let calls: u64 = traces.iter().map(|t| t.calls.len() as u64).sum();
    let configs: Vec<tracecost_policy::Config> = ["off+tail", "ledger:t=2000,k=1+tail"]
        .iter()
        .map(|c| c.parse().unwrap())
        .collect();
    for stored in [false, true] {
        let mut plan = SweepPlan::from_configs(
            traces.clone(),
            configs.clone(),
            SweepOptions::default(),
            cost(),
        )
        .unwrap();
        if stored {
            let mut store = tracecost_app::store::TraceStore::new().unwrap();
            let outlines: Vec<_> = traces.iter().map(|t| store.put(t).unwrap()).collect();
            store.seal().unwrap();
            plan = SweepPlan::from_configs_stored(
                outlines,
                store,
                configs.clone(),
                SweepOptions::default(),
                cost(),
            )
            .unwrap();
        }
        let rec = tracecost_trace::progress::Recorder::default();
        let mut handed = 0u64;
        let report = tracecost_app::report(
            &tracecost_app::ReportPlan {
                sweep: plan,
                unread: Vec::new(),
            },
            &rec,
            &mut |_, t, _| {
                // A trace is counted done before its pages are written.
                handed += t.calls.len() as u64;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(handed, calls);
        let events = rec.events.lock().unwrap();
        let (stage, total, done) = &events[0];
        assert_eq!(
            stage, "report: replaying under 2 configs",
            "stored: {stored}"
        );
        assert_eq!((*total, *done), (calls, calls), "stored: {stored}");
        // A check of the fleet's recommendation, when one is made, is one
        // more pass over every call.
        let checked = usize::from(report.fleet.stability.is_some());
        assert_eq!(events.len(), 1 + checked, "stored: {stored}");
        if let Some((stage, total, done)) = events.get(1) {
            assert!(
                stage.starts_with("report: checking the stubs of "),
                "{stage}"
            );
            assert_eq!((*total, *done), (calls, calls));
        }
        assert_eq!(
            rec.traces.load(std::sync::atomic::Ordering::Relaxed),
            traces.len() as u64 * (1 + checked as u64),
            "stored: {stored}"
        );
    }
}

//! The pipelines run as library calls, without the binary: what a binding
//! or an embedding program gets.

use std::path::PathBuf;

use tracecost::app::{self, Calibration, CostPlan, ReplayPlan, SweepPlan, TraceRun};
use tracecost::policy::{CacheKind, CompactionKind, GridSpec, PolicyFlags};
use tracecost::progress::Silent;
use tracecost::replay::sweep::Grid;

fn massage_gun() -> tracecost::trace::Trace {
    let (traces, warnings) =
        app::load_traces(&[PathBuf::from("traces/massage-gun.json")], &Silent).unwrap();
    assert!(warnings.is_empty());
    traces.into_iter().next().unwrap()
}

fn cost() -> CostPlan {
    CostPlan::new(None, "o200k_base", Calibration::Auto, false).unwrap()
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
        }],
        cost: cost(),
    };
    let out = app::replay(&plan, &Silent).unwrap();
    assert_eq!(out.len(), 1);
    let totals = &out[0].result.totals;
    // ci/baseline.json records this pair: the pipeline gives its figures.
    assert_eq!(totals.usage.cache_creation_input_tokens, 130_359);
    assert_eq!(totals.usage.cache_read_input_tokens, 108_791);
    assert!((totals.cost_usd - 2.81846775).abs() < 1e-9, "{}", totals.cost_usd);
    let saved = out[0].savings.vs_no_compaction_usd.unwrap();
    assert!((saved - (3.194745 - 2.81846775)).abs() < 1e-9, "{saved}");
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
    let plan = SweepPlan {
        traces: vec![trace],
        grid,
        models: Vec::new(),
        configs,
        recall_cost_usd: None,
        cost: cost(),
    };
    let sweeps = app::sweep(&plan, &Silent).unwrap();
    let s = &sweeps[0];
    assert_eq!(s.rows.len(), 4);
    assert_eq!(s.rows[s.baseline].result.config.to_string(), "off+none");
    let costs: Vec<f64> = s.rows.iter().map(|r| r.result.totals.cost_usd).collect();
    assert!(costs.windows(2).all(|w| w[0] <= w[1]), "{costs:?}");
    assert!((s.rows[s.baseline].result.totals.cost_usd - 8.229165).abs() < 1e-9);
}

#[test]
fn recall_answers_found_and_not_found() {
    let plan = app::RecallPlan {
        traces: vec![massage_gun()],
        id: "toolu_01e3odTFsJ0Io7BAixg4bBh7".into(),
        request: tracecost::engine::recall::RecallRequest {
            query: Some("B07".into()),
            ..Default::default()
        },
        ledger_dir: None,
    };
    let a = app::recall(&plan).unwrap();
    assert!(a.found);
    assert!(a.text.contains("matches for \"B07\""), "{}", a.text);
    let missing = app::RecallPlan {
        id: "nope".into(),
        ..plan
    };
    let a = app::recall(&missing).unwrap();
    assert!(!a.found);
    assert_eq!(a.text, "[tool_memory not found: nope]");
}

#[test]
fn a_bad_tokenizer_is_an_input_error() {
    let e = CostPlan::new(None, "nonsense", Calibration::Auto, false).unwrap_err();
    assert_eq!(e.class(), app::ErrorClass::Input);
}

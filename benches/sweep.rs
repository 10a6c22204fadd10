//! The sweep floor ratio: how many times the unavoidable work a sweep of a
//! 500-call session costs.
//!
//! - **floor**: one parse of the trace JSON (`trace::load_str`) plus one
//!   tokenization pass over its distinct content (`PreparedTrace::new` with
//!   a fresh `TokenMemo`). Any sweep must do at least this.
//! - **sweep**: the same parse and preparation, then `sweep_trace` over the
//!   grid (every config replayed, scored for recall risk and ranked).
//!
//! The headline is the full grid: 25 ledger thresholds × 5 keep-last values
//! × 8 cache policies = 1,000 configs (plus the `off+none` baseline that
//! `sweep_trace` adds) over `generate::session(500, 1)`. A small variant
//! (`sweep-40`: 5 × 1 × 8 configs) shows the fixed part of a sweep.
//!
//! Each criterion iteration is one whole run (results dropped included),
//! timed with `iter_custom`; the headline takes 10–40 s a run on the 2-core
//! machine, so its 10 samples (plus one warm-up run) take most of a full
//! `cargo bench`. `TRACECOST_BENCH_QUICK=1` skips it (the floor and the
//! small variant still run).
//!
//! A third group, **fleet**, sweeps a generated fleet of 100 sessions (126
//! traces, one account) the way `tracecost sweep` does (`app::sweep`: cache
//! groups side by side, configs in parallel) over the 40-config grid, with
//! one cache per account and one per trace, against its own floor (every
//! trace parsed and prepared).
//!
//! Run: `cargo bench --bench sweep`. See docs/benchmarks.md.

mod common;

use std::cell::RefCell;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode};
use tracecost::app::{CacheScope, CalibrationChoice, CostPlan, SweepOptions, SweepPlan};
use tracecost::cost::tokens::TokenMemo;
use tracecost::policy::Config;
use tracecost::progress::Silent;
use tracecost::replay::sweep::sweep_trace;
use tracecost::replay::{PreparedTrace, ReplayContext, ReplayOptions};
use tracecost::trace::{Trace, generate, load_str, to_json, traces_to_json};

/// Parses the trace and makes a fresh (empty) memo.
fn parse(json: &str) -> (Trace, TokenMemo) {
    let trace = load_str(black_box(json), "session-500-s1.json")
        .unwrap()
        .traces
        .remove(0);
    (trace, common::memo())
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let pricing = common::pricing();
    // Build the shared BPE tables once, outside every measurement.
    common::memo().count("warm up");
    let headline = std::env::var_os("TRACECOST_BENCH_QUICK").is_none();
    let session = generate::session(500, 1);
    let json = to_json(&session);
    drop(session);
    let full = common::sweep_grid(&common::SWEEP_THRESHOLDS, &common::SWEEP_KEEP_LAST).configs();
    let small = common::sweep_grid(&[2_000, 4_000, 8_000, 16_000, 32_000], &[2]).configs();
    assert_eq!(full.len(), 1_000);

    // Per-iteration wall times, kept to print the ratio at the end.
    let floor_times = RefCell::new(Vec::new());
    let sweep_times: RefCell<Vec<(usize, f64)>> = RefCell::new(Vec::new());

    let run_floor = |json: &str| {
        let (trace, memo) = parse(json);
        let price = common::price_of(&pricing, &trace);
        let prepared = PreparedTrace::new(&trace, &memo, price, true);
        black_box(prepared.messages.len());
    };
    let run_sweep = |json: &str, configs: &[Config]| {
        let (trace, memo) = parse(json);
        let price = common::price_of(&pricing, &trace);
        let prepared = PreparedTrace::new(&trace, &memo, price, true);
        let baseline = Config::status_quo(&trace).expect("status quo");
        let s = sweep_trace(
            &prepared,
            configs,
            &baseline,
            ReplayContext {
                pricing: &pricing,
                memo: &memo,
                opts: ReplayOptions::default(),
            },
            None,
            &|| {},
        )
        .unwrap();
        black_box(s.rows.len());
    };

    let mut g = c.benchmark_group("sweep_floor");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    g.bench_function("floor/session-500", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let t = Instant::now();
                run_floor(&json);
                let d = t.elapsed();
                floor_times.borrow_mut().push(d.as_secs_f64());
                total += d;
            }
            total
        })
    });
    for (label, configs) in [
        ("sweep-40/session-500", &small),
        ("sweep-1000/session-500", &full),
    ] {
        if configs.len() == full.len() && !headline {
            println!("sweep_floor/{label}: skipped (TRACECOST_BENCH_QUICK is set)");
            continue;
        }
        // Each iteration is one whole sweep, timed on its own.
        g.bench_function(label, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let t = Instant::now();
                    run_sweep(&json, configs);
                    let d = t.elapsed();
                    sweep_times
                        .borrow_mut()
                        .push((configs.len(), d.as_secs_f64()));
                    total += d;
                }
                total
            })
        });
    }
    g.finish();
    fleet(&mut c, &small);

    let floor_times = floor_times.into_inner();
    if floor_times.is_empty() {
        return; // filtered out
    }
    let (f_med, f_lo, f_hi) = common::median_range(floor_times);
    println!(
        "sweep floor ratio (500-call session; median [min .. max] of every timed run, warm-up included):"
    );
    println!("  floor (parse + tokenize once): {f_med:.3} s [{f_lo:.3} .. {f_hi:.3}]");
    let sweep_times = sweep_times.into_inner();
    for n in [small.len(), full.len()] {
        let t: Vec<f64> = sweep_times
            .iter()
            .filter(|(k, _)| *k == n)
            .map(|(_, t)| *t)
            .collect();
        if t.is_empty() {
            continue;
        }
        let runs = t.len();
        let (med, lo, hi) = common::median_range(t);
        println!(
            "  sweep of {n} configs (+ baseline): {med:.3} s [{lo:.3} .. {hi:.3}] over {runs} runs \
             = {:.1} x floor, {:.2} ms per config",
            med / f_med,
            (med - f_med) / (n + 1) as f64 * 1e3
        );
    }
}

/// The fleet group: parse + prepare every trace (the floor), then the
/// sweep pipeline with each cache scope.
fn fleet(c: &mut Criterion, configs: &[Config]) {
    let traces: Vec<Trace> = generate::fleet(100, 1).collect();
    let json = traces_to_json(&traces);
    drop(traces);
    let parse = |json: &str| load_str(black_box(json), "fleet-100.json").unwrap().traces;
    let cost = |scope| {
        let mut cost = CostPlan::new(None, "o200k_base", CalibrationChoice::Auto, false).unwrap();
        cost.cache_scope = scope;
        cost
    };
    let mut g = c.benchmark_group("fleet");
    g.sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(5));
    g.bench_function("floor/100-sessions", |b| {
        b.iter(|| {
            let traces = parse(&json);
            let cost = cost(CacheScope::Trace);
            let memo = cost.memo();
            let n: usize = traces
                .iter()
                .map(|t| {
                    let price = cost.pricing.lookup(&t.model).unwrap();
                    PreparedTrace::new(t, &memo, price, true).messages.len()
                })
                .sum();
            black_box(n)
        })
    });
    for (label, scope) in [
        ("sweep-40/100-sessions/account", CacheScope::Account),
        ("sweep-40/100-sessions/trace", CacheScope::Trace),
    ] {
        g.bench_function(label, |b| {
            b.iter(|| {
                let plan = SweepPlan::from_configs(
                    parse(&json),
                    configs.to_vec(),
                    SweepOptions::default(),
                    cost(scope),
                )
                .unwrap();
                black_box(tracecost::app::sweep(&plan, &Silent).unwrap().len())
            })
        });
    }
    g.finish();
}

//! Replay of one trace under one config, call by call, through the engine
//! and the cache simulator (the trace prepared once, the memo warm).
//!
//! Run: `cargo bench --bench replay`. See docs/benchmarks.md.

mod common;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tracecost::replay::{ReplayOptions, replay};
use tracecost::trace::generate;

fn replay_one(c: &mut Criterion) {
    let pricing = common::pricing();
    let memo = common::memo();
    let massage = generate::massage_gun();
    let session = generate::session(200, 1);
    let mut g = c.benchmark_group("replay");
    for (label, trace, configs) in [
        (
            "massage-gun",
            &massage,
            &[
                "off+none",
                common::LEDGER_TAIL,
                "ledger:t=8000,k=2+native:manifest=cached,ttl=5m",
            ][..],
        ),
        (
            "session-200",
            &session,
            &["off+none", common::LEDGER_TAIL][..],
        ),
    ] {
        let prepared = common::prepare(trace, &memo, &pricing);
        g.throughput(Throughput::Elements(trace.calls.len() as u64));
        if trace.calls.len() > 100 {
            g.sample_size(10).measurement_time(Duration::from_secs(5));
        }
        for cfg in configs {
            let config = common::config(cfg);
            // First run outside the measurement: counts the stubs into the memo.
            replay(
                &prepared,
                &config,
                &pricing,
                &memo,
                ReplayOptions::default(),
            )
            .unwrap();
            g.bench_function(format!("{label}/{cfg}"), |b| {
                b.iter(|| {
                    let r = replay(
                        black_box(&prepared),
                        &config,
                        &pricing,
                        &memo,
                        ReplayOptions::default(),
                    )
                    .unwrap();
                    black_box(r.totals.cost_usd)
                })
            });
        }
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    targets = replay_one
}
criterion_main!(benches);

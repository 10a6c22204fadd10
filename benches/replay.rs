//! Replay of one trace under one config, call by call, through the engine
//! and the cache simulator (the trace prepared once, the memo warm).
//!
//! Run: `cargo bench --bench replay`. See docs/benchmarks.md.

mod common;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tracecost::replay::{ReplayContext, ReplayOptions, replay};
use tracecost::trace::generate;

/// One replay with the default options; its cost, kept from the optimizer.
fn replay_once(
    prepared: &tracecost::replay::PreparedTrace<'_>,
    config: &tracecost::policy::Config,
    pricing: &tracecost::cost::pricing::Pricing,
    memo: &tracecost::cost::tokens::TokenMemo,
) -> f64 {
    let r = replay(
        prepared,
        config,
        ReplayContext {
            pricing,
            memo,
            opts: ReplayOptions::default(),
        },
    )
    .unwrap();
    black_box(r.totals.cost_usd)
}

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
            replay_once(&prepared, &config, &pricing, &memo);
            g.bench_function(format!("{label}/{cfg}"), |b| {
                b.iter(|| replay_once(black_box(&prepared), &config, &pricing, &memo))
            });
        }
    }
    g.finish();
}

/// A long trace of one tool loop: a fetch per call, every 50th result
/// ~16K characters and the others a few dozen, each call sending the whole
/// history so far. The peers clear from call to call over it.
fn long_tool_loop(calls: usize) -> tracecost::trace::Trace {
    let mut messages = vec![r#"{"role":"user","content":"Start."}"#.to_owned()];
    for i in 0..calls - 1 {
        messages.push(format!(
            r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_{i}","name":"fetch","input":{{"url":"https://e.com/{i}"}}}}]}}"#
        ));
        let body = format!("page {i}: ")
            + &format!("word{} ", i % 97).repeat(if i % 50 == 0 { 2000 } else { 5 });
        messages.push(format!(
            r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{i}","content":"{body}"}}]}}"#
        ));
    }
    let calls: Vec<String> = (0..calls)
        .map(|c| {
            format!(
                r#"{{"messages":{},"start_ms":{}}}"#,
                1 + 2 * c,
                1_760_000_000_000u64 + c as u64 * 3000
            )
        })
        .collect();
    let json = format!(
        r#"{{"format":"tracecost.trace/v1","name":"long","provider":"anthropic","model":"claude-sonnet-4-5","system":[{{"type":"text","text":"You are a careful assistant."}}],"tools":[{{"name":"fetch","description":"Fetch a URL.","input_schema":{{"type":"object","properties":{{"url":{{"type":"string"}}}}}}}}],"messages":[{}],"calls":[{}]}}"#,
        messages.join(","),
        calls.join(",")
    );
    tracecost::trace::load_str(&json, "long.json")
        .unwrap()
        .traces
        .remove(0)
}

/// The peers over a long trace: per call they cost what the call appends
/// (and what it newly clears), not the history.
fn replay_peers(c: &mut Criterion) {
    let pricing = common::pricing();
    let memo = common::memo();
    let trace = long_tool_loop(3000);
    let prepared = common::prepare(&trace, &memo, &pricing);
    let mut g = c.benchmark_group("replay_peers");
    g.throughput(Throughput::Elements(trace.calls.len() as u64));
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    for cfg in [
        "clear-tool-uses:trigger=100000,keep=3+tail:ttl=5m",
        "clear-tool-uses:trigger=100000,keep=3,at-least=20000,inputs=true+tail:ttl=5m",
        "langchain-clear:trigger=100000,keep=3+tail:ttl=5m",
        "langchain-clear:trigger=100000,keep=3,at-least=20000+tail:ttl=5m",
    ] {
        let config = common::config(cfg);
        replay_once(&prepared, &config, &pricing, &memo);
        g.bench_function(format!("long-3000/{cfg}"), |b| {
            b.iter(|| replay_once(black_box(&prepared), &config, &pricing, &memo))
        });
    }
    g.finish();
}

/// Per call, a long run must cost the same at 2,000 calls as at 8,000:
/// the throughput (calls per second) of each pair should match.
fn long_runs(c: &mut Criterion) {
    struct Chars;
    impl tracecost::policy::BlockTokens for Chars {
        fn block_tokens(&self, b: &tracecost::engine::message::ContentBlock) -> u64 {
            b.to_json().len() as u64 / 4
        }
    }
    let pricing = common::pricing();
    let memo = common::memo();
    let mut g = c.benchmark_group("long-run");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    for calls in [2_000, 8_000] {
        let trace = long_tool_loop(calls);
        let prepared = common::prepare(&trace, &memo, &pricing);
        g.throughput(Throughput::Elements(calls as u64));
        let native = common::config("ledger:t=8000,k=2+native:manifest=cached,ttl=5m");
        g.bench_function(format!("native/{calls}"), |b| {
            b.iter(|| replay_once(&prepared, &native, &pricing, &memo))
        });
        g.bench_function(format!("stability/{calls}"), |b| {
            b.iter(|| {
                let mut source = tracecost::replay::stability::RunSource {
                    run: tracecost::policy::CompactionRun::new(&native.compaction),
                    tokens: &Chars,
                    fixed_tokens: 0,
                    progress: None,
                    state: Default::default(),
                };
                let r = tracecost::replay::stability::check(&trace, &mut source, &Chars).unwrap();
                black_box(r.calls.len())
            })
        });
    }
    g.finish();
}

/// The recall-risk index of a generated session (built once per trace in
/// every sweep): the quotable words and phrases of every tool result.
fn recall_index(c: &mut Criterion) {
    let session = generate::session(200, 1);
    let bytes: usize = session.messages.iter().map(|m| m.to_json().len()).sum();
    let mut g = c.benchmark_group("recall_index");
    g.throughput(Throughput::Bytes(bytes as u64));
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("session-200", |b| {
        b.iter(|| {
            let index = tracecost::replay::recall_risk::RiskIndex::new(&session, &|_, _| 100);
            black_box(index.turn_count())
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    targets = replay_one, replay_peers, long_runs, recall_index
}
criterion_main!(benches);

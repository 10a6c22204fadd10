//! The compaction engine: recording a tool result into the ledger, rendering
//! its stub, rewriting one call's history, and the recall tool's fetch.
//!
//! Run: `cargo bench --bench engine`. See docs/benchmarks.md.

mod common;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use tracecost::engine::handle::Handle;
use tracecost::engine::ledger::{InMemoryLedger, ToolResultLedger};
use tracecost::engine::recall::{RecallRequest, execute, fetch};
use tracecost::engine::rewrite::{CompactionPolicy, Compactor};
use tracecost::engine::stub::render_stub;
use tracecost::trace::generate;

/// The ledger policy of the hot path (the CLI's defaults).
const POLICY: CompactionPolicy = CompactionPolicy {
    size_threshold: 8_000,
    keep_last_n: 2,
};

fn record_and_stub(c: &mut Criterion) {
    let massage = generate::massage_gun();
    // The ~351K-char Keepa product lookup and a ~16K-char sales estimate.
    let (id, name, keepa) = common::largest_result(&massage);
    let sales = common::result_near(&massage, 16_000);
    let mut g = c.benchmark_group("engine/record");
    for (label, payload) in [("keepa-351k", &keepa), ("sales-16k", &sales)] {
        g.throughput(Throughput::Bytes(payload.len() as u64));
        // A first record: derives the handle (SHA-256, JSON shape, preview)
        // and stores a copy of the payload.
        g.bench_function(format!("new/{label}"), |b| {
            b.iter_batched_ref(
                InMemoryLedger::new,
                |ledger| {
                    black_box(
                        ledger
                            .record(black_box(&id), &name, "{}", black_box(payload))
                            .unwrap(),
                    )
                },
                BatchSize::SmallInput,
            )
        });
    }
    // Recording the same call again (idempotent: a lookup).
    let ledger = InMemoryLedger::new();
    ledger.record(&id, &name, "{}", &keepa).unwrap();
    g.throughput(Throughput::Elements(1));
    g.bench_function("again", |b| {
        b.iter(|| black_box(ledger.record(black_box(&id), &name, "{}", &keepa).unwrap()))
    });
    g.finish();

    let mut g = c.benchmark_group("engine/stub");
    let handle = Handle::derive(&id, &name, &keepa);
    g.bench_function("render", |b| {
        b.iter(|| black_box(render_stub(black_box(&handle))))
    });
    g.throughput(Throughput::Bytes(keepa.len() as u64));
    g.bench_function("derive-handle/keepa-351k", |b| {
        b.iter(|| black_box(Handle::derive(black_box(&id), &name, black_box(&keepa))))
    });
    g.finish();
}

fn rewrite(c: &mut Criterion) {
    let massage = generate::massage_gun();
    let session = generate::session(500, 1);
    let mut g = c.benchmark_group("engine/rewrite");
    for (label, trace) in [("massage-gun", &massage), ("session-500", &session)] {
        let last = trace.calls.last().expect("calls");
        let history = trace.history_of(last);
        // Per call, as in a replay: the compactor has seen the earlier calls,
        // so every compacted result's stub is already derived.
        let mut warm = Compactor::new(InMemoryLedger::new(), POLICY);
        for call in &trace.calls {
            warm.rewrite(trace.history_of(call)).unwrap();
        }
        g.throughput(Throughput::Elements(history.len() as u64));
        g.bench_function(format!("warm-last-call/{label}"), |b| {
            b.iter(|| black_box(warm.rewrite(black_box(history)).unwrap().compacted.len()))
        });
        // A fresh compactor: every compacted result is recorded and stubbed.
        g.bench_function(format!("cold-last-call/{label}"), |b| {
            b.iter_batched_ref(
                || Compactor::new(InMemoryLedger::new(), POLICY),
                |comp| black_box(comp.rewrite(black_box(history)).unwrap().compacted.len()),
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

fn recall(c: &mut Criterion) {
    let massage = generate::massage_gun();
    let (id, name, keepa) = common::largest_result(&massage);
    let ledger = InMemoryLedger::new();
    let handle = ledger.record(&id, &name, "{}", &keepa).unwrap();
    let mem = &handle.mem_id;
    let mut g = c.benchmark_group("recall/fetch");
    let requests = [
        ("full", RecallRequest::full()),
        ("summary", RecallRequest::summary()),
        (
            "range-4000",
            RecallRequest {
                offset: Some(100_000),
                max_chars: Some(4_000),
                ..RecallRequest::default()
            },
        ),
        (
            "query",
            RecallRequest {
                query: Some("B08ORRLFJ7".into()),
                ..RecallRequest::default()
            },
        ),
        (
            "json-path",
            RecallRequest {
                json_path: Some("products.3.stats.current".into()),
                ..RecallRequest::default()
            },
        ),
    ];
    for (label, req) in &requests {
        g.bench_function(*label, |b| {
            b.iter(|| black_box(fetch(&ledger, black_box(mem), black_box(req))))
        });
    }
    // The tool call as the model makes it: parse the JSON input, then fetch.
    let input = format!(r#"{{"mem_id":"{mem}","query":"B08ORRLFJ7","max_chars":100}}"#);
    g.bench_function("execute-json-query", |b| {
        b.iter(|| black_box(execute(&ledger, black_box(&input))))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = record_and_stub, rewrite, recall
}
criterion_main!(benches);

//! Importing an Anthropic request log against reading the file alone.
//!
//! The log is `gen request-log --calls 100 --seed 1`: 100 exchanges of a
//! coding agent, each request resending the whole conversation, 128 MB in
//! all. It is written once into a temporary folder when the bench starts
//! (not measured; the page cache then holds it, as it would after a first
//! import).
//!
//! - **read/whole**: `std::fs::read` of the file into one new buffer.
//! - **read/chunks**: the file read 4 MB at a time into one reused buffer:
//!   the floor a streaming import of it approaches.
//! - **anthropic**: `trace::import::anthropic::import` of the file: every
//!   line read and checked, the conversation built, the trace checked to
//!   load (what `tracecost import` does, less writing the trace out).
//!
//! - **otel**: `trace::import::otel::import` of an OpenTelemetry export
//!   (`write_otel_export`: 40 conversations of 60 calls, each span carrying
//!   the conversation so far, about 890 MB), against **read/lines-json/otel**,
//!   the same file read line by line with every line parsed to a JSON value
//!   and nothing else: the floor any reader of OTLP JSON pays.
//!
//! Each iteration is one whole run, timed with `iter_custom` in flat
//! sampling (10 samples of one run each).
//!
//! Run: `cargo bench --bench import`. See docs/benchmarks.md.

use std::hint::black_box;
use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use tracecost::trace::generate::{write_otel_export, write_request_log};
use tracecost::trace::import::{ImportOptions, anthropic, otel};

/// Calls and seed of the benchmark log (100 calls ≈ 128 MB).
const CALLS: usize = 100;
const SEED: u64 = 1;

fn write_log(path: &Path) -> u64 {
    let file = std::fs::File::create(path).expect("temporary file");
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let stats = write_request_log(CALLS, SEED, &mut out).expect("log written");
    out.flush().expect("log written");
    stats.bytes
}

/// Times `runs` calls of `f`.
fn timed(runs: u64, mut f: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..runs {
        f();
    }
    start.elapsed()
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join("request-log-100-s1.jsonl");
    let bytes = write_log(&path);
    let inputs = [path.clone()];
    let opts = ImportOptions::default();

    let mut g = c.benchmark_group("import");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(4));
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("read/whole/request-log-128mb", |b| {
        b.iter_custom(|runs| {
            timed(runs, || {
                black_box(std::fs::read(black_box(&path)).expect("log read").len());
            })
        })
    });
    let mut chunk = vec![0u8; 4 << 20];
    g.bench_function("read/chunks/request-log-128mb", |b| {
        b.iter_custom(|runs| {
            timed(runs, || {
                let mut file = std::fs::File::open(black_box(&path)).expect("log opens");
                let mut total = 0;
                loop {
                    let n = file.read(&mut chunk).expect("log read");
                    if n == 0 {
                        break;
                    }
                    total += n;
                }
                assert_eq!(total as u64, bytes);
            })
        })
    });
    g.bench_function("anthropic/request-log-128mb", |b| {
        b.iter_custom(|runs| {
            timed(runs, || {
                let out = anthropic::import(black_box(&inputs), &opts).expect("log imports");
                assert_eq!(out.traces.first().map(|t| t.calls.len()), Some(CALLS));
                black_box(out);
            })
        })
    });
    g.finish();

    let otel_path = dir.path().join("otel-40x60.jsonl");
    let otel_bytes = {
        let file = std::fs::File::create(&otel_path).expect("temporary file");
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let stats = write_otel_export(OTEL_CONVERSATIONS, OTEL_CALLS, SEED, &mut out)
            .expect("export written");
        out.flush().expect("export written");
        stats.bytes
    };
    let otel_inputs = [otel_path.clone()];
    let mut g = c.benchmark_group("import");
    g.sampling_mode(SamplingMode::Flat);
    g.sample_size(10);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(8));
    g.throughput(Throughput::Bytes(otel_bytes));
    g.bench_function("read/lines-json/otel", |b| {
        b.iter_custom(|runs| {
            timed(runs, || {
                let file = std::fs::File::open(black_box(&otel_path)).expect("export opens");
                let mut values = 0usize;
                for line in
                    std::io::BufRead::lines(std::io::BufReader::with_capacity(1 << 20, file))
                {
                    let line = line.expect("export read");
                    let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
                    values += usize::from(v.is_object());
                }
                black_box(values);
            })
        })
    });
    g.bench_function("otel/export", |b| {
        b.iter_custom(|runs| {
            timed(runs, || {
                let out = otel::import(black_box(&otel_inputs), &opts).expect("export imports");
                assert_eq!(out.traces.len(), OTEL_CONVERSATIONS);
                black_box(out);
            })
        })
    });
    g.finish();
    c.final_summary();
}

/// Conversations and calls of the benchmark's OpenTelemetry export.
const OTEL_CONVERSATIONS: usize = 40;
const OTEL_CALLS: usize = 60;

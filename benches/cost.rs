//! The cost model: the prompt-cache simulator per call, every provider's
//! prompt cache over a whole conversation, and token counting with and
//! without the memo.
//!
//! Run: `cargo bench --bench cost`. See docs/benchmarks.md.

mod common;

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use tracecost::cost::automatic_cache::{AutomaticCache, DEFAULT_IDLE_MS, Retention};
use tracecost::cost::cache_sim::{CacheSim, SimRequest};
use tracecost::cost::explicit_cache::ExplicitCache;
use tracecost::cost::openai_breakpoints::{DEFAULT_TTL_MS, OpenAiBreakpointCache};
use tracecost::cost::prompt_cache::PromptCache;
use tracecost::cost::tokens::{ContentHash, Tokenizer, parse_tokenizer};
use tracecost::trace::generate;

fn cache_sim(c: &mut Criterion) {
    let pricing = common::pricing();
    let memo = common::memo();
    let session = generate::session(500, 1);
    let prepared = common::prepare(&session, &memo, &pricing);
    let price = common::price_of(&pricing, &session);
    let requests = common::sim_requests(&prepared, price);
    let req = |i: usize| {
        let (start_ms, blocks, breakpoints, output_tokens) = &requests[i];
        let req = SimRequest {
            model: price,
            start_ms: *start_ms,
            breakpoints,
            output_tokens: *output_tokens,
        };
        (req, &blocks[..])
    };
    // The cache as it stands before call `i` (all earlier calls simulated).
    let state_before = |i: usize| {
        let mut sim = CacheSim::new();
        for j in 0..i {
            let (r, blocks) = req(j);
            sim.simulate(&r, blocks).unwrap();
        }
        sim
    };

    let mut g = c.benchmark_group("cache_sim");
    // One call, the cache warm with every earlier call: the 250th call and
    // the last (its prefix has the most blocks).
    for i in [249, requests.len() - 1] {
        let before = state_before(i);
        let (r, blocks) = req(i);
        g.throughput(Throughput::Elements(blocks.len() as u64));
        g.bench_function(format!("call/session-500/call-{}", i + 1), |b| {
            b.iter_batched_ref(
                || before.clone(),
                |sim| black_box(sim.simulate(black_box(&r), blocks).unwrap().usage),
                BatchSize::SmallInput,
            )
        });
    }
    // The whole conversation, from an empty cache (per call = time / 500).
    g.throughput(Throughput::Elements(requests.len() as u64));
    g.bench_function("all-calls/session-500", |b| {
        b.iter(|| {
            let mut sim = CacheSim::new();
            let mut read = 0u64;
            for i in 0..requests.len() {
                let (r, blocks) = req(i);
                read += sim
                    .simulate(&r, blocks)
                    .unwrap()
                    .usage
                    .cache_read_input_tokens;
            }
            black_box(read)
        })
    });
    g.finish();
}

fn tokens(c: &mut Criterion) {
    let massage = generate::massage_gun();
    let (_, _, keepa) = common::largest_result(&massage);
    // Tool results of the massage-gun trace: the smallest (6.7K chars), a
    // 16K one and the 351K Keepa lookup.
    let texts: Vec<(String, String)> = [
        common::result_near(&massage, 0),
        common::result_near(&massage, 16_000),
        keepa,
    ]
    .into_iter()
    .map(|t| {
        let label = if t.len() < 10_000 {
            format!("{:.1}k", t.len() as f64 / 1e3)
        } else {
            format!("{}k", t.len() / 1_000)
        };
        (label, t)
    })
    .collect();
    // The default backend of `o200k_base`, and tiktoken-rs when this build
    // offers it as a separate spec (identical counts).
    let counters: Vec<(&str, Arc<dyn Tokenizer>)> = ["o200k_base", "tiktoken:o200k_base"]
        .into_iter()
        .filter_map(|spec| Some((spec, parse_tokenizer(spec).ok()?)))
        .collect();
    for (_, t) in &counters {
        // Build the BPE tables outside the measurement.
        t.count("warm up");
    }
    let memo = common::memo();
    for (_, t) in &texts {
        memo.count(t);
    }

    let mut g = c.benchmark_group("tokens");
    for (label, text) in &texts {
        g.throughput(Throughput::Bytes(text.len() as u64));
        if text.len() > 100_000 {
            g.sample_size(10).measurement_time(Duration::from_secs(4));
        }
        // The tokenizer itself, no memo.
        for (spec, counter) in &counters {
            g.bench_function(format!("{spec}/{label}"), |b| {
                b.iter(|| black_box(counter.count(black_box(text))))
            });
        }
        // Through the memo, already counted: hash the text, look it up.
        g.bench_function(format!("memo-hit/{label}"), |b| {
            b.iter(|| black_box(memo.count(black_box(text))))
        });
        // The hash alone (what a memo hit costs beyond the lookup).
        g.bench_function(format!("content-hash/{label}"), |b| {
            b.iter(|| black_box(ContentHash::of(black_box(text.as_bytes()))))
        });
    }
    g.finish();
}

/// Each provider's prompt cache over the same 500-call conversation, from
/// empty (per call = time / 500): the automatic caches with no markers,
/// the breakpoint caches with the markers the session's replay places.
fn prompt_caches(c: &mut Criterion) {
    let pricing = common::pricing();
    let memo = common::memo();
    let session = generate::session(500, 1);
    let prepared = common::prepare(&session, &memo, &pricing);
    let requests = common::sim_requests(&prepared, common::price_of(&pricing, &session));
    let model = |id: &str| pricing.lookup(id).unwrap();
    type Make = fn() -> Box<dyn PromptCache>;
    let caches: [(&str, &str, bool, Make); 5] = [
        ("anthropic", "claude-sonnet-4-5", true, || {
            Box::new(CacheSim::new())
        }),
        ("openai-auto", "gpt-4.1", false, || {
            Box::new(AutomaticCache::new(Retention::InMemory {
                idle_ms: DEFAULT_IDLE_MS,
            }))
        }),
        ("openai-breakpoints", "gpt-5.6", true, || {
            Box::new(OpenAiBreakpointCache::new(DEFAULT_TTL_MS))
        }),
        ("gemini-implicit", "gemini-2.5-flash", false, || {
            Box::new(AutomaticCache::gemini(Retention::InMemory {
                idle_ms: DEFAULT_IDLE_MS,
            }))
        }),
        ("gemini-explicit", "gemini-2.5-flash", true, || {
            Box::new(ExplicitCache::new())
        }),
    ];
    let mut g = c.benchmark_group("prompt_caches");
    g.throughput(Throughput::Elements(requests.len() as u64));
    for (name, id, marked, make) in caches {
        let price = model(id);
        g.bench_function(format!("all-calls/session-500/{name}"), |b| {
            b.iter(|| {
                let mut sim = make();
                let mut read = 0u64;
                for (start_ms, blocks, breakpoints, output_tokens) in &requests {
                    let req = SimRequest {
                        model: price,
                        start_ms: *start_ms,
                        breakpoints: if marked { breakpoints } else { &[] },
                        output_tokens: *output_tokens,
                    };
                    read += sim
                        .simulate(&req, blocks)
                        .unwrap()
                        .usage
                        .cache_read_input_tokens;
                }
                black_box(read)
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    targets = cache_sim, prompt_caches, tokens
}
criterion_main!(benches);

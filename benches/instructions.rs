//! Instruction counts of the hot path under Valgrind's callgrind (gungraun):
//! deterministic, so they can be compared across commits on a noisy
//! machine where wall-clock times cannot.
//!
//! Needs `valgrind` and `gungraun-runner` of the same version as the
//! `gungraun` dev-dependency:
//!
//! ```sh
//! apt-get install valgrind
//! cargo install gungraun-runner --version 0.20.0 --locked
//! cargo bench --bench instructions
//! ```
//!
//! Without them this bench prints why and exits 0, so a plain `cargo bench`
//! still passes. Setting `TRACECOST_REQUIRE_GUNGRAUN=1` makes that an error.
//! See docs/benchmarks.md.

mod common;

/// The gungraun benchmarks. Wrapped in a module because gungraun's `main!`
/// defines `fn main`, and the real `main` below first checks the runner.
mod callgrind {
    use std::hint::black_box;

    use gungraun::{
        Callgrind, LibraryBenchmarkConfig, library_benchmark, library_benchmark_group, main,
    };
    use tracecost::cost::cache_sim::{Breakpoint, CacheSim, PrefixBlock, SimRequest};
    use tracecost::cost::pricing::{ModelPrice, Pricing};
    use tracecost::cost::tokens::TokenMemo;
    use tracecost::engine::ledger::InMemoryLedger;
    use tracecost::engine::message::Message;
    use tracecost::engine::rewrite::{CompactionPolicy, Compactor};
    use tracecost::policy::Config;
    use tracecost::replay::{PreparedTrace, ReplayContext, ReplayOptions, replay};
    use tracecost::trace::{Trace, generate};

    use super::common;

    /// A trace prepared for replay, with the memo warm. Leaked: the
    /// benchmark process ends right after the one measured call.
    pub struct ReplayFixture {
        prepared: PreparedTrace<'static>,
        config: Config,
        pricing: &'static Pricing,
        memo: &'static TokenMemo,
    }

    fn replay_fixture(trace: Trace, config: &str) -> ReplayFixture {
        let trace: &'static Trace = Box::leak(Box::new(trace));
        let pricing: &'static Pricing = Box::leak(Box::new(common::pricing()));
        let memo: &'static TokenMemo = Box::leak(Box::new(common::memo()));
        let prepared = common::prepare(trace, memo, pricing);
        let config = common::config(config);
        // One replay outside the measurement counts the stubs into the memo,
        // so the measured replay is the steady state of a sweep.
        replay(
            &prepared,
            &config,
            ReplayContext {
                pricing,
                memo,
                opts: ReplayOptions::default(),
            },
        )
        .unwrap();
        ReplayFixture {
            prepared,
            config,
            pricing,
            memo,
        }
    }

    fn massage_gun_ledger_tail() -> ReplayFixture {
        replay_fixture(generate::massage_gun(), common::LEDGER_TAIL)
    }

    fn session_40_ledger_tail() -> ReplayFixture {
        replay_fixture(generate::session(40, 1), common::LEDGER_TAIL)
    }

    // Replay of one trace under one config (ledger t=8000 k=2, tail marker).
    #[library_benchmark]
    #[bench::massage_gun(massage_gun_ledger_tail())]
    #[bench::session_40(session_40_ledger_tail())]
    fn replay_trace(f: ReplayFixture) -> f64 {
        let r = replay(
            black_box(&f.prepared),
            &f.config,
            ReplayContext {
                pricing: f.pricing,
                memo: f.memo,
                opts: ReplayOptions::default(),
            },
        )
        .unwrap();
        black_box(r.totals.cost_usd)
    }

    /// One call of a replay: the rewrite of its history by a warm compactor
    /// (stubs of earlier calls known) and the cache simulation of its prefix
    /// on a warm cache.
    pub struct StepFixture {
        history: &'static [Message],
        compactor: Compactor<InMemoryLedger>,
        sim: CacheSim,
        price: &'static ModelPrice,
        start_ms: Option<u64>,
        blocks: Vec<PrefixBlock>,
        breakpoints: Vec<Breakpoint>,
        output_tokens: u64,
    }

    fn last_call_step(trace: Trace) -> StepFixture {
        let trace: &'static Trace = Box::leak(Box::new(trace));
        let pricing: &'static Pricing = Box::leak(Box::new(common::pricing()));
        let memo = common::memo();
        let prepared = common::prepare(trace, &memo, pricing);
        let price = common::price_of(pricing, trace);
        let mut compactor = Compactor::new(
            InMemoryLedger::new(),
            CompactionPolicy {
                size_threshold: 8_000,
                keep_last_n: 2,
            },
        );
        let n = trace.calls.len();
        for call in &trace.calls[..n - 1] {
            compactor.rewrite(trace.history_of(call)).unwrap();
        }
        let mut requests = common::sim_requests(&prepared, price);
        let mut sim = CacheSim::new();
        for (start_ms, blocks, breakpoints, output_tokens) in &requests[..n - 1] {
            sim.simulate(
                &SimRequest {
                    model: price,
                    start_ms: *start_ms,
                    breakpoints,
                    output_tokens: *output_tokens,
                },
                blocks,
            )
            .unwrap();
        }
        let (start_ms, blocks, breakpoints, output_tokens) = requests.pop().unwrap();
        StepFixture {
            history: trace.history_of(&trace.calls[n - 1]),
            compactor,
            sim,
            price,
            start_ms,
            blocks,
            breakpoints,
            output_tokens,
        }
    }

    fn massage_gun_step() -> StepFixture {
        last_call_step(generate::massage_gun())
    }

    fn session_40_step() -> StepFixture {
        last_call_step(generate::session(40, 1))
    }

    // The rewrite of the last call's history (warm compactor).
    #[library_benchmark]
    #[bench::massage_gun(massage_gun_step())]
    #[bench::session_40(session_40_step())]
    fn rewrite_step(mut f: StepFixture) -> usize {
        let r = f.compactor.rewrite(black_box(f.history)).unwrap();
        black_box(r.compacted.len())
    }

    // The cache simulation of the last call (no compaction, tail marker)
    // on a cache warm with every earlier call.
    #[library_benchmark]
    #[bench::massage_gun(massage_gun_step())]
    #[bench::session_40(session_40_step())]
    fn cache_sim_step(mut f: StepFixture) -> u64 {
        let out = f
            .sim
            .simulate(
                black_box(&SimRequest {
                    model: f.price,
                    start_ms: f.start_ms,
                    breakpoints: &f.breakpoints,
                    output_tokens: f.output_tokens,
                }),
                &f.blocks,
            )
            .unwrap();
        black_box(out.usage.cache_read_input_tokens)
    }

    library_benchmark_group!(
        name = hot_path;
        benchmarks = replay_trace, rewrite_step, cache_sim_step
    );

    main!(
        config = LibraryBenchmarkConfig::default()
            .tool(Callgrind::with_args(["--cache-sim=no"]));
        library_benchmark_groups = hot_path
    );

    pub fn run() {
        main();
    }
}

/// Whether `name` is an executable file in a `PATH` directory.
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| {
            let p = dir.join(name);
            p.is_file()
                && std::fs::metadata(&p).is_ok_and(|m| {
                    use std::os::unix::fs::PermissionsExt;
                    m.permissions().mode() & 0o111 != 0
                })
        })
    })
}

fn main() {
    // The runner re-executes this binary with `--gungraun-run ...` (under
    // valgrind): always hand those over to gungraun.
    let internal = std::env::args().nth(1).as_deref() == Some("--gungraun-run");
    if !internal {
        // gungraun reads GUNGRAUN_RUNNER at compile time, else uses PATH.
        let runner = option_env!("GUNGRAUN_RUNNER").is_some() || on_path("gungraun-runner");
        let valgrind = on_path("valgrind");
        if !(runner && valgrind) {
            let missing = match (runner, valgrind) {
                (false, false) => "gungraun-runner and valgrind",
                (false, true) => "gungraun-runner",
                _ => "valgrind",
            };
            let how = "Install with:\n  \
                 apt-get install valgrind\n  \
                 cargo install gungraun-runner --version 0.20.0 --locked\n\
                 (see docs/benchmarks.md)";
            if std::env::var_os("TRACECOST_REQUIRE_GUNGRAUN").is_some() {
                eprintln!("error: instructions: {missing} not found. {how}");
                std::process::exit(1);
            }
            eprintln!("instructions: skipped, {missing} not found. {how}");
            return;
        }
    }
    callgrind::run();
}

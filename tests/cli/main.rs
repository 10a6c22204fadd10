//! The root package's integration tests, one binary (`cargo test --test
//! cli`; one module with `cargo test --test cli cli_outputs::`): the
//! library's pipelines, the command line run as a binary, the error corpus,
//! the reliability contract, and the layer order of the workspace. Each
//! module was a test binary of its own; together they link the library
//! once. What they share (running the binary, the repository's files, what
//! a run left on disk) is in `util`.
//!
//! The engine's, the trace model's and the importers' own tests live in
//! their crates (`crates/*/tests/`).

mod util;

mod app_pipelines;
mod bundled_traces;
mod cli_check;
mod cli_inputs;
mod cli_outputs;
mod cli_plan;
mod cli_prices;
mod cli_recall;
mod cli_unpriced;
mod cli_usage;
mod cost_cache_sim;
mod cost_pricing;
mod cost_tokens;
mod crates;
mod doc_paths;
mod error_corpus;
mod fidelity;
mod file_circles;
mod fleet;
mod fleet_cache;
mod gen_fleet;
mod gen_traces;
mod large_inputs;
mod openai_cache;
mod otel_traces;
mod reliability;
mod replay_incremental;
mod report;
mod report_charts;
mod summarising;
mod sweep_summarising;
mod thinking;
mod tokenizer_backends;

//! The root package's integration tests, one binary (`cargo test --test
//! cli`; one module with `cargo test --test cli cli_outputs::`): the
//! command line run as a binary, the error corpus, the reliability
//! contract, and the layer order of the workspace. Each module was a test
//! binary of its own; together they link the library once. What they share
//! (running the binary, the repository's files, what a run left on disk)
//! is in `util`.
//!
//! A library crate's own tests (the engine, the trace model, the
//! importers, the generators, cost, replay, the application, the report)
//! live in that crate (`crates/*/tests/`).

mod util;

mod bundled_traces;
mod cli_check;
mod cli_inputs;
mod cli_outputs;
mod cli_plan;
mod cli_prices;
mod cli_recall;
mod cli_unpriced;
mod cli_usage;
mod crates;
mod doc_paths;
mod error_corpus;
mod fidelity;
mod file_circles;
mod fleet;
mod fleet_cache;
mod gen_fleet;
mod large_inputs;
mod names;
mod openai_cache;
mod otel_traces;
mod reliability;
mod report;
mod summarising;
mod sweep_summarising;
mod thinking;

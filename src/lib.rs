//! tracecost: what agent conversations really cost, and which tool-result
//! compaction and prompt-cache policy makes them cheapest.
//!
//! Modules follow the flow of data, and depend only on modules before them:
//! [`engine`] (the compaction engine an agent framework can embed as is;
//! the ground floor: the message model lives there) → [`trace`] (recorded
//! conversations; the importers and generators beside them) → [`policy`]
//! (compaction and cache policies as data) → [`cost`] (tokens, the
//! prompt-cache simulator, prices) → [`replay`] → [`app`] (the pipelines
//! over typed plans, and their typed results) → [`report`] (the views and
//! the report's files) → [`cli`]. Each layer but the command line is a
//! crate of its own under `crates/` (`tracecost-engine`, `tracecost-trace`,
//! `tracecost-import`, `tracecost-gen`, `tracecost-policy`,
//! `tracecost-cost`, `tracecost-replay`, `tracecost-app`,
//! `tracecost-report`), re-exported here, so Cargo holds the order: a
//! layer cannot name one above it. [`progress`] is how the long-running
//! steps report how far they have got.
//!
//! The engine's crate documentation has it in one example.

pub use tracecost_engine as engine;

pub mod progress;
pub mod trace;
pub use tracecost_app as app;
pub use tracecost_cost as cost;
pub use tracecost_policy as policy;
pub use tracecost_replay as replay;
pub use tracecost_report as report;
pub mod cli;

/// The README's code blocks, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The engine guide's code blocks, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../docs/engine.md")]
pub struct EngineDoctests;

//! tracecost: what agent conversations really cost, and which tool-result
//! compaction and prompt-cache policy makes them cheapest.
//!
//! Modules follow the flow of data, and depend only on modules before them:
//! [`engine`] (the compaction engine an agent framework can embed as is; its
//! own crate, `crates/tracecost-engine`, and the ground floor: the message
//! model lives there) → [`trace`] (recorded conversations) → [`policy`]
//! (compaction and cache policies as data) → [`cost`] (tokens, the
//! prompt-cache simulator, prices) → [`replay`] → [`app`] (the pipelines
//! over typed plans, and their typed results) → [`report`] (the views and
//! the report's files) → [`cli`].
//! [`progress`] is how the long-running steps report how far they have got.
//!
//! The engine's crate documentation has it in one example.
#![warn(missing_docs)]

pub use tracecost_engine as engine;

pub mod progress;
pub mod trace;
pub mod policy;
pub mod cost;
pub mod replay;
pub mod app;
pub mod report;
pub mod cli;

/// The README's code blocks, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

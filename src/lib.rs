//! tracecost: what agent conversations really cost, and which tool-result
//! compaction and prompt-cache policy makes them cheapest.
//!
//! Modules follow the flow of data: [`engine`] (the compaction engine an
//! agent framework can embed) → … → `cli`.
#![warn(missing_docs)]

pub mod policy;
pub mod cost;
pub mod engine;
pub mod trace;

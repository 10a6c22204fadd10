//! tracecost: what agent conversations really cost, and which tool-result
//! compaction and prompt-cache policy makes them cheapest.
//!
//! Modules follow the flow of data, and depend only on modules before them:
//! [`trace`] (recorded conversations) → [`engine`] (the compaction engine an
//! agent framework can embed as is) → [`policy`] (compaction and cache
//! policies as data) → [`cost`] (tokens, the prompt-cache simulator,
//! prices) → [`replay`] → [`report`] → [`cli`]. [`progress`] is how the
//! long-running steps report how far they have got.
//!
//! # The engine in one example
//!
//! ```
//! use tracecost::engine::ledger::InMemoryLedger;
//! use tracecost::engine::message::Message;
//! use tracecost::engine::recall::execute;
//! use tracecost::engine::rewrite::{CompactionPolicy, Compactor};
//!
//! let big = "x".repeat(10_000);
//! let history = vec![
//!     Message::from_json(r#"{"role":"user","content":"look it up"}"#).unwrap(),
//!     Message::from_json(r#"{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"fetch","input":{"url":"https://example.com"}}]}"#).unwrap(),
//!     Message::from_json(&format!(r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_1","content":"{big}"}}]}}"#)).unwrap(),
//!     Message::from_json(r#"{"role":"assistant","content":[{"type":"text","text":"done"}]}"#).unwrap(),
//!     Message::from_json(r#"{"role":"user","content":"thanks, and now?"}"#).unwrap(),
//! ];
//! let mut compactor = Compactor::new(InMemoryLedger::new(), CompactionPolicy { size_threshold: 2_000, keep_last_n: 0 });
//! let wire = compactor.rewrite(&history).unwrap();
//! let handle = &wire.compacted[0];
//! assert_eq!(handle.size_chars, 10_000);
//! // The model gets the payload back, byte for byte, through the recall tool.
//! let input = format!(r#"{{"mem_id":"{}","format":"full"}}"#, handle.mem_id);
//! assert_eq!(execute(compactor.ledger(), &input), big);
//! ```
#![warn(missing_docs)]

pub mod progress;
pub mod trace;
pub mod engine;
pub mod policy;
pub mod cost;
pub mod replay;
pub mod report;
pub mod app;
pub mod cli;

/// The README's code blocks, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

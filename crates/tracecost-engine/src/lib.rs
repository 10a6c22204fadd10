//! The compaction engine: message model, tool-result ledger, handles and
//! stubs, the snapshot rewriter, the recall tool and cache-marker
//! composition.
//!
//! It knows nothing of tokens, prices, files of traces or the command line:
//! an agent framework can embed it as is. Its only dependencies are serde,
//! serde_json, sha2 and thiserror. tracecost re-exports it as
//! `tracecost::engine`.
//!
//! Beside the engine, [`calendar`] holds the civil-date arithmetic every
//! crate above it names its days with.
//!
//! The ledger ([`ledger`]) only stores; [`recall::fetch`] is the one place
//! that answers a fetch from it.
//!
//! # The stub contract
//!
//! - A result is stubbed only when it is larger than the policy's
//!   threshold, older than its last `keep_last_n` results, and **the model
//!   has answered after it**: a result is never replaced before the model
//!   has read it whole (parallel results of one turn included).
//! - A stub is a pure function of the result's handle: the same bytes at
//!   every later call, from any compactor ([`stub`]).
//! - A payload is recorded in the ledger before its stub is sent, so every
//!   stub can be recalled.
//!
//! # The engine in one example
//!
//! ```
//! use tracecost_engine::ledger::InMemoryLedger;
//! use tracecost_engine::message::Message;
//! use tracecost_engine::recall::execute;
//! use tracecost_engine::rewrite::{CompactionPolicy, Compactor};
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

pub mod cache;
pub mod calendar;
pub mod handle;
pub mod json;
pub mod ledger;
pub mod message;
pub mod recall;
pub mod rewrite;
pub mod stub;
pub mod wire;

//! The compaction engine: message model, tool-result ledger, handles and
//! stubs, the snapshot rewriter, the recall tool and cache-marker
//! composition.
//!
//! It knows nothing of tokens, prices, files of traces or the command line:
//! an agent framework can embed it as is.

pub mod cache;
pub mod handle;
pub mod json;
pub mod ledger;
pub mod message;
pub mod recall;
pub mod rewrite;
pub mod stub;
pub mod wire;

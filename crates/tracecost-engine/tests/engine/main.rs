//! The engine's integration tests, one binary (`cargo test -p
//! tracecost-engine`): each module was a test file of its own, and they
//! use the engine's public API alone.

mod durable_ledger;
mod raw_object_props;
mod recall_props;
mod rewriter_props;
mod shared_text;
mod stub_determinism;

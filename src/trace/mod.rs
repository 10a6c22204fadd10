//! Traces: recorded agent conversations, in tracecost's canonical format.
//!
//! The model, loading and writing are the `tracecost-trace` crate, the
//! importers and input discovery `tracecost-import`, the generators
//! `tracecost-gen`; their paths stay `tracecost::trace::…`,
//! `tracecost::trace::import::…` and `tracecost::trace::generate::…`.

pub use tracecost_gen as generate;
pub use tracecost_import as import;
pub use tracecost_trace::*;

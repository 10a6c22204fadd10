//! `tracecost._native`: the Rust side of the Python package.
//!
//! A thin layer over the library: every figure comes from `tracecost::app`
//! (the same plans and pipelines the command line runs) and every engine
//! operation from `tracecost::engine`. Values cross the boundary as JSON
//! text — the engine keeps the original bytes of every JSON value, and the
//! figures round-trip exactly (serde_json writes the shortest text that
//! reads back as the same f64) — and the pure-Python package in
//! `tracecost/` turns them into dicts, rows and tables.
//!
//! Long work (loading, replays, sweeps, generation) runs with the GIL
//! released, so other Python threads go on meanwhile.
//!
//! This file only registers what the module holds. The classes and
//! functions live in files named after what they hold; `errors` has the
//! exception classes all of them raise.

mod cache;
mod compactor;
mod errors;
mod handle;
mod harness;
mod ledger;
mod request;
mod trace;

use pyo3::prelude::*;

use tracecost::engine::recall;

use crate::errors::{ConfigError, InputError, LedgerError, TracecostError};

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TracecostError", py.get_type::<TracecostError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("LedgerError", py.get_type::<LedgerError>())?;
    m.add("RECALL_TOOL_NAME", recall::RECALL_TOOL_NAME)?;
    m.add("STUB_FORMAT", tracecost::engine::stub::STUB_FORMAT)?;
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "DEFAULT_LEDGER_THRESHOLD",
        tracecost::policy::DEFAULT_LEDGER_THRESHOLD,
    )?;
    m.add(
        "DEFAULT_LEDGER_KEEP_LAST",
        tracecost::policy::DEFAULT_LEDGER_KEEP_LAST,
    )?;
    m.add_class::<ledger::PyLedger>()?;
    m.add_class::<compactor::PyCompactor>()?;
    m.add_class::<cache::PyCacheComposition>()?;
    m.add_class::<trace::PyTrace>()?;
    m.add_function(wrap_pyfunction!(handle::stub, m)?)?;
    m.add_function(wrap_pyfunction!(handle::derive_handle, m)?)?;
    m.add_function(wrap_pyfunction!(ledger::recall_tool_json, m)?)?;
    m.add_function(wrap_pyfunction!(trace::load, m)?)?;
    m.add_function(wrap_pyfunction!(trace::loads, m)?)?;
    m.add_function(wrap_pyfunction!(trace::generate, m)?)?;
    m.add_function(wrap_pyfunction!(harness::canonical_config, m)?)?;
    m.add_function(wrap_pyfunction!(harness::grid_configs, m)?)?;
    m.add_function(wrap_pyfunction!(harness::replay, m)?)?;
    m.add_function(wrap_pyfunction!(harness::sweep, m)?)?;
    Ok(())
}

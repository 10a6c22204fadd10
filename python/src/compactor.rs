//! The `Compactor` class: the engine's rewriter over a `Ledger`.

use std::sync::Arc;

use pyo3::prelude::*;

use tracecost::engine::ledger::ToolResultLedger;
use tracecost::engine::rewrite::{CompactionPolicy, Compactor};
use tracecost::engine::wire::message_json;

use crate::cache::PyCacheComposition;
use crate::errors::app_err;
use crate::handle::handles_json;
use crate::ledger::PyLedger;
use crate::request::{MarkerTuple, compose, parse_messages, parse_system, parse_tools};

/// The engine's rewriter with its ledger.
#[pyclass(name = "Compactor", module = "tracecost._native")]
pub(crate) struct PyCompactor {
    inner: Compactor<Arc<dyn ToolResultLedger>>,
}

#[pymethods]
impl PyCompactor {
    #[new]
    fn new(ledger: &PyLedger, size_threshold: u64, keep_last: usize) -> Self {
        PyCompactor {
            inner: Compactor::new(
                ledger.shared(),
                CompactionPolicy {
                    size_threshold,
                    keep_last_n: keep_last,
                },
            ),
        }
    }

    /// (size_threshold, keep_last).
    fn policy(&self) -> (u64, usize) {
        let p = self.inner.policy();
        (p.size_threshold, p.keep_last_n)
    }

    /// The wire view of a history (one JSON text per message): the
    /// messages as sent, and the handles of the compacted results.
    fn rewrite(&mut self, messages: Vec<String>) -> PyResult<(Vec<String>, Vec<String>)> {
        let history = parse_messages(&messages)?;
        let rw = self.inner.rewrite(&history).map_err(app_err)?;
        Ok((
            rw.view.messages.iter().map(message_json).collect(),
            handles_json(&rw.compacted),
        ))
    }

    /// The request body of one call: the history rewritten, tools and
    /// system as given, the cache composition's markers spliced in.
    /// Returns (body JSON, compacted handles, markers).
    #[pyo3(signature = (messages, tools, system, cache=None))]
    fn request(
        &mut self,
        messages: Vec<String>,
        tools: Vec<String>,
        system: Vec<String>,
        cache: Option<&PyCacheComposition>,
    ) -> PyResult<(String, Vec<String>, Vec<MarkerTuple>)> {
        let history = parse_messages(&messages)?;
        let tools = parse_tools(&tools)?;
        let system = parse_system(&system)?;
        let rw = self.inner.rewrite(&history).map_err(app_err)?;
        let (body, markers) = compose(&tools, &system, &rw.view, cache.map(|c| &c.inner));
        Ok((body, handles_json(&rw.compacted), markers))
    }
}

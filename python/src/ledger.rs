//! The `Ledger` class (in memory or durable) and the recall tool it
//! answers.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;

use tracecost::engine::ledger::{DurableLedger, InMemoryLedger, Recorded, ToolResultLedger};
use tracecost::engine::recall::{self, RecallFormat, RecallRequest};

use crate::errors::{app_err, config_err};
use crate::handle::{handle_json, handles_json};

enum LedgerKind {
    Memory(Arc<InMemoryLedger>),
    Durable(Arc<DurableLedger>),
}

/// A tool-result ledger: in memory, or durable in a directory.
#[pyclass(name = "Ledger", module = "tracecost._native", frozen)]
pub(crate) struct PyLedger {
    kind: LedgerKind,
}

impl PyLedger {
    pub(crate) fn shared(&self) -> Arc<dyn ToolResultLedger> {
        match &self.kind {
            LedgerKind::Memory(l) => l.clone(),
            LedgerKind::Durable(l) => l.clone(),
        }
    }

    fn dyn_ref(&self) -> &dyn ToolResultLedger {
        match &self.kind {
            LedgerKind::Memory(l) => l.as_ref(),
            LedgerKind::Durable(l) => l.as_ref(),
        }
    }
}

fn recorded(r: Option<Recorded>) -> Option<(String, String, String)> {
    r.map(|r| {
        (
            handle_json(&r.handle),
            r.tool_args.to_string(),
            r.payload.to_string(),
        )
    })
}

#[pymethods]
impl PyLedger {
    /// A ledger for one process.
    #[staticmethod]
    fn in_memory() -> Self {
        PyLedger {
            kind: LedgerKind::Memory(Arc::new(InMemoryLedger::new())),
        }
    }

    /// A ledger in `path`, shared by processes (created if missing).
    #[staticmethod]
    fn durable(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let l = py.detach(|| DurableLedger::open(&path)).map_err(app_err)?;
        Ok(PyLedger {
            kind: LedgerKind::Durable(Arc::new(l)),
        })
    }

    /// The directory of a durable ledger, `None` in memory.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        match &self.kind {
            LedgerKind::Memory(_) => None,
            LedgerKind::Durable(l) => Some(l.dir().to_path_buf()),
        }
    }

    /// Records a result; returns the handle's JSON.
    fn record(
        &self,
        tool_call_id: &str,
        tool_name: &str,
        tool_args: &str,
        content: &str,
    ) -> PyResult<String> {
        let h = self
            .dyn_ref()
            .record(tool_call_id, tool_name, tool_args, content)
            .map_err(app_err)?;
        Ok(handle_json(&h))
    }

    /// (handle JSON, tool args JSON, payload) by mem_id.
    fn get(&self, mem_id: &str) -> PyResult<Option<(String, String, String)>> {
        Ok(recorded(self.dyn_ref().get(mem_id).map_err(app_err)?))
    }

    /// (handle JSON, tool args JSON, payload) by tool call id.
    fn get_by_call_id(&self, tool_call_id: &str) -> PyResult<Option<(String, String, String)>> {
        Ok(recorded(
            self.dyn_ref()
                .get_by_call_id(tool_call_id)
                .map_err(app_err)?,
        ))
    }

    /// Runs one `recall_tool_result` call on its JSON input.
    fn execute(&self, input_json: &str) -> String {
        recall::execute(self.dyn_ref(), input_json)
    }

    /// Answers a recall request for `mem_id`.
    #[pyo3(signature = (mem_id, format=None, query=None, offset=None, max_chars=None, json_path=None))]
    fn fetch(
        &self,
        mem_id: &str,
        format: Option<&str>,
        query: Option<String>,
        offset: Option<u64>,
        max_chars: Option<u64>,
        json_path: Option<String>,
    ) -> PyResult<String> {
        let format = match format {
            None => None,
            Some("full") => Some(RecallFormat::Full),
            Some("summary") => Some(RecallFormat::Summary),
            Some(other) => {
                return Err(config_err(format!(
                    "format must be full or summary, got {other:?}"
                )));
            }
        };
        let request = RecallRequest {
            format,
            query,
            offset,
            max_chars,
            json_path,
        };
        Ok(recall::fetch(self.dyn_ref(), mem_id, &request))
    }

    /// Handles recorded, in recording order (a durable ledger), or `None`.
    fn handles(&self) -> PyResult<Option<Vec<String>>> {
        match &self.kind {
            LedgerKind::Memory(_) => Ok(None),
            LedgerKind::Durable(l) => Ok(Some(handles_json(&l.handles().map_err(app_err)?))),
        }
    }

    /// Results held (in memory), or `None`.
    fn count(&self) -> Option<usize> {
        match &self.kind {
            LedgerKind::Memory(l) => Some(l.len()),
            LedgerKind::Durable(_) => None,
        }
    }
}

/// The `recall_tool_result` tool definition, as JSON.
#[pyfunction]
pub(crate) fn recall_tool_json() -> &'static str {
    recall::RECALL_TOOL_JSON
}

//! Handles across the boundary: their JSON (one, or a list), a handle's
//! stub text, and a handle derived without a ledger.

use std::borrow::Borrow;

use pyo3::prelude::*;

use tracecost::engine::handle::Handle;
use tracecost::engine::stub::render_stub;

use crate::errors::input_err;

pub(crate) fn handle_json(h: &Handle) -> String {
    serde_json::to_string(h).unwrap_or_default()
}

/// A list of handles as JSON texts; `Borrow` because the rewriter hands out
/// shared handles (`Arc`) and the durable ledger owned ones.
pub(crate) fn handles_json<H: Borrow<Handle>>(handles: &[H]) -> Vec<String> {
    handles.iter().map(|h| handle_json(h.borrow())).collect()
}

/// The stub text of a handle (given as its JSON).
#[pyfunction]
pub(crate) fn stub(handle_json: &str) -> PyResult<String> {
    let h: Handle =
        serde_json::from_str(handle_json).map_err(|e| input_err(format!("handle: {e}")))?;
    Ok(render_stub(&h))
}

/// The handle of a result, derived without recording it.
#[pyfunction]
pub(crate) fn derive_handle(tool_call_id: &str, tool_name: &str, content: &str) -> String {
    handle_json(&Handle::derive(tool_call_id, tool_name, content))
}

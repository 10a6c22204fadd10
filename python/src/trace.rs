//! The `Trace` class, and the ways to get traces: loading files as the
//! command line reads them, parsing trace JSON, running a generator.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::prelude::*;

use tracecost::app::{self, InputOptions};
use tracecost::policy::Config;
use tracecost::progress::Silent;
use tracecost::trace::Trace;
use tracecost::trace::import::Format;

use crate::errors::{app_err, config_err};

/// A recorded conversation, loaded or imported.
#[pyclass(name = "Trace", module = "tracecost", frozen)]
pub(crate) struct PyTrace {
    inner: Arc<Trace>,
}

#[pymethods]
impl PyTrace {
    /// Its name.
    #[getter]
    fn name(&self) -> &str {
        &self.inner.name
    }

    /// What the conversation was.
    #[getter]
    fn description(&self) -> &str {
        &self.inner.description
    }

    /// The default model.
    #[getter]
    fn model(&self) -> &str {
        &self.inner.model
    }

    /// The API it was sent to.
    #[getter]
    fn provider(&self) -> &'static str {
        self.inner.provider.as_str()
    }

    /// The project (repository, workspace), when the source tells.
    #[getter]
    fn project(&self) -> Option<&str> {
        self.inner.project.as_deref()
    }

    /// The account whose prompt cache the session used, when the source
    /// tells (see docs/trace-format.md).
    #[getter]
    fn account(&self) -> Option<&str> {
        self.inner.account.as_deref()
    }

    /// The session this trace is one part of, when it is one of several.
    #[getter]
    fn session(&self) -> Option<&str> {
        self.inner.session.as_deref()
    }

    /// What actually ran, as a canonical config string (see the README).
    #[getter]
    fn status_quo(&self) -> PyResult<String> {
        Config::status_quo(&*self.inner)
            .map(|c| c.to_string())
            .map_err(app_err)
    }

    /// Number of model calls.
    #[getter]
    fn calls(&self) -> usize {
        self.inner.calls.len()
    }

    /// Number of messages of the lossless history.
    #[getter]
    fn messages(&self) -> usize {
        self.inner.messages.len()
    }

    /// The canonical trace JSON (`tracecost.trace/v1`).
    fn to_json(&self) -> String {
        tracecost::trace::to_json(&self.inner)
    }

    fn __repr__(&self) -> String {
        format!(
            "Trace(name={:?}, calls={}, model={:?}, project={:?})",
            self.inner.name,
            self.inner.calls.len(),
            self.inner.model,
            self.inner.project
        )
    }
}

fn wrap(traces: Vec<Trace>) -> Vec<PyTrace> {
    traces
        .into_iter()
        .map(|t| PyTrace { inner: Arc::new(t) })
        .collect()
}

pub(crate) fn owned(traces: &[PyRef<'_, PyTrace>]) -> Vec<Trace> {
    // Plans own their traces; a Python Trace stays usable afterwards.
    traces.iter().map(|t| (*t.inner).clone()).collect()
}

fn format_named(name: &str) -> PyResult<Format> {
    Ok(match name {
        "claude-code" => Format::ClaudeCode,
        "anthropic" => Format::Anthropic,
        "langchain" => Format::Langchain,
        "openai" => Format::Openai,
        other => {
            return Err(config_err(format!(
                "from_ must be claude-code, anthropic, langchain or openai, got {other:?}"
            )));
        }
    })
}

/// Loads traces from files and folders as the command line reads them:
/// (traces, warnings, skipped lines).
#[pyfunction]
#[pyo3(signature = (paths, from_=None, skip_invalid=false))]
pub(crate) fn load(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    from_: Option<&str>,
    skip_invalid: bool,
) -> PyResult<(Vec<PyTrace>, Vec<String>, Vec<String>)> {
    let opts = InputOptions {
        from: from_.map(format_named).transpose()?,
        skip_invalid,
    };
    let loaded = py
        .detach(|| app::load_inputs(&paths, &opts, &Silent))
        .map_err(app_err)?;
    Ok((
        wrap(loaded.traces),
        loaded.warnings.iter().map(ToString::to_string).collect(),
        loaded.skipped.lines(),
    ))
}

/// Traces from canonical trace JSON text: (traces, warnings).
#[pyfunction]
#[pyo3(signature = (json, path="<string>"))]
pub(crate) fn loads(
    py: Python<'_>,
    json: &str,
    path: &str,
) -> PyResult<(Vec<PyTrace>, Vec<String>)> {
    let loaded = py
        .detach(|| tracecost::trace::load_str(json, path))
        .map_err(app_err)?;
    Ok((
        wrap(loaded.traces),
        loaded.warnings.iter().map(ToString::to_string).collect(),
    ))
}

/// Runs a generator by name (`massage-gun`, `session`, `fleet`).
#[pyfunction]
#[pyo3(signature = (name, calls=None, seed=None, sessions=None, accounts=None, days=None))]
pub(crate) fn generate(
    py: Python<'_>,
    name: &str,
    calls: Option<usize>,
    seed: Option<u64>,
    sessions: Option<usize>,
    accounts: Option<usize>,
    days: Option<u64>,
) -> PyResult<Vec<PyTrace>> {
    let options = tracecost::trace::generate::GenOptions {
        calls,
        seed,
        sessions,
        accounts,
        days,
    };
    let traces = py
        .detach(|| {
            tracecost::trace::generate::generate(name, options).map(|it| it.collect::<Vec<_>>())
        })
        .map_err(config_err)?;
    Ok(wrap(traces))
}

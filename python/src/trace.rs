//! The `Trace` class, and the ways to get traces: loading files as the
//! command line reads them, parsing trace JSON, running a generator.

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;

use tracecost::app::limits::Range;
use tracecost::app::{self, InputOptions};
use tracecost::policy::Config;
use tracecost::trace::Trace;
use tracecost::trace::import::InputFormat;

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

fn format_named(name: &str) -> PyResult<InputFormat> {
    InputFormat::named(name).ok_or_else(|| {
        let names: Vec<&str> = InputFormat::ALL.iter().map(|f| f.name()).collect();
        config_err(format!(
            "from_ must be one of {}, got {:?}",
            names.join(", "),
            tracecost::engine::handle::one_line(name, 80)
        ))
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
        join_compactions: false,
    };
    let loaded = py
        .detach(|| app::InputLoader::new(&paths, &opts).load())
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

/// Runs a generator by name (`massage-gun`, `session`, `fleet`). Sizes are
/// held to the command line's ranges (`tracecost::app::limits`): a value
/// outside them, of any size or sign, is a ValueError, never a run that
/// exhausts memory.
#[pyfunction]
#[pyo3(signature = (name, calls=None, seed=None, sessions=None, accounts=None, days=None))]
pub(crate) fn generate(
    py: Python<'_>,
    name: &str,
    calls: Option<&Bound<'_, PyAny>>,
    seed: Option<&Bound<'_, PyAny>>,
    sessions: Option<&Bound<'_, PyAny>>,
    accounts: Option<&Bound<'_, PyAny>>,
    days: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<PyTrace>> {
    use tracecost::app::limits::{GEN_ACCOUNTS, GEN_CALLS, GEN_DAYS, GEN_SESSIONS};
    // The ranges' bounds are far below usize::MAX.
    let size = |v, range| Ok::<_, PyErr>(in_range(v, range)?.map(|n| n as usize));
    let options = tracecost::trace::generate::GenOptions {
        calls: size(calls, GEN_CALLS)?,
        seed: seed.map(any_seed).transpose()?,
        sessions: size(sessions, GEN_SESSIONS)?,
        accounts: size(accounts, GEN_ACCOUNTS)?,
        days: in_range(days, GEN_DAYS)?,
    };
    let traces = py
        .detach(|| {
            tracecost::trace::generate::generate(name, options).map(|it| it.collect::<Vec<_>>())
        })
        .map_err(config_err)?;
    Ok(wrap(traces))
}

/// A whole-number argument held to `range`: a ValueError naming the
/// argument and the range when it is outside (however large: an int past
/// 128 bits is outside too); a TypeError when it is no integer.
fn in_range(value: Option<&Bound<'_, PyAny>>, range: Range) -> PyResult<Option<u64>> {
    let Some(value) = value else { return Ok(None) };
    let whole = match whole_int(value)? {
        Some(n) => range.whole(n),
        None => Err(range.refusal_of(&range.argument(), &shown_int(value))),
    };
    whole.map(Some).map_err(PyValueError::new_err)
}

/// A seed: any whole number from 0 to 2^64 - 1.
fn any_seed(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    whole_int(value)?
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "seed {}: expected a whole number from 0 to {}",
                shown_int(value),
                u64::MAX
            ))
        })
}

/// `value` as an integer, `None` when it is one too large for 128 bits; a
/// TypeError when it is not an integer (a bool is refused too: `True`
/// sessions is a mistake, not 1).
fn whole_int(value: &Bound<'_, PyAny>) -> PyResult<Option<i128>> {
    if value.is_instance_of::<pyo3::types::PyBool>() {
        return Err(PyTypeError::new_err(format!(
            "expected an integer, got {}",
            shown_int(value)
        )));
    }
    match value.extract::<i128>() {
        Ok(n) => Ok(Some(n)),
        Err(e) if e.is_instance_of::<PyOverflowError>(value.py()) => Ok(None),
        Err(e) => Err(e),
    }
}

/// An integer for a message, bounded (Python refuses to print ints of
/// thousands of digits).
fn shown_int(value: &Bound<'_, PyAny>) -> String {
    value
        .str()
        .map(|s| tracecost::engine::handle::one_line(&s.to_string(), 60))
        .unwrap_or_else(|_| "(a number too long to print)".to_owned())
}

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

use std::path::PathBuf;
use std::sync::Arc;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use serde_json::{Value, json};

use tracecost::app::{
    self, AppError, Calibration, CostPlan, ErrorClass, InputOptions, ReplayPlan, SweepOptions,
    SweepPlan,
};
use tracecost::engine::cache::{
    CacheComposition, HistoryCachePolicy, ManifestCachePolicy, ManifestPosition, ProviderKind,
};
use tracecost::engine::handle::Handle;
use tracecost::engine::ledger::{DurableLedger, InMemoryLedger, Recorded, ToolResultLedger};
use tracecost::engine::message::{ContentBlock, Message, ToolDefinition};
use tracecost::engine::recall::{self, RecallFormat, RecallRequest};
use tracecost::engine::rewrite::{CompactionPolicy, Compactor, WireView};
use tracecost::engine::stub::render_stub;
use tracecost::engine::wire::{BlockRef, Marker, Request, message_json};
use tracecost::policy::{Config, GridSpec, TtlChoice, parse_ttl};
use tracecost::progress::Silent;
use tracecost::trace::Trace;
use tracecost::trace::import::Format;

create_exception!(
    tracecost,
    TracecostError,
    PyException,
    "Base of every error tracecost raises; the message is the command line's."
);
create_exception!(
    tracecost,
    InputError,
    TracecostError,
    "Bad input: a trace, log or file that cannot be read, named with the place (the command line's exit code 2)."
);
create_exception!(
    tracecost,
    ConfigError,
    InputError,
    "A config string, grid or option that does not parse or cannot apply to a trace, or a model with no price."
);
create_exception!(
    tracecost,
    LedgerError,
    TracecostError,
    "The ledger's storage failed (a durable ledger's directory)."
);

/// The Python exception for a pipeline's error, with the message the
/// command line prints.
fn app_err(e: AppError) -> PyErr {
    let msg = e.to_string();
    match &e {
        AppError::Config(_) | AppError::Flag(_) | AppError::Pricing(_) | AppError::Replay(_) => {
            ConfigError::new_err(msg)
        }
        AppError::Ledger(_) | AppError::LedgerDamaged { .. } => LedgerError::new_err(msg),
        _ => match e.class() {
            ErrorClass::Input => InputError::new_err(msg),
            ErrorClass::Output | ErrorClass::Environment => TracecostError::new_err(msg),
        },
    }
}

fn ledger_err(e: tracecost::engine::ledger::LedgerError) -> PyErr {
    LedgerError::new_err(format!("ledger: {e}"))
}

fn config_err(msg: impl std::fmt::Display) -> PyErr {
    ConfigError::new_err(msg.to_string())
}

fn input_err(msg: impl std::fmt::Display) -> PyErr {
    InputError::new_err(msg.to_string())
}

// ---------------------------------------------------------------- engine

enum LedgerKind {
    Memory(Arc<InMemoryLedger>),
    Durable(Arc<DurableLedger>),
}

/// A tool-result ledger: in memory, or durable in a directory.
#[pyclass(name = "Ledger", module = "tracecost._native", frozen)]
struct PyLedger {
    kind: LedgerKind,
}

impl PyLedger {
    fn shared(&self) -> Arc<dyn ToolResultLedger> {
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

fn handle_json(h: &Handle) -> String {
    serde_json::to_string(h).unwrap_or_default()
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
        let l = py
            .detach(|| DurableLedger::open(&path))
            .map_err(ledger_err)?;
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
            .map_err(ledger_err)?;
        Ok(handle_json(&h))
    }

    /// (handle JSON, tool args JSON, payload) by mem_id.
    fn get(&self, mem_id: &str) -> PyResult<Option<(String, String, String)>> {
        Ok(recorded(self.dyn_ref().get(mem_id).map_err(ledger_err)?))
    }

    /// (handle JSON, tool args JSON, payload) by tool call id.
    fn get_by_call_id(&self, tool_call_id: &str) -> PyResult<Option<(String, String, String)>> {
        Ok(recorded(
            self.dyn_ref()
                .get_by_call_id(tool_call_id)
                .map_err(ledger_err)?,
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
            LedgerKind::Durable(l) => Ok(Some(
                l.handles()
                    .map_err(ledger_err)?
                    .iter()
                    .map(handle_json)
                    .collect(),
            )),
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

fn parse_messages(messages: &[String]) -> PyResult<Vec<Message>> {
    messages
        .iter()
        .enumerate()
        .map(|(i, m)| Message::from_json(m).map_err(|e| input_err(format!("messages[{i}]: {e}"))))
        .collect()
}

fn parse_tools(tools: &[String]) -> PyResult<Vec<ToolDefinition>> {
    tools
        .iter()
        .enumerate()
        .map(|(i, t)| {
            ToolDefinition::from_json(t).map_err(|e| input_err(format!("tools[{i}]: {e}")))
        })
        .collect()
}

fn parse_system(system: &[String]) -> PyResult<Vec<ContentBlock>> {
    system
        .iter()
        .enumerate()
        .map(|(i, b)| {
            ContentBlock::from_json(b).map_err(|e| input_err(format!("system[{i}]: {e}")))
        })
        .collect()
}

fn marker_tuple(m: &Marker) -> (String, usize, Option<usize>, String) {
    let (kind, index, block) = match m.at {
        BlockRef::Tool(i) => ("tool", i, None),
        BlockRef::System(i) => ("system", i, None),
        BlockRef::Message { message, block } => ("message", message, Some(block)),
    };
    (kind.to_owned(), index, block, m.ttl.as_str().to_owned())
}

type MarkerTuple = (String, usize, Option<usize>, String);

/// The request body (tools, system, messages; markers spliced in) and its
/// markers.
fn compose(
    tools: &[ToolDefinition],
    system: &[ContentBlock],
    view: &WireView<'_>,
    cache: Option<&CacheComposition>,
) -> (String, Vec<MarkerTuple>) {
    let tool_refs: Vec<&ToolDefinition> = tools.iter().collect();
    let markers = cache
        .map(|c| c.markers(&tool_refs, system, view))
        .unwrap_or_default();
    let req = Request {
        tools: tool_refs,
        system,
        messages: view,
        markers: &markers,
    };
    (req.to_json(), markers.iter().map(marker_tuple).collect())
}

/// The engine's rewriter with its ledger.
#[pyclass(name = "Compactor", module = "tracecost._native")]
struct PyCompactor {
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
        let rw = self.inner.rewrite(&history).map_err(ledger_err)?;
        Ok((
            rw.view.messages.iter().map(message_json).collect(),
            rw.compacted.iter().map(|h| handle_json(h)).collect(),
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
        let rw = self.inner.rewrite(&history).map_err(ledger_err)?;
        let (body, markers) = compose(&tools, &system, &rw.view, cache.map(|c| &c.inner));
        Ok((
            body,
            rw.compacted.iter().map(|h| handle_json(h)).collect(),
            markers,
        ))
    }
}

/// Where the engine puts cache_control markers.
#[pyclass(name = "CacheComposition", module = "tracecost._native", frozen)]
struct PyCacheComposition {
    inner: CacheComposition,
}

#[pymethods]
impl PyCacheComposition {
    #[new]
    #[pyo3(signature = (history=true, manifest=Some("cached"), prompt_region=true, ttl="5m", provider="anthropic"))]
    fn new(
        history: bool,
        manifest: Option<&str>,
        prompt_region: bool,
        ttl: &str,
        provider: &str,
    ) -> PyResult<Self> {
        let provider: ProviderKind = provider.parse().map_err(config_err)?;
        let manifest = match manifest {
            None => ManifestCachePolicy::default(),
            Some(m) => ManifestCachePolicy {
                enabled: true,
                position: m.parse::<ManifestPosition>().map_err(config_err)?,
            },
        };
        let ttl = parse_ttl(ttl).map_err(config_err)?;
        let inner = CacheComposition::new(
            provider,
            HistoryCachePolicy { enabled: history },
            manifest,
            prompt_region,
            ttl,
        )
        .map_err(config_err)?;
        Ok(PyCacheComposition { inner })
    }

    /// The provider's name.
    #[getter]
    fn provider(&self) -> &'static str {
        self.inner.provider().as_str()
    }

    /// The TTL every marker carries.
    #[getter]
    fn ttl(&self) -> &'static str {
        self.inner.ttl().as_str()
    }

    /// The request body for messages sent as they are, and its markers.
    fn request(
        &self,
        messages: Vec<String>,
        tools: Vec<String>,
        system: Vec<String>,
    ) -> PyResult<(String, Vec<MarkerTuple>)> {
        let history = parse_messages(&messages)?;
        let tools = parse_tools(&tools)?;
        let system = parse_system(&system)?;
        let view = WireView::unchanged(&history);
        Ok(compose(&tools, &system, &view, Some(&self.inner)))
    }
}

/// The stub text of a handle (given as its JSON).
#[pyfunction]
fn stub(handle_json: &str) -> PyResult<String> {
    let h: Handle =
        serde_json::from_str(handle_json).map_err(|e| input_err(format!("handle: {e}")))?;
    Ok(render_stub(&h))
}

/// The handle of a result, derived without recording it.
#[pyfunction]
fn derive_handle(tool_call_id: &str, tool_name: &str, content: &str) -> String {
    handle_json(&Handle::derive(tool_call_id, tool_name, content))
}

// --------------------------------------------------------------- harness

/// A recorded conversation, loaded or imported.
#[pyclass(name = "Trace", module = "tracecost", frozen)]
struct PyTrace {
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
        Config::status_quo(&self.inner)
            .map(|c| c.to_string())
            .map_err(|e| app_err(e.into()))
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

fn owned(traces: &[PyRef<'_, PyTrace>]) -> Vec<Trace> {
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
fn load(
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
        .map_err(|e| app_err(e.into()))?;
    Ok((
        wrap(loaded.traces),
        loaded.warnings.iter().map(ToString::to_string).collect(),
        loaded.skipped.lines(),
    ))
}

/// Traces from canonical trace JSON text: (traces, warnings).
#[pyfunction]
#[pyo3(signature = (json, path="<string>"))]
fn loads(py: Python<'_>, json: &str, path: &str) -> PyResult<(Vec<PyTrace>, Vec<String>)> {
    let loaded = py
        .detach(|| tracecost::trace::load_str(json, path))
        .map_err(|e| app_err(e.into()))?;
    Ok((
        wrap(loaded.traces),
        loaded.warnings.iter().map(ToString::to_string).collect(),
    ))
}

/// Runs a generator by name (`massage-gun`, `session`, `fleet`).
#[pyfunction]
#[pyo3(signature = (name, calls=None, seed=None, sessions=None))]
fn generate(
    py: Python<'_>,
    name: &str,
    calls: Option<usize>,
    seed: Option<u64>,
    sessions: Option<usize>,
) -> PyResult<Vec<PyTrace>> {
    let options = tracecost::trace::generate::GenOptions {
        calls,
        seed,
        sessions,
    };
    let traces = py
        .detach(|| {
            tracecost::trace::generate::generate(name, options).map(|it| it.collect::<Vec<_>>())
        })
        .map_err(config_err)?;
    Ok(wrap(traces))
}

/// The canonical string of a config (an error if it does not parse).
#[pyfunction]
fn canonical_config(config: &str) -> PyResult<String> {
    config
        .parse::<Config>()
        .map(|c| c.to_string())
        .map_err(|e| app_err(e.into()))
}

fn cost_plan(
    pricing: Option<PathBuf>,
    tokenizer: &str,
    calibrate: &str,
    batch: bool,
) -> PyResult<CostPlan> {
    let calibration = Calibration::from_name(calibrate)
        .ok_or_else(|| config_err(format!("calibrate must be auto or off, got {calibrate:?}")))?;
    CostPlan::new(pricing.as_deref(), tokenizer, calibration, batch).map_err(app_err)
}

fn grid_spec(
    compactions: Option<Vec<String>>,
    thresholds: Option<Vec<u64>>,
    keep_lasts: Option<Vec<usize>>,
    caches: Option<Vec<String>>,
    ttl: Option<&str>,
) -> PyResult<GridSpec> {
    Ok(GridSpec {
        compactions,
        thresholds,
        keep_lasts,
        caches,
        ttl: ttl.map(TtlChoice::parse).transpose().map_err(config_err)?,
    })
}

fn parse_configs(configs: &[String]) -> PyResult<Vec<Config>> {
    configs
        .iter()
        .map(|c| c.parse::<Config>().map_err(|e| app_err(e.into())))
        .collect()
}

/// The configs a grid gives for a fleet with these status quos, as
/// canonical strings.
#[pyfunction]
#[pyo3(signature = (status_quos, compactions=None, thresholds=None, keep_lasts=None, caches=None, ttl=None, models=Vec::new()))]
fn grid_configs(
    status_quos: Vec<String>,
    compactions: Option<Vec<String>>,
    thresholds: Option<Vec<u64>>,
    keep_lasts: Option<Vec<usize>>,
    caches: Option<Vec<String>>,
    ttl: Option<&str>,
    models: Vec<String>,
) -> PyResult<Vec<String>> {
    let spec = grid_spec(compactions, thresholds, keep_lasts, caches, ttl)?;
    let quos = parse_configs(&status_quos)?;
    Ok(app::grid_configs(&spec, &models, &quos)
        .map_err(app_err)?
        .iter()
        .map(ToString::to_string)
        .collect())
}

/// Replays each trace under `config` (default as `tracecost replay`):
/// the JSON list of the replays, each as `tracecost replay --json` gives it.
#[pyfunction]
#[pyo3(signature = (traces, config=None, model=None, pricing=None, tokenizer="o200k_base", calibrate="auto", batch=false))]
#[allow(clippy::too_many_arguments)]
fn replay(
    py: Python<'_>,
    traces: Vec<PyRef<'_, PyTrace>>,
    config: Option<&str>,
    model: Option<&str>,
    pricing: Option<PathBuf>,
    tokenizer: &str,
    calibrate: &str,
    batch: bool,
) -> PyResult<String> {
    let cost = cost_plan(pricing, tokenizer, calibrate, batch)?;
    let config = config
        .map(|c| c.parse::<Config>().map_err(|e| app_err(e.into())))
        .transpose()?;
    let traces = owned(&traces);
    let model = model.map(str::to_owned);
    py.detach(move || {
        let plan = ReplayPlan::with_config(traces, config.as_ref(), model.as_deref(), cost)?;
        let outputs = app::replay(&plan, &Silent)?;
        Ok::<_, AppError>(serde_json::to_string(&outputs).unwrap_or_default())
    })
    .map_err(app_err)
}

/// Sweeps `configs` (or the grid, when `configs` is `None`) over the
/// traces: the JSON list of rows, one per (trace, config), in trace order
/// and, within a trace, ranked as `tracecost sweep` ranks them.
#[pyfunction]
#[pyo3(signature = (traces, configs=None, compactions=None, thresholds=None, keep_lasts=None, caches=None, ttl=None, models=Vec::new(), baseline=None, recall_cost=None, pricing=None, tokenizer="o200k_base", calibrate="auto", batch=false))]
#[allow(clippy::too_many_arguments)]
fn sweep(
    py: Python<'_>,
    traces: Vec<PyRef<'_, PyTrace>>,
    configs: Option<Vec<String>>,
    compactions: Option<Vec<String>>,
    thresholds: Option<Vec<u64>>,
    keep_lasts: Option<Vec<usize>>,
    caches: Option<Vec<String>>,
    ttl: Option<&str>,
    models: Vec<String>,
    baseline: Option<&str>,
    recall_cost: Option<f64>,
    pricing: Option<PathBuf>,
    tokenizer: &str,
    calibrate: &str,
    batch: bool,
) -> PyResult<String> {
    let cost = cost_plan(pricing, tokenizer, calibrate, batch)?;
    let options = SweepOptions {
        models,
        baseline: baseline
            .map(|b| b.parse::<Config>().map_err(|e| app_err(e.into())))
            .transpose()?,
        recall_cost_usd: recall_cost,
    };
    let configs = configs.as_deref().map(parse_configs).transpose()?;
    let spec = grid_spec(compactions, thresholds, keep_lasts, caches, ttl)?;
    let traces = owned(&traces);
    py.detach(move || {
        let plan = match configs {
            Some(c) => SweepPlan::from_configs(traces, c, options, cost)?,
            None => SweepPlan::from_grid(traces, spec, options, cost)?,
        };
        let sweeps = app::sweep(&plan, &Silent)?;
        Ok::<_, AppError>(sweep_rows(&plan, &sweeps).to_string())
    })
    .map_err(app_err)
}

/// One row per (trace, config): the figures `tracecost sweep` prints, the
/// trace's project, and whether the config is one of the plan's (the
/// baseline is swept too when it is not).
fn sweep_rows(plan: &SweepPlan, sweeps: &[tracecost::replay::sweep::TraceSweep]) -> Value {
    let mut rows = Vec::new();
    for (t, s) in plan.traces.iter().zip(sweeps) {
        for (i, r) in s.rows.iter().enumerate() {
            let tot = &r.result.totals;
            let u = &tot.usage;
            rows.push(json!({
                "trace": s.trace,
                "project": t.project,
                "rank": i + 1,
                "config": r.result.config.to_string(),
                "model": r.result.model,
                "calls": tot.calls,
                "cost_usd": tot.cost_usd,
                "input_tokens": u.input_tokens,
                "cache_creation_input_tokens": u.cache_creation_input_tokens,
                "ephemeral_5m_input_tokens": u.write_5m(),
                "ephemeral_1h_input_tokens": u.write_1h(),
                "cache_read_input_tokens": u.cache_read_input_tokens,
                "output_tokens": u.output_tokens,
                "savings_usd": r.savings_usd,
                "savings_pct": r.savings_pct,
                "risk_adjusted_cost_usd": r.risk_adjusted_cost_usd,
                "compacted_results": tot.compacted_results,
                "recall_risk_turns": r.risk.turns,
                "recall_risk_quotes": r.risk.quotes,
                "pareto": r.pareto,
                "no_effect": r.no_effect,
                "baseline": i == s.baseline,
                "cheapest": i == s.cheapest,
                "recommended": i == s.recommended,
                "in_grid": plan.configs.contains(&r.result.config),
            }));
        }
    }
    Value::Array(rows)
}

/// The `recall_tool_result` tool definition, as JSON.
#[pyfunction]
fn recall_tool_json() -> &'static str {
    recall::RECALL_TOOL_JSON
}

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
    m.add_class::<PyLedger>()?;
    m.add_class::<PyCompactor>()?;
    m.add_class::<PyCacheComposition>()?;
    m.add_class::<PyTrace>()?;
    m.add_function(wrap_pyfunction!(stub, m)?)?;
    m.add_function(wrap_pyfunction!(derive_handle, m)?)?;
    m.add_function(wrap_pyfunction!(recall_tool_json, m)?)?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(loads, m)?)?;
    m.add_function(wrap_pyfunction!(generate, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_config, m)?)?;
    m.add_function(wrap_pyfunction!(grid_configs, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    Ok(())
}

//! The harness's functions: configs (canonical strings, the grid), replays
//! and sweeps, with the figures the command line computes.

use std::path::PathBuf;

use pyo3::prelude::*;
use serde_json::{Value, json};

use tracecost::app::{
    self, AppError, CalibrationChoice, CostPlan, ReplayPlan, SweepOptions, SweepPlan,
};
use tracecost::policy::{Config, GridSpec, TtlChoice};
use tracecost::progress::Silent;

use crate::errors::{app_err, config_err};
use crate::trace::{PyTrace, owned};

/// The canonical string of a config (an error if it does not parse).
#[pyfunction]
pub(crate) fn canonical_config(config: &str) -> PyResult<String> {
    parse_config(config).map(|c| c.to_string())
}

/// Every config string that comes from Python parses here, so a bad one is
/// the same ConfigError wherever it was given.
fn parse_config(config: &str) -> PyResult<Config> {
    config.parse::<Config>().map_err(app_err)
}

fn cost_plan(
    pricing: Option<PathBuf>,
    tokenizer: &str,
    calibrate: &str,
    batch: bool,
) -> PyResult<CostPlan> {
    let calibration = CalibrationChoice::from_name(calibrate)
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
    configs.iter().map(|c| parse_config(c)).collect()
}

/// The configs a grid gives for a fleet with these status quos, as
/// canonical strings.
#[pyfunction]
#[pyo3(signature = (status_quos, compactions=None, thresholds=None, keep_lasts=None, caches=None, ttl=None, models=Vec::new(), providers=None))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn grid_configs(
    status_quos: Vec<String>,
    compactions: Option<Vec<String>>,
    thresholds: Option<Vec<u64>>,
    keep_lasts: Option<Vec<usize>>,
    caches: Option<Vec<String>>,
    ttl: Option<&str>,
    models: Vec<String>,
    providers: Option<Vec<String>>,
) -> PyResult<Vec<String>> {
    let spec = grid_spec(compactions, thresholds, keep_lasts, caches, ttl)?;
    let quos = parse_configs(&status_quos)?;
    // The fleet's providers (`anthropic`, `openai`, …); by default those
    // whose caches the status quos run (OpenAI's, Gemini's, Bedrock's),
    // else Anthropic's.
    use tracecost::policy::CacheKind;
    let providers = providers
        .unwrap_or_else(|| {
            let mut out: Vec<String> = Vec::new();
            for q in &quos {
                let p = match q.cache.kind() {
                    CacheKind::OpenAiAuto | CacheKind::OpenAiBreakpoints => "openai",
                    CacheKind::GeminiImplicit | CacheKind::GeminiExplicit => "google",
                    CacheKind::BedrockCachePoint => "bedrock-converse",
                    _ => "anthropic",
                };
                if !out.iter().any(|o| o == p) {
                    out.push(p.to_owned());
                }
            }
            if out.is_empty() {
                out.push("anthropic".to_owned());
            }
            out
        })
        .iter()
        .map(|p| {
            tracecost::engine::cache::ProviderKind::ALL
                .into_iter()
                .find(|k| k.as_str() == p)
                .ok_or_else(|| {
                    pyo3::exceptions::PyValueError::new_err(format!(
                        "unknown provider {p:?} (expected anthropic, bedrock-converse, openai, google or unknown)"
                    ))
                })
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(app::grid_configs(&spec, &models, &quos, &providers)
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
pub(crate) fn replay(
    py: Python<'_>,
    traces: Vec<PyRef<'_, PyTrace>>,
    config: Option<&str>,
    model: Option<&str>,
    pricing: Option<PathBuf>,
    tokenizer: &str,
    calibrate: &str,
    batch: bool,
) -> PyResult<String> {
    let mut cost = cost_plan(pricing, tokenizer, calibrate, batch)?;
    let config = config.map(parse_config).transpose()?;
    let model = model.map(str::to_owned);
    let priced_as = model
        .clone()
        .or_else(|| config.as_ref().and_then(|c| c.model.clone()));
    let traces = priced_only(owned(&traces), &mut cost, priced_as.as_deref());
    cost.check_unpriced(traces.len()).map_err(app_err)?;
    warn_unpriced(py, &cost)?;
    py.detach(move || {
        let plan = ReplayPlan::with_config(traces, config.as_ref(), model.as_deref(), cost)?;
        let outputs = app::replay(&plan, &Silent)?;
        Ok::<_, AppError>(serde_json::to_string(&outputs).unwrap_or_default())
    })
    .map_err(app_err)
}

/// The traces without their unpriced calls, as the command line replays
/// them: a trace with no priced call is left out, one with some is replayed
/// on those ([`app::unpriced`]).
fn priced_only(
    traces: Vec<tracecost::trace::Trace>,
    cost: &mut CostPlan,
    priced_as: Option<&str>,
) -> Vec<tracecost::trace::Trace> {
    use app::unpriced::Sifted;
    traces
        .into_iter()
        .filter_map(|t| match cost.sift_one(t, priced_as) {
            Sifted::Whole(t) | Sifted::Trimmed(t) => Some(t),
            Sifted::SetAside => None,
        })
        .collect()
}

/// The calls left out for want of a price, said once each as a Python
/// warning (the command line's stderr line).
fn warn_unpriced(py: Python<'_>, cost: &CostPlan) -> PyResult<()> {
    for line in cost.unpriced.lines() {
        let message = std::ffi::CString::new(line).unwrap_or_default();
        PyErr::warn(
            py,
            &py.get_type::<pyo3::exceptions::PyUserWarning>(),
            &message,
            1,
        )?;
    }
    Ok(())
}

/// Sweeps `configs` (or the grid, when `configs` is `None`) over the
/// traces: the JSON list of rows, one per (trace, config), in trace order
/// and, within a trace, ranked as `tracecost sweep` ranks them.
#[pyfunction]
#[pyo3(signature = (traces, configs=None, compactions=None, thresholds=None, keep_lasts=None, caches=None, ttl=None, models=Vec::new(), baseline=None, recall_cost=None, pricing=None, tokenizer="o200k_base", calibrate="auto", batch=false))]
#[allow(clippy::too_many_arguments)]
pub(crate) fn sweep(
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
    let mut cost = cost_plan(pricing, tokenizer, calibrate, batch)?;
    // The command line's range, refused as a ValueError.
    let recall_cost = recall_cost
        .map(|c| tracecost::app::limits::RECALL_COST_USD.within(c))
        .transpose()
        .map_err(pyo3::exceptions::PyValueError::new_err)?;
    let options = SweepOptions {
        models,
        baseline: baseline.map(parse_config).transpose()?,
        recall_cost_usd: recall_cost,
    };
    let configs = configs.as_deref().map(parse_configs).transpose()?;
    let spec = grid_spec(compactions, thresholds, keep_lasts, caches, ttl)?;
    // Priced as the first model named, as `tracecost sweep --model` prices
    // (or a config's own model): a named model is the caller's choice.
    let priced_as = options
        .models
        .first()
        .cloned()
        .or_else(|| configs.iter().flatten().find_map(|c| c.model.clone()));
    let traces = priced_only(owned(&traces), &mut cost, priced_as.as_deref());
    cost.check_unpriced(traces.len()).map_err(app_err)?;
    warn_unpriced(py, &cost)?;
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
    for (t, s) in plan.traces().iter().zip(sweeps) {
        // A plan of traces in memory reads its outlines back without fail.
        let project = t
            .ok()
            .and_then(|t| t.shared.project.as_deref().map(str::to_owned));
        for (i, r) in s.rows.iter().enumerate() {
            let tot = &r.result.totals;
            let u = &tot.usage;
            rows.push(json!({
                "trace": s.trace,
                "project": project.as_deref(),
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
                "recall_needs_low": r.risk.needs.low,
                "recall_needs": r.risk.needs.mid,
                "recall_needs_high": r.risk.needs.high,
                "pareto": r.pareto,
                "no_effect": r.no_effect,
                "baseline": i == s.baseline,
                "cheapest": i == s.cheapest,
                "recommended": i == s.recommended,
                "in_grid": plan.configs().contains(&r.result.config),
            }));
        }
    }
    Value::Array(rows)
}

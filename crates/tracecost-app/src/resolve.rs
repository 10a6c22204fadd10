//! Plans from what a caller states — a grid, a list of configs, one config
//! or none — resolved and checked the one way: the command line and the
//! Python package both build their replay and sweep plans here, so the
//! same traces and the same grid give the same figures through either.

use super::AppError;
use super::outline::{SharedStrings, TraceOutline};
use super::plan::{CostPlan, Held, ReplayPlan, SweepPlan, TraceRun, baseline_for};
use tracecost_engine::cache::ProviderKind;
use tracecost_policy::{Config, GridSpec, TtlChoice};
use tracecost_replay::sweep::{Applicability, Grid};
use tracecost_trace::{Trace, TraceFacts};

/// What a sweep is measured against and priced with, beside its configs.
#[derive(Debug, Clone, Default)]
pub struct SweepOptions {
    /// Models to price with (empty: each trace's own). With a grid, every
    /// config is tried with each; with explicit configs, each config names
    /// its own model, and one model named here prices the baseline.
    pub models: Vec<String>,
    /// What savings are measured against (`None`: each trace's status quo).
    pub baseline: Option<Config>,
    /// Price of one recall (USD); default one extra round trip.
    pub recall_cost_usd: Option<f64>,
}

/// The configs a grid gives, for a fleet whose status quos are
/// `status_quos`: the grid's compactions × caches × models, in grid order,
/// without duplicates. With no cache policies named, the grid also tries
/// the cache policy each status quo runs, so compaction is weighed on top
/// of what runs; the default policies `providers` (those of the fleet's
/// traces) do not run are left out. Cache policies named without a TTL (and no `--ttl`) take
/// the TTL each call recorded when a status quo does, so that a policy
/// weighed against what ran differs from it only in what was asked. A fleet
/// split across machines calls this once, with every session's status quo,
/// and gives each machine the resulting list.
pub fn grid_configs(
    grid: &GridSpec,
    models: &[String],
    status_quos: &[Config],
    providers: &[ProviderKind],
) -> Result<Vec<Config>, AppError> {
    let (mut compactions, mut caches) = grid.expand_for(takes_recorded_ttl(status_quos))?;
    // A default the fleet's providers do not run (Anthropic's markers on an
    // OpenAI fleet) is not tried; one named is, and refused where it
    // cannot apply.
    let runs = |on: &dyn Fn(ProviderKind) -> bool| providers.iter().any(|p| on(*p));
    if grid.caches.is_none() {
        caches.retain(|c| runs(&|p| c.kind().runs_on(p)));
    }
    if grid.compactions.is_none() {
        compactions.retain(|c| runs(&|p| c.kind().runs_on(p)));
    }
    if grid.caches.is_none() {
        for c in status_quos {
            if !caches.contains(&c.cache) {
                caches.push(c.cache);
            }
        }
    }
    let mut configs = Grid {
        compactions,
        caches,
        models: if models.is_empty() {
            vec![None]
        } else {
            models.iter().cloned().map(Some).collect()
        },
    }
    .configs();
    // Across providers, a default can pair parts no one provider runs
    // (Anthropic's server-side clearing under OpenAI's cache): not tried.
    // A part named stays, so that one no provider runs is refused.
    let (named_compaction, named_cache) = (grid.compactions.is_some(), grid.caches.is_some());
    configs.retain(|c| {
        let compaction = |p| c.compaction.kind().runs_on(p);
        let cache = |p| c.cache.kind().runs_on(p);
        runs(&|p| compaction(p) && cache(p))
            || !runs(&|p| (!named_compaction || compaction(p)) && (!named_cache || cache(p)))
    });
    Ok(configs)
}

/// The providers of `traces`, each once, in the order first seen.
pub fn providers(traces: &[impl TraceFacts]) -> Vec<ProviderKind> {
    let mut out = Vec::new();
    for t in traces {
        if !out.contains(&t.provider()) {
            out.push(t.provider());
        }
    }
    out
}

/// Whether some of `status_quos` take their TTL from the record: then a
/// grid's cache policies named without a TTL do too.
pub fn takes_recorded_ttl(status_quos: &[Config]) -> bool {
    status_quos
        .iter()
        .any(|c| c.cache.ttl() == Some(TtlChoice::Recorded))
}

/// What each trace's savings are measured against: `baseline`, else the
/// trace's status quo.
pub fn status_quos(
    traces: &[impl TraceFacts],
    baseline: Option<&Config>,
) -> Result<Vec<Config>, AppError> {
    traces
        .iter()
        .map(|t| match baseline {
            Some(b) => Ok(b.clone()),
            None => Ok(Config::status_quo(t)?),
        })
        .collect()
}

impl SweepPlan {
    /// Whether what some trace's savings are measured against takes its
    /// TTL from the record ([`takes_recorded_ttl`]); `false` when a trace
    /// has no status quo (the plan refuses it) or cannot be read back.
    /// Outlines are read one at a time.
    pub fn takes_recorded_ttl(&self) -> bool {
        let mut any = false;
        for t in self.traces().iter() {
            let quo = match (&self.baseline, t) {
                (Some(b), _) => Ok(b.clone()),
                (None, Ok(t)) => Config::status_quo(&*t).map_err(AppError::from),
                (None, Err(e)) => Err(e),
            };
            match quo {
                Ok(c) => any |= takes_recorded_ttl(std::slice::from_ref(&c)),
                Err(_) => return false,
            }
        }
        any
    }

    /// A sweep of `grid` over `traces`, as `tracecost sweep` runs it: the
    /// grid expanded with the traces' status quos ([`grid_configs`]), every
    /// config and status quo checked against every trace and priced before
    /// anything runs.
    pub fn from_grid(
        traces: Vec<Trace>,
        grid: GridSpec,
        options: SweepOptions,
        cost: CostPlan,
    ) -> Result<SweepPlan, AppError> {
        let outlines = outlines_of(&traces);
        Self::from_grid_held(outlines, Held::Whole(traces), grid, options, cost)
    }

    /// [`SweepPlan::from_grid`] over the traces of `store`, of which the
    /// plan keeps only `outlines` (what [`TraceStore::put`] gave, in the
    /// same order): a report then reads each trace back when it is
    /// replayed, a segment of an account at a time, so that memory holds
    /// only the traces that overlap in time.
    ///
    /// [`TraceStore::put`]: super::store::TraceStore::put
    pub fn from_grid_stored(
        outlines: Vec<TraceOutline>,
        store: super::store::TraceStore,
        grid: GridSpec,
        options: SweepOptions,
        cost: CostPlan,
    ) -> Result<SweepPlan, AppError> {
        let held = stored(&outlines, store)?;
        Self::from_grid_held(outlines, held, grid, options, cost)
    }

    /// [`SweepPlan::from_configs`] over the traces of `store`, of which the
    /// plan keeps only `outlines`, as [`SweepPlan::from_grid_stored`].
    pub fn from_configs_stored(
        outlines: Vec<TraceOutline>,
        store: super::store::TraceStore,
        configs: Vec<Config>,
        options: SweepOptions,
        cost: CostPlan,
    ) -> Result<SweepPlan, AppError> {
        let held = stored(&outlines, store)?;
        Self::from_configs_held(outlines, held, configs, options, cost)
    }

    fn from_grid_held(
        outlines: Vec<TraceOutline>,
        held: Held,
        grid: GridSpec,
        options: SweepOptions,
        cost: CostPlan,
    ) -> Result<SweepPlan, AppError> {
        check_recall_cost(options.recall_cost_usd)?;
        let quos = status_quos(&outlines, options.baseline.as_ref())?;
        let configs = grid_configs(&grid, &options.models, &quos, &providers(&outlines))?;
        Self::checked(outlines, held, grid, configs, options, cost)
    }

    /// A sweep of exactly `configs` (duplicates dropped, order kept) over
    /// `traces`, checked like [`SweepPlan::from_grid`]. Sweeping the list
    /// [`grid_configs`] gives is the same sweep as the grid's.
    pub fn from_configs(
        traces: Vec<Trace>,
        configs: Vec<Config>,
        options: SweepOptions,
        cost: CostPlan,
    ) -> Result<SweepPlan, AppError> {
        let outlines = outlines_of(&traces);
        Self::from_configs_held(outlines, Held::Whole(traces), configs, options, cost)
    }

    fn from_configs_held(
        outlines: Vec<TraceOutline>,
        held: Held,
        configs: Vec<Config>,
        options: SweepOptions,
        cost: CostPlan,
    ) -> Result<SweepPlan, AppError> {
        let mut unique: Vec<Config> = Vec::with_capacity(configs.len());
        for c in configs {
            if !unique.contains(&c) {
                unique.push(c);
            }
        }
        Self::checked(outlines, held, GridSpec::default(), unique, options, cost)
    }

    fn checked(
        mut outlines: Vec<TraceOutline>,
        mut held: Held,
        grid: GridSpec,
        configs: Vec<Config>,
        options: SweepOptions,
        cost: CostPlan,
    ) -> Result<SweepPlan, AppError> {
        check_recall_cost(options.recall_cost_usd)?;
        // A fleet sums sessions and writes a page per trace: two traces of
        // one name from two files must not become one. A trace held whole
        // takes its outline's names; a stored one takes them when it is
        // read back.
        super::identity::tell_apart(&mut outlines);
        if let Held::Whole(traces) = &mut held {
            for (t, o) in traces.iter_mut().zip(&outlines) {
                o.give_names(t);
            }
        }
        // What savings are measured against must apply to its trace, priced
        // as the sweep prices it (with the model named, when one is); a grid
        // applies per trace: a config that cannot apply to some traces is
        // skipped for them (the fleet says so), but one that applies to
        // none was asked for in vain, and is an error. Each pair is checked
        // here, once.
        let baselines = outlines
            .iter()
            .map(|t| baseline_for(t, options.baseline.as_ref(), &options.models, &cost))
            .collect::<Result<Vec<_>, _>>()?;
        let refs: Vec<&TraceOutline> = outlines.iter().collect();
        let applicability = Applicability::per_trace(&refs, &configs, &baselines, &cost.pricing)
            .map_err(|e| match e {
                // A model the table does not know is the plan's error, as
                // any other price lookup of the plan (the user can name one).
                tracecost_replay::ReplayError::Pricing(p) => AppError::Pricing(p),
                e => e.into(),
            })?;
        // A stored fleet's outlines wait on disk with its traces.
        let outlines = match &held {
            Held::Stored(_) => super::outline::Outlines::spilled(outlines)?,
            Held::Whole(_) => super::outline::Outlines::in_memory(outlines),
        };
        Ok(SweepPlan {
            outlines,
            held,
            grid,
            models: options.models,
            baseline: options.baseline,
            recall_cost_usd: options.recall_cost_usd,
            cost,
            applicability,
        })
    }
}

/// `store` as a plan of `outlines` holds it: one trace in it per outline.
fn stored(outlines: &[TraceOutline], store: super::store::TraceStore) -> Result<Held, AppError> {
    if store.len() != outlines.len() {
        return Err(AppError::Internal(format!(
            "a store of {} traces for a plan of {}",
            store.len(),
            outlines.len()
        )));
    }
    Ok(Held::Stored(std::sync::Arc::new(store)))
}

/// The outlines of `traces`, in their order, sharing their strings.
fn outlines_of(traces: &[Trace]) -> Vec<TraceOutline> {
    let mut shared = SharedStrings::default();
    traces
        .iter()
        .map(|t| TraceOutline::of(t, &mut shared))
        .collect()
}

fn check_recall_cost(recall_cost_usd: Option<f64>) -> Result<(), AppError> {
    match recall_cost_usd {
        Some(c) => super::limits::RECALL_COST_USD
            .check(c)
            .map(drop)
            .map_err(AppError::Usage),
        None => Ok(()),
    }
}

/// The config a replay without policy options runs: what actually ran,
/// the trace's status quo (its `status_quo`, else its recorded markers,
/// else nothing), so a replay of a Claude Code folder replays Claude
/// Code's own caching and its figures can be set beside the recorded bill.
pub fn default_replay_config(trace: &Trace) -> Result<Config, AppError> {
    Ok(Config::status_quo(trace)?)
}

impl ReplayPlan {
    /// A replay of `runs`, each run's config checked against its trace and
    /// every call's model against the price table, before anything runs.
    pub fn new(runs: Vec<TraceRun>, cost: CostPlan) -> Result<ReplayPlan, AppError> {
        for r in &runs {
            tracecost_replay::check_config(&r.trace, &r.config)?;
            tracecost_replay::check_model(
                &r.trace,
                &r.config,
                cost.pricing.lookup(r.config.model_for_trace(&r.trace))?,
            )?;
            for call in &r.trace.calls {
                cost.pricing
                    .lookup(r.config.model_for_call(&r.trace, call))?;
            }
        }
        Ok(ReplayPlan { runs, cost })
    }

    /// Each trace under `config` (or, when `None`, the default of
    /// [`default_replay_config`]), priced with `model` when given, checked
    /// against each trace ([`ReplayPlan::new`]).
    pub fn with_config(
        traces: Vec<Trace>,
        config: Option<&Config>,
        model: Option<&str>,
        cost: CostPlan,
    ) -> Result<ReplayPlan, AppError> {
        let runs = traces
            .into_iter()
            .map(|trace| {
                let mut config = match config {
                    Some(c) => c.clone(),
                    None => default_replay_config(&trace)?,
                };
                if let Some(m) = model {
                    config.model = Some(m.to_owned());
                }
                Ok(TraceRun {
                    trace,
                    config,
                    implied: Vec::new(),
                    kept: Vec::new(),
                })
            })
            .collect::<Result<Vec<_>, AppError>>()?;
        Self::new(runs, cost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CalibrationChoice;
    use crate::progress::Silent;

    fn traces() -> Vec<Trace> {
        tracecost_trace::Loader::new(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../traces/massage-gun.json"
        )))
        .load()
        .unwrap()
        .traces
    }

    fn cost() -> CostPlan {
        CostPlan::new(None, "chars:4", CalibrationChoice::Auto, false).unwrap()
    }

    fn small_grid() -> GridSpec {
        GridSpec {
            compactions: Some(vec!["off".into(), "ledger".into()]),
            thresholds: Some(vec![8000]),
            keep_lasts: Some(vec![2]),
            ..GridSpec::default()
        }
    }

    #[test]
    fn a_grid_and_the_configs_it_gives_sweep_the_same() {
        let quos = status_quos(&traces(), None).unwrap();
        let configs = grid_configs(&small_grid(), &[], &quos, &[ProviderKind::Anthropic]).unwrap();
        let by_grid =
            SweepPlan::from_grid(traces(), small_grid(), SweepOptions::default(), cost()).unwrap();
        assert_eq!(by_grid.configs(), configs);
        let by_list =
            SweepPlan::from_configs(traces(), configs, SweepOptions::default(), cost()).unwrap();
        let a = crate::sweep(&by_grid, &Silent).unwrap();
        let b = crate::sweep(&by_list, &Silent).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn a_default_grid_tries_what_the_fleets_providers_run() {
        use ProviderKind::{Anthropic, OpenAi};
        let quos: Vec<Config> = ["recorded+claude-code:ttl=recorded", "off+openai-auto"]
            .iter()
            .map(|c| c.parse().unwrap())
            .collect();
        let names = |grid: &GridSpec, providers: &[ProviderKind]| -> Vec<String> {
            grid_configs(grid, &[], &quos, providers)
                .unwrap()
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        let mixed = names(&GridSpec::default(), &[Anthropic, OpenAi]);
        let has = |all: &[String], c: &str| all.iter().any(|x| x == c);
        assert!(has(&mixed, "ledger:t=2000,k=1+openai-auto"));
        assert!(has(&mixed, "ledger:t=2000,k=1+tail:ttl=recorded"));
        assert!(has(
            &mixed,
            "clear-tool-uses:trigger=100000,keep=3+tail:ttl=recorded"
        ));
        // No one provider runs Anthropic's clearing under OpenAI's cache.
        assert!(
            !mixed
                .iter()
                .any(|c| c.starts_with("clear-tool-uses") && c.ends_with("openai-auto"))
        );
        // An OpenAI fleet: no Anthropic markers, no Anthropic clearing.
        let openai = names(&GridSpec::default(), &[OpenAi]);
        assert!(
            openai
                .iter()
                .all(|c| (c.ends_with("+none") || c.ends_with("+openai-auto"))
                    && !c.starts_with("clear-tool-uses"))
        );
        // What a user names is tried, and refused where it cannot apply.
        let named = GridSpec {
            compactions: Some(vec!["clear-tool-uses".into()]),
            caches: Some(vec!["openai-auto".into()]),
            ..GridSpec::default()
        };
        assert_eq!(
            names(&named, &[Anthropic, OpenAi]),
            ["clear-tool-uses:trigger=100000,keep=3+openai-auto"]
        );
        // A named cache policy no provider of the fleet runs stays (and is
        // refused), whatever compactions it pairs with.
        let tail = GridSpec {
            caches: Some(vec!["tail".into()]),
            ..GridSpec::default()
        };
        let on_openai = names(&tail, &[OpenAi]);
        assert!(
            on_openai.contains(&"off+tail:ttl=recorded".to_owned()),
            "{on_openai:?}"
        );
    }

    #[test]
    fn without_caches_the_grid_tries_each_status_quo_cache() {
        let quo: Config = "off+claude-code:ttl=5m".parse().unwrap();
        let with = grid_configs(
            &small_grid(),
            &[],
            std::slice::from_ref(&quo),
            &[ProviderKind::Anthropic],
        )
        .unwrap();
        let without = grid_configs(&small_grid(), &[], &[], &[ProviderKind::Anthropic]).unwrap();
        assert_eq!(with.len(), without.len() + 2);
        assert!(with.contains(&quo));
        let named = GridSpec {
            caches: Some(vec!["tail".into()]),
            ..small_grid()
        };
        assert_eq!(
            grid_configs(&named, &[], &[quo], &[ProviderKind::Anthropic])
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn the_grid_keeps_the_ttl_a_status_quo_takes_from_the_record() {
        let caches = |quo: &str, grid: &GridSpec| -> Vec<String> {
            let quo: Config = quo.parse().unwrap();
            let mut out: Vec<String> = grid_configs(grid, &[], &[quo], &[ProviderKind::Anthropic])
                .unwrap()
                .iter()
                .filter(|c| c.compaction == tracecost_policy::Compaction::Off)
                .map(|c| c.cache.to_string())
                .collect();
            out.dedup();
            out
        };
        let recorded = "off+claude-code:ttl=recorded";
        assert_eq!(
            caches(recorded, &small_grid()),
            [
                "none",
                "system:ttl=recorded",
                "native:manifest=cached,ttl=recorded",
                "tail:ttl=recorded",
                "claude-code:ttl=recorded"
            ]
        );
        // A status quo at a fixed TTL leaves the default; a TTL given wins.
        assert!(caches("off+claude-code:ttl=5m", &small_grid()).contains(&"tail:ttl=5m".into()));
        let given = GridSpec {
            ttl: Some(tracecost_engine::wire::Ttl::OneHour.into()),
            ..small_grid()
        };
        assert!(caches(recorded, &given).contains(&"tail:ttl=1h".into()));
    }

    #[test]
    fn explicit_configs_are_checked_and_deduplicated() {
        let off: Config = "off+none".parse().unwrap();
        let plan = SweepPlan::from_configs(
            traces(),
            vec![off.clone(), off.clone()],
            SweepOptions::default(),
            cost(),
        )
        .unwrap();
        assert_eq!(plan.configs(), vec![off]);
        let recorded: Config = "off+recorded".parse().unwrap();
        let e = SweepPlan::from_configs(traces(), vec![recorded], SweepOptions::default(), cost())
            .unwrap_err();
        assert!(e.to_string().contains("recorded none"), "{e}");
        let e = SweepPlan::from_configs(
            traces(),
            Vec::new(),
            SweepOptions {
                recall_cost_usd: Some(-1.0),
                ..SweepOptions::default()
            },
            cost(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("--recall-cost"), "{e}");
    }

    #[test]
    fn a_replay_without_config_runs_what_the_trace_recorded() {
        let t = traces();
        assert_eq!(
            default_replay_config(&t[0]).unwrap().to_string(),
            "off+none"
        );
        let plan = ReplayPlan::with_config(t, None, Some("claude-sonnet-4-5"), cost()).unwrap();
        assert_eq!(
            plan.runs[0].config.to_string(),
            "off+none@claude-sonnet-4-5"
        );
        let e = ReplayPlan::with_config(traces(), None, Some("no-such-model"), cost()).unwrap_err();
        assert!(e.to_string().contains("no-such-model"), "{e}");
    }
}

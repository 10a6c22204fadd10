//! Flags into plans: every trace loaded, every option resolved and checked
//! against every trace, before anything runs.

use std::path::{Path, PathBuf};

use super::args::{
    CheckArgs, CostArgs, FidelityArgs, GridArgs, ImportArgs, ImportFormat, InputArgs, PolicyArgs,
    RecallArgs, RecallFormatArg, ReplayArgs, ReportArgs, StabilityArgs, SweepArgs,
};
use crate::app::{
    AppError, CheckPlan, CostPlan, ImportPlan, InputOptions, RecallPlan, ReplayPlan, ReportPlan,
    StabilityPlan, SweepOptions, SweepPlan, TraceRun, UsagePlan,
};
use crate::engine::recall::{RecallFormat, RecallRequest};
use crate::policy::{Config, GridSpec, PolicyFlags, ResolvedPolicy};
use crate::trace::Trace;
use crate::trace::import::{ImportOptions, InputFormat};

/// Loads the traces of one input (a trace file, Claude Code data, a log,
/// or a folder of them), printing the loader's warnings.
pub(super) fn load(path: &Path) -> Result<Vec<Trace>, AppError> {
    load_all(&[path.to_path_buf()], &InputOptions::default())
}

/// Loads the traces of `paths`, printing the loader's warnings and one
/// line for the files passed over.
fn load_all(paths: &[PathBuf], opts: &InputOptions) -> Result<Vec<Trace>, AppError> {
    Ok(load_keeping_skipped(paths, opts)?.traces)
}

/// [`load_all`], keeping what the loader passed over.
fn load_keeping_skipped(
    paths: &[PathBuf],
    opts: &InputOptions,
) -> Result<crate::app::Loaded, AppError> {
    let bar = super::progress::Bar::new();
    let loaded = crate::app::InputLoader::new(paths, opts)
        .progress(&bar)
        .load();
    bar.finish();
    let loaded = loaded?;
    report_loaded(&loaded);
    Ok(loaded)
}

/// What the loader says of what it read: its warnings and notes, and what
/// it passed over.
fn report_loaded(loaded: &crate::app::Loaded) {
    for w in &loaded.warnings {
        eprintln!("tracecost: warning: {w}");
    }
    for n in &loaded.notes {
        eprintln!("tracecost: note: {n}");
    }
    for line in loaded.skipped.lines() {
        eprintln!("tracecost: {line}");
    }
}

impl InputArgs {
    fn options(&self) -> InputOptions {
        InputOptions {
            from: self.from.map(ImportFormat::format),
            skip_invalid: self.skip_invalid,
            join_compactions: self.join_compactions,
        }
    }
}

impl ImportFormat {
    fn format(self) -> InputFormat {
        match self {
            ImportFormat::ClaudeCode => InputFormat::ClaudeCode,
            ImportFormat::Anthropic => InputFormat::Anthropic,
            ImportFormat::Langchain => InputFormat::Langchain,
            ImportFormat::Openai => InputFormat::Openai,
            ImportFormat::Codex => InputFormat::Codex,
            ImportFormat::OpenaiResponses => InputFormat::OpenaiResponses,
            ImportFormat::Gemini => InputFormat::Gemini,
            ImportFormat::Bedrock => InputFormat::Bedrock,
            ImportFormat::Otel => InputFormat::Otel,
            ImportFormat::Langfuse => InputFormat::Langfuse,
            ImportFormat::OpenaiAgents => InputFormat::OpenaiAgents,
            ImportFormat::Langsmith => InputFormat::Langsmith,
        }
    }
}

impl CostArgs {
    fn plan(&self) -> Result<CostPlan, AppError> {
        let mut plan = CostPlan::new(
            self.pricing.as_deref(),
            &self.tokenizer,
            self.calibrate.0,
            self.batch,
        )?;
        plan.cache_scope = self.cache_scope.0;
        plan.strict_prices = self.strict_prices;
        Ok(plan)
    }
}

impl PolicyArgs {
    fn flags(&self) -> PolicyFlags {
        PolicyFlags {
            compaction: self.compaction.map(|c| c.0),
            threshold: self.threshold,
            keep_last: self.keep_last,
            trigger: self.trigger,
            keep: self.keep,
            clear_at_least: self.clear_at_least,
            exclude_tools: self.exclude_tools.clone(),
            clear_tool_inputs: self.clear_tool_inputs,
            cache: self.cache.map(|c| c.0),
            ttl: self.ttl.map(|t| t.0),
            manifest: self.manifest.map(|m| m.0),
        }
    }

    /// The config for `trace`: the `--config` string; else the trace's
    /// status quo with the parts the flags name changed (with none, the
    /// status quo itself).
    fn resolve(&self, trace: Trace, model: Option<&str>) -> Result<TraceRun, AppError> {
        let ResolvedPolicy {
            mut config,
            implied,
            kept,
        } = match &self.config {
            Some(s) => ResolvedPolicy {
                config: s.parse()?,
                implied: Vec::new(),
                kept: Vec::new(),
            },
            None if self.flags() == PolicyFlags::default() => ResolvedPolicy {
                config: crate::app::default_replay_config(&trace)?,
                implied: Vec::new(),
                kept: Vec::new(),
            },
            None => self
                .flags()
                .resolve_over(&crate::app::default_replay_config(&trace)?)?,
        };
        if let Some(m) = model {
            config.model = Some(m.to_owned());
        }
        Ok(TraceRun {
            trace,
            config,
            implied,
            kept,
        })
    }
}

fn runs(
    traces: Vec<Trace>,
    policy: &PolicyArgs,
    model: Option<&str>,
) -> Result<Vec<TraceRun>, AppError> {
    // The traces move into the plan: a large trace is never held twice.
    traces
        .into_iter()
        .map(|t| policy.resolve(t, model))
        .collect()
}

/// Once every trace is loaded and sifted, `traces_left` kept: the unpriced
/// calls as an error under `--strict-prices` or when nothing is left to
/// replay, else named once on stderr.
pub(super) fn finish_unpriced(cost: &CostPlan, traces_left: usize) -> Result<(), AppError> {
    cost.check_unpriced(traces_left)?;
    for line in cost.unpriced.lines() {
        eprintln!("tracecost: {line}");
    }
    Ok(())
}

/// `runs` without their unpriced calls (each run priced as its config's
/// model, if it names one), and a run left with none left out.
fn sift_runs(runs: Vec<TraceRun>, cost: &mut CostPlan) -> Vec<TraceRun> {
    use crate::app::unpriced::Sifted;
    runs.into_iter()
        .filter_map(|r| {
            let TraceRun {
                trace,
                config,
                implied,
                kept,
            } = r;
            match cost.sift_one(trace, config.model.as_deref()) {
                Sifted::Whole(trace) | Sifted::Trimmed(trace) => Some(TraceRun {
                    trace,
                    config,
                    implied,
                    kept,
                }),
                Sifted::SetAside => None,
            }
        })
        .collect()
}

/// Says once how calls without a start time are priced when their model's
/// price changed on some day: at its newest price.
fn note_undated(traces: &[Trace], pricing: &crate::cost::pricing::Pricing) {
    let mut models = std::collections::BTreeSet::new();
    let mut calls = 0usize;
    for t in traces {
        for c in t.calls.iter().filter(|c| c.start_ms.is_none()) {
            if let Ok(p) = pricing.lookup(t.model_of(c))
                && p.is_dated()
            {
                calls += 1;
                models.insert(p.id.as_str());
            }
        }
    }
    if calls > 0 {
        let models: Vec<&str> = models.into_iter().collect();
        eprintln!(
            "tracecost: note: {calls} calls have no start time and are priced at the newest price of {}, whose price changed over time",
            models.join(", ")
        );
    }
}

impl ReplayArgs {
    pub(super) fn plan(&self) -> Result<ReplayPlan, AppError> {
        let mut cost = self.cost.plan()?;
        let traces = load_all(&self.traces, &self.inputs.options())?;
        note_undated(&traces, &cost.pricing);
        let runs = runs(traces, &self.policy, self.model.as_deref())?;
        let runs = sift_runs(runs, &mut cost);
        finish_unpriced(&cost, runs.len())?;
        ReplayPlan::new(runs, cost)
    }
}

impl FidelityArgs {
    /// Each trace under its status quo.
    pub(super) fn plan(&self) -> Result<ReplayPlan, AppError> {
        let mut cost = self.cost.plan()?;
        let traces = load_all(&self.traces, &self.inputs.options())?;
        note_undated(&traces, &cost.pricing);
        let asked: Option<Config> = self.config.as_deref().map(str::parse).transpose()?;
        let mut runs = Vec::with_capacity(traces.len());
        for trace in traces {
            // A trace with nothing recorded to compare and no model to
            // price it as (a request body alone) is left out, and said so,
            // rather than failing the fleet's comparison.
            let priced = cost.pricing.lookup(&trace.model).is_ok()
                || asked.as_ref().is_some_and(|c| c.model.is_some());
            if !priced && trace.calls.iter().all(|c| c.usage.is_none()) {
                eprintln!(
                    "tracecost: {} recorded no usage and names no model to price it as (model `{}`): not compared",
                    crate::replay::trace_label(&trace),
                    trace.model
                );
                continue;
            }
            let config = match &asked {
                Some(c) => c.clone(),
                None => Config::status_quo(&trace)?,
            };
            runs.push(TraceRun {
                trace,
                config,
                implied: Vec::new(),
                kept: Vec::new(),
            });
        }
        let runs = sift_runs(runs, &mut cost);
        finish_unpriced(&cost, runs.len())?;
        ReplayPlan::new(runs, cost)
    }
}

impl StabilityArgs {
    pub(super) fn plan(&self) -> Result<StabilityPlan, AppError> {
        let tokenizer = crate::cost::tokens::parse_tokenizer(&self.tokenizer)
            .map_err(|e| AppError::Usage(e.to_string()))?;
        Ok(StabilityPlan {
            runs: runs(load(&self.trace)?, &self.policy, None)?,
            tokenizer_spec: self.tokenizer.clone(),
            tokenizer,
        })
    }
}

impl GridArgs {
    pub(super) fn spec(&self) -> GridSpec {
        GridSpec {
            compactions: self.compaction.clone(),
            thresholds: self.threshold.clone(),
            keep_lasts: self.keep_last.clone(),
            caches: self.cache.clone(),
            ttl: self.ttl.map(|t| t.0),
        }
    }
}

impl GridArgs {
    /// The configs `--config` names, parsed (empty: sweep the grid).
    fn configs(&self) -> Result<Vec<Config>, AppError> {
        Ok(self
            .configs
            .iter()
            .map(|c| c.parse::<Config>())
            .collect::<Result<_, _>>()?)
    }
}

fn sweep_options(grid_args: &GridArgs, models: Vec<String>) -> Result<SweepOptions, AppError> {
    Ok(SweepOptions {
        models,
        baseline: grid_args.baseline.as_deref().map(str::parse).transpose()?,
        recall_cost_usd: grid_args.recall_cost,
    })
}

fn sweep_plan(
    traces: Vec<Trace>,
    grid_args: &GridArgs,
    models: Vec<String>,
    mut cost: CostPlan,
) -> Result<SweepPlan, AppError> {
    let traces = cost.sift(traces, models.first().map(String::as_str));
    finish_unpriced(&cost, traces.len())?;
    let options = sweep_options(grid_args, models)?;
    match grid_args.configs()? {
        configs if configs.is_empty() => {
            SweepPlan::from_grid(traces, grid_args.spec(), options, cost)
        }
        configs => SweepPlan::from_configs(traces, configs, options, cost),
    }
}

impl SweepArgs {
    pub(super) fn plan(&self) -> Result<SweepPlan, AppError> {
        let cost = self.cost.plan()?;
        let traces = load_all(&self.traces, &self.inputs.options())?;
        sweep_plan(traces, &self.grid, self.model.clone(), cost)
    }
}

impl ReportArgs {
    /// The report's plan; with `cache`, lines of JSON Lines inputs read
    /// before are not parsed again ([`crate::app::fleet_cache::load_stored`]).
    pub(super) fn plan(
        &self,
        cache: Option<&crate::app::fleet_cache::FleetCache>,
    ) -> Result<ReportPlan, AppError> {
        // Before anything is read: a report that cannot be written, or
        // would replace what is not its own, is refused at once.
        let inputs = report_inputs(&self.inputs)?;
        super::output::check_report_out(&self.out, &inputs)?;
        let mut cost = self.cost.plan()?;
        let models: Vec<String> = self.model.iter().cloned().collect();
        if self.in_memory {
            let loaded = load_keeping_skipped(&inputs, &self.read.options())?;
            return Ok(ReportPlan {
                unread: loaded.skipped.unread_lines(),
                sweep: sweep_plan(loaded.traces, &self.grid, models, cost)?,
            });
        }
        // Each trace goes to a temporary file as it is read; the plan is
        // made of their outlines.
        let bar = super::progress::Bar::new();
        let loaded = crate::app::fleet_cache::load_stored(
            &inputs,
            &self.read.options(),
            &bar,
            cache,
            &mut cost,
            models.first().map(String::as_str),
        );
        bar.finish();
        let (store, outlines, loaded) = loaded?;
        report_loaded(&loaded);
        finish_unpriced(&cost, outlines.len())?;
        let options = sweep_options(&self.grid, models)?;
        let sweep = match self.grid.configs()? {
            configs if configs.is_empty() => {
                SweepPlan::from_grid_stored(outlines, store, self.grid.spec(), options, cost)?
            }
            configs => SweepPlan::from_configs_stored(outlines, store, configs, options, cost)?,
        };
        Ok(ReportPlan {
            sweep,
            unread: loaded.skipped.unread_lines(),
        })
    }
}

impl CheckArgs {
    pub(super) fn plan(&self) -> Result<CheckPlan, AppError> {
        let mut plan = self.plan_entries()?;
        plan.cost.strict_prices = self.strict_prices;
        finish_unpriced(&plan.cost, plan.entries.len())?;
        Ok(plan)
    }

    fn plan_entries(&self) -> Result<CheckPlan, AppError> {
        CheckPlan::from_file(
            &self.baseline,
            self.tolerance,
            self.update,
            self.pricing.as_deref(),
            &mut |p| {
                // A baseline pins traces: a folder it names must be Claude
                // Code data, not a folder whose files may come and go.
                if p.is_dir() && !crate::trace::import::detect::is_claude_code_folder(p) {
                    return Err(AppError::Usage(format!(
                        "{}: is a directory, expected a trace file, a log or a Claude Code folder",
                        p.display()
                    )));
                }
                load(p)
            },
        )
    }
}

/// What a report reads when no PATH is named: the bundled `traces/` folder
/// where there is one (a checkout of tracecost), else the Claude Code and
/// Codex homes `usage` reads (said on stderr, since the user named none),
/// else a one-line error saying what to pass.
fn report_inputs(named: &[PathBuf]) -> Result<Vec<PathBuf>, AppError> {
    if !named.is_empty() {
        return Ok(named.to_vec());
    }
    let bundled = PathBuf::from("traces");
    if bundled.is_dir() {
        return Ok(vec![bundled]);
    }
    let homes: Vec<PathBuf> = claude_roots().into_iter().chain(codex_root()).collect();
    if homes.is_empty() {
        return Err(AppError::Usage(
            "no PATH given, no traces/ folder here and no Claude Code or Codex sessions in ~/.claude or ~/.codex: \
             pass what to read, e.g. `tracecost report ~/.claude` or `tracecost report my-traces/`"
                .into(),
        ));
    }
    let names: Vec<String> = homes.iter().map(|p| p.display().to_string()).collect();
    eprintln!("tracecost: no PATH given: reading {}", names.join(", "));
    Ok(homes)
}

/// The default Claude Code roots: `CLAUDE_CONFIG_DIR` (comma-separated),
/// else `~/.claude` and `~/.config/claude` where they exist.
fn claude_roots() -> Vec<PathBuf> {
    if let Some(v) = std::env::var_os("CLAUDE_CONFIG_DIR") {
        let v = v.to_string_lossy().into_owned();
        return v
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(PathBuf::from)
            .collect();
    }
    let Some(home) = std::env::var_os("HOME") else {
        return Vec::new();
    };
    let home = PathBuf::from(home);
    [home.join(".claude"), home.join(".config/claude")]
        .into_iter()
        .filter(|p| p.is_dir())
        .collect()
}

/// The default Codex home: `CODEX_HOME`, else `~/.codex`, when it holds
/// rollouts (so that a machine without Codex sessions reads what it
/// always did).
fn codex_root() -> Option<PathBuf> {
    let home = match std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        Some(v) => PathBuf::from(v),
        None => PathBuf::from(std::env::var_os("HOME")?).join(".codex"),
    };
    crate::trace::import::detect::is_codex_folder(&home).then_some(home)
}

pub(super) fn usage_plan(paths: &[PathBuf], pricing: Option<&Path>) -> Result<UsagePlan, AppError> {
    Ok(UsagePlan {
        paths: if paths.is_empty() {
            claude_roots().into_iter().chain(codex_root()).collect()
        } else {
            paths.to_vec()
        },
        pricing: pricing_table(pricing)?,
    })
}

pub(super) fn pricing_table(
    file: Option<&Path>,
) -> Result<crate::cost::pricing::Pricing, AppError> {
    Ok(match file {
        Some(p) => crate::cost::pricing::Pricing::with_file(p)?,
        None => crate::cost::pricing::Pricing::builtin(),
    })
}

impl ImportArgs {
    pub(super) fn plan(&self) -> Result<ImportPlan, AppError> {
        super::output::refuse_output_among_inputs(&self.output, &self.inputs)?;
        Ok(ImportPlan {
            format: self.from.map(ImportFormat::format),
            inputs: self.inputs.clone(),
            options: ImportOptions {
                skip_invalid: self.skip_invalid,
                default_model: self.model.clone(),
                join_compactions: self.join_compactions,
            },
        })
    }
}

impl RecallArgs {
    pub(super) fn plan(&self) -> Result<RecallPlan, AppError> {
        Ok(RecallPlan {
            traces: load(&self.trace)?,
            id: self.id.clone(),
            request: RecallRequest {
                format: self.format.map(|f| match f {
                    RecallFormatArg::Summary => RecallFormat::Summary,
                    RecallFormatArg::Full => RecallFormat::Full,
                }),
                query: self.query.clone(),
                offset: self.offset,
                // With a query the tool reads max_chars as the context of
                // each match, which bounds nothing: --context says that,
                // and --max-chars bounds the answer instead.
                max_chars: match self.query {
                    Some(_) => self.context,
                    None => self.max_chars,
                },
                json_path: self.json_path.clone(),
            },
            ledger_dir: self.ledger.clone(),
            answer_chars: self.query.as_ref().and(self.max_chars),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum as _;

    /// `--from` and the library (which the Python package reads) name the
    /// same formats the same way.
    #[test]
    fn from_takes_every_format_by_its_library_name() {
        let named: Vec<(String, InputFormat)> = ImportFormat::value_variants()
            .iter()
            .map(|v| {
                let name = v.to_possible_value().unwrap().get_name().to_owned();
                (name, v.format())
            })
            .collect();
        let library: Vec<(String, InputFormat)> = InputFormat::ALL
            .iter()
            .map(|f| (f.name().to_owned(), *f))
            .collect();
        assert_eq!(named, library);
    }
}

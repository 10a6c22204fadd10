//! Subcommands: argument definitions and how each becomes a plan and runs.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::CliError;
use crate::cost::pricing::Pricing;
use crate::cost::tokens::{TokenMemo, parse_tokenizer};
use crate::engine::ledger::{
    DurableLedger, InMemoryLedger, ToolResultLedger, not_found, record_result,
};
use crate::engine::message::{BlockKind, Message};
use crate::engine::recall::{RecallFormat, RecallRequest};
use crate::policy::{Compaction, Config};
use crate::progress::{Progress, Unit};
use crate::replay::{PreparedTrace, ReplayOptions, replay};
use crate::report::export::{Exportable, Format};
use crate::report::replay_view::{ReplayOutput, ReplayView, Savings};
use crate::trace::{LoadedTraces, Trace};

/// What agent conversations really cost, and which tool-result compaction
/// and prompt-cache policy makes them cheapest.
#[derive(Debug, Parser)]
#[command(name = "tracecost", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Replay a trace under one policy: per-call tokens and dollars.
    #[command(
        after_help = "Examples:\n  tracecost replay traces/massage-gun.json\n  tracecost replay traces/massage-gun.json --compaction ledger --threshold 8000 --keep-last 2 --cache native\n  tracecost replay trace.json --config 'ledger:t=8000,k=2+tail:ttl=1h' --format json"
    )]
    Replay(ReplayArgs),
    /// Replay traces under a grid of policies, ranked by cost, with recall risk.
    #[command(
        after_help = "Examples:\n  tracecost sweep traces/massage-gun.json --threshold 2000,8000,32000 --keep-last 0,2 --cache none,tail,native\n  tracecost sweep traces/*.json --compaction off,ledger,clear-tool-uses --cache tail --model claude-opus-4-1,claude-sonnet-4-5"
    )]
    Sweep(SweepArgs),
    /// Check that stubs and prefixes stay byte-stable from call to call.
    #[command(
        after_help = "Examples:\n  tracecost stability traces/massage-gun.json --compaction ledger --threshold 8000 --keep-last 2\n  tracecost stability trace.json --config 'ledger:t=2000,k=0+tail' --processes 3"
    )]
    Stability(StabilityArgs),
    /// Write the report (HTML, Markdown, JSON, CSV, charts) for a set of traces.
    #[command(
        after_help = "Examples:\n  tracecost report                      # every trace in traces/, into reports/latest/\n  tracecost report traces/massage-gun.json --out reports/massage-gun\n  tracecost report my-traces/ --cache tail,native --threshold 4000,16000"
    )]
    Report(ReportArgs),
    /// Fail when traces got more expensive than a baseline says (for CI).
    #[command(
        after_help = "Exit codes: 0 every (trace, config) within tolerance; 1 a regression; 2 bad input.\nExamples:\n  tracecost check --baseline ci/baseline.json\n  tracecost check --baseline ci/baseline.json --tolerance 1\n  tracecost check --baseline ci/baseline.json --update"
    )]
    Check(CheckArgs),
    /// Price the usage Claude Code recorded in its transcripts (ccusage-compatible).
    #[command(
        after_help = "With no PATH, reads the roots in CLAUDE_CONFIG_DIR (comma-separated), else ~/.claude and ~/.config/claude.\nExamples:\n  tracecost usage\n  tracecost usage ~/.claude --json"
    )]
    Usage(UsageArgs),
    /// Generate a bundled reference trace.
    #[command(
        after_help = "Examples:\n  tracecost gen massage-gun -o traces/massage-gun.json\n  tracecost gen session --calls 500 --seed 7 -o /tmp/session.json"
    )]
    Gen(GenArgs),
    /// Print the built-in price table (or one extended with --pricing).
    Models(ModelsArgs),
    /// Convert logs into canonical traces.
    #[command(
        after_help = "Examples:\n  tracecost import --from claude-code ~/.claude -o sessions.json\n  tracecost import --from anthropic proxy-log.jsonl -o trace.json\n  tracecost import --from openai --skip-invalid calls.jsonl -o trace.json"
    )]
    Import(ImportArgs),
    /// Print what the recall_tool_result tool would return for a tool result.
    #[command(
        after_help = "Examples:\n  tracecost recall traces/massage-gun.json toolu_03 --query B07\n  tracecost recall trace.json tm_1a2b3c4d5e6f7a8b --json-path products.0.stats --ledger .ledger"
    )]
    Recall(RecallArgs),
}

/// Policy flags shared by replay, sweep cells, stability.
#[derive(Debug, Args, Clone)]
pub(crate) struct PolicyArgs {
    /// The whole config as one string, e.g. ledger:t=8000,k=2+native:manifest=cached,ttl=5m.
    #[arg(long, conflicts_with_all = ["compaction", "threshold", "keep_last", "cache", "ttl", "manifest", "trigger", "keep", "clear_at_least", "exclude_tools", "clear_tool_inputs"])]
    config: Option<String>,
    /// Compaction policy.
    #[arg(long, value_parser = ["off", "ledger", "clear-tool-uses", "langchain-clear"])]
    compaction: Option<String>,
    /// Ledger: compact results longer than this many characters [default: 8000].
    #[arg(long)]
    threshold: Option<u64>,
    /// Ledger: never compact the last N tool results [default: 2].
    #[arg(long)]
    keep_last: Option<usize>,
    /// Cache policy [default: recorded when the trace carries markers, else none].
    #[arg(long, value_parser = ["none", "system", "native", "tail", "recorded", "claude-code"])]
    cache: Option<String>,
    /// TTL of the markers.
    #[arg(long, value_parser = ["5m", "1h"])]
    ttl: Option<String>,
    /// Native cache: tool manifest cached (marked) or volatile.
    #[arg(long, value_parser = ["cached", "volatile"])]
    manifest: Option<String>,
    /// Peers: clear only above this many input tokens [default: 100000].
    #[arg(long)]
    trigger: Option<u64>,
    /// Peers: keep the last N tool uses [default: 3].
    #[arg(long)]
    keep: Option<usize>,
    /// Peers: minimum tokens to clear.
    #[arg(long)]
    clear_at_least: Option<u64>,
    /// Peers: tools whose results are never cleared (repeatable).
    #[arg(long = "exclude-tool")]
    exclude_tools: Vec<String>,
    /// Peers: also clear the tool_use inputs.
    #[arg(long)]
    clear_tool_inputs: bool,
}

impl PolicyArgs {
    /// The config these flags describe for `trace` (its default cache
    /// policy depends on whether it recorded markers).
    pub(crate) fn config_for(
        &self,
        trace: &Trace,
        model: Option<&str>,
    ) -> Result<Config, CliError> {
        let mut config: Config = match &self.config {
            Some(s) => s.parse()?,
            None => self.flags_string(trace).parse()?,
        };
        if let Some(m) = model {
            config.model = Some(m.to_owned());
        }
        Ok(config)
    }

    fn flags_string(&self, trace: &Trace) -> String {
        let compaction = match self.compaction.as_deref().unwrap_or("off") {
            "ledger" => format!(
                "ledger:t={},k={}",
                self.threshold.unwrap_or(8000),
                self.keep_last.unwrap_or(2)
            ),
            peer @ ("clear-tool-uses" | "langchain-clear") => {
                let mut p = vec![
                    format!("trigger={}", self.trigger.unwrap_or(100_000)),
                    format!("keep={}", self.keep.unwrap_or(3)),
                ];
                if let Some(n) = self.clear_at_least {
                    p.push(format!("at-least={n}"));
                }
                if !self.exclude_tools.is_empty() {
                    p.push(format!("exclude={}", self.exclude_tools.join("|")));
                }
                if self.clear_tool_inputs {
                    p.push("inputs=true".into());
                }
                format!("{peer}:{}", p.join(","))
            }
            other => other.to_owned(),
        };
        let default_cache = if trace.has_markers() {
            "recorded"
        } else {
            "none"
        };
        let cache = match self.cache.as_deref().unwrap_or(default_cache) {
            "native" => format!(
                "native:manifest={},ttl={}",
                self.manifest.as_deref().unwrap_or("cached"),
                self.ttl()
            ),
            k @ ("system" | "tail" | "claude-code") => format!("{k}:ttl={}", self.ttl()),
            other => other.to_owned(),
        };
        format!("{compaction}+{cache}")
    }

    fn ttl(&self) -> &str {
        self.ttl.as_deref().unwrap_or("5m")
    }
}

/// Cost-model flags shared by every command that prices.
#[derive(Debug, Args, Clone)]
pub(crate) struct CostArgs {
    /// Price with this model instead of the trace's.
    #[arg(long)]
    model: Option<String>,
    /// Extra or overriding prices: tracecost's JSON or LiteLLM's model_prices_and_context_window.json.
    #[arg(long)]
    pricing: Option<PathBuf>,
    /// Tokenizer: o200k_base, cl100k_base or chars:R (R characters per token).
    #[arg(long, default_value = "o200k_base")]
    tokenizer: String,
    /// Fit a per-trace calibration factor on recorded usage (auto) or not (off).
    #[arg(long, value_parser = ["auto", "off"], default_value = "auto")]
    calibrate: String,
    /// Apply the Batch API discount (50%).
    #[arg(long)]
    batch: bool,
}

impl CostArgs {
    pub(crate) fn pricing(&self) -> Result<Pricing, CliError> {
        match &self.pricing {
            Some(p) => Ok(Pricing::with_file(p)?),
            None => Ok(Pricing::builtin()),
        }
    }

    pub(crate) fn memo(&self) -> Result<TokenMemo, CliError> {
        let t = parse_tokenizer(&self.tokenizer).map_err(|e| CliError::Usage(e.to_string()))?;
        Ok(TokenMemo::new(t))
    }
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum OutFormat {
    Table,
    Json,
    Csv,
    Md,
}

impl From<OutFormat> for Format {
    fn from(f: OutFormat) -> Self {
        match f {
            OutFormat::Table => Format::Table,
            OutFormat::Json => Format::Json,
            OutFormat::Csv => Format::Csv,
            OutFormat::Md => Format::Markdown,
        }
    }
}

#[derive(Debug, Args)]
struct ReplayArgs {
    /// The trace file (every trace in it is replayed).
    trace: PathBuf,
    #[command(flatten)]
    policy: PolicyArgs,
    #[command(flatten)]
    cost: CostArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: OutFormat,
}

/// The grid flags shared by sweep and report.
#[derive(Debug, Args, Clone)]
pub(crate) struct GridArgs {
    /// Compaction policies (comma-separated): off, ledger, clear-tool-uses, langchain-clear, or full strings like clear-tool-uses:trigger=50000.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "off,ledger,clear-tool-uses,langchain-clear"
    )]
    compaction: Vec<String>,
    /// Ledger thresholds in characters (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "2000,8000,32000")]
    threshold: Vec<u64>,
    /// Ledger keep-last values (comma-separated). 0 compacts a large result before the model has read it.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    keep_last: Vec<usize>,
    /// Cache policies (comma-separated): none, system, native, tail, recorded, or full strings like tail:ttl=1h.
    #[arg(long, value_delimiter = ',', default_value = "none,system,native,tail")]
    cache: Vec<String>,
    /// TTL for cache policies given without one.
    #[arg(long, value_parser = ["5m", "1h"], default_value = "5m")]
    ttl: String,
    /// Price each recall an assistant turn would have needed at this many USD (default: one extra round trip at the config's average call cost).
    #[arg(long)]
    recall_cost: Option<f64>,
}

#[derive(Debug, Args)]
struct SweepArgs {
    /// Trace files.
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    #[command(flatten)]
    grid: GridArgs,
    /// Models to price with (comma-separated); default the trace's.
    #[arg(long, value_delimiter = ',')]
    model: Vec<String>,
    #[command(flatten)]
    cost: CostCommon,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: OutFormat,
}

#[derive(Debug, Args)]
struct ReportArgs {
    /// Trace files or directories of them [default: traces/].
    inputs: Vec<PathBuf>,
    /// Where to write the report.
    #[arg(long, default_value = "reports/latest")]
    out: PathBuf,
    #[command(flatten)]
    grid: GridArgs,
    /// Price with this model instead of each trace's.
    #[arg(long)]
    model: Option<String>,
    #[command(flatten)]
    cost: CostCommon,
}

/// The cost flags of CostArgs without --model (sweep takes a list).
#[derive(Debug, Args, Clone)]
pub(crate) struct CostCommon {
    /// Extra or overriding prices: tracecost's JSON or LiteLLM's model_prices_and_context_window.json.
    #[arg(long)]
    pricing: Option<PathBuf>,
    /// Tokenizer: o200k_base, cl100k_base or chars:R.
    #[arg(long, default_value = "o200k_base")]
    tokenizer: String,
    /// Fit a per-trace calibration factor on recorded usage (auto) or not (off).
    #[arg(long, value_parser = ["auto", "off"], default_value = "auto")]
    calibrate: String,
    /// Apply the Batch API discount (50%).
    #[arg(long)]
    batch: bool,
}

impl CostCommon {
    fn as_cost_args(&self) -> CostArgs {
        CostArgs {
            model: None,
            pricing: self.pricing.clone(),
            tokenizer: self.tokenizer.clone(),
            calibrate: self.calibrate.clone(),
            batch: self.batch,
        }
    }
}

#[derive(Debug, Args)]
struct StabilityArgs {
    /// The trace file.
    trace: PathBuf,
    #[command(flatten)]
    policy: PolicyArgs,
    /// Also run the check in N fresh processes and compare their stub bytes.
    #[arg(long, default_value_t = 2)]
    processes: usize,
    /// Print only the digest of the stub bytes (used by --processes).
    #[arg(long, hide = true)]
    digest_only: bool,
    /// Tokenizer for the surviving-prefix figures.
    #[arg(long, default_value = "o200k_base")]
    tokenizer: String,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// The baseline file (tracecost.baseline/v1).
    #[arg(long)]
    baseline: PathBuf,
    /// Allowed increase, in percent of the expected cost or input tokens.
    #[arg(long)]
    tolerance: Option<f64>,
    /// Rewrite the baseline with the current figures instead of checking.
    #[arg(long)]
    update: bool,
    /// Extra or overriding prices.
    #[arg(long)]
    pricing: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct UsageArgs {
    /// Claude config roots, projects folders or session files.
    paths: Vec<PathBuf>,
    /// ccusage's session JSON.
    #[arg(long)]
    json: bool,
    /// Extra or overriding prices.
    #[arg(long)]
    pricing: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct GenArgs {
    /// massage-gun or session.
    name: String,
    /// Session: number of calls [default: 200].
    #[arg(long)]
    calls: Option<usize>,
    /// Session: random seed [default: 1].
    #[arg(long)]
    seed: Option<u64>,
    /// Output file (stdout when absent).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct ModelsArgs {
    /// Extra or overriding prices (tracecost JSON or LiteLLM's file).
    #[arg(long)]
    pricing: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    format: OutFormat,
}

#[derive(Debug, Args)]
struct ImportArgs {
    /// The input format.
    #[arg(long = "from", value_enum)]
    from: ImportFormat,
    /// Input files or directories.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Where to write the traces (one file; several traces share it).
    #[arg(short, long)]
    output: PathBuf,
    /// Skip lines that are not valid JSON instead of failing.
    #[arg(long)]
    skip_invalid: bool,
    /// Model to record when the input does not say.
    #[arg(long)]
    model: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ImportFormat {
    ClaudeCode,
    Anthropic,
    Langchain,
    Openai,
}

#[derive(Debug, Args)]
struct RecallArgs {
    /// The trace whose tool results are recorded.
    trace: PathBuf,
    /// A mem_id (tm_…) or a tool_use id.
    id: String,
    /// summary (the stub) or full (the payload).
    #[arg(long, value_enum)]
    format: Option<FormatArg>,
    /// Case-sensitive text to find.
    #[arg(long)]
    query: Option<String>,
    /// Start, in characters.
    #[arg(long)]
    offset: Option<u64>,
    /// How many characters to return.
    #[arg(long)]
    max_chars: Option<u64>,
    /// Dotted path into a JSON payload, e.g. products.3.stats.current.
    #[arg(long)]
    json_path: Option<String>,
    /// Record into (and recall from) a durable ledger in this directory.
    #[arg(long)]
    ledger: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum FormatArg {
    Summary,
    Full,
}

/// Runs a parsed command line; returns the exit code.
pub fn execute(cli: Cli) -> Result<u8, CliError> {
    match cli.command {
        Command::Replay(a) => replay_cmd(a),
        Command::Sweep(a) => sweep_cmd(a),
        Command::Stability(a) => stability_cmd(a),
        Command::Report(a) => report_cmd(a),
        Command::Check(a) => check_cmd(a),
        Command::Usage(a) => usage_cmd(a),
        Command::Gen(a) => gen_cmd(a),
        Command::Models(a) => models_cmd(a),
        Command::Import(a) => import(a),
        Command::Recall(a) => recall(a),
    }
}

fn replay_cmd(a: ReplayArgs) -> Result<u8, CliError> {
    let loaded = load(&a.trace)?;
    let pricing = a.cost.pricing()?;
    let memo = a.cost.memo()?;
    let bar = super::progress::Bar::new();
    let opts = ReplayOptions {
        batch: a.cost.batch,
        progress: Some(&bar),
    };
    // Build every plan before running anything: a bad flag for the second
    // trace must not come after output for the first.
    let mut plans = Vec::new();
    for t in &loaded.traces {
        let config = a.policy.config_for(t, a.cost.model.as_deref())?;
        crate::replay::check_config(t, &config).map_err(CliError::from)?;
        let model = config.model.clone().unwrap_or_else(|| t.model.clone());
        let price = pricing.lookup(&model)?;
        plans.push((t, config, price));
    }
    // One step per call replayed, the reference run without compaction
    // included.
    let runs = |c: &Config| {
        if c.compaction == Compaction::Off {
            1
        } else {
            2
        }
    };
    let steps: usize = plans.iter().map(|(t, c, _)| t.calls.len() * runs(c)).sum();
    bar.start("replay", steps as u64, Unit::Items);
    let mut outputs = Vec::new();
    for (t, config, price) in plans {
        let prepared = PreparedTrace::new(t, &memo, price, a.cost.calibrate == "auto");
        let result = replay(&prepared, &config, &pricing, &memo, opts)?;
        let reference = match config.compaction {
            Compaction::Off => None,
            _ => {
                let off = Config {
                    compaction: Compaction::Off,
                    ..config.clone()
                };
                Some(replay(&prepared, &off, &pricing, &memo, opts)?.totals)
            }
        };
        let savings = Savings::of(&result.totals, reference.as_ref());
        outputs.push(ReplayOutput { result, savings });
    }
    bar.finish();
    print_view(&ReplayView(&outputs), a.format.into());
    Ok(0)
}

/// Builds the grid of a sweep from its flags.
fn grid_from(a: &GridArgs, model_list: &[String]) -> Result<crate::replay::sweep::Grid, CliError> {
    if let Some(c) = a.recall_cost
        && !(c.is_finite() && c >= 0.0)
    {
        return Err(CliError::Usage(format!(
            "--recall-cost must be a non-negative number of USD, got {c}"
        )));
    }
    let mut compactions = Vec::new();
    for c in &a.compaction {
        let spec = c.trim();
        if spec == "ledger" {
            for t in &a.threshold {
                for k in &a.keep_last {
                    compactions.push(Compaction::Ledger {
                        threshold: *t,
                        keep_last: *k,
                    });
                }
            }
        } else {
            compactions.push(format!("{spec}+none").parse::<Config>()?.compaction);
        }
    }
    let mut caches = Vec::new();
    for c in &a.cache {
        let spec = c.trim();
        let full = if matches!(spec, "system" | "tail" | "claude-code") {
            format!("{spec}:ttl={}", a.ttl)
        } else if spec == "native" {
            format!("native:ttl={}", a.ttl)
        } else {
            spec.to_owned()
        };
        caches.push(format!("off+{full}").parse::<Config>()?.cache);
    }
    let models = if model_list.is_empty() {
        vec![None]
    } else {
        model_list.iter().map(|m| Some(m.clone())).collect()
    };
    Ok(crate::replay::sweep::Grid {
        compactions,
        caches,
        models,
    })
}

fn sweep_cmd(a: SweepArgs) -> Result<u8, CliError> {
    let cost = a.cost.as_cost_args();
    let pricing = cost.pricing()?;
    let memo = cost.memo()?;
    let grid = grid_from(&a.grid, &a.model)?;
    let configs = grid.configs();
    let mut loaded = Vec::new();
    for p in &a.traces {
        loaded.extend(load(p)?.traces);
    }
    let sweeps = run_sweeps(
        &loaded,
        &configs,
        &cost,
        &pricing,
        &memo,
        a.grid.recall_cost,
    )?;
    print_view(
        &crate::report::sweep_view::SweepView { sweeps: &sweeps },
        a.format.into(),
    );
    Ok(0)
}

/// Checks every config against every trace, then sweeps each trace.
fn run_sweeps(
    loaded: &[Trace],
    configs: &[Config],
    cost: &CostArgs,
    pricing: &Pricing,
    memo: &TokenMemo,
    recall_cost: Option<f64>,
) -> Result<Vec<crate::replay::sweep::TraceSweep>, CliError> {
    // Plan: every config must apply to every trace before anything runs.
    for t in loaded {
        for c in configs {
            crate::replay::check_config(t, c)?;
            pricing.lookup(c.model.as_deref().unwrap_or(&t.model))?;
        }
    }
    let progress = super::progress::Bar::new();
    progress.start("sweep", (configs.len() * loaded.len()) as u64, Unit::Items);
    let mut sweeps = Vec::new();
    for t in loaded {
        let price = pricing.lookup(cost.model.as_deref().unwrap_or(&t.model))?;
        let prepared = PreparedTrace::new(t, memo, price, cost.calibrate == "auto");
        let baseline = crate::replay::sweep::baseline_for(t, cost.model.clone());
        sweeps.push(crate::replay::sweep::sweep_trace(
            &prepared,
            configs,
            &baseline,
            pricing,
            memo,
            ReplayOptions {
                batch: cost.batch,
                progress: None,
            },
            recall_cost,
            &|| progress.advance(1),
        )?);
    }
    progress.finish();
    Ok(sweeps)
}

/// Trace files named on the command line; directories give their `*.json`
/// files in name order.
fn trace_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, CliError> {
    let defaults = [PathBuf::from("traces")];
    let inputs = if inputs.is_empty() {
        &defaults[..]
    } else {
        inputs
    };
    let mut out = Vec::new();
    for p in inputs {
        if p.is_dir() {
            let rd = std::fs::read_dir(p).map_err(|e| {
                CliError::Usage(format!("{}: cannot read directory: {e}", p.display()))
            })?;
            let mut files: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "json") && f.is_file())
                .collect();
            files.sort();
            if files.is_empty() {
                return Err(CliError::Usage(format!(
                    "{}: no *.json trace files in this directory",
                    p.display()
                )));
            }
            out.extend(files);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn report_cmd(a: ReportArgs) -> Result<u8, CliError> {
    use crate::replay::stability::{RunSource, check};
    use crate::report::build::{Assumptions, TraceReport, build};
    let mut cost = a.cost.as_cost_args();
    cost.model = a.model.clone();
    let grid = grid_from(&a.grid, &a.model.iter().cloned().collect::<Vec<_>>())?;
    let configs = grid.configs();
    let mut loaded = Vec::new();
    for p in trace_files(&a.inputs)? {
        loaded.extend(load(&p)?.traces);
    }
    let pricing = cost.pricing()?;
    let memo = cost.memo()?;
    let sweeps = run_sweeps(
        &loaded,
        &configs,
        &cost,
        &pricing,
        &memo,
        a.grid.recall_cost,
    )?;
    let mut reports = Vec::new();
    for (t, sweep) in loaded.iter().zip(sweeps) {
        let rec: Config = sweep.rows[sweep.recommended].result.config.parse()?;
        let counter = MemoTokens(&memo);
        let mut source = RunSource {
            run: crate::policy::CompactionRun::new(&rec.compaction),
            tokens: &counter,
            fixed_tokens: 0,
            progress: None,
        };
        let stability = check(t, &mut source, &counter)?;
        reports.push(TraceReport { sweep, stability });
    }
    let prices = match &cost.pricing {
        Some(p) => format!(
            "built-in Anthropic prices (as published, late 2026) overridden by {}",
            p.display()
        ),
        None => "built-in Anthropic prices (as published, late 2026)".to_owned(),
    };
    let assumptions = Assumptions {
        prices,
        tokenizer: cost.tokenizer.clone(),
        calibration: cost.calibrate == "auto",
        batch: cost.batch,
        grid: format!(
            "compaction {} (ledger thresholds {:?} chars × keep-last {:?}); cache {} with TTL {}",
            a.grid.compaction.join(", "),
            a.grid.threshold,
            a.grid.keep_last,
            a.grid.cache.join(", "),
            a.grid.ttl
        ),
    };
    let files =
        build(&reports, &assumptions).map_err(|e| CliError::Usage(format!("chart: {e}")))?;
    super::output::write_dir_atomic(&a.out, &files)?;
    eprintln!(
        "tracecost: wrote {} file(s) to {}",
        files.len(),
        a.out.display()
    );
    Ok(0)
}

fn stability_cmd(a: StabilityArgs) -> Result<u8, CliError> {
    use crate::replay::stability::{RunSource, check};
    let loaded = load(&a.trace)?;
    let memo =
        TokenMemo::new(parse_tokenizer(&a.tokenizer).map_err(|e| CliError::Usage(e.to_string()))?);
    let mut plans = Vec::new();
    for t in &loaded.traces {
        let config = a.policy.config_for(t, None)?;
        crate::replay::check_config(t, &config)?;
        plans.push((t, config));
    }
    let mut failed = false;
    let mut out = String::new();
    for (t, config) in plans {
        let counter = MemoTokens(&memo);
        let bar = super::progress::Bar::new();
        bar.start("stability", t.calls.len() as u64, Unit::Items);
        let mut source = RunSource {
            run: crate::policy::CompactionRun::new(&config.compaction),
            tokens: &counter,
            fixed_tokens: 0,
            progress: Some(&bar),
        };
        let report = check(t, &mut source, &counter);
        bar.finish();
        let report = report?;
        if a.digest_only {
            out.push_str(&format!("{} {}\n", t.name, report.digest));
            continue;
        }
        let mut others = Vec::new();
        if a.processes > 0 {
            let exe = std::env::current_exe()
                .map_err(|e| CliError::Usage(format!("cannot find the tracecost binary: {e}")))?;
            for _ in 0..a.processes {
                let o = std::process::Command::new(&exe)
                    .arg("stability")
                    .arg(&a.trace)
                    .args([
                        "--config",
                        &config.to_string(),
                        "--processes",
                        "0",
                        "--digest-only",
                        "--tokenizer",
                        &a.tokenizer,
                    ])
                    .output()
                    .map_err(|e| CliError::Usage(format!("cannot run {}: {e}", exe.display())))?;
                let text = String::from_utf8_lossy(&o.stdout);
                let digest = text
                    .lines()
                    .find_map(|l| l.strip_prefix(&format!("{} ", t.name)))
                    .unwrap_or("")
                    .to_owned();
                others.push(digest);
            }
        }
        let view = crate::report::stability_view::StabilityView {
            trace: &t.name,
            config: &config.to_string(),
            report: &report,
            others: &others,
        };
        out.push_str(&view.to_string_as(Format::Table).unwrap_or_default());
        if !report.violations.is_empty() || others.iter().any(|d| *d != report.digest) {
            failed = true;
        }
    }
    print_stdout(&out);
    Ok(if failed { super::EXIT_FAILED } else { 0 })
}

/// Token counts through the process-wide memo.
struct MemoTokens<'a>(&'a TokenMemo);

impl crate::policy::BlockTokens for MemoTokens<'_> {
    fn block_tokens(&self, block: &crate::engine::message::ContentBlock) -> u64 {
        crate::replay::count_block(self.0, block).raw_tokens
    }
}

fn print_stdout(text: &str) {
    let mut out = std::io::stdout().lock();
    // A closed pipe (`| head`) is not an error worth reporting.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn print_view<V: Exportable>(view: &V, format: Format) {
    debug_assert!(
        V::formats().contains(&format),
        "no {} output",
        format.name()
    );
    let mut out = std::io::stdout().lock();
    // As in `print_stdout`: a closed pipe is not worth reporting.
    let _ = view.export_to(format, &mut out);
    let _ = out.flush();
}

fn check_cmd(a: CheckArgs) -> Result<u8, CliError> {
    use crate::report::check::{
        BASELINE_FORMAT, Baseline, CheckView, Comparison, DEFAULT_TOLERANCE_PCT, Expected, Verdict,
    };
    let shown = a.baseline.display().to_string();
    let bad = |message: String| CliError::Baseline {
        path: shown.clone(),
        message,
    };
    let bytes = std::fs::read(&a.baseline).map_err(|e| bad(format!("cannot read: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let ok = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line_start = ok.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let line = ok.iter().filter(|&&b| b == b'\n').count() + 1;
        bad(format!("{line}:{}: not UTF-8", ok.len() - line_start + 1))
    })?;
    let mut baseline: Baseline = serde_json::from_str(&text).map_err(|e| {
        bad(format!(
            "{}:{}: {}",
            e.line(),
            e.column().max(1),
            crate::engine::json::error_message(&e)
        ))
    })?;
    if baseline.format != BASELINE_FORMAT {
        return Err(bad(format!(
            "at /format: expected \"{BASELINE_FORMAT}\", found {:?}",
            baseline.format
        )));
    }
    if baseline.entries.is_empty() {
        return Err(bad("at /entries: expected at least one entry".into()));
    }
    if let Some(t) = baseline.tolerance_pct
        && !(t.is_finite() && t >= 0.0)
    {
        return Err(bad(format!(
            "at /tolerance_pct: expected a non-negative number, found {t}"
        )));
    }
    if let Err(e) = parse_tokenizer(&baseline.settings.tokenizer) {
        return Err(bad(format!("at /settings/tokenizer: {e}")));
    }
    if !matches!(baseline.settings.calibrate.as_str(), "auto" | "off") {
        return Err(bad(format!(
            "at /settings/calibrate: expected \"auto\" or \"off\", found {:?}",
            baseline.settings.calibrate
        )));
    }
    for (i, e) in baseline.entries.iter().enumerate() {
        let Some(x) = &e.expected else { continue };
        // JSON's safe integers: larger totals are corrupt and would
        // overflow the comparison's sums.
        const MAX: u64 = (1 << 53) - 1;
        for (name, v) in [
            ("input_tokens", x.input_tokens),
            ("cache_creation_input_tokens", x.cache_creation_input_tokens),
            ("cache_read_input_tokens", x.cache_read_input_tokens),
            ("output_tokens", x.output_tokens),
        ] {
            if v > MAX {
                return Err(bad(format!(
                    "at /entries/{i}/expected/{name}: expected a token count of at most {MAX}, found {v}"
                )));
            }
        }
        if !(x.cost_usd.is_finite() && x.cost_usd >= 0.0) {
            return Err(bad(format!(
                "at /entries/{i}/expected/cost_usd: expected a non-negative number, found {}",
                x.cost_usd
            )));
        }
    }
    let tolerance = a
        .tolerance
        .or(baseline.tolerance_pct)
        .unwrap_or(DEFAULT_TOLERANCE_PCT);
    if !(tolerance.is_finite() && tolerance >= 0.0) {
        return Err(CliError::Usage(format!(
            "--tolerance must be a non-negative number, got {tolerance}"
        )));
    }
    let cost = CostArgs {
        model: None,
        pricing: a.pricing.clone(),
        tokenizer: baseline.settings.tokenizer.clone(),
        calibrate: baseline.settings.calibrate.clone(),
        batch: baseline.settings.batch,
    };
    let pricing = cost.pricing()?;
    let memo = cost.memo()?;
    let dir = a
        .baseline
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    // Plan: load every trace and parse every config before replaying any.
    let mut files: Vec<(String, Vec<Trace>)> = Vec::new();
    let mut plan = Vec::new();
    for (i, e) in baseline.entries.iter().enumerate() {
        if !files.iter().any(|(p, _)| *p == e.trace) {
            let loaded = load(&dir.join(&e.trace))?;
            files.push((e.trace.clone(), loaded.traces));
        }
        let traces = files
            .iter()
            .find(|(p, _)| *p == e.trace)
            .map(|(_, t)| t)
            .ok_or_else(|| bad(format!("at /entries/{i}/trace: not loaded")))?;
        let ti = match &e.name {
            Some(n) => traces.iter().position(|t| &t.name == n).ok_or_else(|| {
                bad(format!(
                    "at /entries/{i}/name: no trace named {n:?} in {}",
                    e.trace
                ))
            })?,
            None if traces.len() == 1 => 0,
            None => {
                return Err(bad(format!(
                    "at /entries/{i}/name: {} holds {} traces; name one",
                    e.trace,
                    traces.len()
                )));
            }
        };
        let config: Config = e
            .config
            .parse()
            .map_err(|err: crate::policy::ConfigError| {
                bad(format!("at /entries/{i}/config: {}", err))
            })?;
        let t = &traces[ti];
        crate::replay::check_config(t, &config)?;
        pricing.lookup(config.model.as_deref().unwrap_or(&t.model))?;
        if !a.update && e.expected.is_none() {
            return Err(bad(format!(
                "at /entries/{i}/expected: missing; run with --update to record the current figures"
            )));
        }
        plan.push((i, e.trace.clone(), ti, config));
    }
    let mut measured: Vec<Option<Expected>> = vec![None; baseline.entries.len()];
    for (path, traces) in &files {
        for (ti, t) in traces.iter().enumerate() {
            let mine: Vec<&(usize, String, usize, Config)> = plan
                .iter()
                .filter(|(_, p, i, _)| p == path && *i == ti)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let price = pricing.lookup(&t.model)?;
            let prepared = PreparedTrace::new(t, &memo, price, cost.calibrate == "auto");
            for (i, _, _, config) in mine {
                let r = replay(
                    &prepared,
                    config,
                    &pricing,
                    &memo,
                    ReplayOptions {
                        batch: cost.batch,
                        progress: None,
                    },
                )?;
                measured[*i] = Some(Expected::of(&r.totals));
            }
        }
    }
    if a.update {
        for (e, m) in baseline.entries.iter_mut().zip(&measured) {
            e.expected = *m;
        }
        super::write_atomic(&a.baseline, baseline.to_json().as_bytes())?;
        eprintln!(
            "tracecost: updated {} entries in {}",
            baseline.entries.len(),
            shown
        );
        return Ok(0);
    }
    let mut rows = Vec::new();
    for (e, m) in baseline.entries.iter().zip(&measured) {
        if let (Some(before), Some(after)) = (e.expected, m) {
            let label = match &e.name {
                Some(n) => format!("{} ({n})", e.trace),
                None => e.trace.clone(),
            };
            rows.push(Comparison::new(
                label,
                e.config.clone(),
                before,
                *after,
                tolerance,
            ));
        }
    }
    let md = CheckView {
        rows: &rows,
        tolerance_pct: tolerance,
    }
    .to_string_as(Format::Markdown)
    .unwrap_or_default();
    print_stdout(&md);
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY") {
        use std::io::Write as _;
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&summary)
            .and_then(|mut f| f.write_all(md.as_bytes()));
        if let Err(e) = appended {
            eprintln!(
                "tracecost: warning: cannot append to GITHUB_STEP_SUMMARY ({}): {e}",
                std::path::Path::new(&summary).display()
            );
        }
    }
    Ok(if rows.iter().any(|r| r.verdict == Verdict::Regression) {
        super::EXIT_FAILED
    } else {
        0
    })
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

fn usage_cmd(a: UsageArgs) -> Result<u8, CliError> {
    let paths = if a.paths.is_empty() {
        claude_roots()
    } else {
        a.paths.clone()
    };
    if paths.is_empty() {
        return Err(CliError::Usage(
            "no Claude Code data found: pass a path, or set CLAUDE_CONFIG_DIR".into(),
        ));
    }
    let pricing = match &a.pricing {
        Some(p) => Pricing::with_file(p)?,
        None => Pricing::builtin(),
    };
    let scan = crate::trace::import::claude_code::scan_usage(&paths)?;
    let report = crate::report::usage_view::build(&scan, &pricing);
    let view = crate::report::usage_view::UsageView {
        report: &report,
        scan: &scan,
    };
    print_view(&view, if a.json { Format::Json } else { Format::Table });
    if !report.unpriced.is_empty() {
        eprintln!(
            "tracecost: warning: no price for {}; priced at $0",
            report.unpriced.join(", ")
        );
    }
    Ok(0)
}

fn gen_cmd(a: GenArgs) -> Result<u8, CliError> {
    let trace =
        crate::trace::generate::by_name(&a.name, a.calls, a.seed).map_err(CliError::Usage)?;
    let json = crate::trace::to_json(&trace);
    match &a.output {
        Some(p) => super::write_atomic(p, json.as_bytes())?,
        None => print_stdout(&json),
    }
    Ok(0)
}

fn models_cmd(a: ModelsArgs) -> Result<u8, CliError> {
    let pricing = match &a.pricing {
        Some(p) => Pricing::with_file(p)?,
        None => Pricing::builtin(),
    };
    let rows = pricing.rows();
    print_view(
        &crate::report::models_view::ModelsView { rows: &rows },
        a.format.into(),
    );
    Ok(0)
}

fn import(a: ImportArgs) -> Result<u8, CliError> {
    use crate::trace::TraceWriter;
    use crate::trace::import::{Format, ImportOptions};
    let opts = ImportOptions {
        skip_invalid: a.skip_invalid,
        default_model: a.model,
    };
    let shown = a.output.display().to_string();
    let write_err = |source| CliError::Write {
        path: shown.clone(),
        source,
    };
    // Each trace goes to the temporary output file as soon as it is built;
    // the file is renamed into place only once every input has been read.
    let bar = super::progress::Bar::new();
    let written = super::write_atomic_with(&a.output, |file| {
        let mut out = TraceWriter::new(file);
        let mut calls = 0usize;
        let mut emit = |t: crate::trace::Trace| -> Result<(), CliError> {
            calls += t.calls.len();
            out.push(t).map_err(write_err)
        };
        let format = match a.from {
            ImportFormat::ClaudeCode => Format::ClaudeCode,
            ImportFormat::Anthropic => Format::Anthropic,
            ImportFormat::Langchain => Format::Langchain,
            ImportFormat::Openai => Format::Openai,
        };
        let report = format.import_each(&a.inputs, &opts, &bar, &mut emit)?;
        let traces = out.count();
        if traces == 0 {
            return Err(CliError::Usage(format!(
                "{}: nothing to import: {report}",
                crate::trace::import::shown(&a.inputs)
            )));
        }
        out.finish().map_err(write_err)?;
        Ok((traces, calls, report))
    });
    bar.finish();
    let (traces, calls, report) = written?;
    eprintln!(
        "tracecost: wrote {traces} trace(s), {calls} call(s) to {}; {report}",
        a.output.display()
    );
    Ok(0)
}

fn load(path: &std::path::Path) -> Result<LoadedTraces, CliError> {
    let bar = super::progress::Bar::new();
    let loaded = crate::trace::load_path_with(path, &bar);
    bar.finish();
    let loaded = loaded?;
    for w in &loaded.warnings {
        eprintln!("tracecost: warning: {w}");
    }
    Ok(loaded)
}

/// Records every tool result of `trace` into `ledger`.
fn record_all(trace: &Trace, ledger: &dyn ToolResultLedger) -> Result<(), CliError> {
    let mut names = std::collections::HashMap::new();
    for b in trace.messages.iter().flat_map(Message::blocks) {
        match b.kind() {
            BlockKind::ToolUse { id, name } => {
                names.insert(
                    id.clone(),
                    (name.clone(), b.tool_input().map_or("{}", |r| r.get())),
                );
            }
            BlockKind::ToolResult { tool_use_id, .. } => {
                let (name, args) = names
                    .get(tool_use_id)
                    .map_or(("unknown", "{}"), |(n, a)| (&**n, *a));
                record_result(ledger, tool_use_id, name, args, b)?;
            }
            _ => {}
        }
    }
    Ok(())
}

fn recall(a: RecallArgs) -> Result<u8, CliError> {
    let loaded = load(&a.trace)?;
    let ledger: Box<dyn ToolResultLedger> = match &a.ledger {
        Some(dir) => Box::new(DurableLedger::open(dir)?),
        None => Box::new(InMemoryLedger::new()),
    };
    for t in &loaded.traces {
        record_all(t, ledger.as_ref())?;
    }
    let request = RecallRequest {
        format: a.format.map(|f| match f {
            FormatArg::Summary => RecallFormat::Summary,
            FormatArg::Full => RecallFormat::Full,
        }),
        query: a.query,
        offset: a.offset,
        max_chars: a.max_chars,
        json_path: a.json_path,
    };
    let mem_id = match ledger.get(&a.id)? {
        Some(rec) => Some(rec.handle.mem_id),
        None => ledger.get_by_call_id(&a.id)?.map(|rec| rec.handle.mem_id),
    };
    let text = match mem_id {
        Some(id) => ledger.fetch(&id, &request),
        None => not_found(&a.id),
    };
    let mut out = std::io::stdout().lock();
    // Exactly what the model would receive, byte for byte.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    Ok(0)
}

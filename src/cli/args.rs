//! The command line's schema: clap definitions and nothing else. The
//! values of policy options, and their defaults, come from the policy
//! types; [`super::plan`] turns these into a typed plan.

use std::path::PathBuf;

use clap::builder::PossibleValue;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::app::{CacheScope, CalibrationChoice};
use crate::engine::cache::ManifestPosition;
use crate::engine::wire::Ttl;
use crate::policy::{CacheKind, CompactionKind, RECORDED_TTL_NAME, TtlChoice};
use crate::report::export::ExportFormat;

/// What agent conversations really cost, and which tool-result compaction
/// and prompt-cache policy makes them cheapest.
#[derive(Debug, Parser)]
#[command(name = "tracecost", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub(super) command: Command,
}

// Examples are laid out one command per line, continued with `\` under 76
// columns, so that help never wraps inside a command and each can be
// copied as is.
#[derive(Debug, Subcommand)]
pub(super) enum Command {
    /// Replay a trace under one policy: per-call tokens and dollars.
    #[command(after_help = "Examples:
  tracecost replay traces/massage-gun.json
  tracecost replay traces/massage-gun.json --compaction ledger \\
      --threshold 8000 --keep-last 2 --cache native
  tracecost replay trace.json --config 'ledger:t=8000,k=2+tail:ttl=1h' \\
      --format json
  tracecost replay ~/.claude/projects --threshold 4000 --per-trace")]
    Replay(ReplayArgs),
    /// Replay traces under a grid of policies, ranked by cost, with recall risk.
    #[command(after_help = "Examples:
  tracecost sweep traces/massage-gun.json --threshold 2000,8000,32000 \\
      --keep-last 0,2 --cache none,tail,native
  tracecost sweep traces/*.json --compaction off,ledger,clear-tool-uses \\
      --cache tail --model claude-opus-4-1,claude-sonnet-4-5
  tracecost sweep ~/.claude/projects --threshold 4000,16000 --format csv")]
    Sweep(SweepArgs),
    /// Check that stubs and prefixes stay byte-stable from call to call.
    #[command(
        after_help = "Exit codes: 0 stable; 1 a stub or prefix changed; 2 bad input.
Examples:
  tracecost stability traces/massage-gun.json --compaction ledger \\
      --threshold 8000 --keep-last 2
  tracecost stability trace.json --config 'ledger:t=2000,k=0+tail' \\
      --processes 3"
    )]
    Stability(StabilityArgs),
    /// Write the report (HTML, Markdown, JSON, CSV, charts) for a set of traces.
    #[command(after_help = "Examples:
  tracecost report
  tracecost report traces/massage-gun.json --out reports/massage-gun
  tracecost report my-traces/ --cache tail,native --threshold 4000,16000")]
    Report(ReportArgs),
    /// How well each trace's status quo, replayed, reproduces its recorded bill.
    #[command(
        after_help = "Each trace is replayed under the policy that actually ran (its status quo)
and its simulated bill compared with what its calls recorded.
Examples:
  tracecost fidelity ~/.claude/projects
  tracecost fidelity ~/.claude/projects --format md > docs/fidelity.md"
    )]
    Fidelity(FidelityArgs),
    /// Fail when traces got more expensive than a baseline says (for CI).
    #[command(
        after_help = "Exit codes: 0 every (trace, config) within tolerance; 1 a regression; 2 bad input.
Examples:
  tracecost check --baseline cost-baseline.json
  tracecost check --baseline cost-baseline.json --tolerance 1
  tracecost check --baseline cost-baseline.json --update"
    )]
    Check(CheckArgs),
    /// Price the usage Claude Code and Codex CLI recorded (ccusage-compatible).
    #[command(
        after_help = "With no PATH, reads the roots in CLAUDE_CONFIG_DIR (comma-separated),
else ~/.claude and ~/.config/claude, and the Codex home in CODEX_HOME, else
~/.codex, when it holds rollouts.
Examples:
  tracecost usage
  tracecost usage ~/.claude --json
  tracecost usage daily --since 20260101 --json
  tracecost usage monthly ~/.claude
  tracecost usage ~/.codex --json"
    )]
    Usage(UsageArgs),
    /// Generate a bundled reference trace.
    #[command(after_help = "Examples:
  tracecost gen massage-gun -o traces/massage-gun.json
  tracecost gen session --calls 500 --seed 7 -o /tmp/session.json
  tracecost gen fleet --sessions 1000 --seed 1 -o /tmp/fleet.json
  tracecost gen fleet --sessions 10000 --accounts 16 -o /tmp/fleet.jsonl
  tracecost gen fleet --sessions 30000 --days 140 -o /tmp/fleet-140d.jsonl
  tracecost gen request-log --calls 100 --seed 1 -o /tmp/requests.jsonl")]
    Gen(GenArgs),
    /// Print the built-in price table (or one extended with --pricing).
    Models(ModelsArgs),
    /// Keep prices current without a release (see `prices update --help`).
    #[command(subcommand)]
    Prices(PricesCommand),
    /// Convert logs into canonical traces.
    #[command(after_help = "Examples:
  tracecost import --from claude-code ~/.claude -o sessions.json
  tracecost import --from anthropic proxy-log.jsonl -o trace.json
  tracecost import --from openai --skip-invalid calls.jsonl -o trace.json")]
    Import(ImportArgs),
    /// Print what the recall_tool_result tool would return for a tool result.
    #[command(
        after_help = "Prints the answer and one newline (the answer is the output less its last byte).
Exit codes: 0 found; 1 no such id (the not-found text is printed); 2 bad input.
Examples:
  tracecost recall traces/massage-gun.json toolu_01e3odTFsJ0Io7BAixg4bBh7 \\
      --query B07
  tracecost recall trace.json tm_1a2b3c4d5e6f7a8b \\
      --json-path products.0.stats --ledger .ledger"
    )]
    Recall(RecallArgs),
    /// Maintain a durable ledger directory (see recall --ledger).
    #[command(subcommand)]
    Ledger(LedgerCommand),
}

#[derive(Debug, Subcommand)]
pub(super) enum PricesCommand {
    /// Fetch LiteLLM's published price file and write the prices it gives
    /// for the models tracecost knows (and new Claude, GPT and Gemini
    /// models) as a tracecost pricing file, in force from today (UTC).
    #[command(
        after_help = "Nothing is fetched but by this command: a run reads the file written only when
given it with --pricing FILE, over the built-in table; calls before the day
of the fetch keep the prices in force then. The file records its source
address, the SHA-256 of the bytes fetched and the day, and every report
priced with it records the file's own SHA-256.
Examples:
  tracecost prices update --out prices.json
  tracecost report ~/.claude --pricing prices.json --out r"
    )]
    Update {
        /// Where to fetch LiteLLM's model_prices_and_context_window.json.
        #[arg(long, default_value = super::prices::LITELLM_PRICES_URL)]
        url: String,
        /// The pricing file to write (replaced whole, or left as it was).
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Debug, Subcommand)]
pub(super) enum LedgerCommand {
    /// Keep every intact record of a damaged ledger and set the damaged
    /// index lines aside in DIR/index.damaged.jsonl (nothing is deleted).
    #[command(
        after_help = "Exit codes: 0 repaired (or nothing to repair); 2 not a ledger; 69 storage failed."
    )]
    Repair {
        /// The ledger directory.
        dir: PathBuf,
    },
}

/// A library enum as a command-line value: clap's trait goes on the command
/// line's own wrapper, since both the trait and the enums belong to other
/// crates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Choice<T>(pub(super) T);

/// Every value of an enum's `ALL`, wrapped, for [`ValueEnum::value_variants`]
/// (a constant, since clap wants a slice that lives for ever).
const fn choices<T: Copy, const N: usize>(all: [T; N]) -> [Choice<T>; N] {
    let mut out = [Choice(all[0]); N];
    let mut i = 1;
    while i < N {
        out[i] = Choice(all[i]);
        i += 1;
    }
    out
}

impl ValueEnum for Choice<CompactionKind> {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [Choice<CompactionKind>; CompactionKind::ALL.len()] =
            choices(CompactionKind::ALL);
        &ALL
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.0.about()))
    }
}

impl ValueEnum for Choice<CacheKind> {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [Choice<CacheKind>; CacheKind::ALL.len()] = choices(CacheKind::ALL);
        &ALL
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.0.about()))
    }
}

impl ValueEnum for Choice<CalibrationChoice> {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            Choice(CalibrationChoice::Auto),
            Choice(CalibrationChoice::Off),
        ]
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()))
    }
}

impl ValueEnum for Choice<CacheScope> {
    fn value_variants<'a>() -> &'a [Self] {
        &[Choice(CacheScope::Account), Choice(CacheScope::Trace)]
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()))
    }
}

impl ValueEnum for Choice<ExportFormat> {
    fn value_variants<'a>() -> &'a [Self] {
        const ALL: [Choice<ExportFormat>; ExportFormat::ALL.len()] = choices(ExportFormat::ALL);
        &ALL
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()))
    }
}

/// A TTL on the command line: one of the engine's, or each call's
/// recorded one (named as in config strings).
#[derive(Debug, Clone, Copy)]
pub(super) struct TtlArg(pub(super) TtlChoice);

impl ValueEnum for TtlArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            TtlArg(TtlChoice::Fixed(Ttl::FiveMinutes)),
            TtlArg(TtlChoice::Fixed(Ttl::OneHour)),
            TtlArg(TtlChoice::Recorded),
        ]
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(match self.0 {
            TtlChoice::Fixed(t) => t.as_str(),
            TtlChoice::Recorded => RECORDED_TTL_NAME,
        }))
    }
}

/// A manifest position on the command line.
#[derive(Debug, Clone, Copy)]
pub(super) struct ManifestArg(pub(super) ManifestPosition);

impl ValueEnum for ManifestArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            ManifestArg(ManifestPosition::Cached),
            ManifestArg(ManifestPosition::Volatile),
        ]
    }
    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.as_str()))
    }
}

/// Policy flags shared by replay and stability.
#[derive(Debug, Args, Clone)]
pub(super) struct PolicyArgs {
    /// The whole config as one string, e.g. ledger:t=8000,k=2+native:manifest=cached,ttl=5m.
    #[arg(long, conflicts_with_all = ["compaction", "threshold", "keep_last", "cache", "ttl", "manifest", "trigger", "keep", "clear_at_least", "exclude_tools", "clear_tool_inputs"])]
    pub(super) config: Option<String>,
    /// Compaction policy [default: the trace's status quo's].
    #[arg(long, value_enum)]
    pub(super) compaction: Option<Choice<CompactionKind>>,
    /// Ledger: compact results longer than this many characters (implies --compaction ledger).
    #[arg(long)]
    pub(super) threshold: Option<u64>,
    /// Ledger: never compact the last N tool results (implies --compaction ledger).
    #[arg(long)]
    pub(super) keep_last: Option<usize>,
    /// Cache policy [default: the trace's status quo's; an option changes only the part of the status quo it names].
    #[arg(long, value_enum)]
    pub(super) cache: Option<Choice<CacheKind>>,
    /// TTL of the markers (system, native, tail, claude-code; alone, of the status quo's cache policy); recorded: at each call, the TTL its recorded cache write used.
    #[arg(long, value_enum)]
    pub(super) ttl: Option<TtlArg>,
    /// Native cache: tool manifest cached (marked) or volatile (implies --cache native).
    #[arg(long, value_enum)]
    pub(super) manifest: Option<ManifestArg>,
    /// Peers (clear-tool-uses, langchain-clear): clear only above this many input tokens.
    #[arg(long)]
    pub(super) trigger: Option<u64>,
    /// Peers: keep the last N tool uses.
    #[arg(long)]
    pub(super) keep: Option<usize>,
    /// Peers: minimum tokens to clear.
    #[arg(long)]
    pub(super) clear_at_least: Option<u64>,
    /// Peers: tools whose results are never cleared (repeatable).
    #[arg(long = "exclude-tool")]
    pub(super) exclude_tools: Vec<String>,
    /// Peers: also clear the tool_use inputs.
    #[arg(long)]
    pub(super) clear_tool_inputs: bool,
}

/// Cost-model flags shared by every command that prices.
#[derive(Debug, Args, Clone)]
pub(super) struct CostArgs {
    /// Extra or overriding prices: tracecost's JSON or LiteLLM's model_prices_and_context_window.json.
    #[arg(long)]
    pub(super) pricing: Option<PathBuf>,
    /// Tokenizer: o200k_base, cl100k_base or chars:R (R characters per token).
    #[arg(long, default_value = "o200k_base")]
    pub(super) tokenizer: String,
    /// Fit a per-trace calibration factor on recorded usage (auto) or not (off).
    #[arg(long, value_enum, default_value_t = Choice(CalibrationChoice::Auto))]
    pub(super) calibrate: Choice<CalibrationChoice>,
    /// Apply the Batch API discount (50%).
    #[arg(long)]
    pub(super) batch: bool,
    /// Which traces share one simulated prompt cache: account (the traces of one account, in start-time order, as the provider's cache is shared) or trace (each starts cold).
    #[arg(long, value_enum, default_value_t = Choice(CacheScope::Account))]
    pub(super) cache_scope: Choice<CacheScope>,
    /// Fail (exit 2) on any call of a model the price table does not know, instead of leaving it out of the totals and naming it (for CI gates).
    #[arg(long)]
    pub(super) strict_prices: bool,
}

/// How trace inputs are read (replay, sweep, report).
#[derive(Debug, Args, Clone)]
pub(super) struct InputArgs {
    /// Read every input as this format instead of deciding from its content.
    #[arg(long = "from", value_enum)]
    pub(super) from: Option<ImportFormat>,
    /// Skip damaged files (named on stderr) and lines instead of failing.
    #[arg(long)]
    pub(super) skip_invalid: bool,
    /// Read each Claude Code session its client compacted as one conversation, as it would have run without its summaries, replayed under Claude Code's autocompact placed where the record shows each compaction ran (`trigger=recorded`), with its clearing as recorded: `tracecost fidelity ~/.claude --join-compactions` measures that policy against the recorded bills.
    #[arg(long)]
    pub(super) join_compactions: bool,
}

#[derive(Debug, Args)]
pub(super) struct ReplayArgs {
    /// Trace files, Claude Code folders or transcripts, logs, or folders of them (every trace is replayed; several are totalled).
    #[arg(required = true, value_name = "TRACE")]
    pub(super) traces: Vec<PathBuf>,
    #[command(flatten)]
    pub(super) inputs: InputArgs,
    #[command(flatten)]
    pub(super) policy: PolicyArgs,
    /// Price with this model instead of the trace's.
    #[arg(long)]
    pub(super) model: Option<String>,
    #[command(flatten)]
    pub(super) cost: CostArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub(super) format: Choice<ExportFormat>,
    /// With several traces: print each trace's calls before the fleet total (JSON: under traces; CSV: a row per trace). Without it, only the total.
    #[arg(long)]
    pub(super) per_trace: bool,
}

/// The grid flags shared by sweep and report.
#[derive(Debug, Args, Clone)]
pub(super) struct GridArgs {
    /// Sweep these whole configs (repeat the flag for several) and each trace's status quo instead of a grid, e.g. --config 'claude-code-autocompact+claude-code:ttl=recorded' --config 'clear-thinking+ledger+tail': the way to a summarising policy with its own cache policy, or to a thinking edit, which no grid crosses.
    #[arg(long = "config", value_name = "CONFIG", conflicts_with_all = ["compaction", "threshold", "keep_last", "cache", "ttl"])]
    pub(super) configs: Vec<String>,
    /// Compaction policies (comma-separated), or full parts like clear-tool-uses:trigger=50000 [default: all].
    #[arg(long, value_delimiter = ',')]
    pub(super) compaction: Option<Vec<String>>,
    /// Ledger thresholds in characters (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub(super) threshold: Option<Vec<u64>>,
    /// Ledger keep-last values (comma-separated). 0 compacts a large result before the model has read it.
    #[arg(long, value_delimiter = ',')]
    pub(super) keep_last: Option<Vec<usize>>,
    /// Cache policies (comma-separated), or full parts like tail:ttl=1h.
    #[arg(long, value_delimiter = ',')]
    pub(super) cache: Option<Vec<String>>,
    /// TTL for cache policies given by name; recorded: at each call, the TTL its recorded cache write used.
    #[arg(long, value_enum)]
    pub(super) ttl: Option<TtlArg>,
    /// Price each recall an assistant turn would have needed at this many USD (default: one extra round trip at the config's average call cost).
    #[arg(long, allow_hyphen_values = true, value_parser = recall_cost)]
    pub(super) recall_cost: Option<f64>,
    /// Measure savings against this config instead of each trace's status quo (what actually ran: its client's policy or recorded markers), e.g. off+tail.
    #[arg(long = "baseline")]
    pub(super) baseline: Option<String>,
}

#[derive(Debug, Args)]
pub(super) struct FidelityArgs {
    /// Trace files, Claude Code folders or transcripts, logs, or folders of them.
    #[arg(required = true)]
    pub(super) traces: Vec<PathBuf>,
    #[command(flatten)]
    pub(super) inputs: InputArgs,
    #[command(flatten)]
    pub(super) cost: CostArgs,
    /// List each call of one session: what the record shows, what the simulation did, and why each simulated write or miss happened. SESSION is a trace's name or its start (a session id also picks its continuations and subagents).
    #[arg(long, value_name = "SESSION")]
    pub(super) explain: Option<String>,
    /// With --explain: replay every trace under this config instead of its status quo, to see what the policy changes, e.g. ledger:t=8000,k=2+claude-code:ttl=recorded.
    #[arg(long, requires = "explain")]
    pub(super) config: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub(super) format: Choice<ExportFormat>,
}

#[derive(Debug, Args)]
pub(super) struct SweepArgs {
    /// Trace files, Claude Code folders or transcripts, logs, or folders of them.
    #[arg(required = true)]
    pub(super) traces: Vec<PathBuf>,
    #[command(flatten)]
    pub(super) inputs: InputArgs,
    #[command(flatten)]
    pub(super) grid: GridArgs,
    /// Models to price with (comma-separated); default the trace's.
    #[arg(long, value_delimiter = ',')]
    pub(super) model: Vec<String>,
    #[command(flatten)]
    pub(super) cost: CostArgs,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub(super) format: Choice<ExportFormat>,
    /// With several traces: print each trace's ranked grid before the fleet total (JSON: under traces; CSV: rows with scope trace). Without it, only the total.
    #[arg(long)]
    pub(super) per_trace: bool,
}

#[derive(Debug, Args)]
pub(super) struct ReportArgs {
    /// Trace files, Claude Code folders or transcripts, logs, or folders of them [default: traces/ where it exists, else the Claude Code and Codex homes, as for usage].
    pub(super) inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub(super) read: InputArgs,
    /// Where to write the report: a new or empty folder, or an earlier report, which it replaces (any other folder is refused).
    #[arg(long, default_value = "reports/latest")]
    pub(super) out: PathBuf,
    #[command(flatten)]
    pub(super) grid: GridArgs,
    /// Price with this model instead of each trace's.
    #[arg(long)]
    pub(super) model: Option<String>,
    /// How many traces get a page of their own, with every config's row and their calls in results.json and results.csv: the N most expensive, or `all` [default: 25]. Every trace's figures are in results.json, sessions.csv and sessions/index.html either way.
    #[arg(long, value_name = "N|all", value_parser = session_pages)]
    pub(super) sessions: Option<crate::report::build::SessionPages>,
    /// Hold every trace, and what the report keeps of each until the end (its summary, its line of results.json, its section of the fleet page), in memory, instead of writing them to temporary files (in TMPDIR) and reading them back when their turn comes. The same report; memory then grows with the fleet.
    #[arg(long)]
    pub(super) in_memory: bool,
    /// Also write every call of every trace under every config to calls.jsonl in the report folder, a JSON object per line (trace_index, trace, session, config, then the call's figures as in results.json), written as each trace is replayed: for your own tools. About half a KB per call and config: gigabytes for a large fleet.
    #[arg(long)]
    pub(super) calls_jsonl: bool,
    /// Keep what the report replays in this folder (made if missing) and reuse it: a later report over the same traces plus new ones replays only the new ones (with the traces that shared a prompt cache with them) and writes the same files a report without the folder would. Entries are keyed by the traces' bytes, the grid, the prices and options, and this build of tracecost, so nothing stale is read. Once the report is written, entries it did not use (another build's or grid's, segments that have grown) are removed: the folder holds what the latest report used, so give each grid its own. Not with --calls-jsonl, which needs every call of every trace.
    #[arg(long, value_name = "DIR", conflicts_with = "calls_jsonl")]
    pub(super) cache_dir: Option<PathBuf>,
    #[command(flatten)]
    pub(super) cost: CostArgs,
}

#[derive(Debug, Args)]
pub(super) struct StabilityArgs {
    /// The trace file.
    pub(super) trace: PathBuf,
    #[command(flatten)]
    pub(super) policy: PolicyArgs,
    /// Also run the check in N fresh processes and compare their stub bytes.
    #[arg(long, default_value_t = 2, value_parser = processes)]
    pub(super) processes: usize,
    /// Print only the digest of the stub bytes (used by --processes).
    #[arg(long, hide = true)]
    pub(super) digest_only: bool,
    /// Tokenizer for the surviving-prefix figures.
    #[arg(long, default_value = "o200k_base")]
    pub(super) tokenizer: String,
}

#[derive(Debug, Args)]
pub(super) struct CheckArgs {
    /// The baseline file (tracecost.baseline/v1).
    #[arg(long)]
    pub(super) baseline: PathBuf,
    /// Allowed increase, in percent of the expected cost or input tokens.
    #[arg(long, allow_hyphen_values = true, value_parser = tolerance)]
    pub(super) tolerance: Option<f64>,
    /// Rewrite the baseline with the current figures instead of checking.
    #[arg(long)]
    pub(super) update: bool,
    /// Extra or overriding prices.
    #[arg(long)]
    pub(super) pricing: Option<PathBuf>,
    /// Fail (exit 2) on any call of a model the price table does not know, instead of checking the entries on their priced calls and naming the others.
    #[arg(long)]
    pub(super) strict_prices: bool,
}

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(super) struct UsageArgs {
    /// The view: per session (the default), per day or per month.
    #[command(subcommand)]
    pub(super) view: Option<UsageView>,
    #[command(flatten)]
    pub(super) common: UsageCommon,
}

/// `usage`'s views, as ccusage names them.
#[derive(Debug, Subcommand)]
pub(super) enum UsageView {
    /// Per session, costliest first (the default).
    Session(UsageCommon),
    /// Per UTC day, in day order (Claude Code data).
    Daily(UsageCommon),
    /// Per UTC month, in month order (Claude Code data).
    Monthly(UsageCommon),
}

impl UsageArgs {
    /// The view asked for and its options.
    pub(super) fn view(&self) -> (Option<crate::app::usage_period::UsagePeriod>, &UsageCommon) {
        use crate::app::usage_period::UsagePeriod;
        match &self.view {
            None => (None, &self.common),
            Some(UsageView::Session(c)) => (None, c),
            Some(UsageView::Daily(c)) => (Some(UsagePeriod::Day), c),
            Some(UsageView::Monthly(c)) => (Some(UsagePeriod::Month), c),
        }
    }
}

#[derive(Debug, Args)]
pub(super) struct UsageCommon {
    /// Claude config roots, projects folders or session files; Codex homes, folders of their sessions or rollouts.
    pub(super) paths: Vec<PathBuf>,
    /// The first day counted (UTC), YYYYMMDD or YYYY-MM-DD: responses of earlier days are left out (a session view keeps the sessions last active from that day).
    #[arg(long, short = 's', value_parser = usage_day)]
    pub(super) since: Option<String>,
    /// The last day counted (UTC), YYYYMMDD or YYYY-MM-DD.
    #[arg(long, short = 'u', value_parser = usage_day)]
    pub(super) until: Option<String>,
    /// ccusage 20.0.24's session JSON: `ccusage claude session --json`'s shape, `ccusage codex session --json`'s for Codex sessions alone (its unified `ccusage session --json` shape for both).
    #[arg(long)]
    pub(super) json: bool,
    /// Extra or overriding prices.
    #[arg(long)]
    pub(super) pricing: Option<PathBuf>,
    /// Fail (exit 2) on any call of a model the price table does not know, instead of showing its cost as unknown (for CI gates).
    #[arg(long)]
    pub(super) strict_prices: bool,
}

fn usage_day(text: &str) -> Result<String, String> {
    crate::app::usage_period::DayRange::parse_day(text)
}

#[derive(Debug, Args)]
pub(super) struct GenArgs {
    /// massage-gun, session, ledger-session (a session whose agent ran the
    /// ledger and recalled some stubbed results), fleet or request-log (an
    /// Anthropic request log of a session, for `tracecost import`).
    pub(super) name: String,
    /// Session: number of model calls, compactions included [default: 200];
    /// request-log: exchanges [default: 100].
    #[arg(long, allow_hyphen_values = true, value_parser = gen_calls)]
    pub(super) calls: Option<usize>,
    /// Session or fleet: random seed [default: 1].
    #[arg(long)]
    pub(super) seed: Option<u64>,
    /// Fleet: number of sessions [default: 100].
    #[arg(long, allow_hyphen_values = true, value_parser = gen_sessions)]
    pub(super) sessions: Option<usize>,
    /// Fleet: spread the sessions over this many accounts (a team's
    /// organizations or API keys), named acct-01, acct-02, …: each session,
    /// with all its parts, in one account, every account holding the same
    /// number of sessions (give or take one). Replayed, a session shares
    /// the simulated prompt cache only with sessions of its own account. No
    /// more accounts than sessions [default: 1: every session in the
    /// account generated-team].
    #[arg(long, allow_hyphen_values = true, value_parser = gen_accounts)]
    pub(super) accounts: Option<usize>,
    /// Fleet: the sessions start within this many days from Monday
    /// 2025-10-06, weekends light. More days at the same number of
    /// sessions means fewer sessions side by side, and the replay holds
    /// those that overlap [default: 14].
    #[arg(long, allow_hyphen_values = true, value_parser = gen_days)]
    pub(super) days: Option<u64>,
    /// Output file (stdout when absent).
    #[arg(short, long)]
    pub(super) output: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub(super) struct ModelsArgs {
    /// Extra or overriding prices (tracecost JSON or LiteLLM's file).
    #[arg(long)]
    pub(super) pricing: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub(super) format: Choice<ExportFormat>,
}

#[derive(Debug, Args)]
pub(super) struct ImportArgs {
    /// The input format (default: decided from each file's content, as
    /// report and replay do).
    #[arg(long = "from", value_enum)]
    pub(super) from: Option<ImportFormat>,
    /// Input files or directories.
    #[arg(required = true)]
    pub(super) inputs: Vec<PathBuf>,
    /// Where to write the traces (one file; several traces share it).
    #[arg(short, long)]
    pub(super) output: PathBuf,
    /// Skip lines that are not valid JSON instead of failing.
    #[arg(long)]
    pub(super) skip_invalid: bool,
    /// Read each Claude Code session its client compacted as one conversation, as it would have run without its summaries (its status quo Claude Code's autocompact, which puts them back).
    #[arg(long)]
    pub(super) join_compactions: bool,
    /// Model to record when the input does not say.
    #[arg(long)]
    pub(super) model: Option<String>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum ImportFormat {
    /// Claude Code transcripts (~/.claude/projects/**/*.jsonl).
    ClaudeCode,
    /// Anthropic Messages API request/response logs.
    Anthropic,
    /// LangChain / LangGraph message lists.
    Langchain,
    /// OpenAI Chat Completions bodies and logs.
    Openai,
    /// Codex CLI sessions (~/.codex/sessions/**/rollout-*.jsonl).
    Codex,
    /// OpenAI Responses API bodies and logs.
    OpenaiResponses,
    /// Gemini API generateContent bodies and logs.
    Gemini,
    /// Amazon Bedrock Converse bodies and logs.
    Bedrock,
    /// OpenTelemetry (OTLP JSON) exports: GenAI and OpenInference spans.
    Otel,
    /// Langfuse ingestion batches and API observations.
    Langfuse,
    /// OpenAI Agents SDK trace exports.
    OpenaiAgents,
    /// LangSmith run batches and runs.
    Langsmith,
}

#[derive(Debug, Args)]
pub(super) struct RecallArgs {
    /// The trace whose tool results are recorded.
    pub(super) trace: PathBuf,
    /// A mem_id (tm_…) or a tool_use id.
    pub(super) id: String,
    /// summary (the stub) or full (the payload).
    #[arg(long, value_enum)]
    pub(super) format: Option<RecallFormatArg>,
    /// Case-sensitive text to find.
    #[arg(long)]
    pub(super) query: Option<String>,
    /// Start, in characters.
    #[arg(long)]
    pub(super) offset: Option<u64>,
    /// At most this many characters: a range of the payload (from --offset) or a page of a --json-path value, after a header naming the range and the total; with --query, the answer is cut there and says so.
    #[arg(long)]
    pub(super) max_chars: Option<u64>,
    /// With --query: characters of context on each side of a match.
    #[arg(long, requires = "query")]
    pub(super) context: Option<u64>,
    /// Dotted path into a JSON payload, e.g. products.3.stats.current.
    #[arg(long)]
    pub(super) json_path: Option<String>,
    /// Record into (and recall from) a durable ledger in this directory.
    #[arg(long)]
    pub(super) ledger: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub(super) enum RecallFormatArg {
    /// The stub the model saw.
    Summary,
    /// The whole payload.
    Full,
}

/// `arg`'s help with `[default: VALUE]` appended.
fn with_default(c: clap::Command, arg: &str, value: impl std::fmt::Display) -> clap::Command {
    c.mut_arg(arg, |a| {
        let help = a.get_help().map(|h| h.to_string()).unwrap_or_default();
        a.help(format!("{help} [default: {value}]"))
    })
}

/// The command tree, with the policy defaults and names written into the
/// help from the policy types (clap's derive cannot take them from
/// constants).
pub(super) fn command() -> clap::Command {
    use crate::policy::{
        DEFAULT_LEDGER_KEEP_LAST, DEFAULT_LEDGER_THRESHOLD, DEFAULT_TTL, GridSpec, PeerParams,
    };
    let peer = PeerParams::anthropic_defaults();
    let grid = GridSpec::default();
    let list = |v: Vec<String>| v.join(",");
    let policy_defaults = |c: clap::Command| {
        let c = with_default(c, "threshold", DEFAULT_LEDGER_THRESHOLD);
        let c = with_default(c, "keep_last", DEFAULT_LEDGER_KEEP_LAST);
        let c = with_default(
            c,
            "ttl",
            format!(
                "the status quo's; {RECORDED_TTL_NAME} when it takes it from the record, else {DEFAULT_TTL}"
            ),
        );
        let c = with_default(c, "trigger", peer.trigger);
        with_default(c, "keep", peer.keep)
    };
    let grid_defaults = |c: clap::Command| {
        let thresholds = grid.threshold_list().iter().map(u64::to_string).collect();
        let keep_lasts = grid.keep_last_list().iter().map(usize::to_string).collect();
        let c = with_default(c, "threshold", list(thresholds));
        let c = with_default(c, "keep_last", list(keep_lasts));
        let c = with_default(
            c,
            "ttl",
            format!(
                "{RECORDED_TTL_NAME} when the status quo takes it from the record, else {DEFAULT_TTL}"
            ),
        );
        let compactions: Vec<&str> = CompactionKind::ALL.iter().map(|k| k.name()).collect();
        let caches: Vec<&str> = CacheKind::ALL.iter().map(|k| k.name()).collect();
        c.mut_arg("compaction", |a| {
            a.help(format!(
                "Compaction policies (comma-separated): {}, or full parts like clear-tool-uses:trigger=50000 [default: all]",
                compactions.join(", ")
            ))
        })
        .mut_arg("cache", |a| {
            a.help(format!(
                "Cache policies (comma-separated): {}, or full parts like tail:ttl=1h [default: {}]",
                caches.join(", "),
                list(grid.cache_names())
            ))
        })
    };
    <Cli as clap::CommandFactory>::command()
        .mut_subcommand("replay", policy_defaults)
        .mut_subcommand("stability", policy_defaults)
        .mut_subcommand("sweep", grid_defaults)
        .mut_subcommand("report", grid_defaults)
        .mut_subcommand("recall", |c| {
            use crate::engine::recall::{DEFAULT_CONTEXT_CHARS, MAX_CONTEXT_CHARS};
            with_default(
                c,
                "context",
                format!("{DEFAULT_CONTEXT_CHARS}, at most {MAX_CONTEXT_CHARS}"),
            )
        })
}

// Numbers with a documented range (`app::limits`), refused by the parser
// so the message names the option, the value and the range before
// anything is read.

fn in_range(range: crate::app::limits::Range, text: &str, integer: bool) -> Result<f64, String> {
    range
        .parse(text, integer)
        .map_err(|_| range.expected(integer))
}

fn recall_cost(text: &str) -> Result<f64, String> {
    in_range(crate::app::limits::RECALL_COST_USD, text, false)
}

fn tolerance(text: &str) -> Result<f64, String> {
    in_range(crate::app::limits::TOLERANCE_PCT, text, false)
}

// The ranges' bounds are whole numbers far below 2^53, so an accepted
// value converts to usize exactly.
fn gen_calls(text: &str) -> Result<usize, String> {
    in_range(crate::app::limits::GEN_CALLS, text, true).map(|v| v as usize)
}

fn gen_sessions(text: &str) -> Result<usize, String> {
    in_range(crate::app::limits::GEN_SESSIONS, text, true).map(|v| v as usize)
}

fn gen_accounts(text: &str) -> Result<usize, String> {
    in_range(crate::app::limits::GEN_ACCOUNTS, text, true).map(|v| v as usize)
}

fn gen_days(text: &str) -> Result<u64, String> {
    in_range(crate::app::limits::GEN_DAYS, text, true).map(|v| v as u64)
}

fn session_pages(text: &str) -> Result<crate::report::build::SessionPages, String> {
    use crate::report::build::SessionPages;
    if text.eq_ignore_ascii_case("all") {
        return Ok(SessionPages::All);
    }
    match text.parse::<usize>() {
        Ok(n) => Ok(SessionPages::MostExpensive(n)),
        Err(_) => Err(format!(
            "expected a number of traces (0 or more) or `all`, found {text:?}"
        )),
    }
}

fn processes(text: &str) -> Result<usize, String> {
    in_range(crate::app::limits::PROCESSES, text, true).map(|v| v as usize)
}

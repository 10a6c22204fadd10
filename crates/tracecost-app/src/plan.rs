//! Typed plans: everything a pipeline needs, resolved before it runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::AppError;
use super::baseline::Baseline;
use super::outline::TraceHead;
use crate::progress::Progress;
use tracecost_cost::pricing::{ModelPrice, Pricing};
use tracecost_cost::tokens::{TokenMemo, Tokenizer, parse_tokenizer};
pub use tracecost_import::inputs::{
    InputError, InputLoader, InputOptions, Loaded, SkippedSummary, input_paths,
};
use tracecost_import::{ImportOptions, InputFormat};
use tracecost_policy::{Config, GridSpec, Implied};
use tracecost_replay::sweep::Applicability;
use tracecost_replay::{ReplayContext, ReplayOptions};
use tracecost_trace::Trace;
use tracecost_trace::Warning;

/// Whether token counts are calibrated on a trace's recorded usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CalibrationChoice {
    /// Fit a per-trace factor where usage was recorded.
    #[default]
    Auto,
    /// Use the tokenizer's counts as they are.
    Off,
}

impl CalibrationChoice {
    /// `auto` / `off`, as written in baselines and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            CalibrationChoice::Auto => "auto",
            CalibrationChoice::Off => "off",
        }
    }

    /// The calibration called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        [CalibrationChoice::Auto, CalibrationChoice::Off]
            .into_iter()
            .find(|c| c.name() == name)
    }
}

/// Which traces replayed together share one simulated prompt cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CacheScope {
    /// The provider's cache belongs to the account: traces of one account
    /// (whose calls all have start times) meet one cache, in start-time
    /// order, so a session can start warm on another's prefix.
    #[default]
    Account,
    /// Every trace starts with a cold cache of its own.
    Trace,
}

impl CacheScope {
    /// `account` / `trace`, as written on the command line.
    pub fn name(self) -> &'static str {
        match self {
            CacheScope::Account => "account",
            CacheScope::Trace => "trace",
        }
    }

    /// The groups of `traces` (indices, in order of first appearance) that
    /// share a cache: under [`CacheScope::Account`], the traces of one
    /// account (traces that name none count as one default account) whose
    /// calls all have start times; any other trace alone. Without start
    /// times there is no order to meet in.
    pub fn groups<'t>(self, traces: impl Iterator<Item = &'t Trace>) -> Vec<Vec<usize>> {
        self.groups_by(traces.map(|t| (t.account.as_deref(), t.has_timestamps())))
    }

    /// [`Self::groups`] of traces given as their account and whether all
    /// their calls have start times.
    pub fn groups_by<'t>(
        self,
        traces: impl Iterator<Item = (Option<&'t str>, bool)>,
    ) -> Vec<Vec<usize>> {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut by_account: std::collections::HashMap<String, usize> = Default::default();
        for (i, (account, timestamps)) in traces.enumerate() {
            if self == CacheScope::Trace || !timestamps {
                groups.push(vec![i]);
                continue;
            }
            let key = account.unwrap_or_default().to_owned();
            match by_account.get(&key) {
                Some(&g) => groups[g].push(i),
                None => {
                    by_account.insert(key, groups.len());
                    groups.push(vec![i]);
                }
            }
        }
        groups
    }
}

/// How every figure is priced and counted.
#[derive(Clone)]
pub struct CostPlan {
    /// The price table (built-in, perhaps extended by a file).
    pub pricing: Pricing,
    /// The file that extended it, if any (for the report's assumptions).
    pub pricing_file: Option<PathBuf>,
    /// The tokenizer spec as given (`o200k_base`, `chars:4`, …).
    pub tokenizer_spec: String,
    /// The tokenizer it names.
    pub tokenizer: Arc<dyn Tokenizer>,
    /// Calibration on recorded usage.
    pub calibration: CalibrationChoice,
    /// The Batch API discount.
    pub batch: bool,
    /// Which traces share a simulated cache.
    pub cache_scope: CacheScope,
    /// An unpriced call is an error (`--strict-prices`), not set aside.
    pub strict_prices: bool,
    /// The calls set aside as the traces were loaded, for lack of a price
    /// ([`crate::unpriced`]).
    pub unpriced: crate::unpriced::Unpriced,
}

impl std::fmt::Debug for CostPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CostPlan")
            .field("pricing_file", &self.pricing_file)
            .field("tokenizer_spec", &self.tokenizer_spec)
            .field("calibration", &self.calibration)
            .field("batch", &self.batch)
            .field("cache_scope", &self.cache_scope)
            .field("strict_prices", &self.strict_prices)
            .field("unpriced", &self.unpriced)
            .finish_non_exhaustive()
    }
}

impl CostPlan {
    /// Prices from `pricing_file` (or the built-in table), counts with the
    /// tokenizer `tokenizer_spec` names.
    pub fn new(
        pricing_file: Option<&Path>,
        tokenizer_spec: &str,
        calibration: CalibrationChoice,
        batch: bool,
    ) -> Result<Self, AppError> {
        let pricing = match pricing_file {
            Some(p) => Pricing::with_file(p)?,
            None => Pricing::builtin(),
        };
        let tokenizer =
            parse_tokenizer(tokenizer_spec).map_err(|e| AppError::Usage(e.to_string()))?;
        Ok(CostPlan {
            pricing,
            pricing_file: pricing_file.map(Path::to_path_buf),
            tokenizer_spec: tokenizer_spec.to_owned(),
            tokenizer,
            calibration,
            batch,
            cache_scope: CacheScope::default(),
            strict_prices: false,
            unpriced: Default::default(),
        })
    }

    /// `traces` without their unpriced calls, counted in
    /// [`Self::unpriced`] ([`crate::unpriced::sift`]); `priced_as`: the
    /// model the command prices every call as, if any.
    pub fn sift(&mut self, traces: Vec<Trace>, priced_as: Option<&str>) -> Vec<Trace> {
        crate::unpriced::sift_all(traces, &self.pricing, priced_as, &mut self.unpriced)
    }

    /// One trace, as [`Self::sift`].
    pub fn sift_one(&mut self, trace: Trace, priced_as: Option<&str>) -> crate::unpriced::Sifted {
        crate::unpriced::sift(trace, &self.pricing, priced_as, &mut self.unpriced)
    }

    /// Once every trace is loaded and `traces_left` kept: under
    /// `--strict-prices`, the unpriced calls as an error; and when no
    /// trace is left, the first unpriced model's (there is nothing to
    /// replay, and the user is told how to price it).
    pub fn check_unpriced(&self, traces_left: usize) -> Result<(), AppError> {
        if let (true, Some(e)) = (self.strict_prices, self.unpriced.strict_error()) {
            return Err(e);
        }
        if traces_left == 0
            && let Some(m) = self.unpriced.models().first()
        {
            self.pricing.lookup(&m.model)?;
        }
        Ok(())
    }

    /// A fresh memo of token counts for one pipeline run.
    pub fn memo(&self) -> TokenMemo {
        TokenMemo::new(self.tokenizer.clone())
    }

    /// What the replays of one pipeline run share: these prices, `memo`,
    /// this plan's Batch API choice, and `progress` told of each call.
    pub fn replay_context<'a>(
        &'a self,
        memo: &'a TokenMemo,
        progress: Option<&'a dyn Progress>,
    ) -> ReplayContext<'a> {
        ReplayContext::new(&self.pricing, memo).with_opts(ReplayOptions {
            batch: self.batch,
            progress,
            ..Default::default()
        })
    }
}

/// The model whose framing calibrates a trace's token counts: the trace's
/// own, whatever model a config prices with, since the recorded usage the
/// factor is fitted on came from it; when the price table does not know
/// the trace's model (a log that recorded none is `unknown`), `priced_as`,
/// the model the caller prices it with, since that is the only framing
/// there is to count with. Every pipeline prepares a trace with this one
/// rule, so the same trace, config and model give the same figures in
/// `replay`, `sweep`, `report` and `check`.
pub fn calibration_model<'p>(
    pricing: &'p Pricing,
    trace: &Trace,
    priced_as: Option<&str>,
) -> Result<&'p ModelPrice, AppError> {
    Ok(tracecost_replay::autocompact::calibration_price(
        pricing, trace, priced_as,
    )?)
}

/// One trace and the config it is replayed under.
#[derive(Debug, Clone)]
pub struct TraceRun {
    /// The trace.
    pub trace: Trace,
    /// The config, resolved for this trace.
    pub config: Config,
    /// Policies the options implied.
    pub implied: Vec<Implied>,
    /// Parts of the trace's status quo kept because no option named them.
    pub kept: Vec<tracecost_policy::Kept>,
}

/// `replay`: each trace under one config.
#[derive(Debug)]
pub struct ReplayPlan {
    /// The runs, in input order.
    pub runs: Vec<TraceRun>,
    /// Prices and tokens.
    pub cost: CostPlan,
}

/// `sweep`: every trace under every config of a grid. Built only by
/// [`SweepPlan::from_grid`], [`SweepPlan::from_configs`] and
/// [`SweepPlan::from_grid_stored`], which check every (trace, config) pair
/// once and keep the answer: which configs apply to which traces.
#[derive(Debug)]
pub struct SweepPlan {
    /// Every trace's outline, in the plan's order.
    pub(crate) outlines: super::outline::Outlines,
    /// The traces themselves.
    pub(crate) held: Held,
    /// The grid as given (for the report's assumptions).
    pub grid: GridSpec,
    /// Models to price with (empty: each trace's own).
    pub models: Vec<String>,
    /// What savings are measured against, for every trace; `None`: each
    /// trace's status quo ([`Config::status_quo`]).
    pub baseline: Option<Config>,
    /// Price of one recall (USD); default one extra round trip.
    pub recall_cost_usd: Option<f64>,
    /// Prices and tokens.
    pub cost: CostPlan,
    /// The configs (expanded from the grid, then the traces' baselines)
    /// and which of them apply to which trace.
    pub(crate) applicability: Applicability,
}

/// Where a plan's traces are.
#[derive(Debug)]
pub(crate) enum Held {
    /// In memory, whole, in the plan's order.
    Whole(Vec<Trace>),
    /// In a store, read back one at a time: a report of a fleet.
    Stored(Arc<super::store::TraceStore>),
}

/// An account's traces (`group`: indices into the plan's traces, in the
/// plan's order) cut where they share no cache: a segment starts at a
/// trace whose calls all start more than `hold_ms` after every call of the
/// traces that started before it, so that a cache holding an entry at
/// most `hold_ms` after the request that last touched it
/// ([`tracecost_replay::longest_hold_ms`]) holds nothing a later segment can
/// read, and each segment replayed afresh gives the figures the account
/// replayed whole gives. Segments come in time order, each in the plan's
/// order. One segment when `hold_ms` is `None` or a trace has a call
/// without a start time.
pub fn segments(
    group: &[usize],
    head: impl Fn(usize) -> TraceHead,
    hold_ms: Option<u64>,
) -> Vec<Vec<usize>> {
    let spans: Option<Vec<(u64, u64)>> = group.iter().map(|&i| head(i).span_ms).collect();
    let (Some(hold), Some(spans)) = (hold_ms, spans) else {
        return vec![group.to_vec()];
    };
    let mut order: Vec<usize> = (0..group.len()).collect();
    order.sort_by_key(|&k| (spans[k].0, k));
    let mut out: Vec<Vec<usize>> = Vec::new();
    // The latest call start of the traces so far (in order of their
    // earliest, so that every later trace starts no earlier than this one).
    let mut latest: Option<u64> = None;
    for k in order {
        let (first, last) = spans[k];
        match (latest, out.last_mut()) {
            (Some(l), Some(seg)) if first <= l.saturating_add(hold) => seg.push(k),
            _ => out.push(vec![k]),
        }
        latest = Some(latest.map_or(last, |l| l.max(last)));
    }
    for seg in &mut out {
        seg.sort_unstable();
        for k in seg.iter_mut() {
            *k = group[*k];
        }
    }
    out
}

impl SweepPlan {
    /// Trace `i`'s head.
    pub fn head(&self, i: usize) -> TraceHead {
        self.outlines.head(i)
    }

    /// Every trace's outline, in the plan's order: what the plan knows of
    /// each trace without reading it ([`Self::trace`] gives one whole).
    pub fn traces(&self) -> &super::outline::Outlines {
        &self.outlines
    }

    /// The traces, whole, in the plan's order, when the plan holds them in
    /// memory; `None` when they are stored ([`Self::from_grid_stored`]),
    /// to be read back one at a time ([`Self::trace`]).
    pub fn whole_traces(&self) -> Option<&[Trace]> {
        match &self.held {
            Held::Whole(traces) => Some(traces),
            Held::Stored(_) => None,
        }
    }

    /// Whether the traces are read from a store, a segment at a time.
    pub fn is_stored(&self) -> bool {
        matches!(self.held, Held::Stored(_))
    }

    /// Trace `i`, whole: read from the store (with the names the plan gave
    /// it), or the plan's own.
    pub fn trace(&self, i: usize) -> Result<std::borrow::Cow<'_, Trace>, AppError> {
        let missing = || AppError::Usage(format!("no trace {} of {}", i + 1, self.outlines.len()));
        match &self.held {
            Held::Stored(store) => {
                let outline = self.outlines.get(i)?;
                Ok(std::borrow::Cow::Owned(store.get(i, &outline)?))
            }
            Held::Whole(traces) => traces
                .get(i)
                .map(std::borrow::Cow::Borrowed)
                .ok_or_else(missing),
        }
    }

    /// The digest of trace `i`'s bytes ([`Self::trace_bytes`]) as a cache
    /// keys it: found as they were read when the load had a cache, else
    /// read again now.
    pub fn trace_digest(&self, i: usize) -> Result<crate::digest::Key, AppError> {
        if let Held::Stored(store) = &self.held
            && let Some(d) = store.digest(i)
        {
            return Ok(d);
        }
        Ok(crate::digest::bytes_digest(&self.trace_bytes(i)?))
    }

    /// Trace `i`'s bytes: its line of the input (or its copy) when the
    /// traces are stored, its JSON line otherwise.
    pub fn trace_bytes(&self, i: usize) -> Result<Vec<u8>, AppError> {
        match &self.held {
            Held::Stored(store) => Ok(store.raw(i)?.0),
            Held::Whole(traces) => traces
                .get(i)
                .map(|t| tracecost_trace::to_json_line(t).into_bytes())
                .ok_or_else(|| {
                    AppError::Internal(format!("no trace {} of {}", i + 1, traces.len()))
                }),
        }
    }

    /// The shape of trace `i`'s requests: read back from the store, or
    /// found now.
    pub fn shape(&self, i: usize) -> Result<tracecost_replay::sweep::RequestShape, AppError> {
        match &self.held {
            Held::Stored(store) => store.shape(i),
            Held::Whole(traces) => traces
                .get(i)
                .map(tracecost_replay::sweep::RequestShape::of)
                .ok_or_else(|| AppError::Internal(format!("no trace {} in the plan", i + 1))),
        }
    }

    /// The configs swept, expanded from the grid.
    pub fn configs(&self) -> &[Config] {
        self.applicability.grid()
    }

    /// Which configs apply to which traces (indices into [`Self::traces`]).
    pub fn applicability(&self) -> &Applicability {
        &self.applicability
    }

    /// The model `trace` is calibrated with when its own is not priced
    /// ([`calibration_model`]): the first model named.
    pub fn priced_as(&self) -> Option<&str> {
        self.models.first().map(String::as_str)
    }
}

/// What savings on `trace` are measured against: `baseline`, else the
/// trace's status quo ([`Config::status_quo`]). With one model named, it is
/// priced with that model too, so savings compare like with like. A trace
/// whose own model the price table does not know is priced with the first
/// model named (else it could not be priced at all).
pub(crate) fn baseline_for(
    trace: &impl tracecost_trace::TraceFacts,
    baseline: Option<&Config>,
    models: &[String],
    cost: &CostPlan,
) -> Result<Config, AppError> {
    let mut c = match baseline {
        Some(c) => c.clone(),
        None => Config::status_quo(trace)?,
    };
    if c.model.is_none() {
        let unpriced = cost.pricing.lookup(trace.model()).is_err();
        match models {
            [one] => c.model = Some(one.clone()),
            [first, ..] if unpriced => c.model = Some(first.clone()),
            _ => {}
        }
    }
    Ok(c)
}

/// `report`: a sweep, the stability of each recommendation, the files.
#[derive(Debug)]
pub struct ReportPlan {
    /// The sweep.
    pub sweep: SweepPlan,
    /// What the inputs held that was not read (`--skip-invalid`'s damaged
    /// lines and files, unreadable entries of a folder), one line each as
    /// [`crate::SkippedSummary::unread_lines`] says them: the report names
    /// them, since its figures lack them.
    pub unread: Vec<String>,
}

/// `stability`: each trace under one config.
pub struct StabilityPlan {
    /// The runs.
    pub runs: Vec<TraceRun>,
    /// The tokenizer spec (a check in another process is given it).
    pub tokenizer_spec: String,
    /// The tokenizer for the surviving-prefix figures.
    pub tokenizer: Arc<dyn Tokenizer>,
}

/// One entry of a baseline, resolved.
#[derive(Debug)]
pub struct CheckEntry {
    /// Index into the baseline's entries.
    pub index: usize,
    /// Index into [`CheckPlan::files`].
    pub file: usize,
    /// Index of the trace in that file.
    pub trace: usize,
    /// The config.
    pub config: Config,
}

/// `check`: a baseline's entries, every trace loaded, every config parsed.
#[derive(Debug)]
pub struct CheckPlan {
    /// The baseline file.
    pub path: PathBuf,
    /// Its contents.
    pub baseline: Baseline,
    /// Tolerance in percent.
    pub tolerance_pct: f64,
    /// Rewrite the baseline's figures instead of comparing.
    pub update: bool,
    /// Each trace file the entries name once: (as written, traces).
    pub files: Vec<(String, Vec<Trace>)>,
    /// The entries.
    pub entries: Vec<CheckEntry>,
    /// Prices and tokens (from the baseline's settings).
    pub cost: CostPlan,
}

/// `usage`: Claude Code roots, folders or files.
#[derive(Debug)]
pub struct UsagePlan {
    /// Where to look.
    pub paths: Vec<PathBuf>,
    /// Prices.
    pub pricing: Pricing,
}

/// `import`: inputs in one format.
#[derive(Debug)]
pub struct ImportPlan {
    /// The format; `None`: decided from each file's content.
    pub format: Option<InputFormat>,
    /// Files or directories.
    pub inputs: Vec<PathBuf>,
    /// Options.
    pub options: ImportOptions,
}

/// `recall`: what the recall tool answers for one id of a trace.
#[derive(Debug)]
pub struct RecallPlan {
    /// The traces whose results are recorded.
    pub traces: Vec<Trace>,
    /// A mem_id (`tm_…`) or a tool_use id.
    pub id: String,
    /// The request.
    pub request: tracecost_engine::recall::RecallRequest,
    /// A durable ledger directory to record into and recall from.
    pub ledger_dir: Option<PathBuf>,
    /// At most this many chars of the answer: a longer one is cut there and
    /// ends with a line saying so and how long the whole answer is. For a
    /// caller whose bound is not the request's `max_chars` (with a query,
    /// the tool reads that as the context of each match). `None`: the
    /// answer as the tool gives it.
    pub answer_chars: Option<u64>,
}

/// Loads every trace of `paths`, in order, with the loader's warnings.
pub fn load_traces(
    paths: &[PathBuf],
    progress: &dyn Progress,
) -> Result<(Vec<Trace>, Vec<Warning>), AppError> {
    let mut traces = Vec::new();
    let mut warnings = Vec::new();
    for p in paths {
        let loaded = tracecost_trace::Loader::new(p).progress(progress).load()?;
        traces.extend(loaded.traces);
        warnings.extend(loaded.warnings);
    }
    Ok((traces, warnings))
}

//! Typed plans: everything a pipeline needs, resolved before it runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::AppError;
use super::baseline::Baseline;
use crate::cost::pricing::{ModelPrice, Pricing};
use crate::cost::tokens::{TokenMemo, Tokenizer, parse_tokenizer};
use crate::policy::{Config, GridSpec, Implied};
use crate::progress::Progress;
use crate::trace::Trace;
use crate::trace::Warning;
use crate::trace::import::detect::{self, FileKind};
use crate::trace::import::{Format, ImportError, ImportOptions, ImportReport};

/// Whether token counts are calibrated on a trace's recorded usage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Calibration {
    /// Fit a per-trace factor where usage was recorded.
    #[default]
    Auto,
    /// Use the tokenizer's counts as they are.
    Off,
}

impl Calibration {
    /// `auto` / `off`, as written in baselines and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Calibration::Auto => "auto",
            Calibration::Off => "off",
        }
    }

    /// The calibration called `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        [Calibration::Auto, Calibration::Off]
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
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut by_account: std::collections::HashMap<String, usize> = Default::default();
        for (i, t) in traces.enumerate() {
            if self == CacheScope::Trace || !t.has_timestamps() {
                groups.push(vec![i]);
                continue;
            }
            let key = t.account.clone().unwrap_or_default();
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
    pub calibration: Calibration,
    /// The Batch API discount.
    pub batch: bool,
    /// Which traces share a simulated cache.
    pub cache_scope: CacheScope,
}

impl std::fmt::Debug for CostPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CostPlan")
            .field("pricing_file", &self.pricing_file)
            .field("tokenizer_spec", &self.tokenizer_spec)
            .field("calibration", &self.calibration)
            .field("batch", &self.batch)
            .field("cache_scope", &self.cache_scope)
            .finish_non_exhaustive()
    }
}

impl CostPlan {
    /// Prices from `pricing_file` (or the built-in table), counts with the
    /// tokenizer `tokenizer_spec` names.
    pub fn new(
        pricing_file: Option<&Path>,
        tokenizer_spec: &str,
        calibration: Calibration,
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
        })
    }

    /// A fresh memo of token counts for one pipeline run.
    pub fn memo(&self) -> TokenMemo {
        TokenMemo::new(self.tokenizer.clone())
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
    match (pricing.lookup(&trace.model), priced_as) {
        (Ok(price), _) => Ok(price),
        (Err(_), Some(model)) => Ok(pricing.lookup(model)?),
        (Err(e), None) => Err(e.into()),
    }
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
    pub kept: Vec<crate::policy::Kept>,
}

/// `replay`: each trace under one config.
#[derive(Debug)]
pub struct ReplayPlan {
    /// The runs, in input order.
    pub runs: Vec<TraceRun>,
    /// Prices and tokens.
    pub cost: CostPlan,
}

/// `sweep`: every trace under every config of a grid.
#[derive(Debug)]
pub struct SweepPlan {
    /// The traces.
    pub traces: Vec<Trace>,
    /// The grid as given (for the report's assumptions).
    pub grid: GridSpec,
    /// Models to price with (empty: each trace's own).
    pub models: Vec<String>,
    /// The configs, expanded from the grid.
    pub configs: Vec<Config>,
    /// What savings are measured against, for every trace; `None`: each
    /// trace's status quo ([`Config::status_quo`]).
    pub baseline: Option<Config>,
    /// Price of one recall (USD); default one extra round trip.
    pub recall_cost_usd: Option<f64>,
    /// Prices and tokens.
    pub cost: CostPlan,
}

impl SweepPlan {
    /// What savings on `trace` are measured against: the plan's baseline,
    /// else the trace's status quo ([`Config::status_quo`]). With one model
    /// named, it is priced with that model too, so savings compare like
    /// with like.
    /// A trace whose own model the price table does not know is priced
    /// with the first model named (else it could not be priced at all).
    pub fn baseline_for(&self, trace: &Trace) -> Result<Config, AppError> {
        let mut c = match &self.baseline {
            Some(c) => c.clone(),
            None => Config::status_quo(trace)?,
        };
        if c.model.is_none() {
            let unpriced = self.cost.pricing.lookup(&trace.model).is_err();
            match self.models.as_slice() {
                [one] => c.model = Some(one.clone()),
                [first, ..] if unpriced => c.model = Some(first.clone()),
                _ => {}
            }
        }
        Ok(c)
    }

    /// The model `trace` is calibrated with when its own is not priced
    /// ([`calibration_model`]): the first model named.
    pub fn priced_as(&self) -> Option<&str> {
        self.models.first().map(String::as_str)
    }
}

/// `report`: a sweep, the stability of each recommendation, the files.
#[derive(Debug)]
pub struct ReportPlan {
    /// The sweep.
    pub sweep: SweepPlan,
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
    /// The format.
    pub format: Format,
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
    pub request: crate::engine::recall::RecallRequest,
    /// A durable ledger directory to record into and recall from.
    pub ledger_dir: Option<PathBuf>,
    /// At most this many chars of the answer: a longer one is cut there and
    /// ends with a line saying so and how long the whole answer is. For a
    /// caller whose bound is not the request's `max_chars` (with a query,
    /// the tool reads that as the context of each match). `None`: the
    /// answer as the tool gives it.
    pub answer_chars: Option<u64>,
}

/// How [`load_inputs`] reads its inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputOptions {
    /// Read every input with this importer instead of deciding from
    /// content, exactly as `import --from` reads them.
    pub from: Option<Format>,
    /// Skip a damaged file (and name it in [`SkippedSummary`]) instead of
    /// failing; importers skip damaged lines.
    pub skip_invalid: bool,
}

/// What [`load_inputs`] passed over: files of another kind found in
/// folders, what in a folder is no file to read, and damaged or unreadable
/// input under [`InputOptions::skip_invalid`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkippedSummary {
    /// Files of another kind (or empty), in the order they were found.
    pub other: Vec<PathBuf>,
    /// What was not read, and why, in the order found: in folders, FIFOs,
    /// sockets and devices (never opened) and symlinks to nothing or into
    /// a loop; under [`InputOptions::skip_invalid`], files and folders
    /// that could not be read.
    pub unread: Vec<(PathBuf, String)>,
    /// What was damaged and passed over under
    /// [`InputOptions::skip_invalid`]: a file or lines, with the place.
    pub damaged: Vec<String>,
}

/// How many file names a summary line shows before `…`.
const SHOWN_NAMES: usize = 5;

impl SkippedSummary {
    /// Nothing was skipped.
    pub fn is_empty(&self) -> bool {
        self.other.is_empty() && self.unread.is_empty() && self.damaged.is_empty()
    }

    /// One line for the files of another kind (their names, the first few),
    /// and one per damaged file or line skipped; none when nothing was
    /// skipped.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.other.is_empty() {
            let mut names: Vec<String> = self
                .other
                .iter()
                .take(SHOWN_NAMES)
                .map(|p| {
                    p.file_name().map_or_else(
                        || p.display().to_string(),
                        |n| n.to_string_lossy().into_owned(),
                    )
                })
                .collect();
            if self.other.len() > SHOWN_NAMES {
                names.push("…".to_owned());
            }
            out.push(format!(
                "skipped {} file(s) of another kind: {}",
                self.other.len(),
                names.join(", ")
            ));
        }
        for (path, why) in &self.unread {
            out.push(format!("skipped {}: {why}", path.display()));
        }
        for what in &self.damaged {
            out.push(format!("skipped damaged input: {what}"));
        }
        out
    }
}

/// The inputs a command reads: `paths`, or the bundled `traces/` folder
/// when none is named.
pub fn input_paths(paths: &[PathBuf]) -> Vec<PathBuf> {
    if paths.is_empty() {
        vec![PathBuf::from("traces")]
    } else {
        paths.to_vec()
    }
}

/// What [`load_inputs`] read.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every trace, in input order (folders in name order).
    pub traces: Vec<Trace>,
    /// The loader's warnings.
    pub warnings: Vec<Warning>,
    /// What was read in an unusual way and how, one line each (nothing
    /// was lost).
    pub notes: Vec<String>,
    /// What was passed over.
    pub skipped: SkippedSummary,
}

/// One thing to read, found in an input.
#[derive(Debug)]
enum Source {
    /// A canonical trace file.
    Trace(PathBuf),
    /// A log one importer reads.
    Log(Format, PathBuf),
    /// Claude Code folders and transcripts, imported together so that
    /// their traces come in the importer's order (sorted paths).
    ClaudeCode(Vec<PathBuf>),
}

/// Loads the traces of `paths` — canonical trace files, Claude Code
/// folders and transcripts, Anthropic, LangChain and OpenAI logs, and
/// folders of them — deciding what each file is from its content (see
/// [`crate::trace::import::detect`]); no paths means `traces/`.
///
/// A file named in `paths` must be one of those kinds. A folder is read in
/// name order, not recursively, except that Claude Code data (a config
/// root, `projects/` or a folder below it) goes whole to the Claude Code
/// importer; files of another kind in a folder are passed over and listed
/// in [`Loaded::skipped`]; other folders inside a folder are not read.
/// A damaged file is an error naming the file and the place, or with
/// [`InputOptions::skip_invalid`] is passed over and listed; in a Claude
/// Code transcript a damaged line is such an error (or, skipped, listed),
/// but an unfinished last line is a session being written and is passed
/// over as the importer does. Inputs that give no trace at all are an
/// error. All traces are held in memory: the pipelines take them whole.
pub fn load_inputs(
    paths: &[PathBuf],
    opts: &InputOptions,
    progress: &dyn Progress,
) -> Result<Loaded, AppError> {
    let paths = &input_paths(paths)[..];
    let import_opts = ImportOptions {
        skip_invalid: opts.skip_invalid,
        default_model: None,
    };
    let mut loaded = Loaded::default();
    if let Some(format) = opts.from {
        format.import_each(paths, &import_opts, progress, &mut |t| {
            loaded.traces.push(t);
            Ok::<_, AppError>(())
        })?;
        return Ok(loaded);
    }
    for path in paths {
        for source in sources(path, opts.skip_invalid, &mut loaded.skipped)? {
            read_source(source, opts, &import_opts, progress, &mut loaded)?;
        }
    }
    // Claude Code files may hold only bookkeeping, and damaged files may
    // all have been skipped: a run over nothing is an input error.
    if loaded.traces.is_empty() {
        let shown: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(AppError::Usage(format!(
            "{}: no traces found (no recorded call to replay)",
            shown.join(", ")
        )));
    }
    Ok(loaded)
}

/// What `path` holds to read, in order. A FIFO, socket or device named is
/// refused; under `skip_invalid`, a path that cannot be read is passed over
/// and listed.
fn sources(
    path: &Path,
    skip_invalid: bool,
    skipped: &mut SkippedSummary,
) -> Result<Vec<Source>, AppError> {
    // Under skip_invalid, what cannot be read is named and passed over.
    let unreadable = |err: AppError, skipped: &mut SkippedSummary| {
        if skip_invalid {
            skipped
                .unread
                .push((path.to_path_buf(), unreadable_why(path, &err)));
            Ok(Vec::new())
        } else {
            Err(err)
        }
    };
    let meta = match detect::file_or_folder(path) {
        Ok(meta) => meta,
        Err(e @ ImportError::NotAFile { .. }) => return Err(e.into()),
        Err(e) => return unreadable(e.into(), skipped),
    };
    if !meta.is_dir() {
        let kind = match detect::detect_file(path) {
            Ok(kind) => kind,
            Err(e) => return unreadable(e.into(), skipped),
        };
        return Ok(vec![match kind {
            FileKind::Trace => Source::Trace(path.to_path_buf()),
            FileKind::Log(Format::ClaudeCode) => Source::ClaudeCode(vec![path.to_path_buf()]),
            FileKind::Log(f) => Source::Log(f, path.to_path_buf()),
            // Named as a trace: the loader says what is wrong, and where.
            FileKind::Empty => Source::Trace(path.to_path_buf()),
            FileKind::Other if looks_like_json(path) => Source::Trace(path.to_path_buf()),
            FileKind::Other => {
                return Err(AppError::Usage(format!(
                    "{}: not a trace file, a Claude Code transcript, or an Anthropic, LangChain or OpenAI log",
                    path.display()
                )));
            }
        }]);
    }
    if detect::is_claude_code_folder(path) {
        return Ok(vec![Source::ClaudeCode(vec![path.to_path_buf()])]);
    }
    let listed: std::io::Result<Vec<PathBuf>> =
        std::fs::read_dir(path).and_then(|entries| entries.map(|e| e.map(|e| e.path())).collect());
    let mut entries = match listed {
        Ok(entries) => entries,
        Err(e) => {
            let err = AppError::Usage(format!("{}: cannot read directory: {e}", path.display()));
            return unreadable(err, skipped);
        }
    };
    entries.sort();
    let mut out = Vec::new();
    let mut claude: Option<usize> = None;
    let mut add_claude = |out: &mut Vec<Source>, p: PathBuf| match claude {
        Some(i) => {
            if let Source::ClaudeCode(v) = &mut out[i] {
                v.push(p);
            }
        }
        None => {
            claude = Some(out.len());
            out.push(Source::ClaudeCode(vec![p]));
        }
    };
    let (other_before, unread_before) = (skipped.other.len(), skipped.unread.len());
    for p in entries {
        // A FIFO is never opened (that would block), and an editor's lock
        // symlink (`.#name`, pointing nowhere) is no reason to stop.
        if let Some(why) = detect::never_read(&p) {
            skipped.unread.push((p, why));
            continue;
        }
        if p.is_dir() {
            if detect::is_claude_code_folder(&p) {
                add_claude(&mut out, p);
            }
            continue;
        }
        let kind = match detect::detect_file(&p) {
            Ok(kind) => kind,
            Err(e) if skip_invalid => {
                let why = unreadable_why(&p, &e.into());
                skipped.unread.push((p, why));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        match kind {
            FileKind::Trace => out.push(Source::Trace(p)),
            FileKind::Log(Format::ClaudeCode) => add_claude(&mut out, p),
            FileKind::Log(f) => out.push(Source::Log(f, p)),
            FileKind::Empty | FileKind::Other => skipped.other.push(p),
        }
    }
    if out.is_empty() {
        return Err(AppError::Usage(format!(
            "{}: no traces, Claude Code transcripts or logs in this directory ({} file(s) of another kind{})",
            path.display(),
            skipped.other.len() - other_before,
            match skipped.unread.len() - unread_before {
                0 => String::new(),
                n => format!(", {n} not read"),
            }
        )));
    }
    Ok(out)
}

/// Why a path could not be read: the error's message without the path it
/// starts with (the summary line names the path).
fn unreadable_why(path: &Path, err: &AppError) -> String {
    let text = err.to_string();
    let named = format!("{}: ", path.display());
    text.strip_prefix(&named)
        .map_or_else(|| text.clone(), str::to_owned)
}

/// Whether a file of no known kind is meant as JSON (so that the trace
/// loader, not a generic message, says what is wrong with it).
fn looks_like_json(path: &Path) -> bool {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|e| matches!(e.as_str(), "json" | "jsonl" | "ndjson"))
}

fn read_source(
    source: Source,
    opts: &InputOptions,
    import_opts: &ImportOptions,
    progress: &dyn Progress,
    loaded: &mut Loaded,
) -> Result<(), AppError> {
    // A damaged file fails the load, or under skip_invalid is named and
    // passed over.
    let skip_file = |err: AppError, loaded: &mut Loaded| {
        if opts.skip_invalid {
            loaded.skipped.damaged.push(format!("{err} (file skipped)"));
            Ok(())
        } else {
            Err(err)
        }
    };
    match source {
        Source::Trace(path) => match crate::trace::load_path_with(&path, progress) {
            Ok(t) => {
                loaded.traces.extend(t.traces);
                loaded.warnings.extend(t.warnings);
            }
            Err(e) => skip_file(e.into(), loaded)?,
        },
        Source::Log(format, path) => {
            match import_all(format, std::slice::from_ref(&path), import_opts, progress) {
                Ok((traces, report)) => {
                    // Only under skip_invalid do log importers pass over lines.
                    if report.skipped_lines > 0 {
                        loaded.skipped.damaged.push(format!(
                            "{}: {} damaged line(s) skipped",
                            path.display(),
                            report.skipped_lines
                        ));
                    }
                    loaded.traces.extend(traces);
                }
                Err(e) => skip_file(e.into(), loaded)?,
            }
        }
        Source::ClaudeCode(inputs) => {
            let (traces, report) = import_all(Format::ClaudeCode, &inputs, import_opts, progress)?;
            loaded.skipped.unread.extend(report.unread.iter().cloned());
            if report.joined_lines > 0 {
                loaded.notes.push(format!(
                    "{}: {} line(s) held two or more records with no newline between them (Claude Code writes these now and then); each record was read",
                    shown_inputs(&inputs),
                    report.joined_lines
                ));
            }
            if report.skipped_lines > 0 {
                // The importer always passes over lines that are not JSON,
                // as ccusage does; here a damaged line is an error unless
                // skip_invalid, and an unfinished last line (a session being
                // written) is not damage.
                let mut unreadable = Vec::new();
                let files = crate::trace::import::claude_code::discover_readable(
                    &inputs,
                    opts.skip_invalid.then_some(&mut unreadable),
                )?;
                let passed_over: Vec<&PathBuf> = report.unread.iter().map(|(p, _)| p).collect();
                for file in files.iter().filter(|f| !passed_over.contains(f)) {
                    for err in detect::damaged_lines(file)? {
                        if !opts.skip_invalid {
                            return Err(err.into());
                        }
                        loaded.skipped.damaged.push(format!("{err} (line skipped)"));
                    }
                }
            }
            loaded.traces.extend(traces);
        }
    }
    Ok(())
}

/// Inputs named in one message: their paths, joined.
fn shown_inputs(inputs: &[PathBuf]) -> String {
    let shown: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    shown.join(", ")
}

/// Every trace `format` imports from `inputs`, with the importer's report.
fn import_all(
    format: Format,
    inputs: &[PathBuf],
    opts: &ImportOptions,
    progress: &dyn Progress,
) -> Result<(Vec<Trace>, ImportReport), ImportError> {
    let mut traces = Vec::new();
    let report = format.import_each(inputs, opts, progress, &mut |t| {
        traces.push(t);
        Ok::<_, ImportError>(())
    })?;
    Ok((traces, report))
}

/// Loads every trace of `paths`, in order, with the loader's warnings.
pub fn load_traces(
    paths: &[PathBuf],
    progress: &dyn Progress,
) -> Result<(Vec<Trace>, Vec<Warning>), AppError> {
    let mut traces = Vec::new();
    let mut warnings = Vec::new();
    for p in paths {
        let loaded = crate::trace::load_path_with(p, progress)?;
        traces.extend(loaded.traces);
        warnings.extend(loaded.warnings);
    }
    Ok((traces, warnings))
}

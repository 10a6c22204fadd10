//! `check`: a baseline file read into a plan, replayed, and compared.

use std::path::{Path, PathBuf};

use crate::AppError;
use crate::baseline::{
    BASELINE_FORMAT, Baseline, Comparison, DEFAULT_TOLERANCE_PCT, Expected, Verdict,
};
use crate::plan::{CalibrationChoice, CheckEntry, CheckPlan, CostPlan, calibration_model};
use tracecost_policy::Config;
use tracecost_replay::PreparedTrace;
use tracecost_trace::Trace;

impl CheckPlan {
    /// Reads the baseline at `path`, loads every trace it names (paths
    /// relative to the baseline's folder) and parses every config, before
    /// anything is replayed. `tolerance_pct` overrides the file's.
    pub fn from_file(
        path: &Path,
        tolerance_pct: Option<f64>,
        update: bool,
        pricing_file: Option<&Path>,
        load: &mut dyn FnMut(&Path) -> Result<Vec<Trace>, AppError>,
    ) -> Result<CheckPlan, AppError> {
        let shown = path.display().to_string();
        let bad = |message: String| AppError::Baseline {
            path: shown.clone(),
            message,
        };
        let baseline = read_baseline(path, &bad)?;
        let calibration = validate(&baseline, &bad)?;
        let tolerance = tolerance_pct
            .or(baseline.tolerance_pct)
            .unwrap_or(DEFAULT_TOLERANCE_PCT);
        crate::limits::TOLERANCE_PCT
            .check(tolerance)
            .map_err(AppError::Usage)?;
        let cost = CostPlan::new(
            pricing_file,
            &baseline.settings.tokenizer,
            calibration,
            baseline.settings.batch,
        )?;
        let mut named = Named {
            dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            cost,
            update,
            files: Vec::new(),
            resolved: Vec::new(),
            sifted: Vec::new(),
            set_aside: Vec::new(),
            entries: Vec::new(),
        };
        for (i, e) in baseline.entries.iter().enumerate() {
            named.add(i, e, load, &bad)?;
        }
        Ok(CheckPlan {
            path: PathBuf::from(path),
            baseline,
            tolerance_pct: tolerance,
            update,
            files: named.files,
            entries: named.entries,
            cost: named.cost,
        })
    }
}

/// The baseline file at `path`, parsed (a FIFO refused unopened, bytes
/// that are not UTF-8 named by line and column).
fn read_baseline(path: &Path, bad: &dyn Fn(String) -> AppError) -> Result<Baseline, AppError> {
    // A FIFO would block the read for ever: refused unopened.
    let meta = std::fs::metadata(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    if let Some(kind) = tracecost_import::detect::special_kind(&meta.file_type()) {
        return Err(bad(format!("is a {kind}, expected a baseline file")));
    }
    let bytes = std::fs::read(path).map_err(|e| bad(format!("cannot read: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let ok = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line_start = ok.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let line = ok.iter().filter(|&&b| b == b'\n').count() + 1;
        bad(format!("{line}:{}: not UTF-8", ok.len() - line_start + 1))
    })?;
    serde_json::from_str(&text).map_err(|e| {
        bad(format!(
            "{}:{}: {}",
            e.line(),
            e.column().max(1),
            tracecost_engine::json::error_message(&e)
        ))
    })
}

/// Checks what the baseline says before anything is loaded: its format,
/// its entries, its tolerance, tokenizer and calibration, and each
/// expectation's figures. Returns the calibration it names.
fn validate(
    baseline: &Baseline,
    bad: &dyn Fn(String) -> AppError,
) -> Result<CalibrationChoice, AppError> {
    if baseline.format != BASELINE_FORMAT {
        // Another version is named; any other value is not echoed: the
        // file may be anything (a settings file holding secrets).
        let found = if baseline.format.starts_with("tracecost.baseline/") {
            format!("{:?}", baseline.format)
        } else {
            "the format of something else".to_owned()
        };
        return Err(bad(format!(
            "at /format: expected \"{BASELINE_FORMAT}\", found {found}"
        )));
    }
    if baseline.entries.is_empty() {
        return Err(bad("at /entries: expected at least one entry".into()));
    }
    let range = crate::limits::TOLERANCE_PCT;
    if let Some(t) = baseline.tolerance_pct
        && range.check(t).is_err()
    {
        return Err(bad(format!(
            "at /tolerance_pct: expected a number from {} to {}{}, found {t}",
            range.min, range.max, range.unit
        )));
    }
    if let Err(e) = tracecost_cost::tokens::parse_tokenizer(&baseline.settings.tokenizer) {
        return Err(bad(format!("at /settings/tokenizer: {e}")));
    }
    let Some(calibration) = CalibrationChoice::from_name(&baseline.settings.calibrate) else {
        return Err(bad(format!(
            "at /settings/calibrate: expected \"auto\" or \"off\", found {:?}",
            baseline.settings.calibrate
        )));
    };
    for (i, e) in baseline.entries.iter().enumerate() {
        if let Some(x) = &e.expected {
            validate_expected(i, x, bad)?;
        }
    }
    Ok(calibration)
}

/// Entry `i`'s expected figures: token counts JSON can hold exactly, a
/// cost that is a non-negative number.
fn validate_expected(
    i: usize,
    x: &Expected,
    bad: &dyn Fn(String) -> AppError,
) -> Result<(), AppError> {
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
    Ok(())
}

/// The traces and configs a baseline's entries name, gathered entry by
/// entry: each file loaded once, each trace sifted of its unpriced calls
/// once.
struct Named {
    /// The baseline's folder: trace paths are relative to it.
    dir: PathBuf,
    cost: CostPlan,
    update: bool,
    /// Each file as the entries name it, with its traces.
    files: Vec<(String, Vec<Trace>)>,
    /// Each file's resolved path: `./a.json` and `a.json` are one file.
    resolved: Vec<Option<PathBuf>>,
    /// Traces already sifted of their unpriced calls, each once.
    sifted: Vec<(usize, usize)>,
    /// Those with no priced call.
    set_aside: Vec<(usize, usize)>,
    entries: Vec<CheckEntry>,
}

impl Named {
    /// Adds entry `i`: loads its file if it is new, finds its trace,
    /// parses its config; an entry whose trace has no priced call is left
    /// out.
    fn add(
        &mut self,
        i: usize,
        e: &crate::baseline::BaselineEntry,
        load: &mut dyn FnMut(&Path) -> Result<Vec<Trace>, AppError>,
        bad: &dyn Fn(String) -> AppError,
    ) -> Result<(), AppError> {
        let file = self.file(i, &e.trace, load, bad)?;
        let ti = self.trace(i, file, e, bad)?;
        let config: Config = e
            .config
            .parse()
            .map_err(|err: tracecost_policy::ConfigError| {
                bad(format!("at /entries/{i}/config: {err}"))
            })?;
        // The same pair twice would be checked twice and, with
        // `--update`, could hold two different expectations.
        if let Some(j) = self
            .entries
            .iter()
            .find(|c| c.file == file && c.trace == ti && c.config == config)
        {
            return Err(bad(format!(
                "at /entries/{i}: the same trace and config as /entries/{}; remove one",
                j.index
            )));
        }
        // An entry priced at its trace's own models is checked on the
        // calls that have a price; with none, it is left out (and the
        // calls named), as every command that prices does.
        if config.model.is_none() && !self.sift(file, ti) {
            return Ok(());
        }
        let t = &self.files[file].1[ti];
        tracecost_replay::check_config(t, &config)?;
        self.cost.pricing.lookup(config.model_for_trace(t))?;
        if !self.update && e.expected.is_none() {
            return Err(bad(format!(
                "at /entries/{i}/expected: missing; run with --update to record the current figures"
            )));
        }
        self.entries.push(CheckEntry {
            index: i,
            file,
            trace: ti,
            config,
        });
        Ok(())
    }

    /// The file entry `i` names (`name`, relative to the baseline), loaded
    /// the first time it is named.
    fn file(
        &mut self,
        i: usize,
        name: &str,
        load: &mut dyn FnMut(&Path) -> Result<Vec<Trace>, AppError>,
        bad: &dyn Fn(String) -> AppError,
    ) -> Result<usize, AppError> {
        let here = self.dir.join(name).canonicalize().ok();
        let same =
            |f: usize| self.files[f].0 == name || (here.is_some() && self.resolved[f] == here);
        if let Some(f) = (0..self.files.len()).find(|&f| same(f)) {
            return Ok(f);
        }
        confine(&self.dir, name).map_err(|why| {
            bad(format!(
                "at /entries/{i}/trace: {name:?} {why}; trace paths are relative to the baseline file"
            ))
        })?;
        self.files
            .push((name.to_owned(), load(&self.dir.join(name))?));
        self.resolved.push(here);
        Ok(self.files.len() - 1)
    }

    /// The trace of `file` entry `i` names (or the file's only trace).
    fn trace(
        &self,
        i: usize,
        file: usize,
        e: &crate::baseline::BaselineEntry,
        bad: &dyn Fn(String) -> AppError,
    ) -> Result<usize, AppError> {
        let traces = &self.files[file].1;
        match &e.name {
            Some(n) => traces.iter().position(|t| &t.name == n).ok_or_else(|| {
                bad(format!(
                    "at /entries/{i}/name: no trace named {n:?} in {}",
                    e.trace
                ))
            }),
            None if traces.len() == 1 => Ok(0),
            None => {
                let names: Vec<&str> = traces.iter().map(|t| t.name.as_str()).collect();
                Err(bad(format!(
                    "at /entries/{i}/name: {} holds {} traces; name one of: {}",
                    e.trace,
                    traces.len(),
                    names_shown(&names)
                )))
            }
        }
    }

    /// Sifts trace `ti` of `file` of its unpriced calls, the first time;
    /// whether any call is left to check.
    fn sift(&mut self, file: usize, ti: usize) -> bool {
        if self.set_aside.contains(&(file, ti)) {
            return false;
        }
        if self.sifted.contains(&(file, ti)) {
            return true;
        }
        self.sifted.push((file, ti));
        let t = &self.files[file].1[ti];
        let priced = |c| self.cost.pricing.lookup(t.model_of(c)).is_ok();
        if t.calls.iter().all(priced) {
            return true;
        }
        match self.cost.sift_one(t.clone(), None) {
            crate::unpriced::Sifted::Whole(t) | crate::unpriced::Sifted::Trimmed(t) => {
                self.files[file].1[ti] = t;
                true
            }
            crate::unpriced::Sifted::SetAside => {
                self.set_aside.push((file, ti));
                false
            }
        }
    }
}

/// Up to 20 trace names, in file order, and how many more there are: a
/// transcript with hundreds of subagents must not make a page of error.
fn names_shown(names: &[&str]) -> String {
    const SHOWN: usize = 20;
    let mut out = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        out.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    out
}

/// Why the baseline entry `entry` may not be read, if it may not: an
/// absolute path, or one that leads out of `dir`, the baseline's folder,
/// once `..` and symlinks are resolved. Nothing outside that folder is
/// read, whatever the file says, so a baseline from elsewhere (a pull
/// request, a download) cannot make `check` read the machine's other
/// files.
fn confine(dir: &Path, entry: &str) -> Result<(), String> {
    let rel = Path::new(entry);
    if rel.has_root() || rel.is_absolute() {
        return Err("is an absolute path".into());
    }
    let here = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let base = std::fs::canonicalize(here)
        .map_err(|e| format!("cannot be confined to the baseline's folder: {e}"))?;
    let leaves = || {
        Err(format!(
            "leaves the baseline's folder ({}); a baseline names only files in its folder or below",
            base.display()
        ))
    };
    // As written (`..` taken lexically), then as the file system resolves
    // it (symlinks): a path that does not resolve reads nothing.
    let mut lexical = base.clone();
    for c in rel.components() {
        match c {
            std::path::Component::ParentDir => {
                lexical.pop();
            }
            std::path::Component::Normal(n) => lexical.push(n),
            _ => {}
        }
    }
    if !lexical.starts_with(&base) {
        return leaves();
    }
    match std::fs::canonicalize(base.join(rel)) {
        Ok(resolved) if !resolved.starts_with(&base) => leaves(),
        _ => Ok(()),
    }
}

/// What a check found.
#[derive(Debug, Clone)]
pub enum CheckOutcome {
    /// `--update`: the baseline with the current figures, to be written.
    Updated(Baseline),
    /// The comparison of every entry.
    Compared {
        /// One row per entry.
        rows: Vec<Comparison>,
        /// The tolerance used, in percent.
        tolerance_pct: f64,
    },
}

impl CheckOutcome {
    /// Whether any (trace, config) got more expensive than allowed.
    pub fn regressed(&self) -> bool {
        match self {
            CheckOutcome::Updated(_) => false,
            CheckOutcome::Compared { rows, .. } => {
                rows.iter().any(|r| r.verdict == Verdict::Regression)
            }
        }
    }
}

/// Replays every entry of the plan and compares it with the baseline (or
/// records the figures, with `update`).
pub fn check(plan: &CheckPlan) -> Result<CheckOutcome, AppError> {
    let memo = plan.cost.memo();
    let mut measured: Vec<Option<Expected>> = vec![None; plan.baseline.entries.len()];
    for (fi, (_, traces)) in plan.files.iter().enumerate() {
        for (ti, t) in traces.iter().enumerate() {
            let mine: Vec<&CheckEntry> = plan
                .entries
                .iter()
                .filter(|e| e.file == fi && e.trace == ti)
                .collect();
            if mine.is_empty() {
                continue;
            }
            let priced_as = mine.iter().find_map(|e| e.config.model.as_deref());
            let price = calibration_model(&plan.cost.pricing, t, priced_as)?;
            let prepared = PreparedTrace::new(
                t,
                &memo,
                price,
                plan.cost.calibration == CalibrationChoice::Auto,
            );
            for e in mine {
                let ctx = plan.cost.replay_context(&memo, None);
                let r = if e.config.compaction.summarising().is_some() {
                    super::replay::replay_autocompacted(&[&prepared], &e.config, ctx)?
                        .pop()
                        .ok_or_else(|| AppError::Internal("no result for the trace".into()))?
                } else {
                    tracecost_replay::replay(&prepared, &e.config, ctx)?
                };
                measured[e.index] = Some(Expected::of(&r.totals));
            }
        }
    }
    if plan.update {
        let mut baseline = plan.baseline.clone();
        for (e, m) in baseline.entries.iter_mut().zip(&measured) {
            e.expected = *m;
        }
        return Ok(CheckOutcome::Updated(baseline));
    }
    let mut rows = Vec::new();
    for (e, m) in plan.baseline.entries.iter().zip(&measured) {
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
                plan.tolerance_pct,
            ));
        }
    }
    Ok(CheckOutcome::Compared {
        rows,
        tolerance_pct: plan.tolerance_pct,
    })
}

//! The pipelines: each takes a plan and returns typed results.

use rayon::prelude::*;
use std::collections::HashMap;
use std::io::Write;

use super::AppError;
use super::fleet::{SessionSummary, Summaries};
use super::fleet_cache::{EntryKind, FleetCache, Key};
use super::plan::{
    CostPlan, ImportPlan, RecallPlan, ReplayPlan, ReportPlan, StabilityPlan, SweepPlan, UsagePlan,
    calibration_model,
};
use super::results::{ReplayOutput, Savings, TraceReport};
use crate::cost::tokens::TokenMemo;
use crate::engine::handle::{Handle, one_line};
use crate::engine::ledger::{
    DurableLedger, InMemoryLedger, LedgerError, ToolResultLedger, record_result,
};
use crate::engine::message::{BlockKind, ContentBlock, Message};
use crate::policy::{BlockTokens, Compaction, CompactionRun, Config};
use crate::progress::{Progress, Unit};
use crate::replay::stability::{RunSource, StabilityReport};
use crate::replay::sweep::TraceSweep;
use crate::replay::{PreparedTrace, ReplayContext, ReplayResult, count_block};
use crate::trace::import::ImportReport;
use crate::trace::{Trace, TraceWriter};

pub use super::check::{CheckOutcome, check};

fn prepare<'t>(
    trace: &'t Trace,
    cost: &CostPlan,
    memo: &TokenMemo,
    priced_as: Option<&str>,
) -> Result<PreparedTrace<'t>, AppError> {
    let price = calibration_model(&cost.pricing, trace, priced_as)?;
    Ok(PreparedTrace::new(
        trace,
        memo,
        price,
        cost.calibration == super::Calibration::Auto,
    ))
}

/// Replays each run of the plan; a config with compaction is also replayed
/// without it, for the saving.
pub fn replay(plan: &ReplayPlan, progress: &dyn Progress) -> Result<Vec<ReplayOutput>, AppError> {
    let memo = plan.cost.memo();
    let ctx = plan.cost.replay_context(&memo, Some(progress));
    // One step per call replayed, the reference run without compaction
    // included.
    let runs = |c: &Config| {
        if c.compaction == Compaction::Off {
            1
        } else {
            2
        }
    };
    let steps: usize = plan
        .runs
        .iter()
        .map(|r| r.trace.calls.len() * runs(&r.config))
        .sum();
    progress.start("replay", steps as u64, Unit::Items);
    let mut outputs: Vec<Option<ReplayOutput>> = plan.runs.iter().map(|_| None).collect();
    for group in plan
        .cost
        .cache_scope
        .groups(plan.runs.iter().map(|r| &r.trace))
    {
        // Runs of one account under one config meet one cache.
        let mut by_config: Vec<(&Config, Vec<usize>)> = Vec::new();
        for i in group {
            let c = &plan.runs[i].config;
            match by_config.iter_mut().find(|(k, _)| *k == c) {
                Some((_, v)) => v.push(i),
                None => by_config.push((c, vec![i])),
            }
        }
        for (config, runs) in by_config {
            let prepared = runs
                .iter()
                .map(|&i| {
                    prepare(
                        &plan.runs[i].trace,
                        &plan.cost,
                        &memo,
                        config.model.as_deref(),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&PreparedTrace<'_>> = prepared.iter().collect();
            let results = replay_shared(&refs, config, ctx)?;
            // The same runs without compaction, for the saving.
            let references = match config.compaction {
                Compaction::Off => None,
                _ => {
                    let off = Config {
                        compaction: Compaction::Off,
                        ..config.clone()
                    };
                    Some(replay_shared(&refs, &off, ctx)?)
                }
            };
            for (k, (i, result)) in runs.iter().zip(results).enumerate() {
                let reference = references.as_ref().map(|r| &r[k].totals);
                let savings = Savings::of(&result.totals, reference);
                outputs[*i] = Some(ReplayOutput { result, savings });
            }
        }
    }
    Ok(outputs.into_iter().flatten().collect())
}

/// Replays `config` over traces that share one cache (one trace alone
/// replays as it always does).
fn replay_shared(
    prepared: &[&PreparedTrace<'_>],
    config: &Config,
    ctx: ReplayContext<'_>,
) -> Result<Vec<ReplayResult>, AppError> {
    if let [one] = prepared {
        return Ok(vec![crate::replay::replay(one, config, ctx)?]);
    }
    let per_trace =
        crate::replay::replay_group_shared(prepared, std::slice::from_ref(config), ctx)?;
    Ok(per_trace.into_iter().flatten().collect())
}

/// How many groups of traces sharing a cache are swept side by side: enough
/// to keep every core busy when each group is small (a trace alone, whose
/// configs may all send the same requests), few enough that only their
/// rows are in memory.
fn groups_at_once() -> usize {
    rayon::current_num_threads() * 2
}

/// The plan's traces in groups that share a cache (an account's, as the
/// plan's scope has it), each in the plan's order.
fn account_groups(sp: &SweepPlan) -> Result<Vec<Vec<usize>>, AppError> {
    let accounts = sp
        .traces()
        .iter()
        .map(|t| t.map(|t| t.shared.account.clone()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(sp.cost.cache_scope.groups_by(
        accounts
            .iter()
            .enumerate()
            .map(|(i, a)| (a.as_deref(), sp.head(i).timestamps)),
    ))
}

/// Sweeps every config of the plan over every trace.
pub fn sweep(plan: &SweepPlan, progress: &dyn Progress) -> Result<Vec<TraceSweep>, AppError> {
    let memo = plan.cost.memo();
    progress.start(
        "sweep",
        (plan.configs().len() * plan.traces().len()) as u64,
        Unit::Items,
    );
    let mut out: Vec<Option<TraceSweep>> = plan.traces().iter().map(|_| None).collect();
    let groups = account_groups(plan)?;
    for batch in groups.chunks(groups_at_once()) {
        let swept = batch
            .par_iter()
            .map(|group| sweep_group(group, plan, &memo, progress))
            .collect::<Vec<_>>();
        for (group, sweeps) in batch.iter().zip(swept) {
            for (&i, s) in group.iter().zip(sweeps?) {
                out[i] = Some(s);
            }
        }
    }
    Ok(out.into_iter().flatten().collect())
}

/// Sweeps every config of the plan over the traces `group` names (indices
/// into the plan's traces), which share one simulated cache.
fn sweep_group(
    group: &[usize],
    plan: &SweepPlan,
    memo: &TokenMemo,
    progress: &dyn Progress,
) -> Result<Vec<TraceSweep>, AppError> {
    let traces = group
        .iter()
        .map(|&i| plan.trace(i))
        .collect::<Result<Vec<_>, _>>()?;
    // An account's traces are counted side by side (each counts its own
    // texts in parallel too, but a short session has few).
    let prepared = traces
        .par_iter()
        .map(|t| prepare(t, &plan.cost, memo, plan.priced_as()))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&PreparedTrace<'_>> = prepared.iter().collect();
    // A grid applies per trace: a config that cannot apply to a trace (the
    // plan made sure it applies to some other) is skipped for it, as the
    // plan's checks found.
    Ok(crate::replay::sweep::sweep_checked(
        &refs,
        &plan.applicability.subset(group),
        plan.cost.replay_context(memo, None),
        plan.recall_cost_usd,
        &|| progress.advance(1),
    )?)
}

/// What `report` produced: the fleet's answer, and what it keeps of each
/// session (its figures, not its per-call rows).
#[derive(Debug)]
pub struct ReportOutcome {
    /// The fleet's answer.
    pub fleet: super::fleet::Fleet,
    /// Per trace, in the plan's order: in memory, or (a stored plan's)
    /// spilled to a temporary file.
    pub sessions: Summaries,
    /// How many traces a cache gave, when the report had one.
    pub cache: Option<CacheUse>,
}

/// What a report took from its cache ([`report_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheUse {
    /// Traces read from the cache, not replayed.
    pub found: usize,
    /// Traces replayed (and kept in the cache for the next run).
    pub replayed: usize,
    /// Traces replayed again for their page alone.
    pub paged_again: usize,
}

/// Sweeps the plan's traces, checks the stability of each trace's
/// recommended config, and hands each session's full report to
/// `on_session` with its place in the plan (to write its pages) before
/// keeping only its summary: the per-call rows of a fleet are never all in
/// memory at once. Traces that share a cache (an account's) are swept
/// together; when the plan's traces are stored ([`SweepPlan::from_grid_stored`])
/// they are streamed: each trace is read back when the calls before its
/// first have been replayed and let go when every config has replayed it,
/// so that memory holds only the traces that overlap in time. Sessions
/// may then be handed over out of the plan's order; the outcome is the
/// same as for the plan in memory.
pub fn report(
    plan: &ReportPlan,
    progress: &dyn Progress,
    on_session: &mut dyn FnMut(usize, &Trace, &TraceReport) -> Result<(), AppError>,
) -> Result<ReportOutcome, AppError> {
    report_with(plan, progress, None, &mut EachSession(on_session))
}

/// Where [`report_with`] hands each session: the report being written.
/// What the report writes of a trace it gives back as bytes, which a
/// later run with the same cache hands over instead of the trace's report
/// ([`SessionSink::cached`]); the pages of the traces a report pages are
/// kept the same way ([`SessionSink::pages`]).
pub trait SessionSink {
    /// Trace `index` of the plan (whole) and its report: writes what
    /// belongs to it, and returns what a later run needs to write the
    /// same without the report.
    fn replayed(
        &mut self,
        index: usize,
        trace: &Trace,
        report: &TraceReport,
    ) -> Result<Vec<u8>, AppError>;
    /// Trace `index` (its outline) not replayed: `kept` is what
    /// [`SessionSink::replayed`] returned for it in an earlier run.
    fn cached(
        &mut self,
        index: usize,
        trace: &super::outline::TraceOutline,
        kept: &[u8],
    ) -> Result<(), AppError>;
    /// The traces handed over by [`SessionSink::cached`] whose page the
    /// report now needs.
    fn pages_wanted(&self) -> Vec<usize>;
    /// Trace `index`'s page as [`SessionSink::pages`] gave it in an earlier
    /// run; `false` when these bytes are not one.
    fn cached_page(&mut self, index: usize, page: &[u8]) -> Result<bool, AppError>;
    /// Trace `index`, replayed again for its page.
    fn page(&mut self, index: usize, trace: &Trace, report: &TraceReport) -> Result<(), AppError>;
    /// The pages the report writes, by trace, as bytes a later run can
    /// give [`SessionSink::cached_page`].
    fn pages(&self) -> Vec<(usize, Vec<u8>)>;
    /// Whether the sink reads every config's per-call rows (a file of every
    /// call). Otherwise a trace's sweep keeps them only for the rows a
    /// report writes call by call ([`TraceSweep::written_rows`]), each
    /// other config's calls by their costs alone.
    fn every_call_row(&self) -> bool {
        true
    }
    /// Every trace has been replayed and handed over; the fleet's answer is
    /// summed next. What the replay held is freed by now: a sink that can
    /// hand memory back to the system does it here, before the answer
    /// needs its own.
    fn replay_finished(&mut self) {}
}

/// A sink that only hands each replayed session to a function.
struct EachSession<'f>(&'f mut dyn FnMut(usize, &Trace, &TraceReport) -> Result<(), AppError>);

impl SessionSink for EachSession<'_> {
    fn replayed(&mut self, i: usize, t: &Trace, r: &TraceReport) -> Result<Vec<u8>, AppError> {
        (self.0)(i, t, r)?;
        Ok(Vec::new())
    }
    fn cached(
        &mut self,
        i: usize,
        _: &super::outline::TraceOutline,
        _: &[u8],
    ) -> Result<(), AppError> {
        Err(AppError::Internal(format!(
            "trace {} handed over from a cache to a report that reads none",
            i + 1
        )))
    }
    fn pages_wanted(&self) -> Vec<usize> {
        Vec::new()
    }
    fn cached_page(&mut self, _: usize, _: &[u8]) -> Result<bool, AppError> {
        Ok(false)
    }
    fn page(&mut self, _: usize, _: &Trace, _: &TraceReport) -> Result<(), AppError> {
        Ok(())
    }
    fn pages(&self) -> Vec<(usize, Vec<u8>)> {
        Vec::new()
    }
}

/// [`report`], handing each session to `sink`, with `cache` (when given)
/// holding what earlier runs replayed: a segment of traces found there
/// ([`FleetCache`]) is not replayed; its traces' summaries and what the
/// report wrote of them are read back, and the outcome and what `sink`
/// writes are the same as without the cache. What this run replays goes
/// into the cache.
pub fn report_with(
    plan: &ReportPlan,
    progress: &dyn Progress,
    cache: Option<&FleetCache>,
    sink: &mut dyn SessionSink,
) -> Result<ReportOutcome, AppError> {
    let sp = &plan.sweep;
    let memo = sp.cost.memo();
    // One bar for the fleet, in traces and calls: each trace's calls are
    // counted when every config has replayed it (and its page is written).
    let calls: u64 = (0..sp.traces().len())
        .map(|i| sp.head(i).calls as u64)
        .sum();
    let whole_fleet = Unit::Calls {
        traces: sp.traces().len() as u64,
    };
    progress.start(
        &format!("report: replaying under {} configs", sp.configs().len()),
        calls,
        whole_fleet,
    );
    let done = |calls: usize| {
        progress.advance(calls as u64);
        progress.traces_done(1);
    };
    // A stored plan's summaries go to disk too: a fleet's answer is summed
    // in passes over them, and memory does not grow with the fleet.
    let mut sessions = if sp.is_stored() {
        Summaries::spilled(sp.traces().len())?
    } else {
        Summaries::in_memory(sp.traces().len())
    };
    let groups = account_groups(sp)?;
    // With a cache, the unit is a segment of an account: those found are
    // handed over as they were kept, the others replayed.
    let mut kept = match cache {
        Some(cache) => Some(CacheRun::new(sp, cache, &groups)?),
        None => None,
    };
    let groups = match kept.as_mut() {
        Some(run) => run.hand_over_found(sp, sink, &mut sessions, &done)?,
        None => groups,
    };
    let rows = RowsKept::of(sink);
    replay_groups(sp, &memo, groups, rows, &mut |i, t, report| {
        done(t.calls.len());
        let written = sink.replayed(i, t, &report)?;
        let TraceReport { sweep, stability } = report;
        let summary = SessionSummary::new(t, sweep, Some(&stability));
        if let Some(run) = kept.as_mut() {
            run.replayed(i, &summary, written)?;
        }
        sessions.put(i, summary)
    })?;
    sink.replay_finished();
    sessions.seal()?;
    let mut fleet = super::fleet::fleet(&sessions, sp.configs(), sp.baseline.as_ref())?;
    // The fleet's recommendation is known only now: check its stubs on
    // every session, as each session's own recommendation was.
    let recommended = fleet.answer.recommended.config.config().cloned();
    let checked = match (fleet.answer.keep_status_quo, recommended) {
        (false, Some(config)) => Some(config),
        _ => None,
    };
    if let Some(config) = checked {
        // A shorter pass (one config, every count known): its own count,
        // so that the time left is its own.
        progress.start(
            &format!("report: checking the stubs of {config}"),
            calls,
            whole_fleet,
        );
        let check_one = |i: usize| -> Result<(usize, usize), AppError> {
            let t = sp.trace(i)?;
            let r = stability_of(&t, &config, &memo, None)?;
            done(t.calls.len());
            Ok((r.stubs, r.violations.len()))
        };
        let checks = match kept.as_ref() {
            Some(run) => run.stability(sp, &config, &check_one, &done)?,
            None => (0..sp.traces().len())
                .into_par_iter()
                .map(check_one)
                .collect::<Result<Vec<_>, _>>()?,
        };
        let mut check = super::fleet::FleetStability {
            config: config.clone(),
            sessions: 0,
            traces: 0,
            stubs: 0,
            violations: 0,
            unstable_sessions: 0,
        };
        let mut checked = std::collections::BTreeSet::new();
        let mut unstable = std::collections::BTreeSet::new();
        for (t, (stubs, violations)) in sp.traces().iter().zip(checks) {
            check.traces += 1;
            check.stubs += stubs;
            check.violations += violations;
            let session = super::identity::session_of(&*t?).to_owned();
            if violations > 0 {
                unstable.insert(session.clone());
            }
            checked.insert(session);
        }
        check.sessions = checked.len();
        check.unstable_sessions = unstable.len();
        fleet.stability = Some(check);
    }
    let cache = match kept.as_ref() {
        Some(run) => Some(run.pages(sp, &memo, sink)?),
        None => None,
    };
    Ok(ReportOutcome {
        fleet,
        sessions,
        cache,
    })
}

/// Replays the traces of `groups` (each a set of the plan's traces sharing
/// a cache, in the plan's order), checks each trace's recommended config
/// for stability, and hands each trace's report to `emit` with its index
/// in the plan. When the plan's traces are stored, a group of several is
/// streamed ([`stream_account`]); the others are swept a few at a time,
/// side by side, holding only their traces and rows.
fn replay_groups(
    sp: &SweepPlan,
    memo: &TokenMemo,
    mut groups: Vec<Vec<usize>>,
    rows: RowsKept,
    emit: &mut dyn FnMut(usize, &Trace, TraceReport) -> Result<(), AppError>,
) -> Result<(), AppError> {
    if sp.is_stored() {
        // An account's traces are streamed, the account's others side by
        // side; traces alone are taken a few at a time below.
        let (accounts, alone) = groups.into_iter().partition(|g| g.len() > 1);
        groups = alone;
        for group in &accounts {
            stream_account(sp, memo, group, rows, &mut |i, t, report| {
                emit(i, t, report)
            })?;
        }
    }
    // The other groups (all of them, in memory) a few at a time, side by
    // side, each swept at once.
    for batch in groups.chunks(groups_at_once()) {
        let reports = batch
            .par_iter()
            .map(|group| {
                with_account_sweep(sp, memo, group, rows, &mut |sweep| {
                    report_group(sp, memo, group, sweep)
                })
            })
            .collect::<Vec<_>>();
        for reports in reports {
            for (i, t, report) in reports? {
                emit(i, &t, report)?;
            }
        }
    }
    Ok(())
}

/// A report's use of a [`FleetCache`]: which trace is in which segment,
/// the key of each, and what is gathered of each segment replayed until
/// all its traces are in.
struct CacheRun<'c> {
    cache: &'c FleetCache,
    /// Per trace of the plan: what of it the figures depend on (its bytes,
    /// its name, its file, its session), as a digest.
    ids: Vec<Key>,
    /// The segments (each in the plan's order) and their keys.
    segments: Vec<(Vec<usize>, Key)>,
    /// Per trace: its segment.
    segment_of: Vec<usize>,
    /// Per segment being replayed: its entry, written as its traces come
    /// (each as its place in the segment, its summary and what the report
    /// wrote of it), and how many are still to come.
    /// The entry is made when the first trace comes: a fleet's thousands
    /// of segments are not all open at once.
    gathering: HashMap<usize, (Option<super::fleet_cache::EntryWriter>, usize)>,
    /// Traces of the segments not found.
    replayed: usize,
}

impl<'c> CacheRun<'c> {
    /// `groups` cut into segments, each trace's identity and each
    /// segment's key.
    fn new(sp: &SweepPlan, cache: &'c FleetCache, groups: &[Vec<usize>]) -> Result<Self, AppError> {
        // The longest any config's cache holds an entry: past it, an
        // account's caches are empty; `None` when some config's cache is
        // made for the trace that meets it first.
        let hold = sp
            .configs()
            .iter()
            .map(|c| crate::replay::longest_hold_ms(&c.cache))
            .try_fold(0u64, |l, h| h.map(|h| l.max(h)));
        let ids = (0..sp.traces().len())
            .into_par_iter()
            .map(|i| -> Result<Key, AppError> {
                let own = sp.trace_digest(i)?;
                let t = sp.traces().get(i)?;
                Ok(super::fleet_cache::digest([
                    &own[..],
                    t.name.as_bytes(),
                    t.shared.source.as_deref().unwrap_or_default().as_bytes(),
                    super::identity::session_of(&*t).as_bytes(),
                ]))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut segments = Vec::new();
        let mut segment_of = vec![0; ids.len()];
        for group in groups {
            for seg in super::plan::segments(group, |i| sp.head(i), hold) {
                let key = cache.key(seg.iter().map(|&i| &ids[i][..]));
                for &i in &seg {
                    segment_of[i] = segments.len();
                }
                segments.push((seg, key));
            }
        }
        Ok(CacheRun {
            cache,
            ids,
            segments,
            segment_of,
            gathering: HashMap::new(),
            replayed: 0,
        })
    }

    /// Hands over the traces of every segment the cache holds (their
    /// summaries to `sessions`, what was written of them to `sink`), and
    /// returns the segments left to replay.
    fn hand_over_found(
        &mut self,
        sp: &SweepPlan,
        sink: &mut dyn SessionSink,
        sessions: &mut Summaries,
        done: &dyn Fn(usize),
    ) -> Result<Vec<Vec<usize>>, AppError> {
        let mut missing = Vec::new();
        for (s, (seg, key)) in self.segments.iter().enumerate() {
            let entry = self.cache.get_open(EntryKind::Segment, key);
            let found = entry
                .as_ref()
                .and_then(|e| read_segment(&e.bytes, seg.len()));
            let (Some(entry), Some(found)) = (entry, found) else {
                self.gathering.insert(s, (None, seg.len()));
                self.replayed += seg.len();
                missing.push(seg.clone());
                continue;
            };
            // The summaries are read back from the entry, not copied.
            let file = std::sync::Arc::new(entry.file);
            let path: std::sync::Arc<std::path::Path> = entry.path.into();
            for (&i, (meta, summary, written)) in seg.iter().zip(found) {
                let t = sp.traces().get(i)?;
                done(sp.head(i).calls);
                sink.cached(i, &t, &entry.bytes[written])?;
                let on = super::store::OnDisk {
                    file: file.clone(),
                    path: path.clone(),
                    at: summary.start as u64,
                };
                sessions.put_encoded(i, &entry.bytes[summary], &on, meta)?;
            }
        }
        Ok(missing)
    }

    /// Trace `i` replayed: once every trace of its segment is, the segment
    /// goes into the cache.
    fn replayed(
        &mut self,
        i: usize,
        summary: &SessionSummary,
        written: Vec<u8>,
    ) -> Result<(), AppError> {
        let s = self.segment_of[i];
        let (seg, key) = &self.segments[s];
        let Some((entry, left)) = self.gathering.get_mut(&s) else {
            return Ok(());
        };
        let entry = match entry {
            Some(e) => e,
            None => entry.insert(self.cache.writer(EntryKind::Segment, key)?),
        };
        let k = seg
            .binary_search(&i)
            .map_err(|_| AppError::Internal(format!("trace {} is not in its segment", i + 1)))?;
        let meta = rmp_serde::to_vec(&super::fleet::TraceMeta::of(summary))
            .map_err(|e| AppError::Internal(format!("a trace's meta cannot be encoded: {e}")))?;
        entry.write_part(&(k as u64).to_le_bytes())?;
        entry.write_part(&meta)?;
        entry.write_part(&super::store::encode_summary(summary)?)?;
        entry.write_part(&written)?;
        *left -= 1;
        if *left == 0
            && let Some((Some(entry), _)) = self.gathering.remove(&s)
        {
            entry.finish()?;
        }
        Ok(())
    }

    /// Per trace of the plan, its stubs and unstable ones under `config`:
    /// each segment's read from the cache, or checked with `check_one` (and
    /// kept).
    fn stability(
        &self,
        sp: &SweepPlan,
        config: &Config,
        check_one: &(dyn Fn(usize) -> Result<(usize, usize), AppError> + Sync),
        done: &dyn Fn(usize),
    ) -> Result<Vec<(usize, usize)>, AppError> {
        let mut out = vec![(0, 0); sp.traces().len()];
        let name = config.to_string();
        let key_of = |seg_key: &Key| {
            self.cache
                .key([&seg_key[..], b"stability", name.as_bytes()])
        };
        let mut missing = Vec::new();
        for (seg, seg_key) in &self.segments {
            let found = self
                .cache
                .get(EntryKind::Stability, &key_of(seg_key))
                .and_then(|b| read_counts(&b, seg.len()));
            match found {
                Some(counts) => {
                    for (&i, c) in seg.iter().zip(counts) {
                        done(sp.head(i).calls);
                        out[i] = c;
                    }
                }
                None => missing.push((seg, seg_key)),
            }
        }
        let traces: Vec<usize> = missing
            .iter()
            .flat_map(|(seg, _)| seg.iter().copied())
            .collect();
        let counts = traces
            .par_iter()
            .map(|&i| check_one(i))
            .collect::<Result<Vec<_>, _>>()?;
        for (&i, c) in traces.iter().zip(counts) {
            out[i] = c;
        }
        for (seg, seg_key) in missing {
            let bytes: Vec<u8> = seg
                .iter()
                .flat_map(|&i| {
                    let (stubs, violations) = out[i];
                    [
                        (stubs as u64).to_le_bytes(),
                        (violations as u64).to_le_bytes(),
                    ]
                })
                .flatten()
                .collect();
            self.cache
                .put(EntryKind::Stability, &key_of(seg_key), &bytes)?;
        }
        Ok(out)
    }

    /// The pages the report wants of traces it did not replay: read from
    /// the cache, else their segments replayed again; then every page the
    /// report writes kept for a later run. Returns what the cache gave.
    fn pages(
        &self,
        sp: &SweepPlan,
        memo: &TokenMemo,
        sink: &mut dyn SessionSink,
    ) -> Result<CacheUse, AppError> {
        let page_key = |i: usize| self.cache.key([&self.ids[i][..], b"page"]);
        let mut again = std::collections::BTreeSet::new();
        let mut wanted = std::collections::BTreeSet::new();
        // Pages read from the cache are there already.
        let mut kept = std::collections::BTreeSet::new();
        for i in sink.pages_wanted() {
            let found = match self.cache.get(EntryKind::Page, &page_key(i)) {
                Some(page) => sink.cached_page(i, &page)?,
                None => false,
            };
            if found {
                kept.insert(i);
            } else {
                wanted.insert(i);
                again.insert(self.segment_of[i]);
            }
        }
        let paged_again = again.iter().map(|&s| self.segments[s].0.len()).sum();
        if !again.is_empty() {
            let groups = again.iter().map(|&s| self.segments[s].0.clone()).collect();
            replay_groups(sp, memo, groups, RowsKept::of(sink), &mut |i, t, report| {
                if wanted.contains(&i) {
                    sink.page(i, t, &report)?;
                }
                Ok(())
            })?;
        }
        for (i, page) in sink.pages() {
            if !kept.contains(&i) {
                self.cache.put(EntryKind::Page, &page_key(i), &page)?;
            }
        }
        Ok(CacheUse {
            found: self.ids.len() - self.replayed,
            replayed: self.replayed,
            paged_again,
        })
    }
}

/// A trace of a segment found in the cache: what the fleet's answer reads
/// of it without its summary, and where in the entry its summary and what
/// the report wrote of it are.
type FoundTrace = (
    super::fleet::TraceMeta,
    std::ops::Range<usize>,
    std::ops::Range<usize>,
);

/// A segment's entry read back: per trace in the segment's order, what
/// the fleet's answer reads of it without its summary, and where in
/// `bytes` its summary (as [`super::store::encode_summary`] wrote it) and
/// what the report wrote of it are; `None` unless it holds each of its
/// `traces` once.
fn read_segment(bytes: &[u8], traces: usize) -> Option<Vec<FoundTrace>> {
    let parts = super::fleet_cache::unframe_at(bytes)?;
    if parts.len() != traces * 4 {
        return None;
    }
    let mut out: Vec<Option<_>> = (0..traces).map(|_| None).collect();
    for p in parts.chunks_exact(4) {
        let part = |k: usize| &bytes[p[k].clone()];
        let k = usize::try_from(u64::from_le_bytes(part(0).try_into().ok()?)).ok()?;
        let slot = out.get_mut(k)?;
        if slot.is_some() {
            return None;
        }
        *slot = Some((
            rmp_serde::from_slice(part(1)).ok()?,
            p[2].clone(),
            p[3].clone(),
        ));
    }
    out.into_iter().collect()
}

/// A stability entry read back: per trace, its stubs and unstable ones.
fn read_counts(bytes: &[u8], traces: usize) -> Option<Vec<(usize, usize)>> {
    if bytes.len() != traces * 16 {
        return None;
    }
    bytes
        .chunks_exact(16)
        .map(|c| {
            let n = |b: &[u8]| usize::try_from(u64::from_le_bytes(b.try_into().ok()?)).ok();
            Some((n(&c[..8])?, n(&c[8..])?))
        })
        .collect()
}

/// Streams the traces `group` names (indices into the plan's traces, one
/// account's, read from the plan's store): each is read when the calls
/// before its first have been replayed, and its report handed to `emit`
/// (with its index in the plan) as soon as every config has replayed it.
fn stream_account(
    sp: &SweepPlan,
    memo: &TokenMemo,
    group: &[usize],
    rows: RowsKept,
    emit: &mut dyn FnMut(usize, &Trace, TraceReport) -> Result<(), AppError>,
) -> Result<(), AppError> {
    with_account_sweep(sp, memo, group, rows, &mut |sweep| {
        stream_with(sp, memo, group, sweep, emit)
    })
}

/// Runs `f` with the sweep of the traces `group` names (sharing a cache):
/// the configs that apply to them and their request shapes.
fn with_account_sweep<R>(
    sp: &SweepPlan,
    memo: &TokenMemo,
    group: &[usize],
    rows: RowsKept,
    f: &mut dyn FnMut(&mut crate::replay::sweep::AccountSweep<'_>) -> Result<R, AppError>,
) -> Result<R, AppError> {
    // An account that is the whole plan (a generated fleet is one) reads
    // the plan's own: a copy is about 16 bytes a trace, held to the end.
    let whole = group.iter().copied().eq(0..sp.applicability.traces());
    let own;
    let applicability = if whole {
        &sp.applicability
    } else {
        own = sp.applicability.subset(group);
        &own
    };
    let shapes = group
        .iter()
        .map(|&i| sp.shape(i))
        .collect::<Result<Vec<_>, _>>()?;
    let mut sweep = crate::replay::sweep::AccountSweep::new(
        applicability,
        &shapes,
        sp.cost.replay_context(memo, None),
        sp.recall_cost_usd,
    )?;
    if rows == RowsKept::Written {
        sweep = sweep.written_rows_only();
    }
    // The sweep has planned with them: not held while it replays.
    drop(shapes);
    f(&mut sweep)
}

/// Which per-call rows a report's sweeps keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RowsKept {
    /// Every config's.
    All,
    /// Those of the rows the report writes call by call
    /// ([`crate::replay::sweep::AccountSweep::written_rows_only`]).
    Written,
}

impl RowsKept {
    /// What `sink` reads.
    fn of(sink: &dyn SessionSink) -> Self {
        if sink.every_call_row() {
            RowsKept::All
        } else {
            RowsKept::Written
        }
    }
}

/// [`stream_account`] with its sweep made.
fn stream_with(
    sp: &SweepPlan,
    memo: &TokenMemo,
    group: &[usize],
    sweep: &mut crate::replay::sweep::AccountSweep<'_>,
    emit: &mut dyn FnMut(usize, &Trace, TraceReport) -> Result<(), AppError>,
) -> Result<(), AppError> {
    let first_starts: Vec<u64> = group
        .iter()
        .map(|&i| sp.head(i).first_start_ms.unwrap_or(0))
        .collect();
    let load = |k: usize| -> Result<Trace, AppError> { Ok(sp.trace(group[k])?.into_owned()) };
    let prepared: &(dyn for<'t> Fn(&'t Trace) -> Result<PreparedTrace<'t>, AppError> + Sync) =
        &|t| prepare(t, &sp.cost, memo, sp.priced_as());
    let source = crate::replay::stream::StreamSource {
        first_starts: &first_starts,
        load: &load,
        prepare: prepared,
        // The report counts a trace's calls once every config is done.
        progress: &|| (),
        read_ahead: groups_at_once() * 2,
    };
    sweep.stream(&source, &mut |done| {
        // The stability of each one's recommendation, side by side.
        let reports = done
            .into_par_iter()
            .map(|(k, t, sweep)| -> Result<_, AppError> {
                let recommended = &sweep.rows[sweep.recommended].result.config;
                let stability = stability_of(&t, recommended, memo, None)?;
                Ok((k, t, TraceReport { sweep, stability }))
            })
            .collect::<Vec<_>>();
        for r in reports {
            let (k, t, report) = r?;
            emit(group[k], &t, report)?;
        }
        Ok(())
    })
}

/// The traces `group` names (indices into the plan's traces, sharing a
/// cache) swept at once, and each trace's recommended config checked for
/// stability: per trace, its place in the plan, the trace and its report.
fn report_group<'p>(
    sp: &'p SweepPlan,
    memo: &TokenMemo,
    group: &[usize],
    sweep: &mut crate::replay::sweep::AccountSweep<'_>,
) -> Result<Vec<(usize, std::borrow::Cow<'p, Trace>, TraceReport)>, AppError> {
    let segment: Vec<usize> = (0..group.len()).collect();
    let segment = &segment[..];
    let traces = segment
        .par_iter()
        .map(|&k| sp.trace(group[k]))
        .collect::<Result<Vec<_>, _>>()?;
    // A segment's traces are counted side by side (each counts its own
    // texts in parallel too, but a short session has few).
    let prepared = traces
        .par_iter()
        .map(|t| prepare(t, &sp.cost, memo, sp.priced_as()))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&PreparedTrace<'_>> = prepared.iter().collect();
    // The report counts a trace's calls once every config is done.
    let sweeps = sweep.segment(segment, &refs, &|| ())?;
    drop(prepared);
    let reports = traces
        .par_iter()
        .zip(sweeps)
        .map(|(t, sweep)| -> Result<TraceReport, AppError> {
            let recommended = &sweep.rows[sweep.recommended].result.config;
            let stability = stability_of(t, recommended, memo, None)?;
            Ok(TraceReport { sweep, stability })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(segment
        .iter()
        .zip(traces)
        .zip(reports)
        .map(|((&k, t), r)| (group[k], t, r))
        .collect())
}

/// Token counts through a memo.
struct MemoTokens<'a>(&'a TokenMemo);

impl BlockTokens for MemoTokens<'_> {
    fn block_tokens(&self, block: &ContentBlock) -> u64 {
        count_block(self.0, block).raw_tokens
    }
}

fn stability_of(
    trace: &Trace,
    config: &Config,
    memo: &TokenMemo,
    progress: Option<&dyn Progress>,
) -> Result<StabilityReport, AppError> {
    let counter = MemoTokens(memo);
    let mut source = RunSource {
        run: CompactionRun::new(&config.compaction).with_record(&trace.calls),
        tokens: &counter,
        fixed_tokens: 0,
        progress,
        state: Default::default(),
    };
    Ok(crate::replay::stability::check(
        trace,
        &mut source,
        &counter,
    )?)
}

/// One trace's stability check.
#[derive(Debug, Clone)]
pub struct StabilityOutcome {
    /// The trace's name.
    pub trace: String,
    /// The config checked.
    pub config: Config,
    /// The check.
    pub report: StabilityReport,
}

/// Checks that stubs and prefixes stay byte-stable for each run.
pub fn stability(
    plan: &StabilityPlan,
    progress: &dyn Progress,
) -> Result<Vec<StabilityOutcome>, AppError> {
    let memo = TokenMemo::new(plan.tokenizer.clone());
    let mut out = Vec::new();
    for run in &plan.runs {
        progress.start("stability", run.trace.calls.len() as u64, Unit::Items);
        let report = stability_of(&run.trace, &run.config, &memo, Some(progress))?;
        out.push(StabilityOutcome {
            trace: run.trace.name.clone(),
            config: run.config.clone(),
            report,
        });
    }
    Ok(out)
}

/// The digest line another process prints for a trace
/// (`NAME DIGEST`), read back: the digest for `trace`, or `""`.
pub fn stability_digest(output: &str, trace: &str) -> String {
    output
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{trace} ")))
        .unwrap_or("")
        .to_owned()
}

/// Prices the usage Claude Code and Codex CLI recorded.
pub fn usage(plan: &UsagePlan) -> Result<super::usage::UsageReport, AppError> {
    super::usage::run(plan)
}

/// What an import wrote.
#[derive(Debug)]
pub struct ImportSummary {
    /// Traces written.
    pub traces: usize,
    /// Calls in them.
    pub calls: usize,
    /// What was read and skipped.
    pub report: ImportReport,
}

/// Imports the plan's inputs, writing each trace to `out` as soon as it is
/// built. Nothing imported is an error.
pub fn import(
    plan: &ImportPlan,
    progress: &dyn Progress,
    out: &mut dyn Write,
    out_name: &str,
) -> Result<ImportSummary, AppError> {
    let write_err = |source| AppError::Write {
        path: out_name.to_owned(),
        source,
    };
    let mut writer = TraceWriter::new(out);
    let mut calls = 0usize;
    let mut emit = |t: Trace| -> Result<(), AppError> {
        calls += t.calls.len();
        writer.push(t).map_err(write_err)
    };
    let report = match plan.format {
        Some(format) => format.import_each(&plan.inputs, &plan.options, progress, &mut emit)?,
        None => crate::trace::import::inputs::import_detected(
            &plan.inputs,
            &plan.options,
            progress,
            &mut emit,
        )?,
    };
    let traces = writer.count();
    if traces == 0 {
        return Err(AppError::Usage(format!(
            "{}: nothing to import: {report}",
            crate::trace::import::shown(&plan.inputs)
        )));
    }
    writer.finish().map_err(write_err)?;
    Ok(ImportSummary {
        traces,
        calls,
        report,
    })
}

/// The handles a tool_use id was recorded under, with the traces that
/// recorded them, in trace order.
type RecordedIds = HashMap<String, Vec<(String, Handle)>>;

/// Records every tool result of `trace` into `ledger`, noting under `ids`
/// the handle each tool_use id got.
fn record_all(
    trace: &Trace,
    ledger: &dyn ToolResultLedger,
    ids: &mut RecordedIds,
) -> Result<(), AppError> {
    let mut names = HashMap::new();
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
                let handle = record_result(ledger, tool_use_id, name, args, b)?;
                let seen = ids.entry(tool_use_id.to_string()).or_default();
                if !seen.iter().any(|(_, h)| h.mem_id == handle.mem_id) {
                    seen.push((trace.name.clone(), handle));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// What the recall tool answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallAnswer {
    /// The text, exactly as the model would receive it.
    pub text: String,
    /// Whether the id named a recorded result (else `text` is the
    /// not-found string).
    pub found: bool,
}

/// Records every tool result of the plan's traces and answers the recall
/// request for its id (a mem_id or a tool_use id).
///
/// A tool_use id is looked up among the plan's traces first, so a durable
/// ledger shared with other traces that reused the id still answers with
/// this trace's result; an id that names different results (two of the
/// plan's traces, or only other traces of the ledger) is refused with the
/// mem_ids to recall instead, never answered with one of them.
pub fn recall(plan: &RecallPlan) -> Result<RecallAnswer, AppError> {
    let damaged = |source| match (&plan.ledger_dir, source) {
        (Some(dir), source @ LedgerError::Corrupt { .. }) => AppError::LedgerDamaged {
            dir: dir.display().to_string(),
            source,
        },
        (_, source) => AppError::Ledger(source),
    };
    let ledger: Box<dyn ToolResultLedger> = match &plan.ledger_dir {
        Some(dir) => Box::new(DurableLedger::open(dir).map_err(damaged)?),
        None => Box::new(InMemoryLedger::new()),
    };
    let mut ids = RecordedIds::new();
    for t in &plan.traces {
        record_all(t, ledger.as_ref(), &mut ids).map_err(|e| match e {
            AppError::Ledger(source) => damaged(source),
            e => e,
        })?;
    }
    let mem_id = match ledger.get(&plan.id).map_err(damaged)? {
        Some(rec) => Some(rec.handle.mem_id),
        None => match ids.get(&plan.id).map(Vec::as_slice) {
            Some([(_, handle)]) => Some(handle.mem_id.clone()),
            Some(many @ [_, _, ..]) => {
                let records: Vec<String> = many
                    .iter()
                    .map(|(trace, h)| format!("{} in trace {}", h.mem_id, one_line(trace, 80)))
                    .collect();
                return Err(AppError::Usage(format!(
                    "tool_use id \"{}\" names {} different results: {}; recall one by its mem_id",
                    one_line(&plan.id, 200),
                    many.len(),
                    records.join(", ")
                )));
            }
            _ => ledger
                .get_by_call_id(&plan.id)
                .map_err(damaged)?
                .map(|rec| rec.handle.mem_id),
        },
    };
    // A record that cannot be read back (a payload whose bytes no longer
    // match its hash, one cut short) is the ledger's damage, refused with
    // the way to repair it; only the model-facing tool path
    // (`recall::fetch`) answers it as a `[tool_memory error: …]` text.
    let record = match mem_id {
        Some(id) => ledger.get(&id).map_err(damaged)?,
        None => None,
    };
    Ok(match record {
        Some(rec) => RecallAnswer {
            text: cut_answer(
                crate::engine::recall::answer(&rec.handle, &rec.payload, &plan.request),
                plan.answer_chars,
            ),
            found: true,
        },
        None => RecallAnswer {
            text: crate::engine::recall::not_found(&plan.id),
            found: false,
        },
    })
}

/// `text` cut after `max` chars (never inside a char), with a line saying
/// where and how many chars the whole answer has; as is when it fits.
fn cut_answer(text: String, max: Option<u64>) -> String {
    let Some(max) = max else { return text };
    let total = text.chars().count();
    let Some((end, _)) = usize::try_from(max)
        .ok()
        .and_then(|m| text.char_indices().nth(m))
    else {
        return text;
    };
    format!(
        "{}\n[cut at {max} of {total} chars of the answer]",
        &text[..end]
    )
}

/// Repairs the durable ledger in `dir` (see [`DurableLedger::repair`]):
/// intact records stay, damaged index lines are set aside beside the index.
/// A directory without an index is bad input, and nothing is created in it.
pub fn ledger_repair(
    dir: &std::path::Path,
) -> Result<crate::engine::ledger::RepairReport, AppError> {
    let index = dir.join("index.jsonl");
    if !index.is_file() {
        return Err(AppError::Usage(format!(
            "{}: not a ledger directory (expected a file index.jsonl in it)",
            dir.display()
        )));
    }
    Ok(DurableLedger::repair(dir)?)
}

//! `report`: the fleet swept, each session handed to the report being
//! written, the fleet's answer summed and its recommendation checked.

mod cache;
mod groups;
mod sink;

use rayon::prelude::*;

use crate::AppError;
use crate::fleet::{FleetStability, SessionSummary, Summaries};
use crate::fleet_cache::FleetCache;
use crate::plan::{ReportPlan, SweepPlan};
use crate::progress::{Progress, Unit};
use crate::results::TraceReport;
use tracecost_cost::tokens::TokenMemo;
use tracecost_policy::Config;
use tracecost_trace::Trace;

use super::shared::{account_groups, stability_of};
use cache::CacheRun;
pub use cache::CacheUse;
use groups::{RowsKept, replay_groups};
pub use sink::SessionSink;

/// What `report` produced: the fleet's answer, and what it keeps of each
/// session (its figures, not its per-call rows).
#[derive(Debug)]
pub struct FleetReport {
    /// The fleet's answer.
    pub fleet: crate::fleet::FleetAnswer,
    /// Per trace, in the plan's order: in memory, or (a stored plan's)
    /// spilled to a temporary file.
    pub sessions: Summaries,
    /// How many traces a cache gave, when the report had one.
    pub cache: Option<CacheUse>,
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
) -> Result<FleetReport, AppError> {
    report_with(plan, progress, None, &mut EachSession(on_session))
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
        _: &crate::outline::TraceOutline,
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
) -> Result<FleetReport, AppError> {
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
        let summary = SessionSummary::new(t, sweep, Some(&stability))?;
        if let Some(run) = kept.as_mut() {
            run.replayed(i, &summary, written)?;
        }
        sessions.put(i, summary)
    })?;
    sink.replay_finished();
    sessions.seal()?;
    let mut fleet = crate::fleet::fleet(&sessions, sp.configs(), sp.baseline.as_ref())?;
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
        fleet.stability = Some(fleet_stability(sp, &memo, kept.as_ref(), config, &done)?);
    }
    let cache = match kept.as_ref() {
        Some(run) => Some(run.pages(sp, &memo, sink)?),
        None => None,
    };
    Ok(FleetReport {
        fleet,
        sessions,
        cache,
    })
}

/// The fleet's recommended `config` checked on every trace (each segment's
/// counts read from the cache when `kept` has them): its stubs, the
/// violations and the sessions they fall in.
fn fleet_stability(
    sp: &SweepPlan,
    memo: &TokenMemo,
    kept: Option<&CacheRun<'_>>,
    config: Config,
    done: &(dyn Fn(usize) + Sync),
) -> Result<FleetStability, AppError> {
    let check_one = |i: usize| -> Result<(usize, usize), AppError> {
        let t = sp.trace(i)?;
        let r = stability_of(&t, &config, memo, None)?;
        done(t.calls.len());
        Ok((r.stubs, r.violations.len()))
    };
    let checks = match kept {
        Some(run) => run.stability(sp, &config, &check_one, &done)?,
        None => (0..sp.traces().len())
            .into_par_iter()
            .map(check_one)
            .collect::<Result<Vec<_>, _>>()?,
    };
    let mut check = FleetStability {
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
        let session = crate::identity::session_of(&*t?).to_owned();
        if violations > 0 {
            unstable.insert(session.clone());
        }
        checked.insert(session);
    }
    check.sessions = checked.len();
    check.unstable_sessions = unstable.len();
    Ok(check)
}

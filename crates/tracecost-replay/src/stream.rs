//! Streaming an account's sweep: its traces are read in the order of
//! their first calls, replayed call by call in the order one replay of
//! them all would take ([`super::shared_order`]), and let go as soon as
//! every config has replayed their last call. Memory holds the traces
//! that overlap in time (and a few read ahead), not the account.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

use rayon::prelude::*;

use super::group::GroupRun;
use super::sweep::{AccountSweep, SameRequests, TraceSweep, rank, risk_index};
use super::{PreparedTrace, ReplayError, ReplayResult, caches};
use crate::cost::prompt_cache::PromptCache;
use crate::policy::Config;
use crate::trace::Trace;

/// A trace swept by [`AccountSweep::stream`]: its index in the account,
/// the trace, and its sweep.
pub type Streamed = (usize, Trace, TraceSweep);

/// How to read and prepare the traces of a streamed sweep, and where their
/// sweeps go.
pub struct StreamSource<'s, E> {
    /// Per trace of the account: the start of its first call (the start of
    /// the first call that has one is not this: a first call without a
    /// start time runs at 0, as the shared replay has it).
    pub first_starts: &'s [u64],
    /// Reads trace `t` of the account.
    pub load: &'s (dyn Fn(usize) -> Result<Trace, E> + Sync),
    /// Prepares a trace read.
    pub prepare: &'s (dyn for<'t> Fn(&'t Trace) -> Result<PreparedTrace<'t>, E> + Sync),
    /// Called once per config and trace replayed.
    pub progress: &'s (dyn Fn() + Sync),
    /// How many traces are read ahead, side by side.
    pub read_ahead: usize,
}

/// The start of call `ci` of `trace` as the shared replay orders it: its
/// own, else that of the call before (0 for a first call).
fn start_of(trace: &Trace, ci: usize, before: u64) -> u64 {
    trace
        .calls
        .get(ci)
        .and_then(|c| c.start_ms)
        .unwrap_or(before)
}

/// A trace read and prepared, replayed by the runs it is in until every
/// one of them has finished it.
struct Live<'a> {
    /// Borrows `trace`, a heap allocation that does not move while it is
    /// held; dropped before it. Both are shared pointers (not boxes, whose
    /// moves would claim them unborrowed).
    prepared: Option<Arc<PreparedTrace<'a>>>,
    trace: Arc<Trace>,
    /// Per run: its results of the trace, once finished.
    results: Vec<Option<Vec<ReplayResult>>>,
    /// Runs that have not finished it.
    pending: usize,
}

/// One run's part of a streamed sweep: the traces it is replaying, and the
/// order their next calls come in.
struct RunState<'a> {
    mask: &'a [bool],
    configs: &'a [Config],
    group: &'a SameRequests,
    sims: &'a mut Option<Vec<Box<dyn PromptCache>>>,
    /// Per trace being replayed: its replay and its trace.
    live: HashMap<usize, (GroupRun<'a, 'a>, &'a Trace)>,
    /// The next call of each: (its start, the trace, the call).
    next: BinaryHeap<Reverse<(u64, usize, usize)>>,
}

impl<'a> RunState<'a> {
    /// Replays the calls that come before `frontier` (the first call of the
    /// next trace to be read: none, once all are); gives the traces it
    /// finished with their results (as the member configs' results).
    fn advance(
        &mut self,
        frontier: Option<(u64, usize)>,
        progress: &(dyn Fn() + Sync),
    ) -> Result<Vec<(usize, Vec<ReplayResult>)>, ReplayError> {
        let mut done = Vec::new();
        while let Some(&Reverse((ms, t, ci))) = self.next.peek() {
            if frontier.is_some_and(|f| (ms, t) >= f) {
                break;
            }
            self.next.pop();
            let sims = self.sims.as_mut().ok_or_else(|| ReplayError::Config {
                trace: format!("trace {}", t + 1),
                reason: "replayed before its caches were made".into(),
            })?;
            let Some((run, trace)) = self.live.get_mut(&t) else {
                continue;
            };
            run.call(ci, sims)?;
            if ci + 1 < trace.calls.len() {
                self.next
                    .push(Reverse((start_of(trace, ci + 1, ms), t, ci + 1)));
            } else if let Some((run, _)) = self.live.remove(&t) {
                done.push((t, self.finish(run, progress)));
            }
        }
        Ok(done)
    }

    fn finish(&self, run: GroupRun<'a, 'a>, progress: &(dyn Fn() + Sync)) -> Vec<ReplayResult> {
        for _ in 0..self.group.members.len() {
            progress();
        }
        self.group
            .assign(vec![run.finish()])
            .pop()
            .unwrap_or_default()
    }
}

impl AccountSweep<'_> {
    /// Sweeps every trace of the account, read from `source` in the order
    /// of their first calls, and hands each trace's sweep to `emit` (with
    /// the trace, and its index in the account) as soon as every config
    /// has replayed it (those finished together in one batch, in the
    /// account's order): the same sweeps as [`AccountSweep::segment`] of
    /// all the traces at once, in another order.
    pub fn stream<E>(
        &mut self,
        source: &StreamSource<'_, E>,
        emit: &mut dyn FnMut(Vec<Streamed>) -> Result<(), E>,
    ) -> Result<(), E>
    where
        E: From<ReplayError> + Send,
    {
        let n = self.applicability.traces();
        if source.first_starts.len() != n {
            return Err(ReplayError::Config {
                trace: format!("{} traces", source.first_starts.len()),
                reason: format!("the configs were checked against {n} traces"),
            }
            .into());
        }
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by_key(|&t| (source.first_starts[t], t));
        let ctx = self.ctx;
        let (applicability, recall_cost_usd) = (self.applicability, self.recall_cost_usd);
        // The traces read are dropped after the runs replaying them
        // (declared first, dropped last).
        let mut lives: HashMap<usize, Live<'_>> = HashMap::new();
        let mut states: Vec<RunState<'_>> = self
            .runs
            .iter_mut()
            .map(|r| RunState {
                mask: &r.mask[..],
                configs: &r.group.run[..],
                group: &r.group,
                sims: &mut r.sims,
                live: HashMap::new(),
                next: BinaryHeap::new(),
            })
            .collect();
        let mut read = 0;
        loop {
            // Read the next traces, side by side.
            let batch = &order[read..(read + source.read_ahead.max(1)).min(n)];
            read += batch.len();
            let loaded = batch
                .par_iter()
                .map(|&t| -> Result<(usize, Arc<Trace>), E> {
                    Ok((t, Arc::new((source.load)(t)?)))
                })
                .collect::<Result<Vec<_>, E>>()?;
            let prepared = loaded
                .par_iter()
                .map(|(_, trace)| {
                    // SAFETY: the trace is a heap allocation held in `lives`
                    // (below) until every run replaying it has finished it,
                    // and its prepared form, which borrows it, is dropped
                    // before it; `lives` outlives `states`.
                    let trace: &Trace = unsafe { &*std::ptr::from_ref::<Trace>(&**trace) };
                    (source.prepare)(trace).map(Arc::new)
                })
                .collect::<Result<Vec<_>, E>>()?;
            let mut finished = Vec::new();
            for ((t, trace), prepared) in loaded.into_iter().zip(prepared) {
                // SAFETY: as above: the trace and its prepared form are held
                // in `lives` (from here on, before any run borrows them)
                // until no run replays the trace.
                let p: &PreparedTrace<'_> = unsafe { &*std::ptr::from_ref(&*prepared) };
                let tr: &Trace = unsafe { &*std::ptr::from_ref::<Trace>(&*trace) };
                lives.insert(
                    t,
                    Live {
                        prepared: Some(prepared),
                        trace,
                        results: states.iter().map(|_| None).collect(),
                        pending: 0,
                    },
                );
                let mut pending = 0;
                for (r, st) in states.iter_mut().enumerate() {
                    if !st.mask[t] {
                        continue;
                    }
                    // The caches are made for the first trace whose calls
                    // meet them, as in the replay of them all at once.
                    if st.sims.is_none() && !tr.calls.is_empty() {
                        *st.sims = Some(caches(p, st.configs, ctx)?);
                    }
                    let run = GroupRun::new(p, st.configs, ctx)?;
                    match tr.calls.first() {
                        Some(c) => {
                            st.next.push(Reverse((c.start_ms.unwrap_or(0), t, 0)));
                            st.live.insert(t, (run, tr));
                            pending += 1;
                        }
                        None => finished.push((r, t, st.finish(run, source.progress))),
                    }
                }
                if let Some(live) = lives.get_mut(&t) {
                    live.pending = pending;
                }
            }
            // Replay what comes before the next trace to read.
            let frontier = order.get(read).map(|&t| (source.first_starts[t], t));
            let advanced = states
                .par_iter_mut()
                .map(|st| st.advance(frontier, source.progress))
                .collect::<Vec<_>>();
            for (r, done) in advanced.into_iter().enumerate() {
                for (t, results) in done? {
                    finished.push((r, t, results));
                }
            }
            // Traces every run has finished (or none replays: none applies),
            // ranked, handed over, let go.
            for (r, t, results) in finished {
                if let Some(live) = lives.get_mut(&t) {
                    live.results[r] = Some(results);
                    live.pending = live.pending.saturating_sub(1);
                }
            }
            let mut complete: Vec<usize> = lives
                .iter()
                .filter(|(_, l)| l.pending == 0)
                .map(|(t, _)| *t)
                .collect();
            complete.sort_unstable();
            // No run holds these any more: they leave `lives`, and their
            // results are moved, not copied, into their ranking.
            let mut done: Vec<(usize, Live<'_>)> = complete
                .iter()
                .filter_map(|t| lives.remove(t).map(|l| (*t, l)))
                .collect();
            let grid = applicability.grid();
            let ranked = done
                .par_iter_mut()
                .map(|(t, live)| -> Result<TraceSweep, ReplayError> {
                    let Some(p) = live.prepared.as_deref() else {
                        return Err(ReplayError::Config {
                            trace: live.trace.name.clone(),
                            reason: "ranked twice".into(),
                        });
                    };
                    let baseline = applicability.baseline(*t);
                    let results = live
                        .results
                        .iter_mut()
                        .filter_map(Option::take)
                        .flatten()
                        .filter(|r| grid.contains(&r.config) || r.config == *baseline)
                        .collect();
                    rank(
                        p,
                        &risk_index(p),
                        results,
                        baseline,
                        ctx.pricing,
                        recall_cost_usd,
                    )
                })
                .collect::<Vec<_>>();
            let mut out = Vec::with_capacity(done.len());
            for ((t, mut live), sweep) in done.into_iter().zip(ranked) {
                let sweep = sweep?;
                // The prepared trace goes first: it borrows the trace.
                live.prepared = None;
                // No run holds the trace any more: it is this one's alone.
                let trace = Arc::try_unwrap(live.trace).unwrap_or_else(|t| (*t).clone());
                out.push((t, trace, sweep));
            }
            if !out.is_empty() {
                emit(out)?;
            }
            if read >= n && states.iter().all(|s| s.live.is_empty()) {
                break;
            }
        }
        Ok(())
    }
}

//! Streaming an account's sweep: its traces are read in the order of
//! their first calls, replayed call by call in the order one replay of
//! them all would take ([`super::shared_order`]), and let go as soon as
//! every config has replayed their last call. Memory holds the traces
//! that overlap in time (and a few read ahead), not the account; and of
//! each, not its text: a trace is planned whole when it is read (its
//! requests and markers do not depend on the cache), its text let go, its
//! calls simulated from the plan as the account's others come between
//! them, and the trace read again once every config is done with it.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use rayon::prelude::*;

use super::caches::SharedCaches;
use super::group::{PlanDone, PlanLog, Planner, Simulator};
use super::sweep::{AccountSweep, SameRequests, TraceSweep, rank, risk_index};
use super::{PreparedTrace, ReplayError, ReplayResult};
use tracecost_policy::Config;
use tracecost_trace::Trace;

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
    /// How many traces are read ahead, side by side; and how many of
    /// those finished are read again and handed over at a time.
    pub read_ahead: usize,
}

/// One run's replay of a trace: the calls planned and not yet simulated,
/// the simulation so far, and what the planning leaves for the results.
struct LiveRun<'a> {
    planned: PlanLog<'a>,
    sim: Simulator<'a>,
    done: PlanDone<'a>,
}

/// A trace being replayed: per run, its replay once finished, waiting for
/// the others.
struct Live<'a> {
    finished: Vec<Option<(Simulator<'a>, PlanDone<'a>)>>,
    /// Runs that have not finished it.
    pending: usize,
}

/// One run's part of a streamed sweep: the traces it is replaying, and the
/// order their next calls come in.
struct RunState<'a> {
    mask: &'a [bool],
    configs: &'a [Config],
    group: &'a SameRequests,
    sims: &'a mut SharedCaches,
    /// Per trace being replayed: which of `sims` it runs on (its model's).
    caches_of: HashMap<usize, usize>,
    /// Per trace being replayed: its replay, boxed: a crowded step has
    /// hundreds live, and the table keeps the room it grew to for all of
    /// them (a replay is about 600 bytes; its box, 8).
    live: HashMap<usize, Box<LiveRun<'a>>>,
    /// The next call of each: (its start, the trace, the call).
    next: BinaryHeap<Reverse<(u64, usize, usize)>>,
}

/// A run's replay of a trace once every call is simulated: (the trace,
/// the simulation, what the planning left).
type Finished<'a> = (usize, Simulator<'a>, PlanDone<'a>);

impl<'a> RunState<'a> {
    /// Simulates the calls that come before `frontier` (the first call of
    /// the next trace to be read: none, once all are); gives the traces it
    /// finished.
    fn advance(
        &mut self,
        frontier: Option<(u64, usize)>,
        progress: &(dyn Fn() + Sync),
    ) -> Result<Vec<Finished<'a>>, ReplayError> {
        let mut done = Vec::new();
        while let Some(&Reverse((ms, t, _))) = self.next.peek() {
            if frontier.is_some_and(|f| (ms, t) >= f) {
                break;
            }
            self.next.pop();
            let Some(run) = self.live.get_mut(&t) else {
                continue;
            };
            let Some(call) = run.planned.pop() else {
                continue;
            };
            let which = self.caches_of.get(&t).copied().unwrap_or(usize::MAX);
            run.sim
                .call(&call, self.sims.get(which, &format!("trace {}", t + 1))?)?;
            match run.planned.front() {
                // A call without a start runs when the call before did.
                Some(next) => {
                    self.next
                        .push(Reverse((next.start_ms.unwrap_or(ms), t, next.index())))
                }
                None => {
                    self.caches_of.remove(&t);
                    if let Some(run) = self.live.remove(&t) {
                        self.counted(progress);
                        let LiveRun {
                            mut sim, done: d, ..
                        } = *run;
                        sim.simulated();
                        done.push((t, sim, d));
                    }
                }
            }
        }
        Ok(done)
    }

    /// Counts a trace finished by every config of the run.
    fn counted(&self, progress: &(dyn Fn() + Sync)) {
        for _ in 0..self.group.members.len() {
            progress();
        }
    }
}

/// Plans trace `prepared` whole for the run of `configs`. The planner
/// borrows the prepared trace only while it plans: what it leaves
/// ([`PlanLog`], [`PlanDone`], the [`Simulator`]) holds none of it.
fn plan<'a>(
    prepared: &PreparedTrace<'_>,
    configs: &'a [Config],
    ctx: super::ReplayContext<'a>,
) -> Result<LiveRun<'a>, ReplayError> {
    let mut planner = Planner::new(prepared, configs, ctx)?;
    let mut planned = PlanLog::default();
    for ci in 0..prepared.trace.calls.len() {
        planned.push(planner.plan(ci)?);
    }
    planned.shrink();
    Ok(LiveRun {
        planned,
        sim: Simulator::new(prepared.trace, configs, ctx),
        done: planner.done(),
    })
}

/// What each run's planning and ranking read, shared by threads: its
/// mask of traces, its configs, and the configs sending the same requests.
type RunView<'a> = (&'a [bool], &'a [Config], &'a SameRequests);

/// A streamed sweep under way: the runs' states, the traces being
/// replayed, and what reading, planning and ranking read.
struct Streaming<'a, 's, E> {
    source: &'s StreamSource<'s, E>,
    ctx: super::ReplayContext<'a>,
    applicability: &'a super::applies::Applicability,
    recall_cost_usd: Option<f64>,
    states: Vec<RunState<'a>>,
    runs: Vec<RunView<'a>>,
    lives: HashMap<usize, Live<'a>>,
}

impl AccountSweep<'_> {
    /// Sweeps every trace of the account, read from `source` in the order
    /// of their first calls, and hands each trace's sweep to `emit` (with
    /// the trace, and its index in the account) as soon as every config
    /// has replayed it (those finished together in batches of at most
    /// [`StreamSource::read_ahead`], in the account's order): the same
    /// sweeps as [`AccountSweep::segment`] of all the traces at once, in
    /// another order.
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
        let states: Vec<RunState<'_>> = self
            .runs
            .iter_mut()
            .map(|r| RunState {
                mask: &r.mask[..],
                configs: &r.group.run[..],
                group: &r.group,
                sims: &mut r.sims,
                caches_of: HashMap::new(),
                live: HashMap::new(),
                next: BinaryHeap::new(),
            })
            .collect();
        let runs = states
            .iter()
            .map(|s| (s.mask, s.configs, s.group))
            .collect();
        let mut streaming = Streaming {
            source,
            ctx: self.ctx,
            applicability: self.applicability,
            recall_cost_usd: self.recall_cost_usd,
            states,
            runs,
            lives: HashMap::new(),
        };
        let mut read = 0;
        loop {
            // Read the next traces, side by side, and plan each run of
            // each; their texts are let go once planned.
            let batch = &order[read..(read + source.read_ahead.max(1)).min(n)];
            read += batch.len();
            let mut finished = streaming.read_and_plan(batch)?;
            // Replay what comes before the next trace to read.
            let frontier = order.get(read).map(|&t| (source.first_starts[t], t));
            let advanced = streaming
                .states
                .par_iter_mut()
                .map(|st| st.advance(frontier, source.progress))
                .collect::<Vec<_>>();
            for (r, done) in advanced.into_iter().enumerate() {
                for f in done? {
                    finished.push((r, f));
                }
            }
            for (r, (t, sim, done)) in finished {
                if let Some(live) = streaming.lives.get_mut(&t) {
                    live.finished[r] = Some((sim, done));
                    live.pending = live.pending.saturating_sub(1);
                }
            }
            streaming.hand_over(emit)?;
            if read >= n && streaming.states.iter().all(|s| s.live.is_empty()) {
                break;
            }
        }
        Ok(())
    }
}

impl<'a, E> Streaming<'a, '_, E>
where
    E: From<ReplayError> + Send,
{
    /// Reads and prepares the traces of `batch`, side by side, meets each
    /// with its model's caches and plans every run of it; each run's
    /// first call waits in its queue. Returns the runs finished at once
    /// (a trace without calls), by run.
    fn read_and_plan(&mut self, batch: &[usize]) -> Result<Vec<(usize, Finished<'a>)>, E> {
        let (source, ctx) = (self.source, self.ctx);
        let loaded = batch
            .par_iter()
            .map(|&t| (source.load)(t))
            .collect::<Result<Vec<_>, E>>()?;
        let prepared = loaded
            .par_iter()
            .map(|trace| (source.prepare)(trace))
            .collect::<Result<Vec<_>, E>>()?;
        // Each model's caches are made for the first trace of that
        // model whose calls meet them, as in the replay of them all at
        // once: traces are read in the order of their first calls.
        for ((&t, trace), p) in batch.iter().zip(&loaded).zip(&prepared) {
            for st in self.states.iter_mut() {
                if st.mask[t] && !trace.calls.is_empty() {
                    let which = st.sims.for_trace(p, st.configs, ctx)?;
                    st.caches_of.insert(t, which);
                }
            }
        }
        let runs = &self.runs;
        let jobs: Vec<(usize, usize)> = (0..batch.len())
            .flat_map(|k| {
                (0..runs.len())
                    .filter(move |&r| runs[r].0[batch[k]])
                    .map(move |r| (k, r))
            })
            .collect();
        let planned = jobs
            .par_iter()
            .map(|&(k, r)| plan(&prepared[k], runs[r].1, ctx))
            .collect::<Vec<_>>();
        drop(prepared);
        drop(loaded);
        let mut finished: Vec<(usize, Finished<'a>)> = Vec::new();
        for &t in batch {
            let live = Live {
                finished: self.states.iter().map(|_| None).collect(),
                pending: 0,
            };
            self.lives.insert(t, live);
        }
        for (&(k, r), run) in jobs.iter().zip(planned) {
            let t = batch[k];
            let run = run?;
            let st = &mut self.states[r];
            match run.planned.front() {
                Some(first) => {
                    st.next
                        .push(Reverse((first.start_ms.unwrap_or(0), t, first.index())));
                    st.live.insert(t, Box::new(run));
                    if let Some(live) = self.lives.get_mut(&t) {
                        live.pending += 1;
                    }
                }
                None => {
                    st.counted(source.progress);
                    finished.push((r, (t, run.sim, run.done)));
                }
            }
        }
        Ok(finished)
    }

    /// Hands over the traces every run has finished (or none replays:
    /// none applies): read again, their results put together and ranked,
    /// handed to `emit`, let go. As many at a time as are read ahead: a
    /// step of a crowded fleet can finish many, and each is held whole
    /// (its text, every config's calls) until it is handed over.
    fn hand_over(&mut self, emit: &mut dyn FnMut(Vec<Streamed>) -> Result<(), E>) -> Result<(), E> {
        let mut complete: Vec<usize> = self
            .lives
            .iter()
            .filter(|(_, l)| l.pending == 0)
            .map(|(t, _)| *t)
            .collect();
        complete.sort_unstable();
        for chunk in complete.chunks(self.source.read_ahead.max(1)) {
            let done: Vec<(usize, Live<'_>)> = chunk
                .iter()
                .filter_map(|t| self.lives.remove(t).map(|l| (*t, l)))
                .collect();
            let ranking = Ranking {
                source: self.source,
                applicability: self.applicability,
                runs: &self.runs,
                ctx: self.ctx,
                recall_cost_usd: self.recall_cost_usd,
            };
            let ranked = done
                .into_par_iter()
                .map(|(t, live)| ranking.rank_finished(t, live))
                .collect::<Vec<_>>();
            let out = ranked.into_iter().collect::<Result<Vec<_>, E>>()?;
            if !out.is_empty() {
                emit(out)?;
            }
        }
        Ok(())
    }
}

/// What ranking a finished trace reads, shared by threads.
struct Ranking<'a, 's, 'r, E> {
    source: &'s StreamSource<'s, E>,
    applicability: &'a super::applies::Applicability,
    runs: &'r [RunView<'a>],
    ctx: super::ReplayContext<'a>,
    recall_cost_usd: Option<f64>,
}

impl<'a, E> Ranking<'a, '_, '_, E>
where
    E: From<ReplayError> + Send,
{
    /// Trace `t`, read again, with every run's results put together and
    /// ranked.
    fn rank_finished(&self, t: usize, live: Live<'a>) -> Result<Streamed, E> {
        let (source, applicability) = (self.source, self.applicability);
        let trace = (source.load)(t)?;
        let p = (source.prepare)(&trace)?;
        let baseline = applicability.baseline(t);
        let mut results: Vec<ReplayResult> = Vec::new();
        for (r, finished) in live.finished.into_iter().enumerate() {
            let Some((sim, done)) = finished else {
                continue;
            };
            let own = sim.finish(done, &trace, p.calibration);
            results.extend(self.runs[r].2.assign(vec![own]).pop().unwrap_or_default());
        }
        let grid = applicability.grid();
        let results = results
            .into_iter()
            .filter(|r| grid.contains(&r.config) || r.config == *baseline)
            .collect();
        let sweep = rank(
            &p,
            &risk_index(&p),
            results,
            baseline,
            self.ctx.pricing,
            self.recall_cost_usd,
        )?;
        drop(p);
        Ok((t, trace, sweep))
    }
}

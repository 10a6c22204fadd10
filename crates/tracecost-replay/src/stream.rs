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
/// the others; per part of it (one, the trace itself, but under a
/// summarising compaction, which replays a trace as the parts its
/// summaries cut it into).
struct Live<'a> {
    finished: Vec<Vec<Option<(Simulator<'a>, PlanDone<'a>)>>>,
    /// Parts of runs that have not finished it.
    pending: usize,
}

/// A trace, or a part of it (by index from 0) under a summarising
/// compaction.
type Slot = (usize, usize);

/// One run's part of a streamed sweep: the traces it is replaying, and the
/// order their next calls come in.
struct RunState<'a> {
    mask: &'a [bool],
    configs: &'a [Config],
    group: &'a SameRequests,
    sims: &'a mut SharedCaches,
    /// Per trace (part) being replayed: which of `sims` it runs on (its
    /// model's).
    caches_of: HashMap<Slot, usize>,
    /// Per trace being replayed: its replay, boxed: a crowded step has
    /// hundreds live, and the table keeps the room it grew to for all of
    /// them (a replay is about 600 bytes; its box, 8).
    live: HashMap<Slot, Box<LiveRun<'a>>>,
    /// The next call of each: (its start, the trace, the part, the call);
    /// the parts of a trace in order, as the replay of them all meets them.
    next: BinaryHeap<Reverse<(u64, usize, usize, usize)>>,
}

/// A run's replay of a trace (part) once every call is simulated: (the
/// trace and part, the simulation, what the planning left).
type Finished<'a> = (Slot, Simulator<'a>, PlanDone<'a>);

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
        while let Some(&Reverse((ms, t, part, _))) = self.next.peek() {
            if frontier.is_some_and(|f| (ms, t) >= f) {
                break;
            }
            self.next.pop();
            let slot = (t, part);
            let Some(run) = self.live.get_mut(&slot) else {
                continue;
            };
            let Some(call) = run.planned.pop() else {
                continue;
            };
            let which = self.caches_of.get(&slot).copied().unwrap_or(usize::MAX);
            run.sim
                .call(&call, self.sims.get(which, &format!("trace {}", t + 1))?)?;
            match run.planned.front() {
                // A call without a start runs when the call before did.
                Some(next) => self.next.push(Reverse((
                    next.start_ms.unwrap_or(ms),
                    t,
                    part,
                    next.index(),
                ))),
                None => {
                    self.caches_of.remove(&slot);
                    if let Some(run) = self.live.remove(&slot) {
                        if part == 0 {
                            self.counted(progress);
                        }
                        let LiveRun {
                            mut sim, done: d, ..
                        } = *run;
                        sim.simulated();
                        done.push((slot, sim, d));
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

/// The parts a summarising run (`group`) cuts `prepared`'s trace into;
/// none under any other compaction, which replays the trace itself.
fn summarised_parts(
    prepared: &PreparedTrace<'_>,
    group: &SameRequests,
    ctx: super::ReplayContext<'_>,
) -> Result<Vec<tracecost_policy::autocompact::Part>, ReplayError> {
    match group.run.first() {
        Some(config) if group.summarising() => super::autocompact::parts(prepared, config, ctx),
        _ => Ok(Vec::new()),
    }
}

/// `parts` of `whole` prepared as traces of their own, as the replay of a
/// segment prepares them.
fn prepare_parts<'p>(
    whole: &PreparedTrace<'_>,
    parts: &'p [tracecost_policy::autocompact::Part],
    configs: &[Config],
    ctx: super::ReplayContext<'_>,
) -> Result<Vec<PreparedTrace<'p>>, ReplayError> {
    let priced_as = configs.first().and_then(|c| c.model.as_deref());
    let price = super::autocompact::calibration_price(ctx.pricing, whole.trace, priced_as)?;
    Ok(parts
        .iter()
        .map(|part| PreparedTrace::part_of(whole, part, ctx.memo, price))
        .collect())
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
            for (r, ((t, part), sim, done)) in finished {
                if let Some(slot) = streaming.lives.get_mut(&t).and_then(|live| {
                    live.pending = live.pending.saturating_sub(1);
                    live.finished.get_mut(r)?.get_mut(part)
                }) {
                    *slot = Some((sim, done));
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
        let runs = &self.runs;
        // Per trace read and run: the trace's parts under the run's
        // summarising compaction (none under any other).
        let jobs: Vec<(usize, usize)> = (0..batch.len())
            .flat_map(|k| {
                (0..runs.len())
                    .filter(move |&r| runs[r].0[batch[k]])
                    .map(move |r| (k, r))
            })
            .collect();
        let cut = jobs
            .par_iter()
            .map(|&(k, r)| summarised_parts(&prepared[k], runs[r].2, ctx))
            .collect::<Result<Vec<_>, ReplayError>>()?;
        let prepared_parts = jobs
            .iter()
            .zip(&cut)
            .map(|(&(k, r), parts)| prepare_parts(&prepared[k], parts, runs[r].1, ctx))
            .collect::<Result<Vec<_>, ReplayError>>()?;
        // What each job replays: the trace, or each of its parts.
        let slots = |j: usize| -> Vec<&PreparedTrace<'_>> {
            if prepared_parts[j].is_empty() {
                vec![&prepared[jobs[j].0]]
            } else {
                prepared_parts[j].iter().collect()
            }
        };
        // Each model's caches are made for the first trace of that
        // model whose calls meet them, as in the replay of them all at
        // once: traces are read in the order of their first calls.
        for (j, &(k, r)) in jobs.iter().enumerate() {
            let st = &mut self.states[r];
            for (part, p) in slots(j).into_iter().enumerate() {
                if !p.trace.calls.is_empty() {
                    let which = st.sims.for_trace(p, st.configs, ctx)?;
                    st.caches_of.insert((batch[k], part), which);
                }
            }
        }
        let work: Vec<(usize, usize, &PreparedTrace<'_>)> = (0..jobs.len())
            .flat_map(|j| {
                slots(j)
                    .into_iter()
                    .enumerate()
                    .map(move |(part, p)| (j, part, p))
            })
            .collect();
        let planned = work
            .par_iter()
            .map(|&(j, _, p)| plan(p, runs[jobs[j].1].1, ctx))
            .collect::<Vec<_>>();
        let keys: Vec<(usize, usize, usize)> = work
            .iter()
            .map(|&(j, part, _)| (batch[jobs[j].0], jobs[j].1, part))
            .collect();
        let parts_of: Vec<usize> = prepared_parts.iter().map(|p| p.len().max(1)).collect();
        drop(work);
        drop(prepared_parts);
        drop(cut);
        drop(prepared);
        drop(loaded);
        for &t in batch {
            let live = Live {
                finished: self.states.iter().map(|_| Vec::new()).collect(),
                pending: 0,
            };
            self.lives.insert(t, live);
        }
        for (&(k, r), &n) in jobs.iter().zip(&parts_of) {
            if let Some(live) = self.lives.get_mut(&batch[k]) {
                live.finished[r] = (0..n).map(|_| None).collect();
            }
        }
        let mut finished: Vec<(usize, Finished<'a>)> = Vec::new();
        for (&(t, r, part), run) in keys.iter().zip(planned) {
            let run = run?;
            let st = &mut self.states[r];
            // Every part waits, the ones finished at once too: each is
            // counted off as it finishes, so a trace is handed over only
            // once all its parts are.
            if let Some(live) = self.lives.get_mut(&t) {
                live.pending += 1;
            }
            match run.planned.front() {
                Some(first) => {
                    st.next.push(Reverse((
                        first.start_ms.unwrap_or(0),
                        t,
                        part,
                        first.index(),
                    )));
                    st.live.insert((t, part), Box::new(run));
                }
                None => {
                    if part == 0 {
                        st.counted(source.progress);
                    }
                    finished.push((r, ((t, part), run.sim, run.done)));
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
            let Some(finished) = finished.into_iter().collect::<Option<Vec<_>>>() else {
                continue;
            };
            let (_, configs, group) = self.runs[r];
            let parts = summarised_parts(&p, group, self.ctx)?;
            let own = if parts.is_empty() {
                let mut finished = finished;
                match finished.pop() {
                    Some((sim, done)) => sim.finish(done, &trace, p.calibration),
                    None => continue,
                }
            } else {
                let prepared = prepare_parts(&p, &parts, configs, self.ctx)?;
                let mut per_config: Vec<Vec<ReplayResult>> =
                    configs.iter().map(|_| Vec::new()).collect();
                for ((sim, done), part) in finished.into_iter().zip(&prepared) {
                    let rs = sim.finish(done, part.trace, part.calibration);
                    for (c, r) in per_config.iter_mut().zip(rs) {
                        c.push(r);
                    }
                }
                per_config
                    .into_iter()
                    .filter_map(|rs| super::autocompact::join(&trace, &parts, rs))
                    .collect()
            };
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

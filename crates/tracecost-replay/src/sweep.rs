//! Sweeps: one trace under a grid of configs, in parallel, ranked by cost,
//! with each config's recall risk, the Pareto front of cost against risk,
//! and a recommendation.

use std::collections::HashMap;

use rayon::prelude::*;
use serde::Serialize;

pub use super::applies::Applicability;
use super::recall_risk::{Range, RecallRisk, RiskIndex};
use super::{Build, PerCall, PerCallRows, PreparedTrace, ReplayContext, ReplayError, ReplayResult};
use tracecost_cost::pricing::Pricing;
use tracecost_cost::tokens::FastBuild;
use tracecost_engine::message::{BlockKind, Role};
use tracecost_engine::rewrite::{CompactionPolicy, ResultCounts};
use tracecost_policy::{Cache, Compaction, Config};
use tracecost_trace::Trace;

/// A grid: every compaction × every cache policy × every model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grid {
    /// Compaction policies.
    pub compactions: Vec<Compaction>,
    /// Cache policies.
    pub caches: Vec<Cache>,
    /// Models (`None` = the trace's own).
    pub models: Vec<Option<String>>,
}

impl Grid {
    /// The configs of the grid, in grid order, without duplicates.
    pub fn configs(&self) -> Vec<Config> {
        let mut out: Vec<Config> = Vec::new();
        for model in &self.models {
            for compaction in &self.compactions {
                for cache in &self.caches {
                    let c = Config {
                        thinking: None,
                        compaction: compaction.clone(),
                        cache: *cache,
                        model: model.clone(),
                    };
                    if !out.contains(&c) {
                        out.push(c);
                    }
                }
            }
        }
        out
    }
}

/// One config's outcome in a sweep.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct SweepRow {
    /// The replay.
    pub result: ReplayResult,
    /// Its recall risk.
    pub risk: RecallRisk,
    /// Cost plus priced recalls (mid), what the recommendation minimizes.
    pub risk_adjusted_cost_usd: f64,
    /// Of the priced recalls (mid), what sending the recalled text costs
    /// (the rest is the round trips' price), so a reader can price round
    /// trips otherwise.
    pub recall_tokens_usd: f64,
    /// What the recalls cost, low / mid / high (low and mid signed, as
    /// [`RecallRisk::needs`]).
    pub recall_cost_usd: Range,
    /// Saving against the baseline (positive = cheaper).
    pub savings_usd: f64,
    /// Same, in percent of the baseline.
    pub savings_pct: f64,
    /// Whether no other config is both cheaper-or-equal and less-or-equally
    /// risky (and better in one).
    pub pareto: bool,
    /// A compaction policy that compacted nothing on this trace: its figures
    /// are those of no compaction (plus any tool it adds), and it is never
    /// recommended.
    pub no_effect: bool,
}

/// A sweep of one trace.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct TraceSweep {
    /// The trace's name.
    pub trace: String,
    /// Its description.
    pub description: String,
    /// The file it was read from, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Rows sorted by cost, then [`Config::complexity`], then config
    /// string.
    pub rows: Vec<SweepRow>,
    /// Index of the baseline row.
    pub baseline: usize,
    /// Index of the cheapest row.
    pub cheapest: usize,
    /// Index of the recommended row.
    pub recommended: usize,
    /// Price of one recall round trip used for the recommendation (None =
    /// each config's average call cost); the recalled tokens are added at
    /// the uncached input price.
    pub recall_cost_usd: Option<f64>,
    /// Where the ledger ran, the recalls its record shows (charged in
    /// place of the estimate: see [`super::recall_risk::Observed`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_recall: Option<super::recall_risk::Observed>,
}

impl TraceSweep {
    /// The rows a report writes call by call: the status quo, the
    /// recommended and the cheapest (some may be one row).
    pub fn written_rows(&self) -> [usize; 3] {
        [self.baseline, self.recommended, self.cheapest]
    }
}

/// The row to recommend: the lowest `cost` among the policies that have an
/// effect; a tie goes to the baseline (keeping what runs), then to the
/// simpler policy, then to fewer needs of recall (mid), then by name.
pub fn recommend(rows: &[SweepRow], baseline: &Config, cost: impl Fn(&SweepRow) -> f64) -> usize {
    let key = |r: &SweepRow| (r.result.config != *baseline, r.result.config.complexity());
    rows.iter()
        .enumerate()
        .filter(|(_, r)| !r.no_effect || r.result.config == *baseline)
        .min_by(|(_, a), (_, b)| {
            cost(a)
                .total_cmp(&cost(b))
                .then_with(|| key(a).cmp(&key(b)))
                .then_with(|| a.risk.needs.mid.total_cmp(&b.risk.needs.mid))
                .then_with(|| {
                    a.result
                        .config
                        .to_string()
                        .cmp(&b.result.config.to_string())
                })
        })
        .map_or(0, |(i, _)| i)
}

/// Sweeps `configs` (the baseline is added when missing) over one trace.
/// Every config is checked against the trace before anything runs.
pub fn sweep_trace(
    prepared: &PreparedTrace<'_>,
    configs: &[Config],
    baseline: &Config,
    ctx: ReplayContext<'_>,
    recall_cost_usd: Option<f64>,
    progress: &(dyn Fn() + Sync),
) -> Result<TraceSweep, ReplayError> {
    let mut out = sweep_shared(
        &[prepared],
        configs,
        std::slice::from_ref(baseline),
        ctx,
        recall_cost_usd,
        progress,
    )?;
    Ok(out.remove(0))
}

/// Sweeps `configs` over traces that share one prompt cache (one account's
/// sessions, replayed in start-time order against one cache per config;
/// see [`super::replay_group_shared`]). `baselines[i]` is trace `i`'s
/// baseline (or one for all), added to its configs when missing; each
/// trace's sweep holds `configs` and its own baseline. Every config must
/// apply to every trace ([`Applicability::every`]), checked before
/// anything runs.
pub fn sweep_shared(
    prepared: &[&PreparedTrace<'_>],
    configs: &[Config],
    baselines: &[Config],
    ctx: ReplayContext<'_>,
    recall_cost_usd: Option<f64>,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<TraceSweep>, ReplayError> {
    let traces: Vec<&Trace> = prepared.iter().map(|p| p.trace).collect();
    let applicability = Applicability::every(&traces, configs, baselines, ctx.pricing)?;
    sweep_checked(prepared, &applicability, ctx, recall_cost_usd, progress)
}

/// [`sweep_shared`] of what `applicability` checked: each config is
/// replayed only over the traces it applies to (a grid applies per trace,
/// and a trace a config cannot apply to, a `recorded` cache policy on a
/// trace that recorded no markers say, has no row for it), and under each
/// config only those traces meet its shared cache. Nothing is checked
/// again. `applicability` must be of `prepared`'s traces, in their order.
pub fn sweep_checked(
    prepared: &[&PreparedTrace<'_>],
    applicability: &Applicability,
    ctx: ReplayContext<'_>,
    recall_cost_usd: Option<f64>,
    progress: &(dyn Fn() + Sync),
) -> Result<Vec<TraceSweep>, ReplayError> {
    let shapes: Vec<RequestShape> = prepared.iter().map(|p| RequestShape::of(p.trace)).collect();
    let mut account = AccountSweep::new(applicability, &shapes, ctx, recall_cost_usd)?;
    let all: Vec<usize> = (0..prepared.len()).collect();
    account.segment(&all, prepared, progress)
}

/// A sweep of one account's traces (sharing one prompt cache per config)
/// taken a segment at a time: each segment a set of traces whose calls
/// all come after those of the segments before it, so that only one
/// segment's traces and rows are in memory while the caches are carried
/// over. Its results are those of [`sweep_checked`] over all the traces
/// at once, which is this sweep with one segment.
pub struct AccountSweep<'c> {
    pub(crate) applicability: &'c Applicability,
    pub(crate) ctx: ReplayContext<'c>,
    pub(crate) recall_cost_usd: Option<f64>,
    /// What is replayed, in the order the results are gathered: per set of
    /// traces that configs apply to, per set of configs sending the same
    /// requests.
    pub(crate) runs: Vec<SharedRun>,
    /// Whether the rows kept per call are only those of
    /// [`TraceSweep::written_rows`] ([`AccountSweep::written_rows_only`]).
    written_rows_only: bool,
    /// With `written_rows_only`, the costs of the configs whose rows are
    /// not kept go to a temporary file ([`AccountSweep::costs_on_disk`]).
    costs_on_disk: bool,
}

/// Configs that send the same requests, replayed once over the traces
/// they all apply to, with their caches.
pub(crate) struct SharedRun {
    /// Per trace of the account: whether the configs apply to it.
    pub(crate) mask: std::sync::Arc<Vec<bool>>,
    pub(crate) group: SameRequests,
    /// The caches of `group.run`'s configs, per model, each made as the
    /// first trace of its model meets it.
    pub(crate) sims: super::caches::SharedCaches,
}

/// What decides which configs of a sweep send the same requests, known of
/// a trace before it is replayed: its tool results' payload sizes in
/// history order, and how many results each call's history holds and how
/// many of them the model has answered. Small
/// (a number per result and call, most of them a byte or two): a report
/// keeps one per trace of the fleet until the end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct RequestShape {
    /// The sizes, then per call its count of results and how many of them
    /// are not answered yet, as LEB128 varints.
    packed: Box<[u8]>,
    /// How many sizes `packed` begins with.
    results: usize,
}

/// `n` as a LEB128 varint, appended to `out`.
fn push_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n & 0x7f) as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// The LEB128 varints of `bytes`, in order (ending at the first one cut
/// short or too long for a u64).
fn varints(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let (&b, tail) = rest.split_first()?;
            rest = tail;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(n);
            }
        }
        None
    })
}

impl RequestShape {
    /// A shape from its tool results' payload sizes (in history order) and
    /// each call's counts of results in its history.
    pub fn new(
        sizes: impl IntoIterator<Item = u64>,
        counts: impl IntoIterator<Item = ResultCounts>,
    ) -> Self {
        let mut packed = Vec::new();
        let mut results = 0;
        for size in sizes {
            push_varint(&mut packed, size);
            results += 1;
        }
        for c in counts {
            push_varint(&mut packed, c.total as u64);
            push_varint(&mut packed, c.total.saturating_sub(c.answered) as u64);
        }
        RequestShape {
            packed: packed.into_boxed_slice(),
            results,
        }
    }

    /// The tool results' payload sizes, in history order.
    pub fn sizes(&self) -> impl Iterator<Item = u64> + '_ {
        varints(&self.packed).take(self.results)
    }

    /// Per call, how many tool results its history holds and how many of
    /// them the model has answered.
    pub fn counts(&self) -> impl Iterator<Item = ResultCounts> + '_ {
        let mut rest = varints(&self.packed)
            .skip(self.results)
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
        std::iter::from_fn(move || {
            let total = rest.next()?;
            let unanswered = rest.next()?;
            Some(ResultCounts {
                total,
                answered: total.saturating_sub(unanswered),
            })
        })
    }

    /// The shape of `trace`'s requests.
    pub fn of(trace: &Trace) -> Self {
        let mut sizes = Vec::new();
        // Per message index `i`, the counts of `messages[..i]`.
        let mut before = Vec::with_capacity(trace.messages.len() + 1);
        let mut answered = 0;
        for m in &trace.messages {
            if m.role() == Role::Assistant {
                answered = sizes.len();
            }
            before.push(ResultCounts {
                total: sizes.len(),
                answered,
            });
            for b in m.blocks() {
                if let BlockKind::ToolResult { payload_chars, .. } = b.kind() {
                    sizes.push(*payload_chars);
                }
            }
        }
        before.push(ResultCounts {
            total: sizes.len(),
            answered,
        });
        let counts = trace
            .calls
            .iter()
            .map(|c| before[c.messages.min(trace.messages.len())]);
        RequestShape::new(sizes.iter().copied(), counts)
    }
}

impl<'c> AccountSweep<'c> {
    /// A sweep of the traces `applicability` checked (one account's), whose
    /// request shapes are `shapes` (in the same order).
    pub fn new<S: std::borrow::Borrow<RequestShape>>(
        applicability: &'c Applicability,
        shapes: &[S],
        ctx: ReplayContext<'c>,
        recall_cost_usd: Option<f64>,
    ) -> Result<Self, ReplayError> {
        let n = shapes.len();
        if applicability.traces() != n {
            return Err(ReplayError::Config {
                trace: format!("{n} traces"),
                reason: format!(
                    "the configs were checked against {} traces",
                    applicability.traces()
                ),
            });
        }
        // Which traces each config runs over; configs that run over the
        // same traces are replayed together, as one sweep always was.
        let mut by_mask: Vec<(Vec<bool>, Vec<Config>)> = Vec::new();
        for (c, config) in applicability.configs().iter().enumerate() {
            let mask: Vec<bool> = (0..n).map(|t| applicability.applies(t, c)).collect();
            match by_mask.iter_mut().find(|(m, _)| *m == mask) {
                Some((_, cs)) => cs.push(config.clone()),
                None => by_mask.push((mask, vec![config.clone()])),
            }
        }
        let mut runs = Vec::new();
        for (mask, configs) in by_mask {
            if !mask.iter().any(|m| *m) {
                continue;
            }
            let subset: Vec<&RequestShape> = (0..n)
                .filter(|&t| mask[t])
                .map(|t| std::borrow::Borrow::borrow(&shapes[t]))
                .collect();
            let mask = std::sync::Arc::new(mask);
            for group in same_requests(&subset, &configs, ctx.opts.build) {
                runs.push(SharedRun {
                    mask: mask.clone(),
                    group,
                    sims: Default::default(),
                });
            }
        }
        Ok(AccountSweep {
            applicability,
            ctx,
            recall_cost_usd,
            runs,
            written_rows_only: false,
            costs_on_disk: false,
        })
    }

    /// Keeps per-call rows only for the rows a report writes call by call
    /// ([`TraceSweep::written_rows`]); every other row keeps each call's
    /// cost and compacted ids ([`ReplayResult::costs`]), what ranking and
    /// a session's sums read. The sweep replays each trace under every
    /// config keeping those alone, ranks, then replays the written rows'
    /// configs again for their rows: one more replay of up to three
    /// configs, in place of holding a row per call for every config until
    /// the ranking names them.
    ///
    /// Only an account of one trace is swept so: the traces of a larger
    /// one meet each config's cache in turn, and the caches at a trace's
    /// first call would have to be kept or rebuilt to replay it again, so
    /// they keep every row.
    pub fn written_rows_only(mut self) -> Self {
        self.written_rows_only = true;
        self
    }

    /// With [`Self::written_rows_only`], keeps each call's cost of a
    /// config whose rows are not kept in a temporary file from the end of
    /// its replay until it is read, rather than in memory: held in memory,
    /// the lists of twenty configs are several times a long trace's file.
    pub fn costs_on_disk(mut self) -> Self {
        self.costs_on_disk = true;
        self
    }

    /// Sweeps the account's traces `which` (indices, ascending), prepared
    /// as `prepared`: traces whose calls all come after those of the
    /// segments swept before. Gives their sweeps, in `which`'s order.
    pub fn segment(
        &mut self,
        which: &[usize],
        prepared: &[&PreparedTrace<'_>],
        progress: &(dyn Fn() + Sync),
    ) -> Result<Vec<TraceSweep>, ReplayError> {
        if which.len() != prepared.len() || which.iter().any(|&t| t >= self.applicability.traces())
        {
            return Err(ReplayError::Config {
                trace: format!("{} traces", prepared.len()),
                reason: format!(
                    "a segment of {} traces out of {} checked",
                    which.len(),
                    self.applicability.traces()
                ),
            });
        }
        // A trace alone meets fresh caches, so any of its configs can be
        // replayed again on its own.
        let lean = self.written_rows_only && self.applicability.traces() == 1;
        let ctx = self.ctx;
        // Every config keeps each call's cost alone, on disk from the end
        // of its replay until the report has read it where asked; the rows
        // the report writes call by call (the status quo's among them) are
        // replayed again once the trace is ranked. Kept from this replay,
        // the status quo's rows sat beside every other config's replay.
        let spill = if lean && self.costs_on_disk {
            Some(super::spilled_costs::CostFile::new()?)
        } else {
            None
        };
        // A trace alone: its replays in flight bounded (read only then).
        let bound =
            super::in_flight::Bound::of(prepared.first().map_or(0, |p| p.trace.messages.len()));
        let replays = |runs: &mut Vec<SharedRun>| {
            runs.par_iter_mut()
                .map(
                    |run| -> Result<(Vec<usize>, Vec<Vec<ReplayResult>>), ReplayError> {
                        let here: Vec<usize> =
                            (0..which.len()).filter(|&k| run.mask[which[k]]).collect();
                        if here.is_empty() {
                            return Ok((here, Vec::new()));
                        }
                        let subset: Vec<&PreparedTrace<'_>> =
                            here.iter().map(|&k| prepared[k]).collect();
                        let ctx = if lean {
                            ctx.with_opts(super::ReplayOptions {
                                rows: PerCallRows::Costs,
                                ..ctx.opts
                            })
                        } else {
                            ctx
                        };
                        let results = if run.group.summarising() {
                            // Its calls are joined from the parts' rows:
                            // every row kept.
                            let ctx = ctx.with_opts(super::ReplayOptions {
                                rows: PerCallRows::All,
                                ..ctx.opts
                            });
                            super::autocompact::run_segment(
                                &subset,
                                &run.group.run,
                                ctx,
                                &mut run.sims,
                            )?
                        } else {
                            super::run_segment(&subset, &run.group.run, ctx, &mut run.sims)?
                        };
                        for _ in 0..run.group.members.len() * subset.len() {
                            progress();
                        }
                        let mut results = run.group.assign(results);
                        if let Some(file) = &spill {
                            // Configs sending the same requests share one
                            // list: written once.
                            let mut written: Vec<(std::sync::Arc<[super::CallCost]>, _)> =
                                Vec::new();
                            for r in results.iter_mut().flatten() {
                                let super::CallCosts::Kept(costs) = &r.costs else {
                                    continue;
                                };
                                let on_disk = match written
                                    .iter()
                                    .find(|(c, _)| std::sync::Arc::ptr_eq(c, costs))
                                {
                                    Some((_, on_disk)) => Clone::clone(on_disk),
                                    None => {
                                        let on_disk = file.spill(costs)?;
                                        written.push((costs.clone(), on_disk.clone()));
                                        on_disk
                                    }
                                };
                                r.costs = super::CallCosts::Spilled(on_disk);
                            }
                        }
                        if lean {
                            bound.replay_done();
                        }
                        Ok((here, results))
                    },
                )
                .collect::<Vec<_>>()
        };
        // Recall risk's index of each trace is built beside the replays,
        // except for a trace alone, whose index (about its file again) is
        // built once its replays are done and let go once it is ranked,
        // so that it is never held beside a replay in flight.
        let (replayed, risk_indexes) = if lean {
            // Its replays in flight bounded, so that a long trace's peak
            // does not grow with the cores.
            let runs = &mut self.runs;
            (bound.run(|| replays(runs)), Vec::new())
        } else {
            rayon::join(
                || replays(&mut self.runs),
                || {
                    prepared
                        .par_iter()
                        .map(|p| risk_index(p))
                        .collect::<Vec<RiskIndex>>()
                },
            )
        };
        let mut risk_indexes = risk_indexes.into_iter();
        // Per trace, every config's result.
        let mut per_trace: Vec<Vec<ReplayResult>> = prepared.iter().map(|_| Vec::new()).collect();
        for r in replayed {
            let (here, results) = r?;
            for (k, rs) in here.into_iter().zip(results) {
                per_trace[k].extend(rs);
            }
        }
        let grid = self.applicability.grid();
        prepared
            .iter()
            .zip(per_trace)
            .zip(which)
            .map(|((p, results), &t)| {
                let index = risk_indexes.next().unwrap_or_else(|| risk_index(p));
                let baseline = self.applicability.baseline(t);
                // A trace's rows: the grid and its own baseline, not the
                // other traces' baselines.
                let results = results
                    .into_iter()
                    .filter(|r| grid.contains(&r.config) || r.config == *baseline)
                    .collect();
                let mut sweep = rank(
                    p,
                    &index,
                    results,
                    baseline,
                    ctx.pricing,
                    self.recall_cost_usd,
                )?;
                drop(index);
                if lean {
                    // What ranking held (the index, each config's costs
                    // read back) is let go: its pages are handed back as
                    // between two replays, or the replay of the written
                    // rows grew on top of them.
                    bound.replay_done();
                    self.replay_written_rows(p, &mut sweep)?;
                }
                Ok(sweep)
            })
            .collect()
    }

    /// Replays `sweep`'s [`TraceSweep::written_rows`] whose per-call rows
    /// the sweep did not keep again, keeping them: each config as the sweep replayed it (under the run
    /// of its group of configs sending the same requests), against fresh
    /// caches, as the sweep met them on an account of one trace.
    fn replay_written_rows(
        &self,
        prepared: &PreparedTrace<'_>,
        sweep: &mut TraceSweep,
    ) -> Result<(), ReplayError> {
        let mut written = sweep.written_rows().to_vec();
        written.sort_unstable();
        written.dedup();
        // Any kept by the sweep need no second replay.
        written.retain(|&row| !sweep.rows[row].result.keeps_rows());
        // Per run, the indices in its `run` of the configs to replay and
        // the rows they fill.
        let mut wanted: Vec<(&SharedRun, Vec<(usize, usize)>)> = Vec::new();
        for row in written {
            let config = &sweep.rows[row].result.config;
            let found = self.runs.iter().find_map(|run| {
                run.group
                    .members
                    .iter()
                    .find(|(c, _)| c == config)
                    .map(|(_, i)| (run, *i))
            });
            let Some((run, i)) = found else {
                return Err(ReplayError::Config {
                    trace: prepared.trace.name.clone(),
                    reason: format!("{config} is not among the configs swept"),
                });
            };
            match wanted.iter_mut().find(|(r, _)| std::ptr::eq(*r, run)) {
                Some((_, rows)) => rows.push((i, row)),
                None => wanted.push((run, vec![(i, row)])),
            }
        }
        // Each run's configs to replay (one compaction policy and model:
        // they share the engine's work) and the rows they fill.
        let wanted: Vec<(Vec<Config>, Vec<usize>)> = wanted
            .into_iter()
            .map(|(run, rows)| {
                rows.iter()
                    .map(|&(i, row)| (run.group.run[i].clone(), row))
                    .unzip()
            })
            .collect();
        let ctx = self.ctx.with_opts(super::ReplayOptions {
            rows: PerCallRows::All,
            ..self.ctx.opts
        });
        let bound = super::in_flight::Bound::of(prepared.trace.messages.len());
        let replayed = bound.run(|| {
            wanted
                .par_iter()
                .map(|(configs, _)| {
                    let rows = super::run_group(prepared, configs, ctx);
                    bound.replay_done();
                    rows
                })
                .collect::<Result<Vec<_>, _>>()
        })?;
        for ((_, rows), results) in wanted.iter().zip(replayed) {
            for (&row, result) in rows.iter().zip(results) {
                let r = &mut sweep.rows[row].result;
                r.calls = result.calls;
                r.costs = Default::default();
            }
        }
        Ok(())
    }
}

/// Configs whose requests are the same at every call, replayed once.
pub(crate) struct SameRequests {
    /// The configs run: one per cache policy, under the group's first
    /// compaction policy.
    pub(crate) run: Vec<Config>,
    /// Each config of the group and the index in `run` of its replay.
    pub(crate) members: Vec<(Config, usize)>,
}

impl SameRequests {
    /// Whether its configs summarise (and so replay a trace as its parts).
    pub(crate) fn summarising(&self) -> bool {
        self.run
            .first()
            .is_some_and(|c| c.compaction.summarising().is_some())
    }

    /// Per trace, the replays of `run` (per trace, one per config of
    /// `self.run`) as the results of every member config: each replay is
    /// copied for all but the last config it serves, which takes it.
    pub(crate) fn assign(&self, results: Vec<Vec<ReplayResult>>) -> Vec<Vec<ReplayResult>> {
        let mut last_member = vec![0; self.run.len()];
        for (m, (_, run)) in self.members.iter().enumerate() {
            last_member[*run] = m;
        }
        results
            .into_iter()
            .map(|rs| {
                let mut rs: Vec<Option<ReplayResult>> = rs.into_iter().map(Some).collect();
                let mut out = Vec::with_capacity(self.members.len());
                for (m, (config, run)) in self.members.iter().enumerate() {
                    let result = match rs.get_mut(*run) {
                        Some(slot) if last_member[*run] == m => slot.take(),
                        Some(slot) => slot.clone(),
                        None => None,
                    };
                    if let Some(r) = result {
                        out.push(ReplayResult {
                            config: config.clone(),
                            ..r
                        });
                    }
                }
                out
            })
            .collect()
    }
}

/// Groups `configs` by the requests they send. Configs of one compaction
/// policy and model share the engine's work at every call (each places its
/// own markers and runs its own cache). Ledger policies that compact the
/// same results at every call of every trace (thresholds between the same
/// two payload sizes, say) send the same bytes: their replays differ only
/// by the config's name, so each of their cache policies is replayed once
/// (not under [`Build::Reference`], which replays every config).
fn same_requests(shapes: &[&RequestShape], configs: &[Config], build: Build) -> Vec<SameRequests> {
    let mut groups: Vec<SameRequests> = Vec::new();
    let same_schedule = same_schedules(shapes, configs, build);
    let mut by_schedule: HashMap<usize, usize, FastBuild> = HashMap::default();
    for (ci, c) in configs.iter().enumerate() {
        let g = match same_schedule[ci] {
            Some(first) => *by_schedule.entry(first).or_insert_with(|| {
                groups.push(SameRequests {
                    run: Vec::new(),
                    members: Vec::new(),
                });
                groups.len() - 1
            }),
            None => match groups.iter().position(|g| {
                g.run.first().is_some_and(|r| {
                    r.compaction == c.compaction && r.model == c.model && r.thinking == c.thinking
                })
            }) {
                Some(g) => g,
                None => {
                    groups.push(SameRequests {
                        run: Vec::new(),
                        members: Vec::new(),
                    });
                    groups.len() - 1
                }
            },
        };
        let group = &mut groups[g];
        let run = match group.run.iter().position(|r| r.cache == c.cache) {
            Some(i) => i,
            None => {
                let compaction = group
                    .run
                    .first()
                    .map_or_else(|| c.compaction.clone(), |r| r.compaction.clone());
                group.run.push(Config {
                    thinking: c.thinking,
                    compaction,
                    cache: c.cache,
                    model: c.model.clone(),
                });
                group.run.len() - 1
            }
        };
        group.members.push((c.clone(), run));
    }
    groups
}

/// Per config: for a ledger config (under [`Build::Incremental`]), the
/// index of the first config of the same model whose policy compacts the
/// same results at every call of every trace of `shapes` (its own index
/// when none before it does); `None` for any other.
///
/// Found a trace at a time: the configs start in one class per model, and
/// each trace splits a class whose members' schedules on it differ. Two
/// configs end in one class exactly when their schedules over all the
/// traces are equal, and only one trace's schedules are held at a time
/// (an account of tens of thousands of traces has millions of calls).
fn same_schedules(
    shapes: &[&RequestShape],
    configs: &[Config],
    build: Build,
) -> Vec<Option<usize>> {
    // The ledger configs, and their distinct policies.
    let mut policies: Vec<CompactionPolicy> = Vec::new();
    let mut ledger: Vec<(usize, usize)> = Vec::new();
    for (ci, c) in configs.iter().enumerate() {
        let Some(policy) = c
            .compaction
            .ledger_policy()
            .filter(|_| build == Build::Incremental)
        else {
            continue;
        };
        let p = match policies.iter().position(|q| *q == policy) {
            Some(p) => p,
            None => {
                policies.push(policy);
                policies.len() - 1
            }
        };
        ledger.push((ci, p));
    }
    // One class per model and thinking edit to begin with (a thinking
    // edit changes the requests whatever the schedule).
    let mut models: Vec<(&Option<String>, _)> = Vec::new();
    let mut class: Vec<usize> = ledger
        .iter()
        .map(|&(ci, _)| {
            let model = (&configs[ci].model, configs[ci].thinking);
            match models.iter().position(|m| *m == model) {
                Some(k) => k,
                None => {
                    models.push(model);
                    models.len() - 1
                }
            }
        })
        .collect();
    let mut classes = models.len();
    for shape in shapes {
        if classes == ledger.len() {
            // Every config is alone in its class: nothing more to split.
            break;
        }
        // This trace's schedule of each policy, the equal ones numbered
        // alike.
        let schedules: Vec<TraceSchedule> = policies.iter().map(|p| shape.schedule(*p)).collect();
        let mut numbered: HashMap<&TraceSchedule, usize, FastBuild> = HashMap::default();
        let number: Vec<usize> = schedules
            .iter()
            .map(|s| {
                let n = numbered.len();
                *numbered.entry(s).or_insert(n)
            })
            .collect();
        let mut split: HashMap<(usize, usize), usize, FastBuild> = HashMap::default();
        for (k, &(_, p)) in ledger.iter().enumerate() {
            let n = split.len();
            class[k] = *split.entry((class[k], number[p])).or_insert(n);
        }
        classes = split.len();
    }
    let mut first_of_class: HashMap<usize, usize, FastBuild> = HashMap::default();
    let mut out = vec![None; configs.len()];
    for (k, &(ci, _)) in ledger.iter().enumerate() {
        out[ci] = Some(*first_of_class.entry(class[k]).or_insert(ci));
    }
    out
}

/// What a ledger policy compacts at each call of one trace: at each call,
/// how many results; and in order, the results compacted at any call. A
/// call's compacted results are the first of those, so equal schedules
/// compact the same results at every call.
#[derive(PartialEq, Eq, Hash)]
struct TraceSchedule {
    counts: Vec<u32>,
    results: Vec<u32>,
}

impl RequestShape {
    /// The schedule of `policy` on this trace, by the engine's own rule
    /// ([`CompactionPolicy::compacts`]: old enough and large enough).
    fn schedule(&self, policy: CompactionPolicy) -> TraceSchedule {
        // Per result: whether it is large; and how many large ones come
        // before each.
        let large: Vec<bool> = self.sizes().map(|chars| policy.large(chars)).collect();
        let mut large_before = Vec::with_capacity(large.len() + 1);
        large_before.push(0u32);
        for &l in &large {
            let n = large_before.last().copied().unwrap_or(0);
            large_before.push(n + u32::from(l));
        }
        let mut counts = Vec::new();
        let mut oldest = 0;
        for call in self.counts() {
            let eligible = policy.eligible(call).min(large.len());
            oldest = oldest.max(eligible);
            counts.push(large_before[eligible]);
        }
        let results = (0..oldest)
            .filter(|&r| large[r])
            .map(|r| r as u32)
            .collect();
        TraceSchedule { counts, results }
    }
}

/// The recall-risk index of a prepared trace (recalls priced at its
/// calibrated content tokens).
pub(crate) fn risk_index(prepared: &PreparedTrace<'_>) -> RiskIndex {
    RiskIndex::new(prepared.trace, &|m, b| {
        prepared
            .messages
            .get(m)
            .and_then(|bs| bs.get(b))
            .map_or(0, |c| c.tokens(&prepared.calibration, 0))
    })
}

/// A replay's rows as the trace's calls, one for one, as recall risk reads
/// them by the trace's call index: without the summary calls a
/// summarising compaction added, and each call as what recall risk reads
/// of it (its cost and compacted ids), not a whole row.
fn traced_calls(calls: &super::CallResults) -> Vec<super::CallCost> {
    calls
        .iter()
        .filter(|c| !c.summary)
        .map(|c| super::CallCost::from(&c))
        .collect()
}

/// One trace's replays ranked: recall risk, risk-adjusted cost, savings
/// against the baseline, the Pareto front and the recommendation.
pub(crate) fn rank(
    prepared: &PreparedTrace<'_>,
    risk_index: &RiskIndex,
    results: Vec<ReplayResult>,
    baseline: &Config,
    pricing: &Pricing,
    recall_cost_usd: Option<f64>,
) -> Result<TraceSweep, ReplayError> {
    let trace = prepared.trace;
    let input_price = pricing.lookup(baseline.model_for_trace(trace))?.rates.input / 1e6;
    let mut rows = Vec::with_capacity(results.len());
    // Configs of one compaction policy share their compacted lists, so
    // their scores are computed once.
    let mut scores: std::collections::HashMap<Vec<(usize, usize)>, RecallRisk, FastBuild> =
        Default::default();
    // Where the ledger ran, the recalls its record shows (what the status
    // quo's replay stubbed is what the agent's ledger stubbed).
    let ledger_ran = matches!(baseline.compaction, Compaction::Ledger { .. });
    let observed = match results.iter().find(|r| r.config == *baseline) {
        Some(r) => match r.per_call()? {
            PerCall::Rows(calls) => risk_index.observe(&traced_calls(calls)[..], ledger_ran),
            PerCall::Costs(costs) => risk_index.observe(&costs, ledger_ran),
        },
        None => None,
    };
    for result in results {
        // One config's per-call figures at a time: its costs, if spilled,
        // are read back here and let go before the next config's.
        let (risk, calls) = {
            let per_call = result.per_call()?;
            let risk = match &per_call {
                PerCall::Rows(calls) => {
                    let traced = traced_calls(calls);
                    *scores
                        .entry(risk_index.identity(&traced[..]))
                        .or_insert_with(|| risk_index.score(&traced[..], observed.as_ref()))
                }
                PerCall::Costs(costs) => *scores
                    .entry(risk_index.identity(&costs[..]))
                    .or_insert_with(|| risk_index.score(&costs[..], observed.as_ref())),
            };
            (risk, per_call.len())
        };
        let per_recall = recall_cost_usd.unwrap_or_else(|| {
            if calls == 0 {
                0.0
            } else {
                result.totals.cost_usd / calls as f64
            }
        });
        let recall_cost_usd = Range {
            low: risk.needs.low * per_recall + risk.recall_tokens.low * input_price,
            mid: risk.needs.mid * per_recall + risk.recall_tokens.mid * input_price,
            high: risk.needs.high * per_recall + risk.recall_tokens.high * input_price,
        };
        rows.push(SweepRow {
            // One trace's estimate may fall below zero (see RecallRisk);
            // its own ranking never counts a recall as a gain.
            risk_adjusted_cost_usd: result.totals.cost_usd + recall_cost_usd.mid.max(0.0),
            recall_tokens_usd: risk.recall_tokens.mid * input_price,
            recall_cost_usd,
            result,
            risk,
            savings_usd: 0.0,
            savings_pct: 0.0,
            pareto: false,
            no_effect: false,
        });
    }
    // By cost, then the simpler policy (so that on an exact tie the first
    // row, the one labelled cheapest, is the one the recommendation would
    // also prefer: a compaction that changes nothing is not "cheapest"
    // beside no compaction), then by config string (each printed once, not
    // per comparison).
    let mut keyed: Vec<(String, SweepRow)> = rows
        .into_iter()
        .map(|r| (r.result.config.to_string(), r))
        .collect();
    keyed.sort_by(|(na, a), (nb, b)| {
        a.result
            .totals
            .cost_usd
            .total_cmp(&b.result.totals.cost_usd)
            .then_with(|| {
                a.result
                    .config
                    .complexity()
                    .cmp(&b.result.config.complexity())
            })
            .then_with(|| na.cmp(nb))
    });
    let mut rows: Vec<SweepRow> = keyed.into_iter().map(|(_, r)| r).collect();
    let base_idx = rows
        .iter()
        .position(|r| r.result.config == *baseline)
        .unwrap_or(0);
    let base_cost = rows.get(base_idx).map_or(0.0, |r| r.result.totals.cost_usd);
    for r in &mut rows {
        r.savings_usd = base_cost - r.result.totals.cost_usd;
        r.savings_pct = if base_cost > 0.0 {
            r.savings_usd / base_cost * 100.0
        } else {
            0.0
        };
    }
    let flags: Vec<bool> = rows
        .iter()
        .map(|r| {
            !rows.iter().any(|o| {
                let (oc, rc) = (o.result.totals.cost_usd, r.result.totals.cost_usd);
                let (on, rn) = (o.risk.needs.mid, r.risk.needs.mid);
                oc <= rc && on <= rn && (oc < rc || on < rn)
            })
        })
        .collect();
    for (r, f) in rows.iter_mut().zip(flags) {
        r.pareto = f;
        r.no_effect =
            r.result.config.compaction != Compaction::Off && r.result.totals.compacted_results == 0;
    }
    let recommended = recommend(&rows, baseline, |r| r.risk_adjusted_cost_usd);
    Ok(TraceSweep {
        trace: trace.name.clone(),
        description: trace.description.clone(),
        source: trace.source.clone(),
        rows,
        baseline: base_idx,
        cheapest: 0,
        recommended,
        recall_cost_usd,
        observed_recall: observed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CallCost;

    proptest::proptest! {
        /// A shape gives back the sizes and counts it was made of, whatever
        /// their size.
        #[test]
        fn a_request_shape_gives_back_what_it_was_made_of(
            sizes in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..40),
            counts in proptest::collection::vec((0usize..100_000, 0usize..100_000), 0..40),
        ) {
            let counts: Vec<ResultCounts> = counts
                .into_iter()
                .map(|(total, answered)| ResultCounts { total, answered: answered.min(total) })
                .collect();
            let shape = RequestShape::new(sizes.iter().copied(), counts.iter().copied());
            proptest::prop_assert_eq!(shape.sizes().collect::<Vec<_>>(), sizes);
            proptest::prop_assert_eq!(shape.counts().collect::<Vec<_>>(), counts);
        }
    }

    /// The classes [`same_schedules`] finds, as the reference finds them:
    /// each config's schedules over every trace, concatenated (results of
    /// a trace closed by `u32::MAX`), compared whole.
    fn same_schedules_whole(shapes: &[&RequestShape], configs: &[Config]) -> Vec<Option<usize>> {
        // A schedule spelled out (the policy's name, the counts, the results)
        // and the first config that had it.
        type Schedule = (Option<String>, Vec<u32>, Vec<u32>);
        let mut first: HashMap<Schedule, usize> = HashMap::new();
        configs
            .iter()
            .enumerate()
            .map(|(ci, c)| {
                let policy = c.compaction.ledger_policy()?;
                let (mut counts, mut results) = (Vec::new(), Vec::new());
                for shape in shapes {
                    let s = shape.schedule(policy);
                    counts.extend(s.counts);
                    results.extend(s.results);
                    results.push(u32::MAX);
                }
                Some(
                    *first
                        .entry((c.model.clone(), counts, results))
                        .or_insert(ci),
                )
            })
            .collect()
    }

    proptest::proptest! {
        /// Refined a trace at a time, the classes of configs that compact
        /// the same results are those of the schedules compared whole.
        #[test]
        fn configs_share_a_class_exactly_when_their_whole_schedules_are_equal(
            traces in proptest::collection::vec(
                (
                    proptest::collection::vec(0u64..60, 0..8),
                    proptest::collection::vec(0usize..10, 0..6),
                ),
                0..5,
            ),
            policies in proptest::collection::vec((0u64..60, 0usize..4, proptest::prelude::any::<bool>()), 1..10),
        ) {
            let shapes: Vec<RequestShape> = traces
                .iter()
                .map(|(sizes, totals)| {
                    let mut totals = totals.clone();
                    totals.sort_unstable();
                    // The model has answered all but the newest result.
                    let counts = totals.into_iter().map(|t| {
                        let total = t.min(sizes.len());
                        ResultCounts { total, answered: total.saturating_sub(1) }
                    });
                    RequestShape::new(sizes.iter().copied(), counts)
                })
                .collect();
            let shapes: Vec<&RequestShape> = shapes.iter().collect();
            let mut configs: Vec<Config> = policies
                .iter()
                .map(|&(threshold, keep_last, opus)| Config { thinking: None,
                    compaction: Compaction::Ledger { threshold, keep_last },
                    cache: Cache::None,
                    model: opus.then(|| "claude-opus-4-5".to_owned()),
                })
                .collect();
            configs.insert(configs.len() / 2, Config { thinking: None,
                compaction: Compaction::Off,
                cache: Cache::None,
                model: None,
            });
            proptest::prop_assert_eq!(
                same_schedules(&shapes, &configs, Build::Incremental),
                same_schedules_whole(&shapes, &configs)
            );
            proptest::prop_assert!(
                same_schedules(&shapes, &configs, Build::Reference).iter().all(Option::is_none)
            );
        }
    }

    /// A tool loop of `calls` calls, each sending the whole history; every
    /// third result 1,000 characters long, the others 10.
    fn tool_loop(calls: usize) -> Trace {
        let mut messages = vec![r#"{"role":"user","content":"Start."}"#.to_owned()];
        for i in 0..calls - 1 {
            messages.push(format!(
                r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"t{i}","name":"read","input":{{}}}}]}}"#
            ));
            let body = "x".repeat(if i % 3 == 0 { 1000 } else { 10 });
            messages.push(format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"{body}"}}]}}"#
            ));
        }
        let calls: Vec<String> = (0..calls)
            .map(|c| format!(r#"{{"messages":{},"start_ms":{}}}"#, 1 + 2 * c, 1_000 * c))
            .collect();
        let json = format!(
            r#"{{"format":"tracecost.trace/v1","name":"loop","provider":"anthropic","model":"claude-sonnet-4-5","messages":[{}],"calls":[{}]}}"#,
            messages.join(","),
            calls.join(",")
        );
        tracecost_trace::load_str(&json, "loop.json")
            .expect("trace")
            .traces
            .remove(0)
    }

    /// Configs that send the same requests hold one list of per-call
    /// results between them, not a copy each: over a long trace the
    /// copies were most of a sweep's memory.
    #[test]
    fn configs_sending_the_same_requests_share_their_per_call_results() {
        let trace = tool_loop(12);
        let pricing = Pricing::builtin();
        let memo = tracecost_cost::tokens::TokenMemo::new(std::sync::Arc::new(
            tracecost_cost::tokens::CharsPerToken(4.0),
        ));
        let price = pricing.lookup(&trace.model).expect("priced model");
        let prepared = PreparedTrace::new(&trace, &memo, price, true);
        let ctx = ReplayContext {
            pricing: &pricing,
            memo: &memo,
            opts: crate::ReplayOptions {
                batch: false,
                progress: None,
                ..Default::default()
            },
        };
        let configs: Vec<Config> = [
            "ledger:t=100,k=0+none",
            "ledger:t=500,k=0+none",
            "ledger:t=5000,k=0+none",
        ]
        .iter()
        .map(|c| c.parse().expect("config"))
        .collect();
        let baseline: Config = "off+none".parse().expect("config");
        let sweep = sweep_trace(&prepared, &configs, &baseline, ctx, None, &|| {}).expect("sweep");
        let calls = |config: &str| {
            let row = sweep
                .rows
                .iter()
                .find(|r| r.result.config.to_string() == config)
                .expect("row");
            &row.result.calls
        };
        let (low, high) = (
            calls("ledger:t=100,k=0+none"),
            calls("ledger:t=500,k=0+none"),
        );
        // Both thresholds compact the long results alone.
        assert!(low.iter().any(|c| !c.compacted.is_empty()));
        assert_eq!(low.len(), 12);
        assert!(low.is_shared_with(high), "the same requests, one list");
        // A policy that compacts other results has a list of its own.
        assert!(!low.is_shared_with(calls("ledger:t=5000,k=0+none")));
        assert!(!low.is_shared_with(calls("off+none")));
    }

    /// A sweep for a report keeps per-call rows only for the rows it
    /// writes call by call; each other row keeps its calls' costs and
    /// compacted ids, the same as the full rows', and every figure of the
    /// sweep is that of a sweep keeping every row. An account of several
    /// traces keeps every row.
    #[test]
    fn a_report_sweep_keeps_rows_only_where_they_are_written() {
        let trace = tool_loop(12);
        let pricing = Pricing::builtin();
        let memo = tracecost_cost::tokens::TokenMemo::new(std::sync::Arc::new(
            tracecost_cost::tokens::CharsPerToken(4.0),
        ));
        let price = pricing.lookup(&trace.model).expect("priced model");
        let prepared = PreparedTrace::new(&trace, &memo, price, true);
        let ctx = ReplayContext::new(&pricing, &memo);
        let configs: Vec<Config> = [
            "ledger:t=100,k=0+none",
            "ledger:t=500,k=0+tail",
            "ledger:t=5000,k=0+none",
            "off+tail",
            "ledger:t=100,k=2+tail",
        ]
        .iter()
        .map(|c| c.parse().expect("config"))
        .collect();
        let baseline: Config = "off+none".parse().expect("config");
        let full = sweep_trace(&prepared, &configs, &baseline, ctx, None, &|| {}).expect("sweep");
        let sweep_of = |traces: &[&PreparedTrace<'_>], on_disk: bool| {
            let ts: Vec<&Trace> = traces.iter().map(|p| p.trace).collect();
            let applicability =
                Applicability::every(&ts, &configs, std::slice::from_ref(&baseline), &pricing)
                    .expect("applies");
            let shapes: Vec<RequestShape> = ts.iter().map(|t| RequestShape::of(t)).collect();
            let which: Vec<usize> = (0..traces.len()).collect();
            let sweep = AccountSweep::new(&applicability, &shapes, ctx, None)
                .expect("sweep")
                .written_rows_only();
            let mut sweep = if on_disk {
                sweep.costs_on_disk()
            } else {
                sweep
            };
            sweep.segment(&which, traces, &|| {}).expect("sweep")
        };
        let lean_of = |traces: &[&PreparedTrace<'_>]| sweep_of(traces, true);
        // Without a temporary file, the costs are kept in memory, the same.
        let in_memory = sweep_of(&[&prepared], false).remove(0);
        let lean = lean_of(&[&prepared]).remove(0);
        for (m, l) in in_memory.rows.iter().zip(&lean.rows) {
            assert_eq!(m.result.calls, l.result.calls);
            if !l.result.costs.is_empty() {
                assert!(matches!(m.result.costs, crate::CallCosts::Kept(_)));
                assert_eq!(
                    &m.result.costs.read().expect("in memory")[..],
                    &l.result.costs.read().expect("read back")[..]
                );
            }
        }
        let written = lean.written_rows();
        assert!(lean.rows.len() > written.len());
        let mut rows_kept = 0;
        for (i, (l, f)) in lean.rows.iter().zip(&full.rows).enumerate() {
            assert_eq!(l.result.config, f.result.config);
            if written.contains(&i) {
                assert_eq!(l.result.calls, f.result.calls, "{}", l.result.config);
                assert!(l.result.costs.is_empty());
                rows_kept += 1;
            } else {
                assert!(
                    l.result.calls.is_empty(),
                    "{} kept its rows",
                    l.result.config
                );
                // Its costs are on disk, not a list per call in memory,
                // and read back as replayed.
                assert!(
                    matches!(l.result.costs, crate::CallCosts::Spilled(_)),
                    "{} kept its costs in memory",
                    l.result.config
                );
                let costs: Vec<CallCost> =
                    f.result.calls.iter().map(|c| CallCost::from(&c)).collect();
                assert_eq!(&l.result.costs.read().expect("read back")[..], &costs[..]);
            }
        }
        assert!(rows_kept >= 1);
        let figures = |s: &TraceSweep| {
            let mut s = s.clone();
            for r in &mut s.rows {
                r.result.calls = Default::default();
                r.result.costs = Default::default();
            }
            s
        };
        assert_eq!(figures(&lean), figures(&full));
        // Two traces meeting one cache per config: every row kept.
        let other = tool_loop(5);
        let other_prepared = PreparedTrace::new(&other, &memo, price, true);
        for s in lean_of(&[&prepared, &other_prepared]) {
            assert!(
                s.rows
                    .iter()
                    .all(|r| r.result.costs.is_empty() && !r.result.calls.is_empty())
            );
        }
    }

    #[test]
    fn varints_cut_short_or_too_long_end_the_numbers() {
        assert_eq!(varints(&[0x05, 0x80]).collect::<Vec<_>>(), vec![5]);
        assert_eq!(varints(&[0xff; 11]).count(), 0);
        let mut max = Vec::new();
        push_varint(&mut max, u64::MAX);
        assert_eq!(varints(&max).collect::<Vec<_>>(), vec![u64::MAX]);
    }

    #[test]
    fn grid_is_a_deduplicated_product_in_order() {
        let g = Grid {
            compactions: vec![
                Compaction::Off,
                Compaction::Ledger {
                    threshold: 10,
                    keep_last: 1,
                },
                Compaction::Off,
            ],
            caches: vec![Cache::None, Cache::Recorded],
            models: vec![None],
        };
        let c: Vec<String> = g.configs().iter().map(ToString::to_string).collect();
        assert_eq!(
            c,
            [
                "off+none",
                "off+recorded",
                "ledger:t=10,k=1+none",
                "ledger:t=10,k=1+recorded"
            ]
        );
    }
}

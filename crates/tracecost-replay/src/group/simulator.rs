//! The second stage: each config's calls simulated against its prompt
//! cache, from the plan, and priced.

use std::sync::Arc;

use tracecost_cost::cache_sim::{Breakpoint, EntryState, PrefixIndex};
use tracecost_cost::pricing::{CostBreakdown, ModelPrice, Usage, is_regional_id};
use tracecost_cost::prompt_cache::PromptCache;
use tracecost_policy::Config;
use tracecost_trace::{RecordedModifiers, Trace};

use super::plan_log::{PlanDone, Planned, ttl_of};
use crate::breakdown::{BreakdownSum, ClassBill, PricedCall};
use crate::explain;
use crate::prepare::{SharedState, TraceCalibration};
use crate::varint::{put_varint, take_varint};
use crate::{
    CallCost, CallCosts, CallResult, CallResults, FidelitySum, PerCallRows, ReplayContext,
    ReplayError, ReplayResult, TotalsSum, recorded_usage,
};

/// The second stage of replaying a group of configs over one trace: each
/// call planned ([`Planned`]) simulated and billed for each config against
/// the cache simulator handed in ([`bill`]). It holds the request's prefix
/// index as it stands (not its blocks: what the simulation reads of them
/// is indexed, and what the explanation reads is in the blocks the call
/// appended), and each config's results, not the trace.
pub(crate) struct Simulator<'a> {
    configs: &'a [Config],
    /// The trace's name, for errors.
    trace: String,
    batch: bool,
    /// Which per-call rows the results keep.
    rows: PerCallRows,
    index: PrefixIndex,
    /// Per call replayed: what every config of the group sees alike.
    calls: Vec<SharedCall<'a>>,
    /// Per config, per call replayed: what its simulation gave. Kept apart
    /// from `calls`, and put together only when the trace is finished: a
    /// streamed account holds these for every trace that overlaps in time,
    /// and most of a call's result is the same for every config.
    per_config: Vec<ConfigCalls>,
    /// Per config: the cache keys the trace's previous call read or wrote.
    last_keys: Vec<Vec<u128>>,
    /// Per config: what the previous call cached, to tell why a call
    /// missed.
    before: Vec<Option<explain::Before>>,
    /// One config's breakpoints at the current call (a buffer reused).
    breakpoints: Vec<Breakpoint>,
}

impl<'a> Simulator<'a> {
    pub(crate) fn new(trace: &Trace, configs: &'a [Config], ctx: ReplayContext<'a>) -> Self {
        Simulator {
            configs,
            trace: trace.name.clone(),
            batch: ctx.opts.batch,
            rows: ctx.opts.rows,
            index: PrefixIndex::default(),
            calls: Vec::with_capacity(trace.calls.len()),
            per_config: configs
                .iter()
                .map(|_| ConfigCalls::with_calls(trace.calls.len()))
                .collect(),
            last_keys: configs.iter().map(|_| Vec::new()).collect(),
            before: vec![None; configs.len()],
            breakpoints: Vec::new(),
        }
    }

    /// Simulates and bills the call `p` planned (calls must come in order)
    /// against `sims`, one cache simulator per config, indexing its
    /// request from the blocks it appended: for a call planned ahead of
    /// its simulation ([`super::PlanLog`]).
    pub(crate) fn call(
        &mut self,
        p: &Planned<'a>,
        sims: &mut [Box<dyn PromptCache>],
    ) -> Result<(), ReplayError> {
        let mut index = std::mem::take(&mut self.index);
        index.truncate(p.from_block as usize);
        index.append(p.price, &p.appended);
        let billed = self.call_indexed(p, &index, sims);
        self.index = index;
        billed
    }

    /// [`Simulator::call`] with the request's prefix index as the planner
    /// left it: for a call simulated as soon as it is planned, so that the
    /// index of a long history is held once, not again here.
    pub(crate) fn call_indexed(
        &mut self,
        p: &Planned<'a>,
        index: &PrefixIndex,
        sims: &mut [Box<dyn PromptCache>],
    ) -> Result<(), ReplayError> {
        if let Some((parts, state)) = p.shared.as_deref().cloned() {
            let warm_through = match state {
                SharedState::Unknown | SharedState::Carried => None,
                SharedState::Cold => Some(None),
                SharedState::Warm(j) => Some(Some(parts.start + j)),
                SharedState::ReadPast { written } => {
                    // Every hidden block (the own rest is `parts.end`),
                    // then those before the tail the call wrote.
                    let total = index
                        .len()
                        .checked_sub(1)
                        .and_then(|b| index.tokens_through(b));
                    let through = (parts.end + 1..index.len())
                        .take_while(|&b| {
                            total
                                .zip(index.tokens_through(b))
                                .is_some_and(|(n, t)| n - t >= written)
                        })
                        .last()
                        .unwrap_or(parts.end);
                    Some(Some(through))
                }
            };
            if let Some(through) = warm_through {
                // The shared parts, and past them as far as a read went.
                let last = match through {
                    Some(t) if t >= parts.end => t + 1,
                    _ => parts.end,
                };
                for block in parts.start..last {
                    let Some(key) = index.key_at(block) else {
                        continue;
                    };
                    for sim in sims.iter_mut() {
                        if through.is_some_and(|t| block <= t) {
                            sim.warm(key, p.start_ms.unwrap_or(0));
                        } else {
                            sim.evict(key);
                        }
                    }
                }
            }
        }
        // A read the record shows fell back to an older prefix: under
        // every config that takes misses from the record, this call reads
        // no more than that prefix. The rest is set aside, not dropped:
        // the records show later calls reading it again seconds on (the
        // service serves a prefix from more than one machine), and each
        // of those that fell back says so in its own record.
        if let Some(held) = p.held_blocks {
            for (c, sim) in self.configs.iter().zip(sims.iter_mut()) {
                if !matches!(
                    c.cache,
                    tracecost_policy::Cache::OpenAiAuto {
                        recorded_misses: true,
                        ..
                    }
                ) {
                    continue;
                }
                for block in held as usize..index.len() {
                    if let Some(key) = index.key_at(block) {
                        sim.set_aside(key);
                    }
                }
            }
        }
        let mut marks = p.marks.iter().map(|&m| m as usize);
        let layout = p.layout();
        for ((((c, sim), calls), last), before) in self
            .configs
            .iter()
            .zip(sims.iter_mut())
            .zip(self.per_config.iter_mut())
            .zip(self.last_keys.iter_mut())
            .zip(self.before.iter_mut())
        {
            self.breakpoints.clear();
            for _ in 0..marks.next().unwrap_or(0) {
                let (block, ttl) = (marks.next().unwrap_or(0), marks.next().unwrap_or(0));
                self.breakpoints.push(Breakpoint {
                    block,
                    ttl: ttl_of(ttl as u32),
                });
            }
            bill(
                c,
                sim.as_mut(),
                calls,
                last,
                before,
                &self.breakpoints,
                &CallFacts {
                    trace: &self.trace,
                    p,
                    layout: &layout,
                    index,
                },
            )?;
            sim.put_back();
        }
        self.calls.push(SharedCall {
            ci: p.index(),
            chars: p.chars,
            stable_prefix_tokens: p.stable_prefix_tokens,
            price: p.price,
        });
        Ok(())
    }

    /// Lets go of what only simulating reads (the request's index, the
    /// keys and caching of the call before): for a trace every call of
    /// which is simulated, waiting for its results to be put together.
    pub(crate) fn simulated(&mut self) {
        self.index = PrefixIndex::default();
        self.last_keys = Vec::new();
        self.before = Vec::new();
        self.breakpoints = Vec::new();
    }

    /// The results, one per config, of `trace` (the one simulated, read
    /// again) planned as `done` says.
    pub(crate) fn finish(
        self,
        done: PlanDone<'a>,
        trace: &Trace,
        calibration: TraceCalibration,
    ) -> Vec<ReplayResult> {
        let batch = self.batch;
        let compacted = done.log.finish();
        let shared = self.calls;
        let mut out = Vec::with_capacity(self.configs.len());
        // What the record says of each call that its rows show is the same
        // under every config: held once a call and shared by the rows (a
        // pointer a call where the trace recorded nothing), made as the
        // first config's rows are.
        let mut records: Vec<Option<crate::SharedRecord>> = Vec::with_capacity(shared.len());
        for (c, own) in self.configs.iter().zip(self.per_config) {
            let mut bill = BreakdownSum::default();
            // What the record says of each call, read as the config's rows
            // are made: held for every call of a long trace at once (200
            // bytes a call), it stood above the replay that had just ended.
            let mut last_model: Option<Arc<str>> = None;
            let recorded = shared
                .iter()
                .map(|s| RecordedCall::of(trace, s, batch, &mut last_model));
            let rows = own.read().zip(shared.iter().zip(recorded)).enumerate().map(
                |(ci, ((usage, cache_cause), (shared, rec)))| {
                    // The config's request is served as the recorded one
                    // was: the same speed, geography and tier.
                    let model = c.model_for_call(trace, &trace.calls[shared.ci]);
                    let (cost, scale) = served_breakdown(
                        shared.price,
                        &usage,
                        batch,
                        rec.start_ms,
                        rec.served,
                        model,
                    );
                    // Against a record that cannot show a write, the
                    // simulation's writes are compared as that record
                    // counts them: as input.
                    let cost_usd_as_recorded = (rec.usage.is_some()
                        && !rec.counts_writes
                        && usage.cache_creation_input_tokens > 0)
                        .then(|| {
                            served_cost(
                                shared.price,
                                &usage.writes_as_input(),
                                batch,
                                rec.start_ms,
                                rec.served,
                                model,
                            )
                        });
                    bill.add(PricedCall {
                        model: &rec.model,
                        simulated: ClassBill::of_call(&usage, &cost, scale),
                        recorded: rec.classes,
                        cause: cache_cause.as_ref(),
                    });
                    CallResult {
                        index: shared.ci + 1,
                        messages: rec.messages,
                        chars: shared.chars,
                        usage,
                        cost_usd: cost.total * scale,
                        compacted: compacted.get(ci).unwrap_or_default(),
                        record: records.get(ci).cloned().unwrap_or_else(|| {
                            let record = crate::RecordedRow {
                                recorded: rec.usage,
                                recorded_cost_usd: rec.cost_usd,
                            }
                            .shared();
                            // Rows come in call order: the next is `ci`.
                            if records.len() == ci {
                                records.push(record.clone());
                            }
                            record
                        }),
                        cost_usd_as_recorded,
                        model: rec.model.clone(),
                        stable_prefix_tokens: shared.stable_prefix_tokens,
                        over_window: over_window(&usage, rec.usage.as_ref(), shared.price),
                        cache_cause,
                        summary: false,
                    }
                },
            );
            let rows_kept = self.rows == PerCallRows::All;
            // The rows are summed as they are made; a config whose rows are
            // not kept never holds them all, only its costs; those kept
            // are packed as they are made ([`crate::CallResults`]).
            let (mut sum, mut fid) = (TotalsSum::default(), FidelitySum::default());
            let (calls, costs) = if rows_kept {
                let mut calls = crate::CallResultsBuilder::with_capacity(shared.len());
                for r in rows {
                    sum.add(&r);
                    fid.add(&r);
                    calls.push(&r);
                }
                (calls.finish(), CallCosts::None)
            } else {
                let mut costs = Vec::with_capacity(shared.len());
                costs.extend(rows.map(|r| {
                    sum.add(&r);
                    fid.add(&r);
                    CallCost::from(&r)
                }));
                (CallResults::default(), CallCosts::Kept(costs.into()))
            };
            let (totals, fidelity) = (sum.finish(done.ever_compacted), fid.finish());
            out.push(ReplayResult {
                fidelity,
                trace: trace.name.clone(),
                config: c.clone(),
                model: done.first_price.id.clone(),
                back_to_back: !trace.has_timestamps(),
                calibration,
                calls,
                costs,
                totals,
                breakdown: bill.finish(),
            });
        }
        out
    }
}

/// What a call's result holds that is the same for every config of a
/// group (they share a compaction policy and model): the call, the
/// request's size and the price it was billed at. What the record says of
/// the call is read back when the trace is finished, not held while it is
/// replayed.
struct SharedCall<'a> {
    ci: usize,
    chars: u64,
    stable_prefix_tokens: u64,
    price: &'a ModelPrice,
}

/// What the record says of one call, read back when its trace is finished.
struct RecordedCall {
    messages: usize,
    /// Whether the record counts cache writes
    /// ([`tracecost_trace::RecordedUsage::counts_writes`]).
    counts_writes: bool,
    usage: Option<Usage>,
    cost_usd: Option<f64>,
    /// The recorded usage by billing class, priced.
    classes: Option<ClassBill>,
    model: Arc<str>,
    /// When the call started: its price is the row in force that day.
    start_ms: Option<u64>,
    /// The price modifiers its record says applied.
    served: RecordedModifiers,
}

impl RecordedCall {
    /// What the record says of `s`'s call of `trace`, priced at `s`'s
    /// price; `last_model` is the model of the call read before (a run of
    /// calls to one model shares its name).
    fn of(
        trace: &Trace,
        s: &SharedCall<'_>,
        batch: bool,
        last_model: &mut Option<Arc<str>>,
    ) -> Self {
        let call = &trace.calls[s.ci];
        let usage = call
            .recorded_usage()
            .filter(|u| u.input_tokens.is_some())
            .map(|u| recorded_usage(&u));
        let model = match last_model.take() {
            Some(m) if *m == *s.price.id => m,
            _ => Arc::from(s.price.id.as_str()),
        };
        *last_model = Some(model.clone());
        let served = call
            .recorded_usage()
            .map(|u| u.modifiers)
            .unwrap_or_default();
        let priced = usage.map(|u| {
            let (cost, scale) = served_breakdown(
                s.price,
                &u,
                batch,
                call.start_ms,
                served,
                trace.model_of(call),
            );
            (cost.total * scale, ClassBill::of_call(&u, &cost, scale))
        });
        RecordedCall {
            messages: trace.history_of(call).len(),
            counts_writes: call.recorded_usage().is_some_and(|u| u.counts_writes()),
            cost_usd: priced.map(|p| p.0),
            classes: priced.map(|p| p.1),
            usage,
            model,
            start_ms: call.start_ms,
            served,
        }
    }
}

/// The cost of one call of `usage` at `price`, served as its record says
/// (`served`) to the model id `model` (as the records name it): fast mode
/// and a regional endpoint (the record's geography, or a Bedrock `us.`
/// profile in the id) bill every rate at the model's documented multiple,
/// the batch tier (or a plan priced as batch) at the Batch API's discount.
/// A modifier the model has no documented rate for leaves its price.
pub fn served_cost(
    price: &ModelPrice,
    usage: &Usage,
    batch: bool,
    at_ms: Option<u64>,
    served: RecordedModifiers,
    model: &str,
) -> f64 {
    let (cost, scale) = served_breakdown(price, usage, batch, at_ms, served, model);
    cost.total * scale
}

/// [`served_cost`] by billing class: the cost at the base rates and the
/// multiple every class is billed at (the total is `cost.total · scale`).
pub fn served_breakdown(
    price: &ModelPrice,
    usage: &Usage,
    batch: bool,
    at_ms: Option<u64>,
    served: RecordedModifiers,
    model: &str,
) -> (CostBreakdown, f64) {
    let regional = served.regional || is_regional_id(model);
    (
        price.cost_breakdown_at(usage, batch || served.batch, at_ms),
        price.modifiers.scale(served.fast, regional),
    )
}

/// Whether the API would refuse a request of `usage`: its input is over
/// the model's window and over what the record shows the API accepted
/// and billed for the same call (a recorded call is proof the window
/// holds it, whatever the table says).
fn over_window(usage: &Usage, recorded: Option<&Usage>, price: &ModelPrice) -> bool {
    let accepted = recorded.map_or(0, Usage::total_input);
    usage.total_input() > price.window_tokens().max(accepted)
}

/// One config's simulation of the calls of a live trace, as it is held
/// until the trace is finished: a streamed account holds one per config of
/// every trace that overlaps in time. Each call is four LEB128 counts (a
/// call's counts are a request's tokens, mostly two or three bytes each;
/// any `u64` fits), a tag byte, and the write's split by TTL when it has
/// one. The tag also says why the call missed when the reason carries no
/// figure, as most reasons do (a config without markers misses every call
/// for want of one); a reason with figures is held apart. [`ConfigCalls::read`] gives
/// back exactly what was pushed, in order.
#[derive(Debug, Default)]
struct ConfigCalls {
    /// Per call: input, cache write, cache read and output tokens, the tag
    /// ([`tag`]), then the write split by TTL (5 minutes, 1 hour) when the
    /// tag says so.
    usage: Vec<u8>,
    /// (the call's place among those pushed, why it missed), for the
    /// reasons the tag does not hold.
    causes: Vec<(u32, explain::CacheCause)>,
    /// Calls pushed.
    len: u32,
}

impl ConfigCalls {
    fn with_calls(calls: usize) -> Self {
        ConfigCalls {
            // A typical call takes nine to twelve bytes. Not reserved for
            // them all: a streamed trace's configs are made when it is
            // read, and hold only the calls simulated so far.
            usage: Vec::with_capacity(calls.min(16) * 12),
            causes: Vec::new(),
            len: 0,
        }
    }

    fn push(&mut self, usage: &Usage, cause: Option<explain::CacheCause>) {
        let out = &mut self.usage;
        for v in [
            usage.input_tokens,
            usage.cache_creation_input_tokens,
            usage.cache_read_input_tokens,
            usage.output_tokens,
        ] {
            put_varint(out, v);
        }
        let held = cause.map_or(Some(0), |c| tag::of(&c));
        let split = u8::from(usage.cache_creation.is_some());
        out.push(held.unwrap_or(tag::APART) << 1 | split);
        if let Some(c) = &usage.cache_creation {
            put_varint(out, c.ephemeral_5m_input_tokens);
            put_varint(out, c.ephemeral_1h_input_tokens);
        }
        if let (None, Some(cause)) = (held, cause) {
            self.causes.push((self.len, cause));
        }
        self.len += 1;
    }

    /// The calls pushed, in order: each one's usage and why it missed.
    fn read(&self) -> impl Iterator<Item = (Usage, Option<explain::CacheCause>)> + '_ {
        let mut at = 0;
        let mut causes = self.causes.iter().peekable();
        (0..self.len).map(move |i| {
            let mut next = || take_varint(&self.usage, &mut at);
            let (input, write, read, output) = (next(), next(), next(), next());
            let flags = self.usage.get(at).copied().unwrap_or(0);
            at += 1;
            let cache_creation = (flags & 1 == 1).then(|| {
                let m5 = take_varint(&self.usage, &mut at);
                let h1 = take_varint(&self.usage, &mut at);
                tracecost_cost::pricing::CacheCreation {
                    ephemeral_5m_input_tokens: m5,
                    ephemeral_1h_input_tokens: h1,
                }
            });
            let cause = match flags >> 1 {
                tag::APART => causes.next_if(|(c, _)| *c == i).map(|(_, c)| *c),
                held => tag::cause(held),
            };
            (
                Usage {
                    input_tokens: input,
                    cache_creation_input_tokens: write,
                    cache_read_input_tokens: read,
                    cache_creation,
                    output_tokens: output,
                },
                cause,
            )
        })
    }
}

/// What every config's simulation of one call reads: the call planned,
/// and the request's prefix index as it stands.
struct CallFacts<'f, 'a> {
    /// The trace's name, for errors.
    trace: &'f str,
    p: &'f Planned<'a>,
    layout: &'f explain::Layout,
    index: &'f PrefixIndex,
}

/// Simulates call `f.p` for config `c` against its cache `sim` and bills
/// it: runs the simulator with the config's `breakpoints`, tells why the
/// call missed, and appends the call's result to `calls`. `last` holds the
/// cache keys the config's previous call read or wrote, `before` what it
/// cached.
fn bill(
    c: &Config,
    sim: &mut dyn PromptCache,
    calls: &mut ConfigCalls,
    last: &mut Vec<u128>,
    before: &mut Option<explain::Before>,
    breakpoints: &[Breakpoint],
    f: &CallFacts<'_, '_>,
) -> Result<(), ReplayError> {
    let CallFacts {
        trace,
        p,
        layout,
        index,
    } = *f;
    let (same_blocks, model) = (p.same_blocks as usize, p.model());
    // The record shows the entries alive at the TTL they were
    // written with: a config asking for as long keeps them, one
    // asking for less (5 minutes where an hour was recorded) goes
    // by the clock.
    let keeps = c
        .cache
        .ttl()
        .is_none_or(|t| t.at(p.recorded_ttl).millis() >= p.recorded_ttl_before.millis());
    if p.carried && keeps {
        for key in last.iter() {
            sim.warm(*key, p.start_ms.unwrap_or(0));
        }
    }
    let now_ms = p.start_ms.unwrap_or(0);
    let entry = before
        .and_then(|b| b.cached)
        .filter(|&b| b < same_blocks)
        .and_then(|b| index.key_at(b))
        .map_or(EntryState::Absent, |key| sim.entry_state(key, now_ms));
    let outcome = sim
        .simulate_indexed(
            &tracecost_cost::cache_sim::SimRequest {
                model: p.price,
                start_ms: p.start_ms,
                breakpoints,
                output_tokens: p.output_tokens,
            },
            index,
        )
        .map_err(|source| ReplayError::Sim {
            trace: trace.to_owned(),
            call: p.index() + 1,
            source,
        })?;
    if p.hidden {
        last.clear();
        last.extend(
            outcome
                .hit
                .into_iter()
                .chain(outcome.written.iter().map(|(b, _)| *b))
                .filter_map(|b| index.key_at(b)),
        );
    }
    let cache_cause = explain::classify(&explain::Facts {
        before: *before,
        appended: &p.appended,
        from_block: p.from_block as usize,
        same_blocks,
        layout,
        model,
        minimum: p.price.min_cacheable_tokens,
        tokens: outcome.usage.total_input(),
        breakpoints: breakpoints.len(),
        hit: outcome.hit,
        wrote: !outcome.written.is_empty(),
        entry,
        now_ms,
        compaction_changed: p.compaction_changed,
        microcompaction: p.microcompaction,
    });
    let cached = outcome
        .hit
        .into_iter()
        .chain(outcome.written.iter().map(|(b, _)| *b))
        .max();
    // How long what it cached is held, for a later miss of it whose
    // entry the cache has dropped since.
    let ttl =
        cached
            .and_then(|b| index.key_at(b))
            .and_then(|key| match sim.entry_state(key, now_ms) {
                EntryState::Readable { ttl } => Some(ttl),
                _ => None,
            });
    *before = Some(explain::Before {
        cached,
        start_ms: p.start_ms,
        ttl,
        model,
    });
    calls.push(&outcome.usage, cache_cause);
    Ok(())
}

/// Why a call missed, for the reasons that carry no figure, as the code a
/// call's tag byte holds above its split bit.
mod tag {
    use crate::explain::CacheCause;

    /// The reason is held apart (it carries figures).
    pub(crate) const APART: u8 = 7;

    /// The code of `cause` (0 is none), or `None` if it is held apart.
    pub(crate) fn of(cause: &CacheCause) -> Option<u8> {
        match cause {
            CacheCause::FirstCall => Some(1),
            CacheCause::ModelChanged => Some(2),
            CacheCause::NoMarker => Some(3),
            CacheCause::NothingCachedBefore => Some(4),
            CacheCause::Evicted => Some(5),
            _ => None,
        }
    }

    /// The reason coded `code` ([`of`]); none for 0.
    pub(crate) fn cause(code: u8) -> Option<CacheCause> {
        match code {
            1 => Some(CacheCause::FirstCall),
            2 => Some(CacheCause::ModelChanged),
            3 => Some(CacheCause::NoMarker),
            4 => Some(CacheCause::NothingCachedBefore),
            5 => Some(CacheCause::Evicted),
            _ => None,
        }
    }
}

#[cfg(test)]
mod window_tests {
    use super::over_window;
    use tracecost_cost::pricing::{Pricing, Usage};

    #[test]
    fn a_call_the_record_shows_billed_is_never_over_the_window() {
        let p = Pricing::builtin();
        // Claude 3 Haiku: a 200K window in the table.
        let haiku = p.lookup("claude-3-haiku").unwrap();
        let big = Usage::new(250_000, 0, 0, 0, 10);
        assert!(over_window(&big, None, haiku));
        assert!(!over_window(&big, Some(&big), haiku));
        // A replay that sends more than the record did is still over.
        let bigger = Usage::new(260_000, 0, 0, 0, 10);
        assert!(over_window(&bigger, Some(&big), haiku));
        // Opus 5's documented 1M window holds a 383K prompt.
        let opus = p.lookup("claude-opus-5").unwrap();
        assert!(!over_window(&Usage::new(1, 0, 0, 383_000, 10), None, opus));
    }
}

#[cfg(test)]
mod tests {
    use super::ConfigCalls;
    use crate::explain::CacheCause;
    use crate::group::plan_log::{PlanLog, Planned};
    use crate::prepare::SharedState;
    use proptest::prelude::*;
    use tracecost_cost::cache_sim::{PrefixBlock, PrefixKind};
    use tracecost_cost::pricing::{CacheCreation, Usage};
    use tracecost_cost::pricing::{ModelPrice, Pricing};
    use tracecost_cost::tokens::ContentHash;
    use tracecost_engine::wire::Ttl;

    fn count() -> impl Strategy<Value = u64> {
        prop_oneof![0..=100_000u64, 0..=u64::from(u32::MAX), any::<u64>()]
    }

    fn usage() -> impl Strategy<Value = Usage> {
        (
            count(),
            count(),
            count(),
            count(),
            proptest::option::of((count(), count())),
        )
            .prop_map(|(input, write, read, output, split)| Usage {
                input_tokens: input,
                cache_creation_input_tokens: write,
                cache_read_input_tokens: read,
                cache_creation: split.map(|(m5, h1)| CacheCreation {
                    ephemeral_5m_input_tokens: m5,
                    ephemeral_1h_input_tokens: h1,
                }),
                output_tokens: output,
            })
    }

    fn cause() -> impl Strategy<Value = Option<CacheCause>> {
        proptest::option::of(prop_oneof![
            Just(CacheCause::FirstCall),
            Just(CacheCause::ModelChanged),
            Just(CacheCause::NoMarker),
            Just(CacheCause::NothingCachedBefore),
            Just(CacheCause::Evicted),
            (any::<u64>(), any::<u32>()).prop_map(|(gap_ms, secs)| CacheCause::TtlExpired {
                gap_ms,
                ttl: tracecost_cost::cache_sim::CacheHold::from_ms(u64::from(secs) * 1000),
            }),
            any::<u32>().prop_map(|block| CacheCause::ToolsChanged { block }),
            (any::<u32>(), any::<u32>())
                .prop_map(|(block, message)| CacheCause::Compacted { block, message }),
        ])
    }

    proptest! {
        /// Whatever the counts (up to `u64::MAX`, with or without the TTL
        /// split) and whichever calls have a reason to miss, the calls are
        /// read back exactly and in order.
        #[test]
        fn config_calls_give_back_what_was_pushed(
            calls in proptest::collection::vec((usage(), cause()), 0..40),
        ) {
            let mut log = ConfigCalls::with_calls(calls.len());
            for (u, c) in &calls {
                log.push(u, *c);
            }
            let back: Vec<_> = log.read().collect();
            prop_assert_eq!(back, calls);
        }
    }

    /// What the replay holds per call and config of every live trace: a
    /// typical call (counts of a few thousand tokens, no reason to miss or
    /// one without figures) in 9 bytes, where a whole usage with its cost
    /// took 88; only a reason with figures is held apart.
    #[test]
    fn a_typical_call_is_held_in_nine_bytes() {
        let usage = Usage {
            input_tokens: 3,
            cache_creation_input_tokens: 4_210,
            cache_read_input_tokens: 61_877,
            cache_creation: None,
            output_tokens: 512,
        };
        let mut log = ConfigCalls::default();
        log.push(&usage, None);
        log.push(&usage, Some(CacheCause::NoMarker));
        assert_eq!(log.usage.len(), 2 * (1 + 2 + 3 + 2 + 1));
        assert!(log.causes.is_empty());
        log.push(&usage, Some(CacheCause::ToolsChanged { block: 2 }));
        assert_eq!(log.causes.len(), 1);
    }

    /// Every reason the tag holds comes back as itself, and none of them
    /// is taken for the mark of a reason held apart.
    #[test]
    fn the_tag_holds_each_reason_without_figures_as_itself() {
        for cause in [
            CacheCause::FirstCall,
            CacheCause::ModelChanged,
            CacheCause::NoMarker,
            CacheCause::NothingCachedBefore,
            CacheCause::Evicted,
        ] {
            let code = super::tag::of(&cause).expect("held in the tag");
            assert!(code != 0 && code < super::tag::APART);
            assert_eq!(super::tag::cause(code), Some(cause));
        }
    }

    fn ttl() -> impl Strategy<Value = Ttl> {
        prop_oneof![Just(Ttl::FiveMinutes), Just(Ttl::OneHour)]
    }

    fn kind() -> impl Strategy<Value = PrefixKind> {
        prop::sample::select(vec![
            PrefixKind::ToolDef,
            PrefixKind::ToolPrompt,
            PrefixKind::System,
            PrefixKind::Text,
            PrefixKind::ToolUse,
            PrefixKind::ToolResult,
            PrefixKind::Thinking,
            PrefixKind::Image,
            PrefixKind::Other,
        ])
    }

    fn block() -> impl Strategy<Value = PrefixBlock> {
        (
            any::<[u8; 16]>(),
            count(),
            kind(),
            proptest::option::of(prop_oneof![
                0..100usize,
                any::<u32>().prop_map(|n| n as usize)
            ]),
        )
            .prop_map(|(key, tokens, kind, message)| PrefixBlock {
                key: ContentHash(key),
                tokens,
                kind,
                message,
            })
    }

    fn shared() -> impl Strategy<Value = (std::ops::Range<usize>, SharedState)> {
        (
            0..50usize,
            0..50usize,
            prop_oneof![
                Just(SharedState::Unknown),
                Just(SharedState::Cold),
                Just(SharedState::Carried),
                (0..10usize).prop_map(SharedState::Warm),
                (0..100_000u64).prop_map(|written| SharedState::ReadPast { written }),
            ],
        )
            .prop_map(|(a, n, s)| (a..a + n, s))
    }

    /// A planned call, its price one of `prices`.
    fn planned(prices: &'static [ModelPrice]) -> impl Strategy<Value = Planned<'static>> {
        (
            (
                any::<u32>(),
                any::<u32>(),
                any::<u32>(),
                proptest::option::of(count()),
            ),
            (0..prices.len(), count(), count(), count()),
            (
                proptest::collection::vec(block(), 0..6),
                proptest::option::of(shared()),
                any::<[u32; 4]>(),
                any::<[bool; 4]>(),
            ),
            (
                ttl(),
                ttl(),
                proptest::option::of(any::<u32>()),
                proptest::collection::vec(any::<u32>(), 0..12),
            ),
        )
            .prop_map(
                move |(
                    (ci, from_block, same_blocks, start_ms),
                    (price, output_tokens, stable_prefix_tokens, chars),
                    (appended, shared, layout, flags),
                    (recorded_ttl, recorded_ttl_before, held_blocks, marks),
                )| Planned {
                    ci,
                    from_block,
                    same_blocks,
                    start_ms,
                    price: &prices[price],
                    appended: appended.into(),
                    shared: shared.map(Box::new),
                    output_tokens,
                    stable_prefix_tokens,
                    chars,
                    layout,
                    hidden: flags[0],
                    carried: flags[1],
                    compaction_changed: flags[2],
                    microcompaction: flags[3],
                    recorded_ttl,
                    recorded_ttl_before,
                    held_blocks,
                    marks: marks.into(),
                },
            )
    }

    fn prices() -> &'static [ModelPrice] {
        static PRICES: std::sync::OnceLock<Vec<ModelPrice>> = std::sync::OnceLock::new();
        PRICES.get_or_init(|| {
            let pricing = Pricing::builtin();
            ["claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5"]
                .iter()
                .map(|m| pricing.lookup(m).expect("a built-in model").clone())
                .collect()
        })
    }

    proptest! {
        /// Calls pushed and popped in any interleaving come back exactly,
        /// in order, each to the same price.
        #[test]
        fn a_plan_log_gives_back_each_call_as_pushed(
            steps in proptest::collection::vec(
                prop_oneof![planned(prices()).prop_map(Some), Just(None)],
                0..40,
            )
        ) {
            let mut log = PlanLog::default();
            let mut model = std::collections::VecDeque::new();
            for step in steps {
                match step {
                    Some(p) => {
                        model.push_back(p.clone());
                        log.push(p);
                    }
                    None => {
                        prop_assert_eq!(log.front(), model.front());
                        let (got, want) = (log.pop(), model.pop_front());
                        if let (Some(g), Some(w)) = (&got, &want) {
                            prop_assert!(std::ptr::eq(g.price, w.price));
                        }
                        prop_assert_eq!(got, want);
                    }
                }
            }
            while let Some(want) = model.pop_front() {
                prop_assert_eq!(log.pop(), Some(want));
            }
            prop_assert!(log.pop().is_none());
        }
    }

    #[test]
    fn a_plan_log_lets_go_of_what_was_popped() {
        let p = &prices()[0];
        let call = |ci: u32| Planned {
            ci,
            from_block: 0,
            same_blocks: 0,
            start_ms: Some(u64::from(ci) * 1000),
            price: p,
            appended: vec![
                PrefixBlock {
                    key: ContentHash([ci as u8; 16]),
                    tokens: 1000,
                    kind: PrefixKind::Text,
                    message: Some(ci as usize),
                };
                20
            ]
            .into(),
            shared: None,
            output_tokens: 10,
            stable_prefix_tokens: 0,
            chars: 100,
            layout: [0; 4],
            hidden: false,
            carried: false,
            compaction_changed: false,
            microcompaction: false,
            recorded_ttl: Ttl::FiveMinutes,
            recorded_ttl_before: Ttl::FiveMinutes,
            held_blocks: None,
            marks: vec![1, 3, 0].into(),
        };
        let mut log = PlanLog::default();
        for ci in 0..200 {
            log.push(call(ci));
        }
        log.shrink();
        let full = log.bytes.capacity();
        for ci in 0..150 {
            assert_eq!(log.pop().map(|c| c.ci), Some(ci));
        }
        assert!(
            log.bytes.capacity() < full / 2,
            "{} of {full}",
            log.bytes.capacity()
        );
        assert_eq!(log.pop(), Some(call(150)));
    }
}

//! Replaying a group of configs over one trace: the driver. Each call's
//! request is built once for the group ([`Request::build`], the per-call
//! core), then simulated and billed for each config ([`bill`]) against the
//! cache simulator handed in, so that several traces can share one.

use std::collections::HashMap;
use std::sync::Arc;

use crate::cost::cache_sim::{Breakpoint, EntryState, PrefixBlock, PrefixIndex};
use crate::cost::pricing::{ModelPrice, Usage};
use crate::cost::prompt_cache::PromptCache;
use crate::cost::tokens::FastBuild;
use crate::engine::message::{ContentBlock, ToolDefinition};
use crate::engine::rewrite::WireView;
use crate::engine::wire::BlockRef;
use crate::policy::{Compaction, CompactionRun, Config, markers_for_call};
use crate::trace::{Call, Trace};

use super::explain;
use super::prepare::{PreparedTrace, SharedState};
use super::request::{Request, marker_index};
use super::{
    Build, CallResult, CompactedLog, ReplayContext, ReplayError, ReplayResult, RunTokens, fidelity,
    plan_claude_code_clears, recorded_usage, totals,
};

/// One group of configs replayed over one trace, a call at a time, with
/// the cache simulators (one per config) handed in at each call so that
/// several traces can share them.
///
/// Each call's request is built in two stages. The first, shared by the
/// group, turns the call's history into the flattened request: the wire
/// view, its blocks with their token counts, and the prefix index (keys,
/// token sums and positions). Built from scratch, that is linear in the
/// history at every call; [`Build::Incremental`] keeps it from the previous
/// call and rebuilds only from the first message whose bytes changed (the
/// messages appended, or a result newly compacted), so a config's replay
/// costs the calls plus the blocks plus the changes. The second stage, per
/// config, places that config's markers and runs its cache simulator.
pub(super) struct GroupRun<'a, 't> {
    prepared: &'a PreparedTrace<'t>,
    configs: &'a [Config],
    ctx: ReplayContext<'a>,
    run: CompactionRun,
    tokens: RunTokens<'a>,
    /// Per call replayed: what every config of the group sees alike.
    calls: Vec<SharedCall<'a>>,
    /// Per config, per call replayed: what its simulation gave. Kept apart
    /// from `calls`, and put together only when the trace is finished: a
    /// streamed account holds these for every trace that overlaps in time,
    /// and most of a call's result is the same for every config.
    per_config: Vec<Vec<ConfigCall>>,
    first_price: &'a ModelPrice,
    ever_compacted: std::collections::HashSet<Arc<str>, FastBuild>,
    log: CompactedLog,
    with_recall: bool,
    /// Per config: the cache keys the trace's previous call read or wrote.
    last_keys: Vec<Vec<u128>>,
    /// The request being built, kept from call to call.
    request: Request<'t>,
    /// One config's breakpoints at the current call (a buffer reused).
    breakpoints: Vec<Breakpoint>,
    /// Per config: what the previous call cached, to tell why a call
    /// missed.
    before: Vec<Option<explain::Before>>,
    /// Results compacted at the previous call.
    compacted_before: usize,
}

impl<'a, 't> GroupRun<'a, 't> {
    pub(super) fn new(
        prepared: &'a PreparedTrace<'t>,
        configs: &'a [Config],
        ctx: ReplayContext<'a>,
    ) -> Result<Self, ReplayError> {
        let (pricing, memo) = (ctx.pricing, ctx.memo);
        let trace = prepared.trace;
        let Some(config) = configs.first() else {
            return Err(ReplayError::Config {
                trace: trace.name.clone(),
                reason: "no config".into(),
            });
        };
        // The caller checked each config against the trace; what is checked
        // here is that they can share the engine's work.
        for c in configs {
            if c.compaction != config.compaction || c.model != config.model {
                return Err(ReplayError::Config {
                    trace: trace.name.clone(),
                    reason: format!("{c} and {config} do not share a compaction policy and model"),
                });
            }
        }
        let first_price = pricing.lookup(config.model_for_trace(trace))?;
        let mut tokens = RunTokens {
            prepared,
            memo,
            framing_message: first_price.framing.per_message,
            calibration: prepared.calibration,
            framing_block: first_price.framing.per_block,
            replaced: HashMap::default(),
        };
        let run = CompactionRun::with_shared(
            &config.compaction,
            prepared.ledger.clone(),
            prepared.stubs.clone(),
        );
        let run = match config.compaction {
            Compaction::Recorded => run
                .with_record(&prepared.trace.calls)
                .with_clears(&prepared.inferred_clears),
            Compaction::ClaudeCodeClear {
                keep_tokens,
                at_least,
            } => run.with_clears(&plan_claude_code_clears(
                prepared,
                config,
                pricing,
                &mut tokens,
                keep_tokens,
                at_least,
            )?),
            _ => run,
        };
        Ok(GroupRun {
            prepared,
            configs,
            ctx,
            run,
            tokens,
            calls: Vec::with_capacity(trace.calls.len()),
            per_config: configs
                .iter()
                .map(|_| Vec::with_capacity(trace.calls.len()))
                .collect(),
            first_price,
            ever_compacted: Default::default(),
            log: CompactedLog::default(),
            with_recall: matches!(config.compaction, Compaction::Ledger { .. }),
            last_keys: configs.iter().map(|_| Vec::new()).collect(),
            request: Request::default(),
            breakpoints: Vec::new(),
            before: vec![None; configs.len()],
            compacted_before: 0,
        })
    }

    /// Replays call `ci` (calls must come in order) against `sims`, one
    /// cache simulator per config: builds the call's request once
    /// ([`Request::build`]), then simulates and bills it for each config
    /// ([`bill`]).
    pub(super) fn call(
        &mut self,
        ci: usize,
        sims: &mut [Box<dyn PromptCache>],
    ) -> Result<(), ReplayError> {
        let (prepared, configs, pricing, opts) =
            (self.prepared, self.configs, self.ctx.pricing, self.ctx.opts);
        let trace = prepared.trace;
        let config = &configs[0];
        let call = &trace.calls[ci];
        if let Some(p) = opts.progress {
            p.advance(1);
        }
        let price: &ModelPrice = pricing.lookup(config.model_for_call(trace, call))?;
        self.tokens.framing_block = price.framing.per_block;
        self.tokens.framing_message = price.framing.per_message;
        let sent = self.request.build(
            prepared,
            self.ctx.memo,
            price,
            ci,
            self.with_recall,
            opts.build == Build::Incremental,
            &mut self.run,
            &mut self.tokens,
        )?;
        let req = &self.request;
        let index = &req.index;

        let output_tokens = call.usage.and_then(|u| u.output_tokens).unwrap_or(0);
        // Filled in after the loop, shared by every call and config.
        let new = self.log.push(&req.state.compacted);
        self.ever_compacted.extend(new.iter().cloned());
        let compaction_changed =
            !new.is_empty() || req.state.compacted.len() < self.compacted_before;
        self.compacted_before = req.state.compacted.len();
        let microcompaction = matches!(config.compaction, Compaction::Recorded);
        let carried = sent
            .shared
            .as_ref()
            .is_some_and(|(_, s)| *s == SharedState::Carried);
        if let Some((parts, state)) = sent.shared.clone() {
            let warm_through = match state {
                SharedState::Unknown | SharedState::Carried => None,
                SharedState::Cold => Some(None),
                SharedState::Warm(j) => Some(Some(parts.start + j)),
            };
            if let Some(through) = warm_through {
                for block in parts {
                    let Some(key) = index.key_at(block) else {
                        continue;
                    };
                    for sim in sims.iter_mut() {
                        if through.is_some_and(|t| block <= t) {
                            sim.warm(key, call.start_ms.unwrap_or(0));
                        } else {
                            sim.evict(key);
                        }
                    }
                }
            }
        }
        let facts = CallFacts {
            prepared,
            trace,
            ci,
            call,
            price,
            view: &req.state.view,
            req_boundary: &req.boundary_at,
            tools: &sent.tools,
            system: sent.system,
            system_start: req.system_start,
            message_start: &req.message_start,
            blocks: &req.blocks,
            index,
            same_blocks: sent.same_blocks,
            layout: &sent.layout,
            model: sent.model,
            carried,
            hidden: sent.hidden,
            compaction_changed,
            microcompaction,
            output_tokens,
        };
        let shared = SharedCall {
            ci,
            chars: sent.chars,
            stable_prefix_tokens: sent.stable_prefix_tokens,
            price,
        };
        for ((((c, sim), calls), last), before) in configs
            .iter()
            .zip(sims.iter_mut())
            .zip(self.per_config.iter_mut())
            .zip(self.last_keys.iter_mut())
            .zip(self.before.iter_mut())
        {
            bill(
                c,
                sim.as_mut(),
                calls,
                last,
                before,
                &mut self.breakpoints,
                &facts,
            )?;
        }
        self.calls.push(shared);
        Ok(())
    }

    /// The results, one per config.
    pub(super) fn finish(self) -> Vec<ReplayResult> {
        let trace = self.prepared.trace;
        let batch = self.ctx.opts.batch;
        let compacted = self.log.finish();
        let shared = self.calls;
        // What the record says of each call and the model it went to, read
        // once for every config (a run of calls to one model shares its
        // name).
        let mut last_model: Option<Arc<str>> = None;
        let recorded: Vec<RecordedCall> = shared
            .iter()
            .map(|s| {
                let call = &trace.calls[s.ci];
                let usage = call
                    .usage
                    .filter(|u| u.input_tokens.is_some())
                    .map(|u| recorded_usage(&u));
                let model = match last_model.take() {
                    Some(m) if *m == *s.price.id => m,
                    _ => Arc::from(s.price.id.as_str()),
                };
                last_model = Some(model.clone());
                RecordedCall {
                    messages: trace.history_of(call).len(),
                    cost_usd: usage.map(|u| s.price.cost_usd(&u, batch)),
                    usage,
                    model,
                }
            })
            .collect();
        let mut out = Vec::with_capacity(self.configs.len());
        for (c, own) in self.configs.iter().zip(self.per_config) {
            let calls: Vec<CallResult> = own
                .into_iter()
                .zip(shared.iter().zip(&recorded))
                .enumerate()
                .map(|(ci, (own, (shared, rec)))| {
                    let usage = own.usage.unpack();
                    CallResult {
                        index: shared.ci + 1,
                        messages: rec.messages,
                        chars: shared.chars,
                        usage,
                        cost_usd: shared.price.cost_usd(&usage, batch),
                        compacted: compacted.get(ci).cloned().unwrap_or_default(),
                        recorded: rec.usage,
                        recorded_cost_usd: rec.cost_usd,
                        model: rec.model.clone(),
                        stable_prefix_tokens: shared.stable_prefix_tokens,
                        over_window: usage.total_input() > shared.price.window_tokens(),
                        cache_cause: own.cache_cause,
                    }
                })
                .collect();
            let totals = totals(&calls, self.ever_compacted.len());
            out.push(ReplayResult {
                fidelity: fidelity(&calls),
                trace: trace.name.clone(),
                config: c.clone(),
                model: self.first_price.id.clone(),
                back_to_back: !trace.has_timestamps(),
                calibration: self.prepared.calibration,
                calls,
                totals,
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
    usage: Option<Usage>,
    cost_usd: Option<f64>,
    model: Arc<str>,
}

/// What one config's simulation of a call gives; its cost and whether it
/// overflows the window follow from the usage and the call's price.
struct ConfigCall {
    usage: PackedUsage,
    cache_cause: Option<explain::CacheCause>,
}

/// A call's simulated usage held in 4-byte counts. A streamed account holds
/// one per call and config of every trace that overlaps in time, and a
/// call's counts are bounded by what one request sends, far below 4
/// billion; counts that do not fit are held whole. Either way
/// [`PackedUsage::unpack`] gives back the usage exactly.
#[derive(Debug)]
enum PackedUsage {
    Narrow {
        input: u32,
        write: u32,
        read: u32,
        output: u32,
        /// The write split by TTL (5 minutes, 1 hour), when the usage has
        /// one.
        split: Option<[u32; 2]>,
    },
    Wide(Box<Usage>),
}

impl PackedUsage {
    fn pack(u: &Usage) -> Self {
        let n = |v: u64| u32::try_from(v).ok();
        let narrow = || -> Option<Self> {
            Some(PackedUsage::Narrow {
                input: n(u.input_tokens)?,
                write: n(u.cache_creation_input_tokens)?,
                read: n(u.cache_read_input_tokens)?,
                output: n(u.output_tokens)?,
                split: match &u.cache_creation {
                    None => None,
                    Some(c) => Some([
                        n(c.ephemeral_5m_input_tokens)?,
                        n(c.ephemeral_1h_input_tokens)?,
                    ]),
                },
            })
        };
        narrow().unwrap_or_else(|| PackedUsage::Wide(Box::new(*u)))
    }

    fn unpack(&self) -> Usage {
        match self {
            PackedUsage::Narrow {
                input,
                write,
                read,
                output,
                split,
            } => Usage {
                input_tokens: u64::from(*input),
                cache_creation_input_tokens: u64::from(*write),
                cache_read_input_tokens: u64::from(*read),
                cache_creation: split.map(|[m5, h1]| crate::cost::pricing::CacheCreation {
                    ephemeral_5m_input_tokens: u64::from(m5),
                    ephemeral_1h_input_tokens: u64::from(h1),
                }),
                output_tokens: u64::from(*output),
            },
            PackedUsage::Wide(u) => **u,
        }
    }
}

/// What every config's simulation of one call reads: the request as
/// built, and the call's facts from the record.
struct CallFacts<'f, 't> {
    prepared: &'f PreparedTrace<'t>,
    trace: &'f Trace,
    ci: usize,
    call: &'f Call,
    price: &'f ModelPrice,
    view: &'f WireView<'t>,
    req_boundary: &'f [Option<BlockRef>],
    tools: &'f [&'f ToolDefinition],
    system: &'f [ContentBlock],
    system_start: usize,
    message_start: &'f [usize],
    blocks: &'f [PrefixBlock],
    index: &'f PrefixIndex,
    same_blocks: usize,
    layout: &'f explain::Layout,
    model: usize,
    carried: bool,
    hidden: bool,
    compaction_changed: bool,
    microcompaction: bool,
    output_tokens: u64,
}

/// Simulates call `f.ci` for config `c` against its cache `sim` and bills
/// it: places the config's markers on the request, runs the simulator,
/// tells why the call missed, and appends the call's result to `calls`.
/// `last` holds the cache keys the config's previous call read or wrote,
/// `before` what it cached.
fn bill(
    c: &Config,
    sim: &mut dyn PromptCache,
    calls: &mut Vec<ConfigCall>,
    last: &mut Vec<u128>,
    before: &mut Option<explain::Before>,
    breakpoints: &mut Vec<Breakpoint>,
    f: &CallFacts<'_, '_>,
) -> Result<(), ReplayError> {
    let CallFacts {
        prepared,
        trace,
        ci,
        call,
        price,
        view,
        req_boundary,
        tools,
        system,
        system_start,
        message_start,
        blocks,
        index,
        same_blocks,
        layout,
        model,
        carried,
        hidden,
        compaction_changed,
        microcompaction,
        output_tokens,
    } = *f;
    // The record shows the entries alive at the TTL they were
    // written with: a config asking for as long keeps them, one
    // asking for less (5 minutes where an hour was recorded) goes
    // by the clock.
    let keeps = c.cache.ttl().is_none_or(|t| {
        let before = prepared.recorded_ttls[ci.saturating_sub(1)];
        t.at(prepared.recorded_ttls[ci]).millis() >= before.millis()
    });
    if carried && keeps {
        for key in last.iter() {
            sim.warm(*key, call.start_ms.unwrap_or(0));
        }
    }
    let boundary = || {
        let kept = view
            .messages
            .len()
            .checked_sub(1)
            .and_then(|l| req_boundary[l]);
        // The engine's rule, scanned back: what the kept boundary
        // must equal (checked where tests run, not in releases).
        debug_assert_eq!(kept, crate::engine::cache::history_boundary(view));
        kept
    };
    let markers = markers_for_call(
        &c.cache,
        call.markers.as_deref(),
        prepared.recorded_ttls[ci],
        tools,
        system,
        view,
        &boundary,
    );
    breakpoints.clear();
    breakpoints.extend(
        markers
            .iter()
            .filter_map(|m| marker_index(m, tools.len(), system_start, message_start, view)),
    );
    let now_ms = call.start_ms.unwrap_or(0);
    let entry = before
        .and_then(|b| b.cached)
        .filter(|&p| p < same_blocks)
        .and_then(|p| index.key_at(p))
        .map_or(EntryState::Absent, |key| sim.entry_state(key, now_ms));
    let outcome = sim
        .simulate_indexed(
            &crate::cost::cache_sim::SimRequest {
                model: price,
                start_ms: call.start_ms,
                blocks,
                breakpoints,
                output_tokens,
            },
            index,
        )
        .map_err(|source| ReplayError::Sim {
            trace: trace.name.clone(),
            call: ci + 1,
            source,
        })?;
    if hidden {
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
        blocks,
        same_blocks,
        layout,
        model,
        minimum: price.min_cacheable_tokens,
        tokens: outcome.usage.total_input(),
        breakpoints: breakpoints.len(),
        hit: outcome.hit,
        wrote: !outcome.written.is_empty(),
        entry,
        now_ms,
        compaction_changed,
        microcompaction,
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
            .and_then(|p| index.key_at(p))
            .and_then(|key| match sim.entry_state(key, now_ms) {
                EntryState::Readable { ttl } => Some(ttl),
                _ => None,
            });
    *before = Some(explain::Before {
        cached,
        start_ms: call.start_ms,
        ttl,
        model,
    });
    calls.push(ConfigCall {
        usage: PackedUsage::pack(&outcome.usage),
        cache_cause,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{ConfigCall, PackedUsage};
    use crate::cost::pricing::{CacheCreation, Usage};
    use proptest::prelude::*;

    fn count() -> impl Strategy<Value = u64> {
        prop_oneof![0..=u64::from(u32::MAX), any::<u64>()]
    }

    proptest! {
        /// Whatever the counts, a call's usage is given back exactly, and
        /// held narrow whenever every count fits in 4 bytes.
        #[test]
        fn packed_usage_gives_back_the_usage(
            input in count(), write in count(), read in count(), output in count(),
            split in proptest::option::of((count(), count())),
        ) {
            let u = Usage {
                input_tokens: input,
                cache_creation_input_tokens: write,
                cache_read_input_tokens: read,
                cache_creation: split.map(|(m5, h1)| CacheCreation {
                    ephemeral_5m_input_tokens: m5,
                    ephemeral_1h_input_tokens: h1,
                }),
                output_tokens: output,
            };
            let packed = PackedUsage::pack(&u);
            prop_assert_eq!(packed.unpack(), u);
            let fits = [input, write, read, output]
                .into_iter()
                .chain(split.into_iter().flat_map(|(a, b)| [a, b]))
                .all(|v| v <= u64::from(u32::MAX));
            prop_assert_eq!(matches!(packed, PackedUsage::Narrow { .. }), fits);
        }
    }

    /// What the replay holds per call and config of every live trace: half
    /// of what a whole usage with its cost took (88 bytes).
    #[test]
    fn a_config_call_is_held_in_48_bytes() {
        assert!(std::mem::size_of::<ConfigCall>() <= 48);
    }
}

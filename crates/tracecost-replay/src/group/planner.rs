//! The first stage of a group's replay: each call's request built once
//! ([`crate::request::Request::build`]) and each config's markers placed on it.

use tracecost_cost::pricing::ModelPrice;
use tracecost_policy::{Compaction, CompactionRun, Config, markers_for_call};

use super::plan_log::{PlanDone, Planned, narrow, ttl_code};
use crate::prepare::{HeldPrefix, PreparedTrace, SharedState};
use crate::request::{CallInputs, Request, marker_index};
use crate::{Build, CompactedLog, ReplayContext, ReplayError, RunTokens, plan_claude_code_clears};

/// The first stage of replaying a group of configs over one trace, which
/// no cache enters: each call's request, built once for the group, and
/// where each config's markers fall on it. What a call's simulation reads
/// comes out of it ([`Planned`]), so that a trace can be planned whole when
/// it is read and its text let go while its calls wait for the account's
/// others.
///
/// The request is built from the call's history: the wire view, its
/// blocks with their token counts, and the prefix index (keys, token sums
/// and positions). Built from scratch, that is linear in the history at
/// every call; [`Build::Incremental`] keeps it from the previous call and
/// rebuilds only from the first message whose bytes changed (the messages
/// appended, or a result newly compacted), so a config's replay costs the
/// calls plus the blocks plus the changes.
pub(crate) struct Planner<'a, 'p, 't> {
    pub(crate) prepared: &'p PreparedTrace<'t>,
    pub(crate) configs: &'a [Config],
    pub(crate) ctx: ReplayContext<'a>,
    pub(crate) run: CompactionRun,
    pub(crate) tokens: RunTokens<'p>,
    pub(crate) first_price: &'a ModelPrice,
    pub(crate) log: CompactedLog,
    pub(crate) with_recall: bool,
    /// The request being built, kept from call to call.
    pub(crate) request: Request<'t>,
    /// Results compacted at the previous call.
    pub(crate) compacted_before: usize,
    /// Per call, the messages whose thinking the config's
    /// `clear_thinking` edit clears (empty: no edit).
    pub(crate) thinking_cut: Vec<usize>,
}

impl<'a: 'p, 'p, 't: 'p> Planner<'a, 'p, 't> {
    pub(crate) fn new(
        prepared: &'p PreparedTrace<'t>,
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
            if c.compaction != config.compaction
                || c.model != config.model
                || c.thinking != config.thinking
            {
                return Err(ReplayError::Config {
                    trace: trace.name.clone(),
                    reason: format!(
                        "{c} and {config} do not share a compaction policy, thinking edit and model"
                    ),
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
        };
        let run = CompactionRun::with_shared(
            &config.compaction,
            prepared.ledger.clone(),
            prepared.stubs.clone(),
        );
        let run = match config.compaction {
            Compaction::Recorded | Compaction::ClaudeCodeAutocompact { .. } => run
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
        Ok(Planner {
            prepared,
            configs,
            ctx,
            run,
            tokens,
            first_price,
            log: CompactedLog::default(),
            with_recall: matches!(config.compaction, Compaction::Ledger { .. }),
            request: Request::default(),
            compacted_before: 0,
            thinking_cut: config
                .thinking
                .map(|t| t.cuts(prepared.trace))
                .unwrap_or_default(),
        })
    }

    /// Plans call `ci` (calls must come in order): builds its request once
    /// ([`Request::build`]) and places each config's markers on it.
    pub(crate) fn plan(&mut self, ci: usize) -> Result<Planned<'a>, ReplayError> {
        let (prepared, configs, pricing, opts) =
            (self.prepared, self.configs, self.ctx.pricing, self.ctx.opts);
        let trace = prepared.trace;
        let config = &configs[0];
        let call = &trace.calls[ci];
        if let Some(p) = opts.progress {
            p.advance(1);
        }
        let price: &'a ModelPrice = pricing.lookup(config.model_for_call(trace, call))?;
        self.tokens.framing_block = price.framing.per_block;
        self.tokens.framing_message = price.framing.per_message;
        let inputs = CallInputs {
            prepared,
            memo: self.ctx.memo,
            price,
            ci,
            with_recall: self.with_recall,
            thinking_cut: self.thinking_cut.get(ci).copied().unwrap_or(0),
        };
        let sent = self.request.build(
            &inputs,
            opts.build == Build::Incremental,
            &mut self.run,
            &self.tokens,
        )?;
        let unchanged = self.request.state.compacted.take_unchanged();
        let req = &self.request;
        let output_tokens = call
            .recorded_usage()
            .and_then(|u| u.output_tokens)
            .unwrap_or(0);
        // Filled in after the loop, shared by every call and config.
        let new = self.log.push(&req.state.compacted, unchanged);
        let compaction_changed =
            !new.is_empty() || req.state.compacted.len() < self.compacted_before;
        self.compacted_before = req.state.compacted.len();
        let microcompaction = matches!(
            config.compaction,
            Compaction::Recorded | Compaction::ClaudeCodeAutocompact { .. }
        );
        let carried = sent
            .shared
            .as_ref()
            .is_some_and(|(_, s)| *s == SharedState::Carried);
        let view = &req.state.view;
        let boundary = || {
            let kept = match view.messages.len().checked_sub(1) {
                None => None,
                Some(l) => req
                    .boundary_at
                    .get(l)
                    .unwrap_or_else(|| tracecost_engine::cache::history_boundary(view)),
            };
            // The engine's rule, scanned back: what the kept boundary
            // must equal (checked where tests run, not in releases).
            debug_assert_eq!(kept, tracecost_engine::cache::history_boundary(view));
            kept
        };
        let name = &trace.name;
        let unmarked = prepared.unmarked[ci].is_some();
        let mut marks = Vec::new();
        let mut placed = Vec::new();
        for c in configs {
            let markers = if unmarked {
                Vec::new()
            } else {
                markers_for_call(
                    &c.cache,
                    call.markers.as_deref(),
                    prepared.recorded_ttls[ci],
                    &sent.tools,
                    sent.system,
                    view,
                    &boundary,
                )
            };
            placed.clear();
            placed.extend(markers.iter().filter_map(|m| {
                marker_index(
                    m,
                    sent.tools.len(),
                    req.system_start,
                    &req.message_start,
                    view,
                )
            }));
            marks.push(narrow(placed.len(), name)?);
            for bp in &placed {
                marks.push(narrow(bp.block, name)?);
                marks.push(ttl_code(bp.ttl));
            }
        }
        let held_blocks = match prepared.recorded_fallbacks.get(ci).copied().flatten() {
            None => None,
            // What stood before the first `n` messages: the blocks before
            // message `n`'s first.
            Some(HeldPrefix::Messages(n)) => {
                Some(req.message_start.get(n).copied().unwrap_or(req.keys.len()))
            }
            // The longest prefix of the fixed part within the read (none
            // when its first block is already longer).
            Some(HeldPrefix::Tokens(t)) => Some(
                (0..req.header_len)
                    .take_while(|&b| req.index.tokens_through(b).is_some_and(|x| x <= t))
                    .count(),
            ),
        };
        let held_blocks = held_blocks.map(|b| narrow(b, name)).transpose()?;
        // A read that fell back did not read what the call before cached.
        let carried = carried && held_blocks.is_none();
        let l = &sent.layout;
        Ok(Planned {
            ci: narrow(ci, name)?,
            from_block: narrow(sent.from_block, name)?,
            same_blocks: narrow(sent.same_blocks, name)?,
            start_ms: call.start_ms,
            price,
            appended: req.tail[..].into(),
            shared: sent.shared.map(Box::new),
            output_tokens,
            stable_prefix_tokens: sent.stable_prefix_tokens,
            chars: sent.chars,
            layout: [
                narrow(l.system_start, name)?,
                narrow(l.header_len, name)?,
                narrow(l.hidden.start, name)?,
                narrow(l.hidden.end, name)?,
            ],
            hidden: sent.hidden,
            carried,
            compaction_changed,
            microcompaction,
            recorded_ttl: prepared.recorded_ttls[ci],
            recorded_ttl_before: prepared.recorded_ttls[ci.saturating_sub(1)],
            held_blocks,
            marks: marks.into(),
        })
    }

    /// What the results read of the planning, once every call is planned.
    pub(crate) fn done(self) -> PlanDone<'a> {
        let Planner {
            log,
            first_price,
            request,
            run,
            ..
        } = self;
        // The last request and the run's view go before the ids are
        // counted: the count's set is then the only thing that grows. On
        // a long trace their pages go back before the rows are made.
        drop((request, run));
        crate::in_flight::state_released();
        PlanDone {
            ever_compacted: log.distinct_ids(),
            log,
            first_price,
        }
    }
}

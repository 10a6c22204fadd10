//! Replaying a group of configs over one trace: the driver. Each call is
//! planned once for the group ([`Planner`]: its request built by
//! [`Request::build`], the per-call core, and each config's markers placed
//! on it), then simulated and billed for each config ([`Simulator`],
//! [`bill`]) against the cache simulator handed in, so that several traces
//! can share one. The plan needs the trace and no cache; the simulation
//! needs the plan and no trace, so a streamed trace is planned whole when
//! it is read and its text let go ([`PlanLog`]).

mod plan_log;
mod planner;
mod simulator;

pub(crate) use plan_log::{PlanDone, PlanLog};
pub(crate) use planner::Planner;
pub(crate) use simulator::Simulator;
pub use simulator::served_cost;

use tracecost_cost::prompt_cache::PromptCache;
use tracecost_policy::Config;

use super::prepare::PreparedTrace;
use super::{ReplayContext, ReplayError, ReplayResult};

/// One group of configs replayed over one trace, a call at a time, with
/// the cache simulators (one per config) handed in at each call so that
/// several traces can share them: a [`Planner`] and a [`Simulator`] side
/// by side, each call planned and then simulated.
pub(super) struct GroupRun<'a, 't> {
    planner: Planner<'a, 'a, 't>,
    sim: Simulator<'a>,
}

impl<'a, 't> GroupRun<'a, 't> {
    pub(super) fn new(
        prepared: &'a PreparedTrace<'t>,
        configs: &'a [Config],
        ctx: ReplayContext<'a>,
    ) -> Result<Self, ReplayError> {
        Ok(GroupRun {
            planner: Planner::new(prepared, configs, ctx)?,
            sim: Simulator::new(prepared.trace, configs, ctx),
        })
    }

    /// Replays call `ci` (calls must come in order) against `sims`, one
    /// cache simulator per config.
    pub(super) fn call(
        &mut self,
        ci: usize,
        sims: &mut [Box<dyn PromptCache>],
    ) -> Result<(), ReplayError> {
        let planned = self.planner.plan(ci)?;
        // The planner's index is the request's as the call is simulated:
        // the same blocks, indexed for the same model.
        self.sim
            .call_indexed(&planned, &self.planner.request.index, sims)
    }

    /// The results, one per config.
    pub(super) fn finish(self) -> Vec<ReplayResult> {
        let prepared = self.planner.prepared;
        self.sim
            .finish(self.planner.done(), prepared.trace, prepared.calibration)
    }
}

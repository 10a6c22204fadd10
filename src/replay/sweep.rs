//! Sweeps: one trace under a grid of configs, in parallel.

use rayon::prelude::*;

use super::{PreparedTrace, ReplayError, ReplayOptions, ReplayResult, replay};
use crate::cost::pricing::Pricing;
use crate::cost::tokens::TokenMemo;
use crate::policy::Config;

/// Runs every config over `prepared`, in parallel; results come back in the
/// order of `configs`. `progress` is called once per finished config.
pub fn sweep(
    prepared: &PreparedTrace<'_>,
    configs: &[Config],
    pricing: &Pricing,
    memo: &TokenMemo,
    opts: ReplayOptions,
    progress: &(dyn Fn() + Sync),
) -> Vec<Result<ReplayResult, ReplayError>> {
    configs
        .par_iter()
        .map(|c| {
            let r = replay(prepared, c, pricing, memo, opts);
            progress();
            r
        })
        .collect()
}

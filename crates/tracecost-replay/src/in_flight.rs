//! How many replays of one trace run at once. A replay holds state that
//! grows with the history it replays (its wire view, its request's keys
//! and prefix index, a cleared copy of each result a peer policy clears),
//! and a sweep of a trace reported alone runs one replay per core: on a
//! long trace, the peak then grows with the machine's cores rather than
//! with the trace. The replays beyond the first are allowed only while
//! their estimated state together stays within a fixed budget, so a short
//! trace still uses every core and a long one replays a config at a time.

/// What one replay in flight holds per message of the trace, at most: a
/// replay of a policy that clears results (the largest) holds, per
/// message, its view entry, its request's starts, boundary and character
/// sums and its blocks' keys and prefix index, and per cleared result a
/// stub, its place in the view and its counts, beside the peers' state by
/// tool. `heaptrack` of a report of a tool loop of 200,000 messages (one
/// result every other message) found about 110 MB held by such a replay
/// at the heap's peak, 550 bytes a message (`docs/benchmarks.md`, "One
/// long trace: memory").
pub const REPLAY_BYTES_PER_MESSAGE: u64 = 550;

/// What the replays beyond the first may hold together, estimated: about
/// what the tokenizer's tables take, so that running them at once never
/// adds more than the fixed part of a report already holds.
pub const EXTRA_REPLAYS_BUDGET: u64 = 64 << 20;

/// The replays of a trace of `messages` messages to run at once on
/// `cores` threads: at least one, at most `cores`, and beyond the first
/// only as many as [`EXTRA_REPLAYS_BUDGET`] holds.
pub fn replays_in_flight(messages: usize, cores: usize) -> usize {
    let per_replay = (messages as u64).saturating_mul(REPLAY_BYTES_PER_MESSAGE);
    let extra = EXTRA_REPLAYS_BUDGET
        .checked_div(per_replay)
        .unwrap_or(u64::MAX);
    let extra = usize::try_from(extra).unwrap_or(usize::MAX);
    cores.max(1).min(extra.saturating_add(1))
}

/// Runs `work` (whose parallel iterators replay a trace of `messages`
/// messages) with at most [`replays_in_flight`] threads. A thread pool
/// that cannot be made runs `work` on the current one, as before.
pub fn bounded<R: Send>(messages: usize, work: impl FnOnce() -> R + Send) -> R {
    let cores = rayon::current_num_threads();
    let threads = replays_in_flight(messages, cores);
    if threads >= cores {
        return work();
    }
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_trace_uses_every_core() {
        assert_eq!(replays_in_flight(2_000, 16), 16);
        assert_eq!(replays_in_flight(0, 8), 8);
    }

    #[test]
    fn a_long_trace_replays_one_config_at_a_time() {
        // 200,000 messages: one replay's estimate (110 MB) is past the budget.
        assert_eq!(replays_in_flight(200_000, 2), 1);
        assert_eq!(replays_in_flight(1_000_000, 64), 1);
    }

    #[test]
    fn the_replays_beyond_the_first_stay_within_the_budget() {
        for messages in [1usize, 10, 1_000, 40_000, 100_000, 191_000, 500_000] {
            for cores in [1usize, 2, 8, 64] {
                let k = replays_in_flight(messages, cores);
                assert!(
                    (1..=cores).contains(&k),
                    "{messages} messages, {cores} cores: {k}"
                );
                let extra = (k as u64 - 1) * messages as u64 * REPLAY_BYTES_PER_MESSAGE;
                assert!(extra <= EXTRA_REPLAYS_BUDGET, "{messages}, {cores}: {k}");
                // And no fewer than the budget allows.
                if k < cores {
                    assert!(
                        k as u64 * messages as u64 * REPLAY_BYTES_PER_MESSAGE
                            > EXTRA_REPLAYS_BUDGET
                    );
                }
            }
        }
    }

    /// The work runs on as many threads as the bound gives: one for a
    /// long trace, every one of the pool's for a short one.
    #[test]
    fn bounded_work_runs_on_the_threads_the_bound_gives() {
        let cores = rayon::current_num_threads();
        assert_eq!(bounded(200_000, rayon::current_num_threads), 1);
        assert_eq!(bounded(10, rayon::current_num_threads), cores);
        let sum: u64 = bounded(1_000_000, || {
            use rayon::prelude::*;
            (0..1_000u64).into_par_iter().sum()
        });
        assert_eq!(sum, 499_500);
    }

    #[test]
    fn no_core_count_gives_no_thread() {
        assert_eq!(replays_in_flight(10, 0), 1);
    }
}

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

/// What runs after each replay of a trace whose replays run one at a
/// time, once its state is let go: set once by the program
/// ([`between_replays`]). The binary hands the allocator's free pages
/// back there; left resident, what each replay freed (hundreds of MB on a
/// long trace, spread over several threads' heaps) stood beside the next.
static BETWEEN_REPLAYS: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Sets what runs between the replays of a trace replayed one config at a
/// time ([`Bound::replay_done`]); the first hook set stays.
pub fn between_replays(hook: fn()) {
    let _ = BETWEEN_REPLAYS.set(hook);
}

/// The replays of one trace allowed in flight at once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bound {
    threads: usize,
    cores: usize,
}

impl Bound {
    /// The bound of a trace of `messages` messages on this pool's threads.
    pub(crate) fn of(messages: usize) -> Self {
        let cores = rayon::current_num_threads();
        Bound {
            threads: replays_in_flight(messages, cores),
            cores,
        }
    }

    /// Whether its replays run one at a time where more threads could run.
    fn one_at_a_time(self) -> bool {
        self.threads == 1 && self.cores > 1
    }

    /// Runs `work` (whose parallel iterators replay the trace) with at
    /// most [`replays_in_flight`] threads. A thread pool that cannot be
    /// made runs `work` on the current one, as before.
    pub(crate) fn run<R: Send>(self, work: impl FnOnce() -> R + Send) -> R {
        if self.threads >= self.cores {
            return work();
        }
        let one = self.one_at_a_time();
        match rayon::ThreadPoolBuilder::new()
            .num_threads(self.threads)
            .build()
        {
            // The pool's one thread runs every replay (a pool is made for
            // each run and ends with it).
            Ok(pool) => pool.install(|| {
                ONE_AT_A_TIME.with(|f| f.set(one));
                let done = work();
                ONE_AT_A_TIME.with(|f| f.set(false));
                done
            }),
            Err(_) => work(),
        }
    }

    /// Called when one replay under this bound, or a step after the
    /// replays (the ranking), has let go of its state: runs the program's
    /// hook ([`between_replays`]) when the replays run one at a time (a
    /// long trace), and nothing otherwise (a short trace's replays run
    /// side by side and free little).
    pub(crate) fn replay_done(self) {
        run_hook_if(self.one_at_a_time());
    }
}

/// Runs the program's hook ([`between_replays`]), if one is set, when
/// `one_at_a_time`.
fn run_hook_if(one_at_a_time: bool) {
    if one_at_a_time && let Some(hook) = BETWEEN_REPLAYS.get() {
        hook();
    }
}

thread_local! {
    /// Whether this thread runs a trace's replays one at a time (the one
    /// thread of [`Bound::run`]'s pool for a long trace).
    static ONE_AT_A_TIME: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Called by a replay once its own state (its request, its wire view) is
/// let go, before its rows are made: runs the program's hook
/// ([`between_replays`]) when the replay runs alone on a long trace, and
/// nothing otherwise. The rows of a long trace (a list of a row a call,
/// mapped apart) otherwise came on top of the pages the replay had
/// just freed: the 500,000-call trace of `docs/benchmarks.md` peaked there,
/// 45 MB higher.
pub(crate) fn state_released() {
    run_hook_if(ONE_AT_A_TIME.with(std::cell::Cell::get));
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
        let threads = |messages| Bound::of(messages).run(rayon::current_num_threads);
        assert_eq!(threads(200_000), 1);
        assert_eq!(threads(10), cores);
        let sum: u64 = Bound::of(1_000_000).run(|| {
            use rayon::prelude::*;
            (0..1_000u64).into_par_iter().sum()
        });
        assert_eq!(sum, 499_500);
    }

    /// The program's hook runs after a replay of a trace replayed one
    /// config at a time, and after no other.
    #[test]
    fn the_hook_runs_between_replays_one_at_a_time_only() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        fn hook() {
            RUNS.fetch_add(1, Ordering::SeqCst);
        }
        between_replays(hook);
        Bound {
            threads: 2,
            cores: 2,
        }
        .replay_done();
        Bound {
            threads: 1,
            cores: 1,
        }
        .replay_done();
        assert_eq!(RUNS.load(Ordering::SeqCst), 0);
        Bound {
            threads: 1,
            cores: 2,
        }
        .replay_done();
        assert_eq!(RUNS.load(Ordering::SeqCst), 1);
        // A replay's state let go: the hook runs within a run one at a
        // time, not outside one nor with replays side by side.
        state_released();
        Bound {
            threads: 2,
            cores: 2,
        }
        .run(state_released);
        assert_eq!(RUNS.load(Ordering::SeqCst), 1);
        Bound {
            threads: 1,
            cores: 2,
        }
        .run(state_released);
        assert_eq!(RUNS.load(Ordering::SeqCst), 2);
        state_released();
        assert_eq!(RUNS.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn no_core_count_gives_no_thread() {
        assert_eq!(replays_in_flight(10, 0), 1);
    }
}

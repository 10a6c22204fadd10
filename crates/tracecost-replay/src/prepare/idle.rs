//! How long an automatic cache holds a prefix idle, fitted on the reads a
//! trace recorded: OpenAI's in-memory cache ("typically 5–10 minutes of
//! inactivity, always within one hour") and Gemini's implicit one (no
//! figure given) are simulated with a named idle time, and where the record
//! shows reads and misses after pauses, the idle time is taken from them
//! rather than left at its default.
//!
//! The evidence, over consecutive calls with start times and recorded
//! usage:
//!
//! - a **hit**: the later call read cached tokens after a pause of `g`; the
//!   prefix was held at least `g` idle (the earlier call used it at its
//!   start), so the idle time is more than `g`;
//! - a **miss**: the later call read nothing after a pause of `g` although
//!   the earlier one sent at least the cache's minimum and the later one
//!   extends it (same prompt, history not shorter, prompt not smaller); the
//!   idle time is at most `g`, unless something else (eviction under load,
//!   another machine) dropped it.
//!
//! The fit is the default kept within what the record allows: more than the
//! longest pause that read, at most the shortest pause after it that
//! missed, and at most the documented bound. A miss after a pause no longer
//! than one that read is counted as unexplained: no idle time explains it.

use tracecost_trace::Call;

/// What a trace's recorded reads say of its automatic cache's idle time,
/// and the idle time the replay takes from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IdleFit {
    /// The idle time fitted, in milliseconds.
    pub idle_ms: u64,
    /// The longest pause after which a call read (none read: `None`).
    pub longest_hit_gap_ms: Option<u64>,
    /// The shortest pause, longer than every one that read, after which a
    /// call missed (`None`: none did).
    pub shortest_miss_gap_ms: Option<u64>,
    /// Calls that read after a pause.
    pub hits: usize,
    /// Calls that missed what the call before left.
    pub misses: usize,
    /// Of those, misses after a pause no longer than one that read.
    pub unexplained_misses: usize,
}

/// Fits the idle time on the recorded reads of a trace's `calls`: `minimum`, the model's
/// shortest cached prompt; `default_ms`, the simulator's default;
/// `max_ms`, the longest idle time the provider allows. `None` when no call
/// pair is evidence either way.
pub fn fit_idle(calls: &[Call], minimum: u64, default_ms: u64, max_ms: u64) -> Option<IdleFit> {
    let mut hit_gaps = Vec::new();
    let mut miss_gaps = Vec::new();
    for w in calls.windows(2) {
        let [a, b] = w else { continue };
        let (Some(sa), Some(sb)) = (a.start_ms, b.start_ms) else {
            continue;
        };
        let (Some(ua), Some(ub)) = (a.recorded_usage(), b.recorded_usage()) else {
            continue;
        };
        let (Some(ta), Some(tb)) = (ua.total_input(), ub.total_input()) else {
            continue;
        };
        // Parallel calls miss whatever the idle time: no evidence.
        if sb <= sa {
            continue;
        }
        let gap = sb - sa;
        let read = ub.cache_read_input_tokens.unwrap_or(0);
        if read > 0 {
            hit_gaps.push(gap);
        } else if ta >= minimum && tb >= ta && a.prompt == b.prompt && b.messages >= a.messages {
            miss_gaps.push(gap);
        }
    }
    if hit_gaps.is_empty() && miss_gaps.is_empty() {
        return None;
    }
    let longest_hit = hit_gaps.iter().copied().max();
    let floor = longest_hit.unwrap_or(0);
    let unexplained = miss_gaps.iter().filter(|&&g| g <= floor).count();
    let shortest_miss = miss_gaps.iter().copied().filter(|&g| g > floor).min();
    // More than the longest pause that read, at most the shortest that
    // missed after it, at most the provider's bound; the default where it
    // fits.
    let mut idle = default_ms;
    if let Some(h) = longest_hit {
        idle = idle.max(h + 1);
    }
    if let Some(m) = shortest_miss {
        idle = idle.min(m);
    }
    Some(IdleFit {
        idle_ms: idle.min(max_ms),
        longest_hit_gap_ms: longest_hit,
        shortest_miss_gap_ms: shortest_miss,
        hits: hit_gaps.len(),
        misses: miss_gaps.len(),
        unexplained_misses: unexplained,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_trace::RecordedUsage;

    const MIN: u64 = 60_000;

    /// Calls at `minutes`, each sending `total` input tokens and reading
    /// `read` of them, the history growing by one message each.
    fn calls(calls: &[(u64, u64, u64)]) -> Vec<Call> {
        calls
            .iter()
            .enumerate()
            .map(|(i, &(minute, total, read))| Call {
                messages: i + 1,
                start_ms: Some(minute * MIN),
                usage: Some(Box::new(RecordedUsage {
                    input_tokens: Some(total - read),
                    cache_read_input_tokens: Some(read),
                    cache_creation_input_tokens: Some(0),
                    output_tokens: Some(10),
                    ..Default::default()
                })),
                ..Default::default()
            })
            .collect()
    }

    fn fit(calls: &[(u64, u64, u64)]) -> Option<IdleFit> {
        fit_idle(&self::calls(calls), 1024, 5 * MIN, 60 * MIN)
    }

    #[test]
    fn reads_within_the_default_keep_it() {
        let f = fit(&[(0, 2000, 0), (1, 2100, 1920), (9, 2200, 0)]).unwrap();
        assert_eq!(f.idle_ms, 5 * MIN);
        assert_eq!((f.hits, f.misses), (1, 1));
        assert_eq!(f.longest_hit_gap_ms, Some(MIN));
        assert_eq!(f.shortest_miss_gap_ms, Some(8 * MIN));
    }

    #[test]
    fn a_read_after_a_longer_pause_lengthens_it_to_just_past_that_pause() {
        let f = fit(&[(0, 2000, 0), (8, 2100, 1920), (30, 2200, 0)]).unwrap();
        assert_eq!(f.idle_ms, 8 * MIN + 1);
    }

    #[test]
    fn a_miss_before_the_default_shortens_it() {
        let f = fit(&[(0, 2000, 0), (1, 2100, 1920), (4, 2200, 0)]).unwrap();
        assert_eq!(f.idle_ms, 3 * MIN);
    }

    #[test]
    fn it_stays_within_the_providers_bound() {
        let f = fit(&[(0, 2000, 0), (90, 2100, 1920)]).unwrap();
        assert_eq!(f.idle_ms, 60 * MIN);
    }

    #[test]
    fn a_miss_no_idle_time_explains_is_counted_apart() {
        let f = fit(&[(0, 2000, 0), (7, 2100, 1920), (9, 2200, 0), (30, 2300, 0)]).unwrap();
        // The 2-minute miss comes after a 7-minute read: unexplained; the
        // 21-minute one bounds the idle time from above.
        assert_eq!((f.hits, f.misses, f.unexplained_misses), (1, 2, 1));
        assert_eq!(f.shortest_miss_gap_ms, Some(21 * MIN));
        assert_eq!(f.idle_ms, 7 * MIN + 1);
    }

    #[test]
    fn no_evidence_no_fit() {
        // Prompts under the minimum, and parallel calls, say nothing.
        assert_eq!(fit(&[(0, 500, 0), (20, 600, 0)]), None);
        assert_eq!(fit(&[(3, 2000, 0), (3, 2100, 0)]), None);
        assert_eq!(fit(&[(0, 2000, 0)]), None);
    }
}

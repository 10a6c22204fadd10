//! A fleet: many coding-agent sessions of one organization, over several
//! days, projects and models, written one session at a time.
//!
//! Every session is drawn from its own fork of the fleet's seed, so the
//! fleet does not depend on the order sessions are built in; only the
//! small per-session plans ([`Plan`]) are held for the whole fleet (to
//! order sessions by start time), the traces are built one by one.

use std::collections::VecDeque;

use super::rng::Rng;
use super::session::{
    self, AgentModel, HAIKU_4_5, OPUS_4_1, OPUS_4_5, PromptCache, SONNET_4_5, SessionSpec,
};
use super::text::{DAY_MS, date};
use crate::trace::Trace;

/// Monday 2025-10-06T00:00:00Z, the first day of a fleet.
const FIRST_DAY_MS: u64 = 1_759_708_800_000;

/// Days a fleet spans (two working weeks).
const DAYS: u64 = 14;

const HOUR_MS: u64 = 3_600_000;

/// Models and their share of sessions, in percent: mostly Sonnet 4.5, the
/// harder tasks on Opus, quick ones on Haiku.
const MODEL_MIX: [(AgentModel, u64); 4] = [
    (SONNET_4_5, 70),
    (OPUS_4_5, 12),
    (OPUS_4_1, 6),
    (HAIKU_4_5, 12),
];

/// Session lengths in calls: (lowest, highest, percent of sessions). Most
/// sessions are a quick question or fix; a few run for hundreds of calls
/// (and compact on the way). Integer buckets keep the draw identical on
/// every machine (no floating-point `ln`/`exp`).
const LENGTHS: [(u64, u64, u64); 6] = [
    (1, 5, 35),
    (6, 15, 30),
    (16, 40, 20),
    (41, 100, 10),
    (101, 250, 4),
    (251, 400, 1),
];

/// How projects share the work, in percent (taken in the order of
/// `data/session/projects.json`; projects past the list get none).
const PROJECT_SHARES: [u64; 3] = [50, 30, 20];

/// The draw of one session, before it is built.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Plan {
    start_ms: u64,
    /// Position in draw order; breaks ties of `start_ms`.
    drawn: usize,
    seed: u64,
    calls: usize,
    project: usize,
    model: AgentModel,
}

/// Picks an index by integer weights (their sum must be positive).
fn weighted(r: &mut Rng, weights: impl Iterator<Item = u64> + Clone) -> usize {
    let total: u64 = weights.clone().sum();
    let mut x = r.range(0, total.saturating_sub(1));
    for (i, w) in weights.enumerate() {
        if x < w {
            return i;
        }
        x -= w;
    }
    0
}

fn draw(fleet_seed: u64, i: usize, projects: usize) -> Plan {
    let mut r = Rng::new(fleet_seed ^ 0xf1ee_7000_0000_0000).fork(&format!("session-{i}"));
    let seed = r.next_u64();
    let (lo, hi, _) = LENGTHS[weighted(&mut r, LENGTHS.iter().map(|l| l.2))];
    let calls = r.range(lo, hi) as usize;
    let shares = PROJECT_SHARES.iter().copied().take(projects.max(1));
    let project = weighted(&mut r, shares);
    let model = MODEL_MIX[weighted(&mut r, MODEL_MIX.iter().map(|m| m.1))].0;
    // Weekdays carry most sessions; weekends a few.
    let day = loop {
        let d = r.range(0, DAYS - 1);
        if d % 7 < 5 || r.chance(0.2) {
            break d;
        }
    };
    // Working hours (08:00–19:00 UTC) mostly, some evenings.
    let hour = if r.chance(0.9) {
        r.range(8, 18)
    } else {
        r.range(19, 23)
    };
    let start_ms = FIRST_DAY_MS + day * DAY_MS + hour * HOUR_MS + r.range(0, HOUR_MS - 1000);
    Plan {
        start_ms: start_ms - start_ms % 1000,
        drawn: i,
        seed,
        calls,
        project,
        model,
    }
}

/// The traces of a fleet, one session (one or more parts) at a time, in
/// order of start time. See [`super::fleet`].
pub struct Fleet {
    sessions: usize,
    seed: u64,
    plans: std::vec::IntoIter<Plan>,
    index: usize,
    width: usize,
    projects: Vec<&'static str>,
    prompts: PromptCache,
    pending: VecDeque<Trace>,
}

impl Fleet {
    pub(crate) fn new(sessions: usize, seed: u64) -> Self {
        let projects = session::project_names();
        let mut plans: Vec<Plan> = (0..sessions)
            .map(|i| draw(seed, i, projects.len()))
            .collect();
        plans.sort_by_key(|p| (p.start_ms, p.drawn));
        Self {
            sessions,
            seed,
            plans: plans.into_iter(),
            index: 0,
            width: sessions.to_string().len().max(4),
            projects,
            prompts: PromptCache::new(),
            pending: VecDeque::new(),
        }
    }

    /// The number of sessions (a session of several parts counts once).
    pub fn sessions(&self) -> usize {
        self.sessions
    }
}

impl Iterator for Fleet {
    type Item = Trace;

    fn next(&mut self) -> Option<Trace> {
        if let Some(t) = self.pending.pop_front() {
            return Some(t);
        }
        let plan = self.plans.next()?;
        self.index += 1;
        let project = self.projects[plan.project % self.projects.len()];
        let spec = SessionSpec {
            calls: plan.calls,
            seed: plan.seed,
            name: format!("{project}-{:0w$}", self.index, w = self.width),
            project: plan.project,
            model: plan.model,
            start_ms: plan.start_ms,
            compacts: true,
            origin: format!(
                "tracecost::trace::generate::fleet({}, {}) (session {} of {}, started {})",
                self.sessions,
                self.seed,
                self.index,
                self.sessions,
                date(plan.start_ms)
            ),
        };
        self.pending
            .extend(session::build(&spec, &mut self.prompts));
        self.pending.pop_front()
    }
}

/// The project a fleet trace belongs to, read back from its name
/// (`<project>-<number>` or `<project>-<number>-part<k>`).
pub fn project_of(trace_name: &str) -> Option<&'static str> {
    session::project_names().into_iter().find(|p| {
        trace_name
            .strip_prefix(p)
            .and_then(|rest| rest.strip_prefix('-'))
            .and_then(|rest| rest.split('-').next())
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weighted_picks_by_share() {
        let mut r = Rng::new(4);
        let mut counts = [0u32; 3];
        for _ in 0..10_000 {
            counts[weighted(&mut r, [50u64, 30, 20].into_iter())] += 1;
        }
        assert!(counts[0] > counts[1] && counts[1] > counts[2], "{counts:?}");
        assert_eq!(weighted(&mut r, [0u64, 5].into_iter()), 1);
    }

    #[test]
    fn draws_do_not_depend_on_order_and_lengths_are_long_tailed() {
        assert_eq!(draw(3, 17, 3), draw(3, 17, 3));
        assert_ne!(draw(3, 17, 3), draw(4, 17, 3));
        let plans: Vec<Plan> = (0..2_000).map(|i| draw(1, i, 3)).collect();
        let short = plans.iter().filter(|p| p.calls <= 15).count();
        let long = plans.iter().filter(|p| p.calls > 100).count();
        assert!(
            short > 1_100 && (40..=200).contains(&long),
            "{short} {long}"
        );
        assert!(plans.iter().all(|p| (1..=400).contains(&p.calls)));
    }

    #[test]
    fn project_names_come_back() {
        assert_eq!(project_of("orbit-sched-0042"), Some("orbit-sched"));
        assert_eq!(project_of("tessera-0042-part3"), Some("tessera"));
        assert_eq!(project_of("session-200-s1"), None);
        assert_eq!(project_of("tessera-"), None);
    }
}

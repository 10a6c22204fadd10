//! A fleet: many coding-agent sessions of one organization (in one
//! account, or spread over several), over several days, projects and
//! models, written one session at a time.
//!
//! Every session is drawn from its own fork of the fleet's seed, so the
//! fleet does not depend on the order sessions are built in; only the
//! small per-session plans ([`Plan`]) are held for the whole fleet (to
//! order sessions by start time), the traces are built one by one.

use std::collections::VecDeque;

use super::rng::Rng;
use super::session::{
    self, AgentModel, FLEET_ACCOUNT, HAIKU_4_5, OPUS_4_1, OPUS_4_5, PromptCache, SONNET_4_5,
    SessionSpec,
};
use super::text::{DAY_MS, date};
use tracecost_trace::Trace;

/// Monday 2025-10-06T00:00:00Z, the first day of a fleet.
const FIRST_DAY_MS: u64 = 1_759_708_800_000;

/// Days a fleet spans unless told otherwise (two working weeks).
pub const DEFAULT_FLEET_DAYS: u64 = 14;

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
    /// Index of the session's account, `0..accounts`.
    account: usize,
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

fn draw(fleet_seed: u64, i: usize, projects: usize, days: u64) -> Plan {
    let mut r = Rng::new(fleet_seed ^ 0xf1ee_7000_0000_0000).fork(&format!("session-{i}"));
    let seed = r.next_u64();
    let (lo, hi, _) = LENGTHS[weighted(&mut r, LENGTHS.iter().map(|l| l.2))];
    let calls = r.range(lo, hi) as usize;
    let shares = PROJECT_SHARES.iter().copied().take(projects.max(1));
    let project = weighted(&mut r, shares);
    let model = MODEL_MIX[weighted(&mut r, MODEL_MIX.iter().map(|m| m.1))].0;
    // Weekdays carry most sessions; weekends a few. (A fleet of one to five
    // days, Monday on, has no weekend to draw.)
    let day = loop {
        let d = r.range(0, days.max(1) - 1);
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
        account: 0,
    }
}

/// The name of account `k` (from 0) of a fleet of `accounts`: the one
/// account of a fleet is [`FLEET_ACCOUNT`]; several are `acct-01`,
/// `acct-02`, … (zero-padded to the width of the largest, two digits at
/// least).
fn account_name(k: usize, accounts: usize) -> String {
    if accounts <= 1 {
        return FLEET_ACCOUNT.to_owned();
    }
    let width = accounts.to_string().len().max(2);
    format!("acct-{:0width$}", k + 1)
}

/// The traces of a fleet, one session (one or more parts) at a time, in
/// order of start time. See [`super::fleet`].
pub struct GeneratedFleet {
    sessions: usize,
    seed: u64,
    accounts: usize,
    days: u64,
    plans: std::vec::IntoIter<Plan>,
    index: usize,
    width: usize,
    projects: Vec<&'static str>,
    prompts: PromptCache,
    pending: VecDeque<Trace>,
}

impl GeneratedFleet {
    /// `sessions` sessions from `seed`, spread over `accounts` accounts (1
    /// when 0): the session drawn `i`-th (draw order is not start order)
    /// goes to account `i % accounts`, so the accounts' sizes differ by one
    /// session at most, and a session's parts share its account. The draws
    /// themselves do not depend on `accounts`: the same seed gives the same
    /// sessions in any number of accounts. The sessions start within
    /// `days` days (1 when 0).
    pub(crate) fn new(sessions: usize, seed: u64, accounts: usize, days: u64) -> Self {
        let accounts = accounts.max(1);
        let days = days.max(1);
        let projects = session::project_names();
        let mut plans: Vec<Plan> = (0..sessions)
            .map(|i| Plan {
                account: i % accounts,
                ..draw(seed, i, projects.len(), days)
            })
            .collect();
        plans.sort_by_key(|p| (p.start_ms, p.drawn));
        Self {
            sessions,
            seed,
            accounts,
            days,
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

    /// The number of accounts the sessions are spread over.
    pub fn accounts(&self) -> usize {
        self.accounts
    }
}

impl Iterator for GeneratedFleet {
    type Item = Trace;

    fn next(&mut self) -> Option<Trace> {
        if let Some(t) = self.pending.pop_front() {
            return Some(t);
        }
        let plan = self.plans.next()?;
        self.index += 1;
        let project = self.projects[plan.project % self.projects.len()];
        let account = account_name(plan.account, self.accounts);
        // One account over the usual days: the words (and bytes) of a
        // fleet before accounts and days.
        let (recipe, of_account) = match (self.accounts, self.days) {
            (1, DEFAULT_FLEET_DAYS) => (
                format!("fleet({}, {})", self.sessions, self.seed),
                String::new(),
            ),
            (n, DEFAULT_FLEET_DAYS) => (
                format!("fleet_in_accounts({}, {}, {n})", self.sessions, self.seed),
                format!(", account {account}"),
            ),
            (n, days) => (
                format!(
                    "fleet_over_days({}, {}, {n}, {days})",
                    self.sessions, self.seed
                ),
                match n {
                    1 => String::new(),
                    _ => format!(", account {account}"),
                },
            ),
        };
        let origin = format!(
            "tracecost::trace::generate::{recipe} (session {} of {}{of_account}, started {})",
            self.index,
            self.sessions,
            date(plan.start_ms)
        );
        let spec = SessionSpec {
            calls: plan.calls,
            seed: plan.seed,
            name: format!("{project}-{:0w$}", self.index, w = self.width),
            project: plan.project,
            model: plan.model,
            start_ms: plan.start_ms,
            compacts: true,
            account,
            origin,
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
        assert_eq!(
            draw(3, 17, 3, DEFAULT_FLEET_DAYS),
            draw(3, 17, 3, DEFAULT_FLEET_DAYS)
        );
        assert_ne!(
            draw(3, 17, 3, DEFAULT_FLEET_DAYS),
            draw(4, 17, 3, DEFAULT_FLEET_DAYS)
        );
        let plans: Vec<Plan> = (0..2_000)
            .map(|i| draw(1, i, 3, DEFAULT_FLEET_DAYS))
            .collect();
        let short = plans.iter().filter(|p| p.calls <= 15).count();
        let long = plans.iter().filter(|p| p.calls > 100).count();
        assert!(
            short > 1_100 && (40..=200).contains(&long),
            "{short} {long}"
        );
        assert!(plans.iter().all(|p| (1..=400).contains(&p.calls)));
    }

    /// The session a fleet trace belongs to (its later parts name it).
    fn session_of(t: &Trace) -> &str {
        t.session.as_deref().unwrap_or(&t.name)
    }

    #[test]
    fn accounts_spread_whole_sessions_evenly_and_change_nothing_else() {
        use std::collections::BTreeMap;
        let json = |f: GeneratedFleet| -> Vec<String> {
            f.map(|t| tracecost_trace::to_json(&t)).collect()
        };
        let four: Vec<Trace> = GeneratedFleet::new(41, 5, 4, DEFAULT_FLEET_DAYS).collect();
        // The same seed, the same bytes.
        assert_eq!(
            json(GeneratedFleet::new(41, 5, 4, DEFAULT_FLEET_DAYS)),
            json(GeneratedFleet::new(41, 5, 4, DEFAULT_FLEET_DAYS))
        );
        let mut accounts: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
        for t in &four {
            let a = t.account.as_deref().expect("every trace has its account");
            *accounts
                .entry(a)
                .or_default()
                .entry(session_of(t))
                .or_default() += 1;
        }
        let names: Vec<&str> = accounts.keys().copied().collect();
        assert_eq!(names, ["acct-01", "acct-02", "acct-03", "acct-04"]);
        // 41 sessions: 11, 10, 10, 10.
        let sizes: Vec<usize> = accounts.values().map(|s| s.len()).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 41);
        assert!(sizes.iter().all(|&n| n == 10 || n == 11), "{sizes:?}");
        // A session's parts (continuations after a compaction) share one
        // account: no session is in two.
        let mut owner: BTreeMap<&str, &str> = BTreeMap::new();
        for (a, sessions) in &accounts {
            for s in sessions.keys() {
                assert_eq!(owner.insert(s, a), None, "{s} is in two accounts");
            }
        }
        assert!(
            accounts.values().flat_map(|s| s.values()).any(|&n| n > 1),
            "some session has several parts"
        );
        // The sessions themselves are the one-account fleet's: only the
        // account and the description's recipe differ.
        let one: Vec<Trace> = GeneratedFleet::new(41, 5, 1, DEFAULT_FLEET_DAYS).collect();
        assert_eq!(one.len(), four.len());
        for (a, b) in one.iter().zip(&four) {
            assert_eq!(a.account.as_deref(), Some(FLEET_ACCOUNT));
            assert!(
                a.description.contains("fleet(41, 5) (session "),
                "{}",
                a.description
            );
            let recipe = "fleet_in_accounts(41, 5, 4) (session ";
            let account = format!(", account {}, started", b.account.as_deref().unwrap());
            assert!(
                b.description.contains(recipe) && b.description.contains(&account),
                "{}",
                b.description
            );
            let same = Trace {
                account: a.account.clone(),
                description: a.description.clone(),
                ..b.clone()
            };
            assert_eq!(&same, a);
        }
    }

    #[test]
    fn account_names_are_padded_to_the_largest() {
        assert_eq!(account_name(0, 1), FLEET_ACCOUNT);
        assert_eq!(account_name(0, 2), "acct-01");
        assert_eq!(account_name(15, 16), "acct-16");
        assert_eq!(account_name(0, 100), "acct-001");
        assert_eq!(account_name(99, 100), "acct-100");
    }

    #[test]
    fn project_names_come_back() {
        assert_eq!(project_of("orbit-sched-0042"), Some("orbit-sched"));
        assert_eq!(project_of("tessera-0042-part3"), Some("tessera"));
        assert_eq!(project_of("session-200-s1"), None);
        assert_eq!(project_of("tessera-"), None);
    }
}

//! The fleet answer: per config, the sum over every session; what the
//! fleet pays now (each session's status quo), what one policy would save,
//! and how that saving spreads over sessions and projects.
//!
//! Per-session figures are additive, so a fleet's figure for a config is the
//! sum of its sessions' figures.

use std::collections::BTreeMap;

use serde::Serialize;

use std::sync::Arc;

use crate::engine::message::{BlockKind, Content, Role};
use crate::policy::{Compaction, Config};
use crate::replay::stability::StabilityReport;
use crate::replay::sweep::{SweepRow, TraceSweep};
use crate::trace::Trace;

use super::usage::date_of;

/// The `config` of a status quo that differs between sessions.
pub const MIXED_STATUS_QUO: &str = "mixed";

/// A session's saving smaller than this (half a cent) is noise, not a
/// session made cheaper or dearer.
pub const NOISE_USD: f64 = 0.005;

/// The day of calls without a start time.
pub const UNDATED: &str = "undated";

/// Days in an average month (365.25 / 12), for "per month" figures.
pub const DAYS_PER_MONTH: f64 = 30.4375;

/// One day of a session: its calls that started that day (UTC).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionDay {
    /// `YYYY-MM-DD`, or [`UNDATED`].
    pub day: String,
    /// Calls.
    pub calls: usize,
    /// What the provider billed for those of them that recorded usage.
    pub recorded_cost_usd: Option<f64>,
    /// Simulated cost under each config, in the order of the sweep's rows.
    pub cost_usd: Vec<f64>,
}

/// The stability check of a session's recommended config, in short.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StabilityBrief {
    /// Distinct stubs seen.
    pub stubs: usize,
    /// Violations found.
    pub violations: usize,
}

impl StabilityBrief {
    /// The brief of a full check.
    pub fn of(r: &StabilityReport) -> Self {
        StabilityBrief {
            stubs: r.stubs,
            violations: r.violations.len(),
        }
    }
}

/// What a fleet keeps of one session once its own pages are written: the
/// sweep without per-call rows, and what names and dates the session. A
/// fleet of a thousand sessions is summed from these, never from the
/// per-call data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionSummary {
    /// The sweep; every row's per-call list is empty.
    pub sweep: TraceSweep,
    /// The session the trace is part of (its own name when it is whole).
    pub session: String,
    /// The project the session belongs to, when the source tells.
    pub project: Option<String>,
    /// The first thing the user asked, on one line.
    pub first_prompt: Option<String>,
    /// When the first call started, in milliseconds since the Unix epoch.
    pub started_ms: Option<u64>,
    /// When the last call started.
    pub ended_ms: Option<u64>,
    /// Per day, in day order.
    pub days: Vec<SessionDay>,
    /// The stability of the recommended config, if checked.
    pub stability: Option<StabilityBrief>,
}

/// Characters of a first prompt kept for naming a session.
const FIRST_PROMPT_CHARS: usize = 80;

impl SessionSummary {
    /// The summary of `trace`'s sweep (per-call rows are read for the days,
    /// then dropped).
    pub fn new(trace: &Trace, mut sweep: TraceSweep, stability: Option<&StabilityReport>) -> Self {
        let mut days: BTreeMap<String, SessionDay> = BTreeMap::new();
        let starts: Vec<Option<u64>> = trace.calls.iter().map(|c| c.start_ms).collect();
        for (r, row) in sweep.rows.iter().enumerate() {
            for c in &row.result.calls {
                let day = starts
                    .get(c.index.wrapping_sub(1))
                    .copied()
                    .flatten()
                    .map_or_else(|| UNDATED.to_owned(), date_of);
                let d = days.entry(day.clone()).or_insert_with(|| SessionDay {
                    day,
                    calls: 0,
                    recorded_cost_usd: None,
                    cost_usd: vec![0.0; sweep.rows.len()],
                });
                d.cost_usd[r] += c.cost_usd;
                if r == sweep.baseline {
                    d.calls += 1;
                    if let Some(rec) = c.recorded_cost_usd {
                        *d.recorded_cost_usd.get_or_insert(0.0) += rec;
                    }
                }
            }
        }
        for row in &mut sweep.rows {
            row.result.calls = Vec::new();
        }
        SessionSummary {
            sweep,
            session: super::identity::session_of(trace).to_owned(),
            project: trace.project.clone(),
            first_prompt: first_prompt(trace),
            started_ms: starts.iter().flatten().min().copied(),
            ended_ms: starts.iter().flatten().max().copied(),
            days: days.into_values().collect(),
            stability: stability.map(StabilityBrief::of),
        }
    }

    /// The status quo's row.
    pub fn status_quo(&self) -> &SweepRow {
        &self.sweep.rows[self.sweep.baseline]
    }

    /// The session's own recommended row.
    pub fn recommended(&self) -> &SweepRow {
        &self.sweep.rows[self.sweep.recommended]
    }

    /// The row of `config`, if the session was replayed under it.
    pub fn row(&self, config: &str) -> Option<&SweepRow> {
        self.sweep
            .rows
            .iter()
            .find(|r| r.result.config.to_string() == config)
    }
}

/// How Claude Code opens the note it adds before a local command's output.
const LOCAL_COMMAND_CAVEAT: &str = "Caveat: The messages below were generated by the user";

/// The traces of each session (a conversation with its continuations and
/// subagents: the traces that share its name), in session-name order. The
/// one grouping every per-session figure is summed over.
pub fn by_session<'a>(
    traces: impl IntoIterator<Item = &'a SessionSummary>,
) -> BTreeMap<&'a str, Vec<&'a SessionSummary>> {
    let mut out: BTreeMap<&str, Vec<&SessionSummary>> = BTreeMap::new();
    for t in traces {
        out.entry(t.session.as_str()).or_default().push(t);
    }
    out
}

/// What `config` saves on one session's traces against their status quo; a
/// trace not replayed under `config`, or `None` (the status quo itself),
/// saves nothing. Within [`NOISE_USD`] a session breaks even: 0.
pub fn session_saving(traces: &[&SessionSummary], config: Option<&str>) -> f64 {
    let saving: f64 = traces
        .iter()
        .map(|t| {
            let base = t.status_quo().result.totals.cost_usd;
            let cost = config
                .and_then(|c| t.row(c))
                .map_or(base, |r| r.result.totals.cost_usd);
            base - cost
        })
        .sum();
    if saving.abs() < NOISE_USD {
        0.0
    } else {
        saving
    }
}

/// What `config` saves per session ([`session_saving`] of each of
/// [`by_session`]), in session-name order.
pub fn savings_by_session<'a>(
    traces: impl IntoIterator<Item = &'a SessionSummary>,
    config: Option<&str>,
) -> Vec<f64> {
    by_session(traces)
        .values()
        .map(|g| session_saving(g, config))
        .collect()
}

/// The `p`th percentile of `sorted` (ascending), interpolated between the
/// two nearest ranks (numpy's default), so the median of an even count is
/// the mean of the middle two, as a reader computes it. 0 when empty.
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    match sorted {
        [] => 0.0,
        [only] => *only,
        _ => {
            let pos = (p / 100.0).clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
        }
    }
}

/// The first user text that is not something a client added (Claude Code
/// wraps commands and reminders in tags, and notes local commands), on one
/// line.
fn first_prompt(trace: &Trace) -> Option<String> {
    let texts = trace
        .messages
        .iter()
        .filter(|m| m.role() == Role::User)
        .flat_map(|m| -> Vec<Arc<str>> {
            match m.content() {
                Content::Text(t) => vec![t.clone()],
                Content::Blocks(blocks) => blocks
                    .iter()
                    .filter_map(|b| match b.kind() {
                        BlockKind::Text { text } => Some(text.clone()),
                        _ => None,
                    })
                    .collect(),
            }
        })
        .filter(|t| !t.trim().is_empty());
    let mut first = None;
    for t in texts {
        let start = t.trim_start();
        if !start.starts_with('<') && !start.starts_with(LOCAL_COMMAND_CAVEAT) {
            first = Some(t);
            break;
        }
        first.get_or_insert(t);
    }
    first.map(|t| crate::engine::handle::one_line(&t, FIRST_PROMPT_CHARS))
}

/// One config's figures summed over a set of sessions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetFigures {
    /// The config (canonical string), or [`MIXED_STATUS_QUO`] for a status
    /// quo that differs between sessions.
    pub config: String,
    /// Simulated cost, USD.
    pub cost_usd: f64,
    /// Cost plus the priced recalls the recommendation minimizes.
    pub risk_adjusted_cost_usd: f64,
    /// Of the priced recalls, what sending the recalled text costs (the
    /// rest prices the recall-risk turns).
    pub recall_tokens_usd: f64,
    /// Saving against the status quo (positive = cheaper).
    pub savings_usd: f64,
    /// Same, in percent of the status quo.
    pub savings_pct: f64,
    /// Tool results compacted or cleared, over every session.
    pub compacted_results: usize,
    /// Assistant turns that would have needed a recall.
    pub recall_risk_turns: usize,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Cache writes.
    pub cache_creation_input_tokens: u64,
    /// Cache reads.
    pub cache_read_input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// A compaction that compacted nothing anywhere: never recommended.
    pub no_effect: bool,
    /// Calls that send more than their model's context window (the API
    /// would refuse them).
    pub over_window_calls: usize,
    /// Traces the config could not apply to (a `recorded` cache policy on a
    /// trace that recorded no markers): they count at their status quo, so
    /// the config is compared with the others on every session and saves
    /// only where it ran.
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_traces: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A config of the grid that some traces were not replayed under, because
/// it cannot apply to them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedConfig {
    /// The config.
    pub config: String,
    /// Traces it was skipped for.
    pub traces: usize,
    /// Traces of the group.
    pub of: usize,
    /// Why, in words.
    pub reason: String,
}

/// The configs of `configs` that cannot apply to some of `traces`, and to
/// how many (a sweep skips them there), in the configs' order.
pub fn skipped_configs(traces: &[crate::trace::Trace], configs: &[Config]) -> Vec<SkippedConfig> {
    configs
        .iter()
        .filter_map(|c| {
            let n = traces
                .iter()
                .filter(|t| crate::replay::check_config(t, c).is_err())
                .count();
            (n > 0).then(|| SkippedConfig {
                config: c.to_string(),
                traces: n,
                of: traces.len(),
                reason: skip_reason(c),
            })
        })
        .collect()
}

/// Why `config` cannot apply to a trace that was not replayed under it.
fn skip_reason(config: &Config) -> String {
    match (&config.cache, &config.compaction) {
        (crate::policy::Cache::Recorded, _) => "they recorded no cache markers to replay".into(),
        (_, Compaction::ClearToolUses(_)) => {
            "an Anthropic API feature, and their provider is another".into()
        }
        _ => "their provider does not accept its cache markers".into(),
    }
}

impl FleetFigures {
    fn empty(config: String) -> Self {
        FleetFigures {
            config,
            cost_usd: 0.0,
            risk_adjusted_cost_usd: 0.0,
            recall_tokens_usd: 0.0,
            savings_usd: 0.0,
            savings_pct: 0.0,
            compacted_results: 0,
            recall_risk_turns: 0,
            input_tokens: 0,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 0,
            no_effect: false,
            over_window_calls: 0,
            skipped_traces: 0,
        }
    }

    fn add(&mut self, r: &SweepRow) {
        let t = &r.result.totals;
        self.cost_usd += t.cost_usd;
        self.risk_adjusted_cost_usd += r.risk_adjusted_cost_usd;
        self.recall_tokens_usd += r.recall_tokens_usd;
        self.compacted_results += t.compacted_results;
        self.recall_risk_turns += r.risk.turns;
        self.input_tokens += t.usage.input_tokens;
        self.cache_creation_input_tokens += t.usage.cache_creation_input_tokens;
        self.cache_read_input_tokens += t.usage.cache_read_input_tokens;
        self.output_tokens += t.usage.output_tokens;
        self.over_window_calls += t.over_window_calls;
    }

    fn against(&mut self, status_quo_usd: f64) {
        self.savings_usd = status_quo_usd - self.cost_usd;
        self.savings_pct = if status_quo_usd > 0.0 {
            self.savings_usd / status_quo_usd * 100.0
        } else {
            0.0
        };
    }
}

/// How the recommended config's saving spreads over sessions (USD per
/// session, against each session's status quo).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SavingsSpread {
    /// 10th percentile.
    pub p10_usd: f64,
    /// Median.
    pub median_usd: f64,
    /// 90th percentile.
    pub p90_usd: f64,
    /// Sessions the recommendation makes more expensive.
    pub more_expensive: usize,
}

/// The answer for one group of sessions (the fleet, or one project).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupAnswer {
    /// Sessions (the parts and subagents of one count once).
    pub sessions: usize,
    /// Traces: each part and subagent conversation on its own.
    pub traces: usize,
    /// Calls.
    pub calls: usize,
    /// Calls that recorded their usage.
    pub recorded_calls: usize,
    /// What the sessions that recorded usage paid, USD (their calls with
    /// recorded usage only).
    pub recorded_cost_usd: Option<f64>,
    /// The status quo simulated on the same calls, USD, to compare with the
    /// recorded bill.
    pub status_quo_on_recorded_calls_usd: Option<f64>,
    /// What the sessions pay now, simulated.
    pub status_quo: FleetFigures,
    /// The config to use; equal to the status quo's figures when keeping
    /// what runs is the answer.
    pub recommended: FleetFigures,
    /// Whether the answer is to keep what runs.
    pub keep_status_quo: bool,
    /// How the recommendation's saving spreads over sessions.
    pub spread: SavingsSpread,
    /// Configs of the grid that could not apply to some traces, in grid
    /// order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedConfig>,
    /// What runs now, the recommendation and the saving, on one basis: the
    /// figures a page sets side by side.
    pub headline: Headline,
    /// The recall price at which the answer would change, when some config
    /// beats the status quo at some price.
    pub break_even: Option<BreakEven>,
}

/// How the answer depends on the price of a recall: with every recall-risk
/// turn priced at one price `P` (`--recall-cost`), a config costs its
/// simulated cost, plus its recalled text, plus `P` per turn; against the
/// status quo that is a line in `P`, and this is where it crosses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakEven {
    /// The config that beats the status quo up to the highest recall price
    /// (the recommendation's own, when one is recommended).
    pub config: String,
    /// Where in `P` it beats the status quo.
    #[serde(flatten)]
    pub wins: Wins,
    /// What a turn is priced at in this answer, on average, USD (one more
    /// round trip of its trace unless `--recall-cost` set it).
    pub priced_now_usd: f64,
}

/// The prices of a recall-risk turn at which a config beats the status quo.
/// In `results.json`: `"wins": "below" | "above" | "always"`, with the
/// price as `"price_usd"` where there is one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "wins", content = "price_usd", rename_all = "snake_case")]
pub enum Wins {
    /// While a turn costs less than this, USD: it saves, and risks more.
    Below(f64),
    /// While a turn costs more than this, USD: it costs more, but the
    /// status quo (which clears results itself) risks more.
    Above(f64),
    /// At any price: it is cheaper, and risks no more.
    Always,
}

impl BreakEven {
    /// The break-even of `configs` against `status_quo`: of `recommended`
    /// when one is, else of the config that wins up to the highest price.
    fn of(
        status_quo: &FleetFigures,
        configs: &[&FleetFigures],
        recommended: Option<&FleetFigures>,
    ) -> Option<Self> {
        let base = |f: &FleetFigures| f.cost_usd + f.recall_tokens_usd;
        // Where `f` beats the status quo: `gain − extra_turns · P > 0`.
        let wins = |f: &FleetFigures| -> Option<Wins> {
            let gain = base(status_quo) - base(f);
            let extra_turns = f.recall_risk_turns as f64 - status_quo.recall_risk_turns as f64;
            match (gain > 0.0, extra_turns) {
                (true, t) if t <= 0.0 => Some(Wins::Always),
                (true, t) => Some(Wins::Below(gain / t)),
                (false, t) if t < 0.0 => Some(Wins::Above(-gain / -t)),
                _ => None,
            }
        };
        let (f, w) = match recommended {
            Some(r) => (r, wins(r)?),
            None => configs
                .iter()
                .filter(|f| !f.no_effect && f.config != status_quo.config)
                .filter_map(|f| match wins(f)? {
                    // Keeping what runs is the answer: what matters is the
                    // highest price below which compaction would win.
                    Wins::Below(p) => Some((*f, Wins::Below(p), p)),
                    Wins::Always => Some((*f, Wins::Always, f64::INFINITY)),
                    Wins::Above(_) => None,
                })
                .max_by(|(fa, _, a), (fb, _, b)| {
                    a.total_cmp(b)
                        // Of equal prices, the cheaper config.
                        .then_with(|| fb.cost_usd.total_cmp(&fa.cost_usd))
                })
                .map(|(f, w, _)| (f, w))?,
        };
        let turns_usd = f.risk_adjusted_cost_usd - f.cost_usd - f.recall_tokens_usd;
        Some(BreakEven {
            config: f.config.clone(),
            wins: w,
            // Float residue of a sum priced at nothing is nothing.
            priced_now_usd: if f.recall_risk_turns > 0 && turns_usd > 1e-9 {
                turns_usd / f.recall_risk_turns as f64
            } else {
                0.0
            },
        })
    }
}

/// What the figures set side by side are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Basis {
    /// The recorded bill: every call replayed recorded its usage. The
    /// recommendation is that bill less the simulated saving.
    Recorded,
    /// The status quo simulated: some or all calls recorded no usage (the
    /// recorded part is a check beside it, not a figure to subtract from).
    Simulated,
}

/// What runs now, the recommendation and the saving, on one [`Basis`]:
/// `now_usd − recommended_usd = saving_usd`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Headline {
    /// Which figures these are.
    pub basis: Basis,
    /// What runs now.
    pub now_usd: f64,
    /// Under the recommendation (`now_usd` when it is to keep what runs).
    pub recommended_usd: f64,
    /// The saving, the simulated difference between the two policies.
    pub saving_usd: f64,
    /// The saving in percent of `now_usd`.
    pub saving_pct: f64,
}

impl Headline {
    /// The headline of a group's figures: the recorded bill where every
    /// call recorded usage, else the simulated status quo.
    fn of(
        calls: usize,
        recorded_calls: usize,
        recorded_usd: Option<f64>,
        status_quo: &FleetFigures,
        recommended: &FleetFigures,
        keep: bool,
    ) -> Self {
        let saving_usd = if keep { 0.0 } else { recommended.savings_usd };
        let (basis, now_usd) = match recorded_usd {
            Some(r) if calls > 0 && recorded_calls == calls && r > 0.0 => (Basis::Recorded, r),
            _ => (Basis::Simulated, status_quo.cost_usd),
        };
        Headline {
            basis,
            now_usd,
            recommended_usd: now_usd - saving_usd,
            saving_usd,
            saving_pct: if now_usd > 0.0 {
                saving_usd / now_usd * 100.0
            } else {
                0.0
            },
        }
    }

    /// The same figures per month at `scale` months per the span covered.
    pub fn scaled(&self, scale: f64) -> Self {
        Headline {
            now_usd: self.now_usd * scale,
            recommended_usd: self.recommended_usd * scale,
            saving_usd: self.saving_usd * scale,
            ..*self
        }
    }
}

/// The fleet's answer, its configs and its projects.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fleet {
    /// The answer over every session.
    #[serde(flatten)]
    pub answer: GroupAnswer,
    /// Every config of the grid, cheapest first.
    pub configs: Vec<FleetFigures>,
    /// Every session (its traces together), most expensive first.
    pub per_session: Vec<SessionFigures>,
    /// The answer per project, when sessions name more than one.
    pub projects: Vec<ProjectAnswer>,
    /// Per day, in day order (calls without a start time last, as
    /// [`UNDATED`]).
    pub days: Vec<DayFigures>,
    /// The figures per month at the recorded rate, when calls are dated.
    pub per_month: Option<PerMonth>,
    /// The stubs of the recommendation checked for byte stability on every
    /// session, when a policy other than the status quo is recommended.
    pub stability: Option<FleetStability>,
    /// How well the status quo reproduces the recorded bill, when sessions
    /// recorded usage.
    pub fidelity: Option<super::fidelity::FidelitySummary>,
}

/// The byte-stability check of one config over every session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FleetStability {
    /// The config checked.
    pub config: String,
    /// Sessions checked (each with all its traces).
    pub sessions: usize,
    /// Traces checked.
    pub traces: usize,
    /// Distinct stubs seen, over every trace.
    pub stubs: usize,
    /// Violations found, over every trace.
    pub violations: usize,
    /// Sessions with at least one violation in one of their traces.
    pub unstable_sessions: usize,
}

/// One session as a reader counts it: a conversation with its
/// continuations and subagents, its traces summed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SessionFigures {
    /// The session's name.
    pub session: String,
    /// Its project (the conversation's own), when the source tells.
    pub project: Option<String>,
    /// The first thing the user asked in the conversation, on one line.
    pub first_prompt: Option<String>,
    /// When its first call started, in milliseconds since the Unix epoch.
    pub started_ms: Option<u64>,
    /// When its last call started.
    pub ended_ms: Option<u64>,
    /// Its traces: the conversation, then its continuations and subagents
    /// as they ran, by their names in the report.
    pub traces: Vec<String>,
    /// Calls, over its traces.
    pub calls: usize,
    /// Of those, calls that recorded their usage.
    pub recorded_calls: usize,
    /// What those calls were billed, USD.
    pub recorded_cost_usd: Option<f64>,
    /// Its status quo, simulated, USD.
    pub status_quo_usd: f64,
    /// What it costs under the fleet's recommendation (its status quo when
    /// the answer is to keep what runs).
    pub recommended_usd: f64,
    /// The fleet recommendation's saving on it ([`session_saving`]).
    pub savings_usd: f64,
    /// That saving in percent of its status quo.
    pub savings_pct: f64,
    /// The config the fleet's rule picks for this session alone.
    pub own_pick: OwnPick,
}

/// The policy the fleet's rule picks for one session on its own.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OwnPick {
    /// The config; the status quo's when keeping it is the answer.
    pub config: String,
    /// Whether the answer for this session is to keep what runs.
    pub keep_status_quo: bool,
    /// Its cost on the session, simulated, USD.
    pub cost_usd: f64,
    /// Its saving against the session's status quo, USD.
    pub savings_usd: f64,
    /// That saving in percent.
    pub savings_pct: f64,
}

/// Every session of `traces`, most expensive first (then by name), with
/// the fleet's recommendation `a` and each session's own pick.
fn per_session(
    traces: &[SessionSummary],
    candidates: &[Config],
    a: &GroupAnswer,
) -> Vec<SessionFigures> {
    let rec = (!a.keep_status_quo).then_some(a.recommended.config.as_str());
    let mut out: Vec<SessionFigures> = by_session(traces)
        .into_iter()
        .map(|(name, mut group)| {
            group.sort_by(|x, y| run_order(x, y));
            let (own, _) = answer(&group, candidates);
            let first = group[0];
            let status_quo_usd = own.status_quo.cost_usd;
            let savings_usd = session_saving(&group, rec);
            SessionFigures {
                session: name.to_owned(),
                project: first.project.clone(),
                first_prompt: first.first_prompt.clone(),
                started_ms: group.iter().filter_map(|t| t.started_ms).min(),
                ended_ms: group.iter().filter_map(|t| t.ended_ms).max(),
                traces: group.iter().map(|t| t.sweep.trace.clone()).collect(),
                calls: own.calls,
                recorded_calls: own.recorded_calls,
                recorded_cost_usd: own.recorded_cost_usd,
                status_quo_usd,
                recommended_usd: status_quo_usd - savings_usd,
                savings_usd,
                savings_pct: pct_of(savings_usd, status_quo_usd),
                own_pick: OwnPick {
                    config: own.recommended.config.clone(),
                    keep_status_quo: own.keep_status_quo,
                    cost_usd: own.recommended.cost_usd,
                    savings_usd: own.recommended.savings_usd,
                    savings_pct: own.recommended.savings_pct,
                },
            }
        })
        .collect();
    out.sort_by(|x, y| {
        y.status_quo_usd
            .total_cmp(&x.status_quo_usd)
            .then_with(|| x.session.cmp(&y.session))
    });
    out
}

/// A session's traces in reading order: the conversation itself (the trace
/// that bears the session's name) first, whatever ran before it (a
/// subagent's warm-up), then the others by first call (undated last), then
/// by name.
fn run_order(x: &SessionSummary, y: &SessionSummary) -> std::cmp::Ordering {
    let key = |t: &SessionSummary| {
        (
            t.sweep.trace != t.session,
            t.started_ms.is_none(),
            t.started_ms,
        )
    };
    key(x)
        .cmp(&key(y))
        .then_with(|| x.sweep.trace.cmp(&y.sweep.trace))
}

/// `part` in percent of `whole`; 0 when `whole` is not positive.
fn pct_of(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole * 100.0
    } else {
        0.0
    }
}

/// One project's answer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProjectAnswer {
    /// The project.
    pub project: String,
    /// Its answer.
    #[serde(flatten)]
    pub answer: GroupAnswer,
}

/// The answer for `sweeps` (a group of sessions). `candidates` are the
/// configs every session was replayed under.
fn answer(group: &[&SessionSummary], candidates: &[Config]) -> (GroupAnswer, Vec<FleetFigures>) {
    let sweeps: Vec<&TraceSweep> = group.iter().map(|s| &s.sweep).collect();
    let sessions = by_session(group.iter().copied()).len();
    let baselines: Vec<&SweepRow> = sweeps.iter().map(|s| &s.rows[s.baseline]).collect();
    let same_status_quo = baselines
        .windows(2)
        .all(|w| w[0].result.config == w[1].result.config);
    let status_quo_config = match (same_status_quo, baselines.first()) {
        (true, Some(b)) => Some(b.result.config.clone()),
        _ => None,
    };
    let mut status_quo = FleetFigures::empty(
        status_quo_config
            .as_ref()
            .map_or_else(|| MIXED_STATUS_QUO.to_owned(), ToString::to_string),
    );
    for b in &baselines {
        status_quo.add(b);
    }
    status_quo.against(status_quo.cost_usd);
    let mut configs: Vec<(Config, FleetFigures)> = candidates
        .iter()
        .map(|c| {
            let mut f = FleetFigures::empty(c.to_string());
            for s in &sweeps {
                match s.rows.iter().find(|r| r.result.config == *c) {
                    Some(r) => f.add(r),
                    // Skipped for this trace: what it pays now, so a config
                    // is never cheaper for having run on fewer sessions.
                    None => {
                        f.add(&s.rows[s.baseline]);
                        f.skipped_traces += 1;
                    }
                }
            }
            f.against(status_quo.cost_usd);
            f.no_effect = c.compaction != Compaction::Off && f.compacted_results == 0;
            (c.clone(), f)
        })
        .collect();
    // By cost; of exact ties the simpler policy first, as a sweep ranks
    // them and the recommendation breaks them.
    configs.sort_by(|a, b| {
        a.1.cost_usd
            .total_cmp(&b.1.cost_usd)
            .then_with(|| a.0.complexity().cmp(&b.0.complexity()))
            .then_with(|| a.1.config.cmp(&b.1.config))
    });
    // The lowest risk-adjusted cost among policies with an effect; a tie
    // goes to the status quo, then to the simpler policy, then by name.
    let best = configs
        .iter()
        .filter(|(_, f)| !f.no_effect)
        .min_by(|(ca, a), (cb, b)| {
            a.risk_adjusted_cost_usd
                .total_cmp(&b.risk_adjusted_cost_usd)
                .then_with(|| {
                    let key = |c: &Config| (Some(c) != status_quo_config.as_ref(), c.complexity());
                    key(ca).cmp(&key(cb))
                })
                .then_with(|| a.config.cmp(&b.config))
        });
    let (keep_status_quo, recommended, rec_config) = match best {
        Some((c, f))
            if f.risk_adjusted_cost_usd < status_quo.risk_adjusted_cost_usd
                && Some(c) != status_quo_config.as_ref() =>
        {
            (false, f.clone(), Some(c.clone()))
        }
        _ => (true, status_quo.clone(), None),
    };
    let rec_name = rec_config.as_ref().map(ToString::to_string);
    let mut per_session = savings_by_session(group.iter().copied(), rec_name.as_deref());
    per_session.sort_by(f64::total_cmp);
    let spread = SavingsSpread {
        p10_usd: quantile(&per_session, 10.0),
        median_usd: quantile(&per_session, 50.0),
        p90_usd: quantile(&per_session, 90.0),
        more_expensive: per_session.iter().filter(|s| **s < 0.0).count(),
    };
    let recorded: Vec<(f64, f64)> = baselines
        .iter()
        .filter_map(|b| {
            let t = &b.result.totals;
            Some((t.recorded_cost_usd?, t.cost_usd_recorded_calls?))
        })
        .collect();
    let skipped = configs_in_grid_order(candidates, &configs)
        .filter(|(_, f)| f.skipped_traces > 0)
        .map(|(c, f)| SkippedConfig {
            config: f.config.clone(),
            traces: f.skipped_traces,
            of: sweeps.len(),
            reason: skip_reason(c),
        })
        .collect();
    let calls = baselines.iter().map(|b| b.result.totals.calls).sum();
    let recorded_calls = baselines
        .iter()
        .map(|b| b.result.totals.recorded_calls)
        .sum();
    let recorded_cost_usd = (!recorded.is_empty()).then(|| recorded.iter().map(|r| r.0).sum());
    let headline = Headline::of(
        calls,
        recorded_calls,
        recorded_cost_usd,
        &status_quo,
        &recommended,
        keep_status_quo,
    );
    let break_even = BreakEven::of(
        &status_quo,
        &configs.iter().map(|(_, f)| f).collect::<Vec<_>>(),
        (!keep_status_quo).then_some(&recommended),
    );
    let answer = GroupAnswer {
        break_even,
        sessions,
        traces: sweeps.len(),
        calls,
        recorded_calls,
        recorded_cost_usd,
        status_quo_on_recorded_calls_usd: (!recorded.is_empty())
            .then(|| recorded.iter().map(|r| r.1).sum()),
        status_quo,
        recommended,
        keep_status_quo,
        spread,
        skipped,
        headline,
    };
    (answer, configs.into_iter().map(|(_, f)| f).collect())
}

/// `configs` (sorted by cost) in the order of `candidates`.
fn configs_in_grid_order<'a>(
    candidates: &'a [Config],
    configs: &'a [(Config, FleetFigures)],
) -> impl Iterator<Item = (&'a Config, &'a FleetFigures)> {
    candidates
        .iter()
        .filter_map(|c| configs.iter().find(|(k, _)| k == c))
        .map(|(c, f)| (c, f))
}

/// One day of the fleet: the calls that started that day (UTC).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DayFigures {
    /// `YYYY-MM-DD`, or [`UNDATED`].
    pub day: String,
    /// Sessions with a call that day (each once, however many of its
    /// traces ran).
    pub sessions: usize,
    /// Calls.
    pub calls: usize,
    /// What the provider billed for the calls that recorded usage.
    pub recorded_cost_usd: Option<f64>,
    /// The status quo simulated.
    pub status_quo_usd: f64,
    /// The fleet's recommendation simulated.
    pub recommended_usd: f64,
}

/// The fleet's figures scaled to a month at the rate the traces recorded.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PerMonth {
    /// First day with a call.
    pub first_day: String,
    /// Last day with a call.
    pub last_day: String,
    /// Calendar days from the first to the last, both counted.
    pub days: u64,
    /// What the recorded bill comes to per month.
    pub recorded_usd: Option<f64>,
    /// What the status quo comes to per month.
    pub status_quo_usd: f64,
    /// What the recommendation comes to per month.
    pub recommended_usd: f64,
    /// The saving per month.
    pub savings_usd: f64,
    /// The headline per month, on its basis.
    pub headline: Headline,
}

/// The fleet's answer over `sessions`. `configs` are the configs every
/// session was replayed under.
pub fn fleet(sessions: &[SessionSummary], configs: &[Config]) -> Fleet {
    let all: Vec<&SessionSummary> = sessions.iter().collect();
    let (answer_all, figures) = answer(&all, configs);
    // A session counts in one project, its first trace's: a subagent run
    // from another folder is still part of the session that ran it.
    let project_of = session_projects(sessions);
    let mut by_project: BTreeMap<&str, Vec<&SessionSummary>> = BTreeMap::new();
    for s in sessions {
        by_project
            .entry(project_of[s.session.as_str()])
            .or_default()
            .push(s);
    }
    let projects = if by_project.len() > 1 {
        by_project
            .into_iter()
            .map(|(p, ss)| ProjectAnswer {
                project: p.to_owned(),
                answer: answer(&ss, configs).0,
            })
            .collect()
    } else {
        Vec::new()
    };
    let days = days(sessions, &answer_all);
    let per_month = per_month(&days, &answer_all);
    Fleet {
        per_session: per_session(sessions, configs, &answer_all),
        answer: answer_all,
        configs: figures,
        projects,
        days,
        per_month,
        stability: None,
        fidelity: fidelity(sessions),
    }
}

/// Each session's project: the conversation's own (its first trace in
/// reading order), or [`NO_PROJECT`].
pub fn session_projects(traces: &[SessionSummary]) -> BTreeMap<&str, &str> {
    by_session(traces)
        .into_iter()
        .map(|(name, group)| {
            let first = group
                .iter()
                .min_by(|x, y| run_order(x, y))
                .and_then(|t| t.project.as_deref());
            (name, first.unwrap_or(NO_PROJECT))
        })
        .collect()
}

/// The project of sessions whose source names none.
pub const NO_PROJECT: &str = "(no project)";

/// The fleet per day, under its status quo and its recommendation.
fn days(sessions: &[SessionSummary], a: &GroupAnswer) -> Vec<DayFigures> {
    let mut out: BTreeMap<&str, DayFigures> = BTreeMap::new();
    let mut seen: BTreeMap<&str, std::collections::BTreeSet<&str>> = BTreeMap::new();
    for s in sessions {
        let base = s.sweep.baseline;
        let rec = if a.keep_status_quo {
            base
        } else {
            s.sweep
                .rows
                .iter()
                .position(|r| r.result.config.to_string() == a.recommended.config)
                .unwrap_or(base)
        };
        for d in &s.days {
            let f = out.entry(&d.day).or_insert_with(|| DayFigures {
                day: d.day.clone(),
                sessions: 0,
                calls: 0,
                recorded_cost_usd: None,
                status_quo_usd: 0.0,
                recommended_usd: 0.0,
            });
            // A session counts once a day, however many of its traces ran.
            if seen.entry(&d.day).or_default().insert(&s.session) {
                f.sessions += 1;
            }
            f.calls += d.calls;
            if let Some(r) = d.recorded_cost_usd {
                *f.recorded_cost_usd.get_or_insert(0.0) += r;
            }
            f.status_quo_usd += d.cost_usd[base];
            f.recommended_usd += d.cost_usd[rec];
        }
    }
    out.into_values().collect()
}

/// The fidelity of each trace's status quo, when any recorded usage.
fn fidelity(sessions: &[SessionSummary]) -> Option<super::fidelity::FidelitySummary> {
    let per_trace: Vec<super::fidelity::TraceFidelity> = sessions
        .iter()
        .filter_map(|s| super::fidelity::TraceFidelity::of_result(&s.status_quo().result))
        .collect();
    (!per_trace.is_empty()).then(|| super::fidelity::FidelitySummary::of(&per_trace))
}

/// Days since the Unix epoch of a `YYYY-MM-DD` day.
fn epoch_day(day: &str) -> Option<i64> {
    let mut it = day.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, d) = (it.next()??, it.next()??, it.next()??);
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// The fleet's figures per month, when its calls are dated: the totals
/// scaled by an average month over the calendar days the calls span.
fn per_month(days: &[DayFigures], a: &GroupAnswer) -> Option<PerMonth> {
    let dated: Vec<&DayFigures> = days.iter().filter(|d| d.day != UNDATED).collect();
    let (first, last) = (dated.first()?, dated.last()?);
    let span = (epoch_day(&last.day)? - epoch_day(&first.day)? + 1).max(1) as u64;
    let scale = DAYS_PER_MONTH / span as f64;
    Some(PerMonth {
        first_day: first.day.clone(),
        last_day: last.day.clone(),
        days: span,
        recorded_usd: a.recorded_cost_usd.map(|r| r * scale),
        status_quo_usd: a.status_quo.cost_usd * scale,
        recommended_usd: a.recommended.cost_usd * scale,
        savings_usd: a.recommended.savings_usd * scale,
        headline: a.headline.scaled(scale),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_days_round_trip_through_dates() {
        for d in [0i64, 1, 59, 365, 10_957, 20_000, 20_454] {
            let day = date_of(d as u64 * 86_400_000);
            assert_eq!(epoch_day(&day), Some(d), "{day}");
        }
        assert_eq!(epoch_day("undated"), None);
    }
}

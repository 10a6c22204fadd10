//! The answer for a group of sessions: per config, the fleet's cost and
//! saving against what it pays now ([`FleetFigures`], [`GroupAnswer`]), how
//! the saving spreads over sessions, and the recall price at which the
//! answer changes ([`BreakEven`]).

use std::collections::BTreeSet;

use serde::Serialize;

use tracecost_policy::{Compaction, Config};
use tracecost_replay::recall_risk::{Evidence, Observed, Range};
use tracecost_replay::sweep::{Applicability, SweepRow};

use super::config::FleetConfig;
use super::summary::{SessionSummary, savings_by_session};

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

/// One config's figures summed over a set of sessions.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FleetFigures {
    /// The config, or [`FleetConfig::Mixed`] for a status quo that differs
    /// between sessions.
    pub config: FleetConfig,
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
    /// Compacted results the record shows were needed again (the mid
    /// estimate of [`RecallFigures::needs`]).
    pub recall_needs: f64,
    /// The recall risk as a range, with its evidence.
    pub recall: RecallFigures,
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
    /// Calls a summarising compaction added, over every session (counted
    /// in `cost_usd` too).
    #[serde(skip_serializing_if = "is_zero")]
    pub summary_calls: usize,
    /// What those calls cost, USD.
    #[serde(skip_serializing_if = "is_nothing")]
    pub summary_cost_usd: f64,
    /// Traces the config could not apply to (a `recorded` cache policy on a
    /// trace that recorded no markers): they count at their status quo, so
    /// the config is compared with the others on every session and saves
    /// only where it ran.
    #[serde(skip_serializing_if = "is_zero")]
    pub skipped_traces: usize,
    /// What one recall round trip costs summed over the calls, and the
    /// calls: the fleet prices its summed needs at their quotient (see
    /// `price_recalls`).
    #[serde(skip)]
    round_trips: (f64, usize),
}

/// The recall risk of a config summed over sessions: needs and what they
/// cost as a range, and the evidence by kind.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct RecallFigures {
    /// Compacted results needed again, low / mid / high.
    pub needs: Range,
    /// What recalling them costs, USD: one more round trip each and the
    /// recalled text.
    pub cost_usd: Range,
    /// Of `cost_usd`, what the trace's content shows (no allowance for a
    /// base rate is added: the two are equal).
    pub evidence_cost_usd: Range,
    /// Results showing each kind of evidence.
    pub evidence: Evidence,
    /// Of `needs`, what is charged at the recall rates observed where the
    /// ledger ran (the same at every bound).
    pub observed_needs: f64,
}

impl RecallFigures {
    fn add(&mut self, r: &SweepRow) {
        let add = |a: Range, b: Range| Range {
            low: a.low + b.low,
            mid: a.mid + b.mid,
            high: a.high + b.high,
        };
        self.needs = add(self.needs, r.risk.needs);
        self.cost_usd = add(self.cost_usd, r.recall_cost_usd);
        self.evidence_cost_usd = self.cost_usd;
        let e = &mut self.evidence;
        e.refetch += r.risk.evidence.refetch;
        e.copied_lines += r.risk.evidence.copied_lines;
        e.identifiers += r.risk.evidence.identifiers;
        self.observed_needs += r.risk.observed_needs;
    }
}

/// The config each recall assumption would recommend (`None`: keep what
/// runs), so a reader sees whether the answer holds across the range.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ByRecall {
    /// With the strictest evidence only.
    pub low: Option<Config>,
    /// With the calibrated estimate (the recommendation).
    pub mid: Option<Config>,
    /// With every signal.
    pub high: Option<Config>,
}

/// A config of the grid that some traces were not replayed under, because
/// it cannot apply to them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkippedConfig {
    /// The config.
    pub config: Config,
    /// Traces it was skipped for.
    pub traces: usize,
    /// Traces of the group.
    pub of: usize,
    /// Why, in words.
    pub reason: String,
}

/// The grid's configs that do not apply to some of the traces checked,
/// and to how many (a sweep skips them there), in the grid's order.
pub fn skipped_configs(applicability: &Applicability) -> Vec<SkippedConfig> {
    applicability
        .grid()
        .iter()
        .enumerate()
        .filter_map(|(c, config)| {
            let n = applicability.refused(c);
            (n > 0).then(|| SkippedConfig {
                config: config.clone(),
                traces: n,
                of: applicability.traces(),
                reason: skip_reason(config),
            })
        })
        .collect()
}

/// Why `config` cannot apply to a trace that was not replayed under it.
pub(super) fn skip_reason(config: &Config) -> String {
    match (&config.cache, &config.compaction) {
        (tracecost_policy::Cache::Recorded, _) => "they recorded no cache markers to replay".into(),
        (tracecost_policy::Cache::OpenAiAuto { .. }, _) => {
            "OpenAI's automatic cache, and their provider is another".into()
        }
        (tracecost_policy::Cache::GeminiImplicit { .. }, _) => {
            "Gemini's implicit cache, and their provider is another".into()
        }
        (tracecost_policy::Cache::GeminiExplicit, _) => {
            "Gemini's cached contents, and their provider or model is another".into()
        }
        (tracecost_policy::Cache::OpenAiBreakpoints { .. }, _) => {
            "OpenAI's breakpoints, and their provider or model is another".into()
        }
        (tracecost_policy::Cache::BedrockCachePoint { .. }, _) => {
            "Bedrock Converse's cache points, and their provider is another".into()
        }
        (_, Compaction::ClearToolUses(_)) => {
            "an Anthropic API feature, and their provider is another".into()
        }
        _ => "their provider does not accept its cache markers".into(),
    }
}

impl FleetFigures {
    fn empty(config: FleetConfig) -> Self {
        FleetFigures {
            config,
            cost_usd: 0.0,
            risk_adjusted_cost_usd: 0.0,
            recall_tokens_usd: 0.0,
            savings_usd: 0.0,
            savings_pct: 0.0,
            compacted_results: 0,
            recall_needs: 0.0,
            recall: RecallFigures::default(),
            input_tokens: 0,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
            output_tokens: 0,
            no_effect: false,
            over_window_calls: 0,
            summary_calls: 0,
            summary_cost_usd: 0.0,
            skipped_traces: 0,
            round_trips: (0.0, 0),
        }
    }

    /// Adds one trace's row; `recall_cost_usd` is the price of a round trip
    /// its sweep was given (`None`: the row's average call).
    fn add(&mut self, r: &SweepRow, recall_cost_usd: Option<f64>) {
        let t = &r.result.totals;
        self.round_trips.0 += recall_cost_usd.map_or(t.cost_usd, |p| p * t.calls as f64);
        self.round_trips.1 += t.calls;
        self.cost_usd += t.cost_usd;
        self.recall_tokens_usd += r.recall_tokens_usd;
        self.compacted_results += t.compacted_results;
        self.recall.add(r);
        self.input_tokens += t.usage.input_tokens;
        self.cache_creation_input_tokens += t.usage.cache_creation_input_tokens;
        self.cache_read_input_tokens += t.usage.cache_read_input_tokens;
        self.output_tokens += t.usage.output_tokens;
        self.over_window_calls += t.over_window_calls;
        self.summary_calls += t.summary_calls;
        self.summary_cost_usd += t.summary_cost_usd;
    }

    /// The priced recalls of the sums: an excess over coincidence summed
    /// over traces is cut at zero here, once (see `RecallRisk::needs`).
    ///
    /// The mid is priced after the sum, at the fleet's price of a round
    /// trip: each trace's signed excess priced at its own average call and
    /// then summed can leave needs above zero priced at nothing (a trace
    /// whose chance is taken off dearer than the ones that show needs),
    /// and a reader would see results needed again that cost nothing.
    fn price_recalls(&mut self) {
        let r = &mut self.recall;
        let cut = |x: Range| Range {
            low: x.low.max(0.0),
            mid: x.mid.max(0.0),
            high: x.high.max(0.0),
        };
        // Each bound at least the one below it: the mid adds identifiers'
        // excess to the copied lines', and that excess may be below zero.
        let ordered = |x: Range| Range {
            low: x.low,
            mid: x.mid.max(x.low),
            high: x.high.max(x.mid.max(x.low)),
        };
        r.needs = ordered(cut(r.needs));
        // The recalled text's part of the mid may come out below zero,
        // where chance is taken off in a bucket of large results: it is
        // priced at no less than nothing, as the turns are, so that the
        // recommendation and its break-even price one and the same figure.
        let tokens_usd = self.recall_tokens_usd.max(0.0);
        let (trips_usd, calls) = self.round_trips;
        let per_trip = if calls > 0 {
            trips_usd / calls as f64
        } else {
            0.0
        };
        r.cost_usd.mid = r.needs.mid * per_trip + tokens_usd;
        r.cost_usd = ordered(cut(r.cost_usd));
        r.evidence_cost_usd = r.cost_usd;
        self.recall_needs = r.needs.mid;
        self.recall_tokens_usd = tokens_usd.min(r.cost_usd.mid);
        self.risk_adjusted_cost_usd = self.cost_usd + r.cost_usd.mid;
    }

    fn against(&mut self, status_quo_usd: f64) {
        self.price_recalls();
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
    /// The config each recall assumption (low / mid / high needs) would
    /// recommend; `null` keeps what runs.
    pub recommendation_by_recall: ByRecall,
    /// Where the ledger ran, the recalls its records show, summed over
    /// traces (charged in place of the estimate for those traces).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recall_observed: Option<Observed>,
}

/// How the answer depends on the price of a recall: with every recall-risk
/// turn priced at one price `P` (`--recall-cost`), a config costs its
/// simulated cost, plus its recalled text, plus `P` per turn; against the
/// status quo that is a line in `P`, and this is where it crosses.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakEven {
    /// The config that beats the status quo up to the highest recall price
    /// (the recommendation's own, when one is recommended).
    pub config: FleetConfig,
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
            let extra_turns = f.recall_needs - status_quo.recall_needs;
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
            priced_now_usd: if f.recall_needs > 0.0 && turns_usd > 1e-9 {
                turns_usd / f.recall_needs
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

/// The answer for `group` (a group of sessions, all in memory).
/// `candidates` are the configs every session was replayed under.
pub(super) fn answer(
    group: &[&SessionSummary],
    candidates: &[Config],
) -> (GroupAnswer, Vec<FleetFigures>) {
    let mut sum = AnswerSum::new(candidates);
    for s in group {
        sum.add(s, &candidate_rows(s, candidates));
    }
    let rec = sum.pick();
    let per_session = savings_by_session(group.iter().copied(), rec.as_ref());
    sum.finish(per_session)
}

/// A group's answer summed one trace at a time, so that a fleet's traces
/// need not be in memory together: [`AnswerSum::add`] each trace (in the
/// plan's order: sums of floats depend on it), [`AnswerSum::pick`] the
/// recommendation, then [`AnswerSum::finish`] with what it saves on each
/// session.
pub(super) struct AnswerSum<'c> {
    candidates: &'c [Config],
    /// Distinct sessions seen.
    sessions: BTreeSet<String>,
    traces: usize,
    calls: usize,
    recorded_calls: usize,
    /// The status quo's config, while every trace seen shares it.
    status_quo_config: Option<Config>,
    same_status_quo: bool,
    status_quo: FleetFigures,
    /// Per candidate, in the candidates' order.
    configs: Vec<FleetFigures>,
    /// Per trace that recorded usage: what it was billed, and its status
    /// quo simulated on the same calls.
    recorded: Vec<(f64, f64)>,
    /// Set by [`AnswerSum::pick`].
    picked: Option<Picked>,
    /// The recalls observed where the ledger ran.
    observed: Option<Observed>,
}

/// The configs sorted and the recommendation made.
struct Picked {
    configs: Vec<(Config, FleetFigures)>,
    keep_status_quo: bool,
    recommended: FleetFigures,
    /// The recommendation's config, unless keeping what runs.
    rec_config: Option<Config>,
    /// What each recall assumption would recommend.
    by_recall: ByRecall,
}

/// The config to recommend when a config costs `cost` (its simulated cost
/// plus its priced recalls): the lowest among policies with an effect, a
/// tie going to the status quo, then to the simpler policy, then by name;
/// `None` when that is the status quo or no cheaper than it.
fn best<'a>(
    configs: &'a [(Config, FleetFigures)],
    status_quo: &FleetFigures,
    status_quo_config: Option<&Config>,
    cost: &dyn Fn(&FleetFigures) -> f64,
) -> Option<&'a (Config, FleetFigures)> {
    configs
        .iter()
        .filter(|(_, f)| !f.no_effect)
        .min_by(|(ca, a), (cb, b)| {
            cost(a)
                .total_cmp(&cost(b))
                .then_with(|| {
                    let key = |c: &Config| (Some(c) != status_quo_config, c.complexity());
                    key(ca).cmp(&key(cb))
                })
                .then_with(|| ca.to_string().cmp(&cb.to_string()))
        })
        .filter(|(c, f)| cost(f) < cost(status_quo) && Some(c) != status_quo_config)
}

impl<'c> AnswerSum<'c> {
    /// An empty group.
    pub(super) fn new(candidates: &'c [Config]) -> Self {
        AnswerSum {
            candidates,
            sessions: BTreeSet::new(),
            traces: 0,
            calls: 0,
            recorded_calls: 0,
            status_quo_config: None,
            same_status_quo: true,
            status_quo: FleetFigures::empty(FleetConfig::Mixed),
            configs: candidates
                .iter()
                .map(|c| FleetFigures::empty(FleetConfig::One(c.clone())))
                .collect(),
            recorded: Vec::new(),
            picked: None,
            observed: None,
        }
    }

    /// Adds one trace's summary; `rows` are its [`candidate_rows`].
    pub(super) fn add(&mut self, s: &SessionSummary, rows: &[Option<usize>]) {
        let sweep = &s.sweep;
        let b = &sweep.rows[sweep.baseline];
        if !self.sessions.contains(&s.session) {
            self.sessions.insert(s.session.clone());
        }
        if self.traces == 0 {
            self.status_quo_config = Some(b.result.config.clone());
        } else if self.status_quo_config.as_ref() != Some(&b.result.config) {
            self.same_status_quo = false;
        }
        self.traces += 1;
        if let Some(o) = &sweep.observed_recall {
            self.observed.get_or_insert_with(Observed::default).add(o);
        }
        self.status_quo.add(b, sweep.recall_cost_usd);
        for (f, row) in self.configs.iter_mut().zip(rows) {
            match row.map(|k| &sweep.rows[k]) {
                Some(r) => f.add(r, sweep.recall_cost_usd),
                // Skipped for this trace: what it pays now, so a config
                // is never cheaper for having run on fewer sessions.
                None => {
                    f.add(b, sweep.recall_cost_usd);
                    f.skipped_traces += 1;
                }
            }
        }
        let t = &b.result.totals;
        if let (Some(rec), Some(sim)) = (t.recorded_cost_usd, t.cost_usd_recorded_calls) {
            self.recorded.push((rec, sim));
        }
        self.calls += t.calls;
        self.recorded_calls += t.recorded_calls;
    }

    /// The status quo every trace shares, if they share one.
    fn shared_status_quo(&self) -> Option<&Config> {
        self.status_quo_config
            .as_ref()
            .filter(|_| self.same_status_quo)
    }

    /// Sorts the configs and makes the recommendation: its config, or
    /// `None` when the answer is to keep what runs. Once: a second call
    /// gives the same.
    pub(super) fn pick(&mut self) -> Option<Config> {
        if self.picked.is_none() {
            let picked = self.decide();
            self.picked = Some(picked);
        }
        self.picked.as_ref().and_then(|p| p.rec_config.clone())
    }

    /// The config of the figures a reader is shown ([`shown`]), once the
    /// recommendation is made ([`Self::pick`]); `None` when there is none,
    /// or the status quos differ.
    pub(super) fn shown_config(&mut self) -> Option<Config> {
        self.pick();
        let p = self.picked.as_ref()?;
        let configs = p.configs.iter().map(|(_, f)| f);
        shown(p.keep_status_quo, &p.recommended, &self.status_quo, configs)
            .and_then(|f| f.config.config().cloned())
    }

    /// The configs sorted and the recommendation made (the candidates'
    /// sums are taken: called once, by [`Self::pick`] or [`Self::finish`]).
    fn decide(&mut self) -> Picked {
        let status_quo_config = self.shared_status_quo().cloned();
        self.status_quo.config = status_quo_config
            .clone()
            .map_or(FleetConfig::Mixed, FleetConfig::One);
        self.status_quo.against(self.status_quo.cost_usd);
        let status_quo = &self.status_quo;
        let mut configs: Vec<(Config, FleetFigures)> = self
            .candidates
            .iter()
            .cloned()
            .zip(std::mem::take(&mut self.configs))
            .map(|(c, mut f)| {
                f.against(status_quo.cost_usd);
                f.no_effect = c.compaction != Compaction::Off && f.compacted_results == 0;
                (c, f)
            })
            .collect();
        // By cost; of exact ties the simpler policy first, as a sweep ranks
        // them and the recommendation breaks them.
        configs.sort_by(|a, b| {
            a.1.cost_usd
                .total_cmp(&b.1.cost_usd)
                .then_with(|| a.0.complexity().cmp(&b.0.complexity()))
                .then_with(|| a.0.to_string().cmp(&b.0.to_string()))
        });
        let sq = status_quo_config.as_ref();
        let best = |cost: &dyn Fn(&FleetFigures) -> f64| best(&configs, status_quo, sq, cost);
        let by_recall = ByRecall {
            low: best(&|f| f.cost_usd + f.recall.cost_usd.low).map(|(c, _)| c.clone()),
            mid: best(&|f| f.risk_adjusted_cost_usd).map(|(c, _)| c.clone()),
            high: best(&|f| f.cost_usd + f.recall.cost_usd.high).map(|(c, _)| c.clone()),
        };
        let (keep_status_quo, recommended, rec_config) = match best(&|f| f.risk_adjusted_cost_usd) {
            Some((c, f)) => (false, f.clone(), Some(c.clone())),
            None => (true, status_quo.clone(), None),
        };
        Picked {
            configs,
            keep_status_quo,
            recommended,
            rec_config,
            by_recall,
        }
    }

    /// The answer, given what the recommendation saves on each session of
    /// the group ([`savings_by_session`], in any order).
    pub(super) fn finish(mut self, mut per_session: Vec<f64>) -> (GroupAnswer, Vec<FleetFigures>) {
        let Picked {
            configs,
            keep_status_quo,
            recommended,
            by_recall,
            ..
        } = match self.picked.take() {
            Some(p) => p,
            None => self.decide(),
        };
        let candidates = self.candidates;
        let status_quo = self.status_quo;
        per_session.sort_by(f64::total_cmp);
        let spread = SavingsSpread {
            p10_usd: quantile(&per_session, 10.0),
            median_usd: quantile(&per_session, 50.0),
            p90_usd: quantile(&per_session, 90.0),
            more_expensive: per_session.iter().filter(|s| **s < 0.0).count(),
        };
        let recorded = self.recorded;
        let skipped = configs_in_grid_order(candidates, &configs)
            .filter(|(_, f)| f.skipped_traces > 0)
            .map(|(c, f)| SkippedConfig {
                config: c.clone(),
                traces: f.skipped_traces,
                of: self.traces,
                reason: skip_reason(c),
            })
            .collect();
        let recorded_cost_usd = (!recorded.is_empty()).then(|| recorded.iter().map(|r| r.0).sum());
        let headline = Headline::of(
            self.calls,
            self.recorded_calls,
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
            sessions: self.sessions.len(),
            traces: self.traces,
            calls: self.calls,
            recorded_calls: self.recorded_calls,
            recorded_cost_usd,
            status_quo_on_recorded_calls_usd: (!recorded.is_empty())
                .then(|| recorded.iter().map(|r| r.1).sum()),
            status_quo,
            recommended,
            keep_status_quo,
            spread,
            skipped,
            headline,
            recommendation_by_recall: by_recall,
            recall_observed: self.observed.clone(),
        };
        (answer, configs.into_iter().map(|(_, f)| f).collect())
    }
}

/// The figures whose per-session savings a reader is shown: the
/// recommendation's, or when keeping the status quo is the answer, those
/// of the cheapest config with an effect that costs less than the status
/// quo (what a reader weighing the recall risk would look at). `configs`
/// cheapest first.
pub(super) fn shown<'a>(
    keep_status_quo: bool,
    recommended: &'a FleetFigures,
    status_quo: &FleetFigures,
    mut configs: impl Iterator<Item = &'a FleetFigures>,
) -> Option<&'a FleetFigures> {
    if !keep_status_quo {
        return Some(recommended);
    }
    configs.find(|c| !c.no_effect && c.cost_usd < status_quo.cost_usd)
}

/// Per candidate config, the row of `s`'s sweep that replayed it (`None`:
/// skipped for this trace), found once for every sum a trace adds to.
impl GroupAnswer {
    /// The place among `candidates` of the recommendation, when it is to
    /// change something (`None`: keep the status quo).
    pub(super) fn recommended_candidate(&self, candidates: &[Config]) -> Option<usize> {
        self.recommended
            .config
            .config()
            .filter(|_| !self.keep_status_quo)
            .and_then(|c| candidates.iter().position(|k| k == c))
    }
}

pub(super) fn candidate_rows(s: &SessionSummary, candidates: &[Config]) -> Vec<Option<usize>> {
    candidates
        .iter()
        .map(|c| s.sweep.rows.iter().position(|r| r.result.config == *c))
        .collect()
}

/// `configs` (sorted by cost) in the order of `candidates`.
pub(super) fn configs_in_grid_order<'a>(
    candidates: &'a [Config],
    configs: &'a [(Config, FleetFigures)],
) -> impl Iterator<Item = (&'a Config, &'a FleetFigures)> {
    candidates
        .iter()
        .filter_map(|c| configs.iter().find(|(k, _)| k == c))
        .map(|(c, f)| (c, f))
}

fn is_nothing(usd: &f64) -> bool {
    *usd == 0.0
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

//! Claude Code's recorded usage per day or per month, in ccusage's shapes:
//! ccusage 20.0.24's `ccusage claude daily --json` and `monthly --json`
//! (`{"daily": [...], "totals": {...}}`, each entry's keys by name, the
//! days in order, a day's models in the order first seen and their
//! breakdowns by cost, highest first).
//!
//! Days are UTC days (ccusage's `--timezone UTC`). Each response is priced
//! on its own at the price in force on its day, as the session view prices
//! it ([`crate::usage::response_costs`]), so a period's cost is the sum of
//! its responses' and the periods add up to the sessions' total.

use std::collections::BTreeMap;

use serde::Serialize;
use serde::ser::SerializeMap;

use crate::usage::{ModelBreakdown, UsageReport, UsageTotals, date_of, response_costs};
pub use crate::usage_days::{DayRange, UsagePeriod};
use tracecost_cost::pricing::Pricing;
use tracecost_import::claude_code::{TokenSums, UsageScan};

/// One day's or month's usage (ccusage's `daily` or `monthly` entry).
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodRow {
    /// Its key's name (`date` or `month`).
    key: &'static str,
    /// The day or month.
    pub period: String,
    /// Cache writes.
    pub cache_creation_tokens: u64,
    /// Cache reads.
    pub cache_read_tokens: u64,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Per model, by cost, highest first.
    pub model_breakdowns: Vec<ModelBreakdown>,
    /// Models in the order first seen.
    pub models_used: Vec<String>,
    /// Output tokens.
    pub output_tokens: u64,
    /// USD of its priced models (`0` when none is priced, as ccusage).
    pub total_cost: f64,
    /// All four token counts.
    pub total_tokens: u64,
}

impl Serialize for PeriodRow {
    // By key name, as ccusage writes them: `month` sorts between
    // `modelsUsed` and `outputTokens`, `date` after `cacheReadTokens`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(9))?;
        m.serialize_entry("cacheCreationTokens", &self.cache_creation_tokens)?;
        m.serialize_entry("cacheReadTokens", &self.cache_read_tokens)?;
        if self.key == "date" {
            m.serialize_entry("date", &self.period)?;
        }
        m.serialize_entry("inputTokens", &self.input_tokens)?;
        m.serialize_entry("modelBreakdowns", &self.model_breakdowns)?;
        m.serialize_entry("modelsUsed", &self.models_used)?;
        if self.key == "month" {
            m.serialize_entry("month", &self.period)?;
        }
        m.serialize_entry("outputTokens", &self.output_tokens)?;
        m.serialize_entry("totalCost", &self.total_cost)?;
        m.serialize_entry("totalTokens", &self.total_tokens)?;
        m.end()
    }
}

/// The usage per period, with totals.
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodReport {
    /// How it is grouped.
    pub period: UsagePeriod,
    /// In period order.
    pub rows: Vec<PeriodRow>,
    /// Over every row.
    pub totals: UsageTotals,
    /// Calls of models the price table does not know.
    pub unpriced: crate::unpriced::Unpriced,
    /// Codex's periods, when the data is Codex's (then `rows` is empty):
    /// ccusage's Codex report has a shape of its own.
    pub codex: Option<crate::usage_period_codex::CodexPeriods>,
}

impl Serialize for PeriodReport {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if let Some(codex) = &self.codex {
            return codex.serialize(s);
        }
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry(self.period.list_key(), &self.rows)?;
        m.serialize_entry("totals", &self.totals)?;
        m.end()
    }
}

/// Scans the plan's paths and groups their responses by `period`: Claude
/// Code's as ccusage's `daily`/`monthly` gives them, Codex's as its Codex
/// report does (a shape of its own, priced per model and day on the day's
/// sums). The two are not mixed in one list, as ccusage does not: a run
/// over both is refused with a word saying so.
pub fn run(
    plan: &crate::UsagePlan,
    period: UsagePeriod,
    range: &DayRange,
) -> Result<PeriodReport, crate::AppError> {
    let (claude, codex) = crate::usage::scan(plan)?;
    match (claude.sessions.first(), codex.sessions.first()) {
        (Some(c), Some(x)) => Err(crate::AppError::Usage(format!(
            "`usage {}` reads Claude Code's data or Codex's, not both at once (Claude Code's project {} and {}): pass them apart",
            period.list_key(),
            c.project_path,
            x.file.display()
        ))),
        (None, Some(_)) => {
            let mut unpriced = crate::unpriced::Unpriced::default();
            let codex = crate::usage_period_codex::by_period(
                &codex,
                &plan.pricing,
                period,
                range,
                &mut unpriced,
            );
            Ok(PeriodReport {
                period,
                rows: Vec::new(),
                totals: UsageTotals::default(),
                unpriced,
                codex: Some(codex),
            })
        }
        _ => Ok(by_period(&claude, &plan.pricing, period, range)),
    }
}

/// The sessions of `report` last active on a day of `range` (all of them
/// without bounds), the totals summed again over those.
pub fn sessions_within(mut report: UsageReport, range: &DayRange) -> UsageReport {
    if range.since.is_some() || range.until.is_some() {
        report.sessions.retain(|s| {
            s.last_activity
                .get(..10)
                .is_some_and(|day| range.holds(day))
        });
        report.totals = UsageTotals::of(&report.sessions);
    }
    report
}

/// One period's sums while they are read.
#[derive(Default)]
struct PeriodAcc {
    /// Per model: its tokens and cost (`None`: not priced).
    models: BTreeMap<String, (TokenSums, Option<f64>)>,
    /// Models in the order first seen.
    seen: Vec<String>,
}

/// `scan`'s responses grouped by `period`, those of days outside `range`
/// left out.
pub fn by_period(
    scan: &UsageScan,
    pricing: &Pricing,
    period: UsagePeriod,
    range: &DayRange,
) -> PeriodReport {
    let mut unpriced = crate::unpriced::Unpriced::default();
    let mut periods: BTreeMap<String, PeriodAcc> = BTreeMap::new();
    for s in &scan.sessions {
        for m in &s.models {
            let costs = response_costs(m, pricing);
            let mut counted = 0u64;
            for (i, tokens) in m.responses.iter().enumerate() {
                let Some(ms) = m.response_ms.get(i).copied() else {
                    continue;
                };
                let day = date_of(ms);
                if !range.holds(&day) {
                    continue;
                }
                counted += 1;
                let acc = periods.entry(period.of_day(&day)).or_default();
                if !acc.seen.contains(&m.model) {
                    acc.seen.push(m.model.clone());
                }
                let (sums, cost) = acc.models.entry(m.model.clone()).or_default();
                sums.add(tokens);
                if let Some(c) = costs.as_ref().and_then(|c| c.get(i)) {
                    *cost = Some(cost.unwrap_or(0.0) + c);
                }
            }
            if costs.is_none() && counted > 0 {
                unpriced.add(&m.model, &s.session_id, counted);
            }
        }
    }
    let mut totals = UsageTotals::default();
    let rows = periods
        .into_iter()
        .map(|(p, acc)| {
            let mut row = PeriodRow {
                key: period.entry_key(),
                period: p,
                cache_creation_tokens: 0,
                cache_read_tokens: 0,
                input_tokens: 0,
                model_breakdowns: Vec::new(),
                models_used: acc.seen,
                output_tokens: 0,
                total_cost: 0.0,
                total_tokens: 0,
            };
            for (model, (t, cost)) in acc.models {
                let cc = t.cache_creation_5m + t.cache_creation_1h;
                row.input_tokens += t.input;
                row.output_tokens += t.output;
                row.cache_creation_tokens += cc;
                row.cache_read_tokens += t.cache_read;
                row.total_cost += cost.unwrap_or(0.0);
                row.model_breakdowns.push(ModelBreakdown {
                    cache_creation_tokens: cc,
                    cache_read_tokens: t.cache_read,
                    cost,
                    input_tokens: t.input,
                    model_name: model,
                    output_tokens: t.output,
                });
            }
            row.total_tokens = row.input_tokens
                + row.output_tokens
                + row.cache_creation_tokens
                + row.cache_read_tokens;
            // Stable: models of equal cost keep their order by id.
            row.model_breakdowns
                .sort_by(|a, b| b.cost.unwrap_or(0.0).total_cmp(&a.cost.unwrap_or(0.0)));
            totals.input_tokens += row.input_tokens;
            totals.output_tokens += row.output_tokens;
            totals.cache_creation_tokens += row.cache_creation_tokens;
            totals.cache_read_tokens += row.cache_read_tokens;
            totals.total_tokens += row.total_tokens;
            totals.total_cost += row.total_cost;
            row
        })
        .collect();
    PeriodReport {
        period,
        rows,
        totals,
        unpriced,
        codex: None,
    }
}

//! Codex CLI's recorded usage per day or per month, in ccusage 20.0.24's
//! shapes: `ccusage codex daily --json` and `monthly --json`
//! (`{"daily": [...], "totals": {...}}`, each entry's keys by name, its
//! models by id).
//!
//! A period's cost is each model's, priced as the session view prices a
//! Codex session ([`crate::usage::codex_model_cost`]: per UTC day, on the
//! day's sums): the calls of every session on that model in the period,
//! priced together, as ccusage sums a day before pricing it.

use std::collections::BTreeMap;

use serde::Serialize;
use serde::ser::SerializeMap;

use crate::usage::{CodexModelRow, CodexTotals, codex_model_cost, date_of};
use crate::usage_days::{DayRange, UsagePeriod};
use tracecost_cost::pricing::Pricing;
use tracecost_import::codex::{CodexModelUsage, CodexTokens, CodexUsageScan};

/// One Codex day's or month's usage (ccusage's Codex `daily` or `monthly`
/// entry).
#[derive(Debug, Clone, PartialEq)]
pub struct CodexPeriodRow {
    /// Its key's name (`date` or `month`).
    key: &'static str,
    /// The day or month.
    pub period: String,
    /// The sums over its models.
    pub totals: CodexTotals,
    /// Per model, by id.
    pub models: BTreeMap<String, CodexModelRow>,
}

impl Serialize for CodexPeriodRow {
    // By key name, as ccusage writes them.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let t = &self.totals;
        let mut m = s.serialize_map(Some(9))?;
        m.serialize_entry("cacheCreationTokens", &t.cache_creation_tokens)?;
        m.serialize_entry("cacheReadTokens", &t.cache_read_tokens)?;
        m.serialize_entry("costUSD", &t.cost_usd)?;
        if self.key == "date" {
            m.serialize_entry("date", &self.period)?;
        }
        m.serialize_entry("inputTokens", &t.input_tokens)?;
        m.serialize_entry("models", &self.models)?;
        if self.key == "month" {
            m.serialize_entry("month", &self.period)?;
        }
        m.serialize_entry("outputTokens", &t.output_tokens)?;
        m.serialize_entry("reasoningOutputTokens", &t.reasoning_output_tokens)?;
        m.serialize_entry("totalTokens", &t.total_tokens)?;
        m.end()
    }
}

/// Codex's usage per period, with totals (ccusage's Codex shape).
#[derive(Debug, Clone, PartialEq)]
pub struct CodexPeriods {
    /// How it is grouped.
    pub period: UsagePeriod,
    /// In period order.
    pub rows: Vec<CodexPeriodRow>,
    /// Over every row, summed in period order.
    pub totals: CodexTotals,
}

impl Serialize for CodexPeriods {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry(self.period.list_key(), &self.rows)?;
        m.serialize_entry("totals", &self.totals)?;
        m.end()
    }
}

/// `scan`'s calls grouped by `period` and model, those of days outside
/// `range` left out; a model the price table does not know is counted in
/// `unpriced` and costs nothing in the sums (as ccusage's rows give it).
pub fn by_period(
    scan: &CodexUsageScan,
    pricing: &Pricing,
    period: UsagePeriod,
    range: &DayRange,
    unpriced: &mut crate::unpriced::Unpriced,
) -> CodexPeriods {
    // Per period, per model: the calls of every session, as one model's
    // usage, so it is priced as a session's is.
    let mut periods: BTreeMap<String, BTreeMap<String, CodexModelUsage>> = BTreeMap::new();
    for s in &scan.sessions {
        for m in &s.models {
            let mut counted = 0u64;
            for c in &m.calls {
                let day = date_of(c.at_ms);
                if !range.holds(&day) {
                    continue;
                }
                counted += 1;
                let u = periods
                    .entry(period.of_day(&day))
                    .or_default()
                    .entry(m.model.clone())
                    .or_insert_with(|| CodexModelUsage {
                        model: m.model.clone(),
                        is_fallback: m.is_fallback,
                        tokens: CodexTokens::default(),
                        calls: Vec::new(),
                    });
                u.tokens.add(&c.tokens);
                u.calls.push(*c);
            }
            if counted > 0 && pricing.lookup(&m.model).is_err() {
                unpriced.add(&m.model, &s.session_id, counted);
            }
        }
    }
    let mut totals = CodexTotals::default();
    let rows = periods
        .into_iter()
        .map(|(p, models)| {
            let mut t = CodexTotals::default();
            let mut rows = BTreeMap::new();
            for (name, u) in models {
                let k = &u.tokens;
                t.input_tokens += k.uncached();
                t.cache_read_tokens += k.cached;
                t.output_tokens += k.output;
                t.reasoning_output_tokens += k.reasoning;
                t.total_tokens += k.total;
                t.cost_usd += codex_model_cost(&u, pricing).unwrap_or(0.0);
                rows.insert(
                    name,
                    CodexModelRow {
                        cache_creation_tokens: 0,
                        cache_read_tokens: k.cached,
                        input_tokens: k.uncached(),
                        is_fallback: u.is_fallback,
                        output_tokens: k.output,
                        reasoning_output_tokens: k.reasoning,
                        total_tokens: k.total,
                    },
                );
            }
            totals.input_tokens += t.input_tokens;
            totals.cache_read_tokens += t.cache_read_tokens;
            totals.output_tokens += t.output_tokens;
            totals.reasoning_output_tokens += t.reasoning_output_tokens;
            totals.total_tokens += t.total_tokens;
            totals.cost_usd += t.cost_usd;
            CodexPeriodRow {
                key: period.entry_key(),
                period: p,
                totals: t,
                models: rows,
            }
        })
        .collect();
    CodexPeriods {
        period,
        rows,
        totals,
    }
}

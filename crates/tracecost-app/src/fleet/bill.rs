//! What the fleet's bill is made of, under the status quo and the
//! recommendation: per model, per billing class, and the cache writes by
//! cause. Summed one trace at a time (in the plan's order) before the
//! recommendation is known, for every candidate config, as the days are
//! ([`super::days::DaySum`]); [`BillSum::finish`] keeps the
//! recommendation's.

use std::collections::BTreeMap;

use serde::Serialize;

use super::answer::GroupAnswer;
use super::summary::SessionSummary;
use tracecost_policy::Config;
use tracecost_replay::breakdown::{Breakdown, ClassBill};

/// One model's share of the fleet's bill.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelFigures {
    /// The model priced.
    pub model: String,
    /// What the provider billed, over the calls that recorded usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<ClassBill>,
    /// The status quo simulated.
    pub status_quo: ClassBill,
    /// The fleet's recommendation simulated.
    pub recommended: ClassBill,
}

/// The fleet's bill by billing class (every model summed).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClassFigures {
    /// What the provider billed, over the calls that recorded usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<ClassBill>,
    /// The status quo simulated.
    pub status_quo: ClassBill,
    /// The fleet's recommendation simulated.
    pub recommended: ClassBill,
}

/// The cache writes of one cause
/// ([`tracecost_replay::breakdown`] says how a write is split).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CauseFigures {
    /// The cause (`first_call`, `ttl_expired`, `compacted`, `new_content`…).
    pub cause: String,
    /// Tokens written under the status quo.
    pub status_quo_tokens: u64,
    /// Their price, USD.
    pub status_quo_usd: f64,
    /// Tokens written under the recommendation.
    pub recommended_tokens: u64,
    /// Their price, USD.
    pub recommended_usd: f64,
}

/// Per model or cause: the status quo's sum, each candidate's, and what
/// was recorded.
struct Sums<T> {
    recorded: Option<T>,
    status_quo: T,
    config: Vec<T>,
}

/// The fleet's bill summed one trace at a time.
pub(super) struct BillSum<'c> {
    candidates: &'c [Config],
    models: BTreeMap<String, Sums<ClassBill>>,
    causes: BTreeMap<String, Sums<(u64, f64)>>,
}

impl<'c> BillSum<'c> {
    /// Nothing summed yet.
    pub(super) fn new(candidates: &'c [Config]) -> Self {
        BillSum {
            candidates,
            models: BTreeMap::new(),
            causes: BTreeMap::new(),
        }
    }

    /// Adds one trace's bill; `rows` are its candidate rows
    /// ([`super::answer::candidate_rows`]; a trace not replayed under a
    /// candidate adds its status quo there).
    pub(super) fn add(&mut self, s: &SessionSummary, rows: &[Option<usize>]) {
        let base = s.sweep.baseline;
        let Some(status_quo) = s.breakdowns.get(base) else {
            return;
        };
        let n = self.candidates.len();
        let of = |row: Option<usize>| s.breakdowns.get(row.unwrap_or(base)).unwrap_or(status_quo);
        for m in &status_quo.by_model {
            let sums = model_sums(&mut self.models, &m.model, n);
            sums.status_quo.add(&m.simulated);
            if let Some(r) = &m.recorded {
                sums.recorded.get_or_insert_with(ClassBill::default).add(r);
            }
        }
        for c in &status_quo.writes_by_cause {
            let sums = cause_sums(&mut self.causes, &c.cause, n);
            sums.status_quo.0 += c.tokens;
            sums.status_quo.1 += c.usd;
        }
        for (k, &row) in rows.iter().enumerate() {
            let b: &Breakdown = of(row);
            for m in &b.by_model {
                model_sums(&mut self.models, &m.model, n).config[k].add(&m.simulated);
            }
            for c in &b.writes_by_cause {
                let sums = cause_sums(&mut self.causes, &c.cause, n);
                sums.config[k].0 += c.tokens;
                sums.config[k].1 += c.usd;
            }
        }
    }

    /// Per model (by name), per class, and per cause (by name), under the
    /// status quo and the answer `a`'s recommendation.
    pub(super) fn finish(
        self,
        a: &GroupAnswer,
    ) -> (Vec<ModelFigures>, ClassFigures, Vec<CauseFigures>) {
        let rec = a.recommended_candidate(self.candidates);
        let mut classes = ClassFigures::default();
        let models: Vec<ModelFigures> = self
            .models
            .into_iter()
            .map(|(model, s)| {
                let recommended = rec.map_or(s.status_quo, |k| s.config[k]);
                classes.status_quo.add(&s.status_quo);
                classes.recommended.add(&recommended);
                if let Some(r) = &s.recorded {
                    classes
                        .recorded
                        .get_or_insert_with(ClassBill::default)
                        .add(r);
                }
                ModelFigures {
                    model,
                    recorded: s.recorded,
                    status_quo: s.status_quo,
                    recommended,
                }
            })
            .collect();
        // A cause only another candidate met is none of these two's.
        let causes = self
            .causes
            .into_iter()
            .filter(|(_, s)| {
                let recommended = rec.map_or(s.status_quo, |k| s.config[k]);
                s.status_quo.0 > 0 || recommended.0 > 0
            })
            .map(|(cause, s)| {
                let recommended = rec.map_or(s.status_quo, |k| s.config[k]);
                CauseFigures {
                    cause,
                    status_quo_tokens: s.status_quo.0,
                    status_quo_usd: s.status_quo.1,
                    recommended_tokens: recommended.0,
                    recommended_usd: recommended.1,
                }
            })
            .collect();
        (models, classes, causes)
    }
}

/// `name`'s sums among `models`, made empty for `n` candidates if new.
fn model_sums<'m>(
    models: &'m mut BTreeMap<String, Sums<ClassBill>>,
    name: &str,
    n: usize,
) -> &'m mut Sums<ClassBill> {
    models.entry(name.to_owned()).or_insert_with(|| Sums {
        recorded: None,
        status_quo: ClassBill::default(),
        config: vec![ClassBill::default(); n],
    })
}

/// `name`'s sums among `causes`, made empty for `n` candidates if new.
fn cause_sums<'m>(
    causes: &'m mut BTreeMap<String, Sums<(u64, f64)>>,
    name: &str,
    n: usize,
) -> &'m mut Sums<(u64, f64)> {
    causes.entry(name.to_owned()).or_insert_with(|| Sums {
        recorded: None,
        status_quo: (0, 0.0),
        config: vec![(0, 0.0); n],
    })
}

//! What a replay's bill is made of: per model, the tokens and dollars of
//! each billing class (uncached input, cache writes, cache reads, output),
//! simulated and recorded; and the cache writes summed by their cause.
//!
//! Summed as each config's calls are priced (the per-class dollars exist
//! only there: a call keeps its total), so a report can answer "which
//! model, which class, and where do our cache writes come from" without
//! holding more per call.
//!
//! A call's write is split in two. What it writes again of a prefix the
//! call before left in the cache (that call's read plus its write, less
//! what this one read) goes to the call's cause ([`CacheCause::name`]:
//! the first call, an expired entry, a compaction or clearing, a changed
//! tool or system block…); the rest is new content appended to the
//! conversation ([`NEW_CONTENT`]), the write a cache costs when it works.
//! When nothing usable was cached before (the first call, a new model,
//! nothing cached), the whole write is the cause's.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::explain::CacheCause;
use tracecost_cost::pricing::{CostBreakdown, Usage};

/// The cause of a write that only appends to what the cache held.
pub const NEW_CONTENT: &str = "new_content";

/// Tokens and dollars of each billing class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassBill {
    /// Calls summed.
    pub calls: usize,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Cache write tokens (every lifetime).
    pub cache_write_tokens: u64,
    /// Cache read tokens.
    pub cache_read_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Uncached input, USD.
    pub input_usd: f64,
    /// Cache writes, USD.
    pub cache_write_usd: f64,
    /// Cache reads, USD.
    pub cache_read_usd: f64,
    /// Output, USD.
    pub output_usd: f64,
}

impl ClassBill {
    /// One call of `usage`, priced by `cost` times `scale` (the call's
    /// price modifiers, as its total is).
    pub fn of_call(usage: &Usage, cost: &CostBreakdown, scale: f64) -> Self {
        ClassBill {
            calls: 1,
            input_tokens: usage.input_tokens,
            cache_write_tokens: usage.write_5m() + usage.write_1h(),
            cache_read_tokens: usage.cache_read_input_tokens,
            output_tokens: usage.output_tokens,
            input_usd: cost.input * scale,
            cache_write_usd: (cost.write_5m + cost.write_1h) * scale,
            cache_read_usd: cost.read * scale,
            output_usd: cost.output * scale,
        }
    }

    /// Adds `o`'s figures to these.
    pub fn add(&mut self, o: &ClassBill) {
        self.calls += o.calls;
        self.input_tokens += o.input_tokens;
        self.cache_write_tokens += o.cache_write_tokens;
        self.cache_read_tokens += o.cache_read_tokens;
        self.output_tokens += o.output_tokens;
        self.input_usd += o.input_usd;
        self.cache_write_usd += o.cache_write_usd;
        self.cache_read_usd += o.cache_read_usd;
        self.output_usd += o.output_usd;
    }

    /// The four classes' dollars summed.
    pub fn cost_usd(&self) -> f64 {
        self.input_usd + self.cache_write_usd + self.cache_read_usd + self.output_usd
    }
}

/// One model's share of a bill.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelBill {
    /// The model priced.
    pub model: String,
    /// As simulated.
    pub simulated: ClassBill,
    /// As recorded, over the calls that recorded their usage.
    pub recorded: Option<ClassBill>,
}

/// Cache writes of one cause.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CauseWrites {
    /// [`CacheCause::name`], or [`NEW_CONTENT`].
    pub cause: String,
    /// Tokens written.
    pub tokens: u64,
    /// Their price, USD.
    pub usd: f64,
}

/// A replay's bill by model and class, and its cache writes by cause.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Breakdown {
    /// Per model, by name.
    pub by_model: Vec<ModelBill>,
    /// Per cause, by name.
    pub writes_by_cause: Vec<CauseWrites>,
}

/// A [`Breakdown`] summed one call at a time, in call order.
#[derive(Default)]
pub(crate) struct BreakdownSum {
    models: BTreeMap<Arc<str>, (ClassBill, Option<ClassBill>)>,
    causes: BTreeMap<&'static str, (u64, f64)>,
    /// What the call before left in the cache: its read and its write.
    cached_before: u64,
}

/// One priced call, as [`BreakdownSum::add`] reads it.
pub(crate) struct PricedCall<'a> {
    pub model: &'a Arc<str>,
    pub simulated: ClassBill,
    pub recorded: Option<ClassBill>,
    pub cause: Option<&'a CacheCause>,
}

impl BreakdownSum {
    pub(crate) fn add(&mut self, c: PricedCall<'_>) {
        let (sim, rec) = self.models.entry(c.model.clone()).or_default();
        sim.add(&c.simulated);
        if let Some(r) = &c.recorded {
            rec.get_or_insert_with(ClassBill::default).add(r);
        }
        let s = &c.simulated;
        let written = s.cache_write_tokens;
        let again = match c.cause {
            None => 0,
            Some(
                CacheCause::FirstCall | CacheCause::ModelChanged | CacheCause::NothingCachedBefore,
            ) => written,
            Some(_) => written.min(self.cached_before.saturating_sub(s.cache_read_tokens)),
        };
        if written > 0 {
            let usd_per_token = s.cache_write_usd / written as f64;
            let mut put = |cause: &'static str, tokens: u64| {
                if tokens > 0 {
                    let e = self.causes.entry(cause).or_default();
                    e.0 += tokens;
                    e.1 += tokens as f64 * usd_per_token;
                }
            };
            if let Some(cause) = c.cause {
                put(cause.name(), again);
            }
            put(NEW_CONTENT, written - again);
        }
        self.cached_before = s.cache_read_tokens + written;
    }

    pub(crate) fn finish(self) -> Breakdown {
        Breakdown {
            by_model: self
                .models
                .into_iter()
                .map(|(model, (simulated, recorded))| ModelBill {
                    model: model.to_string(),
                    simulated,
                    recorded,
                })
                .collect(),
            writes_by_cause: self
                .causes
                .into_iter()
                .map(|(cause, (tokens, usd))| CauseWrites {
                    cause: cause.to_owned(),
                    tokens,
                    usd,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(read: u64, write: u64) -> ClassBill {
        ClassBill {
            calls: 1,
            input_tokens: 10,
            cache_write_tokens: write,
            cache_read_tokens: read,
            output_tokens: 5,
            input_usd: 0.1,
            cache_write_usd: write as f64 * 0.01,
            cache_read_usd: read as f64 * 0.001,
            output_usd: 0.5,
        }
    }

    fn cause_tokens(b: &Breakdown) -> Vec<(&str, u64)> {
        b.writes_by_cause
            .iter()
            .map(|c| (c.cause.as_str(), c.tokens))
            .collect()
    }

    #[test]
    fn a_write_again_goes_to_its_cause_and_the_rest_is_new_content() {
        let m: Arc<str> = Arc::from("m");
        let mut s = BreakdownSum::default();
        let mut add = |read, write, cause: Option<CacheCause>| {
            s.add(PricedCall {
                model: &m,
                simulated: call(read, write),
                recorded: None,
                cause: cause.as_ref(),
            })
        };
        // First call: all of its 1,000 is the first call's.
        add(0, 1_000, Some(CacheCause::FirstCall));
        // The cache works: 200 appended.
        add(1_000, 200, None);
        // Expired after a gap: the 1,200 held are written again, 300 new.
        add(
            0,
            1_500,
            Some(CacheCause::TtlExpired {
                gap_ms: 600_000,
                ttl: tracecost_cost::cache_sim::CacheHold::from_ms(300_000),
            }),
        );
        // A compaction inside the prefix: 1,500 cached, 900 read, so 600
        // again; 100 new.
        add(
            900,
            700,
            Some(CacheCause::Compacted {
                block: 3,
                message: 2,
            }),
        );
        let b = s.finish();
        assert_eq!(
            cause_tokens(&b),
            [
                ("compacted", 600),
                ("first_call", 1_000),
                ("new_content", 600),
                ("ttl_expired", 1_200)
            ]
        );
        let written: u64 = b.writes_by_cause.iter().map(|c| c.tokens).sum();
        assert_eq!(written, 3_400);
        let usd: f64 = b.writes_by_cause.iter().map(|c| c.usd).sum();
        assert!((usd - 34.0).abs() < 1e-9, "{usd}");
        assert_eq!(b.by_model.len(), 1);
        assert_eq!(b.by_model[0].simulated.calls, 4);
        assert_eq!(b.by_model[0].simulated.cache_write_tokens, 3_400);
        assert_eq!(b.by_model[0].recorded, None);
    }

    #[test]
    fn models_are_kept_apart_and_recorded_only_where_recorded() {
        let (a, z): (Arc<str>, Arc<str>) = (Arc::from("a"), Arc::from("z"));
        let mut s = BreakdownSum::default();
        s.add(PricedCall {
            model: &z,
            simulated: call(0, 0),
            recorded: Some(call(0, 0)),
            cause: None,
        });
        s.add(PricedCall {
            model: &a,
            simulated: call(0, 0),
            recorded: None,
            cause: None,
        });
        s.add(PricedCall {
            model: &z,
            simulated: call(0, 0),
            recorded: None,
            cause: None,
        });
        let b = s.finish();
        let names: Vec<&str> = b.by_model.iter().map(|m| m.model.as_str()).collect();
        assert_eq!(names, ["a", "z"]);
        assert_eq!(b.by_model[1].simulated.calls, 2);
        assert_eq!(b.by_model[1].recorded.map(|r| r.calls), Some(1));
        assert_eq!(b.by_model[0].recorded, None);
        assert!((b.by_model[1].simulated.cost_usd() - 1.2).abs() < 1e-12);
    }
}

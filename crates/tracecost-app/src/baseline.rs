//! The baseline file of `check` (`tracecost.baseline/v1`): (trace, config)
//! pairs with their expected figures, and how a new figure compares.

use serde::{Deserialize, Serialize};

use tracecost_replay::Totals;

/// Version tag of baseline files.
pub const BASELINE_FORMAT: &str = "tracecost.baseline/v1";

/// Default tolerance, in percent of the expected cost.
pub const DEFAULT_TOLERANCE_PCT: f64 = 0.1;

/// The settings every entry is replayed with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineSettings {
    /// Tokenizer spec.
    #[serde(default = "default_tokenizer")]
    pub tokenizer: String,
    /// Calibration on (`auto`) or `off`.
    #[serde(default = "default_calibrate")]
    pub calibrate: String,
    /// Batch discount.
    #[serde(default)]
    pub batch: bool,
}

fn default_tokenizer() -> String {
    "o200k_base".into()
}

fn default_calibrate() -> String {
    "auto".into()
}

impl Default for BaselineSettings {
    fn default() -> Self {
        Self {
            tokenizer: default_tokenizer(),
            calibrate: default_calibrate(),
            batch: false,
        }
    }
}

/// What one (trace, config) is expected to cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expected {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Cache writes.
    pub cache_creation_input_tokens: u64,
    /// Cache reads.
    pub cache_read_input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Dollars.
    pub cost_usd: f64,
}

impl Expected {
    /// The expected figures of replay totals.
    pub fn of(t: &Totals) -> Self {
        Self {
            input_tokens: t.usage.input_tokens,
            cache_creation_input_tokens: t.usage.cache_creation_input_tokens,
            cache_read_input_tokens: t.usage.cache_read_input_tokens,
            output_tokens: t.usage.output_tokens,
            cost_usd: t.cost_usd,
        }
    }

    /// Input tokens of every billing class together.
    pub fn total_input(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }
}

/// One baseline entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineEntry {
    /// Trace file, relative to the baseline file's directory.
    pub trace: String,
    /// Trace name within the file (when it holds several).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Config string.
    pub config: String,
    /// Expected figures (absent until `--update` fills them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected: Option<Expected>,
}

/// A baseline file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// `tracecost.baseline/v1`.
    pub format: String,
    /// Replay settings.
    #[serde(default)]
    pub settings: BaselineSettings,
    /// Tolerance in percent when the command line gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance_pct: Option<f64>,
    /// Entries.
    pub entries: Vec<BaselineEntry>,
}

impl Baseline {
    /// Canonical JSON (one entry per line group, stable field order).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// How one entry compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Within tolerance.
    Same,
    /// Costs more than the tolerance allows.
    Regression,
    /// Costs less than the tolerance expects: update the baseline.
    Improvement,
}

/// One compared entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Trace label.
    pub trace: String,
    /// Config.
    pub config: String,
    /// Expected.
    pub before: Expected,
    /// Measured.
    pub after: Expected,
    /// Verdict.
    pub verdict: Verdict,
}

impl Comparison {
    /// Compares measured figures with the expected ones. A cost or total
    /// input beyond `tolerance_pct` above the expectation is a regression;
    /// beyond it below, an improvement.
    pub fn new(
        trace: String,
        config: String,
        before: Expected,
        after: Expected,
        tolerance_pct: f64,
    ) -> Self {
        let rel = |a: f64, b: f64| {
            if b == 0.0 {
                if a == 0.0 {
                    0.0
                } else {
                    f64::INFINITY * a.signum()
                }
            } else {
                (a - b) / b * 100.0
            }
        };
        let cost = rel(after.cost_usd, before.cost_usd);
        let tokens = rel(after.total_input() as f64, before.total_input() as f64);
        let verdict = if cost > tolerance_pct || tokens > tolerance_pct {
            Verdict::Regression
        } else if cost < -tolerance_pct || tokens < -tolerance_pct {
            Verdict::Improvement
        } else {
            Verdict::Same
        };
        Self {
            trace,
            config,
            before,
            after,
            verdict,
        }
    }

    /// After − before, in dollars.
    pub fn delta_usd(&self) -> f64 {
        self.after.cost_usd - self.before.cost_usd
    }

    /// After − before, in percent of before.
    pub fn delta_pct(&self) -> f64 {
        if self.before.cost_usd == 0.0 {
            0.0
        } else {
            self.delta_usd() / self.before.cost_usd * 100.0
        }
    }
}

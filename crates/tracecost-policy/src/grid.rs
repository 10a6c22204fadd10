//! A sweep's grid as a user states it: compaction and cache policies by
//! name (or as full config parts), the ledger's thresholds and keep-last
//! values, one TTL. Expanded into the policies to replay.
//!
//! A cache policy named without a TTL takes the one given; with none given,
//! the TTL each call recorded when the traces' status quo takes it from the
//! record ([`TtlChoice::Recorded`]), so a counterfactual changes only what
//! the user asked to change; else the default.

use super::flags::FlagError;
use super::kinds::{CacheKind, CompactionKind, DEFAULT_TTL, one_of};
use super::{Cache, Compaction, Config, TtlChoice};

/// Ledger thresholds a sweep tries when none are given.
pub const DEFAULT_GRID_THRESHOLDS: [u64; 3] = [2000, 8000, 32000];
/// Ledger keep-last values a sweep tries when none are given.
pub const DEFAULT_GRID_KEEP_LASTS: [usize; 3] = [1, 2, 4];
/// Cache policies a sweep tries when none are given.
pub const DEFAULT_GRID_CACHES: [CacheKind; 4] = [
    CacheKind::None,
    CacheKind::System,
    CacheKind::Native,
    CacheKind::Tail,
];

/// The grid of a sweep, each part `None` when not given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GridSpec {
    /// Compaction policies: a name (`ledger` expands over thresholds ×
    /// keep-last values) or a full part such as `clear-tool-uses:trigger=50000`.
    /// Default: every policy [`CompactionKind::in_default_grid`].
    pub compactions: Option<Vec<String>>,
    /// Ledger thresholds in characters.
    pub thresholds: Option<Vec<u64>>,
    /// Ledger keep-last values.
    pub keep_lasts: Option<Vec<usize>>,
    /// Cache policies: a name or a full part such as `tail:ttl=1h`.
    pub caches: Option<Vec<String>>,
    /// TTL for the cache policies given without one.
    pub ttl: Option<TtlChoice>,
}

impl GridSpec {
    /// The compaction names, defaults filled in.
    pub fn compaction_names(&self) -> Vec<String> {
        self.compactions.clone().unwrap_or_else(|| {
            CompactionKind::ALL
                .iter()
                .filter(|k| k.in_default_grid())
                .map(|k| k.name().to_owned())
                .collect()
        })
    }

    /// The cache names, defaults filled in.
    pub fn cache_names(&self) -> Vec<String> {
        self.caches.clone().unwrap_or_else(|| {
            DEFAULT_GRID_CACHES
                .iter()
                .map(|k| k.name().to_owned())
                .collect()
        })
    }

    /// The thresholds, defaults filled in.
    pub fn threshold_list(&self) -> Vec<u64> {
        self.thresholds
            .clone()
            .unwrap_or(DEFAULT_GRID_THRESHOLDS.to_vec())
    }

    /// The keep-last values, defaults filled in.
    pub fn keep_last_list(&self) -> Vec<usize> {
        self.keep_lasts
            .clone()
            .unwrap_or(DEFAULT_GRID_KEEP_LASTS.to_vec())
    }

    /// The TTL, default filled in, for traces that do not record theirs.
    pub fn ttl_or_default(&self) -> TtlChoice {
        self.ttl_for(false)
    }

    /// The TTL of the cache policies named without one: the one given,
    /// else the recorded one when `recorded` (the status quo takes its TTL
    /// from the record), else the default.
    pub fn ttl_for(&self, recorded: bool) -> TtlChoice {
        match self.ttl {
            Some(t) => t,
            None if recorded => TtlChoice::Recorded,
            None => TtlChoice::Fixed(DEFAULT_TTL),
        }
    }

    /// The compaction and cache policies of the grid. A ledger option with
    /// no bare `ledger` to expand, or a TTL with no cache policy to take it,
    /// is an error: it would otherwise be dropped.
    pub fn expand(&self) -> Result<(Vec<Compaction>, Vec<Cache>), FlagError> {
        self.expand_for(false)
    }

    /// [`GridSpec::expand`], the cache policies named without a TTL taking
    /// [`GridSpec::ttl_for`]`(recorded)`.
    pub fn expand_for(&self, recorded: bool) -> Result<(Vec<Compaction>, Vec<Cache>), FlagError> {
        let bad = |e: super::ConfigError| FlagError(e.to_string());
        let mut compactions = Vec::new();
        let mut expands_ledger = false;
        for spec in self.compaction_names() {
            let spec = spec.trim();
            if spec == CompactionKind::Ledger.name() {
                expands_ledger = true;
                for t in self.threshold_list() {
                    for k in self.keep_last_list() {
                        compactions.push(Compaction::Ledger {
                            threshold: t,
                            keep_last: k,
                        });
                    }
                }
            } else {
                let c = format!("{spec}+{}", CacheKind::None.name())
                    .parse::<Config>()
                    .map_err(bad)?;
                compactions.push(c.compaction);
            }
        }
        if !expands_ledger {
            for (given, name) in [
                (self.thresholds.is_some(), "--threshold"),
                (self.keep_lasts.is_some(), "--keep-last"),
            ] {
                if given {
                    return Err(FlagError(format!(
                        "{name} applies to the ledger, and --compaction does not list a bare `ledger`; add it"
                    )));
                }
            }
        }
        let mut caches = Vec::new();
        let mut takes_ttl = false;
        for spec in self.cache_names() {
            let spec = spec.trim();
            let full = match CacheKind::from_name(spec) {
                Some(k) if k.has_ttl() => {
                    takes_ttl = true;
                    format!("{spec}:ttl={}", self.ttl_for(recorded))
                }
                _ => spec.to_owned(),
            };
            let c = format!("{}+{full}", CompactionKind::Off.name())
                .parse::<Config>()
                .map_err(bad)?;
            caches.push(c.cache);
        }
        if self.ttl.is_some() && !takes_ttl {
            return Err(FlagError(format!(
                "--ttl applies to cache policies given by name ({}), and --cache lists none of them",
                one_of(&CacheKind::with_ttl_names())
            )));
        }
        Ok((compactions, caches))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_engine::wire::Ttl;

    fn strings(g: &GridSpec) -> Result<(Vec<String>, Vec<String>), String> {
        g.expand()
            .map(|(c, k)| {
                (
                    c.iter().map(|c| c.to_string()).collect(),
                    k.iter().map(|c| c.to_string()).collect(),
                )
            })
            .map_err(|e| e.0)
    }

    #[test]
    fn the_default_grid() {
        let (c, k) = strings(&GridSpec::default()).unwrap();
        assert_eq!(c.len(), 1 + 9 + 3);
        assert_eq!(
            c.last().map(String::as_str),
            Some("claude-code-clear:keep-tokens=40000,at-least=20000")
        );
        assert_eq!(c[1], "ledger:t=2000,k=1");
        assert_eq!(
            k,
            [
                "none",
                "system:ttl=5m",
                "native:manifest=cached,ttl=5m",
                "tail:ttl=5m"
            ]
        );
    }

    #[test]
    fn the_grid_keeps_a_recorded_ttl_unless_told_otherwise() {
        let names = |g: &GridSpec, recorded: bool| -> Vec<String> {
            g.expand_for(recorded)
                .unwrap()
                .1
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        assert_eq!(
            names(&GridSpec::default(), true),
            [
                "none",
                "system:ttl=recorded",
                "native:manifest=cached,ttl=recorded",
                "tail:ttl=recorded"
            ]
        );
        let g = GridSpec {
            caches: Some(vec!["tail".into(), "system:ttl=5m".into()]),
            ttl: Some(Ttl::OneHour.into()),
            ..Default::default()
        };
        assert_eq!(names(&g, true), ["tail:ttl=1h", "system:ttl=5m"]);
        let g = GridSpec {
            caches: Some(vec!["tail".into()]),
            ttl: Some(TtlChoice::Recorded),
            ..Default::default()
        };
        assert_eq!(names(&g, false), ["tail:ttl=recorded"]);
    }

    #[test]
    fn options_that_would_be_dropped_are_errors() {
        let g = GridSpec {
            compactions: Some(vec!["off".into()]),
            thresholds: Some(vec![4000]),
            ..Default::default()
        };
        assert_eq!(
            strings(&g).unwrap_err(),
            "--threshold applies to the ledger, and --compaction does not list a bare `ledger`; add it"
        );
        let g = GridSpec {
            caches: Some(vec!["none".into(), "tail:ttl=5m".into()]),
            ttl: Some(Ttl::OneHour.into()),
            ..Default::default()
        };
        assert!(strings(&g).unwrap_err().starts_with("--ttl applies"));
        let g = GridSpec {
            caches: Some(vec!["tail".into(), "system:ttl=5m".into()]),
            ttl: Some(Ttl::OneHour.into()),
            ..Default::default()
        };
        assert_eq!(strings(&g).unwrap().1, ["tail:ttl=1h", "system:ttl=5m"]);
    }
}

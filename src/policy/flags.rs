//! Policy options given one by one (flags on a command line, keyword
//! arguments in a binding), resolved into one [`Config`].
//!
//! An option is never dropped: it applies to the chosen policy, or it
//! implies the one policy it belongs to (and the resolution says so), or it
//! is an error that names what to add.

use super::kinds::{CacheKind, CompactionKind, one_of};
use super::peers::{ClearToolUses, LangchainClear, PeerParams};
use super::{
    Cache, Compaction, Config, DEFAULT_LEDGER_KEEP_LAST, DEFAULT_LEDGER_THRESHOLD,
    DEFAULT_MANIFEST, DEFAULT_TTL, TtlChoice,
};
use crate::engine::cache::ManifestPosition;

/// The options of one policy choice, each `None` when not given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyFlags {
    /// `--compaction`.
    pub compaction: Option<CompactionKind>,
    /// `--threshold` (ledger).
    pub threshold: Option<u64>,
    /// `--keep-last` (ledger).
    pub keep_last: Option<usize>,
    /// `--trigger` (peers).
    pub trigger: Option<u64>,
    /// `--keep` (peers).
    pub keep: Option<usize>,
    /// `--clear-at-least` (peers).
    pub clear_at_least: Option<u64>,
    /// `--exclude-tool` (peers, repeatable).
    pub exclude_tools: Vec<String>,
    /// `--clear-tool-inputs` (peers).
    pub clear_tool_inputs: bool,
    /// `--cache`.
    pub cache: Option<CacheKind>,
    /// `--ttl` (cache policies that place markers).
    pub ttl: Option<TtlChoice>,
    /// `--manifest` (native cache).
    pub manifest: Option<ManifestPosition>,
}

/// A policy an option implied because the option belongs to it alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Implied {
    /// The option given (`--threshold`).
    pub option: &'static str,
    /// What it implied (`--compaction ledger`).
    pub implies: String,
}

impl std::fmt::Display for Implied {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} implies {}", self.option, self.implies)
    }
}

/// The config the options describe, and what they implied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPolicy {
    /// The config.
    pub config: Config,
    /// Policies chosen by implication, in option order.
    pub implied: Vec<Implied>,
}

/// An option that does not apply to the policy chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FlagError(pub String);

impl PolicyFlags {
    /// The options given, by name, that belong to the ledger.
    fn ledger_options(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.threshold.is_some() {
            v.push("--threshold");
        }
        if self.keep_last.is_some() {
            v.push("--keep-last");
        }
        v
    }

    fn peer_options(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        if self.trigger.is_some() {
            v.push("--trigger");
        }
        if self.keep.is_some() {
            v.push("--keep");
        }
        if self.clear_at_least.is_some() {
            v.push("--clear-at-least");
        }
        if !self.exclude_tools.is_empty() {
            v.push("--exclude-tool");
        }
        if self.clear_tool_inputs {
            v.push("--clear-tool-inputs");
        }
        v
    }

    /// Resolves the options. `default_cache` is the cache policy when none
    /// is given and none is implied (it depends on the trace: recorded
    /// markers when it has them).
    pub fn resolve(&self, default_cache: CacheKind) -> Result<ResolvedPolicy, FlagError> {
        let mut implied = Vec::new();
        let ledger_opts = self.ledger_options();
        let peer_opts = self.peer_options();
        let peers: Vec<&str> = CompactionKind::ALL
            .into_iter()
            .filter(|k| k.is_peer())
            .map(CompactionKind::name)
            .collect();
        let compaction_kind = match self.compaction {
            Some(k) => {
                if k != CompactionKind::Ledger
                    && let Some(o) = ledger_opts.first()
                {
                    return Err(FlagError(format!(
                        "{o} applies only to --compaction ledger, not to --compaction {}",
                        k.name()
                    )));
                }
                if !k.is_peer()
                    && let Some(o) = peer_opts.first()
                {
                    return Err(FlagError(format!(
                        "{o} applies only to --compaction {}, not to --compaction {}",
                        one_of(&peers),
                        k.name()
                    )));
                }
                k
            }
            None => match (ledger_opts.first(), peer_opts.first()) {
                (Some(l), Some(p)) => {
                    return Err(FlagError(format!(
                        "{l} (ledger) and {p} ({}) belong to different compaction policies; choose one with --compaction",
                        one_of(&peers)
                    )));
                }
                (Some(l), None) => {
                    implied.push(Implied {
                        option: l,
                        implies: format!("--compaction {}", CompactionKind::Ledger.name()),
                    });
                    CompactionKind::Ledger
                }
                (None, Some(p)) => {
                    return Err(FlagError(format!(
                        "{p} applies to --compaction {}; add one of them",
                        one_of(&peers)
                    )));
                }
                (None, None) => CompactionKind::Off,
            },
        };
        let compaction = match compaction_kind {
            CompactionKind::Off => Compaction::Off,
            CompactionKind::Recorded => Compaction::Recorded,
            CompactionKind::ClaudeCodeClear => Compaction::ClaudeCodeClear {
                keep_tokens: super::kinds::DEFAULT_CLAUDE_CODE_KEEP_TOKENS,
                at_least: super::kinds::DEFAULT_CLAUDE_CODE_AT_LEAST,
            },
            CompactionKind::Ledger => Compaction::Ledger {
                threshold: self.threshold.unwrap_or(DEFAULT_LEDGER_THRESHOLD),
                keep_last: self.keep_last.unwrap_or(DEFAULT_LEDGER_KEEP_LAST),
            },
            peer => {
                let mut p = if peer == CompactionKind::ClearToolUses {
                    PeerParams::anthropic_defaults()
                } else {
                    PeerParams::langchain_defaults()
                };
                if let Some(t) = self.trigger {
                    p.trigger = t;
                }
                if let Some(k) = self.keep {
                    p.keep = k;
                }
                if let Some(n) = self.clear_at_least {
                    p.clear_at_least = n;
                }
                p.exclude_tools = self.exclude_tools.clone();
                p.exclude_tools.sort();
                p.exclude_tools.dedup();
                p.clear_tool_inputs |= self.clear_tool_inputs;
                if peer == CompactionKind::ClearToolUses {
                    Compaction::ClearToolUses(ClearToolUses(p))
                } else {
                    Compaction::LangchainClear(LangchainClear(p))
                }
            }
        };

        let with_ttl = CacheKind::with_ttl_names();
        let cache_kind = match self.cache {
            Some(k) => {
                if self.manifest.is_some() && k != CacheKind::Native {
                    return Err(FlagError(format!(
                        "--manifest applies only to --cache native, not to --cache {}",
                        k.name()
                    )));
                }
                if self.ttl.is_some() && !k.has_ttl() {
                    return Err(FlagError(format!(
                        "--ttl applies to --cache {}, not to --cache {}",
                        one_of(&with_ttl),
                        k.name()
                    )));
                }
                k
            }
            None if self.manifest.is_some() => {
                implied.push(Implied {
                    option: "--manifest",
                    implies: format!("--cache {}", CacheKind::Native.name()),
                });
                CacheKind::Native
            }
            None if self.ttl.is_some() => {
                return Err(FlagError(format!(
                    "--ttl applies to --cache {}; add one of them",
                    one_of(&with_ttl)
                )));
            }
            None => default_cache,
        };
        let cache = Cache::of_kind(
            cache_kind,
            self.ttl.unwrap_or(TtlChoice::Fixed(DEFAULT_TTL)),
            self.manifest.unwrap_or(DEFAULT_MANIFEST),
        );
        Ok(ResolvedPolicy {
            config: Config {
                compaction,
                cache,
                model: None,
            },
            implied,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::wire::Ttl;

    fn resolve(f: PolicyFlags) -> Result<(String, Vec<String>), String> {
        f.resolve(CacheKind::None)
            .map(|r| {
                (
                    r.config.to_string(),
                    r.implied.iter().map(|i| i.to_string()).collect(),
                )
            })
            .map_err(|e| e.0)
    }

    #[test]
    fn nothing_given_is_the_default() {
        assert_eq!(
            resolve(PolicyFlags::default()),
            Ok(("off+none".into(), vec![]))
        );
        let r = PolicyFlags::default().resolve(CacheKind::Recorded).unwrap();
        assert_eq!(r.config.to_string(), "off+recorded");
    }

    #[test]
    fn defaults_come_from_the_policy_constants() {
        let f = PolicyFlags {
            compaction: Some(CompactionKind::Ledger),
            cache: Some(CacheKind::Native),
            ..Default::default()
        };
        assert_eq!(
            resolve(f).unwrap().0,
            format!(
                "ledger:t={DEFAULT_LEDGER_THRESHOLD},k={DEFAULT_LEDGER_KEEP_LAST}+native:manifest=cached,ttl=5m"
            )
        );
    }

    #[test]
    fn a_ledger_option_alone_implies_the_ledger_and_says_so() {
        let f = PolicyFlags {
            threshold: Some(2000),
            ..Default::default()
        };
        assert_eq!(
            resolve(f),
            Ok((
                "ledger:t=2000,k=2+none".into(),
                vec!["--threshold implies --compaction ledger".into()]
            ))
        );
        let f = PolicyFlags {
            manifest: Some(ManifestPosition::Volatile),
            ..Default::default()
        };
        assert_eq!(
            resolve(f),
            Ok((
                "off+native:manifest=volatile,ttl=5m".into(),
                vec!["--manifest implies --cache native".into()]
            ))
        );
    }

    #[test]
    fn an_option_of_another_policy_is_an_error_naming_the_fix() {
        let cases = [
            (
                PolicyFlags {
                    compaction: Some(CompactionKind::ClearToolUses),
                    threshold: Some(1),
                    ..Default::default()
                },
                "--threshold applies only to --compaction ledger, not to --compaction clear-tool-uses",
            ),
            (
                PolicyFlags {
                    trigger: Some(5),
                    ..Default::default()
                },
                "--trigger applies to --compaction clear-tool-uses or langchain-clear; add one of them",
            ),
            (
                PolicyFlags {
                    compaction: Some(CompactionKind::Ledger),
                    keep: Some(5),
                    ..Default::default()
                },
                "--keep applies only to --compaction clear-tool-uses or langchain-clear, not to --compaction ledger",
            ),
            (
                PolicyFlags {
                    ttl: Some(Ttl::OneHour.into()),
                    ..Default::default()
                },
                "--ttl applies to --cache system, native, tail or claude-code; add one of them",
            ),
            (
                PolicyFlags {
                    cache: Some(CacheKind::Recorded),
                    ttl: Some(Ttl::OneHour.into()),
                    ..Default::default()
                },
                "--ttl applies to --cache system, native, tail or claude-code, not to --cache recorded",
            ),
            (
                PolicyFlags {
                    cache: Some(CacheKind::Tail),
                    manifest: Some(ManifestPosition::Cached),
                    ..Default::default()
                },
                "--manifest applies only to --cache native, not to --cache tail",
            ),
            (
                PolicyFlags {
                    threshold: Some(1),
                    exclude_tools: vec!["x".into()],
                    ..Default::default()
                },
                "--threshold (ledger) and --exclude-tool (clear-tool-uses or langchain-clear) belong to different compaction policies; choose one with --compaction",
            ),
        ];
        for (f, msg) in cases {
            assert_eq!(resolve(f).unwrap_err(), msg);
        }
    }

    #[test]
    fn peer_options_apply_to_peers() {
        let f = PolicyFlags {
            compaction: Some(CompactionKind::LangchainClear),
            trigger: Some(50_000),
            exclude_tools: vec!["b".into(), "a".into(), "b".into()],
            clear_tool_inputs: true,
            cache: Some(CacheKind::Tail),
            ttl: Some(Ttl::OneHour.into()),
            ..Default::default()
        };
        assert_eq!(
            resolve(f).unwrap().0,
            "langchain-clear:trigger=50000,keep=3,exclude=a|b,inputs=true+tail:ttl=1h"
        );
    }
}

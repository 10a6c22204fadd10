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
use tracecost_engine::cache::ManifestPosition;

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

/// A part of a trace's status quo that a resolution over it kept, because
/// no option given named that part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// Which part: `compaction` or `cache policy`.
    pub part: &'static str,
    /// The part kept (`claude-code:ttl=recorded`).
    pub value: String,
    /// The whole status quo it was kept from.
    pub status_quo: String,
}

impl Kept {
    /// `parts` in words: "compaction recorded and TTL recorded kept from
    /// the trace's status quo recorded+claude-code:ttl=recorded"; `None`
    /// when nothing was kept.
    pub fn describe(parts: &[Kept]) -> Option<String> {
        let first = parts.first()?;
        let named: Vec<String> = parts
            .iter()
            .map(|k| format!("{} {}", k.part, k.value))
            .collect();
        Some(format!(
            "{} kept from the trace's status quo {}",
            named.join(" and "),
            first.status_quo
        ))
    }
}

/// The config the options describe, and what they implied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPolicy {
    /// The config.
    pub config: Config,
    /// Policies chosen by implication, in option order.
    pub implied: Vec<Implied>,
    /// Parts of the status quo kept ([`PolicyFlags::resolve_over`]).
    pub kept: Vec<Kept>,
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

    /// Whether an option given names the compaction policy or one of its
    /// parameters.
    fn names_compaction(&self) -> bool {
        self.compaction.is_some()
            || !self.ledger_options().is_empty()
            || !self.peer_options().is_empty()
    }

    /// Resolves the options as changes to `status_quo`, what ran: the part
    /// (compaction, or cache policy) that no option names stays the status
    /// quo's, and the resolution says so. `--ttl` or `--manifest` without
    /// `--cache` change that parameter of the status quo's own cache
    /// policy when it has one. So `--threshold 4000` on a Claude Code
    /// trace replays the ledger under Claude Code's own caching, not
    /// without caching.
    pub fn resolve_over(&self, status_quo: &Config) -> Result<ResolvedPolicy, FlagError> {
        let sq = &status_quo.cache;
        // --ttl or --manifest alone, each one the status quo's cache policy
        // takes (else they imply, or fail, as without a status quo).
        let ttl_fits = self.ttl.is_none() || sq.ttl().is_some();
        let manifest_fits = self.manifest.is_none() || matches!(sq, Cache::Native { .. });
        let own_cache_changed = self.cache.is_none()
            && (self.ttl.is_some() || self.manifest.is_some())
            && ttl_fits
            && manifest_fits;
        // Resolved as if the status quo's cache were named; then its
        // parameters are the status quo's unless given.
        let flags = if own_cache_changed {
            PolicyFlags {
                cache: Some(sq.kind()),
                ..self.clone()
            }
        } else {
            self.clone()
        };
        let mut r = flags.resolve(sq.kind())?;
        if own_cache_changed {
            r.config.cache = Cache::of_kind(
                sq.kind(),
                self.ttl
                    .or(sq.ttl())
                    .unwrap_or(TtlChoice::Fixed(DEFAULT_TTL)),
                self.manifest.unwrap_or(match sq {
                    Cache::Native { manifest, .. } => *manifest,
                    _ => DEFAULT_MANIFEST,
                }),
            );
            r.implied.push(Implied {
                option: if self.ttl.is_some() {
                    "--ttl"
                } else {
                    "--manifest"
                },
                implies: format!("the status quo's --cache {}", sq.kind().name()),
            });
        } else if self.cache.is_none() && self.ttl.is_none() && self.manifest.is_none() {
            r.config.cache = *sq;
            r.kept.push(Kept {
                part: "cache policy",
                value: sq.to_string(),
                status_quo: status_quo.to_string(),
            });
        } else if self.ttl.is_none()
            && sq.ttl() == Some(TtlChoice::Recorded)
            && r.config.cache.ttl().is_some()
        {
            // As in a grid: a cache policy named (or implied) without a
            // TTL, weighed against a status quo that takes its TTL from the
            // record, does too, so that it differs from what ran only in
            // what was asked.
            r.config.cache = Cache::of_kind(
                r.config.cache.kind(),
                TtlChoice::Recorded,
                self.manifest.unwrap_or(DEFAULT_MANIFEST),
            );
            r.kept.push(Kept {
                part: "TTL",
                value: super::RECORDED_TTL_NAME.to_owned(),
                status_quo: status_quo.to_string(),
            });
        }
        if !self.names_compaction() {
            r.config.compaction = status_quo.compaction.clone();
            r.kept.insert(
                0,
                Kept {
                    part: "compaction",
                    value: status_quo.compaction.to_string(),
                    status_quo: status_quo.to_string(),
                },
            );
        }
        Ok(r)
    }

    /// Resolves the options. `default_cache` is the cache policy when none
    /// is given and none is implied (it depends on the trace: recorded
    /// markers when it has them).
    pub fn resolve(&self, default_cache: CacheKind) -> Result<ResolvedPolicy, FlagError> {
        let mut implied = Vec::new();
        let compaction = self.compaction_of(self.compaction_kind(&mut implied)?)?;
        let cache_kind = self.cache_kind(default_cache, &mut implied)?;
        let cache = Cache::of_kind(
            cache_kind,
            self.ttl.unwrap_or(TtlChoice::Fixed(DEFAULT_TTL)),
            self.manifest.unwrap_or(DEFAULT_MANIFEST),
        );
        Ok(ResolvedPolicy {
            config: Config {
                thinking: None,
                compaction,
                cache,
                model: None,
            },
            implied,
            kept: Vec::new(),
        })
    }

    /// The compaction policy named, or implied by its options (the
    /// ledger's); options of another policy are errors.
    fn compaction_kind(&self, implied: &mut Vec<Implied>) -> Result<CompactionKind, FlagError> {
        let ledger_opts = self.ledger_options();
        let peer_opts = self.peer_options();
        let peers: Vec<&str> = CompactionKind::ALL
            .into_iter()
            .filter(|k| k.is_peer())
            .map(CompactionKind::name)
            .collect();
        let kind = match self.compaction {
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
        Ok(kind)
    }

    /// The compaction policy of `kind`, its defaults replaced by the
    /// options given.
    fn compaction_of(&self, kind: CompactionKind) -> Result<Compaction, FlagError> {
        Ok(match kind {
            CompactionKind::Off => Compaction::Off,
            CompactionKind::Recorded => Compaction::Recorded,
            CompactionKind::ClaudeCodeClear => Compaction::ClaudeCodeClear {
                keep_tokens: super::kinds::DEFAULT_CLAUDE_CODE_KEEP_TOKENS,
                at_least: super::kinds::DEFAULT_CLAUDE_CODE_AT_LEAST,
            },
            CompactionKind::AgentsTrim => Compaction::AgentsTrim(super::AgentsTrim::default()),
            CompactionKind::ClaudeCodeAutocompact => Compaction::ClaudeCodeAutocompact {
                trigger: super::AutocompactTrigger::Tokens(
                    super::kinds::DEFAULT_AUTOCOMPACT_TRIGGER,
                ),
                summary: super::kinds::DEFAULT_AUTOCOMPACT_SUMMARY,
            },
            // Their defaults are the config grammar's; the two whose peers
            // document no default trigger say so.
            k @ (CompactionKind::AnthropicCompact
            | CompactionKind::LangchainSummarize
            | CompactionKind::OpenAiCompact) => {
                Compaction::parse(k.name(), k.name()).map_err(|e| {
                    FlagError(format!(
                        "--compaction {}: {}; give its parameters with --config",
                        k.name(),
                        e.reason
                    ))
                })?
            }
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
        })
    }

    /// The cache policy named, implied by `--manifest`, or `default_cache`;
    /// options it does not take are errors.
    fn cache_kind(
        &self,
        default_cache: CacheKind,
        implied: &mut Vec<Implied>,
    ) -> Result<CacheKind, FlagError> {
        let with_ttl = CacheKind::with_ttl_names();
        let kind = match self.cache {
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
        Ok(kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_engine::wire::Ttl;

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
                "--ttl applies to --cache system, native, tail, claude-code or bedrock-cachepoint; add one of them",
            ),
            (
                PolicyFlags {
                    cache: Some(CacheKind::Recorded),
                    ttl: Some(Ttl::OneHour.into()),
                    ..Default::default()
                },
                "--ttl applies to --cache system, native, tail, claude-code or bedrock-cachepoint, not to --cache recorded",
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

    fn over(f: PolicyFlags, status_quo: &str) -> Result<(String, Vec<String>), String> {
        f.resolve_over(&status_quo.parse().unwrap())
            .map(|r| {
                let mut notes: Vec<String> = r.implied.iter().map(|i| i.to_string()).collect();
                notes.extend(Kept::describe(&r.kept));
                (r.config.to_string(), notes)
            })
            .map_err(|e| e.0)
    }

    #[test]
    fn over_a_status_quo_an_option_changes_its_part_and_nothing_else() {
        let cc = "recorded+claude-code:ttl=recorded";
        let kept = |what: &str| format!("{what} kept from the trace's status quo {cc}");
        let threshold = PolicyFlags {
            threshold: Some(4000),
            ..Default::default()
        };
        assert_eq!(
            over(threshold, cc),
            Ok((
                "ledger:t=4000,k=2+claude-code:ttl=recorded".into(),
                vec![
                    "--threshold implies --compaction ledger".into(),
                    kept("cache policy claude-code:ttl=recorded")
                ]
            ))
        );
        let cache = PolicyFlags {
            cache: Some(CacheKind::Tail),
            ..Default::default()
        };
        assert_eq!(
            over(cache.clone(), cc),
            Ok((
                "recorded+tail:ttl=recorded".into(),
                vec![kept("compaction recorded and TTL recorded")]
            ))
        );
        // A status quo at a fixed TTL leaves a named policy at the default.
        assert_eq!(
            over(cache, "off+claude-code:ttl=1h").unwrap().0,
            "off+tail:ttl=5m"
        );
        let ttl = PolicyFlags {
            ttl: Some(Ttl::OneHour.into()),
            ..Default::default()
        };
        assert_eq!(
            over(ttl.clone(), cc),
            Ok((
                "recorded+claude-code:ttl=1h".into(),
                vec![
                    "--ttl implies the status quo's --cache claude-code".into(),
                    kept("compaction recorded")
                ]
            ))
        );
        // Where the status quo's cache takes no TTL, --ttl alone is still
        // an error naming what to add.
        assert_eq!(
            over(ttl, "off+none").unwrap_err(),
            "--ttl applies to --cache system, native, tail, claude-code or bedrock-cachepoint; add one of them"
        );
        let manifest = PolicyFlags {
            manifest: Some(ManifestPosition::Volatile),
            ..Default::default()
        };
        assert_eq!(
            over(manifest.clone(), "off+native:manifest=cached,ttl=1h")
                .unwrap()
                .0,
            "off+native:manifest=volatile,ttl=1h"
        );
        assert_eq!(
            over(manifest, "off+none").unwrap().0,
            "off+native:manifest=volatile,ttl=5m"
        );
        // Both parts named: nothing of the status quo is left to keep.
        let both = PolicyFlags {
            compaction: Some(CompactionKind::Off),
            cache: Some(CacheKind::None),
            ..Default::default()
        };
        assert_eq!(over(both, cc), Ok(("off+none".into(), vec![])));
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

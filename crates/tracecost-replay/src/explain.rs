//! Why a simulated call wrote or missed the cache: each call's cause, read
//! from the request it sent, the one before it and the simulated cache as
//! the call found it.
//!
//! A call that reads everything the call before it cached, and writes only
//! what it adds, has no cause: that is the cache working. Every other call
//! (one that read less than the call before it had cached, or found nothing
//! cached) gets the first of these that holds, in this order, because an
//! earlier one makes the later ones moot:
//!
//! 1. the trace's first call;
//! 2. the model changed (caches are per model);
//! 3. the prompt is below the model's minimum cacheable length;
//! 4. the config sent no marker;
//! 5. the call before cached nothing;
//! 6. the prefix the call before cached changed, at its first differing
//!    block: tools, system, the part of the prompt the transcript does not
//!    hold, a tool result the policy (or Claude Code's microcompaction)
//!    cleared, or any other block;
//! 7. the prefix is the same but its entry is gone: expired after the gap,
//!    or the record showed it cold;
//! 8. the entry is alive but no marker reaches back to it (the API checks
//!    20 blocks before each marker).

use serde::Serialize;

use tracecost_cost::cache_sim::{
    CacheHold, EntryState, LOOKBACK_POSITIONS, PrefixBlock, PrefixKind,
};

// Kept small (16 bytes): every simulated call of every config holds one.
fn kind_str<S: serde::Serializer>(kind: &PrefixKind, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(kind_name(*kind))
}

fn ttl_str<S: serde::Serializer>(ttl: &CacheHold, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(ttl)
}

/// 1-based, as calls are numbered (a request has far fewer than 2³²
/// blocks).
fn one_based(i: usize) -> u32 {
    u32::try_from(i + 1).unwrap_or(u32::MAX)
}

/// Why a call did not read what the call before it cached (1-based blocks
/// and messages, as calls are numbered).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "cause", rename_all = "snake_case")]
pub enum CacheCause {
    /// The trace's first call: nothing was cached before it.
    FirstCall,
    /// The call went to another model than the call before.
    ModelChanged,
    /// The prompt is shorter than the model caches at all.
    BelowMinimum {
        /// The prompt's tokens (below the minimum, so small).
        tokens: u32,
        /// The model's minimum.
        minimum: u32,
    },
    /// The config placed no cache marker.
    NoMarker,
    /// The call before cached nothing (it was below the minimum or sent no
    /// marker), so this one writes from the start.
    NothingCachedBefore,
    /// A tool definition (or the tool-use prompt the API adds) changed.
    ToolsChanged {
        /// The first differing block.
        block: u32,
    },
    /// A system block changed.
    SystemChanged {
        /// The first differing block.
        block: u32,
    },
    /// The part of the prompt the transcript does not hold changed: the
    /// record read less of it than before.
    HiddenPrefixChanged {
        /// The first differing block.
        block: u32,
    },
    /// Claude Code's microcompaction cleared a tool result inside the
    /// cached prefix.
    Microcompaction {
        /// The first differing block.
        block: u32,
        /// Its message.
        message: u32,
    },
    /// The config's compaction compacted, cleared or restored a tool result
    /// inside the cached prefix.
    Compacted {
        /// The first differing block.
        block: u32,
        /// Its message.
        message: u32,
    },
    /// Another block of the cached prefix changed.
    PrefixChanged {
        /// The first differing block.
        block: u32,
        /// What it is.
        #[serde(serialize_with = "kind_str")]
        kind: PrefixKind,
        /// Its message, when it is in one.
        #[serde(skip_serializing_if = "Option::is_none")]
        message: Option<u32>,
    },
    /// The prefix was unchanged but its entry had expired.
    TtlExpired {
        /// Milliseconds since the call before started.
        gap_ms: u64,
        /// How long the entry was held (`5m`, `1h`, …).
        #[serde(serialize_with = "ttl_str")]
        ttl: CacheHold,
    },
    /// The prefix was unchanged, but the cache held no entry for it: the
    /// record showed it cold.
    Evicted,
    /// The entry was alive but more than 20 blocks before every marker.
    LookbackExceeded {
        /// The block the call before cached.
        cached_block: u32,
    },
}

impl CacheCause {
    /// Short name (the JSON `cause`).
    pub fn name(&self) -> &'static str {
        match self {
            CacheCause::FirstCall => "first_call",
            CacheCause::ModelChanged => "model_changed",
            CacheCause::BelowMinimum { .. } => "below_minimum",
            CacheCause::NoMarker => "no_marker",
            CacheCause::NothingCachedBefore => "nothing_cached_before",
            CacheCause::ToolsChanged { .. } => "tools_changed",
            CacheCause::SystemChanged { .. } => "system_changed",
            CacheCause::HiddenPrefixChanged { .. } => "hidden_prefix_changed",
            CacheCause::Microcompaction { .. } => "microcompaction",
            CacheCause::Compacted { .. } => "compacted",
            CacheCause::PrefixChanged { .. } => "prefix_changed",
            CacheCause::TtlExpired { .. } => "ttl_expired",
            CacheCause::Evicted => "evicted",
            CacheCause::LookbackExceeded { .. } => "lookback_exceeded",
        }
    }

    /// One sentence, as the explain table and the session page say it.
    pub fn text(&self) -> String {
        match *self {
            CacheCause::FirstCall => "first call: nothing of its own cached yet".into(),
            CacheCause::ModelChanged => "the model changed: caches are per model".into(),
            CacheCause::BelowMinimum { tokens, minimum } => {
                format!("below the model's minimum: {tokens} tokens, {minimum} needed to cache")
            }
            CacheCause::NoMarker => "no cache marker sent".into(),
            CacheCause::NothingCachedBefore => "the call before cached nothing".into(),
            CacheCause::ToolsChanged { block } => format!("tools changed at block {block}"),
            CacheCause::SystemChanged { block } => {
                format!("system prompt changed at block {block}")
            }
            CacheCause::HiddenPrefixChanged { block } => format!(
                "the prompt part the transcript does not hold changed at block {block} (the record read less)"
            ),
            CacheCause::Microcompaction { block, message } => format!(
                "microcompaction cleared a tool result at block {block} (message {message})"
            ),
            CacheCause::Compacted { block, message } => {
                format!("the policy compacted a tool result at block {block} (message {message})")
            }
            CacheCause::PrefixChanged {
                block,
                kind,
                message,
            } => match message {
                Some(m) => format!(
                    "prefix changed at block {block} ({}, message {m})",
                    kind_name(kind)
                ),
                None => format!("prefix changed at block {block} ({})", kind_name(kind)),
            },
            CacheCause::TtlExpired { gap_ms, ttl } => format!(
                "TTL expired: {} since the call before, cached for {ttl}",
                gap_text(gap_ms)
            ),
            CacheCause::Evicted => {
                "the record shows the prefix was not cached (another request replaced it)".into()
            }
            CacheCause::LookbackExceeded { cached_block } => format!(
                "lookback exceeded: the prefix cached at block {cached_block} is more than {LOOKBACK_POSITIONS} blocks before every marker"
            ),
        }
    }
}

/// `4 min 10 s`, `1 h 02 min`, `12 s`.
pub fn gap_text(ms: u64) -> String {
    let s = ms / 1000;
    if s < 60 {
        format!("{s} s")
    } else if s < 3600 {
        format!("{} min {:02} s", s / 60, s % 60)
    } else {
        format!("{} h {:02} min", s / 3600, (s % 3600) / 60)
    }
}

fn kind_name(kind: PrefixKind) -> &'static str {
    match kind {
        PrefixKind::ToolDef => "tool definition",
        PrefixKind::ToolPrompt => "tool-use prompt",
        PrefixKind::System => "system",
        PrefixKind::Text => "text",
        PrefixKind::ToolUse => "tool_use",
        PrefixKind::ToolResult => "tool_result",
        PrefixKind::Thinking => "thinking",
        PrefixKind::Image => "image",
        PrefixKind::Other => "other block",
    }
}

/// What one config's call before left behind.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Before {
    /// The furthest block it read or wrote (0-based), if any.
    pub cached: Option<usize>,
    /// Its start.
    pub start_ms: Option<u64>,
    /// How long the cache held what it cached, as it stood after the call.
    pub ttl: Option<CacheHold>,
    /// Its model (by address).
    pub model: usize,
}

/// Where the header's parts lie in a request's blocks (0-based, ends
/// exclusive).
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    /// Blocks before the system (tools and the tool-use prompt).
    pub system_start: usize,
    /// Blocks before the first message.
    pub header_len: usize,
    /// The blocks standing for the prompt part the transcript does not hold.
    pub hidden: std::ops::Range<usize>,
}

/// One call's facts, for [`classify`].
pub(crate) struct Facts<'a> {
    /// The call before, for this config (`None` at the first call).
    pub before: Option<Before>,
    /// The request's blocks from `from_block` on (those not kept from the
    /// call before's request, among them the first not sent as in it).
    pub appended: &'a [PrefixBlock],
    /// The first of the request's blocks in `appended`.
    pub from_block: usize,
    /// The number of leading blocks sent as in the call before (at least
    /// `from_block`).
    pub same_blocks: usize,
    /// The header's layout.
    pub layout: &'a Layout,
    /// This call's model (by address).
    pub model: usize,
    /// The model's minimum cacheable tokens.
    pub minimum: u64,
    /// The prompt's tokens.
    pub tokens: u64,
    /// The blocks marked.
    pub breakpoints: usize,
    /// The block read from the cache.
    pub hit: Option<usize>,
    /// Whether the call wrote anything.
    pub wrote: bool,
    /// What the cache held for the call before's furthest block, as this
    /// call found it.
    pub entry: EntryState,
    /// This call's start (or the clock's, back to back).
    pub now_ms: u64,
    /// Whether this call compacted, cleared or restored a result the call
    /// before did not.
    pub compaction_changed: bool,
    /// Whether the compaction is Claude Code's recorded microcompaction.
    pub microcompaction: bool,
}

/// The call's cause, or `None` when it read all the call before cached.
pub(crate) fn classify(f: &Facts<'_>) -> Option<CacheCause> {
    let Some(before) = f.before else {
        return (f.wrote || f.hit.is_none()).then_some(CacheCause::FirstCall);
    };
    let missed = match before.cached {
        Some(p) => f.hit.is_none_or(|h| h < p),
        None => f.wrote || f.hit.is_none(),
    };
    if !missed {
        return None;
    }
    if before.model != f.model {
        return Some(CacheCause::ModelChanged);
    }
    if f.tokens < f.minimum {
        return Some(CacheCause::BelowMinimum {
            tokens: u32::try_from(f.tokens).unwrap_or(u32::MAX),
            minimum: u32::try_from(f.minimum).unwrap_or(u32::MAX),
        });
    }
    if f.breakpoints == 0 {
        return Some(CacheCause::NoMarker);
    }
    let Some(p) = before.cached else {
        return Some(CacheCause::NothingCachedBefore);
    };
    let k = f.same_blocks;
    if k <= p {
        let block = one_based(k);
        let l = f.layout;
        return Some(if k < l.system_start {
            CacheCause::ToolsChanged { block }
        } else if l.hidden.contains(&k) {
            CacheCause::HiddenPrefixChanged { block }
        } else if k < l.header_len {
            CacheCause::SystemChanged { block }
        } else {
            let b = k.checked_sub(f.from_block).and_then(|i| f.appended.get(i));
            let message = b.and_then(|b| b.message).map(one_based);
            let kind = b.map_or(PrefixKind::Other, |b| b.kind);
            match (kind, message) {
                (PrefixKind::ToolResult, Some(message)) if f.compaction_changed => {
                    if f.microcompaction {
                        CacheCause::Microcompaction { block, message }
                    } else {
                        CacheCause::Compacted { block, message }
                    }
                }
                _ => CacheCause::PrefixChanged {
                    block,
                    kind,
                    message,
                },
            }
        });
    }
    Some(match f.entry {
        EntryState::Expired { ttl, .. } => CacheCause::TtlExpired {
            gap_ms: before.start_ms.map_or(0, |s| f.now_ms.saturating_sub(s)),
            ttl,
        },
        // Dropped once expired: its TTL as the call before left it.
        EntryState::Dropped => match before.ttl {
            Some(ttl) => CacheCause::TtlExpired {
                gap_ms: before.start_ms.map_or(0, |s| f.now_ms.saturating_sub(s)),
                ttl,
            },
            None => CacheCause::Evicted,
        },
        EntryState::Absent => CacheCause::Evicted,
        EntryState::Readable { .. } => CacheCause::LookbackExceeded {
            cached_block: one_based(p),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_cost::tokens::ContentHash;
    use tracecost_engine::wire::Ttl;

    fn blocks(kinds: &[(PrefixKind, Option<usize>)]) -> Vec<PrefixBlock> {
        kinds
            .iter()
            .enumerate()
            .map(|(i, &(kind, message))| PrefixBlock {
                key: ContentHash::of(&i.to_le_bytes()),
                tokens: 100,
                kind,
                message,
            })
            .collect()
    }

    /// tool, tool prompt, system, hidden system, then messages 0..=2.
    fn request() -> (Vec<PrefixBlock>, Layout) {
        let b = blocks(&[
            (PrefixKind::ToolDef, None),
            (PrefixKind::ToolPrompt, None),
            (PrefixKind::System, None),
            (PrefixKind::System, None),
            (PrefixKind::Text, Some(0)),
            (PrefixKind::ToolUse, Some(1)),
            (PrefixKind::ToolResult, Some(2)),
            (PrefixKind::Text, Some(2)),
        ]);
        let layout = Layout {
            system_start: 2,
            header_len: 4,
            hidden: 3..4,
        };
        (b, layout)
    }

    fn facts<'a>(b: &'a [PrefixBlock], layout: &'a Layout) -> Facts<'a> {
        Facts {
            before: Some(Before {
                cached: Some(6),
                start_ms: Some(1_000),
                ttl: Some(Ttl::FiveMinutes.into()),
                model: 1,
            }),
            appended: b,
            from_block: 0,
            same_blocks: b.len(),
            layout,
            model: 1,
            minimum: 1024,
            tokens: 4096,
            breakpoints: 1,
            hit: None,
            wrote: true,
            entry: EntryState::Readable {
                ttl: Ttl::FiveMinutes.into(),
            },
            now_ms: 301_000,
            compaction_changed: false,
            microcompaction: false,
        }
    }

    /// The first block not sent as before is read from the blocks the
    /// call appended, wherever the request was rebuilt from.
    #[test]
    fn the_changed_block_is_found_among_the_blocks_appended() {
        let (b, l) = request();
        for from_block in 0..=5 {
            let f = Facts {
                appended: &b[from_block..],
                from_block,
                same_blocks: 5,
                ..facts(&b, &l)
            };
            assert_eq!(
                classify(&f),
                Some(CacheCause::PrefixChanged {
                    block: 6,
                    kind: PrefixKind::ToolUse,
                    message: Some(2),
                }),
                "rebuilt from block {from_block}"
            );
        }
    }

    #[test]
    fn a_call_that_read_what_was_cached_has_no_cause() {
        let (b, l) = request();
        let f = Facts {
            hit: Some(6),
            ..facts(&b, &l)
        };
        assert_eq!(classify(&f), None);
        let f = Facts {
            hit: Some(7),
            ..facts(&b, &l)
        };
        assert_eq!(classify(&f), None);
    }

    #[test]
    fn each_cause_is_told_in_order() {
        let (b, l) = request();
        let base = || facts(&b, &l);
        let cases: Vec<(Facts<'_>, CacheCause)> = vec![
            (
                Facts {
                    before: None,
                    ..base()
                },
                CacheCause::FirstCall,
            ),
            (Facts { model: 2, ..base() }, CacheCause::ModelChanged),
            (
                Facts {
                    tokens: 900,
                    ..base()
                },
                CacheCause::BelowMinimum {
                    tokens: 900,
                    minimum: 1024,
                },
            ),
            (
                Facts {
                    breakpoints: 0,
                    ..base()
                },
                CacheCause::NoMarker,
            ),
            (
                Facts {
                    before: Some(Before {
                        cached: None,
                        start_ms: None,
                        ttl: None,
                        model: 1,
                    }),
                    ..base()
                },
                CacheCause::NothingCachedBefore,
            ),
            (
                Facts {
                    same_blocks: 0,
                    ..base()
                },
                CacheCause::ToolsChanged { block: 1 },
            ),
            (
                Facts {
                    same_blocks: 2,
                    ..base()
                },
                CacheCause::SystemChanged { block: 3 },
            ),
            (
                Facts {
                    same_blocks: 3,
                    ..base()
                },
                CacheCause::HiddenPrefixChanged { block: 4 },
            ),
            (
                Facts {
                    same_blocks: 6,
                    compaction_changed: true,
                    microcompaction: true,
                    ..base()
                },
                CacheCause::Microcompaction {
                    block: 7,
                    message: 3,
                },
            ),
            (
                Facts {
                    same_blocks: 6,
                    compaction_changed: true,
                    ..base()
                },
                CacheCause::Compacted {
                    block: 7,
                    message: 3,
                },
            ),
            (
                Facts {
                    same_blocks: 5,
                    ..base()
                },
                CacheCause::PrefixChanged {
                    block: 6,
                    kind: PrefixKind::ToolUse,
                    message: Some(2),
                },
            ),
            (
                Facts {
                    entry: EntryState::Expired {
                        ttl: Ttl::FiveMinutes.into(),
                        expired_ms: 301_000,
                    },
                    ..base()
                },
                CacheCause::TtlExpired {
                    gap_ms: 300_000,
                    ttl: Ttl::FiveMinutes.into(),
                },
            ),
            (
                Facts {
                    entry: EntryState::Absent,
                    ..base()
                },
                CacheCause::Evicted,
            ),
            // Dropped once expired: the TTL the call before left it with.
            (
                Facts {
                    entry: EntryState::Dropped,
                    ..base()
                },
                CacheCause::TtlExpired {
                    gap_ms: base().now_ms - 1_000,
                    ttl: Ttl::FiveMinutes.into(),
                },
            ),
            (base(), CacheCause::LookbackExceeded { cached_block: 7 }),
        ];
        for (f, want) in cases {
            assert_eq!(classify(&f), Some(want), "{}", want.name());
        }
    }

    #[test]
    fn a_cause_is_small_and_serializes_by_name() {
        assert!(std::mem::size_of::<Option<CacheCause>>() <= 16);
        let c = CacheCause::PrefixChanged {
            block: 6,
            kind: PrefixKind::ToolResult,
            message: Some(2),
        };
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"cause":"prefix_changed","block":6,"kind":"tool_result","message":2}"#
        );
        let t = CacheCause::TtlExpired {
            gap_ms: 1,
            ttl: Ttl::OneHour.into(),
        };
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            r#"{"cause":"ttl_expired","gap_ms":1,"ttl":"1h"}"#
        );
    }

    #[test]
    fn gaps_read_as_minutes_and_hours() {
        assert_eq!(gap_text(12_400), "12 s");
        assert_eq!(gap_text(250_000), "4 min 10 s");
        assert_eq!(gap_text(3_720_000), "1 h 02 min");
    }
}

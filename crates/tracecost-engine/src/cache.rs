//! Cache-marker composition: where the engine puts `cache_control`
//! breakpoints in a request.
//!
//! Three independent markers, each an immutable policy value that holds no
//! transcript or tenant state:
//!
//! - **history**: on the most recent *completed plain-text* message of the
//!   history — a message whose content is a string or only text blocks,
//!   before the current (last) message — so the current user turn and any
//!   tool traffic after the boundary stay outside the cached prefix;
//! - **manifest**: on the final tool schema when the manifest is `cached`;
//!   a `volatile` manifest binds the same schemas with no marker;
//! - **prompt region**: on the last system block.
//!
//! Only the Anthropic Messages API speaks the `cache_control` dialect;
//! asking for a marker on any other provider is a configuration error,
//! raised when the composition is built, before any request is made.

use std::fmt;
use std::str::FromStr;

use super::message::{BlockKind, Content, ContentBlock, ToolDefinition};
use super::rewrite::{WireMessage, WireView};
use super::wire::{BlockRef, MAX_BREAKPOINTS, Marker, Ttl};

/// The API a request is sent to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ProviderKind {
    /// Anthropic Messages API (`cache_control` markers).
    #[default]
    Anthropic,
    /// Amazon Bedrock Converse (`cachePoint` blocks, not `cache_control`).
    BedrockConverse,
    /// OpenAI (automatic prefix caching, no markers).
    OpenAi,
    /// Google Gemini (explicit cache objects, no markers).
    Google,
    /// Anything else.
    Unknown,
}

impl ProviderKind {
    /// Every provider kind, in a fixed order.
    pub const ALL: [ProviderKind; 5] = [
        ProviderKind::Anthropic,
        ProviderKind::BedrockConverse,
        ProviderKind::OpenAi,
        ProviderKind::Google,
        ProviderKind::Unknown,
    ];

    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::BedrockConverse => "bedrock-converse",
            ProviderKind::OpenAi => "openai",
            ProviderKind::Google => "google",
            ProviderKind::Unknown => "unknown",
        }
    }

    /// Whether requests to this provider accept `cache_control` markers.
    pub fn speaks_cache_control(self) -> bool {
        matches!(self, ProviderKind::Anthropic)
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for ProviderKind {
    type Err = CacheConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|p| p.as_str() == s)
            .ok_or_else(|| CacheConfigError::UnknownProvider(s.to_owned()))
    }
}

/// Where the tool manifest sits relative to the cached prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ManifestPosition {
    /// Marker on the final tool schema: the manifest is cached.
    #[default]
    Cached,
    /// Schemas bound without a marker.
    Volatile,
}

impl ManifestPosition {
    /// `cached` / `volatile`.
    pub fn as_str(self) -> &'static str {
        match self {
            ManifestPosition::Cached => "cached",
            ManifestPosition::Volatile => "volatile",
        }
    }
}

impl FromStr for ManifestPosition {
    type Err = CacheConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cached" => Ok(ManifestPosition::Cached),
            "volatile" => Ok(ManifestPosition::Volatile),
            other => Err(CacheConfigError::UnknownManifestPosition(other.to_owned())),
        }
    }
}

/// The history marker policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct HistoryCachePolicy {
    /// Mark the most recent completed plain-text message.
    pub enabled: bool,
}

/// The tool-manifest marker policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ManifestCachePolicy {
    /// Whether this policy places anything (off: tools untouched, unmarked).
    pub enabled: bool,
    /// Cached (marked) or volatile (unmarked).
    pub position: ManifestPosition,
}

impl ManifestCachePolicy {
    fn wants_marker(self) -> bool {
        self.enabled && self.position == ManifestPosition::Cached
    }
}

/// A configuration the composition refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CacheConfigError {
    /// Markers requested for a provider that does not accept them.
    #[error(
        "provider {provider} does not accept Anthropic cache_control markers; disable the {markers} marker(s) or use provider anthropic"
    )]
    MarkersUnsupported {
        /// The provider.
        provider: ProviderKind,
        /// Which markers were enabled.
        markers: String,
    },
    /// An unknown provider name.
    #[error(
        "unknown provider {0:?}; expected one of anthropic, bedrock-converse, openai, google, unknown"
    )]
    UnknownProvider(String),
    /// An unknown manifest position.
    #[error("unknown manifest position {0:?}; expected cached or volatile")]
    UnknownManifestPosition(String),
}

/// A validated marker composition: which breakpoints the engine places.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CacheComposition {
    provider: ProviderKind,
    history: HistoryCachePolicy,
    manifest: ManifestCachePolicy,
    prompt_region: bool,
    ttl: Ttl,
}

impl CacheComposition {
    /// Validates and builds a composition. Fails when any marker is enabled
    /// for a provider that does not speak `cache_control`.
    pub fn new(
        provider: ProviderKind,
        history: HistoryCachePolicy,
        manifest: ManifestCachePolicy,
        prompt_region: bool,
        ttl: Ttl,
    ) -> Result<Self, CacheConfigError> {
        let mut enabled = Vec::new();
        if history.enabled {
            enabled.push("history");
        }
        if manifest.wants_marker() {
            enabled.push("manifest");
        }
        if prompt_region {
            enabled.push("prompt-region");
        }
        if !enabled.is_empty() && !provider.speaks_cache_control() {
            return Err(CacheConfigError::MarkersUnsupported {
                provider,
                markers: enabled.join(", "),
            });
        }
        Ok(Self {
            provider,
            history,
            manifest,
            prompt_region,
            ttl,
        })
    }

    /// No markers at all (valid for every provider).
    pub fn none(provider: ProviderKind) -> Self {
        Self {
            provider,
            history: HistoryCachePolicy::default(),
            manifest: ManifestCachePolicy::default(),
            prompt_region: false,
            ttl: Ttl::FiveMinutes,
        }
    }

    /// The provider this composition was validated for.
    pub fn provider(&self) -> ProviderKind {
        self.provider
    }

    /// The TTL every marker carries.
    pub fn ttl(&self) -> Ttl {
        self.ttl
    }

    /// The markers for one request, in prefix order (tools, system,
    /// messages), never more than [`MAX_BREAKPOINTS`].
    pub fn markers(
        &self,
        tools: &[&ToolDefinition],
        system: &[ContentBlock],
        view: &WireView<'_>,
    ) -> Vec<Marker> {
        self.markers_at(tools, system, || history_boundary(view))
    }

    /// [`Self::markers`] with the history boundary given by the caller, who
    /// may know it without a scan of the history: [`history_boundary`]
    /// looks back for the latest plain-text message, and in a long run of
    /// tool calls that is far back, at every request. A caller that sends
    /// the conversation request after request can keep it up to date with
    /// [`plain_text_blocks`] over the messages each request adds. It is
    /// asked only when the history policy is enabled.
    pub fn markers_at(
        &self,
        tools: &[&ToolDefinition],
        system: &[ContentBlock],
        boundary: impl FnOnce() -> Option<BlockRef>,
    ) -> Vec<Marker> {
        let mut out = Vec::with_capacity(3);
        let ttl = self.ttl;
        if self.manifest.wants_marker() && !tools.is_empty() {
            out.push(Marker {
                at: BlockRef::Tool(tools.len() - 1),
                ttl,
            });
        }
        if self.prompt_region
            && let Some(i) = system.iter().rposition(ContentBlock::is_markable)
        {
            out.push(Marker {
                at: BlockRef::System(i),
                ttl,
            });
        }
        if self.history.enabled
            && let Some(at) = boundary()
        {
            out.push(Marker { at, ttl });
        }
        out.truncate(MAX_BREAKPOINTS);
        out
    }
}

/// The last text block of the most recent completed plain-text message: a
/// message before the last one whose content is a string or only text
/// blocks.
pub fn history_boundary(view: &WireView<'_>) -> Option<BlockRef> {
    let completed = view.messages.len().checked_sub(1)?;
    view.messages[..completed]
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, m)| {
            plain_text_blocks(m).map(|n| BlockRef::Message {
                message: i,
                block: n.saturating_sub(1),
            })
        })
}

/// Number of blocks of a plain-text message as sent (its content a
/// non-empty string, or only text blocks), `None` if it is not one: the
/// messages [`history_boundary`] looks for.
pub fn plain_text_blocks(m: &WireMessage<'_>) -> Option<usize> {
    if m.blocks.is_none()
        && let Content::Text(t) = m.source.content()
    {
        return (!t.is_empty()).then_some(1);
    }
    let mut n = 0;
    for b in m.sent_blocks() {
        if !matches!(b.kind(), BlockKind::Text { .. }) {
            return None;
        }
        n += 1;
    }
    (n > 0).then_some(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Message, Role};

    fn on(history: bool, manifest: Option<ManifestPosition>, prompt: bool) -> CacheComposition {
        CacheComposition::new(
            ProviderKind::Anthropic,
            HistoryCachePolicy { enabled: history },
            ManifestCachePolicy {
                enabled: manifest.is_some(),
                position: manifest.unwrap_or_default(),
            },
            prompt,
            Ttl::FiveMinutes,
        )
        .unwrap()
    }

    fn conversation() -> Vec<Message> {
        vec![
            Message::new_text(Role::User, "find the best massage gun"),
            Message::new(Role::Assistant, vec![ContentBlock::text("I will search.")]),
            Message::from_json(r#"{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"s","input":{}}]}"#).unwrap(),
            Message::from_json(r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}"#).unwrap(),
            Message::new(Role::Assistant, vec![ContentBlock::text("Found it."), ContentBlock::text("Details.")]),
            Message::new_text(Role::User, "and the cheapest?"),
        ]
    }

    #[test]
    fn history_marker_sits_on_last_completed_plain_text_message() {
        let h = conversation();
        let view = WireView::unchanged(&h);
        assert_eq!(
            history_boundary(&view),
            Some(BlockRef::Message {
                message: 4,
                block: 1
            })
        );
        // The current user message is never the boundary, even when plain text.
        let view = WireView::unchanged(&h[..4]);
        assert_eq!(
            history_boundary(&view),
            Some(BlockRef::Message {
                message: 1,
                block: 0
            })
        );
        let view = WireView::unchanged(&h[..1]);
        assert_eq!(history_boundary(&view), None);
    }

    #[test]
    fn manifest_cached_marks_last_tool_volatile_does_not() {
        let tools = [
            ToolDefinition::from_json(r#"{"name":"a"}"#).unwrap(),
            ToolDefinition::from_json(r#"{"name":"b"}"#).unwrap(),
        ];
        let refs: Vec<_> = tools.iter().collect();
        let sys = [ContentBlock::text("one"), ContentBlock::text("two")];
        let h = conversation();
        let view = WireView::unchanged(&h);
        let m = on(true, Some(ManifestPosition::Cached), true).markers(&refs, &sys, &view);
        let at: Vec<_> = m.iter().map(|m| m.at).collect();
        assert_eq!(
            at,
            [
                BlockRef::Tool(1),
                BlockRef::System(1),
                BlockRef::Message {
                    message: 4,
                    block: 1
                }
            ]
        );
        let m = on(false, Some(ManifestPosition::Volatile), false).markers(&refs, &sys, &view);
        assert!(m.is_empty());
    }

    #[test]
    fn markers_for_other_providers_are_rejected_up_front() {
        for p in [
            ProviderKind::BedrockConverse,
            ProviderKind::OpenAi,
            ProviderKind::Google,
            ProviderKind::Unknown,
        ] {
            let err = CacheComposition::new(
                p,
                HistoryCachePolicy { enabled: true },
                ManifestCachePolicy::default(),
                false,
                Ttl::FiveMinutes,
            )
            .unwrap_err();
            assert!(err.to_string().contains("history"), "{err}");
            // A volatile manifest places no marker, so it is fine anywhere.
            assert!(
                CacheComposition::new(
                    p,
                    HistoryCachePolicy { enabled: false },
                    ManifestCachePolicy {
                        enabled: true,
                        position: ManifestPosition::Volatile
                    },
                    false,
                    Ttl::OneHour,
                )
                .is_ok()
            );
        }
        assert_eq!(
            "bedrock-converse".parse::<ProviderKind>(),
            Ok(ProviderKind::BedrockConverse)
        );
        assert!("azure".parse::<ProviderKind>().is_err());
    }
}

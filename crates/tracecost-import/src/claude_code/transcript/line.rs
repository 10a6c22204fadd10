//! The members of a transcript line that the importer reads, borrowed
//! from the line where they can be: one pass over a line finds them, and
//! what they mean is for [`super::history`]. Kept apart so that Claude
//! Code's spelling of a line (which changes between versions) is in one
//! place.

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::claude_code::Flag;
use tracecost_engine::json::RawObject;
use tracecost_trace::RecordedCompaction;

/// One transcript line, with only the members the importer reads.
#[derive(Deserialize)]
pub(super) struct LineDoc<'a> {
    #[serde(rename = "type", default, borrow)]
    pub(super) kind: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) subtype: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    pub(super) is_sidechain: Flag,
    #[serde(default, borrow)]
    pub(super) uuid: Option<&'a RawValue>,
    #[serde(rename = "parentUuid", default, borrow)]
    pub(super) parent_uuid: Option<&'a RawValue>,
    #[serde(rename = "isApiErrorMessage", default)]
    pub(super) is_api_error: Flag,
    #[serde(rename = "isCompactSummary", default)]
    pub(super) is_compact_summary: Flag,
    #[serde(rename = "requestId", default, borrow)]
    pub(super) request_id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub(super) timestamp: Option<&'a RawValue>,
    #[serde(rename = "sessionId", default, borrow)]
    pub(super) session_id: Option<&'a RawValue>,
    /// The folder Claude Code ran in: the project's real path (its folder
    /// under `projects/` spells it with every `/` and `.` made a `-`).
    #[serde(default, borrow)]
    pub(super) cwd: Option<&'a RawValue>,
    #[serde(rename = "toolUseResult", default, borrow)]
    pub(super) tool_use_result: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub(super) message: Option<&'a RawValue>,
    #[serde(rename = "microcompactMetadata", default)]
    pub(super) microcompact: Option<MicrocompactDoc>,
    /// Read apart ([`preserved_uuids`]): a member of another shape must not
    /// cost the line its boundary.
    #[serde(rename = "compactMetadata", default, borrow)]
    pub(super) compact: Option<&'a RawValue>,
}

/// The `preservedMessages` of a `compact_boundary` line's
/// `compactMetadata`: the messages the compaction kept verbatim after its
/// summary (Claude Code 2.1.2xx).
#[derive(Deserialize)]
struct CompactDoc {
    #[serde(rename = "preservedMessages", default)]
    preserved: Option<PreservedDoc>,
}

#[derive(Deserialize)]
struct PreservedDoc {
    #[serde(default)]
    uuids: Vec<String>,
}

/// The `uuid`s of the messages a compaction kept verbatim: none when the
/// boundary names none, or names them in another shape.
pub(super) fn preserved_uuids(compact: Option<&RawValue>) -> Vec<String> {
    compact
        .and_then(|c| serde_json::from_str::<CompactDoc>(c.get()).ok())
        .and_then(|c| c.preserved)
        .map(|p| p.uuids)
        .unwrap_or_default()
}

/// What a `compact_boundary` line's `compactMetadata` says of its
/// compaction (any member of another shape is left unread).
#[derive(Deserialize, Default)]
#[serde(default)]
struct CompactionDoc {
    trigger: Option<serde_json::Value>,
    #[serde(rename = "preTokens")]
    pre_tokens: Option<serde_json::Value>,
    #[serde(rename = "postTokens")]
    post_tokens: Option<serde_json::Value>,
}

/// A `compact_boundary` line's compaction: manual when its trigger says
/// so, its sizes where it records them.
pub(super) fn recorded_compaction(compact: Option<&RawValue>) -> RecordedCompaction {
    let doc = compact
        .and_then(|c| serde_json::from_str::<CompactionDoc>(c.get()).ok())
        .unwrap_or_default();
    RecordedCompaction {
        manual: doc.trigger.as_ref().and_then(|t| t.as_str()) == Some("manual"),
        pre_tokens: doc.pre_tokens.and_then(|v| v.as_u64()),
        post_tokens: doc.post_tokens.and_then(|v| v.as_u64()),
        summary: None,
    }
}

/// The `microcompactMetadata` member of a `microcompact_boundary` line.
#[derive(Deserialize)]
pub(super) struct MicrocompactDoc {
    #[serde(rename = "compactedToolIds", default)]
    pub(super) compacted_tool_ids: Vec<String>,
}

/// The `message` member of a user or assistant line.
#[derive(Deserialize)]
pub(super) struct MessageDoc<'a> {
    #[serde(default, borrow)]
    pub(super) id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pub(super) content: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pub(super) usage: Option<&'a RawValue>,
}

pub(super) fn raw_str(raw: Option<&RawValue>) -> Option<String> {
    raw.and_then(|r| serde_json::from_str::<String>(r.get()).ok())
}

/// A `content` member, parsed but not yet made into blocks.
pub(super) enum Parsed {
    Text(String),
    Items(Vec<RawObject>),
}

pub(super) fn parse_content(raw: &RawValue) -> Option<Parsed> {
    let text = raw.get().trim_start();
    if text.starts_with('"') {
        return serde_json::from_str::<String>(raw.get())
            .ok()
            .map(Parsed::Text);
    }
    serde_json::from_str(raw.get()).ok().map(Parsed::Items)
}

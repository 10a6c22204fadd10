//! What the importer skipped or could not map, counted by kind and said
//! in the report. The list of kinds and their wording is one table, kept
//! apart so that the report's lines can be read (and reworded) in one
//! place.

use std::collections::BTreeMap;

/// Things the importer skipped or could not map, by kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Note {
    ToolUseResult,
    Synthetic,
    BadShape,
    BadBlock,
    OrphanResult,
    SliceStart,
    DuplicateResult,
    DuplicateToolUse,
    NoRequest,
    Replay,
    RepeatedUsage,
    UnbilledUsage,
    CompactBoundary,
    PreservedResponse,
    Microcompact,
    NoCallSegment,
    NoCallFile,
    Imported,
    ImportedTrace,
    JoinedLine,
}

const NOTES: [(Note, &str); 20] = [
    (
        Note::ToolUseResult,
        "toolUseResult side copies (not sent to the model; the tool_result block was used)",
    ),
    (
        Note::Synthetic,
        "synthetic or API-error assistant lines (written by Claude Code, not the model; no call)",
    ),
    (
        Note::BadShape,
        "lines of unexpected shape (not an object, mistyped members, or no usable message; skipped)",
    ),
    (
        Note::BadBlock,
        "content blocks of unexpected shape (dropped)",
    ),
    (
        Note::OrphanResult,
        "tool_result blocks whose tool_use is not earlier in the file (dropped)",
    ),
    (
        Note::SliceStart,
        "tool_result blocks opening a file that starts mid-conversation (their call is before the file: sent as text, so the response to them is a call)",
    ),
    (
        Note::DuplicateResult,
        "repeated tool_result blocks for one tool_use (dropped)",
    ),
    (
        Note::DuplicateToolUse,
        "tool_use blocks reusing an earlier id (dropped)",
    ),
    (
        Note::NoRequest,
        "responses with no message before them in the file (replayed after a stand-in for their unrecorded request, sized by the recorded usage)",
    ),
    (
        Note::Replay,
        "assistant lines repeating an earlier response (skipped)",
    ),
    (
        Note::RepeatedUsage,
        "usage rows repeated on the lines of one response (counted once, larger total kept)",
    ),
    (
        Note::UnbilledUsage,
        "usage rows with null, missing or malformed token counts (no usage recorded)",
    ),
    (
        Note::CompactBoundary,
        "compaction boundaries (the history restarts; a new trace begins)",
    ),
    (
        Note::PreservedResponse,
        "responses a compaction kept verbatim after its summary (made before it: their call is the earlier history's, after the summary they are history)",
    ),
    (
        Note::Microcompact,
        "microcompaction boundaries (tool results Claude Code cleared in place; the status quo sends them cleared)",
    ),
    (
        Note::NoCallSegment,
        "history segments with no call (before a compaction boundary; dropped)",
    ),
    (
        Note::NoCallFile,
        "files with no call to import (only bookkeeping lines, or no recorded request)",
    ),
    (
        Note::Imported,
        "responses already imported from an earlier file (a resumed or copied session repeats them: history, not a call again)",
    ),
    (
        Note::ImportedTrace,
        "traces whose every response an earlier file holds (skipped)",
    ),
    (
        Note::JoinedLine,
        "lines holding two or more records with no newline between them (each record read)",
    ),
];

/// Counts of [`Note`]s and of skipped line types.
#[derive(Debug, Clone, Default)]
pub(super) struct Tally {
    notes: [usize; NOTES.len()],
    line_types: BTreeMap<String, usize>,
}

impl Tally {
    pub(super) fn bump(&mut self, note: Note) {
        self.add(note, 1);
    }

    pub(super) fn add(&mut self, note: Note, n: usize) {
        if let Some(i) = NOTES.iter().position(|(k, _)| *k == note) {
            self.notes[i] += n;
        }
    }

    pub(super) fn get(&self, note: Note) -> usize {
        NOTES
            .iter()
            .position(|(k, _)| *k == note)
            .map_or(0, |i| self.notes[i])
    }

    pub(super) fn line_type(&mut self, kind: &str) {
        let kind = if kind.is_empty() { "(no type)" } else { kind };
        *self.line_types.entry(kind.to_owned()).or_default() += 1;
    }

    pub(super) fn merge(&mut self, other: &Tally) {
        for (a, b) in self.notes.iter_mut().zip(other.notes) {
            *a += b;
        }
        for (k, v) in &other.line_types {
            *self.line_types.entry(k.clone()).or_default() += v;
        }
    }

    pub(super) fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = NOTES
            .iter()
            .zip(self.notes)
            .filter(|(_, n)| *n > 0)
            .map(|((_, label), n)| format!("{n} × {label}"))
            .collect();
        out.extend(self.line_types.iter().map(|(kind, n)| {
            format!("{n} × `{kind}` lines (transcript bookkeeping, not sent to the model)")
        }));
        out
    }
}

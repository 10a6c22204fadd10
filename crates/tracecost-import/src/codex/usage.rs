//! A ccusage-compatible usage scan of Codex CLI rollouts.
//!
//! [`scan_usage`] reads each rollout with the importer's own reader (the
//! calls it counts, the repeated and copied `token_count` events it drops,
//! the model each call ran under), and sums the counted calls per session
//! and model the way ccusage's Codex report does (ccusage 20.0.24's
//! `ccusage codex session`), keeping each call's counts so that a price
//! decided per request (OpenAI's long-context rates) can still be applied.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::Unmapped;
use crate::{ImportError, ImportOptions, ImportSummary};

/// The model ccusage assumes for calls of a session that names none (early
/// Codex recorded no `turn_context` model).
pub const FALLBACK_MODEL: &str = "gpt-5";

/// Token counts of calls, as Codex records them: `input` includes the
/// cached and the written tokens; `output` includes the reasoning tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodexTokens {
    /// `input_tokens`: every input token, cached and written ones included.
    pub input: u64,
    /// `cached_input_tokens` (at most `input`).
    pub cached: u64,
    /// `cache_write_input_tokens` (newer Codex; part of `input`).
    pub written: u64,
    /// `output_tokens`, reasoning included.
    pub output: u64,
    /// `reasoning_output_tokens` (part of `output`, informational).
    pub reasoning: u64,
    /// `total_tokens` as recorded, else `input + output`.
    pub total: u64,
}

impl CodexTokens {
    /// Adds `other` to these sums (saturating).
    pub fn add(&mut self, other: &CodexTokens) {
        self.input = self.input.saturating_add(other.input);
        self.cached = self.cached.saturating_add(other.cached);
        self.written = self.written.saturating_add(other.written);
        self.output = self.output.saturating_add(other.output);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
        self.total = self.total.saturating_add(other.total);
    }

    /// Input tokens not read from the cache (written ones included):
    /// ccusage's `inputTokens`.
    pub fn uncached(&self) -> u64 {
        self.input.saturating_sub(self.cached)
    }
}

/// One model's usage within a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexModelUsage {
    /// The model id, [`FALLBACK_MODEL`] when the session named none.
    pub model: String,
    /// Whether the model is [`FALLBACK_MODEL`] assumed, not recorded.
    pub is_fallback: bool,
    /// Token sums.
    pub tokens: CodexTokens,
    /// Each counted call, in file order.
    pub calls: Vec<CodexCall>,
}

/// One counted call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodexCall {
    /// Its token_count's time (Unix ms).
    pub at_ms: u64,
    /// Its tokens.
    pub tokens: CodexTokens,
}

/// One session: one rollout file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodexSessionUsage {
    /// ccusage's session id: the file's path below `sessions/` (or
    /// `archived_sessions/`) without `.jsonl`
    /// (`2026/02/23/rollout-2026-02-23T12-40-23-<uuid>`), else its stem.
    pub session_id: String,
    /// Codex's own id (`session_meta.id`), when recorded.
    pub codex_id: Option<String>,
    /// The session's working directory (`session_meta.cwd`).
    pub cwd: Option<String>,
    /// The rollout file.
    pub file: PathBuf,
    /// Per model, sorted by model id.
    pub models: Vec<CodexModelUsage>,
    /// The models in the order first counted.
    pub models_seen: Vec<String>,
    /// Time of the earliest counted call's token_count (Unix ms).
    pub first_ms: Option<u64>,
    /// Time of the latest counted call's token_count (Unix ms).
    pub last_ms: Option<u64>,
}

impl CodexSessionUsage {
    /// The session's sums over all models.
    pub fn totals(&self) -> CodexTokens {
        let mut t = CodexTokens::default();
        self.models.iter().for_each(|m| t.add(&m.tokens));
        t
    }

    /// The directory part of [`Self::session_id`] (`2026/02/23`, or empty).
    pub fn directory(&self) -> &str {
        self.session_id
            .rfind('/')
            .map_or("", |i| &self.session_id[..i])
    }

    /// The file part of [`Self::session_id`].
    pub fn session_file(&self) -> &str {
        self.session_id
            .rfind('/')
            .map_or(&self.session_id, |i| &self.session_id[i + 1..])
    }
}

/// The result of [`scan_usage`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CodexUsageScan {
    /// Sessions with counted calls, sorted by session id (ccusage's order).
    pub sessions: Vec<CodexSessionUsage>,
    /// Rollout files read.
    pub files: usize,
    /// Of those, files without a counted call.
    pub empty_files: usize,
    /// token_count events with usage, before dropping repeats.
    pub rows: usize,
    /// Of those, events dropped: a repeated `total_token_usage` or a
    /// fork's copy of its parent's counts.
    pub duplicate_rows: usize,
    /// Counted calls without a timestamp (ccusage drops them), and files
    /// whose session another file (its copy under `sessions/`) already
    /// gave.
    pub unbilled_rows: usize,
    /// Lines that could not be read, skipped as ccusage skips them.
    pub skipped_lines: usize,
}

impl CodexUsageScan {
    /// Sums over every session.
    pub fn totals(&self) -> CodexTokens {
        let mut t = CodexTokens::default();
        self.sessions.iter().for_each(|s| t.add(&s.totals()));
        t
    }
}

/// Sums the usage recorded in Codex rollouts per session (rollout file)
/// and model, as ccusage's Codex report counts it.
///
/// Inputs are found as the importer finds them (a Codex home, a folder
/// below it, rollout files) and each file read by its reader, damaged lines
/// skipped: a call is a `token_count` event with new usage; an event whose
/// `total_token_usage` repeats the previous one, and the counts a fork or a
/// subagent's session copied from its parent, are not calls (see the
/// module [`crate::codex`]). A call's model is the latest `turn_context`'s
/// before it, else [`FALLBACK_MODEL`]. A session is a file, named by its
/// path below `sessions/`; when `sessions/` and `archived_sessions/` hold
/// the same path, the active copy is counted (as ccusage does).
pub fn scan_usage(inputs: &[PathBuf]) -> Result<CodexUsageScan, ImportError> {
    let files = super::discover(inputs, None)?;
    let opts = ImportOptions {
        skip_invalid: true,
        ..ImportOptions::default()
    };
    let mut scan = CodexUsageScan::default();
    let mut by_id: BTreeMap<String, CodexSessionUsage> = BTreeMap::new();
    for path in &files {
        let mut report = ImportSummary::default();
        let mut un = Unmapped::default();
        let r = super::read(path, &opts, &mut report, &mut un)?;
        scan.files += 1;
        scan.skipped_lines += report.skipped_lines;
        scan.rows += r.counted.len() + r.repeats;
        scan.duplicate_rows += r.repeats;
        let mut s = CodexSessionUsage {
            session_id: session_id(path),
            codex_id: r.id.clone(),
            cwd: r.cwd.clone(),
            file: path.clone(),
            models: Vec::new(),
            models_seen: Vec::new(),
            first_ms: None,
            last_ms: None,
        };
        let mut models: BTreeMap<String, CodexModelUsage> = BTreeMap::new();
        for c in &r.counted {
            let Some(ts) = c.ts else {
                scan.unbilled_rows += 1;
                continue;
            };
            let (model, is_fallback) = match &c.model {
                Some(m) => (m.clone(), false),
                None => (FALLBACK_MODEL.to_owned(), true),
            };
            let tokens = CodexTokens {
                input: c.input,
                cached: c.cached.min(c.input),
                written: c.written,
                output: c.output,
                reasoning: c.reasoning,
                total: if c.total > 0 {
                    c.total
                } else {
                    c.input.saturating_add(c.output)
                },
            };
            if !models.contains_key(&model) {
                s.models_seen.push(model.clone());
            }
            let m = models
                .entry(model.clone())
                .or_insert_with(|| CodexModelUsage {
                    model,
                    is_fallback: false,
                    tokens: CodexTokens::default(),
                    calls: Vec::new(),
                });
            m.is_fallback |= is_fallback;
            m.tokens.add(&tokens);
            m.calls.push(CodexCall { at_ms: ts, tokens });
            s.first_ms = Some(s.first_ms.map_or(ts, |t| t.min(ts)));
            s.last_ms = Some(s.last_ms.map_or(ts, |t| t.max(ts)));
        }
        s.models = models.into_values().collect();
        if s.models.is_empty() {
            scan.empty_files += 1;
            continue;
        }
        let calls = |s: &CodexSessionUsage| s.models.iter().map(|m| m.calls.len()).sum::<usize>();
        match by_id.get(&s.session_id) {
            // The active copy wins over the archived one.
            Some(old) if !is_archived(&old.file) || is_archived(&s.file) => {
                scan.unbilled_rows += calls(&s);
            }
            old => {
                scan.unbilled_rows += old.map_or(0, calls);
                by_id.insert(s.session_id.clone(), s);
            }
        }
    }
    scan.sessions = by_id.into_values().collect();
    Ok(scan)
}

const ROOTS: [&str; 2] = ["sessions", "archived_sessions"];

fn is_archived(path: &Path) -> bool {
    path.components()
        .any(|c| c.as_os_str() == "archived_sessions")
}

/// ccusage's session id: the path below the nearest `sessions/` or
/// `archived_sessions/`, `/`-separated, without `.jsonl`; else the stem.
fn session_id(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let below = parts
        .iter()
        .rposition(|p| ROOTS.contains(&p.as_str()))
        .map(|i| &parts[i + 1..])
        .filter(|rest| !rest.is_empty());
    let joined = match below {
        Some(rest) => rest.join("/"),
        None => parts.last().cloned().unwrap_or_default(),
    };
    match joined.strip_suffix(".jsonl") {
        Some(s) => s.to_owned(),
        None => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_are_paths_below_the_sessions_folder() {
        let p = Path::new("/h/.codex/sessions/2026/02/23/rollout-a.jsonl");
        assert_eq!(session_id(p), "2026/02/23/rollout-a");
        let p = Path::new("/h/.codex/archived_sessions/rollout-b.jsonl");
        assert_eq!(session_id(p), "rollout-b");
        assert_eq!(session_id(Path::new("/tmp/x/rollout-c.jsonl")), "rollout-c");
        assert!(is_archived(Path::new("/h/archived_sessions/r.jsonl")));
    }
}

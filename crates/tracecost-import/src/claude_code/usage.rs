//! A ccusage-compatible usage scan of Claude Code transcripts.
//!
//! [`scan_usage`] sums recorded tokens per session and model the way ccusage
//! does, keeping each counted response's tokens so that it can be priced on
//! its own, without building traces: only lines containing `"usage"` are
//! parsed, into a small borrowed struct, and rows are deduplicated across
//! all files (see [`scan_usage`] for the rule).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use rayon::prelude::*;
use serde::Deserialize;

use super::{
    Flag, SYNTHETIC_MODEL, UsageDoc, discover, file_info, for_each_line, read_file, usage_total,
};
use crate::ImportError;
use crate::time::parse_rfc3339_ms;
use tracecost_trace::{RecordedModifiers, RecordedUsage};

/// Sums the usage recorded in Claude Code transcripts per session and
/// model, as ccusage counts it (for a ccusage-compatible usage report), and
/// keeps each counted response's tokens ([`ModelUsage::responses`]): a
/// price is decided per request, so sums alone cannot be priced.
///
/// Files are discovered as by [`super::import`] and read in parallel; only lines
/// containing `"usage"` are parsed, into a struct holding just the fields
/// needed. A row is kept when it passes ccusage's checks: a parsable
/// timestamp, no `null` in the fields ccusage cannot take null (`id`,
/// `model`, `requestId`, token counts, …), a semver `version`, no empty ids;
/// rows with `isApiErrorMessage`, model `<synthetic>` or malformed token
/// counts carry no billable tokens and are counted in
/// [`UsageScan::unbilled_rows`] instead.
///
/// Deduplication (ccusage's rule), over the rows of all files in sorted path
/// order: rows with the same (`message.id`, `requestId`) are one response,
/// and only one row is kept. A sidechain row whose `message.id` matches an
/// earlier row (or a row matching an earlier sidechain row by `message.id`
/// alone) is also the same response: subagent logs can replay a parent
/// message under a new request id. On a collision the kept row is the
/// non-sidechain one if exactly one is a sidechain row, else the one with
/// the larger token total (input + output + cache writes + cache reads),
/// else the one recording a `speed`; ties keep the earlier row. Rows without
/// `message.id` are never merged.
///
/// Sessions are named as ccusage names them: `<project>/<session>.jsonl`
/// is session `<session>` of project `<project>`, and a file under
/// `<project>/<session>/subagents/` counts toward its parent `<session>`.
/// A top-level `<project>/agent-<id>.jsonl` (an older Claude Code's
/// subagent log) counts toward the session its rows name (`sessionId`),
/// as `report` counts it; ccusage makes it a session of its own.
/// Cache writes are split 5m / 1h from `cache_creation`; without that
/// breakdown all writes count as 5m.
pub fn scan_usage(inputs: &[PathBuf]) -> Result<UsageScan, ImportError> {
    let files = discover(inputs)?;
    let scanned: Vec<Result<FileScan, ImportError>> = files
        .par_iter()
        .map(|path| read_file(path).map(|bytes| scan_bytes(&bytes)))
        .collect();
    let mut scan = UsageScan::default();
    let mut rows: Vec<(usize, ScanRow)> = Vec::new();
    for (i, s) in scanned.into_iter().enumerate() {
        let s = s?;
        scan.files += 1;
        scan.empty_files += usize::from(s.empty);
        scan.skipped_lines += s.skipped_lines;
        scan.unbilled_rows += s.unbilled_rows;
        rows.extend(s.rows.into_iter().map(|r| (i, r)));
    }
    scan.rows = rows.len();
    let kept = dedup_rows(rows);
    scan.duplicate_rows = scan.rows - kept.len();

    let mut sessions: BTreeMap<(String, String), SessionAcc> = BTreeMap::new();
    for (file, row) in kept {
        let info = files.get(file).map(|p| file_info(p));
        let (project, session) = match info {
            // An older Claude Code wrote a subagent's log beside its
            // session's, as `agent-<id>.jsonl`: its rows name the session
            // that ran it, and it counts there, as `report` counts it
            // (ccusage lists it as a session of its own).
            Some(i) if i.subagent && !i.nested => {
                let session = row.session.as_deref().map_or(i.session, str::to_owned);
                (i.project, session)
            }
            Some(i) => (i.project, i.session),
            None => ("unknown".to_owned(), "unknown".to_owned()),
        };
        let acc = sessions.entry((project, session)).or_default();
        let model = match (&row.model, row.modifiers.fast) {
            (Some(m), true) => format!("{m}-fast"),
            (Some(m), false) => m.to_string(),
            (None, _) => "unknown".to_owned(),
        };
        acc.count(model, row.tokens, row.ts, row.modifiers);
        // An advisor's usage records no modifier of its own.
        for (advisor, tokens) in &row.advisors {
            acc.count(
                advisor.to_string(),
                *tokens,
                row.ts,
                RecordedModifiers::default(),
            );
        }
        acc.first_ms = Some(acc.first_ms.map_or(row.ts, |t| t.min(row.ts)));
        acc.last_ms = Some(acc.last_ms.map_or(row.ts, |t| t.max(row.ts)));
    }
    scan.sessions = sessions
        .into_iter()
        .map(|((project_path, session_id), acc)| SessionUsage {
            session_id,
            project_path,
            models: acc
                .models
                .into_iter()
                .map(
                    |(model, (tokens, responses, response_ms, modifiers))| ModelUsage {
                        model,
                        tokens,
                        responses,
                        response_ms,
                        response_modifiers: modifiers,
                    },
                )
                .collect(),
            models_seen: acc.seen,
            first_ms: acc.first_ms,
            last_ms: acc.last_ms,
        })
        .collect();
    Ok(scan)
}

/// Token sums by kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenSums {
    /// Uncached input tokens.
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Cache writes with a 5-minute TTL (all writes when the source has no
    /// 5m/1h breakdown).
    pub cache_creation_5m: u64,
    /// Cache writes with a 1-hour TTL.
    pub cache_creation_1h: u64,
    /// Cache reads.
    pub cache_read: u64,
}

impl TokenSums {
    /// Adds `other` to these sums (saturating).
    pub fn add(&mut self, other: &TokenSums) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.cache_creation_5m = self
            .cache_creation_5m
            .saturating_add(other.cache_creation_5m);
        self.cache_creation_1h = self
            .cache_creation_1h
            .saturating_add(other.cache_creation_1h);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
    }

    /// All tokens of every kind (ccusage's "total tokens").
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_creation_5m)
            .saturating_add(self.cache_creation_1h)
            .saturating_add(self.cache_read)
    }

    /// The sums of one recorded usage (cache writes split as documented on
    /// [`scan_usage`]).
    pub fn from_usage(u: &RecordedUsage) -> Self {
        let e1 = u.ephemeral_1h_input_tokens.unwrap_or(0);
        let writes = u
            .cache_creation_input_tokens
            .unwrap_or_else(|| u.ephemeral_5m_input_tokens.unwrap_or(0).saturating_add(e1));
        let h1 = e1.min(writes);
        TokenSums {
            input: u.input_tokens.unwrap_or(0),
            output: u.output_tokens.unwrap_or(0),
            cache_creation_5m: writes - h1,
            cache_creation_1h: h1,
            cache_read: u.cache_read_input_tokens.unwrap_or(0),
        }
    }
}

/// One model's usage within a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelUsage {
    /// The model id (`<id>-fast` for rows recorded with `speed: "fast"`,
    /// `unknown` when the row names none).
    pub model: String,
    /// Token sums.
    pub tokens: TokenSums,
    /// The tokens of each response counted (usage rows kept after
    /// deduplication), in the order their rows were read (files in sorted
    /// path order, lines in file order). A response is priced on its own
    /// (at the price in force on its day, [`ModelUsage::response_ms`]):
    /// the long-context premium depends on one request's input, not on a
    /// sum.
    pub responses: Vec<TokenSums>,
    /// When each response of `responses` was recorded (its row's
    /// `timestamp`, Unix milliseconds), in the same order.
    pub response_ms: Vec<u64>,
    /// The price modifiers each response's usage records (fast mode, its
    /// geography, its tier), in the same order.
    pub response_modifiers: Vec<RecordedModifiers>,
}

/// One session's usage.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionUsage {
    /// The session id as ccusage names it (the file stem, or the parent
    /// session of a `subagents/` file).
    pub session_id: String,
    /// The project directory name (`-Users-me-src-app`).
    pub project_path: String,
    /// Per model, sorted by model id.
    pub models: Vec<ModelUsage>,
    /// The models in the order their first counted row was read (files in
    /// sorted path order, lines in file order): ccusage lists a session's
    /// models so.
    pub models_seen: Vec<String>,
    /// Timestamp of the session's earliest counted row (Unix ms).
    pub first_ms: Option<u64>,
    /// Timestamp of the session's latest counted row (Unix ms).
    pub last_ms: Option<u64>,
}

impl SessionUsage {
    /// The session's sums over all models.
    pub fn totals(&self) -> TokenSums {
        let mut t = TokenSums::default();
        for m in &self.models {
            t.add(&m.tokens);
        }
        t
    }
}

/// The result of [`scan_usage`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UsageScan {
    /// Sessions sorted by project, then session id.
    pub sessions: Vec<SessionUsage>,
    /// Files read.
    pub files: usize,
    /// Files that were empty.
    pub empty_files: usize,
    /// Lines containing `"usage"` that were not valid JSON (or UTF-8) or did
    /// not have the expected shape; skipped as ccusage skips them.
    pub skipped_lines: usize,
    /// Usage rows read with billable tokens, before deduplication.
    pub rows: usize,
    /// Of those, rows dropped as duplicates of another row.
    pub duplicate_rows: usize,
    /// Usage rows carrying no billable tokens, or rejected by ccusage's
    /// validity checks (see [`scan_usage`]).
    pub unbilled_rows: usize,
}

impl UsageScan {
    /// Sums over every session and model.
    pub fn totals(&self) -> TokenSums {
        let mut t = TokenSums::default();
        for s in &self.sessions {
            t.add(&s.totals());
        }
        t
    }

    /// Sums per model over every session, sorted by model id (each model's
    /// responses in session order).
    pub fn totals_by_model(&self) -> Vec<ModelUsage> {
        let mut by: BTreeMap<&str, ModelUsage> = BTreeMap::new();
        for m in self.sessions.iter().flat_map(|s| &s.models) {
            let e = by.entry(&m.model).or_insert_with(|| ModelUsage {
                model: m.model.clone(),
                tokens: TokenSums::default(),
                responses: Vec::new(),
                response_ms: Vec::new(),
                response_modifiers: Vec::new(),
            });
            e.tokens.add(&m.tokens);
            e.responses.extend_from_slice(&m.responses);
            e.response_ms.extend_from_slice(&m.response_ms);
            e.response_modifiers
                .extend_from_slice(&m.response_modifiers);
        }
        by.into_values().collect()
    }
}

/// A usage line, with only the members the scan reads; everything else
/// (message content above all) is skipped by the parser without being
/// built.
#[derive(Deserialize)]
struct ScanLine<'a> {
    #[serde(default, borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "sessionId", default, borrow)]
    session_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    version: Option<Cow<'a, str>>,
    #[serde(rename = "requestId", default, borrow)]
    request_id: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Flag,
    #[serde(rename = "isApiErrorMessage", default)]
    is_api_error: Flag,
    #[serde(default, borrow)]
    message: Option<ScanMessage<'a>>,
}

#[derive(Deserialize)]
struct ScanMessage<'a> {
    #[serde(default, borrow)]
    id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    model: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    usage: Option<UsageDoc<'a>>,
}

/// One usage row kept by the per-file pass.
#[derive(Debug, Clone)]
struct ScanRow {
    msg_id: Option<Box<str>>,
    request_id: Option<Box<str>>,
    /// The row's `sessionId`: the session an older Claude Code's top-level
    /// `agent-*.jsonl` belongs to.
    session: Option<Box<str>>,
    sidechain: bool,
    model: Option<Box<str>>,
    /// Fast mode, geography and tier, from the row's usage.
    modifiers: RecordedModifiers,
    has_speed: bool,
    tokens: TokenSums,
    /// Advisor iterations (model, tokens): billed to their own model,
    /// outside `tokens`, and kept or dropped with the row.
    advisors: Vec<(Box<str>, TokenSums)>,
    total: u64,
    ts: u64,
}

#[derive(Debug, Default)]
struct FileScan {
    rows: Vec<ScanRow>,
    skipped_lines: usize,
    unbilled_rows: usize,
    empty: bool,
}

#[derive(Default)]
struct SessionAcc {
    /// Per model: the sums, each response's tokens, time and modifiers.
    #[allow(clippy::type_complexity)]
    models: BTreeMap<String, (TokenSums, Vec<TokenSums>, Vec<u64>, Vec<RecordedModifiers>)>,
    /// The models in the order first seen.
    seen: Vec<String>,
    first_ms: Option<u64>,
    last_ms: Option<u64>,
}

impl SessionAcc {
    /// Counts one response's tokens toward `model`.
    fn count(&mut self, model: String, tokens: TokenSums, ts: u64, modifiers: RecordedModifiers) {
        if !self.models.contains_key(&model) {
            self.seen.push(model.clone());
        }
        let m = self.models.entry(model).or_default();
        m.0.add(&tokens);
        m.1.push(tokens);
        m.2.push(ts);
        m.3.push(modifiers);
    }
}

/// Fields ccusage's loader cannot take `null` in: a line with one is
/// skipped whole (checked on the bytes, as ccusage does, for compact JSON).
const NON_NULLABLE: [&str; 11] = [
    "id",
    "cwd",
    "model",
    "speed",
    "costUSD",
    "version",
    "sessionId",
    "requestId",
    "isApiErrorMessage",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
];

fn has_non_nullable_null(line: &str) -> bool {
    let mut rest = line;
    while let Some(i) = rest.find("\":null") {
        let before = &rest[..i];
        if let Some(start) = before.rfind('"')
            && NON_NULLABLE.contains(&&before[start + 1..])
        {
            return true;
        }
        rest = &rest[i + 6..];
    }
    false
}

/// `1.2.3…`: ccusage ignores rows whose `version` is not a semver prefix.
fn is_semver_prefix(v: &str) -> bool {
    let mut parts = v.splitn(3, '.');
    let digits =
        |s: Option<&str>| s.is_some_and(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()));
    let (a, b) = (parts.next(), parts.next());
    let c = parts.next();
    digits(a)
        && digits(b)
        && c.is_some_and(|c| c.bytes().next().is_some_and(|b| b.is_ascii_digit()))
}

fn scan_bytes(bytes: &[u8]) -> FileScan {
    let mut out = FileScan::default();
    // Reading from memory cannot fail.
    let blank = for_each_line(bytes, |line| {
        let Some(line) = line else {
            out.skipped_lines += 1;
            return;
        };
        let line = line.text();
        if !line.contains("\"usage\"") {
            return;
        }
        match scan_line(line) {
            ScanResult::NotUsage => {}
            ScanResult::Invalid => out.skipped_lines += 1,
            ScanResult::Unbilled => out.unbilled_rows += 1,
            ScanResult::Row(r) => out.rows.push(r),
        }
    });
    out.empty = matches!(blank, Ok(true));
    out
}

enum ScanResult {
    NotUsage,
    Invalid,
    Unbilled,
    Row(ScanRow),
}

fn scan_line(line: &str) -> ScanResult {
    let Ok(doc) = serde_json::from_str::<ScanLine>(line) else {
        return ScanResult::Invalid;
    };
    let Some(msg) = doc.message else {
        return ScanResult::NotUsage;
    };
    let Some(usage) = &msg.usage else {
        return ScanResult::NotUsage;
    };
    if has_non_nullable_null(line) {
        return ScanResult::Unbilled;
    }
    let Some(ts) = doc.timestamp.as_deref().and_then(parse_rfc3339_ms) else {
        return ScanResult::Unbilled;
    };
    let empty = |s: &Option<Cow<str>>| s.as_deref().is_some_and(str::is_empty);
    if doc.version.as_deref().is_some_and(|v| !is_semver_prefix(v))
        || empty(&doc.session_id)
        || empty(&doc.request_id)
        || empty(&msg.id)
        || empty(&msg.model)
    {
        return ScanResult::Unbilled;
    }
    if doc.is_api_error.0 || msg.model.as_deref() == Some(SYNTHETIC_MODEL) {
        return ScanResult::Unbilled;
    }
    let Some(u) = usage.recorded() else {
        return ScanResult::Unbilled;
    };
    ScanResult::Row(ScanRow {
        msg_id: msg.id.as_deref().map(Box::from),
        request_id: doc.request_id.as_deref().map(Box::from),
        session: doc.session_id.as_deref().map(Box::from),
        sidechain: doc.is_sidechain.0,
        model: msg.model.as_deref().map(Box::from),
        modifiers: u.modifiers,
        has_speed: usage.speed.is_some_and(|s| s.get() != "null"),
        tokens: TokenSums::from_usage(&u),
        advisors: usage
            .advisor_iterations()
            .into_iter()
            .map(|(m, a)| (Box::from(m), TokenSums::from_usage(&a)))
            .collect(),
        total: usage_total(&u),
        ts,
    })
}

/// Whether `candidate` replaces `existing` on a dedup collision (ccusage):
/// a non-sidechain row beats a sidechain one, then the larger token total,
/// then a row recording `speed`.
fn replaces(candidate: &ScanRow, existing: &ScanRow) -> bool {
    if candidate.sidechain != existing.sidechain {
        return existing.sidechain;
    }
    if candidate.total != existing.total {
        return candidate.total > existing.total;
    }
    candidate.has_speed && !existing.has_speed
}

/// The identity of one API response across a session's files: rows (or
/// calls) with equal keys are one response, billed once. ccusage's rule,
/// the one place it is stated for `usage`, `fidelity` and `report` alike:
/// the same `message.id` and `requestId`; or the same `message.id` where
/// either is a sidechain row (subagent logs replay a parent message under
/// a new request id). Rows without `message.id` are never one response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResponseKey {
    /// `message.id`.
    pub msg_id: Box<str>,
    /// `requestId`.
    pub request_id: Option<Box<str>>,
    /// Whether the row is a sidechain (subagent) row.
    pub sidechain: bool,
}

impl ResponseKey {
    /// Whether `self` and `other` are one response by the loose half of the
    /// rule (the exact half is found first, see [`ResponseIndex::find`]).
    fn loosely_same(&self, other: &Self) -> bool {
        self.msg_id == other.msg_id && (self.sidechain || other.sidechain)
    }

    fn exactly_same(&self, other: &Self) -> bool {
        self.msg_id == other.msg_id && self.request_id == other.request_id
    }
}

/// Responses seen so far, in slots: which slot a new row's response
/// already holds ([`ResponseKey`]'s rule, the exact match first).
#[derive(Debug, Default)]
pub(crate) struct ResponseIndex {
    by_msg: HashMap<Box<str>, Vec<(usize, ResponseKey)>>,
}

impl ResponseIndex {
    /// The slot holding `key`'s response, if one does.
    pub fn find(&self, key: &ResponseKey) -> Option<usize> {
        let v = self.by_msg.get(&key.msg_id)?;
        v.iter()
            .find(|(_, k)| k.exactly_same(key))
            .or_else(|| v.iter().find(|(_, k)| k.loosely_same(key)))
            .map(|(slot, _)| *slot)
    }

    /// Records that `slot` now holds `key`'s row.
    pub fn set(&mut self, slot: usize, key: ResponseKey) {
        let v = self.by_msg.entry(key.msg_id.clone()).or_default();
        match v.iter_mut().find(|(s, _)| *s == slot) {
            Some(e) => e.1 = key,
            None => v.push((slot, key)),
        }
    }
}

impl ScanRow {
    fn key(&self) -> Option<ResponseKey> {
        Some(ResponseKey {
            msg_id: self.msg_id.clone()?,
            request_id: self.request_id.clone(),
            sidechain: self.sidechain,
        })
    }
}

/// ccusage's deduplication over all rows, in order (see [`scan_usage`]).
fn dedup_rows(rows: Vec<(usize, ScanRow)>) -> Vec<(usize, ScanRow)> {
    let mut kept: Vec<(usize, ScanRow)> = Vec::with_capacity(rows.len());
    let mut index = ResponseIndex::default();
    for (file, row) in rows {
        let Some(key) = row.key() else {
            kept.push((file, row));
            continue;
        };
        match index.find(&key) {
            Some(i) => {
                if replaces(&row, &kept[i].1) {
                    kept[i] = (file, row);
                    index.set(i, key);
                }
            }
            None => {
                kept.push((file, row));
                index.set(kept.len() - 1, key);
            }
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_rules() {
        let u = |s: &str| serde_json::from_str::<UsageDoc>(s).unwrap().recorded();
        assert!(
            u(r#"{"input_tokens":1,"output_tokens":2,"cache_read_input_tokens":null}"#).is_none()
        );
        assert!(u(r#"{"input_tokens":null,"output_tokens":2}"#).is_none());
        assert!(u(r#"{"output_tokens":2}"#).is_none());
        assert!(u(r#"{"input_tokens":1,"output_tokens":200000000000}"#).is_none());
        let r = u(r#"{"input_tokens":1,"output_tokens":2,"cache_creation_input_tokens":30,"cache_creation":{"ephemeral_5m_input_tokens":10,"ephemeral_1h_input_tokens":20},"service_tier":"standard"}"#).unwrap();
        assert_eq!(r.ephemeral_1h_input_tokens, Some(20));
        let s = TokenSums::from_usage(&r);
        assert_eq!((s.cache_creation_5m, s.cache_creation_1h), (10, 20));
        let r =
            u(r#"{"input_tokens":1,"output_tokens":2,"cache_creation_input_tokens":30}"#).unwrap();
        assert_eq!(TokenSums::from_usage(&r).cache_creation_5m, 30);
    }

    #[test]
    fn null_fields_and_semver_like_ccusage() {
        assert!(has_non_nullable_null(
            r#"{"message":{"model":null,"usage":{}}}"#
        ));
        assert!(has_non_nullable_null(r#"{"requestId":null}"#));
        assert!(!has_non_nullable_null(
            r#"{"stop_sequence":null,"content":null}"#
        ));
        assert!(is_semver_prefix("2.0.37"));
        assert!(is_semver_prefix("1.0.3-beta"));
        assert!(!is_semver_prefix("2.0"));
        assert!(!is_semver_prefix("x.1.2"));
    }

    fn row(id: &str, req: &str, sidechain: bool, total: u64) -> (usize, ScanRow) {
        (
            0,
            ScanRow {
                msg_id: Some(id.into()),
                request_id: Some(req.into()),
                session: None,
                sidechain,
                model: None,
                modifiers: RecordedModifiers::default(),
                has_speed: false,
                tokens: TokenSums {
                    output: total,
                    ..TokenSums::default()
                },
                advisors: Vec::new(),
                total,
                ts: 0,
            },
        )
    }

    #[test]
    fn dedup_follows_ccusage() {
        // Same key: the larger total wins, in place.
        let kept = dedup_rows(vec![
            row("m", "r", false, 5),
            row("m", "r", false, 9),
            row("m", "r", false, 7),
        ]);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].1.total, 9);
        // A sidechain replay of a parent message under a new request id is
        // dropped even when larger; a new sidechain message is kept.
        let kept = dedup_rows(vec![
            row("p", "r1", false, 20),
            row("p", "r2", true, 50_000),
            row("s", "r3", true, 700),
        ]);
        assert_eq!(kept.len(), 2);
        assert_eq!(kept[0].1.total, 20);
        // The parent replaces an earlier sidechain replay.
        let kept = dedup_rows(vec![
            row("p", "r2", true, 50_000),
            row("p", "r1", false, 20),
            row("p", "r1", false, 10),
        ]);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].1.total, 20);
        // Two non-sidechain rows with different request ids stay apart.
        assert_eq!(
            dedup_rows(vec![row("p", "a", false, 1), row("p", "b", false, 1)]).len(),
            2
        );
    }

    #[test]
    fn advisor_iterations_count_toward_their_own_model() {
        // The top-level usage sums the two `message` iterations; the
        // advisor's tokens are in no top-level count.
        let line = r#"{"timestamp":"2026-08-01T10:00:00Z","sessionId":"s","version":"2.1.230","requestId":"r1","message":{"id":"m1","model":"claude-a","usage":{"input_tokens":3,"output_tokens":30,"cache_read_input_tokens":300,"cache_creation_input_tokens":0,"iterations":[{"type":"message","input_tokens":1,"output_tokens":10,"cache_read_input_tokens":100,"cache_creation_input_tokens":0},{"type":"advisor_message","model":"claude-b","input_tokens":500,"output_tokens":40,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},{"type":"message","input_tokens":2,"output_tokens":20,"cache_read_input_tokens":200,"cache_creation_input_tokens":0}]}}}"#;
        let ScanResult::Row(r) = scan_line(line) else {
            panic!("expected a usage row");
        };
        assert_eq!(
            (r.tokens.input, r.tokens.output, r.tokens.cache_read),
            (3, 30, 300)
        );
        assert_eq!(r.advisors.len(), 1);
        let (model, t) = &r.advisors[0];
        assert_eq!(&**model, "claude-b");
        assert_eq!((t.input, t.output, t.cache_read), (500, 40, 0));
        let mut acc = SessionAcc::default();
        acc.count("claude-a".into(), r.tokens, 0, RecordedModifiers::default());
        for (m, t) in &r.advisors {
            acc.count(m.to_string(), *t, 0, RecordedModifiers::default());
        }
        assert_eq!(acc.seen, ["claude-a", "claude-b"]);
    }
}

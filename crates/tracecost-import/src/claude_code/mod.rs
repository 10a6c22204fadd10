//! Claude Code transcripts (`~/.claude/projects/<project>/<session>.jsonl`):
//! the [`transcript`] importer turns them into canonical traces, and the
//! [`usage`] scan sums their recorded usage as ccusage does. This module
//! holds what both read: file discovery, session naming, line splitting and
//! the lenient pieces of the line format (usage objects above all).
//!
//! # Files
//!
//! An input may be a Claude config root (holding `projects/`), the
//! `projects/` directory, one project directory, or individual `.jsonl`
//! files. Directories are walked for `*.jsonl` files (sessions
//! `<project>/<session>.jsonl`, subagents `<project>/agent-*.jsonl` and
//! `<project>/<session>/subagents/*.jsonl`); files are read in sorted path
//! order, so the output is deterministic. Each file becomes one trace (a
//! subagent file its own trace, named `<session>.<agent-file-stem>`), or
//! several when the session was compacted (see [`transcript`]). Files are
//! read in parallel.

pub mod transcript;
pub mod usage;

use std::borrow::Cow;
use std::fmt;
use std::io::{self, BufRead};
use std::path::{Path, PathBuf};

use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::ImportError;
use tracecost_trace::{ABSURD_TOKENS, UTF8_BOM};
use tracecost_trace::{RecordedModifiers, RecordedUsage};

pub use transcript::import;
pub(crate) use transcript::import_each;
pub use usage::{ModelUsage, SessionUsage, TokenSums, UsageScan, scan_usage};

/// How deep directories are walked below an input directory.
const MAX_DEPTH: usize = 8;

/// The model Claude Code writes on messages it made up itself.
const SYNTHETIC_MODEL: &str = "<synthetic>";

// ---------------------------------------------------------------------------
// Discovery
// ---------------------------------------------------------------------------

pub(crate) fn discover(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, ImportError> {
    discover_readable(inputs, None)
}

/// [`discover`]; with `unread`, a folder below the inputs that cannot be
/// read is passed over and listed there with why, instead of failing.
pub(crate) fn discover_readable(
    inputs: &[PathBuf],
    mut unread: Option<&mut Vec<(PathBuf, String)>>,
) -> Result<Vec<PathBuf>, ImportError> {
    let mut files = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input).map_err(|source| ImportError::Io {
            path: input.clone(),
            source,
        })?;
        if meta.is_file() {
            files.push(input.clone());
            continue;
        }
        let projects = input.join("projects");
        let root = if projects.is_dir() {
            projects
        } else {
            input.clone()
        };
        walk(&root, 0, &mut files, unread.as_deref_mut())?;
    }
    files.sort_by_cached_key(|p| p.to_string_lossy().into_owned());
    files.dedup();
    if files.is_empty() {
        return Err(ImportError::Empty(format!(
            "no Claude Code transcripts (*.jsonl) found in {}",
            crate::shown(inputs)
        )));
    }
    Ok(files)
}

// Walked by hand rather than with walkdir: a folder that cannot be read
// below the inputs is passed over and said when asked, but is an error at
// the input itself, and an entry whose type cannot be read is skipped,
// where walkdir gives every failure as one kind of error item.
fn walk(
    dir: &Path,
    depth: usize,
    files: &mut Vec<PathBuf>,
    mut unread: Option<&mut Vec<(PathBuf, String)>>,
) -> Result<(), ImportError> {
    let io = |source| ImportError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        // Below the inputs, a folder that cannot be read is passed over
        // when asked (the input itself must be readable).
        Err(e) if depth > 0 && unread.is_some() => {
            if let Some(u) = unread {
                u.push((dir.to_path_buf(), format!("cannot read: {e}")));
            }
            return Ok(());
        }
        Err(e) => return Err(io(e)),
    };
    for entry in entries {
        let entry = entry.map_err(io)?;
        let path = entry.path();
        let Ok(ft) = entry.file_type() else { continue };
        // Symlinked directories are not followed (no loops); symlinked
        // files are read.
        if ft.is_dir() {
            if depth < MAX_DEPTH {
                walk(&path, depth + 1, files, unread.as_deref_mut())?;
            }
        } else if path.extension().is_some_and(|e| e == "jsonl") && (ft.is_file() || path.is_file())
        {
            files.push(path);
        }
    }
    Ok(())
}

fn read_file(path: &Path) -> Result<Vec<u8>, ImportError> {
    std::fs::read(path).map_err(|source| ImportError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Where a file sits: its project, its session (ccusage's naming) and
/// whether it is a subagent's log.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileInfo {
    project: String,
    /// The account whose cache the session used.
    account: String,
    /// The session it belongs to: its stem, or the parent session of a
    /// `subagents/` file.
    session: String,
    /// The file name without `.jsonl`.
    stem: String,
    /// A subagent's log (`agent-*.jsonl` or under `subagents/`).
    subagent: bool,
    /// Under `<session>/subagents/`.
    nested: bool,
}

fn file_info(path: &Path) -> FileInfo {
    let parts: Vec<&str> = path
        .components()
        .filter_map(|c| c.as_os_str().to_str())
        .collect();
    let name = parts.last().copied().unwrap_or("unknown");
    let stem = name.strip_suffix(".jsonl").unwrap_or(name).to_owned();
    let rel: &[&str] = match parts.iter().rposition(|p| *p == "projects") {
        Some(i) => &parts[i + 1..],
        None => &[],
    };
    let n = parts.len();
    let nested = n >= 3 && parts[n - 2] == "subagents";
    let subagent = nested || stem.starts_with("agent-");
    let (project, session) = if nested {
        // <project>/<session>/subagents/<agent>.jsonl
        let session = parts[n - 3].to_owned();
        let project = if rel.len() >= 4 {
            rel[..rel.len() - 3].join("/")
        } else if n >= 4 {
            parts[n - 4].to_owned()
        } else {
            "unknown".to_owned()
        };
        (project, session)
    } else if rel.len() == 2 {
        (rel[0].to_owned(), stem.clone())
    } else if rel.len() > 2 {
        // ccusage: a nested file belongs to the session directory above it.
        (
            rel[..rel.len() - 2].join("/"),
            rel[rel.len() - 2].to_owned(),
        )
    } else if n >= 2 {
        (parts[n - 2].to_owned(), stem.clone())
    } else {
        ("unknown".to_owned(), stem.clone())
    };
    // One account per Claude config root (the folder holding `projects/`):
    // its sessions shared the provider's cache.
    let account = match parts.iter().rposition(|p| *p == "projects") {
        Some(i) if i > 0 => format!(
            "claude-code:{}",
            parts[..i].join("/").replacen("//", "/", 1)
        ),
        _ => "claude-code".to_owned(),
    };
    FileInfo {
        account,
        project,
        session,
        stem,
        subagent,
        nested,
    }
}

/// One line read by [`for_each_line`], in the buffer the reader reuses
/// for the next line.
pub(super) struct Line<'a> {
    buf: &'a mut String,
    start: usize,
    end: usize,
}

impl Line<'_> {
    /// The line's text (UTF-8 BOM, `\n` and `\r` removed).
    pub(super) fn text(&self) -> &str {
        self.buf.get(self.start..self.end).unwrap_or("")
    }

    /// Gives the buffer's memory back; the line reads as empty from then
    /// on. For a caller that has taken what it needs from a very long line
    /// and is about to build its own copy of the line's text: the line and
    /// that copy are then not held at once.
    pub(super) fn release(&mut self) {
        *self.buf = String::new();
        (self.start, self.end) = (0, 0);
    }
}

/// Calls `f` with each non-blank line (UTF-8 BOM and `\r` removed), or
/// `None` for a line that is not UTF-8, reading one line at a time so a
/// file is never held whole. Returns whether the input was blank (nothing
/// but ASCII whitespace after a BOM).
fn for_each_line<R: BufRead>(
    mut reader: R,
    mut f: impl FnMut(Option<&mut Line<'_>>),
) -> io::Result<bool> {
    // The buffer is handed to `f` as a checked `String` and taken back
    // after it, so a line is checked for UTF-8 once and never copied.
    let mut spare = Vec::new();
    let mut first = true;
    let mut blank = true;
    loop {
        let mut bytes = std::mem::take(&mut spare);
        bytes.clear();
        if reader.read_until(b'\n', &mut bytes)? == 0 {
            return Ok(blank);
        }
        let mut start = 0;
        if std::mem::take(&mut first) && bytes.starts_with(UTF8_BOM) {
            start = UTF8_BOM.len();
        }
        let mut end = bytes.len();
        if bytes.ends_with(b"\n") {
            end -= 1;
        }
        if bytes[start..end].iter().all(u8::is_ascii_whitespace) {
            spare = bytes;
            continue;
        }
        blank = false;
        // The BOM and `\n` are whole characters: the line is UTF-8 exactly
        // when the buffer is.
        match String::from_utf8(bytes) {
            Ok(mut text) => {
                if text[start..end].ends_with('\r') {
                    end -= 1;
                }
                if !text[start..end].trim().is_empty() {
                    f(Some(&mut Line {
                        buf: &mut text,
                        start,
                        end,
                    }));
                }
                spare = text.into_bytes();
            }
            Err(e) => {
                spare = e.into_bytes();
                f(None);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Lenient pieces of the line format
// ---------------------------------------------------------------------------

/// A boolean flag that is `true` only when the member is the JSON `true`;
/// any other value (or none) reads as `false` rather than failing the line.
#[derive(Debug, Clone, Copy, Default)]
struct Flag(bool);

impl<'de> Deserialize<'de> for Flag {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AnyVisitor(|v| match v {
            Scalar::Bool(b) => Flag(b),
            _ => Flag(false),
        }))
    }
}

/// A token count: absent, `null`, a non-negative integer, or anything else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Tok {
    #[default]
    Absent,
    Null,
    Num(u64),
    Bad,
}

impl Tok {
    /// The count when it is one.
    fn num(self) -> Option<u64> {
        match self {
            Tok::Num(n) => Some(n),
            _ => None,
        }
    }

    /// `Some(None)` when absent, `Some(Some(n))` for a count, `None` when
    /// null or malformed (the row then carries no billable tokens).
    fn optional(self) -> Option<Option<u64>> {
        match self {
            Tok::Absent => Some(None),
            Tok::Num(n) => Some(Some(n)),
            Tok::Null | Tok::Bad => None,
        }
    }
}

impl<'de> Deserialize<'de> for Tok {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(AnyVisitor(|v| match v {
            Scalar::Null => Tok::Null,
            Scalar::U64(n) => Tok::Num(n),
            Scalar::I64(n) => u64::try_from(n).map_or(Tok::Bad, Tok::Num),
            _ => Tok::Bad,
        }))
    }
}

/// What [`AnyVisitor`] saw.
enum Scalar {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    Other,
}

/// Accepts any JSON value (draining arrays and objects) and maps it.
struct AnyVisitor<F>(F);

impl<'de, T, F: FnOnce(Scalar) -> T> Visitor<'de> for AnyVisitor<F> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<T, E> {
        Ok((self.0)(Scalar::Null))
    }
    fn visit_none<E>(self) -> Result<T, E> {
        Ok((self.0)(Scalar::Null))
    }
    fn visit_bool<E>(self, v: bool) -> Result<T, E> {
        Ok((self.0)(Scalar::Bool(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<T, E> {
        Ok((self.0)(Scalar::U64(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<T, E> {
        Ok((self.0)(Scalar::I64(v)))
    }
    fn visit_f64<E>(self, _: f64) -> Result<T, E> {
        Ok((self.0)(Scalar::Other))
    }
    fn visit_str<E>(self, _: &str) -> Result<T, E> {
        Ok((self.0)(Scalar::Other))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<T, A::Error> {
        while a.next_element::<IgnoredAny>()?.is_some() {}
        Ok((self.0)(Scalar::Other))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<T, A::Error> {
        while a.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok((self.0)(Scalar::Other))
    }
}

/// The `usage` object of an assistant line.
#[derive(Deserialize)]
struct UsageDoc<'a> {
    #[serde(default)]
    input_tokens: Tok,
    #[serde(default)]
    output_tokens: Tok,
    #[serde(default)]
    cache_creation_input_tokens: Tok,
    #[serde(default)]
    cache_read_input_tokens: Tok,
    #[serde(default)]
    cache_creation: Option<CacheCreationDoc>,
    #[serde(default, borrow)]
    speed: Option<&'a RawValue>,
    /// Where inference ran (`global`, `us`; `not_available` on models
    /// without the parameter).
    #[serde(default, borrow)]
    inference_geo: Option<Cow<'a, str>>,
    /// `standard`, `priority` or `batch`.
    #[serde(default, borrow)]
    service_tier: Option<Cow<'a, str>>,
    /// Claude Code 2.1.227+: the response's server-side iterations. The
    /// top-level counts sum the `message` iterations only; an
    /// `advisor_message` iteration is a second model's request whose tokens
    /// are in no top-level count.
    #[serde(default, borrow)]
    iterations: Option<Vec<IterationDoc<'a>>>,
}

/// One `usage.iterations` entry.
#[derive(Deserialize, Clone)]
struct IterationDoc<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<&'a str>,
    #[serde(default, borrow)]
    model: Option<&'a str>,
    #[serde(default)]
    input_tokens: Tok,
    #[serde(default)]
    output_tokens: Tok,
    #[serde(default)]
    cache_creation_input_tokens: Tok,
    #[serde(default)]
    cache_read_input_tokens: Tok,
    #[serde(default)]
    cache_creation: Option<CacheCreationDoc>,
}

impl IterationDoc<'_> {
    fn recorded(self) -> Option<RecordedUsage> {
        UsageDoc {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_creation_input_tokens: self.cache_creation_input_tokens,
            cache_read_input_tokens: self.cache_read_input_tokens,
            cache_creation: self.cache_creation,
            speed: None,
            inference_geo: None,
            service_tier: None,
            iterations: None,
        }
        .recorded()
    }
}

/// The `type` of an iteration billed to its own model, outside the
/// top-level usage.
const ADVISOR_ITERATION: &str = "advisor_message";

impl<'a> UsageDoc<'a> {
    /// The advisor iterations of this response: (model, usage), each a
    /// request of its own model not counted in the top-level usage.
    fn advisor_iterations(&self) -> Vec<(&'a str, RecordedUsage)> {
        self.iterations
            .iter()
            .flatten()
            .filter(|it| it.kind == Some(ADVISOR_ITERATION))
            .filter_map(|it| Some((it.model?, it.clone().recorded()?)))
            .collect()
    }

    /// The response's requests as the iterations record them, in order:
    /// (the advisor's model for an advisor iteration, `None` for one of
    /// the response's own model; usage). Empty when the row records no
    /// iterations or one of them cannot be read: the top-level usage then
    /// stands for the response.
    fn recorded_iterations(&self) -> Vec<(Option<String>, RecordedUsage)> {
        let Some(its) = &self.iterations else {
            return Vec::new();
        };
        // The response's speed, geography and tier are its own model's
        // iterations' too; an advisor's request records none of its own.
        let served = self.recorded().map(|u| u.modifiers).unwrap_or_default();
        let read: Option<Vec<_>> = its
            .iter()
            .map(|it| {
                let model = match it.kind {
                    Some(ADVISOR_ITERATION) => Some(it.model?.to_owned()),
                    _ => None,
                };
                let mut usage = it.clone().recorded()?;
                if model.is_none() {
                    usage.modifiers = served;
                }
                Some((model, usage))
            })
            .collect();
        read.unwrap_or_default()
    }
}

#[derive(Deserialize, Clone)]
struct CacheCreationDoc {
    #[serde(default)]
    ephemeral_5m_input_tokens: Tok,
    #[serde(default)]
    ephemeral_1h_input_tokens: Tok,
}

impl UsageDoc<'_> {
    /// The usage, or `None` when the row carries no billable tokens
    /// (input or output missing, a null or malformed count, or an absurd
    /// one).
    fn recorded(&self) -> Option<RecordedUsage> {
        let input = self.input_tokens.num()?;
        let output = self.output_tokens.num()?;
        let writes = self.cache_creation_input_tokens.optional()?;
        let reads = self.cache_read_input_tokens.optional()?;
        let (e5, e1) = match &self.cache_creation {
            Some(c) => (
                c.ephemeral_5m_input_tokens.num(),
                c.ephemeral_1h_input_tokens.num(),
            ),
            None => (None, None),
        };
        let all = [input, output, writes.unwrap_or(0), reads.unwrap_or(0)];
        let parts = [e5.unwrap_or(0), e1.unwrap_or(0)];
        if all.iter().chain(&parts).any(|&v| v > ABSURD_TOKENS) {
            return None;
        }
        Some(RecordedUsage {
            input_tokens: Some(input),
            cache_creation_input_tokens: writes,
            ephemeral_5m_input_tokens: e5,
            ephemeral_1h_input_tokens: e1,
            cache_read_input_tokens: reads,
            output_tokens: Some(output),
            modifiers: RecordedModifiers::from_anthropic(
                self.fast().then_some("fast"),
                self.inference_geo.as_deref(),
                self.service_tier.as_deref(),
            ),
            reasoning_tokens: None,
        })
    }

    fn fast(&self) -> bool {
        self.speed.is_some_and(|s| s.get() == "\"fast\"")
    }
}

/// ccusage's token total of a row: what it compares on a collision.
fn usage_total(u: &RecordedUsage) -> u64 {
    u.input_tokens
        .unwrap_or(0)
        .saturating_add(u.output_tokens.unwrap_or(0))
        .saturating_add(u.cache_creation_input_tokens.unwrap_or(0))
        .saturating_add(u.cache_read_input_tokens.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_info_names_sessions_like_ccusage() {
        let i = file_info(Path::new("/h/.claude/projects/p-a/s-1.jsonl"));
        // One account per config root.
        assert_eq!(i.account, "claude-code:/h/.claude");
        assert_eq!(
            (i.project.as_str(), i.session.as_str(), i.subagent),
            ("p-a", "s-1", false)
        );
        let i = file_info(Path::new(
            "/h/.claude/projects/p-a/s-1/subagents/agent-x.jsonl",
        ));
        assert_eq!(
            (i.project.as_str(), i.session.as_str(), i.stem.as_str()),
            ("p-a", "s-1", "agent-x")
        );
        assert!(i.subagent && i.nested);
        let i = file_info(Path::new("/h/.claude/projects/p-a/agent-1.jsonl"));
        assert_eq!(
            (i.session.as_str(), i.subagent, i.nested),
            ("agent-1", true, false)
        );
        let i = file_info(Path::new("/tmp/x/s.jsonl"));
        assert_eq!((i.project.as_str(), i.session.as_str()), ("x", "s"));
    }
}

//! What the request-log, LangChain and OpenAI importers share.
//!
//! This module holds the loop they all run ([`import_files`]: expand the
//! inputs, read each file, name and check the traces) and what that loop
//! reports ([`Unmapped`], [`invalid`], [`reject`]). The pieces each format
//! calls while reading a file are kept apart by the job they do, so that a
//! change to one (say, how batches of lines are read) does not mean reading
//! past the others:
//!
//! - [`json`]: a file's text, as one JSON document or as lines, compacted,
//!   and where a part of it is;
//! - [`lines`]: large logs read a batch of whole lines at a time;
//! - [`http`]: exchange records as HTTP recorders save them;
//! - [`usage`]: recorded usage in Anthropic's and OpenAI's spellings;
//! - [`blocks`]: messages and content blocks in Anthropic's shapes;
//! - [`tools`]: OpenAI's function definitions as Anthropic's;
//! - [`conversations`]: traces built call by call, and which request
//!   extends which.
//!
//! Everything is re-exported here, so an importer names `common::X`
//! whichever file `X` lives in.

mod blocks;
mod conversations;
mod csv;
mod http;
mod interner;
mod json;
mod lines;
mod tools;
mod usage;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::{ImportError, ImportOptions, ImportSummary};
use tracecost_engine::cache::ProviderKind;
use tracecost_trace::Trace;

pub(crate) use blocks::{
    IdGen, ResultContent, cap_markers, estimate_tokens, image_from_url, serde_message,
    split_content, tool_result_block, tool_use_block, with_blocks,
};
pub(crate) use conversations::{
    Conversations, NewCall, ReplyMeta, SharedCall, TraceBuilder, message_key,
};
pub(crate) use csv::each_csv_row;
pub(crate) use http::{
    Exchange, HttpBody, answered, exchange, is_error_body, timestamp_ms, unwrap_request,
    unwrap_response,
};
pub(crate) use interner::{Interner, unshared};
pub(crate) use json::{
    Doc, compact_json, compact_object, each_file_record, each_record, joined_records, position_of,
    read_text, split_doc,
};
pub(crate) use lines::{LineBatch, each_line, read_ahead};
pub(crate) use tools::{function_tools, is_function};
pub(crate) use usage::anthropic_iterations;
pub(crate) use usage::{
    Counts, MALFORMED_USAGE, UsageProblem, count, finish_usage, merge_anthropic_usage, openai_tier,
    openai_usage, service_tier, split_included_input, token_count,
};

/// What one log importer reads: `read` gives a file's conversations and a
/// label for their descriptions (such as "OpenAI Chat Completions
/// calls.jsonl"); `unit` names what a call is in a description,
/// `nothing_found` what to say when no file held anything; files for
/// which `first` holds are read before the others (an OpenTelemetry
/// export's logs, whose per-message events complete the spans of its
/// traces file); `csv`: a folder's `.csv` files are read too.
pub(crate) struct LogFormat {
    pub(crate) unit: &'static str,
    pub(crate) nothing_found: &'static str,
    pub(crate) read: ReadLog,
    pub(crate) first: Option<fn(&Path) -> bool>,
    pub(crate) csv: bool,
}

/// Reads one log file: its conversations and the label of their
/// descriptions.
pub(crate) type ReadLog = fn(
    &Path,
    &ImportOptions,
    &mut ImportSummary,
    &mut Unmapped,
    &mut Shared,
) -> Result<(Vec<TraceBuilder>, String), ImportError>;

/// What the files of one import share, for a format whose calls can be
/// recorded in two files: an OpenTelemetry export puts a call in a span
/// (a traces file) and, with content capture on both, in an inference
/// event (a logs file) too, the event naming its span.
#[derive(Default)]
pub(crate) struct Shared {
    /// The calls already read, by a key that is the same in every record
    /// of one call (OpenTelemetry: its span's trace and span ids).
    pub calls: HashSet<String>,
    /// Records of a call kept for the record that completes it, by the
    /// same key (OpenTelemetry: a span's per-message log events, read
    /// from a logs file before the traces file).
    pub pending: HashMap<String, Vec<Value>>,
    /// The number of the file being read, in the order read.
    pub file: usize,
    /// The files whose pending records completed a call read from another
    /// (a logs file of per-message events gives no call of its own).
    pub completing: HashSet<usize>,
}

/// Said of the [`Shared::pending`] records no record completed.
const UNCLAIMED: &str = "records of a call whose own record is not in the import (OpenTelemetry per-message log events whose span is in no traces file given): not read";

/// The loop every log importer shares: expand the inputs, read each file
/// with the format's `read`, name the traces, check that each one loads,
/// and hand it to `emit` before the next file is read.
pub(crate) fn import_files<E: From<ImportError>>(
    format: &LogFormat,
    inputs: &[PathBuf],
    opts: &ImportOptions,
    progress: &dyn crate::progress::Progress,
    emit: &mut dyn FnMut(Trace) -> Result<(), E>,
) -> Result<ImportSummary, E> {
    let LogFormat {
        unit,
        nothing_found,
        read,
        first,
        csv,
    } = format;
    let mut files = expand_inputs(inputs, *csv)?;
    if let Some(first) = first {
        // A stable sort: path order within each part.
        files.sort_by_key(|f| !first(f));
    }
    let sizes = super::file_sizes(&files);
    progress.start("import", sizes.iter().sum(), crate::progress::Unit::Bytes);
    let mut report = ImportSummary::default();
    let mut un = Unmapped::default();
    let mut shared = Shared::default();
    let mut names = Names::default();
    let mut emitted = 0usize;
    let mut without_calls = Vec::new();
    for (i, (path, size)) in files.iter().zip(sizes).enumerate() {
        report.files += 1;
        shared.file = i;
        let (builders, label) = read(path, opts, &mut report, &mut un, &mut shared)?;
        progress.advance(size);
        if builders.is_empty() {
            without_calls.push(i);
            continue;
        }
        let trace_names = names.for_file(path, builders.len());
        for (b, name) in builders.into_iter().zip(trace_names) {
            let description = format!(
                "{label}: {} {unit} from line {}",
                b.calls.len(),
                b.first_line
            );
            let line = b.first_line;
            let mut trace = b.finish(name, description, opts, &mut un);
            check_loads(&trace, path, line)?;
            trace.source = Some(path.display().to_string());
            emit(trace)?;
            emitted += 1;
        }
    }
    // A file whose records completed calls of another gave calls too.
    report.skipped_files += without_calls
        .iter()
        .filter(|i| !shared.completing.contains(i))
        .count();
    let unclaimed: usize = shared.pending.values().map(Vec::len).sum();
    un.add(UNCLAIMED, unclaimed);
    report.unmapped = un.lines();
    if emitted == 0 {
        // What was passed over says why nothing was found.
        let why = match report.unmapped.is_empty() {
            true => String::new(),
            false => format!(" (passed over: {})", report.unmapped.join("; ")),
        };
        return Err(ImportError::Empty(format!(
            "{}: no {nothing_found} found in {} file(s){why}",
            crate::shown(inputs),
            files.len()
        ))
        .into());
    }
    Ok(report)
}

/// The provider a model name belongs to, when its name tells: `claude-*`
/// is Anthropic's, a Bedrock model id (`anthropic.claude-*`, with or
/// without a region prefix) Bedrock's, `gpt-*` / `chatgpt-*` / `o1`… /
/// `codex-*` OpenAI's, `gemini-*` Google's. Formats that record models
/// from many providers (LangChain, OpenTelemetry, Langfuse, LangSmith)
/// fall back on it where the record names no provider.
pub(crate) fn provider_of_model(model: &str) -> Option<ProviderKind> {
    let m = model.to_ascii_lowercase();
    let m = m.rsplit('/').next().unwrap_or(&m);
    let openai = m.starts_with("gpt")
        || m.starts_with("chatgpt")
        || m.starts_with("codex")
        || (m.starts_with('o') && m.chars().nth(1).is_some_and(|c| c.is_ascii_digit()));
    if m.starts_with("claude") {
        Some(ProviderKind::Anthropic)
    } else if m.contains("anthropic.claude") {
        Some(ProviderKind::BedrockConverse)
    } else if openai {
        Some(ProviderKind::OpenAi)
    } else if m.starts_with("gemini") {
        Some(ProviderKind::Google)
    } else {
        None
    }
}

/// The files to read: directories expand to their `.json` / `.jsonl` /
/// `.ndjson` files (and `.csv` ones for a format that reads CSV), not
/// recursively; the list is sorted and deduplicated.
pub(crate) fn expand_inputs(inputs: &[PathBuf], csv: bool) -> Result<Vec<PathBuf>, ImportError> {
    let mut files = Vec::new();
    for p in inputs {
        let io = |source| ImportError::Io {
            path: p.clone(),
            source,
        };
        let meta = std::fs::metadata(p).map_err(io)?;
        if !meta.is_dir() {
            files.push(p.clone());
            continue;
        }
        for entry in std::fs::read_dir(p).map_err(io)? {
            let path = entry.map_err(io)?.path();
            let ext = path
                .extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase());
            let read = match ext.as_deref() {
                Some("json" | "jsonl" | "ndjson") => true,
                Some("csv") => csv,
                _ => false,
            };
            if path.is_file() && read {
                files.push(path);
            }
        }
    }
    files.sort();
    files.dedup();
    Ok(files)
}

/// The file's name, for descriptions.
pub(crate) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string())
}

/// An [`ImportError::Invalid`].
pub(crate) fn invalid(
    path: &Path,
    line: usize,
    column: Option<usize>,
    message: &str,
) -> ImportError {
    ImportError::Invalid {
        path: path.to_owned(),
        line,
        column,
        message: message.to_owned(),
    }
}

/// An [`ImportError::Invalid`] for JSON that does not parse, at `line`:
/// serde_json's message without its position, at its column (serde_json
/// says 0 at the end of the input; columns here start at 1).
pub(crate) fn invalid_json(path: &Path, line: usize, e: &serde_json::Error) -> ImportError {
    invalid(path, line, Some(e.column().max(1)), &strip_position(e))
}

/// Fails with `err`, or with `skip_invalid` counts a skipped line.
pub(crate) fn reject(
    opts: &ImportOptions,
    report: &mut ImportSummary,
    err: ImportError,
) -> Result<(), ImportError> {
    if opts.skip_invalid {
        report.skipped_lines += 1;
        Ok(())
    } else {
        Err(err)
    }
}

pub(crate) use tracecost_engine::json::error_message as strip_position;

/// Counts of things that could not be mapped, one line per kind, in the
/// order first seen.
#[derive(Default)]
pub(crate) struct Unmapped {
    items: Vec<(&'static str, usize)>,
}

impl Unmapped {
    /// Adds `n` of `what`.
    pub(crate) fn add(&mut self, what: &'static str, n: usize) {
        if n == 0 {
            return;
        }
        match self.items.iter_mut().find(|(w, _)| *w == what) {
            Some((_, c)) => *c += n,
            None => self.items.push((what, n)),
        }
    }

    /// Adds every count of `other`, in its order (merging what one line
    /// recorded apart gives the counts and order adding them here would).
    pub(crate) fn merge(&mut self, other: &Unmapped) {
        for &(what, n) in &other.items {
            self.add(what, n);
        }
    }

    /// `"N × what"` lines.
    pub(crate) fn lines(&self) -> Vec<String> {
        self.items
            .iter()
            .map(|(w, n)| format!("{n} × {w}"))
            .collect()
    }
}

/// Unique trace names.
#[derive(Default)]
pub(crate) struct Names {
    used: HashSet<String>,
}

impl Names {
    /// `count` names for the traces of one file: its stem, then
    /// `stem-2`, `stem-3`…; a name already taken gets a further `-N`.
    pub(crate) fn for_file(&mut self, path: &Path, count: usize) -> Vec<String> {
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "trace".to_owned());
        (0..count)
            .map(|i| {
                let base = if i == 0 {
                    stem.clone()
                } else {
                    format!("{stem}-{}", i + 1)
                };
                self.unique(base)
            })
            .collect()
    }

    fn unique(&mut self, base: String) -> String {
        if self.used.insert(base.clone()) {
            return base;
        }
        let mut n = 2usize;
        loop {
            let c = format!("{base}-{n}");
            if self.used.insert(c.clone()) {
                return c;
            }
            n += 1;
        }
    }
}

/// Serializes and reloads `trace`; an error here is an importer bug,
/// reported against the record the trace started at.
pub(crate) fn check_loads(trace: &Trace, path: &Path, line: usize) -> Result<(), ImportError> {
    let json = tracecost_trace::to_json(trace);
    tracecost_trace::load_str(&json, &trace.name)
        .map(|_| ())
        .map_err(|e| ImportError::Invalid {
            path: path.to_owned(),
            line,
            column: None,
            message: format!(
                "the trace built from here does not load ({e}); please report this importer bug"
            ),
        })
}

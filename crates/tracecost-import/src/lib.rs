//! Importers: turn the logs people actually have into canonical traces,
//! and find them in the paths a user names.
//!
//! Each importer reads its own format and says, in its report, what it
//! skipped and what it could not map. Malformed input is an [`ImportError`]
//! naming the file and the line (and column, where known).
//!
//! This crate owns format detection ([`detect`]), input discovery
//! ([`inputs`]: what a file or folder holds, read in which order, what is
//! passed over) and one module per source. It builds traces of the model in
//! `tracecost-trace` and must not depend on what prices, replays or reports
//! them (the root crate) or on the generators (`tracecost-gen`, a
//! dev-dependency only); `tests/cli/crates.rs` at the workspace root holds
//! its dependencies to a list.

pub mod anthropic;
pub mod bedrock;
pub(crate) mod chat;
pub mod claude_code;
pub mod codex;
pub(crate) mod common;
pub mod detect;
pub mod gemini;
pub mod inputs;
pub mod langchain;
pub mod langfuse;
pub mod langsmith;
pub mod openai;
pub mod openai_agents;
pub mod openai_responses;
pub mod otel;
pub(crate) mod time;

use std::fmt;
use std::path::PathBuf;

use tracecost_trace::progress;

use crate::progress::{Progress, Silent};
use tracecost_trace::Trace;

/// Options shared by every importer.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Skip lines that are not valid JSON (or records that contradict
    /// themselves) instead of failing (request logs, LangChain, OpenAI and
    /// Codex files). Claude Code transcripts always skip invalid lines.
    pub skip_invalid: bool,
    /// The model to record when the source does not say.
    pub default_model: Option<String>,
    /// Read a Claude Code session its client compacted as one
    /// conversation, as it would have run without its summaries: the
    /// history does not restart at a `compact_boundary` (the summary is
    /// left out, the kept messages are the history they were), and the
    /// call after each compaction says what the record shows of it. Its
    /// status quo is then Claude Code's autocompact, which puts the
    /// compactions back.
    pub join_compactions: bool,
}

/// What an import produced.
#[derive(Debug, Clone, Default)]
pub struct ImportResult {
    /// The traces, in a deterministic order (by input path, then position).
    pub traces: Vec<Trace>,
    /// What was read, skipped and left unmapped.
    pub report: ImportSummary,
}

/// What an importer read, skipped and could not map.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Files read.
    pub files: usize,
    /// Files skipped (empty, or holding nothing importable).
    pub skipped_files: usize,
    /// Lines that were not valid JSON and were skipped.
    pub skipped_lines: usize,
    /// Files and folders passed over, with why: those that could not be
    /// read (only under [`ImportOptions::skip_invalid`]; Claude Code and
    /// Codex data), and a folder's files that hold nothing to replay.
    pub unread: Vec<(std::path::PathBuf, String)>,
    /// Damaged lines of JSON Lines files of traces passed over under
    /// [`ImportOptions::skip_invalid`], each as `FILE:LINE:…: why` (also
    /// counted in `skipped_lines`).
    pub damaged_lines: Vec<String>,
    /// Lines holding two or more records with no newline between them,
    /// each record read (Claude Code transcripts).
    pub joined_lines: usize,
    /// One line per kind of thing that could not be mapped, with a count,
    /// e.g. `"3 × toolUseResult side copies (not sent to the model)"`.
    pub unmapped: Vec<String>,
}

impl ImportSummary {
    /// Adds what another import read (of other files) to this report; the
    /// kinds not mapped are listed once, their counts summed.
    pub fn absorb(&mut self, other: ImportSummary) {
        self.files += other.files;
        self.skipped_files += other.skipped_files;
        self.skipped_lines += other.skipped_lines;
        self.joined_lines += other.joined_lines;
        self.unread.extend(other.unread);
        self.damaged_lines.extend(other.damaged_lines);
        for line in other.unmapped {
            let split = |l: &str| {
                l.split_once(" × ")
                    .and_then(|(n, what)| Some((n.parse::<usize>().ok()?, what.to_owned())))
            };
            let Some((n, what)) = split(&line) else {
                self.unmapped.push(line);
                continue;
            };
            let same = self
                .unmapped
                .iter_mut()
                .find(|l| split(l).is_some_and(|(_, w)| w == what));
            match same {
                Some(l) => {
                    let m = split(l).map_or(0, |(m, _)| m);
                    *l = format!("{} × {what}", m + n);
                }
                None => self.unmapped.push(line),
            }
        }
    }
}

impl fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} file(s) read", self.files)?;
        if self.skipped_files > 0 {
            write!(f, ", {} skipped", self.skipped_files)?;
        }
        if self.skipped_lines > 0 {
            write!(f, ", {} invalid line(s) skipped", self.skipped_lines)?;
        }
        for (path, why) in &self.unread {
            write!(f, "; passed over {}: {why}", path.display())?;
        }
        for line in &self.damaged_lines {
            write!(f, "; skipped damaged input: {line} (line skipped)")?;
        }
        if !self.unmapped.is_empty() {
            write!(f, "; not mapped: {}", self.unmapped.join("; "))?;
        }
        Ok(())
    }
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Malformed input at a known place.
    #[error("{}:{line}{}: {message}", path.display(), column.map(|c| format!(":{c}")).unwrap_or_default())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column, when known.
        column: Option<usize>,
        /// What was expected.
        message: String,
    },
    /// Nothing importable was found.
    #[error("{0}")]
    Empty(String),
    /// A path that is not a regular file or a folder (a FIFO, a socket, a
    /// device): never opened, since reading one can block for ever.
    #[error("{}: is a {kind}, expected a trace file, a log or a Claude Code folder", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What it is.
        kind: &'static str,
    },
}

/// The formats tracecost imports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFormat {
    /// Claude Code transcripts ([`claude_code`]).
    ClaudeCode,
    /// Anthropic Messages API request/response logs ([`anthropic`]).
    Anthropic,
    /// LangChain / LangGraph message lists ([`langchain`]).
    Langchain,
    /// OpenAI Chat Completions bodies and logs ([`openai`]).
    Openai,
    /// Codex CLI sessions (`~/.codex/sessions/**/rollout-*.jsonl`,
    /// [`codex`]).
    Codex,
    /// OpenAI Responses API bodies and logs ([`openai_responses`]).
    OpenaiResponses,
    /// Gemini API `generateContent` bodies and logs ([`gemini`]).
    Gemini,
    /// Amazon Bedrock Converse bodies and logs ([`bedrock`]).
    Bedrock,
    /// OpenTelemetry (OTLP JSON) exports of model-call spans: the GenAI
    /// conventions and OpenInference ([`otel`]).
    Otel,
    /// Langfuse ingestion batches and API observations ([`langfuse`]).
    Langfuse,
    /// OpenAI Agents SDK trace exports ([`openai_agents`]).
    OpenaiAgents,
    /// LangSmith run batches and runs ([`langsmith`]).
    Langsmith,
}

impl InputFormat {
    /// Every format, in the order `import --from` lists them.
    pub const ALL: [InputFormat; 12] = [
        InputFormat::ClaudeCode,
        InputFormat::Anthropic,
        InputFormat::Langchain,
        InputFormat::Openai,
        InputFormat::Codex,
        InputFormat::OpenaiResponses,
        InputFormat::Gemini,
        InputFormat::Bedrock,
        InputFormat::Otel,
        InputFormat::Langfuse,
        InputFormat::OpenaiAgents,
        InputFormat::Langsmith,
    ];

    /// Its name, as `import --from` takes it.
    pub const fn name(self) -> &'static str {
        match self {
            InputFormat::ClaudeCode => "claude-code",
            InputFormat::Anthropic => "anthropic",
            InputFormat::Langchain => "langchain",
            InputFormat::Openai => "openai",
            InputFormat::Codex => "codex",
            InputFormat::OpenaiResponses => "openai-responses",
            InputFormat::Gemini => "gemini",
            InputFormat::Bedrock => "bedrock",
            InputFormat::Otel => "otel",
            InputFormat::Langfuse => "langfuse",
            InputFormat::OpenaiAgents => "openai-agents",
            InputFormat::Langsmith => "langsmith",
        }
    }

    /// The format named `name` ([`Self::name`]).
    pub fn named(name: &str) -> Option<InputFormat> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }

    /// Imports `inputs`, handing each trace to `emit` as soon as it is
    /// built, in the order [`InputFormat::import`] returns them, and reporting
    /// the bytes of input read to `progress`. Only the traces of the file
    /// (or, for Claude Code, the few files) being read are held, so inputs
    /// of any size can be written out as they are imported. An error from
    /// `emit` stops the import and is returned.
    pub fn import_each<E: From<ImportError>>(
        self,
        inputs: &[PathBuf],
        opts: &ImportOptions,
        progress: &dyn Progress,
        emit: &mut dyn FnMut(Trace) -> Result<(), E>,
    ) -> Result<ImportSummary, E> {
        for input in inputs {
            detect::file_or_folder(input)?;
        }
        let log = match self {
            InputFormat::ClaudeCode => {
                return claude_code::import_each(inputs, opts, progress, emit);
            }
            InputFormat::Codex => return codex::import_each(inputs, opts, progress, emit),
            InputFormat::Anthropic => &anthropic::LOG,
            InputFormat::Langchain => &langchain::LOG,
            InputFormat::Openai => &openai::LOG,
            InputFormat::OpenaiResponses => &openai_responses::LOG,
            InputFormat::Gemini => &gemini::LOG,
            InputFormat::Bedrock => &bedrock::LOG,
            InputFormat::Otel => &otel::LOG,
            InputFormat::Langfuse => &langfuse::LOG,
            InputFormat::OpenaiAgents => &openai_agents::LOG,
            InputFormat::Langsmith => &langsmith::LOG,
        };
        common::import_files(log, inputs, opts, progress, emit)
    }

    /// Imports `inputs` and returns every trace, with the report.
    pub fn import(
        self,
        inputs: &[PathBuf],
        opts: &ImportOptions,
    ) -> Result<ImportResult, ImportError> {
        let mut traces = Vec::new();
        let report = self.import_each(inputs, opts, &Silent, &mut |t| {
            traces.push(t);
            Ok::<_, ImportError>(())
        })?;
        Ok(ImportResult { traces, report })
    }
}

/// The size of each of `files`, for progress (a file that cannot be read
/// counts 0 here and fails when it is read).
pub fn file_sizes(files: &[PathBuf]) -> Vec<u64> {
    files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .collect()
}

/// The inputs as given, for messages about all of them.
pub fn shown(inputs: &[PathBuf]) -> String {
    inputs
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

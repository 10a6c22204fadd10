//! Input discovery: what the paths a user names hold, and reading them.
//!
//! A file is told apart by its content ([`crate::detect`]), a folder is
//! read in name order, Claude Code data goes whole to its importer, and
//! what is passed over is named, never dropped in silence.

use std::path::{Path, PathBuf};

use crate::detect::{self, FileKind};
use crate::progress::Progress;
use crate::{ImportError, ImportOptions, ImportSummary, InputFormat};
use tracecost_trace::{Trace, TraceError, Warning};

/// Why inputs could not be read.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A trace file is unreadable or invalid.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// A log could not be imported.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// An input that cannot be used: a file of no known kind, a folder
    /// that cannot be listed or holds nothing to read, inputs that give no
    /// trace.
    #[error("{0}")]
    Unusable(String),
}

/// How [`InputLoader`] reads its inputs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InputOptions {
    /// Read every input with this importer instead of deciding from
    /// content, exactly as `import --from` reads them.
    pub from: Option<InputFormat>,
    /// Skip a damaged file (and name it in [`SkippedSummary`]) instead of
    /// failing; importers skip damaged lines.
    pub skip_invalid: bool,
    /// Read Claude Code sessions whole across their compactions
    /// ([`ImportOptions::join_compactions`]).
    pub join_compactions: bool,
}

/// What [`InputLoader`] passed over: files of another kind found in
/// folders, what in a folder is no file to read, and damaged or unreadable
/// input under [`InputOptions::skip_invalid`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkippedSummary {
    /// Files of another kind (or empty), in the order they were found.
    pub other: Vec<PathBuf>,
    /// What was not read, and why, in the order found: in folders, FIFOs,
    /// sockets and devices (never opened) and symlinks to nothing or into
    /// a loop; under [`InputOptions::skip_invalid`], files and folders
    /// that could not be read.
    pub unread: Vec<(PathBuf, String)>,
    /// What was damaged and passed over under
    /// [`InputOptions::skip_invalid`]: a file or lines, with the place.
    pub damaged: Vec<String>,
}

/// How many file names a summary line shows before `…`.
const SHOWN_NAMES: usize = 5;

impl SkippedSummary {
    /// Nothing was skipped.
    pub fn is_empty(&self) -> bool {
        self.other.is_empty() && self.unread.is_empty() && self.damaged.is_empty()
    }

    /// One line for the files of another kind (their names, the first few),
    /// and one per damaged file or line skipped; none when nothing was
    /// skipped.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.other.is_empty() {
            let mut names: Vec<String> = self
                .other
                .iter()
                .take(SHOWN_NAMES)
                .map(|p| {
                    p.file_name().map_or_else(
                        || p.display().to_string(),
                        |n| n.to_string_lossy().into_owned(),
                    )
                })
                .collect();
            if self.other.len() > SHOWN_NAMES {
                names.push("…".to_owned());
            }
            out.push(format!(
                "skipped {} file(s) of another kind: {}",
                self.other.len(),
                names.join(", ")
            ));
        }
        out.extend(self.unread_lines().iter().map(|l| format!("skipped {l}")));
        out
    }

    /// One line per input meant to be read that was not: what could not be
    /// read and what was damaged, as [`Self::lines`] says them after its
    /// "skipped". Files of another kind are not among them (they hold no
    /// trace), so a report that lists these lists only what its figures
    /// lack.
    pub fn unread_lines(&self) -> Vec<String> {
        let unread = self
            .unread
            .iter()
            .map(|(path, why)| format!("{}: {why}", path.display()));
        let damaged = self
            .damaged
            .iter()
            .map(|what| format!("damaged input: {what}"));
        unread.chain(damaged).collect()
    }
}

/// The inputs a command reads: `paths`, or the bundled `traces/` folder
/// when none is named.
pub fn input_paths(paths: &[PathBuf]) -> Vec<PathBuf> {
    if paths.is_empty() {
        vec![PathBuf::from("traces")]
    } else {
        paths.to_vec()
    }
}

/// What [`InputLoader`] read.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every trace, in input order (folders in name order).
    pub traces: Vec<Trace>,
    /// The loader's warnings.
    pub warnings: Vec<Warning>,
    /// What was read in an unusual way and how, one line each (nothing
    /// was lost).
    pub notes: Vec<String>,
    /// What was passed over.
    pub skipped: SkippedSummary,
}

/// One thing to read, found in an input.
#[derive(Debug)]
enum Source {
    /// A canonical trace file.
    Trace(PathBuf),
    /// A log one importer reads.
    Log(InputFormat, PathBuf),
    /// OpenTelemetry exports of one input, imported together: a call's
    /// span (in a traces file) and its inference event (in a logs file)
    /// are one call, counted once.
    Otel(Vec<PathBuf>),
    /// Claude Code folders and transcripts, imported together so that
    /// their traces come in the importer's order (sorted paths).
    ClaudeCode(Vec<PathBuf>),
}

/// What takes each trace read with the file and the line it was read
/// from, when it was alone on a line of a JSON Lines file of traces
/// ([`InputLoader::each`]).
pub type EmitAt<'e> =
    dyn FnMut(Trace, Option<(&Path, tracecost_trace::LineOrigin)>) -> Result<(), InputError> + 'e;

/// The inputs at `paths` to load, and how: the traces in canonical trace
/// files, Claude Code folders and transcripts, Codex folders and rollouts, Anthropic,
/// LangChain, OpenAI Chat Completions and Responses logs, and
/// folders of them — deciding what each file is from its content (see
/// [`crate::detect`]); no paths means `traces/`.
///
/// A file named in `paths` must be one of those kinds. A folder is read in
/// name order, not recursively, except that Claude Code data (a config
/// root, `projects/` or a folder below it) goes whole to the Claude Code
/// importer; files of another kind in a folder are passed over and listed
/// in [`Loaded::skipped`]; other folders inside a folder are not read.
/// A damaged file is an error naming the file and the place, or with
/// [`InputOptions::skip_invalid`] is passed over and listed (in a JSON
/// Lines file of traces, only its damaged lines are); in a Claude
/// Code transcript a damaged line is such an error (or, skipped, listed),
/// but an unfinished last line is a session being written and is passed
/// over as the importer does. Inputs that give no trace at all are an
/// error.
///
/// What the callers vary are its options: [`InputLoader::progress`],
/// [`InputLoader::known`], and whether the traces are held
/// ([`InputLoader::load`]) or handed over one at a time
/// ([`InputLoader::each`]).
pub struct InputLoader<'a> {
    paths: &'a [PathBuf],
    opts: &'a InputOptions,
    progress: &'a dyn Progress,
    known: Option<&'a mut dyn tracecost_trace::KnownLines>,
}

impl<'a> InputLoader<'a> {
    /// The inputs at `paths`, read as `opts` says, silently, every line
    /// parsed.
    pub fn new(paths: &'a [PathBuf], opts: &'a InputOptions) -> Self {
        InputLoader {
            paths,
            opts,
            progress: &crate::progress::Silent,
            known: None,
        }
    }

    /// Reports what is read to `progress`.
    pub fn progress(mut self, progress: &'a dyn Progress) -> Self {
        self.progress = progress;
        self
    }

    /// With `known`, a line of a JSON Lines file of traces that it knows
    /// is handed to it instead of being parsed
    /// ([`tracecost_trace::KnownLines`]); it counts as a trace read.
    pub fn known<'k: 'a>(
        mut self,
        known: Option<&'a mut (dyn tracecost_trace::KnownLines + 'k)>,
    ) -> Self {
        self.known = known.map(|k| k as &'a mut dyn tracecost_trace::KnownLines);
        self
    }

    /// Loads every trace, held in [`Loaded::traces`], for the pipelines
    /// that take them whole.
    pub fn load(self) -> Result<Loaded, InputError> {
        let mut traces = Vec::new();
        let mut loaded = self.each(&mut |t, _| {
            traces.push(t);
            Ok(())
        })?;
        loaded.traces = traces;
        Ok(loaded)
    }

    /// Hands each trace to `emit` as it is read instead of holding them
    /// ([`Loaded::traces`] stays empty), with the file and the line it was
    /// read from when it was alone on a line of a JSON Lines file of
    /// traces ([`tracecost_trace::LineOrigin`]; `None` for any other
    /// trace): a JSON Lines file of traces, or a folder of trace files, is
    /// then never in memory whole (a log's importer still reads the log
    /// whole). Under [`InputOptions::skip_invalid`] a damaged line of a
    /// JSON Lines file of traces is passed over and named, its neighbours
    /// read as ever; a damaged trace file of one document hands over
    /// nothing. `emit`'s error stops the load.
    pub fn each(self, emit: &mut EmitAt<'_>) -> Result<Loaded, InputError> {
        let InputLoader {
            paths,
            opts,
            progress,
            known,
        } = self;
        /// Counts the lines taken.
        struct Counted<'k> {
            known: &'k mut dyn tracecost_trace::KnownLines,
            taken: usize,
        }
        impl tracecost_trace::KnownLines for Counted<'_> {
            fn knows(&mut self, path: &Path, lines: &[tracecost_trace::LineDigest]) -> Vec<bool> {
                self.known.knows(path, lines)
            }
            fn take(
                &mut self,
                path: &Path,
                origin: tracecost_trace::LineOrigin,
            ) -> Result<(), TraceError> {
                self.taken += 1;
                self.known.take(path, origin)
            }
            fn parsed(&mut self, alone: bool) {
                self.known.parsed(alone);
            }
        }
        let mut known = known.map(|known| Counted { known, taken: 0 });
        let paths = &input_paths(paths)[..];
        let import_opts = import_options(opts);
        let mut loaded = Loaded::default();
        let mut count = 0usize;
        let mut counted = |t: Trace, origin: Option<(&Path, tracecost_trace::LineOrigin)>| {
            count += 1;
            emit(t, origin)
        };
        if let Some(format) = opts.from {
            format.import_each(paths, &import_opts, progress, &mut |t| counted(t, None))?;
            return Ok(loaded);
        }
        let mut found = Vec::new();
        for path in paths {
            found.extend(sources(path, opts.skip_invalid, &mut loaded.skipped)?);
        }
        for source in otel_together(found) {
            read_source(
                source,
                paths,
                opts,
                progress,
                &mut loaded,
                known
                    .as_mut()
                    .map(|k| k as &mut dyn tracecost_trace::KnownLines),
                &mut counted,
            )?;
        }
        count += known.map_or(0, |k| k.taken);
        // Claude Code files may hold only bookkeeping, and damaged files may
        // all have been skipped: a run over nothing is an input error.
        if count == 0 {
            return Err(InputError::Unusable(format!(
                "{}: no traces found (no recorded call to replay)",
                crate::shown(paths)
            )));
        }
        Ok(loaded)
    }
}

/// Imports `paths` (files or folders) with the importer each file's
/// content names, as [`InputLoader`] decides them, handing each trace to
/// `emit` as it is built: `import` with no `--from`. A folder mixing
/// formats gives the traces of each; canonical trace files pass through.
/// Files of another kind found in folders are counted as skipped files,
/// and what could not be read is listed, in the report.
pub fn import_detected<E: From<InputError> + From<ImportError>>(
    paths: &[PathBuf],
    opts: &ImportOptions,
    progress: &dyn Progress,
    emit: &mut dyn FnMut(Trace) -> Result<(), E>,
) -> Result<crate::ImportSummary, E> {
    let mut report = crate::ImportSummary::default();
    let mut skipped = SkippedSummary::default();
    let mut found = Vec::new();
    for path in paths {
        found.extend(sources(path, opts.skip_invalid, &mut skipped)?);
    }
    for source in otel_together(found) {
        let part = match source {
            Source::Trace(p) => {
                let mut part = crate::ImportSummary {
                    files: 1,
                    ..Default::default()
                };
                let mut failed = None;
                let mut skip_line = |e: TraceError| part.damaged_lines.push(e.to_string());
                let read = tracecost_trace::Loader::new(&p)
                    .progress(progress)
                    .skipping(
                        opts.skip_invalid
                            .then_some(&mut skip_line as &mut tracecost_trace::SkipLine<'_>),
                    )
                    .each(&mut |t, _| emit(t).map_err(|e| stopped(&mut failed, e, &p)));
                if let Some(e) = failed {
                    return Err(e);
                }
                read.map_err(|e| E::from(InputError::from(e)))?;
                part.skipped_lines = part.damaged_lines.len();
                part
            }
            Source::Log(format, p) => {
                let file = std::slice::from_ref(&p);
                let mut each = |t| emit(t).map_err(Failed::Emit);
                match format.import_each(file, opts, progress, &mut each) {
                    Ok(part) => part,
                    // As for `InputLoader`: a folder's file with nothing to
                    // replay is named with the reason.
                    Err(Failed::Import(ImportError::Empty(why))) if !paths.contains(&p) => {
                        report.unread.push((p.clone(), no_calls(&p, &why)));
                        continue;
                    }
                    Err(Failed::Import(e)) => return Err(e.into()),
                    Err(Failed::Emit(e)) => return Err(e),
                }
            }
            Source::Otel(files) => {
                InputFormat::Otel.import_each(&files, opts, progress, &mut *emit)?
            }
            Source::ClaudeCode(inputs) => {
                InputFormat::ClaudeCode.import_each(&inputs, opts, progress, &mut *emit)?
            }
        };
        report.absorb(part);
    }
    report.skipped_files += skipped.other.len();
    report.unread.extend(skipped.unread);
    Ok(report)
}

/// `sources` with their OpenTelemetry files as one source, where the first
/// of them was: the files of one export (spans in one, their events in
/// another) are read together, whether named one by one or in folders.
fn otel_together(sources: Vec<Source>) -> Vec<Source> {
    let mut out = Vec::with_capacity(sources.len());
    let mut otel: Option<usize> = None;
    for s in sources {
        match (s, otel) {
            (Source::Log(InputFormat::Otel, p), Some(i)) => {
                if let Some(Source::Otel(files)) = out.get_mut(i) {
                    files.push(p);
                }
            }
            (Source::Log(InputFormat::Otel, p), None) => {
                otel = Some(out.len());
                out.push(Source::Otel(vec![p]));
            }
            (s, _) => out.push(s),
        }
    }
    out
}

/// What `path` holds to read, in order. A FIFO, socket or device named is
/// refused; under `skip_invalid`, a path that cannot be read is passed over
/// and listed.
fn sources(
    path: &Path,
    skip_invalid: bool,
    skipped: &mut SkippedSummary,
) -> Result<Vec<Source>, InputError> {
    // Under skip_invalid, what cannot be read is named and passed over.
    let unreadable = |err: InputError, skipped: &mut SkippedSummary| {
        if skip_invalid {
            skipped
                .unread
                .push((path.to_path_buf(), unreadable_why(path, &err)));
            Ok(Vec::new())
        } else {
            Err(err)
        }
    };
    let meta = match detect::file_or_folder(path) {
        Ok(meta) => meta,
        Err(e @ ImportError::NotAFile { .. }) => return Err(e.into()),
        Err(e) => return unreadable(e.into(), skipped),
    };
    if !meta.is_dir() {
        let kind = match detect::detect_file(path) {
            Ok(kind) => kind,
            Err(e) => return unreadable(e.into(), skipped),
        };
        return Ok(vec![match kind {
            FileKind::Trace => Source::Trace(path.to_path_buf()),
            FileKind::Log(InputFormat::ClaudeCode) => Source::ClaudeCode(vec![path.to_path_buf()]),
            FileKind::Log(f) => Source::Log(f, path.to_path_buf()),
            // Named as a trace: the loader says what is wrong, and where.
            FileKind::Empty => Source::Trace(path.to_path_buf()),
            FileKind::Unread(why) => {
                return Err(InputError::Unusable(format!("{}: {why}", path.display())));
            }
            FileKind::Other if looks_like_json(path) => Source::Trace(path.to_path_buf()),
            FileKind::Other => {
                return Err(InputError::Unusable(format!(
                    "{}: not a trace file, a Claude Code transcript, a Codex rollout, an Anthropic, LangChain, OpenAI Chat Completions or Responses, Gemini or Bedrock Converse log, or an OpenTelemetry, Langfuse, LangSmith or OpenAI Agents SDK export",
                    path.display()
                )));
            }
        }]);
    }
    if detect::is_claude_code_folder(path) {
        return Ok(vec![Source::ClaudeCode(vec![path.to_path_buf()])]);
    }
    if detect::is_codex_folder(path) {
        return Ok(vec![Source::Log(InputFormat::Codex, path.to_path_buf())]);
    }
    let (other_before, unread_before) = (skipped.other.len(), skipped.unread.len());
    // A folder that could not be listed was named as skipped.
    let Some(out) = folder_sources(path, skip_invalid, skipped, 0)? else {
        return Ok(Vec::new());
    };
    if out.is_empty() {
        return Err(InputError::Unusable(format!(
            "{}: no traces, Claude Code transcripts or logs in this directory ({} file(s) of another kind{})",
            path.display(),
            skipped.other.len() - other_before,
            match skipped.unread.len() - unread_before {
                0 => String::new(),
                n => format!(", {n} not read"),
            }
        )));
    }
    Ok(out)
}

/// How many plain folders deep a folder's walk goes (a Claude Code or
/// Codex layout below them counts as one).
const FOLDER_DEPTH: usize = 4;

/// The sources of a folder that is neither a Claude Code nor a Codex
/// layout: its traces and logs, the layouts among its subfolders, and
/// what plain subfolders hold (to [`FOLDER_DEPTH`]; hidden ones, such as
/// `.git`, are passed over and counted). Empty when it holds none; `None`
/// when it could not be listed and, under `skip_invalid`, was named as
/// skipped.
fn folder_sources(
    path: &Path,
    skip_invalid: bool,
    skipped: &mut SkippedSummary,
    depth: usize,
) -> Result<Option<Vec<Source>>, InputError> {
    let listed: std::io::Result<Vec<PathBuf>> =
        std::fs::read_dir(path).and_then(|entries| entries.map(|e| e.map(|e| e.path())).collect());
    let mut entries = match listed {
        Ok(entries) => entries,
        Err(e) => {
            let err =
                InputError::Unusable(format!("{}: cannot read directory: {e}", path.display()));
            if !skip_invalid {
                return Err(err);
            }
            let why = unreadable_why(path, &err);
            skipped.unread.push((path.to_path_buf(), why));
            return Ok(None);
        }
    };
    entries.sort();
    let mut out = Vec::new();
    let mut claude: Option<usize> = None;
    let mut add_claude = |out: &mut Vec<Source>, p: PathBuf| match claude {
        Some(i) => {
            if let Source::ClaudeCode(v) = &mut out[i] {
                v.push(p);
            }
        }
        None => {
            claude = Some(out.len());
            out.push(Source::ClaudeCode(vec![p]));
        }
    };
    for p in entries {
        // A FIFO is never opened (that would block), and an editor's lock
        // symlink (`.#name`, pointing nowhere) is no reason to stop.
        if let Some(why) = detect::never_read(&p) {
            skipped.unread.push((p, why));
            continue;
        }
        if p.is_dir() {
            let hidden = p
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with('.'));
            if detect::is_claude_code_folder(&p) {
                add_claude(&mut out, p);
            } else if detect::is_codex_folder(&p) {
                out.push(Source::Log(InputFormat::Codex, p));
            } else if hidden || depth + 1 >= FOLDER_DEPTH {
                skipped.other.push(p);
            } else {
                // An export folder per source, a folder per day: what a
                // plain subfolder holds is read as if named.
                let inner = folder_sources(&p, skip_invalid, skipped, depth + 1)?;
                for source in inner.unwrap_or_default() {
                    match source {
                        Source::ClaudeCode(paths) => {
                            for q in paths {
                                add_claude(&mut out, q);
                            }
                        }
                        other => out.push(other),
                    }
                }
            }
            continue;
        }
        let kind = match detect::detect_file(&p) {
            Ok(kind) => kind,
            Err(e) if skip_invalid => {
                let why = unreadable_why(&p, &e.into());
                skipped.unread.push((p, why));
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        match kind {
            FileKind::Trace => out.push(Source::Trace(p)),
            FileKind::Log(InputFormat::ClaudeCode) => add_claude(&mut out, p),
            FileKind::Log(f) => out.push(Source::Log(f, p)),
            FileKind::Empty | FileKind::Other => skipped.other.push(p),
            FileKind::Unread(why) => skipped.unread.push((p, why.to_owned())),
        }
    }
    Ok(Some(out))
}

/// An import's failure: the importer's, or the caller's `emit`.
enum Failed<E> {
    Import(ImportError),
    Emit(E),
}

impl<E> From<ImportError> for Failed<E> {
    fn from(e: ImportError) -> Self {
        Failed::Import(e)
    }
}

/// Why a file gave no call to replay: the importer's message without the
/// file it starts with.
fn no_calls(path: &Path, why: &str) -> String {
    let named = format!("{}: ", path.display());
    let why = why.strip_prefix(&named).unwrap_or(why);
    format!("nothing to replay: {why}")
}

/// Why a path could not be read: the error's message without the path it
/// starts with (the summary line names the path).
fn unreadable_why(path: &Path, err: &InputError) -> String {
    let text = err.to_string();
    let named = format!("{}: ", path.display());
    text.strip_prefix(&named)
        .map_or_else(|| text.clone(), str::to_owned)
}

/// Whether a file of no known kind is meant as JSON (so that the trace
/// loader, not a generic message, says what is wrong with it).
fn looks_like_json(path: &Path) -> bool {
    path.extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .is_some_and(|e| matches!(e.as_str(), "json" | "jsonl" | "ndjson"))
}

/// What the importers are asked, for inputs read under `opts`.
fn import_options(opts: &InputOptions) -> ImportOptions {
    ImportOptions {
        skip_invalid: opts.skip_invalid,
        default_model: None,
        join_compactions: opts.join_compactions,
    }
}

fn read_source(
    source: Source,
    named: &[PathBuf],
    opts: &InputOptions,
    progress: &dyn Progress,
    loaded: &mut Loaded,
    known: Option<&mut dyn tracecost_trace::KnownLines>,
    emit: &mut EmitAt<'_>,
) -> Result<(), InputError> {
    let import_opts = &import_options(opts);
    // A damaged file fails the load, or under skip_invalid is named and
    // passed over.
    let skip_file = |err: InputError, loaded: &mut Loaded| {
        if opts.skip_invalid {
            loaded.skipped.damaged.push(format!("{err} (file skipped)"));
            Ok(())
        } else {
            Err(err)
        }
    };
    match source {
        // Read a trace at a time; under skip_invalid a damaged line of a
        // JSON Lines file is passed over and named, and a damaged file
        // (one document: nothing of it was handed over) too.
        Source::Trace(path) => {
            let mut failed = None;
            let mut damaged = Vec::new();
            let mut skip_line = |e: TraceError| damaged.push(format!("{e} (line skipped)"));
            let read = tracecost_trace::Loader::new(&path)
                .progress(progress)
                .known(known)
                .skipping(
                    opts.skip_invalid
                        .then_some(&mut skip_line as &mut tracecost_trace::SkipLine<'_>),
                )
                .each(&mut |t, origin| {
                    emit(t, origin.map(|o| (path.as_path(), o)))
                        .map_err(|e| stopped(&mut failed, e, &path))
                });
            loaded.skipped.damaged.append(&mut damaged);
            match (read, failed) {
                (_, Some(e)) => return Err(e),
                (Ok(warnings), None) => loaded.warnings.extend(warnings),
                (Err(e), None) => skip_file(e.into(), loaded)?,
            }
        }
        Source::Otel(files) => match import_all(InputFormat::Otel, &files, import_opts, progress) {
            Ok((traces, report)) => {
                otel_notes(&files, &report, loaded);
                for t in traces {
                    emit(t, None)?;
                }
            }
            Err(e) => skip_file(e.into(), loaded)?,
        },
        Source::Log(format, path) => {
            match import_all(format, std::slice::from_ref(&path), import_opts, progress) {
                Ok((traces, report)) => {
                    // Codex folders: what could not be read, under
                    // skip_invalid.
                    loaded.skipped.unread.extend(report.unread.iter().cloned());
                    // Only under skip_invalid do log importers pass over lines.
                    if report.skipped_lines > 0 {
                        loaded.skipped.damaged.push(format!(
                            "{}: {} damaged line(s) skipped",
                            path.display(),
                            report.skipped_lines
                        ));
                    }
                    for t in traces {
                        emit(t, None)?;
                    }
                }
                // A file found in a folder that holds nothing to replay (a
                // valid export of response spans only, say) is passed over
                // and named with the reason; named itself, it is an error.
                Err(ImportError::Empty(why)) if !named.contains(&path) => {
                    loaded
                        .skipped
                        .unread
                        .push((path.clone(), no_calls(&path, &why)));
                }
                Err(e) => skip_file(e.into(), loaded)?,
            }
        }
        Source::ClaudeCode(inputs) => {
            let (traces, report) =
                import_all(InputFormat::ClaudeCode, &inputs, import_opts, progress)?;
            loaded.skipped.unread.extend(report.unread.iter().cloned());
            claude_code_notes(&inputs, &report, opts, loaded)?;
            for t in traces {
                emit(t, None)?;
            }
        }
    }
    Ok(())
}

/// What an OpenTelemetry export's files gave no call for, and its damaged
/// lines passed over.
fn otel_notes(files: &[PathBuf], report: &ImportSummary, loaded: &mut Loaded) {
    // A file of the export that gave no call says why.
    if report.skipped_files > 0 {
        loaded.notes.push(format!(
            "{}: {} of {} OpenTelemetry file(s) gave no call to replay ({})",
            crate::shown(files),
            report.skipped_files,
            files.len(),
            report.unmapped.join("; ")
        ));
    }
    if report.skipped_lines > 0 {
        loaded.skipped.damaged.push(format!(
            "{}: {} damaged line(s) skipped",
            crate::shown(files),
            report.skipped_lines
        ));
    }
}

/// Claude Code transcripts: lines that held several records, and damaged
/// lines (an error unless skip_invalid).
fn claude_code_notes(
    inputs: &[PathBuf],
    report: &ImportSummary,
    opts: &InputOptions,
    loaded: &mut Loaded,
) -> Result<(), InputError> {
    if report.joined_lines > 0 {
        loaded.notes.push(format!(
            "{}: {} line(s) held two or more records with no newline between them (Claude Code writes these now and then); each record was read",
            crate::shown(inputs),
            report.joined_lines
        ));
    }
    if report.skipped_lines > 0 {
        // The importer always passes over lines that are not JSON,
        // as ccusage does; here a damaged line is an error unless
        // skip_invalid, and an unfinished last line (a session being
        // written) is not damage.
        let mut unreadable = Vec::new();
        let files = crate::claude_code::discover_readable(
            inputs,
            opts.skip_invalid.then_some(&mut unreadable),
        )?;
        let passed_over: Vec<&PathBuf> = report.unread.iter().map(|(p, _)| p).collect();
        for file in files.iter().filter(|f| !passed_over.contains(f)) {
            for err in detect::damaged_lines(file)? {
                if !opts.skip_invalid {
                    return Err(err.into());
                }
                loaded.skipped.damaged.push(format!("{err} (line skipped)"));
            }
        }
    }
    Ok(())
}

/// Keeps `e`, the error of whoever took a trace, in `failed`, and gives the
/// loader an error that stops it (the load then returns `e`, not this).
fn stopped<E>(failed: &mut Option<E>, e: E, path: &Path) -> TraceError {
    *failed = Some(e);
    TraceError::Io {
        path: path.display().to_string(),
        source: std::io::Error::other("stopped"),
    }
}

/// Every trace `format` imports from `inputs`, with the importer's report.
fn import_all(
    format: InputFormat,
    inputs: &[PathBuf],
    opts: &ImportOptions,
    progress: &dyn Progress,
) -> Result<(Vec<Trace>, ImportSummary), ImportError> {
    let mut traces = Vec::new();
    let report = format.import_each(inputs, opts, progress, &mut |t| {
        traces.push(t);
        Ok::<_, ImportError>(())
    })?;
    Ok((traces, report))
}

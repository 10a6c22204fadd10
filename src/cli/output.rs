//! Writing output so that nothing is ever half-written and nothing that is
//! not tracecost's own is ever replaced.
//!
//! - A file (`-o`) is written to `.NAME.tmp-PID` beside it, synced and
//!   renamed into place.
//! - A report folder (`--out`) is staged in `.NAME.tmp-PID` beside it and
//!   swapped into place in one step. It replaces only an empty folder or a
//!   previous report: one whose [`REPORT_MARKER`] lists every file in it.
//! - Staging is registered with [`super::interrupt`], which removes it on
//!   SIGINT, SIGTERM or SIGHUP; staging left by a process that was killed
//!   outright is removed by the next run that writes beside it.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use super::CliError;
use super::interrupt;
pub use super::staged_removal::REPORT_MARKER;
use super::staged_removal::remove_staged;
use crate::app::AppError;

/// The marker's first line, with the version of its format.
const MARKER_HEADER: &str = "tracecost report folder, format 1";

/// Writes `bytes` to `path` through a temporary file in the same directory,
/// synced and renamed into place: readers see the old file or the new one,
/// never a partial one. On failure the temporary file is removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    write_atomic_with(path, |w| {
        w.write_all(bytes).map_err(|source| CliError::Write {
            path: path.display().to_string(),
            source,
        })
    })
}

/// [`write_atomic`] for output produced piece by piece: `produce` writes
/// into the temporary file, which is renamed into place only when it
/// succeeds. When it fails (bad input met halfway, a full disk) its error
/// is returned and the temporary file removed, so nothing is left looking
/// complete.
pub fn write_atomic_with<T>(
    path: &Path,
    produce: impl FnOnce(&mut BufWriter<File>) -> Result<T, CliError>,
) -> Result<T, CliError> {
    let shown = path.display().to_string();
    let fail = |source| CliError::Write {
        path: shown.clone(),
        source,
    };
    if path.is_dir() {
        return Err(fail(std::io::Error::other("is a directory")));
    }
    let (dir, name) = parent_and_name(path, "output");
    remove_stale_staging(&dir, &name);
    let tmp = dir.join(staging_name(&name, Stage::Tmp, std::process::id()));
    let guard = interrupt::Staged::register(tmp.clone());
    let created = {
        let _hold = interrupt::hold();
        File::create(&tmp)
    };
    let mut w = BufWriter::with_capacity(1 << 16, created.map_err(fail)?);
    let result = produce(&mut w).and_then(|value| {
        (|| {
            let f = w.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()?;
            {
                let _hold = interrupt::hold();
                std::fs::rename(&tmp, path)?;
            }
            sync_dir(&dir)
        })()
        .map(|()| value)
        .map_err(fail)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    drop(guard);
    result
}

/// Refuses an output file that is one of the inputs (the same file, by
/// device and inode, whatever its name) or that lies inside an input
/// folder, where it would be read as an input: writing it would replace
/// what is being read.
pub fn refuse_output_among_inputs(output: &Path, inputs: &[PathBuf]) -> Result<(), AppError> {
    let Ok(out_meta) = std::fs::metadata(output) else {
        // Not there yet: it cannot be an input.
        return Ok(());
    };
    let out_real = std::fs::canonicalize(output).ok();
    for input in inputs {
        let Ok(meta) = std::fs::metadata(input) else {
            continue;
        };
        if same_file(&meta, &out_meta) {
            return Err(AppError::Usage(format!(
                "-o {}: is the input {}; write the traces to another file",
                output.display(),
                input.display()
            )));
        }
        if meta.is_dir() {
            let inside = match (&out_real, std::fs::canonicalize(input)) {
                (Some(o), Ok(i)) => o.starts_with(i),
                _ => false,
            };
            if inside {
                return Err(AppError::Usage(format!(
                    "-o {}: is inside the input folder {}, where it would be read as an input; write the traces outside it",
                    output.display(),
                    input.display()
                )));
            }
        }
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, _: &std::fs::Metadata) -> bool {
    false
}

/// What a folder named by `--out` holds.
#[derive(Debug, PartialEq, Eq)]
enum OutFolder {
    /// Nothing there yet (or an empty folder).
    Free,
    /// A previous report, holding only the files its marker lists.
    Report,
    /// Not ours to replace: why, with the first entry that says so
    /// (relative to the folder).
    Foreign(Foreign),
}

/// Why a folder is not a report tracecost may replace.
#[derive(Debug, PartialEq, Eq)]
enum Foreign {
    /// It is a file, or a symlink.
    NotAFolder,
    /// It holds something that is neither a file nor a folder.
    Special(String),
    /// Files, and no marker.
    NoMarker(String),
    /// A marker of another format.
    OtherMarker,
    /// A report, with a file added that the report did not write.
    Added(String),
}

fn classify_out(dir: &Path) -> std::io::Result<OutFolder> {
    let meta = match std::fs::symlink_metadata(dir) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(OutFolder::Free),
        Err(e) => return Err(e),
    };
    if !meta.is_dir() {
        return Ok(OutFolder::Foreign(Foreign::NotAFolder));
    }
    let mut files = Vec::new();
    let mut other = None;
    walk(dir, &mut files, &mut other)?;
    if let Some(rel) = other {
        return Ok(OutFolder::Foreign(Foreign::Special(rel)));
    }
    if files.is_empty() {
        return Ok(OutFolder::Free);
    }
    let text = match std::fs::read_to_string(dir.join(REPORT_MARKER)) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(OutFolder::Foreign(Foreign::NoMarker(files[0].clone())));
        }
        Err(e) => return Err(e),
    };
    let Some(listed) = parse_marker(&text) else {
        return Ok(OutFolder::Foreign(Foreign::OtherMarker));
    };
    match files
        .iter()
        .find(|f| f.as_str() != REPORT_MARKER && !listed.contains(f.as_str()))
    {
        Some(f) => Ok(OutFolder::Foreign(Foreign::Added(f.clone()))),
        None => Ok(OutFolder::Report),
    }
}

/// Every regular file under `dir`, relative (with `/`), in name order, a
/// folder's files before its parent's next entry; the first entry that is
/// neither a file nor a folder (a symlink, a FIFO) goes to `other`.
fn walk(dir: &Path, files: &mut Vec<String>, other: &mut Option<String>) -> std::io::Result<()> {
    for entry in walkdir::WalkDir::new(dir).min_depth(1).sort_by_file_name() {
        // The I/O error as the system gave it, so its message is unchanged
        // (symlinks are not followed, so the walk meets no loop).
        let entry = entry.map_err(|e| {
            let message = e.to_string();
            e.into_io_error()
                .unwrap_or_else(|| std::io::Error::other(message))
        })?;
        let t = entry.file_type();
        if t.is_dir() {
            continue;
        }
        let rel = relative_name(dir, entry.path());
        if t.is_file() {
            files.push(rel);
        } else if other.is_none() {
            *other = Some(rel);
        }
    }
    Ok(())
}

/// `path` below `dir`, its names joined by `/` whatever the platform.
fn relative_name(dir: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(dir).unwrap_or(path);
    let names: Vec<_> = rel.iter().map(|n| n.to_string_lossy()).collect();
    names.join("/")
}

fn parse_marker(text: &str) -> Option<BTreeSet<&str>> {
    let mut lines = text.lines();
    (lines.next()? == MARKER_HEADER).then(|| lines.filter(|l| !l.is_empty()).collect())
}

fn marker(files: &BTreeSet<String>) -> String {
    let mut out = format!("{MARKER_HEADER}\n");
    for f in files {
        out.push_str(f);
        out.push('\n');
    }
    out
}

/// Checks, before anything runs, that a report may be written to `out`:
/// it is new, empty or a previous report, and it neither is nor holds one
/// of the inputs (which replacing it would delete).
pub fn check_report_out(out: &Path, inputs: &[PathBuf]) -> Result<(), AppError> {
    let out_real = resolved(out);
    for input in inputs {
        if let Ok(i) = std::fs::canonicalize(input)
            && i.starts_with(&out_real)
        {
            let what = if i == out_real { "is" } else { "holds" };
            return Err(AppError::Usage(format!(
                "--out {}: {what} the input {}, which replacing it would delete; write the report to another folder",
                out.display(),
                input.display()
            )));
        }
    }
    refuse_foreign(out)
}

/// Refuses, before anything is read, a report cache in (or at) the
/// report's folder: the report replaces that folder whole, so the cache
/// would be deleted by every report, and the folder it left refused by the
/// next one as holding what no report wrote.
pub fn refuse_cache_in_out(cache_dir: &Path, out: &Path) -> Result<(), AppError> {
    if !resolved(cache_dir).starts_with(resolved(out)) {
        return Ok(());
    }
    Err(AppError::Usage(format!(
        "--cache-dir {}: is inside --out {}, which every report replaces whole; keep the cache in a folder outside the report's",
        cache_dir.display(),
        out.display()
    )))
}

fn refuse_foreign(out: &Path) -> Result<(), AppError> {
    let found = classify_out(out).map_err(|source| AppError::Write {
        path: out.display().to_string(),
        source,
    })?;
    let why = match found {
        OutFolder::Free | OutFolder::Report => return Ok(()),
        OutFolder::Foreign(Foreign::NotAFolder) => "exists and is not a folder".to_owned(),
        OutFolder::Foreign(Foreign::Special(rel)) => {
            format!("holds {rel}, which is not a plain file or folder")
        }
        OutFolder::Foreign(Foreign::NoMarker(rel)) => {
            let hint = if out.join("results.json").is_file() && out.join("index.html").is_file() {
                "; a report written by an older tracecost has none: remove that folder by hand"
            } else {
                ""
            };
            format!("holds {rel} and is not a tracecost report (it has no {REPORT_MARKER}{hint})")
        }
        OutFolder::Foreign(Foreign::OtherMarker) => {
            format!("its {REPORT_MARKER} is not one this version of tracecost writes")
        }
        OutFolder::Foreign(Foreign::Added(rel)) => {
            format!("holds {rel}, which the report there did not write")
        }
    };
    Err(AppError::Usage(format!(
        "--out {}: {why}; a report replaces only an empty folder or an earlier report, so name a new folder or move what is there away",
        out.display()
    )))
}

/// `path` made absolute with its symlinks resolved as far as it exists;
/// from the first name that does not exist on, names are taken as written
/// (`.` dropped, `..` taking off the name before it: nothing there can be
/// a symlink).
fn resolved(path: &Path) -> PathBuf {
    use std::path::Component;
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(path))
            .unwrap_or_else(|_| path.to_path_buf())
    };
    let mut out = PathBuf::new();
    let mut exists = true;
    for c in abs.components() {
        if exists {
            match std::fs::canonicalize(out.join(c)) {
                Ok(real) => {
                    out = real;
                    continue;
                }
                Err(_) => exists = false,
            }
        }
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// A directory written file by file that appears complete or not at all:
/// everything goes into a sibling temporary directory, which replaces the
/// target only on [`StagedDir::commit`]. Dropped uncommitted (an error
/// halfway), the temporary directory is removed and the target untouched.
pub struct StagedDir {
    dir: PathBuf,
    tmp: PathBuf,
    /// Every file written, relative: what the marker lists.
    files: BTreeSet<String>,
    committed: bool,
    _guard: interrupt::Staged,
}

impl StagedDir {
    /// Starts writing `dir`, which [`check_report_out`] has accepted.
    pub fn new(dir: &Path) -> Result<Self, CliError> {
        let fail = |source| CliError::Write {
            path: dir.display().to_string(),
            source,
        };
        refuse_foreign(dir)?;
        let (parent, name) = parent_and_name(dir, "report");
        std::fs::create_dir_all(&parent).map_err(fail)?;
        remove_stale_staging(&parent, &name);
        let tmp = parent.join(staging_name(&name, Stage::Tmp, std::process::id()));
        let guard = interrupt::Staged::register(tmp.clone());
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(fail)?;
        }
        {
            let _hold = interrupt::hold();
            std::fs::create_dir_all(&tmp).map_err(fail)?;
            // A marker listing nothing yet: staging left by a killed run is
            // known for ours by it, and removed by the next run.
            std::fs::write(tmp.join(REPORT_MARKER), marker(&BTreeSet::new())).map_err(fail)?;
        }
        Ok(StagedDir {
            dir: dir.to_path_buf(),
            tmp,
            files: BTreeSet::new(),
            committed: false,
            _guard: guard,
        })
    }

    fn open(&mut self, rel: &str, append: bool) -> std::io::Result<File> {
        if rel == REPORT_MARKER {
            return Err(std::io::Error::other(format!(
                "{REPORT_MARKER} is the report folder's own marker"
            )));
        }
        let path = self.tmp.join(rel);
        // Writing into the file later adds no name: only this is held.
        let _hold = interrupt::hold();
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p)?;
        }
        self.files.insert(rel.to_owned());
        std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(path)
    }

    /// Replaces the target with everything written, in one step: a reader,
    /// or a kill at any point, finds the old report or the new one.
    pub fn commit(mut self) -> Result<(), CliError> {
        // The folder may have changed while the report ran.
        refuse_foreign(&self.dir)?;
        let result = (|| -> std::io::Result<LeftBehind> {
            {
                let _hold = interrupt::hold();
                std::fs::write(self.tmp.join(REPORT_MARKER), marker(&self.files))?;
            }
            // Appended files were not synced as they grew: sync them all.
            sync_tree(&self.tmp)?;
            swap_into_place(&self.tmp, &self.dir)
        })();
        let left = result.map_err(|source| CliError::Write {
            path: self.dir.display().to_string(),
            source,
        })?;
        self.committed = true;
        // The new report is in place: what is left of the old one is said,
        // not an error (the run did what it was asked).
        if let Some((old, e)) = left {
            eprintln!(
                "tracecost: warning: the earlier report, moved to {}, could not be removed ({e}); remove it by hand",
                old.display()
            );
        }
        Ok(())
    }
}

/// An earlier report moved aside that could not be removed, and why.
type LeftBehind = Option<(PathBuf, std::io::Error)>;

/// Moves the staged folder `new` to `target`, replacing what is there (a
/// folder [`refuse_foreign`] accepted). Where the system can exchange two
/// names in one step, it does, so `target` is always the old folder or the
/// new one; elsewhere the old folder is renamed aside first, so a kill
/// between the two renames leaves no folder at `target` (and the old one
/// aside, removed by the next run), never a mix. Once the new folder is in
/// place, an old one that cannot be removed is returned, not an error.
fn swap_into_place(new: &Path, target: &Path) -> std::io::Result<LeftBehind> {
    let parent = new.parent().unwrap_or(Path::new("."));
    let left = |old: &Path| remove_staged(old).err().map(|e| (old.to_path_buf(), e));
    if std::fs::symlink_metadata(target).is_err() {
        {
            let _hold = interrupt::hold();
            std::fs::rename(new, target)?;
        }
        return sync_dir(parent).map(|()| None);
    }
    let exchanged = {
        let _hold = interrupt::hold();
        exchange(new, target)?
    };
    if exchanged {
        // `new` now names the old report.
        sync_dir(parent)?;
        return Ok(left(new));
    }
    let (dir, name) = parent_and_name(target, "report");
    let aside = dir.join(staging_name(&name, Stage::Old, std::process::id()));
    let _guard = interrupt::Staged::register(aside.clone());
    {
        // Both renames or neither before a signal's clean-up: between
        // them, the old report is aside and the new one still staged,
        // and the clean-up would remove both.
        let _hold = interrupt::hold();
        std::fs::rename(target, &aside)?;
        std::fs::rename(new, target)?;
    }
    sync_dir(parent)?;
    Ok(left(&aside))
}

/// Exchanges the names `a` and `b` atomically; `Ok(false)` where the
/// system or file system cannot.
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> std::io::Result<bool> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let ca = CString::new(a.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    let cb = CString::new(b.as_os_str().as_bytes()).map_err(std::io::Error::other)?;
    // SAFETY: both are valid NUL-terminated paths, resolved against the
    // working directory (AT_FDCWD) as `rename` would.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::ENOTSUP) => Ok(false),
        _ => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> std::io::Result<bool> {
    Ok(false)
}

/// The two kinds of staging beside an output.
#[derive(Clone, Copy)]
enum Stage {
    /// The new output being written.
    Tmp,
    /// The old report renamed aside during a swap.
    Old,
}

fn staging_name(name: &str, stage: Stage, pid: u32) -> String {
    match stage {
        Stage::Tmp => format!(".{name}.tmp-{pid}"),
        Stage::Old => format!(".{name}.old-{pid}"),
    }
}

/// The process id a staging entry of output `name` records, if `entry` is
/// one.
fn staging_pid(entry: &str, name: &str) -> Option<u32> {
    let rest = entry.strip_prefix('.')?.strip_prefix(name)?;
    let pid = rest
        .strip_prefix(".tmp-")
        .or_else(|| rest.strip_prefix(".old-"))?;
    (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Removes the staging of output `name` in `dir` that a process no longer
/// running left behind (killed outright, or by a signal it could not
/// catch). A staging folder is removed only when it carries the report
/// marker or is empty; a live process's staging is left alone. Failures are warnings:
/// the run itself does not depend on them.
fn remove_stale_staging(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let entry = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = staging_pid(&entry, name) else {
            continue;
        };
        if pid == std::process::id() || process_alive(pid) {
            continue;
        }
        let path = e.path();
        let removed = match e.file_type() {
            Ok(t) if t.is_dir() => {
                if path.join(REPORT_MARKER).is_file() {
                    remove_staged(&path)
                } else {
                    // Killed before it wrote its marker: removed only
                    // while empty, as nothing can be lost then.
                    match std::fs::remove_dir(&path) {
                        Ok(()) => Ok(()),
                        Err(_) => continue,
                    }
                }
            }
            Ok(t) if t.is_file() => std::fs::remove_file(&path),
            _ => continue,
        };
        match removed {
            Ok(()) => eprintln!(
                "tracecost: note: removed {}, left by an interrupted run (process {pid})",
                path.display()
            ),
            Err(err) => eprintln!(
                "tracecost: warning: cannot remove {}, left by an interrupted run: {err}",
                path.display()
            ),
        }
    }
}

#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 checks that the process exists; nothing is sent.
    let rc = unsafe { libc::kill(pid, 0) };
    rc == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn process_alive(_: u32) -> bool {
    // Without a way to tell, nothing is taken for stale.
    true
}

/// `path`'s folder (`.` for a bare name) and its file name.
fn parent_and_name(path: &Path, default: &str) -> (PathBuf, String) {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| default.to_owned());
    (parent, name)
}

/// Makes every file below `dir` durable before the folder is swapped into
/// place. On Linux one `syncfs` of the folder's filesystem does it (a
/// report of a thousand sessions is over a thousand files: one call, not
/// one `fsync` per file); elsewhere each file is synced.
fn sync_tree(dir: &Path) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let f = File::open(dir)?;
        // SAFETY: `f` is an open descriptor for the call's duration.
        if unsafe { libc::syncfs(f.as_raw_fd()) } == 0 {
            return Ok(());
        }
        Err(std::io::Error::last_os_error())
    }
    #[cfg(not(target_os = "linux"))]
    sync_each(dir)
}

#[cfg(not(target_os = "linux"))]
fn sync_each(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            sync_each(&entry.path())?;
        } else {
            File::open(entry.path())?.sync_all()?;
        }
    }
    Ok(())
}

/// Makes a rename in `dir` durable.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

impl crate::report::build::ReportSink for StagedDir {
    fn put(&mut self, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
        self.open(rel, false)?.write_all(bytes)
    }

    fn append(&mut self, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
        self.open(rel, true)?.write_all(bytes)
    }
}

impl Drop for StagedDir {
    fn drop(&mut self) {
        if !self.committed {
            let _ = remove_staged(&self.tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staging_names_round_trip() {
        assert_eq!(staging_pid(".latest.tmp-123", "latest"), Some(123));
        assert_eq!(staging_pid(".latest.old-9", "latest"), Some(9));
        assert_eq!(staging_pid(".latest.tmp-", "latest"), None);
        assert_eq!(staging_pid(".latest.tmp-12x", "latest"), None);
        assert_eq!(staging_pid(".latest.tmp-1", "late"), None);
        assert_eq!(staging_pid(".other.tmp-1", "latest"), None);
        assert_eq!(staging_pid("latest.tmp-1", "latest"), None);
        let name = staging_name("out.json", Stage::Tmp, 77);
        assert_eq!(staging_pid(&name, "out.json"), Some(77));
    }

    #[test]
    fn a_marker_lists_what_the_report_wrote() {
        let files: BTreeSet<String> = ["index.html", "sessions/a.html"]
            .into_iter()
            .map(String::from)
            .collect();
        let text = marker(&files);
        let listed = parse_marker(&text).unwrap();
        assert_eq!(listed.len(), 2);
        assert!(listed.contains("sessions/a.html"));
        assert!(parse_marker("some other file\nindex.html\n").is_none());
    }

    #[test]
    fn classify_tells_a_report_from_other_folders() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("out");
        assert_eq!(classify_out(&out).unwrap(), OutFolder::Free);
        std::fs::create_dir(&out).unwrap();
        assert_eq!(classify_out(&out).unwrap(), OutFolder::Free);
        std::fs::create_dir(out.join("charts")).unwrap();
        std::fs::write(out.join("charts/a.svg"), "x").unwrap();
        assert_eq!(
            classify_out(&out).unwrap(),
            OutFolder::Foreign(Foreign::NoMarker("charts/a.svg".into()))
        );
        let files = ["charts/a.svg".to_owned()].into_iter().collect();
        std::fs::write(out.join(REPORT_MARKER), marker(&files)).unwrap();
        assert_eq!(classify_out(&out).unwrap(), OutFolder::Report);
        std::fs::write(out.join("notes.txt"), "mine").unwrap();
        assert_eq!(
            classify_out(&out).unwrap(),
            OutFolder::Foreign(Foreign::Added("notes.txt".into()))
        );
        std::fs::write(out.join(REPORT_MARKER), "a list of mine\n").unwrap();
        assert_eq!(
            classify_out(&out).unwrap(),
            OutFolder::Foreign(Foreign::OtherMarker)
        );
    }

    #[test]
    fn resolved_keeps_what_does_not_exist_yet() {
        let d = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(d.path()).unwrap();
        assert_eq!(resolved(&d.path().join("a/b")), real.join("a/b"));
        assert_eq!(resolved(d.path()), real);
    }
}

//! Writing output files so that none is ever left half-written.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use super::CliError;

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
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if path.is_dir() {
        return Err(fail(std::io::Error::other("is a directory")));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let mut w = BufWriter::with_capacity(1 << 16, File::create(&tmp).map_err(fail)?);
    let result = produce(&mut w).and_then(|value| {
        (|| {
            let f = w.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()?;
            std::fs::rename(&tmp, path)
        })()
        .map(|()| value)
        .map_err(fail)
    });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A directory written file by file that appears complete or not at all:
/// everything goes into a sibling temporary directory, which replaces the
/// target only on [`StagedDir::commit`]. Dropped uncommitted (an error
/// halfway), the temporary directory is removed and the target untouched.
pub struct StagedDir {
    dir: std::path::PathBuf,
    tmp: std::path::PathBuf,
    committed: bool,
}

impl StagedDir {
    /// Starts writing `dir`.
    pub fn new(dir: &Path) -> Result<Self, CliError> {
        let fail = |source| CliError::Write {
            path: dir.display().to_string(),
            source,
        };
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => Path::new(".").to_path_buf(),
        };
        std::fs::create_dir_all(&parent).map_err(fail)?;
        if dir.exists() && !dir.is_dir() {
            return Err(fail(std::io::Error::other("exists and is not a directory")));
        }
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "report".into());
        let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp).map_err(fail)?;
        }
        std::fs::create_dir_all(&tmp).map_err(fail)?;
        Ok(StagedDir {
            dir: dir.to_path_buf(),
            tmp,
            committed: false,
        })
    }

    fn open(&self, rel: &str, append: bool) -> std::io::Result<File> {
        let path = self.tmp.join(rel);
        if let Some(p) = path.parent() {
            std::fs::create_dir_all(p)?;
        }
        std::fs::OpenOptions::new()
            .create(true)
            .write(true)
            .append(append)
            .truncate(!append)
            .open(path)
    }

    /// Replaces the target with everything written.
    pub fn commit(mut self) -> Result<(), CliError> {
        let result = (|| -> std::io::Result<()> {
            // Appended files were not synced as they grew: sync them all.
            sync_tree(&self.tmp)?;
            if self.dir.exists() {
                std::fs::remove_dir_all(&self.dir)?;
            }
            std::fs::rename(&self.tmp, &self.dir)
        })();
        result.map_err(|source| CliError::Write {
            path: self.dir.display().to_string(),
            source,
        })?;
        self.committed = true;
        Ok(())
    }
}

fn sync_tree(dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            sync_tree(&entry.path())?;
        } else {
            File::open(entry.path())?.sync_all()?;
        }
    }
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
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}

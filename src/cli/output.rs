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

/// Writes a whole directory of files so that it appears complete or not at
/// all: everything goes into a sibling temporary directory, which then
/// replaces `dir`.
pub fn write_dir_atomic(dir: &Path, files: &[(String, Vec<u8>)]) -> Result<(), CliError> {
    let shown = dir.display().to_string();
    let fail = |source| CliError::Write {
        path: shown.clone(),
        source,
    };
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => Path::new(".").to_path_buf(),
    };
    std::fs::create_dir_all(&parent).map_err(fail)?;
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "report".into());
    let tmp = parent.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        if tmp.exists() {
            std::fs::remove_dir_all(&tmp)?;
        }
        for (rel, bytes) in files {
            let path = tmp.join(rel);
            if let Some(p) = path.parent() {
                std::fs::create_dir_all(p)?;
            }
            let mut f = std::fs::File::create(&path)?;
            f.write_all(bytes)?;
            f.sync_all()?;
        }
        if dir.exists() {
            if !dir.is_dir() {
                return Err(std::io::Error::other("exists and is not a directory"));
            }
            std::fs::remove_dir_all(dir)?;
        }
        std::fs::rename(&tmp, dir)
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_dir_all(&tmp);
        return Err(fail(e));
    }
    Ok(())
}

//! Where rollouts are: a Codex home, a folder below it, or files.

use super::*;

/// How deep folders are walked (`sessions/YYYY/MM/DD/` and a little more).
const MAX_DEPTH: usize = 6;

/// The rollout files of `inputs`: files as given, folders walked for
/// `rollout-*.jsonl` (a Codex home's `sessions/` and `archived_sessions/`).
/// With `unread`, a folder below the inputs that cannot be read is passed
/// over and listed there with why, instead of failing.
pub(crate) fn discover(
    inputs: &[PathBuf],
    mut unread: Option<&mut Vec<(PathBuf, String)>>,
) -> Result<Vec<PathBuf>, ImportError> {
    let mut files = Vec::new();
    for input in inputs {
        let meta = std::fs::metadata(input).map_err(|source| ImportError::Io {
            path: input.clone(),
            source,
        })?;
        if !meta.is_dir() {
            files.push(input.clone());
            continue;
        }
        let roots: Vec<PathBuf> = ["sessions", "archived_sessions"]
            .iter()
            .map(|d| input.join(d))
            .filter(|d| d.is_dir())
            .collect();
        if roots.is_empty() {
            walk(input, 0, &mut files, unread.as_deref_mut())?;
        } else {
            for r in roots {
                walk(&r, 1, &mut files, unread.as_deref_mut())?;
            }
        }
    }
    files.sort();
    files.dedup();
    if files.is_empty() {
        return Err(ImportError::Empty(format!(
            "no Codex rollouts (rollout-*.jsonl) found in {}",
            crate::shown(inputs)
        )));
    }
    Ok(files)
}

// Walked by hand rather than with walkdir: a folder that cannot be read
// below the inputs is passed over and said when asked, but is an error at
// the input itself, and an entry whose type cannot be read is skipped,
// where walkdir gives every failure as one kind of error item.
pub(super) fn walk(
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
        // Symlinked folders are not followed (no loops).
        if ft.is_dir() {
            if depth < MAX_DEPTH {
                walk(&path, depth + 1, files, unread.as_deref_mut())?;
            }
        } else if is_rollout_name(&path) && path.is_file() {
            files.push(path);
        }
    }
    Ok(())
}

/// `rollout-*.jsonl`, the name Codex gives a session's file.
pub(crate) fn is_rollout_name(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
}

//! Removing a folder this process staged, its marker last: what the run
//! does when a report is replaced or abandoned, and what the clean-up on a
//! signal does ([`super::interrupt`]). Below both, so that neither reaches
//! into the other.

use std::path::Path;

/// The file a report folder carries at its root: its first line says what
/// the folder is, the others list every file the report wrote. A later
/// report replaces the folder only when it holds nothing else.
pub const REPORT_MARKER: &str = ".tracecost-report";

/// Removes a folder this process staged or set aside, its marker last: a
/// removal cut short (a kill while a large report is removed) leaves a
/// folder the next run still knows for ours by its marker, or an empty one,
/// and removes it (`output::remove_stale_staging`). A plain recursive removal goes
/// in directory order and may take the marker first, leaving a partial
/// report no run would ever claim.
pub(super) fn remove_staged(path: &Path) -> std::io::Result<()> {
    // A report made read-only (by whoever read it) is still this user's to
    // remove, as `rm -rf` removes one's own read-only tree.
    open_to_owner(path);
    remove_staged_with(path, |p, is_dir| {
        if is_dir {
            std::fs::remove_dir_all(p)
        } else {
            std::fs::remove_file(p)
        }
    })
}

/// Gives the owner write and search permission on the folder `dir` and on
/// every folder below it (symlinks are not followed); what cannot be
/// changed is left as it is, and the removal then says why it failed.
/// Recursive by hand rather than with walkdir, which opens a folder before
/// handing it over: a folder must be given permission before it is listed.
fn open_to_owner(dir: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = std::fs::symlink_metadata(dir) else {
            return;
        };
        if !meta.is_dir() {
            return;
        }
        let mode = meta.permissions().mode();
        if mode & 0o700 != 0o700 {
            let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o700));
        }
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                open_to_owner(&e.path());
            }
        }
    }
}

fn remove_staged_with(
    path: &Path,
    mut remove: impl FnMut(&Path, bool) -> std::io::Result<()>,
) -> std::io::Result<()> {
    // Another removal of the same folder (a signal's clean-up beside the
    // run's own) may take an entry first: gone is what was wanted.
    let gone = |r: std::io::Result<()>| match r {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    };
    let entries = match std::fs::read_dir(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        r => r?,
    };
    for e in entries {
        let e = e?;
        if e.file_name() == REPORT_MARKER {
            continue;
        }
        let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
        gone(remove(&e.path(), is_dir))?;
    }
    gone(remove(&path.join(REPORT_MARKER), false))?;
    gone(std::fs::remove_dir(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_staged_folder_loses_its_marker_last() {
        let d = tempfile::tempdir().unwrap();
        let staged = d.path().join(".out.tmp-1");
        std::fs::create_dir_all(staged.join("charts")).unwrap();
        for f in ["a.html", REPORT_MARKER, "z.json", "charts/c.svg"] {
            std::fs::write(staged.join(f), "x").unwrap();
        }
        let mut order = Vec::new();
        remove_staged_with(&staged, |p, is_dir| {
            order.push(p.file_name().unwrap().to_string_lossy().into_owned());
            if is_dir {
                std::fs::remove_dir_all(p)
            } else {
                std::fs::remove_file(p)
            }
        })
        .unwrap();
        assert_eq!(order.len(), 4, "{order:?}");
        assert_eq!(order.last().map(String::as_str), Some(REPORT_MARKER));
        assert!(!staged.exists());
        // Cut short after the first entry: the marker is still there, so
        // the next run claims the folder.
        std::fs::create_dir_all(&staged).unwrap();
        for f in [REPORT_MARKER, "a.html", "b.html"] {
            std::fs::write(staged.join(f), "x").unwrap();
        }
        let mut n = 0;
        let cut = remove_staged_with(&staged, |p, _| {
            n += 1;
            if n > 1 {
                return Err(std::io::Error::other("killed"));
            }
            std::fs::remove_file(p)
        });
        assert!(cut.is_err());
        assert!(staged.join(REPORT_MARKER).is_file());
        // And a folder already gone is no error.
        remove_staged(&staged).unwrap();
        remove_staged(&staged).unwrap();
    }
}

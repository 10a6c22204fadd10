//! Running the binary in a folder of the test's, and looking at what it left.

use std::path::{Path, PathBuf};
use std::process::Output;

/// The binary under test.
pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tracecost"))
}

/// A file of the repository (a bundled trace, a fixture).
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// What one run of the binary did.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(out: Output) -> Self {
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

/// Runs `tracecost ARGS` in `dir`, without a progress bar.
pub fn run_in(dir: &Path, args: &[&str]) -> Run {
    std::process::Command::new(bin())
        .current_dir(dir)
        .env("TRACECOST_NO_PROGRESS", "1")
        .args(args)
        .output()
        .expect("the binary runs")
        .into()
}

/// Every file under `dir`, relative and sorted, with its bytes.
pub fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                walk(root, &p, out);
            } else if t.is_file() {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The names of `dir`'s entries, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

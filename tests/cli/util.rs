//! What the modules share: running the binary (in a folder of the test's,
//! or as `assert_cmd` does), the repository's files, and looking at what a
//! run left.

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

/// A file or folder under `tests/fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    repo("tests/fixtures").join(rel)
}

/// The binary as an `assert_cmd` command, without a progress bar.
pub fn tracecost() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("tracecost").unwrap();
    c.env("TRACECOST_NO_PROGRESS", "1");
    c
}

/// A run's exit code (-1 when killed), stdout and stderr, which must be
/// UTF-8.
pub fn outcome(out: Output) -> (i32, String, String) {
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Writes `text` to the file `name` in `dir`.
pub fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
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

/// Runs `tracecost ARGS` in `dir` like [`run_in`], but kills it after
/// `secs` seconds; `None` when it had to be killed (it hung).
pub fn run_in_with_timeout(dir: &Path, args: &[&str], secs: u64) -> Option<Run> {
    let mut cmd = std::process::Command::new(bin());
    cmd.current_dir(dir)
        .env("TRACECOST_NO_PROGRESS", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(args);
    run_with_timeout(cmd, secs)
}

/// Runs `cmd` with its output captured, killing it after `secs` seconds;
/// `None` when it had to be killed.
pub fn run_with_timeout(mut cmd: std::process::Command, secs: u64) -> Option<Run> {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // Read both pipes on threads, so that a full pipe cannot stall the child.
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let stdout = out.join().unwrap();
    let stderr = err.join().unwrap();
    status.map(|s| Run {
        code: s.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    })
}

/// Runs `tracecost ARGS` in `dir` as a user that file permissions apply
/// to: as is for a normal user; as `nobody` (uid and gid 65534) when the
/// tests run as root, who reads any file whatever its mode. `dir` and the
/// files the run reads must then be open to others.
#[cfg(unix)]
pub fn run_in_unprivileged(dir: &Path, args: &[&str], secs: u64) -> Option<Run> {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(bin());
    cmd.current_dir(dir)
        .env("TRACECOST_NO_PROGRESS", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(args);
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        cmd.uid(65534).gid(65534);
    }
    run_with_timeout(cmd, secs)
}

/// Makes a FIFO at `path`.
#[cfg(unix)]
pub fn mkfifo(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the call's duration.
    let rc = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(rc, 0, "mkfifo {}", path.display());
}

/// Copies the folder `from` into `to`, recursively (`to` is created).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

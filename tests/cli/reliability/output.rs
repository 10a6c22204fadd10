//! `report --out` and `-o`: only tracecost's own output is ever replaced,
//! and an interrupted run leaves the old output, the new one or none.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::{names, repo, run_in, tree};

const TRACE: &str = "traces/massage-gun.json";

fn notes(dir: &Path) {
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("notes.txt"), "my notes\n").unwrap();
    std::fs::write(dir.join("sub/plan.md"), "# plan\n").unwrap();
}

fn refused(run: &crate::util::Run, needle: &str) {
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains(needle), "{}", run.stderr);
}

#[test]
fn out_dot_keeps_the_working_directory() {
    let d = tempfile::tempdir().unwrap();
    notes(d.path());
    let trace = repo(TRACE);
    let before = tree(d.path());
    let run = run_in(d.path(), &["report", trace.to_str().unwrap(), "--out", "."]);
    refused(
        &run,
        "--out .: holds notes.txt and is not a tracecost report",
    );
    assert_eq!(tree(d.path()), before);
}

#[test]
fn a_folder_of_notes_is_never_replaced() {
    let d = tempfile::tempdir().unwrap();
    notes(&d.path().join("mine"));
    let trace = repo(TRACE);
    let before = tree(d.path());
    let run = run_in(
        d.path(),
        &["report", trace.to_str().unwrap(), "--out", "mine"],
    );
    refused(&run, "--out mine: holds notes.txt");
    assert_eq!(tree(d.path()), before);
    // Nothing staged is left beside it either.
    assert_eq!(names(d.path()), ["mine"]);
}

#[test]
fn the_inputs_are_never_the_output() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("traces")).unwrap();
    std::fs::copy(repo(TRACE), d.path().join("traces/a.json")).unwrap();
    let before = tree(d.path());
    let run = run_in(d.path(), &["report", "traces", "--out", "traces"]);
    refused(&run, "--out traces: is the input traces");
    let run = run_in(d.path(), &["report", "traces/a.json", "--out", "traces"]);
    refused(&run, "--out traces: holds the input traces/a.json");
    // The same folder by another spelling.
    let run = run_in(
        d.path(),
        &["report", "traces", "--out", "./traces/../traces"],
    );
    refused(&run, "is the input traces");
    // The default input, `traces/`, with the default output's parent named.
    let run = run_in(d.path(), &["report", "--out", "."]);
    refused(&run, "--out .: holds the input traces");
    assert_eq!(tree(d.path()), before);
}

#[test]
fn a_previous_report_is_replaced_and_only_it() {
    let d = tempfile::tempdir().unwrap();
    let trace = repo(TRACE);
    let trace = trace.to_str().unwrap();
    let run = run_in(d.path(), &["report", trace, "--out", "out"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let first = tree(&d.path().join("out"));
    let marker = std::fs::read_to_string(d.path().join("out/.tracecost-report")).unwrap();
    let listed: Vec<&str> = marker.lines().skip(1).collect();
    let written: Vec<&str> = first
        .iter()
        .map(|(f, _)| f.as_str())
        .filter(|f| *f != ".tracecost-report")
        .collect();
    assert_eq!(listed, written, "the marker lists every file written");
    // Replaced by the same report: the same bytes.
    let run = run_in(d.path(), &["report", trace, "--out", "out"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(tree(&d.path().join("out")), first);
    // A file of the user's added to it: the folder is no longer ours alone.
    std::fs::write(d.path().join("out/charts/mine.txt"), "keep me").unwrap();
    let run = run_in(d.path(), &["report", trace, "--out", "out"]);
    refused(
        &run,
        "--out out: holds charts/mine.txt, which the report there did not write",
    );
    assert_eq!(
        std::fs::read(d.path().join("out/charts/mine.txt")).unwrap(),
        b"keep me"
    );
    // A report without a marker (written by hand, or long ago) is not
    // taken for one.
    std::fs::remove_file(d.path().join("out/charts/mine.txt")).unwrap();
    std::fs::remove_file(d.path().join("out/.tracecost-report")).unwrap();
    let run = run_in(d.path(), &["report", trace, "--out", "out"]);
    refused(
        &run,
        "is not a tracecost report (it has no .tracecost-report; a report written by an older tracecost has none: remove that folder by hand)",
    );
    assert_eq!(names(d.path()), ["out"]);
}

#[test]
fn an_out_that_is_a_file_is_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("out"), "a file").unwrap();
    let trace = repo(TRACE);
    let run = run_in(
        d.path(),
        &["report", trace.to_str().unwrap(), "--out", "out"],
    );
    refused(&run, "--out out: exists and is not a folder");
    assert_eq!(std::fs::read(d.path().join("out")).unwrap(), b"a file");
}

#[test]
fn import_never_writes_over_its_input() {
    let d = tempfile::tempdir().unwrap();
    let log = d.path().join("log.jsonl");
    std::fs::copy(repo("tests/fixtures/import/oa_pairs.jsonl"), &log).unwrap();
    std::fs::hard_link(&log, d.path().join("alias.json")).unwrap();
    let before = tree(d.path());
    let run = run_in(
        d.path(),
        &["import", "--from", "openai", "log.jsonl", "-o", "log.jsonl"],
    );
    refused(&run, "-o log.jsonl: is the input log.jsonl");
    // The same file by another name (a hard link): compared by inode.
    let run = run_in(
        d.path(),
        &[
            "import",
            "--from",
            "openai",
            "log.jsonl",
            "-o",
            "alias.json",
        ],
    );
    refused(&run, "-o alias.json: is the input log.jsonl");
    // An output inside an input folder would be read as an input next time.
    let run = run_in(
        d.path(),
        &["import", "--from", "openai", ".", "-o", "alias.json"],
    );
    refused(&run, "is inside the input folder .");
    assert_eq!(tree(d.path()), before);
    // Elsewhere, it is written.
    std::fs::create_dir(d.path().join("out")).unwrap();
    let run = run_in(
        d.path(),
        &[
            "import",
            "--from",
            "openai",
            "log.jsonl",
            "-o",
            "out/t.json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// Starts `tracecost ARGS` in `dir`.
fn spawn(dir: &Path, args: &[&str]) -> std::process::Child {
    std::process::Command::new(crate::util::bin())
        .current_dir(dir)
        .env("TRACECOST_NO_PROGRESS", "1")
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

fn staging(dir: &Path) -> Vec<String> {
    names(dir)
        .into_iter()
        .filter(|n| n.starts_with('.') && (n.contains(".tmp-") || n.contains(".old-")))
        .collect()
}

/// Waits until `dir` holds staging, or the child ends.
fn wait_for_staging(dir: &Path, child: &mut std::process::Child) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(60) {
        if !staging(dir).is_empty() {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    panic!("no staging appeared in {}", dir.display());
}

fn signal(child: &std::process::Child, sig: libc::c_int) {
    // SAFETY: sends a signal to our own child, which has not been reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
}

#[test]
fn a_kill_at_any_point_leaves_the_old_report_the_new_or_none() {
    let d = tempfile::tempdir().unwrap();
    let old_trace = repo(TRACE);
    let new_inputs = repo("traces");
    let (old_trace, new_inputs) = (old_trace.to_str().unwrap(), new_inputs.to_str().unwrap());
    // The two reports, each written whole once; the new one timed, so the
    // kills fall across the whole of a run on this machine.
    let start = Instant::now();
    let run = run_in(d.path(), &["report", new_inputs, "--out", "new"]);
    let full = start.elapsed();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let new = tree(&d.path().join("new"));
    let run = run_in(d.path(), &["report", old_trace, "--out", "old"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let old = tree(&d.path().join("old"));
    assert_ne!(old, new);
    let mut seen = [0; 3];
    let run = run_in(d.path(), &["report", old_trace, "--out", "out"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    for percent in [0, 2, 10, 30, 60, 85, 95, 100, 110, 1000] {
        let delay = full * percent / 100;
        let mut child = spawn(d.path(), &["report", new_inputs, "--out", "out"]);
        let start = Instant::now();
        while start.elapsed() < delay && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(1));
        }
        if child.try_wait().unwrap().is_none() {
            signal(&child, libc::SIGKILL);
        }
        child.wait().unwrap();
        let left = tree(&d.path().join("out"));
        let i = if left == old {
            0
        } else if left == new {
            1
        } else if left.is_empty() && !d.path().join("out").exists() {
            2
        } else {
            panic!("killed after {delay:?}: out/ is neither the old report nor the new");
        };
        seen[i] += 1;
        // The next run beside the same output removes what the killed
        // one staged (and puts the old report back for the next kill).
        let run = run_in(d.path(), &["report", old_trace, "--out", "out"]);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(staging(d.path()), Vec::<String>::new(), "{}", run.stderr);
        assert_eq!(tree(&d.path().join("out")), old);
    }
    // Killed both before and after the swap.
    assert!(seen[0] > 0 && seen[1] > 0, "outcomes {seen:?}");
}

#[test]
fn sigterm_and_sigint_remove_the_staging() {
    let d = tempfile::tempdir().unwrap();
    let trace = repo(TRACE);
    let inputs = repo("traces");
    let run = run_in(
        d.path(),
        &["report", trace.to_str().unwrap(), "--out", "out"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let old = tree(&d.path().join("out"));
    for (sig, code) in [(libc::SIGTERM, 143), (libc::SIGINT, 130)] {
        let mut child = spawn(
            d.path(),
            &["report", inputs.to_str().unwrap(), "--out", "out"],
        );
        assert!(
            wait_for_staging(d.path(), &mut child),
            "the report ended first"
        );
        signal(&child, sig);
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "signal {sig}");
        assert_eq!(staging(d.path()), Vec::<String>::new(), "signal {sig}");
        assert_eq!(tree(&d.path().join("out")), old, "signal {sig}");
    }
    // A file written with -o: the same.
    let mut child = spawn(
        d.path(),
        &["gen", "fleet", "--sessions", "60", "-o", "fleet.json"],
    );
    assert!(wait_for_staging(d.path(), &mut child), "gen ended first");
    signal(&child, libc::SIGTERM);
    assert_eq!(child.wait().unwrap().code(), Some(143));
    assert_eq!(names(d.path()), ["out"]);
}

#[test]
fn a_file_staged_by_a_killed_run_is_removed_by_the_next() {
    let d = tempfile::tempdir().unwrap();
    let mut child = spawn(
        d.path(),
        &["gen", "fleet", "--sessions", "60", "-o", "fleet.json"],
    );
    assert!(wait_for_staging(d.path(), &mut child), "gen ended first");
    signal(&child, libc::SIGKILL);
    child.wait().unwrap();
    let left = staging(d.path());
    assert_eq!(left, [format!(".fleet.json.tmp-{}", child.id())]);
    // Staging of another output, and of a process still running (this
    // test's), are not touched.
    let live = format!(".fleet.json.tmp-{}", std::process::id());
    std::fs::write(d.path().join(&live), "").unwrap();
    std::fs::write(d.path().join(".other.json.tmp-1"), "").unwrap();
    let run = run_in(
        d.path(),
        &["gen", "session", "--calls", "3", "-o", "fleet.json"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains("left by an interrupted run"),
        "{}",
        run.stderr
    );
    let mut expected = vec![
        ".other.json.tmp-1".to_owned(),
        live,
        "fleet.json".to_owned(),
    ];
    expected.sort();
    assert_eq!(names(d.path()), expected);
}

/// Makes everything under `dir` (and `dir`) read-only: folders 555, files
/// 444, as a reader protecting a report might.
fn read_only(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            read_only(&e.path());
        } else {
            std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o444)).unwrap();
        }
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555)).unwrap();
}

#[test]
fn a_read_only_earlier_report_is_replaced_and_removed_as_its_owner_runs() {
    use std::os::unix::fs::PermissionsExt;
    // As a user permissions apply to (`nobody` when the tests run as root).
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(repo(TRACE), tmp.path().join("t.json")).unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(
        tmp.path().join("t.json"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    let go =
        |args: &[&str]| crate::util::run_in_unprivileged(tmp.path(), args, 300).expect("no hang");
    let args = ["report", "t.json", "--out", "r"];
    let first = go(&args);
    assert_eq!(first.code, 0, "{}", first.stderr);
    read_only(&tmp.path().join("r"));
    let again = go(&args);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(!again.stderr.contains("warning"), "{}", again.stderr);
    // The new report in place, nothing of the old one left beside it.
    assert_eq!(names(tmp.path()), ["r", "t.json"]);
    assert!(tmp.path().join("r/index.html").is_file());
}

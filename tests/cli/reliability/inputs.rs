//! Inputs that cannot be read, or are not files to read: broken symlinks,
//! symlink loops, unreadable files and folders, FIFOs; and what a baseline
//! may name. tracecost skips them in folders (naming each), refuses them
//! when named, never opens a FIFO, and never hangs.

use std::path::Path;

use crate::util::{Run, mkfifo, repo, run_in_unprivileged, run_in_with_timeout};

/// Long enough for a debug build on a busy machine; a hang is far longer.
const SECS: u64 = 60;

fn run(dir: &Path, args: &[&str]) -> Run {
    run_in_with_timeout(dir, args, SECS).unwrap_or_else(|| panic!("`tracecost {args:?}` hung"))
}

/// A folder holding a copy of the small fixture trace as `small.json`.
fn folder_with_a_trace() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("in")).unwrap();
    std::fs::copy(
        repo("tests/fixtures/traces/small.json"),
        tmp.path().join("in/small.json"),
    )
    .unwrap();
    tmp
}

fn symlink(target: &str, link: &Path) {
    std::os::unix::fs::symlink(target, link).unwrap();
}

/// The run succeeded on the one trace and named `name` as skipped.
fn assert_read_and_skipped(r: &Run, name: &str, why: &str) {
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("off+none"), "{}", r.stdout);
    let line = r
        .stderr
        .lines()
        .find(|l| l.contains(name))
        .unwrap_or_else(|| panic!("{name} not named as skipped: {}", r.stderr));
    assert!(line.contains("skipped"), "{line}");
    assert!(line.contains(why), "{line}");
}

/// The run was refused with one line naming `name` and saying `why`.
fn assert_refused(r: &Run, name: &str, why: &str) {
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert_eq!(r.stderr.lines().count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains(name), "{}", r.stderr);
    assert!(r.stderr.contains(why), "{}", r.stderr);
}

#[test]
fn an_editors_lock_symlink_in_a_folder_is_skipped_and_named() {
    let tmp = folder_with_a_trace();
    // What Emacs leaves beside a file being edited: a symlink to nothing.
    symlink(
        "root@host.12345:1700000000",
        &tmp.path().join("in/.#small.json"),
    );
    let r = run(tmp.path(), &["sweep", "in"]);
    assert_read_and_skipped(&r, ".#small.json", "dangling symlink");
    // The same bytes every time.
    assert_eq!(run(tmp.path(), &["sweep", "in"]).stderr, r.stderr);
}

#[test]
fn a_symlink_loop_in_a_folder_is_skipped_and_named() {
    let tmp = folder_with_a_trace();
    symlink("loop-b.json", &tmp.path().join("in/loop-a.json"));
    symlink("loop-a.json", &tmp.path().join("in/loop-b.json"));
    let r = run(tmp.path(), &["sweep", "in"]);
    assert_read_and_skipped(&r, "loop-a.json", "symlink loop");
    assert_read_and_skipped(&r, "loop-b.json", "symlink loop");
    // In name order.
    let a = r.stderr.find("loop-a.json").unwrap();
    let b = r.stderr.find("loop-b.json").unwrap();
    assert!(a < b, "{}", r.stderr);
}

#[test]
fn broken_symlinks_named_are_refused_or_under_skip_invalid_skipped() {
    let tmp = folder_with_a_trace();
    symlink("nowhere.json", &tmp.path().join("gone.json"));
    symlink("loop.json", &tmp.path().join("loop.json"));
    for name in ["gone.json", "loop.json"] {
        let r = run(tmp.path(), &["sweep", "in/small.json", name]);
        assert_refused(&r, name, "cannot read");
        let r = run(
            tmp.path(),
            &["sweep", "--skip-invalid", "in/small.json", name],
        );
        assert_read_and_skipped(&r, name, "cannot read");
    }
}

/// Opens `dir` and what it holds to others, so that an unprivileged run
/// (see [`run_in_unprivileged`]) reaches them.
fn open_to_others(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else if e.file_type().unwrap().is_file() {
                std::fs::set_permissions(e.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
            }
        }
    }
}

#[test]
fn skip_invalid_skips_an_unreadable_file_and_folder() {
    use std::os::unix::fs::PermissionsExt;
    // Run as a user permissions apply to (as `nobody` when the tests run
    // as root), so that mode 000 really makes these unreadable.
    let tmp = folder_with_a_trace();
    std::fs::copy(
        repo("tests/fixtures/traces/small.json"),
        tmp.path().join("in/locked.json"),
    )
    .unwrap();
    std::fs::create_dir(tmp.path().join("locked-dir")).unwrap();
    open_to_others(tmp.path());
    let mode0 = std::fs::Permissions::from_mode(0o000);
    std::fs::set_permissions(tmp.path().join("in/locked.json"), mode0.clone()).unwrap();
    std::fs::set_permissions(tmp.path().join("locked-dir"), mode0).unwrap();
    let go = |args: &[&str]| run_in_unprivileged(tmp.path(), args, SECS).expect("no hang");

    // Without --skip-invalid: refused, naming the file.
    let r = go(&["sweep", "in"]);
    assert_refused(&r, "locked.json", "Permission denied");
    let r = go(&["sweep", "in/small.json", "locked-dir"]);
    assert_refused(&r, "locked-dir", "Permission denied");

    // With it: skipped, each named.
    let r = go(&["sweep", "--skip-invalid", "in"]);
    assert_read_and_skipped(&r, "locked.json", "Permission denied");
    let r = go(&["sweep", "--skip-invalid", "in/small.json", "locked-dir"]);
    assert_read_and_skipped(&r, "locked-dir", "Permission denied");
}

#[test]
fn an_unreadable_subfolder_is_refused_or_skipped_never_passed_over_in_silence() {
    use std::os::unix::fs::PermissionsExt;
    // A folder's plain subfolders are read; one that cannot be is named.
    let tmp = folder_with_a_trace();
    std::fs::create_dir(tmp.path().join("in/day-2")).unwrap();
    open_to_others(tmp.path());
    std::fs::set_permissions(
        tmp.path().join("in/day-2"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let go = |args: &[&str]| run_in_unprivileged(tmp.path(), args, SECS).expect("no hang");
    let r = go(&["sweep", "in"]);
    assert_refused(&r, "day-2", "Permission denied");
    let r = go(&["sweep", "--skip-invalid", "in"]);
    assert_read_and_skipped(&r, "day-2", "Permission denied");
}

#[test]
fn a_fifo_in_a_folder_is_skipped_never_opened() {
    let tmp = folder_with_a_trace();
    mkfifo(&tmp.path().join("in/pipe.json"));
    let r = run(tmp.path(), &["sweep", "in"]);
    assert_read_and_skipped(&r, "pipe.json", "FIFO");
    let r = run(tmp.path(), &["sweep", "--skip-invalid", "in"]);
    assert_read_and_skipped(&r, "pipe.json", "FIFO");
}

#[test]
fn a_fifo_named_is_refused_never_opened() {
    let tmp = folder_with_a_trace();
    mkfifo(&tmp.path().join("pipe.json"));
    for args in [
        &["sweep", "pipe.json"][..],
        &["sweep", "--skip-invalid", "in/small.json", "pipe.json"],
        &["replay", "pipe.json"],
        &["report", "pipe.json", "--out", "out"],
        &["import", "--from", "anthropic", "pipe.json", "-o", "t.json"],
    ] {
        let r = run(tmp.path(), args);
        assert_refused(&r, "pipe.json", "is a FIFO, expected a trace file");
    }
    assert!(!tmp.path().join("out").exists());
    assert!(!tmp.path().join("t.json").exists());
}

fn baseline(dir: &Path, trace: &str) -> std::path::PathBuf {
    let p = dir.join("baseline.json");
    let json = serde_json::json!({
        "format": "tracecost.baseline/v1",
        "entries": [{"trace": trace, "config": "off+none"}]
    });
    std::fs::write(&p, json.to_string()).unwrap();
    p
}

#[test]
fn a_fifo_named_in_or_as_a_baseline_is_refused_never_opened() {
    let tmp = folder_with_a_trace();
    mkfifo(&tmp.path().join("in/pipe.json"));
    baseline(&tmp.path().join("in"), "pipe.json");
    let r = run(
        tmp.path(),
        &["check", "--baseline", "in/baseline.json", "--update"],
    );
    assert_refused(&r, "pipe.json", "is a FIFO, expected a trace file");
    let r = run(tmp.path(), &["check", "--baseline", "in/pipe.json"]);
    assert_refused(&r, "pipe.json", "is a FIFO, expected a baseline file");
}

#[test]
fn baseline_entries_stay_in_the_baseline_folder() {
    let tmp = folder_with_a_trace();
    let ci = tmp.path().join("ci");
    std::fs::create_dir(&ci).unwrap();
    std::fs::write(ci.join("notes.json"), "{}").unwrap();
    let outside = tmp.path().join("in/small.json");
    symlink(outside.to_str().unwrap(), &ci.join("link.json"));
    // Run from above the baseline's folder: where the command runs
    // widens nothing.
    for (entry, why) in [
        (outside.to_str().unwrap(), "an absolute path"),
        ("../in/small.json", "leaves"),
        ("sub/../../in/small.json", "leaves"),
        ("link.json", "leaves"),
    ] {
        baseline(&ci, entry);
        let r = run(
            tmp.path(),
            &["check", "--baseline", "ci/baseline.json", "--update"],
        );
        assert_refused(&r, "baseline.json", why);
        assert!(r.stderr.contains("/entries/0/trace"), "{}", r.stderr);
        assert!(r.stderr.contains(entry), "{}", r.stderr);
    }
    // Inside the folder, by a path that comes back into it: fine.
    std::fs::copy(&outside, ci.join("small.json")).unwrap();
    baseline(&ci, "./x/../small.json");
    std::fs::create_dir(ci.join("x")).unwrap();
    let r = run(&ci, &["check", "--baseline", "baseline.json", "--update"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The bundled gate, run from anywhere.
    let gate = repo("cost-baseline.json");
    let r = run(tmp.path(), &["check", "--baseline", gate.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
}

#[test]
fn a_value_from_a_file_that_is_not_a_trace_is_never_echoed() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = "sk-live-0123456789abcdef";
    std::fs::write(
        tmp.path().join("settings.json"),
        format!("{{\"format\": \"{secret}\", \"token\": \"{secret}\"}}"),
    )
    .unwrap();
    baseline(tmp.path(), "settings.json");
    let r = run(tmp.path(), &["check", "--baseline", "baseline.json"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("settings.json"), "{}", r.stderr);
    assert!(!r.stderr.contains(secret), "{}", r.stderr);
    let r = run(tmp.path(), &["replay", "settings.json"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(!r.stderr.contains(secret), "{}", r.stderr);
    // Nor a baseline's: one with another `format` may be any JSON file.
    let r = run(tmp.path(), &["check", "--baseline", "settings.json"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("settings.json"), "{}", r.stderr);
    assert!(!r.stderr.contains(secret), "{}", r.stderr);
}

#[test]
fn a_log_whose_first_line_nests_deeply_is_read_as_a_log() {
    let tmp = tempfile::tempdir().unwrap();
    // An Anthropic request/response record whose tool input nests past
    // serde_json's recursion limit (128), then an ordinary record.
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let record = |input: &str| {
        format!(
            concat!(
                r#"{{"request":{{"model":"claude-sonnet-4-5","max_tokens":10,"messages":"#,
                r#"[{{"role":"user","content":"hi"}}],"metadata":{{"x":{input}}}}},"#,
                r#""response":{{"type":"message","role":"assistant","model":"claude-sonnet-4-5","#,
                r#""content":[{{"type":"text","text":"ok"}}],"stop_reason":"end_turn","#,
                r#""usage":{{"input_tokens":5,"output_tokens":1}}}}}}"#
            ),
            input = input
        )
    };
    std::fs::write(
        tmp.path().join("proxy.jsonl"),
        format!("{}\n{}\n", record(&deep), record("1")),
    )
    .unwrap();
    let r = run(tmp.path(), &["sweep", "proxy.jsonl"]);
    assert!(!r.stderr.contains("tracecost import"), "{}", r.stderr);
    assert!(!r.stderr.contains(":2:1"), "{}", r.stderr);
    assert!(!r.stderr.contains("/format"), "{}", r.stderr);
    // Read as a log: imported, or refused by the importer at line 1.
    assert!(
        r.code == 0 || r.stderr.contains("proxy.jsonl:1"),
        "{}",
        r.stderr
    );
}

#[test]
fn skip_invalid_skips_unreadable_transcripts_and_folders_inside_claude_code_data() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let name = "44444444-4444-4444-8444-444444444444.jsonl";
    let src = repo("tests/fixtures/claude-code/projects/-home-dev-resumed").join(name);
    let projects = tmp.path().join("cc/projects");
    for project in ["-home-dev-resumed", "-home-dev-locked", "-home-dev-lockdir"] {
        std::fs::create_dir_all(projects.join(project)).unwrap();
        std::fs::copy(&src, projects.join(project).join(name)).unwrap();
    }
    open_to_others(tmp.path());
    let mode0 = std::fs::Permissions::from_mode(0o000);
    std::fs::set_permissions(projects.join("-home-dev-locked").join(name), mode0.clone()).unwrap();
    std::fs::set_permissions(projects.join("-home-dev-lockdir"), mode0).unwrap();
    let go = |args: &[&str]| run_in_unprivileged(tmp.path(), args, SECS).expect("no hang");
    for command in ["sweep", "fidelity"] {
        // Without --skip-invalid: refused, naming what cannot be read.
        let r = go(&[command, "cc"]);
        assert_refused(&r, "-home-dev-lock", "Permission denied");
        // With it: the readable session is read, the rest named.
        let r = go(&[command, "--skip-invalid", "cc"]);
        assert_eq!(r.code, 0, "{command}: {}", r.stderr);
        assert!(r.stdout.contains("claude-code"), "{}", r.stdout);
        for locked in ["-home-dev-locked", "-home-dev-lockdir"] {
            let line = r
                .stderr
                .lines()
                .find(|l| l.contains(locked))
                .unwrap_or_else(|| panic!("{locked} not named: {}", r.stderr));
            assert!(
                line.contains("skipped") && line.contains("Permission denied"),
                "{line}"
            );
        }
    }
}

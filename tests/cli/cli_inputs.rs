//! `report`, `sweep`, `replay` and `check` read what users have — Claude
//! Code folders, request logs, LangChain and OpenAI files, folders of them —
//! with no import step; files of another kind in a folder are passed over
//! and counted on one line; damaged input is an error naming the place, or
//! is skipped with `--skip-invalid`.

use std::path::{Path, PathBuf};

use crate::util::{Run, bin, copy_dir, fixture, outcome, tracecost};

fn run(args: &[&str]) -> (i32, String, String) {
    let out = crate::util::tracecost()
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(args)
        .output()
        .unwrap();
    outcome(out)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// One Claude Code exchange: a user line and the assistant's reply.
fn exchange(n: usize) -> String {
    let user = format!(
        r#"{{"parentUuid":null,"isSidechain":false,"type":"user","message":{{"role":"user","content":"question {n}"}},"uuid":"u{n}","sessionId":"s1","timestamp":"2025-06-01T10:0{n}:00.000Z"}}"#
    );
    let reply = format!(
        r#"{{"parentUuid":"u{n}","isSidechain":false,"type":"assistant","message":{{"id":"msg_{n}","type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[{{"type":"text","text":"answer {n}"}}],"usage":{{"input_tokens":1200,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":20}}}},"requestId":"req_{n}","uuid":"a{n}","sessionId":"s1","timestamp":"2025-06-01T10:0{n}:02.000Z"}}"#
    );
    format!("{user}\n{reply}\n")
}

/// A Claude config root holding one project with one session, whose
/// transcript is `text`.
fn claude_root(dir: &Path, text: &str) -> PathBuf {
    let project = dir.join("claude/projects/-home-me-app");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join("s1.jsonl"), text).unwrap();
    dir.join("claude")
}

/// `results.json` of a report.
/// A report's `results.json` without the `source` of each trace: the same
/// traces read by another path give the same figures.
fn results(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("results.json"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("\"source\":"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn files_of_another_kind_in_a_folder_are_skipped_and_counted_on_one_line() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mixed");
    std::fs::create_dir(&dir).unwrap();
    // Sorted before the trace: reading used to stop at the first JSON
    // file that is not a trace.
    std::fs::write(dir.join("a-notes.json"), r#"{"todo": ["x"]}"#).unwrap();
    std::fs::write(dir.join("README.md"), "# My traces\n").unwrap();
    std::fs::write(dir.join("settings.json"), r#"{"model": "opus"}"#).unwrap();
    std::fs::copy(fixture("traces/small.json"), dir.join("small.json")).unwrap();
    let out = tmp.path().join("report");
    let (code, _, err) = run(&["report", s(&dir), "--out", s(&out), "--cache", "none"]);
    assert_eq!(code, 0, "{err}");
    let skipped: Vec<&str> = err.lines().filter(|l| l.contains("skipped")).collect();
    assert_eq!(
        skipped,
        ["tracecost: skipped 3 file(s) of another kind: README.md, a-notes.json, settings.json"],
        "{err}"
    );
    // The same figures as the trace file read alone.
    let alone = tmp.path().join("alone");
    let (code, _, err) = run(&[
        "report",
        s(&fixture("traces/small.json")),
        "--out",
        s(&alone),
        "--cache",
        "none",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(results(&out), results(&alone));
}

#[test]
fn a_folder_holding_nothing_to_read_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("README.md"), "# nothing\n").unwrap();
    let (code, _, err) = run(&["sweep", s(tmp.path())]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no traces, Claude Code transcripts or logs"),
        "{err}"
    );
    assert!(err.contains("1 file(s) of another kind"), "{err}");
}

#[test]
fn a_claude_code_folder_reads_as_its_import_does() {
    let tmp = tempfile::tempdir().unwrap();
    let root = claude_root(tmp.path(), &format!("{}{}", exchange(1), exchange(2)));
    std::fs::write(root.join("settings.json"), r#"{"theme": "dark"}"#).unwrap();
    let imported = tmp.path().join("imported.json");
    let (code, _, err) = run(&[
        "import",
        "--from",
        "claude-code",
        s(&root),
        "-o",
        s(&imported),
    ]);
    assert_eq!(code, 0, "{err}");
    let via_import = tmp.path().join("via-import");
    let (code, _, err) = run(&["report", s(&imported), "--out", s(&via_import)]);
    assert_eq!(code, 0, "{err}");
    // The config root, its projects folder and one project: no import step.
    for (i, input) in [
        root.clone(),
        root.join("projects"),
        root.join("projects/-home-me-app"),
    ]
    .iter()
    .enumerate()
    {
        let out = tmp.path().join(format!("direct-{i}"));
        let (code, _, err) = run(&["report", s(input), "--out", s(&out)]);
        assert_eq!(code, 0, "{}: {err}", input.display());
        // A config root's own files are Claude Code's, not counted.
        assert!(!err.contains("skipped"), "{err}");
        assert_eq!(results(&out), results(&via_import), "{}", input.display());
    }
}

#[test]
fn a_damaged_transcript_is_an_error_naming_file_and_line_or_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let text = format!("{}{{\"type\":\"user\",\"mess\n{}", exchange(1), exchange(2));
    let root = claude_root(tmp.path(), &text);
    let (code, _, err) = run(&["replay", s(&root)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("s1.jsonl:3:"), "{err}");
    assert!(err.contains("not JSON"), "{err}");

    let (code, out, err) = run(&["replay", s(&root), "--skip-invalid"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("skipped damaged input: ") && err.contains("s1.jsonl:3:"),
        "{err}"
    );
    assert!(err.contains("(line skipped)"), "{err}");
    assert!(out.contains("s1"), "{out}");

    // An unfinished last line is a session being written, not damage.
    let text = format!("{}{}{{\"type\":\"user\",\"mess", exchange(1), exchange(2));
    let tmp = tempfile::tempdir().unwrap();
    let root = claude_root(tmp.path(), &text);
    let (code, _, err) = run(&["replay", s(&root)]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_damaged_trace_in_a_folder_is_an_error_or_skipped_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(fixture("traces/small.json"), tmp.path().join("a.json")).unwrap();
    std::fs::write(
        tmp.path().join("b.json"),
        "{\"format\":\"tracecost.trace/v1\",\n\"name\":\"cut\",\n\"messages\":[",
    )
    .unwrap();
    let (code, _, err) = run(&["sweep", s(tmp.path())]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("b.json:3:"), "{err}");
    let (code, _, err) = run(&["sweep", s(tmp.path()), "--skip-invalid", "--cache", "none"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("skipped damaged input: ") && err.contains("b.json:3:"),
        "{err}"
    );
    assert!(err.contains("(file skipped)"), "{err}");
}

#[test]
fn logs_are_read_by_their_importer_and_from_forces_one() {
    let tmp = tempfile::tempdir().unwrap();
    // A request/response record: read as an Anthropic log (whose traces
    // record their cache markers, so the default cache policy is
    // `recorded`) unless `--from openai` says otherwise.
    let log = tmp.path().join("calls.jsonl");
    std::fs::write(
        &log,
        concat!(
            r#"{"request":{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}]},"#,
            r#""response":{"model":"claude-sonnet-4-5","content":"hello"}}"#,
            "\n"
        ),
    )
    .unwrap();
    let (code, out, err) = run(&["replay", s(&log), "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(r#""config": "off+recorded""#), "{out}");
    // Read as OpenAI's: its status quo is OpenAI's automatic cache.
    let (code, out, err) = run(&["replay", s(&log), "--from", "openai", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains(r#""config": "off+openai-auto""#), "{out}");

    // Forced onto a file of another format: that importer's error, naming
    // the file.
    let (code, _, err) = run(&[
        "sweep",
        s(&fixture("import/oa_list.json")),
        "--from",
        "langchain",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("oa_list.json"), "{err}");

    // A file of no known kind named explicitly is an error.
    let notes = tmp.path().join("notes.txt");
    std::fs::write(&notes, "hello\n").unwrap();
    let (code, _, err) = run(&["replay", s(&notes)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("notes.txt: not a trace file"), "{err}");
}

#[test]
fn a_transcript_with_no_call_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let root = claude_root(
        tmp.path(),
        "{\"type\":\"summary\",\"summary\":\"x\",\"leafUuid\":\"u\"}\n",
    );
    let (code, _, err) = run(&["sweep", s(&root)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no traces found"), "{err}");
}

#[test]
fn an_explicit_file_must_be_readable_and_of_a_known_kind() {
    let (code, _, err) = run(&["report", "/no/such/trace.json", "--out", "/tmp/never"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("/no/such/trace.json: cannot read"), "{err}");
    let tmp = tempfile::tempdir().unwrap();
    let readme = tmp.path().join("README.md");
    std::fs::write(&readme, "# notes\n").unwrap();
    let (code, _, err) = run(&["sweep", s(&readme)]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("README.md: not a trace file"), "{err}");
}

#[test]
fn a_baseline_entry_may_name_a_claude_code_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let root = claude_root(tmp.path(), &format!("{}{}", exchange(1), exchange(2)));
    let baseline = tmp.path().join("baseline.json");
    let json = serde_json::json!({
        "format": "tracecost.baseline/v1",
        // Relative to the baseline file, as entries must be.
        "entries": [{"trace": root.strip_prefix(tmp.path()).unwrap(), "config": "off+claude-code"}]
    });
    std::fs::write(&baseline, json.to_string()).unwrap();
    let (code, _, err) = run(&["check", "--baseline", s(&baseline), "--update"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = run(&["check", "--baseline", s(&baseline)]);
    assert_eq!(code, 0, "{out}{err}");
}

/// Two records of a Claude Code transcript on one line (no newline between
/// them) are both read, said once in a note, and never stop a run; a line
/// that really is damaged is still the error it was, naming its own line.
#[test]
fn claude_code_records_joined_on_one_line_are_read_and_noted() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("projects/-home-dev-resumed");
    std::fs::create_dir_all(&project).unwrap();
    let name = "44444444-4444-4444-8444-444444444444.jsonl";
    let src = fixture("claude-code/projects/-home-dev-resumed").join(name);
    let mut lines: Vec<String> = std::fs::read_to_string(src)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let second = lines.remove(1);
    lines[0].push_str(&second);
    std::fs::write(project.join(name), lines.join("\n") + "\n").unwrap();
    for command in ["fidelity", "replay"] {
        let (code, _, err) = run(&[command, s(tmp.path())]);
        assert_eq!(code, 0, "{command}: {err}");
        let notes: Vec<&str> = err.lines().filter(|l| l.contains("no newline")).collect();
        assert_eq!(notes.len(), 1, "{err}");
        assert!(
            notes[0].contains("1 line(s) held two or more records"),
            "{err}"
        );
    }
    // A damaged line after it: the error names that line, not the joined one.
    lines.insert(1, r#"{"type":"user","message":{"#.to_owned());
    std::fs::write(project.join(name), lines.join("\n") + "\n").unwrap();
    let (code, _, err) = run(&["fidelity", s(tmp.path())]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&format!("{name}:2:")), "{err}");
}

/// `tracecost report` with no PATH, run in `cwd` with `HOME` at `home`
/// and no other root set.
fn report_without_path(cwd: &Path, home: &Path) -> Run {
    std::process::Command::new(bin())
        .current_dir(cwd)
        .env("TRACECOST_NO_PROGRESS", "1")
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME")
        .args(["report", "--out", "r"])
        .output()
        .expect("the binary runs")
        .into()
}

#[test]
fn report_without_a_path_reads_the_claude_code_home_outside_a_checkout() {
    let cwd = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    copy_dir(&fixture("claude-code-ttl"), &home.path().join(".claude"));
    let run = report_without_path(cwd.path(), home.path());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let claude = home.path().join(".claude");
    assert!(
        run.stderr.contains(&format!(
            "tracecost: no PATH given: reading {}",
            claude.display()
        )),
        "{}",
        run.stderr
    );
    // The same sessions as the report that names the folder.
    let named = tracecost()
        .current_dir(cwd.path())
        .args(["report", "--out", "named"])
        .arg(&claude)
        .output()
        .unwrap();
    assert_eq!(named.status.code(), Some(0));
    let sessions =
        |dir: &str| std::fs::read_to_string(cwd.path().join(dir).join("sessions.csv")).unwrap();
    assert_eq!(sessions("r"), sessions("named"));
}

#[test]
fn report_without_a_path_or_data_says_what_to_pass() {
    let cwd = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = report_without_path(cwd.path(), home.path());
    assert_eq!(run.code, 2);
    assert_eq!(
        run.stderr,
        "tracecost: no PATH given, no traces/ folder here and no Claude Code or Codex sessions in ~/.claude or ~/.codex: pass what to read, e.g. `tracecost report ~/.claude` or `tracecost report my-traces/`\n"
    );
    assert!(!cwd.path().join("r").exists());
}

//! The durable ledger through the binary: a directory shared by traces
//! never answers one trace's id with another's payload, a damaged index is
//! refused with the file, the line and the way out, `tracecost ledger
//! repair` keeps every intact record and sets the rest aside, and numbers
//! and values from the command line are refused or quoted within bounds.

use std::path::Path;

use crate::util::{Run, names, run_in, tree, write};

/// One trace whose only tool call `id` returned `payload`.
fn trace(name: &str, id: &str, payload: &str) -> String {
    format!(
        r#"{{"format":"tracecost.trace/v1","name":"{name}","model":"claude-sonnet-4-5",
"messages":[
{{"role":"user","content":"go"}},
{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"fetch","input":{{}}}}]}},
{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"{payload}"}}]}}
],
"calls":[{{"messages":1}},{{"messages":3}}]}}"#
    )
}

/// A trace with three tool calls `c0`..`c2`, each returning `payload i`.
fn three_results() -> String {
    let mut messages = vec![r#"{"role":"user","content":"go"}"#.to_owned()];
    for i in 0..3 {
        messages.push(format!(
            r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"c{i}","name":"fetch","input":{{}}}}]}}"#
        ));
        messages.push(format!(
            r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"c{i}","content":"payload {i}"}}]}}"#
        ));
    }
    format!(
        r#"{{"format":"tracecost.trace/v1","name":"three","model":"claude-sonnet-4-5","messages":[{}],"calls":[{{"messages":1}},{{"messages":7}}]}}"#,
        messages.join(",")
    )
}

fn one_error_line(run: &Run, code: i32) -> String {
    assert_eq!(run.code, code, "stderr: {}", run.stderr);
    assert_eq!(run.stdout, "", "nothing on stdout");
    assert_eq!(run.stderr.lines().count(), 1, "one line: {}", run.stderr);
    run.stderr.trim_end().to_owned()
}

#[test]
fn a_reused_tool_use_id_recalls_each_traces_own_payload_from_a_shared_ledger() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "a.json",
        &trace("a", "toolu_1", "alpha payload"),
    );
    write(dir.path(), "b.json", &trace("b", "toolu_1", "beta payload"));
    let full = ["--format", "full", "--ledger", "shared"];
    for (file, want) in [
        ("a.json", "alpha payload"),
        ("b.json", "beta payload"),
        ("a.json", "alpha payload"),
    ] {
        let mut args = vec!["recall", file, "toolu_1"];
        args.extend(full);
        let run = run_in(dir.path(), &args);
        // The answer and the newline recall prints after it.
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, format!("{want}\n").as_str()),
            "{file}: {}",
            run.stderr
        );
    }
    // Both payloads are kept, each under its own record.
    let index = std::fs::read_to_string(dir.path().join("shared/index.jsonl")).unwrap();
    assert_eq!(index.lines().count(), 2);
}

#[test]
fn an_id_two_traces_of_one_file_used_is_refused_naming_both_records() {
    let dir = tempfile::tempdir().unwrap();
    let a = trace("a", "toolu_1", "alpha payload");
    let b = trace("b", "toolu_1", "beta payload");
    write(
        dir.path(),
        "both.json",
        &format!(r#"{{"format":"tracecost.trace/v1","traces":[{a},{b}]}}"#),
    );
    for extra in [&[][..], &["--ledger", "shared"][..]] {
        let mut args = vec!["recall", "both.json", "toolu_1", "--format", "full"];
        args.extend(extra);
        let line = one_error_line(&run_in(dir.path(), &args), 2);
        assert!(line.contains("toolu_1"), "{line}");
        assert!(
            line.contains("tm_"),
            "names the records to recall instead: {line}"
        );
        assert!(!line.contains("alpha") && !line.contains("beta"), "{line}");
    }
}

/// A ledger of three records whose second index line is then damaged.
fn damaged_ledger(dir: &Path) -> (String, String) {
    write(dir, "three.json", &three_results());
    let run = run_in(dir, &["recall", "three.json", "c0", "--ledger", "led"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let index = dir.join("led/index.jsonl");
    let text = std::fs::read_to_string(&index).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    let bad = "{\"v\":1,\"mem_id\":garbage}";
    std::fs::write(&index, format!("{}\n{bad}\n{}\n", lines[0], lines[2])).unwrap();
    (bad.to_owned(), format!("{}\n{}\n", lines[0], lines[2]))
}

#[test]
fn a_damaged_index_line_exits_2_naming_the_file_the_line_and_the_repair_command() {
    let dir = tempfile::tempdir().unwrap();
    damaged_ledger(dir.path());
    let before = tree(dir.path());
    let run = run_in(
        dir.path(),
        &["recall", "three.json", "c0", "--ledger", "led"],
    );
    let line = one_error_line(&run, 2);
    assert!(line.contains("index.jsonl"), "{line}");
    assert!(line.contains("line 2"), "{line}");
    assert!(line.contains("tracecost ledger repair led"), "{line}");
    assert_eq!(
        tree(dir.path()),
        before,
        "a refused ledger is left as it was"
    );
}

/// The payload file `payload 0` was stored in, under `led/`.
fn payload_file_of_c0(dir: &Path) -> std::path::PathBuf {
    let (path, _) = tree(&dir.join("led"))
        .into_iter()
        .find(|(_, bytes)| bytes == b"payload 0")
        .expect("the payload of c0 is stored");
    dir.join("led").join(path)
}

#[test]
fn a_damaged_payload_exits_2_naming_the_file_and_the_repair_command() {
    // Bytes that no longer match the hash, and a payload cut in half:
    // the command line refuses both; it never prints the damage as an
    // answer on stdout.
    for damage in [&b"payload X"[..], &b"payl"[..]] {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "three.json", &three_results());
        let args = ["recall", "three.json", "c0", "--ledger", "led"];
        assert_eq!(run_in(dir.path(), &args).code, 0);
        let payload = payload_file_of_c0(dir.path());
        std::fs::write(&payload, damage).unwrap();
        let line = one_error_line(&run_in(dir.path(), &args), 2);
        let file = payload.file_name().unwrap().to_str().unwrap();
        assert!(line.contains(file), "names the payload file: {line}");
        assert!(line.contains("tracecost ledger repair led"), "{line}");
    }
}

#[test]
fn ledger_repair_keeps_intact_records_and_sets_damaged_lines_aside() {
    let dir = tempfile::tempdir().unwrap();
    let (bad, kept) = damaged_ledger(dir.path());
    let run = run_in(dir.path(), &["ledger", "repair", "led"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("kept 2 record(s)"), "{}", run.stderr);
    assert!(run.stderr.contains("set 1 line(s) aside"), "{}", run.stderr);
    let led = dir.path().join("led");
    assert_eq!(
        std::fs::read_to_string(led.join("index.jsonl")).unwrap(),
        kept
    );
    // The damaged bytes are kept, byte for byte, next to the index.
    assert_eq!(
        std::fs::read_to_string(led.join("index.damaged.jsonl")).unwrap(),
        format!("{bad}\n")
    );
    assert!(names(&led).contains(&"index.damaged.jsonl".to_owned()));
    // The ledger opens again, and the intact records recall.
    for (id, want) in [("c0", "payload 0"), ("c2", "payload 2")] {
        let run = run_in(
            dir.path(),
            &[
                "recall",
                "three.json",
                id,
                "--format",
                "full",
                "--ledger",
                "led",
            ],
        );
        let want = format!("{want}\n");
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, want.as_str()),
            "{}",
            run.stderr
        );
    }
    // Repairing a healthy ledger changes nothing.
    let before = tree(dir.path());
    let run = run_in(dir.path(), &["ledger", "repair", "led"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("set 0 line(s) aside"), "{}", run.stderr);
    assert_eq!(tree(dir.path()), before);
}

#[test]
fn ledger_repair_of_a_missing_directory_exits_2_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_in(dir.path(), &["ledger", "repair", "nowhere"]);
    let line = one_error_line(&run, 2);
    assert!(line.contains("nowhere"), "{line}");
    assert!(names(dir.path()).is_empty());
}

#[test]
fn out_of_range_numbers_are_refused_naming_the_flag_the_value_and_the_range() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.json",
        &trace("t", "toolu_1", "alpha payload"),
    );
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["sweep", "t.json", "--recall-cost", "1e308"],
            "--recall-cost",
            "1e308",
        ),
        (
            &["sweep", "t.json", "--recall-cost", "inf"],
            "--recall-cost",
            "inf",
        ),
        (
            &["sweep", "t.json", "--recall-cost", "NaN"],
            "--recall-cost",
            "NaN",
        ),
        (
            &["sweep", "t.json", "--recall-cost", "-1"],
            "--recall-cost",
            "-1",
        ),
        (
            &["report", "t.json", "--out", "r", "--recall-cost", "1e308"],
            "--recall-cost",
            "1e308",
        ),
        (
            &["check", "--baseline", "b.json", "--tolerance", "1e308"],
            "--tolerance",
            "1e308",
        ),
        (
            &["check", "--baseline", "b.json", "--tolerance", "nan"],
            "--tolerance",
            "nan",
        ),
        (
            &["check", "--baseline", "b.json", "--tolerance", "-inf"],
            "--tolerance",
            "-inf",
        ),
        (
            &["gen", "session", "--calls", "1000000000000"],
            "--calls",
            "1000000000000",
        ),
        (&["gen", "session", "--calls", "0"], "--calls", "0"),
        (
            &["gen", "fleet", "--sessions", "1000000000000"],
            "--sessions",
            "1000000000000",
        ),
        (&["gen", "fleet", "--sessions", "0"], "--sessions", "0"),
        (
            &["gen", "fleet", "--accounts", "1000000000000"],
            "--accounts",
            "1000000000000",
        ),
        (&["gen", "fleet", "--accounts", "0"], "--accounts", "0"),
        (
            &["gen", "request-log", "--calls", "1000000000000"],
            "--calls",
            "1000000000000",
        ),
    ];
    for (args, flag, value) in cases {
        let run = run_in(dir.path(), args);
        let line = one_error_line(&run, 2);
        assert!(line.contains(flag), "{args:?}: {line}");
        assert!(line.contains(value), "{args:?}: {line}");
        assert!(
            line.contains(" to "),
            "names the allowed range: {args:?}: {line}"
        );
        assert!(!line.contains("18,446,744"), "{line}");
    }
    assert_eq!(
        names(dir.path()),
        vec!["t.json".to_owned()],
        "nothing written"
    );
}

#[test]
fn a_huge_value_is_quoted_in_at_most_a_few_hundred_characters() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.json",
        &trace("t", "toolu_1", "alpha payload"),
    );
    let huge = format!("q{}", "x".repeat(100_000));
    let config = format!("ledger:t={huge}");
    let cases: Vec<Vec<&str>> = vec![
        vec!["replay", "t.json", "--config", &huge],
        vec!["replay", "t.json", "--config", &config],
        vec!["replay", "t.json", "--cache", &huge],
        vec!["replay", "t.json", "--compaction", &huge],
        vec!["replay", "t.json", "--model", &huge],
        vec!["replay", "t.json", "--tokenizer", &huge],
        vec!["replay", "t.json", "--ttl", &huge],
        vec!["sweep", "t.json", "--model", &huge],
        vec!["sweep", "t.json", "--baseline", &huge],
        vec!["sweep", "t.json", "--cache", &huge],
        vec!["sweep", "t.json", "--compaction", &huge],
        vec![
            "stability",
            "t.json",
            "--tokenizer",
            &huge,
            "--processes",
            "0",
        ],
        vec!["report", "t.json", "--out", "r", "--model", &huge],
        vec!["gen", &huge],
    ];
    for args in &cases {
        let run = run_in(dir.path(), args);
        let line = one_error_line(&run, 2);
        let head = &args[..args.len().min(3)];
        let start: String = line.chars().take(300).collect();
        assert!(line.len() < 700, "{head:?}: {} bytes: {start}", line.len());
        assert!(
            line.contains("qxxx"),
            "{head:?}: quotes the value's start: {line}"
        );
    }
}

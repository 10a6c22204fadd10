//! `tracecost recall` runs the recall executor exactly as the tool path does.

use assert_cmd::Command;

const TRACE: &str = r#"{"format":"tracecost.trace/v1","name":"t","model":"claude-sonnet-4-5",
"messages":[
{"role":"user","content":"go"},
{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"keepa","input":{"asin":"B01"}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"{\"products\":[{\"asin\":\"B01\",\"stats\":{\"current\":[1999,2499]}}]}"}]}
],
"calls":[{"messages":1},{"messages":3}]}"#;

fn trace_file() -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), TRACE).unwrap();
    f
}

fn recall(args: &[&str]) -> (i32, String, String) {
    let f = trace_file();
    let out = Command::cargo_bin("tracecost")
        .unwrap()
        .arg("recall")
        .arg(f.path())
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn full_by_tool_use_id_is_byte_exact() {
    let (code, out, _) = recall(&["toolu_1", "--format", "full"]);
    assert_eq!(code, 0);
    // The payload and one newline.
    assert_eq!(
        out,
        "{\"products\":[{\"asin\":\"B01\",\"stats\":{\"current\":[1999,2499]}}]}\n"
    );
}

#[test]
fn json_path_and_mem_id_work_and_unknown_ids_print_not_found_and_exit_1() {
    let (_, stub, _) = recall(&["toolu_1", "--format", "summary"]);
    let mem_id = stub
        .split("mem_id: ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    let (code, out, _) = recall(&[&mem_id, "--json-path", "products.0.stats.current"]);
    assert_eq!((code, out.as_str()), (0, "[1999,2499]\n"));
    let (code, out, _) = recall(&["tm_0000000000000000"]);
    assert_eq!(
        (code, out.as_str()),
        (1, "[tool_memory not found: tm_0000000000000000]\n")
    );
}

#[test]
fn durable_ledger_is_shared_across_runs() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = dir.path().join("ledger");
    let (code, _, _) = recall(&["toolu_1", "--ledger", ledger.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(ledger.join("index.jsonl").exists());
    let (code, out, _) = recall(&[
        "toolu_1",
        "--ledger",
        ledger.to_str().unwrap(),
        "--query",
        "B01",
    ]);
    assert_eq!(code, 0);
    assert!(out.starts_with("[1 match for \"B01\""), "{out}");
}

#[test]
fn bad_trace_is_exit_2_with_the_place() {
    let f = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(f.path(), "{\"format\":\"tracecost.trace/v1\",").unwrap();
    let out = Command::cargo_bin("tracecost")
        .unwrap()
        .arg("recall")
        .arg(f.path())
        .arg("x")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with(&format!("tracecost: {}:1:", f.path().display())),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn every_answer_ends_with_one_newline() {
    for args in [
        &["toolu_1"][..],
        &["toolu_1", "--format", "summary"],
        &["toolu_1", "--query", "B01"],
        &["toolu_1", "--offset", "3", "--max-chars", "5"],
        &["toolu_0"],
    ] {
        let (_, out, _) = recall(args);
        assert!(
            out.ends_with('\n') && !out.ends_with("\n\n"),
            "{args:?}: {out:?}"
        );
    }
}

#[test]
fn max_chars_bounds_what_is_returned() {
    // A range: that many chars of the payload, after a header with the total.
    let (code, out, _) = recall(&["toolu_1", "--max-chars", "10"]);
    assert_eq!(code, 0);
    assert_eq!(out, "[chars 0..10 of 61; next: offset=10]\n{\"products\n");
    // A query's answer (the matches with their context) is cut there too,
    // and says so and how long it was.
    let (_, whole, _) = recall(&["toolu_1", "--query", "B01"]);
    let whole = whole.strip_suffix('\n').unwrap();
    let total = whole.chars().count();
    assert!(total > 40, "{whole}");
    let (code, out, _) = recall(&["toolu_1", "--query", "B01", "--max-chars", "40"]);
    assert_eq!(code, 0);
    let first: String = whole.chars().take(40).collect();
    assert_eq!(
        out,
        format!("{first}\n[cut at 40 of {total} chars of the answer]\n")
    );
    // One that fits is not cut.
    let (_, out, _) = recall(&["toolu_1", "--query", "B01", "--max-chars", "100000"]);
    assert_eq!(out, format!("{whole}\n"));
    // The context of each match is an option of its own.
    let (_, narrow, _) = recall(&["toolu_1", "--query", "B01", "--context", "3"]);
    assert!(narrow.contains("with 3 chars of context"), "{narrow}");
    assert!(narrow.ends_with("\":\"B01\",\"\n"), "{narrow}");
    let (code, _, err) = recall(&["toolu_1", "--context", "3"]);
    assert_eq!(code, 2, "--context needs --query: {err}");
}

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
    assert_eq!(
        out,
        r#"{"products":[{"asin":"B01","stats":{"current":[1999,2499]}}]}"#
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
    assert_eq!((code, out.as_str()), (0, "[1999,2499]"));
    let (code, out, _) = recall(&["tm_0000000000000000"]);
    assert_eq!(
        (code, out.as_str()),
        (1, "[tool_memory not found: tm_0000000000000000]")
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

//! `tracecost recall` runs the recall executor exactly as the tool path does.

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
    let out = crate::util::tracecost()
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
    let out = crate::util::tracecost()
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

/// A session whose agent ran the ledger: its recalls are read from the
/// record, reported per tool and size in `results.json` and on the first
/// screen, and charged in place of the estimate; every config carries its
/// recall range and evidence, and the fleet what each bound recommends.
#[test]
fn recalls_where_the_ledger_ran_are_reported_and_used() {
    use crate::util::run_in;
    let dir = tempfile::tempdir().unwrap();
    let gen_run = run_in(
        dir.path(),
        &[
            "gen",
            "ledger-session",
            "--calls",
            "40",
            "--seed",
            "2",
            "-o",
            "t.json",
        ],
    );
    assert_eq!(gen_run.code, 0, "{}", gen_run.stderr);
    let trace = std::fs::read_to_string(dir.path().join("t.json")).unwrap();
    assert!(trace.contains(r#""status_quo":"ledger:t=2000,k=1+none""#));
    // Each recall names a different stubbed result.
    let recalls = trace.matches(r#""name":"recall_tool_result""#).count();
    assert!(recalls >= 2, "{recalls}");

    let report = run_in(dir.path(), &["report", "t.json", "--out", "r"]);
    assert_eq!(report.code, 0, "{}", report.stderr);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("r/results.json")).unwrap())
            .unwrap();
    let fleet = &json["fleet"];
    let observed = &fleet["recall_observed"];
    assert_eq!(observed["recalls"], recalls);
    let stubbed = observed["stubbed"].as_u64().unwrap() as usize;
    assert!(stubbed > recalls, "{observed}");
    let rate = observed["rate"].as_f64().unwrap();
    assert!((rate - recalls as f64 / stubbed as f64).abs() < 1e-12);
    let cells = observed["by_tool"].as_array().unwrap();
    let sum = |k: &str| {
        cells
            .iter()
            .map(|c| c[k].as_u64().unwrap() as usize)
            .sum::<usize>()
    };
    assert_eq!((sum("recalls"), sum("stubbed")), (recalls, stubbed));
    for c in cells {
        let (r, s) = (
            c["recalls"].as_f64().unwrap(),
            c["stubbed"].as_f64().unwrap(),
        );
        assert!((c["rate"].as_f64().unwrap() - r / s).abs() < 1e-12, "{c}");
        assert!(["0-8000", "8000-32000", "32000+"].contains(&c["size"].as_str().unwrap()));
    }
    assert_eq!(json["traces"][0]["recall_observed"]["recalls"], recalls);

    // The ledger that ran needs what its model recalled, at every bound.
    let status_quo = &fleet["status_quo"];
    assert_eq!(status_quo["config"], "ledger:t=2000,k=1+none");
    for bound in ["low", "mid", "high"] {
        let need = status_quo["recall"]["needs"][bound].as_f64().unwrap();
        assert!((need - recalls as f64).abs() < 1e-9, "{bound}: {need}");
    }
    let measured = status_quo["recall"]["observed_needs"].as_f64().unwrap();
    assert!((measured - recalls as f64).abs() < 1e-9);

    // The shape a script reads: every config's range and evidence.
    for c in fleet["configs"].as_array().unwrap() {
        let recall = &c["recall"];
        for part in ["needs", "cost_usd", "evidence_cost_usd"] {
            for bound in ["low", "mid", "high"] {
                assert!(recall[part][bound].is_f64(), "{part}.{bound} of {c}");
            }
        }
        for kind in ["refetch", "copied_lines", "identifiers"] {
            assert!(recall["evidence"][kind].is_u64(), "{kind} of {c}");
        }
    }
    let by = fleet["recommendation_by_recall"].as_object().unwrap();
    for bound in ["low", "mid", "high"] {
        assert!(by.contains_key(bound), "{by:?}");
    }

    // The first screen says it where it shows the range.
    let said = format!(
        "where the ledger ran, the model recalled {recalls} of the {stubbed} results it stubbed"
    );
    assert!(report.stderr.contains(&said), "{}", report.stderr);
}

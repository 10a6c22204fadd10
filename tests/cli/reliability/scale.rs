//! One long trace: what a report writes grows with the trace, not with its
//! square. (How fast it runs is measured in `benches/`, not here.)

use std::path::Path;

use crate::util::run_in;

/// A trace of `calls` calls, each a tool call whose result is large enough
/// for the ledger to compact once it is stale.
fn long_trace(dir: &Path, calls: usize) -> String {
    let mut messages = vec![r#"{"role":"user","content":"Start."}"#.to_owned()];
    let mut call_list = vec![r#"{"messages":1,"start_ms":1760000000000}"#.to_owned()];
    for i in 0..calls - 1 {
        messages.push(format!(
            r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_{i}","name":"fetch","input":{{"url":"https://e.com/{i}"}}}}]}}"#
        ));
        messages.push(format!(
            r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{i}","content":"page {i}: {}"}}]}}"#,
            "word ".repeat(500)
        ));
        call_list.push(format!(
            r#"{{"messages":{},"start_ms":{}}}"#,
            messages.len(),
            1_760_000_000_000u64 + 3_000 * (i as u64 + 1)
        ));
    }
    let json = format!(
        r#"{{"format":"tracecost.trace/v1","name":"long","model":"claude-sonnet-4-5","tools":[{{"name":"fetch","description":"Fetch a URL.","input_schema":{{"type":"object"}}}}],"messages":[{}],"calls":[{}]}}"#,
        messages.join(","),
        call_list.join(",")
    );
    let path = dir.join("long.json");
    std::fs::write(&path, json).unwrap();
    path.to_string_lossy().into_owned()
}

#[test]
fn per_call_rows_name_what_changed_not_every_compacted_result() {
    let d = tempfile::tempdir().unwrap();
    let calls = 300;
    let trace = long_trace(d.path(), calls);
    let run = run_in(
        d.path(),
        &[
            "report",
            &trace,
            "--compaction",
            "ledger",
            "--threshold",
            "2000",
            "--keep-last",
            "1",
            "--cache",
            "none",
            "--baseline",
            "ledger:t=2000,k=1+none",
            "--out",
            "out",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.path().join("out/results.json")).unwrap()).unwrap();
    let rows = results["traces"][0]["calls_baseline"].as_array().unwrap();
    assert_eq!(rows.len(), calls);
    // Folding each call's changes gives its count; every compacted result
    // is named once in the whole list, not once per later call.
    let mut compacted = std::collections::BTreeSet::new();
    let mut named = 0;
    for row in rows {
        for id in row["newly_compacted"].as_array().unwrap() {
            assert!(compacted.insert(id.as_str().unwrap().to_owned()));
            named += 1;
        }
        for id in row["restored"].as_array().into_iter().flatten() {
            assert!(compacted.remove(id.as_str().unwrap()));
            named += 1;
        }
        assert_eq!(row["compacted_count"], compacted.len(), "{row}");
    }
    assert!(compacted.len() > calls / 2, "{}", compacted.len());
    assert_eq!(named, compacted.len());
}

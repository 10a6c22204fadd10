//! Snapshots of what the commands print, on a small trace written for the
//! tests: any change to a table, a JSON field or an error message shows up
//! here.

use assert_cmd::Command;

const SMALL: &str = "tests/fixtures/traces/small.json";

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("tracecost")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("TRACECOST_NO_PROGRESS", "1")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn stdout(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn replay_formats() {
    let policy = [
        "--compaction",
        "ledger",
        "--threshold",
        "400",
        "--keep-last",
        "1",
        "--cache",
        "tail",
    ];
    for (name, format) in [
        ("replay_table", "table"),
        ("replay_md", "md"),
        ("replay_csv", "csv"),
        ("replay_json", "json"),
    ] {
        let mut args = vec!["replay", SMALL, "--format", format];
        args.extend(policy);
        insta::assert_snapshot!(name, stdout(&args));
    }
}

#[test]
fn replay_json_has_the_api_field_names() {
    let out = stdout(&[
        "replay",
        SMALL,
        "--config",
        "ledger:t=400,k=1+tail:ttl=5m",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let call = &v["calls"][2];
    for key in [
        "index",
        "messages",
        "chars",
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
        "cost_usd",
        "compacted",
        "recorded",
    ] {
        assert!(call.get(key).is_some(), "calls[2] lacks {key}: {call}");
    }
    assert!(call["cache_creation"]["ephemeral_5m_input_tokens"].is_u64());
    assert!(call["cache_creation"]["ephemeral_1h_input_tokens"].is_u64());
    assert_eq!(call["index"], 3);
    assert!(v["totals"]["cost_usd"].is_f64());
}

#[test]
fn sweep_and_stability_and_models() {
    insta::assert_snapshot!(
        "sweep_table",
        stdout(&[
            "sweep",
            SMALL,
            "--threshold",
            "200,400",
            "--keep-last",
            "1,2",
            "--cache",
            "none,tail",
            "--compaction",
            "off,ledger,clear-tool-uses:trigger=500,langchain-clear:trigger=100"
        ])
    );
    insta::assert_snapshot!(
        "stability",
        stdout(&[
            "stability",
            SMALL,
            "--config",
            "ledger:t=200,k=1+none",
            "--processes",
            "2"
        ])
    );
    insta::assert_snapshot!("models", stdout(&["models"]));
}

#[test]
fn bad_input_messages() {
    let cases: &[(&str, &[&str])] = &[
        (
            "err_missing_trace",
            &["replay", "tests/fixtures/traces/nope.json"],
        ),
        (
            "err_bad_config",
            &["replay", SMALL, "--config", "ledger:t=1+tail"],
        ),
        (
            "err_unknown_model",
            &["replay", SMALL, "--model", "claude-sonet-4-5"],
        ),
        ("err_directory", &["replay", "tests/fixtures/pricing"]),
        (
            "err_bad_tokenizer",
            &["replay", SMALL, "--tokenizer", "gpt2"],
        ),
    ];
    for (name, args) in cases {
        let (code, out, err) = run(args);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty());
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        insta::assert_snapshot!(*name, err);
    }
}

#[test]
fn pricing_files_extend_and_override_the_table() {
    let out = stdout(&[
        "models",
        "--pricing",
        "tests/fixtures/pricing/native.json",
        "--format",
        "csv",
    ]);
    assert!(
        out.lines()
            .any(|l| l.starts_with("claude-house-1,house house-latest,4.00,")),
        "{out}"
    );
    let out = stdout(&[
        "models",
        "--pricing",
        "tests/fixtures/pricing/litellm_small.json",
        "--format",
        "json",
    ]);
    assert!(
        serde_json::from_str::<serde_json::Value>(&out)
            .unwrap()
            .as_array()
            .unwrap()
            .len()
            > 10
    );
    // A model only the file knows prices a replay; the built-in table alone refuses it.
    let priced = stdout(&[
        "replay",
        SMALL,
        "--pricing",
        "tests/fixtures/pricing/native.json",
        "--model",
        "house",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&priced).unwrap();
    assert_eq!(v["model"], "claude-house-1");
    let (code, _, err) = run(&["replay", SMALL, "--model", "house"]);
    assert_eq!(code, 2);
    assert!(err.contains("unknown model `house`"), "{err}");
    // A batch discount halves the bill.
    let full: serde_json::Value =
        serde_json::from_str(&stdout(&["replay", SMALL, "--format", "json"])).unwrap();
    let half: serde_json::Value =
        serde_json::from_str(&stdout(&["replay", SMALL, "--format", "json", "--batch"])).unwrap();
    let (f, h) = (
        full["totals"]["cost_usd"].as_f64().unwrap(),
        half["totals"]["cost_usd"].as_f64().unwrap(),
    );
    assert!((h - f / 2.0).abs() < 1e-12, "{f} {h}");
}

#[test]
fn an_exact_tie_labels_the_simpler_policy_cheapest() {
    // A trace without a result large enough to compact or clear: every
    // compaction costs exactly what no compaction does, and so does a tail
    // marker on a prompt too short to cache.
    let out = stdout(&[
        "sweep",
        "tests/fixtures/import/lc_final.json",
        "--compaction",
        "off,clear-tool-uses",
        "--cache",
        "none,tail",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let s = &v["traces"][0];
    let rows = s["rows"].as_array().unwrap();
    let cost = |i: usize| rows[i]["result"]["totals"]["cost_usd"].as_f64().unwrap();
    assert!(
        (1..rows.len()).all(|i| cost(i) == cost(0)),
        "the fixture no longer ties: {out}"
    );
    let cheapest = s["cheapest"].as_u64().unwrap() as usize;
    assert_eq!(rows[cheapest]["result"]["config"], "off+none");
    let table = stdout(&[
        "sweep",
        "tests/fixtures/import/lc_final.json",
        "--compaction",
        "off,clear-tool-uses",
        "--cache",
        "none,tail",
    ]);
    assert!(
        table.contains("\ncheapest off+none: "),
        "the summary names the simpler policy: {table}"
    );
}

//! Snapshots of what the commands print, on a small trace written for the
//! tests: any change to a table, a JSON field or an error message shows up
//! here.

use crate::util::outcome;

const SMALL: &str = "tests/fixtures/traces/small.json";

fn run(args: &[&str]) -> (i32, String, String) {
    let out = crate::util::tracecost()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap();
    outcome(out)
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
            .any(|l| l.starts_with("claude-house-1,,house house-latest,4.00,")),
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
    // The report's fleet ranks the tie the same way: the simplest first.
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report");
    let o = crate::util::tracecost()
        .args([
            "report",
            "tests/fixtures/import/lc_final.json",
            "--compaction",
            "off,clear-tool-uses",
            "--cache",
            "none,tail",
            "--out",
        ])
        .arg(&report)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.join("results.json")).unwrap())
            .unwrap();
    assert_eq!(
        r["fleet"]["configs"][0]["config"], "off+none",
        "{}",
        r["fleet"]["configs"]
    );
}

/// Two inputs, three traces in two sessions: a trace of its own, and a
/// Claude Code session with a subagent.
const FLEET: [&str; 2] = [SMALL, "tests/fixtures/claude-code-ttl"];

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&stdout(args)).unwrap()
}

#[test]
fn a_sweep_of_several_traces_prints_the_fleet_total() {
    let grid = [
        "--compaction",
        "off,ledger",
        "--threshold",
        "400",
        "--keep-last",
        "1",
        "--cache",
        "none,tail",
    ];
    let sweep = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut a = vec!["sweep"];
        a.extend(FLEET);
        a.extend(grid);
        a.extend(extra);
        a
    };
    for (name, format) in [
        ("sweep_fleet_table", "table"),
        ("sweep_fleet_md", "md"),
        ("sweep_fleet_csv", "csv"),
    ] {
        insta::assert_snapshot!(name, stdout(&sweep(&["--format", format])));
    }
    let (_, _, err) = run(&sweep(&[]));
    assert!(err.contains("--per-trace"), "says where the rest is: {err}");

    let total = json(&sweep(&["--format", "json"]));
    assert_eq!(total["format"], "tracecost.sweep.fleet/v1");
    assert!(total.get("traces").is_none(), "per trace only on request");
    let f = &total["fleet"];
    assert_eq!(
        (f["sessions"].as_u64(), f["traces"].as_u64()),
        (Some(2), Some(3))
    );
    // Each config's cost is the sum of its rows over the traces, and the
    // saving is against the traces' status quos summed.
    let per = json(&sweep(&["--format", "json", "--per-trace"]));
    assert_eq!(per["fleet"], total["fleet"]);
    let traces = per["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 3);
    let cost = |r: &serde_json::Value| r["result"]["totals"]["cost_usd"].as_f64().unwrap();
    let status_quo: f64 = traces
        .iter()
        .map(|t| cost(&t["rows"][t["baseline"].as_u64().unwrap() as usize]))
        .sum();
    assert!((f["status_quo"]["cost_usd"].as_f64().unwrap() - status_quo).abs() < 1e-9);
    for c in f["configs"].as_array().unwrap() {
        let sum: f64 = traces
            .iter()
            .map(|t| {
                let rows = t["rows"].as_array().unwrap();
                cost(
                    rows.iter()
                        .find(|r| r["result"]["config"] == c["config"])
                        .unwrap(),
                )
            })
            .sum();
        let got = c["cost_usd"].as_f64().unwrap();
        assert!((got - sum).abs() < 1e-9, "{}: {got} vs {sum}", c["config"]);
        let saving = c["savings_usd"].as_f64().unwrap();
        assert!(
            (saving - (status_quo - sum)).abs() < 1e-9,
            "{}",
            c["config"]
        );
    }
    // CSV: fleet rows, and each trace's on request.
    let csv = stdout(&sweep(&["--format", "csv", "--per-trace"]));
    let scopes: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    let rows: usize = traces
        .iter()
        .map(|t| t["rows"].as_array().unwrap().len())
        .sum();
    assert_eq!(
        scopes.iter().filter(|s| **s == "trace").count(),
        rows,
        "{csv}"
    );
    assert_eq!(scopes.iter().filter(|s| **s == "fleet").count(), 4, "{csv}");
    // Table: each trace's sweep, then the total.
    let table = stdout(&sweep(&["--per-trace"]));
    assert!(table.starts_with("small — 4 configs\n"), "{table}");
    assert!(
        table.contains("\nfleet — 2 session(s), 3 trace(s) — 4 configs\n"),
        "{table}"
    );
}

#[test]
fn a_replay_of_several_traces_prints_the_fleet_total() {
    let replay = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut a = vec!["replay"];
        a.extend(FLEET);
        a.extend(extra);
        a
    };
    for (name, format) in [
        ("replay_fleet_table", "table"),
        ("replay_fleet_md", "md"),
        ("replay_fleet_csv", "csv"),
    ] {
        insta::assert_snapshot!(name, stdout(&replay(&["--format", format])));
    }
    let total = json(&replay(&["--format", "json"]));
    assert_eq!(total["format"], "tracecost.replay.fleet/v1");
    assert!(total.get("traces").is_none());
    let f = &total["fleet"];
    assert_eq!(
        (f["sessions"].as_u64(), f["traces"].as_u64()),
        (Some(2), Some(3))
    );
    // Each trace under its own status quo: one group per config, and the
    // total of every trace.
    let configs: Vec<&str> = f["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["config"].as_str().unwrap())
        .collect();
    assert_eq!(configs, ["off+none", "recorded+claude-code:ttl=recorded"]);
    assert_eq!(f["total"]["config"], "mixed");
    let per = json(&replay(&["--format", "json", "--per-trace"]));
    let traces = per["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 3);
    for key in [
        "cost_usd",
        "input_tokens",
        "cache_read_input_tokens",
        "calls",
    ] {
        let sum: f64 = traces
            .iter()
            .map(|t| t["totals"][key].as_f64().unwrap())
            .sum();
        let got = f["total"]["totals"][key].as_f64().unwrap();
        assert!((got - sum).abs() < 1e-9, "{key}: {got} vs {sum}");
    }
    // One trace keeps its own output.
    let one = json(&["replay", SMALL, "--format", "json"]);
    assert_eq!(one["format"], "tracecost.replay/v1");
    assert!(one.get("fleet").is_none());
}

/// The Agents SDK's trimmer on a trace of two user turns: with its default
/// window (the last two user messages) nothing is old; with one, the last
/// call sends both earlier results trimmed, the same bytes each run.
#[test]
fn agents_trim_trims_only_before_its_window_of_user_turns() {
    let compacted = |v: &serde_json::Value| -> Vec<Vec<String>> {
        v["calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| serde_json::from_value(c["compacted"].clone()).unwrap())
            .collect()
    };
    let default = json(&[
        "replay",
        SMALL,
        "--compaction",
        "agents-trim",
        "--format",
        "json",
    ]);
    assert_eq!(
        default["config"],
        "agents-trim:turns=2,max=500,preview=200+none"
    );
    assert!(compacted(&default).iter().all(Vec::is_empty));
    let args = [
        "replay",
        SMALL,
        "--config",
        "agents-trim:turns=1,max=300,preview=50+tail",
        "--format",
        "json",
    ];
    let once = stdout(&args);
    let v: serde_json::Value = serde_json::from_str(&once).unwrap();
    let got = compacted(&v);
    assert!(got[..3].iter().all(Vec::is_empty), "{got:?}");
    assert_eq!(got[3], ["toolu_01", "toolu_02"]);
    assert_eq!(stdout(&args), once);
}

/// Claude Code runs its summarising compaction beside its
/// microcompaction: a result the record says was cleared (a call's
/// `cleared`) stays cleared under `claude-code-autocompact`, within its
/// part, as under `recorded`; under the trigger the policy bills what the
/// status quo bills.
#[test]
fn claude_code_autocompact_keeps_the_recorded_clearing() {
    let mut trace: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(crate::util::fixture("traces/autocompact.json")).unwrap(),
    )
    .unwrap();
    let uncleared = trace.clone();
    // toolu_01 cleared from the third call on, toolu_05 from the sixth.
    trace["calls"][2]["cleared"] = serde_json::json!(["toolu_01"]);
    trace["calls"][5]["cleared"] = serde_json::json!(["toolu_05"]);
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, v: &serde_json::Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, v.to_string()).unwrap();
        path.display().to_string()
    };
    let (cleared, plain) = (
        write("cleared.json", &trace),
        write("plain.json", &uncleared),
    );
    let replay =
        |path: &str, config: &str| json(&["replay", path, "--config", config, "--format", "json"]);
    let under = replay(&cleared, "claude-code-autocompact+claude-code:ttl=5m");
    let recorded = replay(&cleared, "recorded+claude-code:ttl=5m");
    let off = replay(&cleared, "off+claude-code:ttl=5m");
    assert_eq!(under["totals"]["cost_usd"], recorded["totals"]["cost_usd"]);
    assert_ne!(under["totals"]["cost_usd"], off["totals"]["cost_usd"]);
    // Past the trigger: the second part's third call (the trace's sixth)
    // sends toolu_05 as the placeholder, so less than without the clear.
    let config = "claude-code-autocompact:trigger=5000,summary=300+claude-code:ttl=5m";
    let sent = |v: &serde_json::Value, i: usize| {
        let c = &v["calls"][i];
        [
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ]
        .iter()
        .map(|k| c[k].as_u64().unwrap())
        .sum::<u64>()
    };
    let (with, without) = (replay(&cleared, config), replay(&plain, config));
    assert_eq!(with["calls"][6]["messages"], 5);
    assert!(sent(&with, 6) + 500 < sent(&without, 6), "{with}");
}

/// Claude Code's autocompact on a trace written for the tests (a long
/// system prompt, each call adding a build log): past the trigger a call of
/// its own sends the whole context and an instruction and writes the
/// summary; the next call sends the summary alone, reading the system
/// prompt and tools from the cache and writing the summary; the summary
/// calls are counted and priced in the totals and the text; the same bytes
/// each run.
#[test]
fn claude_code_autocompact_adds_its_summary_calls_and_restarts_the_history() {
    const TRACE: &str = "tests/fixtures/traces/autocompact.json";
    let config = "claude-code-autocompact:trigger=5000,summary=300+claude-code:ttl=5m";
    let args = ["replay", TRACE, "--config", config, "--format", "json"];
    let once = stdout(&args);
    assert_eq!(stdout(&args), once);
    let v: serde_json::Value = serde_json::from_str(&once).unwrap();
    let calls = v["calls"].as_array().unwrap();
    let n = |c: &serde_json::Value, k: &str| c[k].as_u64().unwrap();
    // Seven recorded calls and two summary calls.
    assert_eq!(calls.len(), 9);
    assert_eq!(v["totals"]["summary_calls"], 2);
    let sent: Vec<u64> = calls.iter().map(|c| n(c, "messages")).collect();
    // The fourth call passes the trigger: the summary call sends its seven
    // messages and the instruction; the history restarts at the summary.
    assert_eq!(sent, [1, 3, 5, 8, 1, 3, 5, 8, 1]);
    for s in [&calls[3], &calls[7]] {
        assert_eq!(n(s, "output_tokens"), 300);
    }
    let summary_cost =
        calls[3]["cost_usd"].as_f64().unwrap() + calls[7]["cost_usd"].as_f64().unwrap();
    let counted = v["totals"]["summary_cost_usd"].as_f64().unwrap();
    assert!(
        (counted - summary_cost).abs() < 1e-12,
        "{counted} vs {summary_cost}"
    );
    // After the summary: the system prompt and tools are read from the
    // cache (what the first call wrote, less its one message); the summary
    // (300 tokens and its framing) is written.
    let after = &calls[4];
    let read = n(after, "cache_read_input_tokens");
    assert!(
        read > 0 && read < n(&calls[0], "cache_creation_input_tokens"),
        "{after}"
    );
    let written = n(after, "cache_creation_input_tokens");
    assert!((300..400).contains(&written), "{after}");
    let text = stdout(&["replay", TRACE, "--config", config]);
    assert!(
        text.contains("summary calls: 2 (each a call of its own, in the table), costing $"),
        "{text}"
    );
    // Under the trigger nothing is summarised: no summary call, no line.
    let under = json(&[
        "replay",
        TRACE,
        "--config",
        "claude-code-autocompact+claude-code:ttl=5m",
        "--format",
        "json",
    ]);
    assert_eq!(under["calls"].as_array().unwrap().len(), 7);
    assert!(under["totals"].get("summary_calls").is_none());
    let off = json(&[
        "replay",
        TRACE,
        "--config",
        "off+claude-code:ttl=5m",
        "--format",
        "json",
    ]);
    assert_eq!(under["totals"]["cost_usd"], off["totals"]["cost_usd"]);
    // A sweep replays it as `replay` does: the same cost and summary
    // calls (`sweep_summarising` checks the report and stability).
    let swept = json(&["sweep", TRACE, "--config", config, "--format", "json"]);
    let row = swept["traces"][0]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["result"]["config"] == config)
        .unwrap_or_else(|| panic!("{swept}"));
    let totals = &row["result"]["totals"];
    assert_eq!(totals["cost_usd"], v["totals"]["cost_usd"], "{row}");
    assert_eq!(totals["summary_calls"], 2, "{row}");
}

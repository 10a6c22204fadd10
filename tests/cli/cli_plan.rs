//! The command line never drops an option in silence, says where a log
//! was given for a trace, exits with the code of each failure class, and
//! its help lists every policy and never wraps an example.

use crate::util::tracecost;

fn stderr_of(args: &[&str]) -> (i32, String, String) {
    let o = tracecost().args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const MG: &str = "traces/massage-gun.json";

#[test]
fn a_ledger_option_alone_implies_the_ledger_visibly() {
    let (code, out, err) = stderr_of(&["replay", MG, "--threshold", "2000"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ledger:t=2000,k=2+none"), "{out}");
    assert_eq!(
        err.trim(),
        "tracecost: note: --threshold implies --compaction ledger; cache policy none kept from the trace's status quo off+none; replaying massage-gun as ledger:t=2000,k=2+none"
    );
    // The same figures as the policy named in full.
    let (_, full, _) = stderr_of(&["replay", MG, "--config", "ledger:t=2000,k=2+none"]);
    assert_eq!(out, full);
}

#[test]
fn options_of_another_or_an_unnamed_policy_are_errors() {
    for (args, msg) in [
        (
            vec!["--ttl", "1h"],
            "tracecost: --ttl applies to --cache system, native, tail, claude-code or bedrock-cachepoint; add one of them",
        ),
        (
            vec!["--trigger", "5000"],
            "tracecost: --trigger applies to --compaction clear-tool-uses or langchain-clear; add one of them",
        ),
        (
            vec!["--compaction", "clear-tool-uses", "--keep-last", "1"],
            "tracecost: --keep-last applies only to --compaction ledger, not to --compaction clear-tool-uses",
        ),
        (
            vec!["--cache", "tail", "--manifest", "volatile"],
            "tracecost: --manifest applies only to --cache native, not to --cache tail",
        ),
    ] {
        let mut a = vec!["replay", MG];
        a.extend(args);
        let (code, out, err) = stderr_of(&a);
        assert_eq!(code, 2, "{a:?}");
        assert_eq!(out, "");
        assert_eq!(err.trim(), msg);
    }
    let (code, _, err) = stderr_of(&["sweep", MG, "--compaction", "off", "--threshold", "100"]);
    assert_eq!(code, 2);
    assert!(err.contains("--threshold applies to the ledger"), "{err}");
}

#[test]
fn recorded_cache_without_recorded_markers_names_the_alternatives() {
    let (code, out, err) = stderr_of(&["replay", MG, "--cache", "recorded"]);
    assert_eq!(code, 2);
    assert_eq!(out, "");
    assert!(
        err.contains(
            "this trace recorded none; choose none, system, native, tail, claude-code instead"
        ),
        "{err}"
    );
}

#[test]
fn recall_of_an_unknown_id_prints_the_answer_and_exits_1() {
    let (code, out, _) = stderr_of(&["recall", MG, "nope"]);
    assert_eq!(code, 1);
    assert_eq!(out, "[tool_memory not found: nope]\n");
}

#[test]
fn a_log_given_for_a_trace_gets_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    std::fs::write(
        &log,
        "{\"type\":\"note\",\"id\":\"a\"}\n{\"type\":\"note\",\"id\":\"b\"}\n",
    )
    .unwrap();
    let (code, _, err) = stderr_of(&["replay", log.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        err.contains(":2:1: trailing characters; this looks like a JSON Lines log"),
        "{err}"
    );
    // Not a log of a kind tracecost reads (those are read directly):
    // importing it cannot help, so nothing advises it.
    assert!(!err.contains("tracecost import"), "{err}");
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn unwritable_output_is_an_output_failure() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("missing-dir").join("t.json");
    let (code, _, err) = stderr_of(&["gen", "massage-gun", "-o", out.to_str().unwrap()]);
    assert_eq!(code, 73, "{err}");
    assert!(err.contains("cannot write"), "{err}");
}

#[test]
fn help_lists_every_policy_and_examples_never_wrap() {
    let (_, top, _) = stderr_of(&["--help"]);
    for sub in [
        "replay",
        "sweep",
        "stability",
        "report",
        "check",
        "usage",
        "gen",
        "models",
        "import",
        "recall",
    ] {
        assert!(top.contains(sub));
        let (code, help, _) = stderr_of(&[sub, "--help"]);
        assert_eq!(code, 0);
        if matches!(sub, "replay" | "stability" | "sweep" | "report") {
            for name in [
                "none",
                "system",
                "native",
                "tail",
                "recorded",
                "claude-code",
                "off",
                "ledger",
                "clear-tool-uses",
                "langchain-clear",
            ] {
                assert!(help.contains(name), "{sub} --help lacks {name}");
            }
        }
        // Every example is a command line, or the continuation of one that
        // ended in a backslash; no line is wider than 80 columns.
        let mut in_examples = false;
        let mut continued = false;
        for line in help.lines() {
            if line == "Examples:" {
                in_examples = true;
                continue;
            }
            if !in_examples || line.is_empty() {
                continue;
            }
            assert!(line.chars().count() <= 80, "{sub}: {line}");
            if continued {
                assert!(line.starts_with("      "), "{sub}: {line}");
            } else {
                assert!(
                    line.starts_with("  tracecost"),
                    "{sub}: wrapped example: {line}"
                );
            }
            continued = line.ends_with('\\');
        }
    }
}

#[test]
fn check_and_replay_agree_on_the_same_trace_config_and_model() {
    let dir = tempfile::tempdir().unwrap();
    // Beside the baseline: entries are relative to the baseline file.
    std::fs::copy(MG, dir.path().join("mg.json")).unwrap();
    let trace = std::path::Path::new("mg.json");
    let config = "ledger:t=8000,k=2+tail:ttl=5m@claude-sonnet-4-5";
    let baseline = dir.path().join("b.json");
    std::fs::write(
        &baseline,
        format!(
            r#"{{"format":"tracecost.baseline/v1","entries":[{{"trace":{:?},"config":"{config}"}}]}}"#,
            trace.display().to_string()
        ),
    )
    .unwrap();
    let (code, _, err) = stderr_of(&[
        "check",
        "--baseline",
        baseline.to_str().unwrap(),
        "--update",
    ]);
    assert_eq!(code, 0, "{err}");
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&baseline).unwrap()).unwrap();
    let expected = &written["entries"][0]["expected"];
    let (code, out, err) = stderr_of(&[
        "replay",
        MG,
        "--config",
        "ledger:t=8000,k=2+tail:ttl=5m",
        "--model",
        "claude-sonnet-4-5",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0, "{err}");
    let replayed: serde_json::Value = serde_json::from_str(&out).unwrap();
    let totals = &replayed["totals"];
    for k in [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
        "output_tokens",
    ] {
        assert_eq!(expected[k], totals[k], "{k}: {totals}");
    }
    let (a, b) = (
        expected["cost_usd"].as_f64().unwrap(),
        totals["cost_usd"].as_f64().unwrap(),
    );
    assert!((a - b).abs() < 1e-6, "{a} vs {b}");
}

/// With no policy option a replay runs what actually ran; any option
/// starts from the plain defaults instead.
#[test]
fn a_replay_without_options_runs_the_status_quo() {
    let configs = |args: &[&str]| -> Vec<String> {
        let mut args = args.to_vec();
        args.push("--per-trace");
        let (code, out, err) = stderr_of(&args);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["traces"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["config"].as_str().unwrap().to_owned())
            .collect()
    };
    let session = "traces/session-200-s1.json";
    let sq = configs(&["replay", session, "--format", "json"]);
    assert!(!sq.is_empty());
    assert!(sq.iter().all(|c| c == "off+claude-code:ttl=5m"), "{sq:?}");
    // An option changes its part of the status quo, not the rest.
    let none = configs(&["replay", session, "--cache", "none", "--format", "json"]);
    assert!(none.iter().all(|c| c == "off+none"), "{none:?}");
    let ledger = configs(&["replay", session, "--threshold", "4000", "--format", "json"]);
    assert!(
        ledger
            .iter()
            .all(|c| c == "ledger:t=4000,k=2+claude-code:ttl=5m"),
        "{ledger:?}"
    );
}

/// A LangChain log whose messages name no model: its trace's model is
/// `unknown`.
const NO_MODEL: &str = "tests/fixtures/import/lc_no_model.json";

#[test]
fn model_prices_a_trace_whose_recorded_model_is_unknown() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("report");
    let out = out.to_str().unwrap();
    let model = ["--model", "claude-sonnet-4-5"];
    let commands: [Vec<&str>; 4] = [
        vec!["replay", NO_MODEL, "--format", "json"],
        vec!["replay", NO_MODEL, "--threshold", "10", "--format", "json"],
        vec![
            "sweep",
            NO_MODEL,
            "--compaction",
            "off,ledger",
            "--format",
            "json",
        ],
        vec!["report", NO_MODEL, "--out", out],
    ];
    for args in &commands {
        // Without --model: refused, in one line naming the model.
        let (code, stdout, err) = stderr_of(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(stdout.is_empty(), "{args:?}: {stdout}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("tracecost: unknown model `unknown`"),
            "{args:?}: {err}"
        );
        // And says what to do about it.
        assert!(
            err.trim_end().ends_with(
                "; price the trace as a known model with --model NAME, or add the model with --pricing FILE"
            ),
            "{args:?}: {err}"
        );
        // With it: priced as that model.
        let mut with = args.clone();
        with.extend(model);
        let (code, stdout, err) = stderr_of(&with);
        assert_eq!(code, 0, "{with:?}: {err}");
        if args[0] == "report" {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        if args[0] == "replay" {
            assert_eq!(v["model"], "claude-sonnet-4-5-20250929", "{v}");
            assert!(v["totals"]["cost_usd"].as_f64().unwrap() > 0.0, "{v}");
        } else {
            let s = &v["traces"][0];
            let base = &s["rows"][s["baseline"].as_u64().unwrap() as usize];
            // The status quo too is priced as the model named.
            assert_eq!(base["result"]["config"], "off+none@claude-sonnet-4-5");
        }
    }
    let results = std::fs::read_to_string(out_dir.path().join("report/results.json")).unwrap();
    assert!(results.contains("claude-sonnet-4-5"), "{results}");
    // Several models: the status quo is priced as the first.
    let (code, stdout, err) = stderr_of(&[
        "sweep",
        NO_MODEL,
        "--compaction",
        "off",
        "--cache",
        "none",
        "--model",
        "claude-haiku-4-5,claude-sonnet-4-5",
        "--format",
        "csv",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains(",off+none@claude-haiku-4-5,") && stdout.contains("baseline"),
        "{stdout}"
    );
}

/// Claude Code transcripts whose status quo is
/// `recorded+claude-code:ttl=recorded`.
const CLAUDE_CODE: &str = "tests/fixtures/claude-code-ttl";

#[test]
fn an_option_changes_only_its_part_of_the_status_quo() {
    let quo = "recorded+claude-code:ttl=recorded";
    for (args, config, note) in [
        (
            vec!["--threshold", "4000"],
            "ledger:t=4000,k=2+claude-code:ttl=recorded",
            "--threshold implies --compaction ledger; cache policy claude-code:ttl=recorded kept from the trace's status quo",
        ),
        (
            vec!["--compaction", "off"],
            "off+claude-code:ttl=recorded",
            "cache policy claude-code:ttl=recorded kept from the trace's status quo",
        ),
        (
            vec!["--cache", "tail"],
            "recorded+tail:ttl=recorded",
            "compaction recorded and TTL recorded kept from the trace's status quo",
        ),
        (
            vec!["--ttl", "1h"],
            "recorded+claude-code:ttl=1h",
            "--ttl implies the status quo's --cache claude-code; compaction recorded kept from the trace's status quo",
        ),
    ] {
        let mut a = vec!["replay", CLAUDE_CODE, "--format", "json", "--per-trace"];
        a.extend(&args);
        let (code, out, err) = stderr_of(&a);
        assert_eq!(code, 0, "{args:?}: {err}");
        // One note for the traces that resolve alike, naming the rest.
        assert_eq!(
            err,
            format!("tracecost: note: {note} {quo}; replaying 2 traces as {config}\n"),
            "{args:?}"
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        for t in v["traces"].as_array().unwrap() {
            assert_eq!(t["config"], config, "{args:?}");
        }
    }
    // The same figures as the config named in full.
    let (_, by_flag, _) = stderr_of(&["replay", CLAUDE_CODE, "--threshold", "4000"]);
    let (_, by_config, _) = stderr_of(&[
        "replay",
        CLAUDE_CODE,
        "--config",
        "ledger:t=4000,k=2+claude-code:ttl=recorded",
    ]);
    assert_eq!(by_flag, by_config);
}

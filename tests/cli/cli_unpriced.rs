//! A model the price table does not know never stops a run over many
//! traces: its calls are named once and left out of the priced totals;
//! `--strict-prices` makes them an error.

use std::path::Path;

use serde_json::Value;

use crate::util::{Run, run_in};

const PROJECT: &str = "projects/-home-dev-mix";
const GOOD: &str = "11111111-1111-4111-8111-111111111111";
const LOCAL: &str = "22222222-2222-4222-8222-222222222222";

/// One transcript line: a user turn or an assistant response of `model`
/// with its recorded usage.
fn line(
    session: &str,
    n: usize,
    model: Option<&str>,
    text: &str,
    usage: (u64, u64, u64, u64),
) -> String {
    let uuid = format!("00000000-0000-4000-8000-{n:012}");
    let parent = match n {
        1 => Value::Null,
        _ => Value::String(format!("00000000-0000-4000-8000-{:012}", n - 1)),
    };
    let stamp = format!("2026-08-03T10:00:{:02}.000Z", n * 2);
    let mut record = serde_json::json!({
        "parentUuid": parent, "isSidechain": false, "userType": "external",
        "cwd": "/home/dev/mix", "sessionId": session, "version": "2.1.230",
        "gitBranch": "main", "uuid": uuid, "timestamp": stamp,
    });
    match model {
        None => {
            record["type"] = "user".into();
            record["message"] = serde_json::json!({"role": "user", "content": text});
        }
        Some(model) => {
            let (input, write, read, output) = usage;
            record["type"] = "assistant".into();
            record["requestId"] = format!("req_{session}_{n}").into();
            record["message"] = serde_json::json!({
                "model": model, "id": format!("msg_{session}_{n}"), "type": "message",
                "role": "assistant", "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn", "stop_sequence": null,
                "usage": {
                    "input_tokens": input, "cache_creation_input_tokens": write,
                    "cache_read_input_tokens": read, "output_tokens": output,
                    "cache_creation": {"ephemeral_5m_input_tokens": write, "ephemeral_1h_input_tokens": 0},
                    "service_tier": "standard",
                },
            });
        }
    }
    record.to_string()
}

/// A transcript of two exchanges on `model`.
fn transcript(session: &str, model: &str) -> String {
    let long = "a line of the file that was read ".repeat(120);
    [
        line(
            session,
            1,
            None,
            &format!("Read the build script. {long}"),
            (0, 0, 0, 0),
        ),
        line(
            session,
            2,
            Some(model),
            "It builds the crate.",
            (4, 1900, 0, 30),
        ),
        line(session, 3, None, "And the tests?", (0, 0, 0, 0)),
        line(
            session,
            4,
            Some(model),
            "They run with cargo test.",
            (5, 20, 1900, 25),
        ),
    ]
    .join("\n")
        + "\n"
}

/// A Claude Code folder in a fresh temporary folder: the good transcript,
/// and with `local` one of a local model beside it.
fn folder(local: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join(PROJECT);
    std::fs::create_dir_all(&project).unwrap();
    let put = |session: &str, model: &str| {
        std::fs::write(
            project.join(format!("{session}.jsonl")),
            transcript(session, model),
        )
        .unwrap();
    };
    put(GOOD, "claude-sonnet-4-5-20250929");
    if local {
        put(LOCAL, "qwen3-coder:30b");
    }
    dir
}

fn ok(dir: &Path, args: &[&str]) -> Run {
    let run = run_in(dir, args);
    assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    run
}

/// The line naming the local model, said once.
fn named_once(stderr: &str) {
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("qwen3-coder:30b"))
        .collect();
    assert_eq!(
        lines,
        [
            "tracecost: 2 calls of `qwen3-coder:30b` (1 file) have no price: left out of the totals; add it with --pricing FILE"
        ],
        "{stderr}"
    );
}

#[test]
fn fidelity_reports_every_priced_session_and_names_the_unpriced_model_once() {
    let (mixed, alone) = (folder(true), folder(false));
    let args = ["fidelity", "projects", "--format", "json"];
    let with = ok(mixed.path(), &args);
    named_once(&with.stderr);
    let without = ok(alone.path(), &args);
    assert!(!without.stderr.contains("no price"), "{}", without.stderr);
    // The figures are the good trace's alone.
    assert_eq!(with.stdout, without.stdout);
}

#[test]
fn report_leaves_the_unpriced_calls_out_of_its_totals_and_says_so_everywhere() {
    let (mixed, alone) = (folder(true), folder(false));
    let with = ok(mixed.path(), &["report", "projects", "--out", "out"]);
    named_once(&with.stderr);
    ok(alone.path(), &["report", "projects", "--out", "out"]);
    let read =
        |dir: &Path, name: &str| std::fs::read_to_string(dir.join("out").join(name)).unwrap();
    let results =
        |dir: &Path| -> Value { serde_json::from_str(&read(dir, "results.json")).unwrap() };
    let (r_with, r_alone) = (results(mixed.path()), results(alone.path()));
    assert_eq!(r_with["fleet"], r_alone["fleet"]);
    assert_eq!(r_with["traces"], r_alone["traces"]);
    let file = format!("{PROJECT}/{LOCAL}.jsonl");
    assert_eq!(
        r_with["unpriced"],
        serde_json::json!([{"model": "qwen3-coder:30b", "calls": 2, "files": [file]}])
    );
    assert!(r_alone.get("unpriced").is_none());
    for name in ["index.html", "summary.md"] {
        let text = read(mixed.path(), name);
        assert_eq!(text.matches("Not priced:").count(), 1, "{name}: {text}");
        assert!(text.contains("qwen3-coder:30b"), "{name}");
        assert!(!read(alone.path(), name).contains("Not priced"), "{name}");
    }
}

#[test]
fn strict_prices_makes_an_unpriced_call_an_error() {
    let mixed = folder(true);
    for args in [
        &["fidelity", "projects", "--strict-prices"][..],
        &["report", "projects", "--out", "out", "--strict-prices"],
    ] {
        let run = run_in(mixed.path(), args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}");
        assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {}", run.stderr);
        insta::assert_snapshot!("strict_prices_error", run.stderr.trim_end());
    }
    assert!(!mixed.path().join("out").exists());
    // Every call priced: the flag changes nothing.
    ok(
        folder(false).path(),
        &["fidelity", "projects", "--strict-prices"],
    );
}

#[test]
fn usage_counts_the_tokens_of_an_unpriced_model_and_gives_no_cost() {
    let mixed = folder(true);
    let run = ok(mixed.path(), &["usage", "projects", "--json"]);
    named_once(&run.stderr);
    let v: Value = serde_json::from_str(&run.stdout).unwrap();
    let sessions = v["sessions"].as_array().unwrap();
    let local = sessions.iter().find(|s| s["sessionId"] == LOCAL).unwrap();
    assert_eq!(local["totalCost"], Value::Null);
    assert_eq!(local["modelBreakdowns"][0]["modelName"], "qwen3-coder:30b");
    assert_eq!(local["modelBreakdowns"][0]["cost"], Value::Null);
    assert_eq!(local["totalTokens"], 4 + 1900 + 30 + 5 + 20 + 1900 + 25);
    let good = sessions.iter().find(|s| s["sessionId"] == GOOD).unwrap();
    assert_eq!(v["totals"]["totalCost"], good["totalCost"]);
    assert_eq!(
        v["totals"]["totalTokens"].as_u64().unwrap(),
        2 * local["totalTokens"].as_u64().unwrap()
    );
    // The table shows the cost as unknown, not $0.
    let table = ok(mixed.path(), &["usage", "projects"]);
    let row = table.stdout.lines().find(|l| l.starts_with(LOCAL)).unwrap();
    assert!(row.contains(" - "), "{row}");
    assert!(!row.contains("$0"), "{row}");
    let strict = run_in(mixed.path(), &["usage", "projects", "--strict-prices"]);
    assert_eq!(strict.code, 2, "{}", strict.stderr);
}

#[test]
fn fidelity_without_a_model_flag_does_not_suggest_one() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join(PROJECT);
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join(format!("{LOCAL}.jsonl")),
        transcript(LOCAL, "qwen3-coder:30b"),
    )
    .unwrap();
    let run = run_in(dir.path(), &["fidelity", "projects"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(!run.stderr.contains("--model"), "{}", run.stderr);
    assert!(
        run.stderr
            .trim_end()
            .ends_with("; add the model with --pricing FILE"),
        "{}",
        run.stderr
    );
}

/// One transcript with a call of each: the priced calls are replayed as
/// the transcript without the other would be, and the other is named.
#[test]
fn a_trace_with_priced_and_unpriced_calls_is_priced_on_the_priced_ones() {
    let alone = folder(false);
    let mixed = folder(false);
    let file = mixed.path().join(PROJECT).join(format!("{GOOD}.jsonl"));
    let mut text = std::fs::read_to_string(&file).unwrap();
    text.push_str(&line(GOOD, 5, None, "Summarise it.", (0, 0, 0, 0)));
    text.push('\n');
    text.push_str(&line(
        GOOD,
        6,
        Some("qwen3-coder:30b"),
        "A build script.",
        (900, 0, 0, 12),
    ));
    text.push('\n');
    std::fs::write(&file, text).unwrap();
    let args = ["fidelity", "projects", "--format", "json"];
    let with = ok(mixed.path(), &args);
    assert!(
        with.stderr
            .contains("tracecost: 1 call of `qwen3-coder:30b` (1 file) has no price"),
        "{}",
        with.stderr
    );
    assert_eq!(with.stdout, ok(alone.path(), &args).stdout);
}

/// `check` checks an entry on its trace's priced calls and leaves out an
/// entry whose trace has none, naming its calls.
#[test]
fn check_leaves_out_an_entry_with_no_priced_call() {
    let dir = folder(true);
    let entry = |session: &str| serde_json::json!({"trace": format!("{PROJECT}/{session}.jsonl"), "config": "off+none"});
    let baseline = serde_json::json!({
        "format": "tracecost.baseline/v1",
        "settings": {"tokenizer": "o200k_base", "calibrate": "auto", "batch": false},
        "entries": [entry(GOOD), entry(LOCAL)],
    });
    std::fs::write(dir.path().join("baseline.json"), baseline.to_string()).unwrap();
    let update = ok(
        dir.path(),
        &["check", "--baseline", "baseline.json", "--update"],
    );
    named_once(&update.stderr);
    assert!(
        update.stderr.contains("updated 1 entries"),
        "{}",
        update.stderr
    );
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("baseline.json")).unwrap())
            .unwrap();
    assert!(written["entries"][0]["expected"].is_object());
    assert!(written["entries"][1].get("expected").is_none());
    let checked = ok(dir.path(), &["check", "--baseline", "baseline.json"]);
    named_once(&checked.stderr);
    assert!(
        checked.stdout.contains("1 (trace, config) pair(s) checked"),
        "{}",
        checked.stdout
    );
    let strict = run_in(
        dir.path(),
        &["check", "--baseline", "baseline.json", "--strict-prices"],
    );
    assert_eq!(strict.code, 2, "{}", strict.stderr);
}

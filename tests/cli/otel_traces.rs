//! OpenTelemetry exports read by every command with no format named: the
//! spans and log events the real instrumentations wrote
//! (`tests/fixtures/otel/`), alone and as one folder.

use serde_json::Value;

use crate::util::{fixture, outcome, tracecost};

#[test]
fn replay_reads_an_otel_export_with_no_format_named() {
    let path = fixture("otel/anthropic_traceloop.traces.jsonl");
    let (code, out, err) = outcome(
        tracecost()
            .args(["replay", path.to_str().unwrap(), "--format", "json"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["model"], "claude-sonnet-4-5-20250929");
    let calls = v["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 3, "one call per response, not per span");
    // The recorded bill: each call's usage as the stub answered it.
    let recorded: Vec<u64> = calls
        .iter()
        .map(|c| c["recorded"]["cache_read_input_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(recorded, [0, 2100, 2400]);
}

#[test]
fn a_folder_of_exports_is_read_as_one_export() {
    let dir = fixture("otel");
    let (code, out, err) = outcome(
        tracecost()
            .args(["fidelity", dir.to_str().unwrap(), "--skip-invalid"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    // The legacy logs' per-message events complete the legacy spans (so
    // that file gave calls too), and openai-v2's spans repeat the calls of
    // its inference events (logs are read first): those spans give no
    // call of their own, said, not lost.
    assert!(
        err.contains("1 of 7 OpenTelemetry file(s) gave no call to replay"),
        "{err}"
    );
    assert!(!err.contains("without their messages"), "{err}");
    assert!(
        err.contains("× spans or events of a call already read"),
        "{err}"
    );
    for trace in [
        "anthropic_traceloop.traces",
        "anthropic_sdk_only.traces",
        "openinference_anthropic.traces",
        "openai_v2.logs",
        "openai_v2_legacy.traces",
    ] {
        assert!(out.contains(trace), "{trace}: {out}");
    }
    // Named alone, a logs export of per-message events is refused with
    // the reason: the spans it completes are not there.
    let logs = fixture("otel/openai_v2_legacy.logs.jsonl");
    let (code, _, err) = outcome(
        tracecost()
            .args(["replay", logs.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("15 × records of a call whose own record is not in the import (OpenTelemetry per-message log events whose span is in no traces file given)"),
        "{err}"
    );
}

#[test]
fn import_decides_each_format_when_none_is_named() {
    // A folder of Langfuse, LangSmith and OpenAI Agents SDK exports, with
    // no --from: each file read with its importer, into one trace file.
    let dir = tempfile::tempdir().unwrap();
    for (from, name) in [
        ("langfuse", "v2_ingestion.jsonl"),
        ("langsmith", "wrap_anthropic.runs.jsonl"),
        ("openai_agents", "processor.spans.jsonl"),
    ] {
        std::fs::copy(fixture(&format!("{from}/{name}")), dir.path().join(name)).unwrap();
    }
    let out = dir.path().join("out").join("traces.json");
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let (code, _, err) = outcome(
        tracecost()
            .args([
                "import",
                dir.path().to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("wrote 3 trace(s), 9 call(s)"), "{err}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let sessions: Vec<&str> = v["traces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["session"].as_str().unwrap())
        .collect();
    assert_eq!(
        sessions,
        [
            "thread-fixture-0001",
            "sess_fixture_0001",
            "thread_fixture_0001"
        ]
    );
}

#[test]
fn a_folder_file_with_nothing_to_replay_is_named_and_the_rest_answers() {
    // A Responses-model Agents SDK export (response spans only) beside a
    // Chat Completions one: named with the reason, passed over; named
    // alone, it is an error.
    let dir = tempfile::tempdir().unwrap();
    for name in ["responses.ingest.jsonl", "chat_completions.ingest.jsonl"] {
        std::fs::copy(
            fixture(&format!("openai_agents/{name}")),
            dir.path().join(name),
        )
        .unwrap();
    }
    let (code, out, err) = outcome(
        tracecost()
            .args(["fidelity", dir.path().to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "responses.ingest.jsonl: nothing to replay: no OpenAI Agents SDK generation spans found"
        ),
        "{err}"
    );
    assert!(
        err.contains("run the agent with OpenAIChatCompletionsModel"),
        "{err}"
    );
    assert!(out.contains("chat_completions.ingest"), "{out}");
    let alone = dir.path().join("responses.ingest.jsonl");
    let (code, _, err) = outcome(
        tracecost()
            .args(["replay", alone.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot be replayed"), "{err}");
    // `import` of the folder writes the one that can be replayed.
    let out_file = dir.path().join("traces.json");
    let (code, _, err) = outcome(
        tracecost()
            .args([
                "import",
                dir.path().to_str().unwrap(),
                "-o",
                out_file.to_str().unwrap(),
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("wrote 1 trace(s), 3 call(s)"), "{err}");
    assert!(err.contains("responses.ingest.jsonl"), "{err}");
}

//! OpenTelemetry exports read by every command with no format named: the
//! spans the real instrumentations wrote (`tests/fixtures/otel/`), and a
//! folder of them mixed with the log records they are not read from.

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
fn a_folder_of_exports_names_what_it_does_not_read() {
    let dir = fixture("otel");
    let (code, out, err) = outcome(
        tracecost()
            .args(["fidelity", dir.to_str().unwrap(), "--skip-invalid"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("openai_v2.logs.jsonl: OpenTelemetry log records (LogsData)"),
        "{err}"
    );
    assert!(
        err.contains("openai_v2_legacy.traces.jsonl: no model-call spans with their messages"),
        "{err}"
    );
    for trace in [
        "anthropic_traceloop.traces",
        "anthropic_sdk_only.traces",
        "openinference_anthropic.traces",
        "openai_v2.traces",
    ] {
        assert!(out.contains(trace), "{trace}: {out}");
    }
    // Named alone, a logs export is refused with the reason.
    let logs = fixture("otel/openai_v2.logs.jsonl");
    let (code, _, err) = outcome(
        tracecost()
            .args(["replay", logs.to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("their per-message events are not read yet"),
        "{err}"
    );
}

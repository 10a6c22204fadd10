//! An Anthropic response whose `usage.iterations` records several requests
//! (a server-side compaction's summary first: its tokens are in no
//! top-level count) is one call per request, each billed at its own
//! tokens; without iterations, the top level is the call's usage.

use std::path::PathBuf;

use tracecost_import::{ImportOptions, ImportResult, InputFormat};
use tracecost_trace::Call;

fn import(dir: &tempfile::TempDir, name: &str, text: &str) -> ImportResult {
    let path: PathBuf = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    InputFormat::Anthropic
        .import(std::slice::from_ref(&path), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// One exchange whose response usage is `usage`.
fn line(usage: &str) -> String {
    format!(
        r#"{{"request":{{"model":"claude-opus-4-8","max_tokens":64,"messages":[{{"role":"user","content":"question"}}]}},"timestamp":1790000000,"response":{{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{{"type":"text","text":"answer"}}],"stop_reason":"end_turn","usage":{usage}}}}}"#
    )
}

/// (input, output, model, start) of each call.
fn calls(out: &ImportResult) -> Vec<(u64, u64, Option<String>, Option<u64>)> {
    assert_eq!(out.traces.len(), 1);
    let c: &[Call] = &out.traces[0].calls;
    c.iter()
        .map(|c| {
            let u = c.recorded_usage().expect("usage");
            (
                u.input_tokens.unwrap(),
                u.output_tokens.unwrap(),
                c.model.clone(),
                c.start_ms,
            )
        })
        .collect()
}

const COMPACTED: &str = r#"{"input_tokens":23000,"output_tokens":1000,"iterations":[{"type":"compaction","input_tokens":180000,"output_tokens":3500},{"type":"message","input_tokens":23000,"output_tokens":1000}]}"#;

#[test]
fn a_compaction_iteration_is_a_call_of_its_own_before_the_answer() {
    let dir = tempfile::tempdir().unwrap();
    let out = import(&dir, "log.jsonl", &(line(COMPACTED) + "\n"));
    assert_eq!(
        calls(&out),
        [
            (180_000, 3_500, None, Some(1_790_000_000_000)),
            // After the summary ended: no start of its own.
            (23_000, 1_000, None, None),
        ]
    );
    let t = &out.traces[0];
    assert!(t.calls.iter().all(|c| c.messages == t.calls[0].messages));
}

#[test]
fn without_iterations_or_with_one_unreadable_the_top_level_is_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let plain = r#"{"input_tokens":23000,"output_tokens":1000}"#;
    let out = import(&dir, "plain.jsonl", &(line(plain) + "\n"));
    assert_eq!(
        calls(&out),
        [(23_000, 1_000, None, Some(1_790_000_000_000))]
    );
    let torn = r#"{"input_tokens":23000,"output_tokens":1000,"iterations":[{"type":"compaction","input_tokens":"many","output_tokens":3500},{"type":"message","input_tokens":23000,"output_tokens":1000}]}"#;
    let out = import(&dir, "torn.jsonl", &(line(torn) + "\n"));
    assert_eq!(
        calls(&out),
        [(23_000, 1_000, None, Some(1_790_000_000_000))]
    );
}

#[test]
fn an_advisor_iteration_is_billed_at_its_own_model() {
    let dir = tempfile::tempdir().unwrap();
    let usage = r#"{"input_tokens":3,"output_tokens":30,"iterations":[{"type":"message","input_tokens":1,"output_tokens":10},{"type":"advisor_message","model":"claude-sonnet-4-5","input_tokens":500,"output_tokens":40},{"type":"message","input_tokens":2,"output_tokens":20}]}"#;
    let out = import(&dir, "log.jsonl", &(line(usage) + "\n"));
    let got = calls(&out);
    assert_eq!(got.len(), 3);
    assert_eq!(
        (got[1].0, got[1].2.as_deref()),
        (500, Some("claude-sonnet-4-5"))
    );
    assert_eq!((got[0].0, got[2].0), (1, 2));
}

#[test]
fn a_streamed_response_reads_its_iterations_from_the_final_usage() {
    let dir = tempfile::tempdir().unwrap();
    let events = [
        r#"{"type":"message_start","message":{"id":"msg_1","model":"claude-opus-4-8","usage":{"input_tokens":23000,"output_tokens":1}}}"#,
        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"answer"}}"#,
        r#"{"type":"content_block_stop","index":0}"#,
        &format!(
            r#"{{"type":"message_delta","delta":{{"stop_reason":"end_turn"}},"usage":{}}}"#,
            COMPACTED
        ),
        r#"{"type":"message_stop"}"#,
    ];
    let sse: String = events.iter().map(|e| format!("data: {e}\n\n")).collect();
    let body = serde_json::to_string(&sse).unwrap();
    let text = format!(
        r#"{{"request":{{"model":"claude-opus-4-8","max_tokens":64,"stream":true,"messages":[{{"role":"user","content":"question"}}]}},"timestamp":1790000000,"response":{{"status":200,"body":{body}}}}}"#
    );
    let out = import(&dir, "sse.jsonl", &(text + "\n"));
    let got: Vec<(u64, u64)> = calls(&out).iter().map(|c| (c.0, c.1)).collect();
    assert_eq!(got, [(180_000, 3_500), (23_000, 1_000)]);
}

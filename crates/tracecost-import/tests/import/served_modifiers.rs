//! The price modifiers an API log's response records (Anthropic's usage
//! `speed`, `inference_geo`, `service_tier`; OpenAI's `service_tier`) are
//! kept on the call's usage, as the Claude Code reader keeps them, so the
//! replay bills the call as it was served.

use std::path::PathBuf;

use tracecost_import::{ImportOptions, ImportResult, InputFormat};
use tracecost_trace::RecordedModifiers;

fn import(format: InputFormat, dir: &tempfile::TempDir, name: &str, text: &str) -> ImportResult {
    let path: PathBuf = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    format
        .import(std::slice::from_ref(&path), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every call's modifiers, in file order.
fn served(out: &ImportResult) -> Vec<RecordedModifiers> {
    let mut calls: Vec<_> = out
        .traces
        .iter()
        .flat_map(|t| t.calls.iter().map(|c| (c.start_ms, c.recorded_usage())))
        .collect();
    calls.sort_by_key(|(start, _)| *start);
    calls
        .into_iter()
        .map(|(_, u)| u.expect("usage").modifiers)
        .collect()
}

const fn mods(fast: bool, regional: bool, batch: bool) -> RecordedModifiers {
    RecordedModifiers {
        fast,
        regional,
        batch,
    }
}

/// One plain Anthropic exchange per line, each its own conversation,
/// whose response usage ends with `extra`.
fn anthropic_line(n: usize, extra: &str) -> String {
    format!(
        r#"{{"request":{{"model":"claude-opus-4-8","max_tokens":64,"messages":[{{"role":"user","content":"question {n}"}}]}},"timestamp":{ts},"response":{{"id":"msg_{n}","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{{"type":"text","text":"answer"}}],"stop_reason":"end_turn","usage":{{"input_tokens":100,"output_tokens":20{extra}}}}}}}"#,
        ts = 1_790_000_000 + n,
    )
}

#[test]
fn an_anthropic_log_keeps_speed_geography_and_tier_from_the_response_usage() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        "",
        r#","service_tier":"standard","inference_geo":"global""#,
        r#","speed":"fast""#,
        r#","inference_geo":"us""#,
        r#","service_tier":"batch""#,
        r#","inference_geo":"not_available","service_tier":"priority""#,
        // A modifier of another shape says nothing: the call is standard
        // and its usage is kept.
        r#","speed":true,"service_tier":null"#,
    ];
    let text: String = lines
        .iter()
        .enumerate()
        .map(|(n, extra)| anthropic_line(n, extra) + "\n")
        .collect();
    let out = import(InputFormat::Anthropic, &dir, "log.jsonl", &text);
    assert_eq!(
        served(&out),
        [
            mods(false, false, false),
            mods(false, false, false),
            mods(true, false, false),
            mods(false, true, false),
            mods(false, false, true),
            mods(false, false, false),
            mods(false, false, false),
        ]
    );
}

/// A stream's `message_start` usage carries the modifiers; its
/// `message_delta` usage, which carries none, keeps them.
#[test]
fn a_streamed_anthropic_response_keeps_the_modifiers_of_its_message_start() {
    let dir = tempfile::tempdir().unwrap();
    let events = concat!(
        "event: message_start\n",
        r#"data: {"type":"message_start","message":{"id":"msg_s","type":"message","role":"assistant","model":"claude-opus-4-8","content":[],"usage":{"input_tokens":50,"output_tokens":1,"service_tier":"batch","inference_geo":"eu"}}}"#,
        "\n\nevent: content_block_start\n",
        r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
        "\n\nevent: content_block_delta\n",
        r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"hi"}}"#,
        "\n\nevent: content_block_stop\n",
        r#"data: {"type":"content_block_stop","index":0}"#,
        "\n\nevent: message_delta\n",
        r#"data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}"#,
        "\n\nevent: message_stop\n",
        r#"data: {"type":"message_stop"}"#,
        "\n\n",
    );
    let line = serde_json::json!({
        "request": {
            "timestamp": 1_790_000_000,
            "method": "POST",
            "url": "https://api.anthropic.com/v1/messages",
            "headers": {},
            "body": {"model": "claude-opus-4-8", "max_tokens": 64, "stream": true,
                     "messages": [{"role": "user", "content": "hello"}]}
        },
        "response": {"timestamp": 1_790_000_001, "status_code": 200, "headers": {}, "body_raw": events}
    });
    let out = import(
        InputFormat::Anthropic,
        &dir,
        "stream.jsonl",
        &format!("{line}\n"),
    );
    assert_eq!(served(&out), [mods(false, true, true)]);
    let u = out.traces[0].calls[0].recorded_usage().unwrap();
    assert_eq!((u.input_tokens, u.output_tokens), (Some(50), Some(7)));
}

/// The tiers an OpenAI response may record, each with what it is billed
/// as: flex at the Batch API's rates, the others at the standard rate.
const OPENAI_TIERS: [(&str, bool); 6] = [
    ("", false),
    (r#","service_tier":"default""#, false),
    (r#","service_tier":"auto""#, false),
    (r#","service_tier":"flex""#, true),
    (r#","service_tier":"priority""#, false),
    (r#","service_tier":"scale""#, false),
];

const PRIORITY_NOTE: &str = "1 × responses served by OpenAI's priority tier";

fn check_openai(out: &ImportResult) {
    let expected: Vec<_> = OPENAI_TIERS
        .iter()
        .map(|(_, flex)| mods(false, false, *flex))
        .collect();
    assert_eq!(served(out), expected);
    assert!(
        out.report
            .unmapped
            .iter()
            .any(|l| l.starts_with(PRIORITY_NOTE)),
        "{}",
        out.report
    );
}

#[test]
fn an_openai_chat_log_bills_flex_as_batch_and_counts_priority() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = OPENAI_TIERS
        .iter()
        .enumerate()
        .map(|(n, (extra, _))| {
            format!(
                r#"{{"request":{{"model":"gpt-5.4","messages":[{{"role":"user","content":"question {n}"}}]}},"response":{{"id":"chatcmpl-{n}","object":"chat.completion","created":{ts},"model":"gpt-5.4","choices":[{{"index":0,"message":{{"role":"assistant","content":"answer"}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":100,"completion_tokens":20}}{extra}}}}}"#,
                ts = 1_790_000_000 + n,
            ) + "\n"
        })
        .collect();
    check_openai(&import(InputFormat::Openai, &dir, "chat.jsonl", &text));
}

#[test]
fn an_openai_responses_log_bills_flex_as_batch_and_counts_priority() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = OPENAI_TIERS
        .iter()
        .enumerate()
        .map(|(n, (extra, _))| {
            format!(
                r#"{{"request":{{"model":"gpt-5.4","input":[{{"role":"user","content":"question {n}"}}]}},"response":{{"id":"resp_{n}","object":"response","created_at":{ts},"status":"completed","model":"gpt-5.4","output":[{{"type":"message","id":"msg_{n}","role":"assistant","content":[{{"type":"output_text","text":"answer"}}]}}],"usage":{{"input_tokens":100,"output_tokens":20}}{extra}}}}}"#,
                ts = 1_790_000_000 + n,
            ) + "\n"
        })
        .collect();
    check_openai(&import(
        InputFormat::OpenaiResponses,
        &dir,
        "responses.jsonl",
        &text,
    ));
}

/// An OpenTelemetry export of OpenAI calls records the serving tier as
/// `openai.response.service_tier`: read by the same rule.
#[test]
fn an_otel_export_of_openai_calls_reads_the_response_tier() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/otel/openai_v2.traces.jsonl");
    let text = std::fs::read_to_string(src).unwrap();
    let attr = r#""key":"openai.response.service_tier","value":{"stringValue":"default"}"#;
    assert!(text.contains(attr));
    let dir = tempfile::tempdir().unwrap();
    let plain = import(InputFormat::Otel, &dir, "default.traces.jsonl", &text);
    assert!(served(&plain).iter().all(RecordedModifiers::is_standard));
    let flex = text.replace(attr, &attr.replace("default", "flex"));
    std::fs::remove_file(dir.path().join("default.traces.jsonl")).unwrap();
    let flex = import(InputFormat::Otel, &dir, "flex.traces.jsonl", &flex);
    assert!(!served(&flex).is_empty());
    assert!(served(&flex).iter().all(|m| *m == mods(false, false, true)));
}

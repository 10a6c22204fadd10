//! The OpenTelemetry importer on exports the real instrumentations wrote
//! (`tests/fixtures/otel/`, made by `make_otel_fixtures.py` there against a
//! stub API on loopback; the README there gives the package versions).
//! The stub's usage is known, so every figure read is checked against it.

use std::path::{Path, PathBuf};

use tracecost_engine::cache::ProviderKind;
use tracecost_engine::message::{BlockKind, Role};
use tracecost_import::detect::{FileKind, detect_file};
use tracecost_import::{ImportError, ImportOptions, ImportResult, InputFormat, otel};
use tracecost_trace::{Trace, load_str, to_json};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/otel")
        .join(name)
}

/// Imports `name`, checking every trace reloads to itself without warnings.
fn import(name: &str) -> ImportResult {
    let out =
        otel::import(&[fixture(name)], &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    for t in &out.traces {
        let json = to_json(t);
        let loaded = load_str(&json, &t.name).unwrap_or_else(|e| panic!("{e}\n{json}"));
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let mut t = t.clone();
        t.source = None;
        assert_eq!(loaded.traces[0], t);
    }
    out
}

fn has_unmapped(out: &ImportResult, needle: &str) -> bool {
    out.report.unmapped.iter().any(|l| l.contains(needle))
}

/// Per call: uncached input, writes (5m, 1h), reads, output.
type Figures = (
    Option<u64>,
    Option<u64>,
    Option<u64>,
    Option<u64>,
    Option<u64>,
    Option<u64>,
);

fn figures(t: &Trace) -> Vec<Figures> {
    t.calls
        .iter()
        .map(|c| {
            let u = c.recorded_usage().expect("usage");
            (
                u.input_tokens,
                u.cache_creation_input_tokens,
                u.ephemeral_5m_input_tokens,
                u.ephemeral_1h_input_tokens,
                u.cache_read_input_tokens,
                u.output_tokens,
            )
        })
        .collect()
}

/// What the stub answered: 12 / 9 / 7 uncached, writes of 2,100 (100 for
/// 5 minutes, 2,000 for an hour), 300 and 250, reads of 0, 2,100 and
/// 2,400; the instrumentations write input as the sum (2,112, 2,409,
/// 2,657).
const STUB: [Figures; 3] = [
    (
        Some(12),
        Some(2100),
        Some(100),
        Some(2000),
        Some(0),
        Some(45),
    ),
    (Some(9), Some(300), Some(300), Some(0), Some(2100), Some(38)),
    (
        Some(7),
        Some(250),
        Some(250),
        Some(0),
        Some(2400),
        Some(120),
    ),
];

/// The agent loop every capture ran: a question, two file reads, an
/// answer; each call sends what the one before sent and its reply.
fn assert_the_agent_loop(t: &Trace) {
    let counts: Vec<usize> = t.calls.iter().map(|c| c.messages).collect();
    assert_eq!(counts, [1, 3, 5]);
    let roles: Vec<Role> = t.messages.iter().map(|m| m.role()).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant
        ]
    );
    // Each tool result answers the call before it, by id.
    for (call, result) in [(1, 2), (3, 4)] {
        let use_id = t.messages[call]
            .blocks()
            .iter()
            .find_map(|b| match b.kind() {
                BlockKind::ToolUse { id, .. } => Some(id.clone()),
                _ => None,
            })
            .expect("a tool_use");
        let answered = t.messages[result]
            .blocks()
            .iter()
            .find_map(|b| match b.kind() {
                BlockKind::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                _ => None,
            })
            .expect("a tool_result");
        assert_eq!(use_id, answered);
    }
    let starts: Vec<u64> = t.calls.iter().map(|c| c.start_ms.unwrap()).collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]), "{starts:?}");
}

fn system_text(t: &Trace) -> String {
    match t.prompts[0].system[0].kind() {
        BlockKind::Text { text } => text.to_string(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn traceloop_beside_the_anthropic_sdks_own_spans_counts_each_call_once() {
    let out = import("anthropic_traceloop.traces.jsonl");
    assert_eq!(out.traces.len(), 1);
    let t = &out.traces[0];
    assert_eq!(t.provider, ProviderKind::Anthropic);
    assert_eq!(t.model, "claude-sonnet-4-5-20250929");
    assert_the_agent_loop(t);
    // Six model spans, three calls: the SDK's own span of each is merged,
    // and its 5m/1h split completes Traceloop's usage.
    assert_eq!(figures(t), STUB);
    assert!(has_unmapped(
        &out,
        "3 × spans or events of a call already read"
    ));
    assert_eq!(t.prompts[0].tools.len(), 1);
    assert_eq!(t.prompts[0].tools[0].name(), "read_file");
    assert!(system_text(t).starts_with("You are a coding agent"));
    assert!(has_unmapped(
        &out,
        "cache markers the export does not record"
    ));
}

#[test]
fn the_anthropic_sdk_alone_records_content_usage_and_the_write_split() {
    let out = import("anthropic_sdk_only.traces.jsonl");
    assert_eq!(out.traces.len(), 1);
    let t = &out.traces[0];
    assert_the_agent_loop(t);
    assert_eq!(figures(t), STUB);
    assert!(t.prompts[0].tools.is_empty(), "the SDK records no tools");
}

#[test]
fn openinference_flattened_keys_read_as_the_same_conversation() {
    let out = import("openinference_anthropic.traces.jsonl");
    assert_eq!(out.traces.len(), 1);
    let t = &out.traces[0];
    assert_the_agent_loop(t);
    // The SDK's span inside OpenInference's (which records no response id)
    // is the same call.
    assert_eq!(figures(t), STUB);
    assert!(has_unmapped(
        &out,
        "3 × spans or events of a call already read"
    ));
    assert_eq!(t.prompts[0].tools[0].name(), "read_file");
    assert!(system_text(t).starts_with("You are a coding agent"));
}

#[test]
fn openai_v2_records_no_cache_tokens_and_is_priced_as_recorded() {
    let out = import("openai_v2.traces.jsonl");
    assert_eq!(out.traces.len(), 1);
    let t = &out.traces[0];
    assert_eq!(t.provider, ProviderKind::OpenAi);
    assert_eq!(t.model, "gpt-4.1-2025-04-14");
    assert_the_agent_loop(t);
    // prompt_tokens as the stub answered them; its cached_tokens (0, 1,024,
    // 1,152) are not in the export, so no read or write is known.
    let input: Vec<_> = figures(t).iter().map(|f| (f.0, f.1, f.4, f.5)).collect();
    assert_eq!(
        input,
        [
            (Some(1180), None, None, Some(22)),
            (Some(1290), None, None, Some(25)),
            (Some(1420), None, None, Some(48)),
        ]
    );
    assert!(has_unmapped(
        &out,
        "3 × calls whose export records no cache tokens"
    ));
    // The system prompt comes as a `system` message.
    assert!(system_text(t).starts_with("You are a coding agent"));
}

#[test]
fn per_message_events_are_the_content_of_their_spans() {
    // openai-v2 2.3b0 puts content in per-message log events only
    // (gen_ai.user.message, gen_ai.choice, ...), naming their span: the
    // spans give the model and usage, the events the messages.
    let logs = fixture("openai_v2_legacy.logs.jsonl");
    let traces = fixture("openai_v2_legacy.traces.jsonl");
    assert_eq!(
        detect_file(&logs).unwrap(),
        FileKind::Log(InputFormat::Otel)
    );
    // Either order: the logs file is read first.
    for inputs in [
        [logs.clone(), traces.clone()],
        [traces.clone(), logs.clone()],
    ] {
        let out = otel::import(&inputs, &ImportOptions::default()).unwrap();
        assert_eq!(out.traces.len(), 1, "{:?}", out.report.unmapped);
        let t = &out.traces[0];
        let input: Vec<_> = figures(t).iter().map(|f| (f.0, f.1, f.4, f.5)).collect();
        assert_eq!(
            input,
            [
                (Some(1180), None, None, Some(22)),
                (Some(1290), None, None, Some(25)),
                (Some(1420), None, None, Some(48)),
            ]
        );
        assert!(has_unmapped(
            &out,
            "3 × calls whose export records no cache tokens"
        ));
        assert!(!has_unmapped(&out, "not read"), "{:?}", out.report.unmapped);
        // The same conversation as the library's later version records on
        // its spans, from the same agent loop.
        let later = import("openai_v2.traces.jsonl");
        let later = &later.traces[0];
        assert_eq!(system_text(t), system_text(later));
        assert_eq!(plain(&t.messages), plain(&later.messages));
        assert_eq!(
            t.calls.iter().map(|c| c.messages).collect::<Vec<_>>(),
            later.calls.iter().map(|c| c.messages).collect::<Vec<_>>()
        );
        let reloaded = load_str(&to_json(t), &t.name).unwrap();
        assert!(reloaded.warnings.is_empty(), "{:?}", reloaded.warnings);
    }
}

/// Messages as JSON, a string content as its one text block (the OpenAI
/// importer keeps a string as sent; the parts schema has only blocks).
fn plain(messages: &[tracecost_engine::message::Message]) -> Vec<serde_json::Value> {
    messages
        .iter()
        .map(|m| {
            let mut v: serde_json::Value = serde_json::from_str(&m.to_json()).unwrap();
            if let Some(text) = v["content"].as_str().map(str::to_owned) {
                v["content"] = serde_json::json!([{"type": "text", "text": text}]);
            }
            v
        })
        .collect()
}

#[test]
fn spans_without_their_events_and_events_without_their_spans_are_said() {
    // The spans alone hold nothing to replay.
    let err = otel::import(
        &[fixture("openai_v2_legacy.traces.jsonl")],
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ImportError::Empty(_)), "{err}");
    assert!(
        err.to_string()
            .contains("3 × model-call spans without their messages (content capture off, or its per-message log events in no logs file given)"),
        "{err}"
    );
    // The events alone give no call: no model, no usage.
    let err = otel::import(
        &[fixture("openai_v2_legacy.logs.jsonl")],
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains(
            "15 × records of a call whose own record is not in the import (OpenTelemetry per-message log events whose span is in no traces file given)"
        ),
        "{err}"
    );
}

#[test]
fn inference_events_are_read_as_calls() {
    // openai-v2 2.4b0's gen_ai.client.inference.operation.details events
    // carry the span's attributes: the same calls, from the logs alone.
    let path = fixture("openai_v2.logs.jsonl");
    assert_eq!(
        detect_file(&path).unwrap(),
        FileKind::Log(InputFormat::Otel)
    );
    let logs = import("openai_v2.logs.jsonl");
    let spans = import("openai_v2.traces.jsonl");
    assert_eq!(logs.traces.len(), 1);
    assert_eq!(figures(&logs.traces[0]), figures(&spans.traces[0]));
    assert_eq!(logs.traces[0].messages, spans.traces[0].messages);
    // Both files of one export: each call once.
    let both = otel::import(
        &[
            fixture("openai_v2.logs.jsonl"),
            fixture("openai_v2.traces.jsonl"),
        ],
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(both.traces.iter().map(|t| t.calls.len()).sum::<usize>(), 3);
}

#[test]
fn every_span_export_is_told_apart_by_content() {
    for f in [
        "anthropic_traceloop.traces.jsonl",
        "anthropic_sdk_only.traces.jsonl",
        "openinference_anthropic.traces.jsonl",
        "openai_v2.traces.jsonl",
        "openai_v2_legacy.traces.jsonl",
    ] {
        assert_eq!(
            detect_file(&fixture(f)).unwrap(),
            FileKind::Log(InputFormat::Otel),
            "{f}"
        );
    }
}

#[test]
fn a_damaged_line_is_located_and_skippable() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spans.jsonl");
    let good = std::fs::read_to_string(fixture("anthropic_sdk_only.traces.jsonl")).unwrap();
    let mut text = String::from("{\"resourceSpans\": [\n");
    text.push_str(&good);
    std::fs::write(&path, &text).unwrap();
    let err = otel::import(std::slice::from_ref(&path), &ImportOptions::default()).unwrap_err();
    assert!(err.to_string().contains("spans.jsonl:1:"), "{err}");
    let skip = ImportOptions {
        skip_invalid: true,
        ..Default::default()
    };
    let out = otel::import(&[path], &skip).unwrap();
    assert_eq!(out.report.skipped_lines, 1);
    assert_eq!(out.traces[0].calls.len(), 3);
}

/// A model span of call `i` (its own conversation), as an instrumentor or
/// the anthropic SDK writes it: `sdk` records no content.
fn call_span(i: usize, sdk: bool) -> serde_json::Value {
    let attr = |k: &str, v: serde_json::Value| serde_json::json!({"key": k, "value": v});
    let s = |v: &str| serde_json::json!({ "stringValue": v });
    let n = |v: u64| serde_json::json!({ "intValue": v.to_string() });
    let mut attrs = vec![
        attr("gen_ai.operation.name", s("chat")),
        attr("gen_ai.provider.name", s("anthropic")),
        attr("gen_ai.response.model", s("claude-sonnet-4-5-20250929")),
        attr("gen_ai.response.id", s(&format!("msg_{i:05}"))),
        attr("gen_ai.usage.input_tokens", n(1012)),
        attr("gen_ai.usage.cache_read.input_tokens", n(1000)),
        attr("gen_ai.usage.output_tokens", n(20)),
    ];
    if !sdk {
        let input = serde_json::json!([{"role": "user", "parts": [{"type": "text", "content": format!("question {i}")}]}]);
        attrs.push(attr("gen_ai.input.messages", s(&input.to_string())));
    }
    serde_json::json!({
        "traceId": format!("{i:032x}"),
        "spanId": format!("{:016x}", i * 2 + usize::from(sdk)),
        "name": "chat",
        "startTimeUnixNano": (1_796_198_886_000_000_000u64 + i as u64 * 1_000_000_000).to_string(),
        "attributes": attrs,
    })
}

#[test]
fn a_calls_spans_far_apart_in_a_long_export_count_once() {
    // 600 calls, one line per span. Each call's SDK span comes 40 spans
    // after its instrumentor's (within the window) and, for every tenth
    // call, again 400 spans later (past it): every call counts once.
    let calls = 600;
    let mut lines: Vec<(usize, serde_json::Value)> = Vec::new();
    for i in 0..calls {
        lines.push((i * 10, call_span(i, false)));
        lines.push((i * 10 + 400 + 5, call_span(i, true)));
        if i % 10 == 0 {
            lines.push((i * 10 + 4000 + 7, call_span(i, true)));
        }
    }
    lines.sort_by_key(|(at, _)| *at);
    let text: String = lines
        .into_iter()
        .map(|(_, span)| {
            serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).to_string()
                + "\n"
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.traces.jsonl");
    std::fs::write(&path, text).unwrap();
    let out = otel::import(&[path], &ImportOptions::default()).unwrap();
    let read: usize = out.traces.iter().map(|t| t.calls.len()).sum();
    assert_eq!(read, calls);
    assert!(
        has_unmapped(
            &out,
            &format!(
                "{} × spans or events of a call already read",
                calls + calls / 10
            )
        ),
        "{:?}",
        out.report.unmapped
    );
    // In start order, as the spans began.
    let starts: Vec<u64> = out
        .traces
        .iter()
        .map(|t| t.calls[0].start_ms.unwrap())
        .collect();
    assert!(starts.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn events_and_spans_in_one_file_and_events_without_content() {
    let dir = tempfile::tempdir().unwrap();
    let logs = std::fs::read_to_string(fixture("openai_v2_legacy.logs.jsonl")).unwrap();
    let spans = std::fs::read_to_string(fixture("openai_v2_legacy.traces.jsonl")).unwrap();
    // One file of both signals, each call's events before its span (the
    // order they are emitted in), the event name as the older
    // `event.name` attribute.
    let renamed: String = logs
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let r = &mut v["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0];
            let name = r["eventName"].take();
            r.as_object_mut().unwrap().remove("eventName");
            r["attributes"]
                .as_array_mut()
                .unwrap()
                .push(serde_json::json!({"key": "event.name", "value": {"stringValue": name}}));
            format!("{v}\n")
        })
        .collect();
    let both = dir.path().join("both.jsonl");
    std::fs::write(&both, format!("{renamed}{spans}")).unwrap();
    let out = otel::import(&[both], &ImportOptions::default()).unwrap();
    assert_eq!(out.traces.len(), 1);
    assert_eq!(out.traces[0].calls.len(), 3);
    let separate = otel::import(
        &[
            fixture("openai_v2_legacy.logs.jsonl"),
            fixture("openai_v2_legacy.traces.jsonl"),
        ],
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(out.traces[0].messages, separate.traces[0].messages);
    // Capture off: the events hold no content, the spans no messages.
    let bare = dir.path().join("bare.jsonl");
    let stripped: String = logs
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            let body = &mut v["resourceLogs"][0]["scopeLogs"][0]["logRecords"][0]["body"];
            if let Some(kvs) = body["kvlistValue"]["values"].as_array_mut() {
                kvs.retain(|kv| kv["key"] != "content");
            }
            if let Some(kvs) = body.pointer_mut("/kvlistValue/values/2/value/kvlistValue/values") {
                kvs.as_array_mut()
                    .unwrap()
                    .retain(|kv| kv["key"] != "content");
            }
            format!("{v}\n")
        })
        .collect();
    std::fs::write(&bare, format!("{stripped}{spans}")).unwrap();
    let err = otel::import(&[bare], &ImportOptions::default()).unwrap_err();
    assert!(
        err.to_string()
            .contains("3 × model-call spans without their messages"),
        "{err}"
    );
}

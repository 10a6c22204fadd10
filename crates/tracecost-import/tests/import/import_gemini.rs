//! The Gemini `generateContent` importer on hand-made logs in the API's
//! shapes (`tests/fixtures/gemini/`).

use std::path::{Path, PathBuf};

use tracecost_engine::cache::ProviderKind;
use tracecost_engine::message::{BlockKind, Role};
use tracecost_import::detect::{FileKind, detect_file};
use tracecost_import::{ImportError, ImportOptions, ImportResult, InputFormat, gemini};
use tracecost_trace::{load_str, to_json};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/gemini")
        .join(name)
}

/// Imports `path`, checking every trace reloads to itself without warnings.
fn import(path: &Path) -> ImportResult {
    let out = gemini::import(&[path.to_path_buf()], &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
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

#[test]
fn a_tool_loop_is_one_conversation_of_three_calls() {
    let out = import(&fixture("gm_pairs.jsonl"));
    assert_eq!(out.traces.len(), 1);
    let t = &out.traces[0];
    assert_eq!(t.provider, ProviderKind::Google);
    assert_eq!(t.model, "gemini-2.5-flash", "from the request URL");
    let counts: Vec<usize> = t.calls.iter().map(|c| c.messages).collect();
    assert_eq!(counts, [1, 3, 5]);
    // The history ends with the last call's reply.
    assert_eq!(t.messages.len(), 6);
    assert_eq!(t.messages[5].role(), Role::Assistant);
    // Times from the records.
    assert_eq!(t.calls[1].start_ms, Some(1_777_629_620_000));
    // A call without an id answered by name; one with an id by id.
    let ids: Vec<String> = t
        .messages
        .iter()
        .flat_map(|m| m.blocks())
        .filter_map(|b| match b.kind() {
            BlockKind::ToolUse { id, .. } => Some(format!("use {id}")),
            BlockKind::ToolResult { tool_use_id, .. } => Some(format!("result {tool_use_id}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        ids,
        [
            "use gemini_call_1_0",
            "result gemini_call_1_0",
            "use fc_2",
            "result fc_2"
        ]
    );
    // The thought summary is not resent.
    assert!(
        has_unmapped(&out, "thought summaries"),
        "{:?}",
        out.report.unmapped
    );
    assert!(
        has_unmapped(&out, "built-in tools"),
        "{:?}",
        out.report.unmapped
    );
}

#[test]
fn uncached_input_excludes_the_cached_tokens_and_output_holds_the_thinking() {
    let out = import(&fixture("gm_pairs.jsonl"));
    let t = &out.traces[0];
    let u = |i: usize| t.calls[i].recorded_usage().unwrap();
    // promptTokenCount includes cachedContentTokenCount.
    assert_eq!(u(0).input_tokens, Some(2300));
    assert_eq!(u(0).output_tokens, Some(52), "12 candidates + 40 thoughts");
    assert_eq!(
        (u(1).input_tokens, u(1).cache_read_input_tokens),
        (Some(412), Some(2048))
    );
    // The built-in tools' prompt is input too.
    assert_eq!(
        (u(2).input_tokens, u(2).cache_read_input_tokens),
        (Some(150), Some(2400))
    );
    assert_eq!(
        u(2).cache_creation_input_tokens,
        None,
        "the implicit cache writes nothing"
    );
}

#[test]
fn the_system_instruction_and_function_declarations_are_the_prompt() {
    let out = import(&fixture("gm_pairs.jsonl"));
    let p = &out.traces[0].prompts[0];
    assert_eq!(p.system.len(), 1);
    let names: Vec<&str> = p.tools.iter().map(|d| d.name()).collect();
    assert_eq!(names, ["search", "fetch"]);
    // parametersJsonSchema stands for parameters.
    assert!(
        p.tools[1]
            .to_json()
            .contains(r#""input_schema":{"type":"object""#),
        "{}",
        p.tools[1].to_json()
    );
}

#[test]
fn a_request_body_maps_images_and_says_what_it_dropped() {
    let out = import(&fixture("gm_request.json"));
    let t = &out.traces[0];
    assert_eq!(t.calls.len(), 1);
    assert!(t.calls[0].usage.is_none());
    let kinds: Vec<bool> = t.messages[0]
        .blocks()
        .iter()
        .map(|b| matches!(b.kind(), BlockKind::Image))
        .collect();
    assert_eq!(kinds, [false, true]);
    assert!(
        has_unmapped(&out, "parts of other kinds"),
        "{:?}",
        out.report.unmapped
    );
    assert_eq!(
        out.traces[0].prompts[0].system.len(),
        1,
        "a string instruction"
    );
}

#[test]
fn gemini_logs_are_told_apart_from_the_others() {
    for name in ["gm_pairs.jsonl", "gm_request.json"] {
        assert_eq!(
            detect_file(&fixture(name)).unwrap(),
            FileKind::Log(InputFormat::Gemini),
            "{name}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("r.jsonl");
    let by_response = r#"{"request":{"contents":[]},"response":{"candidates":[],"usageMetadata":{"promptTokenCount":3}}}"#;
    std::fs::write(&p, by_response).unwrap();
    assert_eq!(detect_file(&p).unwrap(), FileKind::Log(InputFormat::Gemini));
}

#[test]
fn cached_tokens_above_the_prompt_are_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let ok = r#"{"request":{"contents":[{"role":"user","parts":[{"text":"z"}]}]},"response":{"candidates":[],"usageMetadata":{"promptTokenCount":10}}}"#;
    let bad = r#"{"request":{"contents":[{"role":"user","parts":[{"text":"a"}]}]},"response":{"candidates":[],"usageMetadata":{"promptTokenCount":100,"cachedContentTokenCount":200}}}"#;
    let p = dir.path().join("bad.jsonl");
    std::fs::write(&p, format!("{bad}\n{ok}\n")).unwrap();
    let err = gemini::import(std::slice::from_ref(&p), &ImportOptions::default()).unwrap_err();
    match &err {
        ImportError::Invalid { line, message, .. } => {
            assert_eq!(*line, 1);
            assert!(
                message.starts_with("at /response/usageMetadata: cached (200)"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    // Skipped under skip_invalid, and counted; the good line is kept.
    let out = gemini::import(
        &[p],
        &ImportOptions {
            skip_invalid: true,
            ..ImportOptions::default()
        },
    )
    .unwrap();
    assert_eq!(out.report.skipped_lines, 1);
    assert_eq!(out.traces.len(), 1);
}

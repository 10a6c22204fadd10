//! The OpenAI Responses API importer on hand-made logs in the API's shapes
//! (`tests/fixtures/responses/`), and the Chat Completions importer's
//! reading of cache writes.

use std::path::{Path, PathBuf};

use tracecost_engine::cache::ProviderKind;
use tracecost_engine::message::Role;
use tracecost_import::detect::{FileKind, detect_file};
use tracecost_import::{
    ImportError, ImportOptions, ImportResult, InputFormat, openai, openai_responses,
};
use tracecost_trace::{Trace, load_str, to_json};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/responses")
        .join(name)
}

/// Imports `path`, checking every trace reloads to itself without warnings.
fn import(path: &Path) -> ImportResult {
    let out = openai_responses::import(&[path.to_path_buf()], &ImportOptions::default())
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

fn counts(t: &Trace) -> Vec<usize> {
    t.calls.iter().map(|c| c.messages).collect()
}

fn has_unmapped(out: &ImportResult, needle: &str) -> bool {
    out.report.unmapped.iter().any(|l| l.contains(needle))
}

fn split(t: &Trace, call: usize) -> (Option<u64>, Option<u64>, Option<u64>, Option<u64>) {
    let u = t.calls[call].recorded_usage().unwrap();
    (
        u.input_tokens,
        u.cache_read_input_tokens,
        u.cache_creation_input_tokens,
        u.output_tokens,
    )
}

#[test]
fn a_previous_response_id_chain_in_the_log_is_one_conversation() {
    let out = import(&fixture("rs_pairs.jsonl"));
    assert_eq!(out.traces.len(), 2);
    let t = &out.traces[0];
    assert_eq!(t.provider, ProviderKind::OpenAi);
    assert_eq!(t.model, "gpt-5.6-terra");
    // The chained request sends the first call's input and output before
    // its own; the request that resent everything extends the same trace.
    assert_eq!(counts(t), [1, 3, 5]);
    assert_eq!(t.messages.len(), 6, "and the last reply");
    let kinds: Vec<&str> = t.messages[1]
        .blocks()
        .iter()
        .map(|b| b.block_type())
        .collect();
    assert_eq!(kinds, ["thinking", "tool_use"]);
    assert_eq!(
        t.messages[2].to_json(),
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_P1","content":"18C, light rain"}]}"#
    );
    assert_eq!(t.messages[5].role(), Role::Assistant);
    assert_eq!(t.calls[0].start_ms, Some(1_784_023_200_000), "created_at");
}

#[test]
fn a_chain_whose_start_is_not_in_the_log_is_said_to_be() {
    let out = import(&fixture("rs_pairs.jsonl"));
    let t = &out.traces[1];
    assert_eq!(t.name, "rs_pairs-2");
    assert_eq!(counts(t), [1]);
    assert!(
        has_unmapped(&out, "1 × requests continuing a response not in the file"),
        "{:?}",
        out.report.unmapped
    );
}

#[test]
fn instructions_and_flat_function_tools_are_the_prompt() {
    let out = import(&fixture("rs_pairs.jsonl"));
    let p = &out.traces[0].prompts;
    assert_eq!(p.len(), 1, "the same prompt on every call");
    assert_eq!(
        p[0].system[0].to_json(),
        r#"{"type":"text","text":"You are a weather bot."}"#
    );
    assert_eq!(
        p[0].tools[0].to_json(),
        r#"{"name":"get_weather","description":"Weather for a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}}"#
    );
    assert_eq!(p[0].tools.len(), 1);
    assert!(has_unmapped(&out, "tools that are not functions"));
    assert!(has_unmapped(&out, "strict flags"));
}

#[test]
fn uncached_input_excludes_cache_reads_and_writes() {
    let out = import(&fixture("rs_pairs.jsonl"));
    let t = &out.traces[0];
    assert_eq!(split(t, 1), (Some(60), Some(2_000), Some(100), Some(12)));
    // No cache_write_tokens: no write recorded.
    assert_eq!(split(t, 2), (Some(142), Some(2_048), None, Some(9)));
}

#[test]
fn a_cache_write_is_not_billed_twice() {
    let out = import(&fixture("rs_pairs.jsonl"));
    let t = &out.traces[0];
    assert_eq!(split(t, 0), (Some(100), Some(0), Some(2_000), Some(40)));
    assert_eq!(
        t.calls[0].recorded_usage().unwrap().total_input(),
        Some(2_100)
    );
}

#[test]
fn reasoning_tokens_are_part_of_output() {
    let out = import(&fixture("rs_pairs.jsonl"));
    // output_tokens 40 of which 16 reasoning: 40 billed.
    assert_eq!(
        out.traces[0].calls[0]
            .recorded_usage()
            .unwrap()
            .output_tokens,
        Some(40)
    );
}

#[test]
fn a_request_body_maps_developer_text_and_images() {
    let out = import(&fixture("rs_request.json"));
    let t = &out.traces[0];
    assert_eq!(t.model, "gpt-5.6-sol");
    assert_eq!(counts(t), [1]);
    let system: Vec<String> = t.prompts[0].system.iter().map(|b| b.to_json()).collect();
    assert_eq!(
        system,
        [
            r#"{"type":"text","text":"Answer briefly."}"#,
            r#"{"type":"text","text":"Use metric units."}"#
        ]
    );
    assert_eq!(
        t.messages[0].to_json(),
        r#"{"role":"user","content":[{"type":"text","text":"What is in this picture?"},{"type":"image","source":{"type":"url","url":"https://example.com/cat.png"}}]}"#
    );
    assert_eq!(t.prompts[0].tools[0].name(), "lookup");
}

#[test]
fn responses_logs_are_told_apart_from_chat_completions_ones() {
    for name in ["rs_pairs.jsonl", "rs_request.json"] {
        assert_eq!(
            detect_file(&fixture(name)).unwrap(),
            FileKind::Log(InputFormat::OpenaiResponses),
            "{name}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let wrapped = r#"{"request":{"url":"https://api.openai.com/v1/responses","body":{"model":"m","input":"hi"}},"response":{"status_code":200,"body":{"output":[]}}}"#;
    let p = dir.path().join("w.jsonl");
    std::fs::write(&p, wrapped).unwrap();
    assert_eq!(
        detect_file(&p).unwrap(),
        FileKind::Log(InputFormat::OpenaiResponses)
    );
    let chat = r#"{"request":{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]},"response":{"choices":[]}}"#;
    std::fs::write(&p, chat).unwrap();
    assert_eq!(detect_file(&p).unwrap(), FileKind::Log(InputFormat::Openai));
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn a_usage_whose_cache_parts_exceed_its_input_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let ok = r#"{"request":{"model":"m","input":"a"},"response":{"output":[],"usage":{"input_tokens":10,"output_tokens":1}}}"#;
    let bad = r#"{"request":{"model":"m","input":"b"},"response":{"status_code":200,"body":{"output":[],"usage":{"input_tokens":100,"input_tokens_details":{"cached_tokens":64,"cache_write_tokens":64},"output_tokens":1}}}}"#;
    let p = write(dir.path(), "bad.jsonl", &format!("{ok}\n{bad}\n"));
    let err =
        openai_responses::import(std::slice::from_ref(&p), &ImportOptions::default()).unwrap_err();
    match &err {
        ImportError::Invalid { line, message, .. } => {
            assert_eq!(*line, 2);
            assert!(
                message.starts_with("at /response/body/usage: cached (64) and cache-write (64) tokens exceed the input tokens (100)"),
                "{message}"
            );
        }
        other => panic!("{other}"),
    }
    let opts = ImportOptions {
        skip_invalid: true,
        ..ImportOptions::default()
    };
    let out = openai_responses::import(&[p], &opts).unwrap();
    assert_eq!(out.report.skipped_lines, 1);
    assert_eq!(out.traces.len(), 1);
}

#[test]
fn a_bad_input_member_names_its_pointer() {
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "bad.jsonl",
        "{\"request\":{\"model\":\"m\",\"input\":5}}\n",
    );
    let err = openai_responses::import(&[p], &ImportOptions::default()).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("bad.jsonl:1:1: at /request/input: expected a string or a list of items"),
        "{err}"
    );
}

#[test]
fn a_line_that_is_not_json_is_a_located_error_unless_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let ok = r#"{"model":"m","input":"a"}"#;
    let p = write(
        dir.path(),
        "log.jsonl",
        &format!("{ok}\n{{\"model\": tru\n{ok}\n"),
    );
    let err =
        openai_responses::import(std::slice::from_ref(&p), &ImportOptions::default()).unwrap_err();
    assert!(matches!(err, ImportError::Invalid { line: 2, .. }), "{err}");
    let opts = ImportOptions {
        skip_invalid: true,
        ..ImportOptions::default()
    };
    let out = openai_responses::import(&[p], &opts).unwrap();
    assert_eq!(out.report.skipped_lines, 1);
}

// ------------------------------------------------- Chat Completions writes

#[test]
fn chat_completions_cache_writes_are_not_uncached_input() {
    let dir = tempfile::tempdir().unwrap();
    let pair = r#"{"request":{"model":"gpt-5.6-terra","messages":[{"role":"user","content":"hi"}]},"response":{"created":1784023200,"choices":[{"message":{"role":"assistant","content":"hello"}}],"usage":{"prompt_tokens":3000,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":1024,"cache_write_tokens":1900}}}}"#;
    let p = write(dir.path(), "chat.jsonl", &format!("{pair}\n"));
    let out = openai::import(&[p], &ImportOptions::default()).unwrap();
    let u = out.traces[0].calls[0].recorded_usage().unwrap();
    assert_eq!(
        (
            u.input_tokens,
            u.cache_read_input_tokens,
            u.cache_creation_input_tokens
        ),
        (Some(76), Some(1024), Some(1900))
    );
    assert_eq!(u.total_input(), Some(3000), "prompt_tokens, once");
}

#[test]
fn chat_completions_cache_parts_exceeding_the_prompt_are_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let pair = r#"{"request":{"model":"m","messages":[{"role":"user","content":"hi"}]},"response":{"choices":[],"usage":{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":90,"cache_write_tokens":20}}}}"#;
    let p = write(dir.path(), "chat.jsonl", &format!("{pair}\n"));
    let err = openai::import(&[p], &ImportOptions::default()).unwrap_err();
    assert!(
        err.to_string().contains(
            "chat.jsonl:1:1: at /response/usage: cached (90) and cache-write (20) tokens exceed"
        ),
        "{err}"
    );
}

#[test]
fn mutated_responses_logs_never_panic_or_emit_unloadable_traces() {
    let dir = tempfile::tempdir().unwrap();
    let junk = [
        b'{', b'}', b'[', b']', b'"', b',', b':', b'0', b'x', b'\n', b' ',
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    for name in ["rs_pairs.jsonl", "rs_request.json"] {
        let src = std::fs::read(fixture(name)).unwrap();
        let ext = Path::new(name).extension().unwrap().to_str().unwrap();
        for k in 0..150 {
            let mut bytes = src.clone();
            let at = next(bytes.len());
            match k % 3 {
                0 => bytes.truncate(at),
                1 => {
                    bytes.remove(at);
                }
                _ => bytes[at] = junk[next(junk.len())],
            }
            let path = dir.path().join(format!("m{k}.{ext}"));
            std::fs::write(&path, &bytes).unwrap();
            for skip_invalid in [false, true] {
                let opts = ImportOptions {
                    skip_invalid,
                    ..ImportOptions::default()
                };
                if let Err(e) = openai_responses::import(std::slice::from_ref(&path), &opts) {
                    assert!(!e.to_string().contains("importer bug"), "{name} {k}: {e}");
                }
            }
        }
    }
}

#[test]
fn a_list_of_bodies_on_one_line_is_a_call_per_body() {
    let dir = tempfile::tempdir().unwrap();
    let list = r#"[{"model":"m","input":"a"},{"model":"m","input":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}]"#;
    let p = write(dir.path(), "list.json", list);
    let out = import(&p);
    assert_eq!(out.traces.len(), 1, "the second extends the first");
    assert_eq!(counts(&out.traces[0]), [1, 3]);
}

#[test]
fn hosted_tool_items_are_sent_as_text_and_load_without_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let body = r#"{"model":"m","input":[{"role":"user","content":"news?"},{"type":"web_search_call","id":"ws_1","status":"completed","action":{"type":"search","query":"news"}},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Here."}]},{"type":"compaction","encrypted_content":"enc-sum"},{"role":"user","content":"more"}]}"#;
    let p = write(dir.path(), "hosted.jsonl", body);
    let out = import(&p);
    let t = &out.traces[0];
    assert_eq!(
        t.messages[1].to_json(),
        r#"{"role":"assistant","content":[{"type":"text","text":"{\"type\":\"web_search_call\",\"id\":\"ws_1\",\"status\":\"completed\",\"action\":{\"type\":\"search\",\"query\":\"news\"}}"},{"type":"text","text":"Here."}]}"#
    );
    assert_eq!(
        t.messages[2].to_json(),
        r#"{"role":"user","content":[{"type":"text","text":"enc-sum"}]}"#
    );
    assert!(has_unmapped(&out, "web searches, hosted tools"));
}

//! Importers for request logs (Anthropic plain and claude-trace), LangChain
//! message lists and OpenAI Chat Completions, on small hand-made fixtures.

use std::path::{Path, PathBuf};

use tracecost_engine::cache::ProviderKind;
use tracecost_engine::message::{BlockKind, Content, Role};
use tracecost_engine::wire::{BlockRef, Marker, Ttl};
use tracecost_import::{ImportError, ImportOptions, ImportResult};
use tracecost_import::{anthropic, langchain, openai};
use tracecost_trace::{Trace, load_str, to_json};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/import")
        .join(name)
}

type Importer = fn(&[PathBuf], &ImportOptions) -> Result<ImportResult, ImportError>;

/// Imports `name`, and checks every trace serializes, reloads without
/// warnings to an equal trace, and that a second import gives the same bytes.
fn import(importer: Importer, name: &str) -> ImportResult {
    let opts = ImportOptions::default();
    let out = importer(&[fixture(name)], &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
    let again = importer(&[fixture(name)], &opts).unwrap();
    assert_eq!(out.traces.len(), again.traces.len());
    for (t, t2) in out.traces.iter().zip(&again.traces) {
        let json = to_json(t);
        assert_eq!(json, to_json(t2), "deterministic output");
        let loaded = load_str(&json, &t.name).unwrap_or_else(|e| panic!("{e}\n{json}"));
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        // Where a trace was read from is not part of the trace file.
        let mut t = t.clone();
        t.source = None;
        assert_eq!(loaded.traces[0], t, "reloads to the same trace");
    }
    assert_eq!(out.report, again.report);
    out
}

fn marker(at: BlockRef, ttl: Ttl) -> Marker {
    Marker { at, ttl }
}

fn msg(message: usize, block: usize) -> BlockRef {
    BlockRef::Message { message, block }
}

fn counts(t: &Trace) -> Vec<usize> {
    t.calls.iter().map(|c| c.messages).collect()
}

fn has_unmapped(out: &ImportResult, needle: &str) -> bool {
    out.report.unmapped.iter().any(|l| l.contains(needle))
}

// ---------------------------------------------------------------- Anthropic

#[test]
fn anthropic_plain_log_splits_conversations_and_moves_markers() {
    let out = import(anthropic::import, "anthropic_plain.jsonl");
    assert_eq!(out.report.files, 1);
    let names: Vec<&str> = out.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["anthropic_plain", "anthropic_plain-2"]);

    let t = &out.traces[0];
    assert_eq!(t.provider, ProviderKind::Anthropic);
    assert_eq!(t.model, "claude-sonnet-4-5");
    // Lines 1, 2, 4 (error) and 5 (retry) extend one another; line 3 is
    // another conversation.
    assert_eq!(counts(t), [1, 3, 5, 5]);
    // The last request's 5 messages plus the final reply.
    assert_eq!(t.messages.len(), 6);
    assert_eq!(t.messages[5].role(), Role::Assistant);
    // Markers are gone from the history ...
    for m in &t.messages {
        assert!(!m.to_json().contains("cache_control"), "{}", m.to_json());
    }
    assert!(!t.prompts[0].tools[0].to_json().contains("cache_control"));
    // ... and kept per call.
    let one_hour_tool = marker(BlockRef::Tool(0), Ttl::OneHour);
    assert_eq!(
        t.calls[0].markers.as_deref(),
        Some(&[one_hour_tool, marker(msg(0, 0), Ttl::FiveMinutes)][..])
    );
    assert_eq!(
        t.calls[1].markers.as_deref(),
        Some(&[one_hour_tool, marker(msg(2, 0), Ttl::FiveMinutes)][..])
    );
    // A top-level cache_control marks the last block (a string content's
    // block 0).
    assert_eq!(
        t.calls[3].markers.as_deref(),
        Some(&[one_hour_tool, marker(msg(4, 0), Ttl::FiveMinutes)][..])
    );
    // Tool input bytes: key order kept, whitespace between tokens dropped.
    assert_eq!(
        t.messages[1].blocks()[0].tool_input().unwrap().get(),
        r#"{"path":"a.txt","z":1,"a":2}"#
    );
    // String system → one text block; a changed system is a new prompt.
    assert_eq!(t.prompts.len(), 2);
    assert_eq!(
        t.prompt_of(&t.calls[1]).system[0].to_json(),
        r#"{"type":"text","text":"You are terse."}"#
    );
    assert!(matches!(
        t.prompt_of(&t.calls[2]).system[0].kind(),
        BlockKind::Text { text } if &**text == "You are very terse."
    ));
    assert_eq!(t.prompt_of(&t.calls[2]).tools.len(), 1);
    // Usage, with the 5m / 1h split.
    let u = t.calls[0].recorded_usage().unwrap();
    assert_eq!(u.input_tokens, Some(12));
    assert_eq!(u.cache_creation_input_tokens, Some(1500));
    assert_eq!(u.ephemeral_5m_input_tokens, Some(300));
    assert_eq!(u.ephemeral_1h_input_tokens, Some(1200));
    assert_eq!(u.cache_read_input_tokens, Some(0));
    assert_eq!(u.output_tokens, Some(20));
    assert_eq!(
        t.calls[1].recorded_usage().unwrap().cache_read_input_tokens,
        Some(1500)
    );
    // The error exchange is kept without usage, and reported.
    assert!(t.calls[2].usage.is_none());
    assert!(t.calls[3].usage.is_some());
    assert!(
        has_unmapped(&out, "1 × failed exchanges"),
        "{:?}",
        out.report.unmapped
    );

    let t2 = &out.traces[1];
    assert_eq!(t2.model, "claude-haiku-4-5");
    assert_eq!(counts(t2), [1]);
    assert_eq!(t2.messages.len(), 2);
    assert_eq!(t2.calls[0].markers.as_deref(), Some(&[][..]));
}

#[test]
fn anthropic_claude_trace_rebuilds_streamed_responses() {
    let out = import(anthropic::import, "claude_trace.jsonl");
    assert_eq!(out.traces.len(), 1, "count_tokens is not a conversation");
    assert!(has_unmapped(
        &out,
        "1 × requests to endpoints other than /v1/messages"
    ));
    assert!(has_unmapped(&out, "1 × failed exchanges"));
    let t = &out.traces[0];
    assert_eq!(t.name, "claude_trace");
    assert_eq!(t.model, "claude-opus-4-1-20250805");
    assert_eq!(counts(t), [1, 3, 5, 5]);
    let starts: Vec<_> = t.calls.iter().map(|c| c.start_ms).collect();
    assert_eq!(
        starts,
        [
            Some(1_750_000_000_500),
            Some(1_750_000_010_250),
            Some(1_750_000_020_000),
            Some(1_750_000_030_000)
        ]
    );
    // Usage of a stream: message_start, then message_delta's output.
    let u = t.calls[0].recorded_usage().unwrap();
    assert_eq!(
        (
            u.input_tokens,
            u.cache_creation_input_tokens,
            u.cache_read_input_tokens,
            u.output_tokens
        ),
        (Some(4), Some(2000), Some(0), Some(57))
    );
    // message_delta may also update the input totals.
    let u = t.calls[3].recorded_usage().unwrap();
    assert_eq!(
        (u.cache_creation_input_tokens, u.output_tokens),
        (Some(30), Some(88))
    );
    assert!(t.calls[2].usage.is_none(), "529 kept without usage");
    // Markers: the system block on every call, the tool_result on call 2,
    // the 1h text block on the last two.
    let sys = marker(BlockRef::System(0), Ttl::FiveMinutes);
    assert_eq!(t.calls[0].markers.as_deref(), Some(&[sys][..]));
    assert_eq!(
        t.calls[1].markers.as_deref(),
        Some(&[sys, marker(msg(2, 0), Ttl::FiveMinutes)][..])
    );
    assert_eq!(
        t.calls[3].markers.as_deref(),
        Some(&[sys, marker(msg(4, 0), Ttl::OneHour)][..])
    );
    // The final reply was rebuilt from the stream: thinking with its
    // signature, and the tool input as the exact partial_json concatenation.
    assert_eq!(t.messages.len(), 6);
    assert_eq!(
        t.messages[5].to_json(),
        r#"{"role":"assistant","content":[{"type":"thinking","thinking":"Need to cat it.","signature":"sig=="},{"type":"tool_use","id":"toolu_b2","name":"Bash","input":{"command": "cat b.txt", "description": "Show b"}}]}"#
    );
    // Earlier replies are in the history as the next request re-sent them.
    assert_eq!(
        t.messages[1].to_json(),
        r#"{"role":"assistant","content":[{"type":"text","text":"I'll list them."},{"type":"tool_use","id":"toolu_b1","name":"Bash","input":{"command":"ls"}}]}"#
    );
}

#[test]
fn anthropic_streamed_reply_is_rebuilt_from_partial_json() {
    // Line 1 alone: its streamed reply ends the history, so the trace shows
    // exactly what the events rebuilt (the first partial_json is empty).
    let text = std::fs::read_to_string(fixture("claude_trace.jsonl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("first.jsonl");
    std::fs::write(&path, text.lines().next().unwrap()).unwrap();
    let out = anthropic::import(&[path], &ImportOptions::default()).unwrap();
    let t = &out.traces[0];
    assert_eq!(t.name, "first");
    assert_eq!(counts(t), [1]);
    assert_eq!(
        t.messages[1].to_json(),
        r#"{"role":"assistant","content":[{"type":"text","text":"I'll list them."},{"type":"tool_use","id":"toolu_b1","name":"Bash","input":{"command": "ls"}}]}"#
    );
    assert!(out.report.unmapped.is_empty(), "{:?}", out.report.unmapped);
}

#[test]
fn anthropic_invalid_line_names_file_and_line() {
    let path = fixture("anthropic_invalid.jsonl");
    let err =
        anthropic::import(std::slice::from_ref(&path), &ImportOptions::default()).unwrap_err();
    let shown = err.to_string();
    assert!(
        shown.starts_with(&format!("{}:2:", path.display())),
        "{shown}"
    );
    match err {
        ImportError::Invalid { line, column, .. } => {
            assert_eq!(line, 2);
            assert!(column.is_some());
        }
        other => panic!("unexpected {other:?}"),
    }
    let opts = ImportOptions {
        skip_invalid: true,
        ..ImportOptions::default()
    };
    let out = anthropic::import(&[path], &opts).unwrap();
    assert_eq!(out.report.skipped_lines, 1);
    assert_eq!(out.traces.len(), 1);
    assert_eq!(counts(&out.traces[0]), [1, 3]);
}

#[test]
fn missing_and_empty_inputs_are_errors() {
    let missing = fixture("no_such_file.jsonl");
    assert!(matches!(
        anthropic::import(&[missing], &ImportOptions::default()),
        Err(ImportError::Io { .. })
    ));
    assert!(matches!(
        openai::import(&[], &ImportOptions::default()),
        Err(ImportError::Empty(_))
    ));
}

// ---------------------------------------------------------------- LangChain

#[test]
fn langchain_final_list_gives_one_call_per_ai_message() {
    let out = import(langchain::import, "lc_final.json");
    assert_eq!(out.traces.len(), 1);
    let t = &out.traces[0];
    assert_eq!(t.name, "lc_final");
    assert_eq!(t.model, "claude-sonnet-4-5-20250929");
    assert_eq!(t.provider, ProviderKind::Anthropic);
    // system → prompt; human, ai, 2 tools merged, ai, human, ai.
    assert_eq!(t.prompts[0].system.len(), 1);
    assert_eq!(t.messages.len(), 6);
    assert_eq!(counts(t), [1, 3, 5]);
    let ai = &t.messages[1];
    assert_eq!(
        ai.to_json(),
        r#"{"role":"assistant","content":[{"type":"text","text":"Let me read it."},{"type":"tool_use","id":"toolu_01","name":"read_file","input":{"path":"notes.txt","max_lines":50}},{"type":"tool_use","id":"toolu_02","name":"stat","input":{"path":"notes.txt"}}]}"#
    );
    let results = &t.messages[2];
    assert_eq!(results.role(), Role::User);
    assert_eq!(
        results.to_json(),
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01","content":"buy milk"},{"type":"tool_result","tool_use_id":"toolu_02","content":[{"type":"text","text":"12 bytes"}],"is_error":true}]}"#
    );
    assert!(matches!(t.messages[3].content(), Content::Text(s) if &**s == "It says: buy milk."));
    // Raw Anthropic usage first, else usage_metadata (whose input is the
    // total).
    let u0 = t.calls[0].recorded_usage().unwrap();
    assert_eq!(
        (
            u0.input_tokens,
            u0.cache_creation_input_tokens,
            u0.output_tokens
        ),
        (Some(20), Some(1000), Some(40))
    );
    let u1 = t.calls[1].recorded_usage().unwrap();
    assert_eq!(
        (
            u1.input_tokens,
            u1.cache_read_input_tokens,
            u1.cache_creation_input_tokens,
            u1.output_tokens
        ),
        (Some(40), Some(1000), Some(60), Some(8))
    );
    assert!(t.calls[2].usage.is_none());
    assert!(t.calls.iter().all(|c| c.markers.is_none()));
}

#[test]
fn langchain_per_call_lists_give_one_call_per_list() {
    let out = import(langchain::import, "lc_per_call.json");
    assert_eq!(out.traces.len(), 2, "the 4th list does not extend the 3rd");
    let t = &out.traces[0];
    assert_eq!(t.name, "lc_per_call");
    assert_eq!(counts(t), [1, 3, 5]);
    assert_eq!(t.messages.len(), 5);
    assert_eq!(t.model, "claude-haiku-4-5");
    // A call's usage comes from the reply the next list holds.
    let u0 = t.calls[0].recorded_usage().unwrap();
    assert_eq!(
        (
            u0.input_tokens,
            u0.cache_creation_input_tokens,
            u0.output_tokens
        ),
        (Some(20), Some(480), Some(30))
    );
    let u1 = t.calls[1].recorded_usage().unwrap();
    assert_eq!(
        (
            u1.input_tokens,
            u1.cache_read_input_tokens,
            u1.output_tokens
        ),
        (Some(10), Some(480), Some(9))
    );
    assert!(t.calls[2].usage.is_none(), "no list holds the last reply");
    // Markers in a per-call list belong to that call.
    assert_eq!(t.calls[0].markers, None);
    assert_eq!(
        t.calls[2].markers.as_deref(),
        Some(&[marker(msg(4, 0), Ttl::FiveMinutes)][..])
    );
    assert!(!t.messages[4].to_json().contains("cache_control"));
    assert_eq!(
        t.messages[1].blocks()[0].tool_input().unwrap().get(),
        r#"{"pattern":"TODO","path":"src"}"#
    );
    let t2 = &out.traces[1];
    assert_eq!(t2.name, "lc_per_call-2");
    assert_eq!(counts(t2), [1]);
    assert!(matches!(
        t2.prompts[0].system[0].kind(),
        BlockKind::Text { text } if &**text == "Other agent."
    ));
}

#[test]
fn langchain_jsonl_lists_ending_with_a_reply_are_states_after_calls() {
    let out = import(langchain::import, "lc_states.jsonl");
    let t = &out.traces[0];
    assert_eq!(out.traces.len(), 1);
    assert_eq!(counts(t), [1, 3]);
    assert_eq!(t.messages.len(), 4);
    assert_eq!(t.provider, ProviderKind::OpenAi, "gpt-4o model");
    assert_eq!(t.calls[0].recorded_usage().unwrap().input_tokens, Some(10));
    let u1 = t.calls[1].recorded_usage().unwrap();
    assert_eq!((u1.input_tokens, u1.output_tokens), (Some(20), Some(1)));
}

#[test]
fn langchain_invalid_line_names_file_and_line() {
    let path = fixture("lc_bad.jsonl");
    let err =
        langchain::import(std::slice::from_ref(&path), &ImportOptions::default()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with(&format!("{}:2:", path.display())),
        "{err}"
    );
    let opts = ImportOptions {
        skip_invalid: true,
        ..ImportOptions::default()
    };
    let out = langchain::import(&[path], &opts).unwrap();
    assert_eq!(out.report.skipped_lines, 1);
    assert_eq!(counts(&out.traces[0]), [1, 3]);
}

// ------------------------------------------------------------------ OpenAI

#[test]
fn openai_request_body_maps_tool_calls_and_tools() {
    let out = import(openai::import, "oa_request.json");
    assert_eq!(out.traces.len(), 1);
    let t = &out.traces[0];
    assert_eq!(t.provider, ProviderKind::OpenAi);
    assert_eq!(t.model, "gpt-4o");
    assert_eq!(counts(t), [3]);
    assert_eq!(t.messages.len(), 3);
    assert_eq!(
        t.prompts[0].system[0].to_json(),
        r#"{"type":"text","text":"You are a weather bot."}"#
    );
    assert_eq!(
        t.prompts[0].tools[0].to_json(),
        r#"{"name":"get_weather","description":"Weather for a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}"#
    );
    // The arguments' JSON text, bytes kept.
    let a = &t.messages[1];
    assert_eq!(
        a.blocks()[0].tool_input().unwrap().get(),
        r#"{"city": "Paris", "unit": "c"}"#
    );
    assert_eq!(
        a.blocks()[1].tool_input().unwrap().get(),
        r#"{"city":"Rome"}"#
    );
    assert_eq!(
        t.messages[2].to_json(),
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":"18C"},{"type":"tool_result","tool_use_id":"call_2","content":"24C"}]}"#
    );
    assert!(out.report.unmapped.is_empty(), "{:?}", out.report.unmapped);
}

#[test]
fn openai_pairs_extend_take_usage_and_wrap_bad_arguments() {
    let out = import(openai::import, "oa_pairs.jsonl");
    assert_eq!(out.traces.len(), 2);
    let t = &out.traces[0];
    assert_eq!(t.name, "oa_pairs");
    assert_eq!(counts(t), [1, 3]);
    assert_eq!(t.messages.len(), 4, "3 sent + the final reply");
    assert!(matches!(t.messages[3].content(), Content::Text(s) if &**s == "Nothing found."));
    let u = t.calls[0].recorded_usage().unwrap();
    assert_eq!(
        (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
        (Some(476), Some(1024), Some(20))
    );
    assert_eq!(u.cache_creation_input_tokens, None);
    assert_eq!(t.calls[0].start_ms, Some(1_750_000_000_000), "from created");
    assert!(t.calls.iter().all(|c| c.markers.is_none()));
    assert_eq!(t.prompts[0].tools[0].name(), "search");
    assert_eq!(
        t.messages[1].blocks()[0].tool_input().unwrap().get(),
        r#"{"_raw":"{not json"}"#
    );
    assert!(
        has_unmapped(&out, "tool call arguments that are not a JSON object"),
        "{:?}",
        out.report.unmapped
    );
    let t2 = &out.traces[1];
    assert_eq!(t2.name, "oa_pairs-2");
    assert_eq!(counts(t2), [1]);
    assert!(t2.calls[0].usage.is_none());
}

#[test]
fn openai_bare_list_gives_one_call_per_assistant_message() {
    let out = import(openai::import, "oa_list.json");
    let t = &out.traces[0];
    assert_eq!(counts(t), [1, 3]);
    assert_eq!(t.messages.len(), 4);
    assert_eq!(t.model, "unknown");
    assert_eq!(
        t.messages[2].to_json(),
        r#"{"role":"user","content":[{"type":"text","text":"and 3+3?"}]}"#
    );
    let opts = ImportOptions {
        default_model: Some("gpt-4.1".into()),
        ..ImportOptions::default()
    };
    let out = openai::import(&[fixture("oa_list.json")], &opts).unwrap();
    assert_eq!(out.traces[0].model, "gpt-4.1");
}

#[test]
fn several_files_are_read_in_path_order_with_unique_names() {
    let opts = ImportOptions::default();
    let out = openai::import(&[fixture("oa_pairs.jsonl"), fixture("oa_list.json")], &opts).unwrap();
    let names: Vec<&str> = out.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["oa_list", "oa_pairs", "oa_pairs-2"]);
    assert_eq!(out.report.files, 2);
}

// ------------------------------------------------------------- robustness

/// Truncated, cut and corrupted copies of every fixture: importers may
/// fail, but never panic and never emit a trace that does not load (their
/// own reload check reports that as an "importer bug").
#[test]
fn mutated_inputs_never_panic_or_emit_unloadable_traces() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(Importer, &str); 10] = [
        (anthropic::import, "anthropic_plain.jsonl"),
        (anthropic::import, "claude_trace.jsonl"),
        (anthropic::import, "anthropic_invalid.jsonl"),
        (langchain::import, "lc_final.json"),
        (langchain::import, "lc_per_call.json"),
        (langchain::import, "lc_states.jsonl"),
        (openai::import, "oa_request.json"),
        (openai::import, "oa_pairs.jsonl"),
        (openai::import, "oa_list.json"),
        (openai::import, "lc_final.json"),
    ];
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
    for (importer, name) in cases {
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
                if let Err(e) = importer(std::slice::from_ref(&path), &opts) {
                    assert!(
                        !e.to_string().contains("importer bug"),
                        "{name} mutation {k}: {e}"
                    );
                }
            }
        }
    }
}

#[test]
fn odd_but_valid_records_still_give_loadable_traces() {
    let dir = tempfile::tempdir().unwrap();
    let cc = r#""cache_control":{"type":"ephemeral"}"#;
    let anth = format!(
        concat!(
            r#"{{"request":{{"model":"m","system":[{{"type":"text","text":"s",{cc}}},{{"type":"image","source":{{}}}}],"#,
            r#""tools":[{{"name":"t","input_schema":{{}},{cc}}},{{"name":"t","input_schema":{{}}}}],"#,
            r#""messages":[{{"role":"user","content":[{{"type":"text","text":"a",{cc}}},{{"type":"text","text":"b",{cc}}},"#,
            r#"{{"type":"tool_result","tool_use_id":"nobody","content":[{{"type":"text","text":"x",{cc}}}]}}]}}]}},"response":null}}"#,
            "\n"
        ),
        cc = cc
    );
    let path = dir.path().join("odd.jsonl");
    std::fs::write(&path, anth).unwrap();
    let out = anthropic::import(std::slice::from_ref(&path), &ImportOptions::default()).unwrap();
    let t = &out.traces[0];
    let mut unsourced = t.clone();
    unsourced.source = None;
    assert_eq!(load_str(&to_json(t), "odd").unwrap().traces[0], unsourced);
    assert_eq!(t.prompts[0].system.len(), 1);
    assert_eq!(t.prompts[0].tools.len(), 1);
    // tool, system, 3 message blocks (one moved up from tool_result content)
    // = 5 markers: the last is dropped.
    assert_eq!(t.calls[0].markers.as_ref().unwrap().len(), 4);
    assert!(matches!(
        t.messages[0].blocks()[2].kind(),
        BlockKind::Text { .. }
    ));
    for needle in [
        "system blocks that are not text",
        "tool definitions repeating a name",
        "beyond the API's 4",
        "inside tool_result content",
        "tool results answering no earlier tool call",
        "without a recorded response",
    ] {
        assert!(
            has_unmapped(&out, needle),
            "{needle}: {:?}",
            out.report.unmapped
        );
    }

    let lc = r#"[{"type":"ai","data":{"content":"first"}},{"type":"human","data":{"content":"q"}},
        {"type":"tool","data":{"content":"r","tool_call_id":"ghost"}},{"type":"weird","data":{}},
        {"type":"system","data":{"content":"late"}},
        {"type":"ai","data":{"content":"","tool_calls":[{"name":"f","args":"not json","id":null}]}}]"#;
    let path = dir.path().join("odd.json");
    std::fs::write(&path, lc).unwrap();
    let out = langchain::import(std::slice::from_ref(&path), &ImportOptions::default()).unwrap();
    let t = &out.traces[0];
    let mut unsourced = t.clone();
    unsourced.source = None;
    assert_eq!(load_str(&to_json(t), "odd").unwrap().traces[0], unsourced);
    // ai, human, tool→user, late system→user, ai: calls before the 2nd ai.
    assert_eq!(t.messages.len(), 5);
    assert_eq!(counts(t), [4]);
    assert_eq!(
        t.messages[4].blocks()[0].tool_input().unwrap().get(),
        r#"{"_raw":"not json"}"#
    );
    for needle in [
        "ai messages with nothing before them",
        "messages of an unknown type",
        "system messages after the first turn",
        "tool calls without an id",
        "tool call args that are not a JSON object",
        "tool results answering no earlier tool call",
    ] {
        assert!(
            has_unmapped(&out, needle),
            "{needle}: {:?}",
            out.report.unmapped
        );
    }
}

#[test]
fn langchain_anthropic_write_split_is_billed_once_streamed_or_not() {
    // Made by langchain-anthropic against a stub server (the script beside
    // the fixtures): a streamed reply keeps its usage only in
    // usage_metadata, with cache_creation zeroed beside the 5m/1h split; a
    // reply not streamed keeps Anthropic's usage in response_metadata too.
    // Both must give what the server reported.
    for file in ["lc_stream_cache_split.json", "lc_invoke_cache_split.json"] {
        let out = import(langchain::import, file);
        assert_eq!(out.traces.len(), 1, "{file}");
        let t = &out.traces[0];
        assert_eq!(t.calls.len(), 2, "{file}");
        let got: Vec<_> = t
            .calls
            .iter()
            .map(|c| {
                let u = c.recorded_usage().unwrap();
                (
                    u.input_tokens,
                    u.cache_creation_input_tokens,
                    u.ephemeral_5m_input_tokens,
                    u.ephemeral_1h_input_tokens,
                    u.cache_read_input_tokens,
                    u.output_tokens,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (
                    Some(12),
                    Some(2100),
                    Some(100),
                    Some(2000),
                    Some(0),
                    Some(40)
                ),
                (Some(9), Some(700), Some(700), Some(0), Some(2100), Some(12)),
            ],
            "{file}"
        );
    }
}

//! The Codex rollout importer, on a hand-made rollout in Codex's format
//! (`tests/fixtures/codex/home`, laid out as `~/.codex`) and on small
//! files written by the tests, one per mapping rule and per error.

use std::path::{Path, PathBuf};

use tracecost_engine::cache::ProviderKind;
use tracecost_engine::message::{BlockKind, Role};
use tracecost_import::detect::{self, FileKind};
use tracecost_import::inputs::{InputLoader, InputOptions};
use tracecost_import::{ImportError, ImportOptions, ImportResult, InputFormat, codex};
use tracecost_trace::{RecordedUsage, Trace, load_str, to_json};

const SESSION: &str = "0198c0de-5a1e-7000-8000-00000000c0de";

fn home() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex/home")
}

fn rollout() -> PathBuf {
    home().join(format!(
        "sessions/2026/07/14/rollout-2026-07-14T10-00-00-{SESSION}.jsonl"
    ))
}

/// Imports `inputs`, checking every trace reloads to itself without
/// warnings and a second import gives the same bytes.
fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    let out = codex::import(inputs, opts)?;
    let again = codex::import(inputs, opts).unwrap();
    for (t, t2) in out.traces.iter().zip(&again.traces) {
        let json = to_json(t);
        assert_eq!(json, to_json(t2), "deterministic output");
        let loaded = load_str(&json, &t.name).unwrap_or_else(|e| panic!("{e}\n{json}"));
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let mut t = t.clone();
        t.source = None;
        assert_eq!(loaded.traces[0], t, "reloads to the same trace");
    }
    Ok(out)
}

fn fixture() -> ImportResult {
    import(&[home()], &ImportOptions::default()).unwrap()
}

fn has_unmapped(out: &ImportResult, needle: &str) -> bool {
    out.report.unmapped.iter().any(|l| l.contains(needle))
}

fn usage(t: &Trace, call: usize) -> RecordedUsage {
    t.calls[call].recorded_usage().unwrap()
}

/// (uncached, read, written, output)
fn split(u: RecordedUsage) -> (Option<u64>, Option<u64>, Option<u64>, Option<u64>) {
    (
        u.input_tokens,
        u.cache_read_input_tokens,
        u.cache_creation_input_tokens,
        u.output_tokens,
    )
}

// ------------------------------------------------------------ the fixture

#[test]
fn a_codex_home_gives_one_trace_per_rollout_and_a_part_per_compaction() {
    let out = fixture();
    let names: Vec<&str> = out.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, [SESSION.to_owned(), format!("{SESSION}.part2")]);
    let t = &out.traces[0];
    assert_eq!(t.provider, ProviderKind::OpenAi);
    assert_eq!(t.project.as_deref(), Some("/home/dev/demo"));
    assert_eq!(
        t.session.as_deref(),
        Some(SESSION),
        "parts share the session"
    );
    assert_eq!(out.traces[1].session.as_deref(), Some(SESSION));
    assert_eq!(
        t.source.as_deref(),
        Some(rollout().display().to_string().as_str())
    );
    assert_eq!(out.report.files, 1);
}

#[test]
fn each_token_count_with_new_usage_is_one_call_sending_the_history_before_its_response() {
    let out = fixture();
    let t = &out.traces[0];
    // 4 calls: the re-emitted count after the first tool output is none.
    let counts: Vec<usize> = t.calls.iter().map(|c| c.messages).collect();
    assert_eq!(counts, [2, 4, 6, 8]);
    // AGENTS.md, the request; the response; the tool output; …
    assert_eq!(t.messages[0].role(), Role::User);
    assert_eq!(t.messages[2].role(), Role::Assistant);
    let kinds: Vec<&str> = t.messages[2]
        .blocks()
        .iter()
        .map(|b| b.block_type())
        .collect();
    assert_eq!(kinds, ["thinking", "tool_use"], "one assistant message");
    assert_eq!(
        t.messages[3].to_json(),
        r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_T1a","content":"test tests::adds ... FAILED\nexpected 4, found 5\n"}]}"#
    );
    // The history holds everything, the last tool output included.
    assert_eq!(t.messages.len(), 10);
}

#[test]
fn instructions_and_leading_developer_messages_are_the_system_prompt() {
    let t = &fixture().traces[0];
    assert_eq!(t.prompts.len(), 1);
    let system: Vec<String> = t.prompts[0].system.iter().map(|b| b.to_json()).collect();
    assert_eq!(
        system,
        [
            r#"{"type":"text","text":"You are Codex, a coding agent running in a terminal."}"#,
            r#"{"type":"text","text":"<permissions instructions>Sandbox: workspace-write. Network: off.</permissions instructions>"}"#,
        ]
    );
    assert!(t.prompts[0].tools.is_empty(), "rollouts record no tools");
    assert!(t.hidden_prefix_tokens > 0, "the tools' size is estimated");
}

#[test]
fn uncached_input_is_input_less_cache_reads_and_writes() {
    let t = &fixture().traces[0];
    assert_eq!(
        split(usage(t, 1)),
        (Some(300), Some(11_000), Some(1_200), Some(180))
    );
    assert_eq!(
        split(usage(t, 2)),
        (Some(700), Some(12_000), Some(100), Some(30))
    );
}

#[test]
fn a_cache_write_is_not_billed_twice() {
    let t = &fixture().traces[0];
    let u = usage(t, 0);
    // input_tokens 12,000 of which 11,000 were written: 1,000 uncached.
    assert_eq!(split(u), (Some(1_000), Some(0), Some(11_000), Some(150)));
    assert_eq!(u.total_input(), Some(12_000), "input_tokens, once");
}

#[test]
fn a_repeated_token_count_is_not_counted_twice() {
    let out = fixture();
    let t = &out.traces[0];
    assert_eq!(t.calls.len(), 4);
    // Every call's input summed is the session's running total at its
    // last count (37,300 + 13,200), nothing counted twice.
    let input: u64 = t
        .calls
        .iter()
        .map(|c| c.recorded_usage().unwrap().total_input().unwrap())
        .sum();
    assert_eq!(input, 50_500);
    assert!(
        has_unmapped(
            &out,
            "1 × token_count events repeating the previous total_token_usage"
        ),
        "{:?}",
        out.report.unmapped
    );
    assert!(has_unmapped(
        &out,
        "1 × token_count events without usage (info: null"
    ));
}

#[test]
fn reasoning_is_part_of_output_not_added_to_it() {
    let t = &fixture().traces[0];
    // output_tokens 150 with reasoning_output_tokens 64: 150 billed.
    assert_eq!(usage(t, 0).output_tokens, Some(150));
}

#[test]
fn each_call_keeps_the_model_of_its_turn() {
    let out = fixture();
    let t = &out.traces[0];
    assert_eq!(t.model, "gpt-5.6-terra");
    let models: Vec<Option<&str>> = t.calls.iter().map(|c| c.model.as_deref()).collect();
    assert_eq!(models, [None, None, None, Some("gpt-5.6-sol")]);
    assert_eq!(out.traces[1].model, "gpt-5.6-sol");
}

#[test]
fn calls_start_at_their_latest_input_or_turn_context() {
    let t = &fixture().traces[0];
    let ms = |s: &str| {
        // 2026-07-14T10:mm:ss.000Z
        let (m, s) = s.split_once(':').unwrap();
        1_784_023_200_000 + (m.parse::<u64>().unwrap() * 60 + s.parse::<u64>().unwrap()) * 1000
    };
    let starts: Vec<u64> = t.calls.iter().map(|c| c.start_ms.unwrap()).collect();
    // turn_context, the re-emitted count's turn_context, the tool output,
    // the second turn's turn_context.
    assert_eq!(starts, [ms("00:02"), ms("00:09"), ms("00:13"), ms("02:01")]);
}

#[test]
fn tool_calls_map_to_tool_use_blocks() {
    let t = &fixture().traces[0];
    let b = &t.messages[2].blocks()[1];
    assert!(matches!(b.kind(), BlockKind::ToolUse { name, .. } if &**name == "exec_command"));
    assert_eq!(
        b.tool_input().unwrap().get(),
        r#"{"cmd":"cargo test","workdir":"/home/dev/demo"}"#,
        "the arguments' bytes"
    );
    // A free-form tool's text is its input's one member.
    let patch = &t.messages[4].blocks()[0];
    assert_eq!(
        patch.tool_input().unwrap().get(),
        r#"{"input":"*** Begin Patch\n*** Update File: src/lib.rs\n-    a + b + 1\n+    a + b\n*** End Patch\n"}"#
    );
    // Reasoning: the summary as text, the encrypted content as signature.
    assert_eq!(
        t.messages[2].blocks()[0].to_json(),
        r#"{"type":"thinking","thinking":"Running the tests first","signature":"gAAAAABp-made-up-encrypted-reasoning-1"}"#
    );
}

#[test]
fn after_a_compaction_the_next_part_sends_the_replacement_history() {
    let out = fixture();
    let p = &out.traces[1];
    assert_eq!(p.calls.len(), 1);
    assert_eq!(p.calls[0].messages, 3, "two user messages and the summary");
    assert_eq!(p.messages.len(), 4, "and the response after it");
    assert_eq!(p.messages[2].role(), Role::Assistant);
    assert_eq!(p.messages[3].role(), Role::Assistant);
    // No cache_write_input_tokens member: no write recorded.
    assert_eq!(split(usage(p, 0)), (Some(3_000), Some(0), None, Some(12)));
}

// ------------------------------------------------------------- detection

#[test]
fn rollouts_and_codex_folders_are_told_apart_by_content() {
    assert_eq!(
        detect::detect_file(&rollout()).unwrap(),
        FileKind::Log(InputFormat::Codex)
    );
    assert!(detect::is_codex_folder(&home()));
    assert!(detect::is_codex_folder(&home().join("sessions")));
    assert!(detect::is_codex_folder(&home().join("sessions/2026/07")));
    assert!(!detect::is_codex_folder(&home().join("..")));
    assert!(!detect::is_claude_code_folder(&home()));
    // A folder of inputs holding a Codex home: its traces, found by content.
    for input in [home(), home().join("sessions/2026"), rollout()] {
        let loaded = InputLoader::new(std::slice::from_ref(&input), &InputOptions::default())
            .load()
            .unwrap();
        assert_eq!(loaded.traces.len(), 2, "{}", input.display());
        assert_eq!(loaded.traces[0].name, SESSION);
    }
}

// -------------------------------------------------- small files, one rule

fn line(ts: &str, kind: &str, payload: &str) -> String {
    format!(r#"{{"timestamp":"2026-07-14T11:{ts}.000Z","type":"{kind}","payload":{payload}}}"#)
}

fn count(total: &str, last: &str) -> String {
    line(
        "00:09",
        "event_msg",
        &format!(
            r#"{{"type":"token_count","info":{{"total_token_usage":{total},"last_token_usage":{last},"model_context_window":258400}},"rate_limits":null}}"#
        ),
    )
}

const META: &str = r#"{"timestamp":"2026-07-14T11:00:00.000Z","type":"session_meta","payload":{"id":"s-1","timestamp":"2026-07-14T11:00:00.000Z","cwd":"/w","instructions":"Be brief."}}"#;

fn user(ts: &str, text: &str) -> String {
    line(
        ts,
        "response_item",
        &format!(
            r#"{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{text}"}}]}}"#
        ),
    )
}

fn reply(ts: &str, text: &str) -> String {
    line(
        ts,
        "response_item",
        &format!(
            r#"{{"type":"message","role":"assistant","content":[{{"type":"output_text","text":"{text}"}}]}}"#
        ),
    )
}

fn turn(model: &str) -> String {
    line(
        "00:01",
        "turn_context",
        &format!(r#"{{"model":"{model}"}}"#),
    )
}

fn usage_json(input: u64, cached: u64, written: u64, output: u64) -> String {
    format!(
        r#"{{"input_tokens":{input},"cached_input_tokens":{cached},"cache_write_input_tokens":{written},"output_tokens":{output},"reasoning_output_tokens":0,"total_tokens":{}}}"#,
        input + output
    )
}

fn write(dir: &Path, lines: &[String], end: &str) -> PathBuf {
    let path = dir.join("rollout-2026-07-14T11-00-00-s-1.jsonl");
    std::fs::write(&path, format!("{}{end}", lines.join("\n"))).unwrap();
    path
}

fn one(lines: &[String]) -> Result<ImportResult, ImportError> {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), lines, "\n");
    import(&[path], &ImportOptions::default())
}

#[test]
fn usage_without_last_token_usage_is_the_difference_of_the_totals() {
    let lines = [
        META.to_owned(),
        turn("gpt-5.6-luna"),
        user("00:02", "a"),
        reply("00:03", "b"),
        count(&usage_json(1000, 0, 900, 10), &usage_json(1000, 0, 900, 10)),
        user("00:04", "c"),
        reply("00:05", "d"),
        count(&usage_json(2100, 900, 1000, 25), "null"),
    ];
    let out = one(&lines).unwrap();
    let t = &out.traces[0];
    assert_eq!(t.name, "s-1");
    assert_eq!(
        t.prompts[0].system[0].to_json(),
        r#"{"type":"text","text":"Be brief."}"#
    );
    assert_eq!(
        split(usage(t, 1)),
        (Some(100), Some(900), Some(100), Some(15))
    );
}

#[test]
fn a_file_without_a_session_meta_is_named_by_its_stem() {
    let lines = [
        user("00:02", "a"),
        reply("00:03", "b"),
        count("null", &usage_json(10, 0, 0, 1)),
    ];
    let out = one(&lines).unwrap();
    assert_eq!(out.traces[0].name, "rollout-2026-07-14T11-00-00-s-1");
    assert_eq!(out.traces[0].model, "unknown");
}

#[test]
fn a_fork_does_not_bill_its_parents_copied_calls() {
    let fork = r#"{"timestamp":"2026-07-14T11:00:00.000Z","type":"session_meta","payload":{"id":"s-2","forked_from_id":"s-1","timestamp":"2026-07-14T11:00:00.000Z","cwd":"/w"}}"#;
    let at = |ts: &str, total: &str| {
        line(
            ts,
            "event_msg",
            &format!(
                r#"{{"type":"token_count","info":{{"total_token_usage":{total},"last_token_usage":{total}}}}}"#
            ),
        )
    };
    let lines = [
        fork.to_owned(),
        META.to_owned(),
        user("00:00", "a"),
        reply("00:00", "b"),
        // The parent's count, copied at the fork's creation.
        at("00:00", &usage_json(500, 0, 0, 5)),
        user("00:30", "c"),
        reply("00:31", "d"),
        at("00:31", &usage_json(1200, 500, 0, 9)),
    ];
    let out = one(&lines).unwrap();
    let t = &out.traces[0];
    assert_eq!(t.name, "s-2", "the fork's own id, not its parent's");
    assert_eq!(t.calls.len(), 1);
    assert_eq!(t.calls[0].messages, 3, "the copied history is sent");
    assert!(has_unmapped(&out, "a fork copied from its parent"));
    assert!(has_unmapped(&out, "session_meta lines after the first"));
}

#[test]
fn a_response_before_any_request_item_follows_a_stand_in() {
    let lines = [
        META.to_owned(),
        reply("00:03", "b"),
        count("null", &usage_json(10, 0, 0, 1)),
    ];
    let out = one(&lines).unwrap();
    let t = &out.traces[0];
    assert_eq!(t.calls[0].messages, 1);
    assert!(t.messages[0].to_json().contains(codex::UNRECORDED_REQUEST));
}

#[test]
fn older_rollouts_without_the_envelope_give_their_history() {
    let lines = [
        r#"{"id":"old-1","timestamp":"2025-05-01T10:00:00Z","instructions":"Old instructions"}"#.to_owned(),
        r#"{"record_type":"state"}"#.to_owned(),
        r#"{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}"#.to_owned(),
        r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hello"}]}"#.to_owned(),
        // No usage was recorded then: nothing is a call.
    ];
    let err = one(&lines).unwrap_err();
    assert!(matches!(err, ImportError::Empty(_)), "{err}");
}

// ----------------------------------------------------------------- errors

fn invalid_at(err: &ImportError) -> (usize, String) {
    match err {
        ImportError::Invalid { line, message, .. } => (*line, message.clone()),
        other => panic!("not a located error: {other}"),
    }
}

#[test]
fn a_count_whose_cache_parts_exceed_its_input_is_a_located_error() {
    let lines = [
        META.to_owned(),
        user("00:02", "a"),
        reply("00:03", "b"),
        count("null", &usage_json(100, 80, 40, 1)),
    ];
    let err = one(&lines).unwrap_err();
    let (line, msg) = invalid_at(&err);
    assert_eq!(line, 4);
    assert!(
        msg.starts_with("at /payload/info/last_token_usage: cached (80) and cache-write (40) tokens exceed the input tokens (100)"),
        "{msg}"
    );
    assert!(
        err.to_string()
            .contains("rollout-2026-07-14T11-00-00-s-1.jsonl:4:1: "),
        "{err}"
    );
    // Skipped on request: the response's items join the next call.
    let dir = tempfile::tempdir().unwrap();
    let mut more = lines.to_vec();
    more.push(user("00:05", "c"));
    more.push(reply("00:06", "d"));
    more.push(count("null", &usage_json(50, 0, 0, 2)));
    let path = write(dir.path(), &more, "\n");
    let opts = ImportOptions {
        skip_invalid: true,
        ..ImportOptions::default()
    };
    let out = import(&[path], &opts).unwrap();
    assert_eq!(out.report.skipped_lines, 1);
    assert_eq!(out.traces[0].calls.len(), 1);
    assert_eq!(out.traces[0].calls[0].messages, 3);
}

#[test]
fn a_count_that_is_not_a_non_negative_integer_names_its_pointer() {
    let bad = r#"{"input_tokens":-5,"cached_input_tokens":0,"output_tokens":1}"#;
    let lines = [META.to_owned(), user("00:02", "a"), count("null", bad)];
    let (line, msg) = invalid_at(&one(&lines).unwrap_err());
    assert_eq!(line, 3);
    assert_eq!(
        msg,
        "at /payload/info/last_token_usage/input_tokens: expected a non-negative integer, found -5"
    );
}

#[test]
fn a_payload_of_the_wrong_shape_names_its_pointer() {
    let lines = [META.to_owned(), line("00:02", "event_msg", "[1]")];
    let (at, msg) = invalid_at(&one(&lines).unwrap_err());
    assert_eq!(
        (at, msg.as_str()),
        (2, "at /payload: expected an event (an object)")
    );
    let lines = [META.to_owned(), line("00:02", "response_item", "\"text\"")];
    let (_, msg) = invalid_at(&one(&lines).unwrap_err());
    assert_eq!(msg, "at /payload: expected an item (an object)");
}

#[test]
fn a_line_that_is_not_json_is_a_located_error_unless_skipped() {
    let lines = [
        META.to_owned(),
        user("00:02", "a"),
        "{\"timestamp\": tru".to_owned(),
        reply("00:03", "b"),
        count("null", &usage_json(10, 0, 0, 1)),
    ];
    let err = one(&lines).unwrap_err();
    let (line, _) = invalid_at(&err);
    assert_eq!(line, 3);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), &lines, "\n");
    let opts = ImportOptions {
        skip_invalid: true,
        ..ImportOptions::default()
    };
    let out = import(&[path], &opts).unwrap();
    assert_eq!(out.report.skipped_lines, 1);
    assert_eq!(out.traces[0].calls.len(), 1);
}

#[test]
fn an_unfinished_last_line_is_a_session_being_written() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        META.to_owned(),
        user("00:02", "a"),
        reply("00:03", "b"),
        count("null", &usage_json(10, 0, 0, 1)),
        "{\"timestamp\":\"2026-07-14T11:00:10.000Z\",\"type\":\"response_it".to_owned(),
    ];
    let path = write(dir.path(), &lines, "");
    let out = import(&[path], &ImportOptions::default()).unwrap();
    assert_eq!(out.traces[0].calls.len(), 1);
    assert!(has_unmapped(&out, "unfinished last lines"));
}

#[test]
fn a_folder_without_rollouts_is_an_error_that_says_so() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.jsonl"), "{}\n").unwrap();
    let err = codex::import(&[dir.path().to_path_buf()], &ImportOptions::default()).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("no Codex rollouts (rollout-*.jsonl) found in"),
        "{err}"
    );
}

#[test]
fn mutated_rollouts_never_panic_or_emit_unloadable_traces() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read(rollout()).unwrap();
    let junk = [
        b'{', b'}', b'[', b']', b'"', b',', b':', b'0', b'-', b'\n', b' ',
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n.max(1) as u64) as usize
    };
    for k in 0..200 {
        let mut bytes = src.clone();
        let at = next(bytes.len());
        match k % 3 {
            0 => bytes.truncate(at),
            1 => {
                bytes.remove(at);
            }
            _ => bytes[at] = junk[next(junk.len())],
        }
        let path = dir.path().join(format!("rollout-m{k}.jsonl"));
        std::fs::write(&path, &bytes).unwrap();
        for skip_invalid in [false, true] {
            let opts = ImportOptions {
                skip_invalid,
                ..ImportOptions::default()
            };
            if let Err(e) = codex::import(std::slice::from_ref(&path), &opts) {
                assert!(!e.to_string().contains("importer bug"), "mutation {k}: {e}");
                assert!(!e.to_string().contains('\n'), "one line: {e}");
            }
        }
    }
}

#[test]
fn a_model_changed_by_thread_settings_applies_to_the_calls_after_it() {
    let settings = line(
        "00:04",
        "event_msg",
        r#"{"type":"thread_settings_applied","thread_settings":{"model":"gpt-5.6-luna","reasoning_effort":"low"}}"#,
    );
    let mirrored = line(
        "00:01",
        "turn_context",
        r#"{"collaboration_mode":{"mode":"default","settings":{"model":"gpt-5.6-terra"}}}"#,
    );
    let lines = [
        META.to_owned(),
        mirrored,
        user("00:02", "a"),
        reply("00:03", "b"),
        count("null", &usage_json(10, 0, 0, 1)),
        settings,
        user("00:05", "c"),
        reply("00:06", "d"),
        count("null", &usage_json(20, 0, 0, 1)),
    ];
    let t = &one(&lines).unwrap().traces[0];
    assert_eq!(t.model, "gpt-5.6-terra");
    assert_eq!(t.calls[1].model.as_deref(), Some("gpt-5.6-luna"));
}

// ------------------------------------- Codex 0.140+: counts after outputs

fn call(ts: &str, id: &str) -> String {
    line(
        ts,
        "response_item",
        &format!(
            r#"{{"type":"function_call","name":"exec_command","arguments":"{{\"cmd\":\"ls\"}}","call_id":"{id}"}}"#
        ),
    )
}

fn output(ts: &str, id: &str) -> String {
    line(
        ts,
        "response_item",
        &format!(
            r#"{{"type":"function_call_output","call_id":"{id}","output":"src\nCargo.toml\n"}}"#
        ),
    )
}

fn count_at(ts: &str, total: &str) -> String {
    line(
        ts,
        "event_msg",
        &format!(
            r#"{{"type":"token_count","info":{{"total_token_usage":{total},"last_token_usage":{total},"model_context_window":258400}},"rate_limits":null}}"#
        ),
    )
}

fn reasoning(ts: &str) -> String {
    line(
        ts,
        "response_item",
        r#"{"type":"reasoning","summary":[],"content":null,"encrypted_content":"gAAAA-made-up"}"#,
    )
}

/// ms since the epoch of `2026-07-14T11:mm:ss.000Z`.
fn at(mm_ss: &str) -> u64 {
    let (m, s) = mm_ss.split_once(':').unwrap();
    1_784_026_800_000 + (m.parse::<u64>().unwrap() * 60 + s.parse::<u64>().unwrap()) * 1000
}

#[test]
fn a_count_written_after_the_tool_outputs_bills_the_response_before_them() {
    // Codex 0.142: reasoning, two tool calls, their outputs, then the
    // response's count; the next response, its output, its count.
    let lines = [
        META.to_owned(),
        turn("gpt-5.5"),
        user("00:02", "list it"),
        reasoning("00:04"),
        call("00:05", "c1"),
        call("00:05", "c2"),
        output("00:06", "c1"),
        output("00:07", "c2"),
        count_at("00:07", &usage_json(2000, 0, 0, 50)),
        reasoning("00:09"),
        call("00:10", "c3"),
        output("00:12", "c3"),
        count_at("00:12", &usage_json(4500, 1920, 0, 40)),
        reply("00:15", "done"),
        count_at("00:15", &usage_json(7000, 4480, 0, 10)),
    ];
    let out = one(&lines).unwrap();
    let t = &out.traces[0];
    let sent: Vec<usize> = t.calls.iter().map(|c| c.messages).collect();
    // The first request is the user message alone, not the tool outputs
    // written before its count; the second sends them.
    assert_eq!(sent, [1, 3, 5]);
    assert_eq!(t.messages[1].role(), Role::Assistant);
    assert_eq!(t.messages[2].role(), Role::User, "the tool outputs");
    let starts: Vec<u64> = t.calls.iter().map(|c| c.start_ms.unwrap()).collect();
    // Each request starts at its latest input before the response: the
    // turn_context, then the outputs the response answered.
    assert_eq!(starts, [at("00:02"), at("00:07"), at("00:12")]);
}

#[test]
fn an_interrupted_response_without_a_count_is_history_of_the_next_call() {
    // A response interrupted before its usage was written, a user message,
    // then a response with its count: the count is the latest response's.
    let lines = [
        META.to_owned(),
        turn("gpt-5.5"),
        user("00:02", "a"),
        reasoning("00:03"),
        user("00:20", "<turn_aborted>"),
        user("00:21", "b"),
        reasoning("00:23"),
        reply("00:24", "c"),
        count_at("00:24", &usage_json(3000, 0, 0, 20)),
    ];
    let t = &one(&lines).unwrap().traces[0];
    assert_eq!(t.calls.len(), 1);
    assert_eq!(
        t.calls[0].messages, 4,
        "a, the interrupted reasoning, the two user messages"
    );
    assert_eq!(t.calls[0].start_ms, Some(at("00:21")));
}

#[test]
fn model_items_of_a_replacement_history_are_not_a_response() {
    // A compaction whose history ends with the model's message, then a
    // user message and the count of a response with no item recorded.
    let compacted = line(
        "00:10",
        "compacted",
        r#"{"message":"","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"a"}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"summary"}]}]}"#,
    );
    let lines = [
        META.to_owned(),
        turn("gpt-5.5"),
        user("00:02", "a"),
        reply("00:03", "b"),
        count_at("00:03", &usage_json(2000, 0, 0, 20)),
        compacted,
        user("00:12", "c"),
        count_at("00:14", &usage_json(5000, 0, 0, 40)),
    ];
    let out = one(&lines).unwrap();
    let part2 = &out.traces[1];
    assert_eq!(
        part2.calls[0].messages, 3,
        "the whole replacement history and c"
    );
}

// ------------------------------------------- reasoning and the turns it spans

fn usage_reasoning(input: u64, cached: u64, output: u64, reasoning: u64) -> String {
    format!(
        r#"{{"input_tokens":{input},"cached_input_tokens":{cached},"output_tokens":{output},"reasoning_output_tokens":{reasoning},"total_tokens":{}}}"#,
        input + output
    )
}

fn developer(ts: &str, text: &str) -> String {
    line(
        ts,
        "response_item",
        &format!(
            r#"{{"type":"message","role":"developer","content":[{{"type":"input_text","text":"{text}"}}]}}"#
        ),
    )
}

#[test]
fn each_call_records_its_reasoning_tokens() {
    let lines = [
        META.to_owned(),
        turn("gpt-5.5"),
        user("00:02", "list it"),
        reasoning("00:04"),
        call("00:05", "c1"),
        output("00:06", "c1"),
        count_at("00:07", &usage_reasoning(2000, 0, 50, 30)),
    ];
    let out = one(&lines).unwrap();
    assert_eq!(usage(&out.traces[0], 0).reasoning_tokens, Some(30));
    assert_eq!(usage(&out.traces[0], 0).output_tokens, Some(50));
}

#[test]
fn developer_messages_and_input_within_a_turn_are_marked_as_such() {
    // A turn: the user's message opens it, the model answers with a tool
    // call; an approval (a developer message) and input the user typed
    // while the model worked join it; the next turn_context starts another
    // turn, which the next user message opens.
    let lines = [
        META.to_owned(),
        turn("gpt-5.5"),
        user("00:02", "fix it"),
        reasoning("00:03"),
        call("00:04", "c1"),
        output("00:05", "c1"),
        developer("00:06", "Approved command prefix saved"),
        user("00:07", "also the docs"),
        count_at("00:08", &usage_reasoning(2000, 0, 50, 30)),
        reasoning("00:09"),
        reply("00:10", "done"),
        count_at("00:11", &usage_reasoning(4000, 1920, 60, 20)),
        turn("gpt-5.5"),
        user("00:20", "thanks"),
        reply("00:21", "ok"),
        count_at("00:22", &usage_reasoning(6000, 3968, 10, 0)),
    ];
    let out = one(&lines).unwrap();
    let t = &out.traces[0];
    let member = |i: usize, k: &str| t.messages[i].fields().get(k).map(|v| v.get().to_owned());
    // user, assistant, tool outputs, developer, user (within), assistant, user
    let roles: Vec<Role> = t.messages.iter().map(|m| m.role()).collect();
    assert_eq!(
        roles,
        [
            Role::User,
            Role::Assistant,
            Role::User,
            Role::User,
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant
        ]
    );
    assert_eq!(member(0, "within_turn"), None, "the turn's own message");
    assert_eq!(member(3, "source_role").as_deref(), Some("\"developer\""));
    assert_eq!(member(4, "within_turn").as_deref(), Some("true"));
    assert_eq!(member(6, "within_turn"), None, "a new turn's message");
}

#[test]
fn rollouts_that_record_no_turns_mark_no_input_as_within_one() {
    let lines = [
        META.to_owned(),
        user("00:02", "a"),
        reply("00:03", "b"),
        count("null", &usage_json(100, 0, 0, 1)),
        user("00:05", "c"),
        reply("00:06", "d"),
        count("null", &usage_json(200, 0, 0, 2)),
    ];
    let out = one(&lines).unwrap();
    assert!(
        out.traces[0]
            .messages
            .iter()
            .all(|m| m.fields().get("within_turn").is_none())
    );
}

#[test]
fn counts_follow_the_one_token_count_rule() {
    // A count written as a string holding an integer, or as an integral
    // float, is that integer (as every reader reads it); null is no count.
    let counts = r#"{"input_tokens":"2000","cached_input_tokens":1024.0,"output_tokens":50,"reasoning_output_tokens":null}"#;
    let lines = [META.to_owned(), user("00:02", "a"), count("null", counts)];
    let t = &one(&lines).unwrap().traces[0];
    assert_eq!(split(usage(t, 0)), (Some(976), Some(1024), None, Some(50)));
    assert_eq!(usage(t, 0).reasoning_tokens, None);
    // Anything else is an error at the line, naming the count.
    for (bad, found) in [("2.5", "2.5"), ("\"12k\"", "\"12k\""), ("true", "true")] {
        let counts =
            format!(r#"{{"input_tokens":10,"cached_input_tokens":0,"output_tokens":{bad}}}"#);
        let lines = [META.to_owned(), user("00:02", "a"), count("null", &counts)];
        let (line, msg) = invalid_at(&one(&lines).unwrap_err());
        assert_eq!(line, 3);
        assert_eq!(
            msg,
            format!(
                "at /payload/info/last_token_usage/output_tokens: expected a non-negative integer, found {found}"
            )
        );
    }
}

//! The Codex usage scan on a hand-made Codex home
//! (`tests/fixtures/codex/usage-home`: two sessions, one also archived),
//! its figures worked out by hand from the rollouts' counts.

use std::path::{Path, PathBuf};

use tracecost_import::codex::{self, CodexTokens, CodexUsageScan};

fn home() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex/usage-home")
}

fn scan() -> CodexUsageScan {
    codex::scan_usage(&[home()]).unwrap()
}

const A: &str = "2026/08/01/rollout-2026-08-01T09-00-00-0198d000-0000-7000-8000-00000000000a";
const B: &str = "2026/08/02/rollout-2026-08-02T14-30-00-0198d000-0000-7000-8000-00000000000b";

#[test]
fn sessions_are_rollout_paths_below_sessions_sorted() {
    let s = scan();
    let ids: Vec<&str> = s.sessions.iter().map(|s| s.session_id.as_str()).collect();
    assert_eq!(ids, [A, B]);
    assert_eq!(s.sessions[0].directory(), "2026/08/01");
    assert_eq!(
        s.sessions[0].codex_id.as_deref(),
        Some("0198d000-0000-7000-8000-00000000000a")
    );
    assert_eq!(s.sessions[0].cwd.as_deref(), Some("/home/dev/app"));
}

#[test]
fn a_repeated_count_is_dropped_and_the_rest_summed() {
    let s = scan();
    // Session A: four token_counts with usage, one repeating the previous
    // total_token_usage (after a turn_context): three calls. Session B:
    // two. The archived copy of B: one, not counted.
    assert_eq!((s.rows, s.duplicate_rows, s.unbilled_rows), (7, 1, 1));
    let calls: usize = s.sessions[0].models.iter().map(|m| m.calls.len()).sum();
    assert_eq!(calls, 3);
    // Its calls sum to its last total_token_usage (27,000 in, 900 out).
    let t = s.sessions[0].totals();
    assert_eq!((t.input, t.output, t.total), (27_000, 900, 27_900));
}

#[test]
fn each_call_counts_under_the_model_of_its_turn() {
    let s = scan();
    let a = &s.sessions[0];
    assert_eq!(a.models_seen, ["gpt-5.3-codex", "gpt-4.1"]);
    // Sorted by id: gpt-4.1, then gpt-5.3-codex.
    assert_eq!(a.models[0].model, "gpt-4.1");
    assert_eq!(
        a.models[0].tokens,
        CodexTokens {
            input: 5_000,
            cached: 4_096,
            written: 0,
            output: 100,
            reasoning: 0,
            total: 5_100,
        }
    );
    // 10,000 + 12,000 in, 9,984 of them cached; 500 + 300 out, 200 + 100
    // of it reasoning.
    assert_eq!(
        a.models[1].tokens,
        CodexTokens {
            input: 22_000,
            cached: 9_984,
            written: 0,
            output: 800,
            reasoning: 300,
            total: 22_800,
        }
    );
    assert_eq!(a.models[1].tokens.uncached(), 12_016);
    assert!(!a.models[1].is_fallback);
}

#[test]
fn a_session_naming_no_model_falls_back_to_gpt_5() {
    let b = &scan().sessions[1];
    assert_eq!(b.models.len(), 1);
    assert_eq!(b.models[0].model, codex::usage::FALLBACK_MODEL);
    assert!(b.models[0].is_fallback);
    // 2,000 in, 50 out; then a count with only total_token_usage: the
    // difference, 3,000 in (1,024 cached), 70 out (10 reasoning).
    assert_eq!(
        b.totals(),
        CodexTokens {
            input: 5_000,
            cached: 1_024,
            written: 0,
            output: 120,
            reasoning: 10,
            total: 5_120,
        }
    );
}

#[test]
fn the_active_copy_wins_over_the_archived_one_and_damaged_lines_are_skipped() {
    let s = scan();
    assert_eq!(s.files, 3);
    assert_eq!(s.skipped_lines, 1);
    assert!(s.sessions[1].file.starts_with(home().join("sessions")));
    // Activity: the counted calls' token_count times.
    assert_eq!(s.sessions[1].first_ms, Some(1_785_681_005_000));
    assert_eq!(s.sessions[1].last_ms, Some(1_785_681_124_000));
}

#[test]
fn cached_and_written_tokens_stay_inside_the_input() {
    // Newer Codex records cache writes, part of input_tokens.
    let dir = tempfile::tempdir().unwrap();
    let day = dir.path().join("sessions/2026/09/01");
    std::fs::create_dir_all(&day).unwrap();
    let count = r#"{"timestamp":"2026-09-01T08:00:05.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":9000,"cached_input_tokens":2048,"cache_write_input_tokens":6000,"output_tokens":40,"reasoning_output_tokens":8,"total_tokens":9040},"last_token_usage":{"input_tokens":9000,"cached_input_tokens":2048,"cache_write_input_tokens":6000,"output_tokens":40,"reasoning_output_tokens":8,"total_tokens":9040}}}}"#;
    let turn = r#"{"timestamp":"2026-09-01T08:00:00.000Z","type":"turn_context","payload":{"model":"gpt-5.4"}}"#;
    std::fs::write(day.join("rollout-w.jsonl"), format!("{turn}\n{count}\n")).unwrap();
    let s = codex::scan_usage(&[dir.path().to_path_buf()]).unwrap();
    let t = s.sessions[0].totals();
    assert_eq!((t.input, t.cached, t.written), (9_000, 2_048, 6_000));
    // ccusage's input: everything not read from the cache, writes included.
    assert_eq!(t.uncached(), 6_952);
    assert_eq!(s.sessions[0].session_id, "2026/09/01/rollout-w");
}

//! The Claude Code importer and usage scan, on small synthetic transcripts
//! (tests/fixtures/claude-code, a Claude config root holding `projects/`).

use std::path::{Path, PathBuf};

use tracecost_engine::message::{BlockKind, Content, Role, ToolResultContent};
use tracecost_import::claude_code::{TokenSums, import, scan_usage};
use tracecost_import::{ImportError, ImportOptions};
use tracecost_trace::{Trace, load_str, to_json};

const MAIN: &str = "11111111-1111-4111-8111-111111111111";
const RESUMED: &str = "44444444-4444-4444-8444-444444444444";
const SONNET: &str = "claude-sonnet-4-5-20250929";
const HAIKU: &str = "claude-haiku-4-5-20251001";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude-code")
}

fn ms(s: &str) -> Option<u64> {
    // 2025-06-01T10:00:00Z is 1_748_772_000_000 ms; fixtures stay that day
    // or the next.
    let (day, rest) = s.split_at(10);
    let base = match day {
        "2025-06-01" => 1_748_736_000_000u64,
        "2025-06-02" => 1_748_822_400_000u64,
        other => panic!("fixture day {other}"),
    };
    let h: u64 = rest[1..3].parse().unwrap();
    let m: u64 = rest[4..6].parse().unwrap();
    let sec: f64 = rest[7..rest.len() - 1].parse().unwrap();
    Some(base + h * 3_600_000 + m * 60_000 + (sec * 1000.0).round() as u64)
}

fn trace<'a>(traces: &'a [Trace], name: &str) -> &'a Trace {
    traces
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no trace {name}"))
}

fn roundtrip(t: &Trace) {
    let json = to_json(t);
    let loaded = load_str(&json, "imported.json").unwrap_or_else(|e| panic!("{e}\n{json}"));
    assert_eq!(loaded.traces.len(), 1);
    // Where a trace was read from is not part of the trace file.
    let mut t = t.clone();
    t.source = None;
    assert_eq!(loaded.traces[0], t, "reloads identically");
}

#[test]
fn imports_every_session_and_subagent_in_order() {
    let out = import(&[root()], &ImportOptions::default()).unwrap();
    let names: Vec<&str> = out.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            MAIN.to_owned(),
            format!("{MAIN}.sidechain-1"),
            format!("{MAIN}.agent-a0000000000000001"),
            // agent-b0000000000000002 only replays the parent's response
            // msg_A1: `usage` counts it once, so it is no call again.
            format!("{MAIN}.agent-5ca1ab1e"),
            RESUMED.to_owned(),
        ]
    );
    // 7 files: one empty, one holding only a summary line.
    assert_eq!(out.report.files, 7);
    assert_eq!(out.report.skipped_files, 2);
    // The truncated line of the main session.
    assert_eq!(out.report.skipped_lines, 1);
    for t in &out.traces {
        assert!(
            t.description.starts_with("Claude Code "),
            "{}",
            t.description
        );
        assert_eq!(t.prompts.len(), 1);
        assert!(t.prompts[0].system.is_empty() && t.prompts[0].tools.is_empty());
        assert!(t.calls.iter().all(|c| c.markers.is_none()));
        roundtrip(t);
    }
    let u = &out.report.unmapped;
    let has = |s: &str| u.iter().any(|l| l.starts_with(s));
    assert!(has("4 × toolUseResult side copies"), "{u:?}");
    // The inline sidechain line is a lone answer whose request is not in
    // the file: it follows a stand-in, as its own trace.
    assert!(!u.iter().any(|l| l.contains("sidechain")), "{u:?}");
    assert!(has("1 × responses with no message before them"), "{u:?}");
    assert!(has("1 × tool_result blocks opening a file"), "{u:?}");
    assert!(has("2 × synthetic or API-error assistant lines"), "{u:?}");
    assert!(
        !has("1 × tool_result blocks whose tool_use is not earlier"),
        "{u:?}"
    );
    assert!(
        has("3 × usage rows repeated on the lines of one response"),
        "{u:?}"
    );
    assert!(has("1 × files with no call to import"), "{u:?}");
    assert!(has("2 × `summary` lines"), "{u:?}");
    assert!(has("1 × `system` lines"), "{u:?}");
    assert!(has("1 × `file-history-snapshot` lines"), "{u:?}");
    let shown = out.report.to_string();
    assert!(shown.starts_with("7 file(s) read, 2 skipped, 1 invalid line(s) skipped"));
}

#[test]
fn main_session_rebuilds_the_api_history() {
    let dir = root().join("projects/-home-dev-demo");
    let out = import(
        &[dir.join(format!("{MAIN}.jsonl"))],
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(out.traces.len(), 2, "the session and its inline sidechain");
    let t = trace(&out.traces, MAIN);
    assert_eq!(t.model, SONNET, "the most common model is the default");
    assert_eq!(t.provider.as_str(), "anthropic");

    let roles: Vec<Role> = t.messages.iter().map(|m| m.role()).collect();
    use Role::{Assistant as A, User as U};
    assert_eq!(roles, [U, A, U, A, U, A, U, A], "the history alternates");

    // The isMeta caveat and the prompt merge into one user message.
    assert_eq!(t.messages[0].blocks().len(), 2);

    // Three per-block lines make one assistant message, thinking kept,
    // tool input bytes kept.
    let kinds: Vec<&str> = t.messages[1]
        .blocks()
        .iter()
        .map(|b| b.block_type())
        .collect();
    assert_eq!(kinds, ["thinking", "text", "tool_use"]);
    assert_eq!(
        t.messages[1].blocks()[2].tool_input().unwrap().get(),
        r#"{"command":"ls","description":"List files"}"#
    );

    // The tool output is the tool_result block, not toolUseResult.
    let json = to_json(t);
    assert!(!json.contains("side copy, never sent"));
    match t.messages[2].blocks()[0].kind() {
        BlockKind::ToolResult {
            content: ToolResultContent::Text(text),
            ..
        } => assert_eq!(&**text, "notes.txt\nsrc"),
        other => panic!("{other:?}"),
    }

    // Parallel tool calls with interleaved results: one assistant message
    // with both tool_uses, one user message with both results.
    let ids: Vec<String> = t.messages[3]
        .blocks()
        .iter()
        .map(|b| match b.kind() {
            BlockKind::ToolUse { id, .. } => id.to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(ids, ["toolu_A2", "toolu_A3"]);
    assert_eq!(t.messages[4].blocks().len(), 2);
    assert!(matches!(t.messages[6].content(), Content::Text(s) if &**s == "thanks"));

    // Calls: one per response; synthetic and API-error lines are neither
    // calls nor history; the sidechain line is skipped.
    let counts: Vec<usize> = t.calls.iter().map(|c| c.messages).collect();
    assert_eq!(counts, [1, 3, 5, 7]);
    let starts: Vec<Option<u64>> = t.calls.iter().map(|c| c.start_ms).collect();
    assert_eq!(
        starts,
        [
            ms("2025-06-01T10:00:01.000Z"),
            // The tool_result line, not the later system line.
            ms("2025-06-01T10:00:03.000Z"),
            ms("2025-06-01T10:00:06.000Z"),
            // The user's line, not the synthetic lines after it.
            ms("2025-06-01T10:10:00.000Z"),
        ]
    );
    let models: Vec<Option<&str>> = t.calls.iter().map(|c| c.model.as_deref()).collect();
    assert_eq!(models, [None, Some(HAIKU), None, None]);

    // Usage: once per response, the row with the larger total.
    let u0 = t.calls[0].recorded_usage().unwrap();
    assert_eq!(u0.output_tokens, Some(48));
    assert_eq!(u0.total_input(), Some(2004));
    let u1 = t.calls[1].recorded_usage().unwrap();
    assert_eq!(u1.output_tokens, Some(45));
    assert_eq!(u1.ephemeral_1h_input_tokens, Some(50));
    assert_eq!(u1.ephemeral_5m_input_tokens, Some(0));
    assert_eq!(u1.cache_read_input_tokens, Some(2000));

    // Hidden prefix: first call's total input minus ceil(chars / 4) of the
    // visible message.
    let visible = t.messages[0].to_json().chars().count() as u64;
    assert_eq!(t.hidden_prefix_tokens, 2004 - visible.div_ceil(4));
    roundtrip(t);
}

#[test]
fn subagents_and_resumed_sessions() {
    let out = import(&[root().join("projects")], &ImportOptions::default()).unwrap();
    let sub = trace(&out.traces, &format!("{MAIN}.agent-a0000000000000001"));
    assert_eq!(sub.model, HAIKU);
    assert_eq!(sub.messages.len(), 4);
    assert_eq!(
        sub.calls.iter().map(|c| c.messages).collect::<Vec<_>>(),
        [1, 3]
    );
    assert!(
        sub.description
            .contains("subagent agent-a0000000000000001 of session")
    );
    let warm = trace(&out.traces, &format!("{MAIN}.agent-5ca1ab1e"));
    assert_eq!(warm.calls.len(), 1);
    assert_eq!(
        warm.hidden_prefix_tokens,
        3800 - 9,
        "3800 minus the 34-char Warmup message / 4"
    );

    // The resumed session starts with a result whose tool_use is in another
    // file: sent as text, so the trace is valid and its first call kept.
    let res = trace(&out.traces, RESUMED);
    assert_eq!(res.messages.len(), 2);
    let first = res.messages[0].to_json();
    assert!(!first.contains("tool_result"), "{first}");
    assert!(
        first.contains("output of a call made before the resume"),
        "{first}"
    );
    assert!(first.contains("Continue, please."), "{first}");
    assert_eq!(res.calls[0].messages, 1);
    assert_eq!(res.calls[0].start_ms, ms("2025-06-02T08:00:01.000Z"));
    roundtrip(res);
}

#[test]
fn a_project_dir_and_missing_inputs() {
    let out = import(
        &[root().join("projects/-home-dev-resumed")],
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(out.traces.len(), 1);
    assert_eq!(out.report.files, 1);

    let empty = root().join("projects/-home-dev-demo/22222222-2222-4222-8222-222222222222.jsonl");
    let out = import(&[empty], &ImportOptions::default()).unwrap();
    assert!(out.traces.is_empty());
    assert_eq!((out.report.files, out.report.skipped_files), (1, 1));

    let err = import(&[root().join("nope")], &ImportOptions::default()).unwrap_err();
    assert!(matches!(err, ImportError::Io { .. }), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let err = import(&[dir.path().to_path_buf()], &ImportOptions::default()).unwrap_err();
    assert!(matches!(err, ImportError::Empty(_)), "{err}");
}

#[test]
fn usage_scan_counts_like_ccusage() {
    let scan = scan_usage(&[root()]).unwrap();
    assert_eq!(scan.files, 7);
    assert_eq!(scan.empty_files, 1);
    assert_eq!(scan.skipped_lines, 1, "the truncated usage line");
    // Synthetic and API-error rows carry no billable tokens.
    assert_eq!(scan.unbilled_rows, 2);
    // 8 rows in the main session (3 + 2 lines of two responses), 2 + 1 in
    // the subagents, 1 in the warmup agent and 1 in the resumed session;
    // 3 repeats and 1 sidechain replay of a parent message are dropped.
    assert_eq!(scan.rows, 13);
    assert_eq!(scan.duplicate_rows, 4);

    let keys: Vec<(&str, &str)> = scan
        .sessions
        .iter()
        .map(|s| (s.project_path.as_str(), s.session_id.as_str()))
        .collect();
    // The warmup agent's log (`agent-5ca1ab1e.jsonl`, beside its session's)
    // counts in the session its rows name, as `report` counts it (ccusage
    // lists it as a session of its own).
    assert_eq!(
        keys,
        [("-home-dev-demo", MAIN), ("-home-dev-resumed", RESUMED)]
    );
    let main = &scan.sessions[0];
    let by: Vec<(&str, usize, TokenSums)> = main
        .models
        .iter()
        .map(|m| (m.model.as_str(), m.responses.len(), m.tokens))
        .collect();
    assert_eq!(
        by,
        [
            (
                HAIKU,
                5,
                TokenSums {
                    // The warmup agent's one response: 3,800 in, 40 out.
                    input: 23 + 3800,
                    output: 94 + 40,
                    cache_creation_5m: 940,
                    cache_creation_1h: 50,
                    cache_read: 2900,
                }
            ),
            (
                SONNET,
                3,
                TokenSums {
                    input: 15,
                    output: 69,
                    cache_creation_5m: 2150,
                    cache_creation_1h: 0,
                    cache_read: 4220,
                }
            ),
        ]
    );
    // Each response's own tokens are kept beside the sums, for pricing.
    for m in &main.models {
        let mut sum = TokenSums::default();
        m.responses.iter().for_each(|r| sum.add(r));
        assert_eq!(sum, m.tokens, "{}", m.model);
    }
    // The session's first counted row is the warmup agent's, which ran
    // before the main conversation's first response.
    assert_eq!(main.first_ms, ms("2025-06-01T09:59:01.000Z"));
    // The kept row of the main conversation's first response is its last
    // line (largest total), not the lines streamed before it.
    let times: Vec<u64> = main
        .models
        .iter()
        .flat_map(|m| m.response_ms.iter().copied())
        .collect();
    assert!(times.contains(&ms("2025-06-01T10:00:02.600Z").unwrap()));
    for streamed in ["2025-06-01T10:00:02.000Z", "2025-06-01T10:00:02.300Z"] {
        assert!(!times.contains(&ms(streamed).unwrap()), "{streamed}");
    }
    assert_eq!(main.last_ms, ms("2025-06-01T10:10:02.000Z"));
    let totals = scan.totals();
    assert_eq!(
        totals,
        TokenSums {
            input: 23 + 15 + 3800 + 5,
            output: 94 + 69 + 40 + 9,
            cache_creation_5m: 940 + 2150 + 300,
            cache_creation_1h: 50,
            cache_read: 2900 + 4220,
        }
    );
    assert_eq!(scan.totals_by_model().len(), 2);
}

/// Every transcript runs Claude Code's markers at the TTL each call
/// recorded: one whose usage does not split its writes by TTL resolves to
/// five minutes, and shares its session's status quo (and so its cache).
#[test]
fn the_status_quo_takes_its_ttl_from_the_record() {
    let ttl_root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude-code-ttl");
    for root in [ttl_root, root()] {
        let traces = import(&[root], &ImportOptions::default()).unwrap().traces;
        assert!(!traces.is_empty());
        for t in &traces {
            assert_eq!(
                t.status_quo.as_deref(),
                Some("recorded+claude-code:ttl=recorded"),
                "{}",
                t.name
            );
        }
    }
}

/// Claude Code now and then writes a record without its newline, so two
/// records share a line: each is read, as if the newline were there, and
/// counted in a note; the import never stops on it.
#[test]
fn records_joined_on_one_line_are_each_read() {
    let src = root().join("projects/-home-dev-resumed");
    let file = format!("{RESUMED}.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(src.join(&file))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert!(lines.len() >= 3);
    for (glue, at) in [("", 0), (" ", 1), ("", 1)] {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("projects/-home-dev-resumed");
        std::fs::create_dir_all(&project).unwrap();
        let mut joined = lines.clone();
        let next = joined.remove(at + 1);
        joined[at] = format!("{}{glue}{next}", joined[at]);
        std::fs::write(project.join(&file), joined.join("\n") + "\n").unwrap();
        let whole = import(std::slice::from_ref(&src), &ImportOptions::default()).unwrap();
        let out = import(&[project], &ImportOptions::default()).unwrap();
        assert_eq!(out.report.skipped_lines, 0, "{}", out.report);
        assert_eq!(out.traces.len(), whole.traces.len());
        for (a, b) in out.traces.iter().zip(&whole.traces) {
            // The account names the config root, here a temporary one.
            let (mut a, mut b) = (a.clone(), b.clone());
            (a.account, b.account) = (None, None);
            assert_eq!(
                to_json(&a),
                to_json(&b),
                "the same trace as with the newline"
            );
        }
        assert!(
            out.report
                .unmapped
                .iter()
                .any(|l| l.starts_with("1 × lines holding two or more records")),
            "{:?}",
            out.report.unmapped
        );
    }
}

/// Claude Code 1.0.x wrote its Task subagents' turns into the session's
/// own file as `isSidechain` lines, two subagents interleaved: each is
/// followed by `parentUuid` into a trace of its own, of the session, and
/// every recorded call is imported once (the tokens `usage` counts).
#[test]
fn inline_sidechains_become_traces_of_their_session() {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/claude-code-sidechain");
    let out = import(std::slice::from_ref(&root), &ImportOptions::default()).unwrap();
    const SESSION: &str = "77777777-7777-4777-8777-777777777777";
    let names: Vec<&str> = out.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            SESSION.to_owned(),
            format!("{SESSION}.sidechain-1"),
            format!("{SESSION}.sidechain-2"),
        ]
    );
    let main = &out.traces[0];
    assert_eq!(main.session, None);
    use Role::{Assistant as A, User as U};
    let roles = |t: &Trace| t.messages.iter().map(|m| m.role()).collect::<Vec<_>>();
    assert_eq!(roles(main), [U, A, U, A]);
    for (t, needle) in out.traces[1..]
        .iter()
        .zip(["services/api", "services/worker"])
    {
        assert_eq!(t.session.as_deref(), Some(SESSION));
        assert_eq!(roles(t), [U, A, U, A], "{}", t.name);
        assert_eq!(t.calls.len(), 2, "{}", t.name);
        assert!(t.messages[0].to_json().contains(needle), "{}", t.name);
        assert!(t.description.contains("subagent"), "{}", t.description);
        roundtrip(t);
    }
    // Every usage row the scan counts is one call's, once.
    let scan = scan_usage(std::slice::from_ref(&root)).unwrap();
    let scanned: u64 = scan
        .sessions
        .iter()
        .map(|s| {
            let t: TokenSums = s.totals();
            t.cache_creation_5m + t.cache_creation_1h
        })
        .sum();
    let imported: u64 = out
        .traces
        .iter()
        .flat_map(|t| &t.calls)
        .filter_map(|c| c.recorded_usage()?.cache_creation_input_tokens)
        .sum();
    assert_eq!(imported, scanned);
    assert_eq!(out.traces.iter().map(|t| t.calls.len()).sum::<usize>(), 6);
}

/// A resumed session's file repeats the lines of the one it continues (the
/// same `message.id` and `requestId`): each response is one call, in the
/// first file by path order, as `usage` counts it once; a file holding
/// only repeated responses adds no trace.
#[test]
fn a_response_in_two_files_is_one_call() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects/-home-dev-resumed-twice");
    std::fs::create_dir_all(&project).unwrap();
    let user = |sid: &str, uuid: &str, ts: &str, text: &str| {
        format!(
            r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","sessionId":"{sid}","version":"1.0.85","type":"user","message":{{"role":"user","content":"{text}"}},"uuid":"{uuid}","timestamp":"{ts}"}}"#
        )
    };
    let asst = |sid: &str, uuid: &str, ts: &str, id: &str, text: &str| {
        format!(
            r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","sessionId":"{sid}","version":"1.0.85","type":"assistant","message":{{"id":"{id}","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","content":[{{"type":"text","text":"{text}"}}],"usage":{{"input_tokens":4,"cache_creation_input_tokens":2000,"cache_read_input_tokens":0,"output_tokens":30}}}},"requestId":"req_{id}","uuid":"{uuid}","timestamp":"{ts}"}}"#
        )
    };
    let first = [
        user("a", "u1", "2025-06-01T10:00:00.000Z", "Plan the migration."),
        asst("a", "u2", "2025-06-01T10:00:05.000Z", "msg_1", "Step one."),
        user("a", "u3", "2025-06-01T10:01:00.000Z", "And then?"),
        asst("a", "u4", "2025-06-01T10:01:05.000Z", "msg_2", "Step two."),
    ];
    // The resumed file repeats both responses, then goes on.
    let mut resumed: Vec<String> = first
        .iter()
        .map(|l| l.replace(r#""sessionId":"a""#, r#""sessionId":"b""#))
        .collect();
    resumed.push(user("b", "u5", "2025-06-02T09:00:00.000Z", "Go on."));
    resumed.push(asst(
        "b",
        "u6",
        "2025-06-02T09:00:05.000Z",
        "msg_3",
        "Step three.",
    ));
    std::fs::write(project.join("aaaaaaaa.jsonl"), first.join("\n")).unwrap();
    std::fs::write(project.join("bbbbbbbb.jsonl"), resumed.join("\n")).unwrap();
    // A copy holding only repeated responses.
    std::fs::write(project.join("cccccccc.jsonl"), first[..2].join("\n")).unwrap();
    let root = dir.path().to_path_buf();
    let out = import(std::slice::from_ref(&root), &ImportOptions::default()).unwrap();
    let calls: Vec<(&str, usize)> = out
        .traces
        .iter()
        .map(|t| (t.name.as_str(), t.calls.len()))
        .collect();
    assert_eq!(calls, [("aaaaaaaa", 2), ("bbbbbbbb", 1)]);
    // The resumed trace keeps the whole history; its one call sends it.
    let b = &out.traces[1];
    assert_eq!(b.messages.len(), 6);
    assert_eq!(b.calls[0].messages, 5);
    let u = &out.report.unmapped;
    let has = |s: &str| u.iter().any(|l| l.starts_with(s));
    assert!(
        has("3 × responses already imported from an earlier file"),
        "{u:?}"
    );
    assert!(
        has("1 × traces whose every response an earlier file holds"),
        "{u:?}"
    );
    let scan = scan_usage(std::slice::from_ref(&root)).unwrap();
    let scanned: u64 = scan
        .sessions
        .iter()
        .map(|s| s.totals().cache_creation_5m)
        .sum();
    assert_eq!(scanned, 3 * 2000);
}

/// A trace's project is the folder Claude Code ran in, as its lines' `cwd`
/// says (the folder under `projects/` cannot be read back into a path);
/// a file whose lines name none keeps the folder's name.
#[test]
fn the_project_is_the_path_the_conversation_ran_in() {
    let dir = root().join("projects/-home-dev-demo");
    let out = import(
        &[dir.join(format!("{MAIN}.jsonl"))],
        &ImportOptions::default(),
    )
    .unwrap();
    for t in &out.traces {
        assert_eq!(t.project.as_deref(), Some("/home/dev/demo"), "{}", t.name);
    }
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("projects/-home-dev-nocwd");
    std::fs::create_dir_all(&project).unwrap();
    let text = std::fs::read_to_string(dir.join(format!("{MAIN}.jsonl"))).unwrap();
    let without: String = text
        .lines()
        .map(|l| match serde_json::from_str::<serde_json::Value>(l) {
            Ok(serde_json::Value::Object(mut o)) => {
                o.remove("cwd");
                serde_json::to_string(&o).unwrap() + "\n"
            }
            _ => format!("{l}\n"),
        })
        .collect();
    std::fs::write(project.join(format!("{MAIN}.jsonl")), without).unwrap();
    let out = import(
        &[project.join(format!("{MAIN}.jsonl"))],
        &ImportOptions::default(),
    )
    .unwrap();
    assert!(!out.traces.is_empty());
    for t in &out.traces {
        assert_eq!(t.project.as_deref(), Some("-home-dev-nocwd"), "{}", t.name);
    }
}

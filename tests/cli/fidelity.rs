//! The status quo replayed from recorded usage reproduces the record: the
//! prompt each call sent, and the provider's cache around a prefix the
//! source did not record.

use serde_json::{Value, json};

fn replay(trace: &Value, cache: &str) -> Value {
    let (_dir, file) = trace_file(trace);
    let o = crate::util::tracecost()
        .args([
            "replay",
            file.to_str().unwrap(),
            "--cache",
            cache,
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// `trace` written to `t.json` in a fresh folder, kept while the guard lives.
fn trace_file(trace: &Value) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.json");
    std::fs::write(&file, trace.to_string()).unwrap();
    (dir, file)
}

/// Each call's simulated bill is its recorded one to within 1%.
fn assert_billed_as_recorded(calls: &[Value]) {
    for c in calls {
        let (sim, rec) = (
            c["cost_usd"].as_f64().unwrap(),
            c["recorded_cost_usd"].as_f64().unwrap(),
        );
        assert!(
            (sim - rec).abs() / rec < 0.01,
            "call {}: {sim} vs {rec}",
            c["index"]
        );
    }
}

fn total(u: &Value) -> u64 {
    [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .map(|k| u[k].as_u64().unwrap_or(0))
    .sum()
}

/// Each call after the first sends exactly the prompt the provider
/// counted: the recorded growth is shared among the appended blocks.
#[test]
fn the_status_quo_sends_the_recorded_prompt() {
    let trace: Value =
        serde_json::from_str(&std::fs::read_to_string("traces/massage-gun.json").unwrap()).unwrap();
    let out = replay(&trace, "none");
    let calls = out["calls"].as_array().unwrap();
    let mut compared = 0;
    for c in calls.iter().skip(1) {
        if c["recorded"].is_object() {
            assert_eq!(total(c), total(&c["recorded"]), "call {}", c["index"]);
            compared += 1;
        }
    }
    assert!(compared >= 4);
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

/// A user turn of `long` text answered "ok", once per word of `turns`.
fn ok_turns(turns: &[&str], long: &str) -> Vec<Value> {
    turns
        .iter()
        .flat_map(|t| [user(&format!("{t} {long}")), assistant("ok")])
        .collect()
}

/// A Read call and its result for each `(tool_use id, content)`, in order.
fn reads(results: &[(&str, &str)]) -> Vec<Value> {
    results
        .iter()
        .flat_map(|(id, content)| {
            [
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {}}]}),
                json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content}]}),
            ]
        })
        .collect()
}

fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}]})
}

fn usage(read: u64, write: u64) -> Value {
    json!({"input_tokens": 3, "cache_read_input_tokens": read, "cache_creation_input_tokens": write, "output_tokens": 10})
}

/// A session whose system prompt and tools went unrecorded (20,000
/// tokens): its first call read 12,000 of them, written by another session
/// of the account; its second read all it had cached; its third, ten
/// seconds later, read only the shared 12,000 again (the hidden rest
/// changed). The replay of its own policy reads what the record read.
#[test]
fn the_hidden_prefix_shared_with_other_sessions_is_warm_where_the_record_says() {
    let long = "word ".repeat(400);
    let t0 = 1_760_000_000_000u64;
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "hidden",
        "model": "claude-sonnet-4-5",
        "status_quo": "off+claude-code:ttl=5m",
        "hidden_prefix_tokens": 20000,
        "messages": ok_turns(&["first", "second", "third"], &long),
        "calls": [
            {"messages": 1, "start_ms": t0, "usage": usage(12_000, 8_450)},
            {"messages": 3, "start_ms": t0 + 10_000, "usage": usage(20_450, 420)},
            {"messages": 5, "start_ms": t0 + 20_000, "usage": usage(12_000, 9_290)}
        ]
    });
    let out = replay(&trace, "claude-code");
    let calls = out["calls"].as_array().unwrap();
    let read = |i: usize| calls[i]["cache_read_input_tokens"].as_u64().unwrap();
    let recorded = |i: usize| {
        calls[i]["recorded"]["cache_read_input_tokens"]
            .as_u64()
            .unwrap()
    };
    // Cold on its own, the first call still reads the shared part.
    assert_eq!(read(0), recorded(0));
    // The second reads what the first cached.
    assert!(read(1) >= 20_000, "{}", read(1));
    // The third reads the shared part only: the rest changed.
    assert_eq!(read(2), recorded(2));
    // Without calibration the record is not read: each call alone.
    let (_dir, file) = trace_file(&trace);
    let o = crate::util::tracecost()
        .args(["replay", file.to_str().unwrap(), "--cache", "claude-code"])
        .args(["--calibrate", "off", "--format", "json"])
        .output()
        .unwrap();
    let off: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(off["calls"][0]["cache_read_input_tokens"], 0);
}

#[test]
fn fidelity_compares_each_status_quo_with_its_recorded_bill() {
    let o = crate::util::tracecost()
        .args(["fidelity", "traces/massage-gun.json", "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["format"], "tracecost.fidelity/v2");
    assert_eq!(v["summary"]["traces"], 1);
    let s = &v["traces"][0];
    assert_eq!(s["config"], "off+none");
    let (rec, sim) = (
        s["recorded_usd"].as_f64().unwrap(),
        s["simulated_usd"].as_f64().unwrap(),
    );
    assert!((s["error_pct"].as_f64().unwrap() - (sim - rec) / rec * 100.0).abs() < 1e-9);
    // The Markdown page says how to regenerate it.
    let md = crate::util::tracecost()
        .args(["fidelity", "traces/massage-gun.json", "--format", "md"])
        .output()
        .unwrap();
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.starts_with("# Fidelity"));
    assert!(md.contains("tracecost fidelity PATH --format md"));
    assert!(md.contains("| massage-gun | `off+none` | 6 |"));
}

#[test]
fn fidelity_without_recorded_usage_is_an_input_error() {
    let o = crate::util::tracecost()
        .args(["fidelity", "traces/session-200-s1.json"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no trace recorded usage"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// Replays a file under its status quo (no policy option), as JSON.
fn replay_status_quo(path: &str, extra: &[&str]) -> Value {
    let o = crate::util::tracecost()
        .args(["replay", path, "--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

const TTL_SESSION: &str =
    "tests/fixtures/claude-code-ttl/projects/-home-dev-ttl/66666666-6666-4666-8666-666666666666";

/// A Claude Code session whose main conversation wrote one-hour caches and
/// whose subagent wrote five-minute ones: the status quo takes the TTL
/// from each call's record, so the main thread's request eleven minutes
/// after the last still reads, and the subagent's six minutes after its
/// last writes again, as recorded.
#[test]
fn the_status_quo_replays_each_call_at_the_ttl_it_recorded() {
    let split = |c: &Value| {
        (
            c["cache_creation"]["ephemeral_5m_input_tokens"]
                .as_u64()
                .unwrap(),
            c["cache_creation"]["ephemeral_1h_input_tokens"]
                .as_u64()
                .unwrap(),
        )
    };
    let main = replay_status_quo(&format!("{TTL_SESSION}.jsonl"), &[]);
    assert_eq!(main["config"], "recorded+claude-code:ttl=recorded");
    let calls = main["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 3);
    for c in calls {
        let (five, hour) = split(c);
        assert_eq!(five, 0, "call {}", c["index"]);
        assert!(hour > 0, "call {}", c["index"]);
    }
    let read = |c: &Value| c["cache_read_input_tokens"].as_u64().unwrap();
    assert!(read(&calls[2]) >= 6000, "{}", read(&calls[2]));

    let sub = replay_status_quo(
        &format!("{TTL_SESSION}/subagents/agent-c0000000000000003.jsonl"),
        &[],
    );
    assert_eq!(sub["config"], "recorded+claude-code:ttl=recorded");
    let calls = sub["calls"].as_array().unwrap();
    for c in calls {
        let (five, hour) = split(c);
        assert!(five > 0, "call {}", c["index"]);
        assert_eq!(hour, 0, "call {}", c["index"]);
    }
    assert!(read(&calls[1]) >= 3000);
    assert_eq!(read(&calls[2]), 0);
    // Each call's bill is the recorded one to within a few tokens.
    for out in [&main, &sub] {
        assert_billed_as_recorded(out["calls"].as_array().unwrap());
    }

    // Asked for five minutes, the main thread's late request misses.
    let five = replay_status_quo(
        &format!("{TTL_SESSION}.jsonl"),
        &["--cache", "claude-code", "--ttl", "5m"],
    );
    // Only the TTL changes: the compaction is the status quo's.
    assert_eq!(five["config"], "recorded+claude-code:ttl=5m");
    assert_eq!(read(&five["calls"][2]), 0);
}

/// The whole session (main thread and subagent together, one account's
/// cache) matches its recorded bill, each part at its own TTL.
#[test]
fn fidelity_of_a_session_with_mixed_ttls() {
    let o = crate::util::tracecost()
        .args([
            "fidelity",
            "tests/fixtures/claude-code-ttl/projects",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let sessions = v["traces"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    for s in sessions {
        assert_eq!(s["config"], "recorded+claude-code:ttl=recorded");
        assert!(s["error_pct"].as_f64().unwrap().abs() < 1.0, "{s}");
    }
}

fn usage_1h(read: u64, write: u64) -> Value {
    json!({"input_tokens": 3, "cache_read_input_tokens": read, "cache_creation_input_tokens": write,
           "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": write},
           "output_tokens": 10})
}

/// A session that wrote one-hour caches. Its third call, ten minutes after
/// the second, read only the shared part of the hidden prefix: within the
/// hour its own entries were alive, so the rest of its hidden prompt
/// changed, and the replay writes it again as recorded. The two shared
/// reads (12,000 and 12,002 tokens, other sessions' prompts a word apart)
/// are one part, not a reason to ignore what the record says.
#[test]
fn a_shared_read_within_the_recorded_hour_means_the_hidden_rest_changed() {
    let long = "word ".repeat(400);
    let t0 = 1_760_000_000_000u64;
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "hidden-hour",
        "model": "claude-sonnet-4-5",
        "status_quo": "off+claude-code:ttl=recorded",
        "hidden_prefix_tokens": 20000,
        "messages": ok_turns(&["first", "second", "third"], &long),
        "calls": [
            {"messages": 1, "start_ms": t0, "usage": usage_1h(12_000, 8_450)},
            {"messages": 3, "start_ms": t0 + 10_000, "usage": usage_1h(20_450, 420)},
            {"messages": 5, "start_ms": t0 + 610_000, "usage": usage_1h(12_002, 9_288)}
        ]
    });
    let (_dir, file) = trace_file(&trace);
    let out = replay_status_quo(file.to_str().unwrap(), &[]);
    assert_eq!(out["config"], "off+claude-code:ttl=recorded");
    let calls = out["calls"].as_array().unwrap();
    let read = |i: usize| calls[i]["cache_read_input_tokens"].as_u64().unwrap();
    let recorded = |i: usize| {
        calls[i]["recorded"]["cache_read_input_tokens"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(read(0), recorded(0));
    assert!(read(1) >= 20_000, "{}", read(1));
    // The shared part only, to within the few tokens the reads differ by.
    assert!(
        read(2) <= recorded(2) && recorded(2) - read(2) <= 10,
        "{} vs {}",
        read(2),
        recorded(2)
    );
    assert_billed_as_recorded(calls);
}

/// A session no other session shared a prefix with (its first call read
/// nothing): its second call, five minutes and a second after the first by
/// the transcript's clock, still read what the first cached, as the record
/// shows (the clock is the transcript's, not the requests'). The replay
/// keeps those entries alive; its third call, a few seconds later, read
/// nothing at all: the hidden prompt changed, and the replay writes it.
#[test]
fn the_record_says_what_was_alive_even_with_no_shared_prefix() {
    let long = "word ".repeat(400);
    let t0 = 1_760_000_000_000u64;
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "carried",
        "model": "claude-sonnet-4-5",
        "status_quo": "off+claude-code:ttl=5m",
        "hidden_prefix_tokens": 20000,
        "messages": ok_turns(&["first", "second", "third"], &long),
        "calls": [
            {"messages": 1, "start_ms": t0, "usage": usage(0, 20_450)},
            {"messages": 3, "start_ms": t0 + 301_000, "usage": usage(20_450, 420)},
            {"messages": 5, "start_ms": t0 + 305_000, "usage": usage(0, 21_290)}
        ]
    });
    let out = replay(&trace, "claude-code");
    let calls = out["calls"].as_array().unwrap();
    let read = |i: usize| calls[i]["cache_read_input_tokens"].as_u64().unwrap();
    assert_eq!(read(0), 0);
    assert!(read(1) >= 20_000, "{}", read(1));
    assert_eq!(read(2), 0);
    assert_billed_as_recorded(calls);
}

/// An Agent-SDK run started again with the same prompt: its first call
/// read its whole prompt, the unrecorded prefix and the opening message,
/// from what the run before left (20,410 of 20,413 tokens). The replay
/// reads it too, where it used to write all of it, cold on its own.
#[test]
fn a_first_call_that_read_past_the_hidden_prefix_reads_it_all() {
    let long = "word ".repeat(400);
    let t0 = 1_760_000_000_000u64;
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "again",
        "model": "claude-sonnet-4-5",
        "status_quo": "off+claude-code:ttl=5m",
        "hidden_prefix_tokens": 20000,
        "messages": ok_turns(&["first", "second"], &long),
        "calls": [
            {"messages": 1, "start_ms": t0, "usage": usage(20_410, 0)},
            {"messages": 3, "start_ms": t0 + 10_000, "usage": usage(20_410, 420)}
        ]
    });
    let out = replay(&trace, "claude-code");
    let calls = out["calls"].as_array().unwrap();
    let first = &calls[0];
    // The hidden prefix and the opening message, all read.
    assert!(
        first["cache_read_input_tokens"].as_u64().unwrap() > 20_300,
        "{first}"
    );
    assert_eq!(first["cache_creation_input_tokens"], 0, "{first}");
    assert_billed_as_recorded(&calls[..1]);
    // The second reads what the first had.
    assert!(calls[1]["cache_read_input_tokens"].as_u64().unwrap() > 20_300);
    // A run whose opening differed read the hidden prefix and wrote the
    // opening: that tail is written again, the rest read.
    let mut other = trace.clone();
    other["calls"][0]["usage"] = usage(20_000, 410);
    let out = replay(&other, "claude-code");
    let first = &out["calls"][0];
    let read = first["cache_read_input_tokens"].as_u64().unwrap();
    assert!(read.abs_diff(20_000) <= 5, "{first}");
    assert_eq!(first["input_tokens"], 0, "{first}");
    assert_billed_as_recorded(&out["calls"].as_array().unwrap()[..1]);
}

/// A response that consulted an advisor: three requests on one history
/// (`usage.iterations`), the executor's, the advisor's on its own model,
/// and the executor's again. The advisor's record read and wrote nothing:
/// it is sent without markers, at its recorded size (30,000 tokens, more
/// than the history), and says nothing of the executor's cache, so the
/// executor's second request reads what its first cached.
#[test]
fn an_advisor_request_is_sent_uncached_at_its_recorded_size() {
    let long = "word ".repeat(400);
    let t0 = 1_760_000_000_000u64;
    let advisor = json!({"input_tokens": 30_000, "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 0, "output_tokens": 500});
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "advised",
        "model": "claude-sonnet-4-5",
        "status_quo": "off+claude-code:ttl=5m",
        "hidden_prefix_tokens": 20000,
        "messages": ok_turns(&["first", "second"], &long),
        "calls": [
            {"messages": 1, "start_ms": t0, "usage": usage(12_000, 8_450)},
            {"messages": 3, "start_ms": t0 + 10_000, "usage": usage(20_450, 420)},
            {"messages": 3, "model": "claude-opus-4-6", "usage": advisor},
            {"messages": 3, "usage": usage(20_870, 0)}
        ]
    });
    let out = replay(&trace, "claude-code");
    let calls = out["calls"].as_array().unwrap();
    let advised = &calls[2];
    assert_eq!(advised["cache_read_input_tokens"], 0, "{advised}");
    assert_eq!(advised["cache_creation_input_tokens"], 0, "{advised}");
    let sent = advised["input_tokens"].as_u64().unwrap();
    assert!(sent.abs_diff(30_000) < 300, "{advised}");
    assert_billed_as_recorded(&calls[2..]);
    // Under another cache policy too, the advisor's request carries none.
    let other = replay(&trace, "tail");
    assert_eq!(other["calls"][2]["cache_creation_input_tokens"], 0);
}

/// The unrecorded prefix as the importer sized it (here 25,000 tokens,
/// from a rough count of the visible messages) is resized so that the
/// first call sends its recorded prompt (20,453 tokens), and so does every
/// call after it.
#[test]
fn the_first_call_sends_its_recorded_prompt() {
    let long = "word ".repeat(400);
    let t0 = 1_760_000_000_000u64;
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "resized",
        "model": "claude-sonnet-4-5",
        "status_quo": "off+claude-code:ttl=5m",
        "hidden_prefix_tokens": 25000,
        "messages": ok_turns(&["first", "second"], &long),
        "calls": [
            {"messages": 1, "start_ms": t0, "usage": usage(0, 20_450)},
            {"messages": 3, "start_ms": t0 + 10_000, "usage": usage(20_450, 420)}
        ]
    });
    let out = replay(&trace, "claude-code");
    let calls = out["calls"].as_array().unwrap();
    for c in calls {
        assert!(total(c).abs_diff(total(&c["recorded"])) <= 3, "{c}");
    }
    assert_billed_as_recorded(calls);
}

/// Claude Code cleared its first tool result before the third call
/// (`cleared`, from a `microcompact_boundary` line): the status quo,
/// `recorded`, sends it as the placeholder from there on, so the third
/// prompt is smaller than the second, as recorded; `off` sends it whole.
#[test]
fn the_status_quo_sends_what_claude_code_cleared_as_cleared() {
    let big = "line of a file ".repeat(800);
    let t0 = 1_760_000_000_000u64;
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "microcompacted",
        "model": "claude-sonnet-4-5",
        "status_quo": "recorded+claude-code:ttl=5m",
        "messages": ([vec![user("read it")], reads(&[("t1", &big), ("t2", "short")]), vec![assistant("done")]].concat()),
        "calls": [
            {"messages": 1, "start_ms": t0},
            {"messages": 3, "start_ms": t0 + 5_000},
            {"messages": 5, "start_ms": t0 + 10_000, "cleared": ["t1"]}
        ]
    });
    let sent = |cache_config: &str| -> Vec<u64> {
        let (_dir, file) = trace_file(&trace);
        let out = replay_status_quo(file.to_str().unwrap(), &["--config", cache_config]);
        out["calls"].as_array().unwrap().iter().map(total).collect()
    };
    let cleared = sent("recorded+claude-code:ttl=5m");
    let whole = sent("off+claude-code:ttl=5m");
    assert_eq!(cleared[..2], whole[..2]);
    assert!(cleared[2] + 2_000 < cleared[1], "{cleared:?}");
    assert!(whole[2] > whole[1], "{whole:?}");
    // Without a config, the trace's status quo is the one replayed.
    let (_dir, file) = trace_file(&trace);
    let quo = replay_status_quo(file.to_str().unwrap(), &[]);
    assert_eq!(quo["config"], "recorded+claude-code:ttl=5m");
    // A cleared id that no result sent answers is refused, by place.
    let mut bad = trace.clone();
    bad["calls"][2]["cleared"] = json!(["t7"]);
    std::fs::write(&file, bad.to_string()).unwrap();
    let o = crate::util::tracecost()
        .args(["replay", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("/calls/2/cleared/0"), "{err}");
    assert!(err.contains("\"t7\""), "{err}");
}

/// A status quo that cleared a result the model then copied from is priced with
/// that recall, like any policy: keeping the result wins, and the report
/// says why a recommendation dearer before recall risk is the cheaper one.
#[test]
fn a_status_quo_that_cleared_what_was_quoted_is_priced_with_its_recall() {
    let big = (0..300)
        .map(|i| format!("line {i} of a file with the constant ZEBRA_LIMIT_4242 inside"))
        .collect::<Vec<_>>()
        .join("\n");
    let t0 = 1_760_000_000_000u64;
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "microcompacted",
        "model": "claude-sonnet-4-5",
        "status_quo": "recorded+claude-code:ttl=5m",
        "messages": ([vec![user("read it")], reads(&[("t1", &big), ("t2", "short")]), vec![assistant("The limit is set here:\nline 7 of a file with the constant ZEBRA_LIMIT_4242 inside")]].concat()),
        "calls": [
            {"messages": 1, "start_ms": t0},
            {"messages": 3, "start_ms": t0 + 5_000},
            {"messages": 5, "start_ms": t0 + 10_000, "cleared": ["t1"]}
        ]
    });
    let (dir, file) = trace_file(&trace);
    let out = dir.path().join("r");
    let o = crate::util::tracecost()
        .args([
            "report",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(
        said.contains("more than the status quo before recall risk, but the status quo's 0.9 result(s) needed again after it cleared them itself"),
        "{said}"
    );
    let r: Value =
        serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap();
    let sq = &r["fleet"]["status_quo"];
    // One copied line, less what one result of its size shows by chance.
    let needs = sq["recall_needs"].as_f64().unwrap();
    assert!(needs > 0.8 && needs < 1.0, "{sq}");
    assert_eq!(sq["recall"]["evidence"]["copied_lines"], 1, "{sq}");
    assert!(sq["risk_adjusted_cost_usd"].as_f64().unwrap() > sq["cost_usd"].as_f64().unwrap());
}

/// `fidelity --explain NAME` on `trace` (extra options after), as JSON.
fn explain(trace: &Value, extra: &[&str]) -> Value {
    let (_dir, file) = trace_file(trace);
    let o = crate::util::tracecost()
        .args(["fidelity", file.to_str().unwrap(), "--explain"])
        .arg(trace["name"].as_str().unwrap())
        .args(["--format", "json"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// Each call's cause name (`-` for a call that read all that was cached).
fn causes(explained: &Value) -> Vec<String> {
    explained["traces"][0]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["cause"]["cause"].as_str().unwrap_or("-").to_owned())
        .collect()
}

fn text_blocks(n: usize, text: &str) -> Value {
    let blocks: Vec<Value> = (0..n)
        .map(|i| json!({"type": "text", "text": format!("{text} {i}")}))
        .collect();
    json!({"role": "user", "content": blocks})
}

/// A session written to hit each cause in turn under Claude Code's
/// markers: its first call, a read, a pause past the TTL, a new system
/// prompt, new tools, and a message of more blocks than the API looks back
/// over.
fn causes_trace() -> Value {
    let long = "word ".repeat(1500);
    let t0 = 1_760_000_000_000u64;
    json!({
        "format": "tracecost.trace/v1",
        "name": "causes",
        "model": "claude-sonnet-4-5",
        "status_quo": "off+claude-code:ttl=5m",
        "system": [{"type": "text", "text": "You are a careful agent."}],
        "tools": [{"name": "read", "input_schema": {"type": "object"}}],
        "messages": [
            user(&format!("start {long}")), assistant("one"),
            user("two"), assistant("two"),
            user("three"), assistant("three"),
            user("four"), assistant("four"),
            user("five"), assistant("five"),
            text_blocks(30, "part")
        ],
        "calls": [
            {"messages": 1, "start_ms": t0},
            {"messages": 3, "start_ms": t0 + 10_000},
            {"messages": 5, "start_ms": t0 + 10_000 + 6 * 60_000},
            {"messages": 7, "start_ms": t0 + 20_000 + 6 * 60_000,
             "system": [{"type": "text", "text": "You are a careful agent. Today is Tuesday."}]},
            {"messages": 9, "start_ms": t0 + 30_000 + 6 * 60_000,
             "tools": [{"name": "read", "input_schema": {"type": "object"}},
                       {"name": "write", "input_schema": {"type": "object"}}]},
            {"messages": 11, "start_ms": t0 + 40_000 + 6 * 60_000}
        ]
    })
}

/// `--explain` names why each simulated call wrote or missed, in the order
/// the causes are checked, with the gap and TTL of an expiry and the block
/// where a prefix changed.
#[test]
fn explain_names_the_cause_of_each_write() {
    let out = explain(&causes_trace(), &[]);
    assert_eq!(out["format"], "tracecost.explain/v1");
    assert_eq!(
        causes(&out),
        [
            "first_call",
            "-",
            "ttl_expired",
            "system_changed",
            "tools_changed",
            "lookback_exceeded"
        ]
    );
    let calls = &out["traces"][0]["calls"];
    assert_eq!(calls[2]["cause"]["gap_ms"], 6 * 60_000);
    assert_eq!(calls[2]["cause"]["ttl"], "5m");
    assert_eq!(calls[2]["gap_ms"], 6 * 60_000);
    assert_eq!(
        calls[2]["cause_text"],
        "TTL expired: 6 min 00 s since the call before, cached for 5m"
    );
    // Tools come first in the prefix: one tool, so the system is block 3
    // (after the tool-use prompt), and the second tool is block 2.
    assert_eq!(calls[3]["cause"]["block"], 3);
    assert_eq!(calls[4]["cause"]["block"], 2);
    // The same config at an hour keeps the entry through the pause.
    let hour = explain(&causes_trace(), &["--config", "off+claude-code:ttl=1h"]);
    assert_eq!(causes(&hour)[2], "-");
    assert_eq!(hour["traces"][0]["config"], "off+claude-code:ttl=1h");
    // No marker, no cache: every call says so.
    let none = explain(&causes_trace(), &["--config", "off+none"]);
    assert!(
        causes(&none)[1..].iter().all(|c| c == "no_marker"),
        "{:?}",
        causes(&none)
    );
}

/// A prompt shorter than the model caches is told apart from a miss.
#[test]
fn explain_tells_a_prompt_below_the_minimum() {
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "short",
        "model": "claude-sonnet-4-5",
        "status_quo": "off+claude-code:ttl=5m",
        "messages": [user("hi"), assistant("hello"), user("bye")],
        "calls": [{"messages": 1, "start_ms": 1_760_000_000_000u64},
                  {"messages": 3, "start_ms": 1_760_000_005_000u64}]
    });
    let out = explain(&trace, &[]);
    assert_eq!(causes(&out), ["first_call", "below_minimum"]);
    assert_eq!(out["traces"][0]["calls"][1]["cause"]["minimum"], 1024);
}

/// A result Claude Code cleared inside the cached prefix is its
/// microcompaction; a ledger that compacts one is the policy's doing, and
/// the list says which results it compacted.
#[test]
fn explain_tells_a_clearing_from_the_policy_and_from_claude_code() {
    let big = "line of a file ".repeat(800);
    let t0 = 1_760_000_000_000u64;
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "cleared",
        "model": "claude-sonnet-4-5",
        "status_quo": "recorded+claude-code:ttl=5m",
        "messages": ([vec![user(&format!("read it {}", "word ".repeat(1500)))], reads(&[("t1", &big), ("t2", "short")]), vec![assistant("done"),
            user("and now?")]].concat()),
        "calls": [
            {"messages": 3, "start_ms": t0},
            {"messages": 5, "start_ms": t0 + 5_000},
            {"messages": 7, "start_ms": t0 + 10_000, "cleared": ["t1"]}
        ]
    });
    let quo = explain(&trace, &[]);
    assert_eq!(causes(&quo), ["first_call", "-", "microcompaction"]);
    assert_eq!(quo["traces"][0]["calls"][2]["cause"]["message"], 3);
    let ledger = explain(
        &trace,
        &["--config", "ledger:t=1000,k=1+claude-code:ttl=5m"],
    );
    let calls = &ledger["traces"][0]["calls"];
    let compacted = calls
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c["cause"]["cause"] == "compacted")
        .expect("a call the ledger's compaction made write");
    assert_eq!(calls[compacted]["newly_compacted"], json!(["t1"]));
}

/// The table says where the simulation first leaves the record, and a name
/// no trace has is an input error naming the traces read.
#[test]
fn explain_shows_the_first_divergence_and_refuses_an_unknown_name() {
    let long = "word ".repeat(1500);
    let t0 = 1_760_000_000_000u64;
    // The record read at call 2 what the simulation, at 5 minutes after a
    // 6-minute pause, must write again.
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "diverging",
        "model": "claude-sonnet-4-5",
        "status_quo": "off+claude-code:ttl=5m",
        "messages": [user(&format!("start {long}")), assistant("ok"), user("again")],
        "calls": [
            {"messages": 1, "start_ms": t0, "usage": usage(0, 4_510)},
            {"messages": 3, "start_ms": t0 + 6 * 60_000, "usage": usage(4_510, 20)}
        ]
    });
    let (_dir, file) = trace_file(&trace);
    let run = |name: &str| {
        crate::util::tracecost()
            .args(["fidelity", file.to_str().unwrap(), "--explain", name])
            .output()
            .unwrap()
    };
    let o = run("div");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let table = String::from_utf8(o.stdout).unwrap();
    assert!(
        table.starts_with("diverging: 2 calls replayed as off+claude-code:ttl=5m; 1 of them off the record by more than 5% of its prompt, the first at call 2."),
        "{table}"
    );
    assert!(table.contains("≠  TTL expired: 6 min 00 s"), "{table}");
    let o = run("nope");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(
            "--explain nope: no trace's name starts with it among the 1 read (e.g. diverging)"
        ),
        "{err}"
    );
}

/// A recorded prompt that shrank although the history grew, with no
/// `cleared` to say why: the status quo clears the oldest results, as many
/// as bring its prompt closest to the record, from that call on; a policy
/// of its own (no compaction) sends them whole.
#[test]
fn a_prompt_that_shrank_unrecorded_clears_the_oldest_results() {
    let big = "line of a file ".repeat(800);
    let t0 = 1_760_000_000_000u64;
    let mut trace = json!({
        "format": "tracecost.trace/v1",
        "name": "shrank",
        "model": "claude-sonnet-4-5",
        "status_quo": "recorded+claude-code:ttl=5m",
        "messages": ([vec![user(&format!("read them {}", "word ".repeat(1500)))], reads(&[("t0", "ok"), ("t1", &big), ("t2", "a short result")]), vec![assistant("done"),
            user("and now?")]].concat()),
        "calls": [
            {"messages": 5, "start_ms": t0},
            {"messages": 7, "start_ms": t0 + 5_000},
            {"messages": 9, "start_ms": t0 + 5_000 + 6 * 60_000}
        ]
    });
    let (_dir, file) = trace_file(&trace);
    let whole: Vec<u64> = replay_status_quo(file.to_str().unwrap(), &[])["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(total)
        .collect();
    // What the record says: the first two as replayed; after the pause the
    // big result went (about 3,000 tokens), and the cache was cold.
    let t1_tokens = whole[0] - 1_530;
    let shrunk = whole[2] - t1_tokens;
    trace["calls"][0]["usage"] = usage(0, whole[0] - 3);
    trace["calls"][1]["usage"] = usage(whole[0] - 3, whole[1] - whole[0]);
    trace["calls"][2]["usage"] = usage(0, shrunk - 3);
    std::fs::write(&file, trace.to_string()).unwrap();
    let quo = replay_status_quo(file.to_str().unwrap(), &[]);
    let calls = quo["calls"].as_array().unwrap();
    let sent = total(&calls[2]);
    assert!(sent.abs_diff(shrunk) * 20 < shrunk, "{sent} vs {shrunk}");
    // The oldest result, no longer than the placeholder, saves nothing
    // alone but is cleared with the one after it.
    assert_eq!(calls[2]["compacted"], json!(["t0", "t1"]));
    assert_eq!(calls[1]["compacted"], json!([]));
    let own = replay_status_quo(
        file.to_str().unwrap(),
        &["--config", "off+claude-code:ttl=5m"],
    );
    assert!(
        total(&own["calls"][2]) > shrunk + 2_000,
        "{}",
        own["calls"][2]
    );
    // A shrink smaller than any result's saving clears nothing.
    trace["calls"][2]["usage"] = usage(0, whole[1] - 4);
    std::fs::write(&file, trace.to_string()).unwrap();
    let slight = replay_status_quo(file.to_str().unwrap(), &[]);
    assert_eq!(slight["calls"][2]["compacted"], json!([]));
}

/// Two sessions of one account whose unrecorded prefixes are the same
/// size share only what the record shows shared: the second one's first
/// call reads the shared part, not the first one's own rest.
#[test]
fn another_sessions_own_rest_of_the_same_size_is_not_read() {
    let long = "word ".repeat(400);
    let t0 = 1_760_000_000_000u64;
    let session = |name: &str, start: u64, text: &str| {
        json!({
            "name": name,
            "model": "claude-sonnet-4-5",
            "account": "team",
            "status_quo": "off+claude-code:ttl=5m",
            "hidden_prefix_tokens": 20000,
            "messages": [
                user(&format!("{text} {long}")), assistant("ok"),
                user(&format!("more {text} {long}")), assistant("ok")
            ],
            "calls": [
                {"messages": 1, "start_ms": start, "usage": usage(12_000, 8_450)},
                {"messages": 3, "start_ms": start + 10_000, "usage": usage(20_450, 430)}
            ]
        })
    };
    let file = json!({
        "format": "tracecost.trace/v1",
        "traces": [session("first", t0, "alpha"), session("second", t0 + 60_000, "beta")]
    });
    let (_dir, path) = trace_file(&file);
    let o = crate::util::tracecost()
        .args([
            "fidelity",
            path.to_str().unwrap(),
            "--explain",
            "second",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out: Value = serde_json::from_slice(&o.stdout).unwrap();
    let first = &out["traces"][0]["calls"][0];
    assert_eq!(
        first["simulated"]["cache_read_input_tokens"], first["recorded"]["cache_read_input_tokens"],
        "{first}"
    );
}

/// One request sent with another unrecorded prefix between two on the
/// usual one: the call after it reads what the call before it cached, so
/// the hidden rest is back on its earlier version (a later change is new
/// content again, never the one-off's).
#[test]
fn a_one_off_prefix_change_does_not_last() {
    let long = "word ".repeat(400);
    let t0 = 1_760_000_000_000u64;
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "one-off",
        "model": "claude-sonnet-4-5",
        "status_quo": "off+claude-code:ttl=5m",
        "hidden_prefix_tokens": 20000,
        "messages": ok_turns(&["first", "second", "third", "fourth"], &long),
        "calls": [
            {"messages": 1, "start_ms": t0, "usage": usage(12_000, 8_450)},
            {"messages": 3, "start_ms": t0 + 10_000, "usage": usage(20_450, 420)},
            // Another prefix: only the shared part is read.
            {"messages": 5, "start_ms": t0 + 20_000, "usage": usage(12_000, 9_290)},
            // Back on the first: it reads what call 2 cached.
            {"messages": 7, "start_ms": t0 + 30_000, "usage": usage(20_870, 840)}
        ]
    });
    let (_dir, file) = trace_file(&trace);
    let out = replay_status_quo(file.to_str().unwrap(), &[]);
    let calls = out["calls"].as_array().unwrap();
    let read = |i: usize| calls[i]["cache_read_input_tokens"].as_u64().unwrap();
    let recorded = |i: usize| {
        calls[i]["recorded"]["cache_read_input_tokens"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(read(2), recorded(2));
    // `--explain` names the change, at the hidden rest's block.
    let explained = explain(&trace, &[]);
    assert_eq!(causes(&explained)[2], "hidden_prefix_changed");
    // Within the estimate of call 2's own prompt; the later prefix is 400 more.
    assert!(
        read(3).abs_diff(recorded(3)) <= 100,
        "{} vs {}",
        read(3),
        recorded(3)
    );
    assert_billed_as_recorded(calls);
}

/// Claude Code's clearing as a policy: once the results sent whole pass
/// keep-tokens + at-least, the oldest are cleared until keep-tokens
/// remain, and stay cleared; below that, nothing is. `--compaction` names
/// it, and `recorded` as well.
#[test]
fn claude_code_clear_keeps_the_most_recent_results_whole() {
    let t0 = 1_760_000_000_000u64;
    let mut messages = vec![user("go")];
    let mut calls = vec![json!({"messages": 1, "start_ms": t0})];
    for i in 0..8 {
        let id = format!("t{i}");
        messages.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {}}]}));
        // About 3,000 tokens each.
        messages.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": format!("{i} {}", "line of a file ".repeat(750))}]}));
        calls.push(json!({"messages": messages.len(), "start_ms": t0 + 5_000 * (i + 1)}));
    }
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "clearing",
        "model": "claude-sonnet-4-5",
        "messages": messages,
        "calls": calls
    });
    let (_dir, file) = trace_file(&trace);
    let run = |extra: &[&str]| replay_status_quo(file.to_str().unwrap(), extra);
    let out = run(&[
        "--config",
        "claude-code-clear:keep-tokens=6000,at-least=6000+tail:ttl=5m",
    ]);
    let cleared: Vec<Vec<String>> = out["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| serde_json::from_value(c["compacted"].clone()).unwrap())
        .collect();
    // Until the results pass 12,000 tokens nothing is cleared; then the
    // oldest go until about 6,000 remain (two results), and stay gone.
    let first = cleared
        .iter()
        .position(|c| !c.is_empty())
        .expect("a clearing");
    assert!(cleared[..first].iter().all(Vec::is_empty));
    assert!(first >= 4, "{cleared:?}");
    assert_eq!(cleared[first][0], "t0");
    for w in cleared.windows(2) {
        assert!(
            w[1].starts_with(&w[0]),
            "a result stays cleared: {cleared:?}"
        );
    }
    let last = cleared.last().unwrap();
    assert!(
        !last.contains(&"t7".to_owned()) && !last.contains(&"t6".to_owned()),
        "{last:?}"
    );
    assert!(
        last.contains(&"t5".to_owned()) || last.len() >= 5,
        "{last:?}"
    );
    // The flag names it, with its defaults; and `recorded` is the record's.
    let flag = run(&["--compaction", "claude-code-clear", "--cache", "tail"]);
    assert_eq!(
        flag["config"],
        "claude-code-clear:keep-tokens=40000,at-least=20000+tail:ttl=5m"
    );
    let recorded = run(&["--compaction", "recorded", "--cache", "tail"]);
    assert_eq!(recorded["config"], "recorded+tail:ttl=5m");
}

/// A call to another model reads nothing the calls before it cached:
/// caches are per model, and `--explain` says so.
#[test]
fn explain_tells_a_change_of_model() {
    let long = "word ".repeat(5000);
    let t0 = 1_760_000_000_000u64;
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "two-models",
        "model": "claude-sonnet-4-5",
        "status_quo": "off+claude-code:ttl=5m",
        "messages": [user(&format!("start {long}")), assistant("ok"), user("again"), assistant("ok"), user("more")],
        "calls": [
            {"messages": 1, "start_ms": t0},
            {"messages": 3, "start_ms": t0 + 5_000, "model": "claude-haiku-4-5"},
            {"messages": 5, "start_ms": t0 + 10_000, "model": "claude-haiku-4-5"}
        ]
    });
    assert_eq!(
        causes(&explain(&trace, &[])),
        ["first_call", "model_changed", "-"]
    );
}

/// A call whose usage records fast mode and a geography is billed, as
/// recorded and as replayed, at the model's documented multiples (Opus
/// 4.8: 2x fast, 1.1x regional); a batch-tier call at half; the other
/// calls are unchanged.
#[test]
fn a_call_is_billed_as_its_usage_says_it_was_served() {
    let long = "word ".repeat(300);
    let t0 = 1_790_000_000_000u64;
    let with = |first: Value, second: Value| {
        json!({
            "format": "tracecost.trace/v1",
            "name": "served",
            "model": "claude-opus-4-8",
            "messages": ok_turns(&["first", "second", "third"], &long),
            "calls": [
                {"messages": 1, "start_ms": t0, "usage": first},
                {"messages": 3, "start_ms": t0 + 10_000, "usage": second},
                {"messages": 5, "start_ms": t0 + 20_000, "usage": usage(0, 0)}
            ]
        })
    };
    let mut fast_us = usage(0, 0);
    fast_us["fast"] = json!(true);
    fast_us["regional"] = json!(true);
    let mut batch = usage(0, 0);
    batch["batch"] = json!(true);
    let plain = replay(&with(usage(0, 0), usage(0, 0)), "none");
    let served = replay(&with(fast_us, batch), "none");
    let cost = |out: &Value, i: usize, key: &str| out["calls"][i][key].as_f64().unwrap();
    for key in ["cost_usd", "recorded_cost_usd"] {
        let ratio = |i| cost(&served, i, key) / cost(&plain, i, key);
        assert!((ratio(0) - 2.2).abs() < 1e-9, "{key}: {}", ratio(0));
        assert!((ratio(1) - 0.5).abs() < 1e-9, "{key}: {}", ratio(1));
        assert_eq!(cost(&served, 2, key), cost(&plain, 2, key), "{key}");
    }
}

/// A Codex-like record counts input and cached input, no writes: on a
/// model with a write fee the simulation's writes are compared as the
/// input the record counts them as, and `--explain` shows both bills.
#[test]
fn a_write_the_record_cannot_show_is_no_error() {
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "no-write-count",
        "provider": "openai",
        "model": "gpt-5.6-sol",
        "system": [{"type": "text", "text": "rules ".repeat(2000)}],
        "messages": [{"role": "user", "content": "task ".repeat(800)}],
        "calls": [{"messages": 1, "start_ms": 0,
                   "usage": {"input_tokens": 3000, "cache_read_input_tokens": 0,
                             "output_tokens": 10}}]
    });
    let (_dir, file) = trace_file(&trace);
    let o = crate::util::tracecost()
        .args(["fidelity", file.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let t = &v["traces"][0];
    assert!(t["error_pct"].as_f64().unwrap().abs() < 1e-9, "{t}");
    let call = &explain(&trace, &[])["traces"][0]["calls"][0];
    assert!(
        call["simulated"]["cache_creation_input_tokens"]
            .as_u64()
            .unwrap()
            > 0,
        "{call}"
    );
    let (bill, compared, recorded) = (
        call["cost_usd"].as_f64().unwrap(),
        call["cost_usd_as_recorded"].as_f64().unwrap(),
        call["recorded_cost_usd"].as_f64().unwrap(),
    );
    assert!((compared - recorded).abs() < 1e-12, "{call}");
    assert!(bill > recorded * 1.1, "{call}");
}

/// A conversation read whole across a `/compact` (its third call says the
/// record shows one just before it) replays under Claude Code's
/// autocompact, its status quo: the compaction is put back where it ran,
/// whatever the trigger; the summarising call is a call of its own, which
/// recorded nothing, so the comparison with the record leaves it out on
/// both sides and counts its cost apart; the call after it sends the
/// context the record shows the compaction left.
#[test]
fn a_recorded_compact_is_put_back_where_it_ran_and_its_summary_call_is_compared_apart() {
    let long = "word ".repeat(400);
    let t0 = 1_760_000_000_000u64;
    let compacted = json!({"manual": true, "pre_tokens": 21500, "summary": "What was done."});
    let trace = json!({
        "format": "tracecost.trace/v1",
        "name": "compacted",
        "model": "claude-sonnet-4-5",
        "status_quo": "claude-code-autocompact:trigger=recorded+claude-code:ttl=5m",
        "hidden_prefix_tokens": 20000,
        "messages": ok_turns(&["first", "second", "third", "fourth"], &long),
        "calls": [
            {"messages": 1, "start_ms": t0, "usage": usage(0, 20_410)},
            {"messages": 3, "start_ms": t0 + 10_000, "usage": usage(20_410, 420)},
            // After the /compact: the prefix read, a 1,500-token summary
            // and the files read again written.
            {"messages": 5, "start_ms": t0 + 20_000, "usage": usage(20_000, 1_500), "compacted": compacted},
            {"messages": 7, "start_ms": t0 + 30_000, "usage": usage(21_500, 420)},
        ]
    });
    let (_dir, file) = trace_file(&trace);
    let run = |args: &[&str]| -> Value {
        let o = crate::util::tracecost().args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let path = file.to_str().unwrap();
    let v = run(&["fidelity", path, "--format", "json"]);
    let s = &v["traces"][0];
    assert_eq!(
        s["config"],
        "claude-code-autocompact:trigger=recorded,summary=20000+claude-code:ttl=5m"
    );
    assert_eq!(
        (s["calls"].as_u64(), s["recorded_calls"].as_u64()),
        (Some(5), Some(4))
    );
    let r = run(&[
        "replay",
        path,
        "--config",
        "claude-code-autocompact+claude-code:ttl=5m",
        "--format",
        "json",
    ]);
    let calls = r["calls"].as_array().unwrap();
    let sent: Vec<u64> = calls
        .iter()
        .map(|c| c["messages"].as_u64().unwrap())
        .collect();
    // The summarising call sends the five messages and the instruction;
    // the history restarts at the summary.
    assert_eq!(sent, [1, 3, 6, 1, 3]);
    assert_eq!(r["totals"]["summary_calls"], 1);
    assert!(calls[2]["recorded"].is_null(), "{}", calls[2]);
    let after = &calls[3];
    let (sim, rec) = (total(after), total(&after["recorded"]));
    assert!(sim.abs_diff(rec) * 100 < rec, "{sim} vs {rec}");
}

/// An Anthropic API log is billed as its responses say they were served:
/// the same exchange with `service_tier: "batch"` costs half, as recorded
/// and as replayed; with `inference_geo: "us"` 1.1x (Opus 4.8).
#[test]
fn an_api_log_is_billed_at_the_tier_its_response_records() {
    let dir = tempfile::tempdir().unwrap();
    let log = |name: &str, extra: &str| {
        let line = format!(
            r#"{{"request":{{"model":"claude-opus-4-8","max_tokens":64,"messages":[{{"role":"user","content":"question {long}"}}]}},"timestamp":1790000000,"response":{{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-8","content":[{{"type":"text","text":"answer"}}],"stop_reason":"end_turn","usage":{{"input_tokens":1200,"output_tokens":20{extra}}}}}}}"#,
            long = "word ".repeat(1000)
        );
        let path = dir.path().join(name);
        std::fs::write(&path, line + "\n").unwrap();
        replay_status_quo(path.to_str().unwrap(), &["--cache", "none"])
    };
    let standard = log("standard.jsonl", r#","service_tier":"standard""#);
    let batch = log("batch.jsonl", r#","service_tier":"batch""#);
    let us = log("us.jsonl", r#","inference_geo":"us""#);
    let cost = |out: &Value, key: &str| out["calls"][0][key].as_f64().unwrap();
    for key in ["cost_usd", "recorded_cost_usd"] {
        let ratio = cost(&batch, key) / cost(&standard, key);
        assert!((ratio - 0.5).abs() < 1e-9, "{key}: {ratio}");
        let ratio = cost(&us, key) / cost(&standard, key);
        assert!((ratio - 1.1).abs() < 1e-9, "{key}: {ratio}");
    }
}

/// An OpenAI log's `service_tier: "flex"` bills the call at the Batch
/// API's rates (OpenAI's flex processing guide), half the `default`
/// tier's; `priority` is priced as standard.
#[test]
fn an_openai_log_served_by_the_flex_tier_is_billed_at_batch_rates() {
    let dir = tempfile::tempdir().unwrap();
    let log = |name: &str, tier: &str| {
        let line = format!(
            r#"{{"request":{{"model":"gpt-5.4","messages":[{{"role":"user","content":"question {long}"}}]}},"response":{{"id":"chatcmpl-1","object":"chat.completion","created":1790000000,"model":"gpt-5.4","choices":[{{"index":0,"message":{{"role":"assistant","content":"answer"}},"finish_reason":"stop"}}],"usage":{{"prompt_tokens":1200,"completion_tokens":20}},"service_tier":"{tier}"}}}}"#,
            long = "word ".repeat(1000)
        );
        let path = dir.path().join(name);
        std::fs::write(&path, line + "\n").unwrap();
        replay_status_quo(path.to_str().unwrap(), &["--cache", "none"])
    };
    let standard = log("default.jsonl", "default");
    let flex = log("flex.jsonl", "flex");
    let priority = log("priority.jsonl", "priority");
    let cost = |out: &Value, key: &str| out["calls"][0][key].as_f64().unwrap();
    for key in ["cost_usd", "recorded_cost_usd"] {
        let ratio = cost(&flex, key) / cost(&standard, key);
        assert!((ratio - 0.5).abs() < 1e-9, "{key}: {ratio}");
        assert_eq!(cost(&priority, key), cost(&standard, key), "{key}");
    }
}

/// A Bedrock log's model id names its inference profile: a `us.` profile
/// (one geography) is billed at the regional rate, 1.1x Opus 4.8's, a
/// `global.` profile at the standard rate.
#[test]
fn a_bedrock_regional_profile_is_billed_at_the_regional_rate() {
    let dir = tempfile::tempdir().unwrap();
    let log = |name: &str, profile: &str| {
        let line = json!({
            "timestamp": "2026-09-01T08:00:00Z",
            "request": {
                "url": format!("https://bedrock-runtime.us-east-1.amazonaws.com/model/{profile}.anthropic.claude-opus-4-8-v1%3A0/converse"),
                "body": {"messages": [{"role": "user", "content": [{"text": format!("question {}", "word ".repeat(1000))}]}]}
            },
            "response": {"status_code": 200, "body": {
                "output": {"message": {"role": "assistant", "content": [{"text": "answer"}]}},
                "stopReason": "end_turn",
                "usage": {"inputTokens": 1200, "outputTokens": 20, "totalTokens": 1220}
            }}
        });
        let path = dir.path().join(name);
        std::fs::write(&path, format!("{line}\n")).unwrap();
        replay_status_quo(path.to_str().unwrap(), &["--cache", "none"])
    };
    let global = log("global.jsonl", "global");
    let us = log("us.jsonl", "us");
    let cost = |out: &Value, key: &str| out["calls"][0][key].as_f64().unwrap();
    for key in ["cost_usd", "recorded_cost_usd"] {
        let ratio = cost(&us, key) / cost(&global, key);
        assert!((ratio - 1.1).abs() < 1e-9, "{key}: {ratio}");
    }
}

//! `tracecost usage`: recorded usage priced like ccusage, checked against
//! figures computed by hand from a small fixture.

fn usage(args: &[&str]) -> serde_json::Value {
    let out = crate::util::tracecost()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("usage")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn totals_match_the_hand_computed_figures() {
    let v = usage(&["tests/fixtures/usage"]);
    // s1: msg_1 counted once with its larger row (10 in, 1000 5m-write,
    // 20 out), msg_2 (3 in, 200 1h-write, 1000 read, 50 out) on Sonnet 4.5
    // ($3 / $3.75 / $6 / $0.30 / $15 per MTok); msg_3 on Haiku 4.5 (100 in,
    // 10 out at $1 / $5); the <synthetic> row and the broken line are not
    // billed. s2: Opus 4.1, 1 in, 300 writes without a breakdown (5m),
    // 50 read, 7 out ($15 / $18.75 / $1.50 / $75).
    let s1 = 10.0 * 3.0
        + 20.0 * 15.0
        + 1000.0 * 3.75
        + 3.0 * 3.0
        + 50.0 * 15.0
        + 200.0 * 6.0
        + 1000.0 * 0.3
        + 100.0 * 1.0
        + 10.0 * 5.0;
    let s2 = 1.0 * 15.0 + 7.0 * 75.0 + 300.0 * 18.75 + 50.0 * 1.5;
    let t = &v["totals"];
    assert_eq!(t["inputTokens"], 114);
    assert_eq!(t["outputTokens"], 87);
    assert_eq!(t["cacheCreationTokens"], 1500);
    assert_eq!(t["cacheReadTokens"], 1050);
    assert_eq!(t["totalTokens"], 114 + 87 + 1500 + 1050);
    let total = t["totalCost"].as_f64().unwrap();
    let expected = (s1 + s2) / 1e6;
    assert!(
        ((total - expected) / expected).abs() < 1e-9,
        "{total} vs {expected}"
    );
    let sessions = v["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[0]["sessionId"], "s1");
    assert_eq!(sessions[0]["projectPath"], "-home-u-app");
    assert_eq!(sessions[0]["firstActivity"], "2025-07-01T09:00:02.000Z");
    assert_eq!(sessions[0]["lastActivity"], "2025-07-01T09:02:00.000Z");
    assert_eq!(sessions[0]["modelsUsed"].as_array().unwrap().len(), 2);
    let c1 = sessions[0]["totalCost"].as_f64().unwrap();
    assert!((c1 - s1 / 1e6).abs() < 1e-12);
    for key in [
        "modelName",
        "inputTokens",
        "outputTokens",
        "cacheCreationTokens",
        "cacheReadTokens",
        "cost",
    ] {
        assert!(
            sessions[0]["modelBreakdowns"][0].get(key).is_some(),
            "{key}"
        );
    }
}

#[test]
fn claude_config_dir_is_the_default_root() {
    let out = crate::util::tracecost()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("CLAUDE_CONFIG_DIR", "tests/fixtures/usage")
        .args(["usage", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["totals"]["inputTokens"], 114);
}

/// The real transcripts beside the project (development and CI).
#[test]
#[cfg_attr(
    not(shared_corpus),
    ignore = "needs the real corpora beside the checkout"
)]
fn runs_on_the_shared_corpus() {
    let corpus =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/claude-code");
    assert!(corpus.is_dir(), "{} is missing", corpus.display());
    let v = usage(&[corpus.to_str().unwrap()]);
    // The sessions `report` counts: ccusage lists 72, each top-level
    // `agent-*.jsonl` as a session of its own.
    assert_eq!(v["sessions"].as_array().unwrap().len(), 43);
    assert_eq!(v["totals"]["totalTokens"], 39_678_343);
    // ccusage's total for the same files (each response priced on its own;
    // pricing session sums instead gave $45.66).
    let cost = v["totals"]["totalCost"].as_f64().unwrap();
    assert!((cost - 33.415_973_7).abs() < 1e-6, "{cost}");
}

/// One assistant usage line of a transcript.
fn usage_line(ts: &str, id: &str, model: &str, [input, write, read, output]: [u64; 4]) -> String {
    serde_json::json!({
        "type": "assistant",
        "timestamp": ts,
        "sessionId": "s",
        "version": "2.0.40",
        "requestId": format!("req_{id}"),
        "message": {
            "id": id,
            "model": model,
            "role": "assistant",
            "content": [{"type": "text", "text": "ok"}],
            "usage": {
                "input_tokens": input,
                "cache_creation_input_tokens": write,
                "cache_read_input_tokens": read,
                "output_tokens": output,
                "cache_creation": {
                    "ephemeral_5m_input_tokens": write,
                    "ephemeral_1h_input_tokens": 0
                }
            }
        }
    })
    .to_string()
}

/// USD of [input, 5m write, read, output] tokens at per-MTok prices.
fn priced(t: [u64; 4], p: [f64; 4]) -> f64 {
    t.iter().zip(p).map(|(&n, usd)| n as f64 * usd).sum::<f64>() / 1e6
}

#[test]
fn the_long_context_premium_is_decided_per_response() {
    const SONNET_45: &str = "claude-sonnet-4-5-20250929";
    const BASE: [f64; 4] = [3.0, 3.75, 0.30, 15.0];
    const PREMIUM: [f64; 4] = [6.0, 7.5, 0.60, 22.5];
    // 96,000 input tokens each; the session's sum is 288,000.
    let small = [1_000, 5_000, 90_000, 1_000];
    // 200,001 input tokens: above the threshold on its own.
    let big = [1, 10_000, 190_000, 1_000];
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects").join("-home-u-big");
    std::fs::create_dir_all(&project).unwrap();
    let many: Vec<String> = (1..=3)
        .map(|i| {
            let ts = format!("2025-08-01T10:0{i}:00.000Z");
            usage_line(&ts, &format!("m{i}"), SONNET_45, small)
        })
        .collect();
    std::fs::write(project.join("many.jsonl"), many.join("\n")).unwrap();
    let one = [
        usage_line("2025-08-01T11:00:00.000Z", "b1", SONNET_45, big),
        usage_line("2025-08-01T11:01:00.000Z", "b2", "claude-sonnet-4-6", big),
        usage_line(
            "2025-08-01T11:02:00.000Z",
            "b3",
            "claude-opus-4-5-20251101",
            big,
        ),
    ];
    std::fs::write(project.join("one.jsonl"), one.join("\n")).unwrap();

    let v = usage(&[dir.path().to_str().unwrap()]);
    let sessions = v["sessions"].as_array().unwrap();
    let cost_of = |session: &str, model: &str| -> f64 {
        let s = sessions.iter().find(|s| s["sessionId"] == session).unwrap();
        let m = s["modelBreakdowns"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["modelName"] == model)
            .unwrap();
        m["cost"].as_f64().unwrap()
    };
    let close = |got: f64, want: f64| {
        assert!(
            (got - want).abs() <= 1e-12 * want.max(1.0),
            "{got} vs {want}"
        )
    };
    // Many calls under the threshold: the base rate, whatever their sum.
    close(cost_of("many", SONNET_45), 3.0 * priced(small, BASE));
    // One call over it on a model with a premium: every token, output
    // included, at the premium.
    close(cost_of("one", SONNET_45), priced(big, PREMIUM));
    // Models without a premium never pay one.
    close(cost_of("one", "claude-sonnet-4-6"), priced(big, BASE));
    close(
        cost_of("one", "claude-opus-4-5-20251101"),
        priced(big, [5.0, 6.25, 0.50, 25.0]),
    );
}

/// ccusage 20.0.24's `ccusage claude session --json --offline` of a small
/// Claude Code folder (two sessions, a subagent, three models, a response
/// streamed as two rows), as it printed it.
const CCUSAGE_CLAUDE_SESSION: &str = "tests/fixtures/ccusage/claude-session.json";

#[test]
fn json_is_ccusage_claude_session_byte_for_byte() {
    let out = crate::util::tracecost()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["usage", "tests/fixtures/usage-ccusage", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let ours = String::from_utf8(out.stdout).unwrap();
    insta::assert_snapshot!("usage_json", ours);
    // Every key in ccusage's order, every value, every float bit.
    let theirs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CCUSAGE_CLAUDE_SESSION),
    )
    .unwrap();
    assert_eq!(ours, theirs);
}

/// A made-up Codex home: session A (gpt-5.3-codex, then gpt-4.1, one
/// repeated token_count), session B (no model recorded: ccusage's `gpt-5`),
/// an archived copy of B and a damaged line.
const CODEX_HOME: &str = "crates/tracecost-import/tests/fixtures/codex/usage-home";

/// ccusage 20.0.24's `ccusage codex session --json --offline` with
/// `CODEX_HOME` at [`CODEX_HOME`], as it printed it.
const CCUSAGE_CODEX_SESSION: &str =
    "crates/tracecost-import/tests/fixtures/codex/ccusage-codex-session.json";

/// `tracecost usage --json` with no PATH, `HOME` an empty folder (no
/// Claude Code data) and `CODEX_HOME` at `codex_home`.
fn usage_at_codex_home(codex_home: &str) -> String {
    usage_view_at_codex_home(codex_home, &[])
}

/// [`usage_at_codex_home`] of a view (`daily`, `monthly`; none: sessions).
fn usage_view_at_codex_home(codex_home: &str, view: &[&str]) -> String {
    let home = tempfile::tempdir().unwrap();
    let out = crate::util::tracecost()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("HOME", home.path())
        .env("CODEX_HOME", codex_home)
        .arg("usage")
        .args(view)
        .arg("--json")
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn codex_sessions_match_the_hand_computed_figures() {
    let v: serde_json::Value = serde_json::from_str(&usage_at_codex_home(CODEX_HOME)).unwrap();
    // Session A, gpt-5.3-codex ($1.75 in / $0.175 cached / $14 out per
    // MTok): calls of 10,000 in, 500 out and 12,000 in (9,984 cached),
    // 300 out; the repeated count between them not counted. Input less
    // cached: 12,016. 12,016 × 1.75 + 9,984 × 0.175 + 800 × 14 = 33,975.2.
    // gpt-4.1 ($2 / $0.50 / $8): 5,000 in (4,096 cached), 100 out:
    // 904 × 2 + 4,096 × 0.5 + 100 × 8 = 4,656.
    // Session B, gpt-5 assumed ($1.25 / $0.125 / $10): 2,000 in, 50 out,
    // then a total-only count adding 3,000 in (1,024 cached), 70 out:
    // 3,976 × 1.25 + 1,024 × 0.125 + 120 × 10 = 6,298. (µ$ throughout.)
    let a = (33_975.2 + 4_656.0) / 1e6;
    let b = 6_298.0 / 1e6;
    let close = |got: &serde_json::Value, want: f64| {
        let got = got.as_f64().unwrap();
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    };
    let s = v["sessions"].as_array().unwrap();
    assert_eq!(s.len(), 2, "the archived copy of B is not counted again");
    // By session id: the rollout's path below sessions/.
    assert_eq!(
        s[0]["sessionId"],
        "2026/08/01/rollout-2026-08-01T09-00-00-0198d000-0000-7000-8000-00000000000a"
    );
    assert_eq!(s[0]["directory"], "2026/08/01");
    assert_eq!(s[0]["inputTokens"], 12_016 + 904);
    assert_eq!(s[0]["cacheReadTokens"], 9_984 + 4_096);
    assert_eq!(s[0]["cacheCreationTokens"], 0);
    assert_eq!(s[0]["outputTokens"], 900);
    assert_eq!(s[0]["reasoningOutputTokens"], 200 + 100);
    assert_eq!(s[0]["totalTokens"], 22_000 + 800 + 5_000 + 100);
    assert_eq!(s[0]["lastActivity"], "2026-08-01T09:05:03.125Z");
    close(&s[0]["costUSD"], a);
    close(&s[0]["models"]["gpt-4.1"]["cacheReadTokens"], 4_096.0);
    assert_eq!(s[1]["models"]["gpt-5"]["isFallback"], true);
    assert_eq!(s[1]["inputTokens"], 3_976);
    close(&s[1]["costUSD"], b);
    let t = &v["totals"];
    assert_eq!(t["inputTokens"], 16_896);
    assert_eq!(t["cacheReadTokens"], 15_104);
    assert_eq!(t["outputTokens"], 1_020);
    assert_eq!(t["totalTokens"], 33_020);
    close(&t["costUSD"], a + b);
}

#[test]
fn codex_json_is_ccusage_codex_session_byte_for_byte() {
    let ours = usage_at_codex_home(CODEX_HOME);
    insta::assert_snapshot!("usage_codex_json", ours);
    let theirs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CCUSAGE_CODEX_SESSION),
    )
    .unwrap();
    assert_eq!(ours, theirs);
}

#[test]
fn codex_beside_claude_code_gives_the_unified_shape() {
    let v = usage(&["tests/fixtures/usage-ccusage", CODEX_HOME]);
    let s = v["session"].as_array().unwrap();
    assert_eq!(s.len(), 4);
    let codex: Vec<&serde_json::Value> = s.iter().filter(|s| s["agent"] == "codex").collect();
    assert_eq!(codex.len(), 2);
    // The costliest first, whatever the agent: Claude Code's $0.092 session,
    // Codex's A ($0.0386), Claude Code's $0.0074, Codex's B ($0.0063).
    let agents: Vec<&str> = s.iter().map(|s| s["agent"].as_str().unwrap()).collect();
    assert_eq!(agents, ["claude", "codex", "claude", "codex"]);
    assert_eq!(s[1]["metadata"]["reasoningOutputTokens"], 300);
    assert_eq!(s[1]["modelBreakdowns"][0]["modelName"], "gpt-5.3-codex");
    assert_eq!(
        s[1]["period"],
        "2026/08/01/rollout-2026-08-01T09-00-00-0198d000-0000-7000-8000-00000000000a"
    );
    // Claude Code's sessions keep their figures (1,525 input tokens).
    assert_eq!(v["totals"]["inputTokens"], 1_525 + 16_896);
}

#[test]
fn without_codex_sessions_the_default_roots_are_claude_codes() {
    // A Codex home without rollouts adds nothing.
    let empty = tempfile::tempdir().unwrap();
    let out = crate::util::tracecost()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("CLAUDE_CONFIG_DIR", "tests/fixtures/usage")
        .env("CODEX_HOME", empty.path())
        .args(["usage", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["totals"]["inputTokens"], 114);
    assert!(v.get("sessions").is_some());
}

/// A Codex rollout of one gpt-5.6-luna call on `day` (100,000 input
/// tokens, none cached, 100,000 output), written under `home`.
fn luna_rollout(home: &std::path::Path, day: &str, id: &str) {
    let (y, rest) = day.split_at(4);
    let (m, d) = (&rest[1..3], &rest[4..6]);
    let dir = home.join("sessions").join(y).join(m).join(d);
    std::fs::create_dir_all(&dir).unwrap();
    let ts = |t: &str| format!("{day}T{t}Z");
    let usage = serde_json::json!({"input_tokens":100_000,"cached_input_tokens":0,
        "output_tokens":100_000,"reasoning_output_tokens":0,"total_tokens":200_000});
    let lines = [
        serde_json::json!({"timestamp":ts("12:00:00.000"),"type":"session_meta","payload":{
            "id":id,"timestamp":ts("12:00:00.000"),"cwd":"/home/dev/app",
            "originator":"codex_cli_rs","cli_version":"0.142.0","source":"cli",
            "model_provider":"openai"}}),
        serde_json::json!({"timestamp":ts("12:00:01.000"),"type":"turn_context","payload":{
            "cwd":"/home/dev/app","approval_policy":"on-request","model":"gpt-5.6-luna",
            "effort":"medium","summary":"auto"}}),
        serde_json::json!({"timestamp":ts("12:00:01.000"),"type":"response_item","payload":{
            "type":"message","role":"user","content":[{"type":"input_text","text":"go"}]}}),
        serde_json::json!({"timestamp":ts("12:00:09.000"),"type":"response_item","payload":{
            "type":"message","role":"assistant","content":[{"type":"output_text","text":"done"}]}}),
        serde_json::json!({"timestamp":ts("12:00:09.500"),"type":"event_msg","payload":{
            "type":"token_count","info":{"total_token_usage":usage,"last_token_usage":usage,
            "model_context_window":1_000_000}}}),
    ];
    let text: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    let name = format!("rollout-{day}T12-00-00-{id}.jsonl");
    std::fs::write(dir.join(name), text.join("\n") + "\n").unwrap();
}

#[test]
fn a_call_is_priced_at_the_price_in_force_on_its_day() {
    // OpenAI cut gpt-5.6-luna 5x on 2026-07-30: $1 / $6 per MTok before,
    // $0.20 / $1.20 from that day.
    let home = tempfile::tempdir().unwrap();
    luna_rollout(
        home.path(),
        "2026-07-29",
        "0198d000-0000-7000-8000-0000000000c1",
    );
    luna_rollout(
        home.path(),
        "2026-07-31",
        "0198d000-0000-7000-8000-0000000000c2",
    );
    let v: serde_json::Value =
        serde_json::from_str(&usage_at_codex_home(home.path().to_str().unwrap())).unwrap();
    let cost = |id: &str| {
        let s = v["sessions"].as_array().unwrap();
        let s = s
            .iter()
            .find(|s| s["sessionId"].as_str().unwrap().ends_with(id))
            .unwrap();
        s["costUSD"].as_f64().unwrap()
    };
    assert!((cost("c1") - 0.7).abs() < 1e-9, "{}", cost("c1"));
    assert!((cost("c2") - 0.14).abs() < 1e-9, "{}", cost("c2"));
}

/// [`usage_line`] of session `session`.
fn session_line(session: &str, ts: &str, id: &str, tokens: [u64; 4]) -> String {
    let mut v: serde_json::Value =
        serde_json::from_str(&usage_line(ts, id, "claude-sonnet-4-5-20250929", tokens)).unwrap();
    v["sessionId"] = session.into();
    v.to_string()
}

/// A session over two days, and an older Claude Code's subagent log
/// beside it (`agent-<id>.jsonl`, its rows naming the session).
fn two_day_session() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("projects").join("-home-u-app");
    std::fs::create_dir_all(&project).unwrap();
    let main = [
        session_line("sess-1", "2025-08-01T23:59:00.000Z", "m1", [10, 100, 0, 5]),
        session_line("sess-1", "2025-08-02T00:01:00.000Z", "m2", [20, 0, 100, 6]),
    ];
    std::fs::write(project.join("sess-1.jsonl"), main.join("\n")).unwrap();
    let agent = [session_line(
        "sess-1",
        "2025-08-02T10:00:00.000Z",
        "a1",
        [30, 50, 0, 7],
    )];
    std::fs::write(project.join("agent-9f.jsonl"), agent.join("\n")).unwrap();
    dir
}

#[test]
fn a_top_level_subagent_log_counts_in_its_session_as_report_counts_it() {
    let dir = two_day_session();
    let v = usage(&[dir.path().to_str().unwrap()]);
    let sessions = v["sessions"].as_array().unwrap();
    let ids: Vec<&str> = sessions
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["sess-1"]);
    assert_eq!(sessions[0]["inputTokens"], 60);
    assert_eq!(sessions[0]["outputTokens"], 18);
}

#[test]
fn daily_and_monthly_split_the_sessions_by_utc_day_in_ccusages_shape() {
    let dir = two_day_session();
    let root = dir.path().to_str().unwrap();
    let daily = usage(&["daily", root]);
    let days = daily["daily"].as_array().unwrap();
    let by_day: Vec<(&str, u64, u64)> = days
        .iter()
        .map(|d| {
            (
                d["date"].as_str().unwrap(),
                d["inputTokens"].as_u64().unwrap(),
                d["cacheCreationTokens"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(by_day, [("2025-08-01", 10, 100), ("2025-08-02", 50, 50)]);
    // ccusage's keys, in its order (by name).
    let keys: Vec<&str> = days[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "cacheCreationTokens",
            "cacheReadTokens",
            "date",
            "inputTokens",
            "modelBreakdowns",
            "modelsUsed",
            "outputTokens",
            "totalCost",
            "totalTokens"
        ]
    );
    let monthly = usage(&["monthly", root]);
    let months = monthly["monthly"].as_array().unwrap();
    assert_eq!(months.len(), 1);
    assert_eq!(months[0]["month"], "2025-08");
    // The three views add up to the same bill.
    let session = usage(&["session", root]);
    for v in [&daily, &monthly] {
        assert_eq!(v["totals"]["totalTokens"], session["totals"]["totalTokens"]);
        let (a, b) = (
            v["totals"]["totalCost"].as_f64().unwrap(),
            session["totals"]["totalCost"].as_f64().unwrap(),
        );
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    // --since keeps the days from it on (both forms of a day).
    for since in ["20250802", "2025-08-02"] {
        let later = usage(&["daily", root, "--since", since]);
        let days: Vec<&str> = later["daily"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["date"].as_str().unwrap())
            .collect();
        assert_eq!(days, ["2025-08-02"], "{since}");
    }
    // A session view keeps the sessions last active within the range.
    let none = usage(&[root, "--until", "20250801"]);
    assert_eq!(none["sessions"].as_array().unwrap().len(), 0);
    assert_eq!(none["totals"]["totalTokens"], 0);
}

#[test]
fn a_day_that_is_not_one_is_refused_in_one_line() {
    let out = crate::util::tracecost()
        .args(["usage", "daily", "--since", "yesterday", "."])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("`yesterday` is not a day: expected YYYYMMDD or YYYY-MM-DD"),
        "{err}"
    );
}

/// `usage daily` and `usage monthly` of Codex data print what ccusage
/// 20.0.24's `ccusage codex daily|monthly --json --offline -z UTC` printed
/// for the same Codex home, byte for byte (each period's models priced on
/// the period's sums per day, as ccusage prices them).
#[test]
fn codex_daily_and_monthly_are_ccusage_codex_byte_for_byte() {
    for view in ["daily", "monthly"] {
        let ours = usage_view_at_codex_home(CODEX_HOME, &[view]);
        let theirs = std::fs::read_to_string(crate::util::repo(&format!(
            "crates/tracecost-import/tests/fixtures/codex/ccusage-codex-{view}.json"
        )))
        .unwrap();
        assert_eq!(ours, theirs, "{view}");
    }
}

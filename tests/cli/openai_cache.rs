//! OpenAI traces replayed under OpenAI's automatic cache: the status quo,
//! the recorded `cached_tokens` reproduced call by call, the idle time as a
//! parameter, and the default grid of an OpenAI fleet.
//!
//! `tests/fixtures/openai/agent_cached.jsonl` is a Chat Completions log of
//! an agent's nine calls whose usage was written from OpenAI's documented
//! rules by `make_agent_cached.py` (prompt tokens as tracecost counts them;
//! a read of the previous request's prefix from 1,024 tokens in steps of
//! 128 when it was used less than 5 minutes before, else none).
//! `tests/fixtures/gemini/agent_cached.jsonl` is the same agent as a Gemini
//! generateContent log, its usage written from Gemini's implicit-cache
//! rules by the script beside it (reads to the token, from 2,048 tokens).

use serde_json::Value;

use crate::util::{fixture, outcome, repo, tracecost};

fn agent() -> String {
    fixture("openai/agent_cached.jsonl")
        .to_str()
        .unwrap()
        .to_owned()
}

fn json_of(args: &[&str]) -> Value {
    let (code, out, err) = outcome(tracecost().args(args).output().unwrap());
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// A five-message conversation over a 3,000-token system prompt, in the
/// canonical format, written to `dir`: three calls starting at
/// `starts_ms`, the first user message `opening`.
fn conversation(
    dir: &std::path::Path,
    provider: &str,
    model: &str,
    opening: &str,
    starts_ms: [u64; 3],
) -> String {
    let json = serde_json::json!({
        "format": "tracecost.trace/v1",
        "name": provider,
        "provider": provider,
        "model": model,
        "system": [{"type": "text", "text": "Answer from the documents. ".repeat(500)}],
        "messages": [
            {"role": "user", "content": opening},
            {"role": "assistant", "content": "Noted."},
            {"role": "user", "content": "And then?"},
            {"role": "assistant", "content": "It reads it cheaper."},
            {"role": "user", "content": "Thanks."}
        ],
        "calls": [
            {"messages": 1, "start_ms": starts_ms[0]},
            {"messages": 3, "start_ms": starts_ms[1]},
            {"messages": 5, "start_ms": starts_ms[2]}
        ]
    });
    let path = dir.join(format!("{provider}.json"));
    std::fs::write(&path, json.to_string()).unwrap();
    path.to_str().unwrap().to_owned()
}

fn reads(v: &Value) -> Vec<(u64, u64)> {
    v["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["cache_read_input_tokens"].as_u64().unwrap(),
                c["recorded"]["cache_read_input_tokens"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_status_quo_reproduces_the_recorded_reads_call_by_call() {
    let agent = agent();
    let v = json_of(&["replay", &agent, "--format", "json"]);
    assert_eq!(v["config"], "off+openai-auto");
    assert_eq!(v["model"], "gpt-4o-mini");
    let reads = reads(&v);
    assert_eq!(reads.len(), 9);
    for (i, (simulated, recorded)) in reads.iter().enumerate() {
        assert_eq!(simulated, recorded, "call {}", i + 1);
    }
    // The gaps of 8 and 27 minutes outlast the idle time: those calls, and
    // the first, read nothing; the others read.
    let cold: Vec<usize> = (0..9).filter(|&i| reads[i].1 == 0).collect();
    assert_eq!(cold, [0, 4, 7]);
    // No write fee: the bill is input, reads and output alone.
    let t = &v["totals"];
    assert_eq!(t["cache_creation_input_tokens"], 0);
    let (sim, rec) = (
        t["cost_usd"].as_f64().unwrap(),
        t["recorded_cost_usd"].as_f64().unwrap(),
    );
    assert!((sim - rec).abs() < 1e-12, "{sim} vs {rec}");
}

#[test]
fn a_gemini_status_quo_reproduces_the_recorded_reads_call_by_call() {
    let log = fixture("gemini/agent_cached.jsonl");
    let v = json_of(&["replay", log.to_str().unwrap(), "--format", "json"]);
    assert_eq!(v["config"], "off+gemini-implicit");
    assert_eq!(v["model"], "gemini-2.5-flash");
    let reads = reads(&v);
    assert_eq!(reads.len(), 9);
    for (i, (simulated, recorded)) in reads.iter().enumerate() {
        assert_eq!(simulated, recorded, "call {}", i + 1);
    }
    // The first call, the second (the first left under 2,048 tokens) and
    // those after the 8- and 27-minute pauses read nothing.
    let cold: Vec<usize> = (0..9).filter(|&i| reads[i].1 == 0).collect();
    assert_eq!(cold, [0, 1, 4, 7]);
    let t = &v["totals"];
    let (sim, rec) = (
        t["cost_usd"].as_f64().unwrap(),
        t["recorded_cost_usd"].as_f64().unwrap(),
    );
    assert!((sim - rec).abs() < 1e-12, "{sim} vs {rec}");
}

#[test]
fn fidelity_leaves_out_what_recorded_nothing_and_cannot_be_priced() {
    // A folder holding a request body with no model and no usage beside
    // a log with usage: the body is named and left out, the log compared.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("gemini/agent_cached.jsonl"),
        dir.path().join("agent.jsonl"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("body.json"),
        r#"{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}"#,
    )
    .unwrap();
    let (code, out, err) = outcome(
        tracecost()
            .args(["fidelity", dir.path().to_str().unwrap()])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains(
            "recorded no usage and names no model to price it as (model `unknown`): not compared"
        ),
        "{err}"
    );
    assert!(out.contains("agent "), "{out}");
    assert!(!out.contains("body "), "{out}");
}

#[test]
fn the_idle_time_is_a_parameter() {
    let agent = agent();
    let v = json_of(&[
        "replay",
        &agent,
        "--config",
        "off+openai-auto:idle=10m",
        "--format",
        "json",
    ]);
    assert_eq!(v["config"], "off+openai-auto:retention=in-memory,idle=10m");
    let ten = reads(&v);
    // The 8-minute gap is within 10 minutes: call 5 reads what call 4 sent.
    assert!(ten[4].0 > 0 && ten[4].1 == 0, "{ten:?}");
    assert_eq!(ten[7].0, 0, "27 minutes is past any in-memory idle time");
    let v = json_of(&[
        "replay",
        &agent,
        "--config",
        "off+openai-auto:retention=24h",
        "--format",
        "json",
    ]);
    assert!(reads(&v)[1..].iter().all(|r| r.0 > 0));
}

#[test]
fn anthropic_markers_are_refused_on_an_openai_trace() {
    let agent = agent();
    let (code, out, err) = outcome(
        tracecost()
            .args(["replay", &agent, "--cache", "tail"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(
        err.contains("cache policy tail:ttl=5m places cache_control markers, which provider openai does not accept"),
        "{err}"
    );
    // A grid naming only such a policy is refused too, not swept empty.
    let (code, _, err) = outcome(
        tracecost()
            .args(["sweep", &agent, "--cache", "tail"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("which provider openai does not accept"),
        "{err}"
    );
    // And OpenAI's cache on an Anthropic trace.
    let massage = crate::util::repo("traces/massage-gun.json");
    let (code, _, err) = outcome(
        tracecost()
            .args([
                "replay",
                massage.to_str().unwrap(),
                "--cache",
                "openai-auto",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(err.contains("is OpenAI's automatic cache"), "{err}");
}

#[test]
fn an_openai_fleet_sweeps_its_own_cache_policies() {
    let agent = agent();
    let v = json_of(&["sweep", &agent, "--format", "json"]);
    let rows = v["traces"][0]["rows"].as_array().unwrap();
    let configs: Vec<&str> = rows
        .iter()
        .map(|r| r["result"]["config"].as_str().unwrap())
        .collect();
    // Only policies OpenAI runs: its cache and none; no Anthropic markers,
    // no Anthropic server-side clearing.
    assert!(
        configs
            .iter()
            .all(|c| c.ends_with("+openai-auto") || c.ends_with("+none")),
        "{configs:?}"
    );
    assert!(configs.iter().all(|c| !c.starts_with("clear-tool-uses")));
    assert!(configs.contains(&"ledger:t=2000,k=1+openai-auto"));
    let s = &v["traces"][0];
    let base = &rows[s["baseline"].as_u64().unwrap() as usize];
    assert_eq!(base["result"]["config"], "off+openai-auto");
    // Compaction breaks the prefix the cache holds: the cache's price is
    // in the sweep, so a compaction can cost more than none.
    let cost = |c: &str| {
        rows.iter().find(|r| r["result"]["config"] == c).unwrap()["result"]["totals"]["cost_usd"]
            .as_f64()
            .unwrap()
    };
    assert!(cost("ledger:t=8000,k=2+openai-auto") > cost("off+openai-auto"));
    assert!(cost("off+none") > cost("off+openai-auto"));
}

#[test]
fn from_gpt_5_6_on_the_cache_works_at_breakpoints_and_bills_writes() {
    let agent = agent();
    let v = json_of(&["replay", &agent, "--model", "gpt-5.6", "--format", "json"]);
    assert_eq!(v["model"], "gpt-5.6");
    let calls = v["calls"].as_array().unwrap();
    let total = |c: &Value| {
        [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ]
        .iter()
        .map(|k| c[k].as_u64().unwrap())
        .sum::<u64>()
    };
    // The implicit breakpoint on each prompt's end: every call writes what
    // follows its read, and reads all the call before sent, exactly (no
    // 128-token steps): every pause here is under the 30-minute TTL.
    for (i, c) in calls.iter().enumerate() {
        let write = c["cache_creation_input_tokens"].as_u64().unwrap();
        let read = c["cache_read_input_tokens"].as_u64().unwrap();
        assert_eq!(read + write, total(c), "call {}", i + 1);
        if i > 0 {
            assert_eq!(read, total(&calls[i - 1]), "call {}", i + 1);
        }
    }
}

#[test]
fn a_gemini_trace_runs_under_its_implicit_cache() {
    // Three calls of a growing conversation over a 3,000-token system
    // prompt, a minute apart, in the canonical format.
    let dir = tempfile::tempdir().unwrap();
    let doc = "Gemini keeps the common prefix of requests. ".repeat(60);
    let path = conversation(
        dir.path(),
        "google",
        "gemini-2.5-flash",
        &doc,
        [0, 60_000, 120_000],
    );
    let v = json_of(&["replay", &path, "--format", "json"]);
    assert_eq!(v["config"], "off+gemini-implicit");
    let calls = v["calls"].as_array().unwrap();
    let read = |i: usize| calls[i]["cache_read_input_tokens"].as_u64().unwrap();
    let total = |i: usize| {
        ["input_tokens", "cache_read_input_tokens"]
            .iter()
            .map(|k| calls[i][k].as_u64().unwrap())
            .sum::<u64>()
    };
    // Each call reads all the one before sent, to the token; no writes.
    assert_eq!(read(0), 0);
    assert_eq!(read(1), total(0));
    assert_eq!(read(2), total(1));
    assert_eq!(v["totals"]["cache_creation_input_tokens"], 0);
    // OpenAI's cache does not apply to it.
    let (code, _, err) = outcome(
        tracecost()
            .args(["replay", &path, "--cache", "openai-auto"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(err.contains("is OpenAI's automatic cache"), "{err}");
}

#[test]
fn a_bedrock_trace_caches_at_its_cache_points() {
    // A Claude model on Bedrock, four calls a minute apart over a long
    // system prompt: cache points after the system prompt and on the last
    // block, read and written as Anthropic's breakpoints are.
    let system = "Answer from the documents. ".repeat(400);
    let mut messages = Vec::new();
    let mut calls = Vec::new();
    for i in 0..4 {
        messages.push(serde_json::json!({"role": "user", "content": format!("question {i}: {}", "why? ".repeat(50))}));
        calls.push(serde_json::json!({"messages": messages.len(), "start_ms": i * 60000}));
        messages.push(serde_json::json!({"role": "assistant", "content": "because"}));
    }
    let json = serde_json::json!({
        "format": "tracecost.trace/v1",
        "name": "b",
        "provider": "bedrock-converse",
        "model": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "system": [{"type": "text", "text": system}],
        "messages": messages,
        "calls": calls,
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.json");
    std::fs::write(&path, json.to_string()).unwrap();
    let path = path.to_str().unwrap();
    let v = json_of(&["replay", path, "--format", "json"]);
    assert_eq!(v["config"], "off+none", "no cache points recorded");
    let v = json_of(&[
        "replay",
        path,
        "--cache",
        "bedrock-cachepoint",
        "--format",
        "json",
    ]);
    assert_eq!(v["config"], "off+bedrock-cachepoint:ttl=5m");
    assert_eq!(v["model"], "claude-sonnet-4-5-20250929");
    let calls = v["calls"].as_array().unwrap();
    let (w0, r1) = (
        calls[0]["cache_creation_input_tokens"].as_u64().unwrap(),
        calls[1]["cache_read_input_tokens"].as_u64().unwrap(),
    );
    // The first call writes its whole prompt; the second reads it.
    assert!(w0 > 2000, "{w0}");
    assert_eq!(r1, w0);
    // Anthropic's markers are refused, as cache points are elsewhere.
    let (code, _, err) = outcome(
        tracecost()
            .args(["replay", path, "--cache", "tail"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(err.contains("does not accept"), "{err}");
    let massage = crate::util::repo("traces/massage-gun.json");
    let (code, _, err) = outcome(
        tracecost()
            .args([
                "replay",
                massage.to_str().unwrap(),
                "--cache",
                "bedrock-cachepoint",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(err.contains("cachePoint"), "{err}");
}

#[test]
fn a_gemini_log_replays_as_googles_without_a_format_named() {
    let log = crate::util::repo("crates/tracecost-import/tests/fixtures/gemini/gm_pairs.jsonl");
    let v = json_of(&["replay", log.to_str().unwrap(), "--format", "json"]);
    assert_eq!(v["config"], "off+gemini-implicit");
    assert_eq!(v["model"], "gemini-2.5-flash");
    let calls = v["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 3);
    // Priced at Gemini 2.5 Flash's rates: the recorded bill of the first
    // call is its 2,300 input and 52 output tokens.
    let first = calls[0]["recorded_cost_usd"].as_f64().unwrap();
    assert!(
        (first - (2300.0 * 0.3 + 52.0 * 2.5) / 1e6).abs() < 1e-12,
        "{first}"
    );
}

#[test]
fn a_bedrock_converse_log_replays_its_recorded_cache_points() {
    let log = crate::util::repo("crates/tracecost-import/tests/fixtures/bedrock/cv_pairs.jsonl");
    let v = json_of(&["replay", log.to_str().unwrap(), "--format", "json"]);
    // The cache points it carried, replayed with Anthropic's rules.
    assert_eq!(v["config"], "off+recorded");
    assert_eq!(v["model"], "claude-sonnet-4-5-20250929");
    let calls = v["calls"].as_array().unwrap();
    assert!(calls[0]["cache_creation_input_tokens"].as_u64().unwrap() > 0);
    assert!(calls[1]["cache_read_input_tokens"].as_u64().unwrap() > 0);
    // Priced as that model at the regional rate of its `us.` profile
    // (1.1x): the recorded bill of the second call.
    let rec = calls[1]["recorded_cost_usd"].as_f64().unwrap();
    let expect = (3.0 * 3.0 + 2000.0 * 0.3 + 130.0 * 3.75 + 20.0 * 15.0) / 1e6 * 1.1;
    assert!((rec - expect).abs() < 1e-12, "{rec} vs {expect}");
}

#[test]
fn explicit_breakpoints_hold_the_system_prompt_for_their_ttl() {
    // A GPT-5.6 conversation over a 3,000-token system prompt whose third
    // call comes 40 minutes after the second: past the implicit
    // breakpoint's 30 minutes, within an explicit one's 12 hours.
    let dir = tempfile::tempdir().unwrap();
    let doc = "OpenAI matches a prefix exactly at a breakpoint. ".repeat(60);
    let path = &conversation(
        dir.path(),
        "openai",
        "gpt-5.6",
        &doc,
        [0, 60_000, 60_000 + 40 * 60_000],
    );
    let run = |cache: &str| {
        json_of(&[
            "replay",
            path,
            "--config",
            &format!("off+{cache}"),
            "--format",
            "json",
        ])
    };
    let col = |v: &Value, i: usize, k: &str| v["calls"][i][k].as_u64().unwrap();
    let total = |v: &Value, i: usize| {
        [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ]
        .iter()
        .map(|k| col(v, i, k))
        .sum::<u64>()
    };
    let auto = run("openai-auto");
    let short = run("openai-breakpoints");
    let long = run("openai-breakpoints:ttl=12h");
    assert_eq!(long["config"], "off+openai-breakpoints:ttl=12h");
    for v in [&auto, &short, &long] {
        // The second call reads all the first sent, at its implicit
        // breakpoint.
        assert_eq!(col(v, 1, "cache_read_input_tokens"), total(v, 0));
    }
    // 40 minutes on, only a 12-hour breakpoint is left: the system prompt.
    assert_eq!(col(&auto, 2, "cache_read_input_tokens"), 0);
    assert_eq!(col(&short, 2, "cache_read_input_tokens"), 0);
    let system_read = col(&long, 2, "cache_read_input_tokens");
    assert!(
        system_read > 2_500 && system_read + 500 < total(&long, 0),
        "{system_read} of {}",
        total(&long, 0)
    );
    // The 12-hour breakpoint is written once, at the first call.
    assert_eq!(
        long["totals"]["cache_creation"]["ephemeral_1h_input_tokens"].as_u64(),
        Some(system_read),
        "{}",
        long["totals"]
    );
}

#[test]
fn breakpoints_are_refused_before_gpt_5_6() {
    let (code, _, err) = outcome(
        tracecost()
            .args(["replay", &agent(), "--cache", "openai-breakpoints"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("only GPT-5.6 and later take; gpt-4o-mini caches automatically: choose openai-auto instead"),
        "{err}"
    );
    let v = json_of(&[
        "replay",
        &agent(),
        "--cache",
        "openai-breakpoints",
        "--model",
        "gpt-5.6",
        "--format",
        "json",
    ]);
    assert_eq!(v["config"], "off+openai-breakpoints@gpt-5.6");
}

#[test]
fn gemini_cached_contents_bill_creation_and_storage_and_live_an_hour() {
    // A Gemini 2.5 Pro conversation over a 3,000-token system prompt; the
    // third call comes 70 minutes after the first, past the cached
    // content's default hour.
    let dir = tempfile::tempdir().unwrap();
    let path = &conversation(
        dir.path(),
        "google",
        "gemini-2.5-pro",
        "What do they say?",
        [0, 60_000, 70 * 60_000],
    );
    let v = json_of(&[
        "replay",
        path,
        "--cache",
        "gemini-explicit",
        "--format",
        "json",
    ]);
    assert_eq!(v["config"], "off+gemini-explicit");
    let col = |i: usize, k: &str| v["calls"][i][k].as_u64().unwrap();
    let created = |i: usize| {
        v["calls"][i]["cache_creation"]["ephemeral_1h_input_tokens"]
            .as_u64()
            .unwrap()
    };
    let cached = created(0);
    assert!(cached > 2_500, "the system prompt is cached: {cached}");
    assert_eq!(col(0, "cache_read_input_tokens"), 0);
    // The next call names it: its tokens at the cached rate.
    assert_eq!((created(1), col(1, "cache_read_input_tokens")), (0, cached));
    // 70 minutes after its creation it is gone, and created again.
    assert_eq!((created(2), col(2, "cache_read_input_tokens")), (cached, 0));
    // A creation costs $1.25 input + $0.125 read + $4.50 an hour of
    // storage per million tokens; the rest of the prompt $1.25, output $10.
    let expected = (cached as f64 * 5.875
        + col(0, "input_tokens") as f64 * 1.25
        + col(0, "output_tokens") as f64 * 10.0)
        / 1e6;
    let cost = v["calls"][0]["cost_usd"].as_f64().unwrap();
    assert!((cost - expected).abs() < 1e-9, "{cost} vs {expected}");
    // Where no storage price is known, it is refused.
    let (code, _, err) = outcome(
        tracecost()
            .args([
                "replay",
                path,
                "--cache",
                "gemini-explicit",
                "--model",
                "gemini-3.6-flash",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(
        err.contains(
            "no storage price is known for gemini-3.6-flash; choose gemini-implicit instead"
        ),
        "{err}"
    );
}

#[test]
fn a_folder_mixing_claude_code_and_codex_gives_one_fleet_answer() {
    // An exports folder: a Claude Code projects folder, and Codex rollouts
    // in a plain subfolder (no Codex layout), with a .git folder beside.
    let dir = tempfile::tempdir().unwrap();
    let exports = dir.path().join("exports");
    crate::util::copy_dir(&fixture("claude-code"), &exports.join("claude"));
    let codex = exports.join("codex");
    std::fs::create_dir_all(&codex).unwrap();
    let rollouts = repo("crates/tracecost-import/tests/fixtures/codex/home/sessions/2026/07/14");
    crate::util::copy_dir(&rollouts, &codex);
    std::fs::create_dir_all(exports.join(".git")).unwrap();
    std::fs::write(exports.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    let out = dir.path().join("report");
    let (code, _, err) = outcome(
        tracecost()
            .args([
                "report",
                exports.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                // The Claude Code fixture holds a damaged line on purpose.
                "--skip-invalid",
            ])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("skipped 1 file(s) of another kind: .git"),
        "{err}"
    );
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let quos: Vec<(String, String)> = v["traces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["source"].as_str().unwrap().to_owned(),
                t["baseline"]["config"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // Each session under its own provider's status quo, in one answer.
    let (codex_runs, claude_runs): (Vec<_>, Vec<_>) =
        quos.iter().partition(|(src, _)| src.contains("rollout-"));
    assert!(
        !codex_runs.is_empty() && !claude_runs.is_empty(),
        "{quos:?}"
    );
    assert!(
        codex_runs.iter().all(|(_, c)| c == "off+openai-auto"),
        "{quos:?}"
    );
    assert!(
        claude_runs.iter().all(|(_, c)| c.contains("claude-code")),
        "{quos:?}"
    );
    assert_eq!(v["fleet"]["traces"].as_u64().unwrap() as usize, quos.len());
    assert_eq!(v["fleet"]["status_quo"]["config"], "mixed");
}

#[test]
fn the_idle_time_is_fitted_on_recorded_reads_and_said() {
    // A GPT-4.1 conversation whose record shows the third call reading
    // after a 20-minute pause: OpenAI's cache held it longer than the
    // 5-minute default, so the status quo holds it as long as the record
    // shows, and says so; a config naming its idle time keeps it.
    let dir = tempfile::tempdir().unwrap();
    let path = conversation(
        dir.path(),
        "openai",
        "gpt-4.1",
        "What do they say?",
        [0, 60_000, 21 * 60_000],
    );
    let mut trace: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let probe = json_of(&["replay", &path, "--calibrate", "off", "--format", "json"]);
    let totals: Vec<u64> = (0..3)
        .map(|i| {
            ["input_tokens", "cache_read_input_tokens"]
                .iter()
                .map(|k| probe["calls"][i][k].as_u64().unwrap())
                .sum()
        })
        .collect();
    let step = |t: u64| 1024 + (t - 1024) / 128 * 128;
    for (i, read) in [0, step(totals[0]), step(totals[1])]
        .into_iter()
        .enumerate()
    {
        trace["calls"][i]["usage"] = serde_json::json!({
            "input_tokens": totals[i] - read,
            "cache_read_input_tokens": read,
            "output_tokens": 5
        });
    }
    std::fs::write(&path, trace.to_string()).unwrap();
    let (code, out, err) = outcome(tracecost().args(["replay", &path]).output().unwrap());
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("cache idle time 20m 1s fitted on recorded reads (2 read after a pause of up to 20m, 0 missed)"),
        "{out}"
    );
    let fitted = json_of(&["replay", &path, "--format", "json"]);
    assert_eq!(
        fitted["calibration"]["idle"]["idle_ms"],
        20 * 60_000 + 1,
        "{}",
        fitted["calibration"]
    );
    let read = |v: &Value| v["calls"][2]["cache_read_input_tokens"].as_u64().unwrap();
    assert_eq!(read(&fitted), step(totals[1]));
    let named = json_of(&[
        "replay",
        &path,
        "--config",
        "off+openai-auto:idle=5m",
        "--format",
        "json",
    ]);
    assert_eq!(read(&named), 0, "a named idle time is not fitted over");
}

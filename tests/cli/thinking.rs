//! `clear-thinking` (Anthropic's `clear_thinking_20251015`) beside a
//! compaction policy, on a trace written for the tests whose assistant
//! turns each open with a thinking block.

use crate::util::outcome;

fn run(args: &[&str]) -> (i32, String, String) {
    outcome(
        crate::util::tracecost()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .output()
            .unwrap(),
    )
}

fn replay(trace: &str, config: &str) -> serde_json::Value {
    let (code, out, err) = run(&["replay", trace, "--config", config, "--format", "json"]);
    assert_eq!(code, 0, "{config}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// The build-hunt trace, each assistant message opening with a thinking
/// block of its own, written to `dir`.
fn thinking_trace(dir: &std::path::Path) -> String {
    let mut trace: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(crate::util::fixture("traces/autocompact.json")).unwrap(),
    )
    .unwrap();
    trace["model"] = "claude-opus-4-6".into();
    for (i, m) in trace["messages"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .enumerate()
    {
        if m["role"] != "assistant" {
            continue;
        }
        let thinking = format!("Turn {i}: the log shows which module failed first. ").repeat(60);
        let blocks = m["content"].as_array_mut().unwrap();
        blocks.insert(
            0,
            serde_json::json!({"type": "thinking", "thinking": thinking, "signature": format!("sig{i}")}),
        );
    }
    let path = dir.join("thinking.json");
    std::fs::write(&path, trace.to_string()).unwrap();
    path.display().to_string()
}

fn input(c: &serde_json::Value) -> u64 {
    [
        "input_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ]
    .iter()
    .map(|k| c[k].as_u64().unwrap())
    .sum()
}

/// Keeping every thinking turn sends what no edit sends; keeping the last
/// one sends less at every call after the second thinking turn, and the
/// cleared thinking is written anew as the cut moves.
#[test]
fn clear_thinking_keeps_the_last_thinking_turns() {
    let dir = tempfile::tempdir().unwrap();
    let trace = thinking_trace(dir.path());
    let off = replay(&trace, "off+claude-code:ttl=5m");
    let all = replay(&trace, "clear-thinking:keep=all+off+claude-code:ttl=5m");
    assert_eq!(all["totals"]["cost_usd"], off["totals"]["cost_usd"]);
    let one = replay(&trace, "clear-thinking+off+claude-code:ttl=5m");
    assert_eq!(
        one["config"],
        "clear-thinking:keep=1+off+claude-code:ttl=5m"
    );
    let (a, b) = (
        off["calls"].as_array().unwrap(),
        one["calls"].as_array().unwrap(),
    );
    assert_eq!(a.len(), b.len());
    // The first two calls send at most one thinking turn.
    assert_eq!(input(&a[1]), input(&b[1]));
    for i in 2..a.len() {
        assert!(input(&b[i]) + 400 < input(&a[i]), "call {i}");
    }
    // It composes with a tool-result policy.
    let ledger = replay(
        &trace,
        "clear-thinking:keep=2+ledger:t=500,k=1+claude-code:ttl=5m",
    );
    assert_eq!(
        ledger["config"],
        "clear-thinking:keep=2+ledger:t=500,k=1+claude-code:ttl=5m"
    );
}

/// A bad parameter is one line, exit 2.
#[test]
fn clear_thinking_refusals_are_one_line() {
    const TRACE: &str = "tests/fixtures/traces/autocompact.json";
    let (code, out, err) = run(&[
        "replay",
        TRACE,
        "--config",
        "clear-thinking:keep=0+off+none",
    ]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("clear-thinking: keep=\"0\" is not a number >= 1 or all"),
        "{err}"
    );
}

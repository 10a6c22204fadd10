//! `tracecost usage`: recorded usage priced like ccusage, checked against
//! figures computed by hand from a small fixture.

use assert_cmd::Command;

fn usage(args: &[&str]) -> serde_json::Value {
    let out = Command::cargo_bin("tracecost")
        .unwrap()
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
    assert_eq!(sessions[0]["lastActivity"], "2025-07-01");
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
    let out = Command::cargo_bin("tracecost")
        .unwrap()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("CLAUDE_CONFIG_DIR", "tests/fixtures/usage")
        .args(["usage", "--json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["totals"]["inputTokens"], 114);
}

/// The real transcripts, when present beside the project (development and CI).
#[test]
fn runs_on_the_shared_corpus_when_present() {
    let corpus =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/claude-code");
    if !corpus.is_dir() {
        eprintln!("skipped: {} not found", corpus.display());
        return;
    }
    let v = usage(&[corpus.to_str().unwrap()]);
    assert!(v["sessions"].as_array().unwrap().len() > 50);
    assert!(v["totals"]["totalCost"].as_f64().unwrap() > 0.0);
}

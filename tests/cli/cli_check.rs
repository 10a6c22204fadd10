//! `tracecost check`: passes on a fresh baseline, fails on a regression,
//! and rejects bad input with exit code 2.

use std::path::Path;

use crate::util::{fixture, outcome};

/// Copies the small fixture trace beside a baseline in `dir`, and returns
/// the entry that names it (entries are relative to the baseline file).
fn small_beside(dir: &Path) -> &'static str {
    std::fs::copy(fixture("traces/small.json"), dir.join("small.json")).unwrap();
    "small.json"
}

fn check(baseline: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = crate::util::tracecost()
        .env_remove("GITHUB_STEP_SUMMARY")
        .arg("check")
        .arg("--baseline")
        .arg(baseline)
        .args(extra)
        .output()
        .unwrap();
    outcome(out)
}

fn fresh_baseline(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("baseline.json");
    let small = small_beside(dir);
    let json = serde_json::json!({
        "format": "tracecost.baseline/v1",
        "entries": [
            {"trace": small, "config": "off+none"},
            {"trace": small, "config": "ledger:t=200,k=1+tail:ttl=5m"}
        ]
    });
    std::fs::write(&p, json.to_string()).unwrap();
    let (code, _, err) = check(&p, &["--update"]);
    assert_eq!(code, 0, "{err}");
    p
}

fn edit_cost(p: &Path, entry: usize, factor: f64) {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let cost = &mut v["entries"][entry]["expected"]["cost_usd"];
    *cost = serde_json::json!(cost.as_f64().unwrap() * factor);
    std::fs::write(p, v.to_string()).unwrap();
}

#[test]
fn passes_then_fails_on_a_lowered_expectation() {
    let dir = tempfile::tempdir().unwrap();
    let p = fresh_baseline(dir.path());
    let (code, out, _) = check(&p, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 regression(s), 0 improvement(s)"));

    // The expected cost of entry 1 was lower: today's replay regresses.
    edit_cost(&p, 1, 0.9);
    let (code, out, _) = check(&p, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("| regression |") && out.contains("`ledger:t=200,k=1+tail:ttl=5m`"),
        "{out}"
    );
    assert!(out.contains("+11.11%"), "{out}");
    // A wide enough tolerance lets it through.
    let (code, _, _) = check(&p, &["--tolerance", "20"]);
    assert_eq!(code, 0);
}

#[test]
fn improvements_pass_and_are_reported_and_summary_is_appended() {
    let dir = tempfile::tempdir().unwrap();
    let p = fresh_baseline(dir.path());
    edit_cost(&p, 0, 1.5);
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let out = crate::util::tracecost()
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["check", "--baseline"])
        .arg(&p)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(
        text.starts_with("earlier step\n## tracecost check"),
        "{text}"
    );
    assert!(text.contains("| improvement |"));
}

#[test]
fn update_rewrites_atomically_and_keeps_entries() {
    let dir = tempfile::tempdir().unwrap();
    let p = fresh_baseline(dir.path());
    edit_cost(&p, 1, 0.5);
    let (code, _, _) = check(&p, &["--update"]);
    assert_eq!(code, 0);
    let (code, _, _) = check(&p, &[]);
    assert_eq!(code, 0);
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["baseline.json", "small.json"],
        "no temporary file left"
    );
}

#[test]
fn bad_input_exits_2_with_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let small = || small_beside(dir.path());
    let cases: Vec<(String, &str)> = vec![
        ("{\"format\":\"tracecost.baseline/v1\",\"entries\":[".into(), "1:"),
        (r#"{"format":"v0","entries":[]}"#.into(), "at /format: expected \"tracecost.baseline/v1\""),
        (r#"{"format":"tracecost.baseline/v1","entries":[]}"#.into(), "at /entries: expected at least one entry"),
        (format!(r#"{{"format":"tracecost.baseline/v1","entries":[{{"trace":"{}","config":"zip+none"}}]}}"#, small()), "at /entries/0/config: invalid config \"zip+none\""),
        (format!(r#"{{"format":"tracecost.baseline/v1","entries":[{{"trace":"{}","config":"off+none"}}]}}"#, small()), "at /entries/0/expected: missing"),
        (r#"{"format":"tracecost.baseline/v1","entries":[{"trace":"nope.json","config":"off+none"}]}"#.into(), "nope.json: cannot read"),
        (r#"{"format":"tracecost.baseline/v1","entries":[{"trace":"x","config":"off+none","colour":1}]}"#.into(), "unknown field `colour`"),
    ];
    for (json, needle) in cases {
        let p = dir.path().join("b.json");
        std::fs::write(&p, &json).unwrap();
        let (code, out, err) = check(&p, &[]);
        assert_eq!(code, 2, "{json}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(needle), "{json}\n{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    let (code, _, err) = check(&dir.path().join("missing.json"), &[]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.json: cannot read"), "{err}");
}

#[test]
fn entries_outside_the_baseline_folder_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let inner = dir.path().join("ci");
    std::fs::create_dir(&inner).unwrap();
    let abs = dir.path().join(small_beside(dir.path()));
    for (entry, why) in [
        (abs.display().to_string(), "is an absolute path"),
        ("../small.json".to_owned(), "leaves the baseline's folder"),
    ] {
        let p = inner.join("b.json");
        let json = serde_json::json!({
            "format": "tracecost.baseline/v1",
            "entries": [{"trace": entry, "config": "off+none"}]
        });
        std::fs::write(&p, json.to_string()).unwrap();
        let (code, out, err) = check(&p, &["--update"]);
        assert_eq!(code, 2, "{err}");
        assert!(out.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("b.json: at /entries/0/trace"), "{err}");
        assert!(err.contains(why), "{err}");
    }
}

/// A baseline written by `--update` is compared exactly right after: every
/// figure it wrote reads back as the same number (on the bundled traces,
/// whose many configs give costs with long decimal expansions).
#[test]
fn tolerance_zero_passes_right_after_update() {
    let dir = tempfile::tempdir().unwrap();
    crate::util::copy_dir(&crate::util::repo("traces"), &dir.path().join("traces"));
    let p = dir.path().join("baseline.json");
    std::fs::copy(crate::util::repo("cost-baseline.json"), &p).unwrap();
    let (code, _, err) = check(&p, &["--update"]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = check(&p, &["--tolerance", "0"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("0 regression(s), 0 improvement(s)"), "{out}");
}

/// A baseline of `entries` beside a copy of the bundled multi-part session.
fn baseline_of(dir: &Path, entries: serde_json::Value) -> std::path::PathBuf {
    std::fs::copy(
        crate::util::repo("traces/session-200-s1.json"),
        dir.join("session.json"),
    )
    .unwrap();
    let p = dir.join("baseline.json");
    let json = serde_json::json!({"format": "tracecost.baseline/v1", "entries": entries});
    std::fs::write(&p, json.to_string()).unwrap();
    p
}

#[test]
fn a_file_of_several_traces_lists_the_names_to_choose_from() {
    let dir = tempfile::tempdir().unwrap();
    let p = baseline_of(
        dir.path(),
        serde_json::json!([{"trace": "session.json", "config": "off+none"}]),
    );
    let (code, _, err) = check(&p, &["--update"]);
    assert_eq!(code, 2);
    insta::assert_snapshot!(err.replace(&p.display().to_string(), "BASELINE"));
}

#[test]
fn the_same_pair_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = baseline_of(
        dir.path(),
        serde_json::json!([
            {"trace": "session.json", "name": "session-200-s1-part2", "config": "off+tail:ttl=5m"},
            {"trace": "session.json", "name": "session-200-s1", "config": "off+tail:ttl=5m"},
            {"trace": "./session.json", "name": "session-200-s1-part2", "config": "off+tail"}
        ]),
    );
    let (code, _, err) = check(&p, &["--update"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.ends_with("at /entries/2: the same trace and config as /entries/0; remove one\n"),
        "{err}"
    );
}

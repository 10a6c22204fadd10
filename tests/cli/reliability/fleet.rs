//! A fleet is its traces, each counted once and on its own: two traces of
//! the same name from two files are two sessions, and a grid applies per
//! trace (a policy that cannot apply to one trace is skipped for it, said
//! so, and never aborts the fleet).

use crate::util::{names, repo, run_in, tree, write};
use serde_json::Value;
use std::path::Path;

/// The small fixture trace renamed, with its first question changed (so
/// the traces differ), its calls moved by `offset_ms`, and, with
/// `markers`, a recorded cache marker on every call.
fn small_variant(name: &str, question: &str, offset_ms: u64, markers: bool) -> String {
    let text = std::fs::read_to_string(repo("tests/fixtures/traces/small.json")).unwrap();
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["name"] = Value::from(name);
    doc["messages"][0]["content"] = Value::from(question);
    for call in doc["calls"].as_array_mut().unwrap() {
        let start = call["start_ms"].as_u64().unwrap();
        call["start_ms"] = Value::from(start + offset_ms);
        if markers {
            call["cache_markers"] = serde_json::json!([{"tool": 1, "ttl": "5m"}]);
        }
    }
    serde_json::to_string(&doc).unwrap()
}

/// A fresh folder holding an empty input folder `in`.
fn input_folder() -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let input = tmp.path().join("in");
    std::fs::create_dir(&input).unwrap();
    (tmp, input)
}

fn results(out: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(out.join("results.json")).unwrap()).unwrap()
}

/// Five traces in five files, two of them named `small`.
fn five_traces(dir: &Path) {
    write_variants(
        dir,
        &[
            ("a.json", "small", "Which shoe is lighter?", false),
            ("b.json", "small", "Which shoe grips best?", false),
            ("c.json", "c", "Which shoe is cheaper?", false),
            ("d.json", "d", "Which shoe lasts longest?", false),
            ("e.json", "e", "Which shoe is wider?", false),
        ],
    );
}

/// Writes `(file, trace name, question, markers)` variants, a day apart.
fn write_variants(dir: &Path, variants: &[(&str, &str, &str, bool)]) {
    let day = 86_400_000;
    for (i, (file, name, question, markers)) in variants.iter().enumerate() {
        let text = small_variant(name, question, i as u64 * day, *markers);
        write(dir, file, &text);
    }
}

#[test]
fn two_traces_named_the_same_in_two_files_stay_two_sessions() {
    let (tmp, input) = input_folder();
    five_traces(&input);
    let run = run_in(tmp.path(), &["report", "in", "--out", "out"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = results(&tmp.path().join("out"));
    let traces = r["traces"].as_array().unwrap();
    assert_eq!(traces.len(), 5);
    assert_eq!(r["fleet"]["sessions"], 5, "{}", r["fleet"]);
    // Every row names a different trace, and says which file it came from.
    let mut ids: Vec<&str> = traces
        .iter()
        .map(|t| t["trace"].as_str().unwrap())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 5, "{ids:?}");
    let mut sources: Vec<&str> = traces
        .iter()
        .map(|t| t["source"].as_str().unwrap())
        .collect();
    sources.sort_unstable();
    assert_eq!(
        sources,
        [
            "in/a.json",
            "in/b.json",
            "in/c.json",
            "in/d.json",
            "in/e.json"
        ]
    );
    // Five pages, one per session, besides the list of them.
    let pages = names(&tmp.path().join("out/sessions"));
    assert_eq!(pages.len(), 6, "{pages:?}");
    assert!(pages.contains(&"index.html".to_owned()));
    // results.csv: the header and five rows per config, all of them told
    // apart by the trace column.
    let csv = std::fs::read_to_string(tmp.path().join("out/results.csv")).unwrap();
    let mut traces_in_csv: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    traces_in_csv.sort_unstable();
    traces_in_csv.dedup();
    assert_eq!(traces_in_csv.len(), 5, "{traces_in_csv:?}");
}

#[test]
fn the_same_traces_give_the_same_report_and_page_names() {
    let (tmp, input) = input_folder();
    five_traces(&input);
    let first = run_in(tmp.path(), &["report", "in", "--out", "o1"]);
    let second = run_in(tmp.path(), &["report", "in", "--out", "o2"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert_eq!(first.stderr.replace("o1", "o2"), second.stderr);
    let one = tree(&tmp.path().join("o1"));
    let two = tree(&tmp.path().join("o2"));
    assert!(!one.is_empty());
    assert!(
        one == two,
        "two runs over the same traces wrote different files"
    );
}

#[test]
fn parts_of_one_session_in_one_file_still_count_once() {
    // The bundled session is one conversation in several `-partN` traces.
    let tmp = tempfile::tempdir().unwrap();
    let trace = repo("traces/session-200-s1.json");
    let run = run_in(
        tmp.path(),
        &["report", trace.to_str().unwrap(), "--out", "out"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = results(&tmp.path().join("out"));
    let traces = r["traces"].as_array().unwrap().len();
    assert!(traces > 1, "the bundled session has parts");
    assert_eq!(r["fleet"]["sessions"], 1);
    assert_eq!(r["fleet"]["traces"], traces);
}

/// A folder of one trace with recorded markers and two without.
fn mixed_markers(dir: &Path) {
    write_variants(
        dir,
        &[
            ("marked.json", "marked", "Which shoe is lighter?", true),
            ("plain-1.json", "plain-1", "Which grips best?", false),
            ("plain-2.json", "plain-2", "Which is cheaper?", false),
        ],
    );
}

#[test]
fn a_grid_applies_per_trace_and_says_what_it_skipped() {
    let (tmp, input) = input_folder();
    mixed_markers(&input);
    let run = run_in(tmp.path(), &["report", "in", "--out", "out"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Said once on stderr, with the policy and how many traces.
    let notes: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("skipped"))
        .collect();
    assert_eq!(notes.len(), 1, "{}", run.stderr);
    assert!(notes[0].contains("recorded"), "{}", notes[0]);
    assert!(notes[0].contains("2 of 3 traces"), "{}", notes[0]);
    let out = tmp.path().join("out");
    let r = results(&out);
    // The grid tries the marked trace's own cache policy under every
    // compaction; each of those configs is skipped for the other two.
    let skipped = r["fleet"]["skipped"].as_array().unwrap();
    assert!(
        skipped.iter().any(|s| s["config"] == "off+recorded"),
        "{skipped:?}"
    );
    for s in skipped {
        assert!(s["config"].as_str().unwrap().ends_with("+recorded"), "{s}");
        assert_eq!(s["traces"], 2, "{s}");
        assert_eq!(s["of"], 3, "{s}");
    }
    // The marked trace was replayed under it; the others were not.
    for t in r["traces"].as_array().unwrap() {
        let has = t["configs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["config"] == "off+recorded");
        assert_eq!(has, t["trace"] == "marked", "{}", t["trace"]);
    }
    for page in ["index.html", "summary.md"] {
        let text = std::fs::read_to_string(out.join(page)).unwrap();
        assert!(
            text.contains("skipped") && text.contains("off+recorded"),
            "{page} does not say what was skipped"
        );
    }
}

#[test]
fn a_config_skipped_for_some_traces_counts_them_at_their_status_quo() {
    let (tmp, input) = input_folder();
    mixed_markers(&input);
    let run = run_in(tmp.path(), &["report", "in", "--out", "out"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let r = results(&tmp.path().join("out"));
    let cost_of = |t: &Value, config: &str| -> f64 {
        t["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["config"] == config)
            .unwrap()["cost_usd"]
            .as_f64()
            .unwrap()
    };
    let mut expected = 0.0;
    for t in r["traces"].as_array().unwrap() {
        let config = if t["trace"] == "marked" {
            "off+recorded"
        } else {
            t["baseline"]["config"].as_str().unwrap()
        };
        expected += cost_of(t, config);
    }
    let fleet_row = r["fleet"]["configs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["config"] == "off+recorded")
        .unwrap();
    let got = fleet_row["cost_usd"].as_f64().unwrap();
    assert!(
        (got - expected).abs() < 1e-9,
        "fleet cost of off+recorded {got}, expected {expected} (skipped traces at their status quo)"
    );
}

#[test]
fn a_policy_that_applies_to_no_trace_is_an_error_naming_the_file() {
    let (tmp, input) = input_folder();
    write(
        &input,
        "plain.json",
        &small_variant("plain", "Which is lighter?", 0, false),
    );
    let run = run_in(
        tmp.path(),
        &["sweep", "in", "--cache", "recorded", "--compaction", "off"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("in/plain.json"), "{}", run.stderr);
    assert!(run.stderr.contains("recorded none"), "{}", run.stderr);
}

#[test]
fn a_baseline_that_cannot_apply_names_the_trace_file() {
    let (tmp, input) = input_folder();
    mixed_markers(&input);
    let run = run_in(
        tmp.path(),
        &["report", "in", "--out", "out", "--baseline", "off+recorded"],
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stderr.trim().lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("in/plain-1.json"), "{}", run.stderr);
    assert!(!tmp.path().join("out").exists());
}

#[test]
fn a_sweep_says_once_what_it_skipped_for_which_traces() {
    let (tmp, input) = input_folder();
    mixed_markers(&input);
    let run = run_in(
        tmp.path(),
        &[
            "sweep",
            "in",
            "--cache",
            "none,recorded",
            "--compaction",
            "off",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let notes: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("skipped"))
        .collect();
    assert_eq!(
        notes,
        [
            "tracecost: note: not applicable: `off+recorded` skipped for 2 of 3 traces (they recorded no cache markers to replay); their tables have no row for it"
        ],
        "{}",
        run.stderr
    );
    assert!(run.stdout.contains("off+recorded"), "{}", run.stdout);
}

//! The summarising policies and the thinking edit in `sweep`, `report` and
//! `stability`, on traces written for the tests: a sweep gives what
//! `replay` gives, the report counts and prices the summary calls (in the
//! fleet's figures and marked among a trace's calls), the streamed report
//! is the report held in memory, and stability checks each part a summary
//! starts, marking the policy's own changes rather than reporting them.

use crate::util::{outcome, tracecost};

const TRACE: &str = "tests/fixtures/traces/autocompact.json";

fn run(args: &[&str]) -> (i32, String, String) {
    outcome(
        tracecost()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .output()
            .unwrap(),
    )
}

fn json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// The build-hunt trace with each build log `times` as long, as
/// `provider`'s on `model`, each assistant message opening with a thinking
/// block when `thinking`, written to `dir`.
fn trace(
    dir: &std::path::Path,
    times: usize,
    provider: &str,
    model: &str,
    thinking: bool,
) -> String {
    let mut t: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(crate::util::fixture("traces/autocompact.json")).unwrap(),
    )
    .unwrap();
    t["provider"] = provider.into();
    t["model"] = model.into();
    for (i, m) in t["messages"].as_array_mut().unwrap().iter_mut().enumerate() {
        let assistant = m["role"] == "assistant";
        let Some(blocks) = m["content"].as_array_mut() else {
            continue;
        };
        for b in blocks.iter_mut() {
            if b["type"] == "tool_result" {
                let text = b["content"].as_str().unwrap().repeat(times);
                b["content"] = text.into();
            }
        }
        if thinking && assistant {
            let text = format!("Turn {i}: the log shows which module failed first. ").repeat(60);
            blocks.insert(
                0,
                serde_json::json!({"type": "thinking", "thinking": text, "signature": format!("sig{i}")}),
            );
        }
    }
    let path = dir.join(format!("{provider}-{times}-{thinking}.json"));
    std::fs::write(&path, t.to_string()).unwrap();
    path.display().to_string()
}

/// Each summarising policy, and the thinking edit, with the trace it
/// applies to (long enough for each summarising policy to summarise).
fn cases(dir: &std::path::Path) -> Vec<(String, &'static str)> {
    let anthropic = trace(dir, 16, "anthropic", "claude-sonnet-4-5", false);
    let openai = trace(dir, 4, "openai", "gpt-5.4", false);
    let thinking = trace(dir, 1, "anthropic", "claude-opus-4-6", true);
    vec![
        (
            TRACE.to_owned(),
            "claude-code-autocompact:trigger=5000,summary=300+claude-code:ttl=5m",
        ),
        (
            anthropic,
            "anthropic-compact:trigger=50000,summary=300+claude-code:ttl=5m",
        ),
        (
            openai,
            "openai-compact:threshold=12000,summary=300+openai-auto",
        ),
        (
            TRACE.to_owned(),
            "langchain-summarize:trigger=messages:6,keep=messages:2,trim=100000,summary=300+claude-code:ttl=5m",
        ),
        (thinking, "clear-thinking:keep=1+off+claude-code:ttl=5m"),
    ]
}

/// `sweep` and `report` run each summarising policy and the thinking
/// edit: the sweep's row is `replay`'s figures, the summary calls counted
/// and priced in the report's fleet figures and its story, and marked
/// among the trace's calls in results.json, each summary call's cost
/// summing to what is counted.
#[test]
fn sweep_and_report_run_summarising_policies_and_the_thinking_edit() {
    let dir = tempfile::tempdir().unwrap();
    for (k, (path, config)) in cases(dir.path()).into_iter().enumerate() {
        let replayed = json(&["replay", &path, "--config", config, "--format", "json"]);
        let totals = &replayed["totals"];
        let summaries = totals["summary_calls"].as_u64().unwrap_or(0);
        if config.starts_with("clear-thinking") {
            assert_eq!(summaries, 0);
        } else {
            assert!(summaries > 0, "{config}: {totals}");
        }
        let swept = json(&["sweep", &path, "--config", config, "--format", "json"]);
        let rows = swept["traces"][0]["rows"].as_array().unwrap();
        let row = rows
            .iter()
            .find(|r| r["result"]["config"] == config)
            .unwrap_or_else(|| panic!("{config}: {swept}"));
        assert_eq!(row["result"]["totals"], *totals, "{config}");
        // The report, with the policy as the baseline so that its calls
        // are written.
        let out = dir.path().join(format!("r{k}"));
        let out_s = out.display().to_string();
        let (code, _, err) = run(&[
            "report",
            &path,
            "--config",
            config,
            "--baseline",
            config,
            "--out",
            &out_s,
        ]);
        assert_eq!(code, 0, "{config}: {err}");
        let results: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
                .unwrap();
        let figures = results["fleet"]["configs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["config"] == config)
            .unwrap_or_else(|| panic!("{config}: {}", results["fleet"]["configs"]));
        assert_eq!(figures["cost_usd"], totals["cost_usd"], "{config}");
        let calls = results["traces"][0]["calls_baseline"].as_array().unwrap();
        let marked: Vec<&serde_json::Value> =
            calls.iter().filter(|c| c["summary"] == true).collect();
        assert_eq!(marked.len() as u64, summaries, "{config}");
        let page = std::fs::read_to_string(out.join("index.html")).unwrap();
        if summaries > 0 {
            assert_eq!(figures["summary_calls"], summaries, "{config}");
            let priced: f64 = marked.iter().map(|c| c["cost_usd"].as_f64().unwrap()).sum();
            let counted = figures["summary_cost_usd"].as_f64().unwrap();
            assert!(
                counted > 0.0 && (priced - counted).abs() < 1e-9,
                "{priced} vs {counted}"
            );
            // The trace's note and its marked calls.
            assert!(
                page.contains(&format!("{summaries} summary call(s) the policy added")),
                "{config}"
            );
            assert!(
                page.contains("summary call (added by the policy)"),
                "{config}"
            );
        } else {
            assert!(figures.get("summary_calls").is_none(), "{figures}");
            assert!(!page.contains("summary call"), "{config}");
        }
    }
}

/// A summarising policy's recall risk: the results a summary drops count
/// as compacted from the summary on, as cleared results do, so the risk
/// model reads them.
#[test]
fn a_summarised_result_counts_as_compacted_from_the_summary_on() {
    let config = "claude-code-autocompact:trigger=5000,summary=300+claude-code:ttl=5m";
    let v = json(&["replay", TRACE, "--config", config, "--format", "json"]);
    let calls = v["calls"].as_array().unwrap();
    let first_after = calls
        .iter()
        .position(|c| c["summary"] == true)
        .map(|i| i + 1)
        .unwrap();
    assert!(
        calls[..first_after]
            .iter()
            .all(|c| c["compacted"].as_array().unwrap().is_empty())
    );
    assert!(
        !calls[first_after]["compacted"]
            .as_array()
            .unwrap()
            .is_empty(),
        "{}",
        calls[first_after]
    );
    assert!(v["totals"]["compacted_results"].as_u64().unwrap() > 0);
}

/// `stability` accepts each: a summary starts a new part, checked as a
/// trace of its own, its first call marked `(summary)`; a thinking edit's
/// cuts marked `(thinking-cleared)`; neither is a violation.
#[test]
fn stability_checks_each_part_and_marks_the_policys_own_changes() {
    let dir = tempfile::tempdir().unwrap();
    for (path, config) in cases(dir.path()) {
        let (code, out, err) = run(&["stability", &path, "--config", config]);
        assert_eq!(code, 0, "{config}: {err}\n{out}");
        assert!(out.contains("stable: "), "{config}: {out}");
        assert!(!out.contains("VIOLATION"), "{config}: {out}");
        let mark = if config.starts_with("clear-thinking") {
            "(thinking-cleared)"
        } else {
            "(summary)"
        };
        assert!(out.contains(mark), "{config}: {out}");
    }
}

/// The streamed report is the report held in memory, byte for byte, with
/// summarising policies and the thinking edit among the configs, on a
/// generated fleet whose accounts share caches.
#[test]
fn a_streamed_report_with_summarising_policies_is_the_report_held_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.json");
    let (code, _, err) = outcome(
        tracecost()
            .args(["gen", "fleet", "--sessions", "30", "--seed", "5", "-o"])
            .arg(&fleet)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    let fleet = fleet.display().to_string();
    let configs = [
        "--config",
        "claude-code-autocompact:trigger=20000,summary=2000+claude-code",
        "--config",
        "anthropic-compact:trigger=50000,summary=2000+tail",
        "--config",
        "langchain-summarize:trigger=messages:12,keep=messages:4,summary=1000+claude-code",
        "--config",
        "clear-thinking+ledger:t=8000,k=2+claude-code",
        "--config",
        "ledger:t=8000,k=2+claude-code",
    ];
    let report = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let out_s = out.display().to_string();
        let args = [
            &[
                "report",
                fleet.as_str(),
                "--out",
                &out_s,
                "--sessions",
                "all",
            ][..],
            &configs,
            extra,
        ]
        .concat();
        let (code, _, err) = run(&args);
        assert_eq!(code, 0, "{err}");
        crate::util::tree(&out)
    };
    let streamed = report("s", &[]);
    let held = report("m", &["--in-memory"]);
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&streamed), names(&held));
    for ((name, a), (_, b)) in streamed.iter().zip(&held) {
        assert!(a == b, "{name} differs");
    }
    // The fleet summarised somewhere, so the comparison covers parts.
    let results = &streamed
        .iter()
        .find(|(n, _)| n == "results.json")
        .unwrap()
        .1;
    let v: serde_json::Value = serde_json::from_slice(results).unwrap();
    let summarised: u64 = v["fleet"]["configs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["summary_calls"].as_u64().unwrap_or(0))
        .sum();
    assert!(summarised > 0, "{}", v["fleet"]["configs"]);
    // The fleet's story names them.
    let story = &streamed.iter().find(|(n, _)| n == "summary.md").unwrap().1;
    let story = String::from_utf8_lossy(story);
    assert!(
        story.contains("Summary calls, counted in each policy's cost: `"),
        "{story}"
    );
}

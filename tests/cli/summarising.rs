//! The summarising policies other than Claude Code's (`anthropic-compact`,
//! `openai-compact`, `langchain-summarize`) replayed on traces written for
//! the tests: each summarising call is a call of its own, counted and
//! priced in the totals and the text; bad parameters are one line and
//! exit code 2.

use crate::util::outcome;

const TRACE: &str = "tests/fixtures/traces/autocompact.json";

fn run(args: &[&str]) -> (i32, String, String) {
    outcome(
        crate::util::tracecost()
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(args)
            .output()
            .unwrap(),
    )
}

fn stdout(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

/// The build-hunt trace with each build log `times` as long, as
/// `provider`'s on `model`, written to `dir`.
fn longer(dir: &std::path::Path, times: usize, provider: &str, model: &str) -> String {
    let mut trace: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(crate::util::fixture("traces/autocompact.json")).unwrap(),
    )
    .unwrap();
    trace["provider"] = provider.into();
    trace["model"] = model.into();
    for m in trace["messages"].as_array_mut().unwrap() {
        let Some(blocks) = m["content"].as_array_mut() else {
            continue;
        };
        for b in blocks {
            if b["type"] == "tool_result" {
                let text = b["content"].as_str().unwrap().repeat(times);
                b["content"] = text.into();
            }
        }
    }
    let path = dir.join(format!("{provider}.json"));
    std::fs::write(&path, trace.to_string()).unwrap();
    path.display().to_string()
}

/// Replays `trace` under `config`: the JSON result, the summary calls'
/// count and cost checked against the calls they are, the text's line.
fn summarised(trace: &str, config: &str, recorded_calls: usize) -> serde_json::Value {
    let args = ["replay", trace, "--config", config, "--format", "json"];
    let once = stdout(&args);
    assert_eq!(stdout(&args), once, "same input, same bytes");
    let v: serde_json::Value = serde_json::from_str(&once).unwrap();
    let summaries = v["totals"]["summary_calls"].as_u64().unwrap_or(0) as usize;
    assert!(summaries > 0, "{config}: {}", v["totals"]);
    assert_eq!(
        v["calls"].as_array().unwrap().len(),
        recorded_calls + summaries
    );
    let cost = v["totals"]["summary_cost_usd"].as_f64().unwrap();
    assert!(cost > 0.0, "{config}");
    let text = stdout(&["replay", trace, "--config", config]);
    assert!(
        text.contains(&format!(
            "summary calls: {summaries} (each a call of its own, in the table), costing $"
        )),
        "{text}"
    );
    v
}

/// Anthropic's compaction at its minimum trigger on a trace past it: the
/// summarising call reads the whole context and writes the summary, the
/// next call sends the summary alone (with the cached system prompt).
#[test]
fn anthropic_compact_adds_its_summary_calls() {
    let dir = tempfile::tempdir().unwrap();
    let trace = longer(dir.path(), 16, "anthropic", "claude-sonnet-4-5");
    let v = summarised(
        &trace,
        "anthropic-compact:trigger=50000,summary=300+claude-code:ttl=5m",
        7,
    );
    let calls = v["calls"].as_array().unwrap();
    let summary = calls
        .iter()
        .position(|c| c["output_tokens"] == 300)
        .unwrap();
    // The summary call sends every message so far and the instruction;
    // the call after it the summary alone.
    assert_eq!(calls[summary + 1]["messages"], 1);
    assert!(
        calls[summary]["messages"].as_u64().unwrap()
            > calls[summary - 1]["messages"].as_u64().unwrap()
    );
    // Under the trigger: nothing summarised.
    let under = serde_json::from_str::<serde_json::Value>(&stdout(&[
        "replay",
        TRACE,
        "--config",
        "anthropic-compact+claude-code:ttl=5m",
        "--format",
        "json",
    ]))
    .unwrap();
    assert!(under["totals"].get("summary_calls").is_none());
}

/// OpenAI's compaction on an OpenAI trace: past the threshold the
/// compaction call, then the item alone.
#[test]
fn openai_compact_adds_its_compaction_calls() {
    let dir = tempfile::tempdir().unwrap();
    let trace = longer(dir.path(), 4, "openai", "gpt-5.4");
    let v = summarised(
        &trace,
        "openai-compact:threshold=12000,summary=300+openai-auto",
        7,
    );
    assert_eq!(
        v["config"],
        "openai-compact:threshold=12000,summary=300+openai-auto"
    );
}

/// LangChain's summarisation keeps the last messages and its summarising
/// call reads only the messages it summarises, without the system prompt
/// or tools: less than the call before it, which sends those and the same
/// messages. A trim that leaves no user's message to start on reads
/// nothing, so no call is made, and the history is cut all the same.
#[test]
fn langchain_summarize_adds_a_call_reading_the_trimmed_messages() {
    let config = "langchain-summarize:trigger=messages:6,keep=messages:2,trim=100000,summary=300+claude-code:ttl=5m";
    let v = summarised(TRACE, config, 7);
    let calls = v["calls"].as_array().unwrap();
    let input = |c: &serde_json::Value| {
        [
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        ]
        .iter()
        .map(|k| c[k].as_u64().unwrap())
        .sum::<u64>()
    };
    let first = calls
        .iter()
        .position(|c| c["output_tokens"] == 300)
        .unwrap();
    assert!(first > 0);
    assert!(
        input(&calls[first]) < input(&calls[first - 1]),
        "{} vs {}",
        calls[first],
        calls[first - 1]
    );
    // The call after it sends the summary and the two messages kept, and
    // the one the model answered with.
    assert_eq!(calls[first + 1]["messages"], 3);
    let tiny = "langchain-summarize:trigger=messages:6,keep=messages:2,trim=10,summary=300+claude-code:ttl=5m";
    let args = ["replay", TRACE, "--config", tiny, "--format", "json"];
    let v: serde_json::Value = serde_json::from_str(&stdout(&args)).unwrap();
    assert!(v["totals"].get("summary_calls").is_none());
    let sent: Vec<u64> = v["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["messages"].as_u64().unwrap())
        .collect();
    assert_eq!(sent.len(), 7);
    assert!(sent[3] < 7, "{sent:?}");
}

/// Bad parameters: one line naming the fault, exit code 2, nothing on
/// standard output.
#[test]
fn bad_summarising_parameters_exit_2_with_one_line() {
    for (config, says) in [
        (
            "anthropic-compact:trigger=1000+none",
            "anthropic-compact needs trigger >= 50000 (the API's minimum)",
        ),
        (
            "openai-compact+openai-auto",
            "openai-compact needs threshold=TOKENS >= 1 (compact_threshold has no documented default)",
        ),
        (
            "langchain-summarize+none",
            "langchain-summarize needs trigger=tokens:N or trigger=messages:N",
        ),
        (
            "langchain-summarize:trigger=fraction:0.5+none",
            "trigger=fraction needs the model's profile",
        ),
    ] {
        let (code, out, err) = run(&["replay", TRACE, "--config", config]);
        assert_eq!((code, out.as_str()), (2, ""), "{config}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{config}: {err}");
    }
}

/// A provider's server-side compaction runs on its own API only: on
/// another provider's trace it is refused in one line, exit code 2.
#[test]
fn a_server_side_compaction_runs_on_its_providers_api_only() {
    let dir = tempfile::tempdir().unwrap();
    let openai = longer(dir.path(), 1, "openai", "gpt-5.4");
    for (trace, config, says) in [
        (
            openai.as_str(),
            "anthropic-compact+openai-auto",
            "anthropic-compact is an Anthropic API feature; provider is openai",
        ),
        (
            TRACE,
            "openai-compact:threshold=50000+claude-code",
            "openai-compact is an OpenAI API feature; provider is anthropic",
        ),
    ] {
        let (code, out, err) = run(&["replay", trace, "--config", config]);
        assert_eq!((code, out.as_str()), (2, ""), "{config}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.contains(says), "{config}: {err}");
    }
}

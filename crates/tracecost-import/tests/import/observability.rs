//! The Langfuse, LangSmith and OpenAI Agents SDK importers (and Langfuse
//! v3's OpenTelemetry export) on what the real libraries wrote
//! (`tests/fixtures/{langfuse,langsmith,openai_agents}/`, each made by the
//! script there against a stub API on loopback; the READMEs give the
//! package versions). Each folder's `stub_usage.json` is what the stub
//! answered, call by call: every figure read is checked against it, and
//! every file is read with no format named, as `report` reads it.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::message::BlockKind;
use tracecost_import::ImportSummary;
use tracecost_import::detect::{FileKind, detect_file};
use tracecost_import::inputs::{InputError, import_detected};
use tracecost_import::{ImportOptions, InputFormat};
use tracecost_trace::progress::Silent;
use tracecost_trace::{Trace, load_str, to_json};

fn fixture(dir: &str, name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(dir)
        .join(name)
}

/// Imports `path` with the importer its content names, checking every
/// trace reloads to itself without warnings.
fn import(path: &Path) -> (Vec<Trace>, ImportSummary) {
    let mut traces = Vec::new();
    let report = import_detected(
        &[path.to_path_buf()],
        &ImportOptions::default(),
        &Silent,
        &mut |t| {
            traces.push(t);
            Ok::<_, InputError>(())
        },
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for t in &traces {
        let json = to_json(t);
        let loaded = load_str(&json, &t.name).unwrap_or_else(|e| panic!("{e}\n{json}"));
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let mut t = t.clone();
        t.source = None;
        assert_eq!(loaded.traces[0], t);
    }
    (traces, report)
}

fn stub(dir: &str) -> Value {
    let text = std::fs::read_to_string(fixture(dir, "stub_usage.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Per call: uncached input, cache reads, cache writes, output, and the
/// 5m/1h write split when one is given.
type Figures = (u64, u64, u64, u64, Option<(u64, u64)>);

/// What a stub usage object says, in whichever API's spelling: Anthropic's
/// (`input_tokens` excludes the cache), OpenAI Chat's (`prompt_tokens`
/// includes `cached_tokens`) or Responses' (`input_tokens` with
/// `input_tokens_details`, including them).
fn stub_figures(u: &Value) -> Figures {
    let n = |v: &Value, path: &[&str]| {
        path.iter()
            .try_fold(v, |v, k| v.get(k))
            .and_then(Value::as_u64)
    };
    if let Some(prompt) = n(u, &["prompt_tokens"]) {
        let cached = n(u, &["prompt_tokens_details", "cached_tokens"]).unwrap_or(0);
        return (
            prompt - cached,
            cached,
            0,
            n(u, &["completion_tokens"]).unwrap(),
            None,
        );
    }
    if let Some(details) = u.get("input_tokens_details") {
        let input = n(u, &["input_tokens"]).unwrap();
        let cached = n(details, &["cached_tokens"]).unwrap_or(0);
        let written = n(details, &["cache_write_tokens"]).unwrap_or(0);
        return (
            input - cached - written,
            cached,
            written,
            n(u, &["output_tokens"]).unwrap(),
            None,
        );
    }
    // Anthropic's usage, flat (`ephemeral_*` beside the totals) or nested.
    let split = match (
        n(u, &["cache_creation", "ephemeral_5m_input_tokens"])
            .or(n(u, &["ephemeral_5m_input_tokens"])),
        n(u, &["cache_creation", "ephemeral_1h_input_tokens"])
            .or(n(u, &["ephemeral_1h_input_tokens"])),
    ) {
        (Some(a), Some(b)) => Some((a, b)),
        _ => None,
    };
    (
        n(u, &["input_tokens"]).unwrap(),
        n(u, &["cache_read_input_tokens"]).unwrap_or(0),
        n(u, &["cache_creation_input_tokens"]).unwrap_or(0),
        n(u, &["output_tokens"]).unwrap(),
        split,
    )
}

/// The figures a trace's calls recorded; a split only where the import
/// kept one (the stub's is checked against it then).
fn figures(t: &Trace) -> Vec<Figures> {
    t.calls
        .iter()
        .map(|c| {
            let u = c.recorded_usage().expect("usage");
            let split = match (u.ephemeral_5m_input_tokens, u.ephemeral_1h_input_tokens) {
                (None, None) => None,
                (a, b) => Some((a.unwrap_or(0), b.unwrap_or(0))),
            };
            (
                u.input_tokens.unwrap(),
                u.cache_read_input_tokens.unwrap_or(0),
                u.cache_creation_input_tokens.unwrap_or(0),
                u.output_tokens.unwrap(),
                split,
            )
        })
        .collect()
}

/// Checks a trace's calls against the stub's calls, one by one: the
/// totals always, the write split where both sides give one.
fn assert_stub_usage(t: &Trace, calls: &[Value], usage_of: impl Fn(&Value) -> &Value) {
    let got = figures(t);
    assert_eq!(got.len(), calls.len(), "{}", t.name);
    for (i, (g, c)) in got.iter().zip(calls).enumerate() {
        let want = stub_figures(usage_of(c));
        assert_eq!(
            (g.0, g.1, g.2, g.3),
            (want.0, want.1, want.2, want.3),
            "{} call {}",
            t.name,
            i + 1
        );
        if let (Some(g), Some(w)) = (g.4, want.4) {
            assert_eq!(g, w, "{} call {} split", t.name, i + 1);
        }
    }
}

fn calls(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

fn assert_agent_loop(t: &Trace) {
    // The system prompt, the question, two tool calls with their results,
    // and the answer.
    assert_eq!(t.calls.len(), 3, "{}", t.name);
    assert_eq!(t.messages.len(), 6, "{}", t.name);
    let sys: String = t.prompts[0]
        .system
        .iter()
        .filter_map(|b| match b.kind() {
            BlockKind::Text { text } => Some(text.to_string()),
            _ => None,
        })
        .collect();
    assert!(
        sys.starts_with("You are a coding agent"),
        "{}: {sys:?}",
        t.name
    );
}

fn has_unmapped(report: &ImportSummary, needle: &str) -> bool {
    report.unmapped.iter().any(|l| l.contains(needle))
}

#[test]
fn langfuse_v2_ingestion_batches_read_as_the_stub_answered() {
    let stub = stub("langfuse");
    for (capture, provider) in [
        ("v2_anthropic", ProviderKind::Anthropic),
        ("v2_openai", ProviderKind::OpenAi),
        ("v3_anthropic", ProviderKind::Anthropic),
        ("v3_openai", ProviderKind::OpenAi),
    ] {
        let file = stub[capture]["file"].as_str().unwrap();
        let path = fixture("langfuse", file);
        let want = if capture.starts_with("v2") {
            InputFormat::Langfuse
        } else {
            InputFormat::Otel
        };
        assert_eq!(detect_file(&path).unwrap(), FileKind::Log(want), "{file}");
        let (traces, report) = import(&path);
        assert_eq!(traces.len(), 1, "{file}: {report}");
        let t = &traces[0];
        assert_eq!(t.provider, provider, "{file}");
        assert_eq!(t.session.as_deref(), Some("sess_fixture_0001"), "{file}");
        assert_agent_loop(t);
        assert_stub_usage(t, calls(&stub[capture]["calls"]), |c| &c["usage"]);
        if provider == ProviderKind::Anthropic {
            // The input keeps the system prompt's cache_control as sent.
            assert!(
                t.calls
                    .iter()
                    .all(|c| c.markers.as_ref().is_some_and(|m| m.len() == 1))
            );
        }
        if capture == "v3_anthropic" {
            // Langfuse v3 exports the anthropic SDK's own span too, inside
            // each generation's: counted once.
            assert!(
                has_unmapped(&report, "3 × spans or events of a call already read"),
                "{report}"
            );
        }
    }
}

#[test]
fn langfuse_api_observations_read_per_trace() {
    // Built with the SDK's API types from the v2 and v3 Anthropic captures:
    // two Langfuse traces of the same conversation, kept apart by trace.
    let stub = stub("langfuse");
    let (traces, report) = import(&fixture("langfuse", "observations.json"));
    assert_eq!(traces.len(), 2, "{report}");
    for (t, capture) in traces.iter().zip(["v2_anthropic", "v3_anthropic"]) {
        assert_agent_loop(t);
        assert_stub_usage(t, calls(&stub[capture]["calls"]), |c| &c["usage"]);
    }
    assert_ne!(traces[0].session, traces[1].session);
}

#[test]
fn langsmith_runs_read_as_the_stub_answered() {
    let stub = stub("langsmith");
    for (file, capture) in [
        ("langchain_anthropic.runs.jsonl", "langchain_anthropic"),
        ("wrap_anthropic.runs.jsonl", "wrap_anthropic"),
    ] {
        let path = fixture("langsmith", file);
        assert_eq!(
            detect_file(&path).unwrap(),
            FileKind::Log(InputFormat::Langsmith)
        );
        let (traces, report) = import(&path);
        assert_eq!(traces.len(), 1, "{file}: {report}");
        let t = &traces[0];
        assert_eq!(t.provider, ProviderKind::Anthropic);
        assert_eq!(t.model, "claude-sonnet-4-5-20250929");
        assert_eq!(t.session.as_deref(), Some("thread_fixture_0001"));
        assert_eq!(t.project.as_deref(), Some("tracecost-fixture"));
        assert_eq!(t.prompts[0].tools.len(), 1, "{file}: the read_file tool");
        assert_agent_loop(t);
        assert_stub_usage(t, calls(&stub["captures"][capture]), |c| c);
    }
    // The same runs as the API returns them: one trace per capture.
    let (traces, report) = import(&fixture("langsmith", "list_runs.json"));
    assert_eq!(traces.len(), 2, "{report}");
    for (t, capture) in traces.iter().zip(["langchain_anthropic", "wrap_anthropic"]) {
        assert_agent_loop(t);
        assert_stub_usage(t, calls(&stub["captures"][capture]), |c| c);
    }
}

#[test]
fn openai_agents_generation_spans_read_as_the_stub_answered() {
    let stub = stub("openai_agents");
    for capture in [
        "chat_completions",
        "chat_completions_custom_endpoint",
        "processor",
    ] {
        let c = &stub["captures"][capture];
        let path = fixture("openai_agents", c["file"].as_str().unwrap());
        assert_eq!(
            detect_file(&path).unwrap(),
            FileKind::Log(InputFormat::OpenaiAgents)
        );
        let (traces, report) = import(&path);
        assert_eq!(traces.len(), 1, "{capture}: {report}");
        let t = &traces[0];
        assert_eq!(t.provider, ProviderKind::OpenAi);
        assert_eq!(t.session.as_deref(), c["group_id"].as_str());
        assert_agent_loop(t);
        assert_stub_usage(t, calls(&c["calls"]), |c| &c["usage"]);
        assert!(
            has_unmapped(&report, "tool definitions the export does not hold"),
            "{report}"
        );
    }
}

#[test]
fn openai_agents_response_spans_are_refused_with_what_to_do() {
    for file in [
        "responses.ingest.jsonl",
        "responses.custom_endpoint.ingest.jsonl",
    ] {
        let path = fixture("openai_agents", file);
        let err = InputFormat::OpenaiAgents
            .import(&[path], &ImportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("3 × OpenAI Agents SDK response spans"),
            "{err}"
        );
        assert!(err.contains("cannot be replayed"), "{err}");
        assert!(err.contains("OpenAIChatCompletionsModel"), "{err}");
    }
}

#[test]
fn a_folder_mixing_the_exports_reads_each_with_its_importer() {
    let dir = tempfile::tempdir().unwrap();
    for (from, name) in [
        ("langfuse", "v2_ingestion.jsonl"),
        ("langfuse", "v3_openai_otel.traces.jsonl"),
        ("langsmith", "wrap_anthropic.runs.jsonl"),
        ("openai_agents", "processor.spans.jsonl"),
        ("otel", "openai_v2.traces.jsonl"),
        ("otel", "openai_v2.logs.jsonl"),
    ] {
        std::fs::copy(fixture(from, name), dir.path().join(name)).unwrap();
    }
    let (traces, report) = import(dir.path());
    // openai-v2's span and its inference event hold the same three calls,
    // in two files: counted once.
    assert_eq!(traces.len(), 5, "{report}");
    assert_eq!(traces.iter().map(|t| t.calls.len()).sum::<usize>(), 15);
    assert!(
        has_unmapped(&report, "3 × spans or events of a call already read"),
        "{report}"
    );
}

#[test]
fn generated_exports_read_line_by_line_give_every_call_with_its_usage() {
    // Long conversations (each call records all of it so far): the
    // importers share each message among the calls that resend it, and
    // must still give every call, in its session, with what was recorded.
    use tracecost_gen::{ObservabilityFormat, write_observability_export};
    let dir = tempfile::tempdir().unwrap();
    for (format, want) in [
        (ObservabilityFormat::Langfuse, InputFormat::Langfuse),
        (ObservabilityFormat::Langsmith, InputFormat::Langsmith),
        (ObservabilityFormat::OpenaiAgents, InputFormat::OpenaiAgents),
    ] {
        let path = dir.path().join(format!("{format:?}.jsonl"));
        let mut out = Vec::new();
        let stats = write_observability_export(format, 3, 12, 5, &mut out).unwrap();
        std::fs::write(&path, &out).unwrap();
        assert_eq!(
            detect_file(&path).unwrap(),
            FileKind::Log(want),
            "{format:?}"
        );
        let (traces, _) = import(&path);
        assert_eq!(traces.len(), 3, "{format:?}: one trace per session");
        let calls: usize = traces.iter().map(|t| t.calls.len()).sum();
        assert_eq!(calls, stats.calls, "{format:?}");
        let mut sessions: Vec<_> = traces.iter().map(|t| t.session.clone()).collect();
        sessions.dedup();
        assert_eq!(sessions.len(), 3, "{format:?}: {sessions:?}");
        for t in &traces {
            // Each call reads what the one before wrote: the first reads
            // nothing, every later one reads a growing prefix.
            let reads: Vec<u64> = t
                .calls
                .iter()
                .map(|c| c.recorded_usage().unwrap().cache_read_input_tokens.unwrap())
                .collect();
            assert_eq!(reads[0], 0, "{format:?}");
            assert!(
                reads.windows(2).all(|w| w[0] < w[1]),
                "{format:?}: {reads:?}"
            );
            // The conversation grows call by call, each extending the last.
            assert!(t.calls.windows(2).all(|w| w[0].messages < w[1].messages));
        }
        // The same records as one JSON document (one batch, read whole)
        // give the same.
        let mut one = serde_json::Map::new();
        for l in String::from_utf8(out).unwrap().lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            for (k, items) in v.as_object().unwrap() {
                let all = one
                    .entry(k.clone())
                    .or_insert_with(|| Value::Array(Vec::new()));
                all.as_array_mut()
                    .unwrap()
                    .extend(items.as_array().unwrap().iter().cloned());
            }
        }
        let doc = dir.path().join(format!("{format:?}.json"));
        std::fs::write(&doc, Value::Object(one).to_string()).unwrap();
        let (whole, _) = import(&doc);
        let strip = |ts: &[Trace]| {
            ts.iter()
                .map(|t| (t.messages.clone(), t.calls.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&whole), strip(&traces), "{format:?}");
    }
}

#[test]
fn a_damaged_line_is_located_and_skippable_in_every_export() {
    let dir = tempfile::tempdir().unwrap();
    for (folder, name, format, expected) in [
        (
            "langfuse",
            "v2_ingestion.jsonl",
            InputFormat::Langfuse,
            "expected a Langfuse ingestion batch",
        ),
        (
            "langsmith",
            "wrap_anthropic.runs.jsonl",
            InputFormat::Langsmith,
            "expected a LangSmith run batch",
        ),
        (
            "openai_agents",
            "processor.spans.jsonl",
            InputFormat::OpenaiAgents,
            "expected an OpenAI Agents SDK export",
        ),
    ] {
        let good = std::fs::read_to_string(fixture(folder, name)).unwrap();
        let calls = import(&fixture(folder, name))
            .0
            .iter()
            .map(|t| t.calls.len())
            .sum::<usize>();
        let mut lines: Vec<&str> = good.lines().collect();
        for (bad, why) in [
            ("{\"batch\": [", "EOF while parsing"),
            ("{\"other\": 1}", expected),
        ] {
            lines.insert(1, bad);
            let path = dir.path().join(name);
            std::fs::write(&path, lines.join("\n") + "\n").unwrap();
            lines.remove(1);
            let err = format
                .import(std::slice::from_ref(&path), &ImportOptions::default())
                .unwrap_err();
            let text = err.to_string();
            assert!(text.contains(&format!("{name}:2:")), "{name}: {text}");
            assert!(text.contains(why), "{name}: {text}");
            let skip = ImportOptions {
                skip_invalid: true,
                ..Default::default()
            };
            let out = format.import(&[path], &skip).unwrap();
            assert_eq!(out.report.skipped_lines, 1, "{name}");
            let read: usize = out.traces.iter().map(|t| t.calls.len()).sum();
            assert_eq!(read, calls, "{name}: the other lines are all read");
        }
    }
}

#[test]
fn langfuse_blob_storage_exports_read_as_the_api_observations() {
    // Built from the export's documented schema (make_export_fixtures.py):
    // the API observations' 6 generations as the enriched observations_v2
    // rows, in JSON Lines and in CSV (objects as JSON text, JSON text in
    // quoted fields over several lines). The same calls, with the usage
    // the stub answered, filed under the rows' session.
    let calls_of = |ts: &[Trace]| {
        let mut calls: Vec<_> = ts
            .iter()
            .flat_map(|t| t.calls.iter().map(|c| (c.start_ms, c.recorded_usage())))
            .collect();
        calls.sort_by_key(|(start, _)| *start);
        calls
    };
    let (api, _) = import(&fixture("langfuse", "observations.json"));
    for name in ["blob_observations_v2.jsonl", "blob_observations_v2.csv"] {
        let path = fixture("langfuse", name);
        assert_eq!(
            detect_file(&path).unwrap(),
            FileKind::Log(InputFormat::Langfuse),
            "{name}"
        );
        let (traces, report) = import(&path);
        assert_eq!(calls_of(&traces), calls_of(&api), "{name}: {report}");
        assert!(
            traces
                .iter()
                .all(|t| t.session.as_deref() == Some("sess_fixture_0001")),
            "{name}"
        );
        assert!(traces.iter().all(|t| t.provider == ProviderKind::Anthropic));
    }
    let (jsonl, _) = import(&fixture("langfuse", "blob_observations_v2.jsonl"));
    let (csv, _) = import(&fixture("langfuse", "blob_observations_v2.csv"));
    let strip = |ts: &[Trace]| {
        ts.iter()
            .map(|t| (t.messages.clone(), t.calls.clone(), t.prompts.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&jsonl), strip(&csv));
}

#[test]
fn a_torn_row_of_a_langfuse_csv_export_costs_only_its_own_line() {
    // A row cut inside a quoted field, as a truncated copy leaves it, once
    // after the header and once before the last row.
    let path = fixture("langfuse", "blob_observations_v2.csv");
    let good = std::fs::read_to_string(&path).unwrap();
    let (whole, _) = import(&path);
    let calls = |ts: &[Trace]| ts.iter().map(|t| t.calls.len()).sum::<usize>();
    let header_end = good.find('\n').unwrap() + 1;
    let last_row = good[..good.len() - 1].rfind("\n").unwrap() + 1;
    let torn = "95c81fb8-torn,5ead244a,proj,default,GENERATION,,2026-12-02,\"{\"\"cut";
    let dir = tempfile::tempdir().unwrap();
    for at in [header_end, last_row] {
        let text = format!("{}{torn}\n{}", &good[..at], &good[at..]);
        let copy = dir.path().join("torn.csv");
        std::fs::write(&copy, text).unwrap();
        let err = InputFormat::Langfuse
            .import(std::slice::from_ref(&copy), &ImportOptions::default())
            .unwrap_err();
        let line = good[..at].matches('\n').count() + 1;
        assert!(
            err.to_string().contains(&format!("torn.csv:{line}")),
            "{err}"
        );
        let skip = ImportOptions {
            skip_invalid: true,
            ..Default::default()
        };
        let out = InputFormat::Langfuse.import(&[copy], &skip).unwrap();
        assert_eq!(out.report.skipped_lines, 1, "{}", out.report);
        assert_eq!(calls(&out.traces), calls(&whole), "{}", out.report);
    }
}

/// The value of the first `"key":"…"` in `text`.
fn first_string(text: &str, key: &str) -> String {
    let needle = format!("\"{key}\":\"");
    let start = text.find(&needle).unwrap() + needle.len();
    text[start..start + text[start..].find('"').unwrap()].to_owned()
}

#[test]
fn two_calls_sharing_an_id_are_kept_apart_and_counted_never_merged() {
    // An export holding the same ids twice: once for the calls of one
    // trace, once for those of another (a second run of a seeded tool,
    // two exports joined). The same parts twice are one call each.
    let dir = tempfile::tempdir().unwrap();
    let calls = |ts: &[Trace]| ts.iter().map(|t| t.calls.len()).sum::<usize>();
    for (folder, name, format, trace_key, note) in [
        (
            "langfuse",
            "v2_ingestion.jsonl",
            InputFormat::Langfuse,
            "traceId",
            "Langfuse generations sharing their id",
        ),
        (
            "langsmith",
            "wrap_anthropic.runs.jsonl",
            InputFormat::Langsmith,
            "trace_id",
            "LangSmith runs sharing their id",
        ),
    ] {
        let good = std::fs::read_to_string(fixture(folder, name)).unwrap();
        let (whole, _) = import(&fixture(folder, name));
        let n = calls(&whole);
        let trace = first_string(&good, trace_key);
        let other = good.replace(&trace, "0a0a0a0a-another-trace-0a0a0a0a0a0a");
        let path = dir.path().join(name);
        std::fs::write(&path, format!("{good}{other}")).unwrap();
        let out = format
            .import(std::slice::from_ref(&path), &ImportOptions::default())
            .unwrap();
        assert_eq!(calls(&out.traces), 2 * n, "{name}: {}", out.report);
        assert!(has_unmapped(&out.report, note), "{name}: {}", out.report);
        std::fs::write(&path, format!("{good}{good}")).unwrap();
        let out = format
            .import(std::slice::from_ref(&path), &ImportOptions::default())
            .unwrap();
        assert_eq!(calls(&out.traces), n, "{name}: {}", out.report);
        assert!(!has_unmapped(&out.report, note), "{name}: {}", out.report);
    }
}

//! One rule for a malformed token count, in every reader (but Codex's,
//! tested with its own): a count is a non-negative integer below 2^64,
//! as a JSON number or a string holding one; anything else drops the
//! usage object that holds it, keeps the call, and is counted in the
//! import note, never read as 0 nor truncated.
//!
//! Each case takes a fixture of the reader and writes, in place of its
//! first input count, each form a count can take.

use std::path::{Path, PathBuf};

use tracecost_import::{ImportOptions, ImportResult, InputFormat};
use tracecost_trace::RecordedUsage;

const NOTE: &str = "usage objects with a malformed token count";

fn fixture(rel: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = root.join("../../tests/fixtures").join(rel);
    match workspace.exists() {
        true => workspace,
        false => root.join("tests/fixtures").join(rel),
    }
}

/// `text` with the value after the first `needle` that holds a count (a
/// number, or an OTLP `AnyValue` object) replaced by `with`.
fn damage(text: &str, needle: &str, with: &str) -> String {
    let mut from = 0;
    while let Some(i) = text[from..].find(needle) {
        let start = from + i + needle.len();
        let rest = &text[start..];
        let start = start + (rest.len() - rest.trim_start().len());
        let rest = &text[start..];
        let end = match rest.chars().next() {
            Some('{') => rest.find('}').map(|e| e + 1),
            Some(c) if c.is_ascii_digit() => rest.find(|c: char| !c.is_ascii_digit()),
            _ => None,
        };
        if let Some(end) = end {
            return format!("{}{with}{}", &text[..start], &text[start + end..]);
        }
        from = start;
    }
    panic!("no count after {needle}")
}

struct Case {
    format: InputFormat,
    file: &'static str,
    needle: &'static str,
    /// How a JSON value is written in place of the count.
    write: fn(&str) -> String,
}

fn json(v: &str) -> String {
    v.to_owned()
}

/// A value in a CSV field holding JSON text: quotes doubled.
fn csv(v: &str) -> String {
    v.replace('"', "\"\"")
}

/// An OTLP `AnyValue`: integers as strings, as OTLP JSON writes int64.
fn otlp(v: &str) -> String {
    match v {
        "true" => r#"{"boolValue":true}"#.to_owned(),
        v if v.starts_with('"') => format!(r#"{{"intValue":{v}}}"#),
        v if v.contains(['.', 'e']) => format!(r#"{{"doubleValue":{v}}}"#),
        v => format!(r#"{{"intValue":"{v}"}}"#),
    }
}

const CASES: &[Case] = &[
    Case {
        format: InputFormat::Anthropic,
        file: "import/anthropic_plain.jsonl",
        needle: "\"input_tokens\":",
        write: json,
    },
    Case {
        format: InputFormat::Openai,
        file: "import/oa_pairs.jsonl",
        needle: "\"prompt_tokens\":",
        write: json,
    },
    Case {
        format: InputFormat::OpenaiResponses,
        file: "responses/rs_pairs.jsonl",
        needle: "\"input_tokens\":",
        write: json,
    },
    Case {
        format: InputFormat::Gemini,
        file: "gemini/gm_pairs.jsonl",
        needle: "\"promptTokenCount\":",
        write: json,
    },
    Case {
        format: InputFormat::Bedrock,
        file: "bedrock/cv_pairs.jsonl",
        needle: "\"inputTokens\":",
        write: json,
    },
    Case {
        format: InputFormat::Langchain,
        file: "import/lc_per_call.json",
        needle: "\"input_tokens\":",
        write: json,
    },
    Case {
        format: InputFormat::Otel,
        file: "otel/anthropic_sdk_only.traces.jsonl",
        needle: "\"key\":\"gen_ai.usage.input_tokens\",\"value\":",
        write: otlp,
    },
    Case {
        format: InputFormat::Otel,
        file: "otel/openinference_anthropic.traces.jsonl",
        needle: "\"key\":\"llm.token_count.prompt\",\"value\":",
        write: otlp,
    },
    Case {
        format: InputFormat::Otel,
        file: "otel/openai_v2.logs.jsonl",
        needle: "\"key\":\"gen_ai.usage.input_tokens\",\"value\":",
        write: otlp,
    },
    Case {
        format: InputFormat::Langfuse,
        file: "langfuse/v2_ingestion.jsonl",
        needle: "\"usageDetails\":{\"input\":",
        write: json,
    },
    Case {
        format: InputFormat::Langfuse,
        file: "langfuse/blob_observations_v2.csv",
        needle: "{\"\"input\"\":",
        write: csv,
    },
    Case {
        format: InputFormat::Langsmith,
        file: "langsmith/wrap_anthropic.runs.jsonl",
        needle: "\"input_tokens\":",
        write: json,
    },
    Case {
        format: InputFormat::OpenaiAgents,
        file: "openai_agents/processor.spans.jsonl",
        needle: "\"input_tokens\":",
        write: json,
    },
];

/// Every call's usage, in order.
fn usages(out: &ImportResult) -> Vec<Option<RecordedUsage>> {
    let mut calls: Vec<_> = out
        .traces
        .iter()
        .flat_map(|t| t.calls.iter().map(|c| (c.start_ms, c.recorded_usage())))
        .collect();
    calls.sort_by_key(|(start, _)| *start);
    calls.into_iter().map(|(_, u)| u).collect()
}

fn import_with(case: &Case, dir: &Path, value: &str) -> ImportResult {
    let src = fixture(case.file);
    let text = std::fs::read_to_string(&src).unwrap();
    let name = src.file_name().unwrap();
    let path = dir.join(name);
    std::fs::write(&path, damage(&text, case.needle, &(case.write)(value))).unwrap();
    // Two files in one folder would be read together: one at a time.
    let out = case
        .format
        .import(std::slice::from_ref(&path), &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{} with {value}: {e}", case.file));
    std::fs::remove_file(&path).unwrap();
    out
}

fn noted(out: &ImportResult) -> bool {
    out.report.unmapped.iter().any(|l| l.contains(NOTE))
}

#[test]
fn a_count_written_as_a_string_or_an_integral_float_is_that_number() {
    let dir = tempfile::tempdir().unwrap();
    for case in CASES {
        let plain = import_with(case, dir.path(), "5000000");
        assert!(!noted(&plain), "{}: {}", case.file, plain.report);
        for same in ["\"5000000\"", "5000000.0", "5e6"] {
            let out = import_with(case, dir.path(), same);
            assert_eq!(usages(&out), usages(&plain), "{} with {same}", case.file);
            assert!(!noted(&out), "{} with {same}: {}", case.file, out.report);
        }
    }
}

#[test]
fn a_malformed_count_drops_its_usage_keeps_the_call_and_is_counted() {
    let dir = tempfile::tempdir().unwrap();
    for case in CASES {
        // Large enough to hold any cache figure the input includes.
        let plain = usages(&import_with(case, dir.path(), "5000000"));
        for bad in [
            "\"abc\"",
            "\"\"",
            "-5",
            "5000000.5",
            "18446744073709551616",
            "1e30",
            "true",
        ] {
            let out = import_with(case, dir.path(), bad);
            let got = usages(&out);
            assert_eq!(
                got.len(),
                plain.len(),
                "{} with {bad}: calls kept",
                case.file
            );
            let changed: Vec<usize> = (0..got.len()).filter(|&i| got[i] != plain[i]).collect();
            assert_eq!(changed.len(), 1, "{} with {bad}: {got:?}", case.file);
            assert_eq!(got[changed[0]], None, "{} with {bad}", case.file);
            assert!(noted(&out), "{} with {bad}: {}", case.file, out.report);
        }
    }
}

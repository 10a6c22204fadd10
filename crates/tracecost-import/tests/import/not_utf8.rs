//! A line that is not UTF-8 is refused at its line and column, or under
//! `skip_invalid` skipped and counted, the file's other lines read as
//! ever: the same in every reader of JSON Lines logs.

use std::path::{Path, PathBuf};

use tracecost_import::{ImportOptions, InputFormat};

fn fixture(rel: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = root.join("../../tests/fixtures").join(rel);
    match workspace.exists() {
        true => workspace,
        false => root.join("tests/fixtures").join(rel),
    }
}

#[test]
fn a_line_that_is_not_utf8_is_located_or_skipped_in_every_log_reader() {
    let dir = tempfile::tempdir().unwrap();
    for (format, file) in [
        (InputFormat::Anthropic, "import/anthropic_plain.jsonl"),
        (InputFormat::Openai, "import/oa_pairs.jsonl"),
        (InputFormat::Langchain, "import/lc_states.jsonl"),
        (InputFormat::OpenaiResponses, "responses/rs_pairs.jsonl"),
        (InputFormat::Gemini, "gemini/gm_pairs.jsonl"),
        (InputFormat::Bedrock, "bedrock/cv_pairs.jsonl"),
        (InputFormat::Otel, "otel/anthropic_sdk_only.traces.jsonl"),
        (InputFormat::Langfuse, "langfuse/v2_ingestion.jsonl"),
        (
            InputFormat::Langsmith,
            "langsmith/wrap_anthropic.runs.jsonl",
        ),
        (
            InputFormat::OpenaiAgents,
            "openai_agents/processor.spans.jsonl",
        ),
    ] {
        let src = fixture(file);
        let good = std::fs::read(&src).unwrap();
        let whole = format
            .import(std::slice::from_ref(&src), &ImportOptions::default())
            .unwrap();
        let calls = |o: &tracecost_import::ImportResult| {
            o.traces.iter().map(|t| t.calls.len()).sum::<usize>()
        };
        let first = good.iter().position(|&b| b == b'\n').unwrap() + 1;
        let mut bad = good[..first].to_vec();
        bad.extend_from_slice(b"{\"x\": \"\xff\"}\n");
        bad.extend_from_slice(&good[first..]);
        let path = dir.path().join(src.file_name().unwrap());
        std::fs::write(&path, bad).unwrap();
        let err = format
            .import(std::slice::from_ref(&path), &ImportOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.ends_with(":2:8: not UTF-8"), "{file}: {err}");
        let skip = ImportOptions {
            skip_invalid: true,
            ..Default::default()
        };
        let out = format.import(std::slice::from_ref(&path), &skip).unwrap();
        assert_eq!(out.report.skipped_lines, 1, "{file}: {}", out.report);
        assert_eq!(calls(&out), calls(&whole), "{file}: {}", out.report);
        std::fs::remove_file(&path).unwrap();
    }
}

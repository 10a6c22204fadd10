//! The Bedrock Converse importer on hand-made logs in the API's shapes
//! (`tests/fixtures/bedrock/`).

use std::path::{Path, PathBuf};

use tracecost_engine::cache::ProviderKind;
use tracecost_engine::message::BlockKind;
use tracecost_engine::wire::{BlockRef, Marker, Ttl};
use tracecost_import::detect::{FileKind, detect_file};
use tracecost_import::{ImportOptions, ImportResult, InputFormat, bedrock};
use tracecost_trace::{load_str, to_json};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/bedrock")
        .join(name)
}

fn import(path: &Path) -> ImportResult {
    let out = bedrock::import(&[path.to_path_buf()], &ImportOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    for t in &out.traces {
        let json = to_json(t);
        let loaded = load_str(&json, &t.name).unwrap_or_else(|e| panic!("{e}\n{json}"));
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        let mut t = t.clone();
        t.source = None;
        assert_eq!(loaded.traces[0], t);
    }
    out
}

#[test]
fn a_tool_loop_is_one_conversation_with_its_cache_points_as_markers() {
    let out = import(&fixture("cv_pairs.jsonl"));
    assert_eq!(out.traces.len(), 1);
    let t = &out.traces[0];
    assert_eq!(t.provider, ProviderKind::BedrockConverse);
    assert_eq!(
        t.model, "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
        "from the URL"
    );
    let counts: Vec<usize> = t.calls.iter().map(|c| c.messages).collect();
    assert_eq!(counts, [1, 3]);
    let m = |at| Marker {
        at,
        ttl: Ttl::FiveMinutes,
    };
    // A cache point marks the block before it: the last tool, the system
    // prompt, and (second call) the tool result.
    assert_eq!(
        t.calls[0].markers.as_deref(),
        Some(&[m(BlockRef::Tool(1)), m(BlockRef::System(0))][..])
    );
    assert_eq!(t.calls[1].markers.as_deref().map(|ms| ms.len()), Some(3));
    assert!(
        t.calls[1]
            .markers
            .as_deref()
            .unwrap()
            .contains(&m(BlockRef::Message {
                message: 2,
                block: 0
            }))
    );
    // The tool result holds its text and JSON parts.
    let result = t.messages[2].blocks()[0].to_json();
    assert!(
        result.contains("Rotate logs") && result.contains("severity"),
        "{result}"
    );
    assert!(matches!(
        t.messages[1].blocks()[1].kind(),
        BlockKind::ToolUse { .. }
    ));
    assert_eq!(t.prompts[0].tools.len(), 2);
}

#[test]
fn input_is_counted_apart_from_cache_reads_and_writes() {
    let out = import(&fixture("cv_pairs.jsonl"));
    let u = out.traces[0].calls[1].recorded_usage().unwrap();
    // Converse's inputTokens excludes the cache, as Anthropic's does.
    assert_eq!(u.input_tokens, Some(3));
    assert_eq!(u.cache_read_input_tokens, Some(2000));
    assert_eq!(u.cache_creation_input_tokens, Some(130));
    assert_eq!(u.output_tokens, Some(20));
}

#[test]
fn converse_logs_are_told_apart_from_the_others() {
    assert_eq!(
        detect_file(&fixture("cv_pairs.jsonl")).unwrap(),
        FileKind::Log(InputFormat::Bedrock)
    );
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("b.json");
    std::fs::write(
        &p,
        r#"{"modelId":"anthropic.claude-sonnet-4-5-20250929-v1:0","messages":[{"role":"user","content":[{"text":"hi"}]}]}"#,
    )
    .unwrap();
    assert_eq!(
        detect_file(&p).unwrap(),
        FileKind::Log(InputFormat::Bedrock)
    );
    // An Anthropic body (typed blocks, a model) is not one.
    std::fs::write(
        &p,
        r#"{"request":{"model":"claude-sonnet-4-5","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]},"response":{"type":"message","content":[]}}"#,
    )
    .unwrap();
    assert_eq!(
        detect_file(&p).unwrap(),
        FileKind::Log(InputFormat::Anthropic)
    );
}

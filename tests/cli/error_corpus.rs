//! The error corpus: bad input for every reader tracecost has — canonical
//! traces, the four importers, pricing files, baseline files, the command
//! line and output paths — run through the real binary.
//!
//! Every rejected input must give exit code 2, nothing on stdout, exactly
//! one line on stderr naming the file, the place (`line:column` or a JSON
//! pointer) and what was expected, and leave no output file and no
//! temporary file behind. Each fixture under `tests/fixtures/bad/` is one
//! case of a table below (a test checks that no fixture is left out), with
//! the fragment of the message it must give.
//!
//! The importers repair some problems instead of failing (orphan tool
//! results, duplicate ids, absurd usage figures): those fixtures are in
//! [`REPAIRED`], which checks that the import succeeds, reports what it
//! dropped, and writes a trace that loads.
//!
//! A panic would exit 70 with one "internal error" line (see `src/main.rs`);
//! the fixtures that used to panic (absurd counts in pricing and baseline
//! files, `hidden_prefix_tokens`, `chars:1e-300`) are cases here, so a
//! regression shows up as exit 70 instead of 2. No input is known to panic
//! any more, so the hook itself has no case of its own.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// Where the message must point.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    /// `file:line:column:` (or `file: line:column:` for baselines).
    LineCol,
    /// `file:line:` or `file:line:column:` (importers' per-record errors).
    Line,
    /// `at /json/pointer:`.
    Pointer,
    /// A whole-file or whole-input problem (I/O, nothing found).
    File,
}

use Place::*;

fn bad_dir() -> PathBuf {
    crate::util::fixture("bad")
}

fn tracecost() -> Command {
    let mut cmd = crate::util::tracecost();
    cmd.current_dir(bad_dir()).env_remove("GITHUB_STEP_SUMMARY");
    cmd
}

/// Whether `s` holds `N:M` (two runs of digits around a colon).
fn has_line_col(s: &str) -> bool {
    let b = s.as_bytes();
    (1..b.len().saturating_sub(1))
        .any(|i| b[i] == b':' && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit())
}

/// Whether `s` holds `file:N:`.
fn has_line(s: &str, file: &str) -> bool {
    s.find(file).is_some_and(|i| {
        let rest = &s[i + file.len()..];
        rest.starts_with(':') && rest[1..].starts_with(|c: char| c.is_ascii_digit())
    })
}

/// Runs `args` and returns a description of everything wrong with the
/// outcome (empty when it is a proper exit-2 rejection).
fn check_rejected(args: &[&str], file: &str, place: Place, expect: &str) -> Vec<String> {
    check_failed_with(2, args, file, place, expect)
}

/// [`check_rejected`] for a failure with exit code `code`.
fn check_failed_with(
    code: i32,
    args: &[&str],
    file: &str,
    place: Place,
    expect: &str,
) -> Vec<String> {
    let out = tracecost().args(args).output().expect("run tracecost");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let mut problems = Vec::new();
    let mut bad = |what: String| problems.push(format!("`tracecost {}`: {what}", args.join(" ")));
    if out.status.code() != Some(code) {
        bad(format!(
            "exit code {:?}, expected {code}; stderr: {stderr}",
            out.status.code()
        ));
    }
    if !out.stdout.is_empty() {
        bad(format!("wrote {} bytes to stdout", out.stdout.len()));
    }
    let lines: Vec<&str> = stderr.lines().collect();
    if lines.len() != 1 || !stderr.ends_with('\n') {
        bad(format!(
            "expected one line on stderr, got {}: {stderr:?}",
            lines.len()
        ));
    }
    let line = lines.first().copied().unwrap_or("");
    if !line.starts_with("tracecost: ") {
        bad(format!("message does not start with `tracecost: `: {line}"));
    }
    if !line.contains(file) {
        bad(format!("message does not name {file}: {line}"));
    }
    let placed = match place {
        LineCol => has_line_col(line),
        Line => has_line(line, file),
        Pointer => line.contains(" at /"),
        File => true,
    };
    if !placed {
        bad(format!("message has no {place:?} place: {line}"));
    }
    if !line.contains(expect) {
        bad(format!("message lacks {expect:?}: {line}"));
    }
    if line.contains("internal error") {
        bad(format!("panicked: {line}"));
    }
    problems
}

fn assert_no_problems(problems: Vec<String>) {
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Every file under `dir` (relative to the bad fixtures), sorted.
fn fixture_files(dir: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(bad_dir().join(dir)).expect("fixture directory") {
        let e = e.expect("fixture entry");
        let name = format!("{dir}/{}", e.file_name().to_string_lossy());
        if e.file_type().expect("file type").is_file() {
            out.insert(name);
        }
    }
    out
}

/// Fails when a fixture file has no case (or a case no fixture).
fn assert_all_covered(dir: &str, cases: &[&str], helpers: &[&str]) {
    let files = fixture_files(dir);
    let listed: BTreeSet<String> = cases
        .iter()
        .chain(helpers)
        .map(|s| s.to_string())
        .filter(|s| !s.ends_with('/'))
        .collect();
    let missing: Vec<&String> = files.difference(&listed).collect();
    let stale: Vec<&String> = listed.difference(&files).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "fixtures without a case: {missing:?}; cases without a fixture: {stale:?}"
    );
}

// ---------------------------------------------------------------------------
// Canonical traces (`tracecost replay FILE`)
// ---------------------------------------------------------------------------

const TRACES: &[(&str, Place, &str)] = &[
    (
        "trace/empty.json",
        LineCol,
        "1:1: EOF while parsing a value",
    ),
    (
        "trace/whitespace-only.json",
        LineCol,
        "EOF while parsing a value",
    ),
    (
        "trace/truncated.json",
        LineCol,
        "10:10: EOF while parsing a string",
    ),
    (
        "trace/invalid-utf8.json",
        LineCol,
        "5:35: invalid unicode code point",
    ),
    (
        "trace/trailing-garbage.json",
        LineCol,
        "trailing characters",
    ),
    (
        "trace/top-level-array.json",
        LineCol,
        "expected a JSON object (a tracecost trace)",
    ),
    (
        "trace/wrong-version.json",
        Pointer,
        "at /format: expected \"tracecost.trace/v1\", found \"tracecost.trace/v2\"",
    ),
    (
        "trace/missing-version.json",
        Pointer,
        "at /format: expected a \"format\": \"tracecost.trace/v1\" member",
    ),
    (
        "trace/version-not-string.json",
        LineCol,
        "invalid type: integer `1`, expected a string",
    ),
    (
        "trace/name-not-string.json",
        LineCol,
        "2:9: invalid type: integer `5`, expected a string",
    ),
    (
        "trace/missing-name.json",
        Pointer,
        "at /name: expected a \"name\" string",
    ),
    (
        "trace/missing-model.json",
        Pointer,
        "at /model: expected a \"model\" string",
    ),
    (
        "trace/unknown-provider.json",
        Pointer,
        "at /provider: unknown provider \"azure\"; expected one of",
    ),
    (
        "trace/messages-not-array.json",
        LineCol,
        "invalid type: map, expected a sequence",
    ),
    (
        "trace/missing-calls.json",
        Pointer,
        "at /calls: expected a \"calls\" array",
    ),
    (
        "trace/no-traces.json",
        Pointer,
        "at /traces: expected at least one trace",
    ),
    (
        "trace/traces-and-messages.json",
        Pointer,
        "at /messages: expected either \"traces\" or one trace's members",
    ),
    (
        "trace/multi-second-invalid.json",
        Pointer,
        "at /traces/1/calls/0/messages: expected at most 1",
    ),
    (
        "trace/message-bad-role.json",
        Pointer,
        "at /messages/0/role: expected \"user\" or \"assistant\"",
    ),
    (
        "trace/message-content-number.json",
        Pointer,
        "at /messages/0/content: expected a string or an array of content blocks",
    ),
    (
        "trace/tool-use-without-id.json",
        Pointer,
        "at /messages/1/content/0/id: expected a string (member is missing)",
    ),
    (
        "trace/system-not-text.json",
        Pointer,
        "at /system/0/type: expected \"text\"",
    ),
    (
        "trace/negative-call-count.json",
        LineCol,
        "invalid value: integer `-1`, expected u64",
    ),
    (
        "trace/fractional-call-count.json",
        LineCol,
        "invalid type: floating point `1.5`, expected u64",
    ),
    (
        "trace/duplicate-key.json",
        LineCol,
        "4:40: the key \"content\" appears twice in one object",
    ),
    ("trace/call-count-overflow.json", LineCol, "expected u64"),
    (
        "trace/number-out-of-range.json",
        LineCol,
        "number out of range",
    ),
    (
        "trace/deep-nesting.json",
        LineCol,
        "recursion limit exceeded",
    ),
    (
        "trace/orphan-tool-result.json",
        Pointer,
        "at /messages/2/content/0/tool_use_id: expected the id of an earlier tool_use, \"toolu_9\" has none",
    ),
    (
        "trace/tool-result-before-use.json",
        Pointer,
        "at /messages/0/content/0/tool_use_id: expected the id of an earlier tool_use",
    ),
    (
        "trace/duplicate-tool-use-id.json",
        Pointer,
        "at /messages/1/content/1/id: expected a unique tool_use id, \"toolu_1\" is used twice",
    ),
    (
        "trace/answered-twice.json",
        Pointer,
        "at /messages/2/content/1/tool_use_id: expected one tool_result per tool_use",
    ),
    (
        "trace/duplicate-tool-name.json",
        Pointer,
        "at /tools/1/name: expected a unique tool name, \"fetch\" is defined twice",
    ),
    (
        "trace/absurd-usage.json",
        Pointer,
        "at /calls/0/usage/input_tokens: expected a token count of at most 100000000, found 5000000000",
    ),
    (
        "trace/absurd-hidden-prefix.json",
        Pointer,
        "at /hidden_prefix_tokens: expected a token count of at most 100000000",
    ),
    (
        "trace/call-sends-zero.json",
        Pointer,
        "at /calls/0/messages: expected at least 1 message",
    ),
    (
        "trace/call-exceeds-history.json",
        Pointer,
        "at /calls/0/messages: expected at most 3 (the history's length), found 4",
    ),
    (
        "trace/calls-shrink.json",
        Pointer,
        "at /calls/1/messages: expected at least 3 (the previous call's count",
    ),
    (
        "trace/marker-out-of-range.json",
        Pointer,
        "at /calls/1/cache_markers/0/message: expected a message index below 3",
    ),
    (
        "trace/marker-block-out-of-range.json",
        Pointer,
        "at /calls/0/cache_markers/0/block: expected a block index below 1",
    ),
    (
        "trace/marker-two-targets.json",
        Pointer,
        "at /calls/0/cache_markers/0: expected exactly one of",
    ),
    (
        "trace/marker-bad-ttl.json",
        Pointer,
        "at /calls/0/cache_markers/0/ttl: expected \"5m\" or \"1h\", found \"10m\"",
    ),
    (
        "trace/marker-unknown-member.json",
        LineCol,
        "unknown field `index`",
    ),
    (
        "trace/too-many-markers.json",
        Pointer,
        "at /calls/0/cache_markers: expected at most 4 markers, found 5",
    ),
];

#[test]
fn every_trace_fixture_has_a_case() {
    let cases: Vec<&str> = TRACES.iter().map(|c| c.0).collect();
    assert_all_covered("trace", &cases, &[]);
}

#[test]
fn bad_traces_are_rejected_with_file_and_place() {
    let mut problems = Vec::new();
    for &(file, place, expect) in TRACES {
        problems.extend(check_rejected(&["replay", file], file, place, expect));
    }
    assert_no_problems(problems);
}

#[test]
fn every_trace_command_rejects_a_bad_trace_before_any_output() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    let out_s = out.to_str().unwrap();
    let file = "trace/orphan-tool-result.json";
    let expect = "at /messages/2/content/0/tool_use_id";
    let mut problems = Vec::new();
    for args in [
        vec!["sweep", file],
        vec!["stability", file, "--processes", "0"],
        vec!["recall", file, "toolu_1"],
        vec!["report", "baseline/ok-trace.json", file, "--out", out_s],
    ] {
        problems.extend(check_rejected(&args, file, Pointer, expect));
    }
    assert_no_problems(problems);
    assert!(!out.exists(), "report left an output directory");
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "temporary files left"
    );
}

#[test]
fn a_directory_or_a_missing_file_where_a_trace_is_expected() {
    assert_no_problems(
        [
            // A folder is read: its first damaged trace is named.
            check_rejected(
                &["replay", "trace"],
                "trace/absurd-hidden-prefix.json",
                Pointer,
                "expected a token count",
            ),
            check_rejected(
                &["replay", "trace/no-such.json"],
                "trace/no-such.json",
                File,
                "cannot read: No such file",
            ),
            // A folder of folders is read through: the first damaged log
            // of its subfolders is named, at its place.
            check_rejected(
                &["sweep", "import"],
                "import/anthropic/bad-block.jsonl",
                Pointer,
                "at /request/messages/0/content/0/tool_use_id: expected a string",
            ),
        ]
        .concat(),
    );
}

// ---------------------------------------------------------------------------
// Importers (`tracecost import --from FORMAT FILE -o OUT`)
// ---------------------------------------------------------------------------

const IMPORTS: &[(&str, &str, Place, &str)] = &[
    (
        "claude-code",
        "import/claude-code/empty.jsonl",
        File,
        "nothing to import: 1 file(s) read, 1 skipped",
    ),
    (
        "claude-code",
        "import/claude-code/invalid-lines.jsonl",
        File,
        "nothing to import: 1 file(s) read, 1 skipped, 3 invalid line(s) skipped",
    ),
    (
        "claude-code",
        "import/claude-code/only-bookkeeping.jsonl",
        File,
        "nothing to import",
    ),
    (
        "claude-code",
        "import/claude-code/orphan-results-only.jsonl",
        File,
        "tool_result blocks opening a file that starts mid-conversation",
    ),
    (
        "claude-code",
        "import/claude-code/no-transcripts/",
        File,
        "no Claude Code transcripts (*.jsonl) found in import/claude-code/no-transcripts",
    ),
    (
        "anthropic",
        "import/anthropic/empty.jsonl",
        File,
        "no Messages API exchanges found in 1 file(s)",
    ),
    (
        "anthropic",
        "import/anthropic/truncated.jsonl",
        LineCol,
        "2:40: EOF while parsing a string",
    ),
    (
        "anthropic",
        "import/anthropic/invalid-utf8.jsonl",
        LineCol,
        "2:105: not UTF-8",
    ),
    (
        "anthropic",
        "import/anthropic/top-level-array.json",
        LineCol,
        "1:1: invalid type: sequence, expected a JSON object",
    ),
    (
        "anthropic",
        "import/anthropic/line-not-object.jsonl",
        LineCol,
        "2:15: invalid type: string \"just a string\", expected a JSON object",
    ),
    (
        "anthropic",
        "import/anthropic/messages-not-array.jsonl",
        Line,
        "at /request/messages: expected an array of message objects",
    ),
    (
        "anthropic",
        "import/anthropic/bad-role.jsonl",
        Line,
        "at /request/messages/0/role: expected \"user\" or \"assistant\"",
    ),
    (
        "anthropic",
        "import/anthropic/bad-block.jsonl",
        Line,
        "at /request/messages/0/content/0/tool_use_id: expected a string",
    ),
    (
        "anthropic",
        "import/anthropic/deep-nesting-request.jsonl",
        File,
        "no Messages API exchanges found",
    ),
    (
        "langchain",
        "import/langchain/empty.jsonl",
        File,
        "no LangChain message lists found in 1 file(s)",
    ),
    (
        "langchain",
        "import/langchain/truncated.jsonl",
        LineCol,
        "2:30: EOF while parsing a string",
    ),
    (
        "langchain",
        "import/langchain/invalid-utf8.jsonl",
        LineCol,
        "1:42: not UTF-8",
    ),
    (
        "langchain",
        "import/langchain/not-a-list.json",
        LineCol,
        "expected a list of LangChain messages",
    ),
    (
        "langchain",
        "import/langchain/numbers.json",
        File,
        "no LangChain message lists found",
    ),
    (
        "langchain",
        "import/langchain/bad-message-type.json",
        File,
        "no LangChain message lists found",
    ),
    (
        "openai",
        "import/openai/empty.jsonl",
        File,
        "no OpenAI conversations found in 1 file(s)",
    ),
    (
        "openai",
        "import/openai/truncated.jsonl",
        LineCol,
        "2:40: EOF while parsing a string",
    ),
    (
        "openai",
        "import/openai/invalid-utf8.jsonl",
        LineCol,
        "1:81: not UTF-8",
    ),
    (
        "openai",
        "import/openai/not-a-conversation.json",
        LineCol,
        "expected a request body, a list of messages, or a list of request/response records",
    ),
    (
        "openai",
        "import/openai/numbers.json",
        LineCol,
        "expected a JSON object or a list of messages",
    ),
    (
        "openai",
        "import/openai/messages-not-array.jsonl",
        Pointer,
        "at /request/messages: expected an array of messages",
    ),
    (
        "openai",
        "import/openai/bad-role.jsonl",
        File,
        "no OpenAI conversations found",
    ),
];

/// Inputs the importers repair instead of rejecting: what the report must
/// say it dropped or changed.
const REPAIRED: &[(&str, &str, &[&str])] = &[
    (
        "claude-code",
        "import/claude-code/repaired.jsonl",
        &[
            "1 invalid line(s) skipped",
            "1 × tool_result blocks whose tool_use is not earlier in the file (dropped)",
            "1 × repeated tool_result blocks for one tool_use (dropped)",
            "1 × tool_use blocks reusing an earlier id (dropped)",
            "usage rows with null, missing or malformed token counts",
        ],
    ),
    (
        "anthropic",
        "import/anthropic/repaired.jsonl",
        &[
            "usage objects with absurd token counts (dropped)",
            "repeated tool_use ids (renamed with a _N suffix)",
            "tool results answering no earlier tool call (kept as text)",
        ],
    ),
    (
        "anthropic",
        "import/anthropic/deep-nesting.jsonl",
        &["1 file(s) read"],
    ),
    (
        "langchain",
        "import/langchain/repaired.json",
        &[
            "usage objects with absurd token counts (dropped)",
            "repeated tool_use ids (renamed with a _N suffix)",
            "tool results answering no earlier tool call (kept as text)",
        ],
    ),
    (
        "langchain",
        "import/langchain/deep-nesting.json",
        &["content parts that are not strings or objects (dropped)"],
    ),
    (
        "openai",
        "import/openai/repaired.jsonl",
        &[
            "usage objects with absurd token counts (dropped)",
            "repeated tool_use ids (renamed with a _N suffix)",
            "tool results answering no earlier tool call (kept as text)",
        ],
    ),
    (
        "openai",
        "import/openai/deep-nesting.json",
        &["content parts of an invalid shape (dropped)"],
    ),
];

#[test]
fn every_import_fixture_has_a_case() {
    for format in ["claude-code", "anthropic", "langchain", "openai"] {
        let dir = format!("import/{format}");
        let cases: Vec<&str> = IMPORTS
            .iter()
            .filter(|c| c.0 == format)
            .map(|c| c.1)
            .chain(REPAIRED.iter().filter(|c| c.0 == format).map(|c| c.1))
            .collect();
        assert_all_covered(&dir, &cases, &[]);
    }
}

#[test]
fn bad_import_inputs_are_rejected_without_output() {
    let mut problems = Vec::new();
    for &(format, file, place, expect) in IMPORTS {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out.json");
        let args = [
            "import",
            "--from",
            format,
            file,
            "-o",
            out.to_str().unwrap(),
        ];
        problems.extend(check_rejected(
            &args,
            file.trim_end_matches('/'),
            place,
            expect,
        ));
        if std::fs::read_dir(tmp.path()).unwrap().count() != 0 {
            problems.push(format!("{file}: left an output or temporary file"));
        }
    }
    assert_no_problems(problems);
}

/// The import streams: traces of the first input are written to the
/// temporary file before the second input is read. When the second input
/// is bad, the temporary file goes and an earlier output stays as it was.
#[test]
fn an_import_failing_halfway_keeps_the_earlier_output() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.json");
    std::fs::write(&out, "earlier output").unwrap();
    let good =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/anthropic_plain.jsonl");
    let o = tracecost()
        .args(["import", "--from", "anthropic"])
        .arg(&good)
        .arg("import/anthropic/truncated.jsonl")
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("import/anthropic/truncated.jsonl:"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "earlier output");
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        1,
        "a temporary file was left"
    );
}

#[test]
fn a_missing_input_or_a_directory_without_logs_is_named() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out.json");
    let o = out.to_str().unwrap();
    let mut problems = Vec::new();
    for format in ["claude-code", "anthropic", "langchain", "openai"] {
        problems.extend(check_rejected(
            &["import", "--from", format, "import/no-such.jsonl", "-o", o],
            "import/no-such.jsonl",
            File,
            "cannot read: No such file or directory",
        ));
    }
    for format in ["anthropic", "langchain", "openai"] {
        problems.extend(check_rejected(
            &[
                "import",
                "--from",
                format,
                "import/claude-code/no-transcripts",
                "-o",
                o,
            ],
            "import/claude-code/no-transcripts",
            File,
            "found in 0 file(s)",
        ));
    }
    // `usage` reads the same transcripts.
    problems.extend(check_rejected(
        &["usage", "import/no-such"],
        "import/no-such",
        File,
        "cannot read: No such file or directory",
    ));
    problems.extend(check_rejected(
        &["usage", "import/claude-code/no-transcripts"],
        "import/claude-code/no-transcripts",
        File,
        "no Claude Code transcripts (*.jsonl) found",
    ));
    assert_no_problems(problems);
    assert!(!out.exists());
}

#[test]
fn repairable_import_inputs_import_and_say_what_was_dropped() {
    let mut problems = Vec::new();
    for &(format, file, notes) in REPAIRED {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("out.json");
        let o = tracecost()
            .args([
                "import",
                "--from",
                format,
                file,
                "-o",
                out.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        if o.status.code() != Some(0) {
            problems.push(format!("{file}: exit {:?}: {stderr}", o.status.code()));
            continue;
        }
        if stderr.lines().count() != 1 {
            problems.push(format!("{file}: expected one line on stderr: {stderr}"));
        }
        for n in notes {
            if !stderr.contains(n) {
                problems.push(format!("{file}: report lacks {n:?}: {stderr}"));
            }
        }
        if let Err(e) = tracecost::trace::Loader::new(&out).load() {
            problems.push(format!("{file}: imported trace does not load: {e}"));
        }
    }
    assert_no_problems(problems);
}

// ---------------------------------------------------------------------------
// Pricing files (`--pricing FILE`)
// ---------------------------------------------------------------------------

const PRICING: &[(&str, Place, &str)] = &[
    (
        "pricing/duplicate-model.json",
        LineCol,
        "3:18: invalid JSON: the key \"claude-house-1\" appears twice in one object",
    ),
    (
        "pricing/litellm-duplicate-field.json",
        LineCol,
        "3:26: invalid JSON: the key \"input_cost_per_token\" appears twice in one object",
    ),
    (
        "pricing/empty.json",
        LineCol,
        "1:1: invalid JSON: EOF while parsing a value",
    ),
    (
        "pricing/truncated.json",
        LineCol,
        "3:24: invalid JSON: EOF while parsing an object",
    ),
    (
        "pricing/invalid-utf8.json",
        LineCol,
        "3:19: invalid JSON: not UTF-8",
    ),
    (
        "pricing/not-an-object.json",
        File,
        "at the top level: expected a JSON object",
    ),
    (
        "pricing/models-not-object.json",
        Pointer,
        "at /models: expected an object mapping model ids to prices",
    ),
    (
        "pricing/unknown-member.json",
        Pointer,
        "at /currency: expected no such member",
    ),
    (
        "pricing/unknown-price-field.json",
        Pointer,
        "at /models/claude-house-1/inptu_cached: expected one of the members",
    ),
    (
        "pricing/price-not-number.json",
        Pointer,
        "at /models/claude-house-1/input: expected a non-negative number",
    ),
    (
        "pricing/negative-price.json",
        Pointer,
        "at /models/claude-house-1/input: expected a non-negative number",
    ),
    (
        "pricing/absurd-price.json",
        Pointer,
        "at /models/claude-house-1/input: expected a price of at most 1000000 USD per million tokens, found 1e300",
    ),
    (
        "pricing/number-out-of-range.json",
        LineCol,
        "1:45: invalid JSON: number out of range",
    ),
    (
        "pricing/absurd-framing.json",
        Pointer,
        "at /models/claude-sonnet-4-5/framing/per_message: expected a token count of at most 100000000",
    ),
    (
        "pricing/absurd-tool-prompt.json",
        Pointer,
        "at /models/claude-sonnet-4-5/tool_prompt_tokens/auto_none: expected a token count of at most 100000000",
    ),
    (
        "pricing/fractional-count.json",
        Pointer,
        "at /models/claude-sonnet-4-5/min_cacheable_tokens: expected a non-negative integer",
    ),
    (
        "pricing/missing-output-new-model.json",
        Pointer,
        "at /models/claude-house-1/output: expected a price in USD per million tokens (required for a new model)",
    ),
    (
        "pricing/empty-model-id.json",
        Pointer,
        "expected a non-empty model id",
    ),
    (
        "pricing/aliases-not-array.json",
        Pointer,
        "at /models/claude-house-1/aliases: expected an array of strings",
    ),
    (
        "pricing/long-context-missing-input.json",
        Pointer,
        "at /models/claude-sonnet-4-5/long_context/input: expected a price",
    ),
    (
        "pricing/deep-nesting.json",
        LineCol,
        "invalid JSON: recursion limit exceeded",
    ),
    (
        "pricing/litellm-absurd-price.json",
        Pointer,
        "at /claude-house-1/input_cost_per_token: expected a price of at most 1 USD per token",
    ),
    (
        "pricing/litellm-price-not-number.json",
        Pointer,
        "at /claude-house-1/input_cost_per_token: expected a non-negative number",
    ),
];

#[test]
fn every_pricing_fixture_has_a_case() {
    let cases: Vec<&str> = PRICING.iter().map(|c| c.0).collect();
    assert_all_covered("pricing", &cases, &[]);
}

#[test]
fn bad_pricing_files_are_rejected_with_file_and_place() {
    let mut problems = Vec::new();
    for &(file, place, expect) in PRICING {
        problems.extend(check_rejected(
            &["models", "--pricing", file],
            file,
            place,
            expect,
        ));
    }
    // The other commands read --pricing before any output, too.
    let file = "pricing/absurd-framing.json";
    let expect = "framing/per_message";
    let trace = "baseline/ok-trace.json";
    problems.extend(check_rejected(
        &["replay", trace, "--pricing", file],
        file,
        Pointer,
        expect,
    ));
    problems.extend(check_rejected(
        &["sweep", trace, "--pricing", file],
        file,
        Pointer,
        expect,
    ));
    problems.extend(check_rejected(
        &[
            "check",
            "--baseline",
            "baseline/ok-baseline.json",
            "--pricing",
            "pricing/invalid-utf8.json",
        ],
        "pricing/invalid-utf8.json",
        LineCol,
        "not UTF-8",
    ));
    problems.extend(check_rejected(
        &["models", "--pricing", "pricing"],
        "pricing",
        File,
        "cannot read pricing file",
    ));
    problems.extend(check_rejected(
        &["models", "--pricing", "pricing/no-such.json"],
        "pricing/no-such.json",
        File,
        "cannot read pricing file",
    ));
    assert_no_problems(problems);
}

// ---------------------------------------------------------------------------
// Baseline files (`tracecost check --baseline FILE`)
// ---------------------------------------------------------------------------

const BASELINES: &[(&str, Place, &str)] = &[
    (
        "baseline/empty.json",
        LineCol,
        "1:1: EOF while parsing a value",
    ),
    (
        "baseline/truncated.json",
        LineCol,
        "5:1: EOF while parsing an object",
    ),
    ("baseline/invalid-utf8.json", LineCol, "6:22: not UTF-8"),
    (
        "baseline/not-an-object.json",
        LineCol,
        "expected struct Baseline",
    ),
    (
        "baseline/wrong-format.json",
        Pointer,
        "at /format: expected \"tracecost.baseline/v1\", found \"tracecost.baseline/v2\"",
    ),
    (
        "baseline/missing-format.json",
        LineCol,
        "missing field `format`",
    ),
    (
        "baseline/unknown-member.json",
        LineCol,
        "unknown field `tolerance`, expected one of",
    ),
    (
        "baseline/entries-not-array.json",
        LineCol,
        "invalid type: map, expected a sequence",
    ),
    (
        "baseline/no-entries.json",
        Pointer,
        "at /entries: expected at least one entry",
    ),
    (
        "baseline/negative-tolerance.json",
        Pointer,
        "at /tolerance_pct: expected a number from 0 to 10000%, found -1",
    ),
    (
        "baseline/bad-tokenizer.json",
        Pointer,
        "at /settings/tokenizer: unknown tokenizer `chars:0`",
    ),
    (
        "baseline/tiny-chars-per-token.json",
        Pointer,
        "at /settings/tokenizer: unknown tokenizer `chars:1e-300`",
    ),
    (
        "baseline/bad-calibrate.json",
        Pointer,
        "at /settings/calibrate: expected \"auto\" or \"off\", found \"maybe\"",
    ),
    (
        "baseline/absurd-expected.json",
        Pointer,
        "at /entries/0/expected/input_tokens: expected a token count of at most 9007199254740991",
    ),
    (
        "baseline/negative-cost.json",
        Pointer,
        "at /entries/0/expected/cost_usd: expected a non-negative number, found -1",
    ),
    (
        "baseline/expected-not-number.json",
        LineCol,
        "11:28: invalid type: string \"3\", expected u64",
    ),
    (
        "baseline/missing-expected.json",
        Pointer,
        "at /entries/0/expected: missing; run with --update",
    ),
    (
        "baseline/bad-config.json",
        Pointer,
        "at /entries/0/config: invalid config \"ledger:t=abc+none\"",
    ),
    (
        "baseline/unknown-trace-name.json",
        Pointer,
        "at /entries/0/name: no trace named \"nope\" in ok-trace.json",
    ),
    (
        "baseline/deep-nesting.json",
        LineCol,
        "1:46: invalid type: sequence, expected a string",
    ),
];

/// Baseline fixtures whose error is about the trace they name: the message
/// names that trace file instead of the baseline.
const BASELINE_TRACES: &[(&str, &str, Place, &str)] = &[
    (
        "baseline/missing-trace-file.json",
        "baseline/no-such-trace.json",
        File,
        "cannot read: No such file or directory",
    ),
    (
        "baseline/trace-is-directory.json",
        "baseline/.",
        File,
        "is a directory, expected a trace file",
    ),
    (
        "baseline/invalid-trace.json",
        "baseline/invalid-trace-orphan.json",
        Pointer,
        "at /messages/2/content/0/tool_use_id",
    ),
];

#[test]
fn every_baseline_fixture_has_a_case() {
    let cases: Vec<&str> = BASELINES
        .iter()
        .map(|c| c.0)
        .chain(BASELINE_TRACES.iter().map(|c| c.0))
        .collect();
    assert_all_covered(
        "baseline",
        &cases,
        &[
            "baseline/ok-trace.json",
            "baseline/ok-baseline.json",
            "baseline/invalid-trace-orphan.json",
        ],
    );
}

#[test]
fn bad_baselines_are_rejected_with_file_and_place() {
    let mut problems = Vec::new();
    for &(file, place, expect) in BASELINES {
        problems.extend(check_rejected(
            &["check", "--baseline", file],
            file,
            place,
            expect,
        ));
        if expect.contains("--update") {
            continue;
        }
        // --update must neither rewrite a bad baseline nor leave a
        // temporary file beside it (run on a copy: the fixture stays put).
        let tmp = tempfile::tempdir().unwrap();
        for f in [file, "baseline/ok-trace.json"] {
            let name = Path::new(f).file_name().unwrap();
            std::fs::copy(bad_dir().join(f), tmp.path().join(name)).unwrap();
        }
        let copy = tmp.path().join(Path::new(file).file_name().unwrap());
        let before = std::fs::read(&copy).unwrap();
        let c = copy.to_str().unwrap();
        problems.extend(check_rejected(
            &["check", "--baseline", c, "--update"],
            c,
            place,
            expect,
        ));
        if std::fs::read(&copy).unwrap() != before {
            problems.push(format!("{file}: --update changed a bad baseline"));
        }
        if std::fs::read_dir(tmp.path()).unwrap().count() != 2 {
            problems.push(format!("{file}: --update left a temporary file"));
        }
    }
    for &(file, named, place, expect) in BASELINE_TRACES {
        problems.extend(check_rejected(
            &["check", "--baseline", file],
            named,
            place,
            expect,
        ));
    }
    problems.extend(check_rejected(
        &["check", "--baseline", "baseline"],
        "baseline",
        File,
        "cannot read",
    ));
    assert_no_problems(problems);
}

// ---------------------------------------------------------------------------
// Unreadable files (chmod 000)
// ---------------------------------------------------------------------------

/// Copies `fixture` into a fresh directory with mode 000. `None` when the
/// copy can still be read: tests run as root (as CI does here) bypass file
/// permissions, so an unreadable file cannot be made and the case is
/// skipped, saying so.
#[cfg(unix)]
fn unreadable_copy(fixture: &str, name: &str) -> Option<(tempfile::TempDir, PathBuf)> {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join(name);
    std::fs::copy(bad_dir().join(fixture), &path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::File::open(&path).is_ok() {
        eprintln!("skipped: {name} is still readable with mode 000 (running as root)");
        return None;
    }
    Some((tmp, path))
}

#[cfg(unix)]
#[test]
fn unreadable_inputs_are_named() {
    let mut problems = Vec::new();
    // A fixture, the name it is copied under, and the command reading it.
    type Case = (&'static str, &'static str, fn(&str) -> Vec<String>);
    let cases: [Case; 4] = [
        ("baseline/ok-trace.json", "trace.json", |p| {
            vec!["replay".into(), p.into()]
        }),
        ("import/anthropic/repaired.jsonl", "log.jsonl", |p| {
            ["import", "--from", "anthropic", p, "-o", "/dev/null/never"]
                .map(String::from)
                .to_vec()
        }),
        ("pricing/negative-price.json", "prices.json", |p| {
            ["models", "--pricing", p].map(String::from).to_vec()
        }),
        ("baseline/negative-cost.json", "baseline.json", |p| {
            ["check", "--baseline", p].map(String::from).to_vec()
        }),
    ];
    for (fixture, name, args) in cases {
        let Some((_tmp, path)) = unreadable_copy(fixture, name) else {
            continue;
        };
        let p = path.to_str().unwrap();
        let args = args(p);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        problems.extend(check_rejected(&args, p, File, "Permission denied"));
    }
    assert_no_problems(problems);
}

// ---------------------------------------------------------------------------
// Output paths that cannot be written
// ---------------------------------------------------------------------------

#[test]
fn unwritable_outputs_fail_cleanly_and_leave_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let a_file = dir.join("a-file");
    std::fs::write(&a_file, "keep me").unwrap();
    let a_dir = dir.join("a-dir");
    std::fs::create_dir(&a_dir).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_owned();
    let under_file = s(&a_file.join("x.json"));
    let log = "import/anthropic/repaired.jsonl";
    let trace = "baseline/ok-trace.json";
    let cases: Vec<(Vec<String>, String, &str)> = vec![
        (
            [
                "import",
                "--from",
                "anthropic",
                log,
                "-o",
                "/nonexistent-dir/x.json",
            ]
            .map(String::from)
            .to_vec(),
            "/nonexistent-dir/x.json".into(),
            "cannot write: No such file or directory",
        ),
        (
            ["import", "--from", "anthropic", log, "-o", &s(&a_dir)]
                .map(String::from)
                .to_vec(),
            s(&a_dir),
            "cannot write: is a directory",
        ),
        (
            ["import", "--from", "anthropic", log, "-o", &under_file]
                .map(String::from)
                .to_vec(),
            under_file.clone(),
            "cannot write: Not a directory",
        ),
        (
            ["gen", "massage-gun", "-o", &s(&a_dir)]
                .map(String::from)
                .to_vec(),
            s(&a_dir),
            "cannot write: is a directory",
        ),
        (
            ["gen", "session", "--calls", "3", "-o", &under_file]
                .map(String::from)
                .to_vec(),
            under_file.clone(),
            "cannot write: Not a directory",
        ),
        // `--out` naming a file is refused before anything runs, as any
        // folder that is not a report is (tests/cli/reliability/output.rs).
        (
            ["report", trace, "--out", &s(&a_file.join("report"))]
                .map(String::from)
                .to_vec(),
            s(&a_file.join("report")),
            "cannot write",
        ),
    ];
    let mut problems = Vec::new();
    for (args, named, expect) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        // An output that cannot be written is an output failure (73), not
        // bad input.
        problems.extend(check_failed_with(73, &args, named, File, expect));
    }
    assert_no_problems(problems);
    assert_eq!(
        std::fs::read(&a_file).unwrap(),
        b"keep me",
        "the file in the way was changed"
    );
    assert_eq!(
        std::fs::read_dir(&a_dir).unwrap().count(),
        0,
        "the directory in the way was changed"
    );
    let mut left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["a-dir", "a-file"], "temporary files left behind");
}

#[cfg(unix)]
#[test]
fn read_only_output_directories_fail_cleanly() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let ro = tmp.path().join("read-only");
    std::fs::create_dir(&ro).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
    if std::fs::write(ro.join("probe"), "x").is_ok() {
        // Root ignores directory permissions (CI runs as root here): no
        // read-only directory can be made, so the case is skipped.
        eprintln!("skipped: a mode-555 directory is writable (running as root)");
        return;
    }
    let out = ro.join("report");
    let file = ro.join("t.json");
    let problems = [
        check_rejected(
            &[
                "report",
                "baseline/ok-trace.json",
                "--out",
                out.to_str().unwrap(),
            ],
            out.to_str().unwrap(),
            File,
            "Permission denied",
        ),
        check_rejected(
            &["gen", "massage-gun", "-o", file.to_str().unwrap()],
            file.to_str().unwrap(),
            File,
            "Permission denied",
        ),
    ]
    .concat();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_no_problems(problems);
    assert_eq!(
        std::fs::read_dir(&ro).unwrap().count(),
        0,
        "files left in the read-only directory"
    );
}

// ---------------------------------------------------------------------------
// Command-line arguments
// ---------------------------------------------------------------------------

/// Arguments tracecost itself checks: one `tracecost:` line like any input.
const ARGS: &[(&[&str], &str, &str)] = &[
    (
        &[
            "replay",
            "baseline/ok-trace.json",
            "--config",
            "ledger:t=abc+none",
        ],
        "ledger:t=abc+none",
        "t=\"abc\" is not a non-negative integer",
    ),
    (
        &[
            "replay",
            "baseline/ok-trace.json",
            "--config",
            "ledger:t=99999999999999999999999+none",
        ],
        "ledger:t=99999999999999999999999+none",
        "is not a non-negative integer",
    ),
    (
        &["replay", "baseline/ok-trace.json", "--config", "bogus"],
        "bogus",
        "expected COMPACTION+CACHE",
    ),
    (
        &["replay", "baseline/ok-trace.json", "--tokenizer", "chars:0"],
        "chars:0",
        "unknown tokenizer `chars:0`: expected",
    ),
    (
        &[
            "replay",
            "baseline/ok-trace.json",
            "--tokenizer",
            "chars:1e-300",
        ],
        "chars:1e-300",
        "(at least 0.01)",
    ),
    (
        &[
            "replay",
            "baseline/ok-trace.json",
            "--tokenizer",
            "chars:NaN",
        ],
        "chars:NaN",
        "unknown tokenizer `chars:NaN`",
    ),
    (
        &["replay", "baseline/ok-trace.json", "--model", "gpt-nope"],
        "gpt-nope",
        "unknown model",
    ),
    (
        &[
            "sweep",
            "baseline/ok-trace.json",
            "--compaction",
            "ledger:t=x",
        ],
        "ledger:t=x",
        "invalid config",
    ),
    (
        &[
            "check",
            "--baseline",
            "baseline/ok-baseline.json",
            "--tolerance=-1",
        ],
        "--tolerance",
        "expected a number from 0 to",
    ),
    (
        &[
            "check",
            "--baseline",
            "baseline/ok-baseline.json",
            "--tolerance",
            "NaN",
        ],
        "--tolerance",
        "expected a number from 0 to",
    ),
    (
        &["sweep", "baseline/ok-trace.json", "--recall-cost", "NaN"],
        "--recall-cost",
        "expected a number from 0 to",
    ),
    (
        &["sweep", "baseline/ok-trace.json", "--recall-cost=-1"],
        "--recall-cost",
        "expected a number from 0 to",
    ),
    (
        &[
            "report",
            "baseline/ok-trace.json",
            "--recall-cost",
            "inf",
            "--out",
            "/nonexistent-dir/r",
        ],
        "--recall-cost",
        "expected a number from 0 to",
    ),
    (&["gen", "nosuch"], "nosuch", "unknown generator"),
    (
        &["gen", "session", "--calls", "0"],
        "--calls",
        "expected a whole number from 1 to 100000",
    ),
];

/// Arguments clap rejects: clap's message made one line (naming the
/// argument, with the usage), exit 2, nothing on stdout.
const CLAP_ARGS: &[(&[&str], &str)] = &[
    (&["replay"], "<TRACE>"),
    (
        &["replay", "baseline/ok-trace.json", "--threshold", "abc"],
        "--threshold",
    ),
    (
        &[
            "replay",
            "baseline/ok-trace.json",
            "--threshold",
            "99999999999999999999999",
        ],
        "--threshold",
    ),
    (
        &["replay", "baseline/ok-trace.json", "--keep-last", "-1"],
        "-1",
    ),
    (
        &["replay", "baseline/ok-trace.json", "--thresold", "5"],
        "--thresold",
    ),
    (
        &["replay", "baseline/ok-trace.json", "--cache", "bogus"],
        "--cache",
    ),
    (
        &["replay", "baseline/ok-trace.json", "--format", "xml"],
        "--format",
    ),
    (
        &[
            "replay",
            "baseline/ok-trace.json",
            "--config",
            "off+none",
            "--cache",
            "tail",
        ],
        "--cache",
    ),
    (
        &["recall", "baseline/ok-trace.json", "x", "--offset", "abc"],
        "--offset",
    ),
    (
        &["import", "--from", "csv", "x.csv", "-o", "out.json"],
        "--from",
    ),
    (&["import", "--from", "anthropic", "x.jsonl"], "--output"),
    (&["check"], "--baseline"),
    (&["frobnicate"], "frobnicate"),
];

#[test]
fn bad_arguments_exit_2_with_the_argument_named() {
    let mut problems = Vec::new();
    for &(args, named, expect) in ARGS {
        problems.extend(check_rejected(args, named, File, expect));
    }
    for &(args, named) in CLAP_ARGS {
        let out = tracecost().args(args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() != Some(2) || !out.stdout.is_empty() {
            problems.push(format!(
                "{args:?}: exit {:?}, {} bytes on stdout",
                out.status.code(),
                out.stdout.len()
            ));
        }
        if stderr.lines().count() != 1 || !stderr.starts_with("tracecost: ") {
            problems.push(format!("{args:?}: not one `tracecost:` line: {stderr}"));
        }
        if !stderr.contains(named) || !stderr.trim_end().ends_with("; see --help") {
            problems.push(format!(
                "{args:?}: message does not name {named} and point to --help: {stderr}"
            ));
        }
    }
    assert_no_problems(problems);
}

/// A UTF-8 byte-order mark (Windows editors write one) is ignored, as RFC
/// 8259 allows: the trace replays exactly as without it, and an import log
/// starting with one imports as without it.
#[test]
fn a_utf8_byte_order_mark_is_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |args: &[&std::ffi::OsStr]| {
        let out = tracecost().args(args).output().unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let plain = bad_dir().join("baseline/ok-trace.json");
    let with_bom = tmp.path().join("bom.json");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(&plain).unwrap());
    std::fs::write(&with_bom, bytes).unwrap();
    let replay = |p: &Path| {
        run(&[
            "replay".as_ref(),
            p.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ])
    };
    assert_eq!(replay(&with_bom), replay(&plain));

    let log =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/anthropic_plain.jsonl");
    let log_bom = tmp.path().join("bom.jsonl");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(&log).unwrap());
    std::fs::write(&log_bom, bytes).unwrap();
    let (a, b) = (tmp.path().join("a.json"), tmp.path().join("b.json"));
    for (input, out) in [(&log, &a), (&log_bom, &b)] {
        run(&[
            "import".as_ref(),
            "--from".as_ref(),
            "anthropic".as_ref(),
            input.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
        ]);
    }
    let (a, b) = (
        std::fs::read_to_string(a).unwrap(),
        std::fs::read_to_string(b).unwrap(),
    );
    // The trace names and descriptions name the input file; the rest is equal.
    assert_eq!(a.replace("anthropic_plain", "bom"), b);
}

// ---------------------------------------------------------------------------
// Regressions found by fuzzing (fuzz/) and large inputs
// ---------------------------------------------------------------------------

/// fuzz/fuzz_targets/load_trace.rs: a message object with `content` twice
/// (a block list, then a string) loaded, and the writer wrote the blocks in
/// place of both, so the written trace loaded to a different message. A key
/// twice in one object is now refused where it is read, with its place.
#[test]
fn a_message_with_content_twice_is_refused_not_rewritten() {
    let json = r#"{"format":"tracecost.trace/v1","name":"t","model":"claude-sonnet-4-5",
"messages":[{"role":"user","content":"q"},{"role":"assistant","content":[{"type":"text","text":"a"}],"content":"b"}],
"calls":[{"messages":1}]}"#;
    let err = tracecost::trace::load_str(json, "dup.json")
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("dup.json:2:") && err.contains("the key \"content\" appears twice"),
        "{err}"
    );
}

/// fuzz/fuzz_targets/load_trace.rs: a call that resends the prompt in force
/// started a new prompt version; the writer leaves such a repeat out, so the
/// written trace loaded to different prompt indices (and calibration, which
/// skips call pairs across a prompt change, gave different figures).
#[test]
fn a_resent_identical_prompt_round_trips() {
    let json = r#"{"format":"tracecost.trace/v1","name":"t","model":"claude-sonnet-4-5",
"system":[{"type":"text","text":"Be brief."}],
"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":"c"}],
"calls":[{"messages":1},{"messages":3,"tools":[],"system":[{"type":"text","text":"Be brief."}]}]}"#;
    let loaded = tracecost::trace::load_str(json, "t.json").unwrap();
    assert_eq!(loaded.traces[0].prompts.len(), 1);
    assert_eq!(loaded.traces[0].calls[1].prompt, 0);
    let again =
        tracecost::trace::load_str(&tracecost::trace::to_json(&loaded.traces[0]), "again.json")
            .unwrap();
    assert_eq!(again.traces, loaded.traces);
}

/// Raw values (tool inputs, tool results, unknown members) are kept as
/// bytes and never parsed recursively: nesting far past serde_json's
/// recursion limit loads and replays without overflowing the stack.
#[test]
fn deeply_nested_raw_values_do_not_overflow_the_stack() {
    let n = 100_000;
    let deep = format!("{}{}", "[".repeat(n), "]".repeat(n));
    let json = format!(
        r#"{{"format":"tracecost.trace/v1","name":"deep","model":"claude-sonnet-4-5","extra":{deep},
"messages":[{{"role":"user","content":"go"}},
{{"role":"assistant","content":[{{"type":"tool_use","id":"t1","name":"f","input":{{"a":{deep}}}}}]}},
{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":"{deep}"}}]}}],
"calls":[{{"messages":1}},{{"messages":3}}]}}"#
    );
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("deep.json");
    std::fs::write(&path, json).unwrap();
    let p = path.to_str().unwrap();
    for args in [
        vec![
            "replay",
            p,
            "--compaction",
            "ledger",
            "--threshold",
            "10",
            "--keep-last",
            "0",
            "--cache",
            "tail",
        ],
        vec!["recall", p, "t1", "--json-path", "0.0.0"],
    ] {
        let out = tracecost().args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

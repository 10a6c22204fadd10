//! The report: byte-identical regeneration, HTML escaping, exporter output.

use std::path::Path;

use assert_cmd::Command;

fn tracecost() -> Command {
    let mut c = Command::cargo_bin("tracecost").unwrap();
    c.env("TRACECOST_NO_PROGRESS", "1");
    c
}

fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push((
                    p.strip_prefix(dir).unwrap().display().to_string(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// The committed example is what the documented command writes, byte for
/// byte: `tracecost report traces/massage-gun.json --out reports/massage-gun`.
#[test]
fn committed_example_report_regenerates_byte_identically() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let dest = out.path().join("massage-gun");
    tracecost()
        .current_dir(root)
        .args(["report", "traces/massage-gun.json", "--out"])
        .arg(&dest)
        .assert()
        .success();
    let fresh = files(&dest);
    let committed = files(&root.join("reports/massage-gun"));
    let names = |v: &[(String, Vec<u8>)]| v.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&fresh), names(&committed));
    for ((name, a), (_, b)) in fresh.iter().zip(&committed) {
        assert!(
            a == b,
            "{name} differs from the committed example; regenerate it with the documented command"
        );
    }
    for required in [
        "index.html",
        "summary.md",
        "results.json",
        "results.csv",
        "charts/massage-gun-calls.svg",
        "charts/massage-gun-calls.png",
        "charts/massage-gun-cumulative.png",
        "charts/massage-gun-savings.svg",
    ] {
        assert!(
            fresh.iter().any(|(n, _)| n == required),
            "missing {required}"
        );
    }
}

const HOSTILE: &str = r#"{"format":"tracecost.trace/v1","name":"evil<script>alert(1)</script>","description":"\"><img src=x onerror=alert(2)> and <b>bold</b>","model":"claude-sonnet-4-5",
"tools":[{"name":"fetch","input_schema":{"type":"object"}}],
"messages":[
{"role":"user","content":"<script>steal()</script>"},
{"role":"assistant","content":[{"type":"tool_use","id":"toolu_<x>","name":"fetch","input":{"u":"\"><img onerror=1>"}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_<x>","content":"<script>payload()</script> big result here"}]},
{"role":"assistant","content":[{"type":"text","text":"done"}]}
],
"calls":[{"messages":1,"usage":{"output_tokens":5}},{"messages":3,"usage":{"output_tokens":7}}]}"#;

#[test]
fn trace_text_is_escaped_in_the_html() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("evil.json");
    std::fs::write(&trace, HOSTILE).unwrap();
    let out = dir.path().join("out");
    tracecost()
        .arg("report")
        .arg(&trace)
        .arg("--out")
        .arg(&out)
        .args([
            "--threshold",
            "10",
            "--keep-last",
            "0",
            "--cache",
            "none,tail",
        ])
        .assert()
        .success();
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!html.contains("<script>"), "raw <script> in the report");
    assert!(!html.contains("<img"), "raw <img in the report");
    assert!(html.contains("evil&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&quot;&gt;&lt;img src=x onerror=alert(2)&gt;"));
    // No scripts or remote resources at all: the file works offline.
    for banned in [
        "<script",
        "src=\"http",
        "href=\"http",
        "url(http",
        "@import",
        "<link",
    ] {
        assert!(!html.contains(banned), "{banned} found in index.html");
    }
    for f in std::fs::read_dir(out.join("charts")).unwrap() {
        let p = f.unwrap().path();
        if p.extension().is_some_and(|e| e == "svg") {
            let svg = std::fs::read_to_string(&p).unwrap();
            assert!(
                !svg.contains("<script") && !svg.contains("<img"),
                "{}",
                p.display()
            );
        }
    }
}

#[test]
fn a_failed_report_leaves_no_partial_output() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"format\":\"tracecost.trace/v1\",\"name\":").unwrap();
    let o = tracecost()
        .arg("report")
        .arg(&bad)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(!out.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temporary directory left behind"
    );
}

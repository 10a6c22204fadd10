//! The report: byte-identical regeneration, HTML escaping, exporter output.

use std::path::Path;

use crate::util::{outcome, tracecost};

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

/// A fleet of two sessions whose calls recorded usage: all of them, one
/// call less, or none.
fn fleet_file(dir: &Path, recorded: &str) -> std::path::PathBuf {
    let long = "a line of a file that the agent read ".repeat(300);
    let usage = |read: u64, write: u64| {
        serde_json::json!({"input_tokens": 5, "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write, "output_tokens": 40})
    };
    let trace = |name: &str, day: u64| {
        let t0 = 1_760_000_000_000u64 + day * 86_400_000;
        serde_json::json!({
            "name": name,
            "model": "claude-sonnet-4-5",
            "account": "team",
            "status_quo": "off+claude-code:ttl=5m",
            "messages": [
                {"role": "user", "content": "read it"},
                {"role": "assistant", "content": [{"type": "tool_use", "id": format!("{name}-1"), "name": "read", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("{name}-1"), "content": long}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": format!("{name}-2"), "name": "read", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("{name}-2"), "content": long}]},
                {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
                {"role": "user", "content": "thanks"}
            ],
            "calls": [
                {"messages": 1, "start_ms": t0, "usage": usage(0, 20)},
                {"messages": 3, "start_ms": t0 + 5_000, "usage": usage(20, 2_700)},
                {"messages": 5, "start_ms": t0 + 10_000, "usage": usage(2_720, 2_700)},
                {"messages": 7, "start_ms": t0 + 15_000, "usage": usage(5_420, 20)}
            ]
        })
    };
    let mut traces = vec![trace("first", 0), trace("second", 3)];
    for t in &mut traces {
        let calls = t["calls"].as_array_mut().unwrap();
        match recorded {
            "all" => {}
            "some" => {
                calls[3].as_object_mut().unwrap().remove("usage");
            }
            _ => calls.iter_mut().for_each(|c| {
                c.as_object_mut().unwrap().remove("usage");
            }),
        }
    }
    let file = dir.join(format!("fleet-{recorded}.json"));
    let doc = serde_json::json!({"format": "tracecost.trace/v1", "traces": traces});
    std::fs::write(&file, doc.to_string()).unwrap();
    file
}

/// The first screen's figures share one basis, named on the page: the
/// recorded bill where every call recorded usage, else the simulated status
/// quo with the recorded part beside it as a check. The cards, summary.md
/// and results.json agree with each other and with the sums.
#[test]
fn the_headline_figures_share_one_basis() {
    let dir = tempfile::tempdir().unwrap();
    for (recorded, basis) in [
        ("all", "recorded"),
        ("some", "simulated"),
        ("none", "simulated"),
    ] {
        let file = fleet_file(dir.path(), recorded);
        let out = dir.path().join(format!("report-{recorded}"));
        tracecost()
            .args(["report", file.to_str().unwrap(), "--out"])
            .arg(&out)
            .assert()
            .success();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
                .unwrap();
        let fleet = &json["fleet"];
        let h = &fleet["headline"];
        assert_eq!(h["basis"], basis, "{recorded}: {h}");
        let f = |v: &serde_json::Value| v.as_f64().unwrap();
        let (now, rec, saving) = (
            f(&h["now_usd"]),
            f(&h["recommended_usd"]),
            f(&h["saving_usd"]),
        );
        assert!((now - rec - saving).abs() < 1e-9, "{recorded}: {h}");
        match basis {
            "recorded" => assert!((now - f(&fleet["recorded_cost_usd"])).abs() < 1e-9),
            _ => assert!((now - f(&fleet["status_quo"]["cost_usd"])).abs() < 1e-9),
        }
        // As the pages write dollars (4 places under $1; these fleets cost cents).
        let cents = |v: f64| {
            if v < 1.0 {
                format!("${v:.4}")
            } else {
                format!("${v:.2}")
            }
        };
        let html = std::fs::read_to_string(out.join("index.html")).unwrap();
        assert!(
            html.contains(&format!(
                "What we pay now</div><div class=\"v\">{}</div>",
                cents(now)
            )),
            "{recorded}"
        );
        assert!(
            html.contains("Figures side by side are on one basis: the"),
            "{recorded}"
        );
        if basis == "simulated" && recorded == "some" {
            assert!(html.contains("6 of 8 calls recorded usage"), "{recorded}");
        }
        // The per-month figures are the headline's, on the same basis.
        let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
        // A recorded bill says whose it is: of every call, or of a part.
        let whose = match recorded {
            "all" => Some("Recorded bill of the calls replayed: "),
            "some" => Some("Recorded bill of the 6 of 8 calls that recorded usage: "),
            _ => None,
        };
        match whose {
            Some(line) => assert!(md.contains(line), "{recorded}: {md}"),
            None => assert!(!md.contains("Recorded bill"), "{recorded}: {md}"),
        }
        let m = &fleet["per_month"]["headline"];
        assert_eq!(m["basis"], basis);
        let what = if basis == "recorded" {
            "the recorded bill"
        } else {
            "the simulated status quo"
        };
        assert!(
            md.contains(&format!(
                "{what} comes to {} per month",
                cents(f(&m["now_usd"]))
            )),
            "{recorded}: {md}"
        );
        assert!((f(&m["now_usd"]) - f(&m["recommended_usd"]) - f(&m["saving_usd"])).abs() < 1e-9);
    }
}

/// A fleet of two sessions: one conversation with a continuation and a
/// subagent (run from another project's folder), and one conversation alone.
fn session_fleet(dir: &Path) -> std::path::PathBuf {
    let long = "a line of a file that the agent read ".repeat(300);
    let trace = |name: &str, session: Option<&str>, project: &str, t0: u64| {
        let mut t = serde_json::json!({
            "name": name,
            "model": "claude-sonnet-4-5",
            "account": "team",
            "project": project,
            "status_quo": "off+claude-code:ttl=5m",
            "messages": [
                {"role": "user", "content": format!("task of {name}")},
                {"role": "assistant", "content": [{"type": "tool_use", "id": format!("{name}-1"), "name": "read", "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("{name}-1"), "content": long}]},
                {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
                {"role": "user", "content": "thanks"}
            ],
            "calls": [
                {"messages": 1, "start_ms": t0},
                {"messages": 3, "start_ms": t0 + 5_000},
                {"messages": 5, "start_ms": t0 + 10_000}
            ]
        });
        if let Some(s) = session {
            t["session"] = serde_json::json!(s);
        }
        t
    };
    let day = 1_760_000_000_000u64;
    let traces = vec![
        trace("conv", Some("conv"), "alpha", day),
        trace("conv-part2", Some("conv"), "alpha", day + 3_600_000),
        // A subagent that ran before the conversation's first call (a
        // warm-up), from another project's folder.
        trace("conv-agent-1", Some("conv"), "beta", day - 60_000),
        trace("alone", None, "beta", day + 86_400_000),
    ];
    let file = dir.join("sessions.json");
    let doc = serde_json::json!({"format": "tracecost.trace/v1", "traces": traces});
    std::fs::write(&file, doc.to_string()).unwrap();
    file
}

/// One definition of a session (a conversation with its continuations and
/// subagents) in every count and table of every format, its traces named
/// inside it.
#[test]
fn a_session_counts_once_with_its_traces_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_fleet(dir.path());
    let out = dir.path().join("report");
    let o = tracecost()
        .args(["report", file.to_str().unwrap(), "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("2 session(s) (4 traces: continuations and subagents apart)"),
        "{stderr}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let fleet = &json["fleet"];
    assert_eq!(
        (fleet["sessions"].as_u64(), fleet["traces"].as_u64()),
        (Some(2), Some(4))
    );
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    // Each session sums its traces; the sessions sum to the fleet.
    let per = fleet["per_session"].as_array().unwrap();
    assert_eq!(per.len(), 2);
    let conv = per.iter().find(|s| s["session"] == "conv").unwrap();
    assert_eq!(
        conv["traces"],
        serde_json::json!(["conv", "conv-agent-1", "conv-part2"]),
        "the conversation first, then its traces as they ran"
    );
    assert_eq!(conv["calls"], 9);
    assert_eq!(conv["project"], "alpha", "the conversation's own project");
    assert_eq!(
        conv["first_prompt"], "task of conv",
        "the conversation's own prompt"
    );
    let traces = json["traces"].as_array().unwrap();
    let of_conv: f64 = traces
        .iter()
        .filter(|t| t["session"] == "conv")
        .map(|t| f(&t["baseline"]["cost_usd"]))
        .sum();
    assert!((f(&conv["status_quo_usd"]) - of_conv).abs() < 1e-9);
    let total: f64 = per.iter().map(|s| f(&s["status_quo_usd"])).sum();
    assert!((total - f(&fleet["status_quo"]["cost_usd"])).abs() < 1e-9);
    // A project counts a session once, with all its traces.
    for p in fleet["projects"].as_array().unwrap() {
        let want = if p["project"] == "alpha" {
            (1, 3, 9)
        } else {
            (1, 1, 3)
        };
        assert_eq!(
            (
                p["sessions"].as_u64(),
                p["traces"].as_u64(),
                p["calls"].as_u64()
            ),
            (Some(want.0), Some(want.1), Some(want.2)),
            "{p}"
        );
    }
    // A day counts a session once, however many of its traces ran.
    let days = fleet["days"].as_array().unwrap();
    assert_eq!(days.len(), 2);
    assert_eq!(days[0]["sessions"], 1);
    assert_eq!(days[0]["calls"], 9);
    if !fleet["stability"].is_null() {
        let st = &fleet["stability"];
        assert_eq!(
            (st["sessions"].as_u64(), st["traces"].as_u64()),
            (Some(2), Some(4))
        );
    }
    // The per-session spread is over the two sessions.
    let median = f(&fleet["spread"]["median_usd"]);
    let mut savings: Vec<f64> = per.iter().map(|s| f(&s["savings_usd"])).collect();
    savings.sort_by(f64::total_cmp);
    assert!((median - (savings[0] + savings[1]) / 2.0).abs() < 1e-9);
    assert_eq!(
        fleet["fidelity"],
        serde_json::Value::Null,
        "no recorded usage"
    );

    // summary.md: a row per session, its trace count beside it.
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("## The 2 most expensive sessions"), "{md}");
    assert!(md.contains("| alpha: “task of conv” | 3 | 9 |"), "{md}");
    assert!(md.contains("| beta: “task of alone” | 1 | 3 |"), "{md}");
    // sessions.csv: the same rows; results.csv names each trace's session.
    let csv = std::fs::read_to_string(out.join("sessions.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows.len(), 3, "{csv}");
    assert!(rows[0].starts_with("session,project,started,traces,"));
    assert!(
        rows.iter()
            .any(|r| r.starts_with("conv,alpha,2025-10-09,3,conv conv-agent-1 conv-part2,9,")),
        "{csv}"
    );
    let results = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(results.starts_with("session,trace,"));
    assert!(results.lines().any(|l| l.starts_with("conv,conv-agent-1,")));
    // The pages: one row per session with its traces linked inside it, and
    // each trace's page says which session it belongs to.
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("<p class=\"sub\">2 session(s) (4 traces) · 12 call(s)"),
        "subtitle"
    );
    let list = std::fs::read_to_string(out.join("sessions/index.html")).unwrap();
    assert!(list.contains("All 2 sessions, most expensive first"));
    for t in ["conv", "conv-part2", "conv-agent-1", "alone"] {
        assert_eq!(
            list.matches(&format!("<a href=\"../sessions/{t}.html\" title=\"{t}\">"))
                .count(),
            1,
            "{t}"
        );
    }
    let part = std::fs::read_to_string(out.join("sessions/conv-part2.html")).unwrap();
    assert!(part.contains("A trace of session <a href=\"whole/conv.html\"><code>conv</code></a>"));
    let whole = std::fs::read_to_string(out.join("sessions/whole/conv.html")).unwrap();
    for t in ["conv-part2", "conv-agent-1"] {
        assert!(whole.contains(&format!("title=\"{t}\"")), "{t}");
    }
    assert!(!out.join("sessions/whole/alone.html").exists());
    let alone = std::fs::read_to_string(out.join("sessions/alone.html")).unwrap();
    assert!(!alone.contains("A trace of session"));
}

/// The rules and markup that keep a page readable at a phone's width and a
/// desktop's: tables scroll inside their box (never the page), config
/// strings break only after `+` and `,`, and each chart is drawn for both
/// widths with the stylesheet choosing.
#[test]
fn pages_reflow_at_phone_and_desktop_widths() {
    let dir = tempfile::tempdir().unwrap();
    let file = session_fleet(dir.path());
    let out = dir.path().join("report");
    tracecost()
        .args(["report", file.to_str().unwrap(), "--out"])
        .arg(&out)
        .assert()
        .success();
    let pages = ["index.html", "sessions/index.html", "sessions/conv.html"];
    for page in pages {
        let html = std::fs::read_to_string(out.join(page)).unwrap();
        assert!(
            html.contains(
                "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            ),
            "{page}"
        );
        for rule in [
            // A table is a scrolling box; its body fills the width it has.
            "table{display:block;overflow-x:auto;",
            "tbody{display:table;width:100%;",
            // Cells of words wrap; a cell never narrows below a word or two.
            "td.l,th.l{text-align:left;white-space:normal;overflow-wrap:anywhere;min-width:7em}",
            // A config part never breaks inside.
            ".cfg{white-space:nowrap}",
            // A config written out in a sentence (the "Why" box, the
            // fleet's lines) wraps inside the box on a phone.
            "margin:1em 0;overflow-wrap:anywhere}li{overflow-wrap:anywhere}",
            // The phone's drawing of a chart where the page is narrow.
            "figure .narrow{display:none}@media (max-width:640px){",
            "figure .wide{display:none}figure .narrow{display:block}",
        ] {
            assert!(html.contains(rule), "{page}: {rule}");
        }
        // Every config part is whole and ends where a break may come.
        let mut parts = 0;
        for piece in html.split("<span class=\"cfg\">").skip(1) {
            let part = &piece[..piece.find("</span>").unwrap()];
            let inner = part.trim_end_matches(['+', ',']);
            assert!(!inner.contains(['+', ',', '<']), "{page}: {part:?}");
            parts += 1;
        }
        assert!(parts > 0, "{page}: config strings are marked up");
        // No config in a table cell goes without that markup.
        assert!(!html.contains("<td class=\"l\"><code>l"), "{page}");
        assert!(!html.contains("<td class=\"l\"><code>o"), "{page}");
        // Each chart twice: the desktop's and the phone's.
        let figures = html.matches("<figure>").count();
        assert_eq!(
            html.matches("<div class=\"wide\"><svg width=\"900\"")
                .count(),
            figures,
            "{page}"
        );
        assert_eq!(
            html.matches("<div class=\"narrow\"><svg width=\"358\"")
                .count(),
            figures,
            "{page}"
        );
    }
}

/// `report` of one bundled session under two policies, off and the
/// ledger at 2,000 characters keeping the last result, both with Claude
/// Code's caching, into `out`: small enough to run several times a test.
fn one_ledger_report(out: &std::path::Path) -> assert_cmd::Command {
    let mut cmd = tracecost();
    cmd.args([
        "report",
        "traces/session-200-s1.json",
        "--compaction",
        "off,ledger",
        "--threshold",
        "2000",
        "--keep-last",
        "1",
        "--cache",
        "claude-code:ttl=5m",
        "--out",
    ])
    .arg(out);
    cmd
}

/// The break-even recall price is where the answer changes: priced just
/// below it, the named config is recommended; just above, the status quo
/// is kept. The price itself does not depend on the price asked for.
#[test]
fn the_break_even_recall_price_is_where_the_answer_changes() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, recall_cost: Option<f64>| -> serde_json::Value {
        let out = dir.path().join(name);
        let mut cmd = one_ledger_report(&out);
        if let Some(p) = recall_cost {
            cmd.args(["--recall-cost", &format!("{p}")]);
        }
        cmd.assert().success();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
                .unwrap();
        json["fleet"].clone()
    };
    // Priced high, the status quo is kept (the ledger needs recalls).
    let fleet = run("priced-high", Some(1.0));
    assert_eq!(fleet["keep_status_quo"], true);
    let b = &fleet["break_even"];
    assert_eq!(b["wins"], "below", "{b}");
    let config = b["config"].as_str().unwrap().to_owned();
    let price = b["price_usd"].as_f64().unwrap();
    assert!(
        price > 0.0 && price < b["priced_now_usd"].as_f64().unwrap(),
        "{b}"
    );
    let summary = std::fs::read_to_string(dir.path().join("priced-high/summary.md")).unwrap();
    assert!(
        summary.contains(&format!(
            "Break-even: compaction wins if a recall costs less than ${price:.4}: below that, `{config}`"
        )),
        "{summary}"
    );
    let below = run("just-below", Some(price * 0.98));
    assert_eq!(below["keep_status_quo"], false);
    assert_eq!(below["recommended"]["config"], config.as_str());
    assert!((below["break_even"]["price_usd"].as_f64().unwrap() - price).abs() < 1e-12);
    let above = run("just-above", Some(price * 1.02));
    assert_eq!(above["keep_status_quo"], true);
}

/// A recall price set with `--recall-cost` is said wherever a figure is
/// priced with it (the Why, the configurations' caption, the cheapest
/// policy's line); without it, a turn is priced as one more round trip,
/// and the page says that.
#[test]
fn a_recall_price_asked_for_is_said_beside_the_figures_priced_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, recall_cost: Option<&str>| -> (String, String) {
        let out = dir.path().join(name);
        let mut cmd = one_ledger_report(&out);
        if let Some(p) = recall_cost {
            cmd.args(["--recall-cost", p]);
        }
        cmd.assert().success();
        let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
        (read("index.html"), read("summary.md"))
    };
    let (html, summary) = run("set", Some("5"));
    assert!(
        html.contains("<b>Why:</b> the recommendation minimizes cost plus each recall a compacted result would have needed, priced at $5.00 a recall, as --recall-cost set, plus the text it re-sends."),
        "{html}"
    );
    assert!(
        html.contains("the recommendation prices each at $5.00 a recall, as --recall-cost set, plus the text it re-sends.</p>"),
        "{html}"
    );
    assert!(
        summary.contains(" once priced at $5.00 a recall)."),
        "{summary}"
    );
    assert!(!html.contains("one more round trip"), "{html}");
    let (html, summary) = run("round-trips", None);
    assert!(
        html.contains("each recall priced as one more round trip;"),
        "{html}"
    );
    assert!(
        html.contains("prices each as one more round trip.</p>"),
        "{html}"
    );
    assert!(!html.contains("as --recall-cost set,"), "{html}");
    assert!(
        summary.contains("- Recall range: `ledger:t=2000,k=1+claude-code:ttl=5m` would need "),
        "{summary}"
    );
}

/// A baseline named with `--baseline` is said as such: the report names
/// it before any figure (the fleet's lines, each trace's page, and
/// `results.json`'s assumptions), calls its replay the baseline where it is set
/// beside the recorded bill, keeps the baseline rather than "what you
/// have", and gives no distance of the simulation from the recorded bill
/// (the baseline is not what ran). Without it, the status quo and that
/// distance are as before.
#[test]
fn a_baseline_asked_for_is_named_and_not_taken_for_what_ran() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, baseline: Option<&str>| -> (String, String, String) {
        let out = dir.path().join(name);
        let mut cmd = tracecost();
        cmd.args(["report", "--out"]).arg(&out);
        if let Some(b) = baseline {
            cmd.args(["--baseline", b]);
        }
        let (code, _, stderr) = outcome(cmd.output().unwrap());
        assert_eq!(code, 0, "{stderr}");
        let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
        (stderr, read("summary.md"), read("index.html"))
    };
    let page = |name: &str| {
        let out = dir.path().join(name);
        let read = |f: &str| std::fs::read_to_string(out.join(f)).unwrap();
        let results: serde_json::Value = serde_json::from_str(&read("results.json")).unwrap();
        (
            read("sessions/massage-gun.html"),
            results["assumptions"]["baseline"].clone(),
        )
    };
    let (stderr, summary, html) = run("baseline", Some("off+claude-code:ttl=5m"));
    // A trace's page, read on its own, says it too; results.json records it.
    let (trace_page, recorded) = page("baseline");
    assert!(
        trace_page.contains("Baseline <code>off+claude-code:ttl=5m</code>, as --baseline asked"),
        "{trace_page}"
    );
    assert!(
        trace_page.contains("<div class=\"k\">Baseline</div>"),
        "{trace_page}"
    );
    assert!(
        !trace_page.contains("the status quo simulated on the same calls"),
        "{trace_page}"
    );
    assert!(!trace_page.contains("keep what you have"), "{trace_page}");
    assert_eq!(recorded, serde_json::json!("off+claude-code:ttl=5m"));
    let named = "Baseline `off+claude-code:ttl=5m`, as --baseline asked: below, the status quo is this config replayed on every trace, not what each ran";
    assert!(stderr.contains(named), "{stderr}");
    assert!(summary.contains(named), "{summary}");
    assert!(
        stderr.contains("; the baseline simulated on the same calls: "),
        "{stderr}"
    );
    // Its figure on every call, said as the baseline's, not as what ran.
    assert!(
        stderr.contains("Baseline `off+claude-code:ttl=5m` replayed on every call: $"),
        "{stderr}"
    );
    assert!(!stderr.contains("Status quo `"), "{stderr}");
    assert!(
        stderr.contains("the simulated baseline comes to"),
        "{stderr}"
    );
    assert!(
        !summary.contains("How far to trust the simulation"),
        "{summary}"
    );
    assert!(!html.contains("How far to trust the simulation"), "{html}");
    assert!(!html.contains("keep what you have"), "{html}");
    let (stderr, summary, _) = run("status-quo", None);
    let (trace_page, recorded) = page("status-quo");
    assert!(!trace_page.contains("as --baseline asked"), "{trace_page}");
    assert!(
        trace_page.contains("<div class=\"k\">Status quo</div>"),
        "{trace_page}"
    );
    assert_eq!(recorded, serde_json::Value::Null);
    assert!(!stderr.contains("as --baseline asked"), "{stderr}");
    assert!(
        stderr.contains("; the status quo simulated on the same calls: "),
        "{stderr}"
    );
    assert!(
        summary.contains("How far to trust the simulation"),
        "{summary}"
    );
    assert!(
        stderr.contains("Status quo (each session's own policy): $"),
        "{stderr}"
    );
}

/// A session of several traces has a page that sums it: its figures are
/// the fleet table's, each trace's part is listed, and the parts add up;
/// the session tables link its name there.
#[test]
fn a_session_of_several_traces_has_a_page_that_sums_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let (code, _, stderr) = outcome(
        tracecost()
            .args([
                "report",
                crate::util::repo("traces").to_str().unwrap(),
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    let mut pages = 0;
    for s in json["fleet"]["per_session"].as_array().unwrap() {
        let parts = s["parts"].as_array().unwrap();
        assert_eq!(parts.len(), s["traces"].as_array().unwrap().len());
        let sum: f64 = parts
            .iter()
            .map(|p| p["status_quo_usd"].as_f64().unwrap())
            .sum();
        let whole = s["status_quo_usd"].as_f64().unwrap();
        assert!((sum - whole).abs() < 1e-9, "{sum} against {whole}");
        if parts.len() < 2 {
            continue;
        }
        pages += 1;
        let name = s["session"].as_str().unwrap();
        let link = format!("sessions/whole/{name}.html");
        let page = std::fs::read_to_string(out.join(&link)).unwrap();
        assert!(index.contains(&format!("href=\"{link}\"")), "{link}");
        for figure in ["status_quo_usd", "recommended_usd"] {
            let usd = format!("${:.2}", s[figure].as_f64().unwrap());
            assert!(page.contains(&usd), "{name}: {figure} {usd}");
        }
        assert_eq!(
            page.matches("<tr>").count(),
            parts.len() + 2,
            "a row per trace and the sum"
        );
    }
    assert!(
        pages > 0,
        "the bundled traces hold a session of several traces"
    );
}

/// No text of a page is set under 12 px: every font size below the body's
/// is held to 12 px at least, and a phone hides the columns marked
/// optional rather than scrolling the table.
#[test]
fn report_text_is_never_under_12px_and_phones_drop_optional_columns() {
    let css = std::fs::read_to_string(crate::util::repo(
        "crates/tracecost-report/src/build/style.css",
    ))
    .unwrap();
    for decl in css.split("font-size:").skip(1) {
        let value: String = decl.chars().take_while(|&c| c != ';' && c != '}').collect();
        let em = value.strip_suffix("em").and_then(|v| v.parse::<f64>().ok());
        assert!(
            value.starts_with("max(12px,") || em.is_some_and(|e| e >= 1.0),
            "font-size:{value} may fall under 12 px"
        );
    }
    let phone = &css[css.find("@media (max-width:640px)").unwrap()..];
    assert!(phone.contains(".o{display:none}"));
}

//! The fleet answer seen from the command line: the summary stays short,
//! an account shares its cache, reports paged, streamed and priced the
//! same (the fleet answer's own tests are the app crate's).

#[test]
fn the_summary_stays_short_and_every_page_escapes_names() {
    // Twelve sessions, one with markup in its name.
    let mut doc = String::from("{\"format\":\"tracecost.trace/v1\",\"traces\":[");
    let one: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("traces/massage-gun.json").unwrap()).unwrap();
    for i in 0..12 {
        let mut t = one.clone();
        let obj = t.as_object_mut().unwrap();
        obj.remove("format");
        let name = if i == 0 {
            "<script>alert(1)</script>".to_owned()
        } else {
            format!("mg-{i:02}")
        };
        obj.insert("name".into(), serde_json::Value::String(name));
        if i > 0 {
            doc.push(',');
        }
        doc.push_str(&serde_json::to_string(&t).unwrap());
    }
    doc.push_str("]}");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fleet.json");
    std::fs::write(&file, doc).unwrap();
    let out = dir.path().join("report");
    let o = crate::util::tracecost()
        .args([
            "report",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--compaction",
            "off,ledger",
            "--threshold",
            "8000",
            "--keep-last",
            "2",
            "--cache",
            "none,tail",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("12 session(s), 72 call(s)."), "{stderr}");
    assert!(stderr.contains("open "), "{stderr}");
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(summary.chars().count() <= 10_000, "{}", summary.len());
    assert!(summary.contains("## Fleet"));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!html.contains("<script>alert"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let fleet = &json["fleet"];
    assert_eq!(fleet["sessions"], 12);
    for k in ["status_quo", "recommended"] {
        for f in [
            "config",
            "cost_usd",
            "risk_adjusted_cost_usd",
            "savings_usd",
            "savings_pct",
            "compacted_results",
        ] {
            assert!(!fleet[k][f].is_null(), "fleet.{k}.{f}");
        }
    }
    assert_eq!(fleet["configs"].as_array().unwrap().len(), 4);
    assert!(fleet["days"].as_array().is_some_and(|d| !d.is_empty()));
    assert_eq!(json["traces"].as_array().unwrap().len(), 12);
    // Every session has its page, and one page lists them all; the fleet
    // page names sessions by their first prompt, linked to their page.
    let list = std::fs::read_to_string(out.join("sessions/index.html")).unwrap();
    assert_eq!(list.matches("<a href=\"../sessions/").count(), 12);
    assert!(!list.contains("<script>alert"));
    for i in 1..12 {
        assert!(out.join(format!("sessions/mg-{i:02}.html")).is_file());
    }
    let first = "We&#39;re evaluating a private-label massage gun";
    assert!(html.contains(first), "the first prompt names the session");
    // Session charts are inline in split reports; the chart files are the
    // fleet's, each inline on the fleet page too.
    let mut charts: Vec<String> = std::fs::read_dir(out.join("charts"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    charts.sort();
    assert!(charts.iter().all(|c| c.starts_with("fleet-")), "{charts:?}");
    for stem in ["fleet-configs", "fleet-savings", "fleet-days"] {
        assert!(charts.contains(&format!("{stem}.svg")), "{charts:?}");
        assert!(charts.contains(&format!("{stem}.png")), "{charts:?}");
        assert!(html.contains(&format!("charts/{stem}.svg")));
    }
    assert!(html.contains("What the fleet would cost: "));
}

/// Two copies of one conversation by one account, the second starting ten
/// seconds after the first: the provider's cache is the account's, so the
/// second starts warm on the prefix the first wrote. Each alone starts cold.
#[test]
fn sessions_of_one_account_share_the_cache() {
    let one: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("traces/massage-gun.json").unwrap()).unwrap();
    let copy = |name: &str, shift_ms: u64, account: &str| {
        let mut t = one.clone();
        let obj = t.as_object_mut().unwrap();
        obj.remove("format");
        obj.insert("name".into(), name.into());
        obj.insert("account".into(), account.into());
        for c in obj["calls"].as_array_mut().unwrap() {
            let s = c["start_ms"].as_u64().unwrap();
            c["start_ms"] = (s + shift_ms).into();
        }
        t
    };
    let run = |account_b: &str, scope: &str| {
        let doc = serde_json::json!({
            "format": "tracecost.trace/v1",
            "traces": [copy("a", 0, "team"), copy("b", 10_000, account_b)],
        });
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("two.json");
        std::fs::write(&file, doc.to_string()).unwrap();
        let o = crate::util::tracecost()
            .args(["replay", file.to_str().unwrap(), "--cache", "tail"])
            .args(["--cache-scope", scope, "--format", "json", "--per-trace"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let runs = v["traces"].as_array().unwrap().clone();
        let first_read = |i: usize| {
            runs[i]["calls"][0]["cache_read_input_tokens"]
                .as_u64()
                .unwrap()
        };
        let total: f64 = runs
            .iter()
            .map(|r| r["totals"]["cost_usd"].as_f64().unwrap())
            .sum();
        (first_read(0), first_read(1), total)
    };
    let (a_shared, b_shared, shared_total) = run("team", "account");
    let (a_alone, b_alone, alone_total) = run("team", "trace");
    let (_, b_other_account, _) = run("elsewhere", "account");
    assert_eq!((a_shared, a_alone), (0, 0), "the first session starts cold");
    assert!(b_shared > 0, "the second reads what the first wrote");
    assert_eq!(b_alone, 0);
    assert_eq!(b_other_account, 0, "another account's cache is not shared");
    // The prefix is written once, not once per session.
    assert!(shared_total < alone_total, "{shared_total} < {alone_total}");
}

/// One account's sessions on two models: a provider's cache is per model,
/// so the gpt-5.6-sol session runs on its own model's cache (breakpoints
/// held 30 minutes, writes billed), not on the one the account's earlier
/// gpt-5.5 session made (held a day, no write fee): it writes at its first
/// call, reads nothing after its two-hour pause, and comes out exactly as
/// it does replayed alone.
#[test]
fn each_model_of_an_account_has_its_own_cache() {
    let run = |scope: &str| {
        let o = crate::util::tracecost()
            .args(["replay", "tests/fixtures/openai/two_models.json"])
            .args(["--cache-scope", scope, "--format", "json", "--per-trace"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["traces"].as_array().unwrap().clone()
    };
    let (shared, alone) = (run("account"), run("trace"));
    let sol = &shared[1]["calls"];
    let tokens = |call: usize, field: &str| sol[call][field].as_u64().unwrap();
    assert!(tokens(0, "cache_creation_input_tokens") > 1_024, "{sol}");
    assert_eq!(tokens(1, "cache_read_input_tokens"), 0, "{sol}");
    assert!(tokens(1, "cache_creation_input_tokens") > 1_024, "{sol}");
    assert_eq!(shared[1], alone[1]);
    // The gpt-5.5 session keeps its model's rules: its second call, 20 s
    // later, reads the instructions, and nothing is billed as a write.
    let first = &shared[0]["calls"];
    assert!(first[1]["cache_read_input_tokens"].as_u64().unwrap() > 1_024);
    assert_eq!(shared[0], alone[0]);
}

#[test]
fn a_fleet_report_pages_only_its_most_expensive_traces() {
    use crate::util::{outcome, tracecost};
    use serde_json::Value;
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.json");
    let (code, _, err) = outcome(
        tracecost()
            .args(["gen", "fleet", "--sessions", "30", "--seed", "3", "-o"])
            .arg(&fleet)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    let grid = [
        "--compaction",
        "off,ledger",
        "--threshold",
        "8000",
        "--cache",
        "none,tail",
    ];
    let report = |out: &std::path::Path, sessions: &str| {
        let (code, _, err) = outcome(
            tracecost()
                .arg("report")
                .arg(&fleet)
                .arg("--out")
                .arg(out)
                .args(grid)
                .args(["--sessions", sessions])
                .output()
                .unwrap(),
        );
        assert_eq!(code, 0, "{err}");
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap())
                .unwrap();
        json
    };
    let five = dir.path().join("five");
    let all = dir.path().join("all");
    let j5 = report(&five, "5");
    let jall = report(&all, "all");
    // The same answer either way.
    assert_eq!(j5["fleet"], jall["fleet"]);
    let traces = j5["traces"].as_array().unwrap();
    assert!(
        traces.len() > 30,
        "continuations and subagents: {}",
        traces.len()
    );
    // The five most expensive traces (by the status quo's cost; ties to
    // the first) are those with their rows, and a page.
    let mut by_cost: Vec<(f64, usize)> = traces
        .iter()
        .enumerate()
        .map(|(i, t)| (t["baseline"]["cost_usd"].as_f64().unwrap(), i))
        .collect();
    by_cost.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let top: Vec<&str> = by_cost[..5]
        .iter()
        .map(|&(_, i)| traces[i]["trace"].as_str().unwrap())
        .collect();
    let detailed: Vec<&str> = traces
        .iter()
        .filter(|t| t.get("configs").is_some())
        .map(|t| t["trace"].as_str().unwrap())
        .collect();
    let mut want = top.clone();
    want.sort_by_key(|t| traces.iter().position(|x| x["trace"] == *t));
    assert_eq!(detailed, want);
    for t in traces {
        let paged = detailed.contains(&t["trace"].as_str().unwrap());
        assert_eq!(t.get("calls_baseline").is_some(), paged);
        assert_eq!(t["stability"].get("calls").is_some(), paged);
        // A summary keeps the trace's picks and stability verdict.
        assert!(t["recommended"]["cost_usd"].is_number());
        assert!(t["stability"]["digest"].is_string());
    }
    // Every trace under `all` has its rows; the paged ones are the same.
    let all_traces = jall["traces"].as_array().unwrap();
    assert!(all_traces.iter().all(|t| t.get("configs").is_some()));
    for (a, b) in traces.iter().zip(all_traces) {
        if a.get("configs").is_some() {
            assert_eq!(a, b);
        }
        assert_eq!(a["baseline"], b["baseline"]);
    }
    // Pages: the five, and the list (sessions of several traces have
    // theirs under `whole/`); every link of the list is a page.
    let pages: Vec<String> = std::fs::read_dir(five.join("sessions"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(pages.len(), 6, "{pages:?}");
    let list = std::fs::read_to_string(five.join("sessions/index.html")).unwrap();
    assert_eq!(
        list.matches("<a href=\"../sessions/").count()
            - list.matches("<a href=\"../sessions/whole/").count(),
        5
    );
    for link in list.split("<a href=\"../").skip(1) {
        let target = link.split('"').next().unwrap();
        assert!(five.join(target).is_file(), "{target}");
    }
    assert!(list.contains("The 5 most expensive traces have a page of their own"));
    let index = std::fs::read_to_string(five.join("index.html")).unwrap();
    for link in index.split("<a href=\"sessions/").skip(1) {
        let target = link.split('"').next().unwrap();
        assert!(five.join("sessions").join(target).is_file(), "{target}");
    }
    // results.csv: the five traces' rows only, the header once.
    let csv = std::fs::read_to_string(five.join("results.csv")).unwrap();
    let configs = all_traces[0]["configs"].as_array().unwrap().len();
    assert_eq!(csv.lines().count(), 1 + 5 * configs);
    assert_eq!(csv.matches("session,").count(), 1);
    let summary = std::fs::read_to_string(five.join("summary.md")).unwrap();
    assert!(
        summary.contains("the 5 most expensive traces have a page"),
        "{summary}"
    );
    // The same bytes again.
    let again = dir.path().join("again");
    report(&again, "5");
    for f in [
        "results.json",
        "results.csv",
        "index.html",
        "sessions/index.html",
        "summary.md",
    ] {
        assert_eq!(
            std::fs::read(five.join(f)).unwrap(),
            std::fs::read(again.join(f)).unwrap(),
            "{f}"
        );
    }
    // A count that is not one is refused, naming the flag.
    let (code, _, err) = outcome(
        tracecost()
            .arg("report")
            .arg(&fleet)
            .args(["--sessions", "many"])
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2);
    assert!(err.contains("--sessions"), "{err}");
    assert!(
        err.contains("expected a number of traces (0 or more) or `all`"),
        "{err}"
    );
}

#[test]
fn a_fleet_written_as_json_lines_gives_the_same_report() {
    use crate::util::{outcome, tracecost};
    let dir = tempfile::tempdir().unwrap();
    let grid = [
        "--compaction",
        "off,ledger",
        "--threshold",
        "8000",
        "--cache",
        "none,tail",
    ];
    let mut outs = Vec::new();
    for name in ["fleet.json", "fleet.jsonl"] {
        let file = dir.path().join(name);
        let (code, _, err) = outcome(
            tracecost()
                .args(["gen", "fleet", "--sessions", "12", "--seed", "5", "-o"])
                .arg(&file)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 0, "{err}");
        let out = dir.path().join(format!("{name}.report"));
        let (code, _, err) = outcome(
            tracecost()
                .arg("report")
                .arg(&file)
                .arg("--out")
                .arg(&out)
                .args(grid)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 0, "{err}");
        outs.push(out);
    }
    let lines = std::fs::read_to_string(dir.path().join("fleet.jsonl")).unwrap();
    let traces: usize = lines.lines().count();
    assert!(traces >= 12, "a trace per line: {traces}");
    assert!(
        lines
            .lines()
            .all(|l| l.starts_with("{\"format\":\"tracecost.trace/v1\""))
    );
    for f in ["summary.md", "index.html", "sessions.csv", "results.csv"] {
        assert_eq!(
            std::fs::read(outs[0].join(f)).unwrap(),
            std::fs::read(outs[1].join(f)).unwrap(),
            "{f}"
        );
    }
}

/// Reports `input` with `extra` streamed (the default) and held in memory
/// (`--in-memory`, the reference), into `dir/s{n}` and `dir/m{n}`, and
/// checks that they are the same bytes.
fn assert_streamed_is_held(
    dir: &std::path::Path,
    n: usize,
    input: &std::path::Path,
    extra: &[&str],
) {
    use crate::util::{outcome, tracecost, tree};
    let report = |out: &std::path::Path, extra: &[&str]| {
        let (code, _, err) = outcome(
            tracecost()
                .arg("report")
                .arg(input)
                .arg("--out")
                .arg(out)
                .args(extra)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 0, "{err}");
        tree(out)
    };
    let streamed = report(&dir.join(format!("s{n}")), extra);
    let held = report(
        &dir.join(format!("m{n}")),
        &[extra, &["--in-memory"]].concat(),
    );
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&streamed), names(&held), "{}", input.display());
    for ((name, a), (_, b)) in streamed.iter().zip(&held) {
        assert!(a == b, "{}: {name} differs", input.display());
    }
    assert!(streamed.iter().any(|(n, _)| n == "summary.md"));
}

/// The report as it runs by default (each trace written to a temporary
/// file as it is read and read back when its turn comes, an account's
/// sessions replayed call by call and let go when done) is the report of
/// the fleet held in memory (`--in-memory`, the reference), byte for byte:
/// on a generated fleet, from one JSON file and from JSON Lines, paged and
/// whole.
#[test]
fn a_streamed_report_is_the_report_held_in_memory() {
    use crate::util::{outcome, tracecost};
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("fleet.json");
    let jsonl = dir.path().join("fleet.jsonl");
    for out in [&json, &jsonl] {
        let (code, _, err) = outcome(
            tracecost()
                .args(["gen", "fleet", "--sessions", "40", "--seed", "5", "-o"])
                .arg(out)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 0, "{err}");
    }
    // Ledger policies that compact alike (replayed once) and apart, a
    // cache that only some traces can take (recorded markers), and
    // Claude Code's own.
    let grid = [
        "--compaction",
        "off,ledger,recorded",
        "--threshold",
        "2000,8000,64000",
        "--keep-last",
        "1",
        "--cache",
        "none,tail,claude-code",
    ];
    assert_streamed_is_held(
        dir.path(),
        1,
        &json,
        &[&grid[..], &["--sessions", "5"]].concat(),
    );
    assert_streamed_is_held(
        dir.path(),
        2,
        &jsonl,
        &[&grid[..], &["--sessions", "all"]].concat(),
    );
}

/// A trace reported alone, long enough that its section of the fleet page
/// (per-call tables) is handed to the temporary file in many parts as it
/// is written, gives the page held in memory, byte for byte.
#[test]
fn a_long_trace_s_section_written_in_parts_is_the_section_held_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("long.json");
    // One tool loop of 1,500 calls, every call a second after the last.
    let mut messages = vec![serde_json::json!({"role": "user", "content": "Start."})];
    let mut calls = Vec::new();
    for i in 0..1500u64 {
        calls.push(serde_json::json!({"messages": messages.len(), "start_ms": 1_760_000_000_000u64 + i * 1000}));
        let id = format!("t{i}");
        messages.push(serde_json::json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": id, "name": "fetch", "input": {}}]}));
        messages.push(serde_json::json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": format!("page {i} ").repeat(1 + (i % 7) as usize * 40)}]}));
    }
    let doc = serde_json::json!({
        "format": "tracecost.trace/v1",
        "name": "long",
        "provider": "anthropic",
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "You are a careful assistant."}],
        "tools": [{"name": "fetch", "description": "Fetch a URL.",
                   "input_schema": {"type": "object", "properties": {"url": {"type": "string"}}}}],
        "messages": messages,
        "calls": calls,
    });
    std::fs::write(&trace, serde_json::to_vec(&doc).unwrap()).unwrap();
    assert_streamed_is_held(dir.path(), 3, &trace, &[]);
    // Its tables run to many of the parts the page is written in.
    let page = std::fs::metadata(dir.path().join("s3").join("index.html")).unwrap();
    assert!(page.len() > 4 * 65_536, "{} bytes", page.len());
}

/// [`a_streamed_report_is_the_report_held_in_memory`] on real sessions:
/// accounts whose sessions overlap, continuations and subagents, recorded
/// markers and microcompaction.
#[test]
#[cfg_attr(
    not(shared_corpus),
    ignore = "needs the real corpora beside the checkout"
)]
fn a_streamed_report_of_real_sessions_is_the_report_held_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let small = [
        "--compaction",
        "off,ledger,recorded",
        "--threshold",
        "8000",
        "--cache",
        "none,claude-code",
    ];
    for (n, corpus) in ["claude-code", "claude-code-2"].into_iter().enumerate() {
        let path = crate::util::repo(&format!("../shared/corpus/{corpus}"));
        assert!(path.is_dir(), "{} is missing", path.display());
        assert_streamed_is_held(dir.path(), n, &path, &small);
    }
}

/// A report whose temporary file of traces cannot be made (TMPDIR missing
/// or full) fails as the machine's failure (exit 69), says what to do, and
/// leaves no report behind.
#[test]
fn a_report_without_room_for_its_temporary_file_says_so() {
    use crate::util::{outcome, repo, tracecost};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let (code, _, err) = outcome(
        tracecost()
            .env("TMPDIR", dir.path().join("missing"))
            .arg("report")
            .arg(repo("traces"))
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 69, "{err}");
    let line = err.lines().last().unwrap_or_default();
    assert!(
        line.contains("missing") && line.contains("TMPDIR") && line.contains("--in-memory"),
        "{err}"
    );
    assert!(!out.exists(), "no report is left");
    // Held in memory, the same report runs.
    let (code, _, err) = outcome(
        tracecost()
            .env("TMPDIR", dir.path().join("missing"))
            .arg("report")
            .arg(repo("traces"))
            .arg("--out")
            .arg(&out)
            .arg("--in-memory")
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.join("summary.md").is_file());
}

/// `--calls-jsonl` writes every call of every trace under every config,
/// the same figures as `results.json`'s per-call rows, and changes no other
/// file of the report.
#[test]
fn calls_jsonl_holds_every_call_of_every_config_and_nothing_else_changes() {
    use crate::util::{outcome, tracecost, tree};
    let dir = tempfile::tempdir().unwrap();
    let fleet = dir.path().join("fleet.jsonl");
    let (code, _, err) = outcome(
        tracecost()
            .args(["gen", "fleet", "--sessions", "30", "--seed", "3", "-o"])
            .arg(&fleet)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
    let grid = [
        "--compaction",
        "off,ledger",
        "--threshold",
        "2000,8000",
        "--keep-last",
        "1",
        "--cache",
        "claude-code",
    ];
    let report = |out: &str, extra: &[&str]| {
        let out = dir.path().join(out);
        let (code, _, err) = outcome(
            tracecost()
                .arg("report")
                .arg(&fleet)
                .arg("--out")
                .arg(&out)
                .args(grid)
                .args(extra)
                .output()
                .unwrap(),
        );
        assert_eq!(code, 0, "{err}");
        tree(&out)
    };
    for pages in ["all", "3"] {
        let with = report(
            &format!("with-{pages}"),
            &["--sessions", pages, "--calls-jsonl"],
        );
        let without = report(&format!("without-{pages}"), &["--sessions", pages]);
        let (calls, rest): (Vec<_>, Vec<_>) =
            with.into_iter().partition(|(n, _)| n == "calls.jsonl");
        // The folder's marker lists its files, the new one among them.
        let marker = ".tracecost-report";
        let listed = |t: &[(String, Vec<u8>)]| {
            let m = &t.iter().find(|(n, _)| n == marker).unwrap().1;
            String::from_utf8(m.clone()).unwrap()
        };
        assert_eq!(
            listed(&rest).replace("calls.jsonl\n", ""),
            listed(&without),
            "--sessions {pages}"
        );
        let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
        assert_eq!(names(&rest), names(&without), "--sessions {pages}");
        for ((name, a), (_, b)) in rest.iter().zip(&without) {
            assert!(
                name == marker || a == b,
                "--sessions {pages}: {name} changed"
            );
        }
        let text = String::from_utf8(calls[0].1.clone()).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if pages != "all" {
            // The same lines whichever traces get a page.
            let all =
                String::from_utf8(std::fs::read(dir.path().join("with-all/calls.jsonl")).unwrap())
                    .unwrap();
            assert_eq!(text, all);
            continue;
        }
        // Per trace and config, the lines sum to results.json's figures of
        // that config (tokens exactly), one line per call; the status quo's
        // lines are its per-call rows.
        let results: serde_json::Value = serde_json::from_slice(
            &std::fs::read(dir.path().join("with-all/results.json")).unwrap(),
        )
        .unwrap();
        let mut by_key: std::collections::BTreeMap<(usize, String), Vec<&serde_json::Value>> =
            Default::default();
        for line in &lines {
            let i = line["trace_index"].as_u64().unwrap() as usize;
            assert_eq!(line["trace"], results["traces"][i]["trace"]);
            assert_eq!(line["session"], results["traces"][i]["session"]);
            by_key
                .entry((i, line["config"].as_str().unwrap().to_owned()))
                .or_default()
                .push(line);
        }
        let traces = results["traces"].as_array().unwrap();
        let configs: usize = traces
            .iter()
            .map(|t| t["configs"].as_array().unwrap().len())
            .sum();
        assert_eq!(by_key.len(), configs, "every trace's every config");
        for (i, t) in traces.iter().enumerate() {
            let calls = t["calls_baseline"].as_array().unwrap();
            for c in t["configs"].as_array().unwrap() {
                let config = c["config"].as_str().unwrap();
                let got = &by_key[&(i, config.to_owned())];
                assert_eq!(got.len(), calls.len(), "{i} {config}");
                let indices: Vec<u64> = got.iter().map(|l| l["index"].as_u64().unwrap()).collect();
                assert_eq!(indices, (1..=calls.len() as u64).collect::<Vec<_>>());
                for field in [
                    "input_tokens",
                    "cache_creation_input_tokens",
                    "cache_read_input_tokens",
                    "output_tokens",
                ] {
                    let sum: u64 = got.iter().map(|l| l[field].as_u64().unwrap()).sum();
                    assert_eq!(sum, c[field].as_u64().unwrap(), "{i} {config} {field}");
                }
                let cost: f64 = got.iter().map(|l| l["cost_usd"].as_f64().unwrap()).sum();
                let want = c["cost_usd"].as_f64().unwrap();
                assert!(
                    (cost - want).abs() <= 1e-6 * want.max(1.0),
                    "{i} {config}: {cost} {want}"
                );
                if config == t["baseline"].as_str().unwrap_or_default() {
                    for (l, c) in got.iter().zip(calls) {
                        for f in ["index", "messages", "chars", "cost_usd", "input_tokens"] {
                            assert_eq!(l[f], c[f], "{i} {config} {f}");
                        }
                    }
                }
            }
        }
    }
}

/// Results needed again are never priced at nothing: the fleet prices its
/// summed needs at its own round trip, so a config that shows needs above
/// zero shows a cost above zero for them, and its risk-adjusted cost is
/// its cost plus that price.
#[test]
fn results_needed_again_in_a_fleet_are_priced() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let o = crate::util::tracecost()
        .args([
            "report",
            crate::util::repo("traces").to_str().unwrap(),
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let configs = json["fleet"]["configs"].as_array().unwrap();
    let mut with_needs = 0;
    for c in configs {
        let needs = c["recall"]["needs"]["mid"].as_f64().unwrap();
        let priced = c["recall"]["cost_usd"]["mid"].as_f64().unwrap();
        let gap = c["risk_adjusted_cost_usd"].as_f64().unwrap() - c["cost_usd"].as_f64().unwrap();
        assert!(
            (gap - priced).abs() < 1e-9,
            "{}: {gap} against {priced}",
            c["config"]
        );
        if needs > 0.0 {
            with_needs += 1;
            assert!(
                priced > 0.0,
                "{}: {needs} needs priced at {priced}",
                c["config"]
            );
        }
    }
    assert!(
        with_needs > 0,
        "the bundled traces show needs under some config"
    );
    // The sessions are dated: the saving is scaled by month, never by a
    // thousand sessions of a two-session fleet.
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(!html.contains("per 1,000 sessions"));
    assert!(html.contains("per month at this rate"));
}

//! `--skip-invalid` on a JSON Lines file of traces skips the damaged line,
//! never the file: the fleet with one damaged line gives, through every
//! command, exactly what the file without that line gives, and the line
//! skipped is named.

use crate::util::{Run, repo, run_in, tree};

/// The damaged line (1-based) of the test fleets.
const DAMAGED: usize = 7;

/// A generated fleet of `sessions` written to `dir/fleet.jsonl`, and its
/// text.
fn generated_fleet(dir: &std::path::Path, sessions: &str) -> String {
    ok(run_in(
        dir,
        &["gen", "fleet", "--sessions", sessions, "-o", "fleet.jsonl"],
    ));
    std::fs::read_to_string(dir.join("fleet.jsonl")).unwrap()
}

/// Two folders, each with a `fleet.jsonl`: `bad` has line [`DAMAGED`] made
/// `damage(line)`, `clean` has that line left out.
fn fleets(damage: fn(&[u8]) -> Vec<u8>) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let text = generated_fleet(tmp.path(), "12").into_bytes();
    let lines: Vec<&[u8]> = text.split_inclusive(|&b| b == b'\n').collect();
    assert!(lines.len() > DAMAGED + 2, "{} lines", lines.len());
    let mut bad = Vec::new();
    let mut clean = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i + 1 == DAMAGED {
            bad.extend(damage(line));
        } else {
            bad.extend_from_slice(line);
            clean.extend_from_slice(line);
        }
    }
    for (dir, bytes) in [("bad", bad), ("clean", clean)] {
        std::fs::create_dir(tmp.path().join(dir)).unwrap();
        std::fs::write(tmp.path().join(dir).join("fleet.jsonl"), bytes).unwrap();
    }
    tmp
}

fn cut_in_half(line: &[u8]) -> Vec<u8> {
    let mut out = line[..line.len() / 2].to_vec();
    out.push(b'\n');
    out
}

fn not_utf8(line: &[u8]) -> Vec<u8> {
    let mut out = line.to_vec();
    out[line.len() / 2] = 0xff;
    out
}

fn ok(run: Run) -> Run {
    assert_eq!(run.code, 0, "{}", run.stderr);
    run
}

/// Whether stderr names the damaged line of `fleet.jsonl`.
fn names_the_line(run: &Run) -> bool {
    run.stderr.contains(&format!("fleet.jsonl:{DAMAGED}:"))
}

#[test]
fn a_damaged_line_costs_its_own_trace_in_sweep_replay_and_import() {
    for damage in [cut_in_half as fn(&[u8]) -> Vec<u8>, not_utf8] {
        let tmp = fleets(damage);
        let (bad, clean) = (tmp.path().join("bad"), tmp.path().join("clean"));
        for args in [
            &["sweep", "fleet.jsonl"][..],
            &["replay", "fleet.jsonl"][..],
            &["import", "fleet.jsonl", "-o", "out.jsonl"][..],
        ] {
            let mut skipping = args.to_vec();
            skipping.push("--skip-invalid");
            let got = ok(run_in(&bad, &skipping));
            let want = ok(run_in(&clean, args));
            assert_eq!(got.stdout, want.stdout, "{args:?}");
            assert!(names_the_line(&got), "{args:?}: {}", got.stderr);
            // Without the flag the line is the error, named.
            let refused = run_in(&bad, args);
            assert_eq!(refused.code, 2, "{args:?}: {}", refused.stderr);
            assert!(names_the_line(&refused), "{}", refused.stderr);
        }
        assert_eq!(
            std::fs::read(bad.join("out.jsonl")).unwrap(),
            std::fs::read(clean.join("out.jsonl")).unwrap()
        );
    }
}

#[test]
fn a_damaged_line_costs_its_own_trace_in_a_report_with_and_without_its_cache() {
    let tmp = fleets(cut_in_half);
    let (bad, clean) = (tmp.path().join("bad"), tmp.path().join("clean"));
    ok(run_in(&clean, &["report", "fleet.jsonl", "--out", "r"]));
    let want = tree(&clean.join("r"));
    for args in [
        &["report", "fleet.jsonl", "--out", "r", "--skip-invalid"][..],
        &[
            "report",
            "fleet.jsonl",
            "--out",
            "r",
            "--skip-invalid",
            "--in-memory",
        ][..],
        // Twice with a cache: filled, then read.
        &[
            "report",
            "fleet.jsonl",
            "--out",
            "r",
            "--skip-invalid",
            "--cache-dir",
            "c",
        ][..],
        &[
            "report",
            "fleet.jsonl",
            "--out",
            "r",
            "--skip-invalid",
            "--cache-dir",
            "c",
        ][..],
    ] {
        let run = ok(run_in(&bad, args));
        assert!(names_the_line(&run), "{args:?}: {}", run.stderr);
        let got = tree(&bad.join("r"));
        assert_eq!(
            got.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            want.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            "{args:?}"
        );
        for ((name, got), (_, want)) in got.iter().zip(&want) {
            assert!(
                without_the_unread_line(name, got) == *want,
                "{args:?}: {name} is another report's"
            );
        }
    }
}

/// A file of the report of the damaged fleet with what names the line not
/// read taken out, checking it is there in the files that name it: at the
/// top of `summary.md` and `index.html`, as `results.json`'s `unread`.
fn without_the_unread_line(name: &str, bytes: &[u8]) -> Vec<u8> {
    let named = format!("damaged input: fleet.jsonl:{DAMAGED}:");
    if !matches!(name, "summary.md" | "index.html" | "results.json") {
        return bytes.to_vec();
    }
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    match name {
        "summary.md" | "index.html" => {
            let (line, sep) = match name {
                "summary.md" => ("**Not read:** ", "\n\n"),
                _ => ("<p class=\"sub\"><b>Not read:</b> ", "</p>\n"),
            };
            let at = text
                .find(line)
                .unwrap_or_else(|| panic!("{name}: no {line:?}"));
            let end = at + text[at..].find(sep).unwrap() + sep.len();
            assert!(text[at..end].contains(&named), "{name}: {}", &text[at..end]);
            assert!(!text[end..].contains(line), "{name}: more than one line");
            format!("{}{}", &text[..at], &text[end..]).into_bytes()
        }
        "results.json" => {
            let member = "\n  \"unread\": [\n    ";
            let at = text.find(member).expect("results.json: no unread member");
            let end = at + text[at..].find("\n  ],").unwrap() + "\n  ],".len();
            let listed: Vec<String> =
                serde_json::from_str(&text[at + "\n  \"unread\": ".len()..end - 1]).unwrap();
            assert!(
                listed.len() == 1 && listed[0].starts_with(&named),
                "{listed:?}"
            );
            format!("{}{}", &text[..at], &text[end..]).into_bytes()
        }
        _ => bytes.to_vec(),
    }
}

#[test]
fn a_damaged_line_in_a_folder_beside_another_trace_costs_only_itself() {
    let tmp = fleets(cut_in_half);
    for dir in ["bad", "clean"] {
        std::fs::copy(
            repo("tests/fixtures/traces/small.json"),
            tmp.path().join(dir).join("small.json"),
        )
        .unwrap();
    }
    let got = ok(run_in(
        &tmp.path().join("bad"),
        &["sweep", ".", "--skip-invalid"],
    ));
    let want = ok(run_in(&tmp.path().join("clean"), &["sweep", "."]));
    assert_eq!(got.stdout, want.stdout);
    assert!(names_the_line(&got), "{}", got.stderr);
}

#[test]
fn a_damaged_first_line_costs_only_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let text = generated_fleet(tmp.path(), "4");
    let (first, rest) = text.split_once('\n').unwrap();
    std::fs::write(tmp.path().join("rest.jsonl"), rest).unwrap();
    let damaged = format!("{}\n{rest}", &first[..first.len() / 2]);
    std::fs::write(tmp.path().join("fleet.jsonl"), damaged).unwrap();
    let got = ok(run_in(
        tmp.path(),
        &["replay", "fleet.jsonl", "--skip-invalid"],
    ));
    let want = ok(run_in(tmp.path(), &["replay", "rest.jsonl"]));
    assert_eq!(got.stdout, want.stdout);
    assert!(got.stderr.contains("fleet.jsonl:1:"), "{}", got.stderr);
}

#[test]
fn a_damaged_trace_file_of_one_document_is_still_skipped_whole() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo("tests/fixtures/traces/small.json"),
        tmp.path().join("small.json"),
    )
    .unwrap();
    std::fs::write(
        tmp.path().join("torn.json"),
        "{\"format\":\"tracecost.trace/v1\",",
    )
    .unwrap();
    let run = ok(run_in(tmp.path(), &["replay", ".", "--skip-invalid"]));
    assert!(run.stderr.contains("torn.json"), "{}", run.stderr);
    assert!(run.stderr.contains("(file skipped)"), "{}", run.stderr);
}

#[test]
fn a_report_names_every_line_not_read_and_its_pages_the_first_ten() {
    let tmp = tempfile::tempdir().unwrap();
    let text = generated_fleet(tmp.path(), "12");
    // Every line but the last cut in half: twelve or more lines not read.
    let lines: Vec<&str> = text.lines().collect();
    let damaged = lines.len() - 1;
    assert!(damaged > 10, "{} lines", lines.len());
    let mut bytes = String::new();
    for (i, line) in lines.iter().enumerate() {
        bytes.push_str(if i < damaged {
            &line[..line.len() / 2]
        } else {
            line
        });
        bytes.push('\n');
    }
    std::fs::write(tmp.path().join("fleet.jsonl"), bytes).unwrap();
    ok(run_in(
        tmp.path(),
        &["report", "fleet.jsonl", "--out", "r", "--skip-invalid"],
    ));
    let r = tmp.path().join("r");
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(r.join("results.json")).unwrap()).unwrap();
    let listed: Vec<&str> = results["unread"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let want: Vec<String> = (1..=damaged)
        .map(|n| format!("damaged input: fleet.jsonl:{n}:"))
        .collect();
    assert_eq!(listed.len(), damaged, "{listed:?}");
    for (got, want) in listed.iter().zip(&want) {
        assert!(got.starts_with(want.as_str()), "{got} is not {want}…");
    }
    let more = format!("and {} more; results.json", damaged - 10);
    for (page, mark) in [
        ("summary.md", "**Not read:** "),
        ("index.html", "<b>Not read:</b> "),
    ] {
        let text = std::fs::read_to_string(r.join(page)).unwrap();
        let shown: Vec<&str> = text.lines().filter(|l| l.contains(mark)).collect();
        assert_eq!(shown.len(), 11, "{page}: {shown:?}");
        for (line, want) in shown.iter().zip(&want[..10]) {
            assert!(line.contains(want.as_str()), "{page}: {line}");
        }
        assert!(shown[10].contains(&more), "{page}: {}", shown[10]);
    }
}

//! `--skip-invalid` on a JSON Lines file of traces skips the damaged line,
//! never the file: the fleet with one damaged line gives, through every
//! command, exactly what the file without that line gives, and the line
//! skipped is named.

use crate::util::{Run, repo, run_in, tree};

/// The damaged line (1-based) of the test fleets.
const DAMAGED: usize = 7;

/// Two folders, each with a `fleet.jsonl`: `bad` has line [`DAMAGED`] made
/// `damage(line)`, `clean` has that line left out.
fn fleets(damage: fn(&[u8]) -> Vec<u8>) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let made = run_in(
        tmp.path(),
        &["gen", "fleet", "--sessions", "12", "-o", "fleet.jsonl"],
    );
    assert_eq!(made.code, 0, "{}", made.stderr);
    let text = std::fs::read(tmp.path().join("fleet.jsonl")).unwrap();
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
        assert!(tree(&bad.join("r")) == want, "{args:?}: another report");
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
    ok(run_in(
        tmp.path(),
        &["gen", "fleet", "--sessions", "4", "-o", "fleet.jsonl"],
    ));
    let text = std::fs::read_to_string(tmp.path().join("fleet.jsonl")).unwrap();
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

//! The report's cache (`--cache-dir`): a report
//! that reads what an earlier one kept writes the bytes a report without
//! the cache writes, after new sessions, with other pages asked for, from
//! a damaged cache, and on the real corpora.

use std::path::{Path, PathBuf};

use crate::util::{outcome, repo, tracecost, tree};

/// A small grid with Anthropic's caches only (whose accounts can be cut)
/// and compaction that fires.
const GRID: [&str; 8] = [
    "--compaction",
    "off,ledger",
    "--threshold",
    "2000,8000",
    "--keep-last",
    "1",
    "--cache",
    "none,tail,claude-code",
];

fn gen_fleet(out: &Path, sessions: &str) {
    let (code, _, err) = outcome(
        tracecost()
            .args(["gen", "fleet", "--sessions", sessions, "--seed", "5", "-o"])
            .arg(out)
            .output()
            .unwrap(),
    );
    assert_eq!(code, 0, "{err}");
}

/// Runs `report` of `input` into `out` with `extra`; the files written and
/// stderr.
fn report(input: &Path, out: &Path, extra: &[&str]) -> (Vec<(String, Vec<u8>)>, String) {
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
    (tree(out), err)
}

fn assert_same(a: &[(String, Vec<u8>)], b: &[(String, Vec<u8>)], what: &str) {
    let names = |t: &[(String, Vec<u8>)]| t.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(a), names(b), "{what}");
    for ((name, x), (_, y)) in a.iter().zip(b) {
        assert!(x == y, "{what}: {name} differs");
    }
}

/// The counts of the report's cache line: (read, replayed).
fn cache_counts(stderr: &str) -> (usize, usize) {
    let line = stderr
        .lines()
        .find(|l| l.contains(" trace(s) read from it, "))
        .unwrap_or_else(|| panic!("no cache line in {stderr}"));
    let num = |s: &str| s.trim().replace(',', "").parse::<usize>().unwrap();
    let (_, rest) = line.split_once(": ").unwrap();
    let rest = rest.split_once(": ").map_or(rest, |(_, r)| r);
    let (found, rest) = rest.split_once(" trace(s) read from it, ").unwrap();
    let (replayed, _) = rest.split_once(" replayed").unwrap();
    (num(found), num(replayed))
}

/// A fleet reported with a cache, then again after new sessions were
/// appended to its file: the second report reads the first's segments,
/// replays only what it has not seen, and writes the bytes a report
/// without the cache writes; a third run reads everything. Asking for
/// more pages than the cache holds replays those traces again for them;
/// the fleet held in memory reads the same cache keys its own way and
/// writes the same bytes.
#[test]
fn a_report_from_its_cache_after_new_sessions_is_the_report_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full.jsonl");
    gen_fleet(&full, "40");
    let text = std::fs::read_to_string(&full).unwrap();
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // The first four fifths, then the rest appended to the same file.
    let input = dir.path().join("fleet.jsonl");
    let old = lines.len() * 4 / 5;
    std::fs::write(&input, lines[..old].concat()).unwrap();
    let cache = dir.path().join("cache");
    let cached = |out: &str, extra: &[&str]| {
        let args = [&GRID[..], extra, &["--cache-dir", cache.to_str().unwrap()]].concat();
        report(&input, &dir.path().join(out), &args)
    };
    let (first, err) = cached("first", &["--sessions", "3"]);
    assert_eq!(cache_counts(&err), (0, old), "{err}");
    let (cold, _) = report(
        &input,
        &dir.path().join("first-cold"),
        &[&GRID[..], &["--sessions", "3"]].concat(),
    );
    assert_same(&first, &cold, "the first report with a cache");

    std::fs::write(&input, text.as_bytes()).unwrap();
    let (second, err) = cached("second", &["--sessions", "3"]);
    let (found, replayed) = cache_counts(&err);
    assert_eq!(found + replayed, lines.len(), "{err}");
    assert!(found > 0 && replayed < lines.len() - old + old / 3, "{err}");
    let (cold, _) = report(
        &input,
        &dir.path().join("cold"),
        &[&GRID[..], &["--sessions", "3"]].concat(),
    );
    assert_same(&second, &cold, "after new sessions");

    let (third, err) = cached("third", &["--sessions", "3"]);
    assert_eq!(cache_counts(&err), (lines.len(), 0), "{err}");
    assert_same(&third, &cold, "all from the cache");

    // More pages than the cache holds (the three of each report before):
    // the others' traces are replayed again, and the report is the cold
    // one's.
    let (more, err) = cached("more", &["--sessions", "8"]);
    assert!(err.contains("replayed again for a page"), "{err}");
    let (cold5, _) = report(
        &input,
        &dir.path().join("cold5"),
        &[&GRID[..], &["--sessions", "8"]].concat(),
    );
    assert_same(&more, &cold5, "more pages");

    let (held, err) = cached("held", &["--sessions", "3", "--in-memory"]);
    assert!(err.contains(" trace(s) read from it, "), "{err}");
    assert_same(&held, &cold, "held in memory");
}

/// Every entry of the cache damaged (a byte flipped): none is read, every
/// segment is replayed, and the report is the one without a cache.
#[test]
fn a_damaged_cache_is_replayed_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("fleet.jsonl");
    gen_fleet(&input, "12");
    let cache = dir.path().join("cache");
    let args = [
        &GRID[..],
        &["--sessions", "2", "--cache-dir", cache.to_str().unwrap()],
    ]
    .concat();
    let (first, _) = report(&input, &dir.path().join("a"), &args);
    let mut damaged = 0;
    for (name, mut bytes) in tree(&cache) {
        let mid = bytes.len() / 2;
        bytes[mid] ^= 0x20;
        std::fs::write(cache.join(name), bytes).unwrap();
        damaged += 1;
    }
    assert!(damaged > 2, "{damaged} entries");
    let (again, err) = report(&input, &dir.path().join("b"), &args);
    let traces = first
        .iter()
        .find(|(n, _)| n == "results.json")
        .map(|(_, b)| {
            let v: serde_json::Value = serde_json::from_slice(b).unwrap();
            v["traces"].as_array().unwrap().len()
        });
    assert_eq!(cache_counts(&err), (0, traces.unwrap()), "{err}");
    assert_same(&again, &first, "from a damaged cache");
}

/// `--cache-dir` with `--calls-jsonl` (which needs every call of every
/// trace) is refused before anything runs; a report whose every trace gets
/// a page says the cache is not used for the replay, and keeps no segment
/// in it.
#[test]
fn a_cache_that_cannot_serve_is_refused_or_said_unused() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let (code, _, err) = outcome(
        tracecost()
            .args(["report", "traces", "--calls-jsonl", "--cache-dir"])
            .arg(&cache)
            .arg("--out")
            .arg(dir.path().join("out"))
            .output()
            .unwrap(),
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--cache-dir") && err.contains("--calls-jsonl"),
        "{err}"
    );
    assert!(!dir.path().join("out").exists());
    let (_, err) = report(
        &PathBuf::from("traces"),
        &dir.path().join("all"),
        &["--cache-dir", cache.to_str().unwrap()],
    );
    assert!(
        err.contains("not used for the replay: every trace gets a page"),
        "{err}"
    );
    assert!(!cache.join("tracecost-cache-v1/segments").exists());
}

#[test]
fn a_cache_inside_the_reports_folder_is_refused_before_anything_is_read() {
    let dir = tempfile::tempdir().unwrap();
    for cache in ["out/cache", "out", "./out/../out/c", "elsewhere/../out/c"] {
        let (code, stdout, err) = outcome(
            tracecost()
                .current_dir(dir.path())
                .args([
                    "report",
                    "no-such-input",
                    "--out",
                    "out",
                    "--cache-dir",
                    cache,
                ])
                .output()
                .unwrap(),
        );
        // Refused before the input is looked at (it does not exist).
        assert_eq!((code, stdout.as_str()), (2, ""), "{cache}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains(&format!("--cache-dir {cache}")) && err.contains("--out out"),
            "{err}"
        );
        assert!(!err.contains("no-such-input"), "{err}");
        assert!(!dir.path().join("out").exists(), "{cache}: nothing made");
    }
}

/// Real sessions (accounts whose sessions overlap, continuations and
/// subagents, recorded markers): the report with a cache, cold and then
/// read back whole, is the report without one.
#[test]
#[cfg_attr(
    not(shared_corpus),
    ignore = "needs the real corpora beside the checkout"
)]
fn the_real_corpora_read_from_the_cache_give_the_same_report() {
    let small = [
        "--compaction",
        "off,ledger,recorded",
        "--threshold",
        "8000",
        "--cache",
        "none,claude-code",
        "--sessions",
        "4",
    ];
    for corpus in ["claude-code", "claude-code-2"] {
        let path = repo(&format!("../shared/corpus/{corpus}"));
        assert!(path.is_dir(), "{} is missing", path.display());
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let with = [&small[..], &["--cache-dir", cache.to_str().unwrap()]].concat();
        let (cold, _) = report(&path, &dir.path().join("cold"), &small);
        let (first, err) = report(&path, &dir.path().join("first"), &with);
        assert_eq!(cache_counts(&err).0, 0, "{corpus}: {err}");
        assert_same(&first, &cold, corpus);
        let (second, err) = report(&path, &dir.path().join("second"), &with);
        assert_eq!(cache_counts(&err).1, 0, "{corpus}: {err}");
        assert_same(&second, &cold, corpus);
    }
}

/// A fleet whose recommendation is not what runs has its stubs checked on
/// every trace: the counts are kept per segment and read back, and the
/// report (its stability figures included) is the one without a cache.
#[test]
fn the_fleet_stability_check_read_from_the_cache_is_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("fleet.jsonl");
    gen_fleet(&input, "12");
    let grid = [
        "--baseline",
        "off+none",
        "--compaction",
        "off",
        "--cache",
        "none,tail",
        "--sessions",
        "2",
    ];
    let cache = dir.path().join("cache");
    let with = [&grid[..], &["--cache-dir", cache.to_str().unwrap()]].concat();
    let (cold, err) = report(&input, &dir.path().join("cold"), &grid);
    assert!(err.contains("Recommended `off+tail"), "{err}");
    let (first, _) = report(&input, &dir.path().join("first"), &with);
    assert!(cache.join("tracecost-cache-v1/stability").is_dir());
    let (second, err) = report(&input, &dir.path().join("second"), &with);
    assert_eq!(cache_counts(&err).1, 0, "{err}");
    assert_same(&first, &cold, "first");
    assert_same(&second, &cold, "read back");
    let summary = &second.iter().find(|(n, _)| n == "summary.md").unwrap().1;
    assert!(String::from_utf8_lossy(summary).contains("stub(s)"));
}

/// The folder keeps what the latest report used: a report under another
/// grid removes the entries of the first (which is then replayed whole
/// again, to the same bytes), and temporary files a stopped run left a
/// day ago; anything else in the folder, and a temporary file being
/// written, stays.
#[test]
fn the_cache_keeps_what_the_latest_report_used() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("fleet.jsonl");
    gen_fleet(&input, "12");
    let cache = dir.path().join("cache");
    let cache_arg = cache.to_str().unwrap();
    let with = |grid: &[&'static str]| -> Vec<&str> {
        [grid, &["--sessions", "2", "--cache-dir", cache_arg]].concat()
    };
    let other: [&str; 2] = ["--cache", "none,tail"];
    let entries = || tree(&cache).len();
    let (first, _) = report(&input, &dir.path().join("a"), &with(&GRID));
    let kept = entries();
    // A shard of the layout, to leave files in beside its entries.
    let shard = std::fs::read_dir(cache.join("tracecost-cache-v1/segments"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let prefix = shard.file_name().unwrap().to_str().unwrap().to_owned();
    let tmp = |pid: &str| shard.join(format!(".{prefix}{}.{pid}.tmp", "a".repeat(62)));
    std::fs::write(tmp("1"), b"cut short").unwrap();
    let day_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(25 * 3600);
    std::fs::File::options()
        .write(true)
        .open(tmp("1"))
        .unwrap()
        .set_modified(day_ago)
        .unwrap();
    std::fs::write(tmp("2"), b"being written").unwrap();
    std::fs::write(shard.join("notes.txt"), b"mine").unwrap();
    std::fs::write(cache.join("README"), b"mine").unwrap();

    let (_, err) = report(&input, &dir.path().join("b"), &with(&other));
    assert!(
        err.contains("entries this report did not use (")
            && err.contains("and 1 temporary file(s) a stopped run left"),
        "{err}"
    );
    assert!(!tmp("1").exists());
    for kept in [tmp("2"), shard.join("notes.txt"), cache.join("README")] {
        assert!(kept.exists(), "{} removed", kept.display());
    }
    // The first grid's entries are gone: its report is replayed whole, to
    // the same bytes, and the second grid's entries go in turn.
    let (again, err) = report(&input, &dir.path().join("c"), &with(&GRID));
    assert_eq!(cache_counts(&err).0, 0, "{err}");
    assert!(err.contains("entries this report did not use ("), "{err}");
    assert_same(&again, &first, "replayed after the pruning");
    // Nothing unused: nothing removed, and the folder as the first left it
    // (with the files that are not its entries).
    let (_, err) = report(&input, &dir.path().join("d"), &with(&GRID));
    assert!(!err.contains("removed"), "{err}");
    assert_eq!(entries(), kept + 3);
}

//! The `gen` command's flags, its output checked against the fleet
//! generator's (the generator's own tests are the gen crate's).

use std::collections::{BTreeMap, BTreeSet};

use tracecost::trace::generate::{fleet, fleet_in_accounts, fleet_over_days};
use tracecost::trace::{Trace, TraceWriter, load_str, to_json_line, traces_to_json};

use crate::util::outcome;

const DAY_MS: u64 = 86_400_000;

fn tracecost(args: &[&str]) -> (i32, String, String) {
    outcome(crate::util::tracecost().args(args).output().unwrap())
}

/// `gen fleet` given `flag` at its default `value` writes the fleet
/// without the flag, byte for byte.
fn assert_default_changes_nothing(flag: &str, value: &str) {
    let base = ["gen", "fleet", "--sessions", "6", "--seed", "2"];
    let given = crate::util::tracecost()
        .args(base)
        .args([flag, value])
        .assert()
        .success();
    let plain = crate::util::tracecost().args(base).assert().success();
    assert_eq!(
        given.get_output().stdout,
        plain.get_output().stdout,
        "{flag} {value}"
    );
}

#[test]
fn gen_fleet_writes_a_file_and_rejects_misapplied_flags() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.json");
    let out_s = out.to_str().unwrap();
    let (code, _, err) = tracecost(&[
        "gen",
        "fleet",
        "--sessions",
        "6",
        "--seed",
        "2",
        "-o",
        out_s,
    ]);
    assert_eq!(code, 0, "{err}");
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(written, traces_to_json(&fleet(6, 2).collect::<Vec<_>>()));
    let (code, stdout, _) = tracecost(&["gen", "fleet", "--sessions", "6", "--seed", "2"]);
    assert_eq!(code, 0);
    assert_eq!(stdout, written, "stdout and -o give the same bytes");

    for (args, flag) in [
        (&["gen", "fleet", "--calls", "30"][..], "--calls"),
        (
            &["gen", "fleet", "--sessions", "3", "--calls", "30"][..],
            "--calls",
        ),
        (&["gen", "session", "--sessions", "3"][..], "--sessions"),
        (&["gen", "massage-gun", "--sessions", "3"][..], "--sessions"),
        (
            &["gen", "session-200-s1", "--sessions", "3"][..],
            "--sessions",
        ),
    ] {
        let (code, stdout, err) = tracecost(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(stdout.is_empty(), "{args:?}");
        assert!(err.contains(flag), "{args:?}: {err}");
    }
    let (code, _, err) = tracecost(&["gen", "fleet", "--sessions", "0"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn gen_fleet_accounts_spreads_sessions_and_refuses_bad_counts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fleet.jsonl");
    crate::util::tracecost()
        .args(["gen", "fleet", "--sessions", "12", "--seed", "3"])
        .args(["--accounts", "3", "-o"])
        .arg(&out)
        .assert()
        .success();
    let written = std::fs::read_to_string(&out).unwrap();
    let expected: String = fleet_in_accounts(12, 3, 3)
        .map(|t| to_json_line(&t))
        .collect();
    assert_eq!(written, expected, "the file is the generator's bytes");
    let traces = tracecost::trace::Loader::new(&out).load().unwrap().traces;
    let accounts: BTreeSet<&str> = traces.iter().filter_map(|t| t.account.as_deref()).collect();
    assert_eq!(
        accounts.into_iter().collect::<Vec<_>>(),
        ["acct-01", "acct-02", "acct-03"]
    );
    assert!(traces.iter().all(|t| t.account.is_some()));
    // `--accounts 1` is the fleet without the flag, byte for byte.
    assert_default_changes_nothing("--accounts", "1");

    for (args, expect) in [
        (
            &["gen", "fleet", "--accounts", "0"][..],
            "expected a whole number from 1 to 100000",
        ),
        (
            &["gen", "fleet", "--accounts", "two"][..],
            "expected a whole number from 1 to 100000",
        ),
        (
            &["gen", "fleet", "--sessions", "3", "--accounts", "4"][..],
            "cannot spread 3 sessions over 4 accounts",
        ),
        (
            &["gen", "session", "--accounts", "2"][..],
            "takes no --accounts",
        ),
        (
            &["gen", "request-log", "--accounts", "2"][..],
            "takes no --accounts",
        ),
    ] {
        let run = crate::util::tracecost().args(args).assert().code(2);
        let out = run.get_output();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.starts_with("tracecost: "), "{args:?}: {err}");
        assert!(
            err.contains("--accounts") && err.contains(expect),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn gen_request_log_writes_a_log_that_imports_and_rejects_misapplied_flags() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("requests.jsonl");
    let log_s = log.to_str().unwrap();
    let (code, _, err) = tracecost(&[
        "gen",
        "request-log",
        "--calls",
        "5",
        "--seed",
        "3",
        "-o",
        log_s,
    ]);
    assert_eq!(code, 0, "{err}");
    let written = std::fs::read(&log).unwrap();
    let mut expected = Vec::new();
    tracecost::trace::generate::write_request_log(5, 3, &mut expected).unwrap();
    assert_eq!(written, expected, "the file is the generator's bytes");
    let (code, stdout, _) = tracecost(&["gen", "request-log", "--calls", "5", "--seed", "3"]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout.as_bytes(),
        &written[..],
        "stdout and -o give the same bytes"
    );
    // One exchange per line, each resending the conversation so far.
    assert_eq!(written.iter().filter(|&&b| b == b'\n').count(), 5);

    let trace = dir.path().join("trace.json");
    let (code, _, err) = tracecost(&[
        "import",
        "--from",
        "anthropic",
        log_s,
        "-o",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let loaded = load_str(&std::fs::read_to_string(&trace).unwrap(), "trace.json").unwrap();
    assert_eq!(loaded.traces.len(), 1, "one conversation");
    let calls = &loaded.traces[0].calls;
    assert_eq!(calls.len(), 5);
    assert!(
        calls.iter().all(|c| c.usage.is_some()),
        "every response has usage"
    );
    assert!(
        calls.windows(2).all(|w| w[0].messages < w[1].messages),
        "each request resends a longer history"
    );

    let (code, stdout, err) = tracecost(&["gen", "request-log", "--sessions", "3"]);
    assert_eq!(code, 2, "{err}");
    assert!(stdout.is_empty());
    assert!(err.contains("--sessions"), "{err}");
    let (code, _, err) = tracecost(&["gen", "request-log", "--calls", "0"]);
    assert_eq!(code, 2, "{err}");
}

/// `--days`: the same sessions (lengths, projects, models) started within
/// more days, so fewer of them overlap; 14 days is the fleet without the
/// flag, byte for byte.
#[test]
fn gen_fleet_days_spreads_start_times_and_changes_nothing_else() {
    let sessions = 300;
    let starts = |traces: &[Trace]| -> Vec<u64> {
        traces
            .iter()
            .filter_map(|t| t.calls.first().and_then(|c| c.start_ms))
            .collect()
    };
    let two_weeks: Vec<Trace> = fleet(sessions, 4).collect();
    let ten_weeks: Vec<Trace> = fleet_over_days(sessions, 4, 1, 70).collect();
    let (a, b) = (starts(&two_weeks), starts(&ten_weeks));
    let first = *a.iter().min().unwrap();
    assert_eq!(
        first / DAY_MS,
        *b.iter().min().unwrap() / DAY_MS,
        "the same first Monday"
    );
    assert!(a.iter().all(|&s| s < first + 14 * DAY_MS));
    assert!(b.iter().all(|&s| s < first + 70 * DAY_MS));
    assert!(
        b.iter().any(|&s| s >= first + 56 * DAY_MS),
        "the last two weeks of 70 days have sessions"
    );
    // The same sessions, only their start times (and what names them) move:
    // the multiset of call counts and models is unchanged.
    let shape = |traces: &[Trace]| -> BTreeMap<(usize, String), usize> {
        let mut m = BTreeMap::new();
        for t in traces {
            *m.entry((t.calls.len(), t.model.clone())).or_insert(0) += 1;
        }
        m
    };
    assert_eq!(shape(&two_weeks), shape(&ten_weeks));
    // The busiest hour holds fewer sessions over ten weeks than over two.
    let busiest = |s: &[u64]| -> usize {
        let mut by_hour: BTreeMap<u64, usize> = BTreeMap::new();
        for x in s {
            *by_hour.entry(x / 3_600_000).or_insert(0) += 1;
        }
        by_hour.into_values().max().unwrap()
    };
    assert!(
        busiest(&b) < busiest(&a),
        "{} vs {}",
        busiest(&b),
        busiest(&a)
    );

    // The flag: 14 is the default, byte for byte; 0 and other generators
    // are refused in one line.
    assert_default_changes_nothing("--days", "14");
    let (code, out, err) = tracecost(&[
        "gen",
        "fleet",
        "--sessions",
        "6",
        "--seed",
        "2",
        "--days",
        "70",
    ]);
    assert_eq!(code, 0, "{err}");
    let expected: String = {
        let mut w = TraceWriter::new(Vec::new());
        for t in fleet_over_days(6, 2, 1, 70) {
            w.push(t).unwrap();
        }
        String::from_utf8(w.finish().unwrap()).unwrap()
    };
    assert_eq!(out, expected, "the output is the generator's bytes");
    assert!(
        out.contains("fleet_over_days(6, 2, 1, 70)"),
        "its origin says so"
    );
    for (args, expect) in [
        (
            &["gen", "fleet", "--days", "0"][..],
            "expected a whole number from 1 to 3650",
        ),
        (
            &["gen", "fleet", "--days", "1.5"][..],
            "expected a whole number from 1 to 3650",
        ),
        (&["gen", "session", "--days", "3"][..], "takes no --days"),
        (
            &["gen", "request-log", "--days", "3"][..],
            "takes no --days",
        ),
    ] {
        let (code, out, err) = tracecost(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(
            err.contains("--days") && err.contains(expect),
            "{args:?}: {err}"
        );
    }
}

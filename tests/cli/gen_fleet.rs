//! The fleet generator: determinism, variety, the context window, and the
//! `gen` command's flags.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use assert_cmd::prelude::*;
use tracecost::trace::generate::{
    fleet, fleet_in_accounts, fleet_over_days, messages_chars, prefix_chars, project_of,
};
use tracecost::trace::{Trace, TraceWriter, load_str, to_json_line, traces_to_json};

use crate::util::outcome;

const DAY_MS: u64 = 86_400_000;

fn tracecost(args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("tracecost")
        .unwrap()
        .env("TRACECOST_NO_PROGRESS", "1")
        .args(args)
        .output()
        .unwrap();
    outcome(out)
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

/// The session a trace belongs to: its name without `-part<k>`.
fn session_of(name: &str) -> &str {
    match name.rsplit_once("-part") {
        Some((session, k)) if k.bytes().all(|b| b.is_ascii_digit()) => session,
        _ => name,
    }
}

#[test]
fn a_fleet_is_byte_identical_for_its_seed_and_streams_as_it_is_listed() {
    let a: Vec<Trace> = fleet(25, 7).collect();
    let json = traces_to_json(&a);
    assert_eq!(json, traces_to_json(&fleet(25, 7).collect::<Vec<_>>()));
    assert_ne!(json, traces_to_json(&fleet(25, 8).collect::<Vec<_>>()));
    // Written one trace at a time, as `gen fleet` does: the same bytes.
    let mut w = TraceWriter::new(Vec::new());
    for t in fleet(25, 7) {
        w.push(t).unwrap();
    }
    assert!(w.finish().unwrap() == json.as_bytes());
    let loaded = load_str(&json, "fleet.json").expect("the fleet loads");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.traces, a);
}

#[test]
fn a_fleet_varies_projects_models_days_lengths_and_gaps() {
    let traces: Vec<Trace> = fleet(120, 1).collect();
    let mut sessions: BTreeMap<&str, Vec<&Trace>> = BTreeMap::new();
    for t in &traces {
        sessions.entry(session_of(&t.name)).or_default().push(t);
    }
    assert_eq!(sessions.len(), 120, "a session's parts share its name");
    let projects: BTreeSet<&str> = traces
        .iter()
        .map(|t| project_of(&t.name).expect("the project is in the name"))
        .collect();
    for t in &traces {
        let p = project_of(&t.name).unwrap();
        assert!(
            t.description.contains(&format!("project {p}")),
            "{}",
            t.name
        );
    }
    let models: BTreeMap<&str, usize> = sessions.values().fold(BTreeMap::new(), |mut m, parts| {
        *m.entry(parts[0].model.as_str()).or_default() += 1;
        m
    });
    let starts: Vec<u64> = sessions
        .values()
        .map(|parts| parts[0].calls[0].start_ms.unwrap())
        .collect();
    let days: BTreeSet<u64> = starts.iter().map(|s| s / DAY_MS).collect();
    let lengths: Vec<usize> = sessions
        .values()
        .map(|parts| parts.iter().map(|t| t.calls.len()).sum())
        .collect();
    let short = lengths.iter().filter(|&&n| n <= 5).count();
    let long = lengths.iter().filter(|&&n| n > 40).count();
    let compacted = sessions.values().filter(|parts| parts.len() > 1).count();
    let mut long_gaps = 0;
    for t in &traces {
        let s: Vec<u64> = t.calls.iter().map(|c| c.start_ms.unwrap()).collect();
        assert!(s.windows(2).all(|w| w[0] < w[1]), "{}", t.name);
        long_gaps += s.windows(2).filter(|w| w[1] - w[0] > 5 * 60_000).count();
    }
    println!(
        "fleet: {} traces, projects {projects:?}, models {models:?}, {} days, {short} sessions <= 5 calls, {long} > 40, {compacted} compacted, {long_gaps} gaps > 5 min",
        traces.len(),
        days.len()
    );
    assert_eq!(projects.len(), 3);
    assert_eq!(models.len(), 4, "{models:?}");
    let sonnet = models["claude-sonnet-4-5-20250929"];
    assert!(sonnet * 2 > sessions.len(), "mostly Sonnet 4.5: {models:?}");
    assert!(days.len() >= 7, "{days:?}");
    assert!(
        short >= 20 && long >= 5 && short > long * 2,
        "{short} {long}"
    );
    assert!(compacted >= 3 && long_gaps >= 10);
    // In order of start time.
    let firsts: Vec<u64> = traces
        .iter()
        .filter(|t| !t.name.contains("-part"))
        .map(|t| t.calls[0].start_ms.unwrap())
        .collect();
    assert!(firsts.windows(2).all(|w| w[0] <= w[1]));
    // Sessions of one project, model and day send the same prompt.
    let mut prompts: BTreeMap<(&str, &str, u64), &Trace> = BTreeMap::new();
    let mut shared = 0;
    for parts in sessions.values() {
        let t = parts[0];
        let key = (
            project_of(&t.name).unwrap(),
            t.model.as_str(),
            t.calls[0].start_ms.unwrap() / DAY_MS,
        );
        match prompts.get(&key) {
            Some(other) => {
                assert_eq!(other.prompts, t.prompts);
                shared += 1;
            }
            None => {
                prompts.insert(key, t);
            }
        }
    }
    assert!(shared >= 10, "{shared}");
}

#[test]
fn no_fleet_call_exceeds_its_window() {
    for t in fleet(60, 3) {
        let prefix = prefix_chars(&t.prompts[0]);
        for c in &t.calls {
            let chars = prefix + messages_chars(t.history_of(c));
            // 3 characters per token overestimates (see gen_traces.rs);
            // every model of the fleet has a 200K window.
            assert!(chars / 3 <= 190_000, "{}: {chars} characters", t.name);
        }
    }
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
    let traces = tracecost::trace::load_path(&out).unwrap().traces;
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

//! The fleet generator: determinism, variety and the context window
//! (the `gen` command's flags are the root's CLI tests).

use std::collections::{BTreeMap, BTreeSet};

use tracecost_gen::{fleet, messages_chars, prefix_chars, project_of};
use tracecost_trace::{Trace, TraceWriter, load_str, traces_to_json};

const DAY_MS: u64 = 86_400_000;

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
            // 3 characters per token overestimates (see traces.rs);
            // every model of the fleet has a 200K window.
            assert!(chars / 3 <= 190_000, "{}: {chars} characters", t.name);
        }
    }
}

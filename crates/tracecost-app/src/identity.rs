//! Which traces are which: a trace's name alone does not say where it came
//! from, and two files may well hold traces of the same name (two copies
//! of one recorder's output, two config roots holding one session id).
//! Before a fleet is summed, every trace gets a name no other trace of the
//! run has, and a session is the traces that name it *from one place*.
//!
//! A trace's place (its scope) is its account when it names one (Claude
//! Code writes a session's subagents and continuations to several files
//! of one config root, and the root is the account), else the file it was
//! read from. Names are only changed where they collide, so a fleet
//! without collisions keeps every name, page and row as it was.

use std::collections::{BTreeMap, BTreeSet};

use sha2::{Digest, Sha256};

use tracecost_trace::{Trace, TraceFacts};

/// Characters of a file-name fragment, before any disambiguating tag.
const STEM_CHARS: usize = 60;

/// A file name fragment safe on every filesystem: ASCII letters (lowered),
/// digits, `-` and `_`, at most 60 characters.
pub fn slug(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    out.truncate(STEM_CHARS);
    if out.is_empty() { "trace".into() } else { out }
}

/// Eight hex digits of SHA-256: a tag that depends on `s` alone, so it
/// does not move when other traces are added to a run.
fn tag(s: &str) -> String {
    let digest = Sha256::digest(s.as_bytes());
    digest[..4].iter().map(|b| format!("{b:02x}")).collect()
}

/// Where a trace's session lives: its account, else its file.
fn scope(t: &impl TraceFacts) -> String {
    match (t.account(), t.source()) {
        (Some(a), _) => format!("account:{a}"),
        (None, Some(s)) => format!("file:{s}"),
        (None, None) => String::new(),
    }
}

/// The session a trace is part of (its own name when it is whole): the one
/// rule that groups traces into sessions.
pub fn session_of<T: TraceFacts + ?Sized>(t: &T) -> &str {
    t.session().unwrap_or(t.name())
}

/// A trace whose names [`tell_apart`] may change: a whole trace, or the
/// outline a plan keeps of one.
pub trait Renamed: TraceFacts {
    /// Gives the trace the name `name`.
    fn set_name(&mut self, name: String);
    /// Gives the trace the session `session`.
    fn set_session(&mut self, session: String);
}

impl Renamed for Trace {
    fn set_name(&mut self, name: String) {
        self.name = name;
    }
    fn set_session(&mut self, session: String) {
        self.session = Some(session);
    }
}

impl Renamed for crate::outline::TraceOutline {
    fn set_name(&mut self, name: String) {
        self.name = name;
    }
    fn set_session(&mut self, session: String) {
        self.session = Some(session);
    }
}

/// Renames traces so that (1) traces naming the same session from
/// different scopes are different sessions, and (2) no two traces share a
/// name or a file-name fragment ([`slug`]). Deterministic: the same traces
/// in the same order get the same names. Returns how many traces were
/// renamed.
pub fn tell_apart<T: Renamed>(traces: &mut [T]) -> usize {
    let before: Vec<String> = traces.iter().map(|t| t.name().to_owned()).collect();
    // (1) A session name held by more than one scope: each scope's session
    // gets the scope's tag, and so does every trace of it, parts included
    // (`s-part2` of one file and of another are not one trace either).
    let mut scopes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for t in traces.iter() {
        scopes
            .entry(session_of(t).to_owned())
            .or_default()
            .insert(scope(t));
    }
    for t in traces.iter_mut() {
        if scopes.get(session_of(t)).is_some_and(|s| s.len() > 1) {
            let tag = tag(&scope(t));
            if let Some(s) = t.session() {
                let session = format!("{s}-{tag}");
                t.set_session(session);
            }
            let name = format!("{}-{tag}", t.name());
            t.set_name(name);
        }
    }
    // (2) Names, or their file-name fragments, still shared (traces of one
    // scope from two files, or one file read twice): each gets a tag of its
    // file and name, then a count if even that is shared.
    let mut by_slug: BTreeMap<String, usize> = BTreeMap::new();
    for t in traces.iter() {
        *by_slug.entry(slug(t.name())).or_default() += 1;
    }
    let declared: BTreeSet<(String, String)> = traces
        .iter()
        .filter_map(|t| Some((scope(t), t.session()?.to_owned())))
        .collect();
    let mut taken: BTreeSet<String> = traces
        .iter()
        .filter(|t| by_slug[&slug(t.name())] == 1)
        .map(|t| slug(t.name()))
        .collect();
    for t in traces.iter_mut() {
        if by_slug[&slug(t.name())] == 1 {
            continue;
        }
        let old = t.name().to_owned();
        let source = t.source().unwrap_or("");
        let base = format!("{old}-{}", tag(&format!("{source}\n{old}")));
        let mut name = base.clone();
        let mut n = 1;
        while !taken.insert(slug(&name)) {
            n += 1;
            name = format!("{base}-{n}");
        }
        // A whole trace that other traces of its scope name as their
        // session stays the head of that session.
        if t.session().is_none() && declared.contains(&(scope(t), old.clone())) {
            t.set_session(old);
        }
        t.set_name(name);
    }
    traces
        .iter()
        .zip(before)
        .filter(|(t, b)| t.name() != b)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(name: &str, session: Option<&str>, account: Option<&str>, source: &str) -> Trace {
        let mut t = tracecost_trace::Loader::new(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/fixtures/traces/small.json"
        )))
        .load()
        .unwrap()
        .traces
        .remove(0);
        t.name = name.to_owned();
        t.session = session.map(str::to_owned);
        t.account = account.map(str::to_owned);
        t.source = Some(source.to_owned());
        t
    }

    fn sessions(traces: &[Trace]) -> BTreeSet<String> {
        traces.iter().map(|t| session_of(t).to_owned()).collect()
    }

    #[test]
    fn distinct_names_are_kept() {
        let mut ts = vec![
            trace("a", None, None, "x/a.json"),
            trace("b", None, None, "x/b.json"),
        ];
        assert_eq!(tell_apart(&mut ts), 0);
        assert_eq!(ts[0].name, "a");
        assert_eq!(ts[1].name, "b");
    }

    #[test]
    fn one_name_in_two_files_is_two_sessions_with_two_names() {
        let mut ts = vec![
            trace("small", None, None, "in/a.json"),
            trace("small", None, None, "in/b.json"),
            trace("c", None, None, "in/c.json"),
        ];
        assert_eq!(tell_apart(&mut ts), 2);
        assert_ne!(ts[0].name, ts[1].name);
        assert_ne!(slug(&ts[0].name), slug(&ts[1].name));
        assert!(ts[0].name.starts_with("small-"), "{}", ts[0].name);
        assert_eq!(ts[2].name, "c");
        assert_eq!(sessions(&ts).len(), 3);
        // The same input, the same names.
        let mut again = vec![
            trace("small", None, None, "in/a.json"),
            trace("small", None, None, "in/b.json"),
            trace("c", None, None, "in/c.json"),
        ];
        tell_apart(&mut again);
        assert_eq!(ts, again);
    }

    #[test]
    fn parts_of_one_session_stay_one_session() {
        // Claude Code: a session and its subagent in two files of one root.
        let mut ts = vec![
            trace("s1", None, Some("root"), "p/s1.jsonl"),
            trace(
                "agent-1",
                Some("s1"),
                Some("root"),
                "p/s1/subagents/agent-1.jsonl",
            ),
            trace("s1.part2", Some("s1"), Some("root"), "p/s1.jsonl"),
        ];
        assert_eq!(tell_apart(&mut ts), 0);
        assert_eq!(sessions(&ts).len(), 1);
    }

    #[test]
    fn one_session_in_two_scopes_is_two_sessions_each_with_its_parts() {
        let mut ts = vec![
            trace("s", Some("s"), None, "one.json"),
            trace("s-part2", Some("s"), None, "one.json"),
            trace("s", Some("s"), None, "two.json"),
            trace("s-part2", Some("s"), None, "two.json"),
        ];
        tell_apart(&mut ts);
        assert_eq!(sessions(&ts).len(), 2);
        assert_eq!(ts[0].session, ts[1].session);
        assert_eq!(ts[2].session, ts[3].session);
        let names: BTreeSet<&str> = ts.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names.len(), 4);
    }

    #[test]
    fn names_that_share_a_file_name_fragment_are_told_apart() {
        let mut ts = vec![
            trace("A b", None, None, "x.json"),
            trace("a-b", None, None, "y.json"),
            trace("a.b", None, None, "x.json"),
        ];
        tell_apart(&mut ts);
        let slugs: BTreeSet<String> = ts.iter().map(|t| slug(&t.name)).collect();
        assert_eq!(slugs.len(), 3);
    }

    #[test]
    fn one_file_read_twice_gives_two_traces_of_different_names() {
        let mut ts = vec![
            trace("a", None, None, "x.json"),
            trace("a", None, None, "x.json"),
        ];
        tell_apart(&mut ts);
        assert_ne!(slug(&ts[0].name), slug(&ts[1].name));
    }

    #[test]
    fn a_renamed_head_keeps_its_parts() {
        // Two whole traces of one account and name, from two files; the
        // parts of the first name it as their session.
        let mut ts = vec![
            trace("s", None, Some("acct"), "one.jsonl"),
            trace("s.part2", Some("s"), Some("acct"), "one.jsonl"),
            trace("s", None, Some("acct"), "two.jsonl"),
        ];
        tell_apart(&mut ts);
        assert_eq!(ts[0].session.as_deref(), Some("s"));
        assert_eq!(ts[1].session.as_deref(), Some("s"));
        let names: BTreeSet<&str> = ts.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names.len(), 3);
    }
}

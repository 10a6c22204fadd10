//! Deterministic generators for the bundled reference traces.
//!
//! The generators that ship with tracecost:
//!
//! - [`massage_gun`] rebuilds the `massage-gun` trace — a product-research
//!   agent whose third call pulls a ~360 KB Keepa payload into its context —
//!   from the published figures of the original trace (message counts per
//!   call, characters of messages, recorded input tokens).
//! - [`session_parts`] builds a long, realistic coding-agent session of any
//!   length from a seed: small and large tool results, parallel tool calls,
//!   user follow-ups, gaps long enough to expire a 5-minute cache, and
//!   compactions before the model's context window (one trace per context).
//! - [`fleet`] builds many such sessions of one organization: several
//!   projects, models and days, short sessions and a few long ones, in one
//!   account or ([`fleet_in_accounts`]) spread over several.
//! - [`write_request_log`] writes a [`session`] as the Anthropic Messages
//!   API request log a recording proxy would have saved (the input of
//!   `tracecost import`, and of its benchmark).
//! - [`write_observability_export`] writes sessions as Langfuse, LangSmith
//!   or OpenAI Agents SDK exports.
//! - [`write_otel_export`] writes sessions as the OpenTelemetry (OTLP JSON)
//!   export an instrumented agent's collector would have written.
//!
//! All are pure functions of their arguments: no clocks, no `RandomState`,
//! no addresses. Randomness comes from a private SplitMix64 generator and
//! all text from fixed word lists, templates and tool manifests, so the same
//! arguments give the same bytes on every machine ([`tracecost_trace::to_json`]
//! of the result is what is committed under `traces/`, see [`BUNDLED`]).
//!
//! The word lists, templates, prose and tool manifests are data files under
//! `crates/tracecost-gen/src/data/` (one folder per generator), embedded in
//! the binary at compile time; `data.rs` says how they are read. The `.rs`
//! files hold the code that builds the traces.
//!
//! This crate builds traces of the model in `tracecost-trace` and must not
//! depend on the importers (`tracecost-import`) or on what prices, replays
//! or reports traces (the root crate): a generated session looks like a
//! Claude Code one by writing what Claude Code records, not by calling its
//! importer. `tests/cli/crates.rs` at the workspace root holds its
//! dependencies to a list.

mod build;
mod data;
mod fleet;
mod ledger_run;
mod massage_gun;
mod observability_export;
mod otel_export;
mod request_log;
mod rng;
mod session;
mod text;

use tracecost_engine::message::Message;
use tracecost_trace::{Prompt, Trace};

pub use fleet::{DEFAULT_FLEET_DAYS, GeneratedFleet, project_of};
pub use ledger_run::{LEDGER_KEEP_LAST, LEDGER_THRESHOLD, RECALL_CHANCE, ledger_status_quo};
pub use observability_export::{ObservabilityFormat, write_observability_export};
pub use otel_export::{OtelExportStats, write_otel_export};
pub use request_log::{RequestLogStats, write_request_log};

/// Target characters of the massage-gun system prompt plus tool manifest
/// (compact JSON of the system blocks and of the tool definitions, see
/// [`prefix_chars`]): about 20K tokens at ~4 characters per token. Tune this
/// when tokenizer calibration says the prefix should be bigger or smaller.
pub const MASSAGE_GUN_PREFIX_CHARS: usize = 80_000;

/// Characters of messages (see [`messages_chars`]) sent by massage-gun
/// calls 02 to 06. Calls 02 and 03 are the published figures (10.6K and
/// 374K); 04 to 06 follow from the recorded input tokens at the trace's own
/// characters-per-token ratio.
pub const MASSAGE_GUN_CALL_CHARS: [usize; 5] = [10_600, 374_000, 430_000, 438_000, 446_000];

/// Uncached input tokens recorded for massage-gun calls 02 to 06 (call 01
/// records output tokens only). 04 to 06 are the published "around 130K"
/// figures, rounded.
pub const MASSAGE_GUN_INPUT_TOKENS: [u64; 5] = [23_000, 114_000, 128_000, 130_000, 132_000];

/// Target characters of the session generator's system prompt plus tool
/// manifest (about 12K tokens).
pub const SESSION_PREFIX_CHARS: usize = 48_000;

/// Calls in the default generated session.
pub const DEFAULT_SESSION_CALLS: usize = 200;
/// The most model calls a generated session or request log may have
/// (`gen --calls`, or the calls a `session-<calls>-s<seed>` name fixes).
pub const MAX_CALLS: usize = 100_000;

/// Seed of the default generated session.
pub const DEFAULT_SESSION_SEED: u64 = 1;

/// The massage-gun reference trace: a product-research agent on Claude
/// Opus 4.1 that fetches one huge Keepa payload and resends it on every
/// later call.
///
/// Six calls sending 1, 3, 5, 7, 9 and 11 messages; call 02 sends 10.6K
/// characters of messages and call 03 — after a ~360 KB Keepa product
/// lookup result — 374K ([`MASSAGE_GUN_CALL_CHARS`]). Calls record the
/// published input tokens ([`MASSAGE_GUN_INPUT_TOKENS`]) as uncached
/// `input_tokens`, plus plausible `output_tokens`. The history holds a
/// twelfth message, the final report, which no call sends.
pub fn massage_gun() -> Trace {
    massage_gun::build()
}

/// A long coding-agent session on Claude Sonnet 4.5 with exactly `calls`
/// model calls (0 is treated as 1), named `session-<calls>-s<seed>`, in
/// one context that never compacts.
///
/// No real agent sends this past ~60 calls: the history outgrows the
/// model's 200K-token window. It is a stress fixture (benchmarks, large
/// inputs); [`session_parts`] is the same agent compacting as a real one
/// does, and what `tracecost gen session` writes.
///
/// Each call sends the whole history up to its latest user message; the
/// assistant's reply to the last call ends the history. Tool results range
/// from a few hundred characters to ~100K (file reads, grep output, test
/// logs, API JSON, web pages); some turns call 2–3 tools in parallel; the
/// user sends follow-up requests, sometimes after a break of 6–20 minutes.
/// Calls record plausible `output_tokens` and no input usage.
pub fn session(calls: usize, seed: u64) -> Trace {
    let spec = session_spec(calls, seed, false);
    // Without compaction there is exactly one part (`build` always ends
    // with the context it is in).
    session::build(&spec, &mut session::PromptCache::new())
        .into_iter()
        .next()
        .expect("a session has at least one part")
}

/// The session of [`session`] with the agent compacting before its
/// context window, as Claude Code does: `calls` model calls in all
/// (compaction calls included), split into one trace per context.
///
/// The first trace is named `session-<calls>-s<seed>`, later ones
/// `…-part2`, `…-part3`. Before each call the agent estimates what it would
/// send (system prompt, tools and messages at 3 characters of compact JSON
/// per token, an overestimate); near 80% of the 200K window (or when the
/// next step's results would take it past 95%) the call is a compaction
/// instead: it sends the history plus a request to summarize it, and its
/// reply, the summary, ends the part. The next part starts from one user
/// message quoting the summary. Every part has the same prompt.
pub fn session_parts(calls: usize, seed: u64) -> Vec<Trace> {
    session::build(
        &session_spec(calls, seed, true),
        &mut session::PromptCache::new(),
    )
}

fn session_spec(calls: usize, seed: u64, compacts: bool) -> session::SessionSpec {
    let calls = calls.max(1);
    session::SessionSpec {
        calls,
        seed,
        name: format!("session-{calls}-s{seed}"),
        project: (seed % session::project_names().len() as u64) as usize,
        model: session::SONNET_4_5,
        start_ms: session::START_MS,
        compacts,
        account: session::FLEET_ACCOUNT.to_owned(),
        origin: format!(
            "tracecost::trace::generate::{}({calls}, {seed})",
            if compacts { "session_parts" } else { "session" }
        ),
    }
}

/// The session of [`session_parts`] as recorded by an agent that ran the
/// ledger (`ledger:t=2000,k=1`, its status quo) and whose model called
/// `recall_tool_result` on about a quarter of the results stubbed
/// ([`RECALL_CHANCE`]), which results drawn from `seed`: a trace whose
/// recalls are observed, not estimated. The same arguments give the same
/// traces.
pub fn ledger_session_parts(calls: usize, seed: u64) -> Vec<Trace> {
    ledger_run::with_ledger(session_parts(calls, seed), seed)
}

/// A fleet of `sessions` coding-agent sessions (see [`session_parts`]) of
/// one organization, built one at a time as the iterator is read, so a
/// large fleet streams to a file without being held.
///
/// Sessions are spread over two weeks ([`DEFAULT_FLEET_DAYS`]) from
/// Monday 2025-10-06 (working hours mostly, weekends light; see
/// [`fleet_over_days`] for other spans) and come in order of start time. Lengths
/// are long-tailed: about two thirds of sessions make at most 15 calls, 1
/// in 20 more than 100 (up to 400, compacting on the way). Projects are
/// shared 50/30/20 between the generator's three repositories; models are
/// Sonnet 4.5 (70%), Opus 4.5 (12%), Opus 4.1 (6%) and Haiku 4.5 (12%).
/// Traces are named `<project>-<n>` (n counts sessions from 1 in start
/// order, zero-padded), with `-part<k>` for a session's later contexts;
/// [`project_of`] reads the project back, and the description names it.
/// Sessions of one project, model and day share a system prompt, so their
/// prefix is cacheable across sessions. Every trace is in one account,
/// `generated-team`. The same arguments give the same traces.
pub fn fleet(sessions: usize, seed: u64) -> GeneratedFleet {
    GeneratedFleet::new(sessions, seed, 1, DEFAULT_FLEET_DAYS)
}

/// The sessions of [`fleet`]`(sessions, seed)`, the same but for their
/// account, spread over `accounts` accounts (a team's organizations or API
/// keys; 0 is taken as 1) named `acct-01`, `acct-02`, … (`acct-001`, … from
/// 100 accounts): a session and all its parts in one account, the accounts
/// as even as can be (their sizes differ by one session at most), which
/// session goes where decided by the seed. One account is [`fleet`] itself,
/// byte for byte. Sessions of one account share its prompt cache when
/// replayed; those of different accounts never do. The same arguments give
/// the same traces.
pub fn fleet_in_accounts(sessions: usize, seed: u64, accounts: usize) -> GeneratedFleet {
    GeneratedFleet::new(sessions, seed, accounts, DEFAULT_FLEET_DAYS)
}

/// The sessions of [`fleet_in_accounts`]`(sessions, seed, accounts)`
/// (lengths, projects, models, accounts alike), their start times spread
/// over `days` days from the same Monday rather than two weeks (1 when 0;
/// weekends light as ever): more days, fewer sessions side by side. Over
/// [`DEFAULT_FLEET_DAYS`] it is that fleet, byte for byte. A benchmark
/// uses it to grow a fleet at an even density: ten times the sessions over
/// ten times the days overlap about as much. The same arguments give the
/// same traces.
pub fn fleet_over_days(sessions: usize, seed: u64, accounts: usize, days: u64) -> GeneratedFleet {
    GeneratedFleet::new(sessions, seed, accounts, days)
}

/// Unicode characters of the compact JSON array of `msgs`: `[`, each
/// message's [`Message::to_json`] joined by `,`, then `]`. This is the
/// "characters of messages" measure the published figures use.
pub fn messages_chars(msgs: &[Message]) -> usize {
    let inner: usize = msgs.iter().map(message_chars).sum();
    array_chars(msgs.len(), inner)
}

/// Unicode characters of one message's compact JSON, as [`messages_chars`]
/// counts it.
pub(crate) fn message_chars(m: &Message) -> usize {
    m.to_json().chars().count()
}

/// Unicode characters of a prompt's compact JSON: the system blocks as one
/// array plus the tool definitions as another.
pub fn prefix_chars(prompt: &Prompt) -> usize {
    let array = |items: Vec<String>| -> usize {
        array_chars(items.len(), items.iter().map(|s| s.chars().count()).sum())
    };
    array(prompt.system.iter().map(|b| b.to_json()).collect())
        + array(prompt.tools.iter().map(|t| t.to_json()).collect())
}

/// Characters of a compact JSON array of `items` elements whose own
/// characters add up to `inner`: the brackets, and a comma between each two.
pub(crate) fn array_chars(items: usize, inner: usize) -> usize {
    2 + inner + items.saturating_sub(1)
}

/// The generators [`by_name`] knows, with what each takes.
pub const GENERATORS: &[(&str, &str)] = &[
    (
        "massage-gun",
        "the massage-gun product-research reference trace (no options)",
    ),
    (
        "session",
        "a long coding-agent session that compacts before its window (calls, default 200; seed, default 1)",
    ),
    (
        "ledger-session",
        "the session of \"session\" with the agent running the ledger and recalling some stubbed results (calls, default 200; seed, default 1)",
    ),
    (
        "fleet",
        "many coding-agent sessions over projects, models and days (sessions, default 100; seed, default 1; accounts, default 1)",
    ),
];

/// Sessions in the default generated fleet.
pub const DEFAULT_FLEET_SESSIONS: usize = 100;

/// What the `gen` command asks of a generator; `None` is "not given".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GenOptions {
    /// Model calls of a session.
    pub calls: Option<usize>,
    /// Random seed.
    pub seed: Option<u64>,
    /// Sessions of a fleet.
    pub sessions: Option<usize>,
    /// Accounts a fleet's sessions are spread over.
    pub accounts: Option<usize>,
    /// Days a fleet's sessions start within.
    pub days: Option<u64>,
}

/// Runs any generator by name, for the CLI's `gen` command: the traces
/// come one at a time (a fleet is built as it is read). An option the
/// generator does not take is an error, never ignored.
pub fn generate(
    name: &str,
    options: GenOptions,
) -> Result<Box<dyn Iterator<Item = Trace>>, String> {
    if name == "fleet" {
        if options.calls.is_some() {
            return Err(
                "generator \"fleet\" takes --sessions, not --calls (session lengths are drawn)"
                    .to_owned(),
            );
        }
        let sessions = options.sessions.unwrap_or(DEFAULT_FLEET_SESSIONS);
        if sessions == 0 {
            return Err("generator \"fleet\" needs at least 1 session, found 0".to_owned());
        }
        let accounts = options.accounts.unwrap_or(1);
        if accounts == 0 {
            return Err("generator \"fleet\" needs at least 1 account, found 0".to_owned());
        }
        if accounts > sessions {
            return Err(format!(
                "generator \"fleet\" cannot spread {sessions} session{} over {accounts} accounts (every account needs a session): lower --accounts or raise --sessions",
                if sessions == 1 { "" } else { "s" }
            ));
        }
        let days = options.days.unwrap_or(DEFAULT_FLEET_DAYS);
        if days == 0 {
            return Err("generator \"fleet\" needs at least 1 day, found 0".to_owned());
        }
        let seed = options.seed.unwrap_or(DEFAULT_SESSION_SEED);
        return Ok(Box::new(fleet_over_days(sessions, seed, accounts, days)));
    }
    for (given, flag) in [
        (options.sessions.is_some(), "--sessions"),
        (options.accounts.is_some(), "--accounts"),
        (options.days.is_some(), "--days"),
    ] {
        if given {
            return Err(format!(
                "generator {name:?} takes no {flag} (only \"fleet\" does)"
            ));
        }
    }
    Ok(Box::new(
        by_name(name, options.calls, options.seed)?.into_iter(),
    ))
}

/// Runs a single-session generator by name: its traces (one, or one per
/// context of a session that compacts).
///
/// `massage-gun` takes no options. `session` takes `calls` (default
/// [`DEFAULT_SESSION_CALLS`], at least 1) and `seed` (default
/// [`DEFAULT_SESSION_SEED`]); a bundled name such as `session-200-s1` also
/// works and fixes both. The error names what was wrong and what is
/// accepted.
pub fn by_name(name: &str, calls: Option<usize>, seed: Option<u64>) -> Result<Vec<Trace>, String> {
    match name {
        "massage-gun" => {
            if calls.is_some() || seed.is_some() {
                return Err(
                    "generator \"massage-gun\" takes no calls or seed (it rebuilds a fixed trace)"
                        .to_owned(),
                );
            }
            Ok(vec![massage_gun()])
        }
        "session" => {
            let calls = calls.unwrap_or(DEFAULT_SESSION_CALLS);
            if calls == 0 {
                return Err("generator \"session\" needs at least 1 call, found 0".to_owned());
            }
            Ok(session_parts(calls, seed.unwrap_or(DEFAULT_SESSION_SEED)))
        }
        "ledger-session" => {
            let calls = calls.unwrap_or(DEFAULT_SESSION_CALLS);
            if calls == 0 {
                return Err(
                    "generator \"ledger-session\" needs at least 1 call, found 0".to_owned(),
                );
            }
            Ok(ledger_session_parts(
                calls,
                seed.unwrap_or(DEFAULT_SESSION_SEED),
            ))
        }
        other => {
            // The name is the user's and may be any size.
            let shown = tracecost_engine::handle::one_line(other, 200);
            let max_calls = MAX_CALLS;
            match parse_session_name(other) {
                // The name's calls are a --calls value, with its range.
                Some((n, _)) if n == 0 || n > max_calls => Err(format!(
                    "generator name \"{shown}\": expected calls from 1 to {max_calls}"
                )),
                Some((n, s)) if calls.is_none_or(|c| c == n) && seed.is_none_or(|v| v == s) => {
                    Ok(session_parts(n, s))
                }
                Some(_) => Err(format!(
                    "generator name \"{shown}\" already fixes calls and seed; drop the options or use \"session\""
                )),
                None => {
                    let known: Vec<&str> = GENERATORS.iter().map(|(n, _)| *n).collect();
                    Err(format!(
                        "unknown generator \"{shown}\"; expected one of {} (or session-<calls>-s<seed>)",
                        known.join(", ")
                    ))
                }
            }
        }
    }
}

/// `session-<calls>-s<seed>` → `(calls, seed)`.
fn parse_session_name(name: &str) -> Option<(usize, u64)> {
    let rest = name.strip_prefix("session-")?;
    let (calls_text, seed_text) = rest.split_once("-s")?;
    let calls: usize = calls_text.parse().ok()?;
    let seed: u64 = seed_text.parse().ok()?;
    // Only the canonical spelling, so one trace has one name.
    let canonical = calls.to_string() == calls_text && seed.to_string() == seed_text;
    (calls > 0 && canonical).then_some((calls, seed))
}

/// One bundled trace file and how to regenerate it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bundled {
    /// Path of the file, relative to the crate root.
    pub file: &'static str,
    /// Generator name, as [`by_name`] takes it.
    pub generator: &'static str,
    /// `calls` argument, if the generator takes one.
    pub calls: Option<usize>,
    /// `seed` argument, if the generator takes one.
    pub seed: Option<u64>,
    /// The shell command that rewrites the file.
    pub regenerate: &'static str,
}

impl Bundled {
    /// Generates this file's traces.
    pub fn generate(&self) -> Result<Vec<Trace>, String> {
        by_name(self.generator, self.calls, self.seed)
    }
}

/// The bundled reference traces under `traces/`. The test
/// `crates/tracecost-gen/tests/gen/traces.rs` checks that each committed file equals
/// [`tracecost_trace::traces_to_json`] of its generator's output byte for byte, and
/// rewrites them when run with `TRACECOST_BLESS=1`.
pub const BUNDLED: &[Bundled] = &[
    Bundled {
        file: "traces/massage-gun.json",
        generator: "massage-gun",
        calls: None,
        seed: None,
        regenerate: "TRACECOST_BLESS=1 cargo test -p tracecost-gen --test gen traces::",
    },
    Bundled {
        file: "traces/session-200-s1.json",
        generator: "session",
        calls: Some(DEFAULT_SESSION_CALLS),
        seed: Some(DEFAULT_SESSION_SEED),
        regenerate: "TRACECOST_BLESS=1 cargo test -p tracecost-gen --test gen traces::",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_engine::message::Role;

    #[test]
    fn messages_chars_counts_the_compact_array() {
        let a = Message::new_text(Role::User, "héllo");
        let b = Message::new_text(Role::Assistant, "x");
        let joined = format!("[{},{}]", a.to_json(), b.to_json());
        assert_eq!(messages_chars(&[a.clone(), b]), joined.chars().count());
        assert_eq!(
            messages_chars(std::slice::from_ref(&a)),
            a.to_json().chars().count() + 2
        );
        assert_eq!(messages_chars(&[]), 2);
    }

    #[test]
    fn by_name_accepts_known_generators_and_explains_errors() {
        assert_eq!(
            by_name("session", Some(3), Some(9)).unwrap()[0].name,
            "session-3-s9"
        );
        assert_eq!(
            by_name("session-4-s2", None, None).unwrap()[0].calls.len(),
            4
        );
        assert_eq!(
            by_name("session-4-s2", Some(4), Some(2)).unwrap()[0].name,
            "session-4-s2"
        );
        assert!(by_name("session-4-s2", Some(5), None).is_err());
        assert!(
            by_name("session", Some(0), None)
                .unwrap_err()
                .contains("at least 1")
        );
        assert!(by_name("massage-gun", Some(3), None).is_err());
        let e = by_name("nope", None, None).unwrap_err();
        assert!(
            e.contains("massage-gun") && e.contains("session") && e.contains("fleet"),
            "{e}"
        );
        assert!(parse_session_name("session-007-s1").is_none());
        assert!(parse_session_name("session-0-s1").is_none());
        assert_eq!(parse_session_name("session-12-s34"), Some((12, 34)));
    }

    #[test]
    fn options_a_generator_does_not_take_are_errors() {
        let calls_on_fleet = GenOptions {
            calls: Some(5),
            sessions: Some(2),
            ..GenOptions::default()
        };
        let e = generate("fleet", calls_on_fleet).err().unwrap();
        assert!(e.contains("--calls"), "{e}");
        for name in ["session", "massage-gun", "session-4-s2"] {
            let sessions = GenOptions {
                sessions: Some(3),
                ..GenOptions::default()
            };
            let e = generate(name, sessions).err().unwrap();
            assert!(e.contains("--sessions"), "{name}: {e}");
        }
        let zero = GenOptions {
            sessions: Some(0),
            ..GenOptions::default()
        };
        assert!(generate("fleet", zero).is_err());
        let two = GenOptions {
            sessions: Some(2),
            seed: Some(5),
            ..GenOptions::default()
        };
        assert!(generate("fleet", two).unwrap().count() >= 2);
        for name in ["session", "massage-gun", "session-4-s2"] {
            let accounts = GenOptions {
                accounts: Some(2),
                ..GenOptions::default()
            };
            let e = generate(name, accounts).err().unwrap();
            assert!(e.contains("--accounts"), "{name}: {e}");
        }
        let accounts = |sessions, accounts| GenOptions {
            sessions: Some(sessions),
            accounts: Some(accounts),
            ..GenOptions::default()
        };
        assert!(generate("fleet", accounts(3, 0)).is_err());
        let e = generate("fleet", accounts(3, 4)).err().unwrap();
        assert!(e.contains("3 sessions over 4 accounts"), "{e}");
        assert!(generate("fleet", accounts(3, 3)).unwrap().count() >= 3);
        let days = |days| GenOptions {
            sessions: Some(3),
            days: Some(days),
            ..GenOptions::default()
        };
        let e = generate("fleet", days(0)).err().unwrap();
        assert!(e.contains("at least 1 day"), "{e}");
        assert!(generate("fleet", days(1)).unwrap().count() >= 3);
    }

    #[test]
    fn session_defaults_match_the_bundled_file() {
        let b = BUNDLED[1];
        assert_eq!(
            b.file,
            format!("traces/session-{DEFAULT_SESSION_CALLS}-s{DEFAULT_SESSION_SEED}.json")
        );
        assert_eq!(b.generator, "session");
    }
}

#[cfg(test)]
mod streaming_writer {
    //! The trace crate's streaming writer, on generated traces big enough
    //! to be written in several chunks.
    use crate::{massage_gun, session};
    use tracecost_trace::{Trace, TraceWriter, to_json, traces_to_json};

    /// The writer flushes about every MiB (`CHUNK` in the trace crate).
    const CHUNK: usize = 1 << 20;

    fn streamed(traces: &[Trace]) -> Vec<u8> {
        let mut w = TraceWriter::new(Vec::new());
        for t in traces {
            w.push(t.clone()).unwrap();
        }
        assert_eq!(w.count(), traces.len());
        w.finish().unwrap()
    }

    #[test]
    fn the_streaming_writer_gives_the_bytes_of_traces_to_json() {
        // session(300, _) is several MB, so its members go out in chunks.
        let (a, b, c) = (massage_gun(), session(300, 1), session(12, 2));
        assert!(to_json(&b).len() > 2 * CHUNK);
        for list in [
            vec![a.clone()],
            vec![b.clone()],
            vec![a.clone(), b.clone()],
            vec![b, a, c],
        ] {
            assert_eq!(
                String::from_utf8(streamed(&list)).unwrap(),
                traces_to_json(&list)
            );
        }
    }

    #[test]
    fn the_streaming_writer_writes_nothing_for_no_trace() {
        assert!(streamed(&[]).is_empty());
    }
}

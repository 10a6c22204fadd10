//! The incremental replay core against the straightforward reference.
//!
//! A replay builds each call's request from the previous call's, rebuilding
//! only from the first block that changed ([`Build::Incremental`], the
//! default). [`Build::Reference`] builds every request from scratch. Both
//! must give the same results, to the last bit, on any trace: histories
//! that grow, shrink and restart, prompts and models that change between
//! calls, every compaction policy, every cache policy, one cache per trace
//! or one per account, and sweeps (where the reference also replays every
//! config on its own, instead of once per set of configs that send the same
//! requests).

use proptest::prelude::*;
use tracecost_cost::pricing::Pricing;
use tracecost_cost::tokens::{TokenMemo, parse_tokenizer};
use tracecost_gen::{massage_gun, session, session_parts};
use tracecost_policy::Config;
use tracecost_replay::sweep::sweep_shared;
use tracecost_replay::{
    Build, PreparedTrace, ReplayContext, ReplayOptions, ReplayResult, check_config, replay_group,
    replay_group_shared,
};
use tracecost_trace::{Trace, load_str};

const CACHES: [&str; 7] = [
    "none",
    "system:ttl=5m",
    "tail:ttl=5m",
    "native:manifest=cached,ttl=5m",
    "native:manifest=volatile,ttl=1h",
    "claude-code:ttl=5m",
    "recorded",
];

const COMPACTIONS: [&str; 13] = [
    "off",
    "ledger:t=0,k=0",
    "ledger:t=200,k=1",
    // Likely to compact what the one above does, and the one below what
    // t=1000000 does: sweeps replay such policies once.
    "ledger:t=250,k=1",
    "ledger:t=500000,k=3",
    "ledger:t=2000,k=2",
    "ledger:t=8000,k=5",
    "ledger:t=1000000,k=0",
    "clear-tool-uses:trigger=2000,keep=1",
    "clear-tool-uses:trigger=5000,keep=2,inputs=true",
    "langchain-clear:trigger=3000,keep=1",
    "agents-trim",
    "agents-trim:turns=1,max=200,preview=50",
];

fn opts(build: Build) -> ReplayOptions<'static> {
    ReplayOptions {
        build,
        ..ReplayOptions::default()
    }
}

/// The configs of one compaction that apply to `traces`.
fn group(traces: &[&Trace], compaction: &str) -> Vec<Config> {
    CACHES
        .iter()
        .map(|c| format!("{compaction}+{c}").parse::<Config>().unwrap())
        .filter(|c| traces.iter().all(|t| check_config(t, c).is_ok()))
        .collect()
}

fn prepare<'t>(t: &'t Trace, memo: &TokenMemo, pricing: &Pricing) -> PreparedTrace<'t> {
    PreparedTrace::new(t, memo, pricing.lookup(&t.model).unwrap(), true)
}

/// A peer's compaction with every parameter drawn: both peers keep their
/// clearing from call to call, and each parameter changes what it may
/// clear next.
fn peer_compaction() -> impl Strategy<Value = String> {
    (
        any::<bool>(),
        prop_oneof![Just(0u64), Just(1000), Just(5000), Just(30000)],
        0usize..4,
        prop_oneof![Just(0u64), Just(300), Just(5000), Just(60000)],
        0usize..4,
        any::<bool>(),
    )
        .prop_map(|(langchain, trigger, keep, at_least, exclude, inputs)| {
            let name = if langchain {
                "langchain-clear"
            } else {
                "clear-tool-uses"
            };
            let exclude = ["", "bash", "read_file", "bash|grep|read_file"][exclude];
            format!(
                "{name}:trigger={trigger},keep={keep},at-least={at_least},exclude={exclude},inputs={inputs}"
            )
        })
}

/// Every compaction's group replayed both ways, trace by trace.
fn assert_same_alone(trace: &Trace) -> Result<(), TestCaseError> {
    assert_same_alone_with(trace, &[])
}

/// The same, with `more` compactions.
fn assert_same_alone_with(trace: &Trace, more: &[String]) -> Result<(), TestCaseError> {
    let pricing = Pricing::builtin();
    let memo = TokenMemo::new(parse_tokenizer("chars:4").unwrap());
    let prepared = prepare(trace, &memo, &pricing);
    for compaction in COMPACTIONS
        .iter()
        .copied()
        .chain(more.iter().map(|s| s.as_str()))
    {
        let configs = group(&[trace], compaction);
        if configs.is_empty() {
            continue;
        }
        let a = replay_group(
            &prepared,
            &configs,
            ReplayContext {
                pricing: &pricing,
                memo: &memo,
                opts: opts(Build::Incremental),
            },
        );
        let b = replay_group(
            &prepared,
            &configs,
            ReplayContext {
                pricing: &pricing,
                memo: &memo,
                opts: opts(Build::Reference),
            },
        );
        match (a, b) {
            (Ok(a), Ok(b)) => same(&a, &b)?,
            (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
            (a, b) => prop_assert!(false, "{compaction}: {:?} vs {:?}", a.err(), b.err()),
        }
    }
    Ok(())
}

fn same(a: &[ReplayResult], b: &[ReplayResult]) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        // Whole results (every call's usage, cost, characters, stable
        // prefix and compacted ids), then the bytes a user sees.
        prop_assert_eq!(x, y, "{}", x.config);
        prop_assert_eq!(
            serde_json::to_string(x).unwrap(),
            serde_json::to_string(y).unwrap()
        );
    }
    Ok(())
}

/// Reshapes a generated session's calls: some histories shrink or restart,
/// some calls change prompt or model, some lose their start time.
fn reshape(mut t: Trace, edits: &[(u8, u8)]) -> Trace {
    let n = t.calls.len();
    if n == 0 {
        return t;
    }
    let mut prompt = t.prompts[0].clone();
    prompt
        .system
        .truncate(prompt.system.len().saturating_sub(1));
    t.prompts.push(prompt);
    for &(at, what) in edits {
        let i = at as usize % n;
        let call = &mut t.calls[i];
        match what % 6 {
            0 => call.messages = call.messages / 2 + 1,
            1 => call.messages = 1,
            2 => call.prompt = 1,
            3 => call.model = Some("claude-opus-4-5".into()),
            4 => call.start_ms = None,
            _ => {
                if let Some(s) = call.start_ms.as_mut() {
                    *s += 3_600_000;
                }
            }
        }
    }
    t
}

/// Two sessions of one account, the second starting `offset_s` seconds
/// after the first (so their calls interleave), and a copy of the first
/// starting 10 seconds after it (so it reads what the first wrote).
fn interleaved(calls: usize, seed: u64, offset_s: u64) -> Vec<Trace> {
    let mut a = session(calls, seed);
    let mut b = session(calls / 2 + 2, seed + 1);
    let mut c = a.clone();
    let start = a.calls.first().and_then(|c| c.start_ms).unwrap_or(0);
    for (t, name, shift) in [(&mut b, "b", offset_s * 1000), (&mut c, "c", 10_000)] {
        t.name = format!("{}-{name}", t.name);
        let first = t.calls.first().and_then(|c| c.start_ms).unwrap_or(0);
        for call in &mut t.calls {
            call.start_ms = call.start_ms.map(|s| s - first + start + shift);
        }
    }
    for t in [&mut a, &mut b, &mut c] {
        t.account = Some("team".into());
    }
    let mut out = vec![a, b, c];
    out.extend(session_parts(calls + 150, seed));
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Generated sessions, as generated and reshaped.
    #[test]
    fn incremental_equals_reference(
        calls in 2usize..40,
        seed in 0u64..1_000,
        edits in prop::collection::vec((any::<u8>(), any::<u8>()), 0..8),
        peers in prop::collection::vec(peer_compaction(), 2),
    ) {
        let trace = reshape(session(calls, seed), &edits);
        assert_same_alone_with(&trace, &peers)?;
    }

    /// One account's traces sharing a cache, and their sweep.
    #[test]
    fn shared_cache_and_sweeps_are_the_same(
        calls in 2usize..40,
        seed in 0u64..1_000,
        offset_s in 0u64..900,
    ) {
        let parts = interleaved(calls, seed, offset_s);
        let pricing = Pricing::builtin();
        let memo = TokenMemo::new(parse_tokenizer("chars:4").unwrap());
        let prepared: Vec<PreparedTrace<'_>> =
            parts.iter().map(|t| prepare(t, &memo, &pricing)).collect();
        let refs: Vec<&PreparedTrace<'_>> = prepared.iter().collect();
        let traces: Vec<&Trace> = parts.iter().collect();
        let mut all = Vec::new();
        for compaction in COMPACTIONS {
            let configs = group(&traces, compaction);
            if configs.is_empty() {
                continue;
            }
            let a = replay_group_shared(&refs, &configs, ReplayContext { pricing: &pricing, memo: &memo, opts: opts(Build::Incremental) })
                .unwrap();
            let b = replay_group_shared(&refs, &configs, ReplayContext { pricing: &pricing, memo: &memo, opts: opts(Build::Reference) })
                .unwrap();
            for (x, y) in a.iter().zip(&b) {
                same(x, y)?;
            }
            all.extend(configs);
        }
        let baselines: Vec<Config> = parts.iter().map(|t| Config::status_quo(t).unwrap()).collect();
        let sweep = |build| {
            sweep_shared(&refs, &all, &baselines, ReplayContext { pricing: &pricing, memo: &memo, opts: opts(build) }, None, &|| {})
                .unwrap()
        };
        let (a, b) = (sweep(Build::Incremental), sweep(Build::Reference));
        prop_assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&b).unwrap()
        );
    }
}

/// The bundled traces, under every compaction and cache policy.
#[test]
fn bundled_traces_replay_the_same() {
    for name in ["massage-gun.json", "session-200-s1.json"] {
        let path = crate::util::repo(&format!("traces/{name}"));
        let path = path.to_str().unwrap();
        let json = std::fs::read_to_string(path).unwrap();
        for t in load_str(&json, path).unwrap().traces {
            assert_same_alone(&t).unwrap();
        }
    }
    assert_same_alone(&massage_gun()).unwrap();
}

/// An account's sweep streamed (each trace read when the calls before its
/// first are replayed, handed back when every config has replayed it) is
/// the sweep of all its traces at once, trace by trace: sessions that
/// interleave, one that reads what another wrote, continuations, configs
/// that apply to some traces only, and traces listed out of time order.
#[test]
fn a_streamed_account_sweep_is_the_sweep_at_once() {
    for (calls, seed, offset_s, reversed) in
        [(12, 1, 30, false), (25, 7, 600, true), (6, 3, 0, true)]
    {
        let mut parts = interleaved(calls, seed, offset_s);
        if reversed {
            parts.reverse();
        }
        let grid: Vec<Config> = COMPACTIONS
            .iter()
            .flat_map(|p| {
                CACHES
                    .iter()
                    .map(move |c| format!("{p}+{c}").parse::<Config>().unwrap())
            })
            .collect();
        let batches = assert_streamed_is_at_once(
            &parts,
            &grid,
            &format!("case ({calls}, {seed}, {offset_s}, {reversed})"),
        );
        // Streamed, not all at the end: the first sessions end before the
        // continuations start.
        assert!(batches > 1, "one batch for {} traces", parts.len());
    }
}

/// The same of an account whose traces run on two models, each on its
/// model's caches: streamed, each trace meets the caches of its own
/// model, made for the same trace as at once.
#[test]
fn a_streamed_account_of_two_models_is_the_sweep_at_once() {
    let path = crate::util::repo("tests/fixtures/openai/two_models.json");
    let path = path.to_str().unwrap();
    let json = std::fs::read_to_string(path).unwrap();
    let two = load_str(&json, path).unwrap().traces;
    // Both sessions twice, the copies starting ten seconds later, and
    // listed out of time order.
    let mut parts = two.clone();
    for t in &two {
        let mut copy = t.clone();
        copy.name = format!("{}-again", t.name);
        for call in &mut copy.calls {
            call.start_ms = call.start_ms.map(|s| s + 10_000);
        }
        parts.push(copy);
    }
    parts.reverse();
    let grid: Vec<Config> = [
        "off+openai-auto",
        "off+openai-auto:misses=simulated",
        "off+openai-auto:retention=24h",
        "off+openai-auto:idle=5m",
        "ledger:t=200,k=1+openai-auto",
    ]
    .iter()
    .map(|c| c.parse().unwrap())
    .collect();
    assert_streamed_is_at_once(&parts, &grid, "two models");
}

/// Streams the sweep of `parts` (one account) under those of `grid` that
/// apply to some trace, and checks each trace's sweep is the one the
/// sweep of them all at once gives. Gives the batches handed back.
fn assert_streamed_is_at_once(parts: &[Trace], grid: &[Config], case: &str) -> usize {
    use tracecost_replay::stream::StreamSource;
    use tracecost_replay::sweep::{AccountSweep, Applicability, RequestShape, sweep_checked};
    let pricing = Pricing::builtin();
    let memo = TokenMemo::new(parse_tokenizer("chars:4").unwrap());
    let ctx = ReplayContext {
        pricing: &pricing,
        memo: &memo,
        opts: opts(Build::Incremental),
    };
    let traces: Vec<&Trace> = parts.iter().collect();
    let grid: Vec<Config> = grid
        .iter()
        .filter(|c| traces.iter().any(|t| check_config(t, c).is_ok()))
        .cloned()
        .collect();
    let baselines: Vec<Config> = parts
        .iter()
        .map(|t| Config::status_quo(t).unwrap())
        .collect();
    let applicability = Applicability::per_trace(&traces, &grid, &baselines, &pricing).unwrap();
    let prepared: Vec<PreparedTrace<'_>> =
        parts.iter().map(|t| prepare(t, &memo, &pricing)).collect();
    let refs: Vec<&PreparedTrace<'_>> = prepared.iter().collect();
    let at_once = sweep_checked(&refs, &applicability, ctx, None, &|| {}).unwrap();

    let shapes: Vec<RequestShape> = parts.iter().map(RequestShape::of).collect();
    let first_starts: Vec<u64> = parts
        .iter()
        .map(|t| t.calls.first().and_then(|c| c.start_ms).unwrap_or(0))
        .collect();
    let load = |t: usize| -> Result<Trace, tracecost_replay::ReplayError> { Ok(parts[t].clone()) };
    let prep: &(
         dyn for<'t> Fn(&'t Trace) -> Result<PreparedTrace<'t>, tracecost_replay::ReplayError>
             + Sync
     ) = &|t| Ok(prepare(t, &memo, &pricing));
    let mut streamed: Vec<Option<String>> = parts.iter().map(|_| None).collect();
    let mut batches = 0;
    let mut account = AccountSweep::new(&applicability, &shapes, ctx, None).unwrap();
    account
        .stream(
            &StreamSource {
                first_starts: &first_starts,
                load: &load,
                prepare: prep,
                progress: &|| {},
                read_ahead: 1,
            },
            &mut |done| {
                batches += 1;
                for (t, trace, sweep) in done {
                    assert_eq!(trace, parts[t], "the trace handed back is the one read");
                    assert!(streamed[t].is_none(), "trace {t} handed back twice");
                    streamed[t] = Some(serde_json::to_string(&sweep).unwrap());
                }
                Ok(())
            },
        )
        .unwrap();
    for (t, sweep) in at_once.iter().enumerate() {
        assert_eq!(
            streamed[t].as_deref(),
            Some(serde_json::to_string(sweep).unwrap().as_str()),
            "trace {t} of {case}"
        );
    }
    batches
}

//! The bundled reference traces: generators, published figures, and the
//! committed files under `traces/`.
//!
//! `TRACECOST_BLESS=1 cargo test -p tracecost-gen --test gen traces::` rewrites the
//! committed files from the generators; without it the files must match
//! byte for byte.

use std::collections::BTreeSet;

use proptest::prelude::*;
use tracecost_cost::tokens::{Encoding, TiktokenCounter, Tokenizer};
use tracecost_engine::message::{BlockKind, Content, Role, ToolResultContent};
use tracecost_gen::{
    BUNDLED, MASSAGE_GUN_CALL_CHARS, MASSAGE_GUN_INPUT_TOKENS, MASSAGE_GUN_PREFIX_CHARS, by_name,
    massage_gun, messages_chars, prefix_chars, session, session_parts,
};
use tracecost_trace::{Trace, load_str, to_json, traces_to_json};

/// The context window of every model the session generator uses.
const WINDOW_TOKENS: usize = 200_000;

/// The generator's own estimate: characters of compact JSON per token.
const CHARS_PER_TOKEN_ESTIMATE: usize = 3;

/// Writes the traces as one file, loads it back, and checks there were no
/// warnings and nothing changed on the way.
fn round_trip_all(ts: &[Trace]) -> String {
    let json = traces_to_json(ts);
    let loaded = load_str(&json, "parts.json").expect("generated traces load");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.traces, ts, "load(traces_to_json(ts)) == ts");
    json
}

/// Characters each call sends: system prompt, tools and messages.
fn sent_chars(t: &Trace) -> Vec<usize> {
    let prefix = prefix_chars(&t.prompts[0]);
    call_chars(t).into_iter().map(|c| prefix + c).collect()
}

/// `actual` is within `pct` percent of `target`.
fn within(actual: usize, target: usize, pct: f64) -> bool {
    (actual as f64 - target as f64).abs() <= target as f64 * pct / 100.0
}

/// Writes the trace, loads it back, and checks there were no warnings and
/// nothing changed on the way.
fn round_trip(t: &Trace) -> String {
    let json = to_json(t);
    let loaded = load_str(&json, &format!("{}.json", t.name)).expect("generated trace loads");
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.traces.len(), 1);
    assert_eq!(&loaded.traces[0], t, "load(to_json(t)) == t");
    json
}

fn call_chars(t: &Trace) -> Vec<usize> {
    t.calls
        .iter()
        .map(|c| messages_chars(t.history_of(c)))
        .collect()
}

/// Every tool_result payload of the trace, with its length in chars.
fn tool_results(t: &Trace) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for m in &t.messages {
        for b in m.blocks() {
            if let BlockKind::ToolResult {
                content: ToolResultContent::Text(s),
                payload_chars,
                ..
            } = b.kind()
            {
                out.push((s.to_string(), *payload_chars as usize));
            }
        }
    }
    out
}

#[test]
fn massage_gun_reproduces_the_published_figures() {
    let t = massage_gun();
    round_trip(&t);
    assert_eq!(t.name, "massage-gun");
    assert_eq!(t.model, "claude-opus-4-1-20250805");
    let counts: Vec<usize> = t.calls.iter().map(|c| c.messages).collect();
    assert_eq!(counts, [1, 3, 5, 7, 9, 11]);
    assert_eq!(
        t.messages.len(),
        12,
        "the final answer is recorded but not sent"
    );
    assert_eq!(t.messages[11].role(), Role::Assistant);

    let chars = call_chars(&t);
    println!("massage-gun characters of messages per call: {chars:?}");
    assert!(within(chars[1], 10_600, 1.0), "call-02 sends {}", chars[1]);
    assert!(within(chars[2], 374_000, 1.0), "call-03 sends {}", chars[2]);
    for (k, target) in MASSAGE_GUN_CALL_CHARS.iter().enumerate() {
        assert!(
            within(chars[k + 1], *target, 0.3),
            "call-0{} sends {}",
            k + 2,
            chars[k + 1]
        );
    }

    // Call 03 adds exactly one ~360 KB tool result.
    let added = &t.messages[3..5];
    let results: Vec<usize> = added
        .iter()
        .flat_map(|m| m.blocks())
        .filter_map(|b| match b.kind() {
            BlockKind::ToolResult { payload_chars, .. } => Some(*payload_chars as usize),
            _ => None,
        })
        .collect();
    // "About 360 KB": the block as sent (JSON-escaped) within 1%, the raw
    // payload (fewer chars: no escaping) within 3%.
    let block = t.messages[4].blocks()[0].to_json().chars().count();
    println!("call-03 tool result: payload {results:?} chars, block as sent {block} chars");
    assert_eq!(results.len(), 1);
    assert!(within(block, 360_000, 1.0), "{block}");
    assert!(within(results[0], 360_000, 3.0), "{}", results[0]);
    let payload = t.messages[4].blocks()[0].tool_result_payload().unwrap();
    let v: serde_json::Value = serde_json::from_str(payload).expect("Keepa payload is JSON");
    let product = &v["products"][0];
    for key in [
        "asin",
        "title",
        "brand",
        "csv",
        "stats",
        "salesRanks",
        "offers",
        "categoryTree",
    ] {
        assert!(!product[key].is_null(), "Keepa product has {key}");
    }
    for key in ["current", "avg30", "avg90", "min", "max"] {
        assert!(product["stats"][key].is_array(), "stats has {key}");
    }

    // Call 04 adds ~50K characters of sales estimates.
    let sales: usize = t.messages[6]
        .blocks()
        .iter()
        .map(|b| b.tool_result_payload().map_or(0, |p| p.chars().count()))
        .sum();
    println!("call-04 sales estimates: {sales} chars");
    assert!((40_000..=60_000).contains(&sales), "{sales}");
    let first = t.messages[6].blocks()[0].tool_result_payload().unwrap();
    let v: serde_json::Value = serde_json::from_str(first).unwrap();
    assert_eq!(v["data"][0]["type"], "sales_estimate_result");
    assert!(v["data"][0]["attributes"]["estimated_units_sold"].is_i64());

    // Recorded usage: the published input figures, uncached, no cache fields.
    let input: Vec<Option<u64>> = t
        .calls
        .iter()
        .map(|c| c.recorded_usage().and_then(|u| u.input_tokens))
        .collect();
    assert_eq!(input[0], None);
    assert_eq!(&input[1..], MASSAGE_GUN_INPUT_TOKENS.map(Some));
    for c in &t.calls {
        let u = c.recorded_usage().unwrap();
        assert!(u.output_tokens.unwrap() > 0);
        assert!(u.cache_creation_input_tokens.is_none() && u.cache_read_input_tokens.is_none());
    }
    assert!(t.has_timestamps());
    let starts: Vec<u64> = t.calls.iter().map(|c| c.start_ms.unwrap()).collect();
    assert_eq!(starts[0], 1_749_736_980_000, "2025-06-12T14:03:00Z");
    assert!(
        starts
            .windows(2)
            .all(|w| (2_000..=180_000).contains(&(w[1] - w[0])))
    );

    // System prompt plus tool manifest: ~80K characters, 12-16 tools.
    let prefix = prefix_chars(&t.prompts[0]);
    println!(
        "massage-gun prefix: {prefix} chars, {} tools",
        t.prompts[0].tools.len()
    );
    assert!(within(prefix, MASSAGE_GUN_PREFIX_CHARS, 1.0), "{prefix}");
    assert!((12..=16).contains(&t.prompts[0].tools.len()));
    assert!(t.description.contains("$15") && t.description.contains("rounded"));
}

#[test]
fn session_has_the_requested_shape() {
    let parts = session_parts(200, 1);
    round_trip_all(&parts);
    assert_eq!(parts[0].name, "session-200-s1");
    let total: usize = parts.iter().map(|p| p.calls.len()).sum();
    assert_eq!(total, 200, "compaction calls count as calls");
    assert!(
        parts.len() >= 3,
        "a 200-call session compacts: {}",
        parts.len()
    );
    for (i, t) in parts.iter().enumerate() {
        if i > 0 {
            assert_eq!(t.name, format!("session-200-s1-part{}", i + 1));
            let Content::Text(first) = t.messages[0].content() else {
                panic!("part {} starts with a text message", i + 1)
            };
            assert!(
                first.starts_with("This session is being continued"),
                "{first}"
            );
            assert_eq!(t.prompts, parts[0].prompts, "every part sends one prompt");
        }
        assert_eq!(t.model, "claude-sonnet-4-5-20250929");
        assert!(
            t.description
                .contains(&format!("Part {} of {}", i + 1, parts.len()))
        );
        // Each call sends the whole history up to its latest user message.
        for (k, c) in t.calls.iter().enumerate() {
            assert_eq!(t.messages[c.messages - 1].role(), Role::User, "call {k}");
            if let Some(next) = t.calls.get(k + 1) {
                // The compaction call adds its request after the results.
                let compaction = i + 1 < parts.len() && k + 2 == t.calls.len();
                assert_eq!(
                    next.messages,
                    c.messages + if compaction { 3 } else { 2 },
                    "call {k}: reply + one user message"
                );
            }
            let u = c.recorded_usage().unwrap();
            assert!(u.input_tokens.is_none() && u.output_tokens.unwrap() > 0);
        }
        let last = t.calls.last().unwrap();
        assert_eq!(
            t.messages.len(),
            last.messages + 1,
            "the last reply ends the history"
        );
        if i + 1 < parts.len() {
            // The compaction call: the history plus a request to summarize.
            let Content::Text(ask) = t.messages[last.messages - 1].content() else {
                panic!("the compaction request is text")
            };
            assert!(ask.starts_with("Your task is to create a detailed summary"));
            let summary = t.messages.last().unwrap().to_json();
            assert!(summary.contains("<summary>") && summary.contains("</summary>"));
        }
    }
    // Content over the whole session, every part.
    let all: Vec<&tracecost_engine::message::Message> =
        parts.iter().flat_map(|t| &t.messages).collect();

    // Gaps: mostly short, some over 5 minutes.
    let starts: Vec<u64> = parts
        .iter()
        .flat_map(|t| &t.calls)
        .map(|c| c.start_ms.unwrap())
        .collect();
    let gaps: Vec<u64> = starts.windows(2).map(|w| w[1] - w[0]).collect();
    assert!(gaps.iter().all(|&g| g >= 1_000));
    let long = gaps.iter().filter(|&&g| g > 5 * 60_000).count();
    let short = gaps.iter().filter(|&&g| g <= 40_000).count();
    println!(
        "session gaps: {short} <= 40 s, {long} > 5 min, max {} s",
        gaps.iter().max().unwrap() / 1000
    );
    assert!((1..=20).contains(&long), "{long}");
    assert!(
        short * 10 >= gaps.len() * 6,
        "mostly short: {short}/{}",
        gaps.len()
    );

    // Parallel tool calls, follow-up user text, assistant text replies.
    let parallel = all
        .iter()
        .filter(|m| {
            m.role() == Role::Assistant
                && m.blocks()
                    .iter()
                    .filter(|b| matches!(b.kind(), BlockKind::ToolUse { .. }))
                    .count()
                    >= 2
        })
        .count();
    let follow_ups = all
        .iter()
        .skip(1)
        .filter(|m| matches!(m.content(), Content::Text(_)))
        .count();
    let replies = all
        .iter()
        .filter(|m| {
            m.role() == Role::Assistant
                && m.blocks()
                    .iter()
                    .all(|b| matches!(b.kind(), BlockKind::Text { .. }))
        })
        .count();
    println!("session: {parallel} parallel turns, {follow_ups} follow-ups, {replies} text replies");
    assert!(parallel >= 3 && follow_ups >= 3 && replies >= 3);

    // Tool results: JSON and text, small and large.
    let results: Vec<(String, usize)> = parts.iter().flat_map(tool_results).collect();
    let json = results
        .iter()
        .filter(|(s, _)| {
            serde_json::from_str::<serde_json::Value>(s)
                .is_ok_and(|v| v.is_object() || v.is_array())
        })
        .count();
    let sizes: Vec<usize> = results.iter().map(|(_, n)| *n).collect();
    let small = sizes.iter().filter(|&&n| n < 1_000).count();
    let large = sizes.iter().filter(|&&n| n > 30_000).count();
    let max = sizes.iter().max().copied().unwrap_or(0);
    println!(
        "session: {} results, {json} JSON, {small} < 1K, {large} > 30K, max {max}",
        results.len()
    );
    assert!(json >= 5 && results.len() - json >= 50);
    assert!(small >= 10 && large >= 3 && max <= 110_000);
    let tools: BTreeSet<String> = all
        .iter()
        .flat_map(|m| m.blocks())
        .filter_map(|b| match b.kind() {
            BlockKind::ToolUse { name, .. } => Some(name.to_string()),
            _ => None,
        })
        .collect();
    println!("session tools used: {tools:?}");
    assert!(tools.len() >= 6);
}

#[test]
fn generators_are_deterministic_and_seeds_differ() {
    assert_eq!(to_json(&massage_gun()), to_json(&massage_gun()));
    let a = to_json(&session(60, 7));
    assert_eq!(a, to_json(&session(60, 7)));
    let parts = traces_to_json(&session_parts(120, 7));
    assert_eq!(parts, traces_to_json(&session_parts(120, 7)));
    let b = to_json(&session(60, 8));
    assert_ne!(a, b);
    let c = to_json(&session(60, 10));
    assert_ne!(a, c, "same project, different seed");
}

#[test]
fn small_sessions_are_valid() {
    for calls in [1, 2, 3, 17] {
        for seed in [0, 1, 2, u64::MAX] {
            let t = session(calls, seed);
            round_trip(&t);
            assert_eq!(t.calls.len(), calls);
            assert_eq!(t.name, format!("session-{calls}-s{seed}"));
        }
    }
    assert_eq!(session(0, 1).calls.len(), 1);
}

#[test]
fn by_name_runs_every_bundled_generator() {
    assert_eq!(by_name("massage-gun", None, None).unwrap(), [massage_gun()]);
    assert_eq!(
        by_name("session", Some(5), Some(3)).unwrap(),
        session_parts(5, 3)
    );
    assert_eq!(
        by_name("session", None, None).unwrap()[0].name,
        "session-200-s1"
    );
    assert!(by_name("sesion", None, None).is_err());
}

/// The committed `traces/*.json` equal the generators' output byte for
/// byte; `TRACECOST_BLESS=1` rewrites them instead.
#[test]
fn bundled_trace_files_match_the_generators() {
    let bless = std::env::var("TRACECOST_BLESS").is_ok_and(|v| v == "1");
    for b in BUNDLED {
        let json = traces_to_json(&b.generate().unwrap());
        assert!(json.len() < 5_000_000, "{} is {} bytes", b.file, json.len());
        let path = crate::util::repo(b.file);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            let tmp = path.with_extension("json.tmp");
            std::fs::write(&tmp, &json).unwrap();
            std::fs::rename(&tmp, &path).unwrap();
            println!("wrote {} ({} bytes)", b.file, json.len());
        } else {
            let committed = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}; regenerate with `{}`", b.file, b.regenerate));
            assert!(
                committed == json,
                "{} differs from its generator; regenerate with `{}`",
                b.file,
                b.regenerate
            );
            let loaded = load_str(&committed, b.file).unwrap();
            assert!(loaded.warnings.is_empty());
        }
    }
    let session_file = BUNDLED.iter().find(|b| b.generator == "session").unwrap();
    let size = traces_to_json(&session_file.generate().unwrap()).len();
    assert!(
        (1_000_000..=3_500_000).contains(&size),
        "session file is {size} bytes"
    );
}

#[test]
fn other_seeds_have_the_same_shape() {
    for seed in [2, 3, 4, 5, 99] {
        let t = session(200, seed);
        let bytes = round_trip(&t).len();
        let starts: Vec<u64> = t.calls.iter().map(|c| c.start_ms.unwrap()).collect();
        let long = starts
            .windows(2)
            .filter(|w| w[1] - w[0] > 5 * 60_000)
            .count();
        let parallel = t
            .messages
            .iter()
            .filter(|m| {
                m.blocks()
                    .iter()
                    .filter(|b| matches!(b.kind(), BlockKind::ToolUse { .. }))
                    .count()
                    >= 2
            })
            .count();
        let results = tool_results(&t);
        let json = results
            .iter()
            .filter(|(s, _)| s.starts_with(['{', '[']))
            .count();
        let max = results.iter().map(|(_, n)| *n).max().unwrap_or(0);
        println!(
            "seed {seed}: {bytes} bytes, {long} gaps > 5 min, {parallel} parallel turns, {json}/{} JSON results, max {max}",
            results.len()
        );
        assert!(long >= 1 && parallel >= 1 && json >= 1, "seed {seed}");
        assert!(
            (800_000..=3_500_000).contains(&bytes),
            "seed {seed}: {bytes} bytes"
        );
        assert!(max <= 100_000);
    }
}

/// A short session needs no compaction: one part, and the same history as
/// the agent that never compacts.
#[test]
fn short_sessions_do_not_compact() {
    for (calls, seed) in [(1, 0), (8, 3), (20, 1)] {
        let parts = session_parts(calls, seed);
        assert_eq!(parts.len(), 1, "session({calls}, {seed})");
        let unbounded = session(calls, seed);
        assert_eq!(parts[0].messages, unbounded.messages);
        assert_eq!(parts[0].calls, unbounded.calls);
        assert!(parts[0].description.contains("without compacting"));
    }
}

/// The bundled 200-call session, counted with `o200k_base` on the compact
/// JSON of everything a call sends (keys and quotes included, so more than
/// the content's tokens): no call reaches the 200K window, and the
/// generator's estimate of 3 characters per token is an overestimate of
/// this count, which is what keeps the agent inside its window.
#[test]
fn no_bundled_session_call_exceeds_the_window() {
    let counter = TiktokenCounter::new(Encoding::O200kBase);
    let mut worst = (0usize, 0usize);
    for t in session_parts(200, 1) {
        let prefix: usize = t.prompts[0]
            .system
            .iter()
            .map(|b| b.to_json())
            .chain(t.prompts[0].tools.iter().map(|d| d.to_json()))
            .map(|s| counter.count(&s) as usize)
            .sum();
        let per_message: Vec<usize> = t
            .messages
            .iter()
            .map(|m| counter.count(&m.to_json()) as usize)
            .collect();
        for (c, chars) in t.calls.iter().zip(sent_chars(&t)) {
            let tokens = prefix + per_message[..c.messages].iter().sum::<usize>();
            assert!(
                tokens < WINDOW_TOKENS,
                "{}: a call sends {tokens} tokens",
                t.name
            );
            assert!(
                chars / CHARS_PER_TOKEN_ESTIMATE >= tokens,
                "{}: the estimate {} is below the count {tokens}",
                t.name,
                chars / CHARS_PER_TOKEN_ESTIMATE
            );
            worst = worst.max((tokens, chars));
        }
    }
    println!("largest call: {} o200k tokens, {} chars", worst.0, worst.1);
    assert!(
        worst.0 > WINDOW_TOKENS / 2,
        "the session does fill its window"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Whatever the seed and length, no call sends more than 95% of the
    /// window by the generator's own (over-)estimate, and the parts hold
    /// exactly the calls asked for.
    #[test]
    fn no_generated_call_exceeds_its_window(calls in 1usize..320, seed in any::<u64>()) {
        let parts = session_parts(calls, seed);
        let total: usize = parts.iter().map(|p| p.calls.len()).sum();
        prop_assert_eq!(total, calls);
        for t in &parts {
            for chars in sent_chars(t) {
                let estimate = chars.div_ceil(CHARS_PER_TOKEN_ESTIMATE);
                prop_assert!(
                    estimate <= WINDOW_TOKENS * 95 / 100,
                    "{}: {} estimated tokens", t.name, estimate
                );
            }
        }
    }
}

/// A seed that once sent its compaction request above the hard limit: the
/// step before it had left no room for the request.
#[test]
fn the_compaction_request_fits_the_window() {
    for t in session_parts(259, 1316419208177651381) {
        for chars in sent_chars(&t) {
            let estimate = chars.div_ceil(CHARS_PER_TOKEN_ESTIMATE);
            assert!(
                estimate <= WINDOW_TOKENS * 95 / 100,
                "{}: {estimate}",
                t.name
            );
        }
    }
}

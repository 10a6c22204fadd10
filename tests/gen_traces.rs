//! The bundled reference traces: generators, published figures, and the
//! committed files under `traces/`.
//!
//! `TRACECOST_BLESS=1 cargo test --test gen_traces` rewrites the committed
//! files from the generators; without it the files must match byte for byte.

use std::collections::BTreeSet;
use std::path::PathBuf;

use tracecost::engine::message::{BlockKind, Content, Role, ToolResultContent};
use tracecost::trace::generate::{
    BUNDLED, MASSAGE_GUN_CALL_CHARS, MASSAGE_GUN_INPUT_TOKENS, MASSAGE_GUN_PREFIX_CHARS, by_name,
    massage_gun, messages_chars, prefix_chars, session,
};
use tracecost::trace::{Trace, load_str, to_json};

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
        .map(|c| c.usage.and_then(|u| u.input_tokens))
        .collect();
    assert_eq!(input[0], None);
    assert_eq!(&input[1..], MASSAGE_GUN_INPUT_TOKENS.map(Some));
    for c in &t.calls {
        let u = c.usage.unwrap();
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
    let t = session(200, 1);
    round_trip(&t);
    assert_eq!(t.name, "session-200-s1");
    assert_eq!(t.model, "claude-sonnet-4-5-20250929");
    assert_eq!(t.calls.len(), 200);
    assert!(t.prompts[0].tools.len() >= 6);

    // Each call sends the whole history up to its latest user message.
    for (k, c) in t.calls.iter().enumerate() {
        assert_eq!(t.messages[c.messages - 1].role(), Role::User, "call {k}");
        if let Some(next) = t.calls.get(k + 1) {
            assert_eq!(
                next.messages,
                c.messages + 2,
                "call {k}: reply + one user message"
            );
        }
        let u = c.usage.unwrap();
        assert!(u.input_tokens.is_none() && u.output_tokens.unwrap() > 0);
    }
    assert_eq!(
        t.messages.len(),
        t.calls[199].messages + 1,
        "the last reply ends the history"
    );

    // Gaps: mostly short, some over 5 minutes.
    let starts: Vec<u64> = t.calls.iter().map(|c| c.start_ms.unwrap()).collect();
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
    let parallel = t
        .messages
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
    let follow_ups = t
        .messages
        .iter()
        .skip(1)
        .filter(|m| matches!(m.content(), Content::Text(_)))
        .count();
    let replies = t
        .messages
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
    let results = tool_results(&t);
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
    let tools: BTreeSet<String> = t
        .messages
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
    assert_eq!(by_name("massage-gun", None, None).unwrap(), massage_gun());
    assert_eq!(by_name("session", Some(5), Some(3)).unwrap(), session(5, 3));
    assert_eq!(
        by_name("session", None, None).unwrap().name,
        "session-200-s1"
    );
    assert!(by_name("sesion", None, None).is_err());
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The committed `traces/*.json` equal the generators' output byte for
/// byte; `TRACECOST_BLESS=1` rewrites them instead.
#[test]
fn bundled_trace_files_match_the_generators() {
    let bless = std::env::var("TRACECOST_BLESS").is_ok_and(|v| v == "1");
    for b in BUNDLED {
        let t = b.generate().unwrap();
        let json = to_json(&t);
        assert!(json.len() < 5_000_000, "{} is {} bytes", b.file, json.len());
        let path = root().join(b.file);
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
    let size = to_json(&session_file.generate().unwrap()).len();
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

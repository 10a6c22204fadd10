//! What an OpenAI trace's record tells the replay beyond token counts: the
//! reasoning the API drops from earlier turns (models before GPT-5.6), and
//! reads the record shows falling back to an older prefix than the cache
//! held; and what it cannot show: a record with no cache-write count is
//! compared with the simulation's writes priced as input. Traces written
//! for these tests, in the canonical format, their
//! usage made up to follow the rule each test names.

use std::sync::Arc;

use tracecost_cost::pricing::Pricing;
use tracecost_cost::tokens::{CharsPerToken, TokenMemo};
use tracecost_policy::Config;
use tracecost_replay::{HeldPrefix, PreparedTrace, ReplayContext, ReplayOptions, replay};
use tracecost_trace::{Trace, load_str};

fn trace(json: serde_json::Value) -> Trace {
    load_str(&json.to_string(), "test")
        .unwrap()
        .traces
        .remove(0)
}

/// A text of about `tokens` tokens at 4 characters a token.
fn text(word: &str, tokens: usize) -> String {
    format!("{word} ").repeat(tokens * 4 / (word.len() + 1))
}

/// Each call's simulated (prompt, read) under `config`.
fn replayed(t: &Trace, config: &str) -> Vec<(u64, u64)> {
    let pricing = Pricing::builtin();
    let memo = TokenMemo::new(Arc::new(CharsPerToken(4.0)));
    let price = pricing.lookup(&t.model).unwrap();
    let prepared = PreparedTrace::new(t, &memo, price, true);
    let ctx = ReplayContext {
        pricing: &pricing,
        memo: &memo,
        opts: ReplayOptions {
            batch: false,
            progress: None,
            ..Default::default()
        },
    };
    let config: Config = config.parse().unwrap();
    replay(&prepared, &config, ctx)
        .unwrap()
        .calls
        .iter()
        .map(|c| {
            let u = &c.usage;
            (
                u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens,
                u.cache_read_input_tokens,
            )
        })
        .collect()
}

/// Two turns of an agent on `model`: the first's response reasons and
/// calls a tool, the next reasons and answers; `second` opens the next
/// turn (or joins the first, as `extra` members say). The usage follows a
/// model that drops earlier turns' reasoning: the third prompt is the
/// second's, plus its response and the new message, less the 110 tokens
/// of the first turn's reasoning.
fn two_turns(model: &str, extra: serde_json::Value) -> Trace {
    let mut second = serde_json::json!({"role": "user", "content": text("next", 20)});
    if let (Some(m), Some(e)) = (second.as_object_mut(), extra.as_object()) {
        m.extend(e.clone());
    }
    trace(serde_json::json!({
        "format": "tracecost.trace/v1",
        "name": "turns",
        "provider": "openai",
        "model": model,
        "system": [{"type": "text", "text": text("rules", 1500)}],
        "messages": [
            {"role": "user", "content": text("task", 500)},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "", "signature": "enc-1"},
                {"type": "tool_use", "id": "c1", "name": "read", "input": {"path": "a"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": text("line", 500)}
            ]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "", "signature": "enc-2"},
                {"type": "text", "text": text("done", 30)}
            ]},
            second,
            {"role": "assistant", "content": "ok"}
        ],
        "calls": [
            {"messages": 1, "start_ms": 0,
             "usage": {"input_tokens": 2000, "cache_read_input_tokens": 0,
                       "output_tokens": 100, "reasoning_tokens": 60}},
            {"messages": 3, "start_ms": 10000,
             "usage": {"input_tokens": 1216, "cache_read_input_tokens": 1408,
                       "output_tokens": 80, "reasoning_tokens": 50}},
            {"messages": 5, "start_ms": 20000,
             "usage": {"input_tokens": 1150, "cache_read_input_tokens": 1536,
                       "output_tokens": 5, "reasoning_tokens": 0}}
        ]
    }))
}

#[test]
fn a_new_turn_drops_the_reasoning_before_it_on_models_before_gpt_5_6() {
    let t = two_turns("gpt-5.5", serde_json::json!({}));
    let calls = replayed(&t, "off+openai-auto");
    // The status quo sends the recorded prompt: 2,000, 2,624, and
    // 2,624 + 80 + 20 + 3 − 110 = 2,686 once the reasoning is dropped.
    let prompts: Vec<u64> = calls.iter().map(|c| c.0).collect();
    assert_eq!(prompts, [2000, 2624, 2686]);
    // The prompt changed at the first dropped reasoning: the third call
    // reads no further than the first request.
    assert!(calls[2].1 <= 2000, "{calls:?}");
    assert!(calls[1].1 > 2000 - 512, "{calls:?}");
}

#[test]
fn reasoning_is_kept_where_no_turn_starts() {
    // GPT-5.6 keeps earlier turns' reasoning (Codex asks all_turns); on an
    // earlier model, a developer message or input joining the running turn
    // drops nothing.
    for (model, extra) in [
        ("gpt-5.6-sol", serde_json::json!({})),
        ("gpt-5.5", serde_json::json!({"within_turn": true})),
        ("gpt-5.5", serde_json::json!({"source_role": "developer"})),
    ] {
        let t = two_turns(model, extra.clone());
        let pricing = Pricing::builtin();
        let memo = TokenMemo::new(Arc::new(CharsPerToken(4.0)));
        let prepared = PreparedTrace::new(&t, &memo, pricing.lookup(model).unwrap(), true);
        assert_eq!(prepared.reasoning_cut, [0, 0, 0], "{model} {extra}");
    }
    let t = two_turns("gpt-5.5", serde_json::json!({}));
    let pricing = Pricing::builtin();
    let memo = TokenMemo::new(Arc::new(CharsPerToken(4.0)));
    let prepared = PreparedTrace::new(&t, &memo, pricing.lookup("gpt-5.5").unwrap(), true);
    assert_eq!(prepared.reasoning_cut, [0, 0, 4]);
}

/// Four calls of a growing conversation on gpt-5.5 (reads in blocks of
/// 512 from 1,024, 384 modulo 512): each reads the previous prompt but the
/// last, whose read covers only the second call's prompt.
fn fallback() -> Trace {
    let msgs: Vec<serde_json::Value> = (0..7)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            serde_json::json!({"role": role, "content": text(&format!("w{i}"), 1000)})
        })
        .collect();
    let usage = |total: u64, read: u64| {
        serde_json::json!({"input_tokens": total - read, "cache_read_input_tokens": read,
                           "output_tokens": 10})
    };
    trace(serde_json::json!({
        "format": "tracecost.trace/v1",
        "name": "fallback",
        "provider": "openai",
        "model": "gpt-5.5",
        "system": [{"type": "text", "text": text("rules", 1000)}],
        "messages": msgs,
        "calls": [
            {"messages": 1, "start_ms": 0, "usage": usage(4000, 0)},
            {"messages": 3, "start_ms": 10000, "usage": usage(6000, 3968)},
            {"messages": 5, "start_ms": 20000, "usage": usage(8000, 5504)},
            {"messages": 7, "start_ms": 30000, "usage": usage(10000, 5504)}
        ]
    }))
}

#[test]
fn a_read_that_fell_back_is_the_older_prefix_under_every_compaction() {
    let t = fallback();
    let five_minutes = 300_000;
    assert_eq!(
        tracecost_replay::recorded_fallbacks(&t, five_minutes),
        [None, None, None, Some(HeldPrefix::Messages(3))]
    );
    // An older prompt held and a newer one not is an event at any pause.
    assert_eq!(
        tracecost_replay::recorded_fallbacks(&t, 1_000),
        [None, None, None, Some(HeldPrefix::Messages(3))]
    );
    // Losing the whole conversation is one only within the documented
    // hold: past it, the retention's.
    let mut gone = t.clone();
    gone.calls[3]
        .usage
        .as_mut()
        .unwrap()
        .cache_read_input_tokens = Some(0);
    assert_eq!(
        tracecost_replay::recorded_fallbacks(&gone, five_minutes)[3],
        Some(HeldPrefix::Tokens(640))
    );
    assert_eq!(tracecost_replay::recorded_fallbacks(&gone, 10_000)[3], None);
    let recorded = replayed(&t, "off+openai-auto");
    let simulated = replayed(&t, "off+openai-auto:misses=simulated");
    // The simulator alone reads the previous prompt; the record says the
    // cache held only the second call's.
    assert!(simulated[3].1 > 7000, "{simulated:?}");
    assert!(recorded[3].1 <= 6000, "{recorded:?}");
    assert!(recorded[3].1 > 5000, "{recorded:?}");
    assert_eq!(recorded[..3], simulated[..3]);
    // The same event under another compaction policy (whose requests
    // carry the recall tool): the cache holds what its second call sent.
    let ledger = replayed(&t, "ledger:t=100000,k=1+openai-auto");
    let ledger_simulated = replayed(&t, "ledger:t=100000,k=1+openai-auto:misses=simulated");
    assert!(ledger[3].1 <= ledger[1].0, "{ledger:?}");
    assert!(
        ledger_simulated[3].1 > ledger[2].0 - 512,
        "{ledger_simulated:?}"
    );
}

#[test]
fn the_misses_option_prints_as_it_parses() {
    for s in [
        "off+openai-auto",
        "off+openai-auto:misses=simulated",
        "off+openai-auto:retention=in-memory,idle=10m,misses=simulated",
    ] {
        let c: Config = s.parse().unwrap();
        assert_eq!(c.to_string(), s);
    }
    assert!("off+openai-auto:misses=maybe".parse::<Config>().is_err());
}

/// One call on gpt-5.6-sol (a model with a cache-write fee) whose record
/// counts 3,000 input tokens, none read, and writes as `writes` says: a
/// number, or no field at all as in Codex's `token_count`.
fn one_write(writes: Option<u64>) -> Trace {
    let mut usage = serde_json::json!({"input_tokens": 3000, "cache_read_input_tokens": 0,
                                       "output_tokens": 10});
    if let Some(w) = writes {
        usage["cache_creation_input_tokens"] = w.into();
    }
    trace(serde_json::json!({
        "format": "tracecost.trace/v1",
        "name": "write",
        "provider": "openai",
        "model": "gpt-5.6-sol",
        "system": [{"type": "text", "text": text("rules", 2000)}],
        "messages": [{"role": "user", "content": text("task", 1000)}],
        "calls": [{"messages": 1, "start_ms": 0, "usage": usage}]
    }))
}

fn replayed_result(t: &Trace) -> tracecost_replay::ReplayResult {
    let pricing = Pricing::builtin();
    let memo = TokenMemo::new(Arc::new(CharsPerToken(4.0)));
    let prepared = PreparedTrace::new(t, &memo, pricing.lookup(&t.model).unwrap(), true);
    let ctx = ReplayContext {
        pricing: &pricing,
        memo: &memo,
        opts: ReplayOptions {
            batch: false,
            progress: None,
            ..Default::default()
        },
    };
    replay(&prepared, &"off+openai-auto".parse().unwrap(), ctx).unwrap()
}

#[test]
fn a_write_the_record_cannot_show_is_compared_as_input() {
    // The simulation writes the prompt it sends, as the record's 3,000
    // tokens: its bill carries the write fee the record cannot show.
    let r = replayed_result(&one_write(None));
    let call = r.calls.first().unwrap();
    assert_eq!(call.usage.total_input(), 3000, "{call:?}");
    assert!(call.usage.cache_creation_input_tokens > 0, "{call:?}");
    let recorded = call.recorded_cost_usd().unwrap();
    assert!(call.cost_usd > recorded * 1.1, "{call:?}");
    // Compared as the record counts them, the same tokens cost the same:
    // no error, while the replay's bill keeps the fee.
    let as_recorded = call.cost_usd_as_recorded.unwrap();
    assert!((as_recorded - recorded).abs() < 1e-12, "{call:?}");
    assert_eq!(r.totals.cost_usd_recorded_calls, Some(as_recorded));
    assert_eq!(r.totals.cost_usd, call.cost_usd);

    // A record that counts writes (here none) is compared with the
    // simulation's bill as it is: its write is an error the record shows.
    let r = replayed_result(&one_write(Some(0)));
    let call = r.calls.first().unwrap();
    assert!(call.usage.cache_creation_input_tokens > 0, "{call:?}");
    assert_eq!(call.cost_usd_as_recorded, None);
    assert_eq!(r.totals.cost_usd_recorded_calls, Some(call.cost_usd));
    assert!(call.cost_usd > call.recorded_cost_usd().unwrap() * 1.1);
}

/// Six calls of a growing conversation on gpt-5.6-sol (reads in blocks of
/// 1,024) behind a 4,000-token prefix the record does not show, 10 seconds
/// apart. The fourth reads only the fixed prefix; the fifth reads the
/// third's prompt and the sixth the fourth's: the service sent the fourth
/// where the conversation was not cached, and the others back where it was.
fn two_machines() -> Trace {
    let msgs: Vec<serde_json::Value> = (0..11)
        .map(|i| {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            serde_json::json!({"role": role, "content": text(&format!("w{i}"), 1000)})
        })
        .collect();
    let call = |i: u64, total: u64, read: u64| {
        serde_json::json!({"messages": 2 * i + 1, "start_ms": 10_000 * i,
                           "usage": {"input_tokens": total - read,
                                     "cache_read_input_tokens": read, "output_tokens": 10}})
    };
    trace(serde_json::json!({
        "format": "tracecost.trace/v1",
        "name": "two-machines",
        "provider": "openai",
        "model": "gpt-5.6-sol",
        "hidden_prefix_tokens": 4000,
        "system": [{"type": "text", "text": text("rules", 1000)}],
        "messages": msgs,
        "calls": [
            call(0, 6000, 0),
            call(1, 8000, 5120),
            call(2, 10000, 7168),
            call(3, 12000, 4096),
            call(4, 14000, 9216),
            call(5, 16000, 11264)
        ]
    }))
}

#[test]
fn a_read_that_fell_back_leaves_the_longer_prefix_for_the_calls_after() {
    let t = two_machines();
    let pricing = Pricing::builtin();
    let memo = TokenMemo::new(Arc::new(CharsPerToken(4.0)));
    let prepared = PreparedTrace::new(&t, &memo, pricing.lookup(&t.model).unwrap(), true);
    // The fourth call's miss is the fallback's: the hidden rest is the
    // same throughout.
    let hidden = prepared.hidden_cache.as_ref().expect("a hidden prefix");
    assert!(
        hidden.version.iter().all(|&v| v == 0),
        "{:?}",
        hidden.version
    );
    let calls = replayed(&t, "off+openai-auto");
    // The fourth reads no more than the fixed prefix, the fifth the
    // third's prompt, the sixth the fourth's (each to within a block).
    assert!(calls[3].1 <= 5000, "{calls:?}");
    assert!(calls[4].1 + 1024 >= calls[2].0 - 1024, "{calls:?}");
    assert!(calls[4].1 <= calls[2].0, "{calls:?}");
    assert!(calls[5].1 + 1024 >= calls[3].0 - 1024, "{calls:?}");
    assert!(calls[5].1 <= calls[3].0, "{calls:?}");
}

//! The prompt-cache simulator against every worked example and rule in
//! FACTS.md, plus property tests on random request sequences.

use proptest::prelude::*;
use tracecost_cost::cache_sim::{
    Breakpoint, CacheSim, PrefixBlock, PrefixKind, SimError, SimRequest, SimResult,
    automatic_breakpoint,
};
use tracecost_cost::pricing::{ModelPrice, Pricing, Usage};
use tracecost_cost::tokens::ContentHash;
use tracecost_engine::wire::Ttl;

const MIN: u64 = 60_000;

fn block(label: &str, tokens: u64, kind: PrefixKind) -> PrefixBlock {
    PrefixBlock {
        key: ContentHash::of(label.as_bytes()),
        tokens,
        kind,
        message: None,
    }
}

fn text(i: usize, tokens: u64) -> PrefixBlock {
    block(&format!("text-{i}"), tokens, PrefixKind::Text)
}

/// `n` text blocks of 200 tokens each (block k, 1-based, has prefix 200·k).
fn texts(n: usize) -> Vec<PrefixBlock> {
    (0..n).map(|i| text(i, 200)).collect()
}

fn bp(block: usize, ttl: Ttl) -> Breakpoint {
    Breakpoint { block, ttl }
}

fn m5(block: usize) -> Breakpoint {
    bp(block, Ttl::FiveMinutes)
}

fn h1(block: usize) -> Breakpoint {
    bp(block, Ttl::OneHour)
}

fn model(p: &Pricing, id: &str) -> ModelPrice {
    p.lookup(id).unwrap().clone()
}

fn run(
    sim: &mut CacheSim,
    m: &ModelPrice,
    start_ms: Option<u64>,
    blocks: &[PrefixBlock],
    bps: &[Breakpoint],
) -> SimResult {
    sim.simulate(
        &SimRequest {
            model: m,
            start_ms,
            breakpoints: bps,
            output_tokens: 0,
        },
        blocks,
    )
    .unwrap()
}

/// (read, 1h write, 5m write, input)
fn split(u: &Usage) -> (u64, u64, u64, u64) {
    (
        u.cache_read_input_tokens,
        u.write_1h(),
        u.write_5m(),
        u.input_tokens,
    )
}

#[test]
fn lookback_worked_example_turn_3_misses_the_entry_at_block_15() {
    let p = Pricing::builtin();
    let m = model(&p, "claude-sonnet-4-5");
    let mut sim = CacheSim::new();
    // Turn 1: 10 blocks, breakpoint on block 10.
    let t1 = run(&mut sim, &m, None, &texts(10)[..], &[m5(9)]);
    assert_eq!(split(&t1.usage), (0, 0, 2000, 0));
    // Turn 2: 15 blocks, breakpoint on block 15: reads the entry at 10.
    let t2 = run(&mut sim, &m, None, &texts(15), &[m5(14)]);
    assert_eq!(t2.hit, Some(9));
    assert_eq!(split(&t2.usage), (2000, 0, 1000, 0));
    // Turn 3: 35 blocks, only breakpoint on block 35: checks 35…16 and
    // misses the entry written at 15.
    let mut miss = sim.clone();
    let t3 = run(&mut miss, &m, None, &texts(35), &[m5(34)]);
    assert_eq!(t3.hit, None);
    assert_eq!(split(&t3.usage), (0, 0, 7000, 0));
    // With a second breakpoint near block 15 (on block 20) it hits.
    let mut hit = sim.clone();
    let t3 = run(&mut hit, &m, None, &texts(35), &[m5(19), m5(34)]);
    assert_eq!(t3.hit, Some(14));
    assert_eq!(split(&t3.usage), (3000, 0, 4000, 0));
    assert_eq!(
        t3.written,
        vec![(19, Ttl::FiveMinutes), (34, Ttl::FiveMinutes)]
    );
    // The walk includes the breakpoint itself: 20 positions from block 34
    // are 34…15, which reaches the entry at 15.
    let mut edge = sim.clone();
    let t3 = run(&mut edge, &m, None, &texts(34), &[m5(33)]);
    assert_eq!(t3.hit, Some(14));
}

#[test]
fn mixed_ttl_billing() {
    let p = Pricing::builtin();
    let m = model(&p, "claude-sonnet-4-6");
    let tools = [
        block("tool-a", 1000, PrefixKind::ToolDef),
        block("tool-b", 500, PrefixKind::ToolDef),
    ];
    let sys = block("system", 2000, PrefixKind::System);
    let msg = |i: usize, t: u64| text(i, t);
    let base: Vec<PrefixBlock> = tools
        .iter()
        .copied()
        .chain([sys, msg(0, 800), msg(1, 300)])
        .collect();

    // Fresh cache, 1h on the tools and the system, 5m on block 3:
    // A = 0, B = 3500, C = 4300.
    let mut sim = CacheSim::new();
    let r1 = run(&mut sim, &m, Some(0), &base, &[h1(1), h1(2), m5(3)]);
    assert_eq!(split(&r1.usage), (0, 3500, 800, 300));
    assert_eq!(r1.usage.cache_creation_input_tokens, 4300);

    // A hit on the tools entry only (written by an earlier request), then a
    // 1h breakpoint above it: A = 1500, B = 3500, C = 4300.
    let mut sim2 = CacheSim::new();
    run(&mut sim2, &m, Some(0), &base, &[h1(1)]);
    let mut changed_sys = base.clone();
    changed_sys[2] = block("system v2", 2000, PrefixKind::System);
    let r = run(
        &mut sim2,
        &m,
        Some(1_000),
        &changed_sys,
        &[h1(1), h1(2), m5(3)],
    );
    assert_eq!(r.hit, Some(1));
    assert_eq!(split(&r.usage), (1500, 2000, 800, 300));

    // Next turn a minute later: the 5m entry at block 3 is the highest
    // hit; no 1h breakpoint above it, so B = A and the rest is 5m.
    let mut grown = base.clone();
    grown.extend([msg(2, 400), msg(3, 600)]);
    let r2 = run(&mut sim, &m, Some(60_000), &grown, &[h1(1), h1(2), m5(6)]);
    assert_eq!(r2.hit, Some(3));
    assert_eq!(split(&r2.usage), (4300, 0, 1300, 0));

    // Ten minutes later the 5m entries are gone but the 1h ones live:
    // the walk from block 7 finds the system entry.
    grown.push(msg(4, 200));
    let r3 = run(
        &mut sim,
        &m,
        Some(60_000 + 10 * MIN),
        &grown,
        &[h1(1), h1(2), m5(7)],
    );
    assert_eq!(r3.hit, Some(2));
    assert_eq!(split(&r3.usage), (3500, 0, 2300, 0));
    let u = r3.usage;
    assert_eq!(
        u.cache_read_input_tokens + u.cache_creation_input_tokens + u.input_tokens,
        5800
    );
}

#[test]
fn no_breakpoints_means_everything_is_input() {
    let p = Pricing::builtin();
    let m = model(&p, "claude-sonnet-4-6");
    let mut sim = CacheSim::new();
    let r = sim
        .simulate(
            &SimRequest {
                model: &m,
                start_ms: None,
                breakpoints: &[],
                output_tokens: 77,
            },
            &texts(12),
        )
        .unwrap();
    assert_eq!(
        r.usage,
        Usage::new(2400, 0, 0, 0, 77),
        "all input, output passed through"
    );
    assert!(r.written.is_empty());
}

#[test]
fn nothing_is_cached_below_the_minimum_length_per_model() {
    let p = Pricing::builtin();
    let mins = [
        ("claude-sonnet-4-5", 1024),
        ("claude-sonnet-4-6", 1024),
        ("claude-sonnet-5", 1024),
        ("claude-opus-4-1", 1024),
        ("claude-opus-4-8", 1024),
        ("claude-3-haiku-20240307", 2048),
        ("claude-3-5-haiku-20241022", 2048),
        ("claude-opus-4-7", 2048),
        ("claude-opus-4-5", 4096),
        ("claude-opus-4-6", 4096),
        ("claude-haiku-4-5", 4096),
        ("claude-opus-5", 512),
        ("claude-fable-5", 512),
        ("claude-fable-5-1", 512),
    ];
    for (id, min) in mins {
        let m = model(&p, id);
        // One token short: nothing written, no error, second request reads 0.
        let short = [text(0, min - 1), text(1, 50)];
        let mut sim = CacheSim::new();
        let r1 = run(&mut sim, &m, None, &short, &[m5(0)]);
        assert_eq!(split(&r1.usage), (0, 0, 0, min + 49), "{id}");
        assert!(r1.written.is_empty(), "{id}");
        let r2 = run(&mut sim, &m, None, &short, &[m5(0)]);
        assert_eq!(split(&r2.usage), (0, 0, 0, min + 49), "{id}");
        // Exactly the minimum: cached.
        let exact = [text(0, min), text(1, 50)];
        let mut sim = CacheSim::new();
        run(&mut sim, &m, None, &exact, &[m5(0)]);
        let r2 = run(&mut sim, &m, None, &exact, &[m5(0)]);
        assert_eq!(split(&r2.usage), (min, 0, 0, 50), "{id}");
    }
    // A small breakpoint is ignored while a later, large one is written.
    let m = model(&p, "claude-opus-4-6");
    let blocks = [text(0, 1000), text(1, 5000)];
    let r = run(&mut CacheSim::new(), &m, None, &blocks, &[m5(0), m5(1)]);
    assert_eq!(r.written, vec![(1, Ttl::FiveMinutes)]);
    assert_eq!(split(&r.usage), (0, 0, 6000, 0));
}

#[test]
fn five_minute_entry_expires_after_six_idle_minutes_unless_refreshed() {
    let p = Pricing::builtin();
    let m = model(&p, "claude-sonnet-4-6");
    let blocks = texts(10);
    let bps = [m5(9)];

    // Written at 0, nothing until minute 6: gone.
    let mut sim = CacheSim::new();
    run(&mut sim, &m, Some(0), &blocks, &bps);
    let r = run(&mut sim, &m, Some(6 * MIN), &blocks, &bps);
    assert_eq!(r.hit, None);
    assert_eq!(split(&r.usage), (0, 0, 2000, 0));

    // Without a refresh, a request at minute 8 misses too.
    let mut sim = CacheSim::new();
    run(&mut sim, &m, Some(0), &blocks, &bps);
    assert_eq!(run(&mut sim, &m, Some(8 * MIN), &blocks, &bps).hit, None);

    // A hit at minute 4 refreshes it to minute 9: minute 8 still hits.
    let mut sim = CacheSim::new();
    run(&mut sim, &m, Some(0), &blocks, &bps);
    let r4 = run(&mut sim, &m, Some(4 * MIN), &blocks, &bps);
    assert_eq!(split(&r4.usage), (2000, 0, 0, 0), "the refresh is free");
    let r8 = run(&mut sim, &m, Some(8 * MIN), &blocks, &bps);
    assert_eq!(r8.hit, Some(9));
    assert_eq!(split(&r8.usage), (2000, 0, 0, 0));

    // Exactly 5 minutes after the last refresh: expired.
    assert_eq!(run(&mut sim, &m, Some(13 * MIN), &blocks, &bps).hit, None);
}

#[test]
fn one_hour_entry_lives_an_hour() {
    let p = Pricing::builtin();
    let m = model(&p, "claude-sonnet-4-6");
    let blocks = texts(10);
    let mut sim = CacheSim::new();
    let r = run(&mut sim, &m, Some(0), &blocks, &[h1(9)]);
    assert_eq!(split(&r.usage), (0, 2000, 0, 0));
    let mut late = sim.clone();
    assert_eq!(
        run(&mut sim, &m, Some(59 * MIN), &blocks, &[h1(9)]).hit,
        Some(9)
    );
    assert_eq!(
        run(&mut late, &m, Some(61 * MIN), &blocks, &[h1(9)]).hit,
        None
    );
}

fn prefix_with(tools: [&str; 2], system: &str, n_msgs: usize) -> Vec<PrefixBlock> {
    let mut v = vec![
        block(tools[0], 700, PrefixKind::ToolDef),
        block(tools[1], 700, PrefixKind::ToolDef),
        PrefixBlock::tool_prompt(346),
        block(system, 1500, PrefixKind::System),
    ];
    v.extend((0..n_msgs).map(|i| text(i, 300)));
    v
}

#[test]
fn tools_change_invalidates_everything() {
    let p = Pricing::builtin();
    let m = model(&p, "claude-sonnet-4-6");
    let bps = [m5(1), m5(3), m5(7)];
    let mut sim = CacheSim::new();
    run(
        &mut sim,
        &m,
        None,
        &prefix_with(["ta", "tb"], "sys", 4),
        &bps,
    );
    let r = run(
        &mut sim,
        &m,
        None,
        &prefix_with(["ta", "tb2"], "sys", 4),
        &bps,
    );
    assert_eq!(r.hit, None);
    assert_eq!(r.usage.cache_read_input_tokens, 0);
    // The unchanged request would have read everything.
    let r = run(
        &mut sim,
        &m,
        None,
        &prefix_with(["ta", "tb2"], "sys", 4),
        &bps,
    );
    assert_eq!(split(&r.usage), (700 + 700 + 346 + 1500 + 1200, 0, 0, 0));
}

#[test]
fn system_change_keeps_the_tools_entry() {
    let p = Pricing::builtin();
    let m = model(&p, "claude-sonnet-4-6");
    let bps = [m5(1), m5(3), m5(7)];
    let mut sim = CacheSim::new();
    run(
        &mut sim,
        &m,
        None,
        &prefix_with(["ta", "tb"], "sys", 4),
        &bps,
    );
    let r = run(
        &mut sim,
        &m,
        None,
        &prefix_with(["ta", "tb"], "sys v2", 4),
        &bps,
    );
    // Breakpoint on the last tool: the tools entry is still readable; the
    // tool-use system prompt and everything after are written again.
    assert_eq!(r.hit, Some(1));
    assert_eq!(split(&r.usage), (1400, 0, 346 + 1500 + 1200, 0));
    // Without a breakpoint on the last tool, a system change loses it all.
    let bps = [m5(3), m5(7)];
    let mut sim = CacheSim::new();
    run(
        &mut sim,
        &m,
        None,
        &prefix_with(["ta", "tb"], "sys", 4),
        &bps,
    );
    let r = run(
        &mut sim,
        &m,
        None,
        &prefix_with(["ta", "tb"], "sys v2", 4),
        &bps,
    );
    assert_eq!(r.hit, None);
}

#[test]
fn caches_are_per_model() {
    let p = Pricing::builtin();
    let a = model(&p, "claude-sonnet-4-5");
    let b = model(&p, "claude-sonnet-4-6");
    let blocks = texts(10);
    let mut sim = CacheSim::new();
    run(&mut sim, &a, None, &blocks, &[m5(9)]);
    assert_eq!(run(&mut sim, &b, None, &blocks, &[m5(9)]).hit, None);
    assert_eq!(run(&mut sim, &a, None, &blocks, &[m5(9)]).hit, Some(9));
}

/// Text, then `calls` rounds of (assistant: 3 tool_use + user: 3
/// tool_result), i.e. 6·calls blocks but only 2·calls positions.
fn tool_rounds(calls: usize, kinds: (PrefixKind, PrefixKind)) -> Vec<PrefixBlock> {
    let mut v = vec![text(0, 2000)];
    for c in 0..calls {
        for j in 0..3 {
            v.push(block(&format!("use-{c}-{j}"), 10, kinds.0));
        }
        for j in 0..3 {
            v.push(block(&format!("result-{c}-{j}"), 10, kinds.1));
        }
    }
    v
}

#[test]
fn tool_use_and_tool_result_runs_count_as_one_position() {
    let p = Pricing::builtin();
    let m = model(&p, "claude-sonnet-4-6");
    // 9 rounds after the first block: 54 blocks but 18 positions, so the
    // breakpoint on the last tool_result reaches the entry on block 0.
    let tools = tool_rounds(9, (PrefixKind::ToolUse, PrefixKind::ToolResult));
    let mut sim = CacheSim::new();
    run(&mut sim, &m, None, &tools[..1], &[m5(0)]);
    let r = run(&mut sim, &m, None, &tools, &[m5(tools.len() - 1)]);
    assert_eq!(r.hit, Some(0));
    assert_eq!(split(&r.usage), (2000, 0, 540, 0));
    // The same blocks as plain text are 55 positions: a miss.
    let plain = tool_rounds(9, (PrefixKind::Text, PrefixKind::Text));
    let mut sim = CacheSim::new();
    run(&mut sim, &m, None, &plain[..1], &[m5(0)]);
    assert_eq!(
        run(&mut sim, &m, None, &plain, &[m5(plain.len() - 1)]).hit,
        None
    );
    // Eleven rounds are 23 positions: block 0 is out of reach again.
    let far = tool_rounds(11, (PrefixKind::ToolUse, PrefixKind::ToolResult));
    let mut sim = CacheSim::new();
    run(&mut sim, &m, None, &far[..1], &[m5(0)]);
    assert_eq!(
        run(&mut sim, &m, None, &far, &[m5(far.len() - 1)]).hit,
        None
    );
}

#[test]
fn an_entry_inside_a_run_is_found() {
    let p = Pricing::builtin();
    let m = model(&p, "claude-sonnet-4-6");
    let tools = tool_rounds(2, (PrefixKind::ToolUse, PrefixKind::ToolResult));
    let mut sim = CacheSim::new();
    // Written on the middle tool_result of the last run.
    run(
        &mut sim,
        &m,
        None,
        &tools[..tools.len() - 1],
        &[m5(tools.len() - 2)],
    );
    let r = run(&mut sim, &m, None, &tools, &[m5(tools.len() - 1)]);
    assert_eq!(r.hit, Some(tools.len() - 2));
}

#[test]
fn parallel_requests_all_miss() {
    let p = Pricing::builtin();
    let m = model(&p, "claude-sonnet-4-6");
    let blocks = texts(10);
    let mut sim = CacheSim::new();
    let a = run(&mut sim, &m, Some(1_000), &blocks, &[m5(9)]);
    let b = run(&mut sim, &m, Some(1_000), &blocks, &[m5(9)]);
    let c = run(&mut sim, &m, Some(1_000), &blocks, &[m5(9)]);
    for r in [&a, &b, &c] {
        assert_eq!(split(&r.usage), (0, 0, 2000, 0));
    }
    // One millisecond later the entry is readable.
    let d = run(&mut sim, &m, Some(1_001), &blocks, &[m5(9)]);
    assert_eq!(split(&d.usage), (2000, 0, 0, 0));
    // Back-to-back requests (no start time) are sequential.
    let mut sim = CacheSim::new();
    run(&mut sim, &m, None, &blocks, &[m5(9)]);
    let e = run(&mut sim, &m, None, &blocks, &[m5(9)]);
    assert_eq!(e.hit, Some(9));
    assert_eq!(e.start_ms, 0);
}

#[test]
fn invalid_breakpoints_are_errors_and_leave_the_cache_alone() {
    let p = Pricing::builtin();
    let m = model(&p, "claude-sonnet-4-6");
    let mut blocks = texts(10);
    blocks[5].kind = PrefixKind::Thinking;
    let mut sim = CacheSim::new();
    let cases: Vec<(Vec<Breakpoint>, SimError)> = vec![
        (
            vec![m5(1), m5(2), m5(3), m5(4), m5(9)],
            SimError::TooManyBreakpoints { count: 5 },
        ),
        (
            vec![m5(3), h1(9)],
            SimError::TtlOrder {
                five_minute: 3,
                one_hour: 9,
            },
        ),
        (vec![m5(10)], SimError::OutOfRange { block: 10, len: 10 }),
        (vec![m5(4), m5(4)], SimError::Duplicate { block: 4 }),
        (
            vec![m5(5)],
            SimError::NotMarkable {
                block: 5,
                kind: PrefixKind::Thinking,
            },
        ),
    ];
    for (bps, expected) in cases {
        let err = sim
            .simulate(
                &SimRequest {
                    model: &m,
                    start_ms: None,
                    breakpoints: &bps,
                    output_tokens: 0,
                },
                &blocks,
            )
            .unwrap_err();
        assert_eq!(err, expected);
    }
    assert!(sim.is_empty());
    insta::assert_snapshot!(
        SimError::TtlOrder { five_minute: 3, one_hour: 9 }.to_string(),
        @"1h cache breakpoint on block 9 comes after the 5m breakpoint on block 3; 1h breakpoints must come first"
    );
    insta::assert_snapshot!(
        SimError::TooManyBreakpoints { count: 5 }.to_string(),
        @"5 cache breakpoints in one request; at most 4 are allowed"
    );
    // Four is fine, and 1h before 5m is fine.
    run(&mut sim, &m, None, &blocks, &[h1(1), h1(2), m5(3), m5(9)]);
    // The tool-prompt pseudo-block cannot be marked either.
    let with_prompt = prefix_with(["ta", "tb"], "sys", 1);
    assert!(matches!(
        sim.simulate(
            &SimRequest {
                model: &m,
                start_ms: None,
                breakpoints: &[m5(2)],
                output_tokens: 0,
            },
            &with_prompt
        ),
        Err(SimError::NotMarkable { block: 2, .. })
    ));
}

#[test]
fn automatic_caching_marks_the_last_markable_block() {
    let mut blocks = texts(3);
    blocks.push(block("thinking", 10, PrefixKind::Thinking));
    assert_eq!(automatic_breakpoint(&blocks, Ttl::FiveMinutes), Some(m5(2)));
    assert_eq!(automatic_breakpoint(&[], Ttl::OneHour), None);
}

/// One request of a random sequence: how many blocks of the growing
/// conversation it sends, which block (if any) it edits, its breakpoints
/// (as fractions of the length), its time gap and its output.
#[derive(Debug, Clone)]
struct Step {
    len: usize,
    edit: Option<usize>,
    bps: Vec<(u8, bool)>,
    gap_ms: Option<u64>,
    output: u64,
    model: bool,
}

fn step() -> impl Strategy<Value = Step> {
    (
        1usize..60,
        prop::option::of(0usize..60),
        prop::collection::vec((0u8..=255, any::<bool>()), 0..6),
        prop::option::of(prop_oneof![Just(0u64), 0u64..600_000, 0u64..4_000_000]),
        0u64..5000,
        any::<bool>(),
    )
        .prop_map(|(len, edit, bps, gap_ms, output, model)| Step {
            len,
            edit,
            bps,
            gap_ms,
            output,
            model,
        })
}

fn kind_of(i: usize) -> PrefixKind {
    match i % 7 {
        0 | 1 => PrefixKind::Text,
        2 | 3 => PrefixKind::ToolUse,
        4 | 5 => PrefixKind::ToolResult,
        _ => PrefixKind::Image,
    }
}

fn replay(steps: &[Step]) -> Vec<Result<SimResult, SimError>> {
    let p = Pricing::builtin();
    let models = [model(&p, "claude-sonnet-4-5"), model(&p, "claude-opus-5")];
    let mut sim = CacheSim::new();
    let mut version = vec![0u32; 60];
    let mut clock = 0u64;
    let mut out = Vec::new();
    for s in steps {
        if let Some(e) = s.edit {
            version[e] += 1;
        }
        let blocks: Vec<PrefixBlock> = (0..s.len)
            .map(|i| {
                block(
                    &format!("b{i}v{}", version[i]),
                    50 + (i as u64 * 37) % 400,
                    kind_of(i),
                )
            })
            .collect();
        let mut bps: Vec<Breakpoint> = s
            .bps
            .iter()
            .map(|&(f, one_hour)| {
                bp(
                    f as usize * (s.len - 1) / 255,
                    if one_hour {
                        Ttl::OneHour
                    } else {
                        Ttl::FiveMinutes
                    },
                )
            })
            .collect();
        // Mostly valid requests: sort 1h first, dedupe.
        bps.sort_by_key(|b| (b.block, b.ttl));
        bps.dedup_by_key(|b| b.block);
        let start = s.gap_ms.map(|g| {
            clock += g;
            clock
        });
        out.push(sim.simulate(
            &SimRequest {
                model: &models[usize::from(s.model)],
                start_ms: start,
                breakpoints: &bps,
                output_tokens: s.output,
            },
            &blocks,
        ));
        if let Ok(o) = out.last().unwrap() {
            let total: u64 = blocks.iter().map(|b| b.tokens).sum();
            let u = o.usage;
            assert_eq!(
                u.cache_read_input_tokens + u.cache_creation_input_tokens + u.input_tokens,
                total
            );
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn usage_sums_to_total_and_is_deterministic(steps in prop::collection::vec(step(), 1..25)) {
        let p = Pricing::builtin();
        let first = replay(&steps);
        let second = replay(&steps);
        prop_assert_eq!(&first, &second);
        for (r, s) in first.iter().zip(&steps) {
            match r {
                Ok(o) => {
                    let u = o.usage;
                    prop_assert_eq!(
                        u.cache_creation_input_tokens,
                        u.write_5m() + u.write_1h()
                    );
                    prop_assert_eq!(u.output_tokens, s.output);
                    let m = if s.model { "claude-opus-5" } else { "claude-sonnet-4-5" };
                    for batch in [false, true] {
                        let c = p.cost_usd(m, &u, batch).unwrap();
                        prop_assert!(c >= 0.0 && c.is_finite());
                    }
                    if let Some(h) = o.hit {
                        prop_assert!(o.written.iter().all(|(b, _)| *b > h));
                    }
                }
                Err(e) => {
                    // Only the TTL-order rule can be broken after sorting.
                    let is_ttl_order = matches!(e, SimError::TtlOrder { .. } | SimError::TooManyBreakpoints { .. });
                    prop_assert!(is_ttl_order, "{:?}", e);
                }
            }
        }
    }
}

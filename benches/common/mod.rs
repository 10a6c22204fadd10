//! Fixtures shared by the benchmarks (each bench binary includes this file
//! with `mod common;` and uses part of it).
#![allow(dead_code)]

use tracecost::cost::cache_sim::{Breakpoint, PrefixBlock, PrefixKind, automatic_breakpoint};
use tracecost::cost::pricing::{ModelPrice, Pricing, ToolChoice};
use tracecost::cost::tokens::{TokenMemo, parse_tokenizer};
use tracecost::engine::cache::ManifestPosition;
use tracecost::engine::message::{BlockKind, ContentBlock, Message};
use tracecost::engine::wire::Ttl;
use tracecost::policy::{Cache, Compaction, Config};
use tracecost::replay::PreparedTrace;
use tracecost::replay::sweep::Grid;
use tracecost::trace::Trace;

/// The default tokenizer (`o200k_base`), built from its spec as the CLI
/// builds it.
pub fn memo() -> TokenMemo {
    TokenMemo::new(parse_tokenizer("o200k_base").expect("o200k_base is a tokenizer spec"))
}

/// The built-in price table.
pub fn pricing() -> Pricing {
    Pricing::builtin()
}

/// The price of the trace's own model.
pub fn price_of<'p>(pricing: &'p Pricing, trace: &Trace) -> &'p ModelPrice {
    pricing
        .lookup(&trace.model)
        .expect("bundled model is priced")
}

/// Prepares `trace` (tokens once, calibration on) with `memo`.
pub fn prepare<'t>(trace: &'t Trace, memo: &TokenMemo, pricing: &Pricing) -> PreparedTrace<'t> {
    PreparedTrace::new(trace, memo, price_of(pricing, trace), true)
}

/// Parses a config string.
pub fn config(s: &str) -> Config {
    s.parse().expect("valid config string")
}

/// The config the hot-path benches replay: the engine's ledger with the
/// CLI's default threshold and keep-last, one rolling tail marker.
pub const LEDGER_TAIL: &str = "ledger:t=8000,k=2+tail:ttl=5m";

/// Ledger thresholds of the sweep grid: 25 values from 250 to 96,000 chars.
pub const SWEEP_THRESHOLDS: [u64; 25] = [
    250, 500, 750, 1_000, 1_500, 2_000, 2_500, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000, 10_000,
    12_000, 14_000, 16_000, 20_000, 24_000, 32_000, 40_000, 48_000, 64_000, 80_000, 96_000,
];

/// Keep-last values of the sweep grid.
pub const SWEEP_KEEP_LAST: [usize; 5] = [0, 1, 2, 4, 8];

/// The 8 marker-placing cache policies: system, tail and native (manifest
/// cached and volatile), each with a 5-minute and a 1-hour TTL.
pub fn sweep_caches() -> Vec<Cache> {
    let mut caches = Vec::new();
    for ttl in [Ttl::FiveMinutes, Ttl::OneHour] {
        let ttl = ttl.into();
        caches.push(Cache::System { ttl });
        caches.push(Cache::Tail { ttl });
        for manifest in [ManifestPosition::Cached, ManifestPosition::Volatile] {
            caches.push(Cache::Native { manifest, ttl });
        }
    }
    caches
}

/// The sweep grid: `thresholds` × `keep_last` ledger policies × the 8
/// cache policies. With the full constants: 25 × 5 × 8 = 1,000 configs
/// (`sweep_trace` adds the `off+none` baseline, so 1,001 replays).
pub fn sweep_grid(thresholds: &[u64], keep_last: &[usize]) -> Grid {
    let mut compactions = Vec::new();
    for &threshold in thresholds {
        for &keep_last in keep_last {
            compactions.push(Compaction::Ledger {
                threshold,
                keep_last,
            });
        }
    }
    Grid {
        compactions,
        caches: sweep_caches(),
        models: vec![None],
    }
}

/// The largest tool result of `trace`: (tool_use id, tool name, payload).
pub fn largest_result(trace: &Trace) -> (String, String, String) {
    let mut names = std::collections::HashMap::new();
    let mut best: Option<(String, String)> = None;
    for m in &trace.messages {
        for b in m.blocks() {
            match b.kind() {
                BlockKind::ToolUse { id, name } => {
                    names.insert(id.to_string(), name.to_string());
                }
                BlockKind::ToolResult { tool_use_id, .. } => {
                    let payload = b.tool_result_payload().unwrap_or("");
                    if best.as_ref().is_none_or(|(_, p)| payload.len() > p.len()) {
                        best = Some((tool_use_id.to_string(), payload.to_owned()));
                    }
                }
                _ => {}
            }
        }
    }
    let (id, payload) = best.expect("trace has a tool result");
    let name = names.get(&id).cloned().unwrap_or_else(|| "unknown".into());
    (id, name, payload)
}

/// The tool result of `trace` whose payload is closest to `chars` long.
pub fn result_near(trace: &Trace, chars: usize) -> String {
    trace
        .messages
        .iter()
        .flat_map(Message::blocks)
        .filter_map(ContentBlock::tool_result_payload)
        .min_by_key(|p| p.len().abs_diff(chars))
        .expect("trace has a tool result")
        .to_owned()
}

/// One call's simulator input: start time, prefix blocks, breakpoints,
/// output tokens.
pub type SimInput = (Option<u64>, Vec<PrefixBlock>, Vec<Breakpoint>, u64);

/// The prompt-cache simulator's input for every call of `prepared` with no
/// compaction and one rolling 5-minute marker on the last block (the shape
/// of `off+tail:ttl=5m`): tools → tool prompt → system → messages, each
/// block's tokens calibrated and framed as the replay does.
pub fn sim_requests(prepared: &PreparedTrace<'_>, price: &ModelPrice) -> Vec<SimInput> {
    let trace = prepared.trace;
    let cal = &prepared.calibration;
    let mut out = Vec::with_capacity(trace.calls.len());
    for call in &trace.calls {
        let mut blocks = Vec::new();
        let tools = prepared
            .tools
            .get(call.prompt)
            .map_or(&[][..], Vec::as_slice);
        for c in tools {
            blocks.push(PrefixBlock {
                key: c.key,
                tokens: c.tokens(cal, price.framing.per_tool),
                kind: PrefixKind::ToolDef,
                message: None,
            });
        }
        if !tools.is_empty() {
            blocks.push(PrefixBlock::tool_prompt(
                price.tool_prompt.tokens(ToolChoice::Auto),
            ));
        }
        for c in prepared
            .system
            .get(call.prompt)
            .map_or(&[][..], Vec::as_slice)
        {
            blocks.push(PrefixBlock {
                key: c.key,
                tokens: c.tokens(cal, price.framing.per_block),
                kind: PrefixKind::System,
                message: None,
            });
        }
        for (mi, m) in trace.history_of(call).iter().enumerate() {
            let counts = &prepared.messages[mi];
            let kinds: Vec<PrefixKind> = if m.blocks().is_empty() {
                vec![PrefixKind::Text]
            } else {
                m.blocks()
                    .iter()
                    .map(|b| PrefixKind::from(b.kind()))
                    .collect()
            };
            for (bi, (c, kind)) in counts.iter().zip(kinds).enumerate() {
                let frame = price.framing.per_block
                    + if bi == 0 {
                        price.framing.per_message
                    } else {
                        0
                    };
                blocks.push(PrefixBlock {
                    key: c.key,
                    tokens: c.tokens(cal, frame),
                    kind,
                    message: Some(mi),
                });
            }
        }
        let breakpoints: Vec<Breakpoint> = automatic_breakpoint(&blocks, Ttl::FiveMinutes)
            .into_iter()
            .collect();
        let output = call
            .recorded_usage()
            .and_then(|u| u.output_tokens)
            .unwrap_or(0);
        out.push((call.start_ms, blocks, breakpoints, output));
    }
    out
}

/// Median and range of a set of durations, in seconds.
pub fn median_range(mut secs: Vec<f64>) -> (f64, f64, f64) {
    secs.sort_by(f64::total_cmp);
    let n = secs.len();
    let median = if n % 2 == 1 {
        secs[n / 2]
    } else {
        (secs[n / 2 - 1] + secs[n / 2]) / 2.0
    };
    (median, secs[0], secs[n - 1])
}

//! Prices: the built-in table against the provider facts, name
//! resolution, the long-context premium, batch discount, ccusage's formula,
//! pricing files (LiteLLM and native) and their error messages.

use std::path::Path;
use tracecost_engine::cache::ProviderKind;

use tracecost_cost::pricing::{
    BATCH_DISCOUNT, CacheCreation, Pricing, PricingError, ToolChoice, Usage,
};

/// (name, input, 5m write, 1h write, read, output, min cacheable tokens),
/// straight from FACTS.md.
const FACTS: &[(&str, f64, f64, f64, f64, f64, u64)] = &[
    (
        "claude-opus-4-20250514",
        15.0,
        18.75,
        30.0,
        1.50,
        75.0,
        1024,
    ),
    (
        "claude-opus-4-1-20250805",
        15.0,
        18.75,
        30.0,
        1.50,
        75.0,
        1024,
    ),
    (
        "claude-opus-4-5-20251101",
        5.0,
        6.25,
        10.0,
        0.50,
        25.0,
        4096,
    ),
    ("claude-opus-4-5", 5.0, 6.25, 10.0, 0.50, 25.0, 4096),
    ("claude-opus-4-6", 5.0, 6.25, 10.0, 0.50, 25.0, 4096),
    ("claude-opus-4-7", 5.0, 6.25, 10.0, 0.50, 25.0, 2048),
    ("claude-opus-4-8", 5.0, 6.25, 10.0, 0.50, 25.0, 1024),
    ("claude-opus-5", 5.0, 6.25, 10.0, 0.50, 25.0, 512),
    ("claude-sonnet-4-20250514", 3.0, 3.75, 6.0, 0.30, 15.0, 1024),
    (
        "claude-sonnet-4-5-20250929",
        3.0,
        3.75,
        6.0,
        0.30,
        15.0,
        1024,
    ),
    ("claude-sonnet-4-6", 3.0, 3.75, 6.0, 0.30, 15.0, 1024),
    (
        "claude-3-7-sonnet-20250219",
        3.0,
        3.75,
        6.0,
        0.30,
        15.0,
        1024,
    ),
    ("claude-sonnet-5", 2.0, 2.50, 4.0, 0.20, 10.0, 1024),
    ("claude-haiku-4-5-20251001", 1.0, 1.25, 2.0, 0.10, 5.0, 4096),
    ("claude-haiku-4-5", 1.0, 1.25, 2.0, 0.10, 5.0, 4096),
    (
        "claude-3-5-haiku-20241022",
        0.80,
        1.0,
        1.60,
        0.08,
        4.0,
        2048,
    ),
    (
        "claude-3-haiku-20240307",
        0.25,
        0.30,
        0.50,
        0.03,
        1.25,
        2048,
    ),
    ("claude-fable-5", 10.0, 12.50, 20.0, 1.00, 50.0, 512),
    ("claude-fable-5-1", 10.0, 12.50, 20.0, 0.25, 50.0, 512),
    // The model overviews of the 5.5 models (Sonnet 5.5 at its newest
    // row, reads at $0.10 from 2026-10-07); Mythos as Fable on the
    // pricing page; Fable / Mythos 5.2 from third parties.
    ("claude-opus-5-5", 4.0, 5.0, 8.0, 0.20, 20.0, 512),
    ("claude-sonnet-5-5", 2.0, 2.50, 4.0, 0.10, 10.0, 1024),
    ("claude-haiku-5-5", 0.10, 0.125, 0.20, 0.01, 0.50, 4096),
    ("claude-mythos-5", 10.0, 12.50, 20.0, 1.00, 50.0, 512),
    ("claude-mythos-5-1", 10.0, 12.50, 20.0, 0.25, 50.0, 512),
    ("claude-fable-5-2", 8.0, 10.0, 16.0, 0.20, 40.0, 512),
    ("claude-mythos-5-2", 8.0, 10.0, 16.0, 0.20, 40.0, 512),
];

#[test]
fn every_model_in_facts_has_the_right_prices() {
    let p = Pricing::builtin();
    for &(name, input, w5, w1, read, output, min) in FACTS {
        let m = p.lookup(name).unwrap_or_else(|e| panic!("{e}"));
        let r = m.rates;
        assert_eq!(
            (
                r.input,
                r.cache_write_5m,
                r.cache_write_1h,
                r.cache_read,
                r.output
            ),
            (input, w5, w1, read, output),
            "{name}"
        );
        assert_eq!(m.min_cacheable_tokens, min, "{name}");
    }
    // Every built-in Claude model is in the facts table.
    for m in p
        .models()
        .iter()
        .filter(|m| m.provider == ProviderKind::Anthropic)
    {
        assert!(FACTS.iter().any(|f| f.0 == m.id), "{} not in FACTS", m.id);
    }
}

/// OpenAI's models, from OpenAI's pricing page: USD per million tokens of
/// input, cached input and output, and the input window.
const OPENAI: &[(&str, f64, f64, f64, u64)] = &[
    ("gpt-6.2-sol", 2.0, 0.1, 10.0, 922_000),
    ("gpt-6.2-astra", 8.0, 0.4, 40.0, 922_000),
    ("gpt-6.1-sol", 2.0, 0.1, 10.0, 922_000),
    ("gpt-6.1-terra", 1.0, 0.05, 5.0, 922_000),
    ("gpt-6-sol", 2.0, 0.2, 10.0, 922_000),
    ("gpt-6-luna", 0.1, 0.01, 0.5, 922_000),
    ("gpt-6-astra", 10.0, 1.0, 50.0, 922_000),
    // The newest rows: Sol's promotion, Terra's and Luna's cut.
    ("gpt-5.6", 4.0, 0.4, 20.0, 1_050_000),
    ("gpt-5.6-sol", 4.0, 0.4, 20.0, 1_050_000),
    ("gpt-5.6-terra", 2.0, 0.2, 12.0, 1_050_000),
    ("gpt-5.6-luna", 0.2, 0.02, 1.2, 1_050_000),
    ("gpt-5.5", 5.0, 0.5, 30.0, 1_050_000),
    ("gpt-5.4", 2.5, 0.25, 15.0, 1_050_000),
    ("gpt-5.4-mini", 0.75, 0.075, 4.5, 1_050_000),
    ("gpt-5.4-nano", 0.2, 0.02, 1.25, 1_050_000),
    ("gpt-5.3-codex", 1.75, 0.175, 14.0, 272_000),
    ("gpt-5.2", 1.75, 0.175, 14.0, 272_000),
    ("gpt-5.2-codex", 1.75, 0.175, 14.0, 272_000),
    ("gpt-5.1", 1.25, 0.125, 10.0, 272_000),
    ("gpt-5.1-codex", 1.25, 0.125, 10.0, 272_000),
    ("gpt-5.1-codex-max", 1.25, 0.125, 10.0, 272_000),
    ("gpt-5.1-codex-mini", 0.25, 0.025, 2.0, 272_000),
    ("gpt-5", 1.25, 0.125, 10.0, 272_000),
    ("gpt-5-codex", 1.25, 0.125, 10.0, 272_000),
    ("gpt-5-mini", 0.25, 0.025, 2.0, 272_000),
    ("gpt-5-nano", 0.05, 0.005, 0.4, 272_000),
    ("gpt-4.1", 2.0, 0.5, 8.0, 1_047_576),
    ("gpt-4.1-mini", 0.4, 0.1, 1.6, 1_047_576),
    ("gpt-4.1-nano", 0.1, 0.025, 0.4, 1_047_576),
    ("gpt-4o", 2.5, 1.25, 10.0, 128_000),
    ("gpt-4o-mini", 0.15, 0.075, 0.6, 128_000),
    ("o3", 2.0, 0.5, 8.0, 200_000),
    ("o4-mini", 1.1, 0.275, 4.4, 200_000),
    ("o3-mini", 1.1, 0.55, 4.4, 200_000),
];

#[test]
fn every_openai_model_has_its_prices_window_and_write_rule() {
    let p = Pricing::builtin();
    for &(name, input, cached, output, window) in OPENAI {
        let m = p.lookup(name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.provider, ProviderKind::OpenAi, "{name}");
        let r = m.rates;
        assert_eq!(
            (r.input, r.cache_read, r.output),
            (input, cached, output),
            "{name}"
        );
        // GPT-5.6 and later cache at breakpoints and bill 30-minute
        // writes at 1.25× input, 12-hour ones (the 1-hour column) at the
        // same price on GPT-5.6 and 2.5× on GPT-6.x; the earlier models'
        // automatic cache stores for free.
        let gpt6 = name.starts_with("gpt-6");
        let breakpoints = name.starts_with("gpt-5.6") || gpt6;
        assert_eq!(m.breakpoint_cache, breakpoints, "{name}");
        let write = if breakpoints { input * 1.25 } else { input };
        let long_write = if gpt6 { input * 2.5 } else { write };
        assert_eq!(
            (r.cache_write_5m, r.cache_write_1h),
            (write, long_write),
            "{name}"
        );
        assert_eq!(m.window_tokens(), window, "{name}");
        assert_eq!(m.min_cacheable_tokens, 1024, "{name}");
        assert_eq!(m.extended_cache_only, name == "gpt-5.5", "{name}");
    }
    for m in p
        .models()
        .iter()
        .filter(|m| m.provider == ProviderKind::OpenAi)
    {
        assert!(OPENAI.iter().any(|f| f.0 == m.id), "{} not in OPENAI", m.id);
    }
    // Snapshots resolve to their model.
    assert_eq!(
        p.lookup("gpt-4o-mini-2024-07-18").unwrap().id,
        "gpt-4o-mini"
    );
    assert_eq!(p.lookup("openai/gpt-5.4").unwrap().id, "gpt-5.4");
}

/// Gemini's models, from Google's pricing page and caching guide: USD per
/// million tokens of input, cached input and output, the caching minimum,
/// the rates above 200K tokens where there are some, and the storage of
/// explicit cached contents per million tokens per hour where the pricing
/// page gives it.
type GeminiRow = (
    &'static str,
    f64,
    f64,
    f64,
    u64,
    Option<(f64, f64, f64)>,
    Option<f64>,
);
const GEMINI: &[GeminiRow] = &[
    (
        "gemini-3.1-pro-preview",
        2.0,
        0.2,
        12.0,
        4096,
        Some((4.0, 0.4, 18.0)),
        Some(4.5),
    ),
    (
        "gemini-3-pro-preview",
        2.0,
        0.2,
        12.0,
        4096,
        Some((4.0, 0.4, 18.0)),
        Some(4.5),
    ),
    // Argon's newest row (doubled on 2026-12-01) and 3.8 Flash's (after
    // its promotion ends on 2026-12-31).
    ("gemini-4-argon", 4.0, 0.2, 20.0, 4096, None, None),
    ("gemini-4-neon", 3.0, 0.15, 15.0, 4096, None, None),
    ("gemini-4-hydrogen", 1.5, 0.075, 7.5, 4096, None, None),
    ("gemini-3.8-flash", 1.5, 0.15, 7.5, 4096, None, None),
    ("gemini-3.7-flash", 0.75, 0.075, 3.75, 4096, None, None),
    ("gemini-3.6-flash", 1.5, 0.15, 7.5, 4096, None, None),
    ("gemini-3.5-flash", 1.5, 0.15, 9.0, 4096, None, None),
    ("gemini-3.5-flash-lite", 0.3, 0.03, 2.5, 4096, None, None),
    ("gemini-3-flash", 0.5, 0.05, 3.0, 4096, None, Some(1.0)),
    (
        "gemini-2.5-pro",
        1.25,
        0.125,
        10.0,
        2048,
        Some((2.5, 0.25, 15.0)),
        Some(4.5),
    ),
    ("gemini-2.5-flash", 0.3, 0.03, 2.5, 2048, None, Some(1.0)),
    (
        "gemini-2.5-flash-lite",
        0.1,
        0.01,
        0.4,
        2048,
        None,
        Some(1.0),
    ),
];

#[test]
fn every_gemini_model_has_its_prices_minimum_and_storage() {
    let p = Pricing::builtin();
    for &(name, input, cached, output, min, long, storage) in GEMINI {
        let m = p.lookup(name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(m.provider, ProviderKind::Google, "{name}");
        let r = m.rates;
        assert_eq!(
            (r.input, r.cache_read, r.output),
            (input, cached, output),
            "{name}"
        );
        assert_eq!(m.cache_storage_per_mtok_hour, storage, "{name}");
        // The implicit cache bills no write; the 1-hour column is the
        // creation of an explicit cached content held its default hour:
        // input, an hour of storage and the read of the request that made
        // it.
        let creation = storage.map_or(input, |s| input + cached + s);
        assert_eq!(r.cache_write_5m, input, "{name}");
        assert!((r.cache_write_1h - creation).abs() < 1e-12, "{name}");
        assert_eq!(m.min_cacheable_tokens, min, "{name}");
        assert_eq!(m.window_tokens(), 1_048_576, "{name}");
        let lc = m.long_context.map(|lc| {
            assert_eq!(lc.threshold_tokens, 200_000, "{name}");
            (lc.rates.input, lc.rates.cache_read, lc.rates.output)
        });
        assert_eq!(lc, long, "{name}");
    }
    for m in p
        .models()
        .iter()
        .filter(|m| m.provider == ProviderKind::Google)
    {
        assert!(GEMINI.iter().any(|f| f.0 == m.id), "{} not in GEMINI", m.id);
    }
    assert_eq!(
        p.lookup("gemini/gemini-2.5-pro").unwrap().id,
        "gemini-2.5-pro"
    );
    // Google's own id of 3 Flash.
    assert_eq!(
        p.lookup("gemini-3-flash-preview").unwrap().id,
        "gemini-3-flash"
    );
}

#[test]
fn openai_long_context_doubles_input_above_272k_tokens() {
    let p = Pricing::builtin();
    let m = p.lookup("gpt-5.4").unwrap();
    let at = |input: u64, read: u64| m.cost_usd(&Usage::new(input, 0, 0, read, 1_000_000), false);
    // 272,000 tokens of input: the standard rates.
    let base = at(172_000, 100_000);
    assert!(
        (base - (0.172 * 2.5 + 0.1 * 0.25 + 15.0)).abs() < 1e-9,
        "{base}"
    );
    // One more: the whole request, cached and output tokens too.
    let long = at(172_001, 100_000);
    assert!(
        (long - (0.172001 * 5.0 + 0.1 * 0.5 + 22.5)).abs() < 1e-9,
        "{long}"
    );
    assert!(p.lookup("gpt-4.1").unwrap().long_context.is_none());
}

#[test]
fn claude_4_family_tool_prompt_comes_from_the_table() {
    let p = Pricing::builtin();
    for id in [
        "claude-opus-4-20250514",
        "claude-sonnet-4-5",
        "claude-sonnet-4-6",
        "claude-haiku-4-5",
        "claude-opus-5",
    ] {
        let tp = p.lookup(id).unwrap().tool_prompt;
        assert_eq!(tp.tokens(ToolChoice::Auto), 346, "{id}");
        assert_eq!(tp.tokens(ToolChoice::None), 346, "{id}");
        assert_eq!(tp.tokens(ToolChoice::Any), 313, "{id}");
        assert_eq!(tp.tokens(ToolChoice::Tool), 313, "{id}");
    }
    let f = p.lookup("claude-sonnet-4-6").unwrap().framing;
    assert_eq!((f.per_message, f.per_block, f.per_tool), (4, 3, 8));
}

#[test]
fn aliases_and_dated_ids_resolve() {
    let p = Pricing::builtin();
    let id = |n: &str| {
        p.lookup(n)
            .map(|m| m.id.clone())
            .unwrap_or_else(|e| panic!("{e}"))
    };
    assert_eq!(id("claude-sonnet-4-5"), "claude-sonnet-4-5-20250929");
    assert_eq!(id("claude-opus-4-5"), "claude-opus-4-5-20251101");
    assert_eq!(id("claude-haiku-4-5"), "claude-haiku-4-5-20251001");
    assert_eq!(id("claude-opus-4-1"), "claude-opus-4-1-20250805");
    assert_eq!(id("claude-sonnet-4-0"), "claude-sonnet-4-20250514");
    assert_eq!(id("claude-4-sonnet-20250514"), "claude-sonnet-4-20250514");
    assert_eq!(id("claude-3-5-haiku-latest"), "claude-3-5-haiku-20241022");
    assert_eq!(id("CLAUDE-SONNET-4-6"), "claude-sonnet-4-6");
    assert_eq!(id("anthropic/claude-opus-4-6"), "claude-opus-4-6");
    assert_eq!(id("claude-opus-4-6-20260205"), "claude-opus-4-6");
    assert_eq!(id("claude-sonnet-4-6-latest"), "claude-sonnet-4-6");
    assert_eq!(id("claude-opus-4@20250514"), "claude-opus-4-20250514");
    assert_eq!(
        id("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
        "claude-sonnet-4-5-20250929"
    );
}

#[test]
fn unknown_model_lists_the_three_closest_ids() {
    let p = Pricing::builtin();
    let err = p.lookup("claude-sonet-4-5").unwrap_err();
    insta::assert_snapshot!(err.to_string(), @"unknown model `claude-sonet-4-5` (closest known: claude-sonnet-4-5, claude-sonnet-4-0, claude-sonnet-4-6)");
    let err = p.lookup("mistral-large").unwrap_err();
    match &err {
        PricingError::UnknownModel { closest, .. } => assert_eq!(closest.len(), 3),
        other => panic!("{other:?}"),
    }
    insta::assert_snapshot!(err.to_string(), @"unknown model `mistral-large` (closest known: nova-lite, gemini-4-argon, gpt-5-nano)");
}

fn usage(input: u64, w5: u64, w1: u64, read: u64, output: u64) -> Usage {
    Usage::new(input, w5, w1, read, output)
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn cost_matches_ccusage_formula() {
    let p = Pricing::builtin();
    let m = p.lookup("claude-sonnet-4-6").unwrap();
    let u = usage(1234, 5678, 910, 111_213, 1415);
    // ccusage: input·p_in + output·p_out + 5m·p_5m + 1h·(2·p_in) + read·p_read
    let expected = 1234.0 * 3e-6
        + 1415.0 * 15e-6
        + 5678.0 * 3.75e-6
        + 910.0 * (2.0 * 3e-6)
        + 111_213.0 * 0.3e-6;
    assert!(
        close(m.cost_usd(&u, false), expected),
        "{}",
        m.cost_usd(&u, false)
    );
    // Without a cache_creation breakdown all writes are 5m writes.
    let legacy = Usage {
        cache_creation: None,
        ..usage(0, 1000, 0, 0, 0)
    };
    assert!(close(m.cost_usd(&legacy, false), 1000.0 * 3.75e-6));
    let breakdown = m.cost_breakdown(&u, false);
    assert!(close(
        breakdown.total,
        breakdown.input
            + breakdown.output
            + breakdown.write_5m
            + breakdown.write_1h
            + breakdown.read
    ));
    assert!(!breakdown.long_context);
}

#[test]
fn long_context_premium_bills_the_whole_request_on_sonnet_4_and_4_5() {
    let p = Pricing::builtin();
    // 150K read + 40K 5m write + 20K input = 210K > 200K.
    let u = usage(20_000, 40_000, 0, 150_000, 1_000);
    for id in ["claude-sonnet-4-5", "claude-sonnet-4-20250514"] {
        let m = p.lookup(id).unwrap();
        let b = m.cost_breakdown(&u, false);
        assert!(b.long_context, "{id}");
        // $6 input, ×1.25 write, ×0.1 read, $22.50 output — output included.
        let expected = 20_000.0 * 6e-6 + 1_000.0 * 22.5e-6 + 40_000.0 * 7.5e-6 + 150_000.0 * 0.6e-6;
        assert!(close(b.total, expected), "{id}: {}", b.total);
        assert!(close(b.output, 1_000.0 * 22.5e-6));
        // 1h writes at 2× the premium input.
        let b1 = m.cost_breakdown(&usage(20_000, 0, 40_000, 150_000, 0), false);
        assert!(close(b1.write_1h, 40_000.0 * 12e-6));
    }
    // Exactly at the threshold: no premium.
    let m = p.lookup("claude-sonnet-4-5").unwrap();
    let at = usage(10_000, 40_000, 0, 150_000, 1_000);
    assert_eq!(at.total_input(), 200_000);
    assert!(!m.cost_breakdown(&at, false).long_context);
    // 4.6 and later: no premium.
    for id in ["claude-sonnet-4-6", "claude-sonnet-5", "claude-opus-4-6"] {
        let m = p.lookup(id).unwrap();
        assert!(!m.cost_breakdown(&u, false).long_context, "{id}");
    }
    let m46 = p.lookup("claude-sonnet-4-6").unwrap();
    let expected = 20_000.0 * 3e-6 + 1_000.0 * 15e-6 + 40_000.0 * 3.75e-6 + 150_000.0 * 0.3e-6;
    assert!(close(m46.cost_usd(&u, false), expected));
}

#[test]
fn batch_discount_halves_every_component_and_stacks() {
    let p = Pricing::builtin();
    let u = usage(20_000, 40_000, 5_000, 150_000, 1_000);
    for id in ["claude-sonnet-4-5", "claude-opus-4-6", "claude-fable-5-1"] {
        let m = p.lookup(id).unwrap();
        let full = m.cost_breakdown(&u, false);
        let batch = m.cost_breakdown(&u, true);
        assert!(close(batch.total, full.total * BATCH_DISCOUNT), "{id}");
        assert!(close(batch.read, full.read * 0.5));
        assert!(close(batch.write_1h, full.write_1h * 0.5));
        assert_eq!(batch.long_context, full.long_context);
    }
}

#[test]
fn usage_uses_the_api_field_names() {
    let u = usage(1, 2, 3, 4, 5);
    let json = serde_json::to_string(&u).unwrap();
    assert_eq!(
        json,
        r#"{"input_tokens":1,"cache_creation_input_tokens":5,"cache_read_input_tokens":4,"cache_creation":{"ephemeral_5m_input_tokens":2,"ephemeral_1h_input_tokens":3},"output_tokens":5}"#
    );
    let back: Usage = serde_json::from_str(&json).unwrap();
    assert_eq!(back, u);
    assert_eq!(
        back.cache_creation,
        Some(CacheCreation {
            ephemeral_5m_input_tokens: 2,
            ephemeral_1h_input_tokens: 3
        })
    );
}

/// A pricing file under `tests/fixtures/pricing/`.
fn fixture(name: &str) -> std::path::PathBuf {
    crate::util::fixture("pricing").join(name)
}

#[test]
fn litellm_file_imports_claude_chat_models() {
    let mut p = Pricing::builtin();
    let summary = p.merge_file(&fixture("litellm_small.json")).unwrap();
    assert_eq!(summary.format, "litellm");
    assert_eq!(
        summary.added,
        ["claude-opus-4-6-20260205", "claude-house-9", "gpt-house-1"]
    );
    assert_eq!(
        summary.updated,
        ["claude-sonnet-4-5-20250929", "claude-opus-4-6", "gpt-4o"]
    );
    // The format's sample, Bedrock's, Vertex's and Azure's entries, an
    // embedding model and an unpriced one.
    assert_eq!(summary.skipped, 6);
    // OpenAI's models: a known one keeps its read discount when the file
    // gives no read price; a new one is OpenAI's, with its window and the
    // long-context rates above 272K.
    let g = p.lookup("gpt-4o").unwrap();
    assert_eq!(
        (g.rates.input, g.rates.cache_read, g.rates.output),
        (2.5, 1.25, 10.0)
    );
    let h = p.lookup("gpt-house-1").unwrap();
    assert_eq!(h.provider, tracecost_engine::cache::ProviderKind::OpenAi);
    assert_eq!(
        (h.rates.input, h.rates.cache_read, h.rates.output),
        (2.0, 0.2, 16.0)
    );
    assert_eq!(h.rates.cache_write_5m, 2.0, "no write fee");
    assert_eq!(h.window_tokens(), 400_000);
    assert_eq!(h.framing.per_message, 3);
    let lc = h.long_context.unwrap();
    assert_eq!(lc.threshold_tokens, 272_000);
    assert_eq!(
        (lc.rates.input, lc.rates.cache_read, lc.rates.output),
        (4.0, 0.4, 24.0)
    );

    // Provider-prefixed key overrides the built-in model.
    let opus = p.lookup("claude-opus-4-6").unwrap();
    assert_eq!(opus.rates.input, 4.0);
    assert_eq!(opus.rates.cache_write_1h, 8.0);
    assert_eq!(opus.rates.cache_read, 0.4);
    // ... but keeps the built-in minimum (the file says 1024).
    assert_eq!(opus.min_cacheable_tokens, 4096);
    // A dated id becomes its own model, inheriting non-price data.
    let dated = p.lookup("claude-opus-4-6-20260205").unwrap();
    assert_eq!(dated.id, "claude-opus-4-6-20260205");
    assert_eq!(dated.rates.input, 5.0);
    assert_eq!(dated.min_cacheable_tokens, 4096);
    // Missing 1h cost → 2× input; min cacheable and tool prompt read.
    let house = p.lookup("claude-house-9").unwrap();
    assert_eq!(house.rates.input, 2.0);
    assert_eq!(house.rates.cache_write_5m, 2.5);
    assert_eq!(house.rates.cache_write_1h, 4.0);
    assert_eq!(house.rates.cache_read, 0.2);
    assert_eq!(house.rates.output, 10.0);
    assert_eq!(house.min_cacheable_tokens, 2048);
    assert_eq!(house.tool_prompt.tokens(ToolChoice::Auto), 300);
    assert!(house.long_context.is_none());
    // *_above_200k_tokens → long-context premium.
    let s45 = p.lookup("claude-sonnet-4-5").unwrap();
    let lc = s45.long_context.unwrap();
    assert_eq!(lc.threshold_tokens, 200_000);
    assert_eq!(
        (
            lc.rates.input,
            lc.rates.cache_write_5m,
            lc.rates.cache_write_1h,
            lc.rates.cache_read,
            lc.rates.output
        ),
        (6.0, 7.5, 12.0, 0.6, 22.5)
    );
    // Skipped entries did not sneak in (Azure's gpt-4o left the built-in
    // one as it was, above).
    assert_eq!(p.lookup("gpt-4o").unwrap().rates.input, 2.5);
    assert!(p.lookup("claude-embed-1").is_err());
    assert!(p.lookup("claude-unpriced-1").is_err());
    assert_eq!(
        p.lookup("claude-sonnet-4-5-20250929").unwrap().rates.input,
        3.0
    );
}

#[test]
fn native_file_overrides_and_adds() {
    let p = Pricing::with_file(&fixture("native.json")).unwrap();
    let s46 = p.lookup("claude-sonnet-4-6").unwrap();
    assert_eq!((s46.rates.input, s46.rates.output), (2.5, 12.0));
    // Only the given members change.
    assert_eq!(s46.rates.cache_read, 0.30);
    let house = p.lookup("house").unwrap();
    assert_eq!(house.id, "claude-house-1");
    assert_eq!(p.lookup("HOUSE-latest").unwrap().id, "claude-house-1");
    assert_eq!(
        (
            house.rates.cache_write_5m,
            house.rates.cache_write_1h,
            house.rates.cache_read
        ),
        (5.0, 8.0, 0.5)
    );
    assert_eq!(house.min_cacheable_tokens, 512);
    assert_eq!(house.tool_prompt.tokens(ToolChoice::Any), 350);
    assert_eq!(house.framing.per_message, 5);
    assert_eq!(house.framing.per_block, 3);
    let lc = house.long_context.unwrap();
    assert_eq!(lc.threshold_tokens, 100_000);
    assert_eq!(
        (lc.rates.input, lc.rates.cache_write_5m, lc.rates.output),
        (8.0, 10.0, 30.0)
    );
    // `"long_context": null` removes the premium.
    assert!(
        p.lookup("claude-sonnet-4-5")
            .unwrap()
            .long_context
            .is_none()
    );
    let rows = p.rows();
    assert_eq!(rows.last().unwrap().id, "claude-house-1");
    assert_eq!(rows.last().unwrap().aliases, ["house", "house-latest"]);
}

#[test]
fn models_rows_cover_the_table() {
    let p = Pricing::builtin();
    let rows = p.rows();
    // One row per price row: a model whose price changed has several.
    let price_rows: usize = p.models().iter().map(|m| m.rows().len()).sum();
    assert_eq!(rows.len(), price_rows);
    assert!(rows.len() > p.models().len());
    let luna: Vec<_> = rows.iter().filter(|r| r.id == "gpt-5.6-luna").collect();
    assert_eq!(luna.len(), 2);
    assert_eq!((luna[0].effective_from, luna[0].input), (None, 1.0));
    assert_eq!(
        luna[1].effective_from.map(|d| d.to_string()).as_deref(),
        Some("2026-07-30")
    );
    assert_eq!((luna[1].input, luna[1].window_tokens), (0.2, 1_050_000));
    let s45 = rows
        .iter()
        .find(|r| r.id == "claude-sonnet-4-5-20250929")
        .unwrap();
    assert_eq!(s45.aliases, ["claude-sonnet-4-5"]);
    assert_eq!(
        (s45.input, s45.write_5m, s45.write_1h, s45.read, s45.output),
        (3.0, Some(3.75), Some(6.0), 0.3, 15.0)
    );
    assert_eq!(s45.min_cacheable_tokens, 1024);
    insta::assert_snapshot!(s45.long_context.clone().unwrap(), @"above 200000 input tokens the whole request costs $6 in / $22.5 out per MTok");
    let s46 = rows.iter().find(|r| r.id == "claude-sonnet-4-6").unwrap();
    assert!(s46.long_context.is_none());
}

fn merge_err(text: &str) -> String {
    let mut p = Pricing::builtin();
    let before = p.clone();
    let err = p.merge_str(text, "prices.json").unwrap_err();
    assert_eq!(p, before, "a failed merge must leave the table unchanged");
    err.to_string()
}

#[test]
fn malformed_pricing_files_name_the_file_and_the_place() {
    insta::assert_snapshot!(
        merge_err("{\n  \"models\": {\n    \"claude-x\": { \"input\": 3, }\n  }\n}"),
        @"prices.json:3:31: invalid JSON: trailing comma"
    );
    insta::assert_snapshot!(merge_err("[1, 2]"), @"prices.json: at the top level: expected a JSON object (a tracecost pricing file with a `models` member, or LiteLLM's model_prices_and_context_window.json)");
    insta::assert_snapshot!(
        merge_err(r#"{"models": {"claude-x": {"input": "3", "output": 15}}}"#),
        @"prices.json: at /models/claude-x/input: expected a non-negative number"
    );
    insta::assert_snapshot!(
        merge_err(r#"{"models": {"claude-x": {"input": 3}}}"#),
        @"prices.json: at /models/claude-x/output: expected a price in USD per million tokens (required for a new model)"
    );
    insta::assert_snapshot!(
        merge_err(r#"{"models": {"claude-sonnet-4-6": {"inptu": 3}}}"#),
        @"prices.json: at /models/claude-sonnet-4-6/inptu: expected one of the members aliases, provider, context_window, effective_from, input, cache_write_5m, cache_write_1h, cache_read, output, min_cacheable_tokens, tool_prompt_tokens, framing, long_context, description"
    );
    insta::assert_snapshot!(
        merge_err(r#"{"models": {"claude-x": {"input": 1, "output": 2, "framing": {"per_message": -1}}}}"#),
        @"prices.json: at /models/claude-x/framing/per_message: expected a non-negative integer"
    );
    insta::assert_snapshot!(
        merge_err(r#"{"models": [] }"#),
        @"prices.json: at /models: expected an object mapping model ids to prices"
    );
    insta::assert_snapshot!(
        merge_err(r#"{"anthropic/claude-y": {"input_cost_per_token": -1e-6, "output_cost_per_token": 1e-5}}"#),
        @"prices.json: at /anthropic~1claude-y/input_cost_per_token: expected a non-negative number"
    );
    insta::assert_snapshot!(
        merge_err(r#"{"claude-y": {"input_cost_per_token": 1e-6, "output_cost_per_token": 1e-5, "prompt_cache_min_tokens": 1.5}}"#),
        @"prices.json: at /claude-y/prompt_cache_min_tokens: expected a non-negative integer"
    );
}

#[test]
fn missing_pricing_file_is_an_error_naming_it() {
    let err = Pricing::with_file(Path::new("/nonexistent/prices.json")).unwrap_err();
    assert!(matches!(err, PricingError::Io { .. }));
    assert!(
        err.to_string()
            .starts_with("/nonexistent/prices.json: cannot read pricing file: "),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.json");
    std::fs::write(&path, "{\"models\": {").unwrap();
    let err = Pricing::with_file(&path).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("{}:1:12: invalid JSON:", path.display())),
        "{err}"
    );
}

#[test]
fn litellm_gemini_rows_keep_a_known_storage_price_and_guess_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("litellm.json");
    std::fs::write(
        &path,
        serde_json::json!({
            "gemini/gemini-2.5-pro": {
                "litellm_provider": "gemini", "mode": "chat",
                "input_cost_per_token": 1.5e-6, "output_cost_per_token": 1.2e-5,
                "cache_read_input_token_cost": 1.5e-7
            },
            "gemini-9-house": {
                "litellm_provider": "gemini", "mode": "chat",
                "input_cost_per_token": 1e-6, "output_cost_per_token": 4e-6,
                "cache_read_input_token_cost": 1e-7
            }
        })
        .to_string(),
    )
    .unwrap();
    let mut p = Pricing::builtin();
    p.merge_file(&path).unwrap();
    // A known model keeps its storage price; its creation rate follows the
    // file's input and read prices.
    let pro = p.lookup("gemini-2.5-pro").unwrap();
    assert_eq!(pro.rates.input, 1.5);
    assert_eq!(pro.cache_storage_per_mtok_hour, Some(4.5));
    assert!((pro.rates.cache_write_1h - (1.5 + 0.15 + 4.5)).abs() < 1e-9);
    // A new one has none to go by: no explicit caching priced for it.
    let house = p.lookup("gemini-9-house").unwrap();
    assert_eq!(house.provider, ProviderKind::Google);
    assert_eq!(house.cache_storage_per_mtok_hour, None);
    assert_eq!(house.rates.cache_write_1h, house.rates.input);
}

/// LiteLLM's file as a pricing file of tracecost's own: every entry the
/// reader maps becomes its model's row from the fetch day on, so a call
/// that day is priced as the LiteLLM file prices it and a call the day
/// before as the built-in table did; new models keep their provider,
/// window and cache data; the file names its source, and the table
/// records the file's hash.
#[test]
fn litellm_becomes_a_native_file_in_force_from_the_fetch_day() {
    use tracecost_cost::pricing::{PriceDate, PriceSource, litellm_to_native};
    let text = std::fs::read_to_string(fixture("litellm_small.json")).unwrap();
    let day = PriceDate::parse("2026-12-06").unwrap();
    let source = PriceSource {
        url: "http://127.0.0.1/prices.json".into(),
        sha256: "ab12".into(),
        fetched: day,
    };
    let (native, summary) = litellm_to_native(&text, "litellm_small.json", source.clone()).unwrap();
    assert_eq!(summary.skipped, 6);
    assert_eq!(summary.source.as_ref(), Some(&source));
    // The same bytes on the same day: the same file.
    let (again, _) = litellm_to_native(&text, "litellm_small.json", source.clone()).unwrap();
    assert_eq!(native, again);

    let mut direct = Pricing::builtin();
    direct.merge_str(&text, "litellm_small.json").unwrap();
    let mut via = Pricing::builtin();
    let merged = via.merge_str(&native, "prices.json").unwrap();
    assert_eq!(merged.format, "native");
    assert_eq!(merged.source.as_ref(), Some(&source));
    let file = &via.files()[0];
    assert_eq!(file.path, "prices.json");
    assert_eq!(
        file.sha256,
        tracecost_engine::handle::sha256_hex(native.as_bytes())
    );
    assert_eq!(file.source.as_ref(), Some(&source));

    let builtin = Pricing::builtin();
    let before = PriceDate::parse("2026-12-05").unwrap();
    for id in [
        "claude-sonnet-4-5-20250929",
        "claude-opus-4-6",
        "gpt-4o",
        "claude-opus-4-6-20260205",
        "claude-house-9",
        "gpt-house-1",
    ] {
        let (d, v) = (direct.lookup(id).unwrap(), via.lookup(id).unwrap());
        let (want, got) = (d.newest(), v.row_on(day));
        assert_eq!(
            (got.rates, got.long_context),
            (want.rates, want.long_context),
            "{id}"
        );
        assert_eq!(v.provider, d.provider, "{id}");
        assert_eq!(v.window_tokens(), d.window_tokens(), "{id}");
        assert_eq!(v.min_cacheable_tokens, d.min_cacheable_tokens, "{id}");
        assert_eq!(v.framing, d.framing, "{id}");
        // A new model has only the row fetched, whatever day it is asked of.
        if direct.lookup(id).is_ok() && builtin.lookup(id).is_err() {
            assert_eq!(v.rows().len(), 1, "{id}");
            assert_eq!(v.row_on(before).rates, want.rates, "{id} before the fetch");
        }
        if let Ok(b) = builtin.lookup(id).map(|b| b.row_on(before))
            && builtin.lookup(id).unwrap().id == v.id
        {
            assert_eq!(v.row_on(before).rates, b.rates, "{id} before the fetch");
        }
    }
    // A tracecost pricing file is not LiteLLM's.
    let err = litellm_to_native(&native, "prices.json", source).unwrap_err();
    assert!(
        err.to_string().starts_with("prices.json: at /models:"),
        "{err}"
    );
}

/// One case per class of bad value in a native file, each with its whole
/// message: the file, the JSON pointer, what was expected.
#[test]
fn native_file_errors_name_each_bad_value() {
    let cases: &[(&str, &str)] = &[
        // Wrong type.
        (
            r#"{"models": {"claude-sonnet-4-6": {"aliases": ["s", 4]}}}"#,
            "prices.json: at /models/claude-sonnet-4-6/aliases/1: expected a string",
        ),
        (
            r#"{"models": {"claude-sonnet-4-6": {"tool_prompt_tokens": null}}}"#,
            "prices.json: at /models/claude-sonnet-4-6/tool_prompt_tokens: expected an object with members auto_none, any_tool",
        ),
        (
            r#"{"description": 1, "models": {}}"#,
            "prices.json: at /description: expected a string",
        ),
        (
            r#"{"models": {"claude-sonnet-4-6": 3}}"#,
            "prices.json: at /models/claude-sonnet-4-6: expected an object of prices, or a non-empty array of them (one per effective date)",
        ),
        (
            r#"{"models": {"claude-sonnet-4-6": [{"input": 1}, 2]}}"#,
            "prices.json: at /models/claude-sonnet-4-6/1: expected an object of prices",
        ),
        // Negative or absurd price.
        (
            r#"{"models": {"claude-sonnet-4-6": {"cache_read": -0.5}}}"#,
            "prices.json: at /models/claude-sonnet-4-6/cache_read: expected a non-negative number",
        ),
        (
            r#"{"models": {"claude-sonnet-4-6": {"long_context": {"input": 6, "output": 2e7}}}}"#,
            "prices.json: at /models/claude-sonnet-4-6/long_context/output: expected a price of at most 1000000 USD per million tokens, found 2e7",
        ),
        (
            r#"{"models": {"claude-sonnet-4-6": {"context_window": 100000001}}}"#,
            "prices.json: at /models/claude-sonnet-4-6/context_window: expected a token count of at most 100000000, found 100000001",
        ),
        // Bad date.
        (
            r#"{"models": {"claude-sonnet-4-6": {"effective_from": "2026-02-30"}}}"#,
            "prices.json: at /models/claude-sonnet-4-6/effective_from: expected a date, YYYY-MM-DD (UTC)",
        ),
        (
            r#"{"source": {"url": "u", "sha256": "h", "fetched": "yesterday"}, "models": {}}"#,
            "prices.json: at /source/fetched: expected a date, YYYY-MM-DD (UTC)",
        ),
        (
            r#"{"source": {"url": "u", "fetched": "2026-01-01"}, "models": {}}"#,
            "prices.json: at /source/sha256: expected a string",
        ),
        // Unknown member, at each level.
        (
            r#"{"models": {"claude-sonnet-4-6": {"framing": {"per_msg": 1}}}}"#,
            "prices.json: at /models/claude-sonnet-4-6/framing/per_msg: expected one of the members per_message, per_block, per_tool",
        ),
        (
            r#"{"models": {"claude-sonnet-4-6": {"long_context": {"input": 1, "output": 2, "in~put/x": 3}}}}"#,
            "prices.json: at /models/claude-sonnet-4-6/long_context/in~0put~1x: expected one of the members threshold_tokens, input, cache_write_5m, cache_write_1h, cache_read, output",
        ),
        (
            r#"{"source": {"url": "u", "sha256": "h", "fetched": "2026-01-01", "by": "me"}, "models": {}}"#,
            "prices.json: at /source/by: expected one of the members url, sha256, fetched",
        ),
        // The provider and the window are checked before unknown members.
        (
            r#"{"models": {"claude-sonnet-4-6": {"inptu": 1, "provider": "openai"}}}"#,
            "prices.json: at /models/claude-sonnet-4-6/provider: expected the model's own provider, anthropic",
        ),
        // The top level's members in file order.
        (
            r#"{"currency": "EUR", "description": 1, "models": {}}"#,
            "prices.json: at /currency: expected no such member (a tracecost pricing file has `models` and an optional `description` and `source`)",
        ),
        // Required members.
        (
            r#"{"models": {"claude-sonnet-4-6": {"long_context": {"input": 6}}}}"#,
            "prices.json: at /models/claude-sonnet-4-6/long_context/output: expected a price in USD per million tokens",
        ),
        (
            r#"{"models": {"claude-x": {"output": "2"}}}"#,
            "prices.json: at /models/claude-x/output: expected a non-negative number",
        ),
        (
            r#"{"models": {" ": {"input": 1, "output": 2}}}"#,
            "prices.json: at /models/ : expected a non-empty model id",
        ),
        // Duplicate key, anywhere in the document.
        (
            "{\"models\": {\"claude-x\": {\"input\": 1, \"output\": 2, \"input\": 3}}}",
            "prices.json:1:57: invalid JSON: the key \"input\" appears twice in one object",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(&merge_err(text), expected, "{text}");
    }
}

/// `null` is an absent price or count, and removes the long-context tier.
#[test]
fn native_file_nulls_are_absent_or_remove_the_tier() {
    let mut p = Pricing::builtin();
    let before = p.lookup("claude-sonnet-4-5").unwrap().clone();
    assert!(before.long_context.is_some());
    p.merge_str(
        r#"{"models": {"claude-sonnet-4-5": {"input": null, "context_window": null, "effective_from": null, "long_context": null}}}"#,
        "prices.json",
    )
    .unwrap();
    let after = p.lookup("claude-sonnet-4-5").unwrap();
    assert_eq!(after.rates, before.rates);
    assert_eq!(after.context_window, before.context_window);
    assert!(after.long_context.is_none());
}

/// LiteLLM's entries: a bad value is refused where the reader reads it,
/// at its own pointer; an entry the reader skips is never refused.
#[test]
fn litellm_errors_name_the_member_read() {
    let cases: &[(&str, &str)] = &[
        (
            r#"{"openai/gpt-9": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "input_cost_per_token_above_272k_tokens": 2e-6, "cache_read_input_token_cost_above_272k_tokens": "x"}}"#,
            "prices.json: at /openai~1gpt-9/cache_read_input_token_cost_above_272k_tokens: expected a non-negative number",
        ),
        (
            r#"{"gpt-9": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "max_input_tokens": -5}}"#,
            "prices.json: at /gpt-9/max_input_tokens: expected a non-negative integer",
        ),
        (
            r#"{"claude-y": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "cache_creation_input_token_cost_above_1hr": 2}}"#,
            "prices.json: at /claude-y/cache_creation_input_token_cost_above_1hr: expected a price of at most 1 USD per token, found 2e0",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(&merge_err(text), expected, "{text}");
    }
    // Skipped: not a model tracecost prices, or no input price; and an
    // entry whose labels are not strings is still read.
    let mut p = Pricing::builtin();
    let s = p
        .merge_str(
            r#"{"mistral-x": {"input_cost_per_token": "x"}, "claude-z": {"output_cost_per_token": 1e-6, "max_input_tokens": "x"}, "claude-w": {"input_cost_per_token": 1e-6, "output_cost_per_token": 2e-6, "mode": 3}}"#,
            "prices.json",
        )
        .unwrap();
    assert_eq!(
        (s.skipped, s.added.as_slice()),
        (2, &["claude-w".to_string()][..])
    );
}

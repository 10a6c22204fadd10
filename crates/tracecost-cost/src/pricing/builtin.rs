//! The built-in price table, as data: one entry per model of the project's
//! provider facts (prices in USD per million tokens; see the parent
//! module's docs for what each column means).

use super::{
    Framing, LONG_CONTEXT_THRESHOLD, LongContext, ModelPrice, Multipliers, PriceDate, PriceRow,
    Rates, ToolPrompt,
};
use tracecost_engine::cache::ProviderKind;

/// One row of the table.
struct Entry {
    id: &'static str,
    aliases: &'static [&'static str],
    rates: Rates,
    min_cacheable_tokens: u64,
    tool_prompt: ToolPrompt,
    long_context: Option<LongContext>,
    /// The day this row took effect (`None`: the model's first row).
    since: Option<PriceDate>,
    /// Input tokens one request may send (`None`: the 200K / 1M rule of
    /// [`ModelPrice::window_tokens`]).
    window: Option<u64>,
    fast: Option<f64>,
    regional: Option<f64>,
}

const fn rates(
    input: f64,
    cache_write_5m: f64,
    cache_write_1h: f64,
    cache_read: f64,
    output: f64,
) -> Rates {
    Rates {
        input,
        cache_write_5m,
        cache_write_1h,
        cache_read,
        output,
    }
}

const OPUS_4: Rates = rates(15.0, 18.75, 30.0, 1.50, 75.0);
const OPUS_45: Rates = rates(5.0, 6.25, 10.0, 0.50, 25.0);
const SONNET_4: Rates = rates(3.0, 3.75, 6.0, 0.30, 15.0);
const SONNET_5: Rates = rates(2.0, 2.50, 4.0, 0.20, 10.0);
const FABLE_5: Rates = rates(10.0, 12.50, 20.0, 1.00, 50.0);
const FABLE_51: Rates = rates(10.0, 12.50, 20.0, 0.25, 50.0);
const FABLE_52: Rates = rates(8.0, 10.0, 16.0, 0.20, 40.0);

/// The Claude 4 family's tool-use prompt (and Claude 3.7 Sonnet's).
const C4_TOOLS: ToolPrompt = ToolPrompt {
    auto_none: 346,
    any_tool: 313,
};
/// Claude 3 / 3.5 Haiku's tool-use prompt.
const HAIKU3_TOOLS: ToolPrompt = ToolPrompt {
    auto_none: 264,
    any_tool: 340,
};

/// Sonnet 4 / 4.5 above 200K tokens of input.
const SONNET_LONG_CONTEXT: Option<LongContext> = Some(LongContext {
    threshold_tokens: LONG_CONTEXT_THRESHOLD,
    rates: rates(6.0, 7.5, 12.0, 0.6, 22.5),
});

/// Anthropic's regional premium: Bedrock's regional (`us.`, `eu.`, …)
/// profiles and a first-party `inference_geo` other than global cost 1.1×
/// from the Claude 4.5 models on (LiteLLM's `us.` rows of Opus 4.6/4.7;
/// AWS's Claude Platform data-residency page; Vertex's regional premium
/// from Sonnet 4.5 on).
const REGIONAL: Option<f64> = Some(1.1);

/// The Claude 4.6 and later window (Anthropic's model pages: 1M tokens).
const MILLION: Option<u64> = Some(1_000_000);

const fn claude(id: &'static str, rates: Rates, min_cacheable_tokens: u64) -> Entry {
    Entry {
        id,
        aliases: &[],
        rates,
        min_cacheable_tokens,
        tool_prompt: C4_TOOLS,
        long_context: None,
        since: None,
        window: None,
        fast: None,
        regional: None,
    }
}

/// Claude's models, from Anthropic's pricing page and model overviews
/// (platform.claude.com, December 2026) unless a row says otherwise. A
/// model listed twice changed price: the second row's `since` is the day.
const TABLE: &[Entry] = &[
    Entry {
        aliases: &["claude-opus-4-0", "claude-opus-4", "claude-4-opus-20250514"],
        ..claude("claude-opus-4-20250514", OPUS_4, 1024)
    },
    Entry {
        aliases: &["claude-opus-4-1"],
        ..claude("claude-opus-4-1-20250805", OPUS_4, 1024)
    },
    Entry {
        aliases: &["claude-opus-4-5"],
        regional: REGIONAL,
        ..claude("claude-opus-4-5-20251101", OPUS_45, 4096)
    },
    // Fast mode of Opus 4.6 / 4.7: 6× (LiteLLM's `provider_specific_entry`;
    // no Anthropic page found).
    Entry {
        window: MILLION,
        fast: Some(6.0),
        regional: REGIONAL,
        ..claude("claude-opus-4-6", OPUS_45, 4096)
    },
    Entry {
        window: MILLION,
        fast: Some(6.0),
        regional: REGIONAL,
        ..claude("claude-opus-4-7", OPUS_45, 2048)
    },
    // Fast mode $10 / $50 (2×; a third-party cheat sheet, LiteLLM).
    Entry {
        window: MILLION,
        fast: Some(2.0),
        regional: REGIONAL,
        ..claude("claude-opus-4-8", OPUS_45, 1024)
    },
    // Fast mode 2× (OpenRouter's and Vercel's `claude-opus-5-fast` at
    // $10 / $50).
    Entry {
        window: MILLION,
        fast: Some(2.0),
        regional: REGIONAL,
        ..claude("claude-opus-5", OPUS_45, 512)
    },
    // Released 2026-09-22 (zh-CN opus-5-5 overview). Fast mode $8 / $40
    // (2×, third-party only). Minimum cacheable length not documented:
    // Opus 5's.
    Entry {
        window: MILLION,
        fast: Some(2.0),
        regional: REGIONAL,
        ..claude("claude-opus-5-5", rates(4.0, 5.0, 8.0, 0.20, 20.0), 512)
    },
    Entry {
        aliases: &[
            "claude-sonnet-4-0",
            "claude-sonnet-4",
            "claude-4-sonnet-20250514",
        ],
        long_context: SONNET_LONG_CONTEXT,
        ..claude("claude-sonnet-4-20250514", SONNET_4, 1024)
    },
    Entry {
        aliases: &["claude-sonnet-4-5"],
        long_context: SONNET_LONG_CONTEXT,
        regional: REGIONAL,
        ..claude("claude-sonnet-4-5-20250929", SONNET_4, 1024)
    },
    Entry {
        window: MILLION,
        regional: REGIONAL,
        ..claude("claude-sonnet-4-6", SONNET_4, 1024)
    },
    Entry {
        aliases: &["claude-3-7-sonnet-latest", "claude-3-7-sonnet"],
        ..claude("claude-3-7-sonnet-20250219", SONNET_4, 1024)
    },
    Entry {
        window: MILLION,
        regional: REGIONAL,
        ..claude("claude-sonnet-5", SONNET_5, 1024)
    },
    // The zh-CN sonnet-5-5 overview: Sonnet 5's card at launch. The cache
    // read cut to $0.10 on 2026-10-07 is from third parties (claudit
    // v1.9.2, PromptFuel v1.0.23, claude-usage v1.5.7); no Anthropic page
    // with the date was found. Minimum cacheable length not documented:
    // Sonnet 5's.
    Entry {
        window: MILLION,
        regional: REGIONAL,
        ..claude("claude-sonnet-5-5", SONNET_5, 1024)
    },
    Entry {
        window: MILLION,
        regional: REGIONAL,
        since: Some(PriceDate::ymd(2026, 10, 7)),
        ..claude("claude-sonnet-5-5", rates(2.0, 2.50, 4.0, 0.10, 10.0), 1024)
    },
    Entry {
        aliases: &["claude-haiku-4-5"],
        regional: REGIONAL,
        ..claude(
            "claude-haiku-4-5-20251001",
            rates(1.0, 1.25, 2.0, 0.10, 5.0),
            4096,
        )
    },
    // The haiku-5-5 overview (released 2026-10-07): every rate 5× for a
    // prompt over 100,000 tokens (input + cache reads + cache writes).
    // Minimum cacheable length not documented: Haiku 4.5's.
    Entry {
        window: MILLION,
        regional: REGIONAL,
        long_context: Some(LongContext {
            threshold_tokens: 100_000,
            rates: rates(0.50, 0.625, 1.0, 0.05, 2.50),
        }),
        ..claude(
            "claude-haiku-5-5",
            rates(0.10, 0.125, 0.20, 0.01, 0.50),
            4096,
        )
    },
    Entry {
        aliases: &["claude-3-5-haiku-latest", "claude-3-5-haiku"],
        tool_prompt: HAIKU3_TOOLS,
        ..claude(
            "claude-3-5-haiku-20241022",
            rates(0.80, 1.0, 1.60, 0.08, 4.0),
            2048,
        )
    },
    Entry {
        aliases: &["claude-3-haiku"],
        tool_prompt: HAIKU3_TOOLS,
        ..claude(
            "claude-3-haiku-20240307",
            rates(0.25, 0.30, 0.50, 0.03, 1.25),
            2048,
        )
    },
    // Mythos 5 / 5.1 share Fable 5 / 5.1's rows on the pricing page.
    Entry {
        window: MILLION,
        regional: REGIONAL,
        ..claude("claude-fable-5", FABLE_5, 512)
    },
    Entry {
        window: MILLION,
        regional: REGIONAL,
        ..claude("claude-mythos-5", FABLE_5, 512)
    },
    Entry {
        window: MILLION,
        regional: REGIONAL,
        ..claude("claude-fable-5-1", FABLE_51, 512)
    },
    Entry {
        window: MILLION,
        regional: REGIONAL,
        ..claude("claude-mythos-5-1", FABLE_51, 512)
    },
    // Fable 5.2 (2026-11-09): $8 / $40, read $0.20, from third parties
    // only (laozhang's announcement; claude-usage v1.5.7 for Mythos 5.2);
    // the writes at the standard 1.25× / 2× of input. Not verified on an
    // Anthropic page.
    Entry {
        window: MILLION,
        regional: REGIONAL,
        ..claude("claude-fable-5-2", FABLE_52, 512)
    },
    Entry {
        window: MILLION,
        regional: REGIONAL,
        ..claude("claude-mythos-5-2", FABLE_52, 512)
    },
];

/// One OpenAI model: USD per million tokens of input, cached input
/// (a read) and output, its context window, and its long-context rates.
struct OpenAiEntry {
    id: &'static str,
    input: f64,
    cached: f64,
    output: f64,
    window: u64,
    /// Above 272K tokens of input (GPT-5.4 and later): the whole request
    /// at these input, cached and output rates.
    long: Option<(f64, f64, f64)>,
    /// Accepts only 24-hour cache retention (GPT-5.5 and later).
    extended_only: bool,
    /// Caches at breakpoints and bills writes (GPT-5.6 and later): the
    /// 30-minute write at 1.25× input, the 12-hour write at this multiple
    /// of input.
    breakpoints: Option<f64>,
    /// Accepts `reasoning.context` (GPT-5.6 and later; OpenRouter's
    /// reference of OpenAI's parameter: "Only supported by OpenAI GPT-5.6
    /// and newer"), which Codex sends as `all_turns`: the reasoning of
    /// earlier turns stays in the prompt. Earlier models drop it.
    reasoning_context: bool,
    /// The day this row took effect (`None`: the model's first row).
    since: Option<PriceDate>,
    /// Fast (`priority`) and Flex tiers, as multiples of Standard.
    fast: Option<f64>,
    flex: Option<f64>,
}

const fn oa(id: &'static str, input: f64, cached: f64, output: f64, window: u64) -> OpenAiEntry {
    OpenAiEntry {
        id,
        input,
        cached,
        output,
        window,
        long: None,
        extended_only: false,
        breakpoints: None,
        reasoning_context: false,
        since: None,
        fast: None,
        flex: None,
    }
}

/// OpenAI's long-context threshold: input tokens above which (strictly)
/// the whole request pays the long-context rates.
pub const OPENAI_LONG_CONTEXT_THRESHOLD: u64 = 272_000;

/// GPT-5.6's 12-hour write: the same price as the 30-minute one (Azure
/// Foundry's prompt-caching page: "Prompt cache pricing is the same for
/// both retention policies").
const GPT56_CACHE: Option<f64> = Some(super::WRITE_5M_MULTIPLIER);
/// GPT-6.x's 12-hour write at 2.5× input: the gpt-6.2-sol page ($5 for a
/// $2 input) and gpt-6.1-terra's ($2.50 for $1).
const GPT6_CACHE: Option<f64> = Some(2.5);
/// The most input a GPT-6.x request may send (the gpt-6.2-sol page: a
/// 1,050,000 window, 922,000 max input tokens).
const GPT6_WINDOW: u64 = 922_000;

/// OpenAI's models, from OpenAI's pricing page
/// (developers.openai.com/api/docs/pricing, November 2026) and its model
/// pages: reads at the "cached input" price (0.5× input for gpt-4o, 0.25×
/// for GPT-4.1, o3 and o4-mini, 0.1× for GPT-5.x, 0.05× for GPT-6.1 and
/// 6.2), the window in input tokens; no write fee before GPT-5.6, 1.25×
/// input from GPT-5.6 on (whose cache works at breakpoints). A model
/// listed twice changed price: the second row's `since` is the day.
const OPENAI_TABLE: &[OpenAiEntry] = &[
    // GPT-6.2 Sol (the model page): long context doubles input and cache
    // rates and 1.5× output; Fast 2× (Ultrafast 3×, not a field records
    // read here).
    OpenAiEntry {
        long: Some((4.0, 0.2, 15.0)),
        breakpoints: GPT6_CACHE,
        reasoning_context: true,
        fast: Some(2.0),
        ..oa("gpt-6.2-sol", 2.0, 0.1, 10.0, GPT6_WINDOW)
    },
    // Third parties only (laozhang, TokenMeter v0.17.0, LiteLLM discussion
    // #52347); not verified on an OpenAI page.
    OpenAiEntry {
        breakpoints: GPT6_CACHE,
        reasoning_context: true,
        ..oa("gpt-6.2-astra", 8.0, 0.4, 40.0, GPT6_WINDOW)
    },
    // Third parties citing the model page (Codex-Manager 0.4.7, apiyi):
    // Fast/priority 2×, Flex 0.5×.
    OpenAiEntry {
        long: Some((4.0, 0.2, 15.0)),
        breakpoints: GPT6_CACHE,
        reasoning_context: true,
        fast: Some(2.0),
        flex: Some(0.5),
        ..oa("gpt-6.1-sol", 2.0, 0.1, 10.0, GPT6_WINDOW)
    },
    // LiteLLM's blog, apidog: $1 / $0.05 / $5, 12-hour write $2.50.
    OpenAiEntry {
        breakpoints: GPT6_CACHE,
        reasoning_context: true,
        ..oa("gpt-6.1-terra", 1.0, 0.05, 5.0, GPT6_WINDOW)
    },
    // GPT-6 (2026-09-22): third parties only (codexometer v0.18.4,
    // codex-token-meter v0.2.22, PromptFuel v1.0.19).
    OpenAiEntry {
        breakpoints: GPT6_CACHE,
        reasoning_context: true,
        ..oa("gpt-6-sol", 2.0, 0.2, 10.0, GPT6_WINDOW)
    },
    OpenAiEntry {
        breakpoints: GPT6_CACHE,
        reasoning_context: true,
        ..oa("gpt-6-luna", 0.1, 0.01, 0.5, GPT6_WINDOW)
    },
    OpenAiEntry {
        breakpoints: GPT6_CACHE,
        reasoning_context: true,
        ..oa("gpt-6-astra", 10.0, 1.0, 50.0, GPT6_WINDOW)
    },
    // GPT-5.6 (2026-07-09), window 1,050,000 (the model pages). Sol's
    // promotion ($4 / $0.40 / $20, "at least until Nov 21, 2026" on the
    // pt-BR sol page) from 2026-08-21 (PromptFuel v1.0.17; OpenAI's page
    // gives no start day); no page says it ended, so it is the newest row.
    // Its long-context rates keep the page's 2× input / 1.5× output rule.
    OpenAiEntry {
        long: Some((10.0, 1.0, 45.0)),
        breakpoints: GPT56_CACHE,
        reasoning_context: true,
        ..oa("gpt-5.6", 5.0, 0.5, 30.0, 1_050_000)
    },
    OpenAiEntry {
        long: Some((8.0, 0.8, 30.0)),
        breakpoints: GPT56_CACHE,
        reasoning_context: true,
        since: Some(PriceDate::ymd(2026, 8, 21)),
        ..oa("gpt-5.6", 4.0, 0.4, 20.0, 1_050_000)
    },
    OpenAiEntry {
        long: Some((10.0, 1.0, 45.0)),
        breakpoints: GPT56_CACHE,
        reasoning_context: true,
        ..oa("gpt-5.6-sol", 5.0, 0.5, 30.0, 1_050_000)
    },
    OpenAiEntry {
        long: Some((8.0, 0.8, 30.0)),
        breakpoints: GPT56_CACHE,
        reasoning_context: true,
        since: Some(PriceDate::ymd(2026, 8, 21)),
        ..oa("gpt-5.6-sol", 4.0, 0.4, 20.0, 1_050_000)
    },
    // Terra and Luna were cut on 2026-07-30 (the de-DE terra page and the
    // luna page give the new prices; the day is laozhang's announcement
    // and PromptFuel v1.0.19): Terra by 20%, Luna by 80%.
    OpenAiEntry {
        long: Some((5.0, 0.5, 22.5)),
        breakpoints: GPT56_CACHE,
        reasoning_context: true,
        ..oa("gpt-5.6-terra", 2.5, 0.25, 15.0, 1_050_000)
    },
    OpenAiEntry {
        long: Some((4.0, 0.4, 18.0)),
        breakpoints: GPT56_CACHE,
        reasoning_context: true,
        since: Some(PriceDate::ymd(2026, 7, 30)),
        ..oa("gpt-5.6-terra", 2.0, 0.2, 12.0, 1_050_000)
    },
    OpenAiEntry {
        long: Some((2.0, 0.2, 9.0)),
        breakpoints: GPT56_CACHE,
        reasoning_context: true,
        ..oa("gpt-5.6-luna", 1.0, 0.1, 6.0, 1_050_000)
    },
    OpenAiEntry {
        long: Some((0.4, 0.04, 1.8)),
        breakpoints: GPT56_CACHE,
        reasoning_context: true,
        since: Some(PriceDate::ymd(2026, 7, 30)),
        ..oa("gpt-5.6-luna", 0.2, 0.02, 1.2, 1_050_000)
    },
    OpenAiEntry {
        long: Some((10.0, 1.0, 45.0)),
        extended_only: true,
        ..oa("gpt-5.5", 5.0, 0.5, 30.0, 1_050_000)
    },
    OpenAiEntry {
        long: Some((5.0, 0.5, 22.5)),
        ..oa("gpt-5.4", 2.5, 0.25, 15.0, 1_050_000)
    },
    // Window 1,050,000 per LiteLLM (no OpenAI page re-read).
    oa("gpt-5.4-mini", 0.75, 0.075, 4.5, 1_050_000),
    oa("gpt-5.4-nano", 0.2, 0.02, 1.25, 1_050_000),
    oa("gpt-5.3-codex", 1.75, 0.175, 14.0, 272_000),
    oa("gpt-5.2", 1.75, 0.175, 14.0, 272_000),
    oa("gpt-5.2-codex", 1.75, 0.175, 14.0, 272_000),
    oa("gpt-5.1", 1.25, 0.125, 10.0, 272_000),
    oa("gpt-5.1-codex", 1.25, 0.125, 10.0, 272_000),
    oa("gpt-5.1-codex-max", 1.25, 0.125, 10.0, 272_000),
    oa("gpt-5.1-codex-mini", 0.25, 0.025, 2.0, 272_000),
    oa("gpt-5", 1.25, 0.125, 10.0, 272_000),
    oa("gpt-5-codex", 1.25, 0.125, 10.0, 272_000),
    oa("gpt-5-mini", 0.25, 0.025, 2.0, 272_000),
    oa("gpt-5-nano", 0.05, 0.005, 0.4, 272_000),
    oa("gpt-4.1", 2.0, 0.5, 8.0, 1_047_576),
    oa("gpt-4.1-mini", 0.4, 0.1, 1.6, 1_047_576),
    oa("gpt-4.1-nano", 0.1, 0.025, 0.4, 1_047_576),
    oa("gpt-4o", 2.5, 1.25, 10.0, 128_000),
    oa("gpt-4o-mini", 0.15, 0.075, 0.6, 128_000),
    oa("o3", 2.0, 0.5, 8.0, 200_000),
    oa("o4-mini", 1.1, 0.275, 4.4, 200_000),
    oa("o3-mini", 1.1, 0.55, 4.4, 200_000),
];

/// OpenAI's framing, from its token-counting guide (OpenAI Cookbook, "How
/// to count tokens with tiktoken", for gpt-4o and later): 3 tokens per
/// message (`<|start|>`, the role, `<|end|>`); a message's content parts
/// are concatenated, with no delimiters of their own; 7 per function
/// definition and 12 once for the block of them (the `func_init` and
/// `func_end` of the guide), counted here as the tool prompt.
const OPENAI_FRAMING: Framing = Framing {
    per_message: 3,
    per_block: 0,
    per_tool: 7,
};
const OPENAI_TOOLS: ToolPrompt = ToolPrompt {
    auto_none: 12,
    any_tool: 12,
};

/// One Gemini model: USD per million tokens of input, cached input and
/// output, the minimum for caching, the rates above 200K tokens of prompt
/// where the model has them, and the storage of explicit cached contents
/// (USD per million tokens per hour) where the pricing page gives it.
struct GeminiEntry {
    id: &'static str,
    aliases: &'static [&'static str],
    input: f64,
    cached: f64,
    output: f64,
    minimum: u64,
    long: Option<(f64, f64, f64)>,
    storage: Option<f64>,
    /// The day this row took effect (`None`: the model's first row).
    since: Option<PriceDate>,
}

/// Gemini's long-context threshold (prompt tokens, strict `>`).
pub const GEMINI_LONG_CONTEXT_THRESHOLD: u64 = 200_000;

/// Gemini's models, from Google's Gemini API pricing page (standard tier,
/// November 2026) and the caching minimums of its caching guide (2026-10:
/// 2,048 for Gemini 2.5, 4,096 for 3.x and 4 Argon); window 1,048,576
/// input tokens each. Storage: $4.50 per million tokens per hour on the
/// Pro models, $1.00 on 2.5 Flash, 2.5 Flash-Lite and 3 Flash; the page
/// gives none for 3.5 to 3.8 Flash. A model listed twice changed price:
/// the second row's `since` is the day.
const fn gm(
    id: &'static str,
    input: f64,
    cached: f64,
    output: f64,
    minimum: u64,
    long: Option<(f64, f64, f64)>,
    storage: Option<f64>,
) -> GeminiEntry {
    GeminiEntry {
        id,
        aliases: &[],
        input,
        cached,
        output,
        minimum,
        long,
        storage,
        since: None,
    }
}

const GEMINI_TABLE: &[GeminiEntry] = &[
    // Gemini 4 Argon (the latest-model page): $2 / $10 through
    // 2026-11-30, then $4 / $20; the cached input $0.10 then $0.20 (LiteLLM
    // discussion #46238). Implicit caching only, so no storage price.
    gm("gemini-4-argon", 2.0, 0.1, 10.0, 4096, None, None),
    GeminiEntry {
        since: Some(PriceDate::ymd(2026, 12, 1)),
        ..gm("gemini-4-argon", 4.0, 0.2, 20.0, 4096, None, None)
    },
    // Third parties only (TokenMeter v0.17.0); not verified on a Google
    // page.
    gm("gemini-4-neon", 3.0, 0.15, 15.0, 4096, None, None),
    gm("gemini-4-hydrogen", 1.5, 0.075, 7.5, 4096, None, None),
    gm(
        "gemini-3.1-pro-preview",
        2.0,
        0.2,
        12.0,
        4096,
        Some((4.0, 0.4, 18.0)),
        Some(4.5),
    ),
    gm(
        "gemini-3-pro-preview",
        2.0,
        0.2,
        12.0,
        4096,
        Some((4.0, 0.4, 18.0)),
        Some(4.5),
    ),
    // 3.8 Flash (the pricing page): $0.75 / $3.75, read $0.075, through
    // 2026-12-31, then $1.50 / $7.50 (its read at the same 0.1×).
    gm("gemini-3.8-flash", 0.75, 0.075, 3.75, 4096, None, None),
    GeminiEntry {
        since: Some(PriceDate::ymd(2027, 1, 1)),
        ..gm("gemini-3.8-flash", 1.5, 0.15, 7.5, 4096, None, None)
    },
    // 3.7 Flash: $0.75 / $3.75 from a third party (LiteLLM discussion
    // #36799), the read at 0.1×; the promotion's end is not known.
    gm("gemini-3.7-flash", 0.75, 0.075, 3.75, 4096, None, None),
    gm("gemini-3.6-flash", 1.5, 0.15, 7.5, 4096, None, None),
    gm("gemini-3.5-flash", 1.5, 0.15, 9.0, 4096, None, None),
    // 3.5 Flash-Lite (the pricing page): $0.30 / $2.50; the read at 0.1×
    // (not on the page).
    gm("gemini-3.5-flash-lite", 0.3, 0.03, 2.5, 4096, None, None),
    // Google's own id for 3 Flash is `gemini-3-flash-preview`.
    GeminiEntry {
        aliases: &["gemini-3-flash-preview"],
        ..gm("gemini-3-flash", 0.5, 0.05, 3.0, 4096, None, Some(1.0))
    },
    gm(
        "gemini-2.5-pro",
        1.25,
        0.125,
        10.0,
        2048,
        Some((2.5, 0.25, 15.0)),
        Some(4.5),
    ),
    gm("gemini-2.5-flash", 0.3, 0.03, 2.5, 2048, None, Some(1.0)),
    gm(
        "gemini-2.5-flash-lite",
        0.1,
        0.01,
        0.4,
        2048,
        None,
        Some(1.0),
    ),
];

/// One Amazon Nova model on Bedrock: USD per million tokens of input,
/// cached input and output, and its window. From LiteLLM's price file
/// (PRICES.md); no AWS page was re-read, so these are unverified. Nova
/// bills no cache write; the v1 models' read price is not in LiteLLM's
/// rows and is taken at 0.25× input (AWS's 75% discount on cached reads,
/// not verified).
struct NovaEntry {
    id: &'static str,
    aliases: &'static [&'static str],
    input: f64,
    cached: f64,
    output: f64,
    window: u64,
}

const NOVA_TABLE: &[NovaEntry] = &[
    NovaEntry {
        id: "amazon.nova-micro",
        aliases: &["nova-micro"],
        input: 0.035,
        cached: 0.00875,
        output: 0.14,
        window: 128_000,
    },
    NovaEntry {
        id: "amazon.nova-lite",
        aliases: &["nova-lite"],
        input: 0.06,
        cached: 0.015,
        output: 0.24,
        window: 300_000,
    },
    NovaEntry {
        id: "amazon.nova-pro",
        aliases: &["nova-pro"],
        input: 0.8,
        cached: 0.2,
        output: 3.2,
        window: 300_000,
    },
    NovaEntry {
        id: "amazon.nova-2-lite",
        aliases: &["nova-2-lite"],
        input: 0.3,
        cached: 0.075,
        output: 2.5,
        window: 1_000_000,
    },
    NovaEntry {
        id: "amazon.nova-2-pro-preview",
        aliases: &["nova-2-pro-preview"],
        input: 2.1875,
        cached: 0.546875,
        output: 17.5,
        window: 1_000_000,
    },
];

/// Gemini's prompt format is not public; OpenAI's counting guide's framing
/// is the starting point calibration corrects.
const GEMINI_FRAMING: Framing = OPENAI_FRAMING;

/// The table's models, in table order: Claude's with the default framing,
/// then OpenAI's, Gemini's and Amazon Nova's; a model listed more than
/// once is one model whose later rows took effect on their days.
pub(super) fn models() -> Vec<ModelPrice> {
    let claude = TABLE.iter().map(|e| ModelPrice {
        id: e.id.to_string(),
        aliases: e.aliases.iter().map(|a| a.to_string()).collect(),
        rates: e.rates,
        min_cacheable_tokens: e.min_cacheable_tokens,
        tool_prompt: e.tool_prompt,
        framing: Framing::default(),
        long_context: e.long_context,
        effective_from: e.since,
        earlier: Vec::new(),
        modifiers: Multipliers {
            fast: e.fast,
            regional: e.regional,
            flex: None,
        },
        provider: ProviderKind::Anthropic,
        context_window: e.window,
        extended_cache_only: false,
        breakpoint_cache: false,
        keeps_earlier_reasoning: true,
        cache_storage_per_mtok_hour: None,
    });
    let openai = OPENAI_TABLE.iter().map(|e| ModelPrice {
        id: e.id.to_string(),
        aliases: Vec::new(),
        rates: openai_write_rates(e.input, e.cached, e.output, e.breakpoints),
        min_cacheable_tokens: crate::automatic_cache::MIN_CACHED_TOKENS,
        tool_prompt: OPENAI_TOOLS,
        framing: OPENAI_FRAMING,
        long_context: e.long.map(|(input, cached, output)| LongContext {
            threshold_tokens: OPENAI_LONG_CONTEXT_THRESHOLD,
            rates: openai_write_rates(input, cached, output, e.breakpoints),
        }),
        effective_from: e.since,
        earlier: Vec::new(),
        modifiers: Multipliers {
            fast: e.fast,
            regional: None,
            flex: e.flex,
        },
        provider: ProviderKind::OpenAi,
        context_window: Some(e.window),
        extended_cache_only: e.extended_only,
        breakpoint_cache: e.breakpoints.is_some(),
        keeps_earlier_reasoning: e.reasoning_context,
        cache_storage_per_mtok_hour: None,
    });
    let gemini = GEMINI_TABLE.iter().map(|e| ModelPrice {
        id: e.id.to_string(),
        aliases: e.aliases.iter().map(|a| a.to_string()).collect(),
        rates: gemini_rates(e.input, e.cached, e.output, e.storage),
        min_cacheable_tokens: e.minimum,
        tool_prompt: ToolPrompt {
            auto_none: 0,
            any_tool: 0,
        },
        framing: GEMINI_FRAMING,
        long_context: e.long.map(|(input, cached, output)| LongContext {
            threshold_tokens: GEMINI_LONG_CONTEXT_THRESHOLD,
            rates: gemini_rates(input, cached, output, e.storage),
        }),
        effective_from: e.since,
        earlier: Vec::new(),
        modifiers: Multipliers::default(),
        provider: ProviderKind::Google,
        context_window: Some(1_048_576),
        extended_cache_only: false,
        breakpoint_cache: false,
        keeps_earlier_reasoning: true,
        cache_storage_per_mtok_hour: e.storage,
    });
    // Nova's framing and tool prompt are not public: OpenAI's counting
    // guide's as for Gemini, corrected by calibration. Bedrock's cache
    // points and its 1,024-token minimum (AWS's prompt-caching page).
    let nova = NOVA_TABLE.iter().map(|e| ModelPrice {
        id: e.id.to_string(),
        aliases: e.aliases.iter().map(|a| a.to_string()).collect(),
        rates: openai_rates(e.input, e.cached, e.output),
        min_cacheable_tokens: 1024,
        tool_prompt: OPENAI_TOOLS,
        framing: GEMINI_FRAMING,
        long_context: None,
        effective_from: None,
        earlier: Vec::new(),
        modifiers: Multipliers::default(),
        provider: ProviderKind::BedrockConverse,
        context_window: Some(e.window),
        extended_cache_only: false,
        breakpoint_cache: false,
        keeps_earlier_reasoning: true,
        cache_storage_per_mtok_hour: None,
    });
    fold_dated_rows(claude.chain(openai).chain(gemini).chain(nova))
}

/// Folds the rows of a model listed more than once into one model: each
/// later row becomes the model's prices and the earlier ones its history.
fn fold_dated_rows(rows: impl Iterator<Item = ModelPrice>) -> Vec<ModelPrice> {
    let mut out: Vec<ModelPrice> = Vec::new();
    for row in rows {
        match out.last_mut() {
            Some(m) if m.id == row.id => {
                m.earlier.push(PriceRow {
                    from: m.effective_from,
                    rates: m.rates,
                    long_context: m.long_context,
                });
                m.rates = row.rates;
                m.long_context = row.long_context;
                m.effective_from = row.effective_from;
            }
            _ => out.push(row),
        }
    }
    out
}

/// OpenAI's rates: where the model caches at breakpoints, the 30-minute
/// write (the 5-minute column) at 1.25× input and the 12-hour write (the
/// 1-hour column, [`crate::openai_breakpoints`]) at the model's multiple;
/// else no write fee.
const fn openai_write_rates(
    input: f64,
    cached: f64,
    output: f64,
    breakpoints: Option<f64>,
) -> Rates {
    match breakpoints {
        Some(long) => rates(
            input,
            input * super::WRITE_5M_MULTIPLIER,
            input * long,
            cached,
            output,
        ),
        None => openai_rates(input, cached, output),
    }
}

/// Gemini's rates: no write fee for the implicit cache (a 5-minute write is
/// billed as input; none is reported), and in the 1-hour column the
/// creation of an explicit cached content held its default hour, where the
/// storage price is known ([`super::explicit_write_rate`]).
pub(super) fn gemini_rates(input: f64, cached: f64, output: f64, storage: Option<f64>) -> Rates {
    let write = storage.map_or(input, |s| super::explicit_write_rate(input, cached, s));
    rates(input, input, write, cached, output)
}

/// Rates with no write fee, as OpenAI's automatic cache and Gemini's
/// implicit one bill (a write is billed as input, and neither reports
/// any).
pub(super) const fn openai_rates(input: f64, cached: f64, output: f64) -> Rates {
    rates(input, input, input, cached, output)
}

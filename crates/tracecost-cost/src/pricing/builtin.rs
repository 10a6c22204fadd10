//! The built-in price table, as data: one entry per model of the project's
//! provider facts (prices in USD per million tokens; see the parent
//! module's docs for what each column means).

use super::{Framing, LONG_CONTEXT_THRESHOLD, LongContext, ModelPrice, Rates, ToolPrompt};
use crate::engine::cache::ProviderKind;

/// One row of the table.
struct Entry {
    id: &'static str,
    aliases: &'static [&'static str],
    rates: Rates,
    min_cacheable_tokens: u64,
    tool_prompt: ToolPrompt,
    long_context: Option<LongContext>,
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

const TABLE: [Entry; 17] = [
    Entry {
        id: "claude-opus-4-20250514",
        aliases: &["claude-opus-4-0", "claude-opus-4", "claude-4-opus-20250514"],
        rates: OPUS_4,
        min_cacheable_tokens: 1024,
        tool_prompt: C4_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-opus-4-1-20250805",
        aliases: &["claude-opus-4-1"],
        rates: OPUS_4,
        min_cacheable_tokens: 1024,
        tool_prompt: C4_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-opus-4-5-20251101",
        aliases: &["claude-opus-4-5"],
        rates: OPUS_45,
        min_cacheable_tokens: 4096,
        tool_prompt: C4_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-opus-4-6",
        aliases: &[],
        rates: OPUS_45,
        min_cacheable_tokens: 4096,
        tool_prompt: C4_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-opus-4-7",
        aliases: &[],
        rates: OPUS_45,
        min_cacheable_tokens: 2048,
        tool_prompt: C4_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-opus-4-8",
        aliases: &[],
        rates: OPUS_45,
        min_cacheable_tokens: 1024,
        tool_prompt: C4_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-opus-5",
        aliases: &[],
        rates: OPUS_45,
        min_cacheable_tokens: 512,
        tool_prompt: C4_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-sonnet-4-20250514",
        aliases: &[
            "claude-sonnet-4-0",
            "claude-sonnet-4",
            "claude-4-sonnet-20250514",
        ],
        rates: SONNET_4,
        min_cacheable_tokens: 1024,
        tool_prompt: C4_TOOLS,
        long_context: SONNET_LONG_CONTEXT,
    },
    Entry {
        id: "claude-sonnet-4-5-20250929",
        aliases: &["claude-sonnet-4-5"],
        rates: SONNET_4,
        min_cacheable_tokens: 1024,
        tool_prompt: C4_TOOLS,
        long_context: SONNET_LONG_CONTEXT,
    },
    Entry {
        id: "claude-sonnet-4-6",
        aliases: &[],
        rates: SONNET_4,
        min_cacheable_tokens: 1024,
        tool_prompt: C4_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-3-7-sonnet-20250219",
        aliases: &["claude-3-7-sonnet-latest", "claude-3-7-sonnet"],
        rates: SONNET_4,
        min_cacheable_tokens: 1024,
        tool_prompt: C4_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-sonnet-5",
        aliases: &[],
        rates: rates(2.0, 2.50, 4.0, 0.20, 10.0),
        min_cacheable_tokens: 1024,
        tool_prompt: C4_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-haiku-4-5-20251001",
        aliases: &["claude-haiku-4-5"],
        rates: rates(1.0, 1.25, 2.0, 0.10, 5.0),
        min_cacheable_tokens: 4096,
        tool_prompt: C4_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-3-5-haiku-20241022",
        aliases: &["claude-3-5-haiku-latest", "claude-3-5-haiku"],
        rates: rates(0.80, 1.0, 1.60, 0.08, 4.0),
        min_cacheable_tokens: 2048,
        tool_prompt: HAIKU3_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-3-haiku-20240307",
        aliases: &["claude-3-haiku"],
        rates: rates(0.25, 0.30, 0.50, 0.03, 1.25),
        min_cacheable_tokens: 2048,
        tool_prompt: HAIKU3_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-fable-5",
        aliases: &[],
        rates: rates(10.0, 12.50, 20.0, 1.00, 50.0),
        min_cacheable_tokens: 512,
        tool_prompt: C4_TOOLS,
        long_context: None,
    },
    Entry {
        id: "claude-fable-5-1",
        aliases: &[],
        rates: rates(10.0, 12.50, 20.0, 0.25, 50.0),
        min_cacheable_tokens: 512,
        tool_prompt: C4_TOOLS,
        long_context: None,
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
    /// Caches at breakpoints and bills writes at 1.25× input (GPT-5.6 and
    /// later).
    breakpoints: bool,
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
        breakpoints: false,
    }
}

/// OpenAI's long-context threshold: input tokens above which (strictly)
/// the whole request pays the long-context rates.
pub const OPENAI_LONG_CONTEXT_THRESHOLD: u64 = 272_000;

/// OpenAI's models, from OpenAI's pricing page
/// (developers.openai.com/api/docs/pricing, November 2026): reads at the
/// "cached input" price (0.5× input for gpt-4o, 0.25× for GPT-4.1, o3 and
/// o4-mini, 0.1× for GPT-5.x), the window in input tokens; no write fee
/// before GPT-5.6, 1.25× input from GPT-5.6 on (whose cache works at
/// breakpoints).
const OPENAI_TABLE: [OpenAiEntry; 27] = [
    OpenAiEntry {
        long: Some((10.0, 1.0, 45.0)),
        breakpoints: true,
        ..oa("gpt-5.6", 5.0, 0.5, 30.0, 1_050_000)
    },
    OpenAiEntry {
        long: Some((10.0, 1.0, 45.0)),
        breakpoints: true,
        ..oa("gpt-5.6-sol", 5.0, 0.5, 30.0, 400_000)
    },
    OpenAiEntry {
        long: Some((5.0, 0.5, 22.5)),
        breakpoints: true,
        ..oa("gpt-5.6-terra", 2.5, 0.25, 15.0, 400_000)
    },
    OpenAiEntry {
        long: Some((2.0, 0.2, 9.0)),
        breakpoints: true,
        ..oa("gpt-5.6-luna", 1.0, 0.1, 6.0, 400_000)
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
    oa("gpt-5.4-mini", 0.75, 0.075, 4.5, 400_000),
    oa("gpt-5.4-nano", 0.2, 0.02, 1.25, 400_000),
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
    input: f64,
    cached: f64,
    output: f64,
    minimum: u64,
    long: Option<(f64, f64, f64)>,
    storage: Option<f64>,
}

/// Gemini's long-context threshold (prompt tokens, strict `>`).
pub const GEMINI_LONG_CONTEXT_THRESHOLD: u64 = 200_000;

/// Gemini's models, from Google's Gemini API pricing page (standard tier,
/// November 2026) and the caching minimums of its caching guide (2026-10:
/// 2,048 for Gemini 2.5, 4,096 for 3.x); window 1,048,576 input tokens
/// each. Storage: $4.50 per million tokens per hour on the Pro models,
/// $1.00 on 2.5 Flash, 2.5 Flash-Lite and 3 Flash; the page gives none for
/// 3.5 and 3.6 Flash.
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
        input,
        cached,
        output,
        minimum,
        long,
        storage,
    }
}

const GEMINI_TABLE: [GeminiEntry; 8] = [
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
    gm("gemini-3.6-flash", 1.5, 0.15, 7.5, 4096, None, None),
    gm("gemini-3.5-flash", 1.5, 0.15, 9.0, 4096, None, None),
    gm("gemini-3-flash", 0.5, 0.05, 3.0, 4096, None, Some(1.0)),
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

/// Gemini's prompt format is not public; OpenAI's counting guide's framing
/// is the starting point calibration corrects.
const GEMINI_FRAMING: Framing = OPENAI_FRAMING;

/// The table's models, in table order: Claude's with the default framing,
/// then OpenAI's, then Gemini's.
pub(super) fn models() -> Vec<ModelPrice> {
    let claude = TABLE.iter().map(|e| ModelPrice {
        id: e.id.to_string(),
        aliases: e.aliases.iter().map(|a| a.to_string()).collect(),
        rates: e.rates,
        min_cacheable_tokens: e.min_cacheable_tokens,
        tool_prompt: e.tool_prompt,
        framing: Framing::default(),
        long_context: e.long_context,
        provider: ProviderKind::Anthropic,
        context_window: None,
        extended_cache_only: false,
        breakpoint_cache: false,
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
        provider: ProviderKind::OpenAi,
        context_window: Some(e.window),
        extended_cache_only: e.extended_only,
        breakpoint_cache: e.breakpoints,
        cache_storage_per_mtok_hour: None,
    });
    let gemini = GEMINI_TABLE.iter().map(|e| ModelPrice {
        id: e.id.to_string(),
        aliases: Vec::new(),
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
        provider: ProviderKind::Google,
        context_window: Some(1_048_576),
        extended_cache_only: false,
        breakpoint_cache: false,
        cache_storage_per_mtok_hour: e.storage,
    });
    claude.chain(openai).chain(gemini).collect()
}

/// OpenAI's rates, with GPT-5.6's write at 1.25× input where the model
/// caches at breakpoints.
const fn openai_write_rates(input: f64, cached: f64, output: f64, breakpoints: bool) -> Rates {
    let write = if breakpoints {
        input * super::WRITE_5M_MULTIPLIER
    } else {
        input
    };
    rates(input, write, write, cached, output)
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

//! The built-in price table, as data: one entry per model of the project's
//! provider facts (prices in USD per million tokens; see the parent
//! module's docs for what each column means).

use super::{Framing, LONG_CONTEXT_THRESHOLD, LongContext, ModelPrice, Rates, ToolPrompt};

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

/// The table's models, in table order, each with the default framing.
pub(super) fn models() -> Vec<ModelPrice> {
    TABLE
        .iter()
        .map(|e| ModelPrice {
            id: e.id.to_string(),
            aliases: e.aliases.iter().map(|a| a.to_string()).collect(),
            rates: e.rates,
            min_cacheable_tokens: e.min_cacheable_tokens,
            tool_prompt: e.tool_prompt,
            framing: Framing::default(),
            long_context: e.long_context,
        })
        .collect()
}

//! Prices and per-model data, and the bill for one request.
//!
//! # The built-in table
//!
//! [`Pricing::builtin`] is an offline table of every Claude model in the
//! project's provider facts, in USD per million tokens: base input, 5-minute
//! cache write (1.25× input), 1-hour cache write (2× input), cache read
//! (0.1× input; 0.025× for Fable 5.1) and output; and of OpenAI's models
//! before GPT-5.6 (GPT-5.x, GPT-4.1, 4o, o3, o4-mini; see `builtin`):
//! input, cached input (a read), output, no write fee (both write columns
//! are the input price), the model's context window, and for GPT-5.4 and
//! 5.5 the long-context rates above 272,000 tokens. Each model knows its
//! provider ([`ModelPrice::provider`]): whose cache simulator, framing and
//! usage fields apply. Each model also carries:
//!
//! - its **minimum cacheable length** (prefix tokens up to a breakpoint below
//!   which nothing is cached);
//! - the **tool-use system prompt** the API adds when tools are present
//!   (Claude 4 family and later: 346 tokens for `tool_choice` auto/none, 313
//!   for any/tool; Claude 3.7 Sonnet the same; Claude 3 / 3.5 Haiku 264 /
//!   340, from Anthropic's tool-use pricing table);
//! - **framing overheads**: tokens the API's prompt rendering adds around
//!   content that a content-only count misses. Claude's tokenizer and prompt
//!   format are not public, so these are small, documented starting points
//!   that per-trace calibration corrects: **4 per message** (a role marker
//!   and turn separator, like the 3–4 tokens per message of OpenAI's
//!   published chat format), **3 per content block** (block delimiters; the
//!   block's own JSON or text is counted separately), **8 per tool
//!   definition** (the wrapper around each definition inside the tool-use
//!   prompt; the definition's JSON is counted separately);
//! - the **long-context premium** of Sonnet 4 / 4.5: when read + write +
//!   uncached input exceed 200,000 tokens, every token of that request,
//!   output included, is billed at $6 input / $22.50 output, cache
//!   multipliers on top. 4.6 and later models have none.
//!
//! Multipliers on base input (used for defaults when a pricing file omits a
//! cache price) are [`WRITE_5M_MULTIPLIER`], [`WRITE_1H_MULTIPLIER`] and
//! [`READ_MULTIPLIER`]; the Batch API discount [`BATCH_DISCOUNT`] stacks with
//! all of them and with the long-context premium.
//!
//! # Model names
//!
//! [`Pricing::lookup`] accepts ids and aliases case-insensitively and every
//! provider form of them ([`model_id`]): proxy and router prefixes
//! (`openai/`, `openrouter/anthropic/`, `bedrock/`, `vertex_ai/`), Bedrock
//! regional profiles (`us.`, `eu.`, `apac.`, `global.`, …; given back by
//! [`Pricing::lookup_id`]) and vendor parts (`anthropic.`, `amazon.`),
//! Bedrock `-v1` / `-v1:0` and Vertex `@date` suffixes, dated ids of a model
//! listed without a date (`claude-opus-4-6-20260205`, `gpt-4o-2024-08-06`)
//! or aliases with `-latest`, and a version's dots written as dashes or the
//! other way round (`gpt-5-1-codex`, `claude-opus-4.6`). A name that lands
//! on no model (or on several) is an unknown model: an error that lists the
//! three closest known names by edit distance, never a guess.
//!
//! # Pricing files (`--pricing FILE`)
//!
//! [`Pricing::merge_file`] adds models to the table or overrides them. Two
//! formats are recognised by their shape:
//!
//! **Native format**: an object with a `models` member (an optional
//! `description` string is allowed), prices in USD per million tokens:
//!
//! ```json
//! {
//!   "models": {
//!     "claude-sonnet-4-6": { "input": 2.5, "output": 12 },
//!     "claude-house-1": {
//!       "aliases": ["house"],
//!       "input": 4, "cache_write_5m": 5, "cache_write_1h": 8,
//!       "cache_read": 0.4, "output": 20,
//!       "min_cacheable_tokens": 1024,
//!       "tool_prompt_tokens": { "auto_none": 346, "any_tool": 313 },
//!       "framing": { "per_message": 4, "per_block": 3, "per_tool": 8 },
//!       "long_context": { "threshold_tokens": 200000, "input": 8, "output": 30 }
//!     }
//!   }
//! }
//! ```
//!
//! Every member is optional for a model that already exists (only the given
//! members change; `"long_context": null` removes a premium). A new model
//! needs `input` and `output`; omitted cache prices default to the
//! multipliers above, and the other data is inherited from the model its name
//! resolves to (e.g. a dated id of a known model), or else defaults (1024
//! minimum cacheable tokens, 346/313 tool prompt, the framing above). Unknown
//! members are errors, so typos do not pass silently.
//!
//! **LiteLLM's `model_prices_and_context_window.json`**: any other object.
//! Anthropic's entries are read when their key, after an optional
//! `anthropic/` prefix, starts with `claude`, their `litellm_provider` (if
//! given) is `anthropic` and their `mode` (if given) is `chat`. OpenAI's
//! are read when their key, after an optional `openai/` prefix, starts with
//! `gpt-`, `codex` or `o` and a digit, their provider is `openai` and their
//! mode `chat` or `responses`: `input_cost_per_token`,
//! `cache_read_input_token_cost` (else a known model's discount, else
//! none), `cache_creation_input_token_cost` (GPT-5.6's write; else no fee),
//! `output_cost_per_token`, the `*_above_272k_tokens` variants (the whole
//! request above 272,000 tokens) and, for a new model, `max_input_tokens`
//! as its window. Entries without
//! `input_cost_per_token` and `output_cost_per_token` are skipped. Prices are
//! per token: `input_cost_per_token`, `output_cost_per_token`,
//! `cache_creation_input_token_cost` (5m; default 1.25× input),
//! `cache_creation_input_token_cost_above_1hr` (1h; default 2× input),
//! `cache_read_input_token_cost` (default 0.1× input) and the
//! `*_above_200k_tokens` variants (a long-context premium above 200,000
//! tokens). An entry naming a known model replaces its prices only; for a
//! new model, `prompt_cache_min_tokens` and `tool_use_system_prompt_tokens`
//! (the auto/none size) are read too. (LiteLLM's minimums disagree with the
//! provider docs for some models, e.g. 2048 for Opus 4.8, so known models
//! keep the built-in data; use the native format to change it on purpose.)
//!
//! Errors name the file and the place: `FILE:LINE:COLUMN` for JSON syntax,
//! `FILE: at /json/pointer` for a value of the wrong shape, and what was
//! expected.
//!
//! # Layout
//!
//! This module holds the types and the bill of one request; `builtin` holds
//! the built-in table as data, `lookup` the [`Pricing`] table and its name
//! resolution, `file` the pricing-file parsers.

mod builtin;
mod file;
mod lookup;

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use crate::engine::cache::ProviderKind;

pub use lookup::{ModelId, Pricing, model_id};

/// 5-minute cache write price as a multiple of base input.
pub const WRITE_5M_MULTIPLIER: f64 = 1.25;
/// 1-hour cache write price as a multiple of base input.
pub const WRITE_1H_MULTIPLIER: f64 = 2.0;
/// Cache read price as a multiple of base input (most models).
pub const READ_MULTIPLIER: f64 = 0.1;
/// The Batch API price as a fraction of the normal price.
pub const BATCH_DISCOUNT: f64 = 0.5;
/// Long-context threshold of Sonnet 4 / 4.5 (total input tokens, strict `>`).
pub const LONG_CONTEXT_THRESHOLD: u64 = 200_000;
/// The context window of a model without the long-context option (tokens of
/// input); a request over it is refused.
pub const CONTEXT_WINDOW: u64 = 200_000;
/// The context window of a model with the long-context option.
pub const LONG_CONTEXT_WINDOW: u64 = 1_000_000;
/// The highest price a pricing file may give: $1 per token. Above it a
/// figure is a typo or a corrupt file, and would overflow the cost sums.
pub const MAX_PRICE_PER_MTOK: f64 = 1_000_000.0;
/// The largest token count a pricing file may give (framing, tool prompt,
/// thresholds): more than any context window by two orders of magnitude.
/// Larger counts would overflow the per-call token sums.
pub const MAX_FILE_TOKENS: u64 = 100_000_000;

/// Prices in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rates {
    /// Uncached input.
    pub input: f64,
    /// 5-minute cache write.
    pub cache_write_5m: f64,
    /// 1-hour cache write.
    pub cache_write_1h: f64,
    /// Cache read.
    pub cache_read: f64,
    /// Output.
    pub output: f64,
}

impl Rates {
    /// Rates with the standard cache multipliers on `input`.
    pub fn from_input_output(input: f64, output: f64) -> Self {
        Self {
            input,
            cache_write_5m: input * WRITE_5M_MULTIPLIER,
            cache_write_1h: input * WRITE_1H_MULTIPLIER,
            cache_read: input * READ_MULTIPLIER,
            output,
        }
    }
}

/// A long-context premium: above `threshold_tokens` of total input (read +
/// write + uncached), the whole request is billed at `rates`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LongContext {
    /// Total input tokens above which (strictly) the premium applies.
    pub threshold_tokens: u64,
    /// The premium rates (USD per million tokens).
    pub rates: Rates,
}

/// Framing tokens the provider's prompt rendering adds around content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Framing {
    /// Per message (role marker, turn separator).
    pub per_message: u64,
    /// Per content block (block delimiters).
    pub per_block: u64,
    /// Per tool definition (wrapper inside the tool-use prompt).
    pub per_tool: u64,
}

impl Default for Framing {
    /// 4 per message, 3 per block, 8 per tool (see the module docs).
    fn default() -> Self {
        Self {
            per_message: 4,
            per_block: 3,
            per_tool: 8,
        }
    }
}

/// The request's `tool_choice`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ToolChoice {
    /// `auto` (the default).
    #[default]
    Auto,
    /// `none`.
    None,
    /// `any`.
    Any,
    /// A named tool.
    Tool,
}

/// Size of the tool-use system prompt the API adds when tools are present.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ToolPrompt {
    /// Tokens for `tool_choice` auto or none.
    pub auto_none: u64,
    /// Tokens for `tool_choice` any or a named tool.
    pub any_tool: u64,
}

impl Default for ToolPrompt {
    /// The Claude 4 family's 346 / 313.
    fn default() -> Self {
        Self {
            auto_none: 346,
            any_tool: 313,
        }
    }
}

impl ToolPrompt {
    /// Tokens added for `choice`.
    pub fn tokens(&self, choice: ToolChoice) -> u64 {
        match choice {
            ToolChoice::Auto | ToolChoice::None => self.auto_none,
            ToolChoice::Any | ToolChoice::Tool => self.any_tool,
        }
    }
}

/// Everything this crate knows about one model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelPrice {
    /// Canonical id.
    pub id: String,
    /// Other names that resolve to it.
    pub aliases: Vec<String>,
    /// Standard rates.
    pub rates: Rates,
    /// Minimum prefix tokens up to a breakpoint for anything to be cached.
    pub min_cacheable_tokens: u64,
    /// Tool-use system prompt size.
    pub tool_prompt: ToolPrompt,
    /// Framing overheads.
    pub framing: Framing,
    /// Long-context premium, if the model has one.
    pub long_context: Option<LongContext>,
    /// Whose API serves it: whose cache rules, framing and usage fields
    /// apply.
    #[serde(skip)]
    pub provider: ProviderKind,
    /// Input tokens one request may send, where the model says (else the
    /// Anthropic rule of [`ModelPrice::window_tokens`]).
    #[serde(skip)]
    pub context_window: Option<u64>,
    /// OpenAI: the model accepts only extended (24 h) cache retention
    /// (GPT-5.5 and later), so its automatic cache holds prefixes a day.
    #[serde(skip)]
    pub extended_cache_only: bool,
    /// OpenAI: the model caches at breakpoints and bills writes (GPT-5.6
    /// and later, [`crate::openai_breakpoints`]), not by the automatic
    /// prefix cache of the earlier models.
    #[serde(skip)]
    pub breakpoint_cache: bool,
    /// Gemini: the storage price of explicit cached contents, USD per
    /// million tokens per hour (`None`: not known, so explicit caching is
    /// not simulated for the model).
    #[serde(skip)]
    pub cache_storage_per_mtok_hour: Option<f64>,
}

/// What creating a Gemini explicit cached content costs per million of its
/// tokens, as a rate of the 1-hour write column: the standard input price,
/// an hour of storage (the default TTL,
/// [`crate::explicit_cache::TTL_MS`]) and the cached read of the request
/// that created it, which the simulator reports as the write.
pub fn explicit_write_rate(input: f64, cached: f64, storage_per_hour: f64) -> f64 {
    input + cached + storage_per_hour
}

/// The `cache_control` breakdown of a [`Usage`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CacheCreation {
    /// Tokens written with a 5-minute TTL.
    #[serde(default, deserialize_with = "null_as_zero")]
    pub ephemeral_5m_input_tokens: u64,
    /// Tokens written with a 1-hour TTL.
    #[serde(default, deserialize_with = "null_as_zero")]
    pub ephemeral_1h_input_tokens: u64,
}

/// Token usage of one response, with the Messages API's field names.
///
/// Missing or `null` counts read as 0; unknown members (`service_tier`, …)
/// are ignored. Total input is `input_tokens + cache_creation_input_tokens +
/// cache_read_input_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Uncached input: tokens after the last breakpoint.
    #[serde(default, deserialize_with = "null_as_zero")]
    pub input_tokens: u64,
    /// Cache writes, all TTLs.
    #[serde(default, deserialize_with = "null_as_zero")]
    pub cache_creation_input_tokens: u64,
    /// Cache reads.
    #[serde(default, deserialize_with = "null_as_zero")]
    pub cache_read_input_tokens: u64,
    /// The write split by TTL; absent in older records, in which case all
    /// writes count as 5-minute writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_creation: Option<CacheCreation>,
    /// Output tokens.
    #[serde(default, deserialize_with = "null_as_zero")]
    pub output_tokens: u64,
}

fn null_as_zero<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    Ok(Option::<u64>::deserialize(d)?.unwrap_or(0))
}

impl Usage {
    /// A usage with the given split (the write total is their sum).
    pub fn new(input: u64, write_5m: u64, write_1h: u64, read: u64, output: u64) -> Self {
        Self {
            input_tokens: input,
            cache_creation_input_tokens: write_5m + write_1h,
            cache_read_input_tokens: read,
            cache_creation: Some(CacheCreation {
                ephemeral_5m_input_tokens: write_5m,
                ephemeral_1h_input_tokens: write_1h,
            }),
            output_tokens: output,
        }
    }

    /// 5-minute writes (all writes when there is no breakdown).
    pub fn write_5m(&self) -> u64 {
        match self.cache_creation {
            Some(c) => c.ephemeral_5m_input_tokens,
            None => self.cache_creation_input_tokens,
        }
    }

    /// 1-hour writes (0 when there is no breakdown).
    pub fn write_1h(&self) -> u64 {
        self.cache_creation
            .map_or(0, |c| c.ephemeral_1h_input_tokens)
    }

    /// Read + write + uncached input.
    pub fn total_input(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }
}

/// Cost of one request by component, in USD.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct CostBreakdown {
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// 5-minute writes.
    pub write_5m: f64,
    /// 1-hour writes.
    pub write_1h: f64,
    /// Reads.
    pub read: f64,
    /// The sum, in the order above.
    pub total: f64,
    /// Whether the long-context premium applied.
    pub long_context: bool,
}

impl ModelPrice {
    /// Input tokens one request may send: the model's own window where the
    /// table gives one; else (Claude) 1M for a model with the long-context
    /// option (and its premium), 200K for the others.
    pub fn window_tokens(&self) -> u64 {
        if let Some(w) = self.context_window {
            w
        } else if self.long_context.is_some() {
            LONG_CONTEXT_WINDOW
        } else {
            CONTEXT_WINDOW
        }
    }

    /// The rates that apply to a request with this usage (the premium when
    /// total input exceeds the long-context threshold), and whether the
    /// premium applied.
    pub fn rates_for(&self, usage: &Usage) -> (&Rates, bool) {
        match &self.long_context {
            Some(lc) if usage.total_input() > lc.threshold_tokens => (&lc.rates, true),
            _ => (&self.rates, false),
        }
    }

    /// Cost by component: `input·p_in + output·p_out + 5m·p_5m + 1h·p_1h +
    /// read·p_read` with per-token prices, summed in f64 in that order
    /// (ccusage's formula; its `2·p_in` for 1h writes equals `p_1h` for every
    /// built-in model). `batch` applies the 50% Batch API discount.
    pub fn cost_breakdown(&self, usage: &Usage, batch: bool) -> CostBreakdown {
        let (rates, long_context) = self.rates_for(usage);
        let scale = if batch { BATCH_DISCOUNT } else { 1.0 };
        let per_token = |usd_per_million: f64| usd_per_million / 1e6 * scale;
        let input = usage.input_tokens as f64 * per_token(rates.input);
        let output = usage.output_tokens as f64 * per_token(rates.output);
        let write_5m = usage.write_5m() as f64 * per_token(rates.cache_write_5m);
        let write_1h = usage.write_1h() as f64 * per_token(rates.cache_write_1h);
        let read = usage.cache_read_input_tokens as f64 * per_token(rates.cache_read);
        CostBreakdown {
            input,
            output,
            write_5m,
            write_1h,
            read,
            total: input + output + write_5m + write_1h + read,
            long_context,
        }
    }

    /// Total cost of one request in USD.
    pub fn cost_usd(&self, usage: &Usage, batch: bool) -> f64 {
        self.cost_breakdown(usage, batch).total
    }
}

/// One row of `tracecost models`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRow {
    /// Canonical id.
    pub id: String,
    /// Aliases.
    pub aliases: Vec<String>,
    /// Input, USD per million tokens.
    pub input: f64,
    /// 5-minute write (`None`: the provider charges none, as OpenAI's
    /// automatic cache).
    pub write_5m: Option<f64>,
    /// 1-hour write (`None` as above).
    pub write_1h: Option<f64>,
    /// Read.
    pub read: f64,
    /// Storage of an explicit cached content per hour (`None`: the
    /// provider has none, or its price is not known).
    pub storage_per_hour: Option<f64>,
    /// Output.
    pub output: f64,
    /// Minimum cacheable prefix tokens.
    pub min_cacheable_tokens: u64,
    /// A one-line description of the long-context premium, if any.
    pub long_context: Option<String>,
}

/// What a pricing file changed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MergeSummary {
    /// `native` or `litellm`.
    pub format: &'static str,
    /// Ids of models the file added.
    pub added: Vec<String>,
    /// Ids of existing models whose data the file changed.
    pub updated: Vec<String>,
    /// Entries ignored (LiteLLM: not an Anthropic or OpenAI chat model, or
    /// unpriced).
    pub skipped: usize,
}

/// Why a model could not be priced or a pricing file not read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PricingError {
    /// No model has this name.
    // The name is the user's and may be any size: quoted within bounds.
    #[error(
        "unknown model `{}` (closest known: {})",
        crate::engine::handle::one_line(model, 200),
        .closest.join(", ")
    )]
    UnknownModel {
        /// The name asked for.
        model: String,
        /// Up to three closest known names, closest first.
        closest: Vec<String>,
    },
    /// The pricing file could not be read.
    #[error("{file}: cannot read pricing file: {message}")]
    Io {
        /// The file.
        file: String,
        /// The OS error.
        message: String,
    },
    /// The pricing file is not valid JSON.
    #[error("{file}:{line}:{column}: invalid JSON: {message}")]
    Syntax {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// A value has the wrong shape.
    #[error("{file}: at {}: expected {expected}", if pointer.is_empty() { "the top level" } else { pointer })]
    Shape {
        /// The file.
        file: String,
        /// JSON pointer to the value (`""` is the whole document).
        pointer: String,
        /// What was expected.
        expected: String,
    },
}

fn fmt_usd(v: f64) -> String {
    // Shortest representation, e.g. 22.5, 6, 0.3.
    format!("{v}")
}

impl fmt::Display for ModelPrice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (${}/${}/${}/${}/${} per MTok in/5m/1h/read/out)",
            self.id,
            fmt_usd(self.rates.input),
            fmt_usd(self.rates.cache_write_5m),
            fmt_usd(self.rates.cache_write_1h),
            fmt_usd(self.rates.cache_read),
            fmt_usd(self.rates.output)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_without_breakdown_counts_writes_as_5m() {
        let u: Usage = serde_json::from_str(
            r#"{"input_tokens":1,"cache_creation_input_tokens":10,"cache_read_input_tokens":null,"output_tokens":2,"service_tier":"standard"}"#,
        )
        .unwrap();
        assert_eq!(u.write_5m(), 10);
        assert_eq!(u.write_1h(), 0);
        assert_eq!(u.cache_read_input_tokens, 0);
        assert_eq!(u.total_input(), 11);
    }
}

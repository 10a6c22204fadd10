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
//! # Prices that change
//!
//! A model's prices are rows, each with the UTC day it took effect
//! ([`ModelPrice::effective_from`], [`ModelPrice::earlier`]): a call is
//! priced at the row in force on the day it started
//! ([`ModelPrice::row_at`]), a call without a start time at the newest row.
//! The built-in table lists a model once per row (OpenAI's 2026-07-30 cut
//! of GPT-5.6 Terra and Luna, GPT-5.6 Sol's promotion, Sonnet 5.5's read
//! cut, Gemini 4 Argon's and 3.8 Flash's promotions ending).
//!
//! # Modifiers
//!
//! [`Multipliers`] scale every rate of a request: fast mode (a usage's
//! `speed: "fast"`) and a regional endpoint (a usage's `inference_geo`
//! naming one geography, or a Bedrock `us.` / `eu.` profile in the model
//! id, [`is_regional_id`]), where the model's documentation gives them.
//! The importers keep what each call's usage says
//! (`trace::RecordedModifiers`) and the replay bills it
//! (`replay::served_cost`). An OpenAI response's `service_tier: "flex"`
//! is billed at the Batch API's rates, as the batch tier is (OpenAI's flex
//! processing guide: "Tokens are priced at Batch API rates"), so a
//! model's [`Multipliers::flex`] is listed, not applied; `priority` at
//! the standard rate (the table holds no priority prices). Codex's
//! rollouts record the tier per thread, not per call, and are not read
//! for it.
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
//! **Dated rows.** A model's value may also be an array of such objects,
//! oldest first, and any of them may carry `"effective_from":
//! "YYYY-MM-DD"` (a UTC day): that row prices the calls of that day and
//! later, starts from the row in force that day (members it omits keep
//! their value) and replaces the model's rows from that day on; earlier
//! rows stay. A row without `effective_from` changes the model's newest
//! row, as files written before dated rows existed did:
//!
//! ```json
//! { "models": { "gpt-5.6-luna": [
//!     { "input": 1, "cache_read": 0.1, "output": 6 },
//!     { "effective_from": "2026-07-30", "input": 0.2, "cache_read": 0.02, "output": 1.2 }
//! ] } }
//! ```
//!
//! Every member is optional for a model that already exists (only the given
//! members change; `"long_context": null` removes a premium). A new model
//! needs `input` and `output`; omitted cache prices default to the
//! multipliers above, and the other data is inherited from the model its name
//! resolves to (e.g. a dated id of a known model), or else defaults (1024
//! minimum cacheable tokens, 346/313 tool prompt, the framing above). A new
//! model's `provider` (`anthropic`, `openai`, `google`, `bedrock-converse`)
//! starts it from that provider's data instead (its cache rules and
//! framing; a new OpenAI model with a `cache_write_5m` price caches at
//! breakpoints), and `context_window` gives any model's window in tokens.
//! A new model's first row has no earlier prices: it prices the days
//! before it too. Unknown members are errors, so typos do not pass
//! silently.
//!
//! A file may name its `source`: `{"url": …, "sha256": …, "fetched":
//! "YYYY-MM-DD"}`, as `tracecost prices update` writes
//! ([`litellm_to_native`]). The table keeps, for each file merged, its
//! path, the SHA-256 of its bytes and its source ([`Pricing::files`]), so
//! that a report can say which prices made it.
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
mod date;
mod file;
mod lookup;

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

use tracecost_engine::cache::ProviderKind;

pub use date::PriceDate;
pub use file::litellm_to_native;
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
    /// The day `rates` and `long_context` took effect (`None`: in force
    /// for every day the table knows).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effective_from: Option<PriceDate>,
    /// The rows in force before `effective_from`, oldest first: each from
    /// its own day until the next row's. A call is priced at the row in
    /// force on its UTC day ([`ModelPrice::row_at`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub earlier: Vec<PriceRow>,
    /// Multipliers of the documented price modifiers (fast mode, regional
    /// endpoints, service tiers) the model has.
    #[serde(skip)]
    pub modifiers: Multipliers,
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
    /// Whether the reasoning a request sends back from before its latest
    /// user message stays in the prompt. OpenAI's models before GPT-5.6
    /// drop it (the reasoning guide: reasoning items of earlier turns are
    /// not kept); GPT-5.6 and later keep it when asked
    /// (`reasoning.context: all_turns`, as Codex asks). Every other
    /// provider's model: true (nothing is dropped from what it is sent).
    #[serde(skip)]
    pub keeps_earlier_reasoning: bool,
    /// Gemini: the storage price of explicit cached contents, USD per
    /// million tokens per hour (`None`: not known, so explicit caching is
    /// not simulated for the model).
    #[serde(skip)]
    pub cache_storage_per_mtok_hour: Option<f64>,
}

/// The factors a model's documented modifiers apply to every rate of a
/// request (`None`: the model has no such modifier, or its price is not
/// documented, and the request is priced at the standard rate).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Multipliers {
    /// Fast mode (Anthropic `speed: "fast"`, OpenAI's Fast / `priority`
    /// tier).
    pub fast: Option<f64>,
    /// A regional endpoint or data-residency request (Bedrock `us.` /
    /// `eu.` profiles, Anthropic `inference_geo`).
    pub regional: Option<f64>,
    /// OpenAI's `flex` tier, as the model's page lists it (shown by
    /// `tracecost models`); a flex call is billed at the Batch API's
    /// discount, the rule OpenAI's flex processing guide gives for every
    /// model, which this multiple agrees with.
    pub flex: Option<f64>,
}

/// Bedrock's cross-region inference profiles of one geography (`us.`,
/// `eu.`, …), billed at the regional rate; `global.` profiles and bare ids
/// are billed at the standard rate.
const REGIONAL_PROFILES: [&str; 7] = ["us", "eu", "apac", "au", "jp", "ca", "us-gov"];

/// Whether a model id names a regional endpoint: a Bedrock profile of one
/// geography (`us.anthropic.claude-…`).
pub fn is_regional_id(model: &str) -> bool {
    // Without allocating: asked of every replayed call.
    model.trim().split_once('.').is_some_and(|(prefix, rest)| {
        REGIONAL_PROFILES
            .iter()
            .any(|p| p.eq_ignore_ascii_case(prefix))
            && rest.contains('.')
    })
}

impl Multipliers {
    /// The factor on every rate of a request in fast mode and/or at a
    /// regional endpoint: the product of the modifiers the model has (1
    /// for one it lacks).
    pub fn scale(&self, fast: bool, regional: bool) -> f64 {
        let pick = |on: bool, f: Option<f64>| if on { f.unwrap_or(1.0) } else { 1.0 };
        pick(fast, self.fast) * pick(regional, self.regional)
    }
}

/// One dated row of a model's prices.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PriceRow {
    /// The day the row took effect (`None`: before any dated row).
    pub from: Option<PriceDate>,
    /// Standard rates.
    pub rates: Rates,
    /// Long-context premium, if any.
    pub long_context: Option<LongContext>,
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

    /// The same request with its cache writes counted as uncached input:
    /// what a record that has no cache-write count shows of it.
    pub fn writes_as_input(&self) -> Self {
        Self {
            input_tokens: self.input_tokens + self.cache_creation_input_tokens,
            cache_creation_input_tokens: 0,
            cache_creation: None,
            ..*self
        }
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

    /// Whether the model's prices changed on some day (it has more than
    /// one row).
    pub fn is_dated(&self) -> bool {
        !self.earlier.is_empty()
    }

    /// The row in force at a call's start (Unix milliseconds; its UTC day):
    /// the newest row that took effect on or before that day, the oldest
    /// row for a day before every row, and the newest row for a call
    /// without a time.
    pub fn row_at(&self, at_ms: Option<u64>) -> PriceRow {
        match at_ms {
            Some(ms) => self.row_on(PriceDate::of_ms(ms)),
            None => self.newest(),
        }
    }

    /// The row in force on `day` (see [`ModelPrice::row_at`]).
    pub fn row_on(&self, day: PriceDate) -> PriceRow {
        // Without allocating: this is on every call's path.
        let newest = self.newest();
        if self.effective_from.is_none_or(|f| f <= day) {
            return newest;
        }
        let in_force = self
            .earlier
            .iter()
            .rev()
            .find(|r| r.from.is_none_or(|f| f <= day));
        in_force.or(self.earlier.first()).copied().unwrap_or(newest)
    }

    /// The newest row (`rates`, `long_context`, `effective_from`).
    pub fn newest(&self) -> PriceRow {
        PriceRow {
            from: self.effective_from,
            rates: self.rates,
            long_context: self.long_context,
        }
    }

    /// Every row, oldest first; the last is the newest.
    pub fn rows(&self) -> Vec<PriceRow> {
        let mut rows = self.earlier.clone();
        rows.push(self.newest());
        rows
    }

    /// The rates that apply to a request with this usage at the newest row
    /// (the premium when total input exceeds the long-context threshold),
    /// and whether the premium applied.
    pub fn rates_for(&self, usage: &Usage) -> (Rates, bool) {
        self.row_at(None).rates_for(usage)
    }

    /// Cost by component at the newest row ([`ModelPrice::cost_breakdown_at`]).
    pub fn cost_breakdown(&self, usage: &Usage, batch: bool) -> CostBreakdown {
        self.cost_breakdown_at(usage, batch, None)
    }

    /// Cost by component of a call started at `at_ms` (priced at the row
    /// in force that UTC day, [`ModelPrice::row_at`]): `input·p_in +
    /// output·p_out + 5m·p_5m + 1h·p_1h + read·p_read` with per-token
    /// prices, summed in f64 in that order (ccusage's formula; its `2·p_in`
    /// for 1h writes equals `p_1h` for every built-in Claude model).
    /// `batch` applies the 50% Batch API discount.
    pub fn cost_breakdown_at(
        &self,
        usage: &Usage,
        batch: bool,
        at_ms: Option<u64>,
    ) -> CostBreakdown {
        let (rates, long_context) = self.row_at(at_ms).rates_for(usage);
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

    /// Total cost of one request in USD at the newest row.
    pub fn cost_usd(&self, usage: &Usage, batch: bool) -> f64 {
        self.cost_breakdown(usage, batch).total
    }

    /// Total cost in USD of one request started at `at_ms`.
    pub fn cost_usd_at(&self, usage: &Usage, batch: bool, at_ms: Option<u64>) -> f64 {
        self.cost_breakdown_at(usage, batch, at_ms).total
    }
}

impl PriceRow {
    /// The row's rates for a request with this usage (its premium when
    /// total input exceeds the threshold), and whether the premium applied.
    pub fn rates_for(&self, usage: &Usage) -> (Rates, bool) {
        match &self.long_context {
            Some(lc) if usage.total_input() > lc.threshold_tokens => (lc.rates, true),
            _ => (self.rates, false),
        }
    }
}

/// One row of `tracecost models`: one dated price row of a model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelRow {
    /// Canonical id.
    pub id: String,
    /// The day the row took effect (`None`: the model's first row).
    pub effective_from: Option<PriceDate>,
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
    /// Input tokens one request may send.
    pub window_tokens: u64,
    /// Minimum cacheable prefix tokens.
    pub min_cacheable_tokens: u64,
    /// A one-line description of the long-context premium, if any.
    pub long_context: Option<String>,
    /// The documented price modifiers.
    pub modifiers: Multipliers,
}

/// The day the built-in table's prices were last brought up to date with
/// the providers' pages: a report priced by it says so, with this date.
pub const BUILTIN_TABLE_DATE: PriceDate = PriceDate::ymd(2026, 12, 6);

/// Where a pricing file's prices were taken from (its `source` member):
/// what `tracecost prices update` fetched, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PriceSource {
    /// The address fetched.
    pub url: String,
    /// SHA-256 of the bytes fetched, lowercase hex.
    pub sha256: String,
    /// The UTC day they were fetched: the day their prices take effect.
    pub fetched: PriceDate,
}

/// A pricing file merged into a table, as a report records it: which
/// file, exactly which bytes, and where its prices came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PriceFile {
    /// The file as given.
    pub path: String,
    /// SHA-256 of its bytes, lowercase hex.
    pub sha256: String,
    /// `native` or `litellm`.
    pub format: &'static str,
    /// Its `source` member, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<PriceSource>,
}

/// Which prices a table holds, as a report records it: the built-in table
/// of [`BUILTIN_TABLE_DATE`] and every pricing file merged over it, in
/// order ([`Pricing::table_record`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PriceTableRecord {
    /// The day of the built-in table beneath every file.
    pub builtin: PriceDate,
    /// The files merged over it, in order.
    pub files: Vec<PriceFile>,
}

impl fmt::Display for PriceTableRecord {
    /// One line: `the built-in price table of 2026-12-06, overridden by
    /// prices.json (sha256 0123456789ab…; LiteLLM's file from URL, fetched
    /// 2026-12-06)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the built-in price table of {}", self.builtin)?;
        for (i, file) in self.files.iter().enumerate() {
            let sha = file.sha256.get(..12).unwrap_or(&file.sha256);
            let join = if i == 0 { ", overridden by" } else { ", then" };
            write!(f, "{join} {} (sha256 {sha}…", file.path)?;
            if let Some(src) = &file.source {
                write!(f, "; from {}, fetched {}", src.url, src.fetched)?;
            }
            write!(f, ")")?;
        }
        Ok(())
    }
}

/// What a pricing file changed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct MergeSummary {
    /// `native` or `litellm`.
    pub format: &'static str,
    /// A native file's `source` member.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<PriceSource>,
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
        tracecost_engine::handle::one_line(model, 200),
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

#[cfg(test)]
mod dated_tests {
    use super::*;

    /// Noon UTC of 2026-07-29 and of 2026-07-31, either side of OpenAI's
    /// 2026-07-30 cut.
    const JULY_29: u64 = 1_785_326_400_000;
    const JULY_31: u64 = 1_785_499_200_000;

    /// 100K in, 100K out: under the 272K long-context threshold.
    fn tenth_mtok_in_and_out() -> Usage {
        Usage::new(100_000, 0, 0, 0, 100_000)
    }

    #[test]
    fn a_call_is_priced_at_the_row_in_force_on_its_day() {
        let p = Pricing::builtin();
        let luna = p.lookup("gpt-5.6-luna").unwrap();
        let u = tenth_mtok_in_and_out();
        // $1 in + $6 out per MTok before the cut, $0.20 + $1.20 after.
        assert!((luna.cost_usd_at(&u, false, Some(JULY_29)) - 0.7).abs() < 1e-9);
        assert!((luna.cost_usd_at(&u, false, Some(JULY_31)) - 0.14).abs() < 1e-9);
        // No time: the newest row.
        assert!((luna.cost_usd_at(&u, false, None) - 0.14).abs() < 1e-9);
        assert_eq!(luna.cost_usd(&u, false), luna.cost_usd_at(&u, false, None));
        let terra = p.lookup("gpt-5.6-terra").unwrap();
        assert!((terra.cost_usd_at(&u, false, Some(JULY_29)) - 1.75).abs() < 1e-9);
        assert!((terra.cost_usd_at(&u, false, Some(JULY_31)) - 1.4).abs() < 1e-9);
    }

    #[test]
    fn the_day_a_row_takes_effect_is_its_own() {
        let p = Pricing::builtin();
        let sonnet = p.lookup("claude-sonnet-5-5").unwrap();
        let day = |s: &str| PriceDate::parse(s).unwrap();
        assert_eq!(sonnet.row_on(day("2026-10-06")).rates.cache_read, 0.20);
        assert_eq!(sonnet.row_on(day("2026-10-07")).rates.cache_read, 0.10);
        let argon = p.lookup("gemini-4-argon").unwrap();
        assert_eq!(argon.row_on(day("2026-11-30")).rates.input, 2.0);
        assert_eq!(argon.row_on(day("2026-12-01")).rates.input, 4.0);
        // A model without dated rows is the same every day.
        let opus = p.lookup("claude-opus-5").unwrap();
        assert!(!opus.is_dated());
        assert_eq!(opus.row_on(day("2020-01-01")), opus.newest());
    }

    #[test]
    fn every_models_rows_are_in_date_order() {
        for m in Pricing::builtin().models() {
            let rows = m.rows();
            for w in rows.windows(2) {
                let (a, b) = (w[0].from, w[1].from);
                assert!(b.is_some() && a < b, "{}: {a:?} then {b:?}", m.id);
            }
        }
    }

    #[test]
    fn windows_are_the_documented_ones() {
        let p = Pricing::builtin();
        let window = |id: &str| p.lookup(id).unwrap().window_tokens();
        for id in [
            "claude-opus-4-6",
            "claude-opus-5",
            "claude-opus-5-5",
            "claude-sonnet-5",
        ] {
            assert_eq!(window(id), 1_000_000, "{id}");
        }
        assert_eq!(window("gpt-5.6-luna"), 1_050_000);
        assert_eq!(window("gpt-5.6-sol"), 1_050_000);
        assert_eq!(window("gpt-6.2-sol"), 922_000);
        assert_eq!(window("claude-haiku-4-5"), 200_000);
    }

    #[test]
    fn gpt6_bills_a_12_hour_write_at_2_5x_input() {
        let p = Pricing::builtin();
        let sol = p.lookup("gpt-6.2-sol").unwrap();
        assert_eq!(sol.rates.cache_write_5m, 2.5);
        assert_eq!(sol.rates.cache_write_1h, 5.0);
        // Above 272K, input and cache rates double, output 1.5x.
        let lc = sol.long_context.unwrap();
        assert_eq!(
            (lc.rates.input, lc.rates.cache_write_1h, lc.rates.output),
            (4.0, 10.0, 15.0)
        );
    }

    #[test]
    fn regional_profiles_and_fast_mode_scale_every_rate() {
        assert!(is_regional_id("us.anthropic.claude-opus-4-6-v1"));
        assert!(is_regional_id(
            "EU.anthropic.claude-sonnet-4-5-20250929-v1:0"
        ));
        assert!(!is_regional_id("global.anthropic.claude-opus-4-6-v1"));
        assert!(!is_regional_id("anthropic.claude-opus-4-6-v1"));
        assert!(!is_regional_id("gpt-5.6-luna"));
        let p = Pricing::builtin();
        let opus = p.lookup("claude-opus-4-8").unwrap().modifiers;
        assert_eq!(opus.scale(true, false), 2.0);
        assert!((opus.scale(true, true) - 2.2).abs() < 1e-12);
        // A model without a documented modifier keeps its rate.
        assert_eq!(
            p.lookup("claude-3-haiku")
                .unwrap()
                .modifiers
                .scale(true, true),
            1.0
        );
    }

    /// A flex call is billed at the Batch API's discount (OpenAI's flex
    /// processing guide), so a flex multiple a model page lists must be
    /// that discount.
    #[test]
    fn every_listed_flex_multiple_is_the_batch_discount() {
        let p = Pricing::builtin();
        let listed: Vec<_> = p.models().iter().filter_map(|m| m.modifiers.flex).collect();
        assert!(!listed.is_empty());
        assert!(listed.iter().all(|&f| f == BATCH_DISCOUNT), "{listed:?}");
    }

    #[test]
    fn haiku_5_5_is_5x_above_100k_of_prompt() {
        let p = Pricing::builtin();
        let h = p.lookup("claude-haiku-5-5").unwrap();
        let small = Usage::new(100_000, 0, 0, 0, 0);
        let large = Usage::new(100_001, 0, 0, 0, 0);
        assert!((h.cost_usd(&small, false) - 0.01).abs() < 1e-12);
        assert!((h.cost_usd(&large, false) - 100_001.0 * 0.5 / 1e6).abs() < 1e-12);
    }

    const DATED_FILE: &str = r#"{"models": {
        "claude-house-1": [
            {"input": 4, "output": 20},
            {"effective_from": "2026-09-01", "input": 2}
        ],
        "gpt-5.6-luna": {"effective_from": "2026-08-15", "output": 1.0}
    }}"#;

    #[test]
    fn a_pricing_file_adds_dated_rows() {
        let mut p = Pricing::builtin();
        p.merge_str(DATED_FILE, "prices.json").unwrap();
        let house = p.lookup("claude-house-1").unwrap();
        let day = |s: &str| PriceDate::parse(s).unwrap();
        assert_eq!(house.row_on(day("2026-08-31")).rates.input, 4.0);
        let sept = house.row_on(day("2026-09-01")).rates;
        // The new row starts from the one in force: output is kept.
        assert_eq!((sept.input, sept.output), (2.0, 20.0));
        let luna = p.lookup("gpt-5.6-luna").unwrap();
        assert_eq!(luna.rows().len(), 3);
        assert_eq!(luna.row_on(day("2026-07-29")).rates.output, 6.0);
        assert_eq!(luna.row_on(day("2026-08-01")).rates.output, 1.2);
        let aug = luna.row_on(day("2026-08-15")).rates;
        assert_eq!((aug.input, aug.output), (0.2, 1.0));
    }

    #[test]
    fn an_undated_row_changes_the_newest_prices_as_before() {
        let mut p = Pricing::builtin();
        p.merge_str(
            r#"{"models": {"gpt-5.6-luna": {"input": 0.3, "output": 1.5}}}"#,
            "old.json",
        )
        .unwrap();
        let luna = p.lookup("gpt-5.6-luna").unwrap();
        assert_eq!((luna.rates.input, luna.rates.output), (0.3, 1.5));
        assert_eq!(luna.effective_from, Some(PriceDate::ymd(2026, 7, 30)));
        assert_eq!(luna.row_at(Some(JULY_29)).rates.input, 1.0);
    }

    #[test]
    fn a_bad_effective_date_names_its_place() {
        let mut p = Pricing::builtin();
        let err = p
            .merge_str(
                r#"{"models": {"m": [{"input": 1, "output": 2}, {"effective_from": "2026-02-30"}]}}"#,
                "f.json",
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "f.json: at /models/m/1/effective_from: expected a date, YYYY-MM-DD (UTC)"
        );
        let err = p
            .merge_str(r#"{"models": {"m": []}}"#, "f.json")
            .unwrap_err();
        assert!(err.to_string().starts_with(
            "f.json: at /models/m: expected an object of prices, or a non-empty array"
        ));
    }
}

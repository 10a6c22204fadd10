//! Prices and per-model data, and the bill for one request.
//!
//! # The built-in table
//!
//! [`Pricing::builtin`] is an offline table of every Claude model in the
//! project's provider facts, in USD per million tokens: base input, 5-minute
//! cache write (1.25× input), 1-hour cache write (2× input), cache read
//! (0.1× input; 0.025× for Fable 5.1) and output. Each model also carries:
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
//! [`Pricing::lookup`] accepts ids and aliases case-insensitively, provider
//! prefixes (`anthropic/claude-…`, `us.anthropic.claude-…`), Vertex `@date`
//! and Bedrock `-v1:0` suffixes, and dated ids of a model listed without a
//! date (`claude-opus-4-6-20260205` → `claude-opus-4-6`) or aliases with
//! `-latest`. An unknown model is an error that lists the three closest known
//! names by edit distance.
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
//! Entries are read when their key, after an optional `anthropic/` prefix,
//! starts with `claude`, their `litellm_provider` (if given) is `anthropic`
//! and their `mode` (if given) is `chat`; entries without
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

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

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
}

/// The `cache_creation` breakdown of a [`Usage`].
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
    /// 5-minute write.
    pub write_5m: f64,
    /// 1-hour write.
    pub write_1h: f64,
    /// Read.
    pub read: f64,
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
    /// Entries ignored (LiteLLM: not an Anthropic chat model, or unpriced).
    pub skipped: usize,
}

/// Why a model could not be priced or a pricing file not read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PricingError {
    /// No model has this name.
    #[error("unknown model `{model}` (closest known: {})", .closest.join(", "))]
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

/// The price table: built-in models plus any merged pricing files.
#[derive(Debug, Clone, PartialEq)]
pub struct Pricing {
    models: Vec<ModelPrice>,
    /// Lowercased id or alias → index into `models`.
    index: BTreeMap<String, usize>,
}

#[allow(clippy::too_many_arguments)]
fn builtin_model(
    id: &str,
    aliases: &[&str],
    [input, w5, w1, read, output]: [f64; 5],
    min_cacheable_tokens: u64,
    (auto_none, any_tool): (u64, u64),
    sonnet_long_context: bool,
) -> ModelPrice {
    ModelPrice {
        id: id.to_string(),
        aliases: aliases.iter().map(|a| a.to_string()).collect(),
        rates: Rates {
            input,
            cache_write_5m: w5,
            cache_write_1h: w1,
            cache_read: read,
            output,
        },
        min_cacheable_tokens,
        tool_prompt: ToolPrompt {
            auto_none,
            any_tool,
        },
        framing: Framing::default(),
        long_context: sonnet_long_context.then_some(LongContext {
            threshold_tokens: LONG_CONTEXT_THRESHOLD,
            rates: Rates {
                input: 6.0,
                cache_write_5m: 7.5,
                cache_write_1h: 12.0,
                cache_read: 0.6,
                output: 22.5,
            },
        }),
    }
}

const OPUS_4: [f64; 5] = [15.0, 18.75, 30.0, 1.50, 75.0];
const OPUS_45: [f64; 5] = [5.0, 6.25, 10.0, 0.50, 25.0];
const SONNET_4: [f64; 5] = [3.0, 3.75, 6.0, 0.30, 15.0];
const C4_TOOLS: (u64, u64) = (346, 313);
const HAIKU3_TOOLS: (u64, u64) = (264, 340);

fn builtin_models() -> Vec<ModelPrice> {
    vec![
        builtin_model(
            "claude-opus-4-20250514",
            &["claude-opus-4-0", "claude-opus-4", "claude-4-opus-20250514"],
            OPUS_4,
            1024,
            C4_TOOLS,
            false,
        ),
        builtin_model(
            "claude-opus-4-1-20250805",
            &["claude-opus-4-1"],
            OPUS_4,
            1024,
            C4_TOOLS,
            false,
        ),
        builtin_model(
            "claude-opus-4-5-20251101",
            &["claude-opus-4-5"],
            OPUS_45,
            4096,
            C4_TOOLS,
            false,
        ),
        builtin_model("claude-opus-4-6", &[], OPUS_45, 4096, C4_TOOLS, false),
        builtin_model("claude-opus-4-7", &[], OPUS_45, 2048, C4_TOOLS, false),
        builtin_model("claude-opus-4-8", &[], OPUS_45, 1024, C4_TOOLS, false),
        builtin_model("claude-opus-5", &[], OPUS_45, 512, C4_TOOLS, false),
        builtin_model(
            "claude-sonnet-4-20250514",
            &[
                "claude-sonnet-4-0",
                "claude-sonnet-4",
                "claude-4-sonnet-20250514",
            ],
            SONNET_4,
            1024,
            C4_TOOLS,
            true,
        ),
        builtin_model(
            "claude-sonnet-4-5-20250929",
            &["claude-sonnet-4-5"],
            SONNET_4,
            1024,
            C4_TOOLS,
            true,
        ),
        builtin_model("claude-sonnet-4-6", &[], SONNET_4, 1024, C4_TOOLS, false),
        builtin_model(
            "claude-3-7-sonnet-20250219",
            &["claude-3-7-sonnet-latest", "claude-3-7-sonnet"],
            SONNET_4,
            1024,
            C4_TOOLS,
            false,
        ),
        builtin_model(
            "claude-sonnet-5",
            &[],
            [2.0, 2.50, 4.0, 0.20, 10.0],
            1024,
            C4_TOOLS,
            false,
        ),
        builtin_model(
            "claude-haiku-4-5-20251001",
            &["claude-haiku-4-5"],
            [1.0, 1.25, 2.0, 0.10, 5.0],
            4096,
            C4_TOOLS,
            false,
        ),
        builtin_model(
            "claude-3-5-haiku-20241022",
            &["claude-3-5-haiku-latest", "claude-3-5-haiku"],
            [0.80, 1.0, 1.60, 0.08, 4.0],
            2048,
            HAIKU3_TOOLS,
            false,
        ),
        builtin_model(
            "claude-3-haiku-20240307",
            &["claude-3-haiku"],
            [0.25, 0.30, 0.50, 0.03, 1.25],
            2048,
            HAIKU3_TOOLS,
            false,
        ),
        builtin_model(
            "claude-fable-5",
            &[],
            [10.0, 12.50, 20.0, 1.00, 50.0],
            512,
            C4_TOOLS,
            false,
        ),
        builtin_model(
            "claude-fable-5-1",
            &[],
            [10.0, 12.50, 20.0, 0.25, 50.0],
            512,
            C4_TOOLS,
            false,
        ),
    ]
}

/// Normalizes a model name for lookup: trims, lowercases, keeps the part
/// from `claude` on (dropping provider prefixes), turns a Vertex `@date`
/// into `-date` and drops a Bedrock `-vN:M` / `:M` suffix.
fn normalize(name: &str) -> String {
    let mut s = name.trim().to_ascii_lowercase();
    if let Some(i) = s.find("claude") {
        s = s[i..].to_string();
    } else if let Some(i) = s.rfind('/') {
        s = s[i + 1..].to_string();
    }
    s = s.replace('@', "-");
    if let Some(i) = s.find(':') {
        s.truncate(i);
        if let Some(j) = s.rfind("-v")
            && s[j + 2..].chars().all(|c| c.is_ascii_digit())
            && j + 2 < s.len()
        {
            s.truncate(j);
        }
    }
    s
}

/// Drops a trailing `-YYYYMMDD` or `-latest`.
fn strip_date(s: &str) -> Option<&str> {
    if let Some(base) = s.strip_suffix("-latest") {
        return Some(base);
    }
    let (base, tail) = s.rsplit_once('-')?;
    (tail.len() == 8 && tail.chars().all(|c| c.is_ascii_digit())).then_some(base)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

fn fmt_usd(v: f64) -> String {
    // Shortest representation, e.g. 22.5, 6, 0.3.
    format!("{v}")
}

impl Default for Pricing {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Pricing {
    /// The built-in table (see the module docs).
    pub fn builtin() -> Self {
        let mut p = Self {
            models: Vec::new(),
            index: BTreeMap::new(),
        };
        for m in builtin_models() {
            p.insert(m);
        }
        p
    }

    fn insert(&mut self, m: ModelPrice) -> usize {
        let i = self.models.len();
        self.index.insert(m.id.to_ascii_lowercase(), i);
        for a in &m.aliases {
            self.index.insert(a.to_ascii_lowercase(), i);
        }
        self.models.push(m);
        i
    }

    /// Builtin table plus the models of a pricing file.
    pub fn with_file(path: &Path) -> Result<Self, PricingError> {
        let mut p = Self::builtin();
        p.merge_file(path)?;
        Ok(p)
    }

    /// Every model, built-ins first in table order, then added models in
    /// file order.
    pub fn models(&self) -> &[ModelPrice] {
        &self.models
    }

    /// Index of an exact name (id or alias) after normalization.
    fn exact(&self, name: &str) -> Option<usize> {
        let lower = name.trim().to_ascii_lowercase();
        self.index
            .get(&lower)
            .or_else(|| self.index.get(&normalize(name)))
            .copied()
    }

    fn resolve(&self, name: &str) -> Option<usize> {
        if let Some(i) = self.exact(name) {
            return Some(i);
        }
        let n = normalize(name);
        strip_date(&n).and_then(|base| self.index.get(base).copied())
    }

    /// Finds a model by id, alias, prefixed or dated name.
    pub fn lookup(&self, model: &str) -> Result<&ModelPrice, PricingError> {
        match self.resolve(model) {
            Some(i) => Ok(&self.models[i]),
            None => Err(PricingError::UnknownModel {
                model: model.to_string(),
                closest: self.closest(model, 3),
            }),
        }
    }

    /// Up to `n` known names closest to `model` by edit distance, at most
    /// one per model, closest first (ties by name).
    pub fn closest(&self, model: &str, n: usize) -> Vec<String> {
        let target = normalize(model);
        let mut scored: Vec<(usize, &str, usize)> = self
            .index
            .iter()
            .map(|(name, &i)| (levenshtein(&target, name), name.as_str(), i))
            .collect();
        scored.sort();
        let mut seen = Vec::new();
        let mut out = Vec::new();
        for (_, name, i) in scored {
            if out.len() == n {
                break;
            }
            if !seen.contains(&i) {
                seen.push(i);
                out.push(name.to_string());
            }
        }
        out
    }

    /// Cost of one request of `model`.
    pub fn cost_usd(&self, model: &str, usage: &Usage, batch: bool) -> Result<f64, PricingError> {
        Ok(self.lookup(model)?.cost_usd(usage, batch))
    }

    /// Structured rows for `tracecost models`, in table order.
    pub fn rows(&self) -> Vec<ModelRow> {
        self.models
            .iter()
            .map(|m| ModelRow {
                id: m.id.clone(),
                aliases: m.aliases.clone(),
                input: m.rates.input,
                write_5m: m.rates.cache_write_5m,
                write_1h: m.rates.cache_write_1h,
                read: m.rates.cache_read,
                output: m.rates.output,
                min_cacheable_tokens: m.min_cacheable_tokens,
                long_context: m.long_context.map(|lc| {
                    format!(
                        "above {} input tokens the whole request costs ${} in / ${} out per MTok",
                        lc.threshold_tokens,
                        fmt_usd(lc.rates.input),
                        fmt_usd(lc.rates.output)
                    )
                }),
            })
            .collect()
    }

    /// Reads a pricing file (native or LiteLLM format, see the module docs)
    /// and merges it into this table.
    pub fn merge_file(&mut self, path: &Path) -> Result<MergeSummary, PricingError> {
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| PricingError::Io {
            file: file.clone(),
            message: e.to_string(),
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let ok = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line_start = ok.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            PricingError::Syntax {
                file: file.clone(),
                line: ok.iter().filter(|&&b| b == b'\n').count() + 1,
                column: ok.len() - line_start + 1,
                message: "not UTF-8".to_string(),
            }
        })?;
        self.merge_str(&text, &file)
    }

    /// Merges pricing-file text; `file` names it in errors. On error the
    /// table is left unchanged.
    pub fn merge_str(&mut self, text: &str, file: &str) -> Result<MergeSummary, PricingError> {
        let doc: Value = crate::engine::json::parse_unique_keys(text).map_err(|e| {
            let message = crate::engine::json::error_message(&e);
            PricingError::Syntax {
                file: file.to_string(),
                line: e.line(),
                column: e.column().max(1),
                message,
            }
        })?;
        let mut next = self.clone();
        let ctx = Ctx { file };
        let Value::Object(top) = &doc else {
            return Err(ctx.shape(
                "",
                "a JSON object (a tracecost pricing file with a `models` member, or LiteLLM's model_prices_and_context_window.json)",
            ));
        };
        let summary = if top.contains_key("models") {
            next.merge_native(&ctx, top)?
        } else {
            next.merge_litellm(&ctx, top)?
        };
        *self = next;
        Ok(summary)
    }

    /// Adds `m` (a new model) or returns the existing index for its name.
    fn existing_or_template(&self, name: &str) -> (Option<usize>, ModelPrice) {
        if let Some(i) = self.exact(name) {
            return (Some(i), self.models[i].clone());
        }
        let template = self.resolve(name).map(|i| &self.models[i]);
        let m = ModelPrice {
            id: name.trim().to_string(),
            aliases: Vec::new(),
            rates: Rates::from_input_output(0.0, 0.0),
            min_cacheable_tokens: template.map_or(1024, |t| t.min_cacheable_tokens),
            tool_prompt: template.map_or_else(ToolPrompt::default, |t| t.tool_prompt),
            framing: template.map_or_else(Framing::default, |t| t.framing),
            long_context: None,
        };
        (None, m)
    }

    fn commit(&mut self, existing: Option<usize>, m: ModelPrice, summary: &mut MergeSummary) {
        match existing {
            Some(i) => {
                for a in &m.aliases {
                    self.index.insert(a.to_ascii_lowercase(), i);
                }
                if !summary.updated.contains(&m.id) {
                    summary.updated.push(m.id.clone());
                }
                self.models[i] = m;
            }
            None => {
                summary.added.push(m.id.clone());
                self.insert(m);
            }
        }
    }

    fn merge_native(
        &mut self,
        ctx: &Ctx<'_>,
        top: &Map<String, Value>,
    ) -> Result<MergeSummary, PricingError> {
        let mut summary = MergeSummary {
            format: "native",
            ..MergeSummary::default()
        };
        for (k, v) in top {
            match k.as_str() {
                "models" => {}
                "description" => {
                    if !v.is_string() {
                        return Err(ctx.shape(&ptr(&["description"]), "a string"));
                    }
                }
                _ => {
                    return Err(ctx.shape(
                        &ptr(&[k]),
                        "no such member (a tracecost pricing file has `models` and an optional `description`)",
                    ));
                }
            }
        }
        let Some(Value::Object(models)) = top.get("models") else {
            return Err(ctx.shape("/models", "an object mapping model ids to prices"));
        };
        for (id, entry) in models {
            let at = |field: &str| ptr(&["models", id, field]);
            let Value::Object(obj) = entry else {
                return Err(ctx.shape(&ptr(&["models", id]), "an object of prices"));
            };
            if id.trim().is_empty() {
                return Err(ctx.shape(&ptr(&["models", id]), "a non-empty model id"));
            }
            let (existing, mut m) = self.existing_or_template(id);
            let is_new = existing.is_none();
            for key in obj.keys() {
                if !NATIVE_FIELDS.contains(&key.as_str()) {
                    return Err(ctx.shape(
                        &at(key),
                        &format!("one of the members {}", NATIVE_FIELDS.join(", ")),
                    ));
                }
            }
            let num = |field: &str| ctx.opt_price(obj.get(field), &at(field));
            let input = num("input")?;
            let output = num("output")?;
            if is_new {
                let input = input.ok_or_else(|| {
                    ctx.shape(
                        &at("input"),
                        "a price in USD per million tokens (required for a new model)",
                    )
                })?;
                let output = output.ok_or_else(|| {
                    ctx.shape(
                        &at("output"),
                        "a price in USD per million tokens (required for a new model)",
                    )
                })?;
                m.rates = Rates::from_input_output(input, output);
            } else {
                if let Some(v) = input {
                    m.rates.input = v;
                }
                if let Some(v) = output {
                    m.rates.output = v;
                }
            }
            if let Some(v) = num("cache_write_5m")? {
                m.rates.cache_write_5m = v;
            }
            if let Some(v) = num("cache_write_1h")? {
                m.rates.cache_write_1h = v;
            }
            if let Some(v) = num("cache_read")? {
                m.rates.cache_read = v;
            }
            if let Some(v) = obj.get("aliases") {
                let Value::Array(items) = v else {
                    return Err(ctx.shape(&at("aliases"), "an array of strings"));
                };
                for (i, a) in items.iter().enumerate() {
                    let Value::String(a) = a else {
                        return Err(
                            ctx.shape(&ptr(&["models", id, "aliases", &i.to_string()]), "a string")
                        );
                    };
                    if !m.aliases.iter().any(|x| x.eq_ignore_ascii_case(a)) {
                        m.aliases.push(a.clone());
                    }
                }
            }
            if let Some(v) =
                ctx.opt_count(obj.get("min_cacheable_tokens"), &at("min_cacheable_tokens"))?
            {
                m.min_cacheable_tokens = v;
            }
            if let Some(v) = obj.get("tool_prompt_tokens") {
                let base = ptr(&["models", id, "tool_prompt_tokens"]);
                let o = ctx.object(v, &base, &["auto_none", "any_tool"])?;
                let sub = |f: &str| format!("{base}/{f}");
                if let Some(n) = ctx.opt_count(o.get("auto_none"), &sub("auto_none"))? {
                    m.tool_prompt.auto_none = n;
                }
                if let Some(n) = ctx.opt_count(o.get("any_tool"), &sub("any_tool"))? {
                    m.tool_prompt.any_tool = n;
                }
            }
            if let Some(v) = obj.get("framing") {
                let base = ptr(&["models", id, "framing"]);
                let o = ctx.object(v, &base, &["per_message", "per_block", "per_tool"])?;
                let sub = |f: &str| format!("{base}/{f}");
                if let Some(n) = ctx.opt_count(o.get("per_message"), &sub("per_message"))? {
                    m.framing.per_message = n;
                }
                if let Some(n) = ctx.opt_count(o.get("per_block"), &sub("per_block"))? {
                    m.framing.per_block = n;
                }
                if let Some(n) = ctx.opt_count(o.get("per_tool"), &sub("per_tool"))? {
                    m.framing.per_tool = n;
                }
            }
            match obj.get("long_context") {
                None => {}
                Some(Value::Null) => m.long_context = None,
                Some(v) => {
                    let base = ptr(&["models", id, "long_context"]);
                    let o = ctx.object(v, &base, &LONG_CONTEXT_FIELDS)?;
                    let sub = |f: &str| format!("{base}/{f}");
                    let lin = ctx
                        .opt_price(o.get("input"), &sub("input"))?
                        .ok_or_else(|| {
                            ctx.shape(&sub("input"), "a price in USD per million tokens")
                        })?;
                    let lout =
                        ctx.opt_price(o.get("output"), &sub("output"))?
                            .ok_or_else(|| {
                                ctx.shape(&sub("output"), "a price in USD per million tokens")
                            })?;
                    let mut rates = Rates::from_input_output(lin, lout);
                    if let Some(x) =
                        ctx.opt_price(o.get("cache_write_5m"), &sub("cache_write_5m"))?
                    {
                        rates.cache_write_5m = x;
                    }
                    if let Some(x) =
                        ctx.opt_price(o.get("cache_write_1h"), &sub("cache_write_1h"))?
                    {
                        rates.cache_write_1h = x;
                    }
                    if let Some(x) = ctx.opt_price(o.get("cache_read"), &sub("cache_read"))? {
                        rates.cache_read = x;
                    }
                    let threshold_tokens = ctx
                        .opt_count(o.get("threshold_tokens"), &sub("threshold_tokens"))?
                        .unwrap_or(LONG_CONTEXT_THRESHOLD);
                    m.long_context = Some(LongContext {
                        threshold_tokens,
                        rates,
                    });
                }
            }
            self.commit(existing, m, &mut summary);
        }
        Ok(summary)
    }

    fn merge_litellm(
        &mut self,
        ctx: &Ctx<'_>,
        top: &Map<String, Value>,
    ) -> Result<MergeSummary, PricingError> {
        let mut summary = MergeSummary {
            format: "litellm",
            ..MergeSummary::default()
        };
        for (key, entry) in top {
            let name = match key.rsplit_once('/') {
                Some((prefix, rest)) if prefix.eq_ignore_ascii_case("anthropic") => rest,
                Some(_) => {
                    summary.skipped += 1;
                    continue;
                }
                None => key.as_str(),
            };
            let Value::Object(obj) = entry else {
                summary.skipped += 1;
                continue;
            };
            let provider_ok = obj
                .get("litellm_provider")
                .is_none_or(|p| p.as_str() == Some("anthropic"));
            let mode_ok = obj.get("mode").is_none_or(|p| p.as_str() == Some("chat"));
            if !name.to_ascii_lowercase().starts_with("claude") || !provider_ok || !mode_ok {
                summary.skipped += 1;
                continue;
            }
            let at = |field: &str| ptr(&[key, field]);
            let per_token = |field: &str| -> Result<Option<f64>, PricingError> {
                match ctx
                    .opt_price(obj.get(field), &at(field))?
                    .map(|v| (v * 1e12).round() / 1e6)
                {
                    Some(v) if v > MAX_PRICE_PER_MTOK => Err(ctx.shape(
                        &at(field),
                        &format!("a price of at most 1 USD per token, found {:e}", v / 1e6),
                    )),
                    v => Ok(v),
                }
            };
            let (Some(input), Some(output)) = (
                per_token("input_cost_per_token")?,
                per_token("output_cost_per_token")?,
            ) else {
                summary.skipped += 1;
                continue;
            };
            let (existing, mut m) = self.existing_or_template(name);
            let mut rates = Rates::from_input_output(input, output);
            if let Some(v) = per_token("cache_creation_input_token_cost")? {
                rates.cache_write_5m = v;
            }
            if let Some(v) = per_token("cache_creation_input_token_cost_above_1hr")? {
                rates.cache_write_1h = v;
            }
            if let Some(v) = per_token("cache_read_input_token_cost")? {
                rates.cache_read = v;
            }
            m.rates = rates;
            m.long_context = match per_token("input_cost_per_token_above_200k_tokens")? {
                None => None,
                Some(lin) => {
                    let lout =
                        per_token("output_cost_per_token_above_200k_tokens")?.unwrap_or(output);
                    let mut lr = Rates::from_input_output(lin, lout);
                    if let Some(v) = per_token("cache_creation_input_token_cost_above_200k_tokens")?
                    {
                        lr.cache_write_5m = v;
                    }
                    if let Some(v) =
                        per_token("cache_creation_input_token_cost_above_1hr_above_200k_tokens")?
                    {
                        lr.cache_write_1h = v;
                    }
                    if let Some(v) = per_token("cache_read_input_token_cost_above_200k_tokens")? {
                        lr.cache_read = v;
                    }
                    Some(LongContext {
                        threshold_tokens: LONG_CONTEXT_THRESHOLD,
                        rates: lr,
                    })
                }
            };
            // Validated always, applied to new models only: for a known
            // model the built-in data follows the provider docs.
            let min_tokens = ctx.opt_count(
                obj.get("prompt_cache_min_tokens"),
                &at("prompt_cache_min_tokens"),
            )?;
            let tool_tokens = ctx.opt_count(
                obj.get("tool_use_system_prompt_tokens"),
                &at("tool_use_system_prompt_tokens"),
            )?;
            if existing.is_none() {
                if let Some(v) = min_tokens {
                    m.min_cacheable_tokens = v;
                }
                if let Some(v) = tool_tokens {
                    m.tool_prompt.auto_none = v;
                }
            }
            self.commit(existing, m, &mut summary);
        }
        Ok(summary)
    }
}

const NATIVE_FIELDS: [&str; 11] = [
    "aliases",
    "input",
    "cache_write_5m",
    "cache_write_1h",
    "cache_read",
    "output",
    "min_cacheable_tokens",
    "tool_prompt_tokens",
    "framing",
    "long_context",
    "description",
];

const LONG_CONTEXT_FIELDS: [&str; 6] = [
    "threshold_tokens",
    "input",
    "cache_write_5m",
    "cache_write_1h",
    "cache_read",
    "output",
];

/// An RFC 6901 JSON pointer from segments.
fn ptr(segments: &[&str]) -> String {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        out.push_str(&s.replace('~', "~0").replace('/', "~1"));
    }
    out
}

struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn shape(&self, pointer: &str, expected: &str) -> PricingError {
        PricingError::Shape {
            file: self.file.to_string(),
            pointer: pointer.to_string(),
            expected: expected.to_string(),
        }
    }

    fn opt_price(&self, v: Option<&Value>, pointer: &str) -> Result<Option<f64>, PricingError> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match n.as_f64() {
                Some(x) if x.is_finite() && (0.0..=MAX_PRICE_PER_MTOK).contains(&x) => Ok(Some(x)),
                Some(x) if x.is_finite() && x >= 0.0 => Err(self.shape(
                    pointer,
                    &format!("a price of at most {MAX_PRICE_PER_MTOK} USD per million tokens, found {x:e}"),
                )),
                _ => Err(self.shape(pointer, "a non-negative number")),
            },
            Some(_) => Err(self.shape(pointer, "a non-negative number")),
        }
    }

    fn opt_count(&self, v: Option<&Value>, pointer: &str) -> Result<Option<u64>, PricingError> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) if v <= MAX_FILE_TOKENS => Ok(Some(v)),
                Some(v) => Err(self.shape(
                    pointer,
                    &format!("a token count of at most {MAX_FILE_TOKENS}, found {v}"),
                )),
                None => Err(self.shape(pointer, "a non-negative integer")),
            },
            Some(_) => Err(self.shape(pointer, "a non-negative integer")),
        }
    }

    fn object<'v>(
        &self,
        v: &'v Value,
        pointer: &str,
        fields: &[&str],
    ) -> Result<&'v Map<String, Value>, PricingError> {
        let Value::Object(o) = v else {
            return Err(self.shape(
                pointer,
                &format!("an object with members {}", fields.join(", ")),
            ));
        };
        for k in o.keys() {
            if !fields.contains(&k.as_str()) {
                return Err(self.shape(
                    &format!("{pointer}{}", ptr(&[k])),
                    &format!("one of the members {}", fields.join(", ")),
                ));
            }
        }
        Ok(o)
    }
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
    fn normalize_strips_prefixes_and_suffixes() {
        assert_eq!(normalize("anthropic/claude-opus-4-6"), "claude-opus-4-6");
        assert_eq!(
            normalize("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            "claude-sonnet-4-5-20250929"
        );
        assert_eq!(
            normalize("claude-opus-4@20250514"),
            "claude-opus-4-20250514"
        );
        assert_eq!(normalize(" Claude-Haiku-4-5 "), "claude-haiku-4-5");
        assert_eq!(
            strip_date("claude-opus-4-6-20260205"),
            Some("claude-opus-4-6")
        );
        assert_eq!(strip_date("claude-opus-4-6"), None);
    }

    #[test]
    fn edit_distance() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("abc", "abc"), 0);
    }

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

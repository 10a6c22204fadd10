//! The cost model: token counting, the prompt-cache simulator and pricing.
//!
//! - [`tokens`]: the [`tokens::Tokenizer`] trait (tiktoken `o200k_base` /
//!   `cl100k_base`, `chars:R`), a memo that counts each distinct text once,
//!   and calibration against recorded usage. Claude's tokenizer is not
//!   public: counts are calibrated estimates.
//! - [`pricing`]: the built-in price table, per-model data (minimum
//!   cacheable length, tool-use system prompt, framing overheads,
//!   long-context premium), pricing files (native and LiteLLM), the API's
//!   [`pricing::Usage`] and the cost of one request.
//! - [`prompt_cache`]: the [`prompt_cache::PromptCache`] trait every
//!   provider's cache simulator implements: a sequence of requests (prefix
//!   blocks, breakpoints where the provider takes them) in, the usage the
//!   provider would report out;
//! - [`cache_sim`]: Anthropic's (`cache_control` breakpoints), and the
//!   request shape all of them read ([`cache_sim::SimRequest`],
//!   [`cache_sim::PrefixIndex`]);
//! - [`automatic_cache`]: OpenAI's automatic cache (before GPT-5.6) and
//!   Gemini's implicit cache;
//! - [`openai_breakpoints`]: OpenAI's breakpoint cache from GPT-5.6 on.
//!
//! This module knows nothing of the command line or of trace files.
//!
//! This crate owns counting, caching and pricing a request; it stands on
//! the engine's message model alone and must not depend on traces,
//! policies, replays or reports (tests/cli/crates.rs at the workspace root
//! holds its dependencies to a list).

pub mod cache_sim;
pub mod automatic_cache;
pub mod openai_breakpoints;
pub mod explicit_cache;
pub mod pricing;
pub mod prompt_cache;
pub mod request;
pub mod tokens;

#[cfg(test)]
mod test_blocks;

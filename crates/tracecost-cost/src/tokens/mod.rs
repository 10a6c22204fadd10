//! Token counting: a small [`Tokenizer`] trait, tiktoken and chars-per-token
//! backends, a thread-safe memo that counts each distinct text once, and a
//! calibration fit against recorded usage.
//!
//! **Claude's tokenizer is not public.** Every count this module produces is
//! an *estimate*: an OpenAI BPE encoding (`o200k_base` by default,
//! `cl100k_base` on request) or a characters-per-token ratio. Where a trace
//! carries the usage the provider recorded, [`calibrate`] fits a per-trace
//! factor that maps these estimates onto Claude's counts, and reports how far
//! off the fit is. Treat counts as calibrated estimates, never as exact.
//!
//! The trait keeps the backend swappable: a faster BPE implementation with
//! identical counts (for example `bpe-openai`) can be dropped in behind
//! [`Tokenizer`] without touching callers.
//!
//! Framing overheads (tokens per message, per block, per tool definition)
//! and the tool-use system prompt are *not* in this module: they are per-model
//! data in [`crate::pricing`].

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

mod bpe;
mod calibrate;
mod hash;
mod memo;
mod tiktoken;
mod tokenizer;

pub use bpe::BpeCounter;
pub use calibrate::{TokenCalibration, calibrate};
pub(crate) use hash::PrehashedBuild;
pub use hash::{ContentHash, FastBuild, FastHasher};
pub use memo::TokenMemo;
pub use tiktoken::TiktokenCounter;
pub use tokenizer::{Encoding, Tokenizer};

/// Estimates tokens as `ceil(chars / R)`, counting Unicode scalar values.
/// `R` must be finite and positive (see [`TokenizerSpec::from_str`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CharsPerToken(pub f64);

impl Tokenizer for CharsPerToken {
    fn count(&self, text: &str) -> u64 {
        let chars = text.chars().count() as f64;
        if chars == 0.0 {
            return 0;
        }
        (chars / self.0).ceil() as u64
    }

    fn name(&self) -> String {
        format!("chars:{}", self.0)
    }
}

/// The smallest R of `chars:R`.
pub const MIN_CHARS_PER_TOKEN: f64 = 0.01;

/// A parsed tokenizer spec: `o200k_base`, `cl100k_base` (bpe-openai),
/// `tiktoken:o200k_base`, `tiktoken:cl100k_base` (tiktoken-rs, identical
/// counts, for cross-checks) or `chars:R`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum TokenizerSpec {
    /// `o200k_base` (the default).
    #[default]
    O200kBase,
    /// `cl100k_base`.
    Cl100kBase,
    /// tiktoken-rs with this encoding.
    Tiktoken(Encoding),
    /// `chars:R`: R characters per token, rounded up.
    CharsPerToken(f64),
}

/// A tokenizer spec string that could not be parsed. The message quotes
/// at most 200 characters of it, on one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown tokenizer `{}`: expected o200k_base, cl100k_base, tiktoken:o200k_base, tiktoken:cl100k_base or chars:R with R a positive number (at least 0.01)",
    tracecost_engine::handle::one_line(spec, 200)
)]
pub struct TokenizerSpecError {
    /// The spec as given.
    pub spec: String,
}

impl FromStr for TokenizerSpec {
    type Err = TokenizerSpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || TokenizerSpecError {
            spec: s.to_string(),
        };
        match s.trim() {
            "o200k_base" | "o200k" => Ok(Self::O200kBase),
            "cl100k_base" | "cl100k" => Ok(Self::Cl100kBase),
            "tiktoken:o200k_base" => Ok(Self::Tiktoken(Encoding::O200kBase)),
            "tiktoken:cl100k_base" => Ok(Self::Tiktoken(Encoding::Cl100kBase)),
            other => {
                let r = other.strip_prefix("chars:").ok_or_else(err)?;
                let r: f64 = r.trim().parse().map_err(|_| err())?;
                // Below 0.01 characters per token the counts overflow the
                // per-call sums of a large trace.
                if r.is_finite() && r >= MIN_CHARS_PER_TOKEN {
                    Ok(Self::CharsPerToken(r))
                } else {
                    Err(err())
                }
            }
        }
    }
}

impl fmt::Display for TokenizerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::O200kBase => f.write_str("o200k_base"),
            Self::Cl100kBase => f.write_str("cl100k_base"),
            Self::Tiktoken(e) => write!(f, "tiktoken:{}", e.as_str()),
            Self::CharsPerToken(r) => write!(f, "chars:{r}"),
        }
    }
}

impl TokenizerSpec {
    /// Builds the tokenizer this spec names.
    pub fn build(self) -> Arc<dyn Tokenizer> {
        match self {
            Self::O200kBase => Arc::new(BpeCounter::new(Encoding::O200kBase)),
            Self::Cl100kBase => Arc::new(BpeCounter::new(Encoding::Cl100kBase)),
            Self::Tiktoken(e) => Arc::new(TiktokenCounter::new(e)),
            Self::CharsPerToken(r) => Arc::new(CharsPerToken(r)),
        }
    }
}

/// Parses a spec (`o200k_base|cl100k_base|chars:R`) and builds the tokenizer.
pub fn parse_tokenizer(spec: &str) -> Result<Arc<dyn Tokenizer>, TokenizerSpecError> {
    spec.parse::<TokenizerSpec>().map(TokenizerSpec::build)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chars_per_token_rounds_up() {
        let t = CharsPerToken(4.0);
        assert_eq!(t.count(""), 0);
        assert_eq!(t.count("a"), 1);
        assert_eq!(t.count("abcd"), 1);
        assert_eq!(t.count("abcde"), 2);
        // Unicode scalar values, not bytes.
        assert_eq!(t.count("éééé"), 1);
        assert_eq!(CharsPerToken(3.5).count("abcdefgh"), 3);
        assert_eq!(t.name(), "chars:4");
        assert_eq!(CharsPerToken(3.5).name(), "chars:3.5");
    }

    #[test]
    fn spec_parsing() {
        assert_eq!(
            "o200k_base".parse::<TokenizerSpec>(),
            Ok(TokenizerSpec::O200kBase)
        );
        assert_eq!(
            "cl100k_base".parse::<TokenizerSpec>(),
            Ok(TokenizerSpec::Cl100kBase)
        );
        assert_eq!(
            "chars:3.5".parse::<TokenizerSpec>(),
            Ok(TokenizerSpec::CharsPerToken(3.5))
        );
        for bad in ["chars:0", "chars:-1", "chars:x", "chars:inf", "p50k", ""] {
            assert!(bad.parse::<TokenizerSpec>().is_err(), "{bad}");
        }
        let e = "gpt2".parse::<TokenizerSpec>().unwrap_err();
        assert!(e.to_string().contains("`gpt2`"));
        assert_eq!(parse_tokenizer("chars:4").unwrap().name(), "chars:4");
        assert_eq!(TokenizerSpec::CharsPerToken(4.0).to_string(), "chars:4");
    }
}

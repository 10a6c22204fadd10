//! The counting interface every backend implements, and the BPE
//! encodings.

/// Counts tokens in text. Implementations must be deterministic: the same
/// text always gives the same count.
pub trait Tokenizer: Send + Sync {
    /// Number of tokens in `text`.
    fn count(&self, text: &str) -> u64;
    /// The spec string that rebuilds this tokenizer (`o200k_base`,
    /// `cl100k_base`, `chars:4`).
    fn name(&self) -> String;
}

/// A tiktoken BPE encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Encoding {
    /// `o200k_base` (GPT-4o family); the default.
    #[default]
    O200kBase,
    /// `cl100k_base` (GPT-4 / GPT-3.5 family).
    Cl100kBase,
}

impl Encoding {
    /// The encoding's name as tiktoken spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
}

//! What the simulators' tests build requests of: text blocks by key and
//! size, and the built-in models.

use crate::cache_sim::{PrefixBlock, PrefixKind};
use crate::pricing::{ModelPrice, Pricing};
use crate::tokens::ContentHash;

/// A minute, in milliseconds.
pub const MIN: u64 = 60_000;

/// A text block of `tokens` whose content is `key`'s (same key, same
/// content).
pub fn blk(key: u64, tokens: u64) -> PrefixBlock {
    PrefixBlock {
        key: ContentHash::of(&key.to_le_bytes()),
        tokens,
        kind: PrefixKind::Text,
        message: Some(0),
    }
}

/// The built-in model `id`.
pub fn model(id: &str) -> ModelPrice {
    Pricing::builtin().lookup(id).unwrap().clone()
}

//! The sizes a compacted result's recall risk is measured by: the buckets,
//! and in each the chance of finding evidence by coincidence. Beneath both
//! the risk estimate and the recalls observed, which count by the same
//! buckets.

/// How often the detector finds evidence by coincidence in a compacted
/// result, by the result's size: found when every tool result is swapped
/// for another session's of about the same size, which the model never saw
/// (a placebo). Larger results hold more lines and names, so more of them
/// match by chance. What a config shows is charged beyond this only.
/// Measured on 102 real Claude Code sessions (8,185 results swapped; the
/// default grid's `k=1` ledgers, which compact every result above 2,000,
/// 8,000 and 32,000 characters) with this detector, and checked on a
/// second corpus it was not fitted on: `docs/recall.md`. Measure again
/// whenever what counts as evidence changes.
pub const COINCIDENCE: [Coincidence; 3] = [
    Coincidence {
        below_chars: 8_000,
        copied_lines: 0.009,
        identifiers: 0.206,
    },
    Coincidence {
        below_chars: 32_000,
        copied_lines: 0.068,
        identifiers: 0.333,
    },
    Coincidence {
        below_chars: u64::MAX,
        copied_lines: 0.187,
        identifiers: 0.480,
    },
];

/// Evidence found by coincidence in a compacted result below a size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Coincidence {
    /// Results below this many characters (and at or above the size
    /// before's).
    pub below_chars: u64,
    /// The chance of a copied line.
    pub copied_lines: f64,
    /// The chance of an identifier without a copied line.
    pub identifiers: f64,
}

/// The size buckets results are measured in, one per [`COINCIDENCE`]
/// entry: by coincidence and, where the ledger ran, by observed recalls.
pub const SIZE_BUCKETS: [&str; 3] = ["0-8000", "8000-32000", "32000+"];

/// The bucket (an index of [`COINCIDENCE`] and [`SIZE_BUCKETS`]) of a
/// result of `chars`.
pub fn size_bucket(chars: u64) -> usize {
    COINCIDENCE
        .iter()
        .position(|c| chars < c.below_chars)
        .unwrap_or(COINCIDENCE.len() - 1)
}

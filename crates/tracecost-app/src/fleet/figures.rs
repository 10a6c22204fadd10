//! How the fleet's dollar figures compare: a saving too small to count,
//! and a part in percent of its whole.

/// A session's saving smaller than this (half a cent) is noise, not a
/// session made cheaper or dearer.
pub const NOISE_USD: f64 = 0.005;

/// `part` in percent of `whole`; 0 when `whole` is not positive.
pub(super) fn pct_of(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole * 100.0
    } else {
        0.0
    }
}

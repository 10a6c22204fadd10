//! A tiny seeded PRNG (SplitMix64): fast, portable and, above all, the same
//! sequence on every machine and every Rust version.

/// SplitMix64 (Steele, Lea & Flood 2014), as used to seed xoshiro.
#[derive(Debug, Clone)]
pub(crate) struct Rng {
    state: u64,
}

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

impl Rng {
    /// A generator whose sequence depends only on `seed`.
    pub(crate) fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// An independent stream for a sub-part identified by `label`, so that
    /// changing how much one part draws never shifts another part.
    pub(crate) fn fork(&self, label: &str) -> Self {
        Self::new(mix(self.state ^ fnv1a(label)))
    }

    /// The next 64 random bits.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.state)
    }

    /// Uniform in `lo..=hi` (`lo` when `hi < lo`).
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        // Multiply-shift: unbiased enough for test data, and portable.
        lo + ((u128::from(self.next_u64()) * u128::from(span)) >> 64) as u64
    }

    /// Uniform in `lo..=hi` for `usize`.
    pub(crate) fn range_usize(&mut self, lo: usize, hi: usize) -> usize {
        self.range(lo as u64, hi as u64) as usize
    }

    /// Uniform in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// `true` with probability `p`.
    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// One element of a slice; callers only pass constant, non-empty lists
    /// (an empty one panics on indexing, a bug in the generator).
    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        let i = self.range_usize(0, items.len().saturating_sub(1));
        items[i.min(items.len().saturating_sub(1))]
    }

    /// `n` base-62 characters.
    pub(crate) fn base62(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(BASE62[self.range_usize(0, 61)]))
            .collect()
    }

    /// `n` base-36 characters (digits and uppercase letters), as Amazon's
    /// ids spell them.
    pub(crate) fn base36(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(BASE62[self.range_usize(0, 35)]))
            .collect()
    }

    /// `n` lowercase hex digits.
    pub(crate) fn hex(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from(b"0123456789abcdef"[self.range_usize(0, 15)]))
            .collect()
    }

    /// An Anthropic-style tool call id: `toolu_01` and 22 base-62 chars.
    pub(crate) fn tool_use_id(&mut self) -> String {
        format!("toolu_01{}", self.base62(22))
    }
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a, for deriving stream labels from text.
pub(crate) fn fnv1a(s: &str) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // First outputs of SplitMix64 seeded with 0 (published test vector).
        let mut r = Rng::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn ranges_stay_in_bounds_and_forks_differ() {
        let mut r = Rng::new(7);
        for _ in 0..1000 {
            let v = r.range(3, 9);
            assert!((3..=9).contains(&v));
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
        }
        assert_eq!(r.range(5, 5), 5);
        assert_eq!(r.range(5, 2), 5);
        let a = r.fork("a").next_u64();
        let b = r.fork("b").next_u64();
        assert_ne!(a, b);
        assert_eq!(r.fork("a").next_u64(), a);
        assert_eq!(r.tool_use_id().len(), 30);
    }
}

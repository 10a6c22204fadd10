//! Content hashes: the memo's and the cache simulator's key, and the
//! hashers of maps keyed by it.

use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};

/// A 128-bit content hash: MurmurHash3 (x64, 128-bit, seed 0) of the
/// bytes, its two words in little-endian order. Deterministic across
/// processes and platforms; used as the memo key and as the per-block
/// content key of the cache simulator. It is only ever compared within a
/// run, never written out, so it need not resist chosen collisions (a
/// trace built to make two blocks collide only misprices itself); it was
/// SHA-256, which cost 5–9% of a fleet's report.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct ContentHash(pub [u8; 16]);

impl ContentHash {
    /// Hashes `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        const C1: u64 = 0x87c3_7b91_1142_53d5;
        const C2: u64 = 0x4cf5_ad43_2745_937f;
        let mix_k1 = |k: u64| k.wrapping_mul(C1).rotate_left(31).wrapping_mul(C2);
        let mix_k2 = |k: u64| k.wrapping_mul(C2).rotate_left(33).wrapping_mul(C1);
        let word = |b: &[u8]| {
            let mut w = [0u8; 8];
            w[..b.len()].copy_from_slice(b);
            u64::from_le_bytes(w)
        };
        let (mut h1, mut h2) = (0u64, 0u64);
        let mut blocks = bytes.chunks_exact(16);
        for b in &mut blocks {
            h1 ^= mix_k1(word(&b[..8]));
            h1 = h1
                .rotate_left(27)
                .wrapping_add(h2)
                .wrapping_mul(5)
                .wrapping_add(0x52dc_e729);
            h2 ^= mix_k2(word(&b[8..]));
            h2 = h2
                .rotate_left(31)
                .wrapping_add(h1)
                .wrapping_mul(5)
                .wrapping_add(0x3849_5ab5);
        }
        let tail = blocks.remainder();
        if tail.len() > 8 {
            h2 ^= mix_k2(word(&tail[8..]));
        }
        if !tail.is_empty() {
            h1 ^= mix_k1(word(&tail[..tail.len().min(8)]));
        }
        let fmix = |mut k: u64| {
            k ^= k >> 33;
            k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
            k ^= k >> 33;
            k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
            k ^ (k >> 33)
        };
        h1 ^= bytes.len() as u64;
        h2 ^= bytes.len() as u64;
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        h1 = fmix(h1);
        h2 = fmix(h2);
        h1 = h1.wrapping_add(h2);
        h2 = h2.wrapping_add(h1);
        let mut out = [0u8; 16];
        out[..8].copy_from_slice(&h1.to_le_bytes());
        out[8..].copy_from_slice(&h2.to_le_bytes());
        Self(out)
    }

    /// The hash as a `u128` (big-endian).
    pub fn as_u128(self) -> u128 {
        u128::from_be_bytes(self.0)
    }
}

impl fmt::Debug for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ContentHash({self})")
    }
}

impl fmt::Display for ContentHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// A hasher for keys that already are uniformly distributed hashes: takes
/// the first 8 bytes written. Deterministic (no `RandomState`).
#[derive(Default)]
pub(crate) struct PrehashedHasher(u64);

impl Hasher for PrehashedHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().take(8) {
            self.0 = (self.0 << 8) | u64::from(b);
        }
        // Mix so that short writes (lengths, small ints) still spread.
        self.0 = self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (self.0 >> 29);
    }
}

pub(crate) type PrehashedBuild = BuildHasherDefault<PrehashedHasher>;

/// A fast hasher for the replay's internal maps (addresses, small integer
/// keys, ids), where SipHash's protection against chosen keys buys nothing
/// and costs a measurable share of a sweep: rustc's FxHasher. Deterministic;
/// never used for anything written out or for cache identity (that is
/// [`ContentHash`]), and where a map it hashes is walked for a figure, the
/// walk is sorted first, so no output depends on the hash.
pub type FastHasher = rustc_hash::FxHasher;

/// Builds [`FastHasher`]s.
pub type FastBuild = rustc_hash::FxBuildHasher;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_hash_is_stable() {
        // MurmurHash3_x64_128 with seed 0, as its reference code writes it.
        assert_eq!(
            ContentHash::of(b"").to_string(),
            "00000000000000000000000000000000"
        );
        assert_eq!(
            ContentHash::of(b"The quick brown fox jumps over the lazy dog").to_string(),
            "6c1b07bc7bbc4be347939ac4a93c437a"
        );
    }
}

//! Content digests (SHA-256): what keys a cache's entries and identifies
//! a trace's bytes. Beneath the store, the plans and the cache, which all
//! name traces by them.

use std::path::Path;

use sha2::{Digest, Sha256};

/// A SHA-256 digest: the key of an entry, or of a trace's bytes.
pub type Key = [u8; 32];

/// A digest of `parts`, each framed by its length so that no two lists of
/// parts give the same bytes.
pub fn digest<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> Key {
    let mut h = Sha256::new();
    for p in parts {
        framed(&mut h, p);
    }
    h.finalize().into()
}

/// Adds `part` to `h` after its length.
pub(crate) fn framed(h: &mut Sha256, part: &[u8]) {
    h.update((part.len() as u64).to_le_bytes());
    h.update(part);
}

/// The SHA-256 of the file at `path`, read a block at a time.
pub fn digest_file(path: &Path) -> std::io::Result<Key> {
    let mut file = std::fs::File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = std::io::Read::read(&mut file, &mut buf)?;
        if n == 0 {
            return Ok(h.finalize().into());
        }
        h.update(&buf[..n]);
    }
}

/// The digest of a trace's bytes, as a cache keys it: the digest the
/// loader gives a line of a JSON Lines input ([`tracecost_trace::line_digest`]),
/// so that a trace read back is keyed as it was when its line was read.
pub fn bytes_digest(bytes: &[u8]) -> Key {
    tracecost_trace::line_digest(bytes)
}

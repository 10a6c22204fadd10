//! The tiktoken backend, and the chunking at piece boundaries that keeps
//! its regex from backtracking over very long texts.

use std::fmt;

use super::tokenizer::{Encoding, Tokenizer};

/// Counts with tiktoken-rs (`encode_ordinary`: special-token text is counted
/// as ordinary text, never as a special token).
///
/// The BPE tables are built once per process and shared.
///
/// Long texts are cut into chunks of at most [`TiktokenCounter::CHUNK_BYTES`]
/// at *piece boundaries* of the `o200k_base` / `cl100k_base` pre-tokenizer
/// regexes (before a space that follows a non-space, after a newline that
/// precedes a non-space other than `/`, after the last line break of a
/// whitespace run, between an ASCII letter or digit and ASCII punctuation
/// other than `'`), so the sum of the chunk counts
/// equals the count of the whole text. This bounds the regex engine's backtracking
/// stack (tiktoken-rs panics on runs of about a million characters). Only a
/// window with no such boundary at all (a very long run of whitespace, or of
/// letters) is cut at a character boundary, which can shift its count by a
/// token or so.
#[derive(Clone, Copy)]
pub struct TiktokenCounter {
    encoding: Encoding,
    bpe: &'static tiktoken_rs::CoreBPE,
    chunk_bytes: usize,
}

impl fmt::Debug for TiktokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TiktokenCounter({})", self.encoding.as_str())
    }
}

impl TiktokenCounter {
    /// A counter for `encoding` (loads the BPE table on first use).
    pub fn new(encoding: Encoding) -> Self {
        let bpe = match encoding {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        };
        Self {
            encoding,
            bpe,
            chunk_bytes: Self::CHUNK_BYTES,
        }
    }

    /// The default chunk size in bytes.
    pub const CHUNK_BYTES: usize = 16 * 1024;

    /// The same counter with another chunk size (at least 16 bytes); for
    /// tests of the chunking, counts do not depend on it except in windows
    /// without a piece boundary.
    pub fn with_chunk_bytes(mut self, bytes: usize) -> Self {
        self.chunk_bytes = bytes.max(16);
        self
    }

    /// The encoding it counts with.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }
}

impl Default for TiktokenCounter {
    fn default() -> Self {
        Self::new(Encoding::default())
    }
}

impl Tokenizer for TiktokenCounter {
    fn count(&self, text: &str) -> u64 {
        chunks(text, self.chunk_bytes)
            .map(|c| self.bpe.encode_ordinary(c).len() as u64)
            .sum()
    }

    fn name(&self) -> String {
        format!("tiktoken:{}", self.encoding.as_str())
    }
}

/// Whether byte `i` of a text, between chars `prev` and `cur`, is a piece
/// boundary of the o200k / cl100k pre-tokenizers whatever surrounds it.
fn is_piece_boundary(prev: char, cur: char) -> bool {
    (cur == ' ' && !prev.is_whitespace())
        || (prev == '\n' && !cur.is_whitespace() && cur != '/')
        || (prev.is_ascii_alphanumeric() && cur.is_ascii_punctuation() && cur != '\'')
}

/// Whether a cut between `prev` and `cur` (which starts `after`) ends a
/// run of line breaks: `prev` is `\r` or `\n` and the whitespace from
/// `cur` on holds no line break. The pre-tokenizers' pieces that take line
/// breaks (`\s*[\r\n]+`, and punctuation's trailing `[\r\n/]*`) end
/// at the run's last one, and what follows starts a piece: `.\n\n x` is
/// `.\n\n`, ` `, `x` whatever precedes it.
fn ends_newline_run(prev: char, cur: char, after: &str) -> bool {
    matches!(prev, '\r' | '\n')
        && cur.is_whitespace()
        && !after
            .chars()
            .take_while(|c| c.is_whitespace())
            .any(|c| matches!(c, '\r' | '\n'))
}

/// Where to cut `rest` (longer than `max`): the last piece boundary in
/// `(0, end]`, or a char boundary (`forced`) when the window has none.
fn cut_point(rest: &str, max: usize) -> (usize, bool) {
    let mut end = max.min(rest.len());
    while !rest.is_char_boundary(end) {
        end -= 1;
    }
    let next = rest[end..].chars().next().map(|c| (end, c));
    let mut cut = None;
    let mut prev: Option<char> = None;
    for (i, c) in rest[..end].char_indices().chain(next) {
        if let Some(p) = prev
            && (is_piece_boundary(p, c) || ends_newline_run(p, c, &rest[i..]))
        {
            cut = Some(i);
        }
        prev = Some(c);
    }
    match cut {
        Some(c) => (c, false),
        // A window narrower than one char cannot happen for max >= 4.
        None if end == 0 => (rest.chars().next().map_or(rest.len(), char::len_utf8), true),
        None => (end, true),
    }
}

/// Splits `text` into chunks of at most `max` bytes at piece boundaries
/// (falling back to a char boundary in a window without one).
fn chunks(text: &str, max: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        if rest.len() <= max {
            return Some(std::mem::take(&mut rest));
        }
        let (head, tail) = rest.split_at(cut_point(rest, max).0);
        rest = tail;
        Some(head)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cut_at_piece_boundaries() {
        let text = "alpha beta,gamma\ndelta";
        let parts: Vec<&str> = chunks(text, 16).collect();
        assert_eq!(parts.concat(), text);
        assert!(parts.iter().all(|p| p.len() <= 16));
        assert_eq!(parts[0], "alpha beta");
        let spaces = " ".repeat(100);
        let parts: Vec<&str> = chunks(&spaces, 16).collect();
        assert_eq!(parts.len(), 7);
        let wide = "é".repeat(20);
        let parts: Vec<&str> = chunks(&wide, 17).collect();
        assert_eq!(parts.concat(), wide);
        assert!(parts.iter().all(|p| p.len() <= 17));
    }

    #[test]
    fn a_run_of_line_breaks_before_a_space_is_a_cut() {
        // Found by the chunking property test: the separators `.\n\n `
        // left a 64-byte window with no cut but a forced one, which
        // changed the count.
        let text = "a \u{301}ー_ーé.\n\n 77é_\u{301}.\n\n 7\u{301}__''.\n\n '_\u{301}77東'.\n\n 東7東_東'.\n\n ";
        let (cut, forced) = cut_point(&text[1..], 64);
        assert!(!forced);
        assert!(text[1..][..cut].ends_with(".\n\n"));
        assert!(text[1..][cut..].starts_with(' '));
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let whole = TiktokenCounter::new(enc).count(text);
            let chunked = TiktokenCounter::new(enc).with_chunk_bytes(64).count(text);
            assert_eq!(whole, chunked, "{enc:?}");
        }
        // A break later in the whitespace run keeps the run whole.
        assert!(!ends_newline_run('\n', ' ', " \nx"));
        assert!(ends_newline_run('\n', ' ', " \tx"));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// Cutting at a piece boundary never changes the count.
        #[test]
        fn piece_boundary_cuts_keep_counts(
            chars in proptest::collection::vec(proptest::sample::select(vec![
                'a', 'B', 'é', 'ß', '東', 'ー', '\u{301}', '7', '0', '\'', '_', '"', '.', ',',
                '{', '}', ':', '/', '-', '!', '<', '|', ' ', ' ', '\n', '\n', '\r', '\t',
            ]), 2..80),
            max in 8usize..40,
        ) {
            let text: String = chars.into_iter().collect();
            if text.len() > max {
                let (cut, forced) = cut_point(&text, max);
                if !forced {
                    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
                        let t = TiktokenCounter::new(enc);
                        let whole = t.bpe.encode_ordinary(&text).len();
                        let split = t.bpe.encode_ordinary(&text[..cut]).len()
                            + t.bpe.encode_ordinary(&text[cut..]).len();
                        proptest::prop_assert_eq!(whole, split, "{:?} at {} {:?}", enc, cut, text);
                    }
                }
            }
        }
    }
}

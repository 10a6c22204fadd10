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

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};

use rayon::prelude::*;

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

/// Counts with bpe-openai, the default backend: the same counts as
/// tiktoken's `encode_ordinary` (checked on 4,743 distinct texts, 7.1 MB of
/// traces and transcripts: 0 differences for both encodings) and, measured
/// here, 1.3× faster on mixed text, 2× on JSON payloads, 3× with
/// `cl100k_base`, and 17–33× on long runs without spaces — where
/// tiktoken's regex pre-tokenizer backtracks. See docs/benchmarks.md.
#[derive(Clone, Copy)]
pub struct BpeCounter {
    encoding: Encoding,
    bpe: &'static bpe_openai::Tokenizer,
}

impl fmt::Debug for BpeCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BpeCounter({})", self.encoding.as_str())
    }
}

impl BpeCounter {
    /// A counter for `encoding` (loads the table on first use).
    pub fn new(encoding: Encoding) -> Self {
        let bpe = match encoding {
            Encoding::O200kBase => bpe_openai::o200k_base(),
            Encoding::Cl100kBase => bpe_openai::cl100k_base(),
        };
        Self { encoding, bpe }
    }
}

/// Pieces of at most this many bytes have their counts remembered: words,
/// numbers, punctuation runs and spaces, which repeat across a fleet's
/// texts. A piece is kept in the key itself (its bytes and its length in
/// 16 bytes), so that a lookup touches one place in memory; a longer piece
/// (a long word, a run without spaces) is encoded each time.
const PIECE_BYTES_MAX: usize = 15;

/// Slots of the table of remembered pieces, per thread and encoding: a
/// piece goes to the slot its hash names, replacing what was there (a
/// table of 1 MB, which stays in the processor's caches, where a growing
/// map would cost a miss per lookup). On a 300-session fleet, 8,192 slots
/// missed 3.2% of lookups and 32,768 miss 1.2% (each miss is a piece
/// encoded again); 65,536 slots were no faster. The counts are the same
/// whether a piece is remembered or not.
const PIECE_SLOTS: usize = 1 << 15;

/// One slot: a piece's key ([`piece_key`]; 0, which no piece of two or
/// more bytes has, when empty) and its count.
type PieceSlot = (u128, u32);

/// The remembered pieces of one encoding.
struct PieceCounts(Box<[PieceSlot]>);

impl Default for PieceCounts {
    fn default() -> Self {
        PieceCounts(vec![(0, 0); PIECE_SLOTS].into_boxed_slice())
    }
}

impl PieceCounts {
    /// The slot of `key`: a multiplicative hash of its two halves.
    fn slot(key: u128) -> usize {
        let h = ((key as u64) ^ ((key >> 64) as u64).rotate_left(29))
            .wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> (64 - PIECE_SLOTS.trailing_zeros())) as usize
    }
}

/// What a thread keeps for counting, per encoding: the remembered pieces
/// and the pre-tokenizer's lazy DFA cache. Per thread, so that counting
/// takes no lock and no shared pool.
#[derive(Default)]
struct ThreadCounting {
    pieces: [PieceCounts; 2],
    dfa_caches: [Option<regex_automata::hybrid::dfa::Cache>; 2],
}

thread_local! {
    static COUNTING: std::cell::RefCell<ThreadCounting> = Default::default();
}

/// The o200k_base / cl100k_base pre-tokenizer, as bpe-openai builds it (the
/// same three patterns, the same look-ahead emulation, see [`Self::split`]),
/// searched with a lazy DFA whose cache the caller keeps. bpe-openai's own
/// `split` takes a cache from its regex's pool and gives it back for every
/// piece, which from a rayon worker (not the pool's owner thread) costs a
/// compare-and-swap each way; and its meta regex adds a strategy's dispatch
/// to every anchored search, where a forward DFA search alone finds the
/// piece's end.
struct Pretokenizer {
    encoding: Encoding,
    dfa: regex_automata::hybrid::dfa::DFA,
    /// Per pattern: whether its last char is a look-ahead, not part of the
    /// piece.
    lookahead: [bool; 3],
}

impl Pretokenizer {
    /// Builds the pre-tokenizer of `encoding` from bpe-openai 0.3's
    /// patterns. It rewrites tiktoken's `\s+(?!\S)` as `\s+$` (in the
    /// first pattern), then `\s+\s` with its last char dropped, then
    /// `\s+`: the regex crates have no look-ahead.
    fn new(encoding: Encoding) -> Self {
        let pat1 = match encoding {
            Encoding::O200kBase => [
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
                r"\p{N}{1,3}",
                r" ?[^\s\p{L}\p{N}]+[\r\n/]*",
                r"\s*[\r\n]+",
                r"\s+$",
            ]
            .join("|"),
            Encoding::Cl100kBase => [
                r"(?i:'s|'t|'re|'ve|'m|'ll|'d)",
                r"[^\r\n\p{L}\p{N}]?\p{L}+",
                r"\p{N}{1,3}",
                r" ?[^\s\p{L}\p{N}]+[\r\n]*",
                r"\s*[\r\n]+",
                r"\s+$",
            ]
            .join("|"),
        };
        let dfa = regex_automata::hybrid::dfa::DFA::new_many(&[pat1.as_str(), r"\s+\s", r"\s+"])
            .expect("bpe-openai's patterns compile");
        Pretokenizer {
            encoding,
            dfa,
            lookahead: [false, true, false],
        }
    }

    /// The pre-tokenizer of `encoding`, built once per process.
    fn of(encoding: Encoding) -> &'static Pretokenizer {
        static O200K: OnceLock<Pretokenizer> = OnceLock::new();
        static CL100K: OnceLock<Pretokenizer> = OnceLock::new();
        match encoding {
            Encoding::O200kBase => O200K.get_or_init(|| Pretokenizer::new(encoding)),
            Encoding::Cl100kBase => CL100K.get_or_init(|| Pretokenizer::new(encoding)),
        }
    }

    /// Calls `f` with each piece of `text`, in order, as bpe-openai's
    /// `Tokenizer::split` gives them: each piece is the longest-leftmost-
    /// first anchored match from the end of the last (on the rest of the
    /// text alone, so `$` is the text's end), less its last char when the
    /// look-ahead pattern matched. `cache` must be this DFA's.
    fn split<'t>(
        &self,
        cache: &mut regex_automata::hybrid::dfa::Cache,
        text: &'t str,
        mut f: impl FnMut(&'t str),
    ) {
        use regex_automata::{Anchored, Input};
        let mut last = 0;
        while last < text.len() {
            let rest = &text[last..];
            if let Some(end) = ascii_piece(rest.as_bytes(), self.encoding) {
                f(&rest[..end]);
                last += end;
                continue;
            }
            let input = Input::new(rest).anchored(Anchored::Yes);
            let end = match self.dfa.try_search_fwd(cache, &input) {
                Ok(Some(m)) => {
                    let mut end = m.offset();
                    if self.lookahead[m.pattern().as_usize()] {
                        // The look-ahead char; the pattern matched at least
                        // one char before it.
                        let ahead = rest[..end].chars().next_back().map_or(0, char::len_utf8);
                        end -= ahead;
                    }
                    end
                }
                // Every char starts a piece (`\s+` or the first
                // pattern's alternatives cover all chars).
                Ok(None) => break,
                // The DFA is built to never quit or give up; should it, the
                // rest is split as bpe-openai would.
                Err(_) => {
                    BpeCounter::new(self.encoding).bpe.split(rest).for_each(f);
                    return;
                }
            };
            if end == 0 {
                break;
            }
            f(&rest[..end]);
            last += end;
        }
    }
}

/// A piece of at most [`PIECE_BYTES_MAX`] bytes as one number: its bytes,
/// then its length in the last byte (so that trailing zero bytes differ).
///
/// Built from overlapping loads, the overlap shifted out, rather than by
/// copying the piece into a zeroed buffer: that copy and the load of the
/// buffer just written stalled the store-to-load forwarding on every piece
/// (a quarter of the pre-tokenizer's time). `bytes` has 2 to
/// [`PIECE_BYTES_MAX`] bytes.
#[inline]
fn piece_key(bytes: &[u8]) -> u128 {
    let len = bytes.len();
    let le64 = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or_default());
    let le32 = |i: usize| {
        u64::from(u32::from_le_bytes(
            bytes[i..i + 4].try_into().unwrap_or_default(),
        ))
    };
    let (lo, hi) = if len >= 8 {
        // Bytes 8.. of the piece: its last 8, less the 16 - len it shares
        // with the first 8 (shifted in two steps: 8 to 64 bits in all).
        (le64(0), (le64(len - 8) >> 8) >> (8 * (15 - len)))
    } else if len >= 4 {
        (le32(0) | ((le32(len - 4) >> (8 * (8 - len))) << 32), 0)
    } else {
        let mut lo = 0u64;
        for (i, &b) in bytes.iter().enumerate() {
            lo |= u64::from(b) << (8 * i);
        }
        (lo, 0)
    };
    (u128::from(hi | ((len as u64) << 56)) << 64) | u128::from(lo)
}

/// Classes of ASCII bytes for [`ascii_piece`], as bits.
const UPPER: u8 = 1;
const LOWER: u8 = 2;
const DIGIT: u8 = 4;
/// `\r` and `\n`.
const LINE_BREAK: u8 = 8;
/// Whitespace (`\p{White_Space}` in ASCII: tab to carriage return, space).
const SPACE: u8 = 16;
/// Neither a letter, a digit nor whitespace: `[^\s\p{L}\p{N}]`.
const OTHER: u8 = 32;
/// A byte of a non-ASCII char: its class is not known here.
const HIGH: u8 = 64;

/// The class bits of each byte.
static BYTE_CLASS: [u8; 256] = {
    let mut t = [HIGH; 256];
    let mut b = 0;
    while b < 128 {
        t[b] = match b as u8 {
            b'A'..=b'Z' => UPPER,
            b'a'..=b'z' => LOWER,
            b'0'..=b'9' => DIGIT,
            b'\r' | b'\n' => LINE_BREAK | SPACE,
            b'\t' | 0x0b | 0x0c | b' ' => SPACE,
            _ => OTHER,
        };
        b += 1;
    }
    t
};

/// The end of the run of bytes of `classes` from `i`, or `None` when the
/// run stops at a non-ASCII char (which might belong to it).
#[inline]
fn run_end(b: &[u8], mut i: usize, classes: u8) -> Option<usize> {
    while let Some(&c) = b.get(i) {
        let class = BYTE_CLASS[c as usize];
        if class & classes == 0 {
            return (class != HIGH).then_some(i);
        }
        i += 1;
    }
    Some(i)
}

/// The end of `(?i:'s|'t|'re|'ve|'m|'ll|'d)?` at `i`: `i` when none
/// follows, `None` when a non-ASCII char would decide (`ſ` is an `s`
/// without case).
#[inline]
fn contraction_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i) != Some(&b'\'') {
        return Some(i);
    }
    let at = |k: usize| b.get(i + k).map(u8::to_ascii_lowercase);
    if at(1).is_some_and(|c| c >= 0x80) || at(2).is_some_and(|c| c >= 0x80) {
        return None;
    }
    Some(match (at(1), at(2)) {
        (Some(b's' | b't' | b'm' | b'd'), _) => i + 2,
        (Some(b'r' | b'v'), Some(b'e')) | (Some(b'l'), Some(b'l')) => i + 3,
        _ => i,
    })
}

/// The length of the first pre-tokenizer piece of `b` (not empty), taken
/// without the DFA when the bytes that decide it are ASCII; `None` when a
/// non-ASCII char might change it. The alternatives of bpe-openai's
/// patterns ([`Pretokenizer::new`]) in their order, the first that matches
/// winning (leftmost-first), each quantifier greedy:
///
/// - o200k_base: a word of upper-case letters then lower-case ones (or of
///   upper-case ones alone), with one optional leading non-letter,
///   non-digit other than a line break, and an optional contraction;
///   cl100k_base: a contraction alone, then a word of letters with the
///   same optional lead;
/// - one to three digits;
/// - an optional space, a run of what is neither whitespace, a letter nor
///   a digit, and the line breaks (and, o200k_base, `/`) after it;
/// - whitespace up to its last line break; whitespace to the text's end;
/// - whitespace less its last char (`\s+\s` with the look-ahead dropped);
///   whitespace.
fn ascii_piece(b: &[u8], encoding: Encoding) -> Option<usize> {
    let first = BYTE_CLASS[*b.first()? as usize];
    if first == HIGH {
        return None;
    }
    let o200k = encoding == Encoding::O200kBase;
    if !o200k && b[0] == b'\'' {
        let end = contraction_end(b, 0)?;
        if end > 0 {
            return Some(end);
        }
    }
    // The optional lead of a word: what is not a letter, a digit or a
    // line break. Without it a word cannot start there.
    let lead = usize::from(first & (OTHER | SPACE) != 0 && first & LINE_BREAK == 0);
    if o200k {
        let upper_end = run_end(b, lead, UPPER)?;
        let lower_end = run_end(b, upper_end, LOWER)?;
        if lower_end > upper_end || upper_end > lead {
            return contraction_end(b, lower_end);
        }
    } else {
        let letters_end = run_end(b, lead, UPPER | LOWER)?;
        if letters_end > lead {
            return Some(letters_end);
        }
    }
    if first == DIGIT {
        let mut end = 1;
        while end < 3 && b.get(end).is_some_and(u8::is_ascii_digit) {
            end += 1;
        }
        if end < 3 && b.get(end).is_some_and(|&c| c >= 0x80) {
            return None;
        }
        return Some(end);
    }
    let space = usize::from(b[0] == b' ');
    let other_end = run_end(b, space, OTHER)?;
    if other_end > space {
        let mut end = other_end;
        while let Some(&c) = b.get(end) {
            match c {
                b'\r' | b'\n' => end += 1,
                b'/' if o200k => end += 1,
                _ => break,
            }
        }
        return Some(end);
    }
    // Whitespace from here on.
    let space_end = run_end(b, 0, SPACE)?;
    if let Some(k) = b[..space_end]
        .iter()
        .rposition(|&c| matches!(c, b'\r' | b'\n'))
    {
        return Some(k + 1);
    }
    if space_end == b.len() || space_end == 1 {
        return Some(space_end);
    }
    Some(space_end - 1)
}

impl BpeCounter {
    /// `text`'s count: the sum of its pre-tokenizer pieces' counts, as
    /// `bpe_openai::Tokenizer::count` sums them (the encodings counted here
    /// do not normalize), each short piece's count remembered. Most of a
    /// fleet's pieces are words seen before, and encoding one costs a
    /// search of the vocabulary and two buffers.
    fn count_pieces(&self, text: &str) -> u64 {
        let bpe = &self.bpe.bpe;
        let table = match self.encoding {
            Encoding::O200kBase => 0,
            Encoding::Cl100kBase => 1,
        };
        let pre = Pretokenizer::of(self.encoding);
        COUNTING.with(|cell| {
            let counting = &mut *cell.borrow_mut();
            let known = &mut counting.pieces[table];
            let cache = counting.dfa_caches[table].get_or_insert_with(|| pre.dfa.create_cache());
            let mut total = 0u64;
            // Inlined: it runs once per piece, tens of millions of times
            // in a fleet.
            pre.split(
                cache,
                text,
                #[inline(always)]
                |piece| {
                    let bytes = piece.as_bytes();
                    // A single byte is always one token.
                    if bytes.len() <= 1 {
                        total += bytes.len() as u64;
                        return;
                    }
                    if bytes.len() > PIECE_BYTES_MAX {
                        total += encode_count(bpe, bytes);
                        return;
                    }
                    let key = piece_key(bytes);
                    let slot = &mut known.0[PieceCounts::slot(key)];
                    if slot.0 != key {
                        *slot = (key, encode_count(bpe, bytes) as u32);
                    }
                    total += u64::from(slot.1);
                },
            );
            total
        })
    }
}

/// A piece's count by the BPE itself: out of line, so that the lookup of
/// remembered pieces (nearly every piece) stays small enough to be inlined
/// into the pre-tokenizer's loop.
#[cold]
#[inline(never)]
fn encode_count(bpe: &bpe_openai::byte_pair_encoding::BytePairEncoding, bytes: &[u8]) -> u64 {
    bpe.count(bytes) as u64
}

impl Tokenizer for BpeCounter {
    fn count(&self, text: &str) -> u64 {
        self.count_pieces(text)
    }

    fn name(&self) -> String {
        self.encoding.as_str().to_string()
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
    crate::engine::handle::one_line(spec, 200)
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
/// and costs a measurable share of a sweep: the multiply-rotate word hash
/// of rustc's FxHasher. Deterministic; never used for anything written out
/// or for cache identity (that is [`ContentHash`]).
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl FastHasher {
    const K: u64 = 0xf135_7aea_2e62_a9c5;

    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(Self::K);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_u128(&mut self, i: u128) {
        self.add(i as u64);
        self.add((i >> 64) as u64);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
}

/// Builds [`FastHasher`]s.
pub type FastBuild = BuildHasherDefault<FastHasher>;

/// What a [`TokenMemo`] holds: each text's count, in the table itself
/// rather than in an allocation of its own per text (a fleet's report
/// memoizes tens of thousands of texts at a time, and one small allocation
/// each, made among a trace's large ones and kept after them, held pages
/// of the heap that would otherwise be given back); and the texts a thread
/// is counting, which the others wait for.
#[derive(Default)]
struct Slots {
    counted: HashMap<ContentHash, u64, PrehashedBuild>,
    counting: HashMap<ContentHash, (), PrehashedBuild>,
}

/// Distinct texts a memo remembers before it starts afresh: 57,344, what
/// a table of 65,536 buckets holds before it doubles (7/8 of them), about
/// 4 MB with the counts. A fleet's texts are mostly its own sessions', met
/// by every config of one trace and then never again, so a memo that kept
/// them all would grow with the fleet; what it must hold is the texts of
/// the traces replayed side by side (a generated trace has about 45, so
/// this is more than a thousand traces' worth). Starting afresh only
/// recounts the texts of the traces being replayed and the few shared
/// across sessions (system prompts, tools); counts never change. At four
/// times this (about 20 MB) the memo was what still grew between a
/// 3,000-session and a 30,000-session report.
const MEMO_MAX: usize = (1 << 16) / 8 * 7;

/// Memoized token counts, keyed by [`ContentHash`]: each distinct text is
/// handed to the tokenizer once while the memo holds it (share one memo
/// per process).
///
/// Thread-safe; concurrent requests for the same unseen text wait for one
/// count instead of counting twice.
pub struct TokenMemo {
    tokenizer: Arc<dyn Tokenizer>,
    slots: Mutex<Slots>,
    /// Signalled when a text claimed is counted, or let go.
    counted: Condvar,
    invocations: AtomicU64,
}

impl fmt::Debug for TokenMemo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenMemo")
            .field("tokenizer", &self.tokenizer.name())
            .field("distinct", &self.len())
            .field("invocations", &self.invocations())
            .finish()
    }
}

/// A text a thread claimed in a memo ([`Slots::counting`]): counted, its
/// count goes in; dropped uncounted (the tokenizer panicked), its claim is
/// let go, so that the threads waiting for it count it themselves.
struct Claim<'m> {
    memo: &'m TokenMemo,
    hash: ContentHash,
    done: bool,
}

impl Claim<'_> {
    /// Counts `text` and puts its count in the memo.
    fn count(mut self, text: &str) -> u64 {
        let n = self.memo.invoke(text);
        let mut slots = self.memo.lock();
        slots.counting.remove(&self.hash);
        // A memo full of texts starts afresh.
        if slots.counted.len() >= MEMO_MAX {
            slots.counted.clear();
        }
        slots.counted.insert(self.hash, n);
        drop(slots);
        self.done = true;
        self.memo.counted.notify_all();
        n
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.memo.lock().counting.remove(&self.hash);
            self.memo.counted.notify_all();
        }
    }
}

impl TokenMemo {
    /// An empty memo over `tokenizer`.
    pub fn new(tokenizer: Arc<dyn Tokenizer>) -> Self {
        Self {
            tokenizer,
            slots: Mutex::new(Slots::default()),
            counted: Condvar::new(),
            invocations: AtomicU64::new(0),
        }
    }

    /// The tokenizer's spec name.
    pub fn tokenizer_name(&self) -> String {
        self.tokenizer.name()
    }

    /// The underlying tokenizer.
    pub fn tokenizer(&self) -> &Arc<dyn Tokenizer> {
        &self.tokenizer
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        // A poisoned lock only means another thread panicked while holding
        // it; the maps themselves are always consistent.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Claims `hash` (in neither of `slots`) for the caller to count.
    fn claim<'m>(&'m self, slots: &mut Slots, hash: ContentHash) -> Claim<'m> {
        slots.counting.insert(hash, ());
        Claim {
            memo: self,
            hash,
            done: false,
        }
    }

    fn invoke(&self, text: &str) -> u64 {
        self.invocations.fetch_add(1, Ordering::Relaxed);
        self.tokenizer.count(text)
    }

    /// Tokens in `text`, counted at most once per distinct text.
    pub fn count(&self, text: &str) -> u64 {
        self.count_hashed(ContentHash::of(text.as_bytes()), text)
    }

    /// Like [`TokenMemo::count`] for a caller that already has the text's
    /// [`ContentHash`] (it must be `ContentHash::of(text.as_bytes())`).
    pub fn count_hashed(&self, hash: ContentHash, text: &str) -> u64 {
        let mut slots = self.lock();
        loop {
            if let Some(n) = slots.counted.get(&hash) {
                return *n;
            }
            if !slots.counting.contains_key(&hash) {
                break;
            }
            slots = self.counted.wait(slots).unwrap_or_else(|e| e.into_inner());
        }
        let claim = self.claim(&mut slots, hash);
        drop(slots);
        claim.count(text)
    }

    /// The memoized count for `hash`, if that text was counted.
    pub fn get(&self, hash: &ContentHash) -> Option<u64> {
        self.lock().counted.get(hash).copied()
    }

    /// Counts every text, in input order. Distinct texts not seen before
    /// are counted in parallel (rayon), each once.
    pub fn count_all(&self, texts: &[&str]) -> Vec<u64> {
        let hashes: Vec<ContentHash> = texts
            .par_iter()
            .map(|t| ContentHash::of(t.as_bytes()))
            .collect();
        // A text is claimed by the task that counts it, as it starts
        // counting: a claim never waits for a task not yet run, which a
        // thread waiting for it could be the one to run.
        hashes
            .par_iter()
            .zip(texts)
            .map(|(h, t)| self.count_hashed(*h, t))
            .collect()
    }

    /// How many times the tokenizer itself was called (one per distinct
    /// text counted through this memo).
    pub fn invocations(&self) -> u64 {
        self.invocations.load(Ordering::Relaxed)
    }

    /// Number of distinct texts memoized (at most a bound: a memo full of
    /// texts starts afresh).
    pub fn len(&self) -> usize {
        self.lock().counted.len()
    }

    /// Whether nothing was memoized yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The fit of estimated token growth against recorded growth.
///
/// `factor` maps estimates onto the provider's counts
/// (`recorded ≈ factor × estimated`); `relative_error` is the root mean
/// square of the per-pair relative error `(factor·e − r) / r` after the fit;
/// `n` is the number of pairs used. With `n == 0` nothing was fitted:
/// `factor` is 1 and `relative_error` 0.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Calibration {
    /// Multiply estimated tokens by this to approximate recorded tokens.
    pub factor: f64,
    /// RMS relative error of the fitted estimate over the pairs used.
    pub relative_error: f64,
    /// Pairs used in the fit.
    pub n: usize,
}

impl Default for Calibration {
    fn default() -> Self {
        Self {
            factor: 1.0,
            relative_error: 0.0,
            n: 0,
        }
    }
}

impl Calibration {
    /// `tokens × factor`, rounded to the nearest integer.
    pub fn apply(&self, tokens: u64) -> u64 {
        (tokens as f64 * self.factor).round().max(0.0) as u64
    }
}

/// Fits `recorded ≈ factor × estimated` by least squares through the origin
/// over `(estimated_growth, recorded_growth)` pairs, e.g. the growth of the
/// prompt between consecutive calls as this crate estimates it and as the
/// provider recorded it.
///
/// Pairs where either side is zero or negative (compaction, a cleared
/// context, a missing record) carry no information about the ratio and are
/// skipped.
pub fn calibrate(pairs: &[(i64, i64)]) -> Calibration {
    let used: Vec<(f64, f64)> = pairs
        .iter()
        .filter(|(e, r)| *e > 0 && *r > 0)
        .map(|&(e, r)| (e as f64, r as f64))
        .collect();
    if used.is_empty() {
        return Calibration::default();
    }
    let sxy: f64 = used.iter().map(|(e, r)| e * r).sum();
    let sxx: f64 = used.iter().map(|(e, _)| e * e).sum();
    let factor = sxy / sxx;
    let mse: f64 = used
        .iter()
        .map(|(e, r)| {
            let rel = (factor * e - r) / r;
            rel * rel
        })
        .sum::<f64>()
        / used.len() as f64;
    Calibration {
        factor,
        relative_error: mse.sqrt(),
        n: used.len(),
    }
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

    #[test]
    fn memo_counts_each_distinct_text_once() {
        let memo = TokenMemo::new(Arc::new(CharsPerToken(1.0)));
        assert_eq!(memo.count("abc"), 3);
        assert_eq!(memo.count("abc"), 3);
        assert_eq!(memo.invocations(), 1);
        let texts = ["abc", "de", "de", "fghi", "abc", "de"];
        assert_eq!(memo.count_all(&texts), vec![3, 2, 2, 4, 3, 2]);
        assert_eq!(memo.invocations(), 3);
        assert_eq!(memo.len(), 3);
        assert_eq!(memo.count_all(&texts), vec![3, 2, 2, 4, 3, 2]);
        assert_eq!(memo.invocations(), 3);
        assert_eq!(memo.get(&ContentHash::of(b"de")), Some(2));
        assert_eq!(memo.get(&ContentHash::of(b"zz")), None);
    }

    #[test]
    fn a_memo_past_its_bound_starts_afresh_and_still_counts_right() {
        let memo = TokenMemo::new(Arc::new(CharsPerToken(1.0)));
        let texts: Vec<String> = (0..MEMO_MAX + 10).map(|i| format!("t{i}")).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let want: Vec<u64> = refs.iter().map(|t| t.len() as u64).collect();
        assert_eq!(memo.count_all(&refs), want);
        assert!(memo.len() <= MEMO_MAX, "{}", memo.len());
        // One at a time too, the first texts again (forgotten): recounted.
        let before = memo.invocations();
        for t in &refs[..20] {
            assert_eq!(memo.count(t), t.len() as u64);
        }
        assert!(memo.len() <= MEMO_MAX);
        assert_eq!(memo.invocations(), before + 20);
    }

    /// Counts a text's bytes, but panics the first time it meets "boom",
    /// and holds "slow" until the gate opens.
    #[derive(Default)]
    struct Flaky {
        boomed: std::sync::atomic::AtomicBool,
        gate: Mutex<bool>,
        opened: Condvar,
    }

    impl Tokenizer for Flaky {
        fn count(&self, text: &str) -> u64 {
            if text == "boom" && !self.boomed.swap(true, Ordering::SeqCst) {
                panic!("the tokenizer failed");
            }
            if text == "slow" {
                let mut open = self.gate.lock().unwrap();
                while !*open {
                    open = self.opened.wait(open).unwrap();
                }
            }
            text.len() as u64
        }
        fn name(&self) -> String {
            "flaky".into()
        }
    }

    #[test]
    fn a_text_whose_count_failed_is_counted_again_not_waited_for() {
        let memo = TokenMemo::new(Arc::new(Flaky::default()));
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| memo.count("boom")));
        assert!(failed.is_err());
        assert_eq!(memo.get(&ContentHash::of(b"boom")), None);
        assert_eq!(memo.count("boom"), 4);
        assert_eq!(memo.invocations(), 2);
    }

    #[test]
    fn a_thread_asking_for_a_text_being_counted_waits_for_that_count() {
        let flaky = Arc::new(Flaky::default());
        let memo = TokenMemo::new(flaky.clone());
        std::thread::scope(|s| {
            // The first thread counts "slow" and is held in the tokenizer;
            // the second asks for it meanwhile.
            let first = s.spawn(|| memo.count("slow"));
            while !memo.lock().counting.contains_key(&ContentHash::of(b"slow")) {
                std::thread::yield_now();
            }
            let second = s.spawn(|| memo.count_all(&["slow", "quick"]));
            std::thread::sleep(std::time::Duration::from_millis(50));
            *flaky.gate.lock().unwrap() = true;
            flaky.opened.notify_all();
            assert_eq!(first.join().unwrap(), 4);
            assert_eq!(second.join().unwrap(), vec![4, 5]);
        });
        // "slow" once, "quick" once: the second thread waited.
        assert_eq!(memo.invocations(), 2);
    }

    #[test]
    fn memo_is_shared_across_threads() {
        let memo = Arc::new(TokenMemo::new(Arc::new(CharsPerToken(2.0))));
        let texts: Vec<String> = (0..200).map(|i| "x".repeat(i % 50)).collect();
        std::thread::scope(|s| {
            for _ in 0..4 {
                let memo = &memo;
                let texts = &texts;
                s.spawn(move || {
                    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                    memo.count_all(&refs);
                });
            }
        });
        assert_eq!(memo.invocations(), 50);
    }

    #[test]
    fn calibration_fits_synthetic_ratio() {
        let pairs: Vec<(i64, i64)> = (1..=50).map(|i| (i * 100, i * 120)).collect();
        let c = calibrate(&pairs);
        assert_eq!(c.n, 50);
        assert!((c.factor - 1.2).abs() < 1e-12);
        assert!(c.relative_error < 1e-12);
        assert_eq!(c.apply(1000), 1200);
    }

    #[test]
    fn calibration_skips_zero_and_negative_pairs() {
        let pairs = [
            (100, 110),
            (200, 220),
            (0, 50),
            (50, 0),
            (-300, 10),
            (100, -5),
        ];
        let c = calibrate(&pairs);
        assert_eq!(c.n, 2);
        assert!((c.factor - 1.1).abs() < 1e-12);
        assert_eq!(calibrate(&[]), Calibration::default());
        assert_eq!(calibrate(&[(0, 0)]).n, 0);
    }

    #[test]
    fn calibration_reports_noise() {
        // Alternating +10% / -10% around a 1.5 ratio.
        let pairs: Vec<(i64, i64)> = (0..100)
            .map(|i| {
                let r = if i % 2 == 0 { 1650 } else { 1350 };
                (1000, r)
            })
            .collect();
        let c = calibrate(&pairs);
        assert!((c.factor - 1.5).abs() < 1e-9);
        assert!(c.relative_error > 0.09 && c.relative_error < 0.12, "{c:?}");
    }

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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        /// Remembering pieces' counts never changes a count: a text counted
        /// cold, counted again (its pieces now known) and counted after
        /// other texts gives bpe-openai's own count, which is tiktoken's.
        #[test]
        fn remembered_piece_counts_are_the_tokenizers(
            texts in proptest::collection::vec(
                proptest::collection::vec(proptest::sample::select(vec![
                    'a', 'b', 'Z', 'é', '東', '7', '0', '\'', '"', '.', '{', '}', ':', ' ', ' ',
                    '\n', '\t',
                ]), 0..120),
                1..6,
            ),
        ) {
            use proptest::prelude::*;
            let texts: Vec<String> = texts.into_iter().map(|c| c.into_iter().collect()).collect();
            for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let counter = BpeCounter::new(enc);
                let tiktoken = TiktokenCounter::new(enc);
                for _ in 0..2 {
                    for t in &texts {
                        let expected = counter.bpe.count(t.as_str()) as u64;
                        prop_assert_eq!(counter.count(t), expected, "{:?} {:?}", enc, t);
                        prop_assert_eq!(tiktoken.count(t), expected, "{:?} {:?}", enc, t);
                    }
                }
            }
        }
    }

    /// Our pre-tokenizer's pieces of `text`, with a fresh DFA cache.
    fn our_pieces(enc: Encoding, text: &str) -> Vec<&str> {
        let pre = Pretokenizer::of(enc);
        let mut cache = pre.dfa.create_cache();
        let mut pieces = Vec::new();
        pre.split(&mut cache, text, |p| pieces.push(p));
        pieces
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// Our pre-tokenizer cuts every text where bpe-openai's does, on
        /// texts heavy in whitespace of every kind (the look-ahead
        /// emulation), letters of every case class, marks, numbers of other
        /// scripts, contractions and any char at all.
        #[test]
        fn our_pieces_are_bpe_openais(
            chars in proptest::collection::vec(proptest::prop_oneof![
                3 => proptest::sample::select(vec![
                    ' ', ' ', ' ', '\n', '\n', '\r', '\t', '\u{b}', '\u{c}', '\u{85}', '\u{a0}',
                    '\u{1680}', '\u{2003}', '\u{2028}', '\u{2029}', '\u{3000}', 'a', 'Z', 's',
                    'T', 'D', 'é', 'ß', 'ǅ', 'ʰ', '東', 'ー', '\u{301}', '\u{93f}', 'ſ', 'K',
                    '7', '0', '٣', '½', 'Ⅷ', '\'', '’', '_', '"', '.', ',', '{', ':', '/', '-',
                    '!', '|', '😀', '\u{200d}', '\u{feff}', '\0',
                ]),
                2 => proptest::char::range('\0', '\x7f'),
                1 => proptest::prelude::any::<char>(),
            ], 0..120),
        ) {
            let text: String = chars.into_iter().collect();
            for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let theirs: Vec<&str> = BpeCounter::new(enc).bpe.split(&text).collect();
                proptest::prop_assert_eq!(our_pieces(enc, &text), theirs, "{:?} {:?}", enc, text);
            }
        }
    }

    #[test]
    fn our_pieces_on_whitespace_runs() {
        // The look-ahead: a run of spaces before a word leaves its last
        // space to the word, a run at the end stays whole, a run before a
        // line break goes with the break.
        for text in [
            "a   b",
            "a   ",
            "a  \n\n b",
            " \t\u{3000}x",
            "x\r\n  \r\n",
            "\u{a0}\u{a0}é",
        ] {
            for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
                let theirs: Vec<&str> = BpeCounter::new(enc).bpe.split(text).collect();
                assert_eq!(our_pieces(enc, text), theirs, "{enc:?} {text:?}");
            }
        }
        assert_eq!(our_pieces(Encoding::O200kBase, "a   b"), ["a", "  ", " b"]);
    }

    #[test]
    fn piece_keys_are_the_bytes_then_the_length() {
        let text: Vec<u8> = (1..=40u8).map(|b| b.wrapping_mul(97)).collect();
        for len in 2..=PIECE_BYTES_MAX {
            for start in 0..text.len() - len {
                let bytes = &text[start..start + len];
                let mut k = [0u8; 16];
                k[..len].copy_from_slice(bytes);
                k[15] = len as u8;
                assert_eq!(piece_key(bytes), u128::from_le_bytes(k), "{bytes:?}");
            }
        }
    }

    #[test]
    fn pieces_that_push_others_out_of_the_table_still_count_right() {
        // Three times as many distinct words as the table has slots, counted
        // twice: every slot is taken and replaced, and each count is still
        // bpe-openai's.
        // Lower-case letters only, so that each word is one piece.
        let word = |mut i: usize| {
            let mut w = String::from(" ");
            loop {
                w.push(char::from(b'a' + (i % 26) as u8));
                i /= 26;
                if i == 0 {
                    break w;
                }
            }
        };
        let words: Vec<String> = (0..3 * PIECE_SLOTS).map(word).collect();
        assert_eq!(
            BpeCounter::new(Encoding::O200kBase)
                .bpe
                .split(&words[5000])
                .count(),
            1
        );
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let counter = BpeCounter::new(enc);
            for _ in 0..2 {
                for chunk in words.chunks(500) {
                    let text = chunk.concat();
                    assert_eq!(
                        counter.count(&text),
                        counter.bpe.count(text.as_str()) as u64
                    );
                }
            }
        }
    }

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

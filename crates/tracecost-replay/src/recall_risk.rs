//! Recall risk: how often would the model have needed `recall_tool_result`?
//!
//! A later assistant turn that quotes text — an identifier, a number, a
//! phrase — which at that point existed only inside compacted tool results
//! could only have been written after a recall (or would have been lost).
//! For each turn we collect its quotable tokens: words with a digit of 4+
//! characters (ids, prices, ASINs), words of 12+ characters, and two-word
//! phrases of 12+ characters. A quote is *hidden* when it appears in no
//! plain text the model saw (user and assistant text, tool inputs, system
//! prompt) and every tool result containing it was compacted at that call.
//! Stub previews are not searched, so the count errs on the cautious side.
//!
//! Each risky turn is priced as one extra round trip plus the recalled
//! results' tokens as uncached input (a full recall; a query or slice would
//! bring back less).
//!
//! The index is built once per trace (an inverted index of payload tokens)
//! and each config is then scored with set lookups only.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use super::CallResult;
use crate::cost::tokens::FastBuild;
use crate::engine::message::{BlockKind, Content, Message, Role};
use crate::trace::Trace;

/// The recall risk of one config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
pub struct RecallRisk {
    /// Assistant turns quoting at least one hidden token.
    pub turns: usize,
    /// Hidden quotes over all turns.
    pub quotes: usize,
    /// Tokens the recalls would bring back: for each risky turn, the
    /// distinct results holding its hidden quotes (the smallest holder of
    /// each quote), counted once per turn.
    pub recall_tokens: u64,
}

struct Turn {
    call: usize,
    results_before: usize,
    /// For each quote not visible in plain text: the results containing it.
    quotes: Vec<Vec<u32>>,
}

/// Per-trace index for scoring recall risk.
pub struct RiskIndex {
    result_ids: Vec<String>,
    /// Result indices by tool_use id (an id the history repeats names
    /// every result that carries it).
    results_by_id: HashMap<String, Vec<u32>, FastBuild>,
    result_tokens: Vec<u64>,
    turns: Vec<Turn>,
}

/// A quotable token of a text: a word, or two words that follow each
/// other, each with its [`word_hash`].
#[derive(Clone, Copy)]
enum Quotable<'a> {
    Word(&'a str, u64),
    Phrase(&'a str, u64, &'a str, u64),
}

/// One step of [`word_hash`]: for a fixed state a bijection of the word,
/// for a fixed word a bijection of the state, so that two texts of one
/// length that differ in a single 8-byte word never share a hash.
#[inline]
fn hash_step(h: u64, word: u64) -> u64 {
    let h = (h ^ word).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 31)
}

/// The final mix of [`word_hash`] (MurmurHash3's `fmix64`).
#[inline]
fn hash_finish(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A 64-bit hash of a word's bytes, its length included: 8 bytes at a
/// time, the last 8 (overlapping the word before) for the rest; a word
/// shorter than 8 read in two overlapping halves (or its first, middle and
/// last byte), so that no copy is made. For one length, every byte is in
/// some word hashed.
fn word_hash(w: &str) -> u64 {
    let b = w.as_bytes();
    let len = b.len();
    let le64 = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
    let le32 = |i: usize| {
        u64::from(u32::from_le_bytes(
            b[i..i + 4].try_into().unwrap_or_default(),
        ))
    };
    let mut h = (len as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    if len >= 8 {
        let mut i = 0;
        while i + 8 <= len {
            h = hash_step(h, le64(i));
            i += 8;
        }
        if i < len {
            h = hash_step(h, le64(len - 8));
        }
    } else if len >= 4 {
        h = hash_step(h, le32(0) | (le32(len - 4) << 32));
    } else if len > 0 {
        let word = u64::from(b[0]) | (u64::from(b[len / 2]) << 8) | (u64::from(b[len - 1]) << 16);
        h = hash_step(h, word);
    }
    hash_finish(h)
}

impl Quotable<'_> {
    /// The token's key, the same whichever text it was found in: a word's
    /// [`word_hash`], a phrase's a mix of its two words' (words have no
    /// space, so a phrase's text names its two words). A tool result's
    /// tokens are only ever looked up by key, so no string is made for
    /// them; with 64-bit keys two different tokens sharing one (and a
    /// quote taken for one it is not) is vanishingly rare. The keys are
    /// only compared within the index, never written out. (A SipHash of
    /// the token's text before: 8% of a fleet's report, with the words'
    /// splitting.)
    fn key(self) -> u64 {
        match self {
            Quotable::Word(_, h) => h,
            Quotable::Phrase(_, a, _, b) => {
                hash_finish(hash_step(hash_step(a, 0x7068_7261_7365), b))
            }
        }
    }

    /// Its text.
    fn text(self) -> String {
        match self {
            Quotable::Word(w, _) => w.to_owned(),
            Quotable::Phrase(a, _, b, _) => format!("{a} {b}"),
        }
    }
}

/// Whether each ASCII byte belongs in a word: a letter, a digit, or one of
/// `_-./$%`.
static WORD_BYTE: [bool; 128] = {
    let mut t = [false; 128];
    let mut b = 0;
    while b < 128 {
        t[b] = (b as u8).is_ascii_alphanumeric()
            || matches!(b as u8, b'_' | b'-' | b'.' | b'/' | b'$' | b'%');
        b += 1;
    }
    t
};

/// Calls `f` with each quotable token of `text`: words with a digit of
/// 4+ characters, words of 12+ characters, and two-word phrases of 12+
/// characters whose words have 3+ each (duplicates included). A word is a
/// run of alphanumeric chars and `_-./$%`, without its leading and
/// trailing `.-/`; the scan goes byte by byte over ASCII and decodes only
/// the other chars.
fn each_quotable<'a>(text: &'a str, mut f: impl FnMut(Quotable<'a>)) {
    let bytes = text.as_bytes();
    let mut prev: Option<(&str, usize, u64)> = None;
    let mut i = 0;
    while i < bytes.len() {
        // The next word: [start, end), whether all ASCII, whether a digit.
        let start = i;
        let mut ascii = true;
        let mut digit = false;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x80 {
                if !WORD_BYTE[b as usize] {
                    break;
                }
                digit |= b.is_ascii_digit();
                i += 1;
            } else {
                let c = text[i..].chars().next().unwrap_or_default();
                if !c.is_alphanumeric() {
                    break;
                }
                ascii = false;
                i += c.len_utf8();
            }
        }
        let end = i;
        // Past the separator that ended it (one char).
        if i < bytes.len() {
            i += if bytes[i] < 0x80 {
                1
            } else {
                text[i..].chars().next().map_or(1, char::len_utf8)
            };
        }
        let w = text[start..end].trim_matches(|c: char| matches!(c, '.' | '-' | '/'));
        if w.is_empty() {
            continue;
        }
        let n = if ascii { w.len() } else { w.chars().count() };
        let word = (n >= 4 && digit) || n >= 12;
        let phrase = prev.is_some_and(|(_, pn, _)| pn + 1 + n >= 12 && pn >= 3 && n >= 3);
        // A word of fewer than 3 chars is in no phrase: no hash needed.
        let h = if n >= 3 { word_hash(w) } else { 0 };
        if word {
            f(Quotable::Word(w, h));
        }
        if phrase && let Some((p, _, ph)) = prev {
            f(Quotable::Phrase(p, ph, w, h));
        }
        prev = Some((w, n, h));
    }
}

fn block_texts(m: &Message, include_results: bool, out: &mut String) {
    match m.content() {
        Content::Text(t) => {
            out.push_str(t);
            out.push('\n');
        }
        Content::Blocks(bs) => {
            for b in bs {
                match b.kind() {
                    BlockKind::Text { text } => out.push_str(text),
                    BlockKind::ToolUse { .. } => {
                        out.push_str(b.tool_input().map_or("", |r| r.get()))
                    }
                    BlockKind::ToolResult { .. } if include_results => {
                        out.push_str(b.tool_result_payload().unwrap_or(""))
                    }
                    _ => {}
                }
                out.push('\n');
            }
        }
    }
}

impl RiskIndex {
    /// Builds the index for `trace`; `tokens(message, block)` gives the
    /// token count of a history block (to price recalls).
    pub fn new(trace: &Trace, tokens: &dyn Fn(usize, usize) -> u64) -> Self {
        // The assistant turns' texts, each with its call, and the keys
        // they quote: only those are looked up in the index, so the index
        // keeps no other (most of a tool result's tokens are never quoted,
        // and keeping them all cost an entry and a list each).
        let mut turn_texts: Vec<(usize, String)> = Vec::new();
        let mut quoted: HashSet<u64, FastBuild> = HashSet::default();
        for (ci, call) in trace.calls.iter().enumerate() {
            let Some(response) = trace.messages.get(call.messages) else {
                continue;
            };
            if response.role() != Role::Assistant {
                continue;
            }
            let mut text = String::new();
            block_texts(response, false, &mut text);
            each_quotable(&text, |q| {
                quoted.insert(q.key());
            });
            turn_texts.push((ci, text));
        }
        // Inverted index of quoted tokens → results containing them.
        let mut result_ids = Vec::new();
        let mut result_tokens = Vec::new();
        let mut index: HashMap<u64, Vec<u32>, FastBuild> = HashMap::default();
        let mut results_before_message = Vec::with_capacity(trace.messages.len() + 1);
        for (mi, m) in trace.messages.iter().enumerate() {
            results_before_message.push(result_ids.len());
            for (bi, b) in m.blocks().iter().enumerate() {
                if let BlockKind::ToolResult { tool_use_id, .. } = b.kind() {
                    let r = result_ids.len() as u32;
                    result_ids.push(tool_use_id.to_string());
                    result_tokens.push(tokens(mi, bi));
                    if quoted.is_empty() {
                        continue;
                    }
                    each_quotable(b.tool_result_payload().unwrap_or(""), |q| {
                        let key = q.key();
                        if !quoted.contains(&key) {
                            return;
                        }
                        let list = index.entry(key).or_default();
                        if list.last() != Some(&r) {
                            list.push(r);
                        }
                    });
                }
            }
        }
        results_before_message.push(result_ids.len());
        // The plain text the model saw before each call is a prefix of the
        // whole plain text (system prompts, then each message's in order)
        // that only grows from call to call. A quote found in one prefix is
        // in every later one; one not found is searched again only in the
        // text added since (and the quote's length before it).
        let mut plain = String::new();
        for p in &trace.prompts {
            for b in &p.system {
                if let BlockKind::Text { text } = b.kind() {
                    plain.push_str(text);
                }
            }
        }
        let mut plain_before_message = Vec::with_capacity(trace.messages.len() + 1);
        for m in &trace.messages {
            plain_before_message.push(plain.len());
            block_texts(m, false, &mut plain);
        }
        plain_before_message.push(plain.len());
        // Per quote: `None` once found, else the prefix it was not found in.
        let mut searched: HashMap<u64, Option<usize>, FastBuild> = HashMap::default();
        // The messages the plain text covers: the most any call so far sent.
        let mut plain_upto = 0;
        let mut turns = Vec::new();
        for (ci, text) in &turn_texts {
            let (ci, call) = (*ci, &trace.calls[*ci]);
            plain_upto = plain_upto.max(call.messages);
            let plain_len = plain_before_message
                .get(plain_upto)
                .copied()
                .unwrap_or(plain.len());
            let mut qs = Vec::new();
            each_quotable(text, |q| qs.push(q));
            let mut seen: HashSet<u64, FastBuild> = HashSet::default();
            let results_before = results_before_message
                .get(call.messages)
                .copied()
                .unwrap_or(result_ids.len());
            let quotes: Vec<Vec<u32>> = qs
                .into_iter()
                .map(|q| (q.key(), q))
                .filter(|(key, _)| seen.insert(*key))
                .filter_map(|(key, q)| {
                    let holders: Vec<u32> = index
                        .get(&key)?
                        .iter()
                        .copied()
                        .filter(|&r| (r as usize) < results_before)
                        .collect();
                    if holders.is_empty() {
                        return None;
                    }
                    let hidden = match searched.get(&key).copied() {
                        Some(None) => false,
                        Some(Some(upto)) if upto >= plain_len => true,
                        prior => {
                            let q = q.text();
                            let upto = prior.flatten().unwrap_or(0);
                            let mut from = upto.saturating_sub(q.len().saturating_sub(1));
                            while !plain.is_char_boundary(from) {
                                from -= 1;
                            }
                            // memchr's search picks the quote's rarest
                            // bytes to look for, where `str::contains`
                            // looks for its first and last and, in prose,
                            // stops at most words (5% of a fleet's report).
                            let found = plain.get(from..plain_len).is_some_and(|added| {
                                memchr::memmem::find(added.as_bytes(), q.as_bytes()).is_some()
                            });
                            searched.insert(key, (!found).then_some(plain_len));
                            !found
                        }
                    };
                    hidden.then_some(holders)
                })
                .collect();
            if !quotes.is_empty() {
                turns.push(Turn {
                    call: ci,
                    results_before,
                    quotes,
                });
            }
        }
        let mut results_by_id: HashMap<String, Vec<u32>, FastBuild> = HashMap::default();
        for (r, id) in result_ids.iter().enumerate() {
            results_by_id.entry(id.clone()).or_default().push(r as u32);
        }
        RiskIndex {
            result_ids,
            results_by_id,
            result_tokens,
            turns,
        }
    }

    /// The assistant turns that quote a tool result's words.
    pub fn turn_count(&self) -> usize {
        self.turns.len()
    }

    /// What [`Self::score`] reads of `calls`: the ids compacted at each
    /// call that quotes a result, by address. Replays whose compacted
    /// lists are the same shared lists (the configs of one compaction
    /// policy) have the same identity and the same score.
    pub fn identity(&self, calls: &[CallResult]) -> Vec<(usize, usize)> {
        self.turns
            .iter()
            .map(|t| {
                calls.get(t.call).map_or((0, 0), |c| {
                    (c.compacted.as_ptr() as usize, c.compacted.len())
                })
            })
            .collect()
    }

    /// Scores one config's replay.
    pub fn score(&self, calls: &[CallResult]) -> RecallRisk {
        let mut risk = RecallRisk::default();
        // Which results the latest call scored had compacted: calls' lists
        // mostly extend one another, so each is marked from the one before.
        let mut marked = vec![false; self.result_ids.len()];
        let mut marked_ids: &[std::sync::Arc<str>] = &[];
        for t in &self.turns {
            let Some(call) = calls.get(t.call) else {
                continue;
            };
            if call.compacted.is_empty() {
                continue;
            }
            let ids: &[std::sync::Arc<str>] = &call.compacted;
            let new = match super::extension(ids, marked_ids) {
                Some(new) => new,
                None => {
                    marked.iter_mut().for_each(|m| *m = false);
                    ids
                }
            };
            for id in new {
                for &r in self.results_by_id.get(&**id).map_or(&[][..], Vec::as_slice) {
                    marked[r as usize] = true;
                }
            }
            marked_ids = ids;
            let is_compacted =
                |r: u32| (r as usize) < t.results_before && marked.get(r as usize) == Some(&true);
            let mut needed: Vec<u32> = Vec::new();
            for holders in t
                .quotes
                .iter()
                .filter(|holders| holders.iter().all(|&r| is_compacted(r)))
            {
                risk.quotes += 1;
                let smallest = holders
                    .iter()
                    .copied()
                    .min_by_key(|&r| self.result_tokens.get(r as usize).copied().unwrap_or(0));
                if let Some(r) = smallest
                    && !needed.contains(&r)
                {
                    needed.push(r);
                }
            }
            if !needed.is_empty() {
                risk.turns += 1;
                risk.recall_tokens += needed
                    .iter()
                    .map(|&r| self.result_tokens.get(r as usize).copied().unwrap_or(0))
                    .sum::<u64>();
            }
        }
        risk
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::pricing::Usage;
    use crate::trace::load_str;

    fn call(index: usize, compacted: &[&str]) -> CallResult {
        CallResult {
            index,
            messages: 0,
            chars: 0,
            usage: Usage::default(),
            cost_usd: 0.0,
            compacted: compacted.iter().map(|s| std::sync::Arc::from(*s)).collect(),
            recorded: None,
            recorded_cost_usd: None,
            model: "".into(),
            stable_prefix_tokens: 0,
            over_window: false,
            cache_cause: None,
        }
    }

    /// The quotable tokens of `text` as the first version of the index
    /// found them (`str::split` on every char outside words, trimmed),
    /// as texts.
    fn quotables_by_split(text: &str) -> Vec<String> {
        let words = text
            .split(|c: char| {
                !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '$' | '%'))
            })
            .map(|w| w.trim_matches(|c: char| matches!(c, '.' | '-' | '/')))
            .filter(|w| !w.is_empty());
        let mut out = Vec::new();
        let mut prev: Option<(&str, usize)> = None;
        for w in words {
            let n = w.chars().count();
            if (n >= 4 && w.chars().any(|c| c.is_ascii_digit())) || n >= 12 {
                out.push(w.to_string());
            }
            if let Some((p, pn)) = prev
                && pn + 1 + n >= 12
                && pn >= 3
                && n >= 3
            {
                out.push(format!("{p} {w}"));
            }
            prev = Some((w, n));
        }
        out
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The byte scan finds the tokens `str::split` found, in order,
        /// and tokens of one text share a key exactly when their texts
        /// are the same.
        #[test]
        fn quotables_are_the_splits(
            chars in proptest::collection::vec(proptest::prop_oneof![
                12 => proptest::sample::select(vec![
                    'a', 'b', 'Z', '7', '0', '_', '-', '.', '/', '$', '%', 'é', '東', '٣',
                    '\u{301}',
                ]),
                3 => proptest::sample::select(vec![
                    ' ', ' ', ',', ':', '\n', '—', '\u{a0}', '😀',
                ]),
                1 => proptest::prelude::any::<char>(),
            ], 0..200),
        ) {
            let text: String = chars.into_iter().collect();
            let mut found = Vec::new();
            each_quotable(&text, |q| found.push((q.text(), q.key())));
            let texts: Vec<String> = found.iter().map(|(t, _)| t.clone()).collect();
            proptest::prop_assert_eq!(&texts, &quotables_by_split(&text));
            for (a, ka) in &found {
                for (b, kb) in &found {
                    proptest::prop_assert_eq!(a == b, ka == kb, "{:?} {:?}", a, b);
                }
            }
        }
    }

    #[test]
    fn quotes_only_in_compacted_results_are_hidden() {
        let json = r#"{"format":"tracecost.trace/v1","name":"r","model":"claude-sonnet-4-5","messages":[
            {"role":"user","content":"compare B07XYZ1234 with others"},
            {"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"B07XYZ1234 costs 129.99; B08QQQ5678 costs 89.50"}]},
            {"role":"assistant","content":[{"type":"tool_use","id":"b","name":"f","input":{}}]},
            {"role":"user","content":[{"type":"tool_result","tool_use_id":"b","content":"reviews: 4.5 stars"}]},
            {"role":"assistant","content":[{"type":"text","text":"B08QQQ5678 at 89.50 beats B07XYZ1234"}]}
            ],"calls":[{"messages":1},{"messages":3},{"messages":5}]}"#;
        let t = load_str(json, "r.json").unwrap().traces.remove(0);
        let idx = RiskIndex::new(&t, &|m, _| 10 * m as u64);
        // Result a compacted at call 3: B08QQQ5678 and 89.50 were only there;
        // B07XYZ1234 is also in the user's text.
        let r = idx.score(&[call(1, &[]), call(2, &[]), call(3, &["a"])]);
        // Both quotes sit in result a (message 2): 20 tokens to recall.
        assert_eq!(
            r,
            RecallRisk {
                turns: 1,
                quotes: 2,
                recall_tokens: 20
            }
        );
        let r = idx.score(&[call(1, &[]), call(2, &[]), call(3, &["b"])]);
        assert_eq!(r, RecallRisk::default());
    }
}

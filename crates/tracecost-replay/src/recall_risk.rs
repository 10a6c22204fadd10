//! Recall risk: which compacted results would the model have needed back?
//!
//! The evidence that a result's content was needed after it was compacted
//! comes from what the agent did next, as the trace records it, counted
//! once per result (not per turn that shows it):
//!
//! - **Copied lines** (`copied_lines`): a line of the result, 24+
//!   characters once trimmed (and a `cat -n` line number dropped), appears
//!   as a whole line in a later answer or tool input (an Edit's
//!   `old_string` above all). The model wrote text it could only have
//!   taken from the result.
//! - **Identifiers** (`identifiers`): an identifier-like token of a later
//!   answer or tool input (6+ characters with a letter and a digit, an
//!   underscore, a camelCase hump, or `.`, `/` or `:` inside it: paths,
//!   ids, dotted names) found in the result. Plain words and word pairs
//!   are never evidence.
//! - **Re-fetches** (`refetch`): the same tool called again with the same
//!   key (a file path, a command, a pattern and path, a URL). The record
//!   already holds that call and pays for it, so it is counted, never
//!   charged.
//!
//! A signal counts only while it is *hidden*: absent from everything the
//! model could still see at that call, which is the plain text of the
//! conversation (system prompt, user and assistant text, the model's own
//! thinking, every tool input) and every tool result not compacted at that
//! call. A token found in several results counts for the smallest of them,
//! and only when all of them are compacted.
//!
//! Per config the needs are a range ([`RecallRisk`]): `low` counts results
//! with a copied line only; `high` every result with a content signal;
//! `mid` weighs identifier-only results by the share of that evidence the
//! records do not explain by coincidence (see `docs/recall.md`).
//!
//! The index is built once per trace (inverted indexes of the lines and
//! identifiers later turns write) and each config is then scored with
//! lookups only.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;

use super::CompactedAt;
pub use super::recall_observed::{Observed, ObservedCell};
pub use super::recall_size::{COINCIDENCE, Coincidence, SIZE_BUCKETS, size_bucket};
use tracecost_cost::tokens::FastBuild;
use tracecost_engine::message::{
    BlockKind, Content, ContentBlock, Message, Role, ToolResultContent,
};
use tracecost_trace::Trace;

/// The chances of coincidental evidence in a result of `chars`.
fn coincidence(chars: u64) -> Coincidence {
    COINCIDENCE[size_bucket(chars)]
}

/// A low / mid / high figure.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, serde::Deserialize)]
pub struct Range {
    /// The strictest evidence only.
    pub low: f64,
    /// The calibrated estimate.
    pub mid: f64,
    /// Every signal.
    pub high: f64,
}

impl Range {
    /// `f` of each bound.
    pub fn map(self, f: impl Fn(f64) -> f64) -> Self {
        Range {
            low: f(self.low),
            mid: f(self.mid),
            high: f(self.high),
        }
    }
}

/// How many compacted results showed each kind of evidence (a result may
/// show several).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
pub struct Evidence {
    /// Results fetched again with the same key after they were compacted
    /// (paid for in the record; never charged).
    pub refetch: usize,
    /// Results a line of which was copied while they were compacted.
    pub copied_lines: usize,
    /// Results holding an identifier written while they were compacted.
    pub identifiers: usize,
}

/// The recall risk of one config.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, serde::Deserialize)]
pub struct RecallRisk {
    /// Compacted results the record shows were needed again: low (copied
    /// lines beyond coincidence), mid (copied lines and identifiers, each
    /// beyond coincidence), high (every content signal, nothing
    /// subtracted). Low and mid are estimates of an excess, signed for one
    /// trace: sum them over traces, then cut the sum at zero.
    pub needs: Range,
    /// Tokens the recalls of those results would bring back.
    pub recall_tokens: Range,
    /// The evidence by kind.
    pub evidence: Evidence,
    /// Of `needs`, what is charged at the recall rates observed where the
    /// ledger ran (the same at every bound): see `recall_observed`.
    #[serde(default)]
    pub observed_needs: f64,
}

impl RecallRisk {
    /// Needs of the mid estimate, as the figure tables show.
    pub fn mid_needs(&self) -> f64 {
        self.needs.mid
    }
}

/// A kind of content evidence (re-fetches are apart: never charged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    CopiedLine,
    Identifier,
    Refetch,
}

impl Kind {
    fn bit(self) -> u8 {
        match self {
            Kind::CopiedLine => 1,
            Kind::Identifier => 2,
            Kind::Refetch => 4,
        }
    }
}

/// One signal of one turn: its kind and the results holding it.
struct Signal {
    kind: Kind,
    holders: HolderSet,
}

/// The results holding one signal.
enum HolderSet {
    /// A list of the turn's own (a line or identifier: the results that
    /// hold it, maybe narrowed to those holding its pairs too).
    Own(Vec<u32>),
    /// The first `len` results of a shared list ([`SharedHolders`]).
    Prefix { shared: u32, len: u32 },
}

/// The results fetched by one key, shared by every turn that fetches by
/// it again. A turn's holders are the results before it, a prefix of this
/// list: a session that fetches by one key at every call (the same shell
/// command, a tool without input) holds one list, not one per call, which
/// grew with the square of the calls.
struct SharedHolders {
    results: Vec<u32>,
    /// Per prefix `results[..=i]`, its result with the fewest tokens (the
    /// first of equals, as `min_by_key` picks).
    smallest: Vec<u32>,
}

impl SharedHolders {
    fn new(results: Vec<u32>, tokens: &[u64]) -> Self {
        let tokens_of = |r: u32| tokens.get(r as usize).copied().unwrap_or(0);
        let mut smallest: Vec<u32> = Vec::with_capacity(results.len());
        for &r in &results {
            let best = match smallest.last() {
                Some(&b) if tokens_of(b) <= tokens_of(r) => b,
                _ => r,
            };
            smallest.push(best);
        }
        SharedHolders { results, smallest }
    }
}

struct Turn {
    call: usize,
    results_before: usize,
    signals: Vec<Signal>,
}

/// The turns showing a signal, and the holder lists their re-fetches share.
struct Turns {
    turns: Vec<Turn>,
    shared: Vec<SharedHolders>,
}

/// Per-trace index for scoring recall risk.
pub struct RiskIndex {
    /// Which results carry each tool_use id.
    results_by_id: ResultsById,
    result_tokens: Vec<u64>,
    /// Per result, its payload's characters.
    result_chars: Vec<u64>,
    turns: Vec<Turn>,
    /// The holder lists the turns' re-fetches share.
    shared: Vec<SharedHolders>,
    /// Per result, its tool and whether the model recalled it.
    recalls: super::recall_observed::Recalls,
}

/// The results carrying each tool_use id, numbered in history order. An
/// id is the trace's own `Arc<str>` and names its first result; the few
/// ids the history repeats have their later results in a side table, so
/// that an id carried once (nearly all of them) holds no list.
struct ResultsById {
    first: HashMap<Arc<str>, u32, FastBuild>,
    /// By first result, the later results of its id, ascending.
    repeats: HashMap<u32, Vec<u32>, FastBuild>,
    /// How many results there are.
    count: usize,
}

impl ResultsById {
    /// `ids[r]` is the id of result `r`.
    fn new(ids: Vec<Arc<str>>) -> Self {
        let mut first: HashMap<Arc<str>, u32, FastBuild> =
            HashMap::with_capacity_and_hasher(ids.len(), FastBuild::default());
        let mut repeats: HashMap<u32, Vec<u32>, FastBuild> = HashMap::default();
        let count = ids.len();
        for (r, id) in ids.into_iter().enumerate() {
            let r = r as u32;
            match first.entry(id) {
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(r);
                }
                std::collections::hash_map::Entry::Occupied(e) => {
                    repeats.entry(*e.get()).or_default().push(r);
                }
            }
        }
        ResultsById {
            first,
            repeats,
            count,
        }
    }

    /// The results carrying `id`, ascending.
    fn of(&self, id: &str) -> impl Iterator<Item = u32> + '_ {
        let first = self.first.get(id).copied();
        let later = first
            .and_then(|f| self.repeats.get(&f))
            .map_or(&[][..], Vec::as_slice);
        first.into_iter().chain(later.iter().copied())
    }
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

/// Calls `f` with each word of `text`: a run of alphanumeric chars and
/// `_-./$%`, without its leading and trailing `.-/`. The scan goes byte by
/// byte over ASCII and decodes only the other chars.
fn each_word<'a>(text: &'a str, mut f: impl FnMut(&'a str)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() {
            let b = bytes[i];
            if b < 0x80 {
                if !WORD_BYTE[b as usize] {
                    break;
                }
                i += 1;
            } else {
                let c = text[i..].chars().next().unwrap_or_default();
                if !c.is_alphanumeric() {
                    break;
                }
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
        if !w.is_empty() {
            f(w);
        }
    }
}

/// Whether a word looks like an identifier rather than a word of prose: 6+
/// characters with a letter, and a digit, an underscore, a lower-to-upper
/// hump (camelCase) or a `.` or `/` inside it (paths, dotted names, ids).
fn is_identifier(w: &str) -> bool {
    if w.len() < 6 || w.chars().count() < 6 {
        return false;
    }
    let (mut letter, mut marked, mut prev_lower) = (false, false, false);
    for c in w.chars() {
        letter |= c.is_alphabetic();
        marked |=
            c.is_ascii_digit() || matches!(c, '_' | '.' | '/') || (prev_lower && c.is_uppercase());
        prev_lower = c.is_lowercase();
    }
    letter && marked
}

/// Calls `f` with each identifier of `text` and its hash.
fn each_identifier(text: &str, mut f: impl FnMut(&str, u64)) {
    each_word(text, |w| {
        if is_identifier(w) {
            f(w, word_hash(w));
        }
    });
}

/// The shortest line that counts as copied, in characters once trimmed:
/// long enough that two files rarely share it by chance (a closing brace,
/// `return Ok(());` or `} else {` never count).
const MIN_COPIED_LINE: usize = 24;

/// Calls `f` with each line of `text` that can count as copied, trimmed,
/// with a `cat -n` line number (digits then a tab or `→`, as file readers
/// number lines) dropped, and its hash: [`MIN_COPIED_LINE`] characters or
/// more, and more than one word. A line of one token (a path, a URL, an
/// id) is a name, which the identifier rule weighs, not a line of text.
fn each_line<'a>(text: &'a str, mut f: impl FnMut(&'a str, u64)) {
    for line in text.lines() {
        let mut l = line.trim_start();
        let digits = l.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            let rest = &l[digits..];
            if let Some(r) = rest.strip_prefix('\t').or_else(|| rest.strip_prefix('→')) {
                l = r;
            }
        }
        let l = l.trim();
        if l.len() >= MIN_COPIED_LINE
            && l.chars().count() >= MIN_COPIED_LINE
            && l.contains(char::is_whitespace)
        {
            f(l, word_hash(l));
        }
    }
}

/// Ends a leaf of what a turn wrote (its text, a string of a tool input)
/// in [`written`]'s text: lines of two leaves are never neighbours.
const LEAF_END: &str = "\u{1e}";

/// The hash of two lines that follow each other (among the lines that can
/// count as copied), in their order.
fn pair_hash(first: u64, second: u64) -> u64 {
    hash_finish(hash_step(first.rotate_left(23), second))
}

/// Calls `f` with each line of what a turn wrote that can count as copied
/// ([`each_line`]), its hash, and the hashes of the pairs it forms with
/// the lines before and after it in its leaf, where it has such
/// neighbours.
fn each_written_line(text: &str, mut f: impl FnMut(&str, u64, [Option<u64>; 2])) {
    let mut leaf: Vec<(&str, u64)> = Vec::new();
    for part in text.split(LEAF_END) {
        leaf.clear();
        each_line(part, |l, h| leaf.push((l, h)));
        for (i, &(l, h)) in leaf.iter().enumerate() {
            let before = i.checked_sub(1).map(|j| pair_hash(leaf[j].1, h));
            let after = leaf.get(i + 1).map(|n| pair_hash(h, n.1));
            f(l, h, [before, after]);
        }
    }
}

/// Calls `f` with the hash of each pair of lines of a result that follow
/// each other among its lines that can count as copied.
fn each_pair(text: &str, mut f: impl FnMut(u64)) {
    let mut last = None;
    each_line(text, |_, h| {
        if let Some(prev) = last {
            f(pair_hash(prev, h));
        }
        last = Some(h);
    });
}

/// The string leaves of a JSON text, one a line (the text a tool input
/// carries, unescaped).
fn json_strings(raw: &str, out: &mut String) {
    fn walk(v: &serde_json::Value, out: &mut String) {
        match v {
            serde_json::Value::String(s) => {
                out.push_str(s);
                out.push('\n');
                out.push_str(LEAF_END);
                out.push('\n');
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(v) => walk(&v, out),
        Err(_) => {
            out.push_str(raw);
            out.push('\n');
            out.push_str(LEAF_END);
            out.push('\n');
        }
    }
}

/// The text a tool result holds: a string's, or the `text` of each block
/// of a block list.
fn result_text(b: &ContentBlock, out: &mut String) {
    match b.kind() {
        BlockKind::ToolResult {
            content: ToolResultContent::Text(t),
            ..
        } => out.push_str(t),
        BlockKind::ToolResult { .. } => {
            let raw = b.tool_result_payload().unwrap_or("");
            if let Ok(serde_json::Value::Array(items)) = serde_json::from_str(raw) {
                for item in items {
                    if let Some(t) = item.get("text").and_then(|t| t.as_str()) {
                        out.push_str(t);
                        out.push('\n');
                    }
                }
            }
        }
        _ => {}
    }
}

/// What the model wrote in a message: its text and its tool inputs.
fn written(m: &Message, out: &mut String) {
    let leaf = |t: &str, out: &mut String| {
        out.push_str(t);
        out.push('\n');
        out.push_str(LEAF_END);
        out.push('\n');
    };
    if let Content::Text(t) = m.content() {
        leaf(t, out);
    }
    for b in m.blocks() {
        match b.kind() {
            BlockKind::Text { text } => leaf(text, out),
            BlockKind::ToolUse { .. } => json_strings(b.tool_input().map_or("", |r| r.get()), out),
            _ => {}
        }
    }
}

/// What a message shows the model besides tool results: what it wrote and
/// its thinking.
fn plain(m: &Message, out: &mut String) {
    written(m, out);
    for b in m.blocks() {
        if matches!(b.kind(), BlockKind::Thinking)
            && let Ok(v) = serde_json::from_str::<serde_json::Value>(&b.to_json())
            && let Some(t) = v.get("thinking").and_then(|t| t.as_str())
        {
            out.push_str(t);
            out.push('\n');
        }
    }
}

/// The key a tool call fetches by: its tool and, of its input, the first
/// of the members that name what is fetched (a file, a command, a
/// pattern and where, a URL, a query), else the whole input.
fn fetch_key(name: &str, input: &str) -> String {
    const KEYS: [&[&str]; 6] = [
        &["file_path"],
        &["notebook_path"],
        &["command"],
        &["pattern", "path", "glob"],
        &["url"],
        &["query"],
    ];
    let Ok(serde_json::Value::Object(o)) = serde_json::from_str::<serde_json::Value>(input) else {
        return format!("{name}\u{0}{input}");
    };
    for keys in KEYS {
        if o.contains_key(keys[0]) {
            let parts: Vec<String> = keys
                .iter()
                .map(|k| o.get(*k).map_or(String::new(), |v| v.to_string()))
                .collect();
            return format!("{name}\u{0}{}", parts.join("\u{0}"));
        }
    }
    format!("{name}\u{0}{input}")
}

/// Per message, what its tool_use blocks fetch, by id.
fn fetch_keys(trace: &Trace) -> HashMap<&str, String, FastBuild> {
    let mut keys = HashMap::default();
    for m in &trace.messages {
        for b in m.blocks() {
            if let BlockKind::ToolUse { id, name } = b.kind() {
                keys.insert(
                    &**id,
                    fetch_key(name, b.tool_input().map_or("{}", |r| r.get())),
                );
            }
        }
    }
    keys
}

/// A hidden-text search over the plain text the model saw: the text only
/// grows from call to call, so a needle found in one prefix is in every
/// later one, and one not found is searched again only in the text added
/// since.
struct PlainText {
    text: String,
    /// Per message `i`, the length of the text of `messages[..i]`.
    before_message: Vec<usize>,
    /// Per needle: `None` once found, else the prefix it was not found in.
    searched: HashMap<u64, Option<usize>, FastBuild>,
}

impl PlainText {
    fn new(trace: &Trace) -> Self {
        let mut text = String::new();
        for p in &trace.prompts {
            for b in &p.system {
                if let BlockKind::Text { text: t } = b.kind() {
                    text.push_str(t);
                    text.push('\n');
                }
            }
        }
        let mut before_message = Vec::with_capacity(trace.messages.len() + 1);
        for m in &trace.messages {
            before_message.push(text.len());
            plain(m, &mut text);
        }
        before_message.push(text.len());
        PlainText {
            text,
            before_message,
            searched: HashMap::default(),
        }
    }

    /// Whether `needle` (hashed `key`) is absent from the text of the first
    /// `messages` messages.
    fn hidden(&mut self, key: u64, needle: &str, messages: usize) -> bool {
        let len = self
            .before_message
            .get(messages)
            .copied()
            .unwrap_or(self.text.len());
        match self.searched.get(&key).copied() {
            Some(None) => false,
            Some(Some(upto)) if upto >= len => true,
            prior => {
                let upto = prior.flatten().unwrap_or(0);
                let mut from = upto.saturating_sub(needle.len().saturating_sub(1));
                while !self.text.is_char_boundary(from) {
                    from -= 1;
                }
                // memchr's search picks the needle's rarest bytes to look
                // for, where `str::contains` looks for its first and last.
                let found = self.text.get(from..len).is_some_and(|added| {
                    memchr::memmem::find(added.as_bytes(), needle.as_bytes()).is_some()
                });
                self.searched.insert(key, (!found).then_some(len));
                !found
            }
        }
    }
}

/// Inverted index: a key → the results holding it, ascending, each once.
type Holders = HashMap<u64, Vec<u32>, FastBuild>;

fn hold(index: &mut Holders, key: u64, r: u32) {
    let list = index.entry(key).or_default();
    if list.last() != Some(&r) {
        list.push(r);
    }
}

/// What the assistant turns wrote, with their calls, and the hashes of
/// the lines, line pairs and identifiers in it: only those are looked up
/// in the results, so the indexes keep no other.
#[derive(Default)]
struct Written {
    turns: Vec<(usize, String)>,
    lines: HashSet<u64, FastBuild>,
    pairs: HashSet<u64, FastBuild>,
    idents: HashSet<u64, FastBuild>,
}

impl Written {
    fn of(trace: &Trace) -> Self {
        let mut w = Written::default();
        for (ci, call) in trace.calls.iter().enumerate() {
            let Some(response) = trace.messages.get(call.messages) else {
                continue;
            };
            if response.role() != Role::Assistant {
                continue;
            }
            let mut text = String::new();
            written(response, &mut text);
            each_written_line(&text, |_, h, around| {
                w.lines.insert(h);
                w.pairs.extend(around.into_iter().flatten());
            });
            each_identifier(&text, |_, h| {
                w.idents.insert(h);
            });
            w.turns.push((ci, text));
        }
        w
    }
}

/// Every tool result of a trace, numbered in history order, and which of
/// them hold what the turns wrote.
#[derive(Default)]
struct Results<'t> {
    /// Per result, its tool_use id (the trace's own).
    ids: Vec<Arc<str>>,
    tokens: Vec<u64>,
    chars: Vec<u64>,
    /// Per message, the results before it (and the total last).
    before_message: Vec<usize>,
    line_index: Holders,
    pair_index: Holders,
    ident_index: Holders,
    /// Per fetch key, the results fetched by it.
    fetch_index: HashMap<&'t str, Vec<u32>, FastBuild>,
}

impl<'t> Results<'t> {
    fn of(
        trace: &Trace,
        tokens: &dyn Fn(usize, usize) -> u64,
        written: &Written,
        keys: &'t HashMap<&str, String, FastBuild>,
    ) -> Self {
        let mut res = Results {
            before_message: Vec::with_capacity(trace.messages.len() + 1),
            ..Results::default()
        };
        let mut text = String::new();
        for (mi, m) in trace.messages.iter().enumerate() {
            res.before_message.push(res.ids.len());
            for (bi, b) in m.blocks().iter().enumerate() {
                let BlockKind::ToolResult {
                    tool_use_id,
                    payload_chars,
                    ..
                } = b.kind()
                else {
                    continue;
                };
                res.chars.push(*payload_chars);
                let r = res.ids.len() as u32;
                res.ids.push(Arc::clone(tool_use_id));
                res.tokens.push(tokens(mi, bi));
                if let Some(key) = keys.get(&**tool_use_id) {
                    res.fetch_index.entry(key.as_str()).or_default().push(r);
                }
                if written.turns.is_empty() {
                    continue;
                }
                text.clear();
                result_text(b, &mut text);
                each_line(&text, |_, h| {
                    if written.lines.contains(&h) {
                        hold(&mut res.line_index, h, r);
                    }
                });
                each_pair(&text, |h| {
                    if written.pairs.contains(&h) {
                        hold(&mut res.pair_index, h, r);
                    }
                });
                each_identifier(&text, |_, h| {
                    if written.idents.contains(&h) {
                        hold(&mut res.ident_index, h, r);
                    }
                });
            }
        }
        res.before_message.push(res.ids.len());
        res
    }

    /// The turns whose text or tool calls point back at earlier results.
    fn turns(
        &self,
        trace: &Trace,
        written: &Written,
        keys: &HashMap<&str, String, FastBuild>,
    ) -> Turns {
        let mut plain = PlainText::new(trace);
        let mut shared: Vec<SharedHolders> = Vec::new();
        let mut shared_of: HashMap<&str, u32, FastBuild> = HashMap::default();
        // The messages the plain text covers: the most any call so far sent.
        let mut plain_upto = 0;
        let mut turns = Vec::new();
        for (ci, text) in &written.turns {
            let (ci, call) = (*ci, &trace.calls[*ci]);
            plain_upto = plain_upto.max(call.messages);
            let results_before = self
                .before_message
                .get(call.messages)
                .copied()
                .unwrap_or(self.ids.len());
            // Lists are ascending, so the results before are a prefix.
            let earlier = |list: &[u32]| -> usize {
                list.partition_point(|&r| (r as usize) < results_before)
            };
            let mut signals = Vec::new();
            let mut seen: HashSet<u64, FastBuild> = HashSet::default();
            // `next_to`: for a line written beside others of its leaf, the
            // pairs it forms with them; a result holds it only if it holds
            // one of those pairs too.
            let mut found = |kind: Kind,
                             index: &Holders,
                             needle: &str,
                             h: u64,
                             next_to: [Option<u64>; 2],
                             plain: &mut PlainText| {
                if !seen.insert(h) {
                    return;
                }
                let Some(list) = index.get(&h) else {
                    return;
                };
                let mut holders: Vec<u32> = list[..earlier(list)].to_vec();
                if next_to.iter().any(Option::is_some) {
                    let hold_pair = |r: &u32| {
                        next_to.iter().flatten().any(|p| {
                            self.pair_index
                                .get(p)
                                .is_some_and(|l| l.binary_search(r).is_ok())
                        })
                    };
                    holders.retain(hold_pair);
                }
                if !holders.is_empty() && plain.hidden(h, needle, plain_upto) {
                    signals.push(Signal {
                        kind,
                        holders: HolderSet::Own(holders),
                    });
                }
            };
            each_written_line(text, |l, h, next_to| {
                found(
                    Kind::CopiedLine,
                    &self.line_index,
                    l,
                    h,
                    next_to,
                    &mut plain,
                )
            });
            each_identifier(text, |w, h| {
                found(
                    Kind::Identifier,
                    &self.ident_index,
                    w,
                    h,
                    [None; 2],
                    &mut plain,
                )
            });
            // Re-fetches: the response's tool calls that fetch by a key an
            // earlier result was fetched by.
            if let Some(response) = trace.messages.get(call.messages) {
                for b in response.blocks() {
                    if let BlockKind::ToolUse { id, .. } = b.kind()
                        && let Some((key, list)) = keys
                            .get(&**id)
                            .and_then(|k| self.fetch_index.get_key_value(k.as_str()))
                    {
                        let len = earlier(list);
                        if len > 0 {
                            let at = *shared_of.entry(key).or_insert_with(|| {
                                shared.push(SharedHolders::new(list.clone(), &self.tokens));
                                (shared.len() - 1) as u32
                            });
                            signals.push(Signal {
                                kind: Kind::Refetch,
                                holders: HolderSet::Prefix {
                                    shared: at,
                                    len: len as u32,
                                },
                            });
                        }
                    }
                }
            }
            if !signals.is_empty() {
                turns.push(Turn {
                    call: ci,
                    results_before,
                    signals,
                });
            }
        }
        Turns { turns, shared }
    }
}

impl RiskIndex {
    /// Builds the index for `trace`; `tokens(message, block)` gives the
    /// token count of a history block (to price recalls). Three passes:
    /// what the turns wrote, which results hold it, and per turn the
    /// earlier results it points back at.
    pub fn new(trace: &Trace, tokens: &dyn Fn(usize, usize) -> u64) -> Self {
        let written = Written::of(trace);
        let keys = fetch_keys(trace);
        let results = Results::of(trace, tokens, &written, &keys);
        let Turns { turns, shared } = results.turns(trace, &written, &keys);
        let Results {
            ids: result_ids,
            tokens: result_tokens,
            chars: result_chars,
            ..
        } = results;
        RiskIndex {
            results_by_id: ResultsById::new(result_ids),
            result_tokens,
            result_chars,
            turns,
            shared,
            recalls: super::recall_observed::Recalls::new(trace),
        }
    }

    /// The recalls the record shows where the ledger ran: `baseline` is the
    /// replay of the ledger that ran (its compacted results are those the
    /// agent's ledger stubbed); `ledger_ran` whether the trace's status quo
    /// is a ledger. `None` where no ledger ran.
    pub fn observe<C: CompactedAt>(&self, baseline: &[C], ledger_ran: bool) -> Option<Observed> {
        let mut stubbed: HashSet<u32, FastBuild> = HashSet::default();
        if ledger_ran {
            for c in baseline {
                for id in c.compacted().iter() {
                    stubbed.extend(self.results_by_id.of(id));
                }
            }
        }
        let mut stubbed: Vec<u32> = stubbed.into_iter().collect();
        stubbed.sort_unstable();
        self.recalls.observe(stubbed.into_iter(), ledger_ran)
    }

    /// The assistant turns that show a signal of some result.
    pub fn turn_count(&self) -> usize {
        self.turns.len()
    }

    /// What [`Self::score`] reads of `calls`: the ids compacted at each
    /// call that shows a signal, by address. Replays whose compacted
    /// lists are the same shared lists (the configs of one compaction
    /// policy) have the same identity and the same score.
    pub fn identity<C: CompactedAt>(&self, calls: &[C]) -> Vec<(usize, usize)> {
        self.turns
            .iter()
            .map(|t| {
                calls.get(t.call).map_or((0, 0), |c| {
                    (c.compacted().as_ptr() as usize, c.compacted().len())
                })
            })
            .collect()
    }

    /// Scores one config's replay: by the evidence, or, for a result of a
    /// tool and size that `observed` measured, at the observed rate.
    pub fn score<C: CompactedAt>(&self, calls: &[C], observed: Option<&Observed>) -> RecallRisk {
        let rates = observed.map_or_else(Vec::new, |o| self.recalls.rates(o));
        let rate = |r: u32| rates.get(r as usize).copied().flatten();
        // Which results the latest call scored had compacted: calls' lists
        // mostly extend one another, so each is marked from the one before.
        let mut marked = vec![false; self.results_by_id.count];
        let mut marked_ids: &[std::sync::Arc<str>] = &[];
        // Per shared holder list, its first result not marked (all before
        // it are): marks only accumulate until they start over, so a
        // re-fetch's prefix is checked from where the last check stopped.
        let mut unmarked_from = vec![0u32; self.shared.len()];
        // Per result, the kinds of evidence it showed while compacted.
        let mut shown: HashMap<u32, u8, FastBuild> = HashMap::default();
        for t in &self.turns {
            let Some(call) = calls.get(t.call) else {
                continue;
            };
            if call.compacted().is_empty() {
                continue;
            }
            let ids: &[std::sync::Arc<str>] = call.compacted();
            let new = match super::extension(ids, marked_ids) {
                Some(new) => new,
                None => {
                    marked.iter_mut().for_each(|m| *m = false);
                    unmarked_from.iter_mut().for_each(|p| *p = 0);
                    ids
                }
            };
            for id in new {
                for r in self.results_by_id.of(id) {
                    marked[r as usize] = true;
                }
            }
            marked_ids = ids;
            let is_compacted =
                |r: u32| (r as usize) < t.results_before && marked.get(r as usize) == Some(&true);
            for signal in &t.signals {
                let smallest = match &signal.holders {
                    HolderSet::Own(list) => {
                        if !list.iter().all(|&r| is_compacted(r)) {
                            continue;
                        }
                        list.iter().copied().min_by_key(|&r| {
                            self.result_tokens.get(r as usize).copied().unwrap_or(0)
                        })
                    }
                    &HolderSet::Prefix { shared, len } => {
                        let list = &self.shared[shared as usize];
                        let from = &mut unmarked_from[shared as usize];
                        // Every result of the prefix is before the turn.
                        while *from < len && is_compacted(list.results[*from as usize]) {
                            *from += 1;
                        }
                        if *from < len {
                            continue;
                        }
                        list.smallest.get(len as usize - 1).copied()
                    }
                };
                if let Some(r) = smallest {
                    *shown.entry(r).or_default() |= signal.kind.bit();
                }
            }
        }
        // The results compacted: those of the call that compacted most
        // (what a policy compacts only grows), with their chance evidence.
        let mut chance = ((0.0, 0.0), (0.0, 0.0));
        // Needs and tokens charged at an observed rate.
        let mut measured = (0.0, 0.0);
        if let Some(most) = calls.iter().max_by_key(|c| c.compacted().len()) {
            let mut seen: HashSet<u32, FastBuild> = HashSet::default();
            for id in most.compacted().iter() {
                for r in self.results_by_id.of(id) {
                    if !seen.insert(r) {
                        continue;
                    }
                    let tokens = self.result_tokens.get(r as usize).copied().unwrap_or(0) as f64;
                    if let Some(p) = rate(r) {
                        measured = (measured.0 + p, measured.1 + p * tokens);
                        continue;
                    }
                    let c = coincidence(self.result_chars.get(r as usize).copied().unwrap_or(0));
                    chance.0.0 += c.copied_lines;
                    chance.0.1 += c.copied_lines * tokens;
                    chance.1.0 += c.identifiers;
                    chance.1.1 += c.identifiers * tokens;
                }
            }
        }
        let mut risk = self.needs_of(&shown, chance, &|r| rate(r).is_some());
        risk.observed_needs = measured.0;
        risk.needs = risk.needs.map(|x| x + measured.0);
        risk.recall_tokens = risk.recall_tokens.map(|x| x + measured.1);
        risk
    }

    /// The needs shown by `shown` (per result, the kinds of evidence it
    /// showed while compacted), less what `chance` explains: the results
    /// and tokens expected to show a copied line, and an identifier alone,
    /// by coincidence. A result `measured` (charged at an observed rate)
    /// counts in the evidence but is not charged by it.
    fn needs_of(
        &self,
        shown: &HashMap<u32, u8, FastBuild>,
        chance: ((f64, f64), (f64, f64)),
        measured: &dyn Fn(u32) -> bool,
    ) -> RecallRisk {
        let mut risk = RecallRisk::default();
        // Per kind: results, and their tokens.
        let (mut copied, mut ident) = ((0.0, 0.0), (0.0, 0.0));
        // In result order, so that sums of floats are the same every run.
        let mut results: Vec<(&u32, &u8)> = shown.iter().collect();
        results.sort_unstable();
        for (&r, &bits) in results {
            let tokens = self.result_tokens.get(r as usize).copied().unwrap_or(0) as f64;
            let has = |k: Kind| bits & k.bit() != 0;
            risk.evidence.refetch += usize::from(has(Kind::Refetch));
            risk.evidence.copied_lines += usize::from(has(Kind::CopiedLine));
            risk.evidence.identifiers += usize::from(has(Kind::Identifier));
            if measured(r) {
                continue;
            }
            if has(Kind::CopiedLine) {
                copied = (copied.0 + 1.0, copied.1 + tokens);
            } else if has(Kind::Identifier) {
                ident = (ident.0 + 1.0, ident.1 + tokens);
            }
        }
        // What coincidence explains is taken off each kind. Left signed:
        // an estimate of the excess that is unbiased when traces are summed
        // (a sum of per-trace figures cut at zero would keep every trace's
        // chance excess and none of its shortfalls); the sums are cut at
        // zero where they are shown.
        let excess = |(n, tokens): (f64, f64), (cn, ct): (f64, f64)| (n - cn, tokens - ct);
        let (c, i) = (excess(copied, chance.0), excess(ident, chance.1));
        risk.needs = Range {
            low: c.0,
            mid: c.0 + i.0,
            high: copied.0 + ident.0,
        };
        risk.recall_tokens = Range {
            low: c.1,
            mid: c.1 + i.1,
            high: copied.1 + ident.1,
        };
        risk
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CallResult;
    use tracecost_cost::pricing::Usage;
    use tracecost_trace::load_str;

    fn call(index: usize, compacted: &[&str]) -> CallResult {
        CallResult {
            index,
            messages: 0,
            chars: 0,
            usage: Usage::default(),
            cost_usd: 0.0,
            compacted: compacted.iter().map(|s| std::sync::Arc::from(*s)).collect(),
            record: None,
            cost_usd_as_recorded: None,
            model: "".into(),
            stable_prefix_tokens: 0,
            over_window: false,
            cache_cause: None,
            summary: false,
        }
    }

    /// The words of `text` as `str::split` finds them.
    fn words_by_split(text: &str) -> Vec<String> {
        text.split(|c: char| {
            !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '$' | '%'))
        })
        .map(|w| w.trim_matches(|c: char| matches!(c, '.' | '-' | '/')))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// The byte scan finds the words `str::split` finds, in order.
        #[test]
        fn words_are_the_splits(
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
            each_word(&text, |w| found.push(w.to_owned()));
            proptest::prop_assert_eq!(found, words_by_split(&text));
        }
    }

    #[test]
    fn an_id_names_each_result_that_carries_it_in_order() {
        let by_id = ResultsById::new(
            ["a", "b", "a", "c", "a"]
                .iter()
                .map(|s| Arc::from(*s))
                .collect(),
        );
        let of = |id: &str| by_id.of(id).collect::<Vec<_>>();
        assert_eq!(of("a"), [0, 2, 4]);
        assert_eq!(of("b"), [1]);
        assert_eq!(of("c"), [3]);
        assert!(of("z").is_empty());
        assert_eq!(by_id.count, 5);
        // Only the repeated id holds a list.
        assert_eq!(by_id.repeats.len(), 1);
    }

    #[test]
    fn identifiers_are_not_words_of_prose() {
        for id in [
            "B07XYZ1234",
            "src/main.rs",
            "fetch_key",
            "getElementById",
            "v1.2.3",
        ] {
            assert!(is_identifier(id), "{id}");
        }
        for word in [
            "strategy",
            "Consider",
            "should",
            "12345678",
            "a_b",
            "université",
        ] {
            assert!(!is_identifier(word), "{word}");
        }
    }

    #[test]
    fn a_copied_line_drops_its_line_number() {
        let mut got = Vec::new();
        each_line(
            "     12\tlet total = price * quantity + shipping;\n  7→fn short() {}\n",
            |l, _| got.push(l.to_owned()),
        );
        assert_eq!(got, ["let total = price * quantity + shipping;"]);
    }

    #[test]
    fn a_line_of_one_token_is_a_name_not_a_copied_line() {
        let mut got = Vec::new();
        each_line(
            "/home/dev/orbit-sched/src/api/handlers.rs\nlet deadline = Instant::now() + timeout;\n",
            |l, _| got.push(l.to_owned()),
        );
        assert_eq!(got, ["let deadline = Instant::now() + timeout;"]);
    }

    /// A read whose file holds two lines of an edit's block, next to each
    /// other or apart.
    fn block_session(file: &str) -> String {
        let file = serde_json::to_string(file).unwrap();
        format!(
            r#"{{"format":"tracecost.trace/v1","name":"b","model":"claude-sonnet-4-5","messages":[
            {{"role":"user","content":"tidy"}},
            {{"role":"assistant","content":[{{"type":"tool_use","id":"a","name":"Read","input":{{"file_path":"a.rs"}}}}]}},
            {{"role":"user","content":[{{"type":"tool_result","tool_use_id":"a","content":{file}}}]}},
            {{"role":"assistant","content":[{{"type":"tool_use","id":"c","name":"Edit","input":{{"file_path":"a.rs","old_string":"    let mut guard = self.jobs.lock().await;\n    if queue.is_empty() {{ return Ok(None); }}","new_string":"    let guard = self.jobs.lock().await;"}}}}]}},
            {{"role":"user","content":[{{"type":"tool_result","tool_use_id":"c","content":"ok"}}]}}
            ],"calls":[{{"messages":1}},{{"messages":3}},{{"messages":5}}]}}"#
        )
    }

    #[test]
    fn a_block_is_copied_only_where_the_result_holds_its_lines_together() {
        let together = "fn f() {\n    let mut guard = self.jobs.lock().await;\n    if queue.is_empty() { return Ok(None); }\n}";
        let apart = "fn f() {\n    let mut guard = self.jobs.lock().await;\n    drop(guard);\n    let started = Instant::now() + delay;\n    if queue.is_empty() { return Ok(None); }\n}";
        let score = |file: &str| {
            let t = trace(&block_session(file));
            let idx = RiskIndex::new(&t, &|m, _| 10 * m as u64);
            idx.score(&[call(1, &[]), call(2, &["a"])], None)
                .evidence
                .copied_lines
        };
        assert_eq!(score(together), 1);
        // Two boilerplate lines of the block, each somewhere in the file but
        // not one after the other: a coincidence, not a copy.
        assert_eq!(score(apart), 0);
    }

    fn trace(json: &str) -> Trace {
        load_str(json, "r.json").unwrap().traces.remove(0)
    }

    impl RiskIndex {
        /// The same index with every shared holder prefix copied into a
        /// list of its turn's own: what each re-fetch held before the
        /// lists were shared.
        fn unshared(mut self) -> Self {
            for t in &mut self.turns {
                for s in &mut t.signals {
                    if let HolderSet::Prefix { shared, len } = s.holders {
                        let list = &self.shared[shared as usize].results;
                        s.holders = HolderSet::Own(list[..len as usize].to_vec());
                    }
                }
            }
            self
        }

        /// Results held by the index's signals and shared lists.
        fn held(&self) -> usize {
            let own: usize = (self.turns.iter())
                .flat_map(|t| &t.signals)
                .map(|s| match &s.holders {
                    HolderSet::Own(list) => list.len(),
                    HolderSet::Prefix { .. } => 0,
                })
                .sum();
            own + (self.shared.iter())
                .map(|l| l.results.len() + l.smallest.len())
                .sum::<usize>()
        }
    }

    /// A tool loop of `keys.len()` calls; call `i` fetches by key
    /// `keys[i]` (the same key again is a re-fetch of every result it
    /// fetched before).
    fn fetch_loop(keys: &[u8]) -> Trace {
        let mut messages = vec![r#"{"role":"user","content":"go"}"#.to_owned()];
        let mut calls = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            calls.push(format!(r#"{{"messages":{}}}"#, messages.len()));
            messages.push(format!(
                r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"t{i}","name":"fetch","input":{{"u":"{k}"}}}}]}}"#
            ));
            messages.push(format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"r{i}"}}]}}"#
            ));
        }
        trace(&format!(
            r#"{{"format":"tracecost.trace/v1","name":"f","model":"claude-sonnet-4-5","messages":[{}],"calls":[{}]}}"#,
            messages.join(","),
            calls.join(",")
        ))
    }

    #[test]
    fn fetching_by_one_key_at_every_call_holds_one_list() {
        let n = 2_000;
        let t = fetch_loop(&vec![0; n]);
        let idx = RiskIndex::new(&t, &|m, _| m as u64);
        // Every call after the first re-fetches every result before it:
        // n²/2 results held as a list per turn, 2n as one shared list.
        assert!(idx.turn_count() >= n - 1);
        assert!(idx.held() <= 2 * n, "{} results held", idx.held());
        assert!(idx.unshared().held() >= n * (n - 1) / 2);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Scoring shared prefixes gives the figures of scoring each
        /// turn's holders as a list of its own, whatever each call
        /// compacted (lists that extend the one before, or start over).
        #[test]
        fn shared_prefixes_score_as_lists(
            keys in proptest::collection::vec(0u8..3, 1..40),
            steps in proptest::collection::vec((0u8..4, 0usize..40), 40),
            tokens in proptest::collection::vec(0u64..4, 40),
        ) {
            let t = fetch_loop(&keys);
            let tokens_of = |m: usize, _: usize| tokens[m / 2 % tokens.len()];
            let mut calls = Vec::new();
            let mut compacted: Vec<String> = Vec::new();
            for (i, &(op, n)) in steps.iter().take(keys.len()).enumerate() {
                match op {
                    // Start over with the results from the n-th on.
                    0 => compacted = (n.min(i)..i).map(|r| format!("t{r}")).collect(),
                    // Extend with the next result before this call.
                    1 | 2 if compacted.len() < i => {
                        let next = (0..i).find(|r| !compacted.contains(&format!("t{r}")));
                        compacted.extend(next.map(|r| format!("t{r}")));
                    }
                    _ => {}
                }
                let ids: Vec<&str> = compacted.iter().map(String::as_str).collect();
                calls.push(call(i + 1, &ids));
            }
            let shared = RiskIndex::new(&t, &tokens_of).score(&calls, None);
            let own = RiskIndex::new(&t, &tokens_of).unshared().score(&calls, None);
            proptest::prop_assert_eq!(format!("{shared:?}"), format!("{own:?}"));
        }
    }

    /// A read of a.rs, a grep, then an edit that copies a line of a.rs and
    /// names an id only the grep showed, then the same read again.
    const SESSION: &str = r#"{"format":"tracecost.trace/v1","name":"r","model":"claude-sonnet-4-5","messages":[
        {"role":"user","content":"fix the total in a.rs"},
        {"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Read","input":{"file_path":"a.rs"}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"     1\tfn main() {\n     2\t    let total = price * quantity + shipping;\n     3\t}"}]},
        {"role":"assistant","content":[{"type":"tool_use","id":"b","name":"Grep","input":{"pattern":"ORDER","path":"."}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"b","content":"b.rs:4: const ORDER_LIMIT_2024: u32 = 7;"}]},
        {"role":"assistant","content":[{"type":"thinking","thinking":"the strategy should still work","signature":"s"},{"type":"tool_use","id":"c","name":"Edit","input":{"file_path":"a.rs","old_string":"    let total = price * quantity + shipping;","new_string":"    let total = (price * quantity).min(ORDER_LIMIT_2024) + shipping;"}}]},
        {"role":"user","content":[{"type":"tool_result","tool_use_id":"c","content":"ok"}]},
        {"role":"assistant","content":[{"type":"text","text":"The strategy should still work; checking."},{"type":"tool_use","id":"d","name":"Read","input":{"file_path":"a.rs"}}]}
        ],"calls":[{"messages":1},{"messages":3},{"messages":5},{"messages":7}]}"#;

    fn close(a: Range, b: Range) -> bool {
        [(a.low, b.low), (a.mid, b.mid), (a.high, b.high)]
            .iter()
            .all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn evidence_is_counted_once_per_compacted_result_by_kind() {
        let t = trace(SESSION);
        let idx = RiskIndex::new(&t, &|m, _| 10 * m as u64);
        // Nothing compacted: no need, whatever was written.
        let none = idx.score(
            &[call(1, &[]), call(2, &[]), call(3, &[]), call(4, &[])],
            None,
        );
        assert_eq!(none, RecallRisk::default());
        // Read a.rs (message 2, 20 tokens) and the grep (message 4, 40
        // tokens) compacted from call 3 on: the edit copied a line of the
        // one and named an identifier only the other held; call 4 fetched
        // a.rs again (counted, never charged). "the strategy" is prose and
        // was in the model's own thinking: no evidence.
        let both = idx.score(
            &[
                call(1, &[]),
                call(2, &[]),
                call(3, &["a", "b"]),
                call(4, &["a", "b"]),
            ],
            None,
        );
        assert_eq!(
            both.evidence,
            Evidence {
                refetch: 1,
                copied_lines: 1,
                identifiers: 1
            }
        );
        // Less what two small results show by coincidence.
        let chance = COINCIDENCE[0];
        let (c, i) = (2.0 * chance.copied_lines, 2.0 * chance.identifiers);
        let expected = Range {
            low: 1.0 - c,
            mid: 1.0 - c + 1.0 - i,
            high: 2.0,
        };
        assert!(close(both.needs, expected), "{:?}", both.needs);
        let tokens = Range {
            low: 20.0 - 60.0 * chance.copied_lines,
            mid: 20.0 - 60.0 * chance.copied_lines + 40.0 - 60.0 * chance.identifiers,
            high: 60.0,
        };
        assert!(
            close(both.recall_tokens, tokens),
            "{:?}",
            both.recall_tokens
        );
        // Only the read compacted: the identifier is visible in the grep.
        let read = idx.score(
            &[call(1, &[]), call(2, &[]), call(3, &["a"]), call(4, &["a"])],
            None,
        );
        assert_eq!(read.evidence.identifiers, 0);
        assert_eq!(read.needs.high, 1.0);
        assert!((read.needs.low - (1.0 - chance.copied_lines)).abs() < 1e-9);
    }

    #[test]
    fn coincidence_grows_with_the_size_of_a_result() {
        assert_eq!(coincidence(0), COINCIDENCE[0]);
        assert_eq!(coincidence(7_999), COINCIDENCE[0]);
        assert_eq!(coincidence(8_000), COINCIDENCE[1]);
        assert_eq!(coincidence(u64::MAX), COINCIDENCE[2]);
        for w in COINCIDENCE.windows(2) {
            assert!(w[0].copied_lines <= w[1].copied_lines && w[0].below_chars < w[1].below_chars);
        }
    }

    #[test]
    fn a_result_the_model_never_saw_shows_no_evidence() {
        // The same session with the read's result swapped for text of the
        // same size from elsewhere: the edit's line is in no result, so no
        // need is found (only the re-fetch, which is the record's own call).
        let placebo = SESSION.replace(
            r#"    2\t    let total = price * quantity + shipping;"#,
            r#"    2\t    print('unrelated text of one line ok')"#,
        );
        let t = trace(&placebo);
        let idx = RiskIndex::new(&t, &|m, _| 10 * m as u64);
        let r = idx.score(
            &[call(1, &[]), call(2, &[]), call(3, &["a"]), call(4, &["a"])],
            None,
        );
        assert_eq!(r.evidence.copied_lines + r.evidence.identifiers, 0);
        assert_eq!(r.needs.high, 0.0);
        // What is left is the chance allowance alone, below zero: summed
        // with other traces it offsets their chance matches.
        assert!(r.needs.low < 0.0 && r.needs.mid < 0.0);
        assert_eq!(r.evidence.refetch, 1);
    }
}

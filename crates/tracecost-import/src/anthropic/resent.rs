//! The fast path for resent messages. Agents resend the whole
//! conversation with every request, so most of a log's bytes are messages
//! an earlier line already carried: a line's `messages` array is found
//! without reading the line whole, each message that is byte for byte one
//! of a recent line's is matched instead of parsed, and only the rest of
//! the line is read. Kept apart from the pipeline ([`super::pipeline`]) and
//! from request parsing ([`super::request`]) because all of it is an
//! optimization that must give what [`super::exchange`] gives, and its
//! tests say so.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::ops::Range;
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::exchange::{Exchange, Replied, exchange_of, is_messages_endpoint, reply_of};
use super::request::{Head, ParsedMessage, RequestRest, assemble, parse_head, parse_message};
use crate::common::{self, LineBatch, Unmapped, compact_json};
use tracecost_engine::json::{RawObject, raw_json};

/// An exchange of the common shapes (a plain request body, or a
/// claude-trace wrapper whose body is an object) with everything but its
/// messages read: the messages are left as their bytes in the batch.
pub(super) struct SplitLine {
    /// Where the line is in its batch (read again whole should a message
    /// not parse).
    pub(super) text: Range<usize>,
    /// Where the messages are, for error messages.
    base: &'static str,
    /// Where each message's JSON text is in the batch, and the message
    /// it is byte for byte, when known when the line was split.
    messages: Elements,
    head: Head,
    /// What the tools and system could not map.
    head_unmapped: Unmapped,
    rest: RequestRest,
    start_ms: Option<u64>,
    /// What the response gave.
    replied: Replied,
    /// What the response could not map.
    reply_unmapped: Unmapped,
}

impl SplitLine {
    /// `None` when the line is anything but a valid exchange of a common
    /// shape with a non-empty `messages` array, valid tools and system:
    /// [`exchange`](super::exchange) then reads it and says what it is. `at` is where
    /// `text` starts in its batch.
    pub(super) fn of(text: &str, at: usize, known: &KnownMessages) -> Option<Self> {
        if let Some(found) = resent_messages(text, known)
            && let Some(split) = Self::split(text, at, Some(found))
        {
            return Some(split);
        }
        Self::split(text, at, None)
    }

    /// [`SplitLine::of`], given what [`resent_messages`] found, if
    /// anything: then the line with its messages array emptied is read,
    /// else the line itself.
    fn split(text: &str, at: usize, found: Option<(String, usize, Elements)>) -> Option<Self> {
        let (src, found) = match found {
            Some((emptied, array_at, elements)) => {
                (Cow::Owned(emptied), Some((array_at, elements)))
            }
            None => (Cow::Borrowed(text), None),
        };
        let line: LineParts<'_> = serde_json::from_str(&src).ok()?;
        let req = line.request?;
        // As `unwrap_request` tells a body from a recorder's wrapper.
        let plain = req.messages.is_some() || req.body.is_none();
        let (body, base, req_ms) = if plain {
            (&req, "/request", None)
        } else {
            let url = req
                .member("url")
                .map(|r| serde_json::from_str::<String>(r.get()));
            if let Some(Ok(url)) = url
                && !is_messages_endpoint(&url)
            {
                return None;
            }
            let ms = req.member("timestamp").and_then(common::timestamp_ms);
            (req.body.as_deref()?, "/request/body", ms)
        };
        let array = body.messages?;
        let offset = |raw: &RawValue| raw.get().as_ptr() as usize - src.as_ptr() as usize;
        let messages: Elements = match found {
            // The emptied array must be this request's messages, or the
            // walk was of some other array.
            Some((array_at, elements)) => {
                if offset(array) != array_at || array.get() != "[]" {
                    return None;
                }
                elements
                    .into_iter()
                    .map(|(r, hit)| (at + r.start..at + r.end, hit))
                    .collect()
            }
            None => serde_json::from_str::<Vec<&RawValue>>(array.get())
                .ok()?
                .into_iter()
                .map(|r| {
                    let start = at + offset(r);
                    (start..start + r.get().len(), None)
                })
                .collect(),
        };
        if messages.is_empty() {
            return None;
        }
        // Members are read as `exchange` reads them: compacted.
        let compacted = |key: &str| body.member(key).map(|r| compact_json(r.get()));
        let mut head_unmapped = Unmapped::default();
        let head = parse_head(
            compacted("tools").as_deref(),
            compacted("system").as_deref(),
            base,
            &mut head_unmapped,
        )
        .ok()?;
        let rest = RequestRest {
            cache_control: compacted("cache_control").map(|c| raw_json(c.into_owned())),
            context_management: body.member("context_management").is_some(),
            model: body
                .member("model")
                .and_then(|r| serde_json::from_str::<String>(r.get()).ok()),
        };
        let start_ms = req_ms.or_else(|| line.timestamp.and_then(common::timestamp_ms));
        let mut reply_unmapped = Unmapped::default();
        let replied = match line.response {
            None => reply_of(None, &mut reply_unmapped),
            Some(raw) => match compact_json(raw.get()) {
                Cow::Borrowed(_) => reply_of(Some(raw), &mut reply_unmapped),
                Cow::Owned(c) => {
                    let c = RawValue::from_string(c).ok()?;
                    reply_of(Some(&c), &mut reply_unmapped)
                }
            },
        };
        Some(Self {
            text: at..at + text.len(),
            base,
            messages,
            head,
            head_unmapped,
            rest,
            start_ms,
            replied,
            reply_unmapped,
        })
    }

    /// The exchange, given the parsed messages; what could not be mapped
    /// is counted in the order [`exchange`](super::exchange) counts it.
    pub(super) fn exchange(
        self: Box<Self>,
        messages: Vec<Arc<ParsedMessage>>,
        un: &mut Unmapped,
    ) -> Exchange {
        let s = *self;
        un.merge(&s.head_unmapped);
        for m in &messages {
            un.merge(&m.unmapped);
        }
        let parsed = assemble(s.head, messages, &s.rest, un);
        un.merge(&s.reply_unmapped);
        exchange_of(parsed, s.start_ms, s.replied)
    }
}

/// Finds a request's `messages` array in `text` without reading it all:
/// each element that is byte for byte a message `known` from earlier
/// lines is matched with one comparison, and only the others are read.
/// Returns the line with the array emptied (`[]`, at the offset given),
/// which the caller then reads as a whole and must find that `[]` to be
/// the request's messages; and each element's place in `text`, with the
/// known message it is. A line resends its conversation, so this reads
/// only what is new in it instead of every byte.
///
/// `"messages"` cannot occur inside a JSON string (a quote there is
/// escaped), so each occurrence is a key or a string value; the first few
/// followed by `:` and `[` are tried.
fn resent_messages(text: &str, known: &KnownMessages) -> Option<(String, usize, Elements)> {
    const TRIES: usize = 4;
    let bytes = text.as_bytes();
    for key in memchr::memmem::find_iter(bytes, b"\"messages\"").take(TRIES) {
        let colon = skip_ws(bytes, key + "\"messages\"".len());
        if bytes.get(colon) != Some(&b':') {
            continue;
        }
        let array_at = skip_ws(bytes, colon + 1);
        if bytes.get(array_at) != Some(&b'[') {
            continue;
        }
        let Some((end, elements)) = walk_array(text, array_at, known) else {
            continue;
        };
        let mut emptied = String::with_capacity(array_at + 2 + (text.len() - end));
        emptied.push_str(text.get(..array_at)?);
        emptied.push_str("[]");
        emptied.push_str(text.get(end..)?);
        return Some((emptied, array_at, elements));
    }
    None
}

/// The elements of the JSON array at `at` in `text` (which starts with
/// `[`), and where the array ends; `None` if it is not a valid array. An
/// element `known` is matched by its bytes (it was read whole when first
/// seen), any other is read by serde_json.
fn walk_array(text: &str, at: usize, known: &KnownMessages) -> Option<(usize, Elements)> {
    let bytes = text.as_bytes();
    let mut p = skip_ws(bytes, at + 1);
    let mut out = Vec::new();
    if bytes.get(p) == Some(&b']') {
        return Some((p + 1, out));
    }
    loop {
        let rest = text.get(p..)?;
        let (end, hit) = match known.find(rest.as_bytes()) {
            Some(k) => (p + k.bytes.len(), Some(k)),
            None => {
                let mut de = serde_json::Deserializer::from_str(rest);
                let raw = <&RawValue>::deserialize(&mut de).ok()?;
                // No whitespace is skipped before it: `p` is past it.
                if raw.get().as_ptr() != rest.as_ptr() {
                    return None;
                }
                (p + raw.get().len(), None)
            }
        };
        out.push((p..end, hit));
        p = skip_ws(bytes, end);
        match bytes.get(p) {
            Some(b',') => p = skip_ws(bytes, p + 1),
            Some(b']') => return Some((p + 1, out)),
            _ => return None,
        }
    }
}

/// Where each message of a request is, and the message it is byte for
/// byte, when known when the line was split.
type Elements = Vec<(Range<usize>, Option<Arc<CachedMessage>>)>;

/// The first byte at or after `i` that is not JSON whitespace.
fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// Messages known when a batch is split (the cache as the batch before
/// the last one left it), by a hash of their first [`KNOWN_HEAD`] bytes.
#[derive(Default)]
pub(super) struct KnownMessages {
    by_head: HashMap<u64, Vec<Arc<CachedMessage>>>,
}

/// Bytes of a message's start a lookup hashes; shorter messages are not
/// looked up (reading them costs little).
const KNOWN_HEAD: usize = 128;

fn head_hash(head: &[u8]) -> u64 {
    let mut h = DefaultHasher::new();
    head.hash(&mut h);
    h.finish()
}

impl KnownMessages {
    /// A known message that `rest` starts with.
    fn find(&self, rest: &[u8]) -> Option<Arc<CachedMessage>> {
        let head = rest.get(..KNOWN_HEAD)?;
        self.by_head
            .get(&head_hash(head))?
            .iter()
            .find(|m| rest.starts_with(&m.bytes))
            .cloned()
    }
}

/// The members of a log line the importer reads, borrowed from the line:
/// one pass checks the whole line and finds them. A key twice (at the top
/// or in the request) fails it, as [`RawObject`] does.
#[derive(Default)]
struct LineParts<'a> {
    timestamp: Option<&'a RawValue>,
    request: Option<RequestParts<'a>>,
    response: Option<&'a RawValue>,
}

/// A request object: its messages array, a recorder's `body` object split
/// the same way, every other member, all raw.
#[derive(Default)]
struct RequestParts<'a> {
    members: Vec<(Cow<'a, str>, &'a RawValue)>,
    messages: Option<&'a RawValue>,
    body: Option<Box<RequestParts<'a>>>,
}

impl<'a> RequestParts<'a> {
    fn member(&self, key: &str) -> Option<&'a RawValue> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

/// Objects with more members than this are left to [`exchange`](super::exchange) (the
/// check for repeated keys here is a scan).
const MAX_SPLIT_MEMBERS: usize = 64;

/// A map key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v)))
            }
        }
        d.deserialize_str(V)
    }
}

/// Reads an object's keys, failing on one seen before or on too many.
fn next_key<'de, A: MapAccess<'de>>(
    map: &mut A,
    seen: &mut Vec<Cow<'de, str>>,
) -> Result<Option<Cow<'de, str>>, A::Error> {
    let Some(Key(k)) = map.next_key()? else {
        return Ok(None);
    };
    if seen.len() >= MAX_SPLIT_MEMBERS || seen.contains(&k) {
        return Err(serde::de::Error::custom("left to the whole-line reader"));
    }
    seen.push(k.clone());
    Ok(Some(k))
}

impl<'de> Deserialize<'de> for LineParts<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LineParts<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an exchange object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = LineParts::default();
                let mut seen = Vec::new();
                while let Some(k) = next_key(&mut map, &mut seen)? {
                    match &*k {
                        "request" => out.request = Some(map.next_value()?),
                        "response" => out.response = Some(map.next_value()?),
                        "timestamp" => out.timestamp = Some(map.next_value()?),
                        _ => {
                            map.next_value::<&RawValue>()?;
                        }
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

impl<'de> Deserialize<'de> for RequestParts<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RequestParts<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a request object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = RequestParts::default();
                let mut seen = Vec::new();
                while let Some(k) = next_key(&mut map, &mut seen)? {
                    match &*k {
                        "messages" => out.messages = Some(map.next_value()?),
                        "body" => out.body = Some(map.next_value()?),
                        _ => {
                            let v = map.next_value()?;
                            out.members.push((k, v));
                        }
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

/// Messages parsed from recent lines, by their bytes: a request that
/// resends the conversation finds all but its newest messages here.
#[derive(Default)]
pub(super) struct MessageCache {
    /// By [`sample_hash`]: each message, and the line that last used it.
    entries: HashMap<u64, Vec<(Arc<CachedMessage>, usize)>>,
    /// Lines seen.
    line: usize,
}

/// A message as read from a log line: its bytes there, and its parse.
struct CachedMessage {
    bytes: Box<[u8]>,
    parsed: Arc<ParsedMessage>,
}

/// Messages not used for this many lines are dropped from the cache.
const CACHE_LINES: usize = 64;

impl MessageCache {
    /// The parsed messages of `split` (a line of `batch`), parsing those
    /// not seen before; `None` when one does not parse.
    pub(super) fn resolve(
        &mut self,
        batch: &LineBatch,
        split: &SplitLine,
    ) -> Option<Vec<Arc<ParsedMessage>>> {
        let line = self.line;
        let mut out = Vec::with_capacity(split.messages.len());
        for (mi, (range, hit)) in split.messages.iter().enumerate() {
            // Matched when split: only its use is recorded (it is put
            // back if it was dropped since).
            if let Some(known) = hit {
                let bucket = self.entries.entry(sample_hash(&known.bytes)).or_default();
                match bucket.iter_mut().find(|e| Arc::ptr_eq(&e.0, known)) {
                    Some(e) => e.1 = line,
                    None => bucket.push((known.clone(), line)),
                }
                out.push(known.parsed.clone());
                continue;
            }
            let raw = batch.bytes().get(range.clone())?;
            let bucket = self.entries.entry(sample_hash(raw)).or_default();
            if let Some(e) = bucket.iter_mut().find(|e| &*e.0.bytes == raw) {
                e.1 = line;
                out.push(e.0.parsed.clone());
                continue;
            }
            let text = batch.text(range.clone())?;
            let fields = RawObject::from_json(&compact_json(text)).ok()?;
            let parsed = Arc::new(parse_message(fields, mi, split.base).ok()?);
            let cached = CachedMessage {
                bytes: raw.into(),
                parsed: parsed.clone(),
            };
            bucket.push((Arc::new(cached), line));
            out.push(parsed);
        }
        Some(out)
    }

    /// The messages long enough to be looked up when splitting lines.
    pub(super) fn known(&self) -> KnownMessages {
        let mut by_head: HashMap<u64, Vec<Arc<CachedMessage>>> = HashMap::new();
        for (m, _) in self.entries.values().flatten() {
            if let Some(head) = m.bytes.get(..KNOWN_HEAD) {
                by_head.entry(head_hash(head)).or_default().push(m.clone());
            }
        }
        KnownMessages { by_head }
    }

    /// Moves to the next line, now and then dropping what recent lines
    /// did not use.
    pub(super) fn next_line(&mut self) {
        self.line += 1;
        if self.line.is_multiple_of(CACHE_LINES) {
            let keep_from = self.line - CACHE_LINES;
            self.entries.retain(|_, bucket| {
                bucket.retain(|e| e.1 >= keep_from);
                !bucket.is_empty()
            });
        }
    }
}

/// A hash of a message's length, start and end: cheap, and enough to tell
/// messages apart before their bytes are compared.
fn sample_hash(b: &[u8]) -> u64 {
    const EDGE: usize = 64;
    let mut h = DefaultHasher::new();
    b.len().hash(&mut h);
    b[..b.len().min(EDGE)].hash(&mut h);
    b[b.len().saturating_sub(EDGE)..].hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Messages known by their bytes, as a cache would hold them.
    fn known_of(messages: &[&str]) -> KnownMessages {
        let mut cache = MessageCache::default();
        for (i, m) in messages.iter().enumerate() {
            let Ok(parsed) = parse_message(RawObject::from_json(m).unwrap(), i, "/request") else {
                panic!("message {i} does not parse");
            };
            let cached = CachedMessage {
                bytes: m.as_bytes().into(),
                parsed: Arc::new(parsed),
            };
            cache
                .entries
                .entry(sample_hash(m.as_bytes()))
                .or_default()
                .push((Arc::new(cached), 0));
        }
        cache.known()
    }

    #[test]
    fn resent_messages_are_matched_by_their_bytes_and_the_rest_read() {
        let long = |role: &str, text: &str| {
            format!(r#"{{"role":"{role}","content":"{}"}}"#, text.repeat(100))
        };
        let (m0, m1, m2) = (
            long("user", "ab"),
            long("assistant", "cd"),
            long("user", "ef"),
        );
        let known = known_of(&[&m0, &m1]);
        // A tool whose schema has a "messages" property comes first: that
        // key is tried, found not to hold an array, and passed over.
        let line = format!(
            r#"{{"request":{{"tools":[{{"name":"t","input_schema":{{"messages":{{"type":"array"}}}}}}],"messages":[{m0}, {m1} ,{m2},{{"role":"user","content":"short"}}],"model":"m"}},"response":null}}"#
        );
        let (emptied, at, elements) = resent_messages(&line, &known).unwrap();
        assert_eq!(&emptied[at..at + 2], "[]");
        assert!(emptied.ends_with(r#"[],"model":"m"},"response":null}"#));
        let texts: Vec<&str> = elements.iter().map(|(r, _)| &line[r.clone()]).collect();
        assert_eq!(
            texts,
            [
                m0.as_str(),
                &m1,
                &m2,
                r#"{"role":"user","content":"short"}"#
            ]
        );
        let hits: Vec<bool> = elements.iter().map(|(_, h)| h.is_some()).collect();
        assert_eq!(hits, [true, true, false, false]);
        // The split takes them, and the same line split without any known
        // message gives the same messages.
        let split = SplitLine::of(&line, 0, &known).unwrap();
        let cold = SplitLine::of(&line, 0, &KnownMessages::default()).unwrap();
        let ranges = |s: &SplitLine| {
            s.messages
                .iter()
                .map(|(r, _)| r.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ranges(&split), ranges(&cold));
        // Not an array, or not a valid one: nothing is split this way.
        for bad in [
            format!(r#"{{"request":{{"messages":[{m0} {m1}]}}}}"#),
            format!(r#"{{"request":{{"messages":[{m0},]}}}}"#),
            format!(r#"{{"request":{{"messages":[{m0}"#),
        ] {
            assert!(resent_messages(&bad, &known).is_none(), "{bad}");
        }
        // An array found but not the request's messages: the whole line
        // is read instead, and gives the request's own.
        let decoy = format!(r#"{{"meta":{{"messages":[{m0}]}},"request":{{"messages":[{m2}]}}}}"#);
        let split = SplitLine::of(&decoy, 0, &known).unwrap();
        assert_eq!(ranges(&split).len(), 1);
        assert_eq!(&decoy[split.messages[0].0.clone()], m2);
    }
}

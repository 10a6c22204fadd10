//! Traces built call by call from a log's requests: which conversation a
//! request extends (its messages, compared by [`message_key`], start with
//! that conversation's latest request), the history and prompts it adds,
//! and the finished trace with its tool calls and results paired. This is
//! the part of a log import that does not depend on the format.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use super::Unmapped;
use super::blocks::with_blocks;
use crate::ImportOptions;
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::json::raw_string;
use tracecost_engine::message::{BlockKind, Content, ContentBlock, Message};
use tracecost_trace::{Call, Prompt, RecordedUsage, Trace};

/// A key equal for two messages that are equal once markers are removed
/// (a string content hashes as one text block holding it).
pub(crate) fn message_key(m: &Message) -> u64 {
    let mut h = DefaultHasher::new();
    m.role().as_str().hash(&mut h);
    match m.content() {
        Content::Text(_) => {
            let mut block = String::from("{\"type\":\"text\",\"text\":");
            match m.fields().value("content") {
                Some(v) => v.write_json(&mut block),
                None => block.push_str("\"\""),
            }
            block.push('}');
            block.hash(&mut h);
        }
        Content::Blocks(bs) => {
            for b in bs {
                b.to_json().hash(&mut h);
            }
        }
    }
    h.finish()
}

/// What a model reply carried, for callers that find replies inside the
/// history (LangChain).
#[derive(Debug, Clone, Default)]
pub(crate) struct ReplyMeta {
    /// Its usage.
    pub usage: Option<RecordedUsage>,
    /// Its model.
    pub model: Option<String>,
    /// Whether its usage was malformed (dropped and counted): no other
    /// copy of the usage is read in its place.
    pub malformed: bool,
}

/// One trace being built.
pub(crate) struct TraceBuilder {
    /// The provider.
    pub provider: ProviderKind,
    /// Prompt versions.
    pub prompts: Vec<Prompt>,
    /// The history.
    pub messages: Vec<Message>,
    /// Reply metadata per history message (may be shorter).
    pub meta: Vec<Option<ReplyMeta>>,
    /// Keys of the latest request's messages.
    pub keys: Vec<u64>,
    /// The calls.
    pub calls: Vec<Call>,
    /// The last call's reply, appended to the history at the end.
    pub reply: Option<Message>,
    /// The line the trace starts at.
    pub first_line: usize,
    /// The session (conversation, thread) the source groups it in, when it
    /// names one: requests of different sessions never extend each other.
    pub session: Option<String>,
    /// The project the source files it under, when it names one.
    pub project: Option<String>,
    seq: usize,
}

impl TraceBuilder {
    /// An empty trace starting at `first_line`.
    pub(crate) fn new(provider: ProviderKind, first_line: usize) -> Self {
        Self {
            provider,
            prompts: Vec::new(),
            messages: Vec::new(),
            meta: Vec::new(),
            keys: Vec::new(),
            calls: Vec::new(),
            reply: None,
            first_line,
            session: None,
            project: None,
            seq: 0,
        }
    }

    /// The index of `p`, pushed when it differs from the latest prompt.
    pub(crate) fn prompt_index(&mut self, p: Prompt) -> usize {
        if self.prompts.last() != Some(&p) {
            self.prompts.push(p);
        }
        self.prompts.len() - 1
    }

    /// Extends the history to `req.messages` (whose start equals it) and
    /// adds `call` with the request's prompt.
    pub(crate) fn add_call(&mut self, req: NewCall, mut call: Call, reply: Option<Message>) {
        let have = self.messages.len();
        self.meta.resize(have, None);
        let mut meta = req.meta.into_iter().skip(have);
        for m in req.messages.into_iter().skip(have) {
            self.messages.push(m);
            self.meta.push(meta.next().flatten());
        }
        self.keys = req.keys;
        call.prompt = self.prompt_index(req.prompt);
        self.calls.push(call);
        self.reply = reply;
    }

    /// [`TraceBuilder::add_call`] for messages shared with a cache: only
    /// those past the history are copied.
    pub(crate) fn add_shared_call(&mut self, req: SharedCall) {
        let SharedCall {
            messages,
            keys,
            prompt,
            before,
            mut call,
            reply,
        } = req;
        let have = self.messages.len();
        self.meta.resize(have, None);
        for m in messages.into_iter().skip(have) {
            self.messages.push(Arc::unwrap_or_clone(m));
            self.meta.push(None);
        }
        self.keys = keys;
        let prompt = self.prompt_index(prompt);
        for mut c in before {
            c.prompt = prompt;
            self.calls.push(c);
        }
        call.prompt = prompt;
        self.calls.push(call);
        self.reply = reply;
    }

    /// The finished trace: default model set, the last reply appended,
    /// tool_use / tool_result pairing repaired.
    pub(crate) fn finish(
        mut self,
        name: String,
        description: String,
        opts: &ImportOptions,
        un: &mut Unmapped,
    ) -> Trace {
        let model = self
            .calls
            .iter()
            .find_map(|c| c.model.clone())
            .or_else(|| opts.default_model.clone())
            .unwrap_or_else(|| {
                un.add(
                    "traces with no model recorded (model set to \"unknown\")",
                    1,
                );
                "unknown".to_owned()
            });
        for c in &mut self.calls {
            if c.model.as_deref() == Some(model.as_str()) {
                c.model = None;
            }
        }
        if let Some(r) = self.reply.take() {
            self.messages.push(r);
        }
        repair_tool_pairs(&mut self.messages, un);
        if self.prompts.is_empty() {
            self.prompts.push(Prompt::default());
        }
        Trace {
            name,
            description,
            provider: self.provider,
            model,
            status_quo: None,
            project: self.project,
            account: None,
            session: self.session,
            hidden_prefix_tokens: 0,
            source: None,
            prompts: self.prompts,
            messages: self.messages,
            calls: self.calls,
        }
    }
}

/// A request's messages, as a call adds them to a trace.
pub(crate) struct NewCall {
    /// The messages sent (markers removed).
    pub messages: Vec<Message>,
    /// Their keys ([`message_key`]).
    pub keys: Vec<u64>,
    /// Reply metadata per message (may be empty).
    pub meta: Vec<Option<ReplyMeta>>,
    /// The system prompt and tools.
    pub prompt: Prompt,
}

/// A call whose messages are shared with a cache of parsed messages.
pub(crate) struct SharedCall {
    /// The messages sent (markers removed).
    pub messages: Vec<Arc<Message>>,
    /// Their keys ([`message_key`]).
    pub keys: Vec<u64>,
    /// The system prompt and tools.
    pub prompt: Prompt,
    /// The requests the response made before its last, each a call of its
    /// own sending the same history (Anthropic's `usage.iterations`: a
    /// compaction's summary, an advisor's answer); usually none.
    pub before: Vec<Call>,
    /// The call (the response's last request).
    pub call: Call,
    /// Its reply, when it succeeded.
    pub reply: Option<Message>,
}

/// The traces of one file, and which request extends which.
#[derive(Default)]
pub(crate) struct Conversations {
    /// Traces in order of their first request.
    pub builders: Vec<TraceBuilder>,
    seq: usize,
    /// The traces by the number of their latest request's messages and a
    /// hash of their keys ([`keys_hash`]): a request finds the traces it
    /// may extend with one lookup per prefix of its own, instead of
    /// comparing itself with every trace.
    by_keys: HashMap<(usize, u64), Vec<usize>>,
}

/// The hash of a key list, built one key at a time so that the hashes of
/// all prefixes of a list come in one pass.
fn keys_hash_step(h: u64, key: u64) -> u64 {
    (h.rotate_left(23) ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn keys_hash(keys: &[u64]) -> u64 {
    keys.iter().fold(0, |h, &k| keys_hash_step(h, k))
}

impl Conversations {
    /// Adds a request: to the trace whose latest request's messages are
    /// the longest prefix of its own (ties: the most recently extended),
    /// or to a new trace.
    pub(crate) fn add(
        &mut self,
        provider: ProviderKind,
        line: usize,
        req: NewCall,
        call: Call,
        reply: Option<Message>,
    ) {
        let i = self.extended_by(provider, None, line, &req.keys);
        self.reindexed(i, |b| b.add_call(req, call, reply));
    }

    /// [`Conversations::add`] within a session the source names: the
    /// request extends only a trace of that session, and a new trace is
    /// filed under it.
    pub(crate) fn add_in_session(
        &mut self,
        provider: ProviderKind,
        session: Option<&str>,
        line: usize,
        req: NewCall,
        call: Call,
        reply: Option<Message>,
    ) {
        let i = self.extended_by(provider, session, line, &req.keys);
        self.reindexed(i, |b| b.add_call(req, call, reply));
    }

    /// [`Conversations::add`] for messages shared with a cache
    /// ([`TraceBuilder::add_shared_call`]).
    pub(crate) fn add_shared(&mut self, provider: ProviderKind, line: usize, req: SharedCall) {
        self.add_shared_in_session(provider, None, line, req);
    }

    /// [`Conversations::add_shared`] within a session the source names
    /// ([`Conversations::add_in_session`]).
    pub(crate) fn add_shared_in_session(
        &mut self,
        provider: ProviderKind,
        session: Option<&str>,
        line: usize,
        req: SharedCall,
    ) {
        let i = self.extended_by(provider, session, line, &req.keys);
        self.reindexed(i, |b| b.add_shared_call(req));
    }

    /// The index of the trace a request with message keys `keys` extends
    /// (a new one when none), marked as the most recently extended.
    fn extended_by(
        &mut self,
        provider: ProviderKind,
        session: Option<&str>,
        line: usize,
        keys: &[u64],
    ) -> usize {
        self.seq += 1;
        let mut best: Option<(usize, (usize, usize))> = None;
        let mut h = 0;
        for (n, &k) in keys.iter().enumerate() {
            h = keys_hash_step(h, k);
            let len = n + 1;
            for &i in self.by_keys.get(&(len, h)).into_iter().flatten() {
                let Some(b) = self.builders.get(i) else {
                    continue;
                };
                let rank = (b.keys.len(), b.seq);
                if b.keys.len() == len
                    && b.session.as_deref() == session
                    && keys.starts_with(&b.keys)
                    && best.is_none_or(|(_, r)| rank > r)
                {
                    best = Some((i, rank));
                }
            }
        }
        let i = match best {
            Some((i, _)) => i,
            None => {
                let mut b = TraceBuilder::new(provider, line);
                b.session = session.map(str::to_owned);
                self.builders.push(b);
                self.builders.len() - 1
            }
        };
        if let Some(b) = self.builders.get_mut(i) {
            b.seq = self.seq;
        }
        i
    }

    /// Runs `extend` on trace `i`, keeping the index of latest keys.
    fn reindexed(&mut self, i: usize, extend: impl FnOnce(&mut TraceBuilder)) {
        let Some(b) = self.builders.get_mut(i) else {
            return;
        };
        let before = (b.keys.len(), keys_hash(&b.keys));
        extend(b);
        let after = (b.keys.len(), keys_hash(&b.keys));
        if before == after {
            return;
        }
        if let Some(list) = self.by_keys.get_mut(&before) {
            list.retain(|&j| j != i);
            if list.is_empty() {
                self.by_keys.remove(&before);
            }
        }
        if after.0 > 0 {
            self.by_keys.entry(after).or_default().push(i);
        }
    }
}

/// Makes tool_use ids unique and every tool_result answer exactly one
/// earlier tool_use: a repeated tool_use id gets a `_N` suffix (later
/// results follow it); a result answering nothing (or answering twice)
/// becomes a text block.
pub(crate) fn repair_tool_pairs(messages: &mut [Message], un: &mut Unmapped) {
    let mut used: HashSet<Arc<str>> = HashSet::new();
    let mut current: HashMap<Arc<str>, Arc<str>> = HashMap::new();
    let mut answered: HashSet<Arc<str>> = HashSet::new();
    for m in messages.iter_mut() {
        let mut changed = false;
        let mut blocks = Vec::with_capacity(m.blocks().len());
        for b in m.blocks() {
            match b.kind() {
                BlockKind::ToolUse { id, .. } => {
                    if used.insert(id.clone()) {
                        current.insert(id.clone(), id.clone());
                        blocks.push(b.clone());
                        continue;
                    }
                    let mut n = 2usize;
                    let fresh: Arc<str> = loop {
                        let c: Arc<str> = format!("{id}_{n}").into();
                        if !used.contains(&c) {
                            break c;
                        }
                        n += 1;
                    };
                    used.insert(fresh.clone());
                    current.insert(id.clone(), fresh.clone());
                    un.add("repeated tool_use ids (renamed with a _N suffix)", 1);
                    let mut f = b.fields().into_owned();
                    f.set("id", raw_string(&fresh));
                    blocks.push(ContentBlock::from_object(f).unwrap_or_else(|_| b.clone()));
                    changed = true;
                }
                BlockKind::ToolResult { tool_use_id, .. } => match current.get(tool_use_id) {
                    Some(eff) if !answered.contains(eff) => {
                        answered.insert(eff.clone());
                        if eff == tool_use_id {
                            blocks.push(b.clone());
                        } else {
                            let mut f = b.fields().into_owned();
                            f.set("tool_use_id", raw_string(eff));
                            blocks.push(ContentBlock::from_object(f).unwrap_or_else(|_| b.clone()));
                            changed = true;
                        }
                    }
                    _ => {
                        un.add(
                            "tool results answering no earlier tool call (kept as text)",
                            1,
                        );
                        let text = b.tool_result_payload().unwrap_or("");
                        blocks.push(ContentBlock::text(text));
                        changed = true;
                    }
                },
                _ => blocks.push(b.clone()),
            }
        }
        if changed {
            *m = with_blocks(m, blocks);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The index of latest keys picks the trace the plain rule picks:
        /// the longest prefix among all traces, then the most recent.
        #[test]
        fn conversations_pick_what_a_scan_of_every_trace_picks(
            requests in proptest::collection::vec((0usize..8, proptest::collection::vec(0u64..3, 0..4)), 1..40),
        ) {
            let mut convs = Conversations::default();
            // The plain rule over (keys, last extended) of every trace.
            let mut plain: Vec<(Vec<u64>, usize)> = Vec::new();
            let mut sent: Vec<Vec<u64>> = Vec::new();
            for (seq, (base, more)) in requests.into_iter().enumerate() {
                // Most requests extend an earlier one.
                let mut keys = sent.get(base).cloned().unwrap_or_default();
                keys.extend(more);
                if keys.is_empty() {
                    keys.push(7);
                }
                sent.push(keys.clone());
                let want = plain
                    .iter()
                    .enumerate()
                    .filter(|(_, (k, _))| !k.is_empty() && keys.starts_with(k))
                    .max_by_key(|(_, (k, s))| (k.len(), *s))
                    .map_or(plain.len(), |(i, _)| i);
                if want == plain.len() {
                    plain.push((Vec::new(), 0));
                }
                plain[want] = (keys.clone(), seq);
                let got = convs.extended_by(ProviderKind::Anthropic, None, seq, &keys);
                convs.reindexed(got, |b| b.keys = keys);
                proptest::prop_assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn string_and_single_text_block_share_a_key() {
        let a = Message::from_json(r#"{"role":"user","content":"hi"}"#).unwrap();
        let b = Message::from_json(r#"{"role":"user","content":[{"type":"text","text":"hi"}]}"#)
            .unwrap();
        let c = Message::from_json(r#"{"role":"assistant","content":"hi"}"#).unwrap();
        assert_eq!(message_key(&a), message_key(&b));
        assert_ne!(message_key(&a), message_key(&c));
    }

    #[test]
    fn repair_renames_repeats_and_textifies_orphans() {
        let mut ms = vec![
            Message::from_json(r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]}"#).unwrap(),
            Message::from_json(r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"1"},{"type":"tool_result","tool_use_id":"zz","content":"orphan"}]}"#).unwrap(),
            Message::from_json(r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}}]}"#).unwrap(),
            Message::from_json(r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"2"}]}"#).unwrap(),
        ];
        let mut un = Unmapped::default();
        repair_tool_pairs(&mut ms, &mut un);
        assert_eq!(
            ms[1].to_json(),
            r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"1"},{"type":"text","text":"orphan"}]}"#
        );
        assert!(ms[2].to_json().contains(r#""id":"a_2""#));
        assert!(ms[3].to_json().contains(r#""tool_use_id":"a_2""#));
        assert_eq!(un.lines().len(), 2);
    }
}

//! The peers' clearing kept up to date call after call.
//!
//! Both peers decide afresh from the whole history at every request, and
//! [`CompactionRun::view`](super::CompactionRun::view) does exactly that.
//! Over a replayed conversation each call's history extends the one
//! before, and then what they decide changes only at its end:
//!
//! - `clear_tool_uses_20250919` clears the answered, not excluded uses
//!   before `cut = uses - keep`. Uses and answers only accumulate, so `cut`
//!   only grows and a use once eligible stays so; a use passed by the cut
//!   unanswered becomes eligible when its result arrives. The clearing
//!   applies when the input exceeds `trigger` and (with `clear_at_least`)
//!   the eligible results save enough; each result's saving is fixed, so
//!   that sum only grows too.
//! - `ClearToolUsesEdit` clears, oldest first, the tool messages before the
//!   last `keep`, skipping excluded tools; with `clear_at_least` it stops
//!   at the shortest prefix whose savings reach the minimum. The candidates
//!   only get appended to, and a prefix's savings depend only on the
//!   messages holding its results and uses, so once the minimum is reached
//!   the cleared set is fixed, and until then it continues from the
//!   previous running total. It applies when the count exceeds `trigger`.
//!
//! So the state below is extended by what each call appends, and the view
//! is patched where a clearing starts (or, when the gate closes again —
//! the prompt before the messages may shrink — stops). What these rules
//! do not cover falls back to the full decision for that call: a history
//! shorter than the last one starts the state over; an id used or answered
//! twice (earlier decisions and names would change), or a result counted
//! by LangChain before the use naming it arrived, keeps deciding from the
//! whole history until the state starts over.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;

use hashbrown::HashTable;

use super::Compaction;
use super::peers::{
    ANTHROPIC_CLEARED_PLACEHOLDER, LANGCHAIN_PLACEHOLDER, PeerParams, message_tokens,
    untouched_tokens,
};
use super::view::{BlockTokens, Replacements, clear_message};
use tracecost_engine::message::{BlockKind, ContentBlock, Message};
use tracecost_engine::rewrite::WireView;

/// No use or no result of a tool (in [`Tool`]).
const NONE: u32 = u32::MAX;

/// One tool_use id scanned: each id is held once, and the rest of the
/// state names it by its number (its place in `PeerState::tools`), so that
/// what grows with every use is a few `u32`s and one bit, not copies of
/// the id in several maps.
#[derive(Debug)]
struct Tool {
    id: Arc<str>,
    /// Its use's place in `PeerState::uses`, or `NONE`.
    use_no: u32,
    /// Its result's place in `PeerState::results`, or `NONE`.
    result_no: u32,
    /// Characters of the name its use gives the tool (0 without a use).
    name_chars: u32,
    /// Its use names an excluded tool (fixed for the run: one policy).
    excluded: bool,
}

/// A block of the history: its tool's number, its message and its place
/// in that message.
#[derive(Debug, Clone, Copy)]
struct Place {
    tool: u32,
    message: u32,
    block: u32,
}

/// What a peer has seen and decided over the messages scanned so far.
#[derive(Debug, Default)]
pub struct PeerState {
    /// Messages scanned (the last call's history length).
    scanned: usize,
    /// The rules above do not cover this history: decide from all of it.
    fallback: bool,
    /// Every tool_use id scanned, by number.
    tools: Vec<Tool>,
    /// Number of each id in `tools`, found by the id's hash: the table
    /// holds the numbers alone (4 bytes a tool, not a second pointer to
    /// each id and its length), the ids being in `tools`.
    numbers: HashTable<u32>,
    /// The hasher of `numbers`.
    hasher: RandomState,
    /// Tool uses in order.
    uses: Vec<Place>,
    /// Tool results in order.
    results: Vec<Place>,
    /// Tools whose results the peer clears once its gate is open, in the
    /// order decided.
    decided: Vec<u32>,
    /// The same, one bit per tool number.
    decided_bits: Vec<u64>,
    /// Anthropic: `uses[..considered]` were considered; LangChain:
    /// `results[..considered]`.
    considered: usize,
    /// Anthropic with a minimum: the tokens clearing `decided` saves.
    saved: u64,
    /// LangChain with a minimum: the minimum was reached, `decided` is final.
    reached: bool,
    /// LangChain: the count with `decided` cleared minus the count without
    /// (≤ 0 when clearing saves).
    delta: i128,
    /// LangChain: the count of every message scanned, nothing cleared.
    total: u64,
    /// LangChain with a minimum: counts of the messages `decided` touches,
    /// with `decided` cleared.
    counted: HashMap<usize, u64>,
    /// How many of `decided` the last call's view cleared (its gate was
    /// open when `open`).
    applied: usize,
    open: bool,
    /// (message, block) of each result the view clears, ascending; the
    /// view state's `compacted` lists their ids in the same order.
    cleared_at: Vec<(u32, u32)>,
}

/// Which peer, and its parameters.
#[derive(Clone, Copy)]
enum Peer<'p> {
    Anthropic(&'p PeerParams),
    Langchain(&'p PeerParams),
}

impl Peer<'_> {
    fn params(&self) -> &PeerParams {
        match self {
            Peer::Anthropic(p) | Peer::Langchain(p) => p,
        }
    }

    fn placeholder(&self) -> &'static str {
        match self {
            Peer::Anthropic(_) => ANTHROPIC_CLEARED_PLACEHOLDER,
            Peer::Langchain(_) => LANGCHAIN_PLACEHOLDER,
        }
    }
}

fn excluded(p: &PeerParams, name: &str) -> bool {
    p.exclude_tools.iter().any(|x| x == name)
}

impl PeerState {
    /// Characters of the name of the tool `id` calls (0 when no use of it
    /// was scanned), as LangChain names a tool message.
    fn name_chars(&self, id: &str) -> usize {
        self.find(id)
            .map_or(0, |t| self.tools[t as usize].name_chars as usize)
    }

    /// Whether the result of `id` is among those decided.
    fn is_decided(&self, id: &str) -> bool {
        self.find(id).is_some_and(|t| self.decided_bit(t))
    }

    fn decided_bit(&self, t: u32) -> bool {
        let t = t as usize;
        self.decided_bits
            .get(t / 64)
            .is_some_and(|w| w & (1 << (t % 64)) != 0)
    }

    /// The number of `id`, if it was scanned.
    fn find(&self, id: &str) -> Option<u32> {
        let tools = &self.tools;
        self.numbers
            .find(self.hasher.hash_one(id), |&t| {
                tools.get(t as usize).is_some_and(|tool| *tool.id == *id)
            })
            .copied()
    }

    /// The number of `id`, a new one when it was not scanned before.
    fn number(&mut self, id: &Arc<str>) -> Option<u32> {
        if let Some(t) = self.find(id) {
            return Some(t);
        }
        let t = u32::try_from(self.tools.len())
            .ok()
            .filter(|&t| t != NONE)?;
        self.tools.push(Tool {
            id: id.clone(),
            use_no: NONE,
            result_no: NONE,
            name_chars: 0,
            excluded: false,
        });
        let (tools, hasher) = (&self.tools, &self.hasher);
        self.numbers.insert_unique(hasher.hash_one(&**id), t, |&u| {
            tools
                .get(u as usize)
                .map_or(0, |tool| hasher.hash_one(&*tool.id))
        });
        Some(t)
    }

    /// Scans `history[self.scanned..]`; returns the results scanned, or
    /// `None` when the history leaves the rules (see the module doc), or
    /// is past what a `u32` numbers.
    fn scan(&mut self, peer: Peer<'_>, history: &[Message]) -> Option<std::ops::Range<usize>> {
        let new_results = self.results.len();
        for (mi, m) in history.iter().enumerate().skip(self.scanned) {
            let message = u32::try_from(mi).ok()?;
            for (bi, b) in m.blocks().iter().enumerate() {
                let block = u32::try_from(bi).ok()?;
                match b.kind() {
                    BlockKind::ToolUse { id, name } => {
                        let tool = self.number(id)?;
                        let t = &self.tools[tool as usize];
                        if t.use_no != NONE
                            || (matches!(peer, Peer::Langchain(_)) && t.result_no != NONE)
                        {
                            return None;
                        }
                        let use_no = u32::try_from(self.uses.len()).ok()?;
                        let t = &mut self.tools[tool as usize];
                        t.use_no = use_no;
                        t.name_chars = u32::try_from(name.chars().count()).ok()?;
                        t.excluded = excluded(peer.params(), name);
                        self.uses.push(Place {
                            tool,
                            message,
                            block,
                        });
                    }
                    BlockKind::ToolResult { tool_use_id, .. } => {
                        let tool = self.number(tool_use_id)?;
                        if self.tools[tool as usize].result_no != NONE {
                            return None;
                        }
                        self.tools[tool as usize].result_no =
                            u32::try_from(self.results.len()).ok()?;
                        self.results.push(Place {
                            tool,
                            message,
                            block,
                        });
                    }
                    _ => {}
                }
            }
            if matches!(peer, Peer::Langchain(_)) {
                // Its names are final: a use scanned later naming one of its
                // results leaves the rules. Counted once, as it is scanned,
                // and not kept: the count of every message of a long
                // history, kept by address, was the largest part of this
                // state (69 MB of a million messages). The repr cache fills
                // when the full decision is needed.
                let count = untouched_tokens(m, &|id| self.name_chars(id));
                self.total += count;
            }
        }
        self.scanned = history.len();
        Some(new_results..self.results.len())
    }

    fn decide(&mut self, t: u32) {
        self.decided.push(t);
        let t = t as usize;
        if self.decided_bits.len() <= t / 64 {
            self.decided_bits.resize(t / 64 + 1, 0);
        }
        self.decided_bits[t / 64] |= 1 << (t % 64);
    }

    /// The result of tool `t` (which has one).
    fn result_of(&self, t: u32) -> Place {
        self.results[self.tools[t as usize].result_no as usize]
    }

    /// The use of tool `t`, if one was scanned.
    fn use_of(&self, t: u32) -> Option<Place> {
        let u = self.tools[t as usize].use_no;
        (u != NONE).then(|| self.uses[u as usize])
    }

    /// Anthropic: extends `decided` with the uses that became eligible.
    fn decide_anthropic(
        &mut self,
        p: &PeerParams,
        history: &[Message],
        new_results: std::ops::Range<usize>,
        tokens: &dyn BlockTokens,
    ) {
        let from = self.decided.len();
        // Answers to uses the cut passed unanswered.
        for r in new_results {
            let t = self.results[r].tool;
            let tool = &self.tools[t as usize];
            if tool.use_no != NONE && (tool.use_no as usize) < self.considered && !tool.excluded {
                self.decide(t);
            }
        }
        let cut = self.uses.len().saturating_sub(p.keep);
        for u in self.considered..cut {
            let t = self.uses[u].tool;
            let tool = &self.tools[t as usize];
            if tool.result_no != NONE && !tool.excluded {
                self.decide(t);
            }
        }
        self.considered = self.considered.max(cut);
        if p.clear_at_least > 0 && self.decided.len() > from {
            // As the reference's `saved`: the result's tokens over the
            // placeholder's, and the input's over `{}`'s.
            let placeholder =
                tokens.block_tokens(&ContentBlock::text(ANTHROPIC_CLEARED_PLACEHOLDER));
            for &t in &self.decided[from..] {
                let r = self.result_of(t);
                let mut s = tokens
                    .block_tokens(&history[r.message as usize].blocks()[r.block as usize])
                    .saturating_sub(placeholder);
                if p.clear_tool_inputs
                    && let Some(u) = self.use_of(t)
                {
                    s += tokens
                        .block_tokens(&history[u.message as usize].blocks()[u.block as usize])
                        .saturating_sub(2);
                }
                self.saved += s;
            }
        }
    }

    /// LangChain: extends `decided` along the candidates that appeared,
    /// until the minimum is reached.
    fn decide_langchain(&mut self, p: &PeerParams, history: &[Message]) {
        if self.reached {
            return;
        }
        let cut = self.results.len().saturating_sub(p.keep);
        for r in self.considered..cut {
            let result = self.results[r];
            let t = result.tool;
            let used = self.use_of(t);
            // A result without a use is named "".
            let skip = match used {
                Some(_) => self.tools[t as usize].excluded,
                None => excluded(p, ""),
            };
            if skip {
                continue;
            }
            self.decide(t);
            if p.clear_at_least == 0 {
                continue;
            }
            // Count again the messages clearing `t` touches.
            let mut touched = vec![result.message as usize];
            if p.clear_tool_inputs
                && let Some(u) = used
                && u.message != result.message
            {
                touched.push(u.message as usize);
            }
            for mi in touched {
                let was = match self.counted.get(&mi) {
                    Some(&c) => c,
                    // Nothing of it was cleared yet.
                    None => message_tokens(
                        &history[mi],
                        &|x| self.name_chars(x),
                        &|_| false,
                        &|_| false,
                        "",
                    ),
                };
                let is = message_tokens(
                    &history[mi],
                    &|x| self.name_chars(x),
                    &|x| self.is_decided(x),
                    &|x| p.clear_tool_inputs && self.is_decided(x),
                    LANGCHAIN_PLACEHOLDER,
                );
                self.delta += i128::from(is) - i128::from(was);
                self.counted.insert(mi, is);
            }
            if -self.delta >= i128::from(p.clear_at_least) {
                self.reached = true;
                break;
            }
        }
        self.considered = cut;
    }
}

impl PeerState {
    /// Applies the clearing decided so far, open or closed at this call:
    /// the ids whose clearing changes go in or out of the cleared lists.
    /// Returns the messages those ids touch (their results, and their uses
    /// when inputs are cleared too).
    fn apply_changes(
        &mut self,
        open: bool,
        clear_inputs: bool,
        compacted: &mut super::view::CompactedList,
    ) -> Vec<usize> {
        // The ids whose clearing changes at this call.
        let changed = match (self.open, open) {
            (true, true) => self.applied..self.decided.len(),
            (false, true) => 0..self.decided.len(),
            (true, false) => 0..self.applied,
            (false, false) => 0..0,
        };
        if !open {
            self.cleared_at.clear();
            compacted.clear();
        }
        let mut touched = Vec::new();
        for &t in &self.decided[changed] {
            let r = self.result_of(t);
            touched.push(r.message as usize);
            if clear_inputs && let Some(u) = self.use_of(t) {
                touched.push(u.message as usize);
            }
            if open {
                // Results are usually cleared in history order: at the end.
                let at = self
                    .cleared_at
                    .partition_point(|&x| x < (r.message, r.block));
                self.cleared_at.insert(at, (r.message, r.block));
                compacted.insert(at, self.tools[t as usize].id.clone());
            }
        }
        self.open = open;
        self.applied = if open { self.decided.len() } else { 0 };
        touched
    }
}

/// What of a [`super::ViewState`] the peers' clearing keeps up to date:
/// the view, the ids it clears, and what the peer has seen and decided.
pub(super) struct PeerTarget<'s, 'h> {
    /// The messages as sent at the last call.
    pub(super) view: &'s mut WireView<'h>,
    /// tool_use ids cleared at the last call, in order.
    pub(super) compacted: &'s mut super::view::CompactedList,
    /// What the peer has seen and decided so far.
    pub(super) state: &'s mut PeerState,
}

/// Brings `target` to the view `CompactionRun::view` gives for `history`
/// under the peer `policy`, returning the first message that may differ
/// from the previous call's; `None` when the history leaves the rules (the
/// caller then decides from the whole history).
pub(super) fn advance<'h>(
    policy: &Compaction,
    replacements: &mut Replacements,
    history: &'h [Message],
    fixed_tokens: u64,
    tokens: &dyn BlockTokens,
    target: PeerTarget<'_, 'h>,
) -> Option<usize> {
    let PeerTarget {
        view,
        compacted,
        state: peer_state,
    } = target;
    let peer = match policy {
        Compaction::ClearToolUses(p) => Peer::Anthropic(&p.0),
        Compaction::LangchainClear(p) => Peer::Langchain(&p.0),
        _ => return None,
    };
    let p = peer.params();
    // A fresh state, or one that starts over, builds the whole view and
    // compares it with the previous one.
    let restart = peer_state.scanned == 0 || history.len() < peer_state.scanned;
    if restart {
        *peer_state = PeerState::default();
        compacted.clear();
    }
    let st = &mut *peer_state;
    if st.fallback {
        st.scanned = history.len();
        return None;
    }
    let Some(new_results) = st.scan(peer, history) else {
        st.fallback = true;
        st.scanned = history.len();
        return None;
    };
    let open = match peer {
        Peer::Anthropic(_) => {
            st.decide_anthropic(p, history, new_results, tokens);
            fixed_tokens + tokens.history_tokens(history) > p.trigger
                && !(p.clear_at_least > 0 && st.saved < p.clear_at_least)
        }
        Peer::Langchain(_) => {
            st.decide_langchain(p, history);
            st.total > p.trigger
        }
    };

    let mut touched = st.apply_changes(open, p.clear_tool_inputs, compacted);
    let st = &*st;
    let clears = |id: &str| open && st.is_decided(id);
    let inputs = |id: &str| open && p.clear_tool_inputs && st.is_decided(id);
    let placeholder = peer.placeholder();
    let mut ignored = Vec::new();
    let mut build = |m: &'h Message| {
        ignored.clear();
        clear_message(m, placeholder, &clears, &inputs, replacements, &mut ignored)
    };
    if restart {
        let messages: Vec<_> = history.iter().map(&mut build).collect();
        let same = view
            .messages
            .iter()
            .zip(&messages)
            .take_while(|(a, b)| a.same_objects(b))
            .count();
        view.messages = messages;
        return Some(same);
    }
    let before = view.messages.len();
    let mut first = before;
    touched.sort_unstable();
    touched.dedup();
    for &mi in touched.iter().take_while(|&&mi| mi < before) {
        view.messages[mi] = build(&history[mi]);
        first = first.min(mi);
    }
    view.messages
        .extend(history[before..].iter().map(&mut build));
    Some(first)
}

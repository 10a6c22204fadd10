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

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::Compaction;
use super::peers::{
    ANTHROPIC_CLEARED_PLACEHOLDER, LANGCHAIN_PLACEHOLDER, PeerParams, ReprCache, message_tokens,
};
use super::view::{BlockTokens, Replacements, clear_message};
use tracecost_engine::message::{BlockKind, ContentBlock, Message};
use tracecost_engine::rewrite::WireView;

/// What a peer has seen and decided over the messages scanned so far.
#[derive(Debug, Default)]
pub struct PeerState {
    /// Messages scanned (the last call's history length).
    scanned: usize,
    /// The rules above do not cover this history: decide from all of it.
    fallback: bool,
    /// Tool uses in order: (id, tool name, message, block).
    uses: Vec<(Arc<str>, Arc<str>, usize, usize)>,
    /// Index into `uses` by id.
    use_index: HashMap<Arc<str>, usize>,
    /// Tool results in order: (tool_use id, message, block).
    results: Vec<(Arc<str>, usize, usize)>,
    /// Index into `results` by id.
    result_index: HashMap<Arc<str>, usize>,
    /// Ids the peer clears once its gate is open, in the order decided.
    decided: Vec<Arc<str>>,
    /// The same, as a set.
    decided_set: HashSet<Arc<str>>,
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
    cleared_at: Vec<(usize, usize)>,
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

impl PeerState {
    fn excluded(&self, p: &PeerParams, name: &str) -> bool {
        p.exclude_tools.iter().any(|x| x == name)
    }

    /// Characters of the name of the tool `id` calls (0 when no use of it
    /// was scanned), as LangChain names a tool message.
    fn name_chars(&self, id: &str) -> usize {
        self.use_index
            .get(id)
            .map_or(0, |&u| self.uses[u].1.chars().count())
    }

    /// Scans `history[self.scanned..]`; returns the results scanned, or
    /// `None` when the history leaves the rules (see the module doc).
    fn scan(
        &mut self,
        peer: Peer<'_>,
        history: &[Message],
        cache: &mut ReprCache,
    ) -> Option<std::ops::Range<usize>> {
        let new_results = self.results.len();
        for (mi, m) in history.iter().enumerate().skip(self.scanned) {
            for (bi, b) in m.blocks().iter().enumerate() {
                match b.kind() {
                    BlockKind::ToolUse { id, name } => {
                        if self.use_index.contains_key(id)
                            || (matches!(peer, Peer::Langchain(_))
                                && self.result_index.contains_key(id))
                        {
                            return None;
                        }
                        self.use_index.insert(id.clone(), self.uses.len());
                        self.uses.push((id.clone(), name.clone(), mi, bi));
                    }
                    BlockKind::ToolResult { tool_use_id, .. } => {
                        if self.result_index.contains_key(tool_use_id) {
                            return None;
                        }
                        self.result_index
                            .insert(tool_use_id.clone(), self.results.len());
                        self.results.push((tool_use_id.clone(), mi, bi));
                    }
                    _ => {}
                }
            }
            if matches!(peer, Peer::Langchain(_)) {
                // Its names are final: a use scanned later naming one of its
                // results leaves the rules.
                let count = cache.untouched(m, &|id| self.name_chars(id));
                self.total += count;
            }
        }
        self.scanned = history.len();
        Some(new_results..self.results.len())
    }

    fn decide(&mut self, id: &Arc<str>) {
        self.decided.push(id.clone());
        self.decided_set.insert(id.clone());
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
            let id = self.results[r].0.clone();
            if let Some(&u) = self.use_index.get(&id)
                && u < self.considered
                && !self.excluded(p, &self.uses[u].1)
            {
                self.decide(&id);
            }
        }
        let cut = self.uses.len().saturating_sub(p.keep);
        for u in self.considered..cut {
            let (id, name) = (&self.uses[u].0, &self.uses[u].1);
            if self.result_index.contains_key(id) && !self.excluded(p, name) {
                let id = id.clone();
                self.decide(&id);
            }
        }
        self.considered = self.considered.max(cut);
        if p.clear_at_least > 0 && self.decided.len() > from {
            // As the reference's `saved`: the result's tokens over the
            // placeholder's, and the input's over `{}`'s.
            let placeholder =
                tokens.block_tokens(&ContentBlock::text(ANTHROPIC_CLEARED_PLACEHOLDER));
            for id in &self.decided[from..] {
                let (_, rm, rb) = self.results[self.result_index[id]];
                let mut s = tokens
                    .block_tokens(&history[rm].blocks()[rb])
                    .saturating_sub(placeholder);
                if p.clear_tool_inputs {
                    let (_, _, um, ub) = self.uses[self.use_index[id]];
                    s += tokens
                        .block_tokens(&history[um].blocks()[ub])
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
            let id = self.results[r].0.clone();
            let name = self.use_index.get(&id).map_or("", |&u| &*self.uses[u].1);
            if self.excluded(p, name) {
                continue;
            }
            self.decide(&id);
            if p.clear_at_least == 0 {
                continue;
            }
            // Count again the messages clearing `id` touches.
            let mut touched = vec![self.results[r].1];
            if p.clear_tool_inputs
                && let Some(&u) = self.use_index.get(&id)
                && self.uses[u].2 != touched[0]
            {
                touched.push(self.uses[u].2);
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
                    &|x| self.decided_set.contains(x),
                    &|x| p.clear_tool_inputs && self.decided_set.contains(x),
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
        compacted: &mut Vec<Arc<str>>,
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
        for id in &self.decided[changed] {
            let (_, rm, rb) = self.results[self.result_index[id]];
            touched.push(rm);
            if clear_inputs && let Some(&u) = self.use_index.get(id) {
                touched.push(self.uses[u].2);
            }
            if open {
                // Results are usually cleared in history order: at the end.
                let at = self.cleared_at.partition_point(|&x| x < (rm, rb));
                self.cleared_at.insert(at, (rm, rb));
                compacted.insert(at, id.clone());
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
    pub(super) compacted: &'s mut Vec<Arc<str>>,
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
    cache: &mut ReprCache,
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
    let Some(new_results) = st.scan(peer, history, cache) else {
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
    let set = &st.decided_set;
    let clears = |id: &str| open && set.contains(id);
    let inputs = |id: &str| open && p.clear_tool_inputs && set.contains(id);
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

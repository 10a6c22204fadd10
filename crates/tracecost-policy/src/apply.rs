//! Running policies call by call: the wire view each compaction policy
//! sends, and the markers each cache policy places.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::peers::Clearing;
pub use super::view::BlockTokens;
use super::view::{CompactedList, Replacements, clear_message};
use super::{Cache, Compaction};
use tracecost_engine::cache::{
    CacheComposition, HistoryCachePolicy, ManifestCachePolicy, ProviderKind,
};
use tracecost_engine::ledger::{InMemoryLedger, LedgerError};
use tracecost_engine::message::{BlockKind, ContentBlock, Message, Role, ToolDefinition};
use tracecost_engine::rewrite::{
    CompactionPolicy, Compactor, ResultCounts, StubCache, WireBlock, WireMessage, WireView,
};
use tracecost_engine::wire::{BlockRef, Marker, Ttl};

/// One call's wire view under a compaction policy.
#[derive(Debug, Clone, Default)]
pub struct PolicyView<'h> {
    /// The messages as sent.
    pub view: WireView<'h>,
    /// tool_use ids whose results were compacted or cleared, in order.
    pub compacted: Vec<Arc<str>>,
}

/// A compaction policy running over one trace, keeping what it may keep
/// between calls (the ledger and its stubs; the peers their replacement
/// blocks and per-message counts — what they clear [`Self::view`] decides
/// afresh from each history, as the real implementations do).
pub enum CompactionRun {
    /// Nothing compacted.
    Off,
    /// The engine.
    Ledger(Box<Compactor<Arc<InMemoryLedger>>>),
    /// The results the record says the client cleared: `(the call's
    /// message count from which on, tool_use id)`, in call order.
    Recorded {
        /// What was cleared from which history length on.
        clears: Vec<(usize, Arc<str>)>,
        /// Replacement blocks by (tool_use id, is-input), built once.
        replacements: Replacements,
        /// How many of `clears` were in force at the last call advanced.
        in_force: usize,
        /// The ids of those `in_force`: a long trace clears thousands of
        /// results, and each block appended is looked up among them.
        in_force_ids: HashSet<Arc<str>>,
    },
    /// A peer that clears results (and maybe inputs) at each request.
    Peer {
        /// The policy.
        policy: Compaction,
        /// Replacement blocks by (tool_use id, is-input), built once.
        replacements: Replacements,
        /// LangChain's per-block character counts, computed once.
        repr_cache: super::peers::ReprCache,
        /// The Agents SDK trimmer's decision on each result, made once.
        trims: Trims,
    },
}

impl CompactionRun {
    /// Starts a run of `policy` with an empty ledger.
    pub fn new(policy: &Compaction) -> Self {
        Self::with_ledger(policy, Arc::new(InMemoryLedger::new()))
    }

    /// Starts a run of `policy` recording into `ledger`, which may be shared
    /// by several runs over the same trace: records are idempotent and
    /// handles pure, so sharing only saves deriving each handle again.
    pub fn with_ledger(policy: &Compaction, ledger: Arc<InMemoryLedger>) -> Self {
        Self::with_shared(policy, ledger, Arc::default())
    }

    /// Starts a run of `policy` recording into `ledger` and sharing `stubs`
    /// with the other runs that record into it (runs of several policies
    /// over one trace make each stub once).
    pub fn with_shared(
        policy: &Compaction,
        ledger: Arc<InMemoryLedger>,
        stubs: Arc<StubCache>,
    ) -> Self {
        if let Some(compaction) = policy.ledger_policy() {
            return CompactionRun::Ledger(Box::new(Compactor::with_stub_cache(
                ledger, compaction, stubs,
            )));
        }
        match policy {
            // The other summarising policies clear nothing in place: each
            // part is sent as it is.
            Compaction::Off
            | Compaction::AnthropicCompact { .. }
            | Compaction::LangchainSummarize(_)
            | Compaction::OpenAiCompact { .. } => CompactionRun::Off,
            // Claude Code's clearing is planned per trace before the run
            // (it needs each call's prompt), then replayed like a record.
            // Autocompact is replayed as the parts it cuts the trace into
            // (`autocompact`), each sent as recorded: Claude Code runs its
            // summarising compaction beside its microcompaction, so what
            // the record says it cleared stays cleared within a part.
            Compaction::Recorded
            | Compaction::ClaudeCodeClear { .. }
            | Compaction::ClaudeCodeAutocompact { .. } => CompactionRun::Recorded {
                clears: Vec::new(),
                replacements: Replacements::default(),
                in_force: 0,
                in_force_ids: HashSet::new(),
            },
            other => CompactionRun::Peer {
                policy: other.clone(),
                replacements: Replacements::default(),
                repr_cache: Default::default(),
                trims: HashMap::new(),
            },
        }
    }

    /// Gives a `recorded` run what `calls` (the trace's) say was cleared;
    /// other runs are left as they are.
    pub fn with_record(mut self, calls: &[tracecost_trace::Call]) -> Self {
        if let CompactionRun::Recorded {
            clears,
            in_force,
            in_force_ids,
            ..
        } = &mut self
        {
            // Whatever was in force is decided again at the next call.
            (*in_force, *in_force_ids) = (0, HashSet::new());
            clears.clear();
            for c in calls {
                clears.extend(
                    c.cleared
                        .iter()
                        .map(|id| (c.messages, Arc::from(id.as_str()))),
                );
            }
        }
        self
    }

    /// Adds clears (`(history length from which on, tool_use id)`) to a
    /// run of cleared results: the ones the record implies without naming
    /// them (`recorded`), or the ones planned for `claude-code-clear`;
    /// other runs are left as they are.
    pub fn with_clears(mut self, more: &[(usize, Arc<str>)]) -> Self {
        if let CompactionRun::Recorded {
            clears,
            in_force,
            in_force_ids,
            ..
        } = &mut self
            && !more.is_empty()
        {
            (*in_force, *in_force_ids) = (0, HashSet::new());
            clears.extend(more.iter().cloned());
            // Stable: clears of one call keep their order.
            clears.sort_by_key(|(from, _)| *from);
        }
        self
    }

    /// How many of `clears` are in force for a history of `len` messages.
    fn clears_in_force(clears: &[(usize, Arc<str>)], len: usize) -> usize {
        clears.partition_point(|(from, _)| *from <= len)
    }

    /// The clearing of `in_force`, the clears in force.
    fn recorded_clearing(in_force: &[(usize, Arc<str>)]) -> Clearing {
        Clearing {
            results: in_force.iter().map(|(_, id)| id.to_string()).collect(),
            inputs: Vec::new(),
            placeholder: super::CLAUDE_CODE_CLEARED_PLACEHOLDER,
        }
    }

    /// The wire view of one call. `fixed_tokens` is the tokens of what
    /// precedes the messages (tools, system); `tokens` counts blocks.
    pub fn view<'h>(
        &mut self,
        history: &'h [Message],
        fixed_tokens: u64,
        tokens: &dyn BlockTokens,
    ) -> Result<PolicyView<'h>, LedgerError> {
        match self {
            CompactionRun::Off => Ok(PolicyView {
                view: WireView::unchanged(history),
                compacted: Vec::new(),
            }),
            CompactionRun::Ledger(c) => {
                let r = c.rewrite(history)?;
                let compacted = r
                    .compacted
                    .iter()
                    .map(|h| Arc::from(h.tool_call_id.as_str()))
                    .collect();
                Ok(PolicyView {
                    view: r.view,
                    compacted,
                })
            }
            CompactionRun::Recorded {
                clears,
                replacements,
                ..
            } => {
                let n = Self::clears_in_force(clears, history.len());
                let clearing = Self::recorded_clearing(&clears[..n]);
                Ok(apply_clearing(history, &clearing, replacements))
            }
            CompactionRun::Peer {
                policy: Compaction::AgentsTrim(t),
                trims,
                ..
            } => Ok(apply_trim(t, history, trims)),
            CompactionRun::Peer {
                policy,
                replacements,
                repr_cache,
                ..
            } => {
                let clearing = match policy {
                    Compaction::ClearToolUses(p)
                        if fixed_tokens + tokens.history_tokens(history) > p.0.trigger =>
                    {
                        let input: u64 = fixed_tokens + tokens.history_tokens(history);
                        let placeholder_tokens = tokens.block_tokens(&ContentBlock::text(
                            super::ANTHROPIC_CLEARED_PLACEHOLDER,
                        ));
                        let by_id = blocks_by_tool_id(history);
                        let clear_inputs = p.0.clear_tool_inputs;
                        let saved = |id: &str| -> u64 {
                            let (result, input) = by_id.get(id).copied().unwrap_or((None, None));
                            let r = result.map_or(0, |b| {
                                tokens.block_tokens(b).saturating_sub(placeholder_tokens)
                            });
                            let i = if clear_inputs {
                                input.map_or(0, |b| tokens.block_tokens(b).saturating_sub(2))
                            } else {
                                0
                            };
                            r + i
                        };
                        p.select(history, input, &saved)
                    }
                    Compaction::LangchainClear(p) => p.select(history, repr_cache),
                    _ => Clearing::default(),
                };
                Ok(apply_clearing(history, &clearing, replacements))
            }
        }
    }
}

/// One compaction policy's wire view kept up to date call after call, for
/// callers that replay a conversation: each call's history must extend or
/// truncate the one before (the same message slice, longer or shorter).
/// [`CompactionRun::advance`] then touches only what changed — the
/// messages appended, and those whose results became compacted (or
/// restored) — and says from which message on the view differs, so that
/// what is built from the view can be rebuilt from there only. The view it
/// gives is exactly the one [`CompactionRun::view`] gives for that history.
#[derive(Debug, Default)]
pub struct ViewState<'h> {
    /// The messages as sent at the last call.
    pub view: WireView<'h>,
    /// tool_use ids compacted or cleared at the last call, in order.
    pub compacted: CompactedList,
    /// The address of the history the view was built from (a different
    /// slice starts over).
    base: Option<usize>,
    /// Tool results of the messages scanned so far: (message, block,
    /// payload characters).
    results: Vec<(usize, usize, u64)>,
    /// Per scanned message `i`, the tool results in `messages[..i]`.
    results_before: Vec<usize>,
    /// Per scanned message `i`, the results of `messages[..i]` the model
    /// has answered (those before the last assistant message there).
    answered_before: Vec<usize>,
    /// Ledger: indices into `results` compacted at the last call, ascending.
    compacted_at: Vec<usize>,
    /// Ledger: results before this one (those older than the last kept at
    /// the last call) have been decided.
    decided: usize,
    /// Peers: what they decided so far.
    pub(super) peer: super::peer_view::PeerState,
}

impl<'h> ViewState<'h> {
    /// Takes `pv`, decided from a whole history, as the view; returns how
    /// many leading messages it sends as the previous view did.
    fn replace(&mut self, pv: PolicyView<'h>) -> usize {
        let same = self
            .view
            .messages
            .iter()
            .zip(&pv.view.messages)
            .take_while(|(a, b)| a.same_objects(b))
            .count();
        self.view = pv.view;
        self.compacted = pv.compacted.into();
        same
    }

    /// Brings the view to `history` with the results `cleared` names
    /// replaced by Claude Code's placeholder (the view `apply_clearing` of
    /// them gives), message by message in place; returns how many leading
    /// messages it sends as the previous view did. Built apart and then
    /// compared, the new view of a long history stood beside the old one
    /// (about 100 MB for a million messages).
    fn reclear(
        &mut self,
        history: &'h [Message],
        cleared: &HashSet<Arc<str>>,
        replacements: &mut Replacements,
    ) -> usize {
        let mut compacted = Vec::new();
        let mut same = None;
        self.view.messages.truncate(history.len());
        for (i, m) in history.iter().enumerate() {
            let wm = clear_message(
                m,
                super::CLAUDE_CODE_CLEARED_PLACEHOLDER,
                &|id| cleared.contains(id),
                &|_| false,
                replacements,
                &mut compacted,
            );
            match self.view.messages.get_mut(i) {
                Some(old) => {
                    if same.is_none() && !old.same_objects(&wm) {
                        same = Some(i);
                    }
                    *old = wm;
                }
                None => {
                    same.get_or_insert(i);
                    self.view.messages.push(wm);
                }
            }
        }
        self.compacted = compacted.into();
        same.unwrap_or(history.len())
    }

    /// Scans the tool results of `history`'s messages not scanned yet.
    fn scan(&mut self, history: &'h [Message]) {
        if self.results_before.is_empty() {
            self.results_before.push(0);
            self.answered_before.push(0);
        }
        for m in history.iter().skip(self.results_before.len() - 1) {
            let mi = self.results_before.len() - 1;
            let answered = if m.role() == Role::Assistant {
                self.results_before[mi]
            } else {
                self.answered_before[mi]
            };
            for (bi, b) in m.blocks().iter().enumerate() {
                if let BlockKind::ToolResult { payload_chars, .. } = b.kind() {
                    self.results.push((mi, bi, *payload_chars));
                }
            }
            self.results_before.push(self.results.len());
            self.answered_before.push(answered);
        }
    }

    /// The result counts of `history[..n]` (scanned).
    fn counts(&self, n: usize) -> ResultCounts {
        ResultCounts {
            total: self.results_before[n],
            answered: self.answered_before[n],
        }
    }
}

impl CompactionRun {
    /// Brings `state` to the wire view of `history` (as [`Self::view`]
    /// would give it) and returns the first message whose wire form may
    /// differ from the previous call's: messages before it are sent as
    /// they were. Under the ledger and the peers this costs the messages
    /// appended plus the results newly compacted or cleared, not the
    /// history (the peers' rules: `peer_view`); histories those rules do
    /// not cover are decided from the whole history and compared with the
    /// previous view.
    pub fn advance<'h>(
        &mut self,
        history: &'h [Message],
        fixed_tokens: u64,
        tokens: &dyn BlockTokens,
        state: &mut ViewState<'h>,
    ) -> Result<usize, LedgerError> {
        let base = history.as_ptr() as usize;
        if state.base != Some(base) {
            *state = ViewState {
                base: Some(base),
                ..ViewState::default()
            };
        }
        let before = state.view.messages.len();
        let first = before.min(history.len());
        match self {
            CompactionRun::Off => {}
            CompactionRun::Ledger(c) => return advance_ledger(c, history, state, first),
            CompactionRun::Recorded {
                clears,
                replacements,
                in_force,
                in_force_ids,
            } => {
                // Nothing newly cleared and the history only grew: only
                // the messages appended are built (a result there is
                // cleared if its id is, as a fresh view would).
                let n = Self::clears_in_force(clears, history.len());
                let grew = before > 0 && history.len() >= before;
                if n == *in_force && n > 0 && grew {
                    state.view.messages.truncate(first);
                    for m in &history[first..] {
                        let wm = clear_message(
                            m,
                            super::CLAUDE_CODE_CLEARED_PLACEHOLDER,
                            &|id| in_force_ids.contains(id),
                            &|_| false,
                            replacements,
                            &mut state.compacted,
                        );
                        state.view.messages.push(wm);
                    }
                    return Ok(first);
                } else if n == *in_force && n == 0 {
                    // Nothing cleared: falls through to the append below.
                } else {
                    // Clears come in call order, so more of them in force
                    // adds to the ids; fewer (a shorter history) starts over.
                    if n > *in_force {
                        in_force_ids.extend(clears[*in_force..n].iter().map(|(_, id)| id.clone()));
                    } else {
                        *in_force_ids = clears[..n].iter().map(|(_, id)| id.clone()).collect();
                    }
                    *in_force = n;
                    return Ok(first.min(state.reclear(history, in_force_ids, replacements)));
                }
            }
            CompactionRun::Peer {
                policy,
                replacements,
                ..
            } => {
                if let Some(first) = super::peer_view::advance(
                    policy,
                    replacements,
                    history,
                    fixed_tokens,
                    tokens,
                    super::peer_view::PeerTarget {
                        view: &mut state.view,
                        compacted: &mut state.compacted,
                        state: &mut state.peer,
                    },
                ) {
                    return Ok(first);
                }
                // A history the incremental rules do not cover: decide from
                // the whole of it, and compare with the previous view.
                let pv = self.view(history, fixed_tokens, tokens)?;
                return Ok(first.min(state.replace(pv)));
            }
        }
        state.view.messages.truncate(first);
        state
            .view
            .messages
            .extend(history[first..].iter().map(WireMessage::unchanged));
        Ok(first)
    }
}

/// The ledger's view advanced to `history`: which results are compacted
/// now, then the messages from the first that changed rebuilt with their
/// stubs. Returns that first message.
fn advance_ledger<'h>(
    c: &mut Compactor<Arc<InMemoryLedger>>,
    history: &'h [Message],
    state: &mut ViewState<'h>,
    first: usize,
) -> Result<usize, LedgerError> {
    let first = ledger_decide(c.policy(), history, state, first);
    ledger_rebuild(c, history, state, first)?;
    Ok(first)
}

/// Results restored (a shorter history leaves them among the last kept)
/// and newly compacted (they just left it); returns the first message
/// whose wire form changes.
fn ledger_decide<'h>(
    policy: CompactionPolicy,
    history: &'h [Message],
    state: &mut ViewState<'h>,
    mut first: usize,
) -> usize {
    state.scan(history);
    let total = state.counts(history.len());
    let eligible = policy.eligible(total);
    let chars = |r: usize| state.results[r].2;
    // Restored: a shorter history leaves results among the last kept.
    while let Some(&r) = state.compacted_at.last() {
        if policy.compacts(r, total, chars(r)) {
            break;
        }
        state.compacted_at.pop();
        state.compacted.pop();
        first = first.min(state.results[r].0);
    }
    // Newly compacted: results that just left the last kept.
    let from = state.decided.min(eligible);
    state.decided = eligible;
    for r in from..eligible {
        if !policy.compacts(r, total, chars(r)) {
            continue;
        }
        let (mi, bi, _) = state.results[r];
        let block = &history[mi].blocks()[bi];
        let BlockKind::ToolResult { tool_use_id, .. } = block.kind() else {
            continue;
        };
        state.compacted_at.push(r);
        state.compacted.push(tool_use_id.clone());
        first = first.min(mi);
    }
    first
}

/// The view's messages from `first` on, each compacted result replaced by
/// its stub.
fn ledger_rebuild<'h>(
    c: &mut Compactor<Arc<InMemoryLedger>>,
    history: &'h [Message],
    state: &mut ViewState<'h>,
    first: usize,
) -> Result<(), LedgerError> {
    state.view.messages.truncate(first);
    let mut next = state
        .compacted_at
        .partition_point(|&r| state.results[r].0 < first);
    for (mi, m) in history.iter().enumerate().skip(first) {
        let mut blocks: Option<Vec<WireBlock<'h>>> = None;
        while let Some(&r) = state.compacted_at.get(next) {
            let (rm, bi, _) = state.results[r];
            if rm != mi {
                break;
            }
            next += 1;
            let block = &m.blocks()[bi];
            let BlockKind::ToolResult { tool_use_id, .. } = block.kind() else {
                continue;
            };
            let (_, stub) = c.stub_for(&history[..=mi], tool_use_id, block)?;
            let list = blocks.get_or_insert_with(|| Vec::with_capacity(m.blocks().len()));
            list.extend(m.blocks()[list.len()..bi].iter().map(WireBlock::Original));
            list.push(WireBlock::Compacted {
                original: block,
                stub,
            });
        }
        if let Some(list) = blocks.as_mut() {
            list.extend(m.blocks()[list.len()..].iter().map(WireBlock::Original));
        }
        state.view.messages.push(WireMessage {
            source: m,
            blocks: blocks.map(Vec::into_boxed_slice),
        });
    }
    Ok(())
}

type ToolBlocks<'h> = (Option<&'h ContentBlock>, Option<&'h ContentBlock>);

/// tool_use id → (its tool_result block, its tool_use block).
fn blocks_by_tool_id(history: &[Message]) -> HashMap<&str, ToolBlocks<'_>> {
    let mut out: HashMap<&str, ToolBlocks<'_>> = HashMap::new();
    for b in history.iter().flat_map(Message::blocks) {
        match b.kind() {
            BlockKind::ToolUse { id, .. } => out.entry(id).or_default().1 = Some(b),
            BlockKind::ToolResult { tool_use_id, .. } => {
                out.entry(tool_use_id).or_default().0 = Some(b)
            }
            _ => {}
        }
    }
    out
}

/// The trimmer's decision on one tool result, by the block's address in the
/// history and the name of the tool it answers: the block sent instead, or
/// `None` when it is sent whole. The address names the block while the
/// history lives; the replacement is built once, so every call sends the
/// same bytes (and the same object, which the replay compares).
pub(super) type Trims = HashMap<(usize, Option<Arc<str>>), Option<Arc<ContentBlock>>>;

/// `history` as the Agents SDK's `ToolOutputTrimmer` `t` sends it.
fn apply_trim<'h>(
    t: &super::AgentsTrim,
    history: &'h [Message],
    trims: &mut Trims,
) -> PolicyView<'h> {
    let Some(boundary) = t.boundary(history) else {
        return PolicyView {
            view: WireView::unchanged(history),
            compacted: Vec::new(),
        };
    };
    // Names by call id, a later call of the same id winning (the SDK's map).
    let mut names: HashMap<&str, &Arc<str>> = HashMap::new();
    for b in history.iter().flat_map(Message::blocks) {
        if let BlockKind::ToolUse { id, name } = b.kind() {
            names.insert(id, name);
        }
    }
    let mut compacted = Vec::new();
    let messages = history
        .iter()
        .enumerate()
        .map(|(mi, m)| {
            if mi > boundary.0 || m.role() != Role::User {
                return WireMessage::unchanged(m);
            }
            let mut blocks: Option<Vec<WireBlock<'h>>> = None;
            for (bi, b) in m.blocks().iter().enumerate() {
                let trimmed = match b.kind() {
                    BlockKind::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } if (mi, bi) < boundary => {
                        let name = names.get(&**tool_use_id).map(|n| Arc::clone(n));
                        let key = (b as *const ContentBlock as usize, name);
                        let stub = trims
                            .entry(key)
                            .or_insert_with_key(|(_, name)| {
                                t.trimmed(name.as_deref(), content)
                                    .and_then(|text| b.with_tool_result_text(&text))
                                    .map(Arc::new)
                            })
                            .clone();
                        stub.map(|stub| (tool_use_id.clone(), stub))
                    }
                    _ => None,
                };
                match trimmed {
                    Some((id, stub)) => {
                        compacted.push(id);
                        blocks
                            .get_or_insert_with(|| {
                                m.blocks()[..bi].iter().map(WireBlock::Original).collect()
                            })
                            .push(WireBlock::Compacted { original: b, stub });
                    }
                    None => {
                        if let Some(list) = blocks.as_mut() {
                            list.push(WireBlock::Original(b));
                        }
                    }
                }
            }
            WireMessage {
                source: m,
                blocks: blocks.map(Vec::into_boxed_slice),
            }
        })
        .collect();
    PolicyView {
        view: WireView { messages },
        compacted,
    }
}

fn apply_clearing<'h>(
    history: &'h [Message],
    clearing: &Clearing,
    replacements: &mut Replacements,
) -> PolicyView<'h> {
    if clearing.results.is_empty() && clearing.inputs.is_empty() {
        return PolicyView {
            view: WireView::unchanged(history),
            compacted: Vec::new(),
        };
    }
    let results: HashSet<&str> = clearing.results.iter().map(|s| &**s).collect();
    let inputs: HashSet<&str> = clearing.inputs.iter().map(|s| &**s).collect();
    let mut compacted = Vec::new();
    let messages = history
        .iter()
        .map(|m| {
            clear_message(
                m,
                clearing.placeholder,
                &|id| results.contains(id),
                &|id| inputs.contains(id),
                replacements,
                &mut compacted,
            )
        })
        .collect();
    PolicyView {
        view: WireView { messages },
        compacted,
    }
}

/// The markers one call carries under `cache`. `recorded` is what the
/// recorded request carried (for `Cache::Recorded`); `recorded_ttl` is the
/// TTL the call's record resolves to (the call's entry of
/// [`super::recorded_ttls`], for a policy whose TTL is
/// [`super::TtlChoice::Recorded`]); `boundary` is the
/// view's [`tracecost_engine::cache::history_boundary`], asked for only by `Cache::Native` (a
/// replay keeps it up to date call by call; others pass
/// `&|| history_boundary(view)`).
pub fn markers_for_call(
    cache: &Cache,
    recorded: Option<&[Marker]>,
    recorded_ttl: Ttl,
    tools: &[&ToolDefinition],
    system: &[ContentBlock],
    view: &WireView<'_>,
    boundary: &dyn Fn() -> Option<BlockRef>,
) -> Vec<Marker> {
    match *cache {
        // The automatic caches take no markers.
        Cache::None | Cache::OpenAiAuto { .. } | Cache::GeminiImplicit { .. } => Vec::new(),
        Cache::Recorded => recorded.map(<[Marker]>::to_vec).unwrap_or_default(),
        Cache::System { ttl } => prompt_region_markers(ttl.at(recorded_ttl), tools, system),
        Cache::Native { manifest, ttl } => {
            let ttl = ttl.at(recorded_ttl);
            // Validated for Anthropic by the plan before any replay runs;
            // this construction cannot fail for that provider.
            match CacheComposition::new(
                ProviderKind::Anthropic,
                HistoryCachePolicy { enabled: true },
                ManifestCachePolicy {
                    enabled: true,
                    position: manifest,
                },
                true,
                ttl,
            ) {
                Ok(c) => c.markers_at(tools, system, boundary),
                Err(_) => Vec::new(),
            }
        }
        Cache::Tail { ttl } => tail_marker(view)
            .map(|at| {
                vec![Marker {
                    at,
                    ttl: ttl.at(recorded_ttl),
                }]
            })
            .unwrap_or_default(),
        // Bedrock's cache points sit where Claude Code's markers do; the
        // request carries them as cachePoint blocks, not cache_control.
        Cache::ClaudeCode { ttl } | Cache::BedrockCachePoint { ttl } => {
            let ttl = ttl.at(recorded_ttl);
            let mut out = prompt_region_markers(ttl, tools, system);
            out.extend(tail_marker(view).map(|at| Marker { at, ttl }));
            out
        }
        // Gemini's cached content closes where the prompt region does (the
        // simulator caches what the last marker closes), held an hour.
        Cache::GeminiExplicit => prompt_region_markers(Ttl::OneHour, tools, system),
        // OpenAI's explicit breakpoints after the tools and the system
        // prompt (the implicit one on the newest message is the API's, not
        // the request's). Their TTL rides in the marker's two lengths: the
        // shorter for 30 minutes, the longer for 12 hours.
        Cache::OpenAiBreakpoints { ttl } => prompt_region_markers(
            match ttl {
                crate::BreakpointTtl::ThirtyMinutes => Ttl::FiveMinutes,
                crate::BreakpointTtl::TwelveHours => Ttl::OneHour,
            },
            tools,
            system,
        ),
    }
}

/// Markers closing the prompt region: on the last tool and on the last
/// markable system block.
fn prompt_region_markers(
    ttl: Ttl,
    tools: &[&ToolDefinition],
    system: &[ContentBlock],
) -> Vec<Marker> {
    let mut out = Vec::new();
    if !tools.is_empty() {
        out.push(Marker {
            at: BlockRef::Tool(tools.len() - 1),
            ttl,
        });
    }
    if let Some(i) = system.iter().rposition(ContentBlock::is_markable) {
        out.push(Marker {
            at: BlockRef::System(i),
            ttl,
        });
    }
    out
}

/// The last markable block of the conversation (automatic caching's
/// rolling breakpoint).
fn tail_marker(view: &WireView<'_>) -> Option<BlockRef> {
    view.messages.iter().enumerate().rev().find_map(|(mi, m)| {
        if m.blocks.is_none() && m.source.blocks().is_empty() {
            return Some(BlockRef::Message {
                message: mi,
                block: 0,
            });
        }
        m.sent_blocks()
            .enumerate()
            .filter(|(_, b)| b.is_markable())
            .last()
            .map(|(bi, _)| BlockRef::Message {
                message: mi,
                block: bi,
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_engine::cache::history_boundary;
    use tracecost_engine::wire::Ttl;

    struct Chars;
    impl BlockTokens for Chars {
        fn block_tokens(&self, block: &ContentBlock) -> u64 {
            block.to_json().chars().count() as u64 / 4
        }
    }

    fn history() -> Vec<Message> {
        let mut h = vec![Message::from_json(r#"{"role":"user","content":"go"}"#).unwrap()];
        for (id, size) in [("a", 4000), ("b", 4000), ("c", 10)] {
            h.push(Message::from_json(&format!(r#"{{"role":"assistant","content":[{{"type":"text","text":"checking"}},{{"type":"tool_use","id":"{id}","name":"web","input":{{"q":1}}}}]}}"#)).unwrap());
            h.push(Message::from_json(&format!(r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"{}"}}]}}"#, "x".repeat(size))).unwrap());
        }
        h
    }

    #[test]
    fn each_policy_gives_its_wire_view() {
        let h = history();
        let ledger: Compaction = "ledger:t=100,k=1+none"
            .parse::<super::super::Config>()
            .unwrap()
            .compaction;
        let mut run = CompactionRun::new(&ledger);
        let v = run.view(&h, 0, &Chars).unwrap();
        assert_eq!(
            v.compacted.iter().map(|s| &**s).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert!(
            v.view.messages[2].blocks.as_ref().unwrap()[0]
                .block()
                .to_json()
                .contains("tracecost-stub/1")
        );

        let clear: Compaction = "clear-tool-uses:trigger=100,keep=1,inputs=true+none"
            .parse::<super::super::Config>()
            .unwrap()
            .compaction;
        let mut run = CompactionRun::new(&clear);
        let v = run.view(&h, 0, &Chars).unwrap();
        assert_eq!(
            v.compacted.iter().map(|s| &**s).collect::<Vec<_>>(),
            ["a", "b"]
        );
        let sent_use = v.view.messages[1].blocks.as_ref().unwrap()[1]
            .block()
            .to_json();
        assert_eq!(
            sent_use,
            r#"{"type":"tool_use","id":"a","name":"web","input":{}}"#
        );
        let sent_result = v.view.messages[2].blocks.as_ref().unwrap()[0]
            .block()
            .to_json();
        assert_eq!(
            sent_result,
            format!(
                r#"{{"type":"tool_result","tool_use_id":"a","content":"{}"}}"#,
                super::super::ANTHROPIC_CLEARED_PLACEHOLDER
            )
        );
        // Under the trigger nothing changes.
        let v = run.view(&h[..3], 0, &Chars).unwrap();
        assert!(v.compacted.is_empty());

        let lc: Compaction = "langchain-clear:trigger=10,keep=2+none"
            .parse::<super::super::Config>()
            .unwrap()
            .compaction;
        let v = CompactionRun::new(&lc).view(&h, 0, &Chars).unwrap();
        assert_eq!(v.compacted.iter().map(|s| &**s).collect::<Vec<_>>(), ["a"]);
        assert!(
            v.view.messages[2].blocks.as_ref().unwrap()[0]
                .block()
                .to_json()
                .contains(r#""content":"[cleared]""#)
        );
    }

    #[test]
    fn cache_policies_place_their_markers() {
        let h = history();
        let view = WireView::unchanged(&h);
        let tools = [ToolDefinition::from_json(r#"{"name":"web"}"#).unwrap()];
        let refs: Vec<_> = tools.iter().collect();
        let sys = [ContentBlock::text("s")];
        let ttl = Ttl::FiveMinutes.into();
        let at = |c: Cache| {
            markers_for_call(&c, None, Ttl::OneHour, &refs, &sys, &view, &|| {
                history_boundary(&view)
            })
            .iter()
            .map(|m| m.at)
            .collect::<Vec<_>>()
        };
        assert!(at(Cache::None).is_empty());
        assert_eq!(
            at(Cache::System { ttl }),
            [BlockRef::Tool(0), BlockRef::System(0)]
        );
        assert_eq!(
            at(Cache::Tail { ttl }),
            [BlockRef::Message {
                message: 6,
                block: 0
            }]
        );
        // The only plain-text message before the last is the first one.
        assert_eq!(
            at(Cache::Native {
                manifest: tracecost_engine::cache::ManifestPosition::Cached,
                ttl
            }),
            [
                BlockRef::Tool(0),
                BlockRef::System(0),
                BlockRef::Message {
                    message: 0,
                    block: 0
                }
            ]
        );
        assert_eq!(
            at(Cache::ClaudeCode { ttl }),
            [
                BlockRef::Tool(0),
                BlockRef::System(0),
                BlockRef::Message {
                    message: 6,
                    block: 0
                }
            ]
        );
        let rec = [Marker {
            at: BlockRef::Message {
                message: 3,
                block: 1,
            },
            ttl: Ttl::OneHour,
        }];
        assert_eq!(
            markers_for_call(
                &Cache::Recorded,
                Some(&rec),
                Ttl::FiveMinutes,
                &refs,
                &sys,
                &view,
                &|| None
            ),
            rec
        );
        // A recorded TTL is the call's; a fixed one ignores it.
        let ttls = |c: Cache, recorded: Ttl| {
            markers_for_call(&c, None, recorded, &refs, &sys, &view, &|| {
                history_boundary(&view)
            })
            .iter()
            .map(|m| m.ttl)
            .collect::<Vec<_>>()
        };
        let from_record = super::super::TtlChoice::Recorded;
        for recorded in [Ttl::FiveMinutes, Ttl::OneHour] {
            for c in [
                Cache::System { ttl: from_record },
                Cache::Tail { ttl: from_record },
                Cache::ClaudeCode { ttl: from_record },
                Cache::Native {
                    manifest: tracecost_engine::cache::ManifestPosition::Cached,
                    ttl: from_record,
                },
            ] {
                let got = ttls(c, recorded);
                assert!(!got.is_empty() && got.iter().all(|t| *t == recorded), "{c}");
            }
        }
        assert_eq!(
            ttls(Cache::ClaudeCode { ttl }, Ttl::OneHour),
            [Ttl::FiveMinutes; 3]
        );
    }

    /// A random conversation: each step an assistant message with tool
    /// uses (ids from a small pool, so some repeat), a user message of
    /// results (some out of order, some for uses not seen, some never), or
    /// plain text.
    fn random_history(steps: &[(u8, u8, u16)]) -> Vec<Message> {
        let names = ["web", "read", "grep"];
        let mut h = vec![Message::from_json(r#"{"role":"user","content":"go"}"#).unwrap()];
        let mut next = 0u32;
        let mut pending: Vec<u32> = Vec::new();
        for &(kind, x, size) in steps {
            match kind % 4 {
                0 | 1 => {
                    let mut blocks = Vec::new();
                    if x % 3 == 0 {
                        blocks.push(r#"{"type":"text","text":"let me see"}"#.to_owned());
                    }
                    for j in 0..1 + x % 3 {
                        // Now and then an id used before.
                        let id = if x % 17 == 5 && next > 0 {
                            u32::from(x) % next
                        } else {
                            next += 1;
                            next - 1
                        };
                        let name = names[usize::from(x / 3 + j) % 3];
                        blocks.push(format!(
                            r#"{{"type":"tool_use","id":"t{id}","name":"{name}","input":{{"q":"{}"}}}}"#,
                            "i".repeat(usize::from(size % 40))
                        ));
                        pending.push(id);
                    }
                    h.push(
                        Message::from_json(&format!(
                            r#"{{"role":"assistant","content":[{}]}}"#,
                            blocks.join(",")
                        ))
                        .unwrap(),
                    );
                }
                2 => {
                    let mut ids: Vec<u32> = std::mem::take(&mut pending);
                    if x % 2 == 1 {
                        ids.reverse();
                    }
                    if x % 11 == 3 {
                        // Answered before (or without) its use.
                        ids.push(next + u32::from(x % 2));
                    }
                    if x % 5 == 4 {
                        ids.pop();
                    }
                    if ids.is_empty() {
                        continue;
                    }
                    let blocks: Vec<String> = ids
                        .iter()
                        .enumerate()
                        .map(|(j, id)| {
                            let n = usize::from(size) * (j + 1) % 900;
                            format!(
                                r#"{{"type":"tool_result","tool_use_id":"t{id}","content":"{}"}}"#,
                                "x".repeat(n)
                            )
                        })
                        .collect();
                    h.push(
                        Message::from_json(&format!(
                            r#"{{"role":"user","content":[{}]}}"#,
                            blocks.join(",")
                        ))
                        .unwrap(),
                    );
                }
                _ => h.push(
                    Message::from_json(&format!(
                        r#"{{"role":"user","content":"{}"}}"#,
                        "y".repeat(usize::from(size % 200))
                    ))
                    .unwrap(),
                ),
            }
        }
        h
    }

    /// Same sources, same shape, same bytes sent.
    fn same_view(a: &WireView<'_>, b: &WireView<'_>) -> bool {
        a.messages.len() == b.messages.len()
            && a.messages.iter().zip(&b.messages).all(|(x, y)| {
                std::ptr::eq(x.source, y.source)
                    && x.blocks.is_some() == y.blocks.is_some()
                    && x.sent_blocks()
                        .map(|b| b.to_json())
                        .eq(y.sent_blocks().map(|b| b.to_json()))
                    && x.blocks
                        .iter()
                        .flatten()
                        .map(|b| !matches!(b, WireBlock::Original(_)))
                        .eq(y
                            .blocks
                            .iter()
                            .flatten()
                            .map(|b| !matches!(b, WireBlock::Original(_))))
            })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

        /// The `recorded` compaction: call by call, `advance` gives the
        /// view a fresh run's `view` gives, each result cleared from the
        /// first history its record names on, and never before.
        #[test]
        fn recorded_advance_equals_view(
            steps in proptest::collection::vec((0u8..4, proptest::prelude::any::<u8>(), proptest::prelude::any::<u16>()), 0..40),
            picks in proptest::collection::vec((proptest::prelude::any::<u8>(), 0usize..6), 0..6),
            calls in proptest::collection::vec(0u8..10, 1..30),
        ) {
            let h = random_history(&steps);
            // (message after the result, tool_use id) of every result.
            let results: Vec<(usize, String)> = h
                .iter()
                .enumerate()
                .flat_map(|(i, m)| m.blocks().iter().filter_map(move |b| match b.kind() {
                    BlockKind::ToolResult { tool_use_id, .. } => Some((i + 1, tool_use_id.to_string())),
                    _ => None,
                }))
                .collect();
            let mut record: Vec<tracecost_trace::Call> = Vec::new();
            if !results.is_empty() {
                let mut picked: Vec<(usize, String)> = picks
                    .iter()
                    .map(|(r, later)| {
                        let (at, id) = &results[usize::from(*r) % results.len()];
                        ((at + later).min(h.len()), id.clone())
                    })
                    .collect();
                picked.sort();
                for (from, id) in picked {
                    record.push(tracecost_trace::Call { messages: from, cleared: vec![id], ..Default::default() });
                }
            }
            let fresh = || CompactionRun::new(&Compaction::Recorded).with_record(&record);
            let mut run = fresh();
            let mut state = ViewState::default();
            let mut len = 0usize;
            let mut previous: Option<WireView<'_>> = None;
            for step in calls {
                len = match step {
                    0 => len / 2,
                    1 => len,
                    n => len + usize::from(n) * 2,
                }
                .min(h.len());
                let history = &h[..len];
                let first = run.advance(history, 0, &Chars, &mut state).unwrap();
                let reference = fresh().view(history, 0, &Chars).unwrap();
                proptest::prop_assert!(same_view(&state.view, &reference.view), "view at {len}");
                proptest::prop_assert_eq!(&state.compacted[..], &reference.compacted[..], "compacted at {}", len);
                proptest::prop_assert!(first <= len);
                if let Some(prev) = &previous {
                    for i in 0..first {
                        proptest::prop_assert!(prev.messages[i].same_objects(&state.view.messages[i]), "message {} before first {}", i, first);
                    }
                }
                previous = Some(state.view.clone());
                let due: std::collections::BTreeSet<&str> = record
                    .iter()
                    .filter(|c| c.messages <= len)
                    .flat_map(|c| c.cleared.iter().map(String::as_str))
                    .collect();
                let got: std::collections::BTreeSet<&str> = state.compacted.iter().map(|s| &**s).collect();
                proptest::prop_assert_eq!(got, due.into_iter().filter(|id| results.iter().any(|(at, r)| r == id && *at <= len)).collect());
            }
        }

        /// Call by call, `advance` gives exactly the view and compacted
        /// list a fresh run's `view` gives for that history, and keeps the
        /// messages before the first it returns as they were.
        #[test]
        fn peers_advance_equals_view(
            steps in proptest::collection::vec((0u8..4, proptest::prelude::any::<u8>(), proptest::prelude::any::<u16>()), 0..40),
            calls in proptest::collection::vec((0u8..10, 0u8..3), 1..30),
            langchain in proptest::prelude::any::<bool>(),
            trigger in proptest::prop_oneof![proptest::strategy::Just(0u64), 0u64..4000],
            keep in 0usize..4,
            at_least in proptest::prop_oneof![proptest::strategy::Just(0u64), 1u64..600],
            exclude in proptest::prelude::any::<bool>(),
            inputs in proptest::prelude::any::<bool>(),
        ) {
            let h = random_history(&steps);
            let params = super::super::PeerParams {
                trigger,
                keep,
                clear_at_least: at_least,
                exclude_tools: if exclude { vec!["read".to_owned()] } else { Vec::new() },
                clear_tool_inputs: inputs,
            };
            let policy = if langchain {
                Compaction::LangchainClear(super::super::LangchainClear(params))
            } else {
                Compaction::ClearToolUses(super::super::ClearToolUses(params))
            };
            let mut run = CompactionRun::new(&policy);
            let mut state = ViewState::default();
            let mut len = 0usize;
            let mut previous: Option<WireView<'_>> = None;
            for (step, fixed) in calls {
                // Mostly longer, sometimes shorter or the same.
                len = match step {
                    0 => len / 2,
                    1 => len,
                    n => len + usize::from(n) * 2,
                }
                .min(h.len());
                let fixed = [0, 300, 3000][usize::from(fixed)];
                let history = &h[..len];
                let first = run.advance(history, fixed, &Chars, &mut state).unwrap();
                let reference = CompactionRun::new(&policy).view(history, fixed, &Chars).unwrap();
                proptest::prop_assert!(same_view(&state.view, &reference.view), "view at {len}");
                proptest::prop_assert_eq!(&state.compacted[..], &reference.compacted[..], "compacted at {}", len);
                proptest::prop_assert!(first <= len);
                if let Some(prev) = &previous {
                    for i in 0..first {
                        proptest::prop_assert!(prev.messages[i].same_objects(&state.view.messages[i]), "message {} before first {}", i, first);
                    }
                }
                previous = Some(state.view.clone());
            }
        }
    }
}

//! Peers' compaction strategies, replayed as policies so the ledger can be
//! compared with them on the same trace.
//!
//! Both run on a copy of the conversation at every request and keep nothing
//! between requests; what they clear is decided afresh each time from the
//! full history, as the real implementations do.

use std::collections::{HashMap, HashSet};
use std::fmt;

use tracecost_engine::message::{BlockKind, Content, Message, ToolResultContent};

/// The text the Anthropic API puts in place of a cleared tool result. The
/// exact server string is not published; this stands in for it (its few
/// tokens are all that matter to cost).
pub const ANTHROPIC_CLEARED_PLACEHOLDER: &str = "[Old tool result content cleared]";

/// What Claude Code sends in place of a result its microcompaction cleared.
/// Its token size is what the record's usage makes of it: the status quo's
/// calibration shares a call's recorded growth among what it sent.
pub const CLAUDE_CODE_CLEARED_PLACEHOLDER: &str = "[Old tool result content cleared]";

/// LangChain's default placeholder.
pub const LANGCHAIN_PLACEHOLDER: &str = "[cleared]";

/// Parameters shared by both peers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PeerParams {
    /// Clear only when the count exceeds this many tokens (strict `>`).
    pub trigger: u64,
    /// Tool uses kept, counted from the end.
    pub keep: usize,
    /// Minimum tokens to clear (0 = no minimum).
    pub clear_at_least: u64,
    /// Tools whose results are never cleared (sorted, unique).
    pub exclude_tools: Vec<String>,
    /// Also clear the matching tool_use inputs.
    pub clear_tool_inputs: bool,
}

impl PeerParams {
    /// `clear_tool_uses_20250919` defaults: trigger 100,000 input tokens,
    /// keep 3 tool uses.
    pub fn anthropic_defaults() -> Self {
        Self {
            trigger: 100_000,
            keep: 3,
            clear_at_least: 0,
            exclude_tools: Vec::new(),
            clear_tool_inputs: false,
        }
    }

    /// `ClearToolUsesEdit` defaults: trigger 100,000, keep 3.
    pub fn langchain_defaults() -> Self {
        Self::anthropic_defaults()
    }

    pub(super) fn fmt_params(
        &self,
        f: &mut fmt::Formatter<'_>,
        defaults: &PeerParams,
    ) -> fmt::Result {
        write!(f, "trigger={},keep={}", self.trigger, self.keep)?;
        if self.clear_at_least != defaults.clear_at_least {
            write!(f, ",at-least={}", self.clear_at_least)?;
        }
        if !self.exclude_tools.is_empty() {
            write!(f, ",exclude={}", self.exclude_tools.join("|"))?;
        }
        if self.clear_tool_inputs != defaults.clear_tool_inputs {
            write!(f, ",inputs={}", self.clear_tool_inputs)?;
        }
        Ok(())
    }
}

/// What a peer decided to clear at one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Clearing {
    /// tool_use ids whose results are replaced, oldest first.
    pub results: Vec<String>,
    /// tool_use ids whose inputs are replaced by `{}`.
    pub inputs: Vec<String>,
    /// The placeholder text.
    pub placeholder: &'static str,
}

/// `(tool_use id, tool name)` of every tool_use, in order.
fn tool_uses(history: &[Message]) -> Vec<(&str, &str)> {
    history
        .iter()
        .flat_map(Message::blocks)
        .filter_map(|b| match b.kind() {
            BlockKind::ToolUse { id, name } => Some((&**id, &**name)),
            _ => None,
        })
        .collect()
}

/// Anthropic's server-side `clear_tool_uses_20250919`.
///
/// When the request's input tokens exceed `trigger`, every tool result but
/// those of the last `keep` tool uses (and of excluded tools) is cleared,
/// oldest first. With `clear_at_least`, if that clears fewer tokens than
/// the minimum, nothing is cleared — the documented purpose being to batch
/// cache breaks. Token counts come from the caller (the cost model).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClearToolUses(pub PeerParams);

impl ClearToolUses {
    /// Decides what to clear. `input_tokens` is the whole request's input
    /// before clearing; `saved(id)` the tokens clearing result `id` (and its
    /// input, when `clear_tool_inputs`) would remove.
    pub fn select(
        &self,
        history: &[Message],
        input_tokens: u64,
        saved: &dyn Fn(&str) -> u64,
    ) -> Clearing {
        let p = &self.0;
        let mut out = Clearing {
            placeholder: ANTHROPIC_CLEARED_PLACEHOLDER,
            ..Clearing::default()
        };
        if input_tokens <= p.trigger {
            return out;
        }
        let uses = tool_uses(history);
        let answered: HashSet<&str> = history
            .iter()
            .flat_map(Message::blocks)
            .filter_map(|b| match b.kind() {
                BlockKind::ToolResult { tool_use_id, .. } => Some(&**tool_use_id),
                _ => None,
            })
            .collect();
        let cut = uses.len().saturating_sub(p.keep);
        let eligible: Vec<&str> = uses[..cut]
            .iter()
            .filter(|(id, name)| {
                answered.contains(id) && !p.exclude_tools.iter().any(|x| x == name)
            })
            .map(|(id, _)| *id)
            .collect();
        let total: u64 = eligible.iter().map(|id| saved(id)).sum();
        if p.clear_at_least > 0 && total < p.clear_at_least {
            return out;
        }
        out.results = eligible.iter().map(|s| s.to_string()).collect();
        if p.clear_tool_inputs {
            out.inputs = out.results.clone();
        }
        out
    }
}

/// LangChain's `ClearToolUsesEdit`, with its approximate token counter.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LangchainClear(pub PeerParams);

impl LangchainClear {
    /// Decides what to clear, following `ClearToolUsesEdit.apply` step by
    /// step (see FACTS: count; `count <= trigger` → nothing; candidates are
    /// the tool messages but the last `keep`; oldest first, skipping
    /// excluded tools; with `clear_at_least`, recount after each clear and
    /// stop once enough was cleared — clearing everything eligible even when
    /// the minimum cannot be reached).
    pub fn select(&self, history: &[Message], cache: &mut ReprCache) -> Clearing {
        let p = &self.0;
        let mut out = Clearing {
            placeholder: LANGCHAIN_PLACEHOLDER,
            ..Clearing::default()
        };
        let names: HashMap<&str, &str> = tool_uses(history).into_iter().collect();
        let name_chars = |id: &str| names.get(id).map_or(0, |n| n.chars().count());
        // Each message as counted with nothing cleared; `first` their sum.
        let base: Vec<u64> = history
            .iter()
            .map(|m| cache.untouched(m, &name_chars))
            .collect();
        let first: u64 = base.iter().sum();
        if first <= p.trigger {
            return out;
        }
        // Tool messages, in order: one per tool_result block.
        let results: Vec<&str> = history
            .iter()
            .flat_map(Message::blocks)
            .filter_map(|b| match b.kind() {
                BlockKind::ToolResult { tool_use_id, .. } => Some(&**tool_use_id),
                _ => None,
            })
            .collect();
        if p.keep >= results.len() {
            return out;
        }
        // With a minimum, the count is taken again after each clear. Only
        // the messages holding the cleared id's result (or its input) count
        // differently from the last count, so only they are counted again:
        // `now` is exactly the whole history's count under `out`.
        let touching: HashMap<&str, Vec<usize>> = if p.clear_at_least > 0 {
            messages_touching(history, p.clear_tool_inputs)
        } else {
            HashMap::new()
        };
        let mut now = first;
        let mut counted: HashMap<usize, u64> = HashMap::new();
        let mut cleared: HashSet<&str> = HashSet::new();
        for id in &results[..results.len() - p.keep] {
            let name = names.get(id).copied().unwrap_or("");
            if p.exclude_tools.iter().any(|x| x == name) {
                continue;
            }
            out.results.push((*id).to_owned());
            if p.clear_tool_inputs {
                out.inputs.push((*id).to_owned());
            }
            if p.clear_at_least > 0 {
                cleared.insert(id);
                for &mi in touching.get(id).map(Vec::as_slice).unwrap_or(&[]) {
                    let was = counted.get(&mi).copied().unwrap_or(base[mi]);
                    let is = message_tokens(
                        &history[mi],
                        &name_chars,
                        &|x| cleared.contains(x),
                        &|x| p.clear_tool_inputs && cleared.contains(x),
                        out.placeholder,
                    );
                    now = now - was + is;
                    counted.insert(mi, is);
                }
                if first.saturating_sub(now) >= p.clear_at_least {
                    break;
                }
            }
        }
        out
    }
}

/// Per tool id, the messages whose LangChain count depends on whether that
/// id is cleared: those holding a result for it, and (when inputs are
/// cleared too) a use of it. Each message once, in order.
fn messages_touching(history: &[Message], inputs: bool) -> HashMap<&str, Vec<usize>> {
    let mut out: HashMap<&str, Vec<usize>> = HashMap::new();
    for (mi, m) in history.iter().enumerate() {
        for b in m.blocks() {
            let id = match b.kind() {
                BlockKind::ToolResult { tool_use_id, .. } => &**tool_use_id,
                BlockKind::ToolUse { id, .. } if inputs => &**id,
                _ => continue,
            };
            let list = out.entry(id).or_default();
            if list.last() != Some(&mi) {
                list.push(mi);
            }
        }
    }
    out
}

/// `count_tokens_approximately` over the history as LangChain would hold it,
/// with `clearing` applied: user text → HumanMessage, each tool_result → a
/// ToolMessage (named after its tool), assistant → AIMessage (string content
/// when it is a single text block, else the list of blocks). Per message:
/// characters (content; list content sums text lengths, adds 85 tokens per
/// image and the Python `repr` length of other blocks) + tool_call_id length
/// for tool messages + role length + name length; tokens += ceil(chars / 4)
/// + 3; the total is rounded up.
pub fn langchain_approx_tokens(
    history: &[Message],
    clearing: &Clearing,
    cache: &mut ReprCache,
) -> u64 {
    let names: HashMap<&str, &str> = tool_uses(history).into_iter().collect();
    let name_chars = |id: &str| names.get(id).map_or(0, |n| n.chars().count());
    let results: HashSet<&str> = clearing.results.iter().map(|s| &**s).collect();
    let inputs: HashSet<&str> = clearing.inputs.iter().map(|s| &**s).collect();
    let touched = |m: &Message| {
        m.blocks().iter().any(|b| match b.kind() {
            BlockKind::ToolResult { tool_use_id, .. } => results.contains(&**tool_use_id),
            BlockKind::ToolUse { id, .. } => inputs.contains(&**id),
            _ => false,
        })
    };
    let mut tokens = 0;
    for m in history {
        tokens += if touched(m) {
            message_tokens(
                m,
                &name_chars,
                &|id| results.contains(id),
                &|id| inputs.contains(id),
                clearing.placeholder,
            )
        } else {
            cache.untouched(m, &name_chars)
        };
    }
    tokens
}

/// Per-message token counts of messages nothing was cleared from, each
/// with the name lengths of its tool results it was counted with.
///
/// A message's count depends on the history only through the names of the
/// tools its results answer (a later tool_use may name a result that came
/// first, or rename an id used twice): an entry is used only while those
/// names are the same, so the count is always the one of this history.
#[derive(Debug, Default)]
pub struct ReprCache(HashMap<usize, (u64, Box<[usize]>)>);

impl ReprCache {
    /// `m`'s count with nothing cleared, its results named by `name_chars`
    /// (tool_use id → characters of the tool's name, 0 when unnamed). `m`'s
    /// address names it while the history lives.
    pub(super) fn untouched(&mut self, m: &Message, name_chars: &dyn Fn(&str) -> usize) -> u64 {
        let result_ids = || {
            m.blocks().iter().filter_map(|b| match b.kind() {
                BlockKind::ToolResult { tool_use_id, .. } => Some(&**tool_use_id),
                _ => None,
            })
        };
        let key = m as *const Message as usize;
        if let Some((tokens, names)) = self.0.get(&key)
            && names.len() == result_ids().count()
            && result_ids()
                .zip(names.iter())
                .all(|(id, &n)| name_chars(id) == n)
        {
            return *tokens;
        }
        let tokens = untouched_tokens(m, name_chars);
        let names = result_ids().map(name_chars).collect();
        self.0.insert(key, (tokens, names));
        tokens
    }
}

/// `m`'s count with nothing cleared, its results named by `name_chars`,
/// counted afresh ([`ReprCache::untouched`] keeps it).
pub(super) fn untouched_tokens(m: &Message, name_chars: &dyn Fn(&str) -> usize) -> u64 {
    let none = |_: &str| false;
    message_tokens(m, name_chars, &none, &none, "")
}

/// One message's count. `name_chars(id)`: characters of the name of the
/// tool `id` calls; `cleared(id)`: whether result `id` is replaced by
/// `placeholder`; `inputs_cleared(id)`: whether use `id`'s input is `{}`.
pub(super) fn message_tokens(
    m: &Message,
    name_chars: &dyn Fn(&str) -> usize,
    cleared: &dyn Fn(&str) -> bool,
    inputs_cleared: &dyn Fn(&str) -> bool,
    placeholder: &str,
) -> u64 {
    let mut tokens = 0u64;
    let mut add = |chars: usize, extra_tokens: u64| {
        tokens += (chars as u64).div_ceil(4) + 3 + extra_tokens;
    };
    match (m.role(), m.content()) {
        (role, Content::Text(t)) => add(t.chars().count() + role_name(role).len(), 0),
        (tracecost_engine::message::Role::User, Content::Blocks(blocks)) => {
            // Consecutive non-result blocks form one HumanMessage.
            let (mut human_chars, mut human_images, mut open) = (0usize, 0u64, false);
            for b in blocks {
                match b.kind() {
                    BlockKind::ToolResult {
                        tool_use_id,
                        content,
                        ..
                    } => {
                        if open {
                            add(human_chars + "user".len(), human_images * 85);
                            (human_chars, human_images, open) = (0, 0, false);
                        }
                        let (chars, images) = if cleared(tool_use_id) {
                            (placeholder.chars().count(), 0)
                        } else {
                            match content {
                                ToolResultContent::Empty => (0, 0),
                                ToolResultContent::Text(t) => (t.chars().count(), 0),
                                ToolResultContent::Blocks(bs) => {
                                    list_chars(bs.iter().map(|b| (b.kind(), b.to_json())))
                                }
                            }
                        };
                        add(
                            chars
                                + tool_use_id.chars().count()
                                + "tool".len()
                                + name_chars(tool_use_id),
                            images * 85,
                        );
                    }
                    other => {
                        let (c, i) = list_chars(std::iter::once((other, b.to_json())));
                        human_chars += c;
                        human_images += i;
                        open = true;
                    }
                }
            }
            if open {
                add(human_chars + "user".len(), human_images * 85);
            }
        }
        (tracecost_engine::message::Role::Assistant, Content::Blocks(blocks)) => {
            if let [only] = &blocks[..]
                && let BlockKind::Text { text } = only.kind()
            {
                add(text.chars().count() + "assistant".len(), 0);
                return tokens;
            }
            let (chars, images) = list_chars(blocks.iter().map(|b| {
                let json = match b.kind() {
                    BlockKind::ToolUse { id, .. } if inputs_cleared(id) => {
                        let mut f = b.fields().into_owned();
                        f.set("input", tracecost_engine::json::raw_json("{}".to_owned()));
                        f.to_json()
                    }
                    _ => b.to_json(),
                };
                (b.kind(), json)
            }));
            add(chars + "assistant".len(), images * 85);
        }
    }
    tokens
}

fn role_name(role: tracecost_engine::message::Role) -> &'static str {
    match role {
        tracecost_engine::message::Role::User => "user",
        tracecost_engine::message::Role::Assistant => "assistant",
    }
}

/// Characters and image count of list content, as LangChain counts it.
fn list_chars<'a>(blocks: impl Iterator<Item = (&'a BlockKind, String)>) -> (usize, u64) {
    let (mut chars, mut images) = (0usize, 0u64);
    for (kind, json) in blocks {
        match kind {
            BlockKind::Text { text } => chars += text.chars().count(),
            BlockKind::Image => images += 1,
            _ => chars += py_repr_len(&json),
        }
    }
    (chars, images)
}

/// Length of Python's `repr()` of the dict a JSON object becomes.
fn py_repr_len(json: &str) -> usize {
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(v) => py_repr(&v).chars().count(),
        Err(_) => json.chars().count(),
    }
}

/// Python's `repr()` of a JSON value (dict/list/str/int/float/bool/None).
pub(crate) fn py_repr(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (None, Some(u), _) => u.to_string(),
            (_, _, Some(f)) => format!("{f:?}"),
            _ => n.to_string(),
        },
        Value::String(s) => py_str_repr(s),
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", py_str_repr(k), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn py_str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push(quote);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history(results: &[(&str, &str, usize)]) -> Vec<Message> {
        let mut h = vec![Message::from_json(r#"{"role":"user","content":"go"}"#).unwrap()];
        for (id, name, size) in results {
            h.push(
                Message::from_json(&format!(
                    r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"{name}","input":{{"q":1}}}}]}}"#
                ))
                .unwrap(),
            );
            h.push(
                Message::from_json(&format!(
                    r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"{}"}}]}}"#,
                    "x".repeat(*size)
                ))
                .unwrap(),
            );
        }
        h
    }

    fn params(
        trigger: u64,
        keep: usize,
        at_least: u64,
        exclude: &[&str],
        inputs: bool,
    ) -> PeerParams {
        PeerParams {
            trigger,
            keep,
            clear_at_least: at_least,
            exclude_tools: exclude.iter().map(|s| s.to_string()).collect(),
            clear_tool_inputs: inputs,
        }
    }

    #[test]
    fn anthropic_clears_all_but_last_keep_when_over_trigger() {
        let h = history(&[
            ("a", "web", 100),
            ("b", "read", 100),
            ("c", "web", 100),
            ("d", "web", 100),
        ]);
        let saved = |_: &str| 25;
        let s = ClearToolUses(params(1000, 2, 0, &[], false));
        assert!(
            s.select(&h, 1000, &saved).results.is_empty(),
            "trigger is strict"
        );
        assert_eq!(s.select(&h, 1001, &saved).results, ["a", "b"]);
        let s = ClearToolUses(params(1000, 2, 0, &["read"], true));
        let c = s.select(&h, 5000, &saved);
        assert_eq!(
            (c.results.as_slice(), c.inputs.as_slice()),
            (&["a".to_string()][..], &["a".to_string()][..])
        );
        // clear_at_least not reachable: nothing at all is cleared.
        let s = ClearToolUses(params(1000, 2, 51, &[], false));
        assert!(s.select(&h, 5000, &saved).results.is_empty());
        let s = ClearToolUses(params(1000, 2, 50, &[], false));
        assert_eq!(s.select(&h, 5000, &saved).results.len(), 2);
        // keep larger than the number of tool uses.
        let s = ClearToolUses(params(0, 10, 0, &[], false));
        assert!(s.select(&h, 5000, &saved).results.is_empty());
    }

    #[test]
    fn langchain_counts_like_count_tokens_approximately() {
        // "go": 2 chars + "user" 4 = 6 → 2 + 3 = 5 tokens.
        let h = vec![Message::from_json(r#"{"role":"user","content":"go"}"#).unwrap()];
        assert_eq!(
            langchain_approx_tokens(&h, &Clearing::default(), &mut ReprCache::default()),
            5
        );
        let h = history(&[("ab", "web", 40)]);
        // tool_use message: list content, repr of the tool_use dict.
        let repr = "{'type': 'tool_use', 'id': 'ab', 'name': 'web', 'input': {'q': 1}}";
        let ai = (repr.len() + 9).div_ceil(4) as u64 + 3;
        // tool message: 40 + len("ab") + len("tool") + len("web").
        let tool = (40u64 + 2 + 4 + 3).div_ceil(4) + 3;
        assert_eq!(
            langchain_approx_tokens(&h, &Clearing::default(), &mut ReprCache::default()),
            5 + ai + tool
        );
    }

    #[test]
    fn langchain_edge_cases() {
        let h = history(&[
            ("a", "web", 400),
            ("b", "read", 400),
            ("c", "web", 400),
            ("d", "web", 400),
        ]);
        let total = langchain_approx_tokens(&h, &Clearing::default(), &mut ReprCache::default());
        let s = LangchainClear(params(total, 1, 0, &[], false));
        assert!(
            s.select(&h, &mut ReprCache::default()).results.is_empty(),
            "count <= trigger does nothing"
        );
        let s = LangchainClear(params(0, 1, 0, &["read"], false));
        assert_eq!(s.select(&h, &mut ReprCache::default()).results, ["a", "c"]);
        // clear_at_least: stop as soon as enough was cleared.
        let s = LangchainClear(params(0, 1, 50, &[], true));
        let c = s.select(&h, &mut ReprCache::default());
        assert_eq!(c.results, ["a"]);
        assert_eq!(c.inputs, ["a"]);
        // Unreachable minimum: clears everything eligible anyway (unlike the API).
        let s = LangchainClear(params(0, 1, 1_000_000, &[], false));
        assert_eq!(
            s.select(&h, &mut ReprCache::default()).results,
            ["a", "b", "c"]
        );
        // keep >= number of tool messages: nothing.
        let s = LangchainClear(params(0, 4, 0, &[], false));
        assert!(s.select(&h, &mut ReprCache::default()).results.is_empty());
    }

    #[test]
    fn python_repr_quoting() {
        assert_eq!(py_str_repr("it's"), "\"it's\"");
        assert_eq!(py_str_repr("a'\"b"), "'a\\'\"b'");
        assert_eq!(py_str_repr("x\ny"), "'x\\ny'");
        let v: serde_json::Value =
            serde_json::from_str(r#"{"a":[1,2.5,true,null],"b":"é"}"#).unwrap();
        assert_eq!(py_repr(&v), "{'a': [1, 2.5, True, None], 'b': 'é'}");
    }
}

//! The validation core: a trace document checked and converted, every
//! error naming its place.

use std::collections::HashSet;
use std::fmt;

use super::doc::{CallDoc, MarkerDoc, MessagesDoc, TraceDoc, UsageDoc};
use super::error::{TraceError, Warning};
use crate::{Call, Prompt, RecordedUsage, Trace};
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::json::RawObject;
use tracecost_engine::message::{BlockKind, ContentBlock, Message, ShapeError, ToolDefinition};
use tracecost_engine::wire::{BlockRef, MAX_BREAKPOINTS, Marker, Ttl};

/// More tokens than any model's context window by two orders of magnitude:
/// a usage figure above this is a corrupt record, not a big request.
pub const ABSURD_TOKENS: u64 = 100_000_000;

pub(super) struct Cx<'p> {
    pub(super) path: &'p str,
    pub(super) warnings: Vec<Warning>,
}

impl Cx<'_> {
    pub(super) fn invalid(
        &self,
        pointer: impl Into<String>,
        expected: impl fmt::Display,
    ) -> TraceError {
        TraceError::Invalid {
            path: self.path.to_owned(),
            pointer: pointer.into(),
            message: format!("expected {expected}"),
        }
    }

    fn shape(&self, base: &str, e: ShapeError) -> TraceError {
        TraceError::Invalid {
            path: self.path.to_owned(),
            pointer: format!("{base}{}", e.pointer),
            message: format!("expected {}", e.expected),
        }
    }

    fn warn(&mut self, pointer: String, message: String) {
        self.warnings.push(Warning {
            path: self.path.to_owned(),
            pointer,
            message,
        });
    }

    fn prompt(
        &mut self,
        base: &str,
        system: Vec<RawObject>,
        tools: Vec<RawObject>,
    ) -> Result<Prompt, TraceError> {
        let mut p = Prompt::default();
        for (i, o) in system.into_iter().enumerate() {
            let b = ContentBlock::from_object(o)
                .map_err(|e| self.shape(&format!("{base}/system/{i}"), e))?;
            if !matches!(b.kind(), BlockKind::Text { .. }) {
                return Err(self.invalid(
                    format!("{base}/system/{i}/type"),
                    "\"text\" (system blocks are text)",
                ));
            }
            p.system.push(b);
        }
        let mut names = HashSet::new();
        for (i, o) in tools.into_iter().enumerate() {
            let t = ToolDefinition::from_object(o)
                .map_err(|e| self.shape(&format!("{base}/tools/{i}"), e))?;
            if !names.insert(t.name().to_owned()) {
                return Err(self.invalid(
                    format!("{base}/tools/{i}/name"),
                    format!("a unique tool name, {:?} is defined twice", t.name()),
                ));
            }
            p.tools.push(t);
        }
        Ok(p)
    }

    pub(super) fn trace(&mut self, doc: TraceDoc, base: &str) -> Result<Trace, TraceError> {
        let name = doc
            .name
            .ok_or_else(|| self.invalid(format!("{base}/name"), "a \"name\" string"))?;
        let provider = match doc.provider.as_deref() {
            None => ProviderKind::Anthropic,
            Some(p) => p
                .parse()
                .map_err(
                    |e: tracecost_engine::cache::CacheConfigError| TraceError::Invalid {
                        path: self.path.to_owned(),
                        pointer: format!("{base}/provider"),
                        // The parse error already says what was expected.
                        message: e.to_string(),
                    },
                )?,
        };
        let model = doc
            .model
            .ok_or_else(|| self.invalid(format!("{base}/model"), "a \"model\" string"))?;
        if doc.hidden_prefix_tokens > ABSURD_TOKENS {
            return Err(self.invalid(
                format!("{base}/hidden_prefix_tokens"),
                format!(
                    "a token count of at most {ABSURD_TOKENS}, found {}",
                    doc.hidden_prefix_tokens
                ),
            ));
        }
        let first_prompt = self.prompt(base, doc.system, doc.tools)?;
        let raw_messages = doc
            .messages
            .ok_or_else(|| self.invalid(format!("{base}/messages"), "a \"messages\" array"))?;
        let messages = self.messages(base, raw_messages)?;
        let raw_calls = doc
            .calls
            .ok_or_else(|| self.invalid(format!("{base}/calls"), "a \"calls\" array"))?;
        let (prompts, calls) = self.calls(base, raw_calls, first_prompt, &messages)?;
        Ok(Trace {
            name,
            description: doc.description,
            provider,
            model,
            status_quo: doc.status_quo,
            project: doc.project,
            account: doc.account,
            session: doc.session,
            hidden_prefix_tokens: doc.hidden_prefix_tokens,
            source: None,
            prompts,
            messages,
            calls,
        })
    }

    /// The calls, in order: each sends a prefix of the history at least as
    /// long as the one before, under the prompt version in force.
    fn calls(
        &mut self,
        base: &str,
        raw: Vec<CallDoc>,
        first_prompt: Prompt,
        messages: &[Message],
    ) -> Result<(Vec<Prompt>, Vec<Call>), TraceError> {
        let mut prompts = vec![first_prompt];
        let mut calls = Vec::with_capacity(raw.len());
        let mut prev_messages = 0usize;
        let mut prev_start: Option<u64> = None;
        for (k, c) in raw.into_iter().enumerate() {
            let at = format!("{base}/calls/{k}");
            let n = self.sent_count(&at, c.messages, messages.len(), prev_messages)?;
            prev_messages = n;
            if let (Some(p), Some(s)) = (prev_start, c.start_ms)
                && s < p
            {
                self.warn(
                    format!("{at}/start_ms"),
                    format!("starts {} ms before the previous call", p - s),
                );
            }
            prev_start = c.start_ms.or(prev_start);
            self.prompt_version(&at, c.system.map(|s| *s), c.tools.map(|t| *t), &mut prompts)?;
            let prompt = prompts.len() - 1;
            let markers = match c.cache_markers {
                None => None,
                Some(list) => Some(self.markers(&at, *list, &prompts[prompt], &messages[..n])?),
            };
            let usage = match c.usage {
                None => None,
                Some(u) => Some(self.usage(&at, *u)?),
            };
            self.cleared(&at, &c.cleared, &messages[..n])?;
            calls.push(Call {
                messages: n,
                start_ms: c.start_ms,
                model: c.model,
                prompt,
                markers,
                usage: usage.map(Box::new),
                cleared: c.cleared,
                compacted: c.compacted.map(|d| {
                    Box::new(crate::RecordedCompaction {
                        manual: d.manual,
                        pre_tokens: d.pre_tokens,
                        post_tokens: d.post_tokens,
                        summary: d.summary,
                    })
                }),
            });
        }
        Ok((prompts, calls))
    }

    /// How many messages a call sends: at least one, no more than the
    /// history holds, and no fewer than the call before (histories only
    /// grow).
    fn sent_count(
        &self,
        at: &str,
        sent: u64,
        history: usize,
        prev_messages: usize,
    ) -> Result<usize, TraceError> {
        let n = usize::try_from(sent).unwrap_or(usize::MAX);
        if n == 0 {
            return Err(self.invalid(format!("{at}/messages"), "at least 1 message"));
        }
        if n > history {
            return Err(self.invalid(
                format!("{at}/messages"),
                format!("at most {history} (the history's length), found {n}"),
            ));
        }
        if n < prev_messages {
            return Err(self.invalid(
                format!("{at}/messages"),
                format!("at least {prev_messages} (the previous call's count; histories only grow), found {n}"),
            ));
        }
        Ok(n)
    }

    /// A call that resends its system prompt or its tools starts a new
    /// prompt version, the member it leaves out taken from the version in
    /// force.
    fn prompt_version(
        &mut self,
        at: &str,
        system: Option<Vec<RawObject>>,
        tools: Option<Vec<RawObject>>,
        prompts: &mut Vec<Prompt>,
    ) -> Result<(), TraceError> {
        if system.is_none() && tools.is_none() {
            return Ok(());
        }
        let last = prompts.last().cloned().unwrap_or_default();
        let system = match system {
            Some(s) => self.prompt(at, s, Vec::new())?.system,
            None => last.system,
        };
        let tools = match tools {
            Some(t) => self.prompt(at, Vec::new(), t)?.tools,
            None => last.tools,
        };
        // A call that resends the prompt in force does not start a new
        // version: the writer leaves such a repeat out, so a written trace
        // must load to the same prompts.
        let p = Prompt { system, tools };
        if prompts.last() != Some(&p) {
            prompts.push(p);
        }
        Ok(())
    }

    /// Each id a call says it cleared answers a tool use among the
    /// messages it sent.
    fn cleared(&self, at: &str, cleared: &[String], sent: &[Message]) -> Result<(), TraceError> {
        for (i, id) in cleared.iter().enumerate() {
            if !answered(sent, id) {
                return Err(self.invalid(
                    format!("{at}/cleared/{i}"),
                    format!(
                        "the id of a tool_result among the {} messages the call sent, found {}",
                        sent.len(),
                        tracecost_engine::handle::one_line(&format!("{id:?}"), 200)
                    ),
                ));
            }
        }
        Ok(())
    }

    fn messages(&mut self, base: &str, raw: MessagesDoc) -> Result<Vec<Message>, TraceError> {
        let MessagesDoc {
            messages: mut out,
            error,
        } = raw;
        let mut tool_uses: HashSet<std::sync::Arc<str>> = HashSet::new();
        let mut answered: HashSet<std::sync::Arc<str>> = HashSet::new();
        for (i, m) in out.iter_mut().enumerate() {
            // Made only for an error or a warning: a long trace's messages
            // are read by the million.
            let at = |j: usize, member: &str| format!("{base}/messages/{i}/content/{j}/{member}");
            // A result's id is its tool_use's, held once for both.
            m.share_tool_use_ids(|id| tool_uses.get(id).cloned());
            for (j, b) in m.blocks().iter().enumerate() {
                match b.kind() {
                    BlockKind::ToolUse { id, .. } if !tool_uses.insert(id.clone()) => {
                        return Err(self.invalid(
                            at(j, "id"),
                            format!("a unique tool_use id, {id:?} is used twice"),
                        ));
                    }
                    BlockKind::ToolResult { tool_use_id, .. } => {
                        if !tool_uses.contains(tool_use_id) {
                            return Err(self.invalid(
                                at(j, "tool_use_id"),
                                format!("the id of an earlier tool_use, {tool_use_id:?} has none"),
                            ));
                        }
                        if !answered.insert(tool_use_id.clone()) {
                            return Err(self.invalid(
                                at(j, "tool_use_id"),
                                format!("one tool_result per tool_use, {tool_use_id:?} is answered twice"),
                            ));
                        }
                    }
                    BlockKind::Other { block_type } => {
                        self.warn(
                            at(j, "type"),
                            format!("unknown block type {block_type:?}, kept as is"),
                        );
                    }
                    _ => {}
                }
            }
        }
        // A message that was not one, once those before it passed.
        if let Some((i, e)) = error {
            return Err(self.shape(&format!("{base}/messages/{i}"), e));
        }
        Ok(out)
    }

    fn markers(
        &self,
        at: &str,
        list: Vec<MarkerDoc>,
        prompt: &Prompt,
        history: &[Message],
    ) -> Result<Vec<Marker>, TraceError> {
        if list.len() > MAX_BREAKPOINTS {
            return Err(self.invalid(
                format!("{at}/cache_markers"),
                format!("at most {MAX_BREAKPOINTS} markers, found {}", list.len()),
            ));
        }
        let mut out = Vec::with_capacity(list.len());
        for (i, m) in list.into_iter().enumerate() {
            let p = format!("{at}/cache_markers/{i}");
            let ttl = match m.ttl.as_deref() {
                None | Some("5m") => Ttl::FiveMinutes,
                Some("1h") => Ttl::OneHour,
                Some(other) => {
                    return Err(self.invalid(
                        format!("{p}/ttl"),
                        format!("\"5m\" or \"1h\", found {other:?}"),
                    ));
                }
            };
            let target = match (m.tool, m.system, m.message, m.block) {
                (Some(t), None, None, None) if t < prompt.tools.len() => BlockRef::Tool(t),
                (Some(_), None, None, None) => {
                    return Err(self.invalid(
                        format!("{p}/tool"),
                        format!("a tool index below {}", prompt.tools.len()),
                    ));
                }
                (None, Some(s), None, None) if s < prompt.system.len() => BlockRef::System(s),
                (None, Some(_), None, None) => {
                    return Err(self.invalid(
                        format!("{p}/system"),
                        format!("a system block index below {}", prompt.system.len()),
                    ));
                }
                (None, None, Some(mi), b) => {
                    let block = b.unwrap_or(0);
                    let Some(msg) = history.get(mi) else {
                        return Err(self.invalid(
                            format!("{p}/message"),
                            format!(
                                "a message index below {} (this call's messages)",
                                history.len()
                            ),
                        ));
                    };
                    let n_blocks = msg.blocks().len().max(1);
                    if block >= n_blocks {
                        return Err(self.invalid(
                            format!("{p}/block"),
                            format!("a block index below {n_blocks}"),
                        ));
                    }
                    BlockRef::Message { message: mi, block }
                }
                _ => {
                    return Err(self.invalid(&p, "exactly one of {\"tool\": i}, {\"system\": i} or {\"message\": i, \"block\": j}"));
                }
            };
            out.push(Marker { at: target, ttl });
        }
        Ok(out)
    }

    fn usage(&mut self, at: &str, u: UsageDoc) -> Result<RecordedUsage, TraceError> {
        let (e5, e1) = match &u.cache_creation {
            Some(c) => (c.ephemeral_5m_input_tokens, c.ephemeral_1h_input_tokens),
            None => (None, None),
        };
        let fields = [
            ("input_tokens", u.input_tokens),
            ("cache_creation_input_tokens", u.cache_creation_input_tokens),
            ("cache_creation/ephemeral_5m_input_tokens", e5),
            ("cache_creation/ephemeral_1h_input_tokens", e1),
            ("cache_read_input_tokens", u.cache_read_input_tokens),
            ("output_tokens", u.output_tokens),
            ("reasoning_tokens", u.reasoning_tokens),
        ];
        for (name, v) in fields {
            if let Some(v) = v
                && v > ABSURD_TOKENS
            {
                return Err(self.invalid(
                    format!("{at}/usage/{name}"),
                    format!("a token count of at most {ABSURD_TOKENS}, found {v}"),
                ));
            }
        }
        if let (Some(total), Some(a), Some(b)) = (u.cache_creation_input_tokens, e5, e1)
            && a + b != total
        {
            self.warn(
                    format!("{at}/usage/cache_creation"),
                    format!("5m ({a}) + 1h ({b}) parts do not add up to cache_creation_input_tokens ({total})"),
                );
        }
        Ok(RecordedUsage {
            input_tokens: u.input_tokens,
            cache_creation_input_tokens: u.cache_creation_input_tokens,
            ephemeral_5m_input_tokens: e5,
            ephemeral_1h_input_tokens: e1,
            cache_read_input_tokens: u.cache_read_input_tokens,
            output_tokens: u.output_tokens,
            modifiers: crate::RecordedModifiers {
                fast: u.fast,
                regional: u.regional,
                batch: u.batch,
            },
            reasoning_tokens: u.reasoning_tokens,
        })
    }
}

/// Whether a tool_result for `id` is among `messages`.
fn answered(messages: &[Message], id: &str) -> bool {
    messages.iter().any(|m| {
        m.blocks().iter().any(|b| {
            matches!(b.kind(), tracecost_engine::message::BlockKind::ToolResult { tool_use_id, .. } if &**tool_use_id == id)
        })
    })
}

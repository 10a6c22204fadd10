//! Exports of an agent fleet's model calls as the observability stacks
//! keep them, one JSON record per line, each call recording the whole
//! conversation so far (as the real SDKs do, so an export grows
//! quadratically with a conversation's length):
//!
//! - **Langfuse**: the v2 SDK's ingestion batches, a `trace-create` (with
//!   the session) and per call a `generation-create` (the Anthropic input,
//!   system message first) and a `generation-update` (the reply, and
//!   `usageDetails` in Langfuse's keys, whose `input` excludes the cache);
//! - **LangSmith**: the client's `/runs/batch` bodies for a wrapped
//!   Anthropic client, per call a `post` (the request's parameters) and a
//!   `patch` (the reply with `usage_metadata`, whose input includes the
//!   cache), the session as `extra.metadata.thread_id`;
//! - **OpenAI Agents SDK**: ingest bodies of `generation` spans in the
//!   Chat Completions shape (tool calls, `tool` messages), on an OpenAI
//!   model, usage whose input includes the cached tokens, the session as
//!   the trace's `group_id`.
//!
//! The conversations are [`crate::session`]s. These are the inputs of the
//! importers' large-input measurements (docs/robustness.md).

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::otel_export::OtelExportStats;
use tracecost_engine::message::{BlockKind, Content, Message, Role, ToolResultContent};
use tracecost_trace::Trace;

/// Characters per token in the recorded usage.
const CHARS_PER_TOKEN: u64 = 4;

/// Which stack's records to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObservabilityFormat {
    /// Langfuse v2 ingestion batches.
    Langfuse,
    /// LangSmith run batches of a wrapped Anthropic client.
    Langsmith,
    /// OpenAI Agents SDK ingest bodies.
    OpenaiAgents,
}

/// One call of a conversation, as every format needs it.
struct CallRecord<'a> {
    conversation: usize,
    index: usize,
    start_ms: u64,
    system: &'a str,
    history: &'a [Message],
    reply: Option<&'a Message>,
    model: &'a str,
    /// Uncached input, written, read, output (tokens).
    usage: (u64, u64, u64, u64),
}

/// Writes `conversations` sessions of `calls` calls (seeds `seed`,
/// `seed + 1`, …) to `out` in `format`, one record per line.
pub fn write_observability_export(
    format: ObservabilityFormat,
    conversations: usize,
    calls: usize,
    seed: u64,
    out: &mut dyn Write,
) -> io::Result<OtelExportStats> {
    let mut stats = OtelExportStats::default();
    // 2026-12-01T00:00:00Z, conversations an hour apart.
    let base_ms: u64 = 1_796_083_200_000;
    for c in 0..conversations {
        let trace: Trace = crate::session(calls, seed.wrapping_add(c as u64));
        let system: String = trace.prompts[0]
            .system
            .iter()
            .filter_map(|b| match b.kind() {
                BlockKind::Text { text } => Some(text.to_string()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let start = base_ms + seed.wrapping_add(c as u64) * 3_600_000;
        let mut written = 0u64;
        let mut lines = Vec::new();
        if format == ObservabilityFormat::Langfuse {
            lines.push(langfuse_trace(seed, c));
        }
        for (k, call) in trace.calls.iter().enumerate() {
            let history = trace.history_of(call);
            let chars: usize =
                system.len() + history.iter().map(|m| m.to_json().len()).sum::<usize>();
            let prompt = chars as u64 / CHARS_PER_TOKEN;
            let read = written.min(prompt);
            let write = prompt - read;
            written = prompt;
            let reply = trace.messages.get(call.messages);
            let output = reply.map_or(0, |r| r.to_json().len() as u64 / CHARS_PER_TOKEN);
            let record = CallRecord {
                conversation: c,
                index: k,
                start_ms: start + k as u64 * 20_000,
                system: &system,
                history,
                reply,
                model: &trace.model,
                usage: (0, write, read, output),
            };
            lines.push(match format {
                ObservabilityFormat::Langfuse => langfuse_call(seed, &record),
                ObservabilityFormat::Langsmith => langsmith_call(seed, &record),
                ObservabilityFormat::OpenaiAgents => agents_call(seed, &record),
            });
            stats.calls += 1;
        }
        for line in lines {
            let line = line.to_string();
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
            stats.bytes += line.len() as u64 + 1;
        }
        stats.conversations += 1;
    }
    Ok(stats)
}

fn time(ms: u64) -> String {
    crate::text::rfc3339_millis(ms)
}

fn messages(r: &CallRecord) -> Vec<Value> {
    let mut ms = vec![json!({"role": "system", "content": [{"type": "text", "text": r.system}]})];
    ms.extend(
        r.history
            .iter()
            .filter_map(|m| serde_json::from_str(&m.to_json()).ok()),
    );
    ms
}

fn reply_json(r: &CallRecord) -> Value {
    r.reply
        .and_then(|m| serde_json::from_str(&m.to_json()).ok())
        .unwrap_or(Value::Null)
}

fn langfuse_trace(seed: u64, c: usize) -> Value {
    json!({"batch": [{
        "id": format!("ev-{seed}-{c}-trace"),
        "type": "trace-create",
        "body": {"id": format!("trace-{seed}-{c}"), "name": "agent-run", "sessionId": format!("session-{seed}-{c}")},
    }]})
}

fn langfuse_call(seed: u64, r: &CallRecord) -> Value {
    let id = format!("gen-{seed}-{}-{}", r.conversation, r.index);
    let trace = format!("trace-{seed}-{}", r.conversation);
    let (input, write, read, output) = r.usage;
    json!({"batch": [
        {"id": format!("ev-{id}-c"), "type": "generation-create", "body": {
            "id": id, "traceId": trace, "name": "anthropic.messages.create",
            "startTime": time(r.start_ms), "model": r.model, "input": messages(r),
        }},
        {"id": format!("ev-{id}-u"), "type": "generation-update", "body": {
            "id": id, "traceId": trace, "endTime": time(r.start_ms + 4_000),
            "output": reply_json(r), "model": r.model,
            "usageDetails": {"input": input, "output": output, "input_cache_read": read, "input_cache_creation": write},
        }},
    ]})
}

fn langsmith_call(seed: u64, r: &CallRecord) -> Value {
    let id = format!("run-{seed}-{}-{}", r.conversation, r.index);
    let trace = format!("run-{seed}-{}", r.conversation);
    let (input, write, read, output) = r.usage;
    let mut reply = reply_json(r);
    if let Value::Object(o) = &mut reply {
        o.insert("model".into(), json!(r.model));
        o.insert(
            "usage_metadata".into(),
            json!({
                "input_tokens": input + write + read, "output_tokens": output,
                "input_token_details": {"cache_read": read, "cache_creation": write},
            }),
        );
    }
    let meta = json!({"metadata": {"thread_id": format!("thread-{seed}-{}", r.conversation), "ls_provider": "anthropic"}});
    json!({
        "post": [{
            "id": id, "trace_id": trace, "run_type": "llm", "name": "ChatAnthropic",
            "start_time": time(r.start_ms), "session_name": "generated", "extra": meta,
            "inputs": {"model": r.model, "max_tokens": 4096, "messages": messages(r)},
        }],
        "patch": [{
            "id": id, "trace_id": trace, "run_type": "llm", "end_time": time(r.start_ms + 4_000),
            "outputs": reply,
        }],
    })
}

/// The model the Agents SDK export names (an OpenAI one: the SDK's
/// default provider).
const AGENTS_MODEL: &str = "gpt-4.1";

fn agents_call(seed: u64, r: &CallRecord) -> Value {
    let trace = format!("trace_{seed:08x}{:024x}", r.conversation);
    let (input, write, read, output) = r.usage;
    let mut input_msgs = vec![json!({"role": "system", "content": r.system})];
    for m in r.history {
        input_msgs.extend(chat_messages(m));
    }
    let reply: Vec<Value> = r.reply.map(chat_messages).unwrap_or_default();
    let span = json!({
        "object": "trace.span", "id": format!("span_{:024x}", r.index), "trace_id": trace,
        "started_at": time(r.start_ms), "ended_at": time(r.start_ms + 4_000),
        "span_data": {
            "type": "generation", "model": AGENTS_MODEL, "input": input_msgs, "output": reply,
            // Reads only: OpenAI's cache writes are free and not counted.
            "usage": {"input_tokens": input + write + read, "output_tokens": output,
                      "input_tokens_details": {"cached_tokens": read}},
        },
    });
    let mut data = Vec::new();
    if r.index == 0 {
        data.push(json!({"object": "trace", "id": trace, "workflow_name": "agent", "group_id": format!("group-{seed}-{}", r.conversation)}));
    }
    data.push(span);
    json!({"data": data})
}

/// A message in the Chat Completions shape: tool results become `tool`
/// messages, tool uses the assistant's `tool_calls`.
fn chat_messages(m: &Message) -> Vec<Value> {
    let mut text = String::new();
    let mut calls = Vec::new();
    let mut results = Vec::new();
    if let Content::Text(t) = m.content() {
        text.push_str(t);
    }
    for b in m.blocks() {
        match b.kind() {
            BlockKind::Text { text: t } => text.push_str(t),
            BlockKind::ToolUse { id, name } => {
                let args = b
                    .tool_input()
                    .map_or("{}".to_owned(), |r| r.get().to_owned());
                calls.push(json!({"id": id.as_ref(), "type": "function", "function": {"name": name.as_ref(), "arguments": args}}));
            }
            BlockKind::ToolResult {
                tool_use_id,
                content,
                ..
            } => {
                let t = match content {
                    ToolResultContent::Text(t) => t.to_string(),
                    _ => b.tool_result_payload().unwrap_or("").to_owned(),
                };
                results.push(
                    json!({"role": "tool", "tool_call_id": tool_use_id.as_ref(), "content": t}),
                );
            }
            _ => {}
        }
    }
    match m.role() {
        Role::Assistant => {
            let mut o = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
            if !calls.is_empty() {
                o["tool_calls"] = Value::Array(calls);
            }
            vec![o]
        }
        _ => {
            let mut out = results;
            if !text.is_empty() {
                out.push(json!({"role": "user", "content": text}));
            }
            out
        }
    }
}

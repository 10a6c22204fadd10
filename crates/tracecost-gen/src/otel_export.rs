//! An OpenTelemetry export of an agent fleet's model calls, as the
//! Collector's file exporter writes it: one OTLP JSON `TracesData` per line
//! (a batch of spans), each model call a span in the GenAI conventions
//! with its content on it (`gen_ai.system_instructions`,
//! `gen_ai.input.messages` with the whole conversation so far,
//! `gen_ai.output.messages`), the conversation id, the response id and
//! usage whose input includes the cache (each call reads what the call
//! before wrote and writes the rest).
//!
//! The conversations are [`crate::session`]s; like a request log, the
//! export grows quadratically with a conversation's length. It is the input
//! of the OpenTelemetry import benchmark and of its large-input test.

use std::io::{self, Write};

use serde_json::{Value, json};

use tracecost_engine::message::{BlockKind, Content, Message, Role, ToolResultContent};
use tracecost_trace::Trace;

/// Spans per `TracesData` line (the batch span processor's export batches
/// are of this order).
const SPANS_PER_LINE: usize = 10;

/// Characters per token in the recorded usage.
const CHARS_PER_TOKEN: u64 = 4;

/// What a written export holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OtelExportStats {
    /// Conversations written.
    pub conversations: usize,
    /// Model-call spans written.
    pub calls: usize,
    /// Bytes written.
    pub bytes: u64,
}

fn attr(key: &str, v: Value) -> Value {
    let value = match v {
        Value::Number(n) => json!({ "intValue": n.to_string() }),
        Value::String(s) => json!({ "stringValue": s }),
        other => json!({ "stringValue": other.to_string() }),
    };
    json!({ "key": key, "value": value })
}

/// A message in the conventions' parts schema.
fn parts(m: &Message) -> Value {
    let mut out = Vec::new();
    let mut tool_answers = false;
    if let Content::Text(text) = m.content() {
        out.push(json!({"type": "text", "content": text.as_ref()}));
    }
    for b in m.blocks() {
        match b.kind() {
            BlockKind::Text { text } => out.push(json!({"type": "text", "content": text.as_ref()})),
            BlockKind::ToolUse { id, name } => {
                let args: Value = b
                    .tool_input()
                    .and_then(|r| serde_json::from_str(r.get()).ok())
                    .unwrap_or(json!({}));
                out.push(json!({"type": "tool_call", "id": id.as_ref(), "name": name.as_ref(), "arguments": args}));
            }
            BlockKind::ToolResult {
                tool_use_id,
                content,
                ..
            } => {
                tool_answers = true;
                let text = match content {
                    ToolResultContent::Text(t) => t.to_string(),
                    _ => b.tool_result_payload().unwrap_or("").to_owned(),
                };
                out.push(json!({"type": "tool_call_response", "id": tool_use_id.as_ref(), "response": text}));
            }
            // Thinking, images and documents: the parts schema's
            // reasoning and media, which the importer drops; kept out.
            _ => {}
        }
    }
    let role = match (m.role(), tool_answers) {
        (Role::Assistant, _) => "assistant",
        (_, true) => "tool",
        _ => "user",
    };
    json!({"role": role, "parts": out})
}

/// Writes `conversations` sessions of `calls` calls (seeds `seed`,
/// `seed + 1`, …) as one OTLP JSON export to `out`.
pub fn write_otel_export(
    conversations: usize,
    calls: usize,
    seed: u64,
    out: &mut dyn Write,
) -> io::Result<OtelExportStats> {
    let mut stats = OtelExportStats::default();
    let base_ns: u64 = 1_796_198_886_000_000_000;
    for c in 0..conversations {
        let trace: Trace = crate::session(calls, seed.wrapping_add(c as u64));
        let system: Vec<Value> = trace.prompts[0]
            .system
            .iter()
            .filter_map(|b| match b.kind() {
                BlockKind::Text { text } => Some(json!({"type": "text", "content": text.as_ref()})),
                _ => None,
            })
            .collect();
        let system = Value::Array(system).to_string();
        let prefix_tokens = system.len() as u64 / CHARS_PER_TOKEN;
        let trace_id = format!("{:032x}", (seed as u128) << 64 | c as u128);
        let mut spans = Vec::new();
        let mut written = 0u64;
        // An hour apart, numbered by seed: exports written in parts
        // (seeds 0, 10, …) follow one another.
        let start = base_ns + seed.wrapping_add(c as u64) * 3_600_000_000_000;
        for (k, call) in trace.calls.iter().enumerate() {
            let history = trace.history_of(call);
            let input: Vec<Value> = history.iter().map(parts).collect();
            let input = Value::Array(input).to_string();
            let reply = trace
                .messages
                .get(call.messages)
                .map(parts)
                .unwrap_or(json!({}));
            let prompt = prefix_tokens + input.len() as u64 / CHARS_PER_TOKEN;
            let read = written.min(prompt);
            let write = prompt - read;
            written = prompt;
            let t = start + k as u64 * 20_000_000_000;
            let span_id = format!("{:016x}", (seed << 40) ^ ((c as u64) << 20 | k as u64));
            spans.push(json!({
                "traceId": trace_id,
                "spanId": span_id,
                "name": format!("chat {}", trace.model),
                "kind": 3,
                "startTimeUnixNano": t.to_string(),
                "endTimeUnixNano": (t + 4_000_000_000).to_string(),
                "attributes": [
                    attr("gen_ai.operation.name", json!("chat")),
                    attr("gen_ai.provider.name", json!("anthropic")),
                    attr("gen_ai.request.model", json!(trace.model)),
                    attr("gen_ai.response.model", json!(trace.model)),
                    attr("gen_ai.response.id", json!(format!("msg_{seed}_{c:06}_{k:04}"))),
                    attr("gen_ai.conversation.id", json!(format!("conv-{seed}-{c}"))),
                    attr("gen_ai.usage.input_tokens", json!(prompt)),
                    attr("gen_ai.usage.cache_read.input_tokens", json!(read)),
                    attr("gen_ai.usage.cache_creation.input_tokens", json!(write)),
                    attr("gen_ai.usage.output_tokens", json!(reply.to_string().len() as u64 / CHARS_PER_TOKEN)),
                    attr("gen_ai.system_instructions", json!(system)),
                    attr("gen_ai.input.messages", json!(input)),
                    attr("gen_ai.output.messages", json!(Value::Array(vec![reply]).to_string())),
                ],
                "status": {}
            }));
            stats.calls += 1;
        }
        for batch in spans.chunks(SPANS_PER_LINE) {
            let line = json!({"resourceSpans": [{
                "resource": {"attributes": [attr("service.name", json!("agent"))]},
                "scopeSpans": [{
                    "scope": {"name": "opentelemetry.instrumentation.anthropic", "version": "0.62.4"},
                    "spans": batch,
                }],
            }]})
            .to_string();
            out.write_all(line.as_bytes())?;
            out.write_all(b"\n")?;
            stats.bytes += line.len() as u64 + 1;
        }
        stats.conversations += 1;
    }
    Ok(stats)
}

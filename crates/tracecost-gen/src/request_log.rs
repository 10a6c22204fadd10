//! An Anthropic Messages API request log, as an HTTP-recording proxy saves
//! an agent's traffic: one JSON line per exchange, each request resending
//! the whole conversation so far.
//!
//! The conversation is the coding-agent session of [`super::session`] (tool
//! calls and results of realistic sizes, parallel tool calls, follow-ups,
//! breaks). Each line is the plain form the request-log importer reads,
//! `{"timestamp": <ms>, "request": <body>, "response": <body>}`: the request
//! carries Claude Code's markers (last tool, last system block, last block of
//! the conversation), the response the assistant's reply and a usage object
//! consistent with those markers — each request reads what the previous one
//! wrote when it came within the 5-minute TTL, and writes the rest.
//!
//! Tool results are longer than the session's (see [`RESULT_STRETCH`]). The
//! log grows quadratically with the number of calls: 100 calls of the
//! default seed make about 128 MB, which is what the import benchmark reads.

use std::io::{self, Write};

use tracecost_engine::json::push_json_string;
use tracecost_engine::message::{BlockKind, ContentBlock, Message, Role, ToolResultContent};
use tracecost_engine::rewrite::WireView;
use tracecost_engine::wire::{BlockRef, Marker, Request, Ttl};
use tracecost_trace::Trace;

/// Characters of compact JSON per token in the recorded usage: roughly what
/// Claude's tokenizer gives on code, logs and English prose.
const CHARS_PER_TOKEN: u64 = 35;
/// …per ten tokens ([`CHARS_PER_TOKEN`] is in tenths of a character).
const TENTHS: u64 = 10;

/// Tokens the API adds for the tool-use system prompt (Claude 4 family,
/// `tool_choice` auto).
const TOOL_PROMPT_TOKENS: u64 = 346;

/// The `max_tokens` every request asks for (Claude Code's default).
const MAX_TOKENS: u64 = 32_000;

/// What a written log holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLogStats {
    /// Lines (exchanges) written.
    pub calls: usize,
    /// Bytes written.
    pub bytes: u64,
}

/// Writes the request log of a `calls`-call session (0 is treated as 1)
/// drawn from `seed` to `out`. The same arguments give the same bytes.
pub fn write_request_log(
    calls: usize,
    seed: u64,
    out: &mut dyn Write,
) -> io::Result<RequestLogStats> {
    let mut trace = super::session(calls, seed);
    for m in &mut trace.messages {
        *m = stretched_results(m);
    }
    let mut out = CountingWriter {
        inner: out,
        bytes: 0,
    };
    let mut previous: Option<(u64, u64)> = None;
    for i in 0..trace.calls.len() {
        let line = exchange_line(&trace, i, &mut previous);
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(RequestLogStats {
        calls: trace.calls.len(),
        bytes: out.bytes,
    })
}

struct CountingWriter<'a> {
    inner: &'a mut dyn Write,
    bytes: u64,
}

impl Write for CountingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// One exchange: call `i` of `trace`. `previous` is the start and prompt
/// tokens of the call before, updated here.
fn exchange_line(trace: &Trace, i: usize, previous: &mut Option<(u64, u64)>) -> String {
    let call = &trace.calls[i];
    let prompt = &trace.prompts[call.prompt];
    let sent = &trace.messages[..call.messages];
    let markers = claude_code_markers(prompt.tools.len(), prompt.system.len(), sent);
    let view = WireView::unchanged(sent);
    let body = Request {
        tools: prompt.tools.iter().collect(),
        system: &prompt.system,
        messages: &view,
        markers: &markers,
    }
    .to_json();
    let unmarked = Request {
        tools: prompt.tools.iter().collect(),
        system: &prompt.system,
        messages: &view,
        markers: &[],
    }
    .to_json();
    let model = call.model.as_deref().unwrap_or(&trace.model);
    let start = call.start_ms.unwrap_or(0);

    // Every block is before the last marker, so nothing is uncached but
    // the request framing; the cache holds the previous request's prefix
    // when it came within the TTL (which every hit refreshes).
    let total = TOOL_PROMPT_TOKENS + (unmarked.chars().count() as u64) * TENTHS / CHARS_PER_TOKEN;
    let read = match *previous {
        Some((at, tokens)) if start.saturating_sub(at) <= Ttl::FiveMinutes.millis() => {
            tokens.min(total)
        }
        _ => 0,
    };
    *previous = Some((start, total));
    let uncached = 3;
    let written = total.saturating_sub(read + uncached);
    let output = call
        .usage
        .as_ref()
        .and_then(|u| u.output_tokens)
        .unwrap_or(1);

    let reply = trace
        .messages
        .get(call.messages)
        .filter(|m| m.role() == Role::Assistant);
    let mut line = String::with_capacity(body.len() + 4096);
    line.push_str("{\"timestamp\":");
    line.push_str(&start.to_string());
    line.push_str(",\"request\":{\"model\":");
    push_json_string(&mut line, model);
    line.push_str(&format!(",\"max_tokens\":{MAX_TOKENS},"));
    // `Request::to_json` is `{"tools":…,"system":…,"messages":…}`.
    line.push_str(body.strip_prefix('{').unwrap_or(&body));
    line.push_str(",\"response\":{\"id\":\"msg_");
    line.push_str(&format!("{:016x}{:08x}", start, i));
    line.push_str("\",\"type\":\"message\",\"role\":\"assistant\",\"model\":");
    push_json_string(&mut line, model);
    line.push_str(",\"content\":");
    write_content(&mut line, reply);
    let stop = match reply {
        Some(m)
            if m.blocks()
                .iter()
                .any(|b| matches!(b.kind(), BlockKind::ToolUse { .. })) =>
        {
            "tool_use"
        }
        _ => "end_turn",
    };
    line.push_str(&format!(
        ",\"stop_reason\":\"{stop}\",\"stop_sequence\":null,\"usage\":{{\"input_tokens\":{uncached},\"cache_creation_input_tokens\":{written},\"cache_read_input_tokens\":{read},\"cache_creation\":{{\"ephemeral_5m_input_tokens\":{written},\"ephemeral_1h_input_tokens\":0}},\"output_tokens\":{output},\"service_tier\":\"standard\"}}}}}}"
    ));
    line
}

/// `m` with each string tool result stretched to [`RESULT_STRETCH`] times
/// its length: agent logs carry longer results than the session
/// generator's (whole files, full test logs), and this brings 100 calls to
/// about 128 MB. The text is repeated, the last copy cut at a line end.
fn stretched_results(m: &Message) -> Message {
    let stretched = |b: &ContentBlock| match b.kind() {
        BlockKind::ToolResult {
            content: ToolResultContent::Text(t),
            ..
        } => b.with_tool_result_text(&stretch(t)),
        _ => None,
    };
    if !m.blocks().iter().any(|b| stretched(b).is_some()) {
        return m.clone();
    }
    let blocks = m
        .blocks()
        .iter()
        .map(|b| stretched(b).unwrap_or_else(|| b.clone()))
        .collect();
    Message::new(m.role(), blocks)
}

/// How much longer tool results are than the session generator's, as a
/// fraction (9/4).
const RESULT_STRETCH: (usize, usize) = (9, 4);

fn stretch(t: &str) -> String {
    let target = t.len() * RESULT_STRETCH.0 / RESULT_STRETCH.1;
    let mut out = t.to_owned();
    while !t.is_empty() && out.len() + 1 < target {
        let room = target - out.len() - 1;
        let copy = if room >= t.len() {
            t
        } else {
            let mut end = room;
            while !t.is_char_boundary(end) {
                end -= 1;
            }
            let part = &t[..end];
            part.rfind('\n').map_or(part, |i| &part[..i])
        };
        if copy.is_empty() {
            break;
        }
        out.push('\n');
        out.push_str(copy);
        if copy.len() < t.len() {
            break;
        }
    }
    out
}

/// The reply's content array (empty when the history has no reply here).
fn write_content(out: &mut String, reply: Option<&Message>) {
    out.push('[');
    for (k, b) in reply
        .map(Message::blocks)
        .unwrap_or_default()
        .iter()
        .enumerate()
    {
        if k > 0 {
            out.push(',');
        }
        b.fields().write_json(out);
    }
    out.push(']');
}

/// Claude Code's markers: the last tool, the last system block and the
/// last markable block of the conversation, all 5-minute.
fn claude_code_markers(tools: usize, system: usize, sent: &[Message]) -> Vec<Marker> {
    let ttl = Ttl::FiveMinutes;
    let mut out = Vec::new();
    if tools > 0 {
        out.push(Marker {
            at: BlockRef::Tool(tools - 1),
            ttl,
        });
    }
    if system > 0 {
        out.push(Marker {
            at: BlockRef::System(system - 1),
            ttl,
        });
    }
    let tail = sent.iter().enumerate().rev().find_map(|(mi, m)| {
        if m.blocks().is_empty() {
            return Some(BlockRef::Message {
                message: mi,
                block: 0,
            });
        }
        m.blocks()
            .iter()
            .rposition(|b| b.is_markable())
            .map(|bi| BlockRef::Message {
                message: mi,
                block: bi,
            })
    });
    out.extend(tail.map(|at| Marker { at, ttl }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_arguments_same_bytes_and_every_line_is_an_exchange() {
        let mut a = Vec::new();
        let mut b = Vec::new();
        let sa = write_request_log(6, 3, &mut a).unwrap();
        write_request_log(6, 3, &mut b).unwrap();
        assert_eq!(a, b);
        assert_eq!(sa.calls, 6);
        assert_eq!(sa.bytes, a.len() as u64);
        let text = String::from_utf8(a).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6);
        for l in &lines {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert!(v["request"]["messages"].is_array());
            assert!(v["response"]["usage"]["cache_read_input_tokens"].is_u64());
        }
        // Each request resends the previous one's messages.
        let count = |l: &str| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["request"]["messages"].as_array().unwrap().len()
        };
        assert!(lines.windows(2).all(|w| count(w[0]) < count(w[1])));
    }

    #[test]
    fn results_are_stretched_by_whole_lines() {
        assert_eq!(stretch("ab\ncd"), "ab\ncd\nab\ncd");
        // The last copy is cut at the end of its last whole line.
        let t = format!("ab\n{}", "x".repeat(38));
        assert_eq!(stretch(&t), format!("{t}\n{t}\nab"));
        assert_eq!(stretch(""), "");
        let s = stretch("é".repeat(10).as_str());
        assert!(s.starts_with(&"é".repeat(10)) && s.len() > 40);
    }
}

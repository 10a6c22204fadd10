//! Writing canonical trace files.
//!
//! One message, call, system block or tool per line, so traces diff well in
//! version control; every value keeps its original bytes. The same trace
//! always gives the same bytes.

use super::{Call, Prompt, RecordedUsage, TRACE_FORMAT, Trace};
use crate::engine::json::push_json_string;
use crate::engine::wire::BlockRef;

/// The canonical JSON of one trace, newline-terminated.
pub fn to_json(trace: &Trace) -> String {
    let mut out = String::new();
    out.push_str("{\"format\":");
    push_json_string(&mut out, TRACE_FORMAT);
    out.push_str(",\n");
    write_trace_members(&mut out, trace);
    out.push_str("}\n");
    out
}

/// The canonical JSON of several traces in one file.
pub fn traces_to_json(traces: &[Trace]) -> String {
    if let [one] = traces {
        return to_json(one);
    }
    let mut out = String::new();
    out.push_str("{\"format\":");
    push_json_string(&mut out, TRACE_FORMAT);
    out.push_str(",\"traces\":[\n");
    for (i, t) in traces.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        out.push('{');
        write_trace_members(&mut out, t);
        out.push('}');
    }
    out.push_str("\n]}\n");
    out
}

fn write_trace_members(out: &mut String, t: &Trace) {
    out.push_str("\"name\":");
    push_json_string(out, &t.name);
    out.push_str(",\n\"description\":");
    push_json_string(out, &t.description);
    out.push_str(",\n\"provider\":");
    push_json_string(out, t.provider.as_str());
    out.push_str(",\n\"model\":");
    push_json_string(out, &t.model);
    if t.hidden_prefix_tokens > 0 {
        out.push_str(&format!(
            ",\n\"hidden_prefix_tokens\":{}",
            t.hidden_prefix_tokens
        ));
    }
    let first = t.prompts.first().cloned().unwrap_or_default();
    write_prompt(out, &first, true, true);
    out.push_str(",\n\"messages\":[");
    for (i, m) in t.messages.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        m.write_json(out);
    }
    out.push_str("\n],\n\"calls\":[");
    let mut prev_prompt = 0;
    for (i, c) in t.calls.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        write_call(out, t, c, prev_prompt);
        prev_prompt = c.prompt;
    }
    out.push_str("\n]\n");
}

fn write_prompt(out: &mut String, p: &Prompt, system: bool, tools: bool) {
    if system {
        out.push_str(",\n\"system\":[");
        for (i, b) in p.system.iter().enumerate() {
            out.push_str(if i == 0 { "\n" } else { ",\n" });
            b.fields().write_json(out);
        }
        out.push_str("\n]");
    }
    if tools {
        out.push_str(",\n\"tools\":[");
        for (i, td) in p.tools.iter().enumerate() {
            out.push_str(if i == 0 { "\n" } else { ",\n" });
            td.fields().write_json(out);
        }
        out.push_str("\n]");
    }
}

fn write_call(out: &mut String, t: &Trace, c: &Call, prev_prompt: usize) {
    out.push_str(&format!("{{\"messages\":{}", c.messages));
    if let Some(s) = c.start_ms {
        out.push_str(&format!(",\"start_ms\":{s}"));
    }
    if let Some(m) = &c.model {
        out.push_str(",\"model\":");
        push_json_string(out, m);
    }
    if c.prompt != prev_prompt {
        let (prev, cur) = (t.prompts.get(prev_prompt), t.prompts.get(c.prompt));
        if let (Some(prev), Some(cur)) = (prev, cur) {
            write_prompt(out, cur, prev.system != cur.system, prev.tools != cur.tools);
        }
    }
    if let Some(markers) = &c.markers {
        out.push_str(",\"cache_markers\":[");
        for (i, m) in markers.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            match m.at {
                BlockRef::Tool(n) => out.push_str(&format!("{{\"tool\":{n}")),
                BlockRef::System(n) => out.push_str(&format!("{{\"system\":{n}")),
                BlockRef::Message { message, block } => {
                    out.push_str(&format!("{{\"message\":{message},\"block\":{block}"))
                }
            }
            out.push_str(&format!(",\"ttl\":\"{}\"}}", m.ttl.as_str()));
        }
        out.push(']');
    }
    if let Some(u) = &c.usage {
        out.push_str(",\"usage\":");
        write_usage(out, u);
    }
    out.push('}');
}

fn write_usage(out: &mut String, u: &RecordedUsage) {
    let mut parts: Vec<String> = Vec::new();
    let mut field = |name: &str, v: Option<u64>| {
        if let Some(v) = v {
            parts.push(format!("\"{name}\":{v}"));
        }
    };
    field("input_tokens", u.input_tokens);
    field("cache_creation_input_tokens", u.cache_creation_input_tokens);
    field("cache_read_input_tokens", u.cache_read_input_tokens);
    field("output_tokens", u.output_tokens);
    if u.ephemeral_5m_input_tokens.is_some() || u.ephemeral_1h_input_tokens.is_some() {
        let mut inner = Vec::new();
        if let Some(v) = u.ephemeral_5m_input_tokens {
            inner.push(format!("\"ephemeral_5m_input_tokens\":{v}"));
        }
        if let Some(v) = u.ephemeral_1h_input_tokens {
            inner.push(format!("\"ephemeral_1h_input_tokens\":{v}"));
        }
        parts.push(format!("\"cache_creation\":{{{}}}", inner.join(",")));
    }
    out.push('{');
    out.push_str(&parts.join(","));
    out.push('}');
}

//! Writing canonical trace files.
//!
//! One message, call, system block or tool per line, so traces diff well in
//! version control; every value keeps its original bytes. The same trace
//! always gives the same bytes.

use std::borrow::Borrow;
use std::io::{self, Write};

use super::{Call, Prompt, RecordedUsage, TRACE_FORMAT, Trace};
use tracecost_engine::json::push_json_string;
use tracecost_engine::wire::BlockRef;

/// The canonical JSON of one trace, newline-terminated.
pub fn to_json(trace: &Trace) -> String {
    let mut out = String::new();
    write_single(&mut out, trace);
    out
}

/// One trace as one line of a JSON Lines file of traces: its canonical
/// JSON with the layout's line breaks taken out (a JSON string holds none
/// of its own), newline-terminated.
pub fn to_json_line(trace: &Trace) -> String {
    let mut line: String = to_json(trace).split('\n').collect();
    line.push('\n');
    line
}

/// The canonical JSON of several traces in one file: one trace alone is
/// written as [`to_json`] writes it, several inside a `traces` list (an
/// empty list gives an empty `traces` list, which does not load).
pub fn traces_to_json(traces: &[Trace]) -> String {
    if traces.is_empty() {
        return multi_header() + MULTI_FOOTER;
    }
    let mut w = TraceWriter::<_, &Trace>::new(Vec::new());
    // Writing to memory cannot fail, and the writer writes UTF-8.
    for t in traces {
        let _ = w.push(t);
    }
    let bytes = w.finish().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

/// Writes traces to `W` one at a time, in exactly the bytes
/// [`traces_to_json`] gives for the same list, without holding them all:
/// an importer hands each trace over as it is built and it is written out
/// in chunks. Only the first trace is held back, until a second one says
/// whether the file is a single trace or a `traces` list.
///
/// It takes traces as `T`: owned [`Trace`]s from an importer, or `&Trace`
/// to write traces held elsewhere without copying them.
pub struct TraceWriter<W: Write, T: Borrow<Trace> = Trace> {
    out: W,
    buf: String,
    first: Option<T>,
    count: usize,
}

/// Members of a trace are written out whenever this much is buffered.
const CHUNK: usize = 1 << 20;
const MULTI_FOOTER: &str = "\n]}\n";

impl<W: Write, T: Borrow<Trace>> TraceWriter<W, T> {
    /// A writer with nothing written yet.
    pub fn new(out: W) -> Self {
        Self {
            out,
            buf: String::new(),
            first: None,
            count: 0,
        }
    }

    /// The number of traces handed over so far.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Writes one more trace.
    pub fn push(&mut self, trace: T) -> io::Result<()> {
        self.count += 1;
        match self.first.take() {
            None if self.count == 1 => {
                self.first = Some(trace);
                return Ok(());
            }
            Some(first) => {
                self.buf.push_str(&multi_header());
                self.member(first.borrow())?;
            }
            None => {}
        }
        self.buf.push_str(",\n");
        self.member(trace.borrow())
    }

    /// Ends the file and returns the writer, flushed. With no trace
    /// nothing at all was written.
    pub fn finish(mut self) -> io::Result<W> {
        match (self.count, self.first.take()) {
            (0, _) => {}
            (_, Some(one)) => {
                let out = &mut self.out;
                write_single_chunked(&mut self.buf, one.borrow(), &mut |b| drain(out, b))?;
            }
            _ => self.buf.push_str(MULTI_FOOTER),
        }
        drain(&mut self.out, &mut self.buf)?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn member(&mut self, t: &Trace) -> io::Result<()> {
        let out = &mut self.out;
        self.buf.push('{');
        write_trace_members(&mut self.buf, t, &mut |b| drain(out, b))?;
        self.buf.push('}');
        Ok(())
    }
}

fn drain(out: &mut impl Write, buf: &mut String) -> io::Result<()> {
    out.write_all(buf.as_bytes())?;
    buf.clear();
    Ok(())
}

fn multi_header() -> String {
    let mut out = String::from("{\"format\":");
    push_json_string(&mut out, TRACE_FORMAT);
    out.push_str(",\"traces\":[\n");
    out
}

fn write_single(out: &mut String, trace: &Trace) {
    write_single_chunked(out, trace, &mut |_| Ok(())).unwrap_or(());
}

fn write_single_chunked(
    out: &mut String,
    trace: &Trace,
    flush: &mut dyn FnMut(&mut String) -> io::Result<()>,
) -> io::Result<()> {
    out.push_str("{\"format\":");
    push_json_string(out, TRACE_FORMAT);
    out.push_str(",\n");
    write_trace_members(out, trace, flush)?;
    out.push_str("}\n");
    Ok(())
}

/// Writes the members of a trace object into `out`, handing `out` to
/// `flush` whenever it holds more than [`CHUNK`] bytes (a no-op when the
/// whole JSON is wanted as a string).
fn write_trace_members(
    out: &mut String,
    t: &Trace,
    flush: &mut dyn FnMut(&mut String) -> io::Result<()>,
) -> io::Result<()> {
    let mut check = |out: &mut String| {
        if out.len() >= CHUNK {
            flush(out)
        } else {
            Ok(())
        }
    };
    out.push_str("\"name\":");
    push_json_string(out, &t.name);
    out.push_str(",\n\"description\":");
    push_json_string(out, &t.description);
    out.push_str(",\n\"provider\":");
    push_json_string(out, t.provider.as_str());
    out.push_str(",\n\"model\":");
    push_json_string(out, &t.model);
    if let Some(p) = &t.project {
        out.push_str(",\n\"project\":");
        push_json_string(out, p);
    }
    if let Some(s) = &t.session {
        out.push_str(",\n\"session\":");
        push_json_string(out, s);
    }
    if let Some(a) = &t.account {
        out.push_str(",\n\"account\":");
        push_json_string(out, a);
    }
    if let Some(s) = &t.status_quo {
        out.push_str(",\n\"status_quo\":");
        push_json_string(out, s);
    }
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
        check(out)?;
    }
    out.push_str("\n],\n\"calls\":[");
    let mut prev_prompt = 0;
    for (i, c) in t.calls.iter().enumerate() {
        out.push_str(if i == 0 { "\n" } else { ",\n" });
        write_call(out, t, c, prev_prompt);
        prev_prompt = c.prompt;
        check(out)?;
    }
    out.push_str("\n]\n");
    Ok(())
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
    if !c.cleared.is_empty() {
        out.push_str(",\"cleared\":[");
        for (i, id) in c.cleared.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_json_string(out, id);
        }
        out.push(']');
    }
    if let Some(k) = &c.compacted {
        out.push_str(&format!(",\"compacted\":{{\"manual\":{}", k.manual));
        for (name, v) in [("pre_tokens", k.pre_tokens), ("post_tokens", k.post_tokens)] {
            if let Some(v) = v {
                out.push_str(&format!(",\"{name}\":{v}"));
            }
        }
        if let Some(text) = &k.summary {
            out.push_str(",\"summary\":");
            push_json_string(out, text);
        }
        out.push('}');
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
    field("reasoning_tokens", u.reasoning_tokens);
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
    let m = u.modifiers;
    for (name, on) in [
        ("fast", m.fast),
        ("regional", m.regional),
        ("batch", m.batch),
    ] {
        if on {
            parts.push(format!("\"{name}\":true"));
        }
    }
    out.push('{');
    out.push_str(&parts.join(","));
    out.push('}');
}

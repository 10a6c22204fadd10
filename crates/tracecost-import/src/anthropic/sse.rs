//! A streamed response rebuilt from its server-sent events: text,
//! thinking and tool input put back together from their deltas, and the
//! usage of `message_start` updated by `message_delta`. Kept apart because
//! the stream's event grammar has nothing to do with how requests are
//! read.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::line::Reply;
use crate::common::{Unmapped, finish_usage, merge_anthropic_usage};
use tracecost_engine::json::{RawObject, raw_json, raw_string};
use tracecost_engine::message::{ContentBlock, Message, Role};
use tracecost_trace::RecordedUsage;

/// One content block being rebuilt from stream events.
struct BlockAcc {
    fields: RawObject,
    text: Option<String>,
    json: String,
    thinking: Option<String>,
    signature: Option<String>,
    citations: Vec<Box<RawValue>>,
}

impl BlockAcc {
    fn new(fields: RawObject) -> Self {
        Self {
            fields,
            text: None,
            json: String::new(),
            thinking: None,
            signature: None,
            citations: Vec::new(),
        }
    }

    fn finish(mut self, un: &mut Unmapped) -> Option<ContentBlock> {
        if let Some(t) = self.text {
            let base = match self.fields.parse::<String>("text") {
                Some(Ok(s)) => s,
                _ => String::new(),
            };
            self.fields.set("text", raw_string(&(base + &t)));
        }
        if let Some(t) = self.thinking {
            let base = match self.fields.parse::<String>("thinking") {
                Some(Ok(s)) => s,
                _ => String::new(),
            };
            self.fields.set("thinking", raw_string(&(base + &t)));
        }
        if let Some(s) = self.signature {
            self.fields.set("signature", raw_string(&s));
        }
        if !self.json.is_empty() {
            match RawValue::from_string(self.json.clone()) {
                Ok(v) => self.fields.set("input", v),
                Err(_) => {
                    un.add(
                        "streamed tool inputs that are not valid JSON (wrapped as {\"_raw\": …})",
                        1,
                    );
                    let mut o = RawObject::new();
                    o.set("_raw", raw_string(&self.json));
                    self.fields.set("input", raw_json(o.to_json()));
                }
            }
        }
        if !self.citations.is_empty() {
            let parts: Vec<&str> = self.citations.iter().map(|c| c.get()).collect();
            self.fields
                .set("citations", raw_json(format!("[{}]", parts.join(","))));
        }
        match ContentBlock::from_object(self.fields) {
            Ok(b) => Some(b),
            Err(_) => {
                un.add("streamed content blocks of an invalid shape (dropped)", 1);
                None
            }
        }
    }
}

#[derive(Default)]
struct Sse {
    events: usize,
    usage: RecordedUsage,
    /// The requests the latest usage's `iterations` records.
    iterations: Vec<(Option<String>, RecordedUsage)>,
    open: BTreeMap<u64, BlockAcc>,
    done: BTreeMap<u64, ContentBlock>,
    error: bool,
    stopped: bool,
}

#[derive(Deserialize)]
struct DeltaDoc {
    #[serde(rename = "type")]
    kind: Option<String>,
    text: Option<String>,
    partial_json: Option<String>,
    thinking: Option<String>,
    signature: Option<String>,
    citation: Option<Box<RawValue>>,
}

impl Sse {
    fn event(&mut self, data: &str, un: &mut Unmapped) {
        let Ok(ev) = RawObject::from_json(data) else {
            un.add("stream events that are not JSON objects (ignored)", 1);
            return;
        };
        self.events += 1;
        let kind = match ev.parse::<String>("type") {
            Some(Ok(k)) => k,
            _ => String::new(),
        };
        let index = || match ev.parse::<u64>("index") {
            Some(Ok(i)) => Some(i),
            _ => None,
        };
        match kind.as_str() {
            "message_start" => {
                let usage = match ev.parse::<RawObject>("message") {
                    Some(Ok(m)) => m.raw("usage").map(ToOwned::to_owned),
                    _ => None,
                };
                if let Some(u) = usage
                    && !merge_anthropic_usage(&mut self.usage, &u)
                {
                    un.add(crate::common::MALFORMED_USAGE, 1);
                }
            }
            "message_delta" => {
                if let Some(u) = ev.raw("usage") {
                    if !merge_anthropic_usage(&mut self.usage, u) {
                        un.add(crate::common::MALFORMED_USAGE, 1);
                    }
                    let its = crate::common::anthropic_iterations(u);
                    if !its.is_empty() {
                        self.iterations = its;
                    }
                }
            }
            "content_block_start" => match (index(), ev.parse::<RawObject>("content_block")) {
                (Some(i), Some(Ok(b))) => {
                    self.open.insert(i, BlockAcc::new(b));
                }
                _ => un.add("malformed content_block_start events (ignored)", 1),
            },
            "content_block_delta" => {
                let delta = ev.parse::<DeltaDoc>("delta");
                let (Some(i), Some(Ok(d))) = (index(), delta) else {
                    un.add("malformed content_block_delta events (ignored)", 1);
                    return;
                };
                let Some(acc) = self.open.get_mut(&i) else {
                    un.add("content_block_delta events for no open block (ignored)", 1);
                    return;
                };
                let kind = d.kind.unwrap_or_default();
                match (
                    kind.as_str(),
                    d.text,
                    d.partial_json,
                    d.thinking,
                    d.signature,
                    d.citation,
                ) {
                    ("text_delta", Some(t), ..) => {
                        acc.text.get_or_insert_with(String::new).push_str(&t)
                    }
                    ("input_json_delta", _, Some(j), ..) => acc.json.push_str(&j),
                    ("thinking_delta", _, _, Some(t), ..) => {
                        acc.thinking.get_or_insert_with(String::new).push_str(&t)
                    }
                    ("signature_delta", _, _, _, Some(s), _) => {
                        acc.signature.get_or_insert_with(String::new).push_str(&s)
                    }
                    ("citations_delta", .., Some(c)) => acc.citations.push(c),
                    _ => un.add("stream deltas of an unknown type (ignored)", 1),
                }
            }
            "content_block_stop" => {
                if let Some(i) = index()
                    && let Some(acc) = self.open.remove(&i)
                    && let Some(b) = acc.finish(un)
                {
                    self.done.insert(i, b);
                }
            }
            "message_stop" => self.stopped = true,
            "error" => self.error = true,
            _ => {}
        }
    }

    fn finish(mut self, un: &mut Unmapped) -> Reply {
        if self.error {
            return Reply::Failed;
        }
        if self.events == 0 {
            return Reply::Unreadable;
        }
        if !self.stopped {
            un.add("streamed responses cut off before message_stop", 1);
        }
        for (i, acc) in std::mem::take(&mut self.open) {
            if let Some(b) = acc.finish(un) {
                self.done.insert(i, b);
            }
        }
        let blocks: Vec<ContentBlock> = self.done.into_values().collect();
        let message = (!blocks.is_empty()).then(|| Message::new(Role::Assistant, blocks));
        Reply::Ok {
            usage: finish_usage(self.usage, un),
            message,
            iterations: self.iterations,
        }
    }
}

/// Rebuilds a streamed response from its server-sent events.
pub(super) fn parse_sse(text: &str, un: &mut Unmapped) -> Reply {
    let mut sse = Sse::default();
    let mut data = String::new();
    for raw_line in text.split('\n') {
        let line = raw_line.strip_suffix('\r').unwrap_or(raw_line);
        if line.is_empty() {
            if !data.is_empty() {
                sse.event(&data, un);
                data.clear();
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix("data:") {
            if !data.is_empty() {
                data.push('\n');
            }
            data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
        }
    }
    if !data.is_empty() {
        sse.event(&data, un);
    }
    sse.finish(un)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_rebuilds_text_tool_input_and_usage() {
        let sse = concat!(
            "event: message_start\n",
            "data: {\"type\":\"message_start\",\"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":100,\"output_tokens\":1}}}\n\n",
            "event: content_block_start\n",
            "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n",
            "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
            "data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{}}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"b\\\": 1,\"}}\n\n",
            "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\" \\\"a\\\": 2}\"}}\n\n",
            "data: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
            "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":42}}\n\n",
            "data: {\"type\":\"message_stop\"}\n\n",
        );
        let mut un = Unmapped::default();
        let Reply::Ok { usage, message, .. } = parse_sse(sse, &mut un) else {
            panic!("not ok");
        };
        let u = usage.unwrap();
        assert_eq!(
            (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
            (Some(5), Some(100), Some(42))
        );
        let m = message.unwrap();
        assert_eq!(
            m.to_json(),
            r#"{"role":"assistant","content":[{"type":"text","text":"Hello"},{"type":"tool_use","id":"t1","name":"f","input":{"b": 1, "a": 2}}]}"#
        );
        assert!(un.lines().is_empty(), "{:?}", un.lines());
    }

    #[test]
    fn sse_error_event_fails_the_exchange() {
        let mut un = Unmapped::default();
        let sse = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n";
        assert!(matches!(parse_sse(sse, &mut un), Reply::Failed));
    }
}

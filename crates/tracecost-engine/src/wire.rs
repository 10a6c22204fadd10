//! Cache markers and the request body as it goes on the wire.
//!
//! Markers belong to a call, not to the history: a rolling marker sits on a
//! different block at every call. They are kept apart from the messages and
//! only spliced in when the request body is written, as a `cache_control`
//! member appended to the marked block.

use std::fmt;

use super::json::push_json_string;
use super::message::{Content, ContentBlock, ToolDefinition};
use super::rewrite::{WireMessage, WireView};

/// How long a cache entry lives without a hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Ttl {
    /// `"ttl":"5m"`, the API default.
    #[default]
    FiveMinutes,
    /// `"ttl":"1h"`.
    OneHour,
}

impl Ttl {
    /// Lifetime in milliseconds.
    pub fn millis(self) -> u64 {
        match self {
            Ttl::FiveMinutes => 5 * 60 * 1000,
            Ttl::OneHour => 60 * 60 * 1000,
        }
    }

    /// `5m` / `1h`.
    pub fn as_str(self) -> &'static str {
        match self {
            Ttl::FiveMinutes => "5m",
            Ttl::OneHour => "1h",
        }
    }

    /// The `cache_control` object for this TTL. The 5-minute form is written
    /// without a `ttl` member, as clients usually send it.
    pub fn cache_control_json(self) -> &'static str {
        match self {
            Ttl::FiveMinutes => r#"{"type":"ephemeral"}"#,
            Ttl::OneHour => r#"{"type":"ephemeral","ttl":"1h"}"#,
        }
    }
}

impl fmt::Display for Ttl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A block of a request, by position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BlockRef {
    /// The n-th tool definition.
    Tool(usize),
    /// The n-th system block.
    System(usize),
    /// Block `block` of message `message` (block 0 of a string-content
    /// message is its text, sent as a text block when marked).
    Message {
        /// Message index.
        message: usize,
        /// Block index within the message.
        block: usize,
    },
}

/// A `cache_control` breakpoint on one block of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Marker {
    /// The marked block.
    pub at: BlockRef,
    /// Its TTL.
    pub ttl: Ttl,
}

/// The most breakpoints the API accepts in one request.
pub const MAX_BREAKPOINTS: usize = 4;

/// One request: tools, system, messages and the markers it carries.
#[derive(Debug, Clone)]
pub struct Request<'a> {
    /// Tool definitions in the order sent.
    pub tools: Vec<&'a ToolDefinition>,
    /// System blocks.
    pub system: &'a [ContentBlock],
    /// The messages as sent.
    pub messages: &'a WireView<'a>,
    /// Its cache breakpoints.
    pub markers: &'a [Marker],
}

impl Request<'_> {
    fn marker_at(&self, at: BlockRef) -> Option<&'static str> {
        self.markers
            .iter()
            .find(|m| m.at == at)
            .map(|m| m.ttl.cache_control_json())
    }

    /// The request body's `tools`, `system` and `messages` members as
    /// compact JSON, markers spliced in. Deterministic: the same request
    /// gives the same bytes.
    pub fn to_json(&self) -> String {
        let mut out = String::from("{\"tools\":[");
        for (i, t) in self.tools.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            t.fields()
                .write_json_with(&mut out, marked(self.marker_at(BlockRef::Tool(i))));
        }
        out.push_str("],\"system\":[");
        for (i, b) in self.system.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            b.write_json_with(&mut out, marked(self.marker_at(BlockRef::System(i))));
        }
        out.push_str("],\"messages\":[");
        for (mi, m) in self.messages.messages.iter().enumerate() {
            if mi > 0 {
                out.push(',');
            }
            self.write_message(&mut out, mi, m);
        }
        out.push_str("]}");
        out
    }

    fn write_message(&self, out: &mut String, mi: usize, m: &WireMessage<'_>) {
        let marked = self
            .markers
            .iter()
            .any(|mk| matches!(mk.at, BlockRef::Message { message, .. } if message == mi));
        if m.blocks.is_none() && !marked {
            m.source.write_json(out);
            return;
        }
        out.push('{');
        for (k, (key, raw)) in m.source.fields().members().enumerate() {
            if k > 0 {
                out.push(',');
            }
            push_json_string(out, key);
            out.push(':');
            if key == "content" {
                self.write_content(out, mi, m);
            } else {
                raw.write_json(out);
            }
        }
        out.push('}');
    }

    fn write_content(&self, out: &mut String, mi: usize, m: &WireMessage<'_>) {
        let marker = |block| self.marker_at(BlockRef::Message { message: mi, block });
        if let (None, Content::Text(_)) = (&m.blocks, m.source.content()) {
            // A marked string content is sent as one text block, keeping
            // the string's original bytes.
            out.push_str("[{\"type\":\"text\",\"text\":");
            match m.source.fields().value("content") {
                Some(v) => v.write_json(out),
                None => out.push_str("\"\""),
            }
            if let Some(cc) = marker(0) {
                out.push_str(",\"cache_control\":");
                out.push_str(cc);
            }
            out.push_str("}]");
            return;
        }
        out.push('[');
        for (bi, b) in m.sent_blocks().enumerate() {
            if bi > 0 {
                out.push(',');
            }
            b.write_json_with(out, marked(marker(bi)));
        }
        out.push(']');
    }
}

/// The member a marker adds to the block it marks.
fn marked(cache_control: Option<&str>) -> Option<(&str, &str)> {
    cache_control.map(|cc| ("cache_control", cc))
}

/// Writes one history message as sent without markers (used by stability
/// checks to compare message bytes across calls).
pub fn message_json(m: &WireMessage<'_>) -> String {
    let view = WireView {
        messages: vec![m.clone()],
    };
    let req = Request {
        tools: Vec::new(),
        system: &[],
        messages: &view,
        markers: &[],
    };
    let mut out = String::new();
    req.write_message(&mut out, 0, &view.messages[0]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Message, Role};

    #[test]
    fn markers_are_spliced_into_the_marked_blocks_only() {
        let tools = [
            ToolDefinition::from_json(r#"{"name":"a","input_schema":{"type":"object"}}"#).unwrap(),
        ];
        let system = [ContentBlock::text("sys")];
        let history = vec![
            Message::new_text(Role::User, "hi \u{e9}"),
            Message::new(
                Role::Assistant,
                vec![ContentBlock::text("x"), ContentBlock::text("y")],
            ),
        ];
        let view = WireView::unchanged(&history);
        let markers = [
            Marker {
                at: BlockRef::Tool(0),
                ttl: Ttl::OneHour,
            },
            Marker {
                at: BlockRef::Message {
                    message: 0,
                    block: 0,
                },
                ttl: Ttl::FiveMinutes,
            },
            Marker {
                at: BlockRef::Message {
                    message: 1,
                    block: 1,
                },
                ttl: Ttl::FiveMinutes,
            },
        ];
        let req = Request {
            tools: tools.iter().collect(),
            system: &system,
            messages: &view,
            markers: &markers,
        };
        assert_eq!(
            req.to_json(),
            concat!(
                r#"{"tools":[{"name":"a","input_schema":{"type":"object"},"cache_control":{"type":"ephemeral","ttl":"1h"}}],"#,
                r#""system":[{"type":"text","text":"sys"}],"#,
                r#""messages":[{"role":"user","content":[{"type":"text","text":"hi é","cache_control":{"type":"ephemeral"}}]},"#,
                r#"{"role":"assistant","content":[{"type":"text","text":"x"},{"type":"text","text":"y","cache_control":{"type":"ephemeral"}}]}]}"#
            )
        );
        let plain = Request {
            markers: &[],
            ..req
        };
        assert!(
            plain
                .to_json()
                .contains(r#"{"role":"user","content":"hi é"}"#)
        );
    }
}

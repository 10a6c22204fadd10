//! The shapes serde reads a trace document into: members kept as raw JSON
//! where the validation reads them itself.

use serde::Deserialize;

use tracecost_engine::json::RawObject;
use tracecost_engine::message::{Message, ShapeError};

#[derive(Deserialize)]
pub(super) struct TraceDoc {
    pub(super) format: Option<String>,
    pub(super) name: Option<String>,
    #[serde(default)]
    pub(super) description: String,
    pub(super) provider: Option<String>,
    pub(super) model: Option<String>,
    pub(super) status_quo: Option<String>,
    pub(super) project: Option<String>,
    pub(super) account: Option<String>,
    pub(super) session: Option<String>,
    #[serde(default)]
    pub(super) hidden_prefix_tokens: u64,
    #[serde(default)]
    pub(super) system: Vec<RawObject>,
    #[serde(default)]
    pub(super) tools: Vec<RawObject>,
    pub(super) messages: Option<MessagesDoc>,
    pub(super) calls: Option<Vec<CallDoc>>,
    pub(super) traces: Option<Vec<TraceDoc>>,
}

/// A document's messages, each made a [`Message`] as soon as it is read:
/// a long trace's messages held as read objects first took about 180
/// bytes each beside the text (a million messages: 176 MB), and the
/// messages' own room again as they were made. A message that is not one
/// stops the making; the rest of the array is still read (its syntax is
/// checked as before), and the shape error waits for the checks of the
/// messages before it ([`super::validate`]).
pub(super) struct MessagesDoc {
    /// The messages made, in order, up to the first that is not one.
    pub(super) messages: Vec<Message>,
    /// That message's place and what is wrong with it.
    pub(super) error: Option<(usize, ShapeError)>,
}

impl<'de> Deserialize<'de> for MessagesDoc {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = MessagesDoc;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                // As serde says of any list.
                f.write_str("a sequence")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<MessagesDoc, A::Error> {
                let mut messages = Vec::new();
                let mut error = None;
                while let Some(o) = seq.next_element::<RawObject>()? {
                    if error.is_some() {
                        continue;
                    }
                    match Message::from_object(o) {
                        Ok(m) => messages.push(m),
                        Err(e) => error = Some((messages.len(), e)),
                    }
                }
                messages.shrink_to_fit();
                Ok(MessagesDoc { messages, error })
            }
        }
        d.deserialize_seq(V)
    }
}

/// One call as read. Every call of a document is read before any is
/// checked, so what most calls lack is boxed: a long trace's calls as
/// read took 328 bytes each (164 MB for 500,000 calls), now about 100.
// A boxed list is one pointer (a boxed slice would be two): most calls
// have none of these lists.
#[allow(clippy::box_collection)]
#[derive(Deserialize)]
pub(super) struct CallDoc {
    pub(super) messages: u64,
    pub(super) start_ms: Option<u64>,
    pub(super) model: Option<String>,
    pub(super) system: Option<Box<Vec<RawObject>>>,
    pub(super) tools: Option<Box<Vec<RawObject>>>,
    pub(super) cache_markers: Option<Box<Vec<MarkerDoc>>>,
    pub(super) usage: Option<Box<UsageDoc>>,
    #[serde(default)]
    pub(super) cleared: Vec<String>,
    pub(super) compacted: Option<Box<CompactedDoc>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CompactedDoc {
    #[serde(default)]
    pub(super) manual: bool,
    pub(super) pre_tokens: Option<u64>,
    pub(super) post_tokens: Option<u64>,
    pub(super) summary: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct MarkerDoc {
    pub(super) tool: Option<usize>,
    pub(super) system: Option<usize>,
    pub(super) message: Option<usize>,
    pub(super) block: Option<usize>,
    pub(super) ttl: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct UsageDoc {
    pub(super) input_tokens: Option<u64>,
    pub(super) cache_creation_input_tokens: Option<u64>,
    pub(super) cache_creation: Option<CacheCreationDoc>,
    pub(super) cache_read_input_tokens: Option<u64>,
    pub(super) output_tokens: Option<u64>,
    /// The price modifiers ([`crate::RecordedModifiers`]), each written
    /// only when it applied.
    #[serde(default)]
    pub(super) fast: bool,
    #[serde(default)]
    pub(super) regional: bool,
    #[serde(default)]
    pub(super) batch: bool,
    pub(super) reasoning_tokens: Option<u64>,
}

#[derive(Deserialize)]
pub(super) struct CacheCreationDoc {
    pub(super) ephemeral_5m_input_tokens: Option<u64>,
    pub(super) ephemeral_1h_input_tokens: Option<u64>,
}

#[cfg(test)]
mod tests {
    /// Every call of a document is held as read until the calls are
    /// checked: what most calls lack takes a pointer, not its room.
    #[test]
    fn a_call_as_read_is_small() {
        assert!(
            size_of::<super::CallDoc>() <= 112,
            "{}",
            size_of::<super::CallDoc>()
        );
    }
}

//! The request body `Compactor.request` and `CacheComposition.request`
//! return: the messages, tools and system blocks parsed from their JSON,
//! the body composed with the cache markers spliced in, and the markers as
//! Python tuples.

use pyo3::prelude::*;

use tracecost::engine::cache::CacheComposition;
use tracecost::engine::message::{ContentBlock, Message, ToolDefinition};
use tracecost::engine::rewrite::WireView;
use tracecost::engine::wire::{BlockRef, Marker, Request};

use crate::errors::input_err;

/// One item per JSON text; a bad one is an InputError that names the
/// argument and the index, so the caller can find it in what it passed.
fn parse_each<T, E: std::fmt::Display>(
    what: &str,
    items: &[String],
    from_json: impl Fn(&str) -> Result<T, E>,
) -> PyResult<Vec<T>> {
    items
        .iter()
        .enumerate()
        .map(|(i, json)| from_json(json).map_err(|e| input_err(format!("{what}[{i}]: {e}"))))
        .collect()
}

pub(crate) fn parse_messages(messages: &[String]) -> PyResult<Vec<Message>> {
    parse_each("messages", messages, Message::from_json)
}

pub(crate) fn parse_tools(tools: &[String]) -> PyResult<Vec<ToolDefinition>> {
    parse_each("tools", tools, ToolDefinition::from_json)
}

pub(crate) fn parse_system(system: &[String]) -> PyResult<Vec<ContentBlock>> {
    parse_each("system", system, ContentBlock::from_json)
}

pub(crate) type MarkerTuple = (String, usize, Option<usize>, String);

fn marker_tuple(m: &Marker) -> MarkerTuple {
    let (kind, index, block) = match m.at {
        BlockRef::Tool(i) => ("tool", i, None),
        BlockRef::System(i) => ("system", i, None),
        BlockRef::Message { message, block } => ("message", message, Some(block)),
    };
    (kind.to_owned(), index, block, m.ttl.as_str().to_owned())
}

/// The request body (tools, system, messages; markers spliced in) and its
/// markers.
pub(crate) fn compose(
    tools: &[ToolDefinition],
    system: &[ContentBlock],
    view: &WireView<'_>,
    cache: Option<&CacheComposition>,
) -> (String, Vec<MarkerTuple>) {
    let tool_refs: Vec<&ToolDefinition> = tools.iter().collect();
    let markers = cache
        .map(|c| c.markers(&tool_refs, system, view))
        .unwrap_or_default();
    let req = Request {
        tools: tool_refs,
        system,
        messages: view,
        markers: &markers,
    };
    (req.to_json(), markers.iter().map(marker_tuple).collect())
}

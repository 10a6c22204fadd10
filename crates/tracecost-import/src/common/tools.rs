//! OpenAI's function definitions as Anthropic tool definitions: Chat
//! Completions' (`{"type":"function","function":{…}}`) and the Responses
//! API's (`{"type":"function","name",…}`, flat) carry the same members.

use super::Unmapped;
use tracecost_engine::json::{RawObject, raw_json, raw_string};
use tracecost_engine::message::ToolDefinition;

/// The request's `tools` as Anthropic definitions: each function's
/// `{"name", "description", "input_schema"}` (`parameters`, or an empty
/// object schema). `function_of` finds a tool's function members (`None`:
/// not a function, reported with `not_function`). Nameless and repeated
/// names are dropped and reported, as are `strict` flags.
pub(crate) fn function_tools(
    body: &RawObject,
    function_of: impl Fn(&RawObject) -> Option<RawObject>,
    not_function: &'static str,
    un: &mut Unmapped,
) -> Vec<ToolDefinition> {
    let list = match body.parse::<Vec<RawObject>>("tools") {
        Some(Ok(l)) => l,
        Some(Err(_)) => {
            if body.get("tools").is_some_and(|r| r.get() != "null") {
                un.add("tools members that are not lists of objects (dropped)", 1);
            }
            return Vec::new();
        }
        None => return Vec::new(),
    };
    let mut out: Vec<ToolDefinition> = Vec::with_capacity(list.len());
    for t in list {
        let Some(f) = function_of(&t) else {
            un.add(not_function, 1);
            continue;
        };
        let Some(Ok(name)) = f.parse::<String>("name") else {
            un.add("tool definitions without a name (dropped)", 1);
            continue;
        };
        if out.iter().any(|d| d.name() == name) {
            un.add("tool definitions repeating a name (dropped)", 1);
            continue;
        }
        let mut def = RawObject::new();
        def.set("name", raw_string(&name));
        if let Some(d) = f.raw("description").filter(|d| d.get() != "null") {
            def.set("description", d.to_owned());
        }
        let schema = f
            .raw("parameters")
            .filter(|p| p.get().starts_with('{'))
            .map(ToOwned::to_owned)
            .unwrap_or_else(|| raw_json(r#"{"type":"object","properties":{}}"#.to_owned()));
        def.set("input_schema", schema);
        if f.get("strict").is_some() {
            un.add("strict flags on tool definitions (not mapped)", 1);
        }
        match ToolDefinition::from_object(def) {
            Ok(d) => out.push(d),
            Err(_) => un.add("tool definitions without a name (dropped)", 1),
        }
    }
    out
}

/// Whether a tool's `type` is `function`.
pub(crate) fn is_function(t: &RawObject) -> bool {
    matches!(t.parse::<String>("type"), Some(Ok(k)) if k == "function")
}

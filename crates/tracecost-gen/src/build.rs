//! Building JSON values, content blocks, messages and calls for generated
//! traces.
//!
//! Everything here is written from values the generators construct
//! themselves, so the JSON is valid by construction; object members keep the
//! order they were given in.

use tracecost_engine::json::{RawObject, push_json_string, raw_json, raw_string};
use tracecost_engine::message::{ContentBlock, Message, Role, ToolDefinition};
use tracecost_trace::{Call, RecordedUsage};

/// A JSON value with ordered object members.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum J {
    /// `null`
    Null,
    /// `true` / `false`
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A decimal number, already spelled (e.g. `"129.99"`).
    Num(String),
    /// A string.
    Str(String),
    /// An array.
    Arr(Vec<J>),
    /// An object, members in order.
    Obj(Vec<(String, J)>),
}

impl From<&str> for J {
    fn from(s: &str) -> Self {
        J::Str(s.to_owned())
    }
}

impl From<String> for J {
    fn from(s: String) -> Self {
        J::Str(s)
    }
}

impl From<i64> for J {
    fn from(v: i64) -> Self {
        J::Int(v)
    }
}

impl From<u64> for J {
    fn from(v: u64) -> Self {
        J::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<usize> for J {
    fn from(v: usize) -> Self {
        J::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}

impl From<i32> for J {
    fn from(v: i32) -> Self {
        J::Int(i64::from(v))
    }
}

impl From<bool> for J {
    fn from(v: bool) -> Self {
        J::Bool(v)
    }
}

impl From<Vec<J>> for J {
    fn from(v: Vec<J>) -> Self {
        J::Arr(v)
    }
}

/// An object from `(key, value)` pairs.
pub(crate) fn obj<const N: usize>(members: [(&str, J); N]) -> J {
    J::Obj(
        members
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect(),
    )
}

/// A decimal number with `places` digits after the point.
pub(crate) fn num(v: f64, places: usize) -> J {
    let v = if v.is_finite() { v } else { 0.0 };
    J::Num(format!("{v:.places$}"))
}

/// An array of integers.
pub(crate) fn ints(values: &[i64]) -> J {
    J::Arr(values.iter().map(|&v| J::Int(v)).collect())
}

/// An array of strings.
pub(crate) fn strs<S: AsRef<str>>(values: &[S]) -> J {
    J::Arr(
        values
            .iter()
            .map(|s| J::Str(s.as_ref().to_owned()))
            .collect(),
    )
}

impl J {
    /// `value` as a `J`, members in the order `value` has them (serde_json
    /// keeps document order). Numbers must be integers: the generators'
    /// data files hold no others, and a float would not round-trip exactly.
    pub(crate) fn from_json(value: &serde_json::Value) -> Result<J, String> {
        use serde_json::Value;
        Ok(match value {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Number(n) => J::Int(
                n.as_i64()
                    .ok_or_else(|| format!("number {n} is not a 64-bit integer"))?,
            ),
            Value::String(s) => J::Str(s.clone()),
            Value::Array(items) => {
                J::Arr(items.iter().map(J::from_json).collect::<Result<_, _>>()?)
            }
            Value::Object(members) => J::Obj(
                members
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), J::from_json(v)?)))
                    .collect::<Result<_, String>>()?,
            ),
        })
    }

    /// Appends a member to an object (no-op on other values).
    pub(crate) fn push(&mut self, key: &str, value: J) {
        if let J::Obj(members) = self {
            members.push((key.to_owned(), value));
        }
    }

    /// Compact JSON text.
    pub(crate) fn compact(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, None, 0);
        out
    }

    /// JSON text indented by `indent` spaces per level.
    pub(crate) fn pretty(&self, indent: usize) -> String {
        let mut out = String::new();
        self.write(&mut out, Some(indent), 0);
        out
    }

    fn write(&self, out: &mut String, indent: Option<usize>, depth: usize) {
        match self {
            J::Null => out.push_str("null"),
            J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            J::Int(v) => out.push_str(&v.to_string()),
            J::Num(s) => out.push_str(s),
            J::Str(s) => push_json_string(out, s),
            J::Arr(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, indent, depth + 1);
                    v.write(out, indent, depth + 1);
                }
                if !items.is_empty() {
                    newline(out, indent, depth);
                }
                out.push(']');
            }
            J::Obj(members) => {
                out.push('{');
                for (i, (k, v)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, indent, depth + 1);
                    push_json_string(out, k);
                    out.push(':');
                    if indent.is_some() {
                        out.push(' ');
                    }
                    v.write(out, indent, depth + 1);
                }
                if !members.is_empty() {
                    newline(out, indent, depth);
                }
                out.push('}');
            }
        }
    }
}

fn newline(out: &mut String, indent: Option<usize>, depth: usize) {
    if let Some(n) = indent {
        out.push('\n');
        out.extend(std::iter::repeat_n(' ', n * depth));
    }
}

fn block(fields: RawObject) -> ContentBlock {
    // Only called on objects built below, whose `type` and id members are
    // always strings: the shape check cannot fail.
    ContentBlock::from_object(fields).expect("generator-built content block is well-formed")
}

/// A `text` block.
pub(crate) fn text(s: &str) -> ContentBlock {
    ContentBlock::text(s)
}

/// A `tool_use` block whose `input` is `input` (compact JSON).
pub(crate) fn tool_use(id: &str, name: &str, input: &J) -> ContentBlock {
    let mut o = RawObject::new();
    o.set("type", raw_string("tool_use"));
    o.set("id", raw_string(id));
    o.set("name", raw_string(name));
    o.set("input", raw_json(input.compact()));
    block(o)
}

/// A `tool_result` block with string content.
pub(crate) fn tool_result(tool_use_id: &str, content: &str, is_error: bool) -> ContentBlock {
    let mut o = RawObject::new();
    o.set("type", raw_string("tool_result"));
    o.set("tool_use_id", raw_string(tool_use_id));
    o.set("content", raw_string(content));
    if is_error {
        o.set("is_error", raw_json("true".to_owned()));
    }
    block(o)
}

/// A user message with plain string content.
pub(crate) fn user_text(s: &str) -> Message {
    Message::new_text(Role::User, s)
}

/// A user message with blocks (tool results).
pub(crate) fn user(blocks: Vec<ContentBlock>) -> Message {
    Message::new(Role::User, blocks)
}

/// An assistant message with blocks.
pub(crate) fn assistant(blocks: Vec<ContentBlock>) -> Message {
    Message::new(Role::Assistant, blocks)
}

/// A call that sends the first `sent` messages of the history at
/// `start_ms`, under the trace's one prompt, with its `usage` recorded.
/// Generated calls clear nothing and carry no cache markers of their own.
pub(crate) fn call(sent: usize, start_ms: u64, usage: RecordedUsage) -> Call {
    Call {
        cleared: Vec::new(),
        compacted: None,
        messages: sent,
        start_ms: Some(start_ms),
        model: None,
        prompt: 0,
        markers: None,
        usage: Some(Box::new(usage)),
    }
}

/// A tool definition.
pub(crate) fn tool_def(name: &str, description: &str, input_schema: &J) -> ToolDefinition {
    let mut o = RawObject::new();
    o.set("name", raw_string(name));
    o.set("description", raw_string(description));
    o.set("input_schema", raw_json(input_schema.compact()));
    // `name` is a string by construction: the shape check cannot fail.
    ToolDefinition::from_object(o).expect("generator-built tool definition is well-formed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_and_pretty_json_parse_back() {
        let v = obj([
            ("a", J::Int(1)),
            ("b", strs(&["x\"y", "é"])),
            (
                "c",
                obj([("d", num(1.5, 2)), ("e", J::Null), ("f", J::Arr(vec![]))]),
            ),
        ]);
        assert_eq!(
            v.compact(),
            r#"{"a":1,"b":["x\"y","é"],"c":{"d":1.50,"e":null,"f":[]}}"#
        );
        let p = v.pretty(2);
        assert!(p.contains("\n  \"a\": 1,"), "{p}");
        let a: serde_json::Value = serde_json::from_str(&v.compact()).unwrap();
        let b: serde_json::Value = serde_json::from_str(&p).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn json_values_convert_in_document_order() {
        let text = r#"{"z":[1,-2,null,true],"a":{"s":"x\"y","e":[]}}"#;
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(J::from_json(&v).unwrap().compact(), text);
        let float: serde_json::Value = serde_json::from_str("[1.5]").unwrap();
        assert!(J::from_json(&float).unwrap_err().contains("1.5"));
    }

    #[test]
    fn blocks_have_the_expected_wire_form() {
        let b = tool_use("toolu_1", "grep", &obj([("pattern", "fn main".into())]));
        assert_eq!(
            b.to_json(),
            r#"{"type":"tool_use","id":"toolu_1","name":"grep","input":{"pattern":"fn main"}}"#
        );
        let r = tool_result("toolu_1", "no \"matches\"", true);
        assert_eq!(
            r.to_json(),
            r#"{"type":"tool_result","tool_use_id":"toolu_1","content":"no \"matches\"","is_error":true}"#
        );
    }
}

/// The largest knob in `lo..=hi` whose built value's size is at most
/// `budget` (binary search; sizes grow with the knob). Returns the value
/// built at `lo` when even that is too big.
pub(crate) fn fit<T>(
    budget: usize,
    lo: usize,
    hi: usize,
    build: impl Fn(usize) -> T,
    size: impl Fn(&T) -> usize,
) -> T {
    let (mut good, mut bad) = (lo, hi + 1);
    if size(&build(lo)) > budget {
        return build(lo);
    }
    while bad - good > 1 {
        let mid = good + (bad - good) / 2;
        if size(&build(mid)) <= budget {
            good = mid;
        } else {
            bad = mid;
        }
    }
    build(good)
}

#[cfg(test)]
mod fit_tests {
    use super::fit;

    #[test]
    fn fit_finds_the_largest_knob_within_budget() {
        assert_eq!(fit(35, 0, 100, |k| k * 3, |v| *v), 33);
        assert_eq!(
            fit(2, 5, 100, |k| k, |v| *v),
            5,
            "lo when even lo is too big"
        );
        assert_eq!(fit(1_000, 0, 10, |k| k, |v| *v), 10);
    }
}

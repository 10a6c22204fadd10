//! The stub: the text that replaces a compacted tool result on the wire.
//!
//! A pure function of the [`Handle`], so a result compacted at call 5 is
//! sent as the same bytes at call 6, 7, … and the cached prefix survives.
//! Changing this text changes every cached prefix that holds a stub: bump
//! [`STUB_FORMAT`] when you do.

use super::handle::Handle;

/// Version tag written into every stub.
pub const STUB_FORMAT: &str = "tracecost-stub/1";

/// Renders the stub for `handle` (about 80 tokens).
pub fn render_stub(handle: &Handle) -> String {
    let Handle {
        mem_id,
        tool_name,
        tool_call_id,
        size_chars,
        summary_oneliner,
        schema_hint,
        head_preview,
    } = handle;
    let tool = super::handle::one_line(tool_name, 60);
    let call = super::handle::one_line(tool_call_id, 80);
    let mut s = format!(
        "[compacted tool result · {STUB_FORMAT}]\ntool: {tool} · call: {call} · size: {size_chars} chars · mem_id: {mem_id}\n"
    );
    if let Some(schema) = schema_hint {
        s.push_str("schema: ");
        s.push_str(schema);
        s.push('\n');
    }
    s.push_str("summary: ");
    s.push_str(summary_oneliner);
    s.push('\n');
    if let Some(preview) = head_preview {
        s.push_str("preview: ");
        s.push_str(preview);
        s.push('\n');
    }
    s.push_str(&format!(
        "To re-expand: recall_tool_result(mem_id=\"{mem_id}\", format=\"full\"), or a slice with query=\"…\", offset=N and max_chars=N, or json_path=\"a.0.b\"."
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stub_names_everything_the_model_needs() {
        let h = Handle::derive(
            "toolu_01A",
            "keepa_product",
            r#"{"products":[{"asin":"B1"}],"ok":true}"#,
        );
        let stub = render_stub(&h);
        for needle in [
            STUB_FORMAT,
            "keepa_product",
            "toolu_01A",
            "size: 38 chars",
            &h.mem_id,
            "schema: {products:",
            "summary: JSON object, 2 keys",
            "preview: {\"products\"",
            "format=\"full\"",
            "query=",
            "offset=",
            "max_chars=",
            "json_path=",
        ] {
            assert!(stub.contains(needle), "stub lacks {needle:?}:\n{stub}");
        }
        assert_eq!(stub, render_stub(&h.clone()));
    }

    #[test]
    fn stub_stays_small() {
        let big = format!(
            "{{\"data\":[{}]}}",
            vec![r#"{"a":1,"b":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#; 5000].join(",")
        );
        let stub = render_stub(&Handle::derive("toolu_x", "fetch", &big));
        // ~4 characters per token: stay well under 150 tokens whatever the payload.
        assert!(stub.chars().count() < 600, "{} chars", stub.chars().count());
    }
}

//! Text blocks and string tool results keep their text once: when the
//! bytes read are the canonical encoding of the text, the block holds only
//! the text and writes it escaped (`engine::json::RawObject::share_string`);
//! otherwise it keeps the bytes read. Either way a parsed block writes back
//! exactly the bytes it was read from.

use proptest::prelude::*;
use tracecost_engine::message::{BlockKind, Content, ContentBlock, Message, ToolResultContent};

/// How one character is spelled inside a JSON string.
#[derive(Debug, Clone, Copy)]
enum Spelling {
    /// What serde_json's serializer writes.
    Canonical,
    /// `\uXXXX` (surrogate pairs above the BMP), lowercase hex.
    Lower,
    /// `\uXXXX`, uppercase hex (Python's `ensure_ascii` writes lowercase;
    /// other encoders do not).
    Upper,
    /// `\/` for a slash, otherwise canonical.
    Slash,
}

fn spell(c: char, how: Spelling, out: &mut String) {
    let hex = |out: &mut String, upper: bool| {
        let mut buf = [0u16; 2];
        for unit in c.encode_utf16(&mut buf) {
            if upper {
                out.push_str(&format!("\\u{unit:04X}"));
            } else {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        }
    };
    match how {
        Spelling::Lower => hex(out, false),
        Spelling::Upper => hex(out, true),
        Spelling::Slash if c == '/' => out.push_str("\\/"),
        _ => {
            let q = serde_json::to_string(&c.to_string()).unwrap();
            out.push_str(&q[1..q.len() - 1]);
        }
    }
}

fn encode(s: &str, hows: &[Spelling]) -> String {
    let mut out = String::from("\"");
    for (i, c) in s.chars().enumerate() {
        spell(c, hows[i % hows.len()], &mut out);
    }
    out.push('"');
    out
}

fn text_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[\\x00-\\x1f\\x7f\"\\\\/ aZé€\u{2028}😀\u{10ffff}]{0,40}",
        "[a-z \\n\"]{0,20}",
    ]
}

fn spelling_strategy() -> impl Strategy<Value = Vec<Spelling>> {
    prop::collection::vec(
        prop_oneof![
            6 => Just(Spelling::Canonical),
            1 => Just(Spelling::Lower),
            1 => Just(Spelling::Upper),
            1 => Just(Spelling::Slash),
        ],
        1..8,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_parsed_block_writes_back_its_bytes_and_exposes_its_text(
        s in text_strategy(),
        hows in spelling_strategy(),
    ) {
        let enc = encode(&s, &hows);
        let canonical = serde_json::to_string(&s).unwrap();
        prop_assert_eq!(serde_json::from_str::<String>(&enc).unwrap(), s.clone());

        // A text block.
        let src = format!(r#"{{"type":"text","text":{enc},"x":1}}"#);
        let b = ContentBlock::from_json(&src).unwrap();
        prop_assert_eq!(b.to_json(), src.clone());
        match b.kind() {
            BlockKind::Text { text } => prop_assert_eq!(&**text, s.as_str()),
            other => prop_assert!(false, "{other:?}"),
        }
        let fields = b.fields();
        let bytes = fields.get("text").unwrap();
        prop_assert_eq!(bytes.get(), enc.as_str());
        prop_assert_eq!(b.fields().parse::<String>("text").unwrap().unwrap(), s.clone());
        prop_assert_eq!(serde_json::to_string(&b).unwrap(), src.clone());
        // Equality is by bytes: the canonical block equals it exactly when
        // the spellings coincide.
        let c = ContentBlock::from_json(&format!(r#"{{"type":"text","text":{canonical},"x":1}}"#)).unwrap();
        prop_assert_eq!(b == c, enc == canonical);
        prop_assert_eq!(ContentBlock::text(&s).to_json(), format!(r#"{{"type":"text","text":{canonical}}}"#));

        // A string tool result, inside a message.
        let src = format!(
            r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t1","content":{enc}}}]}}"#
        );
        let m = Message::from_json(&src).unwrap();
        prop_assert_eq!(m.to_json(), src.clone());
        let b = &m.blocks()[0];
        match b.kind() {
            BlockKind::ToolResult { content: ToolResultContent::Text(t), payload_chars, .. } => {
                prop_assert_eq!(&**t, s.as_str());
                prop_assert_eq!(*payload_chars, s.chars().count() as u64);
            }
            other => prop_assert!(false, "{other:?}"),
        }
        prop_assert_eq!(b.tool_result_payload(), Some(s.as_str()));
        let back: Message = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        prop_assert_eq!(&back, &m);
        prop_assert_eq!(back.to_json(), src);

        // A message whose content is a string.
        let src = format!(r#"{{"role":"user","content":{enc}}}"#);
        let m = Message::from_json(&src).unwrap();
        prop_assert_eq!(m.to_json(), src.clone());
        match m.content() {
            Content::Text(t) => prop_assert_eq!(&**t, s.as_str()),
            other => prop_assert!(false, "{other:?}"),
        }
        let bytes = m.fields().get("content").unwrap();
        prop_assert_eq!(bytes.get(), enc.as_str());
    }
}

#[test]
fn non_canonical_escapes_are_kept_byte_for_byte() {
    for enc in [
        r#""caf\u00e9""#,
        r#""a\/b""#,
        r#""\uD83D\uDE00""#,
        r#""\ud83d\ude00""#,
        r#""\u000a""#,
        r#""\u001F""#,
        r#""\u0022""#,
        r#""\u005c""#,
        r#""\u0041""#,
    ] {
        let src = format!(r#"{{"type":"text","text":{enc}}}"#);
        assert_eq!(ContentBlock::from_json(&src).unwrap().to_json(), src);
    }
}

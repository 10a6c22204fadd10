//! A raw object writes back the bytes it was read from, whatever its keys
//! (interned or not) and values (shared common spellings or not): the
//! members a long trace holds are made small without changing a byte.

use proptest::prelude::*;
use tracecost_engine::json::{MemberValue, RawObject, raw_json};
use tracecost_engine::message::{BlockKind, ContentBlock, Message};

/// Keys: the message model's own, ones a trace may carry, and any string.
fn key_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "type",
            "content",
            "role",
            "text",
            "id",
            "name",
            "input",
            "tool_use_id",
            "is_error",
            "cache_control",
            "source_role",
            "x_custom",
        ])
        .prop_map(str::to_owned),
        "[a-z_]{1,12}",
        any::<String>(),
        // Longer than any key the process learns.
        "[a-z]{60,80}",
    ]
}

/// Values: the common spellings held once for all, their near misses and
/// other spellings of the same values, and assorted JSON.
fn value_strategy() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            r#""user""#,
            r#""assistant""#,
            r#""text""#,
            r#""tool_use""#,
            r#""tool_result""#,
            r#""ephemeral""#,
            r#"{"type":"ephemeral"}"#,
            r#"{"type": "ephemeral"}"#,
            r#""""#,
            "[]",
            "[ ]",
            "{}",
            "{ }",
            "true",
            "false",
            "null",
            r#""us\u0065r""#,
            r#""user ""#,
            "1.0",
            "1e3",
            "-0",
            r#"[1, 2,{"a" :null}]"#,
            r#""a\/b""#,
        ])
        .prop_map(str::to_owned),
        any::<String>().prop_map(|s| serde_json::to_string(&s).unwrap()),
        any::<i64>().prop_map(|n| n.to_string()),
    ]
}

fn object_strategy() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec((key_strategy(), value_strategy()), 0..12).prop_map(|members| {
        // One member per key: a repeated key is refused on reading.
        let mut seen = std::collections::HashSet::new();
        members
            .into_iter()
            .filter(|(k, _)| seen.insert(k.clone()))
            .collect()
    })
}

fn compact(members: &[(String, String)]) -> String {
    let body: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{}:{v}", serde_json::to_string(k).unwrap()))
        .collect();
    format!("{{{}}}", body.join(","))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn an_object_writes_back_its_bytes(members in object_strategy()) {
        let src = compact(&members);
        let obj = RawObject::from_json(&src).unwrap();
        prop_assert_eq!(obj.to_json(), src.clone());
        prop_assert_eq!(serde_json::to_string(&obj).unwrap(), src.clone());
        prop_assert_eq!(obj.len(), members.len());
        for ((k, v), (key, value)) in members.iter().zip(obj.members()) {
            prop_assert_eq!(k.as_str(), key);
            let MemberValue::Raw(raw) = value else {
                return Err(TestCaseError::fail("a parsed member is raw"));
            };
            prop_assert_eq!(raw.get(), v.as_str());
            prop_assert_eq!(obj.raw(k).map(|r| r.get()), Some(v.as_str()));
        }
        // Equal to itself read again and to its copy; an edit is seen.
        let again = RawObject::from_json(&src).unwrap();
        prop_assert_eq!(&again, &obj);
        prop_assert_eq!(&obj.clone(), &obj);
        let mut edited = obj.clone();
        edited.set("zz_added", raw_json("null".to_owned()));
        prop_assert_eq!(edited == obj, false);
        prop_assert!(edited.remove("zz_added"));
        prop_assert_eq!(&edited, &obj);
        prop_assert_eq!(edited.to_json(), src);
    }

    #[test]
    fn a_tool_use_and_its_result_write_back_their_bytes(
        id in any::<String>(),
        name in "[a-zA-Z_]{1,10}",
        slash in any::<bool>(),
        extra in value_strategy(),
    ) {
        // The id is shared with the typed view when its bytes are the
        // canonical spelling, kept as read otherwise.
        let mut id_json = serde_json::to_string(&id).unwrap();
        if slash {
            id_json = id_json.replace('/', "\\/");
        }
        let src = format!(
            r#"{{"role":"assistant","content":[{{"type":"tool_use","id":{id_json},"name":"{name}","input":{{"q":1}},"x":{extra}}}]}}"#
        );
        let m = Message::from_json(&src).unwrap();
        prop_assert_eq!(m.to_json(), src.clone());
        prop_assert_eq!(serde_json::to_string(&m).unwrap(), src.clone());
        match m.blocks()[0].kind() {
            BlockKind::ToolUse { id: i, name: n } => {
                prop_assert_eq!(&**i, id.as_str());
                prop_assert_eq!(&**n, name.as_str());
            }
            other => prop_assert!(false, "{other:?}"),
        }
        prop_assert_eq!(m.blocks()[0].tool_input().map(|r| r.get()), Some(r#"{"q":1}"#));
        let fields = m.blocks()[0].fields();
        let id_bytes = fields.get("id").unwrap();
        prop_assert_eq!(id_bytes.get(), id_json.as_str());
        prop_assert_eq!(&Message::from_json(&src).unwrap(), &m);

        let src = format!(
            r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":{id_json},"content":"ok"}}]}}"#
        );
        let m = Message::from_json(&src).unwrap();
        prop_assert_eq!(m.to_json(), src.clone());
        let b: ContentBlock = serde_json::from_str(&m.blocks()[0].to_json()).unwrap();
        prop_assert_eq!(&b, &m.blocks()[0]);
        let copy = b.with_tool_result_text("stub").unwrap();
        prop_assert_eq!(
            copy.to_json(),
            format!(r#"{{"type":"tool_result","tool_use_id":{id_json},"content":"stub"}}"#)
        );
    }
}

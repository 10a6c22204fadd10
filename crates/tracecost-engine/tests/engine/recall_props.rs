//! Property tests for the `recall_tool_result` tool: whatever the payload and
//! the arguments, answers never panic, and slices say exactly what they hold.

use proptest::prelude::*;
use serde_json::Value;
use tracecost_engine::handle::Handle;
use tracecost_engine::ledger::{InMemoryLedger, ToolResultLedger};
use tracecost_engine::recall::{
    MAX_CONTEXT_CHARS, MAX_RANGE_CHARS, MAX_SHOWN_MATCHES, RecallFormat, RecallRequest, answer,
    execute, fetch, parse_tool_input,
};

/// Text mixing 1-, 2-, 3- and 4-byte chars and newlines.
const TEXT: &str = "[a-zé日本🦀\n ]{0,200}";

fn payload() -> impl Strategy<Value = String> {
    prop_oneof![
        TEXT.prop_map(|s| s),
        any::<String>(),
        json_value().prop_map(|v| v.to_string()),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        "[a-zé日🦀 \n\"]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(("[a-cé日]{1,3}", inner), 0..5)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Offsets and lengths: small, near the payload sizes, and huge.
fn count() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..300, any::<u64>(), Just(u64::MAX), Just(0)]
}

fn request() -> impl Strategy<Value = RecallRequest> {
    (
        prop::option::of(prop_oneof![
            Just(RecallFormat::Full),
            Just(RecallFormat::Summary)
        ]),
        prop::option::of(prop_oneof!["[a-zé日🦀\n ]{0,4}", any::<String>()]),
        prop::option::of(count()),
        prop::option::of(count()),
        prop::option::of(prop_oneof!["[a-cé日0-9.$\\[\\]]{0,12}", any::<String>()]),
    )
        .prop_map(
            |(format, query, offset, max_chars, json_path)| RecallRequest {
                format,
                query,
                offset,
                max_chars,
                json_path,
            },
        )
}

/// Splits a sliced answer into its header line and its body.
fn split_header(out: &str) -> (&str, &str) {
    out.split_once('\n').unwrap_or((out, ""))
}

fn chars(s: &str, start: usize, end: usize) -> String {
    s.chars()
        .skip(start)
        .take(end.saturating_sub(start))
        .collect()
}

/// Walks `v` choosing children by `choices`; returns the dotted path and
/// the value it reaches.
fn walk<'a>(v: &'a Value, choices: &[usize]) -> (String, &'a Value) {
    let mut path: Vec<String> = Vec::new();
    let mut cur = v;
    for &c in choices {
        match cur {
            Value::Array(items) if !items.is_empty() => {
                let i = c % items.len();
                path.push(i.to_string());
                cur = &items[i];
            }
            Value::Object(map) if !map.is_empty() => {
                let (k, child) = map.iter().nth(c % map.len()).unwrap();
                path.push(k.clone());
                cur = child;
            }
            _ => break,
        }
    }
    (path.join("."), cur)
}

proptest! {
    #[test]
    fn answer_never_panics(payload in payload(), request in request()) {
        let h = Handle::derive("toolu_p", "t", &payload);
        let out = answer(&h, &payload, &request);
        // Bounded: a slice never exceeds the payload plus headers by much,
        // except `full`, which is the payload itself.
        let limit = payload.chars().count().max(MAX_RANGE_CHARS)
            + MAX_SHOWN_MATCHES * (2 * MAX_CONTEXT_CHARS + 400)
            + request.query.as_deref().map_or(0, |q| q.chars().count() * (MAX_SHOWN_MATCHES + 1))
            + 2_000;
        prop_assert!(out.chars().count() <= limit);
    }

    #[test]
    fn parse_and_execute_never_panic_on_strings(input in any::<String>()) {
        let ledger = InMemoryLedger::new();
        let _ = parse_tool_input(&input);
        let out = execute(&ledger, &input);
        prop_assert!(out.starts_with('['));
    }

    #[test]
    fn parse_and_execute_never_panic_on_objects(
        payload in payload(),
        members in prop::collection::vec(
            (
                prop_oneof![
                    Just("mem_id".to_owned()),
                    Just("format".to_owned()),
                    Just("query".to_owned()),
                    Just("offset".to_owned()),
                    Just("max_chars".to_owned()),
                    Just("json_path".to_owned()),
                    "[a-z_]{1,9}",
                ],
                prop_oneof![
                    json_value(),
                    count().prop_map(Value::from),
                    any::<i64>().prop_map(Value::from),
                    any::<f64>().prop_map(Value::from),
                    Just(Value::from("summary")),
                    Just(Value::from("full")),
                ],
            ),
            0..6,
        ),
        use_real_id in any::<bool>(),
    ) {
        let ledger = InMemoryLedger::new();
        let h = ledger.record("toolu_p", "t", "{}", &payload).unwrap();
        let mut map: serde_json::Map<String, Value> = members.into_iter().collect();
        if use_real_id {
            map.insert("mem_id".to_owned(), Value::from(h.mem_id.clone()));
        }
        let input = Value::Object(map).to_string();
        let parsed = parse_tool_input(&input);
        let out = execute(&ledger, &input);
        match parsed {
            Ok((id, request)) => prop_assert_eq!(out, fetch(&ledger, &id, &request)),
            Err(e) => prop_assert_eq!(
                out,
                format!("[recall_tool_result: invalid arguments: {e}]")
            ),
        }
    }

    #[test]
    fn full_is_byte_exact(payload in payload()) {
        let h = Handle::derive("toolu_p", "t", &payload);
        prop_assert_eq!(&answer(&h, &payload, &RecallRequest::full()), &payload);
        prop_assert_eq!(&answer(&h, &payload, &RecallRequest::default()), &payload);
        let ledger = InMemoryLedger::new();
        let h = ledger.record("toolu_p", "t", "{}", &payload).unwrap();
        let input = serde_json::json!({"mem_id": h.mem_id, "format": "full"}).to_string();
        prop_assert_eq!(&execute(&ledger, &input), &payload);
    }

    #[test]
    fn range_body_is_exactly_those_chars(
        payload in TEXT,
        max_chars in prop::option::of(1u64..300),
    ) {
        let h = Handle::derive("toolu_p", "t", &payload);
        let total = payload.chars().count();
        for offset in 0..total + 2 {
            let request = RecallRequest {
                offset: Some(offset as u64),
                max_chars,
                ..RecallRequest::default()
            };
            let out = answer(&h, &payload, &request);
            if offset >= total {
                prop_assert!(out.starts_with(&format!("[recall_tool_result: offset {offset} is past the end")), "{}", out);
                continue;
            }
            let end = (offset + max_chars.map_or(4_000, |m| m as usize)).min(total);
            let (header, body) = split_header(&out);
            let next = if end < total { format!("; next: offset={end}") } else { String::new() };
            prop_assert_eq!(header, format!("[chars {offset}..{end} of {total}{next}]"));
            prop_assert_eq!(body, chars(&payload, offset, end));
        }
    }

    #[test]
    fn query_reports_true_count_and_exact_windows(
        payload in TEXT,
        needle in "[a-zé日🦀 ]{1,2}",
        context in prop::option::of(1u64..30),
        offset in prop::option::of(0u64..220),
    ) {
        let h = Handle::derive("toolu_p", "t", &payload);
        let request = RecallRequest {
            query: Some(needle.clone()),
            offset,
            max_chars: context,
            ..RecallRequest::default()
        };
        let out = answer(&h, &payload, &request);
        // Non-overlapping, left to right: `str::matches`.
        let n = payload.matches(needle.as_str()).count();
        if n == 0 {
            prop_assert!(out.starts_with("[no match for "), "{}", out);
            return Ok(());
        }
        let plural = if n == 1 { "match" } else { "matches" };
        prop_assert!(out.starts_with(&format!("[{n} {plural} for ")), "{}", out);
        // Every window holds exactly the chars its label names, and every
        // match it names starts with the needle.
        let needle_chars = needle.chars().count();
        let mut shown = 0;
        for part in out.split("\n--- ").skip(1) {
            let (label, text) = part.split_once(" ---\n").unwrap();
            let range = label.rsplit_once("(chars ").unwrap().1.trim_end_matches(')');
            let (a, b) = range.split_once("..").unwrap();
            let (a, b): (usize, usize) = (a.parse().unwrap(), b.parse().unwrap());
            prop_assert_eq!(text, chars(&payload, a, b));
            let at = label.split_once(" at char").unwrap().1;
            let at = at.trim_start_matches('s').split(" (").next().unwrap();
            for m in at.trim().split(", ") {
                let m: usize = m.parse().unwrap();
                prop_assert!(m >= offset.unwrap_or(0) as usize);
                prop_assert_eq!(chars(&payload, m, m + needle_chars), needle.clone());
                shown += 1;
            }
        }
        prop_assert!(shown <= MAX_SHOWN_MATCHES);
    }

    #[test]
    fn json_path_returns_the_compact_value(
        doc in json_value(),
        choices in prop::collection::vec(any::<usize>(), 0..5),
    ) {
        let payload = serde_json::to_string_pretty(&doc).unwrap();
        let (path, expected) = walk(&doc, &choices);
        let h = Handle::derive("toolu_p", "t", &payload);
        let request = RecallRequest { json_path: Some(path.clone()), ..RecallRequest::default() };
        prop_assert_eq!(
            answer(&h, &payload, &request),
            serde_json::to_string(expected).unwrap(),
            "path {}", path
        );
    }
}

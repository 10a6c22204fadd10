//! Properties of the snapshot rewriter over random histories.

use proptest::prelude::*;
use tracecost_engine::ledger::{InMemoryLedger, ToolResultLedger};
use tracecost_engine::message::{BlockKind, Message, Role};
use tracecost_engine::recall::{RecallRequest, fetch};
use tracecost_engine::rewrite::{CompactionPolicy, Compactor, WireBlock, rewrite};
use tracecost_engine::wire::message_json;

#[derive(Debug, Clone)]
enum Turn {
    UserText(String),
    AssistantText(String),
    /// Parallel tool calls: (payload, as a block list?).
    Tools(Vec<(String, bool)>),
}

fn payload() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,40}",
        "[a-zé日本🦀\n\" ]{0,400}",
        (0usize..30).prop_map(|n| format!(
            "{{\"items\":[{}]}}",
            vec!["{\"k\":\"vé\",\"n\":1}"; n].join(",")
        )),
    ]
}

fn turns() -> impl Strategy<Value = Vec<Turn>> {
    prop::collection::vec(
        prop_oneof![
            "[a-z ]{1,20}".prop_map(Turn::UserText),
            "[a-z ]{1,20}".prop_map(Turn::AssistantText),
            prop::collection::vec((payload(), any::<bool>()), 1..4).prop_map(Turn::Tools),
        ],
        0..14,
    )
}

fn build(turns: &[Turn]) -> Vec<Message> {
    let mut h = vec![Message::from_json(r#"{"role":"user","content":"start"}"#).unwrap()];
    let mut next_id = 0;
    for t in turns {
        match t {
            Turn::UserText(s) => h.push(
                Message::from_json(&serde_json::json!({"role":"user","content":s}).to_string())
                    .unwrap(),
            ),
            Turn::AssistantText(s) => h.push(
                Message::from_json(
                    &serde_json::json!({"role":"assistant","content":[{"type":"text","text":s}]})
                        .to_string(),
                )
                .unwrap(),
            ),
            Turn::Tools(calls) => {
                let mut uses = Vec::new();
                let mut results = Vec::new();
                for (p, as_blocks) in calls {
                    let id = format!("toolu_{next_id:03}");
                    next_id += 1;
                    uses.push(format!(r#"{{"type":"tool_use","id":"{id}","name":"t{}","input":{{"z":1,"a":[2,1]}}}}"#, next_id % 3));
                    let content = if *as_blocks {
                        serde_json::json!([{"type":"text","text":p}]).to_string()
                    } else {
                        serde_json::to_string(p).unwrap()
                    };
                    results.push(format!(
                        r#"{{"type":"tool_result","tool_use_id":"{id}","content":{content}}}"#
                    ));
                }
                h.push(
                    Message::from_json(&format!(
                        r#"{{"role":"assistant","content":[{}]}}"#,
                        uses.join(",")
                    ))
                    .unwrap(),
                );
                h.push(
                    Message::from_json(&format!(
                        r#"{{"role":"user","content":[{}]}}"#,
                        results.join(",")
                    ))
                    .unwrap(),
                );
            }
        }
    }
    h
}

/// (message, block, type, id) of every block, as sent or as recorded.
fn skeleton<B: std::ops::Deref<Target = tracecost_engine::message::ContentBlock>>(
    blocks: impl Iterator<Item = (usize, usize, B)>,
) -> Vec<(usize, usize, String, String)> {
    blocks
        .map(|(m, b, block)| {
            let id = match block.kind() {
                BlockKind::ToolUse { id, .. } => id.to_string(),
                BlockKind::ToolResult { tool_use_id, .. } => tool_use_id.to_string(),
                _ => String::new(),
            };
            (m, b, block.block_type().to_owned(), id)
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn rewriter_contracts(turns in turns(), threshold in 0u64..300, keep in 0usize..5) {
        let history = build(&turns);
        let snapshot: Vec<String> = history.iter().map(Message::to_json).collect();
        let policy = CompactionPolicy { size_threshold: threshold, keep_last_n: keep };
        let ledger = InMemoryLedger::new();
        let mut long_lived = Compactor::new(&ledger, policy);
        let mut previous_stubs: Vec<(String, String)> = Vec::new();

        for len in 1..=history.len() {
            let prefix = &history[..len];
            let r = long_lived.rewrite(prefix).unwrap();

            // Never mutates its input.
            let now: Vec<String> = history.iter().map(Message::to_json).collect();
            prop_assert_eq!(&now, &snapshot);

            // Same skeleton: every block kept in place, ids byte for byte, so
            // every tool_use keeps its tool_result.
            let sent = skeleton(r.view.messages.iter().enumerate().flat_map(|(m, wm)| wm.sent_blocks().enumerate().map(move |(b, x)| (m, b, x))));
            let orig = skeleton(prefix.iter().enumerate().flat_map(|(m, msg)| msg.blocks().iter().enumerate().map(move |(b, x)| (m, b, x))));
            prop_assert_eq!(sent, orig);

            // The rule: larger than the threshold, older than the last N ...
            let results: Vec<_> = prefix.iter().flat_map(Message::blocks).filter_map(|b| match b.kind() {
                BlockKind::ToolResult { tool_use_id, payload_chars, .. } => Some((tool_use_id.to_string(), *payload_chars)),
                _ => None,
            }).collect();
            // ... that the model has answered (an assistant message follows).
            let answered = prefix.iter().rposition(|m| m.role() == Role::Assistant).map_or(0, |i| prefix[..i].iter().flat_map(Message::blocks).filter(|b| matches!(b.kind(), BlockKind::ToolResult { .. })).count());
            let eligible = results.len().saturating_sub(keep).min(answered);
            let expected: Vec<String> = results[..eligible].iter().filter(|(_, n)| *n > threshold).map(|(id, _)| id.clone()).collect();
            let got: Vec<String> = r.compacted.iter().map(|h| h.tool_call_id.clone()).collect();
            prop_assert_eq!(&got, &expected);

            // Stubs: a fresh compactor gives the same bytes, and every stub
            // sent before is sent again unchanged.
            let fresh = rewrite(prefix, policy, &InMemoryLedger::new()).unwrap();
            let stubs: Vec<(String, String)> = r.view.messages.iter().flat_map(|m| m.blocks.iter().flatten()).filter_map(|b| match b {
                WireBlock::Compacted { original, stub } => match original.kind() {
                    BlockKind::ToolResult { tool_use_id, .. } => Some((tool_use_id.to_string(), stub.to_json())),
                    _ => None,
                },
                WireBlock::Original(_) | WireBlock::Cleared { .. } => None,
            }).collect();
            let fresh_bytes: Vec<String> = fresh.view.messages.iter().map(message_json).collect();
            let long_bytes: Vec<String> = r.view.messages.iter().map(message_json).collect();
            prop_assert_eq!(fresh_bytes, long_bytes);
            for (id, bytes) in &previous_stubs {
                let again = stubs.iter().find(|(i, _)| i == id);
                prop_assert_eq!(again.map(|(_, b)| b), Some(bytes));
            }
            previous_stubs = stubs;
        }

        // Every compacted payload comes back byte-exact.
        for m in &history {
            for b in m.blocks() {
                if let BlockKind::ToolResult { tool_use_id, .. } = b.kind()
                    && let Some(rec) = ledger.get_by_call_id(tool_use_id).unwrap() {
                        prop_assert_eq!(fetch(&ledger, &rec.handle.mem_id, &RecallRequest::full()), b.tool_result_payload().unwrap());
                    }
            }
        }
    }
}

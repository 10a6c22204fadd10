#![no_main]
//! The rewriter over a history decoded from the fuzz input, one
//! `Message::from_json` per line (lines that do not parse are dropped).
//! The first two bytes are the policy. Checks: never a panic; the same
//! history always gives the same bytes; a compacted result comes back byte
//! for byte through the recall tool; tool_use_ids survive.

use libfuzzer_sys::fuzz_target;
use tracecost_engine::ledger::{InMemoryLedger, ToolResultLedger};
use tracecost_engine::message::{BlockKind, Message};
use tracecost_engine::recall::{RecallRequest, fetch};
use tracecost_engine::rewrite::{CompactionPolicy, Compactor, rewrite};
use tracecost_engine::wire::message_json;

fuzz_target!(|data: &[u8]| {
    let [t, k, rest @ ..] = data else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let policy = CompactionPolicy {
        size_threshold: u64::from(*t) * 4,
        keep_last_n: usize::from(*k % 8),
    };
    let history: Vec<Message> = text
        .lines()
        .filter_map(|l| Message::from_json(l).ok())
        .collect();
    let ledger = InMemoryLedger::new();
    let Ok(first) = rewrite(&history, policy, &ledger) else {
        return;
    };
    assert_eq!(first.view.messages.len(), history.len());
    let first_bytes: Vec<String> = first.view.messages.iter().map(message_json).collect();

    // A long-lived compactor, call after call, ends on the same bytes.
    let mut compactor = Compactor::new(InMemoryLedger::new(), policy);
    for n in 1..=history.len() {
        compactor.rewrite(&history[..n]).expect("in-memory ledger");
    }
    let last = compactor.rewrite(&history).expect("in-memory ledger");
    let last_bytes: Vec<String> = last.view.messages.iter().map(message_json).collect();
    assert_eq!(first_bytes, last_bytes, "rewrite is not deterministic");

    for h in &first.compacted {
        let rec = ledger.get(&h.mem_id).expect("in-memory").expect("recorded");
        assert_eq!(
            fetch(&ledger, &h.mem_id, &RecallRequest::full()),
            &*rec.payload
        );
        assert_eq!(h.size_chars, rec.payload.chars().count() as u64);
        assert!(h.size_chars > policy.size_threshold);
    }
    // The wire view keeps every tool_use_id byte for byte.
    for (m, w) in history.iter().zip(&first.view.messages) {
        let ids = |it: &mut dyn Iterator<Item = &tracecost_engine::message::ContentBlock>| {
            it.filter_map(|b| match b.kind() {
                BlockKind::ToolResult { tool_use_id, .. } => Some(tool_use_id.to_string()),
                _ => None,
            })
            .collect::<Vec<_>>()
        };
        assert_eq!(ids(&mut m.blocks().iter()), ids(&mut w.sent_blocks()));
    }
});

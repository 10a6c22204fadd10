//! The stubs of one history are the same bytes in separate processes (each
//! with its own hash seeds, allocation addresses and clock).

use std::process::Command;

use tracecost_engine::ledger::InMemoryLedger;
use tracecost_engine::message::Message;
use tracecost_engine::rewrite::{CompactionPolicy, rewrite};
use tracecost_engine::wire::message_json;

/// `child_entry` by its name in this test binary: its module, then itself.
const CHILD_TEST: &str = "stub_determinism::child_entry";

const CHILD_ENV: &str = "TRACECOST_STUB_CHILD";

fn history() -> Vec<Message> {
    let mut h =
        vec![Message::from_json(r#"{"role":"user","content":"research massage guns"}"#).unwrap()];
    for i in 0..12 {
        let payload = if i % 3 == 0 {
            let items: Vec<String> = (0..40)
                .map(|k| {
                    format!(
                        r#"{{"asin":"B0{i}{k:03}","title":"Gün {k}","price":{}.99}}"#,
                        20 + k
                    )
                })
                .collect();
            format!(
                r#"{{"products":[{}],"page":{i},"currency":"USD"}}"#,
                items.join(",")
            )
        } else {
            format!("Result {i}\n{}", "línea de texto 日本 ".repeat(30 * i + 1))
        };
        h.push(Message::from_json(&format!(r#"{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_{i:02}","name":"keepa","input":{{"q":"gun","page":{i}}}}}]}}"#)).unwrap());
        h.push(Message::from_json(&format!(r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{i:02}","content":{}}}]}}"#, serde_json::to_string(&payload).unwrap())).unwrap());
    }
    h
}

fn stubs() -> String {
    let h = history();
    let r = rewrite(
        &h,
        CompactionPolicy {
            size_threshold: 200,
            keep_last_n: 2,
        },
        &InMemoryLedger::new(),
    )
    .unwrap();
    r.view
        .messages
        .iter()
        .map(message_json)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn child_entry() {
    if std::env::var_os(CHILD_ENV).is_some() {
        print!("<<<{}>>>", stubs());
    }
}

#[test]
fn three_processes_produce_identical_stub_bytes() {
    let exe = std::env::current_exe().unwrap();
    let mine = stubs();
    assert!(
        mine.contains("tracecost-stub/1"),
        "the fixture compacts something"
    );
    for _ in 0..3 {
        let out = Command::new(&exe)
            .args([CHILD_TEST, "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, "1")
            .output()
            .unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let start = text.find("<<<").unwrap() + 3;
        let end = text.rfind(">>>").unwrap();
        assert_eq!(&text[start..end], mine);
    }
}

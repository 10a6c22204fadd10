//! A group of configs replayed on one engine run gives each config what it
//! gives replayed alone.

use tracecost_cost::pricing::Pricing;
use tracecost_cost::tokens::{TokenMemo, parse_tokenizer};
use tracecost_policy::Config;
use tracecost_replay::{PreparedTrace, ReplayContext, ReplayOptions, replay, replay_group};
use tracecost_trace::Loader;

/// Sharing one engine run between cache policies changes nothing: each
/// config of a group gives exactly what it gives alone.
#[test]
fn grouped_replays_equal_single_replays() {
    let trace = Loader::new(&crate::util::repo("traces/massage-gun.json"))
        .load()
        .unwrap()
        .traces
        .remove(0);
    let pricing = Pricing::builtin();
    let memo = TokenMemo::new(parse_tokenizer("o200k_base").unwrap());
    let prepared = PreparedTrace::new(&trace, &memo, pricing.lookup(&trace.model).unwrap(), true);
    for compaction in [
        "off",
        "ledger:t=8000,k=1",
        "clear-tool-uses:trigger=50000,keep=2",
        "langchain-clear:trigger=50000,keep=2",
    ] {
        let configs: Vec<Config> = [
            "none",
            "system:ttl=5m",
            "native:manifest=volatile,ttl=1h",
            "tail:ttl=5m",
            "claude-code:ttl=1h",
        ]
        .iter()
        .map(|c| format!("{compaction}+{c}").parse().unwrap())
        .collect();
        let group = replay_group(
            &prepared,
            &configs,
            ReplayContext {
                pricing: &pricing,
                memo: &memo,
                opts: ReplayOptions::default(),
            },
        )
        .unwrap();
        // A call's record is held once, shared by its rows under every
        // config of the group.
        let first = &group[0].calls;
        assert!(first.iter().any(|c| c.record.is_some()), "usage recorded");
        for g in &group[1..] {
            for (a, b) in first.iter().zip(g.calls.iter()) {
                match (&a.record, &b.record) {
                    (Some(x), Some(y)) => assert!(std::ptr::eq(&**x, &**y), "call {}", a.index),
                    (None, None) => {}
                    _ => panic!("call {}: a record in one row only", a.index),
                }
            }
        }
        for (c, g) in configs.iter().zip(&group) {
            let alone = replay(
                &prepared,
                c,
                ReplayContext {
                    pricing: &pricing,
                    memo: &memo,
                    opts: ReplayOptions::default(),
                },
            )
            .unwrap();
            assert_eq!(&alone, g, "{c}");
        }
    }
}

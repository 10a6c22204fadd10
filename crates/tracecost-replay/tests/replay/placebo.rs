//! The placebo: on a generated fleet, every tool result is swapped for a
//! result of about the same size from another session, which the model
//! never saw. Evidence the detector still finds there is coincidence, and
//! what it charges must stay small beside what it charges on the real
//! results (`docs/recall.md`).

use std::sync::Arc;

use serde_json::Value;
use tracecost_cost::pricing::Pricing;
use tracecost_cost::tokens::{CharsPerToken, TokenMemo};
use tracecost_policy::Config;
use tracecost_policy::GridSpec;
use tracecost_replay::recall_risk::Range;
use tracecost_replay::sweep::sweep_trace;
use tracecost_replay::{PreparedTrace, ReplayContext, ReplayOptions};
use tracecost_trace::Trace;

/// The text of a tool result's content: a string, or its text blocks'
/// texts joined by line breaks (as the placebo of the shared corpora
/// reads a Claude Code record).
fn text_of(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => Some(
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => None,
    }
}

/// Each tool_result block of a trace document, mutably.
fn results_of(doc: &mut Value) -> Vec<&mut Value> {
    let Some(Value::Array(messages)) = doc.get_mut("messages") else {
        return Vec::new();
    };
    messages
        .iter_mut()
        .filter_map(|m| match m.get_mut("content") {
            Some(Value::Array(blocks)) => Some(blocks),
            _ => None,
        })
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        .collect()
}

/// The session a trace belongs to (its parts share it).
fn session_of(t: &Trace) -> String {
    t.session.clone().unwrap_or_else(|| t.name.clone())
}

/// `traces` with every non-empty tool result's text replaced by the text
/// of a result from another session whose length is among the 5 closest
/// of the 80 results of nearest length (the pool sorted by length), the
/// pick drawn from a fixed sequence: the swap of the shared corpora's
/// placebo, on generated sessions.
fn placebo(traces: &[Trace]) -> Vec<Trace> {
    let mut docs: Vec<Value> = traces
        .iter()
        .map(|t| serde_json::from_str(&tracecost_trace::to_json(t)).unwrap())
        .collect();
    let sessions: Vec<String> = traces.iter().map(session_of).collect();
    // (chars, session, text), by length then session.
    let mut pool: Vec<(usize, &str, String)> = Vec::new();
    for (doc, session) in docs.iter_mut().zip(&sessions) {
        for b in results_of(doc) {
            if let Some(t) = b.get("content").and_then(text_of).filter(|t| !t.is_empty()) {
                pool.push((t.chars().count(), session, t));
            }
        }
    }
    pool.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    let mut draw: u64 = 7;
    let mut swapped = Vec::new();
    for (doc, session) in docs.iter().zip(&sessions) {
        let mut doc = doc.clone();
        for b in results_of(&mut doc) {
            let Some(t) = b.get("content").and_then(text_of).filter(|t| !t.is_empty()) else {
                continue;
            };
            let len = t.chars().count();
            let j = pool.partition_point(|p| p.0 < len);
            let mut near: Vec<&(usize, &str, String)> = pool
                [j.saturating_sub(40)..(j + 40).min(pool.len())]
                .iter()
                .filter(|p| p.1 != session.as_str())
                .collect();
            if near.is_empty() {
                continue;
            }
            near.sort_by_key(|p| p.0.abs_diff(len));
            draw = draw.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let pick = near[(draw >> 33) as usize % near.len().min(5)];
            b["content"] = Value::String(pick.2.clone());
        }
        swapped.push(
            tracecost_trace::load_str(&doc.to_string(), "placebo.json")
                .unwrap()
                .traces
                .remove(0),
        );
    }
    swapped
}

/// The evidenced recall of the default grid's ledger configs, USD, summed
/// over traces and configs (low, mid and high, each cut at zero once).
fn evidenced_recall(traces: &[Trace]) -> Range {
    let pricing = Pricing::builtin();
    let memo = TokenMemo::new(Arc::new(CharsPerToken(4.0)));
    let grid = GridSpec::default();
    let keeps = grid.keep_last_list();
    let configs: Vec<Config> = grid
        .threshold_list()
        .into_iter()
        .flat_map(|t| {
            keeps
                .iter()
                .map(move |k| format!("ledger:t={t},k={k}+none").parse().unwrap())
        })
        .collect();
    let off: Config = "off+none".parse().unwrap();
    let mut sum = Range::default();
    for t in traces {
        let price = pricing.lookup(&t.model).unwrap();
        let prepared = PreparedTrace::new(t, &memo, price, true);
        let ctx = ReplayContext {
            pricing: &pricing,
            memo: &memo,
            opts: ReplayOptions {
                batch: false,
                progress: None,
                ..Default::default()
            },
        };
        let s = sweep_trace(&prepared, &configs, &off, ctx, None, &|| {}).unwrap();
        for r in s.rows.iter().filter(|r| r.result.config != off) {
            let c = r.recall_cost_usd;
            sum = Range {
                low: sum.low + c.low,
                mid: sum.mid + c.mid,
                high: sum.high + c.high,
            };
        }
    }
    sum.map(|x| x.max(0.0))
}

#[test]
fn the_detector_finds_next_to_nothing_in_results_the_model_never_saw() {
    let fleet: Vec<Trace> = tracecost_gen::fleet(24, 5).collect();
    let real = evidenced_recall(&fleet);
    let swapped = evidenced_recall(&placebo(&fleet));
    eprintln!("real {real:?}\nplacebo {swapped:?}");
    assert!(real.mid > 0.0, "{real:?}");
    assert!(
        swapped.mid <= 0.15 * real.mid,
        "the placebo keeps {:.1}% of the evidenced recall (mid): {swapped:?} against {real:?}",
        swapped.mid / real.mid * 100.0
    );
}

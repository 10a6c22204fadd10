//! The bundled reference traces: fidelity to their published figures,
//! stability under the engine, and what the ledger saves.

fn tracecost(args: &[&str]) -> (i32, String) {
    let out = crate::util::tracecost()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
    )
}

/// With compaction off and no history caching, the simulated input of
/// calls 02–06 is within 5% of the published figures recorded in the trace.
#[test]
fn massage_gun_reproduces_its_recorded_input_tokens() {
    let (code, out) = tracecost(&[
        "replay",
        "traces/massage-gun.json",
        "--config",
        "off+none",
        "--format",
        "json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["model"], "claude-opus-4-1-20250805");
    let calls = v["calls"].as_array().unwrap();
    assert_eq!(
        calls
            .iter()
            .map(|c| c["messages"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 3, 5, 7, 9, 11]
    );
    for c in &calls[1..6] {
        let sim = c["input_tokens"].as_u64().unwrap() as f64;
        let rec = c["recorded"]["input_tokens"].as_u64().unwrap() as f64;
        let err = (sim - rec).abs() / rec;
        assert!(
            err <= 0.05,
            "call {}: simulated {sim} vs recorded {rec} ({:.1}%)",
            c["index"],
            err * 100.0
        );
    }
}

#[test]
fn the_ledger_saves_money_on_massage_gun_at_opus_prices() {
    let (code, out) = tracecost(&[
        "sweep",
        "traces/massage-gun.json",
        "--format",
        "json",
        "--cache",
        "none,tail",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let t = &v["traces"][0];
    let rows = t["rows"].as_array().unwrap();
    let baseline = &rows[t["baseline"].as_u64().unwrap() as usize];
    assert_eq!(baseline["result"]["config"], "off+none");
    let best_ledger = rows
        .iter()
        .find(|r| {
            r["result"]["config"]
                .as_str()
                .unwrap()
                .starts_with("ledger:")
        })
        .unwrap();
    let pct = best_ledger["savings_pct"].as_f64().unwrap();
    assert!(pct > 50.0, "the best ledger config saves {pct:.1}%");
    // Without caching, compaction alone must still save.
    let ledger_none = rows.iter().find(|r| {
        let c = r["result"]["config"].as_str().unwrap();
        c.starts_with("ledger:") && c.ends_with("+none")
    });
    assert!(ledger_none.unwrap()["savings_usd"].as_f64().unwrap() > 0.0);
}

#[test]
fn stability_holds_on_every_bundled_trace() {
    for trace in ["traces/massage-gun.json", "traces/session-200-s1.json"] {
        for config in [
            "ledger:t=8000,k=2+tail:ttl=5m",
            "ledger:t=2000,k=1+native:manifest=cached,ttl=5m",
            "clear-tool-uses:trigger=50000,keep=3+none",
        ] {
            let (code, out) =
                tracecost(&["stability", trace, "--config", config, "--processes", "1"]);
            assert_eq!(code, 0, "{trace} {config}:\n{out}");
            assert!(
                out.contains("stable:") && out.contains("identical in 1 of 1"),
                "{out}"
            );
        }
    }
}

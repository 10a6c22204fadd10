//! The fleet answer: totals are sums of per-session replays, savings are
//! measured against what runs, policies that never fire are never
//! recommended, a session's summary keeps no per-call rows, and calls over
//! the window are flagged.

use crate::util::repo;

use tracecost_app::{CalibrationChoice, CostPlan, SweepOptions, SweepPlan};
use tracecost_policy::GridSpec;
use tracecost_replay::sweep::Grid;
use tracecost_trace::progress::Silent;

fn bundled() -> Vec<tracecost_trace::Trace> {
    tracecost_app::load_traces(
        &[
            repo("traces/massage-gun.json"),
            repo("traces/session-200-s1.json"),
        ],
        &Silent,
    )
    .unwrap()
    .0
}

fn sweep_plan(
    traces: Vec<tracecost_trace::Trace>,
    compactions: &[&str],
    caches: &[&str],
) -> SweepPlan {
    let grid = GridSpec {
        compactions: Some(compactions.iter().map(|s| s.to_string()).collect()),
        thresholds: compactions.contains(&"ledger").then(|| vec![8000]),
        keep_lasts: compactions.contains(&"ledger").then(|| vec![2]),
        caches: Some(caches.iter().map(|s| s.to_string()).collect()),
        ttl: None,
    };
    let (compactions, caches) = grid.expand().unwrap();
    let configs = Grid {
        compactions,
        caches,
        models: vec![None],
    }
    .configs();
    let mut plan = SweepPlan::from_configs(
        traces,
        configs,
        SweepOptions::default(),
        CostPlan::new(None, "o200k_base", CalibrationChoice::Auto, false).unwrap(),
    )
    .unwrap();
    plan.grid = grid;
    plan
}

fn summaries(
    traces: &[tracecost_trace::Trace],
    sweeps: &[tracecost_replay::sweep::TraceSweep],
) -> Vec<tracecost_app::fleet::SessionSummary> {
    traces
        .iter()
        .zip(sweeps)
        .map(|(t, s)| {
            tracecost_app::fleet::SessionSummary::new(t, s.clone(), None).expect("summary")
        })
        .collect()
}

/// The bundled traces under `off`/`ledger` × `none`/`tail`: the plan, its
/// sweeps and the fleet's answer.
fn bundled_fleet() -> (
    SweepPlan,
    Vec<tracecost_replay::sweep::TraceSweep>,
    tracecost_app::fleet::FleetAnswer,
) {
    let plan = sweep_plan(bundled(), &["off", "ledger"], &["none", "tail"]);
    let sweeps = tracecost_app::sweep(&plan, &Silent).unwrap();
    let fleet = tracecost_app::fleet::fleet(
        &tracecost_app::fleet::Summaries::from_vec(summaries(
            plan.whole_traces().unwrap(),
            &sweeps,
        )),
        plan.configs(),
        None,
    )
    .unwrap();
    (plan, sweeps, fleet)
}

/// Summaries spilled to disk read back as they were written, floats to
/// the bit, whatever order they were written in; the fleet's answer over
/// them is the answer over the same summaries in memory.
#[test]
fn spilled_summaries_read_back_exactly_and_answer_the_same() {
    let plan = sweep_plan(bundled(), &["off", "ledger"], &["none", "tail"]);
    let sweeps = tracecost_app::sweep(&plan, &Silent).unwrap();
    let kept = summaries(plan.whole_traces().unwrap(), &sweeps);
    let mut spilled = tracecost_app::fleet::Summaries::spilled(kept.len()).unwrap();
    // The last first, as a streamed report may hand them over.
    for (i, s) in kept.iter().enumerate().rev() {
        spilled.put(i, s.clone()).unwrap();
    }
    spilled.seal().unwrap();
    for (i, s) in kept.iter().enumerate() {
        assert_eq!(&*spilled.get(i).unwrap(), s, "trace {i}");
    }
    let in_memory = tracecost_app::fleet::Summaries::from_vec(kept);
    assert_eq!(
        tracecost_app::fleet::fleet(&spilled, plan.configs(), None).unwrap(),
        tracecost_app::fleet::fleet(&in_memory, plan.configs(), None).unwrap()
    );
    // A trace left without its summary is a bug, said as one.
    let mut missing = tracecost_app::fleet::Summaries::spilled(2).unwrap();
    missing
        .put(0, in_memory.get(0).unwrap().into_owned())
        .unwrap();
    let err = missing.seal().unwrap_err();
    assert_eq!(
        err.to_string(),
        "internal error: trace 2 of 2 has no summary"
    );
}

#[test]
fn fleet_totals_are_the_sums_of_per_session_replays() {
    let (plan, sweeps, fleet) = bundled_fleet();
    // massage-gun, and one session in parts that count once.
    assert_eq!(fleet.answer.traces, plan.traces().len());
    let parts = plan
        .traces()
        .iter()
        .filter(|t| t.as_ref().unwrap().session.is_some())
        .count();
    assert!(parts >= 2, "the bundled session continues in parts");
    assert_eq!(fleet.answer.sessions, plan.traces().len() - parts + 1);
    assert_eq!(fleet.configs.len(), plan.configs().len());
    for f in &fleet.configs {
        let per_session: f64 = sweeps
            .iter()
            .map(|s| {
                s.rows
                    .iter()
                    .find(|r| f.config.config() == Some(&r.result.config))
                    .unwrap()
                    .result
                    .totals
                    .cost_usd
            })
            .sum();
        assert!((f.cost_usd - per_session).abs() < 1e-9, "{}", f.config);
    }
    let status_quo: f64 = sweeps
        .iter()
        .map(|s| s.rows[s.baseline].result.totals.cost_usd)
        .sum();
    assert!((fleet.answer.status_quo.cost_usd - status_quo).abs() < 1e-9);
    let r = &fleet.answer.recommended;
    assert!((r.savings_usd - (status_quo - r.cost_usd)).abs() < 1e-9);
}

/// The bill by model, by class and the cache writes by cause are the
/// fleet's own figures cut another way: each adds up to the status quo's
/// and the recommendation's totals, and every written token has one cause.
#[test]
fn the_bill_by_model_class_and_cause_adds_up_to_the_totals() {
    let (_, _, fleet) = bundled_fleet();
    assert!(
        !fleet.answer.keep_status_quo,
        "the bundled fleet recommends a change"
    );
    let close = |a: f64, b: f64, what: &str| {
        assert!((a - b).abs() < 1e-6 * b.max(1.0), "{what}: {a} vs {b}")
    };
    let a = &fleet.answer;
    let c = &fleet.by_class;
    close(
        c.status_quo.cost_usd(),
        a.status_quo.cost_usd,
        "status quo by class",
    );
    close(
        c.recommended.cost_usd(),
        a.recommended.cost_usd,
        "recommended by class",
    );
    let by_model: f64 = fleet.by_model.iter().map(|m| m.status_quo.cost_usd()).sum();
    close(by_model, a.status_quo.cost_usd, "status quo by model");
    let calls: usize = fleet.by_model.iter().map(|m| m.recommended.calls).sum();
    assert_eq!(calls, a.calls);
    // The recorded bill, where the traces recorded one, by class.
    let recorded = c.recorded.expect("the bundled traces record usage");
    close(
        recorded.cost_usd(),
        a.recorded_cost_usd.unwrap(),
        "recorded by class",
    );
    let written = |f: fn(&tracecost_app::fleet::CauseFigures) -> (u64, f64)| {
        fleet
            .cache_writes_by_cause
            .iter()
            .map(f)
            .fold((0, 0.0), |s, x| (s.0 + x.0, s.1 + x.1))
    };
    let sq = written(|w| (w.status_quo_tokens, w.status_quo_usd));
    let rec = written(|w| (w.recommended_tokens, w.recommended_usd));
    assert_eq!(sq.0, c.status_quo.cache_write_tokens);
    assert_eq!(rec.0, c.recommended.cache_write_tokens);
    close(
        sq.1,
        c.status_quo.cache_write_usd,
        "status quo writes by cause",
    );
    close(
        rec.1,
        c.recommended.cache_write_usd,
        "recommended writes by cause",
    );
    // A trace's first write is its first call's.
    assert!(
        fleet
            .cache_writes_by_cause
            .iter()
            .any(|w| w.cause == "first_call" && w.status_quo_tokens > 0)
    );
}

#[test]
fn a_policy_that_never_fires_is_never_recommended_and_ties_keep_what_runs() {
    // A trigger no call reaches: the peer clears nothing, costs what no
    // compaction costs, and must not win the tie by its name.
    let massage_gun = bundled().into_iter().take(1).collect();
    let plan = sweep_plan(
        massage_gun,
        &["off", "clear-tool-uses:trigger=999999999"],
        &["none"],
    );
    let sweeps = tracecost_app::sweep(&plan, &Silent).unwrap();
    let fleet = tracecost_app::fleet::fleet(
        &tracecost_app::fleet::Summaries::from_vec(summaries(
            plan.whole_traces().unwrap(),
            &sweeps,
        )),
        plan.configs(),
        None,
    )
    .unwrap();
    let peer = fleet
        .configs
        .iter()
        .find(|c| c.config.to_string().starts_with("clear-tool-uses"))
        .unwrap();
    assert!(peer.no_effect);
    assert_eq!(peer.compacted_results, 0);
    assert!(fleet.answer.keep_status_quo);
    assert_eq!(fleet.answer.recommended.config.to_string(), "off+none");
    for s in &sweeps {
        let rec = &s.rows[s.recommended];
        assert!(!rec.no_effect, "{}", rec.result.config);
    }
}

#[test]
fn session_summaries_keep_days_and_names_but_no_per_call_rows() {
    let plan = sweep_plan(bundled(), &["off", "ledger"], &["none", "tail"]);
    let sweeps = tracecost_app::sweep(&plan, &Silent).unwrap();
    let sessions = summaries(plan.whole_traces().unwrap(), &sweeps);
    for (s, full) in sessions.iter().zip(&sweeps) {
        assert!(s.sweep.rows.iter().all(|r| r.result.calls.is_empty()));
        // Every call lands on one day, and the days add up to the totals.
        let calls: usize = s.days.iter().map(|d| d.calls).sum();
        assert_eq!(calls, full.rows[full.baseline].result.totals.calls);
        for (i, row) in full.rows.iter().enumerate() {
            let by_day: f64 = s.days.iter().map(|d| d.cost_usd[i]).sum();
            assert!(
                (by_day - row.result.totals.cost_usd).abs() < 1e-9,
                "{}",
                row.result.config
            );
        }
        assert!(s.started_ms.is_some() && s.started_ms <= s.ended_ms);
        let prompt = s.first_prompt.as_deref().unwrap();
        assert!(!prompt.is_empty() && !prompt.starts_with('<'), "{prompt}");
    }
    let fleet = tracecost_app::fleet::fleet(
        &tracecost_app::fleet::Summaries::from_vec(sessions.clone()),
        plan.configs(),
        None,
    )
    .unwrap();
    let sq: f64 = fleet.days.iter().map(|d| d.status_quo_usd).sum();
    assert!((sq - fleet.answer.status_quo.cost_usd).abs() < 1e-9);
    let rec: f64 = fleet.days.iter().map(|d| d.recommended_usd).sum();
    assert!((rec - fleet.answer.recommended.cost_usd).abs() < 1e-9);
    let m = fleet.per_month.as_ref().unwrap();
    assert!(m.days >= 1 && m.first_day <= m.last_day);
    let scale = tracecost_app::fleet::DAYS_PER_MONTH / m.days as f64;
    assert!((m.status_quo_usd - fleet.answer.status_quo.cost_usd * scale).abs() < 1e-9);
}

/// A session that never compacts outgrows its model's window, and the
/// replay says so; the same agent compacting stays within it.
#[test]
fn calls_over_the_context_window_are_flagged() {
    let cost = || CostPlan::new(None, "o200k_base", CalibrationChoice::Auto, false).unwrap();
    let over = |traces: Vec<tracecost_trace::Trace>, config: &str| -> usize {
        let config: tracecost_policy::Config = config.parse().unwrap();
        let plan =
            tracecost_app::ReplayPlan::with_config(traces, Some(&config), None, cost()).unwrap();
        tracecost_app::replay(&plan, &Silent)
            .unwrap()
            .iter()
            .map(|o| {
                let flagged = o.result.calls.iter().filter(|c| c.over_window).count();
                assert_eq!(flagged, o.result.totals.over_window_calls);
                flagged
            })
            .sum()
    };
    // Priced as a model with a 200K window (no long-context option).
    let long = tracecost_gen::session(300, 3);
    assert!(over(vec![long.clone()], "off+none@claude-opus-4-5") > 0);
    // Its own model (Sonnet 4.5) has the 1M long-context window.
    assert_eq!(over(vec![long], "off+none"), 0);
    assert_eq!(over(tracecost_gen::session_parts(300, 3), "off+none"), 0);
}

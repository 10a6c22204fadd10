//! An account cut into segments where its caches hold nothing: each
//! segment replayed alone gives the figures of the account replayed whole
//! (the report's cache built on them is tested from the command line).

use tracecost_app::{CalibrationChoice, CostPlan, SweepOptions, SweepPlan};
use tracecost_trace::progress::Silent;

/// An account of a generated fleet (two weeks of working days) cut where
/// no cache of the grid can hold an entry across: several segments, and
/// each replayed on its own gives every trace the sweep the account
/// replayed whole gives, call by call.
#[test]
fn an_account_cut_where_its_caches_are_empty_gives_the_same_figures() {
    let traces: Vec<_> = tracecost_gen::fleet(40, 5).collect();
    let configs: Vec<tracecost_policy::Config> = [
        "off+none",
        "off+tail",
        "off+claude-code:ttl=1h",
        "ledger:t=2000,k=1+none",
        "ledger:t=2000,k=1+tail",
        "ledger:t=2000,k=1+claude-code:ttl=5m",
    ]
    .iter()
    .map(|c| c.parse().unwrap())
    .collect();
    let plan_of = |traces: Vec<tracecost_trace::Trace>| {
        SweepPlan::from_configs(
            traces,
            configs.clone(),
            SweepOptions::default(),
            CostPlan::new(None, "o200k_base", CalibrationChoice::Auto, false).unwrap(),
        )
        .unwrap()
    };
    let plan = plan_of(traces.clone());
    let whole = tracecost_app::sweep(&plan, &Silent).unwrap();
    let hold = configs
        .iter()
        .map(|c| tracecost_replay::longest_hold_ms(&c.cache))
        .try_fold(0u64, |l, h| h.map(|h| l.max(h)));
    assert_eq!(hold, Some(60 * 60 * 1000));
    let all: Vec<usize> = (0..traces.len()).collect();
    let segments = tracecost_app::segments(&all, |i| plan.head(i), hold);
    assert!(segments.len() > 3, "{} segments", segments.len());
    assert_eq!(segments.iter().map(Vec::len).sum::<usize>(), traces.len());
    for seg in &segments {
        let part = plan_of(seg.iter().map(|&i| traces[i].clone()).collect());
        let sweeps = tracecost_app::sweep(&part, &Silent).unwrap();
        for (&i, s) in seg.iter().zip(&sweeps) {
            assert!(*s == whole[i], "trace {} ({})", i + 1, traces[i].name);
        }
    }
    // No hold known (a cache made for the first trace that meets it): one
    // segment.
    assert_eq!(
        tracecost_app::segments(&all, |i| plan.head(i), None),
        vec![all.clone()]
    );
}

/// Segments by hand: a trace starting within the hold of any earlier call
/// joins its segment, one starting after every earlier call's hold starts
/// a new one; each segment keeps the plan's order, and a trace without a
/// start time keeps the account whole.
#[test]
fn segments_start_only_past_every_earlier_calls_hold() {
    let head = |span: Option<(u64, u64)>| tracecost_app::TraceHead {
        calls: 1,
        first_start_ms: span.map(|s| s.0),
        timestamps: span.is_some(),
        span_ms: span,
    };
    // In the plan's order: 0 [100, 900], 1 [0, 50], 2 [1000, 1200] (within
    // 100 + 900's hold of 200), 3 [1401, 1500] (past 1200 + 200), 4
    // [1450, 1460] (overlaps 3).
    let spans = [
        (100, 900),
        (0, 50),
        (1000, 1200),
        (1401, 1500),
        (1450, 1460),
    ];
    let all = [0, 1, 2, 3, 4];
    let cut = tracecost_app::segments(&all, |i| head(Some(spans[i])), Some(200));
    assert_eq!(cut, vec![vec![0, 1, 2], vec![3, 4]]);
    // A hold one longer joins them: 1401 is not past 1200 + 201.
    let cut = tracecost_app::segments(&all, |i| head(Some(spans[i])), Some(201));
    assert_eq!(cut, vec![vec![0, 1, 2, 3, 4]]);
    // Indices are the plan's, whatever the group holds.
    let cut = tracecost_app::segments(
        &[7, 9],
        |i| head(Some([(0, 0), (500, 500)][i % 7 / 2])),
        Some(10),
    );
    assert_eq!(cut, vec![vec![7], vec![9]]);
    let cut = tracecost_app::segments(&all, |i| head((i != 3).then_some(spans[i])), Some(200));
    assert_eq!(cut, vec![all.to_vec()]);
}

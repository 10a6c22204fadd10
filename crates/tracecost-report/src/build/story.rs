//! The report's story, in words and in no format: the headline and the
//! picks of a trace, the fleet's answer and why, the break-even recall
//! price, what was skipped. Every writer (the HTML pages, `summary.md`, the
//! chart notes, stderr) says these sentences; none says them its own way,
//! and none calls another writer to get them.

use crate::fmt::{dollars, needs, thousands};
use tracecost_app::fidelity::error_pct;
use tracecost_app::fleet::{
    Basis, FleetAnswer, FleetStability, GroupAnswer, SessionFigures, StabilitySummary,
};
use tracecost_replay::ReplayResult;
use tracecost_replay::sweep::{SweepRow, TraceSweep};

/// Headline figures of one trace.
pub(super) struct Headline<'a> {
    pub(super) base: &'a SweepRow,
    pub(super) rec: &'a SweepRow,
    pub(super) best: &'a SweepRow,
    pub(super) recorded: Option<f64>,
}

pub(super) fn headline(s: &TraceSweep) -> Headline<'_> {
    let base = &s.rows[s.baseline];
    Headline {
        base,
        rec: &s.rows[s.recommended],
        best: &s.rows[s.cheapest],
        recorded: base.result.totals.recorded_cost_usd,
    }
}

pub(super) fn risk_text(r: &SweepRow) -> String {
    let n = &r.risk.needs;
    if n.high == 0.0 {
        return "no compacted result shows in what the agent wrote later".into();
    }
    let e = &r.risk.evidence;
    let observed = match r.risk.observed_needs {
        o if o > 0.0 => format!(
            " ({} of them at the recall rates observed where the ledger ran)",
            needs(o)
        ),
        _ => String::new(),
    };
    format!(
        "{} compacted result(s) needed again (from {} with a line the agent copied to {} with an identifier only they held){observed}, each a recall_tool_result call; {} fetched again by the agent itself, already paid",
        needs(n.mid),
        needs(n.low),
        needs(n.high),
        e.refetch
    )
}

/// What the records where the ledger ran show of recalls, in words.
pub(super) fn observed_text(o: &tracecost_replay::recall_risk::Observed) -> String {
    format!(
        "where the ledger ran, the model recalled {} of the {} results it stubbed ({:.1}%), and that rate, per tool and size, is charged in place of the estimate",
        o.recalls,
        o.stubbed,
        o.rate * 100.0
    )
}

/// One line per reason and count of the configs skipped for traces they
/// cannot apply to (a default grid holds a dozen configs of one cache
/// policy; they are said once).
pub(super) fn skipped_lines(skipped: &[tracecost_app::fleet::SkippedConfig]) -> Vec<String> {
    skipped_groups(skipped)
        .into_iter()
        .map(|(what, traces, of, reason)| {
            format!(
                "Not applicable: {what} skipped for {traces} of {of} traces ({reason}); in the fleet total those traces count at their status quo, so it saves only where it ran."
            )
        })
        .collect()
}

/// [`skipped_lines`] for a sweep, whose tables simply have no row for a
/// config where it was skipped.
pub fn sweep_skipped_lines(skipped: &[tracecost_app::fleet::SkippedConfig]) -> Vec<String> {
    skipped_groups(skipped)
        .into_iter()
        .map(|(what, traces, of, reason)| {
            format!("not applicable: {what} skipped for {traces} of {of} traces ({reason}); their tables have no row for it")
        })
        .collect()
}

/// Skipped configs grouped by reason and count: (the configs in words,
/// traces skipped, traces, reason).
pub(super) fn skipped_groups(
    skipped: &[tracecost_app::fleet::SkippedConfig],
) -> Vec<(String, usize, usize, &str)> {
    let mut groups: Vec<(&str, usize, usize, Vec<String>)> = Vec::new();
    for s in skipped {
        match groups
            .iter_mut()
            .find(|g| g.0 == s.reason && g.1 == s.traces && g.2 == s.of)
        {
            Some(g) => g.3.push(s.config.to_string()),
            None => groups.push((&s.reason, s.traces, s.of, vec![s.config.to_string()])),
        }
    }
    groups
        .into_iter()
        .map(|(reason, traces, of, configs)| {
            let what = match configs.as_slice() {
                [one] => format!("`{one}`"),
                [first, rest @ ..] => {
                    format!("`{first}` and {} other config(s)", rest.len())
                }
                [] => String::new(),
            };
            (what, traces, of, reason)
        })
        .collect()
}

/// The fleet's answer in words: one line each for what is paid now, the
/// simulation's agreement with it, what to do and what it comes to per
/// month, then what the answer depends on (the price of a recall).
pub fn fleet_lines(fleet: &FleetAnswer) -> Vec<String> {
    let a = &fleet.answer;
    let mut out = what_was_replayed(fleet);
    out.extend(skipped_lines(&a.skipped));
    let per_month = per_month_line(fleet);
    out.extend(recommendation_lines(fleet, &per_month));
    if !a.keep_status_quo {
        out.extend(action_line(fleet));
        out.extend(per_month);
    }
    out.extend(recall_range_line(fleet));
    out.extend(break_even_line(fleet));
    out
}

/// The calls each summarising policy added (its summaries) and what they
/// cost, counted in its figures: none when no config summarised.
fn summary_calls_line(fleet: &FleetAnswer) -> Option<String> {
    let each: Vec<String> = fleet
        .configs
        .iter()
        .filter(|c| c.summary_calls > 0)
        .map(|c| {
            format!(
                "`{}` adds {} summary call(s), {}",
                c.config,
                thousands(c.summary_calls as u64),
                dollars(c.summary_cost_usd)
            )
        })
        .collect();
    (!each.is_empty()).then(|| {
        format!(
            "Summary calls, counted in each policy's cost: {}.",
            each.join("; ")
        )
    })
}

/// The fleet's size, the baseline named, the recorded bill against the
/// simulation, and the status quo's figure.
fn what_was_replayed(fleet: &FleetAnswer) -> Vec<String> {
    let a = &fleet.answer;
    let traces = if a.traces == a.sessions {
        String::new()
    } else {
        format!(
            " ({} traces: continuations and subagents apart)",
            thousands(a.traces as u64)
        )
    };
    let mut out = vec![format!(
        "{} session(s){traces}, {} call(s).",
        thousands(a.sessions as u64),
        thousands(a.calls as u64)
    )];
    if let Some(b) = &fleet.baseline {
        out.push(format!(
            "Baseline `{b}`, as --baseline asked: below, the status quo is this config replayed on every trace, not what each ran; `tracecost fidelity` measures the simulation against what ran."
        ));
    }
    if let (Some(rec), Some(sim)) = (a.recorded_cost_usd, a.status_quo_on_recorded_calls_usd) {
        let err = if rec > 0.0 {
            format!(" ({:+.1}% against the recorded bill)", error_pct(sim, rec))
        } else {
            String::new()
        };
        // A bill of some calls is not the bill of the fleet: say whose.
        let whose = if a.recorded_calls == a.calls {
            "the calls replayed".to_owned()
        } else {
            format!(
                "the {} of {} calls that recorded usage",
                thousands(a.recorded_calls as u64),
                thousands(a.calls as u64)
            )
        };
        out.push(format!(
            "Recorded bill of {whose}: {}; {} simulated on the same calls: {}{err}.",
            dollars(rec),
            base_name(fleet),
            dollars(sim)
        ));
    }
    if a.status_quo.over_window_calls > 0 {
        out.push(format!(
            "Warning: {} call(s) of the status quo send more than their model's context window; the API would refuse them, so their figures describe no real bill (a real agent compacts first).",
            thousands(a.status_quo.over_window_calls as u64)
        ));
    }
    out.extend(summary_calls_line(fleet));
    out.push(if let Some(b) = &fleet.baseline {
        // Beside its figure on the recorded calls above: this one covers
        // every call, recorded or not.
        format!(
            "Baseline `{b}` replayed on every call: {} simulated.",
            dollars(a.status_quo.cost_usd)
        )
    } else if a.status_quo.config.is_mixed() {
        format!(
            "Status quo (each session's own policy): {} simulated.",
            dollars(a.status_quo.cost_usd)
        )
    } else {
        format!(
            "Status quo `{}`: {} simulated.",
            a.status_quo.config,
            dollars(a.status_quo.cost_usd)
        )
    });
    out
}

/// The recommendation (or why the status quo is kept, with the cheapest
/// policy before recall risk); `per_month`, the rate of what runs, comes
/// right after a kept status quo.
fn recommendation_lines(fleet: &FleetAnswer, per_month: &Option<String>) -> Vec<String> {
    let (a, configs) = (&fleet.answer, &fleet.configs);
    let mut out = Vec::new();
    if a.keep_status_quo {
        out.push(format!(
            "Recommendation: {}; no policy of the grid is cheaper once recall risk is priced.",
            keep_text(fleet)
        ));
        // What runs costs per month, before any other policy's figure: a
        // rate after the cheapest policy's line reads as its saving.
        out.extend(per_month.clone());
        // The cheapest policy with an effect, for a reader who would take
        // the recall risk.
        if let Some(c) = configs
            .iter()
            .find(|c| !c.no_effect && c.cost_usd < a.status_quo.cost_usd)
        {
            out.push(format!(
                "Cheapest before recall risk: `{}` at {} ({:.1}% less), with {} compacted result(s) needed again ({} once priced{}).",
                c.config,
                dollars(c.cost_usd),
                c.savings_pct,
                needs(c.recall_needs),
                dollars(c.risk_adjusted_cost_usd),
                set_price(fleet)
            ));
        }
    } else if a.recommended.savings_usd < 0.0 {
        // Dearer than the status quo before recall risk: only a status quo
        // that cleared results itself (its recalls priced) loses to it.
        let (r, sq) = (&a.recommended, &a.status_quo);
        out.push(format!(
            "Recommended `{}`: {} — {} ({:.1}%) more than the status quo before recall risk, but the status quo's {} result(s) needed again after it cleared them itself bring it to {} once priced{}, against {} for this config.",
            r.config,
            dollars(r.cost_usd),
            dollars(-r.savings_usd),
            -r.savings_pct,
            needs(sq.recall_needs),
            dollars(sq.risk_adjusted_cost_usd),
            set_price(fleet),
            dollars(r.risk_adjusted_cost_usd)
        ));
    } else {
        let r = &a.recommended;
        out.push(format!(
            "Recommended `{}`: {} — saves {} ({:.1}%); {} result(s) needed again; {} session(s) cost more, median saving {} per session.",
            r.config,
            dollars(r.cost_usd),
            dollars(r.savings_usd),
            r.savings_pct,
            needs(r.recall_needs),
            a.spread.more_expensive,
            dollars(a.spread.median_usd)
        ));
    }
    out
}

/// How sure the saving is, for the first screen: the saving once the
/// results needed again are paid for, over the recall range, and how close
/// the simulated status quo came to the recorded bill; empty when neither
/// is known.
pub(super) fn saving_range_text(fleet: &FleetAnswer) -> String {
    let a = &fleet.answer;
    let (r, sq) = (&a.recommended, &a.status_quo);
    let now = a.headline.now_usd;
    let mut parts = Vec::new();
    if now > 0.0 {
        let net = |rec: f64, base: f64| (r.savings_usd + base - rec) / now * 100.0;
        let (rc, sc) = (r.recall.cost_usd, sq.recall.cost_usd);
        let lo = net(rc.high, sc.high).min(net(rc.low, sc.low));
        let hi = net(rc.high, sc.high).max(net(rc.low, sc.low));
        parts.push(format!(
            "{lo:.1}% to {hi:.1}% once the results needed again are paid for"
        ));
    }
    // Only where every call recorded its bill: on a few recorded calls the
    // error says nothing of the figure the card shows.
    if let (Basis::Recorded, Some(rec), Some(sim)) = (
        a.headline.basis,
        a.recorded_cost_usd,
        a.status_quo_on_recorded_calls_usd,
    ) && rec > 0.0
    {
        parts.push(format!(
            "the status quo simulated is {} against the recorded bill",
            crate::fmt::signed_percent(error_pct(sim, rec))
        ));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{}.", parts.join("; "))
    }
}

/// The recommendation as an action, in plain words ([`super::action`]).
pub(super) fn action_line(fleet: &FleetAnswer) -> Option<String> {
    let a = fleet_action(fleet)?;
    Some(format!("What to change: {}", a.words))
}

/// What to change and where, when a policy is recommended.
pub(super) fn fleet_action(fleet: &FleetAnswer) -> Option<super::action::Action> {
    let a = &fleet.answer;
    if a.keep_status_quo {
        return None;
    }
    let rec = a.recommended.config.config()?;
    Some(super::action::action(rec, a.status_quo.config.config()))
}

/// Whether the answer holds across the recall range (low: only lines
/// copied from compacted results count; mid: the calibrated estimate;
/// high: every signal), in plain words.
pub(super) fn recall_range_line(fleet: &FleetAnswer) -> Option<String> {
    let a = &fleet.answer;
    let by = &a.recommendation_by_recall;
    let name = |c: &Option<tracecost_policy::Config>| {
        c.as_ref()
            .map_or_else(|| "keep what runs".to_owned(), |c| format!("`{c}`"))
    };
    // The figures whose needs are said: the recommendation's, or when
    // keeping what runs, the cheapest policy a reader would weigh.
    let f = if a.keep_status_quo {
        fleet
            .configs
            .iter()
            .find(|c| !c.no_effect && c.cost_usd < a.status_quo.cost_usd)?
    } else {
        &a.recommended
    };
    let n = &f.recall.needs;
    let c = &f.recall.cost_usd;
    let needs_said = format!(
        "`{}` would need {} of its compacted results again ({} to {}; {} to {} in recalls)",
        f.config,
        needs(n.mid),
        needs(n.low),
        needs(n.high),
        dollars(c.low),
        dollars(c.high)
    );
    let needs_said = match &a.recall_observed {
        Some(o) => format!("{needs_said}; {}", observed_text(o)),
        None => needs_said,
    };
    let needs_said = match (a.keep_status_quo, break_even_needs(f, &a.status_quo)) {
        (false, Some(x)) if x >= f.compacted_results as f64 => format!(
            "{needs_said}; it stays ahead of the status quo even if every one of its {} compacted results is needed again",
            needs(f.compacted_results as f64)
        ),
        (false, Some(x)) => format!(
            "{needs_said}; it stays ahead of the status quo while fewer than {} of its {} compacted results ({:.1}%) are needed again",
            needs(x),
            needs(f.compacted_results as f64),
            x / f.compacted_results as f64 * 100.0
        ),
        _ => needs_said,
    };
    Some(if by.low == by.mid && by.mid == by.high {
        format!(
            "Recall range: {needs_said}; the answer, {}, holds whatever the recall assumption.",
            name(&by.mid)
        )
    } else {
        format!(
            "Recall range: {needs_said}; the answer depends on it: counting only lines copied from compacted results, {}; calibrated, {}; counting every signal, {}.",
            name(&by.low),
            name(&by.mid),
            name(&by.high)
        )
    })
}

/// How many of `f`'s compacted results may be needed again before it
/// costs as much as `status_quo` with its own recalls: the saving divided
/// by the average price of one of `f`'s recalls (over every result that
/// shows evidence, nothing taken off: the `high` bound's). `None` where no
/// result shows evidence to price a recall by.
pub(super) fn break_even_needs(
    f: &tracecost_app::fleet::FleetFigures,
    status_quo: &tracecost_app::fleet::FleetFigures,
) -> Option<f64> {
    let r = &f.recall;
    if r.needs.high <= 0.0 || r.cost_usd.high <= 0.0 || f.compacted_results == 0 {
        return None;
    }
    let per_recall = r.cost_usd.high / r.needs.high;
    Some(((status_quo.risk_adjusted_cost_usd - f.cost_usd) / per_recall).max(0.0))
}

/// A session named for a reader: its project and first prompt when the
/// source tells, else its name.
pub(super) fn session_title(s: &SessionFigures) -> String {
    match (&s.project, &s.first_prompt) {
        (Some(p), Some(f)) => format!("{p}: “{}”", tracecost_engine::handle::one_line(f, 60)),
        (None, Some(f)) => format!("“{}”", tracecost_engine::handle::one_line(f, 60)),
        (Some(p), None) => format!("{p}: {}", s.session),
        (None, None) => s.session.clone(),
    }
}

/// A session's own pick in words: its config, or keeping what its savings
/// are measured against (`fleet`'s [`keep_text`]).
pub(super) fn own_pick_text(fleet: &FleetAnswer, s: &SessionFigures) -> String {
    if s.own_pick.keep_status_quo {
        keep_text(fleet).to_owned()
    } else {
        s.own_pick.config.to_string()
    }
}

/// The answer when no policy beats the status quo, said the same way on
/// every page.
pub(super) const KEEP: &str = "keep what you have";

/// The fleet's answer when no policy beats what its savings are measured
/// against: the status quo, or the baseline `--baseline` named.
pub(super) fn keep_text(fleet: &FleetAnswer) -> &'static str {
    keep_words(fleet.baseline.is_some())
}

/// The answer when no policy beats what savings are measured against,
/// with or without a baseline `named` by `--baseline`.
pub(super) fn keep_words(named: bool) -> &'static str {
    if named { "keep the baseline" } else { KEEP }
}

/// What the fleet's savings are measured against, in words.
fn base_name(fleet: &FleetAnswer) -> &'static str {
    base_words(fleet.baseline.is_some())
}

/// What savings are measured against, with or without a baseline `named`
/// by `--baseline`.
pub(super) fn base_words(named: bool) -> &'static str {
    if named {
        "the baseline"
    } else {
        "the status quo"
    }
}

/// What the "what we pay now" figure is, and the recorded part beside it
/// as a check.
pub(super) fn now_detail(fleet: &FleetAnswer) -> String {
    let a = &fleet.answer;
    let base = base_name(fleet);
    let check = match (a.recorded_cost_usd, a.status_quo_on_recorded_calls_usd) {
        (Some(r), Some(sim)) if r > 0.0 => Some((r, sim)),
        _ => None,
    };
    match (a.headline.basis, check) {
        (Basis::Recorded, Some((_, sim))) => format!(
            "the recorded bill of all {} calls · {base} simulated {} on them ({:+.1}%)",
            thousands(a.calls as u64),
            dollars(sim),
            error_pct(sim, a.headline.now_usd)
        ),
        // Part of the calls recorded their usage: the card holds one
        // figure, the check on that part is told under the cards.
        (_, Some(_)) => format!("{base}, simulated"),
        _ => format!("{base}, simulated (no recorded usage)"),
    }
}

/// Which basis the figures set side by side share, in one sentence.
pub(super) fn basis_line(a: &GroupAnswer) -> String {
    match a.headline.basis {
        Basis::Recorded => "Figures side by side are on one basis: the recorded bill (every call replayed recorded its usage); the recommendation is that bill less the simulated saving.".to_owned(),
        Basis::Simulated if a.recorded_calls == 0 => {
            "Figures side by side are on one basis: the status quo simulated (no call recorded its usage).".to_owned()
        }
        Basis::Simulated => {
            let check = match (a.recorded_cost_usd, a.status_quo_on_recorded_calls_usd) {
                (Some(r), Some(sim)) if r > 0.0 => format!(
                    ": their recorded {} against {} simulated on them ({:+.1}%)",
                    dollars(r),
                    dollars(sim),
                    error_pct(sim, r)
                ),
                _ => String::new(),
            };
            format!(
                "Figures side by side are on one basis: the status quo simulated. {} of {} calls recorded usage{check}, a check beside it, not the bill.",
                thousands(a.recorded_calls as u64),
                thousands(a.calls as u64)
            )
        }
    }
}

/// The price of a recall at which the answer would change, in one line.
pub(super) fn break_even_line(fleet: &FleetAnswer) -> Option<String> {
    let a = &fleet.answer;
    let Some(b) = a.break_even.as_ref() else {
        if !a.keep_status_quo {
            return None;
        }
        // Cheaper before recall risk, yet no price of a turn makes it win:
        // re-sending what its recalls fetch costs more than it saves.
        let cheaper = fleet
            .configs
            .iter()
            .find(|c| !c.no_effect && c.cost_usd < a.status_quo.cost_usd)?;
        return Some(format!(
            "Break-even: no recall price makes compaction win: even at nothing a recall, the text `{}` would re-send on its recalls costs {}, more than the {} it saves.",
            cheaper.config,
            dollars(cheaper.recall_tokens_usd - a.status_quo.recall_tokens_usd),
            dollars(cheaper.savings_usd)
        ));
    };
    let now = if b.priced_now_usd > 0.0 {
        format!(
            "; this answer prices each at {} on average",
            dollars(b.priced_now_usd)
        )
    } else {
        String::new()
    };
    use tracecost_app::fleet::Wins;
    Some(match (a.keep_status_quo, b.wins) {
        (_, Wins::Always) => format!(
            "Break-even: `{}` is cheaper than the status quo at any price of a recall (it is as safe and costs less).",
            b.config
        ),
        (true, Wins::Below(p)) => format!(
            "Break-even: compaction wins if a recall costs less than {}: below that, `{}` is cheaper than the status quo with its needed recalls priced{now} (`--recall-cost` sets the price).",
            dollars(p),
            b.config
        ),
        (_, Wins::Below(p)) => format!(
            "Break-even: `{}` stays cheaper than the status quo while a recall costs less than {}{now} (`--recall-cost` sets the price).",
            b.config,
            dollars(p)
        ),
        (_, Wins::Above(p)) => format!(
            "Break-even: `{}` costs more before recall risk, but is cheaper than the status quo (which clears results itself) while a recall costs more than {}{now} (`--recall-cost` sets the price).",
            b.config,
            dollars(p)
        ),
    })
}

/// The headline per month, on its basis, in words.
pub(super) fn per_month_line(fleet: &FleetAnswer) -> Option<String> {
    let m = fleet.per_month.as_ref()?;
    let h = &m.headline;
    let saving = if fleet.answer.keep_status_quo {
        String::new()
    } else {
        format!(
            "; the recommendation would make it {}, {} less",
            dollars(h.recommended_usd),
            dollars(h.saving_usd)
        )
    };
    let what = match h.basis {
        Basis::Recorded => "the recorded bill",
        Basis::Simulated if fleet.baseline.is_some() => "the simulated baseline",
        Basis::Simulated => "the simulated status quo",
    };
    Some(format!(
        "Over {} {} ({} to {}), {what} comes to {} per month{saving}.",
        thousands(m.days),
        if m.days == 1 { "day" } else { "days" },
        m.first_day,
        m.last_day,
        dollars(h.now_usd)
    ))
}

/// The fleet's stability check, in words.
pub(super) fn fleet_stability_line(st: &FleetStability) -> String {
    let traces = if st.traces == st.sessions {
        String::new()
    } else {
        format!(" ({} traces)", thousands(st.traces as u64))
    };
    if st.violations == 0 {
        format!(
            "Stability of `{}`: checked on all {} session(s){traces}, {} stub(s), every one byte-identical at every later call.",
            st.config,
            thousands(st.sessions as u64),
            thousands(st.stubs as u64)
        )
    } else {
        format!(
            "Stability of `{}`: UNSTABLE — {} violation(s) in {} of {} session(s){traces}.",
            st.config,
            thousands(st.violations as u64),
            thousands(st.unstable_sessions as u64),
            thousands(st.sessions as u64)
        )
    }
}

pub(super) fn stability_verdict(r: StabilitySummary) -> String {
    if r.violations == 0 {
        format!(
            "stable — {} stub(s) byte-identical at every later call",
            r.stubs
        )
    } else {
        format!("UNSTABLE — {} violation(s)", r.violations)
    }
}

/// How a recall-risk turn is priced, in words: as one more round trip of
/// its trace, or at the price `--recall-cost` set (beside the text its
/// recalls re-send, priced either way).
pub(super) fn recall_pricing(fleet: &FleetAnswer) -> String {
    match fleet.recall_cost_usd {
        None => "as one more round trip".to_owned(),
        Some(p) => format!(
            "at {} a recall, as --recall-cost set, plus the text it re-sends",
            dollars(p)
        ),
    }
}

/// The price `--recall-cost` set, after "once priced" (nothing when a
/// turn is priced as one more round trip, which the page's Why says).
fn set_price(fleet: &FleetAnswer) -> String {
    fleet
        .recall_cost_usd
        .map_or_else(String::new, |p| format!(" at {} a recall", dollars(p)))
}

/// Why the fleet's recommendation is what it is, in words.
pub(super) fn reasoning(fleet: &FleetAnswer) -> String {
    let pricing = recall_pricing(fleet);
    let ans = &fleet.answer;
    let sq = &ans.status_quo;
    let effective = fleet.configs.iter().filter(|c| !c.no_effect).count();
    let idle = fleet.configs.len() - effective;
    let idle_note = if idle > 0 {
        format!(" {idle} config(s) compacted nothing in any session and are never recommended.")
    } else {
        String::new()
    };
    // A status quo that clears results itself (Claude Code's
    // microcompaction) is priced with its recalls too: say why its figure
    // differs from its cost.
    let sq_priced = if sq.recall_needs > 0.0 {
        format!(
            "{} for the status quo ({} simulated + {} result(s) needed again after it cleared them itself, priced the same way)",
            dollars(sq.risk_adjusted_cost_usd),
            dollars(sq.cost_usd),
            needs(sq.recall_needs)
        )
    } else {
        format!("{} for the status quo", dollars(sq.risk_adjusted_cost_usd))
    };
    if ans.keep_status_quo {
        let cheapest = fleet
            .configs
            .iter()
            .find(|c| !c.no_effect && c.cost_usd < sq.cost_usd);
        return match cheapest {
            Some(c) => format!(
                "the recommendation minimizes cost plus each recall a compacted result would have needed, priced {pricing}. The cheapest policy, {}, costs {} ({:.1}% less than the status quo) but {} of its compacted results were needed again; priced, it comes to {}, against {sq_priced}.{idle_note}",
                c.config,
                dollars(c.cost_usd),
                c.savings_pct,
                needs(c.recall_needs),
                dollars(c.risk_adjusted_cost_usd),
            ),
            None => format!("no config of the grid costs less than the status quo.{idle_note}"),
        };
    }
    let r = &ans.recommended;
    let stability = fleet.stability.as_ref().map_or_else(String::new, |st| {
        format!(" {}", fleet_stability_line(st).replace('`', ""))
    });
    format!(
        "{} has the lowest cost once recall risk is priced ({} + {} for its recalls = {}, against {sq_priced}). {} of its compacted results were needed again, each recall priced {pricing}; it compacts {} tool result(s). Per session the saving runs from {} (10th percentile) to {} (90th), median {}; {} session(s) cost more.{stability}{idle_note}",
        r.config,
        dollars(r.cost_usd),
        dollars(r.risk_adjusted_cost_usd - r.cost_usd),
        dollars(r.risk_adjusted_cost_usd),
        needs(r.recall_needs),
        thousands(r.compacted_results as u64),
        dollars(ans.spread.p10_usd),
        dollars(ans.spread.p90_usd),
        dollars(ans.spread.median_usd),
        ans.spread.more_expensive
    )
}

/// A trace named within its session: the conversation itself, or what its
/// name adds to the session's (`part2`, `agent-a4ca…`), so a row of a dozen
/// subagents stays short; the link's target names it in full.
pub(super) fn trace_label(session: &str, trace: &str) -> String {
    if trace == session {
        return "the conversation".to_owned();
    }
    match trace.strip_prefix(session) {
        Some(rest) if !rest.trim_start_matches(['.', '-', '_', ' ']).is_empty() => {
            rest.trim_start_matches(['.', '-', '_', ' ']).to_owned()
        }
        _ => trace.to_owned(),
    }
}

pub(super) fn notes(r: &ReplayResult) -> Vec<String> {
    let mut n = Vec::new();
    if let Some(c) = crate::fmt::calibration_note(&r.calibration) {
        n.push(format!("{c}."));
    }
    if r.back_to_back {
        n.push("This trace has no start times: calls are treated as back-to-back.".into());
    }
    if r.totals.summary_calls > 0 {
        n.push(format!(
            "{} summary call(s) the policy added (marked in the calls), {} of its cost.",
            r.totals.summary_calls,
            dollars(r.totals.summary_cost_usd)
        ));
    }
    if r.totals.over_window_calls > 0 {
        n.push(format!(
            "{} call(s) send more than the model's context window: the API would refuse them, so their figures describe no real bill (a real agent compacts first).",
            r.totals.over_window_calls
        ));
    }
    n.push(format!("Priced as {}.", r.model));
    n
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_app::fleet::SkippedConfig;

    #[test]
    fn a_trace_is_named_by_what_it_adds_to_its_session() {
        assert_eq!(trace_label("6dd5f6de", "6dd5f6de"), "the conversation");
        assert_eq!(trace_label("6dd5f6de", "6dd5f6de-part2"), "part2");
        assert_eq!(trace_label("6dd5f6de", "6dd5f6de.agent-a4ca"), "agent-a4ca");
        // A name that only repeats the session's, or another session's
        // name, is shown whole.
        assert_eq!(trace_label("6dd5f6de", "6dd5f6de-"), "6dd5f6de-");
        assert_eq!(trace_label("6dd5f6de", "1284c080"), "1284c080");
    }

    #[test]
    fn configs_skipped_for_the_same_reason_and_traces_are_said_once() {
        let skipped = |config: &str, traces, reason: &str| SkippedConfig {
            config: config.parse().unwrap(),
            traces,
            of: 5,
            reason: reason.to_owned(),
        };
        let all = [
            skipped("off+recorded", 2, "no markers recorded"),
            skipped("ledger:t=2000,k=1+recorded", 2, "no markers recorded"),
            skipped("ledger:t=8000,k=1+recorded", 2, "no markers recorded"),
            skipped("ledger:t=2000,k=2+recorded", 3, "no markers recorded"),
            skipped("off+native", 2, "another reason"),
        ];
        let groups = skipped_groups(&all);
        assert_eq!(
            groups,
            [
                (
                    "`off+recorded` and 2 other config(s)".to_owned(),
                    2,
                    5,
                    "no markers recorded"
                ),
                (
                    "`ledger:t=2000,k=2+recorded`".to_owned(),
                    3,
                    5,
                    "no markers recorded"
                ),
                (
                    "`off+native:manifest=cached,ttl=5m`".to_owned(),
                    2,
                    5,
                    "another reason"
                ),
            ]
        );
    }
}

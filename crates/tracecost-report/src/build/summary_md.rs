//! `summary.md`: the fleet's answer and each session's, for a pull request
//! or a chat message.

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::fmt::{dollars, md_escape, needs, thousands};
use tracecost_app::fidelity::error_pct;
use tracecost_app::fleet::{FleetAnswer, SessionFigures, SessionSummary};

use super::assumptions::Assumptions;
use super::story::{
    fleet_lines, fleet_stability_line, headline, own_pick_text, session_title, stability_verdict,
};

/// Above this many traces, summary.md names the most expensive sessions in
/// one table instead of a section each, so it stays short enough for a
/// pull-request comment at any fleet size.
pub(super) const SUMMARY_SECTIONS_MAX: usize = 3;

/// Sessions named in summary.md's table of the most expensive.
pub(super) const SUMMARY_TOP: usize = 10;

/// `top`: the most expensive sessions' figures, at least [`SUMMARY_TOP`]
/// of them where the fleet has as many. `traces`: how many the report is
/// of; `sessions`: their summaries when
/// there are at most [`SUMMARY_SECTIONS_MAX`] (each gets a section), else
/// none. `paged`: how many traces have a page, where only the most
/// expensive do.
pub(super) fn summary_md(
    fleet: &FleetAnswer,
    top_sessions: &[Cow<'_, SessionFigures>],
    traces: usize,
    sessions: &[&SessionSummary],
    a: &Assumptions,
    paged: Option<usize>,
) -> String {
    let mut s = String::from("# tracecost report\n\n");
    for line in a.unpriced_lines() {
        let _ = writeln!(s, "**Not priced:** {}\n", md_escape(&line));
    }
    for line in a.unread_lines() {
        let _ = writeln!(s, "**Not read:** {}\n", md_escape(&line));
    }
    if traces > 1 {
        fleet_md(&mut s, fleet);
    }
    if traces > SUMMARY_SECTIONS_MAX {
        top_sessions_md(&mut s, fleet, top_sessions, paged);
        return s;
    }
    for r in sessions {
        session_md(&mut s, r, traces);
    }
    let _ = writeln!(
        s,
        "Prices: {}. Tokenizer: {}{}.",
        md_escape(&a.prices),
        md_escape(&a.tokenizer),
        if a.calibration {
            ", calibrated on recorded usage"
        } else {
            ""
        }
    );
    s
}

/// The fleet's lines, its stability and fidelity, and its bill.
fn fleet_md(s: &mut String, fleet: &FleetAnswer) {
    s.push_str("## Fleet\n\n");
    for line in fleet_lines(fleet) {
        let _ = writeln!(s, "- {line}");
    }
    if let Some(st) = &fleet.stability {
        let _ = writeln!(s, "- {}", fleet_stability_line(st));
    }
    if let Some(line) = fleet.fidelity.as_ref().and_then(|f| f.line()) {
        let _ = writeln!(s, "- {line}");
    }
    for line in super::bill::bill_md_lines(fleet) {
        let _ = writeln!(s, "- {}", md_escape(&line));
    }
    s.push('\n');
}

/// The most expensive sessions' table, and where every session's
/// figures are.
fn top_sessions_md(
    s: &mut String,
    fleet: &FleetAnswer,
    top_sessions: &[Cow<'_, SessionFigures>],
    paged: Option<usize>,
) {
    let top = SUMMARY_TOP.min(top_sessions.len());
    let _ = writeln!(
        s,
        "## The {top} most expensive sessions\n\nA session is a conversation with its continuations and subagents; its figures sum its traces.\n\n| session | traces | calls | status quo | under the recommendation | saving | its own pick | which saves |\n|---|---:|---:|---:|---:|---:|---|---:|"
    );
    for r in &top_sessions[..top] {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {:.1}% | `{}` | {:.1}% |",
            md_escape(&session_title(r)),
            r.traces.len(),
            thousands(r.calls as u64),
            dollars(r.status_quo_usd),
            dollars(r.recommended_usd),
            r.savings_pct,
            own_pick_text(fleet, r),
            r.own_pick.savings_pct
        );
    }
    match paged {
        None => {
            let _ = writeln!(
                s,
                "\nEvery session's figures are in `sessions.csv` and `results.json`, each trace's under every config in `results.csv`; the assumptions in `index.html`."
            );
        }
        Some(n) => {
            let _ = writeln!(
                s,
                "\nEvery session's figures are in `sessions.csv` and `results.json`; the {n} most expensive traces have a page under `sessions/` and their figures under every config in `results.csv` (`--sessions all` for every trace); the assumptions in `index.html`."
            );
        }
    }
}

/// One session's section: its figures, its best configs, its table.
/// `traces`: how many the report is of.
fn session_md(s: &mut String, r: &SessionSummary, traces: usize) {
    // Per 1,000 runs for the one trace of a report, a workflow run again
    // and again; a trace of a fleet is one conversation, which ran once.
    let per_thousand = |usd: f64| match traces {
        1 => format!(", {} per 1,000 runs", dollars(usd * 1000.0)),
        _ => String::new(),
    };
    let sw = &r.sweep;
    let h = headline(sw);
    let _ = writeln!(s, "## {}\n", md_escape(&sw.trace));
    if let Some(rec) = h.recorded {
        let t = &h.base.result.totals;
        let sim = t.cost_usd_recorded_calls.map_or_else(String::new, |sim| {
            format!(
                " (the status quo simulated on the same calls: {}, {:+.1}%)",
                dollars(sim),
                error_pct(sim, rec)
            )
        });
        let _ = writeln!(
            s,
            "- Recorded cost of the {} call(s) with usage: **{}**{sim}",
            t.recorded_calls,
            dollars(rec)
        );
    }
    let _ = writeln!(
        s,
        "- Status quo `{}`: **{}** per run{}",
        h.base.result.config,
        dollars(h.base.result.totals.cost_usd),
        per_thousand(h.base.result.totals.cost_usd)
    );
    let _ = writeln!(
        s,
        "- Recommended `{}`: **{}** per run — saves {} ({:.1}%){}; recall risk: {} result(s) needed again",
        h.rec.result.config,
        dollars(h.rec.result.totals.cost_usd),
        dollars(h.rec.savings_usd),
        h.rec.savings_pct,
        per_thousand(h.rec.savings_usd),
        needs(h.rec.risk.needs.mid)
    );
    if sw.cheapest != sw.recommended {
        let _ = writeln!(
            s,
            "- Cheapest `{}`: {} — saves {:.1}%; recall risk: {} result(s) needed again",
            h.best.result.config,
            dollars(h.best.result.totals.cost_usd),
            h.best.savings_pct,
            needs(h.best.risk.needs.mid)
        );
    }
    if let Some(st) = r.stability {
        let _ = writeln!(
            s,
            "- Stability of the recommended config: {}\n",
            stability_verdict(st)
        );
    }
    let _ = writeln!(
        s,
        "| rank | config | cost | saving | recall risk |\n|---:|---|---:|---:|---:|"
    );
    for (i, row) in sw.rows.iter().enumerate().take(10) {
        let _ = writeln!(
            s,
            "| {} | `{}` | {} | {:.1}% | {} |",
            i + 1,
            row.result.config,
            dollars(row.result.totals.cost_usd),
            row.savings_pct,
            needs(row.risk.needs.mid)
        );
    }
    let _ = writeln!(
        s,
        "\n_{} of {} configs shown; full table in results.csv._\n",
        sw.rows.len().min(10),
        sw.rows.len()
    );
}

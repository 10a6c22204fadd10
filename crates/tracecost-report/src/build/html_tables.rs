//! The tables of the HTML pages: configs, sessions, a trace's sweep and its
//! calls, and how a config string is set in a cell.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::fmt::Write as _;

use crate::fmt::{dollars, html_escape, needs, thousands};
use tracecost_app::AppError;
use tracecost_app::fleet::{FleetAnswer, FleetFigures, SessionFigures};
use tracecost_app::identity::slug;
use tracecost_replay::sweep::{SweepRow, TraceSweep};

use super::sink::{CHUNK, ReportError};
use super::story::{own_pick_text, session_title, trace_label};

/// The fleet's configs, cheapest first.
pub(super) fn configs_table(s: &mut String, fleet: &FleetAnswer) {
    let head = "<tr><th class=\"o\">#</th><th class=\"l\">config</th><th>cost</th><th class=\"o\">with recalls priced</th><th>saving</th><th class=\"o\">compacted</th><th class=\"o\">recall risk</th><th class=\"l\"></th></tr>\n";
    let row = |s: &mut String, i: usize, c: &FleetFigures| {
        let mut marks = Vec::new();
        if c.config == fleet.answer.status_quo.config {
            marks.push("status quo");
        }
        if !fleet.answer.keep_status_quo && c.config == fleet.answer.recommended.config {
            marks.push("recommended");
        }
        if c.no_effect {
            marks.push("compacts nothing");
        }
        let _ = writeln!(
            s,
            "<tr{}><td class=\"o\">{}</td><td class=\"l\"><code>{}</code></td><td>{}</td><td class=\"o\">{}</td><td>{:.1}%</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td class=\"m\">{}</td></tr>",
            if marks.is_empty() {
                ""
            } else {
                " class=\"mark\""
            },
            i + 1,
            config_html(&c.config.to_string()),
            dollars(c.cost_usd),
            dollars(c.risk_adjusted_cost_usd),
            c.savings_pct,
            thousands(c.compacted_results as u64),
            needs(c.recall_needs),
            marks.join(", ")
        );
    };
    let _ = writeln!(
        s,
        "<h2>Configurations</h2>\n<p class=\"small\">Summed over every session, cheapest first. Recall risk = compacted results the record shows were needed again (a line copied from them, or an identifier only they held, written later); the recommendation prices each {}.</p>\n<table>",
        html_escape(&super::story::recall_pricing(fleet))
    );
    s.push_str(head);
    // The cheapest first, and always the status quo and the
    // recommendation, wherever they rank: the verdict's own rows are
    // never behind "show the others".
    let a = &fleet.answer;
    // A status quo outside the grid (replaying the trace's own clears) is
    // a row too, at its rank by cost.
    let mut all: Vec<&FleetFigures> = fleet.configs.iter().collect();
    if !all.iter().any(|c| c.config == a.status_quo.config) {
        let at = all.partition_point(|c| c.cost_usd <= a.status_quo.cost_usd);
        all.insert(at, &a.status_quo);
    }
    let shown = |i: usize, c: &FleetFigures| {
        i < FLEET_CONFIGS_SHOWN
            || c.config == a.status_quo.config
            || (!a.keep_status_quo && c.config == a.recommended.config)
    };
    let mut hidden = 0;
    for (i, c) in all.iter().copied().enumerate() {
        if shown(i, c) {
            row(s, i, c);
        } else {
            hidden += 1;
        }
    }
    s.push_str("</table>\n");
    if hidden > 0 {
        let _ = write!(
            s,
            "<details><summary>Show the other {hidden} configurations</summary>\n<table>\n{head}"
        );
        for (i, c) in all.iter().copied().enumerate() {
            if !shown(i, c) {
                row(s, i, c);
            }
        }
        s.push_str("</table>\n</details>\n");
    }
}

/// A table of sessions: named by project and first prompt, their traces
/// linked to their detail, with what they cost now and under the fleet's
/// recommendation, and the policy the fleet's rule picks for each alone.
pub(super) fn sessions_table(
    s: &mut String,
    fleet: &FleetAnswer,
    sessions: &[Cow<'_, SessionFigures>],
    detail: Detail<'_>,
    root: &str,
) {
    // Nothing goes anywhere before the table is whole, and every session's
    // figures are read already: nothing can fail.
    let _ = sessions_table_out(
        s,
        fleet,
        sessions.iter().map(|r| Ok(Cow::Borrowed(&**r))),
        detail,
        root,
        &mut |_| Ok(()),
    );
}

/// [`sessions_table`], handing `s` to `out` (which takes its text)
/// whenever it has grown past [`CHUNK`]: a page of every session of a
/// fleet is written a chunk at a time.
pub(super) fn sessions_table_out<'f>(
    s: &mut String,
    fleet: &FleetAnswer,
    sessions: impl IntoIterator<Item = Result<Cow<'f, SessionFigures>, AppError>>,
    detail: Detail<'_>,
    root: &str,
    out: &mut dyn FnMut(&mut String) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    // Where the answer is to keep what runs, a session costs under it what
    // it costs now: those columns would repeat the status quo.
    let keep = fleet.answer.keep_status_quo;
    let _ = writeln!(
        s,
        "<table><tr><th class=\"l\">session</th><th class=\"o\">started</th><th class=\"o\">traces</th><th class=\"o\">calls</th><th class=\"o\">recorded</th><th>status quo</th>{}<th class=\"l o\">its own best policy</th><th class=\"o\">which saves</th></tr>",
        if keep {
            ""
        } else {
            "<th>recommended</th><th>saving</th>"
        }
    );
    for r in sessions {
        let r = &*r?;
        let started = r
            .started_ms
            .map_or_else(String::new, tracecost_app::usage::date_of);
        let traces: Vec<String> = r
            .traces
            .iter()
            .map(|t| match detail.link(t) {
                Some(link) => format!(
                    "<a href=\"{root}{link}\" title=\"{}\">{}</a>",
                    html_escape(t),
                    html_escape(&trace_label(&r.session, t))
                ),
                None => format!(
                    "<span title=\"{}\">{}</span>",
                    html_escape(t),
                    html_escape(&trace_label(&r.session, t))
                ),
            })
            .collect();
        let under = if keep {
            String::new()
        } else {
            format!(
                "<td>{}</td><td>{:.1}%</td>",
                dollars(r.recommended_usd),
                r.savings_pct
            )
        };
        let _ = writeln!(
            s,
            "<tr><td class=\"l s\">{}<br><span class=\"small\">{}</span></td><td class=\"o\">{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td>{}</td>{under}<td class=\"l o\"><code>{}</code></td><td class=\"o\">{:.1}%</td></tr>",
            match has_whole_page(r, detail) {
                true => format!(
                    "<a href=\"{root}{}\">{}</a>",
                    whole_link(&r.session),
                    html_escape(&session_title(r))
                ),
                false => html_escape(&session_title(r)),
            },
            traces.join(" · "),
            started,
            r.traces.len(),
            thousands(r.calls as u64),
            r.recorded_cost_usd.map_or_else(String::new, dollars),
            dollars(r.status_quo_usd),
            config_html(&own_pick_text(fleet, r)),
            r.own_pick.savings_pct
        );
        if s.len() >= CHUNK {
            out(s)?;
        }
    }
    s.push_str("</table>\n");
    Ok(())
}

/// A config string for HTML: escaped, each part kept whole (a `-` or `=`
/// inside one is no place to break), with break opportunities after `+`
/// and `,` only, so a narrow column wraps it between its parts.
pub(super) fn config_html(config: &str) -> String {
    config_breaks(&html_escape(config))
}

/// [`config_html`] of text already escaped (escaping adds no `+` or `,`).
pub(super) fn config_breaks(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len() + 32);
    out.push_str("<span class=\"cfg\">");
    for ch in escaped.chars() {
        out.push(ch);
        if ch == '+' || ch == ',' {
            out.push_str("</span><wbr><span class=\"cfg\">");
        }
    }
    out.push_str("</span>");
    out
}

/// Markdown's `code` spans of an escaped line as HTML `<code>` elements.
pub(super) fn code_spans(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len());
    for (i, part) in escaped.split('`').enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{}</code>", config_breaks(part));
        } else {
            out.push_str(part);
        }
    }
    out
}

pub(super) fn sweep_table(s: &mut String, sw: &TraceSweep) {
    let row = |s: &mut String, i: usize, r: &SweepRow| {
        let mark = crate::sweep_view::marks(sw, i);
        let _ = writeln!(
            s,
            "<tr{}><td class=\"o\">{}</td><td class=\"l\"><code>{}</code></td><td>{}</td><td>{}</td><td class=\"o\">{:.1}%</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td class=\"o\">{}{}</td><td class=\"m\">{}</td></tr>",
            if mark.is_empty() {
                ""
            } else {
                " class=\"mark\""
            },
            i + 1,
            config_html(&r.result.config.to_string()),
            dollars(r.result.totals.cost_usd),
            dollars(r.savings_usd),
            r.savings_pct,
            thousands(r.result.totals.usage.input_tokens),
            thousands(r.result.totals.usage.cache_creation_input_tokens),
            thousands(r.result.totals.usage.cache_read_input_tokens),
            needs(r.risk.needs.mid),
            if r.pareto { " *" } else { "" },
            html_escape(&mark)
        );
    };
    let head = "<tr><th class=\"o\">#</th><th class=\"l\">config</th><th>cost</th><th>saving</th><th class=\"o\">%</th><th class=\"o\">uncached</th><th class=\"o\">cache write</th><th class=\"o\">cache read</th><th class=\"o\">recall risk</th><th class=\"l\"></th></tr>\n";
    s.push_str("<table>\n");
    s.push_str(head);
    for (i, r) in sw.rows.iter().enumerate().take(15) {
        row(s, i, r);
    }
    s.push_str("</table>\n");
    if sw.rows.len() > 15 {
        let _ = write!(
            s,
            "<details><summary>Show the other {} configurations</summary>\n<table>\n{head}",
            sw.rows.len() - 15
        );
        for (i, r) in sw.rows.iter().enumerate().skip(15) {
            row(s, i, r);
        }
        s.push_str("</table>\n</details>\n");
    }
}

/// One config's per-call table. `out` is handed the text every
/// [`super::sink::CHUNK`] bytes or so and may take it (a long trace's
/// table runs to hundreds of MB, never held whole then).
pub(super) fn calls_table(
    s: &mut String,
    label: &str,
    r: &SweepRow,
    out: &mut dyn FnMut(&mut String),
) {
    let _ = write!(
        s,
        "<details{}><summary>{label}: <code>{}</code> — {} calls, {}</summary>\n<table>\n<tr><th>call</th><th class=\"o\">msgs</th><th class=\"o\">chars</th><th class=\"o\">uncached</th><th class=\"o\">write 5m</th><th class=\"o\">write 1h</th><th class=\"o\">read</th><th class=\"o\">output</th><th>cost</th><th class=\"o\">recorded input</th><th class=\"l o\">compacted</th><th class=\"l\">why it wrote or missed</th></tr>\n",
        if r.result.calls.len() <= 30 {
            " open"
        } else {
            ""
        },
        config_html(&r.result.config.to_string()),
        r.result.calls.len(),
        dollars(r.result.totals.cost_usd)
    );
    for c in &r.result.calls {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td>{}</td><td class=\"o\">{}</td><td class=\"l o\">{}</td><td class=\"l\">{}</td></tr>",
            c.index,
            c.messages,
            thousands(c.chars),
            thousands(c.usage.input_tokens),
            thousands(c.usage.write_5m()),
            thousands(c.usage.write_1h()),
            thousands(c.usage.cache_read_input_tokens),
            thousands(c.usage.output_tokens),
            dollars(c.cost_usd),
            c.recorded()
                .map(|u| thousands(u.total_input()))
                .unwrap_or_default(),
            html_escape(&match c.compacted.len() {
                0 => String::new(),
                n => format!("{n} result(s)"),
            }),
            html_escape(&match (c.summary, c.cache_cause) {
                // A call the policy added, not one the trace recorded.
                (true, k) => [
                    "summary call (added by the policy)",
                    &k.map(|k| k.text()).unwrap_or_default()
                ]
                .iter()
                .filter(|t| !t.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join("; "),
                (false, k) => k.map(|k| k.text()).unwrap_or_default(),
            })
        );
        if s.len() >= super::sink::CHUNK {
            out(s);
        }
    }
    s.push_str("</table>\n</details>\n");
}

/// Configs the fleet page's table shows before "show the others".
pub(super) const FLEET_CONFIGS_SHOWN: usize = 10;

/// Where the traces' details are: sections of the fleet page, or pages
/// under `sessions/`, for every trace or for those `paged` names.
#[derive(Debug, Clone, Copy)]
pub(super) struct Detail<'a> {
    pub split: bool,
    pub paged: Option<&'a BTreeSet<String>>,
}

impl Detail<'_> {
    /// Where `trace`'s detail is, when it has one.
    pub(super) fn link(&self, trace: &str) -> Option<String> {
        match self.paged {
            Some(paged) if self.split && !paged.contains(trace) => None,
            _ => Some(trace_link(trace, self.split)),
        }
    }
}

/// Where a trace's detail is: an anchor on the page, or its own page.
pub(super) fn trace_link(trace: &str, split: bool) -> String {
    if split {
        format!("sessions/{}.html", slug(trace))
    } else {
        format!("#{}", slug(trace))
    }
}

/// Whether `session` gets a page of its own: it is more than the one trace
/// that bears its name (that trace's page is the session's), and one of
/// its traces has a page to link to.
pub(super) fn has_whole_page(session: &SessionFigures, detail: Detail<'_>) -> bool {
    detail.split
        && !(session.traces.len() == 1 && session.traces[0] == session.session)
        && session.traces.iter().any(|t| detail.link(t).is_some())
}

/// Where `session`'s page is, from the report's folder.
pub(super) fn whole_link(session: &str) -> String {
    format!("sessions/whole/{}.html", slug(session))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_config_breaks_only_after_its_separators_and_is_escaped_first() {
        assert_eq!(
            config_html("ledger:t=8000,k=1+claude-code:ttl=5m"),
            "<span class=\"cfg\">ledger:t=8000,</span><wbr><span class=\"cfg\">k=1+</span><wbr><span class=\"cfg\">claude-code:ttl=5m</span>"
        );
        assert_eq!(config_html("<x>"), "<span class=\"cfg\">&lt;x&gt;</span>");
    }

    #[test]
    fn code_spans_become_code_elements_and_the_rest_stays_text() {
        assert_eq!(
            code_spans("keep `off+native` now"),
            "keep <code><span class=\"cfg\">off+</span><wbr><span class=\"cfg\">native</span></code> now"
        );
        assert_eq!(code_spans("no code"), "no code");
    }

    #[test]
    fn a_trace_is_an_anchor_inline_and_a_page_when_split() {
        assert_eq!(trace_link("A b", false), format!("#{}", slug("A b")));
        assert_eq!(
            trace_link("A b", true),
            format!("sessions/{}.html", slug("A b"))
        );
    }
}

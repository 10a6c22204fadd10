//! A session's own page in a split report: the whole session (a
//! conversation with its continuations and subagents), its figures as the
//! fleet's tables give them, and each trace's part with a link to its page.
//!
//! Trace pages are written as the traces arrive, before the fleet knows
//! its recommendation or which traces make a session; this page is written
//! at the end, so a session is never shown as one of its traces.

use std::fmt::Write as _;

use crate::fmt::{dollars, html_escape, thousands};
use tracecost_app::fleet::{FleetAnswer, SessionFigures};

use super::html::page_head;
use super::html_tables::Detail;
use super::story::trace_label;

/// The page of `r`, one session of `fleet`.
pub(super) fn whole_session_page(
    fleet: &FleetAnswer,
    r: &SessionFigures,
    detail: Detail<'_>,
) -> String {
    let keep = fleet.answer.keep_status_quo;
    let mut s = String::new();
    page_head(&mut s, &format!("{} — tracecost", r.session));
    s.push_str("<p class=\"sub\"><a href=\"../../index.html\">← the fleet</a> · <a href=\"../index.html\">all sessions</a></p>\n");
    let started = r.started_ms.map_or_else(String::new, |ms| {
        format!(" · started {}", tracecost_app::usage::date_of(ms))
    });
    // The first prompt names the session; the project, a folder, goes on
    // the line below, where a long one wraps in small type.
    let title = match &r.first_prompt {
        Some(f) => format!("“{}”", tracecost_engine::handle::one_line(f, 60)),
        None => r.session.clone(),
    };
    let project = r
        .project
        .as_deref()
        .map_or_else(String::new, |p| format!("Project {} · ", html_escape(p)));
    let _ = writeln!(
        s,
        "<h1>{}</h1>\n<p class=\"small\">{project}Session <code>{}</code>{started} · {} trace(s), {} call(s): the conversation with its continuations and subagents, summed below.</p>",
        html_escape(&title),
        html_escape(&r.session),
        r.traces.len(),
        thousands(r.calls as u64)
    );
    s.push_str("<div class=\"cards\">\n");
    if let Some(rec) = r.recorded_cost_usd {
        let _ = writeln!(
            s,
            "<div class=\"card\"><div class=\"k\">Recorded cost</div><div class=\"v\">{}</div><div class=\"d\">what the provider billed for the {} of {} call(s) with recorded usage</div></div>",
            dollars(rec),
            thousands(r.recorded_calls as u64),
            thousands(r.calls as u64)
        );
    }
    let _ = writeln!(
        s,
        "<div class=\"card\"><div class=\"k\">Status quo</div><div class=\"v\">{}</div><div class=\"d\">simulated, over every trace of the session</div></div>",
        dollars(r.status_quo_usd)
    );
    if !keep {
        let _ = writeln!(
            s,
            "<div class=\"card\"><div class=\"k\">Under the recommendation</div><div class=\"v good\">{}</div><div class=\"d\">saves {} ({:.1}%) on this session</div></div>",
            dollars(r.recommended_usd),
            dollars(r.savings_usd),
            r.savings_pct
        );
    }
    s.push_str("</div>\n<h2>Its traces</h2>\n<table><tr><th class=\"l\">trace</th><th class=\"o\">calls</th><th>recorded</th><th>status quo</th>");
    if !keep {
        s.push_str("<th>recommended</th>");
    }
    s.push_str("</tr>\n");
    for p in &r.parts {
        let label = html_escape(&trace_label(&r.session, &p.trace));
        let name = match detail.link(&p.trace) {
            Some(link) => format!(
                "<a href=\"../../{link}\" title=\"{}\">{label}</a>",
                html_escape(&p.trace)
            ),
            None => format!("<span title=\"{}\">{label}</span>", html_escape(&p.trace)),
        };
        let _ = write!(
            s,
            "<tr><td class=\"l\">{name}</td><td class=\"o\">{}</td><td>{}</td><td>{}</td>",
            thousands(p.calls as u64),
            p.recorded_cost_usd.map_or_else(String::new, dollars),
            dollars(p.status_quo_usd)
        );
        if !keep {
            let _ = write!(s, "<td>{}</td>", dollars(p.recommended_usd));
        }
        s.push_str("</tr>\n");
    }
    let _ = write!(
        s,
        "<tr><td class=\"l\"><b>the session</b></td><td class=\"o\">{}</td><td>{}</td><td>{}</td>",
        thousands(r.calls as u64),
        r.recorded_cost_usd.map_or_else(String::new, dollars),
        dollars(r.status_quo_usd)
    );
    if !keep {
        let _ = write!(s, "<td>{}</td>", dollars(r.recommended_usd));
    }
    s.push_str("</tr>\n</table>\n<p class=\"small\">A trace's page holds its calls, its charts and every config's figures on it alone.</p>\n</body>\n</html>\n");
    s
}

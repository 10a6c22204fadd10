//! The report's HTML pages: the fleet page (`index.html`), the sessions
//! page and a page per trace, with their charts inline; the stylesheet is
//! `style.css`, embedded.

use std::borrow::Cow;
use std::fmt::Write as _;

use crate::charts::{Chart, ChartError, render_svg, suggested_height};
use crate::fmt::{dollars, html_escape, needs, thousands};
use tracecost_app::TraceReport;
use tracecost_app::fidelity::error_pct;
use tracecost_app::fleet::{Basis, FleetAnswer, SessionFigures, StabilitySummary};
use tracecost_app::identity::slug;
use tracecost_replay::sweep::TraceSweep;

use super::assumptions::Assumptions;
use super::html_tables::{
    Detail, calls_table, code_spans, config_html, configs_table, sessions_table,
    sessions_table_out, sweep_table,
};
use super::sink::ReportError;
use super::story::{
    Headline, base_words, basis_line, fleet_lines, fleet_stability_line, headline, keep_text,
    keep_words, notes, now_detail, reasoning, risk_text, stability_verdict,
};

/// The pages' stylesheet, inline in each page so that a page opened alone
/// (an artifact downloaded from CI) looks as it should.
const CSS: &str = include_str!("style.css");

/// The start of a page.
pub(super) fn page_head(s: &mut String, title: &str) {
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        html_escape(title)
    );
}

/// Sessions the fleet page lists; the rest are on `sessions/index.html`.
pub(super) const FLEET_TOP: usize = 20;

/// The fleet's page, in two parts: what comes before the sessions'
/// sections (when they are inline, `detail.split` false) and what comes
/// after them. The sections go between as they are, so that the page is
/// never held whole: a long trace's section lists every call of the
/// configs it shows and runs to hundreds of MB. `top`: the most expensive
/// sessions, at least [`FLEET_TOP`] of them where the fleet has as many.
pub(super) fn html(
    fleet: &FleetAnswer,
    top: &[Cow<'_, SessionFigures>],
    traces: usize,
    a: &Assumptions,
    detail: Detail<'_>,
    charts: &[Figure],
) -> (String, String) {
    let mut s = String::new();
    page_head(&mut s, "tracecost report");
    let _ = write!(
        s,
        "<h1>What these agent conversations cost</h1>\n<p class=\"sub\">{} session(s){} · {} call(s) · replayed under {} policy configurations each · tracecost {}</p>\n",
        thousands(fleet.answer.sessions as u64),
        if fleet.answer.traces == fleet.answer.sessions {
            String::new()
        } else {
            format!(" ({} traces)", thousands(fleet.answer.traces as u64))
        },
        thousands(fleet.answer.calls as u64),
        fleet.configs.len(),
        env!("CARGO_PKG_VERSION")
    );
    for line in a.unpriced_lines() {
        let _ = writeln!(
            s,
            "<p class=\"sub\"><b>Not priced:</b> {}</p>",
            html_escape(&line)
        );
    }
    for line in a.unread_lines() {
        let _ = writeln!(
            s,
            "<p class=\"sub\"><b>Not read:</b> {}</p>",
            html_escape(&line)
        );
    }
    if traces > 1 {
        fleet_section(&mut s, fleet, top, traces, detail, charts);
    }
    let mut tail = String::new();
    assumptions_html(&mut tail, a);
    (s, tail)
}

/// The fleet's answer: headline cards, the reasoning, the tables.
/// What to change, in words, and the setting for each place it can be
/// applied, on the first screen.
fn action_box(s: &mut String, fleet: &FleetAnswer) {
    let Some(a) = super::story::fleet_action(fleet) else {
        return;
    };
    let _ = writeln!(
        s,
        "<div class=\"action\"><b>What to change:</b> {}",
        code_spans(&html_escape(&a.words))
    );
    if let Some(note) = &a.client_note {
        let _ = writeln!(s, "<p>{}</p>", html_escape(note));
    }
    for p in &a.places {
        let _ = writeln!(
            s,
            "<p class=\"place\">{}:</p><pre><code>{}</code></pre>",
            html_escape(p.name),
            html_escape(&p.snippet)
        );
    }
    s.push_str("</div>\n");
}

pub(super) fn fleet_section(
    s: &mut String,
    fleet: &FleetAnswer,
    top_sessions: &[Cow<'_, SessionFigures>],
    traces: usize,
    detail: Detail<'_>,
    charts: &[Figure],
) {
    headline_cards(s, fleet);
    let _ = writeln!(
        s,
        "<p class=\"small\">{}</p>",
        html_escape(&basis_line(&fleet.answer))
    );
    action_box(s, fleet);
    s.push_str("<div class=\"rec\"><b>Why:</b> ");
    s.push_str(&html_escape(&reasoning(fleet)));
    s.push_str("</div>\n<h2>Fleet</h2>\n<ul>\n");
    for line in fleet_lines(fleet) {
        let _ = writeln!(s, "<li>{}</li>", code_spans(&html_escape(&line)));
    }
    if let Some(st) = &fleet.stability {
        let _ = writeln!(
            s,
            "<li>{}</li>",
            code_spans(&html_escape(&fleet_stability_line(st)))
        );
    }
    if let Some(line) = fleet.fidelity.as_ref().and_then(|f| f.line()) {
        let _ = writeln!(s, "<li>{}</li>", html_escape(&line));
    }
    s.push_str("</ul>\n");
    figures(s, charts, "", true);
    configs_table(s, fleet);
    super::bill::bill_html(s, fleet);
    projects_table(s, fleet);
    days_table(s, fleet);
    top_sessions_table(s, fleet, top_sessions, traces, detail);
}

/// The cards at the top: what we pay now, the recommendation, the saving.
fn headline_cards(s: &mut String, fleet: &FleetAnswer) {
    let ans = &fleet.answer;
    let sq = &ans.status_quo;
    let rec = &ans.recommended;
    s.push_str("<div class=\"cards\">\n");
    let h = &ans.headline;
    let month = fleet.per_month.as_ref().map(|m| &m.headline);
    let now_detail = now_detail(fleet);
    // A baseline named with --baseline is not what is paid now, unless
    // the figure is the recorded bill.
    let now_label = if fleet.baseline.is_some() && h.basis != Basis::Recorded {
        "The baseline"
    } else {
        "What we pay now"
    };
    let _ = writeln!(
        s,
        "<div class=\"card\"><div class=\"k\">{now_label}</div><div class=\"v\">{}</div><div class=\"d\">{}{}</div></div>",
        dollars(h.now_usd),
        html_escape(&now_detail),
        month.map_or_else(String::new, |m| format!(
            "<br>{} per month at this rate",
            dollars(m.now_usd)
        ))
    );
    if ans.keep_status_quo {
        let _ = writeln!(
            s,
            "<div class=\"card\"><div class=\"k\">Recommended</div><div class=\"v\">{}</div><div class=\"d\">no policy of the grid is cheaper once recall risk is priced<br><code>{}</code></div></div>",
            keep_text(fleet),
            config_html(&sq.config.to_string())
        );
    } else {
        let rec_detail = match h.basis {
            Basis::Recorded => format!(
                "the recorded bill less the simulated saving ({} simulated, against {} for the status quo)",
                dollars(rec.cost_usd),
                dollars(sq.cost_usd)
            ),
            Basis::Simulated => format!(
                "simulated, against {} for the status quo",
                dollars(sq.cost_usd)
            ),
        };
        let _ = writeln!(
            s,
            "<div class=\"card\"><div class=\"k\">Recommended</div><div class=\"v good\">{}</div><div class=\"d\">{}<br><code>{}</code></div></div>",
            dollars(h.recommended_usd),
            html_escape(&rec_detail),
            config_html(&rec.config.to_string())
        );
        let _ = writeln!(
            s,
            "<div class=\"card\"><div class=\"k\">Saving</div><div class=\"v good\">{} ({:.1}%)</div><div class=\"d\">{}{}</div></div>",
            dollars(h.saving_usd),
            h.saving_pct,
            // Scaled by time where the sessions are dated; otherwise by
            // session, the one unit the fleet itself measures (a figure
            // per 1,000 sessions would multiply two sessions by 500).
            month.map_or_else(
                || format!(
                    "{} per session on average",
                    dollars(h.saving_usd / ans.sessions.max(1) as f64)
                ),
                |m| format!("{} per month at this rate", dollars(m.saving_usd))
            ),
            match super::story::saving_range_text(fleet) {
                t if t.is_empty() => String::new(),
                t => format!("<br>{}", html_escape(&t)),
            }
        );
    }
    s.push_str("</div>\n");
}

/// Per project: its sessions, the status quo and its own best policy.
fn projects_table(s: &mut String, fleet: &FleetAnswer) {
    if fleet.projects.is_empty() {
        return;
    }
    s.push_str("<h2>Per project</h2>\n<p class=\"small\">A session counts in the project of its first trace, with all its traces.</p>\n<table><tr><th class=\"l\">project</th><th>sessions</th><th class=\"o\">traces</th><th class=\"o\">calls</th><th class=\"o\">recorded</th><th>status quo</th><th class=\"l o\">its best policy</th><th>which saves</th></tr>\n");
    for p in &fleet.projects {
        let _ = writeln!(
            s,
            "<tr><td class=\"l\">{}</td><td>{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td>{}</td><td class=\"l o\"><code>{}</code></td><td>{:.1}%</td></tr>",
            html_escape(&p.project),
            thousands(p.answer.sessions as u64),
            thousands(p.answer.traces as u64),
            thousands(p.answer.calls as u64),
            p.answer.recorded_cost_usd.map_or_else(String::new, dollars),
            dollars(p.answer.status_quo.cost_usd),
            config_html(&if p.answer.keep_status_quo {
                keep_text(fleet).to_owned()
            } else {
                p.answer.recommended.config.to_string()
            }),
            p.answer.recommended.savings_pct
        );
    }
    s.push_str("</table>\n");
}

/// Per day: sessions, calls and what they cost.
fn days_table(s: &mut String, fleet: &FleetAnswer) {
    if fleet.days.is_empty() {
        return;
    }
    s.push_str("<h2>Per day</h2>\n<p class=\"small\">Calls by the day they started (UTC); a session counts once on each day it ran.</p>\n<table><tr><th class=\"l\">day</th><th class=\"o\">sessions</th><th class=\"o\">calls</th><th class=\"o\">recorded</th><th>status quo</th><th>recommended</th></tr>\n");
    for d in &fleet.days {
        let _ = writeln!(
            s,
            "<tr><td class=\"l\">{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td class=\"o\">{}</td><td>{}</td><td>{}</td></tr>",
            html_escape(&d.day),
            thousands(d.sessions as u64),
            thousands(d.calls as u64),
            d.recorded_cost_usd.map_or_else(String::new, dollars),
            dollars(d.status_quo_usd),
            dollars(d.recommended_usd)
        );
    }
    s.push_str("</table>\n");
}

/// The most expensive sessions, and a link to all of them.
fn top_sessions_table(
    s: &mut String,
    fleet: &FleetAnswer,
    top_sessions: &[Cow<'_, SessionFigures>],
    traces: usize,
    detail: Detail<'_>,
) {
    let all = &fleet.per_session;
    let top = FLEET_TOP.min(all.len()).min(top_sessions.len());
    let _ = writeln!(
        s,
        "<h2>{}</h2>\n<p class=\"small\">A session is a conversation with its continuations and subagents; its figures sum its traces, listed under its name.</p>",
        if top < all.len() {
            format!("The {top} most expensive sessions")
        } else {
            "Sessions, most expensive first".to_owned()
        }
    );
    sessions_table(s, fleet, &top_sessions[..top], detail, "");
    if detail.split && top < all.len() {
        let _ = writeln!(
            s,
            "<p><a href=\"sessions/index.html\">All {} sessions ({} traces)</a></p>",
            thousands(all.len() as u64),
            thousands(traces as u64)
        );
    }
}

/// Width of the charts drawn for a phone's page, so their labels stay
/// readable where the page is a third as wide: the page's width on a
/// 390-pixel phone (less the body's 1em margins), so a chart is shown at
/// its own size there and its 13-pixel text is never scaled under 12.
pub(super) const CHART_W_NARROW: u32 = 358;

/// A chart as a page shows it: drawn twice, for a desktop's width and a
/// phone's, the stylesheet showing the one that fits.
pub(super) struct Figure {
    stem: String,
    wide: String,
    narrow: String,
}

impl Figure {
    pub(super) fn new(stem: String, chart: &Chart, wide: String) -> Result<Self, ChartError> {
        let h = suggested_height(chart, CHART_W_NARROW);
        let narrow = render_svg(chart, CHART_W_NARROW, h)?;
        Ok(Figure { stem, wide, narrow })
    }
}

/// Inline charts; with `files`, each links to its SVG and PNG under
/// `root`.
pub(super) fn figures(s: &mut String, charts: &[Figure], root: &str, files: bool) {
    let body = |svg: &str| svg.find("<svg").map_or(svg, |i| &svg[i..]).to_owned();
    for f in charts {
        let both = format!(
            "<div class=\"wide\">{}</div><div class=\"narrow\">{}</div>",
            body(&f.wide),
            body(&f.narrow)
        );
        if files {
            let stem = &f.stem;
            let _ = writeln!(
                s,
                "<figure>{both}<figcaption>Chart files: <a href=\"{root}charts/{stem}.svg\">SVG</a> · <a href=\"{root}charts/{stem}.png\">PNG</a></figcaption></figure>"
            );
        } else {
            let _ = writeln!(s, "<figure>{both}</figure>");
        }
    }
}

/// `sessions/index.html` of a split report: every session, most expensive
/// first, handed to `out` a chunk at a time (`out` takes the text).
pub(super) fn sessions_page(
    fleet: &FleetAnswer,
    traces: usize,
    detail: Detail<'_>,
    out: &mut dyn FnMut(&mut String) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let mut s = String::new();
    page_head(&mut s, "Sessions — tracecost");
    let _ = writeln!(
        s,
        "<p class=\"sub\"><a href=\"../index.html\">← the fleet</a></p>\n<h1>All {} sessions, most expensive first</h1>\n<p class=\"small\">{} traces: a session is a conversation with its continuations and subagents, listed under its name.</p>",
        thousands(fleet.per_session.len() as u64),
        thousands(traces as u64)
    );
    if let Some(paged) = detail.paged {
        let _ = writeln!(
            s,
            "<p class=\"small\">The {} most expensive traces have a page of their own, linked below; every session's figures are here, in <code>sessions.csv</code> and in <code>results.json</code> (<code>tracecost report --sessions all</code> gives every trace a page).</p>",
            thousands(paged.len() as u64)
        );
    }
    // Links from this page are relative to `sessions/` itself.
    sessions_table_out(&mut s, fleet, fleet.per_session.iter(), detail, "../", out)?;
    s.push_str("</body>\n</html>\n");
    out(&mut s)
}

/// A trace's own page in a split report, linking back to the fleet page
/// and the list of sessions.
pub(super) fn trace_page(
    session: &str,
    r: &TraceReport,
    charts: &[Figure],
    baseline: Option<&str>,
) -> String {
    let mut s = String::new();
    page_head(&mut s, &format!("{} — tracecost", r.sweep.trace));
    s.push_str("<p class=\"sub\"><a href=\"../index.html\">← the fleet</a> · <a href=\"index.html\">all sessions</a></p>\n");
    trace_section(
        &mut s,
        session,
        r,
        charts,
        SectionPlace {
            root: "../",
            chart_files: false,
            baseline,
            per_thousand: PerThousand::No,
            own_page: true,
        },
        &mut |_| {},
    );
    s.push_str("</body>\n</html>\n");
    s
}

pub(super) fn assumptions_html(s: &mut String, a: &Assumptions) {
    let _ = write!(
        s,
        "<h2>Assumptions</h2>\n<ul>\n<li><b>Prices:</b> {}{}.</li>\n<li><b>Tokens:</b> Claude's tokenizer is not public; counts come from {} and, where a trace recorded usage, are scaled by a per-trace factor fitted on the growth of the recorded prompt between calls (shown per trace). Framing tokens per message, block and tool, and the tool-use system prompt, come from the price table's per-model data.</li>\n<li><b>Cache:</b> simulated with the Anthropic prompt-caching rules: cumulative prefix over tools, system and messages; at most 4 breakpoints; writes only at breakpoints; a 20-position lookback; per-model minimum cacheable length; 5-minute and 1-hour TTLs from request start, refreshed by hits.</li>\n<li><b>Timing:</b> calls use their recorded start times; traces without them are treated as back-to-back, which favours caching (flagged per trace).</li>\n<li><b>Output tokens</b> are the recorded ones, the same for every policy.</li>\n<li><b>Recall risk</b> counts the compacted tool results the record shows were needed again: a line of one copied into a later answer or tool input, or an identifier only it held, once per result, less what such signals find by chance (measured on results the model never saw); the range runs from copied lines only (low) to every signal with nothing taken off (high), and the recommendation prices each needed result at the mid as one extra round trip plus its text (docs/recall.md).</li>\n<li><b>Grid:</b> {}.</li>\n</ul>\n</body>\n</html>\n",
        html_escape(&a.prices),
        if a.batch {
            ", with the Batch API discount"
        } else {
            ""
        },
        html_escape(&a.tokenizer),
        html_escape(&a.grid)
    );
}

/// One trace's section; `root` leads from the page to the report's folder
/// (`""` on the fleet page, `"../"` on a trace page); `baseline`, the
/// config `--baseline` named, if any.
/// Whether a trace's figures are also given per 1,000 runs: for the one
/// trace of a report, a workflow a team runs again and again; not for a
/// trace of a fleet, one conversation among many, which ran once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PerThousand {
    Yes,
    No,
}

impl PerThousand {
    fn text(self, usd: f64) -> String {
        match self {
            PerThousand::Yes => format!(" · {} per 1,000 runs", dollars(usd * 1000.0)),
            PerThousand::No => String::new(),
        }
    }
}

/// Where a trace's section stands and what it says around its figures.
pub(super) struct SectionPlace<'a> {
    /// The report's root, relative to the page (`""` or `"../"`).
    pub(super) root: &'a str,
    /// Whether its charts are files beside the page (else inline).
    pub(super) chart_files: bool,
    /// The config named by `--baseline`, if any.
    pub(super) baseline: Option<&'a str>,
    /// Whether figures are also given per 1,000 runs.
    pub(super) per_thousand: PerThousand,
    /// Whether the section is a trace's own page, beside its session's
    /// page (`whole/…` under `sessions/`).
    pub(super) own_page: bool,
}

/// `out` is handed the text now and then as the per-call tables are
/// written, and may take it ([`calls_table`]); what it leaves stays in `s`.
pub(super) fn trace_section(
    s: &mut String,
    session: &str,
    r: &TraceReport,
    charts: &[Figure],
    place: SectionPlace<'_>,
    out: &mut dyn FnMut(&mut String),
) {
    let SectionPlace {
        root,
        chart_files,
        baseline,
        per_thousand,
        own_page,
    } = place;
    let sw = &r.sweep;
    let h = headline(sw);
    trace_heading(s, session, sw, baseline, own_page);
    trace_cards(s, sw, &h, baseline, per_thousand);
    trace_recommendation(s, r, &h);
    figures(s, charts, root, chart_files);
    s.push_str("<h3>All configurations</h3>\n<p class=\"small\">Sorted by cost. Recall risk = compacted results needed again (mid estimate); * = on the Pareto front of cost against recall risk.</p>\n");
    sweep_table(s, sw);
    s.push_str("<h3>Per call: status quo and recommended</h3>\n<p class=\"small\">The last column says why a call read less than the call before it had cached. <code>tracecost fidelity PATH --explain NAME</code> sets each call beside what its record shows.</p>\n");
    calls_table(s, "status quo", h.base, out);
    if sw.recommended != sw.baseline {
        calls_table(s, "recommended", h.rec, out);
    }
}

/// A trace's heading: its name, the session it belongs to, the baseline
/// named; the cards open after it.
fn trace_heading(
    s: &mut String,
    session: &str,
    sw: &TraceSweep,
    baseline: Option<&str>,
    own_page: bool,
) {
    let part = if session == sw.trace {
        String::new()
    } else if own_page {
        // The session's page exists wherever one of its traces has a page
        // (`html_tables::has_whole_page`): this is one.
        format!(
            "<p class=\"small\">A trace of session <a href=\"whole/{}.html\"><code>{}</code></a> (a continuation or subagent of it): the figures below are this trace's alone; the session's page sums them all.</p>\n",
            slug(session),
            html_escape(session)
        )
    } else {
        format!(
            "<p class=\"small\">A trace of session <code>{}</code> (a continuation or subagent of it): the figures below are this trace's alone.</p>\n",
            html_escape(session)
        )
    };
    // A trace's page is read on its own: what its "status quo" is when a
    // baseline was named is said here too, as on the fleet page.
    let named = baseline.map_or_else(String::new, |b| {
        format!(
            "<p class=\"small\">Baseline <code>{}</code>, as --baseline asked: below, the status quo is this config replayed on the trace, not what it ran.</p>\n",
            html_escape(b)
        )
    });
    let _ = write!(
        s,
        "<h2 id=\"{}\">{}</h2>\n{part}<p>{}</p>\n{named}<div class=\"cards\">\n",
        slug(&sw.trace),
        html_escape(&sw.trace),
        html_escape(&sw.description)
    );
}

/// A trace's cards: what was recorded, the status quo, the
/// recommendation.
fn trace_cards(
    s: &mut String,
    sw: &TraceSweep,
    h: &Headline<'_>,
    baseline: Option<&str>,
    per_thousand: PerThousand,
) {
    if let Some(rec) = h.recorded {
        let t = &h.base.result.totals;
        let sim = t.cost_usd_recorded_calls.map_or_else(String::new, |sim| {
            format!(
                "<br>{} simulated on the same calls: {} ({:+.1}%)",
                base_words(baseline.is_some()),
                dollars(sim),
                error_pct(sim, rec)
            )
        });
        let _ = writeln!(
            s,
            "<div class=\"card\"><div class=\"k\">Recorded cost</div><div class=\"v\">{}</div><div class=\"d\">what the provider billed for the {} call(s) with recorded usage{sim}</div></div>",
            dollars(rec),
            t.recorded_calls
        );
    }
    let _ = writeln!(
        s,
        "<div class=\"card\"><div class=\"k\">{}</div><div class=\"v\">{}</div><div class=\"d\">per run{}<br><code>{}</code></div></div>",
        if baseline.is_some() {
            "Baseline"
        } else {
            "Status quo"
        },
        dollars(h.base.result.totals.cost_usd),
        per_thousand.text(h.base.result.totals.cost_usd),
        config_html(&h.base.result.config.to_string())
    );
    if sw.recommended == sw.baseline {
        let _ = write!(
            s,
            "<div class=\"card\"><div class=\"k\">Recommended</div><div class=\"v\">{}</div><div class=\"d\">no config of the grid is cheaper once recall risk is priced<br><code>{}</code></div></div>\n</div>\n",
            keep_words(baseline.is_some()),
            config_html(&h.rec.result.config.to_string())
        );
    } else {
        let _ = write!(
            s,
            "<div class=\"card\"><div class=\"k\">Recommended</div><div class=\"v good\">{}</div><div class=\"d\">saves {} ({:.1}%) per run{}<br><code>{}</code></div></div>\n</div>\n",
            dollars(h.rec.result.totals.cost_usd),
            dollars(h.rec.savings_usd),
            h.rec.savings_pct,
            per_thousand.text(h.rec.savings_usd),
            config_html(&h.rec.result.config.to_string())
        );
    }
}

/// The recommendation box, and the status quo's notes.
fn trace_recommendation(s: &mut String, r: &TraceReport, h: &Headline<'_>) {
    let sw = &r.sweep;
    let _ = write!(
        s,
        "<div class=\"rec\"><b>Recommendation:</b> use <code>{}</code>. Recall risk: {}.",
        config_html(&h.rec.result.config.to_string()),
        html_escape(&risk_text(h.rec))
    );
    if sw.cheapest != sw.recommended {
        let _ = write!(
            s,
            " The cheapest config, <code>{}</code> at {} ({:.1}% saved), has a higher recall risk ({} result(s) needed again).",
            config_html(&h.best.result.config.to_string()),
            dollars(h.best.result.totals.cost_usd),
            h.best.savings_pct,
            needs(h.best.risk.needs.mid)
        );
    }
    let _ = writeln!(
        s,
        " Stability: {}.</div>",
        html_escape(&stability_verdict(StabilitySummary::of(&r.stability)))
    );
    let notes = notes(&h.base.result);
    if !notes.is_empty() {
        let _ = writeln!(
            s,
            "<p class=\"small\">{}</p>",
            html_escape(&notes.join(" "))
        );
    }
}

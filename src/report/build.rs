//! The report: from sweep results to the files of `reports/<name>/`.
//!
//! Everything here is a pure function of its input: the same sweeps give
//! the same bytes (no clock, no random ids, no hash-map order), which is
//! what lets a committed example report be checked byte for byte.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;

use serde::Serialize;

use super::charts::{CallTokens, Chart, ChartError, render_png, render_svg, suggested_height};
use super::export::{Exportable, Format};
use super::fmt::{csv_field, dollars, html_escape, md_escape, thousands};
use super::sweep_view::SweepView;
use crate::policy::{Compaction, Config};
use crate::replay::stability::StabilityReport;
use crate::replay::sweep::{SweepRow, TraceSweep};
use crate::replay::{CallResult, ReplayResult};

/// Version tag of `results.json`.
pub const RESULTS_FORMAT: &str = "tracecost.report/v1";

/// What the numbers assume, shown in every report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assumptions {
    /// Where prices come from, with their date.
    pub prices: String,
    /// Tokenizer spec.
    pub tokenizer: String,
    /// Whether calibration was on.
    pub calibration: bool,
    /// Batch discount applied.
    pub batch: bool,
    /// The grid, described.
    pub grid: String,
}

use crate::app::TraceReport;
use crate::app::fidelity::error_pct;
use crate::app::fleet::{
    Basis, Fleet, FleetFigures, FleetStability, GroupAnswer, SessionFigures, SessionSummary,
    StabilityBrief,
};

const CHART_W: u32 = 900;

pub use crate::app::identity::slug;

fn call_tokens(calls: &[CallResult]) -> Vec<CallTokens> {
    calls
        .iter()
        .map(|c| CallTokens {
            uncached: c.usage.input_tokens,
            cache_write: c.usage.cache_creation_input_tokens,
            cache_read: c.usage.cache_read_input_tokens,
        })
        .collect()
}

fn cumulative(calls: &[CallResult]) -> Vec<f64> {
    let mut sum = 0.0;
    calls
        .iter()
        .map(|c| {
            sum += c.cost_usd;
            sum
        })
        .collect()
}

/// The family of a config for the savings chart: compaction kind × cache kind.
fn family(r: &ReplayResult) -> String {
    format!(
        "{} + {}",
        r.config.compaction.kind().name(),
        r.config.cache.kind().name()
    )
}

/// The best (cheapest) row of each family, in cost order.
fn best_per_family(s: &TraceSweep) -> Vec<&SweepRow> {
    let mut seen = BTreeMap::new();
    let mut out = Vec::new();
    for r in &s.rows {
        if seen.insert(family(&r.result), ()).is_none() {
            out.push(r);
        }
    }
    out
}

/// The charts of one trace, in display order: (file stem, title, chart).
pub fn charts(s: &TraceSweep) -> Vec<(String, Chart)> {
    let stem = slug(&s.trace);
    let mut out = Vec::new();
    let base = &s.rows[s.baseline];
    let rec = &s.rows[s.recommended];
    let mut series = vec![(
        format!("status quo: {}", base.result.config),
        call_tokens(&base.result.calls),
    )];
    if s.recommended != s.baseline {
        series.push((
            format!("recommended: {}", rec.result.config),
            call_tokens(&rec.result.calls),
        ));
    }
    if s.cheapest != s.recommended && s.cheapest != s.baseline {
        series.push((
            format!("cheapest: {}", s.rows[s.cheapest].result.config),
            call_tokens(&s.rows[s.cheapest].result.calls),
        ));
    }
    out.push((
        format!("{stem}-calls"),
        Chart::StackedCalls {
            title: format!("{}: input tokens per call by billing class", s.trace),
            series,
        },
    ));
    // Lines: the families' best, baseline and recommended first.
    let mut lines: Vec<(String, Vec<f64>)> = Vec::new();
    let mut push = |label: String, r: &SweepRow| {
        if !lines
            .iter()
            .any(|(l, _)| l.ends_with(&r.result.config.to_string()))
        {
            lines.push((label, cumulative(&r.result.calls)));
        }
    };
    push(format!("status quo: {}", base.result.config), base);
    push(format!("recommended: {}", rec.result.config), rec);
    for r in best_per_family(s) {
        push(r.result.config.to_string(), r);
    }
    out.push((
        format!("{stem}-cumulative"),
        Chart::CumulativeCost {
            title: format!("{}: cumulative cost across calls", s.trace),
            lines,
        },
    ));
    // Heatmaps: ledger threshold × keep-last per cache policy.
    let mut by_cache: BTreeMap<String, BTreeMap<(u64, usize), f64>> = BTreeMap::new();
    for r in &s.rows {
        let config = &r.result.config;
        let Compaction::Ledger {
            threshold,
            keep_last,
        } = config.compaction
        else {
            continue;
        };
        // One heatmap per cache policy and model: the config string after
        // its compaction part.
        let cache = match &config.model {
            Some(m) => format!("{}@{m}", config.cache),
            None => config.cache.to_string(),
        };
        by_cache
            .entry(cache)
            .or_default()
            .insert((threshold, keep_last), r.result.totals.cost_usd);
    }
    // Each heatmap on its own colour scale: one scale shared with a dearer
    // cache policy's map flattens the map that holds the choice, and its
    // cheapest cell would not have the colour the caption names.
    for (cache, cells) in &by_cache {
        let mut thresholds: Vec<u64> = cells.keys().map(|(t, _)| *t).collect();
        thresholds.sort_unstable();
        thresholds.dedup();
        let mut keeps: Vec<usize> = cells.keys().map(|(_, k)| *k).collect();
        keeps.sort_unstable();
        keeps.dedup();
        let cost_usd = keeps
            .iter()
            .map(|k| {
                thresholds
                    .iter()
                    .map(|t| cells.get(&(*t, *k)).copied())
                    .collect()
            })
            .collect();
        out.push((
            format!("{stem}-heatmap-{}", slug(cache)),
            Chart::Heatmap {
                title: format!("{}: ledger cost, cache {cache}", s.trace),
                thresholds,
                keeps,
                cost_usd,
                scale_usd: None,
            },
        ));
    }
    let bars = best_per_family(s)
        .into_iter()
        .map(|r| (r.result.config.to_string(), r.savings_usd, r.savings_pct))
        .collect();
    out.push((
        format!("{stem}-savings"),
        Chart::SavingsBars {
            title: format!(
                "{}: savings against the status quo, best config per policy",
                s.trace
            ),
            bars,
        },
    ));
    out
}

/// Where a report's files go, as they are made: a report of a thousand
/// sessions is written session by session, never held whole.
pub trait ReportSink {
    /// Writes the whole file `rel` (a path relative to the report's root).
    fn put(&mut self, rel: &str, bytes: &[u8]) -> io::Result<()>;
    /// Appends to the file `rel`, creating it.
    fn append(&mut self, rel: &str, bytes: &[u8]) -> io::Result<()>;
}

/// A sink that keeps the files in memory (for tests and small reports).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MemorySink(pub BTreeMap<String, Vec<u8>>);

impl ReportSink for MemorySink {
    fn put(&mut self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        self.0.insert(rel.to_owned(), bytes.to_vec());
        Ok(())
    }

    fn append(&mut self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        self.0
            .entry(rel.to_owned())
            .or_default()
            .extend_from_slice(bytes);
        Ok(())
    }
}

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A chart could not be drawn.
    #[error(transparent)]
    Chart(#[from] ChartError),
    /// A file could not be written.
    #[error("{0}")]
    Write(#[from] io::Error),
}

/// Writes a report: [`ReportWriter::session`] for each session as soon as it
/// is replayed (its charts, its page, its entries in `results.json` and
/// `results.csv`), then [`ReportWriter::finish`] with the fleet's answer for
/// the fleet page and `summary.md`.
pub struct ReportWriter<'s> {
    sink: &'s mut dyn ReportSink,
    assumptions: Assumptions,
    /// Each session's detail on its own page (else inline on the fleet page).
    split: bool,
    /// The sessions' sections with their charts, when inline.
    inline: Vec<String>,
    /// Traces written so far.
    traces: usize,
    files: BTreeMap<String, ()>,
}

impl<'s> ReportWriter<'s> {
    /// A writer for a report of `traces` traces.
    pub fn new(
        sink: &'s mut dyn ReportSink,
        assumptions: Assumptions,
        traces: usize,
    ) -> Result<Self, ReportError> {
        let mut w = ReportWriter {
            sink,
            split: traces > INLINE_TRACES_MAX,
            inline: Vec::new(),
            traces: 0,
            files: BTreeMap::new(),
            assumptions,
        };
        let head = format!(
            "{{\n  \"format\": {},\n  \"generator\": {},\n  \"assumptions\": {},\n  \"traces\": [",
            json(&RESULTS_FORMAT),
            json(&format!("tracecost {}", env!("CARGO_PKG_VERSION"))),
            indented(&json_pretty(&w.assumptions), 2)
        );
        w.append("results.json", head.as_bytes())?;
        Ok(w)
    }

    fn put(&mut self, rel: &str, bytes: &[u8]) -> Result<(), ReportError> {
        self.files.insert(rel.to_owned(), ());
        Ok(self.sink.put(rel, bytes)?)
    }

    fn append(&mut self, rel: &str, bytes: &[u8]) -> Result<(), ReportError> {
        self.files.insert(rel.to_owned(), ());
        Ok(self.sink.append(rel, bytes)?)
    }

    /// Writes what belongs to one trace of `session` (the conversation it is
    /// part of, with its continuations and subagents).
    pub fn trace(&mut self, session: &str, r: &TraceReport) -> Result<(), ReportError> {
        let mut svgs = Vec::new();
        for (stem, chart) in charts(&r.sweep) {
            let h = suggested_height(&chart, CHART_W);
            let svg = render_svg(&chart, CHART_W, h)?;
            // A fleet's session charts live inline in their pages only: a
            // thousand sessions would otherwise leave tens of thousands of
            // chart files.
            if !self.split {
                let png = render_png(&chart, CHART_W, h)?;
                self.put(&format!("charts/{stem}.svg"), svg.as_bytes())?;
                self.put(&format!("charts/{stem}.png"), &png)?;
            }
            svgs.push(Figure::new(stem, &chart, svg)?);
        }
        let files = !self.split;
        if self.split {
            let page = trace_page(session, r, &svgs);
            self.put(&trace_link(&r.sweep.trace, true), page.as_bytes())?;
        } else {
            let mut section = String::new();
            trace_section(&mut section, session, r, &svgs, "", files);
            self.inline.push(section);
        }
        let entry = json_pretty(&json_trace(session, r));
        let sep = if self.traces == 0 { "\n" } else { ",\n" };
        self.append(
            "results.json",
            format!("{sep}    {}", indented(&entry, 4)).as_bytes(),
        )?;
        let mut csv = Vec::new();
        SweepView {
            sweeps: std::slice::from_ref(&r.sweep),
        }
        .export_to(Format::Csv, &mut csv)?;
        // Each row names its session first, so a spreadsheet sums a
        // session's traces; the header once, at the top.
        let text = String::from_utf8_lossy(&csv);
        let mut rows = String::with_capacity(text.len() + 64);
        for (i, line) in text.lines().enumerate() {
            match i {
                0 if self.traces > 0 => continue,
                0 => rows.push_str("session,"),
                _ => {
                    rows.push_str(&csv_field(session));
                    rows.push(',');
                }
            }
            rows.push_str(line);
            rows.push('\n');
        }
        self.append("results.csv", rows.as_bytes())?;
        self.traces += 1;
        Ok(())
    }

    /// Writes the fleet page, `summary.md` and the end of `results.json`;
    /// returns the names of every file written, in order.
    pub fn finish(
        mut self,
        fleet: &Fleet,
        sessions: &[SessionSummary],
    ) -> Result<Vec<String>, ReportError> {
        let tail = format!(
            "{}  ],\n  \"fleet\": {}\n}}\n",
            if self.traces == 0 { "" } else { "\n" },
            indented(&json_pretty(fleet), 2)
        );
        self.append("results.json", tail.as_bytes())?;
        // The fleet's charts: files beside the page, and inline in it.
        let mut fleet_svgs = Vec::new();
        if sessions.len() > 1 {
            for (stem, chart) in fleet_charts(fleet, sessions) {
                let h = suggested_height(&chart, CHART_W);
                let svg = render_svg(&chart, CHART_W, h)?;
                let png = render_png(&chart, CHART_W, h)?;
                self.put(&format!("charts/{stem}.svg"), svg.as_bytes())?;
                self.put(&format!("charts/{stem}.png"), &png)?;
                fleet_svgs.push(Figure::new(stem, &chart, svg)?);
            }
        }
        let index = html(
            fleet,
            sessions,
            &self.assumptions,
            &self.inline,
            self.split,
            &fleet_svgs,
        );
        self.put("index.html", index.as_bytes())?;
        if self.split {
            let page = sessions_page(fleet, sessions.len());
            self.put("sessions/index.html", page.as_bytes())?;
        }
        let summary = summary_md(fleet, sessions, &self.assumptions);
        self.put("summary.md", summary.as_bytes())?;
        self.put("sessions.csv", sessions_csv(fleet).as_bytes())?;
        Ok(self.files.into_keys().collect())
    }
}

fn json<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn json_pretty<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// `text` with every line but the first indented by `n` spaces (the first
/// follows a key or the caller's own indent), so pretty JSON nests in
/// pretty JSON. Line breaks in JSON text only ever come from the layout:
/// strings escape theirs.
fn indented(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(&pad);
        }
        out.push_str(line);
    }
    out
}

/// Headline figures of one trace.
struct Headline<'a> {
    base: &'a SweepRow,
    rec: &'a SweepRow,
    best: &'a SweepRow,
    recorded: Option<f64>,
}

fn headline(s: &TraceSweep) -> Headline<'_> {
    let base = &s.rows[s.baseline];
    Headline {
        base,
        rec: &s.rows[s.recommended],
        best: &s.rows[s.cheapest],
        recorded: base.result.totals.recorded_cost_usd,
    }
}

fn risk_text(r: &SweepRow) -> String {
    match r.risk.turns {
        0 => "no later turn quoted text that only compacted results held".into(),
        n => format!(
            "{n} later assistant turn(s) quoted {} piece(s) of text that only compacted results held — each would have needed a recall_tool_result call",
            r.risk.quotes
        ),
    }
}

/// Above this many traces, summary.md names the most expensive sessions in
/// one table instead of a section each, so it stays short enough for a
/// pull-request comment at any fleet size.
const SUMMARY_SECTIONS_MAX: usize = 3;

/// Sessions named in summary.md's table of the most expensive.
const SUMMARY_TOP: usize = 10;

/// One line per reason and count of the configs skipped for traces they
/// cannot apply to (a default grid holds a dozen configs of one cache
/// policy; they are said once).
fn skipped_lines(skipped: &[crate::app::fleet::SkippedConfig]) -> Vec<String> {
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
pub fn sweep_skipped_lines(skipped: &[crate::app::fleet::SkippedConfig]) -> Vec<String> {
    skipped_groups(skipped)
        .into_iter()
        .map(|(what, traces, of, reason)| {
            format!("not applicable: {what} skipped for {traces} of {of} traces ({reason}); their tables have no row for it")
        })
        .collect()
}

/// Skipped configs grouped by reason and count: (the configs in words,
/// traces skipped, traces, reason).
fn skipped_groups(
    skipped: &[crate::app::fleet::SkippedConfig],
) -> Vec<(String, usize, usize, &str)> {
    let mut groups: Vec<(&str, usize, usize, Vec<&str>)> = Vec::new();
    for s in skipped {
        match groups
            .iter_mut()
            .find(|g| g.0 == s.reason && g.1 == s.traces && g.2 == s.of)
        {
            Some(g) => g.3.push(&s.config),
            None => groups.push((&s.reason, s.traces, s.of, vec![&s.config])),
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
pub fn fleet_lines(fleet: &Fleet) -> Vec<String> {
    let (a, configs) = (&fleet.answer, &fleet.configs);
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
    if let (Some(rec), Some(sim)) = (a.recorded_cost_usd, a.status_quo_on_recorded_calls_usd) {
        let err = if rec > 0.0 {
            format!(" ({:+.1}% against the recorded bill)", error_pct(sim, rec))
        } else {
            String::new()
        };
        out.push(format!(
            "Recorded bill of the calls replayed: {}; the status quo simulated on the same calls: {}{err}.",
            dollars(rec),
            dollars(sim)
        ));
    }
    if a.status_quo.over_window_calls > 0 {
        out.push(format!(
            "Warning: {} call(s) of the status quo send more than their model's context window; the API would refuse them, so their figures describe no real bill (a real agent compacts first).",
            thousands(a.status_quo.over_window_calls as u64)
        ));
    }
    out.push(
        if a.status_quo.config == crate::app::fleet::MIXED_STATUS_QUO {
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
        },
    );
    out.extend(skipped_lines(&a.skipped));
    let per_month = per_month_line(fleet);
    if a.keep_status_quo {
        out.push(
            "Recommendation: keep what you have; no policy of the grid is cheaper once recall risk is priced."
                .into(),
        );
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
                "Cheapest before recall risk: `{}` at {} ({:.1}% less), with {} assistant turn(s) that would have needed a recall ({} once priced).",
                c.config,
                dollars(c.cost_usd),
                c.savings_pct,
                thousands(c.recall_risk_turns as u64),
                dollars(c.risk_adjusted_cost_usd)
            ));
        }
    } else if a.recommended.savings_usd < 0.0 {
        // Dearer than the status quo before recall risk: only a status quo
        // that cleared results itself (its recalls priced) loses to it.
        let (r, sq) = (&a.recommended, &a.status_quo);
        out.push(format!(
            "Recommended `{}`: {} — {} ({:.1}%) more than the status quo before recall risk, but the status quo's {} turn(s) quoting results it cleared itself bring it to {} once priced, against {} for this config.",
            r.config,
            dollars(r.cost_usd),
            dollars(-r.savings_usd),
            -r.savings_pct,
            thousands(sq.recall_risk_turns as u64),
            dollars(sq.risk_adjusted_cost_usd),
            dollars(r.risk_adjusted_cost_usd)
        ));
    } else {
        let r = &a.recommended;
        out.push(format!(
            "Recommended `{}`: {} — saves {} ({:.1}%), {} per 1,000 sessions; recall risk {} turn(s); {} session(s) cost more, median saving {} per session.",
            r.config,
            dollars(r.cost_usd),
            dollars(r.savings_usd),
            r.savings_pct,
            dollars(r.savings_usd / a.sessions.max(1) as f64 * 1000.0),
            thousands(r.recall_risk_turns as u64),
            a.spread.more_expensive,
            dollars(a.spread.median_usd)
        ));
    }
    if !a.keep_status_quo {
        out.extend(per_month);
    }
    out.extend(break_even_line(fleet));
    out
}

/// A session named for a reader: its project and first prompt when the
/// source tells, else its name.
fn session_title(s: &SessionFigures) -> String {
    match (&s.project, &s.first_prompt) {
        (Some(p), Some(f)) => format!("{p}: “{}”", crate::engine::handle::one_line(f, 60)),
        (None, Some(f)) => format!("“{}”", crate::engine::handle::one_line(f, 60)),
        (Some(p), None) => format!("{p}: {}", s.session),
        (None, None) => s.session.clone(),
    }
}

/// A session's own pick in words: its config, or keeping what it has.
fn own_pick_text(s: &SessionFigures) -> String {
    if s.own_pick.keep_status_quo {
        KEEP.to_owned()
    } else {
        s.own_pick.config.clone()
    }
}

/// The answer when no policy beats the status quo, said the same way on
/// every page.
const KEEP: &str = "keep what you have";

/// What the "what we pay now" figure is, and the recorded part beside it
/// as a check.
fn now_detail(a: &GroupAnswer) -> String {
    let check = match (a.recorded_cost_usd, a.status_quo_on_recorded_calls_usd) {
        (Some(r), Some(sim)) if r > 0.0 => Some((r, sim)),
        _ => None,
    };
    match (a.headline.basis, check) {
        (Basis::Recorded, Some((_, sim))) => format!(
            "the recorded bill of all {} calls · the status quo simulated {} on them ({:+.1}%)",
            thousands(a.calls as u64),
            dollars(sim),
            error_pct(sim, a.headline.now_usd)
        ),
        (_, Some((r, sim))) => format!(
            "the status quo, simulated · {} of {} calls recorded usage: {} recorded, {} simulated on them ({:+.1}%)",
            thousands(a.recorded_calls as u64),
            thousands(a.calls as u64),
            dollars(r),
            dollars(sim),
            error_pct(sim, r)
        ),
        _ => "the status quo, simulated (no recorded usage)".to_owned(),
    }
}

/// Which basis the figures set side by side share, in one sentence.
fn basis_line(a: &GroupAnswer) -> String {
    match a.headline.basis {
        Basis::Recorded => "Figures side by side are on one basis: the recorded bill (every call replayed recorded its usage); the recommendation is that bill less the simulated saving.".to_owned(),
        Basis::Simulated if a.recorded_calls == 0 => {
            "Figures side by side are on one basis: the status quo simulated (no call recorded its usage).".to_owned()
        }
        Basis::Simulated => format!(
            "Figures side by side are on one basis: the status quo simulated ({} of {} calls recorded usage, so the recorded part is a check beside it, not the bill).",
            thousands(a.recorded_calls as u64),
            thousands(a.calls as u64)
        ),
    }
}

/// The price of a recall at which the answer would change, in one line.
fn break_even_line(fleet: &Fleet) -> Option<String> {
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
            "Break-even: no recall price makes compaction win: even at nothing a turn, the text `{}` would re-send on its recalls costs {}, more than the {} it saves.",
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
    use crate::app::fleet::Wins;
    Some(match (a.keep_status_quo, b.wins) {
        (_, Wins::Always) => format!(
            "Break-even: `{}` is cheaper than the status quo at any price of a recall (it is as safe and costs less).",
            b.config
        ),
        (true, Wins::Below(p)) => format!(
            "Break-even: compaction wins if a recall costs less than {}: below that, `{}` is cheaper than the status quo with its recall-risk turns priced{now} (`--recall-cost` sets the price).",
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
fn per_month_line(fleet: &Fleet) -> Option<String> {
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

fn summary_md(fleet: &Fleet, sessions: &[SessionSummary], a: &Assumptions) -> String {
    let mut s = String::from("# tracecost report\n\n");
    if sessions.len() > 1 {
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
        s.push('\n');
    }
    if sessions.len() > SUMMARY_SECTIONS_MAX {
        let top = SUMMARY_TOP.min(fleet.per_session.len());
        let _ = writeln!(
            s,
            "## The {top} most expensive sessions\n\nA session is a conversation with its continuations and subagents; its figures sum its traces.\n\n| session | traces | calls | status quo | under the recommendation | saving | its own pick | which saves |\n|---|---:|---:|---:|---:|---:|---|---:|"
        );
        for r in fleet.per_session.iter().take(top) {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {:.1}% | `{}` | {:.1}% |",
                md_escape(&session_title(r)),
                r.traces.len(),
                thousands(r.calls as u64),
                dollars(r.status_quo_usd),
                dollars(r.recommended_usd),
                r.savings_pct,
                own_pick_text(r),
                r.own_pick.savings_pct
            );
        }
        let _ = writeln!(
            s,
            "\nEvery session's figures are in `sessions.csv` and `results.json`, each trace's under every config in `results.csv`; the assumptions in `index.html`."
        );
        return s;
    }
    for r in sessions {
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
            "- Status quo `{}`: **{}** per run, {} per 1,000 runs",
            h.base.result.config,
            dollars(h.base.result.totals.cost_usd),
            dollars(h.base.result.totals.cost_usd * 1000.0)
        );
        let _ = writeln!(
            s,
            "- Recommended `{}`: **{}** per run — saves {} ({:.1}%), {} per 1,000 runs; recall risk: {} turn(s)",
            h.rec.result.config,
            dollars(h.rec.result.totals.cost_usd),
            dollars(h.rec.savings_usd),
            h.rec.savings_pct,
            dollars(h.rec.savings_usd * 1000.0),
            h.rec.risk.turns
        );
        if sw.cheapest != sw.recommended {
            let _ = writeln!(
                s,
                "- Cheapest `{}`: {} — saves {:.1}%; recall risk: {} turn(s)",
                h.best.result.config,
                dollars(h.best.result.totals.cost_usd),
                h.best.savings_pct,
                h.best.risk.turns
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
                row.risk.turns
            );
        }
        let _ = writeln!(
            s,
            "\n_{} of {} configs shown; full table in results.csv._\n",
            sw.rows.len().min(10),
            sw.rows.len()
        );
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

/// The fleet's stability check, in words.
fn fleet_stability_line(st: &FleetStability) -> String {
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

fn stability_verdict(r: StabilityBrief) -> String {
    if r.violations == 0 {
        format!(
            "stable — {} stub(s) byte-identical at every later call",
            r.stubs
        )
    } else {
        format!("UNSTABLE — {} violation(s)", r.violations)
    }
}

#[derive(Serialize)]
struct JsonPick<'a> {
    config: &'a Config,
    cost_usd: f64,
    savings_usd: f64,
    savings_pct: f64,
    recall_risk_turns: usize,
}

#[derive(Serialize)]
struct JsonRow<'a> {
    config: &'a Config,
    cost_usd: f64,
    savings_usd: f64,
    savings_pct: f64,
    #[serde(flatten)]
    usage: crate::cost::pricing::Usage,
    recall_risk: crate::replay::recall_risk::RecallRisk,
    pareto: bool,
}

#[derive(Serialize)]
struct JsonTrace<'a> {
    trace: &'a str,
    session: &'a str,
    source: Option<&'a str>,
    description: &'a str,
    model: &'a str,
    back_to_back: bool,
    calibration: crate::replay::TraceCalibration,
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded_cost_usd: Option<f64>,
    baseline: JsonPick<'a>,
    cheapest: JsonPick<'a>,
    recommended: JsonPick<'a>,
    stability: &'a StabilityReport,
    configs: Vec<JsonRow<'a>>,
    calls_baseline: JsonCalls<'a>,
    calls_recommended: JsonCalls<'a>,
}

/// A trace's calls as `results.json` writes them: each call names the
/// results compacted at it and not at the call before (and those no longer
/// compacted), with the count, rather than the whole list at every call:
/// over a long trace the lists would add up to calls²/2 ids (5·10¹⁰ for
/// 500,000 calls), and the file would grow with the square of the trace.
struct JsonCalls<'a>(&'a [CallResult]);

#[derive(Serialize)]
struct JsonCall<'a> {
    index: usize,
    messages: usize,
    chars: u64,
    #[serde(flatten)]
    usage: crate::cost::pricing::Usage,
    cost_usd: f64,
    compacted_count: usize,
    newly_compacted: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    restored: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded: Option<crate::cost::pricing::Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded_cost_usd: Option<f64>,
    stable_prefix_tokens: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    over_window: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_cause: Option<crate::replay::explain::CacheCause>,
}

impl Serialize for JsonCalls<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let none = crate::replay::CompactedIds::default();
        s.collect_seq(self.0.iter().enumerate().map(|(i, c)| {
            let before = i.checked_sub(1).map_or(&none, |p| &self.0[p].compacted);
            let (newly_compacted, restored) = c.compacted.changes_since(before);
            JsonCall {
                index: c.index,
                messages: c.messages,
                chars: c.chars,
                usage: c.usage,
                cost_usd: c.cost_usd,
                compacted_count: c.compacted.len(),
                newly_compacted,
                restored,
                recorded: c.recorded,
                recorded_cost_usd: c.recorded_cost_usd,
                stable_prefix_tokens: c.stable_prefix_tokens,
                over_window: c.over_window,
                cache_cause: c.cache_cause,
            }
        }))
    }
}

fn pick(r: &SweepRow) -> JsonPick<'_> {
    JsonPick {
        config: &r.result.config,
        cost_usd: r.result.totals.cost_usd,
        savings_usd: r.savings_usd,
        savings_pct: r.savings_pct,
        recall_risk_turns: r.risk.turns,
    }
}

fn json_trace<'a>(session: &'a str, r: &'a TraceReport) -> JsonTrace<'a> {
    let s = &r.sweep;
    let h = headline(s);
    JsonTrace {
        trace: &s.trace,
        session,
        source: s.source.as_deref(),
        description: &s.description,
        model: &h.base.result.model,
        back_to_back: h.base.result.back_to_back,
        calibration: h.base.result.calibration,
        recorded_cost_usd: h.recorded,
        baseline: pick(h.base),
        cheapest: pick(h.best),
        recommended: pick(h.rec),
        stability: &r.stability,
        configs: s
            .rows
            .iter()
            .map(|row| JsonRow {
                config: &row.result.config,
                cost_usd: row.result.totals.cost_usd,
                savings_usd: row.savings_usd,
                savings_pct: row.savings_pct,
                usage: row.result.totals.usage,
                recall_risk: row.risk,
                pareto: row.pareto,
            })
            .collect(),
        calls_baseline: JsonCalls(&h.base.result.calls),
        calls_recommended: JsonCalls(&h.rec.result.calls),
    }
}

const CSS: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;color:#1a1a1a;line-height:1.45}
h1{margin-bottom:.2em}h2{margin-top:2.2em;border-bottom:2px solid #e5e5e5;padding-bottom:.2em}h3{margin-top:1.6em}
.sub{color:#555;margin-top:0}.cards{display:flex;gap:1em;flex-wrap:wrap;margin:1em 0}
.card{flex:1 1 220px;border:1px solid #ddd;border-radius:8px;padding:.8em 1em;background:#fafafa}
.card .k{font-size:.85em;color:#555;text-transform:uppercase;letter-spacing:.04em}.card .v{font-size:1.6em;font-weight:600;margin:.1em 0}
.card .d{font-size:.9em;color:#333;word-break:break-word}.good{color:#0a6b3d}.bad{color:#a31515}
.rec{border-left:4px solid #0a6b3d;background:#f0f8f3;padding:.7em 1em;margin:1em 0}
table{display:block;overflow-x:auto;font-size:.88em;margin:.6em 0}tbody{display:table;width:100%;border-collapse:collapse}
th,td{padding:.3em .5em;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#f3f3f3;white-space:normal;vertical-align:bottom}td.l,th.l{text-align:left;white-space:normal;overflow-wrap:anywhere;min-width:7em}td.s{min-width:14em}.cfg{white-space:nowrap}
figure .narrow{display:none}@media (max-width:640px){body{margin:1em auto}figure .wide{display:none}figure .narrow{display:block}}
tr.mark td{background:#fff8dc}td.m{text-align:left}code{font-size:.92em}figure{margin:1.2em 0}figure svg{width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:.85em;color:#555}details summary{cursor:pointer;color:#0645ad}.small{font-size:.85em;color:#555}";

/// The start of a page.
fn page_head(s: &mut String, title: &str) {
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        html_escape(title)
    );
}

/// Sessions the fleet page lists; the rest are on `sessions/index.html`.
const FLEET_TOP: usize = 20;

/// Configs the fleet page's table shows before "show the others".
const FLEET_CONFIGS_SHOWN: usize = 10;

fn html(
    fleet: &Fleet,
    sessions: &[SessionSummary],
    a: &Assumptions,
    inline: &[String],
    split: bool,
    charts: &[Figure],
) -> String {
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
    if sessions.len() > 1 {
        fleet_section(&mut s, fleet, sessions, split, charts);
    }
    if !split {
        for section in inline {
            s.push_str(section);
        }
    }
    assumptions_html(&mut s, a);
    s
}

/// The fleet's answer: headline cards, the reasoning, the tables.
fn fleet_section(
    s: &mut String,
    fleet: &Fleet,
    sessions: &[SessionSummary],
    split: bool,
    charts: &[Figure],
) {
    let ans = &fleet.answer;
    let sq = &ans.status_quo;
    let rec = &ans.recommended;
    s.push_str("<div class=\"cards\">\n");
    let h = &ans.headline;
    let month = fleet.per_month.as_ref().map(|m| &m.headline);
    let now_detail = now_detail(ans);
    let _ = writeln!(
        s,
        "<div class=\"card\"><div class=\"k\">What we pay now</div><div class=\"v\">{}</div><div class=\"d\">{}{}</div></div>",
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
            "<div class=\"card\"><div class=\"k\">Recommended</div><div class=\"v\">keep what you have</div><div class=\"d\">no policy of the grid is cheaper once recall risk is priced<br><code>{}</code></div></div>",
            config_html(&sq.config)
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
            config_html(&rec.config)
        );
        let _ = writeln!(
            s,
            "<div class=\"card\"><div class=\"k\">Saving</div><div class=\"v good\">{} ({:.1}%)</div><div class=\"d\">{}{} per 1,000 sessions</div></div>",
            dollars(h.saving_usd),
            h.saving_pct,
            month.map_or_else(String::new, |m| format!(
                "{} per month at this rate<br>",
                dollars(m.saving_usd)
            )),
            dollars(h.saving_usd / ans.sessions.max(1) as f64 * 1000.0)
        );
    }
    s.push_str("</div>\n");
    let _ = writeln!(
        s,
        "<p class=\"small\">{}</p>",
        html_escape(&basis_line(ans))
    );
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
    if !fleet.projects.is_empty() {
        s.push_str("<h2>Per project</h2>\n<p class=\"small\">A session counts in the project of its first trace, with all its traces.</p>\n<table><tr><th class=\"l\">project</th><th>sessions</th><th>traces</th><th>calls</th><th>recorded</th><th>status quo</th><th class=\"l\">its best policy</th><th>which saves</th></tr>\n");
        for p in &fleet.projects {
            let _ = writeln!(
                s,
                "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\"><code>{}</code></td><td>{:.1}%</td></tr>",
                html_escape(&p.project),
                thousands(p.answer.sessions as u64),
                thousands(p.answer.traces as u64),
                thousands(p.answer.calls as u64),
                p.answer.recorded_cost_usd.map_or_else(String::new, dollars),
                dollars(p.answer.status_quo.cost_usd),
                config_html(if p.answer.keep_status_quo {
                    KEEP
                } else {
                    &p.answer.recommended.config
                }),
                p.answer.recommended.savings_pct
            );
        }
        s.push_str("</table>\n");
    }
    if !fleet.days.is_empty() {
        s.push_str("<h2>Per day</h2>\n<p class=\"small\">Calls by the day they started (UTC); a session counts once on each day it ran.</p>\n<table><tr><th class=\"l\">day</th><th>sessions</th><th>calls</th><th>recorded</th><th>status quo</th><th>recommended</th></tr>\n");
        for d in &fleet.days {
            let _ = writeln!(
                s,
                "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
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
    let all = &fleet.per_session;
    let top = FLEET_TOP.min(all.len());
    let _ = writeln!(
        s,
        "<h2>{}</h2>\n<p class=\"small\">A session is a conversation with its continuations and subagents; its figures sum its traces, listed under its name.</p>",
        if top < all.len() {
            format!("The {top} most expensive sessions")
        } else {
            "Sessions, most expensive first".to_owned()
        }
    );
    sessions_table(s, fleet, &all[..top], split, "");
    if split && top < all.len() {
        let _ = writeln!(
            s,
            "<p><a href=\"sessions/index.html\">All {} sessions ({} traces)</a></p>",
            thousands(all.len() as u64),
            thousands(sessions.len() as u64)
        );
    }
}

/// Width of the charts drawn for a phone's page, so their labels stay
/// readable where the page is a third as wide.
const CHART_W_NARROW: u32 = 400;

/// A chart as a page shows it: drawn twice, for a desktop's width and a
/// phone's, the stylesheet showing the one that fits.
struct Figure {
    stem: String,
    wide: String,
    narrow: String,
}

impl Figure {
    fn new(stem: String, chart: &Chart, wide: String) -> Result<Self, ChartError> {
        let h = suggested_height(chart, CHART_W_NARROW);
        let narrow = render_svg(chart, CHART_W_NARROW, h)?;
        Ok(Figure { stem, wide, narrow })
    }
}

/// Inline charts; with `files`, each links to its SVG and PNG under
/// `root`.
fn figures(s: &mut String, charts: &[Figure], root: &str, files: bool) {
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

/// The config whose per-session savings the fleet page shows: the
/// recommendation, or when keeping the status quo is the answer, the
/// cheapest config with an effect (what a reader weighing the recall risk
/// would look at).
fn shown_pick(fleet: &Fleet) -> Option<&FleetFigures> {
    let a = &fleet.answer;
    if !a.keep_status_quo {
        return Some(&a.recommended);
    }
    fleet
        .configs
        .iter()
        .find(|c| !c.no_effect && c.cost_usd < a.status_quo.cost_usd)
}

/// The fleet's charts, in display order: (file stem, chart).
pub fn fleet_charts(fleet: &Fleet, sessions: &[SessionSummary]) -> Vec<(String, Chart)> {
    let a = &fleet.answer;
    let mut out = Vec::new();
    let position = |config: &str| fleet.configs.iter().position(|c| c.config == config);
    // The trade-off first: what each config costs against what it risks.
    // Configs that compact nothing are the status quo's point again.
    // The status quo is a point of its own where the grid does not hold it
    // (a status quo replaying the trace's own clears).
    let mut shown: Vec<&FleetFigures> = fleet.configs.iter().filter(|c| !c.no_effect).collect();
    if !shown.iter().any(|c| c.config == a.status_quo.config) {
        shown.push(&a.status_quo);
    }
    let at = |config: &str| shown.iter().position(|c| c.config == config);
    out.push((
        "fleet-pareto".to_owned(),
        Chart::ParetoFront {
            title: format!(
                "Cost against recall risk, each config over the {} sessions",
                thousands(a.sessions as u64)
            ),
            points: shown
                .iter()
                .map(|c| (c.config.clone(), c.recall_risk_turns as f64, c.cost_usd))
                .collect(),
            status_quo: at(&a.status_quo.config),
            recommended: (!a.keep_status_quo)
                .then(|| at(&a.recommended.config))
                .flatten(),
            notes: break_even_line(fleet)
                .map(|l| l.replace('`', ""))
                .into_iter()
                .collect(),
        },
    ));
    out.push((
        "fleet-configs".to_owned(),
        Chart::ConfigCosts {
            title: format!(
                "What the fleet would cost under each config ({} sessions, cheapest first)",
                thousands(a.sessions as u64)
            ),
            bars: fleet
                .configs
                .iter()
                .map(|c| (c.config.clone(), c.cost_usd))
                .collect(),
            status_quo: position(&a.status_quo.config),
            recommended: (!a.keep_status_quo)
                .then(|| position(&a.recommended.config))
                .flatten(),
        },
    ));
    if let Some(pick) = shown_pick(fleet) {
        // The savings the fleet's spread is computed from, so the chart's
        // median is the one the lines above it say.
        let savings_usd = crate::app::fleet::savings_by_session(sessions, Some(&pick.config));
        out.push((
            "fleet-savings".to_owned(),
            Chart::SavingsDistribution {
                title: format!(
                    "Saving per session under {} {} against each session's status quo",
                    if a.keep_status_quo {
                        "the cheapest config,"
                    } else {
                        "the recommendation,"
                    },
                    pick.config
                ),
                savings_usd,
            },
        ));
    }
    let dated: Vec<&crate::app::fleet::DayFigures> = fleet
        .days
        .iter()
        .filter(|d| d.day != crate::app::fleet::UNDATED)
        .collect();
    if !dated.is_empty() {
        let recorded = dated.iter().any(|d| d.recorded_cost_usd.is_some());
        let mut series = Vec::new();
        if recorded {
            series.push("recorded".to_owned());
        }
        series.push("status quo".to_owned());
        if !a.keep_status_quo {
            series.push("recommended".to_owned());
        }
        let days = dated
            .iter()
            .map(|d| {
                let mut v = Vec::new();
                if recorded {
                    v.push(d.recorded_cost_usd);
                }
                v.push(Some(d.status_quo_usd));
                if !a.keep_status_quo {
                    v.push(Some(d.recommended_usd));
                }
                (d.day.clone(), v)
            })
            .collect();
        out.push((
            "fleet-days".to_owned(),
            Chart::CostPerDay {
                title: "Cost per day (UTC, by the day each call started)".to_owned(),
                series,
                days,
            },
        ));
    }
    if !fleet.projects.is_empty() {
        out.push((
            "fleet-projects".to_owned(),
            Chart::ProjectCosts {
                against: if a.keep_status_quo {
                    "its own best config".to_owned()
                } else {
                    "recommended".to_owned()
                },
                title: if a.keep_status_quo {
                    "Per project: the status quo against each project's own best config".to_owned()
                } else {
                    "Per project: the status quo against the recommendation".to_owned()
                },
                projects: fleet
                    .projects
                    .iter()
                    .map(|p| {
                        let pick = if a.keep_status_quo {
                            p.answer.recommended.cost_usd
                        } else {
                            fleet
                                .per_session
                                .iter()
                                .filter(|s| {
                                    s.project
                                        .as_deref()
                                        .unwrap_or(crate::app::fleet::NO_PROJECT)
                                        == p.project
                                })
                                .map(|s| s.recommended_usd)
                                .sum()
                        };
                        (p.project.clone(), p.answer.status_quo.cost_usd, pick)
                    })
                    .collect(),
            },
        ));
    }
    out
}

/// Why the fleet's recommendation is what it is, in words.
fn reasoning(fleet: &Fleet) -> String {
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
    let sq_priced = if sq.recall_risk_turns > 0 {
        format!(
            "{} for the status quo ({} simulated + {} turn(s) quoting results it cleared itself, priced the same way)",
            dollars(sq.risk_adjusted_cost_usd),
            dollars(sq.cost_usd),
            thousands(sq.recall_risk_turns as u64)
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
                "the recommendation minimizes cost plus each recall a compacted result would have needed, priced as one more round trip. The cheapest policy, {}, costs {} ({:.1}% less than the status quo) but {} assistant turn(s) quoted text only its compacted results held; priced, it comes to {}, against {sq_priced}.{idle_note}",
                c.config,
                dollars(c.cost_usd),
                c.savings_pct,
                thousands(c.recall_risk_turns as u64),
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
        "{} has the lowest cost once recall risk is priced ({} + priced recalls = {}, against {sq_priced}). {} assistant turn(s) quoted text only its compacted results held, each priced as one more round trip; it compacts {} tool result(s). Per session the saving runs from {} (10th percentile) to {} (90th), median {}; {} session(s) cost more.{stability}{idle_note}",
        r.config,
        dollars(r.cost_usd),
        dollars(r.risk_adjusted_cost_usd),
        thousands(r.recall_risk_turns as u64),
        thousands(r.compacted_results as u64),
        dollars(ans.spread.p10_usd),
        dollars(ans.spread.p90_usd),
        dollars(ans.spread.median_usd),
        ans.spread.more_expensive
    )
}

/// The fleet's configs, cheapest first.
fn configs_table(s: &mut String, fleet: &Fleet) {
    let head = "<tr><th>#</th><th class=\"l\">config</th><th>cost</th><th>with recalls priced</th><th>saving</th><th>compacted</th><th>recall risk</th><th class=\"l\"></th></tr>\n";
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
            "<tr{}><td>{}</td><td class=\"l\"><code>{}</code></td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{}</td><td>{}</td><td class=\"m\">{}</td></tr>",
            if marks.is_empty() {
                ""
            } else {
                " class=\"mark\""
            },
            i + 1,
            config_html(&c.config),
            dollars(c.cost_usd),
            dollars(c.risk_adjusted_cost_usd),
            c.savings_pct,
            thousands(c.compacted_results as u64),
            thousands(c.recall_risk_turns as u64),
            marks.join(", ")
        );
    };
    s.push_str("<h2>Configurations</h2>\n<p class=\"small\">Summed over every session, cheapest first. Recall risk = assistant turns that quoted text only compacted results held; the recommendation prices each as one more round trip.</p>\n<table>\n");
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
fn sessions_table(
    s: &mut String,
    fleet: &Fleet,
    sessions: &[SessionFigures],
    split: bool,
    root: &str,
) {
    // Where the answer is to keep what runs, a session costs under it what
    // it costs now: those columns would repeat the status quo.
    let keep = fleet.answer.keep_status_quo;
    let _ = writeln!(
        s,
        "<table><tr><th class=\"l\">session</th><th>started</th><th>traces</th><th>calls</th><th>recorded</th><th>status quo</th>{}<th class=\"l\">its own best policy</th><th>which saves</th></tr>",
        if keep {
            ""
        } else {
            "<th>under the recommendation</th><th>saving</th>"
        }
    );
    for r in sessions {
        let started = r
            .started_ms
            .map_or_else(String::new, crate::app::usage::date_of);
        let traces: Vec<String> = r
            .traces
            .iter()
            .map(|t| {
                format!(
                    "<a href=\"{root}{}\" title=\"{}\">{}</a>",
                    trace_link(t, split),
                    html_escape(t),
                    html_escape(&trace_label(&r.session, t))
                )
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
            "<tr><td class=\"l s\">{}<br><span class=\"small\">{}</span></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>{under}<td class=\"l\"><code>{}</code></td><td>{:.1}%</td></tr>",
            html_escape(&session_title(r)),
            traces.join(" · "),
            started,
            r.traces.len(),
            thousands(r.calls as u64),
            r.recorded_cost_usd.map_or_else(String::new, dollars),
            dollars(r.status_quo_usd),
            config_html(&own_pick_text(r)),
            r.own_pick.savings_pct
        );
    }
    s.push_str("</table>\n");
}

/// A trace named within its session: the conversation itself, or what its
/// name adds to the session's (`part2`, `agent-a4ca…`), so a row of a dozen
/// subagents stays short; the link's target names it in full.
fn trace_label(session: &str, trace: &str) -> String {
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

/// `sessions/index.html` of a split report: every session, most expensive
/// first.
fn sessions_page(fleet: &Fleet, traces: usize) -> String {
    let mut s = String::new();
    page_head(&mut s, "Sessions — tracecost");
    let _ = writeln!(
        s,
        "<p class=\"sub\"><a href=\"../index.html\">← the fleet</a></p>\n<h1>All {} sessions, most expensive first</h1>\n<p class=\"small\">{} traces: a session is a conversation with its continuations and subagents, listed under its name.</p>",
        thousands(fleet.per_session.len() as u64),
        thousands(traces as u64)
    );
    // Links from this page are relative to `sessions/` itself.
    sessions_table(&mut s, fleet, &fleet.per_session, true, "../");
    s.push_str("</body>\n</html>\n");
    s
}

/// The sessions' figures, most expensive first, as CSV: one row per
/// session (its traces summed), the traces named in one field.
fn sessions_csv(fleet: &Fleet) -> String {
    let mut s = String::from(
        "session,project,started,traces,trace_names,calls,recorded_calls,recorded_cost_usd,status_quo_usd,recommended_usd,savings_usd,savings_pct,own_pick,own_pick_usd,own_pick_savings_pct\n",
    );
    for r in &fleet.per_session {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{:.6},{:.6},{:.6},{:.2},{},{:.6},{:.2}",
            csv_field(&r.session),
            csv_field(r.project.as_deref().unwrap_or("")),
            r.started_ms
                .map_or_else(String::new, crate::app::usage::date_of),
            r.traces.len(),
            csv_field(&r.traces.join(" ")),
            r.calls,
            r.recorded_calls,
            r.recorded_cost_usd
                .map_or_else(String::new, |v| format!("{v:.6}")),
            r.status_quo_usd,
            r.recommended_usd,
            r.savings_usd,
            r.savings_pct,
            csv_field(&own_pick_text(r)),
            r.own_pick.cost_usd,
            r.own_pick.savings_pct
        );
    }
    s
}

/// Above this many traces each trace's detail is its own page under
/// `sessions/`, so the fleet page stays small at any fleet size.
const INLINE_TRACES_MAX: usize = 3;

/// A config string for HTML: escaped, each part kept whole (a `-` or `=`
/// inside one is no place to break), with break opportunities after `+`
/// and `,` only, so a narrow column wraps it between its parts.
fn config_html(config: &str) -> String {
    config_breaks(&html_escape(config))
}

/// [`config_html`] of text already escaped (escaping adds no `+` or `,`).
fn config_breaks(escaped: &str) -> String {
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
fn code_spans(escaped: &str) -> String {
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

/// Where a trace's detail is: an anchor on the page, or its own page.
fn trace_link(trace: &str, split: bool) -> String {
    if split {
        format!("sessions/{}.html", slug(trace))
    } else {
        format!("#{}", slug(trace))
    }
}

/// A trace's own page in a split report, linking back to the fleet page
/// and the list of sessions.
fn trace_page(session: &str, r: &TraceReport, charts: &[Figure]) -> String {
    let mut s = String::new();
    page_head(&mut s, &format!("{} — tracecost", r.sweep.trace));
    s.push_str("<p class=\"sub\"><a href=\"../index.html\">← the fleet</a> · <a href=\"index.html\">all sessions</a></p>\n");
    trace_section(&mut s, session, r, charts, "../", false);
    s.push_str("</body>\n</html>\n");
    s
}

fn assumptions_html(s: &mut String, a: &Assumptions) {
    let _ = write!(
        s,
        "<h2>Assumptions</h2>\n<ul>\n<li><b>Prices:</b> {}{}.</li>\n<li><b>Tokens:</b> Claude's tokenizer is not public; counts come from {} and, where a trace recorded usage, are scaled by a per-trace factor fitted on the growth of the recorded prompt between calls (shown per trace). Framing tokens per message, block and tool, and the tool-use system prompt, come from the price table's per-model data.</li>\n<li><b>Cache:</b> simulated with the Anthropic prompt-caching rules: cumulative prefix over tools, system and messages; at most 4 breakpoints; writes only at breakpoints; a 20-position lookback; per-model minimum cacheable length; 5-minute and 1-hour TTLs from request start, refreshed by hits.</li>\n<li><b>Timing:</b> calls use their recorded start times; traces without them are treated as back-to-back, which favours caching (flagged per trace).</li>\n<li><b>Output tokens</b> are the recorded ones, the same for every policy.</li>\n<li><b>Recall risk</b> counts later assistant turns that quote an identifier, number or phrase which at that point existed only inside compacted tool results; the recommendation prices each such turn as one extra round trip.</li>\n<li><b>Grid:</b> {}.</li>\n</ul>\n</body>\n</html>\n",
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
/// (`""` on the fleet page, `"../"` on a trace page).
fn trace_section(
    s: &mut String,
    session: &str,
    r: &TraceReport,
    charts: &[Figure],
    root: &str,
    chart_files: bool,
) {
    let sw = &r.sweep;
    let h = headline(sw);
    let part = if session == sw.trace {
        String::new()
    } else {
        format!(
            "<p class=\"small\">A trace of session <code>{}</code> (a continuation or subagent of it): the figures below are this trace's alone.</p>\n",
            html_escape(session)
        )
    };
    let _ = write!(
        s,
        "<h2 id=\"{}\">{}</h2>\n{part}<p>{}</p>\n<div class=\"cards\">\n",
        slug(&sw.trace),
        html_escape(&sw.trace),
        html_escape(&sw.description)
    );
    if let Some(rec) = h.recorded {
        let t = &h.base.result.totals;
        let sim = t.cost_usd_recorded_calls.map_or_else(String::new, |sim| {
            format!(
                "<br>the status quo simulated on the same calls: {} ({:+.1}%)",
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
        "<div class=\"card\"><div class=\"k\">Status quo</div><div class=\"v\">{}</div><div class=\"d\">per run · {} per 1,000 runs<br><code>{}</code></div></div>",
        dollars(h.base.result.totals.cost_usd),
        dollars(h.base.result.totals.cost_usd * 1000.0),
        config_html(&h.base.result.config.to_string())
    );
    if sw.recommended == sw.baseline {
        let _ = write!(
            s,
            "<div class=\"card\"><div class=\"k\">Recommended</div><div class=\"v\">{KEEP}</div><div class=\"d\">no config of the grid is cheaper once recall risk is priced<br><code>{}</code></div></div>\n</div>\n",
            config_html(&h.rec.result.config.to_string())
        );
    } else {
        let _ = write!(
            s,
            "<div class=\"card\"><div class=\"k\">Recommended</div><div class=\"v good\">{}</div><div class=\"d\">saves {} ({:.1}%) per run · {} per 1,000 runs<br><code>{}</code></div></div>\n</div>\n",
            dollars(h.rec.result.totals.cost_usd),
            dollars(h.rec.savings_usd),
            h.rec.savings_pct,
            dollars(h.rec.savings_usd * 1000.0),
            config_html(&h.rec.result.config.to_string())
        );
    }
    let _ = write!(
        s,
        "<div class=\"rec\"><b>Recommendation:</b> use <code>{}</code>. Recall risk: {}.",
        config_html(&h.rec.result.config.to_string()),
        html_escape(&risk_text(h.rec))
    );
    if sw.cheapest != sw.recommended {
        let _ = write!(
            s,
            " The cheapest config, <code>{}</code> at {} ({:.1}% saved), has a higher recall risk ({} turn(s)).",
            config_html(&h.best.result.config.to_string()),
            dollars(h.best.result.totals.cost_usd),
            h.best.savings_pct,
            h.best.risk.turns
        );
    }
    let _ = writeln!(
        s,
        " Stability: {}.</div>",
        html_escape(&stability_verdict(StabilityBrief::of(&r.stability)))
    );
    let notes = notes(&h.base.result);
    if !notes.is_empty() {
        let _ = writeln!(
            s,
            "<p class=\"small\">{}</p>",
            html_escape(&notes.join(" "))
        );
    }
    figures(s, charts, root, chart_files);
    s.push_str("<h3>All configurations</h3>\n<p class=\"small\">Sorted by cost. Recall risk = assistant turns quoting text only compacted results held; * = on the Pareto front of cost against recall risk.</p>\n");
    sweep_table(s, sw);
    s.push_str("<h3>Per call: status quo and recommended</h3>\n<p class=\"small\">The last column says why a call read less than the call before it had cached. <code>tracecost fidelity PATH --explain NAME</code> sets each call beside what its record shows.</p>\n");
    calls_table(s, "status quo", h.base);
    if sw.recommended != sw.baseline {
        calls_table(s, "recommended", h.rec);
    }
}

fn notes(r: &ReplayResult) -> Vec<String> {
    let mut n = Vec::new();
    if let Some(c) = super::fmt::calibration_note(&r.calibration) {
        n.push(format!("{c}."));
    }
    if r.back_to_back {
        n.push("This trace has no start times: calls are treated as back-to-back.".into());
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

fn sweep_table(s: &mut String, sw: &TraceSweep) {
    let row = |s: &mut String, i: usize, r: &SweepRow| {
        let mark = super::sweep_view::marks(sw, i);
        let _ = writeln!(
            s,
            "<tr{}><td>{}</td><td class=\"l\"><code>{}</code></td><td>{}</td><td>{}</td><td>{:.1}%</td><td>{}</td><td>{}</td><td>{}</td><td>{}{}</td><td class=\"m\">{}</td></tr>",
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
            r.risk.turns,
            if r.pareto { " *" } else { "" },
            html_escape(&mark)
        );
    };
    let head = "<tr><th>#</th><th class=\"l\">config</th><th>cost</th><th>saving</th><th>%</th><th>uncached</th><th>cache write</th><th>cache read</th><th>recall risk</th><th class=\"l\"></th></tr>\n";
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

fn calls_table(s: &mut String, label: &str, r: &SweepRow) {
    let _ = write!(
        s,
        "<details{}><summary>{label}: <code>{}</code> — {} calls, {}</summary>\n<table>\n<tr><th>call</th><th>msgs</th><th>chars</th><th>uncached</th><th>write 5m</th><th>write 1h</th><th>read</th><th>output</th><th>cost</th><th>recorded input</th><th class=\"l\">compacted</th><th class=\"l\">why it wrote or missed</th></tr>\n",
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
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>",
            c.index,
            c.messages,
            thousands(c.chars),
            thousands(c.usage.input_tokens),
            thousands(c.usage.write_5m()),
            thousands(c.usage.write_1h()),
            thousands(c.usage.cache_read_input_tokens),
            thousands(c.usage.output_tokens),
            dollars(c.cost_usd),
            c.recorded
                .map(|u| thousands(u.total_input()))
                .unwrap_or_default(),
            html_escape(&match c.compacted.len() {
                0 => String::new(),
                n => format!("{n} result(s)"),
            }),
            html_escape(&c.cache_cause.map(|k| k.text()).unwrap_or_default())
        );
    }
    s.push_str("</table>\n</details>\n");
}

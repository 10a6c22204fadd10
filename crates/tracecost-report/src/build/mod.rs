//! The report: from sweep results to the files of `reports/<name>/`.
//!
//! Everything here is a pure function of its input: the same sweeps give
//! the same bytes (no clock, no random ids, no hash-map order), which is
//! what lets a committed example report be checked byte for byte.
//!
//! [`ReportWriter`] drives the writing, session by session. Beneath it the
//! story (`story`: the headline, the picks, the sentences, in no format)
//! and what the charts show (`chart_data`); above the story, one writer
//! per file kind: the HTML pages (`html`, `html_tables`, the
//! stylesheet), `summary.md` (`summary_md`), `results.json`
//! (`results_json`) and the CSV files (`csv`). The writers read the
//! story; they never call one another.

mod chart_data;
mod csv;
mod html;
mod html_tables;
mod results_json;
mod story;
mod summary_md;

pub use chart_data::{charts, fleet_charts};
pub use story::{fleet_lines, sweep_skipped_lines};

use std::collections::BTreeMap;
use std::io;

use serde::Serialize;

use super::charts::{ChartError, render_png, render_svg, suggested_height};

use csv::{results_csv_rows, sessions_csv};
use html::{Figure, html, sessions_page, trace_page, trace_section};
use html_tables::trace_link;
use results_json::{indented, json, json_pretty, json_trace};
use summary_md::summary_md;

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
use crate::app::fleet::{Fleet, SessionSummary};

const CHART_W: u32 = 900;

pub use crate::app::identity::slug;

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

/// Writes a report: [`ReportWriter::trace`] for each trace as soon as it
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
        let rows = results_csv_rows(session, &r.sweep, self.traces == 0)?;
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

/// Above this many traces each trace's detail is its own page under
/// `sessions/`, so the fleet page stays small at any fleet size.
const INLINE_TRACES_MAX: usize = 3;

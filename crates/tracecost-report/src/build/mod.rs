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
//! story; they never call one another. Beneath them all: where the files
//! go and why writing fails (`sink`), and what the numbers assume
//! (`assumptions`).

mod action;
mod assumptions;
mod bill;
mod calls_jsonl;
mod chart_data;
mod csv;
mod html;
mod html_tables;
mod results_json;
mod session_page;
mod sink;
mod story;
mod summary_md;

pub use assumptions::Assumptions;
pub use calls_jsonl::CALLS_JSONL;
pub use chart_data::{charts, fleet_charts};
pub use sink::{MemorySink, ReportError, ReportSink};
pub use story::{fleet_lines, sweep_skipped_lines};

use std::collections::BTreeMap;
use std::io;

use super::charts::{render_png, render_svg, suggested_height};

use csv::{results_csv_rows, sessions_csv};
use html::{
    FLEET_TOP, Figure, PerThousand, SectionPlace, html, sessions_page, trace_page, trace_section,
};
use html_tables::Detail;
use html_tables::trace_link;
use results_json::{indented, json, json_pretty, json_trace, write_json_indented};
use sink::CHUNK;
use summary_md::{SUMMARY_SECTIONS_MAX, SUMMARY_TOP, summary_md};

/// Version tag of `results.json`.
pub const RESULTS_FORMAT: &str = "tracecost.report/v1";

use tracecost_app::TraceReport;
use tracecost_app::fleet::{FleetAnswer, SessionSummary, Summaries};

const CHART_W: u32 = 900;

pub use tracecost_app::identity::slug;

/// Which traces of a report have a page of their own, with every config's
/// row and the per-call rows in `results.json` and `results.csv`: all of
/// them, or the most expensive (by the status quo's simulated cost), so
/// that a fleet's report stays small. Every trace's figures are in
/// `results.json`, `sessions.csv` and `sessions/index.html` either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionPages {
    /// Every trace.
    All,
    /// The N most expensive traces (ties: the first in the report's order).
    MostExpensive(usize),
}

impl Default for SessionPages {
    /// 25 pages: a report of ten thousand sessions stays a few tens of MB.
    fn default() -> Self {
        SessionPages::MostExpensive(25)
    }
}

/// Writes a report: [`ReportWriter::trace`] for each trace as soon as it
/// is replayed (its charts, its page, its entries in `results.json` and
/// `results.csv`), then [`ReportWriter::finish`] with the fleet's answer for
/// the fleet page and `summary.md`. Where only the most expensive traces
/// get a page ([`SessionPages`]), what is written of a trace waits for the
/// end: each trace's summary entry (small), and for the most expensive so
/// far their pages and rows (a bounded number of them).
pub struct ReportWriter<'s> {
    sink: &'s mut dyn ReportSink,
    assumptions: Assumptions,
    /// A report of one trace: its figures are also given per 1,000 runs.
    single: bool,
    /// Each session's detail on its own page (else inline on the fleet page).
    split: bool,
    /// The sessions' sections with their charts, when inline.
    inline: Sections,
    /// Traces written so far (to `results.json`, in the report's order).
    traces: usize,
    /// Traces handed over so far.
    arrived: usize,
    /// Where traces are handed over out of the report's order and every
    /// trace is written: what each adds to the files written in order (its
    /// inline section, its entry of `results.json`, its rows of
    /// `results.csv`), held until the traces before it are in.
    pending: BTreeMap<usize, Written>,
    files: BTreeMap<String, ()>,
    /// Pages for the most expensive traces only.
    bounded: Option<Bounded>,
    /// Every call of every trace written to [`CALLS_JSONL`].
    call_lines: bool,
}

/// What a report that pages only its most expensive traces holds until
/// its end.
struct Bounded {
    /// How many traces get a page.
    pages: usize,
    /// Every trace's entry of `results.json` without its rows, by its
    /// place in the report, each on one line: in a temporary file, as a
    /// fleet's thousands of them would grow memory.
    summaries: Lines,
    /// The most expensive traces so far, cheapest first (ties: the later
    /// first, so that it is the one to give way).
    kept: BTreeMap<(u64, std::cmp::Reverse<usize>), Kept>,
}

/// Lines held until the end of a report, by place: in a temporary file
/// (made when the first comes), or in memory for a report asked to use no
/// temporary file ([`ReportWriter::lines_in_memory`]).
enum Lines {
    InMemory(BTreeMap<usize, String>),
    /// The file is made when the first line comes.
    Spilled {
        places: usize,
        file: Option<tracecost_app::store::SpillFile>,
    },
}

impl Lines {
    fn put(&mut self, i: usize, line: String) -> Result<(), ReportError> {
        match self {
            Lines::InMemory(m) => {
                m.insert(i, line);
            }
            Lines::Spilled { places, file } => {
                let f = match file {
                    Some(f) => f,
                    None => file.insert(tracecost_app::store::SpillFile::new("results", *places)?),
                };
                f.put(i, line.as_bytes())?;
            }
        }
        Ok(())
    }

    /// Every line held, in place order.
    fn for_each(
        &mut self,
        mut f: impl FnMut(usize, &str) -> Result<(), ReportError>,
    ) -> Result<(), ReportError> {
        match self {
            Lines::InMemory(m) => {
                for (i, line) in m.iter() {
                    f(*i, line)?;
                }
            }
            Lines::Spilled { file: None, .. } => {}
            Lines::Spilled {
                file: Some(file), ..
            } => {
                file.seal()?;
                for i in 0..file.len() {
                    if !file.has(i)? {
                        continue;
                    }
                    let line = String::from_utf8(file.get(i)?).map_err(|e| {
                        tracecost_app::AppError::Internal(format!(
                            "a line of results.json reads back as: {e}"
                        ))
                    })?;
                    f(i, &line)?;
                }
            }
        }
        Ok(())
    }
}

/// The sessions' sections of the fleet page, in the report's order, held
/// until the page is written: in a temporary file (made when the first
/// comes), or in memory for a report asked to use no temporary file
/// ([`ReportWriter::lines_in_memory`]). A long trace's section is hundreds
/// of MB of per-call tables: held in memory, it was a report's peak.
enum Sections {
    InMemory(String),
    Spilled(Option<tracecost_app::store::SpilledText>),
}

impl Sections {
    /// Appends `text` to the sections.
    fn push(&mut self, text: &str) -> Result<(), ReportError> {
        match self {
            Sections::InMemory(s) => s.push_str(text),
            Sections::Spilled(file) => {
                let f = match file {
                    Some(f) => f,
                    None => file.insert(tracecost_app::store::SpilledText::new("sections")?),
                };
                f.push(text)?;
            }
        }
        Ok(())
    }

    /// Hands `f` every section, in order, a part at a time.
    fn read(self, mut f: impl FnMut(&[u8]) -> Result<(), ReportError>) -> Result<(), ReportError> {
        match self {
            Sections::InMemory(s) => f(s.as_bytes()),
            Sections::Spilled(None) => Ok(()),
            Sections::Spilled(Some(text)) => text.read_chunks(f),
        }
    }
}

/// What a trace adds to the files written in the report's order.
struct Written {
    section: Option<String>,
    entry: String,
    csv: String,
}

/// A trace with a page: its place, and what is written of it (not yet,
/// for a trace handed over from a cache until its page is).
struct Kept {
    index: usize,
    page: Option<PageParts>,
}

/// What is written of a trace with a page.
struct PageParts {
    trace: String,
    page: String,
    /// Its whole entry of `results.json`.
    entry: String,
    /// Its rows of `results.csv`, with the header.
    csv: String,
}

impl PageParts {
    fn of(
        session: &str,
        r: &TraceReport,
        svgs: &[Figure],
        baseline: Option<&str>,
    ) -> Result<Self, ReportError> {
        Ok(PageParts {
            trace: r.sweep.trace.clone(),
            page: trace_page(session, r, svgs, baseline),
            entry: json_pretty(&json_trace(session, r, true)),
            csv: results_csv_rows(session, &r.sweep, true)?,
        })
    }

    fn to_bytes(&self) -> Vec<u8> {
        tracecost_app::fleet_cache::frames([
            self.trace.as_bytes(),
            self.page.as_bytes(),
            self.entry.as_bytes(),
            self.csv.as_bytes(),
        ])
    }

    fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let parts = tracecost_app::fleet_cache::unframe(bytes)?;
        let text = |i: usize| String::from_utf8(parts.get(i)?.to_vec()).ok();
        (parts.len() == 4).then_some(())?;
        Some(PageParts {
            trace: text(0)?,
            page: text(1)?,
            entry: text(2)?,
            csv: text(3)?,
        })
    }
}

impl<'s> ReportWriter<'s> {
    /// A writer for a report of `traces` traces, `pages` of them with a
    /// page of their own.
    pub fn new(
        sink: &'s mut dyn ReportSink,
        assumptions: Assumptions,
        traces: usize,
        pages: SessionPages,
    ) -> Result<Self, ReportError> {
        let split = traces > INLINE_TRACES_MAX;
        let bounded = match pages {
            SessionPages::MostExpensive(n) if split && traces > n => Some(Bounded {
                pages: n,
                summaries: Lines::Spilled {
                    places: traces,
                    file: None,
                },
                kept: BTreeMap::new(),
            }),
            _ => None,
        };
        let mut w = ReportWriter {
            sink,
            single: traces == 1,
            split,
            inline: Sections::Spilled(None),
            traces: 0,
            arrived: 0,
            pending: BTreeMap::new(),
            files: BTreeMap::new(),
            assumptions,
            bounded,
            call_lines: false,
        };
        // Only a run that left calls out, or passed over part of its
        // inputs, says so: other reports' files are as they were.
        let member = |name: &str, listed: String, empty: bool| match empty {
            true => String::new(),
            false => format!("\n  \"{name}\": {},", indented(&listed, 2)),
        };
        let a = &w.assumptions;
        let unpriced = member("unpriced", json_pretty(&a.unpriced), a.unpriced.is_empty());
        let unread = member("unread", json_pretty(&a.unread), a.unread.is_empty());
        let head = format!(
            "{{\n  \"format\": {},\n  \"generator\": {},\n  \"assumptions\": {},{unpriced}{unread}\n  \"traces\": [",
            json(&RESULTS_FORMAT),
            json(&format!("tracecost {}", env!("CARGO_PKG_VERSION"))),
            indented(&json_pretty(&w.assumptions), 2)
        );
        w.append("results.json", head.as_bytes())?;
        Ok(w)
    }

    /// Also writes every call of every trace under every config to
    /// [`CALLS_JSONL`], as each trace is handed over (in that order; each
    /// line names its trace's place in the report). Before the first trace.
    pub fn with_call_lines(mut self) -> Self {
        self.call_lines = true;
        self
    }

    /// Holds what is written at the end (each trace's line of
    /// `results.json`) in memory rather than in a temporary file: for a
    /// report asked to use none. Before the first trace.
    pub fn lines_in_memory(mut self) -> Self {
        if let Some(b) = self.bounded.as_mut() {
            b.summaries = Lines::InMemory(BTreeMap::new());
        }
        self.inline = Sections::InMemory(String::new());
        self
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
    /// part of, with its continuations and subagents), the next in the
    /// report's order.
    pub fn trace(&mut self, session: &str, r: &TraceReport) -> Result<(), ReportError> {
        self.trace_at(self.arrived, session, r)
    }

    /// [`Self::trace`] of the trace at `index` in the report's order, which
    /// may come before those ahead of it (a streamed fleet finishes its
    /// traces in time order): the files are the same as if they had come
    /// in order. Each index once, every index below the report's count.
    pub fn trace_at(
        &mut self,
        index: usize,
        session: &str,
        r: &TraceReport,
    ) -> Result<(), ReportError> {
        self.trace_kept(index, session, r).map(drop)
    }

    /// [`Self::trace_at`], returning what a later report of the same trace
    /// needs to write the same without its report ([`Self::trace_cached`]):
    /// nothing unless only the most expensive traces get a page
    /// ([`Self::pages_only_for_some`]).
    pub fn trace_kept(
        &mut self,
        index: usize,
        session: &str,
        r: &TraceReport,
    ) -> Result<Vec<u8>, ReportError> {
        self.arrived += 1;
        if self.call_lines {
            let lines = calls_jsonl::call_lines(index, session, r);
            self.append(CALLS_JSONL, lines.as_bytes())?;
        }
        if self.bounded.is_some() {
            return self.trace_bounded(index, session, r);
        }
        let svgs = self.figures(r)?;
        self.write_trace(index, session, r, svgs)?;
        Ok(Vec::new())
    }

    /// Whether the report writes every config's calls (`calls.jsonl`,
    /// [`Self::with_call_lines`]); otherwise it reads per call only the
    /// rows of [`tracecost_replay::sweep::TraceSweep::written_rows`], and of
    /// the others their costs.
    pub fn writes_every_call(&self) -> bool {
        self.call_lines
    }

    /// Whether only some traces get a page (the most expensive): then a
    /// trace not replayed can be written from what [`Self::trace_kept`]
    /// returned for it, and the pages asked for later
    /// ([`Self::pages_wanted`]). Otherwise every trace needs its report,
    /// as do the per-call lines ([`Self::with_call_lines`]).
    pub fn pages_only_for_some(&self) -> bool {
        self.bounded.is_some() && !self.call_lines
    }

    /// Trace `index` as [`Self::trace_kept`] returned it in an earlier run
    /// (when [`Self::pages_only_for_some`]): its entry of `results.json`,
    /// and, if it is among the most expensive, its place among the pages,
    /// whose bytes come later ([`Self::page_cached`], [`Self::page_at`]).
    pub fn trace_cached(&mut self, index: usize, kept: &[u8]) -> Result<(), ReportError> {
        let bad = || {
            ReportError::Summaries(tracecost_app::AppError::Internal(format!(
                "what was kept of trace {} does not read back",
                index + 1
            )))
        };
        let parts = tracecost_app::fleet_cache::unframe(kept).ok_or_else(bad)?;
        let [line, cost] = parts[..] else {
            return Err(bad());
        };
        let line = std::str::from_utf8(line).map_err(|_| bad())?;
        let cost = f64::from_le_bytes(cost.try_into().map_err(|_| bad())?);
        if !self.pages_only_for_some() {
            return Err(bad());
        }
        self.arrived += 1;
        self.traces += 1;
        self.keep_bounded(index, line.to_owned(), cost, None)?;
        Ok(())
    }

    /// The traces among the most expensive whose page has not come.
    pub fn pages_wanted(&self) -> Vec<usize> {
        self.bounded.as_ref().map_or_else(Vec::new, |b| {
            b.kept
                .values()
                .filter(|k| k.page.is_none())
                .map(|k| k.index)
                .collect()
        })
    }

    /// Trace `index`'s page as [`Self::pages`] gave it in an earlier run;
    /// `false` when the bytes are not one.
    pub fn page_cached(&mut self, index: usize, bytes: &[u8]) -> bool {
        let Some(parts) = PageParts::from_bytes(bytes) else {
            return false;
        };
        self.set_page(index, parts)
    }

    /// Trace `index`'s page from its report (a trace handed over from a
    /// cache, replayed again for it).
    pub fn page_at(
        &mut self,
        index: usize,
        session: &str,
        r: &TraceReport,
    ) -> Result<(), ReportError> {
        let svgs = self.figures(r)?;
        let parts = PageParts::of(session, r, &svgs, self.assumptions.baseline.as_deref())?;
        self.set_page(index, parts);
        Ok(())
    }

    fn set_page(&mut self, index: usize, parts: PageParts) -> bool {
        let slot = self
            .bounded
            .as_mut()
            .and_then(|b| b.kept.values_mut().find(|k| k.index == index));
        match slot {
            Some(k) => {
                k.page = Some(parts);
                true
            }
            None => false,
        }
    }

    /// The pages the report writes, by trace, as bytes
    /// [`Self::page_cached`] takes back.
    pub fn pages(&self) -> Vec<(usize, Vec<u8>)> {
        self.bounded.as_ref().map_or_else(Vec::new, |b| {
            b.kept
                .values()
                .filter_map(|k| Some((k.index, k.page.as_ref()?.to_bytes())))
                .collect()
        })
    }

    /// A trace's charts, drawn for its page or section (and written as
    /// files when the report is small enough to keep them).
    fn figures(&mut self, r: &TraceReport) -> Result<Vec<Figure>, ReportError> {
        let mut svgs = Vec::new();
        for chart in charts(&r.sweep) {
            let (stem, chart) = chart?;
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
        Ok(svgs)
    }

    /// [`Self::trace`] where only the most expensive traces get a page: the
    /// trace's summary is kept, and its page and rows too while it is among
    /// the most expensive so far.
    fn trace_bounded(
        &mut self,
        index: usize,
        session: &str,
        r: &TraceReport,
    ) -> Result<Vec<u8>, ReportError> {
        self.traces += 1;
        // One line each: a fleet's thousands of summaries stay small.
        let line = json(&json_trace(session, r, false));
        let cost = story::headline(&r.sweep).base.result.totals.cost_usd;
        let kept = tracecost_app::fleet_cache::frames([line.as_bytes(), &cost.to_le_bytes()[..]]);
        if self.keep_bounded(index, line, cost, None)? {
            let svgs = self.figures(r)?;
            let parts = PageParts::of(session, r, &svgs, self.assumptions.baseline.as_deref())?;
            self.set_page(index, parts);
        }
        Ok(kept)
    }

    /// Keeps trace `index`'s line of `results.json`, and its place among
    /// the most expensive (with `page`) if it is one so far; returns
    /// whether it is.
    fn keep_bounded(
        &mut self,
        index: usize,
        line: String,
        cost: f64,
        page: Option<PageParts>,
    ) -> Result<bool, ReportError> {
        let Some(b) = self.bounded.as_mut() else {
            return Ok(false);
        };
        b.summaries.put(index, line)?;
        // Costs are not negative: their bits order as they do.
        let key = (cost.max(0.0).to_bits(), std::cmp::Reverse(index));
        let enters =
            b.kept.len() < b.pages || b.kept.first_key_value().is_some_and(|(k, _)| *k < key);
        if !enters {
            return Ok(false);
        }
        b.kept.insert(key, Kept { index, page });
        if b.kept.len() > b.pages {
            b.kept.pop_first();
        }
        Ok(true)
    }

    /// Writes the held traces of a bounded report: the kept ones' pages,
    /// every trace's entry of `results.json` (whole for the kept ones) and
    /// the kept ones' rows of `results.csv`, in the report's order; returns
    /// the names of the traces with a page.
    fn write_bounded(
        &mut self,
        mut b: Bounded,
    ) -> Result<std::collections::BTreeSet<String>, ReportError> {
        let mut kept: Vec<(usize, PageParts)> = b
            .kept
            .into_values()
            .map(|k| match k.page {
                Some(page) => Ok((k.index, page)),
                None => Err(ReportError::Summaries(tracecost_app::AppError::Internal(
                    format!("the page of trace {} never came", k.index + 1),
                ))),
            })
            .collect::<Result<_, _>>()?;
        kept.sort_by_key(|k| k.0);
        let mut by_index: BTreeMap<usize, &PageParts> = BTreeMap::new();
        for (index, k) in &kept {
            by_index.insert(*index, k);
            self.put(&trace_link(&k.trace, true), k.page.as_bytes())?;
        }
        // In the report's order, every trace that came (the rest is the
        // error `finish` gives).
        let mut n = 0;
        b.summaries.for_each(|i, summary| {
            let entry = by_index.get(&i).map_or(summary, |k| k.entry.as_str());
            let sep = if n == 0 { "\n" } else { ",\n" };
            n += 1;
            self.append(
                "results.json",
                format!("{sep}    {}", indented(entry, 4)).as_bytes(),
            )
        })?;
        for (n, (_, k)) in kept.iter().enumerate() {
            // The header once, before the first trace's rows.
            let rows = match n {
                0 => k.csv.as_str(),
                _ => k.csv.split_once('\n').map_or("", |(_, rest)| rest),
            };
            self.append("results.csv", rows.as_bytes())?;
        }
        Ok(kept.into_iter().map(|(_, k)| k.trace).collect())
    }

    fn write_trace(
        &mut self,
        index: usize,
        session: &str,
        r: &TraceReport,
        svgs: Vec<Figure>,
    ) -> Result<(), ReportError> {
        let files = !self.split;
        // Next in the report's order: its section goes to the temporary
        // file as it is written (held in memory, it is built whole, the
        // reference the parts are checked against).
        let in_order = index == self.traces;
        let in_parts = in_order && matches!(self.inline, Sections::Spilled(_));
        let section = if self.split {
            let page = trace_page(session, r, &svgs, self.assumptions.baseline.as_deref());
            self.put(&trace_link(&r.sweep.trace, true), page.as_bytes())?;
            None
        } else {
            let mut section = String::new();
            let mut failed = None;
            let inline = &mut self.inline;
            let mut out = |text: &mut String| {
                if in_parts && failed.is_none() {
                    failed = inline.push(text).err();
                    text.clear();
                }
            };
            trace_section(
                &mut section,
                session,
                r,
                &svgs,
                SectionPlace {
                    root: "",
                    chart_files: files,
                    baseline: self.assumptions.baseline.as_deref(),
                    per_thousand: if self.single {
                        PerThousand::Yes
                    } else {
                        PerThousand::No
                    },
                    own_page: false,
                },
                &mut out,
            );
            if let Some(e) = failed {
                return Err(e);
            }
            Some(section)
        };
        let csv = results_csv_rows(session, &r.sweep, index == 0)?;
        if in_order {
            // Next in the report's order: its entry of `results.json` goes
            // straight to the file. The entry holds every call under every
            // config shown, so a long trace's text runs to hundreds of MB,
            // and holding it (then indenting a copy) was most of what
            // writing a report added to the sweep's memory.
            if let Some(section) = section {
                self.inline.push(&section)?;
            }
            let sep = if self.traces == 0 {
                "\n    "
            } else {
                ",\n    "
            };
            self.append("results.json", sep.as_bytes())?;
            let mut json = Appender::new(self, "results.json");
            write_json_indented(&json_trace(session, r, true), 4, &mut json)?;
            json.finish()?;
            self.append("results.csv", csv.as_bytes())?;
            self.traces += 1;
        } else {
            let written = Written {
                section,
                entry: json_pretty(&json_trace(session, r, true)),
                csv,
            };
            self.pending.insert(index, written);
        }
        // What was waiting for the traces written so far.
        while let Some(w) = self.pending.remove(&self.traces) {
            if let Some(section) = w.section {
                self.inline.push(&section)?;
            }
            let sep = if self.traces == 0 { "\n" } else { ",\n" };
            self.append(
                "results.json",
                format!("{sep}    {}", indented(&w.entry, 4)).as_bytes(),
            )?;
            self.append("results.csv", w.csv.as_bytes())?;
            self.traces += 1;
        }
        Ok(())
    }

    /// Writes the fleet page, `summary.md` and the end of `results.json`;
    /// returns the names of every file written, in order.
    pub fn finish(
        mut self,
        fleet: &FleetAnswer,
        sessions: &Summaries,
    ) -> Result<Vec<String>, ReportError> {
        // A trace handed over ahead of one that never came.
        if let Some(first) = self.pending.keys().next() {
            return Err(ReportError::Write(io::Error::other(format!(
                "trace {} of the report came before trace {}, which never did",
                first + 1,
                self.traces + 1
            ))));
        }
        let paged = match self.bounded.take() {
            Some(b) => Some(self.write_bounded(b)?),
            None => None,
        };
        let detail = Detail {
            split: self.split,
            paged: paged.as_ref(),
        };
        // The fleet's answer lists every session: written as it is
        // serialized, never held whole.
        let head = format!(
            "{}  ],\n  \"fleet\": ",
            if self.traces == 0 { "" } else { "\n" }
        );
        self.append("results.json", head.as_bytes())?;
        let mut json = Appender::new(&mut self, "results.json");
        write_json_indented(fleet, 2, &mut json)?;
        json.finish()?;
        self.append("results.json", b"\n}\n")?;
        // The fleet's charts: files beside the page, and inline in it.
        let mut fleet_svgs = Vec::new();
        if sessions.len() > 1 {
            for (stem, chart) in fleet_charts(fleet)? {
                let h = suggested_height(&chart, CHART_W);
                let svg = render_svg(&chart, CHART_W, h)?;
                let png = render_png(&chart, CHART_W, h)?;
                self.put(&format!("charts/{stem}.svg"), svg.as_bytes())?;
                self.put(&format!("charts/{stem}.png"), &png)?;
                fleet_svgs.push(Figure::new(stem, &chart, svg)?);
            }
        }
        // The most expensive sessions, named on the fleet's page and in
        // summary.md; the others are read as their files are written.
        let top = fleet.per_session.top(FLEET_TOP.max(SUMMARY_TOP))?;
        let (head, tail) = html(
            fleet,
            &top,
            sessions.len(),
            &self.assumptions,
            detail,
            &fleet_svgs,
        );
        self.put("index.html", head.as_bytes())?;
        // The sections appended a part at a time: the page is never one
        // text.
        let sections = std::mem::replace(&mut self.inline, Sections::InMemory(String::new()));
        if !detail.split {
            sections.read(|part| self.append("index.html", part))?;
        }
        self.append("index.html", tail.as_bytes())?;
        if self.split {
            // Each session of several traces gets its page, written now
            // that the fleet has summed it.
            for r in fleet.per_session.iter() {
                let r = r?;
                if html_tables::has_whole_page(&r, detail) {
                    let page = session_page::whole_session_page(fleet, &r, detail);
                    self.put(&html_tables::whole_link(&r.session), page.as_bytes())?;
                }
            }
            self.put("sessions/index.html", b"")?;
            sessions_page(fleet, sessions.len(), detail, &mut |text| {
                self.append("sessions/index.html", text.as_bytes())?;
                text.clear();
                Ok(())
            })?;
        }
        // A few traces get a section each in summary.md; a fleet's are
        // named in its table of the most expensive.
        let sections = if sessions.len() <= SUMMARY_SECTIONS_MAX {
            (0..sessions.len())
                .map(|i| sessions.get(i))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        let sections: Vec<&SessionSummary> = sections.iter().map(|s| &**s).collect();
        let summary = summary_md(
            fleet,
            &top,
            sessions.len(),
            &sections,
            &self.assumptions,
            paged.as_ref().map(|p| p.len()),
        );
        self.put("summary.md", summary.as_bytes())?;
        self.put("sessions.csv", b"")?;
        sessions_csv(fleet, &mut |text| {
            self.append("sessions.csv", text.as_bytes())?;
            text.clear();
            Ok(())
        })?;
        Ok(self.files.into_keys().collect())
    }
}

/// An `io::Write` that appends to one file of the report a chunk at a
/// time ([`CHUNK`]); [`Appender::finish`] appends the rest.
struct Appender<'w, 's> {
    writer: &'w mut ReportWriter<'s>,
    rel: &'static str,
    buf: Vec<u8>,
}

impl<'w, 's> Appender<'w, 's> {
    fn new(writer: &'w mut ReportWriter<'s>, rel: &'static str) -> Self {
        Appender {
            writer,
            rel,
            buf: Vec::with_capacity(CHUNK),
        }
    }

    fn finish(mut self) -> Result<(), ReportError> {
        self.writer.append(self.rel, &self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

impl io::Write for Appender<'_, '_> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        if self.buf.len() >= CHUNK {
            self.writer.sink.append(self.rel, &self.buf)?;
            self.buf.clear();
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Above this many traces each trace's detail is its own page under
/// `sessions/`, so the fleet page stays small at any fleet size.
const INLINE_TRACES_MAX: usize = 3;

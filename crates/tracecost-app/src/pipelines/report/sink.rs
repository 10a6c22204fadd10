//! Where a report hands each session: the trait the report writer
//! implements.

use crate::AppError;
use crate::results::TraceReport;
use tracecost_trace::Trace;

/// Where [`report_with`](super::report_with) hands each session: the report being written.
/// What the report writes of a trace it gives back as bytes, which a
/// later run with the same cache hands over instead of the trace's report
/// ([`SessionSink::cached`]); the pages of the traces a report pages are
/// kept the same way ([`SessionSink::pages`]).
pub trait SessionSink {
    /// Trace `index` of the plan (whole) and its report: writes what
    /// belongs to it, and returns what a later run needs to write the
    /// same without the report.
    fn replayed(
        &mut self,
        index: usize,
        trace: &Trace,
        report: &TraceReport,
    ) -> Result<Vec<u8>, AppError>;
    /// Trace `index` (its outline) not replayed: `kept` is what
    /// [`SessionSink::replayed`] returned for it in an earlier run.
    fn cached(
        &mut self,
        index: usize,
        trace: &crate::outline::TraceOutline,
        kept: &[u8],
    ) -> Result<(), AppError>;
    /// The traces handed over by [`SessionSink::cached`] whose page the
    /// report now needs.
    fn pages_wanted(&self) -> Vec<usize>;
    /// Trace `index`'s page as [`SessionSink::pages`] gave it in an earlier
    /// run; `false` when these bytes are not one.
    fn cached_page(&mut self, index: usize, page: &[u8]) -> Result<bool, AppError>;
    /// Trace `index`, replayed again for its page.
    fn page(&mut self, index: usize, trace: &Trace, report: &TraceReport) -> Result<(), AppError>;
    /// The pages the report writes, by trace, as bytes a later run can
    /// give [`SessionSink::cached_page`].
    fn pages(&self) -> Vec<(usize, Vec<u8>)>;
    /// Whether the sink reads every config's per-call rows (a file of every
    /// call). Otherwise a trace's sweep keeps them only for the rows a
    /// report writes call by call
    /// ([`tracecost_replay::sweep::TraceSweep::written_rows`]), each other
    /// config's calls by their costs alone.
    fn every_call_row(&self) -> bool {
        true
    }
    /// Every trace has been replayed and handed over; the fleet's answer is
    /// summed next. What the replay held is freed by now: a sink that can
    /// hand memory back to the system does it here, before the answer
    /// needs its own.
    fn replay_finished(&mut self) {}
}

//! A report's replay of the traces that share a cache: swept a few groups
//! at a time in memory, or an account streamed from the plan's store.

use rayon::prelude::*;

use crate::AppError;
use crate::plan::SweepPlan;
use crate::results::TraceReport;
use tracecost_cost::tokens::TokenMemo;
use tracecost_replay::PreparedTrace;
use tracecost_trace::Trace;

use super::super::shared::{groups_at_once, prepare, stability_of};

/// Replays the traces of `groups` (each a set of the plan's traces sharing
/// a cache, in the plan's order), checks each trace's recommended config
/// for stability, and hands each trace's report to `emit` with its index
/// in the plan. When the plan's traces are stored, a group of several is
/// streamed ([`stream_account`]); the others are swept a few at a time,
/// side by side, holding only their traces and rows.
pub(super) fn replay_groups(
    sp: &SweepPlan,
    memo: &TokenMemo,
    mut groups: Vec<Vec<usize>>,
    rows: RowsKept,
    emit: &mut dyn FnMut(usize, &Trace, TraceReport) -> Result<(), AppError>,
) -> Result<(), AppError> {
    if sp.is_stored() {
        // An account's traces are streamed, the account's others side by
        // side; traces alone are taken a few at a time below.
        let (accounts, alone) = groups.into_iter().partition(|g| g.len() > 1);
        groups = alone;
        for group in &accounts {
            stream_account(sp, memo, group, rows, &mut |i, t, report| {
                emit(i, t, report)
            })?;
        }
    }
    // The other groups (all of them, in memory) a few at a time, side by
    // side, each swept at once.
    for batch in groups.chunks(groups_at_once()) {
        let reports = batch
            .par_iter()
            .map(|group| {
                with_account_sweep(sp, memo, group, rows, &mut |sweep| {
                    report_group(sp, memo, group, sweep)
                })
            })
            .collect::<Vec<_>>();
        for reports in reports {
            for (i, t, report) in reports? {
                emit(i, &t, report)?;
            }
        }
    }
    Ok(())
}

/// Streams the traces `group` names (indices into the plan's traces, one
/// account's, read from the plan's store): each is read when the calls
/// before its first have been replayed, and its report handed to `emit`
/// (with its index in the plan) as soon as every config has replayed it.
fn stream_account(
    sp: &SweepPlan,
    memo: &TokenMemo,
    group: &[usize],
    rows: RowsKept,
    emit: &mut dyn FnMut(usize, &Trace, TraceReport) -> Result<(), AppError>,
) -> Result<(), AppError> {
    with_account_sweep(sp, memo, group, rows, &mut |sweep| {
        stream_with(sp, memo, group, sweep, emit)
    })
}

/// Runs `f` with the sweep of the traces `group` names (sharing a cache):
/// the configs that apply to them and their request shapes.
fn with_account_sweep<R>(
    sp: &SweepPlan,
    memo: &TokenMemo,
    group: &[usize],
    rows: RowsKept,
    f: &mut dyn FnMut(&mut tracecost_replay::sweep::AccountSweep<'_>) -> Result<R, AppError>,
) -> Result<R, AppError> {
    // An account that is the whole plan (a generated fleet is one) reads
    // the plan's own: a copy is about 16 bytes a trace, held to the end.
    let whole = group.iter().copied().eq(0..sp.applicability.traces());
    let own;
    let applicability = if whole {
        &sp.applicability
    } else {
        own = sp.applicability.subset(group);
        &own
    };
    let shapes = group
        .iter()
        .map(|&i| sp.shape(i))
        .collect::<Result<Vec<_>, _>>()?;
    let mut sweep = tracecost_replay::sweep::AccountSweep::new(
        applicability,
        &shapes,
        sp.cost.replay_context(memo, None),
        sp.recall_cost_usd,
    )?;
    if rows == RowsKept::Written {
        sweep = sweep.written_rows_only();
        // Where the traces are read from a store, so are the costs kept
        // (in memory, `--in-memory` needs no temporary file).
        if sp.is_stored() {
            sweep = sweep.costs_on_disk();
        }
    }
    // The sweep has planned with them: not held while it replays.
    drop(shapes);
    f(&mut sweep)
}

/// Which per-call rows a report's sweeps keep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RowsKept {
    /// Every config's.
    All,
    /// Those of the rows the report writes call by call
    /// ([`tracecost_replay::sweep::AccountSweep::written_rows_only`]).
    Written,
}

impl RowsKept {
    /// What `sink` reads.
    pub(super) fn of(sink: &dyn super::SessionSink) -> Self {
        if sink.every_call_row() {
            RowsKept::All
        } else {
            RowsKept::Written
        }
    }
}

/// [`stream_account`] with its sweep made.
fn stream_with(
    sp: &SweepPlan,
    memo: &TokenMemo,
    group: &[usize],
    sweep: &mut tracecost_replay::sweep::AccountSweep<'_>,
    emit: &mut dyn FnMut(usize, &Trace, TraceReport) -> Result<(), AppError>,
) -> Result<(), AppError> {
    let first_starts: Vec<u64> = group
        .iter()
        .map(|&i| sp.head(i).first_start_ms.unwrap_or(0))
        .collect();
    let load = |k: usize| -> Result<Trace, AppError> { Ok(sp.trace(group[k])?.into_owned()) };
    let prepared: &(dyn for<'t> Fn(&'t Trace) -> Result<PreparedTrace<'t>, AppError> + Sync) =
        &|t| prepare(t, &sp.cost, memo, sp.priced_as());
    let source = tracecost_replay::stream::StreamSource {
        first_starts: &first_starts,
        load: &load,
        prepare: prepared,
        // The report counts a trace's calls once every config is done.
        progress: &|| (),
        read_ahead: groups_at_once() * 2,
    };
    sweep.stream(&source, &mut |done| {
        // The stability of each one's recommendation, side by side.
        let reports = done
            .into_par_iter()
            .map(|(k, t, sweep)| -> Result<_, AppError> {
                let recommended = &sweep.rows[sweep.recommended].result.config;
                let stability = stability_of(&t, recommended, memo, None)?;
                Ok((k, t, TraceReport { sweep, stability }))
            })
            .collect::<Vec<_>>();
        for r in reports {
            let (k, t, report) = r?;
            emit(group[k], &t, report)?;
        }
        Ok(())
    })
}

/// The traces `group` names (indices into the plan's traces, sharing a
/// cache) swept at once, and each trace's recommended config checked for
/// stability: per trace, its place in the plan, the trace and its report.
fn report_group<'p>(
    sp: &'p SweepPlan,
    memo: &TokenMemo,
    group: &[usize],
    sweep: &mut tracecost_replay::sweep::AccountSweep<'_>,
) -> Result<Vec<(usize, std::borrow::Cow<'p, Trace>, TraceReport)>, AppError> {
    let segment: Vec<usize> = (0..group.len()).collect();
    let segment = &segment[..];
    let traces = segment
        .par_iter()
        .map(|&k| sp.trace(group[k]))
        .collect::<Result<Vec<_>, _>>()?;
    // A segment's traces are counted side by side (each counts its own
    // texts in parallel too, but a short session has few).
    let prepared = traces
        .par_iter()
        .map(|t| prepare(t, &sp.cost, memo, sp.priced_as()))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&PreparedTrace<'_>> = prepared.iter().collect();
    // The report counts a trace's calls once every config is done.
    let sweeps = sweep.segment(segment, &refs, &|| ())?;
    drop(prepared);
    let reports = traces
        .par_iter()
        .zip(sweeps)
        .map(|(t, sweep)| -> Result<TraceReport, AppError> {
            let recommended = &sweep.rows[sweep.recommended].result.config;
            let stability = stability_of(t, recommended, memo, None)?;
            Ok(TraceReport { sweep, stability })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(segment
        .iter()
        .zip(traces)
        .zip(reports)
        .map(|((&k, t), r)| (group[k], t, r))
        .collect())
}

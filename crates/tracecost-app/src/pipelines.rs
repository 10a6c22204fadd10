//! The pipelines: each takes a plan and returns typed results.

use rayon::prelude::*;
use std::collections::HashMap;
use std::io::Write;

use super::AppError;
use super::fleet::{SessionSummary, Summaries};
use super::plan::{
    CostPlan, ImportPlan, RecallPlan, ReplayPlan, ReportPlan, StabilityPlan, SweepPlan, UsagePlan,
    calibration_model,
};
use super::results::{ReplayOutput, Savings, TraceReport};
use crate::cost::tokens::TokenMemo;
use crate::engine::handle::{Handle, one_line};
use crate::engine::ledger::{
    DurableLedger, InMemoryLedger, LedgerError, ToolResultLedger, record_result,
};
use crate::engine::message::{BlockKind, ContentBlock, Message};
use crate::policy::{BlockTokens, Compaction, CompactionRun, Config};
use crate::progress::{Progress, Unit};
use crate::replay::stability::{RunSource, StabilityReport};
use crate::replay::sweep::TraceSweep;
use crate::replay::{PreparedTrace, ReplayContext, ReplayResult, count_block};
use crate::trace::import::ImportReport;
use crate::trace::{Trace, TraceWriter};

pub use super::check::{CheckOutcome, check};

fn prepare<'t>(
    trace: &'t Trace,
    cost: &CostPlan,
    memo: &TokenMemo,
    priced_as: Option<&str>,
) -> Result<PreparedTrace<'t>, AppError> {
    let price = calibration_model(&cost.pricing, trace, priced_as)?;
    Ok(PreparedTrace::new(
        trace,
        memo,
        price,
        cost.calibration == super::Calibration::Auto,
    ))
}

/// Replays each run of the plan; a config with compaction is also replayed
/// without it, for the saving.
pub fn replay(plan: &ReplayPlan, progress: &dyn Progress) -> Result<Vec<ReplayOutput>, AppError> {
    let memo = plan.cost.memo();
    let ctx = plan.cost.replay_context(&memo, Some(progress));
    // One step per call replayed, the reference run without compaction
    // included.
    let runs = |c: &Config| {
        if c.compaction == Compaction::Off {
            1
        } else {
            2
        }
    };
    let steps: usize = plan
        .runs
        .iter()
        .map(|r| r.trace.calls.len() * runs(&r.config))
        .sum();
    progress.start("replay", steps as u64, Unit::Items);
    let mut outputs: Vec<Option<ReplayOutput>> = plan.runs.iter().map(|_| None).collect();
    for group in plan
        .cost
        .cache_scope
        .groups(plan.runs.iter().map(|r| &r.trace))
    {
        // Runs of one account under one config meet one cache.
        let mut by_config: Vec<(&Config, Vec<usize>)> = Vec::new();
        for i in group {
            let c = &plan.runs[i].config;
            match by_config.iter_mut().find(|(k, _)| *k == c) {
                Some((_, v)) => v.push(i),
                None => by_config.push((c, vec![i])),
            }
        }
        for (config, runs) in by_config {
            let prepared = runs
                .iter()
                .map(|&i| {
                    prepare(
                        &plan.runs[i].trace,
                        &plan.cost,
                        &memo,
                        config.model.as_deref(),
                    )
                })
                .collect::<Result<Vec<_>, _>>()?;
            let refs: Vec<&PreparedTrace<'_>> = prepared.iter().collect();
            let results = replay_shared(&refs, config, ctx)?;
            // The same runs without compaction, for the saving.
            let references = match config.compaction {
                Compaction::Off => None,
                _ => {
                    let off = Config {
                        compaction: Compaction::Off,
                        ..config.clone()
                    };
                    Some(replay_shared(&refs, &off, ctx)?)
                }
            };
            for (k, (i, result)) in runs.iter().zip(results).enumerate() {
                let reference = references.as_ref().map(|r| &r[k].totals);
                let savings = Savings::of(&result.totals, reference);
                outputs[*i] = Some(ReplayOutput { result, savings });
            }
        }
    }
    Ok(outputs.into_iter().flatten().collect())
}

/// Replays `config` over traces that share one cache (one trace alone
/// replays as it always does).
fn replay_shared(
    prepared: &[&PreparedTrace<'_>],
    config: &Config,
    ctx: ReplayContext<'_>,
) -> Result<Vec<ReplayResult>, AppError> {
    if let [one] = prepared {
        return Ok(vec![crate::replay::replay(one, config, ctx)?]);
    }
    let per_trace =
        crate::replay::replay_group_shared(prepared, std::slice::from_ref(config), ctx)?;
    Ok(per_trace.into_iter().flatten().collect())
}

/// How many groups of traces sharing a cache are swept side by side: enough
/// to keep every core busy when each group is small (a trace alone, whose
/// configs may all send the same requests), few enough that only their
/// rows are in memory.
fn groups_at_once() -> usize {
    rayon::current_num_threads() * 2
}

/// Sweeps every config of the plan over every trace.
pub fn sweep(plan: &SweepPlan, progress: &dyn Progress) -> Result<Vec<TraceSweep>, AppError> {
    let memo = plan.cost.memo();
    progress.start(
        "sweep",
        (plan.configs().len() * plan.traces().len()) as u64,
        Unit::Items,
    );
    let mut out: Vec<Option<TraceSweep>> = plan.traces().iter().map(|_| None).collect();
    let groups = plan.cost.cache_scope.groups_by(
        plan.traces()
            .iter()
            .map(|t| (t.account.as_deref(), t.head.timestamps)),
    );
    for batch in groups.chunks(groups_at_once()) {
        let swept = batch
            .par_iter()
            .map(|group| sweep_group(group, plan, &memo, progress))
            .collect::<Vec<_>>();
        for (group, sweeps) in batch.iter().zip(swept) {
            for (&i, s) in group.iter().zip(sweeps?) {
                out[i] = Some(s);
            }
        }
    }
    Ok(out.into_iter().flatten().collect())
}

/// Sweeps every config of the plan over the traces `group` names (indices
/// into the plan's traces), which share one simulated cache.
fn sweep_group(
    group: &[usize],
    plan: &SweepPlan,
    memo: &TokenMemo,
    progress: &dyn Progress,
) -> Result<Vec<TraceSweep>, AppError> {
    let traces = group
        .iter()
        .map(|&i| plan.trace(i))
        .collect::<Result<Vec<_>, _>>()?;
    // An account's traces are counted side by side (each counts its own
    // texts in parallel too, but a short session has few).
    let prepared = traces
        .par_iter()
        .map(|t| prepare(t, &plan.cost, memo, plan.priced_as()))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&PreparedTrace<'_>> = prepared.iter().collect();
    // A grid applies per trace: a config that cannot apply to a trace (the
    // plan made sure it applies to some other) is skipped for it, as the
    // plan's checks found.
    Ok(crate::replay::sweep::sweep_checked(
        &refs,
        &plan.applicability.subset(group),
        plan.cost.replay_context(memo, None),
        plan.recall_cost_usd,
        &|| progress.advance(1),
    )?)
}

/// What `report` produced: the fleet's answer, and what it keeps of each
/// session (its figures, not its per-call rows).
#[derive(Debug)]
pub struct ReportOutcome {
    /// The fleet's answer.
    pub fleet: super::fleet::Fleet,
    /// Per trace, in the plan's order: in memory, or (a stored plan's)
    /// spilled to a temporary file.
    pub sessions: Summaries,
}

/// Sweeps the plan's traces, checks the stability of each trace's
/// recommended config, and hands each session's full report to
/// `on_session` with its place in the plan (to write its pages) before
/// keeping only its summary: the per-call rows of a fleet are never all in
/// memory at once. Traces that share a cache (an account's) are swept
/// together; when the plan's traces are stored ([`SweepPlan::from_grid_stored`])
/// they are streamed: each trace is read back when the calls before its
/// first have been replayed and let go when every config has replayed it,
/// so that memory holds only the traces that overlap in time. Sessions
/// may then be handed over out of the plan's order; the outcome is the
/// same as for the plan in memory.
pub fn report(
    plan: &ReportPlan,
    progress: &dyn Progress,
    on_session: &mut dyn FnMut(usize, &Trace, &TraceReport) -> Result<(), AppError>,
) -> Result<ReportOutcome, AppError> {
    let sp = &plan.sweep;
    let memo = sp.cost.memo();
    // One bar for the fleet, in traces and calls: each trace's calls are
    // counted when every config has replayed it (and its page is written).
    let calls: u64 = (0..sp.traces().len())
        .map(|i| sp.head(i).calls as u64)
        .sum();
    let whole_fleet = Unit::Calls {
        traces: sp.traces().len() as u64,
    };
    progress.start(
        &format!("report: replaying under {} configs", sp.configs().len()),
        calls,
        whole_fleet,
    );
    let done = |t: &Trace| {
        progress.advance(t.calls.len() as u64);
        progress.traces_done(1);
    };
    // A stored plan's summaries go to disk too: a fleet's answer is summed
    // in passes over them, and memory does not grow with the fleet.
    let mut sessions = if sp.is_stored() {
        Summaries::spilled(sp.traces().len())?
    } else {
        Summaries::in_memory(sp.traces().len())
    };
    // A few groups of traces sharing a cache at a time, side by side: only
    // their traces (in memory, the plan's) and per-call rows are held.
    let mut groups = sp.cost.cache_scope.groups_by(
        sp.traces()
            .iter()
            .enumerate()
            .map(|(i, t)| (t.account.as_deref(), sp.head(i).timestamps)),
    );
    if sp.is_stored() {
        // An account's traces are streamed, the account's others side by
        // side; traces alone are taken a few at a time below.
        let (accounts, alone) = groups.into_iter().partition(|g| g.len() > 1);
        groups = alone;
        for group in &accounts {
            stream_account(sp, &memo, group, &mut |i, t, report| {
                done(t);
                on_session(i, t, &report)?;
                let TraceReport { sweep, stability } = report;
                sessions.put(i, SessionSummary::new(t, sweep, Some(&stability)))
            })?;
        }
    }
    // The other groups (all of them, in memory) a few at a time, side by
    // side, each swept at once.
    for batch in groups.chunks(groups_at_once()) {
        let reports = batch
            .par_iter()
            .map(|group| -> Result<Vec<_>, AppError> {
                let applicability = sp.applicability.subset(group);
                let shapes: Vec<_> = group.iter().map(|&i| sp.shape(i)).collect();
                let mut sweep = crate::replay::sweep::AccountSweep::new(
                    &applicability,
                    &shapes,
                    sp.cost.replay_context(&memo, None),
                    sp.recall_cost_usd,
                )?;
                report_group(sp, &memo, group, &mut sweep)
            })
            .collect::<Vec<_>>();
        for reports in reports {
            for (i, t, report) in reports? {
                done(&t);
                on_session(i, &t, &report)?;
                let TraceReport { sweep, stability } = report;
                sessions.put(i, SessionSummary::new(&t, sweep, Some(&stability)))?;
            }
        }
    }
    sessions.seal()?;
    let mut fleet = super::fleet::fleet(&sessions, sp.configs())?;
    // The fleet's recommendation is known only now: check its stubs on
    // every session, as each session's own recommendation was.
    let recommended = fleet.answer.recommended.config.config().cloned();
    let checked = match (fleet.answer.keep_status_quo, recommended) {
        (false, Some(config)) => Some(config),
        _ => None,
    };
    if let Some(config) = checked {
        // A shorter pass (one config, every count known): its own count,
        // so that the time left is its own.
        progress.start(
            &format!("report: checking the stubs of {config}"),
            calls,
            whole_fleet,
        );
        let mut check = super::fleet::FleetStability {
            config: config.clone(),
            sessions: 0,
            traces: 0,
            stubs: 0,
            violations: 0,
            unstable_sessions: 0,
        };
        let checks = (0..sp.traces().len())
            .into_par_iter()
            .map(|i| -> Result<(usize, usize), AppError> {
                let t = sp.trace(i)?;
                let r = stability_of(&t, &config, &memo, None)?;
                progress.advance(t.calls.len() as u64);
                progress.traces_done(1);
                Ok((r.stubs, r.violations.len()))
            })
            .collect::<Vec<_>>();
        let mut checked = std::collections::BTreeSet::new();
        let mut unstable = std::collections::BTreeSet::new();
        for (t, r) in sp.traces().iter().zip(checks) {
            let (stubs, violations) = r?;
            check.traces += 1;
            check.stubs += stubs;
            check.violations += violations;
            let session = super::identity::session_of(t);
            checked.insert(session);
            if violations > 0 {
                unstable.insert(session);
            }
        }
        check.sessions = checked.len();
        check.unstable_sessions = unstable.len();
        fleet.stability = Some(check);
    }
    Ok(ReportOutcome { fleet, sessions })
}

/// Streams the traces `group` names (indices into the plan's traces, one
/// account's, read from the plan's store): each is read when the calls
/// before its first have been replayed, and its report handed to `emit`
/// (with its index in the plan) as soon as every config has replayed it.
fn stream_account(
    sp: &SweepPlan,
    memo: &TokenMemo,
    group: &[usize],
    emit: &mut dyn FnMut(usize, &Trace, TraceReport) -> Result<(), AppError>,
) -> Result<(), AppError> {
    let applicability = sp.applicability.subset(group);
    let shapes: Vec<_> = group.iter().map(|&i| sp.shape(i)).collect();
    let mut sweep = crate::replay::sweep::AccountSweep::new(
        &applicability,
        &shapes,
        sp.cost.replay_context(memo, None),
        sp.recall_cost_usd,
    )?;
    let first_starts: Vec<u64> = group
        .iter()
        .map(|&i| sp.head(i).first_start_ms.unwrap_or(0))
        .collect();
    let load = |k: usize| -> Result<Trace, AppError> { Ok(sp.trace(group[k])?.into_owned()) };
    let prepared: &(dyn for<'t> Fn(&'t Trace) -> Result<PreparedTrace<'t>, AppError> + Sync) =
        &|t| prepare(t, &sp.cost, memo, sp.priced_as());
    let source = crate::replay::stream::StreamSource {
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
    sweep: &mut crate::replay::sweep::AccountSweep<'_>,
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

/// Token counts through a memo.
struct MemoTokens<'a>(&'a TokenMemo);

impl BlockTokens for MemoTokens<'_> {
    fn block_tokens(&self, block: &ContentBlock) -> u64 {
        count_block(self.0, block).raw_tokens
    }
}

fn stability_of(
    trace: &Trace,
    config: &Config,
    memo: &TokenMemo,
    progress: Option<&dyn Progress>,
) -> Result<StabilityReport, AppError> {
    let counter = MemoTokens(memo);
    let mut source = RunSource {
        run: CompactionRun::new(&config.compaction).with_record(&trace.calls),
        tokens: &counter,
        fixed_tokens: 0,
        progress,
        state: Default::default(),
    };
    Ok(crate::replay::stability::check(
        trace,
        &mut source,
        &counter,
    )?)
}

/// One trace's stability check.
#[derive(Debug, Clone)]
pub struct StabilityOutcome {
    /// The trace's name.
    pub trace: String,
    /// The config checked.
    pub config: Config,
    /// The check.
    pub report: StabilityReport,
}

/// Checks that stubs and prefixes stay byte-stable for each run.
pub fn stability(
    plan: &StabilityPlan,
    progress: &dyn Progress,
) -> Result<Vec<StabilityOutcome>, AppError> {
    let memo = TokenMemo::new(plan.tokenizer.clone());
    let mut out = Vec::new();
    for run in &plan.runs {
        progress.start("stability", run.trace.calls.len() as u64, Unit::Items);
        let report = stability_of(&run.trace, &run.config, &memo, Some(progress))?;
        out.push(StabilityOutcome {
            trace: run.trace.name.clone(),
            config: run.config.clone(),
            report,
        });
    }
    Ok(out)
}

/// The digest line another process prints for a trace
/// (`NAME DIGEST`), read back: the digest for `trace`, or `""`.
pub fn stability_digest(output: &str, trace: &str) -> String {
    output
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{trace} ")))
        .unwrap_or("")
        .to_owned()
}

/// Prices the usage Claude Code and Codex CLI recorded.
pub fn usage(plan: &UsagePlan) -> Result<super::usage::UsageReport, AppError> {
    super::usage::run(plan)
}

/// What an import wrote.
#[derive(Debug)]
pub struct ImportSummary {
    /// Traces written.
    pub traces: usize,
    /// Calls in them.
    pub calls: usize,
    /// What was read and skipped.
    pub report: ImportReport,
}

/// Imports the plan's inputs, writing each trace to `out` as soon as it is
/// built. Nothing imported is an error.
pub fn import(
    plan: &ImportPlan,
    progress: &dyn Progress,
    out: &mut dyn Write,
    out_name: &str,
) -> Result<ImportSummary, AppError> {
    let write_err = |source| AppError::Write {
        path: out_name.to_owned(),
        source,
    };
    let mut writer = TraceWriter::new(out);
    let mut calls = 0usize;
    let mut emit = |t: Trace| -> Result<(), AppError> {
        calls += t.calls.len();
        writer.push(t).map_err(write_err)
    };
    let report = match plan.format {
        Some(format) => format.import_each(&plan.inputs, &plan.options, progress, &mut emit)?,
        None => crate::trace::import::inputs::import_detected(
            &plan.inputs,
            &plan.options,
            progress,
            &mut emit,
        )?,
    };
    let traces = writer.count();
    if traces == 0 {
        return Err(AppError::Usage(format!(
            "{}: nothing to import: {report}",
            crate::trace::import::shown(&plan.inputs)
        )));
    }
    writer.finish().map_err(write_err)?;
    Ok(ImportSummary {
        traces,
        calls,
        report,
    })
}

/// The handles a tool_use id was recorded under, with the traces that
/// recorded them, in trace order.
type RecordedIds = HashMap<String, Vec<(String, Handle)>>;

/// Records every tool result of `trace` into `ledger`, noting under `ids`
/// the handle each tool_use id got.
fn record_all(
    trace: &Trace,
    ledger: &dyn ToolResultLedger,
    ids: &mut RecordedIds,
) -> Result<(), AppError> {
    let mut names = HashMap::new();
    for b in trace.messages.iter().flat_map(Message::blocks) {
        match b.kind() {
            BlockKind::ToolUse { id, name } => {
                names.insert(
                    id.clone(),
                    (name.clone(), b.tool_input().map_or("{}", |r| r.get())),
                );
            }
            BlockKind::ToolResult { tool_use_id, .. } => {
                let (name, args) = names
                    .get(tool_use_id)
                    .map_or(("unknown", "{}"), |(n, a)| (&**n, *a));
                let handle = record_result(ledger, tool_use_id, name, args, b)?;
                let seen = ids.entry(tool_use_id.to_string()).or_default();
                if !seen.iter().any(|(_, h)| h.mem_id == handle.mem_id) {
                    seen.push((trace.name.clone(), handle));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// What the recall tool answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallAnswer {
    /// The text, exactly as the model would receive it.
    pub text: String,
    /// Whether the id named a recorded result (else `text` is the
    /// not-found string).
    pub found: bool,
}

/// Records every tool result of the plan's traces and answers the recall
/// request for its id (a mem_id or a tool_use id).
///
/// A tool_use id is looked up among the plan's traces first, so a durable
/// ledger shared with other traces that reused the id still answers with
/// this trace's result; an id that names different results (two of the
/// plan's traces, or only other traces of the ledger) is refused with the
/// mem_ids to recall instead, never answered with one of them.
pub fn recall(plan: &RecallPlan) -> Result<RecallAnswer, AppError> {
    let damaged = |source| match (&plan.ledger_dir, source) {
        (Some(dir), source @ LedgerError::Corrupt { .. }) => AppError::LedgerDamaged {
            dir: dir.display().to_string(),
            source,
        },
        (_, source) => AppError::Ledger(source),
    };
    let ledger: Box<dyn ToolResultLedger> = match &plan.ledger_dir {
        Some(dir) => Box::new(DurableLedger::open(dir).map_err(damaged)?),
        None => Box::new(InMemoryLedger::new()),
    };
    let mut ids = RecordedIds::new();
    for t in &plan.traces {
        record_all(t, ledger.as_ref(), &mut ids).map_err(|e| match e {
            AppError::Ledger(source) => damaged(source),
            e => e,
        })?;
    }
    let mem_id = match ledger.get(&plan.id).map_err(damaged)? {
        Some(rec) => Some(rec.handle.mem_id),
        None => match ids.get(&plan.id).map(Vec::as_slice) {
            Some([(_, handle)]) => Some(handle.mem_id.clone()),
            Some(many @ [_, _, ..]) => {
                let records: Vec<String> = many
                    .iter()
                    .map(|(trace, h)| format!("{} in trace {}", h.mem_id, one_line(trace, 80)))
                    .collect();
                return Err(AppError::Usage(format!(
                    "tool_use id \"{}\" names {} different results: {}; recall one by its mem_id",
                    one_line(&plan.id, 200),
                    many.len(),
                    records.join(", ")
                )));
            }
            _ => ledger
                .get_by_call_id(&plan.id)
                .map_err(damaged)?
                .map(|rec| rec.handle.mem_id),
        },
    };
    Ok(match mem_id {
        Some(id) => RecallAnswer {
            text: cut_answer(
                crate::engine::recall::fetch(ledger.as_ref(), &id, &plan.request),
                plan.answer_chars,
            ),
            found: true,
        },
        None => RecallAnswer {
            text: crate::engine::recall::not_found(&plan.id),
            found: false,
        },
    })
}

/// `text` cut after `max` chars (never inside a char), with a line saying
/// where and how many chars the whole answer has; as is when it fits.
fn cut_answer(text: String, max: Option<u64>) -> String {
    let Some(max) = max else { return text };
    let total = text.chars().count();
    let Some((end, _)) = usize::try_from(max)
        .ok()
        .and_then(|m| text.char_indices().nth(m))
    else {
        return text;
    };
    format!(
        "{}\n[cut at {max} of {total} chars of the answer]",
        &text[..end]
    )
}

/// Repairs the durable ledger in `dir` (see [`DurableLedger::repair`]):
/// intact records stay, damaged index lines are set aside beside the index.
/// A directory without an index is bad input, and nothing is created in it.
pub fn ledger_repair(
    dir: &std::path::Path,
) -> Result<crate::engine::ledger::RepairReport, AppError> {
    let index = dir.join("index.jsonl");
    if !index.is_file() {
        return Err(AppError::Usage(format!(
            "{}: not a ledger directory (expected a file index.jsonl in it)",
            dir.display()
        )));
    }
    Ok(DurableLedger::repair(dir)?)
}

//! `tracecost fidelity`: each session's status quo, replayed, against its
//! recorded bill, and how the errors spread.

use std::io::{self, Write};

use super::export::{
    CsvExporter, ExportFormat, Exportable, Exporter, JsonExporter, MarkdownExporter, TableExporter,
    aligned_lines, every_format, md_row, write_json, write_lines,
};
use super::fmt::{csv_field, dollars, fixed, md_escape, percent};
use tracecost_app::fidelity::{FidelityReport, MIN_CALLS, TraceFidelity, WITHIN_PCT};

/// Version tag of the fidelity JSON.
pub const FIDELITY_FORMAT: &str = "tracecost.fidelity/v2";

/// `tracecost fidelity`: the report.
///
/// Json: the summary and every session. Csv: one row per session.
/// Markdown: the summary, then a table of the traces, largest error first
/// (the page `docs/fidelity.md` is). Table: the same as aligned text.
#[derive(Debug, Clone, Copy)]
pub struct FidelityView<'a>(pub &'a FidelityReport);

impl Exportable for FidelityView<'_> {
    fn exporter<'e>(format: ExportFormat) -> Option<&'e dyn Exporter<Self>> {
        Some(every_format(format))
    }
}

#[derive(serde::Serialize)]
struct Doc<'a> {
    format: &'static str,
    #[serde(flatten)]
    report: &'a FidelityReport,
}

impl Exporter<FidelityView<'_>> for JsonExporter {
    fn export(&self, view: &FidelityView<'_>, out: &mut dyn Write) -> io::Result<()> {
        write_json(
            &Doc {
                format: FIDELITY_FORMAT,
                report: view.0,
            },
            out,
        )
    }
}

impl Exporter<FidelityView<'_>> for CsvExporter {
    fn export(&self, view: &FidelityView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        writeln!(
            out,
            "trace,config,calls,recorded_calls,recorded_usd,simulated_usd,error_pct"
        )?;
        for s in &view.0.traces {
            writeln!(
                out,
                "{},{},{},{},{},{},{}",
                csv_field(&s.trace),
                csv_field(&s.config),
                s.calls,
                s.recorded_calls,
                fixed(s.recorded_usd, 6),
                fixed(s.simulated_usd, 6),
                fixed(s.error_pct, 2)
            )?;
        }
        out.flush()
    }
}

/// Sessions, largest error first among those counted, then the rest; each
/// group by name.
fn ordered(r: &FidelityReport) -> Vec<&TraceFidelity> {
    let mut v: Vec<&TraceFidelity> = r.traces.iter().collect();
    v.sort_by(|a, b| {
        (b.calls >= MIN_CALLS)
            .cmp(&(a.calls >= MIN_CALLS))
            .then(b.error_pct.abs().total_cmp(&a.error_pct.abs()))
            .then(a.trace.cmp(&b.trace))
    });
    v
}

fn summary_lines(r: &FidelityReport) -> Vec<String> {
    let s = &r.summary;
    vec![
        format!(
            "Traces with recorded usage (a session's continuations and subagents apart): {}; recorded bill {}, status quo simulated {} ({:+.2}%).",
            s.traces,
            dollars(s.recorded_usd),
            dollars(s.simulated_usd),
            s.error_pct
        ),
        format!(
            "Traces with {MIN_CALLS}+ calls: {}; within {WITHIN_PCT}% of their recorded bill: {} ({}); median error {:.1}%, 90th percentile {:.1}%, largest {:.1}%.",
            s.traces_counted,
            s.within,
            percent(
                if s.traces_counted == 0 {
                    0.0
                } else {
                    s.within as f64 / s.traces_counted as f64 * 100.0
                },
                0
            ),
            s.median_abs_error_pct,
            s.p90_abs_error_pct,
            s.max_abs_error_pct
        ),
    ]
}

fn cells(r: &FidelityReport) -> Vec<[String; 6]> {
    ordered(r)
        .into_iter()
        .map(|s| {
            [
                s.trace.clone(),
                s.config.clone(),
                s.calls.to_string(),
                dollars(s.recorded_usd),
                dollars(s.simulated_usd),
                format!("{:+.1}%", s.error_pct),
            ]
        })
        .collect()
}

/// How a replay with calibration on (`--calibrate auto`, the default) uses
/// recorded usage; the rules live in `replay::prepare`.
const RECORD_NOTES: &str = "- **The prompt each call sent.** Between two calls the recorded prompt grew by exactly what was appended, including what the transcript does not show (Claude Code's reminders and attachments). That growth is shared among the appended blocks in proportion to their token counts, so the status quo sends the recorded prompt at every call; a policy that replaces a block drops that block's share. At the first call, the prefix the transcript does not hold is what the recorded prompt leaves once the visible messages are counted as the replay sends them.
- **The prefix other sessions kept warm.** Claude Code's system prompt and tools are not in its transcripts; their size is known from usage. Where a call whose own prefix was cold still read part of it (its first call, or after a pause), the read tells how much another session of the account had cached: the hidden prefix is split there (reads a few tokens apart, other sessions' prompts a word apart, make one split), and at such calls that part is warm (or, when nothing was read, cold) for every policy replayed. A first call that read past the hidden prefix (an Agent-SDK run started again with the same prompt, a compaction reading its parent's conversation) found another session's copy of all of it: the hidden prefix, and the messages before the tail it wrote, are warm at that call.
- **Changes the transcript does not show.** When such a read stops inside the hidden prefix within the TTL the call before wrote with (an hour where it recorded one), the rest of the hidden prompt changed (the date, git status, a tool connected): from there it is new content.
- **What Claude Code cleared.** Its `microcompact_boundary` lines list the tool results it cleared in place; from the next call on the status quo (`recorded` compaction) sends each as Claude Code's placeholder, as it did.
- **What it cleared without saying.** A conversation's prompt only grows; where a call's recorded prompt is smaller than the call before's although its history grew, and the transcript names no result cleared there, the client removed content (Claude Code clears old results when its cache has gone cold). The oldest results not yet cleared, as many as bring the prompt closest to the record, are cleared from that call on in the status quo; a shrink no number of results matches better than none clears nothing.
- **The TTL each call asked for.** Where usage splits a call's cache writes into 5-minute and 1-hour tokens, Claude Code's markers carry the TTL that call wrote with (`ttl=recorded`): the main conversation and its subagents may differ, and so may Claude Code's versions. A call that wrote nothing keeps the TTL of the last call before it that wrote (before any did, the first write's); one that wrote both takes the TTL that wrote more tokens, the hour on a tie; without the split, 5 minutes.
- **An advisor's request.** A response that consulted an advisor (`usage.iterations`) made one request per iteration, one after the other; the advisor's, on its own model, read and wrote nothing: it is sent without markers under every policy, with what it carried beyond the history (its recorded prompt less the executor's) after it, and says nothing of the executor's cache, which is per model.
- **Timing.** Start times are the transcript's, a few seconds off the requests'; where a call read what the call before it cached, those entries are kept alive whatever the clock says (under a config asking for a shorter TTL than the record's, the clock decides).
- Sessions of one account share one cache (`--cache-scope account`, the default).";

const HEAD: [&str; 6] = [
    "trace",
    "status quo",
    "calls",
    "recorded",
    "simulated",
    "error",
];

impl Exporter<FidelityView<'_>> for MarkdownExporter {
    fn export(&self, view: &FidelityView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        writeln!(
            out,
            "# Fidelity: the status quo replayed against the recorded bill\n"
        )?;
        for l in summary_lines(view.0) {
            writeln!(out, "- {l}")?;
        }
        writeln!(
            out,
            "\nEach trace is replayed under the policy that actually ran (its status quo); the simulated bill of its calls that recorded usage is compared with what they recorded. Regenerate with `tracecost fidelity PATH --format md`.\n\n## What the replay takes from the record\n\n{RECORD_NOTES}\n\n## Traces\n\nTraces with {MIN_CALLS}+ calls first, largest error first.\n"
        )?;
        writeln!(out, "{}", md_row(&HEAD))?;
        writeln!(out, "|---|---|---:|---:|---:|---:|")?;
        for row in cells(view.0) {
            let row = [
                md_escape(&row[0]),
                format!("`{}`", row[1]),
                row[2].clone(),
                row[3].clone(),
                row[4].clone(),
                row[5].clone(),
            ];
            writeln!(out, "{}", md_row(&row))?;
        }
        out.flush()
    }
}

impl Exporter<FidelityView<'_>> for TableExporter {
    fn export(&self, view: &FidelityView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        write_lines(&mut out, summary_lines(view.0))?;
        writeln!(out)?;
        write_lines(&mut out, aligned_lines(HEAD, &cells(view.0), |i| i >= 2))?;
        out.flush()
    }
}

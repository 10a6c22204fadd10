//! `calls.jsonl`: every call of every trace under every config, a JSON
//! object per line, for an analyst's own tools (a notebook, DuckDB, Spark).
//! Written as each trace is replayed, so that it costs no memory however
//! large the fleet; only when asked for, since it grows with calls times
//! configs.

use serde::Serialize;

use tracecost_app::TraceReport;
use tracecost_policy::Config;
use tracecost_replay::CallResult;

/// The file's name in the report folder.
pub const CALLS_JSONL: &str = "calls.jsonl";

/// One line: which trace, session and config, then the call's figures as
/// `results.json` gives them.
#[derive(Serialize)]
struct CallLine<'a> {
    /// The trace's place in the report (its index in `results.json`'s
    /// `traces`), so that lines written in the order traces finished can be
    /// put in the report's order.
    trace_index: usize,
    trace: &'a str,
    session: &'a str,
    config: &'a Config,
    #[serde(flatten)]
    call: &'a CallResult,
}

/// The lines of one trace's report: its rows in rank order, each row's
/// calls in call order.
pub(super) fn call_lines(index: usize, session: &str, r: &TraceReport) -> String {
    let mut out = String::new();
    for row in &r.sweep.rows {
        for call in &row.result.calls {
            let line = CallLine {
                trace_index: index,
                trace: &r.sweep.trace,
                session,
                config: &row.result.config,
                call: &call,
            };
            // Plain data: serializing it cannot fail.
            out.push_str(&serde_json::to_string(&line).unwrap_or_default());
            out.push('\n');
        }
    }
    out
}

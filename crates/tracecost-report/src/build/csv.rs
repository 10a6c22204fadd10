//! The report's CSV files: `results.csv` (a row per trace and config) and
//! `sessions.csv` (a row per session).

use std::fmt::Write as _;

use crate::export::{ExportFormat, Exportable};
use crate::fmt::csv_field;
use crate::sweep_view::SweepView;
use tracecost_app::fleet::FleetAnswer;
use tracecost_replay::sweep::TraceSweep;

use super::sink::{CHUNK, ReportError};
use super::story::own_pick_text;

/// The sessions' figures, most expensive first, as CSV: one row per
/// session (its traces summed), the traces named in one field. The text
/// goes to `out` a chunk at a time (`out` takes it), as a fleet has rows
/// for every session.
pub(super) fn sessions_csv(
    fleet: &FleetAnswer,
    out: &mut dyn FnMut(&mut String) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let mut s = String::from(
        "session,project,started,traces,trace_names,calls,recorded_calls,recorded_cost_usd,status_quo_usd,recommended_usd,savings_usd,savings_pct,own_pick,own_pick_usd,own_pick_savings_pct\n",
    );
    for r in fleet.per_session.iter() {
        let r = &*r?;
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{:.6},{:.6},{:.6},{:.2},{},{:.6},{:.2}",
            csv_field(&r.session),
            csv_field(r.project.as_deref().unwrap_or("")),
            r.started_ms
                .map_or_else(String::new, tracecost_app::usage::date_of),
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
            csv_field(&own_pick_text(fleet, r)),
            r.own_pick.cost_usd,
            r.own_pick.savings_pct
        );
        if s.len() >= CHUNK {
            out(&mut s)?;
        }
    }
    out(&mut s)
}

/// The rows of `results.csv` for one trace of `session`: the sweep's CSV
/// view with the session named first in each row, so a spreadsheet sums a
/// session's traces; with the header when `header` (the report's first
/// trace).
pub(super) fn results_csv_rows(
    session: &str,
    sweep: &TraceSweep,
    header: bool,
) -> std::io::Result<String> {
    let mut csv = Vec::new();
    SweepView {
        sweeps: std::slice::from_ref(sweep),
    }
    .export_to(ExportFormat::Csv, &mut csv)?;
    let text = String::from_utf8_lossy(&csv);
    let mut rows = String::with_capacity(text.len() + 64);
    for (i, line) in text.lines().enumerate() {
        match i {
            0 if !header => continue,
            0 => rows.push_str("session,"),
            _ => {
                rows.push_str(&csv_field(session));
                rows.push(',');
            }
        }
        rows.push_str(line);
        rows.push('\n');
    }
    Ok(rows)
}

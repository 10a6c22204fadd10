//! `import`: inputs read and written as canonical traces.

use std::io::Write;

use crate::AppError;
use crate::plan::ImportPlan;
use crate::progress::Progress;
use tracecost_import::ImportSummary;
use tracecost_trace::{Trace, TraceWriter};

/// What an import wrote.
#[derive(Debug)]
pub struct ImportReport {
    /// Traces written.
    pub traces: usize,
    /// Calls in them.
    pub calls: usize,
    /// What was read and skipped.
    pub report: ImportSummary,
}

/// Imports the plan's inputs, writing each trace to `out` as soon as it is
/// built. Nothing imported is an error.
pub fn import(
    plan: &ImportPlan,
    progress: &dyn Progress,
    out: &mut dyn Write,
    out_name: &str,
) -> Result<ImportReport, AppError> {
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
        None => tracecost_import::inputs::import_detected(
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
            tracecost_import::shown(&plan.inputs)
        )));
    }
    writer.finish().map_err(write_err)?;
    Ok(ImportReport {
        traces,
        calls,
        report,
    })
}

//! Notes several commands print before their output.

use crate::app;

/// Where the per-trace tables went, when only the fleet's total is printed.
pub(super) fn per_trace_note(per_trace: bool, traces: usize) {
    if !per_trace {
        eprintln!(
            "tracecost: note: the total of {traces} traces; --per-trace prints each one's too"
        );
    }
}

/// What the options implied and what each run kept of its trace's status
/// quo, one line per distinct note and config: a folder of traces that
/// resolve alike gets one line, not one per trace.
pub(super) fn policy_notes(runs: &[app::TraceRun]) -> Vec<String> {
    let mut groups: Vec<(String, String, Vec<&str>)> = Vec::new();
    for r in runs {
        let parts: Vec<String> = r
            .implied
            .iter()
            .map(ToString::to_string)
            .chain(crate::policy::Kept::describe(&r.kept))
            .collect();
        if parts.is_empty() {
            continue;
        }
        let (note, config) = (parts.join("; "), r.config.to_string());
        match groups
            .iter_mut()
            .find(|(n, c, _)| *n == note && *c == config)
        {
            Some((_, _, names)) => names.push(&r.trace.name),
            None => groups.push((note, config, vec![&r.trace.name])),
        }
    }
    groups
        .into_iter()
        .map(|(note, config, names)| match names.as_slice() {
            [one] => format!("{note}; replaying {one} as {config}"),
            many => format!("{note}; replaying {} traces as {config}", many.len()),
        })
        .collect()
}

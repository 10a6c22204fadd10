//! Text output of `tracecost stability`.

use std::fmt::Write as _;

use super::fmt::thousands;
use crate::replay::stability::StabilityReport;

/// Renders one trace's stability report; `others` are the digests the
/// fresh processes printed.
pub fn render(trace: &str, config: &str, r: &StabilityReport, others: &[String]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{trace} — {config}");
    let _ = writeln!(
        s,
        " call  msgs kept  prefix tokens kept  of previous  new compactions"
    );
    for c in &r.calls {
        let _ = writeln!(
            s,
            "{:>5}  {:>9}  {:>18}  {:>11}  {}",
            c.index,
            c.messages_kept,
            thousands(c.tokens_kept),
            thousands(c.previous_tokens),
            c.new_compactions.join(" ")
        );
    }
    for v in &r.violations {
        let _ = writeln!(
            s,
            "VIOLATION {} at call {}, message {}{}, byte {}:\n  before: {}\n  after:  {}",
            v.kind,
            v.call,
            v.message,
            v.tool_use_id
                .as_deref()
                .map(|i| format!(", tool_use {i}"))
                .unwrap_or_default(),
            v.offset,
            v.before.escape_debug(),
            v.after.escape_debug()
        );
    }
    let mismatched: Vec<usize> = others
        .iter()
        .enumerate()
        .filter(|(_, d)| **d != r.digest)
        .map(|(i, _)| i + 1)
        .collect();
    for i in &mismatched {
        let _ = writeln!(
            s,
            "VIOLATION process {i} produced different stub bytes (digest {} vs {})",
            others[i - 1],
            r.digest
        );
    }
    let verdict = if r.violations.is_empty() && mismatched.is_empty() {
        "stable"
    } else {
        "UNSTABLE"
    };
    let _ = writeln!(
        s,
        "{verdict}: {} stub(s), {} violation(s), identical in {} of {} fresh process(es); digest {}\n",
        r.stubs,
        r.violations.len() + mismatched.len(),
        others.len() - mismatched.len(),
        others.len(),
        r.digest
    );
    s
}

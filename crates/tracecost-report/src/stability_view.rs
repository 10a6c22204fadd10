//! The view of `tracecost stability`, [`StabilityView`]: aligned text only.

use std::io::{self, Write};

use super::export::{ExportFormat, Exportable, Exporter, TableExporter};
use super::fmt::thousands;
use tracecost_replay::stability::StabilityResult;

/// One trace's stability report, with the digests the fresh processes
/// printed (`others`) to compare against its own.
#[derive(Debug, Clone, Copy)]
pub struct StabilityView<'a> {
    /// Trace name.
    pub trace: &'a str,
    /// Config string.
    pub config: &'a str,
    /// The report of this process.
    pub report: &'a StabilityResult,
    /// Digests of the fresh processes, in the order they ran.
    pub others: &'a [String],
}

impl Exportable for StabilityView<'_> {
    fn exporter<'e>(format: ExportFormat) -> Option<&'e dyn Exporter<Self>> {
        match format {
            ExportFormat::Table => Some(&TableExporter),
            ExportFormat::Json | ExportFormat::Csv | ExportFormat::Markdown => None,
        }
    }
}

impl Exporter<StabilityView<'_>> for TableExporter {
    fn export(&self, view: &StabilityView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let StabilityView {
            trace,
            config,
            report: r,
            others,
        } = *view;
        let mut out = io::BufWriter::new(out);
        writeln!(out, "{trace} — {config}")?;
        writeln!(
            out,
            " call  msgs kept  prefix tokens kept  of previous  new compactions"
        )?;
        for c in &r.calls {
            writeln!(
                out,
                "{:>5}  {:>9}  {:>18}  {:>11}  {}",
                c.index,
                c.messages_kept,
                thousands(c.tokens_kept),
                thousands(c.previous_tokens),
                match c.policy_change {
                    // The policy's own change, named beside what it compacted.
                    Some(change) => [format!("({change})"), c.new_compactions.join(" ")]
                        .join(" ")
                        .trim_end()
                        .to_owned(),
                    None => c.new_compactions.join(" "),
                }
            )?;
        }
        for v in &r.violations {
            writeln!(
                out,
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
            )?;
        }
        let mismatched: Vec<(usize, &String)> = others
            .iter()
            .enumerate()
            .filter(|(_, d)| **d != r.digest)
            .map(|(i, d)| (i + 1, d))
            .collect();
        for (i, digest) in &mismatched {
            writeln!(
                out,
                "VIOLATION process {i} produced different stub bytes (digest {digest} vs {})",
                r.digest
            )?;
        }
        let verdict = if r.violations.is_empty() && mismatched.is_empty() {
            "stable"
        } else {
            "UNSTABLE"
        };
        writeln!(
            out,
            "{verdict}: {} stub(s), {} violation(s), identical in {} of {} fresh process(es); digest {}\n",
            r.stubs,
            r.violations.len() + mismatched.len(),
            others.len() - mismatched.len(),
            others.len(),
            r.digest
        )?;
        out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_replay::stability::{CallStability, Violation};

    #[test]
    fn violations_and_digest_mismatches_make_it_unstable() {
        let report = StabilityResult {
            calls: vec![CallStability {
                index: 2,
                messages_kept: 3,
                tokens_kept: 12_345,
                previous_tokens: 23_456,
                new_compactions: vec!["toolu_1".into(), "toolu_2".into()],
                policy_change: None,
            }],
            violations: vec![Violation {
                call: 2,
                kind: "stub-changed",
                tool_use_id: Some("toolu_1".into()),
                message: 4,
                offset: 17,
                before: "a\"b".into(),
                after: "a\nb".into(),
            }],
            digest: "d0".into(),
            stubs: 2,
        };
        let others = ["d0".to_owned(), "d1".to_owned()];
        let text = StabilityView {
            trace: "t",
            config: "ledger+none",
            report: &report,
            others: &others,
        }
        .to_string_as(ExportFormat::Table)
        .expect("stability has a table");
        assert_eq!(
            text,
            "t — ledger+none\n \
             call  msgs kept  prefix tokens kept  of previous  new compactions\n    \
             2          3              12,345       23,456  toolu_1 toolu_2\n\
             VIOLATION stub-changed at call 2, message 4, tool_use toolu_1, byte 17:\n  \
             before: a\\\"b\n  \
             after:  a\\nb\n\
             VIOLATION process 2 produced different stub bytes (digest d1 vs d0)\n\
             UNSTABLE: 2 stub(s), 2 violation(s), identical in 1 of 2 fresh process(es); digest d0\n\n"
        );
    }
}

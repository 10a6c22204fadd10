//! One shape for every printed view: a view is a type that says which
//! [`ExportFormat`]s it has, and each format is an [`Exporter`] of that view.
//!
//! The exporters are unit structs; each view's module implements
//! `Exporter<ItsView>` for the formats it supports, so the text of a view
//! stays next to its data and the command line needs one call for all.

use std::io::{self, Write};

use serde::Serialize;

/// How a view is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// Aligned text for a terminal.
    Table,
    /// Pretty JSON for programs.
    Json,
    /// One row per record, RFC 4180 quoting.
    Csv,
    /// Markdown tables.
    Markdown,
}

impl ExportFormat {
    /// Every format, in the order they are listed to users.
    pub const ALL: [ExportFormat; 4] = [
        ExportFormat::Table,
        ExportFormat::Json,
        ExportFormat::Csv,
        ExportFormat::Markdown,
    ];

    /// The name on the command line: `table`, `json`, `csv`, `md`.
    pub fn name(self) -> &'static str {
        match self {
            ExportFormat::Table => "table",
            ExportFormat::Json => "json",
            ExportFormat::Csv => "csv",
            ExportFormat::Markdown => "md",
        }
    }
}

/// Writes one view in one format.
pub trait Exporter<V: ?Sized>: Sync {
    /// Writes the rendered view to `out`. Large views go out piece by
    /// piece rather than through one string.
    fn export(&self, view: &V, out: &mut dyn Write) -> io::Result<()>;
}

/// `ExportFormat::Table`.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableExporter;
/// `ExportFormat::Json`.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonExporter;
/// `ExportFormat::Csv`.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvExporter;
/// `ExportFormat::Markdown`.
#[derive(Debug, Clone, Copy, Default)]
pub struct MarkdownExporter;

/// A view says which formats it has.
pub trait Exportable {
    /// The exporter of `format`, or `None` when this view has no such
    /// output. The lifetime is the caller's: the exporters are statics, but
    /// a view that borrows its data is not, and `&'static dyn Exporter<Self>`
    /// would demand that it were.
    fn exporter<'e>(format: ExportFormat) -> Option<&'e dyn Exporter<Self>>;

    /// The formats this view has, in [`ExportFormat::ALL`] order.
    fn formats() -> Vec<ExportFormat> {
        ExportFormat::ALL
            .into_iter()
            .filter(|f| Self::exporter(*f).is_some())
            .collect()
    }

    /// Writes the view in `format`; a format the view lacks is an
    /// [`io::ErrorKind::Unsupported`] error.
    fn export_to(&self, format: ExportFormat, out: &mut dyn Write) -> io::Result<()> {
        match Self::exporter(format) {
            Some(e) => e.export(self, out),
            None => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                format!("this view has no {} output", format.name()),
            )),
        }
    }

    /// The view as text in `format`; `None` when the view lacks the format
    /// or its exporter failed.
    fn to_string_as(&self, format: ExportFormat) -> Option<String> {
        let mut buf = Vec::new();
        self.export_to(format, &mut buf).ok()?;
        // Every exporter writes UTF-8.
        String::from_utf8(buf).ok()
    }
}

/// The exporter of `format` for a view that has all four.
pub fn every_format<'e, V: ?Sized>(format: ExportFormat) -> &'e dyn Exporter<V>
where
    TableExporter: Exporter<V>,
    JsonExporter: Exporter<V>,
    CsvExporter: Exporter<V>,
    MarkdownExporter: Exporter<V>,
{
    match format {
        ExportFormat::Table => &TableExporter,
        ExportFormat::Json => &JsonExporter,
        ExportFormat::Csv => &CsvExporter,
        ExportFormat::Markdown => &MarkdownExporter,
    }
}

/// Pretty JSON and a final newline, the shape of every JSON output.
pub(crate) fn write_json<T: Serialize + ?Sized>(value: &T, out: &mut dyn Write) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    serde_json::to_writer_pretty(&mut out, value).map_err(io::Error::from)?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Each item on a line of its own.
pub(crate) fn write_lines<L: AsRef<str>>(
    out: &mut impl Write,
    lines: impl IntoIterator<Item = L>,
) -> io::Result<()> {
    for l in lines {
        writeln!(out, "{}", l.as_ref())?;
    }
    Ok(())
}

/// Lines of an aligned text table: every column as wide as its widest cell
/// (in chars), two spaces between columns, trailing space trimmed. Columns
/// for which `right_aligned` holds are padded on the left (numbers), the
/// others on the right.
pub(crate) fn aligned_lines<const N: usize>(
    head: [&str; N],
    body: &[[String; N]],
    right_aligned: impl Fn(usize) -> bool,
) -> Vec<String> {
    let mut widths = head.map(|h| h.chars().count());
    for row in body {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut l = String::new();
        for (i, (cell, w)) in cells.zip(widths).enumerate() {
            let pad = " ".repeat(w - cell.chars().count());
            if right_aligned(i) {
                l.push_str(&pad);
                l.push_str(cell);
            } else {
                l.push_str(cell);
                l.push_str(&pad);
            }
            l.push_str("  ");
        }
        l.truncate(l.trim_end().len());
        l
    };
    let mut lines = Vec::with_capacity(body.len() + 1);
    lines.push(line(&mut head.into_iter()));
    for row in body {
        lines.push(line(&mut row.iter().map(String::as_str)));
    }
    lines
}

/// A Markdown table row: `| a | b |`. Cells are written as given; escaping
/// is the caller's, since some cells hold Markdown on purpose.
pub(crate) fn md_row<S: AsRef<str>>(cells: &[S]) -> String {
    let mut s = String::from("|");
    for c in cells {
        s.push(' ');
        s.push_str(c.as_ref());
        s.push_str(" |");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::CheckView;
    use crate::models_view::ModelsView;
    use crate::replay_view::ReplayView;
    use crate::stability_view::StabilityView;
    use crate::sweep_view::SweepView;
    use crate::usage_view::UsageView;
    use tracecost_cost::pricing::Pricing;
    use tracecost_replay::stability::StabilityResult;

    use ExportFormat::{Csv, Json, Markdown, Table};

    #[test]
    fn names_are_the_command_line_words() {
        let names: Vec<&str> = ExportFormat::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(names, ["table", "json", "csv", "md"]);
    }

    #[test]
    fn every_view_lists_its_formats() {
        assert_eq!(ReplayView::formats(), [Table, Json, Csv, Markdown]);
        assert_eq!(SweepView::formats(), [Table, Json, Csv, Markdown]);
        assert_eq!(ModelsView::formats(), [Table, Json, Csv, Markdown]);
        assert_eq!(StabilityView::formats(), [Table]);
        assert_eq!(CheckView::formats(), [Json, Markdown]);
        assert_eq!(UsageView::formats(), [Table, Json]);
        use crate::totals_view::{ReplayTotalsView, SweepTotalsView};
        assert_eq!(ReplayTotalsView::formats(), [Table, Json, Csv, Markdown]);
        assert_eq!(SweepTotalsView::formats(), [Table, Json, Csv, Markdown]);
    }

    #[test]
    fn a_missing_format_gives_none_and_an_unsupported_error() {
        let report = StabilityResult {
            calls: Vec::new(),
            violations: Vec::new(),
            digest: "d".into(),
            stubs: 0,
        };
        let view = StabilityView {
            trace: "t",
            config: "off+none",
            report: &report,
            others: &[],
        };
        for f in [Json, Csv, Markdown] {
            assert!(StabilityView::exporter(f).is_none(), "{f:?}");
            assert_eq!(view.to_string_as(f), None, "{f:?}");
            let err = view.export_to(f, &mut Vec::new()).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::Unsupported);
        }
        let text = view.to_string_as(Table).expect("stability has a table");
        assert!(text.starts_with("t — off+none\n"), "{text}");

        let check = CheckView {
            rows: &[],
            tolerance_pct: 0.1,
        };
        assert_eq!(check.to_string_as(Table), None);
        assert_eq!(check.to_string_as(Csv), None);
        assert!(UsageView::exporter(Csv).is_none());
        assert!(UsageView::exporter(Markdown).is_none());
    }

    /// A sink that refuses every byte.
    struct Refusing;

    impl Write for Refusing {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::other("refused"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Err(io::Error::other("refused"))
        }
    }

    /// Every format of `view` writes its text through the writer it is
    /// given: a refusing writer fails it, and memory gets the same bytes
    /// as `to_string_as`.
    fn writes_through<V: Exportable>(view: &V) {
        for f in V::formats() {
            assert!(view.export_to(f, &mut Refusing).is_err(), "{f:?}");
            let mut out = Vec::new();
            view.export_to(f, &mut out).expect("writing to memory");
            assert!(!out.is_empty(), "{f:?}");
            assert_eq!(Some(out), view.to_string_as(f).map(String::into_bytes));
        }
    }

    #[test]
    fn every_exporter_writes_through_the_writer() {
        use tracecost_app::baseline::{Comparison, Expected};
        use tracecost_app::usage::{UsageReport, UsageTotals};
        use tracecost_app::{ReplayReport, Savings};
        use tracecost_cost::tokens::{CharsPerToken, TokenMemo};
        use tracecost_policy::Config;
        use tracecost_replay::{
            PreparedTrace, ReplayContext, ReplayOptions, replay, sweep::sweep_trace,
        };

        let trace = tracecost_gen::session(8, 3);
        let pricing = Pricing::builtin();
        let memo = TokenMemo::new(std::sync::Arc::new(CharsPerToken(4.0)));
        let price = pricing.lookup(&trace.model).expect("priced model");
        let prepared = PreparedTrace::new(&trace, &memo, price, true);
        let opts = ReplayOptions {
            batch: false,
            progress: None,
            ..Default::default()
        };
        let off: Config = "off+none".parse().expect("config");
        let ledger: Config = "ledger:t=2000,k=1+native".parse().expect("config");
        let result = replay(
            &prepared,
            &ledger,
            ReplayContext {
                pricing: &pricing,
                memo: &memo,
                opts,
            },
        )
        .expect("replay");
        let savings = Savings::of(&result.totals, None);
        writes_through(&ReplayView(&[ReplayReport { result, savings }]));
        let sweep = sweep_trace(
            &prepared,
            &[ledger],
            &off,
            ReplayContext {
                pricing: &pricing,
                memo: &memo,
                opts,
            },
            None,
            &|| {},
        )
        .expect("sweep");
        writes_through(&SweepView { sweeps: &[sweep] });

        writes_through(&ModelsView {
            rows: &pricing.rows(),
        });
        let report = StabilityResult {
            calls: Vec::new(),
            violations: Vec::new(),
            digest: "d".into(),
            stubs: 0,
        };
        writes_through(&StabilityView {
            trace: "t",
            config: "off+none",
            report: &report,
            others: &["d".into()],
        });
        let figures = Expected::of(
            &replay(
                &prepared,
                &off,
                ReplayContext {
                    pricing: &pricing,
                    memo: &memo,
                    opts,
                },
            )
            .expect("replay")
            .totals,
        );
        writes_through(&CheckView {
            rows: &[Comparison::new(
                "t".into(),
                "off+none".into(),
                figures,
                figures,
                0.1,
            )],
            tolerance_pct: 0.1,
        });
        writes_through(&UsageView {
            report: &UsageReport {
                sessions: Vec::new(),
                totals: UsageTotals::default(),
                unpriced: Default::default(),
                read: Default::default(),
            },
        });
    }

    #[test]
    fn aligned_lines_pad_by_chars_and_trim() {
        let body = [
            ["1".to_owned(), "€".to_owned()],
            ["10".to_owned(), String::new()],
        ];
        let lines = aligned_lines(["n", "name"], &body, |i| i == 0);
        assert_eq!(lines, [" n  name", " 1  €", "10"]);
    }

    #[test]
    fn md_rows_frame_every_cell() {
        assert_eq!(md_row(&["a", "", "b"]), "| a |  | b |");
    }
}

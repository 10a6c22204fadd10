//! The view of `tracecost models`, [`ModelsView`]: the price table in
//! every format.

use std::io::{self, Write};

use super::export::{
    CsvExporter, Exportable, Exporter, Format, JsonExporter, MarkdownExporter, TableExporter,
    aligned_lines, every_format, md_row, write_json, write_lines,
};
use super::fmt::{csv_field, fixed, md_escape};
use crate::cost::pricing::ModelRow;

/// `tracecost models`: one row per priced model.
///
/// Json: the rows as they are. Csv, Markdown, Table: prices in USD per
/// million tokens with two places.
#[derive(Debug, Clone, Copy)]
pub struct ModelsView<'a> {
    /// The price table's rows.
    pub rows: &'a [ModelRow],
}

impl Exportable for ModelsView<'_> {
    fn exporter<'e>(format: Format) -> Option<&'e dyn Exporter<Self>> {
        Some(every_format(format))
    }
}

const HEAD: [&str; 9] = [
    "model",
    "aliases",
    "input",
    "write 5m",
    "write 1h",
    "read",
    "output",
    "min cache",
    "long context",
];

fn cells(rows: &[ModelRow]) -> Vec<[String; 9]> {
    rows.iter()
        .map(|r| {
            [
                r.id.clone(),
                r.aliases.join(" "),
                fixed(r.input, 2),
                fixed(r.write_5m, 2),
                fixed(r.write_1h, 2),
                fixed(r.read, 2),
                fixed(r.output, 2),
                r.min_cacheable_tokens.to_string(),
                r.long_context.clone().unwrap_or_default(),
            ]
        })
        .collect()
}

impl Exporter<ModelsView<'_>> for JsonExporter {
    fn export(&self, view: &ModelsView<'_>, out: &mut dyn Write) -> io::Result<()> {
        write_json(view.rows, out)
    }
}

impl Exporter<ModelsView<'_>> for CsvExporter {
    fn export(&self, view: &ModelsView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        writeln!(out, "{}", HEAD.join(","))?;
        for r in cells(view.rows) {
            writeln!(out, "{}", r.map(|c| csv_field(&c)).join(","))?;
        }
        out.flush()
    }
}

impl Exporter<ModelsView<'_>> for MarkdownExporter {
    fn export(&self, view: &ModelsView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        writeln!(out, "{}", md_row(&HEAD))?;
        writeln!(out, "|---|---|{}---|", "---:|".repeat(6))?;
        for r in cells(view.rows) {
            writeln!(out, "{}", md_row(&r.map(|c| md_escape(&c))))?;
        }
        out.flush()
    }
}

impl Exporter<ModelsView<'_>> for TableExporter {
    fn export(&self, view: &ModelsView<'_>, out: &mut dyn Write) -> io::Result<()> {
        let mut out = io::BufWriter::new(out);
        writeln!(
            out,
            "Prices in USD per million tokens; min cache = minimum cacheable prefix in tokens."
        )?;
        // Prices and the minimum are numbers; names and notes are text.
        write_lines(
            &mut out,
            aligned_lines(HEAD, &cells(view.rows), |i| (2..8).contains(&i)),
        )?;
        out.flush()
    }
}

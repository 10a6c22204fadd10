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
/// million tokens with two places (more where a price needs them); `—`
/// where a provider charges no cache write, or no storage (the storage of
/// Gemini's explicit cached contents is per million tokens per hour).
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

const HEAD: [&str; 10] = [
    "model",
    "aliases",
    "input",
    "write 5m",
    "write 1h",
    "read",
    "storage/h",
    "output",
    "min cache",
    "long context",
];

fn cells(rows: &[ModelRow]) -> Vec<[String; 10]> {
    rows.iter()
        .map(|r| {
            [
                r.id.clone(),
                r.aliases.join(" "),
                price(r.input),
                r.write_5m.map_or_else(|| "—".to_owned(), price),
                r.write_1h.map_or_else(|| "—".to_owned(), price),
                price(r.read),
                r.storage_per_hour.map_or_else(|| "—".to_owned(), price),
                price(r.output),
                r.min_cacheable_tokens.to_string(),
                r.long_context.clone().unwrap_or_default(),
            ]
        })
        .collect()
}

/// A price with two places, or as many as it needs up to four (OpenAI's
/// small models are priced in tenths of a cent).
fn price(usd_per_mtok: f64) -> String {
    (2..=4)
        .map(|places| fixed(usd_per_mtok, places))
        .find(|s| {
            s.parse::<f64>()
                .is_ok_and(|v| (v - usd_per_mtok).abs() < 1e-9)
        })
        .unwrap_or_else(|| fixed(usd_per_mtok, 4))
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
        writeln!(out, "|---|---|{}---|", "---:|".repeat(7))?;
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
            "Prices in USD per million tokens; storage/h = a cached content's storage per hour; min cache = minimum cacheable prefix in tokens."
        )?;
        // Prices and the minimum are numbers; names and notes are text.
        write_lines(
            &mut out,
            aligned_lines(HEAD, &cells(view.rows), |i| (2..9).contains(&i)),
        )?;
        out.flush()
    }
}

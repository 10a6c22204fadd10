//! The view of `tracecost models`, [`ModelsView`]: the price table in
//! every format.

use std::io::{self, Write};

use super::export::{
    CsvExporter, ExportFormat, Exportable, Exporter, JsonExporter, MarkdownExporter, TableExporter,
    aligned_lines, every_format, md_row, write_json, write_lines,
};
use super::fmt::{csv_field, fixed, md_escape};
use tracecost_cost::pricing::{ModelRow, Multipliers};

/// `tracecost models`: one row per price row of each priced model (a
/// model whose price changed has a row per day it changed).
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
    fn exporter<'e>(format: ExportFormat) -> Option<&'e dyn Exporter<Self>> {
        Some(every_format(format))
    }
}

const HEAD: [&str; 13] = [
    "model",
    "from",
    "aliases",
    "input",
    "write 5m",
    "write 1h",
    "read",
    "storage/h",
    "output",
    "window",
    "min cache",
    "long context",
    "modifiers",
];

/// The columns holding numbers (right-aligned): input to min cache.
const NUMBERS: std::ops::Range<usize> = 3..11;

fn cells(rows: &[ModelRow]) -> Vec<[String; 13]> {
    rows.iter()
        .map(|r| {
            [
                r.id.clone(),
                r.effective_from.map(|d| d.to_string()).unwrap_or_default(),
                r.aliases.join(" "),
                price(r.input),
                r.write_5m.map_or_else(|| "—".to_owned(), price),
                r.write_1h.map_or_else(|| "—".to_owned(), price),
                price(r.read),
                r.storage_per_hour.map_or_else(|| "—".to_owned(), price),
                price(r.output),
                r.window_tokens.to_string(),
                r.min_cacheable_tokens.to_string(),
                r.long_context.clone().unwrap_or_default(),
                modifiers(&r.modifiers),
            ]
        })
        .collect()
}

/// `fast ×2, regional ×1.1, flex ×0.5`: the modifiers a model has.
fn modifiers(m: &Multipliers) -> String {
    [("fast", m.fast), ("regional", m.regional), ("flex", m.flex)]
        .into_iter()
        .filter_map(|(name, f)| f.map(|f| format!("{name} ×{f}")))
        .collect::<Vec<_>>()
        .join(", ")
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
        writeln!(
            out,
            "|---|---|---|{}---|---|",
            "---:|".repeat(NUMBERS.len())
        )?;
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
            "Prices in USD per million tokens; from = the UTC day a row took effect (a call is priced at the row in force on its day; blank: the first row); storage/h = a cached content's storage per hour; window = input tokens a request may send; min cache = minimum cacheable prefix in tokens; modifiers = multiples of every rate for fast mode, regional endpoints and OpenAI's flex tier."
        )?;
        // Prices and the minimum are numbers; names and notes are text.
        write_lines(
            &mut out,
            aligned_lines(HEAD, &cells(view.rows), |i| NUMBERS.contains(&i)),
        )?;
        out.flush()
    }
}

//! What a report's numbers assume (prices, tokenizer, grid, baseline),
//! shown in every file kind: beneath the writers that show it.

use serde::Serialize;

/// What the numbers assume, shown in every report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Assumptions {
    /// Where prices come from, with their date, in one line.
    pub prices: String,
    /// Which price table priced the report: the built-in table's day and
    /// each pricing file given (its path, the SHA-256 of its bytes, its
    /// source), so that a reader, or a CI gate, can tell and pin it.
    pub price_table: tracecost_cost::pricing::PriceTableRecord,
    /// Tokenizer spec.
    pub tokenizer: String,
    /// Whether calibration was on.
    pub calibration: bool,
    /// Batch discount applied.
    pub batch: bool,
    /// The grid, described.
    pub grid: String,
    /// The config `--baseline` named, replayed on every trace as its
    /// status quo (absent: each trace's own status quo).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Calls left out of every figure for lack of a price, by model
    /// (written as `results.json`'s own `unpriced` member, not here).
    #[serde(skip)]
    pub unpriced: Vec<tracecost_app::unpriced::UnpricedModel>,
}

impl Assumptions {
    /// The lines that name the unpriced calls, one per model.
    pub fn unpriced_lines(&self) -> Vec<String> {
        self.unpriced
            .iter()
            .map(tracecost_app::unpriced::UnpricedModel::line)
            .collect()
    }
}

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
    /// What the inputs held that was not read (a damaged line or file
    /// `--skip-invalid` passed over, an entry of a folder that could not
    /// be read), one line each: every figure lacks it (written as
    /// `results.json`'s own `unread` member, not here).
    #[serde(skip)]
    pub unread: Vec<String>,
}

/// How many of the inputs not read a page names before it points to
/// `results.json`, which names them all: a file damaged on every line
/// would otherwise bury the report under its lines.
const UNREAD_SHOWN: usize = 10;

impl Assumptions {
    /// The lines that name the unpriced calls, one per model.
    pub fn unpriced_lines(&self) -> Vec<String> {
        self.unpriced
            .iter()
            .map(tracecost_app::unpriced::UnpricedModel::line)
            .collect()
    }

    /// The lines that name what was not read, the first
    /// [`UNREAD_SHOWN`] of them and then how many more `results.json`
    /// names.
    pub fn unread_lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self.unread.iter().take(UNREAD_SHOWN).cloned().collect();
        if self.unread.len() > UNREAD_SHOWN {
            out.push(format!(
                "and {} more; results.json's `unread` names every one",
                self.unread.len() - UNREAD_SHOWN
            ));
        }
        out
    }
}

//! The data files the massage-gun trace is written from
//! (`data/massage_gun/`): the brands, fee table and review themes, the word
//! lists, the tool manifest and the prose of the prompt, the task, the
//! final report and the description. Each is loaded once, on first use.

use std::sync::LazyLock;

use crate::data::{DataError, checked, json_records, list_file, loaded, tool_defs};
use tracecost_engine::message::ToolDefinition;

/// A brand in the search results (`data/massage_gun/tables.json`); prices
/// are in cents.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Brand<'a> {
    pub(super) name: &'a str,
    /// Product line, the start of every title.
    pub(super) line: &'a str,
    pub(super) manufacturer: &'a str,
    pub(super) lo: i64,
    pub(super) hi: i64,
    /// Whether Amazon itself sells the brand.
    pub(super) amazon: bool,
}

/// One row of the FBA fee table in the reference data.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SizeTier<'a> {
    pub(super) tier: &'a str,
    pub(super) max_lb: f64,
    pub(super) fee_usd: f64,
}

/// A complaint theme of the review insights.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Theme<'a> {
    pub(super) label: &'a str,
    pub(super) mentions: i64,
    pub(super) quote: &'a str,
}

/// Structured data (`data/massage_gun/tables.json`).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Tables<'a> {
    /// The first three are the category leaders, kept near the top of the
    /// search (see [`super::products`]).
    #[serde(borrow)]
    pub(super) brands: Vec<Brand<'a>>,
    #[serde(borrow)]
    pub(super) fba_size_tiers: Vec<SizeTier<'a>>,
    #[serde(borrow)]
    pub(super) review_themes: Vec<Theme<'a>>,
}

impl Tables<'static> {
    fn load() -> Result<Self, DataError> {
        const FILE: &str = "massage_gun/tables.json";
        let tables: Self = json_records(FILE, include_str!("../data/massage_gun/tables.json"))?;
        // What the generator indexes or picks from without a fallback.
        let problem = if tables.brands.len() < 3 || tables.fba_size_tiers.is_empty() {
            Some("needs at least three brands and one size tier".to_owned())
        } else {
            let bad_prices = tables.brands.iter().find(|b| b.lo <= 0 || b.lo > b.hi);
            bad_prices.map(|b| format!("brand {:?}: prices need 0 < lo <= hi", b.name))
        };
        checked(FILE, tables, problem)
    }
}

list_file! {
    /// Word lists (`data/massage_gun/words.txt`).
    pub(super) struct Words = "massage_gun/words.txt" {
        colors,
        features,
        model_prefixes,
        /// Browse-node paths of the reference data; the first is the leaf
        /// category of the search ([`super::LEAF_CATEGORY`]).
        category_paths,
        keywords,
        /// Appended to keywords once the list is used up.
        keyword_variants,
        review_titles,
        review_bodies,
    }
}

pub(super) static TABLES: LazyLock<Tables<'static>> = LazyLock::new(|| loaded(Tables::load()));
pub(super) static WORDS: LazyLock<Words> = LazyLock::new(|| loaded(Words::load()));
pub(super) static TOOLS: LazyLock<Vec<ToolDefinition>> = LazyLock::new(|| {
    loaded(tool_defs(
        "massage_gun/tools.json",
        include_str!("../data/massage_gun/tools.json"),
    ))
});

/// The agent's instructions (`data/massage_gun/system_prompt.md`).
pub(super) const SYSTEM_PROMPT: &str = include_str!("../data/massage_gun/system_prompt.md");
/// Heading of the reference data, before the browse-node list.
pub(super) const REFERENCE_INTRO: &str = include_str!("../data/massage_gun/reference_intro.md");
/// The referral fee section of the reference data.
pub(super) const REFERRAL_FEES: &str = include_str!("../data/massage_gun/referral_fees.md");

/// The user's request (`data/massage_gun/task.md`).
pub(super) const TASK: &str = include_str!("../data/massage_gun/task.md");

/// The final report (`data/massage_gun/final_report.md`); `{units}`,
/// `{top3_share}`, `{median_price}` and `{table}` come from the products.
pub(super) const FINAL_REPORT: &str = include_str!("../data/massage_gun/final_report.md");

/// The trace's description (`data/massage_gun/description.txt`).
pub(super) const DESCRIPTION: &str = include_str!("../data/massage_gun/description.txt");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::text_file;
    use crate::text::placeholders;

    #[test]
    fn data_files_load() {
        let tables = Tables::load().unwrap();
        let leaders: Vec<&str> = tables.brands[..3].iter().map(|b| b.name).collect();
        assert_eq!(leaders, ["Theragun", "Hyperice", "RENPHO"]);
        assert_eq!(tables.fba_size_tiers.len(), 18);
        assert_eq!(tables.review_themes.len(), 7);
        let words = Words::load().unwrap();
        assert!(words.category_paths[0].ends_with("> Electric Massagers"));
        let tools = tool_defs(
            "massage_gun/tools.json",
            include_str!("../data/massage_gun/tools.json"),
        )
        .unwrap();
        for called in [
            "keepa_product_search",
            "keepa_product_lookup",
            "jungle_scout_sales_estimates",
            "jungle_scout_keyword_search",
            "amazon_review_insights",
        ] {
            assert!(tools.iter().any(|t| t.name() == called), "{called}");
        }
        for prose in [
            SYSTEM_PROMPT,
            REFERENCE_INTRO,
            REFERRAL_FEES,
            TASK,
            DESCRIPTION,
        ] {
            let text = text_file(prose);
            assert!(!text.is_empty() && !text.ends_with('\n'), "{text}");
        }
        assert_eq!(
            placeholders(FINAL_REPORT),
            ["units", "top3_share", "median_price", "table"]
        );
    }
}

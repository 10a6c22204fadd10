//! The prompt: the agent's instructions and the reference tables of its
//! system prompt, sized to the published prefix, with the tool manifest.

use super::LEAF_CATEGORY;
use super::corpus::{REFERENCE_INTRO, REFERRAL_FEES, SYSTEM_PROMPT, TABLES, TOOLS, WORDS};
use crate::build::{fit, text};
use crate::data::text_file;
use crate::rng::Rng;
use crate::{MASSAGE_GUN_PREFIX_CHARS, prefix_chars};
use tracecost_engine::message::ContentBlock;
use tracecost_trace::Prompt;

/// The system blocks: instructions, then reference tables sized by `rows`.
fn system_blocks(rng: &Rng, rows: usize) -> Vec<ContentBlock> {
    let mut r = rng.fork("reference");
    let paths = &WORDS.category_paths;
    let mut refs = String::from(text_file(REFERENCE_INTRO));
    for (i, path) in paths.iter().enumerate() {
        refs.push_str(&format!(
            "\n- {} - {}",
            if i == 0 {
                LEAF_CATEGORY
            } else {
                // Stable made-up node ids for the neighbouring categories.
                1_000_000 + (1_163_377 * i as i64) % 19_000_000
            },
            path
        ));
    }
    refs.push_str("\n\n## FBA fulfillment fees, US, non-peak, effective 2025-01-15 (size tier | shipping weight up to lb | fee per unit)\n");
    for t in &TABLES.fba_size_tiers {
        refs.push_str(&format!(
            "| {} | {:.2} | ${:.2} |\n",
            t.tier, t.max_lb, t.fee_usd
        ));
    }
    refs.push('\n');
    refs.push_str(text_file(REFERRAL_FEES));
    refs.push_str(
        "\n\n## Seasonality index by node and month (100 = category average; Jan..Dec)\n",
    );
    for i in 0..rows {
        let path = paths[i % paths.len()];
        let leaf = path.rsplit(" > ").next().unwrap_or(path);
        let year = 2022 + (i / paths.len()) as i64 % 4;
        let mut line = format!("| {leaf} | {year} |");
        for m in 0..12 {
            let base = match m {
                6 => 118,
                10 => 131,
                11 => 164,
                0 => 104,
                _ => 86,
            };
            line.push_str(&format!(" {} |", base + r.range(0, 24) as i64 - 12));
        }
        refs.push_str(&line);
        refs.push('\n');
    }
    refs.push_str("\nSource: category team exports (Keepa, Jungle Scout, Seller Central business reports), refreshed monthly.");
    vec![text(text_file(SYSTEM_PROMPT)), text(&refs)]
}

/// The prompt, with the reference tables sized so that system + tools come
/// to about [`MASSAGE_GUN_PREFIX_CHARS`].
pub(super) fn prompt(rng: &Rng) -> Prompt {
    let tools = TOOLS.clone();
    fit(
        MASSAGE_GUN_PREFIX_CHARS,
        0,
        4000,
        |rows| Prompt {
            system: system_blocks(rng, rows),
            tools: tools.clone(),
        },
        prefix_chars,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::massage_gun::SEED;

    #[test]
    fn prompt_is_sized_to_the_target() {
        let p = prompt(&Rng::new(SEED));
        let n = prefix_chars(&p);
        assert!(
            n <= MASSAGE_GUN_PREFIX_CHARS && n + 300 >= MASSAGE_GUN_PREFIX_CHARS,
            "{n}"
        );
        assert_eq!(p.tools.len(), 15);
    }
}

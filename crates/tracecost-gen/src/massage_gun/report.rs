//! The agent's final report (`data/massage_gun/final_report.md` filled
//! from the products), and the figures as the agent's text spells them.

use super::corpus::FINAL_REPORT;
use super::products::Product;
use crate::data::text_file;
use crate::text::substitute;

pub(super) fn median(mut v: Vec<i64>) -> i64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

pub(super) fn usd(cents: i64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}

pub(super) fn thousands(v: i64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(super) fn final_report(ps: &[Product]) -> String {
    let top = &ps[..10];
    let total: i64 = ps.iter().map(|p| p.monthly_sold).sum();
    let top3: i64 = ps[..3].iter().map(|p| p.monthly_sold).sum();
    let mut table = String::from(
        "| # | Brand | ASIN | Price | BSR (H&H) | Bought/mo | Est. revenue/mo | Rating | Reviews |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for (i, p) in top.iter().enumerate() {
        table.push_str(&format!(
            "| {} | {} | {} | {} | {} | {}+ | ${} | {:.1} | {} |\n",
            i + 1,
            p.brand.name,
            p.asin,
            usd(p.price),
            thousands(p.rank),
            thousands(p.monthly_sold),
            thousands(p.monthly_sold * p.price / 100),
            p.rating as f64 / 10.0,
            thousands(p.reviews)
        ));
    }
    let med = median(ps.iter().map(|p| p.price).collect());
    let mut report = substitute(
        text_file(FINAL_REPORT),
        &[
            ("units", &thousands(total)),
            (
                "top3_share",
                &format!("{:.0}", 100.0 * top3 as f64 / total.max(1) as f64),
            ),
            ("median_price", &usd(med)),
            ("table", &table),
        ],
    );
    // The recorded report ends with a line break.
    report.push('\n');
    report
}

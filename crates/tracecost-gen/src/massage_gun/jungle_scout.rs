//! The Jungle Scout calls and payloads: daily sales estimates of the three
//! leaders (call 04, three tool calls in parallel) and the keyword search
//! (call 05).

use super::START_MS;
use super::corpus::WORDS;
use super::products::{Product, dollars};
use crate::build::{J, assistant, num, obj, strs, text, tool_result, tool_use, user};
use crate::rng::Rng;
use crate::text::date;
use tracecost_engine::message::Message;

pub(super) fn units_for(p: &Product, day: usize) -> i64 {
    // Monthly badge / 30, with a weekly rhythm and a Memorial Day bump.
    let base = (p.monthly_sold.max(100) as f64 * 1.3) / 30.0;
    let weekly = [0.92, 0.95, 1.0, 1.02, 1.05, 1.12, 0.98][day % 7];
    (base * weekly).round() as i64
}

pub(super) fn sales_messages(
    rng: &Rng,
    ps: &[Product],
    ids: &[String],
    analysis: &str,
    days: usize,
) -> (Message, Message) {
    let end_ms = START_MS - 86_400_000;
    let start_ms = end_ms - (days.saturating_sub(1) as u64) * 86_400_000;
    let mut uses = vec![text(analysis)];
    let mut results = Vec::new();
    for (k, p) in ps.iter().enumerate() {
        uses.push(tool_use(
            &ids[k],
            "jungle_scout_sales_estimates",
            &obj([
                ("asin", p.asin.as_str().into()),
                ("marketplace", "us".into()),
                ("start_date", date(start_ms).into()),
                ("end_date", date(end_ms).into()),
            ]),
        ));
        let mut r = rng.fork(&format!("js-sales-{}", p.asin));
        let data: Vec<J> = (0..days)
            .map(|d| {
                let day_ms = start_ms + d as u64 * 86_400_000;
                let noise = 80 + r.range(0, 40) as i64;
                let units = units_for(p, d) * noise / 100;
                let price = if r.chance(0.08) {
                    p.price * 85 / 100 / 100 * 100 + 99
                } else {
                    p.price
                };
                obj([
                    ("id", format!("us/{}/{}", p.asin, date(day_ms)).into()),
                    ("type", "sales_estimate_result".into()),
                    (
                        "attributes",
                        obj([
                            ("date", date(day_ms).into()),
                            ("estimated_units_sold", J::Int(units)),
                            ("last_known_price", dollars(price)),
                        ]),
                    ),
                ])
            })
            .collect();
        let doc = obj([
            ("data", J::Arr(data)),
            (
                "meta",
                obj([
                    ("asin", p.asin.as_str().into()),
                    ("is_parent", false.into()),
                    ("is_variant", true.into()),
                    ("parent_asin", p.parent.as_str().into()),
                    ("total_items", J::Int(days as i64)),
                ]),
            ),
            (
                "links",
                obj([(
                    "self",
                    format!(
                        "https://developer.junglescout.com/api/sales_estimates_query?marketplace=us&asin={}&start_date={}&end_date={}",
                        p.asin,
                        date(start_ms),
                        date(end_ms)
                    )
                    .into(),
                )]),
            ),
        ]);
        results.push(tool_result(&ids[k], &doc.compact(), false));
    }
    (assistant(uses), user(results))
}

pub(super) fn keyword_messages(
    rng: &Rng,
    id: &str,
    analysis: &str,
    n: usize,
) -> (Message, Message) {
    let call = assistant(vec![
        text(analysis),
        tool_use(
            id,
            "jungle_scout_keyword_search",
            &obj([
                ("search_terms", "massage gun".into()),
                ("marketplace", "us".into()),
                (
                    "categories",
                    strs(&["Health & Household", "Sports & Outdoors"]),
                ),
                ("min_monthly_search_volume_exact", J::Int(1000)),
                ("sort", "-monthly_search_volume_exact".into()),
                ("page_size", J::Int(50)),
            ]),
        ),
    ]);
    let mut r = rng.fork("js-keywords");
    let mut volume = 301_000_i64;
    let keywords = &WORDS.keywords;
    let variants = &WORDS.keyword_variants;
    let data: Vec<J> = keywords
        .iter()
        .cycle()
        .take(n)
        .enumerate()
        .map(|(i, kw)| {
            let name = if i < keywords.len() {
                (*kw).to_owned()
            } else {
                let round = i / keywords.len();
                format!("{kw} {}", variants[round % variants.len()])
            };
            let this = volume;
            volume = volume * (62 + r.range(0, 30) as i64) / 100 + 400;
            obj([
                ("id", format!("us/{name}").into()),
                ("type", "keywords_by_keyword_result".into()),
                (
                    "attributes",
                    obj([
                        ("country", "us".into()),
                        ("name", name.into()),
                        ("primary_asin", J::Null),
                        (
                            "monthly_trend",
                            num(r.range(0, 400) as f64 / 10.0 - 12.0, 2),
                        ),
                        ("monthly_search_volume_exact", J::Int(this)),
                        (
                            "quarterly_trend",
                            num(r.range(0, 600) as f64 / 10.0 - 20.0, 2),
                        ),
                        (
                            "monthly_search_volume_broad",
                            J::Int(this * (12 + r.range(0, 10) as i64) / 10),
                        ),
                        ("dominant_category", "Health & Household".into()),
                        ("recommended_promotions", J::Int(r.range(8, 260) as i64)),
                        ("sp_brand_ad_bid", num(r.range(90, 420) as f64 / 100.0, 2)),
                        ("ppc_bid_broad", num(r.range(80, 390) as f64 / 100.0, 2)),
                        ("ppc_bid_exact", num(r.range(90, 450) as f64 / 100.0, 2)),
                        ("ease_of_ranking_score", J::Int(r.range(1, 10) as i64)),
                        (
                            "relevancy_score",
                            J::Int(r.range(40, 1000) as i64 / 10 * 10),
                        ),
                        ("organic_product_count", J::Int(r.range(400, 9000) as i64)),
                        ("sponsored_product_count", J::Int(r.range(8, 160) as i64)),
                        ("updated_at", "2025-06-10T06:12:41.000Z".into()),
                    ]),
                ),
            ])
        })
        .collect();
    let doc = obj([
        ("data", J::Arr(data)),
        ("links", obj([("self", "https://developer.junglescout.com/api/keywords/keywords_by_keyword_query?marketplace=us&sort=-monthly_search_volume_exact&page[size]=50".into()), ("next", J::Null)])),
        ("meta", obj([("total_items", J::Int(n as i64))])),
    ]);
    (call, user(vec![tool_result(id, &doc.compact(), false)]))
}

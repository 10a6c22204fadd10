//! The `massage-gun` reference trace: a product-research agent that pulls one
//! huge Keepa payload into its context and pays for it on every later call.
//!
//! The published figures of the original trace are reproduced exactly where
//! they are counts and within a fraction of a percent where they are sizes;
//! see [`super::MASSAGE_GUN_CALL_CHARS`] and [`super::MASSAGE_GUN_INPUT_TOKENS`].

use super::build::{
    J, assistant, fit, ints, num, obj, prop, schema, strs, text, tool_def, tool_result, tool_use,
    user, user_text,
};
use super::rng::Rng;
use super::text::{date, keepa_minutes, sold_bucket};
use super::{
    MASSAGE_GUN_CALL_CHARS, MASSAGE_GUN_INPUT_TOKENS, MASSAGE_GUN_PREFIX_CHARS, messages_chars,
    prefix_chars,
};
use crate::engine::cache::ProviderKind;
use crate::engine::message::{ContentBlock, Message, ToolDefinition};
use crate::trace::{Call, Prompt, RecordedUsage, Trace};

/// 2025-06-12T14:03:00Z, when the first call started.
const START_MS: u64 = 1_749_736_980_000;

/// Milliseconds between consecutive call starts (model time plus tool time).
const GAPS_MS: [u64; 5] = [11_400, 19_800, 74_200, 33_500, 29_100];

const SEED: u64 = 0x6d61_7373_6167_6521;

/// Keepa's browse node of "Health & Household".
const ROOT_CATEGORY: i64 = 3_760_901;
/// "Electric Massagers" under Massage Tools & Equipment.
const LEAF_CATEGORY: i64 = 13_242_721;

/// Products in the search result; the first [`LOOKUP_COUNT`] are looked up.
const SEARCH_COUNT: usize = 20;
const LOOKUP_COUNT: usize = 20;

struct Brand {
    name: &'static str,
    line: &'static str,
    manufacturer: &'static str,
    lo: i64,
    hi: i64,
    amazon: bool,
}

#[rustfmt::skip]
const BRANDS: &[Brand] = &[
    Brand { name: "Theragun", line: "Theragun", manufacturer: "Therabody", lo: 19_900, hi: 39_900, amazon: true },
    Brand { name: "Hyperice", line: "Hypervolt", manufacturer: "Hyperice Inc.", lo: 12_900, hi: 32_900, amazon: true },
    Brand { name: "RENPHO", line: "RENPHO R3", manufacturer: "RENPHO", lo: 4_999, hi: 8_999, amazon: true },
    Brand { name: "TOLOCO", line: "TOLOCO EM26", manufacturer: "TOLOCO", lo: 2_999, hi: 5_999, amazon: false },
    Brand { name: "Bob and Brad", line: "Bob and Brad D6 Pro", manufacturer: "Bob and Brad", lo: 5_999, hi: 13_999, amazon: true },
    Brand { name: "Ekrin Athletics", line: "Ekrin B37", manufacturer: "Ekrin Athletics", lo: 12_900, hi: 22_900, amazon: false },
    Brand { name: "Achedaway", line: "Achedaway Pro", manufacturer: "Achedaway", lo: 8_999, hi: 17_999, amazon: false },
    Brand { name: "Sportneer", line: "Sportneer Elite", manufacturer: "Sportneer", lo: 4_999, hi: 7_999, amazon: false },
    Brand { name: "LifePro", line: "LifePro DynaMini", manufacturer: "LifePro Fitness", lo: 5_999, hi: 14_999, amazon: false },
    Brand { name: "OPOVE", line: "OPOVE M3 Pro", manufacturer: "OPOVE", lo: 6_999, hi: 12_999, amazon: false },
    Brand { name: "VYBE", line: "VYBE Premium", manufacturer: "VYBE Fitness", lo: 7_999, hi: 14_999, amazon: false },
    Brand { name: "MEBAK", line: "MEBAK 3", manufacturer: "MEBAK", lo: 3_999, hi: 6_999, amazon: false },
    Brand { name: "AERLANG", line: "AERLANG Mini", manufacturer: "AERLANG", lo: 2_999, hi: 4_999, amazon: false },
    Brand { name: "Medcursor", line: "Medcursor X1", manufacturer: "Medcursor", lo: 3_999, hi: 6_999, amazon: false },
    Brand { name: "Sharper Image", line: "Sharper Image Powerboost", manufacturer: "Sharper Image", lo: 7_999, hi: 17_999, amazon: true },
    Brand { name: "HoMedics", line: "HoMedics Therapist Select", manufacturer: "HoMedics", lo: 4_999, hi: 12_999, amazon: true },
    Brand { name: "Amazon Basics", line: "Amazon Basics", manufacturer: "Amazon", lo: 3_499, hi: 5_999, amazon: true },
    Brand { name: "Wahl", line: "Wahl Deep Tissue", manufacturer: "Wahl Clipper Corporation", lo: 3_999, hi: 6_999, amazon: true },
    Brand { name: "FitRx", line: "FitRx", manufacturer: "FitRx", lo: 4_999, hi: 8_999, amazon: false },
    Brand { name: "Nekteck", line: "Nekteck Deep Tissue", manufacturer: "Nekteck", lo: 3_999, hi: 6_999, amazon: false },
    Brand { name: "Actinow", line: "Actinow", manufacturer: "Actinow", lo: 4_999, hi: 8_999, amazon: false },
    Brand { name: "Ultrean", line: "Ultrean", manufacturer: "Ultrean", lo: 3_499, hi: 5_999, amazon: false },
    Brand { name: "Taotronics", line: "TaoTronics", manufacturer: "Sunvalley Group", lo: 4_499, hi: 7_999, amazon: false },
    Brand { name: "ROOT", line: "ROOT Recovery", manufacturer: "ROOT Wellness", lo: 8_999, hi: 15_999, amazon: false },
    Brand { name: "Zyllion", line: "Zyllion ZMA-30", manufacturer: "Zyllion", lo: 5_999, hi: 9_999, amazon: false },
];

const COLORS: &[&str] = &[
    "Black",
    "Matte Black",
    "Grey",
    "Space Gray",
    "White",
    "Navy Blue",
    "Sage Green",
    "Rose Gold",
    "Carbon",
];
const FEATURES: &[&str] = &[
    "Ultra Quiet Brushless Motor",
    "LCD Touch Screen",
    "Up to 6 Hours Battery Life",
    "USB-C Fast Charging",
    "Carrying Case Included",
    "12mm Amplitude for Deep Tissue",
    "Bluetooth App with Guided Routines",
    "Heated Massage Head",
    "Ergonomic Non-Slip Handle",
    "Auto Shut-Off after 10 Minutes",
    "Lightweight 1.5 lb Design",
    "Pressure Sensor with LED Ring",
    "Stall Force up to 60 lbs",
    "Gift for Men and Women",
];

struct Product {
    asin: String,
    parent: String,
    brand: &'static Brand,
    model: String,
    title: String,
    color: &'static str,
    price: i64,
    list_price: i64,
    rating: i64,
    reviews: i64,
    rank: i64,
    monthly_sold: i64,
    heads: i64,
    speeds: i64,
    weight_g: i64,
    since: i64,
    images: Vec<String>,
    part: String,
    upc: String,
    features: Vec<&'static str>,
}

fn asin(rng: &mut Rng) -> String {
    const ALNUM: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let tail: String = (0..8)
        .map(|_| char::from(ALNUM[rng.range_usize(0, 35)]))
        .collect();
    format!("B0{tail}")
}

fn image_name(rng: &mut Rng) -> String {
    format!("{}{}L.jpg", rng.range(41, 91), rng.base62(8))
}

fn products(rng: &Rng) -> Vec<Product> {
    let mut order: Vec<usize> = (0..BRANDS.len()).collect();
    let mut r = rng.fork("brand-order");
    // Fisher-Yates, keeping the two category leaders near the top.
    for i in (1..order.len()).rev() {
        let j = r.range_usize(0, i);
        order.swap(i, j);
    }
    order.retain(|&b| b > 2);
    order.insert(0, 2);
    order.insert(1, 0);
    order.insert(3, 1);
    let mut rank = 38 + r.range(0, 30) as i64;
    let now = keepa_minutes(START_MS);
    (0..SEARCH_COUNT)
        .map(|i| {
            let mut p = rng.fork(&format!("product-{i}"));
            let brand = &BRANDS[order[i % order.len()]];
            let price = (p.range(brand.lo as u64, brand.hi as u64) as i64 / 100) * 100 + 99;
            let list_price = if p.chance(0.6) { price + 1000 * p.range(1, 8) as i64 } else { price };
            let heads = p.pick(&[4, 5, 6, 8, 10, 12]);
            let speeds = p.pick(&[3, 5, 6, 20, 30]);
            let color = p.pick(COLORS);
            let model = format!("{}{}", p.pick(&["MG", "PX", "EM", "D", "X", "M"]), p.range(2, 39));
            let mut feats: Vec<&'static str> = Vec::new();
            while feats.len() < 3 {
                let f = p.pick(FEATURES);
                if !feats.contains(&f) {
                    feats.push(f);
                }
            }
            let title = format!(
                "{} {} Massage Gun Deep Tissue, Percussion Muscle Massager with {} Heads, {} Speeds, {} - {}",
                brand.line, model, heads, speeds, feats[0], color
            );
            let part = format!("{}-{}", model, p.range(100, 999));
            let rating = 40 + p.range(0, 8) as i64;
            let reviews = (p.range(800, 24_000) as i64) * if i < 5 { 2 } else { 1 };
            let this_rank = rank;
            rank = rank * (112 + p.range(0, 45) as i64) / 100 + 3;
            let monthly_sold = sold_bucket((420_000.0 / (this_rank as f64).powf(0.82)) as i64);
            let n_images = 6 + p.range_usize(0, 3);
            let images = (0..n_images).map(|_| image_name(&mut p)).collect();
            Product {
                asin: asin(&mut p),
                parent: asin(&mut p),
                brand,
                model,
                title,
                color,
                price,
                list_price,
                rating,
                reviews,
                rank: this_rank,
                monthly_sold,
                heads,
                speeds,
                weight_g: 480 + p.range(0, 900) as i64,
                since: now - 60 * 24 * p.range(300, 1800) as i64,
                images,
                part,
                upc: format!("{:012}", p.range(600_000_000_000, 899_999_999_999)),
                features: feats,
            }
        })
        .collect()
}

fn dollars(cents: i64) -> J {
    num(cents as f64 / 100.0, 2)
}

// ---------------------------------------------------------------- prompt

const SYSTEM_PROMPT: &str = "You are ProductScout, a senior Amazon marketplace research analyst working for a consumer-products company that launches private-label goods on Amazon US, UK and DE. You work autonomously with the tools provided and produce decision-ready research for the category team.

# How you work
1. Restate the research question in one sentence and list the figures you need before calling any tool.
2. Map the competitive set first (keepa_product_search, keepa_best_sellers), then pull full product histories for the leaders (keepa_product_lookup), then validate demand with independent estimates (jungle_scout_sales_estimates, jungle_scout_keyword_search) and customer sentiment (amazon_review_insights).
3. Prefer one well-scoped call over many small ones: batch ASINs (up to 100 per Keepa call), and request only the history window you need.
4. After every tool result, write a short interim analysis (3-8 bullet points) with the numbers you will rely on, so the final report never needs to re-read raw payloads.
5. Save durable findings with save_note as you go (key = short slug). Notes survive across sessions; raw tool results do not.
6. Finish with write_report only when every required section is backed by data; otherwise say which figure is missing and why.

# Data conventions
- Keepa prices are integers in the marketplace's smallest currency unit (cents for US). -1 means no offer at that time; -2 means the data point is not available.
- Keepa time is minutes since 2011-01-01 00:00 UTC: unix_minutes = keepa_minutes + 21564000. Convert before quoting any date.
- Keepa `csv` holds one flat array per price type, alternating [keepaTime, value, keepaTime, value, ...]; types with shipping (NEW_FBM_SHIPPING, BUY_BOX_SHIPPING) use triples [keepaTime, price, shipping]. Index map: 0 AMAZON, 1 NEW, 2 USED, 3 SALES (rank), 4 LISTPRICE, 5 COLLECTIBLE, 6 REFURBISHED, 7 NEW_FBM_SHIPPING, 8 LIGHTNING_DEAL, 9 WAREHOUSE, 10 NEW_FBA, 11 COUNT_NEW, 12 COUNT_USED, 13 COUNT_REFURBISHED, 14 COUNT_COLLECTIBLE, 15 EXTRA_INFO_UPDATES, 16 RATING (0-50), 17 COUNT_REVIEWS, 18 BUY_BOX_SHIPPING, 19-33 used/collectible sub-conditions.
- `stats.current`, `stats.avg30`, `stats.avg90`, `stats.avg180` follow the same index map; `stats.min`/`stats.max` hold [keepaTime, value] pairs or null.
- Sales rank is category-relative. Never compare ranks across root categories; quote the category with every rank.
- Jungle Scout sales estimates are modelled daily units, not actuals. Report them as ranges (plus or minus 20 percent) and say so.
- `monthlySold` from Keepa is Amazon's public \"bought in past month\" badge, rounded to buckets (50, 100, ... 1K, 2K, ... 10K+). Treat it as a floor.

# Analysis standards
- Revenue = units x average selling price over the same window; state the window.
- Price bands: report the 25th, 50th and 75th percentile of the current Buy Box price across the competitive set, and the share of units sold in each band.
- Seasonality: compare the last 90 days with the same window a year earlier when the history allows it; flag Prime Day, Black Friday and Q4 gifting spikes explicitly.
- Concentration: report the share of estimated units held by the top 3 and top 10 brands.
- Margin: use fba_fee_estimator with realistic package dimensions; include referral fee, FBA fee, landed cost assumptions and a 12 percent PPC allowance.
- Reviews: report the top 5 complaint themes with counts and one verbatim quote each; never paraphrase a quote.
- Always show your arithmetic for any figure that drives the recommendation (calculator is available and preferred over mental math).

# Output format
Final reports are Markdown with these sections: Executive summary (5 bullets max), Market size and trend, Competitive landscape (table), Price architecture, Customer voice, Unit economics, Risks, Recommendation and next steps. Tables use plain Markdown; numbers use thousands separators and currency symbols; every table has a source line.

# Guardrails
- Do not invent ASINs, brands, prices or quotes. If a tool fails, retry once with a narrower request, then report the gap.
- Do not fetch more than 100 ASINs in one Keepa call; Keepa tokens are billed to the team budget (roughly 1 token per ASIN plus offers pages).
- Never paste raw tool payloads into the report or notes; summarise.
- Respect robots.txt and site terms when using web_fetch; prefer official brand pages and reputable reviews for specifications.
- Health claims: massagers and similar devices are not medical devices; do not recommend medical claims in listings.";

const REFERENCE_INTRO: &str = "# Reference data (maintained by the category team, updated 2025-06-01)

The tables below are the team's working assumptions. Use them for sanity checks and for unit economics; live tool data always wins when the two disagree.

## Amazon US browse nodes commonly used by this team (node id - path)";

const CATEGORY_PATHS: &[&str] = &[
    "Health & Household > Wellness & Relaxation > Massage Tools & Equipment > Electric Massagers",
    "Health & Household > Wellness & Relaxation > Massage Tools & Equipment > Handheld Massagers",
    "Health & Household > Wellness & Relaxation > Massage Tools & Equipment > Foot Massagers",
    "Health & Household > Wellness & Relaxation > Massage Tools & Equipment > Neck & Shoulder Massagers",
    "Health & Household > Wellness & Relaxation > Massage Tools & Equipment > Massage Chairs",
    "Health & Household > Wellness & Relaxation > Massage Tools & Equipment > Massage Balls",
    "Health & Household > Wellness & Relaxation > Aromatherapy > Diffusers",
    "Health & Household > Health Care > Pain Relievers > TENS Units",
    "Health & Household > Health Care > Therapeutic Heat & Cold > Hot & Cold Packs",
    "Sports & Outdoors > Exercise & Fitness > Accessories > Foam Rollers",
    "Sports & Outdoors > Exercise & Fitness > Accessories > Massage Guns",
    "Sports & Outdoors > Exercise & Fitness > Yoga > Mats",
    "Sports & Outdoors > Exercise & Fitness > Strength Training Equipment > Resistance Bands",
    "Sports & Outdoors > Exercise & Fitness > Recovery > Compression Boots",
    "Beauty & Personal Care > Tools & Accessories > Facial Massagers",
    "Beauty & Personal Care > Skin Care > Tools > Gua Sha",
    "Electronics > Wearable Technology > Fitness Trackers",
    "Home & Kitchen > Bedding > Heated Blankets",
    "Home & Kitchen > Heating, Cooling & Air Quality > Humidifiers",
    "Baby > Health & Baby Care > Teethers",
];

const SIZE_TIERS: &[(&str, f64, f64)] = &[
    ("Small standard", 0.25, 3.06),
    ("Small standard", 0.5, 3.15),
    ("Small standard", 0.75, 3.24),
    ("Small standard", 1.0, 3.33),
    ("Large standard", 0.25, 3.68),
    ("Large standard", 0.5, 3.90),
    ("Large standard", 0.75, 4.15),
    ("Large standard", 1.0, 4.55),
    ("Large standard", 1.5, 4.99),
    ("Large standard", 2.0, 5.37),
    ("Large standard", 2.5, 5.52),
    ("Large standard", 3.0, 5.77),
    ("Large standard", 3.5, 5.87),
    ("Large standard", 4.0, 6.05),
    ("Small bulky", 5.0, 9.61),
    ("Small bulky", 10.0, 12.11),
    ("Large bulky", 20.0, 15.59),
    ("Large bulky", 40.0, 22.83),
];

const REFERRAL_FEES: &str = "## Referral fees (US, percent of total sales price, minimum $0.30)
- Health & Household: 8% for items priced $10.00 or less, 15% above.
- Sports & Outdoors: 15%.
- Beauty & Personal Care: 8% for items priced $10.00 or less, 15% above.
- Electronics accessories: 15% of the portion up to $100, 8% of any portion above $100.
- Personal computers and consumer electronics: 8%.
- Amazon Device Accessories: 45%.";

/// The system blocks: instructions, then reference tables sized by `rows`.
fn system_blocks(rng: &Rng, rows: usize) -> Vec<ContentBlock> {
    let mut r = rng.fork("reference");
    let mut refs = String::from(REFERENCE_INTRO);
    for (i, path) in CATEGORY_PATHS.iter().enumerate() {
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
    for (tier, lb, fee) in SIZE_TIERS {
        refs.push_str(&format!("| {tier} | {lb:.2} | ${fee:.2} |\n"));
    }
    refs.push('\n');
    refs.push_str(REFERRAL_FEES);
    refs.push_str(
        "\n\n## Seasonality index by node and month (100 = category average; Jan..Dec)\n",
    );
    for i in 0..rows {
        let path = CATEGORY_PATHS[i % CATEGORY_PATHS.len()];
        let leaf = path.rsplit(" > ").next().unwrap_or(path);
        let year = 2022 + (i / CATEGORY_PATHS.len()) as i64 % 4;
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
    vec![text(SYSTEM_PROMPT), text(&refs)]
}

fn string_array(description: &str, item: &str) -> J {
    obj([
        ("type", "array".into()),
        (
            "items",
            obj([("type", "string".into()), ("description", item.into())]),
        ),
        ("description", description.into()),
    ])
}

fn enum_prop(ty: &str, values: &[&str], description: &str) -> J {
    obj([
        ("type", ty.into()),
        ("enum", strs(values)),
        ("description", description.into()),
    ])
}

fn int_prop(description: &str, min: i64, max: i64, default: i64) -> J {
    obj([
        ("type", "integer".into()),
        ("minimum", J::Int(min)),
        ("maximum", J::Int(max)),
        ("default", J::Int(default)),
        ("description", description.into()),
    ])
}

const DOMAINS: &[&str] = &[
    "US", "GB", "DE", "FR", "JP", "CA", "IT", "ES", "IN", "MX", "BR",
];
const JS_MARKETS: &[&str] = &["us", "ca", "mx", "uk", "de", "fr", "it", "es", "in", "jp"];

fn tools() -> Vec<ToolDefinition> {
    vec![
        tool_def(
            "keepa_product_lookup",
            "Retrieve full Keepa product objects for up to 100 ASINs in one request (Keepa /product endpoint). Returns Keepa's raw JSON: for each product the `csv` price and rank histories (flat arrays of [keepaTime, value, ...], one per price type; see the index map in the system prompt), `stats` (current, avg30, avg90, avg180, min, max per price type) when `stats` is set, `offers` with per-seller offer histories when `offers` is set, `salesRanks` per category, `categoryTree`, `monthlySold`, package dimensions, FBA fees, features and description. Payloads are large: roughly 10-25 KB per ASIN with a one-year history and 20 offers. Token cost: 1 Keepa token per ASIN, plus 6 per offers page, plus 1 when `rating` is requested. Use after narrowing the competitive set; do not use for discovery.",
            &schema(
                vec![
                    (
                        "asins",
                        string_array(
                            "ASINs to look up (10 characters each, max 100).",
                            "An Amazon ASIN such as B0C5XG8Q9V.",
                        ),
                    ),
                    (
                        "domain",
                        enum_prop("string", DOMAINS, "Amazon marketplace. Default US."),
                    ),
                    (
                        "stats",
                        int_prop(
                            "Include the stats object computed over the last N days (0 = omit).",
                            0,
                            3650,
                            180,
                        ),
                    ),
                    (
                        "history",
                        prop(
                            "boolean",
                            "Include the csv price/rank histories. Default true.",
                        ),
                    ),
                    (
                        "days",
                        int_prop(
                            "Limit histories to the last N days (0 = full history).",
                            0,
                            3650,
                            365,
                        ),
                    ),
                    (
                        "offers",
                        int_prop(
                            "Number of marketplace offers to retrieve (20-100); 0 omits offers.",
                            0,
                            100,
                            0,
                        ),
                    ),
                    (
                        "rating",
                        prop(
                            "boolean",
                            "Include RATING and COUNT_REVIEWS histories (costs one extra token per product).",
                        ),
                    ),
                    (
                        "buybox",
                        prop(
                            "boolean",
                            "Include Buy Box history and Buy Box seller statistics.",
                        ),
                    ),
                    (
                        "update",
                        int_prop(
                            "Refresh products whose data is older than this many hours (0 = always refresh, -1 = never).",
                            -1,
                            168,
                            24,
                        ),
                    ),
                ],
                &["asins"],
            ),
        ),
        tool_def(
            "keepa_product_search",
            "Search the Keepa product database by keyword and filters and return a compact list of matching products (ASIN, title, brand, current price, rating, review count, sales rank and Amazon's monthly-sold badge). Results are sorted server-side; 25 per page. Use this for discovery and to build the competitive set, then call keepa_product_lookup on the ASINs you need in depth. Token cost: 10 Keepa tokens per page.",
            &schema(
                vec![
                    (
                        "domain",
                        enum_prop("string", DOMAINS, "Amazon marketplace. Default US."),
                    ),
                    (
                        "term",
                        prop("string", "Keyword query, as a shopper would type it."),
                    ),
                    (
                        "category",
                        prop("integer", "Restrict to a browse node id (optional)."),
                    ),
                    (
                        "sort_by",
                        enum_prop(
                            "string",
                            &[
                                "sales_rank",
                                "price_asc",
                                "price_desc",
                                "rating",
                                "review_count",
                                "newest",
                            ],
                            "Sort order. Default sales_rank.",
                        ),
                    ),
                    ("page", int_prop("Result page, 0-based.", 0, 40, 0)),
                    ("per_page", int_prop("Results per page.", 10, 50, 25)),
                    (
                        "min_rating",
                        prop("number", "Minimum average star rating (1.0-5.0)."),
                    ),
                    (
                        "price_min",
                        prop("number", "Minimum current price in dollars."),
                    ),
                    (
                        "price_max",
                        prop("number", "Maximum current price in dollars."),
                    ),
                    (
                        "include_fields",
                        string_array(
                            "Fields to include for each product (default: all compact fields).",
                            "A field name such as price or monthlySold.",
                        ),
                    ),
                ],
                &["term"],
            ),
        ),
        tool_def(
            "keepa_best_sellers",
            "Return the ASIN list of a category's best sellers as tracked by Keepa (up to 500 ASINs, ordered by current sales rank, or by the 30/90/180-day average rank). Lists are only available for root categories and the main sub-categories. Token cost: 50 Keepa tokens.",
            &schema(
                vec![
                    (
                        "domain",
                        enum_prop("string", DOMAINS, "Amazon marketplace. Default US."),
                    ),
                    ("category", prop("integer", "Browse node id.")),
                    (
                        "range",
                        enum_prop(
                            "integer",
                            &["0", "30", "90", "180"],
                            "Rank by current rank (0) or by the average rank over the last N days.",
                        ),
                    ),
                    ("limit", int_prop("Maximum ASINs returned.", 1, 500, 100)),
                    (
                        "include_variations",
                        prop(
                            "boolean",
                            "Keep every variation instead of one ASIN per parent.",
                        ),
                    ),
                ],
                &["category"],
            ),
        ),
        tool_def(
            "keepa_category_lookup",
            "Look up Amazon browse nodes: name, parent chain, child nodes, product count and the highest sales rank seen in the node. Accepts node ids or a search term. Use it to confirm which node a rank refers to before comparing ranks. Token cost: 1 Keepa token.",
            &schema(
                vec![
                    (
                        "domain",
                        enum_prop("string", DOMAINS, "Amazon marketplace. Default US."),
                    ),
                    (
                        "category_ids",
                        obj([
                            ("type", "array".into()),
                            ("items", obj([("type", "integer".into())])),
                            ("description", "Browse node ids to resolve.".into()),
                        ]),
                    ),
                    (
                        "search_term",
                        prop(
                            "string",
                            "Find nodes whose name contains this term (alternative to category_ids).",
                        ),
                    ),
                    (
                        "include_parents",
                        prop("boolean", "Include the full parent chain of each node."),
                    ),
                ],
                &[],
            ),
        ),
        tool_def(
            "jungle_scout_sales_estimates",
            "Daily sales estimates for one ASIN from the Jungle Scout API (sales_estimates_query). Returns JSON:API documents: `data` is a list of `sales_estimate_result` records, one per day, each with `attributes.date`, `attributes.estimated_units_sold` and `attributes.last_known_price`. Estimates are modelled from sales rank and are typically within plus or minus 20 percent of actuals for established listings; new listings and variation children are less reliable. The date range may not exceed 366 days and must end before today. One request per ASIN; issue several calls in parallel when you need several ASINs.",
            &schema(
                vec![
                    ("asin", prop("string", "The ASIN to estimate.")),
                    (
                        "marketplace",
                        enum_prop(
                            "string",
                            JS_MARKETS,
                            "Jungle Scout marketplace code. Default us.",
                        ),
                    ),
                    ("start_date", prop("string", "First day, YYYY-MM-DD.")),
                    (
                        "end_date",
                        prop("string", "Last day, YYYY-MM-DD (before today)."),
                    ),
                ],
                &["asin", "start_date", "end_date"],
            ),
        ),
        tool_def(
            "jungle_scout_keyword_search",
            "Keyword research from the Jungle Scout API (keywords_by_keyword_query): related search terms with exact and broad monthly search volume, 30-day and quarterly trend, PPC bids (exact, broad, Sponsored Brands), ease-of-ranking score, relevancy score and organic/sponsored product counts. Use it to size demand, find long-tail terms and estimate advertising cost.",
            &schema(
                vec![
                    ("search_terms", prop("string", "Seed keyword.")),
                    (
                        "marketplace",
                        enum_prop(
                            "string",
                            JS_MARKETS,
                            "Jungle Scout marketplace code. Default us.",
                        ),
                    ),
                    (
                        "categories",
                        string_array(
                            "Restrict to these top-level categories.",
                            "A category name such as Health & Household.",
                        ),
                    ),
                    (
                        "min_monthly_search_volume_exact",
                        prop("integer", "Drop terms below this exact-match volume."),
                    ),
                    (
                        "sort",
                        enum_prop(
                            "string",
                            &[
                                "-monthly_search_volume_exact",
                                "-relevancy_score",
                                "-ease_of_ranking_score",
                                "ppc_bid_exact",
                            ],
                            "Sort order.",
                        ),
                    ),
                    ("page_size", int_prop("Terms per page.", 1, 100, 50)),
                ],
                &["search_terms"],
            ),
        ),
        tool_def(
            "jungle_scout_product_database",
            "Query the Jungle Scout product database with filters (category, price, estimated monthly sales and revenue, review count, rating, listing age, seller type) and return matching products with their estimated monthly units and revenue. Good for spotting under-served niches and recent entrants; for established leaders prefer keepa_product_lookup plus jungle_scout_sales_estimates.",
            &schema(
                vec![
                    (
                        "include_keywords",
                        string_array("Title keywords that must appear.", "A keyword."),
                    ),
                    (
                        "exclude_keywords",
                        string_array("Title keywords that must not appear.", "A keyword."),
                    ),
                    (
                        "categories",
                        string_array("Top-level categories.", "A category name."),
                    ),
                    ("price_min", prop("number", "Minimum price in dollars.")),
                    ("price_max", prop("number", "Maximum price in dollars.")),
                    (
                        "sales_min",
                        prop("integer", "Minimum estimated monthly units."),
                    ),
                    ("reviews_max", prop("integer", "Maximum number of reviews.")),
                    (
                        "listing_age_max_days",
                        prop("integer", "Only listings younger than this."),
                    ),
                    (
                        "seller_types",
                        string_array("Seller types to include.", "One of amz, fba, fbm."),
                    ),
                    (
                        "sort",
                        enum_prop(
                            "string",
                            &[
                                "-approximate_30_day_revenue",
                                "-approximate_30_day_units_sold",
                                "-reviews",
                                "price",
                            ],
                            "Sort order.",
                        ),
                    ),
                    ("page_size", int_prop("Products per page.", 1, 100, 50)),
                ],
                &["categories"],
            ),
        ),
        tool_def(
            "amazon_review_insights",
            "Fetch recent Amazon customer reviews for up to 10 ASINs and cluster them into themes. Returns the themes (label, mention count, share of reviews, average star rating, up to three verbatim quotes) and the underlying reviews (rating, title, body, date, verified purchase, helpful votes). Filter by star rating to focus on complaints. Reviews are fetched live and may take 10-30 seconds.",
            &schema(
                vec![
                    (
                        "asins",
                        string_array("ASINs whose reviews to analyse (max 10).", "An ASIN."),
                    ),
                    (
                        "star_filter",
                        obj([
                            ("type", "array".into()),
                            (
                                "items",
                                obj([
                                    ("type", "integer".into()),
                                    ("minimum", J::Int(1)),
                                    ("maximum", J::Int(5)),
                                ]),
                            ),
                            (
                                "description",
                                "Only reviews with these star ratings.".into(),
                            ),
                        ]),
                    ),
                    ("max_reviews", int_prop("Reviews per ASIN.", 10, 200, 50)),
                    (
                        "since",
                        prop("string", "Only reviews on or after this date (YYYY-MM-DD)."),
                    ),
                    (
                        "summarize",
                        prop("boolean", "Cluster reviews into themes. Default true."),
                    ),
                ],
                &["asins"],
            ),
        ),
        tool_def(
            "fba_fee_estimator",
            "Estimate Amazon fees for one unit: referral fee, FBA fulfillment fee (2025 US rate card, size tier from package dimensions and shipping weight including dimensional weight), monthly storage per unit (standard and Q4 rates) and the resulting net proceeds before product cost and advertising.",
            &schema(
                vec![
                    ("price", prop("number", "Selling price in dollars.")),
                    ("length_in", prop("number", "Longest package side, inches.")),
                    ("width_in", prop("number", "Median package side, inches.")),
                    (
                        "height_in",
                        prop("number", "Shortest package side, inches."),
                    ),
                    (
                        "weight_lb",
                        prop("number", "Unit weight including packaging, pounds."),
                    ),
                    (
                        "category",
                        prop("string", "Referral fee category, e.g. Health & Household."),
                    ),
                    (
                        "marketplace",
                        enum_prop(
                            "string",
                            &["US", "CA", "UK", "DE"],
                            "Marketplace. Default US.",
                        ),
                    ),
                ],
                &["price", "length_in", "width_in", "height_in", "weight_lb"],
            ),
        ),
        tool_def(
            "web_search",
            "Search the web and return the top results (title, URL, snippet, publication date when known). Use for brand announcements, product specifications, regulatory notices and press coverage. Do not use for Amazon prices or ranks; use the Keepa tools instead.",
            &schema(
                vec![
                    ("query", prop("string", "Search query.")),
                    ("num_results", int_prop("Results to return.", 1, 20, 8)),
                    (
                        "recency_days",
                        prop("integer", "Only pages published in the last N days."),
                    ),
                    (
                        "site",
                        prop("string", "Restrict to one domain, e.g. hyperice.com."),
                    ),
                ],
                &["query"],
            ),
        ),
        tool_def(
            "web_fetch",
            "Fetch a web page and return its main content as Markdown (navigation, ads and scripts removed). Long pages are truncated to `max_chars`. Respects robots.txt; returns an error for pages that disallow automated access.",
            &schema(
                vec![
                    ("url", prop("string", "Absolute http(s) URL.")),
                    (
                        "format",
                        enum_prop(
                            "string",
                            &["markdown", "text", "html"],
                            "Output format. Default markdown.",
                        ),
                    ),
                    (
                        "max_chars",
                        int_prop(
                            "Truncate the content to this many characters.",
                            1000,
                            200_000,
                            40_000,
                        ),
                    ),
                ],
                &["url"],
            ),
        ),
        tool_def(
            "calculator",
            "Evaluate an arithmetic expression exactly (decimal arithmetic, no floating-point drift). Supports + - * / ^, parentheses, percent, min, max, sum, avg, median, round(x, n). Use for every figure that goes into a report.",
            &schema(
                vec![
                    (
                        "expression",
                        prop(
                            "string",
                            "Expression to evaluate, e.g. round(sum(412, 398, 455) / 3, 1).",
                        ),
                    ),
                    (
                        "precision",
                        int_prop("Decimal places in the result.", 0, 12, 2),
                    ),
                ],
                &["expression"],
            ),
        ),
        tool_def(
            "save_note",
            "Save a research note that persists across sessions (overwrites a note with the same key). Use short slugs as keys, e.g. massage-gun/price-bands. Notes are plain Markdown, at most 8,000 characters.",
            &schema(
                vec![
                    (
                        "key",
                        prop("string", "Note key (slug, may contain slashes)."),
                    ),
                    ("content", prop("string", "Markdown content.")),
                    ("tags", string_array("Tags for retrieval.", "A tag.")),
                ],
                &["key", "content"],
            ),
        ),
        tool_def(
            "read_notes",
            "Read saved research notes by key or tag. Returns the notes' keys, last-modified dates and content.",
            &schema(
                vec![
                    (
                        "key",
                        prop("string", "Exact key, or a prefix ending in a slash."),
                    ),
                    ("tag", prop("string", "Return notes with this tag.")),
                    ("limit", int_prop("Maximum notes.", 1, 50, 10)),
                ],
                &[],
            ),
        ),
        tool_def(
            "write_report",
            "Publish the final research report to the team workspace and return its URL. The report must follow the section structure from the system prompt. Calling this ends the research task.",
            &schema(
                vec![
                    ("title", prop("string", "Report title.")),
                    (
                        "format",
                        enum_prop(
                            "string",
                            &["markdown", "pdf", "both"],
                            "Output format. Default markdown.",
                        ),
                    ),
                    (
                        "sections",
                        obj([
                            ("type", "array".into()),
                            (
                                "items",
                                schema(
                                    vec![
                                        ("heading", prop("string", "Section heading.")),
                                        ("body", prop("string", "Section body, Markdown.")),
                                    ],
                                    &["heading", "body"],
                                ),
                            ),
                            ("description", "Report sections in order.".into()),
                        ]),
                    ),
                    (
                        "share_with",
                        string_array("Email addresses to notify.", "An email address."),
                    ),
                ],
                &["title", "sections"],
            ),
        ),
    ]
}

/// The prompt, with the reference tables sized so that system + tools come
/// to about [`MASSAGE_GUN_PREFIX_CHARS`].
fn prompt(rng: &Rng) -> Prompt {
    let tools = tools();
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

// ---------------------------------------------------------------- messages

const TASK: &str = "We're evaluating a private-label massage gun for Amazon US, launch target Q4 2025 (ideally before Black Friday). Please research the category and give me a go/no-go recommendation.

What I need:
- Who the leaders are (brands, price points, sales rank, estimated monthly units and revenue), and how concentrated the market is.
- Price history for the top sellers over the past year: how deep and how often do they discount, and what did Prime Day / Black Friday look like?
- Demand trend and seasonality. Is the category still growing or flat?
- What customers complain about in the 1-3 star reviews of the top products, so we know what to fix.
- Rough unit economics for a $79-$99 product (our landed cost quote is $21.40/unit, package about 11 x 9 x 4 in, 3.1 lb).

Use Keepa for price/rank history and Jungle Scout for sales estimates and keywords. Keep the final write-up to about two pages; the category team will read it on Monday.";

fn search_message(rng: &Rng, ps: &[Product], id: &str, images: usize) -> Message {
    let mut list = Vec::new();
    let base = images / ps.len();
    let extra = images % ps.len();
    for (i, p) in ps.iter().enumerate() {
        let n = (base + usize::from(i < extra)).min(p.images.len() + 12);
        let mut r = rng.fork(&format!("search-images-{i}"));
        let imgs: Vec<String> = (0..n)
            .map(|k| {
                p.images
                    .get(k)
                    .cloned()
                    .unwrap_or_else(|| image_name(&mut r))
            })
            .collect();
        list.push(obj([
            ("asin", p.asin.as_str().into()),
            ("title", p.title.as_str().into()),
            ("brand", p.brand.name.into()),
            ("price", dollars(p.price)),
            ("listPrice", dollars(p.list_price)),
            ("rating", num(p.rating as f64 / 10.0, 1)),
            ("reviewCount", p.reviews.into()),
            ("salesRank", p.rank.into()),
            ("monthlySold", p.monthly_sold.into()),
            ("isPrime", true.into()),
            ("imagesCSV", imgs.join(",").into()),
        ]));
    }
    let payload = obj([
        ("domain", "US".into()),
        ("term", "massage gun".into()),
        ("totalResults", J::Int(1843)),
        ("page", J::Int(0)),
        ("perPage", J::Int(SEARCH_COUNT as i64)),
        ("tokensConsumed", J::Int(10)),
        ("products", J::Arr(list)),
    ]);
    user(vec![tool_result(id, &payload.compact(), false)])
}

/// Backward random walk from `now`, returned in chronological order as
/// flat `[t, v, (extra), ...]`.
fn history(
    rng: &mut Rng,
    now: i64,
    n: usize,
    step: (u64, u64),
    start: i64,
    mut next: impl FnMut(&mut Rng, i64) -> i64,
    extra: Option<i64>,
) -> Vec<i64> {
    let mut points = Vec::with_capacity(n);
    let mut t = now - rng.range(5, 600) as i64;
    let mut v = start;
    for _ in 0..n {
        points.push((t, v));
        t -= rng.range(step.0, step.1) as i64;
        v = next(rng, v);
    }
    points.reverse();
    let mut flat = Vec::with_capacity(n * 3);
    for (t, v) in points {
        flat.push(t);
        flat.push(v);
        if let Some(s) = extra {
            flat.push(if v < 0 { -1 } else { s });
        }
    }
    flat
}

fn price_walk(base: i64, oos: f64) -> impl FnMut(&mut Rng, i64) -> i64 {
    move |r: &mut Rng, v: i64| {
        if r.chance(oos) {
            return -1;
        }
        if v > 0 && r.chance(0.55) {
            return v;
        }
        let pct = 70 + r.range(0, 45) as i64;
        (base * pct / 100 / 100) * 100 + 99
    }
}

const CSV_TYPES: usize = 34;

struct Series {
    values: Vec<Option<Vec<i64>>>,
    stride: Vec<usize>,
}

fn series(p: &Product, rng: &Rng, new_points: usize) -> Series {
    let now = keepa_minutes(START_MS);
    let mut values: Vec<Option<Vec<i64>>> = vec![None; CSV_TYPES];
    let mut stride = vec![2; CSV_TYPES];
    let r = |slot: usize| rng.fork(&format!("{}-csv-{slot}", p.asin));
    let price = p.price;
    if p.brand.amazon {
        let mut g = r(0);
        let n = g.range_usize(40, 110);
        values[0] = Some(history(
            &mut g,
            now,
            n,
            (300, 5000),
            price,
            price_walk(price, 0.06),
            None,
        ));
    }
    let mut g = r(1);
    values[1] = Some(history(
        &mut g,
        now,
        new_points,
        (120, 2400),
        price,
        price_walk(price, 0.0),
        None,
    ));
    let mut g = r(2);
    let n = g.range_usize(8, 40);
    values[2] = Some(history(
        &mut g,
        now,
        n,
        (600, 9000),
        price * 78 / 100,
        price_walk(price * 78 / 100, 0.2),
        None,
    ));
    let mut g = r(3);
    let n = g.range_usize(50, 110);
    let rank = p.rank;
    values[3] = Some(history(
        &mut g,
        now,
        n,
        (60, 1400),
        rank,
        move |r, _| rank * (55 + r.range(0, 110) as i64) / 100 + 1,
        None,
    ));
    let mut g = r(4);
    let n = g.range_usize(2, 8);
    values[4] = Some(history(
        &mut g,
        now,
        n,
        (20_000, 90_000),
        p.list_price,
        price_walk(p.list_price, 0.0),
        None,
    ));
    let mut g = r(7);
    let n = g.range_usize(10, 40);
    stride[7] = 3;
    values[7] = Some(history(
        &mut g,
        now,
        n,
        (600, 8000),
        price + 500,
        price_walk(price + 500, 0.1),
        Some(0),
    ));
    let mut g = r(10);
    let n = g.range_usize(20, 50);
    values[10] = Some(history(
        &mut g,
        now,
        n,
        (200, 4000),
        price,
        price_walk(price, 0.02),
        None,
    ));
    let mut g = r(11);
    let n = g.range_usize(20, 50);
    let sellers = 3 + (p.rank % 9);
    values[11] = Some(history(
        &mut g,
        now,
        n,
        (200, 4000),
        sellers,
        move |r, _| (sellers + r.range(0, 6) as i64 - 3).max(1),
        None,
    ));
    let mut g = r(12);
    let n = g.range_usize(5, 25);
    values[12] = Some(history(
        &mut g,
        now,
        n,
        (1000, 20_000),
        2,
        |r, _| r.range(0, 4) as i64,
        None,
    ));
    let mut g = r(16);
    let n = g.range_usize(4, 14);
    let rating = p.rating;
    values[16] = Some(history(
        &mut g,
        now,
        n,
        (8000, 40_000),
        rating,
        move |r, v| (v + r.range(0, 2) as i64 - 1).clamp(rating - 3, rating + 1),
        None,
    ));
    let mut g = r(17);
    let n = g.range_usize(20, 50);
    values[17] = Some(history(
        &mut g,
        now,
        n,
        (1500, 9000),
        p.reviews,
        |r, v| (v - r.range(5, 120) as i64).max(1),
        None,
    ));
    let mut g = r(18);
    let n = g.range_usize(30, 70);
    stride[18] = 3;
    values[18] = Some(history(
        &mut g,
        now,
        n,
        (150, 3500),
        price,
        price_walk(price, 0.01),
        Some(0),
    ));
    Series { values, stride }
}

struct Stats {
    current: Vec<i64>,
    avg: [Vec<i64>; 4],
    min: Vec<J>,
    max: Vec<J>,
    min_all: i64,
}

fn stats(s: &Series) -> Stats {
    let now = keepa_minutes(START_MS);
    let windows = [i64::MAX, 30 * 1440, 90 * 1440, 180 * 1440];
    let mut st = Stats {
        current: vec![-1; CSV_TYPES],
        avg: [
            vec![-1; CSV_TYPES],
            vec![-1; CSV_TYPES],
            vec![-1; CSV_TYPES],
            vec![-1; CSV_TYPES],
        ],
        min: vec![J::Null; CSV_TYPES],
        max: vec![J::Null; CSV_TYPES],
        min_all: i64::MAX,
    };
    for (slot, v) in s.values.iter().enumerate() {
        let Some(v) = v else { continue };
        let pts: Vec<(i64, i64)> = v.chunks(s.stride[slot]).map(|c| (c[0], c[1])).collect();
        if let Some(&(_, last)) = pts.last() {
            st.current[slot] = last;
        }
        for (w, window) in windows.iter().enumerate() {
            let vals: Vec<i64> = pts
                .iter()
                .filter(|(t, v)| *v >= 0 && now - t <= *window)
                .map(|&(_, v)| v)
                .collect();
            st.avg[w][slot] = if vals.is_empty() {
                st.current[slot]
            } else {
                vals.iter().sum::<i64>() / vals.len() as i64
            };
        }
        let valid = pts.iter().filter(|(_, v)| *v >= 0);
        if let Some(&(t, m)) = valid.clone().min_by_key(|(_, v)| *v) {
            st.min[slot] = ints(&[t, m]);
            if slot == 1 {
                st.min_all = m;
            }
        }
        if let Some(&(t, m)) = valid.max_by_key(|(_, v)| *v) {
            st.max[slot] = ints(&[t, m]);
        }
    }
    st
}

fn seller_id(rng: &mut Rng) -> String {
    const UP: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let s: String = (0..13)
        .map(|_| char::from(UP[rng.range_usize(0, 35)]))
        .collect();
    format!("A{s}")
}

fn keepa_product(p: &Product, rng: &Rng, new_points: usize) -> J {
    let now = keepa_minutes(START_MS);
    let s = series(p, rng, new_points);
    let st = stats(&s);
    let mut r = rng.fork(&format!("{}-meta", p.asin));
    let csv: Vec<J> = s
        .values
        .iter()
        .map(|v| v.as_ref().map_or(J::Null, |v| ints(v)))
        .collect();
    let mut offers = Vec::new();
    let n_offers = r.range_usize(3, 8);
    let mut sellers = Vec::new();
    for k in 0..n_offers {
        let is_amazon = p.brand.amazon && k == 0;
        let sid = if is_amazon {
            "ATVPDKIKX0DER".to_owned()
        } else {
            seller_id(&mut r)
        };
        let n = r.range_usize(3, 10);
        let offer_price = p.price + r.range(0, 3000) as i64 - 500;
        let csv = history(
            &mut r,
            now,
            n,
            (400, 9000),
            offer_price.max(999),
            price_walk(offer_price.max(999), 0.05),
            Some(if k % 3 == 0 { 599 } else { 0 }),
        );
        let stock_n = r.range_usize(2, 8);
        let stock_now = r.range(5, 400) as i64;
        let stock = history(
            &mut r,
            now,
            stock_n,
            (1000, 9000),
            stock_now,
            |r, _| r.range(0, 400) as i64,
            None,
        );
        let fba = is_amazon || r.chance(0.7);
        sellers.push(sid.clone());
        offers.push(obj([
            ("offerId", J::Int(k as i64)),
            ("lastSeen", J::Int(now - r.range(0, 400) as i64)),
            ("sellerId", sid.into()),
            ("offerCSV", ints(&csv)),
            ("condition", J::Int(1)),
            ("conditionComment", J::Null),
            ("isPrime", fba.into()),
            ("isMAP", false.into()),
            ("isShippable", true.into()),
            ("isAddonItem", false.into()),
            ("isPreorder", false.into()),
            ("isWarehouseDeal", false.into()),
            ("isScam", false.into()),
            ("isAmazon", is_amazon.into()),
            ("isPrimeExcl", false.into()),
            ("isFBA", fba.into()),
            ("shipsFromChina", (!fba && r.chance(0.5)).into()),
            ("minOrderQty", J::Int(1)),
            ("lastStockUpdate", J::Int(now - r.range(0, 3000) as i64)),
            ("stockCSV", ints(&stock)),
        ]));
    }
    let mut ranks = J::Obj(Vec::new());
    let root_ranks = s.values[3].clone().unwrap_or_default();
    let n = r.range_usize(30, 80);
    let leaf_rank = (p.rank / 9).max(1);
    let leaf = history(
        &mut r,
        now,
        n,
        (60, 1800),
        leaf_rank,
        move |r, _| leaf_rank * (55 + r.range(0, 110) as i64) / 100 + 1,
        None,
    );
    ranks.push(&ROOT_CATEGORY.to_string(), ints(&root_ranks));
    ranks.push(&LEAF_CATEGORY.to_string(), ints(&leaf));
    let tree = J::Arr(
        [
            (ROOT_CATEGORY, "Health & Household"),
            (10_079_992, "Wellness & Relaxation"),
            (3_764_441, "Massage Tools & Equipment"),
            (LEAF_CATEGORY, "Electric Massagers"),
        ]
        .iter()
        .map(|(id, name)| obj([("catId", J::Int(*id)), ("name", (*name).into())]))
        .collect(),
    );
    let monthly_hist: Vec<i64> = {
        let mut out = Vec::new();
        let mut t = now - 360 * 1440;
        let mut v = p.monthly_sold;
        while t < now {
            out.push(t);
            out.push(v);
            t += r.range(10_000, 60_000) as i64;
            v = sold_bucket(p.monthly_sold * (60 + r.range(0, 80) as i64) / 100).max(50);
        }
        out
    };
    let description = format!(
        "<p><b>{} {}</b> delivers professional-grade percussive therapy at home. {} interchangeable heads target large muscle groups, joints and trigger points, while {} speed levels (1,800-3,200 percussions per minute) let you move from warm-up to deep tissue recovery.</p><p>{}. {}. {}.</p><p>What's in the box: massage gun, {} heads, USB-C cable, carrying case, user manual. Backed by a 1-year warranty and lifetime customer support.</p>",
        p.brand.line,
        p.model,
        p.heads,
        p.speeds,
        p.features[0],
        p.features[1],
        p.features[2],
        p.heads
    );
    let fees = obj([
        ("lastUpdate", J::Int(now - r.range(1000, 20_000) as i64)),
        (
            "pickAndPackFee",
            J::Int(if p.weight_g > 900 { 699 } else { 599 }),
        ),
    ]);
    let stats = obj([
        ("current", ints(&st.current)),
        ("avg", ints(&st.avg[0])),
        ("avg30", ints(&st.avg[1])),
        ("avg90", ints(&st.avg[2])),
        ("avg180", ints(&st.avg[3])),
        ("atIntervalStart", ints(&st.avg[3])),
        ("min", J::Arr(st.min.clone())),
        ("max", J::Arr(st.max.clone())),
        ("minInInterval", J::Arr(st.min)),
        ("maxInInterval", J::Arr(st.max)),
        ("outOfStockPercentageInInterval", ints(&vec![0; CSV_TYPES])),
        (
            "outOfStockPercentage30",
            ints(
                &(0..CSV_TYPES)
                    .map(|i| {
                        if i == 0 && p.brand.amazon {
                            r.range(0, 12) as i64
                        } else {
                            0
                        }
                    })
                    .collect::<Vec<_>>(),
            ),
        ),
        (
            "outOfStockPercentage90",
            ints(
                &(0..CSV_TYPES)
                    .map(|i| {
                        if i == 0 && p.brand.amazon {
                            r.range(0, 20) as i64
                        } else {
                            0
                        }
                    })
                    .collect::<Vec<_>>(),
            ),
        ),
        ("lastOffersUpdate", J::Int(now - r.range(0, 600) as i64)),
        ("totalOfferCount", J::Int(n_offers as i64)),
        ("lightningDealInfo", J::Null),
        (
            "salesRankDrops30",
            J::Int((p.monthly_sold / 40).clamp(3, 900)),
        ),
        (
            "salesRankDrops90",
            J::Int((p.monthly_sold / 13).clamp(9, 2700)),
        ),
        (
            "salesRankDrops180",
            J::Int((p.monthly_sold / 7).clamp(18, 5400)),
        ),
        (
            "salesRankDrops365",
            J::Int((p.monthly_sold / 3).clamp(36, 10_800)),
        ),
        ("buyBoxPrice", J::Int(p.price)),
        ("buyBoxShipping", J::Int(0)),
        ("buyBoxIsUnqualified", false.into()),
        ("buyBoxIsShippable", true.into()),
        ("buyBoxIsPreorder", false.into()),
        ("buyBoxIsFBA", true.into()),
        ("buyBoxIsAmazon", p.brand.amazon.into()),
        ("buyBoxIsMAP", false.into()),
        ("buyBoxIsUsed", false.into()),
        (
            "buyBoxSellerId",
            sellers.first().cloned().unwrap_or_default().into(),
        ),
        ("buyBoxAvg30", J::Int(st.avg[1][18])),
        ("buyBoxAvg90", J::Int(st.avg[2][18])),
        (
            "buyBoxMin",
            J::Int(if st.min_all == i64::MAX {
                p.price
            } else {
                st.min_all
            }),
        ),
        ("sellerIdsLowestFBA", strs(&sellers[..sellers.len().min(2)])),
        (
            "sellerIdsLowestFBM",
            strs(&sellers[sellers.len().saturating_sub(1)..]),
        ),
        ("offerCountFBA", J::Int((n_offers as i64 * 7 / 10).max(1))),
        ("offerCountFBM", J::Int((n_offers as i64 * 3 / 10).max(0))),
    ]);
    obj([
        ("csv", J::Arr(csv)),
        ("categories", ints(&[LEAF_CATEGORY])),
        ("imagesCSV", p.images.join(",").into()),
        ("manufacturer", p.brand.manufacturer.into()),
        ("title", p.title.as_str().into()),
        ("lastUpdate", J::Int(now - r.range(0, 90) as i64)),
        ("lastPriceChange", J::Int(now - r.range(100, 9000) as i64)),
        ("rootCategory", J::Int(ROOT_CATEGORY)),
        ("productType", J::Int(0)),
        ("parentAsin", p.parent.as_str().into()),
        ("variationCSV", format!("{},{}", p.asin, p.parent).into()),
        ("asin", p.asin.as_str().into()),
        ("domainId", J::Int(1)),
        ("type", "MASSAGER".into()),
        ("hasReviews", true.into()),
        ("trackingSince", J::Int(p.since)),
        ("brand", p.brand.name.into()),
        ("productGroup", "Health and Beauty".into()),
        ("partNumber", p.part.as_str().into()),
        ("model", p.model.as_str().into()),
        ("color", p.color.into()),
        ("size", "One Size".into()),
        ("packageHeight", J::Int(95 + r.range(0, 40) as i64)),
        ("packageLength", J::Int(280 + r.range(0, 60) as i64)),
        ("packageWidth", J::Int(220 + r.range(0, 50) as i64)),
        ("packageWeight", J::Int(p.weight_g + 400)),
        ("packageQuantity", J::Int(1)),
        ("itemHeight", J::Int(240 + r.range(0, 30) as i64)),
        ("itemLength", J::Int(180 + r.range(0, 30) as i64)),
        ("itemWidth", J::Int(60 + r.range(0, 20) as i64)),
        ("itemWeight", J::Int(p.weight_g)),
        ("isAdultProduct", false.into()),
        ("isEligibleForTradeIn", false.into()),
        ("isEligibleForSuperSaverShipping", true.into()),
        ("offers", J::Arr(offers)),
        ("buyBoxSellerIdHistory", strs(&sellers.iter().flat_map(|s| [(now - r.range(1000, 200_000) as i64).to_string(), s.clone()]).collect::<Vec<_>>())),
        ("isRedirectASIN", false.into()),
        ("isSNS", false.into()),
        ("features", strs(&p.features.iter().map(|f| format!("{f}: engineered for everyday recovery and tested for 1,000+ hours of continuous use.")).collect::<Vec<_>>())),
        ("description", description.into()),
        ("frequentlyBoughtTogether", strs(&[asin(&mut r), asin(&mut r)])),
        ("categoryTree", tree),
        ("salesRankReference", J::Int(ROOT_CATEGORY)),
        ("salesRanks", ranks),
        ("salesRankReferenceHistory", ints(&[p.since, ROOT_CATEGORY])),
        ("launchpad", false.into()),
        ("liveOffersOrder", ints(&(0..n_offers as i64).collect::<Vec<_>>())),
        ("fbaFees", fees),
        ("referralFeePercent", J::Int(15)),
        ("referralFeePercentage", num(15.0, 2)),
        ("stats", stats),
        ("monthlySold", J::Int(p.monthly_sold)),
        ("monthlySoldHistory", ints(&monthly_hist)),
        ("upcList", strs(&[p.upc.as_str()])),
        ("eanList", strs(&[format!("0{}", p.upc)])),
        ("coupon", J::Null),
        ("promotions", J::Null),
    ])
}

fn lookup_message(rng: &Rng, ps: &[Product], id: &str, new_points: usize) -> Message {
    let base = new_points / ps.len();
    let extra = new_points % ps.len();
    let products: Vec<J> = ps
        .iter()
        .enumerate()
        .map(|(i, p)| keepa_product(p, rng, base + usize::from(i < extra)))
        .collect();
    let payload = obj([
        (
            "timestamp",
            J::Int((START_MS + GAPS_MS[0] + GAPS_MS[1] - 6_200) as i64),
        ),
        ("tokensLeft", J::Int(1_184)),
        ("refillIn", J::Int(41_577)),
        ("refillRate", J::Int(20)),
        ("tokenFlowReduction", num(0.0, 1)),
        ("tokensConsumed", J::Int(2 * ps.len() as i64 + 1)),
        ("processingTimeInMs", J::Int(3_917)),
        ("products", J::Arr(products)),
    ]);
    user(vec![tool_result(id, &payload.compact(), false)])
}

fn units_for(p: &Product, day: usize) -> i64 {
    // Monthly badge / 30, with a weekly rhythm and a Memorial Day bump.
    let base = (p.monthly_sold.max(100) as f64 * 1.3) / 30.0;
    let weekly = [0.92, 0.95, 1.0, 1.02, 1.05, 1.12, 0.98][day % 7];
    (base * weekly).round() as i64
}

fn sales_messages(
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

const KEYWORDS: &[&str] = &[
    "massage gun",
    "massage gun deep tissue",
    "theragun",
    "hypervolt",
    "percussion massager",
    "muscle massager",
    "mini massage gun",
    "massage gun for back",
    "handheld massager",
    "back massager",
    "deep tissue massager",
    "massage gun for athletes",
    "heated massage gun",
    "massage gun attachments",
    "renpho massage gun",
    "quiet massage gun",
    "massage gun for neck and shoulders",
    "portable massage gun",
    "massage gun black friday",
    "massage gun gift for men",
    "massage gun with heat",
    "cordless massager",
    "fascia gun",
    "muscle recovery tools",
    "sports massager",
    "percussion massage gun",
    "massage gun for women",
    "theragun mini",
    "hypervolt go 2",
    "toloco massage gun",
    "bob and brad massage gun",
    "massage gun long handle",
    "massage gun for feet",
    "massage gun for legs",
    "electric muscle massager",
    "vibration massager",
];

fn keyword_messages(rng: &Rng, id: &str, analysis: &str, n: usize) -> (Message, Message) {
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
    let data: Vec<J> = KEYWORDS
        .iter()
        .cycle()
        .take(n)
        .enumerate()
        .map(|(i, kw)| {
            let name = if i < KEYWORDS.len() {
                (*kw).to_owned()
            } else {
                format!("{kw} {}", ["2025", "sale", "best"][i / KEYWORDS.len() % 3])
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

/// 1-3 star reviews the insights tool clustered (40 per ASIN requested).
const REVIEWS_ANALYZED: i64 = 114;

const REVIEW_TITLES: &[&str] = &[
    "Stopped charging after 3 months",
    "Way louder than advertised",
    "Good power but the battery dies fast",
    "Heads keep falling out",
    "Not as strong as my old one",
    "Broke right after the return window",
    "Too heavy for my wife to use",
    "Great until the motor started grinding",
    "Case is flimsy, gun is fine",
    "Customer service never answered",
    "Stalls when you press hard",
    "Decent for the price",
];

const REVIEW_BODIES: &[&str] = &[
    "Used it after every run for about ten weeks and it was great, then one day it would not take a charge at all. Tried two different USB-C cables and bricks.",
    "The listing says ultra quiet but at speed 3 and above it rattles loud enough that I can't use it while my kid sleeps.",
    "Battery claims 6 hours; I get maybe 90 minutes on the middle setting before it cuts out.",
    "The round and bullet heads work loose during use and one flew across the room. The fork head fits fine.",
    "If you lean into your quads at all it stalls. Fine for light work, not for deep tissue.",
    "Motor started making a grinding noise around month four and the percussion became uneven.",
    "It weighs almost 2.5 lb which sounds fine until you try to reach your own upper back.",
    "The screen shows a battery percentage that jumps from 60 to 10 without warning.",
    "Contacted support three times about a replacement head, no reply. Had to buy third-party heads.",
    "Honestly works as well as the $300 one my gym has, but the carrying case zipper broke on day two.",
    "Arrived with a scratched handle and the box had clearly been opened before.",
    "Speed settings are too close together, levels 1-10 all feel the same and then 11-20 are too aggressive.",
];

const THEMES: &[(&str, i64, &str)] = &[
    (
        "Battery life and charging failures",
        23,
        "Battery claims 6 hours; I get maybe 90 minutes on the middle setting before it cuts out.",
    ),
    (
        "Noise at higher speeds",
        17,
        "At speed 3 and above it rattles loud enough that I can't use it while my kid sleeps.",
    ),
    (
        "Stalls under pressure / weak motor",
        15,
        "If you lean into your quads at all it stalls.",
    ),
    (
        "Durability after 3-6 months",
        14,
        "Motor started making a grinding noise around month four.",
    ),
    (
        "Attachment heads loosen or break",
        11,
        "The round and bullet heads work loose during use.",
    ),
    (
        "Weight and ergonomics for self-use",
        9,
        "It weighs almost 2.5 lb which sounds fine until you try to reach your own upper back.",
    ),
    (
        "Customer service and warranty",
        7,
        "Contacted support three times about a replacement head, no reply.",
    ),
];

fn review_messages(
    rng: &Rng,
    ps: &[Product],
    id: &str,
    analysis: &str,
    n: usize,
) -> (Message, Message) {
    let asins: Vec<&str> = ps.iter().map(|p| p.asin.as_str()).collect();
    let call = assistant(vec![
        text(analysis),
        tool_use(
            id,
            "amazon_review_insights",
            &obj([
                ("asins", strs(&asins)),
                ("star_filter", ints(&[1, 2, 3])),
                ("max_reviews", J::Int(40)),
                ("since", "2024-12-01".into()),
                ("summarize", true.into()),
            ]),
        ),
    ]);
    let mut r = rng.fork("reviews");
    let themes: Vec<J> = THEMES
        .iter()
        .map(|(label, count, quote)| {
            obj([
                ("label", (*label).into()),
                ("mentions", J::Int(*count)),
                ("share", num(*count as f64 / REVIEWS_ANALYZED as f64, 3)),
                ("avgRating", num(1.6 + r.range(0, 9) as f64 / 10.0, 1)),
                ("quotes", strs(&[*quote])),
            ])
        })
        .collect();
    let reviews: Vec<J> = (0..n)
        .map(|i| {
            let p = &ps[i % ps.len()];
            let day = START_MS - r.range(2, 190) * 86_400_000;
            obj([
                ("asin", p.asin.as_str().into()),
                (
                    "reviewId",
                    format!("R{}", r.base62(13).to_uppercase()).into(),
                ),
                ("rating", J::Int(r.range(1, 3) as i64)),
                ("title", (r.pick(REVIEW_TITLES)).into()),
                ("body", (r.pick(REVIEW_BODIES)).into()),
                ("date", date(day).into()),
                ("verifiedPurchase", r.chance(0.9).into()),
                ("helpfulVotes", J::Int(r.range(0, 60) as i64)),
                ("variant", format!("Color: {}", p.color).into()),
            ])
        })
        .collect();
    let doc = obj([
        ("asins", strs(&asins)),
        ("reviewsAnalyzed", J::Int(REVIEWS_ANALYZED)),
        ("reviewsReturned", J::Int(n as i64)),
        ("starFilter", ints(&[1, 2, 3])),
        ("themes", J::Arr(themes)),
        ("reviews", J::Arr(reviews)),
    ]);
    (call, user(vec![tool_result(id, &doc.compact(), false)]))
}

fn median(mut v: Vec<i64>) -> i64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

fn usd(cents: i64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}

fn thousands(v: i64) -> String {
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

fn final_report(ps: &[Product]) -> String {
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
    format!(
        "# Massage guns on Amazon US: go/no-go\n\n## Executive summary\n- **Recommendation: GO, with a differentiated $89 product launched by mid-October.** The category is large and steady, and the top complaints (battery, noise, stalling) are fixable engineering problems.\n- The top 20 listings show at least {}+ units/month combined on Amazon's bought-in-past-month badges; the top 3 hold {:.0}% of that.\n- Median Buy Box price across the set is {}; the $50-$100 band carries the most units, premium brands hold the $200+ band.\n- Demand is seasonal: Q4 gifting roughly doubles November-December volume versus the yearly average; Prime Day adds a 2-3 week spike.\n- At $89 the unit economics clear 30% contribution margin after fees, landed cost and a 12% PPC allowance.\n\n## Competitive landscape\n{}\nSource: Keepa product data and Jungle Scout sales estimates, pulled 2025-06-12.\n\n## Price architecture\nLeaders discount 15-30% for Prime Day and Black Friday and hold list price the rest of the year. Mid-tier brands run coupons almost continuously; their effective price sits 8-12% under the Buy Box price shown above.\n\n## Customer voice\nThe 1-3 star reviews cluster around battery life and charging failures (24% of complaints), noise at higher speeds (18%), stalling under pressure (16%) and durability after 3-6 months (15%). A product with a verified 4-hour battery, a sub-60 dB motor and a 50+ lb stall force answers the four largest complaint themes.\n\n## Unit economics (at $89.00)\n| Item | Per unit |\n|---|---|\n| Referral fee (15%) | $13.35 |\n| FBA fee (large standard, 3.1 lb) | $6.12 |\n| Landed cost | $21.40 |\n| PPC allowance (12%) | $10.68 |\n| Returns and damages (4%) | $3.56 |\n| **Contribution** | **$33.89 (38.1%)** |\n\n## Risks\n- Price pressure from sub-$40 brands during Q4 deal events.\n- Review velocity: leaders have tens of thousands of reviews; plan Vine enrolment and a 90-day review ramp.\n- Battery certification (UN38.3) and FCC testing lead times.\n\n## Next steps\n1. Confirm motor and battery specs with the supplier against the complaint themes above.\n2. Lock the $89 price with a $99 list price and a launch coupon.\n3. Budget $18K for launch PPC across the top 15 keywords.\n",
        thousands(total),
        100.0 * top3 as f64 / total.max(1) as f64,
        usd(med),
        table,
    )
}

/// Characters of each assistant reply → plausible output tokens.
fn output_tokens(reply: &Message, extra: u64) -> u64 {
    (reply.to_json().chars().count() as u64 * 10).div_ceil(36) + extra
}

/// Builds the massage-gun trace (see [`super::massage_gun`]).
pub(crate) fn build() -> Trace {
    let rng = Rng::new(SEED);
    let prompt = prompt(&rng);
    let ps = products(&rng);
    let mut ids = rng.fork("tool-ids");
    let search_id = ids.tool_use_id();
    let lookup_id = ids.tool_use_id();
    let sales_ids: Vec<String> = (0..3).map(|_| ids.tool_use_id()).collect();
    let keyword_id = ids.tool_use_id();
    let review_id = ids.tool_use_id();

    let m1 = user_text(TASK);
    let m2 = assistant(vec![
        text(
            "I'll start by mapping the competitive set: a Keepa search for \"massage gun\" sorted by sales rank gives me the leaders, their price points and Amazon's monthly-sold badges. Then I'll pull one-year price and rank histories for the top 20 in a single Keepa lookup.",
        ),
        tool_use(
            &search_id,
            "keepa_product_search",
            &obj([
                ("domain", "US".into()),
                ("term", "massage gun".into()),
                ("category", J::Int(ROOT_CATEGORY)),
                ("sort_by", "sales_rank".into()),
                ("page", J::Int(0)),
                ("per_page", J::Int(SEARCH_COUNT as i64)),
                ("min_rating", num(3.5, 1)),
            ]),
        ),
    ]);
    let mut msgs = vec![m1, m2];
    let mut size = messages_chars(&msgs);
    let budget = |target: usize, size: usize, fixed: &[&Message]| {
        let fixed: usize = fixed.iter().map(|m| m.to_json().chars().count() + 1).sum();
        target.saturating_sub(size + fixed + 1)
    };

    // call-02: search result, sized by the number of product images listed.
    let b = budget(MASSAGE_GUN_CALL_CHARS[0], size, &[]);
    let m3 = fit(
        b,
        0,
        400,
        |k| search_message(&rng, &ps, &search_id, k),
        |m| m.to_json().chars().count(),
    );
    msgs.push(m3);
    size = messages_chars(&msgs);

    // call-03: the huge Keepa product lookup.
    let looked = &ps[..LOOKUP_COUNT];
    let top_brands: Vec<&str> = ps[..5].iter().map(|p| p.brand.name).collect();
    let m4 = assistant(vec![
        text(&format!(
            "The search returns 1,843 results; the top {} by sales rank are led by {}. Prices split into a budget tier (${}-$60), a mid tier ($60-$150) and a premium tier ($199+). Monthly-sold badges range from {}+ for the leader to {}+ at position {}. Next I'll pull full one-year Keepa histories, stats and offers for the top {} ASINs in one lookup.",
            SEARCH_COUNT,
            top_brands.join(", "),
            ps.iter().map(|p| p.price).min().unwrap_or(0) / 100,
            thousands(ps[0].monthly_sold),
            thousands(ps[SEARCH_COUNT - 1].monthly_sold),
            SEARCH_COUNT,
            LOOKUP_COUNT
        )),
        tool_use(
            &lookup_id,
            "keepa_product_lookup",
            &obj([
                (
                    "asins",
                    strs(&looked.iter().map(|p| p.asin.as_str()).collect::<Vec<_>>()),
                ),
                ("domain", "US".into()),
                ("stats", J::Int(180)),
                ("history", true.into()),
                ("days", J::Int(365)),
                ("offers", J::Int(20)),
                ("rating", true.into()),
                ("buybox", true.into()),
            ]),
        ),
    ]);
    let b = budget(MASSAGE_GUN_CALL_CHARS[1], size, &[&m4]);
    let m5 = fit(
        b,
        0,
        20_000,
        |k| lookup_message(&rng, looked, &lookup_id, k),
        |m| m.to_json().chars().count(),
    );
    msgs.push(m4);
    msgs.push(m5);
    size = messages_chars(&msgs);

    // call-04: three parallel Jungle Scout sales estimates, sized by days.
    let trio = &ps[..3];
    let analysis = format!(
        "Keepa histories for the top {n} are in. Key points:\n- Median Buy Box price across the {n}: {med}; the {b0} leader sits at {p0} with sales rank {r0} in Health & Household.\n- Leaders held list price most of the year and cut 15-30% for Prime Day (July 2024) and Black Friday; mid-tier brands run near-continuous coupons.\n- Offer counts are low (3-7 per listing) and the Buy Box is FBA on every listing; Amazon itself sells {amz} of the {n}.\n- Review counts are deep: the top 5 average {rev} reviews.\nTo turn ranks into units I'll get daily Jungle Scout sales estimates for the three leaders in parallel.",
        n = LOOKUP_COUNT,
        med = usd(median(looked.iter().map(|p| p.price).collect())),
        b0 = ps[0].brand.name,
        p0 = usd(ps[0].price),
        r0 = thousands(ps[0].rank),
        amz = looked.iter().filter(|p| p.brand.amazon).count(),
        rev = thousands(ps[..5].iter().map(|p| p.reviews).sum::<i64>() / 5),
    );
    let b = budget(MASSAGE_GUN_CALL_CHARS[2], size, &[]);
    let (m6, m7) = fit(
        b,
        1,
        366,
        |d| sales_messages(&rng, trio, &sales_ids, &analysis, d),
        |(a, u)| a.to_json().chars().count() + 1 + u.to_json().chars().count(),
    );
    msgs.push(m6);
    msgs.push(m7);
    size = messages_chars(&msgs);

    // call-05: keyword research, sized by the number of keywords.
    let analysis = format!(
        "Jungle Scout estimates line up with the Keepa badges: the {} listing averages roughly {} units/day, with weekends 5-12% above weekdays and a visible bump around Memorial Day. Next, keyword demand and PPC cost for the category.",
        ps[0].brand.name,
        units_for(&ps[0], 3),
    );
    let b = budget(MASSAGE_GUN_CALL_CHARS[3], size, &[]);
    let (m8, m9) = fit(
        b,
        1,
        200,
        |n| keyword_messages(&rng, &keyword_id, &analysis, n),
        |(a, u)| a.to_json().chars().count() + 1 + u.to_json().chars().count(),
    );
    msgs.push(m8);
    msgs.push(m9);
    size = messages_chars(&msgs);

    // call-06: review insights, sized by the number of reviews returned.
    let analysis = "\"massage gun\" alone has about 301K exact monthly searches with exact-match bids around $1-$4.50; long-tail terms (heated, mini, for back) are cheaper and growing. Last step before writing: what customers dislike about the three leaders.";
    let b = budget(MASSAGE_GUN_CALL_CHARS[4], size, &[]);
    let (m10, m11) = fit(
        b,
        1,
        400,
        |n| review_messages(&rng, trio, &review_id, analysis, n),
        |(a, u)| a.to_json().chars().count() + 1 + u.to_json().chars().count(),
    );
    msgs.push(m10);
    msgs.push(m11);

    let m12 = assistant(vec![text(&final_report(&ps))]);
    msgs.push(m12);

    let mut calls = Vec::new();
    let mut start = START_MS;
    for k in 0..6 {
        let sent = 2 * k + 1;
        let reply = &msgs[sent];
        let out = output_tokens(reply, [41, 57, 212, 96, 133, 318][k]);
        let usage = RecordedUsage {
            input_tokens: if k == 0 {
                None
            } else {
                Some(MASSAGE_GUN_INPUT_TOKENS[k - 1])
            },
            output_tokens: Some(out),
            ..RecordedUsage::default()
        };
        calls.push(Call {
            messages: sent,
            start_ms: Some(start),
            model: None,
            prompt: 0,
            markers: None,
            usage: Some(usage),
        });
        if k < GAPS_MS.len() {
            start += GAPS_MS[k];
        }
    }
    Trace {
        name: "massage-gun".to_owned(),
        description: DESCRIPTION.to_owned(),
        provider: ProviderKind::Anthropic,
        model: "claude-opus-4-1-20250805".to_owned(),
        hidden_prefix_tokens: 0,
        prompts: vec![prompt],
        messages: msgs,
        calls,
    }
}

const DESCRIPTION: &str = "Product-research agent (Claude Opus 4.1) sizing the Amazon US massage-gun category with Keepa and Jungle Scout. Call 3 fetches one ~360 KB Keepa product payload that every later call resends. Regenerated deterministically by tracecost::trace::generate::massage_gun() from the published figures of the original trace: messages sent per call 1/3/5/7/9/11; call-02 sends 10.6K characters of messages and call-03 374K; recorded uncached input tokens 23,000 (call-02), 114,000 (call-03) and 128,000 / 130,000 / 132,000 for calls 04-06, which are the published \"around 130K\" figures rounded; call-01 records output tokens only. Prices were $15 per million uncached input tokens (Claude Opus 4 / 4.1). Payload contents (ASINs, prices, histories, reviews) are synthetic.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_are_ranked_and_consistent() {
        let ps = products(&Rng::new(SEED));
        assert_eq!(ps.len(), SEARCH_COUNT);
        assert!(ps.windows(2).all(|w| w[0].rank < w[1].rank));
        assert!(
            ps.iter()
                .all(|p| p.asin.len() == 10 && p.asin.starts_with("B0"))
        );
        assert!(
            ps.iter()
                .all(|p| p.price % 100 == 99 && p.list_price >= p.price)
        );
    }

    #[test]
    fn keepa_histories_are_chronological_and_end_at_the_current_price() {
        let rng = Rng::new(SEED);
        let ps = products(&rng);
        let s = series(&ps[0], &rng, 50);
        for (slot, v) in s.values.iter().enumerate() {
            let Some(v) = v else { continue };
            let times: Vec<i64> = v.chunks(s.stride[slot]).map(|c| c[0]).collect();
            assert!(times.windows(2).all(|w| w[0] < w[1]), "slot {slot}");
            assert!(*times.last().unwrap() <= keepa_minutes(START_MS));
        }
        let new = s.values[1].as_ref().unwrap();
        assert_eq!(new.len(), 100);
        assert_eq!(new[new.len() - 1], ps[0].price);
    }

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

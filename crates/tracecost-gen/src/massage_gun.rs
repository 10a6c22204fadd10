//! The `massage-gun` reference trace: a product-research agent that pulls one
//! huge Keepa payload into its context and pays for it on every later call.
//!
//! The published figures of the original trace are reproduced exactly where
//! they are counts and within a fraction of a percent where they are sizes;
//! see [`super::MASSAGE_GUN_CALL_CHARS`] and [`super::MASSAGE_GUN_INPUT_TOKENS`].

use std::sync::LazyLock;

use super::build::{
    J, assistant, call, fit, ints, num, obj, strs, text, tool_result, tool_use, user, user_text,
};
use super::data::{DataError, checked, json_records, list_file, loaded, text_file, tool_defs};
use super::rng::Rng;
use super::text::{date, keepa_minutes, sold_bucket, substitute};
use super::{
    MASSAGE_GUN_CALL_CHARS, MASSAGE_GUN_INPUT_TOKENS, MASSAGE_GUN_PREFIX_CHARS, messages_chars,
    prefix_chars,
};
use crate::engine::cache::ProviderKind;
use crate::engine::message::{ContentBlock, Message, ToolDefinition};
use crate::trace::{Prompt, RecordedUsage, Trace};

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

/// A brand in the search results (`data/massage_gun/tables.json`); prices
/// are in cents.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Brand<'a> {
    name: &'a str,
    /// Product line, the start of every title.
    line: &'a str,
    manufacturer: &'a str,
    lo: i64,
    hi: i64,
    /// Whether Amazon itself sells the brand.
    amazon: bool,
}

/// One row of the FBA fee table in the reference data.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SizeTier<'a> {
    tier: &'a str,
    max_lb: f64,
    fee_usd: f64,
}

/// A complaint theme of the review insights.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Theme<'a> {
    label: &'a str,
    mentions: i64,
    quote: &'a str,
}

/// Structured data (`data/massage_gun/tables.json`).
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Tables<'a> {
    /// The first three are the category leaders, kept near the top of the
    /// search (see [`products`]).
    #[serde(borrow)]
    brands: Vec<Brand<'a>>,
    #[serde(borrow)]
    fba_size_tiers: Vec<SizeTier<'a>>,
    #[serde(borrow)]
    review_themes: Vec<Theme<'a>>,
}

impl Tables<'static> {
    fn load() -> Result<Self, DataError> {
        const FILE: &str = "massage_gun/tables.json";
        let tables: Self = json_records(FILE, include_str!("data/massage_gun/tables.json"))?;
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
    struct Words = "massage_gun/words.txt" {
        colors,
        features,
        model_prefixes,
        /// Browse-node paths of the reference data; the first is the leaf
        /// category of the search ([`LEAF_CATEGORY`]).
        category_paths,
        keywords,
        /// Appended to keywords once the list is used up.
        keyword_variants,
        review_titles,
        review_bodies,
    }
}

static TABLES: LazyLock<Tables<'static>> = LazyLock::new(|| loaded(Tables::load()));
static WORDS: LazyLock<Words> = LazyLock::new(|| loaded(Words::load()));
static TOOLS: LazyLock<Vec<ToolDefinition>> = LazyLock::new(|| {
    loaded(tool_defs(
        "massage_gun/tools.json",
        include_str!("data/massage_gun/tools.json"),
    ))
});

struct Product {
    asin: String,
    parent: String,
    brand: &'static Brand<'static>,
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
    let brands = &TABLES.brands;
    let mut order: Vec<usize> = (0..brands.len()).collect();
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
            let brand = &brands[order[i % order.len()]];
            let price = (p.range(brand.lo as u64, brand.hi as u64) as i64 / 100) * 100 + 99;
            let list_price = if p.chance(0.6) { price + 1000 * p.range(1, 8) as i64 } else { price };
            let heads = p.pick(&[4, 5, 6, 8, 10, 12]);
            let speeds = p.pick(&[3, 5, 6, 20, 30]);
            let color = p.pick(&WORDS.colors);
            let model = format!("{}{}", p.pick(&WORDS.model_prefixes), p.range(2, 39));
            let mut feats: Vec<&'static str> = Vec::new();
            while feats.len() < 3 {
                let f = p.pick(&WORDS.features);
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

/// The agent's instructions (`data/massage_gun/system_prompt.md`).
const SYSTEM_PROMPT: &str = include_str!("data/massage_gun/system_prompt.md");
/// Heading of the reference data, before the browse-node list.
const REFERENCE_INTRO: &str = include_str!("data/massage_gun/reference_intro.md");
/// The referral fee section of the reference data.
const REFERRAL_FEES: &str = include_str!("data/massage_gun/referral_fees.md");

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
fn prompt(rng: &Rng) -> Prompt {
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

// ---------------------------------------------------------------- messages

/// The user's request (`data/massage_gun/task.md`).
const TASK: &str = include_str!("data/massage_gun/task.md");

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

/// 1-3 star reviews the insights tool clustered (40 per ASIN requested).
const REVIEWS_ANALYZED: i64 = 114;

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
    let themes: Vec<J> = TABLES
        .review_themes
        .iter()
        .map(|theme| {
            obj([
                ("label", theme.label.into()),
                ("mentions", J::Int(theme.mentions)),
                (
                    "share",
                    num(theme.mentions as f64 / REVIEWS_ANALYZED as f64, 3),
                ),
                ("avgRating", num(1.6 + r.range(0, 9) as f64 / 10.0, 1)),
                ("quotes", strs(&[theme.quote])),
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
                ("title", r.pick(&WORDS.review_titles).into()),
                ("body", r.pick(&WORDS.review_bodies).into()),
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

/// The final report (`data/massage_gun/final_report.md`); `{units}`,
/// `{top3_share}`, `{median_price}` and `{table}` come from the products.
const FINAL_REPORT: &str = include_str!("data/massage_gun/final_report.md");

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

    let m1 = user_text(text_file(TASK));
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
        calls.push(call(sent, start, usage));
        if k < GAPS_MS.len() {
            start += GAPS_MS[k];
        }
    }
    Trace {
        name: "massage-gun".to_owned(),
        description: text_file(DESCRIPTION).to_owned(),
        status_quo: None,
        project: None,
        account: None,
        session: None,
        provider: ProviderKind::Anthropic,
        model: "claude-opus-4-1-20250805".to_owned(),
        hidden_prefix_tokens: 0,
        source: None,
        prompts: vec![prompt],
        messages: msgs,
        calls,
    }
}

/// The trace's description (`data/massage_gun/description.txt`).
const DESCRIPTION: &str = include_str!("data/massage_gun/description.txt");

#[cfg(test)]
mod tests {
    use super::*;
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
            include_str!("data/massage_gun/tools.json"),
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

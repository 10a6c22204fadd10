//! The Keepa payloads: the product search (call 02) and the lookup of the
//! top products with a year of price, rank and offer histories (call 03),
//! the ~360 KB result the whole trace is about.

use super::products::{Product, asin, dollars, image_name};
use super::{GAPS_MS, LEAF_CATEGORY, ROOT_CATEGORY, SEARCH_COUNT, START_MS};
use crate::build::{J, ints, num, obj, strs, tool_result, user};
use crate::rng::Rng;
use crate::text::{keepa_minutes, sold_bucket};
use tracecost_engine::message::Message;

pub(super) fn search_message(rng: &Rng, ps: &[Product], id: &str, images: usize) -> Message {
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
    let mut s = Series {
        values: vec![None; CSV_TYPES],
        stride: vec![2; CSV_TYPES],
    };
    price_series(&mut s, p, rng, new_points);
    market_series(&mut s, p, rng);
    s
}

/// Each slot draws from its own fork of the product's generator, so the
/// order the slots are filled in moves no figure.
fn slot_rng(p: &Product, rng: &Rng, slot: usize) -> Rng {
    rng.fork(&format!("{}-csv-{slot}", p.asin))
}

/// The price histories (Keepa's CSV types 0-2, 4, 7, 10 and 18: Amazon's
/// own offer, new, used, list price, new FBM with shipping, new FBA and
/// the buy box).
fn price_series(s: &mut Series, p: &Product, rng: &Rng, new_points: usize) {
    let now = keepa_minutes(START_MS);
    let r = |slot: usize| slot_rng(p, rng, slot);
    let (values, stride) = (&mut s.values, &mut s.stride);
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
}

/// The market histories (types 3, 11, 12, 16 and 17: sales rank, new and
/// used offer counts, rating and review count).
fn market_series(s: &mut Series, p: &Product, rng: &Rng) {
    let now = keepa_minutes(START_MS);
    let r = |slot: usize| slot_rng(p, rng, slot);
    let values = &mut s.values;
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

/// The out-of-stock percent of each CSV type over a window, at most `max`:
/// only Amazon's own offer (type 0) of a brand Amazon sells ever runs out.
fn out_of_stock_shares(r: &mut Rng, p: &Product, max: u64) -> J {
    let shares: Vec<i64> = (0..CSV_TYPES)
        .map(|i| {
            if i == 0 && p.brand.amazon {
                r.range(0, max) as i64
            } else {
                0
            }
        })
        .collect();
    ints(&shares)
}

fn seller_id(rng: &mut Rng) -> String {
    format!("A{}", rng.base36(13))
}

/// One product of the lookup: its histories, offers, sales ranks and
/// statistics. The draws of `r` run in the order the fields are written, so
/// the phases below are called in that order.
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
    let n_offers = r.range_usize(3, 8);
    let (offers, sellers): (Vec<J>, Vec<String>) =
        (0..n_offers).map(|k| offer(p, &mut r, now, k)).unzip();
    let ranks = sales_ranks(p, &s, &mut r, now);
    let monthly_hist = monthly_sold_history(p, &mut r, now);
    let fees = fba_fees(p, &mut r, now);
    let stats = stats_json(p, &st, &mut r, now, &sellers);
    let listing = Listing {
        csv,
        offers,
        sellers,
        ranks,
        monthly_hist,
        fees,
        stats,
    };
    product_json(p, listing, &mut r, now)
}

/// What `keepa_product` has drawn before the product's own fields.
struct Listing {
    csv: Vec<J>,
    offers: Vec<J>,
    sellers: Vec<String>,
    ranks: J,
    monthly_hist: Vec<i64>,
    fees: J,
    stats: J,
}

/// Offer `k` and its seller: Amazon's own when the brand is sold by Amazon
/// and this is the first offer.
fn offer(p: &Product, r: &mut Rng, now: i64, k: usize) -> (J, String) {
    let is_amazon = p.brand.amazon && k == 0;
    let sid = if is_amazon {
        "ATVPDKIKX0DER".to_owned()
    } else {
        seller_id(r)
    };
    let n = r.range_usize(3, 10);
    let offer_price = p.price + r.range(0, 3000) as i64 - 500;
    let csv = history(
        r,
        now,
        n,
        (400, 9000),
        offer_price.max(999),
        price_walk(offer_price.max(999), 0.05),
        Some(if k.is_multiple_of(3) { 599 } else { 0 }),
    );
    let stock_n = r.range_usize(2, 8);
    let stock_now = r.range(5, 400) as i64;
    let stock = history(
        r,
        now,
        stock_n,
        (1000, 9000),
        stock_now,
        |r, _| r.range(0, 400) as i64,
        None,
    );
    let fba = is_amazon || r.chance(0.7);
    let json = obj([
        ("offerId", J::Int(k as i64)),
        ("lastSeen", J::Int(now - r.range(0, 400) as i64)),
        ("sellerId", sid.as_str().into()),
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
    ]);
    (json, sid)
}

/// The sales-rank histories of the root category (the product's rank
/// series) and the leaf category.
fn sales_ranks(p: &Product, s: &Series, r: &mut Rng, now: i64) -> J {
    let mut ranks = J::Obj(Vec::new());
    let root_ranks = s.values[3].clone().unwrap_or_default();
    let n = r.range_usize(30, 80);
    let leaf_rank = (p.rank / 9).max(1);
    let leaf = history(
        r,
        now,
        n,
        (60, 1800),
        leaf_rank,
        move |r, _| leaf_rank * (55 + r.range(0, 110) as i64) / 100 + 1,
        None,
    );
    ranks.push(&ROOT_CATEGORY.to_string(), ints(&root_ranks));
    ranks.push(&LEAF_CATEGORY.to_string(), ints(&leaf));
    ranks
}

fn category_tree() -> J {
    J::Arr(
        [
            (ROOT_CATEGORY, "Health & Household"),
            (10_079_992, "Wellness & Relaxation"),
            (3_764_441, "Massage Tools & Equipment"),
            (LEAF_CATEGORY, "Electric Massagers"),
        ]
        .iter()
        .map(|(id, name)| obj([("catId", J::Int(*id)), ("name", (*name).into())]))
        .collect(),
    )
}

/// About a year of monthly-sold buckets, a point every one to six weeks.
fn monthly_sold_history(p: &Product, r: &mut Rng, now: i64) -> Vec<i64> {
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
}

fn description(p: &Product) -> String {
    format!(
        "<p><b>{} {}</b> delivers professional-grade percussive therapy at home. {} interchangeable heads target large muscle groups, joints and trigger points, while {} speed levels (1,800-3,200 percussions per minute) let you move from warm-up to deep tissue recovery.</p><p>{}. {}. {}.</p><p>What's in the box: massage gun, {} heads, USB-C cable, carrying case, user manual. Backed by a 1-year warranty and lifetime customer support.</p>",
        p.brand.line,
        p.model,
        p.heads,
        p.speeds,
        p.features[0],
        p.features[1],
        p.features[2],
        p.heads
    )
}

fn fba_fees(p: &Product, r: &mut Rng, now: i64) -> J {
    obj([
        ("lastUpdate", J::Int(now - r.range(1000, 20_000) as i64)),
        (
            "pickAndPackFee",
            J::Int(if p.weight_g > 900 { 699 } else { 599 }),
        ),
    ])
}

/// The product's `stats` object: current, average, lowest and highest
/// values per CSV type, out-of-stock shares, rank drops and the buy box.
fn stats_json(p: &Product, st: &Stats, r: &mut Rng, now: i64, sellers: &[String]) -> J {
    let n_offers = sellers.len();
    obj([
        ("current", ints(&st.current)),
        ("avg", ints(&st.avg[0])),
        ("avg30", ints(&st.avg[1])),
        ("avg90", ints(&st.avg[2])),
        ("avg180", ints(&st.avg[3])),
        ("atIntervalStart", ints(&st.avg[3])),
        ("min", J::Arr(st.min.clone())),
        ("max", J::Arr(st.max.clone())),
        ("minInInterval", J::Arr(st.min.clone())),
        ("maxInInterval", J::Arr(st.max.clone())),
        ("outOfStockPercentageInInterval", ints(&vec![0; CSV_TYPES])),
        ("outOfStockPercentage30", out_of_stock_shares(r, p, 12)),
        ("outOfStockPercentage90", out_of_stock_shares(r, p, 20)),
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
    ])
}

/// The product's fields in Keepa's order, around what `keepa_product` drew.
fn product_json(p: &Product, l: Listing, r: &mut Rng, now: i64) -> J {
    let sellers = &l.sellers;
    obj([
        ("csv", J::Arr(l.csv)),
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
        ("offers", J::Arr(l.offers)),
        ("buyBoxSellerIdHistory", strs(&sellers.iter().flat_map(|s| [(now - r.range(1000, 200_000) as i64).to_string(), s.clone()]).collect::<Vec<_>>())),
        ("isRedirectASIN", false.into()),
        ("isSNS", false.into()),
        ("features", strs(&p.features.iter().map(|f| format!("{f}: engineered for everyday recovery and tested for 1,000+ hours of continuous use.")).collect::<Vec<_>>())),
        ("description", description(p).into()),
        ("frequentlyBoughtTogether", strs(&[asin(r), asin(r)])),
        ("categoryTree", category_tree()),
        ("salesRankReference", J::Int(ROOT_CATEGORY)),
        ("salesRanks", l.ranks),
        ("salesRankReferenceHistory", ints(&[p.since, ROOT_CATEGORY])),
        ("launchpad", false.into()),
        ("liveOffersOrder", ints(&(0..sellers.len() as i64).collect::<Vec<_>>())),
        ("fbaFees", l.fees),
        ("referralFeePercent", J::Int(15)),
        ("referralFeePercentage", num(15.0, 2)),
        ("stats", l.stats),
        ("monthlySold", J::Int(p.monthly_sold)),
        ("monthlySoldHistory", ints(&l.monthly_hist)),
        ("upcList", strs(&[p.upc.as_str()])),
        ("eanList", strs(&[format!("0{}", p.upc)])),
        ("coupon", J::Null),
        ("promotions", J::Null),
    ])
}

pub(super) fn lookup_message(rng: &Rng, ps: &[Product], id: &str, new_points: usize) -> Message {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::massage_gun::SEED;
    use crate::massage_gun::products::products;

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
}

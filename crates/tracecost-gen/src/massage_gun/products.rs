//! What the agent researches: the products of its Keepa search, ranked by
//! sales rank, each with the figures every later payload and the report
//! quote (price, rating, reviews, monthly sales, images, features).

use super::corpus::{Brand, TABLES, WORDS};
use super::{SEARCH_COUNT, START_MS};
use crate::build::{J, num};
use crate::rng::Rng;
use crate::text::{keepa_minutes, sold_bucket};

pub(super) struct Product {
    pub(super) asin: String,
    pub(super) parent: String,
    pub(super) brand: &'static Brand<'static>,
    pub(super) model: String,
    pub(super) title: String,
    pub(super) color: &'static str,
    pub(super) price: i64,
    pub(super) list_price: i64,
    pub(super) rating: i64,
    pub(super) reviews: i64,
    pub(super) rank: i64,
    pub(super) monthly_sold: i64,
    pub(super) heads: i64,
    pub(super) speeds: i64,
    pub(super) weight_g: i64,
    pub(super) since: i64,
    pub(super) images: Vec<String>,
    pub(super) part: String,
    pub(super) upc: String,
    pub(super) features: Vec<&'static str>,
}

pub(super) fn asin(rng: &mut Rng) -> String {
    format!("B0{}", rng.base36(8))
}

pub(super) fn image_name(rng: &mut Rng) -> String {
    format!("{}{}L.jpg", rng.range(41, 91), rng.base62(8))
}

pub(super) fn products(rng: &Rng) -> Vec<Product> {
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

pub(super) fn dollars(cents: i64) -> J {
    num(cents as f64 / 100.0, 2)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::massage_gun::SEED;

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
}

//! The review insights call and payload (call 06): the complaint themes
//! of the leaders' 1-3 star reviews, with the reviews returned.

use super::START_MS;
use super::corpus::{TABLES, WORDS};
use super::products::Product;
use crate::build::{J, assistant, ints, num, obj, strs, text, tool_result, tool_use, user};
use crate::rng::Rng;
use crate::text::date;
use tracecost_engine::message::Message;

/// 1-3 star reviews the insights tool clustered (40 per ASIN requested).
const REVIEWS_ANALYZED: i64 = 114;

pub(super) fn review_messages(
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

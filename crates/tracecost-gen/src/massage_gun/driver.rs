//! The call driver: the twelve messages in order, each tool payload sized
//! so that every call sends the published characters of messages, and the
//! six calls with their recorded usage and start times.

use super::corpus::{DESCRIPTION, TASK};
use super::jungle_scout::{keyword_messages, sales_messages, units_for};
use super::keepa::{lookup_message, search_message};
use super::products::products;
use super::prompt::prompt;
use super::report::{final_report, median, thousands, usd};
use super::reviews::review_messages;
use super::{GAPS_MS, LOOKUP_COUNT, ROOT_CATEGORY, SEARCH_COUNT, SEED, START_MS};
use crate::build::{J, assistant, call, fit, num, obj, strs, text, tool_use, user_text};
use crate::data::text_file;
use crate::engine::cache::ProviderKind;
use crate::engine::message::Message;
use crate::rng::Rng;
use crate::trace::{RecordedUsage, Trace};
use crate::{MASSAGE_GUN_CALL_CHARS, MASSAGE_GUN_INPUT_TOKENS, message_chars, messages_chars};

/// Characters of each assistant reply → plausible output tokens.
fn output_tokens(reply: &Message, extra: u64) -> u64 {
    (message_chars(reply) as u64 * 10).div_ceil(36) + extra
}

/// Characters a tool call and its result add to the messages array: both
/// messages and the comma between them.
fn pair_chars((call, result): &(Message, Message)) -> usize {
    message_chars(call) + 1 + message_chars(result)
}

/// Builds the massage-gun trace (see [`crate::massage_gun()`]).
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
        let fixed: usize = fixed.iter().map(|m| message_chars(m) + 1).sum();
        target.saturating_sub(size + fixed + 1)
    };

    // call-02: search result, sized by the number of product images listed.
    let b = budget(MASSAGE_GUN_CALL_CHARS[0], size, &[]);
    let m3 = fit(
        b,
        0,
        400,
        |k| search_message(&rng, &ps, &search_id, k),
        message_chars,
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
        message_chars,
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
        pair_chars,
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
        pair_chars,
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
        pair_chars,
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

//! The call driver: the twelve messages in order, each tool payload sized
//! so that every call sends the published characters of messages, and the
//! six calls with their recorded usage and start times.

use super::corpus::{DESCRIPTION, TASK};
use super::jungle_scout::{keyword_messages, sales_messages, units_for};
use super::keepa::{lookup_message, search_message};
use super::products::{Product, products};
use super::prompt::prompt;
use super::report::{final_report, median, thousands, usd};
use super::reviews::review_messages;
use super::{GAPS_MS, LOOKUP_COUNT, ROOT_CATEGORY, SEARCH_COUNT, SEED, START_MS};
use crate::build::{J, assistant, call, fit, num, obj, strs, text, tool_use, user_text};
use crate::data::text_file;
use crate::rng::Rng;
use crate::{MASSAGE_GUN_CALL_CHARS, MASSAGE_GUN_INPUT_TOKENS, message_chars, messages_chars};
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::message::Message;
use tracecost_trace::{Call, RecordedUsage, Trace};

/// Characters of each assistant reply → plausible output tokens.
fn output_tokens(reply: &Message, extra: u64) -> u64 {
    (message_chars(reply) as u64 * 10).div_ceil(36) + extra
}

/// Characters a tool call and its result add to the messages array: both
/// messages and the comma between them.
fn pair_chars((call, result): &(Message, Message)) -> usize {
    message_chars(call) + 1 + message_chars(result)
}

/// The tool-use ids, drawn in the order the calls are made.
struct ToolIds {
    search: String,
    lookup: String,
    sales: Vec<String>,
    keyword: String,
    review: String,
}

impl ToolIds {
    fn new(rng: &Rng) -> Self {
        let mut ids = rng.fork("tool-ids");
        ToolIds {
            search: ids.tool_use_id(),
            lookup: ids.tool_use_id(),
            sales: (0..3).map(|_| ids.tool_use_id()).collect(),
            keyword: ids.tool_use_id(),
            review: ids.tool_use_id(),
        }
    }
}

/// Characters a payload may take so that, with the `fixed` messages sent
/// before it, call `k` (0 for call-02) sends its published size.
fn budget(msgs: &[Message], k: usize, fixed: &[&Message]) -> usize {
    let fixed: usize = fixed.iter().map(|m| message_chars(m) + 1).sum();
    MASSAGE_GUN_CALL_CHARS[k].saturating_sub(messages_chars(msgs) + fixed + 1)
}

/// Builds the massage-gun trace (see [`crate::massage_gun()`]): the task,
/// then each call's tool payload sized to its published characters, then
/// the final report and the six calls.
pub(crate) fn build() -> Trace {
    let rng = Rng::new(SEED);
    let prompt = prompt(&rng);
    let ps = products(&rng);
    let ids = ToolIds::new(&rng);
    let mut msgs = vec![user_text(text_file(TASK)), search_request(&ids)];
    // call-02: search result, sized by the number of product images listed.
    let b = budget(&msgs, 0, &[]);
    let m3 = fit(
        b,
        0,
        400,
        |k| search_message(&rng, &ps, &ids.search, k),
        message_chars,
    );
    msgs.push(m3);
    // call-03: the huge Keepa product lookup.
    let looked = &ps[..LOOKUP_COUNT];
    let m4 = lookup_request(&ps, &ids);
    let b = budget(&msgs, 1, &[&m4]);
    let m5 = fit(
        b,
        0,
        20_000,
        |k| lookup_message(&rng, looked, &ids.lookup, k),
        message_chars,
    );
    msgs.push(m4);
    msgs.push(m5);
    // call-04: three parallel Jungle Scout sales estimates, sized by days.
    let trio = &ps[..3];
    let analysis = keepa_analysis(&ps);
    let b = budget(&msgs, 2, &[]);
    let (m6, m7) = fit(
        b,
        1,
        366,
        |d| sales_messages(&rng, trio, &ids.sales, &analysis, d),
        pair_chars,
    );
    msgs.extend([m6, m7]);
    // call-05: keyword research, sized by the number of keywords.
    let analysis = format!(
        "Jungle Scout estimates line up with the Keepa badges: the {} listing averages roughly {} units/day, with weekends 5-12% above weekdays and a visible bump around Memorial Day. Next, keyword demand and PPC cost for the category.",
        ps[0].brand.name,
        units_for(&ps[0], 3),
    );
    let b = budget(&msgs, 3, &[]);
    let (m8, m9) = fit(
        b,
        1,
        200,
        |n| keyword_messages(&rng, &ids.keyword, &analysis, n),
        pair_chars,
    );
    msgs.extend([m8, m9]);
    // call-06: review insights, sized by the number of reviews returned.
    let analysis = "\"massage gun\" alone has about 301K exact monthly searches with exact-match bids around $1-$4.50; long-tail terms (heated, mini, for back) are cheaper and growing. Last step before writing: what customers dislike about the three leaders.";
    let b = budget(&msgs, 4, &[]);
    let (m10, m11) = fit(
        b,
        1,
        400,
        |n| review_messages(&rng, trio, &ids.review, analysis, n),
        pair_chars,
    );
    msgs.extend([m10, m11]);
    msgs.push(assistant(vec![text(&final_report(&ps))]));
    let calls = recorded_calls(&msgs);
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

/// The first reply: the plan and the Keepa search.
fn search_request(ids: &ToolIds) -> Message {
    assistant(vec![
        text(
            "I'll start by mapping the competitive set: a Keepa search for \"massage gun\" sorted by sales rank gives me the leaders, their price points and Amazon's monthly-sold badges. Then I'll pull one-year price and rank histories for the top 20 in a single Keepa lookup.",
        ),
        tool_use(
            &ids.search,
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
    ])
}

/// The reply to the search: the market at a glance and the Keepa lookup of
/// the top products.
fn lookup_request(ps: &[Product], ids: &ToolIds) -> Message {
    let looked = &ps[..LOOKUP_COUNT];
    let top_brands: Vec<&str> = ps[..5].iter().map(|p| p.brand.name).collect();
    assistant(vec![
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
            &ids.lookup,
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
    ])
}

/// What the Keepa histories show, said before the sales estimates.
fn keepa_analysis(ps: &[Product]) -> String {
    let looked = &ps[..LOOKUP_COUNT];
    format!(
        "Keepa histories for the top {n} are in. Key points:\n- Median Buy Box price across the {n}: {med}; the {b0} leader sits at {p0} with sales rank {r0} in Health & Household.\n- Leaders held list price most of the year and cut 15-30% for Prime Day (July 2024) and Black Friday; mid-tier brands run near-continuous coupons.\n- Offer counts are low (3-7 per listing) and the Buy Box is FBA on every listing; Amazon itself sells {amz} of the {n}.\n- Review counts are deep: the top 5 average {rev} reviews.\nTo turn ranks into units I'll get daily Jungle Scout sales estimates for the three leaders in parallel.",
        n = LOOKUP_COUNT,
        med = usd(median(looked.iter().map(|p| p.price).collect())),
        b0 = ps[0].brand.name,
        p0 = usd(ps[0].price),
        r0 = thousands(ps[0].rank),
        amz = looked.iter().filter(|p| p.brand.amazon).count(),
        rev = thousands(ps[..5].iter().map(|p| p.reviews).sum::<i64>() / 5),
    )
}

/// The six calls: each sends the messages up to its reply's request, with
/// the recorded input tokens (none for the first) and output tokens from
/// the reply's length.
fn recorded_calls(msgs: &[Message]) -> Vec<Call> {
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
    calls
}

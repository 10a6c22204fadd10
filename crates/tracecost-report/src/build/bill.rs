//! "What the bill is made of": the fleet's cost per model, per billing
//! class and its cache writes by cause, as the fleet page shows them and
//! `summary.md` says them. The figures are the app's
//! ([`FleetAnswer::by_model`], [`FleetAnswer::by_class`],
//! [`FleetAnswer::cache_writes_by_cause`]); here, only their words.

use std::fmt::Write as _;

use crate::fmt::{compact_count, dollars, html_escape};
use tracecost_app::fleet::FleetAnswer;
use tracecost_replay::breakdown::{ClassBill, NEW_CONTENT};

/// What these dollars are: said beside every breakdown.
pub(super) const LIST_PRICES: &str = "Prices are the providers' API list prices per token (pay as you go), not what a subscription plan (Claude Pro or Max, ChatGPT plans) charges.";

/// A cause of cache writes in plain words.
pub(super) fn cause_label(cause: &str) -> &'static str {
    match cause {
        NEW_CONTENT => "new content appended (the cache at work)",
        "first_call" => "first call of a conversation",
        "model_changed" => "model changed",
        "below_minimum" => "prompt below the cacheable minimum",
        "no_marker" => "no cache marker sent",
        "nothing_cached_before" => "nothing cached by the call before",
        "tools_changed" => "tool definitions changed",
        "system_changed" => "system prompt changed",
        "hidden_prefix_changed" => "unrecorded part of the prompt changed",
        "microcompaction" => "Claude Code's microcompaction cleared a result",
        "compacted" => "the policy compacted or cleared a result",
        "prefix_changed" => "an earlier message changed",
        "ttl_expired" => "entry expired after a pause",
        "evicted" => "the record shows the cache cold",
        "lookback_exceeded" => "entry beyond the 20-block lookback",
        _ => "other",
    }
}

/// The four billing classes of a bill: (name, tokens, dollars).
fn classes(b: &ClassBill) -> [(&'static str, u64, f64); 4] {
    [
        ("uncached input", b.input_tokens, b.input_usd),
        ("cache writes", b.cache_write_tokens, b.cache_write_usd),
        ("cache reads", b.cache_read_tokens, b.cache_read_usd),
        ("output", b.output_tokens, b.output_usd),
    ]
}

/// Whether the fleet's answer changes anything (else the recommended
/// column would repeat the status quo's).
fn changes(fleet: &FleetAnswer) -> bool {
    !fleet.answer.keep_status_quo
}

/// A cell: dollars, and under them what they buy.
fn cell(usd: f64, under: Option<u64>) -> String {
    match under {
        Some(n) => format!(
            "{}<br><span class=\"small\">{}</span>",
            dollars(usd),
            compact_count(n as f64)
        ),
        None => dollars(usd),
    }
}

/// The fleet page's section. Each table has at most four columns, the
/// figures under their dollars, so that a phone shows it whole.
pub(super) fn bill_html(s: &mut String, fleet: &FleetAnswer) {
    if fleet.by_model.is_empty() {
        return;
    }
    let rec = changes(fleet);
    let recorded = fleet.by_class.recorded.is_some();
    let head = |s: &mut String, first: &str| {
        let _ = write!(s, "<table class=\"bill\"><tr><th class=\"l\">{first}</th>");
        if recorded {
            s.push_str("<th>recorded</th>");
        }
        s.push_str("<th>status quo</th>");
        if rec {
            s.push_str("<th>recom&shy;mended</th>");
        }
        s.push_str("</tr>\n");
    };
    let row = |s: &mut String, name: &str, r: Option<String>, sq: String, rc: String| {
        let _ = write!(s, "<tr><td class=\"l\">{name}</td>");
        if recorded {
            let _ = write!(s, "<td>{}</td>", r.unwrap_or_default());
        }
        let _ = write!(s, "<td>{sq}</td>");
        if rec {
            let _ = write!(s, "<td>{rc}</td>");
        }
        s.push_str("</tr>\n");
    };
    let _ = writeln!(
        s,
        "<h2>What the bill is made of</h2>\n<p class=\"small\">{}</p>",
        html_escape(LIST_PRICES)
    );
    s.push_str("<h3>Per model</h3>\n<p class=\"small\">Under each figure, its calls.</p>\n");
    head(s, "model");
    for m in &fleet.by_model {
        let calls = |b: &ClassBill| Some(b.calls as u64);
        row(
            s,
            &html_escape(&m.model),
            m.recorded.map(|r| cell(r.cost_usd(), calls(&r))),
            cell(m.status_quo.cost_usd(), calls(&m.status_quo)),
            cell(m.recommended.cost_usd(), calls(&m.recommended)),
        );
    }
    s.push_str("</table>\n<h3>Per billing class</h3>\n<p class=\"small\">Under each figure, its tokens.</p>\n");
    head(s, "class");
    let c = &fleet.by_class;
    let rec_classes = c.recorded.as_ref().map(classes);
    for (i, ((name, tokens, sq), (_, rc_tokens, rc))) in classes(&c.status_quo)
        .into_iter()
        .zip(classes(&c.recommended))
        .enumerate()
    {
        row(
            s,
            name,
            rec_classes.map(|r| cell(r[i].2, Some(r[i].1))),
            cell(sq, Some(tokens)),
            cell(rc, Some(rc_tokens)),
        );
    }
    s.push_str("</table>\n");
    if fleet.cache_writes_by_cause.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "<h3>Cache writes by cause</h3>\n<p class=\"small\">Simulated, call by call: what a call writes again of what the call before had cached goes to the reason it could not read it; the rest is new content. Under each figure, its tokens.</p>\n<table class=\"bill\"><tr><th class=\"l\">cause</th><th>status quo</th>{}</tr>",
        if rec { "<th>recom&shy;mended</th>" } else { "" }
    );
    for w in &fleet.cache_writes_by_cause {
        let _ = write!(
            s,
            "<tr><td class=\"l\">{}</td><td>{}</td>",
            html_escape(cause_label(&w.cause)),
            cell(w.status_quo_usd, Some(w.status_quo_tokens))
        );
        if rec {
            let _ = write!(
                s,
                "<td>{}</td>",
                cell(w.recommended_usd, Some(w.recommended_tokens))
            );
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
}

/// `summary.md`'s lines: the status quo per model and class, and the
/// three largest causes of cache writes.
pub(super) fn bill_md_lines(fleet: &FleetAnswer) -> Vec<String> {
    if fleet.by_model.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let models: Vec<String> = fleet
        .by_model
        .iter()
        .map(|m| format!("{} {}", m.model, dollars(m.status_quo.cost_usd())))
        .collect();
    out.push(format!("Status quo per model: {}.", models.join(", ")));
    let classes: Vec<String> = classes(&fleet.by_class.status_quo)
        .iter()
        .map(|(name, _, usd)| format!("{name} {}", dollars(*usd)))
        .collect();
    out.push(format!("Status quo per class: {}.", classes.join(", ")));
    let mut causes: Vec<_> = fleet.cache_writes_by_cause.iter().collect();
    // Largest first; equal figures by name, so the line is the same on
    // every run.
    causes.sort_by(|a, b| {
        b.status_quo_usd
            .total_cmp(&a.status_quo_usd)
            .then(a.cause.cmp(&b.cause))
    });
    let total: f64 = causes.iter().map(|c| c.status_quo_usd).sum();
    if total > 0.0 {
        let top: Vec<String> = causes
            .iter()
            .take(3)
            .map(|c| {
                format!(
                    "{} {} ({:.0}%)",
                    cause_label(&c.cause),
                    dollars(c.status_quo_usd),
                    c.status_quo_usd / total * 100.0
                )
            })
            .collect();
        out.push(format!(
            "Status quo cache writes ({}) come most from: {}.",
            dollars(total),
            top.join("; ")
        ));
    }
    out.push(LIST_PRICES.to_owned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cause_the_replay_names_has_words() {
        use tracecost_replay::explain::CacheCause;
        let hold = tracecost_cost::cache_sim::CacheHold::from_ms(300_000);
        let kind = tracecost_cost::cache_sim::PrefixKind::Text;
        let all = [
            CacheCause::FirstCall,
            CacheCause::ModelChanged,
            CacheCause::BelowMinimum {
                tokens: 1,
                minimum: 2,
            },
            CacheCause::NoMarker,
            CacheCause::NothingCachedBefore,
            CacheCause::ToolsChanged { block: 1 },
            CacheCause::SystemChanged { block: 1 },
            CacheCause::HiddenPrefixChanged { block: 1 },
            CacheCause::Microcompaction {
                block: 1,
                message: 1,
            },
            CacheCause::Compacted {
                block: 1,
                message: 1,
            },
            CacheCause::PrefixChanged {
                block: 1,
                kind,
                message: None,
            },
            CacheCause::TtlExpired {
                gap_ms: 1,
                ttl: hold,
            },
            CacheCause::Evicted,
            CacheCause::LookbackExceeded { cached_block: 1 },
        ];
        for c in all {
            assert_ne!(cause_label(c.name()), "other", "{}", c.name());
        }
        assert_ne!(cause_label(NEW_CONTENT), "other");
    }
}

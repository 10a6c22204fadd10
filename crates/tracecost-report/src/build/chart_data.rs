//! What the report's charts show: a trace's charts from its sweep, the
//! fleet's from its answer. The charts module draws them; here is only
//! which numbers go in which chart.

use std::collections::BTreeMap;

use crate::charts::{CallTokens, Chart};
use crate::fmt::thousands;
use tracecost_app::AppError;
use tracecost_app::fleet::{FleetAnswer, FleetConfig, FleetFigures};
use tracecost_app::identity::slug;
use tracecost_policy::Compaction;
use tracecost_replay::sweep::{SweepRow, TraceSweep};
use tracecost_replay::{CallResults, ReplayResult};

use super::story::break_even_line;

pub(super) fn call_tokens(calls: &CallResults) -> Vec<CallTokens> {
    calls
        .iter()
        .map(|c| CallTokens {
            uncached: c.usage.input_tokens,
            cache_write: c.usage.cache_creation_input_tokens,
            cache_read: c.usage.cache_read_input_tokens,
        })
        .collect()
}

/// A replay's running cost, call by call (read from its rows or, for a
/// row the report does not write call by call, its costs alone, read back
/// when spilled).
pub(super) fn cumulative(result: &ReplayResult) -> Result<Vec<f64>, AppError> {
    let mut sum = 0.0;
    Ok(result
        .per_call()?
        .costs()
        .map(|cost| {
            sum += cost;
            sum
        })
        .collect())
}

/// The family of a config for the savings chart: compaction kind × cache kind.
pub(super) fn family(r: &ReplayResult) -> String {
    format!(
        "{} + {}",
        r.config.compaction.kind().name(),
        r.config.cache.kind().name()
    )
}

/// The best (cheapest) row of each family, in cost order.
pub(super) fn best_per_family(s: &TraceSweep) -> Vec<&SweepRow> {
    let mut seen = BTreeMap::new();
    let mut out = Vec::new();
    for r in &s.rows {
        if seen.insert(family(&r.result), ()).is_none() {
            out.push(r);
        }
    }
    out
}

/// The charts of one trace, in display order: (file stem, chart). Each
/// chart's data is made as it is reached and let go with it, not all
/// charts' at once: a long trace's per-call series are several MB each.
/// An item fails only when per-call costs spilled to disk cannot be read
/// back.
pub fn charts(s: &TraceSweep) -> impl Iterator<Item = Result<(String, Chart), AppError>> + '_ {
    let stem = slug(&s.trace);
    (0..4).flat_map(move |part| match part {
        0 => vec![Ok(calls_chart(s, &stem))],
        1 => vec![cumulative_chart(s, &stem)],
        2 => heatmaps(s, &stem).into_iter().map(Ok).collect(),
        _ => vec![Ok(savings_chart(s, &stem))],
    })
}

/// Input tokens per call by billing class: the status quo, the
/// recommendation and the cheapest config.
fn calls_chart(s: &TraceSweep, stem: &str) -> (String, Chart) {
    let base = &s.rows[s.baseline];
    let rec = &s.rows[s.recommended];
    let mut series = vec![(
        format!("status quo: {}", base.result.config),
        call_tokens(&base.result.calls),
    )];
    if s.recommended != s.baseline {
        series.push((
            format!("recommended: {}", rec.result.config),
            call_tokens(&rec.result.calls),
        ));
    }
    if s.cheapest != s.recommended && s.cheapest != s.baseline {
        series.push((
            format!("cheapest: {}", s.rows[s.cheapest].result.config),
            call_tokens(&s.rows[s.cheapest].result.calls),
        ));
    }
    (
        format!("{stem}-calls"),
        Chart::StackedCalls {
            title: format!("{}: input tokens per call by billing class", s.trace),
            series,
        },
    )
}

/// Cumulative cost across calls: the families' best, baseline and
/// recommended first.
fn cumulative_chart(s: &TraceSweep, stem: &str) -> Result<(String, Chart), AppError> {
    let base = &s.rows[s.baseline];
    let rec = &s.rows[s.recommended];
    let mut lines: Vec<(String, Vec<f64>)> = Vec::new();
    let mut push = |label: String, r: &SweepRow| -> Result<(), AppError> {
        if !lines
            .iter()
            .any(|(l, _)| l.ends_with(&r.result.config.to_string()))
        {
            lines.push((label, cumulative(&r.result)?));
        }
        Ok(())
    };
    push(format!("status quo: {}", base.result.config), base)?;
    push(format!("recommended: {}", rec.result.config), rec)?;
    for r in best_per_family(s) {
        push(r.result.config.to_string(), r)?;
    }
    Ok((
        format!("{stem}-cumulative"),
        Chart::CumulativeCost {
            title: format!("{}: cumulative cost across calls", s.trace),
            lines,
        },
    ))
}

/// Heatmaps: ledger threshold × keep-last per cache policy.
fn heatmaps(s: &TraceSweep, stem: &str) -> Vec<(String, Chart)> {
    let mut out = Vec::new();
    let mut by_cache: BTreeMap<String, BTreeMap<(u64, usize), f64>> = BTreeMap::new();
    for r in &s.rows {
        let config = &r.result.config;
        let Compaction::Ledger {
            threshold,
            keep_last,
        } = config.compaction
        else {
            continue;
        };
        // One heatmap per cache policy and model: the config string after
        // its compaction part.
        let cache = match &config.model {
            Some(m) => format!("{}@{m}", config.cache),
            None => config.cache.to_string(),
        };
        by_cache
            .entry(cache)
            .or_default()
            .insert((threshold, keep_last), r.result.totals.cost_usd);
    }
    // Each heatmap on its own colour scale: one scale shared with a dearer
    // cache policy's map flattens the map that holds the choice, and its
    // cheapest cell would not have the colour the caption names.
    for (cache, cells) in &by_cache {
        let mut thresholds: Vec<u64> = cells.keys().map(|(t, _)| *t).collect();
        thresholds.sort_unstable();
        thresholds.dedup();
        let mut keeps: Vec<usize> = cells.keys().map(|(_, k)| *k).collect();
        keeps.sort_unstable();
        keeps.dedup();
        let cost_usd = keeps
            .iter()
            .map(|k| {
                thresholds
                    .iter()
                    .map(|t| cells.get(&(*t, *k)).copied())
                    .collect()
            })
            .collect();
        out.push((
            format!("{stem}-heatmap-{}", slug(cache)),
            Chart::Heatmap {
                title: format!("{}: ledger cost, cache {cache}", s.trace),
                thresholds,
                keeps,
                cost_usd,
                scale_usd: None,
            },
        ));
    }
    out
}

/// Savings against the status quo, best config per policy.
fn savings_chart(s: &TraceSweep, stem: &str) -> (String, Chart) {
    let bars = best_per_family(s)
        .into_iter()
        .map(|r| (r.result.config.to_string(), r.savings_usd, r.savings_pct))
        .collect();
    (
        format!("{stem}-savings"),
        Chart::SavingsBars {
            title: format!(
                "{}: savings against the status quo, best config per policy",
                s.trace
            ),
            bars,
        },
    )
}

/// Configs drawn in the fleet's cost chart, besides the status quo and the
/// recommendation: enough to see the shape, few enough to read on a phone.
const CONFIG_BARS: usize = 12;

/// The fleet's charts, in display order: (file stem, chart). An error
/// when the sessions' figures cannot be read back.
pub fn fleet_charts(fleet: &FleetAnswer) -> Result<Vec<(String, Chart)>, tracecost_app::AppError> {
    // The trade-off first: what each config costs against what it risks;
    // then what each costs, what a session saves, per day, per project.
    let mut out = vec![fleet_pareto(fleet), fleet_config_bars(fleet)];
    out.extend(fleet_savings(fleet));
    out.extend(fleet_days(fleet));
    out.extend(fleet_projects(fleet)?);
    Ok(out)
}

/// Each config's cost against its recall risk. Configs that compact
/// nothing are the status quo's point again.
fn fleet_pareto(fleet: &FleetAnswer) -> (String, Chart) {
    let a = &fleet.answer;
    // The status quo is a point of its own where the grid does not hold it
    // (a status quo replaying the trace's own clears).
    let mut shown: Vec<&FleetFigures> = fleet.configs.iter().filter(|c| !c.no_effect).collect();
    if !shown.iter().any(|c| c.config == a.status_quo.config) {
        shown.push(&a.status_quo);
    }
    let at = |config: &FleetConfig| shown.iter().position(|c| c.config == *config);
    (
        "fleet-pareto".to_owned(),
        Chart::ParetoFront {
            title: format!(
                "Cost against recall risk, each config over the {} sessions",
                thousands(a.sessions as u64)
            ),
            points: shown
                .iter()
                .map(|c| (c.config.to_string(), c.recall_needs, c.cost_usd))
                .collect(),
            status_quo: at(&a.status_quo.config),
            recommended: (!a.keep_status_quo)
                .then(|| at(&a.recommended.config))
                .flatten(),
            notes: break_even_line(fleet)
                .map(|l| l.replace('`', ""))
                .into_iter()
                .collect(),
        },
    )
}

/// The status quo beside the cheapest configs, not every config of the
/// grid (65 bars by default): the table below lists them all.
fn fleet_config_bars(fleet: &FleetAnswer) -> (String, Chart) {
    let a = &fleet.answer;
    let mut bars: Vec<&FleetFigures> = fleet.configs.iter().collect();
    bars.sort_by(|x, y| x.cost_usd.total_cmp(&y.cost_usd));
    bars.truncate(CONFIG_BARS);
    for must in [&a.status_quo, &a.recommended] {
        if !bars.iter().any(|c| c.config == must.config) {
            bars.push(must);
        }
    }
    bars.sort_by(|x, y| x.cost_usd.total_cmp(&y.cost_usd));
    let bar_at = |config: &FleetConfig| bars.iter().position(|c| c.config == *config);
    let of = if bars.len() < fleet.configs.len() {
        format!(
            "the status quo and the {} cheapest of {} configs",
            CONFIG_BARS.min(fleet.configs.len()),
            fleet.configs.len()
        )
    } else {
        "each config".to_owned()
    };
    (
        "fleet-configs".to_owned(),
        Chart::ConfigCosts {
            title: format!(
                "What the fleet would cost: {of} ({} sessions, cheapest first)",
                thousands(a.sessions as u64)
            ),
            bars: bars
                .iter()
                .map(|c| (c.config.to_string(), c.cost_usd))
                .collect(),
            status_quo: bar_at(&a.status_quo.config),
            recommended: (!a.keep_status_quo)
                .then(|| bar_at(&a.recommended.config))
                .flatten(),
        },
    )
}

/// What a session saves under the pick shown, against its status quo.
fn fleet_savings(fleet: &FleetAnswer) -> Option<(String, Chart)> {
    let a = &fleet.answer;
    let pick = fleet.shown_pick()?;
    let savings_usd = fleet.shown_savings_usd.clone();
    Some((
        "fleet-savings".to_owned(),
        Chart::SavingsDistribution {
            title: format!(
                "Saving per session under {} {} against each session's status quo",
                if a.keep_status_quo {
                    "the cheapest config,"
                } else {
                    "the recommendation,"
                },
                pick.config
            ),
            savings_usd,
        },
    ))
}

/// Cost per day: recorded, status quo, recommended.
fn fleet_days(fleet: &FleetAnswer) -> Option<(String, Chart)> {
    let a = &fleet.answer;
    let dated: Vec<&tracecost_app::fleet::DayFigures> = fleet
        .days
        .iter()
        .filter(|d| d.day != tracecost_app::fleet::UNDATED)
        .collect();
    if dated.is_empty() {
        return None;
    }
    let recorded = dated.iter().any(|d| d.recorded_cost_usd.is_some());
    let mut series = Vec::new();
    if recorded {
        series.push("recorded".to_owned());
    }
    series.push("status quo".to_owned());
    if !a.keep_status_quo {
        series.push("recommended".to_owned());
    }
    let days = dated
        .iter()
        .map(|d| {
            let mut v = Vec::new();
            if recorded {
                v.push(d.recorded_cost_usd);
            }
            v.push(Some(d.status_quo_usd));
            if !a.keep_status_quo {
                v.push(Some(d.recommended_usd));
            }
            (d.day.clone(), v)
        })
        .collect();
    Some((
        "fleet-days".to_owned(),
        Chart::CostPerDay {
            title: "Cost per day (UTC, by the day each call started)".to_owned(),
            series,
            days,
        },
    ))
}

/// Per project: the status quo against the recommendation (or each
/// project's own best config).
fn fleet_projects(fleet: &FleetAnswer) -> Result<Option<(String, Chart)>, tracecost_app::AppError> {
    let a = &fleet.answer;
    if fleet.projects.is_empty() {
        return Ok(None);
    }
    // What each project's sessions cost under the recommendation, in
    // the sessions' order (most expensive first), read in one pass.
    let mut recommended: std::collections::HashMap<String, Vec<f64>> =
        std::collections::HashMap::new();
    if !a.keep_status_quo {
        for s in fleet.per_session.iter() {
            let s = s?;
            let project = s
                .project
                .as_deref()
                .unwrap_or(tracecost_app::fleet::NO_PROJECT);
            match recommended.get_mut(project) {
                Some(v) => v.push(s.recommended_usd),
                None => {
                    recommended.insert(project.to_owned(), vec![s.recommended_usd]);
                }
            }
        }
    }
    Ok(Some((
        "fleet-projects".to_owned(),
        Chart::ProjectCosts {
            against: if a.keep_status_quo {
                "its own best config".to_owned()
            } else {
                "recommended".to_owned()
            },
            title: if a.keep_status_quo {
                "Per project: the status quo against each project's own best config".to_owned()
            } else {
                "Per project: the status quo against the recommendation".to_owned()
            },
            projects: fleet
                .projects
                .iter()
                .map(|p| {
                    let pick = if a.keep_status_quo {
                        p.answer.recommended.cost_usd
                    } else {
                        recommended.get(&p.project).map_or(0.0, |v| v.iter().sum())
                    };
                    (p.project.clone(), p.answer.status_quo.cost_usd, pick)
                })
                .collect(),
        },
    )))
}

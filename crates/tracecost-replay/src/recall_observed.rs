//! Recalls observed where the ledger ran.
//!
//! An agent that ran the ledger offered the model `recall_tool_result`, and
//! its record holds every call the model made of it: which stubbed result
//! it read back (by `mem_id`, the handle of the result's tool_use id, tool
//! name and payload, or by the tool_use id itself). There the need is not
//! estimated but seen: per tool and size, the share of the stubbed results
//! the model recalled.
//!
//! Which results were stubbed is what the trace's status quo (the ledger
//! that ran) compacts on replay, together with any result the model
//! recalled (a recall proves its result was stubbed). A result is counted
//! once, however many times it was recalled. A recall's own answer is a
//! result like any other (of the tool `recall_tool_result`): the ledger
//! stubs it in turn, and the record shows whether the model read it back.
//!
//! Precedence (see `docs/recall.md`): a compacted result of a tool and size
//! that the record observed is charged at the observed rate, at every bound
//! of the range (a measurement, not an estimate); any other result keeps
//! the evidence estimate of `recall_risk`.

use std::collections::{HashMap, HashSet};

use serde::{Deserialize, Serialize};

use super::recall_size::{SIZE_BUCKETS, size_bucket};
use tracecost_cost::tokens::FastBuild;
use tracecost_engine::handle::mem_id;
use tracecost_engine::message::{BlockKind, ToolResultContent};
use tracecost_engine::recall::RECALL_TOOL_NAME;
use tracecost_trace::Trace;

/// The recalls of one tool and size bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObservedCell {
    /// The tool whose results were stubbed.
    pub tool: String,
    /// The results' size bucket (`SIZE_BUCKETS`).
    pub size: String,
    /// Stubbed results the model recalled.
    pub recalls: usize,
    /// Results stubbed.
    pub stubbed: usize,
    /// `recalls / stubbed`.
    pub rate: f64,
}

/// Recalls observed where the ledger ran: over every stubbed result, and
/// per tool and size.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Observed {
    /// Stubbed results the model recalled.
    pub recalls: usize,
    /// Results stubbed.
    pub stubbed: usize,
    /// `recalls / stubbed`.
    pub rate: f64,
    /// Per tool and size bucket, by tool then size.
    pub by_tool: Vec<ObservedCell>,
}

impl Observed {
    /// Adds `other`'s counts (a fleet's sum of traces' observations).
    pub fn add(&mut self, other: &Observed) {
        let mut cells: HashMap<(String, String), (usize, usize)> = self
            .by_tool
            .iter()
            .map(|c| ((c.tool.clone(), c.size.clone()), (c.recalls, c.stubbed)))
            .collect();
        for c in &other.by_tool {
            let e = cells.entry((c.tool.clone(), c.size.clone())).or_default();
            e.0 += c.recalls;
            e.1 += c.stubbed;
        }
        *self = Observed::of_cells(cells);
    }

    fn of_cells(cells: HashMap<(String, String), (usize, usize)>) -> Observed {
        let mut by_tool: Vec<ObservedCell> = cells
            .into_iter()
            .map(|((tool, size), (recalls, stubbed))| ObservedCell {
                rate: ratio(recalls, stubbed),
                tool,
                size,
                recalls,
                stubbed,
            })
            .collect();
        let order = |s: &str| SIZE_BUCKETS.iter().position(|b| *b == s);
        by_tool.sort_by(|a, b| {
            a.tool
                .cmp(&b.tool)
                .then_with(|| order(&a.size).cmp(&order(&b.size)))
        });
        let recalls = by_tool.iter().map(|c| c.recalls).sum();
        let stubbed = by_tool.iter().map(|c| c.stubbed).sum();
        Observed {
            recalls,
            stubbed,
            rate: ratio(recalls, stubbed),
            by_tool,
        }
    }

    /// The observed rate of a tool and size bucket, where results of both
    /// were stubbed.
    fn rate_of(&self, tool: &str, size: &str) -> Option<f64> {
        self.by_tool
            .iter()
            .find(|c| c.tool == tool && c.size == size && c.stubbed > 0)
            .map(|c| c.rate)
    }
}

fn ratio(a: usize, b: usize) -> f64 {
    if b == 0 { 0.0 } else { a as f64 / b as f64 }
}

/// Per tool result of a trace (in history order, as `RiskIndex` counts
/// them): its tool, its size, and whether the model recalled it.
#[derive(Debug, Default)]
pub(crate) struct Recalls {
    tools: Vec<String>,
    tool_of: Vec<u32>,
    chars: Vec<u64>,
    recalled: Vec<bool>,
    /// The calls of `recall_tool_result` the trace holds.
    calls: usize,
}

impl Recalls {
    pub(crate) fn new(trace: &Trace) -> Self {
        let mut wanted: HashSet<String, FastBuild> = HashSet::default();
        let mut names: HashMap<&str, &str, FastBuild> = HashMap::default();
        let mut calls = 0;
        for m in &trace.messages {
            for b in m.blocks() {
                let BlockKind::ToolUse { id, name } = b.kind() else {
                    continue;
                };
                names.insert(id, name);
                if **name == *RECALL_TOOL_NAME {
                    calls += 1;
                    if let Some(id) = recalled_id(b.tool_input().map_or("", |r| r.get())) {
                        wanted.insert(id);
                    }
                }
            }
        }
        let mut out = Recalls {
            calls,
            ..Recalls::default()
        };
        let mut tool_index: HashMap<&str, u32, FastBuild> = HashMap::default();
        for m in &trace.messages {
            for b in m.blocks() {
                let BlockKind::ToolResult {
                    tool_use_id,
                    payload_chars,
                    content,
                    ..
                } = b.kind()
                else {
                    continue;
                };
                let name = names.get(&**tool_use_id).copied().unwrap_or("");
                let t = *tool_index.entry(name).or_insert_with(|| {
                    out.tools.push(name.to_owned());
                    out.tools.len() as u32 - 1
                });
                out.tool_of.push(t);
                out.chars.push(*payload_chars);
                // The handle's payload, as the ledger records it: a text
                // result's text, else the content's JSON.
                let recalled = !wanted.is_empty()
                    && (wanted.contains(&**tool_use_id) || {
                        let payload = match content {
                            ToolResultContent::Text(t) => t.as_ref(),
                            _ => b.tool_result_payload().unwrap_or(""),
                        };
                        wanted.contains(&mem_id(tool_use_id, name, payload))
                    });
                out.recalled.push(recalled);
            }
        }
        out
    }

    /// What the record shows, given the results the ledger that ran
    /// stubbed; `None` where no ledger ran (`ledger_ran` false and no call
    /// of the recall tool).
    pub(crate) fn observe(
        &self,
        stubbed: impl Iterator<Item = u32>,
        ledger_ran: bool,
    ) -> Option<Observed> {
        if !ledger_ran && self.calls == 0 {
            return None;
        }
        let mut is_stubbed = self.recalled.clone();
        for r in stubbed {
            if let Some(s) = is_stubbed.get_mut(r as usize) {
                *s = true;
            }
        }
        let mut cells: HashMap<(String, String), (usize, usize)> = HashMap::new();
        for (r, _) in is_stubbed.iter().enumerate().filter(|(_, s)| **s) {
            let e = cells.entry(self.cell(r)).or_default();
            e.0 += usize::from(self.recalled[r]);
            e.1 += 1;
        }
        Some(Observed::of_cells(cells))
    }

    /// Per result, the observed rate of its tool and size, where there is
    /// one.
    pub(crate) fn rates(&self, observed: &Observed) -> Vec<Option<f64>> {
        (0..self.tool_of.len())
            .map(|r| {
                let (tool, size) = self.cell(r);
                observed.rate_of(&tool, &size)
            })
            .collect()
    }

    fn cell(&self, r: usize) -> (String, String) {
        let tool = self.tool_of.get(r).map_or("", |&t| &self.tools[t as usize]);
        let size = SIZE_BUCKETS[size_bucket(self.chars.get(r).copied().unwrap_or(0))];
        (tool.to_owned(), size.to_owned())
    }
}

/// The result a `recall_tool_result` input names: its `mem_id`.
fn recalled_id(input: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(input).ok()?;
    v.get("mem_id")?.as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::{TraceSweep, sweep_trace};
    use crate::{PreparedTrace, ReplayContext, ReplayOptions};
    use tracecost_cost::pricing::Pricing;
    use tracecost_cost::tokens::{CharsPerToken, TokenMemo};
    use tracecost_engine::rewrite::{CompactionPolicy, ResultCounts};
    use tracecost_policy::Config;

    fn sweep(trace: &Trace, configs: &[&str]) -> TraceSweep {
        let pricing = Pricing::builtin();
        let memo = TokenMemo::new(std::sync::Arc::new(CharsPerToken(4.0)));
        let price = pricing.lookup(&trace.model).expect("priced model");
        let prepared = PreparedTrace::new(trace, &memo, price, true);
        let configs: Vec<Config> = configs.iter().map(|c| c.parse().expect("config")).collect();
        let baseline: Config = trace
            .status_quo
            .as_deref()
            .unwrap_or("off+none")
            .parse()
            .expect("status quo");
        let ctx = ReplayContext {
            pricing: &pricing,
            memo: &memo,
            opts: ReplayOptions {
                batch: false,
                progress: None,
                ..Default::default()
            },
        };
        sweep_trace(&prepared, &configs, &baseline, ctx, None, &|| {}).expect("sweep")
    }

    /// Per tool result of `trace` (history order): its tool, its size
    /// bucket, whether `policy` compacts it at some call, and whether a
    /// recall names it, counted here from the trace and the policy's rule.
    fn counted(trace: &Trace, policy: CompactionPolicy) -> Vec<(String, usize, bool, bool)> {
        let mut names = HashMap::new();
        let mut recalled = HashSet::new();
        for m in &trace.messages {
            for b in m.blocks() {
                if let BlockKind::ToolUse { id, name } = b.kind() {
                    names.insert(id.to_string(), name.to_string());
                    if **name == *RECALL_TOOL_NAME {
                        recalled.insert(recalled_id(b.tool_input().unwrap().get()).unwrap());
                    }
                }
            }
        }
        let mut out = Vec::new();
        for m in &trace.messages {
            for b in m.blocks() {
                if let BlockKind::ToolResult {
                    tool_use_id,
                    payload_chars,
                    ..
                } = b.kind()
                {
                    let name = names[&**tool_use_id].clone();
                    let id = mem_id(tool_use_id, &name, b.tool_result_payload().unwrap());
                    let size = size_bucket(*payload_chars);
                    out.push((name, size, false, recalled.contains(&id)));
                }
            }
        }
        for call in &trace.calls {
            let counts = ResultCounts::of(&trace.messages[..call.messages]);
            let mut i = 0;
            for m in &trace.messages[..call.messages] {
                for b in m.blocks() {
                    if let BlockKind::ToolResult { payload_chars, .. } = b.kind() {
                        out[i].2 |= policy.compacts(i, counts, *payload_chars);
                        i += 1;
                    }
                }
            }
        }
        out
    }

    #[test]
    fn recalls_where_the_ledger_ran_are_reported_and_charged_in_place_of_the_estimate() {
        let trace = tracecost_gen::ledger_session_parts(40, 2).remove(0);
        let ran = CompactionPolicy {
            size_threshold: 2_000,
            keep_last_n: 1,
        };
        let results = counted(&trace, ran);
        let stubbed: Vec<_> = results.iter().filter(|r| r.2).collect();
        let recalls = stubbed.iter().filter(|r| r.3).count();
        // Every recall names a result the ledger stubbed.
        assert_eq!(recalls, results.iter().filter(|r| r.3).count());
        assert!(
            recalls >= 2 && recalls < stubbed.len(),
            "{recalls} of {}",
            stubbed.len()
        );

        let s = sweep(
            &trace,
            &[
                "off+none",
                "ledger:t=2000,k=1+none",
                "ledger:t=8000,k=2+none",
            ],
        );
        let observed = s.observed_recall.clone().expect("the ledger ran");
        assert_eq!(
            (observed.recalls, observed.stubbed),
            (recalls, stubbed.len())
        );
        assert!((observed.rate - recalls as f64 / stubbed.len() as f64).abs() < 1e-12);
        // Per tool and size: the counts of the stubbed results of each.
        for cell in &observed.by_tool {
            let here: Vec<_> = stubbed
                .iter()
                .filter(|r| r.0 == cell.tool && SIZE_BUCKETS[r.1] == cell.size)
                .collect();
            assert_eq!(cell.stubbed, here.len(), "{cell:?}");
            assert_eq!(
                cell.recalls,
                here.iter().filter(|r| r.3).count(),
                "{cell:?}"
            );
        }
        assert_eq!(
            observed.by_tool.iter().map(|c| c.stubbed).sum::<usize>(),
            stubbed.len()
        );

        let row = |c: &str| {
            s.rows
                .iter()
                .find(|r| r.result.config.to_string() == c)
                .expect(c)
                .risk
        };
        // The ledger that ran needs exactly the results its model recalled,
        // at every bound: no estimate is left.
        let ran_risk = row("ledger:t=2000,k=1+none");
        for need in [ran_risk.needs.low, ran_risk.needs.mid, ran_risk.needs.high] {
            assert!((need - recalls as f64).abs() < 1e-9, "{:?}", ran_risk.needs);
        }
        assert!((ran_risk.observed_needs - recalls as f64).abs() < 1e-9);
        // Another ledger: each result it compacts at its cell's rate.
        let rate = |tool: &str, size: usize| {
            observed
                .by_tool
                .iter()
                .find(|c| c.tool == tool && c.size == SIZE_BUCKETS[size])
                .map_or(0.0, |c| c.rate)
        };
        let other = CompactionPolicy {
            size_threshold: 8_000,
            keep_last_n: 2,
        };
        let expected: f64 = counted(&trace, other)
            .iter()
            .filter(|r| r.2)
            .map(|r| rate(&r.0, r.1))
            .sum();
        let other_risk = row("ledger:t=8000,k=2+none");
        assert!(expected > 0.0);
        assert!(
            (other_risk.needs.mid - expected).abs() < 1e-9,
            "{:?} vs {expected}",
            other_risk.needs
        );
        assert_eq!(other_risk.needs.low, other_risk.needs.high);
        assert_eq!(row("off+none").needs.mid, 0.0);
    }

    #[test]
    fn without_the_ledger_nothing_is_observed() {
        let trace = tracecost_gen::session(30, 2);
        let s = sweep(&trace, &["off+none", "ledger:t=2000,k=1+none"]);
        assert_eq!(s.observed_recall, None);
        assert!(s.rows.iter().all(|r| r.risk.observed_needs == 0.0));
    }
}

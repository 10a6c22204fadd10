//! Which configs of a sweep apply to which traces: each (trace, config)
//! pair checked once, before anything runs, and the answer kept for the
//! sweep, the fleet's "skipped" note and the totals to read.

use crate::cost::pricing::Pricing;
use crate::policy::Config;
use crate::trace::TraceFacts;

use super::{ReplayError, check_config, check_model};

/// A sweep's configs and, per trace, the ones replayed over it.
///
/// The configs are the grid, then the traces' baselines the grid lacks.
/// Every pair the sweep replays passed [`check_config`] and has its model
/// priced; a pair that does not apply was refused by [`check_config`] (and
/// has no row). Built only by checking, so a sweep handed one runs without
/// checking again.
#[derive(Debug, Clone, PartialEq)]
pub struct Applicability {
    configs: Vec<Config>,
    grid: usize,
    /// Per trace: the index of its baseline in `configs`.
    baselines: Vec<usize>,
    /// Per trace, per config (row after row, `configs.len()` to a row):
    /// whether the sweep replays it. One allocation, however many traces:
    /// a fleet's plan keeps it for the whole run.
    applies: Vec<bool>,
}

impl Applicability {
    /// Every config of `grid` and every baseline must apply to every trace
    /// of `traces`: the first refusal (config by config) is the error.
    /// `baselines` holds one config per trace, or one for all.
    pub fn every<T: TraceFacts + ?Sized>(
        traces: &[&T],
        grid: &[Config],
        baselines: &[Config],
        pricing: &Pricing,
    ) -> Result<Applicability, ReplayError> {
        let mut a = Applicability::with_configs(traces.len(), grid, baselines)?;
        let n = a.configs.len();
        for (c, config) in a.configs.iter().enumerate() {
            for (t, trace) in traces.iter().enumerate() {
                check_config(*trace, config)?;
                check_model(
                    *trace,
                    config,
                    pricing.lookup(config.model_for_trace(*trace))?,
                )?;
                a.applies[t * n + c] = true;
            }
        }
        Ok(a)
    }

    /// A grid that applies per trace: each trace's own baseline must apply
    /// to it (else the error), and each config of `grid` is replayed over
    /// the traces it can apply to; one that applies to none was asked for
    /// in vain, and its first refusal is the error. `baselines` holds one
    /// config per trace, or one for all.
    pub fn per_trace<T: TraceFacts + ?Sized>(
        traces: &[&T],
        grid: &[Config],
        baselines: &[Config],
        pricing: &Pricing,
    ) -> Result<Applicability, ReplayError> {
        let mut a = Applicability::with_configs(traces.len(), grid, baselines)?;
        let n = a.configs.len();
        for (t, trace) in traces.iter().enumerate() {
            let b = a.baselines[t];
            let baseline = &a.configs[b];
            check_config(*trace, baseline)?;
            check_model(
                *trace,
                baseline,
                pricing.lookup(baseline.model_for_trace(*trace))?,
            )?;
            a.applies[t * n + b] = true;
        }
        for c in 0..a.grid {
            let config = &a.configs[c];
            let mut first_refusal = None;
            for (t, trace) in traces.iter().enumerate() {
                if a.applies[t * n + c] {
                    continue;
                }
                let refusal = match check_config(*trace, config) {
                    Ok(()) => {
                        let price = pricing.lookup(config.model_for_trace(*trace))?;
                        check_model(*trace, config, price).err()
                    }
                    Err(e) => Some(e),
                };
                match refusal {
                    None => a.applies[t * n + c] = true,
                    Some(e) => {
                        first_refusal.get_or_insert(e);
                    }
                }
            }
            if let Some(e) = first_refusal
                && a.refused(c) == traces.len()
            {
                return Err(e);
            }
        }
        Ok(a)
    }

    fn with_configs(
        traces: usize,
        grid: &[Config],
        baselines: &[Config],
    ) -> Result<Applicability, ReplayError> {
        if (baselines.is_empty() && traces > 0) || baselines.len() > 1 && baselines.len() != traces
        {
            return Err(ReplayError::Config {
                trace: format!("{traces} traces"),
                reason: format!(
                    "a sweep takes one baseline or one per trace, not {}",
                    baselines.len()
                ),
            });
        }
        let mut configs = grid.to_vec();
        let mut index = |b: &Config| match configs.iter().position(|c| c == b) {
            Some(i) => i,
            None => {
                configs.push(b.clone());
                configs.len() - 1
            }
        };
        let own: Vec<usize> = baselines.iter().map(&mut index).collect();
        let baselines = (0..traces).map(|t| own[t.min(own.len() - 1)]).collect();
        let n = configs.len();
        Ok(Applicability {
            configs,
            grid: grid.len(),
            baselines,
            applies: vec![false; n * traces],
        })
    }

    /// How many traces were checked.
    pub fn traces(&self) -> usize {
        self.baselines.len()
    }

    /// The configs: the grid, then the baselines it lacks.
    pub fn configs(&self) -> &[Config] {
        &self.configs
    }

    /// The grid's configs.
    pub fn grid(&self) -> &[Config] {
        &self.configs[..self.grid]
    }

    /// Trace `t`'s baseline.
    pub fn baseline(&self, t: usize) -> &Config {
        &self.configs[self.baselines[t]]
    }

    /// Whether config `c` (an index into [`Applicability::configs`]) is
    /// replayed over trace `t`.
    pub fn applies(&self, t: usize, c: usize) -> bool {
        self.applies[t * self.configs.len() + c]
    }

    /// How many traces config `c` is not replayed over.
    pub fn refused(&self, c: usize) -> usize {
        (0..self.traces()).filter(|&t| !self.applies(t, c)).count()
    }

    /// The same answers for the traces `which` names (indices), in that
    /// order: what a sweep of some of the traces (one account's) is handed.
    pub fn subset(&self, which: &[usize]) -> Applicability {
        Applicability {
            configs: self.configs.clone(),
            grid: self.grid,
            baselines: which.iter().map(|&t| self.baselines[t]).collect(),
            applies: which
                .iter()
                .flat_map(|&t| (0..self.configs.len()).map(move |c| self.applies(t, c)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Trace, load_str};

    /// A trace of `provider` whose one call recorded a marker when `marked`.
    fn trace(name: &str, provider: &str, marked: bool) -> Trace {
        let markers = if marked {
            r#","cache_markers":[{"message":0,"block":0}]"#
        } else {
            ""
        };
        let json = format!(
            r#"{{"format":"tracecost.trace/v1","name":"{name}","provider":"{provider}","model":"claude-sonnet-4-5","messages":[{{"role":"user","content":[{{"type":"text","text":"go"}}]}}],"calls":[{{"messages":1{markers}}}]}}"#
        );
        load_str(&json, "t.json").unwrap().traces.remove(0)
    }

    fn configs(s: &[&str]) -> Vec<Config> {
        s.iter().map(|c| c.parse().unwrap()).collect()
    }

    #[test]
    fn a_grid_applies_per_trace_and_a_config_for_none_is_refused() {
        let pricing = Pricing::builtin();
        let (marked, bare) = (
            trace("a", "anthropic", true),
            trace("b", "anthropic", false),
        );
        let traces = [&marked, &bare];
        let grid = configs(&["off+none", "off+recorded", "off+tail"]);
        let quos = [Config::status_quo(&marked).unwrap(), Config::baseline()];
        let a = Applicability::per_trace(&traces, &grid, &quos, &pricing).unwrap();
        // The grid, then the one baseline it lacks (none: both are in it).
        assert_eq!(a.configs(), &grid[..]);
        assert_eq!(a.baseline(0).to_string(), "off+recorded");
        assert_eq!(a.baseline(1).to_string(), "off+none");
        // `recorded` replays the markers of the trace that has some only.
        assert!(a.applies(0, 1) && !a.applies(1, 1));
        assert_eq!((a.refused(0), a.refused(1), a.refused(2)), (0, 1, 0));
        // One account's traces: the answers for those, in that order.
        let b = a.subset(&[1]);
        assert_eq!(b.traces(), 1);
        assert!(!b.applies(0, 1) && b.applies(0, 2));
        assert_eq!(b.baseline(0).to_string(), "off+none");
        // Applying to no trace is the first refusal.
        let e =
            Applicability::per_trace(&[&bare], &grid, &[Config::baseline()], &pricing).unwrap_err();
        assert!(e.to_string().contains("recorded none"), "{e}");
        // Every pair must apply when asked so.
        let e = Applicability::every(&traces, &grid, &quos, &pricing).unwrap_err();
        assert!(e.to_string().contains("trace b"), "{e}");
    }

    #[test]
    fn a_baseline_must_apply_to_its_own_trace() {
        let pricing = Pricing::builtin();
        let openai = trace("o", "openai", false);
        let e = Applicability::per_trace(
            &[&openai],
            &configs(&["off+none"]),
            &configs(&["off+tail"]),
            &pricing,
        )
        .unwrap_err();
        assert!(e.to_string().contains("does not accept"), "{e}");
        // A baseline the grid lacks is added after it.
        let a = Applicability::per_trace(
            &[&openai],
            &configs(&["ledger:t=10,k=1+none"]),
            &configs(&["off+none"]),
            &pricing,
        )
        .unwrap();
        assert_eq!(a.grid().len(), 1);
        assert_eq!(a.configs()[1].to_string(), "off+none");
        assert!(a.applies(0, 0) && a.applies(0, 1));
    }

    #[test]
    fn baselines_are_one_or_one_per_trace() {
        let pricing = Pricing::builtin();
        let t = trace("a", "anthropic", false);
        let two = [Config::baseline(), Config::baseline()];
        let three = [&t, &t, &t];
        assert!(Applicability::per_trace(&three, &[], &two, &pricing).is_err());
        assert!(Applicability::per_trace(&three, &[], &two[..1], &pricing).is_ok());
    }
}

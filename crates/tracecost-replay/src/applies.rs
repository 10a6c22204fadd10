//! Which configs of a sweep apply to which traces: each (trace, config)
//! pair checked once, before anything runs, and the answer kept for the
//! sweep, the fleet's "skipped" note and the totals to read.

use tracecost_cost::pricing::Pricing;
use tracecost_policy::Config;
use tracecost_trace::TraceFacts;

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
    /// whether the sweep replays it, a bit each. One allocation, however
    /// many traces: a fleet's plan keeps it for the whole run (and an
    /// account's sweep a copy of its part), 300 KB for 40,000 traces under
    /// 60 configs where a byte each would be 2.4 MB.
    applies: Vec<u64>,
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
                set_bit(&mut a.applies, t * n + c);
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
            set_bit(&mut a.applies, t * n + b);
        }
        for c in 0..a.grid {
            let config = &a.configs[c];
            let mut first_refusal = None;
            for (t, trace) in traces.iter().enumerate() {
                if a.applies(t, c) {
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
                    None => set_bit(&mut a.applies, t * n + c),
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
            applies: vec![0; (n * traces).div_ceil(64)],
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
        let i = t * self.configs.len() + c;
        self.applies[i / 64] >> (i % 64) & 1 == 1
    }

    /// How many traces config `c` is not replayed over.
    pub fn refused(&self, c: usize) -> usize {
        (0..self.traces()).filter(|&t| !self.applies(t, c)).count()
    }

    /// The same answers for the traces `which` names (indices), in that
    /// order: what a sweep of some of the traces (one account's) is handed.
    pub fn subset(&self, which: &[usize]) -> Applicability {
        let n = self.configs.len();
        let mut out = Applicability {
            configs: self.configs.clone(),
            grid: self.grid,
            baselines: which.iter().map(|&t| self.baselines[t]).collect(),
            applies: vec![0; (n * which.len()).div_ceil(64)],
        };
        for (k, &t) in which.iter().enumerate() {
            for c in (0..n).filter(|&c| self.applies(t, c)) {
                set_bit(&mut out.applies, k * n + c);
            }
        }
        out
    }
}

/// Marks bit `i` of [`Applicability::applies`] (trace `i / n`, config
/// `i % n`) as replayed.
fn set_bit(bits: &mut [u64], i: usize) {
    bits[i / 64] |= 1 << (i % 64);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_trace::{Trace, load_str};

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

    /// The answers are bits packed 64 to a word: traces and configs far
    /// past one word each read back their own, in a subset too.
    #[test]
    fn answers_past_one_word_read_back_their_own() {
        let pricing = Pricing::builtin();
        let marked: Vec<bool> = (0..70).map(|t| t % 3 == 0 || t % 7 == 1).collect();
        let traces: Vec<Trace> = marked
            .iter()
            .enumerate()
            .map(|(t, &m)| trace(&format!("t{t}"), "anthropic", m))
            .collect();
        let refs: Vec<&Trace> = traces.iter().collect();
        let grid = configs(&["off+none", "off+recorded", "off+tail"]);
        let a = Applicability::per_trace(&refs, &grid, &[Config::baseline()], &pricing).unwrap();
        for (t, &m) in marked.iter().enumerate() {
            assert_eq!(
                (a.applies(t, 0), a.applies(t, 1), a.applies(t, 2)),
                (true, m, true),
                "trace {t}"
            );
        }
        assert_eq!(a.refused(1), marked.iter().filter(|m| !**m).count());
        let which: Vec<usize> = (0..70).rev().step_by(3).collect();
        let b = a.subset(&which);
        for (k, &t) in which.iter().enumerate() {
            assert_eq!(b.applies(k, 1), marked[t], "trace {t} as {k}");
            assert!(b.applies(k, 0) && b.applies(k, 2));
        }
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

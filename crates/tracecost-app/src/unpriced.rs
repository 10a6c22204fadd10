//! Calls of models the price table does not know: set aside, counted, and
//! named once, so that one transcript of a local or unlisted model never
//! stops a run over many.
//!
//! The rule is applied to each trace as it is loaded, before any plan is
//! made of it: a call is priced at its model ([`Trace::model_of`]) unless
//! the command names a model to price every trace as. A trace with no call
//! that can be priced is left out of the run; a trace with some is
//! replayed on those calls alone, the others counted. A different model's
//! calls never read or write the priced model's prompt cache, so taking
//! them out leaves the cache the others met as it was.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::AppError;
use tracecost_cost::pricing::Pricing;
use tracecost_trace::Trace;

/// One model's calls that have no price.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnpricedModel {
    /// The model as the records name it.
    pub model: String,
    /// Its calls, over every file.
    pub calls: u64,
    /// The files they are in, sorted.
    pub files: Vec<String>,
}

/// Every unpriced call of a run, by model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unpriced {
    by_model: BTreeMap<String, (u64, BTreeSet<String>)>,
}

impl Unpriced {
    /// Whether every call had a price.
    pub fn is_empty(&self) -> bool {
        self.by_model.is_empty()
    }

    /// Counts `calls` calls of `model` in `file`.
    pub fn add(&mut self, model: &str, file: &str, calls: u64) {
        let (n, files) = self.by_model.entry(model.to_owned()).or_default();
        *n += calls;
        files.insert(file.to_owned());
    }

    /// Each model's unpriced calls, by model name.
    pub fn models(&self) -> Vec<UnpricedModel> {
        self.by_model
            .iter()
            .map(|(model, (calls, files))| UnpricedModel {
                model: model.clone(),
                calls: *calls,
                files: files.iter().cloned().collect(),
            })
            .collect()
    }

    /// One line per model for the user: what was left out and how to
    /// price it.
    pub fn lines(&self) -> Vec<String> {
        self.models().iter().map(UnpricedModel::line).collect()
    }

    /// Under `--strict-prices`: the first model's calls as an error (one
    /// line, naming the model, a file and the count).
    pub fn strict_error(&self) -> Option<AppError> {
        let models = self.models();
        let first = models.first()?;
        let more = match models.len() {
            1 => String::new(),
            n => format!(" (and {} other unpriced model(s))", n - 1),
        };
        let file = first.files.first().map_or("", String::as_str);
        let elsewhere = match first.files.len() {
            1 => String::new(),
            n => format!(" and {} other file(s)", n - 1),
        };
        Some(AppError::Usage(format!(
            "{file}{elsewhere}: {} of `{}` {} no price{more}; add it with --pricing FILE, or leave --strict-prices off to set unpriced calls aside",
            calls(first.calls),
            tracecost_engine::handle::one_line(&first.model, 200),
            have(first.calls),
        )))
    }
}

impl UnpricedModel {
    /// `412 calls of `qwen3-coder:30b` (2 files) have no price: add it with
    /// --pricing FILE`.
    pub fn line(&self) -> String {
        format!(
            "{} of `{}` ({} file{}) {} no price: left out of the totals; add it with --pricing FILE",
            calls(self.calls),
            tracecost_engine::handle::one_line(&self.model, 200),
            self.files.len(),
            if self.files.len() == 1 { "" } else { "s" },
            have(self.calls),
        )
    }
}

fn calls(n: u64) -> String {
    if n == 1 {
        "1 call".to_owned()
    } else {
        format!("{n} calls")
    }
}

fn have(n: u64) -> &'static str {
    if n == 1 { "has" } else { "have" }
}

/// What is left of a trace once its unpriced calls are set aside.
#[derive(Debug)]
pub enum Sifted {
    /// Every call has a price: the trace as it was.
    Whole(Trace),
    /// Some calls had none: the trace without them.
    Trimmed(Trace),
    /// No call has a price: nothing to replay.
    SetAside,
}

/// Sets aside `trace`'s calls whose model `pricing` does not know, counting
/// them in `unpriced`; `priced_as` (a model the command prices every call
/// as) leaves the trace whole: an unknown model named on purpose is the
/// command's error, not a call to set aside.
pub fn sift(
    mut trace: Trace,
    pricing: &Pricing,
    priced_as: Option<&str>,
    unpriced: &mut Unpriced,
) -> Sifted {
    if priced_as.is_some() {
        return Sifted::Whole(trace);
    }
    let mut missing: BTreeMap<String, u64> = BTreeMap::new();
    let priced: Vec<bool> = trace
        .calls
        .iter()
        .map(|c| {
            let model = trace.model_of(c);
            let known = pricing.lookup(model).is_ok();
            if !known {
                *missing.entry(model.to_owned()).or_default() += 1;
            }
            known
        })
        .collect();
    if missing.is_empty() {
        return Sifted::Whole(trace);
    }
    let file = trace.source.clone().unwrap_or_else(|| trace.name.clone());
    for (model, n) in &missing {
        unpriced.add(model, &file, *n);
    }
    if !priced.contains(&true) {
        return Sifted::SetAside;
    }
    let mut keep = priced.into_iter();
    trace.calls.retain(|_| keep.next().unwrap_or(false));
    // The trace's default model is the one its remaining calls are priced
    // at when they name none.
    if pricing.lookup(&trace.model).is_err()
        && let Some(m) = trace.calls.iter().find_map(|c| c.model.clone())
    {
        trace.model = m;
    }
    Sifted::Trimmed(trace)
}

/// [`sift`] over a list: the traces with a priced call, in order.
pub fn sift_all(
    traces: Vec<Trace>,
    pricing: &Pricing,
    priced_as: Option<&str>,
    unpriced: &mut Unpriced,
) -> Vec<Trace> {
    traces
        .into_iter()
        .filter_map(|t| match sift(t, pricing, priced_as, unpriced) {
            Sifted::Whole(t) | Sifted::Trimmed(t) => Some(t),
            Sifted::SetAside => None,
        })
        .collect()
}

//! The price table and model-name resolution: ids, aliases, provider
//! prefixes and suffixes, dated ids of undated models, closest names.

use std::collections::BTreeMap;

use super::{ModelPrice, ModelRow, PricingError, Usage, builtin, fmt_usd};
use crate::engine::cache::ProviderKind;

/// The price table: built-in models plus any merged pricing files.
#[derive(Debug, Clone, PartialEq)]
pub struct Pricing {
    pub(super) models: Vec<ModelPrice>,
    /// Lowercased id or alias → index into `models`.
    pub(super) index: BTreeMap<String, usize>,
}

/// Normalizes a model name for lookup: trims, lowercases, keeps the part
/// from `claude` on (dropping provider prefixes), turns a Vertex `@date`
/// into `-date` and drops a Bedrock `-vN:M` / `:M` suffix.
fn normalize(name: &str) -> String {
    let mut s = name.trim().to_ascii_lowercase();
    if let Some(i) = s.find("claude") {
        s = s[i..].to_string();
    } else if let Some(i) = s.rfind('/') {
        s = s[i + 1..].to_string();
    }
    s = s.replace('@', "-");
    if let Some(i) = s.find(':') {
        s.truncate(i);
        if let Some(j) = s.rfind("-v")
            && s[j + 2..].chars().all(|c| c.is_ascii_digit())
            && j + 2 < s.len()
        {
            s.truncate(j);
        }
    }
    s
}

/// Whether a cache write of `m` has a price of its own: every model but
/// OpenAI's before GPT-5.6, Gemini's and Amazon Nova's, whose caches store
/// for free.
fn bills_writes(m: &super::ModelPrice) -> bool {
    match m.provider {
        ProviderKind::OpenAi => m.breakpoint_cache,
        ProviderKind::Google | ProviderKind::BedrockConverse => false,
        _ => true,
    }
}

/// Drops a trailing `-YYYYMMDD` (Anthropic's dated ids), `-YYYY-MM-DD`
/// (OpenAI's snapshots) or `-latest`.
fn strip_date(s: &str) -> Option<&str> {
    if let Some(base) = s.strip_suffix("-latest") {
        return Some(base);
    }
    let digits = |t: &str, n: usize| t.len() == n && t.chars().all(|c| c.is_ascii_digit());
    let (base, tail) = s.rsplit_once('-')?;
    if digits(tail, 8) {
        return Some(base);
    }
    let (rest, month) = base.rsplit_once('-')?;
    let (base, year) = rest.rsplit_once('-')?;
    (digits(tail, 2) && digits(month, 2) && digits(year, 4)).then_some(base)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

impl Default for Pricing {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Pricing {
    /// The built-in table (see [`crate::pricing`]).
    pub fn builtin() -> Self {
        let mut p = Self {
            models: Vec::new(),
            index: BTreeMap::new(),
        };
        for m in builtin::models() {
            p.insert(m);
        }
        p
    }

    pub(super) fn insert(&mut self, m: ModelPrice) -> usize {
        let i = self.models.len();
        self.index.insert(m.id.to_ascii_lowercase(), i);
        for a in &m.aliases {
            self.index.insert(a.to_ascii_lowercase(), i);
        }
        self.models.push(m);
        i
    }

    /// Every model, built-ins first in table order, then added models in
    /// file order.
    pub fn models(&self) -> &[ModelPrice] {
        &self.models
    }

    /// Index of an exact name (id or alias) after normalization.
    pub(super) fn exact(&self, name: &str) -> Option<usize> {
        let lower = name.trim().to_ascii_lowercase();
        self.index
            .get(&lower)
            .or_else(|| self.index.get(&normalize(name)))
            .copied()
    }

    pub(super) fn resolve(&self, name: &str) -> Option<usize> {
        if let Some(i) = self.exact(name) {
            return Some(i);
        }
        let n = normalize(name);
        strip_date(&n).and_then(|base| self.index.get(base).copied())
    }

    /// Finds a model by id, alias, prefixed or dated name.
    pub fn lookup(&self, model: &str) -> Result<&ModelPrice, PricingError> {
        match self.resolve(model) {
            Some(i) => Ok(&self.models[i]),
            None => Err(PricingError::UnknownModel {
                model: model.to_string(),
                closest: self.closest(model, 3),
            }),
        }
    }

    /// Up to `n` known names closest to `model` by edit distance, at most
    /// one per model, closest first (ties by name).
    pub fn closest(&self, model: &str, n: usize) -> Vec<String> {
        let target = normalize(model);
        let mut scored: Vec<(usize, &str, usize)> = self
            .index
            .iter()
            .map(|(name, &i)| (levenshtein(&target, name), name.as_str(), i))
            .collect();
        scored.sort();
        let mut seen = Vec::new();
        let mut out = Vec::new();
        for (_, name, i) in scored {
            if out.len() == n {
                break;
            }
            if !seen.contains(&i) {
                seen.push(i);
                out.push(name.to_string());
            }
        }
        out
    }

    /// Cost of one request of `model`.
    pub fn cost_usd(&self, model: &str, usage: &Usage, batch: bool) -> Result<f64, PricingError> {
        Ok(self.lookup(model)?.cost_usd(usage, batch))
    }

    /// Structured rows for `tracecost models`, in table order: one per
    /// price row of a model, oldest first.
    pub fn rows(&self) -> Vec<ModelRow> {
        self.models
            .iter()
            .flat_map(|m| m.rows().into_iter().map(move |r| model_row(m, &r)))
            .collect()
    }
}

/// The `tracecost models` row of one price row of `m`.
fn model_row(m: &ModelPrice, r: &super::PriceRow) -> ModelRow {
    ModelRow {
        id: m.id.clone(),
        effective_from: r.from,
        aliases: m.aliases.clone(),
        input: r.rates.input,
        // OpenAI's automatic cache stores for free: no write price.
        write_5m: bills_writes(m).then_some(r.rates.cache_write_5m),
        write_1h: bills_writes(m).then_some(r.rates.cache_write_1h),
        read: r.rates.cache_read,
        storage_per_hour: m.cache_storage_per_mtok_hour,
        output: r.rates.output,
        window_tokens: m.window_tokens(),
        min_cacheable_tokens: m.min_cacheable_tokens,
        long_context: r.long_context.map(|lc| {
            format!(
                "above {} input tokens the whole request costs ${} in / ${} out per MTok",
                lc.threshold_tokens,
                fmt_usd(lc.rates.input),
                fmt_usd(lc.rates.output)
            )
        }),
        modifiers: m.modifiers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_strips_prefixes_and_suffixes() {
        assert_eq!(normalize("anthropic/claude-opus-4-6"), "claude-opus-4-6");
        assert_eq!(
            normalize("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            "claude-sonnet-4-5-20250929"
        );
        assert_eq!(
            normalize("claude-opus-4@20250514"),
            "claude-opus-4-20250514"
        );
        assert_eq!(normalize(" Claude-Haiku-4-5 "), "claude-haiku-4-5");
        assert_eq!(
            strip_date("claude-opus-4-6-20260205"),
            Some("claude-opus-4-6")
        );
        assert_eq!(strip_date("claude-opus-4-6"), None);
        assert_eq!(strip_date("gpt-4o-2024-08-06"), Some("gpt-4o"));
        assert_eq!(strip_date("gpt-4o-mini"), None);
        assert_eq!(strip_date("gpt-5-2025-8-07"), None);
    }

    #[test]
    fn edit_distance() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("abc", "abc"), 0);
    }
}

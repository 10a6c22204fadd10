//! The price table and model-name resolution: ids, aliases, provider
//! prefixes and suffixes, dated ids of undated models, closest names.

use std::collections::BTreeMap;

use super::{ModelPrice, ModelRow, PriceFile, PricingError, Usage, builtin, fmt_usd};
use tracecost_engine::cache::ProviderKind;

/// The price table: built-in models plus any merged pricing files.
#[derive(Debug, Clone, PartialEq)]
pub struct Pricing {
    pub(super) models: Vec<ModelPrice>,
    /// Lowercased id or alias → index into `models`.
    pub(super) index: BTreeMap<String, usize>,
    /// The pricing files merged over the built-in table, in order.
    pub(super) files: Vec<PriceFile>,
}

/// Bedrock's cross-region inference profiles: the first dotted part of a
/// profile id (`us.anthropic.claude-…`). Kept apart from the model, since a
/// regional endpoint may be billed at a rate of its own.
const REGIONS: [&str; 8] = ["us", "us-gov", "eu", "apac", "jp", "au", "ca", "global"];

/// Bedrock's vendor parts (`anthropic.claude-…`, `amazon.nova-…`,
/// `openai.gpt-…`): the model is the rest.
const VENDORS: [&str; 3] = ["anthropic", "amazon", "openai"];

/// A model name as the price table keys it, and the regional profile the
/// name was given with (Bedrock's `us.`, `eu.`, `apac.`, `global.`, …).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelId {
    /// The model the name names: lowercased, without proxy or router
    /// prefixes (`openrouter/anthropic/`, `bedrock/`, `vertex_ai/`),
    /// vendor parts, a Bedrock `-vN` / `-vN:M` suffix, a date
    /// (`-20251101`, `-2025-11-13`, Vertex's `@20250514`) or `-latest`,
    /// with the dots of a version written as dashes (`gpt-5.1` and
    /// `gpt-5-1` are one key).
    pub key: String,
    /// The regional profile, when the name had one.
    pub region: Option<String>,
}

/// Reduces a provider's, proxy's or router's form of a model id to the key
/// of the model it names (see [`ModelId`]). Each step is repeated until
/// nothing changes, so the key of a key is itself.
pub fn model_id(name: &str) -> ModelId {
    let mut region = None;
    let mut s = name.trim().to_ascii_lowercase();
    loop {
        let before = s.clone();
        if let Some((_, last)) = s.rsplit_once('/') {
            s = last.trim().to_string();
        }
        if let Some((head, rest)) = s.split_once('.')
            && REGIONS.contains(&head)
            && !rest.is_empty()
        {
            region.get_or_insert_with(|| head.to_string());
            s = rest.to_string();
        }
        if let Some((head, rest)) = s.split_once('.')
            && VENDORS.contains(&head)
            && !rest.is_empty()
        {
            s = rest.to_string();
        }
        s = s.replace('@', "-");
        s = strip_version(&s).to_string();
        s = strip_date(&s).unwrap_or(&s).to_string();
        s = version_dots_as_dashes(&s);
        if s == before {
            return ModelId { key: s, region };
        }
    }
}

/// The name with only its provider forms taken off (prefixes, vendor,
/// Bedrock version, `@`), its date kept: the name a dated table row is
/// listed under.
fn undated(name: &str) -> String {
    let mut s = name.trim().to_ascii_lowercase();
    if let Some((_, last)) = s.rsplit_once('/') {
        s = last.to_string();
    }
    for list in [&REGIONS[..], &VENDORS[..]] {
        if let Some((head, rest)) = s.split_once('.')
            && list.contains(&head)
            && !rest.is_empty()
        {
            s = rest.to_string();
        }
    }
    s = s.replace('@', "-");
    strip_version(&s).to_string()
}

/// Drops Bedrock's model version, `-vN` or `-vN:M` (`-v1:0`, `-v2`). A
/// colon elsewhere is part of the name (Ollama's `qwen3-coder:30b`).
fn strip_version(s: &str) -> &str {
    let digits = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    let head = match s.rsplit_once(':') {
        Some((head, minor)) if digits(minor) => head,
        Some(_) => return s,
        None => s,
    };
    match head.rsplit_once("-v") {
        Some((base, major)) if digits(major) && !base.is_empty() => base,
        _ => s,
    }
}

/// `gpt-5.1-codex` → `gpt-5-1-codex`: a dot between digits (a version's)
/// as a dash, the form Anthropic's ids and some proxies write.
fn version_dots_as_dashes(s: &str) -> String {
    let b = s.as_bytes();
    s.char_indices()
        .map(|(i, c)| {
            let digit_at = |j: usize| b.get(j).is_some_and(u8::is_ascii_digit);
            if c == '.' && i > 0 && digit_at(i - 1) && digit_at(i + 1) {
                '-'
            } else {
                c
            }
        })
        .collect()
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
            files: Vec::new(),
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

    /// The pricing files merged over the built-in table (dated
    /// [`super::BUILTIN_TABLE_DATE`]), in the order merged: which prices
    /// priced a run.
    pub fn files(&self) -> &[PriceFile] {
        &self.files
    }

    /// Which prices this table holds: the built-in table's day and the
    /// files merged over it.
    pub fn table_record(&self) -> super::PriceTableRecord {
        super::PriceTableRecord {
            builtin: super::BUILTIN_TABLE_DATE,
            files: self.files.clone(),
        }
    }

    /// Every model, built-ins first in table order, then added models in
    /// file order.
    pub fn models(&self) -> &[ModelPrice] {
        &self.models
    }

    /// Index of an exact name (id or alias), as given or with its provider
    /// forms taken off.
    pub(super) fn exact(&self, name: &str) -> Option<usize> {
        let lower = name.trim().to_ascii_lowercase();
        self.index
            .get(&lower)
            .or_else(|| self.index.get(&undated(name)))
            .copied()
    }

    /// Index of the model `name` names: an exact name, else the name
    /// without its date, else the one model whose key ([`model_id`]) is
    /// the name's. A key shared by several models (a pricing file's dated
    /// rows of one model) goes to the undated name's model, else to none:
    /// a name that lands on no known model stays unknown.
    pub(super) fn resolve(&self, name: &str) -> Option<usize> {
        if let Some(i) = self.exact(name) {
            return Some(i);
        }
        let n = undated(name);
        if let Some(i) = strip_date(&n).and_then(|base| self.index.get(base)) {
            return Some(*i);
        }
        self.by_key(&model_id(name).key)
    }

    /// The model whose names have `key` (see [`Self::resolve`]).
    fn by_key(&self, key: &str) -> Option<usize> {
        let mut all: Vec<usize> = Vec::new();
        let mut undated_names: Vec<usize> = Vec::new();
        for (known, &i) in &self.index {
            if model_id(known).key != key {
                continue;
            }
            if !all.contains(&i) {
                all.push(i);
            }
            if strip_date(&undated(known)).is_none() && !undated_names.contains(&i) {
                undated_names.push(i);
            }
        }
        match (all.as_slice(), undated_names.as_slice()) {
            ([one], _) | (_, [one]) => Some(*one),
            _ => None,
        }
    }

    /// Finds a model by id, alias or any provider form of them (see
    /// [`model_id`]), with the regional profile the name was given with.
    pub fn lookup_id(&self, model: &str) -> Result<(&ModelPrice, Option<String>), PricingError> {
        Ok((self.lookup(model)?, model_id(model).region))
    }

    /// Finds a model by id, alias or any provider form of them (see
    /// [`model_id`]).
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
        let target = undated(model);
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

    fn key(name: &str) -> String {
        model_id(name).key
    }

    #[test]
    fn provider_forms_reduce_to_the_model() {
        assert_eq!(key("anthropic/claude-opus-4-6"), "claude-opus-4-6");
        assert_eq!(
            key("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            "claude-sonnet-4-5"
        );
        assert_eq!(key("anthropic.claude-opus-4-6-v1"), "claude-opus-4-6");
        assert_eq!(key("claude-opus-4@20250514"), "claude-opus-4");
        assert_eq!(key(" Claude-Haiku-4-5 "), "claude-haiku-4-5");
        assert_eq!(key("gpt-5-1-codex-2025-11-13"), "gpt-5-1-codex");
        assert_eq!(key("gpt-5.1-codex"), "gpt-5-1-codex");
        assert_eq!(key("claude-opus-4.6"), "claude-opus-4-6");
        assert_eq!(
            key("openrouter/anthropic/claude-opus-4.6"),
            "claude-opus-4-6"
        );
        assert_eq!(key("vertex_ai/claude-opus-4-5@20251101"), "claude-opus-4-5");
        assert_eq!(key("bedrock/global.amazon.nova-pro-v1:0"), "nova-pro");
        // An Ollama tag is part of the name, not a version.
        assert_eq!(key("qwen3-coder:30b"), "qwen3-coder:30b");
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
    fn the_regional_profile_is_kept_apart() {
        let id = model_id("eu.anthropic.claude-sonnet-4-5-20250929-v1:0");
        assert_eq!(id.region.as_deref(), Some("eu"));
        assert_eq!(
            model_id("apac.amazon.nova-lite-v1:0").region.as_deref(),
            Some("apac")
        );
        assert_eq!(
            model_id("global.anthropic.claude-opus-4-6-v1")
                .region
                .as_deref(),
            Some("global")
        );
        assert_eq!(model_id("claude-opus-4-6").region, None);
        let p = Pricing::builtin();
        let (m, region) = p.lookup_id("us.anthropic.claude-opus-4-6-v1").unwrap();
        assert_eq!(
            (m.id.as_str(), region.as_deref()),
            ("claude-opus-4-6", Some("us"))
        );
    }

    #[test]
    fn provider_forms_resolve_to_the_table_s_model() {
        let p = Pricing::builtin();
        let id = |name: &str| p.lookup(name).map(|m| m.id.clone()).ok();
        for (name, want) in [
            ("gpt-5-1-codex-2025-11-13", "gpt-5.1-codex"),
            ("gpt-5-1-codex", "gpt-5.1-codex"),
            ("openai/gpt-5-4-mini", "gpt-5.4-mini"),
            ("claude-opus-4.6", "claude-opus-4-6"),
            ("anthropic/claude-opus-4.5", "claude-opus-4-5-20251101"),
            ("anthropic.claude-opus-4-6-v1", "claude-opus-4-6"),
            ("us.anthropic.claude-opus-4-6-v1:0", "claude-opus-4-6"),
            (
                "apac.anthropic.claude-haiku-4-5-20251001-v1:0",
                "claude-haiku-4-5-20251001",
            ),
            ("openrouter/openai/gpt-4.1-2025-04-14", "gpt-4.1"),
            ("vertex_ai/gemini-2-5-pro", "gemini-2.5-pro"),
            (
                "bedrock/eu.anthropic.claude-sonnet-4-6",
                "claude-sonnet-4-6",
            ),
        ] {
            assert_eq!(id(name).as_deref(), Some(want), "{name}");
        }
        // A form that lands on no known model stays unknown: never the
        // nearest model of another family or size.
        for name in [
            "qwen3-coder:30b",
            "gpt-5-1-codex-ultra",
            "claude-opus-9",
            "gpt-5-9",
            "us.meta.llama3-70b-v1:0",
        ] {
            assert_eq!(id(name), None, "{name}");
        }
    }

    proptest::proptest! {
        #[test]
        fn the_key_of_a_key_is_itself(name in "[a-zA-Z0-9./:@ _-]{0,40}") {
            let once = model_id(&name);
            let twice = model_id(&once.key);
            proptest::prop_assert_eq!(&twice.key, &once.key);
        }

        #[test]
        fn provider_forms_of_a_known_name_find_it(
            i in 0usize..64,
            region in proptest::option::of(proptest::sample::select(&REGIONS[..])),
            dated in proptest::bool::ANY,
        ) {
            let p = Pricing::builtin();
            let m = &p.models()[i % p.models().len()];
            let mut name = m.id.clone();
            if dated && strip_date(&name).is_none() {
                name.push_str("-20260101");
            }
            if let Some(r) = region {
                name = format!("{r}.{name}");
            }
            proptest::prop_assert_eq!(&p.lookup(&name).unwrap().id, &m.id);
        }
    }

    #[test]
    fn edit_distance() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("abc", "abc"), 0);
    }
}

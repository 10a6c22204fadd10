//! LiteLLM's `model_prices_and_context_window.json`: merged as a pricing
//! file, or rewritten as one of tracecost's own.

use serde_json::{Map, Value};

use crate::pricing::{
    LONG_CONTEXT_THRESHOLD, LongContext, MAX_PRICE_PER_MTOK, MergeSummary, ModelPrice, PriceSource,
    Pricing, PricingError, Rates, builtin,
};
use tracecost_engine::cache::ProviderKind;

use serde::Deserialize;

use super::checked::{Count, Label, Member, Misfit, Price};
use super::{Ctx, ptr, template_of};

/// Member `$field` of entry `$e` (a [`LitellmEntry`]) as a per-token price
/// in USD per million tokens, or as a token count: the field's name is its
/// key in the file.
macro_rules! price {
    ($e:expr, $field:ident) => {
        $e.per_token(&$e.f.$field, stringify!($field))
    };
}

macro_rules! count {
    ($e:expr, $field:ident) => {
        $e.count(&$e.f.$field, stringify!($field))
    };
}

impl Pricing {
    /// Merges LiteLLM's file: each entry of a provider tracecost models and
    /// with input and output prices (others are skipped), its per-token
    /// prices read as per million tokens.
    pub(super) fn merge_litellm(
        &mut self,
        ctx: &Ctx<'_>,
        top: &Map<String, Value>,
    ) -> Result<MergeSummary, PricingError> {
        let mut summary = MergeSummary {
            format: "litellm",
            ..MergeSummary::default()
        };
        for (key, entry) in top {
            if !entry.is_object() {
                summary.skipped += 1;
                continue;
            }
            // Every member of the struct reads any value, and `entry` is an
            // object: this cannot fail.
            let f = LitellmFields::deserialize(entry).unwrap_or_default();
            let Some((provider, name)) = litellm_model(key, &f) else {
                summary.skipped += 1;
                continue;
            };
            let e = LitellmEntry { ctx, key, f };
            let (Some(input), Some(output)) = (
                price!(e, input_cost_per_token)?,
                price!(e, output_cost_per_token)?,
            ) else {
                summary.skipped += 1;
                continue;
            };
            let (existing, mut m) = self.existing_or_template(name);
            let is_new = existing.is_none();
            if provider == ProviderKind::Anthropic {
                e.anthropic(&mut m, is_new, (input, output))?;
            } else {
                e.openai_or_google(&mut m, provider, name, is_new, (input, output))?;
            }
            self.commit(existing, m, &mut summary);
        }
        Ok(summary)
    }
}

/// The members of a LiteLLM entry tracecost reads (the file has many
/// more, ignored). Each is a [`Member`]: a bad value is reported only when
/// the reader reaches it, so an entry that is skipped is never refused.
#[derive(Deserialize, Default)]
#[serde(default)]
struct LitellmFields {
    litellm_provider: Member<Label>,
    mode: Member<Label>,
    max_input_tokens: Member<Count>,
    prompt_cache_min_tokens: Member<Count>,
    tool_use_system_prompt_tokens: Member<Count>,
    input_cost_per_token: Member<Price>,
    output_cost_per_token: Member<Price>,
    cache_read_input_token_cost: Member<Price>,
    cache_creation_input_token_cost: Member<Price>,
    cache_creation_input_token_cost_above_1hr: Member<Price>,
    input_cost_per_token_above_200k_tokens: Member<Price>,
    output_cost_per_token_above_200k_tokens: Member<Price>,
    cache_read_input_token_cost_above_200k_tokens: Member<Price>,
    cache_creation_input_token_cost_above_200k_tokens: Member<Price>,
    cache_creation_input_token_cost_above_1hr_above_200k_tokens: Member<Price>,
    input_cost_per_token_above_272k_tokens: Member<Price>,
    output_cost_per_token_above_272k_tokens: Member<Price>,
    cache_read_input_token_cost_above_272k_tokens: Member<Price>,
    cache_creation_input_token_cost_above_272k_tokens: Member<Price>,
}

/// The four prices of a long-context tier, by LiteLLM's names.
struct TierFields<'f> {
    names: [&'static str; 4],
    input: &'f Member<Price>,
    output: &'f Member<Price>,
    cache_read: &'f Member<Price>,
    cache_write: &'f Member<Price>,
}

impl LitellmFields {
    /// The tier above 272K tokens (OpenAI's) or above 200K (Gemini's and
    /// Anthropic's).
    fn tier(&self, above_272k: bool) -> TierFields<'_> {
        if above_272k {
            TierFields {
                names: [
                    "input_cost_per_token_above_272k_tokens",
                    "output_cost_per_token_above_272k_tokens",
                    "cache_read_input_token_cost_above_272k_tokens",
                    "cache_creation_input_token_cost_above_272k_tokens",
                ],
                input: &self.input_cost_per_token_above_272k_tokens,
                output: &self.output_cost_per_token_above_272k_tokens,
                cache_read: &self.cache_read_input_token_cost_above_272k_tokens,
                cache_write: &self.cache_creation_input_token_cost_above_272k_tokens,
            }
        } else {
            TierFields {
                names: [
                    "input_cost_per_token_above_200k_tokens",
                    "output_cost_per_token_above_200k_tokens",
                    "cache_read_input_token_cost_above_200k_tokens",
                    "cache_creation_input_token_cost_above_200k_tokens",
                ],
                input: &self.input_cost_per_token_above_200k_tokens,
                output: &self.output_cost_per_token_above_200k_tokens,
                cache_read: &self.cache_read_input_token_cost_above_200k_tokens,
                cache_write: &self.cache_creation_input_token_cost_above_200k_tokens,
            }
        }
    }
}

/// One entry of LiteLLM's file, its prices read per million tokens.
struct LitellmEntry<'a> {
    ctx: &'a Ctx<'a>,
    key: &'a str,
    f: LitellmFields,
}

impl LitellmEntry<'_> {
    /// What was wrong with member `name` of this entry, as the file's error.
    fn error(&self, e: Misfit) -> PricingError {
        self.ctx.located(&ptr(&[self.key]), e)
    }

    /// A token count.
    fn count(&self, m: &Member<Count>, name: &str) -> Result<Option<u64>, PricingError> {
        Ok(m.get(name).map_err(|e| self.error(e))?.map(|c| c.0))
    }

    /// A per-token price as USD per million tokens, rounded to a millionth
    /// of a cent per million so that the decimal of the file survives.
    fn per_token(&self, m: &Member<Price>, name: &str) -> Result<Option<f64>, PricingError> {
        match m
            .get(name)
            .map_err(|e| self.error(e))?
            .map(|v| (v.0 * 1e12).round() / 1e6)
        {
            Some(v) if v > MAX_PRICE_PER_MTOK => Err(self.error(
                Misfit::new(format!(
                    "a price of at most 1 USD per token, found {:e}",
                    v / 1e6
                ))
                .under(name),
            )),
            v => Ok(v),
        }
    }

    /// An OpenAI or Gemini model: its cache and long-context rates follow
    /// the provider's rules (the builtin table's), from LiteLLM's prices.
    fn openai_or_google(
        &self,
        m: &mut ModelPrice,
        provider: ProviderKind,
        name: &str,
        is_new: bool,
        (input, output): (f64, f64),
    ) -> Result<(), PricingError> {
        if is_new && m.provider != provider {
            *m = template_of(provider, name);
        }
        if is_new && let Some(w) = count!(self, max_input_tokens)? {
            m.context_window = Some(w);
        }
        // A read price not given: a known model keeps its discount,
        // a new one has none to go by and reads at the input price.
        let discount = if !is_new && m.rates.input > 0.0 {
            m.rates.cache_read / m.rates.input
        } else {
            1.0
        };
        let read = price!(self, cache_read_input_token_cost)?.unwrap_or(input * discount);
        let write = price!(self, cache_creation_input_token_cost)?;
        // Only the models that cache at breakpoints (GPT-5.6 and
        // later) bill a write; Gemini's implicit cache bills none
        // (LiteLLM's write price there is for explicit caching).
        let write = write.filter(|_| provider == ProviderKind::OpenAi);
        if is_new && write.is_some() {
            m.breakpoint_cache = true;
        }
        let write = write.unwrap_or(input);
        let storage = m.cache_storage_per_mtok_hour;
        m.rates = match provider {
            ProviderKind::Google => builtin::gemini_rates(input, read, output, storage),
            _ => Rates {
                cache_write_5m: write,
                cache_write_1h: write,
                ..builtin::openai_rates(input, read, output)
            },
        };
        // OpenAI's tier starts above 272K tokens, Gemini's above 200K.
        let threshold = match provider {
            ProviderKind::OpenAi => builtin::OPENAI_LONG_CONTEXT_THRESHOLD,
            _ => builtin::GEMINI_LONG_CONTEXT_THRESHOLD,
        };
        let t = self.f.tier(provider == ProviderKind::OpenAi);
        m.long_context = match self.per_token(t.input, t.names[0])? {
            None => None,
            Some(lin) => {
                let lout = self.per_token(t.output, t.names[1])?.unwrap_or(output);
                let lread = self.per_token(t.cache_read, t.names[2])?.unwrap_or(lin);
                let lwrite = self
                    .per_token(t.cache_write, t.names[3])?
                    .filter(|_| provider == ProviderKind::OpenAi)
                    .unwrap_or(lin);
                Some(LongContext {
                    threshold_tokens: threshold,
                    rates: match provider {
                        ProviderKind::Google => builtin::gemini_rates(lin, lread, lout, storage),
                        _ => Rates {
                            cache_write_5m: lwrite,
                            cache_write_1h: lwrite,
                            ..builtin::openai_rates(lin, lread, lout)
                        },
                    },
                })
            }
        };
        Ok(())
    }

    /// An Anthropic model: LiteLLM's cache and long-context prices, and
    /// for a new model its cache minimum and tool prompt.
    fn anthropic(
        &self,
        m: &mut ModelPrice,
        is_new: bool,
        (input, output): (f64, f64),
    ) -> Result<(), PricingError> {
        let mut rates = Rates::from_input_output(input, output);
        if let Some(v) = price!(self, cache_creation_input_token_cost)? {
            rates.cache_write_5m = v;
        }
        if let Some(v) = price!(self, cache_creation_input_token_cost_above_1hr)? {
            rates.cache_write_1h = v;
        }
        if let Some(v) = price!(self, cache_read_input_token_cost)? {
            rates.cache_read = v;
        }
        m.rates = rates;
        m.long_context = match price!(self, input_cost_per_token_above_200k_tokens)? {
            None => None,
            Some(lin) => {
                let lout = price!(self, output_cost_per_token_above_200k_tokens)?.unwrap_or(output);
                let mut lr = Rates::from_input_output(lin, lout);
                if let Some(v) = price!(self, cache_creation_input_token_cost_above_200k_tokens)? {
                    lr.cache_write_5m = v;
                }
                if let Some(v) = price!(
                    self,
                    cache_creation_input_token_cost_above_1hr_above_200k_tokens
                )? {
                    lr.cache_write_1h = v;
                }
                if let Some(v) = price!(self, cache_read_input_token_cost_above_200k_tokens)? {
                    lr.cache_read = v;
                }
                Some(LongContext {
                    threshold_tokens: LONG_CONTEXT_THRESHOLD,
                    rates: lr,
                })
            }
        };
        // Validated always, applied to new models only: for a known
        // model the built-in data follows the provider docs.
        let min_tokens = count!(self, prompt_cache_min_tokens)?;
        let tool_tokens = count!(self, tool_use_system_prompt_tokens)?;
        if is_new {
            if let Some(v) = min_tokens {
                m.min_cacheable_tokens = v;
            }
            if let Some(v) = tool_tokens {
                m.tool_prompt.auto_none = v;
            }
        }
        Ok(())
    }
}

/// LiteLLM's `model_prices_and_context_window.json` (`text`, named `file`
/// in errors) as a pricing file of tracecost's own format, JSON text
/// ending in a newline, and what reading it changed: each entry the
/// LiteLLM reader maps onto a model (see [`crate::pricing`]) becomes that
/// model's row from `source.fetched` on (`effective_from`), so calls before
/// that day keep the prices in force then; a model the table lacks also
/// gets its provider, window, minimum cacheable length and tool prompt.
/// Entries it cannot map are left out (counted in
/// [`MergeSummary::skipped`]). The file names its `source`. Models are
/// written in id order: the same bytes fetched on the same day give the
/// same file.
pub fn litellm_to_native(
    text: &str,
    file: &str,
    source: PriceSource,
) -> Result<(String, MergeSummary), PricingError> {
    let ctx = Ctx { file };
    if text.trim_start().starts_with('{')
        && let Ok(Value::Object(top)) = serde_json::from_str::<Value>(text)
        && top.contains_key("models")
    {
        return Err(ctx.shape(
            "/models",
            "LiteLLM's model_prices_and_context_window.json (this is a tracecost pricing file)",
        ));
    }
    let mut table = Pricing::builtin();
    let mut summary = table.merge_str(text, file)?;
    let mut ids: Vec<&String> = summary.updated.iter().chain(&summary.added).collect();
    ids.sort();
    ids.dedup();
    let mut models = Map::new();
    for id in ids {
        let Some(m) = table.exact(id).map(|i| &table.models[i]) else {
            continue;
        };
        let mut row = Map::new();
        row.insert("effective_from".into(), source.fetched.to_string().into());
        if summary.added.contains(id) {
            row.insert("provider".into(), m.provider.as_str().into());
            if let Some(w) = m.context_window {
                row.insert("context_window".into(), w.into());
            }
            row.insert("min_cacheable_tokens".into(), m.min_cacheable_tokens.into());
            row.insert(
                "tool_prompt_tokens".into(),
                serde_json::json!({
                    "auto_none": m.tool_prompt.auto_none,
                    "any_tool": m.tool_prompt.any_tool,
                }),
            );
        }
        rates_into(&mut row, &m.rates);
        let long_context = match &m.long_context {
            None => Value::Null,
            Some(lc) => {
                let mut o = Map::new();
                o.insert("threshold_tokens".into(), lc.threshold_tokens.into());
                rates_into(&mut o, &lc.rates);
                Value::Object(o)
            }
        };
        row.insert("long_context".into(), long_context);
        models.insert(m.id.clone(), Value::Object(row));
    }
    let doc = serde_json::json!({
        "description": format!(
            "Prices read from LiteLLM's model_prices_and_context_window.json as fetched on {}; each in force from that day on.",
            source.fetched
        ),
        "source": {
            "url": source.url,
            "sha256": source.sha256,
            "fetched": source.fetched.to_string(),
        },
        "models": models,
    });
    summary.source = Some(source);
    let mut out = serde_json::to_string_pretty(&doc).unwrap_or_default();
    out.push('\n');
    Ok((out, summary))
}

/// The five rates of a native row (or of its long-context premium).
fn rates_into(row: &mut Map<String, Value>, r: &Rates) {
    for (name, v) in [
        ("input", r.input),
        ("cache_write_5m", r.cache_write_5m),
        ("cache_write_1h", r.cache_write_1h),
        ("cache_read", r.cache_read),
        ("output", r.output),
    ] {
        row.insert(name.into(), v.into());
    }
}

/// Which of LiteLLM's entries are read, and as whose model: Anthropic's
/// Claude chat models (`claude…` or `anthropic/claude…`, provider
/// `anthropic`) and OpenAI's chat and Responses models (`gpt-…`, `o1`…`o9`
/// and `codex…`, or `openai/…`, provider `openai`) and Google's Gemini
/// chat models (`gemini-…` or `gemini/gemini-…`, provider `gemini` or
/// `vertex_ai-language-models`). The name is the key without its provider
/// prefix.
fn litellm_model<'k>(key: &'k str, f: &LitellmFields) -> Option<(ProviderKind, &'k str)> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, rest)) => (Some(p.to_ascii_lowercase()), rest),
        None => (None, key),
    };
    fn label(m: &Member<Label>) -> Option<&str> {
        match m {
            Member::Given(Ok(Label(Some(s)))) => Some(s),
            _ => None,
        }
    }
    let listed = label(&f.litellm_provider);
    let mode = label(&f.mode);
    let lower = name.to_ascii_lowercase();
    let is_openai_name = lower.starts_with("gpt-")
        || lower.starts_with("codex")
        || (lower.len() >= 2 && lower.starts_with('o') && lower.as_bytes()[1].is_ascii_digit());
    let anthropic = lower.starts_with("claude")
        && prefix.as_deref().is_none_or(|p| p == "anthropic")
        && listed.is_none_or(|p| p == "anthropic")
        && mode.is_none_or(|m| m == "chat");
    let openai = is_openai_name
        && prefix.as_deref().is_none_or(|p| p == "openai")
        && listed.is_none_or(|p| p == "openai")
        && mode.is_none_or(|m| m == "chat" || m == "responses");
    let gemini = lower.starts_with("gemini-")
        && prefix.as_deref().is_none_or(|p| p == "gemini")
        && listed.is_none_or(|p| p == "gemini" || p == "vertex_ai-language-models")
        && mode.is_none_or(|m| m == "chat");
    if anthropic {
        Some((ProviderKind::Anthropic, name))
    } else if openai {
        Some((ProviderKind::OpenAi, name))
    } else if gemini {
        Some((ProviderKind::Google, name))
    } else {
        None
    }
}

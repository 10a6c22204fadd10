//! The tracecost format: a `models` object of rows, each editing the model
//! it names or adding one.

use serde_json::{Map, Value};

use crate::pricing::{
    LONG_CONTEXT_THRESHOLD, LongContext, MergeSummary, ModelPrice, PriceDate, PriceRow, Pricing,
    PricingError, Rates,
};
use tracecost_engine::cache::ProviderKind;

use super::{Ctx, ptr, template_of};

impl Pricing {
    pub(super) fn merge_native(
        &mut self,
        ctx: &Ctx<'_>,
        top: &Map<String, Value>,
    ) -> Result<MergeSummary, PricingError> {
        let mut summary = MergeSummary {
            format: "native",
            ..MergeSummary::default()
        };
        for (k, v) in top {
            match k.as_str() {
                "models" => {}
                "description" => {
                    if !v.is_string() {
                        return Err(ctx.shape(&ptr(&["description"]), "a string"));
                    }
                }
                "source" => summary.source = Some(ctx.source(v)?),
                _ => {
                    return Err(ctx.shape(
                        &ptr(&[k]),
                        "no such member (a tracecost pricing file has `models` and an optional `description` and `source`)",
                    ));
                }
            }
        }
        let Some(Value::Object(models)) = top.get("models") else {
            return Err(ctx.shape("/models", "an object mapping model ids to prices"));
        };
        for (id, entry) in models {
            let base = ptr(&["models", id]);
            if id.trim().is_empty() {
                return Err(ctx.shape(&base, "a non-empty model id"));
            }
            match entry {
                Value::Object(obj) => self.merge_native_row(ctx, id, obj, &base, &mut summary)?,
                // Several rows of one model, each with its own day.
                Value::Array(rows) if !rows.is_empty() => {
                    for (i, row) in rows.iter().enumerate() {
                        let at = format!("{base}/{i}");
                        let Value::Object(obj) = row else {
                            return Err(ctx.shape(&at, "an object of prices"));
                        };
                        self.merge_native_row(ctx, id, obj, &at, &mut summary)?;
                    }
                }
                _ => {
                    return Err(ctx.shape(
                        &base,
                        "an object of prices, or a non-empty array of them (one per effective date)",
                    ));
                }
            }
        }
        Ok(summary)
    }

    /// Merges one native row of model `id` (at JSON pointer `base`): an
    /// undated row changes the model's newest prices; a row with
    /// `effective_from` is the model's price from that UTC day on, over
    /// the row in force that day, and replaces the rows from that day on.
    /// Merges one row of a native file into the model it names (or a new
    /// model from its provider's template): provider first, since it picks
    /// the template the rest edits, then each group of fields in the order
    /// their errors are reported.
    fn merge_native_row(
        &mut self,
        ctx: &Ctx<'_>,
        id: &str,
        obj: &Map<String, Value>,
        base: &str,
        summary: &mut MergeSummary,
    ) -> Result<(), PricingError> {
        let (existing, mut m) = self.existing_or_template(id);
        let row = NativeRow {
            ctx,
            obj,
            base,
            is_new: existing.is_none(),
        };
        row.provider(&mut m, id)?;
        if let Some(w) = row.count("context_window")? {
            m.context_window = Some(w);
        }
        row.known_members()?;
        let dated = row.effective_from(&mut m)?;
        row.rates(&mut m)?;
        row.aliases(&mut m)?;
        if let Some(v) = row.count("min_cacheable_tokens")? {
            m.min_cacheable_tokens = v;
        }
        row.tool_prompt(&mut m)?;
        row.framing(&mut m)?;
        row.long_context(&mut m)?;
        if let Some((day, kept)) = dated {
            m.earlier = kept;
            m.effective_from = Some(day);
        }
        self.commit(existing, m, summary);
        Ok(())
    }
}

const NATIVE_FIELDS: [&str; 14] = [
    "aliases",
    "provider",
    "context_window",
    "effective_from",
    "input",
    "cache_write_5m",
    "cache_write_1h",
    "cache_read",
    "output",
    "min_cacheable_tokens",
    "tool_prompt_tokens",
    "framing",
    "long_context",
    "description",
];

const LONG_CONTEXT_FIELDS: [&str; 6] = [
    "threshold_tokens",
    "input",
    "cache_write_5m",
    "cache_write_1h",
    "cache_read",
    "output",
];

/// One model's row of a native pricing file, read group by group into the
/// model it edits.
struct NativeRow<'a> {
    ctx: &'a Ctx<'a>,
    obj: &'a Map<String, Value>,
    /// The row's JSON pointer, for errors.
    base: &'a str,
    /// No model of that name yet: the row starts from a template.
    is_new: bool,
}

impl NativeRow<'_> {
    fn at(&self, field: &str) -> String {
        format!("{}/{field}", self.base)
    }

    fn count(&self, field: &str) -> Result<Option<u64>, PricingError> {
        self.ctx.opt_count(self.obj.get(field), &self.at(field))
    }

    fn price(&self, field: &str) -> Result<Option<f64>, PricingError> {
        self.ctx.opt_price(self.obj.get(field), &self.at(field))
    }

    /// A known model keeps its provider; a new one of another provider
    /// starts from that provider's data (cache rules, framing), as
    /// LiteLLM's entries do.
    fn provider(&self, m: &mut ModelPrice, id: &str) -> Result<(), PricingError> {
        let Some(v) = self.obj.get("provider") else {
            return Ok(());
        };
        let ctx = self.ctx;
        let provider = v
            .as_str()
            .and_then(|p| ProviderKind::ALL.into_iter().find(|k| k.as_str() == p))
            .filter(|k| *k != ProviderKind::Unknown)
            .ok_or_else(|| {
                ctx.shape(
                    &self.at("provider"),
                    "one of anthropic, bedrock-converse, openai, google",
                )
            })?;
        if !self.is_new && provider != m.provider {
            return Err(ctx.shape(
                &self.at("provider"),
                &format!("the model's own provider, {}", m.provider.as_str()),
            ));
        }
        if self.is_new && provider != m.provider {
            *m = template_of(provider, id);
        }
        // A new OpenAI model that bills a cache write caches at
        // breakpoints (GPT-5.6 and later), as LiteLLM's reader decides.
        if self.is_new && provider == ProviderKind::OpenAi {
            m.breakpoint_cache = self.obj.contains_key("cache_write_5m");
        }
        Ok(())
    }

    fn known_members(&self) -> Result<(), PricingError> {
        for key in self.obj.keys() {
            if !NATIVE_FIELDS.contains(&key.as_str()) {
                return Err(self.ctx.shape(
                    &self.at(key),
                    &format!("one of the members {}", NATIVE_FIELDS.join(", ")),
                ));
            }
        }
        Ok(())
    }

    /// A dated row starts from the prices in force that day, and keeps the
    /// rows before it (applied once the rest of the row is read).
    fn effective_from(
        &self,
        m: &mut ModelPrice,
    ) -> Result<Option<(PriceDate, Vec<PriceRow>)>, PricingError> {
        let v = match self.obj.get("effective_from") {
            None | Some(Value::Null) => return Ok(None),
            Some(v) => v,
        };
        let day = v.as_str().and_then(PriceDate::parse).ok_or_else(|| {
            self.ctx
                .shape(&self.at("effective_from"), "a date, YYYY-MM-DD (UTC)")
        })?;
        let in_force = m.row_on(day);
        m.rates = in_force.rates;
        m.long_context = in_force.long_context;
        // A new model has no earlier prices (its template's are another
        // model's): its first row prices every day before it too, as a
        // table's oldest row does.
        let is_new = self.is_new;
        let kept: Vec<PriceRow> = m
            .rows()
            .into_iter()
            .filter(|r| !is_new && r.from.is_none_or(|f| f < day))
            .collect();
        Ok(Some((day, kept)))
    }

    /// Input and output prices (both required for a new model), then the
    /// cache prices.
    fn rates(&self, m: &mut ModelPrice) -> Result<(), PricingError> {
        let input = self.price("input")?;
        let output = self.price("output")?;
        if self.is_new {
            let required = |v: Option<f64>, field: &str| {
                v.ok_or_else(|| {
                    self.ctx.shape(
                        &self.at(field),
                        "a price in USD per million tokens (required for a new model)",
                    )
                })
            };
            let input = required(input, "input")?;
            let output = required(output, "output")?;
            m.rates = Rates::from_input_output(input, output);
        } else {
            if let Some(v) = input {
                m.rates.input = v;
            }
            if let Some(v) = output {
                m.rates.output = v;
            }
        }
        if let Some(v) = self.price("cache_write_5m")? {
            m.rates.cache_write_5m = v;
        }
        if let Some(v) = self.price("cache_write_1h")? {
            m.rates.cache_write_1h = v;
        }
        if let Some(v) = self.price("cache_read")? {
            m.rates.cache_read = v;
        }
        Ok(())
    }

    /// Aliases are added to the model's own, each once whatever its case.
    fn aliases(&self, m: &mut ModelPrice) -> Result<(), PricingError> {
        let Some(v) = self.obj.get("aliases") else {
            return Ok(());
        };
        let Value::Array(items) = v else {
            return Err(self.ctx.shape(&self.at("aliases"), "an array of strings"));
        };
        for (i, a) in items.iter().enumerate() {
            let Value::String(a) = a else {
                return Err(self
                    .ctx
                    .shape(&format!("{}/aliases/{i}", self.base), "a string"));
            };
            if !m.aliases.iter().any(|x| x.eq_ignore_ascii_case(a)) {
                m.aliases.push(a.clone());
            }
        }
        Ok(())
    }

    fn tool_prompt(&self, m: &mut ModelPrice) -> Result<(), PricingError> {
        let Some(v) = self.obj.get("tool_prompt_tokens") else {
            return Ok(());
        };
        let ctx = self.ctx;
        let base = self.at("tool_prompt_tokens");
        let o = ctx.object(v, &base, &["auto_none", "any_tool"])?;
        let sub = |f: &str| format!("{base}/{f}");
        if let Some(n) = ctx.opt_count(o.get("auto_none"), &sub("auto_none"))? {
            m.tool_prompt.auto_none = n;
        }
        if let Some(n) = ctx.opt_count(o.get("any_tool"), &sub("any_tool"))? {
            m.tool_prompt.any_tool = n;
        }
        Ok(())
    }

    fn framing(&self, m: &mut ModelPrice) -> Result<(), PricingError> {
        let Some(v) = self.obj.get("framing") else {
            return Ok(());
        };
        let ctx = self.ctx;
        let base = self.at("framing");
        let o = ctx.object(v, &base, &["per_message", "per_block", "per_tool"])?;
        let sub = |f: &str| format!("{base}/{f}");
        if let Some(n) = ctx.opt_count(o.get("per_message"), &sub("per_message"))? {
            m.framing.per_message = n;
        }
        if let Some(n) = ctx.opt_count(o.get("per_block"), &sub("per_block"))? {
            m.framing.per_block = n;
        }
        if let Some(n) = ctx.opt_count(o.get("per_tool"), &sub("per_tool"))? {
            m.framing.per_tool = n;
        }
        Ok(())
    }

    /// The long-context tier: `null` removes it; an object replaces it,
    /// input and output prices required.
    fn long_context(&self, m: &mut ModelPrice) -> Result<(), PricingError> {
        let v = match self.obj.get("long_context") {
            None => return Ok(()),
            Some(Value::Null) => {
                m.long_context = None;
                return Ok(());
            }
            Some(v) => v,
        };
        let ctx = self.ctx;
        let base = self.at("long_context");
        let o = ctx.object(v, &base, &LONG_CONTEXT_FIELDS)?;
        let sub = |f: &str| format!("{base}/{f}");
        let required = |field: &str| {
            ctx.opt_price(o.get(field), &sub(field))?
                .ok_or_else(|| ctx.shape(&sub(field), "a price in USD per million tokens"))
        };
        let lin = required("input")?;
        let lout = required("output")?;
        let mut rates = Rates::from_input_output(lin, lout);
        if let Some(x) = ctx.opt_price(o.get("cache_write_5m"), &sub("cache_write_5m"))? {
            rates.cache_write_5m = x;
        }
        if let Some(x) = ctx.opt_price(o.get("cache_write_1h"), &sub("cache_write_1h"))? {
            rates.cache_write_1h = x;
        }
        if let Some(x) = ctx.opt_price(o.get("cache_read"), &sub("cache_read"))? {
            rates.cache_read = x;
        }
        let threshold_tokens = ctx
            .opt_count(o.get("threshold_tokens"), &sub("threshold_tokens"))?
            .unwrap_or(LONG_CONTEXT_THRESHOLD);
        m.long_context = Some(LongContext {
            threshold_tokens,
            rates,
        });
        Ok(())
    }
}

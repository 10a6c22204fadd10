//! Pricing files (`--pricing FILE`): the tracecost JSON format and
//! LiteLLM's `model_prices_and_context_window.json`, merged into a
//! [`Pricing`] table (formats in the parent module's docs).

use std::path::Path;

use serde_json::{Map, Value};

use crate::engine::cache::ProviderKind;

use super::{
    Framing, LONG_CONTEXT_THRESHOLD, LongContext, MAX_FILE_TOKENS, MAX_PRICE_PER_MTOK,
    MergeSummary, ModelPrice, Multipliers, PriceDate, PriceFile, PriceRow, PriceSource, Pricing,
    PricingError, Rates, ToolPrompt,
};

impl Pricing {
    /// Builtin table plus the models of a pricing file.
    pub fn with_file(path: &Path) -> Result<Self, PricingError> {
        let mut p = Self::builtin();
        p.merge_file(path)?;
        Ok(p)
    }

    /// Reads a pricing file (native or LiteLLM format, see
    /// [`crate::pricing`]) and merges it into this table.
    pub fn merge_file(&mut self, path: &Path) -> Result<MergeSummary, PricingError> {
        let file = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| PricingError::Io {
            file: file.clone(),
            message: e.to_string(),
        })?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let ok = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line_start = ok.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            PricingError::Syntax {
                file: file.clone(),
                line: ok.iter().filter(|&&b| b == b'\n').count() + 1,
                column: ok.len() - line_start + 1,
                message: "not UTF-8".to_string(),
            }
        })?;
        self.merge_str(&text, &file)
    }

    /// Merges pricing-file text; `file` names it in errors. On error the
    /// table is left unchanged.
    pub fn merge_str(&mut self, text: &str, file: &str) -> Result<MergeSummary, PricingError> {
        let doc: Value = crate::engine::json::parse_unique_keys(text).map_err(|e| {
            let message = crate::engine::json::error_message(&e);
            PricingError::Syntax {
                file: file.to_string(),
                line: e.line(),
                column: e.column().max(1),
                message,
            }
        })?;
        let mut next = self.clone();
        let ctx = Ctx { file };
        let Value::Object(top) = &doc else {
            return Err(ctx.shape(
                "",
                "a JSON object (a tracecost pricing file with a `models` member, or LiteLLM's model_prices_and_context_window.json)",
            ));
        };
        let summary = if top.contains_key("models") {
            next.merge_native(&ctx, top)?
        } else {
            next.merge_litellm(&ctx, top)?
        };
        next.files.push(PriceFile {
            path: file.to_string(),
            sha256: crate::engine::handle::sha256_hex(text.as_bytes()),
            format: summary.format,
            source: summary.source.clone(),
        });
        *self = next;
        Ok(summary)
    }

    /// Adds `m` (a new model) or returns the existing index for its name.
    fn existing_or_template(&self, name: &str) -> (Option<usize>, ModelPrice) {
        if let Some(i) = self.exact(name) {
            return (Some(i), self.models[i].clone());
        }
        let template = self.resolve(name).map(|i| &self.models[i]);
        let m = ModelPrice {
            id: name.trim().to_string(),
            aliases: Vec::new(),
            rates: Rates::from_input_output(0.0, 0.0),
            min_cacheable_tokens: template.map_or(1024, |t| t.min_cacheable_tokens),
            tool_prompt: template.map_or_else(ToolPrompt::default, |t| t.tool_prompt),
            framing: template.map_or_else(Framing::default, |t| t.framing),
            long_context: None,
            effective_from: None,
            earlier: Vec::new(),
            modifiers: template.map_or_else(Multipliers::default, |t| t.modifiers),
            provider: template.map_or(ProviderKind::Anthropic, |t| t.provider),
            context_window: template.and_then(|t| t.context_window),
            extended_cache_only: template.is_some_and(|t| t.extended_cache_only),
            breakpoint_cache: template.is_some_and(|t| t.breakpoint_cache),
            keeps_earlier_reasoning: template.is_none_or(|t| t.keeps_earlier_reasoning),
            cache_storage_per_mtok_hour: template.and_then(|t| t.cache_storage_per_mtok_hour),
        };
        (None, m)
    }

    fn commit(&mut self, existing: Option<usize>, m: ModelPrice, summary: &mut MergeSummary) {
        match existing {
            Some(i) => {
                for a in &m.aliases {
                    self.index.insert(a.to_ascii_lowercase(), i);
                }
                if !summary.updated.contains(&m.id) {
                    summary.updated.push(m.id.clone());
                }
                self.models[i] = m;
            }
            None => {
                summary.added.push(m.id.clone());
                self.insert(m);
            }
        }
    }

    fn merge_native(
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
    fn merge_native_row(
        &mut self,
        ctx: &Ctx<'_>,
        id: &str,
        obj: &Map<String, Value>,
        base: &str,
        summary: &mut MergeSummary,
    ) -> Result<(), PricingError> {
        let at = |field: &str| format!("{base}/{field}");
        {
            let (existing, mut m) = self.existing_or_template(id);
            let is_new = existing.is_none();
            if let Some(v) = obj.get("provider") {
                let provider = v
                    .as_str()
                    .and_then(|p| ProviderKind::ALL.into_iter().find(|k| k.as_str() == p))
                    .filter(|k| *k != ProviderKind::Unknown)
                    .ok_or_else(|| {
                        ctx.shape(
                            &at("provider"),
                            "one of anthropic, bedrock-converse, openai, google",
                        )
                    })?;
                if !is_new && provider != m.provider {
                    return Err(ctx.shape(
                        &at("provider"),
                        &format!("the model's own provider, {}", m.provider.as_str()),
                    ));
                }
                // A new model of another provider starts from that
                // provider's data (cache rules, framing), as LiteLLM's
                // entries do.
                if is_new && provider != m.provider {
                    m = template_of(provider, id);
                }
                // A new OpenAI model that bills a cache write caches at
                // breakpoints (GPT-5.6 and later), as LiteLLM's reader
                // decides.
                if is_new && provider == ProviderKind::OpenAi {
                    m.breakpoint_cache = obj.contains_key("cache_write_5m");
                }
            }
            if let Some(w) = ctx.opt_count(obj.get("context_window"), &at("context_window"))? {
                m.context_window = Some(w);
            }
            for key in obj.keys() {
                if !NATIVE_FIELDS.contains(&key.as_str()) {
                    return Err(ctx.shape(
                        &at(key),
                        &format!("one of the members {}", NATIVE_FIELDS.join(", ")),
                    ));
                }
            }
            let dated = match obj.get("effective_from") {
                None | Some(Value::Null) => None,
                Some(v) => {
                    let day = v.as_str().and_then(PriceDate::parse).ok_or_else(|| {
                        ctx.shape(&at("effective_from"), "a date, YYYY-MM-DD (UTC)")
                    })?;
                    // The row starts from the prices in force that day.
                    let in_force = m.row_on(day);
                    m.rates = in_force.rates;
                    m.long_context = in_force.long_context;
                    // A new model has no earlier prices (its template's
                    // are another model's): its first row prices every day
                    // before it too, as a table's oldest row does.
                    let kept: Vec<PriceRow> = m
                        .rows()
                        .into_iter()
                        .filter(|r| !is_new && r.from.is_none_or(|f| f < day))
                        .collect();
                    Some((day, kept))
                }
            };
            let num = |field: &str| ctx.opt_price(obj.get(field), &at(field));
            let input = num("input")?;
            let output = num("output")?;
            if is_new {
                let input = input.ok_or_else(|| {
                    ctx.shape(
                        &at("input"),
                        "a price in USD per million tokens (required for a new model)",
                    )
                })?;
                let output = output.ok_or_else(|| {
                    ctx.shape(
                        &at("output"),
                        "a price in USD per million tokens (required for a new model)",
                    )
                })?;
                m.rates = Rates::from_input_output(input, output);
            } else {
                if let Some(v) = input {
                    m.rates.input = v;
                }
                if let Some(v) = output {
                    m.rates.output = v;
                }
            }
            if let Some(v) = num("cache_write_5m")? {
                m.rates.cache_write_5m = v;
            }
            if let Some(v) = num("cache_write_1h")? {
                m.rates.cache_write_1h = v;
            }
            if let Some(v) = num("cache_read")? {
                m.rates.cache_read = v;
            }
            if let Some(v) = obj.get("aliases") {
                let Value::Array(items) = v else {
                    return Err(ctx.shape(&at("aliases"), "an array of strings"));
                };
                for (i, a) in items.iter().enumerate() {
                    let Value::String(a) = a else {
                        return Err(ctx.shape(&format!("{base}/aliases/{i}"), "a string"));
                    };
                    if !m.aliases.iter().any(|x| x.eq_ignore_ascii_case(a)) {
                        m.aliases.push(a.clone());
                    }
                }
            }
            if let Some(v) =
                ctx.opt_count(obj.get("min_cacheable_tokens"), &at("min_cacheable_tokens"))?
            {
                m.min_cacheable_tokens = v;
            }
            if let Some(v) = obj.get("tool_prompt_tokens") {
                let base = at("tool_prompt_tokens");
                let o = ctx.object(v, &base, &["auto_none", "any_tool"])?;
                let sub = |f: &str| format!("{base}/{f}");
                if let Some(n) = ctx.opt_count(o.get("auto_none"), &sub("auto_none"))? {
                    m.tool_prompt.auto_none = n;
                }
                if let Some(n) = ctx.opt_count(o.get("any_tool"), &sub("any_tool"))? {
                    m.tool_prompt.any_tool = n;
                }
            }
            if let Some(v) = obj.get("framing") {
                let base = at("framing");
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
            }
            match obj.get("long_context") {
                None => {}
                Some(Value::Null) => m.long_context = None,
                Some(v) => {
                    let base = at("long_context");
                    let o = ctx.object(v, &base, &LONG_CONTEXT_FIELDS)?;
                    let sub = |f: &str| format!("{base}/{f}");
                    let lin = ctx
                        .opt_price(o.get("input"), &sub("input"))?
                        .ok_or_else(|| {
                            ctx.shape(&sub("input"), "a price in USD per million tokens")
                        })?;
                    let lout =
                        ctx.opt_price(o.get("output"), &sub("output"))?
                            .ok_or_else(|| {
                                ctx.shape(&sub("output"), "a price in USD per million tokens")
                            })?;
                    let mut rates = Rates::from_input_output(lin, lout);
                    if let Some(x) =
                        ctx.opt_price(o.get("cache_write_5m"), &sub("cache_write_5m"))?
                    {
                        rates.cache_write_5m = x;
                    }
                    if let Some(x) =
                        ctx.opt_price(o.get("cache_write_1h"), &sub("cache_write_1h"))?
                    {
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
                }
            }
            if let Some((day, kept)) = dated {
                m.earlier = kept;
                m.effective_from = Some(day);
            }
            self.commit(existing, m, summary);
        }
        Ok(())
    }

    fn merge_litellm(
        &mut self,
        ctx: &Ctx<'_>,
        top: &Map<String, Value>,
    ) -> Result<MergeSummary, PricingError> {
        let mut summary = MergeSummary {
            format: "litellm",
            ..MergeSummary::default()
        };
        for (key, entry) in top {
            let Value::Object(obj) = entry else {
                summary.skipped += 1;
                continue;
            };
            let Some((provider, name)) = litellm_model(key, obj) else {
                summary.skipped += 1;
                continue;
            };
            let at = |field: &str| ptr(&[key, field]);
            let per_token = |field: &str| -> Result<Option<f64>, PricingError> {
                match ctx
                    .opt_price(obj.get(field), &at(field))?
                    .map(|v| (v * 1e12).round() / 1e6)
                {
                    Some(v) if v > MAX_PRICE_PER_MTOK => Err(ctx.shape(
                        &at(field),
                        &format!("a price of at most 1 USD per token, found {:e}", v / 1e6),
                    )),
                    v => Ok(v),
                }
            };
            let (Some(input), Some(output)) = (
                per_token("input_cost_per_token")?,
                per_token("output_cost_per_token")?,
            ) else {
                summary.skipped += 1;
                continue;
            };
            let (existing, mut m) = self.existing_or_template(name);
            if provider != ProviderKind::Anthropic {
                if existing.is_none() && m.provider != provider {
                    m = template_of(provider, name);
                }
                if existing.is_none()
                    && let Some(w) =
                        ctx.opt_count(obj.get("max_input_tokens"), &at("max_input_tokens"))?
                {
                    m.context_window = Some(w);
                }
                // A read price not given: a known model keeps its discount,
                // a new one has none to go by and reads at the input price.
                let discount = match existing {
                    Some(_) if m.rates.input > 0.0 => m.rates.cache_read / m.rates.input,
                    _ => 1.0,
                };
                let read = per_token("cache_read_input_token_cost")?.unwrap_or(input * discount);
                let write = per_token("cache_creation_input_token_cost")?;
                // Only the models that cache at breakpoints (GPT-5.6 and
                // later) bill a write; Gemini's implicit cache bills none
                // (LiteLLM's write price there is for explicit caching).
                let write = write.filter(|_| provider == ProviderKind::OpenAi);
                if existing.is_none() && write.is_some() {
                    m.breakpoint_cache = true;
                }
                let write = write.unwrap_or(input);
                let storage = m.cache_storage_per_mtok_hour;
                m.rates = match provider {
                    ProviderKind::Google => {
                        super::builtin::gemini_rates(input, read, output, storage)
                    }
                    _ => Rates {
                        cache_write_5m: write,
                        cache_write_1h: write,
                        ..super::builtin::openai_rates(input, read, output)
                    },
                };
                // OpenAI's tier starts above 272K tokens, Gemini's above 200K.
                let (tier, threshold) = match provider {
                    ProviderKind::OpenAi => ("272k", super::builtin::OPENAI_LONG_CONTEXT_THRESHOLD),
                    _ => ("200k", super::builtin::GEMINI_LONG_CONTEXT_THRESHOLD),
                };
                let above = |field: &str| per_token(&format!("{field}_above_{tier}_tokens"));
                m.long_context = match above("input_cost_per_token")? {
                    None => None,
                    Some(lin) => {
                        let lout = above("output_cost_per_token")?.unwrap_or(output);
                        let lread = above("cache_read_input_token_cost")?.unwrap_or(lin);
                        let lwrite = above("cache_creation_input_token_cost")?
                            .filter(|_| provider == ProviderKind::OpenAi)
                            .unwrap_or(lin);
                        Some(LongContext {
                            threshold_tokens: threshold,
                            rates: match provider {
                                ProviderKind::Google => {
                                    super::builtin::gemini_rates(lin, lread, lout, storage)
                                }
                                _ => Rates {
                                    cache_write_5m: lwrite,
                                    cache_write_1h: lwrite,
                                    ..super::builtin::openai_rates(lin, lread, lout)
                                },
                            },
                        })
                    }
                };
                self.commit(existing, m, &mut summary);
                continue;
            }
            let mut rates = Rates::from_input_output(input, output);
            if let Some(v) = per_token("cache_creation_input_token_cost")? {
                rates.cache_write_5m = v;
            }
            if let Some(v) = per_token("cache_creation_input_token_cost_above_1hr")? {
                rates.cache_write_1h = v;
            }
            if let Some(v) = per_token("cache_read_input_token_cost")? {
                rates.cache_read = v;
            }
            m.rates = rates;
            m.long_context = match per_token("input_cost_per_token_above_200k_tokens")? {
                None => None,
                Some(lin) => {
                    let lout =
                        per_token("output_cost_per_token_above_200k_tokens")?.unwrap_or(output);
                    let mut lr = Rates::from_input_output(lin, lout);
                    if let Some(v) = per_token("cache_creation_input_token_cost_above_200k_tokens")?
                    {
                        lr.cache_write_5m = v;
                    }
                    if let Some(v) =
                        per_token("cache_creation_input_token_cost_above_1hr_above_200k_tokens")?
                    {
                        lr.cache_write_1h = v;
                    }
                    if let Some(v) = per_token("cache_read_input_token_cost_above_200k_tokens")? {
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
            let min_tokens = ctx.opt_count(
                obj.get("prompt_cache_min_tokens"),
                &at("prompt_cache_min_tokens"),
            )?;
            let tool_tokens = ctx.opt_count(
                obj.get("tool_use_system_prompt_tokens"),
                &at("tool_use_system_prompt_tokens"),
            )?;
            if existing.is_none() {
                if let Some(v) = min_tokens {
                    m.min_cacheable_tokens = v;
                }
                if let Some(v) = tool_tokens {
                    m.tool_prompt.auto_none = v;
                }
            }
            self.commit(existing, m, &mut summary);
        }
        Ok(summary)
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
fn litellm_model<'k>(key: &'k str, obj: &Map<String, Value>) -> Option<(ProviderKind, &'k str)> {
    let (prefix, name) = match key.rsplit_once('/') {
        Some((p, rest)) => (Some(p.to_ascii_lowercase()), rest),
        None => (None, key),
    };
    let listed = obj.get("litellm_provider").and_then(Value::as_str);
    let mode = obj.get("mode").and_then(Value::as_str);
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

/// A new model's data before its prices, as the built-in models of its
/// provider have it: OpenAI's (gpt-4o's minimum, framing and tool prompt)
/// or Gemini's (2.5 Flash's).
fn template_of(provider: ProviderKind, name: &str) -> ModelPrice {
    let like = match provider {
        ProviderKind::Google => "gemini-2.5-flash",
        _ => "gpt-4o",
    };
    let mut m = Pricing::builtin()
        .lookup(like)
        .expect("the built-in table has the provider's model")
        .clone();
    m.id = name.trim().to_string();
    m.aliases.clear();
    m.long_context = None;
    m.effective_from = None;
    m.earlier.clear();
    m.modifiers = Multipliers::default();
    m.extended_cache_only = false;
    m.breakpoint_cache = false;
    // A new model's storage price is not its neighbour's to guess.
    m.cache_storage_per_mtok_hour = None;
    m
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

/// An RFC 6901 JSON pointer from segments.
fn ptr(segments: &[&str]) -> String {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        out.push_str(&s.replace('~', "~0").replace('/', "~1"));
    }
    out
}

struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    /// A native file's `source`: `{"url", "sha256", "fetched"}`.
    fn source(&self, v: &Value) -> Result<PriceSource, PricingError> {
        let o = self.object(v, "/source", &["url", "sha256", "fetched"])?;
        let text = |f: &str| {
            o.get(f)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| self.shape(&ptr(&["source", f]), "a string"))
        };
        let fetched = PriceDate::parse(&text("fetched")?)
            .ok_or_else(|| self.shape("/source/fetched", "a date, YYYY-MM-DD (UTC)"))?;
        Ok(PriceSource {
            url: text("url")?,
            sha256: text("sha256")?,
            fetched,
        })
    }

    fn shape(&self, pointer: &str, expected: &str) -> PricingError {
        PricingError::Shape {
            file: self.file.to_string(),
            pointer: pointer.to_string(),
            expected: expected.to_string(),
        }
    }

    fn opt_price(&self, v: Option<&Value>, pointer: &str) -> Result<Option<f64>, PricingError> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match n.as_f64() {
                Some(x) if x.is_finite() && (0.0..=MAX_PRICE_PER_MTOK).contains(&x) => Ok(Some(x)),
                Some(x) if x.is_finite() && x >= 0.0 => Err(self.shape(
                    pointer,
                    &format!("a price of at most {MAX_PRICE_PER_MTOK} USD per million tokens, found {x:e}"),
                )),
                _ => Err(self.shape(pointer, "a non-negative number")),
            },
            Some(_) => Err(self.shape(pointer, "a non-negative number")),
        }
    }

    fn opt_count(&self, v: Option<&Value>, pointer: &str) -> Result<Option<u64>, PricingError> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => match n.as_u64() {
                Some(v) if v <= MAX_FILE_TOKENS => Ok(Some(v)),
                Some(v) => Err(self.shape(
                    pointer,
                    &format!("a token count of at most {MAX_FILE_TOKENS}, found {v}"),
                )),
                None => Err(self.shape(pointer, "a non-negative integer")),
            },
            Some(_) => Err(self.shape(pointer, "a non-negative integer")),
        }
    }

    fn object<'v>(
        &self,
        v: &'v Value,
        pointer: &str,
        fields: &[&str],
    ) -> Result<&'v Map<String, Value>, PricingError> {
        let Value::Object(o) = v else {
            return Err(self.shape(
                pointer,
                &format!("an object with members {}", fields.join(", ")),
            ));
        };
        for k in o.keys() {
            if !fields.contains(&k.as_str()) {
                return Err(self.shape(
                    &format!("{pointer}{}", ptr(&[k])),
                    &format!("one of the members {}", fields.join(", ")),
                ));
            }
        }
        Ok(o)
    }
}

//! Pricing files (`--pricing FILE`): the tracecost JSON format and
//! LiteLLM's `model_prices_and_context_window.json`, merged into a
//! [`Pricing`] table (formats in the parent module's docs).

use std::path::Path;

use serde_json::Value;

use tracecost_engine::cache::ProviderKind;

use super::{
    Framing, MergeSummary, ModelPrice, Multipliers, PriceFile, Pricing, PricingError, Rates,
    ToolPrompt,
};

mod checked;

use checked::ptr;
mod litellm;
mod native;

pub use litellm::litellm_to_native;

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
        let doc: Value = tracecost_engine::json::parse_unique_keys(text).map_err(|e| {
            let message = tracecost_engine::json::error_message(&e);
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
            next.merge_native(&ctx, &doc, top)?
        } else {
            next.merge_litellm(&ctx, top)?
        };
        next.files.push(PriceFile {
            path: file.to_string(),
            sha256: tracecost_engine::handle::sha256_hex(text.as_bytes()),
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

struct Ctx<'a> {
    file: &'a str,
}

impl Ctx<'_> {
    fn shape(&self, pointer: &str, expected: &str) -> PricingError {
        PricingError::Shape {
            file: self.file.to_string(),
            pointer: pointer.to_string(),
            expected: expected.to_string(),
        }
    }

    /// What was expected below the value at `pointer`, as this file's error.
    fn located(&self, pointer: &str, e: checked::Misfit) -> PricingError {
        self.shape(&format!("{pointer}{}", e.at), &e.what)
    }
}

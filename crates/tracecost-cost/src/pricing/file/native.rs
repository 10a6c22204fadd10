//! The tracecost format: a `models` object of rows, each editing the model
//! it names or adding one. Each object of the format is a typed struct of
//! [`Member`]s; the reader takes them in a fixed order, so that a file with
//! several mistakes always reports the same one.

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::pricing::{
    LONG_CONTEXT_THRESHOLD, LongContext, MergeSummary, ModelPrice, PriceDate, PriceRow,
    PriceSource, Pricing, PricingError, Rates,
};
use tracecost_engine::cache::ProviderKind;

use super::checked::{
    Checked, Count, Day, Member, Members, Misfit, Price, Provider, Strings, Text,
};
use super::{Ctx, ptr, template_of};

/// The members of a model's row. `description` is the user's note, any
/// value.
const ROW_FIELDS: [&str; 14] = [
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

/// The top level of a native file.
#[derive(Deserialize, Default)]
#[serde(default)]
struct NativeFile {
    description: Member<Text>,
    source: Member<PriceSource>,
    models: Member<Models>,
}

/// `models`: each model id with its row (or rows), in file order.
struct Models(Vec<(String, Result<Rows, Misfit>)>);

/// A model's entry: one row, or several, each from its own day.
enum Rows {
    One(Box<Members<NativeRow>>),
    Dated(Vec<Result<Members<NativeRow>, Misfit>>),
}

/// One row of a model.
#[derive(Deserialize, Default)]
#[serde(default)]
struct NativeRow {
    aliases: Member<Strings>,
    provider: Member<Provider>,
    context_window: Member<Count>,
    effective_from: Member<Day>,
    input: Member<Price>,
    cache_write_5m: Member<Price>,
    cache_write_1h: Member<Price>,
    cache_read: Member<Price>,
    output: Member<Price>,
    min_cacheable_tokens: Member<Count>,
    tool_prompt_tokens: Member<ToolPromptEdit>,
    framing: Member<FramingEdit>,
    long_context: Member<LongContext>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct SourceFields {
    url: Member<Text>,
    sha256: Member<Text>,
    fetched: Member<Text>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolPromptFields {
    auto_none: Member<Count>,
    any_tool: Member<Count>,
}

/// `tool_prompt_tokens`: the counts the row changes.
struct ToolPromptEdit {
    auto_none: Option<u64>,
    any_tool: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct FramingFields {
    per_message: Member<Count>,
    per_block: Member<Count>,
    per_tool: Member<Count>,
}

/// `framing`: the counts the row changes.
struct FramingEdit {
    per_message: Option<u64>,
    per_block: Option<u64>,
    per_tool: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct LongContextFields {
    threshold_tokens: Member<Count>,
    input: Member<Price>,
    cache_write_5m: Member<Price>,
    cache_write_1h: Member<Price>,
    cache_read: Member<Price>,
    output: Member<Price>,
}

impl Checked for Models {
    fn check(v: &Value) -> Result<Self, Misfit> {
        let Value::Object(models) = v else {
            return Err(Misfit::new("an object mapping model ids to prices"));
        };
        Ok(Self(
            models
                .iter()
                .map(|(id, entry)| (id.clone(), Rows::check(entry)))
                .collect(),
        ))
    }
}

impl Checked for Rows {
    fn check(v: &Value) -> Result<Self, Misfit> {
        match v {
            Value::Object(_) => Members::of(v, &ROW_FIELDS).map(|row| Self::One(Box::new(row))),
            Value::Array(rows) if !rows.is_empty() => Ok(Self::Dated(
                rows.iter()
                    .enumerate()
                    .map(|(i, row)| {
                        Members::of(row, &ROW_FIELDS)
                            .map_err(|_| Misfit::new("an object of prices").under(&i.to_string()))
                    })
                    .collect(),
            )),
            _ => Err(Misfit::new(
                "an object of prices, or a non-empty array of them (one per effective date)",
            )),
        }
    }
}

impl Checked for PriceSource {
    fn check(v: &Value) -> Result<Self, Misfit> {
        let f = Members::<SourceFields>::of(v, &["url", "sha256", "fetched"])?.known()?;
        let fetched = f.fetched.required("fetched", "a string")?;
        let fetched = PriceDate::parse(&fetched.0)
            .ok_or_else(|| Misfit::new("a date, YYYY-MM-DD (UTC)").under("fetched"))?;
        Ok(Self {
            url: f.url.required("url", "a string")?.0,
            sha256: f.sha256.required("sha256", "a string")?.0,
            fetched,
        })
    }
}

impl Checked for ToolPromptEdit {
    fn check(v: &Value) -> Result<Self, Misfit> {
        let f = Members::<ToolPromptFields>::of(v, &["auto_none", "any_tool"])?.known()?;
        Ok(Self {
            auto_none: f.auto_none.read("auto_none")?.map(|c| c.0),
            any_tool: f.any_tool.read("any_tool")?.map(|c| c.0),
        })
    }
}

impl Checked for FramingEdit {
    fn check(v: &Value) -> Result<Self, Misfit> {
        let f =
            Members::<FramingFields>::of(v, &["per_message", "per_block", "per_tool"])?.known()?;
        Ok(Self {
            per_message: f.per_message.read("per_message")?.map(|c| c.0),
            per_block: f.per_block.read("per_block")?.map(|c| c.0),
            per_tool: f.per_tool.read("per_tool")?.map(|c| c.0),
        })
    }
}

/// The long-context tier a row sets: input and output prices required,
/// the cache prices as input's unless given.
impl Checked for LongContext {
    /// `null` removes the tier.
    const NULL_IS_ABSENT: bool = true;

    fn check(v: &Value) -> Result<Self, Misfit> {
        let f = Members::<LongContextFields>::of(v, &LONG_CONTEXT_FIELDS)?.known()?;
        let what = "a price in USD per million tokens";
        let input = f.input.required("input", what)?;
        let output = f.output.required("output", what)?;
        let mut rates = Rates::from_input_output(input.0, output.0);
        if let Some(x) = f.cache_write_5m.read("cache_write_5m")? {
            rates.cache_write_5m = x.0;
        }
        if let Some(x) = f.cache_write_1h.read("cache_write_1h")? {
            rates.cache_write_1h = x.0;
        }
        if let Some(x) = f.cache_read.read("cache_read")? {
            rates.cache_read = x.0;
        }
        let threshold_tokens = f
            .threshold_tokens
            .read("threshold_tokens")?
            .map_or(LONG_CONTEXT_THRESHOLD, |c| c.0);
        Ok(Self {
            threshold_tokens,
            rates,
        })
    }
}

impl Pricing {
    /// Merges a native file (`doc`, whose top-level object is `top`). The top level's
    /// members are checked in file order, then the models in file order.
    pub(super) fn merge_native(
        &mut self,
        ctx: &Ctx<'_>,
        doc: &Value,
        top: &Map<String, Value>,
    ) -> Result<MergeSummary, PricingError> {
        let mut summary = MergeSummary {
            format: "native",
            ..MergeSummary::default()
        };
        // Every member of the struct reads any value: only a document that
        // is not an object could fail, and `doc` is `top`.
        let mut file = NativeFile::deserialize(doc).unwrap_or_default();
        for k in top.keys() {
            match k.as_str() {
                "models" => {}
                "description" => {
                    std::mem::take(&mut file.description)
                        .read("description")
                        .map_err(|e| ctx.located("", e))?;
                }
                "source" => {
                    summary.source = std::mem::take(&mut file.source)
                        .read("source")
                        .map_err(|e| ctx.located("", e))?;
                }
                _ => {
                    return Err(ctx.shape(
                        &ptr(&[k]),
                        "no such member (a tracecost pricing file has `models` and an optional `description` and `source`)",
                    ));
                }
            }
        }
        let models = file
            .models
            .required("models", "an object mapping model ids to prices")
            .map_err(|e| ctx.located("", e))?;
        for (id, rows) in models.0 {
            let base = ptr(&["models", &id]);
            if id.trim().is_empty() {
                return Err(ctx.shape(&base, "a non-empty model id"));
            }
            match rows.map_err(|e| ctx.located(&base, e))? {
                Rows::One(row) => self.merge_native_row(ctx, &id, *row, &base, &mut summary)?,
                Rows::Dated(rows) => {
                    for (i, row) in rows.into_iter().enumerate() {
                        let row = row.map_err(|e| ctx.located(&base, e))?;
                        let at = format!("{base}/{i}");
                        self.merge_native_row(ctx, &id, row, &at, &mut summary)?;
                    }
                }
            }
        }
        Ok(summary)
    }

    /// Merges one row of model `id` (at JSON pointer `base`) into the
    /// model it names, or into a new model from its provider's template:
    /// provider first, since it picks the template the rest edits, then
    /// each group of members in the order their errors are reported. An
    /// undated row changes the model's newest prices; a row with
    /// `effective_from` is the model's price from that UTC day on, over
    /// the row in force that day, and replaces the rows from that day on.
    fn merge_native_row(
        &mut self,
        ctx: &Ctx<'_>,
        id: &str,
        row: Members<NativeRow>,
        base: &str,
        summary: &mut MergeSummary,
    ) -> Result<(), PricingError> {
        let at = |e: Misfit| ctx.located(base, e);
        let (existing, mut m) = self.existing_or_template(id);
        let is_new = existing.is_none();
        let Members { read: r, unknown } = row;
        if let Some(Provider(p)) = r.provider.read("provider").map_err(at)? {
            let writes_cache = r.cache_write_5m.is_present();
            set_provider(&mut m, id, p, is_new, writes_cache).map_err(at)?;
        }
        if let Some(w) = r.context_window.read("context_window").map_err(at)? {
            m.context_window = Some(w.0);
        }
        if let Some(e) = unknown {
            return Err(at(e));
        }
        let dated = r
            .effective_from
            .read("effective_from")
            .map_err(at)?
            .map(|Day(day)| start_on(&mut m, day, is_new));
        let prices = RowPrices {
            input: r.input,
            output: r.output,
            cache_write_5m: r.cache_write_5m,
            cache_write_1h: r.cache_write_1h,
            cache_read: r.cache_read,
        };
        prices.apply(&mut m, is_new).map_err(at)?;
        // Aliases are added to the model's own, each once whatever its case.
        for a in r
            .aliases
            .read("aliases")
            .map_err(at)?
            .map_or_else(Vec::new, |s| s.0)
        {
            if !m.aliases.iter().any(|x| x.eq_ignore_ascii_case(&a)) {
                m.aliases.push(a);
            }
        }
        if let Some(v) = r
            .min_cacheable_tokens
            .read("min_cacheable_tokens")
            .map_err(at)?
        {
            m.min_cacheable_tokens = v.0;
        }
        if let Some(t) = r
            .tool_prompt_tokens
            .read("tool_prompt_tokens")
            .map_err(at)?
        {
            m.tool_prompt.auto_none = t.auto_none.unwrap_or(m.tool_prompt.auto_none);
            m.tool_prompt.any_tool = t.any_tool.unwrap_or(m.tool_prompt.any_tool);
        }
        if let Some(f) = r.framing.read("framing").map_err(at)? {
            m.framing.per_message = f.per_message.unwrap_or(m.framing.per_message);
            m.framing.per_block = f.per_block.unwrap_or(m.framing.per_block);
            m.framing.per_tool = f.per_tool.unwrap_or(m.framing.per_tool);
        }
        match r.long_context {
            Member::Absent => {}
            Member::Null => m.long_context = None,
            Member::Given(lc) => {
                m.long_context = Some(lc.map_err(|e| at(e.under("long_context")))?)
            }
        }
        if let Some((day, kept)) = dated {
            m.earlier = kept;
            m.effective_from = Some(day);
        }
        self.commit(existing, m, summary);
        Ok(())
    }
}

/// A known model keeps its provider; a new one of another provider starts
/// from that provider's data (cache rules, framing), as LiteLLM's entries
/// do.
fn set_provider(
    m: &mut ModelPrice,
    id: &str,
    provider: ProviderKind,
    is_new: bool,
    writes_cache: bool,
) -> Result<(), Misfit> {
    if !is_new && provider != m.provider {
        return Err(
            Misfit::new(format!("the model's own provider, {}", m.provider.as_str()))
                .under("provider"),
        );
    }
    if is_new && provider != m.provider {
        *m = template_of(provider, id);
    }
    // A new OpenAI model that bills a cache write caches at breakpoints
    // (GPT-5.6 and later), as LiteLLM's reader decides.
    if is_new && provider == ProviderKind::OpenAi {
        m.breakpoint_cache = writes_cache;
    }
    Ok(())
}

/// A dated row starts from the prices in force that day, and keeps the
/// rows before it (applied once the rest of the row is read).
fn start_on(m: &mut ModelPrice, day: PriceDate, is_new: bool) -> (PriceDate, Vec<PriceRow>) {
    let in_force = m.row_on(day);
    m.rates = in_force.rates;
    m.long_context = in_force.long_context;
    // A new model has no earlier prices (its template's are another
    // model's): its first row prices every day before it too, as a table's
    // oldest row does.
    let kept: Vec<PriceRow> = m
        .rows()
        .into_iter()
        .filter(|r| !is_new && r.from.is_none_or(|f| f < day))
        .collect();
    (day, kept)
}

/// A row's five prices.
struct RowPrices {
    input: Member<Price>,
    output: Member<Price>,
    cache_write_5m: Member<Price>,
    cache_write_1h: Member<Price>,
    cache_read: Member<Price>,
}

impl RowPrices {
    /// Input and output prices (both required for a new model), then the
    /// cache prices.
    fn apply(self, m: &mut ModelPrice, is_new: bool) -> Result<(), Misfit> {
        let input = self.input.read("input")?;
        let output = self.output.read("output")?;
        if is_new {
            let required = |v: Option<Price>, name: &str| {
                v.ok_or_else(|| {
                    Misfit::new("a price in USD per million tokens (required for a new model)")
                        .under(name)
                })
            };
            let input = required(input, "input")?;
            let output = required(output, "output")?;
            m.rates = Rates::from_input_output(input.0, output.0);
        } else {
            if let Some(v) = input {
                m.rates.input = v.0;
            }
            if let Some(v) = output {
                m.rates.output = v.0;
            }
        }
        if let Some(v) = self.cache_write_5m.read("cache_write_5m")? {
            m.rates.cache_write_5m = v.0;
        }
        if let Some(v) = self.cache_write_1h.read("cache_write_1h")? {
            m.rates.cache_write_1h = v.0;
        }
        if let Some(v) = self.cache_read.read("cache_read")? {
            m.rates.cache_read = v.0;
        }
        Ok(())
    }
}

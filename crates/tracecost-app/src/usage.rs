//! Claude Code's recorded usage priced per response, in ccusage's session
//! report shape: ccusage 20.0.24's `ccusage claude session --json`, field
//! for field and in its order (its keys sorted by name, sessions by cost,
//! highest first, a session's models in the order first seen and their
//! breakdowns by cost), so that what parses ccusage's output parses ours.
//!
//! Codex CLI's usage is priced as ccusage 20.0.24's `ccusage codex
//! session` prices it (see [`build_all`]); Codex sessions alone give that
//! report's shape ([`CodexReport`]), a mix with Claude Code's the unified
//! one.

pub use crate::date::date_of;
use std::collections::BTreeMap;

use serde::Serialize;

use tracecost_cost::pricing::{Pricing, Usage};
use tracecost_import::claude_code::{ModelUsage, SessionUsage, TokenSums, UsageScan};
use tracecost_import::codex::{CodexModelUsage, CodexSessionUsage, CodexTokens, CodexUsageScan};

// The fields of each object are declared in ccusage's key order (by
// name), which is the order serde writes them in.

/// One model's part of a session (ccusage's `modelBreakdowns` entry).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelBreakdown {
    /// Cache writes (5m + 1h).
    pub cache_creation_tokens: u64,
    /// Cache reads.
    pub cache_read_tokens: u64,
    /// USD; `None` (`null`) when the price table does not know the model:
    /// its tokens are counted, its cost is not known.
    pub cost: Option<f64>,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Model id as recorded.
    pub model_name: String,
    /// Output tokens.
    pub output_tokens: u64,
}

/// The agent of Claude Code's sessions (ccusage's name for it).
pub const CLAUDE_AGENT: &str = "claude";

/// The agent of Codex CLI's sessions (ccusage's name for it).
pub const CODEX_AGENT: &str = "codex";

/// One session (ccusage's session object).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRow {
    /// The agent that recorded it ([`CLAUDE_AGENT`], [`CODEX_AGENT`]);
    /// ccusage's Claude Code report has no such field, its unified report
    /// does.
    #[serde(skip)]
    pub agent: &'static str,
    /// Codex's reasoning tokens (part of the output), which ccusage's
    /// unified report gives in a Codex session's `metadata`.
    #[serde(skip)]
    pub reasoning_output_tokens: Option<u64>,
    /// A Codex session as ccusage's Codex report gives it.
    #[serde(skip)]
    pub codex: Option<CodexSessionRow>,
    /// Cache writes.
    pub cache_creation_tokens: u64,
    /// Cache reads.
    pub cache_read_tokens: u64,
    /// When the first counted row was written (`2025-11-03T09:00:05.310Z`).
    pub first_activity: String,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// When the last counted row was written.
    pub last_activity: String,
    /// Per model, by cost, highest first.
    pub model_breakdowns: Vec<ModelBreakdown>,
    /// Models in the order first seen.
    pub models_used: Vec<String>,
    /// Output tokens.
    pub output_tokens: u64,
    /// Project directory name.
    pub project_path: String,
    /// Session id.
    pub session_id: String,
    /// USD of its priced models; `None` (`null`) when none of them is
    /// priced.
    pub total_cost: Option<f64>,
    /// All four token counts.
    pub total_tokens: u64,
}

/// Totals over sessions.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    /// Cache writes.
    pub cache_creation_tokens: u64,
    /// Cache reads.
    pub cache_read_tokens: u64,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// USD.
    pub total_cost: f64,
    /// All four.
    pub total_tokens: u64,
}

impl UsageTotals {
    /// The sums of `sessions`, in their order.
    pub fn of(sessions: &[SessionRow]) -> Self {
        let mut totals = UsageTotals::default();
        for s in sessions {
            totals.input_tokens += s.input_tokens;
            totals.output_tokens += s.output_tokens;
            totals.cache_creation_tokens += s.cache_creation_tokens;
            totals.cache_read_tokens += s.cache_read_tokens;
            totals.total_tokens += s.total_tokens;
            totals.total_cost += s.total_cost.unwrap_or(0.0);
        }
        totals
    }
}

/// The whole report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsageReport {
    /// Sessions of every agent, by cost, highest first (ccusage's order).
    pub sessions: Vec<SessionRow>,
    /// Totals.
    pub totals: UsageTotals,
    /// Calls of models the price table does not know: their tokens are in
    /// the counts, their cost in no total.
    #[serde(skip)]
    pub unpriced: crate::unpriced::Unpriced,
    /// What was read to find the usage.
    #[serde(skip)]
    pub read: ReadCounts,
}

/// What a usage scan read, for the line under the table: the report's own
/// copy, so a view needs nothing of the importer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadCounts {
    /// Files read.
    pub files: usize,
    /// Of those, files that were empty.
    pub empty_files: usize,
    /// Usage rows with billable tokens, before deduplication.
    pub rows: usize,
    /// Of those, rows counted once as duplicates of another.
    pub duplicate_rows: usize,
    /// Usage rows without billable tokens (or rejected as ccusage rejects
    /// them).
    pub unbilled_rows: usize,
    /// Lines holding `"usage"` that could not be read, skipped.
    pub skipped_lines: usize,
}

fn usage_of(t: &TokenSums) -> Usage {
    Usage::new(
        t.input,
        t.cache_creation_5m,
        t.cache_creation_1h,
        t.cache_read,
        t.output,
    )
}

/// `2025-11-03T09:00:05.310Z` of a Unix-millisecond timestamp (UTC), as
/// JavaScript's `Date.toISOString` writes it; empty when there is none.
pub fn iso_millis(ms: Option<u64>) -> String {
    let Some(ms) = ms else {
        return String::new();
    };
    let t = ms % 86_400_000;
    format!(
        "{}T{:02}:{:02}:{:02}.{:03}Z",
        date_of(ms),
        t / 3_600_000,
        t / 60_000 % 60,
        t / 1000 % 60,
        t % 1000
    )
}

/// Scans the plan's paths and prices them: Codex data (a Codex home, a
/// folder of its layout, a rollout, told apart by content) by the Codex
/// scan, everything else by Claude Code's.
pub fn run(plan: &crate::UsagePlan) -> Result<UsageReport, crate::AppError> {
    let (claude, codex) = scan(plan)?;
    Ok(build_all(&claude, &codex, &plan.pricing))
}

/// The plan's paths scanned: Claude Code's usage and Codex's.
pub(crate) fn scan(
    plan: &crate::UsagePlan,
) -> Result<(UsageScan, CodexUsageScan), crate::AppError> {
    use tracecost_import::{InputFormat, claude_code, codex, detect};
    if plan.paths.is_empty() {
        return Err(crate::AppError::Usage(
            "no Claude Code or Codex data found: pass a path, or set CLAUDE_CONFIG_DIR or CODEX_HOME"
                .into(),
        ));
    }
    let is_codex = |p: &std::path::Path| {
        if p.is_dir() {
            detect::is_codex_folder(p)
        } else {
            matches!(
                detect::detect_file(p),
                Ok(detect::FileKind::Log(InputFormat::Codex))
            )
        }
    };
    let (codex_paths, claude_paths): (Vec<_>, Vec<_>) =
        plan.paths.iter().cloned().partition(|p| is_codex(p));
    let claude = match claude_paths.is_empty() {
        true => UsageScan::default(),
        false => claude_code::scan_usage(&claude_paths)?,
    };
    let codex = match codex_paths.is_empty() {
        true => CodexUsageScan::default(),
        false => codex::scan_usage(&codex_paths)?,
    };
    Ok((claude, codex))
}

/// Prices a scan: each response on its own, with its model's price, the
/// costs summed in f64 in the order the scan read them (ccusage's
/// per-response sum). A sum of responses cannot be priced as one request:
/// the long-context premium of Sonnet 4 / 4.5 applies to a request whose
/// own input passes the threshold, and a session's sum passes it long
/// before any request does. Each response is priced at the row in force on
/// its UTC day. Rows recorded with `speed: "fast"` (model `<id>-fast`) are
/// priced as their base model at its fast-mode multiple, a response
/// served in one geography (`inference_geo: "us"`) or by a Bedrock regional
/// profile (`us.anthropic.…`) at the regional one, where the table has
/// them, and one of the batch tier at the Batch API's discount
/// ([`tracecost_replay::served_cost`]).
pub fn build(scan: &UsageScan, pricing: &Pricing) -> UsageReport {
    build_all(scan, &CodexUsageScan::default(), pricing)
}

/// [`build`] over Claude Code's sessions and Codex's together.
///
/// A Codex session is priced as ccusage's Codex report prices it: per
/// model and day (UTC), on that day's sums, `(input − cached)·p_in +
/// cached·p_cached + output·p_out` with per-token prices, summed in f64 in
/// that order, the days added
/// (reasoning is part of the output; cache writes, which ccusage counts as
/// input, at the table's write price, which is the input price for every
/// built-in OpenAI model), the models summed in id order. A call whose own
/// input passes its model's long-context threshold (GPT-5.4 and later) is
/// priced on its own at the long-context rates, which ccusage does not do.
pub fn build_all(scan: &UsageScan, codex: &CodexUsageScan, pricing: &Pricing) -> UsageReport {
    let mut unpriced = crate::unpriced::Unpriced::default();
    let mut sessions = scan
        .sessions
        .iter()
        .map(|s| session_row(s, pricing, &mut unpriced))
        .collect::<Vec<_>>();
    sessions.extend(
        codex
            .sessions
            .iter()
            .map(|s| codex_row(s, pricing, &mut unpriced)),
    );
    // ccusage's order: the costliest first. A stable sort of the scan's
    // order (project, then session id) keeps ties deterministic, and the
    // totals below are summed in this order, as ccusage sums them, to the
    // same bits.
    sessions.sort_by(|a, b| by_cost(b.total_cost, a.total_cost));
    let totals = UsageTotals::of(&sessions);
    UsageReport {
        sessions,
        totals,
        unpriced,
        read: ReadCounts {
            files: scan.files + codex.files,
            empty_files: scan.empty_files + codex.empty_files,
            rows: scan.rows + codex.rows,
            duplicate_rows: scan.duplicate_rows + codex.duplicate_rows,
            unbilled_rows: scan.unbilled_rows + codex.unbilled_rows,
            skipped_lines: scan.skipped_lines + codex.skipped_lines,
        },
    }
}

/// Costs in order, a cost not known below every known one.
fn by_cost(a: Option<f64>, b: Option<f64>) -> std::cmp::Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.total_cmp(&b),
        (a, b) => a.is_some().cmp(&b.is_some()),
    }
}

/// Adds `cost` to a total that is not known until a cost is.
fn add_cost(total: &mut Option<f64>, cost: Option<f64>) {
    if let Some(c) = cost {
        *total = Some(total.unwrap_or(0.0) + c);
    }
}

fn session_row(
    s: &SessionUsage,
    pricing: &Pricing,
    unpriced: &mut crate::unpriced::Unpriced,
) -> SessionRow {
    let mut row = SessionRow {
        agent: CLAUDE_AGENT,
        reasoning_output_tokens: None,
        codex: None,
        session_id: s.session_id.clone(),
        input_tokens: 0,
        output_tokens: 0,
        cache_creation_tokens: 0,
        cache_read_tokens: 0,
        total_tokens: 0,
        total_cost: None,
        first_activity: iso_millis(s.first_ms),
        last_activity: iso_millis(s.last_ms),
        models_used: s.models_seen.clone(),
        model_breakdowns: Vec::new(),
        project_path: s.project_path.clone(),
    };
    for m in &s.models {
        let cost = match response_costs(m, pricing) {
            Some(costs) => Some(costs.into_iter().sum()),
            None => {
                unpriced.add(&m.model, &s.session_id, m.responses.len() as u64);
                None
            }
        };
        let cc = m.tokens.cache_creation_5m + m.tokens.cache_creation_1h;
        row.model_breakdowns.push(ModelBreakdown {
            model_name: m.model.clone(),
            input_tokens: m.tokens.input,
            output_tokens: m.tokens.output,
            cache_creation_tokens: cc,
            cache_read_tokens: m.tokens.cache_read,
            cost,
        });
        row.input_tokens += m.tokens.input;
        row.output_tokens += m.tokens.output;
        row.cache_creation_tokens += cc;
        row.cache_read_tokens += m.tokens.cache_read;
        add_cost(&mut row.total_cost, cost);
    }
    row.total_tokens =
        row.input_tokens + row.output_tokens + row.cache_creation_tokens + row.cache_read_tokens;
    // Stable: models of equal cost keep the scan's order (by model id).
    row.model_breakdowns.sort_by(|a, b| by_cost(b.cost, a.cost));
    row
}

/// Each response of `m` priced on its own (see [`build`]), in the order
/// read; `None` when the price table does not know the model.
pub(crate) fn response_costs(m: &ModelUsage, pricing: &Pricing) -> Option<Vec<f64>> {
    let (base, fast) = match m.model.strip_suffix("-fast") {
        Some(base) => (base, true),
        None => (m.model.as_str(), false),
    };
    let p = pricing.lookup(base).ok()?;
    Some(
        m.responses
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let at = m.response_ms.get(i).copied();
                // Each response as its usage says it was served (a `-fast`
                // name is fast mode whatever the row).
                let mut served = m.response_modifiers.get(i).copied().unwrap_or_default();
                served.fast |= fast;
                tracecost_replay::served_cost(p, &usage_of(t), false, at, served, base)
            })
            .collect(),
    )
}

/// ccusage's Codex session report (`ccusage codex session --json`): its
/// keys sorted by name, sessions by session id.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CodexReport {
    /// Sessions, by session id.
    pub sessions: Vec<CodexSessionRow>,
    /// Totals, summed in session order.
    pub totals: CodexTotals,
}

impl CodexReport {
    /// ccusage's Codex report of `report`, when all its sessions are
    /// Codex's.
    pub fn of(report: &UsageReport) -> Option<Self> {
        let rows: Option<Vec<CodexSessionRow>> =
            report.sessions.iter().map(|s| s.codex.clone()).collect();
        rows.filter(|r| !r.is_empty()).map(Self::new)
    }

    fn new(mut sessions: Vec<CodexSessionRow>) -> Self {
        sessions.sort_by(|a, b| a.session_id.cmp(&b.session_id));
        let mut t = CodexTotals::default();
        for s in &sessions {
            t.input_tokens += s.input_tokens;
            t.cache_read_tokens += s.cache_read_tokens;
            t.output_tokens += s.output_tokens;
            t.reasoning_output_tokens += s.reasoning_output_tokens;
            t.total_tokens += s.total_tokens;
            t.cost_usd += s.cost_usd.unwrap_or(0.0);
        }
        CodexReport {
            sessions,
            totals: t,
        }
    }
}

/// One Codex session (a rollout file) in ccusage's Codex report.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodexSessionRow {
    /// Always 0: ccusage counts cache writes as input.
    pub cache_creation_tokens: u64,
    /// Cached input tokens.
    pub cache_read_tokens: u64,
    /// USD; `None` (`null`) when none of its models is priced.
    #[serde(rename = "costUSD")]
    pub cost_usd: Option<f64>,
    /// The session id's folders (`2026/02/23`).
    pub directory: String,
    /// Input tokens not read from the cache.
    pub input_tokens: u64,
    /// When the last counted call's token_count was written.
    pub last_activity: Option<String>,
    /// Per model, by model id.
    pub models: BTreeMap<String, CodexModelRow>,
    /// Output tokens, reasoning included.
    pub output_tokens: u64,
    /// Reasoning tokens (part of the output).
    pub reasoning_output_tokens: u64,
    /// The session id's file name.
    pub session_file: String,
    /// The rollout's path below `sessions/`, without `.jsonl`.
    pub session_id: String,
    /// Codex's `total_tokens` summed (input, cached included, + output).
    pub total_tokens: u64,
}

/// One model's part of a Codex session.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodexModelRow {
    /// Always 0, as above.
    pub cache_creation_tokens: u64,
    /// Cached input tokens.
    pub cache_read_tokens: u64,
    /// Input tokens not read from the cache.
    pub input_tokens: u64,
    /// Whether the model was assumed (the session named none).
    pub is_fallback: bool,
    /// Output tokens, reasoning included.
    pub output_tokens: u64,
    /// Reasoning tokens.
    pub reasoning_output_tokens: u64,
    /// Codex's `total_tokens` summed.
    pub total_tokens: u64,
}

/// Totals of ccusage's Codex report.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodexTotals {
    /// Always 0.
    pub cache_creation_tokens: u64,
    /// Cached input tokens.
    pub cache_read_tokens: u64,
    /// USD.
    #[serde(rename = "costUSD")]
    pub cost_usd: f64,
    /// Input tokens not read from the cache.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Reasoning tokens.
    pub reasoning_output_tokens: u64,
    /// All of them.
    pub total_tokens: u64,
}

/// One model's cost in a Codex session (see [`build_all`]).
pub(crate) fn codex_model_cost(m: &CodexModelUsage, pricing: &Pricing) -> Option<f64> {
    let p = pricing.lookup(&m.model).ok()?;
    // ccusage's sums are per day (UTC), each priced, then added: the same
    // bits need the same grouping. A day's price is the row in force that
    // day.
    let mut days: BTreeMap<u64, CodexTokens> = BTreeMap::new();
    let mut alone = 0.0;
    for c in &m.calls {
        let t = &c.tokens;
        let row = p.row_at(Some(c.at_ms));
        if row
            .long_context
            .is_some_and(|lc| t.input > lc.threshold_tokens)
        {
            let cached = t.cached.min(t.input);
            let written = t.written.min(t.input - cached);
            let u = Usage::new(t.input - cached - written, written, 0, cached, t.output);
            alone += p.cost_usd_at(&u, false, Some(c.at_ms));
        } else {
            days.entry(c.at_ms / 86_400_000).or_default().add(t);
        }
    }
    let per = |usd_per_million: f64| usd_per_million / 1e6;
    let mut cost = 0.0;
    for (&day, sum) in &days {
        let r = &p.row_at(Some(day * 86_400_000)).rates;
        let written = sum.written.min(sum.uncached());
        // With no writes this is ccusage's expression, term for term.
        cost += (sum.uncached() - written) as f64 * per(r.input)
            + written as f64 * per(r.cache_write_5m)
            + sum.cached as f64 * per(r.cache_read)
            + sum.output as f64 * per(r.output);
    }
    Some(cost + alone)
}

/// A Codex session as a row of the report, with its row of ccusage's
/// Codex report.
fn codex_row(
    s: &CodexSessionUsage,
    pricing: &Pricing,
    unpriced: &mut crate::unpriced::Unpriced,
) -> SessionRow {
    let t = s.totals();
    let mut row = SessionRow {
        agent: CODEX_AGENT,
        reasoning_output_tokens: Some(t.reasoning),
        codex: None,
        cache_creation_tokens: 0,
        cache_read_tokens: t.cached,
        first_activity: iso_millis(s.first_ms),
        input_tokens: t.uncached(),
        last_activity: iso_millis(s.last_ms),
        model_breakdowns: Vec::new(),
        models_used: s.models_seen.clone(),
        output_tokens: t.output,
        project_path: s.cwd.clone().unwrap_or_else(|| s.directory().to_owned()),
        session_id: s.session_id.clone(),
        total_cost: None,
        total_tokens: t.total,
    };
    let mut models = BTreeMap::new();
    for m in &s.models {
        let cost = codex_model_cost(m, pricing);
        if cost.is_none() {
            unpriced.add(&m.model, &s.session_id, m.calls.len() as u64);
        }
        add_cost(&mut row.total_cost, cost);
        row.model_breakdowns.push(ModelBreakdown {
            cache_creation_tokens: 0,
            cache_read_tokens: m.tokens.cached,
            cost,
            input_tokens: m.tokens.uncached(),
            model_name: m.model.clone(),
            output_tokens: m.tokens.output,
        });
        models.insert(
            m.model.clone(),
            CodexModelRow {
                cache_creation_tokens: 0,
                cache_read_tokens: m.tokens.cached,
                input_tokens: m.tokens.uncached(),
                is_fallback: m.is_fallback,
                output_tokens: m.tokens.output,
                reasoning_output_tokens: m.tokens.reasoning,
                total_tokens: m.tokens.total,
            },
        );
    }
    row.model_breakdowns.sort_by(|a, b| by_cost(b.cost, a.cost));
    row.codex = Some(CodexSessionRow {
        cache_creation_tokens: 0,
        cache_read_tokens: t.cached,
        cost_usd: row.total_cost,
        directory: s.directory().to_owned(),
        input_tokens: t.uncached(),
        last_activity: s.last_ms.map(|ms| iso_millis(Some(ms))),
        models,
        output_tokens: t.output,
        reasoning_output_tokens: t.reasoning,
        session_file: s.session_file().to_owned(),
        session_id: s.session_id.clone(),
        total_tokens: t.total,
    });
    row
}

#[cfg(test)]
mod tests {
    use super::*;
    use tracecost_import::claude_code::ModelUsage;
    use tracecost_import::codex::CodexCall;

    /// A response: uncached input, 5m writes, reads, output.
    fn resp(input: u64, write_5m: u64, read: u64, output: u64) -> TokenSums {
        TokenSums {
            input,
            output,
            cache_creation_5m: write_5m,
            cache_creation_1h: 0,
            cache_read: read,
        }
    }

    fn scan(model: &str, responses: Vec<TokenSums>) -> UsageScan {
        let mut tokens = TokenSums::default();
        responses.iter().for_each(|r| tokens.add(r));
        UsageScan {
            sessions: vec![SessionUsage {
                session_id: "s".into(),
                project_path: "p".into(),
                models: vec![ModelUsage {
                    model: model.into(),
                    tokens,
                    responses,
                    response_ms: Vec::new(),
                    response_modifiers: Vec::new(),
                }],
                models_seen: vec![model.into()],
                first_ms: Some(0),
                last_ms: Some(0),
            }],
            ..UsageScan::default()
        }
    }

    /// USD of tokens at per-MTok prices [input, 5m write, read, output].
    fn at(t: &TokenSums, [i, w, r, o]: [f64; 4]) -> f64 {
        (t.input as f64 * i
            + t.cache_creation_5m as f64 * w
            + t.cache_read as f64 * r
            + t.output as f64 * o)
            / 1e6
    }

    const SONNET_BASE: [f64; 4] = [3.0, 3.75, 0.30, 15.0];
    const SONNET_PREMIUM: [f64; 4] = [6.0, 7.5, 0.60, 22.5];

    fn cost(model: &str, responses: Vec<TokenSums>) -> f64 {
        let r = build(&scan(model, responses), &Pricing::builtin());
        assert!(r.unpriced.is_empty());
        assert_eq!(r.sessions[0].total_cost, Some(r.totals.total_cost));
        r.totals.total_cost
    }

    /// 1,000 tokens in and 1,000 out.
    const THOUSAND_EACH: TokenSums = TokenSums {
        input: 1000,
        output: 1000,
        cache_creation_5m: 0,
        cache_creation_1h: 0,
        cache_read: 0,
    };

    #[test]
    fn fast_mode_and_regional_profiles_bill_their_multiples() {
        let t = THOUSAND_EACH;
        // Opus 4.8: $5 in / $25 out; fast mode 2x, a `us.` profile 1.1x.
        let close = |got: f64, want: f64| assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        close(cost("claude-opus-4-8", vec![t]), 0.030);
        close(cost("claude-opus-4-8-fast", vec![t]), 0.060);
        close(cost("us.anthropic.claude-opus-4-8-v1:0", vec![t]), 0.033);
        // Claude 3 Haiku has neither modifier documented: its base rate.
        close(cost("claude-3-haiku-20240307-fast", vec![t]), 0.0015);
    }

    #[test]
    fn each_response_is_billed_as_its_usage_says_it_was_served() {
        use tracecost_trace::RecordedModifiers;
        let t = THOUSAND_EACH;
        let served = |fast, regional, batch| RecordedModifiers {
            fast,
            regional,
            batch,
        };
        let mut s = scan("claude-opus-4-8", vec![t; 4]);
        s.sessions[0].models[0].response_modifiers = vec![
            served(false, false, false),
            // `inference_geo: "us"`: 1.1x; the batch tier: half.
            served(false, true, false),
            served(false, false, true),
            // Fast mode in one geography: 2 x 1.1.
            served(true, true, false),
        ];
        let r = build(&s, &Pricing::builtin());
        let want = 0.030 + 0.033 + 0.015 + 0.066;
        let got = r.totals.total_cost;
        assert!((got - want).abs() < 1e-12, "{got} vs {want}");
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn calls_under_the_threshold_stay_at_the_base_rate_whatever_their_sum() {
        // Each request has 96,000 input tokens; the three sum to 288,000.
        let one = resp(1_000, 5_000, 90_000, 1_000);
        let got = cost("claude-sonnet-4-5-20250929", vec![one; 3]);
        let want = 3.0 * at(&one, SONNET_BASE);
        assert!(close(got, want), "{got} vs {want}");
        assert!(!close(got, 3.0 * at(&one, SONNET_PREMIUM)));
    }

    #[test]
    fn a_call_over_the_threshold_pays_the_premium_on_every_token() {
        // 200,001 input tokens: the premium applies, output included; the
        // small call beside it stays at the base rate.
        let big = resp(1, 10_000, 190_000, 1_000);
        let small = resp(10, 0, 0, 10);
        let got = cost("claude-sonnet-4-5-20250929", vec![small, big]);
        let want = at(&small, SONNET_BASE) + at(&big, SONNET_PREMIUM);
        assert!(close(got, want), "{got} vs {want}");
        // Exactly at the threshold is not above it.
        let edge = resp(0, 10_000, 190_000, 1_000);
        let got = cost("claude-sonnet-4-20250514", vec![edge]);
        assert!(close(got, at(&edge, SONNET_BASE)), "{got}");
    }

    #[test]
    fn models_without_a_premium_never_pay_one() {
        let big = resp(1, 10_000, 290_000, 1_000);
        let got = cost("claude-sonnet-4-6", vec![big]);
        assert!(close(got, at(&big, SONNET_BASE)), "{got}");
        let got = cost("claude-opus-4-5-20251101", vec![big, big]);
        let want = 2.0 * at(&big, [5.0, 6.25, 0.50, 25.0]);
        assert!(close(got, want), "{got} vs {want}");
    }

    fn codex_call(day: u64, input: u64, cached: u64, output: u64) -> CodexCall {
        CodexCall {
            at_ms: day * 86_400_000,
            tokens: CodexTokens {
                input,
                cached,
                written: 0,
                output,
                reasoning: 0,
                total: input + output,
            },
        }
    }

    fn codex_cost(model: &str, calls: Vec<CodexCall>) -> f64 {
        let mut tokens = CodexTokens::default();
        calls.iter().for_each(|c| tokens.add(&c.tokens));
        let m = CodexModelUsage {
            model: model.into(),
            is_fallback: false,
            tokens,
            calls,
        };
        codex_model_cost(&m, &Pricing::builtin()).unwrap()
    }

    #[test]
    fn a_codex_call_over_the_long_context_threshold_is_priced_on_its_own() {
        // gpt-5.4: $2.50 / $0.25 / $15 per MTok; above 272,000 input tokens
        // the request pays $5 / $0.50 / $22.50.
        let small = codex_call(0, 100_000, 90_000, 1_000);
        let big = codex_call(0, 300_000, 250_000, 2_000);
        let got = codex_cost("gpt-5.4", vec![small, big]);
        let want = (10_000.0 * 2.5
            + 90_000.0 * 0.25
            + 1_000.0 * 15.0
            + 50_000.0 * 5.0
            + 250_000.0 * 0.5
            + 2_000.0 * 22.5)
            / 1e6;
        assert!(close(got, want), "{got} vs {want}");
        // Calls under it are summed, whatever their sum.
        let got = codex_cost("gpt-5.4", vec![small; 4]);
        assert!(close(
            got,
            4.0 * (10_000.0 * 2.5 + 90_000.0 * 0.25 + 15_000.0) / 1e6
        ));
    }

    #[test]
    fn codex_sums_are_priced_per_day_as_ccusage_adds_them() {
        let (a, b) = (
            codex_call(0, 1_234_567, 1_000_001, 7_777),
            codex_call(1, 7, 3, 1),
        );
        let per = |c: &CodexCall| {
            let t = &c.tokens;
            (t.input - t.cached) as f64 * (1.75 / 1e6)
                + t.cached as f64 * (0.175 / 1e6)
                + t.output as f64 * (14.0 / 1e6)
        };
        assert_eq!(codex_cost("gpt-5.3-codex", vec![a, b]), per(&a) + per(&b));
    }
}

//! `results.json`: the report's figures for a program to read (the shape
//! is documented in `docs/results.md`; its version is [`RESULTS_FORMAT`]).

use serde::Serialize;

use tracecost_app::TraceReport;
use tracecost_policy::Config;
use tracecost_replay::CallResults;
use tracecost_replay::stability::StabilityResult;
use tracecost_replay::sweep::SweepRow;

use super::story::headline;

pub(super) fn json<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

pub(super) fn json_pretty<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// `text` with every line but the first indented by `n` spaces (the first
/// follows a key or the caller's own indent), so pretty JSON nests in
/// pretty JSON. Line breaks in JSON text only ever come from the layout:
/// strings escape theirs.
pub(super) fn indented(text: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.lines().enumerate() {
        if i > 0 {
            out.push('\n');
            out.push_str(&pad);
        }
        out.push_str(line);
    }
    out
}

/// Writes `v` to `out` as [`indented`] by `n` of [`json_pretty`] of it,
/// the same bytes, without holding the text: a fleet's answer in
/// `results.json` lists every session.
pub(super) fn write_json_indented<T: Serialize + ?Sized>(
    v: &T,
    n: usize,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let mut indent = Indent { out, pad: n };
    serde_json::to_writer_pretty(&mut indent, v).map_err(std::io::Error::from)
}

/// Every line after the first indented by `pad` spaces, as [`indented`]
/// does: line breaks in pretty JSON come from the layout only.
struct Indent<'o> {
    out: &'o mut dyn std::io::Write,
    pad: usize,
}

impl std::io::Write for Indent<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while let Some(i) = rest.iter().position(|&b| b == b'\n') {
            self.out.write_all(&rest[..=i])?;
            for _ in 0..self.pad {
                self.out.write_all(b" ")?;
            }
            rest = &rest[i + 1..];
        }
        self.out.write_all(rest)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

#[derive(Serialize)]
pub(super) struct JsonPick<'a> {
    config: &'a Config,
    cost_usd: f64,
    savings_usd: f64,
    savings_pct: f64,
    recall_needs: f64,
}

#[derive(Serialize)]
pub(super) struct JsonRow<'a> {
    config: &'a Config,
    cost_usd: f64,
    savings_usd: f64,
    savings_pct: f64,
    #[serde(flatten)]
    usage: tracecost_cost::pricing::Usage,
    recall_risk: tracecost_replay::recall_risk::RecallRisk,
    pareto: bool,
}

#[derive(Serialize)]
pub(super) struct JsonTrace<'a> {
    trace: &'a str,
    session: &'a str,
    source: Option<&'a str>,
    description: &'a str,
    model: &'a str,
    back_to_back: bool,
    calibration: tracecost_replay::TraceCalibration,
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded_cost_usd: Option<f64>,
    baseline: JsonPick<'a>,
    cheapest: JsonPick<'a>,
    recommended: JsonPick<'a>,
    stability: JsonStability<'a>,
    /// Where the ledger ran, the recalls the record shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    recall_observed: Option<&'a tracecost_replay::recall_risk::Observed>,
    /// Every config's figures and the per-call rows: written for a trace
    /// that has a page (every trace unless a report of many gives pages
    /// only to the most expensive), left out of the others.
    #[serde(skip_serializing_if = "Option::is_none")]
    configs: Option<Vec<JsonRow<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    calls_baseline: Option<JsonCalls<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    calls_recommended: Option<JsonCalls<'a>>,
}

/// A trace's stability as `results.json` writes it: whole, or without its
/// per-call rows (a trace without a page).
pub(super) enum JsonStability<'a> {
    Whole(&'a StabilityResult),
    Summary(&'a StabilityResult),
}

impl Serialize for JsonStability<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Summary<'a> {
            violations: &'a [tracecost_replay::stability::Violation],
            digest: &'a str,
            stubs: usize,
        }
        match self {
            JsonStability::Whole(r) => r.serialize(s),
            JsonStability::Summary(r) => Summary {
                violations: &r.violations,
                digest: &r.digest,
                stubs: r.stubs,
            }
            .serialize(s),
        }
    }
}

/// A trace's calls as `results.json` writes them: each call names the
/// results compacted at it and not at the call before (and those no longer
/// compacted), with the count, rather than the whole list at every call:
/// over a long trace the lists would add up to calls²/2 ids (5·10¹⁰ for
/// 500,000 calls), and the file would grow with the square of the trace.
pub(super) struct JsonCalls<'a>(&'a CallResults);

#[derive(Serialize)]
pub(super) struct JsonCall<'a> {
    index: usize,
    messages: usize,
    chars: u64,
    #[serde(flatten)]
    usage: tracecost_cost::pricing::Usage,
    cost_usd: f64,
    compacted_count: usize,
    newly_compacted: Vec<&'a str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    restored: Vec<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded: Option<tracecost_cost::pricing::Usage>,
    #[serde(skip_serializing_if = "Option::is_none")]
    recorded_cost_usd: Option<f64>,
    stable_prefix_tokens: u64,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    over_window: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_cause: Option<tracecost_replay::explain::CacheCause>,
    /// A summary call a summarising compaction added.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    summary: bool,
}

impl Serialize for JsonCalls<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        // The ids compacted at the call before.
        let mut before = tracecost_replay::CompactedIds::default();
        for c in self.0 {
            let (newly_compacted, restored) = c.compacted.changes_since(&before);
            seq.serialize_element(&JsonCall {
                index: c.index,
                messages: c.messages,
                chars: c.chars,
                usage: c.usage,
                cost_usd: c.cost_usd,
                compacted_count: c.compacted.len(),
                newly_compacted,
                restored,
                recorded: c.recorded(),
                recorded_cost_usd: c.recorded_cost_usd(),
                stable_prefix_tokens: c.stable_prefix_tokens,
                over_window: c.over_window,
                cache_cause: c.cache_cause,
                summary: c.summary,
            })?;
            before = c.compacted;
        }
        seq.end()
    }
}

pub(super) fn pick(r: &SweepRow) -> JsonPick<'_> {
    JsonPick {
        config: &r.result.config,
        cost_usd: r.result.totals.cost_usd,
        savings_usd: r.savings_usd,
        savings_pct: r.savings_pct,
        recall_needs: r.risk.needs.mid,
    }
}

/// A trace's entry in `results.json`; `detail`: with every config's row
/// and the per-call rows (a trace with a page).
pub(super) fn json_trace<'a>(session: &'a str, r: &'a TraceReport, detail: bool) -> JsonTrace<'a> {
    let s = &r.sweep;
    let h = headline(s);
    JsonTrace {
        trace: &s.trace,
        session,
        source: s.source.as_deref(),
        description: &s.description,
        model: &h.base.result.model,
        back_to_back: h.base.result.back_to_back,
        calibration: h.base.result.calibration,
        recorded_cost_usd: h.recorded,
        baseline: pick(h.base),
        cheapest: pick(h.best),
        recommended: pick(h.rec),
        stability: match detail {
            true => JsonStability::Whole(&r.stability),
            false => JsonStability::Summary(&r.stability),
        },
        recall_observed: s.observed_recall.as_ref(),
        configs: detail.then(|| {
            s.rows
                .iter()
                .map(|row| JsonRow {
                    config: &row.result.config,
                    cost_usd: row.result.totals.cost_usd,
                    savings_usd: row.savings_usd,
                    savings_pct: row.savings_pct,
                    usage: row.result.totals.usage,
                    recall_risk: row.risk,
                    pareto: row.pareto,
                })
                .collect()
        }),
        calls_baseline: detail.then_some(JsonCalls(&h.base.result.calls)),
        calls_recommended: detail.then_some(JsonCalls(&h.rec.result.calls)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_written_indented_is_the_indented_pretty_text() {
        let v = serde_json::json!({
            "a": [1, 2.5, null, {"b": "two\nlines \"quoted\"\r\n", "c": []}],
            "d": {},
            "e": "x",
        });
        for n in [0, 2, 4] {
            let mut out = Vec::new();
            write_json_indented(&v, n, &mut out).unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                indented(&json_pretty(&v), n)
            );
        }
    }
}

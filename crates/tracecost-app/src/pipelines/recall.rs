//! `recall`: the recall tool's answer for an id, over a plan's traces.

use std::collections::HashMap;

use crate::AppError;
use crate::plan::RecallPlan;
use tracecost_engine::handle::{Handle, one_line};
use tracecost_engine::ledger::{
    DurableLedger, InMemoryLedger, LedgerError, ToolResultLedger, record_result,
};
use tracecost_engine::message::{BlockKind, Message};
use tracecost_trace::Trace;

/// The handles a tool_use id was recorded under, with the traces that
/// recorded them, in trace order.
type RecordedIds = HashMap<String, Vec<(String, Handle)>>;

/// Records every tool result of `trace` into `ledger`, noting under `ids`
/// the handle each tool_use id got.
fn record_all(
    trace: &Trace,
    ledger: &dyn ToolResultLedger,
    ids: &mut RecordedIds,
) -> Result<(), AppError> {
    let mut names = HashMap::new();
    for b in trace.messages.iter().flat_map(Message::blocks) {
        match b.kind() {
            BlockKind::ToolUse { id, name } => {
                names.insert(
                    id.clone(),
                    (name.clone(), b.tool_input().map_or("{}", |r| r.get())),
                );
            }
            BlockKind::ToolResult { tool_use_id, .. } => {
                let (name, args) = names
                    .get(tool_use_id)
                    .map_or(("unknown", "{}"), |(n, a)| (&**n, *a));
                let handle = record_result(ledger, tool_use_id, name, args, b)?;
                let seen = ids.entry(tool_use_id.to_string()).or_default();
                if !seen.iter().any(|(_, h)| h.mem_id == handle.mem_id) {
                    seen.push((trace.name.clone(), handle));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// What the recall tool answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecallAnswer {
    /// The text, exactly as the model would receive it.
    pub text: String,
    /// Whether the id named a recorded result (else `text` is the
    /// not-found string).
    pub found: bool,
}

/// Records every tool result of the plan's traces and answers the recall
/// request for its id (a mem_id or a tool_use id).
///
/// A tool_use id is looked up among the plan's traces first, so a durable
/// ledger shared with other traces that reused the id still answers with
/// this trace's result; an id that names different results (two of the
/// plan's traces, or only other traces of the ledger) is refused with the
/// mem_ids to recall instead, never answered with one of them.
pub fn recall(plan: &RecallPlan) -> Result<RecallAnswer, AppError> {
    let damaged = |source| match (&plan.ledger_dir, source) {
        (Some(dir), source @ LedgerError::Corrupt { .. }) => AppError::LedgerDamaged {
            dir: dir.display().to_string(),
            source,
        },
        (_, source) => AppError::Ledger(source),
    };
    let ledger: Box<dyn ToolResultLedger> = match &plan.ledger_dir {
        Some(dir) => Box::new(DurableLedger::open(dir).map_err(damaged)?),
        None => Box::new(InMemoryLedger::new()),
    };
    let mut ids = RecordedIds::new();
    for t in &plan.traces {
        record_all(t, ledger.as_ref(), &mut ids).map_err(|e| match e {
            AppError::Ledger(source) => damaged(source),
            e => e,
        })?;
    }
    let mem_id = match ledger.get(&plan.id).map_err(damaged)? {
        Some(rec) => Some(rec.handle.mem_id),
        None => match ids.get(&plan.id).map(Vec::as_slice) {
            Some([(_, handle)]) => Some(handle.mem_id.clone()),
            Some(many @ [_, _, ..]) => {
                let records: Vec<String> = many
                    .iter()
                    .map(|(trace, h)| format!("{} in trace {}", h.mem_id, one_line(trace, 80)))
                    .collect();
                return Err(AppError::Usage(format!(
                    "tool_use id \"{}\" names {} different results: {}; recall one by its mem_id",
                    one_line(&plan.id, 200),
                    many.len(),
                    records.join(", ")
                )));
            }
            _ => ledger
                .get_by_call_id(&plan.id)
                .map_err(damaged)?
                .map(|rec| rec.handle.mem_id),
        },
    };
    // A record that cannot be read back (a payload whose bytes no longer
    // match its hash, one cut short) is the ledger's damage, refused with
    // the way to repair it; only the model-facing tool path
    // (`recall::fetch`) answers it as a `[tool_memory error: …]` text.
    let record = match mem_id {
        Some(id) => ledger.get(&id).map_err(damaged)?,
        None => None,
    };
    Ok(match record {
        Some(rec) => RecallAnswer {
            text: cut_answer(
                tracecost_engine::recall::answer(&rec.handle, &rec.payload, &plan.request),
                plan.answer_chars,
            ),
            found: true,
        },
        None => RecallAnswer {
            text: tracecost_engine::recall::not_found(&plan.id),
            found: false,
        },
    })
}

/// `text` cut after `max` chars (never inside a char), with a line saying
/// where and how many chars the whole answer has; as is when it fits.
fn cut_answer(text: String, max: Option<u64>) -> String {
    let Some(max) = max else { return text };
    let total = text.chars().count();
    let Some((end, _)) = usize::try_from(max)
        .ok()
        .and_then(|m| text.char_indices().nth(m))
    else {
        return text;
    };
    format!(
        "{}\n[cut at {max} of {total} chars of the answer]",
        &text[..end]
    )
}

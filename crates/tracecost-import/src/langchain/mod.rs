//! Importer for LangChain / LangGraph message lists as `messages_to_dict`
//! saves them: `{"type": "human"|"ai"|"tool"|"system", "data": {...}}`.
//!
//! A file holds one JSON list (one final conversation), a JSON list of lists
//! (one list per model call), JSONL with one list per line (one per model
//! call), or a LangGraph state object `{"messages": [...]}` (a final list).
//! `.jsonl` / `.ndjson` files are always read as lines.
//!
//! Mapping to Anthropic shapes:
//!
//! - `system` → the prompt's system text blocks; a system message after the
//!   conversation began becomes a user text message (reported);
//! - `human` → a user message (string content stays a string);
//! - `ai` → an assistant message: string content stays a string when there
//!   are no tool calls; otherwise text blocks, then `tool_use` blocks whose
//!   `input` is the call's `args` with the file's key order and value bytes
//!   (whitespace between tokens dropped). A `tool_use` block already in the
//!   content takes its input from the matching tool call; calls not in the
//!   content follow it, as langchain-anthropic sends them;
//! - `tool` → a `tool_result` block (`is_error` when `status` is `"error"`);
//!   consecutive tool messages merge into one user message;
//! - content parts: text (strings or `{"type":"text"}`), images (`image_url`
//!   or LangChain's `image` with `source_type`) and Anthropic-native blocks
//!   (`image`, `document`, `thinking`, …) are kept; others are dropped and
//!   reported. `cache_control` members are removed from blocks.
//!
//! Calls: a list per model call gives one call per list sending its
//! messages — except that a list ending with an `ai` message is read as the
//! state after the call, whose last message is the reply (the call sends the
//! rest and takes its usage from it). Lists extend a trace when the trace's
//! latest list is a prefix of theirs; otherwise they start a new trace. A
//! single final list gives one call per `ai` message, sending everything
//! before it (a list with no `ai` message gives one call sending it all).
//! Markers found in per-call lists become that call's markers.
//!
//! Usage, when an `ai` message has it: `response_metadata.usage` (Anthropic
//! fields, or OpenAI's `prompt_tokens`), `response_metadata.token_usage`
//! (OpenAI), else `usage_metadata` (LangChain's totals: uncached input =
//! `input_tokens` − `cache_read` − the writes of `input_token_details`,
//! the writes being its `ephemeral_5m` + `ephemeral_1h` split when given,
//! else `cache_creation`, which langchain-anthropic zeroes when it gives
//! the split). The model comes from
//! `response_metadata.model_name` / `model`; the provider is OpenAI for
//! `gpt-*` / `o1`… / `chatgpt-*` models, Google for `gemini-*`, else
//! Anthropic.
//!
//! # Where the reading is
//!
//! This module reads a file into lists and makes calls of the lists (the
//! two rules above: a list per call, or one final list). How one list's
//! messages map to Anthropic shapes is `messages`, and the usage and model
//! a reply carries is `usage`: the mapping is most of the code and changes
//! with LangChain's message formats, which the calls do not.

mod messages;
mod usage;

use std::path::{Path, PathBuf};

use serde_json::value::RawValue;

use self::messages::GENERATED_IDS;
pub(crate) use self::messages::map_list;
pub(crate) use self::usage::reply_meta;
use super::common::{
    self, Conversations, Doc, IdGen, NewCall, TraceBuilder, Unmapped, message_key, position_of,
    read_text, split_doc,
};
use super::{ImportError, ImportOptions, ImportResult, ImportSummary};
use tracecost_engine::cache::ProviderKind;
use tracecost_engine::wire::{BlockRef, Marker};
use tracecost_trace::{Call, Prompt};

/// Imports LangChain / LangGraph message lists (`messages_to_dict` output).
/// Directories are expanded to their `.json`/`.jsonl` files; files are read
/// in path order.
pub fn import(inputs: &[PathBuf], opts: &ImportOptions) -> Result<ImportResult, ImportError> {
    super::InputFormat::Langchain.import(inputs, opts)
}

/// What [`super::InputFormat::Langchain`] reads, for the loop every log importer
/// shares ([`common::import_files`]).
pub(crate) const LOG: common::LogFormat = common::LogFormat {
    unit: "call(s)",
    nothing_found: "LangChain message lists",
    read,
    first: None,
    csv: false,
};

fn read(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
    _shared: &mut common::Shared,
) -> Result<(Vec<TraceBuilder>, String), ImportError> {
    let (builders, kind) = import_file(path, opts, report, un)?;
    Ok((
        builders,
        format!("LangChain messages {} ({kind})", common::file_name(path)),
    ))
}

/// One list with the line it starts at.
struct List<'a> {
    line: usize,
    items: Vec<&'a RawValue>,
}

fn import_file(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
) -> Result<(Vec<TraceBuilder>, &'static str), ImportError> {
    let text = read_text(path, opts, report)?;
    let Some(doc) = split_doc(path, &text, opts, report)? else {
        return Ok((Vec::new(), ""));
    };
    let bad = |part: &str, msg: &str| {
        let (line, col) = position_of(&text, part);
        common::invalid(path, line, Some(col), msg)
    };
    match doc {
        Doc::Whole(v) => {
            let Some(items) = list_items(v) else {
                return Err(bad(
                    v.get(),
                    "expected a list of LangChain messages, a list of such lists, or {\"messages\": [...]}",
                ));
            };
            let (line, _) = position_of(&text, v.get());
            let nested = items.first().is_some_and(|i| i.get().starts_with('['));
            if !nested {
                let b = final_list(&List { line, items }, un);
                return Ok((b.into_iter().collect(), "final list"));
            }
            let mut lists = Vec::with_capacity(items.len());
            for item in items {
                match serde_json::from_str::<Vec<&RawValue>>(item.get()) {
                    Ok(inner) => lists.push(List {
                        line: position_of(&text, item.get()).0,
                        items: inner,
                    }),
                    Err(_) => {
                        common::reject(
                            opts,
                            report,
                            bad(item.get(), "expected a list of messages"),
                        )?;
                    }
                }
            }
            Ok((per_call_lists(&lists, un), "one list per call"))
        }
        Doc::Lines(lines) => {
            let mut lists = Vec::with_capacity(lines.len());
            for (line, l) in lines {
                match serde_json::from_str::<&RawValue>(l) {
                    Err(e) => {
                        common::reject(opts, report, common::invalid_json(path, line, &e))?;
                    }
                    Ok(v) => match list_items(v) {
                        Some(items) => lists.push(List { line, items }),
                        None => {
                            let err = common::invalid(
                                path,
                                line,
                                Some(1),
                                "expected a list of LangChain messages",
                            );
                            common::reject(opts, report, err)?;
                        }
                    },
                }
            }
            Ok((per_call_lists(&lists, un), "one list per call"))
        }
    }
}

/// The items of a JSON list, or of a `{"messages": [...]}` object.
fn list_items(v: &RawValue) -> Option<Vec<&RawValue>> {
    let text = v.get();
    if text.starts_with('[') {
        return serde_json::from_str(text).ok();
    }
    if text.starts_with('{') {
        #[derive(serde::Deserialize)]
        struct State<'a> {
            #[serde(borrow)]
            messages: Option<&'a RawValue>,
        }
        let s: State<'_> = serde_json::from_str(text).ok()?;
        return serde_json::from_str(s.messages?.get()).ok();
    }
    None
}

fn per_call_lists(lists: &[List<'_>], un: &mut Unmapped) -> Vec<TraceBuilder> {
    let mut convs = Conversations::default();
    let mut ids = IdGen::new(GENERATED_IDS);
    for list in lists {
        let mapped = map_list(&list.items, &mut ids, un);
        if mapped.messages.is_empty() {
            un.add("empty message lists (no call)", 1);
            continue;
        }
        let len = mapped.messages.len();
        let n = if mapped.ends_with_ai { len - 1 } else { len };
        if n == 0 {
            un.add("lists holding only a model reply (no call)", 1);
            continue;
        }
        let (usage, model) = match (mapped.ends_with_ai, mapped.meta.last()) {
            (true, Some(Some(meta))) => (meta.usage, meta.model.clone()),
            _ => (None, None),
        };
        let mut markers: Vec<Marker> = mapped
            .markers
            .iter()
            .copied()
            .filter(|m| !matches!(m.at, BlockRef::Message { message, .. } if message >= n))
            .collect();
        un.add(
            "cache_control markers on the reply of a per-call list (dropped)",
            mapped.markers.len() - markers.len(),
        );
        common::cap_markers(&mut markers, un);
        let provider = provider_of(&mapped.models);
        let keys = mapped.messages.iter().map(message_key).collect();
        let call = Call {
            cleared: Vec::new(),
            compacted: None,
            messages: n,
            start_ms: None,
            model,
            prompt: 0,
            markers: (!markers.is_empty()).then_some(markers),
            usage: usage.map(Box::new),
        };
        let req = NewCall {
            messages: mapped.messages,
            keys,
            meta: mapped.meta,
            prompt: Prompt {
                system: mapped.system,
                tools: Vec::new(),
            },
        };
        convs.add(provider, list.line, req, call, None);
    }
    let mut builders = convs.builders;
    // A call whose list did not hold its reply takes usage and model from
    // the reply found in the history right after its messages.
    for b in &mut builders {
        for c in &mut b.calls {
            if c.usage.is_some() || c.model.is_some() {
                continue;
            }
            if let Some(Some(meta)) = b.meta.get(c.messages) {
                c.usage = meta.usage.map(Box::new);
                c.model = meta.model.clone();
            }
        }
    }
    builders
}

fn final_list(list: &List<'_>, un: &mut Unmapped) -> Option<TraceBuilder> {
    let mut ids = IdGen::new(GENERATED_IDS);
    let mapped = map_list(&list.items, &mut ids, un);
    if mapped.messages.is_empty() {
        un.add("empty message lists (no call)", 1);
        return None;
    }
    un.add(
        "cache_control markers in a final list (dropped: which call carried them is unknown)",
        mapped.markers.len(),
    );
    let mut b = TraceBuilder::new(provider_of(&mapped.models), list.line);
    let prompt = b.prompt_index(Prompt {
        system: mapped.system,
        tools: Vec::new(),
    });
    let mut calls = Vec::new();
    let mut first_ai_alone = 0;
    for (i, meta) in mapped.meta.iter().enumerate() {
        let Some(meta) = meta else { continue };
        if i == 0 {
            first_ai_alone += 1;
            continue;
        }
        calls.push(Call {
            cleared: Vec::new(),
            compacted: None,
            messages: i,
            start_ms: None,
            model: meta.model.clone(),
            prompt,
            markers: None,
            usage: meta.usage.map(Box::new),
        });
    }
    un.add(
        "ai messages with nothing before them (no call)",
        first_ai_alone,
    );
    if calls.is_empty() {
        calls.push(Call {
            messages: mapped.messages.len(),
            prompt,
            ..Call::default()
        });
    }
    b.calls = calls;
    b.messages = mapped.messages;
    b.meta = mapped.meta;
    Some(b)
}

fn provider_of(models: &[String]) -> ProviderKind {
    models
        .first()
        .and_then(|m| common::provider_of_model(m))
        .unwrap_or(ProviderKind::Anthropic)
}

//! A long coding-agent session generated from a seed: the agent explores a
//! Rust repository, edits it, runs tests, reads issues and documentation,
//! and answers the user's follow-up requests.
//!
//! This module holds what the rest of the crate sets a session up with:
//! the models, the [`SessionSpec`] and the compaction thresholds. The
//! session itself is made in three layers, one module or more each:
//!
//! - the agent's plan ([`plan`]): its state and the steps it decides on for
//!   each request, and what it and the user write ([`prose`]);
//! - the tools: the input of each call the plan makes ([`tool_calls`]) and
//!   the text the tools return ([`outputs`]), made of the project's files,
//!   prose and code ([`project_text`]);
//! - the call driver ([`driver`]): it runs the plan call by call, times it,
//!   compacts before the window and cuts the history into traces, under a
//!   prompt shared by sessions of one project, model and day ([`prompt`]).
//!
//! Everything is read from the data files under `data/session/`
//! ([`corpus`]).

mod corpus;
mod driver;
mod names;
mod outputs;
mod plan;
mod project_text;
mod prompt;
mod prose;
mod tool_calls;

pub(crate) use driver::build;
pub(crate) use prompt::{PromptCache, project_names};

/// 2025-10-07T09:12:00Z, when the first call of a standalone session
/// started.
pub(crate) const START_MS: u64 = 1_759_828_320_000;

/// A model the generated agent runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AgentModel {
    /// The model id recorded in the trace.
    pub(crate) id: &'static str,
    /// How the system prompt names it.
    pub(crate) display: &'static str,
    /// Tokens the model accepts per request (input): a request over it is
    /// refused, so the agent compacts before it gets there.
    pub(crate) window_tokens: u64,
}

/// A model with the standard 200K-token window, as every model the
/// generator uses has (Sonnet 4.5's 1M window is an opt-in beta with
/// premium prices, which coding agents do not default to).
const fn with_200k_window(id: &'static str, display: &'static str) -> AgentModel {
    AgentModel {
        id,
        display,
        window_tokens: 200_000,
    }
}

/// Claude Sonnet 4.5.
pub(crate) const SONNET_4_5: AgentModel =
    with_200k_window("claude-sonnet-4-5-20250929", "Sonnet 4.5");
/// Claude Opus 4.1.
pub(crate) const OPUS_4_1: AgentModel = with_200k_window("claude-opus-4-1-20250805", "Opus 4.1");
/// Claude Opus 4.5.
pub(crate) const OPUS_4_5: AgentModel = with_200k_window("claude-opus-4-5-20251101", "Opus 4.5");
/// Claude Haiku 4.5.
pub(crate) const HAIKU_4_5: AgentModel = with_200k_window("claude-haiku-4-5-20251001", "Haiku 4.5");

/// The generator's token estimate: characters of the compact JSON per
/// token. Claude's tokenizer is not public; `o200k_base` counts 3.4 to 3.7
/// characters per token on this generator's text (code, logs, JSON), so 3
/// overestimates and the agent compacts a little early rather than late.
pub(crate) const CHARS_PER_TOKEN_ESTIMATE: u64 = 3;

/// The agent compacts once the next request would exceed this share of its
/// window (percent), as Claude Code's auto-compact does near 80%.
pub(crate) const COMPACT_AT_PCT: u64 = 80;

/// No request is sent above this share of the window (percent): when the
/// results of the next step would take the history past it, the agent
/// compacts before that step instead of after.
pub(crate) const HARD_LIMIT_PCT: u64 = 95;

/// One session to generate: what a fleet varies between sessions.
#[derive(Debug, Clone)]
pub(crate) struct SessionSpec {
    /// Model calls in all, compaction calls included (at least 1).
    pub(crate) calls: usize,
    /// Seed of everything random in the session.
    pub(crate) seed: u64,
    /// Name of the first part; later parts add `-part2`, `-part3`, ….
    pub(crate) name: String,
    /// Index into the projects of `data/session/projects.json` (taken
    /// modulo their number).
    pub(crate) project: usize,
    /// The model of every call.
    pub(crate) model: AgentModel,
    /// When the first call starts (ms since the Unix epoch).
    pub(crate) start_ms: u64,
    /// Whether the agent compacts before its window; without, the history
    /// grows without bound (a stress fixture, not a possible bill).
    pub(crate) compacts: bool,
    /// The account of every part (whose prompt cache they share with the
    /// account's other sessions).
    pub(crate) account: String,
    /// How to regenerate it, quoted in the description.
    pub(crate) origin: String,
}

/// The account of a generated session, and of every session of a fleet in
/// one account: one team, one provider account.
pub const FLEET_ACCOUNT: &str = "generated-team";

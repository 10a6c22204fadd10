//! The importers' integration tests, one binary (`cargo test -p
//! tracecost-import`): each module was a test file of its own. Their
//! fixtures are the workspace's, in `tests/fixtures/` at its root, and
//! this crate's own (Codex rollouts, Responses API logs) in
//! `tests/fixtures/` here.

mod import_bedrock;
mod import_claude_code;
mod import_codex;
mod import_formats;
mod import_gemini;
mod import_otel;
mod import_responses;
mod input_loader;
mod malformed_usage;
mod not_utf8;
mod observability;
mod served_modifiers;
mod usage_codex;
mod usage_iterations;

//! Reports: every printed view in each of its formats (see [`export`]),
//! and the HTML report with its charts.
//!
//! This crate owns how results are shown and written; it reads the
//! application's typed results and must not depend on the importers, the
//! generators (a dev-dependency only) or the command line (tests/cli/crates.rs
//! at the workspace root holds its dependencies to a list).

pub mod build;
pub mod check;
pub mod charts;
pub mod explain_view;
pub mod export;
pub mod fidelity_view;
pub mod fmt;
pub mod models_view;
pub mod replay_view;
pub mod stability_view;
pub mod sweep_view;
pub mod totals_view;
pub mod usage_period_view;
pub mod usage_view;

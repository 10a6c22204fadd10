//! Reports: every printed view in each of its formats (see [`export`]),
//! and the HTML report with its charts.

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
pub mod usage_view;

//! Reports: exporters for every output format, fed plain result data.
//! Exporters return text; writing files is the caller's job.

pub mod build;
pub mod check;
pub mod charts;
pub mod fmt;
pub mod models_view;
pub mod replay_view;
pub mod stability_view;
pub mod sweep_view;
pub mod usage_view;

//! The pipelines — replay, sweep, report, check, stability, usage, import,
//! recall — as library functions over typed plans. A plan is built once,
//! before anything runs (every trace loaded, every policy resolved and
//! checked against every trace, every model priced), and a pipeline turns
//! it into typed results. The command line parses its flags into a plan,
//! calls one pipeline and renders what it returns; nothing here knows there
//! is a command line.
//!
//! This crate owns the pipelines and their plans and results; it is the
//! only layer that calls the importers, and it must not depend on the
//! report or the command line (tests/cli/crates.rs at the workspace root holds
//! its dependencies to a list).

use tracecost_trace::progress;

mod error;
pub mod limits;
pub mod fidelity;
pub mod fleet;
pub mod fleet_cache;
pub mod identity;
mod outline;
mod plan;
pub mod baseline;
mod date;
mod digest;
mod pipelines;
mod resolve;
pub mod spill;
pub mod store;
mod results;
pub mod totals;
pub mod unpriced;
pub mod usage;
pub mod usage_days;
pub mod usage_period;
pub mod usage_period_codex;

pub use error::{AppError, ErrorClass};
pub use outline::{OutlineRecord, OutlineShared, Outlines, SharedStrings, TraceHead, TraceOutline};
pub use pipelines::{
    CacheUse, CheckOutcome, FleetReport, ImportReport, RecallAnswer, SessionSink, StabilityReport,
    check, import, ledger_repair, recall, replay, report, report_with, stability, stability_digest,
    sweep, usage,
};
pub use plan::{
    CacheScope, CalibrationChoice, CheckPlan, CostPlan, ImportPlan, InputError, InputLoader,
    InputOptions, Loaded, RecallPlan, ReplayPlan, ReportPlan, SkippedSummary, StabilityPlan,
    SweepPlan, TraceRun, UsagePlan, calibration_model, input_paths, load_traces, segments,
};
pub use resolve::{
    SweepOptions, default_replay_config, grid_configs, status_quos, takes_recorded_ttl,
};
pub use results::{ReplayReport, Savings, TraceReport};

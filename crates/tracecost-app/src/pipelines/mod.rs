//! The pipelines, one file each: every one takes a plan and returns typed
//! results. What several of them share is in `shared`.

mod check;
mod import;
mod ledger;
mod recall;
mod replay;
mod report;
mod shared;
mod stability;
mod sweep;
mod usage;

pub use check::{CheckOutcome, check};
pub use import::{ImportReport, import};
pub use ledger::ledger_repair;
pub use recall::{RecallAnswer, recall};
pub use replay::replay;
pub use report::{CacheUse, FleetReport, SessionSink, report, report_with};
pub use stability::{StabilityReport, stability, stability_digest};
pub use sweep::sweep;
pub use usage::usage;

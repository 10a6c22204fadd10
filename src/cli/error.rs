//! The one error enum at the binary's edge.

use crate::engine::ledger::LedgerError;
use crate::policy::ConfigError;
use crate::trace::TraceError;
use crate::trace::import::ImportError;

/// A check ran and found a problem (regression, instability).
pub const EXIT_FAILED: u8 = 1;
/// Bad input or usage.
pub const EXIT_INPUT: u8 = 2;
/// A bug in tracecost.
pub const EXIT_INTERNAL: u8 = 70;

/// Everything a command can fail with, each mapped to an exit code.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A trace file is unreadable or invalid.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// An import failed.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// A config string or policy flag is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The ledger's storage failed.
    #[error("ledger: {0}")]
    Ledger(#[from] LedgerError),
    /// A replay could not run.
    #[error(transparent)]
    Replay(#[from] crate::replay::ReplayError),
    /// A price table problem (unknown model, bad pricing file).
    #[error(transparent)]
    Pricing(#[from] crate::cost::pricing::PricingError),
    /// A malformed baseline file.
    #[error("{path}: {message}")]
    Baseline {
        /// The file.
        path: String,
        /// What is wrong, with the place.
        message: String,
    },
    /// Bad usage not caught by the argument parser.
    #[error("{0}")]
    Usage(String),
    /// An output file could not be written.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

impl CliError {
    /// The documented exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Trace(_)
            | CliError::Import(_)
            | CliError::Config(_)
            | CliError::Ledger(_)
            | CliError::Usage(_)
            | CliError::Baseline { .. }
            | CliError::Replay(_)
            | CliError::Pricing(_)
            | CliError::Write { .. } => EXIT_INPUT,
        }
    }
}

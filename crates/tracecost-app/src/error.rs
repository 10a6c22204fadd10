//! The pipelines' one error type, and the class of each failure (what the
//! binary turns into an exit code).

use tracecost_engine::ledger::LedgerError;
use tracecost_import::ImportError;
use tracecost_import::inputs::InputError;
use tracecost_policy::{ConfigError, FlagError};
use tracecost_trace::TraceError;

/// Everything a pipeline can fail with.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// A trace file is unreadable or invalid.
    #[error(transparent)]
    Trace(#[from] TraceError),
    /// An import failed.
    #[error(transparent)]
    Import(#[from] ImportError),
    /// A config string is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A policy option does not apply to the policy chosen.
    #[error(transparent)]
    Flag(#[from] FlagError),
    /// The ledger's storage failed (I/O: exit 69), or what it holds cannot
    /// answer (a result recorded twice under one id: bad input, exit 2).
    #[error("ledger: {0}")]
    Ledger(#[from] LedgerError),
    /// A durable ledger's files are damaged (an index line, a payload):
    /// bad input the user can fix, so the message says how.
    #[error(
        "ledger: {source}; `tracecost ledger repair {dir}` keeps every intact record and sets the damaged ones aside"
    )]
    LedgerDamaged {
        /// The ledger directory, as given.
        dir: String,
        /// What is damaged, with the file and the line.
        source: LedgerError,
    },
    /// A config cannot apply to a trace, or a replay could not run.
    #[error(transparent)]
    Replay(#[from] tracecost_replay::ReplayError),
    /// A price table problem (unknown model, bad pricing file).
    #[error(transparent)]
    Pricing(#[from] tracecost_cost::pricing::PricingError),
    /// A malformed baseline file.
    #[error("{path}: {message}")]
    Baseline {
        /// The file.
        path: String,
        /// What is wrong, with the place.
        message: String,
    },
    /// A bad combination of options, or an input that names nothing.
    #[error("{0}")]
    Usage(String),
    /// A chart could not be drawn.
    #[error("chart: {0}")]
    Chart(String),
    /// An output file could not be written.
    #[error("{path}: cannot write: {source}")]
    Write {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Something the machine should provide is missing or failed (a
    /// program to run, a directory to read).
    #[error("{0}")]
    Environment(String),
    /// Something tracecost itself got wrong (a bug): what it expected.
    #[error("internal error: {0}")]
    Internal(String),
}

/// What kind of failure an error is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The user's input or options are wrong; fixing them fixes it.
    Input,
    /// Output could not be written or produced.
    Output,
    /// The machine failed: storage, a program to run.
    Environment,
    /// A bug in tracecost.
    Internal,
}

impl AppError {
    /// The class of this failure.
    pub fn class(&self) -> ErrorClass {
        match self {
            // The temporary file of a sweep's per-call costs: storage
            // that fails, like the report's other temporary files.
            AppError::Replay(tracecost_replay::ReplayError::Spill { .. }) => {
                ErrorClass::Environment
            }
            AppError::Trace(_)
            | AppError::Import(_)
            | AppError::Config(_)
            | AppError::Flag(_)
            | AppError::Replay(_)
            | AppError::Pricing(_)
            | AppError::Baseline { .. }
            | AppError::Usage(_) => ErrorClass::Input,
            // Damaged files and ambiguous ids are the user's to fix; only
            // storage that fails (I/O) is the environment's.
            AppError::Ledger(
                LedgerError::Corrupt { .. }
                | LedgerError::AmbiguousCallId { .. }
                | LedgerError::MemIdConflict { .. },
            )
            | AppError::LedgerDamaged { .. } => ErrorClass::Input,
            AppError::Ledger(LedgerError::Io { .. }) | AppError::Environment(_) => {
                ErrorClass::Environment
            }
            AppError::Chart(_) | AppError::Write { .. } => ErrorClass::Output,
            AppError::Internal(_) => ErrorClass::Internal,
        }
    }
}

/// Inputs that could not be read are the error they were before input
/// discovery had a crate of its own: a trace, an import or a usage error.
impl From<InputError> for AppError {
    fn from(e: InputError) -> Self {
        match e {
            InputError::Trace(e) => AppError::Trace(e),
            InputError::Import(e) => AppError::Import(e),
            InputError::Unusable(message) => AppError::Usage(message),
        }
    }
}

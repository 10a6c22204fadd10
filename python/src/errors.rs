//! The exception classes the package raises, and which of them each of the
//! library's errors becomes (the message is always the library's own).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

use tracecost::app::{AppError, ErrorClass};

create_exception!(
    tracecost,
    TracecostError,
    PyException,
    "Base of every error tracecost raises; the message is the command line's."
);
create_exception!(
    tracecost,
    InputError,
    TracecostError,
    "Bad input: a trace, log or file that cannot be read, named with the place (the command line's exit code 2)."
);
create_exception!(
    tracecost,
    ConfigError,
    InputError,
    "A config string, grid or option that does not parse or cannot apply to a trace, or a model with no price."
);
create_exception!(
    tracecost,
    LedgerError,
    TracecostError,
    "The ledger's storage failed (a durable ledger's directory)."
);

/// The Python exception for one of the library's errors, with the message
/// the command line prints. Anything a pipeline would wrap in an `AppError`
/// comes here, so that each (a ledger's failure too, "ledger: " and all) is
/// classed and worded the way the command line does it.
pub(crate) fn app_err(e: impl Into<AppError>) -> PyErr {
    let e = e.into();
    let msg = e.to_string();
    match &e {
        AppError::Config(_) | AppError::Flag(_) | AppError::Pricing(_) | AppError::Replay(_) => {
            ConfigError::new_err(msg)
        }
        AppError::Ledger(_) | AppError::LedgerDamaged { .. } => LedgerError::new_err(msg),
        _ => match e.class() {
            ErrorClass::Input => InputError::new_err(msg),
            ErrorClass::Output | ErrorClass::Environment | ErrorClass::Internal => {
                TracecostError::new_err(msg)
            }
        },
    }
}

pub(crate) fn config_err(msg: impl std::fmt::Display) -> PyErr {
    ConfigError::new_err(msg.to_string())
}

pub(crate) fn input_err(msg: impl std::fmt::Display) -> PyErr {
    InputError::new_err(msg.to_string())
}

//! What a load gives and how it fails.

use std::fmt;

use crate::Trace;

/// Why a trace file could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Not JSON, or a value of the wrong type.
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser expected.
        message: String,
    },
    /// Well-formed JSON that is not a valid trace.
    #[error("{path}: at {pointer}: {message}")]
    Invalid {
        /// The file.
        path: String,
        /// JSON pointer to the offending value.
        pointer: String,
        /// What was expected.
        message: String,
    },
}

/// Something suspicious that did not stop the load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// The file.
    pub path: String,
    /// JSON pointer to the value.
    pub pointer: String,
    /// What is odd about it.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: at {}: {}", self.path, self.pointer, self.message)
    }
}

/// The traces of one file, and the warnings raised while loading them.
#[derive(Debug, Clone)]
pub struct LoadedTraces {
    /// The traces, in file order.
    pub traces: Vec<Trace>,
    /// Warnings, in file order.
    pub warnings: Vec<Warning>,
}

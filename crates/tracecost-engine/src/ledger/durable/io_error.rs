//! A ledger file's I/O failure as a [`LedgerError`] naming the file: shared
//! by the store, the index reader and the repair.

use std::io;
use std::path::Path;

use crate::ledger::LedgerError;

pub(super) fn display(path: &Path) -> String {
    path.display().to_string()
}

pub(super) fn io_err(path: &Path) -> impl FnOnce(io::Error) -> LedgerError + '_ {
    move |source| LedgerError::Io {
        path: display(path),
        source,
    }
}

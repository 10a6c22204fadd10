//! What the modules share: the workspace's fixtures.

use std::path::{Path, PathBuf};

/// A file or folder under the workspace's `tests/fixtures/`.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(rel)
}

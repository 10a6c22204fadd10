//! What the modules share: the workspace's files.

use std::path::{Path, PathBuf};

/// A file of the workspace (a bundled trace, a fixture), from its root.
pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

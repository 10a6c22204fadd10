//! Whether the real session corpora the tests compare against are beside
//! the checkout: when they are not (a fresh clone), the tests that need
//! them are compiled as ignored, with that reason, so that `cargo test`
//! lists them as not run instead of reporting them passed.

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(shared_corpus)");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    if corpus.is_dir() {
        println!("cargo::rustc-cfg=shared_corpus");
        // Looked at again when the corpora change or go.
        println!("cargo::rerun-if-changed={}", corpus.display());
    } else {
        // A path that does not exist cannot be watched without running this
        // on every build: corpora added later are seen once this file
        // changes (`touch build.rs`).
        println!("cargo::rerun-if-changed=build.rs");
    }
}

//! The crate graph is the layer order: each library crate's normal
//! dependencies are held to a list, read from Cargo's own view of the
//! workspace (`cargo metadata`). A module cannot name a crate its manifest
//! does not list, so a layer reaching past its place (the replay reading an
//! importer's constant, a generator calling an importer, the report showing
//! an importer's type) does not compile, and widening a list fails here. The engine must stay embeddable: an agent
//! framework that depends on it must not pull in the command line's
//! dependencies (clap, the chart renderer, the tokenizers, rayon).

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;

/// Each library crate, in layer order, with what it may depend on.
const LAYERS: [(&str, &[&str]); 9] = [
    (
        "tracecost-engine",
        &["serde", "serde_json", "sha2", "thiserror"],
    ),
    (
        "tracecost-trace",
        &[
            "tracecost-engine",
            "serde",
            "serde_json",
            "thiserror",
            "memchr",
            "sha2",
        ],
    ),
    (
        "tracecost-import",
        &[
            "tracecost-engine",
            "tracecost-trace",
            "serde",
            "serde_json",
            "thiserror",
            "memchr",
            "rayon",
            "walkdir",
            "libc",
        ],
    ),
    (
        "tracecost-gen",
        &[
            "tracecost-engine",
            "tracecost-trace",
            "serde",
            "serde_json",
            "thiserror",
        ],
    ),
    (
        "tracecost-policy",
        &[
            "tracecost-engine",
            "tracecost-trace",
            "serde",
            "serde_json",
            "thiserror",
            "hashbrown",
        ],
    ),
    // Counting, caching and pricing need no trace and no policy.
    (
        "tracecost-cost",
        &[
            "tracecost-engine",
            "serde",
            "serde_json",
            "sha2",
            "thiserror",
            "tiktoken-rs",
            "bpe-openai",
            "regex-automata",
            "rayon",
            "rustc-hash",
        ],
    ),
    // The replay reads traces, never how they were imported or generated.
    (
        "tracecost-replay",
        &[
            "tracecost-engine",
            "tracecost-trace",
            "tracecost-policy",
            "tracecost-cost",
            "serde",
            "serde_json",
            "sha2",
            "thiserror",
            "rayon",
            "memchr",
        ],
    ),
    // The only layer that calls the importers (and the generators).
    (
        "tracecost-app",
        &[
            "tracecost-engine",
            "tracecost-trace",
            "tracecost-import",
            "tracecost-gen",
            "tracecost-policy",
            "tracecost-cost",
            "tracecost-replay",
            "serde",
            "serde_json",
            "sha2",
            "thiserror",
            "rayon",
            "rmp-serde",
        ],
    ),
    // The report shows the application's results: no importer, no
    // generator, not even the trace model directly.
    (
        "tracecost-report",
        &[
            "tracecost-engine",
            "tracecost-policy",
            "tracecost-cost",
            "tracecost-replay",
            "tracecost-app",
            "serde",
            "serde_json",
            "thiserror",
            "resvg",
            "ttf-parser",
            "png",
        ],
    ),
];

/// The packages above the libraries: the command line (with the library's
/// paths re-exported) and the Python package; they may depend on any.
const TOP: [&str; 2] = ["tracecost", "tracecost-python"];

/// The workspace's packages as Cargo sees them.
fn packages() -> Vec<Value> {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: Value = serde_json::from_slice(&out.stdout).expect("cargo metadata's JSON");
    meta["packages"].as_array().expect("a package list").clone()
}

/// A package's normal dependencies (on any target), by package name: a
/// renamed dependency is named by what it is.
fn normal_dependencies(package: &Value) -> BTreeSet<String> {
    package["dependencies"]
        .as_array()
        .expect("a dependency list")
        .iter()
        .filter(|d| d["kind"].is_null())
        .map(|d| d["name"].as_str().expect("a name").to_owned())
        .collect()
}

#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let packages = packages();
    let mut problems = Vec::new();
    for (name, allowed) in LAYERS {
        let Some(package) = packages.iter().find(|p| p["name"] == name) else {
            problems.push(format!("{name}: not in the workspace"));
            continue;
        };
        let deps = normal_dependencies(package);
        // The check found the list at all: an empty set passes vacuously.
        if !deps.contains("serde_json") {
            problems.push(format!("{name}: no dependencies found ({deps:?})"));
        }
        for extra in deps.iter().filter(|d| !allowed.contains(&d.as_str())) {
            problems.push(format!("{name} depends on {extra}, beyond {allowed:?}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_crate_of_the_workspace_has_its_place_in_the_order() {
    let listed: BTreeSet<&str> = LAYERS.iter().map(|(n, _)| *n).chain(TOP).collect();
    let unplaced: Vec<String> = packages()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .filter(|n| !listed.contains(n.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "crates with no place in tests/cli/crates.rs: {unplaced:?}"
    );
}

#[test]
fn no_library_crate_depends_on_a_later_one() {
    // What the lists above allow must itself follow the order, so that a
    // list cannot be widened into a cycle of layers.
    for (level, (name, allowed)) in LAYERS.iter().enumerate() {
        for later in LAYERS[level..].iter().map(|(n, _)| *n).chain(TOP) {
            assert!(
                !allowed.contains(&later),
                "{name} may depend on {later}, which comes at or after it"
            );
        }
    }
}

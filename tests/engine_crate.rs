//! The engine crate stays embeddable: an agent framework that depends on
//! `tracecost-engine` must not pull in the command line's dependencies
//! (clap, the chart renderer, the tokenizers, rayon). Its manifest may name only these.

use std::collections::BTreeSet;

const ALLOWED: [&str; 4] = ["serde", "serde_json", "sha2", "thiserror"];

/// The dependency names a manifest's normal dependency tables declare:
/// `[dependencies]`, `[dependencies.NAME]` and their `[target.….]` forms.
/// A renamed dependency (`x = { package = "y" }`) is reported by both
/// names, so a rename cannot hide a crate. Line-based: enough for a
/// manifest this project writes, and it needs no TOML parser.
fn normal_dependencies(manifest: &str) -> BTreeSet<String> {
    /// Where a line sits.
    enum Table {
        /// `[dependencies]`: each key names a dependency.
        List,
        /// `[dependencies.NAME]`: the keys describe one dependency.
        One,
        /// Anything else.
        Other,
    }
    let mut names = BTreeSet::new();
    let mut table = Table::Other;
    for line in manifest.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if let Some(header) = line.strip_prefix('[') {
            let header = header.trim_end_matches(']').trim();
            let header = header.strip_prefix("target.").map_or(header, |rest| {
                // `target.'cfg(unix)'.dependencies`: skip the target.
                rest.rsplit_once("'.")
                    .or_else(|| rest.rsplit_once("\"."))
                    .or_else(|| rest.split_once('.'))
                    .map_or(rest, |(_, table)| table)
            });
            table = if header == "dependencies" {
                Table::List
            } else if let Some(name) = header.strip_prefix("dependencies.") {
                names.insert(unquote(name).to_owned());
                Table::One
            } else {
                Table::Other
            };
            continue;
        }
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        let key = key.trim();
        match table {
            Table::List => {
                // `sha2.workspace = true` declares `sha2`.
                names.insert(unquote(key.split('.').next().unwrap_or(key)).to_owned());
                if let Some((_, rest)) = value.split_once("package") {
                    names.insert(first_name(rest.trim_start_matches([' ', '='])));
                }
            }
            Table::One if key == "package" => {
                names.insert(first_name(value));
            }
            Table::One | Table::Other => {}
        }
    }
    names.remove("");
    names
}

fn unquote(s: &str) -> &str {
    s.trim().trim_matches(['"', '\''])
}

/// The crate name a quoted value starts with.
fn first_name(value: &str) -> String {
    value
        .trim_start()
        .trim_start_matches(['"', '\''])
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .collect()
}

#[test]
fn engine_depends_only_on_serde_serde_json_sha2_thiserror() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/tracecost-engine/Cargo.toml"
    );
    let manifest = std::fs::read_to_string(path).expect("the engine crate's manifest");
    let names = normal_dependencies(&manifest);
    let extra: Vec<&String> = names
        .iter()
        .filter(|n| !ALLOWED.contains(&n.as_str()))
        .collect();
    assert!(
        extra.is_empty(),
        "{path} depends on {extra:?} beyond {ALLOWED:?}"
    );
    // The parse found the table at all: an empty set would pass vacuously.
    assert!(
        names.contains("serde_json"),
        "no dependencies found in {path}: {names:?}"
    );
}

#[test]
fn the_check_sees_every_form_of_dependency() {
    let manifest = r#"
[package]
name = "x"
description = "package of things" # not a dependency

[dependencies]
serde = { workspace = true }
sha2.workspace = true
json = { package = "serde_json", version = "1" } # renamed
clap = "4"

[dev-dependencies]
tempfile = "3"

[dependencies.rayon]
version = "1"

[dependencies.tok]
package = "tiktoken-rs"

[target.'cfg(unix)'.dependencies]
libc = "0.2"

[target."cfg(windows)".dependencies.winapi]
version = "0.3"
"#;
    let names: Vec<String> = normal_dependencies(manifest).into_iter().collect();
    assert_eq!(
        names,
        [
            "clap",
            "json",
            "libc",
            "rayon",
            "serde",
            "serde_json",
            "sha2",
            "tiktoken-rs",
            "tok",
            "winapi"
        ]
    );
}

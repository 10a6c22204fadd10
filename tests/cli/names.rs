//! The naming rule of `docs/architecture.md` ("Names"): a type holding
//! what a step gave ends in `Result`, `Report`, `Figures`, `Summary`,
//! `Answer` or `Outcome` (an enum), never in `Output` or `Brief`; and one
//! type name means one thing across the workspace's sources.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::util::repo;

/// Type names two files of the workspace still both define. Each is
/// private to its importer or view, or names a shape a reader does not
/// confuse; a new double fails the test, and one made single must leave
/// this list.
const KNOWN_DOUBLES: [&str; 14] = [
    "Content",
    "Counts",
    "Exchange",
    "Headline",
    "Line",
    "Mapped",
    "Marker",
    "MessageCache",
    "PromptCache",
    "Range",
    "Request",
    "Scale",
    "UsageView",
    "Words",
];

/// One type definition: its kind (`struct`, `enum`, `trait`, `type`),
/// its name and where it is.
struct Definition {
    kind: String,
    name: String,
    place: String,
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Every `pub` or `pub(…)` struct, enum, trait and type alias defined in
/// the workspace's library and binary sources.
fn definitions() -> Vec<Definition> {
    let mut files = Vec::new();
    rust_files(&repo("src"), &mut files);
    let mut crates: Vec<PathBuf> = std::fs::read_dir(repo("crates"))
        .unwrap()
        .map(|e| e.unwrap().path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    crates.sort();
    for dir in crates {
        rust_files(&dir, &mut files);
    }
    let mut defs = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (i, line) in text.lines().enumerate() {
            if let Some((kind, name)) = defined(line) {
                defs.push(Definition {
                    kind: kind.to_owned(),
                    name: name.to_owned(),
                    place: format!("{}:{}", file.display(), i + 1),
                });
            }
        }
    }
    defs
}

/// The kind and name a line defines, if it defines a public type.
fn defined(line: &str) -> Option<(&str, &str)> {
    let rest = line.trim_start().strip_prefix("pub")?;
    let rest = match rest.strip_prefix('(') {
        Some(r) => &r[r.find(')')? + 1..],
        None => rest,
    };
    let mut words = rest.split_whitespace();
    let kind = words.next()?;
    if !matches!(kind, "struct" | "enum" | "trait" | "type") {
        return None;
    }
    let word = words.next()?;
    let end = word
        .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .unwrap_or(word.len());
    Some((kind, &word[..end]))
}

#[test]
fn result_types_end_in_one_of_the_six_words() {
    let defs = definitions();
    assert!(defs.len() > 100, "the scan found {} types", defs.len());
    let mut wrong = Vec::new();
    for d in &defs {
        if d.name.ends_with("Output") || d.name.ends_with("Brief") {
            wrong.push(format!("{} {}: no …Output or …Brief", d.place, d.name));
        }
        if d.name.ends_with("Outcome") && d.kind != "enum" {
            wrong.push(format!("{} {}: an …Outcome is an enum", d.place, d.name));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn one_type_name_means_one_thing() {
    let mut by_name: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in definitions() {
        by_name.entry(d.name).or_default().push(d.place);
    }
    let doubles: Vec<(&String, &Vec<String>)> = by_name
        .iter()
        .filter(|(_, places)| places.len() > 1)
        .collect();
    let new: Vec<String> = doubles
        .iter()
        .filter(|(name, _)| !KNOWN_DOUBLES.contains(&name.as_str()))
        .map(|(name, places)| format!("{name}: {}", places.join(", ")))
        .collect();
    assert!(new.is_empty(), "names defined twice:\n{}", new.join("\n"));
    let gone: Vec<&str> = KNOWN_DOUBLES
        .iter()
        .copied()
        .filter(|k| !doubles.iter().any(|(name, _)| name.as_str() == *k))
        .collect();
    assert!(
        gone.is_empty(),
        "no longer defined twice, leave KNOWN_DOUBLES: {gone:?}"
    );
}

#[test]
fn a_definition_line_is_read_with_its_visibility() {
    assert_eq!(
        defined("pub struct FleetAnswer {"),
        Some(("struct", "FleetAnswer"))
    );
    assert_eq!(
        defined("    pub(crate) enum Kind<'a> {"),
        Some(("enum", "Kind"))
    );
    assert_eq!(
        defined("pub type SummaryWriter<'a> = dyn Fn();"),
        Some(("type", "SummaryWriter"))
    );
    assert_eq!(defined("pub fn fleet() -> GeneratedFleet {"), None);
    assert_eq!(defined("struct Private;"), None);
}

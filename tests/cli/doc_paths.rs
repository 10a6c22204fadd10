//! Every path of the repository that `README.md`, `docs/` and the
//! manifests name exists: a file that moves takes its mentions with it.
//!
//! A path is a code span or a Markdown link target that starts with one of
//! the repository's top-level folders (`docs/x.md`, `crates/…/lib.rs`) or,
//! for a link, is relative to the document (`recall.md`). Spans with a
//! placeholder or a glob (`<`, `*`, `{`, `N`-style names are left alone)
//! name no single file.

use crate::util::repo;

/// The repository's top-level folders a path may start with.
const ROOTS: [&str; 10] = [
    "docs/",
    "crates/",
    "src/",
    "tests/",
    "python/",
    "benches/",
    "traces/",
    "examples/",
    "assets/",
    ".ci/",
];

/// The documents whose paths are checked, relative to the repository.
fn documents() -> Vec<String> {
    let mut docs = vec!["README.md".to_owned(), "Cargo.toml".to_owned()];
    for dir in ["docs", "crates"] {
        collect(&repo(dir), &mut docs);
    }
    docs.sort();
    docs
}

fn collect(dir: &std::path::Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() && name != "target" && name != "tests" && name != "src" {
            collect(&path, out);
        } else if name.ends_with(".md") || name == "Cargo.toml" {
            let rel = path.strip_prefix(repo("")).unwrap();
            out.push(rel.to_string_lossy().into_owned());
        }
    }
}

/// The candidate paths of `text`: code spans, link targets and, in TOML,
/// comment words.
fn mentions(text: &str) -> Vec<(String, bool)> {
    let mut found = Vec::new();
    for span in text.split('`').skip(1).step_by(2) {
        found.push((span.to_owned(), false));
    }
    for (i, _) in text.match_indices("](") {
        let rest = &text[i + 2..];
        if let Some(end) = rest.find(')') {
            found.push((rest[..end].to_owned(), true));
        }
    }
    for word in text.split_whitespace() {
        let word = word.trim_start_matches(['(', '"', '\'']);
        if ROOTS.iter().any(|r| word.starts_with(r)) {
            found.push((word.to_owned(), false));
        }
    }
    found
}

/// A Markdown document without its fenced code blocks, whose paths are
/// the user's examples (`traces/my-agent.json`), not the repository's.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The repository path a mention names, if it names one.
fn target(doc: &str, mention: &str, link: bool) -> Option<std::path::PathBuf> {
    let m = mention.trim_end_matches(['.', ',', ';', ':', ')', '"', '\'']);
    // `file.py::test_name` names a test in a file; `#anchor` a heading.
    let m = m.split(['#']).next().unwrap_or("");
    let m = m.split("::").next().unwrap_or("");
    if m.is_empty() || m.contains(['<', '*', '{', ' ', '|', '$', '…']) || m.contains("://") {
        return None;
    }
    if ROOTS.iter().any(|r| m.starts_with(r)) {
        // A crate's own documents name its paths from the crate's folder.
        let base = std::path::Path::new(doc).parent().unwrap();
        let local = repo("").join(base).join(m);
        return Some(if local.exists() { local } else { repo(m) });
    }
    if link && (m.ends_with(".md") || m.ends_with('/')) {
        let base = std::path::Path::new(doc).parent().unwrap();
        return Some(repo("").join(base).join(m));
    }
    None
}

#[test]
fn every_path_the_docs_name_exists() {
    let mut missing = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(repo(&doc)).unwrap();
        let text = if doc.ends_with(".md") {
            prose(&text)
        } else {
            text
        };
        for (mention, link) in mentions(&text) {
            if let Some(path) = target(&doc, &mention, link)
                && !path.exists()
            {
                missing.push(format!("{doc}: {mention}"));
            }
        }
    }
    missing.sort();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "paths named but absent:\n{}",
        missing.join("\n")
    );
}

#[test]
fn a_missing_path_is_caught() {
    assert!(target("docs/a.md", "docs/no-such-file.md", false).is_some_and(|p| !p.exists()));
    assert!(target("docs/a.md", "no-such.md", true).is_some_and(|p| !p.exists()));
    assert_eq!(target("README.md", "https://rustup.rs", true), None);
    assert_eq!(target("README.md", "crates/*/src", false), None);
}

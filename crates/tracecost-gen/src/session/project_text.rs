//! Text in the project's vocabulary: the project's files as a read
//! returns them (Cargo.toml, the docs, the CI workflow, Rust sources, each
//! stable per path and version), and the prose and code lines that those
//! files, the edits, web pages and the agent's answers are made of.

use super::corpus::{CI_YML, MANIFEST, Project, TEMPLATES, WORDS};
use super::names::camel;
use super::plan::Gen;
use crate::data::text_file;
use crate::rng::{Rng, fnv1a};
use crate::text::{fill, substitute};

impl Gen {
    /// The text of `path` after `version` edits: the same for the same
    /// path and version, whenever it is read.
    pub(super) fn file_content(&self, path: &str, version: u32) -> String {
        let mut r = self.rng.fork(&format!("file-{path}"));
        let size = match fnv1a(path) % 100 {
            0..=49 => r.range_usize(600, 4_000),
            50..=81 => r.range_usize(4_000, 16_000),
            82..=96 => r.range_usize(16_000, 45_000),
            _ => r.range_usize(60_000, 96_000),
        };
        let mut r = r.fork(&format!("v{version}"));
        let p = self.project;
        match path {
            "Cargo.toml" => cargo_toml(p),
            "README.md" | "CHANGELOG.md" | "docs/architecture.md" => {
                markdown_doc(&mut r, p, path, size.min(14_000))
            }
            // The workflow file ends with a line break.
            ".github/workflows/ci.yml" => {
                format!("{}\n", text_file(CI_YML).replace("{name}", p.name))
            }
            _ => rust_source(&mut r, p, path, size),
        }
    }
}

/// The project's manifest (`data/session/manifest.toml`) with one line per
/// dependency of the project.
fn cargo_toml(p: &Project) -> String {
    let deps: Vec<String> = p
        .deps
        .iter()
        .enumerate()
        .map(|(i, d)| {
            format!(
                "{d} = {{ version = \"{}.{}\", features = [\"full\"] }}",
                1 + i % 2,
                i * 3 % 17
            )
        })
        .collect();
    let manifest = substitute(
        text_file(MANIFEST),
        &[
            ("name", p.name),
            ("summary", p.summary),
            ("org", p.org),
            // Every project has dependencies (the corpus checks), so the
            // line of `{deps}` is never left empty.
            ("deps", &deps.join("\n")),
        ],
    );
    // The file ends with a line break.
    format!("{manifest}\n")
}

pub(super) fn prose_between(r: &mut Rng, p: &Project, lo: usize, hi: usize) -> String {
    let n = r.range_usize(lo, hi);
    prose(r, p, n)
}

pub(super) fn code_between(
    r: &mut Rng,
    p: &Project,
    lo: usize,
    hi: usize,
    indent: usize,
) -> String {
    let n = r.range_usize(lo, hi);
    code_lines(r, p, n, indent)
}

pub(super) fn prose(r: &mut Rng, p: &Project, min_chars: usize) -> String {
    let mut out = String::new();
    while out.len() < min_chars {
        if !out.is_empty() {
            out.push(' ');
        }
        let t = r.pick(&TEMPLATES.doc_sentences);
        out.push_str(&fill(
            r,
            t,
            &[
                ("n", &p.nouns),
                ("n2", &WORDS.nouns),
                ("n3", &p.nouns),
                ("v", &WORDS.verbs),
                ("v2", &WORDS.verbs),
                ("vs", &WORDS.verbs_third_person),
                ("st", &WORDS.states),
                ("st2", &WORDS.states),
            ],
        ));
    }
    out
}

fn markdown_doc(r: &mut Rng, p: &Project, path: &str, size: usize) -> String {
    let title = match path {
        "README.md" => format!("# {}\n\n{} — {}.\n\n[![CI](https://github.com/{}/{}/actions/workflows/ci.yml/badge.svg)](https://github.com/{}/{}/actions)\n", p.name, p.name, p.summary, p.org, p.name, p.org, p.name),
        "CHANGELOG.md" => "# Changelog\n\nAll notable changes to this project are documented here. The format follows Keep a Changelog.\n".to_owned(),
        _ => format!("# {} architecture\n", p.name),
    };
    let mut out = title;
    let mut minor: u32 = 4;
    while out.len() < size {
        if path == "CHANGELOG.md" {
            out.push_str(&format!(
                "\n## [0.{minor}.0] - 2025-0{}-1{}\n",
                1 + minor % 9,
                minor % 10
            ));
            minor = minor.saturating_sub(1).max(1);
            for _ in 0..r.range(3, 7) {
                out.push_str(&format!("- {}\n", prose(r, p, 40)));
            }
        } else {
            out.push_str(&format!(
                "\n## {}\n\n{}\n",
                camel(&[r.pick(&p.nouns), r.pick(&WORDS.nouns)]),
                prose_between(r, p, 300, 800)
            ));
            if r.chance(0.4) {
                out.push_str(&format!("\n```rust\n{}```\n", code_between(r, p, 4, 12, 0)));
            }
        }
    }
    out
}

/// `n` lines of plausible Rust statements indented by `indent` spaces.
pub(super) fn code_lines(r: &mut Rng, p: &Project, n: usize, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = String::new();
    for _ in 0..n {
        // `[[` and `]]` stand for literal braces (`{` is the placeholder mark).
        let t = r.pick(&TEMPLATES.code_lines);
        let tn = camel(&[r.pick(&p.nouns), r.pick(&WORDS.nouns)]);
        let num = r.range(100, 999).to_string();
        let line = fill(
            r,
            t,
            &[
                ("a", &p.nouns),
                ("b", &WORDS.nouns),
                ("c", &WORDS.nouns),
                ("v", &WORDS.verbs),
            ],
        )
        .replace("{T}", &tn)
        .replace("{num}", &num)
        .replace("[[", "{")
        .replace("]]", "}");
        out.push_str(&pad);
        out.push_str(&line);
        out.push('\n');
    }
    out
}

pub(super) fn rust_source(r: &mut Rng, p: &Project, _path: &str, target: usize) -> String {
    let mut out = format!("//! {}\n\n", prose(r, p, 60));
    for _ in 0..r.range(3, 8) {
        let dep = r.pick(&p.deps);
        out.push_str(&match r.range(0, 2) {
            0 => format!(
                "use crate::{}::{};\n",
                r.pick(&p.nouns),
                camel(&[r.pick(&p.nouns), r.pick(&WORDS.nouns)])
            ),
            1 => format!("use std::{};\n", r.pick(&WORDS.std_imports)),
            _ => format!(
                "use {}::{};\n",
                dep.replace('-', "_"),
                r.pick(&WORDS.crate_imports)
            ),
        });
    }
    out.push('\n');
    let test_budget = if target > 3_000 { target / 5 } else { 0 };
    while out.len() < target.saturating_sub(test_budget) {
        let n1 = r.pick(&p.nouns);
        let n2 = r.pick(&WORDS.nouns);
        let ty = camel(&[n1, n2]);
        match r.range(0, 4) {
            0 => {
                out.push_str(&format!(
                    "/// {}\n#[derive(Debug, Clone)]\npub struct {ty} {{\n",
                    prose(r, p, 40)
                ));
                for _ in 0..r.range(2, 7) {
                    out.push_str(&format!(
                        "    pub {}_{}: {},\n",
                        r.pick(&p.nouns),
                        r.pick(&WORDS.nouns),
                        r.pick(&WORDS.rust_types)
                    ));
                }
                out.push_str("}\n\n");
            }
            1 => {
                out.push_str(&format!(
                    "/// {}\n#[derive(Debug, thiserror::Error)]\npub enum {ty}Error {{\n",
                    prose(r, p, 40)
                ));
                for _ in 0..r.range(2, 5) {
                    let st = r.pick(&WORDS.states);
                    let v = camel(&[r.pick(&WORDS.nouns), st]);
                    out.push_str(&format!(
                        "    #[error(\"{} {st}\")]\n    {v},\n",
                        r.pick(&WORDS.nouns)
                    ));
                }
                out.push_str("}\n\n");
            }
            _ => {
                out.push_str(&format!("impl {ty} {{\n"));
                for _ in 0..r.range(1, 4) {
                    let v = r.pick(&WORDS.verbs);
                    let n = r.pick(&p.nouns);
                    out.push_str(&format!(
                        "    /// {}\n    pub async fn {v}_{n}(&self, {}: {}) -> Result<{}, Error> {{\n",
                        prose(r, p, 30),
                        r.pick(&WORDS.nouns),
                        r.pick(&WORDS.rust_types),
                        r.pick(&WORDS.rust_types)
                    ));
                    let body = r.range_usize(3, 16);
                    out.push_str(&code_lines(r, p, body, 8));
                    out.push_str("    }\n\n");
                }
                out.push_str("}\n\n");
            }
        }
    }
    if test_budget > 0 {
        out.push_str("#[cfg(test)]\nmod tests {\n    use super::*;\n\n");
        while out.len() < target {
            out.push_str(&format!(
                "    #[tokio::test]\n    async fn {}_{}_when_{}_{}() {{\n",
                r.pick(&WORDS.verbs),
                r.pick(&p.nouns),
                r.pick(&WORDS.adjectives),
                r.pick(&WORDS.nouns)
            ));
            let body = r.range_usize(3, 10);
            out.push_str(&code_lines(r, p, body, 8));
            out.push_str("    }\n\n");
        }
        out.push_str("}\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_contents_are_stable_per_path_and_version() {
        let g = Gen::new(5);
        let a = g.file_content("src/lib.rs", 0);
        assert_eq!(a, g.file_content("src/lib.rs", 0));
        assert_ne!(a, g.file_content("src/lib.rs", 1));
        assert!(g.file_content("Cargo.toml", 0).starts_with("[package]"));
    }
}

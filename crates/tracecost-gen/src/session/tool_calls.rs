//! The input of each tool call the plan makes: the tool's name in the
//! manifest and its arguments, as the agent sends them.

use super::plan::{Act, Gen};
use super::project_text::{code_between, rust_source};
use crate::build::{J, obj};

impl Gen {
    pub(super) fn tool_input(&self, act: &Act) -> (&'static str, J) {
        let root = format!("/home/dev/{}", self.project.name);
        match act {
            Act::Read { path, window, .. } => {
                let mut o = obj([("file_path", format!("{root}/{path}").into())]);
                if let Some((off, lim)) = window {
                    o.push("offset", (*off).into());
                    o.push("limit", (*lim).into());
                }
                ("read_file", o)
            }
            Act::Grep {
                pattern,
                glob,
                files_only,
                ..
            } => ("grep", grep_input(pattern, glob.as_deref(), *files_only)),
            Act::List { pattern } => (
                "glob",
                obj([("pattern", pattern.as_str().into()), ("path", root.into())]),
            ),
            Act::Edit { path, .. } => (
                "edit_file",
                obj([("file_path", format!("{root}/{path}").into())]),
            ),
            Act::Write { path } => (
                "write_file",
                obj([("file_path", format!("{root}/{path}").into())]),
            ),
            Act::Test {
                filter, verbose, ..
            } => {
                let cmd = test_command(filter.as_deref(), *verbose);
                (
                    "bash",
                    obj([
                        ("command", cmd.into()),
                        ("description", "Run the test suite".into()),
                        ("timeout", J::Int(300_000)),
                    ]),
                )
            }
            Act::Check { clippy, .. } => {
                let cmd = if *clippy {
                    "cargo clippy --all-targets -- -D warnings"
                } else {
                    "cargo build"
                };
                (
                    "bash",
                    obj([
                        ("command", cmd.into()),
                        ("description", "Check lints".into()),
                    ]),
                )
            }
            Act::Git { diff } => {
                let cmd = if *diff { "git diff" } else { "git status" };
                (
                    "bash",
                    obj([
                        ("command", cmd.into()),
                        ("description", "Show working tree changes".into()),
                    ]),
                )
            }
            Act::Search { query } => ("web_search", obj([("query", query.as_str().into())])),
            Act::Fetch { url } => (
                "web_fetch",
                obj([
                    ("url", url.as_str().into()),
                    (
                        "prompt",
                        "Extract the parts relevant to our question, with code examples.".into(),
                    ),
                ]),
            ),
            Act::Api { kind, number } => {
                let url = self.api_url(*kind, *number);
                (
                    "http_request",
                    obj([
                        ("method", "GET".into()),
                        ("url", url.into()),
                        ("headers", obj([("Accept", "application/json".into())])),
                    ]),
                )
            }
            Act::Todo { items } => ("todo_write", todo_input(items)),
        }
    }

    /// The URL of the API the call reads: an issue's comments, the CI runs
    /// or a dependency's versions, by `kind` as `api_json` answers it.
    fn api_url(&self, kind: usize, number: u64) -> String {
        let p = self.project;
        match kind {
            0 => format!(
                "https://api.github.com/repos/{}/{}/issues/{number}/comments?per_page=100",
                p.org, p.name
            ),
            1 => format!(
                "https://api.github.com/repos/{}/{}/actions/runs?branch=main&per_page=20",
                p.org, p.name
            ),
            _ => format!("https://crates.io/api/v1/crates/{}/versions", p.deps[1]),
        }
    }

    /// The input of an edit (old and new code) and of a write (the file).
    pub(super) fn edit_input(&mut self, act: &Act) -> Option<J> {
        let root = format!("/home/dev/{}", self.project.name);
        match act {
            Act::Edit { path, .. } => {
                let mut r = self.sub("edit");
                let old = code_between(&mut r, self.project, 3, 14, 8);
                let mut new = old.clone();
                new.push_str(&code_between(&mut r, self.project, 2, 20, 8));
                Some(obj([
                    ("file_path", format!("{root}/{path}").into()),
                    ("old_string", old.into()),
                    ("new_string", new.into()),
                ]))
            }
            Act::Write { path } => {
                let mut r = self.sub("write");
                let size = r.range_usize(1500, 5000);
                Some(obj([
                    ("file_path", format!("{root}/{path}").into()),
                    (
                        "content",
                        rust_source(&mut r, self.project, path, size).into(),
                    ),
                ]))
            }
            _ => None,
        }
    }
}

/// A grep's input: line numbers only when it prints matching lines.
fn grep_input(pattern: &str, glob: Option<&str>, files_only: bool) -> J {
    let mut o = obj([("pattern", pattern.into())]);
    if let Some(g) = glob {
        o.push("glob", g.into());
    }
    let mode = if files_only {
        "files_with_matches"
    } else {
        "content"
    };
    o.push("output_mode", mode.into());
    if !files_only {
        o.push("-n", true.into());
    }
    o
}

/// The test command: a filter narrows it, a verbose run logs and shows
/// the tests' output.
fn test_command(filter: Option<&str>, verbose: bool) -> String {
    let mut cmd = "cargo test".to_owned();
    if let Some(f) = filter {
        cmd.push(' ');
        cmd.push_str(f);
    }
    if verbose {
        cmd = format!("RUST_LOG=debug {cmd} -- --nocapture");
    }
    cmd
}

/// A todo list's input, each item with its status and its active form.
fn todo_input(items: &[(String, &'static str)]) -> J {
    obj([(
        "todos",
        J::Arr(
            items
                .iter()
                .map(|(c, s)| {
                    obj([
                        ("content", c.as_str().into()),
                        ("status", (*s).into()),
                        (
                            "activeForm",
                            format!("Working on: {}", c.to_lowercase()).into(),
                        ),
                    ])
                })
                .collect(),
        ),
    )])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::corpus::TOOLS;

    #[test]
    fn every_tool_the_agent_calls_is_in_the_manifest() {
        let g = Gen::new(1);
        let acts = [
            Act::Read {
                path: "a".into(),
                window: None,
                missing: false,
            },
            Act::Grep {
                pattern: "p".into(),
                glob: None,
                broad: false,
                files_only: false,
            },
            Act::List {
                pattern: "*".into(),
            },
            Act::Edit {
                path: "a".into(),
                fail: false,
            },
            Act::Write { path: "a".into() },
            Act::Test {
                filter: None,
                pass: true,
                verbose: false,
            },
            Act::Check {
                clippy: true,
                errors: false,
            },
            Act::Git { diff: true },
            Act::Search { query: "q".into() },
            Act::Fetch { url: "u".into() },
            Act::Api { kind: 0, number: 1 },
            Act::Todo { items: vec![] },
        ];
        for act in &acts {
            let (name, _) = g.tool_input(act);
            assert!(TOOLS.iter().any(|t| t.name() == name), "{name}");
        }
    }
}

//! The data files a session is written from (`data/session/`): the
//! projects, the word lists and templates, the tool manifest, the agent's
//! instructions and the texts of a compaction. Each is loaded once, on
//! first use.

use std::sync::LazyLock;

use crate::data::{DataError, checked, json_records, key_and_text, list_file, loaded, tool_defs};
use tracecost_engine::message::ToolDefinition;

/// A repository the session works in (`data/session/projects.json`); the
/// seed picks one.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Project<'a> {
    pub(super) name: &'a str,
    pub(super) krate: &'a str,
    pub(super) org: &'a str,
    pub(super) summary: &'a str,
    #[serde(borrow)]
    pub(super) files: Vec<&'a str>,
    #[serde(borrow)]
    pub(super) deps: Vec<&'a str>,
    /// Nouns of the project's domain, mixed with the general [`Words::nouns`].
    #[serde(borrow)]
    pub(super) nouns: Vec<&'a str>,
}

impl Project<'static> {
    fn load() -> Result<Vec<Self>, DataError> {
        const FILE: &str = "session/projects.json";
        let projects: Vec<Self> =
            json_records(FILE, include_str!("../data/session/projects.json"))?;
        // What the generator indexes or picks from without a fallback.
        let complete = |p: &Self| {
            p.deps.len() >= 2
                && !p.nouns.is_empty()
                && p.files.iter().any(|f| f.starts_with("tests/"))
                && p.files
                    .iter()
                    .any(|f| f.starts_with("src/") && !f.ends_with("main.rs"))
        };
        let problem = if projects.is_empty() {
            Some("no projects".to_owned())
        } else {
            projects.iter().find(|p| !complete(p)).map(|p| {
                format!(
                    "project {:?} needs two deps, nouns, a test file and a library source file",
                    p.name
                )
            })
        };
        checked(FILE, projects, problem)
    }
}

list_file! {
    /// Word lists (`data/session/words.txt`).
    pub(super) struct Words = "session/words.txt" {
        nouns,
        verbs,
        verbs_third_person,
        states,
        rust_types,
        adjectives,
        /// Files every project has besides its own list.
        extra_files,
        broad_grep_patterns,
        glob_patterns,
        search_concerns,
        research_topics,
        request_topics,
        /// How a follow-up request may start (it may also start with none).
        openers,
        test_file_kinds,
        blog_hosts,
        std_imports,
        crate_imports,
        log_levels,
        /// `lint: message` (see [`Words::lint_messages`]).
        clippy_lints,
        search_title_kinds,
        search_sources,
        search_hosts,
        age_units,
        github_logins,
        author_associations,
    }
}

impl Words {
    /// The clippy lints as `(lint name, message)`.
    fn lint_messages(&self) -> Result<Vec<(&'static str, &'static str)>, DataError> {
        self.clippy_lints
            .iter()
            .map(|entry| key_and_text("session/words.txt", entry))
            .collect()
    }
}

list_file! {
    /// Templates with `{name}` placeholders (`data/session/templates.txt`).
    pub(super) struct Templates = "session/templates.txt" {
        bugfix_requests,
        feature_requests,
        research_requests,
        ci_requests,
        question_requests,
        doc_sentences,
        /// Rust statements; `[[` and `]]` stand for literal braces (`{` is
        /// the placeholder mark).
        code_lines,
        /// Conventions in the project notes of the system prompt.
        note_rules,
    }
}

pub(super) static PROJECTS: LazyLock<Vec<Project<'static>>> =
    LazyLock::new(|| loaded(Project::load()));
pub(super) static WORDS: LazyLock<Words> = LazyLock::new(|| loaded(Words::load()));
pub(super) static TEMPLATES: LazyLock<Templates> = LazyLock::new(|| loaded(Templates::load()));
pub(super) static CLIPPY_LINTS: LazyLock<Vec<(&str, &str)>> =
    LazyLock::new(|| loaded(WORDS.lint_messages()));
pub(super) static TOOLS: LazyLock<Vec<ToolDefinition>> = LazyLock::new(|| {
    loaded(tool_defs(
        "session/tools.json",
        include_str!("../data/session/tools.json"),
    ))
});

/// The agent's instructions (`data/session/system_prompt.md`); the recorded
/// prompt ends with a line break, which [`super::prompt`] adds.
pub(super) const SYSTEM_PROMPT: &str = include_str!("../data/session/system_prompt.md");

/// The project's CI workflow (`data/session/ci.yml`); `{name}` is the
/// project name.
pub(super) const CI_YML: &str = include_str!("../data/session/ci.yml");

/// The project's `Cargo.toml` (`data/session/manifest.toml`); `{name}`,
/// `{summary}` and `{org}` are the project's, `{deps}` its dependency lines.
pub(super) const MANIFEST: &str = include_str!("../data/session/manifest.toml");

/// What Claude Code-like agents send to compact: the whole conversation
/// plus this request (`data/session/compact_request.md`).
pub(super) const COMPACT_REQUEST: &str = include_str!("../data/session/compact_request.md");

/// The first message after a compaction (`data/session/compact_continuation.md`);
/// `{summary}` is the summary the compaction call wrote.
pub(super) const COMPACT_CONTINUATION: &str =
    include_str!("../data/session/compact_continuation.md");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::text_file;
    use crate::text::placeholders;

    #[test]
    fn data_files_load() {
        let projects = Project::load().unwrap();
        // The seed picks a project by position: the bundled trace relies on
        // the order.
        let names: Vec<&str> = projects.iter().map(|p| p.name).collect();
        assert_eq!(names, ["orbit-sched", "tessera", "ledgerline"]);
        let words = Words::load().unwrap();
        let lints = words.lint_messages().unwrap();
        assert_eq!(lints[0], ("redundant_clone", "redundant clone"));
        Templates::load().unwrap();
        let tools = tool_defs(
            "session/tools.json",
            include_str!("../data/session/tools.json"),
        );
        assert_eq!(tools.unwrap().len(), 10);
        let instructions = text_file(SYSTEM_PROMPT);
        assert!(instructions.starts_with("You are") && !instructions.ends_with('\n'));
        assert!(text_file(CI_YML).starts_with("name: CI") && CI_YML.contains("{name}"));
    }

    #[test]
    fn templates_use_only_the_placeholders_the_code_fills() {
        let t = Templates::load().unwrap();
        let request: &[&str] = &[
            "fn", "focus", "type", "test", "issue", "n", "n2", "st", "adj", "dep", "topic",
        ];
        let groups: [(&[&str], &[&str]); 8] = [
            (&t.bugfix_requests, request),
            (&t.feature_requests, request),
            (&t.research_requests, request),
            (&t.ci_requests, request),
            (&t.question_requests, request),
            (
                &t.doc_sentences,
                &["n", "n2", "n3", "v", "v2", "vs", "st", "st2"],
            ),
            (&t.code_lines, &["a", "b", "c", "v", "T", "num"]),
            (&t.note_rules, &["V", "v", "n", "n2", "st"]),
        ];
        for (templates, known) in groups {
            for template in templates {
                for key in placeholders(template) {
                    assert!(known.contains(&key), "{{{key}}} in {template:?}");
                }
            }
        }
    }
}

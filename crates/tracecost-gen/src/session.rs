//! A long coding-agent session generated from a seed: the agent explores a
//! Rust repository, edits it, runs tests, reads issues and documentation,
//! and answers the user's follow-up requests.

use std::collections::{BTreeMap, VecDeque};
use std::sync::LazyLock;

use super::build::{J, assistant, fit, obj, strs, text, tool_result, tool_use, user, user_text};
use super::data::{
    DataError, checked, json_records, key_and_text, list_file, loaded, text_file, tool_defs,
};
use super::rng::{Rng, fnv1a};
use super::text::{date, fill, rfc3339, rfc3339_millis};
use super::{SESSION_PREFIX_CHARS, messages_chars, prefix_chars};
use crate::engine::cache::ProviderKind;
use crate::engine::message::{ContentBlock, Message, ToolDefinition};
use crate::trace::{Call, Prompt, RecordedUsage, Trace};

/// 2025-10-07T09:12:00Z, when the first call of a standalone session
/// started.
pub(crate) const START_MS: u64 = 1_759_828_320_000;

/// A model the generated agent runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AgentModel {
    /// The model id recorded in the trace.
    pub(crate) id: &'static str,
    /// How the system prompt names it.
    pub(crate) display: &'static str,
    /// Tokens the model accepts per request (input): a request over it is
    /// refused, so the agent compacts before it gets there.
    pub(crate) window_tokens: u64,
}

/// A model with the standard 200K-token window, as every model the
/// generator uses has (Sonnet 4.5's 1M window is an opt-in beta with
/// premium prices, which coding agents do not default to).
const fn with_200k_window(id: &'static str, display: &'static str) -> AgentModel {
    AgentModel {
        id,
        display,
        window_tokens: 200_000,
    }
}

/// Claude Sonnet 4.5.
pub(crate) const SONNET_4_5: AgentModel =
    with_200k_window("claude-sonnet-4-5-20250929", "Sonnet 4.5");
/// Claude Opus 4.1.
pub(crate) const OPUS_4_1: AgentModel = with_200k_window("claude-opus-4-1-20250805", "Opus 4.1");
/// Claude Opus 4.5.
pub(crate) const OPUS_4_5: AgentModel = with_200k_window("claude-opus-4-5-20251101", "Opus 4.5");
/// Claude Haiku 4.5.
pub(crate) const HAIKU_4_5: AgentModel = with_200k_window("claude-haiku-4-5-20251001", "Haiku 4.5");

/// The generator's token estimate: characters of the compact JSON per
/// token. Claude's tokenizer is not public; `o200k_base` counts 3.4 to 3.7
/// characters per token on this generator's text (code, logs, JSON), so 3
/// overestimates and the agent compacts a little early rather than late.
pub(crate) const CHARS_PER_TOKEN_ESTIMATE: u64 = 3;

/// The agent compacts once the next request would exceed this share of its
/// window (percent), as Claude Code's auto-compact does near 80%.
pub(crate) const COMPACT_AT_PCT: u64 = 80;

/// No request is sent above this share of the window (percent): when the
/// results of the next step would take the history past it, the agent
/// compacts before that step instead of after.
pub(crate) const HARD_LIMIT_PCT: u64 = 95;

/// One session to generate: what a fleet varies between sessions.
#[derive(Debug, Clone)]
pub(crate) struct SessionSpec {
    /// Model calls in all, compaction calls included (at least 1).
    pub(crate) calls: usize,
    /// Seed of everything random in the session.
    pub(crate) seed: u64,
    /// Name of the first part; later parts add `-part2`, `-part3`, ….
    pub(crate) name: String,
    /// Index into the projects of `data/session/projects.json` (taken
    /// modulo their number).
    pub(crate) project: usize,
    /// The model of every call.
    pub(crate) model: AgentModel,
    /// When the first call starts (ms since the Unix epoch).
    pub(crate) start_ms: u64,
    /// Whether the agent compacts before its window; without, the history
    /// grows without bound (a stress fixture, not a possible bill).
    pub(crate) compacts: bool,
    /// How to regenerate it, quoted in the description.
    pub(crate) origin: String,
}

/// The account of generated sessions: one team, one provider account.
pub const FLEET_ACCOUNT: &str = "generated-team";

/// A repository the session works in (`data/session/projects.json`); the
/// seed picks one.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Project<'a> {
    name: &'a str,
    krate: &'a str,
    org: &'a str,
    summary: &'a str,
    #[serde(borrow)]
    files: Vec<&'a str>,
    #[serde(borrow)]
    deps: Vec<&'a str>,
    /// Nouns of the project's domain, mixed with the general [`Words::nouns`].
    #[serde(borrow)]
    nouns: Vec<&'a str>,
}

impl Project<'static> {
    fn load() -> Result<Vec<Self>, DataError> {
        const FILE: &str = "session/projects.json";
        let projects: Vec<Self> = json_records(FILE, include_str!("data/session/projects.json"))?;
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
    struct Words = "session/words.txt" {
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
    struct Templates = "session/templates.txt" {
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

static PROJECTS: LazyLock<Vec<Project<'static>>> = LazyLock::new(|| loaded(Project::load()));
static WORDS: LazyLock<Words> = LazyLock::new(|| loaded(Words::load()));
static TEMPLATES: LazyLock<Templates> = LazyLock::new(|| loaded(Templates::load()));
static CLIPPY_LINTS: LazyLock<Vec<(&str, &str)>> = LazyLock::new(|| loaded(WORDS.lint_messages()));
static TOOLS: LazyLock<Vec<ToolDefinition>> = LazyLock::new(|| {
    loaded(tool_defs(
        "session/tools.json",
        include_str!("data/session/tools.json"),
    ))
});

/// The agent's instructions (`data/session/system_prompt.md`); the recorded
/// prompt ends with a line break, which [`prompt`] adds.
const SYSTEM_PROMPT: &str = include_str!("data/session/system_prompt.md");

/// The project's CI workflow (`data/session/ci.yml`); `{name}` is the
/// project name.
const CI_YML: &str = include_str!("data/session/ci.yml");

fn camel(words: &[&str]) -> String {
    words
        .iter()
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

fn module_of(path: &str) -> String {
    let p = path.trim_start_matches("src/").trim_end_matches(".rs");
    let p = p.trim_end_matches("/mod");
    p.replace('/', "::")
}

/// What the session's tools are asked to do.
#[derive(Debug, Clone)]
enum Act {
    Read {
        path: String,
        window: Option<(usize, usize)>,
        missing: bool,
    },
    Grep {
        pattern: String,
        glob: Option<String>,
        broad: bool,
        files_only: bool,
    },
    List {
        pattern: String,
    },
    Edit {
        path: String,
        fail: bool,
    },
    Write {
        path: String,
    },
    Test {
        filter: Option<String>,
        pass: bool,
        verbose: bool,
    },
    Check {
        clippy: bool,
        errors: bool,
    },
    Git {
        diff: bool,
    },
    Search {
        query: String,
    },
    Fetch {
        url: String,
    },
    Api {
        kind: usize,
        number: u64,
    },
    Todo {
        items: Vec<(String, &'static str)>,
    },
}

enum Step {
    Tools(Option<String>, Vec<Act>),
    Reply(String),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bugfix,
    Feature,
    Research,
    Ci,
    Question,
}

struct Gen {
    rng: Rng,
    project: &'static Project<'static>,
    versions: BTreeMap<String, u32>,
    issue: u64,
    fn_name: String,
    type_name: String,
    focus: String,
    test_name: String,
    tests_total: usize,
    counter: u64,
}

impl Gen {
    #[cfg(test)]
    fn new(seed: u64) -> Self {
        Self::with_project(seed, (seed % PROJECTS.len() as u64) as usize)
    }

    fn with_project(seed: u64, project: usize) -> Self {
        let rng = Rng::new(seed ^ 0x5e55_1011_c0de_0000);
        let project = &PROJECTS[project % PROJECTS.len()];
        let mut g = Self {
            rng,
            project,
            versions: BTreeMap::new(),
            issue: 0,
            fn_name: String::new(),
            type_name: String::new(),
            focus: String::new(),
            test_name: String::new(),
            tests_total: 0,
            counter: 0,
        };
        g.tests_total = g.rng.range_usize(140, 320);
        g.new_focus();
        g
    }

    fn sub(&mut self, label: &str) -> Rng {
        self.counter += 1;
        self.rng.fork(&format!("{label}-{}", self.counter))
    }

    fn noun(&mut self) -> &'static str {
        if self.rng.chance(0.6) {
            self.rng.pick(&self.project.nouns)
        } else {
            self.rng.pick(&WORDS.nouns)
        }
    }

    fn source_file(&mut self) -> String {
        self.rng.pick(&self.project.files).to_owned()
    }

    fn new_focus(&mut self) {
        let n = self.noun();
        let v = self.rng.pick(&WORDS.verbs);
        let n2 = self.noun();
        self.fn_name = format!("{v}_{n}");
        self.type_name = camel(&[n, n2]);
        let srcs: Vec<&str> = self
            .project
            .files
            .iter()
            .copied()
            .filter(|f| f.starts_with("src/") && !f.ends_with("main.rs"))
            .collect();
        self.focus = (self.rng.pick(&srcs)).to_owned();
        let adj = self.rng.pick(&WORDS.adjectives);
        let n3 = self.noun();
        self.test_name = format!("{}::tests::{v}_{n}_with_{adj}_{n3}", module_of(&self.focus));
        self.issue = self.rng.range(180, 960);
    }

    // ------------------------------------------------------------ planning

    fn explore_act(&mut self) -> Act {
        match self.rng.range(0, 9) {
            0..=3 => {
                let path = if self.rng.chance(0.45) {
                    self.focus.clone()
                } else {
                    self.source_file()
                };
                let window = self.rng.chance(0.12).then(|| {
                    let off = self.rng.range_usize(1, 40) * 10;
                    (off, 120 + self.rng.range_usize(0, 8) * 20)
                });
                Act::Read {
                    path,
                    window,
                    missing: self.rng.chance(0.03),
                }
            }
            4..=6 => {
                let pattern = match self.rng.range(0, 3) {
                    0 => format!("fn {}", self.fn_name),
                    1 => self.type_name.clone(),
                    2 => format!("{}\\(", self.fn_name),
                    _ => format!("{}::", self.type_name),
                };
                let broad = self.rng.chance(0.07);
                let pattern = if broad {
                    self.rng.pick(&WORDS.broad_grep_patterns).to_owned()
                } else {
                    pattern
                };
                let glob = self.rng.chance(0.5).then(|| "*.rs".to_owned());
                Act::Grep {
                    pattern,
                    glob,
                    broad,
                    files_only: self.rng.chance(0.2),
                }
            }
            7 => Act::List {
                pattern: self.rng.pick(&WORDS.glob_patterns).to_owned(),
            },
            8 if self.rng.chance(0.4) => Act::Api {
                kind: 0,
                number: self.issue,
            },
            _ => {
                if self.rng.chance(0.5) {
                    Act::Git {
                        diff: self.rng.chance(0.5),
                    }
                } else {
                    Act::Read {
                        path: (self.rng.pick(&WORDS.extra_files)).to_owned(),
                        window: None,
                        missing: false,
                    }
                }
            }
        }
    }

    fn explore_step(&mut self, parallel_p: f64) -> Step {
        let n = if self.rng.chance(parallel_p) {
            self.rng.range_usize(2, 3)
        } else {
            1
        };
        let acts: Vec<Act> = (0..n).map(|_| self.explore_act()).collect();
        let lead = self.lead(&acts);
        Step::Tools(lead, acts)
    }

    fn lead(&mut self, acts: &[Act]) -> Option<String> {
        if !self.rng.chance(0.65) {
            return None;
        }
        let s = match &acts[0] {
            _ if acts.len() > 1 => format!(
                "Let me look at {} things in parallel.",
                if acts.len() == 2 { "two" } else { "three" }
            ),
            Act::Read { path, .. } => format!("Let me read `{path}`."),
            Act::Grep { pattern, .. } => {
                format!("I'll search for `{pattern}` to see where it is used.")
            }
            Act::List { .. } => "Let me get an overview of the source tree.".to_owned(),
            Act::Edit { path, .. } => format!("Now I'll update `{path}`."),
            Act::Write { path } => format!("I'll add a regression test in `{path}`."),
            Act::Test { pass: _, .. } => "Let me run the tests.".to_owned(),
            Act::Check { clippy: true, .. } => {
                "Running clippy to make sure the change is lint-clean.".to_owned()
            }
            Act::Check { .. } => "Let me check that everything compiles.".to_owned(),
            Act::Git { diff: true } => "Let me review the diff so far.".to_owned(),
            Act::Git { .. } => "Checking the working tree state.".to_owned(),
            Act::Search { .. } => "Let me check how others handle this.".to_owned(),
            Act::Fetch { .. } => "This looks relevant; fetching the page.".to_owned(),
            Act::Api { .. } => format!("Let me read issue #{} for the details.", self.issue),
            Act::Todo { .. } => "I'll track the steps in a todo list.".to_owned(),
        };
        Some(s)
    }

    fn tools_step(&mut self, acts: Vec<Act>) -> Step {
        let lead = self.lead(&acts);
        Step::Tools(lead, acts)
    }

    fn todo_step(&mut self) -> Step {
        let v = self.rng.pick(&WORDS.verbs);
        let (n1, n2, st) = (self.noun(), self.noun(), self.rng.pick(&WORDS.states));
        let items = vec![
            (
                format!("Reproduce the problem in `{}`", self.fn_name),
                "in_progress",
            ),
            (format!("Find where the {n1} is {st}"), "pending"),
            (
                format!("Fix `{}` and {v} the {n2}", self.fn_name),
                "pending",
            ),
            (
                format!(
                    "Add a regression test `{}`",
                    self.test_name.rsplit("::").next().unwrap_or("regression")
                ),
                "pending",
            ),
            ("Run cargo test and clippy".to_owned(), "pending"),
        ];
        self.tools_step(vec![Act::Todo { items }])
    }

    fn plan(&mut self, kind: Kind, first: bool) -> VecDeque<Step> {
        let mut plan = VecDeque::new();
        if first {
            plan.push_back(self.tools_step(vec![
                Act::List {
                    pattern: "**/*".to_owned(),
                },
                Act::Read {
                    path: "README.md".to_owned(),
                    window: None,
                    missing: false,
                },
                Act::Read {
                    path: "Cargo.toml".to_owned(),
                    window: None,
                    missing: false,
                },
            ]));
        }
        match kind {
            Kind::Bugfix | Kind::Feature => {
                if self.rng.chance(0.5) {
                    plan.push_back(self.todo_step());
                }
                if kind == Kind::Bugfix && self.rng.chance(0.5) {
                    let number = self.issue;
                    plan.push_back(self.tools_step(vec![Act::Api { kind: 0, number }]));
                }
                for _ in 0..self.rng.range(2, 6) {
                    plan.push_back(self.explore_step(0.2));
                }
                if self.rng.chance(0.15) {
                    let q = format!(
                        "rust {} {} {}",
                        self.project.deps[0],
                        self.noun(),
                        self.rng.pick(&WORDS.search_concerns)
                    );
                    plan.push_back(self.tools_step(vec![Act::Search { query: q }]));
                    let url = self.doc_url();
                    plan.push_back(self.tools_step(vec![Act::Fetch { url }]));
                }
                let edits = self.rng.range(1, if kind == Kind::Feature { 5 } else { 3 });
                for _ in 0..edits {
                    let path = if self.rng.chance(0.6) {
                        self.focus.clone()
                    } else {
                        self.source_file()
                    };
                    let fail = self.rng.chance(0.06);
                    plan.push_back(self.tools_step(vec![Act::Edit { path, fail }]));
                }
                if self.rng.chance(0.5) {
                    let path = self.test_file();
                    plan.push_back(self.tools_step(vec![Act::Write { path }]));
                }
                let cycles = self.rng.range(1, 3);
                for c in 0..cycles {
                    let pass = c + 1 == cycles;
                    let filter = self.rng.chance(0.5).then(|| module_of(&self.focus));
                    let verbose = self.rng.chance(0.12);
                    plan.push_back(self.tools_step(vec![Act::Test {
                        filter,
                        pass,
                        verbose,
                    }]));
                    if !pass {
                        plan.push_back(self.explore_step(0.1));
                        let path = self.focus.clone();
                        plan.push_back(self.tools_step(vec![Act::Edit { path, fail: false }]));
                    }
                }
                if self.rng.chance(0.4) {
                    plan.push_back(self.tools_step(vec![Act::Check {
                        clippy: true,
                        errors: false,
                    }]));
                }
                if self.rng.chance(0.3) {
                    plan.push_back(self.tools_step(vec![Act::Git { diff: true }]));
                }
                let reply = self.summary(kind);
                plan.push_back(Step::Reply(reply));
            }
            Kind::Research => {
                let q = format!(
                    "{} {} {}",
                    self.project.deps[self.rng.range_usize(0, self.project.deps.len() - 1)],
                    self.noun(),
                    self.rng.pick(&WORDS.research_topics)
                );
                plan.push_back(self.tools_step(vec![Act::Search { query: q }]));
                let n = if self.rng.chance(0.35) { 2 } else { 1 };
                let acts: Vec<Act> = (0..n)
                    .map(|_| Act::Fetch {
                        url: self.doc_url(),
                    })
                    .collect();
                plan.push_back(self.tools_step(acts));
                if self.rng.chance(0.4) {
                    plan.push_back(self.explore_step(0.3));
                }
                let reply = self.explanation();
                plan.push_back(Step::Reply(reply));
            }
            Kind::Ci => {
                plan.push_back(self.tools_step(vec![Act::Api { kind: 1, number: 0 }]));
                plan.push_back(self.tools_step(vec![Act::Check {
                    clippy: true,
                    errors: true,
                }]));
                plan.push_back(self.explore_step(0.3));
                let path = self.focus.clone();
                plan.push_back(self.tools_step(vec![Act::Edit { path, fail: false }]));
                plan.push_back(self.tools_step(vec![Act::Check {
                    clippy: true,
                    errors: false,
                }]));
                plan.push_back(self.tools_step(vec![Act::Test {
                    filter: None,
                    pass: true,
                    verbose: false,
                }]));
                let reply = self.summary(Kind::Ci);
                plan.push_back(Step::Reply(reply));
            }
            Kind::Question => {
                for _ in 0..self.rng.range(1, 3) {
                    plan.push_back(self.explore_step(0.4));
                }
                if self.rng.chance(0.3) {
                    plan.push_back(self.tools_step(vec![Act::Api { kind: 2, number: 0 }]));
                }
                let reply = self.explanation();
                plan.push_back(Step::Reply(reply));
            }
        }
        plan
    }

    fn test_file(&mut self) -> String {
        let tests: Vec<&str> = self
            .project
            .files
            .iter()
            .copied()
            .filter(|f| f.starts_with("tests/"))
            .collect();
        if self.rng.chance(0.5) {
            format!(
                "tests/{}_{}.rs",
                self.noun(),
                self.rng.pick(&WORDS.test_file_kinds)
            )
        } else {
            (self.rng.pick(&tests)).to_owned()
        }
    }

    fn doc_url(&mut self) -> String {
        let dep = self.rng.pick(&self.project.deps);
        match self.rng.range(0, 3) {
            0 => format!(
                "https://docs.rs/{dep}/latest/{}/{}/index.html",
                dep.replace('-', "_"),
                self.noun()
            ),
            1 => format!(
                "https://github.com/{dep}-rs/{dep}/issues/{}",
                self.rng.range(1000, 7000)
            ),
            2 => format!(
                "https://users.rust-lang.org/t/{}-{}-with-{dep}/{}",
                self.rng.pick(&WORDS.verbs),
                self.noun(),
                self.rng.range(90_000, 130_000)
            ),
            _ => format!(
                "https://blog.{}.dev/posts/{}-{}-in-production",
                self.rng.pick(&WORDS.blog_hosts),
                self.rng.pick(&WORDS.verbs),
                self.noun()
            ),
        }
    }

    // ------------------------------------------------------------ prose

    fn task_text(&mut self, kind: Kind, first: bool) -> String {
        let p = self.project;
        let template = self.rng.pick(match kind {
            Kind::Bugfix => &TEMPLATES.bugfix_requests,
            Kind::Feature => &TEMPLATES.feature_requests,
            Kind::Research => &TEMPLATES.research_requests,
            Kind::Ci => &TEMPLATES.ci_requests,
            Kind::Question => &TEMPLATES.question_requests,
        });
        let issue = self.issue.to_string();
        let test = self.test_name.clone();
        let body = fill(
            &mut self.rng,
            template,
            &[
                ("fn", &[self.fn_name.as_str()]),
                ("focus", &[self.focus.as_str()]),
                ("type", &[self.type_name.as_str()]),
                ("test", &[test.as_str()]),
                ("issue", &[issue.as_str()]),
                ("n", &p.nouns),
                ("n2", &WORDS.nouns),
                ("st", &WORDS.states),
                ("adj", &WORDS.adjectives),
                ("dep", &p.deps),
                ("topic", &WORDS.request_topics),
            ],
        );
        if first {
            format!("I'm working on {} ({}). {body}", p.name, p.summary)
        } else {
            // As often as any one opener, the request starts without one.
            let openers: Vec<Option<&str>> = std::iter::once(None)
                .chain(WORDS.openers.iter().copied().map(Some))
                .collect();
            match self.rng.pick(&openers) {
                Some(opener) => format!("{opener} {body}"),
                None => body,
            }
        }
    }

    fn summary(&mut self, kind: Kind) -> String {
        let n = self.noun();
        let n2 = self.noun();
        let state = self.rng.pick(&WORDS.states);
        let tests = self.tests_total;
        self.tests_total += self.rng.range_usize(0, 3);
        let head = match kind {
            Kind::Bugfix => format!(
                "Fixed. The root cause was in `{}` (`{}`): when a {n} was {state} between the lookup and the update, the code kept using the {n2} it had read before the lock was taken, so it could return a stale value.\n\n**Changes**\n- `{}`: re-read the {n2} under the lock and bail out with `Error::{}` if it changed.\n- Added `{}` reproducing the race with two concurrent callers.\n",
                self.fn_name,
                self.focus,
                self.focus,
                camel(&[n, state]),
                self.test_name
            ),
            Kind::Feature => format!(
                "Done. `{}` now takes a configurable {n} limit.\n\n**Changes**\n- `Config` gains `{}_{n}_limit: Option<u32>` (default `None`, which keeps the current behaviour); values of 0 are rejected at startup with a clear error.\n- `{}`: enforces the limit and returns `Error::LimitExceeded` with the current count.\n- Tests for the default, a small limit and the validation error.\n",
                self.type_name,
                self.fn_name.split('_').next().unwrap_or("max"),
                self.focus
            ),
            _ => format!(
                "The clippy failures came from the new `{}` code: a needless clone of the {n} and a `match` that clippy wants as `if let`. Both are fixed in `{}`; no behaviour change.\n",
                self.fn_name, self.focus
            ),
        };
        format!(
            "{head}\nAll {tests} tests pass (`cargo test`) and `cargo clippy --all-targets -- -D warnings` is clean."
        )
    }

    fn explanation(&mut self) -> String {
        let mut r = self.sub("explain");
        let n = self.noun();
        let mut out = format!(
            "Short answer: it is mostly historical, and changing it is safe with one caveat about the {n}.\n\n"
        );
        for i in 0..r.range(2, 4) {
            out.push_str(&format!(
                "**{}. {}**\n",
                i + 1,
                camel(&[r.pick(&WORDS.verbs), r.pick(&WORDS.nouns)])
            ));
            out.push_str(&prose_between(&mut r, self.project, 250, 650));
            out.push_str("\n\n");
        }
        out.push_str("**Recommendation:** ");
        out.push_str(&prose(&mut r, self.project, 150));
        out.push_str("\n\nWant me to go ahead and make that change?");
        out
    }

    fn follow_up(&mut self) -> Kind {
        match self.rng.range(0, 99) {
            0..=29 => Kind::Bugfix,
            30..=54 => Kind::Feature,
            55..=69 => Kind::Research,
            70..=79 => Kind::Ci,
            _ => Kind::Question,
        }
    }

    // ------------------------------------------------------------ tools

    fn tool_input(&self, act: &Act) -> (&'static str, J) {
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
            } => {
                let mut o = obj([("pattern", pattern.as_str().into())]);
                if let Some(g) = glob {
                    o.push("glob", g.as_str().into());
                }
                o.push(
                    "output_mode",
                    if *files_only {
                        "files_with_matches"
                    } else {
                        "content"
                    }
                    .into(),
                );
                if !files_only {
                    o.push("-n", true.into());
                }
                ("grep", o)
            }
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
                let mut cmd = "cargo test".to_owned();
                if let Some(f) = filter {
                    cmd.push(' ');
                    cmd.push_str(f);
                }
                if *verbose {
                    cmd = format!("RUST_LOG=debug {cmd} -- --nocapture");
                }
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
                let url = match kind {
                    0 => format!(
                        "https://api.github.com/repos/{}/{}/issues/{number}/comments?per_page=100",
                        self.project.org, self.project.name
                    ),
                    1 => format!(
                        "https://api.github.com/repos/{}/{}/actions/runs?branch=main&per_page=20",
                        self.project.org, self.project.name
                    ),
                    _ => format!(
                        "https://crates.io/api/v1/crates/{}/versions",
                        self.project.deps[1]
                    ),
                };
                (
                    "http_request",
                    obj([
                        ("method", "GET".into()),
                        ("url", url.into()),
                        ("headers", obj([("Accept", "application/json".into())])),
                    ]),
                )
            }
            Act::Todo { items } => (
                "todo_write",
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
                )]),
            ),
        }
    }

    /// The input of an edit (old and new code) and of a write (the file).
    fn edit_input(&mut self, act: &Act) -> Option<J> {
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

    /// The tool's result text, whether it is an error, and how long the
    /// tool took.
    fn run(&mut self, act: &Act, clock: u64) -> (String, bool, u64) {
        let mut r = self.sub("result");
        let p = self.project;
        match act {
            Act::Read { path, window, missing } => {
                if *missing {
                    return ("File does not exist. Current working directory: /home/dev/".to_owned() + p.name, true, 15);
                }
                let version = self.versions.get(path).copied().unwrap_or(0);
                let content = self.file_content(path, version);
                let lines: Vec<&str> = content.lines().collect();
                let (off, lim) = window.unwrap_or((1, 2000));
                let start = off.saturating_sub(1).min(lines.len());
                let end = (start + lim).min(lines.len());
                let mut out = String::new();
                for (i, l) in lines[start..end].iter().enumerate() {
                    out.push_str(&format!("{:>6}\t{l}\n", start + i + 1));
                }
                if out.is_empty() {
                    out = format!(
                        "<system-reminder>Warning: the file exists but is shorter than the provided offset ({off}). The file has {} lines.</system-reminder>",
                        lines.len()
                    );
                }
                (out, false, r.range(20, 300))
            }
            Act::Grep { pattern, broad, files_only, .. } => {
                let target = if *broad { r.range_usize(30_000, 95_000) } else if r.chance(0.2) { r.range_usize(3_000, 15_000) } else { r.range_usize(150, 3_000) };
                let mut out = String::new();
                if *files_only {
                    let n = (target / 40).clamp(1, 60);
                    for _ in 0..n {
                        out.push_str(r.pick(&p.files));
                        out.push('\n');
                    }
                    out = format!("Found {n} files\n{out}");
                } else {
                    while out.len() < target {
                        let file = r.pick(&p.files);
                        let line = r.range(3, 900);
                        let code = if *broad { code_lines(&mut r, p, 1, 8) } else { grep_line(&mut r, p, pattern) };
                        out.push_str(&format!("{file}:{line}:{}\n", code.trim_end()));
                    }
                }
                if out.is_empty() {
                    out = "No matches found".to_owned();
                }
                (out, false, r.range(30, 600))
            }
            Act::List { .. } => {
                let n = r.range_usize(15, 140);
                let mut out = String::new();
                for i in 0..n {
                    if i < p.files.len() {
                        out.push_str(&format!("/home/dev/{}/{}\n", p.name, p.files[i]));
                    } else {
                        out.push_str(&format!("/home/dev/{}/src/{}/{}.rs\n", p.name, r.pick(&p.nouns), r.pick(&WORDS.nouns)));
                    }
                }
                (out, false, r.range(20, 200))
            }
            Act::Edit { path, fail } => {
                if *fail {
                    return ("String to replace not found in file.\nString: (see old_string)".to_owned(), true, 12);
                }
                *self.versions.entry(path.clone()).or_insert(0) += 1;
                let start = r.range_usize(20, 400);
                let mut out = format!("The file /home/dev/{}/{path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n", p.name);
                let code = code_between(&mut r, p, 10, 30, 4);
                for (i, l) in code.lines().enumerate() {
                    out.push_str(&format!("{:>6}\t{l}\n", start + i));
                }
                (out, false, r.range(15, 120))
            }
            Act::Write { path } => {
                *self.versions.entry(path.clone()).or_insert(0) += 1;
                (format!("File created successfully at: /home/dev/{}/{path}", p.name), false, r.range(10, 80))
            }
            Act::Test { pass, verbose, filter } => {
                let log = test_log(&mut r, p, self.tests_total, *pass, *verbose, filter.as_deref(), &self.test_name, clock);
                let ms = if *verbose { r.range(60_000, 170_000) } else { r.range(14_000, 95_000) };
                (log, false, ms)
            }
            Act::Check { clippy, errors } => (check_log(&mut r, p, *clippy, *errors), false, r.range(6_000, 70_000)),
            Act::Git { diff } => {
                let out = if *diff {
                    git_diff(&mut r, p)
                } else {
                    let mut s = format!("On branch {}\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n  (use \"git restore <file>...\" to discard changes in working directory)\n", fill(&mut r, "fix/{n}-{v}", &[("n", &p.nouns), ("v", &WORDS.verbs)]));
                    for (path, _) in self.versions.iter().take(8) {
                        s.push_str(&format!("\tmodified:   {path}\n"));
                    }
                    s.push_str("\nno changes added to commit (use \"git add\" and/or \"git commit -a\")\n");
                    s
                };
                (out, false, r.range(40, 400))
            }
            Act::Search { query } => (search_json(&mut r, p, query), false, r.range(700, 2_600)),
            Act::Fetch { url } => {
                let size = if r.chance(0.3) { r.range_usize(40_000, 98_000) } else { r.range_usize(6_000, 30_000) };
                (web_page(&mut r, p, url, size), false, r.range(1_200, 7_000))
            }
            Act::Api { kind, number } => (api_json(&mut r, p, *kind, *number, clock), false, r.range(300, 1_800)),
            Act::Todo { .. } => (
                "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable".to_owned(),
                false,
                r.range(5, 30),
            ),
        }
    }

    fn file_content(&self, path: &str, version: u32) -> String {
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

// ---------------------------------------------------------------- content

fn cargo_toml(p: &Project) -> String {
    let mut s = format!(
        "[package]\nname = \"{}\"\nversion = \"0.4.2\"\nedition = \"2021\"\nrust-version = \"1.78\"\ndescription = \"{}\"\nlicense = \"MIT OR Apache-2.0\"\nrepository = \"https://github.com/{}/{}\"\n\n[dependencies]\n",
        p.name, p.summary, p.org, p.name
    );
    for (i, d) in p.deps.iter().enumerate() {
        s.push_str(&format!(
            "{d} = {{ version = \"{}.{}\", features = [\"full\"] }}\n",
            1 + i % 2,
            i * 3 % 17
        ));
    }
    s.push_str("anyhow = \"1\"\n\n[dev-dependencies]\nproptest = \"1\"\ntempfile = \"3\"\ninsta = \"1\"\n\n[profile.release]\ndebug = 1\nlto = \"thin\"\n");
    s
}

fn prose_between(r: &mut Rng, p: &Project, lo: usize, hi: usize) -> String {
    let n = r.range_usize(lo, hi);
    prose(r, p, n)
}

fn code_between(r: &mut Rng, p: &Project, lo: usize, hi: usize, indent: usize) -> String {
    let n = r.range_usize(lo, hi);
    code_lines(r, p, n, indent)
}

fn prose(r: &mut Rng, p: &Project, min_chars: usize) -> String {
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
fn code_lines(r: &mut Rng, p: &Project, n: usize, indent: usize) -> String {
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

fn rust_source(r: &mut Rng, p: &Project, _path: &str, target: usize) -> String {
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

#[allow(clippy::too_many_arguments)]
fn test_log(
    r: &mut Rng,
    p: &Project,
    total: usize,
    pass: bool,
    verbose: bool,
    filter: Option<&str>,
    failing: &str,
    clock: u64,
) -> String {
    let mut out = format!(
        "   Compiling {} v0.4.2 (/home/dev/{})\n    Finished `test` profile [unoptimized + debuginfo] target(s) in {}.{:02}s\n     Running unittests src/lib.rs (target/debug/deps/{}-{})\n\n",
        p.name,
        p.name,
        r.range(4, 58),
        r.range(0, 99),
        p.krate,
        r.hex(16)
    );
    let shown = match filter {
        Some(_) => r.range_usize(8, 40).min(total),
        None => total,
    };
    out.push_str(&format!("running {shown} tests\n"));
    let mut t = clock + 2_000;
    for i in 0..shown {
        let file = r.pick(&p.files);
        let name = format!(
            "{}::tests::{}_{}_{}",
            module_of(file),
            r.pick(&WORDS.verbs),
            r.pick(&p.nouns),
            r.pick(&WORDS.adjectives)
        );
        if verbose {
            for _ in 0..r.range(2, 12) {
                t += r.range(1, 40);
                out.push_str(&format!(
                    "{} {} {}::{}: {} {}={} {}={}\n",
                    rfc3339_millis(t),
                    r.pick(&WORDS.log_levels),
                    p.krate,
                    module_of(file),
                    fill(r, "{v} {n}", &[("v", &WORDS.verbs), ("n", &p.nouns)]),
                    r.pick(&WORDS.nouns),
                    r.range(1, 99_999),
                    r.pick(&p.nouns),
                    r.hex(8)
                ));
            }
        }
        let ok = pass || i != shown / 2;
        out.push_str(&format!(
            "test {} ... {}\n",
            if ok { name } else { failing.to_owned() },
            if ok { "ok" } else { "FAILED" }
        ));
    }
    if pass {
        out.push_str(&format!(
            "\ntest result: ok. {shown} passed; 0 failed; 0 ignored; 0 measured; {} filtered out; finished in {}.{:02}s\n\n   Doc-tests {}\n\nrunning {} tests\ntest result: ok. all passed; finished in 1.{:02}s\n",
            total - shown,
            r.range(0, 9),
            r.range(0, 99),
            p.krate,
            r.range(2, 20),
            r.range(0, 99)
        ));
    } else {
        let src = failing
            .split("::tests::")
            .next()
            .unwrap_or("lib")
            .replace("::", "/");
        out.push_str(&format!(
            "\nfailures:\n\n---- {failing} stdout ----\n\nthread '{failing}' panicked at src/{src}.rs:{}:{}:\nassertion `left == right` failed: {}\n  left: {}\n right: {}\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n\nfailures:\n    {failing}\n\ntest result: FAILED. {} passed; 1 failed; 0 ignored; 0 measured; {} filtered out; finished in {}.{:02}s\n\nerror: test failed, to rerun pass `--lib`\n",
            r.range(40, 700),
            r.range(5, 40),
            fill(r, "{n} should be {st} after the {n2} is {st2}", &[("n", &p.nouns), ("n2", &WORDS.nouns), ("st", &WORDS.states), ("st2", &WORDS.states)]),
            r.range(0, 9),
            r.range(1, 9),
            shown - 1,
            total - shown,
            r.range(0, 9),
            r.range(0, 99)
        ));
    }
    out
}

/// A source line that matches the grep `pattern` the generator produced.
fn grep_line(r: &mut Rng, p: &Project, pattern: &str) -> String {
    let (n, n2, ty) = (
        r.pick(&p.nouns),
        r.pick(&WORDS.nouns),
        r.pick(&WORDS.rust_types),
    );
    if let Some(name) = pattern.strip_prefix("fn ") {
        format!("    pub async fn {name}(&self, {n}: {ty}) -> Result<(), Error> {{")
    } else if let Some(name) = pattern.strip_suffix("\\(") {
        format!("        let {n} = self.{name}(&{n2}).await?;")
    } else if let Some(ty) = pattern.strip_suffix("::") {
        format!("        let {n} = {ty}::new({n2}.clone(), self.config.{n}_limit);")
    } else {
        match r.range(0, 2) {
            0 => format!("use crate::{n}::{pattern};"),
            1 => format!("    pub {n}_{n2}: Arc<{pattern}>,"),
            _ => format!("impl {pattern} {{"),
        }
    }
}

fn check_log(r: &mut Rng, p: &Project, clippy: bool, errors: bool) -> String {
    let mut out = format!(
        "    {} {} v0.4.2 (/home/dev/{})\n",
        if clippy { "Checking" } else { "Compiling" },
        p.name,
        p.name
    );
    if errors {
        let n = r.range(2, 9);
        for _ in 0..n {
            let (lint, msg) = r.pick(&CLIPPY_LINTS);
            let file = r.pick(&p.files);
            let line = r.range(10, 800);
            let code = code_lines(r, p, 1, 8);
            out.push_str(&format!(
                "error: {msg}\n  --> {file}:{line}:{}\n   |\n{line:>3} | {}\n   |         ^^^^^^^^^^^^^^\n   |\n   = help: for further information visit https://rust-lang.github.io/rust-clippy/master/index.html#{lint}\n   = note: `-D clippy::{lint}` implied by `-D warnings`\n   = help: to override `-D warnings` add `#[allow(clippy::{lint})]`\n\n",
                r.range(5, 30),
                code.trim_end()
            ));
        }
        out.push_str(&format!(
            "error: could not compile `{}` (lib) due to {n} previous errors\n",
            p.name
        ));
    } else {
        out.push_str(&format!(
            "    Finished `dev` profile [unoptimized + debuginfo] target(s) in {}.{:02}s\n",
            r.range(3, 40),
            r.range(0, 99)
        ));
    }
    out
}

fn git_diff(r: &mut Rng, p: &Project) -> String {
    let mut out = String::new();
    for _ in 0..r.range(1, 4) {
        let file = r.pick(&p.files);
        out.push_str(&format!(
            "diff --git a/{file} b/{file}\nindex {}..{} 100644\n--- a/{file}\n+++ b/{file}\n",
            r.hex(7),
            r.hex(7)
        ));
        for _ in 0..r.range(1, 4) {
            let at = r.range(10, 600);
            let ctx = code_lines(r, p, 3, 8);
            let old = code_between(r, p, 1, 6, 8);
            let new = code_between(r, p, 1, 12, 8);
            out.push_str(&format!(
                "@@ -{at},9 +{at},12 @@ impl {} {{\n",
                camel(&[r.pick(&p.nouns), r.pick(&WORDS.nouns)])
            ));
            for l in ctx.lines() {
                out.push_str(&format!(" {l}\n"));
            }
            for l in old.lines() {
                out.push_str(&format!("-{l}\n"));
            }
            for l in new.lines() {
                out.push_str(&format!("+{l}\n"));
            }
        }
    }
    out
}

fn search_json(r: &mut Rng, p: &Project, query: &str) -> String {
    let results: Vec<J> = (0..r.range(6, 10))
        .map(|_| {
            let dep = r.pick(&p.deps);
            let n = r.pick(&p.nouns);
            obj([
                (
                    "title",
                    format!(
                        "{} {n} {} - {}",
                        camel(&[dep]),
                        r.pick(&WORDS.search_title_kinds),
                        r.pick(&WORDS.search_sources)
                    )
                    .into(),
                ),
                (
                    "url",
                    format!(
                        "https://{}/{}/{}-{n}",
                        r.pick(&WORDS.search_hosts),
                        dep,
                        r.pick(&WORDS.verbs)
                    )
                    .into(),
                ),
                ("snippet", prose(r, p, 180).into()),
                (
                    "age",
                    format!("{} {} ago", r.range(1, 11), r.pick(&WORDS.age_units)).into(),
                ),
            ])
        })
        .collect();
    obj([("query", query.into()), ("results", J::Arr(results))]).pretty(2)
}

fn web_page(r: &mut Rng, p: &Project, url: &str, size: usize) -> String {
    let mut out = format!(
        "# {}\n\nSource: {url}\n\n",
        camel(&[r.pick(&WORDS.verbs), r.pick(&p.nouns), r.pick(&WORDS.nouns)])
    );
    while out.len() < size {
        out.push_str(&format!(
            "## {}\n\n",
            fill(
                r,
                "{V} the {n} safely",
                &[("V", &WORDS.verbs), ("n", &p.nouns)]
            )
        ));
        out.push_str(&prose_between(r, p, 400, 1300));
        out.push_str("\n\n");
        if r.chance(0.5) {
            out.push_str(&format!("```rust\n{}```\n\n", code_between(r, p, 5, 20, 0)));
        }
        if r.chance(0.2) {
            out.push_str("| Setting | Default | Notes |\n|---|---|---|\n");
            for _ in 0..r.range(3, 8) {
                out.push_str(&format!(
                    "| `{}_{}` | {} | {} |\n",
                    r.pick(&p.nouns),
                    r.pick(&WORDS.nouns),
                    r.range(1, 512),
                    prose(r, p, 30)
                ));
            }
            out.push('\n');
        }
    }
    out
}

fn api_json(r: &mut Rng, p: &Project, kind: usize, number: u64, clock: u64) -> String {
    let user_obj = |r: &mut Rng| {
        let login = format!("{}-{}", r.pick(&WORDS.github_logins), r.range(1, 99));
        let id = r.range(100_000, 90_000_000);
        obj([
            ("login", login.as_str().into()),
            ("id", id.into()),
            ("node_id", format!("MDQ6VXNlcj{}", r.base62(8)).into()),
            (
                "avatar_url",
                format!("https://avatars.githubusercontent.com/u/{id}?v=4").into(),
            ),
            (
                "url",
                format!("https://api.github.com/users/{login}").into(),
            ),
            ("html_url", format!("https://github.com/{login}").into()),
            ("type", "User".into()),
            ("site_admin", false.into()),
        ])
    };
    let doc = match kind {
        0 => {
            let n = r.range_usize(3, 40);
            J::Arr(
                (0..n)
                    .map(|i| {
                        let id = 2_400_000_000 + r.range(0, 99_999_999);
                        let at = rfc3339(clock - (n - i) as u64 * r.range(600_000, 86_400_000));
                        let mut body = prose_between(r, p, 120, 820);
                        if r.chance(0.35) {
                            body.push_str("\n\n```\n");
                            for _ in 0..r.range(4, 30) {
                                body.push_str(&format!(
                                    "{} ERROR {}: {} {}={}\n",
                                    at,
                                    p.krate,
                                    fill(
                                        r,
                                        "{v} {n} failed",
                                        &[("v", &WORDS.verbs), ("n", &p.nouns)]
                                    ),
                                    r.pick(&WORDS.nouns),
                                    r.hex(12)
                                ));
                            }
                            body.push_str("```");
                        }
                        obj([
                            (
                                "url",
                                format!(
                                    "https://api.github.com/repos/{}/{}/issues/comments/{id}",
                                    p.org, p.name
                                )
                                .into(),
                            ),
                            (
                                "html_url",
                                format!(
                                    "https://github.com/{}/{}/issues/{number}#issuecomment-{id}",
                                    p.org, p.name
                                )
                                .into(),
                            ),
                            (
                                "issue_url",
                                format!(
                                    "https://api.github.com/repos/{}/{}/issues/{number}",
                                    p.org, p.name
                                )
                                .into(),
                            ),
                            ("id", id.into()),
                            ("node_id", format!("IC_kwDO{}", r.base62(14)).into()),
                            ("user", user_obj(r)),
                            ("created_at", at.as_str().into()),
                            ("updated_at", at.as_str().into()),
                            (
                                "author_association",
                                r.pick(&WORDS.author_associations).into(),
                            ),
                            ("body", body.into()),
                            (
                                "reactions",
                                obj([
                                    ("total_count", J::Int(r.range(0, 6) as i64)),
                                    ("+1", J::Int(r.range(0, 4) as i64)),
                                    ("-1", J::Int(0)),
                                    ("heart", J::Int(0)),
                                ]),
                            ),
                        ])
                    })
                    .collect(),
            )
        }
        1 => {
            let n = r.range_usize(5, 20);
            let runs: Vec<J> = (0..n)
                .map(|i| {
                    let id = 17_000_000_000 + r.range(0, 999_999_999);
                    let at = rfc3339(clock - (i as u64 + 1) * r.range(1_800_000, 20_000_000));
                    let failed = i < 2;
                    obj([
                        ("id", id.into()),
                        ("name", "CI".into()),
                        ("head_branch", "main".into()),
                        ("head_sha", r.hex(40).into()),
                        ("run_number", J::Int(900 - i as i64)),
                        ("event", "push".into()),
                        ("status", "completed".into()),
                        (
                            "conclusion",
                            if failed { "failure" } else { "success" }.into(),
                        ),
                        ("workflow_id", J::Int(81_234_567)),
                        (
                            "html_url",
                            format!("https://github.com/{}/{}/actions/runs/{id}", p.org, p.name)
                                .into(),
                        ),
                        ("created_at", at.as_str().into()),
                        ("updated_at", at.as_str().into()),
                        ("run_attempt", J::Int(1)),
                        ("run_started_at", at.as_str().into()),
                        ("actor", user_obj(r)),
                        ("display_title", prose(r, p, 20).into()),
                    ])
                })
                .collect();
            obj([
                ("total_count", J::Int(n as i64 + 880)),
                ("workflow_runs", J::Arr(runs)),
            ])
        }
        _ => {
            let n = r.range_usize(10, 60);
            let dep = p.deps[1];
            let versions: Vec<J> = (0..n)
                .map(|i| {
                    let day = clock - (i as u64 + 1) * r.range(86_400_000, 40 * 86_400_000);
                    obj([
                        ("id", J::Int(1_400_000 - i as i64 * 977)),
                        ("crate", dep.into()),
                        (
                            "num",
                            format!("{}.{}.{}", 1 + (n - i) / 20, (n - i) % 20, r.range(0, 4))
                                .into(),
                        ),
                        ("dl_path", format!("/api/v1/crates/{dep}/download").into()),
                        ("readme_path", format!("/api/v1/crates/{dep}/readme").into()),
                        ("updated_at", rfc3339(day).into()),
                        ("created_at", rfc3339(day).into()),
                        ("downloads", J::Int(r.range(10_000, 9_000_000) as i64)),
                        (
                            "features",
                            obj([
                                ("default", strs(&["std"])),
                                ("full", strs(&["std", "rt", "macros"])),
                            ]),
                        ),
                        ("yanked", false.into()),
                        ("license", "MIT".into()),
                        ("crate_size", J::Int(r.range(40_000, 900_000) as i64)),
                        ("published_by", user_obj(r)),
                        ("rust_version", format!("1.{}", 60 + i % 20).into()),
                        ("checksum", r.hex(64).into()),
                    ])
                })
                .collect();
            obj([
                ("versions", J::Arr(versions)),
                (
                    "meta",
                    obj([("total", J::Int(n as i64)), ("next_page", J::Null)]),
                ),
            ])
        }
    };
    doc.pretty(2)
}

// ---------------------------------------------------------------- prompt

/// Names of the projects the session generator can work on, in the order
/// [`SessionSpec::project`] indexes them.
pub(crate) fn project_names() -> Vec<&'static str> {
    PROJECTS.iter().map(|p| p.name).collect()
}

fn prompt(rng: &Rng, p: &Project, model: AgentModel, start_ms: u64) -> Prompt {
    let tools = TOOLS.clone();
    // The recorded instructions end with a line break.
    let instructions = format!("{}\n", text_file(SYSTEM_PROMPT));
    let env = format!(
        "<env>\nWorking directory: /home/dev/{}\nIs directory a git repo: Yes\nPlatform: linux\nOS Version: Linux 6.8.0-45-generic\nToday's date: {}\n</env>\nYou are powered by the model named {}. The exact model ID is {}.",
        p.name,
        date(start_ms),
        model.display,
        model.id
    );
    let mut r = rng.fork("project-notes");
    let mut notes = format!(
        "# Project notes (CLAUDE.md)\n\n{} is {}. Crates used: {}.\n\n## Commands\n- Build: `cargo build`\n- Test: `cargo test` (integration tests need `DATABASE_URL`; see docker-compose.yml)\n- Lint: `cargo clippy --all-targets -- -D warnings` and `cargo fmt --check`\n\n## Conventions\n",
        p.name,
        p.summary,
        p.deps.join(", ")
    );
    for _ in 0..10 {
        let t = r.pick(&TEMPLATES.note_rules);
        notes.push_str(&fill(
            &mut r,
            t,
            &[
                ("V", &WORDS.verbs),
                ("v", &WORDS.verbs),
                ("n", &p.nouns),
                ("n2", &WORDS.nouns),
                ("st", &WORDS.states),
            ],
        ));
        notes.push('\n');
    }
    notes.push_str("\n## Module map\n");
    for f in &p.files {
        notes.push_str(&format!("- `{f}`: {}\n", prose(&mut r, p, 60)));
    }
    notes.push_str("\n## Decision log (newest first)\n");
    let log: Vec<String> = (0..2_000)
        .map(|i| {
            let day = start_ms - (i as u64 + 1) * 86_400_000 * r.range(2, 6);
            format!("- {}: {}\n", date(day), prose(&mut r, p, 120))
        })
        .collect();
    fit(
        SESSION_PREFIX_CHARS,
        0,
        log.len(),
        |entries| {
            let mut notes = notes.clone();
            for e in &log[..entries] {
                notes.push_str(e);
            }
            Prompt {
                system: vec![text(&instructions), text(&env), text(&notes)],
                tools: tools.clone(),
            }
        },
        prefix_chars,
    )
}

// ---------------------------------------------------------------- driver

/// Tool results longer than this are cut, as agent harnesses do.
const MAX_RESULT_CHARS: usize = 100_000;

/// Keeps the head of an over-long tool result and says how much was cut.
fn cap(content: String) -> String {
    let total = content.chars().count();
    if total <= MAX_RESULT_CHARS {
        return content;
    }
    let keep = MAX_RESULT_CHARS - 2_000;
    let cut = content
        .char_indices()
        .nth(keep)
        .map_or(content.len(), |(i, _)| i);
    format!(
        "{}\n\n[... output truncated: {} characters omitted ...]",
        &content[..cut],
        total - keep
    )
}

/// Output tokens of a reply: about 3.4 characters per token of its JSON,
/// with some jitter.
fn output_tokens(r: &mut Rng, reply: &Message) -> u64 {
    let chars = reply.to_json().chars().count() as u64;
    (chars * 10 / 34) * (100 + r.range(0, 25)) / 100 + 6
}

/// What Claude Code-like agents send to compact: the whole conversation
/// plus this request (`data/session/compact_request.md`).
const COMPACT_REQUEST: &str = include_str!("data/session/compact_request.md");

/// The first message after a compaction (`data/session/compact_continuation.md`);
/// `{summary}` is the summary the compaction call wrote.
const COMPACT_CONTINUATION: &str = include_str!("data/session/compact_continuation.md");

/// Prompts by (project, model id, day): the instructions, environment and
/// project notes depend on nothing else, so sessions on one project and day
/// send the same prefix and can share its cache, as they do in a real
/// organization.
pub(crate) type PromptCache = BTreeMap<(usize, &'static str, u64), Prompt>;

const DAY_MS: u64 = 86_400_000;

fn session_prompt(
    cache: &mut PromptCache,
    project: usize,
    model: AgentModel,
    start_ms: u64,
) -> Prompt {
    let project = project % PROJECTS.len();
    let day = start_ms - start_ms % DAY_MS;
    cache
        .entry((project, model.id, day))
        .or_insert_with(|| {
            let p = &PROJECTS[project];
            prompt(&Rng::new(fnv1a(p.name)), p, model, day)
        })
        .clone()
}

/// One context: the history a run of calls sends, from the session's start
/// or from a compaction summary.
struct Segment {
    messages: Vec<Message>,
    calls: Vec<Call>,
    /// Sum of the messages' JSON characters (see [`messages_chars`]).
    chars: usize,
}

impl Segment {
    fn new(first: Message) -> Self {
        let mut s = Self {
            messages: Vec::new(),
            calls: Vec::new(),
            chars: 0,
        };
        s.push(first);
        s
    }

    fn push(&mut self, m: Message) {
        self.chars += m.to_json().chars().count();
        self.messages.push(m);
    }

    /// [`messages_chars`] of the whole segment plus `more`.
    fn chars_with(&self, more: &[&Message]) -> usize {
        let n = self.messages.len() + more.len();
        let extra: usize = more.iter().map(|m| m.to_json().chars().count()).sum();
        2 + self.chars + extra + n.saturating_sub(1)
    }
}

/// One model call's reply and what follows it in the history.
struct Turn {
    reply: Message,
    reply_tokens: u64,
    /// Tool results, or the user's next request; `None` after the last call.
    next: Option<Message>,
    /// The user's request, when `next` is one.
    request: Option<String>,
    /// Time to first token plus generation.
    model_ms: u64,
    /// From the end of the reply to the next request: tools running, an
    /// approval, or the user reading and typing.
    after_ms: u64,
}

impl Turn {
    /// A reply with nothing after it yet: its output tokens, and the model
    /// time from `first_token_ms` plus generation at 55–85 tokens a second.
    fn of(reply: Message, timing: &mut Rng, first_token_ms: u64) -> Self {
        let reply_tokens = output_tokens(timing, &reply);
        let model_ms = first_token_ms + reply_tokens * 1000 / timing.range(55, 85);
        Self {
            reply,
            reply_tokens,
            next: None,
            request: None,
            model_ms,
            after_ms: 0,
        }
    }
}

/// The state that carries from one call to the next.
struct Driver {
    g: Gen,
    timing: Rng,
    plan: VecDeque<Step>,
    follow_ups: usize,
    long_gap: bool,
}

impl Driver {
    /// The next step of the plan, answered by the model at `clock` with
    /// `sent` messages of history.
    fn turn(&mut self, clock: u64, sent: usize, last: bool) -> Turn {
        let g = &mut self.g;
        let timing = &mut self.timing;
        let step = self.plan.pop_front().unwrap_or_else(|| {
            Step::Reply("Done. Anything else you'd like me to look at?".to_owned())
        });
        // Time to first token; [`Turn::of`] adds the generation.
        let model_ms = 900 + timing.range(0, 2_600) + (sent as u64) * 15;
        match step {
            Step::Tools(lead, acts) => {
                let mut blocks: Vec<ContentBlock> = Vec::new();
                if let Some(l) = lead {
                    blocks.push(text(&l));
                }
                let mut ids = Vec::new();
                for act in &acts {
                    let id = g.rng.tool_use_id();
                    let (name, mut input) = g.tool_input(act);
                    if let Some(full) = g.edit_input(act) {
                        input = full;
                    }
                    blocks.push(tool_use(&id, name, &input));
                    ids.push(id);
                }
                let mut turn = Turn::of(assistant(blocks), timing, model_ms);
                if last {
                    return turn;
                }
                let mut results = Vec::new();
                let mut exec = 0;
                let mut retry = Vec::new();
                for (act, id) in acts.iter().zip(&ids) {
                    let (content, is_error, ms) = g.run(act, clock + turn.model_ms);
                    let content = cap(content);
                    results.push(tool_result(id, &content, is_error));
                    exec = exec.max(ms);
                    if let Act::Edit { path, fail: true } = act {
                        retry.push(Act::Read {
                            path: path.clone(),
                            window: None,
                            missing: false,
                        });
                        retry.push(Act::Edit {
                            path: path.clone(),
                            fail: false,
                        });
                    }
                }
                for act in retry.into_iter().rev() {
                    self.plan.push_front(Step::Tools(None, vec![act]));
                }
                let needs_approval = acts.iter().any(|a| {
                    matches!(
                        a,
                        Act::Test { .. }
                            | Act::Check { .. }
                            | Act::Write { .. }
                            | Act::Fetch { .. }
                    )
                });
                if needs_approval && timing.chance(0.25) {
                    exec += timing.range(2_000, 25_000);
                }
                turn.next = Some(user(results));
                turn.after_ms = exec;
                turn
            }
            Step::Reply(body) => {
                let mut turn = Turn::of(assistant(vec![text(&body)]), timing, model_ms);
                if last {
                    return turn;
                }
                self.follow_ups += 1;
                let away = timing.chance(0.25) || (self.follow_ups == 2 && !self.long_gap);
                turn.after_ms = if away {
                    self.long_gap = true;
                    timing.range(6 * 60_000, 20 * 60_000)
                } else if timing.chance(0.2) {
                    timing.range(3 * 60_000, 5 * 60_000)
                } else {
                    timing.range(20_000, 180_000)
                };
                let kind = g.follow_up();
                g.new_focus();
                let request = g.task_text(kind, false);
                turn.next = Some(user_text(&request));
                turn.request = Some(request);
                self.plan = g.plan(kind, false);
                turn
            }
        }
    }
}

/// A call that records the output tokens of its reply (what the generator
/// can say without a tokenizer).
fn call_of(sent: usize, start: u64, output_tokens: u64) -> Call {
    Call {
        cleared: Vec::new(),
        messages: sent,
        start_ms: Some(start),
        model: None,
        prompt: 0,
        markers: None,
        usage: Some(RecordedUsage {
            output_tokens: Some(output_tokens),
            ..RecordedUsage::default()
        }),
    }
}

/// First characters of `s`, for quoting in a summary.
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

impl Gen {
    /// The summary a compaction call writes: the sections Claude Code asks
    /// for (requests, concepts, files, errors, pending work, next step),
    /// filled from what the session did.
    fn compaction_summary(&mut self, requests: &[String]) -> String {
        let mut r = self.sub("compact");
        let p = self.project;
        let mut s = String::from("<analysis>\n");
        s.push_str(&prose_between(&mut r, p, 300, 900));
        s.push_str("\n</analysis>\n\n<summary>\n1. Primary Request and Intent:\n");
        for q in requests.iter().rev().take(6).rev() {
            s.push_str(&format!("   - {}\n", clip(q, 400)));
        }
        s.push_str(&format!(
            "\n2. Key Technical Concepts:\n   - {}\n   - `{}` and `{}`\n   - {}\n",
            p.deps.join(", "),
            self.type_name,
            self.fn_name,
            prose_between(&mut r, p, 60, 160)
        ));
        s.push_str("\n3. Files and Code Sections:\n");
        let files: Vec<(String, u32)> = self
            .versions
            .iter()
            .map(|(f, v)| (f.clone(), *v))
            .take(12)
            .collect();
        for (f, v) in files {
            s.push_str(&format!(
                "   - `{f}` (edited {v} time{}): {}\n",
                if v == 1 { "" } else { "s" },
                prose_between(&mut r, p, 80, 240)
            ));
        }
        s.push_str(&format!(
            "   - `{}`: {}\n\n4. Errors and fixes:\n   - {}\n\n5. Problem Solving:\n   {}\n\n6. All user messages:\n",
            self.focus,
            prose_between(&mut r, p, 80, 200),
            prose_between(&mut r, p, 100, 320),
            prose_between(&mut r, p, 200, 600)
        ));
        for q in requests.iter().rev().take(12).rev() {
            s.push_str(&format!("   - {}\n", clip(q, 200)));
        }
        s.push_str(&format!(
            "\n7. Pending Tasks:\n   - Finish the work on `{}` and run `{}`.\n\n8. Current Work:\n   Working on `{}` in `{}`. {}\n\n9. Optional Next Step:\n   {}\n</summary>",
            self.fn_name,
            self.test_name,
            self.fn_name,
            self.focus,
            prose_between(&mut r, p, 120, 400),
            prose_between(&mut r, p, 80, 200)
        ));
        s
    }
}

/// Builds a session (see [`super::session`] and [`super::session_parts`]):
/// one trace per context, the first named `spec.name`.
///
/// With `spec.compacts`, before each call the agent estimates the tokens it
/// would send ([`CHARS_PER_TOKEN_ESTIMATE`] characters of compact JSON per
/// token, system prompt and tools included). When that is above
/// [`COMPACT_AT_PCT`] of the window, or when the results of the step about
/// to run would take the next request above [`HARD_LIMIT_PCT`], the call is
/// a compaction instead: it sends the history plus a request to summarize
/// it, and the reply (the summary) ends the part. The next part starts from
/// one user message carrying that summary, and the pending step follows.
/// A trace's history is append-only, so a context that restarts is a new
/// trace: `<name>-part2`, `<name>-part3`, … with the same prompt.
pub(crate) fn build(spec: &SessionSpec, prompts: &mut PromptCache) -> Vec<Trace> {
    let calls = spec.calls.max(1);
    let g = Gen::with_project(spec.seed, spec.project);
    let project = g.project;
    let prompt = session_prompt(prompts, spec.project, spec.model, spec.start_ms);
    let prefix = prefix_chars(&prompt) as u64;
    let window = spec.model.window_tokens;
    let estimate =
        |history_chars: usize| (prefix + history_chars as u64).div_ceil(CHARS_PER_TOKEN_ESTIMATE);
    let mut d = Driver {
        timing: g.rng.fork("timing"),
        g,
        plan: VecDeque::new(),
        follow_ups: 0,
        long_gap: false,
    };
    let first_kind = if d.g.rng.chance(0.6) {
        Kind::Bugfix
    } else {
        Kind::Feature
    };
    let first_request = d.g.task_text(first_kind, true);
    let mut seg = Segment::new(user_text(&first_request));
    let mut requests = vec![first_request];
    d.plan = d.g.plan(first_kind, true);
    let mut parts: Vec<Segment> = Vec::new();
    let mut clock = spec.start_ms;
    let mut made = 0usize;
    let compact_request = user_text(text_file(COMPACT_REQUEST));
    while made < calls {
        let last = made + 1 == calls;
        // The tools of the step run before the agent decides whether to
        // compact (their timestamps do not count the compaction's seconds).
        let turn = d.turn(clock, seg.messages.len(), last);
        let now = estimate(seg.chars_with(&[]));
        // After this step the history must still leave room for the
        // request to compact it, which may be the very next call.
        let after = match &turn.next {
            Some(next) => estimate(seg.chars_with(&[&turn.reply, next, &compact_request])),
            None => now,
        };
        let over = now > window * COMPACT_AT_PCT / 100 || after > window * HARD_LIMIT_PCT / 100;
        if spec.compacts && calls - made >= 2 && over {
            seg.push(user_text(text_file(COMPACT_REQUEST)));
            let sent = seg.messages.len();
            let summary = d.g.compaction_summary(&requests);
            let reply = assistant(vec![text(&summary)]);
            let out = output_tokens(&mut d.timing, &reply);
            let model_ms = 900
                + d.timing.range(0, 2_600)
                + (sent as u64) * 15
                + out * 1000 / d.timing.range(55, 85);
            seg.calls.push(call_of(sent, clock, out));
            seg.push(reply);
            made += 1;
            clock += model_ms + d.timing.range(300, 2_000);
            let resumed = text_file(COMPACT_CONTINUATION).replace("{summary}", &summary);
            parts.push(std::mem::replace(
                &mut seg,
                Segment::new(user_text(&resumed)),
            ));
            // What the summary quoted stays known to the next summary.
            let keep = requests.len().saturating_sub(12);
            requests.drain(..keep);
        }
        let last = made + 1 == calls;
        seg.calls
            .push(call_of(seg.messages.len(), clock, turn.reply_tokens));
        seg.push(turn.reply);
        if !last && let Some(next) = turn.next {
            seg.push(next);
            requests.extend(turn.request);
        }
        clock += turn.model_ms + turn.after_ms;
        made += 1;
    }
    parts.push(seg);
    let count = parts.len();
    parts
        .into_iter()
        .enumerate()
        .map(|(i, seg)| {
            let last_chars = seg
                .calls
                .last()
                .map_or(0, |c| messages_chars(&seg.messages[..c.messages]));
            let context = if !spec.compacts {
                format!("The agent never compacts: the last call sends {last_chars} characters of messages.")
            } else if count == 1 {
                format!(
                    "It stays within its {}K-token window without compacting: the last call sends {last_chars} characters of messages.",
                    window / 1000
                )
            } else {
                let mut c = format!(
                    "Part {} of {count}: the agent compacts before {COMPACT_AT_PCT}% of its {}K-token window, as Claude Code does.",
                    i + 1,
                    window / 1000
                );
                if i > 0 {
                    c.push_str(&format!(" This part starts from the summary that ends part {i}."));
                }
                if i + 1 < count {
                    c.push_str(" Its last call sends the history with a request to summarize it; the summary starts the next part.");
                }
                c
            };
            let name = if i == 0 {
                spec.name.clone()
            } else {
                format!("{}-part{}", spec.name, i + 1)
            };
            let part_calls = seg.calls.len();
            Trace {
                name,
                description: format!(
                    "Synthetic coding-agent session (Claude {}) on project {}, {}: {part_calls} of the session's {calls} calls of exploring, editing, testing, web research and user follow-ups, with parallel tool calls and breaks long enough to expire a 5-minute cache. {context} Generated deterministically by {}; usage records output tokens only.",
                    spec.model.display, project.name, project.summary, spec.origin
                ),
                provider: ProviderKind::Anthropic,
                model: spec.model.id.to_owned(),
                // The agent modelled is a coding agent like Claude Code:
                // what it runs now is Claude Code's own caching.
                status_quo: Some(crate::trace::CLAUDE_CODE_STATUS_QUO.to_owned()),
                project: Some(project.name.to_owned()),
                // One team's sessions, sharing one account's cache.
                account: Some(FLEET_ACCOUNT.to_owned()),
                session: (count > 1).then(|| spec.name.clone()),
                hidden_prefix_tokens: 0,
                source: None,
                prompts: vec![prompt.clone()],
                messages: seg.messages,
                calls: seg.calls,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
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
            include_str!("data/session/tools.json"),
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

    #[test]
    fn cap_keeps_short_results_and_cuts_long_ones() {
        assert_eq!(cap("short".to_owned()), "short");
        let long = "é".repeat(MAX_RESULT_CHARS + 10);
        let cut = cap(long);
        assert!(cut.chars().count() < MAX_RESULT_CHARS);
        assert!(cut.ends_with("[... output truncated: 2010 characters omitted ...]"));
    }

    #[test]
    fn grep_lines_contain_their_pattern() {
        let mut r = Rng::new(3);
        let p = &PROJECTS[0];
        for pat in ["fn load_job", "load_job\\(", "JobQueue::", "JobQueue"] {
            let needle = pat.trim_end_matches("\\(");
            assert!(grep_line(&mut r, p, pat).contains(needle), "{pat}");
        }
        assert_eq!(module_of("src/scheduler/mod.rs"), "scheduler");
        assert_eq!(module_of("src/api/handlers.rs"), "api::handlers");
    }

    #[test]
    fn file_contents_are_stable_per_path_and_version() {
        let g = Gen::new(5);
        let a = g.file_content("src/lib.rs", 0);
        assert_eq!(a, g.file_content("src/lib.rs", 0));
        assert_ne!(a, g.file_content("src/lib.rs", 1));
        assert!(g.file_content("Cargo.toml", 0).starts_with("[package]"));
    }

    #[test]
    fn prompt_is_sized_to_the_target() {
        let g = Gen::new(1);
        let p = prompt(&g.rng, g.project, SONNET_4_5, START_MS);
        let n = prefix_chars(&p);
        assert!(
            n <= SESSION_PREFIX_CHARS && n + 400 >= SESSION_PREFIX_CHARS,
            "{n}"
        );
        assert!(p.tools.len() >= 6);
    }
}

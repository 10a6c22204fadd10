//! The agent's plan: what the simulated coding agent decides to do. [`Gen`]
//! is its state (the project, the function and file it is focused on, the
//! files it has changed); for each request it plans the [`Step`]s it will
//! take, each a reply or a turn of tool calls ([`Act`]), and after its
//! answer it draws the kind of the user's next request.

use std::collections::{BTreeMap, VecDeque};

use super::corpus::{PROJECTS, Project, WORDS};
use super::names::{camel, module_of};
use crate::rng::Rng;

/// What the session's tools are asked to do.
#[derive(Debug, Clone)]
pub(super) enum Act {
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

/// One step of a plan: a turn of tool calls (led by a sentence, or not),
/// or the reply that ends the task.
pub(super) enum Step {
    Tools(Option<String>, Vec<Act>),
    Reply(String),
}

/// The kind of task a request asks for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Bugfix,
    Feature,
    Research,
    Ci,
    Question,
}

/// The agent through one session: its random stream, the project, what it
/// is working on now and what it has changed.
pub(super) struct Gen {
    pub(super) rng: Rng,
    pub(super) project: &'static Project<'static>,
    pub(super) versions: BTreeMap<String, u32>,
    pub(super) issue: u64,
    pub(super) fn_name: String,
    pub(super) type_name: String,
    pub(super) focus: String,
    pub(super) test_name: String,
    pub(super) tests_total: usize,
    counter: u64,
}

impl Gen {
    #[cfg(test)]
    pub(super) fn new(seed: u64) -> Self {
        Self::with_project(seed, (seed % PROJECTS.len() as u64) as usize)
    }

    pub(super) fn with_project(seed: u64, project: usize) -> Self {
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

    pub(super) fn sub(&mut self, label: &str) -> Rng {
        self.counter += 1;
        self.rng.fork(&format!("{label}-{}", self.counter))
    }

    pub(super) fn noun(&mut self) -> &'static str {
        if self.rng.chance(0.6) {
            self.rng.pick(&self.project.nouns)
        } else {
            self.rng.pick(&WORDS.nouns)
        }
    }

    fn source_file(&mut self) -> String {
        self.rng.pick(&self.project.files).to_owned()
    }

    pub(super) fn new_focus(&mut self) {
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

    pub(super) fn plan(&mut self, kind: Kind, first: bool) -> VecDeque<Step> {
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

    pub(super) fn follow_up(&mut self) -> Kind {
        match self.rng.range(0, 99) {
            0..=29 => Kind::Bugfix,
            30..=54 => Kind::Feature,
            55..=69 => Kind::Research,
            70..=79 => Kind::Ci,
            _ => Kind::Question,
        }
    }
}

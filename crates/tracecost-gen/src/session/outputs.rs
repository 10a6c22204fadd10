//! The tool outputs: the text each tool returns for an [`Act`] (file
//! reads, grep hits, listings, test and lint logs, diffs, search results,
//! web pages, API JSON), whether it is an error and how long the tool took,
//! cut to what the harness passes on.

use std::collections::BTreeMap;

use super::corpus::{CLIPPY_LINTS, Project, WORDS};
use super::names::{camel, module_of};
use super::plan::{Act, Gen};
use super::project_text::{code_between, code_lines, prose, prose_between};
use crate::build::{J, obj, strs};
use crate::rng::Rng;
use crate::text::{fill, rfc3339, rfc3339_millis};

/// Tool results longer than this are cut, as agent harnesses do.
const MAX_RESULT_CHARS: usize = 100_000;

/// Keeps the head of an over-long tool result and says how much was cut.
pub(super) fn cap(content: String) -> String {
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

impl Gen {
    /// The tool's result text, whether it is an error, and how long the
    /// tool took.
    pub(super) fn run(&mut self, act: &Act, clock: u64) -> (String, bool, u64) {
        let mut r = self.sub("result");
        let p = self.project;
        match act {
            Act::Read { path, window, missing } => self.read_result(&mut r, path, *window, *missing),
            Act::Grep { pattern, broad, files_only, .. } => {
                let out = grep_result(&mut r, p, pattern, *broad, *files_only);
                (out, false, r.range(30, 600))
            }
            Act::List { .. } => (listing(&mut r, p), false, r.range(20, 200)),
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
                    git_status(&mut r, p, &self.versions)
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

    /// A file read: the numbered lines of the window, or the harness's
    /// answers for a missing file and an offset past the end.
    fn read_result(
        &self,
        r: &mut Rng,
        path: &str,
        window: Option<(usize, usize)>,
        missing: bool,
    ) -> (String, bool, u64) {
        let p = self.project;
        if missing {
            return (
                "File does not exist. Current working directory: /home/dev/".to_owned() + p.name,
                true,
                15,
            );
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
}

/// A grep's output: matching file names, or matching lines; a broad
/// pattern matches a great deal.
fn grep_result(r: &mut Rng, p: &Project, pattern: &str, broad: bool, files_only: bool) -> String {
    let target = if broad {
        r.range_usize(30_000, 95_000)
    } else if r.chance(0.2) {
        r.range_usize(3_000, 15_000)
    } else {
        r.range_usize(150, 3_000)
    };
    let mut out = String::new();
    if files_only {
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
            let code = if broad {
                code_lines(r, p, 1, 8)
            } else {
                grep_line(r, p, pattern)
            };
            out.push_str(&format!("{file}:{line}:{}\n", code.trim_end()));
        }
    }
    if out.is_empty() {
        out = "No matches found".to_owned();
    }
    out
}

/// A glob's listing: the project's files, then made-up sources.
fn listing(r: &mut Rng, p: &Project) -> String {
    let n = r.range_usize(15, 140);
    let mut out = String::new();
    for i in 0..n {
        if i < p.files.len() {
            out.push_str(&format!("/home/dev/{}/{}\n", p.name, p.files[i]));
        } else {
            out.push_str(&format!(
                "/home/dev/{}/src/{}/{}.rs\n",
                p.name,
                r.pick(&p.nouns),
                r.pick(&WORDS.nouns)
            ));
        }
    }
    out
}

/// `git status` with the files edited so far.
fn git_status(r: &mut Rng, p: &Project, versions: &BTreeMap<String, u32>) -> String {
    let mut s = format!(
        "On branch {}\nChanges not staged for commit:\n  (use \"git add <file>...\" to update what will be committed)\n  (use \"git restore <file>...\" to discard changes in working directory)\n",
        fill(r, "fix/{n}-{v}", &[("n", &p.nouns), ("v", &WORDS.verbs)])
    );
    for (path, _) in versions.iter().take(8) {
        s.push_str(&format!("\tmodified:   {path}\n"));
    }
    s.push_str("\nno changes added to commit (use \"git add\" and/or \"git commit -a\")\n");
    s
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

/// The JSON an API answers with: issue comments, workflow runs or a
/// crate's versions, by `kind`.
fn api_json(r: &mut Rng, p: &Project, kind: usize, number: u64, clock: u64) -> String {
    let doc = match kind {
        0 => {
            let n = r.range_usize(3, 40);
            J::Arr(
                (0..n)
                    .map(|i| issue_comment(r, p, number, clock, (n - i) as u64))
                    .collect(),
            )
        }
        1 => workflow_runs(r, p, clock),
        _ => crate_versions(r, p, clock),
    };
    doc.pretty(2)
}

/// A GitHub user as the API embeds one in comments, runs and releases.
fn github_user(r: &mut Rng) -> J {
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
}

/// One comment on issue `number`, posted some `steps` of a random gap
/// before `clock`; a third of them paste a log.
fn issue_comment(r: &mut Rng, p: &Project, number: u64, clock: u64, steps: u64) -> J {
    let id = 2_400_000_000 + r.range(0, 99_999_999);
    let at = rfc3339(clock - steps * r.range(600_000, 86_400_000));
    let mut body = prose_between(r, p, 120, 820);
    if r.chance(0.35) {
        body.push_str("\n\n```\n");
        for _ in 0..r.range(4, 30) {
            body.push_str(&format!(
                "{} ERROR {}: {} {}={}\n",
                at,
                p.krate,
                fill(r, "{v} {n} failed", &[("v", &WORDS.verbs), ("n", &p.nouns)]),
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
        ("user", github_user(r)),
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
}

/// A page of a repository's CI workflow runs, the latest two failed.
fn workflow_runs(r: &mut Rng, p: &Project, clock: u64) -> J {
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
                    format!("https://github.com/{}/{}/actions/runs/{id}", p.org, p.name).into(),
                ),
                ("created_at", at.as_str().into()),
                ("updated_at", at.as_str().into()),
                ("run_attempt", J::Int(1)),
                ("run_started_at", at.as_str().into()),
                ("actor", github_user(r)),
                ("display_title", prose(r, p, 20).into()),
            ])
        })
        .collect();
    obj([
        ("total_count", J::Int(n as i64 + 880)),
        ("workflow_runs", J::Arr(runs)),
    ])
}

/// A page of crates.io versions of the project's second dependency.
fn crate_versions(r: &mut Rng, p: &Project, clock: u64) -> J {
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
                    format!("{}.{}.{}", 1 + (n - i) / 20, (n - i) % 20, r.range(0, 4)).into(),
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
                ("published_by", github_user(r)),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::corpus::PROJECTS;

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
}

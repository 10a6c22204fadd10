//! What the user and the agent write: the user's requests, the agent's
//! closing summary or explanation of each task, and the summary a
//! compaction call writes.

use super::corpus::{TEMPLATES, WORDS};
use super::names::camel;
use super::plan::{Gen, Kind};
use super::project_text::{prose, prose_between};
use crate::text::fill;

impl Gen {
    pub(super) fn task_text(&mut self, kind: Kind, first: bool) -> String {
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

    pub(super) fn summary(&mut self, kind: Kind) -> String {
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

    pub(super) fn explanation(&mut self) -> String {
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

    /// The summary a compaction call writes: the sections Claude Code asks
    /// for (requests, concepts, files, errors, pending work, next step),
    /// filled from what the session did.
    pub(super) fn compaction_summary(&mut self, requests: &[String]) -> String {
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

/// First characters of `s`, for quoting in a summary.
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

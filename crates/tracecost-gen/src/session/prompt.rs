//! The prompt: the agent's instructions, its environment and the project
//! notes, with the tool manifest. Sessions of one project, model and day
//! share it, as they would in one organization.

use std::collections::BTreeMap;

use super::AgentModel;
use super::corpus::{PROJECTS, Project, SYSTEM_PROMPT, TEMPLATES, TOOLS, WORDS};
use super::project_text::prose;
use crate::build::{fit, text};
use crate::data::text_file;
use crate::rng::{Rng, fnv1a};
use crate::text::{DAY_MS, date, fill};
use crate::{SESSION_PREFIX_CHARS, prefix_chars};
use tracecost_trace::Prompt;

/// Names of the projects the session generator can work on, in the order
/// [`super::SessionSpec::project`] indexes them.
pub(crate) fn project_names() -> Vec<&'static str> {
    PROJECTS.iter().map(|p| p.name).collect()
}

/// The prompt of a session on `p` with `model` on the day of `start_ms`:
/// the project notes end with as much of a decision log as brings system
/// blocks and tools to about [`SESSION_PREFIX_CHARS`].
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

/// Prompts by (project, model id, day): the instructions, environment and
/// project notes depend on nothing else, so sessions on one project and day
/// send the same prefix and can share its cache, as they do in a real
/// organization.
pub(crate) type PromptCache = BTreeMap<(usize, &'static str, u64), Prompt>;

/// The prompt of a session on `project` with `model` starting at
/// `start_ms`, made once per day and then taken from `cache`.
pub(super) fn session_prompt(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::plan::Gen;
    use crate::session::{SONNET_4_5, START_MS};

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

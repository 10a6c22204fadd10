//! How the project spells its names: type names from words, module paths
//! from file paths. Used by the plan, the files' text and the outputs.

/// `["job", "queue"]` → `JobQueue`, as the project spells type names.
pub(super) fn camel(words: &[&str]) -> String {
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

/// `src/api/handlers.rs` → `api::handlers`, as test names and log lines
/// name a file.
pub(super) fn module_of(path: &str) -> String {
    let p = path.trim_start_matches("src/").trim_end_matches(".rs");
    let p = p.trim_end_matches("/mod");
    p.replace('/', "::")
}

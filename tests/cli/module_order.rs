//! Inside the root crate, dependencies point one way, in the order data
//! flows: a module of the library names only the modules before it
//! (`crate::<module>` paths). Between crates, Cargo holds the order
//! (`tests/cli/crates.rs`).

use std::path::Path;

const ORDER: [&str; 9] = [
    "engine", "progress", "trace", "policy", "cost", "replay", "app", "report", "cli",
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn no_module_names_a_later_one() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut problems = Vec::new();
    for (level, module) in ORDER.iter().enumerate() {
        let mut files = Vec::new();
        let dir = src.join(module);
        if dir.is_dir() {
            rust_files(&dir, &mut files);
        }
        let file = src.join(format!("{module}.rs"));
        if file.is_file() {
            files.push(file);
        }
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            // Unit tests may reach anywhere: they end the scan.
            for (n, line) in text
                .lines()
                .enumerate()
                .take_while(|(_, l)| l.trim() != "#[cfg(test)]")
            {
                if line.trim_start().starts_with("//") {
                    continue;
                }
                for (later_level, later) in ORDER.iter().enumerate().skip(level + 1) {
                    if line.contains(&format!("crate::{later}::"))
                        || line.contains(&format!("crate::{later}::{{"))
                        || line.contains(&format!("crate::{later};"))
                    {
                        problems.push(format!(
                            "{}:{}: {module} (level {level}) names {later} (level {later_level}): {}",
                            f.display(),
                            n + 1,
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The log importers are the application's to call: policy, cost, replay
/// and the report never name them (a constant or a type they need belongs
/// with the trace model, or to the application), so each could be built
/// without them. (The trace model and the generators cannot name them:
/// their crates do not depend on `tracecost-import`.)
#[test]
fn only_the_application_names_the_importers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    // `trace/mod.rs` re-exports the importers' crate as `trace::import`.
    let allowed = ["trace/mod.rs", "app", "cli", "main.rs"];
    let mut problems = Vec::new();
    for f in files {
        let rel = f
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if allowed.iter().any(|a| rel.starts_with(a)) {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        // A unit-test module may reach anywhere: it ends the scan (a
        // `#[cfg(test)]` item elsewhere does not).
        let end = lines
            .windows(2)
            .position(|w| w[0].trim() == "#[cfg(test)]" && w[1].trim_start().starts_with("mod "))
            .unwrap_or(lines.len());
        for (n, line) in lines[..end].iter().enumerate() {
            if !line.trim_start().starts_with("//")
                && (line.contains("trace::import") || line.contains("tracecost_import"))
            {
                problems.push(format!("src/{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

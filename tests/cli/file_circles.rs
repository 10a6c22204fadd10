//! Inside a crate, files import one way: no two files reach each other,
//! directly or round a longer circle. A circle hides which file holds the
//! rule and makes neither readable alone; it is broken by moving what both
//! need into the file lower in the data flow, or a small one both use.
//!
//! A file's imports are the paths it names (`use`, and `crate::…`,
//! `super::…`, `self::…` or a child module's path in its code), each taken
//! to the file that defines the item: through a `pub use` re-export to the
//! file it re-exports from, so that a `mod.rs` gathering its children's
//! names is not taken for a file they all import. A `pub use` itself is not
//! an import, nor is a test module (`#[cfg(test)] mod …`), which reads its
//! own file's private items.
//!
//! Every crate of the workspace is held to it: each member `Cargo.toml`
//! lists (the root, the crates under `crates/`, the Python bindings), so
//! that a new crate is held too.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The source trees whose files must import one way: each workspace
/// member's `src`, from the `members` list of the workspace's manifest.
fn trees(workspace: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(workspace.join("Cargo.toml")).unwrap();
    let list = manifest
        .split_once("\nmembers = [")
        .and_then(|(_, rest)| rest.split_once(']'))
        .expect("Cargo.toml lists the workspace's members")
        .0;
    list.split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| match m {
            "." => "src".to_owned(),
            m => format!("{m}/src"),
        })
        .collect()
}

/// A module's path inside its crate (`[]` is the crate root).
type Module = Vec<String>;

/// One crate's files, by module, their text without comments and tests.
struct Tree {
    files: BTreeMap<Module, String>,
}

impl Tree {
    fn read(root: &Path) -> Tree {
        let mut files = BTreeMap::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let rel = path.strip_prefix(root).unwrap().with_extension("");
                    let mut module: Module = rel
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect();
                    if matches!(
                        module.last().map(String::as_str),
                        Some("mod" | "lib" | "main")
                    ) {
                        module.pop();
                    }
                    files.insert(module, std::fs::read_to_string(&path).unwrap());
                }
            }
        }
        Tree::of(files)
    }

    fn of(files: BTreeMap<Module, String>) -> Tree {
        Tree {
            files: files.into_iter().map(|(m, t)| (m, strip(&t))).collect(),
        }
    }

    /// Per file, the files it imports.
    fn imports(&self) -> BTreeMap<Module, BTreeSet<Module>> {
        let root = self.files.get(&Vec::new()).map_or("", String::as_str);
        // Names the crate root gives other crates (`use tracecost_cost as
        // cost;`, an inline `mod trace { … }`): not files of this one.
        let external: BTreeSet<String> = statements(root, "use")
            .into_iter()
            .filter(|(public, _)| !public)
            .flat_map(|(_, tree)| expand(&tree))
            .filter(|(path, _)| !matches!(path[0].as_str(), "crate" | "self" | "super"))
            .map(|(path, alias)| alias.unwrap_or_else(|| path.last().unwrap().clone()))
            .chain(inline_modules(root))
            .collect();
        let mut reexports: BTreeMap<(Module, String), Module> = BTreeMap::new();
        for (module, text) in &self.files {
            for (_, tree) in statements(text, "use").into_iter().filter(|(p, _)| *p) {
                for (path, alias) in expand(&tree) {
                    if let Some(target) = self.absolute(module, &path) {
                        let name = alias.unwrap_or_else(|| path.last().unwrap().clone());
                        reexports.insert((module.clone(), name), target);
                    }
                }
            }
        }
        let mut out = BTreeMap::new();
        for (module, text) in &self.files {
            let mut paths: Vec<Module> = statements(text, "use")
                .into_iter()
                .filter(|(public, _)| !public)
                .flat_map(|(_, tree)| expand(&tree))
                .filter_map(|(path, _)| self.absolute(module, &path))
                .collect();
            paths.extend(
                inline_paths(&without_reexports(text), &self.children(text))
                    .iter()
                    .filter_map(|p| self.absolute(module, p)),
            );
            let mut to: BTreeSet<Module> = BTreeSet::new();
            for path in paths {
                if path.first().is_some_and(|p| external.contains(p)) {
                    continue;
                }
                if let Some(file) = self.file_of(&path, &reexports, 0)
                    && file != *module
                    && !file.is_empty()
                {
                    to.insert(file);
                }
            }
            out.insert(module.clone(), to);
        }
        out
    }

    /// The modules `text` declares (`mod name;`).
    fn children(&self, text: &str) -> BTreeSet<String> {
        statements(text, "mod")
            .into_iter()
            .map(|(_, name)| name)
            .filter(|n| is_ident(n))
            .collect()
    }

    /// `path` as written in `module`, from the crate root; `None` when it
    /// names another crate.
    fn absolute(&self, module: &Module, path: &[String]) -> Option<Module> {
        let (first, rest) = path.split_first()?;
        let mut at = match first.as_str() {
            "crate" => Vec::new(),
            "self" => module.clone(),
            "super" => module[..module.len().checked_sub(1)?].to_vec(),
            child if self.children(&self.files[module]).contains(child) => {
                let mut m = module.clone();
                m.push(child.to_owned());
                m
            }
            _ => return None,
        };
        let mut rest = rest;
        while let Some(("super", tail)) = rest.split_first().map(|(h, t)| (h.as_str(), t)) {
            at.pop();
            rest = tail;
        }
        at.extend(rest.iter().filter(|s| *s != "self").cloned());
        Some(at)
    }

    /// The file that defines what `path` names: its longest prefix that is
    /// a file, through that file's re-exports.
    fn file_of(
        &self,
        path: &[String],
        reexports: &BTreeMap<(Module, String), Module>,
        depth: usize,
    ) -> Option<Module> {
        for k in (0..=path.len()).rev() {
            let file = path[..k].to_vec();
            if !self.files.contains_key(&file) {
                continue;
            }
            if let Some(name) = path.get(k)
                && let Some(target) = reexports.get(&(file.clone(), name.clone()))
                && depth < 16
                && target[..] != path[..k + 1]
            {
                let mut next = target.clone();
                next.extend(path[k + 1..].iter().cloned());
                return self.file_of(&next, reexports, depth + 1);
            }
            return Some(file);
        }
        None
    }
}

/// `text` without comments and without its test modules.
fn strip(text: &str) -> String {
    let lines: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = String::new();
    let mut rest = lines.as_str();
    while let Some(i) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..i]);
        let after = rest[i + "#[cfg(test)]".len()..].trim_start();
        if after.starts_with("mod ")
            && let Some(open) = after.find('{')
            && after[..open].split_whitespace().count() == 2
        {
            let mut depth = 0;
            let mut end = after.len();
            for (k, c) in after[open..].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = open + k + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            rest = &after[end..];
        } else {
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// The statements of `text` that begin with `keyword` (`use`, `mod`),
/// each with whether it is public and what follows the keyword up to `;`
/// (a `mod` with a body is none).
fn statements(text: &str, keyword: &str) -> Vec<(bool, String)> {
    spans(text, keyword)
        .into_iter()
        .map(|(public, body, _)| (public, body))
        .collect()
}

/// `text` without its `pub use` statements: a re-export names what it
/// re-exports, and is no import.
fn without_reexports(text: &str) -> String {
    let mut out = String::new();
    let mut from = 0;
    for (_, _, span) in spans(text, "use").into_iter().filter(|(p, _, _)| *p) {
        out.push_str(&text[from..span.start]);
        from = span.end;
    }
    out.push_str(&text[from..]);
    out
}

/// [`statements`], each with the bytes it spans (from its line's start to
/// its `;`).
fn spans(text: &str, keyword: &str) -> Vec<(bool, String, std::ops::Range<usize>)> {
    let pattern = format!("{keyword} ");
    let mut out = Vec::new();
    for (at, _) in text.match_indices(&pattern) {
        // A statement starts its line, after `pub`, `pub(crate)`, ...
        let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
        let before = text[line_start..at].trim();
        let public = before.starts_with("pub");
        if !(before.is_empty() || public) {
            continue;
        }
        let body = &text[at + pattern.len()..];
        let end = match keyword {
            "mod" => body.find([';', '{']),
            _ => body.find(';'),
        };
        match end {
            // What a use tree or a module name can hold: anything else is
            // the word in prose or a string.
            Some(end)
                if !body[end..].starts_with('{')
                    && body[..end].chars().all(|c| {
                        c.is_alphanumeric() || c.is_whitespace() || "_:{},*".contains(c)
                    }) =>
            {
                let span = line_start..at + pattern.len() + end + 1;
                out.push((public, body[..end].trim().to_owned(), span));
            }
            _ => {}
        }
    }
    out
}

/// The modules the crate root declares inline (`mod name { … }`).
fn inline_modules(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let rest = l.trim_start().strip_prefix("mod ")?;
            let (name, tail) = rest.split_once(char::is_whitespace)?;
            tail.trim_start().starts_with('{').then(|| name.to_owned())
        })
        .collect()
}

/// A use tree (`a::b::{c, d::{e, f as g}}`) as its paths, each with its
/// alias.
fn expand(tree: &str) -> Vec<(Vec<String>, Option<String>)> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let mut out = Vec::new();
    expand_into(&tree, &[], &mut out);
    out
}

fn expand_into(tree: &str, prefix: &[String], out: &mut Vec<(Vec<String>, Option<String>)>) {
    let tree = tree.trim_start_matches("::");
    if let Some(open) = tree.find('{') {
        let mut path = prefix.to_vec();
        path.extend(
            tree[..open]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned),
        );
        let close = tree.rfind('}').filter(|&c| c > open).unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        let mut depth = 0;
        let mut start = 0;
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    expand_into(&inner[start..i], &path, out);
                    start = i + 1;
                }
                _ => {}
            }
        }
        if start < inner.len() {
            expand_into(&inner[start..], &path, out);
        }
        return;
    }
    if tree.is_empty() {
        return;
    }
    let (path, alias) = match tree.split_once("as") {
        Some((p, a)) if p.ends_with(|c: char| c.is_alphanumeric() || c == '_') && is_ident(a) => {
            (p, Some(a.to_owned()))
        }
        _ => (tree, None),
    };
    let mut full = prefix.to_vec();
    full.extend(
        path.split("::")
            .filter(|s| !s.is_empty() && *s != "*")
            .map(str::to_owned),
    );
    if full.last().is_some_and(|s| s == "self") {
        full.pop();
    }
    if !full.is_empty() {
        out.push((full, alias.filter(|a| a != "_")));
    }
}

/// The paths `text` names in its code that start at this crate
/// (`crate::`, `super::`, `self::`) or at one of its `children`.
fn inline_paths(text: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i] as char;
        let starts_word = i == 0 || {
            let p = bytes[i - 1] as char;
            !(p.is_alphanumeric() || p == '_' || p == ':')
        };
        if starts_word && (c.is_alphabetic() || c == '_') {
            let end = text[i..]
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .map_or(text.len(), |e| i + e);
            let path: Vec<String> = text[i..end]
                .split("::")
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect();
            let first = path.first().map(String::as_str).unwrap_or_default();
            if text[i..end].contains("::")
                && (matches!(first, "crate" | "super" | "self") || children.contains(first))
            {
                out.push(path);
            }
            i = end.max(i + 1);
        } else {
            i += c.len_utf8().max(1);
        }
    }
    out
}

fn is_ident(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// The circles of `imports`: each a list of files, every one importing the
/// next and the last the first.
fn circles(imports: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<Vec<Module>> {
    let mut found = Vec::new();
    let mut seen: BTreeSet<Module> = BTreeSet::new();
    for start in imports.keys() {
        // The shortest way back to `start`, by breadth.
        let mut from: BTreeMap<Module, Module> = BTreeMap::new();
        let mut queue = std::collections::VecDeque::from([start.clone()]);
        let mut back = None;
        while let Some(m) = queue.pop_front() {
            for next in imports.get(&m).into_iter().flatten() {
                if next == start {
                    back = Some(m.clone());
                    break;
                }
                if !from.contains_key(next) {
                    from.insert(next.clone(), m.clone());
                    queue.push_back(next.clone());
                }
            }
            if back.is_some() {
                break;
            }
        }
        if let Some(mut at) = back {
            let mut circle = vec![at.clone()];
            while at != *start {
                at = from[&at].clone();
                circle.push(at.clone());
            }
            circle.reverse();
            if circle.iter().all(|m| !seen.contains(m)) {
                seen.extend(circle.iter().cloned());
                found.push(circle);
            }
        }
    }
    found
}

fn shown(circle: &[Module]) -> String {
    let name = |m: &Module| match m.is_empty() {
        true => "(root)".to_owned(),
        false => m.join("/"),
    };
    let mut parts: Vec<String> = circle.iter().map(name).collect();
    parts.push(name(&circle[0]));
    parts.join(" -> ")
}

#[test]
fn no_two_files_of_a_crate_import_each_other() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let trees = trees(workspace);
    // Every member read, none skipped for a path that moved, and no crate
    // under `crates/` left out of the list.
    for tree in &trees {
        assert!(workspace.join(tree).is_dir(), "no source tree {tree}");
    }
    for entry in std::fs::read_dir(workspace.join("crates")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let tree = format!("crates/{name}/src");
        assert!(trees.contains(&tree), "{tree} is not checked");
    }
    assert!(trees.contains(&"src".to_owned()));
    let mut found = Vec::new();
    for tree in &trees {
        let root = workspace.join(tree);
        for circle in circles(&Tree::read(&root).imports()) {
            found.push(format!("{tree}: {}", shown(&circle)));
        }
    }
    assert!(
        found.is_empty(),
        "files importing each other (move what they share below both):\n{}",
        found.join("\n")
    );
}

/// The check sees a circle through a re-export and through a path in the
/// code, and takes a `mod.rs` that gathers its children's names for none.
#[test]
fn a_circle_is_seen_through_re_exports_and_paths_in_code() {
    let tree = |files: &[(&str, &str)]| {
        Tree::of(
            files
                .iter()
                .map(|(m, t)| {
                    let module = m.split('/').filter(|s| !s.is_empty()).map(str::to_owned);
                    (module.collect(), (*t).to_owned())
                })
                .collect(),
        )
    };
    let gathering = tree(&[
        (
            "",
            "mod fleet;\nuse tracecost_cost as cost;\npub use fleet::Fleet;\n",
        ),
        (
            "fleet",
            "mod answer;\nmod summary;\npub use answer::Answer;\npub use summary::Summary;\npub struct Fleet;\n",
        ),
        (
            "fleet/answer",
            "use super::summary::Summary;\nuse crate::cost::Price;\npub struct Answer;\n",
        ),
        (
            "fleet/summary",
            "pub struct Summary;\n#[cfg(test)]\nmod tests {\n    use crate::fleet::Answer;\n}\n",
        ),
    ]);
    assert!(circles(&gathering.imports()).is_empty());
    let circled = tree(&[
        ("", "mod fleet;\n"),
        (
            "fleet",
            "mod answer;\nmod summary;\npub use answer::Answer;\n",
        ),
        (
            "fleet/answer",
            "use super::summary::Summary;\npub struct Answer;\n",
        ),
        (
            "fleet/summary",
            "pub struct Summary { a: Option<crate::fleet::Answer> }\n",
        ),
    ]);
    assert_eq!(
        circles(&circled.imports())
            .iter()
            .map(|c| shown(c))
            .collect::<Vec<_>>(),
        ["fleet/answer -> fleet/summary -> fleet/answer"]
    );
}

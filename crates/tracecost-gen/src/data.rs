//! Reading the generators' data files: word lists, templates, prose and
//! tool definitions under `data/`, embedded in the binary with
//! `include_str!`.
//!
//! Three kinds of file:
//!
//! - list files (`*.txt` with `[name]` lines): named lists, read with
//!   [`Lists`];
//! - prose (`*.md`, `*.yml`, `manifest.toml`, `description.txt`): one
//!   text, read with [`text_file`];
//! - JSON (`*.json`): structured records, read with `serde_json` by the
//!   generator that owns them.
//!
//! A list file looks like this:
//!
//! ```text
//! # Comment lines start with '#'; blank lines are skipped.
//! [nouns]
//! config
//! store
//! ```
//!
//! A line `[name]` starts a list; every other line is one entry of the list
//! above it, taken verbatim. The files are compile-time data, so a mistake
//! in them is a bug in the generator, not an input error: each generator
//! loads its data once and panics with the [`DataError`] on failure, and its
//! unit tests load every file, so a broken file fails `cargo test` first.

use super::build::{J, tool_def};
use tracecost_engine::message::ToolDefinition;

/// A mistake in a generator's data file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum DataError {
    /// An entry comes before the first `[name]` line.
    #[error("{file}:{line}: entry before the first [name] line")]
    OutsideList {
        /// File, relative to `data/`.
        file: &'static str,
        /// 1-based line number.
        line: usize,
    },
    /// An entry starts or ends with white space, which the file does not
    /// show.
    #[error("{file}:{line}: entry starts or ends with white space")]
    Blank {
        /// File, relative to `data/`.
        file: &'static str,
        /// 1-based line number.
        line: usize,
    },
    /// The same list name appears twice in one file.
    #[error("{file}:{line}: list [{name}] appears twice")]
    Repeated {
        /// File, relative to `data/`.
        file: &'static str,
        /// 1-based line number of the second `[name]` line.
        line: usize,
        /// List name.
        name: &'static str,
    },
    /// A list has no entries (the generators pick from every list).
    #[error("{file}: list [{name}] has no entries")]
    Empty {
        /// File, relative to `data/`.
        file: &'static str,
        /// List name.
        name: &'static str,
    },
    /// The generator asks for a list the file does not have.
    #[error("{file}: no list [{name}]")]
    Missing {
        /// File, relative to `data/`.
        file: &'static str,
        /// List name.
        name: String,
    },
    /// The file has a list the generator does not use.
    #[error("{file}: list [{name}] is not used")]
    Unused {
        /// File, relative to `data/`.
        file: &'static str,
        /// List name.
        name: &'static str,
    },
    /// An entry or record does not have the expected shape.
    #[error("{file}: {message}")]
    Malformed {
        /// File, relative to `data/`.
        file: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// The named lists of one list file, each entry borrowed from the embedded
/// text.
#[derive(Debug)]
pub(crate) struct Lists {
    file: &'static str,
    lists: Vec<(&'static str, Vec<&'static str>)>,
}

impl Lists {
    /// Parses `text`, the contents of `file` (named in errors).
    pub(crate) fn parse(file: &'static str, text: &'static str) -> Result<Self, DataError> {
        let mut lists: Vec<(&'static str, Vec<&'static str>)> = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            if raw.is_empty() || raw.starts_with('#') {
                continue;
            }
            if let Some(name) = raw.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                if lists.iter().any(|(n, _)| *n == name) {
                    return Err(DataError::Repeated { file, line, name });
                }
                lists.push((name, Vec::new()));
                continue;
            }
            if raw.trim() != raw {
                return Err(DataError::Blank { file, line });
            }
            match lists.last_mut() {
                Some((_, entries)) => entries.push(raw),
                None => return Err(DataError::OutsideList { file, line }),
            }
        }
        if let Some((name, _)) = lists.iter().find(|(_, entries)| entries.is_empty()) {
            return Err(DataError::Empty { file, name });
        }
        Ok(Self { file, lists })
    }

    /// Removes and returns the list `name`.
    pub(crate) fn take(&mut self, name: &str) -> Result<Vec<&'static str>, DataError> {
        match self.lists.iter().position(|(n, _)| *n == name) {
            Some(i) => Ok(self.lists.remove(i).1),
            None => Err(DataError::Missing {
                file: self.file,
                name: name.to_owned(),
            }),
        }
    }

    /// Checks that every list was taken, so no list in the file is dead.
    pub(crate) fn finish(self) -> Result<(), DataError> {
        match self.lists.first() {
            Some((name, _)) => Err(DataError::Unused {
                file: self.file,
                name,
            }),
            None => Ok(()),
        }
    }
}

/// Declares a struct of named lists read from one list file under `data/`
/// (path given relative to `data/`): each field holds the list of the same
/// name, `load` reads them all, and a list the struct does not name is an
/// error, so file and code cannot drift apart. The fields have the struct's
/// visibility, so the modules of one generator can share its lists.
macro_rules! list_file {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident = $file:literal {
            $($(#[$field_attr:meta])* $field:ident,)*
        }
    ) => {
        $(#[$attr])*
        $vis struct $name {
            $($(#[$field_attr])* $vis $field: Vec<&'static str>,)*
        }

        impl $name {
            fn load() -> Result<Self, $crate::data::DataError> {
                // A relative path would be read from the folder of the file
                // that invokes the macro; from the crate root, a generator's
                // modules may sit at any depth under `src/`.
                let mut lists = $crate::data::Lists::parse(
                    $file,
                    include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/src/data/", $file)),
                )?;
                let loaded = Self {
                    $($field: lists.take(stringify!($field))?,)*
                };
                lists.finish()?;
                Ok(loaded)
            }
        }
    };
}
pub(crate) use list_file;

/// The loaded data, or a panic naming the data file and its mistake. The
/// files are embedded at compile time and every generator's unit tests load
/// all of its files, so this cannot fire on a tested build.
pub(crate) fn loaded<T>(r: Result<T, DataError>) -> T {
    r.unwrap_or_else(|e| panic!("generator data file {e}"))
}

/// The text of a prose file: its contents without the line break that ends
/// the file, so an editor adding or keeping that line break changes
/// nothing. A text that must end with a line break gets it from the code.
pub(crate) fn text_file(contents: &'static str) -> &'static str {
    contents.strip_suffix('\n').unwrap_or(contents)
}

/// `a: b` → `("a", "b")`: the split of list entries that pair a key with a
/// text (the key has no `": "` in it).
pub(crate) fn key_and_text(
    file: &'static str,
    entry: &'static str,
) -> Result<(&'static str, &'static str), DataError> {
    entry
        .split_once(": ")
        .filter(|(key, text)| !key.is_empty() && !text.is_empty())
        .ok_or_else(|| DataError::Malformed {
            file,
            message: format!("entry {entry:?} is not `key: text`"),
        })
}

/// The records of a JSON data file, strings borrowed from the embedded
/// text where they have no escapes.
pub(crate) fn json_records<T: serde::Deserialize<'static>>(
    file: &'static str,
    text: &'static str,
) -> Result<T, DataError> {
    serde_json::from_str(text).map_err(|e| DataError::Malformed {
        file,
        message: e.to_string(),
    })
}

/// `records` when no `problem` was found in them, else the problem as a
/// [`DataError::Malformed`] of `file`.
pub(crate) fn checked<T>(
    file: &'static str,
    records: T,
    problem: Option<String>,
) -> Result<T, DataError> {
    match problem {
        Some(message) => Err(DataError::Malformed { file, message }),
        None => Ok(records),
    }
}

/// One record of a `tools.json` file.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolRecord {
    name: String,
    description: String,
    input_schema: serde_json::Value,
}

/// The tool definitions of a `tools.json` file: an array of `{"name",
/// "description", "input_schema"}` objects, in manifest order. The schema
/// is written back in its own member order.
pub(crate) fn tool_defs(file: &'static str, text: &str) -> Result<Vec<ToolDefinition>, DataError> {
    let malformed = |message: String| DataError::Malformed { file, message };
    let records: Vec<ToolRecord> =
        serde_json::from_str(text).map_err(|e| malformed(e.to_string()))?;
    records
        .iter()
        .map(|r| {
            let schema = J::from_json(&r.input_schema)
                .map_err(|e| malformed(format!("tool {:?}: {e}", r.name)))?;
            Ok(tool_def(&r.name, &r.description, &schema))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_read_by_name_and_must_all_be_used() {
        let mut l = Lists::parse(
            "t.txt",
            "# words\n[a]\nx y\n\nz\n[b]\n{n} is {st}\n[c]\nonly\n",
        )
        .unwrap();
        assert_eq!(l.take("b").unwrap(), ["{n} is {st}"]);
        assert_eq!(l.take("a").unwrap(), ["x y", "z"]);
        assert_eq!(
            l.take("a").unwrap_err(),
            DataError::Missing {
                file: "t.txt",
                name: "a".into()
            }
        );
        assert_eq!(
            l.finish().unwrap_err(),
            DataError::Unused {
                file: "t.txt",
                name: "c"
            }
        );
        let mut l = Lists::parse("t.txt", "[a]\r\nx\r\n").unwrap();
        assert_eq!(l.take("a").unwrap(), ["x"]);
        assert!(l.finish().is_ok());
    }

    #[test]
    fn malformed_list_files_are_errors() {
        let err = |text| Lists::parse("t.txt", text).unwrap_err();
        assert_eq!(
            err("x\n[a]\ny\n"),
            DataError::OutsideList {
                file: "t.txt",
                line: 1
            }
        );
        assert_eq!(
            err("[a]\nx \n"),
            DataError::Blank {
                file: "t.txt",
                line: 2
            }
        );
        assert_eq!(
            err("[a]\n x\n"),
            DataError::Blank {
                file: "t.txt",
                line: 2
            }
        );
        assert_eq!(
            err("[a]\nx\n[a]\ny\n"),
            DataError::Repeated {
                file: "t.txt",
                line: 3,
                name: "a"
            }
        );
        assert_eq!(
            err("[a]\n[b]\ny\n"),
            DataError::Empty {
                file: "t.txt",
                name: "a"
            }
        );
        assert!(
            err("[a]\nx\n[b]\n")
                .to_string()
                .contains("[b] has no entries")
        );
    }

    #[test]
    fn tool_records_become_definitions_in_order() {
        let tools = tool_defs(
            "t.json",
            r#"[{"name":"b","description":"d","input_schema":{"type":"object","properties":{}}},
                {"name":"a","description":"e","input_schema":{"minimum":-1}}]"#,
        )
        .unwrap();
        assert_eq!(
            tools[0].to_json(),
            r#"{"name":"b","description":"d","input_schema":{"type":"object","properties":{}}}"#
        );
        assert_eq!(tools.len(), 2);
        for bad in [
            r#"[{"name":"a","description":"d"}]"#,
            r#"[{"name":"a","description":"d","input_schema":{},"x":1}]"#,
            r#"[{"name":"a","description":"d","input_schema":{"max":0.5}}]"#,
            "[",
        ] {
            assert!(
                matches!(tool_defs("t.json", bad), Err(DataError::Malformed { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn text_files_lose_only_their_final_line_break() {
        assert_eq!(text_file("a\nb\n"), "a\nb");
        assert_eq!(text_file("a\n\n"), "a\n");
        assert_eq!(text_file("a"), "a");
        assert_eq!(text_file(""), "");
    }

    #[test]
    fn key_and_text_split_at_the_first_colon_space() {
        assert_eq!(
            key_and_text("t.txt", "lint: a: b").unwrap(),
            ("lint", "a: b")
        );
        assert!(key_and_text("t.txt", "no separator").is_err());
        assert!(key_and_text("t.txt", ": empty key").is_err());
    }
}

//! The input loader's two ways of giving traces agree: `each` hands over,
//! in the folder's name order, what `load` holds, telling where a trace
//! alone on a line of a JSON Lines file starts; and its progress hears
//! of the files read.

use std::path::PathBuf;
use std::sync::Mutex;

use tracecost_import::inputs::{InputLoader, InputOptions};
use tracecost_trace::progress::{Progress, Unit};
use tracecost_trace::{to_json, to_json_line};

#[derive(Default)]
struct Stages(Mutex<Vec<String>>);

impl Progress for Stages {
    fn start(&self, stage: &str, _: u64, _: Unit) {
        self.0.lock().unwrap().push(stage.to_owned());
    }
    fn advance(&self, _: u64) {}
}

#[test]
fn each_hands_over_what_load_holds_with_the_lines_read() {
    let dir = tempfile::tempdir().unwrap();
    let [a, b, c] = [1, 2, 3].map(|seed| tracecost_gen::session(4, seed));
    // Name order: the document first, then the two lines.
    std::fs::write(dir.path().join("a.json"), to_json(&a)).unwrap();
    let first = to_json_line(&b);
    let lines = format!("{first}{}", to_json_line(&c));
    std::fs::write(dir.path().join("b.jsonl"), lines).unwrap();
    let paths = [dir.path().to_path_buf()];
    let opts = InputOptions::default();

    let held = InputLoader::new(&paths, &opts).load().unwrap();
    let names: Vec<&str> = held.traces.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, [a.name.as_str(), b.name.as_str(), c.name.as_str()]);

    let stages = Stages::default();
    let mut handed: Vec<(String, Option<(PathBuf, u64)>)> = Vec::new();
    let loaded = InputLoader::new(&paths, &opts)
        .progress(&stages)
        .each(&mut |t, origin| {
            handed.push((t.name, origin.map(|(p, o)| (p.to_path_buf(), o.offset))));
            Ok(())
        })
        .unwrap();
    assert!(loaded.traces.is_empty(), "each holds nothing");
    let jsonl = dir.path().join("b.jsonl");
    assert_eq!(
        handed,
        [
            (a.name.clone(), None),
            (b.name.clone(), Some((jsonl.clone(), 0))),
            (c.name.clone(), Some((jsonl, first.len() as u64))),
        ]
    );
    let stages = stages.0.into_inner().unwrap();
    assert!(
        stages.iter().any(|s| s.contains("a.json")) && stages.iter().any(|s| s.contains("b.jsonl")),
        "{stages:?}"
    );
}

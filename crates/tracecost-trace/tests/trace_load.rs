//! Loading and validating canonical traces.

use tracecost_trace::{Loader, TraceError, load_str, to_json, traces_to_json};

fn trace_json(messages: &str, calls: &str) -> String {
    format!(
        r#"{{"format":"tracecost.trace/v1","name":"t","model":"claude-sonnet-4-5","system":[{{"type":"text","text":"You are helpful."}}],"tools":[{{"name":"fetch","input_schema":{{"type":"object"}}}}],"messages":[{messages}],"calls":[{calls}]}}"#
    )
}

const GOOD_MESSAGES: &str = r#"{"role":"user","content":"hi"},
{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"fetch","input":{"b":2,"a":1.0}}]},
{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"result"}]},
{"role":"assistant","content":[{"type":"text","text":"done"}]}"#;

fn err(json: &str) -> String {
    load_str(json, "x.json").unwrap_err().to_string()
}

#[test]
fn loads_and_rewrites_byte_identically() {
    let src = trace_json(
        GOOD_MESSAGES,
        r#"{"messages":1,"start_ms":1000,"usage":{"input_tokens":10,"output_tokens":5}},
           {"messages":3,"start_ms":2000,"cache_markers":[{"tool":0,"ttl":"1h"},{"message":2,"block":0}],"usage":{"input_tokens":3,"cache_creation_input_tokens":20,"cache_read_input_tokens":7,"cache_creation":{"ephemeral_5m_input_tokens":20,"ephemeral_1h_input_tokens":0},"output_tokens":9}}"#,
    );
    let loaded = load_str(&src, "x.json").unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    let t = &loaded.traces[0];
    assert_eq!(t.messages.len(), 4);
    assert_eq!(t.calls[1].recorded_usage().unwrap().total_input(), Some(30));
    assert!(t.has_markers() && t.has_timestamps());
    let written = to_json(t);
    assert!(
        written.contains(r#""input":{"b":2,"a":1.0}"#),
        "tool input bytes kept"
    );
    let again = load_str(&written, "y.json").unwrap();
    assert_eq!(&again.traces[0], t);
    assert_eq!(to_json(&again.traces[0]), written);
}

#[test]
fn prompt_changes_apply_from_their_call_on() {
    let src = trace_json(
        GOOD_MESSAGES,
        r#"{"messages":1},{"messages":3,"tools":[{"name":"fetch2"}]},{"messages":4}"#,
    );
    let t = &load_str(&src, "x.json").unwrap().traces[0];
    assert_eq!(t.prompt_of(&t.calls[0]).tools[0].name(), "fetch");
    assert_eq!(t.prompt_of(&t.calls[2]).tools[0].name(), "fetch2");
    assert_eq!(
        t.prompt_of(&t.calls[2]).system[0].to_json(),
        r#"{"type":"text","text":"You are helpful."}"#
    );
    let again = load_str(&to_json(t), "y.json").unwrap();
    assert_eq!(&again.traces[0], t);
}

#[test]
fn several_traces_in_one_file() {
    let one = load_str(&trace_json(GOOD_MESSAGES, r#"{"messages":4}"#), "x")
        .unwrap()
        .traces
        .remove(0);
    let mut two = one.clone();
    two.name = "second".into();
    let json = traces_to_json(&[one.clone(), two.clone()]);
    let loaded = load_str(&json, "x").unwrap();
    assert_eq!(loaded.traces, vec![one, two]);
}

#[test]
fn errors_name_the_place_and_what_was_expected() {
    let cases: Vec<(String, &str)> = vec![
        (String::new(), "x.json:1:0: EOF while parsing a value"),
        (
            r#"{"format":"tracecost.trace/v1","name":"#.into(),
            "x.json:1:38: EOF while parsing a value",
        ),
        (
            r#"{"name":"t"}"#.into(),
            r#"x.json: at /format: expected a "format": "tracecost.trace/v1" member"#,
        ),
        (
            r#"{"format":"v0"}"#.into(),
            // A value that is not a tracecost format is not echoed: the file
            // may be anything, its values secrets.
            r#"x.json: at /format: expected "tracecost.trace/v1", found the format of something else"#,
        ),
        (
            trace_json(
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"nope","content":"x"}]}"#,
                r#"{"messages":1}"#,
            ),
            r#"x.json: at /messages/0/content/0/tool_use_id: expected the id of an earlier tool_use, "nope" has none"#,
        ),
        (
            trace_json(
                r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"a","name":"f","input":{}}]}"#,
                r#"{"messages":1}"#,
            ),
            r#"x.json: at /messages/0/content/1/id: expected a unique tool_use id, "a" is used twice"#,
        ),
        (
            trace_json(GOOD_MESSAGES, r#"{"messages":5}"#),
            "x.json: at /calls/0/messages: expected at most 4 (the history's length), found 5",
        ),
        (
            trace_json(GOOD_MESSAGES, r#"{"messages":3},{"messages":2}"#),
            "x.json: at /calls/1/messages: expected at least 3 (the previous call's count; histories only grow), found 2",
        ),
        (
            trace_json(
                GOOD_MESSAGES,
                r#"{"messages":3,"usage":{"input_tokens":-4}}"#,
            ),
            "x.json:4:0: invalid value: integer `-4`, expected u64",
        ),
        (
            trace_json(
                GOOD_MESSAGES,
                r#"{"messages":3,"usage":{"input_tokens":999999999999}}"#,
            ),
            "x.json: at /calls/0/usage/input_tokens: expected a token count of at most 100000000, found 999999999999",
        ),
        (
            trace_json(
                r#"{"role":"user","content":[{"type":"text","text":5}]}"#,
                r#"{"messages":1}"#,
            ),
            "x.json: at /messages/0/content/0/text: expected a string",
        ),
        (
            trace_json(
                GOOD_MESSAGES,
                r#"{"messages":3,"cache_markers":[{"message":7}]}"#,
            ),
            "x.json: at /calls/0/cache_markers/0/message: expected a message index below 3 (this call's messages)",
        ),
        (
            "[1]".into(),
            "x.json:1:1: invalid type: sequence, expected a JSON object (a tracecost trace)",
        ),
        // Messages are made as they are read; what is wrong is still told
        // in the order of the checks: the document's syntax, then each
        // message in turn.
        (
            trace_json(
                r#"{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]},
{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"f","input":{}}]},
{"role":"robot","content":"x"}"#,
                r#"{"messages":1}"#,
            ),
            r#"x.json: at /messages/1/content/0/id: expected a unique tool_use id, "a" is used twice"#,
        ),
        (
            trace_json(
                r#"{"role":"user","content":"hi"},{"role":"robot","content":"x"},{"role":"user","content":[]}"#,
                r#"{"messages":1}"#,
            ),
            r#"x.json: at /messages/1/role: expected "user" or "assistant""#,
        ),
        (
            trace_json(r#"{"role":"robot","content":"x"},5"#, r#"{"messages":1}"#),
            "x.json:1:0: invalid type: integer `5`, expected a JSON object",
        ),
        (
            r#"{"format":"tracecost.trace/v1","name":"t","model":"m","messages":{},"calls":[]}"#
                .into(),
            "x.json:1:0: invalid type: map, expected a sequence",
        ),
        (
            trace_json(
                &format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)),
                r#"{"messages":1}"#,
            ),
            "x.json:1:160: invalid type: sequence, expected a JSON object",
        ),
    ];
    for (json, expected) in cases {
        let got = err(&json);
        // Syntax errors carry line:column; the column varies with the
        // fixture's layout, so compare the line and the message.
        if expected.starts_with("x.json:") && !expected.starts_with("x.json: at") {
            let (exp_head, exp_msg) = expected.split_at(expected.find(": ").unwrap());
            let (got_head, got_msg) = got.split_at(got.find(": ").unwrap());
            assert_eq!(got_msg, exp_msg, "{json}");
            assert_eq!(
                got_head.split(':').nth(1),
                exp_head.split(':').nth(1),
                "line of {got}"
            );
        } else {
            assert_eq!(got, expected, "{json}");
        }
    }
}

#[test]
fn warnings_do_not_stop_the_load() {
    let src = trace_json(
        r#"{"role":"user","content":[{"type":"mystery","x":1}]},{"role":"assistant","content":"ok"}"#,
        r#"{"messages":1,"start_ms":5000},{"messages":2,"start_ms":4000}"#,
    );
    let loaded = load_str(&src, "x.json").unwrap();
    let w: Vec<String> = loaded.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        w,
        [
            r#"x.json: at /messages/0/content/0/type: unknown block type "mystery", kept as is"#,
            "x.json: at /calls/1/start_ms: starts 1000 ms before the previous call",
        ]
    );
    assert!(to_json(&loaded.traces[0]).contains(r#"{"type":"mystery","x":1}"#));
}

#[test]
fn a_directory_or_missing_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let e = Loader::new(dir.path()).load().unwrap_err();
    assert!(matches!(e, TraceError::Io { .. }));
    assert!(
        e.to_string()
            .ends_with("is a directory, expected a trace file"),
        "{e}"
    );
    let e = Loader::new(&dir.path().join("missing.json"))
        .load()
        .unwrap_err();
    assert!(e.to_string().contains("missing.json: cannot read:"), "{e}");
}

#[test]
fn deep_nesting_inside_a_kept_value_neither_crashes_nor_changes() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let src = trace_json(
        &format!(r#"{{"role":"user","content":[{{"type":"text","text":"a","x":{deep}}}]}}"#),
        r#"{"messages":1}"#,
    );
    let loaded = load_str(&src, "x.json").unwrap();
    assert!(to_json(&loaded.traces[0]).contains(&deep));
}

#[test]
fn a_json_lines_file_holds_a_trace_per_line_and_errors_name_the_line() {
    use tracecost_trace::to_json_line;
    let one = load_str(
        &trace_json(GOOD_MESSAGES, r#"{"messages":1},{"messages":3}"#),
        "t",
    )
    .unwrap()
    .traces
    .remove(0);
    let mut two = one.clone();
    two.name = "u".into();
    let line = to_json_line(&one);
    assert_eq!(line.matches('\n').count(), 1, "one line: {line}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.jsonl");
    // A byte-order mark and a blank line are passed over.
    let text = format!("\u{feff}{line}\n{}", to_json_line(&two));
    std::fs::write(&path, &text).unwrap();
    let loaded = Loader::new(&path).load().unwrap();
    assert_eq!(loaded.traces.len(), 2);
    let mut want = [one.clone(), two.clone()];
    for t in &mut want {
        t.source = Some(path.display().to_string());
    }
    assert_eq!(loaded.traces, want);
    // Each line loads to the same trace as its canonical document.
    assert_eq!(to_json(&loaded.traces[0]), to_json(&one));
    // A bad line is named by its number, with the pointer or the column.
    let bad = format!(
        "{line}{}",
        line.replace("\"messages\":1", "\"messages\":99")
    );
    std::fs::write(&path, &bad).unwrap();
    let e = Loader::new(&path).load().unwrap_err().to_string();
    assert!(e.contains("fleet.jsonl:2: at /calls/0"), "{e}");
    std::fs::write(&path, format!("{line}{{\"format\": \n")).unwrap();
    let e = Loader::new(&path).load().unwrap_err().to_string();
    assert!(e.contains("fleet.jsonl:2:"), "{e}");
    // So is a line that is not UTF-8, by the column where it stops being.
    let mut bytes = format!("{line}\n{line}").into_bytes();
    bytes.insert(line.len() + 1 + 5, 0xff);
    std::fs::write(&path, &bytes).unwrap();
    let e = Loader::new(&path).load().unwrap_err().to_string();
    assert!(e.ends_with("fleet.jsonl:3:6: not UTF-8"), "{e}");
    // A trace document over several lines, named .jsonl, is read whole.
    std::fs::write(&path, to_json(&one)).unwrap();
    assert_eq!(Loader::new(&path).load().unwrap().traces.len(), 1);
    // So is a multi-trace document.
    std::fs::write(&path, traces_to_json(&[one, two])).unwrap();
    assert_eq!(Loader::new(&path).load().unwrap().traces.len(), 2);
}

/// Lines a reader knows are handed back to it in their place, not parsed:
/// the others are parsed (on every core, a batch at a time) and handed
/// over in the file's order; each known line comes with where it is (its
/// offset after a byte-order mark, its length, its hash), and a damaged
/// line the reader knows is never parsed.
#[test]
fn known_lines_are_taken_in_their_place_not_parsed() {
    use std::path::Path;
    use tracecost_trace::{
        KnownLines, LineDigest, LineOrigin, line_digest, line_hash, to_json_line,
    };

    struct Knows {
        known: Vec<LineDigest>,
        log: std::rc::Rc<std::cell::RefCell<Vec<String>>>,
    }
    impl KnownLines for Knows {
        fn knows(&mut self, _: &Path, lines: &[LineDigest]) -> Vec<bool> {
            lines.iter().map(|l| self.known.contains(l)).collect()
        }
        fn take(&mut self, _: &Path, o: LineOrigin) -> Result<(), TraceError> {
            (self.log.borrow_mut()).push(format!("take {} {} {}", o.offset, o.len, o.hash));
            Ok(())
        }
        fn parsed(&mut self, alone: bool) {
            self.log.borrow_mut().push(format!("parsed {alone}"));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.jsonl");
    let one = |name: &str| {
        let mut t = load_str(&trace_json(GOOD_MESSAGES, r#"{"messages":1}"#), "x")
            .unwrap()
            .traces
            .remove(0);
        t.name = name.to_owned();
        to_json_line(&t)
    };
    // The second line is damaged but known; the fourth known too.
    let lines = [
        one("a"),
        "{\"format\":\"tracecost.trace/v1\", damaged\n".to_owned(),
        one("c"),
        one("d"),
        one("e"),
    ];
    std::fs::write(&path, format!("\u{feff}{}", lines.concat())).unwrap();
    let log = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    let mut k = Knows {
        known: vec![
            line_digest(lines[1].as_bytes()),
            line_digest(lines[3].as_bytes()),
        ],
        log: log.clone(),
    };
    Loader::new(&path)
        .known(Some(&mut k))
        .each(&mut |t, _| {
            log.borrow_mut().push(format!("emit {}", t.name));
            Ok(())
        })
        .unwrap();
    let at = |i: usize| 3 + lines[..i].iter().map(String::len).sum::<usize>();
    let take = |i: usize| {
        format!(
            "take {} {} {}",
            at(i),
            lines[i].len(),
            line_hash(lines[i].as_bytes())
        )
    };
    assert_eq!(
        *log.borrow(),
        [
            "emit a".to_owned(),
            "parsed true".to_owned(),
            take(1),
            "emit c".to_owned(),
            "parsed true".to_owned(),
            take(3),
            "emit e".to_owned(),
            "parsed true".to_owned(),
        ]
    );
}

/// The loader's options compose: with `skipping`, a damaged line of a JSON
/// Lines file costs its own trace and is handed over with its place, the
/// others loaded in order with their origins; without it, the same line
/// is the load's error. `progress` hears of every byte read.
#[test]
fn the_loader_skips_a_damaged_line_only_when_asked_and_reports_the_bytes() {
    use std::sync::Mutex;
    use tracecost_trace::progress::{Progress, Unit};
    use tracecost_trace::to_json_line;

    #[derive(Default)]
    struct Heard(Mutex<(Vec<(String, u64)>, u64)>);
    impl Progress for Heard {
        fn start(&self, stage: &str, total: u64, _: Unit) {
            self.0.lock().unwrap().0.push((stage.to_owned(), total));
        }
        fn advance(&self, n: u64) {
            self.0.lock().unwrap().1 += n;
        }
    }

    let one = load_str(&trace_json(GOOD_MESSAGES, r#"{"messages":1}"#), "t")
        .unwrap()
        .traces
        .remove(0);
    let mut two = one.clone();
    two.name = "u".into();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fleet.jsonl");
    let text = format!(
        "{}{{\"format\": \n{}",
        to_json_line(&one),
        to_json_line(&two)
    );
    std::fs::write(&path, &text).unwrap();

    let e = Loader::new(&path).load().unwrap_err().to_string();
    assert!(e.contains("fleet.jsonl:2:"), "{e}");

    let heard = Heard::default();
    let mut skipped = Vec::new();
    let mut skip = |e: TraceError| skipped.push(e.to_string());
    let mut read = Vec::new();
    let warnings = Loader::new(&path)
        .progress(&heard)
        .skipping(Some(&mut skip))
        .each(&mut |t, origin| {
            read.push((t.name, origin.is_some()));
            Ok(())
        })
        .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(read, [("t".to_owned(), true), ("u".to_owned(), true)]);
    assert_eq!(skipped.len(), 1, "{skipped:?}");
    assert!(skipped[0].contains("fleet.jsonl:2:"), "{skipped:?}");
    let (stages, bytes) = &*heard.0.lock().unwrap();
    assert_eq!(stages.len(), 1, "{stages:?}");
    assert_eq!(stages[0].1, text.len() as u64);
    assert_eq!(*bytes, text.len() as u64);
}

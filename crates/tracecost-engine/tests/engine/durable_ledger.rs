//! `DurableLedger` through its public API, including real child processes
//! that record into the same directory and get killed mid-write.
//!
//! Child processes are this test binary re-run with `child_entry` selected
//! and its instructions in environment variables. Without them,
//! `child_entry` checks the child's part itself: a child it runs records
//! what it was told, each payload recalled whole.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tracecost_engine::handle::Handle;
use tracecost_engine::ledger::{DurableLedger, LedgerError, ToolResultLedger};
use tracecost_engine::recall::{RecallRequest, fetch};

const ENV_DIR: &str = "TRACECOST_LEDGER_CHILD_DIR";
const ENV_MODE: &str = "TRACECOST_LEDGER_CHILD_MODE";
const ENV_TAG: &str = "TRACECOST_LEDGER_CHILD_TAG";
const TOOL: &str = "probe";
/// Upper bound for the "forever" child, so a child nobody kills still ends.
const FOREVER_LIMIT: usize = 100_000;

fn call_id(i: usize) -> String {
    format!("call-{i}")
}

fn args(i: usize) -> String {
    format!(r#"{{"i":{i}}}"#)
}

/// Deterministic payload of record `i` written by a child tagged `tag`:
/// multi-byte text, CR LF, NUL, and a size that varies with `i` (some large
/// enough to need several write calls).
fn payload(tag: &str, i: usize) -> String {
    let mut s = format!("{tag} record {i}\r\nünïcödé 日本 🦀\u{0}\n");
    let filler = (i * 7919) % 40_000;
    let unit = format!("{i:x}é\u{0}\r\n");
    while s.len() < filler {
        s.push_str(&unit);
    }
    s
}

/// As a child (the environment names a ledger and a mode): records what the
/// environment says, each payload recalled whole from the ledger as soon as
/// it is recorded. Run by the tests, it runs itself as a child told to
/// record three results, and finds all three in the ledger afterwards.
#[test]
fn child_entry() {
    let (Ok(dir), Ok(mode)) = (std::env::var(ENV_DIR), std::env::var(ENV_MODE)) else {
        let tmp = tempfile::tempdir().unwrap();
        let child = spawn_child(tmp.path(), "count:3", "self", Stdio::piped());
        wait_ok(child);
        let ledger = DurableLedger::open(tmp.path()).unwrap();
        for i in 0..3 {
            let rec = ledger.get_by_call_id(&call_id(i)).unwrap().unwrap();
            assert_eq!(&*rec.payload, payload("self", i), "record {i}");
            assert_eq!(&*rec.tool_args, args(i), "record {i}");
        }
        assert!(ledger.get_by_call_id(&call_id(3)).unwrap().is_none());
        assert_eq!(index_lines(tmp.path()).len(), 3);
        return;
    };
    let tag = std::env::var(ENV_TAG).unwrap_or_default();
    let ledger = DurableLedger::open(&dir).unwrap();
    let mut out = std::io::stdout();
    writeln!(out, "READY").unwrap();
    out.flush().unwrap();
    let n = match mode.strip_prefix("count:") {
        Some(n) => n.parse::<usize>().unwrap(),
        None => FOREVER_LIMIT,
    };
    for i in 0..n {
        let text = payload(&tag, i);
        let h = ledger.record(&call_id(i), TOOL, &args(i), &text).unwrap();
        assert_eq!(fetch(&ledger, &h.mem_id, &RecallRequest::full()), text);
    }
}

/// `child_entry` by its name in this test binary: its module, then itself.
const CHILD_TEST: &str = "durable_ledger::child_entry";

fn spawn_child(dir: &Path, mode: &str, tag: &str, stdout: Stdio) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([CHILD_TEST, "--exact", "--nocapture", "--test-threads=1"])
        .env(ENV_DIR, dir)
        .env(ENV_MODE, mode)
        .env(ENV_TAG, tag)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap()
}

fn wait_ok(child: Child) {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "child failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The complete lines of the index, parsed.
fn index_lines(dir: &Path) -> Vec<serde_json::Value> {
    let text = fs::read_to_string(dir.join("index.jsonl")).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'), "torn tail left");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn round_trip_through_the_public_api() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("nested").join("ledger");
    let content = "a\r\nb\u{0}c ünï 🦀\n";
    let h = {
        let l = DurableLedger::open(&dir).unwrap();
        assert_eq!(l.dir(), dir);
        let h = l
            .record("toolu_1", "bash", r#"{"cmd":"ls"}"#, content)
            .unwrap();
        assert_eq!(fetch(&l, &h.mem_id, &RecallRequest::full()), content);
        h
    };
    let l = DurableLedger::open(&dir).unwrap();
    let rec = l.get_by_call_id("toolu_1").unwrap().unwrap();
    assert_eq!(rec.handle, h);
    assert_eq!(&*rec.payload, content);
    assert_eq!(&*rec.tool_args, r#"{"cmd":"ls"}"#);
    assert_eq!(fetch(&l, &h.mem_id, &RecallRequest::full()), content);
    assert_eq!(
        fetch(&l, "tm_missing", &RecallRequest::full()),
        "[tool_memory not found: tm_missing]"
    );
    // The same result again, fresh instance: the original handle back.
    assert_eq!(l.record("toolu_1", "bash", "{}", content).unwrap(), h);
    // Same id, different content (another conversation reusing the id): a
    // record of its own; the first stub still recalls the first content,
    // and the id alone no longer says which one is meant.
    let other = l.record("toolu_1", "bash", "{}", "changed").unwrap();
    assert_ne!(other.mem_id, h.mem_id);
    assert_eq!(fetch(&l, &h.mem_id, &RecallRequest::full()), content);
    assert_eq!(fetch(&l, &other.mem_id, &RecallRequest::full()), "changed");
    assert!(matches!(
        l.get_by_call_id("toolu_1"),
        Err(LedgerError::AmbiguousCallId { .. })
    ));
}

#[test]
fn torn_write_is_ignored_and_repaired_on_reopen() {
    let tmp = tempfile::tempdir().unwrap();
    {
        let l = DurableLedger::open(tmp.path()).unwrap();
        for i in 0..3 {
            l.record(&call_id(i), TOOL, &args(i), &payload("t", i))
                .unwrap();
        }
    }
    let mut f = fs::OpenOptions::new()
        .append(true)
        .open(tmp.path().join("index.jsonl"))
        .unwrap();
    f.write_all(br#"{"v":1,"mem_id":"tm_abc","tool_call_id":"cal"#)
        .unwrap();
    drop(f);
    {
        let l = DurableLedger::open(tmp.path()).unwrap();
        assert_eq!(l.handles().unwrap().len(), 3);
        for i in 3..6 {
            l.record(&call_id(i), TOOL, &args(i), &payload("t", i))
                .unwrap();
        }
    }
    assert_eq!(index_lines(tmp.path()).len(), 6);
    let l = DurableLedger::open(tmp.path()).unwrap();
    for i in 0..6 {
        let rec = l.get_by_call_id(&call_id(i)).unwrap().unwrap();
        assert_eq!(*rec.payload, payload("t", i));
    }
}

#[test]
fn deleted_payload_gives_an_error_string() {
    let tmp = tempfile::tempdir().unwrap();
    let l = DurableLedger::open(tmp.path()).unwrap();
    let h = l.record("c", TOOL, "{}", "soon gone").unwrap();
    fs::remove_dir_all(tmp.path().join("payloads")).unwrap();
    assert!(matches!(l.get(&h.mem_id), Err(LedgerError::Corrupt { .. })));
    let s = fetch(&l, &h.mem_id, &RecallRequest::full());
    assert!(s.starts_with("[tool_memory error:"), "{s}");
}

#[test]
fn records_from_a_child_process_are_read_byte_exact() {
    let tmp = tempfile::tempdir().unwrap();
    const N: usize = 25;
    // Opened before the child writes: must find the records by re-reading
    // the index on a miss.
    let early = DurableLedger::open(tmp.path()).unwrap();
    wait_ok(spawn_child(
        tmp.path(),
        &format!("count:{N}"),
        "child",
        Stdio::piped(),
    ));
    let late = DurableLedger::open(tmp.path()).unwrap();
    for l in [&early, &late] {
        for i in 0..N {
            let p = payload("child", i);
            let want = Handle::derive(&call_id(i), TOOL, &p);
            let rec = l.get(&want.mem_id).unwrap().unwrap();
            assert_eq!(rec.handle, want);
            assert_eq!(*rec.payload, p);
            assert_eq!(*rec.tool_args, args(i));
            assert_eq!(fetch(&l, &want.mem_id, &RecallRequest::full()), p);
        }
        assert_eq!(l.handles().unwrap().len(), N);
    }
    // The parent cannot overwrite what the child recorded: its own result
    // under the same id is a record of its own.
    let child0 = Handle::derive(&call_id(0), TOOL, &payload("child", 0));
    assert_eq!(
        late.record(&call_id(0), TOOL, &args(0), &payload("child", 0))
            .unwrap(),
        child0
    );
    let h = late.record(&call_id(0), TOOL, "{}", "parent").unwrap();
    assert_ne!(h, child0);
    assert_eq!(
        *early.get(&child0.mem_id).unwrap().unwrap().payload,
        payload("child", 0)
    );
    assert_eq!(index_lines(tmp.path()).len(), N + 1);
}

#[test]
fn racing_child_processes_record_each_result_once() {
    let tmp = tempfile::tempdir().unwrap();
    const N: usize = 30;
    let mode = format!("count:{N}");
    // Both record the same results: each is recorded once.
    let a = spawn_child(tmp.path(), &mode, "same", Stdio::piped());
    let b = spawn_child(tmp.path(), &mode, "same", Stdio::piped());
    wait_ok(a);
    wait_ok(b);
    let lines = index_lines(tmp.path());
    assert_eq!(lines.len(), N);
    let mut seen: Vec<&str> = lines
        .iter()
        .map(|l| l["tool_call_id"].as_str().unwrap())
        .collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), N);
    let l = DurableLedger::open(tmp.path()).unwrap();
    for i in 0..N {
        let rec = l.get_by_call_id(&call_id(i)).unwrap().unwrap();
        assert_eq!(*rec.payload, payload("same", i), "record {i}");
        assert_eq!(rec.handle, Handle::derive(&call_id(i), TOOL, &rec.payload));
    }
}

#[test]
fn racing_child_processes_reusing_ids_keep_both_payloads() {
    let tmp = tempfile::tempdir().unwrap();
    const N: usize = 20;
    let mode = format!("count:{N}");
    let a = spawn_child(tmp.path(), &mode, "A", Stdio::piped());
    let b = spawn_child(tmp.path(), &mode, "B", Stdio::piped());
    wait_ok(a);
    wait_ok(b);
    assert_eq!(index_lines(tmp.path()).len(), 2 * N);
    let l = DurableLedger::open(tmp.path()).unwrap();
    for i in 0..N {
        for tag in ["A", "B"] {
            let p = payload(tag, i);
            let h = Handle::derive(&call_id(i), TOOL, &p);
            assert_eq!(*l.get(&h.mem_id).unwrap().unwrap().payload, p, "{tag} {i}");
        }
        assert!(matches!(
            l.get_by_call_id(&call_id(i)),
            Err(LedgerError::AmbiguousCallId { ref mem_ids, .. }) if mem_ids.len() == 2
        ));
    }
}

#[test]
fn killed_writers_leave_only_complete_records() {
    let tmp = tempfile::tempdir().unwrap();
    // How often a kill left visible debris (diagnostic only: timing-bound).
    let mut torn_tails = 0;
    let mut temp_leftovers = 0;
    for run in 0..20u64 {
        let mut child = spawn_child(tmp.path(), "forever", "", Stdio::piped());
        // Wait until the child has opened the ledger, so the kill lands
        // while it is recording rather than while it is starting up.
        let stdout = child.stdout.take().unwrap();
        let mut lines = BufReader::new(stdout).lines();
        loop {
            match lines.next() {
                Some(Ok(line)) if line.contains("READY") => break,
                Some(Ok(_)) => continue,
                other => panic!("child ended before READY: {other:?}"),
            }
        }
        let delay = 1 + (run * 7 + run * run) % 23;
        std::thread::sleep(Duration::from_millis(delay));
        child.kill().unwrap();
        child.wait().unwrap();
        let index = fs::read(tmp.path().join("index.jsonl")).unwrap();
        torn_tails += usize::from(!index.is_empty() && !index.ends_with(b"\n"));
        temp_leftovers += fs::read_dir(tmp.path().join("tmp")).unwrap().count();
    }

    let l = DurableLedger::open(tmp.path()).unwrap();
    let handles = l.handles().unwrap();
    eprintln!(
        "{} records after 20 killed runs; {torn_tails} torn tails, {temp_leftovers} temp files seen",
        handles.len()
    );
    assert!(!handles.is_empty(), "no child recorded anything");
    assert!(handles.len() < FOREVER_LIMIT, "children were never killed");
    // Records are appended in order and each run starts from 0, so what is
    // there is exactly a prefix: the interrupted record is whole or absent.
    for (i, h) in handles.iter().enumerate() {
        let p = payload("", i);
        assert_eq!(*h, Handle::derive(&call_id(i), TOOL, &p));
        let rec = l.get(&h.mem_id).unwrap().unwrap();
        assert_eq!(*rec.payload, p, "record {i}");
        assert_eq!(*rec.tool_args, args(i));
    }
    assert_eq!(l.get_by_call_id(&call_id(handles.len())).unwrap(), None);
    let lines = index_lines(tmp.path());
    assert_eq!(lines.len(), handles.len());
    for (line, h) in lines.iter().zip(&handles) {
        assert_eq!(line["mem_id"], h.mem_id.as_str());
    }
    assert_eq!(fs::read_dir(tmp.path().join("tmp")).unwrap().count(), 0);
    // And the store still takes new records after all that.
    let next = handles.len();
    l.record(&call_id(next), TOOL, &args(next), &payload("", next))
        .unwrap();
    drop(l);
    let l = DurableLedger::open(tmp.path()).unwrap();
    assert_eq!(l.handles().unwrap().len(), next + 1);
}

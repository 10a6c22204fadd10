#![no_main]
//! The recall tool against arbitrary payloads and arguments:
//! `parse_tool_input`, `answer` and `execute` never panic, and `full`
//! gives the payload back byte for byte.
//!
//! Input: `ARGS \0 PAYLOAD`. In ARGS the text `MEM` is replaced by the
//! payload's mem_id, so the fuzzer reaches the payload instead of the
//! not-found line. A first byte of 0xFF instead builds the request field by
//! field from the bytes (offsets and lengths of any size).

use libfuzzer_sys::fuzz_target;
use tracecost_engine::handle::Handle;
use tracecost_engine::ledger::{InMemoryLedger, ToolResultLedger};
use tracecost_engine::recall::{RecallFormat, RecallRequest, answer, execute, parse_tool_input};

fn take<'a>(data: &mut &'a [u8], n: usize) -> &'a [u8] {
    let n = n.min(data.len());
    let (head, tail) = data.split_at(n);
    *data = tail;
    head
}

fn u64_from(data: &mut &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let h = take(data, 8);
    b[..h.len()].copy_from_slice(h);
    u64::from_le_bytes(b)
}

fn text_from(data: &mut &[u8]) -> Option<String> {
    let n = *take(data, 1).first()? as usize;
    Some(String::from_utf8_lossy(take(data, n)).into_owned())
}

fuzz_target!(|data: &[u8]| {
    if data.first() == Some(&0xFF) {
        let mut d = &data[1..];
        let flags = take(&mut d, 1).first().copied().unwrap_or(0);
        let offset = u64_from(&mut d);
        let max_chars = u64_from(&mut d);
        let request = RecallRequest {
            format: match flags & 3 {
                0 => None,
                1 => Some(RecallFormat::Summary),
                _ => Some(RecallFormat::Full),
            },
            query: if flags & 4 != 0 {
                text_from(&mut d)
            } else {
                None
            },
            offset: (flags & 8 != 0).then_some(offset),
            max_chars: (flags & 16 != 0).then_some(max_chars),
            json_path: if flags & 32 != 0 {
                text_from(&mut d)
            } else {
                None
            },
        };
        let payload = String::from_utf8_lossy(d);
        let handle = Handle::derive("toolu_fuzz", "fetch", &payload);
        let out = answer(&handle, &payload, &request);
        if request == RecallRequest::full() {
            assert_eq!(out, payload);
        }
        return;
    }
    let (args, payload) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[][..]),
    };
    let Ok(args) = std::str::from_utf8(args) else {
        return;
    };
    let payload = String::from_utf8_lossy(payload);
    let ledger = InMemoryLedger::new();
    let handle = ledger
        .record("toolu_fuzz", "fetch", "{\"url\":\"u\"}", &payload)
        .expect("the in-memory ledger never fails");
    let args = args.replace("MEM", &handle.mem_id);
    let out = execute(&ledger, &args);
    if let Ok((mem_id, request)) = parse_tool_input(&args) {
        let direct = answer(&handle, &payload, &request);
        if mem_id == handle.mem_id {
            assert_eq!(out, direct, "execute and answer disagree");
        }
        if request == RecallRequest::full() {
            assert_eq!(direct, payload, "full is not byte-exact");
        }
    }
});

#![no_main]
//! `tracecost_trace::load_str` over arbitrary text: never a panic, and a
//! trace that loads writes back to JSON that loads to the same trace.

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match tracecost_trace::load_str(text, "fuzz.json") {
        Ok(loaded) => {
            for w in &loaded.warnings {
                let _ = w.to_string();
            }
            let json = tracecost_trace::traces_to_json(&loaded.traces);
            let again = tracecost_trace::load_str(&json, "rewritten.json")
                .unwrap_or_else(|e| panic!("written trace does not load: {e}\n{json}"));
            assert_eq!(again.traces, loaded.traces, "round trip changed the traces");
            for t in &loaded.traces {
                for c in &t.calls {
                    let _ = t.history_of(c);
                    let _ = t.prompt_of(c);
                    let _ = c.recorded_usage().and_then(|u| u.total_input());
                }
            }
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.starts_with("fuzz.json"),
                "error without the file: {msg:?}"
            );
            assert!(!msg.contains('\n'), "multi-line error: {msg:?}");
        }
    }
});

#![no_main]
//! `tracecost_import::openai_agents::import` over one arbitrary file.

use libfuzzer_sys::fuzz_target;

#[path = "common.rs"]
mod common;

fuzz_target!(|data: &[u8]| {
    common::run(data, tracecost_import::openai_agents::import);
});

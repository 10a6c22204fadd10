//! Token counting: tiktoken backends, chars:R, the memo and calibration.

use std::sync::Arc;

use proptest::prelude::*;
use tracecost_cost::tokens::{
    CharsPerToken, ContentHash, Encoding, TiktokenCounter, TokenMemo, Tokenizer, TokenizerSpec,
    calibrate, parse_tokenizer,
};

const FIXED: [&str; 6] = [
    "Hello, world!",
    "The quick brown fox jumps over the lazy dog.",
    r#"{"type":"tool_result","tool_use_id":"toolu_01","content":"ok"}"#,
    "<|endoftext|>",
    "Größe ändern — café 東京",
    "fn main() {\n    println!(\"hi\");\n}\n",
];

#[test]
fn o200k_counts_fixed_strings() {
    let t = TiktokenCounter::new(Encoding::O200kBase);
    let counts: Vec<u64> = FIXED.iter().map(|s| t.count(s)).collect();
    assert_eq!(counts, [4, 10, 19, 7, 6, 10]);
    assert_eq!(t.count(""), 0);
    assert_eq!(t.name(), "tiktoken:o200k_base");
}

#[test]
fn cl100k_counts_fixed_strings() {
    let t = TiktokenCounter::new(Encoding::Cl100kBase);
    let counts: Vec<u64> = FIXED.iter().map(|s| t.count(s)).collect();
    assert_eq!(counts, [4, 10, 19, 7, 9, 10]);
    assert_eq!(t.name(), "tiktoken:cl100k_base");
}

#[test]
fn special_token_text_is_counted_as_ordinary_text() {
    // encode_ordinary: `<|endoftext|>` is several ordinary tokens, not 1.
    let t = TiktokenCounter::default();
    assert!(t.count("<|endoftext|>") > 1);
}

#[test]
fn long_runs_do_not_panic() {
    // tiktoken-rs' regex engine overflows its backtracking stack on runs
    // of about a million characters; chunking keeps it bounded.
    let t = TiktokenCounter::default();
    let spaces = " ".repeat(1_200_000);
    let n = t.count(&spaces);
    assert!(n > 0 && n < 20_000, "{n}");
    let letters = "ab".repeat(600_000);
    assert!(t.count(&letters) > 1000);
}

#[test]
fn chunked_count_equals_whole_count_on_realistic_text() {
    let mut text = String::new();
    for i in 0..2000 {
        text.push_str(&format!(
            "{{\"id\":{i},\"name\":\"item-{i}\",\"tags\":[\"a\",\"b\"],\"note\":\"it's fine, isn't it?\"}}\n\
             Line {i}: The quick brown fox — jumps over the lazy dog's back.\n"
        ));
    }
    for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let whole = match enc {
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
        }
        .encode_ordinary(&text)
        .len() as u64;
        assert_eq!(TiktokenCounter::new(enc).count(&text), whole);
        assert_eq!(
            TiktokenCounter::new(enc).with_chunk_bytes(100).count(&text),
            whole
        );
    }
}

fn word() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            'a', 'B', 'z', 'é', 'ß', '東', '7', '0', '\'', 'ー', '\u{301}', '_', '"', '.', ',',
            '{', '}', ':', '/', '-', '\r', '!', '<', '|',
        ]),
        1..8,
    )
    .prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn chunking_never_changes_counts(
        words in prop::collection::vec(
            (word(), prop::sample::select(vec![" ", ", ", ". ", "  ", " '", "\": ", ".\n\n ", "/ "])),
            0..60,
        )
    ) {
        let text: String = words.iter().map(|(w, sep)| format!("{w}{sep}")).collect();
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let whole = TiktokenCounter::new(enc).count(&text);
            let chunked = TiktokenCounter::new(enc).with_chunk_bytes(64).count(&text);
            prop_assert_eq!(whole, chunked, "{:?} {:?}", enc, text);
        }
    }
}

#[test]
fn chars_per_token_rounds_up() {
    assert_eq!(CharsPerToken(4.0).count("abcdefghi"), 3);
    assert_eq!(CharsPerToken(4.0).count("abcdefgh"), 2);
    assert_eq!(CharsPerToken(2.5).count("abcde"), 2);
    assert_eq!(CharsPerToken(2.5).count("abcdef"), 3);
    assert_eq!(CharsPerToken(1.0).count("日本語"), 3);
}

#[test]
fn tokenizer_specs_parse_and_build() {
    assert_eq!(parse_tokenizer("o200k_base").unwrap().name(), "o200k_base");
    assert_eq!(
        parse_tokenizer("cl100k_base").unwrap().name(),
        "cl100k_base"
    );
    assert_eq!(parse_tokenizer("chars:3.5").unwrap().name(), "chars:3.5");
    assert_eq!(TokenizerSpec::default(), TokenizerSpec::O200kBase);
    let err = parse_tokenizer("chars:0").err().unwrap();
    insta::assert_snapshot!(err.to_string(), @"unknown tokenizer `chars:0`: expected o200k_base, cl100k_base, tiktoken:o200k_base, tiktoken:cl100k_base or chars:R with R a positive number (at least 0.01)");
}

/// A tokenizer that counts its own calls, to check the memo from outside.
struct Counting(std::sync::atomic::AtomicU64);

impl Tokenizer for Counting {
    fn count(&self, text: &str) -> u64 {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        text.len() as u64
    }
    fn name(&self) -> String {
        "counting".into()
    }
}

#[test]
fn memo_counts_each_distinct_text_once() {
    let inner = Arc::new(Counting(Default::default()));
    let memo = TokenMemo::new(inner.clone());
    let big = "x".repeat(360_000);
    let texts: Vec<&str> = std::iter::repeat_n([big.as_str(), "a", "bb", "a"], 500)
        .flatten()
        .collect();
    let counts = memo.count_all(&texts);
    assert_eq!(counts.len(), 2000);
    assert_eq!(&counts[..4], &[360_000, 1, 2, 1]);
    assert_eq!(memo.invocations(), 3);
    assert_eq!(inner.0.load(std::sync::atomic::Ordering::SeqCst), 3);
    assert_eq!(memo.count(&big), 360_000);
    assert_eq!(memo.count("ccc"), 3);
    assert_eq!(memo.invocations(), 4);
    assert_eq!(memo.get(&ContentHash::of(b"bb")), Some(2));
    assert_eq!(memo.tokenizer_name(), "counting");
}

#[test]
fn memo_with_tiktoken_matches_direct_counts() {
    let memo = TokenMemo::new(TokenizerSpec::O200kBase.build());
    let direct = TiktokenCounter::default();
    let counts = memo.count_all(&FIXED);
    let expected: Vec<u64> = FIXED.iter().map(|s| direct.count(s)).collect();
    assert_eq!(counts, expected);
    assert_eq!(memo.invocations(), FIXED.len() as u64);
}

#[test]
fn calibration_fit_on_synthetic_data() {
    // recorded = 1.15 × estimated with a deterministic ±2% wobble, plus
    // pairs that must be skipped.
    let mut pairs: Vec<(i64, i64)> = (1..=200)
        .map(|i| {
            let e = 50 + i * 37 % 900;
            let wobble = if i % 2 == 0 { 1.02 } else { 0.98 };
            (e, (e as f64 * 1.15 * wobble).round() as i64)
        })
        .collect();
    pairs.extend([(0, 500), (400, 0), (-200, -250), (300, -40)]);
    let c = calibrate(&pairs);
    assert_eq!(c.n, 200);
    assert!((c.factor - 1.15).abs() < 0.005, "{c:?}");
    assert!(
        c.relative_error > 0.015 && c.relative_error < 0.025,
        "{c:?}"
    );
    assert_eq!(c.apply(1000), (1000.0 * c.factor).round() as u64);
}

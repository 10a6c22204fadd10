//! The default backend (bpe-openai) counts exactly what tiktoken-rs's
//! `encode_ordinary` counts, for both encodings.

use proptest::prelude::*;
use tracecost_cost::tokens::{BpeCounter, Encoding, TiktokenCounter, Tokenizer, parse_tokenizer};

const SAMPLES: &[&str] = &[
    "",
    "Hello, world!",
    r#"{"products":[{"asin":"B07XYZ1234","csv":[[7348908,9899,7351603,-1]],"stats":{"current":[1999,2499]}}]}"#,
    "fn main() {\n    println!(\"{}\", 42);\n}\n",
    "日本語のテキストと emoji 🦀🦀 mixed\twith tabs\r\nand CRLF",
    "<|endoftext|> is ordinary text here",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "          many    spaces       ",
];

#[test]
fn backends_agree_on_samples() {
    for e in [Encoding::O200kBase, Encoding::Cl100kBase] {
        let (a, b) = (BpeCounter::new(e), TiktokenCounter::new(e));
        for s in SAMPLES {
            assert_eq!(a.count(s), b.count(s), "{e:?} {s:?}");
        }
    }
}

#[test]
fn specs_pick_the_backend() {
    assert_eq!(parse_tokenizer("o200k_base").unwrap().name(), "o200k_base");
    assert_eq!(
        parse_tokenizer("tiktoken:cl100k_base").unwrap().name(),
        "tiktoken:cl100k_base"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn backends_agree_on_arbitrary_text(s in "[a-zA-Z0-9 \n\t{}\\[\\]\",:.é日🦀'-]{0,300}") {
        for e in [Encoding::O200kBase, Encoding::Cl100kBase] {
            prop_assert_eq!(BpeCounter::new(e).count(&s), TiktokenCounter::new(e).count(&s));
        }
    }
}

//! What each provider runs is what the replay accepts: a cache or
//! compaction policy is checked against the trace's provider before any
//! call is replayed.

use tracecost_engine::cache::ProviderKind;
use tracecost_policy::{CacheKind, CompactionKind, Config};
use tracecost_replay::check_config;
use tracecost_trace::load_str;

#[test]
fn what_a_provider_runs_is_what_the_replay_accepts() {
    let trace = |provider: &str| {
        let markers = if provider == "anthropic" || provider == "bedrock-converse" {
            r#","cache_markers":[{"message":0,"block":0}]"#
        } else {
            ""
        };
        let json = format!(
            r#"{{"format":"tracecost.trace/v1","name":"t","provider":"{provider}","model":"gpt-4o","messages":[{{"role":"user","content":"go"}}],"calls":[{{"messages":1{markers}}}]}}"#
        );
        load_str(&json, "t.json").unwrap().traces.remove(0)
    };
    for (name, provider) in [
        ("anthropic", ProviderKind::Anthropic),
        ("openai", ProviderKind::OpenAi),
        ("google", ProviderKind::Google),
        ("bedrock-converse", ProviderKind::BedrockConverse),
    ] {
        let t = trace(name);
        for k in CacheKind::ALL {
            let c: Config = format!("off+{}", k.name()).parse().unwrap();
            let ok = check_config(&t, &c).is_ok();
            assert_eq!(ok, k.runs_on(provider), "{c} on {name}");
        }
        for k in CompactionKind::ALL {
            let part = match k {
                CompactionKind::Ledger => "ledger:t=100,k=1".to_owned(),
                // Those two have no documented default trigger.
                CompactionKind::LangchainSummarize => {
                    "langchain-summarize:trigger=tokens:1000".to_owned()
                }
                CompactionKind::OpenAiCompact => "openai-compact:threshold=1000".to_owned(),
                k => k.name().to_owned(),
            };
            let c: Config = format!("{part}+none").parse().unwrap();
            let ok = check_config(&t, &c).is_ok();
            assert_eq!(ok, k.runs_on(provider), "{c} on {name}");
        }
    }
}

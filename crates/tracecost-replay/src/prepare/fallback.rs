//! Reads the record shows falling back to an older prefix than the cache
//! held: a service event (a request served where only an older prefix was
//! held), replayed under every config whose `openai-auto` takes misses
//! from the record.

use tracecost_cost::automatic_cache::{
    DEFAULT_IDLE_MS, EXTENDED_MS, RECORDED_READ_STEPS, STEP_TOKENS, read_step,
};
use tracecost_cost::pricing::{ModelPrice, Pricing};
use tracecost_trace::Trace;

/// What the cache held, by the record, at a call whose read fell back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeldPrefix {
    /// The prefix an earlier call sent: its first `n` history messages
    /// (with everything before them).
    Messages(usize),
    /// A prefix shorter than every request of the trace: at most this many
    /// tokens of the fixed part (tools, system) before the messages.
    Tokens(u64),
}

/// How long OpenAI documents a prefix held after its last use on the
/// model that recorded `trace` (its default model, as the built-in table
/// knows it, else `price`'s): 30 minutes at breakpoints (GPT-5.6 and
/// later); a day where the model takes only extended retention (GPT-5.5:
/// "up to 24 hours", no shorter hold documented); else in-memory
/// retention's lower end ("typically 5–10 minutes"). The recorded model's,
/// not the one a config prices the trace as: the record's misses happened
/// under it.
pub fn documented_hold_ms(trace: &Trace, price: &ModelPrice) -> u64 {
    static BUILTIN: std::sync::OnceLock<Pricing> = std::sync::OnceLock::new();
    let recorded = BUILTIN
        .get_or_init(Pricing::builtin)
        .lookup(&trace.model)
        .unwrap_or(price);
    if recorded.breakpoint_cache {
        tracecost_cost::openai_breakpoints::DEFAULT_TTL_MS
    } else if recorded.extended_cache_only {
        EXTENDED_MS
    } else {
        DEFAULT_IDLE_MS
    }
}

/// Per call of `trace`, what its recorded read shows the cache held when
/// that is less than what the call before sent. The read
/// (`cache_read_input_tokens`) falls short of the previous call's prompt
/// by more than the read's rounding (the model's block, plus the
/// documented 128-token step the service's offset leaves), so it matched
/// an older prefix: the latest earlier call's prompt the read covers (held
/// whole up to the rounding), an event at any pause, since no retention
/// keeps an older prefix and drops a newer one used later; else a prefix
/// of the fixed part, the read's size, an event only within `hold_ms` of
/// the call before ([`documented_hold_ms`]: past it, losing the whole
/// conversation is the documented retention's, which each config's
/// retention decides). `None` where the read covers the previous prompt,
/// the model's read rounding is not established by records
/// ([`RECORDED_READ_STEPS`]), or the record says too little to tell.
pub fn recorded_fallbacks(trace: &Trace, hold_ms: u64) -> Vec<Option<HeldPrefix>> {
    let calls = &trace.calls;
    let prompt = |i: usize| calls[i].recorded_usage().and_then(|u| u.total_input());
    (0..calls.len())
        .map(|k| {
            let prev = prompt(k.checked_sub(1)?)?;
            let read = calls[k].recorded_usage()?.cache_read_input_tokens?;
            let model = calls[k].model.as_deref().unwrap_or(&trace.model);
            // A fallback is told from the service's rounding only where
            // records establish that rounding: on another model a read
            // short by a coarser block than the documented step would pass
            // for one.
            if !RECORDED_READ_STEPS.iter().any(|(id, _)| *id == model) {
                return None;
            }
            let slack = read_step(model, STEP_TOKENS) + STEP_TOKENS;
            if read + slack > prev {
                return None;
            }
            let held = (0..k - 1)
                .rev()
                .find(|&j| prompt(j).is_some_and(|p| p < read + slack));
            match held {
                // An older prompt held and the newer one, used later, not:
                // no retention explains that, whatever the pause.
                Some(j) => Some(HeldPrefix::Messages(calls[j].messages)),
                // The conversation's prefixes all gone: an event only
                // within the hold the provider documents.
                None => {
                    let pause = calls[k].start_ms?.saturating_sub(calls[k - 1].start_ms?);
                    (pause < hold_ms).then_some(HeldPrefix::Tokens(read + slack))
                }
            }
        })
        .collect()
}

//! Reads the record shows falling back to an older prefix than the cache
//! held: a service event (a request served where only an older prefix was
//! held), replayed under every config whose `openai-auto` takes misses
//! from the record.

use crate::cost::automatic_cache::{STEP_TOKENS, read_step};
use crate::trace::Trace;

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

/// Per call of `trace`, what its recorded read shows the cache held when
/// that is less than what the call before sent: the read
/// (`cache_read_input_tokens`) falls short of the previous call's prompt
/// by more than the read's rounding (the model's block, plus the
/// documented 128-token step the service's offset leaves), so it matched
/// an older prefix. That prefix is the latest earlier call's prompt the
/// read covers (held whole up to the rounding), else a prefix of the fixed
/// part, the read's size. `None` where the read covers the previous
/// prompt, or the record says too little to tell.
pub fn recorded_fallbacks(trace: &Trace) -> Vec<Option<HeldPrefix>> {
    let calls = &trace.calls;
    let prompt = |i: usize| calls[i].usage.and_then(|u| u.total_input());
    (0..calls.len())
        .map(|k| {
            let prev = prompt(k.checked_sub(1)?)?;
            let read = calls[k].usage?.cache_read_input_tokens?;
            let model = calls[k].model.as_deref().unwrap_or(&trace.model);
            let slack = read_step(model, STEP_TOKENS) + STEP_TOKENS;
            if read + slack > prev {
                return None;
            }
            let held = (0..k - 1)
                .rev()
                .find(|&j| prompt(j).is_some_and(|p| p < read + slack));
            Some(match held {
                Some(j) => HeldPrefix::Messages(calls[j].messages),
                None => HeldPrefix::Tokens(read + slack),
            })
        })
        .collect()
}

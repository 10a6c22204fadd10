//! The calls a run planned, packed: each call's request blocks, markers
//! and facts in a few bytes each, read back in order by the simulator.

use tracecost_cost::cache_sim::{PrefixBlock, PrefixKind};
use tracecost_cost::pricing::ModelPrice;
use tracecost_engine::wire::Ttl;

use crate::explain;
use crate::prepare::SharedState;
use crate::varint::{put_varint, take_varint};
use crate::{CompactedLog, ReplayError};

/// What a [`Planner`] leaves for the results once every call is planned.
pub(crate) struct PlanDone<'a> {
    pub(crate) log: CompactedLog,
    pub(crate) ever_compacted: usize,
    pub(crate) first_price: &'a ModelPrice,
}

/// One call planned for every config of a group: what its simulation
/// reads, without the trace. A streamed account holds one per call not
/// yet simulated and compaction policy of every trace that overlaps in
/// time, so it is held small: counts in 32 bits where a request's blocks
/// are counted, what only some calls have boxed.
#[cfg_attr(test, derive(Debug, Clone, PartialEq))]
pub(crate) struct Planned<'a> {
    pub(crate) ci: u32,
    /// The request's blocks are the previous call's up to here, then
    /// `appended`.
    pub(crate) from_block: u32,
    pub(crate) same_blocks: u32,
    pub(crate) start_ms: Option<u64>,
    /// The price the call is billed at; its address names the model the
    /// blocks were framed for.
    pub(crate) price: &'a ModelPrice,
    pub(crate) appended: Box<[PrefixBlock]>,
    pub(crate) shared: Option<Box<(std::ops::Range<usize>, SharedState)>>,
    pub(crate) output_tokens: u64,
    pub(crate) stable_prefix_tokens: u64,
    pub(crate) chars: u64,
    /// The header's layout: system start, header length, hidden blocks.
    pub(crate) layout: [u32; 4],
    pub(crate) hidden: bool,
    pub(crate) carried: bool,
    pub(crate) compaction_changed: bool,
    pub(crate) microcompaction: bool,
    /// The TTL the record shows for this call's writes, and for the call
    /// before's.
    pub(crate) recorded_ttl: Ttl,
    pub(crate) recorded_ttl_before: Ttl,
    /// How many leading blocks make the older prefix the record shows the
    /// cache held at this call, where its read fell back to one
    /// ([`crate::prepare::recorded_fallbacks`]).
    pub(crate) held_blocks: Option<u32>,
    /// Every config's breakpoints, one config after another: how many,
    /// then each one's block and TTL ([`ttl_code`]).
    pub(crate) marks: Box<[u32]>,
}

/// The calls of a trace a [`Planner`] planned, held until each is
/// simulated, as bytes: a streamed account holds one per compaction
/// policy of every trace that overlaps in time. Each call is a run of
/// LEB128 counts (its place, where its blocks were rebuilt from, its
/// start, its price among the log's, its counts, its layout), a byte of
/// flags, the blocks it appended (each block's key whole, then its tokens,
/// kind and message) and each config's breakpoints; the rare hidden-prefix
/// facts are held apart. [`PlanLog::pop`] gives back exactly what
/// [`PlanLog::push`] took, in order.
#[derive(Default)]
pub(crate) struct PlanLog<'a> {
    pub(crate) bytes: Vec<u8>,
    /// Where the next call to pop begins.
    pub(crate) at: usize,
    /// The prices the calls are billed at, by first use.
    pub(crate) prices: Vec<&'a ModelPrice>,
    /// The hidden-prefix facts of the calls that have them, in order.
    pub(crate) shared: std::collections::VecDeque<(std::ops::Range<usize>, SharedState)>,
    /// The next call to pop, read ahead.
    pub(crate) front: Option<Planned<'a>>,
}

/// Bits of a planned call's flag byte.
pub(crate) mod flag {
    pub(crate) const HIDDEN: u8 = 1;
    pub(crate) const CARRIED: u8 = 2;
    pub(crate) const COMPACTION_CHANGED: u8 = 4;
    pub(crate) const MICROCOMPACTION: u8 = 8;
    pub(crate) const STARTS: u8 = 16;
    pub(crate) const SHARED: u8 = 32;
    pub(crate) const TTL_HOUR: u8 = 64;
    pub(crate) const TTL_BEFORE_HOUR: u8 = 128;
}

/// A block's kind as a [`PlanLog`] holds it.
pub(crate) fn kind_code(kind: PrefixKind) -> u8 {
    match kind {
        PrefixKind::ToolDef => 0,
        PrefixKind::ToolPrompt => 1,
        PrefixKind::System => 2,
        PrefixKind::Text => 3,
        PrefixKind::ToolUse => 4,
        PrefixKind::ToolResult => 5,
        PrefixKind::Thinking => 6,
        PrefixKind::Image => 7,
        PrefixKind::Other => 8,
    }
}

/// The kind coded `code` ([`kind_code`]).
pub(crate) fn kind_of(code: u8) -> PrefixKind {
    match code {
        0 => PrefixKind::ToolDef,
        1 => PrefixKind::ToolPrompt,
        2 => PrefixKind::System,
        3 => PrefixKind::Text,
        4 => PrefixKind::ToolUse,
        5 => PrefixKind::ToolResult,
        6 => PrefixKind::Thinking,
        7 => PrefixKind::Image,
        _ => PrefixKind::Other,
    }
}

impl<'a> PlanLog<'a> {
    /// Appends call `p`, planned after the calls pushed before it.
    pub(crate) fn push(&mut self, p: Planned<'a>) {
        if self.front.is_none() && self.at == self.bytes.len() {
            self.front = Some(p);
            return;
        }
        let price = match self.prices.iter().position(|q| std::ptr::eq(*q, p.price)) {
            Some(i) => i,
            None => {
                self.prices.push(p.price);
                self.prices.len() - 1
            }
        };
        let out = &mut self.bytes;
        for v in [
            u64::from(p.ci),
            u64::from(p.from_block),
            u64::from(p.same_blocks),
            p.start_ms.unwrap_or(0),
            price as u64,
            p.output_tokens,
            p.stable_prefix_tokens,
            p.chars,
        ] {
            put_varint(out, v);
        }
        for v in p.layout {
            put_varint(out, u64::from(v));
        }
        put_varint(out, p.held_blocks.map_or(0, |b| u64::from(b) + 1));
        let mut flags = 0;
        for (on, bit) in [
            (p.hidden, flag::HIDDEN),
            (p.carried, flag::CARRIED),
            (p.compaction_changed, flag::COMPACTION_CHANGED),
            (p.microcompaction, flag::MICROCOMPACTION),
            (p.start_ms.is_some(), flag::STARTS),
            (p.shared.is_some(), flag::SHARED),
            (p.recorded_ttl == Ttl::OneHour, flag::TTL_HOUR),
            (p.recorded_ttl_before == Ttl::OneHour, flag::TTL_BEFORE_HOUR),
        ] {
            if on {
                flags |= bit;
            }
        }
        out.push(flags);
        put_varint(out, p.appended.len() as u64);
        for b in &p.appended {
            out.extend_from_slice(&b.key.0);
            put_varint(out, b.tokens);
            out.push(kind_code(b.kind));
            put_varint(out, b.message.map_or(0, |m| m as u64 + 1));
        }
        put_varint(out, p.marks.len() as u64);
        for &m in &*p.marks {
            put_varint(out, u64::from(m));
        }
        if let Some(shared) = p.shared {
            self.shared.push_back(*shared);
        }
    }

    /// Gives back what the log reserved beyond the calls pushed: for a
    /// log pushed whole, then held while its calls are popped.
    pub(crate) fn shrink(&mut self) {
        self.bytes.shrink_to_fit();
        self.shared.shrink_to_fit();
    }

    /// The next call to pop, if any.
    pub(crate) fn front(&self) -> Option<&Planned<'a>> {
        self.front.as_ref()
    }

    /// The next call, in the order pushed.
    pub(crate) fn pop(&mut self) -> Option<Planned<'a>> {
        let front = self.front.take()?;
        self.front = self.read();
        // What was read is let go now and then, not at every call.
        if self.at > 4096 && self.at * 2 > self.bytes.len() {
            self.bytes.drain(..self.at);
            self.bytes.shrink_to_fit();
            self.at = 0;
        }
        Some(front)
    }

    /// Reads the call at `at`, if any.
    pub(crate) fn read(&mut self) -> Option<Planned<'a>> {
        if self.at >= self.bytes.len() {
            return None;
        }
        let bytes = &self.bytes;
        let at = &mut self.at;
        let mut next = || take_varint(bytes, at);
        let (ci, from_block, same_blocks, start) = (next(), next(), next(), next());
        let (price, output_tokens, stable_prefix_tokens, chars) = (next(), next(), next(), next());
        let layout = [next(), next(), next(), next()].map(|v| v as u32);
        let held_blocks = take_varint(bytes, at).checked_sub(1).map(|b| b as u32);
        let flags = bytes.get(*at).copied().unwrap_or(0);
        *at += 1;
        let n = take_varint(bytes, at) as usize;
        let mut appended = Vec::with_capacity(n);
        for _ in 0..n {
            let mut key = [0u8; 16];
            if let Some(k) = bytes.get(*at..*at + 16) {
                key.copy_from_slice(k);
            }
            *at += 16;
            let tokens = take_varint(bytes, at);
            let kind = kind_of(bytes.get(*at).copied().unwrap_or(0));
            *at += 1;
            let message = take_varint(bytes, at).checked_sub(1).map(|m| m as usize);
            appended.push(PrefixBlock {
                key: tracecost_cost::tokens::ContentHash(key),
                tokens,
                kind,
                message,
            });
        }
        let m = take_varint(bytes, at) as usize;
        let marks: Box<[u32]> = (0..m).map(|_| take_varint(bytes, at) as u32).collect();
        let has = |bit: u8| flags & bit != 0;
        let ttl = |bit: u8| {
            if has(bit) {
                Ttl::OneHour
            } else {
                Ttl::FiveMinutes
            }
        };
        let shared = if has(flag::SHARED) {
            self.shared.pop_front().map(Box::new)
        } else {
            None
        };
        Some(Planned {
            ci: ci as u32,
            from_block: from_block as u32,
            same_blocks: same_blocks as u32,
            start_ms: has(flag::STARTS).then_some(start),
            price: self.prices.get(price as usize).copied()?,
            appended: appended.into(),
            shared,
            output_tokens,
            stable_prefix_tokens,
            chars,
            layout,
            hidden: has(flag::HIDDEN),
            carried: has(flag::CARRIED),
            compaction_changed: has(flag::COMPACTION_CHANGED),
            microcompaction: has(flag::MICROCOMPACTION),
            recorded_ttl: ttl(flag::TTL_HOUR),
            recorded_ttl_before: ttl(flag::TTL_BEFORE_HOUR),
            held_blocks,
            marks,
        })
    }
}

/// A TTL as [`Planned::marks`] holds it.
pub(crate) fn ttl_code(ttl: Ttl) -> u32 {
    match ttl {
        Ttl::FiveMinutes => 0,
        Ttl::OneHour => 1,
    }
}

/// The TTL coded `code` ([`ttl_code`]).
pub(crate) fn ttl_of(code: u32) -> Ttl {
    match code {
        0 => Ttl::FiveMinutes,
        _ => Ttl::OneHour,
    }
}

/// `n` (a place among a request's blocks) in 32 bits: a request holds far
/// fewer blocks than that.
pub(crate) fn narrow(n: usize, trace: &str) -> Result<u32, ReplayError> {
    u32::try_from(n).map_err(|_| ReplayError::Config {
        trace: trace.to_owned(),
        reason: format!("a request of more than {} blocks", u32::MAX),
    })
}

impl Planned<'_> {
    /// The call's place in its trace.
    pub(crate) fn index(&self) -> usize {
        self.ci as usize
    }

    /// The model (by address) the blocks were framed for.
    pub(crate) fn model(&self) -> usize {
        std::ptr::from_ref(self.price) as usize
    }

    /// The header's layout.
    pub(crate) fn layout(&self) -> explain::Layout {
        let [system_start, header_len, start, end] = self.layout.map(|n| n as usize);
        explain::Layout {
            system_start,
            header_len,
            hidden: start..end,
        }
    }
}

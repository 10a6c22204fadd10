//! Which TTL a cache policy's markers carry: a fixed one, or the one each
//! call's recorded write used. The rule that reads a call's TTL from its
//! record lives here and nowhere else.
//!
//! A recorded usage splits its cache writes into
//! `cache_creation.ephemeral_5m_input_tokens` and
//! `ephemeral_1h_input_tokens`; which of the two a call wrote tells the TTL
//! its markers asked for. One client may ask for different TTLs in one
//! session (Claude Code asks for an hour on a subscription's main
//! conversation and five minutes for some subagents, and that changed
//! between its versions), so the TTL is read call by call.

use std::fmt;

use super::kinds::DEFAULT_TTL;
use tracecost_engine::wire::Ttl;
use tracecost_trace::{Call, RecordedUsage};

/// The TTL a cache policy gives its markers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TtlChoice {
    /// The same TTL at every call.
    Fixed(Ttl),
    /// At each call, the TTL that call's recorded write used
    /// ([`recorded_ttls`]); 5 minutes where nothing was recorded.
    Recorded,
}

/// The config-string value of [`TtlChoice::Recorded`].
pub const RECORDED_TTL_NAME: &str = "recorded";

impl TtlChoice {
    /// The TTL at a call whose record resolves to `recorded` (an entry of
    /// [`recorded_ttls`]).
    pub fn at(self, recorded: Ttl) -> Ttl {
        match self {
            TtlChoice::Fixed(t) => t,
            TtlChoice::Recorded => recorded,
        }
    }

    /// Parses `5m`, `1h` or `recorded`.
    pub fn parse(v: &str) -> Result<Self, String> {
        match v {
            RECORDED_TTL_NAME => Ok(TtlChoice::Recorded),
            _ => super::parse_ttl(v)
                .map(TtlChoice::Fixed)
                .map_err(|_| format!("ttl {v:?} is not 5m, 1h or {RECORDED_TTL_NAME}")),
        }
    }
}

impl From<Ttl> for TtlChoice {
    fn from(t: Ttl) -> Self {
        TtlChoice::Fixed(t)
    }
}

impl fmt::Display for TtlChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TtlChoice::Fixed(t) => write!(f, "{t}"),
            TtlChoice::Recorded => f.write_str(RECORDED_TTL_NAME),
        }
    }
}

/// The TTL a call's own cache write used, when its usage tells.
///
/// - Only 1h tokens written: 1 hour; only 5m tokens: 5 minutes.
/// - Both (a mixed request: its 1h breakpoints came before its 5m ones):
///   the TTL that wrote more tokens, 1 hour on a tie. A policy gives all its
///   markers one TTL, and the larger share is the one the bill depends on.
/// - A write with no split recorded: 5 minutes, the API's default and how
///   usage reporters bill such a write.
/// - Nothing written: `None`; the call's record does not tell.
pub fn written_ttl(usage: &RecordedUsage) -> Option<Ttl> {
    let five = usage.ephemeral_5m_input_tokens.unwrap_or(0);
    let hour = usage.ephemeral_1h_input_tokens.unwrap_or(0);
    if five == 0 && hour == 0 {
        return (usage.cache_creation_input_tokens.unwrap_or(0) > 0).then_some(Ttl::FiveMinutes);
    }
    Some(if hour >= five {
        Ttl::OneHour
    } else {
        Ttl::FiveMinutes
    })
}

/// The TTL of each call of `calls` under [`TtlChoice::Recorded`]: the TTL
/// its own write used ([`written_ttl`]); for a call that wrote nothing (all
/// of it read, or not recorded), the TTL of the nearest earlier call that
/// wrote, since a client keeps asking for the TTL it asked for; before any
/// call wrote, the trace's first write's; with no write recorded at all,
/// the default (5 minutes).
pub fn recorded_ttls(calls: &[Call]) -> Vec<Ttl> {
    let written: Vec<Option<Ttl>> = calls
        .iter()
        .map(|c| c.usage.as_deref().and_then(written_ttl))
        .collect();
    let first = written
        .iter()
        .flatten()
        .next()
        .copied()
        .unwrap_or(DEFAULT_TTL);
    let mut last = first;
    written
        .into_iter()
        .map(|w| {
            if let Some(t) = w {
                last = t;
            }
            last
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(created: u64, five: Option<u64>, hour: Option<u64>) -> RecordedUsage {
        RecordedUsage {
            input_tokens: Some(3),
            cache_creation_input_tokens: Some(created),
            ephemeral_5m_input_tokens: five,
            ephemeral_1h_input_tokens: hour,
            cache_read_input_tokens: Some(0),
            output_tokens: Some(1),
            modifiers: Default::default(),
            reasoning_tokens: None,
        }
    }

    fn call(u: Option<RecordedUsage>) -> Call {
        Call {
            usage: u.map(Box::new),
            ..Default::default()
        }
    }

    const M5: Ttl = Ttl::FiveMinutes;
    const H1: Ttl = Ttl::OneHour;

    #[test]
    fn a_call_s_own_write_tells_its_ttl() {
        assert_eq!(written_ttl(&usage(100, Some(0), Some(100))), Some(H1));
        assert_eq!(written_ttl(&usage(100, Some(100), Some(0))), Some(M5));
        // Only one of the two recorded.
        assert_eq!(written_ttl(&usage(100, None, Some(100))), Some(H1));
        assert_eq!(written_ttl(&usage(100, Some(100), None)), Some(M5));
        // Mixed: the larger share; a tie goes to the hour.
        assert_eq!(written_ttl(&usage(300, Some(200), Some(100))), Some(M5));
        assert_eq!(written_ttl(&usage(300, Some(100), Some(200))), Some(H1));
        assert_eq!(written_ttl(&usage(200, Some(100), Some(100))), Some(H1));
        // A write without its split is a 5-minute write.
        assert_eq!(written_ttl(&usage(100, None, None)), Some(M5));
        // Nothing written: the record does not tell.
        assert_eq!(written_ttl(&usage(0, Some(0), Some(0))), None);
        assert_eq!(written_ttl(&usage(0, None, None)), None);
        assert_eq!(written_ttl(&RecordedUsage::default()), None);
    }

    #[test]
    fn calls_that_wrote_nothing_keep_the_ttl_of_the_call_before() {
        let none = || call(Some(usage(0, Some(0), Some(0))));
        let hour = || call(Some(usage(50, Some(0), Some(50))));
        let five = || call(Some(usage(50, Some(50), Some(0))));
        // Before the first write: the first write's TTL.
        assert_eq!(
            recorded_ttls(&[none(), call(None), hour(), none(), five(), none(), hour()]),
            [H1, H1, H1, H1, M5, M5, H1]
        );
        assert_eq!(recorded_ttls(&[none(), five(), none()]), [M5, M5, M5]);
        // No write recorded at all: the default.
        assert_eq!(recorded_ttls(&[none(), call(None)]), [M5, M5]);
        assert_eq!(recorded_ttls(&[]), Vec::<Ttl>::new());
    }

    #[test]
    fn choices_parse_print_and_resolve() {
        for s in ["5m", "1h", "recorded"] {
            assert_eq!(TtlChoice::parse(s).unwrap().to_string(), s);
        }
        assert_eq!(
            TtlChoice::parse("2h").unwrap_err(),
            "ttl \"2h\" is not 5m, 1h or recorded"
        );
        assert_eq!(TtlChoice::Recorded.at(H1), H1);
        assert_eq!(TtlChoice::Recorded.at(M5), M5);
        assert_eq!(TtlChoice::Fixed(M5).at(H1), M5);
    }
}

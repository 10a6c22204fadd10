//! How long OpenAI's caches hold a prefix, as a config asks: the
//! `openai-auto` cache policy's parameters, and the TTL of the breakpoints
//! `openai-breakpoints` places.
//!
//! OpenAI's API takes `prompt_cache_retention`: `in_memory` (cleared after
//! some minutes of inactivity: 5–10 by the guide, always within an hour)
//! or `24h` (extended; the only one GPT-5.5 and later accept). Which
//! minute within 5–10 is not documented, so the idle time is a parameter
//! with a documented default.

use std::fmt;

/// The idle time of in-memory retention when a config names none: the
/// documented window's lower end.
pub const DEFAULT_IDLE_MINUTES: u32 = 5;
/// The longest idle time in-memory retention may be given: the guide's
/// "always within one hour of last use".
pub const MAX_IDLE_MINUTES: u32 = 60;

/// The retention an `openai-auto` config asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OpenAiRetention {
    /// The model's default: extended for the models that accept only
    /// that, else in memory for [`DEFAULT_IDLE_MINUTES`].
    #[default]
    Model,
    /// In memory, cleared after `idle_minutes` of inactivity.
    InMemory {
        /// Minutes of inactivity before a prefix is cleared.
        idle_minutes: u32,
    },
    /// Extended: 24 hours.
    Extended,
}

impl OpenAiRetention {
    /// Reads the `retention=` and `idle=` parameters (`None`: not given).
    pub fn from_params(retention: Option<&str>, idle: Option<&str>) -> Result<Self, String> {
        let idle = idle.map(parse_idle).transpose()?;
        match (retention, idle) {
            (None, None) => Ok(OpenAiRetention::Model),
            (None | Some("in-memory"), Some(idle_minutes)) => {
                Ok(OpenAiRetention::InMemory { idle_minutes })
            }
            (Some("in-memory"), None) => Ok(OpenAiRetention::InMemory {
                idle_minutes: DEFAULT_IDLE_MINUTES,
            }),
            (Some("24h"), None) => Ok(OpenAiRetention::Extended),
            (Some("24h"), Some(_)) => Err(
                "idle applies to retention=in-memory; 24h retention holds a prefix a day".into(),
            ),
            (Some(other), _) => Err(format!(
                "retention {other:?} is not one of in-memory or 24h (OpenAI's prompt_cache_retention)"
            )),
        }
    }

    /// The idle time in milliseconds, or `None` for extended retention;
    /// `extended_only`: the model accepts only extended retention.
    pub fn idle_ms(self, extended_only: bool) -> Option<u64> {
        let minutes = match self {
            OpenAiRetention::Model if extended_only => return None,
            OpenAiRetention::Model => DEFAULT_IDLE_MINUTES,
            OpenAiRetention::InMemory { idle_minutes } => idle_minutes,
            OpenAiRetention::Extended => return None,
        };
        Some(u64::from(minutes) * 60_000)
    }
}

fn parse_idle(v: &str) -> Result<u32, String> {
    v.strip_suffix('m')
        .and_then(|n| n.parse::<u32>().ok())
        .filter(|n| (1..=MAX_IDLE_MINUTES).contains(n))
        .ok_or_else(|| {
            format!("idle {v:?} is not a number of minutes from 1m to {MAX_IDLE_MINUTES}m")
        })
}

/// The parameters as a config string writes them (empty for the model's
/// default).
impl fmt::Display for OpenAiRetention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenAiRetention::Model => Ok(()),
            OpenAiRetention::InMemory { idle_minutes } => {
                write!(f, "retention=in-memory,idle={idle_minutes}m")
            }
            OpenAiRetention::Extended => f.write_str("retention=24h"),
        }
    }
}

/// The TTL of the explicit breakpoints an `openai-breakpoints` config
/// places (GPT-5.6 and later): a `prompt_cache_breakpoint`'s `ttl`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BreakpointTtl {
    /// `30m`, the API's default.
    #[default]
    ThirtyMinutes,
    /// `12h`.
    TwelveHours,
}

impl BreakpointTtl {
    /// Reads a `ttl=` parameter.
    pub fn parse(v: &str) -> Result<Self, String> {
        match v {
            "30m" => Ok(BreakpointTtl::ThirtyMinutes),
            "12h" => Ok(BreakpointTtl::TwelveHours),
            other => Err(format!(
                "ttl {other:?} is not one of 30m or 12h (the TTLs of OpenAI's prompt_cache_breakpoint)"
            )),
        }
    }
}

impl fmt::Display for BreakpointTtl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BreakpointTtl::ThirtyMinutes => "30m",
            BreakpointTtl::TwelveHours => "12h",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breakpoint_ttls_read_and_write_back() {
        for t in [BreakpointTtl::ThirtyMinutes, BreakpointTtl::TwelveHours] {
            assert_eq!(BreakpointTtl::parse(&t.to_string()), Ok(t));
        }
        assert!(
            BreakpointTtl::parse("1h")
                .unwrap_err()
                .contains("30m or 12h")
        );
    }

    #[test]
    fn parameters_read_and_write_back() {
        let r = |ret, idle| OpenAiRetention::from_params(ret, idle);
        assert_eq!(r(None, None), Ok(OpenAiRetention::Model));
        assert_eq!(
            r(None, Some("10m")),
            Ok(OpenAiRetention::InMemory { idle_minutes: 10 })
        );
        assert_eq!(
            r(Some("in-memory"), None),
            Ok(OpenAiRetention::InMemory { idle_minutes: 5 })
        );
        assert_eq!(r(Some("24h"), None), Ok(OpenAiRetention::Extended));
        assert!(r(Some("24h"), Some("5m")).is_err());
        assert!(
            r(Some("1h"), None)
                .unwrap_err()
                .contains("in-memory or 24h")
        );
        assert!(r(None, Some("61m")).unwrap_err().contains("1m to 60m"));
        assert!(r(None, Some("0m")).is_err());
        assert_eq!(
            OpenAiRetention::InMemory { idle_minutes: 7 }.to_string(),
            "retention=in-memory,idle=7m"
        );
    }

    #[test]
    fn the_model_default_is_extended_where_only_that_is_accepted() {
        assert_eq!(OpenAiRetention::Model.idle_ms(false), Some(300_000));
        assert_eq!(OpenAiRetention::Model.idle_ms(true), None);
        assert_eq!(OpenAiRetention::Extended.idle_ms(false), None);
        assert_eq!(
            OpenAiRetention::InMemory { idle_minutes: 10 }.idle_ms(true),
            Some(600_000)
        );
    }
}

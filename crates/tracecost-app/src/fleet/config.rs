//! The config a fleet figure is for: one config, or the status quo of
//! sessions that ran different ones.

use std::borrow::Cow;

use serde::Serialize;

use tracecost_policy::Config;

/// The `config` of a status quo that differs between sessions, as printed.
pub const MIXED_STATUS_QUO: &str = "mixed";

/// The config a fleet figure is for: one config (of the grid, or the status
/// quo every session shares), or the status quo of sessions that ran
/// different ones. Kept as a config through the answer and printed at the
/// edge: in `results.json` and on a page it is the config's canonical
/// string, or [`MIXED_STATUS_QUO`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FleetConfig {
    /// One config.
    One(Config),
    /// Status quos that differ between sessions.
    Mixed,
}

impl FleetConfig {
    /// The config, unless the status quos differ.
    pub fn config(&self) -> Option<&Config> {
        match self {
            FleetConfig::One(c) => Some(c),
            FleetConfig::Mixed => None,
        }
    }

    /// Whether the status quos this stands for differ between sessions.
    pub fn is_mixed(&self) -> bool {
        matches!(self, FleetConfig::Mixed)
    }
}

impl std::fmt::Display for FleetConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FleetConfig::One(c) => c.fmt(f),
            FleetConfig::Mixed => f.write_str(MIXED_STATUS_QUO),
        }
    }
}

impl Serialize for FleetConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Read back from what [`Serialize`] wrote: [`MIXED_STATUS_QUO`], or a
/// config's canonical string (which always holds a `+`).
impl<'de> serde::Deserialize<'de> for FleetConfig {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <Cow<'de, str>>::deserialize(d)?;
        if s == MIXED_STATUS_QUO {
            return Ok(FleetConfig::Mixed);
        }
        s.parse()
            .map(FleetConfig::One)
            .map_err(serde::de::Error::custom)
    }
}

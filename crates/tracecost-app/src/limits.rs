//! The allowed range of every option that takes a number, in one table:
//! the command line's parsers and the pipelines' own checks both read it,
//! so a value is refused the same way wherever it comes from. Ranges are
//! wide enough for any real use and narrow enough that no figure computed
//! from them saturates or runs away (a recall priced at 1e308 USD printed
//! as the largest 64-bit number of cents).

/// A closed range of numbers an option accepts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    /// The option, as the command line spells it.
    pub flag: &'static str,
    /// The least value accepted.
    pub min: f64,
    /// The greatest value accepted.
    pub max: f64,
    /// The unit, for the message (`USD`, `%`), or empty.
    pub unit: &'static str,
}

/// `--recall-cost`: USD per recall.
pub const RECALL_COST_USD: Range = Range {
    flag: "--recall-cost",
    min: 0.0,
    max: 1_000_000.0,
    unit: " USD",
};
/// `--tolerance`: percent of the expected cost or input tokens.
pub const TOLERANCE_PCT: Range = Range {
    flag: "--tolerance",
    min: 0.0,
    max: 10_000.0,
    unit: "%",
};
/// `gen --calls`: model calls of a generated session or request log.
pub const GEN_CALLS: Range = Range {
    flag: "--calls",
    min: 1.0,
    max: tracecost_gen::MAX_CALLS as f64,
    unit: "",
};
/// `gen --sessions`: sessions of a generated fleet.
pub const GEN_SESSIONS: Range = Range {
    flag: "--sessions",
    min: 1.0,
    max: 100_000.0,
    unit: "",
};
/// `gen --accounts`: accounts a generated fleet's sessions are spread over
/// (no more than its sessions, which the generator checks).
pub const GEN_ACCOUNTS: Range = Range {
    flag: "--accounts",
    min: 1.0,
    max: 100_000.0,
    unit: "",
};
/// `gen --days`: days a generated fleet's sessions start within (ten
/// years at most: the dates stay readable).
pub const GEN_DAYS: Range = Range {
    flag: "--days",
    min: 1.0,
    max: 3_650.0,
    unit: "",
};
/// `stability --processes`: fresh processes to compare with.
pub const PROCESSES: Range = Range {
    flag: "--processes",
    min: 0.0,
    max: 64.0,
    unit: "",
};

impl Range {
    /// `value` if it is a finite number within the range, else the one-line
    /// reason, naming the option, the value and the range.
    pub fn check(&self, value: f64) -> Result<f64, String> {
        if value.is_finite() && value >= self.min && value <= self.max {
            Ok(value)
        } else {
            Err(self.refusal(&value.to_string()))
        }
    }

    /// Parses `text` as a number within the range (an integer if
    /// `integer`), the way the command line reads the option.
    pub fn parse(&self, text: &str, integer: bool) -> Result<f64, String> {
        let value = if integer {
            text.trim().parse::<u64>().ok().map(|v| v as f64)
        } else {
            text.trim().parse::<f64>().ok()
        };
        match value {
            Some(v) if v.is_finite() && v >= self.min && v <= self.max => Ok(v),
            _ => Err(self.refusal(text)),
        }
    }

    /// `value` if it is a whole number within the range, else the one-line
    /// reason naming the argument as an API spells it ([`Self::argument`]):
    /// how a library caller (the Python package) is held to the command
    /// line's range.
    pub fn whole(&self, value: i128) -> Result<u64, String> {
        // The bounds are whole numbers far below 2^53.
        if value >= self.min as i128 && value <= self.max as i128 {
            Ok(value as u64)
        } else {
            Err(self.refusal_of(&self.argument(), &value.to_string()))
        }
    }

    /// `value` if it is a finite number within the range, else the one-line
    /// reason naming the argument as an API spells it ([`Self::argument`]).
    pub fn within(&self, value: f64) -> Result<f64, String> {
        self.check(value)
            .map_err(|_| self.refusal_of(&self.argument(), &value.to_string()))
    }

    /// The option as a function's argument is named: `--recall-cost` is
    /// `recall_cost`.
    pub fn argument(&self) -> String {
        self.flag.trim_start_matches('-').replace('-', "_")
    }

    /// Why `shown` is refused.
    pub fn refusal(&self, shown: &str) -> String {
        self.refusal_of(self.flag, shown)
    }

    /// Why `shown`, given as `name`, is refused.
    pub fn refusal_of(&self, name: &str, shown: &str) -> String {
        format!(
            "{name} {}: expected a number from {} to {}{}",
            tracecost_engine::handle::one_line(shown, 200),
            self.min,
            self.max,
            self.unit
        )
    }

    /// The message for the command line's parser, which names the option
    /// and the value itself.
    pub fn expected(&self, integer: bool) -> String {
        format!(
            "expected {} from {} to {}{}",
            if integer {
                "a whole number"
            } else {
                "a number"
            },
            self.min,
            self.max,
            self.unit
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_and_non_numbers_are_refused_naming_flag_value_and_range() {
        for text in ["1e308", "inf", "-inf", "NaN", "-1", "1000000.5", "x"] {
            let e = RECALL_COST_USD.parse(text, false).unwrap_err();
            assert_eq!(
                e,
                format!("--recall-cost {text}: expected a number from 0 to 1000000 USD")
            );
        }
        assert_eq!(RECALL_COST_USD.parse("0.25", false), Ok(0.25));
        assert_eq!(GEN_CALLS.parse("100000", true), Ok(100_000.0));
        assert!(GEN_CALLS.parse("0", true).is_err());
        assert!(GEN_CALLS.parse("1.5", true).is_err());
        assert!(GEN_CALLS.parse("99999999999999999999999", true).is_err());
        assert!(TOLERANCE_PCT.check(f64::NAN).is_err());
        assert!(TOLERANCE_PCT.check(10_000.0).is_ok());
    }

    #[test]
    fn whole_numbers_from_an_api_are_held_to_the_same_ranges() {
        assert_eq!(GEN_SESSIONS.whole(100_000), Ok(100_000));
        assert_eq!(GEN_SESSIONS.whole(1), Ok(1));
        for v in [0, -1, 100_001, 1_000_000_000, i128::MAX, i128::MIN] {
            assert_eq!(
                GEN_SESSIONS.whole(v),
                Err(format!("sessions {v}: expected a number from 1 to 100000"))
            );
        }
        assert!(GEN_CALLS.whole(1_000_000_000).is_err());
        assert!(GEN_DAYS.whole(3_651).is_err());
        assert_eq!(
            RECALL_COST_USD.within(f64::NAN),
            Err("recall_cost NaN: expected a number from 0 to 1000000 USD".to_owned())
        );
        assert_eq!(RECALL_COST_USD.within(0.5), Ok(0.5));
    }
}

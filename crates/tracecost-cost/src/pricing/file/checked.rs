//! The checked values of a pricing file: prices, token counts, days, the
//! provider's name, each a type that only holds what the format allows,
//! and [`Member`], a struct member that keeps what was wrong with its value
//! until the reader reaches it, so that each error names its own JSON
//! pointer and the errors come in the order the reader checks them, not in
//! the order serde meets the keys.

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use tracecost_engine::cache::ProviderKind;

use crate::pricing::{MAX_FILE_TOKENS, MAX_PRICE_PER_MTOK, PriceDate};

/// An RFC 6901 JSON pointer from segments.
pub(super) fn ptr(segments: &[&str]) -> String {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        out.push_str(&s.replace('~', "~0").replace('/', "~1"));
    }
    out
}

/// What a pricing file should have held at a place: `at` is the JSON
/// pointer below the member that reported it (empty for the member itself).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Misfit {
    pub(super) at: String,
    pub(super) what: String,
}

impl Misfit {
    pub(super) fn new(what: impl Into<String>) -> Self {
        Self {
            at: String::new(),
            what: what.into(),
        }
    }

    /// The same error one level up, under the member or index `segment`.
    pub(super) fn under(self, segment: &str) -> Self {
        Self {
            at: format!("{}{}", ptr(&[segment]), self.at),
            what: self.what,
        }
    }
}

/// A value read from its JSON, or what was expected instead.
pub(super) trait Checked: Sized {
    /// `null` reads as an absent member (prices, counts, days), not as a
    /// wrong value.
    const NULL_IS_ABSENT: bool = false;

    fn check(v: &Value) -> Result<Self, Misfit>;
}

/// One member of an object of the file: absent, `null` (for the values
/// where `null` means absent or "remove"), or its value checked.
#[derive(Default)]
pub(super) enum Member<T> {
    #[default]
    Absent,
    Null,
    Given(Result<T, Misfit>),
}

impl<'de, T: Checked> Deserialize<'de> for Member<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        Ok(if v.is_null() && T::NULL_IS_ABSENT {
            Self::Null
        } else {
            Self::Given(T::check(&v))
        })
    }
}

impl<T> Member<T> {
    /// The value (`None` when absent or `null`), or what was expected,
    /// placed under the member's name `name`.
    pub(super) fn read(self, name: &str) -> Result<Option<T>, Misfit> {
        match self {
            Self::Absent | Self::Null => Ok(None),
            Self::Given(r) => r.map(Some).map_err(|e| e.under(name)),
        }
    }

    /// The value, which must be given: when absent (or `null`), `what`
    /// was expected there.
    pub(super) fn required(self, name: &str, what: &str) -> Result<T, Misfit> {
        self.read(name)?
            .ok_or_else(|| Misfit::new(what).under(name))
    }

    /// [`Member::read`] of a member read more than once.
    pub(super) fn get(&self, name: &str) -> Result<Option<T>, Misfit>
    where
        T: Clone,
    {
        match self {
            Self::Absent | Self::Null => Ok(None),
            Self::Given(r) => r.clone().map(Some).map_err(|e| e.under(name)),
        }
    }

    /// The key is in the object, whatever its value.
    pub(super) fn is_present(&self) -> bool {
        !matches!(self, Self::Absent)
    }
}

/// An object's members read into the typed struct `M`, and its first
/// member `M` does not have. The format refuses unknown members, but not
/// before the checks the reader runs first; and the refusal names the
/// member's pointer, which serde's `deny_unknown_fields` does not give.
pub(super) struct Members<M> {
    pub(super) read: M,
    pub(super) unknown: Option<Misfit>,
}

impl<M: for<'de> Deserialize<'de>> Members<M> {
    /// Reads object `v`, whose members may be `names`.
    pub(super) fn of(v: &Value, names: &[&str]) -> Result<Self, Misfit> {
        let shape = || Misfit::new(format!("an object with members {}", names.join(", ")));
        let Value::Object(o) = v else {
            return Err(shape());
        };
        let unknown = o
            .keys()
            .find(|k| !names.contains(&k.as_str()))
            .map(|k| Misfit::new(format!("one of the members {}", names.join(", "))).under(k));
        // Every member of `M` is a `Member`, which reads any value.
        let read = M::deserialize(v).map_err(|_| shape())?;
        Ok(Self { read, unknown })
    }

    /// The struct, once its unknown member (if any) is reported.
    pub(super) fn known(self) -> Result<M, Misfit> {
        match self.unknown {
            Some(e) => Err(e),
            None => Ok(self.read),
        }
    }
}

/// A price in USD per million tokens: finite, at least 0, at most
/// [`MAX_PRICE_PER_MTOK`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Price(pub(super) f64);

impl TryFrom<f64> for Price {
    type Error = Misfit;

    fn try_from(x: f64) -> Result<Self, Misfit> {
        if x.is_finite() && (0.0..=MAX_PRICE_PER_MTOK).contains(&x) {
            Ok(Self(x))
        } else if x.is_finite() && x >= 0.0 {
            Err(Misfit::new(format!(
                "a price of at most {MAX_PRICE_PER_MTOK} USD per million tokens, found {x:e}"
            )))
        } else {
            Err(Misfit::new("a non-negative number"))
        }
    }
}

impl Checked for Price {
    const NULL_IS_ABSENT: bool = true;

    fn check(v: &Value) -> Result<Self, Misfit> {
        v.as_f64()
            .ok_or_else(|| Misfit::new("a non-negative number"))
            .and_then(Self::try_from)
    }
}

/// A token count: a non-negative integer, at most [`MAX_FILE_TOKENS`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Count(pub(super) u64);

impl TryFrom<u64> for Count {
    type Error = Misfit;

    fn try_from(n: u64) -> Result<Self, Misfit> {
        if n <= MAX_FILE_TOKENS {
            Ok(Self(n))
        } else {
            Err(Misfit::new(format!(
                "a token count of at most {MAX_FILE_TOKENS}, found {n}"
            )))
        }
    }
}

impl Checked for Count {
    const NULL_IS_ABSENT: bool = true;

    fn check(v: &Value) -> Result<Self, Misfit> {
        v.as_u64()
            .ok_or_else(|| Misfit::new("a non-negative integer"))
            .and_then(Self::try_from)
    }
}

/// A UTC day written `YYYY-MM-DD`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Day(pub(super) PriceDate);

impl Checked for Day {
    const NULL_IS_ABSENT: bool = true;

    fn check(v: &Value) -> Result<Self, Misfit> {
        v.as_str()
            .and_then(PriceDate::parse)
            .map(Self)
            .ok_or_else(|| Misfit::new("a date, YYYY-MM-DD (UTC)"))
    }
}

/// A string, `null` refused.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Text(pub(super) String);

impl Checked for Text {
    fn check(v: &Value) -> Result<Self, Misfit> {
        v.as_str()
            .map(|s| Self(s.to_owned()))
            .ok_or_else(|| Misfit::new("a string"))
    }
}

/// A provider tracecost prices (not `unknown`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Provider(pub(super) ProviderKind);

impl Checked for Provider {
    fn check(v: &Value) -> Result<Self, Misfit> {
        v.as_str()
            .and_then(|p| ProviderKind::ALL.into_iter().find(|k| k.as_str() == p))
            .filter(|k| *k != ProviderKind::Unknown)
            .map(Self)
            .ok_or_else(|| Misfit::new("one of anthropic, bedrock-converse, openai, google"))
    }
}

/// A string if the value is one; any other value reads as none (LiteLLM's
/// labels, which only select entries).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Label(pub(super) Option<String>);

impl Checked for Label {
    fn check(v: &Value) -> Result<Self, Misfit> {
        Ok(Self(v.as_str().map(str::to_owned)))
    }
}

/// An array of strings.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Strings(pub(super) Vec<String>);

impl Checked for Strings {
    fn check(v: &Value) -> Result<Self, Misfit> {
        let Value::Array(items) = v else {
            return Err(Misfit::new("an array of strings"));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, a)| {
                Text::check(a)
                    .map(|t| t.0)
                    .map_err(|e| e.under(&i.to_string()))
            })
            .collect::<Result<_, _>>()
            .map(Self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn what<T: Checked + std::fmt::Debug>(v: Value) -> String {
        let e = T::check(&v).unwrap_err();
        format!("{}: {}", e.at, e.what)
    }

    #[test]
    fn prices_are_finite_non_negative_and_bounded() {
        assert_eq!(Price::check(&json!(2.5)), Ok(Price(2.5)));
        assert_eq!(Price::check(&json!(3)), Ok(Price(3.0)));
        assert_eq!(what::<Price>(json!("3")), ": a non-negative number");
        assert_eq!(what::<Price>(json!(-1)), ": a non-negative number");
        assert_eq!(
            what::<Price>(json!(2e6)),
            ": a price of at most 1000000 USD per million tokens, found 2e6"
        );
    }

    #[test]
    fn counts_are_bounded_integers() {
        assert_eq!(Count::check(&json!(512)), Ok(Count(512)));
        assert_eq!(what::<Count>(json!(1.5)), ": a non-negative integer");
        assert_eq!(what::<Count>(json!(-1)), ": a non-negative integer");
        assert_eq!(
            what::<Count>(json!(MAX_FILE_TOKENS + 1)),
            ": a token count of at most 100000000, found 100000001"
        );
    }

    #[test]
    fn days_strings_and_providers() {
        assert_eq!(
            what::<Day>(json!("2026-13-01")),
            ": a date, YYYY-MM-DD (UTC)"
        );
        assert_eq!(what::<Day>(json!(20260101)), ": a date, YYYY-MM-DD (UTC)");
        assert_eq!(what::<Text>(json!(null)), ": a string");
        assert_eq!(
            what::<Provider>(json!("unknown")),
            ": one of anthropic, bedrock-converse, openai, google"
        );
        assert_eq!(what::<Strings>(json!(["a", 1])), "/1: a string");
        assert_eq!(what::<Strings>(json!("a")), ": an array of strings");
    }

    #[test]
    fn null_is_absent_only_where_the_format_says() {
        let m = Member::<Price>::deserialize(&Value::Null).unwrap();
        assert_eq!(m.read("input"), Ok(None));
        let m = Member::<Text>::deserialize(&Value::Null).unwrap();
        assert_eq!(
            m.read("url").unwrap_err(),
            Misfit {
                at: "/url".into(),
                what: "a string".into()
            }
        );
    }
}

//! Dates, placeholder filling and small text helpers shared by the
//! generators.

use super::rng::Rng;

/// Minutes between the Unix epoch and Keepa's epoch (2011-01-01).
pub(crate) const KEEPA_EPOCH_OFFSET_MIN: i64 = 21_564_000;

/// Keepa minutes for a Unix time in milliseconds.
pub(crate) fn keepa_minutes(unix_ms: u64) -> i64 {
    i64::try_from(unix_ms / 60_000).unwrap_or(i64::MAX) - KEEPA_EPOCH_OFFSET_MIN
}

pub(crate) use tracecost_engine::calendar::MS_PER_DAY as DAY_MS;

/// `YYYY-MM-DD` of a Unix time in milliseconds.
pub(crate) fn date(unix_ms: u64) -> String {
    tracecost_engine::calendar::date_of_ms(unix_ms)
}

/// `YYYY-MM-DDTHH:MM:SSZ` of a Unix time in milliseconds.
pub(crate) fn rfc3339(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let rem = secs % 86_400;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        date(unix_ms),
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ` of a Unix time in milliseconds.
pub(crate) fn rfc3339_millis(unix_ms: u64) -> String {
    let s = rfc3339(unix_ms);
    format!("{}.{:03}Z", &s[..s.len() - 1], unix_ms % 1000)
}

/// Fills `{a}`, `{b}`, ... placeholders in `template` from `slots`: one
/// random choice per placeholder name, reused where the name repeats.
/// Unknown placeholders are kept as they are.
pub(crate) fn fill(rng: &mut Rng, template: &str, slots: &[(&str, &[&str])]) -> String {
    let mut chosen: Vec<(&str, &str)> = Vec::new();
    replace_placeholders(template, |key| {
        let (_, words) = slots.iter().find(|(k, _)| *k == key)?;
        if let Some((_, w)) = chosen.iter().find(|(k, _)| *k == key) {
            return Some(*w);
        }
        let w = rng.pick(words);
        chosen.push((key, w));
        Some(w)
    })
}

/// Replaces `{name}` placeholders in `template` with fixed `values`, with
/// no randomness. Unknown placeholders are kept as they are.
pub(crate) fn substitute(template: &str, values: &[(&str, &str)]) -> String {
    replace_placeholders(template, |key| {
        values.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    })
}

/// The placeholder names of `template`, in order, repeats included.
#[cfg(test)]
pub(crate) fn placeholders(template: &str) -> Vec<&str> {
    let mut keys = Vec::new();
    replace_placeholders(template, |key| {
        keys.push(key);
        None
    });
    keys
}

/// One left-to-right pass over `template` replacing each `{key}` with
/// `value(key)`; a key without a value, and a `{` without a `}`, stay as
/// they are. Replacements are not scanned again.
fn replace_placeholders<'t, 'v>(
    template: &'t str,
    mut value: impl FnMut(&'t str) -> Option<&'v str>,
) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let key = &after[..close];
                match value(key) {
                    Some(v) => out.push_str(v),
                    None => {
                        out.push('{');
                        out.push_str(key);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Rounds a monthly-sales estimate to Amazon's "bought in past month"
/// buckets, as Keepa reports them.
pub(crate) fn sold_bucket(v: i64) -> i64 {
    let steps: [(i64, i64); 4] = [
        (1000, 100),
        (10_000, 1000),
        (100_000, 10_000),
        (i64::MAX, 50_000),
    ];
    if v < 50 {
        return 0;
    }
    if v < 100 {
        return 50;
    }
    for (limit, step) in steps {
        if v < limit {
            return v / step * step;
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_match_known_values() {
        assert_eq!(rfc3339(1_749_736_980_000), "2025-06-12T14:03:00Z");
        assert_eq!(
            rfc3339_millis(1_759_828_320_123),
            "2025-10-07T09:12:00.123Z"
        );
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(951_782_400_000), "2000-02-29");
        // Keepa's own documentation: keepaTime + 21564000 = Unix minutes.
        assert_eq!(
            keepa_minutes(1_749_736_980_000),
            29_162_283 - KEEPA_EPOCH_OFFSET_MIN
        );
    }

    #[test]
    fn fill_and_buckets() {
        let mut r = Rng::new(1);
        let s = fill(
            &mut r,
            "a {x} b {y} {z} {x}",
            &[("x", &["1"]), ("y", &["2"])],
        );
        assert_eq!(s, "a 1 b 2 {z} 1");
        let words: &[&str] = &["p", "q", "r", "s", "t", "u", "v", "w"];
        for _ in 0..20 {
            let s = fill(&mut r, "{w}={w}", &[("w", words)]);
            let (a, b) = s.split_once('=').unwrap();
            assert_eq!(a, b, "a repeated placeholder gets one choice");
        }
        assert_eq!(
            substitute("{a} and {b}, {a}; {c} {", &[("a", "{b}"), ("b", "2")]),
            "{b} and 2, {b}; {c} {"
        );
        assert_eq!(placeholders("{a} {b}} {a} {"), ["a", "b", "a"]);
        assert_eq!(sold_bucket(30), 0);
        assert_eq!(sold_bucket(734), 700);
        assert_eq!(sold_bucket(12_345), 10_000);
    }
}

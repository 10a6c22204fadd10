//! Number and text formatting shared by every exporter, so a figure reads
//! the same in a table, a Markdown summary and the HTML report.

/// The minus sign of every negative figure: ASCII, so numbers copy into
/// spreadsheets and shells as numbers.
const MINUS: &str = "-";

/// `1234567` → `1,234,567`.
pub fn thousands(n: u64) -> String {
    group_digits(&n.to_string())
}

/// Commas between groups of three in a run of ASCII digits (of any length,
/// so it also serves figures beyond `u64`).
fn group_digits(digits: &str) -> String {
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Dollars with enough precision for small per-call costs: `$0.0123`,
/// `$12.35`, `-$1.20`.
pub fn dollars(v: f64) -> String {
    let sign = if v < 0.0 { MINUS } else { "" };
    let a = v.abs();
    if a >= 100.0 {
        format!("{sign}${}", thousands_f(a))
    } else if a >= 1.0 {
        format!("{sign}${a:.2}")
    } else {
        format!("{sign}${a:.4}")
    }
}

fn thousands_f(a: f64) -> String {
    let whole = a.trunc() as u64;
    let cents = ((a - a.trunc()) * 100.0).round() as u64;
    if cents == 100 {
        format!("{}.00", thousands(whole + 1))
    } else {
        format!("{}.{cents:02}", thousands(whole))
    }
}

/// Dollars with exactly `decimals` places and thousands separators, for
/// axis ticks that must line up: `$1.20`, `-$0.05`, `$1,234.50`. A value
/// that rounds to zero gets no sign; non-finite values read `n/a`.
pub fn dollars_fixed(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let s = format!("{:.*}", decimals, v.abs());
    let (int, frac) = s.split_once('.').unwrap_or((s.as_str(), ""));
    let sign = if v < 0.0 && s.chars().any(|c| c.is_ascii_digit() && c != '0') {
        MINUS
    } else {
        ""
    };
    let mut out = format!("{sign}${}", group_digits(int));
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out
}

/// Compact count for axis labels: `950`, `1.5k`, `120k`, `2.25M`, `3B`,
/// `4T`, then scientific (`1.2e15`); non-finite values read `n/a`.
pub fn compact_count(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let sign = if v < 0.0 { MINUS } else { "" };
    let a = v.abs();
    if a >= 1e15 {
        return format!("{sign}{a:.1e}");
    }
    let (div, unit) = if a >= 1e12 {
        (1e12, "T")
    } else if a >= 1e9 {
        (1e9, "B")
    } else if a >= 1e6 {
        (1e6, "M")
    } else if a >= 1e3 {
        (1e3, "k")
    } else {
        (1.0, "")
    };
    let x = a / div;
    let body = if div == 1.0 {
        format!("{}", x.round())
    } else if x >= 100.0 {
        group_digits(&format!("{}", x.round()))
    } else {
        trim_decimals(format!("{x:.2}"))
    };
    format!("{sign}{body}{unit}")
}

/// `1.50` → `1.5`, `2.00` → `2`; text without a point is kept.
fn trim_decimals(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A change in percent with its sign and one decimal: `+64.7%`, `-25.9%`,
/// and `0.0%` (no sign) for what rounds to zero; non-finite values read
/// `n/a`.
pub fn signed_percent(p: f64) -> String {
    if !p.is_finite() {
        return "n/a".into();
    }
    let s = format!("{:.1}%", p.abs());
    if s == "0.0%" {
        s
    } else if p < 0.0 {
        format!("{MINUS}{s}")
    } else {
        format!("+{s}")
    }
}

/// A plain decimal with a fixed number of places: `fixed(3.0, 2)` →
/// `3.00`. For figures read by programs (CSV) and per-token prices.
pub fn fixed(v: f64, places: usize) -> String {
    format!("{v:.places$}")
}

/// A percentage: `percent(12.345, 1)` → `12.3%`.
pub fn percent(v: f64, places: usize) -> String {
    format!("{v:.places$}%")
}

/// A change in percent, always signed: `signed_percent_places(2.0, 1)` → `+2.0%`.
pub fn signed_percent_places(v: f64, places: usize) -> String {
    format!("{v:+.places$}%")
}

/// Quotes a CSV field when it needs it (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_owned()
    }
}

/// One line describing a trace's calibration, when anything was fitted.
pub fn calibration_note(c: &tracecost_replay::TraceCalibration) -> Option<String> {
    let idle = c.idle.map(|f| idle_note(&f));
    if c.content.n == 0 && c.prefix_factor.is_none() {
        return idle;
    }
    let mut s = String::from("token counts calibrated on recorded usage:");
    if c.content.n > 0 {
        s.push_str(&format!(
            " content ×{:.3} from {} call pair(s) (RMS error {:.1}%)",
            c.content.factor,
            c.content.n,
            c.content.relative_error * 100.0
        ));
    }
    if let Some(f) = c.prefix_factor {
        s.push_str(&format!(
            "{} system prompt and tools ×{f:.3} from the first recorded call",
            if c.content.n > 0 { ";" } else { "" }
        ));
    }
    if let Some(idle) = idle {
        s.push_str("; ");
        s.push_str(&idle);
    }
    Some(s)
}

/// The automatic cache's idle time as fitted on the record, and the
/// evidence.
fn idle_note(f: &tracecost_replay::IdleFit) -> String {
    let held = if f.idle_ms >= 24 * 60 * 60 * 1000 {
        "24h: extended retention".to_owned()
    } else {
        duration(f.idle_ms)
    };
    let mut s = format!(
        "cache idle time {held} fitted on recorded reads ({} read after a pause",
        f.hits
    );
    if let Some(h) = f.longest_hit_gap_ms {
        s.push_str(&format!(" of up to {}", duration(h)));
    }
    s.push_str(&format!(", {} missed", f.misses));
    if let Some(m) = f.shortest_miss_gap_ms {
        s.push_str(&format!(", from {} on", duration(m)));
    }
    if f.unexplained_misses > 0 {
        s.push_str(&format!(
            ", {} after a shorter pause than one that read",
            f.unexplained_misses
        ));
    }
    s.push(')');
    s
}

/// Milliseconds as minutes and seconds: `8m 0.001s` is not what a reader
/// wants, so seconds are rounded up, `1m 30s`, `45s`, `12m`.
fn duration(ms: u64) -> String {
    let secs = ms.div_ceil(1000);
    match (secs / 60, secs % 60) {
        (0, s) => format!("{s}s"),
        (m, 0) => format!("{m}m"),
        (m, s) => format!("{m}m {s}s"),
    }
}

/// Escapes text for a Markdown table cell.
pub fn md_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' => out.push_str("\\|"),
            '\n' | '\r' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '`' | '*' | '_' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Escapes text for HTML content and attribute values.
pub fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A count of needed recalls (an estimate may be fractional): grouped
/// digits, one decimal where it is not whole.
pub fn needs(n: f64) -> String {
    let tenths = (n * 10.0).round().max(0.0) as u64;
    let whole = thousands(tenths / 10);
    match tenths % 10 {
        0 => whole,
        d => format!("{whole}.{d}"),
    }
}

/// A recall-need range as `low–high` (the mid apart where it differs).
pub fn needs_range(low: f64, mid: f64, high: f64) -> String {
    if (high - low).abs() < 0.05 {
        return needs(mid);
    }
    format!("{} ({}–{})", needs(mid), needs(low), needs(high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(dollars(0.01234), "$0.0123");
        assert_eq!(dollars(12.345), "$12.35");
        assert_eq!(dollars(-1.2), "-$1.20");
        assert_eq!(dollars(1234.567), "$1,234.57");
        assert_eq!(dollars(199.999), "$200.00");
    }

    #[test]
    fn fixed_dollars_keep_their_places() {
        assert_eq!(dollars_fixed(1.2, 2), "$1.20");
        assert_eq!(dollars_fixed(-0.05, 2), "-$0.05");
        assert_eq!(dollars_fixed(1234.5, 2), "$1,234.50");
        assert_eq!(dollars_fixed(1234.7, 0), "$1,235");
        assert_eq!(dollars_fixed(0.123456, 4), "$0.1235");
        assert_eq!(dollars_fixed(1e12, 0), "$1,000,000,000,000");
        assert_eq!(dollars_fixed(1e21, 0), "$1,000,000,000,000,000,000,000");
        // What rounds to zero has no sign, so an axis never shows "-$0.00".
        assert_eq!(dollars_fixed(-0.001, 2), "$0.00");
        assert_eq!(dollars_fixed(-0.0, 2), "$0.00");
        assert_eq!(dollars_fixed(f64::NAN, 2), "n/a");
        assert_eq!(dollars_fixed(f64::NEG_INFINITY, 2), "n/a");
    }

    #[test]
    fn compact_counts() {
        assert_eq!(compact_count(0.0), "0");
        assert_eq!(compact_count(950.4), "950");
        assert_eq!(compact_count(1500.0), "1.5k");
        assert_eq!(compact_count(2000.0), "2k");
        assert_eq!(compact_count(64_000.0), "64k");
        assert_eq!(compact_count(120_400.0), "120k");
        assert_eq!(compact_count(999_600.0), "1,000k");
        assert_eq!(compact_count(2_250_000.0), "2.25M");
        assert_eq!(compact_count(3e9), "3B");
        assert_eq!(compact_count(4e12), "4T");
        assert_eq!(compact_count(1.23e15), "1.2e15");
        assert_eq!(compact_count(-1500.0), "-1.5k");
        assert_eq!(compact_count(f64::INFINITY), "n/a");
    }

    #[test]
    fn signed_percents() {
        assert_eq!(signed_percent(64.71), "+64.7%");
        assert_eq!(signed_percent(-25.9), "-25.9%");
        assert_eq!(signed_percent(0.04), "0.0%");
        assert_eq!(signed_percent(-0.04), "0.0%");
        assert_eq!(signed_percent(f64::NAN), "n/a");
    }

    #[test]
    fn one_minus_sign_everywhere() {
        for s in [
            dollars(-1.2),
            dollars_fixed(-1.2, 2),
            compact_count(-1.2e6),
            signed_percent(-1.2),
        ] {
            assert!(s.starts_with(MINUS), "{s}");
            assert!(!s.contains('\u{2212}'), "{s}");
        }
    }

    #[test]
    fn fixed_places_and_percentages() {
        assert_eq!(fixed(3.0, 2), "3.00");
        assert_eq!(fixed(0.1234567, 6), "0.123457");
        assert_eq!(percent(12.345, 1), "12.3%");
        assert_eq!(percent(-0.04, 1), "-0.0%");
        assert_eq!(signed_percent_places(2.0, 1), "+2.0%");
        assert_eq!(signed_percent_places(-8.724, 2), "-8.72%");
    }

    #[test]
    fn escaping() {
        assert_eq!(
            html_escape(r#"<script>"x"&'y'</script>"#),
            "&lt;script&gt;&quot;x&quot;&amp;&#39;y&#39;&lt;/script&gt;"
        );
        assert_eq!(md_escape("a|b<c>\n_d_"), "a\\|b&lt;c&gt; \\_d\\_");
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"hi\"\n"), "\"say \"\"hi\"\"\n\"");
    }
}

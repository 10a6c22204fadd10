//! A small SVG writer and the embedded font's metrics.
//!
//! Charts are laid out in pixels by this module's measurements and written
//! as plain SVG: rectangles, lines, polylines and `<text>` whose `y` is the
//! baseline. Nothing depends on `dominant-baseline` or font-relative units,
//! so browsers and resvg place text alike. Coordinates are written with one
//! decimal, so output bytes depend only on the chart and the size.

use std::fmt::Write as _;
use std::sync::OnceLock;

/// Family list the SVG names: the embedded font first, then fallbacks for
/// a browser that lacks it. resvg only ever sees the embedded one.
pub(super) const FONT_FAMILY: &str = "DejaVu Sans, Verdana, Arial, sans-serif";
/// DejaVu Sans 2.37 (Bitstream Vera license, DejaVu changes public domain).
pub(super) static FONT_BYTES: &[u8] = include_bytes!("../../../../assets/fonts/DejaVuSans.ttf");

/// Ascender and descender of DejaVu Sans as fractions of the font size
/// (1901 and 483 of 2048 units): the vertical extent any line of text can
/// take around its baseline.
pub(super) const ASCENT: f64 = 0.929;
pub(super) const DESCENT: f64 = 0.236;
/// Half the cap height (1493 / 2048 / 2): a baseline this far below a
/// centre line puts capitals and digits visually centred on it.
const HALF_CAP: f64 = 0.365;

/// Advance widths of the embedded font, per character, in font units.
struct Metrics {
    units_per_em: f64,
    face: ttf_parser::Face<'static>,
    missing: f64,
    /// The advances of ASCII, looked up once: nearly every label is ASCII,
    /// and a fleet's pages measure millions of characters.
    ascii: [f64; 128],
}

impl Metrics {
    fn advance(&self, c: char) -> f64 {
        match self.ascii.get(c as usize) {
            Some(a) => *a,
            None => self.face_advance(c),
        }
    }

    fn face_advance(&self, c: char) -> f64 {
        self.face
            .glyph_index(c)
            .and_then(|g| self.face.glyph_hor_advance(g))
            .map_or(self.missing, f64::from)
    }
}

fn metrics() -> Option<&'static Metrics> {
    static M: OnceLock<Option<Metrics>> = OnceLock::new();
    M.get_or_init(|| {
        let face = ttf_parser::Face::parse(FONT_BYTES, 0).ok()?;
        let units_per_em = f64::from(face.units_per_em());
        let missing = f64::from(face.glyph_hor_advance(ttf_parser::GlyphId(0)).unwrap_or(0));
        let mut m = Metrics {
            units_per_em,
            face,
            missing,
            ascii: [0.0; 128],
        };
        for i in 0..128u8 {
            m.ascii[usize::from(i)] = m.face_advance(char::from(i));
        }
        Some(m)
    })
    .as_ref()
}

/// Whether the embedded font parses (checked once before drawing).
pub(super) fn font_ok() -> bool {
    metrics().is_some()
}

/// Width in pixels of `text` at `size` px: the sum of the glyph advances.
/// Kerning and ligatures only ever narrow DejaVu text, so this is an upper
/// bound of what a shaper lays out, which is the safe side for fitting.
pub(super) fn text_width(text: &str, size: f64) -> f64 {
    let Some(m) = metrics() else {
        // Never reached after `font_ok`; a generous guess keeps layout sane.
        return text.chars().count() as f64 * size * 0.7;
    };
    let units: f64 = text.chars().map(|c| m.advance(c)).sum();
    units * size / m.units_per_em
}

/// An sRGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `self` moved towards `with` by `t` (0 = self, 1 = with).
    pub(super) fn mix(self, with: Rgb, t: f64) -> Rgb {
        let t = t.clamp(0.0, 1.0);
        let m = |a: u8, b: u8| (f64::from(a) * (1.0 - t) + f64::from(b) * t).round() as u8;
        Rgb(m(self.0, with.0), m(self.1, with.1), m(self.2, with.2))
    }

    pub(super) fn luminance(self) -> f64 {
        0.2126 * f64::from(self.0) + 0.7152 * f64::from(self.1) + 0.0722 * f64::from(self.2)
    }

    fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

pub(super) const WHITE: Rgb = Rgb(255, 255, 255);
pub(super) const BLACK: Rgb = Rgb(0, 0, 0);

/// Horizontal anchor of a text: where `x` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Anchor {
    Start,
    Middle,
    End,
}

/// One decimal, no trailing `.0`, no `-0`: short and stable coordinates.
fn num(v: f64) -> String {
    let v = if v.is_finite() { v } else { 0.0 };
    let r = (v * 10.0).round() / 10.0;
    let r = if r == 0.0 { 0.0 } else { r };
    if r.fract() == 0.0 {
        format!("{r:.0}")
    } else {
        format!("{r:.1}")
    }
}

/// XML text content: `&`, `<`, `>` and quotes escaped; control characters
/// (which XML cannot carry at all) become spaces.
pub(super) fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// An SVG document being written; every chart starts as a white canvas.
pub(super) struct Svg {
    pub(super) w: f64,
    pub(super) h: f64,
    body: String,
}

impl Svg {
    pub(super) fn new(width: u32, height: u32) -> Svg {
        let mut s = Svg {
            w: f64::from(width),
            h: f64::from(height),
            body: String::new(),
        };
        s.rect(0.0, 0.0, s.w, s.h, WHITE);
        s
    }

    /// A filled rectangle between two corners given in any order.
    pub(super) fn rect(&mut self, x0: f64, y0: f64, x1: f64, y1: f64, fill: Rgb) {
        let (x, w) = (x0.min(x1), (x1 - x0).abs());
        let (y, h) = (y0.min(y1), (y1 - y0).abs());
        let _ = writeln!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>"#,
            num(x),
            num(y),
            num(w),
            num(h),
            fill.hex()
        );
    }

    /// A rectangle outline of `width` px, drawn inside the given corners.
    pub(super) fn frame(&mut self, x0: f64, y0: f64, x1: f64, y1: f64, stroke: Rgb, width: f64) {
        let half = width / 2.0;
        let (x, w) = (x0.min(x1) + half, ((x1 - x0).abs() - width).max(0.0));
        let (y, h) = (y0.min(y1) + half, ((y1 - y0).abs() - width).max(0.0));
        let _ = writeln!(
            self.body,
            r#"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="{}" stroke-width="{}"/>"#,
            num(x),
            num(y),
            num(w),
            num(h),
            stroke.hex(),
            num(width)
        );
    }

    pub(super) fn line(&mut self, from: (f64, f64), to: (f64, f64), stroke: Rgb, width: f64) {
        self.line_styled(from, to, stroke, width, "");
    }

    pub(super) fn dashed(&mut self, from: (f64, f64), to: (f64, f64), stroke: Rgb, width: f64) {
        self.line_styled(from, to, stroke, width, r#" stroke-dasharray="5 4""#);
    }

    fn line_styled(
        &mut self,
        (x1, y1): (f64, f64),
        (x2, y2): (f64, f64),
        stroke: Rgb,
        width: f64,
        style: &str,
    ) {
        let _ = writeln!(
            self.body,
            r#"<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}"{style}/>"#,
            num(x1),
            num(y1),
            num(x2),
            num(y2),
            stroke.hex(),
            num(width)
        );
    }

    pub(super) fn polyline(&mut self, points: &[(f64, f64)], stroke: Rgb, width: f64) {
        if points.len() < 2 {
            return;
        }
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{},{}", num(*x), num(*y)))
            .collect();
        let _ = writeln!(
            self.body,
            r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="{}" stroke-linejoin="round" stroke-linecap="round"/>"#,
            pts.join(" "),
            stroke.hex(),
            num(width)
        );
    }

    pub(super) fn polygon(&mut self, points: &[(f64, f64)], fill: Rgb) {
        if points.len() < 3 {
            return;
        }
        let pts: Vec<String> = points
            .iter()
            .map(|(x, y)| format!("{},{}", num(*x), num(*y)))
            .collect();
        let _ = writeln!(
            self.body,
            r#"<polygon points="{}" fill="{}"/>"#,
            pts.join(" "),
            fill.hex()
        );
    }

    pub(super) fn circle(&mut self, (cx, cy): (f64, f64), r: f64, fill: Rgb) {
        let _ = writeln!(
            self.body,
            r#"<circle cx="{}" cy="{}" r="{}" fill="{}"/>"#,
            num(cx),
            num(cy),
            num(r),
            fill.hex()
        );
    }

    /// Text with its baseline at `y`.
    pub(super) fn text(
        &mut self,
        (x, y): (f64, f64),
        s: &str,
        size: f64,
        color: Rgb,
        anchor: Anchor,
    ) {
        if s.is_empty() {
            return;
        }
        let anchor = match anchor {
            Anchor::Start => "",
            Anchor::Middle => r#" text-anchor="middle""#,
            Anchor::End => r#" text-anchor="end""#,
        };
        let _ = writeln!(
            self.body,
            r#"<text x="{}" y="{}" font-size="{}" fill="{}"{anchor}>{}</text>"#,
            num(x),
            num(y),
            num(size),
            color.hex(),
            escape(s)
        );
    }

    pub(super) fn finish(self) -> String {
        let mut out = String::with_capacity(self.body.len() + 300);
        let _ = writeln!(
            out,
            r#"<svg width="{w}" height="{h}" viewBox="0 0 {w} {h}" xmlns="http://www.w3.org/2000/svg" font-family="{FONT_FAMILY}">"#,
            w = num(self.w),
            h = num(self.h)
        );
        out.push_str(&self.body);
        out.push_str("</svg>\n");
        out
    }
}

/// Baseline that centres a line of text of `size` px on `cy`.
pub(super) fn baseline_for(cy: f64, size: f64) -> f64 {
    cy + HALF_CAP * size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short_and_stable() {
        assert_eq!(num(1.0), "1");
        assert_eq!(num(-0.04), "0");
        assert_eq!(num(2.25), "2.3");
        assert_eq!(num(f64::NAN), "0");
    }

    #[test]
    fn text_is_escaped_and_measured() {
        assert_eq!(escape("a<b>&\"\u{1}"), "a&lt;b&gt;&amp;&quot; ");
        assert!(font_ok());
        let w = text_width("cache write", 13.0);
        assert!(w > 60.0 && w < 90.0, "{w}");
        assert!(text_width("WWW", 13.0) > text_width("iii", 13.0));
    }
}

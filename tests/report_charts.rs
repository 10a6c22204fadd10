//! Chart rendering: every kind renders to SVG and PNG for typical and
//! degenerate input, deterministically, with escaped text.
//!
//! Set `TRACECOST_CHART_SAMPLES=/some/dir` to also write the sample charts
//! there as PNG and SVG for a visual check.

use tracecost::report::charts::{CallTokens, Chart, ChartError, render_png, render_svg};

const W: u32 = 900;
const H: u32 = 500;

const LONG: &str = "ledger:t=8000,k=2+native:manifest=cached,ttl=5m";

fn stacked() -> Chart {
    let baseline = (0..30)
        .map(|i| CallTokens {
            uncached: 8_000 + i * 3_900,
            cache_write: 0,
            cache_read: 0,
        })
        .collect();
    let recommended = (0..30)
        .map(|i| CallTokens {
            uncached: 600 + (i % 5) * 150,
            cache_write: if i % 9 == 0 { 6_000 } else { 1_200 },
            cache_read: 7_000 + i * 900,
        })
        .collect();
    let cheapest = (0..30)
        .map(|i| CallTokens {
            uncached: 400 + (i % 3) * 100,
            cache_write: if i % 7 == 0 { 9_000 } else { 900 },
            cache_read: 6_000 + i * 700,
        })
        .collect();
    Chart::StackedCalls {
        title: "Input tokens per call: baseline, recommended, cheapest".into(),
        series: vec![
            ("baseline: none".into(), baseline),
            (format!("recommended: {LONG}"), recommended),
            (
                "cheapest: ledger:t=4000,k=1+native:manifest=cached,ttl=1h".into(),
                cheapest,
            ),
        ],
    }
}

fn cumulative() -> Chart {
    let mut lines = Vec::new();
    let configs = [
        "baseline",
        LONG,
        "ledger:t=4000,k=1+native:manifest=cached,ttl=1h",
        "ledger:t=16000,k=4",
        "native:ttl=5m",
        "ledger:t=2000,k=8+native:manifest=uncached,ttl=5m",
        "ledger:t=32000,k=2",
        "native:ttl=1h",
    ];
    for (p, name) in configs.iter().enumerate() {
        let rate = 0.004 - p as f64 * 0.0004;
        let v: Vec<f64> = (1..=40)
            .map(|c| rate * c as f64 * (1.0 + c as f64 / 30.0))
            .collect();
        lines.push((name.to_string(), v));
    }
    for p in 0..22 {
        let rate = 0.0022 + p as f64 * 0.00005;
        let v: Vec<f64> = (1..=40)
            .map(|c| rate * c as f64 * (1.0 + c as f64 / 32.0))
            .collect();
        lines.push((format!("ledger:t={},k={}", 1000 * (p + 1), p % 5), v));
    }
    Chart::CumulativeCost {
        title: "Cumulative cost by policy (30 policies)".into(),
        lines,
    }
}

fn heatmap() -> Chart {
    let thresholds = vec![2_000, 4_000, 8_000, 16_000, 32_000, 64_000];
    let keeps = vec![1, 2, 4, 8];
    let cost_usd = keeps
        .iter()
        .map(|k| {
            thresholds
                .iter()
                .map(|t| {
                    if *k == 8 && *t == 2_000 {
                        None
                    } else {
                        let x = (*t as f64 / 8_000.0).log2();
                        Some(1.15 + 0.08 * x * x + 0.05 * *k as f64)
                    }
                })
                .collect()
        })
        .collect();
    Chart::Heatmap {
        title: "Total cost by threshold × keep-last (native cache, ttl=5m)".into(),
        thresholds,
        keeps,
        cost_usd,
    }
}

fn savings() -> Chart {
    Chart::SavingsBars {
        title: "Savings vs baseline ($4.82)".into(),
        bars: vec![
            (LONG.into(), 3.12, 64.7),
            (
                "ledger:t=4000,k=1+native:manifest=cached,ttl=1h".into(),
                2.95,
                61.2,
            ),
            ("native:ttl=5m".into(), 2.10, 43.6),
            ("ledger:t=16000,k=4".into(), 1.02, 21.2),
            ("ledger:t=32000,k=2".into(), 0.41, 8.5),
            ("native:ttl=1h".into(), -0.37, -7.7),
            (
                "ledger:t=500,k=0+native:manifest=uncached,ttl=1h".into(),
                -1.25,
                -25.9,
            ),
        ],
    }
}

fn samples() -> Vec<(&'static str, Chart)> {
    vec![
        ("stacked_calls", stacked()),
        ("cumulative_cost", cumulative()),
        ("heatmap", heatmap()),
        ("savings_bars", savings()),
    ]
}

fn degenerate() -> Vec<Chart> {
    let t = String::from("degenerate");
    let one = CallTokens {
        uncached: 10,
        cache_write: 0,
        cache_read: 0,
    };
    vec![
        Chart::StackedCalls {
            title: t.clone(),
            series: vec![],
        },
        Chart::StackedCalls {
            title: t.clone(),
            series: vec![("a".into(), vec![]), ("b".into(), vec![])],
        },
        Chart::StackedCalls {
            title: t.clone(),
            series: vec![("one".into(), vec![one])],
        },
        Chart::StackedCalls {
            title: t.clone(),
            series: vec![("zeros".into(), vec![CallTokens::default(); 3])],
        },
        Chart::StackedCalls {
            title: t.clone(),
            series: vec![(
                "huge".into(),
                vec![CallTokens {
                    uncached: u64::MAX,
                    cache_write: u64::MAX,
                    cache_read: u64::MAX,
                }],
            )],
        },
        Chart::CumulativeCost {
            title: t.clone(),
            lines: vec![],
        },
        Chart::CumulativeCost {
            title: t.clone(),
            lines: vec![("empty".into(), vec![])],
        },
        Chart::CumulativeCost {
            title: t.clone(),
            lines: vec![("single".into(), vec![0.5])],
        },
        Chart::CumulativeCost {
            title: t.clone(),
            lines: vec![("nan".into(), vec![f64::NAN, f64::INFINITY])],
        },
        Chart::CumulativeCost {
            title: t.clone(),
            lines: vec![
                ("zero".into(), vec![0.0, 0.0]),
                ("gap".into(), vec![0.1, f64::NAN, 0.3]),
            ],
        },
        Chart::CumulativeCost {
            title: t.clone(),
            lines: vec![("negative".into(), vec![-1.0, -2.0])],
        },
        Chart::Heatmap {
            title: t.clone(),
            thresholds: vec![],
            keeps: vec![],
            cost_usd: vec![],
        },
        Chart::Heatmap {
            title: t.clone(),
            thresholds: vec![8000],
            keeps: vec![2],
            cost_usd: vec![vec![Some(1.0)]],
        },
        Chart::Heatmap {
            title: t.clone(),
            thresholds: vec![1000, 2000],
            keeps: vec![1, 2],
            cost_usd: vec![],
        },
        Chart::Heatmap {
            title: t.clone(),
            thresholds: vec![1000, 2000, 3000],
            keeps: vec![1],
            cost_usd: vec![
                vec![Some(f64::NAN), Some(2.0), Some(2.0), Some(9.0)],
                vec![None],
            ],
        },
        Chart::Heatmap {
            title: t.clone(),
            thresholds: (1..=40).map(|i| i * 1000).collect(),
            keeps: (0..30).collect(),
            cost_usd: (0..30)
                .map(|k| (0..40).map(|i| Some(f64::from(i * k))).collect())
                .collect(),
        },
        Chart::SavingsBars {
            title: t.clone(),
            bars: vec![],
        },
        Chart::SavingsBars {
            title: t.clone(),
            bars: vec![("only".into(), 0.0, 0.0)],
        },
        Chart::SavingsBars {
            title: t.clone(),
            bars: vec![
                ("all worse".into(), -0.2, -3.0),
                ("nan".into(), f64::NAN, f64::NAN),
            ],
        },
        Chart::SavingsBars {
            title: t.clone(),
            bars: (0..60)
                .map(|i| (format!("{LONG}#{i}"), f64::from(i) - 20.0, f64::from(i)))
                .collect(),
        },
        Chart::SavingsBars {
            title: "x".repeat(500),
            bars: vec![("y".repeat(500), 1e12, 1e6)],
        },
    ]
}

/// Checks the PNG signature and the IHDR chunk; returns (width, height).
fn png_size(png: &[u8]) -> (u32, u32) {
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    assert_eq!(&png[8..16], b"\0\0\0\x0dIHDR", "IHDR first");
    let w = u32::from_be_bytes([png[16], png[17], png[18], png[19]]);
    let h = u32::from_be_bytes([png[20], png[21], png[22], png[23]]);
    assert_eq!(&png[24..29], &[8, 2, 0, 0, 0], "8-bit RGB, no interlace");
    (w, h)
}

/// Walks the chunk list: only IHDR, IDAT and IEND (no tIME or text), and
/// every chunk's CRC is right.
fn png_chunks(png: &[u8]) -> Vec<String> {
    let mut kinds = Vec::new();
    let mut at = 8;
    while at < png.len() {
        let len = u32::from_be_bytes([png[at], png[at + 1], png[at + 2], png[at + 3]]) as usize;
        let body = &png[at + 4..at + 8 + len];
        let crc = u32::from_be_bytes([
            png[at + 8 + len],
            png[at + 9 + len],
            png[at + 10 + len],
            png[at + 11 + len],
        ]);
        assert_eq!(crc32(body), crc, "CRC of chunk at {at}");
        kinds.push(String::from_utf8_lossy(&body[..4]).into_owned());
        at += 12 + len;
    }
    assert_eq!(at, png.len());
    kinds
}

fn crc32(data: &[u8]) -> u32 {
    let mut c = u32::MAX;
    for &b in data {
        c ^= u32::from(b);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

#[test]
fn typical_charts_render_to_svg_and_png() {
    for (name, chart) in samples() {
        let svg = render_svg(&chart, W, H).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(svg.starts_with("<svg"), "{name}");
        assert!(svg.contains(r#"width="900" height="500""#), "{name}");
        let png = render_png(&chart, W, H).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(png_size(&png), (W, H), "{name}");
        assert_eq!(png_chunks(&png), ["IHDR", "IDAT", "IEND"], "{name}");
    }
}

#[test]
fn degenerate_charts_render_without_error() {
    for (i, chart) in degenerate().iter().enumerate() {
        let svg = render_svg(chart, 640, 360).unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert!(svg.contains("</svg>"), "case {i}");
        let png = render_png(chart, 640, 360).unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert_eq!(png_size(&png), (640, 360), "case {i}");
    }
}

#[test]
fn empty_input_says_no_data() {
    for chart in [
        Chart::StackedCalls {
            title: "a".into(),
            series: vec![],
        },
        Chart::CumulativeCost {
            title: "b".into(),
            lines: vec![],
        },
        Chart::Heatmap {
            title: "c".into(),
            thresholds: vec![],
            keeps: vec![1],
            cost_usd: vec![],
        },
        Chart::SavingsBars {
            title: "d".into(),
            bars: vec![],
        },
    ] {
        let svg = render_svg(&chart, W, H).unwrap();
        assert!(svg.contains("No data to plot"), "{svg}");
    }
}

#[test]
fn rendering_is_deterministic() {
    for (name, chart) in samples() {
        assert_eq!(
            render_svg(&chart, W, H).unwrap(),
            render_svg(&chart, W, H).unwrap(),
            "{name}"
        );
        assert!(
            render_png(&chart, W, H).unwrap() == render_png(&chart, W, H).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn svg_has_title_and_axis_labels() {
    let expect: [(&str, &[&str]); 4] = [
        (
            "stacked_calls",
            &[
                "Input tokens per call",
                "input tokens",
                "call",
                "cache read",
                "40k",
            ],
        ),
        (
            "cumulative_cost",
            &[
                "Cumulative cost by policy",
                "USD",
                "call",
                "22 more policies",
            ],
        ),
        (
            "heatmap",
            &[
                "Total cost by threshold",
                "threshold (chars)",
                "keep last N",
                "n/a",
                "$1.20",
                "2k",
                "64k",
            ],
        ),
        (
            "savings_bars",
            &[
                "Savings vs baseline",
                "USD",
                "+64.7%",
                "-25.9%",
                "$2.00",
                "costs more",
            ],
        ),
    ];
    for ((name, chart), (ename, needles)) in samples().into_iter().zip(expect) {
        assert_eq!(name, ename);
        let svg = render_svg(&chart, W, H).unwrap();
        for needle in needles {
            assert!(svg.contains(needle), "{name}: missing {needle:?}");
        }
    }
}

/// Charts print negative figures with the same ASCII minus as every other
/// exporter (`report::fmt`), never U+2212.
#[test]
fn negative_figures_use_the_report_minus_sign() {
    let charts = [
        savings(),
        Chart::CumulativeCost {
            title: "negative".into(),
            lines: vec![("refund".into(), vec![-0.5, -1.25, -2.0])],
        },
        Chart::Heatmap {
            title: "negative".into(),
            thresholds: vec![1000, 2000],
            keeps: vec![1],
            cost_usd: vec![vec![Some(-1.5), Some(-0.25)]],
        },
    ];
    for chart in &charts {
        let svg = render_svg(chart, W, H).unwrap();
        assert!(!svg.contains('\u{2212}'), "U+2212 in {svg}");
        let negative_label = svg
            .split('>')
            .skip(1)
            .any(|body| body.trim_start().starts_with('-'));
        assert!(negative_label, "no negative label in {svg}");
    }
    let savings_svg = render_svg(&savings(), W, H).unwrap();
    assert!(savings_svg.contains("-$"), "negative tick");
    assert!(savings_svg.contains("-25.9%"), "negative percentage");
}

#[test]
fn hostile_labels_are_escaped_in_svg() {
    let evil = r#""><img src=x onerror=alert(1)><script>alert(2)</script>&amp;"#;
    let charts = [
        Chart::StackedCalls {
            title: evil.into(),
            series: vec![(evil.into(), vec![CallTokens::default(); 2])],
        },
        Chart::CumulativeCost {
            title: evil.into(),
            lines: vec![(evil.into(), vec![1.0, 2.0])],
        },
        Chart::Heatmap {
            title: evil.into(),
            thresholds: vec![1],
            keeps: vec![1],
            cost_usd: vec![vec![None]],
        },
        Chart::SavingsBars {
            title: evil.into(),
            bars: vec![
                (evil.into(), 1.0, 2.0),
                ("ctl\u{1}\u{7}\u{1b}".into(), 1.0, 1.0),
            ],
        },
    ];
    for chart in &charts {
        let svg = render_svg(chart, W, H).unwrap();
        assert!(!svg.contains("<script"), "{svg}");
        assert!(!svg.contains("<img"), "{svg}");
        assert!(!svg.contains("\"><"), "{svg}");
        assert!(svg.contains("&lt;script&gt;"), "{svg}");
        assert!(
            !svg.contains('\u{1}') && !svg.contains('\u{1b}'),
            "control characters"
        );
        // Everything that is not markup must be an entity or plain text.
        let text_bodies = svg
            .split('>')
            .skip(1)
            .map(|s| s.split('<').next().unwrap_or(""));
        for body in text_bodies {
            assert!(!body.contains('"'), "raw quote in text {body:?}");
        }
    }
}

#[test]
fn long_labels_are_shortened() {
    let long = format!("{LONG},{}", "x=1,".repeat(60));
    let chart = Chart::SavingsBars {
        title: long.clone(),
        bars: vec![(long.clone(), 1.0, 10.0)],
    };
    let svg = render_svg(&chart, W, H).unwrap();
    assert!(!svg.contains(&long));
    assert!(svg.contains('…'));
}

#[test]
fn bad_sizes_are_errors_not_panics() {
    let chart = savings();
    for (w, h) in [(0, 0), (10, 500), (900, 10), (100_000, 500)] {
        assert!(matches!(
            render_svg(&chart, w, h),
            Err(ChartError::InvalidSize { .. })
        ));
        assert!(matches!(
            render_png(&chart, w, h),
            Err(ChartError::InvalidSize { .. })
        ));
    }
}

#[test]
fn write_samples_when_asked() {
    let Ok(dir) = std::env::var("TRACECOST_CHART_SAMPLES") else {
        return;
    };
    std::fs::create_dir_all(&dir).unwrap();
    for (name, chart) in samples() {
        std::fs::write(
            format!("{dir}/{name}.png"),
            render_png(&chart, W, H).unwrap(),
        )
        .unwrap();
        std::fs::write(
            format!("{dir}/{name}.svg"),
            render_svg(&chart, W, H).unwrap(),
        )
        .unwrap();
    }
    for (i, chart) in degenerate().iter().enumerate() {
        std::fs::write(
            format!("{dir}/degenerate_{i:02}.png"),
            render_png(chart, 640, 360).unwrap(),
        )
        .unwrap();
    }
}

//! Chart rendering: every kind renders to SVG and PNG for typical and
//! degenerate input, deterministically, with escaped text.
//!
//! Set `TRACECOST_CHART_SAMPLES=/some/dir` to also write the sample charts
//! there as PNG and SVG for a visual check.

use tracecost_report::charts::{
    CallTokens, Chart, ChartError, render_png, render_svg, suggested_height,
};

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
        scale_usd: None,
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

/// A config string as long as real sweeps print.
const LANGCHAIN: &str =
    "langchain-clear:trigger=100000,keep=3,exclude=recall_tool_result+claude-code:ttl=5m";

/// Deterministic pseudo-random numbers in 0..1 (64-bit LCG), so the large
/// fixtures need no dependency and never change.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn config_name(i: usize) -> String {
    match i % 4 {
        0 => format!(
            "langchain-clear:trigger={},keep={},exclude=recall_tool_result+claude-code:ttl=5m",
            20_000 * (i + 1),
            i % 5
        ),
        1 => format!(
            "ledger:t={},k={}+native:manifest=cached,ttl=1h",
            1000 * (i + 1),
            i % 6
        ),
        2 => format!("claude-code:ttl={}", if i % 8 == 2 { "5m" } else { "1h" }),
        _ => format!("ledger:t={},k={}", 500 * (i + 1), i % 3),
    }
}

fn stacked_calls(n: usize, labels: &[&str]) -> Chart {
    let mut rng = Lcg(7);
    let series = labels
        .iter()
        .enumerate()
        .map(|(s, label)| {
            let calls = (0..n)
                .map(|i| {
                    let grow = (i as f64 * 40.0) as u64;
                    if s == 0 {
                        CallTokens {
                            uncached: 6_000 + grow + (rng.next() * 3000.0) as u64,
                            cache_write: 0,
                            cache_read: 0,
                        }
                    } else {
                        CallTokens {
                            uncached: 500 + (rng.next() * 800.0) as u64,
                            cache_write: if i % 9 == 0 { 5_000 } else { 900 },
                            cache_read: 4_000 + grow / (s as u64 + 1),
                        }
                    }
                })
                .collect();
            (label.to_string(), calls)
        })
        .collect();
    Chart::StackedCalls {
        title: format!("session-with-a-long-name-{n}: input tokens per call by billing class"),
        series,
    }
}

fn stacked_small() -> Chart {
    stacked_calls(
        3,
        &[
            "status quo: claude-code:ttl=5m",
            &format!("recommended: {LANGCHAIN}"),
        ],
    )
}

fn stacked_large() -> Chart {
    stacked_calls(
        1000,
        &[
            "status quo: claude-code:ttl=5m",
            &format!("recommended: {LANGCHAIN}"),
            "cheapest: ledger:t=4000,k=1+native:manifest=cached,ttl=1h",
        ],
    )
}

fn cumulative_large() -> Chart {
    let mut rng = Lcg(11);
    let mut lines = Vec::new();
    for p in 0..14 {
        let rate = if p == 0 {
            0.05
        } else {
            0.002 + 0.0007 * p as f64
        };
        let mut acc = 0.0;
        let v: Vec<f64> = (0..1000)
            .map(|_| {
                acc += rate * (0.5 + rng.next());
                acc
            })
            .collect();
        let label = match p {
            0 => "status quo: claude-code:ttl=5m".to_string(),
            1 => format!("recommended: {LANGCHAIN}"),
            _ => config_name(p),
        };
        lines.push((label, v));
    }
    Chart::CumulativeCost {
        title: "a-1000-call-session: cumulative cost across calls".into(),
        lines,
    }
}

fn heatmap_shared() -> Chart {
    match heatmap() {
        Chart::Heatmap {
            thresholds,
            keeps,
            cost_usd,
            ..
        } => Chart::Heatmap {
            title: "Ledger cost, cache claude-code:ttl=1h (colour scale shared with the other heatmaps of the report)".into(),
            thresholds,
            keeps,
            cost_usd,
            scale_usd: Some((0.80, 2.40)),
        },
        _ => unreachable!(),
    }
}

fn savings_large() -> Chart {
    Chart::SavingsBars {
        title: "Savings against the status quo, best config per policy".into(),
        bars: (0..60)
            .map(|i| {
                let usd = 3.0 - i as f64 * 0.09;
                (config_name(i), usd, usd / 4.82 * 100.0)
            })
            .collect(),
    }
}

fn config_costs(n: usize) -> Chart {
    let bars: Vec<(String, f64)> = (0..n)
        .map(|i| (config_name(i), 41.5 + i as f64 * 3.7))
        .collect();
    Chart::ConfigCosts {
        title: format!("Fleet cost by config ({n} configs, cheapest first)"),
        bars,
        status_quo: Some(n - 1),
        recommended: Some(0),
    }
}

fn distribution(n: usize) -> Chart {
    let mut rng = Lcg(3);
    let savings_usd = (0..n)
        .map(|i| {
            if n <= 5 {
                [0.42, -0.13, 1.05, 0.0, 0.31][i]
            } else {
                (rng.next() + rng.next() + rng.next() - 1.1) * 2.5
            }
        })
        .collect();
    Chart::SavingsDistribution {
        title: format!("Savings per session ({n} sessions)"),
        savings_usd,
    }
}

fn per_day(n: usize) -> Chart {
    let mut rng = Lcg(5);
    let days = (0..n)
        .map(|d| {
            let day = format!("2026-{:02}-{:02}", 9 + d / 30, 1 + d % 30);
            let recorded = 20.0 + 15.0 * rng.next();
            let v = if d % 17 == 5 {
                vec![None, None, None]
            } else {
                vec![Some(recorded), Some(recorded * 0.97), Some(recorded * 0.55)]
            };
            (day, v)
        })
        .collect();
    Chart::CostPerDay {
        title: format!("Cost per day ({n} days)"),
        series: vec!["recorded".into(), "status quo".into(), "recommended".into()],
        days,
    }
}

fn pareto(n: usize) -> Chart {
    let mut rng = Lcg(7);
    let points: Vec<(String, f64, f64)> = (0..n)
        .map(|i| {
            let turns = (rng.next() * 200.0).floor();
            (
                config_name(i),
                turns,
                30.0 + 10.0 * rng.next() - turns / 40.0,
            )
        })
        .collect();
    Chart::ParetoFront {
        title: format!("Cost against recall risk ({n} configs)"),
        points,
        status_quo: Some(0),
        recommended: (n > 1).then_some(1),
        notes: vec!["Break-even: compaction wins if a recall costs less than $0.0123: below that, ledger:t=8000,k=1+claude-code:ttl=recorded is cheaper.".into()],
    }
}

fn project_costs(n: usize) -> Chart {
    Chart::ProjectCosts {
        against: "recommended".into(),
        title: format!("Status quo vs recommended by project ({n} projects)"),
        projects: (0..n)
            .map(|i| {
                let sq = 5.0 + (i * 37 % 23) as f64 * 4.1;
                let name = if i % 5 == 0 {
                    format!("-home-someone-src-github.com-example-organisation-a-very-long-project-name-{i}")
                } else {
                    format!("project-{i}")
                };
                (name, sq, sq * 0.62)
            })
            .collect(),
    }
}

/// Every kind, small and large, with the height a caller would give it.
fn samples() -> Vec<(&'static str, Chart)> {
    vec![
        ("stacked_calls", stacked()),
        ("stacked_calls_3", stacked_small()),
        ("stacked_calls_1000", stacked_large()),
        ("cumulative_cost", cumulative()),
        ("cumulative_cost_1000", cumulative_large()),
        ("heatmap", heatmap()),
        ("heatmap_shared_scale", heatmap_shared()),
        ("savings_bars", savings()),
        ("savings_bars_60", savings_large()),
        ("config_costs_5", config_costs(5)),
        ("config_costs_60", config_costs(60)),
        ("savings_distribution_5", distribution(5)),
        ("savings_distribution_1000", distribution(1000)),
        ("cost_per_day_5", per_day(5)),
        ("cost_per_day_90", per_day(90)),
        ("project_costs_5", project_costs(5)),
        ("project_costs_60", project_costs(60)),
        ("pareto_5", pareto(5)),
        ("pareto_60", pareto(60)),
    ]
}

/// The height a report gives `chart` at width [`W`].
fn height_of(chart: &Chart) -> u32 {
    suggested_height(chart, W)
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
            scale_usd: None,
        },
        Chart::Heatmap {
            title: t.clone(),
            thresholds: vec![8000],
            keeps: vec![2],
            cost_usd: vec![vec![Some(1.0)]],
            scale_usd: None,
        },
        Chart::Heatmap {
            title: t.clone(),
            thresholds: vec![1000, 2000],
            keeps: vec![1, 2],
            cost_usd: vec![],
            scale_usd: None,
        },
        Chart::Heatmap {
            title: t.clone(),
            thresholds: vec![1000, 2000, 3000],
            keeps: vec![1],
            cost_usd: vec![
                vec![Some(f64::NAN), Some(2.0), Some(2.0), Some(9.0)],
                vec![None],
            ],
            scale_usd: None,
        },
        Chart::Heatmap {
            title: t.clone(),
            thresholds: (1..=40).map(|i| i * 1000).collect(),
            keeps: (0..30).collect(),
            cost_usd: (0..30)
                .map(|k| (0..40).map(|i| Some(f64::from(i * k))).collect())
                .collect(),
            scale_usd: None,
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
        Chart::Heatmap {
            title: t.clone(),
            thresholds: vec![1000, 2000],
            keeps: vec![1],
            cost_usd: vec![vec![Some(1.0), Some(5.0)]],
            scale_usd: Some((3.0, 2.0)),
        },
        Chart::Heatmap {
            title: t.clone(),
            thresholds: vec![1000, 2000],
            keeps: vec![1],
            cost_usd: vec![vec![None, None]],
            scale_usd: Some((1.0, 2.0)),
        },
        Chart::ConfigCosts {
            title: t.clone(),
            bars: vec![
                ("nan".into(), f64::NAN),
                ("neg".into(), -3.0),
                ("zero".into(), 0.0),
            ],
            status_quo: Some(7),
            recommended: Some(1),
        },
        Chart::ConfigCosts {
            title: t.clone(),
            bars: vec![("same".into(), 2.0)],
            status_quo: Some(0),
            recommended: Some(0),
        },
        Chart::SavingsDistribution {
            title: t.clone(),
            savings_usd: vec![f64::NAN, f64::INFINITY],
        },
        Chart::SavingsDistribution {
            title: t.clone(),
            savings_usd: vec![0.0; 40],
        },
        Chart::SavingsDistribution {
            title: t.clone(),
            savings_usd: vec![1e9, -1e9, 0.5],
        },
        Chart::SavingsDistribution {
            title: t.clone(),
            savings_usd: vec![-0.004],
        },
        Chart::CostPerDay {
            title: t.clone(),
            series: vec!["a".into(), "b".into()],
            days: vec![("2026-01-01".into(), vec![None, None])],
        },
        Chart::CostPerDay {
            title: t.clone(),
            series: vec!["a".into(), "b".into()],
            days: vec![
                ("2026-01-01".into(), vec![Some(-2.0)]),
                (
                    "2026-01-02".into(),
                    vec![Some(f64::NAN), Some(3.0), Some(9.0)],
                ),
            ],
        },
        Chart::CostPerDay {
            title: t.clone(),
            series: (0..12).map(|i| format!("series {i}")).collect(),
            days: (0..400)
                .map(|d| {
                    (
                        format!("day {d}"),
                        (0..12).map(|s| Some(f64::from(d * s))).collect(),
                    )
                })
                .collect(),
        },
        Chart::ProjectCosts {
            against: "recommended".into(),
            title: t.clone(),
            projects: vec![("nan".into(), f64::NAN, 1.0), ("neg".into(), -1.0, -2.0)],
        },
        Chart::ProjectCosts {
            against: "recommended".into(),
            title: t.clone(),
            projects: (0..500).map(|i| (format!("p{i}"), 1.0, 0.5)).collect(),
        },
        Chart::ParetoFront {
            title: t.clone(),
            points: vec![],
            status_quo: None,
            recommended: None,
            notes: vec![],
        },
        Chart::ParetoFront {
            title: t.clone(),
            points: vec![
                ("nan".into(), f64::NAN, 1.0),
                ("inf".into(), 1.0, f64::INFINITY),
            ],
            status_quo: Some(7),
            recommended: Some(0),
            notes: vec![],
        },
        Chart::ParetoFront {
            title: t.clone(),
            points: (0..500).map(|i| (format!("c{i}"), 3.0, 2.0)).collect(),
            status_quo: Some(0),
            recommended: Some(499),
            notes: vec![],
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
/// every chunk's CRC is right. Consecutive IDAT chunks are listed once.
fn png_chunks(png: &[u8]) -> Vec<String> {
    let mut kinds: Vec<String> = Vec::new();
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
        let kind = String::from_utf8_lossy(&body[..4]).into_owned();
        if kinds.last() != Some(&kind) {
            kinds.push(kind);
        }
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

/// Decodes a PNG fully (zlib, row filters) and returns (width, height,
/// pixel bytes): a rasterised chart must be a real image, not just headers.
fn png_decode(png: &[u8]) -> (u32, u32, Vec<u8>) {
    let mut dec = png::Decoder::new(std::io::Cursor::new(png))
        .read_info()
        .unwrap();
    let mut buf = vec![0; dec.output_buffer_size().unwrap()];
    let info = dec.next_frame(&mut buf).unwrap();
    buf.truncate(info.buffer_size());
    (info.width, info.height, buf)
}

#[test]
fn typical_charts_render_to_svg_and_png() {
    for (name, chart) in samples() {
        let h = height_of(&chart);
        let svg = render_svg(&chart, W, h).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(svg.starts_with("<svg"), "{name}");
        assert!(
            svg.contains(&format!(r#"width="900" height="{h}""#)),
            "{name}"
        );
        let png = render_png(&chart, W, h).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(png_size(&png), (W, h), "{name}");
        assert_eq!(png_chunks(&png), ["IHDR", "IDAT", "IEND"], "{name}");
        let (dw, dh, pixels) = png_decode(&png);
        assert_eq!((dw, dh), (W, h), "{name}");
        assert_eq!(pixels.len(), (W * h * 3) as usize, "{name}");
        // Not a blank canvas: the chart drew dark text and coloured marks.
        let dark = pixels
            .chunks_exact(3)
            .filter(|p| p.iter().all(|c| *c < 80))
            .count();
        assert!(dark > 500, "{name}: {dark} dark pixels");
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
            scale_usd: None,
        },
        Chart::SavingsBars {
            title: "d".into(),
            bars: vec![],
        },
        Chart::ConfigCosts {
            title: "e".into(),
            bars: vec![],
            status_quo: None,
            recommended: None,
        },
        Chart::SavingsDistribution {
            title: "f".into(),
            savings_usd: vec![],
        },
        Chart::CostPerDay {
            title: "g".into(),
            series: vec!["recorded".into()],
            days: vec![],
        },
        Chart::ProjectCosts {
            against: "recommended".into(),
            title: "h".into(),
            projects: vec![],
        },
    ] {
        let svg = render_svg(&chart, W, H).unwrap();
        assert!(svg.contains("No data to plot"), "{svg}");
    }
}

#[test]
fn rendering_is_deterministic() {
    for (name, chart) in samples() {
        let h = height_of(&chart);
        assert_eq!(
            render_svg(&chart, W, h).unwrap(),
            render_svg(&chart, W, h).unwrap(),
            "{name}"
        );
        assert!(
            render_png(&chart, W, h).unwrap() == render_png(&chart, W, h).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn svg_has_title_and_axis_labels() {
    let expect: [(&str, &[&str]); 17] = [
        (
            "stacked_calls",
            &[
                "Input tokens per call",
                "input tokens per call",
                "call",
                "cache read",
                "50k",
            ],
        ),
        (
            "stacked_calls_3",
            &["input tokens per call", ">3<", "bar 2: recommended"],
        ),
        (
            "stacked_calls_1000",
            &[
                "input tokens per 20 calls (each bar sums 20 consecutive calls)",
                ">1,000<",
            ],
        ),
        (
            "cumulative_cost",
            &[
                "Cumulative cost by policy",
                "USD (cumulative)",
                "call",
                "22 more configs not drawn (all configs in results.csv)",
            ],
        ),
        (
            "cumulative_cost_1000",
            &[
                "USD (cumulative, log scale)",
                "6 more configs not drawn",
                ">1,000<",
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
            "heatmap_shared_scale",
            &[
                "one colour scale for every heatmap of this report: $0.80 to $2.40",
                ">$2.40<",
                ">$0.80<",
            ],
        ),
        (
            "savings_bars",
            &[
                "Savings vs baseline",
                "USD",
                "+64.7%",
                "-25.9%",
                "$2",
                "costs more",
            ],
        ),
        ("savings_bars_60", &["saves money", "costs more"]),
        (
            "config_costs_5",
            &[
                "status quo",
                "recommended",
                "other configs",
                "fleet cost (USD)",
                "$41.50",
                "$56.30",
            ],
        ),
        (
            "config_costs_60",
            &["status quo: ", "recommended: ", "$259.80"],
        ),
        (
            "savings_distribution_5",
            &[
                "sessions",
                "saving per session (USD)",
                "5 sessions: 3 save money, 1 cost more, 1 break even; median $0.31",
            ],
        ),
        ("savings_distribution_1000", &["1,000 sessions: ", ">0<"]),
        (
            "cost_per_day_5",
            &["2026-09-01", "2026-09-05", "USD per day", "recommended"],
        ),
        ("cost_per_day_90", &["2026-09-01", "recorded", "<polyline"]),
        (
            "project_costs_5",
            &["status quo", "recommended", "cost (USD)", "project-1<"],
        ),
        ("project_costs_60", &["project-59<"]),
    ];
    let mut missing = Vec::new();
    for ((name, chart), (ename, needles)) in samples().into_iter().zip(expect) {
        assert_eq!(name, ename);
        let svg = render_svg(&chart, W, height_of(&chart)).unwrap();
        for needle in needles {
            if !svg.contains(needle) {
                missing.push(format!("{name}: {needle:?}"));
            }
        }
    }
    assert!(missing.is_empty(), "missing: {missing:#?}");
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
            scale_usd: None,
        },
        distribution(1000),
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
            scale_usd: None,
        },
        Chart::SavingsBars {
            title: evil.into(),
            bars: vec![
                (evil.into(), 1.0, 2.0),
                ("ctl\u{1}\u{7}\u{1b}".into(), 1.0, 1.0),
            ],
        },
        Chart::ConfigCosts {
            title: evil.into(),
            bars: vec![(evil.into(), 1.0), ("ctl\u{1}\u{7}\u{1b}".into(), 2.0)],
            status_quo: Some(1),
            recommended: Some(0),
        },
        Chart::SavingsDistribution {
            title: evil.into(),
            savings_usd: vec![1.0, -1.0],
        },
        Chart::CostPerDay {
            title: evil.into(),
            series: vec![evil.into()],
            days: vec![
                (evil.into(), vec![Some(1.0)]),
                ("ctl\u{1b}".into(), vec![Some(2.0)]),
            ],
        },
        Chart::ProjectCosts {
            against: "recommended".into(),
            title: evil.into(),
            projects: vec![
                (evil.into(), 2.0, 1.0),
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
        // The PNG renderer parses the same SVG: escaping must keep it valid.
        render_png(chart, W, H).unwrap();
    }
}

#[test]
fn long_labels_wrap_and_are_never_shortened() {
    let long = format!("{LONG},{}", "x=1,".repeat(60));
    let chart = Chart::SavingsBars {
        title: long.clone(),
        bars: vec![(long.clone(), 1.0, 10.0)],
    };
    let svg = render_svg(&chart, W, suggested_height(&chart, W)).unwrap();
    assert!(!svg.contains('…'));
    let texts = svg_texts(&svg);
    // The title and the label each come back whole when their lines are
    // joined in drawing order.
    let joined: String = texts.iter().map(|t| t.text.as_str()).collect();
    assert_eq!(joined.matches(&long).count(), 2, "{joined}");
    assert!(texts.len() > 6, "wrapped onto several lines");
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
fn suggested_height_grows_with_rows_and_stays_in_range() {
    for (small, large) in [
        (config_costs(5), config_costs(60)),
        (project_costs(5), project_costs(60)),
        (savings(), savings_large()),
    ] {
        let (hs, hl) = (suggested_height(&small, W), suggested_height(&large, W));
        assert!(hl > hs * 3, "{hs} -> {hl}");
        assert!((160..=4096).contains(&hs) && (160..=4096).contains(&hl));
    }
    // Rows never get thinner than a line of text: 60 configs at their
    // suggested height are all drawn, with no "not shown" note.
    for chart in [config_costs(60), project_costs(60), savings_large()] {
        let svg = render_svg(&chart, W, suggested_height(&chart, W)).unwrap();
        assert!(!svg.contains("not shown"), "{svg}");
    }
    // Too little height: the first rows are drawn and a note counts the rest.
    let svg = render_svg(&config_costs(60), W, H).unwrap();
    assert!(svg.contains("more configs not shown (all configs in results.csv)"));
    for w in [240, 900, 4096, 10_000] {
        for (_, chart) in samples() {
            assert!((160..=4096).contains(&suggested_height(&chart, w)));
        }
    }
}

#[test]
fn one_colour_scale_across_heatmaps() {
    let cells = |v: f64| vec![vec![Some(v), Some(v + 0.5)]];
    let chart = |v: f64, scale| Chart::Heatmap {
        title: "h".into(),
        thresholds: vec![1000, 2000],
        keeps: vec![1],
        cost_usd: cells(v),
        scale_usd: scale,
    };
    let fills = |svg: &str| -> Vec<String> {
        svg.lines()
            .filter(|l| {
                l.starts_with("<rect") && l.contains("width=\"") && !l.contains("fill=\"none\"")
            })
            .filter_map(|l| l.split("fill=\"").nth(1).map(|f| f[..7].to_string()))
            .collect()
    };
    // On its own scale each heatmap spans the whole colour range, so two
    // different heatmaps look alike; on a shared scale the cheap one is
    // greener and equal dollars get equal colours.
    let own_a = render_svg(&chart(1.0, None), W, H).unwrap();
    let own_b = render_svg(&chart(3.0, None), W, H).unwrap();
    assert_eq!(fills(&own_a), fills(&own_b));
    let shared = Some((1.0, 3.5));
    let a = render_svg(&chart(1.0, shared), W, H).unwrap();
    let b = render_svg(&chart(3.0, shared), W, H).unwrap();
    assert_ne!(fills(&a), fills(&b));
    assert!(
        a.contains(">$3.50<") && a.contains(">$1.00<"),
        "bar shows the shared range"
    );
    assert!(
        b.contains(">$3.50<") && b.contains(">$1.00<"),
        "bar shows the shared range"
    );
    // A bad range falls back to the chart's own.
    let bad = render_svg(&chart(1.0, Some((f64::NAN, 2.0))), W, H).unwrap();
    assert_eq!(fills(&bad), fills(&own_a));
}

#[test]
fn many_calls_are_binned_not_hairlines() {
    let svg = render_svg(&stacked_large(), W, H).unwrap();
    let bars = svg.lines().filter(|l| l.starts_with("<rect")).count();
    assert!(bars < 600, "{bars} rects for 1,000 calls");
    for l in svg
        .lines()
        .filter(|l| l.starts_with("<rect") && !l.contains("fill=\"none\""))
    {
        let w: f64 = l
            .split("width=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(w >= 4.0, "hairline bar: {l}");
    }
    // The cumulative lines of 1,000 calls are thinned to what can be seen.
    let svg = render_svg(&cumulative_large(), W, H).unwrap();
    assert!(svg.len() < 40_000, "{} bytes", svg.len());
}

// ---------------------------------------------------------------------------
// Every text inside the image
// ---------------------------------------------------------------------------

/// One `<text>` element of a chart: position, size, anchor, content.
#[derive(Debug)]
struct SvgText {
    x: f64,
    y: f64,
    size: f64,
    anchor: String,
    text: String,
}

fn attr(tag: &str, name: &str) -> Option<String> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    Some(tag[start..].split('"').next()?.to_string())
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

fn svg_texts(svg: &str) -> Vec<SvgText> {
    let mut out = Vec::new();
    for part in svg.split("<text").skip(1) {
        let (tag, rest) = part.split_once('>').unwrap();
        let body = rest.split("</text>").next().unwrap();
        assert!(attr(tag, "transform").is_none(), "rotated text: {tag}");
        out.push(SvgText {
            x: attr(tag, "x").unwrap().parse().unwrap(),
            y: attr(tag, "y").unwrap().parse().unwrap(),
            size: attr(tag, "font-size").unwrap().parse().unwrap(),
            anchor: attr(tag, "text-anchor").unwrap_or_else(|| "start".into()),
            text: unescape(body),
        });
    }
    out
}

/// Advance widths of the embedded font, the same metrics the layout uses.
fn text_width(face: &ttf_parser::Face, s: &str, size: f64) -> f64 {
    let missing = face.glyph_hor_advance(ttf_parser::GlyphId(0)).unwrap_or(0);
    let units: f64 = s
        .chars()
        .map(|c| {
            f64::from(
                face.glyph_index(c)
                    .and_then(|g| face.glyph_hor_advance(g))
                    .unwrap_or(missing),
            )
        })
        .sum();
    units * size / f64::from(face.units_per_em())
}

/// Texts whose estimated box (advance width; ascender to descender around
/// the baseline) is not inside the `w` × `h` image.
fn texts_outside(svg: &str, w: u32, h: u32) -> Vec<String> {
    let face =
        ttf_parser::Face::parse(include_bytes!("../../../../assets/fonts/DejaVuSans.ttf"), 0)
            .unwrap();
    let upm = f64::from(face.units_per_em());
    let (asc, desc) = (
        f64::from(face.ascender()) / upm,
        -f64::from(face.descender()) / upm,
    );
    let mut bad = Vec::new();
    for t in svg_texts(svg) {
        let tw = text_width(&face, &t.text, t.size);
        let x0 = match t.anchor.as_str() {
            "middle" => t.x - tw / 2.0,
            "end" => t.x - tw,
            _ => t.x,
        };
        let (x1, y0, y1) = (x0 + tw, t.y - asc * t.size, t.y + desc * t.size);
        if x0 < -0.05 || y0 < -0.05 || x1 > f64::from(w) + 0.05 || y1 > f64::from(h) + 0.05 {
            bad.push(format!(
                "{:?} at x {x0:.1}..{x1:.1}, y {y0:.1}..{y1:.1}",
                t.text
            ));
        }
    }
    bad
}

/// The same check on the real layout: resvg shapes each text and reports
/// its box; every one must lie inside the image.
fn shaped_texts_outside(svg: &str, w: u32, h: u32) -> Vec<String> {
    use resvg::usvg;
    let mut db = usvg::fontdb::Database::new();
    db.load_font_data(include_bytes!("../../../../assets/fonts/DejaVuSans.ttf").to_vec());
    db.set_sans_serif_family("DejaVu Sans");
    let opt = usvg::Options {
        fontdb: std::sync::Arc::new(db),
        ..Default::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt).unwrap();
    let mut bad = Vec::new();
    fn walk(g: &usvg::Group, w: f32, h: f32, bad: &mut Vec<String>) {
        for node in g.children() {
            match node {
                usvg::Node::Group(g) => walk(g, w, h, bad),
                usvg::Node::Text(t) => {
                    let b = t.abs_bounding_box();
                    if b.left() < -0.5
                        || b.top() < -0.5
                        || b.right() > w + 0.5
                        || b.bottom() > h + 0.5
                    {
                        let s: String = t.chunks().iter().map(|c| c.text().to_string()).collect();
                        bad.push(format!("{s:?} at {b:?}"));
                    }
                }
                _ => {}
            }
        }
    }
    walk(tree.root(), w as f32, h as f32, &mut bad);
    bad
}

/// Labels from the input that a chart must print in full (wrapped lines
/// joined back in drawing order).
fn full_labels(chart: &Chart) -> Vec<String> {
    let keep_long = |s: &str| s.len() > 12 && !s.contains(' ');
    match chart {
        Chart::StackedCalls { series, .. } => series.iter().map(|s| s.0.clone()).collect(),
        Chart::CumulativeCost { lines, .. } => lines.iter().take(8).map(|l| l.0.clone()).collect(),
        Chart::SavingsBars { bars, .. } => bars.iter().map(|b| b.0.clone()).collect(),
        Chart::ConfigCosts { bars, .. } => bars.iter().map(|b| b.0.clone()).collect(),
        Chart::ProjectCosts { projects, .. } => projects.iter().map(|p| p.0.clone()).collect(),
        Chart::CostPerDay { days, series, .. } => series
            .iter()
            .cloned()
            .chain(days.first().map(|d| d.0.clone()))
            .collect(),
        // The front's configs are named in the notes, whole.
        Chart::ParetoFront { notes, .. } => notes.clone(),
        Chart::Heatmap { .. } | Chart::SavingsDistribution { .. } => vec![],
    }
    .into_iter()
    .filter(|s| keep_long(s) || s.contains(':'))
    .flat_map(|s| s.split(' ').map(str::to_string).collect::<Vec<_>>())
    .filter(|s| keep_long(s))
    .collect()
}

#[test]
fn every_text_lies_inside_the_image_and_is_never_shortened() {
    let mut cases: Vec<(String, Chart, u32, u32)> = Vec::new();
    for (name, chart) in samples() {
        let h = height_of(&chart);
        cases.push((name.to_string(), chart.clone(), W, h));
        // Narrow and fixed-size renderings too: nothing may spill there either.
        cases.push((format!("{name}@480x360"), chart.clone(), 480, 360));
        cases.push((
            format!("{name}@480x{}", suggested_height(&chart, 480)),
            chart.clone(),
            480,
            suggested_height(&chart, 480),
        ));
    }
    for (i, chart) in degenerate().into_iter().enumerate() {
        cases.push((format!("degenerate {i}"), chart, 640, 360));
    }
    for (name, chart, w, h) in cases {
        let svg = render_svg(&chart, w, h).unwrap();
        let outside = texts_outside(&svg, w, h);
        assert!(
            outside.is_empty(),
            "{name}: text outside the image: {outside:#?}"
        );
        let shaped = shaped_texts_outside(&svg, w, h);
        assert!(
            shaped.is_empty(),
            "{name}: shaped text outside the image: {shaped:#?}"
        );
        assert!(!svg.contains('…'), "{name}: shortened text");
        let joined: String = svg_texts(&svg).iter().map(|t| t.text.as_str()).collect();
        let title_of = |c: &Chart| match c {
            Chart::StackedCalls { title, .. }
            | Chart::CumulativeCost { title, .. }
            | Chart::Heatmap { title, .. }
            | Chart::SavingsBars { title, .. }
            | Chart::ConfigCosts { title, .. }
            | Chart::SavingsDistribution { title, .. }
            | Chart::CostPerDay { title, .. }
            | Chart::ProjectCosts { title, .. }
            | Chart::ParetoFront { title, .. } => title.clone(),
        };
        let title: String = title_of(&chart).split_whitespace().collect();
        let joined_nospace: String = joined.split_whitespace().collect();
        assert!(joined_nospace.contains(&title), "{name}: title not whole");
        if !svg.contains("not shown") && !svg.contains("No data") && !svg.contains("Too small") {
            for label in full_labels(&chart) {
                assert!(
                    joined.contains(&label),
                    "{name}: label {label:?} not printed whole"
                );
            }
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(40))]

    /// Whatever the labels, values and size, every kind keeps every text
    /// inside the image: wrapped labels and legends, bar-end values on
    /// either side of zero, the "not shown" note when rows do not fit, the
    /// "too small" chart when nothing fits.
    #[test]
    fn random_bar_charts_keep_text_inside(
        rows in proptest::collection::vec(
            ("[a-z:=,+_-]{1,90}", -1.0e4f64..1.0e4, -1.0e4f64..1.0e4),
            0..30,
        ),
        w in 240u32..1200,
        h in 160u32..900,
        kind in 0u8..8,
    ) {
        let chart = match kind {
            0 => Chart::ConfigCosts {
                title: "t".into(),
                bars: rows.iter().map(|r| (r.0.clone(), r.1)).collect(),
                status_quo: Some(0),
                recommended: Some(rows.len() / 2),
            },
            1 => Chart::ProjectCosts {
                against: "recommended".into(),
                title: "t".into(),
                projects: rows.clone(),
            },
            2 => Chart::SavingsBars {
                title: "t".into(),
                bars: rows.iter().map(|r| (r.0.clone(), r.1, r.2 / 100.0)).collect(),
            },
            3 => Chart::SavingsDistribution {
                title: "t".into(),
                savings_usd: rows.iter().map(|r| r.1).collect(),
            },
            4 => Chart::CumulativeCost {
                title: "t".into(),
                lines: rows
                    .iter()
                    .map(|r| (r.0.clone(), (1..=rows.len()).map(|c| r.1.abs() * c as f64).collect()))
                    .collect(),
            },
            5 => Chart::CostPerDay {
                title: "t".into(),
                series: rows.iter().take(4).map(|r| r.0.clone()).collect(),
                days: rows
                    .iter()
                    .enumerate()
                    .map(|(d, r)| (format!("2026-01-{d:02}"), vec![Some(r.1), Some(r.2), None, Some(r.1.abs())]))
                    .collect(),
            },
            6 => Chart::ParetoFront {
                title: "t".into(),
                points: rows.iter().map(|r| (r.0.clone(), r.2.abs().floor(), r.1)).collect(),
                status_quo: Some(0),
                recommended: Some(rows.len() / 2),
                notes: rows.iter().take(2).map(|r| r.0.clone()).collect(),
            },
            _ => Chart::StackedCalls {
                title: "t".into(),
                series: rows
                    .iter()
                    .take(3)
                    .map(|r| {
                        let t = CallTokens {
                            uncached: r.1.abs() as u64,
                            cache_write: r.2.abs() as u64,
                            cache_read: 7,
                        };
                        (r.0.clone(), vec![t; rows.len() * 37])
                    })
                    .collect(),
            },
        };
        let svg = render_svg(&chart, w, h).unwrap();
        let outside = texts_outside(&svg, w, h);
        proptest::prop_assert!(outside.is_empty(), "{:?}", outside);
    }
}

/// Fixed small inputs of the fleet kinds, as SVG snapshots: a change to
/// any of them shows up in review as a diff of the drawing.
#[test]
fn fleet_chart_snapshots() {
    let charts = [
        (
            "config_costs",
            Chart::ConfigCosts {
                title: "Fleet cost by config".into(),
                bars: vec![
                    ("ledger:t=4000,k=1".into(), 12.5),
                    (LANGCHAIN.into(), 14.25),
                    ("claude-code:ttl=5m".into(), 20.0),
                ],
                status_quo: Some(2),
                recommended: Some(0),
            },
        ),
        ("savings_distribution", distribution(5)),
        (
            "cost_per_day",
            Chart::CostPerDay {
                title: "Cost per day".into(),
                series: vec!["recorded".into(), "recommended".into()],
                days: vec![
                    ("2026-09-01".into(), vec![Some(3.0), Some(1.5)]),
                    ("2026-09-02".into(), vec![None, None]),
                    ("2026-09-03".into(), vec![Some(2.0), Some(1.25)]),
                ],
            },
        ),
        (
            "pareto_front",
            Chart::ParetoFront {
                title: "Cost against recall risk".into(),
                points: vec![
                    ("off+claude-code:ttl=5m".into(), 0.0, 20.0),
                    ("ledger:t=8000,k=2+claude-code:ttl=5m".into(), 12.0, 16.5),
                    ("ledger:t=8000,k=4+tail:ttl=5m".into(), 15.0, 18.0),
                    ("ledger:t=2000,k=1+claude-code:ttl=5m".into(), 40.0, 14.25),
                    ("ledger:t=2000,k=1+system:ttl=5m".into(), 41.0, 90.0),
                ],
                status_quo: Some(0),
                recommended: Some(1),
                notes: vec!["Break-even: ledger:t=8000,k=2+claude-code:ttl=5m stays cheaper than the status quo while a recall costs less than $0.2917.".into()],
            },
        ),
        (
            "project_costs",
            Chart::ProjectCosts {
                against: "recommended".into(),
                title: "Status quo vs recommended by project".into(),
                projects: vec![("alpha".into(), 10.0, 6.0), ("beta".into(), 4.0, 4.5)],
            },
        ),
    ];
    for (name, chart) in charts {
        let svg = render_svg(&chart, 640, suggested_height(&chart, 640)).unwrap();
        insta::assert_snapshot!(name, svg);
    }
}

#[test]
fn write_samples_when_asked() {
    let Ok(dir) = std::env::var("TRACECOST_CHART_SAMPLES") else {
        return;
    };
    std::fs::create_dir_all(&dir).unwrap();
    for (name, chart) in samples() {
        let h = height_of(&chart);
        std::fs::write(
            format!("{dir}/{name}.png"),
            render_png(&chart, W, h).unwrap(),
        )
        .unwrap();
        std::fs::write(
            format!("{dir}/{name}.svg"),
            render_svg(&chart, W, h).unwrap(),
        )
        .unwrap();
        let h = suggested_height(&chart, 480);
        std::fs::write(
            format!("{dir}/{name}_480.png"),
            render_png(&chart, 480, h).unwrap(),
        )
        .unwrap();
    }
    std::fs::write(
        format!("{dir}/too_small.png"),
        render_png(&cumulative_large(), 480, 300).unwrap(),
    )
    .unwrap();
    for (i, chart) in degenerate().iter().enumerate() {
        std::fs::write(
            format!("{dir}/degenerate_{i:02}.png"),
            render_png(chart, 640, 360).unwrap(),
        )
        .unwrap();
    }
}

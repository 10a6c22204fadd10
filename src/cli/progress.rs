//! The progress bar: [`crate::progress::Progress`] drawn on stderr, only
//! when stderr is a terminal (and `TRACECOST_NO_PROGRESS` is unset), so
//! logs, pipes and CI output stay clean.

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::progress::{Progress, Unit};

const WIDTH: usize = 30;

/// A one-line bar, redrawn when its visible part changes.
pub struct Bar {
    enabled: bool,
    done: AtomicU64,
    /// Traces done, in a stage of [`Unit::Calls`].
    traces: AtomicU64,
    stage: Mutex<Stage>,
}

#[derive(Default)]
struct Stage {
    label: String,
    total: u64,
    unit: Option<Unit>,
    /// The text last drawn, so an unchanged bar is not redrawn.
    drawn: String,
    /// Thousandths of the stage last drawn: a replay of 7,000 calls is
    /// drawn about 1,000 times, not 7,000.
    drawn_at: Option<u64>,
    /// When the stage began, for its rate and the time left.
    started: Option<std::time::Instant>,
}

impl Bar {
    /// A bar on stderr; silent unless stderr is a terminal.
    pub fn new() -> Self {
        let enabled =
            std::io::stderr().is_terminal() && std::env::var_os("TRACECOST_NO_PROGRESS").is_none();
        Self {
            enabled,
            done: AtomicU64::new(0),
            traces: AtomicU64::new(0),
            stage: Mutex::new(Stage::default()),
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        let mut stage = self.stage.lock().unwrap_or_else(|e| e.into_inner());
        if self.enabled && !stage.drawn.is_empty() {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\r", " ".repeat(stage.drawn.chars().count()));
            let _ = err.flush();
        }
        stage.drawn.clear();
    }
}

impl Progress for Bar {
    fn start(&self, stage: &str, total: u64, unit: Unit) {
        if !self.enabled {
            return;
        }
        self.finish();
        let mut s = self.stage.lock().unwrap_or_else(|e| e.into_inner());
        s.label = stage.to_owned();
        s.total = total;
        s.unit = Some(unit);
        s.drawn_at = None;
        s.started = Some(std::time::Instant::now());
        self.done.store(0, Ordering::Relaxed);
        self.traces.store(0, Ordering::Relaxed);
    }

    fn traces_done(&self, n: u64) {
        self.traces.fetch_add(n, Ordering::Relaxed);
    }

    fn advance(&self, n: u64) {
        let done = self.done.fetch_add(n, Ordering::Relaxed) + n;
        if !self.enabled {
            return;
        }
        let mut s = self.stage.lock().unwrap_or_else(|e| e.into_inner());
        let at = (done.min(s.total) as u128 * 1000 / u128::from(s.total.max(1))) as u64;
        if s.drawn_at == Some(at) {
            return;
        }
        s.drawn_at = Some(at);
        let unit = s.unit.unwrap_or(Unit::Items);
        let traces = self.traces.load(Ordering::Relaxed);
        let mut text = render(&s.label, done, s.total, unit, traces);
        if let Some(started) = s.started {
            text.push_str(&pace(done.min(s.total), s.total, started.elapsed(), unit));
        }
        if text != s.drawn {
            let mut err = std::io::stderr().lock();
            // Pad over a longer earlier text.
            let pad = s.drawn.chars().count().saturating_sub(text.chars().count());
            let _ = write!(err, "\r{text}{}", " ".repeat(pad));
            let _ = err.flush();
            s.drawn = text;
        }
    }
}

/// The bar's text: `label [=====     ] done/total`, in MB for bytes, with
/// the traces done for a fleet's calls. Only whole steps show, so a bar fed
/// a megabyte at a time is not redrawn for every megabyte of a large file.
pub(crate) fn render(label: &str, done: u64, total: u64, unit: Unit, traces_done: u64) -> String {
    let done = done.min(total);
    let filled = if total == 0 {
        WIDTH
    } else {
        (done as u128 * WIDTH as u128 / total as u128) as usize
    };
    let count = match unit {
        Unit::Items => format!("{done}/{total}"),
        Unit::Calls { traces } => format!(
            "{}/{traces} traces · {done}/{total} calls",
            traces_done.min(traces)
        ),
        Unit::Bytes => {
            let pct = if total == 0 {
                100
            } else {
                done as u128 * 100 / total as u128
            };
            format!("{pct}% of {:.0} MB", total as f64 / 1e6)
        }
    };
    format!(
        "{label} [{}{}] {count}",
        "=".repeat(filled),
        " ".repeat(WIDTH - filled)
    )
}

/// The rate so far and the time left at that rate (` · 120/s · 3m 05s
/// left`), once a second has passed and something is done: a long run says
/// when it will end.
pub(crate) fn pace(done: u64, total: u64, elapsed: std::time::Duration, unit: Unit) -> String {
    let secs = elapsed.as_secs_f64();
    if secs < 1.0 || done == 0 {
        return String::new();
    }
    let rate = done as f64 / secs;
    let left = (total.saturating_sub(done) as f64 / rate).round() as u64;
    let rate = match unit {
        Unit::Items if rate >= 10.0 => format!("{rate:.0}/s"),
        Unit::Items => format!("{rate:.1}/s"),
        Unit::Calls { .. } => format!("{rate:.0} calls/s"),
        Unit::Bytes => format!("{:.0} MB/s", rate / 1e6),
    };
    let left = match left {
        l if l >= 3600 => format!("{}h {:02}m", l / 3600, l % 3600 / 60),
        l if l >= 60 => format!("{}m {:02}s", l / 60, l % 60),
        l => format!("{l}s"),
    };
    format!(" · {rate} · {left} left")
}

/// Runs `f` with a progress bar on stderr (when it is a terminal), taken
/// down before anything is printed.
pub(super) fn with_progress<T>(f: impl FnOnce(&dyn Progress) -> T) -> T {
    let bar = Bar::new();
    let out = f(&bar);
    bar.finish();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_says_the_rate_and_the_time_left() {
        use std::time::Duration;
        // Nothing to say before a second has passed, or while nothing is done.
        assert_eq!(pace(5, 10, Duration::from_millis(500), Unit::Items), "");
        assert_eq!(pace(0, 10, Duration::from_secs(5), Unit::Items), "");
        // 600 of 4,200 in 60 s: 10 a second, 6 minutes left.
        assert_eq!(
            pace(600, 4200, Duration::from_secs(60), Unit::Items),
            " · 10/s · 6m 00s left"
        );
        assert_eq!(
            pace(3, 10, Duration::from_secs(2), Unit::Items),
            " · 1.5/s · 5s left"
        );
        // 1 GB of 10 GB in 10 s: 100 MB/s, 90 s left.
        assert_eq!(
            pace(
                1_000_000_000,
                10_000_000_000,
                Duration::from_secs(10),
                Unit::Bytes
            ),
            " · 100 MB/s · 1m 30s left"
        );
        assert_eq!(
            pace(1, 10_000, Duration::from_secs(1), Unit::Items),
            " · 1.0/s · 2h 46m left"
        );
    }

    #[test]
    fn the_bar_counts_items_and_shows_bytes_as_a_percentage() {
        assert_eq!(
            render("sweep", 5, 10, Unit::Items, 0),
            format!("sweep [{}{}] 5/10", "=".repeat(15), " ".repeat(15))
        );
        assert_eq!(
            render("load t.json", 250_000_000, 1_000_000_000, Unit::Bytes, 0),
            format!(
                "load t.json [{}{}] 25% of 1000 MB",
                "=".repeat(7),
                " ".repeat(23)
            )
        );
        // Overshoot and an empty stage draw a full bar, never a panic.
        assert!(render("x", 12, 10, Unit::Items, 0).ends_with("] 10/10"));
        assert!(render("x", 0, 0, Unit::Bytes, 0).contains(&"=".repeat(WIDTH)));
    }

    #[test]
    fn a_fleet_bar_counts_traces_and_calls() {
        let calls = Unit::Calls { traces: 1_000 };
        assert_eq!(
            render("report", 2_000, 8_000, calls, 250),
            format!(
                "report [{}{}] 250/1000 traces · 2000/8000 calls",
                "=".repeat(7),
                " ".repeat(23)
            )
        );
        // Never more traces than there are.
        assert!(render("report", 8_000, 8_000, calls, 1_200).contains(" 1000/1000 traces"));
        use std::time::Duration;
        assert_eq!(
            pace(2_000, 8_000, Duration::from_secs(10), calls),
            " · 200 calls/s · 30s left"
        );
    }
}

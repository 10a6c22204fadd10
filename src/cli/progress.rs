//! A progress bar on stderr, drawn only when stderr is a terminal (and
//! quiet otherwise, so logs and CI output stay clean).

use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts finished units of work and redraws a one-line bar.
pub struct Progress {
    label: String,
    total: usize,
    done: AtomicUsize,
    enabled: bool,
    draw: Mutex<()>,
}

impl Progress {
    /// A bar for `total` units; silent unless stderr is a terminal.
    pub fn new(label: &str, total: usize) -> Self {
        let enabled =
            std::io::stderr().is_terminal() && std::env::var_os("TRACECOST_NO_PROGRESS").is_none();
        Self {
            label: label.to_owned(),
            total,
            done: AtomicUsize::new(0),
            enabled,
            draw: Mutex::new(()),
        }
    }

    /// One unit finished.
    pub fn tick(&self) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if !self.enabled {
            return;
        }
        let _guard = self.draw.lock().unwrap_or_else(|e| e.into_inner());
        let width = 30;
        let filled = if self.total == 0 {
            width
        } else {
            done.min(self.total) * width / self.total
        };
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r{} [{}{}] {done}/{}",
            self.label,
            "=".repeat(filled),
            " ".repeat(width - filled),
            self.total
        );
        let _ = err.flush();
    }

    /// Clears the bar.
    pub fn finish(&self) {
        if self.enabled {
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r{}\r", " ".repeat(self.label.len() + 50));
            let _ = err.flush();
        }
    }
}

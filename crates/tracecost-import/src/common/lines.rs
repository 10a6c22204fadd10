//! Lines of a log read one at a time ([`each_line`]), or a batch of whole
//! lines at a time ([`read_ahead`], the trace model's: the trace loader
//! reads JSON Lines files the same way). Kept apart because it is about
//! reading bytes, not about what they mean.

pub(crate) use tracecost_trace::lines::{LineBatch, read_ahead};

/// One line of a file read by [`each_line`].
pub(crate) struct Line<'a> {
    /// Its 1-based number.
    pub(crate) number: usize,
    /// Its text (byte-order mark, `\n` and `\r` removed), or the 1-based
    /// column where it stops being UTF-8.
    pub(crate) text: Result<&'a str, usize>,
    /// Whether it is the last line and has no line end (a file being
    /// written: Codex appends to a rollout while the session runs).
    pub(crate) unfinished: bool,
}

/// Calls `f` with each non-blank line of the file at `path`, one line in
/// memory at a time (a log may be larger than memory). Stops at the first
/// error `f` returns.
pub(crate) fn each_line(
    path: &std::path::Path,
    mut f: impl FnMut(Line<'_>) -> Result<(), crate::ImportError>,
) -> Result<(), crate::ImportError> {
    use std::io::BufRead;
    let io = |source| crate::ImportError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut buf = Vec::new();
    let mut number = 0usize;
    loop {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(io)? == 0 {
            return Ok(());
        }
        number += 1;
        let mut bytes = &buf[..];
        if number == 1 {
            bytes = bytes
                .strip_prefix(tracecost_trace::UTF8_BOM)
                .unwrap_or(bytes);
        }
        let unfinished = !bytes.ends_with(b"\n");
        bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let text = std::str::from_utf8(bytes).map_err(|e| e.valid_up_to() + 1);
        f(Line {
            number,
            text,
            unfinished,
        })?;
    }
}

//! Large files of lines read a batch of whole lines at a time, in large
//! reads: a request log or a JSON Lines file of traces may be many times
//! the size of memory, and its lines are handled in parallel a batch at a
//! time (the trace loader's JSON Lines files, the Anthropic request log's
//! importer). Kept apart because it is about reading bytes, not about what
//! they mean.

use std::ops::Range;

/// A file read a batch of whole lines at a time, in large reads.
pub struct LineBatches<R> {
    reader: R,
    /// Bytes a batch holds at least (unless the file ends first).
    target: usize,
    /// The start of a line the last batch did not finish.
    carry: Vec<u8>,
    /// The number of the next batch's first line.
    next_line: usize,
    /// Buffers of batches done with, to read into again (fresh memory
    /// costs a page fault per page).
    returned: Option<std::sync::mpsc::Receiver<Vec<u8>>>,
}

/// Whole lines of a file, the last one without its newline only at the
/// end of the file.
pub struct LineBatch {
    data: BatchData,
    lines: Vec<BatchLine>,
    /// Where each line is in the batch, newline included, UTF-8 or not.
    spans: Vec<Range<usize>>,
}

/// One line of a batch: its 1-based number, and where its text (newline
/// included) is in the batch, or the 1-based column where it stops being
/// UTF-8.
pub type BatchLine = (usize, Result<Range<usize>, usize>);

enum BatchData {
    /// The usual case: the whole batch is UTF-8, checked once.
    Text(String),
    /// Some line is not.
    Bytes(Vec<u8>),
}

/// Bytes asked of the reader at a time.
const READ_CHUNK: usize = 4 << 20;

impl<R: std::io::Read> LineBatches<R> {
    /// Batches of at least `target` bytes (the last one may be shorter),
    /// read into the buffers sent back on `returned` when there are some
    /// ([`LineBatch::into_bytes`]).
    pub fn new(
        reader: R,
        target: usize,
        returned: Option<std::sync::mpsc::Receiver<Vec<u8>>>,
    ) -> Self {
        Self {
            reader,
            target: target.max(1),
            carry: Vec::new(),
            next_line: 1,
            returned,
        }
    }

    /// The next batch, `None` at the end of the file.
    pub fn next_batch(&mut self) -> std::io::Result<Option<LineBatch>> {
        use std::io::Read;
        let mut bytes = match self.returned.as_ref().and_then(|r| r.try_recv().ok()) {
            Some(mut b) => {
                b.clear();
                b
            }
            None => Vec::with_capacity(self.target + READ_CHUNK),
        };
        bytes.append(&mut self.carry);
        // The end of the last newline read so far (the carry has none).
        let mut cut = None;
        loop {
            if let Some(c) = cut
                && bytes.len() >= self.target
            {
                self.carry.extend_from_slice(&bytes[c..]);
                bytes.truncate(c);
                break;
            }
            let before = bytes.len();
            // Small targets (tests) read small: a batch ends at the last
            // newline read.
            let want = self
                .target
                .saturating_sub(before)
                .max(READ_CHUNK.min(self.target)) as u64;
            let n = self.reader.by_ref().take(want).read_to_end(&mut bytes)?;
            if n == 0 {
                break;
            }
            if let Some(i) = memchr::memrchr(b'\n', &bytes[before..]) {
                cut = Some(before + i + 1);
            }
        }
        if bytes.is_empty() {
            return Ok(None);
        }
        let mut ranges = Vec::new();
        let mut start = 0;
        for nl in memchr::memchr_iter(b'\n', &bytes) {
            ranges.push(start..nl + 1);
            start = nl + 1;
        }
        if start < bytes.len() {
            ranges.push(start..bytes.len());
        }
        let numbered = |(i, r)| (self.next_line + i, r);
        let spans = ranges.clone();
        let (data, lines): (BatchData, Vec<BatchLine>) = match String::from_utf8(bytes) {
            Ok(text) => (
                BatchData::Text(text),
                ranges
                    .into_iter()
                    .map(Ok)
                    .enumerate()
                    .map(numbered)
                    .collect(),
            ),
            Err(e) => {
                let bytes = e.into_bytes();
                let lines = ranges
                    .into_iter()
                    .map(|r| match std::str::from_utf8(&bytes[r.clone()]) {
                        Ok(_) => Ok(r),
                        Err(e) => Err(e.valid_up_to() + 1),
                    })
                    .enumerate()
                    .map(numbered)
                    .collect();
                (BatchData::Bytes(bytes), lines)
            }
        };
        self.next_line += lines.len();
        Ok(Some(LineBatch { data, lines, spans }))
    }
}

/// Batches of `reader` read on a thread of `scope`, one ahead of the batch
/// being handled: each comes on the receiver (a read error ends them), and
/// a batch's buffer sent back ([`LineBatch::into_bytes`]) is read into
/// again. The thread stops once the receiver is dropped (before `scope`
/// waits for it: drop it within the scope).
pub fn read_ahead<'scope, R: std::io::Read + Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    reader: R,
    target: usize,
) -> (
    std::sync::mpsc::Receiver<std::io::Result<LineBatch>>,
    std::sync::mpsc::Sender<Vec<u8>>,
) {
    // A batch is handed over only when the last one is taken: one is read
    // while one is handled.
    let (tx, rx) = std::sync::mpsc::sync_channel(0);
    let (back, returned) = std::sync::mpsc::channel();
    scope.spawn(move || {
        let mut batches = LineBatches::new(reader, target, Some(returned));
        loop {
            let next = batches.next_batch().transpose();
            let last = !matches!(next, Some(Ok(_)));
            // The receiver is gone once reading stopped on an error.
            if let Some(next) = next
                && tx.send(next).is_err()
            {
                break;
            }
            if last {
                break;
            }
        }
    });
    (rx, back)
}

impl LineBatch {
    /// The lines, in order.
    pub fn lines(&self) -> &[BatchLine] {
        &self.lines
    }

    /// Where the `i`-th line is in the batch, its newline included, whether
    /// it is UTF-8 or not (a reader passing over a line that is not still
    /// knows where the next one starts in the file).
    pub fn span(&self, i: usize) -> Range<usize> {
        self.spans.get(i).cloned().unwrap_or_default()
    }

    /// The batch's buffer, to read into again.
    pub fn into_bytes(self) -> Vec<u8> {
        match self.data {
            BatchData::Text(t) => t.into_bytes(),
            BatchData::Bytes(b) => b,
        }
    }

    /// The batch's bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.data {
            BatchData::Text(t) => t.as_bytes(),
            BatchData::Bytes(b) => b,
        }
    }

    /// The text at `range`, which lies within a UTF-8 line and starts and
    /// ends at character boundaries (`None` otherwise).
    pub fn text(&self, range: Range<usize>) -> Option<&str> {
        match &self.data {
            BatchData::Text(t) => t.get(range),
            BatchData::Bytes(b) => std::str::from_utf8(b.get(range)?).ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every line of every batch, as (number, text or column).
    fn batched(bytes: &[u8], target: usize) -> Vec<(usize, Result<String, usize>)> {
        let mut batches = LineBatches::new(bytes, target, None);
        let mut out = Vec::new();
        while let Some(b) = batches.next_batch().unwrap() {
            assert!(!b.lines().is_empty());
            // The spans cover the batch, line after line, UTF-8 or not.
            let mut end = 0;
            for (i, (_, r)) in b.lines().iter().enumerate() {
                assert_eq!(b.span(i).start, end);
                if let Ok(r) = r {
                    assert_eq!(&b.span(i), r);
                }
                end = b.span(i).end;
            }
            assert_eq!(end, b.bytes().len());
            for (n, r) in b.lines() {
                out.push((*n, r.clone().map(|r| b.text(r).unwrap().to_owned())));
            }
        }
        out
    }

    #[test]
    fn batches_hold_whole_lines_numbered_across_batches() {
        let text = b"a\n\nbb\r\nccc\n\xffd\ne";
        let want = vec![
            (1, Ok("a\n".to_owned())),
            (2, Ok("\n".to_owned())),
            (3, Ok("bb\r\n".to_owned())),
            (4, Ok("ccc\n".to_owned())),
            (5, Err(1)),
            (6, Ok("e".to_owned())),
        ];
        // One batch, a line a batch, and lines longer than the batch size.
        for target in [1, 2, 3, 5, 1 << 20] {
            assert_eq!(batched(text, target), want, "target {target}");
        }
        assert!(batched(b"", 4).is_empty());
        assert_eq!(batched(b"\n", 4), vec![(1, Ok("\n".to_owned()))]);
    }
}

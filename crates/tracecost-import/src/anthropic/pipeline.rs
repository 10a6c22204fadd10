//! The read pipeline: a log file read a batch of lines at a time, each
//! batch split in parallel (a line checked and cut into its messages by
//! the fast path of [`super::resent`], or read whole by
//! [`super::exchange`]) and then applied in line order. Kept apart from
//! what a line means so that the threads, the batches and the order they
//! are applied in can be checked against reading line by line, which the
//! tests here do.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use super::exchange::{Exchange, exchange};
use super::line::LineError;
use super::resent::{KnownMessages, MessageCache, SplitLine};
use crate::common::{self, Conversations, LineBatch, Unmapped};
use crate::{ImportError, ImportOptions, ImportSummary};
use tracecost_engine::cache::ProviderKind;

/// Lines are read this many bytes at a time (whole lines, so a batch may
/// be longer): enough lines to keep the cores busy, while memory stays a
/// small multiple of this rather than the file's size.
pub(super) const BATCH_BYTES: usize = 4 << 20;

/// Reads one log file, a batch of lines at a time.
///
/// Agents resend the whole conversation with every request, so most of a
/// log's bytes are messages an earlier line already carried. Each batch is
/// first split in parallel, line by line ([`pre_line`]): the line is checked
/// as JSON and cut into its messages without copying them, a message
/// already known from earlier batches matched by its bytes rather than
/// read ([`super::resent`]), and its tools, system and response are read.
/// Then, in line order, each message not matched yet is looked up by its
/// bytes among the messages of recent lines ([`MessageCache`]) and parsed
/// only when new, and the call joins its conversation. Lines of other shapes, and invalid ones, are read whole by
/// [`exchange`] (in the parallel pass too). The result is that of reading
/// line by line with [`exchange`]: the same traces, the same counts of what
/// could not be mapped, and the same first error.
///
/// A thread reads the next batch while the current one is split, and a
/// batch is split while the one before it is applied, so three batches
/// are held at most (with the messages of the last 64 lines).
pub(super) fn import_file(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
    batch_bytes: usize,
) -> Result<Conversations, ImportError> {
    let io = |source| ImportError::Io {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let mut applied = Applied {
        path,
        opts,
        report,
        un,
        convs: Conversations::default(),
        cache: MessageCache::default(),
    };
    std::thread::scope(|scope| {
        // One batch is read while one is split and one applied. Dropped on
        // return, before the scope waits for the reader: a reader blocked
        // on sending then stops.
        let (rx, back) = common::read_ahead(scope, file, batch_bytes);
        let mut pending: Option<(LineBatch, Vec<Pre>)> = None;
        // What a batch is split against: the cache as of two batches
        // before (the one before is being applied meanwhile).
        let mut known = Arc::new(KnownMessages::default());
        for next in rx.iter() {
            let split_against = known.clone();
            let (done, next) = rayon::join(
                || match pending.take() {
                    Some((batch, pre)) => {
                        let done = applied.batch(&batch, pre);
                        // The reader may have stopped: the buffer is then
                        // simply dropped.
                        let _ = back.send(batch.into_bytes());
                        done
                    }
                    None => Ok(()),
                },
                || {
                    next.map(|batch| {
                        let pre = pre_batch(&batch, &split_against);
                        (batch, pre)
                    })
                },
            );
            done?;
            known = Arc::new(applied.cache.known());
            // An error reading comes after the lines read before it.
            pending = Some(next.map_err(io)?);
        }
        match pending {
            Some((batch, pre)) => applied.batch(&batch, pre),
            None => Ok(()),
        }
    })?;
    Ok(applied.convs)
}

/// Splits every line of a batch, in parallel.
fn pre_batch(batch: &LineBatch, known: &KnownMessages) -> Vec<Pre> {
    batch
        .lines()
        .par_iter()
        .map(|(line_no, range)| match range {
            Ok(r) => match batch.text(r.clone()) {
                Some(text) => pre_line(*line_no, text, r.start, known),
                // Cannot happen: the batch checked the line is UTF-8.
                None => Pre::NotUtf8(1),
            },
            Err(column) => Pre::NotUtf8(*column),
        })
        .collect()
}

/// What the lines applied so far made.
struct Applied<'a> {
    path: &'a Path,
    opts: &'a ImportOptions,
    report: &'a mut ImportSummary,
    un: &'a mut Unmapped,
    convs: Conversations,
    cache: MessageCache,
}

impl Applied<'_> {
    /// Applies a split batch's lines in order.
    fn batch(&mut self, batch: &LineBatch, pre: Vec<Pre>) -> Result<(), ImportError> {
        for ((line_no, _), p) in batch.lines().iter().zip(pre) {
            self.line(batch, *line_no, p)?;
            self.cache.next_line();
        }
        Ok(())
    }

    fn line(&mut self, batch: &LineBatch, line_no: usize, pre: Pre) -> Result<(), ImportError> {
        let result = match pre {
            Pre::Blank => return Ok(()),
            Pre::NotUtf8(column) => {
                let err = common::invalid(self.path, line_no, Some(column), "not UTF-8");
                return common::reject(self.opts, self.report, err);
            }
            Pre::Read(read) => {
                let (result, local) = *read;
                self.un.merge(&local);
                result
            }
            Pre::Split(split) => match self.cache.resolve(batch, &split) {
                Some(messages) => Ok(Some(split.exchange(messages, self.un))),
                // A message that does not parse: the line is read again
                // whole, for the error it has always given.
                None => match batch.text(split.text.clone()) {
                    Some(text) => exchange(text, self.un),
                    None => Err(LineError::at("could not read this line".into())),
                },
            },
        };
        match result {
            Ok(Some(ex)) => self.convs.add_shared(ProviderKind::Anthropic, line_no, ex),
            Ok(None) => {}
            Err(LineError { column, message }) => {
                let err = common::invalid(self.path, line_no, column, &message);
                common::reject(self.opts, self.report, err)?;
            }
        }
        Ok(())
    }
}

/// The line-by-line reading [`import_file`] must match: each line read
/// whole by [`exchange`], in order.
#[cfg(test)]
fn import_file_by_line(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    un: &mut Unmapped,
) -> Result<Conversations, ImportError> {
    use std::io::{BufRead, BufReader};
    let io = |source| ImportError::Io {
        path: path.to_owned(),
        source,
    };
    let file = File::open(path).map_err(io)?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut convs = Conversations::default();
    let mut buf = Vec::new();
    let mut line_no = 0usize;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        line_no += 1;
        let text = match std::str::from_utf8(&buf) {
            // Leading whitespace is kept so columns match the file.
            Ok(t) => t.trim_end(),
            Err(e) => {
                let err = common::invalid(path, line_no, Some(e.valid_up_to() + 1), "not UTF-8");
                common::reject(opts, report, err)?;
                continue;
            }
        };
        // A byte-order mark before the first line is ignored, as in every
        // other reader (see `trace::load::UTF8_BOM`).
        let text = match line_no {
            1 => text.strip_prefix('\u{feff}').unwrap_or(text),
            _ => text,
        };
        if text.trim_start().is_empty() {
            continue;
        }
        match exchange(text, un) {
            Ok(Some(ex)) => convs.add_shared(ProviderKind::Anthropic, line_no, ex),
            Ok(None) => {}
            Err(LineError { column, message }) => {
                let err = common::invalid(path, line_no, column, &message);
                common::reject(opts, report, err)?;
            }
        }
    }
    Ok(convs)
}

/// What the parallel pass makes of one line.
enum Pre {
    /// Nothing on it.
    Blank,
    /// Not UTF-8 from this (1-based) column.
    NotUtf8(usize),
    /// Read whole by [`exchange`], with what it could not map.
    Read(Box<(Result<Option<Exchange>, LineError>, Unmapped)>),
    /// An exchange whose messages are left to resolve in line order.
    Split(Box<SplitLine>),
}

/// One line in the parallel pass (`at`: where `line` starts in its
/// batch): blank, split, or read whole.
fn pre_line(line_no: usize, line: &str, at: usize, known: &KnownMessages) -> Pre {
    // Leading whitespace is kept so columns match the file.
    let text = line.trim_end();
    // A byte-order mark before the first line is ignored, as in every
    // other reader (see `trace::load::UTF8_BOM`).
    let text = match line_no {
        1 => text.strip_prefix('\u{feff}').unwrap_or(text),
        _ => text,
    };
    if text.trim_start().is_empty() {
        return Pre::Blank;
    }
    let at = at + (text.as_ptr() as usize - line.as_ptr() as usize);
    if let Some(split) = SplitLine::of(text, at, known) {
        return Pre::Split(Box::new(split));
    }
    let mut local = Unmapped::default();
    let result = exchange(text, &mut local);
    Pre::Read(Box::new((result, local)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What an import made, as text: each trace's JSON, then the report
    /// and what could not be mapped; or the error.
    fn outcome(
        read: impl FnOnce(&mut ImportSummary, &mut Unmapped) -> Result<Conversations, ImportError>,
    ) -> String {
        let mut report = ImportSummary::default();
        let mut un = Unmapped::default();
        let convs = match read(&mut report, &mut un) {
            Ok(c) => c,
            Err(e) => return format!("error: {e}"),
        };
        let opts = ImportOptions::default();
        let mut out = String::new();
        for (i, b) in convs.builders.into_iter().enumerate() {
            let t = b.finish(format!("t{i}"), String::new(), &opts, &mut un);
            out.push_str(&tracecost_trace::to_json(&t));
            out.push('\n');
        }
        report.unmapped = un.lines();
        out + &format!("{report:?}")
    }

    /// `line` with a space after every `,` and `:` between tokens.
    fn spaced(line: &str) -> String {
        let (mut in_str, mut esc) = (false, false);
        let mut out = String::new();
        for c in line.chars() {
            out.push(c);
            if in_str {
                match (esc, c) {
                    (true, _) => esc = false,
                    (false, '\\') => esc = true,
                    (false, '"') => in_str = false,
                    _ => {}
                }
            } else if c == '"' {
                in_str = true;
            } else if c == ',' || c == ':' {
                out.push(' ');
            }
        }
        out
    }

    /// Damages (or reshapes) one line of a log in one of a dozen ways.
    fn mutate(lines: &mut Vec<Vec<u8>>, at: usize, kind: usize) {
        let at = at % (lines.len() + 1);
        let copy = |lines: &Vec<Vec<u8>>| {
            lines
                .get(at.min(lines.len().saturating_sub(1)))
                .cloned()
                .unwrap_or_default()
        };
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match kind {
            0 => lines.insert(at, b"not json at all".to_vec()),
            1 => {
                let l = copy(lines);
                lines.insert(at, l[..l.len() / 2].to_vec());
            }
            2 => lines.insert(at, b"   ".to_vec()),
            3 => {
                let l = spaced(&text(&copy(lines)));
                lines.insert(at, l.into_bytes());
            }
            // A retry: the same request again.
            4 => {
                let l = copy(lines);
                lines.insert(at, l);
            }
            5 => lines.insert(at, b"{\"request\": \"\xff\xfe\"}".to_vec()),
            // A message that no longer parses, the rest of the line intact.
            6 => {
                let l = text(&copy(lines)).replacen("\"role\":\"user\"", "\"role\":\"robot\"", 1);
                lines.insert(at, l.into_bytes());
            }
            // A recorder's wrapper whose body is a string.
            7 => lines.insert(
                at,
                br#"{"request":{"url":"https://api.anthropic.com/v1/messages","body":"{\"messages\":[{\"role\":\"user\",\"content\":\"s\"}]}"},"response":{"status_code":500}}"#.to_vec(),
            ),
            8 => {
                let l = text(&copy(lines)).replace(",\"cache_control\":{\"type\":\"ephemeral\"}", "");
                lines.insert(at, l.into_bytes());
            }
            9 => {
                let mut l = copy(lines);
                l.push(b'\r');
                lines.insert(at, l);
            }
            10 => {
                let l = text(&copy(lines)).replacen("{\"timestamp\":", "{\"timestamp\":1,\"timestamp\":", 1);
                lines.insert(at, l.into_bytes());
            }
            _ => lines.insert(
                at,
                br#"{"request":{"messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{"type":"ephemeral","ttl":"2h"}}]}],"cache_control":{"type":"ephemeral"},"context_management":{}},"response":null}"#.to_vec(),
            ),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Two generated conversations interleaved, with damaged and odd
        /// lines mixed in, read in batches of any size give what reading
        /// line by line gives: the same traces, counts and first error.
        #[test]
        fn batched_reading_matches_line_by_line(
            seed in 0u64..1000,
            calls in (1usize..10, 1usize..6),
            order in proptest::collection::vec(any::<bool>(), 12),
            damage in proptest::collection::vec((0usize..40, 0usize..12), 0..5),
            batch in prop_oneof![Just(1usize), 100usize..20_000, Just(1usize << 20)],
            skip_invalid in any::<bool>(),
            last_newline in any::<bool>(),
        ) {
            let log = |calls, seed| {
                let mut out = Vec::new();
                tracecost_gen::write_request_log(calls, seed, &mut out).unwrap();
                out.split(|&b| b == b'\n').filter(|l| !l.is_empty()).map(<[u8]>::to_vec).collect::<Vec<_>>()
            };
            let (a, b) = (log(calls.0, seed), log(calls.1, seed + 1));
            let (mut a, mut b) = (a.into_iter(), b.into_iter());
            let mut lines = Vec::new();
            for take_a in order.iter().cycle().take(12) {
                let next = if *take_a { a.next().or_else(|| b.next()) } else { b.next().or_else(|| a.next()) };
                lines.extend(next);
            }
            lines.extend(a.chain(b));
            for (at, kind) in damage {
                mutate(&mut lines, at, kind);
            }
            let mut bytes = lines.join(&b'\n');
            if last_newline {
                bytes.push(b'\n');
            }
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("log.jsonl");
            std::fs::write(&path, &bytes).unwrap();
            let opts = ImportOptions { skip_invalid, ..ImportOptions::default() };
            let batched = outcome(|r, u| import_file(&path, &opts, r, u, batch));
            let by_line = outcome(|r, u| import_file_by_line(&path, &opts, r, u));
            prop_assert_eq!(batched, by_line);
        }
    }
}

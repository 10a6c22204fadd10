//! CSV files as the observability stacks export them (RFC 4180: a header
//! row, fields separated by commas, a field in double quotes may hold
//! commas, line ends and `""` for a quote), read a record at a time.
//!
//! Read by hand rather than with the csv crate: a torn row (a quote left
//! open, a field count not the header's) costs only its own line, reading
//! resuming at the line after the row began with the bytes the row took
//! read again (`resync`, docs/robustness.md), and a line that is not UTF-8
//! is one damaged line. The csv crate reads on from where a record ended:
//! keeping the rule with it would take seeking it back to the row's second
//! line and counting lines around it, more than the reader it replaces.

use std::io::BufRead;
use std::path::Path;

use serde_json::{Map, Value};

use super::{invalid, reject};
use crate::{ImportError, ImportOptions, ImportSummary};

/// Calls `row` with each record after the header as an object of the
/// header's names (an empty field is `null`, every other a string) and the
/// line it starts on. A record whose field count is not the header's, or a
/// quoted field left open at the end, is rejected at its line (or skipped
/// under `skip_invalid`); so is a record `row` refuses.
pub(crate) fn each_csv_row(
    path: &Path,
    opts: &ImportOptions,
    report: &mut ImportSummary,
    mut row: impl FnMut(Map<String, Value>, usize) -> Result<(), String>,
) -> Result<(), ImportError> {
    let io = |source| ImportError::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut src = Source {
        reader: std::io::BufReader::with_capacity(1 << 20, file),
        replay: Vec::new(),
        at: 0,
    };
    let mut header: Option<Vec<String>> = None;
    let mut line = 0usize;
    let mut rec = Buf::default();
    loop {
        let start = line + 1;
        let fields = match read_record(&mut src, &mut rec, &mut line).map_err(io)? {
            Record::End => return Ok(()),
            Record::Fields(f) => f,
            Record::Open => {
                let err = invalid(path, start, None, "a quoted field is not closed");
                reject(opts, report, err)?;
                resync(&mut src, &rec, start, &mut line);
                continue;
            }
            Record::NotUtf8 => {
                reject(opts, report, invalid(path, start, None, "not UTF-8"))?;
                continue;
            }
        };
        if fields.len() == 1 && fields[0].trim().is_empty() {
            continue;
        }
        let Some(names) = &header else {
            header = Some(fields);
            continue;
        };
        if fields.len() != names.len() {
            let why = format!(
                "expected {} fields, as the header names, found {}",
                names.len(),
                fields.len()
            );
            reject(opts, report, invalid(path, start, Some(1), &why))?;
            resync(&mut src, &rec, start, &mut line);
            continue;
        }
        let object = names
            .iter()
            .cloned()
            .zip(fields)
            .map(|(k, v)| {
                (
                    k,
                    if v.is_empty() {
                        Value::Null
                    } else {
                        Value::String(v)
                    },
                )
            })
            .collect();
        if let Err(why) = row(object, start) {
            reject(opts, report, invalid(path, start, Some(1), &why))?;
        }
    }
}

enum Record {
    Fields(Vec<String>),
    /// A quoted field runs to the end of the file.
    Open,
    NotUtf8,
    End,
}

/// The file, and the lines to read again before it (see [`resync`]).
struct Source<R> {
    reader: R,
    replay: Vec<u8>,
    at: usize,
}

impl<R: BufRead> Source<R> {
    /// Appends the next physical line (with its `\n`, if any) to `buf`;
    /// 0 at the end.
    fn read_line(&mut self, buf: &mut Vec<u8>) -> std::io::Result<usize> {
        if self.at < self.replay.len() {
            let rest = &self.replay[self.at..];
            let n = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(rest.len(), |i| i + 1);
            buf.extend_from_slice(&rest[..n]);
            self.at += n;
            return Ok(n);
        }
        self.reader.read_until(b'\n', buf)
    }
}

/// One record's bytes and where each of its physical lines ends.
#[derive(Default)]
struct Buf {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

/// After a record of several lines was refused (a quote opened by a torn
/// row runs on through the records after it, to a wrong field count or
/// the end of the file): reads on from the record's second line, so that
/// one torn row costs its own line and not every row after it.
fn resync<R>(src: &mut Source<R>, rec: &Buf, start: usize, line: &mut usize) {
    let Some(&first) = rec.ends.first().filter(|_| rec.ends.len() > 1) else {
        return;
    };
    let mut replay = rec.bytes[first..].to_vec();
    replay.extend_from_slice(&src.replay[src.at..]);
    src.replay = replay;
    src.at = 0;
    *line = start;
}

/// Reads one record (its physical lines counted into `line`).
fn read_record(
    src: &mut Source<impl BufRead>,
    rec: &mut Buf,
    line: &mut usize,
) -> std::io::Result<Record> {
    rec.bytes.clear();
    rec.ends.clear();
    let buf = &mut rec.bytes;
    let mut quoted = false;
    loop {
        let before = buf.len();
        if src.read_line(buf)? == 0 {
            if buf.is_empty() {
                return Ok(Record::End);
            }
            if quoted {
                return Ok(Record::Open);
            }
            break;
        }
        *line += 1;
        if *line == 1 && buf.starts_with(tracecost_trace::UTF8_BOM) {
            buf.drain(..tracecost_trace::UTF8_BOM.len());
        }
        rec.ends.push(buf.len());
        // Quotes are balanced when the record is whole.
        quoted ^= buf[before.min(buf.len())..]
            .iter()
            .filter(|&&b| b == b'"')
            .count()
            % 2
            == 1;
        if !quoted {
            break;
        }
    }
    let Ok(text) = std::str::from_utf8(buf) else {
        return Ok(Record::NotUtf8);
    };
    let text = text.strip_suffix('\n').unwrap_or(text);
    let text = text.strip_suffix('\r').unwrap_or(text);
    Ok(Record::Fields(split_fields(text)))
}

/// The fields of one whole record.
fn split_fields(text: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            ('"', true) => quoted = false,
            ('"', false) if field.is_empty() => quoted = true,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    fields
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows read (each with its line) and what was skipped.
    type Rows = (Vec<(usize, Map<String, Value>)>, ImportSummary);

    fn rows(text: &str) -> Rows {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        std::fs::write(&path, text).unwrap();
        let mut out = Vec::new();
        let mut report = ImportSummary::default();
        let opts = ImportOptions {
            skip_invalid: true,
            ..Default::default()
        };
        each_csv_row(&path, &opts, &mut report, |r, line| {
            out.push((line, r));
            Ok(())
        })
        .unwrap();
        (out, report)
    }

    #[test]
    fn quoted_fields_hold_commas_quotes_and_line_ends() {
        let (rows, report) = rows("id,input,n\r\na,\"say \"\"hi\"\", then\nstop\",3\nb,,\"\"\n\n");
        assert_eq!(report.skipped_lines, 0);
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].0, 2);
        assert_eq!(rows[0].1["input"], "say \"hi\", then\nstop");
        assert_eq!(rows[0].1["n"], "3");
        assert_eq!(rows[1].0, 4, "the first record spans two lines");
        assert_eq!(rows[1].1["input"], Value::Null);
        assert_eq!(rows[1].1["n"], Value::Null);
    }

    #[test]
    fn a_short_row_and_an_open_quote_are_located() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        std::fs::write(&path, "a,b\n1,2\n3\n4,\"5\n").unwrap();
        let mut report = ImportSummary::default();
        let err =
            each_csv_row(&path, &ImportOptions::default(), &mut report, |_, _| Ok(())).unwrap_err();
        assert!(
            err.to_string().contains("x.csv:3:1: expected 2 fields"),
            "{err}"
        );
        let (rows, report) = rows("a,b\n1,2\n3\n4,\"5\n");
        assert_eq!(rows.len(), 1);
        assert_eq!(report.skipped_lines, 2);
    }

    fn lines_read(rows: &Rows) -> Vec<usize> {
        rows.0.iter().map(|(line, _)| *line).collect()
    }

    #[test]
    fn a_torn_row_costs_its_own_line_not_the_rows_after_it() {
        // Its open quote runs to the end of the file.
        let read = rows("a,b\n1,2\n3,\"torn\n4,5\n6,7\n");
        assert_eq!(lines_read(&read), [2, 4, 5]);
        assert_eq!(read.1.skipped_lines, 1);
        assert_eq!(read.0[1].1["a"], "4");
        // Its open quote is closed by a later row's, giving a record of
        // the wrong field count; a quoted field over two lines after it
        // is still one record.
        let read = rows("a,b,c\n1,2,3\n4,\"torn\n5,6,7\n8,\"x\ny\",9\n10,11,12\n");
        assert_eq!(lines_read(&read), [2, 4, 5, 7]);
        assert_eq!(read.1.skipped_lines, 1);
        assert_eq!(read.0[2].1["b"], "x\ny");
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_give_rows_or_one_line_errors(bytes in proptest::collection::vec(
            proptest::sample::select(vec![b'a', b',', b'"', b'\n', b'\r', b' ', 0xff]), 0..200)) {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("x.csv");
            std::fs::write(&path, &bytes).unwrap();
            let mut report = ImportSummary::default();
            let mut names = None;
            let result = each_csv_row(&path, &ImportOptions::default(), &mut report, |r, _| {
                let keys: Vec<String> = r.keys().cloned().collect();
                if let Some(n) = &names {
                    assert_eq!(n, &keys, "every row has the header's names");
                }
                names = Some(keys);
                Ok(())
            });
            if let Err(e) = result {
                proptest::prop_assert!(!e.to_string().contains('\n'), "{}", e);
            }
        }
    }
}

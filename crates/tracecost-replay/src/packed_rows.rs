//! A replay's per-call rows, packed. A report holds the rows of the
//! configs it writes call by call (the status quo and the
//! recommendation) while it writes them, and a long trace's rows were the
//! largest thing it held then: 184 bytes a call as [`CallResult`]s. Most
//! of a row is small counts, so a row is kept as LEB128 varints and its
//! two prices as their bytes; what rows share (the model, the shared list
//! their compacted ids are cut from) is kept once in a side table and
//! named by its place. A row is rebuilt, equal to the one pushed,
//! each time it is read.

use std::sync::Arc;

use serde::Serialize;
use tracecost_cost::pricing::{CacheCreation, Usage};

use crate::explain::CacheCause;
use crate::varint::{put_varint, take_varint};
use crate::{CallResult, CompactedIds, SharedRecord};

/// Rows between two recorded offsets: reading row `i` decodes at most
/// this many rows before it.
const CHECKPOINT: usize = 64;

/// The flags byte that starts a row.
mod flag {
    pub(super) const WRITES_BY_TTL: u8 = 1;
    pub(super) const COST_AS_RECORDED: u8 = 1 << 1;
    pub(super) const OVER_WINDOW: u8 = 1 << 2;
    pub(super) const SUMMARY: u8 = 1 << 3;
    pub(super) const CAUSE: u8 = 1 << 4;
}

#[derive(Default)]
struct Packed {
    rows: usize,
    bytes: Vec<u8>,
    /// Where every [`CHECKPOINT`]th row starts: its offset in `bytes`
    /// and how many rows before it have a cause.
    checkpoints: Vec<(usize, usize)>,
    /// Each row's record (a pointer, shared by the call's rows under
    /// every config).
    records: Vec<Option<SharedRecord>>,
    /// The models priced, each kept once per run of rows that share it.
    models: Vec<Arc<str>>,
    /// The shared lists the rows' compacted ids are cut from, each kept
    /// once per run of rows that share it.
    lists: Vec<Arc<[Arc<str>]>>,
    /// The causes of the rows that have one, in row order.
    causes: Vec<CacheCause>,
}

impl Packed {
    fn push(&mut self, c: &CallResult) {
        if self.rows.is_multiple_of(CHECKPOINT) {
            self.checkpoints.push((self.bytes.len(), self.causes.len()));
        }
        let mut flags = 0;
        for (set, bit) in [
            (c.usage.cache_creation.is_some(), flag::WRITES_BY_TTL),
            (c.cost_usd_as_recorded.is_some(), flag::COST_AS_RECORDED),
            (c.over_window, flag::OVER_WINDOW),
            (c.summary, flag::SUMMARY),
            (c.cache_cause.is_some(), flag::CAUSE),
        ] {
            if set {
                flags |= bit;
            }
        }
        let out = &mut self.bytes;
        out.push(flags);
        for v in [
            c.index as u64,
            c.messages as u64,
            c.chars,
            c.usage.input_tokens,
            c.usage.cache_creation_input_tokens,
            c.usage.cache_read_input_tokens,
            c.usage.output_tokens,
        ] {
            put_varint(out, v);
        }
        if let Some(w) = c.usage.cache_creation {
            put_varint(out, w.ephemeral_5m_input_tokens);
            put_varint(out, w.ephemeral_1h_input_tokens);
        }
        out.extend_from_slice(&c.cost_usd.to_le_bytes());
        if let Some(v) = c.cost_usd_as_recorded {
            out.extend_from_slice(&v.to_le_bytes());
        }
        // Lists are compared by address: rows cut from one shared list
        // name it once. Empty lists are all the same list.
        let list = &c.compacted.ids;
        let same_list = self
            .lists
            .last()
            .is_some_and(|l| Arc::ptr_eq(l, list) || (l.is_empty() && list.is_empty()));
        if !same_list {
            self.lists.push(list.clone());
        }
        put_varint(out, (self.lists.len() - 1) as u64);
        put_varint(out, c.compacted.len as u64);
        let same_model = self
            .models
            .last()
            .is_some_and(|m| Arc::ptr_eq(m, &c.model) || *m == c.model);
        if !same_model {
            self.models.push(c.model.clone());
        }
        put_varint(out, (self.models.len() - 1) as u64);
        put_varint(out, c.stable_prefix_tokens);
        if let Some(cause) = c.cache_cause {
            self.causes.push(cause);
        }
        self.records.push(c.record.clone());
        self.rows += 1;
    }

    /// The row `row` whose bytes start at `*at`, of which `causes` rows
    /// before had a cause; moves both past it.
    fn read(&self, row: usize, at: &mut usize, causes: &mut usize) -> CallResult {
        let bytes = &self.bytes;
        let flags = bytes.get(*at).copied().unwrap_or(0);
        *at += 1;
        let mut next = || take_varint(bytes, at);
        let (index, messages, chars) = (next(), next(), next());
        let (input, write, read, output) = (next(), next(), next(), next());
        let cache_creation = (flags & flag::WRITES_BY_TTL != 0).then(|| CacheCreation {
            ephemeral_5m_input_tokens: next(),
            ephemeral_1h_input_tokens: next(),
        });
        let f64_at = |at: &mut usize| {
            let mut b = [0u8; 8];
            if let Some(s) = bytes.get(*at..*at + 8) {
                b.copy_from_slice(s);
            }
            *at += 8;
            f64::from_le_bytes(b)
        };
        let cost_usd = f64_at(at);
        let cost_usd_as_recorded = (flags & flag::COST_AS_RECORDED != 0).then(|| f64_at(at));
        let mut next = || take_varint(bytes, at) as usize;
        let (list, len, model, stable_prefix_tokens) = (next(), next(), next(), next() as u64);
        let cache_cause = (flags & flag::CAUSE != 0).then(|| {
            *causes += 1;
            self.causes[*causes - 1]
        });
        CallResult {
            index: index as usize,
            messages: messages as usize,
            chars,
            usage: Usage {
                input_tokens: input,
                cache_creation_input_tokens: write,
                cache_read_input_tokens: read,
                cache_creation,
                output_tokens: output,
            },
            cost_usd,
            compacted: CompactedIds {
                ids: self.lists[list].clone(),
                len,
            },
            record: self.records[row].clone(),
            cost_usd_as_recorded,
            model: self.models[model].clone(),
            stable_prefix_tokens,
            over_window: flags & flag::OVER_WINDOW != 0,
            cache_cause,
            summary: flags & flag::SUMMARY != 0,
        }
    }
}

/// A replay's per-call results, in call order, packed (about a quarter
/// of the rows' own size). Configs that send the same requests under the
/// same cache policy get the same results (only their names differ), so
/// one list is shared by all of them rather than copied for each. Read
/// row by row ([`Self::iter`], [`Self::get`]): each row read is rebuilt;
/// serializes as the list of rows.
#[derive(Clone, Default)]
pub struct CallResults(Arc<Packed>);

impl CallResults {
    /// How many rows.
    pub fn len(&self) -> usize {
        self.0.rows
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.0.rows == 0
    }

    /// The rows, in call order.
    pub fn iter(&self) -> CallResultsIter<'_> {
        CallResultsIter {
            packed: &self.0,
            row: 0,
            at: 0,
            causes: 0,
        }
    }

    /// Row `i`, if there is one.
    pub fn get(&self, i: usize) -> Option<CallResult> {
        if i >= self.0.rows {
            return None;
        }
        let checkpoint = i / CHECKPOINT;
        let (at, causes) = *self.0.checkpoints.get(checkpoint)?;
        let mut it = CallResultsIter {
            packed: &self.0,
            row: checkpoint * CHECKPOINT,
            at,
            causes,
        };
        it.nth(i - it.row)
    }

    /// The first row.
    pub fn first(&self) -> Option<CallResult> {
        self.iter().next()
    }

    /// The last row.
    pub fn last(&self) -> Option<CallResult> {
        self.get(self.0.rows.checked_sub(1)?)
    }

    /// Every row, as a list.
    pub fn to_vec(&self) -> Vec<CallResult> {
        self.iter().collect()
    }

    /// Whether `self` and `other` are one list, shared (not merely equal).
    pub fn is_shared_with(&self, other: &CallResults) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Builds a [`CallResults`] row by row.
#[derive(Default)]
pub struct CallResultsBuilder(Packed);

impl CallResultsBuilder {
    /// A builder with room for `rows` rows' pointers.
    pub fn with_capacity(rows: usize) -> Self {
        let mut p = Packed::default();
        p.records.reserve_exact(rows);
        p.checkpoints.reserve_exact(rows.div_ceil(CHECKPOINT));
        CallResultsBuilder(p)
    }

    /// Appends a row.
    pub fn push(&mut self, row: &CallResult) {
        self.0.push(row);
    }

    /// The rows pushed.
    pub fn finish(mut self) -> CallResults {
        self.0.bytes.shrink_to_fit();
        CallResults(Arc::new(self.0))
    }
}

/// The rows of a [`CallResults`], each rebuilt as it is read.
pub struct CallResultsIter<'a> {
    packed: &'a Packed,
    row: usize,
    at: usize,
    causes: usize,
}

impl Iterator for CallResultsIter<'_> {
    type Item = CallResult;

    fn next(&mut self) -> Option<CallResult> {
        if self.row >= self.packed.rows {
            return None;
        }
        let r = self.packed.read(self.row, &mut self.at, &mut self.causes);
        self.row += 1;
        Some(r)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.packed.rows - self.row;
        (n, Some(n))
    }
}

impl ExactSizeIterator for CallResultsIter<'_> {}

impl<'a> IntoIterator for &'a CallResults {
    type Item = CallResult;
    type IntoIter = CallResultsIter<'a>;
    fn into_iter(self) -> CallResultsIter<'a> {
        self.iter()
    }
}

impl From<Vec<CallResult>> for CallResults {
    fn from(rows: Vec<CallResult>) -> Self {
        rows.into_iter().collect()
    }
}

impl FromIterator<CallResult> for CallResults {
    fn from_iter<I: IntoIterator<Item = CallResult>>(iter: I) -> Self {
        let mut b = CallResultsBuilder::default();
        for row in iter {
            b.push(&row);
        }
        b.finish()
    }
}

impl PartialEq for CallResults {
    fn eq(&self, other: &CallResults) -> bool {
        self.is_shared_with(other) || (self.len() == other.len() && self.iter().eq(other.iter()))
    }
}

impl std::fmt::Debug for CallResults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for CallResults {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RecordedRow;

    /// Rows of every shape a replay makes: with and without a TTL split,
    /// a record, a cost as recorded, a cause, a summary, a request over
    /// the window; a model change; a compacted list growing, restored to
    /// empty and growing again; counts past one varint byte.
    fn rows(n: usize) -> Vec<CallResult> {
        let ids: Vec<Arc<str>> = (0..n).map(|i| Arc::from(format!("toolu_{i}"))).collect();
        let first: Arc<[Arc<str>]> = ids[..n / 2].into();
        let second: Arc<[Arc<str>]> = ids.clone().into();
        let (opus, haiku): (Arc<str>, Arc<str>) =
            ("claude-opus-4-5".into(), "claude-haiku-4-5".into());
        (0..n)
            .map(|i| {
                let compacted = match i * 3 / n {
                    0 => CompactedIds {
                        ids: first.clone(),
                        len: i.min(first.len()),
                    },
                    1 => CompactedIds::default(),
                    _ => CompactedIds {
                        ids: second.clone(),
                        len: i % (second.len() + 1),
                    },
                };
                let record = (i % 3 != 0)
                    .then(|| RecordedRow {
                        recorded: Some(Usage::new(i as u64, 7, 0, 1 << 40, 3)),
                        recorded_cost_usd: (i % 2 == 0).then_some(i as f64 * 0.125),
                    })
                    .and_then(RecordedRow::shared);
                CallResult {
                    index: i + 1,
                    messages: 2 * i + 1,
                    chars: (i as u64) << 20,
                    usage: if i % 4 == 0 {
                        Usage::new(i as u64, 300, 200, 9_000_000_000, 12)
                    } else {
                        Usage {
                            input_tokens: i as u64,
                            cache_creation_input_tokens: 5,
                            cache_read_input_tokens: u64::MAX,
                            cache_creation: None,
                            output_tokens: 0,
                        }
                    },
                    cost_usd: 0.1 + i as f64 / 3.0,
                    compacted,
                    record,
                    cost_usd_as_recorded: (i % 5 == 0).then_some(-0.0),
                    model: if i % 40 < 30 {
                        opus.clone()
                    } else {
                        haiku.clone()
                    },
                    stable_prefix_tokens: (i as u64).pow(3),
                    over_window: i % 7 == 0,
                    cache_cause: match i % 6 {
                        0 => Some(CacheCause::FirstCall),
                        1 => Some(CacheCause::BelowMinimum {
                            tokens: i as u32,
                            minimum: 1024,
                        }),
                        2 => Some(CacheCause::ToolsChanged { block: 3 }),
                        _ => None,
                    },
                    summary: i % 11 == 0,
                }
            })
            .collect()
    }

    #[test]
    fn every_row_reads_back_as_it_was_pushed() {
        let rows = rows(300);
        let packed = CallResults::from(rows.clone());
        assert_eq!(packed.len(), 300);
        assert_eq!(packed.iter().len(), 300);
        assert_eq!(packed.to_vec(), rows);
        // Read at random, across and at the checkpoints.
        for i in [0, 1, 63, 64, 65, 127, 128, 200, 299] {
            assert_eq!(packed.get(i).as_ref(), Some(&rows[i]), "row {i}");
        }
        assert_eq!(packed.get(300), None);
        assert_eq!(packed.first().as_ref(), rows.first());
        assert_eq!(packed.last().as_ref(), rows.last());
        // Serialized as the list of rows was.
        assert_eq!(
            serde_json::to_string(&packed).unwrap(),
            serde_json::to_string(&rows).unwrap()
        );
        let empty = CallResults::default();
        assert!(empty.is_empty());
        assert_eq!(empty.first(), None);
        assert_eq!(empty.last(), None);
        assert_eq!(serde_json::to_string(&empty).unwrap(), "[]");
    }

    #[test]
    fn what_rows_share_stays_shared() {
        let rows = rows(90);
        let packed = CallResults::from(rows.clone());
        for (a, b) in packed.iter().zip(&rows) {
            // The compacted lists, the records and the models are the
            // rows' own, not copies: what compares them by address (the
            // compacted lists' changes, recall risk's memo) still can.
            assert!(Arc::ptr_eq(&a.compacted.ids, &b.compacted.ids) || b.compacted.ids.is_empty());
            assert!(Arc::ptr_eq(&a.model, &b.model));
            match (&a.record, &b.record) {
                (Some(x), Some(y)) => assert!(Arc::ptr_eq(&x.0, &y.0)),
                (x, y) => assert_eq!(x, y),
            }
        }
        // One list per run of rows sharing it, one model per run.
        assert_eq!(packed.0.lists.len(), 3);
        assert_eq!(packed.0.models.len(), 5);
        let copy = packed.clone();
        assert!(copy.is_shared_with(&packed));
        assert!(!CallResults::from(rows).is_shared_with(&packed));
    }

    #[test]
    fn a_row_takes_a_fraction_of_its_own_size() {
        let n = 10_000;
        let packed = CallResults::from(rows(n));
        let p = &packed.0;
        let held = p.bytes.len()
            + p.checkpoints.len() * std::mem::size_of::<(usize, usize)>()
            + p.records.len() * std::mem::size_of::<Option<SharedRecord>>()
            + p.causes.len() * std::mem::size_of::<CacheCause>();
        let per_row = held / n;
        assert!(
            per_row * 3 < std::mem::size_of::<CallResult>(),
            "{per_row} bytes a row against {}",
            std::mem::size_of::<CallResult>()
        );
    }
}

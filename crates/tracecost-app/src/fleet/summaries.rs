//! A fleet's session summaries, in the plan's order: held in memory, or
//! spilled to a temporary file ([`SummaryStore`]) and read
//! back in passes, so that the answer of a fleet of any size is summed
//! without holding its summaries together. Either way the answer is the
//! same, to the bit: it is summed in the same order.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::AppError;
use crate::spill::{OnDisk, SpillFile, decode_record, encode_record};

use super::summary::SessionSummary;

/// What the fleet's answer reads of a trace without its summary: its names
/// and when it started, to group traces by session and project.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TraceMeta {
    /// The trace's name in the report.
    pub trace: String,
    /// The session it is part of.
    pub session: String,
    /// Its project, when the source tells.
    pub project: Option<String>,
    /// When its first call started.
    pub started_ms: Option<u64>,
}

impl TraceMeta {
    /// `s`'s.
    pub fn of(s: &SessionSummary) -> Self {
        TraceMeta {
            trace: s.sweep.trace.clone(),
            session: s.session.clone(),
            project: s.project.clone(),
            started_ms: s.started_ms,
        }
    }
}

/// A trace's [`TraceMeta`] as [`Summaries`] holds it, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetaRef<'a> {
    /// The trace's name in the report.
    pub trace: &'a str,
    /// The session it is part of.
    pub session: &'a str,
    /// Its project, when the source tells.
    pub project: Option<&'a str>,
    /// When its first call started.
    pub started_ms: Option<u64>,
}

/// Every trace's meta, their strings packed in one buffer. A fleet has
/// tens of thousands of them, kept to the end and made while traces are
/// replayed: as three small allocations each they land among the replay's
/// large short-lived ones and can keep the pages those free resident (the
/// allocator gives back only whole free pages), and the process grows with
/// the fleet although what it holds does not.
#[derive(Debug)]
struct Metas {
    text: String,
    rows: Vec<MetaRow>,
}

/// Where a meta's strings are in [`Metas::text`]: from `at`, the trace's
/// name, the session's, then the project's (their lengths; [`MetaRow::NONE`]
/// for a project not told, or as the trace's, for a row not yet put), and
/// when the trace started (`started_ms` when `started`). 32 bytes, one per
/// trace made room for when the replay starts; with `Option`s, 40.
#[derive(Debug, Clone, Copy)]
struct MetaRow {
    at: u64,
    started_ms: u64,
    trace: u32,
    session: u32,
    project: u32,
    started: bool,
}

impl MetaRow {
    /// A length no string is given (every one is checked shorter).
    const NONE: u32 = u32::MAX;
    /// A row not yet put.
    const EMPTY: MetaRow = MetaRow {
        at: 0,
        started_ms: 0,
        trace: Self::NONE,
        session: 0,
        project: Self::NONE,
        started: false,
    };
}

impl Metas {
    fn new(traces: usize) -> Self {
        Metas {
            text: String::new(),
            rows: vec![MetaRow::EMPTY; traces],
        }
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    /// Keeps trace `i`'s meta; a place beyond those made room for is an
    /// error (as is a string longer than 4 GB).
    fn put(&mut self, i: usize, meta: &TraceMeta) -> Result<(), AppError> {
        let len = self.rows.len();
        let too_long = || AppError::Internal(format!("a name of trace {} is over 4 GB", i + 1));
        let width = |s: &str| {
            u32::try_from(s.len())
                .ok()
                .filter(|n| *n < MetaRow::NONE)
                .ok_or_else(too_long)
        };
        let row = MetaRow {
            at: self.text.len() as u64,
            started_ms: meta.started_ms.unwrap_or(0),
            trace: width(&meta.trace)?,
            session: width(&meta.session)?,
            project: match meta.project.as_deref() {
                Some(p) => width(p)?,
                None => MetaRow::NONE,
            },
            started: meta.started_ms.is_some(),
        };
        let slot = self
            .rows
            .get_mut(i)
            .ok_or_else(|| AppError::Internal(format!("a summary for trace {} of {len}", i + 1)))?;
        *slot = row;
        self.text.push_str(&meta.trace);
        self.text.push_str(&meta.session);
        if let Some(p) = &meta.project {
            self.text.push_str(p);
        }
        Ok(())
    }

    fn get(&self, i: usize) -> Option<MetaRef<'_>> {
        let row = *self.rows.get(i)?;
        if row.trace == MetaRow::NONE {
            return None;
        }
        let (trace, rest) = self
            .text
            .get(usize::try_from(row.at).ok()?..)?
            .split_at_checked(row.trace as usize)?;
        let (session, rest) = rest.split_at_checked(row.session as usize)?;
        let project = match row.project {
            MetaRow::NONE => None,
            n => Some(rest.get(..n as usize)?),
        };
        Some(MetaRef {
            trace,
            session,
            project,
            started_ms: row.started.then_some(row.started_ms),
        })
    }
}

/// Where the summaries are.
#[derive(Debug)]
enum Kept {
    Memory(Vec<Option<SessionSummary>>),
    Spilled(SummaryStore),
}

/// The summaries of a fleet's traces, by their place in the plan.
#[derive(Debug)]
pub struct Summaries {
    kept: Kept,
    metas: Metas,
}

impl Summaries {
    /// Room for `traces` summaries, held in memory.
    pub fn in_memory(traces: usize) -> Self {
        Summaries {
            kept: Kept::Memory(vec![None; traces]),
            metas: Metas::new(traces),
        }
    }

    /// Room for `traces` summaries, written to a temporary file.
    pub fn spilled(traces: usize) -> Result<Self, AppError> {
        Ok(Summaries {
            kept: Kept::Spilled(SummaryStore::new(traces)?),
            metas: Metas::new(traces),
        })
    }

    /// `sessions` in memory, in this order.
    pub fn from_vec(sessions: Vec<SessionSummary>) -> Self {
        let mut metas = Metas::new(sessions.len());
        for (i, s) in sessions.iter().enumerate() {
            // Every place was made room for; a name over 4 GB is not read.
            let _ = metas.put(i, &TraceMeta::of(s));
        }
        Summaries {
            metas,
            kept: Kept::Memory(sessions.into_iter().map(Some).collect()),
        }
    }

    /// Keeps the summary of the plan's trace `i`.
    pub fn put(&mut self, i: usize, summary: SessionSummary) -> Result<(), AppError> {
        self.metas.put(i, &TraceMeta::of(&summary))?;
        match &mut self.kept {
            Kept::Memory(v) => v[i] = Some(summary),
            Kept::Spilled(store) => store.put(i, &summary)?,
        }
        Ok(())
    }

    /// Keeps the summary of the plan's trace `i` as
    /// [`encode_summary`] wrote it (`bytes`, which are on
    /// disk at `on`), with its meta: spilled, it is not decoded, and it is
    /// read back from where it is.
    pub fn put_encoded(
        &mut self,
        i: usize,
        bytes: &[u8],
        on: &OnDisk,
        meta: TraceMeta,
    ) -> Result<(), AppError> {
        if let Kept::Memory(_) = self.kept {
            let summary = decode_summary(bytes).map_err(|e| {
                AppError::Internal(format!("the summary of trace {} reads back as: {e}", i + 1))
            })?;
            return self.put(i, summary);
        }
        self.metas.put(i, &meta)?;
        match &mut self.kept {
            Kept::Spilled(store) => store.put_on_disk(i, bytes, on),
            Kept::Memory(_) => Ok(()),
        }
    }

    /// Ends writing; every trace must have its summary.
    pub fn seal(&mut self) -> Result<(), AppError> {
        if let Some(i) = self
            .metas
            .rows
            .iter()
            .position(|r| r.trace == MetaRow::NONE)
        {
            return Err(AppError::Internal(format!(
                "trace {} of {} has no summary",
                i + 1,
                self.metas.len()
            )));
        }
        match &mut self.kept {
            Kept::Memory(_) => Ok(()),
            Kept::Spilled(store) => store.seal(),
        }
    }

    /// How many traces.
    pub fn len(&self) -> usize {
        self.metas.len()
    }

    /// Whether the summaries are written to a temporary file rather than
    /// held in memory.
    pub fn is_spilled(&self) -> bool {
        matches!(self.kept, Kept::Spilled(_))
    }

    /// Whether there is no trace.
    pub fn is_empty(&self) -> bool {
        self.metas.len() == 0
    }

    /// The summary of the plan's trace `i` (read back when spilled).
    pub fn get(&self, i: usize) -> Result<Cow<'_, SessionSummary>, AppError> {
        match &self.kept {
            Kept::Memory(v) => v
                .get(i)
                .and_then(Option::as_ref)
                .map(Cow::Borrowed)
                .ok_or_else(|| AppError::Internal(format!("no summary of trace {}", i + 1))),
            Kept::Spilled(store) => store.get(i).map(Cow::Owned),
        }
    }

    /// What the answer reads of trace `i` without its summary.
    pub fn meta(&self, i: usize) -> Result<MetaRef<'_>, AppError> {
        self.metas
            .get(i)
            .ok_or_else(|| AppError::Internal(format!("no summary of trace {}", i + 1)))
    }

    /// The places of each session's traces (in the plan's order), in
    /// session-name order: the one grouping every per-session figure is
    /// summed over.
    pub fn by_session(&self) -> Result<BTreeMap<&str, Vec<usize>>, AppError> {
        let mut out: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for i in 0..self.len() {
            out.entry(self.meta(i)?.session).or_default().push(i);
        }
        Ok(out)
    }

    /// The summaries of the traces at `places`, in that order.
    pub fn group(&self, places: &[usize]) -> Result<Vec<Cow<'_, SessionSummary>>, AppError> {
        places.iter().map(|&i| self.get(i)).collect()
    }
}

/// Session summaries spilled ([`SpillFile`]) as their traces are done, in
/// any order, and read back by their place in the plan: a fleet's answer is
/// summed in passes over them. The encoding (MessagePack, fields by name)
/// reads every float back exactly.
#[derive(Debug)]
pub struct SummaryStore(SpillFile);

impl SummaryStore {
    /// An empty store for `traces` summaries.
    pub fn new(traces: usize) -> Result<Self, AppError> {
        SpillFile::new("summaries", traces).map(SummaryStore)
    }

    /// Writes the summary of the plan's trace `i`.
    pub fn put(&mut self, i: usize, summary: &SessionSummary) -> Result<(), AppError> {
        self.0.put(i, &encode_summary(summary)?)
    }

    /// Keeps the summary of the plan's trace `i` as [`encode_summary`]
    /// wrote it, read back from where it is on disk ([`SpillFile::put_on_disk`]).
    pub fn put_on_disk(&mut self, i: usize, bytes: &[u8], on: &OnDisk) -> Result<(), AppError> {
        self.0.put_on_disk(i, bytes, on)
    }

    /// Ends writing: every summary written can be read back.
    pub fn seal(&mut self) -> Result<(), AppError> {
        self.0.seal()
    }

    /// The summary of the plan's trace `i`.
    pub fn get(&self, i: usize) -> Result<SessionSummary, AppError> {
        decode_summary(&self.0.get(i)?).map_err(|e| {
            AppError::Internal(format!("the summary of trace {} reads back as: {e}", i + 1))
        })
    }
}

/// A summary as bytes: MessagePack with fields by name, which reads every
/// float back exactly.
pub fn encode_summary(summary: &SessionSummary) -> Result<Vec<u8>, AppError> {
    encode_record(summary, "a summary")
}

/// The summary [`encode_summary`] wrote.
pub fn decode_summary(bytes: &[u8]) -> Result<SessionSummary, rmp_serde::decode::Error> {
    decode_record(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(
        trace: &str,
        session: &str,
        project: Option<&str>,
        started_ms: Option<u64>,
    ) -> TraceMeta {
        TraceMeta {
            trace: trace.to_owned(),
            session: session.to_owned(),
            project: project.map(str::to_owned),
            started_ms,
        }
    }

    proptest::proptest! {
        /// Packed, every meta reads back as it was given, whichever order
        /// the places come in.
        #[test]
        fn packed_metas_read_back_as_given(
            given in proptest::collection::vec(
                ("\\PC{0,12}", "\\PC{0,12}", proptest::option::of("\\PC{0,8}"), proptest::option::of(0u64..u64::MAX)),
                0..30,
            ),
            reversed in proptest::prelude::any::<bool>(),
        ) {
            let mut metas = Metas::new(given.len());
            let order: Vec<usize> = match reversed {
                true => (0..given.len()).rev().collect(),
                false => (0..given.len()).collect(),
            };
            for &i in &order {
                let (t, s, p, ms) = &given[i];
                metas.put(i, &meta(t, s, p.as_deref(), *ms)).unwrap();
            }
            for (i, (t, s, p, ms)) in given.iter().enumerate() {
                proptest::prop_assert_eq!(
                    metas.get(i),
                    Some(MetaRef { trace: t, session: s, project: p.as_deref(), started_ms: *ms })
                );
            }
            proptest::prop_assert_eq!(metas.get(given.len()), None);
        }
    }

    #[test]
    fn a_meta_without_room_is_an_error_and_a_missing_one_is_none() {
        let mut metas = Metas::new(2);
        assert!(metas.put(2, &meta("a", "a", None, None)).is_err());
        metas
            .put(1, &meta("b-part2", "b", Some("ü"), Some(5)))
            .unwrap();
        assert_eq!(metas.get(0), None);
        assert_eq!(
            metas.get(1),
            Some(MetaRef {
                trace: "b-part2",
                session: "b",
                project: Some("ü"),
                started_ms: Some(5)
            })
        );
    }
}

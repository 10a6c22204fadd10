//! A fleet's session summaries, in the plan's order: held in memory, or
//! spilled to a temporary file ([`crate::store::SummaryStore`]) and read
//! back in passes, so that the answer of a fleet of any size is summed
//! without holding its summaries together. Either way the answer is the
//! same, to the bit: it is summed in the same order.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::AppError;
use crate::store::{OnDisk, SummaryStore};

use super::session::SessionSummary;

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
    metas: Vec<Option<TraceMeta>>,
}

impl Summaries {
    /// Room for `traces` summaries, held in memory.
    pub fn in_memory(traces: usize) -> Self {
        Summaries {
            kept: Kept::Memory(vec![None; traces]),
            metas: vec![None; traces],
        }
    }

    /// Room for `traces` summaries, written to a temporary file.
    pub fn spilled(traces: usize) -> Result<Self, AppError> {
        Ok(Summaries {
            kept: Kept::Spilled(SummaryStore::new(traces)?),
            metas: vec![None; traces],
        })
    }

    /// `sessions` in memory, in this order.
    pub fn from_vec(sessions: Vec<SessionSummary>) -> Self {
        Summaries {
            metas: sessions.iter().map(|s| Some(TraceMeta::of(s))).collect(),
            kept: Kept::Memory(sessions.into_iter().map(Some).collect()),
        }
    }

    /// Keeps the summary of the plan's trace `i`.
    pub fn put(&mut self, i: usize, summary: SessionSummary) -> Result<(), AppError> {
        *self.meta_slot(i)? = Some(TraceMeta::of(&summary));
        match &mut self.kept {
            Kept::Memory(v) => v[i] = Some(summary),
            Kept::Spilled(store) => store.put(i, &summary)?,
        }
        Ok(())
    }

    /// Keeps the summary of the plan's trace `i` as
    /// [`crate::store::encode_summary`] wrote it (`bytes`, which are on
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
            let summary = crate::store::decode_summary(bytes).map_err(|e| {
                AppError::Internal(format!("the summary of trace {} reads back as: {e}", i + 1))
            })?;
            return self.put(i, summary);
        }
        *self.meta_slot(i)? = Some(meta);
        match &mut self.kept {
            Kept::Spilled(store) => store.put_on_disk(i, bytes, on),
            Kept::Memory(_) => Ok(()),
        }
    }

    /// Where trace `i`'s meta goes: there is room for it.
    fn meta_slot(&mut self, i: usize) -> Result<&mut Option<TraceMeta>, AppError> {
        let len = self.metas.len();
        self.metas
            .get_mut(i)
            .ok_or_else(|| AppError::Internal(format!("a summary for trace {} of {len}", i + 1)))
    }

    /// Ends writing; every trace must have its summary.
    pub fn seal(&mut self) -> Result<(), AppError> {
        if let Some(i) = self.metas.iter().position(Option::is_none) {
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

    /// Whether there is no trace.
    pub fn is_empty(&self) -> bool {
        self.metas.is_empty()
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
    pub fn meta(&self, i: usize) -> Result<&TraceMeta, AppError> {
        self.metas
            .get(i)
            .and_then(Option::as_ref)
            .ok_or_else(|| AppError::Internal(format!("no summary of trace {}", i + 1)))
    }

    /// The places of each session's traces (in the plan's order), in
    /// session-name order: the one grouping every per-session figure is
    /// summed over.
    pub fn by_session(&self) -> Result<BTreeMap<&str, Vec<usize>>, AppError> {
        let mut out: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
        for i in 0..self.len() {
            out.entry(self.meta(i)?.session.as_str())
                .or_default()
                .push(i);
        }
        Ok(out)
    }

    /// The summaries of the traces at `places`, in that order.
    pub fn group(&self, places: &[usize]) -> Result<Vec<Cow<'_, SessionSummary>>, AppError> {
        places.iter().map(|&i| self.get(i)).collect()
    }
}

//! A report's use of a fleet cache: segments found handed over, segments
//! replayed kept for the next run.

use rayon::prelude::*;
use std::collections::HashMap;

use crate::AppError;
use crate::fleet::{SessionSummary, Summaries};
use crate::fleet_cache::{EntryKind, FleetCache, Key};
use crate::plan::SweepPlan;
use tracecost_cost::tokens::TokenMemo;
use tracecost_policy::Config;

use super::groups::{RowsKept, replay_groups};
use super::sink::SessionSink;

/// What a report took from its cache ([`report_with`](super::report_with)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheUse {
    /// Traces read from the cache, not replayed.
    pub found: usize,
    /// Traces replayed (and kept in the cache for the next run).
    pub replayed: usize,
    /// Traces replayed again for their page alone.
    pub paged_again: usize,
}

/// A report's use of a [`FleetCache`]: which trace is in which segment,
/// the key of each, and what is gathered of each segment replayed until
/// all its traces are in.
pub(super) struct CacheRun<'c> {
    cache: &'c FleetCache,
    /// Per trace of the plan: what of it the figures depend on (its bytes,
    /// its name, its file, its session), as a digest.
    ids: Vec<Key>,
    /// The segments (each in the plan's order) and their keys.
    segments: Vec<(Vec<usize>, Key)>,
    /// Per trace: its segment.
    segment_of: Vec<usize>,
    /// Per segment being replayed: its entry, written as its traces come
    /// (each as its place in the segment, its summary and what the report
    /// wrote of it), and how many are still to come.
    /// The entry is made when the first trace comes: a fleet's thousands
    /// of segments are not all open at once.
    gathering: HashMap<usize, (Option<crate::fleet_cache::EntryWriter>, usize)>,
    /// Traces of the segments not found.
    replayed: usize,
}

impl<'c> CacheRun<'c> {
    /// `groups` cut into segments, each trace's identity and each
    /// segment's key.
    pub(super) fn new(
        sp: &SweepPlan,
        cache: &'c FleetCache,
        groups: &[Vec<usize>],
    ) -> Result<Self, AppError> {
        // The longest any config's cache holds an entry: past it, an
        // account's caches are empty; `None` when some config's cache is
        // made for the trace that meets it first.
        let hold = sp
            .configs()
            .iter()
            .map(|c| tracecost_replay::longest_hold_ms(&c.cache))
            .try_fold(0u64, |l, h| h.map(|h| l.max(h)));
        let ids = (0..sp.traces().len())
            .into_par_iter()
            .map(|i| -> Result<Key, AppError> {
                let own = sp.trace_digest(i)?;
                let t = sp.traces().get(i)?;
                Ok(crate::fleet_cache::digest([
                    &own[..],
                    t.name.as_bytes(),
                    t.shared.source.as_deref().unwrap_or_default().as_bytes(),
                    crate::identity::session_of(&*t).as_bytes(),
                ]))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut segments = Vec::new();
        let mut segment_of = vec![0; ids.len()];
        for group in groups {
            for seg in crate::plan::segments(group, |i| sp.head(i), hold) {
                let key = cache.key(seg.iter().map(|&i| &ids[i][..]));
                for &i in &seg {
                    segment_of[i] = segments.len();
                }
                segments.push((seg, key));
            }
        }
        Ok(CacheRun {
            cache,
            ids,
            segments,
            segment_of,
            gathering: HashMap::new(),
            replayed: 0,
        })
    }

    /// Hands over the traces of every segment the cache holds (their
    /// summaries to `sessions`, what was written of them to `sink`), and
    /// returns the segments left to replay.
    pub(super) fn hand_over_found(
        &mut self,
        sp: &SweepPlan,
        sink: &mut dyn SessionSink,
        sessions: &mut Summaries,
        done: &dyn Fn(usize),
    ) -> Result<Vec<Vec<usize>>, AppError> {
        let mut missing = Vec::new();
        for (s, (seg, key)) in self.segments.iter().enumerate() {
            let entry = self.cache.get_open(EntryKind::Segment, key);
            let found = entry
                .as_ref()
                .and_then(|e| read_segment(&e.bytes, seg.len()));
            let (Some(entry), Some(found)) = (entry, found) else {
                self.gathering.insert(s, (None, seg.len()));
                self.replayed += seg.len();
                missing.push(seg.clone());
                continue;
            };
            // The summaries are read back from the entry, not copied.
            let file = std::sync::Arc::new(entry.file);
            let path: std::sync::Arc<std::path::Path> = entry.path.into();
            for (&i, (meta, summary, written)) in seg.iter().zip(found) {
                let t = sp.traces().get(i)?;
                done(sp.head(i).calls);
                sink.cached(i, &t, &entry.bytes[written])?;
                let on = crate::spill::OnDisk {
                    file: file.clone(),
                    path: path.clone(),
                    at: summary.start as u64,
                };
                sessions.put_encoded(i, &entry.bytes[summary], &on, meta)?;
            }
        }
        Ok(missing)
    }

    /// Trace `i` replayed: once every trace of its segment is, the segment
    /// goes into the cache.
    pub(super) fn replayed(
        &mut self,
        i: usize,
        summary: &SessionSummary,
        written: Vec<u8>,
    ) -> Result<(), AppError> {
        let s = self.segment_of[i];
        let (seg, key) = &self.segments[s];
        let Some((entry, left)) = self.gathering.get_mut(&s) else {
            return Ok(());
        };
        let entry = match entry {
            Some(e) => e,
            None => entry.insert(self.cache.writer(EntryKind::Segment, key)?),
        };
        let k = seg
            .binary_search(&i)
            .map_err(|_| AppError::Internal(format!("trace {} is not in its segment", i + 1)))?;
        let meta = rmp_serde::to_vec(&crate::fleet::TraceMeta::of(summary))
            .map_err(|e| AppError::Internal(format!("a trace's meta cannot be encoded: {e}")))?;
        entry.write_part(&(k as u64).to_le_bytes())?;
        entry.write_part(&meta)?;
        entry.write_part(&crate::fleet::encode_summary(summary)?)?;
        entry.write_part(&written)?;
        *left -= 1;
        if *left == 0
            && let Some((Some(entry), _)) = self.gathering.remove(&s)
        {
            entry.finish()?;
        }
        Ok(())
    }

    /// Per trace of the plan, its stubs and unstable ones under `config`:
    /// each segment's read from the cache, or checked with `check_one` (and
    /// kept).
    pub(super) fn stability(
        &self,
        sp: &SweepPlan,
        config: &Config,
        check_one: &(dyn Fn(usize) -> Result<(usize, usize), AppError> + Sync),
        done: &dyn Fn(usize),
    ) -> Result<Vec<(usize, usize)>, AppError> {
        let mut out = vec![(0, 0); sp.traces().len()];
        let name = config.to_string();
        let key_of = |seg_key: &Key| {
            self.cache
                .key([&seg_key[..], b"stability", name.as_bytes()])
        };
        let mut missing = Vec::new();
        for (seg, seg_key) in &self.segments {
            let found = self
                .cache
                .get(EntryKind::Stability, &key_of(seg_key))
                .and_then(|b| read_counts(&b, seg.len()));
            match found {
                Some(counts) => {
                    for (&i, c) in seg.iter().zip(counts) {
                        done(sp.head(i).calls);
                        out[i] = c;
                    }
                }
                None => missing.push((seg, seg_key)),
            }
        }
        let traces: Vec<usize> = missing
            .iter()
            .flat_map(|(seg, _)| seg.iter().copied())
            .collect();
        let counts = traces
            .par_iter()
            .map(|&i| check_one(i))
            .collect::<Result<Vec<_>, _>>()?;
        for (&i, c) in traces.iter().zip(counts) {
            out[i] = c;
        }
        for (seg, seg_key) in missing {
            let bytes: Vec<u8> = seg
                .iter()
                .flat_map(|&i| {
                    let (stubs, violations) = out[i];
                    [
                        (stubs as u64).to_le_bytes(),
                        (violations as u64).to_le_bytes(),
                    ]
                })
                .flatten()
                .collect();
            self.cache
                .put(EntryKind::Stability, &key_of(seg_key), &bytes)?;
        }
        Ok(out)
    }

    /// The pages the report wants of traces it did not replay: read from
    /// the cache, else their segments replayed again; then every page the
    /// report writes kept for a later run. Returns what the cache gave.
    pub(super) fn pages(
        &self,
        sp: &SweepPlan,
        memo: &TokenMemo,
        sink: &mut dyn SessionSink,
    ) -> Result<CacheUse, AppError> {
        let page_key = |i: usize| self.cache.key([&self.ids[i][..], b"page"]);
        let mut again = std::collections::BTreeSet::new();
        let mut wanted = std::collections::BTreeSet::new();
        // Pages read from the cache are there already.
        let mut kept = std::collections::BTreeSet::new();
        for i in sink.pages_wanted() {
            let found = match self.cache.get(EntryKind::Page, &page_key(i)) {
                Some(page) => sink.cached_page(i, &page)?,
                None => false,
            };
            if found {
                kept.insert(i);
            } else {
                wanted.insert(i);
                again.insert(self.segment_of[i]);
            }
        }
        let paged_again = again.iter().map(|&s| self.segments[s].0.len()).sum();
        if !again.is_empty() {
            let groups = again.iter().map(|&s| self.segments[s].0.clone()).collect();
            replay_groups(sp, memo, groups, RowsKept::of(sink), &mut |i, t, report| {
                if wanted.contains(&i) {
                    sink.page(i, t, &report)?;
                }
                Ok(())
            })?;
        }
        for (i, page) in sink.pages() {
            if !kept.contains(&i) {
                self.cache.put(EntryKind::Page, &page_key(i), &page)?;
            }
        }
        Ok(CacheUse {
            found: self.ids.len() - self.replayed,
            replayed: self.replayed,
            paged_again,
        })
    }
}

/// A trace of a segment found in the cache: what the fleet's answer reads
/// of it without its summary, and where in the entry its summary and what
/// the report wrote of it are.
type FoundTrace = (
    crate::fleet::TraceMeta,
    std::ops::Range<usize>,
    std::ops::Range<usize>,
);

/// A segment's entry read back: per trace in the segment's order, what
/// the fleet's answer reads of it without its summary, and where in
/// `bytes` its summary (as [`crate::fleet::encode_summary`] wrote it) and
/// what the report wrote of it are; `None` unless it holds each of its
/// `traces` once.
fn read_segment(bytes: &[u8], traces: usize) -> Option<Vec<FoundTrace>> {
    let parts = crate::fleet_cache::unframe_at(bytes)?;
    if parts.len() != traces * 4 {
        return None;
    }
    let mut out: Vec<Option<_>> = (0..traces).map(|_| None).collect();
    for p in parts.chunks_exact(4) {
        let part = |k: usize| &bytes[p[k].clone()];
        let k = usize::try_from(u64::from_le_bytes(part(0).try_into().ok()?)).ok()?;
        let slot = out.get_mut(k)?;
        if slot.is_some() {
            return None;
        }
        *slot = Some((
            rmp_serde::from_slice(part(1)).ok()?,
            p[2].clone(),
            p[3].clone(),
        ));
    }
    out.into_iter().collect()
}

/// A stability entry read back: per trace, its stubs and unstable ones.
fn read_counts(bytes: &[u8], traces: usize) -> Option<Vec<(usize, usize)>> {
    if bytes.len() != traces * 16 {
        return None;
    }
    bytes
        .chunks_exact(16)
        .map(|c| {
            let n = |b: &[u8]| usize::try_from(u64::from_le_bytes(b.try_into().ok()?)).ok();
            Some((n(&c[..8])?, n(&c[8..])?))
        })
        .collect()
}

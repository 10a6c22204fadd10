//! Per-call costs kept on disk rather than in memory: what a sweep keeps
//! of a config whose rows are not written ([`PerCallRows::Costs`]) until
//! the report has read them (ranking, a session's days, the cumulative
//! chart), each read back whole, one config at a time.
//!
//! Twenty configs' costs at 32 bytes a call are several times a long
//! trace's file; on disk they are 16 bytes a call (the cost, and which of
//! the run's shared compacted lists and how much of it: see
//! [`CompactedIds`]), and memory holds only the distinct lists, which the
//! replay shares anyway.

use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::{CallCost, CompactedIds, ReplayError};
use tracecost_cost::tokens::FastBuild;

/// Bytes of one call's record: its cost (`f64`), the index of its
/// compacted list among the config's distinct lists (`u32`) and how many
/// of its ids it holds (`u32`), little-endian.
const RECORD: usize = 16;

/// A temporary file the costs of one sweep's configs are appended to, in
/// any order from the replays in flight. On Unix it has no name once
/// open, so nothing is left behind however the run ends; elsewhere its
/// name goes when the last config's costs are dropped.
#[derive(Debug)]
pub(crate) struct CostFile {
    path: PathBuf,
    file: File,
    /// Bytes reserved so far: each config's costs take the next range.
    end: Mutex<u64>,
}

impl CostFile {
    /// A new file in the system's temporary folder (`TMPDIR`).
    pub(crate) fn new() -> Result<Arc<Self>, ReplayError> {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("tracecost-costs-{}-{n}.tmp", std::process::id()));
        let io = |source| ReplayError::Spill {
            path: path.display().to_string(),
            source,
        };
        let file = create_unlinked(&path).map_err(io)?;
        Ok(Arc::new(CostFile {
            path,
            file,
            end: Mutex::new(0),
        }))
    }

    fn error(&self, source: std::io::Error) -> ReplayError {
        ReplayError::Spill {
            path: self.path.display().to_string(),
            source,
        }
    }

    /// Writes `costs` (one config's, in call order) to the file.
    pub(crate) fn spill(self: &Arc<Self>, costs: &[CallCost]) -> Result<SpilledCosts, ReplayError> {
        let mut lists: Vec<Arc<[Arc<str>]>> = Vec::new();
        let mut index: HashMap<*const Arc<str>, u32, FastBuild> = HashMap::default();
        let mut bytes = Vec::with_capacity(costs.len() * RECORD);
        let too_many = || {
            self.error(std::io::Error::other(
                "more than 2^32 compacted lists or ids",
            ))
        };
        for c in costs {
            let list = &c.compacted.ids;
            let key = Arc::as_ptr(list).cast::<Arc<str>>();
            let at = match index.get(&key) {
                Some(&at) => at,
                None => {
                    let at = u32::try_from(lists.len()).map_err(|_| too_many())?;
                    index.insert(key, at);
                    lists.push(list.clone());
                    at
                }
            };
            let len = u32::try_from(c.compacted.len).map_err(|_| too_many())?;
            bytes.extend_from_slice(&c.cost_usd.to_bits().to_le_bytes());
            bytes.extend_from_slice(&at.to_le_bytes());
            bytes.extend_from_slice(&len.to_le_bytes());
        }
        let at = {
            let mut end = self.end.lock().unwrap_or_else(|e| e.into_inner());
            let at = *end;
            *end += bytes.len() as u64;
            at
        };
        write_at(&self.file, &bytes, at).map_err(|e| self.error(e))?;
        Ok(SpilledCosts {
            file: self.clone(),
            at,
            calls: costs.len(),
            lists: lists.into(),
        })
    }
}

#[cfg(not(unix))]
impl Drop for CostFile {
    fn drop(&mut self) {
        // Best effort: a file still open elsewhere is the system's to
        // remove.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// One config's per-call costs, on disk ([`CostFile::spill`]).
#[derive(Debug, Clone)]
pub struct SpilledCosts {
    file: Arc<CostFile>,
    /// Where its records start.
    at: u64,
    calls: usize,
    /// Its distinct compacted lists, which the records name by index.
    lists: Arc<[Arc<[Arc<str>]>]>,
}

impl SpilledCosts {
    /// How many calls.
    pub fn len(&self) -> usize {
        self.calls
    }

    /// Whether there are no calls.
    pub fn is_empty(&self) -> bool {
        self.calls == 0
    }

    /// Whether `other` is these costs (the same records of one file).
    pub fn same_place(&self, other: &SpilledCosts) -> bool {
        Arc::ptr_eq(&self.file, &other.file) && self.at == other.at && self.calls == other.calls
    }

    /// Every call's cost and compacted ids, read back in call order. The
    /// compacted lists are those the replay made (the same addresses), as
    /// recall risk compares them by address.
    pub fn read(&self) -> Result<Vec<CallCost>, ReplayError> {
        let mut bytes = vec![0u8; self.calls * RECORD];
        read_at(&self.file.file, &mut bytes, self.at).map_err(|e| self.file.error(e))?;
        bytes
            .chunks_exact(RECORD)
            .map(|r| {
                let word = |at: usize| {
                    u32::from_le_bytes([r[at], r[at + 1], r[at + 2], r[at + 3]]) as usize
                };
                let mut cost = [0u8; 8];
                cost.copy_from_slice(&r[..8]);
                let list = self.lists.get(word(8)).ok_or_else(|| {
                    self.file
                        .error(std::io::Error::other("a record names no compacted list"))
                })?;
                Ok(CallCost {
                    cost_usd: f64::from_bits(u64::from_le_bytes(cost)),
                    compacted: CompactedIds {
                        ids: list.clone(),
                        len: word(12),
                    },
                })
            })
            .collect()
    }
}

/// A new file at `path`, open to read and write; on Unix its name is
/// removed at once, so nothing is left however the process ends (the file
/// lives while it is open). Fails if `path` exists.
pub fn create_unlinked(path: &std::path::Path) -> std::io::Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)?;
    #[cfg(unix)]
    std::fs::remove_file(path)?;
    Ok(file)
}

/// Fills `buf` from `file` at offset `at` (a short file is an error).
#[cfg(unix)]
pub fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.read_exact_at(buf, at)
}

/// Writes all of `buf` to `file` at offset `at`.
#[cfg(unix)]
pub fn write_at(file: &File, buf: &[u8], at: u64) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    file.write_all_at(buf, at)
}

/// Fills `buf` from `file` at offset `at` (a short file is an error).
#[cfg(not(unix))]
pub fn read_at(file: &File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        let n = file.seek_read(&mut buf[done..], at + done as u64)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        done += n;
    }
    Ok(())
}

/// Writes all of `buf` to `file` at offset `at`.
#[cfg(not(unix))]
pub fn write_at(file: &File, buf: &[u8], at: u64) -> std::io::Result<()> {
    use std::os::windows::fs::FileExt;
    let mut done = 0;
    while done < buf.len() {
        let n = file.seek_write(&buf[done..], at + done as u64)?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        done += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_read_back_as_written_with_the_replays_own_lists() {
        let ids: CompactedIds = ["a", "b", "c"].iter().map(|&s| Arc::from(s)).collect();
        let other: CompactedIds = ["z"].iter().map(|&s| Arc::from(s)).collect();
        let prefix = |len| CompactedIds {
            ids: ids.ids.clone(),
            len,
        };
        let costs = vec![
            CallCost {
                cost_usd: 0.25,
                compacted: CompactedIds::default(),
            },
            CallCost {
                cost_usd: -0.0,
                compacted: prefix(1),
            },
            CallCost {
                cost_usd: f64::MIN_POSITIVE,
                compacted: other.clone(),
            },
            CallCost {
                cost_usd: 1e9,
                compacted: prefix(3),
            },
        ];
        let file = CostFile::new().expect("temporary file");
        let first = file.spill(&costs).expect("spill");
        let second = file.spill(&costs[1..]).expect("spill");
        for (spilled, want) in [(&first, &costs[..]), (&second, &costs[1..])] {
            let back = spilled.read().expect("read back");
            assert_eq!(back, want);
            for (b, w) in back.iter().zip(want) {
                assert_eq!(b.cost_usd.to_bits(), w.cost_usd.to_bits());
                // The same shared list, by address: recall risk's identity.
                assert!(Arc::ptr_eq(&b.compacted.ids, &w.compacted.ids));
            }
        }
        // The ledger's prefixes of one list are one list in memory.
        assert_eq!(first.lists.len(), 3);
        assert!(first.same_place(&first.clone()) && !first.same_place(&second));
    }
}

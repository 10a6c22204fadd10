//! Giving memory the program no longer uses back to the system. A report
//! reads each trace of a fleet back, replays it and lets it go: large,
//! short-lived allocations on several threads, beside the small records
//! kept for every trace. glibc's allocator keeps what is freed in the
//! middle of its heaps (one per thread, up to eight per core) resident,
//! so the process would hold the most any phase ever needed, in every heap,
//! for the rest of the run; `malloc_trim` hands those free pages back.
//! Elsewhere (another libc, another system) the allocator is left as it is.

/// Traces replayed between two trims: often enough that the free pages of
/// the traces let go do not pile up, seldom enough that the trims (a walk
/// of each heap's free chunks) cost nothing to speak of.
pub(super) const TRACES_PER_TRIM: usize = 256;

/// Returns the allocator's free pages to the system, where it can.
pub(super) fn give_back() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free memory of the allocator's own
    // heaps; it touches no allocation in use.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn giving_memory_back_leaves_what_is_in_use_as_it_was() {
        let kept: Vec<Vec<u8>> = (0..64u8).map(|i| vec![i; 100_000]).collect();
        let freed: Vec<Vec<u8>> = (0..64u8).map(|i| vec![i; 100_000]).collect();
        drop(freed);
        super::give_back();
        for (i, v) in kept.iter().enumerate() {
            assert!(v.iter().all(|&b| usize::from(b) == i));
        }
    }
}

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

/// A trace of at least this many calls is followed by a trim of its own:
/// its replays alone free hundreds of MB (on a 100,000-call trace, a
/// report held about 50 MB more while writing without it), against which
/// a trim's walk of the heaps costs nothing to speak of.
pub(super) const CALLS_PER_TRIM: usize = 10_000;

/// Allocations at least this large get pages of their own, unmapped when
/// freed: glibc's own default, held fixed.
const MMAP_THRESHOLD: i32 = 128 * 1024;

/// Sets the allocator up for a long run, where it can. glibc raises its
/// threshold for mapping an allocation apart each time one so mapped is
/// freed (up to 32 MB); past the first large buffer a report lets go, a
/// trace's text and requests (hundreds of KB, short-lived) would come from
/// the heaps instead, and the holes they leave among the records kept for
/// every trace stay resident. Held at its default, they are mapped apart
/// and handed back whole when freed: a 30,000-session report peaked at
/// 186 MB with the threshold moving, 180 MB with it held.
///
/// A long trace's replays run one config at a time, each freeing hundreds
/// of MB across the heaps of the threads it ran on; the pages are handed
/// back after each (`tracecost_replay::between_replays`), or what each
/// replay freed stays resident beside the next: the 500,000-call trace of
/// `docs/benchmarks.md` peaked at 1,131 MB without it, 1,102 MB with it.
pub(super) fn settle() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes how later allocations are served.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
    tracecost_replay::between_replays(give_back);
}

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

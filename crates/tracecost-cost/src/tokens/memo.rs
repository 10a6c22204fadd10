//! The memo that counts each distinct text once, shared across threads.

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use rayon::prelude::*;

use super::hash::{ContentHash, PrehashedBuild};
use super::tokenizer::Tokenizer;

/// What a [`TokenMemo`] holds: each text's count, in the table itself
/// rather than in an allocation of its own per text (a fleet's report
/// memoizes tens of thousands of texts at a time, and one small allocation
/// each, made among a trace's large ones and kept after them, held pages
/// of the heap that would otherwise be given back); and the texts a thread
/// is counting, which the others wait for.
#[derive(Default)]
struct Slots {
    counted: HashMap<ContentHash, u64, PrehashedBuild>,
    counting: HashMap<ContentHash, (), PrehashedBuild>,
}

/// Distinct texts a memo remembers before it starts afresh: 57,344, what
/// a table of 65,536 buckets holds before it doubles (7/8 of them), about
/// 4 MB with the counts. A fleet's texts are mostly its own sessions', met
/// by every config of one trace and then never again, so a memo that kept
/// them all would grow with the fleet; what it must hold is the texts of
/// the traces replayed side by side (a generated trace has about 45, so
/// this is more than a thousand traces' worth). Starting afresh only
/// recounts the texts of the traces being replayed and the few shared
/// across sessions (system prompts, tools); counts never change. At four
/// times this (about 20 MB) the memo was what still grew between a
/// 3,000-session and a 30,000-session report.
const MEMO_MAX: usize = (1 << 16) / 8 * 7;

/// Memoized token counts, keyed by [`ContentHash`]: each distinct text is
/// handed to the tokenizer once while the memo holds it (share one memo
/// per process).
///
/// Thread-safe; concurrent requests for the same unseen text wait for one
/// count instead of counting twice.
pub struct TokenMemo {
    tokenizer: Arc<dyn Tokenizer>,
    slots: Mutex<Slots>,
    /// Signalled when a text claimed is counted, or let go.
    counted: Condvar,
    invocations: AtomicU64,
}

impl fmt::Debug for TokenMemo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenMemo")
            .field("tokenizer", &self.tokenizer.name())
            .field("distinct", &self.len())
            .field("invocations", &self.invocations())
            .finish()
    }
}

/// A text a thread claimed in a memo ([`Slots::counting`]): counted, its
/// count goes in; dropped uncounted (the tokenizer panicked), its claim is
/// let go, so that the threads waiting for it count it themselves.
struct Claim<'m> {
    memo: &'m TokenMemo,
    hash: ContentHash,
    done: bool,
}

impl Claim<'_> {
    /// Counts `text` and puts its count in the memo.
    fn count(mut self, text: &str) -> u64 {
        let n = self.memo.invoke(text);
        let mut slots = self.memo.lock();
        slots.counting.remove(&self.hash);
        // A memo full of texts starts afresh.
        if slots.counted.len() >= MEMO_MAX {
            slots.counted.clear();
        }
        slots.counted.insert(self.hash, n);
        drop(slots);
        self.done = true;
        self.memo.counted.notify_all();
        n
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.memo.lock().counting.remove(&self.hash);
            self.memo.counted.notify_all();
        }
    }
}

impl TokenMemo {
    /// An empty memo over `tokenizer`.
    pub fn new(tokenizer: Arc<dyn Tokenizer>) -> Self {
        Self {
            tokenizer,
            slots: Mutex::new(Slots::default()),
            counted: Condvar::new(),
            invocations: AtomicU64::new(0),
        }
    }

    /// The tokenizer's spec name.
    pub fn tokenizer_name(&self) -> String {
        self.tokenizer.name()
    }

    /// The underlying tokenizer.
    pub fn tokenizer(&self) -> &Arc<dyn Tokenizer> {
        &self.tokenizer
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        // A poisoned lock only means another thread panicked while holding
        // it; the maps themselves are always consistent.
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Claims `hash` (in neither of `slots`) for the caller to count.
    fn claim<'m>(&'m self, slots: &mut Slots, hash: ContentHash) -> Claim<'m> {
        slots.counting.insert(hash, ());
        Claim {
            memo: self,
            hash,
            done: false,
        }
    }

    fn invoke(&self, text: &str) -> u64 {
        self.invocations.fetch_add(1, Ordering::Relaxed);
        self.tokenizer.count(text)
    }

    /// Tokens in `text`, counted at most once per distinct text.
    pub fn count(&self, text: &str) -> u64 {
        self.count_hashed(ContentHash::of(text.as_bytes()), text)
    }

    /// Like [`TokenMemo::count`] for a caller that already has the text's
    /// [`ContentHash`] (it must be `ContentHash::of(text.as_bytes())`).
    pub fn count_hashed(&self, hash: ContentHash, text: &str) -> u64 {
        let mut slots = self.lock();
        loop {
            if let Some(n) = slots.counted.get(&hash) {
                return *n;
            }
            if !slots.counting.contains_key(&hash) {
                break;
            }
            slots = self.counted.wait(slots).unwrap_or_else(|e| e.into_inner());
        }
        let claim = self.claim(&mut slots, hash);
        drop(slots);
        claim.count(text)
    }

    /// The memoized count for `hash`, if that text was counted.
    pub fn get(&self, hash: &ContentHash) -> Option<u64> {
        self.lock().counted.get(hash).copied()
    }

    /// Counts every text, in input order. Distinct texts not seen before
    /// are counted in parallel (rayon), each once.
    pub fn count_all(&self, texts: &[&str]) -> Vec<u64> {
        let hashes: Vec<ContentHash> = texts
            .par_iter()
            .map(|t| ContentHash::of(t.as_bytes()))
            .collect();
        // A text is claimed by the task that counts it, as it starts
        // counting: a claim never waits for a task not yet run, which a
        // thread waiting for it could be the one to run.
        hashes
            .par_iter()
            .zip(texts)
            .map(|(h, t)| self.count_hashed(*h, t))
            .collect()
    }

    /// How many times the tokenizer itself was called (one per distinct
    /// text counted through this memo).
    pub fn invocations(&self) -> u64 {
        self.invocations.load(Ordering::Relaxed)
    }

    /// Number of distinct texts memoized (at most a bound: a memo full of
    /// texts starts afresh).
    pub fn len(&self) -> usize {
        self.lock().counted.len()
    }

    /// Whether nothing was memoized yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokens::CharsPerToken;

    #[test]
    fn memo_counts_each_distinct_text_once() {
        let memo = TokenMemo::new(Arc::new(CharsPerToken(1.0)));
        assert_eq!(memo.count("abc"), 3);
        assert_eq!(memo.count("abc"), 3);
        assert_eq!(memo.invocations(), 1);
        let texts = ["abc", "de", "de", "fghi", "abc", "de"];
        assert_eq!(memo.count_all(&texts), vec![3, 2, 2, 4, 3, 2]);
        assert_eq!(memo.invocations(), 3);
        assert_eq!(memo.len(), 3);
        assert_eq!(memo.count_all(&texts), vec![3, 2, 2, 4, 3, 2]);
        assert_eq!(memo.invocations(), 3);
        assert_eq!(memo.get(&ContentHash::of(b"de")), Some(2));
        assert_eq!(memo.get(&ContentHash::of(b"zz")), None);
    }

    #[test]
    fn a_memo_past_its_bound_starts_afresh_and_still_counts_right() {
        let memo = TokenMemo::new(Arc::new(CharsPerToken(1.0)));
        let texts: Vec<String> = (0..MEMO_MAX + 10).map(|i| format!("t{i}")).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let want: Vec<u64> = refs.iter().map(|t| t.len() as u64).collect();
        assert_eq!(memo.count_all(&refs), want);
        assert!(memo.len() <= MEMO_MAX, "{}", memo.len());
        // One at a time too, the first texts again (forgotten): recounted.
        let before = memo.invocations();
        for t in &refs[..20] {
            assert_eq!(memo.count(t), t.len() as u64);
        }
        assert!(memo.len() <= MEMO_MAX);
        assert_eq!(memo.invocations(), before + 20);
    }

    /// Counts a text's bytes, but panics the first time it meets "boom",
    /// and holds "slow" until the gate opens.
    #[derive(Default)]
    struct Flaky {
        boomed: std::sync::atomic::AtomicBool,
        gate: Mutex<bool>,
        opened: Condvar,
    }

    impl Tokenizer for Flaky {
        fn count(&self, text: &str) -> u64 {
            if text == "boom" && !self.boomed.swap(true, Ordering::SeqCst) {
                panic!("the tokenizer failed");
            }
            if text == "slow" {
                let mut open = self.gate.lock().unwrap();
                while !*open {
                    open = self.opened.wait(open).unwrap();
                }
            }
            text.len() as u64
        }
        fn name(&self) -> String {
            "flaky".into()
        }
    }

    #[test]
    fn a_text_whose_count_failed_is_counted_again_not_waited_for() {
        let memo = TokenMemo::new(Arc::new(Flaky::default()));
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| memo.count("boom")));
        assert!(failed.is_err());
        assert_eq!(memo.get(&ContentHash::of(b"boom")), None);
        assert_eq!(memo.count("boom"), 4);
        assert_eq!(memo.invocations(), 2);
    }

    #[test]
    fn a_thread_asking_for_a_text_being_counted_waits_for_that_count() {
        let flaky = Arc::new(Flaky::default());
        let memo = TokenMemo::new(flaky.clone());
        std::thread::scope(|s| {
            // The first thread counts "slow" and is held in the tokenizer;
            // the second asks for it meanwhile.
            let first = s.spawn(|| memo.count("slow"));
            while !memo.lock().counting.contains_key(&ContentHash::of(b"slow")) {
                std::thread::yield_now();
            }
            let second = s.spawn(|| memo.count_all(&["slow", "quick"]));
            std::thread::sleep(std::time::Duration::from_millis(50));
            *flaky.gate.lock().unwrap() = true;
            flaky.opened.notify_all();
            assert_eq!(first.join().unwrap(), 4);
            assert_eq!(second.join().unwrap(), vec![4, 5]);
        });
        // "slow" once, "quick" once: the second thread waited.
        assert_eq!(memo.invocations(), 2);
    }

    #[test]
    fn memo_is_shared_across_threads() {
        let memo = Arc::new(TokenMemo::new(Arc::new(CharsPerToken(2.0))));
        let texts: Vec<String> = (0..200).map(|i| "x".repeat(i % 50)).collect();
        std::thread::scope(|s| {
            for _ in 0..4 {
                let memo = &memo;
                let texts = &texts;
                s.spawn(move || {
                    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                    memo.count_all(&refs);
                });
            }
        });
        assert_eq!(memo.invocations(), 50);
    }
}

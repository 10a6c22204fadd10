//! The counts of a trace's messages, held flat: one list of every block's
//! count and where each message's begin. A list per message costs its own
//! allocation and header (about 40 bytes beside a 32-byte count): on a
//! long tool loop, whose messages have a block each, more than the counts.

use std::ops::{Index, IndexMut, Range};

use super::BlockCount;

/// Per message, its blocks' counts (a string-content message has one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageCounts {
    counts: Vec<BlockCount>,
    /// Where message `i`'s counts begin; one more than the messages, the
    /// last being `counts.len()`.
    starts: Vec<usize>,
}

impl Default for MessageCounts {
    fn default() -> Self {
        MessageCounts {
            counts: Vec::new(),
            starts: vec![0],
        }
    }
}

impl MessageCounts {
    /// The messages counted.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Whether no message is counted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Message `i`'s counts, if there is such a message.
    pub fn get(&self, i: usize) -> Option<&[BlockCount]> {
        let (&start, &end) = (self.starts.get(i)?, self.starts.get(i + 1)?);
        Some(&self.counts[start..end])
    }

    /// Each message's counts, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[BlockCount]> + '_ {
        self.range(0..self.len())
    }

    /// The counts of messages `r`, one slice a message.
    ///
    /// # Panics
    /// When `r` is not within the messages, as slicing does.
    pub fn range(&self, r: Range<usize>) -> impl ExactSizeIterator<Item = &[BlockCount]> + '_ {
        assert!(
            r.start <= r.end && r.end <= self.len(),
            "{r:?} of {}",
            self.len()
        );
        r.map(move |i| &self.counts[self.starts[i]..self.starts[i + 1]])
    }

    /// The counts of messages `r`, one slice a message, to edit.
    ///
    /// # Panics
    /// When `r` is not within the messages, as slicing does.
    pub fn range_mut(&mut self, r: Range<usize>) -> Vec<&mut [BlockCount]> {
        assert!(
            r.start <= r.end && r.end <= self.len(),
            "{r:?} of {}",
            self.len()
        );
        let mut rest = &mut self.counts[self.starts[r.start]..self.starts[r.end]];
        let mut out = Vec::with_capacity(r.len());
        for i in r {
            let (this, tail) = rest.split_at_mut(self.starts[i + 1] - self.starts[i]);
            out.push(this);
            rest = tail;
        }
        out
    }

    /// Appends a message's counts.
    pub fn push(&mut self, counts: impl IntoIterator<Item = BlockCount>) {
        self.counts.extend(counts);
        self.starts.push(self.counts.len());
    }

    /// Where message `i`'s first count is among every block's: the blocks
    /// before message `i`.
    pub fn start(&self, i: usize) -> usize {
        self.starts[i]
    }

    /// The blocks of messages `..n` (`None` past the messages counted).
    pub fn blocks_before(&self, n: usize) -> Option<usize> {
        self.starts.get(n).copied()
    }

    /// Every block's count, message after message.
    pub fn flat(&self) -> &[BlockCount] {
        &self.counts
    }
}

impl Index<usize> for MessageCounts {
    type Output = [BlockCount];
    fn index(&self, i: usize) -> &[BlockCount] {
        &self.counts[self.starts[i]..self.starts[i + 1]]
    }
}

impl IndexMut<usize> for MessageCounts {
    fn index_mut(&mut self, i: usize) -> &mut [BlockCount] {
        &mut self.counts[self.starts[i]..self.starts[i + 1]]
    }
}

impl<I: IntoIterator<Item = BlockCount>> FromIterator<I> for MessageCounts {
    fn from_iter<T: IntoIterator<Item = I>>(messages: T) -> Self {
        let mut out = MessageCounts::default();
        for m in messages {
            out.push(m);
        }
        out.counts.shrink_to_fit();
        out.starts.shrink_to_fit();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::Scale;
    use super::*;
    use proptest::prelude::*;
    use tracecost_cost::tokens::ContentHash;

    fn count(n: u64) -> BlockCount {
        BlockCount {
            key: ContentHash::of(&n.to_le_bytes()),
            raw_tokens: n,
            scale: Scale::Content,
        }
    }

    proptest! {
        /// Held flat, the counts read and edit as a list per message would.
        #[test]
        fn flat_counts_read_as_a_list_per_message(
            lens in proptest::collection::vec(0usize..4, 0..12),
            a in 0usize..13,
            b in 0usize..13,
        ) {
            let mut n = 0;
            let lists: Vec<Vec<BlockCount>> = lens
                .iter()
                .map(|&l| (0..l).map(|_| { n += 1; count(n) }).collect())
                .collect();
            let mut flat: MessageCounts = lists.iter().cloned().collect();
            prop_assert_eq!(flat.len(), lists.len());
            for (i, l) in lists.iter().enumerate() {
                prop_assert_eq!(&flat[i], &l[..]);
                prop_assert_eq!(flat.get(i), Some(&l[..]));
                prop_assert_eq!(flat.start(i), lists[..i].iter().map(Vec::len).sum::<usize>());
            }
            prop_assert_eq!(flat.get(lists.len()), None);
            for k in 0..=lists.len() {
                prop_assert_eq!(
                    flat.blocks_before(k),
                    Some(lists[..k].iter().map(Vec::len).sum::<usize>())
                );
            }
            prop_assert_eq!(flat.blocks_before(lists.len() + 1), None);
            let (a, b) = (a.min(lists.len()), b.min(lists.len()));
            let (a, b) = (a.min(b), a.max(b));
            let read: Vec<&[BlockCount]> = flat.range(a..b).collect();
            let want: Vec<&[BlockCount]> = lists[a..b].iter().map(Vec::as_slice).collect();
            prop_assert_eq!(read, want);
            // An edit of one message's counts touches that message alone.
            let mut lists = lists;
            for (m, l) in flat.range_mut(a..b).into_iter().zip(&mut lists[a..b]) {
                prop_assert_eq!(m.len(), l.len());
                for (c, d) in m.iter_mut().zip(l.iter_mut()) {
                    c.raw_tokens += 100;
                    d.raw_tokens += 100;
                }
            }
            let all: Vec<&[BlockCount]> = flat.iter().collect();
            let want: Vec<&[BlockCount]> = lists.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(all, want);
        }
    }
}

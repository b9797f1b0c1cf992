//! The index set in a field's name (ERRORS.md §11.6), kept as the ranges it was written as:
//! `[0-1048574]` costs two numbers, never a million.

use std::ops::RangeInclusive;

/// The indices of the elements of one array a `<field>` line stands for, kept as ascending,
/// disjoint ranges (`[0-4,7]` is `0..=4` and `7..=7`): reading a set costs what its text costs,
/// however many indices it names. [`iter`](IndexSet::iter) gives the indices one by one.
///
/// ```
/// use mcp_fusion::client::IndexSet;
///
/// let set: IndexSet = [7, 0, 1, 2, 3, 4].into_iter().collect();
/// assert_eq!(set.ranges().collect::<Vec<_>>(), [0..=4, 7..=7]);
/// assert_eq!(set.len(), 6);
/// assert!(set.contains(3) && !set.contains(5));
/// assert_eq!(set, [0, 1, 2, 3, 4, 7]);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct IndexSet {
    /// `(first, last)`, both included: ascending, disjoint, never adjacent (so that one set has
    /// one representation and two equal sets compare equal).
    ranges: Vec<(u64, u64)>,
}

impl IndexSet {
    /// The set of no index.
    #[must_use]
    pub fn new() -> Self {
        IndexSet::default()
    }

    /// The set's runs of consecutive indices, ascending.
    pub fn ranges(&self) -> impl ExactSizeIterator<Item = RangeInclusive<u64>> + '_ {
        self.ranges.iter().map(|&(first, last)| first..=last)
    }

    /// The indices, ascending, each once.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.ranges.iter().flat_map(|&(first, last)| first..=last)
    }

    /// How many indices the set holds (saturating at `u64::MAX`).
    #[must_use]
    pub fn len(&self) -> u64 {
        self.ranges.iter().fold(0u64, |n, &(first, last)| {
            n.saturating_add((last - first).saturating_add(1))
        })
    }

    /// Whether the set holds no index.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// Whether the set holds `index`.
    #[must_use]
    pub fn contains(&self, index: u64) -> bool {
        let after = self.ranges.partition_point(|&(first, _)| first <= index);
        after > 0 && self.ranges[after - 1].1 >= index
    }

    /// The set of these ranges (each `(first, last)` with `first <= last`), in any order,
    /// overlapping or not.
    fn from_ranges(mut ranges: Vec<(u64, u64)>) -> Self {
        ranges.sort_unstable();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for (first, last) in ranges {
            match merged.last_mut() {
                Some(previous) if first <= previous.1.saturating_add(1) => {
                    previous.1 = previous.1.max(last);
                }
                _ => merged.push((first, last)),
            }
        }
        merged.shrink_to_fit();
        IndexSet { ranges: merged }
    }
}

impl FromIterator<u64> for IndexSet {
    fn from_iter<I: IntoIterator<Item = u64>>(indices: I) -> Self {
        IndexSet::from_ranges(indices.into_iter().map(|i| (i, i)).collect())
    }
}

impl PartialEq<[u64]> for IndexSet {
    fn eq(&self, indices: &[u64]) -> bool {
        self.iter().eq(indices.iter().copied())
    }
}

impl<const N: usize> PartialEq<[u64; N]> for IndexSet {
    fn eq(&self, indices: &[u64; N]) -> bool {
        *self == indices[..]
    }
}

impl PartialEq<Vec<u64>> for IndexSet {
    fn eq(&self, indices: &Vec<u64>) -> bool {
        *self == indices[..]
    }
}

/// Where the index set of a field's name is: the positions after its `[` and at its `]`. It is
/// the one bracket whose content begins with a digit and holds `,` or `-` (ERRORS.md §11.6);
/// `None` when the name has no such bracket, or two.
pub(super) fn set_bracket(name: &str) -> Option<(usize, usize)> {
    let bytes = name.as_bytes();
    let mut found = None;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'[' {
            i += 1;
            continue;
        }
        let open = i + 1;
        match bytes.get(open) {
            // A key in JSON string syntax: skipped whole, escapes and all.
            Some(b'"') => {
                let mut j = open + 1;
                while j < bytes.len() && bytes[j] != b'"' {
                    j += if bytes[j] == b'\\' { 2 } else { 1 };
                }
                i = j + 1;
            }
            Some(b) if b.is_ascii_digit() => {
                let close = open + name[open..].find(']')?;
                if name[open..close].contains([',', '-']) {
                    if found.is_some() {
                        return None;
                    }
                    found = Some((open, close));
                }
                i = close + 1;
            }
            _ => i += 1,
        }
    }
    found
}

/// The index set of a field's name, if it has one (see [`set_bracket`]) that is well written
/// and holds at most `most` indices (`most` is what is left of the envelope's budget).
pub(super) fn index_set(name: &str, most: u64) -> Option<IndexSet> {
    let (open, close) = set_bracket(name)?;
    let number = |s: &str| -> Option<u64> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    // One pair per range as written: at most one for every two bytes of the name.
    let mut ranges = Vec::new();
    for part in name[open..close].split(',') {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(part)?, number(part)?),
        };
        if first > last {
            return None;
        }
        ranges.push((first, last));
    }
    let set = IndexSet::from_ranges(ranges);
    (set.len() <= most).then_some(set)
}

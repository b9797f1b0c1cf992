//! Where a problem is in the arguments.

use std::fmt;
use std::hash::{Hash, Hasher};

use crate::envelope::{itoa, text};

/// Where a problem is: object keys and array indices from the arguments' root.
///
/// ```
/// use mcp_fusion::validate::FieldPath;
/// let path = FieldPath::root().key("lines").index(0).key("quantity");
/// assert_eq!(path.to_string(), "lines[0].quantity");
/// assert_eq!(FieldPath::root().to_string(), "(root)");
/// assert_eq!(FieldPath::root().key("meta").key("sub key").to_string(), "meta[\"sub key\"]");
/// ```
#[derive(Clone, Default)]
pub struct FieldPath(Segments);

/// The segments; a path of one, the commonest (a field of the arguments), without a vector.
#[derive(Clone)]
enum Segments {
    One(PathSegment),
    Many(Vec<PathSegment>),
}

impl Default for Segments {
    fn default() -> Self {
        Segments::Many(Vec::new())
    }
}

/// One step of a [`FieldPath`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PathSegment {
    /// An object key.
    Key(String),
    /// An array index.
    Index(usize),
}

impl FieldPath {
    /// The arguments as a whole.
    pub fn root() -> Self {
        Self::default()
    }

    /// The root, with room for `steps` segments.
    pub(super) fn with_capacity(steps: usize) -> Self {
        FieldPath(match steps {
            0 | 1 => Segments::default(),
            _ => Segments::Many(Vec::with_capacity(steps)),
        })
    }

    /// The path of one object key.
    pub(super) fn of_key(key: &str) -> Self {
        FieldPath(Segments::One(PathSegment::Key(key.to_owned())))
    }

    /// This path, then an object key.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.push(PathSegment::Key(key.into()));
        self
    }

    /// This path, then an array index.
    pub fn index(mut self, index: usize) -> Self {
        self.push(PathSegment::Index(index));
        self
    }

    pub(super) fn push(&mut self, segment: PathSegment) {
        match &mut self.0 {
            Segments::Many(segments) if segments.capacity() == 0 => {
                self.0 = Segments::One(segment);
            }
            Segments::Many(segments) => segments.push(segment),
            Segments::One(_) => {
                let Segments::One(first) = std::mem::take(&mut self.0) else {
                    unreachable!("matched above")
                };
                self.0 = Segments::Many(vec![first, segment]);
            }
        }
    }

    /// The segments, from the root.
    pub fn segments(&self) -> &[PathSegment] {
        match &self.0 {
            Segments::One(segment) => std::slice::from_ref(segment),
            Segments::Many(segments) => segments,
        }
    }

    #[inline]
    pub(super) fn write(&self, out: &mut String) {
        self.write_with(out, &[]);
    }

    /// The path, its last index written as the set `elements` when they are several
    /// (ERRORS.md §11.6: `lines[0-4,7].quantity`).
    pub(super) fn write_with(&self, out: &mut String, elements: &[usize]) {
        let segments = self.segments();
        if segments.is_empty() {
            return out.push_str("(root)");
        }
        let set = match elements {
            [_, _, ..] => self.last_index().map(|(at, _)| at),
            _ => None,
        };
        let start = out.len();
        for (at, segment) in segments.iter().enumerate() {
            match segment {
                PathSegment::Key(key) => text::push_key(out, key, out.len() == start),
                PathSegment::Index(_) if set == Some(at) => {
                    out.push('[');
                    write_index_set(out, elements);
                    out.push(']');
                }
                PathSegment::Index(i) => {
                    out.push('[');
                    out.push_str(itoa(*i as u64, &mut [0; 20]));
                    out.push(']');
                }
            }
        }
    }

    /// The position of the last array index among the segments, and that index: where the
    /// paths of the same problem in other elements of the same array differ (ERRORS.md §11.6).
    pub(super) fn last_index(&self) -> Option<(usize, usize)> {
        let segments = self.segments();
        segments
            .iter()
            .enumerate()
            .rev()
            .find_map(|(at, s)| match s {
                PathSegment::Index(i) => Some((at, *i)),
                PathSegment::Key(_) => None,
            })
    }

    /// Whether this path and `other` are equal but for their index at `at`, where each has one.
    pub(super) fn same_but_index(&self, other: &FieldPath, at: usize) -> bool {
        let (a, b) = (self.segments(), other.segments());
        a.len() == b.len()
            && a.iter().zip(b).enumerate().all(|(i, pair)| match pair {
                (PathSegment::Index(_), PathSegment::Index(_)) if i == at => true,
                (x, y) => i != at && x == y,
            })
    }
}

/// Indices, ascending and each once: a run of 3 or more consecutive ones as `{first}-{last}`,
/// every other index alone, joined by `,` (ERRORS.md §11.6).
pub(super) fn write_index_set(out: &mut String, indices: &[usize]) {
    let mut rest = indices;
    let mut first = true;
    while !rest.is_empty() {
        let run = 1 + rest
            .windows(2)
            .take_while(|pair| pair[1] == pair[0] + 1)
            .count();
        let shown: &[usize] = match run {
            1 | 2 => &rest[..run],
            _ => &rest[..1],
        };
        for &i in shown {
            if !std::mem::take(&mut first) {
                out.push(',');
            }
            out.push_str(itoa(i as u64, &mut [0; 20]));
        }
        if run >= 3 {
            out.push('-');
            out.push_str(itoa(rest[run - 1] as u64, &mut [0; 20]));
        }
        rest = &rest[run..];
    }
}

impl FieldPath {
    /// Hashes the path without its index at `at` (where the same problem in other elements
    /// differs), for [`same_but_index`](Self::same_but_index) to confirm.
    pub(super) fn hash_but_index<H: Hasher>(&self, at: usize, state: &mut H) {
        for (i, segment) in self.segments().iter().enumerate() {
            match i == at {
                true => state.write_u8(0xff),
                false => segment.hash(state),
            }
        }
    }
}

impl PartialEq for FieldPath {
    fn eq(&self, other: &FieldPath) -> bool {
        self.segments() == other.segments()
    }
}

impl Eq for FieldPath {}

impl Hash for FieldPath {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.segments().hash(state);
    }
}

impl fmt::Debug for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("FieldPath").field(&self.segments()).finish()
    }
}

impl fmt::Display for FieldPath {
    /// The `name` attribute's text (before escaping).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        self.write(&mut out);
        f.write_str(&out)
    }
}

impl<S: Into<String>> FromIterator<S> for FieldPath {
    /// A path of object keys.
    fn from_iter<I: IntoIterator<Item = S>>(keys: I) -> Self {
        keys.into_iter()
            .fold(FieldPath::root(), |path, key| path.key(key))
    }
}

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

    pub(super) fn write(&self, out: &mut String) {
        let segments = self.segments();
        if segments.is_empty() {
            return out.push_str("(root)");
        }
        let start = out.len();
        for segment in segments {
            match segment {
                PathSegment::Key(key) => text::push_key(out, key, out.len() == start),
                PathSegment::Index(i) => {
                    out.push('[');
                    out.push_str(itoa(*i as u64, &mut [0; 20]));
                    out.push(']');
                }
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

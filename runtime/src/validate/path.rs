//! Where a problem is in the arguments.

use std::fmt;

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
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldPath(pub(super) Vec<PathSegment>);

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

    /// This path, then an object key.
    pub fn key(mut self, key: impl Into<String>) -> Self {
        self.0.push(PathSegment::Key(key.into()));
        self
    }

    /// This path, then an array index.
    pub fn index(mut self, index: usize) -> Self {
        self.0.push(PathSegment::Index(index));
        self
    }

    /// The segments, from the root.
    pub fn segments(&self) -> &[PathSegment] {
        &self.0
    }

    pub(super) fn write(&self, out: &mut String) {
        if self.0.is_empty() {
            return out.push_str("(root)");
        }
        let start = out.len();
        for segment in &self.0 {
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
        FieldPath(
            keys.into_iter()
                .map(|k| PathSegment::Key(k.into()))
                .collect(),
        )
    }
}

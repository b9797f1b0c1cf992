//! Decoding an action's arguments into its Rust type, and where decoding stopped when it fails
//! (the decoder row of ERRORS.md §5).

use std::any::Any;

use serde_json::Value;

use crate::validate::{FieldPath, PathSegment};

/// Decodes an action's arguments into its type, erased so that a definition holds any: the
/// plain decoder, and the same through `serde_path_to_error`, run only after a failure to learn
/// where the decoder stopped.
#[derive(Clone, Copy)]
pub(super) struct Decoder {
    /// Decodes into `slot`, the caller's `Option<T>` (no allocation for the erasure); a slot
    /// of another type is left as it was.
    pub(super) decode: fn(&Value, slot: &mut dyn Any) -> Result<(), serde_json::Error>,
    pub(super) locate: fn(&Value) -> Option<(FieldPath, serde_json::Error)>,
}

impl Decoder {
    pub(super) fn of<T: serde::de::DeserializeOwned + 'static>() -> Self {
        Decoder {
            decode: |args, slot| {
                let decoded = T::deserialize(args)?;
                if let Some(slot) = slot.downcast_mut::<Option<T>>() {
                    *slot = Some(decoded);
                }
                Ok(())
            },
            locate: |args| {
                let err = serde_path_to_error::deserialize::<_, T>(args).err()?;
                Some((decoder_path(err.path()), err.into_inner()))
            },
        }
    }
}

/// The decoder's path as a [`FieldPath`]; the root when it cannot tell (`flatten`, untagged
/// enums and other buffered content lose the track).
fn decoder_path(path: &serde_path_to_error::Path) -> FieldPath {
    use serde_path_to_error::Segment;
    let mut out = FieldPath::root();
    for segment in path.iter() {
        out = match segment {
            Segment::Seq { index } => out.index(*index),
            Segment::Map { key } | Segment::Enum { variant: key } => out.key(key.as_str()),
            Segment::Unknown => return FieldPath::root(),
        };
    }
    out
}

/// The value at `path` in `args`, if there is one.
pub(super) fn value_at<'a>(args: &'a Value, path: &FieldPath) -> Option<&'a Value> {
    path.segments()
        .iter()
        .try_fold(args, |value, segment| match segment {
            PathSegment::Key(key) => value.get(key.as_str()),
            PathSegment::Index(i) => value.get(*i),
        })
}

#[cfg(test)]
mod tests;

//! What the server holds for the lane (a leaf: the core keeps it, the lane reads it):
//! `tools/list`'s answer for each shape, and the sessions the HTTP lane may answer in.

#[cfg(feature = "http")]
use super::http::LaneSessions;

/// The lane's state in the server, one field of it.
#[derive(Default)]
pub(crate) struct LaneState {
    /// `tools/list`'s answer as JSON for each `Shape` (with id 0), made the first time a
    /// transport answers it itself; only when no source lists tools that may change.
    pub(crate) listing: [std::sync::OnceLock<Box<str>>; 2],
    /// The sessions whose plain requests the HTTP fast lane may answer.
    #[cfg(feature = "http")]
    pub(crate) sessions: LaneSessions,
}

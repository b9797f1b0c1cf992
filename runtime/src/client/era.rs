//! Which era of MCP the typed client speaks, and how it opens the connection: the
//! `initialize` handshake and its session (up to 2025-11-25), or `server/discover` and a
//! self-contained request each time (2026-07-28).

use rmcp::model::ProtocolVersion;
use rmcp::service::ClientLifecycleMode;

/// How a [`Client`](super::Client) opens its connection ([`Answers::era`](super::Answers::era)).
///
/// ```
/// use mcp_fusion::client::{Answers, Era};
///
/// // A client of 2026-07-28 servers that falls back to `initialize` for older ones.
/// let answers = Answers::new().era(Era::Auto);
/// # let _ = answers;
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Era {
    /// `initialize`, `notifications/initialized`, then a session (2025-11-25 and before). The
    /// default: what every server of the stateful era expects.
    #[default]
    Initialize,
    /// `server/discover`, then every request self-contained: the version, the client's name
    /// and capabilities in its `_meta` and the version in the `MCP-Protocol-Version` header
    /// (2026-07-28). A server that refuses the version (-32022, naming the versions it
    /// supports) is asked again, with a new id, at one both support; an older server is an
    /// error.
    Discover,
    /// [`Discover`](Era::Discover) first, and `initialize` when the server shows it is of the
    /// older era (or does not answer the discovery within 10 seconds).
    Auto,
}

impl Era {
    /// The era a conformance run names by its revision (`MCP_CONFORMANCE_PROTOCOL_VERSION`):
    /// [`Discover`](Era::Discover) from 2026-07-28 on, [`Initialize`](Era::Initialize) before;
    /// `None` for what is no revision (`YYYY-MM-DD`).
    ///
    /// ```
    /// use mcp_fusion::client::Era;
    ///
    /// assert_eq!(Era::of_revision("2026-07-28"), Some(Era::Discover));
    /// assert_eq!(Era::of_revision("2025-11-25"), Some(Era::Initialize));
    /// assert_eq!(Era::of_revision("latest"), None);
    /// ```
    pub fn of_revision(revision: &str) -> Option<Era> {
        let shaped = revision.len() == 10
            && revision.bytes().enumerate().all(|(i, b)| match i {
                4 | 7 => b == b'-',
                _ => b.is_ascii_digit(),
            });
        // Revisions are dates: their text orders as they do.
        match shaped {
            false => None,
            true if revision >= ProtocolVersion::NO_INITIALIZE.as_str() => Some(Era::Discover),
            true => Some(Era::Initialize),
        }
    }

    /// rmcp's lifecycle for this era.
    pub(super) fn lifecycle(self) -> ClientLifecycleMode {
        let preferred_versions = vec![ProtocolVersion::V_2026_07_28];
        match self {
            Era::Initialize => ClientLifecycleMode::Initialize,
            Era::Discover => ClientLifecycleMode::Discover { preferred_versions },
            Era::Auto => ClientLifecycleMode::Auto {
                preferred_versions,
                legacy_version: None,
            },
        }
    }
}

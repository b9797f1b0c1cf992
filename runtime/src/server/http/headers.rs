//! Names of the MCP transport's own headers, built once (a name given as a `&str` is parsed
//! and checked at each lookup).

/// `Mcp-Session-Id`: the session a request belongs to.
pub(crate) static SESSION_ID: http::HeaderName = http::HeaderName::from_static("mcp-session-id");

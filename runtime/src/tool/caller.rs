//! Who calls: the caller a transport verified (over streamable HTTP, the subject of a bearer
//! token checked by the server's OAuth resource server).

use std::sync::Arc;

use serde_json::{Map, Value};

/// The verified caller of a request: the subject of its access token, the scopes the token
/// grants and its claims. Handlers read it with [`Context::caller`](crate::Context::caller),
/// middleware with [`CallInfo::caller`](crate::middleware::CallInfo::caller); the token
/// itself is never kept. Cheap to clone.
///
/// ```
/// use mcp_fusion::tools::Caller;
/// let caller = Caller::new("user_42", ["invoices:read", "invoices:write"]);
/// assert_eq!(caller.subject(), "user_42");
/// assert!(caller.has_scope("invoices:write"));
/// assert!(!caller.has_scope("invoices:admin"));
/// ```
#[derive(Clone, PartialEq)]
pub struct Caller(Arc<Inner>);

#[derive(PartialEq)]
struct Inner {
    subject: String,
    /// Sorted, each once.
    scopes: Vec<String>,
    claims: Map<String, Value>,
}

impl Caller {
    /// A caller identified as `subject`, granted `scopes`, with no other claims.
    pub fn new<S: Into<String>>(
        subject: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        Self::with_claims(subject, scopes, Map::new())
    }

    /// A caller with the claims of its token (a verifier's result).
    pub fn with_claims<S: Into<String>>(
        subject: impl Into<String>,
        scopes: impl IntoIterator<Item = S>,
        claims: Map<String, Value>,
    ) -> Self {
        let mut scopes: Vec<String> = scopes.into_iter().map(Into::into).collect();
        scopes.sort_unstable();
        scopes.dedup();
        Caller(Arc::new(Inner {
            subject: subject.into(),
            scopes,
            claims,
        }))
    }

    /// Whom the token was issued to (its `sub` claim).
    pub fn subject(&self) -> &str {
        &self.0.subject
    }

    /// The scopes the token grants, sorted.
    pub fn scopes(&self) -> &[String] {
        &self.0.scopes
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.0
            .scopes
            .binary_search_by(|s| s.as_str().cmp(scope))
            .is_ok()
    }

    /// The scopes of `needed` the token does not grant, in order.
    pub fn lacks<'a>(&self, needed: &'a [String]) -> impl Iterator<Item = &'a str> {
        needed
            .iter()
            .map(String::as_str)
            .filter(|scope| !self.has_scope(scope))
    }

    /// Every claim of the token (`iss`, `aud`, `exp`, and whatever the authorization server
    /// adds: `email`, `org_id`, ...).
    pub fn claims(&self) -> &Map<String, Value> {
        &self.0.claims
    }

    /// One claim of the token.
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.0.claims.get(name)
    }

    /// The caller a transport attached to a request: directly, or in the request's HTTP parts
    /// (rmcp puts those in the extensions it hands a handler).
    pub(crate) fn of(extensions: &rmcp::model::Extensions) -> Option<&Caller> {
        if let Some(caller) = extensions.get::<Caller>() {
            return Some(caller);
        }
        #[cfg(feature = "http")]
        if let Some(parts) = extensions.get::<http::request::Parts>() {
            return parts.extensions.get::<Caller>();
        }
        None
    }
}

impl std::fmt::Debug for Caller {
    /// The subject and scopes; the claims stay out of logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Caller")
            .field("subject", &self.0.subject)
            .field("scopes", &self.0.scopes)
            .finish_non_exhaustive()
    }
}

//! Error codes and severities: the two attributes every `<tool_error>` carries.

use std::borrow::Cow;
use std::fmt;

use mcp_fusion_rules::codes::is_valid_code;

/// The `code` of a `<tool_error>`: one of the canonical codes, or a custom one.
///
/// The canonical codes are associated constants, so an editor completes them; a custom code is
/// any text matching `[A-Z][A-Z0-9_]*`, checked when it is made.
///
/// ```
/// use mcp_fusion::ErrorCode;
///
/// assert_eq!(ErrorCode::NOT_FOUND.as_str(), "NOT_FOUND");
/// assert!(ErrorCode::NOT_FOUND.is_canonical());
///
/// let declined = ErrorCode::custom("PAYMENT_DECLINED").unwrap();
/// assert!(!declined.is_canonical());
/// assert!(ErrorCode::custom("payment-declined").is_err());
///
/// // A literal can be checked at compile time instead.
/// const DECLINED: ErrorCode = ErrorCode::from_static("PAYMENT_DECLINED");
/// assert_eq!(DECLINED, declined);
/// ```
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(Cow<'static, str>);

macro_rules! canonical_codes {
    ($($(#[$doc:meta])* $name:ident),* $(,)?) => {
        impl ErrorCode {
            $( $(#[$doc])* pub const $name: ErrorCode = ErrorCode(Cow::Borrowed(stringify!($name))); )*

            /// Every canonical code, in the order of the contract.
            pub const CANONICAL: &'static [ErrorCode] = &[$(ErrorCode::$name),*];
        }
    };
}

canonical_codes! {
    /// The discriminator field (`action`) is absent, empty or not a string.
    MISSING_DISCRIMINATOR,
    /// The discriminator names no action of the tool.
    UNKNOWN_ACTION,
    /// The arguments do not match the action's schema.
    VALIDATION_ERROR,
    /// A field the handler needs is missing.
    MISSING_REQUIRED_FIELD,
    /// The handler failed in a way the model cannot fix; details stay in the server log.
    INTERNAL_ERROR,
    /// Too many calls in a time window.
    RATE_LIMITED,
    /// The caller's credentials were refused.
    UNAUTHORIZED,
    /// The caller may not do this.
    FORBIDDEN,
    /// The thing asked for does not exist.
    NOT_FOUND,
    /// The request conflicts with the current state.
    CONFLICT,
    /// The action did not finish in time.
    TIMEOUT,
    /// The tool is at its concurrency limit.
    SERVER_BUSY,
    /// The action is deprecated (usually a warning).
    DEPRECATED,
    /// The call needs authentication first.
    AUTH_REQUIRED,
    /// An upstream server of a hand-off is unavailable.
    HANDOFF_UPSTREAM_UNAVAILABLE,
    /// A hand-off reached a server of another namespace.
    HANDOFF_NAMESPACE_MISMATCH,
    /// A hand-off is still connecting.
    HANDOFF_CONNECTING,
}

impl ErrorCode {
    /// A custom code, checked against `[A-Z][A-Z0-9_]*`.
    ///
    /// ```
    /// use mcp_fusion::ErrorCode;
    /// assert_eq!(ErrorCode::custom("QUOTA_EXCEEDED").unwrap().as_str(), "QUOTA_EXCEEDED");
    /// let err = ErrorCode::custom("quota").unwrap_err();
    /// assert_eq!(err.to_string(), "invalid error code \"quota\": codes match [A-Z][A-Z0-9_]*, such as QUOTA_EXCEEDED");
    /// ```
    pub fn custom(code: impl Into<Cow<'static, str>>) -> Result<Self, InvalidCode> {
        let code = code.into();
        if is_valid_code(&code) {
            Ok(ErrorCode(code))
        } else {
            Err(InvalidCode(code.into_owned()))
        }
    }

    /// A code from a literal, checked at compile time when used in a constant.
    ///
    /// Panics when `code` does not match `[A-Z][A-Z0-9_]*`; in a `const` that panic is a
    /// compile error.
    ///
    /// ```
    /// use mcp_fusion::ErrorCode;
    /// const QUOTA: ErrorCode = ErrorCode::from_static("QUOTA_EXCEEDED");
    /// assert_eq!(QUOTA.as_str(), "QUOTA_EXCEEDED");
    /// ```
    pub const fn from_static(code: &'static str) -> Self {
        assert!(is_valid_code(code), "error codes match [A-Z][A-Z0-9_]*");
        ErrorCode(Cow::Borrowed(code))
    }

    /// The code as it is written on the wire.
    ///
    /// ```
    /// assert_eq!(mcp_fusion::ErrorCode::TIMEOUT.as_str(), "TIMEOUT");
    /// ```
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether this is one of the 17 canonical codes.
    ///
    /// ```
    /// use mcp_fusion::ErrorCode;
    /// assert!(ErrorCode::custom("NOT_FOUND").unwrap().is_canonical());
    /// ```
    pub fn is_canonical(&self) -> bool {
        mcp_fusion_rules::codes::is_canonical(&self.0)
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::str::FromStr for ErrorCode {
    type Err = InvalidCode;

    fn from_str(s: &str) -> Result<Self, InvalidCode> {
        match Self::CANONICAL.iter().find(|c| c.0 == s) {
            Some(canonical) => Ok(canonical.clone()),
            None => Self::custom(s.to_owned()),
        }
    }
}

/// A code that does not match `[A-Z][A-Z0-9_]*`.
///
/// ```
/// let err = "not found".parse::<mcp_fusion::ErrorCode>().unwrap_err();
/// assert_eq!(err.code(), "not found");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidCode(String);

impl InvalidCode {
    /// The rejected text.
    pub fn code(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for InvalidCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid error code {:?}: codes match [A-Z][A-Z0-9_]*, such as QUOTA_EXCEEDED",
            self.0
        )
    }
}

impl std::error::Error for InvalidCode {}

/// How bad a `<tool_error>` is; it decides the result's `isError`.
///
/// ```
/// use mcp_fusion::Severity;
/// assert!(Severity::Error.is_error());
/// assert!(Severity::Critical.is_error());
/// assert!(!Severity::Warning.is_error());
/// assert_eq!(Severity::default(), Severity::Error);
/// assert_eq!(Severity::Critical.as_str(), "critical");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum Severity {
    /// Guidance on a successful call (a deprecated action, a partial result): `isError` false.
    Warning,
    /// The call failed; the model can fix it and retry.
    #[default]
    Error,
    /// The call failed; do not retry blindly, escalate.
    Critical,
}

impl Severity {
    /// `isError` of a result carrying this severity: true for `error` and `critical`.
    pub const fn is_error(self) -> bool {
        !matches!(self, Severity::Warning)
    }

    /// The attribute value: `warning`, `error` or `critical`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
            Severity::Critical => "critical",
        }
    }

    /// Reads an attribute value; anything but the three names is `None`.
    ///
    /// ```
    /// use mcp_fusion::Severity;
    /// assert_eq!(Severity::parse("warning"), Some(Severity::Warning));
    /// assert_eq!(Severity::parse("fatal"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "warning" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            "critical" => Some(Severity::Critical),
            _ => None,
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seventeen_canonical_codes_all_valid() {
        assert_eq!(ErrorCode::CANONICAL.len(), 17);
        // The constants are the shared list (`mcp_fusion_rules`), in its order.
        let names: Vec<&str> = ErrorCode::CANONICAL.iter().map(ErrorCode::as_str).collect();
        assert_eq!(names, mcp_fusion_rules::codes::CANONICAL_CODES);
        for code in ErrorCode::CANONICAL {
            assert!(is_valid_code(code.as_str()), "{code}");
            assert_eq!(code.as_str().parse::<ErrorCode>().as_ref(), Ok(code));
        }
    }

    #[test]
    fn custom_codes_follow_the_pattern() {
        for ok in ["A", "X1", "PAYMENT_DECLINED", "A_", "Z9_9"] {
            assert!(ErrorCode::custom(ok).is_ok(), "{ok}");
        }
        for bad in ["", "a", "1A", "_A", "A-B", "A B", "NOT_FOUNDé", "Ab"] {
            assert!(ErrorCode::custom(bad).is_err(), "{bad}");
        }
    }
}

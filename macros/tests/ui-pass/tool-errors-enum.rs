#![deny(warnings, missing_docs, unused_qualifications)]
//! `#[derive(ToolErrors)]` with named, tuple and unit variants, and with `skip_display` next to a
//! hand-written `Display` and `Error`, compiled under
//! `deny(warnings, missing_docs, unused_qualifications)`.

use std::fmt;

use mcp_fusion::{ErrorCode, Severity, ToolError, ToolErrors};

/// What exporting invoices fails with.
#[derive(Debug, ToolErrors)]
pub enum ExportError {
    /// No invoice has this ID.
    #[tool_error(NOT_FOUND, "No invoice with ID {id}", recovery = "List invoices first, then retry with a real ID", details(requestedId = id))]
    NotFound {
        /// The ID asked for.
        id: String,
    },
    /// Too many exports at once.
    #[tool_error(RATE_LIMITED, "Slow down: {0} exports in {1:.1}s", recovery = "Export one at a time", retry_after = 30)]
    TooFast(u32, f64),
    /// The export is still being written.
    #[tool_error(code = "EXPORT_PENDING", "Export {id} is not ready yet", severity = warning, retry_after = wait)]
    Pending {
        /// The export.
        id: String,
        /// Seconds until it is ready.
        wait: u64,
    },
    /// The exporter is down; the message says all there is to do (`no_recovery`).
    #[tool_error(SERVER_BUSY, "The exporter is down {{for maintenance}}: tell the user", severity = critical, no_recovery)]
    Down,
}

/// What paying fails with, with its own `Display`.
#[derive(Debug, ToolErrors)]
#[tool_error(skip_display)]
pub enum PaymentError {
    /// The card was declined.
    #[tool_error(code = "PAYMENT_DECLINED", "The card was declined: {0}", recovery = "Ask the user for another card")]
    Declined(String),
}

impl fmt::Display for PaymentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PaymentError::Declined(reason) => write!(f, "declined ({reason})"),
        }
    }
}

impl std::error::Error for PaymentError {}

fn pay() -> Result<(), ToolError> {
    Err(PaymentError::Declined("expired".into()))?
}

fn main() {
    let err = ToolError::from(ExportError::NotFound { id: "inv_9".into() });
    assert_eq!(err.code(), &ErrorCode::NOT_FOUND);
    assert_eq!(err.message(), "No invoice with ID inv_9");

    let err = ToolError::from(ExportError::TooFast(12, 1.25));
    assert_eq!(err.message(), "Slow down: 12 exports in 1.2s");
    assert_eq!(err.get_retry_after(), Some(30));

    let err = ToolError::from(ExportError::Pending {
        id: "exp_1".into(),
        wait: 5,
    });
    assert_eq!(err.code().as_str(), "EXPORT_PENDING");
    assert_eq!(err.get_severity(), Severity::Warning);
    assert_eq!(err.get_retry_after(), Some(5));

    assert_eq!(
        ExportError::Down.to_string(),
        "The exporter is down {for maintenance}: tell the user"
    );

    let declined = PaymentError::Declined("expired".into());
    assert_eq!(declined.to_string(), "declined (expired)");
    let err = pay().unwrap_err();
    assert_eq!(err.message(), "The card was declined: expired");
    let _: &dyn std::error::Error = &declined;
}

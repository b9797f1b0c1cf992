//! `#[derive(ToolErrors)]`: codes, messages with `{field}` interpolation, hints, the envelope.

use mcp_fusion::{ErrorCode, Severity, ToolError, ToolErrors};

#[derive(Debug, ToolErrors)]
enum BillingError {
    #[tool_error(NOT_FOUND, "No invoice with ID {id}", recovery = "List invoices first, then retry with a real ID", details(requestedId = id))]
    InvoiceNotFound { id: String },
    #[tool_error(code = "PAYMENT_DECLINED", severity = critical, "The card was declined: {reason}")]
    Declined { reason: String },
    #[tool_error(RATE_LIMITED, "Slow down: {0} calls in {1:.1}s", retry_after = 30)]
    TooFast(u32, f64),
    #[tool_error(CONFLICT, "Invoice {id} is already {status}.", retry_after = wait, severity = warning)]
    Busy {
        id: String,
        status: &'static str,
        wait: u64,
    },
    #[tool_error(TIMEOUT, "{{braces}} stay")]
    Unit,
}

#[test]
fn codes_messages_and_hints() {
    let err = ToolError::from(BillingError::InvoiceNotFound { id: "inv_9".into() });
    assert_eq!(err.code(), &ErrorCode::NOT_FOUND);
    assert_eq!(err.message(), "No invoice with ID inv_9");
    assert_eq!(
        err.recovery(),
        Some("List invoices first, then retry with a real ID")
    );
    assert_eq!(
        err.detail_pairs().collect::<Vec<_>>(),
        [("requestedId", "inv_9")]
    );

    let err = ToolError::from(BillingError::Declined {
        reason: "expired".into(),
    });
    assert_eq!(err.code().as_str(), "PAYMENT_DECLINED");
    assert_eq!(err.severity_level(), Severity::Critical);

    let err = ToolError::from(BillingError::TooFast(12, 1.25));
    assert_eq!(err.message(), "Slow down: 12 calls in 1.2s");
    assert_eq!(err.retry_after_secs(), Some(30));

    let err = ToolError::from(BillingError::Busy {
        id: "inv_1".into(),
        status: "paid",
        wait: 5,
    });
    assert_eq!(err.retry_after_secs(), Some(5));
    assert!(!err.is_error());

    assert_eq!(BillingError::Unit.to_string(), "{braces} stay");
    assert_eq!(
        BillingError::Declined { reason: "x".into() }.to_string(),
        "The card was declined: x"
    );
}

fn handler(id: &str) -> Result<(), ToolError> {
    Err(BillingError::InvoiceNotFound { id: id.into() })?
}

#[test]
fn question_mark_sends_the_envelope_intact() {
    let err = handler("inv_404").unwrap_err();
    assert_eq!(
        err.render(),
        "<tool_error code=\"NOT_FOUND\" severity=\"error\">\n<message>No invoice with ID inv_404</message>\n<recovery>List invoices first, then retry with a real ID</recovery>\n<details>\n  <detail key=\"requestedId\">inv_404</detail>\n</details>\n</tool_error>"
    );
}

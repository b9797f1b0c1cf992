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

// ---- parity with thiserror: from, source, transparent, internal ----

use std::error::Error as _;

use mcp_fusion::rmcp::model::CallToolRequestParams;
use mcp_fusion::server::Server;
use mcp_fusion::tool;

#[derive(Debug, ToolErrors)]
enum LedgerError {
    #[tool_error(SERVER_BUSY, "The ledger is busy.", retry_after = 5)]
    Busy {
        #[tool_error(source)]
        cause: std::io::Error,
    },
    #[tool_error(internal, "the ledger failed: {0}")]
    Io(#[tool_error(from)] std::io::Error),
    #[tool_error(transparent)]
    Billing(#[tool_error(from)] BillingError),
    #[tool_error(CONFLICT, "Locked by {source}.")]
    Locked { source: std::fmt::Error },
}

fn io(text: &str) -> std::io::Error {
    std::io::Error::other(text.to_owned())
}

#[test]
fn from_fields_make_the_enum_and_are_its_source() {
    let err: LedgerError = io("disk gone").into();
    assert!(matches!(err, LedgerError::Io(_)));
    assert_eq!(err.to_string(), "the ledger failed: disk gone");
    assert_eq!(err.source().unwrap().to_string(), "disk gone");

    let busy = LedgerError::Busy {
        cause: io("locked"),
    };
    assert_eq!(busy.source().unwrap().to_string(), "locked");
    // A field named `source` is the source without an attribute, as in thiserror.
    let locked = LedgerError::Locked {
        source: std::fmt::Error,
    };
    assert!(locked.source().is_some());
}

#[test]
fn a_transparent_variant_is_its_fields_error() {
    let inner = || BillingError::InvoiceNotFound { id: "inv_9".into() };
    let err: LedgerError = inner().into();
    assert_eq!(err.to_string(), inner().to_string());
    assert!(err.source().is_none());
    assert_eq!(ToolError::from(err), ToolError::from(inner()));
}

#[test]
fn an_internal_variant_carries_its_cause_and_sends_none() {
    let err = ToolError::from(LedgerError::from(io("disk gone")));
    assert_eq!(err.code(), &ErrorCode::INTERNAL_ERROR);
    assert_eq!(
        err.unexpected_cause().map(ToString::to_string).as_deref(),
        Some("the ledger failed: disk gone")
    );
}

struct Ledger;

/// The ledger.
#[tool]
impl Ledger {
    /// Reads the ledger, which fails.
    async fn read(&self) -> Result<u32, LedgerError> {
        Err(io("disk gone"))?
    }
}

#[tokio::test(flavor = "current_thread")]
async fn an_internal_variant_is_answered_through_the_incident_path() {
    let server = Server::new("t", "1").tool(Ledger);
    let mut params = CallToolRequestParams::new("ledger");
    params.arguments = serde_json::json!({"action": "read"}).as_object().cloned();
    let result = server.call(params).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    let text = result.content[0].as_text().unwrap().text.clone();
    assert!(
        text.starts_with("<tool_error code=\"INTERNAL_ERROR\" severity=\"error\">\n<message>The action \"ledger.read\" failed unexpectedly.</message>"),
        "{text}"
    );
    assert!(text.contains("<detail key=\"incident\">"), "{text}");
    assert!(
        !text.contains("disk gone"),
        "the cause is never sent: {text}"
    );
}

//! `#[derive(ToolErrors)]`: codes, messages with `{field}` interpolation, hints, the envelope.

use mcp_fusion::{ErrorCode, Severity, ToolError, ToolErrors};

#[derive(Debug, ToolErrors)]
enum BillingError {
    #[tool_error(NOT_FOUND, "No invoice with ID {id}", recovery = "List invoices first, then retry with a real ID", details(requestedId = id))]
    InvoiceNotFound { id: String },
    #[tool_error(code = "PAYMENT_DECLINED", severity = critical, "The card was declined: {reason}", no_recovery)]
    Declined { reason: String },
    #[tool_error(
        RATE_LIMITED,
        "Slow down: {0} calls in {1:.1}s",
        retry_after = 30,
        no_recovery
    )]
    TooFast(u32, f64),
    #[tool_error(CONFLICT, "Invoice {id} is already {status}.", retry_after = wait, severity = warning)]
    Busy {
        id: String,
        status: &'static str,
        wait: u64,
    },
    #[tool_error(TIMEOUT, "{{braces}} stay", no_recovery)]
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
        err.get_details().collect::<Vec<_>>(),
        [("requestedId", "inv_9")]
    );

    let err = ToolError::from(BillingError::Declined {
        reason: "expired".into(),
    });
    assert_eq!(err.code().as_str(), "PAYMENT_DECLINED");
    assert_eq!(err.get_severity(), Severity::Critical);

    let err = ToolError::from(BillingError::TooFast(12, 1.25));
    assert_eq!(err.message(), "Slow down: 12 calls in 1.2s");
    assert_eq!(err.get_retry_after(), Some(30));

    let err = ToolError::from(BillingError::Busy {
        id: "inv_1".into(),
        status: "paid",
        wait: 5,
    });
    assert_eq!(err.get_retry_after(), Some(5));
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

use mcp_fusion::Server;
use mcp_fusion::rmcp::model::CallToolRequestParams;
use mcp_fusion::tool;

#[derive(Debug, ToolErrors)]
enum LedgerError {
    #[tool_error(SERVER_BUSY, "The ledger is busy.", retry_after = 5, no_recovery)]
    Busy {
        #[tool_error(source)]
        cause: std::io::Error,
    },
    #[tool_error(internal, "the ledger failed: {0}")]
    Io(#[tool_error(from)] std::io::Error),
    #[tool_error(transparent)]
    Billing(#[tool_error(from)] BillingError),
    #[tool_error(CONFLICT, "Locked by {source}.", no_recovery)]
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
    let server = Server::builder("t", "1").tool(Ledger).build().unwrap();
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

mod read_back {
    //! `#[tool_error(from_envelope)]`: what a server sends, a client reads back as the variant.

    use mcp_fusion::client::{FromEnvelope, parse_envelope};
    use mcp_fusion::{ToolError, ToolErrors};

    #[derive(Debug, PartialEq, ToolErrors)]
    #[tool_error(from_envelope)]
    enum Payments {
        #[tool_error(NOT_FOUND, "No card ending in {last4}.", details(cardLast4 = last4, attempt = attempt), no_recovery)]
        NoCard { last4: String, attempt: u32 },
        #[tool_error(CONFLICT, "Invoice {id} is already paid.", no_recovery)]
        AlreadyPaid { id: String },
        #[tool_error(
            CONFLICT,
            "Invoice {id} is {state} and cannot be charged.",
            no_recovery
        )]
        Blocked { id: String, state: String },
        #[tool_error(code = "PAYMENT_DECLINED", severity = critical, "Declined: {0} (code {1})", no_recovery)]
        Declined(String, u16),
        #[tool_error(RATE_LIMITED, "Too many attempts.", retry_after = 30, no_recovery)]
        TooFast,
        #[tool_error(transparent)]
        Ledger(Ledger),
        #[tool_error(internal, "the bank said {0}")]
        Bank(String),
    }

    #[derive(Debug, PartialEq, ToolErrors)]
    #[tool_error(from_envelope)]
    enum Ledger {
        #[tool_error(code = "LEDGER_CLOSED", "The ledger of {month:02} is closed.", details(month = month), no_recovery)]
        Closed { month: u8 },
    }

    /// The variant as a client sees it: rendered, sent as text, parsed, read back.
    fn round_trip(err: Payments) -> Option<Payments> {
        Payments::from_envelope(&parse_envelope(&ToolError::from(err).render()))
    }

    #[test]
    fn every_readable_variant_comes_back() {
        let variants = [
            Payments::NoCard {
                last4: "4242".into(),
                attempt: 3,
            },
            Payments::AlreadyPaid { id: "inv 1".into() },
            Payments::Blocked {
                id: "inv_2".into(),
                state: "void and locked".into(),
            },
            Payments::Declined("insufficient funds (code 51)".into(), 51),
            Payments::TooFast,
            Payments::Ledger(Ledger::Closed { month: 7 }),
        ];
        for variant in variants {
            let expected = format!("{variant:?}");
            assert_eq!(
                round_trip(variant).map(|v| format!("{v:?}")),
                Some(expected)
            );
        }
    }

    #[test]
    fn other_envelopes_are_not_the_enums() {
        // INTERNAL_ERROR carries no cause to read back.
        assert_eq!(round_trip(Payments::Bank("no".into())), None);
        let foreign = [
            ToolError::new(mcp_fusion::ErrorCode::NOT_FOUND, "No card ending in 1.")
                .detail("cardLast4", "1"),
            ToolError::new(mcp_fusion::ErrorCode::CONFLICT, "Something else entirely."),
            ToolError::new(mcp_fusion::ErrorCode::NOT_FOUND, "No card ending in 1.")
                .detail("cardLast4", "1")
                .detail("attempt", "many"),
        ];
        for err in foreign {
            assert_eq!(
                Payments::from_envelope(&parse_envelope(&err.render())),
                None,
                "{err:?}"
            );
        }
        assert_eq!(
            Payments::from_envelope(&parse_envelope("Internal Server Error")),
            None
        );
    }
}

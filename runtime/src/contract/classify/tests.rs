use crate::contract::{ChangeSeverity, Contract, ContractChange, Diff};
use crate::tool::{ActionDef, ToolDef};

use super::{Breaking, Safe};

/// `billing.create_invoice` needing these scopes (`tool_scopes` given on the tool).
fn billing(tool_scopes: &[&str], scopes: &[&str]) -> Contract {
    let tool = ToolDef::new("billing")
        .description("Invoices.")
        .scopes(tool_scopes.iter().copied())
        .action(
            ActionDef::without_arguments("create_invoice")
                .description("Creates an invoice.")
                .scopes(scopes.iter().copied()),
        )
        .build();
    Contract::of_tools([&tool])
}

fn changes(before: &Contract, after: &Contract) -> Vec<ContractChange> {
    Diff::between(before, after)
        .iter()
        .map(|(_, change)| change.clone())
        .collect()
}

fn scope_change(severity: ChangeSeverity, description: &str) -> ContractChange {
    ContractChange {
        severity,
        field: "(scopes)".to_owned(),
        description: description.to_owned(),
        before: None,
        after: None,
        action: Some("billing.create_invoice".to_owned()),
    }
}

#[test]
fn a_scope_added_is_breaking() {
    let diff = Diff::between(&billing(&[], &[]), &billing(&[], &["invoices:write"]));
    assert_eq!(diff.max_severity(), Some(Breaking));
    assert_eq!(
        diff.tool("billing"),
        [scope_change(
            Breaking,
            "\"billing.create_invoice\" now needs the scope \"invoices:write\"."
        )]
    );
    assert_eq!(
        diff.to_string(),
        "billing.create_invoice\n  BREAKING  (scopes): \"billing.create_invoice\" now needs the scope \"invoices:write\".\n"
    );
}

#[test]
fn a_scope_removed_is_safe() {
    let diff = Diff::between(&billing(&[], &["invoices:write"]), &billing(&[], &[]));
    assert_eq!(diff.max_severity(), Some(Safe));
    assert_eq!(
        diff.tool("billing"),
        [scope_change(
            Safe,
            "\"billing.create_invoice\" no longer needs the scope \"invoices:write\"."
        )]
    );
}

#[test]
fn one_change_per_scope() {
    let before = billing(&["invoices:read"], &["invoices:write"]);
    let after = billing(&[], &["invoices:admin", "invoices:audit", "invoices:write"]);
    assert_eq!(
        changes(&before, &after),
        [
            scope_change(
                Breaking,
                "\"billing.create_invoice\" now needs the scope \"invoices:admin\"."
            ),
            scope_change(
                Breaking,
                "\"billing.create_invoice\" now needs the scope \"invoices:audit\"."
            ),
            scope_change(
                Safe,
                "\"billing.create_invoice\" no longer needs the scope \"invoices:read\"."
            ),
        ]
    );
}

#[test]
fn unchanged_scopes_are_no_change() {
    let scoped = billing(&[], &["invoices:read", "invoices:write"]);
    assert!(changes(&scoped, &scoped).is_empty());
    // Where a scope is declared (the tool or the action) is not the action's contract.
    let moved = billing(&["invoices:read"], &["invoices:write", "invoices:read"]);
    assert_eq!(moved, scoped);
    assert!(changes(&scoped, &moved).is_empty());
}

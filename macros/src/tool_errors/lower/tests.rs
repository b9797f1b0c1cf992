use proc_macro2::TokenStream;
use quote::quote;

use super::*;

fn run(input: TokenStream) -> darling::Result<Model> {
    model(&syn::parse2(input).unwrap())
}

#[test]
fn errors_without_recovery_or_actions_are_unguided_unless_said_so() {
    let model = run(quote! {
        enum E {
            #[tool_error(CONFLICT, "Paid.")]
            Bare,
            #[tool_error(CONFLICT, "Paid.", severity = critical)]
            Critical,
            #[tool_error(CONFLICT, "Paid.", severity = warning)]
            Warning,
            #[tool_error(CONFLICT, "Paid.", recovery = "Check first.")]
            Recovered,
            #[tool_error(CONFLICT, "Paid.", actions(Billing::get))]
            Pointed,
            #[tool_error(CONFLICT, "Paid: tell the user.", no_recovery)]
            Deliberate,
            #[tool_error(internal, "ledger: {0}")]
            Internal(String),
            #[tool_error(transparent)]
            Inner(Other),
        }
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let unguided: Vec<String> = model
        .variants
        .iter()
        .filter(|v| v.unguided)
        .map(|v| v.ident.to_string())
        .collect();
    assert_eq!(unguided, ["Bare", "Critical"]);
    // Said with a recovery, or on a variant that takes nothing else: one error each.
    let errors = run(quote! {
        enum E {
            #[tool_error(CONFLICT, "Paid.", recovery = "Check first.", actions(Billing::get), no_recovery)]
            Both,
            #[tool_error(internal, "ledger: {0}", no_recovery)]
            Internal(String),
        }
    })
    .err()
    .map(|e| e.len());
    assert_eq!(errors, Some(2));
}

#[test]
fn a_valid_enum_becomes_its_model() {
    let model = run(quote! {
        enum E {
            #[tool_error(NOT_FOUND, "No {id}", recovery = "List {id}", actions(Billing::list), details(requestedId = id), severity = critical, retry_after = wait)]
            Missing { id: String, wait: u64, unused: u8 },
            #[tool_error(code = "CUSTOM_CODE", "Tuple {0}")]
            Tuple(String),
        }
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let missing = &model.variants[0];
    let bound: Vec<String> = missing
        .bound
        .iter()
        .map(|(_, local)| local.to_string())
        .collect();
    assert_eq!(bound, ["__field_id", "__field_wait"]);
    assert_eq!(missing.message.as_ref().unwrap().literal.value(), "No {id}");
    assert_eq!(missing.details.len(), 1);
    assert!(missing.severity.is_some() && missing.retry_after.is_some());
    assert_eq!(
        model.variants[1].message.as_ref().unwrap().literal.value(),
        "Tuple {__field_0}"
    );
}

#[test]
fn every_mistake_is_reported() {
    let err = run(quote! {
        enum E {
            #[tool_error(NOT_FUOND, "No {idd}", severity = fatal, details(k = nope))]
            A { id: String },
            #[tool_error(code = "bad-code")]
            B,
            C,
        }
    })
    .err()
    .expect("mistakes");
    // unknown code, unknown field, unknown severity, unknown detail field, invalid custom
    // code, missing message, missing attribute
    assert_eq!(err.len(), 7, "{err}");
    let text = err.to_string();
    assert!(text.contains("NOT_FOUND"), "{text}");
    assert!(text.contains("critical"), "{text}");
}

#[test]
fn structs_are_refused() {
    assert!(
        run(quote!(
            struct S;
        ))
        .is_err()
    );
}

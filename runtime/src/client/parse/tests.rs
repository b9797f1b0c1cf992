use super::*;
use crate::{ErrorCode, ToolError};

fn not_envelope(text: &str) {
    let parsed = parse_envelope(text);
    assert_eq!(
        parsed,
        blank(ParsedKind::NotAnEnvelope, "UNKNOWN", text.to_owned()),
        "{text:?}"
    );
}

fn tool(body: &str) -> ParsedError {
    let parsed = parse_envelope(&format!("<tool_error code=\"X\">{body}</tool_error>"));
    assert_eq!(parsed.kind, ParsedKind::ToolError, "{body:?}");
    parsed
}

#[test]
fn children_in_any_order_first_wins_unknown_ignored() {
    let parsed = parse_envelope(
        "<tool_error extra=\"1\" severity=\"critical\" code=\"C\"><retry_after>7 seconds</retry_after>\
         <unknown><message>no</message></unknown><details><detail key=\"k\">v</detail><other/></details>\
         <recovery>r1</recovery><message>m1</message><message>m2</message><recovery>r2</recovery>\
         <available_actions><action>a</action> <x/> <action>b</action></available_actions>\
         <available_actions><action>c</action></available_actions><details><detail>no key</detail></details>\
         <retry_after>1 second</retry_after><field name=\"f\">t</field></tool_error>",
    );
    let expected = ParsedError {
        severity: Severity::Critical,
        recovery: Some("r1".into()),
        actions: vec!["a".into(), "b".into()],
        details: vec![("k".into(), "v".into())],
        retry_after: Some(7),
        ..blank(ParsedKind::ToolError, "C", "m1".into())
    };
    assert_eq!(parsed, expected);
}

#[test]
fn severity_missing_or_unknown_is_error() {
    assert_eq!(tool("<message/>").severity, Severity::Error);
    assert_eq!(tool("<message/>").message, "");
    let parsed =
        parse_envelope("<tool_error code=\"X\" severity=\"Warning\"><message/></tool_error>");
    assert_eq!(parsed.severity, Severity::Error);
    let parsed =
        parse_envelope("<tool_error code=\"X\" severity=\"warning\"><message/></tool_error>");
    assert_eq!(parsed.severity, Severity::Warning);
}

#[test]
fn empty_recovery_element_is_an_empty_recovery() {
    assert_eq!(tool("<message/><recovery/>").recovery.as_deref(), Some(""));
    assert_eq!(tool("<message/>").recovery, None);
}

#[test]
fn text_is_decoded_and_never_trimmed() {
    let parsed = tool(
        "<message> a&#13;\r\nb\rc <![CDATA[<b>]]>&#x1F600;&amp;amp;<!--note-->d </message>\
         <recovery>\n\tr\n</recovery><details><detail key=\" k&#9;\"> v </detail></details>",
    );
    assert_eq!(parsed.message, " a\r\nb\nc <b>\u{1F600}&amp;d ");
    assert_eq!(parsed.recovery.as_deref(), Some("\n\tr\n"));
    assert_eq!(parsed.details, [(" k\t".to_owned(), " v ".to_owned())]);
}

#[test]
fn comma_joined_actions_are_split_and_trimmed() {
    let parsed =
        tool("<message/><available_actions> list,\r\n\tcreate ,, ,delete\t,</available_actions>");
    assert_eq!(parsed.actions, ["list", "create", "delete"]);
    assert!(
        tool("<message/><available_actions> </available_actions>")
            .actions
            .is_empty()
    );
    // Entries of an `<action>` list are taken as written.
    let parsed = tool("<message/><available_actions>x,y<action> a </action></available_actions>");
    assert_eq!(parsed.actions, [" a "]);
}

#[test]
fn retry_after_variants() {
    let secs = |text: &str| retry_after(text);
    assert_eq!(secs("1 second"), Some(1));
    assert_eq!(secs("30 seconds"), Some(30));
    assert_eq!(secs("2 second"), Some(2));
    assert_eq!(secs("2.5 seconds"), Some(3));
    assert_eq!(secs("0.001 seconds"), Some(1));
    assert_eq!(secs("4.000 seconds"), Some(4));
    assert_eq!(secs("0 seconds"), None);
    assert_eq!(secs("0.0 seconds"), None);
    assert_eq!(secs("18446744073709551615 seconds"), Some(u64::MAX));
    assert_eq!(secs("18446744073709551615.5 seconds"), Some(u64::MAX));
    assert_eq!(secs("99999999999999999999999999 seconds"), Some(u64::MAX));
    for garbage in [
        "",
        "5",
        "seconds",
        " seconds",
        "-1 seconds",
        "+1 seconds",
        "1e3 seconds",
        ".5 seconds",
        "5. seconds",
        "1.2.3 seconds",
        " 5 seconds",
        "5 seconds ",
        "5  seconds",
        "5 Seconds",
        "5 minutes",
        "５ seconds",
        "soon",
    ] {
        assert_eq!(secs(garbage), None, "{garbage:?}");
    }
    assert_eq!(
        tool("<message/><retry_after>2.5 seconds</retry_after>").retry_after,
        Some(3)
    );
    assert_eq!(
        tool("<message/><retry_after>later</retry_after>").retry_after,
        None
    );
}

#[test]
fn index_sets_in_field_names() {
    let set =
        |name: &str| index_set(name, budget::INDICES).map(|set| set.iter().collect::<Vec<_>>());
    assert_eq!(
        set("lines[0-4,7,9].quantity"),
        Some(vec![0, 1, 2, 3, 4, 7, 9])
    );
    assert_eq!(set("matrix[1][0,2]"), Some(vec![0, 2]));
    assert_eq!(
        set("[\"line items\"][0-2][\"unit price\"]"),
        Some(vec![0, 1, 2])
    );
    // A key in brackets may hold anything, quotes and brackets included.
    assert_eq!(set("[\"a,b-c\"][3,4]"), Some(vec![3, 4]));
    assert_eq!(set("[\"x\\\"]1,2\"][3,4]"), Some(vec![3, 4]));
    // Written in any order, overlapping: the same set.
    assert_eq!(set("a[9,0-3,2-5,6]"), Some(vec![0, 1, 2, 3, 4, 5, 6, 9]));
    // Not a set: one index, none, two sets, a backwards run, an empty part, too many.
    for name in [
        "lines[3].quantity",
        "(root)",
        "(more)",
        "a[0,1][2,3]",
        "a[9-1]",
        "a[1,,2]",
        "a[1-]",
        "a[0-18446744073709551615]",
        "a[0,1",
    ] {
        assert_eq!(set(name), None, "{name}");
    }
}

/// A set is kept as the ranges it was written as, merged: never one number per index.
#[test]
fn index_sets_are_ranges() {
    let set = index_set("a[5-1048575,0-4,7]", budget::INDICES).expect("a set");
    assert_eq!(set.ranges().collect::<Vec<_>>(), [0..=1_048_575]);
    assert_eq!(set.len(), 1 << 20);
    assert!(set.contains(1_048_575) && !set.contains(1_048_576));
    let set = index_set("a[0-9,20-29,11]", budget::INDICES).expect("a set");
    assert_eq!(set.ranges().collect::<Vec<_>>(), [0..=9, 11..=11, 20..=29]);
    // One past the budget is no set.
    assert_eq!(index_set("a[0-1048576]", budget::INDICES), None);
    assert_eq!(index_set("a[0-9]", 9), None);
    assert!(index_set("a[0-9]", 10).is_some());
}

/// The sets of one envelope share one budget of 2^20 indices: a set past what is left of it
/// is read as none, and later ones that fit still count.
#[test]
fn the_sets_of_an_envelope_share_one_budget() {
    let mut text = String::from("<validation_error action=\"a.b\">");
    for name in ["a[0-1048574]", "b[0-1]", "c[0,1]", "d[0-1]", "e[3-4]"] {
        text.push_str(&format!("<field name=\"{name}\">x</field>"));
    }
    text.push_str("</validation_error>");
    let parsed = parse_envelope(&text);
    let lens: Vec<u64> = parsed.fields.iter().map(|f| f.elements.len()).collect();
    assert_eq!(lens, [1_048_575, 0, 0, 0, 0]);
    let mut text = text.replace("a[0-1048574]", "a[0-1048573]");
    assert_eq!(
        parse_envelope(&text)
            .fields
            .iter()
            .map(|f| f.elements.len())
            .collect::<Vec<_>>(),
        [1_048_574, 2, 0, 0, 0]
    );
    // Each field's paths are then the name alone.
    text = text.replace("a[0-1048573]", "a[0-1048575]");
    let parsed = parse_envelope(&text);
    assert_eq!(parsed.fields[1].paths().collect::<Vec<_>>(), ["b[0-1]"]);
    assert_eq!(
        parsed.fields[0].paths().take(2).collect::<Vec<_>>(),
        ["a[0]", "a[1]"]
    );
}

#[test]
fn over_budget_texts_are_not_envelopes() {
    let fields = |n: usize| {
        let mut text = String::from("<validation_error action=\"a.b\">");
        for _ in 0..n {
            text.push_str("<field name=\"f\">t</field>");
        }
        text + "</validation_error>"
    };
    assert_eq!(
        parse_envelope(&fields(budget::FIELDS)).fields.len(),
        budget::FIELDS
    );
    not_envelope(&fields(budget::FIELDS + 1));
    // Nodes: comments are nodes too.
    let nodes = format!(
        "<tool_error code=\"X\"><message>m</message>{}</tool_error>",
        "<!---->".repeat(budget::NODES as usize)
    );
    not_envelope(&nodes);
    let long = format!(
        "<tool_error code=\"X\"><message>{}</message></tool_error>",
        "m".repeat(budget::BYTES)
    );
    not_envelope(&long);
    assert_eq!(
        tool(&format!("<message>{}</message>", "m".repeat(1000)))
            .message
            .len(),
        1000
    );
}

#[test]
fn validation_error_fields_and_action() {
    let parsed = parse_envelope(
        "<validation_error action=\"users/create/v2\" severity=\"warning\"><message>ignored</message>\
         <field name=\"a\">one</field><recovery>fix</recovery><field name=\"(more)\">1 more problem</field>\
         <contract_awareness changes=\"3\"><change field=\"x\"><description>d</description></change></contract_awareness>\
         </validation_error>",
    );
    let field = |path: &str, text: &str| ParsedField {
        path: path.into(),
        elements: IndexSet::new(),
        problem: None,
        text: text.into(),
    };
    let expected = ParsedError {
        recovery: Some("fix".into()),
        action: Some("users.create/v2".into()),
        fields: vec![field("a", "one"), field("(more)", "1 more problem")],
        more: Some(1),
        contract_changes: Some(3),
        ..blank(
            ParsedKind::ValidationError,
            "VALIDATION_ERROR",
            String::new(),
        )
    };
    assert_eq!(parsed, expected);
    assert_eq!(
        parse_envelope("<validation_error action=\"billing.x\"/>")
            .action
            .as_deref(),
        Some("billing.x")
    );
}

#[test]
fn texts_that_are_not_envelopes() {
    for text in [
        "",
        "Internal Server Error",
        "<tool_error code=\"X\"><message>cut",
        "<tool_error code=\"X\"><message>a\0b</message></tool_error>",
        "<tool_error code=\"X\"><message>\u{FFFF}</message></tool_error>",
        "<tool_error code=\"X\"><message>&bogus;</message></tool_error>",
        "<tool_error><message>no code</message></tool_error>",
        "<tool_error code=\"X\"><recovery>no message</recovery></tool_error>",
        "<tool_error code=\"X\"><message><b>x</b></message></tool_error>",
        "<tool_error code=\"X\"><message/><recovery>a<i/></recovery></tool_error>",
        "<tool_error code=\"X\"><message/><available_actions><action><b/></action></available_actions></tool_error>",
        "<tool_error code=\"X\"><message/><details><detail>v</detail></details></tool_error>",
        "<tool_error code=\"X\"><message/><details><detail key=\"k\"><b/></detail></details></tool_error>",
        "<tool_error code=\"X\"><message/><retry_after><n>5</n> seconds</retry_after></tool_error>",
        "<tool_error x:code=\"X\" xmlns:x=\"urn:x\"><message/></tool_error>",
        "<tool_error code=\"X\"><x:message xmlns:x=\"urn:x\"/></tool_error>",
        "<tool_error xmlns=\"urn:x\" code=\"X\"><message/></tool_error>",
        "<validation_error action=\"a.b\"><field>no name</field></validation_error>",
        "<validation_error action=\"a.b\"><field name=\"f\">x<b/></field></validation_error>",
        "<validation_error><field name=\"f\">no action</field></validation_error>",
        "<error><message>nope</message></error>",
        "<!DOCTYPE tool_error><tool_error code=\"X\"><message/></tool_error>",
        "<!DOCTYPE t [<!ENTITY e \"x\">]><tool_error code=\"X\"><message>&e;</message></tool_error>",
        "<tool_error code=\"X\"><message/></tool_error><tool_error code=\"Y\"><message/></tool_error>",
        "<tool_error code=\"X\" code=\"Y\"><message/></tool_error>",
    ] {
        not_envelope(text);
    }
}

#[test]
fn prolog_and_whitespace_around_the_root_are_fine() {
    let parsed = parse_envelope(
        "<?xml version=\"1.0\"?>\n<!-- c --><tool_error code=\"X\"><message>m</message></tool_error>\n",
    );
    assert_eq!(parsed, blank(ParsedKind::ToolError, "X", "m".into()));
}

#[test]
fn every_truncation_is_not_an_envelope() {
    let text = ToolError::new(ErrorCode::CONFLICT, "Paid \u{1F600}.")
        .suggest("r")
        .actions(["a.b"])
        .detail("k", "v")
        .retry_after(5)
        .render();
    for (cut, _) in text.char_indices().skip(1) {
        not_envelope(&text[..cut]);
    }
}

#[test]
fn deep_nesting_does_not_overflow() {
    let depth = 100_000;
    let text = format!("{}{}", "<a>".repeat(depth), "</a>".repeat(depth));
    assert_eq!(parse_envelope(&text).code, "UNKNOWN");
    let text = format!(
        "<tool_error code=\"X\"><message/>{}{}</tool_error>",
        "<a>".repeat(depth),
        "</a>".repeat(depth)
    );
    assert_eq!(parse_envelope(&text).kind, ParsedKind::ToolError);
}

#[test]
fn rendered_errors_round_trip() {
    let hostile =
        "a]]>b ]]]> </message><recovery>x &amp; \r\n\r\t\u{1F600} \0 \u{B}\u{FFFE}\u{FFFF} \"'<>";
    let errors = [
        ToolError::new(ErrorCode::NOT_FOUND, ""),
        ToolError::new(ErrorCode::RATE_LIMITED, "slow")
            .retry_after(1)
            .warning(),
        ToolError::new(ErrorCode::SERVER_BUSY, "busy")
            .retry_after(u32::MAX)
            .critical(),
        ToolError::new(
            ErrorCode::custom("HOSTILE_1").unwrap_or(ErrorCode::CONFLICT),
            hostile,
        )
        .suggest(hostile)
        .actions([hostile, "billing.list", " spaced , comma "])
        .detail(hostile, hostile)
        .detail("", "")
        .detail("k", "\r")
        .retry_after(2.5),
    ];
    for err in &errors {
        assert_eq!(
            parse_envelope(&err.render()),
            ParsedError::from(err),
            "{}",
            err.render()
        );
    }
}

proptest::proptest! {
    #[test]
    fn any_text_parses_without_panic(text in "(?s).*") {
        let _ = parse_envelope(&text);
    }

    #[test]
    fn arbitrary_errors_round_trip(
        message in "(?s).*",
        recovery in "(?s).*",
        actions in proptest::collection::vec("(?s).*", 0..4),
        details in proptest::collection::vec(("(?s).*", "(?s).*"), 0..4),
        retry in proptest::option::of(proptest::num::u32::ANY),
    ) {
        let mut err = ToolError::new(ErrorCode::CONFLICT, message).suggest(recovery).actions(actions).details(details);
        if let Some(secs) = retry {
            err = err.retry_after(secs);
        }
        proptest::prop_assert_eq!(parse_envelope(&err.render()), ParsedError::from(&err));
    }
}

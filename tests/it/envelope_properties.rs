//! Property tests over hostile text: every envelope stays well-formed XML and reads back as the
//! strings that went in (ERRORS.md §2, §6), whatever those strings hold.

use mcp_fusion::client::{ParsedError, ParsedKind, parse_envelope};
use mcp_fusion::contract::{ChangeSeverity, ContractChange, inject_contract_awareness};
use mcp_fusion::router::{ActionRouter, RouteError};
use mcp_fusion::validate::{FieldPath, PathSegment, Problem, ProblemKind, Schema, ValidationError};
use mcp_fusion::{ErrorCode, Severity, ToolError};
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use roxmltree::{Document, Node};
use serde_json::{Map, Value, json};

/// Pieces that attack the envelope: markup, entities, CDATA ends, controls, non-characters.
const FRAGMENTS: &[&str] = &[
    "<",
    ">",
    "&",
    "\"",
    "'",
    "]]>",
    "]]",
    "]",
    "</message><recovery>x</recovery>",
    "</tool_error>",
    "</validation_error>",
    "<![CDATA[",
    "<!--",
    "-->",
    "&amp;",
    "&#0;",
    "&lt;",
    "\r",
    "\n",
    "\t",
    "\r\n",
    "\0",
    "\u{B}",
    "\u{C}",
    "\u{1F}",
    "\u{7F}",
    "\u{FFFE}",
    "\u{FFFF}",
    "\u{FFFD}",
    "\u{FEFF}",
    "\u{1F600}",
    "請",
    "é",
    " ",
    "/",
    "~1",
    "billing.get_invoice",
    "name",
    "x",
];

fn fragment() -> impl Strategy<Value = String> + Clone {
    prop_oneof![
        6 => select(FRAGMENTS).prop_map(str::to_owned),
        2 => (0u8..0x20).prop_map(|b| char::from(b).to_string()),
        2 => any::<char>().prop_map(String::from),
        1 => any::<String>(),
    ]
}

/// A string of up to `max` hostile fragments.
fn hostile_upto(max: usize) -> impl Strategy<Value = String> + Clone {
    vec(fragment(), 0..=max).prop_map(|parts| parts.concat())
}

fn hostile() -> impl Strategy<Value = String> + Clone {
    hostile_upto(12)
}

fn code() -> impl Strategy<Value = ErrorCode> {
    prop_oneof![
        select(ErrorCode::CANONICAL),
        "[A-Z][A-Z0-9_]{0,12}"
            .prop_map(|c| ErrorCode::custom(c).expect("matches the code pattern")),
    ]
}

fn severity() -> impl Strategy<Value = Severity> {
    prop_oneof![
        Just(Severity::Warning),
        Just(Severity::Error),
        Just(Severity::Critical)
    ]
}

fn tool_error_of(text: impl Strategy<Value = String> + Clone) -> impl Strategy<Value = ToolError> {
    let details = vec((text.clone(), text.clone()), 0..4);
    let texts = (text.clone(), text.clone(), vec(text, 0..4), details);
    // Around the bounds: negative, zero, fractions, and past u32::MAX.
    let retry = option::of(-2.0f64..5e9);
    (code(), severity(), texts, retry).prop_map(
        |(code, severity, (message, recovery, actions, details), retry)| {
            let err = ToolError::new(code, message)
                .severity(severity)
                .suggest(recovery)
                .actions(actions)
                .details(details);
            match retry {
                Some(secs) => err.retry_after(secs),
                None => err,
            }
        },
    )
}

fn tool_error() -> impl Strategy<Value = ToolError> {
    tool_error_of(hostile())
}

/// What a conforming XML parser gives back for `s`: forbidden characters become U+FFFD.
fn replaced(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{0}'..='\u{8}'
            | '\u{B}'
            | '\u{C}'
            | '\u{E}'..='\u{1F}'
            | '\u{FFFE}'
            | '\u{FFFF}' => '\u{FFFD}',
            c => c,
        })
        .collect()
}

/// A sent string as §5 cuts it: 47 characters and `...` when longer than 50.
fn cut(s: &str) -> String {
    if s.chars().count() > 50 {
        s.chars().take(47).chain("...".chars()).collect()
    } else {
        s.to_owned()
    }
}

fn text_of(node: Node<'_, '_>) -> String {
    node.children()
        .filter(Node::is_text)
        .filter_map(|n| n.text())
        .collect()
}

fn child<'a, 'i>(node: Node<'a, 'i>, name: &str) -> Option<Node<'a, 'i>> {
    node.children().find(|n| n.has_tag_name(name))
}

fn elements<'a, 'i>(node: Node<'a, 'i>, name: &'static str) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(move |n| n.has_tag_name(name))
}

fn attr(node: Node<'_, '_>, name: &str) -> String {
    node.attribute(name)
        .unwrap_or_else(|| panic!("no {name} attribute"))
        .to_owned()
}

fn config(cases: u32) -> ProptestConfig {
    // No regression files: this suite must not write next to the sources.
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

const ACTIONS: [&str; 2] = ["list_invoices", "get_invoice"];

/// Declares `name`, `kind` and `code`, each with a keyword hostile values can fail.
fn hostile_schema(options: &[String]) -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 3},
            "kind": {"enum": options},
            "code": {"type": "string", "pattern": "^(?:[a-z]|&|<|\\]\\]>)*$"},
        },
        "additionalProperties": false,
    })
}

fn qualifies(change: &ContractChange, action: &str) -> bool {
    matches!(
        change.severity,
        ChangeSeverity::Breaking | ChangeSeverity::Risky
    ) && change.action.as_deref().is_none_or(|a| a == action)
}

const CHANGE_SEVERITIES: &[ChangeSeverity] = &[
    ChangeSeverity::Breaking,
    ChangeSeverity::Risky,
    ChangeSeverity::Safe,
    ChangeSeverity::Cosmetic,
];

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn tool_errors_are_well_formed_and_round_trip(err in tool_error()) {
        let text = err.render();
        let doc = Document::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        prop_assert_eq!(doc.root_element().tag_name().name(), "tool_error");
        prop_assert_eq!(parse_envelope(&text), ParsedError::from(&err));
    }

    #[test]
    fn tool_error_texts_read_back_with_forbidden_characters_replaced(err in tool_error()) {
        let text = err.render();
        let doc = Document::parse(&text).expect("well-formed");
        let root = doc.root_element();
        prop_assert_eq!(attr(root, "code"), err.code().as_str());
        prop_assert_eq!(attr(root, "severity"), err.get_severity().as_str());
        prop_assert_eq!(text_of(child(root, "message").expect("a message")), replaced(err.message()));
        prop_assert_eq!(child(root, "recovery").map(text_of), err.recovery().map(replaced));
        let actions: Vec<String> = child(root, "available_actions")
            .into_iter()
            .flat_map(|list| elements(list, "action"))
            .map(text_of)
            .collect();
        prop_assert_eq!(actions, err.available_actions().map(replaced).collect::<Vec<_>>());
        let details: Vec<(String, String)> = child(root, "details")
            .into_iter()
            .flat_map(|list| elements(list, "detail"))
            .map(|d| (attr(d, "key"), text_of(d)))
            .collect();
        let expected: Vec<(String, String)> = err.get_details().map(|(k, v)| (replaced(k), replaced(v))).collect();
        prop_assert_eq!(details, expected);
    }

    #[test]
    fn validation_errors_on_hostile_arguments_are_well_formed(
        options in vec(hostile(), 1..4),
        name in hostile(),
        kind in hostile(),
        code in hostile(),
        extra in vec((hostile_upto(4), hostile_upto(4)), 0..30),
    ) {
        let schema = Schema::new(&hostile_schema(&options)).expect("a valid schema");
        let mut args: Map<String, Value> = [("name", name), ("kind", kind), ("code", code)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), Value::String(v)))
            .collect();
        for (key, value) in extra {
            args.entry(key).or_insert(Value::String(value));
        }
        let args = Value::Object(args);
        let Err(err) = schema.validate("billing.tag", &args) else {
            return Ok(());
        };
        let text = err.render();
        let doc = Document::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        let root = doc.root_element();
        prop_assert_eq!(root.tag_name().name(), "validation_error");

        // The error keeps the first 20 of every problem and counts the rest (none is in an
        // array, so each is a field of its own).
        let problems = schema.problems(&args);
        prop_assert_eq!(err.problems().collect::<Vec<_>>(), problems.iter().take(20).collect::<Vec<_>>());
        prop_assert_eq!(err.more(), problems.len().saturating_sub(20));
        let read: Vec<(String, String)> = elements(root, "field").map(|f| (attr(f, "name"), text_of(f))).collect();
        let mut expected: Vec<(String, String)> =
            problems.iter().take(20).map(|p| (replaced(&p.path().to_string()), replaced(&p.line()))).collect();
        if let Some(more) = problems.len().checked_sub(20).filter(|&k| k > 0) {
            let noun = if more == 1 { "problem" } else { "problems" };
            expected.push(("(more)".into(), format!("{more} more {noun} not shown. Fix the fields above first.")));
        }
        prop_assert_eq!(&read, &expected);
        let reparsed: Vec<(String, String)> =
            parse_envelope(&text).fields.into_iter().map(|f| (f.path, f.text)).collect();
        prop_assert_eq!(reparsed, read);

        // Every undeclared key, however hostile, is found and reported at its own path.
        let mut unrecognized: Vec<&str> = problems
            .iter()
            .filter(|p| matches!(p.kind(), ProblemKind::UnrecognizedField { .. }))
            .map(|p| match p.path().segments() {
                [PathSegment::Key(key)] => key.as_str(),
                other => panic!("unexpected path {other:?}"),
            })
            .collect();
        let mut undeclared: Vec<&str> =
            args.as_object().expect("an object").keys().map(String::as_str).filter(|k| !["name", "kind", "code"].contains(k)).collect();
        unrecognized.sort_unstable();
        undeclared.sort_unstable();
        prop_assert_eq!(unrecognized, undeclared);
    }

    #[test]
    fn unknown_action_echoes_the_value(value in hostile()) {
        let router = ActionRouter::new("billing", ACTIONS);
        match router.route(Some(&json!({"action": value}))) {
            Err(route @ RouteError::UnknownAction { .. }) => {
                let text = router.error(&route).render();
                // The prepared UNKNOWN_ACTION the server sends is the same text, byte for byte.
                prop_assert_eq!(&router.render_error(&route), &text);
                let hostile_tool = ActionRouter::new(value.as_str(), ACTIONS);
                let suggested = RouteError::UnknownAction { value: value.clone(), closest: Some(1), fields: vec![] };
                prop_assert_eq!(hostile_tool.render_error(&suggested), hostile_tool.error(&suggested).render());
                let doc = Document::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
                let root = doc.root_element();
                prop_assert_eq!(attr(root, "code"), "UNKNOWN_ACTION");
                // Cut as a sent string, then written as the inside of a JSON string (§4).
                let quoted = serde_json::to_string(&cut(&value)).expect("a string");
                let message = format!("The action {quoted} does not exist on tool \"billing\".");
                prop_assert_eq!(text_of(child(root, "message").expect("a message")), replaced(&message));
                let actions: Vec<String> = elements(child(root, "available_actions").expect("actions"), "action").map(text_of).collect();
                prop_assert_eq!(actions, ["billing.list_invoices", "billing.get_invoice"]);
            }
            Err(RouteError::Missing { .. }) => prop_assert!(value.is_empty()),
            Err(other) => prop_assert!(false, "unexpected {other:?}"),
            Ok(i) => {
                let qualified = ["billing.", ACTIONS[i]].concat();
                prop_assert!(value == ACTIONS[i] || value == qualified);
            }
        }
    }

    #[test]
    fn parse_never_panics(text in prop_oneof![
        any::<String>(),
        hostile(),
        // Raw, unescaped hostile text inside envelope markup reaches the deeper paths of parse.
        hostile().prop_map(|h| format!("<tool_error code=\"X\"><message>{h}</message><details><detail key=\"{h}\">{h}</detail></details></tool_error>")),
        hostile().prop_map(|h| format!("<validation_error action=\"a/b\"><field name=\"{h}\">{h}</field></validation_error>")),
    ]) {
        let parsed = parse_envelope(&text);
        if parsed.kind == ParsedKind::NotAnEnvelope {
            prop_assert_eq!(parsed.code, "UNKNOWN");
            prop_assert_eq!(parsed.message, text);
        }
    }

    #[test]
    fn contract_awareness_stays_well_formed(
        action in hostile(),
        raw in vec((select(CHANGE_SEVERITIES), hostile(), hostile(), option::of(hostile()), option::of(hostile()), 0u8..3), 0..8),
        max in 0usize..7,
    ) {
        let problem = Problem::custom(FieldPath::root().key(action.clone()), action.clone(), Some(&json!(action)), Some(&action));
        let envelope = ValidationError::new(action.clone(), vec![problem]).render();
        let changes: Vec<ContractChange> = raw
            .into_iter()
            .map(|(severity, field, description, before, after, owner)| {
                let mut change = ContractChange::new(severity, field, description);
                change.before = before;
                change.after = after;
                change.action = match owner {
                    0 => None,
                    1 => Some(action.clone()),
                    _ => Some(format!("{action}.other")),
                };
                change
            })
            .collect();
        let text = inject_contract_awareness(&envelope, &action, &changes, max);
        let doc = Document::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        let root = doc.root_element();
        prop_assert_eq!(root.tag_name().name(), "validation_error");
        // The block leaves the rest as it was (ERRORS.md §6); a client learns its count.
        let parsed = parse_envelope(&text);
        let mut without = parsed.clone();
        without.contract_changes = None;
        prop_assert_eq!(without, parse_envelope(&envelope));

        let mut qualifying: Vec<&ContractChange> = changes.iter().filter(|c| qualifies(c, &action)).collect();
        qualifying.sort_by(|a, b| a.severity.cmp(&b.severity).then_with(|| a.field.cmp(&b.field)));
        let counted = (!qualifying.is_empty()).then_some(qualifying.len() as u64);
        prop_assert_eq!(parsed.contract_changes, counted);
        let Some(block) = child(root, "contract_awareness") else {
            prop_assert!(qualifying.is_empty());
            prop_assert_eq!(text, envelope);
            return Ok(());
        };
        prop_assert_eq!(attr(block, "action"), replaced(&action));
        prop_assert_eq!(attr(block, "changes"), qualifying.len().to_string());
        prop_assert_eq!(attr(block, "max_severity"), qualifying[0].severity.as_str());
        let shown: Vec<Node<'_, '_>> = elements(block, "change").collect();
        prop_assert_eq!(shown.len(), qualifying.len().min(max));
        for (node, change) in shown.into_iter().zip(qualifying) {
            prop_assert_eq!(attr(node, "severity"), change.severity.as_str());
            prop_assert_eq!(attr(node, "field"), replaced(&change.field));
            prop_assert_eq!(child(node, "description").map(text_of), Some(replaced(&change.description)));
            let known = |v: &Option<String>| v.as_deref().filter(|v| !v.is_empty()).map(replaced);
            prop_assert_eq!(child(node, "before").map(text_of), known(&change.before));
            prop_assert_eq!(child(node, "after").map(text_of), known(&change.after));
        }
    }
}

proptest! {
    // Quadratic in the envelope's length: fewer, shorter cases.
    #![proptest_config(config(32))]

    #[test]
    fn no_truncation_is_an_envelope(err in tool_error_of(hostile_upto(4))) {
        let text = err.render();
        for (end, _) in text.char_indices() {
            let parsed = parse_envelope(&text[..end]);
            prop_assert_eq!(parsed.kind, ParsedKind::NotAnEnvelope);
            prop_assert_eq!(parsed.message, &text[..end]);
        }
    }
}

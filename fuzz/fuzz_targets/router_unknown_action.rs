//! Arbitrary tools, action lists, their schemas, discriminator values and other fields sent
//! through the router (ERRORS.md §4, §11.1). A value resolves only to an action it names;
//! otherwise the prepared envelope (`render_error`) is exactly the builder's
//! (`error(..).render()`), well-formed, and reads back as the error it renders.

#![no_main]

use arbitrary::{Arbitrary, Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use mcp_fusion::client::{ParsedError, parse_envelope};
use mcp_fusion::router::{RouteError, Router};
use mcp_fusion_fuzz::{JsonBuilder, text, well_formed};
use serde_json::Value;

/// Names that make values close, qualified, dotted, cut or hostile.
const NAMES: &[&str] = &[
    "billing",
    "list_invoices",
    "get_invoice",
    "get_invoise",
    "billing.get_invoice",
    "users.list",
    "Get_Invoice",
    "get",
    "a",
    "",
    "]]",
    "<&>\"'",
    "\r\n\t",
    "\u{0}\u{FFFE}",
    "\u{1F600}",
];

/// One router and one call to it.
#[derive(Debug)]
struct Input {
    tool: String,
    actions: Vec<String>,
    /// Each action's argument schema, when the router is told them.
    schemas: Option<Vec<Value>>,
    discriminator: Option<String>,
    sent: Option<Value>,
    /// The other fields of the call.
    fields: Vec<String>,
}

/// A name from [`NAMES`], or arbitrary text.
fn name(u: &mut Unstructured) -> Result<String> {
    if u.ratio(2, 3)? {
        Ok((*u.choose(NAMES)?).to_owned())
    } else {
        text(u, 60)
    }
}

impl Input {
    /// A seed written as JSON, as the routing cases of `vectors.json` give a call:
    /// `{"tool": .., "discriminator": .., "actions": [..], "arguments": {..}}`.
    fn from_json(data: &[u8]) -> Option<Self> {
        let case: Value = serde_json::from_slice(data).ok()?;
        let string = |v: &Value| v.as_str().map(str::to_owned);
        let tool = string(case.get("tool")?)?;
        let actions = case.get("actions")?.as_array()?;
        let discriminator = case.get("discriminator").and_then(string);
        let field = discriminator.as_deref().unwrap_or("action");
        let actions: Vec<String> = actions.iter().filter_map(string).collect();
        let arguments = case.get("arguments").and_then(Value::as_object);
        // Version 3 cases give each action's schema by its name.
        let schemas = case
            .get("schemas")
            .and_then(Value::as_object)
            .map(|schemas| {
                actions
                    .iter()
                    .map(|a| schemas.get(a).cloned().unwrap_or_default())
                    .collect()
            });
        Some(Input {
            tool,
            schemas,
            sent: arguments.and_then(|args| args.get(field)).cloned(),
            fields: arguments
                .into_iter()
                .flat_map(|args| args.keys())
                .filter(|k| *k != field)
                .cloned()
                .collect(),
            actions,
            discriminator,
        })
    }
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        if let Some(input) = Input::from_json(u.peek_bytes(u.len()).unwrap_or_default()) {
            u.bytes(u.len())?;
            return Ok(input);
        }
        let tool = name(u)?;
        let actions: Vec<String> = (0..u.int_in_range(0..=6)?)
            .map(|_| name(u))
            .collect::<Result<_>>()?;
        let discriminator = if u.ratio(1, 4)? { Some(name(u)?) } else { None };
        let sent = match u.choose_index(6)? {
            0 => None,
            // A qualified value: the tool's name, a dot, and a name.
            1 => Some(Value::String(format!("{tool}.{}", name(u)?))),
            2 => Some(JsonBuilder::new(&[], NAMES, 12).value(u, 2)?),
            3 => Some(Value::String(text(u, 120)?)),
            _ => Some(Value::String(name(u)?)),
        };
        // Schemas declaring some of the names, as properties or as a pattern.
        let schemas = if u.ratio(2, 3)? {
            let mut schemas = Vec::new();
            for _ in 0..actions.len() {
                let mut properties = serde_json::Map::new();
                for _ in 0..u.int_in_range(0..=3)? {
                    properties.insert(name(u)?, Value::Object(serde_json::Map::new()));
                }
                let mut schema = serde_json::json!({"type": "object", "properties": properties});
                if u.ratio(1, 5)? {
                    schema["patternProperties"] = serde_json::json!({"^g": {}});
                }
                schemas.push(schema);
            }
            Some(schemas)
        } else {
            None
        };
        let fields = (0..u.int_in_range(0..=3)?)
            .map(|_| name(u))
            .collect::<Result<_>>()?;
        Ok(Input {
            tool,
            actions,
            schemas,
            discriminator,
            sent,
            fields,
        })
    }
}

fuzz_target!(|input: Input| {
    let mut router = Router::new(input.tool.clone(), input.actions.clone());
    if let Some(discriminator) = &input.discriminator {
        router = router.discriminator(discriminator.clone());
    }
    if let Some(schemas) = &input.schemas {
        router = router.schemas(schemas);
    }
    let field = router.discriminator_name().to_owned();
    let mut arguments: serde_json::Map<String, Value> = input
        .fields
        .iter()
        .map(|f| (f.clone(), Value::Bool(true)))
        .collect();
    match &input.sent {
        Some(sent) => arguments.insert(field, sent.clone()),
        None => arguments.remove(&field),
    };
    match router.route(Some(&Value::Object(arguments))) {
        Ok(i) => {
            let action = &input.actions[i];
            let sent = input.sent.as_ref().and_then(Value::as_str);
            let qualified = format!("{}.{action}", input.tool);
            assert!(
                sent == Some(action.as_str()) || sent == Some(qualified.as_str()),
                "{sent:?} routed to {action:?}"
            );
            // The first of two equal names wins.
            assert_eq!(input.actions.iter().position(|a| a == action), Some(i));
        }
        Err(err) => check_envelope(&router, &err),
    }
});

/// The envelope of a routing failure: prepared, built and parsed, all three agree.
fn check_envelope(router: &Router, err: &RouteError) {
    if let RouteError::UnknownAction {
        closest: Some(i), ..
    } = err
    {
        assert!(*i < router.qualified_actions().len());
    }
    let text = router.render_error(err);
    let built = router.error(err);
    assert_eq!(text, built.render(), "prepared and built envelopes differ");
    well_formed(&text);
    assert_eq!(
        parse_envelope(&text),
        ParsedError::from(&built),
        "re-parse of\n{text}"
    );
}

//! The decoder row (ERRORS.md §5): arguments the schema accepts but the action's type refuses
//! are answered at the path where decoding stopped, in the contract's words, never serde's; and
//! whole-number floats reach integer fields as integers.

use mcp_fusion::{Tool, ToolError, tool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// An even number: the schema says "an integer", the type refuses odd ones.
#[derive(Debug)]
struct Even(u32);

impl<'de> Deserialize<'de> for Even {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let n = u32::deserialize(d)?;
        if n % 2 == 0 {
            Ok(Even(n))
        } else {
            Err(serde::de::Error::custom(format!("Even: {n} is odd")))
        }
    }
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Sizes {
    limit: u32,
    ids: Vec<u64>,
    cap: Option<i16>,
    ratio: f64,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Order {
    lines: Vec<OrderLine>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OrderLine {
    #[schemars(with = "u32")]
    quantity: Even,
}

#[derive(Deserialize, JsonSchema)]
struct Flat {
    #[serde(flatten)]
    inner: Inner,
}

#[derive(Deserialize, JsonSchema)]
struct Inner {
    #[schemars(with = "u32")]
    pairs: Even,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Shaped {
    shape: Shape,
}

#[derive(Deserialize, JsonSchema)]
#[serde(untagged)]
enum Shape {
    Square {
        #[schemars(with = "u32")]
        side: Even,
    },
    Count(#[schemars(with = "u32")] Even),
}

struct Shop;

/// A shop.
#[tool]
impl Shop {
    /// Echoes what the handler received.
    async fn sizes(&self, args: Sizes) -> Result<String, ToolError> {
        Ok(format!(
            "{} {:?} {:?} {}",
            args.limit, args.ids, args.cap, args.ratio
        ))
    }

    /// Takes lines of even quantities.
    async fn order(&self, args: Order) -> Result<u32, ToolError> {
        Ok(args.lines.iter().map(|l| l.quantity.0).sum())
    }

    /// Flattened arguments.
    async fn flat(&self, args: Flat) -> Result<u32, ToolError> {
        Ok(args.inner.pairs.0)
    }

    /// An untagged enum field.
    async fn shaped(&self, args: Shaped) -> Result<u32, ToolError> {
        Ok(match args.shape {
            Shape::Square { side } => side.0,
            Shape::Count(n) => n.0,
        })
    }
}

async fn call(action: &str, mut args: Value) -> (bool, String) {
    args["action"] = json!(action);
    let Value::Object(map) = args else {
        unreachable!()
    };
    let result = Shop.call(Some(map as Map<String, Value>)).await;
    (result.is_error(), result.text())
}

fn envelope(action: &str, name: &str, line: &str) -> String {
    format!(
        "<validation_error action=\"shop.{action}\">\n<field name=\"{name}\">{line}</field>\n\
         <recovery>Fix the fields above and call the tool again. Do not explain the error.</recovery>\n\
         </validation_error>"
    )
}

#[tokio::test]
async fn whole_number_floats_reach_integer_fields_as_integers() {
    let (is_error, text) = call(
        "sizes",
        json!({"limit": 2.0, "ids": [1.0, 7], "cap": -3.0, "ratio": 4.0}),
    )
    .await;
    assert!(!is_error, "{text}");
    // A successful string is sent as its text.
    assert_eq!(text, "2 [1, 7] Some(-3) 4");
    // A fraction is still a wrong type, found by the schema before decoding.
    let (is_error, text) = call(
        "sizes",
        json!({"limit": 2.5, "ids": [], "cap": null, "ratio": 1}),
    )
    .await;
    assert!(is_error);
    assert_eq!(
        text,
        envelope(
            "sizes",
            "limit",
            "Invalid type. You sent: 2.5. Expected an integer >= 0 and &lt;= 4294967295."
        )
    );
}

#[tokio::test]
async fn a_value_the_type_refuses_is_a_field_line_at_the_decoders_path() {
    let (is_error, text) = call(
        "order",
        json!({"lines": [{"quantity": 2}, {"quantity": 3.0}]}),
    )
    .await;
    assert!(is_error);
    // The path where decoding stopped, the value as sent, the schema's {desc}; no serde words.
    assert_eq!(
        text,
        envelope(
            "order",
            "lines[1].quantity",
            "Invalid value. You sent: 3.0. Expected an integer >= 0 and &lt;= 4294967295."
        )
    );
    let (is_error, text) = call("order", json!({"lines": [{"quantity": 4}]})).await;
    assert!(!is_error);
    assert_eq!(text, "4");
}

#[tokio::test]
async fn paths_the_decoder_cannot_give_fall_back_to_the_root() {
    let (is_error, text) = call("flat", json!({"pairs": 5})).await;
    assert!(is_error);
    assert_eq!(
        text,
        envelope(
            "flat",
            "(root)",
            "Invalid value. You sent: {\"pairs\":5}. Expected an object with fields pairs."
        )
    );
    // An untagged enum: the decoder knows the field, not which alternative was meant, so the
    // line describes the alternatives by their types.
    let (is_error, text) = call("shaped", json!({"shape": {"side": 3}})).await;
    assert!(is_error);
    assert_eq!(
        text,
        envelope(
            "shaped",
            "shape",
            "Invalid value. You sent: {\"side\":3}. Expected an object or an integer."
        )
    );
}

//! A property over schemas shaped as schemars writes them (`$defs` and `$ref`, `"#"` of a
//! recursive root, `Option` as `anyOf` with null, enums, nested objects), for tools whose
//! actions reuse field names and type names with different meanings:
//!
//! - grouped: every object valid for an action (with its discriminator value) is valid against
//!   the advertised schema, and the alternative noted for that action accepts its value;
//! - flat: an object validates against the advertised tool schema exactly when it validates
//!   against the action's own.

use mcp_fusion::tools::{ActionDef, Exposition, ToolDef};
use mcp_fusion::validate::Schema;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const FIELDS: [&str; 5] = ["id", "to", "status", "limit", "note"];

/// One field's schema, by kind: the `$defs` it needs come with it.
fn field_schema(kind: u8, bound: u64) -> Value {
    match kind % 8 {
        0 => json!({"type": "string"}),
        1 => json!({"type": "string", "pattern": "^[a-z]+$"}),
        2 => json!({"type": "integer", "minimum": 0, "maximum": bound}),
        3 => json!({"type": ["string", "null"]}),
        4 => json!({"anyOf": [{"$ref": "#/$defs/Status"}, {"type": "null"}]}),
        5 => json!({"$ref": "#/$defs/Status"}),
        6 => json!({"type": "array", "items": {"$ref": "#"}}),
        _ => json!({"$ref": "#/$defs/Inner"}),
    }
}

/// An action's schema: fields (kind, bound, required), its `Status` enum's values, closed or
/// not.
fn action_schema(fields: &[(usize, u8, u64, bool)], status: &[&str], closed: bool) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for &(field, kind, bound, req) in fields {
        let name = FIELDS[field % FIELDS.len()];
        if properties.contains_key(name) {
            continue;
        }
        properties.insert(name.to_owned(), field_schema(kind, bound));
        // A recursive field is never required (the recursion must end).
        if req && kind % 8 != 6 {
            required.push(name);
        }
    }
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "$defs": {
            "Status": {"type": "string", "enum": status},
            "Inner": {"type": "object", "properties": {"v": {"$ref": "#/$defs/Status"}}, "required": ["v"]},
        },
    });
    if closed {
        schema["additionalProperties"] = json!(false);
    }
    schema
}

/// A small deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn pick(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// A value valid for `schema`, with `root` the action's schema (for `"#"` and `$defs`).
fn value(schema: &Value, root: &Value, rng: &mut Rng, depth: u32) -> Value {
    if let Some(pointer) = schema.get("$ref").and_then(Value::as_str) {
        let target = match pointer.strip_prefix("#/$defs/") {
            Some(name) => &root["$defs"][name],
            None => root,
        };
        return value(target, root, rng, depth + 1);
    }
    if let Some(alternatives) = schema.get("anyOf").and_then(Value::as_array) {
        let at = rng.pick(alternatives.len() as u64) as usize;
        return value(&alternatives[at], root, rng, depth);
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values[rng.pick(values.len() as u64) as usize].clone();
    }
    match &schema["type"] {
        Value::Array(types) => match rng.pick(2) {
            0 => Value::Null,
            _ => value(&json!({"type": types[0].clone()}), root, rng, depth),
        },
        Value::String(t) if t == "string" => {
            let letters = ["ab", "xyz", "ticket", "q"];
            json!(letters[rng.pick(4) as usize])
        }
        Value::String(t) if t == "integer" => {
            let max = schema["maximum"].as_u64().unwrap_or(100);
            json!(rng.pick(max + 1))
        }
        Value::String(t) if t == "array" => {
            let n = if depth > 2 { 0 } else { rng.pick(3) };
            Value::Array(
                (0..n)
                    .map(|_| value(&schema["items"], root, rng, depth + 1))
                    .collect(),
            )
        }
        Value::String(t) if t == "object" => {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let mut out = Map::new();
            for (name, field) in schema["properties"].as_object().into_iter().flatten() {
                let recursive = field["items"]["$ref"] == "#";
                if required.contains(&name.as_str())
                    || (rng.pick(2) == 0 && !(recursive && depth > 2))
                {
                    out.insert(name.clone(), value(field, root, rng, depth + 1));
                }
            }
            Value::Object(out)
        }
        _ => Value::Null,
    }
}

type Spec = (Vec<(usize, u8, u64, bool)>, bool, bool);

fn spec() -> impl Strategy<Value = Spec> {
    (
        prop::collection::vec((0..5usize, any::<u8>(), 1..50u64, any::<bool>()), 1..5),
        any::<bool>(),
        any::<bool>(),
    )
}

fn tool(specs: &[Spec]) -> (ToolDef, Vec<Value>) {
    let statuses: [&[&str]; 2] = [&["open", "closed"], &["pending", "resolved"]];
    let mut builder = ToolDef::new("t");
    let mut own = Vec::new();
    for (i, (fields, which, closed)) in specs.iter().enumerate() {
        let schema = action_schema(fields, statuses[usize::from(*which)], *closed);
        let mut action = ActionDef::with_schema(format!("a{i}"), schema);
        if !closed {
            action = action.open_arguments();
        }
        builder = builder.action(action);
    }
    let def = builder.build();
    own.extend(def.actions().iter().map(|a| a.schema().clone()));
    (def, own)
}

/// The alternatives of an advertised field: itself, or each of its `anyOf` when it notes that
/// the values depend on the action.
fn alternatives(field: &Value) -> Vec<&Value> {
    let depends = field["description"]
        .as_str()
        .is_some_and(|d| d.contains("depend on the action"));
    match (depends, field["anyOf"].as_array()) {
        (true, Some(alternatives)) => alternatives.iter().collect(),
        _ => vec![field],
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn grouped_listings_accept_what_each_action_accepts(
        specs in prop::collection::vec(spec(), 2..4),
        seed in any::<u64>(),
    ) {
        let (def, own) = tool(&specs);
        let advertised = Value::Object(def.input_schema().clone());
        let checker = Schema::new(&advertised).expect("the advertised schema compiles");
        let mut rng = Rng(seed);
        for (i, schema) in own.iter().enumerate() {
            let action = Schema::new(schema).unwrap();
            for _ in 0..8 {
                let args = value(schema, schema, &mut rng, 0);
                prop_assert!(action.is_valid(&args), "generated {args} for {schema}");
                let mut sent = args.as_object().unwrap().clone();
                sent.insert("action".into(), json!(format!("a{i}")));
                let sent = Value::Object(sent);
                prop_assert!(checker.is_valid(&sent), "{sent} refused by {advertised}");
                // The alternative noted for this action accepts the action's value.
                for (field, sent_value) in args.as_object().unwrap() {
                    let listed = &advertised["properties"][field];
                    let noted: Vec<&Value> = alternatives(listed)
                        .into_iter()
                        .filter(|alt| {
                            let note = alt["description"].as_str().unwrap_or("");
                            note.contains(&format!(" a{i},")) || note.contains(&format!(" a{i};"))
                                || note.contains(&format!(" a{i}."))
                        })
                        .collect();
                    prop_assert_eq!(noted.len(), 1, "{} of a{}: {}", field, i, listed);
                    let mut alone = noted[0].clone();
                    alone["$defs"] = advertised["$defs"].clone();
                    let alone = Schema::new(&alone).unwrap();
                    prop_assert!(alone.is_valid(sent_value), "{sent_value} refused by {}", noted[0]);
                }
            }
        }
    }

    #[test]
    fn flat_listings_are_each_actions_own_schema(
        specs in prop::collection::vec(spec(), 2..4),
        seed in any::<u64>(),
    ) {
        let (def, own) = tool(&specs);
        let listed = def.listed(Exposition::Flat);
        let mut rng = Rng(seed);
        for (i, schema) in own.iter().enumerate() {
            let advertised = Schema::new(&Value::Object((*listed[i].input_schema).clone())).unwrap();
            let action = Schema::new(schema).unwrap();
            for _ in 0..8 {
                let mut args = value(schema, schema, &mut rng, 0);
                // Mutations: an unknown field, a wrong type, a field of another action.
                match rng.pick(4) {
                    0 => { args["zz"] = json!(1); }
                    1 => { if let Some((k, _)) = args.as_object().unwrap().iter().next().map(|(k, v)| (k.clone(), v.clone())) { args[&k] = json!({"x": []}); } }
                    2 => { args[FIELDS[rng.pick(5) as usize]] = json!(7); }
                    _ => {}
                }
                prop_assert_eq!(advertised.is_valid(&args), action.is_valid(&args), "{}", args);
            }
        }
    }
}

//! What a tool definition must satisfy to be served faithfully, checked once when a server
//! registers it: what `tools/list` advertises must be what validation enforces.

use serde_json::{Map, Value};

use super::definition::{Exposition, ToolDef};
use super::schema::shapes;

impl ToolDef {
    /// Why this tool cannot be served as `exposition` says, one sentence each naming the tool,
    /// the action, the field and the fix; empty when it can.
    pub(crate) fn problems(&self, exposition: Exposition) -> Vec<String> {
        let mut problems = Vec::new();
        let single = self.discriminator.is_none();
        let described = self.description.is_some()
            || (single
                && self
                    .actions
                    .first()
                    .is_some_and(|a| a.description.is_some()));
        if !described {
            problems.push(format!(
                "tool \"{}\": it has no description, so the model sees only its name; write a doc comment on it (#[tool]), or ToolDefBuilder::description",
                self.name
            ));
        }
        for action in &self.actions {
            let at = format!("tool \"{}\", action \"{}\"", self.name, action.qualified);
            if !single && action.description.is_none() {
                problems.push(format!(
                    "{at}: it has no description, so the model sees only its name; write a doc comment on the action's method, or ActionDefBuilder::description"
                ));
            }
            if let Err(broken) = &action.schema {
                problems.push(format!(
                    "{at}: the arguments' schema is not valid JSON Schema ({broken}); fix the schema given to ActionDef::with_schema"
                ));
                continue;
            }
            let empty = Map::new();
            let defs = action
                .schema_value
                .get("$defs")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            let Some(shapes) = shapes(&action.schema_value, defs) else {
                problems.push(format!(
                    "{at}: the arguments are {}, but a call's arguments are an object with named fields; take a struct (or an enum whose variants are structs, tagged with #[serde(tag = \"...\")]) and put this value in one of its fields",
                    describe(&action.schema_value)
                ));
                continue;
            };
            let grouped = self.discriminator.is_some() && exposition == Exposition::Grouped;
            if let Some(field) = self.discriminator.as_deref().filter(|_| grouped) {
                let collides = shapes.iter().any(|shape| {
                    shape
                        .get("properties")
                        .and_then(Value::as_object)
                        .is_some_and(|p| p.contains_key(field))
                });
                if collides {
                    problems.push(format!(
                        "{at}: the argument field \"{field}\" has the name of the discriminator, which chooses the action, so the action could never receive it; rename the field (#[serde(rename = \"...\")]) or the discriminator (#[tool(discriminator = \"...\")]), or serve the tool flat (#[tool(exposition = \"flat\")])"
                    ));
                }
            }
        }
        problems
    }
}

/// What a schema that is no object describes, for the message.
fn describe(schema: &Value) -> String {
    let Some(node) = schema.as_object() else {
        return format!("the schema {schema}");
    };
    if let Some(kind) = node.get("type") {
        return format!("of type {kind}");
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if node.contains_key(key) {
            return format!(
                "a combination ({key}) of schemas that are not all objects with properties"
            );
        }
    }
    "a schema without properties".to_owned()
}

//! What a tool definition must satisfy to be served faithfully, checked once when a server
//! registers it: what `tools/list` advertises must be what validation enforces.

use mcp_fusion_rules::scope::is_scope_token;
use serde_json::{Map, Value};

use super::definition::{Exposition, ToolDef};
use super::object_schema::shapes;
use super::user_field::{self, Unfit};

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
            for scope in action.scopes.iter().filter(|s| !is_scope_token(s)) {
                problems.push(format!(
                    "{at}: the scope {scope:?} is not an OAuth scope token (RFC 6749 §3.3: one or more printable ASCII characters, no space, no '\"' and no '\\'); write each scope as its own string"
                ));
            }
            let unfollowed = crate::validate::invalid_references(&action.schema_value);
            for (reference, why) in &unfollowed {
                problems.push(format!(
                    "{at}: the $ref {reference:?} is no JSON Pointer into the schema ({why}), so the field it describes would be checked but not described; write it as \"#/$defs/Name\", each '~' of the name written '~0' and each '/' written '~1'"
                ));
            }
            if !unfollowed.is_empty() {
                continue;
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
            for name in &action.user_fields {
                if let Err(unfit) = user_field::check(&shapes, defs, name) {
                    problems.push(user_field_problem(&at, name, unfit));
                }
            }
        }
        problems.extend(self.header_problems(exposition));
        problems
    }
}

impl ToolDef {
    /// The actions whose arguments are alternatives told apart by a field of constant value
    /// (an internally tagged enum, `#[serde(tag = "kind")]`), with that field: a call that
    /// matches none is told only "one of the allowed shapes" (ERRORS.md §5).
    pub(crate) fn tagged_arguments(&self) -> Vec<(&str, String)> {
        let mut found = Vec::new();
        for action in &self.actions {
            let empty = Map::new();
            let defs = action
                .schema_value
                .get("$defs")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            let Some(shapes) = shapes(&action.schema_value, defs).filter(|s| s.len() > 1) else {
                continue;
            };
            let constant = |shape: &Map<String, Value>, field: &str| {
                shape
                    .get("properties")
                    .and_then(|p| p.get(field))
                    .is_some_and(|f| {
                        f.get("const").is_some()
                            || f.get("enum")
                                .is_some_and(|e| e.as_array().is_some_and(|e| e.len() == 1))
                    })
            };
            let first = shapes[0]
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|p| p.keys());
            if let Some(tag) = first
                .into_iter()
                .find(|field| shapes.iter().all(|shape| constant(shape, field)))
            {
                found.push((action.qualified(), tag.clone()));
            }
        }
        found
    }
}

/// Why a field marked as one only the user can give cannot be asked of them.
fn user_field_problem(at: &str, name: &str, unfit: Unfit) -> String {
    const MARKED: &str = "marked as one only the user can give (#[action(ask_user(..))], ActionDefBuilder::user_field)";
    match unfit {
        Unfit::Missing { closest } => {
            let close = closest.map_or_else(String::new, |c| format!(" (did you mean \"{c}\"?)"));
            format!(
                "{at}: the field \"{name}\" is {MARKED}, but the arguments have no such field{close}; name an optional field of the arguments as their schema spells it (after serde's renames)"
            )
        }
        Unfit::Required => format!(
            "{at}: the field \"{name}\" is {MARKED}, to be asked of the user when a call leaves it out, but the arguments require it, so no call leaves it out; make the field optional (`Option<T>`)"
        ),
        Unfit::Unshowable { found } => format!(
            "{at}: the field \"{name}\" is {MARKED}, but it is {found}, and a form shows only text, numbers, booleans and choices among strings; ask the user for a field of one of those kinds"
        ),
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

#[cfg(test)]
mod tests {
    use crate::tool::{ActionDef, ToolDef};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Payment {
        /// By card.
        Card { last4: String },
        /// By transfer.
        Transfer { iban: String },
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Plain {
        id: String,
    }

    #[test]
    fn internally_tagged_arguments_are_found_with_their_tag() {
        let def = ToolDef::new("billing")
            .description("Invoices.")
            .action(ActionDef::new::<Payment>("pay").description("Pays."))
            .action(ActionDef::new::<Plain>("get").description("Gets."))
            .build();
        assert_eq!(def.tagged_arguments(), [("billing.pay", "kind".to_owned())]);
    }
}

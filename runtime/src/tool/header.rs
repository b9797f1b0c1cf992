//! Fields mirrored in HTTP headers (2026-07-28, SEP-2243): a field declared so is listed with
//! `"x-mcp-header": "Name"`, a client sends its value as `Mcp-Param-Name` too, and the server
//! checks the header against the body. What a tool must satisfy for clients to keep it: they
//! drop a whole tool whose annotation is misplaced, misnamed, or on a field that is not one
//! string, integer or boolean.

use mcp_fusion_rules::close::closest;
use mcp_fusion_rules::names::header_name_problem;
use serde_json::{Map, Value};

use super::action::{ActionDef, ActionDefBuilder};
use super::definition::{Exposition, ToolDef};
use crate::validate::pointer::escape;

/// The keyword of a listed property that names the header it is mirrored in.
pub(crate) const HEADER_KEYWORD: &str = "x-mcp-header";

impl ActionDefBuilder {
    /// Mirrors `field` of the arguments (as their schema spells it, after serde's renames) in
    /// the HTTP header `Mcp-Param-{header}` (2026-07-28, SEP-2243): the field is listed with
    /// `"x-mcp-header": header`, a client sends its value in that header too (so that a proxy
    /// can route on it without reading the body), and over streamable HTTP a call whose header
    /// is missing, is not the body's value, or is bad Base64 (`=?base64?...?=`) is refused
    /// with HTTP 400 and JSON-RPC error -32020. `#[action(header(field = "Name"))]` in the
    /// macro.
    ///
    /// The field must be a property of the arguments of exactly one type among string,
    /// integer and boolean (`String`, not `Option<String>`: take `#[serde(default)]` for an
    /// optional one), the header an RFC 9110 token (letters, digits, `-`, ...), each header
    /// once per tool (case-insensitively); in a grouped tool, every action that has the field
    /// declares it alike. A server refuses to build otherwise, naming the tool, the action, the
    /// field and the fix.
    ///
    /// ```
    /// use mcp_fusion::tools::ActionDef;
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Deploy {
    ///     /// Where to deploy.
    ///     region: String,
    /// }
    ///
    /// let deploy = ActionDef::new::<Deploy>("deploy").header("region", "Region").build();
    /// assert_eq!(deploy.schema()["properties"]["region"]["x-mcp-header"], "Region");
    /// assert_eq!(deploy.headers(), [("region".to_owned(), "Region".to_owned())]);
    /// ```
    pub fn header(mut self, field: impl Into<String>, header: impl Into<String>) -> Self {
        let (field, header) = (field.into(), header.into());
        let action = &mut self.0;
        let schemas = [
            Some(&mut action.schema_value),
            action.as_written.as_deref_mut(),
        ];
        for schema in schemas.into_iter().flatten() {
            let property = schema.get_mut("properties").and_then(|p| p.get_mut(&field));
            if let Some(Value::Object(property)) = property {
                property.insert(HEADER_KEYWORD.into(), Value::String(header.clone()));
            }
        }
        action.schema = crate::validate::Schema::new(&action.schema_value);
        action.headers.retain(|(f, _)| *f != field);
        action.headers.push((field, header));
        self
    }
}

impl ActionDef {
    /// The fields mirrored in headers ([`ActionDefBuilder::header`]), each with its header's
    /// name (without `Mcp-Param-`), in the order they were declared.
    pub fn headers(&self) -> &[(String, String)] {
        &self.headers
    }
}

/// One `x-mcp-header` on a property reached from the root through `properties` alone.
struct Annotation<'a> {
    /// The property names from the root.
    path: Vec<&'a str>,
    /// The property's schema.
    schema: &'a Map<String, Value>,
    header: &'a Value,
}

/// Every `x-mcp-header` of a schema: those on properties, and where the others are (JSON
/// Pointers), which clients refuse.
#[derive(Default)]
struct Found<'a> {
    on_properties: Vec<Annotation<'a>>,
    elsewhere: Vec<String>,
}

fn find(schema: &Value) -> Found<'_> {
    let mut found = Found::default();
    if let Value::Object(root) = schema {
        walk(root, "", Some(&[]), &mut found);
    }
    found
}

/// `node` at `at`; `chain` the property names from the root when it is reached through
/// `properties` alone (the root's is empty, and an annotation there is misplaced too).
fn walk<'a>(
    node: &'a Map<String, Value>,
    at: &str,
    chain: Option<&[&'a str]>,
    found: &mut Found<'a>,
) {
    for (key, value) in node {
        let here = format!("{at}/{}", escape(key));
        match key.as_str() {
            HEADER_KEYWORD => match chain {
                Some(path) if !path.is_empty() => found.on_properties.push(Annotation {
                    path: path.to_vec(),
                    schema: node,
                    header: value,
                }),
                _ => found.elsewhere.push(here),
            },
            "properties" => {
                let Value::Object(properties) = value else {
                    continue;
                };
                for (name, property) in properties {
                    let Value::Object(property) = property else {
                        continue;
                    };
                    let path = chain.map(|c| [c, &[name.as_str()]].concat());
                    let at = format!("{here}/{}", escape(name));
                    walk(property, &at, path.as_deref(), found);
                }
            }
            // Values and names, not schemas.
            "default" | "const" | "enum" | "examples" | "dependentRequired" => {}
            _ => walk_value(value, &here, found),
        }
    }
}

fn walk_value<'a>(value: &'a Value, at: &str, found: &mut Found<'a>) {
    match value {
        Value::Object(node) => walk(node, at, None, found),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk_value(item, &format!("{at}/{i}"), found);
            }
        }
        _ => {}
    }
}

/// Why a field annotated `header` cannot be mirrored in it, as a clause after "the field F".
fn annotation_problem(annotation: &Annotation<'_>) -> Option<String> {
    let Some(header) = annotation.header.as_str() else {
        return Some(format!(
            "has \"x-mcp-header\": {}, but a header is named by a string; write the header's name, as \"Region\"",
            annotation.header
        ));
    };
    if let Some(why) = header_name_problem(header) {
        return Some(format!(
            "is mirrored in the header \"{header}\", whose name {why}; name it with letters, digits and '-', as \"Region\" or \"Tenant-Id\""
        ));
    }
    match annotation.schema.get("type") {
        Some(Value::String(t)) if matches!(t.as_str(), "string" | "integer" | "boolean") => None,
        Some(Value::String(t)) => Some(format!(
            "is mirrored in the header \"{header}\", but it is of type {t:?}, and a header carries a string, an integer or a boolean only; mirror a field of one of those types"
        )),
        Some(Value::Array(types)) => Some(format!(
            "is mirrored in the header \"{header}\", but it has the types {} (as an `Option<T>` is listed), and clients drop a tool whose mirrored field has more than one type; take `T` with `#[serde(default)]` instead of `Option<T>`",
            Value::Array(types.clone())
        )),
        _ => Some(format!(
            "is mirrored in the header \"{header}\", but it has no single \"type\" (an enum or a type of its own is listed as a reference or alternatives), and clients accept a mirrored field only of type string, integer or boolean; take a `String`, an integer or a `bool`"
        )),
    }
}

/// Why clients would drop a tool listed with `schema`: the first reason, if any.
fn listed_problem(schema: &Map<String, Value>) -> Option<String> {
    let mut found = Found::default();
    walk(schema, "", Some(&[]), &mut found);
    if let Some(at) = found.elsewhere.first() {
        return Some(format!(
            "its listed schema has \"x-mcp-header\" at {at:?}, off the properties of the arguments (a field declared differently by its actions is listed as alternatives)"
        ));
    }
    let mut seen: Vec<(String, String)> = Vec::new();
    for annotation in &found.on_properties {
        let field = annotation.path.join(".");
        if let Some(why) = annotation_problem(annotation) {
            return Some(format!("the field \"{field}\" {why}"));
        }
        let header = annotation.header.as_str().unwrap_or_default();
        let lower = header.to_ascii_lowercase();
        if let Some((_, other)) = seen.iter().find(|(h, _)| *h == lower) {
            return Some(format!(
                "the fields \"{other}\" and \"{field}\" are mirrored in the same header, \"{header}\" (header names are case-insensitive); give each field a header of its own"
            ));
        }
        seen.push((lower, field));
    }
    None
}

impl ToolDef {
    /// Why clients would refuse this tool's fields mirrored in headers, served as
    /// `exposition` says: one sentence each naming the tool, the action, the field and the fix.
    pub(super) fn header_problems(&self, exposition: Exposition) -> Vec<String> {
        let mut problems = Vec::new();
        for action in &self.actions {
            problems.extend(action_problems(self, action));
        }
        let grouped = self.discriminator.is_some() && exposition == Exposition::Grouped;
        if problems.is_empty() && grouped {
            problems.extend(self.unlike_declarations());
        }
        if problems.is_empty() {
            for listed in self.listed(exposition) {
                if let Some(why) = listed_problem(&listed.input_schema) {
                    problems.push(format!(
                        "tool \"{}\": {why}, and clients drop a tool they cannot mirror; fix the header of the field",
                        listed.name
                    ));
                }
            }
        }
        problems
    }

    /// In a grouped tool, the fields some action mirrors in a header that the actions having
    /// them do not declare alike: the tool lists such a field as alternatives (`anyOf`), where
    /// clients refuse `x-mcp-header`.
    fn unlike_declarations(&self) -> Vec<String> {
        let property = |action: &ActionDef, field: &str| {
            (action.schema_value.get("properties")?.get(field)).cloned()
        };
        let mut fields: Vec<&str> = Vec::new();
        for action in &self.actions {
            for annotation in find(&action.schema_value).on_properties {
                if !fields.contains(&annotation.path[0]) {
                    fields.push(annotation.path[0]);
                }
            }
        }
        let mut problems = Vec::new();
        for field in fields {
            let having: Vec<(&ActionDef, Value)> = (self.actions.iter())
                .filter_map(|a| Some((a, property(a, field)?)))
                .collect();
            let Some((first, schema)) = having.first() else {
                continue;
            };
            let Some((other, other_schema)) = having.iter().find(|(_, s)| s != schema) else {
                continue;
            };
            let headers = |schema: &Value| {
                let wrapped = serde_json::json!({"properties": {field: schema}});
                let found = find(&wrapped).on_properties;
                (found.iter())
                    .map(|a| (a.path.join("."), a.header.clone()))
                    .collect::<Vec<_>>()
            };
            let (mine, theirs) = (headers(schema), headers(other_schema));
            let shown = |headers: &[(String, Value)]| match headers.first() {
                Some((_, header)) => format!("mirrors it in the header {header}"),
                None => "does not mirror it in a header".to_owned(),
            };
            let what = match mine == theirs {
                true => "declare it differently (its type, doc comment or bounds), so the tool lists it as alternatives, where clients refuse \"x-mcp-header\"; give the field the same type and doc comment in every action".to_owned(),
                false => format!(
                    "declare it differently: \"{}\" {} and \"{}\" {}; declare the header on every action that has the field (#[action(header(..))], ActionDefBuilder::header)",
                    first.name,
                    shown(&mine),
                    other.name,
                    shown(&theirs)
                ),
            };
            problems.push(format!(
                "tool \"{}\": the actions \"{}\" and \"{}\" both have the field \"{field}\", mirrored in a header, but {what}, or serve the tool flat (#[tool(exposition = \"flat\")])",
                self.name, first.name, other.name
            ));
        }
        problems
    }
}

/// One action's problems: a declared field its arguments lack, a misplaced annotation, a
/// field of the wrong type, a bad header name, a header named twice.
fn action_problems(def: &ToolDef, action: &ActionDef) -> Vec<String> {
    let at = format!("tool \"{}\", action \"{}\"", def.name, action.qualified);
    let mut problems = Vec::new();
    let properties = action
        .schema_value
        .get("properties")
        .and_then(Value::as_object);
    for (field, header) in &action.headers {
        if properties.is_some_and(|p| p.contains_key(field)) {
            continue;
        }
        let names: Vec<&str> = properties
            .into_iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .collect();
        let close = closest(field, &names)
            .map_or_else(String::new, |c| format!(" (did you mean \"{c}\"?)"));
        problems.push(format!(
            "{at}: the field \"{field}\" is to be mirrored in the header \"{header}\" (#[action(header(..))], ActionDefBuilder::header), but the arguments have no such field{close}; name a field of the arguments as their schema spells it (after serde's renames)"
        ));
    }
    let found = find(&action.schema_value);
    for pointer in &found.elsewhere {
        problems.push(format!(
            "{at}: the arguments' schema has \"x-mcp-header\" at {pointer:?}, but only a field reached through \"properties\" from the root can be mirrored in a header, and clients drop a tool that has it elsewhere; mirror a field of the arguments themselves"
        ));
    }
    let mut seen: Vec<(String, String)> = Vec::new();
    for annotation in &found.on_properties {
        let field = annotation.path.join(".");
        if let Some(why) = annotation_problem(annotation) {
            problems.push(format!("{at}: the field \"{field}\" {why}"));
            continue;
        }
        let header = annotation.header.as_str().unwrap_or_default();
        let lower = header.to_ascii_lowercase();
        match seen.iter().find(|(h, _)| *h == lower) {
            Some((_, other)) => problems.push(format!(
                "{at}: the fields \"{other}\" and \"{field}\" are mirrored in the same header, \"{header}\" (header names are case-insensitive); give each field a header of its own"
            )),
            None => seen.push((lower, field)),
        }
    }
    problems
}

//! Runs every case of a vectors file (ERRORS.md's golden input → output cases) byte for byte.
//!
//! The files are `../shared/spec/vectors-v3.json` beside this checkout and the project's own
//! `tests/vectors/contract-3.json`, or the one file `$MCP_FUSION_VECTORS` names; each must be
//! of version 3, the version this implementation follows. Cases are driven through the public
//! API only, as VECTORS.md describes (a routing case's `schemas` given to the router).
//!
//! Every envelope a case makes also travels as a result, and its `_meta` mirror (ERRORS.md §9)
//! must tell a client what the text tells it: the two readings are compared. (A
//! `contract_awareness` case starts from an envelope's text, which has no mirror: the mirror of
//! that block is checked through a server in `tests/it/lockfile.rs`.)

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use mcp_fusion::client::{MIRROR_KEY, ParsedError, parse_envelope};
use mcp_fusion::contract::{ChangeSeverity, ContractChange, inject_contract_awareness};
use mcp_fusion::rmcp::model::CallToolResult;
use mcp_fusion::router::ActionRouter;
use mcp_fusion::validate::Schema;
use mcp_fusion::{ErrorCode, Severity, ToolError};
use serde_json::{Value, json};

fn main() -> ExitCode {
    // The contract's own vectors, then the project's (cases of its own in the same format);
    // `$MCP_FUSION_VECTORS` names one other file to run instead.
    let files: Vec<PathBuf> = match std::env::var_os("MCP_FUSION_VECTORS") {
        Some(path) => vec![PathBuf::from(path)],
        None => {
            let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
            vec![
                root.join("../shared/spec/vectors-v3.json"),
                root.join("tests/vectors/contract-3.json"),
            ]
        }
    };
    let mut ok = true;
    for path in &files {
        ok &= run(path);
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Runs one file; whether every case passed (and there was at least one).
fn run(path: &Path) -> bool {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("conformance: cannot read {}: {e}", path.display());
            return false;
        }
    };
    let file: Value = match serde_json::from_str(&text) {
        Ok(file) => file,
        Err(e) => {
            eprintln!("conformance: {} is not JSON: {e}", path.display());
            return false;
        }
    };
    // The wire-format versions this implementation follows (ERRORS.md 2, and 2.1, which only
    // says what 2 left open).
    // The wire-format version this implementation follows (ERRORS.md 3: 2.1 as §11 changes it).
    if file["version"] != 3 {
        eprintln!(
            "conformance: {} is version {}; this implementation follows version 3",
            path.display(),
            file["version"]
        );
        return false;
    }
    let cases = file["cases"].as_array().cloned().unwrap_or_default();

    let mut per_kind: BTreeMap<String, usize> = BTreeMap::new();
    let mut failed = 0;
    let mut mirrors = Mirrors::default();
    for case in &cases {
        let id = case["id"].as_str().unwrap_or("?");
        let kind = case["kind"].as_str().unwrap_or("?");
        *per_kind.entry(kind.to_owned()).or_default() += 1;
        mirrors.case = id.to_owned();
        let got = match kind {
            "tool_error" => Ok(tool_error(&case["input"], &mut mirrors)),
            "routing" => Ok(routing(&case["input"], &mut mirrors)),
            "validation" => Ok(validation(&case["input"], &mut mirrors)),
            "contract_awareness" => Ok(contract_awareness(&case["input"])),
            "parse" => Ok(parsed(&case["input"])),
            other => Err(format!("unknown kind {other:?}")),
        };
        match got {
            Ok(got) if got == case["expected"] => {}
            Ok(got) => {
                failed += 1;
                eprintln!(
                    "FAIL {id} ({kind}): {}",
                    case["note"].as_str().unwrap_or("")
                );
                eprintln!("  expected: {}", case["expected"]);
                eprintln!("  got:      {got}");
                if let (Some(want), Some(have)) =
                    (case["expected"]["text"].as_str(), got["text"].as_str())
                {
                    eprintln!("--- expected text ---\n{want}\n--- got text ---\n{have}\n---");
                }
            }
            Err(why) => {
                failed += 1;
                eprintln!("FAIL {id}: {why}");
            }
        }
    }

    let ran = cases.len();
    let kinds: Vec<String> = per_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
    println!(
        "conformance: {ran} cases ran from {} ({})",
        path.display(),
        kinds.join(", ")
    );
    println!("conformance: {} passed, {failed} failed", ran - failed);
    for disagreement in &mirrors.disagreements {
        eprintln!("MIRROR {disagreement}");
    }
    println!(
        "conformance: {} mirrors read as their texts, {} did not",
        mirrors.checked - mirrors.disagreements.len(),
        mirrors.disagreements.len()
    );
    ran > 0 && failed == 0 && mirrors.checked > 0 && mirrors.disagreements.is_empty()
}

fn envelope(text: String, is_error: bool) -> Value {
    json!({"text": text, "is_error": is_error})
}

/// The mirrors read so far, and those that told a client something else than their text.
#[derive(Default)]
struct Mirrors {
    case: String,
    checked: usize,
    disagreements: Vec<String>,
}

impl Mirrors {
    /// Reads `result`'s envelope from its mirror and from its text; they must agree, up to what
    /// only the mirror carries (the §5 row of each field, characters the text replaces).
    fn check(&mut self, result: CallToolResult) {
        self.checked += 1;
        let text = result.content[0]
            .as_text()
            .expect("a text block")
            .text
            .clone();
        let from_text = parse_envelope(&text);
        let entries = result.meta.as_ref().and_then(|meta| meta.0.get(MIRROR_KEY));
        let Some([entry]) = entries.and_then(Value::as_array).map(Vec::as_slice) else {
            let why = format!("{}: not one mirror object: {entries:?}", self.case);
            return self.disagreements.push(why);
        };
        let Some(mut from_mirror) = ParsedError::from_mirror(entry) else {
            let why = format!("{}: the mirror does not read: {entry}", self.case);
            return self.disagreements.push(why);
        };
        let rows_named = from_mirror
            .fields
            .iter()
            .filter(|f| f.path != "(more)")
            .all(|f| f.problem.as_deref().is_some_and(|p| !p.is_empty()));
        if !rows_named {
            let why = format!("{}: a field without its problem: {entry}", self.case);
            return self.disagreements.push(why);
        }
        as_the_text_shows(&mut from_mirror);
        if from_mirror != from_text {
            self.disagreements.push(format!(
                "{}:\n  mirror: {from_mirror:?}\n  text:   {from_text:?}",
                self.case
            ));
        }
    }
}

/// The strings of a mirror as the text gives them back: characters XML forbids become U+FFFD
/// (ERRORS.md §2); the §5 row is not in the text.
fn as_the_text_shows(parsed: &mut ParsedError) {
    fn replace(s: &mut String) {
        let forbidden = |c: char| matches!(c, '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{FFFE}' | '\u{FFFF}');
        if s.contains(forbidden) {
            *s = s.replace(forbidden, "\u{FFFD}");
        }
    }
    replace(&mut parsed.message);
    parsed.recovery.iter_mut().for_each(replace);
    parsed.action.iter_mut().for_each(replace);
    parsed.actions.iter_mut().for_each(replace);
    for (key, value) in &mut parsed.details {
        replace(key);
        replace(value);
    }
    for field in &mut parsed.fields {
        replace(&mut field.path);
        replace(&mut field.text);
        field.problem = None;
    }
}

fn str_of(v: &Value) -> &str {
    v.as_str().expect("a string in the vectors file")
}

fn tool_error(input: &Value, mirrors: &mut Mirrors) -> Value {
    let code =
        ErrorCode::custom(str_of(&input["code"]).to_owned()).expect("codes in vectors are valid");
    let mut err = ToolError::new(code, str_of(&input["message"]).to_owned());
    if let Some(severity) = input["severity"].as_str() {
        err = err.severity(Severity::parse(severity).expect("a known severity"));
    }
    if let Some(recovery) = input["recovery"].as_str() {
        err = err.suggest(recovery.to_owned());
    }
    let actions = input["actions"].as_array().into_iter().flatten();
    err = err.actions(actions.map(|a| str_of(a).to_owned()));
    for pair in input["details"].as_array().into_iter().flatten() {
        err = err.detail(str_of(&pair[0]).to_owned(), str_of(&pair[1]).to_owned());
    }
    match &input["retry_after_seconds"] {
        Value::Null => {}
        n if n.is_i64() => err = err.retry_after(n.as_i64().unwrap_or_default()),
        n if n.is_u64() => err = err.retry_after(n.as_u64().unwrap_or_default()),
        n => err = err.retry_after(n.as_f64().expect("a number")),
    }
    mirrors.check(CallToolResult::from(&err));
    envelope(err.render(), err.is_error())
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|v| str_of(v).to_owned())
        .collect()
}

fn routing(input: &Value, mirrors: &mut Mirrors) -> Value {
    let actions = names(&input["actions"]);
    let mut router = ActionRouter::new(str_of(&input["tool"]), actions.clone())
        .discriminator(str_of(&input["discriminator"]));
    // Version 3: each action's argument schema, by its bare name (ERRORS.md §11.1).
    if let Some(schemas) = input["schemas"].as_object() {
        router = router.schemas(actions.iter().map(|a| &schemas[a.as_str()]));
    }
    match router.route(Some(&input["arguments"])) {
        Ok(i) => json!({"resolved": actions[i]}),
        Err(e) => {
            let err = router.error(&e);
            mirrors.check(CallToolResult::from(&err));
            envelope(err.render(), err.is_error())
        }
    }
}

fn validation(input: &Value, mirrors: &mut Mirrors) -> Value {
    let schema = match Schema::new(&input["schema"]) {
        Ok(schema) => schema,
        // Every schema of a vector compiles: a refusal is a failed case, not a stop.
        Err(e) => return json!({"schema_refused": e.to_string()}),
    };
    match schema.validate(str_of(&input["action"]), &input["arguments"]) {
        Ok(()) => json!({"valid": true}),
        Err(err) => {
            mirrors.check(CallToolResult::from(&err));
            envelope(err.render(), true)
        }
    }
}

fn contract_awareness(input: &Value) -> Value {
    let changes: Vec<ContractChange> = input["deltas"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            let severity = ChangeSeverity::parse(str_of(&d["severity"])).expect("a known severity");
            let mut change =
                ContractChange::new(severity, str_of(&d["field"]), str_of(&d["description"]));
            change.before = d["before"].as_str().map(str::to_owned);
            change.after = d["after"].as_str().map(str::to_owned);
            change.action = d["action"].as_str().map(str::to_owned);
            change
        })
        .collect();
    let envelope_text = str_of(&input["envelope"]);
    let max = input["max"].as_u64().map_or(5, |m| m as usize);
    let text = inject_contract_awareness(envelope_text, str_of(&input["action"]), &changes, max);
    // The envelope's own severity decides isError: only a warning tool_error is not an error.
    let is_error = parse_envelope(&text).severity.is_error();
    envelope(text, is_error)
}

fn parsed(input: &Value) -> Value {
    let p = parse_envelope(str_of(&input["text"]));
    json!({
        "code": p.code,
        "severity": p.severity.as_str(),
        "message": p.message,
        "recovery": p.recovery,
        "actions": p.actions,
        "details": p.details.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
        "retry_after": p.retry_after,
        "action": p.action,
        "fields": p.fields.iter().map(|f| json!([f.path, f.text])).collect::<Vec<_>>(),
    })
}

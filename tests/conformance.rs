//! Runs every case of a vectors file (ERRORS.md's golden input → output cases) byte for byte.
//!
//! The file is `$MCP_FUSION_VECTORS`, or `../shared/spec/vectors.json` beside this checkout.
//! Cases are driven through the public API only, as VECTORS.md describes.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use mcp_fusion::router::Router;
use mcp_fusion::validate::Schema;
use mcp_fusion::{
    ChangeSeverity, ContractChange, ErrorCode, Severity, error, inject_contract_awareness,
    parse_envelope,
};
use serde_json::{Value, json};

fn main() -> ExitCode {
    let path = std::env::var_os("MCP_FUSION_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/spec/vectors.json")
        });
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("conformance: cannot read {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    let file: Value = match serde_json::from_str(&text) {
        Ok(file) => file,
        Err(e) => {
            eprintln!("conformance: {} is not JSON: {e}", path.display());
            return ExitCode::FAILURE;
        }
    };
    // The wire-format version this implementation follows (ERRORS.md, version 2).
    if file["version"] != 2 {
        eprintln!(
            "conformance: {} is version {}; this implementation follows version 2",
            path.display(),
            file["version"]
        );
        return ExitCode::FAILURE;
    }
    let cases = file["cases"].as_array().cloned().unwrap_or_default();

    let mut per_kind: BTreeMap<String, usize> = BTreeMap::new();
    let mut failed = 0;
    for case in &cases {
        let id = case["id"].as_str().unwrap_or("?");
        let kind = case["kind"].as_str().unwrap_or("?");
        *per_kind.entry(kind.to_owned()).or_default() += 1;
        let got = match kind {
            "tool_error" => Ok(tool_error(&case["input"])),
            "routing" => Ok(routing(&case["input"])),
            "validation" => Ok(validation(&case["input"])),
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
    if ran == 0 || failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn envelope(text: String, is_error: bool) -> Value {
    json!({"text": text, "is_error": is_error})
}

fn str_of(v: &Value) -> &str {
    v.as_str().expect("a string in the vectors file")
}

fn tool_error(input: &Value) -> Value {
    let code =
        ErrorCode::custom(str_of(&input["code"]).to_owned()).expect("codes in vectors are valid");
    let mut err = error(code, str_of(&input["message"]).to_owned());
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
    envelope(err.render(), err.is_error())
}

fn names(list: &Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|v| str_of(v).to_owned())
        .collect()
}

fn routing(input: &Value) -> Value {
    let actions = names(&input["actions"]);
    let router = Router::new(str_of(&input["tool"]), actions.clone())
        .discriminator(str_of(&input["discriminator"]));
    match router.route(Some(&input["arguments"])) {
        Ok(i) => json!({"resolved": actions[i]}),
        Err(e) => {
            let err = router.error(&e);
            envelope(err.render(), err.is_error())
        }
    }
}

fn validation(input: &Value) -> Value {
    let schema = Schema::new(&input["schema"]).expect("schemas in vectors compile");
    match schema.validate(str_of(&input["action"]), &input["arguments"]) {
        Ok(()) => json!({"valid": true}),
        Err(err) => envelope(err.render(), true),
    }
}

fn contract_awareness(input: &Value) -> Value {
    let changes: Vec<ContractChange> = input["deltas"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| ContractChange {
            severity: ChangeSeverity::parse(str_of(&d["severity"])).expect("a known severity"),
            field: str_of(&d["field"]).to_owned(),
            description: str_of(&d["description"]).to_owned(),
            before: d["before"].as_str().map(str::to_owned),
            after: d["after"].as_str().map(str::to_owned),
            action: d["action"].as_str().map(str::to_owned),
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
        "fields": p.fields.iter().map(|(k, v)| json!([k, v])).collect::<Vec<_>>(),
    })
}

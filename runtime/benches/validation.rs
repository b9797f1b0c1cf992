//! Workload 3 of `shared/bench/WORKLOADS.md`: finding every problem and rendering
//! `<validation_error>`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_fusion::validate::Schema;
use serde_json::{Value, json};

fn schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email"},
            "age": {"type": "integer", "minimum": 18, "maximum": 120},
            "role": {"type": "string", "enum": ["admin", "editor", "viewer"]},
            "address": {
                "type": "object",
                "properties": {
                    "street": {"type": "string", "minLength": 1},
                    "city": {"type": "string", "minLength": 1},
                    "zip": {"type": "string", "pattern": "^[0-9]{5}$"}
                }
            },
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
            "name": {"type": "string", "minLength": 1, "maxLength": 100}
        },
        "required": ["email", "age", "role", "address", "tags", "name"],
        "additionalProperties": false
    })
}

fn arguments() -> Value {
    json!({"email":"not-an-email","age":12,"role":"superuser","address":{"street":"1 Main St","city":"Springfield","zip":"12345"},"tags":["alpha","beta","gamma"],"name":"Jane Doe","nickname":"JD"})
}

/// A schemars-style struct whose failures need `{desc}`: a missing enum behind a `$ref`, a
/// nullable enum (`anyOf` of a `$ref` and null) with a bad value, a mistyped array of objects.
fn desc_heavy_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "customer_id": {"type": "string", "pattern": "^cus_[a-z0-9]{4,}$"},
            "currency": {"$ref": "#/$defs/Currency"},
            "status": {"anyOf": [{"$ref": "#/$defs/Status"}, {"type": "null"}]},
            "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 1, "maximum": 100},
            "lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}, "minItems": 1, "maxItems": 50}
        },
        "required": ["customer_id", "currency", "lines"],
        "additionalProperties": false,
        "$defs": {
            "Currency": {"type": "string", "enum": ["EUR", "USD", "GBP"]},
            "Status": {"type": "string", "enum": ["draft", "open", "paid", "void"]},
            "Line": {
                "type": "object",
                "properties": {
                    "description": {"type": "string", "minLength": 1, "maxLength": 200},
                    "quantity": {"type": "integer", "minimum": 1, "maximum": 4294967295u64}
                },
                "required": ["description", "quantity"],
                "additionalProperties": false
            }
        }
    })
}

fn validation(c: &mut Criterion) {
    let schema = Schema::new(&schema()).expect("the workload's schema compiles");
    let args = arguments();
    let detected = schema
        .validate("users.create", &args)
        .expect_err("four problems");
    assert_eq!(detected.problems().len(), 4);

    let mut group = c.benchmark_group("validation");
    group.bench_function("format", |b| b.iter(|| black_box(&detected).render()));
    group.bench_function("parse+format", |b| {
        b.iter(|| {
            schema
                .validate("users.create", black_box(&args))
                .map_err(|e| e.render())
        })
    });
    // The pieces of parse+format, to see where the time goes.
    group.bench_function("detect_only", |b| {
        b.iter(|| schema.problems(black_box(&args)))
    });
    group.bench_function("is_valid_only", |b| {
        b.iter(|| schema.is_valid(black_box(&args)))
    });
    let heavy = Schema::new(&desc_heavy_schema()).expect("the desc-heavy schema compiles");
    let heavy_args = json!({"customer_id": "cus_8f2k", "status": "Paid", "limit": "10", "lines": {"description": "Widget"}});
    let found = heavy.problems(&heavy_args);
    assert_eq!(found.len(), 4, "{found:?}");
    group.bench_function("desc_heavy", |b| {
        b.iter(|| {
            heavy
                .validate("billing.create_invoice", black_box(&heavy_args))
                .map_err(|e| e.render())
        })
    });
    group.finish();
}

criterion_group!(benches, validation);
criterion_main!(benches);

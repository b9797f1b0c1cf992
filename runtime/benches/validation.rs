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
    group.finish();
}

criterion_group!(benches, validation);
criterion_main!(benches);

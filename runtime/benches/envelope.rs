//! Workloads 1 and 2 of `shared/bench/WORKLOADS.md`: rendering `<tool_error>` envelopes.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use mcp_fusion::{ErrorCode, ToolError};

fn full() -> ToolError {
    ToolError::new(
        ErrorCode::NOT_FOUND,
        "Project 'proj_8f3a2c' does not exist.",
    )
    .suggest("Call projects.list first to get valid IDs, then retry.")
    .actions(["projects.list"])
    .detail("project_id", "proj_8f3a2c")
    .retry_after(30)
}

fn envelope(c: &mut Criterion) {
    let mut group = c.benchmark_group("envelope");
    let full = full();
    group.bench_function("full", |b| b.iter(|| black_box(&full).render()));
    let minimal = ToolError::new(ErrorCode::NOT_FOUND, "Project not found.");
    group.bench_function("minimal", |b| b.iter(|| black_box(&minimal).render()));
    let escape_4k = ToolError::new(ErrorCode::NOT_FOUND, "a < b && c > d; ".repeat(256));
    group.bench_function("escape_4k", |b| b.iter(|| black_box(&escape_4k).render()));
    group.finish();
}

fn builder(c: &mut Criterion) {
    c.bench_function("builder/full", |b| b.iter(|| black_box(full()).render()));
}

criterion_group!(benches, envelope, builder);
criterion_main!(benches);

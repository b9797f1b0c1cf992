//! Compile-time diagnostics of `#[tool]` and `#[derive(ToolErrors)]`: one mistake per file under
//! `tests/ui/<macro>/`, each with the `.stderr` rustc prints for it, and programs under
//! `tests/ui-pass/` that compile under `deny(warnings, missing_docs, unused_qualifications)`.
//!
//! The `.stderr` files are generated: `TRYBUILD=overwrite cargo test --test ui`, then review the
//! diff. One case: `cargo test --test ui -- ui trybuild=missing-code.rs`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/**/*.rs");
    t.pass("tests/ui-pass/*.rs");
}

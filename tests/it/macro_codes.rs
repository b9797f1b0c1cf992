//! The macros know the canonical codes (to tell a misspelt one from a custom one) but cannot
//! depend on the runtime that defines them (`ErrorCode::CANONICAL`): their copy must list the
//! same codes in the same order.

use mcp_fusion::ErrorCode;

/// The string literals between `start` and the first `end` after it, in `file` of the workspace.
fn listed(file: &str, start: &str, end: &str) -> Vec<String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let body = &source[source
        .find(start)
        .unwrap_or_else(|| panic!("{start} in {file}"))..];
    let body = &body[..body.find(end).unwrap_or_else(|| panic!("{end} in {file}"))];
    body.lines()
        .filter_map(|line| line.trim().strip_prefix('"')?.split_once('"'))
        .map(|(code, _)| code.to_owned())
        .collect()
}

#[test]
fn the_macros_copy_of_the_canonical_codes_is_the_runtimes() {
    let runtime: Vec<&str> = ErrorCode::CANONICAL.iter().map(ErrorCode::as_str).collect();
    let macros = listed("macros/src/common/diag.rs", "CANONICAL_CODES", "];");
    assert_eq!(macros, runtime);
}

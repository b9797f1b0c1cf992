//! Any text through the client re-parse (ERRORS.md §6). It must never panic; what it reads
//! must be consistent with its kind; and a `<tool_error>` it reads, written again with the
//! builder, must read back as the same fields.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_fusion::{ErrorCode, Severity, ToolError};
use mcp_fusion::client::{ParsedError, ParsedKind, parse_envelope};
use mcp_fusion_fuzz::is_xml_char;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse_envelope(text);
    match parsed.kind {
        ParsedKind::NotAnEnvelope => {
            assert_eq!(parsed.code, "UNKNOWN");
            assert_eq!(parsed.message, text);
            assert!(parsed.recovery.is_none() && parsed.actions.is_empty());
        }
        ParsedKind::ValidationError => {
            assert_eq!(parsed.code, "VALIDATION_ERROR");
            assert_eq!(parsed.severity, Severity::Error);
            assert!(parsed.message.is_empty() && parsed.action.is_some());
            assert!(parsed.actions.is_empty() && parsed.details.is_empty());
            assert_only_xml_chars(&parsed);
        }
        ParsedKind::ToolError => {
            assert!(parsed.action.is_none() && parsed.fields.is_empty());
            assert_ne!(parsed.retry_after, Some(0));
            assert_only_xml_chars(&parsed);
            round_trip(&parsed);
        }
        other => panic!("a kind this target does not know: {other:?}"),
    }
});

/// A conforming parser delivers no character XML forbids, so neither may `parse` (§2, §6).
fn assert_only_xml_chars(parsed: &ParsedError) {
    let texts = [&parsed.code, &parsed.message]
        .into_iter()
        .chain(&parsed.recovery)
        .chain(&parsed.action)
        .chain(&parsed.actions)
        .chain(parsed.details.iter().flat_map(|(k, v)| [k, v]))
        .chain(parsed.fields.iter().flat_map(|f| [&f.path, &f.text]));
    for s in texts {
        assert!(s.chars().all(is_xml_char), "forbidden character in {s:?}");
    }
}

/// Renders what was parsed through the builder and parses it again (§6: parse_envelope(render(e)) ==
/// e). Codes the builder would reject are skipped.
fn round_trip(parsed: &ParsedError) {
    let Ok(code) = parsed.code.parse::<ErrorCode>() else {
        return;
    };
    let mut err = ToolError::new(code, parsed.message.clone())
        .severity(parsed.severity)
        .actions(parsed.actions.iter().cloned())
        .details(parsed.details.iter().cloned());
    if let Some(recovery) = &parsed.recovery {
        err = err.suggest(recovery.clone());
    }
    if let Some(secs) = parsed.retry_after {
        err = err.retry_after(secs);
    }
    let text = err.render();
    let again = parse_envelope(&text);
    assert_eq!(again, ParsedError::from(&err), "re-parse of\n{text}");
    assert_eq!(
        again,
        as_builder_keeps(parsed),
        "round trip through\n{text}"
    );
}

/// What the builder keeps of a parsed error (§3): no empty recovery, actions without empties
/// or repeats, one detail per key (first place, last value), at most u32::MAX seconds.
fn as_builder_keeps(parsed: &ParsedError) -> ParsedError {
    let mut actions: Vec<String> = Vec::new();
    for action in &parsed.actions {
        if !action.is_empty() && !actions.contains(action) {
            actions.push(action.clone());
        }
    }
    let mut details: Vec<(String, String)> = Vec::new();
    for (key, value) in &parsed.details {
        match details.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1.clone_from(value),
            None => details.push((key.clone(), value.clone())),
        }
    }
    let mut kept = parsed.clone();
    kept.recovery = parsed.recovery.clone().filter(|r| !r.is_empty());
    kept.actions = actions;
    kept.details = details;
    kept.retry_after = parsed.retry_after.map(|s| s.min(u64::from(u32::MAX)));
    kept
}
